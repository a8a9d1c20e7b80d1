//! libstdc++'s `std::sort`, `std::nth_element` and `std::partial_sort`,
//! step for step. PyTorch's CPU `topk` and `mode` order `(value, index)`
//! pairs with them and an unstable comparator on the value alone, so which of
//! several equal values it returns (and so where a gradient lands), and what
//! `mode` makes of NaNs (which compare false with everything, no strict weak
//! order), is the outcome of these exact algorithms. Ported from GCC's
//! `bits/stl_algo.h` and `bits/stl_heap.h` (introsort, threshold 16).

const THRESHOLD: usize = 16;

/// `floor(log2(n))` for `n > 0`.
fn lg(n: usize) -> usize {
    (usize::BITS - 1 - n.leading_zeros()) as usize
}

fn insertion_sort<T: Copy>(v: &mut [T], less: &impl Fn(&T, &T) -> bool) {
    for i in 1..v.len() {
        if less(&v[i], &v[0]) {
            let val = v[i];
            v.copy_within(0..i, 1);
            v[0] = val;
        } else {
            unguarded_linear_insert(v, i, less);
        }
    }
}

fn unguarded_linear_insert<T: Copy>(v: &mut [T], mut last: usize, less: &impl Fn(&T, &T) -> bool) {
    let val = v[last];
    let mut next = last - 1;
    while less(&val, &v[next]) {
        v[last] = v[next];
        last = next;
        next -= 1;
    }
    v[last] = val;
}

fn final_insertion_sort<T: Copy>(v: &mut [T], less: &impl Fn(&T, &T) -> bool) {
    if v.len() > THRESHOLD {
        insertion_sort(&mut v[..THRESHOLD], less);
        for i in THRESHOLD..v.len() {
            unguarded_linear_insert(v, i, less);
        }
    } else {
        insertion_sort(v, less);
    }
}

fn push_heap<T: Copy>(v: &mut [T], mut hole: usize, top: usize, val: T, less: &impl Fn(&T, &T) -> bool) {
    let mut parent = hole.wrapping_sub(1) / 2;
    while hole > top && less(&v[parent], &val) {
        v[hole] = v[parent];
        hole = parent;
        parent = hole.wrapping_sub(1) / 2;
    }
    v[hole] = val;
}

fn adjust_heap<T: Copy>(v: &mut [T], mut hole: usize, len: usize, val: T, less: &impl Fn(&T, &T) -> bool) {
    let top = hole;
    let mut child = hole;
    while len >= 1 && child < (len - 1) / 2 {
        child = 2 * (child + 1);
        if less(&v[child], &v[child - 1]) {
            child -= 1;
        }
        v[hole] = v[child];
        hole = child;
    }
    if len % 2 == 0 && len >= 2 && child == (len - 2) / 2 {
        child = 2 * (child + 1);
        v[hole] = v[child - 1];
        hole = child - 1;
    }
    push_heap(v, hole, top, val, less);
}

fn make_heap<T: Copy>(v: &mut [T], less: &impl Fn(&T, &T) -> bool) {
    let len = v.len();
    if len < 2 {
        return;
    }
    let mut parent = (len - 2) / 2;
    loop {
        let val = v[parent];
        adjust_heap(v, parent, len, val, less);
        if parent == 0 {
            return;
        }
        parent -= 1;
    }
}

/// `__pop_heap(first, last, result)`: the top goes to `result`, whose old
/// value sifts into the heap `v[..len]`.
fn pop_heap_into<T: Copy>(v: &mut [T], len: usize, result: usize, less: &impl Fn(&T, &T) -> bool) {
    let val = v[result];
    v[result] = v[0];
    adjust_heap(v, 0, len, val, less);
}

fn heap_select<T: Copy>(v: &mut [T], middle: usize, less: &impl Fn(&T, &T) -> bool) {
    make_heap(&mut v[..middle], less);
    for i in middle..v.len() {
        if less(&v[i], &v[0]) {
            pop_heap_into(v, middle, i, less);
        }
    }
}

fn sort_heap<T: Copy>(v: &mut [T], less: &impl Fn(&T, &T) -> bool) {
    let mut last = v.len();
    while last > 1 {
        last -= 1;
        pop_heap_into(v, last, last, less);
    }
}

/// `std::partial_sort(first, first + middle, last)`.
pub fn partial_sort<T: Copy>(v: &mut [T], middle: usize, less: &impl Fn(&T, &T) -> bool) {
    heap_select(v, middle, less);
    sort_heap(&mut v[..middle], less);
}

fn move_median_to_first<T: Copy>(v: &mut [T], result: usize, a: usize, b: usize, c: usize, less: &impl Fn(&T, &T) -> bool) {
    let pick = if less(&v[a], &v[b]) {
        if less(&v[b], &v[c]) {
            b
        } else if less(&v[a], &v[c]) {
            c
        } else {
            a
        }
    } else if less(&v[a], &v[c]) {
        a
    } else if less(&v[b], &v[c]) {
        c
    } else {
        b
    };
    v.swap(result, pick);
}

fn unguarded_partition<T: Copy>(v: &mut [T], mut first: usize, mut last: usize, pivot: usize, less: &impl Fn(&T, &T) -> bool) -> usize {
    loop {
        while less(&v[first], &v[pivot]) {
            first += 1;
        }
        last -= 1;
        while less(&v[pivot], &v[last]) {
            last -= 1;
        }
        if first >= last {
            return first;
        }
        v.swap(first, last);
        first += 1;
    }
}

/// Partitions `v[lo..hi]` around the median of three; returns the cut.
fn unguarded_partition_pivot<T: Copy>(v: &mut [T], lo: usize, hi: usize, less: &impl Fn(&T, &T) -> bool) -> usize {
    let mid = lo + (hi - lo) / 2;
    move_median_to_first(v, lo, lo + 1, mid, hi - 1, less);
    unguarded_partition(v, lo + 1, hi, lo, less)
}

fn introsort_loop<T: Copy>(v: &mut [T], lo: usize, mut hi: usize, mut depth: usize, less: &impl Fn(&T, &T) -> bool) {
    while hi - lo > THRESHOLD {
        if depth == 0 {
            partial_sort(&mut v[lo..hi], hi - lo, less);
            return;
        }
        depth -= 1;
        let cut = unguarded_partition_pivot(v, lo, hi, less);
        introsort_loop(v, cut, hi, depth, less);
        hi = cut;
    }
}

/// `std::sort`.
pub fn sort<T: Copy>(v: &mut [T], less: &impl Fn(&T, &T) -> bool) {
    if v.len() < 2 {
        return;
    }
    introsort_loop(v, 0, v.len(), lg(v.len()) * 2, less);
    final_insertion_sort(v, less);
}

/// `std::nth_element(first, first + nth, last)`.
pub fn nth_element<T: Copy>(v: &mut [T], nth: usize, less: &impl Fn(&T, &T) -> bool) {
    if v.is_empty() || nth >= v.len() {
        return;
    }
    let (mut lo, mut hi) = (0, v.len());
    let mut depth = lg(v.len()) * 2;
    while hi - lo > 3 {
        if depth == 0 {
            heap_select(&mut v[lo..hi], nth - lo + 1, less);
            v.swap(lo, nth);
            return;
        }
        depth -= 1;
        let cut = unguarded_partition_pivot(v, lo, hi, less);
        if cut <= nth {
            lo = cut;
        } else {
            hi = cut;
        }
    }
    insertion_sort(&mut v[lo..hi], less);
}

#[cfg(test)]
mod tests {
    #[test]
    fn sorts_and_selects() {
        let mut v: Vec<i32> = (0..100).map(|i| (i * 37) % 101).collect();
        let lt = |a: &i32, b: &i32| a < b;
        let mut s = v.clone();
        super::sort(&mut s, &lt);
        assert!(s.windows(2).all(|w| w[0] <= w[1]));
        super::nth_element(&mut v, 10, &lt);
        assert_eq!(v[10], s[10]);
        let mut p: Vec<i32> = (0..50).rev().collect();
        super::partial_sort(&mut p, 5, &lt);
        assert_eq!(&p[..5], &[0, 1, 2, 3, 4]);
    }
}

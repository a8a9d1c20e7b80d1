//! Order statistics on `sort.cu`: every row along `dim` is bitonic-sorted
//! as (key, index) pairs in a device workspace, then the selected positions
//! are picked (sort, topk, kthvalue, median) or the longest run is found
//! (mode). `unique` has no CUDA kernel yet.

use super::blas::device_of_ptr;
use super::{device_at, drv, function, grid, no_kernel, ptr, Cuda};
use crate::kernels::Family;
use cudarc::driver::PushKernelArg;
use ferrotorch_core::backend::SortKernels;
use ferrotorch_core::op::sort::RowSelect;
use ferrotorch_core::{Backend, DType, Dst, Error, Layout, Result, Src};

/// The device address of a contiguous operand's first element.
fn addr(base: *const u8, layout: &Layout, itemsize: usize) -> u64 {
    ptr(base) + (layout.offset * itemsize) as u64
}

/// The compute type's size: keys are kept in it (float for the 16-bit floats).
fn key_size(dtype: DType) -> usize {
    match dtype {
        DType::Float16 | DType::BFloat16 => 4,
        d => d.itemsize(),
    }
}

/// The bitonic network's steps `(k, j)` for rows padded to `npow2`.
fn network(npow2: usize) -> Vec<(i64, i64)> {
    let mut steps = Vec::new();
    let mut k = 2;
    while k <= npow2 {
        let mut j = k / 2;
        while j > 0 {
            steps.push((k as i64, j as i64));
            j /= 2;
        }
        k *= 2;
    }
    steps
}

impl SortKernels for Cuda {
    fn select_rows(&self, sel: RowSelect, x: Src, dtype: DType, dim: usize, values: Dst, indices: Dst) -> Result<()> {
        if dtype.is_complex() {
            return Err(no_kernel(&format!("sort ({dtype})")));
        }
        let shape = &x.layout.shape;
        if dim >= shape.len().max(1) && !shape.is_empty() {
            return Err(Error::runtime(format!("sort: dim {dim} out of range for shape {shape:?}")));
        }
        let n = shape.get(dim).copied().unwrap_or(1);
        let inner: usize = shape.iter().skip(dim + 1).product();
        let rows = x.layout.numel() / n.max(1);
        let count = sel.count(n);
        if rows == 0 || n == 0 || count == 0 {
            return Ok(());
        }
        let npow2 = n.next_power_of_two();
        let dev = device_at(values.base)?;
        let device = device_of_ptr(values.base)?;
        let keys = self.allocate(rows * npow2 * key_size(dtype), device)?;
        let idx = self.allocate(rows * npow2 * 8, device)?;
        let (kp, ip) = (ptr(keys.as_ptr()), ptr(idx.as_ptr()));
        let (r64, n64, in64, np64) = (rows as i64, n as i64, inner.max(1) as i64, npow2 as i64);
        let descending = match sel {
            RowSelect::Sort { descending } => descending,
            RowSelect::Topk { largest, .. } => largest,
            _ => false,
        } as i32;

        let xp = addr(x.base, x.layout, dtype.itemsize());
        let f = function(dev, Family::Sort, dtype, "sort_load")?;
        let mut b = dev.stream.launch_builder(&f);
        b.arg(&xp).arg(&kp).arg(&ip).arg(&r64).arg(&n64).arg(&in64).arg(&np64);
        // SAFETY: `sort_load(const T*, A*, i64*, i64, i64, i64, i64)`, as
        // pushed; x holds rows·n contiguous elements, the workspaces rows ×
        // npow2 keys and indices.
        unsafe { b.launch(grid(rows * npow2)) }.map_err(drv)?;

        if npow2 > 1 {
            let f = function(dev, Family::Sort, dtype, "sort_step")?;
            for (k, j) in network(npow2) {
                let mut b = dev.stream.launch_builder(&f);
                b.arg(&kp).arg(&ip).arg(&r64).arg(&n64).arg(&np64).arg(&k).arg(&j).arg(&descending);
                // SAFETY: `sort_step(A*, i64*, i64, i64, i64, i64, i64,
                // int)`, as pushed; every pair touched lies inside its row
                // of the workspace (j < k <= npow2).
                unsafe { b.launch(grid(rows * npow2 / 2)) }.map_err(drv)?;
            }
        }

        let (vp, op) = (addr(values.base, values.layout, dtype.itemsize()), addr(indices.base, indices.layout, 8));
        if sel == RowSelect::Mode {
            let f = function(dev, Family::Sort, dtype, "sort_mode")?;
            let mut b = dev.stream.launch_builder(&f);
            b.arg(&kp).arg(&ip).arg(&vp).arg(&op).arg(&r64).arg(&n64).arg(&in64).arg(&np64);
            // SAFETY: `sort_mode(const A*, const i64*, T*, i64*, i64, i64,
            // i64, i64)`, as pushed; the outputs hold one element per row.
            unsafe { b.launch(grid(rows)) }.map_err(drv)?;
            return Ok(());
        }
        let (first, mode) = match sel {
            RowSelect::Kth { k } => (k, 0),
            RowSelect::Median => ((n - 1) / 2, 1),
            _ => (0, 0),
        };
        if first + count > n {
            return Err(Error::index(format!("selection out of range: position {first} of a row of {n}")));
        }
        let (first, c64, mode) = (first as i64, count as i64, mode as i32);
        let f = function(dev, Family::Sort, dtype, "sort_pick")?;
        let mut b = dev.stream.launch_builder(&f);
        b.arg(&kp).arg(&ip).arg(&vp).arg(&op).arg(&r64).arg(&n64).arg(&in64).arg(&np64).arg(&first).arg(&c64).arg(&mode);
        // SAFETY: `sort_pick(const A*, const i64*, T*, i64*, i64, i64, i64,
        // i64, i64, i64, int)`, as pushed; positions first..first+count are
        // inside every row (checked above) and the outputs hold rows × count.
        unsafe { b.launch(grid(rows * count)) }.map_err(drv)?;
        // The workspaces go back to the caching allocator on drop; the
        // stream orders their reuse after these kernels.
        drop((keys, idx));
        Ok(())
    }

    fn unique_count(&self, _x: Src, _dtype: DType) -> Result<usize> {
        Err(no_kernel("unique_count"))
    }

    fn unique(&self, _x: Src, _dtype: DType, _values: Dst, _inverse: Dst, _counts: Dst) -> Result<()> {
        Err(no_kernel("unique"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The network sorts every input of its size (checked on a host
    /// emulation of the kernel's compare-exchange, with ties broken by
    /// index as the kernel does).
    #[test]
    fn the_bitonic_network_sorts_and_is_stable() {
        for n in [1usize, 2, 3, 5, 8, 13, 16, 33] {
            let npow2 = n.next_power_of_two();
            for seed in 0..20u64 {
                let keys: Vec<i64> = (0..n).map(|i| ((i as u64 * 2654435761 + seed * 97) % 5) as i64).collect();
                let mut pairs: Vec<(i64, usize)> = (0..npow2).map(|j| (if j < n { keys[j] } else { 0 }, j)).collect();
                // Padding (index >= n) last, then keys, then indices.
                let before = |a: (i64, usize), b: (i64, usize)| {
                    let (pa, pb) = (a.1 >= n, b.1 >= n);
                    if pa != pb {
                        return pb;
                    }
                    if !pa && a.0 != b.0 {
                        return a.0 < b.0;
                    }
                    a.1 < b.1
                };
                for (k, j) in network(npow2) {
                    let (k, j) = (k as usize, j as usize);
                    for p in 0..npow2 / 2 {
                        let i = (p / j) * 2 * j + p % j;
                        let l = i + j;
                        let up = i & k == 0;
                        let swap = if up { before(pairs[l], pairs[i]) } else { before(pairs[i], pairs[l]) };
                        if swap {
                            pairs.swap(i, l);
                        }
                    }
                }
                let mut want: Vec<(i64, usize)> = keys.iter().copied().zip(0..n).collect();
                want.sort_by_key(|&(k, _)| k);
                assert_eq!(&pairs[..n], &want[..], "n={n} seed={seed}");
            }
        }
    }
}

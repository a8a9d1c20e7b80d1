//! Per-thread scratch memory reused across blocks and calls.
//!
//! A pass needs a block's lanes in contiguous memory, and the FFT libraries
//! want working space besides. Allocating those per block (hundreds of KiB,
//! zero-filled) made every block fault fresh pages in and write them twice;
//! instead each thread keeps two growing buffers of cache lines and lends
//! them out. They are never re-initialised: every type they are lent as
//! ([`Plain`]) is valid for any bit pattern, and each user writes what it
//! reads.

use rustfft::num_complex::Complex;
use std::cell::RefCell;

/// Element types the scratch may be lent as.
///
/// # Safety
/// Implementors are floats or pairs of floats: any initialised bytes are a
/// valid value, they have no drop glue, and their size divides 64 and their
/// alignment is at most 64 (a [`Line`]'s).
pub(crate) unsafe trait Plain: Copy + Default + Send + Sync + 'static {}

// SAFETY: IEEE floats and `repr(C)` pairs of them: every bit pattern is a value.
unsafe impl Plain for f32 {}
// SAFETY: as above.
unsafe impl Plain for f64 {}
// SAFETY: `Complex` is `repr(C)`, two `T`s: valid for any bytes if `T` is.
unsafe impl<T: Plain> Plain for Complex<T> {}

/// One cache line: the scratch's unit, so that every loan starts on a line.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; 64]);

/// Loans larger than this are allocated for the call and freed after, so
/// that one huge transform does not pin its scratch for the thread's life
/// (a block takes at most `lanes::BLOCK_BYTES` unless one lane is longer,
/// and one lane that long costs more to transform than to allocate).
const KEEP_BYTES: usize = 1 << 20;

thread_local! {
    /// The blocks' lanes (see [`lanes`]).
    static LANES: RefCell<Vec<Line>> = const { RefCell::new(Vec::new()) };
    /// The FFT libraries' working space (see [`work`]).
    static WORK: RefCell<Vec<Line>> = const { RefCell::new(Vec::new()) };
}

fn lines<E>(elems: usize) -> usize {
    (elems * std::mem::size_of::<E>()).div_ceil(64)
}

/// Runs `f` on `buf`'s first lines as `a` elements of `A` followed (from the
/// next line) by `b` of `B`, growing `buf` with zeros as needed.
fn lend<A: Plain, B: Plain, R>(buf: &mut Vec<Line>, a: usize, b: usize, f: impl FnOnce(&mut [A], &mut [B]) -> R) -> R {
    let (la, lb) = (lines::<A>(a), lines::<B>(b));
    if buf.len() < la + lb {
        buf.resize(la + lb, Line([0; 64]));
    }
    let (pa, pb) = buf.split_at_mut(la);
    // SAFETY: `pa` holds `la` initialised lines, at least `a` elements of
    // `A`, whose alignment a line satisfies and whose values any bytes are
    // (`Plain`); likewise `pb` for `B`. The two are disjoint and borrowed
    // mutably from `buf` for the duration of `f`.
    let (sa, sb) = unsafe {
        (std::slice::from_raw_parts_mut(pa.as_mut_ptr().cast::<A>(), a), std::slice::from_raw_parts_mut(pb.as_mut_ptr().cast::<B>(), b))
    };
    f(sa, sb)
}

fn with<A: Plain, B: Plain, R>(key: &'static std::thread::LocalKey<RefCell<Vec<Line>>>, a: usize, b: usize, f: impl FnOnce(&mut [A], &mut [B]) -> R) -> R {
    let bytes = a * std::mem::size_of::<A>() + b * std::mem::size_of::<B>();
    let f = if bytes <= KEEP_BYTES {
        // Already lent on this thread (a task run while waiting inside
        // another): that caller keeps it, and this one allocates.
        match key.with(|cell| match cell.try_borrow_mut() {
            Ok(mut buf) => Ok(lend(&mut buf, a, b, f)),
            Err(_) => Err(f),
        }) {
            Ok(r) => return r,
            Err(f) => f,
        }
    } else {
        f
    };
    lend(&mut Vec::new(), a, b, f)
}

/// Runs `f` with room for `a` lanes' elements of `A` and `b` of `B`.
pub(crate) fn lanes<A: Plain, B: Plain, R>(a: usize, b: usize, f: impl FnOnce(&mut [A], &mut [B]) -> R) -> R {
    with(&LANES, a, b, f)
}

/// Runs `f` with `n` elements of working space for an FFT library.
pub(crate) fn work<E: Plain, R>(n: usize, f: impl FnOnce(&mut [E]) -> R) -> R {
    with::<E, E, R>(&WORK, n, 0, |w, _| f(w))
}

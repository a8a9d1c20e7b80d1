//! One pass of a batched transform along one dim: every *lane* (the 1-D
//! line of elements along `dim` through one index of the other dims) is
//! gathered from a strided source into contiguous scratch, transformed
//! there, and scattered into a strided destination.
//!
//! Lanes go in blocks, a block per task of [`parallel_for`]: the FFT
//! libraries batch the lanes of a block in one call, and gathering a block
//! of neighbouring lanes element by element reads whole cache lines when
//! the lanes are strided (a column pass of a row-major matrix reads its
//! rows' prefixes, not one element per line).
//!
//! A strided gather is a transpose into the scratch, and so is a strided
//! scatter out of it. Long lanes are placed an odd number of cache lines
//! apart in the scratch ([`lane_stride`]): lanes a power of two of bytes
//! long (a column of 1024 complex floats is 8 KiB) would otherwise map
//! element `k` of every lane to one cache set, and a block of more lanes
//! than the cache has ways evicts its own lines on every row (this made
//! the column pass of a 1024² `fft2` three times slower than its row
//! pass).

use crate::parallel::{parallel_for, threads, SendPtr};
use ferrotorch_core::{Error, Layout};
use std::sync::Mutex;

/// An operand in units of its element type `E`: the address of its
/// element `[0, 0, ..]` and its sizes and strides.
pub(crate) struct Strided<E> {
    /// Address of the first element (the layout's offset applied).
    pub ptr: SendPtr<E>,
    /// Size of each dim.
    pub shape: Vec<usize>,
    /// Stride of each dim, in elements of `E`.
    pub strides: Vec<isize>,
}

impl<E> Strided<E> {
    /// The operand at `base` laid out as `layout` (offset and strides in
    /// elements of `E`).
    ///
    /// # Safety
    /// `base` must be the start of a live storage holding every element the
    /// layout addresses.
    pub unsafe fn new(base: *const u8, layout: &Layout) -> Strided<E> {
        // SAFETY: the offset stays inside the storage (caller's contract).
        let ptr = unsafe { (base as *mut E).add(layout.offset) };
        Strided { ptr: SendPtr(ptr), shape: layout.shape.to_vec(), strides: layout.strides.to_vec() }
    }

    /// A contiguous row-major operand of `shape` over `buf`.
    pub fn dense(buf: &mut [E], shape: &[usize]) -> Strided<E> {
        let strides = ferrotorch_core::layout::contiguous_strides(shape).to_vec();
        Strided { ptr: SendPtr(buf.as_mut_ptr()), shape: shape.to_vec(), strides }
    }
}

/// Complex elements held by one block's scratch: enough lanes to batch
/// short transforms, while the block stays in the L2 cache.
const BLOCK_ELEMS: usize = 1 << 13;

/// Lanes of at least this many bytes are spread out in the scratch
/// ([`lane_stride`]); shorter ones stay back to back, so that the FFT
/// libraries can batch them in one call.
const SPREAD_BYTES: usize = 1024;

/// The distance, in elements of `E`, between lanes of `n` elements in a
/// block's scratch: `n` itself for short lanes, else `n` rounded up to an
/// odd number of 64-byte lines, so that up to 64 lanes map element `k` to
/// 64 different cache sets.
pub(crate) fn lane_stride<E>(n: usize) -> usize {
    let size = std::mem::size_of::<E>();
    if size == 0 || 64 % size != 0 || n * size < SPREAD_BYTES {
        return n;
    }
    let lines = (n * size).div_ceil(64);
    (lines | 1) * 64 / size
}

/// The lanes of one block in its scratch: `count` lanes, lane `b` at
/// elements `b * stride .. b * stride + len`. `stride == len` when they are
/// back to back (see [`lane_stride`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Block {
    /// Lanes in the block.
    pub count: usize,
    /// Elements of one lane.
    pub len: usize,
    /// Elements from one lane's start to the next.
    pub stride: usize,
}

impl Block {
    /// Lane `b` of `buf`.
    #[inline]
    pub fn lane<'b, E>(&self, buf: &'b mut [E], b: usize) -> &'b mut [E] {
        &mut buf[b * self.stride..b * self.stride + self.len]
    }
}

/// What a pass does to one block: read the lanes of `input` (laid out as
/// the first `Block`) and fill those of `output` (the second). An error is
/// a message.
pub(crate) type LaneFn<'f, A, B> = dyn Fn(&mut [A], &mut [B], Block, Block) -> Result<(), String> + Sync + 'f;

/// Runs `lane` over every lane along `dim` of `src` into the same lane of
/// `dst` (the other dims of both have equal sizes).
///
/// # Safety
/// `src` and `dst` address live storages holding every element their
/// layouts reach; `dst` is written only here, and its lanes do not overlap
/// one another (each lane is read from `src` before it is written to
/// `dst`, so `src` may be `dst` itself).
pub(crate) unsafe fn pass<A, B>(src: &Strided<A>, dst: &Strided<B>, dim: usize, lane: &LaneFn<'_, A, B>) -> ferrotorch_core::Result<()>
where
    A: Copy + Default + Send,
    B: Copy + Default + Send,
{
    let (n_in, n_out) = (src.shape[dim], dst.shape[dim]);
    let other: Vec<usize> = (0..src.shape.len()).filter(|&d| d != dim).collect();
    let lanes: usize = other.iter().map(|&d| src.shape[d]).product();
    if lanes == 0 || n_in == 0 || n_out == 0 {
        return Ok(());
    }
    let mut block = (BLOCK_ELEMS / n_in.max(n_out)).clamp(1, 64);
    // Enough blocks to keep every thread busy.
    block = block.min(lanes.div_ceil(threads()).max(1));
    let tasks = lanes.div_ceil(block);
    let (si, so) = (src.strides[dim], dst.strides[dim]);
    let failure: Mutex<Option<String>> = Mutex::new(None);
    parallel_for(tasks, |t| {
        let first = t * block;
        let count = block.min(lanes - first);
        // The lanes' start offsets, from the row-major lane index over the other dims.
        let mut offs = Vec::with_capacity(count);
        for l in first..first + count {
            let (mut rest, mut os, mut od) = (l, 0isize, 0isize);
            for &d in other.iter().rev() {
                let i = rest % src.shape[d];
                rest /= src.shape[d];
                os += i as isize * src.strides[d];
                od += i as isize * dst.strides[d];
            }
            offs.push((os, od));
        }
        let bin = Block { count, len: n_in, stride: lane_stride::<A>(n_in) };
        let bout = Block { count, len: n_out, stride: lane_stride::<B>(n_out) };
        let mut input = vec![A::default(); count * bin.stride];
        let mut output = vec![B::default(); count * bout.stride];
        let (sp, dp) = (src.ptr.get(), dst.ptr.get());
        // SAFETY: every offset is an element of `src` reached by its layout
        // (caller's contract); lane `b` of `input` is the `n_in` elements
        // from `b * bin.stride`, inside its `count * bin.stride`.
        unsafe {
            let ip = input.as_mut_ptr();
            if si == 1 {
                for (b, &(os, _)) in offs.iter().enumerate() {
                    std::ptr::copy_nonoverlapping(sp.offset(os), ip.add(b * bin.stride), n_in);
                }
            } else {
                for k in 0..n_in {
                    let step = k as isize * si;
                    for (b, &(os, _)) in offs.iter().enumerate() {
                        *ip.add(b * bin.stride + k) = *sp.offset(os + step);
                    }
                }
            }
        }
        if let Err(msg) = lane(&mut input, &mut output, bin, bout) {
            let mut f = failure.lock().unwrap_or_else(|e| e.into_inner());
            f.get_or_insert(msg);
            return;
        }
        // SAFETY: as for the gather, over `dst` and `output`; this task's lanes are its own.
        unsafe {
            let op = output.as_ptr();
            if so == 1 {
                for (b, &(_, od)) in offs.iter().enumerate() {
                    std::ptr::copy_nonoverlapping(op.add(b * bout.stride), dp.offset(od), n_out);
                }
            } else {
                for k in 0..n_out {
                    let step = k as isize * so;
                    for (b, &(_, od)) in offs.iter().enumerate() {
                        *dp.offset(od + step) = *op.add(b * bout.stride + k);
                    }
                }
            }
        }
    });
    match failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some(msg) => Err(Error::runtime(format!("fft: {msg}"))),
        None => Ok(()),
    }
}

//! One pass of a batched transform along one dim: every *lane* (the 1-D
//! line of elements along `dim` through one index of the other dims) is
//! transformed, from a strided source into the same lane of a strided
//! destination.
//!
//! Lanes go in blocks, a block per task of [`parallel_for`]: the FFT
//! libraries batch the lanes of a block in one call. When the source and
//! destination lanes of a complex pass are contiguous and the block's
//! destination lanes lie back to back, the block is copied into the
//! destination and transformed there ([`pass_in_place`]); otherwise it is
//! gathered into per-thread scratch ([`scratch`]), transformed there, and
//! scattered out.
//!
//! A strided gather is a transpose into the scratch, and so is a strided
//! scatter out of it: the block's lanes are neighbours (a column pass of a
//! row-major matrix takes adjacent columns), so each source row is visited
//! once per block for several cache lines, not once per line. A block holds
//! up to [`BLOCK_BYTES`]; a wider block visits every row (a page of its
//! own, for rows of 4 KiB or more) fewer times, which is what the column
//! passes of a large matrix are bound by. Long lanes are placed an odd
//! number of cache lines apart in the scratch ([`lane_stride`]): lanes a
//! power of two of bytes long (a column of 1024 complex floats is 8 KiB)
//! would otherwise map element `k` of every lane to one cache set.

use super::scratch::{self, Plain};
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

    /// The first `len` indices of `dim` (`len` at most its size).
    pub fn narrow(&self, dim: usize, len: usize) -> Strided<E> {
        let mut shape = self.shape.clone();
        shape[dim] = len.min(shape[dim]);
        Strided { ptr: self.ptr, shape, strides: self.strides.clone() }
    }
}

/// The most bytes one block's lanes take in scratch: the lanes of a block
/// and the rows they are gathered from stay in a 1 MiB L2 cache.
const BLOCK_BYTES: usize = 1 << 18;

/// The most lanes in one block: past this, wider blocks gain nothing.
const MAX_LANES: usize = 64;

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

/// What an in-place pass does to one block: transform its lanes in `buf`
/// (laid out as the `Block`) where they are.
pub(crate) type InPlaceFn<'f, E> = dyn Fn(&mut [E], Block) -> Result<(), String> + Sync + 'f;

/// The lanes along `dim` of operands of `shape`: the other dims (outermost
/// first), how many lanes there are, and how many go in one block.
struct Geometry {
    other: Vec<usize>,
    lanes: usize,
    block: usize,
}

impl Geometry {
    fn new(shape: &[usize], dim: usize, lane_bytes: usize) -> Geometry {
        let other: Vec<usize> = (0..shape.len()).filter(|&d| d != dim).collect();
        let lanes = other.iter().map(|&d| shape[d]).product();
        let block = (BLOCK_BYTES / lane_bytes.max(1)).clamp(1, MAX_LANES);
        // Enough blocks to keep every thread busy.
        let block = block.min(usize::div_ceil(lanes, threads()).max(1));
        Geometry { other, lanes, block }
    }

    /// The start offsets in `src` and `dst` of lanes `first..first + count`,
    /// from the row-major lane index over the other dims.
    fn offsets<A, B>(&self, src: &Strided<A>, dst: &Strided<B>, first: usize, count: usize) -> Vec<(isize, isize)> {
        (first..first + count)
            .map(|l| {
                let (mut rest, mut os, mut od) = (l, 0isize, 0isize);
                for &d in self.other.iter().rev() {
                    let i = rest % src.shape[d];
                    rest /= src.shape[d];
                    os += i as isize * src.strides[d];
                    od += i as isize * dst.strides[d];
                }
                (os, od)
            })
            .collect()
    }

    /// Runs `block(first, count)` over every block, in parallel; the first
    /// error wins.
    fn run(&self, block: impl Fn(usize, usize) -> Result<(), String> + Sync) -> ferrotorch_core::Result<()> {
        let failure: Mutex<Option<String>> = Mutex::new(None);
        parallel_for(self.lanes.div_ceil(self.block), |t| {
            let first = t * self.block;
            if let Err(msg) = block(first, self.block.min(self.lanes - first)) {
                let mut f = failure.lock().unwrap_or_else(|e| e.into_inner());
                f.get_or_insert(msg);
            }
        });
        match failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(msg) => Err(Error::runtime(format!("fft: {msg}"))),
            None => Ok(()),
        }
    }
}

/// Copies the lanes starting at `offs` (the first of each pair), `n`
/// elements `step` apart from `sp`, into `buf` laid out as `blk`.
///
/// # Safety
/// Every element addressed is live and readable; `buf` holds `blk`.
unsafe fn gather<E: Copy>(sp: *const E, step: isize, offs: &[(isize, isize)], buf: &mut [E], blk: Block) {
    debug_assert!(buf.len() >= (blk.count - 1) * blk.stride + blk.len);
    let ip = buf.as_mut_ptr();
    // SAFETY: the caller's contract; lane `b` of `buf` is `blk.len` elements from `b * blk.stride`.
    unsafe {
        if step == 1 {
            for (b, &(os, _)) in offs.iter().enumerate() {
                std::ptr::copy_nonoverlapping(sp.offset(os), ip.add(b * blk.stride), blk.len);
            }
        } else {
            // Element k of every lane in turn: neighbouring lanes' elements
            // share cache lines in the source.
            for k in 0..blk.len {
                let at = k as isize * step;
                for (b, &(os, _)) in offs.iter().enumerate() {
                    *ip.add(b * blk.stride + k) = *sp.offset(os + at);
                }
            }
        }
    }
}

/// Copies `buf`'s lanes (laid out as `blk`) to those starting at `offs`
/// (the second of each pair), `step` apart from `dp`.
///
/// # Safety
/// Every element addressed is live, writable and this caller's alone;
/// `buf` holds `blk`.
unsafe fn scatter<E: Copy>(buf: &[E], blk: Block, dp: *mut E, step: isize, offs: &[(isize, isize)]) {
    debug_assert!(buf.len() >= (blk.count - 1) * blk.stride + blk.len);
    let op = buf.as_ptr();
    // SAFETY: as for `gather`, the other way.
    unsafe {
        if step == 1 {
            for (b, &(_, od)) in offs.iter().enumerate() {
                std::ptr::copy_nonoverlapping(op.add(b * blk.stride), dp.offset(od), blk.len);
            }
        } else {
            for k in 0..blk.len {
                let at = k as isize * step;
                for (b, &(_, od)) in offs.iter().enumerate() {
                    *dp.offset(od + at) = *op.add(b * blk.stride + k);
                }
            }
        }
    }
}

/// Runs `lane` over every lane along `dim` of `src` into the same lane of
/// `dst` (the other dims of both have equal sizes).
///
/// # Safety
/// `src` and `dst` address live storages holding every element their
/// layouts reach; `dst` is written only here, and its lanes do not overlap
/// one another (each lane is read from `src` before it is written to
/// `dst`, so `src` may be `dst` itself).
pub(crate) unsafe fn pass<A: Plain, B: Plain>(src: &Strided<A>, dst: &Strided<B>, dim: usize, lane: &LaneFn<'_, A, B>) -> ferrotorch_core::Result<()> {
    let (n_in, n_out) = (src.shape[dim], dst.shape[dim]);
    if n_in == 0 || n_out == 0 {
        return Ok(());
    }
    let (wi, wo) = (lane_stride::<A>(n_in), lane_stride::<B>(n_out));
    let geo = Geometry::new(&src.shape, dim, wi * std::mem::size_of::<A>() + wo * std::mem::size_of::<B>());
    let (si, so) = (src.strides[dim], dst.strides[dim]);
    let (sp, dp) = (src.ptr, dst.ptr);
    geo.run(|first, count| {
        let offs = geo.offsets(src, dst, first, count);
        let bin = Block { count, len: n_in, stride: wi };
        let bout = Block { count, len: n_out, stride: wo };
        scratch::lanes::<A, B, _>(count * wi, count * wo, |input, output| {
            // SAFETY: every offset is an element of `src` reached by its
            // layout, and of `dst` (the caller's contract); this block's
            // lanes of `dst` are its own.
            unsafe { gather(sp.get(), si, &offs, input, bin) };
            lane(input, output, bin, bout)?;
            unsafe { scatter(output, bout, dp.get(), so, &offs) };
            Ok(())
        })
    })
}

/// Runs `lane` over every lane along `dim` of `src` into the same lane of
/// `dst`, both of one element type and lane length: where the lanes are
/// contiguous and a block's lanes of `dst` back to back, in `dst` itself
/// (after copying the source lanes there, unless they are there already).
///
/// # Safety
/// As for [`pass`].
pub(crate) unsafe fn pass_in_place<E: Plain>(src: &Strided<E>, dst: &Strided<E>, dim: usize, lane: &InPlaceFn<'_, E>) -> ferrotorch_core::Result<()> {
    let n = src.shape[dim];
    if n == 0 {
        return Ok(());
    }
    let w = lane_stride::<E>(n);
    let geo = Geometry::new(&src.shape, dim, w * std::mem::size_of::<E>());
    let (si, so) = (src.strides[dim], dst.strides[dim]);
    let (sp, dp) = (src.ptr, dst.ptr);
    geo.run(|first, count| {
        let offs = geo.offsets(src, dst, first, count);
        let od0 = offs[0].1;
        let back_to_back = offs.iter().enumerate().all(|(b, &(_, od))| od == od0 + (b * n) as isize);
        if si == 1 && so == 1 && back_to_back {
            let blk = Block { count, len: n, stride: n };
            // SAFETY: this block's lanes of `dst` are the `count * n`
            // elements from `od0` (back to back), live and its own (the
            // caller's contract). Each source lane is read before its own
            // destination lane is written and after earlier ones are: a lane
            // of `src` may be the same lane of `dst` (copied onto itself,
            // which `copy` allows), never another lane of this block.
            unsafe {
                let d = dp.get().offset(od0);
                for (b, &(os, _)) in offs.iter().enumerate() {
                    let s = sp.get().offset(os) as *const E;
                    let t = d.add(b * n);
                    if s != t as *const E {
                        std::ptr::copy(s, t, n);
                    }
                }
                lane(std::slice::from_raw_parts_mut(d, count * n), blk)
            }
        } else {
            let blk = Block { count, len: n, stride: w };
            scratch::lanes::<E, E, _>(count * w, 0, |buf, _| {
                // SAFETY: as in `pass`.
                unsafe { gather(sp.get(), si, &offs, buf, blk) };
                lane(buf, blk)?;
                unsafe { scatter(buf, blk, dp.get(), so, &offs) };
                Ok(())
            })
        }
    })
}

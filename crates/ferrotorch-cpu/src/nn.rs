//! Convolution kernels on contiguous channel-first data, for 1, 2 and 3
//! spatial dimensions through one code path: every problem is viewed as a 3-d
//! one (a 1-d signal is a `1 × 1 × L` volume, an image a `1 × H × W` one), so
//! one vol2col/col2vol pair and the GEMM adapter serve all of them.
//!
//! Three kernels cover the forward and transposed convolutions and all their
//! gradients: [`conv_forward`] (vol2col + GEMM), [`conv_input_grad`] (GEMM +
//! col2vol: the transposed convolution) and [`conv_weight_grad`] (vol2col +
//! GEMM against the output gradient). Pooling lives in [`crate::pool`].
//!
//! The op layer passes contiguous operands as slices with a [`ConvSpec`]; the
//! kernels check sizes and return PyTorch's messages for bad shapes.

use crate::matmul::{gemm_into, GemmFloat, Mat};
pub use ferrotorch_core::op::conv::{conv_output_size, ConvSpec, MAX_SPATIAL};
use ferrotorch_core::op::conv::Conv3d;
use ferrotorch_core::{Element, Error, Result};
use std::ops::AddAssign;

/// A [`ConvSpec`]'s window seen in three dimensions ([`ConvSpec::as_3d`]).
type Vol = Conv3d;

/// The row arithmetic of the unfold.
trait Rows {
    /// Input row (depth, height) read by output row `r` (a flat (depth,
    /// height) index) at taps `(kd, kh)`, `None` in the padding.
    fn in_row(&self, r: usize, kd: usize, kh: usize) -> Option<usize>;
}

impl Rows for Vol {
    #[inline]
    fn in_row(&self, r: usize, kd: usize, kh: usize) -> Option<usize> {
        let (od, oh) = (r / self.output[1], r % self.output[1]);
        let id = (od * self.stride[0] + kd * self.dilation[0]) as isize - self.padding[0] as isize;
        let ih = (oh * self.stride[1] + kh * self.dilation[1]) as isize - self.padding[1] as isize;
        if id < 0 || ih < 0 || id as usize >= self.input[0] || ih as usize >= self.input[1] {
            return None;
        }
        Some(id as usize * self.input[1] + ih as usize)
    }
}

/// Unfolds output rows `rows` (flat (depth, height) indices) of the `cg`
/// channels `x` into `col` (`K × P`, row-major with row stride `ld >= P`),
/// where `K = cg · taps` and `P = rows.len() · out_w`; taps in the padding
/// are 0. A row stride wider than `P` lets several images share one matrix.
fn vol2col<T: Element>(x: &[T], cg: usize, v: &Vol, rows: std::ops::Range<usize>, col: &mut [T], ld: usize) {
    let [kd, kh, kw] = v.kernel;
    let (w, ow) = (v.input[2], v.output[2]);
    let (sw, pw, dw) = (v.stride[2], v.padding[2], v.dilation[2]);
    let p = rows.len() * ow;
    let plane = v.in_plane();
    // Unit strides and an output row as wide as the input's: consecutive
    // output rows read consecutive input rows, so runs of them are copied
    // at once (see `vol2col_runs`).
    let runs = sw == 1 && v.stride[1] == 1 && w == ow && ow > 0;
    for c in 0..cg {
        let xc = &x[c * plane..(c + 1) * plane];
        for a in 0..kd {
            for b in 0..kh {
                for kj in 0..kw {
                    let row = &mut col[(((c * kd + a) * kh + b) * kw + kj) * ld..][..p];
                    let off = (kj * dw) as isize - pw as isize;
                    if runs {
                        vol2col_runs(xc, v, rows.clone(), a, b, off, row);
                        continue;
                    }
                    for (r, y) in rows.clone().enumerate() {
                        let dst = &mut row[r * ow..(r + 1) * ow];
                        let Some(ir) = v.in_row(y, a, b) else {
                            dst.fill(T::zero());
                            continue;
                        };
                        let src = &xc[ir * w..(ir + 1) * w];
                        if sw == 1 {
                            // Contiguous: zeros, a copied span, zeros.
                            let lo = (-off).clamp(0, ow as isize) as usize;
                            let hi = ((w as isize - off).clamp(0, ow as isize) as usize).max(lo);
                            dst[..lo].fill(T::zero());
                            // An empty span may sit wholly outside the row
                            // (padding wider than the input): index only a
                            // non-empty one.
                            if lo < hi {
                                dst[lo..hi].copy_from_slice(&src[(lo as isize + off) as usize..(hi as isize + off) as usize]);
                            }
                            dst[hi..].fill(T::zero());
                        } else {
                            // Zeros, every `sw`-th input of the span, zeros.
                            let (lo, hi) = strided_span(off, sw, w, ow);
                            dst[..lo].fill(T::zero());
                            if lo < hi {
                                let first = (lo * sw) as isize + off;
                                let from = &src[first as usize..];
                                if sw == 2 {
                                    // Every other element, read as pairs (vectorises).
                                    let m = (from.len() / 2).min(hi - lo);
                                    for (d, pair) in dst[lo..lo + m].iter_mut().zip(from[..2 * m].as_chunks::<2>().0) {
                                        *d = pair[0];
                                    }
                                    if lo + m < hi {
                                        dst[lo + m] = from[2 * m];
                                    }
                                } else {
                                    for (d, s) in dst[lo..hi].iter_mut().zip(from.iter().step_by(sw)) {
                                        *d = *s;
                                    }
                                }
                            }
                            dst[hi.max(lo)..].fill(T::zero());
                        }
                    }
                }
            }
        }
    }
}

/// One column-matrix row of [`vol2col`] (taps `(a, b)` and width offset
/// `off`) over output rows `rows`, when strides are 1 and output rows are as
/// wide as input rows: a run of output rows that reads consecutive input
/// rows is one contiguous span of the channel `xc` shifted by `off`, so it
/// is copied with one call (a row is only a few dozen elements; a copy per
/// row cost more in calls than in bytes), and then the padding columns of
/// each row, which the span filled from the neighbouring rows, are zeroed.
fn vol2col_runs<T: Element>(xc: &[T], v: &Vol, rows: std::ops::Range<usize>, a: usize, b: usize, off: isize, dst: &mut [T]) {
    let (w, ow, oh_n) = (v.input[2], v.output[2], v.output[1]);
    let lo = (-off).clamp(0, ow as isize) as usize;
    let hi = ((w as isize - off).clamp(0, ow as isize) as usize).max(lo);
    let n = rows.len();
    let mut r = 0;
    while r < n {
        let y = rows.start + r;
        let Some(ir) = v.in_row(y, a, b) else {
            dst[r * ow..(r + 1) * ow].fill(T::zero());
            r += 1;
            continue;
        };
        // The run: following rows of the same output depth plane whose
        // input rows follow on.
        let mut e = r + 1;
        while e < n && (rows.start + e) % oh_n != 0 && v.in_row(rows.start + e, a, b) == Some(ir + (e - r)) {
            e += 1;
        }
        let run = &mut dst[r * ow..e * ow];
        let start = (ir * w) as isize + off;
        // Clip the span to the channel; what falls outside is padding.
        let s_lo = (-start).clamp(0, run.len() as isize) as usize;
        let s_hi = ((xc.len() as isize - start).clamp(s_lo as isize, run.len() as isize)) as usize;
        run[..s_lo].fill(T::zero());
        if s_lo < s_hi {
            run[s_lo..s_hi].copy_from_slice(&xc[(start + s_lo as isize) as usize..(start + s_hi as isize) as usize]);
        }
        run[s_hi..].fill(T::zero());
        if lo > 0 || hi < ow {
            for row in run.chunks_exact_mut(ow) {
                for t in &mut row[..lo] {
                    *t = T::zero();
                }
                for t in &mut row[hi..] {
                    *t = T::zero();
                }
            }
        }
        r = e;
    }
}

/// The outputs `[lo, hi)` of a row of `ow` whose input column `xo·sw + off`
/// lies inside a row of `w` (`sw > 0`); `hi <= lo` when there are none.
#[inline(always)]
fn strided_span(off: isize, sw: usize, w: usize, ow: usize) -> (usize, usize) {
    let s = sw as isize;
    // First xo with xo·sw + off >= 0, and first with xo·sw + off >= w.
    let lo = if off >= 0 { 0 } else { (-off + s - 1) / s };
    let hi = if (w as isize) <= off { 0 } else { (w as isize - off + s - 1) / s };
    ((lo as usize).min(ow), (hi as usize).min(ow))
}

/// Adds the columns `col` of output rows `rows` (`K × P`, as [`vol2col`]
/// lays them out) back onto the `cg` channels `x` they were unfolded from;
/// taps in the padding are dropped, never multiplied.
fn col2vol<T: Element + AddAssign>(col: &[T], cg: usize, v: &Vol, rows: std::ops::Range<usize>, x: &mut [T]) {
    let [kd, kh, kw] = v.kernel;
    let (w, ow) = (v.input[2], v.output[2]);
    let (sw, pw, dw) = (v.stride[2], v.padding[2], v.dilation[2]);
    let p = rows.len() * ow;
    let plane = v.in_plane();
    for c in 0..cg {
        let xc = &mut x[c * plane..(c + 1) * plane];
        for a in 0..kd {
            for b in 0..kh {
                let tap_row = |kj: usize| &col[(((c * kd + a) * kh + b) * kw + kj) * p..][..p];
                // Stride 2 (transposed convolutions' usual upsampling): taps
                // kj and kj + 1 fill the even and odd columns of one span,
                // added together as interleaved pairs, which vectorise; the
                // general loop below takes the rest.
                let paired = if sw == 2 && dw == 1 { kw / 2 * 2 } else { 0 };
                for kj in (0..paired).step_by(2) {
                    let (ra, rb) = (tap_row(kj), tap_row(kj + 1));
                    let off = kj as isize - pw as isize;
                    for (r, y) in rows.clone().enumerate() {
                        let Some(ir) = v.in_row(y, a, b) else { continue };
                        let dst = &mut xc[ir * w..(ir + 1) * w];
                        add_pair_stride2(dst, &ra[r * ow..(r + 1) * ow], &rb[r * ow..(r + 1) * ow], off);
                    }
                }
                for kj in paired..kw {
                    let row = tap_row(kj);
                    let off = (kj * dw) as isize - pw as isize;
                    for (r, y) in rows.clone().enumerate() {
                        let Some(ir) = v.in_row(y, a, b) else { continue };
                        let dst = &mut xc[ir * w..(ir + 1) * w];
                        let src = &row[r * ow..(r + 1) * ow];
                        if sw == 1 {
                            let lo = (-off).clamp(0, ow as isize) as usize;
                            let hi = ((w as isize - off).clamp(0, ow as isize) as usize).max(lo);
                            if lo < hi {
                                let d = &mut dst[(lo as isize + off) as usize..(hi as isize + off) as usize];
                                for (d, s) in d.iter_mut().zip(&src[lo..hi]) {
                                    *d += *s;
                                }
                            }
                        } else {
                            let (lo, hi) = strided_span(off, sw, w, ow);
                            if lo < hi {
                                let first = (lo * sw) as isize + off;
                                for (d, s) in dst[first as usize..].iter_mut().step_by(sw).zip(&src[lo..hi]) {
                                    *d += *s;
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// `dst[xo·2 + off] += a[xo]` and `dst[xo·2 + off + 1] += b[xo]` for every
/// output `xo` whose column lies inside `dst` (the columns of two adjacent
/// taps of a stride-2 row): the outputs where both columns are inside run as
/// interleaved pairs, the few at the edges one by one.
#[inline]
fn add_pair_stride2<T: Element + AddAssign>(dst: &mut [T], a: &[T], b: &[T], off: isize) {
    let (w, ow) = (dst.len(), a.len());
    let (la, ha) = strided_span(off, 2, w, ow);
    let (lb, hb) = strided_span(off + 1, 2, w, ow);
    let (lo, hi) = (la.max(lb), ha.min(hb).max(la.max(lb)));
    let mut single = |src: &[T], o: isize, range: std::ops::Range<usize>| {
        for xo in range {
            dst[(2 * xo as isize + o) as usize] += src[xo];
        }
    };
    single(a, off, la..lo.min(ha).max(la));
    single(a, off, hi.max(la)..ha);
    single(b, off + 1, lb..lo.min(hb).max(lb));
    single(b, off + 1, hi.max(lb)..hb);
    if lo < hi {
        let first = (2 * lo as isize + off) as usize;
        let pairs = dst[first..first + 2 * (hi - lo)].as_chunks_mut::<2>().0;
        for ((d, &x), &y) in pairs.iter_mut().zip(&a[lo..hi]).zip(&b[lo..hi]) {
            d[0] += x;
            d[1] += y;
        }
    }
}

/// [`vol2col`] over all `cg` channels, split over the threads by channel
/// (each writes its own rows of `col`) when `parallel`: with few images the
/// GEMM is threaded and a serial unfold would leave the other cores idle.
fn vol2col_par<T: Element>(x: &[T], cg: usize, v: &Vol, rows: std::ops::Range<usize>, col: &mut [T], parallel: bool) {
    let chunk = v.taps() * rows.len() * v.output[2];
    let p = rows.len() * v.output[2];
    // A small unfold (one 8×8 image's) takes less time than waking a helper.
    if !parallel || cg < 2 || chunk == 0 || cg * chunk < crate::iter::GRAIN {
        return vol2col(x, cg, v, rows, col, p);
    }
    let plane = v.in_plane();
    crate::parallel::for_each_chunk_mut(col, chunk, |c, rows_c| vol2col(&x[c * plane..(c + 1) * plane], 1, v, rows.clone(), rows_c, p));
}

/// [`col2vol`] split over the threads by channel when `parallel` (each
/// channel's plane is written from its own rows of `col` only).
fn col2vol_par<T: Element + AddAssign>(col: &[T], cg: usize, v: &Vol, rows: std::ops::Range<usize>, x: &mut [T], parallel: bool) {
    let chunk = v.taps() * rows.len() * v.output[2];
    let plane = v.in_plane();
    if !parallel || cg < 2 || chunk == 0 || plane == 0 {
        return col2vol(col, cg, v, rows, x);
    }
    crate::parallel::for_each_chunk_mut(x, plane, |c, xc| col2vol(&col[c * chunk..(c + 1) * chunk], 1, v, rows.clone(), xc));
}

/// Elements of a vol2col band: 512 KiB of f32, so a band stays in L2.
const COL_BAND: usize = 1 << 17;

/// Fewest columns a band's GEMM gets: narrower products (a 3-d conv's short
/// rows) run the GEMM far below its peak.
const MIN_BAND_COLS: usize = 256;

/// Columns of the GEMM's widest float32 kernel (AVX-512: 4 vectors of 16);
/// a band narrower than a multiple of it ends in a half-empty narrow kernel.
const GEMM_PANEL: usize = 64;

/// Output rows per band for `k` column rows of `ow` columns each: about
/// [`COL_BAND`] elements, rounded up to whole [`GEMM_PANEL`]s of columns
/// when that at most doubles the band.
fn band_rows(k: usize, ow: usize, rows: usize) -> usize {
    let ow = ow.max(1);
    let base = (COL_BAND / (k * ow).max(1)).max(MIN_BAND_COLS.div_ceil(ow)).max(1);
    let align = GEMM_PANEL / gcd(ow, GEMM_PANEL);
    let aligned = base.next_multiple_of(align);
    (if aligned <= 2 * base { aligned } else { base }).clamp(1, rows.max(1))
}

fn gcd(mut a: usize, mut b: usize) -> usize {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

fn mat<T>(s: &[T], rs: usize) -> Mat {
    Mat { ptr: s.as_ptr() as *mut u8, rs: rs as isize, cs: 1 }
}

fn mat_t<T>(s: &[T], rs: usize) -> Mat {
    Mat { ptr: s.as_ptr() as *mut u8, rs: 1, cs: rs as isize }
}

fn mat_mut<T>(s: &mut [T], rs: usize) -> Mat {
    Mat { ptr: s.as_mut_ptr() as *mut u8, rs: rs as isize, cs: 1 }
}

fn check_lens(spec: &ConvSpec, what: &str, got: [usize; 3]) -> Result<()> {
    spec.validate()?;
    let (x, w, y) = spec.lens();
    if got != [x, w, y] {
        return Err(Error::runtime(format!("{what}: operand lengths do not match their shapes")));
    }
    Ok(())
}

/// Runs `f(index, chunk, scratch, gemm_threads)` over `out` cut into `chunk`
/// long pieces (one per image): images in parallel when there are at least as
/// many as threads, else one after another with the GEMM itself threaded.
fn per_image<T: Send>(out: &mut [T], chunk: usize, f: impl Fn(usize, &mut [T], &mut Vec<T>, bool) + Sync + Send) {
    let threads = crate::parallel::threads();
    let n = out.len() / chunk.max(1);
    if n >= threads && threads > 1 {
        // One contiguous run of images per thread, each with one scratch buffer.
        let per = n.div_ceil(threads);
        crate::parallel::for_each_chunk_mut(out, per * chunk, |t, run| {
            let mut col = Vec::new();
            for (j, c) in run.chunks_mut(chunk).enumerate() {
                f(t * per + j, c, &mut col, false);
            }
        });
    } else {
        let mut col = Vec::new();
        for (i, c) in out.chunks_mut(chunk.max(1)).enumerate() {
            f(i, c, &mut col, threads > 1);
        }
    }
}

/// Output planes narrower than this many columns make a per-image GEMM too
/// small to run near its peak (a 16×16 image: 8 × 256 × 9 multiply-adds, less
/// than the GEMM's own setup): such images are unfolded side by side and
/// multiplied together ([`conv_forward_runs`]).
const RUN_BELOW_COLS: usize = 1024;

/// Images that [`conv_forward`] multiplies in one product: as many as keep
/// their columns (`k × p` each) within a band and leave every thread a run
/// of its own; 1 (one image per product) for wide planes or lone images.
fn images_per_product(batch: usize, k: usize, p: usize) -> usize {
    if p >= RUN_BELOW_COLS || batch < 2 {
        return 1;
    }
    let per_thread = batch.div_ceil(crate::parallel::threads());
    (COL_BAND / (k * p).max(1)).clamp(1, per_thread)
}

/// [`conv_forward`] for small planes: runs of `run` images, one run per
/// task across the threads. Each group's columns of a run form one
/// `K × (run·P)` matrix (image `j` in columns `[j·P, (j+1)·P)`), so one GEMM
/// of `og × run·P` replaces `run` narrow ones; its product is then scattered
/// into the images' channel planes with the bias added.
#[allow(clippy::too_many_arguments)]
fn conv_forward_runs<T: GemmFloat>(spec: &ConvSpec, v: &Vol, run: usize, x: &[T], w: &[T], bias: Option<&[T]>, out: &mut [T]) {
    let (groups, o) = (spec.groups, spec.out_channels);
    let (cg, og) = (spec.in_channels / groups, o / groups);
    let (k, p, plane) = (cg * v.taps(), v.out_plane(), v.in_plane());
    let rows = v.output[0] * v.output[1];
    let img_in = spec.in_channels * plane;
    crate::parallel::for_each_chunk_mut(out, run * o * p, |t, y| {
        let first = t * run;
        let m = y.len() / (o * p);
        let ld = m * p;
        let mut col = vec![T::zero(); k * ld];
        let mut prod = vec![T::zero(); og * ld];
        for g in 0..groups {
            for j in 0..m {
                let xg = &x[(first + j) * img_in + g * cg * plane..][..cg * plane];
                vol2col(xg, cg, v, 0..rows, &mut col[j * p..], ld);
            }
            let wg = &w[g * og * k..(g + 1) * og * k];
            // SAFETY: wg is og×k, col k×ld and prod og×ld, all row-major
            // inside their own buffers; prod overlaps neither input.
            unsafe { gemm_into::<T>(og, ld, k, mat_mut(&mut prod, ld), mat(wg, k), mat(&col, ld), false, false) };
            for (j, yj) in y.chunks_mut(o * p).enumerate() {
                for oc in 0..og {
                    let src = &prod[oc * ld + j * p..][..p];
                    let dst = &mut yj[(g * og + oc) * p..][..p];
                    match bias {
                        Some(b) => {
                            let b = b[g * og + oc];
                            dst.iter_mut().zip(src).for_each(|(d, &s)| *d = s + b);
                        }
                        None => dst.copy_from_slice(src),
                    }
                }
            }
        }
    });
}

/// Convolution forward: `y = conv(x, w) + bias` with the shapes of `spec`,
/// `bias` (`out_channels`) optional, into the contiguous `out`. Each (image,
/// group) is unfolded a band of output rows at a time and multiplied by the
/// group's weights with the GEMM adapter (1×1 unit-stride convolutions skip
/// the unfold).
pub fn conv_forward<T: GemmFloat>(spec: &ConvSpec, x: &[T], w: &[T], bias: Option<&[T]>, out: &mut [T]) -> Result<()> {
    check_lens(spec, "convolution", [x.len(), w.len(), out.len()])?;
    if bias.is_some_and(|b| b.len() != spec.out_channels) {
        return Err(Error::runtime("convolution: bias length does not match the output channels"));
    }
    if out.is_empty() {
        return Ok(());
    }
    let v = spec.as_3d();
    let (groups, o) = (spec.groups, spec.out_channels);
    let (cg, og) = (spec.in_channels / groups, o / groups);
    let (k, p, plane) = (cg * v.taps(), v.out_plane(), v.in_plane());
    let rows = v.output[0] * v.output[1];
    let ow = v.output[2];
    if k == 0 {
        // No input channels: every output is its bias (an empty GEMM may
        // leave its destination untouched).
        match bias {
            Some(b) => out.chunks_mut(p).zip(b.iter().cycle()).for_each(|(plane, &b)| plane.fill(b)),
            None => out.fill(T::zero()),
        }
        return Ok(());
    }
    let direct = v.direct();
    if !direct {
        let run = images_per_product(spec.batch, k, p);
        if run > 1 {
            conv_forward_runs(spec, &v, run, x, w, bias, out);
            return Ok(());
        }
    }
    per_image(out, o * p, |img, y, col, gemm_threads| {
        let xi = &x[img * spec.in_channels * plane..][..spec.in_channels * plane];
        // Without a bias the first product overwrites instead of adding.
        if let Some(b) = bias {
            y.chunks_mut(p).zip(b).for_each(|(plane, &b)| plane.fill(b));
        }
        for g in 0..groups {
            let xg = &xi[g * cg * plane..(g + 1) * cg * plane];
            let wg = &w[g * og * k..(g + 1) * og * k];
            let yg = &mut y[g * og * p..(g + 1) * og * p];
            if direct {
                // SAFETY: row-major matrices of the sizes passed, inside their
                // slices: wg (og×k), xg (k×p), yg (og×p); yg overlaps neither.
                unsafe { gemm_into::<T>(og, p, k, mat_mut(yg, p), mat(wg, k), mat(xg, p), bias.is_some(), gemm_threads) };
                continue;
            }
            // A band of output rows at a time, so the band's columns stay in
            // cache between vol2col writing and the GEMM reading them; a
            // threaded GEMM wants the whole image as one product instead.
            let band = if gemm_threads { rows } else { band_rows(k, ow, rows) };
            let mut r0 = 0;
            while r0 < rows {
                let r1 = (r0 + band).min(rows);
                let pb = (r1 - r0) * ow;
                col.resize(k * pb, T::zero());
                vol2col_par(xg, cg, &v, r0..r1, &mut col[..k * pb], gemm_threads);
                let dst = &mut yg[r0 * ow..];
                // SAFETY: wg is og×k and the band's col k×pb, both row-major
                // inside their slices; dst addresses og rows of pb columns with
                // row stride p inside yg, which overlaps neither input.
                unsafe { gemm_into::<T>(og, pb, k, mat_mut(dst, p), mat(wg, k), mat(&col[..k * pb], pb), bias.is_some(), gemm_threads) };
                r0 = r1;
            }
        }
    });
    Ok(())
}

/// Gradient of [`conv_forward`] with respect to `x`, which is also the
/// transposed convolution of `grad` (shape `y`) by `w`: `out` (contiguous,
/// shape `x`) receives `bias` (`in_channels`, optional: a transposed
/// convolution's bias) plus, per (image, group), the columns `wgᵀ · grad`
/// folded back by col2vol. Only the (output, tap) pairs that read a real input
/// element contribute, so a non-finite weight tap that only ever met padding
/// or the gaps of a stride leaves no NaN behind, as in PyTorch's kernels.
pub fn conv_input_grad<T: GemmFloat + AddAssign>(spec: &ConvSpec, grad: &[T], w: &[T], bias: Option<&[T]>, out: &mut [T]) -> Result<()> {
    check_lens(spec, "convolution backward", [out.len(), w.len(), grad.len()])?;
    if bias.is_some_and(|b| b.len() != spec.in_channels) {
        return Err(Error::runtime("convolution: bias length does not match the output channels"));
    }
    if out.is_empty() {
        return Ok(());
    }
    let v = spec.as_3d();
    let (groups, o, c) = (spec.groups, spec.out_channels, spec.in_channels);
    let (cg, og) = (c / groups, o / groups);
    let (k, p, plane) = (cg * v.taps(), v.out_plane(), v.in_plane());
    let rows = v.output[0] * v.output[1];
    let ow = v.output[2];
    let direct = v.direct();
    per_image(out, c * plane, |img, xi, col, gemm_threads| {
        match bias {
            Some(b) => xi.chunks_mut(plane).zip(b).for_each(|(plane, &b)| plane.fill(b)),
            None => xi.fill(T::zero()),
        }
        let gi = &grad[img * o * p..][..o * p];
        if og == 0 {
            return;
        }
        for g in 0..groups {
            let wg = &w[g * og * k..(g + 1) * og * k];
            let gg = &gi[g * og * p..(g + 1) * og * p];
            let xg = &mut xi[g * cg * plane..(g + 1) * cg * plane];
            if direct {
                // SAFETY: wg is og×k row-major, read as its k×og transpose;
                // gg is og×p and xg k×p (p == plane), inside their slices.
                unsafe { gemm_into::<T>(k, p, og, mat_mut(xg, p), mat_t(wg, k), mat(gg, p), true, gemm_threads) };
                continue;
            }
            // A band of output rows at a time, as in the forward.
            let band = if gemm_threads { rows } else { band_rows(k, ow, rows) };
            let mut r0 = 0;
            while r0 < rows {
                let r1 = (r0 + band).min(rows);
                let pb = (r1 - r0) * ow;
                col.resize(k * pb, T::zero());
                // SAFETY: as above, with the band of gg (og×pb, row stride p)
                // and the scratch col (k×pb) as destination.
                unsafe { gemm_into::<T>(k, pb, og, mat_mut(&mut col[..k * pb], pb), mat_t(wg, k), mat(&gg[r0 * ow..], p), false, gemm_threads) };
                col2vol_par(&col[..k * pb], cg, &v, r0..r1, xg, gemm_threads);
                r0 = r1;
            }
        }
    });
    Ok(())
}

/// Gradient of [`conv_forward`] with respect to `w`: `out` (contiguous, shape
/// `w`) receives `Σ_images grad_g · vol2col(x_g)ᵀ` per group. With at least
/// as many images as threads each thread sums its own share of the images
/// into a private buffer and the buffers are added in thread order.
pub fn conv_weight_grad<T: GemmFloat + AddAssign>(spec: &ConvSpec, grad: &[T], x: &[T], out: &mut [T]) -> Result<()> {
    check_lens(spec, "convolution backward", [x.len(), out.len(), grad.len()])?;
    out.fill(T::zero());
    if out.is_empty() || grad.is_empty() {
        return Ok(());
    }
    let v = spec.as_3d();
    let (groups, o, c, n) = (spec.groups, spec.out_channels, spec.in_channels, spec.batch);
    let (cg, og) = (c / groups, o / groups);
    let (k, p, plane) = (cg * v.taps(), v.out_plane(), v.in_plane());
    let rows = v.output[0] * v.output[1];
    let ow = v.output[2];
    let direct = v.direct();
    // Adds images `imgs` into `acc` (shape w).
    let run = |imgs: std::ops::Range<usize>, acc: &mut [T], col: &mut Vec<T>, gemm_threads: bool| {
        for img in imgs {
            let xi = &x[img * c * plane..][..c * plane];
            let gi = &grad[img * o * p..][..o * p];
            for g in 0..groups {
                let xg = &xi[g * cg * plane..(g + 1) * cg * plane];
                let gg = &gi[g * og * p..(g + 1) * og * p];
                let ag = &mut acc[g * og * k..(g + 1) * og * k];
                if direct {
                    // SAFETY: gg is og×p, xg k×p read as its p×k transpose,
                    // ag og×k; all inside their slices, ag overlapping neither.
                    unsafe { gemm_into::<T>(og, k, p, mat_mut(ag, k), mat(gg, p), mat_t(xg, p), true, gemm_threads) };
                    continue;
                }
                let band = if gemm_threads { rows } else { band_rows(k, ow, rows) };
                let mut r0 = 0;
                while r0 < rows {
                    let r1 = (r0 + band).min(rows);
                    let pb = (r1 - r0) * ow;
                    col.resize(k * pb, T::zero());
                    vol2col_par(xg, cg, &v, r0..r1, &mut col[..k * pb], gemm_threads);
                    // SAFETY: the band of gg is og×pb with row stride p, col
                    // k×pb read as its pb×k transpose, ag og×k.
                    unsafe { gemm_into::<T>(og, k, pb, mat_mut(ag, k), mat(&gg[r0 * ow..], p), mat_t(&col[..k * pb], pb), true, gemm_threads) };
                    r0 = r1;
                }
            }
        }
    };
    let threads = crate::parallel::threads();
    if n >= threads && threads > 1 {
        let per = n.div_ceil(threads);
        let parts: Vec<Vec<T>> = crate::parallel::parallel_map(threads, |t| {
            let mut acc = vec![T::zero(); out.len()];
            let mut col = Vec::new();
            run(t * per..((t + 1) * per).min(n), &mut acc, &mut col, false);
            acc
        });
        for part in parts {
            for (o, v) in out.iter_mut().zip(part) {
                *o += v;
            }
        }
    } else {
        let mut col = Vec::new();
        run(0..n, out, &mut col, threads > 1);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_are_whole_gemm_panels_when_that_at_most_doubles_them() {
        // conv3d 32 channels 3x3x3 on 28-wide rows: 10 rows (280 columns)
        // become 16 (448 = 7 panels); conv2d 64 channels on 56-wide rows: 8.
        assert_eq!(band_rows(864, 28, 448), 16);
        assert_eq!(band_rows(576, 56, 56), 8);
        // Never more rows than there are, nor fewer than one.
        assert_eq!(band_rows(576, 56, 3), 3);
        assert_eq!(band_rows(1 << 20, 1000, 7), 1);
        // An odd width needs 64 rows for whole panels: more than double the
        // 10 rows 256 columns take, so unchanged.
        assert_eq!(band_rows(10_000, 27, 1000), 10);
        // A wide band rounds up a little.
        assert_eq!(band_rows(27, 7, 1000), 704);
    }

    #[test]
    fn strided_span_is_the_run_of_outputs_inside_the_row() {
        for sw in 1..6usize {
            for off in -9isize..9 {
                for w in 0..12usize {
                    for ow in 0..12usize {
                        let inside: Vec<usize> = (0..ow).filter(|&xo| (0..w as isize).contains(&((xo * sw) as isize + off))).collect();
                        let (lo, hi) = strided_span(off, sw, w, ow);
                        let got: Vec<usize> = (lo..hi).collect();
                        assert_eq!(got, inside, "sw {sw} off {off} w {w} ow {ow}");
                    }
                }
            }
        }
    }

    fn data(n: usize, seed: usize) -> Vec<f64> {
        (0..n).map(|i| (((i * 7919 + seed * 104729) % 2003) as f64) / 1000.0 - 1.0).collect()
    }

    fn spec(dims: usize, n: usize, c: usize, o: usize, groups: usize, input: &[usize], kernel: &[usize], s: &[usize], p: &[usize], d: &[usize]) -> ConvSpec {
        let arr = |a: &[usize]| {
            let mut r = [1; MAX_SPATIAL];
            r[..dims].copy_from_slice(a);
            r
        };
        let mut out = [1; MAX_SPATIAL];
        for i in 0..dims {
            out[i] = conv_output_size(input[i], kernel[i], s[i], p[i], d[i]).unwrap();
        }
        ConvSpec {
            dims,
            batch: n,
            in_channels: c,
            out_channels: o,
            groups,
            input: arr(input),
            kernel: arr(kernel),
            output: out,
            stride: arr(s),
            padding: arr(p),
            dilation: arr(d),
        }
    }

    /// Visits every (image, out channel, out position, in channel, tap) term:
    /// `f(x index, w index, y index)`.
    fn terms(sp: &ConvSpec, mut f: impl FnMut(usize, usize, usize)) {
        let v = sp.as_3d();
        let (cg, og) = (sp.in_channels / sp.groups, sp.out_channels / sp.groups);
        for img in 0..sp.batch {
            for oc in 0..sp.out_channels {
                let g = oc / og;
                for op in 0..v.out_plane() {
                    let o3 = [op / (v.output[1] * v.output[2]), op / v.output[2] % v.output[1], op % v.output[2]];
                    for ci in 0..cg {
                        for t in 0..v.taps() {
                            let k3 = [t / (v.kernel[1] * v.kernel[2]), t / v.kernel[2] % v.kernel[1], t % v.kernel[2]];
                            let mut idx = 0usize;
                            let mut inside = true;
                            for a in 0..3 {
                                let i = (o3[a] * v.stride[a] + k3[a] * v.dilation[a]) as isize - v.padding[a] as isize;
                                inside &= i >= 0 && (i as usize) < v.input[a];
                                idx = idx * v.input[a] + i.max(0) as usize;
                            }
                            if inside {
                                let xi = (img * sp.in_channels + g * cg + ci) * v.in_plane() + idx;
                                let wi = (oc * cg + ci) * v.taps() + t;
                                let yi = (img * sp.out_channels + oc) * v.out_plane() + op;
                                f(xi, wi, yi);
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn kernels_match_naive_loops() {
        let cases = [
            spec(2, 2, 3, 4, 1, &[9, 11], &[3, 3], &[1, 1], &[1, 1], &[1, 1]),
            spec(2, 3, 4, 6, 2, &[10, 9], &[3, 2], &[2, 1], &[1, 0], &[1, 2]),
            spec(2, 1, 6, 6, 6, &[7, 7], &[3, 3], &[2, 2], &[2, 2], &[2, 2]),
            spec(2, 20, 5, 7, 1, &[6, 6], &[1, 1], &[1, 1], &[0, 0], &[1, 1]),
            spec(2, 2, 64, 4, 1, &[5, 122], &[3, 3], &[1, 1], &[1, 1], &[1, 1]),
            spec(2, 1, 2, 2, 1, &[3, 2], &[2, 2], &[1, 1], &[4, 5], &[1, 1]),
            spec(1, 3, 4, 2, 2, &[13], &[3], &[2], &[1], &[2]),
            spec(1, 20, 3, 5, 1, &[7], &[1], &[1], &[0], &[1]),
            spec(3, 2, 2, 4, 2, &[5, 6, 4], &[2, 3, 2], &[2, 1, 1], &[1, 0, 2], &[1, 2, 1]),
            spec(3, 1, 3, 2, 1, &[3, 3, 3], &[1, 1, 1], &[1, 1, 1], &[0, 0, 0], &[1, 1, 1]),
            // Stride 2 with paired taps (col2vol's interleaved path): even
            // and odd kernel widths, padding on both edges, a 1-d signal.
            spec(2, 2, 3, 4, 1, &[7, 9], &[4, 4], &[2, 2], &[1, 1], &[1, 1]),
            spec(2, 1, 2, 3, 1, &[6, 11], &[3, 3], &[2, 2], &[1, 1], &[1, 1]),
            spec(1, 2, 2, 2, 1, &[17], &[5], &[2], &[2], &[1]),
            spec(2, 1, 2, 2, 2, &[5, 4], &[2, 6], &[1, 2], &[0, 3], &[1, 1]),
            // Unit strides with output rows as wide as the input's (vol2col's
            // runs of rows): "same" padding, dilated, 3-d, and padding wider
            // than the kernel reach on one axis.
            spec(2, 2, 3, 2, 1, &[6, 7], &[3, 3], &[1, 1], &[1, 1], &[1, 1]),
            spec(2, 1, 2, 3, 1, &[9, 8], &[3, 3], &[1, 1], &[3, 2], &[2, 2]),
            spec(3, 1, 2, 2, 1, &[4, 5, 6], &[3, 3, 3], &[1, 1, 1], &[1, 1, 1], &[1, 1, 1]),
            spec(2, 1, 1, 1, 1, &[4, 5], &[1, 3], &[1, 1], &[2, 1], &[1, 1]),
        ];
        for mut sp in cases {
            // The output may be cut short of its natural size (output padding
            // of a transposed convolution).
            for trim in [false, true] {
                if trim {
                    let d = sp.dims - 1;
                    if sp.output[d] < 2 {
                        continue;
                    }
                    sp.output[d] -= 1;
                }
                let (xl, wl, yl) = sp.lens();
                let (x, w, b, g) = (data(xl, 1), data(wl, 2), data(sp.out_channels, 3), data(yl, 4));
                let mut want_y: Vec<f64> = (0..yl).map(|i| b[i / sp.as_3d().out_plane() % sp.out_channels]).collect();
                let (mut want_gx, mut want_gw) = (vec![0.0; xl], vec![0.0; wl]);
                terms(&sp, |xi, wi, yi| {
                    want_y[yi] += x[xi] * w[wi];
                    want_gx[xi] += g[yi] * w[wi];
                    want_gw[wi] += g[yi] * x[xi];
                });
                let close = |got: &[f64], want: &[f64], what: &str| {
                    for (a, e) in got.iter().zip(want) {
                        assert!((a - e).abs() <= 1e-12 * e.abs().max(1.0), "{what} {sp:?}: {a} vs {e}");
                    }
                };
                let mut y = vec![0.0; yl];
                conv_forward(&sp, &x, &w, Some(&b), &mut y).unwrap();
                close(&y, &want_y, "forward");
                let mut gx = vec![0.0; xl];
                conv_input_grad(&sp, &g, &w, None, &mut gx).unwrap();
                close(&gx, &want_gx, "input grad");
                let mut gw = vec![0.0; wl];
                conv_weight_grad(&sp, &g, &x, &mut gw).unwrap();
                close(&gw, &want_gw, "weight grad");
                // f32 through the same path
                let f = |v: &[f64]| v.iter().map(|&a| a as f32).collect::<Vec<_>>();
                let mut y32 = vec![0f32; yl];
                conv_forward(&sp, &f(&x), &f(&w), Some(&f(&b)), &mut y32).unwrap();
                for (a, e) in y32.iter().zip(&want_y) {
                    assert!((*a as f64 - e).abs() <= 1e-4 * e.abs().max(1.0));
                }
            }
        }
    }

    /// Batches of small planes take the run path (several images unfolded
    /// side by side into one product): on one thread and on two, with and
    /// without a bias, grouped, strided and dilated, against the naive sum.
    #[test]
    fn image_runs_match_naive_loops() {
        let cases = [
            spec(2, 32, 1, 8, 1, &[16, 16], &[3, 3], &[1, 1], &[1, 1], &[1, 1]),
            spec(2, 7, 4, 6, 2, &[8, 9], &[3, 2], &[2, 1], &[1, 0], &[1, 2]),
            spec(1, 5, 3, 4, 1, &[12], &[3], &[1], &[2], &[2]),
            spec(3, 3, 2, 2, 1, &[4, 5, 3], &[2, 2, 2], &[1, 2, 1], &[1, 0, 1], &[1, 1, 1]),
        ];
        for sp in cases {
            let (xl, wl, yl) = sp.lens();
            let v = sp.as_3d();
            let k = sp.in_channels / sp.groups * v.taps();
            assert!(crate::parallel::with_threads(1, || images_per_product(sp.batch, k, v.out_plane())) > 1, "{sp:?} takes the run path");
            let (x, w, b) = (data(xl, 5), data(wl, 6), data(sp.out_channels, 7));
            for with_bias in [true, false] {
                let mut want: Vec<f64> = (0..yl).map(|i| if with_bias { b[i / v.out_plane() % sp.out_channels] } else { 0.0 }).collect();
                terms(&sp, |xi, wi, yi| want[yi] += x[xi] * w[wi]);
                for threads in [1, 2] {
                    let mut y = vec![f64::NAN; yl];
                    crate::parallel::with_threads(threads, || conv_forward(&sp, &x, &w, with_bias.then_some(&b[..]), &mut y)).unwrap();
                    for (a, e) in y.iter().zip(&want) {
                        assert!((a - e).abs() <= 1e-12 * e.abs().max(1.0), "{sp:?} threads {threads} bias {with_bias}: {a} vs {e}");
                    }
                }
            }
        }
    }

    #[test]
    fn bad_shapes_are_errors() {
        let mut sp = spec(2, 1, 3, 2, 1, &[4, 4], &[3, 3], &[1, 1], &[0, 0], &[1, 1]);
        sp.groups = 2;
        assert!(sp.validate().is_err());
        sp.groups = 1;
        sp.output = [3, 2, 1];
        assert!(sp.validate().is_err());
        assert_eq!(conv_output_size(2, 3, 1, 0, 1), None);
        assert_eq!(conv_output_size(5, 3, 2, 1, 1), Some(3));
    }
}

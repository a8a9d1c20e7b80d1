//! Neural-network kernels on contiguous NCHW data: conv2d forward (im2col
//! feeding the GEMM adapter; stride, padding, dilation, groups, bias).
//! Pooling lives in [`crate::pool`].
//!
//! The op layer passes contiguous operands as slices with their shapes; the
//! kernels check sizes and return PyTorch's messages for bad shapes.

use crate::matmul::{gemm_into, GemmFloat, Mat};
use ferrotorch_core::{Element, Error, Result};
use rayon::prelude::*;

/// Geometry of a 2-d convolution or pooling window: (height, width) pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window2d {
    /// Step between windows.
    pub stride: (usize, usize),
    /// Implicit zero padding on each side.
    pub padding: (usize, usize),
    /// Spacing between window taps.
    pub dilation: (usize, usize),
}

impl Default for Window2d {
    fn default() -> Self {
        Window2d { stride: (1, 1), padding: (0, 0), dilation: (1, 1) }
    }
}

/// Output shape `(N, O, OH, OW)` of [`conv2d`].
pub fn conv2d_out_shape(x: [usize; 4], w: [usize; 4], win: &Window2d, groups: usize) -> Result<[usize; 4]> {
    let [n, c, h, wd] = x;
    let [o, cg, kh, kw] = w;
    if groups == 0 || c != cg * groups || o % groups != 0 {
        return Err(Error::runtime(format!(
            "Given groups={groups}, weight of size [{o}, {cg}, {kh}, {kw}], expected input[{n}, {c}, {h}, {wd}] to have {} channels, but got {c} channels instead",
            cg * groups
        )));
    }
    let oh = crate::pool::pool_out_size(h, kh, win.stride.0, win.padding.0, win.dilation.0, false);
    let ow = crate::pool::pool_out_size(wd, kw, win.stride.1, win.padding.1, win.dilation.1, false);
    match (oh, ow) {
        (Some(oh), Some(ow)) if kh > 0 && kw > 0 => Ok([n, o, oh, ow]),
        _ => Err(Error::runtime(format!(
            "Calculated padded input size per channel: ({} x {}). Kernel size: ({kh} x {kw}). Kernel size can't be greater than actual input size",
            h + 2 * win.padding.0,
            wd + 2 * win.padding.1
        ))),
    }
}

/// Unfolds output rows `rows` of one group of one image into `col`
/// (`K × P`, row-major), where `K = cg·kh·kw` and `P = rows.len()·ow`;
/// out-of-range taps are 0.
#[allow(clippy::too_many_arguments)]
fn im2col<T: Element>(x: &[T], cg: usize, h: usize, w: usize, kh: usize, kw: usize, rows: std::ops::Range<usize>, ow: usize, win: &Window2d, col: &mut [T]) {
    let (sh, sw) = win.stride;
    let (ph, pw) = win.padding;
    let (dh, dw) = win.dilation;
    let p = rows.len() * ow;
    for c in 0..cg {
        let plane = &x[c * h * w..(c + 1) * h * w];
        for ki in 0..kh {
            for kj in 0..kw {
                let row = &mut col[((c * kh + ki) * kw + kj) * p..][..p];
                for (r, y) in rows.clone().enumerate() {
                    let ih = (y * sh + ki * dh) as isize - ph as isize;
                    let dst = &mut row[r * ow..(r + 1) * ow];
                    if ih < 0 || ih >= h as isize {
                        dst.fill(T::zero());
                        continue;
                    }
                    let src = &plane[ih as usize * w..(ih as usize + 1) * w];
                    let off = (kj * dw) as isize - pw as isize;
                    if sw == 1 {
                        // Contiguous: zeros, a copied span, zeros.
                        let lo = (-off).clamp(0, ow as isize) as usize;
                        let hi = ((w as isize - off).clamp(0, ow as isize) as usize).max(lo);
                        dst[..lo].fill(T::zero());
                        // An empty span may sit wholly outside the row (padding
                        // wider than the input), so only index a non-empty one.
                        if lo < hi {
                            dst[lo..hi].copy_from_slice(&src[(lo as isize + off) as usize..(hi as isize + off) as usize]);
                        }
                        dst[hi..].fill(T::zero());
                    } else {
                        for (xo, d) in dst.iter_mut().enumerate() {
                            let iw = (xo * sw) as isize + off;
                            *d = if iw >= 0 && iw < w as isize { src[iw as usize] } else { T::zero() };
                        }
                    }
                }
            }
        }
    }
}

/// Elements of an im2col band: 256 KiB of f32, so a band stays in L2.
const COL_BAND: usize = 1 << 16;

fn mat<T>(s: &[T], rs: usize) -> Mat {
    Mat { ptr: s.as_ptr() as *mut u8, rs: rs as isize, cs: 1 }
}

fn mat_mut<T>(s: &mut [T], rs: usize) -> Mat {
    Mat { ptr: s.as_mut_ptr() as *mut u8, rs: rs as isize, cs: 1 }
}

/// 2-d convolution forward on contiguous NCHW `x` (shape `xs`) with weight
/// `w` (shape `(O, C/groups, kh, kw)`) and optional `bias` (`O`), into the
/// contiguous `out` of shape [`conv2d_out_shape`]. Each (image, group) is
/// unfolded by im2col and multiplied by the group's weights with the GEMM
/// adapter (1×1 stride-1 unpadded convolutions skip the unfold). Images run in
/// parallel when there are enough of them, else the GEMM itself is threaded.
#[allow(clippy::too_many_arguments)]
pub fn conv2d<T: GemmFloat>(
    x: &[T],
    xs: [usize; 4],
    w: &[T],
    ws: [usize; 4],
    bias: Option<&[T]>,
    win: &Window2d,
    groups: usize,
    out: &mut [T],
) -> Result<[usize; 4]> {
    let os = conv2d_out_shape(xs, ws, win, groups)?;
    let [n, c, h, wd] = xs;
    let [o, cg, kh, kw] = ws;
    let [_, _, oh, ow] = os;
    let numel = |s: [usize; 4]| s.iter().product::<usize>();
    if x.len() != numel(xs) || w.len() != numel(ws) || out.len() != numel(os) || bias.is_some_and(|b| b.len() != o) {
        return Err(Error::runtime("conv2d: operand lengths do not match their shapes"));
    }
    if out.is_empty() {
        return Ok(os);
    }
    let og = o / groups;
    let (k, p) = (cg * kh * kw, oh * ow);
    let direct = kh == 1 && kw == 1 && *win == Window2d { dilation: win.dilation, ..Window2d::default() };
    let threads = rayon::current_num_threads();
    let per_image = |img: usize, y: &mut [T], col: &mut Vec<T>, gemm_threads: bool| {
        let xi = &x[img * c * h * wd..(img + 1) * c * h * wd];
        if let Some(b) = bias {
            for (oc, plane) in y.chunks_mut(p).enumerate() {
                plane.fill(b[oc]);
            }
        }
        for g in 0..groups {
            let xg = &xi[g * cg * h * wd..(g + 1) * cg * h * wd];
            let wg = &w[g * og * k..(g + 1) * og * k];
            let yg = &mut y[g * og * p..(g + 1) * og * p];
            if direct {
                // SAFETY: row-major matrices of the sizes passed, inside their
                // slices: wg (og×k), xg (k×p), yg (og×p); yg overlaps neither.
                unsafe { gemm_into::<T>(og, p, k, mat_mut(yg, p), mat(wg, k), mat(xg, p), bias.is_some(), gemm_threads) };
                continue;
            }
            // Unfold a band of output rows at a time so the band's columns
            // stay in cache between im2col writing and GEMM reading them.
            // A threaded GEMM wants the whole image as one product instead.
            let band = if gemm_threads { oh } else { (COL_BAND / (k * ow).max(1)).clamp(1, oh) };
            let mut y0 = 0;
            while y0 < oh {
                let y1 = (y0 + band).min(oh);
                let pb = (y1 - y0) * ow;
                col.resize(k * pb, T::zero());
                im2col(xg, cg, h, wd, kh, kw, y0..y1, ow, win, &mut col[..k * pb]);
                let dst = &mut yg[y0 * ow..];
                // SAFETY: wg is og×k and the band's col is k×pb, both row-major
                // inside their slices; dst addresses og rows of pb columns with
                // row stride p inside yg, which overlaps neither input.
                unsafe { gemm_into::<T>(og, pb, k, mat_mut(dst, p), mat(wg, k), mat(&col[..k * pb], pb), bias.is_some(), gemm_threads) };
                y0 = y1;
            }
        }
    };
    let img_out = o * p;
    if n >= threads && threads > 1 {
        out.par_chunks_mut(img_out).enumerate().for_each_init(Vec::new, |col, (img, y)| per_image(img, y, col, false));
    } else {
        let mut col = Vec::new();
        for (img, y) in out.chunks_mut(img_out).enumerate() {
            per_image(img, y, &mut col, threads > 1);
        }
    }
    Ok(os)
}

/// Adds the columns `col` (`K × P`, as [`im2col`] lays them out) back onto
/// the image they were unfolded from; taps that fell in the padding are
/// dropped, never multiplied.
#[allow(clippy::too_many_arguments)]
fn col2im<T: Element + std::ops::AddAssign>(col: &[T], cg: usize, h: usize, w: usize, kh: usize, kw: usize, oh: usize, ow: usize, win: &Window2d, x: &mut [T]) {
    let (sh, sw) = win.stride;
    let (ph, pw) = win.padding;
    let (dh, dw) = win.dilation;
    let p = oh * ow;
    for c in 0..cg {
        let plane = &mut x[c * h * w..(c + 1) * h * w];
        for ki in 0..kh {
            for kj in 0..kw {
                let row = &col[((c * kh + ki) * kw + kj) * p..][..p];
                for y in 0..oh {
                    let ih = (y * sh + ki * dh) as isize - ph as isize;
                    if ih < 0 || ih >= h as isize {
                        continue;
                    }
                    let dst = &mut plane[ih as usize * w..(ih as usize + 1) * w];
                    let off = (kj * dw) as isize - pw as isize;
                    for (xo, v) in row[y * ow..(y + 1) * ow].iter().enumerate() {
                        let iw = (xo * sw) as isize + off;
                        if iw >= 0 && iw < w as isize {
                            dst[iw as usize] += *v;
                        }
                    }
                }
            }
        }
    }
}

/// Gradient of [`conv2d`] with respect to its input (the transposed
/// convolution): `grad` has the output shape `os`, `w` the weight shape `ws`,
/// and `out` (contiguous, shape `xs`) receives the input gradient. Per
/// (image, group) the columns `wgᵀ · grad` are formed by GEMM and folded back
/// by col2im, so only the (output, tap) pairs that read a real input element
/// contribute: a non-finite weight tap that only ever met padding or the gaps
/// of a stride leaves no NaN behind, as in PyTorch's kernels.
#[allow(clippy::too_many_arguments)]
pub fn conv2d_input_grad<T: GemmFloat + std::ops::AddAssign>(
    grad: &[T],
    os: [usize; 4],
    w: &[T],
    ws: [usize; 4],
    xs: [usize; 4],
    win: &Window2d,
    groups: usize,
    out: &mut [T],
) -> Result<()> {
    let numel = |s: [usize; 4]| s.iter().product::<usize>();
    if conv2d_out_shape(xs, ws, win, groups)? != os || grad.len() != numel(os) || w.len() != numel(ws) || out.len() != numel(xs) {
        return Err(Error::runtime("conv2d backward: operand lengths do not match their shapes"));
    }
    out.fill(T::zero());
    let [n, c, h, wd] = xs;
    let [o, cg, kh, kw] = ws;
    let [_, _, oh, ow] = os;
    if out.is_empty() || grad.is_empty() {
        return Ok(());
    }
    let og = o / groups;
    let (k, p) = (cg * kh * kw, oh * ow);
    let threads = rayon::current_num_threads();
    let per_image = |img: usize, xi: &mut [T], col: &mut Vec<T>, gemm_threads: bool| {
        let gi = &grad[img * o * p..(img + 1) * o * p];
        col.resize(k * p, T::zero());
        for g in 0..groups {
            let wg = &w[g * og * k..(g + 1) * og * k];
            let gg = &gi[g * og * p..(g + 1) * og * p];
            let wt = Mat { ptr: wg.as_ptr() as *mut u8, rs: 1, cs: k as isize };
            // SAFETY: wg is og×k row-major, read here as its k×og transpose;
            // gg is og×p and col k×p, row-major inside their slices; col is
            // a scratch buffer overlapping neither.
            unsafe { gemm_into::<T>(k, p, og, mat_mut(&mut col[..k * p], p), wt, mat(gg, p), false, gemm_threads) };
            col2im(&col[..k * p], cg, h, wd, kh, kw, oh, ow, win, &mut xi[g * cg * h * wd..(g + 1) * cg * h * wd]);
        }
    };
    let img_in = c * h * wd;
    if n >= threads && threads > 1 {
        out.par_chunks_mut(img_in).enumerate().for_each_init(Vec::new, |col, (img, xi)| per_image(img, xi, col, false));
    } else {
        let mut col = Vec::new();
        for (img, xi) in out.chunks_mut(img_in).enumerate() {
            per_image(img, xi, &mut col, threads > 1);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(n: usize, seed: usize) -> Vec<f64> {
        (0..n).map(|i| (((i * 7919 + seed * 104729) % 2003) as f64) / 1000.0 - 1.0).collect()
    }

    /// Direct seven-loop convolution.
    #[allow(clippy::too_many_arguments)]
    fn naive_conv(x: &[f64], xs: [usize; 4], w: &[f64], ws: [usize; 4], b: Option<&[f64]>, win: &Window2d, groups: usize, os: [usize; 4]) -> Vec<f64> {
        let [n, c, h, wd] = xs;
        let [o, cg, kh, kw] = ws;
        let [_, _, oh, ow] = os;
        let og = o / groups;
        let mut out = vec![0f64; n * o * oh * ow];
        for img in 0..n {
            for oc in 0..o {
                let g = oc / og;
                for y in 0..oh {
                    for xo in 0..ow {
                        let mut s = b.map_or(0.0, |b| b[oc]);
                        for ci in 0..cg {
                            let ic = g * cg + ci;
                            for ki in 0..kh {
                                for kj in 0..kw {
                                    let ih = (y * win.stride.0 + ki * win.dilation.0) as isize - win.padding.0 as isize;
                                    let iw = (xo * win.stride.1 + kj * win.dilation.1) as isize - win.padding.1 as isize;
                                    if ih >= 0 && iw >= 0 && (ih as usize) < h && (iw as usize) < wd {
                                        s += x[((img * c + ic) * h + ih as usize) * wd + iw as usize] * w[((oc * cg + ci) * kh + ki) * kw + kj];
                                    }
                                }
                            }
                        }
                        out[((img * o + oc) * oh + y) * ow + xo] = s;
                    }
                }
            }
        }
        out
    }

    #[test]
    fn conv2d_matches_naive_loops() {
        let cases = [
            // (x shape, w shape, window, groups, bias)
            ([2, 3, 9, 11], [4, 3, 3, 3], Window2d { stride: (1, 1), padding: (1, 1), dilation: (1, 1) }, 1, true),
            ([3, 4, 10, 9], [6, 2, 3, 2], Window2d { stride: (2, 1), padding: (1, 0), dilation: (1, 2) }, 2, false),
            ([1, 6, 7, 7], [6, 1, 3, 3], Window2d { stride: (2, 2), padding: (2, 2), dilation: (2, 2) }, 6, true), // depthwise
            ([20, 5, 6, 6], [7, 5, 1, 1], Window2d::default(), 1, true),                                             // 1x1, many images
            ([2, 3, 5, 5], [2, 3, 5, 5], Window2d::default(), 1, false),                                             // kernel = input
            ([2, 2, 4, 40], [3, 2, 2, 3], Window2d { stride: (1, 3), padding: (0, 1), dilation: (1, 1) }, 1, true),
            // Wide rows: k·ow exceeds the im2col band, so one output row per band.
            ([2, 64, 5, 122], [4, 64, 3, 3], Window2d { stride: (1, 1), padding: (1, 1), dilation: (1, 1) }, 1, true),
            // Padding wider than the input: whole taps fall outside the row.
            ([1, 2, 3, 2], [2, 2, 2, 2], Window2d { stride: (1, 1), padding: (4, 5), dilation: (1, 1) }, 1, false),
        ];
        for (xs, ws, win, groups, with_bias) in cases {
            let x = data(xs.iter().product(), 1);
            let w = data(ws.iter().product(), 2);
            let b = data(ws[0], 3);
            let os = conv2d_out_shape(xs, ws, &win, groups).unwrap();
            let want = naive_conv(&x, xs, &w, ws, with_bias.then_some(&b[..]), &win, groups, os);
            let mut out = vec![0f64; os.iter().product()];
            conv2d(&x, xs, &w, ws, with_bias.then_some(&b[..]), &win, groups, &mut out).unwrap();
            for (g, e) in out.iter().zip(&want) {
                assert!((g - e).abs() <= 1e-12 * e.abs().max(1.0), "{xs:?} {ws:?} {win:?}: {g} vs {e}");
            }
            // f32 through the same path
            let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
            let w32: Vec<f32> = w.iter().map(|&v| v as f32).collect();
            let b32: Vec<f32> = b.iter().map(|&v| v as f32).collect();
            let mut o32 = vec![0f32; out.len()];
            conv2d(&x32, xs, &w32, ws, with_bias.then_some(&b32[..]), &win, groups, &mut o32).unwrap();
            for (g, e) in o32.iter().zip(&want) {
                assert!((*g as f64 - e).abs() <= 1e-4 * e.abs().max(1.0));
            }
        }
        // bad shapes
        assert!(conv2d_out_shape([1, 3, 4, 4], [2, 2, 3, 3], &Window2d::default(), 1).is_err());
        assert!(conv2d_out_shape([1, 3, 2, 2], [2, 3, 3, 3], &Window2d::default(), 1).is_err());
    }
}

//! The kernels against a naive O(n²) DFT in f64, for odd, prime and
//! power-of-two lengths, strided and offset inputs, and several dims.

use super::fft;
use crate::{Dst, Src};
use ferrotorch_core::layout::{contiguous_strides, Layout};
use ferrotorch_core::op::fft::{FftKind, FftSpec};
use ferrotorch_core::DType;
use rustfft::num_complex::Complex;
use smallvec::SmallVec;
use std::f64::consts::PI;

type C = Complex<f64>;

/// Deterministic values in [-1, 1).
fn noise(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        })
        .collect()
}

fn cnoise(n: usize, seed: u64) -> Vec<C> {
    let v = noise(2 * n, seed);
    v.chunks(2).map(|p| C::new(p[0], p[1])).collect()
}

/// The textbook DFT of one lane.
fn dft(x: &[C], forward: bool) -> Vec<C> {
    let n = x.len();
    let sign = if forward { -1.0 } else { 1.0 };
    (0..n)
        .map(|k| {
            x.iter().enumerate().fold(C::new(0.0, 0.0), |acc, (j, &v)| {
                let th = sign * 2.0 * PI * ((j * k) % n) as f64 / n as f64;
                acc + v * C::new(th.cos(), th.sin())
            })
        })
        .collect()
}

/// The naive DFT along `dim` of a contiguous array of `shape`.
fn dft_along(data: &[C], shape: &[usize], dim: usize, forward: bool) -> Vec<C> {
    let n = shape[dim];
    let inner: usize = shape[dim + 1..].iter().product();
    let outer: usize = shape[..dim].iter().product();
    let mut out = data.to_vec();
    for o in 0..outer {
        for i in 0..inner {
            let lane: Vec<C> = (0..n).map(|k| data[(o * n + k) * inner + i]).collect();
            for (k, v) in dft(&lane, forward).into_iter().enumerate() {
                out[(o * n + k) * inner + i] = v;
            }
        }
    }
    out
}

/// The elements `layout` addresses in `buf`, in row-major order.
fn materialize<E: Copy>(buf: &[E], layout: &Layout) -> Vec<E> {
    let numel = layout.numel();
    let mut out = Vec::with_capacity(numel);
    for flat in 0..numel {
        let (mut rest, mut off) = (flat, layout.offset as isize);
        for d in (0..layout.shape.len()).rev() {
            off += (rest % layout.shape[d]) as isize * layout.strides[d];
            rest /= layout.shape[d];
        }
        out.push(buf[off as usize]);
    }
    out
}

fn spec(kind: FftKind, forward: bool, dims: &[usize], lengths: &[usize], scale: f64) -> FftSpec {
    FftSpec { kind, forward, dims: SmallVec::from_slice(dims), lengths: SmallVec::from_slice(lengths), scale }
}

/// Runs the kernel in precision `T` on `x` (read through `xl`) into a fresh
/// contiguous output of `out_shape`, returned in f64.
fn run<T: super::FftFloat + Into<f64>, X: Copy, O: Copy + Default>(spec: &FftSpec, x: &[X], xl: &Layout, out_shape: &[usize]) -> Vec<O> {
    let ol = Layout::contiguous(out_shape);
    let mut out = vec![O::default(); ol.numel()];
    let dtype = if std::mem::size_of::<T>() == 4 { DType::Float32 } else { DType::Float64 };
    fft(spec, dtype, Src { base: x.as_ptr() as *const u8, layout: xl }, Dst { base: out.as_mut_ptr() as *mut u8, layout: &ol }).unwrap();
    out
}

fn assert_close(got: &[C], want: &[C], tol: f64) {
    assert_eq!(got.len(), want.len());
    let peak = want.iter().map(|v| v.norm()).fold(1.0, f64::max);
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).norm() <= tol * peak, "element {i}: got {g}, want {w}");
    }
}

fn to_c64(v: &[Complex<f32>]) -> Vec<C> {
    v.iter().map(|c| C::new(c.re as f64, c.im as f64)).collect()
}

const LENGTHS: [usize; 14] = [1, 2, 3, 4, 5, 7, 8, 12, 16, 17, 30, 97, 128, 210];

#[test]
fn c2c_1d_matches_the_naive_dft_in_both_directions_and_precisions() {
    for &n in &LENGTHS {
        for forward in [true, false] {
            let x = cnoise(3 * n, n as u64);
            let xl = Layout::contiguous(&[3, n]);
            let scale = if forward { 1.0 } else { 1.0 / n as f64 };
            let s = spec(FftKind::C2C, forward, &[1], &[n], scale);
            let want: Vec<C> = dft_along(&x, &[3, n], 1, forward).into_iter().map(|v| v * scale).collect();
            assert_close(&run::<f64, C, C>(&s, &x, &xl, &[3, n]), &want, 1e-12);
            let x32: Vec<Complex<f32>> = x.iter().map(|c| Complex::new(c.re as f32, c.im as f32)).collect();
            assert_close(&to_c64(&run::<f32, _, Complex<f32>>(&s, &x32, &xl, &[3, n])), &want, 2e-5);
        }
    }
}

#[test]
fn c2c_reads_strided_offset_inputs_and_transforms_several_dims() {
    // A (4, 6, 5) buffer after 3 leading elements, read transposed as (5, 6, 4).
    let base = cnoise(3 + 120, 7);
    let xl = Layout { shape: [5, 6, 4].into_iter().collect(), strides: [1, 5, 30].into_iter().collect(), offset: 3 };
    let dense = materialize(&base, &xl);
    for dims in [vec![2, 0], vec![0, 1, 2], vec![1]] {
        let lengths: Vec<usize> = dims.iter().map(|&d| xl.shape[d]).collect();
        let s = spec(FftKind::C2C, true, &dims, &lengths, 0.5);
        let mut want = dense.clone();
        for &d in &dims {
            want = dft_along(&want, &[5, 6, 4], d, true);
        }
        want.iter_mut().for_each(|v| *v *= 0.5);
        assert_close(&run::<f64, C, C>(&s, &base, &xl, &[5, 6, 4]), &want, 1e-12);
    }
}

#[test]
fn c2c_many_short_lanes_along_a_strided_dim() {
    // 300 lanes of 8 down the columns: several blocks, every thread busy.
    let x = cnoise(8 * 300, 3);
    let xl = Layout::contiguous(&[8, 300]);
    let s = spec(FftKind::C2C, false, &[0], &[8], 1.0);
    assert_close(&run::<f64, C, C>(&s, &x, &xl, &[8, 300]), &dft_along(&x, &[8, 300], 0, false), 1e-12);
}

#[test]
fn lanes_of_a_kibibyte_or_more_are_spread_an_odd_number_of_lines_apart() {
    use super::lanes::lane_stride;
    // Short lanes stay back to back, so the FFT libraries batch them.
    assert_eq!(lane_stride::<Complex<f32>>(127), 127);
    for (n, size) in [(1024usize, 8usize), (128, 16), (256, 4), (300, 4), (1000, 16), (4096, 8)] {
        let stride = match size {
            4 => lane_stride::<f32>(n),
            8 => lane_stride::<Complex<f32>>(n),
            _ => lane_stride::<C>(n),
        };
        let bytes = stride * size;
        assert!(stride >= n && bytes % 64 == 0 && (bytes / 64) % 2 == 1, "n {n}, size {size}: stride {stride}");
        assert!(bytes < n * size + 128, "n {n}: no more than two lines of padding");
    }
}

#[test]
fn column_passes_over_long_lanes_match_the_naive_dft() {
    // Columns of 256 and of an odd 135 complex values (KiBs per lane, the
    // sizes whose gathers and scatters are transposes): 70 lanes make
    // several blocks, the last one short. Both dims, and a transposed input.
    for (rows, cols) in [(256usize, 70usize), (135, 70)] {
        let x = cnoise(rows * cols, rows as u64);
        let shape = [rows, cols];
        let xl = Layout::contiguous(&shape);
        let want = dft_along(&dft_along(&x, &shape, 0, true), &shape, 1, true);
        let s = spec(FftKind::C2C, true, &[0, 1], &[rows, cols], 1.0);
        assert_close(&run::<f64, C, C>(&s, &x, &xl, &shape), &want, 1e-12);
        let x32: Vec<Complex<f32>> = x.iter().map(|c| Complex::new(c.re as f32, c.im as f32)).collect();
        assert_close(&to_c64(&run::<f32, _, Complex<f32>>(&s, &x32, &xl, &shape)), &want, 2e-5);
        // The same buffer read as its (cols, rows) transpose: now the rows are the strided lanes.
        let tl = Layout { shape: [cols, rows].into_iter().collect(), strides: [1, cols as isize].into_iter().collect(), offset: 0 };
        let dense = materialize(&x, &tl);
        let s = spec(FftKind::C2C, false, &[1], &[rows], 1.0 / rows as f64);
        let want: Vec<C> = dft_along(&dense, &[cols, rows], 1, false).into_iter().map(|v| v / rows as f64).collect();
        assert_close(&run::<f64, C, C>(&s, &x, &tl, &[cols, rows]), &want, 1e-12);
    }
}

#[test]
fn real_passes_over_long_strided_lanes_match_the_naive_dft() {
    // Real lanes of 300 floats (1200 bytes) down the columns of a transposed
    // input, to 151 frequencies; then back with the C2R pass.
    let (n, lanes) = (300usize, 9usize);
    let base = noise(n * lanes, 77);
    let xl = Layout { shape: [lanes, n].into_iter().collect(), strides: [1, lanes as isize].into_iter().collect(), offset: 0 };
    let dense = materialize(&base, &xl);
    let half = n / 2 + 1;
    let s = spec(FftKind::R2C { onesided: true }, true, &[1], &[n], 1.0);
    let want = naive_r2c(&dense, lanes, n, true, half);
    let x32: Vec<f32> = base.iter().map(|&v| v as f32).collect();
    let got = run::<f32, f32, Complex<f32>>(&s, &x32, &xl, &[lanes, half]);
    assert_close(&to_c64(&got), &want, 2e-5);
    let s = spec(FftKind::C2R, false, &[1], &[n], 1.0 / n as f64);
    let back = run::<f32, Complex<f32>, f32>(&s, &got, &Layout::contiguous(&[lanes, half]), &[lanes, n]);
    let back: Vec<C> = back.into_iter().map(|v| C::new(v as f64, 0.0)).collect();
    let dense: Vec<C> = dense.into_iter().map(|v| C::new(v, 0.0)).collect();
    assert_close(&back, &dense, 2e-5);
}

/// The naive real-input spectrum along the last dim of a contiguous `(rows, n)` array.
fn naive_r2c(x: &[f64], rows: usize, n: usize, forward: bool, keep: usize) -> Vec<C> {
    let c: Vec<C> = x.iter().map(|&v| C::new(v, 0.0)).collect();
    let full = dft_along(&c, &[rows, n], 1, forward);
    (0..rows).flat_map(|r| full[r * n..r * n + keep].to_vec()).collect()
}

#[test]
fn r2c_one_and_two_sided_match_the_naive_dft() {
    for &n in &LENGTHS {
        for (forward, onesided) in [(true, true), (true, false), (false, true), (false, false)] {
            let x = noise(2 * n, 11 + n as u64);
            let keep = if onesided { n / 2 + 1 } else { n };
            let s = spec(FftKind::R2C { onesided }, forward, &[1], &[n], 2.0);
            let want: Vec<C> = naive_r2c(&x, 2, n, forward, keep).into_iter().map(|v| v * 2.0).collect();
            assert_close(&run::<f64, f64, C>(&s, &x, &Layout::contiguous(&[2, n]), &[2, keep]), &want, 1e-12);
            let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
            assert_close(&to_c64(&run::<f32, f32, Complex<f32>>(&s, &x32, &Layout::contiguous(&[2, n]), &[2, keep])), &want, 2e-5);
        }
    }
}

#[test]
fn r2c_over_two_dims_of_a_transposed_input() {
    // A (9, 6) buffer read as its (6, 9) transpose; the halved dim is 1 (n = 9).
    let base = noise(54, 5);
    let xl = Layout { shape: [6, 9].into_iter().collect(), strides: [1, 6].into_iter().collect(), offset: 0 };
    let dense: Vec<C> = materialize(&base, &xl).into_iter().map(|v| C::new(v, 0.0)).collect();
    let s = spec(FftKind::R2C { onesided: true }, true, &[0, 1], &[6, 9], 1.0 / 54.0);
    let full = dft_along(&dft_along(&dense, &[6, 9], 1, true), &[6, 9], 0, true);
    let want: Vec<C> = (0..6).flat_map(|r| full[r * 9..r * 9 + 5].iter().map(|v| v / 54.0).collect::<Vec<_>>()).collect();
    assert_close(&run::<f64, f64, C>(&s, &base, &xl, &[6, 5]), &want, 1e-12);
}

/// The Hermitian extension of the half spectrum `h` to `n` frequencies,
/// with the imaginary parts at 0 and `n / 2` dropped.
fn hermitian(h: &[C], n: usize) -> Vec<C> {
    let mut h = h.to_vec();
    h[0].im = 0.0;
    if n % 2 == 0 {
        h[n / 2].im = 0.0;
    }
    (0..n).map(|k| if k < h.len() { h[k] } else { h[n - k].conj() }).collect()
}

#[test]
fn c2r_matches_the_naive_inverse_of_the_hermitian_extension() {
    for &n in &LENGTHS {
        for forward in [false, true] {
            let half = n / 2 + 1;
            // Nonzero imaginary parts at 0 and n/2 too: they must be ignored.
            let x = cnoise(2 * half, 29 + n as u64);
            let s = spec(FftKind::C2R, forward, &[1], &[n], 1.0 / n as f64);
            let want: Vec<C> = (0..2)
                .flat_map(|r| dft(&hermitian(&x[r * half..(r + 1) * half], n), forward))
                .map(|v| C::new(v.re / n as f64, 0.0))
                .collect();
            let got: Vec<C> = run::<f64, C, f64>(&s, &x, &Layout::contiguous(&[2, half]), &[2, n]).into_iter().map(|v| C::new(v, 0.0)).collect();
            assert_close(&got, &want, 1e-12);
            let x32: Vec<Complex<f32>> = x.iter().map(|c| Complex::new(c.re as f32, c.im as f32)).collect();
            let got32: Vec<C> = run::<f32, Complex<f32>, f32>(&s, &x32, &Layout::contiguous(&[2, half]), &[2, n]).into_iter().map(|v| C::new(v as f64, 0.0)).collect();
            assert_close(&got32, &want, 2e-5);
        }
    }
}

#[test]
fn c2r_over_two_dims_leaves_its_input_alone() {
    let (rows, n) = (5, 8);
    let half = n / 2 + 1;
    let x = cnoise(rows * half, 41);
    let before = x.clone();
    let s = spec(FftKind::C2R, false, &[0, 1], &[rows, n], 1.0);
    let got = run::<f64, C, f64>(&s, &x, &Layout::contiguous(&[rows, half]), &[rows, n]);
    assert_eq!(x, before);
    let cols = dft_along(&x, &[rows, half], 0, false);
    let want: Vec<C> = (0..rows).flat_map(|r| dft(&hermitian(&cols[r * half..(r + 1) * half], n), false)).map(|v| C::new(v.re, 0.0)).collect();
    let got: Vec<C> = got.into_iter().map(|v| C::new(v, 0.0)).collect();
    assert_close(&got, &want, 1e-12);
}

#[test]
fn mismatched_operands_are_an_error_not_a_panic() {
    let x = cnoise(8, 1);
    let xl = Layout::contiguous(&[8]);
    let ol = Layout::contiguous(&[7]);
    let mut out = vec![C::default(); 7];
    let s = spec(FftKind::C2C, true, &[0], &[8], 1.0);
    let r = fft(&s, DType::Float64, Src { base: x.as_ptr() as *const u8, layout: &xl }, Dst { base: out.as_mut_ptr() as *mut u8, layout: &ol });
    assert!(r.is_err());
    assert!(fft(&s, DType::Int64, Src { base: x.as_ptr() as *const u8, layout: &xl }, Dst { base: out.as_mut_ptr() as *mut u8, layout: &xl }).is_err());
    let _ = contiguous_strides(&[1]);
}

#[test]
fn r2c_two_sided_over_several_dims_is_the_transform_of_the_complexified_input() {
    // The half spectrum along the halved (last listed) dim, the complex
    // passes over it, then the Hermitian fill: against the naive transform
    // of the input with zero imaginary parts, the halved dim first, in the
    // middle (the complex passes' lanes in the narrowed spectrum are then
    // not back to back) and last, even and odd lengths, both directions.
    let shape = [4usize, 6, 5];
    let base = noise(120, 9);
    let contiguous = Layout::contiguous(&shape);
    // The same values read from a (5, 6, 4) buffer through a permuted layout.
    let permuted = Layout { shape: shape.into_iter().collect(), strides: [1, 4, 24].into_iter().collect(), offset: 0 };
    for xl in [&contiguous, &permuted] {
        let dense: Vec<C> = materialize(&base, xl).into_iter().map(|v| C::new(v, 0.0)).collect();
        for dims in [vec![0usize, 1, 2], vec![2, 0], vec![0, 2, 1], vec![2, 1], vec![1]] {
            for forward in [true, false] {
                let lengths: Vec<usize> = dims.iter().map(|&d| shape[d]).collect();
                let s = spec(FftKind::R2C { onesided: false }, forward, &dims, &lengths, 0.25);
                let mut want = dense.clone();
                for &d in &dims {
                    want = dft_along(&want, &shape, d, forward);
                }
                want.iter_mut().for_each(|v| *v *= 0.25);
                assert_close(&run::<f64, f64, C>(&s, &base, xl, &shape), &want, 1e-12);
                let x32: Vec<f32> = base.iter().map(|&v| v as f32).collect();
                assert_close(&to_c64(&run::<f32, f32, Complex<f32>>(&s, &x32, xl, &shape)), &want, 2e-5);
            }
        }
    }
}

#[test]
fn two_sided_r2c_of_a_large_image_fills_every_frequency() {
    // 64 x 1024 real floats (8 KiB spectrum rows, blocks of several lanes):
    // the completed spectrum equals the complex transform of the same input.
    let (rows, cols) = (64usize, 1024usize);
    let x = noise(rows * cols, 13);
    let xl = Layout::contiguous(&[rows, cols]);
    let s = spec(FftKind::R2C { onesided: false }, true, &[0, 1], &[rows, cols], 1.0);
    let got = run::<f64, f64, C>(&s, &x, &xl, &[rows, cols]);
    let xc: Vec<C> = x.iter().map(|&v| C::new(v, 0.0)).collect();
    let c = spec(FftKind::C2C, true, &[0, 1], &[rows, cols], 1.0);
    assert_close(&got, &run::<f64, C, C>(&c, &xc, &xl, &[rows, cols]), 1e-12);
    // and the complex transform is the naive one along the columns of its rows' transforms
    let want = dft_along(&dft_along(&xc[..8 * cols], &[8, cols], 1, true), &[8, cols], 0, true);
    let c8 = spec(FftKind::C2C, true, &[0, 1], &[8, cols], 1.0);
    assert_close(&run::<f64, C, C>(&c8, &xc[..8 * cols], &Layout::contiguous(&[8, cols]), &[8, cols]), &want, 1e-12);
}

#[test]
fn scratch_loans_are_aligned_sized_and_nest() {
    use super::scratch::{lanes, work};
    lanes::<f32, Complex<f64>, _>(3, 5, |a, b| {
        assert_eq!((a.len(), b.len()), (3, 5));
        assert_eq!(a.as_ptr() as usize % 64, 0);
        assert_eq!(b.as_ptr() as usize % 64, 0);
        a.fill(1.5);
        b.fill(C::new(2.0, -1.0));
        // A nested loan of the same buffer is a fresh allocation, not an alias.
        lanes::<f32, f32, _>(3, 0, |c, _| {
            c.fill(7.0);
            assert_ne!(c.as_ptr(), a.as_ptr());
        });
        assert!(a.iter().all(|&v| v == 1.5) && b.iter().all(|&v| v == C::new(2.0, -1.0)));
        // The other buffer is independent.
        work::<Complex<f32>, _>(4, |w| assert_eq!(w.len(), 4));
    });
    // Loans past the kept size are allocated for the call.
    work::<f64, _>((1 << 20) / 8 + 1, |w| {
        w[w.len() - 1] = 3.0;
        assert_eq!(w.len(), (1 << 20) / 8 + 1);
    });
}

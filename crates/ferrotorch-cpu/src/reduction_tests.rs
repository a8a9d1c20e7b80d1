//! Reductions, softmax and cumulative ops against naive reference loops, over
//! contiguous, permuted, sliced, empty and 0-d layouts.

use crate::reduction::*;
use crate::{Dst, Src};
use ferrotorch_core::{DType, Layout};

fn lay(shape: &[usize], strides: &[isize], offset: usize) -> Layout {
    Layout { shape: shape.into(), strides: strides.into(), offset }
}

fn contiguous(shape: &[usize]) -> Layout {
    Layout::contiguous(shape)
}

/// Every multi-index of `shape`, row-major.
fn indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let n: usize = shape.iter().product();
    let mut out = Vec::with_capacity(n);
    let mut idx = vec![0usize; shape.len()];
    for _ in 0..n {
        out.push(idx.clone());
        for d in (0..shape.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    out
}

fn offset_of(l: &Layout, idx: &[usize]) -> usize {
    (l.offset as isize + idx.iter().zip(&l.strides).map(|(&i, &s)| i as isize * s).sum::<isize>()) as usize
}

/// Groups of input values per output (row-major over the keepdim shape), each
/// in reduced-index order.
fn groups(data: &[f64], l: &Layout, dims: &[bool]) -> Vec<Vec<f64>> {
    let kshape: Vec<usize> = l.shape.iter().zip(dims).map(|(&s, &r)| if r { 1 } else { s }).collect();
    let kept = indices(&kshape);
    let rshape: Vec<usize> = l.shape.iter().zip(dims).filter(|(_, &r)| r).map(|(&s, _)| s).collect();
    let red = indices(&rshape);
    kept.iter()
        .map(|k| {
            red.iter()
                .map(|r| {
                    let mut full = k.clone();
                    let mut it = r.iter();
                    for d in 0..full.len() {
                        if dims[d] {
                            full[d] = *it.next().unwrap();
                        }
                    }
                    data[offset_of(l, &full)]
                })
                .collect()
        })
        .collect()
}

fn naive(kind: ReduceKind, v: &[f64]) -> f64 {
    let n = v.len() as f64;
    match kind {
        ReduceKind::Sum => v.iter().sum(),
        ReduceKind::Mean => v.iter().sum::<f64>() / n,
        ReduceKind::Prod | ReduceKind::ProdAll => v.iter().product(),
        ReduceKind::Max => v.iter().fold(f64::NEG_INFINITY, |m, &x| if x.is_nan() || m.is_nan() { f64::NAN } else { m.max(x) }),
        ReduceKind::Min => v.iter().fold(f64::INFINITY, |m, &x| if x.is_nan() || m.is_nan() { f64::NAN } else { m.min(x) }),
        ReduceKind::Var { correction } | ReduceKind::Std { correction } => {
            let mean = v.iter().sum::<f64>() / n;
            let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - correction).max(0.0);
            if matches!(kind, ReduceKind::Std { .. }) {
                var.sqrt()
            } else {
                var
            }
        }
        ReduceKind::LogSumExp if v.iter().any(|x| x.is_nan()) => f64::NAN,
        ReduceKind::Norm(p) if p.is_infinite() && v.iter().any(|x| x.is_nan()) => f64::NAN,
        ReduceKind::LogSumExp => {
            let m = v.iter().fold(f64::NEG_INFINITY, |m, &x| m.max(x));
            if m.is_infinite() {
                m
            } else {
                m + v.iter().map(|x| (x - m).exp()).sum::<f64>().ln()
            }
        }
        ReduceKind::Norm(p) => {
            if p == f64::INFINITY {
                v.iter().fold(0.0, |m, &x| m.max(x.abs()))
            } else if p == 0.0 {
                v.iter().filter(|&&x| x != 0.0).count() as f64
            } else {
                v.iter().map(|x| x.abs().powf(p)).sum::<f64>().powf(1.0 / p)
            }
        }
        ReduceKind::All => v.iter().all(|&x| x != 0.0) as i32 as f64,
        ReduceKind::Any => v.iter().any(|&x| x != 0.0) as i32 as f64,
        ReduceKind::CountNonzero => v.iter().filter(|&&x| x != 0.0).count() as f64,
        ReduceKind::NormShortF32(_) | ReduceKind::Norm2FusedF32 => unreachable!("tested on its own"),
    }
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= tol * b.abs().max(1.0)
}

const KINDS: [ReduceKind; 15] = [
    ReduceKind::Sum,
    ReduceKind::Mean,
    ReduceKind::Prod,
    ReduceKind::Max,
    ReduceKind::Min,
    ReduceKind::Var { correction: 1.0 },
    ReduceKind::Std { correction: 0.0 },
    ReduceKind::LogSumExp,
    ReduceKind::Norm(2.0),
    ReduceKind::Norm(f64::INFINITY),
    ReduceKind::Norm(0.0),
    ReduceKind::Norm(1.5),
    ReduceKind::All,
    ReduceKind::Any,
    ReduceKind::CountNonzero,
];

/// Input layouts over a buffer of 200 elements, all of logical shape (3, 4, 5).
fn layouts_345() -> Vec<Layout> {
    vec![
        lay(&[3, 4, 5], &[20, 5, 1], 0),      // contiguous
        lay(&[3, 4, 5], &[1, 3, 12], 0),      // fully permuted (5, 4, 3) buffer
        lay(&[3, 4, 5], &[40, 10, 2], 1),     // stepped slice
        lay(&[3, 4, 5], &[0, 5, 1], 7),       // broadcast along dim 0
    ]
}

fn check_all_kinds(data32: &[f32], l: &Layout) {
    let data: Vec<f64> = data32.iter().map(|&x| x as f64).collect();
    let nd = l.shape.len();
    for mask in 0..(1u32 << nd) {
        let dims: Vec<bool> = (0..nd).map(|d| mask & (1 << d) != 0).collect();
        let kshape: Vec<usize> = l.shape.iter().zip(&dims).map(|(&s, &r)| if r { 1 } else { s }).collect();
        let ol = contiguous(&kshape);
        let want = groups(&data, l, &dims);
        for kind in KINDS {
            let out_dtype = match kind {
                ReduceKind::All | ReduceKind::Any => DType::Bool,
                ReduceKind::CountNonzero => DType::Int64,
                _ => DType::Float64,
            };
            let mut out = vec![0u8; 8 * want.len().max(1)];
            reduce(kind, Src { base: data32.as_ptr() as *const u8, layout: l }, DType::Float32, &dims, Dst { base: out.as_mut_ptr(), layout: &ol }, out_dtype).unwrap();
            for (k, g) in want.iter().enumerate() {
                let got = match out_dtype {
                    DType::Bool => out[k] as f64,
                    DType::Int64 => i64::from_ne_bytes(out[8 * k..8 * k + 8].try_into().unwrap()) as f64,
                    _ => f64::from_ne_bytes(out[8 * k..8 * k + 8].try_into().unwrap()),
                };
                let w = naive(kind, g);
                // Float32 logsumexp takes exp in float32 and the product rounds
                // to float32 at every step, as PyTorch: float32-accurate.
                let tol = if matches!(kind, ReduceKind::LogSumExp | ReduceKind::Prod) { 1e-6 } else { 1e-12 };
                assert!(close(got, w, tol), "{kind:?} dims {dims:?} layout {l:?} out {k}: {got} vs {w}");
            }
        }
    }
}

#[test]
fn every_kind_every_dim_subset_every_layout() {
    let buf: Vec<f32> = (0..200).map(|i| ((i * 37) % 23) as f32 * 0.25 - 2.0).collect();
    for l in layouts_345() {
        check_all_kinds(&buf, &l);
    }
    // with zeros, infinities and NaN
    let mut special = buf.clone();
    special[3] = f32::INFINITY;
    special[11] = 0.0;
    special[17] = f32::NEG_INFINITY;
    special[29] = f32::NAN;
    check_all_kinds(&special, &layouts_345()[0]);
}

#[test]
fn empty_0d_and_integer_inputs() {
    // sum over an empty dim: zeros; prod: ones; logsumexp: -inf
    let x = [1f32; 4];
    let l = lay(&[2, 0], &[0, 1], 0);
    let ol = contiguous(&[2, 1]);
    let mut out = [7f64; 2];
    for (kind, w) in [(ReduceKind::Sum, 0.0), (ReduceKind::Prod, 1.0), (ReduceKind::LogSumExp, f64::NEG_INFINITY)] {
        reduce(kind, Src { base: x.as_ptr() as *const u8, layout: &l }, DType::Float32, &[false, true], Dst { base: out.as_mut_ptr() as *mut u8, layout: &ol }, DType::Float64).unwrap();
        assert_eq!(out, [w, w], "{kind:?}");
    }
    // 0-d input, no dims: the value itself; all dims of a 1-element tensor
    let z = lay(&[], &[], 2);
    let v = [0f32, 1.0, 2.5];
    let mut o = [0f32];
    reduce(ReduceKind::Sum, Src { base: v.as_ptr() as *const u8, layout: &z }, DType::Float32, &[], Dst { base: o.as_mut_ptr() as *mut u8, layout: &lay(&[], &[], 0) }, DType::Float32).unwrap();
    assert_eq!(o, [2.5]);
    // int8 sum wraps in int64 accumulator, output int64 (no wrap at 8 bits)
    let b: Vec<i8> = vec![100, 100, 100, -128];
    let lb = contiguous(&[4]);
    let mut oi = [0i64];
    reduce(ReduceKind::Sum, Src { base: b.as_ptr() as *const u8, layout: &lb }, DType::Int8, &[true], Dst { base: oi.as_mut_ptr() as *mut u8, layout: &lay(&[], &[], 0) }, DType::Int64).unwrap();
    assert_eq!(oi, [172]);
    reduce(ReduceKind::Max, Src { base: b.as_ptr() as *const u8, layout: &lb }, DType::Int8, &[true], Dst { base: oi.as_mut_ptr() as *mut u8, layout: &lay(&[], &[], 0) }, DType::Int64).unwrap();
    assert_eq!(oi, [100]);
    let big: Vec<i64> = vec![i64::MAX - 1, i64::MAX, 3];
    reduce(ReduceKind::Max, Src { base: big.as_ptr() as *const u8, layout: &contiguous(&[3]) }, DType::Int64, &[true], Dst { base: oi.as_mut_ptr() as *mut u8, layout: &lay(&[1], &[1], 0) }, DType::Int64).unwrap();
    assert_eq!(oi, [i64::MAX], "int64 max is exact");
    // bad output shape
    assert!(reduce(ReduceKind::Sum, Src { base: b.as_ptr() as *const u8, layout: &lb }, DType::Int8, &[false], Dst { base: oi.as_mut_ptr() as *mut u8, layout: &contiguous(&[2]) }, DType::Int64).is_err());
}

#[test]
fn argmax_argmin_ties_nan_and_dims() {
    let x = [3f32, 1.0, 3.0, 0.0, 1.0, 0.0];
    let l = contiguous(&[2, 3]);
    let mut idx = [0i64; 3];
    let mut val = [0f32; 3];
    let ol = contiguous(&[1, 3]);
    reduce_arg(ArgKind::Max, Src { base: x.as_ptr() as *const u8, layout: &l }, DType::Float32, &[true, false], Some(Dst { base: val.as_mut_ptr() as *mut u8, layout: &ol }), Dst { base: idx.as_mut_ptr() as *mut u8, layout: &ol }).unwrap();
    assert_eq!((idx, val), ([0, 0, 0], [3.0, 1.0, 3.0]), "column 1 ties: first index");
    let mut i1 = [0i64; 2];
    let ol2 = contiguous(&[2, 1]);
    reduce_arg(ArgKind::Max, Src { base: x.as_ptr() as *const u8, layout: &l }, DType::Float32, &[false, true], None, Dst { base: i1.as_mut_ptr() as *mut u8, layout: &ol2 }).unwrap();
    assert_eq!(i1, [0, 1], "first index on ties");
    reduce_arg(ArgKind::Min, Src { base: x.as_ptr() as *const u8, layout: &l }, DType::Float32, &[false, true], None, Dst { base: i1.as_mut_ptr() as *mut u8, layout: &ol2 }).unwrap();
    assert_eq!(i1, [1, 0]);
    // flattened, with NaN: the first NaN wins
    let y = [1f32, f32::NAN, 3.0, f32::NAN];
    let mut i0 = [9i64];
    reduce_arg(ArgKind::Max, Src { base: y.as_ptr() as *const u8, layout: &contiguous(&[2, 2]) }, DType::Float32, &[true, true], None, Dst { base: i0.as_mut_ptr() as *mut u8, layout: &lay(&[], &[], 0) }).unwrap();
    assert_eq!(i0, [1]);
    reduce_arg(ArgKind::Min, Src { base: y.as_ptr() as *const u8, layout: &contiguous(&[2, 2]) }, DType::Float32, &[true, true], None, Dst { base: i0.as_mut_ptr() as *mut u8, layout: &lay(&[], &[], 0) }).unwrap();
    assert_eq!(i0, [1]);
    // transposed input, flattened index is over the logical row-major order
    let t = lay(&[3, 2], &[1, 3], 0); // logical [[3,0],[1,1],[3,0]]
    reduce_arg(ArgKind::Min, Src { base: x.as_ptr() as *const u8, layout: &t }, DType::Float32, &[true, true], None, Dst { base: i0.as_mut_ptr() as *mut u8, layout: &lay(&[], &[], 0) }).unwrap();
    assert_eq!(i0, [1]);
}

#[test]
fn large_parallel_shapes_match_naive() {
    // many outputs / few outputs, inner and outer reductions, argmax ties
    for (shape, dims) in [
        (vec![600usize, 300usize], vec![true, false]),
        (vec![600, 300], vec![false, true]),
        (vec![4, 300_000], vec![false, true]),
        (vec![300_000, 4], vec![true, false]),
        (vec![1_200_000], vec![true]),
        (vec![30, 40, 500], vec![true, false, true]),
    ] {
        let n: usize = shape.iter().product();
        let data: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1009) as f32 * 0.01 - 5.0).collect();
        let l = contiguous(&shape);
        let d64: Vec<f64> = data.iter().map(|&x| x as f64).collect();
        let want = groups(&d64, &l, &dims);
        let kshape: Vec<usize> = shape.iter().zip(&dims).map(|(&s, &r)| if r { 1 } else { s }).collect();
        let ol = contiguous(&kshape);
        for kind in [ReduceKind::Sum, ReduceKind::Var { correction: 1.0 }, ReduceKind::LogSumExp, ReduceKind::Max] {
            let mut out = vec![0f64; want.len()];
            reduce(kind, Src { base: data.as_ptr() as *const u8, layout: &l }, DType::Float32, &dims, Dst { base: out.as_mut_ptr() as *mut u8, layout: &ol }, DType::Float64).unwrap();
            // Contiguous f32 sums add short runs in f32 lanes before f64
            // (simd::sum), so they are float32-accurate, not float64-exact.
            // Their error bound scales with the sum of magnitudes.
            for (k, g) in want.iter().enumerate() {
                let tol = match kind {
                    ReduceKind::Sum => 1e-6 * g.iter().map(|v| v.abs()).sum::<f64>().max(1.0),
                    // exp in float32, as PyTorch's `exp(x - max)`
                    ReduceKind::LogSumExp => 1e-6,
                    _ => 1e-9,
                };
                assert!(close(out[k], naive(kind, g), tol), "{kind:?} {shape:?} {dims:?} out {k}: {} vs {}", out[k], naive(kind, g));
            }
        }
        if dims.iter().filter(|&&r| r).count() == 1 || dims.iter().all(|&r| r) {
            let mut idx = vec![0i64; want.len()];
            reduce_arg(ArgKind::Max, Src { base: data.as_ptr() as *const u8, layout: &l }, DType::Float32, &dims, None, Dst { base: idx.as_mut_ptr() as *mut u8, layout: &ol }).unwrap();
            for (k, g) in want.iter().enumerate() {
                let m = g.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let first = g.iter().position(|&v| v == m).unwrap();
                assert_eq!(idx[k] as usize, first, "argmax {shape:?} {dims:?} out {k}");
            }
        }
    }
}

fn naive_softmax(v: &[f64], log: bool) -> Vec<f64> {
    let m = v.iter().fold(f64::NEG_INFINITY, |m, &x| if x.is_nan() || m.is_nan() { f64::NAN } else { m.max(x) });
    let s: f64 = v.iter().map(|x| (x - m).exp()).sum();
    v.iter().map(|x| if log { x - m - s.ln() } else { (x - m).exp() / s }).collect()
}

#[test]
fn softmax_every_dim_layout_and_dtype() {
    let buf: Vec<f32> = (0..200).map(|i| ((i * 37) % 23) as f32 * 0.5 - 5.0).collect();
    for l in layouts_345() {
        for dim in 0..3 {
            for log in [false, true] {
                let ol = contiguous(&[3, 4, 5]);
                let mut out = vec![0f32; 60];
                softmax(Src { base: buf.as_ptr() as *const u8, layout: &l }, Dst { base: out.as_mut_ptr() as *mut u8, layout: &ol }, DType::Float32, dim, log).unwrap();
                // rows along `dim`
                let d64: Vec<f64> = buf.iter().map(|&x| x as f64).collect();
                let dims: Vec<bool> = (0..3).map(|d| d == dim).collect();
                let rows = groups(&d64, &l, &dims);
                let orows = groups(&out.iter().map(|&x| x as f64).collect::<Vec<_>>(), &ol, &dims);
                for (r, o) in rows.iter().zip(&orows) {
                    for (g, w) in o.iter().zip(naive_softmax(r, log)) {
                        assert!(close(*g, w, 1e-6), "dim {dim} log {log} {l:?}: {g} vs {w}");
                    }
                }
            }
        }
    }
    // special rows (PyTorch's results): all -inf, a +inf, or a NaN make the row NaN
    for (row, want) in [
        ([f32::NEG_INFINITY, f32::NEG_INFINITY], [f32::NAN, f32::NAN]),
        ([f32::INFINITY, 1.0], [f32::NAN, f32::NAN]), // as PyTorch 2.13
        ([f32::NAN, 1.0], [f32::NAN, f32::NAN]),
    ] {
        let mut o = [0f32; 2];
        softmax(Src { base: row.as_ptr() as *const u8, layout: &contiguous(&[2]) }, Dst { base: o.as_mut_ptr() as *mut u8, layout: &contiguous(&[2]) }, DType::Float32, 0, false).unwrap();
        for i in 0..2 {
            assert!((o[i].is_nan() && want[i].is_nan()) || o[i] == want[i], "{row:?} -> {o:?}");
        }
    }
    // f64, f16 and a parallel-sized case
    let big: Vec<f64> = (0..64 * 1000).map(|i| ((i * 13) % 101) as f64 * 0.1).collect();
    let mut ob = vec![0f64; big.len()];
    let lb = contiguous(&[64, 1000]);
    softmax(Src { base: big.as_ptr() as *const u8, layout: &lb }, Dst { base: ob.as_mut_ptr() as *mut u8, layout: &lb }, DType::Float64, 1, false).unwrap();
    for r in 0..64 {
        let w = naive_softmax(&big[r * 1000..(r + 1) * 1000], false);
        for c in 0..1000 {
            assert!(close(ob[r * 1000 + c], w[c], 1e-13));
        }
    }
    let h: Vec<half::f16> = (0..6).map(|i| half::f16::from_f32(i as f32 * 0.5)).collect();
    let mut oh = vec![half::f16::ZERO; 6];
    let lh = contiguous(&[2, 3]);
    softmax(Src { base: h.as_ptr() as *const u8, layout: &lh }, Dst { base: oh.as_mut_ptr() as *mut u8, layout: &lh }, DType::Float16, 0, true).unwrap();
    let w = naive_softmax(&[0.0, 1.5], true);
    assert!((oh[0].to_f64() - w[0]).abs() < 2e-3 && (oh[3].to_f64() - w[1]).abs() < 2e-3);
    assert!(softmax(Src { base: h.as_ptr() as *const u8, layout: &lh }, Dst { base: oh.as_mut_ptr() as *mut u8, layout: &lh }, DType::Int16, 0, true).is_err());
}

#[test]
fn cumsum_cumprod_along_every_dim() {
    let buf: Vec<f32> = (0..200).map(|i| ((i * 37) % 23) as f32 * 0.1 - 1.0).collect();
    let d64: Vec<f64> = buf.iter().map(|&x| x as f64).collect();
    for l in layouts_345() {
        for dim in 0..3 {
            for kind in [CumKind::Sum, CumKind::Prod] {
                let ol = lay(&[3, 4, 5], &[1, 3, 12], 0); // strided output too
                let mut out = vec![0f64; 60];
                cumulative(kind, Src { base: buf.as_ptr() as *const u8, layout: &l }, DType::Float32, dim, Dst { base: out.as_mut_ptr() as *mut u8, layout: &ol }, DType::Float64).unwrap();
                let dims: Vec<bool> = (0..3).map(|d| d == dim).collect();
                let rows = groups(&d64, &l, &dims);
                let orows = groups(&out, &ol, &dims);
                for (r, o) in rows.iter().zip(&orows) {
                    let mut acc = if kind == CumKind::Sum { 0.0 } else { 1.0 };
                    for (x, g) in r.iter().zip(o) {
                        acc = if kind == CumKind::Sum { acc + x } else { acc * x };
                        assert!(close(*g, acc, 1e-12), "{kind:?} dim {dim}");
                    }
                }
            }
        }
    }
    let ints: Vec<i32> = vec![i32::MAX, 1, 2];
    let mut o = [0i64; 3];
    cumulative(CumKind::Sum, Src { base: ints.as_ptr() as *const u8, layout: &contiguous(&[3]) }, DType::Int32, 0, Dst { base: o.as_mut_ptr() as *mut u8, layout: &contiguous(&[3]) }, DType::Int64).unwrap();
    assert_eq!(o, [i32::MAX as i64, i32::MAX as i64 + 1, i32::MAX as i64 + 3]);
    // empty and 0-d
    cumulative(CumKind::Sum, Src { base: ints.as_ptr() as *const u8, layout: &lay(&[0], &[1], 0) }, DType::Int32, 0, Dst { base: o.as_mut_ptr() as *mut u8, layout: &lay(&[0], &[1], 0) }, DType::Int64).unwrap();
    cumulative(CumKind::Prod, Src { base: ints.as_ptr() as *const u8, layout: &lay(&[], &[], 2) }, DType::Int32, 0, Dst { base: o.as_mut_ptr() as *mut u8, layout: &lay(&[], &[], 0) }, DType::Int64).unwrap();
    assert_eq!(o[0], 2);
}

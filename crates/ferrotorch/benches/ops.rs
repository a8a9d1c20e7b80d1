//! Criterion benchmarks of the op layer: dispatch-only paths (tiny tensors,
//! views) and the kernels behind the Python comparison table.
//!
//! `cargo bench -p ferrotorch --bench ops` (add `-- <filter>` to pick rows);
//! thread count follows `RAYON_NUM_THREADS`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ferrotorch::ops::arith::{unary, UnaryOp};
use ferrotorch::ops::conv::ConvParams;
use ferrotorch::{DType, Tensor};
use std::hint::black_box;

fn randn(shape: &[usize], dtype: DType) -> Tensor {
    Tensor::randn(shape, dtype, None).expect("randn of a valid shape")
}

/// Per-op overhead: the cost of entering the op layer with tiny operands.
fn dispatch(c: &mut Criterion) {
    let mut g = c.benchmark_group("dispatch");
    let (x, y) = (randn(&[1], DType::Float32), randn(&[1], DType::Float32));
    g.bench_function("add 1 elem", |b| b.iter(|| black_box(x.add(&y).unwrap())));
    let (x, y) = (randn(&[100], DType::Float32), randn(&[100], DType::Float32));
    g.bench_function("add 100 elem", |b| b.iter(|| black_box(x.add(&y).unwrap())));
    g.bench_function("sum 100 elem", |b| b.iter(|| black_box(x.sum().unwrap())));
    let m = randn(&[4, 4], DType::Float32);
    g.bench_function("view(-1) 4x4", |b| b.iter(|| black_box(m.view(&[-1]).unwrap())));
    g.bench_function("select(0, 0) 4x4", |b| b.iter(|| black_box(m.select(0, 0).unwrap())));
    g.bench_function("from_vec 3 elem", |b| b.iter(|| black_box(Tensor::from_vec(vec![1f32, 2., 3.], &[3]).unwrap())));
    g.finish();
}

/// Bandwidth-bound kernels on 16M float32 elements.
fn bandwidth(c: &mut Criterion) {
    let n = 16 << 20;
    let mut g = c.benchmark_group("bandwidth");
    g.sample_size(10);
    let (x, y) = (randn(&[n], DType::Float32), randn(&[n], DType::Float32));
    g.throughput(Throughput::Bytes(12 * n as u64));
    g.bench_function("add 16M f32", |b| b.iter(|| black_box(x.add(&y).unwrap())));
    g.throughput(Throughput::Bytes(8 * n as u64));
    g.bench_function("relu 16M f32", |b| b.iter(|| black_box(unary(&x, UnaryOp::Relu).unwrap())));
    g.bench_function("exp 16M f32", |b| b.iter(|| black_box(unary(&x, UnaryOp::Exp).unwrap())));
    g.throughput(Throughput::Bytes(4 * n as u64));
    g.bench_function("sum 16M f32", |b| b.iter(|| black_box(x.sum().unwrap())));
    let s = randn(&[4096, 4096], DType::Float32);
    g.throughput(Throughput::Bytes(8 * 4096 * 4096));
    g.bench_function("softmax 4096x4096 f32", |b| b.iter(|| black_box(s.softmax(-1, None, false).unwrap())));
    g.bench_function("t().contiguous() 4096^2 f32", |b| b.iter(|| black_box(s.t().unwrap().contiguous().unwrap())));
    g.finish();
}

/// Compute-bound kernels: matmul, bmm, conv2d.
fn compute(c: &mut Criterion) {
    let mut g = c.benchmark_group("compute");
    g.sample_size(10);
    for n in [256usize, 512, 1024] {
        let (a, b_) = (randn(&[n, n], DType::Float32), randn(&[n, n], DType::Float32));
        g.throughput(Throughput::Elements(2 * (n as u64).pow(3)));
        g.bench_with_input(BenchmarkId::new("matmul f32", n), &n, |b, _| b.iter(|| black_box(a.matmul(&b_).unwrap())));
    }
    let (a, b_) = (randn(&[1024, 1024], DType::Float64), randn(&[1024, 1024], DType::Float64));
    g.bench_function("matmul f64 1024", |b| b.iter(|| black_box(a.matmul(&b_).unwrap())));
    let (a, b_) = (randn(&[64, 128, 128], DType::Float32), randn(&[64, 128, 128], DType::Float32));
    g.bench_function("bmm 64x128x128 f32", |b| b.iter(|| black_box(a.bmm(&b_).unwrap())));
    let (x, w) = (randn(&[16, 64, 56, 56], DType::Float32), randn(&[64, 64, 3, 3], DType::Float32));
    let p = ConvParams::default().padding(&[1]);
    g.bench_function("conv2d 16x64x56x56 3x3 pad1", |b| b.iter(|| black_box(x.conv2d(&w, None, &p).unwrap())));
    g.finish();
}

criterion_group!(benches, dispatch, bandwidth, compute);
criterion_main!(benches);

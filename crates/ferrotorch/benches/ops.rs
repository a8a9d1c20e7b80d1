//! Criterion benchmarks of the op layer: dispatch-only paths (tiny tensors,
//! views), the kernels behind the Python comparison table, and the inference
//! latency of whole models (the example CNN and a transformer block).
//!
//! `cargo bench -p ferrotorch --bench ops` (add `-- <filter>` to pick rows);
//! thread count follows `RAYON_NUM_THREADS`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ferrotorch::ops::arith::{unary, UnaryOp};
use ferrotorch::ops::conv::ConvParams;
use ferrotorch::{nn, DType, Tensor};
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

/// The CNN of examples/serve_cnn.rs (layer for layer).
fn example_cnn() -> nn::Sequential {
    let conv = |i, o| nn::Conv2d::conv2d(i, o, [3, 3], nn::ConvOptions::new(2).padding(&[1, 1])).unwrap();
    nn::Sequential::new()
        .push(conv(1, 8))
        .push(nn::ReLU)
        .push(nn::MaxPool2d::new([2, 2]))
        .push(conv(8, 16))
        .push(nn::ReLU)
        .push(nn::MaxPool2d::new([2, 2]))
        .push(nn::Flatten::default())
        .push(nn::Linear::new(256, 4, true).unwrap())
}

/// A pre-norm transformer encoder block: x + attn(ln(x)), then x + mlp(ln(x)).
struct Block {
    ln1: nn::LayerNorm,
    attn: nn::MultiheadAttention,
    ln2: nn::LayerNorm,
    mlp: nn::Sequential,
}

impl Block {
    fn new(d: usize, heads: usize) -> Block {
        Block {
            ln1: nn::LayerNorm::new(&[d], 1e-5, true, true).unwrap(),
            attn: nn::MultiheadAttention::new(d, heads, true, true).unwrap(),
            ln2: nn::LayerNorm::new(&[d], 1e-5, true, true).unwrap(),
            mlp: nn::Sequential::new().push(nn::Linear::new(d, 4 * d, true).unwrap()).push(nn::GELU::default()).push(nn::Linear::new(4 * d, d, true).unwrap()),
        }
    }
}

impl nn::Module for Block {
    fn forward(&self, x: &Tensor) -> ferrotorch::Result<Tensor> {
        let x = x.add(&self.attn.forward(&self.ln1.forward(x)?)?)?;
        x.add(&self.mlp.forward(&self.ln2.forward(&x)?)?)
    }
}

/// Inference latency of whole models, with no graph recorded.
fn models(c: &mut Criterion) {
    use nn::Module;
    let mut g = c.benchmark_group("models");
    g.sample_size(20);
    let _no_grad = nn::no_grad();
    let cnn = example_cnn();
    cnn.eval();
    for batch in [1usize, 32] {
        let x = randn(&[batch, 1, 16, 16], DType::Float32);
        g.bench_with_input(BenchmarkId::new("example CNN 1x16x16", batch), &batch, |b, _| b.iter(|| black_box(cnn.forward(&x).unwrap())));
    }
    let block = Block::new(128, 4);
    for batch in [1usize, 32] {
        let x = randn(&[batch, 32, 128], DType::Float32);
        g.bench_with_input(BenchmarkId::new("transformer block d128 h4 seq32", batch), &batch, |b, _| {
            b.iter(|| black_box(block.forward(&x).unwrap()))
        });
    }
    g.finish();
}

criterion_group!(benches, dispatch, bandwidth, compute, models);
criterion_main!(benches);

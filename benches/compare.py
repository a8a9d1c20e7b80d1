"""Side-by-side benchmark: ferrotorch vs PyTorch vs NumPy, in one process run.

Every workload runs on each library in interleaved rounds (ferrotorch, torch,
numpy, ferrotorch, ...), so drift on a shared machine hits all of them alike;
the table reports medians and the ratios ferrotorch/PyTorch and
ferrotorch/NumPy (lower is better). Bandwidth-bound rows also report GB/s and
the fraction of the machine's copy bandwidth measured in the same run.

Usage (after ``pip install .`` so ferrotorch is a release build)::

    python benches/compare.py                    # 1 thread and all cores
    python benches/compare.py --threads 1 --quick
    python benches/compare.py --json out.json
    python benches/compare.py --suite training   # only the training-step and DataLoader rows

The ``training`` suite times whole training steps (zero_grad, forward, loss,
backward, ``Adam.step``) of an MLP 784-512-512-10 (batch 128), a 2-layer LSTM
(hidden 256, seq 64, batch 32) and a transformer encoder layer (d=256, 4 heads,
seq 128, batch 16), each built by its own library from the same NumPy inputs,
and the batches per second of a ``DataLoader`` with 2 persistent workers over
the same dataset.

Thread counts are fixed per run before any library is imported
(``RAYON_NUM_THREADS`` for ferrotorch, ``torch.set_num_threads`` and the BLAS
variables for PyTorch/NumPy); with no ``--threads`` the script re-runs itself
once per setting.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

MB = 1 << 20


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=None, help="thread count (default: run 1 and all cores)")
    p.add_argument("--quick", action="store_true", help="fewer rounds and smaller big workloads")
    default_json = os.path.join(os.path.dirname(os.path.abspath(__file__)), "compare.json")
    p.add_argument("--json", default=default_json, help="where to write the results (default: benches/compare.json)")
    p.add_argument("--only", default=None, help="comma-separated substrings of workload names to run")
    p.add_argument("--suite", choices=("all", "core", "training"), default="all",
                   help="core: tensor ops; training: training steps and DataLoader throughput (default: all)")
    return p.parse_args(argv)


def _set_threads_env(n):
    for var in ("RAYON_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(n)


# --------------------------------------------------------------------------
# timing

def _time_once(fn, inner):
    t0 = time.perf_counter()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - t0) / inner


def _calibrate(fn, target_s):
    """Inner repetitions so that one sample lasts about ``target_s``."""
    fn()
    inner = 1
    while True:
        t = _time_once(fn, inner)
        if t * inner >= target_s or inner >= 1 << 20:
            return inner
        inner *= 4 if t * inner < target_s / 8 else 2


def measure(cases, rounds, target_s):
    """Median seconds per call for each ``(lib, fn)`` in ``cases``, interleaved."""
    inners = {lib: _calibrate(fn, target_s) for lib, fn in cases}
    samples = {lib: [] for lib, _ in cases}
    for _ in range(rounds):
        for lib, fn in cases:
            samples[lib].append(_time_once(fn, inners[lib]))
    return {lib: statistics.median(s) for lib, s in samples.items()}


# --------------------------------------------------------------------------
# workloads: name -> (kind, bytes moved or flops, {lib: setup() -> fn})

def workloads(quick, suite="all"):
    w = {}
    if suite in ("all", "core"):
        w.update(core_workloads(quick))
    if suite in ("all", "training"):
        w.update(training_workloads(quick))
    return w


def core_workloads(quick):
    import numpy as np

    big = (4 << 20) if quick else (16 << 20)
    side = 2048 if quick else 4096
    rng = np.random.default_rng(0)

    def arr(*shape, dtype="float32"):
        return rng.standard_normal(shape).astype(dtype)

    def per_lib(make):
        """``make(lib_module, from_numpy)`` -> fn, for the tensor libraries."""
        return make

    w = {}

    def add(name, kind, amount, tensor_fn, numpy_fn=None):
        w[name] = (kind, amount, tensor_fn, numpy_fn)

    # per-op overhead on tiny tensors
    a1, b1 = arr(1), arr(1)
    a100, b100 = arr(100), arr(100)
    m = arr(4, 4)
    add("overhead: x + y (1 elem)", "overhead", None,
        lambda T, f: (lambda x, y: lambda: x + y)(f(a1), f(b1)), lambda: (lambda x, y: lambda: x + y)(a1, b1))
    add("overhead: x + y (100 elem)", "overhead", None,
        lambda T, f: (lambda x, y: lambda: x + y)(f(a100), f(b100)), lambda: (lambda x, y: lambda: x + y)(a100, b100))
    add("overhead: x.sum() (100 elem)", "overhead", None,
        lambda T, f: (lambda x: lambda: x.sum())(f(a100)), lambda: (lambda x: lambda: x.sum())(a100))
    add("overhead: x.sin() (100 elem)", "overhead", None,
        lambda T, f: (lambda x: lambda: x.sin())(f(a100)), lambda: (lambda x: lambda: np.sin(x))(a100))
    add("overhead: x.view(-1) (4x4)", "overhead", None,
        lambda T, f: (lambda x: lambda: x.view(-1))(f(m)), lambda: (lambda x: lambda: x.reshape(-1))(m))
    add("overhead: x[0] (4x4)", "overhead", None,
        lambda T, f: (lambda x: lambda: x[0])(f(m)), lambda: (lambda x: lambda: x[0])(m))
    add("overhead: tensor([1., 2., 3.])", "overhead", None,
        lambda T, f: lambda: T.tensor([1.0, 2.0, 3.0]), lambda: lambda: np.array([1.0, 2.0, 3.0], dtype=np.float32))

    # bandwidth-bound elementwise and reductions (bytes = read + written)
    xb, yb = arr(big), arr(big)
    add(f"add {big // MB}M f32", "bandwidth", 12 * big,
        lambda T, f: (lambda x, y: lambda: x + y)(f(xb), f(yb)), lambda: (lambda x, y: lambda: x + y)(xb, yb))
    # the out= form writes into an existing tensor: no allocation, no extra copy
    add(f"add(a, b, out=c) {big // MB}M f32", "bandwidth", 12 * big,
        lambda T, f: (lambda x, y, z: lambda: T.add(x, y, out=z))(f(xb), f(yb), f(np.empty_like(xb))),
        lambda: (lambda x, y, z: lambda: np.add(x, y, out=z))(xb, yb, np.empty_like(xb)))
    add(f"relu {big // MB}M f32", "bandwidth", 8 * big,
        lambda T, f: (lambda x: lambda: T.relu(x))(f(xb)), lambda: (lambda x: lambda: np.maximum(x, 0))(xb))
    add(f"exp {big // MB}M f32", "bandwidth", 8 * big,
        lambda T, f: (lambda x: lambda: T.exp(x))(f(xb)), lambda: (lambda x: lambda: np.exp(x))(xb))
    add(f"sum {big // MB}M f32", "bandwidth", 4 * big,
        lambda T, f: (lambda x: lambda: x.sum())(f(xb)), lambda: (lambda x: lambda: x.sum())(xb))
    xs = arr(side, side)
    # reductions over the inner and the outer dim of a row-major matrix
    add(f"sum dim=1 ({side}, {side}) f32", "bandwidth", 4 * side * side,
        lambda T, f: (lambda x: lambda: x.sum(1))(f(xs)), lambda: (lambda x: lambda: x.sum(1))(xs))
    add(f"sum dim=0 ({side}, {side}) f32", "bandwidth", 4 * side * side,
        lambda T, f: (lambda x: lambda: x.sum(0))(f(xs)), lambda: (lambda x: lambda: x.sum(0))(xs))
    add(f"amax dim=0 ({side}, {side}) f32", "bandwidth", 4 * side * side,
        lambda T, f: (lambda x: lambda: x.amax(0))(f(xs)), lambda: (lambda x: lambda: x.max(0))(xs))
    add(f"amax dim=1 ({side}, {side}) f32", "bandwidth", 4 * side * side,
        lambda T, f: (lambda x: lambda: x.amax(1))(f(xs)), lambda: (lambda x: lambda: x.max(1))(xs))
    add(f"cumsum dim=1 ({side}, {side}) f32", "bandwidth", 8 * side * side,
        lambda T, f: (lambda x: lambda: x.cumsum(1))(f(xs)), lambda: (lambda x: lambda: x.cumsum(1))(xs))

    # the other reductions over each dim, forward (bytes: the input read) and
    # forward+backward; prod reads values near 1 so 4096 factors stay finite
    xp = (1.0 + 0.01 * arr(side, side)).astype("float32")
    red_np = {"prod": lambda x, d: x.prod(d), "var": lambda x, d: x.var(d, ddof=1),
              "std": lambda x, d: x.std(d, ddof=1), "logsumexp": None}

    def red_case(op, d, backward):
        src = xp if op == "prod" else xs

        def make(T, f):
            x = f(src).requires_grad_(backward)
            fn = (lambda: T.logsumexp(x, d)) if op == "logsumexp" else (lambda: getattr(x, op)(d))
            if not backward:
                return fn

            def step():
                fn().sum().backward()
            return step
        return make

    for op in ("prod", "var", "std", "logsumexp"):
        for d in (1, 0):
            npf = red_np[op]
            npfn = None if npf is None else (lambda x, d, npf: lambda: (lambda: npf(x, d)))(xp if op == "prod" else xs, d, npf)
            add(f"{op} dim={d} ({side}, {side}) f32 fwd", "bandwidth", 4 * side * side, red_case(op, d, False), npfn)
            add(f"{op} dim={d} ({side}, {side}) f32 fwd+bwd", "nn", None, red_case(op, d, True))

    def np_softmax(x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    add(f"softmax ({side}, {side}) f32 dim=-1", "bandwidth", 8 * side * side,
        lambda T, f: (lambda x: lambda: T.softmax(x, -1))(f(xs)), lambda: (lambda x: lambda: np_softmax(x))(xs))
    add(f"x.t().contiguous() {side}^2 f32", "bandwidth", 8 * side * side,
        lambda T, f: (lambda x: lambda: x.t().contiguous())(f(xs)), lambda: (lambda x: lambda: np.ascontiguousarray(x.T))(xs))

    # compute-bound
    sizes = [256, 512, 1024] + ([] if quick else [2048])
    for n in sizes:
        a, b = arr(n, n), arr(n, n)
        add(f"matmul f32 {n}", "flops", 2 * n ** 3,
            (lambda a, b: lambda T, f: (lambda x, y: lambda: x @ y)(f(a), f(b)))(a, b),
            (lambda a, b: lambda: (lambda x, y: lambda: x @ y)(a, b))(a, b))
    a64, b64 = arr(1024, 1024, dtype="float64"), arr(1024, 1024, dtype="float64")
    add("matmul f64 1024", "flops", 2 * 1024 ** 3,
        lambda T, f: (lambda x, y: lambda: x @ y)(f(a64), f(b64)), lambda: (lambda x, y: lambda: x @ y)(a64, b64))
    # dense linear algebra at 512 (issue 11's rows): PyTorch calls LAPACK (MKL/OpenBLAS), ours faer
    # (solve, inv, eigh) and the one-sided Jacobi SVD; amount = the nominal LU/eigen flop counts
    la = arr(512, 512, dtype="float64")
    la_spd = la @ la.T + 512 * np.eye(512)
    lb = arr(512, 64, dtype="float64")
    for op, amount in (("solve", 2 * 512 ** 3 // 3 + 2 * 64 * 512 ** 2), ("inv", 2 * 512 ** 3),
                       ("eigh", 9 * 512 ** 3), ("svd", 12 * 512 ** 3)):
        def make(T, f, op=op):
            A = f(la_spd if op == "eigh" else la)
            if op == "solve":
                B = f(lb)
                return lambda: T.linalg.solve(A, B)
            return lambda: getattr(T.linalg, op)(A)
        np_fn = {"solve": lambda: (lambda: np.linalg.solve(la, lb)), "inv": lambda: (lambda: np.linalg.inv(la)),
                 "eigh": lambda: (lambda: np.linalg.eigh(la_spd)), "svd": lambda: (lambda: np.linalg.svd(la))}[op]
        add(f"linalg.{op} 512 f64", "flops", amount, make, np_fn)
    # Fourier transforms (issue 11's rows): PyTorch calls MKL (pocketfft where it has no MKL), ours
    # rustfft/realfft; amount = the nominal 5 N log2 N flops of a complex FFT (half that for real input)
    sig, img = arr(1 << 20), arr(1024, 1024)
    add("fft.rfft 2^20 f32", "flops", 5 * (1 << 20) * 20 // 2,
        lambda T, f: (lambda x: lambda: T.fft.rfft(x))(f(sig)), lambda: (lambda: np.fft.rfft(sig)))
    add("fft.fft2 1024² f32", "flops", 5 * (1 << 20) * 20,
        lambda T, f: (lambda x: lambda: T.fft.fft2(x))(f(img)), lambda: (lambda: np.fft.fft2(img)))
    # pairwise Euclidean distances (issue 11's row): the default compute_mode takes the matrix-product
    # path at these sizes in both libraries; amount = the gemm's 2 P R M flops
    cd1, cd2 = arr(4096, 128), arr(4096, 128)
    add("cdist (4096, 128) x (4096, 128) f32", "flops", 2 * 4096 * 4096 * 128,
        lambda T, f: (lambda x, y: lambda: T.cdist(x, y))(f(cd1), f(cd2)), None)
    ba, bb = arr(64, 128, 128), arr(64, 128, 128)
    add("bmm (64, 128, 128) f32", "flops", 2 * 64 * 128 ** 3,
        lambda T, f: (lambda x, y: lambda: T.bmm(x, y))(f(ba), f(bb)), lambda: (lambda x, y: lambda: x @ y)(ba, bb))
    nimg = 4 if quick else 16
    cx, cw = arr(nimg, 64, 56, 56), arr(64, 64, 3, 3)
    add(f"conv2d fwd ({nimg}x64x56x56, 3x3, pad 1) f32", "flops", 2 * nimg * 64 * 64 * 9 * 56 * 56,
        lambda T, f: (lambda x, w_: lambda: T.nn.functional.conv2d(x, w_, padding=1))(f(cx), f(cw)), None)

    # the other convolutions of the one N-d op: 1-d over long signals, 3-d over
    # a video-sized volume, and the 2x upsampling transposed conv of a decoder;
    # the backward computes input, weight and bias gradients
    def conv_case(name, x_np, w_np, kwargs, backward):
        b_np = arr(w_np.shape[1] if name.startswith("conv_transpose") else w_np.shape[0])

        def make(T, f):
            x, w_, b_ = (f(v).requires_grad_(backward) for v in (x_np, w_np, b_np))
            fn = getattr(T.nn.functional, name)
            if not backward:
                return lambda: fn(x, w_, b_, **kwargs)

            def step():
                fn(x, w_, b_, **kwargs).sum().backward()
            return step
        return make

    n1 = 4 if quick else 16
    c1x, c1w = arr(n1, 64, 1024), arr(64, 64, 3)
    n3 = 2 if quick else 4
    c3x, c3w = arr(n3, 32, 16, 28, 28), arr(32, 32, 3, 3, 3)
    ctx, ctw = arr(nimg, 64, 28, 28), arr(64, 32, 4, 4)
    for label, name, x_np, w_np, kwargs, flops in (
        (f"conv1d ({n1}x64x1024, k3, pad 1) f32", "conv1d", c1x, c1w, {"padding": 1}, 2 * n1 * 64 * 64 * 3 * 1024),
        (f"conv3d ({n3}x32x16x28x28, 3x3x3, pad 1) f32", "conv3d", c3x, c3w, {"padding": 1},
         2 * n3 * 32 * 32 * 27 * 16 * 28 * 28),
        (f"conv_transpose2d ({nimg}x64x28x28, 4x4/2, pad 1) f32", "conv_transpose2d", ctx, ctw,
         {"stride": 2, "padding": 1}, 2 * nimg * 64 * 32 * 16 * 28 * 28),
    ):
        add(f"{label} fwd", "flops", flops, conv_case(name, x_np, w_np, kwargs, False))
        add(f"{label} fwd+bwd", "nn", None, conv_case(name, x_np, w_np, kwargs, True))
    add(f"conv2d ({nimg}x64x56x56, 3x3, pad 1) f32 fwd+bwd", "nn", None,
        conv_case("conv2d", cx, cw, {"padding": 1}, True))

    # layer_norm over rows of 1024 (a transformer's hidden size), with weight
    # and bias; the backward computes all three gradients
    lrows = 1024 if quick else 4096
    lx, lw, lbias = arr(lrows, 1024), arr(1024), arr(1024)

    def layer_norm_case(backward):
        def make(T, f):
            x, w_, b_ = (f(v).requires_grad_(backward) for v in (lx, lw, lbias))
            F = T.nn.functional
            if not backward:
                return lambda: F.layer_norm(x, (1024,), w_, b_)

            def step():
                F.layer_norm(x, (1024,), w_, b_).sum().backward()
            return step
        return make

    add(f"layer_norm ({lrows}, 1024) f32 fwd", "bandwidth", 8 * lrows * 1024, layer_norm_case(False))
    add(f"layer_norm ({lrows}, 1024) f32 fwd+bwd", "nn", None, layer_norm_case(True))

    # pooling over a ResNet-stem-sized activation: max 3x3 stride 2 pad 1 (as
    # ResNet's stem) and avg 2x2 stride 2; the backward scatters the gradient
    pimg = 8 if quick else 32
    px = arr(pimg, 64, 56, 56)

    def pool_case(kind, backward):
        def make(T, f):
            x = f(px).requires_grad_(backward)
            F = T.nn.functional
            pool = (lambda: F.max_pool2d(x, 3, 2, 1)) if kind == "max" else (lambda: F.avg_pool2d(x, 2))
            if not backward:
                return pool

            def step():
                pool().sum().backward()
            return step
        return make

    # bytes: the input read, the quarter-size output written (plus int64 indices for max)
    for kind, label, nbytes in (("max", "max_pool2d 3x3/2 pad 1", 7 * px.size), ("avg", "avg_pool2d 2x2/2", 5 * px.size)):
        add(f"{label} ({pimg}, 64, 56, 56) f32 fwd", "bandwidth", nbytes, pool_case(kind, False))
        add(f"{label} ({pimg}, 64, 56, 56) f32 fwd+bwd", "nn", None, pool_case(kind, True))

    # batch_norm in training (batch statistics and running-stat updates) and
    # group_norm (32 groups) over the same activation, with weight and bias;
    # the backward computes all three gradients
    def chan_norm_case(kind, backward):
        def make(T, f):
            x = f(px).requires_grad_(backward)
            w_, b_ = (f(v).requires_grad_(backward) for v in (arr(64), arr(64)))
            rm, rv = T.zeros(64), T.ones(64)
            F = T.nn.functional
            norm = ((lambda: F.batch_norm(x, rm, rv, w_, b_, training=True)) if kind == "batch"
                    else (lambda: F.group_norm(x, 32, w_, b_)))
            if not backward:
                return norm

            def step():
                norm().sum().backward()
            return step
        return make

    for kind in ("batch", "group"):
        # bytes: the input read twice (statistics, then the output) and the output written
        add(f"{kind}_norm ({pimg}, 64, 56, 56) f32 train fwd" if kind == "batch" else
            f"group_norm ({pimg}, 64, 56, 56) 32 groups f32 fwd", "bandwidth", 12 * px.size, chan_norm_case(kind, False))
        add(f"{kind}_norm ({pimg}, 64, 56, 56) f32 train fwd+bwd" if kind == "batch" else
            f"group_norm ({pimg}, 64, 56, 56) 32 groups f32 fwd+bwd", "nn", None, chan_norm_case(kind, True))
    return w


# --------------------------------------------------------------------------
# training steps and data loading: each library builds the model with its own
# default initialisation (timing does not depend on the values) and trains on the
# same NumPy batch; the DataLoader rows read the same arrays.

class PySamples:
    """Map-style dataset whose ``__getitem__`` runs Python per sample (decoding-like
    work). Module level and holding the library by name: it must pickle to reach the
    worker processes."""

    def __init__(self, libname, images, labels):
        self.libname, self.images, self.labels = libname, images, labels

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        import importlib
        lib = importlib.import_module(self.libname)
        return lib.from_numpy((self.images[i] - 0.5) * 2.0), int(self.labels[i])


def _train_step(T, model, inputs, loss_of):
    """One Adam training step of ``model`` on ``inputs`` as a zero-argument function."""
    opt = T.optim.Adam(model.parameters(), lr=1e-4)
    model.train()

    def step():
        opt.zero_grad()
        loss_of(model, *inputs).backward()
        opt.step()
    return step


def _loader_batches(T, dataset):
    """Next batch of a shuffled batch-64 DataLoader with 2 persistent workers, round after round."""
    import itertools
    loader = T.utils.data.DataLoader(dataset, batch_size=64, shuffle=True, num_workers=2, persistent_workers=True)
    batches = itertools.chain.from_iterable(itertools.repeat(loader))
    next(batches)  # workers started and the first prefetch in flight before timing
    return lambda: next(batches)


def training_workloads(quick):
    import numpy as np
    rng = np.random.default_rng(0)
    w = {}

    def add(name, kind, amount, tensor_fn):
        w[name] = (kind, amount, tensor_fn, None)

    def mlp(T, f):
        nn = T.nn
        T.manual_seed(0)
        model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
        return _train_step(T, model, (f(x_mlp), f(y_mlp)), lambda m, x, y: nn.functional.cross_entropy(m(x), y))

    x_mlp = rng.standard_normal((128, 784)).astype(np.float32)
    y_mlp = rng.integers(0, 10, 128)
    add("train MLP 784-512-512-10 b128 Adam", "train", None, mlp)

    def lstm(T, f):
        nn = T.nn
        T.manual_seed(0)

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm = nn.LSTM(128, 256, num_layers=2, batch_first=True)
                self.head = nn.Linear(256, 10)

            def forward(self, x):
                return self.head(self.lstm(x)[0][:, -1])
        return _train_step(T, Net(), (f(x_lstm), f(y_lstm)), lambda m, x, y: nn.functional.cross_entropy(m(x), y))

    x_lstm = rng.standard_normal((32, 64, 128)).astype(np.float32)
    y_lstm = rng.integers(0, 10, 32)
    add("train LSTM 2x256 in128 seq64 b32 Adam", "train", None, lstm)

    def encoder(T, f):
        nn = T.nn
        T.manual_seed(0)
        layer = nn.TransformerEncoderLayer(256, 4, batch_first=True)  # dim_feedforward 2048, dropout 0.1
        return _train_step(T, layer, (f(x_enc), f(t_enc)), lambda m, x, t: nn.functional.mse_loss(m(x), t))

    x_enc = rng.standard_normal((16, 128, 256)).astype(np.float32)
    t_enc = rng.standard_normal((16, 128, 256)).astype(np.float32)
    add("train encoder layer d256 h4 s128 b16 Adam", "train", None, encoder)

    n = 4096 if quick else 10000
    images = rng.standard_normal((n, 3, 32, 32)).astype(np.float32)
    labels = rng.integers(0, 10, n)
    add("DataLoader 2 workers TensorDataset b64", "loader", None,
        lambda T, f: _loader_batches(T, T.utils.data.TensorDataset(f(images), f(labels))))
    add("DataLoader 2 workers Python getitem b64", "loader", None,
        lambda T, f: _loader_batches(T, PySamples(T.__name__, images, labels)))
    return w


def copy_bandwidth(libs):
    """Best copy bandwidth (GB/s, read + write) seen on 64 MiB buffers."""
    import numpy as np
    src = np.ones(16 << 20, dtype=np.float32)
    best = 0.0
    cases = [("numpy", (lambda d: lambda: np.copyto(d, src))(np.empty_like(src)))]
    for name, (T, f) in libs.items():
        s, d = f(src), f(np.empty_like(src))
        cases.append((name, (lambda s, d: lambda: d.copy_(s))(s, d)))
    for lib, t in measure(cases, rounds=7, target_s=0.05).items():
        best = max(best, 2 * src.nbytes / t / 1e9)
    return best


def run_one(args):
    import numpy as np
    import ferrotorch
    libs = {"ferrotorch": (ferrotorch, ferrotorch.from_numpy)}
    try:
        import torch
        torch.set_num_threads(args.threads)
        libs["torch"] = (torch, torch.from_numpy)
    except ImportError:
        print("PyTorch not installed: ferrotorch/PyTorch ratios are omitted", file=sys.stderr)
    rounds_small, rounds_big = (7, 3) if args.quick else (15, 5)
    # The copy bandwidth only scales the bandwidth rows, which the training suite has none of.
    bw = copy_bandwidth(libs) if args.suite != "training" else None
    rows = []
    only = args.only.split(",") if args.only else None
    for name, (kind, amount, tensor_fn, numpy_fn) in workloads(args.quick, args.suite).items():
        if only and not any(o in name for o in only):
            continue
        cases = [(lib, tensor_fn(T, f)) for lib, (T, f) in libs.items()]
        if numpy_fn is not None:
            cases.append(("numpy", numpy_fn()))
        big = kind != "overhead"
        # A training step lasts up to a few hundred ms: samples of at least 0.5 s each.
        target = 0.5 if kind == "train" else 0.2 if big else 0.02
        med = measure(cases, rounds_big if big else rounds_small, target)
        row = {"workload": name, "kind": kind, "threads": args.threads, "median_s": med}
        ft = med["ferrotorch"]
        for peer in ("torch", "numpy"):
            if peer in med:
                row[f"ratio_vs_{peer}"] = ft / med[peer]
        if kind == "bandwidth":
            row["ferrotorch_GBps"] = amount / ft / 1e9
            row["fraction_of_copy_bw"] = row["ferrotorch_GBps"] / bw
        if kind == "flops":
            row["ferrotorch_GFLOPs"] = amount / ft / 1e9
        if kind == "loader":
            row["batches_per_s"] = {lib: 1 / t for lib, t in med.items()}
        rows.append(row)
        print_row(row)
    return {"threads": args.threads, "copy_bandwidth_GBps": bw, "rows": rows}


def fmt_t(s):
    if s is None:
        return "-"
    for unit, f in (("s", 1), ("ms", 1e3), ("us", 1e6), ("ns", 1e9)):
        if s * f >= 1:
            return f"{s * f:.3g} {unit}"
    return f"{s * 1e9:.3g} ns"


def print_header(threads, bw):
    print(f"\n== threads = {threads}; machine copy bandwidth {bw:.1f} GB/s ==")
    print(f"{'workload':44} {'ferrotorch':>11} {'torch':>11} {'numpy':>11} {'ft/torch':>9} {'ft/numpy':>9}  note")


def print_row(r):
    med = r["median_s"]
    note = ""
    if "ferrotorch_GBps" in r:
        note = f"{r['ferrotorch_GBps']:.1f} GB/s ({100 * r['fraction_of_copy_bw']:.0f}% of copy)"
    if "ferrotorch_GFLOPs" in r:
        note = f"{r['ferrotorch_GFLOPs']:.1f} GFLOP/s"
    if "batches_per_s" in r:
        b = r["batches_per_s"]
        note = f"{b['ferrotorch']:.0f} batches/s" + (
            f" vs {b['torch']:.0f} ({100 * b['ferrotorch'] / b['torch']:.0f}% of PyTorch's rate)" if "torch" in b else "")
    rt = r.get("ratio_vs_torch")
    rn = r.get("ratio_vs_numpy")
    print(f"{r['workload']:44} {fmt_t(med.get('ferrotorch')):>11} {fmt_t(med.get('torch')):>11} "
          f"{fmt_t(med.get('numpy')):>11} {'-' if rt is None else f'{rt:.2f}':>9} "
          f"{'-' if rn is None else f'{rn:.2f}':>9}  {note}", flush=True)


def main():
    args = parse_args()
    if args.threads is None:
        results = []
        for n in (1, os.cpu_count() or 1):
            cmd = [sys.executable, __file__, "--threads", str(n), "--json", args.json + f".t{n}"]
            cmd += ["--quick"] if args.quick else []
            cmd += ["--only", args.only] if args.only else []
            cmd += ["--suite", args.suite]
            subprocess.run(cmd, check=True)
            with open(args.json + f".t{n}") as fh:
                results.append(json.load(fh))
            os.remove(args.json + f".t{n}")
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)
        print(f"\nwrote {args.json}")
        return
    _set_threads_env(args.threads)
    print(f"\n== threads = {args.threads} ==", flush=True)
    print(f"{'workload':44} {'ferrotorch':>11} {'torch':>11} {'numpy':>11} {'ft/torch':>9} {'ft/numpy':>9}  note")
    res = run_one(args)
    if res["copy_bandwidth_GBps"] is not None:
        print(f"machine copy bandwidth (best of numpy/torch/ferrotorch copy, 64 MiB): {res['copy_bandwidth_GBps']:.1f} GB/s")
    with open(args.json, "w") as fh:
        json.dump(res, fh, indent=1)


if __name__ == "__main__":
    main()

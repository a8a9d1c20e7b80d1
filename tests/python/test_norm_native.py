"""batch_norm, group_norm and instance_norm as native ops (Rust kernels,
`NativeBatchNormBackward0` / `NativeGroupNormBackward0`), compared with
PyTorch: outputs, the three gradients, running statistics after several
training steps, evaluation mode, 2-d to 5-d and non-contiguous inputs,
missing weight/bias, momentum=None in the modules, float64 tightly and
float32/bfloat16 with tolerances, finite-difference gradients, double
backward, node names and argument errors."""

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

F = ft.nn.functional
TF = torch.nn.functional

DT = {
    "float32": (ft.float32, torch.float32),
    "float64": (ft.float64, torch.float64),
    "bfloat16": (ft.bfloat16, torch.bfloat16),
}
TOL = {"float32": 1e-5, "float64": 1e-12, "bfloat16": 3e-2}
RNG = np.random.default_rng(11)


def pair(a, dtype="float64", requires_grad=False):
    fdt, tdt = DT[dtype]
    a = np.asarray(a)
    f = ft.tensor(a.tolist(), dtype=ft.float64).reshape(a.shape).to(fdt).requires_grad_(requires_grad)
    t = torch.tensor(np.asarray(a), dtype=torch.float64).to(tdt).requires_grad_(requires_grad)
    return f, t


def np_of(x):
    return np.array(x.detach().to(ft.float64).tolist()) if isinstance(x, ft.Tensor) else x.detach().double().numpy()


def close(a, b, tol):
    np.testing.assert_allclose(np_of(a), np_of(b), rtol=tol, atol=tol)


SHAPES = [(16, 4), (8, 3, 37), (4, 5, 6, 7), (2, 3, 4, 5, 3)]


@pytest.mark.parametrize("dtype", list(DT))
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", ["none", "weight", "both"])
def test_batch_norm_matches_torch(dtype, shape, training, affine):
    c = shape[1]
    x = RNG.standard_normal(shape) * 2 + 0.5
    fx, tx = pair(x, dtype, True)
    fw, tw = pair(RNG.standard_normal(c), dtype, True) if affine != "none" else (None, None)
    fb, tb = pair(RNG.standard_normal(c), dtype, True) if affine == "both" else (None, None)
    rm, rv = RNG.standard_normal(c), RNG.random(c) + 0.5
    frm, trm = pair(rm, dtype)
    frv, trv = pair(rv, dtype)
    fy = F.batch_norm(fx, frm, frv, fw, fb, training=training, momentum=0.2)
    ty = TF.batch_norm(tx, trm, trv, tw, tb, training=training, momentum=0.2)
    assert fy.dtype == DT[dtype][0] and tuple(fy.shape) == tuple(ty.shape)
    tol = TOL[dtype]
    close(fy, ty, tol * 10 if dtype == "float32" else tol)
    close(frm, trm, tol)
    close(frv, trv, tol)
    g = RNG.standard_normal(shape)
    fg, tg = pair(g, dtype)
    fy.backward(fg)
    ty.backward(tg)
    gtol = tol * 20 if dtype == "float32" else tol
    close(fx.grad, tx.grad, gtol)
    if fw is not None:
        close(fw.grad, tw.grad, gtol * 10)
    if fb is not None:
        close(fb.grad, tb.grad, gtol * 10)
    assert type(fy.grad_fn).__name__ == type(ty.grad_fn).__name__ == "NativeBatchNormBackward0"


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("view", ["transpose", "slice", "expand"])
def test_batch_norm_non_contiguous(dtype, view):
    base = RNG.standard_normal((6, 5, 8))

    def make(t):
        if view == "transpose":
            return t.transpose(0, 2)  # (8, 5, 6)
        if view == "slice":
            return t[:, :, ::2]
        return t[:, :, :1].expand(6, 5, 8)

    fb, tb = pair(base, dtype, True)
    fx, tx = make(fb), make(tb)
    c = fx.shape[1]
    frm, trm = pair(np.zeros(c), dtype)
    frv, trv = pair(np.ones(c), dtype)
    fy = F.batch_norm(fx, frm, frv, training=True)
    ty = TF.batch_norm(tx, trm, trv, training=True)
    tol = TOL[dtype] * 100
    close(fy, ty, tol)
    close(frm, trm, tol)
    close(frv, trv, tol)
    g = RNG.standard_normal(tuple(fx.shape))
    fg, tg = pair(g, dtype)
    fy.backward(fg)
    ty.backward(tg)
    close(fb.grad, tb.grad, tol)


def test_batch_norm_running_stats_over_steps_and_versions():
    frm, trm = pair(np.zeros(3))
    frv, trv = pair(np.ones(3))
    for step in range(5):
        x = RNG.standard_normal((7, 3, 4)) * (step + 1) + step
        fx, tx = pair(x)
        F.batch_norm(fx, frm, frv, training=True, momentum=0.3)
        TF.batch_norm(tx, trm, trv, training=True, momentum=0.3)
    close(frm, trm, 1e-12)
    close(frv, trv, 1e-12)
    # PyTorch updates running statistics through accessors: no version bump.
    assert frm._version == trm._version


@pytest.mark.parametrize("cls", ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"])
@pytest.mark.parametrize("momentum", [0.1, None])
def test_batch_norm_modules(cls, momentum):
    shape = {"BatchNorm1d": (6, 4, 5), "BatchNorm2d": (3, 4, 5, 6), "BatchNorm3d": (2, 4, 3, 4, 5)}[cls]
    fm = getattr(ft.nn, cls)(4, momentum=momentum).double()
    tm = getattr(torch.nn, cls)(4, momentum=momentum).double()
    for step in range(4):
        x = RNG.standard_normal(shape) + step
        fx, tx = pair(x)
        close(fm(fx), tm(tx), 1e-12)
    close(fm.running_mean, tm.running_mean, 1e-12)
    close(fm.running_var, tm.running_var, 1e-12)
    assert int(fm.num_batches_tracked) == int(tm.num_batches_tracked) == 4
    fm.eval()
    tm.eval()
    x = RNG.standard_normal(shape)
    fx, tx = pair(x, "float64", True)
    fy, ty = fm(fx), tm(tx)
    close(fy, ty, 1e-12)
    fy.sum().backward()
    ty.sum().backward()
    close(fx.grad, tx.grad, 1e-12)
    close(fm.weight.grad, tm.weight.grad, 1e-12)


def test_batch_norm_without_running_stats_module():
    fm = ft.nn.BatchNorm2d(3, track_running_stats=False).double()
    tm = torch.nn.BatchNorm2d(3, track_running_stats=False).double()
    x = RNG.standard_normal((4, 3, 2, 5))
    fx, tx = pair(x)
    close(fm(fx), tm(tx), 1e-12)
    fm.eval()
    tm.eval()
    close(fm(fx), tm(tx), 1e-12)


@pytest.mark.parametrize("dtype", list(DT))
@pytest.mark.parametrize("shape,groups", [((4, 6, 10), 3), ((2, 4, 5, 7), 2), ((3, 6), 6), ((2, 4, 3, 2, 5), 1)])
@pytest.mark.parametrize("affine", [False, True])
def test_group_norm_matches_torch(dtype, shape, groups, affine):
    c = shape[1]
    x = RNG.standard_normal(shape) * 3 - 1
    fx, tx = pair(x, dtype, True)
    fw, tw = pair(RNG.standard_normal(c), dtype, True) if affine else (None, None)
    fb, tb = pair(RNG.standard_normal(c), dtype, True) if affine else (None, None)
    fy = F.group_norm(fx, groups, fw, fb, 1e-5)
    ty = TF.group_norm(tx, groups, tw, tb, 1e-5)
    tol = TOL[dtype]
    close(fy, ty, tol * 10 if dtype == "float32" else tol)
    g = RNG.standard_normal(shape)
    fg, tg = pair(g, dtype)
    fy.backward(fg)
    ty.backward(tg)
    gtol = tol * 50 if dtype == "float32" else tol
    close(fx.grad, tx.grad, gtol)
    if affine:
        close(fw.grad, tw.grad, gtol * 10)
        close(fb.grad, tb.grad, gtol * 10)
    assert type(fy.grad_fn).__name__ == type(ty.grad_fn).__name__ == "NativeGroupNormBackward0"


def test_group_norm_non_contiguous_and_module():
    base = RNG.standard_normal((5, 4, 6))
    fb, tb = pair(base, "float64", True)
    fx, tx = fb.transpose(0, 2), tb.transpose(0, 2)  # (6, 4, 5)
    fm, tm = ft.nn.GroupNorm(2, 4).double(), torch.nn.GroupNorm(2, 4).double()
    fy, ty = fm(fx), tm(tx)
    close(fy, ty, 1e-12)
    (fy * fy).sum().backward()
    (ty * ty).sum().backward()
    close(fb.grad, tb.grad, 1e-11)
    close(fm.weight.grad, tm.weight.grad, 1e-11)


@pytest.mark.parametrize("use_input_stats", [True, False])
def test_instance_norm_matches_torch(use_input_stats):
    x = RNG.standard_normal((3, 4, 6, 5))
    fx, tx = pair(x, "float64", True)
    fw, tw = pair(RNG.standard_normal(4), "float64", True)
    fb, tb = pair(RNG.standard_normal(4), "float64", True)
    frm, trm = pair(RNG.standard_normal(4))
    frv, trv = pair(RNG.random(4) + 0.5)
    fy = F.instance_norm(fx, frm, frv, fw, fb, use_input_stats=use_input_stats, momentum=0.3)
    ty = TF.instance_norm(tx, trm, trv, tw, tb, use_input_stats=use_input_stats, momentum=0.3)
    close(fy, ty, 1e-12)
    close(frm, trm, 1e-12)
    close(frv, trv, 1e-12)
    fy.backward(pair(np.cos(x))[0])
    ty.backward(pair(np.cos(x))[1])
    close(fx.grad, tx.grad, 1e-11)
    close(fw.grad, tw.grad, 1e-11)
    close(fb.grad, tb.grad, 1e-11)
    assert type(fy.grad_fn).__name__ == type(ty.grad_fn).__name__
    assert type(fy.grad_fn.next_functions[0][0]).__name__ == "NativeBatchNormBackward0"


def test_instance_norm_module():
    fm = ft.nn.InstanceNorm2d(3, affine=True, track_running_stats=True).double()
    tm = torch.nn.InstanceNorm2d(3, affine=True, track_running_stats=True).double()
    for _ in range(3):
        x = RNG.standard_normal((2, 3, 4, 4))
        fx, tx = pair(x)
        close(fm(fx), tm(tx), 1e-12)
    close(fm.running_mean, tm.running_mean, 1e-12)
    close(fm.running_var, tm.running_var, 1e-12)


def test_aten_forms():
    x = RNG.standard_normal((4, 3, 5))
    fx, tx = pair(x)
    frm, trm = pair(np.zeros(3))
    frv, trv = pair(np.ones(3))
    fo = ft.native_batch_norm(fx, None, None, frm, frv, True, 0.1, 1e-5)
    to = torch.native_batch_norm(tx, None, None, trm, trv, True, 0.1, 1e-5)
    for a, b in zip(fo, to):
        close(a, b, 1e-12)
    fo = ft.native_batch_norm(fx, None, None, frm, frv, False, 0.1, 1e-5)
    to = torch.native_batch_norm(tx, None, None, trm, trv, False, 0.1, 1e-5)
    assert [tuple(t.shape) for t in fo] == [tuple(t.shape) for t in to]
    fo = ft.native_group_norm(fx, None, None, 4, 3, 5, 3, 1e-5)
    to = torch.native_group_norm(tx, None, None, 4, 3, 5, 3, 1e-5)
    for a, b in zip(fo, to):
        close(a, b, 1e-12)
        assert tuple(a.shape) == tuple(b.shape)
    # ATen's batch_norm has no batch-size check.
    one = pair(np.array([[1.0, 2.0, 3.0]]))
    close(ft.batch_norm(one[0], None, None, None, None, True, 0.1, 1e-5, False),
          torch.batch_norm(one[1], None, None, None, None, True, 0.1, 1e-5, False), 1e-12)
    close(ft.group_norm(fx, 3), torch.group_norm(tx, 3), 1e-12)


def test_mixed_dtype_bfloat16_with_float32_parameters():
    x = RNG.standard_normal((4, 3, 9))
    fx, tx = pair(x, "bfloat16", True)
    fw, tw = pair(RNG.standard_normal(3), "float32", True)
    frm, trm = pair(np.zeros(3), "float32")
    frv, trv = pair(np.ones(3), "float32")
    fy = F.batch_norm(fx, frm, frv, fw, None, training=True)
    ty = TF.batch_norm(tx, trm, trv, tw, None, training=True)
    assert fy.dtype == ft.bfloat16
    close(fy, ty, 3e-2)
    close(frm, trm, 1e-5)
    fy.sum().backward()
    ty.sum().backward()
    assert fw.grad.dtype == ft.float32
    close(fw.grad, tw.grad, 5e-2)
    gy = F.group_norm(fx, 3, fw)
    close(gy, TF.group_norm(tx, 3, tw), 3e-2)


def _fd_check(fn, inputs):
    """Central finite differences of sum(fn(*inputs) * weights) in float64 against autograd."""
    w = ft.tensor(RNG.standard_normal(tuple(fn(*inputs).shape)).tolist(), dtype=ft.float64)
    y = (fn(*inputs) * w).sum()
    grads = ft.autograd.grad(y, [t for t in inputs if t is not None and t.requires_grad])
    h = 1e-6
    k = 0
    for t in inputs:
        if t is None or not t.requires_grad:
            continue
        flat = t.detach().reshape(-1)
        num = []
        for i in range(flat.numel()):
            v = float(flat[i])
            vals = []
            for d in (h, -h):
                with ft.no_grad():
                    t.view(-1)[i] = v + d
                vals.append(float((fn(*inputs) * w).sum()))
            with ft.no_grad():
                t.view(-1)[i] = v
            num.append((vals[0] - vals[1]) / (2 * h))
        np.testing.assert_allclose(np_of(grads[k]).reshape(-1), np.array(num), rtol=1e-6, atol=1e-7)
        k += 1


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_finite_differences(training):
    x = ft.tensor((RNG.standard_normal((3, 2, 4)) * 2).tolist(), dtype=ft.float64).requires_grad_()
    w = ft.tensor([0.7, -1.3], dtype=ft.float64).requires_grad_()
    b = ft.tensor([0.2, 0.5], dtype=ft.float64).requires_grad_()
    rm, rv = ft.tensor([0.1, -0.2], dtype=ft.float64), ft.tensor([1.5, 0.7], dtype=ft.float64)
    _fd_check(lambda x, w, b: F.batch_norm(x, rm.clone(), rv.clone(), w, b, training=training), [x, w, b])


def test_group_norm_finite_differences():
    x = ft.tensor((RNG.standard_normal((2, 4, 3)) * 2).tolist(), dtype=ft.float64).requires_grad_()
    w = ft.tensor([0.7, -1.3, 0.4, 2.0], dtype=ft.float64).requires_grad_()
    b = ft.tensor([0.2, 0.5, -0.1, 0.0], dtype=ft.float64).requires_grad_()
    _fd_check(lambda x, w, b: F.group_norm(x, 2, w, b), [x, w, b])


@pytest.mark.parametrize("kind", ["bn_train", "bn_eval", "gn"])
def test_double_backward_matches_torch(kind):
    x = RNG.standard_normal((3, 4, 5))
    fx, tx = pair(x, "float64", True)
    fw, tw = pair(RNG.standard_normal(4), "float64", True)
    fb, tb = pair(RNG.standard_normal(4), "float64", True)

    def run(mod, F_, x, w, b, ones, zeros):
        if kind == "gn":
            y = F_.group_norm(x, 2, w, b)
        else:
            y = F_.batch_norm(x, zeros(4) + 0.1, ones(4) * 1.3, w, b, training=kind == "bn_train")
        gx, gw = mod.autograd.grad((y * y.sin()).sum(), [x, w], create_graph=True)
        (gx.pow(2).sum() + gw.pow(2).sum()).backward()
        return x.grad, w.grad, b.grad

    fr = run(ft, F, fx, fw, fb, lambda n: ft.ones(n, dtype=ft.float64), lambda n: ft.zeros(n, dtype=ft.float64))
    tr = run(torch, TF, tx, tw, tb, lambda n: torch.ones(n, dtype=torch.float64), lambda n: torch.zeros(n, dtype=torch.float64))
    for a, b in zip(fr, tr):
        if b is None:
            assert a is None or float(a.abs().sum()) == 0
        else:
            close(a, b, 1e-10)


def _err(mod, F_, case):
    x = mod.randn(4, 3, 5)
    z, o = mod.zeros, mod.ones
    cases = {
        "1d": lambda: F_.batch_norm(mod.randn(5), z(5), o(5), training=True),
        "1d_none_train": lambda: F_.batch_norm(mod.randn(5), None, None, training=True),
        "0d": lambda: F_.batch_norm(mod.tensor(1.0), None, None, training=True),
        "rm_size": lambda: F_.batch_norm(x, z(4), o(3), training=True),
        "w_size": lambda: F_.batch_norm(x, z(3), o(3), o(4), training=True),
        "b_size": lambda: F_.batch_norm(x, z(3), o(3), None, o(4), training=True),
        "eval_none": lambda: F_.batch_norm(x, None, None, training=False),
        "rm_only": lambda: F_.batch_norm(x, z(3), None, training=True),
        "rm_only_eval": lambda: F_.batch_norm(x, z(3), None, training=False),
        "int": lambda: F_.batch_norm(x.long(), None, None, training=True),
        "mixed": lambda: F_.batch_norm(x, z(3), o(3), o(3, dtype=mod.float64), training=True),
        "f64_f32w": lambda: F_.batch_norm(x.double(), None, None, o(3), training=True),
        "size1": lambda: F_.batch_norm(mod.randn(1, 3), z(3), o(3), training=True),
        "rm_2d": lambda: F_.batch_norm(x, z(3, 1), o(3), training=True),
        "gn_groups": lambda: F_.group_norm(x, 2),
        "gn_zero": lambda: F_.group_norm(x, 0),
        "gn_neg": lambda: F_.group_norm(x, -3),
        "gn_w": lambda: F_.group_norm(x, 3, o(4)),
        "gn_int": lambda: F_.group_norm(x.long(), 3),
        "gn_mixed": lambda: F_.group_norm(x, 3, o(3, dtype=mod.float64)),
        "gn_1d": lambda: F_.group_norm(mod.randn(3), 3),
        "gn_size1": lambda: F_.group_norm(mod.randn(1, 3, 1), 3),
        "aten_gn_0d": lambda: mod.group_norm(mod.tensor(1.0), 1),
        "aten_gn_1d": lambda: mod.group_norm(mod.randn(3), 1),
        "in_spatial1": lambda: F_.instance_norm(mod.randn(2, 3, 1)),
        "in_rm": lambda: F_.instance_norm(mod.randn(2, 3, 4), z(4), o(3)),
        "in_eval_nostats": lambda: F_.instance_norm(mod.randn(2, 3, 4), use_input_stats=False),
    }
    try:
        cases[case]()
    except Exception as e:  # noqa: BLE001 - the class is the result
        return type(e).__name__, str(e)
    return None, None


@pytest.mark.parametrize("case", [
    "1d", "1d_none_train", "0d", "rm_size", "w_size", "b_size", "eval_none", "rm_only", "rm_only_eval", "int",
    "mixed", "f64_f32w", "size1", "rm_2d", "gn_groups", "gn_zero", "gn_neg", "gn_w", "gn_int", "gn_mixed", "gn_1d",
    "gn_size1", "aten_gn_0d", "aten_gn_1d", "in_spatial1", "in_rm", "in_eval_nostats",
])
def test_errors_match_torch(case):
    fe, fm = _err(ft, F, case)
    te, tm = _err(torch, TF, case)
    assert fe == te, (case, fm, tm)
    if te in ("RuntimeError", "ValueError", "NotImplementedError") and case not in ("0d",):
        assert fm.replace("ferrotorch.", "torch.") == tm, case


def test_empty_inputs():
    for shape in [(0, 3, 2), (2, 3, 0)]:
        x = RNG.standard_normal(shape)
        fx, tx = pair(x, "float64", True)
        fw, tw = pair(np.ones(3), "float64", True)
        fy = F.batch_norm(fx, ft.zeros(3, dtype=ft.float64), ft.ones(3, dtype=ft.float64), fw, fw, training=True) \
            if shape[0] == 0 else None
        if fy is not None:
            ty = TF.batch_norm(tx, torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64), tw, tw,
                               training=True)
            assert tuple(fy.shape) == tuple(ty.shape)
        gy, gt = F.group_norm(fx, 3, fw, fw), TF.group_norm(tx, 3, tw, tw)
        assert tuple(gy.shape) == tuple(gt.shape)
        assert type(gy.grad_fn).__name__ == type(gt.grad_fn).__name__

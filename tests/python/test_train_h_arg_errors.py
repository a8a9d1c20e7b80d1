"""Argument checking of the top-level nn aliases and memory-format factories, against PyTorch.

Each case is a call written once and evaluated with ``torch`` bound to PyTorch and to
ferrotorch: both must raise the same exception class, or both succeed with the same
shapes and dtypes (and values where they are deterministic).
"""

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")


def _env(lib):
    g = torch.Generator().manual_seed(0)
    base = torch.randn(2, 3, 4, 5, generator=g, dtype=torch.float64).numpy()
    t = lib.tensor(base[0, 0, :2, :3].copy(), dtype=lib.float32)
    return {
        "torch": lib, "np": np,
        "t": t,                                                  # (2, 3) float
        "t3": lib.tensor(base[0, :, :, :].copy(), dtype=lib.float32),   # (3, 4, 5)
        "t4": lib.tensor(base.copy(), dtype=lib.float32),              # (2, 3, 4, 5)
        "ti": lib.tensor(2), "tf": lib.tensor(2.0), "t1": lib.tensor([2]), "tb": lib.tensor(True),
        "tl": lib.tensor([1, 2, 3]), "tfg": lib.tensor(0.1, requires_grad=True),
        "e3": lib.zeros(0, 2, 2), "i8": lib.tensor([[1, 2], [3, 4]], dtype=lib.int8),
        "u8": lib.tensor([[166, 125, 160], [138, 58, 203], [37, 172, 82]], dtype=lib.uint8),
    }


CASES = [
    # Tensor parameters given numbers (PyTorch's parser: TypeError)
    "torch.prelu(t, 2)", "torch.prelu(t, None)", "t.prelu(3)", "torch.prelu(t)",
    "torch.conv1d(t3, 2)", "torch.conv3d(t4, 1)", "torch.conv1d(t3)", "torch.conv1d(t3, t3, None, 1, 1, 1, 1, 1)",
    "torch.conv1d(input=t3, weight=2)", "torch.conv2d(t4, t4, None, tf)", "torch.conv2d(t4, t4, None, True)",
    "torch.conv1d(t3, t3, None, 1, 2.0)", "torch.conv_transpose2d(t4, 3)",
    "torch.binary_cross_entropy_with_logits(t, 1)", "torch.binary_cross_entropy_with_logits(t, t, 2)",
    "torch.lstm_cell(t, t, t, t)", "torch.lstm_cell(t, (t, t), t, None)",
    # int / int[] / float / Scalar / bool parameters given tensors or wrong numbers
    "torch.constant_pad_nd(t, t)", "torch.constant_pad_nd(t, 1)", "torch.constant_pad_nd(t, t1)",
    "torch.constant_pad_nd(t, [1], t)", "torch.constant_pad_nd(t, (tf, tf))", "torch.constant_pad_nd(t, (True, True))",
    "torch.constant_pad_nd(t, (tb, tb))", "torch.constant_pad_nd(t, np.array([1, 1]))",
    "torch.constant_pad_nd(t, torch.Size([1, 1]))", "torch.constant_pad_nd(t, (ti, ti))",
    "torch.pixel_shuffle(t3, t)", "torch.pixel_shuffle(t3, t1)", "torch.pixel_shuffle(t3, True)",
    "torch.pixel_shuffle(t3, 2.0)", "torch.pixel_shuffle(t3, tb)", "torch.pixel_shuffle(t3, np.bool_(True))",
    "torch.pixel_shuffle(t4, ti)", "torch.pixel_shuffle(t, ti)", "torch.pixel_shuffle(t3, 0)",
    "torch.pixel_unshuffle(t3, t)", "torch.pixel_unshuffle(t, 1)", "torch.pixel_unshuffle(t3, -2)",
    "torch.pixel_shuffle(t3)", "torch.pixel_shuffle(t3, 1, 2)", "torch.pixel_shuffle(t3, bogus=1)",
    "torch.group_norm(t4, t)", "torch.group_norm(t4, 1, 2)", "torch.group_norm(t4, tl)",
    "torch.max_pool2d(t3, t)", "torch.max_pool2d(t3, 2.0)", "torch.max_pool2d(t3, [1, 2.0])",
    "torch.max_pool2d(t3, ti)", "torch.max_pool2d(t3, t1)", "torch.max_pool2d(t3, True)",
    "torch.max_pool2d(t3, [1, 2, 3])", "torch.max_pool1d(t3, t)", "torch.max_pool3d(t4, tl)",
    "torch.empty_strided(t, (1,))", "torch.empty_strided((3,), t)", "torch.empty_strided(3, (1,))",
    "torch.empty_strided([3.0], (1,))", "torch.empty_strided((2,), (1,), dtype=1)",
    "torch.empty_strided((2,), (1,), device=t)", "torch.empty_strided((ti,), (1,)).shape",
    "torch.empty_permuted(t, (1, 0))", "torch.empty_permuted((2, 3), t)", "torch.empty_permuted((2, 3), 1)",
    "torch.empty_permuted((2, 3), (1, 0.0))", "torch.empty_permuted((2, 3), (1, 0)).stride()",
    "torch.batch_norm_stats(t, t)", "torch.batch_norm_stats(t, 1e-5)",
    "torch.batch_norm_elemt(t, None, None, t, t, 1e-5)",
    "torch.rms_norm(t, t)", "torch.rms_norm(t, 3)", "torch.rms_norm(t, [3], None, ti)",
    "torch.layer_norm(t, 3)", "torch.layer_norm(t, t)",
    "torch.dropout(t, 1, 1)", "torch.dropout(t, 0.5, ti)", "torch.dropout(t, 0.5, None)",
    "torch.dropout(t, t1, True)", "torch.dropout(t, tfg, True)", "torch.dropout(t, 1j, True)",
    "torch.dropout(t, 0.5, np.bool_(True))",
    "torch.hardshrink(t, t)", "torch.hardshrink(t, None)", "t.hardshrink(t)", "torch.hardshrink(t, t1)",
    "torch.hardshrink(t, tfg)", "torch.kl_div(t, t, log_target=1)", "torch.cdist(t, t, t)", "torch.cdist(t, 2)",
    "torch.cdist(t, t, 2.0, None)", "torch.norm_except_dim(t, 2, t1)", "torch.embedding(t, t, tb)",
    "torch.adaptive_max_pool1d(t, t)", "torch.adaptive_avg_pool1d(t, 2.0)", "torch.avg_pool1d(t, t)",
    # dtype errors after the shape checks
    "torch.hardshrink(tl)", "torch.hardshrink(tb)", "t.hardshrink(i8)", "torch.hardshrink(i8)",
    "torch.prelu(tb, tl)", "torch.prelu(t, t.double())", "torch.prelu(tl, tl)", "torch.prelu(t[0], tl.float())",
    "torch.kl_div(t, i8.float()[:, :1].long())", "torch.kl_div(u8, u8)",
    "torch.group_norm(u8, 1)", "torch.group_norm(u8[0], 1)", "torch.group_norm(u8[0, 0], 1)",
    "torch.group_norm(t4.long(), 3)", "torch.group_norm(t4, 2)", "torch.group_norm(t4, 0)",
    "torch.group_norm(e3.unsqueeze(0), 2)",
    "torch.avg_pool1d(u8, -1)", "torch.avg_pool1d(u8, 2)", "torch.avg_pool1d(t3[:, :0], 2)",
    "torch.max_pool1d(u8, 2)", "torch.max_pool2d(t3.bool(), 5)", "torch.max_pool2d(t3.long(), 2)",
    "torch.max_pool1d_with_indices(e3, 1)",
    "torch.adaptive_max_pool1d(ti.byte(), 1)", "torch.adaptive_max_pool1d(u8, -1)",
    "torch.adaptive_max_pool1d(u8, 2)", "torch.adaptive_max_pool1d(e3, 1)", "torch.adaptive_max_pool1d(t, 0)",
    "torch.adaptive_max_pool1d(e3.byte(), 1)", "torch.adaptive_max_pool1d(t3[:, :0], 1)",
    "torch.adaptive_avg_pool1d(t, -2)", "torch.adaptive_avg_pool1d(u8, 1)", "torch.adaptive_avg_pool1d(u8, 2)",
    "torch.adaptive_avg_pool1d(e3.char(), 2)", "torch.adaptive_avg_pool1d(t, 0)", "torch.adaptive_avg_pool1d(tl, 2)",
    "torch.conv2d(t4, tf)", "torch.conv2d(t4, t)", "torch.conv3d(t4.unsqueeze(0), t4)", "torch.conv1d(t, t3)",
    "torch.embedding(t, t, t1)", "torch.embedding(t, tl)", "torch.embedding(t, tl.short())",
    "torch.embedding(t, tl, 5)", "torch.embedding(t, tl, -5)", "torch.embedding(tfg, t)",
    "torch.norm_except_dim(torch.tensor(1.))", "torch.norm_except_dim(tl)", "torch.norm_except_dim(tb)",
    "torch.norm_except_dim(t3, 2, 5)", "torch.norm_except_dim(t3, 0, 1)", "torch.norm_except_dim(t3, 2, -2)",
    "torch.norm_except_dim(torch.tensor(1.), 2, 1)", "torch.norm_except_dim(e3, 2, 0)", "torch.norm_except_dim(t4, 3, 3)",
    "torch.norm_except_dim(t[0], 0, 0)", "torch.norm_except_dim(t, 2, -1)",
    "torch.cdist(t.half(), t)", "torch.cdist(t, t.double())", "torch.cdist(t.bfloat16(), t)",
    "torch.rrelu(tb, torch.tensor(-float('inf')))", "torch.rrelu(t, 0.5, 0.1)",
    "torch.binary_cross_entropy_with_logits(tl, t)", "torch.binary_cross_entropy_with_logits(t[0], t)",
    "torch.binary_cross_entropy_with_logits(t, t[0])", "torch.binary_cross_entropy_with_logits(t, t3)",
    "torch.hinge_embedding_loss(tl, tl.char())", "torch.hinge_embedding_loss(ti, torch.tensor(-6, dtype=torch.int8))",
    "torch.randint_like(t, t)", "torch.randint_like(t, 1.5)", "torch.randint_like(t, 5, dtype=3)",
    "torch.randint_like(t, torch.tensor([3]))", "torch.randint_like(t, torch.tensor(-1))", "torch.randint_like(t, 0)",
    "torch.randint_like(t, 1, 0)", "torch.randint_like(tb, 3)", "torch.randint_like(t, tf).shape",
    "torch.randint_like(t, 5, torch.tensor(6)).shape", "torch.randint_like(t, tb).shape",
    # the top-level losses default to reduction=0 (PyTorch's bindings)
    "torch.binary_cross_entropy_with_logits(t, t.sigmoid())", "torch.kl_div(t, t)",
    "torch.hinge_embedding_loss(t, t.sign())", "torch.margin_ranking_loss(t, t, t.sign())",
]


def _run(lib, code):
    try:
        return "ok", eval(code, _env(lib))
    except Exception as e:  # the class is what is compared
        return "raise", e


def _summary(v):
    if isinstance(v, (tuple, list)) and v and all(hasattr(x, "shape") for x in v):
        return [_summary(x) for x in v]
    if hasattr(v, "shape") and hasattr(v, "dtype"):
        return (tuple(v.shape), str(v.dtype).replace("ferrotorch.", "torch."))
    return v


@pytest.mark.parametrize("code", CASES)
def test_same_exception_class(code):
    kt, vt = _run(torch, code)
    kf, vf = _run(ft, code)
    if kt == "raise":
        assert kf == "raise", f"{code}: PyTorch raises {type(vt).__name__}: {vt}; ours returns {_summary(vf)}"
        assert type(vf).__name__ == type(vt).__name__, (
            f"{code}: ours {type(vf).__name__}: {vf}; PyTorch {type(vt).__name__}: {vt}")
    else:
        assert kf == "ok", f"{code}: PyTorch returns, ours raises {type(vf).__name__}: {vf}"
        st, sf = _summary(vt), _summary(vf)
        if isinstance(st, torch.Size) or isinstance(st, tuple) and not isinstance(vt, torch.Tensor):
            st, sf = tuple(st), tuple(sf)
        assert sf == st


@pytest.mark.parametrize("code", [
    "torch.norm_except_dim(t3, 2, 1)", "torch.norm_except_dim(t3, 3, -2)", "torch.norm_except_dim(t4, 1, 0)",
    "torch.norm_except_dim(t[0], 2, 0)", "torch.norm_except_dim(t4, 2, 3)", "torch.norm_except_dim(t4, 2, -1)",
    "torch.binary_cross_entropy_with_logits(t[0], t.sigmoid())",
    "torch.binary_cross_entropy_with_logits(t, t.sigmoid(), None, None, 2)",
    "torch.hinge_embedding_loss(tl, torch.tensor([1, -1, 0]))", "torch.kl_div(t, t.exp(), 1)",
    "torch.adaptive_avg_pool1d(t, 1)", "torch.group_norm(t4, 3)",
])
def test_values(code):
    vt = eval(code, _env(torch))
    vf = eval(code, _env(ft))
    assert tuple(vf.shape) == tuple(vt.shape)
    assert str(vf.dtype).replace("ferrotorch.", "torch.") == str(vt.dtype)
    np.testing.assert_allclose(np.asarray(vf.detach().double().tolist()), vt.detach().double().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_norm_except_dim_grad():
    x = torch.tensor([1.0, -2.0, 0.0], dtype=torch.float64, requires_grad=True)
    y = ft.tensor([1.0, -2.0, 0.0], dtype=ft.float64, requires_grad=True)
    for p in (0, 2):
        rt, rf = torch.norm_except_dim(x, p, 0), ft.norm_except_dim(y, p, 0)
        assert rf.requires_grad == rt.requires_grad


def test_randint_like_range_and_dtype():
    x = ft.zeros(200, dtype=ft.float32)
    r = ft.randint_like(x, 3, 7)
    assert r.dtype == ft.float32 and float(r.min()) >= 3 and float(r.max()) <= 6
    r = ft.randint_like(x, ft.tensor(4), dtype=ft.int64)
    assert r.dtype == ft.int64 and int(r.max()) <= 3
    b = ft.randint_like(x.bool(), 2)
    assert b.dtype == ft.bool


def test_parser_messages():
    t = ft.zeros(2, 3)
    with pytest.raises(TypeError, match=r"prelu\(\): argument 'weight' \(position 2\) must be Tensor, not int"):
        ft.prelu(t, 2)
    with pytest.raises(TypeError, match=r"prelu\(\): argument 'weight' \(position 1\) must be Tensor, not int"):
        t.prelu(2)
    with pytest.raises(TypeError, match=r"conv1d\(\) received an invalid combination of arguments - got \(Tensor, int\)"):
        ft.conv1d(t, 2)
    with pytest.raises(TypeError, match=r"must be tuple of ints, not Tensor"):
        ft.constant_pad_nd(t, t)
    with pytest.raises(TypeError, match=r"missing 1 required positional arguments: \"upscale_factor\""):
        ft.pixel_shuffle(t)


@pytest.mark.parametrize("code", [
    "torch.max_pool1d(t3, [1, 2])", "torch.max_pool1d(t3, [])", "torch.max_pool1d(t3, 2, [1, 2])",
    "torch.max_pool1d(t3, 2, 1, [0, 0])", "torch.max_pool1d(t3, 2, 1, 0, [1, 1])", "torch.max_pool2d(t3, 2, [1, 1, 1])",
    "torch.max_pool2d(t3, 2, 1, [0, 0, 0])", "torch.max_pool2d(t3, 2, 1, 0, [1, 1, 1])", "torch.max_pool3d(t4, [1, 1])",
    "torch.max_pool3d(t4, 2, [1, 1])", "torch.max_pool3d(t4, 2, 1, [0, 0])", "torch.max_pool3d(t4, 2, 1, 0, [1, 1])",
    "torch.avg_pool1d(t3, [1, 2])", "torch.avg_pool1d(t3, 2, [1, 2])", "torch.avg_pool1d(t3, 2, 1, [0, 0])",
    "torch.max_pool1d_with_indices(t3, [1, 2])", "torch.adaptive_avg_pool1d(t3, [1, 2])",
    "torch.adaptive_max_pool1d(t3, [])", "torch.max_pool2d(t3, [])", "torch.max_pool2d(t3, [1, 2, 3])",
])
def test_pool_list_lengths(code):
    kt, vt = _run(torch, code)
    kf, vf = _run(ft, code)
    assert kt == kf == "raise"
    assert type(vf) is type(vt) and str(vf) == str(vt)


@pytest.mark.parametrize("a", ["int8", "int64", "float32", "bool", "uint8", "float16"])
@pytest.mark.parametrize("b", ["int8", "float32", "bool", "float64"])
@pytest.mark.parametrize("op,n", [("conv1d", 1), ("conv_transpose1d", 1), ("conv2d", 2), ("conv_transpose3d", 3)])
def test_conv_dtype_errors(op, n, a, b):
    code = f"torch.{op}(torch.ones((1, 1) + (2,) * {n}, dtype=torch.{a}), torch.ones((1, 1) + (1,) * {n}, dtype=torch.{b}))"
    kt, vt = _run(torch, code)
    kf, vf = _run(ft, code)
    if kt != "raise":
        # PyTorch computes this combination (same-dtype int8 or float32): so must we.
        assert kf != "raise", (code, vf)
        assert str(vf.dtype) == str(vt.dtype)
        np.testing.assert_array_equal(np.asarray(vf.double().tolist()), np.asarray(vt.double().tolist()))
        return
    assert kf == "raise" and type(vf) is type(vt), (code, vf, vt)


@pytest.mark.parametrize("code", [
    "torch.pixel_unshuffle(torch.zeros(1, 1, 2, 0), 2)", "torch.pixel_unshuffle(torch.zeros(0, 1, 2, 2), 2)",
    "torch.pixel_shuffle(torch.zeros(1, 4, 2, 0), 2)", "torch.pixel_shuffle(torch.zeros(0, 4, 2, 2), 2)",
])
def test_pixel_shuffle_empty(code):
    assert tuple(eval(code, _env(ft)).shape) == tuple(eval(code, _env(torch)).shape)


@pytest.mark.parametrize("code", [
    "torch.conv2d(torch.ones(1, 3, 4, dtype=torch.bool), torch.zeros(0, 2, 3, 4))",
    "torch.conv_transpose1d(torch.ones(3, 1, 0, dtype=torch.bool), torch.zeros(3, 1, 0, dtype=torch.int16))",
    "torch.conv_transpose1d(torch.ones(5, 1, 3, dtype=torch.int32), torch.ones(1, 1, 1, dtype=torch.int8))",
    "torch.conv_transpose1d(torch.ones(1, 1, 3, dtype=torch.int16), torch.ones(1, 1, 1, dtype=torch.int16))",
    "torch.conv1d(torch.ones(1, 2, 3, dtype=torch.bool), torch.ones(1, 1, 1))",
    "torch.cdist(torch.ones(2, 3, 1, dtype=torch.bfloat16), torch.ones(2, 3, 1, dtype=torch.int32))",
    "torch.cdist(torch.ones(3, 1, dtype=torch.int32), torch.ones(3, 1))",
    "torch.cdist(torch.ones(3, 1), torch.ones(3))",
])
def test_shape_errors_before_dtype_errors(code):
    kt, vt = _run(torch, code)
    kf, vf = _run(ft, code)
    assert kt == kf == "raise"
    assert type(vf) is type(vt), (vf, vt)


@pytest.mark.parametrize("call", ["torch.rrelu_(x, -2)", "torch.nn.functional.leaky_relu_(x, -0.5)",
                                  "torch.rrelu_(x, 0.1)", "torch.nn.functional.leaky_relu_(x, 0.2)"])
def test_inplace_negative_slope_backward(call):
    def go(lib):
        leaf = lib.tensor([1.5, -0.5, 2.0], requires_grad=True)
        env = {"torch": lib, "x": leaf.clone()}
        if lib is ft:
            import ferrotorch.nn.functional  # noqa: F401
        try:
            eval(call, env).sum().backward()
            return None, leaf.grad.tolist()
        except RuntimeError as e:
            return type(e), None
    (et, gt), (ef, gf) = go(torch), go(ft)
    assert ef is et
    if gt is not None:
        np.testing.assert_allclose(gf, gt, rtol=1e-6)


@pytest.mark.parametrize("code", [
    "torch.conv1d(torch.zeros(1, 3, 0), torch.zeros(1, 3, 0))", "torch.conv1d(torch.zeros(1, 3, 2), torch.zeros(1, 3, 0))",
    "torch.conv2d(torch.zeros(1, 3, 2, 2), torch.zeros(1, 3, 0, 1))",
    "torch.conv_transpose1d(torch.zeros(1, 3, 2), torch.zeros(3, 1, 0))",
    "torch.conv3d(torch.zeros(1, 1, 2, 2, 2), torch.zeros(1, 1, 1, 0, 1))",
    "torch.prelu(torch.zeros(0, 0, 4, 3), torch.zeros(1, 4, 1)[1:])", "torch.prelu(torch.zeros(2, 1, 3), torch.ones(1, 1))",
    "torch.binary_cross_entropy_with_logits(torch.zeros(2, requires_grad=True), torch.ones(3, 2)).sum().backward()",
    "torch.binary_cross_entropy_with_logits(torch.zeros(3, 2, requires_grad=True), torch.ones(3, 2)).sum().backward()",
    "torch.adaptive_avg_pool1d(torch.ones(3, 4, requires_grad=True), 0).sum().backward()",
    "torch.adaptive_max_pool1d(torch.ones(2, 3, 4, requires_grad=True), 0)[0].sum().backward()",
    "torch.adaptive_avg_pool1d(torch.ones(0, 3, 4, requires_grad=True), 2).sum().backward()",
])
def test_more_error_classes(code):
    kt, vt = _run(torch, code)
    kf, vf = _run(ft, code)
    assert kt == kf, (code, vt, vf)
    if kt == "raise":
        assert type(vf) is type(vt), (vf, vt)

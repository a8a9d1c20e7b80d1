"""Top-level ATen forms of the nn ops (torch.batch_norm, torch.conv2d, torch.lstm...) against PyTorch."""

import math

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")


def _to_ft(v):
    if isinstance(v, torch.Tensor):
        t = ft.tensor(v.detach().numpy())
        return t.requires_grad_() if v.requires_grad else t
    if isinstance(v, (list, tuple)):
        return type(v)(_to_ft(x) for x in v)
    if isinstance(v, dict):
        return {k: _to_ft(x) for k, x in v.items()}
    return v


def _np(t):
    return np.asarray(t.detach().tolist() if isinstance(t, ft.Tensor) else t.detach().numpy())


def _check(a, b, rtol=1e-5, atol=1e-6):
    if isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b), (type(b), len(b) if hasattr(b, "__len__") else b)
        for x, y in zip(a, b):
            _check(x, y, rtol, atol)
        return
    assert isinstance(b, ft.Tensor)
    assert tuple(b.shape) == tuple(a.shape)
    assert str(b.dtype) == str(a.dtype)
    np.testing.assert_allclose(_np(b), _np(a), rtol=rtol, atol=atol)


def _same(name, *args, rtol=1e-5, atol=1e-6, grad=False, **kwargs):
    ta = args
    for x in _leaves(ta):
        x.grad = None
    fa = _to_ft(args)
    fk = _to_ft(kwargs)
    ra = getattr(torch, name)(*ta, **kwargs)
    rb = getattr(ft, name)(*fa, **fk)
    _check(ra, rb, rtol, atol)
    if grad:
        first = lambda r: r[0] if isinstance(r, (tuple, list)) else r  # noqa: E731
        first(ra).sum().backward()
        first(rb).sum().backward()
        for x, y in zip(_leaves(ta), _leaves(fa)):
            _check(x.grad, y.grad, rtol, 1e-5)
    return ra, rb


def _leaves(v):
    if isinstance(v, (torch.Tensor, ft.Tensor)):
        return [v] if v.requires_grad and v.is_leaf else []
    if isinstance(v, (list, tuple)):
        return [t for x in v for t in _leaves(x)]
    return []


def _r(*shape, grad=False, seed=[0]):
    seed[0] += 1
    g = torch.Generator().manual_seed(seed[0])
    t = torch.randn(*shape, generator=g, dtype=torch.float64 if grad else torch.float32)
    return t.requires_grad_() if grad else t


# ----- activations ------------------------------------------------------------------------


def test_activations():
    x = _r(3, 4)
    _same("hardshrink", x)
    _same("hardshrink", x, 0.9)
    _same("threshold", x, 0.1, -2.0)
    _same("rrelu", x)
    _same("rrelu", x, 0.2, 0.4, False)
    _same("prelu", _r(2, 3, 4, grad=True), _r(3, grad=True), grad=True)
    a, b = x.clone(), _to_ft(x.clone())
    assert ft.threshold_(b, 0.0, 5.0) is b
    torch.threshold_(a, 0.0, 5.0)
    _check(a, b)
    with pytest.raises(TypeError):
        ft.threshold(_to_ft(x), 0.1)
    _check(x.hardshrink(0.3), _to_ft(x).hardshrink(0.3))
    _check(x.prelu(torch.tensor([0.2])), _to_ft(x).prelu(ft.tensor([0.2])))


def test_rrelu_training():
    x = _to_ft(_r(200, 50))
    y = ft.rrelu(x, 0.1, 0.3, True)
    neg = x < 0
    ratio = (y[neg] / x[neg])
    assert float(ratio.min()) >= 0.1 - 1e-6 and float(ratio.max()) <= 0.3 + 1e-6
    assert (y[~neg] == x[~neg]).all()
    g = ft.Generator().manual_seed(3)
    y1 = ft.rrelu(x, 0.1, 0.3, True, g)
    g.manual_seed(3)
    y2 = ft.rrelu(x, 0.1, 0.3, True, generator=g)
    assert ft.equal(y1, y2)
    z = x.clone()
    assert ft.rrelu_(z, 0.1, 0.3, True) is z


# ----- dropout -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout"])
def test_dropout_family_identity_and_errors(name):
    x = _to_ft(_r(4, 6, 3))
    assert getattr(ft, name)(x, 0.5, False) is x
    assert getattr(ft, name)(x, 0.0, True) is x
    for bad in (1.5, -0.1):
        with pytest.raises(RuntimeError, match="dropout probability has to be between 0 and 1"):
            getattr(ft, name)(x, bad, True)
        with pytest.raises(RuntimeError):
            getattr(torch, name)(torch.ones(4, 6, 3), bad, True)
    y = x.clone()
    assert getattr(ft, name + "_")(y, 0.5, True) is y
    if name.startswith("feature"):
        with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions in the input"):
            getattr(ft, name)(ft.ones(3), 0.5, True)
        with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions in the input"):
            getattr(torch, name)(torch.ones(3), 0.5, True)


def test_dropout_statistics():
    ft.manual_seed(0)
    x = ft.ones(100, 400)
    y = ft.dropout(x, 0.25, True)
    kept = (y != 0).float().mean().item()
    assert abs(kept - 0.75) < 0.02
    assert set(np.unique(_np(y)).round(5)) <= {0.0, round(1 / 0.75, 5)}
    # p = 1 zeroes everything, as in PyTorch.
    _check(torch.dropout(torch.ones(3, 4), 1.0, True), ft.dropout(ft.ones(3, 4), 1.0, True))
    _check(torch.feature_dropout(torch.ones(3, 4, 2), 1.0, True), ft.feature_dropout(ft.ones(3, 4, 2), 1.0, True))
    _check(torch.alpha_dropout(torch.ones(3, 4), 1.0, True), ft.alpha_dropout(ft.ones(3, 4), 1.0, True))


def test_feature_dropout_whole_channels():
    ft.manual_seed(1)
    y = ft.feature_dropout(ft.ones(50, 40, 7), 0.5, True)
    per_channel = y.amax(-1) - y.amin(-1)
    assert (per_channel == 0).all()
    vals = set(np.unique(_np(y)).tolist())
    assert vals == {0.0, 2.0}
    # Alpha dropout on channels: two values per channel, PyTorch's affine constants.
    ta = torch.feature_alpha_dropout(torch.ones(50, 40, 7), 0.5, True)
    fa = ft.feature_alpha_dropout(ft.ones(50, 40, 7), 0.5, True)
    np.testing.assert_allclose(sorted(set(np.unique(_np(fa)).round(4))), sorted(set(np.unique(_np(ta)).round(4))))
    assert ((fa.amax(-1) - fa.amin(-1)) == 0).all()


def test_native_dropout():
    x = ft.randn(30, 40)
    out, mask = ft.native_dropout(x, 0.3, True)
    assert mask.dtype == ft.bool and mask.shape == x.shape
    assert ft.allclose(out, x * mask / 0.7)
    tout, tmask = torch.native_dropout(torch.ones(2, 3), 0.3, False)
    out, mask = ft.native_dropout(ft.ones(2, 3), 0.3, False)
    _check((tout, tmask), (out, mask))
    assert out is not x


# ----- normalisation ------------------------------------------------------------------------


def test_batch_norm_positional():
    x = _r(4, 3, 5, grad=True)
    w, b = _r(3, grad=True), _r(3, grad=True)
    rm_t, rv_t = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    rm_f, rv_f = _to_ft(rm_t), _to_ft(rv_t)
    ra = torch.batch_norm(x, w, b, rm_t, rv_t, True, 0.2, 1e-5, True)
    fx, fw, fb = _to_ft((x, w, b))
    rb = ft.batch_norm(fx, fw, fb, rm_f, rv_f, True, 0.2, 1e-5, True)
    _check(ra, rb)
    _check(rm_t, rm_f)
    _check(rv_t, rv_f)
    ra.pow(2).sum().backward()
    rb.pow(2).sum().backward()
    _check(x.grad, fx.grad, atol=1e-6)
    _check(w.grad, fw.grad, atol=1e-6)
    _same("batch_norm", _r(4, 3), None, None, torch.zeros(3), torch.ones(3) * 2, False, 0.1, 1e-5, False)


def test_instance_group_layer_rms_norm():
    x = _r(2, 4, 6, grad=True)
    _same("instance_norm", x, _r(4, grad=True), _r(4, grad=True), None, None, True, 0.1, 1e-5, False, grad=True)
    _same("group_norm", _r(2, 4, 6, grad=True), 2, _r(4, grad=True), _r(4, grad=True), 1e-5, True, grad=True)
    _same("group_norm", _r(2, 4, 6), 4)
    _same("layer_norm", _r(2, 4, 6, grad=True), [4, 6], _r(4, 6, grad=True), _r(4, 6, grad=True), 1e-5, True,
          grad=True)
    _same("layer_norm", _r(2, 4, 6), (6,))
    _same("rms_norm", _r(2, 4, 6, grad=True), [6], _r(6, grad=True), grad=True)
    _same("rms_norm", _r(2, 4, 6), [4, 6], None, 1e-3)


def test_native_layer_norm():
    x = _r(2, 3, 4, 5, grad=True)
    w, b = _r(4, 5, grad=True), _r(4, 5, grad=True)
    ra, rb = _same("native_layer_norm", x, [4, 5], w, b, 1e-5, grad=True)
    assert tuple(rb[1].shape) == (2, 3, 1, 1)
    _same("native_layer_norm", _r(3, 8), [8], None, None, 1e-3)
    _same("native_layer_norm", _r(3, 8).half(), [8], None, None, 1e-3, rtol=1e-2, atol=1e-2)


def test_native_batch_norm():
    x = _r(6, 3, 4, grad=True)
    rm, rv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    frm, frv = _to_ft(rm), _to_ft(rv)
    ra = torch.native_batch_norm(x, None, None, rm, rv, True, 0.1, 1e-5)
    fx = _to_ft(x)
    rb = ft.native_batch_norm(fx, None, None, frm, frv, True, 0.1, 1e-5)
    _check(ra, rb)
    _check(rv, frv)
    ra[0].sum().backward()
    rb[0].sum().backward()
    _check(x.grad, fx.grad, atol=1e-6)
    _same("native_batch_norm", _r(6, 3), _r(3), _r(3), torch.zeros(3), torch.ones(3), False, 0.1, 1e-5)
    _same("native_batch_norm", _r(6, 3), None, None, None, None, True, 0.1, 1e-5)


def test_native_group_norm():
    x = _r(2, 6, 3, 2)
    _same("native_group_norm", x, _r(6), _r(6), 2, 6, 6, 3, 1e-5)
    _same("native_group_norm", x, None, None, 2, 6, 6, 2, 1e-3)


def test_norm_except_dim():
    v = _r(3, 4, 5)
    for p, d in ((2, 0), (2, 1), (2, 2), (3, 0), (1, 2), (2, -1)):
        _same("norm_except_dim", v, p, d)
    _same("norm_except_dim", v)


# ----- pooling / convolution ----------------------------------------------------------------


def test_pooling():
    x1, x2, x3 = _r(2, 3, 9), _r(2, 3, 8, 7), _r(1, 2, 6, 5, 4)
    _same("max_pool1d", x1, 3)
    _same("max_pool1d", x1, [3], [2], [1], [1], True)
    _same("max_pool1d", x1, 2, stride=1, padding=1, dilation=2)
    _same("max_pool1d_with_indices", x1, 3, 2)
    _same("max_pool2d", x2, 2)
    _same("max_pool2d", x2, (3, 2), (2, 1), 1, 1, True)
    _same("max_pool3d", x3, 2)
    _same("max_pool3d", x3, 2, [], 1)
    _same("avg_pool1d", x1, 3)
    _same("avg_pool1d", x1, 3, 2, 1, True, False)
    _same("adaptive_avg_pool1d", x1, 4)
    _same("adaptive_max_pool1d", x1, [4])


def test_convolutions():
    x = _r(2, 4, 9, grad=True)
    w = _r(6, 2, 3, grad=True)
    _same("conv1d", x, w, None, 1, 1, 1, 2, grad=True)
    _same("conv1d", _r(2, 4, 9), _r(6, 4, 3), _r(6), 2)
    _same("conv1d", _r(2, 4, 9), _r(6, 4, 3), None, 1, "same")
    _same("conv2d", _r(2, 3, 7, 6), _r(4, 3, 3, 2), _r(4), (2, 1), 1, 1, 1)
    _same("conv3d", _r(1, 2, 5, 4, 4), _r(3, 2, 2, 2, 2), None, 1, 0, (1, 2, 1))
    _same("conv_transpose1d", _r(2, 4, 5), _r(4, 3, 3), _r(3), 2, 1, 1)
    _same("conv_transpose2d", _r(2, 4, 5, 4), _r(4, 3, 3, 2), None, 2, 1, 1, 1, 1)
    _same("conv_transpose3d", _r(1, 2, 3, 3, 2), _r(2, 2, 2, 2, 2), _r(2), 1)
    _same("conv_tbc", _r(7, 2, 4), _r(3, 4, 5), _r(5), 1)
    # The general form, both directions.
    _same("convolution", _r(2, 4, 9), _r(6, 2, 3), _r(6), [2], [1], [1], False, [0], 2)
    _same("convolution", _r(2, 3, 7, 6), _r(3, 4, 3, 3), None, [2, 2], [1, 1], [1, 1], True, [1, 0], 1)
    _same("convolution", _r(1, 2, 5, 4, 4), _r(3, 2, 2, 2, 2), None, [1, 1, 1], [0, 0, 0], [1, 1, 1], False,
          [0, 0, 0], 1)


# ----- embeddings, grids, shape ---------------------------------------------------------------


def test_embedding():
    w = _r(10, 3, grad=True)
    idx = torch.tensor([[1, 2, 4], [4, 3, 9]])
    _same("embedding", w, idx, grad=True)
    w2 = _r(10, 3, grad=True)
    ra, rb = _same("embedding", w2, idx, 4, grad=True)
    _check(w2.grad[4], _to_ft(torch.zeros(3, dtype=torch.float64)))
    # padding_idx=-1 means none (not the last row) in the ATen form.
    w3 = _r(10, 3, grad=True)
    _same("embedding", w3, torch.tensor([9, 9, 1]), -1, grad=True)


def test_embedding_renorm_():
    w = _r(10, 4) * 3
    fw = _to_ft(w)
    idx = torch.tensor([1, 2, 2, 7])
    ra = torch.embedding_renorm_(w, idx, 1.5, 2.0)
    rb = ft.embedding_renorm_(fw, _to_ft(idx), 1.5, 2.0)
    assert rb is fw
    _check(ra, rb)
    w = _r(10, 4) * 3
    fw = _to_ft(w)
    _check(torch.embedding_renorm_(w, idx, 2.0, 1.0), ft.embedding_renorm_(fw, _to_ft(idx), 2.0, 1.0))


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("pad", [None, 2, -1])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_embedding_bag(mode, pad, dtype):
    w = _r(10, 3).to(getattr(torch, dtype))
    idx = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
    off = torch.tensor([0, 4, 4, 6])
    args = (w, idx, off, False, mode, False, None, False)
    if pad is not None:
        args = args + (pad,)
    _same("embedding_bag", *args)
    # include_last_offset with the closing offset
    args = (w, idx, torch.tensor([0, 4, 4, 6, 8]), False, mode, False, None, True)
    if pad is not None:
        args = args + (pad,)
    _same("embedding_bag", *args)


def test_embedding_bag_weights_and_grad():
    w = _r(10, 3, grad=True)
    psw = _r(8, grad=True)
    idx = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
    _same("embedding_bag", w, idx, torch.tensor([0, 4, 4, 6]), False, 0, False, psw, False, grad=True)
    _same("embedding_bag", _r(10, 3, grad=True), idx, torch.tensor([0, 3, 4, 6]), False, 1, grad=True)
    _same("embedding_bag", _r(10, 3, grad=True), idx, torch.tensor([0, 3, 4, 6]), False, 2, grad=True)


@pytest.mark.parametrize("interp", [0, 1, 2])
@pytest.mark.parametrize("padding", [0, 1, 2])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sampler(interp, padding, align):
    x = _r(2, 3, 5, 6, grad=True)
    grid = (torch.rand(2, 4, 3, 2, generator=torch.Generator().manual_seed(5), dtype=torch.float64) * 2.4 - 1.2)
    _same("grid_sampler", x, grid, interp, padding, align, grad=True, atol=1e-6)
    _same("grid_sampler_2d", _r(2, 3, 5, 6), grid.float(), interp, padding, align, atol=1e-5)
    if interp != 2:
        x3 = _r(1, 2, 4, 3, 5)
        g3 = torch.rand(1, 2, 3, 2, 3, generator=torch.Generator().manual_seed(6)) * 2 - 1
        _same("grid_sampler_3d", x3, g3, interp, padding, align, atol=1e-5)
        _same("grid_sampler", x3, g3, interp, padding, align, atol=1e-5)


def test_affine_grid_generator_and_shapes():
    theta = _r(2, 2, 3, grad=True)
    _same("affine_grid_generator", theta, [2, 3, 4, 5], False, grad=True)
    _same("affine_grid_generator", _r(2, 3, 4), [2, 3, 4, 5, 2], True)
    _same("constant_pad_nd", _r(2, 3, 4), [1, 2], 1.5)
    _same("constant_pad_nd", _r(2, 3, 4), [1, -1, 0, 2])
    _same("constant_pad_nd", _r(2, 3, 4, grad=True), (2, 0), grad=True)
    _same("pixel_shuffle", _r(2, 8, 3, 4), 2)
    _same("pixel_unshuffle", _r(2, 2, 6, 4), 2)


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, 0.5, math.inf])
def test_cdist(p):
    a, b = _r(2, 5, 4, grad=True), _r(2, 6, 4, grad=True)
    _same("cdist", a, b, p, grad=True, atol=1e-6)
    _same("cdist", _r(30, 3), _r(7, 3), p, rtol=1e-4, atol=1e-5)
    _same("cdist", _r(4, 3), _r(7, 3), p, "use_mm_for_euclid_dist", rtol=1e-4, atol=1e-5)
    _same("cdist", _r(40, 3), _r(7, 3), p, compute_mode="donot_use_mm_for_euclid_dist", rtol=1e-4, atol=1e-5)


# ----- losses -----------------------------------------------------------------------------------


@pytest.mark.parametrize("red", [0, 1, 2])
def test_losses(red):
    x, y = _r(4, 5, grad=True), torch.rand(4, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(9))
    _same("binary_cross_entropy_with_logits", x, y, None, None, red, grad=True)
    _same("binary_cross_entropy_with_logits", _r(4, 5, grad=True), y, _r(5).abs().double(),
          _r(5).abs().double(), red, grad=True)
    sign = torch.tensor([1, -1, 1, -1.0], dtype=torch.float64)
    _same("cosine_embedding_loss", _r(4, 5, grad=True), _r(4, 5, grad=True), sign, 0.2, red, grad=True)
    _same("hinge_embedding_loss", _r(4, 5, grad=True), torch.ones(4, 5, dtype=torch.float64).neg(), 0.5, red,
          grad=True)
    logp = torch.log_softmax(_r(4, 5), -1).double().requires_grad_()
    _same("kl_div", logp, y.softmax(-1), red, grad=True)
    _same("kl_div", _r(4, 5, grad=True), _r(4, 5), red, log_target=True, grad=True)
    _same("margin_ranking_loss", _r(6, grad=True), _r(6, grad=True), torch.tensor([1, -1, 1, 1, -1, 1.0]).double(),
          0.1, red, grad=True)
    _same("poisson_nll_loss", _r(4, 5, grad=True), y * 3, True, False, 1e-8, red, grad=True)
    _same("poisson_nll_loss", _r(4, 5).abs().double().requires_grad_(), y * 3, False, True, 1e-6, red, grad=True)
    _same("triplet_margin_loss", _r(4, 5, grad=True), _r(4, 5, grad=True), _r(4, 5, grad=True), 1.0, 2.0, 1e-6,
          True, red, grad=True)


@pytest.mark.parametrize("red", [0, 1, 2])
def test_ctc_loss(red):
    T, N, C, S = 12, 3, 5, 4
    logp = torch.log_softmax(_r(T, N, C), -1).double().requires_grad_()
    targets = torch.randint(1, C, (N, S), generator=torch.Generator().manual_seed(2))
    il, tl = torch.tensor([12, 10, 9]), torch.tensor([4, 3, 2])
    _same("ctc_loss", logp, targets, il, tl, 0, red, False, grad=True, rtol=1e-6)
    _same("ctc_loss", logp.detach(), targets, [12, 10, 9], [4, 3, 2], 0, red, True, rtol=1e-6)


def test_bad_reduction():
    with pytest.raises(ValueError):
        ft.hinge_embedding_loss(ft.ones(2), ft.ones(2), 1.0, 5)


# ----- recurrent ----------------------------------------------------------------------------------


def test_cells():
    x, h, c = _r(3, 4, grad=True), _r(3, 5, grad=True), _r(3, 5, grad=True)
    w1, w2, b1, b2 = _r(5, 4, grad=True), _r(5, 5, grad=True), _r(5, grad=True), _r(5, grad=True)
    _same("rnn_tanh_cell", x, h, w1, w2, b1, b2, grad=True)
    _same("rnn_relu_cell", x, h, w1, w2, None, None, grad=True)
    _same("rnn_tanh_cell", x.detach().float(), h.detach().float(), w1.detach().float(), w2.detach().float())
    W1, W2, B1, B2 = _r(20, 4, grad=True), _r(20, 5, grad=True), _r(20, grad=True), _r(20, grad=True)
    _same("lstm_cell", x, [h, c], W1, W2, B1, B2, grad=True)
    _same("lstm_cell", x.detach().float(), (h.detach().float(), c.detach().float()), W1.detach().float(),
          W2.detach().float())
    G1, G2, C1, C2 = _r(15, 4, grad=True), _r(15, 5, grad=True), _r(15, grad=True), _r(15, grad=True)
    _same("gru_cell", x, h, G1, G2, C1, C2, grad=True)
    _same("gru_cell", x.detach().float(), h.detach().float(), G1.detach().float(), G2.detach().float())


def _params(gates, inp, hid, layers, dirs, bias, proj=0):
    ps = []
    for layer in range(layers):
        for _ in range(dirs):
            i = inp if layer == 0 else (proj or hid) * dirs
            ps += [_r(gates * hid, i, grad=True), _r(gates * hid, proj or hid, grad=True)]
            if bias:
                ps += [_r(gates * hid, grad=True), _r(gates * hid, grad=True)]
            if proj:
                ps.append(_r(proj, hid, grad=True))
    return ps


@pytest.mark.parametrize("name,gates", [("rnn_tanh", 1), ("rnn_relu", 1), ("gru", 3), ("lstm", 4)])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_sequence_functions(name, gates, bidirectional, batch_first):
    T, B, I, H, L = 5, 3, 4, 6, 2
    dirs = 2 if bidirectional else 1
    x = _r(B, T, I, grad=True) if batch_first else _r(T, B, I, grad=True)
    ps = _params(gates, I, H, L, dirs, True)
    h0 = _r(L * dirs, B, H, grad=True)
    hx = [h0, _r(L * dirs, B, H, grad=True)] if name == "lstm" else h0
    _same(name, x, hx, ps, True, L, 0.0, False, bidirectional, batch_first, grad=True)
    # no biases
    ps = _params(gates, I, H, L, dirs, False)
    _same(name, x.detach(), hx, ps, False, L, 0.0, True, bidirectional, batch_first, rtol=1e-6)


def test_lstm_projection_and_packed():
    T, B, I, H, P = 5, 3, 4, 6, 2
    x = _r(T, B, I, grad=True)
    ps = _params(4, I, H, 1, 1, True, proj=P)
    hx = [_r(1, B, P, grad=True), _r(1, B, H, grad=True)]
    _same("lstm", x, hx, ps, True, 1, 0.0, False, False, False, grad=True)
    # packed data: batch sizes 3, 3, 2, 1
    bs = torch.tensor([3, 3, 2, 1])
    data = _r(9, I, grad=True)
    ps = _params(4, I, H, 1, 1, True)
    hx = [_r(1, 3, H, grad=True), _r(1, 3, H, grad=True)]
    _same("lstm", data, bs, hx, ps, True, 1, 0.0, False, False, grad=True)
    gps = _params(3, I, H, 1, 2, True)
    _same("gru", _r(9, I, grad=True), bs, _r(2, 3, H, grad=True), gps, True, 1, 0.0, False, True, grad=True)


def test_coverage_names_present():
    for n in ["batch_norm", "layer_norm", "native_layer_norm", "embedding_bag", "grid_sampler_2d", "cdist",
              "conv_tbc", "lstm", "gru_cell", "memory_format", "channels_last", "empty_strided"]:
        assert hasattr(torch, n) and hasattr(ft, n), n


# ----- synchronised batch-norm kernels (CUDA-only in PyTorch: checked against its CPU batch norm) ---


def test_batch_norm_update_stats():
    x = _r(4, 3, 5)
    rm, rv = torch.zeros(3), torch.ones(3)
    frm, frv = _to_ft(rm), _to_ft(rv)
    _check(torch.batch_norm_update_stats(x, rm, rv, 0.1), ft.batch_norm_update_stats(_to_ft(x), frm, frv, 0.1))
    _check(rm, frm)
    _check(rv, frv)
    _check(torch.batch_norm_update_stats(x, None, None, 0.3), ft.batch_norm_update_stats(_to_ft(x), None, None, 0.3))


def test_sync_batch_norm_pieces_reproduce_batch_norm(monkeypatch):
    x = _r(8, 3, 5)
    # PyTorch registers these kernels for CUDA only; the math is checked here on CPU tensors.
    with pytest.raises(NotImplementedError):
        torch.batch_norm_stats(x, 1e-5)
    with pytest.raises(NotImplementedError):
        ft.batch_norm_stats(_to_ft(x), 1e-5)
    monkeypatch.setattr(ft._nn_aliases, "_cuda_only", lambda op, input: None)
    shards = x.chunk(2, 0)
    eps, mom = 1e-5, 0.1
    fstats = [ft.batch_norm_stats(_to_ft(s), eps) for s in shards]
    mean = ft.stack([m for m, _ in fstats])
    invstd = ft.stack([i for _, i in fstats])
    # Each shard's statistics are the batch statistics PyTorch's CPU batch norm computes.
    for s, (m, i) in zip(shards, fstats):
        _, tm, ti = torch.native_batch_norm(s, None, None, None, None, True, mom, eps)
        _check(tm, m)
        _check(ti, i)
    rm, rv = torch.zeros(3), torch.ones(3)
    ref = torch.batch_norm(x, None, None, rm, rv, True, mom, eps, False)
    frm, frv = ft.zeros(3), ft.ones(3)
    gm, gi = ft.batch_norm_gather_stats(_to_ft(x), mean, invstd, frm, frv, mom, eps, 20)
    _, tm, ti = torch.native_batch_norm(x, None, None, None, None, True, mom, eps)
    _check(tm, gm, atol=1e-6)
    _check(ti, gi, rtol=1e-5)
    _check(rm, frm, atol=1e-6)
    _check(rv, frv, rtol=1e-5)
    w, b = _r(3), _r(3)
    ref = torch.batch_norm(x, w, b, None, None, True, mom, eps, False)
    out = ft.batch_norm_elemt(_to_ft(x), _to_ft(w), _to_ft(b), gm, gi, eps)
    _check(ref, out, atol=1e-5)
    # Unequal shard sizes through the counts form.
    a, c = x[:3], x[3:]
    sa, sc = ft.batch_norm_stats(_to_ft(a), eps), ft.batch_norm_stats(_to_ft(c), eps)
    gm, gi = ft.batch_norm_gather_stats_with_counts(_to_ft(x), ft.stack([sa[0], sc[0]]), ft.stack([sa[1], sc[1]]),
                                                    None, None, mom, eps, ft.tensor([15.0, 25.0]))
    _check(tm, gm, atol=1e-6)
    _check(ti, gi, rtol=1e-5)

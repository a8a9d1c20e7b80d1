"""Parity of nn.MultiheadAttention and the Transformer modules with PyTorch (copied weights)."""

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

DT = {"float64": (torch.float64, ft.float64, 1e-9), "float32": (torch.float32, ft.float32, 5e-5)}


def _ft(t):
    return None if t is None else ft.tensor(t.detach().numpy().copy())


def _np(t):
    return t.detach().numpy()


def _close(a, b, tol):
    np.testing.assert_allclose(_np(b), _np(a), rtol=tol, atol=tol)


def _copy(tm, fm):
    fm.load_state_dict({k: _ft(v) for k, v in tm.state_dict().items()})


def _grads(tm, fm, tol):
    fp = dict(fm.named_parameters())
    tp = dict(tm.named_parameters())
    assert list(tp) == list(fp)
    for n, p in tp.items():
        assert fp[n].grad is not None, n
        _close(p.grad, fp[n].grad, tol)


MHA_CASES = [
    dict(),
    dict(batch_first=True),
    dict(bias=False),
    dict(kdim=3, vdim=5),
    dict(add_bias_kv=True),
    dict(add_zero_attn=True),
    dict(add_bias_kv=True, add_zero_attn=True, batch_first=True),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("mask", ["none", "bool", "float", "kpm", "both", "3d"])
@pytest.mark.parametrize("ci", range(len(MHA_CASES)))
def test_mha(ci, mask, dtype):
    kw = MHA_CASES[ci]
    tdt, fdt, tol = DT[dtype]
    tm = torch.nn.MultiheadAttention(8, 2, **kw).to(tdt)
    fm = ft.nn.MultiheadAttention(8, 2, **kw, dtype=fdt)
    assert [(n, tuple(p.shape)) for n, p in tm.named_parameters()] == \
           [(n, tuple(p.shape)) for n, p in fm.named_parameters()]
    assert repr(tm) == repr(fm)
    _copy(tm, fm)
    L, S, N = 4, 6, 3
    bf = kw.get("batch_first", False)
    shp = lambda n, e: (N, n, e) if bf else (n, N, e)  # noqa: E731
    q = torch.randn(*shp(L, 8), dtype=tdt, requires_grad=True)
    k = torch.randn(*shp(S, kw.get("kdim", 8)), dtype=tdt, requires_grad=True)
    v = torch.randn(*shp(S, kw.get("vdim", 8)), dtype=tdt, requires_grad=True)
    am = kpm = None
    if mask in ("bool", "both"):
        am = torch.rand(L, S) < 0.3
        am[:, 0] = False
    if mask == "float":
        am = torch.randn(L, S, dtype=tdt)
    if mask == "3d":
        am = torch.randn(N * 2, L, S, dtype=tdt)
    if mask in ("kpm", "both"):
        kpm = torch.zeros(N, S, dtype=torch.bool)
        kpm[0, -2:] = True
        kpm[2, 3:] = True
    fq, fk, fv = (_ft(x).requires_grad_() for x in (q, k, v))
    for avg in (True, False):
        to, tw = tm(q, k, v, key_padding_mask=kpm, attn_mask=am, average_attn_weights=avg)
        fo, fw = fm(fq, fk, fv, key_padding_mask=_ft(kpm), attn_mask=_ft(am), average_attn_weights=avg)
        _close(to, fo, tol)
        _close(tw, fw, tol)
    (to.sum() + (tw * tw).sum()).backward()
    (fo.sum() + (fw * fw).sum()).backward()
    _grads(tm, fm, tol * 10)
    for a, b in ((q, fq), (k, fk), (v, fv)):
        _close(a.grad, b.grad, tol * 10)
    to, tw = tm(q, k, v, key_padding_mask=kpm, attn_mask=am, need_weights=False)
    fo, fw = fm(fq, fk, fv, key_padding_mask=_ft(kpm), attn_mask=_ft(am), need_weights=False)
    assert fw is None and tw is None
    _close(to, fo, tol)


def test_mha_unbatched_and_functional():
    tm = torch.nn.MultiheadAttention(8, 4).double()
    fm = ft.nn.MultiheadAttention(8, 4, dtype=ft.float64)
    _copy(tm, fm)
    x = torch.randn(5, 8, dtype=torch.float64)
    to, tw = tm(x, x, x)
    fo, fw = fm(_ft(x), _ft(x), _ft(x))
    _close(to, fo, 1e-10)
    _close(tw, fw, 1e-10)
    args = lambda m, X: (X, X, X, 8, 4, m.in_proj_weight, m.in_proj_bias, None, None, False, 0.0,  # noqa: E731
                         m.out_proj.weight, m.out_proj.bias)
    xb = torch.randn(5, 2, 8, dtype=torch.float64)
    a = torch.nn.functional.multi_head_attention_forward(*args(tm, xb))
    b = ft.nn.functional.multi_head_attention_forward(*args(fm, _ft(xb)))
    _close(a[0], b[0], 1e-10)
    _close(a[1], b[1], 1e-10)


def test_mha_errors():
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        ft.nn.MultiheadAttention(10, 3)
    m = ft.nn.MultiheadAttention(8, 2)
    with pytest.raises(RuntimeError, match="The shape of the 2D attn_mask is"):
        m(ft.randn(4, 2, 8), ft.randn(4, 2, 8), ft.randn(4, 2, 8), attn_mask=ft.zeros(3, 3))


LAYER_CASES = [
    dict(),
    dict(norm_first=True),
    dict(activation="gelu", batch_first=True),
    dict(activation=torch.nn.functional.silu),
    dict(norm_first=True, batch_first=True, bias=False),
]


def _act(kw):
    kw = dict(kw)
    if callable(kw.get("activation")):
        kw["activation"] = ft.nn.functional.silu
    return kw


@pytest.mark.parametrize("train", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("ci", range(len(LAYER_CASES)))
def test_encoder_decoder_layers(ci, dtype, train):
    kw = LAYER_CASES[ci]
    tdt, fdt, tol = DT[dtype]
    bf = kw.get("batch_first", False)
    te = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, **kw).to(tdt)
    fe = ft.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, **_act(kw), dtype=fdt)
    td = torch.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, **kw).to(tdt)
    fd = ft.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, **_act(kw), dtype=fdt)
    for t, f in ((te, fe), (td, fd)):
        _copy(t, f)
        t.train(train)
        f.train(train)
    shp = lambda n: (3, n, 8) if bf else (n, 3, 8)  # noqa: E731
    src = torch.randn(*shp(5), dtype=tdt)
    tgt = torch.randn(*shp(4), dtype=tdt)
    kpm = torch.zeros(3, 5, dtype=torch.bool)
    kpm[1, 3:] = True
    cm = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=tdt)
    tmem = te(src, src_key_padding_mask=kpm)
    fmem = fe(_ft(src), src_key_padding_mask=_ft(kpm))
    _close(tmem, fmem, tol)
    to = td(tgt, tmem, tgt_mask=cm, memory_key_padding_mask=kpm, tgt_is_causal=True)
    fo = fd(_ft(tgt), fmem, tgt_mask=_ft(cm), memory_key_padding_mask=_ft(kpm), tgt_is_causal=True)
    _close(to, fo, tol)
    (to * to).sum().backward()
    (fo * fo).sum().backward()
    _grads(te, fe, tol * 20)
    _grads(td, fd, tol * 20)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer(batch_first, norm_first):
    tm = torch.nn.Transformer(8, 2, 2, 2, 16, dropout=0.0, batch_first=batch_first, norm_first=norm_first).double()
    fm = ft.nn.Transformer(8, 2, 2, 2, 16, dropout=0.0, batch_first=batch_first, norm_first=norm_first,
                           dtype=ft.float64)
    assert [(n, tuple(p.shape)) for n, p in tm.named_parameters()] == \
           [(n, tuple(p.shape)) for n, p in fm.named_parameters()]
    _copy(tm, fm)
    shp = lambda n: (2, n, 8) if batch_first else (n, 2, 8)  # noqa: E731
    src, tgt = torch.randn(*shp(5), dtype=torch.float64), torch.randn(*shp(4), dtype=torch.float64)
    m = tm.generate_square_subsequent_mask(4, dtype=torch.float64)
    fmask = fm.generate_square_subsequent_mask(4, dtype=ft.float64)
    _close(m, fmask, 0)
    to = tm(src, tgt, tgt_mask=m)
    fo = fm(_ft(src), _ft(tgt), tgt_mask=fmask)
    _close(to, fo, 1e-9)
    to.pow(2).sum().backward()
    fo.pow(2).sum().backward()
    _grads(tm, fm, 1e-8)
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to d_model"):
        fm(ft.randn(*shp(5))[..., :4], ft.randn(*shp(4)))


def test_encoder_decoder_stacks_and_init():
    layer = ft.nn.TransformerEncoderLayer(8, 2, 16)
    enc = ft.nn.TransformerEncoder(layer, 3, norm=ft.nn.LayerNorm(8))
    names = [n for n, _ in enc.named_parameters()]
    tl = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(8, 2, 16), 3, norm=torch.nn.LayerNorm(8),
                                     enable_nested_tensor=False)
    assert names == [n for n, _ in tl.named_parameters()]
    assert enc.layers[0].linear1.weight is not enc.layers[1].linear1.weight
    t = ft.nn.Transformer(16, 4, 1, 1, 32)
    w = t.encoder.layers[0].self_attn.in_proj_weight.detach().numpy()
    bound = (6.0 / (16 + 48)) ** 0.5
    assert np.abs(w).max() <= bound and w.std() > bound / 3

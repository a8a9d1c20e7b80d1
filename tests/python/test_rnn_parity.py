"""Parity of nn.RNN/LSTM/GRU and their cells with PyTorch (weights copied from a torch module)."""

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

DT = {"float64": (torch.float64, ft.float64, 1e-10), "float32": (torch.float32, ft.float32, 2e-5)}


def _ft(t):
    return ft.tensor(t.detach().numpy().copy())


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _close(a, b, tol):
    np.testing.assert_allclose(_np(b), _np(a), rtol=tol, atol=tol)


def _pair(cls, args, kw, dtype):
    tdt, fdt, tol = DT[dtype]
    tm = getattr(torch.nn, cls)(*args, **kw).to(tdt)
    fm = getattr(ft.nn, cls)(*args, **kw, dtype=fdt)
    fm.load_state_dict({k: _ft(v) for k, v in tm.state_dict().items()})
    return tm, fm, tdt, tol


def _flat(o):
    if isinstance(o, (torch.nn.utils.rnn.PackedSequence, ft.nn.utils.rnn.PackedSequence)):
        return [o.data]
    if isinstance(o, (tuple, list)):
        out = []
        for x in o:
            out += _flat(x)
        return out
    if isinstance(o, torch.nn.utils.rnn.PackedSequence) or isinstance(o, ft.nn.utils.rnn.PackedSequence):
        return [o.data]
    return [o]


def _check(tm, fm, tol, tin, fin, thx=None, fhx=None):
    to = tm(tin) if thx is None else tm(tin, thx)
    fo = fm(fin) if fhx is None else fm(fin, fhx)
    tl, fl = _flat(to), _flat(fo)
    assert len(tl) == len(fl)
    for a, b in zip(tl, fl):
        assert tuple(a.shape) == tuple(b.shape)
        _close(a, b, tol)
    sum(x.sum() * (i + 1) for i, x in enumerate(tl)).backward()
    sum(x.sum() * (i + 1) for i, x in enumerate(fl)).backward()
    fp = dict(fm.named_parameters())
    for n, p in tm.named_parameters():
        _close(p.grad, fp[n].grad, tol * 10)
    return to, fo


CONFIGS = [
    dict(),
    dict(num_layers=2),
    dict(bidirectional=True),
    dict(num_layers=2, bidirectional=True, batch_first=True),
    dict(bias=False),
    dict(num_layers=3, dropout=0.0, batch_first=True),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("cfg", range(len(CONFIGS)))
@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_forward_backward(cls, cfg, dtype):
    kw = dict(CONFIGS[cfg])
    tm, fm, tdt, tol = _pair(cls, (4, 6), kw, dtype)
    x = torch.randn(5, 3, 4, dtype=tdt, requires_grad=True)
    fx = _ft(x).requires_grad_()
    _check(tm, fm, tol, x, fx)
    _close(x.grad, fx.grad, tol * 10)


@pytest.mark.parametrize("nl", ["tanh", "relu"])
def test_rnn_nonlinearity(nl):
    tm, fm, tdt, tol = _pair("RNN", (4, 6), dict(nonlinearity=nl, num_layers=2), "float64")
    x = torch.randn(5, 3, 4, dtype=tdt)
    _check(tm, fm, tol, x, _ft(x))


@pytest.mark.parametrize("bi", [False, True])
def test_lstm_proj_size(bi):
    tm, fm, tdt, tol = _pair("LSTM", (4, 6), dict(proj_size=3, num_layers=2, bidirectional=bi), "float64")
    x = torch.randn(5, 3, 4, dtype=tdt)
    d = 2 if bi else 1
    h0 = torch.randn(2 * d, 3, 3, dtype=tdt)
    c0 = torch.randn(2 * d, 3, 6, dtype=tdt)
    to, fo = _check(tm, fm, tol, x, _ft(x), (h0, c0), (_ft(h0), _ft(c0)))
    assert tuple(fo[1][0].shape) == (2 * d, 3, 3)


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_initial_state_and_grad(cls):
    tm, fm, tdt, tol = _pair(cls, (4, 6), dict(num_layers=2, bidirectional=True), "float64")
    x = torch.randn(5, 3, 4, dtype=tdt)
    h0 = torch.randn(4, 3, 6, dtype=tdt, requires_grad=True)
    fh0 = _ft(h0).requires_grad_()
    if cls == "LSTM":
        c0 = torch.randn(4, 3, 6, dtype=tdt, requires_grad=True)
        fc0 = _ft(c0).requires_grad_()
        _check(tm, fm, tol, x, _ft(x), (h0, c0), (fh0, fc0))
        _close(c0.grad, fc0.grad, 1e-9)
    else:
        _check(tm, fm, tol, x, _ft(x), h0, fh0)
    _close(h0.grad, fh0.grad, 1e-9)


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_unbatched(cls):
    tm, fm, tdt, tol = _pair(cls, (4, 6), dict(num_layers=2, bidirectional=True), "float64")
    x = torch.randn(5, 4, dtype=tdt)
    h0 = torch.randn(4, 6, dtype=tdt)
    if cls == "LSTM":
        _check(tm, fm, tol, x, _ft(x), (h0, h0 * 2), (_ft(h0), _ft(h0 * 2)))
    else:
        _check(tm, fm, tol, x, _ft(x), h0, _ft(h0))
        tm.zero_grad()
        fm.zero_grad()
        _check(tm, fm, tol, x, _ft(x))


@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_packed_sequence(cls, enforce_sorted):
    tm, fm, tdt, tol = _pair(cls, (4, 6), dict(num_layers=2, bidirectional=True), "float64")
    lengths = [5, 3, 2, 1] if enforce_sorted else [2, 5, 1, 3]
    x = torch.randn(5, 4, 4, dtype=tdt)
    tp = torch.nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=enforce_sorted)
    fp = ft.nn.utils.rnn.pack_padded_sequence(_ft(x), lengths, enforce_sorted=enforce_sorted)
    h0 = torch.randn(4, 4, 6, dtype=tdt)
    if cls == "LSTM":
        to, fo = _check(tm, fm, tol, tp, fp, (h0, h0 + 1), (_ft(h0), _ft(h0 + 1)))
    else:
        to, fo = _check(tm, fm, tol, tp, fp, h0, _ft(h0))
    assert isinstance(fo[0], ft.nn.utils.rnn.PackedSequence)
    tpad, tl = torch.nn.utils.rnn.pad_packed_sequence(to[0])
    fpad, fl = ft.nn.utils.rnn.pad_packed_sequence(fo[0])
    _close(tpad, fpad, tol)
    assert fl.tolist() == tl.tolist()


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_dropout_train_mode(cls):
    fm = getattr(ft.nn, cls)(4, 6, num_layers=2, dropout=0.5)
    x = ft.randn(5, 3, 4)
    fm.train()
    a = fm(x)[0]
    fm.eval()
    b, c = fm(x)[0], fm(x)[0]
    _close(b, c, 0)
    assert not np.allclose(_np(a), _np(b))


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_parameter_names_shapes_init_repr(cls):
    for kw in [dict(), dict(num_layers=2, bidirectional=True, bias=False, batch_first=True, dropout=0.25)]:
        t = getattr(torch.nn, cls)(4, 16, **kw)
        f = getattr(ft.nn, cls)(4, 16, **kw)
        assert [(n, tuple(p.shape)) for n, p in t.named_parameters()] == \
               [(n, tuple(p.shape)) for n, p in f.named_parameters()]
        assert repr(t) == repr(f)
        for p in f.parameters():
            v = _np(p)
            assert np.abs(v).max() <= 0.25 and v.std() > 0.05
        assert f.flatten_parameters() is None
        assert len(f.all_weights) == len(t.all_weights)
    t = torch.nn.LSTM(4, 16, proj_size=2, num_layers=2)
    f = ft.nn.LSTM(4, 16, proj_size=2, num_layers=2)
    assert repr(t) == repr(f)
    assert [(n, tuple(p.shape)) for n, p in t.named_parameters()] == \
           [(n, tuple(p.shape)) for n, p in f.named_parameters()]


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_errors(cls):
    f = getattr(ft.nn, cls)(4, 6)
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. Expected 4, got 5"):
        f(ft.randn(3, 2, 5))
    with pytest.raises(ValueError, match="Expected input to be 2D or 3D, got 4D"):
        f(ft.randn(3, 2, 4, 1))
    bad = ft.randn(1, 3, 6)
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 2, 6\), got \[1, 3, 6\]"):
        f(ft.randn(3, 2, 4), (bad, bad) if cls == "LSTM" else bad)
    if cls != "LSTM":
        with pytest.raises(ValueError):
            getattr(ft.nn, cls)(4, 6, proj_size=2)


CELLS = [("RNNCell", dict()), ("RNNCell", dict(nonlinearity="relu")), ("RNNCell", dict(bias=False)),
         ("LSTMCell", dict()), ("LSTMCell", dict(bias=False)), ("GRUCell", dict()), ("GRUCell", dict(bias=False))]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("ci", range(len(CELLS)))
def test_cells(ci, dtype):
    cls, kw = CELLS[ci]
    tm, fm, tdt, tol = _pair(cls, (4, 6), kw, dtype)
    assert repr(tm) == repr(fm)
    x = torch.randn(3, 4, dtype=tdt)
    h = torch.randn(3, 6, dtype=tdt)
    if cls == "LSTMCell":
        _check(tm, fm, tol, x, _ft(x), (h, h * 0.5), (_ft(h), _ft(h * 0.5)))
    else:
        _check(tm, fm, tol, x, _ft(x), h, _ft(h))
    tm.zero_grad()
    fm.zero_grad()
    _check(tm, fm, tol, x, _ft(x))
    tm.zero_grad()
    fm.zero_grad()
    _check(tm, fm, tol, x[0], _ft(x[0]))  # unbatched


def test_cell_errors():
    c = ft.nn.GRUCell(4, 6)
    with pytest.raises(ValueError, match="GRUCell: Expected input to be 1D or 2D, got 3D instead"):
        c(ft.randn(1, 2, 4))
    with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 5 expected 4"):
        c(ft.randn(2, 5))
    with pytest.raises(RuntimeError, match="Input batch size 2 doesn't match hidden batch size 3"):
        c(ft.randn(2, 4), ft.randn(3, 6))

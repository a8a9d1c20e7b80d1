"""The fused LSTM/GRU cells (one native op per time step) against PyTorch:
values, first and second derivatives, and bad input."""

import numpy as np
import pytest

import ferrotorch as ft
from ferrotorch import _C

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")


def _copy_weights(ours, ref):
    for (n, p), (m, q) in zip(ours.named_parameters(), ref.named_parameters()):
        assert n == m
        with ft.no_grad():
            p.copy_(ft.tensor(q.detach().numpy()))


@pytest.mark.parametrize("cls", ["LSTM", "GRU"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_layer_values_and_grads_match_torch(cls, dtype, bidirectional):
    torch.manual_seed(0)
    ref = getattr(torch.nn, cls)(5, 7, num_layers=2, bidirectional=bidirectional, dtype=getattr(torch, dtype))
    ours = getattr(ft.nn, cls)(5, 7, num_layers=2, bidirectional=bidirectional, dtype=getattr(ft, dtype))
    _copy_weights(ours, ref)
    x = np.random.default_rng(1).standard_normal((6, 3, 5)).astype(dtype)
    tx, fx = torch.tensor(x, requires_grad=True), ft.tensor(x, requires_grad=True)
    to, th = ref(tx)
    fo, fh = ours(fx)
    w = np.random.default_rng(2).standard_normal(to.shape).astype(dtype)
    tl = (to * torch.tensor(w)).sum() + (th[0] if cls == "LSTM" else th).sum()
    fl = (fo * ft.tensor(w)).sum() + (fh[0] if cls == "LSTM" else fh).sum()
    tl.backward()
    fl.backward()
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(fo.detach().numpy(), to.detach().numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=tol, atol=tol)
    for p, q in zip(ours.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=tol, atol=tol)


def _cell_inputs(lib, gates, hidden, seed):
    rng = np.random.default_rng(seed)
    mk = lambda *s: lib.tensor(rng.standard_normal(s) * 1.5, dtype=lib.float64, requires_grad=True)
    return mk(3, gates * hidden), mk(3, gates * hidden), mk(3, hidden)


def _torch_lstm(ig, hg, cx):
    i, f, g, o = (ig + hg).chunk(4, 1)
    cy = f.sigmoid() * cx + i.sigmoid() * g.tanh()
    return o.sigmoid() * cy.tanh(), cy


def _torch_gru(ig, hg, hx):
    ir, iz, inn = ig.chunk(3, 1)
    hr, hz, hn = hg.chunk(3, 1)
    r, z = (ir + hr).sigmoid(), (iz + hz).sigmoid()
    n = (inn + r * hn).tanh()
    return n + z * (hx - n)


@pytest.mark.parametrize("which", ["lstm", "gru", "lstm_h_only", "lstm_c_only"])
def test_cell_first_and_second_derivatives_match_torch(which):
    gates = 3 if which == "gru" else 4
    ours, ref = _cell_inputs(ft, gates, 4, 3), _cell_inputs(torch, gates, 4, 3)

    def out(lib, args):
        if which == "gru":
            return [_C._fused_gru_cell(*args) if lib is ft else _torch_gru(*args)]
        h, c = _C._fused_lstm_cell(*args) if lib is ft else _torch_lstm(*args)
        return {"lstm": [h, c], "lstm_h_only": [h], "lstm_c_only": [c]}[which]

    w = np.random.default_rng(4).standard_normal((3, 4))
    results = []
    for lib, args in ((ft, ours), (torch, ref)):
        loss = sum(((o * lib.tensor(w * (k + 1))) ** 2).sum() for k, o in enumerate(out(lib, args)))
        grads = lib.autograd.grad(loss, args, create_graph=True)
        # Second derivative: of the sum of the gradient of each input.
        second = lib.autograd.grad(sum((g * g).sum() for g in grads), args)
        results.append([g.detach().numpy() for g in grads] + [g.numpy() for g in second])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_cell_grad_fn_names():
    ig, hg, cx = _cell_inputs(ft, 4, 2, 0)
    h, c = _C._fused_lstm_cell(ig, hg, cx)
    assert h.grad_fn.name() == c.grad_fn.name() == "ThnnFusedLstmCellBackward0"
    ig, hg, hx = _cell_inputs(ft, 3, 2, 0)
    assert _C._fused_gru_cell(ig, hg, hx).grad_fn.name() == "ThnnFusedGruCellBackward0"


def test_cell_bad_input_raises():
    with pytest.raises(RuntimeError, match=r"\(batch, hidden\)"):
        _C._fused_lstm_cell(ft.zeros(2, 8), ft.zeros(2, 8), ft.zeros(2, 3))
    with pytest.raises(RuntimeError, match="gates"):
        _C._fused_gru_cell(ft.zeros(2, 7), ft.zeros(2, 7), ft.zeros(2, 2))
    with pytest.raises(RuntimeError, match="float32 or float64"):
        _C._fused_lstm_cell(ft.zeros(2, 8, dtype=ft.float16), ft.zeros(2, 8, dtype=ft.float16),
                            ft.zeros(2, 2, dtype=ft.float16))


def test_half_precision_layer_still_runs_composed():
    ref, ours = torch.nn.LSTM(3, 4), ft.nn.LSTM(3, 4)
    _copy_weights(ours, ref)
    ref, ours = ref.to(torch.bfloat16), ours.to(ft.bfloat16)
    x = np.random.default_rng(0).standard_normal((5, 2, 3)).astype("float32")
    to = ref(torch.tensor(x).to(torch.bfloat16))[0].float().detach().numpy()
    fo = ours(ft.tensor(x).to(ft.bfloat16))[0].float().detach().numpy()
    np.testing.assert_allclose(fo, to, rtol=2e-2, atol=2e-2)

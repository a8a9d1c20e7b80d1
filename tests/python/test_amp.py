"""finfo/iinfo, autocast and GradScaler against PyTorch."""

import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="parity tests need PyTorch from ../shared/wheels")

FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]


@pytest.mark.parametrize("name", FLOATS)
def test_finfo_matches_torch(name):
    a, b = ft.finfo(getattr(ft, name)), torch.finfo(getattr(torch, name))
    for attr in ("bits", "max", "min", "eps", "tiny", "smallest_normal", "resolution"):
        assert getattr(a, attr) == getattr(b, attr), attr


@pytest.mark.parametrize("name", INTS)
def test_iinfo_matches_torch(name):
    a, b = ft.iinfo(getattr(ft, name)), torch.iinfo(getattr(torch, name))
    assert (a.bits, a.min, a.max) == (b.bits, b.min, b.max)


def test_finfo_rejects_integer_types():
    with pytest.raises(TypeError):
        ft.finfo(ft.int32)
    with pytest.raises(TypeError):
        ft.iinfo(ft.float32)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_autocast_casts_linear_and_conv_only(dtype):
    for lib in (ft, torch):
        lib.manual_seed(0)
    lin_t = torch.nn.Linear(4, 3)
    lin_f = ft.nn.Linear(4, 3)
    lin_f.load_state_dict({k: ft.tensor(v.numpy()) for k, v in lin_t.state_dict().items()})
    x = torch.randn(2, 4)
    with torch.amp.autocast("cpu", dtype=getattr(torch, dtype)):
        yt = lin_t(x)
        st = yt.sum()
    with ft.amp.autocast("cpu", dtype=getattr(ft, dtype)):
        yf = lin_f(ft.tensor(x.numpy()))
        sf = yf.sum()
        assert ft.is_autocast_enabled("cpu")
    assert not ft.is_autocast_enabled("cpu")
    assert str(yf.dtype) == str(yt.dtype)
    assert str(sf.dtype) == str(st.dtype)
    assert yf.float().reshape(-1).tolist() == pytest.approx(yt.float().reshape(-1).tolist(), abs=2e-2)


def _scaler_run(lib, grads_scale):
    w = lib.nn.Parameter(lib.tensor([1.0, -2.0]))
    opt = lib.optim.SGD([w], lr=0.1)
    scaler = lib.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
    scales = []
    for coef in grads_scale:
        opt.zero_grad()
        scaler.scale((w * lib.tensor(coef)).sum()).backward()
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
    return w.tolist(), scales


def test_grad_scaler_trajectory_matches_torch():
    seq = [[1.0, 2.0], [float("inf"), 1.0], [0.5, 0.5], [1.0, -1.0], [2.0, 2.0], [float("nan"), 0.0]]
    wf, sf = _scaler_run(ft, seq)
    wt, st = _scaler_run(torch, seq)
    assert sf == st
    assert wf == pytest.approx(wt)


def test_autocast_rejects_unknown_device():
    with pytest.raises(RuntimeError):
        ft.amp.autocast("tpu")

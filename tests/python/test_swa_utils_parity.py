"""optim.swa_utils against PyTorch: averaged parameters (SWA and EMA), update_bn
statistics, SWALR learning-rate sequences."""

import warnings

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")


def _np(t):
    return np.array(t.detach().tolist(), dtype=np.float64)


def _models():
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2))
    fm = ft.nn.Sequential(ft.nn.Linear(3, 4), ft.nn.BatchNorm1d(4), ft.nn.Linear(4, 2))
    _sync(fm, tm)
    return tm, fm


def _sync(fm, tm):
    with ft.no_grad():
        for (n, fp), (_, tp) in zip(fm.named_parameters(), tm.named_parameters()):
            fp.copy_(ft.tensor(tp.detach().tolist()))
        for (n, fb), (_, tb) in zip(fm.named_buffers(), tm.named_buffers()):
            if tb.dtype.is_floating_point:
                fb.copy_(ft.tensor(tb.tolist()))
            else:
                fb.fill_(int(tb))


def _perturb(tm, fm, k):
    rng = np.random.default_rng(k)
    with torch.no_grad():
        for p in tm.parameters():
            p.add_(torch.tensor(rng.standard_normal(tuple(p.shape)).tolist()))
        tm[1].running_mean.add_(0.1 * k)
    _sync(fm, tm)


AVG = [
    ("swa", {}),
    ("ema_multi", dict(multi_avg_fn="ema_multi")),
    ("ema", dict(avg_fn="ema")),
    ("swa_multi", dict(multi_avg_fn="swa_multi")),
    ("swa_buffers", dict(use_buffers=True)),
]


def _kwargs(lib, kw):
    out = dict(kw)
    su = lib.optim.swa_utils
    if kw.get("multi_avg_fn") == "ema_multi":
        out["multi_avg_fn"] = su.get_ema_multi_avg_fn(0.9)
    if kw.get("multi_avg_fn") == "swa_multi":
        out["multi_avg_fn"] = su.get_swa_multi_avg_fn()
    if kw.get("avg_fn") == "ema":
        out["avg_fn"] = su.get_ema_avg_fn(0.8)
    return out


@pytest.mark.parametrize("name,kw", AVG, ids=[a[0] for a in AVG])
def test_averaged_model_matches_torch(name, kw):
    tm, fm = _models()
    ta = torch.optim.swa_utils.AveragedModel(tm, **_kwargs(torch, kw))
    fa = ft.optim.swa_utils.AveragedModel(fm, **_kwargs(ft, kw))
    assert sorted(fa.state_dict()) == sorted(ta.state_dict())
    for k in range(5):
        _perturb(tm, fm, k)
        ta.update_parameters(tm)
        fa.update_parameters(fm)
        assert int(fa.n_averaged) == int(ta.n_averaged) == k + 1
        for (n, a), (_, b) in zip(fa.state_dict().items(), ta.state_dict().items()):
            np.testing.assert_allclose(_np(a), _np(b), rtol=1e-5, atol=1e-6, err_msg=f"{n} after {k + 1}")
    # The averaged copy is independent of the live model.
    with ft.no_grad():
        fm[0].weight.add_(100.0)
    assert np.abs(_np(fa.module[0].weight) - _np(fm[0].weight)).max() > 50
    x = np.random.default_rng(9).standard_normal((6, 3))
    ta.eval()
    fa.eval()
    np.testing.assert_allclose(_np(fa(ft.tensor(x.tolist()))), _np(ta(torch.tensor(x.tolist(), dtype=torch.float32))),
                               rtol=1e-5, atol=1e-5)


def test_avg_fn_errors_like_torch():
    for lib in (torch, ft):
        su = lib.optim.swa_utils
        with pytest.raises(ValueError, match="Invalid decay value 1.5 provided"):
            su.get_ema_avg_fn(1.5)
        with pytest.raises(ValueError, match="Invalid decay value -0.1 provided"):
            su.get_ema_multi_avg_fn(-0.1)
        with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn should be provided"):
            su.AveragedModel(lib.nn.Linear(2, 2), avg_fn=su.get_swa_avg_fn(), multi_avg_fn=su.get_swa_multi_avg_fn())


def test_update_bn_matches_torch():
    tm, fm = _models()
    tm[1].momentum = 0.3
    fm[1].momentum = 0.3
    rng = np.random.default_rng(3)
    batches = [rng.standard_normal((5, 3)) * (i + 1) + i for i in range(4)]
    tl = [(torch.tensor(b.tolist(), dtype=torch.float32), 0) for b in batches]
    fl = [(ft.tensor(b.tolist()), 0) for b in batches]
    tm.eval()
    fm.eval()
    torch.optim.swa_utils.update_bn(tl, tm)
    ft.optim.swa_utils.update_bn(fl, fm)
    assert not fm.training and fm[1].momentum == 0.3
    for n in ("running_mean", "running_var"):
        np.testing.assert_allclose(_np(getattr(fm[1], n)), _np(getattr(tm[1], n)), rtol=1e-5, atol=1e-6)
    assert int(fm[1].num_batches_tracked) == int(tm[1].num_batches_tracked) == 4
    # A model without BatchNorm is left alone.
    ft.optim.swa_utils.update_bn(fl, ft.nn.Linear(3, 3))


@pytest.mark.parametrize("kw", [dict(swa_lr=0.05), dict(swa_lr=[0.02, 0.3], anneal_epochs=4, anneal_strategy="linear"),
                                dict(swa_lr=0.01, anneal_epochs=0), dict(swa_lr=0.5, anneal_epochs=1)])
def test_swalr_sequence_and_state_match_torch(kw):
    seqs = []
    for lib in (torch, ft):
        ps = [lib.nn.Parameter(lib.zeros(2)) for _ in range(2)]
        opt = lib.optim.SGD([{"params": [ps[0]], "lr": 0.1}, {"params": [ps[1]], "lr": 1.0}], lr=0.1)
        sched = lib.optim.swa_utils.SWALR(opt, **kw)
        seq = [sched.get_last_lr()]
        for _ in range(15):
            opt.step()
            sched.step()
            seq.append(sched.get_last_lr())
        sd = sched.state_dict()
        seqs.append((seq, sorted(sd), {k: v for k, v in sd.items() if k != "anneal_func"}))
    assert seqs[1][0] == seqs[0][0]
    assert seqs[1][1] == seqs[0][1]
    assert seqs[1][2] == seqs[0][2]


def test_swalr_errors_like_torch():
    for lib in (torch, ft):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.zeros(1))], lr=0.1)
        with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear', instead got x"):
            lib.optim.swa_utils.SWALR(opt, 0.1, anneal_strategy="x")
        with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0, got -1"):
            lib.optim.swa_utils.SWALR(opt, 0.1, anneal_epochs=-1)
        with pytest.raises(ValueError, match="swa_lr must have the same length as optimizer.param_groups"):
            lib.optim.swa_utils.SWALR(opt, [0.1, 0.2])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            sched = lib.optim.swa_utils.SWALR(opt, 0.1)
        with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
            sched.get_lr()

"""RReLU (eval parity, train-mode slope distribution and gradient), SyncBatchNorm (PyTorch's
behaviour without a process group: plain batch norm, running statistics, momentum=None,
convert_sync_batchnorm) and DataParallel (without GPUs: runs the module), against PyTorch."""

import numpy as np
import pytest

import ferrotorch as ft
from _parity import as_np, assert_same, parity, rnd, errors_match

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")


def same_error(fn, match_message=True):
    errors_match(torch, fn, same_message=match_message)


# -- RReLU ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lower,upper", [(1.0 / 8, 1.0 / 3), (0.1, 0.3), (0.2, 0.2)])
def test_rrelu_eval_parity(lower, upper):
    x = rnd(4, 5)
    x[0, :2] = 0.0  # the gradient at 0 is the slope, as leaky_relu's
    parity(torch, lambda l, a: l.nn.functional.rrelu(a, lower, upper, training=False), x, grad=(0,))
    parity(torch, lambda l, a: l.nn.RReLU(lower, upper).eval()(a), x, grad=(0,))
    parity(torch, lambda l, a: l.nn.functional.rrelu_(a.clone(), lower, upper), x)


def test_rrelu_module_repr_and_inplace():
    for args, kw in (((), {}), ((0.1, 0.3), dict(inplace=True))):
        assert repr(ft.nn.RReLU(*args, **kw)) == repr(torch.nn.RReLU(*args, **kw))
    x = ft.from_numpy(rnd(3, 4))
    y = ft.nn.RReLU(inplace=True).eval()(x)
    assert y is x
    np.testing.assert_allclose(as_np(x), np.where(rnd(3, 4) >= 0, rnd(3, 4), rnd(3, 4) * (1 / 8 + 1 / 3) / 2),
                               rtol=1e-6)


def test_rrelu_train_distribution_and_gradient():
    lower, upper = 0.1, 0.4
    x = ft.from_numpy(-np.abs(rnd(200_000)) - 0.01).requires_grad_()
    m = ft.nn.RReLU(lower, upper)
    assert m.training
    out = m(x)
    out.sum().backward()
    slope = as_np(out) / as_np(x)
    assert slope.min() >= lower - 1e-6 and slope.max() <= upper + 1e-6
    # U(lower, upper): mean (l+u)/2, variance (u-l)^2/12, and roughly flat in four bins.
    assert abs(slope.mean() - (lower + upper) / 2) < 2e-3
    assert abs(slope.var() - (upper - lower) ** 2 / 12) < 5e-4
    hist = np.histogram(slope, bins=4, range=(lower, upper))[0] / slope.size
    assert np.abs(hist - 0.25).max() < 0.01
    # The gradient is the drawn slope.
    np.testing.assert_allclose(as_np(x.grad), slope, rtol=1e-5)
    # Positive inputs pass through untouched, with gradient 1; torch's train mode does the same.
    for lib in (ft, torch):
        p = lib.from_numpy(np.abs(rnd(100)) + 0.1).requires_grad_()
        o = lib.nn.functional.rrelu(p, lower, upper, training=True)
        o.sum().backward()
        np.testing.assert_array_equal(as_np(o), as_np(p))
        np.testing.assert_array_equal(as_np(p.grad), np.ones(100, "float32"))


def test_rrelu_errors():
    x = rnd(4)
    same_error(lambda l: l.nn.functional.rrelu(l.from_numpy(x), 0.5, 0.1, True))
    same_error(lambda l: l.nn.functional.rrelu(l.from_numpy(x), 0.5, 0.1, False))
    same_error(lambda l: l.nn.functional.rrelu(l.from_numpy(x).long(), 0.1, 0.5, True))


# -- SyncBatchNorm ----------------------------------------------------------------------------------


def _copy(tm, fm):
    fm.load_state_dict({k: ft.from_numpy(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})


@pytest.mark.parametrize("kw", [dict(), dict(momentum=None), dict(affine=False), dict(track_running_stats=False),
                                dict(eps=1e-3, momentum=0.3, bias=False)])
@pytest.mark.parametrize("shape", [(8, 4), (6, 4, 5), (3, 4, 3, 5), (2, 4, 2, 3, 3)])
def test_syncbatchnorm_matches_torch_without_process_group(kw, shape):
    tm, fm = torch.nn.SyncBatchNorm(4, **kw), ft.nn.SyncBatchNorm(4, **kw)
    assert repr(fm) == repr(tm)
    assert [(k, tuple(v.shape)) for k, v in fm.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
    if kw.get("affine", True):
        with torch.no_grad():
            tm.weight.uniform_(0.5, 1.5)
            if tm.bias is not None:
                tm.bias.uniform_(-0.5, 0.5)
    _copy(tm, fm)
    for step in range(3):
        for train in (True, False):
            tm.train(train), fm.train(train)
            x = rnd(*shape, seed=step) * 2 + 1
            outs, grads = [], []
            for lib, m in ((ft, fm), (torch, tm)):
                xi = lib.from_numpy(x.copy()).requires_grad_()
                out = m(xi)
                (out * lib.from_numpy(rnd(*shape, seed=9))).sum().backward()
                outs.append(out)
                grads.append([xi.grad] + [p.grad for p in m.parameters()])
            assert_same(outs[0], outs[1], rtol=1e-4, atol=1e-5)
            for a, b in zip(*grads):
                assert_same(a, b, rtol=1e-4, atol=1e-4)
            for p in list(fm.parameters()) + list(tm.parameters()):
                p.grad = None
    for (k, a), (_, b) in zip(fm.state_dict().items(), tm.state_dict().items()):
        assert_same(a, b, rtol=1e-5, atol=1e-6)


def test_syncbatchnorm_errors_and_convert():
    same_error(lambda l: l.nn.SyncBatchNorm(3)(l.from_numpy(rnd(4))))
    same_error(lambda l: l.nn.SyncBatchNorm(0)(l.from_numpy(np.zeros((4, 0), "float32"))))
    tnet = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 1), torch.nn.BatchNorm2d(2, momentum=0.2),
                               torch.nn.Sequential(torch.nn.BatchNorm1d(3, affine=False)))
    fnet = ft.nn.Sequential(ft.nn.Conv2d(1, 2, 1), ft.nn.BatchNorm2d(2, momentum=0.2),
                            ft.nn.Sequential(ft.nn.BatchNorm1d(3, affine=False)))
    fbn = fnet[1]
    tconv, fconv = torch.nn.SyncBatchNorm.convert_sync_batchnorm(tnet), ft.nn.SyncBatchNorm.convert_sync_batchnorm(fnet)
    assert repr(fconv) == repr(tconv)
    assert isinstance(fconv[1], ft.nn.SyncBatchNorm) and isinstance(fconv[2][0], ft.nn.SyncBatchNorm)
    # The converted layer shares the original's parameters and buffers.
    assert fconv[1].weight is fbn.weight and fconv[1].running_mean is fbn.running_mean
    single = ft.nn.SyncBatchNorm.convert_sync_batchnorm(ft.nn.BatchNorm3d(5).eval())
    assert isinstance(single, ft.nn.SyncBatchNorm) and not single.training


# -- DataParallel -----------------------------------------------------------------------------------


def test_data_parallel_runs_the_module():
    tm = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    fm = ft.nn.Sequential(ft.nn.Linear(4, 3), ft.nn.ReLU(), ft.nn.Linear(3, 2))
    tdp, fdp = torch.nn.DataParallel(tm), ft.nn.DataParallel(fm)
    assert repr(fdp) == repr(tdp)
    assert fdp.device_ids == tdp.device_ids == []
    assert list(fdp.state_dict()) == list(tdp.state_dict())
    assert fdp.module is fm
    fdp.load_state_dict({k: ft.from_numpy(v.numpy().copy()) for k, v in tdp.state_dict().items()})
    x = rnd(5, 4)
    outs, grads = [], []
    for lib, m in ((ft, fdp), (torch, tdp)):
        out = m(lib.from_numpy(x.copy()))
        out.pow(2).sum().backward()
        outs.append(out)
        grads.append([p.grad for p in m.parameters()])
    assert_same(outs[0], outs[1], rtol=1e-5, atol=1e-6)
    for a, b in zip(*grads):
        assert_same(a, b, rtol=1e-5, atol=1e-6)
    # Keyword arguments go through too.
    tmk, fmk = torch.nn.DataParallel(torch.nn.Softmax(dim=0)), ft.nn.DataParallel(ft.nn.Softmax(dim=0))
    assert_same(fmk(ft.from_numpy(x.copy())), tmk(torch.from_numpy(x.copy())))
    assert ft.nn.parallel.DataParallel is ft.nn.DataParallel


@pytest.mark.skipif(torch.cuda.is_available() or ft.cuda.is_available(), reason="checks the error raised on a machine without GPUs; with one the call runs instead")
def test_data_parallel_functional_without_devices():
    same_error(lambda l: l.nn.parallel.data_parallel(l.nn.Linear(2, 2), l.from_numpy(rnd(3, 2))))


def test_rrelu_inplace_training_autograd():
    # Equal bounds make the random slope deterministic, so the two libraries can be compared.
    x = np.array([-1.0, 2.0, -3.0, 0.0, np.inf, -np.inf], "float32")
    outs, grads = [], []
    for lib in (ft, torch):
        a = lib.from_numpy(x.copy()).requires_grad_()
        b = a * 1
        o = lib.nn.functional.rrelu(b, 0.25, 0.25, training=True, inplace=True)
        assert o is b
        o[:4].sum().backward()
        outs.append(o)
        grads.append(a.grad)
    assert_same(outs[0], outs[1])
    assert_same(grads[0], grads[1])
    same_error(lambda l: l.nn.functional.rrelu(l.from_numpy(x.copy()).requires_grad_(), training=True, inplace=True))

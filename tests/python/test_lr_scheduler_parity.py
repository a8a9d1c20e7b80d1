"""Learning-rate schedulers against PyTorch: LR (and momentum) sequences over 30 steps,
state-dict keys and round trips, errors."""

import math
import warnings

import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

STEPS = 30


def _opt(lib, kind="SGD", groups=2):
    ps = [lib.nn.Parameter(lib.zeros(2)) for _ in range(groups)]
    pg = [{"params": [p], "lr": 0.1 * (i + 1)} for i, p in enumerate(ps)]
    if kind == "SGD":
        return lib.optim.SGD(pg, lr=0.1, momentum=0.9)
    return lib.optim.Adam(pg, lr=0.1)


def _lam(e):
    return 0.95 ** e


def _mul(e):
    return 0.9 if e % 3 else 1.05


class _Scale:
    """A callable object: its ``__dict__`` goes into the state dict."""

    def __init__(self, k):
        self.k = k

    def __call__(self, e):
        return 1.0 / (1.0 + self.k * e)


def _build(lib, name, opt):
    S = lib.optim.lr_scheduler
    if name == "LambdaLR":
        return S.LambdaLR(opt, [_lam, _Scale(0.1)])
    if name == "MultiplicativeLR":
        return S.MultiplicativeLR(opt, _mul)
    if name == "StepLR":
        return S.StepLR(opt, step_size=4, gamma=0.5)
    if name == "MultiStepLR":
        return S.MultiStepLR(opt, milestones=[3, 7, 7, 15], gamma=0.3)
    if name == "ConstantLR":
        return S.ConstantLR(opt, factor=0.25, total_iters=6)
    if name == "LinearLR":
        return S.LinearLR(opt, start_factor=0.1, end_factor=0.9, total_iters=12)
    if name == "ExponentialLR":
        return S.ExponentialLR(opt, gamma=0.93)
    if name == "PolynomialLR":
        return S.PolynomialLR(opt, total_iters=20, power=2.5)
    if name == "CosineAnnealingLR":
        return S.CosineAnnealingLR(opt, T_max=7, eta_min=0.001)
    if name == "CosineAnnealingWarmRestarts":
        return S.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2, eta_min=0.002)
    if name == "CyclicLR":
        return S.CyclicLR(opt, base_lr=0.01, max_lr=[0.1, 0.2], step_size_up=4, step_size_down=3,
                          mode="triangular2")
    if name == "CyclicLR-exp":
        return S.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=5, mode="exp_range", gamma=0.97)
    if name == "OneCycleLR":
        return S.OneCycleLR(opt, max_lr=[0.5, 1.0], total_steps=STEPS + 1)
    if name == "OneCycleLR-3":
        return S.OneCycleLR(opt, max_lr=0.5, epochs=4, steps_per_epoch=8, three_phase=True,
                            anneal_strategy="linear", pct_start=0.25)
    if name == "SequentialLR":
        a = S.LinearLR(opt, start_factor=0.2, total_iters=4)
        b = S.ExponentialLR(opt, gamma=0.9)
        c = S.StepLR(opt, step_size=3, gamma=0.5)
        return S.SequentialLR(opt, [a, b, c], milestones=[5, 12])
    if name == "ChainedScheduler":
        a = S.ConstantLR(opt, factor=0.5, total_iters=4)
        b = S.ExponentialLR(opt, gamma=0.9)
        c = S.CosineAnnealingLR(opt, T_max=10)
        return S.ChainedScheduler([a, b, c])
    raise AssertionError(name)


NAMES = ["LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR",
         "PolynomialLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts", "CyclicLR", "CyclicLR-exp",
         "OneCycleLR", "OneCycleLR-3", "SequentialLR", "ChainedScheduler"]


def _record(opt, sched):
    g = opt.param_groups
    mom = [grp.get("momentum", grp.get("betas", (None,))[0]) for grp in g]
    return list(sched.get_last_lr()), [grp["lr"] for grp in g], mom


def _run(lib, name, kind="SGD", steps=STEPS):
    opt = _opt(lib, kind)
    sched = _build(lib, name, opt)
    seq = [_record(opt, sched)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(steps):
            opt.step()
            sched.step()
            seq.append(_record(opt, sched))
    return seq, opt, sched


def _assert_seq(ours, ref):
    assert len(ours) == len(ref)
    for i, (a, b) in enumerate(zip(ours, ref)):
        for x, y in zip(a, b):
            assert len(x) == len(y)
            for u, v in zip(x, y):
                if v is None:
                    assert u is None
                else:
                    # Same Python float arithmetic, so the sequences agree to the last bit.
                    assert u == v or math.isclose(u, v, rel_tol=1e-15, abs_tol=1e-18), (i, a, b)


@pytest.mark.parametrize("kind", ["SGD", "Adam"])
@pytest.mark.parametrize("name", NAMES)
def test_lr_sequence_matches_torch(name, kind):
    ref, _, _ = _run(torch, name, kind)
    ours, _, _ = _run(ft, name, kind)
    assert len({tuple(r[0]) for r in ref}) > 1, "the schedule should change the rate"
    _assert_seq(ours, ref)


def _plain(sd):
    """State dict with callables replaced by their names (functions differ between runs)."""
    out = {}
    for k, v in sd.items():
        if k == "_schedulers":
            out[k] = [_plain(s) for s in v]
        elif callable(v):
            out[k] = "<fn>"
        elif k == "milestones":
            out[k] = dict(v)
        else:
            out[k] = v
    return out


@pytest.mark.parametrize("name", NAMES)
def test_state_dict_matches_torch_and_round_trips(name):
    half = STEPS // 2
    ref, topt, tsched = _run(torch, name, steps=half)
    ours, fopt, fsched = _run(ft, name, steps=half)
    tsd, fsd = tsched.state_dict(), fsched.state_dict()
    assert sorted(fsd) == sorted(tsd)
    assert _plain(fsd) == _plain(tsd)

    # Resume in a fresh optimizer/scheduler pair from the saved states, as a checkpoint would.
    ref_full, _, _ = _run(torch, name)
    opt2 = _opt(ft)
    sched2 = _build(ft, name, opt2)
    sched2.load_state_dict(fsd)
    opt2.load_state_dict(fopt.state_dict())
    seq = [_record(opt2, sched2)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(STEPS - half):
            opt2.step()
            sched2.step()
            seq.append(_record(opt2, sched2))
    _assert_seq(seq, ref_full[half:])


def test_reduce_lr_on_plateau_matches_torch():
    metrics = [1.0, 0.9, 0.95, 0.95, 0.95, 0.89, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8,
               0.8, 0.8, 0.79999, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8]
    configs = [dict(patience=2), dict(mode="max", factor=0.5, patience=1, cooldown=2, threshold_mode="abs",
                                       threshold=0.01, min_lr=[0.01, 0.05]),
               dict(patience=0, factor=0.3, eps=1e-3, min_lr=0.004)]
    for cfg in configs:
        seqs = []
        for lib in (torch, ft):
            opt = _opt(lib)
            sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **cfg)
            seq = []
            for i, m in enumerate(metrics):
                opt.step()
                sched.step(lib.tensor(m) if i % 2 else m)
                seq.append((list(sched.get_last_lr()), sched.num_bad_epochs, sched.cooldown_counter,
                            float(sched.best)))
            seqs.append((seq, sched.state_dict()))
        assert seqs[1][0] == seqs[0][0], cfg
        assert seqs[1][1] == seqs[0][1]


def test_closed_form_with_epoch_argument_matches_torch():
    for name in ["StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR", "PolynomialLR",
                 "CosineAnnealingLR", "CosineAnnealingWarmRestarts"]:
        seqs = []
        for lib in (torch, ft):
            opt = _opt(lib)
            sched = _build(lib, name, opt)
            seq = []
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for e in [3, 7, 1, 12, 4.5 if name == "CosineAnnealingWarmRestarts" else 4, 20]:
                    opt.step()
                    sched.step(e)
                    seq.append(list(sched.get_last_lr()))
            seqs.append(seq)
        assert seqs[1] == seqs[0], name


def test_warnings_like_torch():
    for lib in (torch, ft):
        opt = _opt(lib)
        sched = lib.optim.lr_scheduler.StepLR(opt, 2)
        with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before"):
            sched.step()
        with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
            sched.get_lr()
        with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)`"):
            sched.step(3)


def test_errors_like_torch():
    S = "optim.lr_scheduler"
    cases = [
        ("ConstantLR", dict(factor=1.5)), ("LinearLR", dict(start_factor=0)), ("LinearLR", dict(end_factor=2)),
        ("CosineAnnealingWarmRestarts", dict(T_0=0)), ("CosineAnnealingWarmRestarts", dict(T_0=2, T_mult=0)),
        ("CosineAnnealingWarmRestarts", dict(T_0=2, eta_min="x")),
        ("ReduceLROnPlateau", dict(factor=1.0)), ("ReduceLROnPlateau", dict(mode="avg")),
        ("ReduceLROnPlateau", dict(threshold_mode="x")), ("ReduceLROnPlateau", dict(min_lr=[0.1])),
        ("OneCycleLR", dict(max_lr=1.0)), ("OneCycleLR", dict(max_lr=1.0, total_steps=0)),
        ("OneCycleLR", dict(max_lr=1.0, total_steps=5, pct_start=1)),
        ("OneCycleLR", dict(max_lr=1.0, total_steps=5, anneal_strategy="x")),
        ("OneCycleLR", dict(max_lr=[1.0], total_steps=5)),
        ("CyclicLR", dict(base_lr=0.1, max_lr=1.0, mode="x")),
        ("LambdaLR", dict(lr_lambda=[_lam])), ("MultiplicativeLR", dict(lr_lambda=3)),
        ("SequentialLR", dict(schedulers=[], milestones=[])),
    ]
    for name, kwargs in cases:
        errs = []
        for lib in (torch, ft):
            cls = getattr(lib.optim.lr_scheduler, name)
            with pytest.raises(Exception) as e:
                cls(_opt(lib), **kwargs)
            errs.append(e.value)
        assert type(errs[1]) is type(errs[0]) and str(errs[1]) == str(errs[0]), (name, errs)
    for lib in (torch, ft):
        with pytest.raises(TypeError, match="is not an Optimizer"):
            lib.optim.lr_scheduler.StepLR(object(), 2)
        with pytest.raises(KeyError, match="initial_lr"):
            lib.optim.lr_scheduler.StepLR(_opt(lib), 2, last_epoch=3)
        opt = lib.optim.Adam([lib.nn.Parameter(lib.zeros(1))])
        sched = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sched.step()
            sched.step()
            with pytest.raises(ValueError, match="Tried to step 3 times"):
                sched.step()
    assert S  # keeps the namespace name visible in failures


def test_lr_scheduler_base_is_public():
    assert issubclass(ft.optim.lr_scheduler.StepLR, ft.optim.lr_scheduler.LRScheduler)
    assert sorted(ft.optim.lr_scheduler.__all__) == sorted(torch.optim.lr_scheduler.__all__)

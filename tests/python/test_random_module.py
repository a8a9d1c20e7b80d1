"""``ferrotorch.random`` against ``torch.random``: the namespace, seeding (values, ranges, types),
state save/restore, and ``fork_rng`` restoring the CPU generator (samples after a fork equal the
samples drawn without it)."""

import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")


def test_namespace_matches_torch():
    assert sorted(ft.random.__all__) == sorted(torch.random.__all__)
    for name in ("seed", "get_rng_state", "set_rng_state", "manual_seed", "initial_seed"):
        assert getattr(ft, name) is getattr(ft.random, name)
    assert isinstance(ft.random.default_generator, ft.Generator)


@pytest.mark.parametrize("seed", [0, 7, 2**63 - 1, 2**64 - 1, -1, -(2**63), 1.9, True])
def test_manual_seed_initial_seed_like_torch(seed):
    for lib in (ft, torch):
        g = lib.random.manual_seed(seed)
        assert isinstance(g, lib.Generator)
    assert ft.random.initial_seed() == torch.random.initial_seed()


@pytest.mark.parametrize("seed", [2**64, -(2**63) - 1])
def test_manual_seed_out_of_range_like_torch(seed):
    errs = []
    for lib in (ft, torch):
        with pytest.raises(Exception) as info:
            lib.random.manual_seed(seed)
        errs.append((type(info.value), str(info.value)))
    assert errs[0] == errs[1]


def test_manual_seed_reproduces_samples():
    ft.random.manual_seed(123)
    a = ft.rand(5)
    ft.random.manual_seed(123)
    assert ft.equal(a, ft.rand(5))


def test_seed_is_the_new_initial_seed():
    for lib in (ft, torch):
        s = lib.random.seed()
        assert isinstance(s, int) and 0 <= s < 2**64
        assert lib.random.initial_seed() == s


def test_get_set_rng_state_replays():
    state = ft.random.get_rng_state()
    assert state.dtype == ft.uint8 and state.dim() == 1
    a = ft.randn(4)
    ft.random.set_rng_state(state)
    assert ft.equal(a, ft.randn(4))


def _fork_case(lib, fork_kwargs, body_draws):
    lib.manual_seed(42)
    with lib.random.fork_rng(**fork_kwargs):
        for _ in range(body_draws):
            lib.rand(3)
    return lib.rand(4)


@pytest.mark.parametrize("kwargs", [{}, {"devices": []}, {"devices": iter([])}])
def test_fork_rng_restores_cpu_state(kwargs):
    ft.manual_seed(42)
    plain = ft.rand(4)
    assert ft.equal(_fork_case(ft, kwargs, 3), plain)
    # Same behaviour in PyTorch (the samples themselves come from different generators).
    torch.manual_seed(42)
    t_plain = torch.rand(4)
    assert torch.equal(_fork_case(torch, dict(kwargs, devices=[]) if "devices" in kwargs else kwargs, 3), t_plain)


def test_fork_rng_disabled_does_not_restore():
    ft.manual_seed(42)
    ft.rand(3)
    expected = ft.rand(4)
    assert ft.equal(_fork_case(ft, {"enabled": False}, 1), expected)


def test_fork_rng_restores_after_an_exception():
    ft.manual_seed(5)
    expected = ft.rand(2)
    ft.manual_seed(5)
    with pytest.raises(KeyError):
        with ft.random.fork_rng():
            ft.rand(10)
            raise KeyError("x")
    assert ft.equal(ft.rand(2), expected)


def test_fork_rng_meta_device_type_is_a_no_op():
    ft.manual_seed(9)
    with ft.random.fork_rng(device_type="meta"):
        ft.rand(3)
    after = ft.rand(2)
    ft.manual_seed(9)
    ft.rand(3)
    assert ft.equal(after, ft.rand(2))


def test_fork_rng_unknown_device_type_raises():
    msgs = []
    for lib in (ft, torch):
        with pytest.raises(RuntimeError) as info:
            with lib.random.fork_rng(device_type="foo"):
                pass
        msgs.append(str(info.value))
    assert msgs[0].startswith("Expected one of cpu, cuda")
    assert msgs[0].endswith("device type at start of device string: foo")
    assert msgs[1].endswith("device type at start of device string: foo")


def test_thread_safe_generator_outside_workers_is_none():
    assert ft.random.thread_safe_generator() is None
    assert torch.random.thread_safe_generator() is None

"""``ferrotorch.func`` against ``torch.func``: the same functions transformed by both libraries on the
same float64 inputs (values, gradients, Jacobians, Hessians, batching), composition with each other and
with ordinary autograd, the module helpers, ``rearrange``, and the error messages."""

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")

from _parity import assert_same, from_np, rnd  # noqa: E402


def both(fn, *arrays, grad=False):
    """``fn(lib, *tensors)`` for ferrotorch and torch on float64 copies of ``arrays``."""
    outs = []
    for lib in (ft, torch):
        outs.append(fn(lib, *[from_np(lib, a.astype(np.float64), grad) for a in arrays]))
    return outs


def errors_match(torch, fn, *arrays, same_message=True):
    """Both libraries raise the same exception class with the same message (ferrotorch's class names
    aside)."""
    caught = []
    for lib in (ft, torch):
        try:
            fn(lib, *[from_np(lib, a.astype(np.float64)) for a in arrays])
        except Exception as e:  # noqa: BLE001 - the class is compared below
            caught.append(e)
        else:
            caught.append(None)
    ours, theirs = caught
    assert theirs is not None, "torch did not raise"
    assert ours is not None, f"ferrotorch did not raise (torch: {theirs!r})"
    assert type(ours).__name__ == type(theirs).__name__, f"{ours!r} vs {theirs!r}"
    assert str(ours).replace("ferrotorch", "torch") == str(theirs), f"\n{ours}\n  vs\n{theirs}"


def check(fn, *arrays, rtol=1e-9, atol=1e-10, grad=False):
    a, b = both(fn, *arrays, grad=grad)
    _same_tree(a, b, rtol, atol)
    return a


def _same_tree(a, b, rtol, atol):
    if isinstance(b, dict):
        assert isinstance(a, dict) and set(a) == set(b)
        for k in b:
            _same_tree(a[k], b[k], rtol, atol)
    elif isinstance(b, (tuple, list)):
        assert type(a) is type(b), f"{type(a)} != {type(b)}"
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same_tree(x, y, rtol, atol)
    else:
        assert_same(a, b, rtol, atol)


def f_scalar(L):
    return lambda x: (x.sin() * x.exp()).sum() + (x * x).prod()


def f_two(L):
    return lambda x, y: (x.tanh() @ y).sum() * y.mean()


def f_vec(L):
    return lambda x, y: (x.sin() * y[:3], (x @ y[:3].exp()).reshape(1))


X = rnd(3, seed=1)
Y = rnd(3, 2, seed=2)
V = rnd(5, seed=3)


# --- grad / grad_and_value -------------------------------------------------------------------------

def test_grad_matches_torch():
    check(lambda L, x: L.func.grad(f_scalar(L))(x), X)


def test_grad_argnums_tuple_and_negative():
    check(lambda L, x, y: L.func.grad(f_two(L), argnums=(0, 1))(x, y), X, Y)
    check(lambda L, x, y: L.func.grad(f_two(L), argnums=-1)(x, y), X, Y)


def test_grad_has_aux_returns_aux_detached():
    def fn(L, x):
        g, aux = L.func.grad(lambda x: ((x ** 3).sum(), {"sq": x * x}), has_aux=True)(x)
        assert not aux["sq"].requires_grad
        return g, aux
    check(fn, X)


def test_grad_and_value():
    check(lambda L, x, y: L.func.grad_and_value(f_two(L), argnums=(0, 1))(x, y), X, Y)
    check(lambda L, x: L.func.grad_and_value(lambda x: ((x * 2).sum(), x.mean()), has_aux=True)(x), X)


def test_grad_of_pytree_argument():
    def fn(L, x, y):
        return L.func.grad(lambda p: (p["a"].sin() @ p["b"][0]).sum())({"a": x, "b": [y]})
    check(fn, X, Y)


def test_grad_unused_input_is_zero():
    check(lambda L, x, y: L.func.grad(lambda x, y: (x * 2).sum(), argnums=(0, 1))(x, y), X, Y)
    check(lambda L, x: L.func.grad(lambda x: L.tensor(3.0, dtype=L.float64))(x), X)


def test_nested_grad_higher_order():
    def fn(L, x):
        g = L.func.grad
        d2 = g(lambda x: g(f_scalar(L))(x).sum())(x)
        d3 = g(lambda x: g(lambda x: g(lambda x: x.sin().sum())(x).sum())(x).sum())(x)
        return d2, d3
    check(fn, X)


def test_nested_grad_closure_over_outer_input():
    # d/dx [ d/dy (x * y).sum() at y = x ] = d/dx x.sum() = 1: the inner level must not see x's path.
    check(lambda L, x: L.func.grad(lambda x: L.func.grad(lambda y: (x * y).sum())(x).sum())(x), X)
    check(lambda L, x: L.func.grad(lambda x: L.func.grad(lambda y: (x * y.sin()).sum())(x * 2).sum())(x), X)


def test_grad_composes_with_autograd():
    for lib in (ft, torch):
        x = from_np(lib, X.astype(np.float64), grad=True)
        w = from_np(lib, V[:3].astype(np.float64), grad=True)
        g = lib.func.grad(lambda x: (w * x ** 3).sum())(x)
        assert g.requires_grad
        g.sum().backward()
        if lib is ft:
            ours = (x.grad, w.grad)
        else:
            assert_same(ours[0], x.grad, 1e-10, 1e-10)
            assert_same(ours[1], w.grad, 1e-10, 1e-10)


def test_grad_result_plain_when_nothing_outside_requires_grad():
    res = both(lambda L, x: L.func.grad(f_scalar(L))(x), X)
    assert res[0].requires_grad == res[1].requires_grad is False
    res = both(lambda L, x: L.func.grad_and_value(f_scalar(L))(x)[1], X)
    assert res[0].requires_grad == res[1].requires_grad is False


def test_grad_inside_no_grad():
    def fn(L, x):
        with L.no_grad():
            g = L.func.grad(f_scalar(L))(x)
        assert not g.requires_grad
        return g
    check(fn, X)


@pytest.mark.parametrize("case", [
    lambda L, x: L.func.grad(lambda x: x * 2)(x),
    lambda L, x: L.func.grad(lambda x: 3.0)(x),
    lambda L, x: L.func.grad(lambda x: x.sum(), has_aux=True)(x),
    lambda L, x: L.func.grad(lambda x: x.sum(), argnums=2)(x),
    lambda L, x: L.func.grad(lambda x: x.sum(), argnums=(0, 0))(x),
    lambda L, x: L.func.grad(lambda x: x.sum(), argnums=())(x),
    lambda L, x: L.func.grad(lambda x: x.sum(), argnums=[0])(x),
    lambda L, x: L.func.grad(lambda x, n: x.sum() * n, argnums=1)(x, 2.0),
])
def test_grad_errors_match_torch(case):
    errors_match(torch, case, X, same_message=True)


# --- vjp / jvp / linearize --------------------------------------------------------------------------

def test_vjp_matches_torch_and_is_reusable():
    def fn(L, x, y):
        out, vjp_fn = L.func.vjp(f_vec(L), x, y)
        ct = (L.ones(3, dtype=L.float64) * 0.5, L.ones(1, dtype=L.float64) * 2)
        first = vjp_fn(ct)
        second = vjp_fn((ct[0] * 2, ct[1]))
        assert not out[0].requires_grad and not first[0].requires_grad
        return out, first, second
    check(fn, X, rnd(4, seed=5))


def test_vjp_has_aux_and_pytree_primal():
    def fn(L, x, y):
        out, vjp_fn, aux = L.func.vjp(lambda p: ((p["x"] * p["y"]).sin(), p["x"].cos()), {"x": x, "y": y},
                                      has_aux=True)
        return out, vjp_fn(L.ones(3, dtype=L.float64)), aux
    check(fn, X, V[:3])


def test_vjp_errors_match_torch():
    errors_match(torch, lambda L, x: L.func.vjp(lambda x: (x * 2).long(), x), X, same_message=True)
    errors_match(torch, lambda L, x: L.func.vjp(lambda x: x.sum(), x, has_aux=True), X, same_message=True)


def test_jvp_matches_torch():
    def fn(L, x, y):
        tx, ty = L.ones_like(x) * 0.3, L.ones_like(y) * -1.5
        return L.func.jvp(f_vec(L), (x, y), (tx, ty))
    check(fn, X, rnd(4, seed=5))


def test_jvp_has_aux_and_independent_output():
    def fn(L, x):
        return L.func.jvp(lambda x: ((x.exp(), L.ones(2, dtype=L.float64)), x.sum()), (x,), (x.cos(),),
                          has_aux=True)
    check(fn, X)


@pytest.mark.parametrize("case", [
    lambda L, x: L.func.jvp(lambda x: x.sin(), x, (x,)),
    lambda L, x: L.func.jvp(lambda x: x.sin(), (x,), (x, x)),
    lambda L, x: L.func.jvp(lambda x: x.sin(), (x,), (x[:2],)),
    lambda L, x: L.func.jvp(lambda x: x.sin(), (), ()),
    lambda L, x: L.func.jvp(lambda x: L.ones(2, dtype=L.float64), (x,), (x,), strict=True),
])
def test_jvp_errors_match_torch(case):
    errors_match(torch, case, X, same_message=True)


def test_linearize_matches_jvp_of_torch():
    def fn(L, x, y):
        out, jvp_fn = L.func.linearize(f_two(L), x, y)
        return out, jvp_fn(x.cos(), y * 0.1), jvp_fn(L.ones_like(x), L.zeros_like(y))
    check(fn, X, Y)
    errors_match(torch, lambda L, x: L.func.linearize(lambda x: x.sin(), x)[1](x[:2]), X, same_message=True)


# --- jacobians ----------------------------------------------------------------------------------

@pytest.mark.parametrize("which", ["jacrev", "jacfwd"])
def test_jacobians_match_torch(which):
    check(lambda L, x: getattr(L.func, which)(L.sin)(x), X)
    check(lambda L, x, y: getattr(L.func, which)(f_vec(L), argnums=(0, 1))(x, y), X, rnd(4, seed=5))
    check(lambda L, x, y: getattr(L.func, which)(lambda x, y: (x.unsqueeze(1) * y).exp())(x, y), X, Y)
    check(lambda L, x: getattr(L.func, which)(lambda x: (x.sum(), x * 0), has_aux=True)(x), X)
    check(lambda L, x, y: getattr(L.func, which)(lambda p: {"o": p["a"] @ p["b"]})({"a": x, "b": y}), X, Y)


@pytest.mark.parametrize("which", ["jacrev", "jacfwd"])
def test_jacobian_of_constant_output_is_zero(which):
    check(lambda L, x: getattr(L.func, which)(lambda x: L.ones(2, dtype=L.float64))(x), X)


def test_hessian_matches_torch():
    check(lambda L, x: L.func.hessian(f_scalar(L))(x), X)
    check(lambda L, x, y: L.func.hessian(f_two(L), argnums=(0, 1))(x, y), X, Y)
    check(lambda L, y: L.func.hessian(lambda m: (m.tanh() @ m.t()).exp().sum())(y), Y)


def test_other_hessian_compositions_match_torch():
    check(lambda L, x: L.func.jacrev(L.func.grad(f_scalar(L)))(x), X)
    check(lambda L, x: L.func.jacrev(L.func.jacrev(f_scalar(L)))(x), X)
    check(lambda L, x: L.func.jacfwd(L.func.jacfwd(lambda x: x.sin() * x.sum()))(x), X)


def test_jacrev_matches_float64_finite_differences():
    f = lambda x: (x.sin() * x.sum()).exp()  # noqa: E731
    x = from_np(ft, X.astype(np.float64))
    jac = np.array(ft.func.jacrev(f)(x).tolist())
    eps = 1e-6
    fd = np.empty((3, 3))
    for j in range(3):
        e = np.zeros(3)
        e[j] = eps
        hi = np.array(f(from_np(ft, X.astype(np.float64) + e)).tolist())
        lo = np.array(f(from_np(ft, X.astype(np.float64) - e)).tolist())
        fd[:, j] = (hi - lo) / (2 * eps)
    np.testing.assert_allclose(jac, fd, rtol=1e-6, atol=1e-8)


def test_jacobian_errors_match_torch():
    errors_match(torch, lambda L, x: L.func.jacrev(L.sin, chunk_size=0)(x), X, same_message=True)
    errors_match(torch, lambda L, x: L.func.jacfwd(L.sin, randomness="x")(x), X, same_message=True)
    errors_match(torch, lambda L, x: L.func.jacfwd(lambda x: x + L.rand(3, dtype=L.float64))(x), X,
                 same_message=True)


# --- vmap ----------------------------------------------------------------------------------------

def test_vmap_basic_and_dims():
    A = rnd(4, 3, seed=7)
    B = rnd(3, 4, seed=8)
    check(lambda L, a, b: L.func.vmap(L.dot)(a, b.t().contiguous()), A, B)
    check(lambda L, a, b: L.func.vmap(L.dot, in_dims=(0, 1))(a, b), A, B)
    check(lambda L, a, b: L.func.vmap(lambda r, m: m @ r, in_dims=(0, None))(a, b.t().contiguous()), A, B)
    check(lambda L, a: L.func.vmap(lambda r: r.exp(), in_dims=-1, out_dims=1)(a), A)
    check(lambda L, a: L.func.vmap(lambda r: (r.sum(), r * 2), out_dims=(0, 1))(a), A)


def test_vmap_nested_and_pytrees_and_kwargs():
    A = rnd(2, 3, 4, seed=9)
    check(lambda L, a: L.func.vmap(L.func.vmap(lambda v: v.softmax(0)))(a), A)
    check(lambda L, a: L.func.vmap(lambda d, scale: {"s": d["x"].sum() * scale, "l": [d["x"].max()]})(
        {"x": a}, scale=3.0), A)
    check(lambda L, a: L.func.vmap(lambda pq: pq[0] @ pq[1], in_dims=((0, None),))((a, a[0].t().contiguous())), A)


def test_vmap_out_dims_none_and_empty_batch():
    A = rnd(4, 3, seed=10)
    check(lambda L, a: L.func.vmap(lambda r: (r * 2, L.ones(2, dtype=L.float64)), out_dims=(0, None))(a), A)
    check(lambda L, a: L.func.vmap(lambda r: (r.sum(), r.unsqueeze(0) * 2))(a[:0]), A)


def test_vmap_per_sample_grads_and_grad_of_vmap():
    W = rnd(3, seed=11)
    A = rnd(5, 3, seed=12)

    def per_sample(L, w, a):
        loss = lambda w, x: ((x * w).sum().tanh() - 0.5) ** 2  # noqa: E731
        return L.func.vmap(L.func.grad(loss), in_dims=(None, 0))(w, a)
    check(per_sample, W, A)
    check(lambda L, w, a: L.func.grad(lambda w: L.func.vmap(lambda x: (x * w).sin().sum())(a).sum())(w), W, A)
    check(lambda L, w, a: L.func.vmap(L.func.jacrev(lambda x: (x * w).exp()))(a), W, A)


def test_vmap_autograd_through_stack():
    res = []
    for lib in (ft, torch):
        a = from_np(lib, rnd(3, 2, seed=13).astype(np.float64), grad=True)
        lib.func.vmap(lambda r: (r.sin() * r).sum())(a).sum().backward()
        res.append(a.grad)
    assert_same(res[0], res[1], 1e-10, 1e-10)


def test_vmap_randomness_modes():
    a = ft.zeros(4, 3)
    same = ft.func.vmap(lambda r: r + ft.rand(3), randomness="same")(a)
    assert all(ft.equal(same[i], same[0]) for i in range(4))
    diff = ft.func.vmap(lambda r: r + ft.rand(3), randomness="different")(a)
    assert not ft.equal(diff[0], diff[1])
    # 'same' draws once: the generator moves as for one call.
    ft.manual_seed(3)
    ft.func.vmap(lambda r: r + ft.rand(3), randomness="same")(a)
    after_vmap = ft.rand(2)
    ft.manual_seed(3)
    ft.rand(3)
    assert ft.equal(after_vmap, ft.rand(2))


@pytest.mark.parametrize("case", [
    lambda L, a: L.func.vmap(lambda r: r + L.rand(3, dtype=L.float64))(a),
    lambda L, a: L.func.vmap(lambda x, y: x + y)(a, a[:2]),
    lambda L, a: L.func.vmap(lambda x: 1.0)(a),
    lambda L, a: L.func.vmap(lambda x: x, in_dims=2)(a),
    lambda L, a: L.func.vmap(lambda x: x, in_dims=None)(a),
    lambda L, a: L.func.vmap(lambda x: x, in_dims=(0, 1.5))(a, a),
    lambda L, a: L.func.vmap(lambda x: x)(3.0),
    lambda L, a: L.func.vmap(lambda x: x, in_dims=(None,))(a),
    lambda L, a: L.func.vmap(lambda x: x, in_dims=(0, 0))(a),
    lambda L, a: L.func.vmap(lambda d: d["x"], in_dims=({"y": 0},))({"x": a}),
    lambda L, a: L.func.vmap(lambda x: (x, x), out_dims=(0, 0, 0))(a),
    lambda L, a: L.func.vmap(lambda x: x)(),
    lambda L, a: L.func.vmap(lambda x: x, randomness="foo")(a),
    lambda L, a: L.func.vmap(lambda x: x, out_dims="x")(a),
    lambda L, a: L.func.vmap(lambda x: x, chunk_size=0)(a),
    lambda L, a: L.func.vmap(lambda x: x * a.sum(), out_dims=None)(a),
])
def test_vmap_errors_match_torch(case):
    errors_match(torch, case, rnd(4, 3, seed=14), same_message=True)


def test_vmap_top_level_alias():
    assert ft.vmap is ft.func.vmap
    check(lambda L, a: L.vmap(L.trace)(a), rnd(2, 3, 3, seed=15))


# --- module helpers --------------------------------------------------------------------------------

def _linear_pair(seed, i=3, o=2):
    w, b = rnd(o, i, seed=seed).astype(np.float64), rnd(o, seed=seed + 1).astype(np.float64)
    mods = []
    for lib in (ft, torch):
        m = lib.nn.Linear(i, o, dtype=lib.float64)
        with lib.no_grad():
            m.weight.copy_(from_np(lib, w))
            m.bias.copy_(from_np(lib, b))
        mods.append(m)
    return mods


def test_functional_call_dict_and_tuple_of_dicts():
    mods = _linear_pair(20)
    A = rnd(4, 3, seed=21).astype(np.float64)
    W = rnd(2, 3, seed=22).astype(np.float64)
    outs = []
    for lib, m in zip((ft, torch), mods):
        x, w = from_np(lib, A), from_np(lib, W)
        one = lib.func.functional_call(m, {"weight": w}, (x,))
        two = lib.func.functional_call(m, ({"weight": w}, {"bias": w[0, :2]}), x)
        g = lib.func.grad(lambda p: lib.func.functional_call(m, p, (x,)).pow(2).sum())(dict(m.named_parameters()))
        outs.append((one, two, g))
        assert lib.equal(m.weight, from_np(lib, rnd(2, 3, seed=20).astype(np.float64)))
    _same_tree(outs[0], outs[1], 1e-10, 1e-10)


def test_functional_call_errors_match_torch():
    m = {ft: ft.nn.Linear(3, 2), torch: torch.nn.Linear(3, 2)}
    errors_match(torch, lambda L, x: L.func.functional_call(m[L], ({"weight": x}, {"weight": x}), x), X,
                 same_message=True)
    errors_match(torch, lambda L, x: L.func.functional_call(m[L], [{"weight": x}, 3], x), X, same_message=True)
    errors_match(torch, lambda L, x: L.func.functional_call(m[L], 3, x), X, same_message=True)


def test_stack_module_state_ensemble_matches_torch():
    pairs = [_linear_pair(30 + 2 * k) for k in range(3)]
    data = rnd(5, 3, seed=40).astype(np.float64)
    outs = []
    for side, lib in enumerate((ft, torch)):
        models = [p[side] for p in pairs]
        params, buffers = lib.func.stack_module_state(models)
        assert params["weight"].shape == (3, 2, 3) and params["weight"].is_leaf and params["weight"].requires_grad
        x = from_np(lib, data)
        out = lib.func.vmap(lambda p, b, x: lib.func.functional_call(models[0], (p, b), (x,)),
                            in_dims=(0, 0, None))(params, buffers, x)
        outs.append((params, out))
    _same_tree(outs[0], outs[1], 1e-10, 1e-10)


def test_stack_module_state_errors_match_torch():
    errors_match(torch, lambda L: L.func.stack_module_state([]), same_message=True)
    errors_match(torch, lambda L: L.func.stack_module_state([L.nn.Linear(1, 1), L.nn.ReLU()]), same_message=True)
    errors_match(torch, lambda L: L.func.stack_module_state([L.nn.Linear(1, 1), L.nn.Linear(1, 1).eval()]),
                 same_message=True)


def test_replace_all_batch_norm_modules():
    for lib in (ft, torch):
        net = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2), lib.nn.Sequential(lib.nn.BatchNorm1d(2)))
        assert lib.func.replace_all_batch_norm_modules_(net) is net
        for bn in (net[1], net[2][0]):
            assert bn.running_mean is None and bn.running_var is None and bn.num_batches_tracked is None
            assert bn.track_running_stats is False
    check(lambda L, a: L.func.replace_all_batch_norm_modules_(L.nn.BatchNorm1d(3).double())(a),
          rnd(4, 3, seed=41))


# --- rearrange, functionalize, debug_unwrap -------------------------------------------------------

@pytest.mark.parametrize("pattern,lengths", [
    ("b h w c -> b h w c", {}),
    ("b h w c -> (b h) w c", {}),
    ("b h w c -> h (b w) c", {}),
    ("b h w c -> b c h w", {}),
    ("b h w c -> b (c h w)", {}),
    ("b (h1 h) (w1 w) c -> (b h1 w1) h w c", {"h1": 2, "w1": 2}),
    ("b (h h1) (w w1) c -> b h w (c h1 w1)", {"h1": 2, "w1": 3}),
    ("b ... c -> c ... b", {}),
    ("b ... c -> (b ...) c", {}),
    ("... -> ... 1", {}),
    ("b h w c -> b h w c 1 ()", {}),
])
def test_rearrange_matches_torch(pattern, lengths):
    check(lambda L, a: L.func.rearrange(a, pattern, **lengths), rnd(2, 4, 6, 3, seed=50))


def test_rearrange_of_list_and_errors():
    check(lambda L, a, b: L.func.rearrange([a, b], "n h w -> h (n w)"), rnd(2, 3, seed=51), rnd(2, 3, seed=52))
    for pattern, lengths in [("a b -> b", {}), ("a b c -> a b c", {}), ("a b", {}), ("a 2 -> a", {}),
                             ("(a (b)) -> a", {}), ("a b -> a b", {"c": 2}), ("a b -> b a", {"a": 2.0}),
                             ("a b -> a b ...", {}), ("a a -> a", {}), ("a! b -> a b", {})]:
        errors_match(torch, lambda L, x: L.func.rearrange(x, pattern, **lengths), rnd(2, 3, seed=53),
                     same_message=True)


def test_functionalize_runs_the_same_program():
    def f(L):
        def inner(x):
            y = x.clone()
            y.add_(1)
            x.mul_(2)
            return y.sin()
        return inner
    res = []
    for lib in (ft, torch):
        x = from_np(lib, X.astype(np.float64))
        out = lib.func.functionalize(f(lib), remove="mutations_and_views")(x)
        res.append((out, x))
    _same_tree(res[0], res[1], 1e-12, 1e-12)
    errors_match(torch, lambda L: L.func.functionalize(f(L), remove="views"), same_message=True)


def test_debug_unwrap_of_plain_tensor_is_itself():
    for lib in (ft, torch):
        t = lib.ones(2)
        assert lib.func.debug_unwrap(t) is t


def test_per_sample_gradients_of_a_model_match_torch():
    # The torch.func tutorial's recipe: vmap(grad(loss of functional_call)) over the batch.
    w1, b1 = rnd(4, 3, seed=60).astype(np.float64), rnd(4, seed=61).astype(np.float64)
    w2, b2 = rnd(2, 4, seed=62).astype(np.float64), rnd(2, seed=63).astype(np.float64)
    data, target = rnd(6, 3, seed=64).astype(np.float64), np.array([0, 1, 1, 0, 1, 0])
    outs = []
    for lib in (ft, torch):
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2)).double()
        params = {"0.weight": from_np(lib, w1), "0.bias": from_np(lib, b1),
                  "2.weight": from_np(lib, w2), "2.bias": from_np(lib, b2)}

        def loss(p, x, y):
            out = lib.func.functional_call(model, p, (x.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, y.unsqueeze(0))
        grads = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(
            params, from_np(lib, data), lib.tensor(target.tolist()))
        outs.append(grads)
    _same_tree(outs[0], outs[1], 1e-9, 1e-10)

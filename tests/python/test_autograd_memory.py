"""The graph lives exactly as long as the tensors that reference it: saved
tensors are freed by backward (unless retain_graph), custom Functions saving
their outputs do not leak, and a long training loop does not grow memory.
Measured with the caching allocator's statistics."""

import gc

import ferrotorch as ft


def allocated():
    gc.collect()
    return ft.memory_allocated("cpu")


N = 4096  # elements: 16 KiB per float32 tensor, well above the pool's rounding


def test_backward_frees_saved_tensors():
    x = ft.randn(N, requires_grad=True)
    base = allocated()
    y = (x.exp() * x.tanh()).sum()
    alive = allocated()
    assert alive - base >= 3 * N * 4  # exp and tanh outputs, their product are held by the graph
    y.backward()
    after = allocated()
    grad_bytes = N * 4
    # Only x.grad (and the scalar y) remain.
    assert after - base <= grad_bytes + 1024
    del y
    x.grad = None
    assert allocated() == base


def test_retain_graph_keeps_saved_tensors_until_graph_dies():
    x = ft.randn(N, requires_grad=True)
    base = allocated()
    y = (x.exp() * x.tanh()).sum()
    y.backward(retain_graph=True)
    kept = allocated()
    assert kept - base >= 3 * N * 4
    y.backward()
    assert allocated() < kept
    del y
    x.grad = None
    assert allocated() == base


def test_autograd_grad_frees_graph():
    x = ft.randn(N, requires_grad=True)
    base = allocated()
    y = (x.exp() * x).sum()
    (g,) = ft.autograd.grad(y, x)
    del y
    del g
    assert allocated() == base


def test_dropping_output_frees_whole_graph():
    x = ft.randn(N, requires_grad=True)
    base = allocated()
    for _ in range(20):
        y = ((x * 2).exp() @ x.reshape(N, 1)).relu().mean()
        del y
    assert allocated() == base


class SaveOutput(ft.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        r = x.exp()
        ctx.save_for_backward(r)
        ctx.extra = x.shape  # ordinary attributes on ctx are fine too
        return r

    @staticmethod
    def backward(ctx, g):
        (r,) = ctx.saved_tensors
        return g * r


def test_custom_function_saving_output_does_not_leak():
    x = ft.randn(N, requires_grad=True)
    base = allocated()
    for _ in range(50):
        y = SaveOutput.apply(x)
        del y
    assert allocated() == base
    for _ in range(50):
        y = SaveOutput.apply(x)
        y.sum().backward()
        del y
    x.grad = None
    assert allocated() == base


def test_custom_function_ctx_is_released_with_graph():
    import weakref
    refs = []

    class Track(ft.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            refs.append(weakref.ref(ctx))
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = ft.randn(3, requires_grad=True)
    y = Track.apply(x)
    assert refs[0]() is not None
    del y
    gc.collect()
    assert refs[0]() is None


def test_inplace_on_view_graph_is_freed():
    w = ft.randn(N, requires_grad=True)
    base = allocated()
    for _ in range(10):
        x = w * 1
        x[: N // 2].mul_(2)
        x[N // 2:] = w[: N // 2].exp()
        x.sum().backward()
        del x
    w.grad = None
    assert allocated() == base


def test_training_loop_10k_steps_does_not_grow_memory():
    ft.manual_seed(0)
    w1 = ft.randn(8, 16, requires_grad=True)
    b1 = ft.zeros(16, requires_grad=True)
    w2 = ft.randn(16, 1, requires_grad=True)
    X, Y = ft.randn(32, 8), ft.randn(32, 1)
    params = (w1, b1, w2)

    def step():
        h = (X @ w1 + b1).relu()
        loss = ((h @ w2 - Y) * (h @ w2 - Y)).mean()
        loss.backward()
        with ft.no_grad():
            for p in params:
                p -= 0.001 * p.grad
                p.grad = None
        return loss

    for _ in range(50):
        step()
    base = allocated()
    peak0 = ft.max_memory_allocated("cpu")
    for _ in range(10_000):
        step()
    assert allocated() == base
    assert ft.max_memory_allocated("cpu") == peak0

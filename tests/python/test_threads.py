"""Thread control (torch.get/set_num_threads) and the products the kernels
split over threads, checked against NumPy and PyTorch."""

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")


@pytest.fixture
def restore_threads():
    before = ft.get_num_threads()
    yield
    ft.set_num_threads(before)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2", None])
def test_set_num_threads_rejects_what_torch_rejects(bad, restore_threads):
    with pytest.raises(Exception) as ours:
        ft.set_num_threads(bad)
    with pytest.raises(Exception) as ref:
        torch.set_num_threads(bad)
    assert type(ours.value) is type(ref.value)
    assert str(ours.value) == str(ref.value)


def test_get_num_threads_reports_what_was_set(restore_threads):
    ft.set_num_threads(1)
    assert ft.get_num_threads() == 1
    ft.set_num_threads(7)
    assert ft.get_num_threads() == 7


def _operand(rng, rows, cols, layout, dtype):
    a = rng.standard_normal((rows, cols)).astype(dtype)
    if layout == "row":
        return a, ft.tensor(a)
    # column-major: the transpose of a contiguous (cols, rows) tensor
    return a, ft.tensor(np.ascontiguousarray(a.T)).t()


# Sizes on both sides of the point where a product is cut into blocks
# (64^3 multiply-adds, blocks of at least 32 rows/columns), short-and-wide
# and tall-and-narrow, odd sizes that leave a partial last block.
SHAPES = [(32, 256, 1024), (32, 1024, 256), (1000, 70, 33), (33, 70, 1000), (7, 9, 11), (130, 64, 97)]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("la", ["row", "col"])
@pytest.mark.parametrize("lb", ["row", "col"])
@pytest.mark.parametrize("m,k,n", SHAPES)
def test_mm_every_layout_and_thread_count(m, k, n, la, lb, threads, restore_threads):
    ft.set_num_threads(threads)
    rng = np.random.default_rng(m * 7 + k * 3 + n)
    a, A = _operand(rng, m, k, la, np.float64)
    b, B = _operand(rng, k, n, lb, np.float64)
    np.testing.assert_allclose((A @ B).numpy(), a @ b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("m,k,n", SHAPES)
def test_addmm_into_a_transposed_output_float32(m, k, n, threads, restore_threads):
    # addmm with beta != 0 accumulates into the output; linear's x @ W.T
    # layout is the one computed as a transposed product.
    ft.set_num_threads(threads)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((n, k)).astype(np.float32)
    c = rng.standard_normal((m, n)).astype(np.float32)
    ours = ft.addmm(ft.tensor(c), ft.tensor(x), ft.tensor(w).t(), beta=0.5, alpha=2.0).numpy()
    ref = torch.addmm(torch.tensor(c), torch.tensor(x), torch.tensor(w).t(), beta=0.5, alpha=2.0).numpy()
    np.testing.assert_allclose(ours, ref, rtol=2e-5, atol=2e-4)


def test_linear_backward_matches_torch_on_two_threads(restore_threads):
    ft.set_num_threads(2)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((32, 1024))
    w = rng.standard_normal((256, 1024))
    xs, ws = ft.tensor(x, requires_grad=True), ft.tensor(w, requires_grad=True)
    xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    ft.nn.functional.linear(xs, ws).sin().sum().backward()
    torch.nn.functional.linear(xt, wt).sin().sum().backward()
    np.testing.assert_allclose(xs.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(ws.grad.numpy(), wt.grad.numpy(), rtol=1e-10, atol=1e-10)


def test_non_finite_entries_follow_torch_through_blocks(restore_threads):
    # The exceptional-entry pass recomputes inf/NaN entries in k order; it
    # must see the same entries whichever way the product was cut.
    ft.set_num_threads(2)
    rng = np.random.default_rng(3)
    a = rng.standard_normal((64, 128)).astype(np.float32)
    b = rng.standard_normal((128, 512)).astype(np.float32)
    a[3, 5] = np.inf
    b[7, 300] = np.nan
    b[9, 100] = 3e38
    ours = (ft.tensor(a) @ ft.tensor(np.ascontiguousarray(b.T)).t()).numpy()
    ref = (torch.tensor(a) @ torch.tensor(np.ascontiguousarray(b.T)).t()).numpy()
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(ref))
    np.testing.assert_array_equal(np.isinf(ours), np.isinf(ref))
    fin = np.isfinite(ref)
    np.testing.assert_allclose(ours[fin], ref[fin], rtol=1e-4, atol=1e-3)


def test_big_elementwise_and_sum_on_one_and_two_threads(restore_threads):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((300, 1000)).astype(np.float32)
    ref_sum = torch.tensor(x).sum().item()
    ref_rows = torch.tensor(x).sum(1).numpy()
    for threads in (1, 2):
        ft.set_num_threads(threads)
        t = ft.tensor(x)
        np.testing.assert_array_equal((t * 2 + 1).numpy(), x * 2 + 1)
        # PyTorch's cascade sum is reproduced bit for bit at either count.
        assert t.sum(1).numpy().tolist() == ref_rows.tolist()
        if threads == ft.get_num_threads() == 2:
            assert t.sum().item() == ref_sum


@pytest.mark.parametrize("where", ["first", "last"])
def test_exceptional_scan_of_big_operands_finds_every_band(where, restore_threads):
    # Operands of 2^17+ elements are scanned for inf/NaN/overflow in bands on
    # all threads; an overflow-prone weight row in any band must be found, so
    # its outputs are recomputed in k order with each product rounded to
    # float32 (the rule of matmul_acc), whatever the thread count.
    rng = np.random.default_rng(5)
    a = rng.standard_normal((8, 512)).astype(np.float32)
    w = rng.standard_normal((1024, 512)).astype(np.float32)
    row = 0 if where == "first" else 1023
    w[row, 3] = 3e38
    w[row, 4] = -3e38
    results = []
    for threads in (1, 2):
        ft.set_num_threads(threads)
        results.append(ft.nn.functional.linear(ft.tensor(a), ft.tensor(w)).numpy())
    np.testing.assert_array_equal(results[0], results[1])
    with np.errstate(over="ignore", invalid="ignore"):
        products = (a * w[row]).astype(np.float32)
        sequential = np.add.accumulate(products, axis=1, dtype=np.float32)[:, -1]
    np.testing.assert_array_equal(np.isfinite(results[1][:, row]), np.isfinite(sequential))
    assert not np.isfinite(sequential).all()

"""``Tensor.view``'s argument forms against PyTorch: sizes as varargs, one sequence,
``size=``, a dtype (positional or ``dtype=``), and the invalid combinations."""

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("call", [
    lambda x, m: x.view(-1),
    lambda x, m: x.view(12),
    lambda x, m: x.view(3, 4),
    lambda x, m: x.view(2, -1, 3),
    lambda x, m: x.view((4, 3)),
    lambda x, m: x.view([6, 2]),
    lambda x, m: x.view(m.Size([2, 6])),
    lambda x, m: x.view(size=(3, 4)),
    lambda x, m: x.view(size=[12]),
    lambda x, m: x.view(m.tensor(12)),
    lambda x, m: x.view(np.int64(12)),
    lambda x, m: x.view(m.int32),
    lambda x, m: x.view(dtype=m.int32),
    lambda x, m: x.view(m.float32),
])
def test_view_forms_match_torch(call):
    a = np.arange(12, dtype=np.float32).reshape(2, 6)
    t, f = call(torch.from_numpy(a.copy()), torch), call(ft.from_numpy(a.copy()), ft)
    assert tuple(f.shape) == tuple(t.shape) and f.stride() == t.stride()
    assert str(f.dtype).replace("ferrotorch", "torch") == str(t.dtype)
    np.testing.assert_array_equal(np.array(f.tolist()), t.numpy())


@pytest.mark.parametrize("call", [
    lambda x, m: x.view(),
    lambda x, m: x.view(shape=(12,)),
    lambda x, m: x.view(3, size=(4,)),
    lambda x, m: x.view(m.int32, dtype=m.int32),
    lambda x, m: x.view(2.0, 6),
])
def test_invalid_view_calls_raise_like_torch(call):
    a = np.zeros(12, dtype=np.float32)
    with pytest.raises(Exception) as te:
        call(torch.from_numpy(a.copy()), torch)
    with pytest.raises(te.type):
        call(ft.from_numpy(a.copy()), ft)


def test_view_error_names_the_shape():
    with pytest.raises(RuntimeError, match=r"shape '\[5\]' is invalid for input of size 12"):
        ft.zeros(12).view(5)
    with pytest.raises(TypeError, match=r"view\(\) received an invalid combination of arguments - got \(\)"):
        ft.zeros(2).view()

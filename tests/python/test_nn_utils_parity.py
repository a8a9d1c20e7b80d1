"""nn.utils against PyTorch: gradient clipping, total norms, parameter vectors, and the
rnn padding/packing utilities (values, batch sizes, lengths, gradients, errors)."""

import math
import warnings

import numpy as np
import pytest

import ferrotorch as ft

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")


def _np(t):
    return np.array(t.detach().tolist(), dtype=np.float64)


def _params(lib, grads, dtype="float32"):
    dt = getattr(lib, dtype)
    ps = []
    for g in grads:
        p = lib.nn.Parameter(lib.zeros(np.shape(g) if g is not None else (2,), dtype=dt))
        if g is not None:
            p.grad = lib.tensor(np.asarray(g).tolist(), dtype=dt)
        ps.append(p)
    return ps


def _grads(seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((4, 3)) * scale, rng.standard_normal(5) * scale, rng.standard_normal((2, 2, 2)) * scale]


NORMS = [2.0, 1, 3.5, 0.5, math.inf, -math.inf, "inf", 0]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("norm_type", NORMS, ids=[str(n) for n in NORMS])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_torch(norm_type, max_norm, dtype):
    grads = _grads()
    tp, fp = _params(torch, grads, dtype), _params(ft, grads, dtype)
    tn = torch.nn.utils.clip_grad_norm_(tp, max_norm, norm_type=norm_type)
    fn = ft.nn.utils.clip_grad_norm_(fp, max_norm, norm_type=norm_type)
    tol = dict(rtol=1e-6, atol=1e-7) if dtype == "float32" else dict(rtol=1e-13, atol=1e-15)
    assert str(fn.dtype) == str(tn.dtype) and tuple(fn.shape) == ()
    np.testing.assert_allclose(fn.item(), tn.item(), **tol)
    for a, b in zip(fp, tp):
        np.testing.assert_allclose(_np(a.grad), _np(b.grad), **tol)


def test_clip_grad_norm_single_tensor_none_grads_and_foreach():
    grads = _grads(1, scale=10.0)
    for foreach in (None, False, True):
        tp, fp = _params(torch, grads + [None]), _params(ft, grads + [None])
        tn = torch.nn.utils.clip_grad_norm_(tp, 1.0, foreach=foreach)
        fn = ft.nn.utils.clip_grad_norm_(fp, 1.0, foreach=foreach)
        np.testing.assert_allclose(fn.item(), tn.item(), rtol=1e-6)
        assert fp[-1].grad is None
        for a, b in zip(fp[:-1], tp[:-1]):
            np.testing.assert_allclose(_np(a.grad), _np(b.grad), rtol=1e-6, atol=1e-7)
    t1, f1 = _params(torch, grads[:1])[0], _params(ft, grads[:1])[0]
    np.testing.assert_allclose(ft.nn.utils.clip_grad_norm_(f1, 0.1).item(),
                               torch.nn.utils.clip_grad_norm_(t1, 0.1).item(), rtol=1e-6)
    np.testing.assert_allclose(_np(f1.grad), _np(t1.grad), rtol=1e-6, atol=1e-7)


def test_clip_grad_norm_nonfinite():
    grads = _grads()
    grads[1][2] = np.inf
    for lib in (torch, ft):
        ps = _params(lib, grads)
        with pytest.raises(RuntimeError, match="is non-finite, so it cannot be clipped"):
            lib.nn.utils.clip_grad_norm_(ps, 1.0, error_if_nonfinite=True)
    tp, fp = _params(torch, grads), _params(ft, grads)
    tn = torch.nn.utils.clip_grad_norm_(tp, 1.0)
    fn = ft.nn.utils.clip_grad_norm_(fp, 1.0)
    assert math.isinf(fn.item()) and math.isinf(tn.item())
    for a, b in zip(fp, tp):
        np.testing.assert_array_equal(_np(a.grad), _np(b.grad))


def test_clip_grad_norm_empty_and_deprecated():
    for lib in (torch, ft):
        with pytest.warns(UserWarning, match="empty generator"):
            n = lib.nn.utils.clip_grad_norm_((p for p in []), 1.0)
        assert n.item() == 0.0
        with pytest.warns(FutureWarning, match="`torch.nn.utils.clip_grad_norm` is now deprecated"):
            lib.nn.utils.clip_grad_norm(_params(lib, _grads()), 1.0)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf, 4])
def test_get_total_norm_and_clip_grads_with_norm(norm_type):
    grads = _grads(2)
    tt = [torch.tensor(g.tolist()) for g in grads]
    ff = [ft.tensor(g.tolist()) for g in grads]
    tn = torch.nn.utils.get_total_norm(tt, norm_type)
    fn = ft.nn.utils.get_total_norm(ff, norm_type)
    np.testing.assert_allclose(fn.item(), tn.item(), rtol=1e-6)
    np.testing.assert_allclose(ft.nn.utils.get_total_norm(ff[0], norm_type).item(),
                               torch.nn.utils.get_total_norm(tt[0], norm_type).item(), rtol=1e-6)
    tp, fp = _params(torch, grads), _params(ft, grads)
    torch.nn.utils.clip_grads_with_norm_(tp, 0.7, tn)
    ft.nn.utils.clip_grads_with_norm_(fp, 0.7, fn)
    for a, b in zip(fp, tp):
        np.testing.assert_allclose(_np(a.grad), _np(b.grad), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("clip", [0.3, 1, 5.0])
def test_clip_grad_value_matches_torch(clip):
    grads = _grads(3, scale=2.0)
    for foreach in (None, False):
        tp, fp = _params(torch, grads + [None]), _params(ft, grads + [None])
        assert torch.nn.utils.clip_grad_value_(tp, clip, foreach=foreach) is None
        assert ft.nn.utils.clip_grad_value_(fp, clip, foreach=foreach) is None
        for a, b in zip(fp[:-1], tp[:-1]):
            np.testing.assert_array_equal(_np(a.grad), _np(b.grad))
    t1, f1 = _params(torch, grads[:1])[0], _params(ft, grads[:1])[0]
    torch.nn.utils.clip_grad_value_(t1, clip)
    ft.nn.utils.clip_grad_value_(f1, clip)
    np.testing.assert_array_equal(_np(f1.grad), _np(t1.grad))


def test_clipping_does_not_record_autograd():
    p = ft.nn.Parameter(ft.ones(3))
    (p * p).sum().backward()
    ft.nn.utils.clip_grad_norm_([p], 0.1)
    ft.nn.utils.clip_grad_value_([p], 0.01)
    assert p.grad.grad_fn is None and not p.grad.requires_grad


def test_parameters_vector_round_trip_matches_torch():
    rng = np.random.default_rng(4)
    shapes = [(3, 4), (4,), (2, 1, 3)]
    vals = [rng.standard_normal(s) for s in shapes]
    tps = [torch.nn.Parameter(torch.tensor(v.tolist())) for v in vals]
    fps = [ft.nn.Parameter(ft.tensor(v.tolist())) for v in vals]
    tv = torch.nn.utils.parameters_to_vector(tps)
    fv = ft.nn.utils.parameters_to_vector(fps)
    np.testing.assert_array_equal(_np(fv), _np(tv))
    assert fv.requires_grad == tv.requires_grad
    # Gradient flows back to every parameter, as in PyTorch.
    (fv * ft.arange(fv.numel(), dtype=fv.dtype)).sum().backward()
    (tv * torch.arange(tv.numel(), dtype=tv.dtype)).sum().backward()
    for a, b in zip(fps, tps):
        np.testing.assert_array_equal(_np(a.grad), _np(b.grad))
    new = rng.standard_normal(tv.numel())
    torch.nn.utils.vector_to_parameters(torch.tensor(new.tolist()), tps)
    ft.nn.utils.vector_to_parameters(ft.tensor(new.tolist()), fps)
    for a, b in zip(fps, tps):
        np.testing.assert_array_equal(_np(a), _np(b))
        assert tuple(a.shape) == tuple(b.shape) and a.requires_grad
    for lib in (torch, ft):
        with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
            lib.nn.utils.vector_to_parameters([1.0, 2.0], [lib.nn.Parameter(lib.zeros(2))])


def test_parameters_to_vector_with_module():
    tm = torch.nn.Linear(3, 2)
    fm = ft.nn.Linear(3, 2)
    with ft.no_grad():
        fm.weight.copy_(ft.tensor(tm.weight.tolist()))
        fm.bias.copy_(ft.tensor(tm.bias.tolist()))
    np.testing.assert_array_equal(_np(ft.nn.utils.parameters_to_vector(fm.parameters())),
                                  _np(torch.nn.utils.parameters_to_vector(tm.parameters())))


# ------------------------------------------------------------------------------ rnn utils
R = ft.nn.utils.rnn
TR = torch.nn.utils.rnn


def _seqs(lengths, feat=(3,), seed=5, grad=False):
    rng = np.random.default_rng(seed)
    vals = [rng.standard_normal((n,) + feat) for n in lengths]
    t = [torch.tensor(v.tolist(), requires_grad=grad) for v in vals]
    f = [ft.tensor(v.tolist(), requires_grad=grad) for v in vals]
    return t, f


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("feat", [(), (3,), (2, 2)])
def test_pad_sequence_matches_torch(batch_first, side, feat):
    t, f = _seqs([3, 5, 1, 5], feat)
    tp = TR.pad_sequence(t, batch_first=batch_first, padding_value=-1.5, padding_side=side)
    fp = R.pad_sequence(f, batch_first=batch_first, padding_value=-1.5, padding_side=side)
    assert tuple(fp.shape) == tuple(tp.shape)
    np.testing.assert_array_equal(_np(fp), _np(tp))


def test_pad_sequence_errors_like_torch():
    cases = [(3,), ([],), ([np.ones((2, 3)), np.ones((2, 4))],), ([np.ones(2)], "top")]
    for args in cases:
        errs = []
        for lib, mod in ((torch, TR), (ft, R)):
            seqs = args[0]
            if isinstance(seqs, list):
                seqs = [lib.tensor(s.tolist()) for s in seqs]
            kwargs = {"padding_side": args[1]} if len(args) > 1 else {}
            with pytest.raises(Exception) as e:
                mod.pad_sequence(seqs, **kwargs)
            errs.append(e.value)
        assert type(errs[1]) is type(errs[0]) and str(errs[1]) == str(errs[0])


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths,enforce_sorted", [([5, 3, 3, 1], True), ([2, 5, 1, 4], False),
                                                    ([4, 4, 4], True), ([1], True)])
def test_pack_pad_round_trip_matches_torch(batch_first, lengths, enforce_sorted):
    t, f = _seqs(lengths, (2,), grad=True)
    tpad = TR.pad_sequence(t, batch_first=batch_first)
    fpad = R.pad_sequence(f, batch_first=batch_first)
    for lens in (lengths, torch.tensor(lengths)):
        flens = lens if isinstance(lens, list) else ft.tensor(lengths)
        tpk = TR.pack_padded_sequence(tpad, lens, batch_first=batch_first, enforce_sorted=enforce_sorted)
        fpk = R.pack_padded_sequence(fpad, flens, batch_first=batch_first, enforce_sorted=enforce_sorted)
        assert isinstance(fpk, R.PackedSequence) and isinstance(fpk, tuple)
        np.testing.assert_array_equal(_np(fpk.data), _np(tpk.data))
        assert fpk.batch_sizes.tolist() == tpk.batch_sizes.tolist()
        assert str(fpk.batch_sizes.dtype) == str(tpk.batch_sizes.dtype)
        for a, b in ((fpk.sorted_indices, tpk.sorted_indices), (fpk.unsorted_indices, tpk.unsorted_indices)):
            assert (a is None) == (b is None)
            if b is not None:
                assert a.tolist() == b.tolist()
    for total in (None, max(lengths) + 2):
        tout, tl = TR.pad_packed_sequence(tpk, batch_first=batch_first, padding_value=7.0, total_length=total)
        fout, fl = R.pad_packed_sequence(fpk, batch_first=batch_first, padding_value=7.0, total_length=total)
        assert tuple(fout.shape) == tuple(tout.shape)
        np.testing.assert_array_equal(_np(fout), _np(tout))
        assert fl.tolist() == tl.tolist() and str(fl.dtype) == str(tl.dtype)
    # Gradients flow through pack and unpack back to every sequence.
    w = np.arange(np.prod(tout.shape), dtype=np.float64).reshape(tuple(tout.shape))
    (tout * torch.tensor(w.tolist())).sum().backward()
    (fout * ft.tensor(w.tolist())).sum().backward()
    for a, b in zip(f, t):
        np.testing.assert_array_equal(_np(a.grad), _np(b.grad))


def test_pack_sequence_unpack_unpad_match_torch():
    for enforce_sorted, lengths in ((True, [4, 2, 2]), (False, [1, 4, 3])):
        t, f = _seqs(lengths, (3,))
        tpk = TR.pack_sequence(t, enforce_sorted=enforce_sorted)
        fpk = R.pack_sequence(f, enforce_sorted=enforce_sorted)
        np.testing.assert_array_equal(_np(fpk.data), _np(tpk.data))
        assert fpk.batch_sizes.tolist() == tpk.batch_sizes.tolist()
        for a, b in zip(R.unpack_sequence(fpk), TR.unpack_sequence(tpk)):
            np.testing.assert_array_equal(_np(a), _np(b))
        for bf in (False, True):
            tpad = TR.pad_sequence(t, batch_first=bf)
            fpad = R.pad_sequence(f, batch_first=bf)
            tl = torch.tensor(lengths)
            for a, b in zip(R.unpad_sequence(fpad, ft.tensor(lengths), batch_first=bf),
                            TR.unpad_sequence(tpad, tl, batch_first=bf)):
                np.testing.assert_array_equal(_np(a), _np(b))


def test_pack_errors_like_torch():
    x = np.random.default_rng(0).standard_normal((4, 3, 2))
    cases = [([2, 3, 1], {}), ([3, 1, 0], {}), ([3, 2], {})]
    for lengths, kwargs in cases:
        errs = []
        for lib, mod in ((torch, TR), (ft, R)):
            with pytest.raises(Exception) as e:
                mod.pack_padded_sequence(lib.tensor(x.tolist()), lengths, **kwargs)
            errs.append(e.value)
        assert type(errs[1]) is type(errs[0]) and str(errs[1]) == str(errs[0]), lengths
    errs = []
    for lib, mod in ((torch, TR), (ft, R)):
        pk = mod.pack_padded_sequence(lib.tensor(x.tolist()), [3, 2, 1])
        with pytest.raises(ValueError) as e:
            mod.pad_packed_sequence(pk, total_length=2)
        errs.append(str(e.value))
    assert errs[1] == errs[0]


def test_invert_permutation_and_packed_sequence_api():
    perm = [3, 0, 2, 1]
    assert R.invert_permutation(ft.tensor(perm)).tolist() == TR.invert_permutation(torch.tensor(perm)).tolist()
    assert R.invert_permutation(None) is None
    t, f = _seqs([3, 2], (2,))
    fpk = R.pack_sequence(f)
    assert fpk._fields == TR.PackedSequence._fields
    d = fpk.double()
    assert str(d.data.dtype) == "torch.float64" and d.batch_sizes is fpk.batch_sizes
    assert fpk.to(ft.float32) is fpk
    # Rebuilding from (data, batch_sizes) fills unsorted_indices from sorted_indices.
    again = R.PackedSequence(fpk.data, fpk.batch_sizes, ft.tensor([1, 0]))
    assert again.unsorted_indices.tolist() == [1, 0]


# ------------------------------------------------------------------------------ fusion
def _copy_into(fm, tm):
    with ft.no_grad():
        for name, tp in tm.named_parameters():
            dict(fm.named_parameters())[name].copy_(ft.tensor(tp.detach().tolist()))
        for name, tb in tm.named_buffers():
            fb = dict(fm.named_buffers()).get(name)
            if fb is not None and tb.dtype.is_floating_point:
                fb.copy_(ft.tensor(tb.tolist()))


def _bn_pair(kind, n):
    tbn = getattr(torch.nn, kind)(n)
    with torch.no_grad():
        tbn.running_mean.uniform_(-1, 1)
        tbn.running_var.uniform_(0.5, 2)
        tbn.weight.uniform_(0.5, 1.5)
        tbn.bias.uniform_(-1, 1)
    fbn = getattr(ft.nn, kind)(n)
    _copy_into(fbn, tbn)
    return tbn.eval(), fbn.eval()


@pytest.mark.parametrize("conv,bn,transpose,shape", [
    ("Conv2d", "BatchNorm2d", False, (2, 3, 6, 6)),
    ("Conv1d", "BatchNorm1d", False, (2, 3, 7)),
    ("ConvTranspose2d", "BatchNorm2d", True, (2, 3, 4, 4)),
])
def test_fuse_conv_bn_eval_matches_torch(conv, bn, transpose, shape):
    torch.manual_seed(0)
    tc = getattr(torch.nn, conv)(3, 4, 3).eval()
    fc = getattr(ft.nn, conv)(3, 4, 3).eval()
    _copy_into(fc, tc)
    tbn, fbn = _bn_pair(bn, 4)
    tf = torch.nn.utils.fuse_conv_bn_eval(tc, tbn, transpose=transpose)
    ff = ft.nn.utils.fuse_conv_bn_eval(fc, fbn, transpose=transpose)
    assert type(ff) is type(fc) and ff is not fc and ff.weight is not fc.weight
    np.testing.assert_allclose(_np(ff.weight), _np(tf.weight), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(_np(ff.bias), _np(tf.bias), rtol=1e-6, atol=1e-7)
    x = np.random.default_rng(0).standard_normal(shape)
    np.testing.assert_allclose(_np(ff(ft.tensor(x.tolist()))), _np(tf(torch.tensor(x.tolist(), dtype=torch.float32))),
                               rtol=1e-5, atol=1e-5)
    # The originals are untouched.
    np.testing.assert_array_equal(_np(fc.weight), _np(tc.weight))


def test_fuse_linear_bn_and_weights_match_torch():
    torch.manual_seed(1)
    tl = torch.nn.Linear(5, 4).eval()
    fl = ft.nn.Linear(5, 4).eval()
    _copy_into(fl, tl)
    tbn, fbn = _bn_pair("BatchNorm1d", 4)
    tf = torch.nn.utils.fuse_linear_bn_eval(tl, tbn)
    ff = ft.nn.utils.fuse_linear_bn_eval(fl, fbn)
    np.testing.assert_allclose(_np(ff.weight), _np(tf.weight), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(_np(ff.bias), _np(tf.bias), rtol=1e-6, atol=1e-7)
    # The weight-level functions with absent bias / affine parameters.
    tw, tb = torch.nn.utils.fuse_conv_bn_weights(torch.ones(4, 2, 3), None, tbn.running_mean, tbn.running_var, 1e-3,
                                                  None, None)
    fw, fb = ft.nn.utils.fuse_conv_bn_weights(ft.ones(4, 2, 3), None, fbn.running_mean, fbn.running_var, 1e-3,
                                               None, None)
    np.testing.assert_allclose(_np(fw), _np(tw), rtol=1e-6)
    np.testing.assert_allclose(_np(fb), _np(tb), rtol=1e-6, atol=1e-7)
    assert isinstance(fw, ft.nn.Parameter) and fw.requires_grad == tw.requires_grad
    for lib in (torch, ft):
        with pytest.raises(AssertionError, match="Fusion only for eval!"):
            lib.nn.utils.fuse_linear_bn_eval(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2).eval())
        with pytest.raises(AssertionError, match="linear.out_features == bn.num_features"):
            lib.nn.utils.fuse_linear_bn_eval(lib.nn.Linear(2, 3).eval(), lib.nn.BatchNorm1d(2).eval())


# ------------------------------------------------------------------- weight and spectral norm
def _pair(name, *args):
    torch.manual_seed(3)
    tm = getattr(torch.nn, name)(*args)
    fm = getattr(ft.nn, name)(*args)
    _copy_into(fm, tm)
    return tm, fm


@pytest.mark.parametrize("name,args,dim,shape", [
    ("Linear", (4, 3), 0, (5, 4)), ("Linear", (4, 3), 1, (5, 4)), ("Linear", (4, 3), None, (5, 4)),
    ("Conv2d", (2, 3, 3), 0, (2, 2, 5, 5)), ("Conv1d", (2, 3, 2), 2, (2, 2, 6)),
])
def test_weight_norm_matches_torch(name, args, dim, shape):
    tm, fm = _pair(name, *args)
    with warnings.catch_warnings(record=True) as tw:
        warnings.simplefilter("always")
        torch.nn.utils.weight_norm(tm, dim=dim)
    with warnings.catch_warnings(record=True) as fw:
        warnings.simplefilter("always")
        assert ft.nn.utils.weight_norm(fm, dim=dim) is fm
    assert [str(w.message) for w in fw] == [str(w.message) for w in tw]
    assert sorted(n for n, _ in fm.named_parameters()) == sorted(n for n, _ in tm.named_parameters())
    for n in ("weight_g", "weight_v"):
        a, b = getattr(fm, n), getattr(tm, n)
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-6, atol=1e-7)
    with torch.no_grad():
        tm.weight_g.mul_(1.5)
    with ft.no_grad():
        fm.weight_g.mul_(1.5)
    x = np.random.default_rng(1).standard_normal(shape)
    ty = tm(torch.tensor(x.tolist(), dtype=torch.float32))
    fy = fm(ft.tensor(x.tolist()))
    np.testing.assert_allclose(_np(fy), _np(ty), rtol=1e-5, atol=1e-6)
    (ty ** 2).sum().backward()
    (fy ** 2).sum().backward()
    for n in ("weight_g", "weight_v"):
        np.testing.assert_allclose(_np(getattr(fm, n).grad), _np(getattr(tm, n).grad), rtol=1e-4, atol=1e-5)
    torch.nn.utils.remove_weight_norm(tm)
    ft.nn.utils.remove_weight_norm(fm)
    assert isinstance(fm.weight, ft.nn.Parameter)
    np.testing.assert_allclose(_np(fm.weight), _np(tm.weight), rtol=1e-6, atol=1e-7)
    for lib, m in ((torch, tm), (ft, fm)):
        with pytest.raises(ValueError, match="weight_norm of 'weight' not found in"):
            lib.nn.utils.remove_weight_norm(m)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.nn.utils.weight_norm(m)
            with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
                lib.nn.utils.weight_norm(m)


@pytest.mark.parametrize("name,args,shape,n_iter", [
    ("Linear", (6, 4), (3, 6), 1), ("Conv2d", (3, 5, 3), (2, 3, 6, 6), 2), ("ConvTranspose2d", (3, 4, 2), (1, 3, 4, 4), 1),
])
def test_spectral_norm_matches_torch(name, args, shape, n_iter):
    tm, fm = _pair(name, *args)
    torch.nn.utils.spectral_norm(tm, n_power_iterations=n_iter)
    ft.nn.utils.spectral_norm(fm, n_power_iterations=n_iter)
    assert sorted(fm.state_dict()) == sorted(tm.state_dict())
    for n in ("weight_u", "weight_v"):
        assert tuple(getattr(fm, n).shape) == tuple(getattr(tm, n).shape)
        # A random unit start vector, as in PyTorch (the draws themselves differ).
        np.testing.assert_allclose(np.linalg.norm(_np(getattr(fm, n))), 1.0, rtol=1e-5)
        with ft.no_grad():
            getattr(fm, n).copy_(ft.tensor(getattr(tm, n).tolist()))
    x = np.random.default_rng(2).standard_normal(shape)
    for step in range(3):
        ty = tm(torch.tensor(x.tolist(), dtype=torch.float32))
        fy = fm(ft.tensor(x.tolist()))
        np.testing.assert_allclose(_np(fy), _np(ty), rtol=1e-4, atol=1e-5, err_msg=f"step {step}")
        for n in ("weight_u", "weight_v"):
            np.testing.assert_allclose(_np(getattr(fm, n)), _np(getattr(tm, n)), rtol=1e-4, atol=1e-5)
    (ty ** 2).sum().backward()
    (fy ** 2).sum().backward()
    np.testing.assert_allclose(_np(fm.weight_orig.grad), _np(tm.weight_orig.grad), rtol=1e-3, atol=1e-4)
    tm.eval()
    fm.eval()
    u_before = _np(fm.weight_u)
    np.testing.assert_allclose(_np(fm(ft.tensor(x.tolist()))), _np(tm(torch.tensor(x.tolist(), dtype=torch.float32))),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(_np(fm.weight_u), u_before)
    torch.nn.utils.remove_spectral_norm(tm)
    ft.nn.utils.remove_spectral_norm(fm)
    assert sorted(fm.state_dict()) == sorted(tm.state_dict())
    np.testing.assert_allclose(_np(fm.weight), _np(tm.weight), rtol=1e-4, atol=1e-5)
    for lib, m in ((torch, tm), (ft, fm)):
        with pytest.raises(ValueError, match="spectral_norm of 'weight' not found in"):
            lib.nn.utils.remove_spectral_norm(m)
        with pytest.raises(ValueError, match="Expected n_power_iterations to be positive"):
            lib.nn.utils.spectral_norm(m, n_power_iterations=0)


def test_skip_init_like_torch():
    for lib in (torch, ft):
        m = lib.nn.utils.skip_init(lib.nn.Linear, 5, 3, bias=False)
        assert isinstance(m, lib.nn.Linear) and tuple(m.weight.shape) == (3, 5) and m.bias is None
        with pytest.raises(RuntimeError, match="Expected a Module; got"):
            lib.nn.utils.skip_init(int)

        class NoDevice(lib.nn.Module):
            def __init__(self, n):
                super().__init__()

        with pytest.raises(RuntimeError, match="Module must support a 'device' arg to skip initialization"):
            lib.nn.utils.skip_init(NoDevice, 3)


# ------------------------------------------------------------------- parametrize
def _symmetric(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()

    return Symmetric()


def _scale(lib, k):
    class Scale(lib.nn.Module):
        def forward(self, X):
            return X * k

    return Scale()


def test_register_parametrization_matches_torch():
    tm, fm = _pair("Linear", 4, 4)
    P, TP = ft.nn.utils.parametrize, torch.nn.utils.parametrize
    TP.register_parametrization(tm, "weight", _symmetric(torch))
    P.register_parametrization(fm, "weight", _symmetric(ft))
    assert type(fm).__name__ == type(tm).__name__ == "ParametrizedLinear"
    assert P.is_parametrized(fm) and P.is_parametrized(fm, "weight") and not P.is_parametrized(fm, "bias")
    assert P.type_before_parametrizations(fm) is ft.nn.Linear
    assert sorted(fm.state_dict()) == sorted(tm.state_dict())
    np.testing.assert_allclose(_np(fm.weight), _np(tm.weight), rtol=1e-6)
    np.testing.assert_allclose(_np(fm.parametrizations.weight.original), _np(tm.parametrizations.weight.original))
    # Chaining a second parametrization.
    TP.register_parametrization(tm, "weight", _scale(torch, 2.0))
    P.register_parametrization(fm, "weight", _scale(ft, 2.0))
    assert len(fm.parametrizations["weight"]) == 2
    x = np.random.default_rng(0).standard_normal((3, 4))
    ty = tm(torch.tensor(x.tolist(), dtype=torch.float32))
    fy = fm(ft.tensor(x.tolist()))
    np.testing.assert_allclose(_np(fy), _np(ty), rtol=1e-5, atol=1e-6)
    ty.sum().backward()
    fy.sum().backward()
    np.testing.assert_allclose(_np(fm.parametrizations.weight.original.grad),
                               _np(tm.parametrizations.weight.original.grad), rtol=1e-5, atol=1e-6)
    # Assignment goes through right_inverse (the Scale has none: error as in PyTorch).
    for lib, m in ((torch, tm), (ft, fm)):
        with pytest.raises(RuntimeError, match="parametrization Scale does not implement right_inverse."):
            m.weight = lib.zeros(4, 4)
    # Caching returns the same tensor inside the context.
    with P.cached():
        assert fm.weight is fm.weight
    assert fm.weight is not fm.weight
    for leave in (True, False):
        tm2, fm2 = _pair("Linear", 4, 4)
        TP.register_parametrization(tm2, "weight", _symmetric(torch))
        P.register_parametrization(fm2, "weight", _symmetric(ft))
        with torch.no_grad():
            tm2.weight = torch.tensor(np.arange(16.0).reshape(4, 4).tolist())
        with ft.no_grad():
            fm2.weight = ft.tensor(np.arange(16.0).reshape(4, 4).tolist())
        np.testing.assert_allclose(_np(fm2.weight), _np(tm2.weight))
        TP.remove_parametrizations(tm2, "weight", leave_parametrized=leave)
        P.remove_parametrizations(fm2, "weight", leave_parametrized=leave)
        assert type(fm2) is ft.nn.Linear and not hasattr(fm2, "parametrizations")
        assert isinstance(fm2.weight, ft.nn.Parameter)
        np.testing.assert_allclose(_np(fm2.weight), _np(tm2.weight))
        assert sorted(fm2.state_dict()) == sorted(tm2.state_dict())


def test_parametrization_errors_like_torch():
    class Shrink:
        pass

    for lib in (torch, ft):
        P = lib.nn.utils.parametrize

        class Bad(lib.nn.Module):
            def forward(self, X):
                return X[:1]

        m = lib.nn.Linear(3, 3)
        with pytest.raises(ValueError, match="may not change the shape of the tensor"):
            P.register_parametrization(m, "weight", Bad())
        with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element"):
            P.register_parametrization(m, "nothing", _scale(lib, 2.0))
        with pytest.raises(ValueError, match="does not have a parametrization on weight"):
            P.remove_parametrizations(m, "weight")
        P.register_parametrization(m, "weight", Bad(), unsafe=True)
        assert tuple(m.weight.shape) == (1, 3)


def test_transfer_parametrizations_and_params():
    for lib in (torch, ft):
        P = lib.nn.utils.parametrize
        a, b = lib.nn.Linear(3, 3), lib.nn.Linear(3, 3)
        P.register_parametrization(a, "weight", _symmetric(lib))
        P.transfer_parametrizations_and_params(a, b)
        assert P.is_parametrized(b, "weight")
        assert b.parametrizations.weight.original is a.parametrizations.weight.original


@pytest.mark.parametrize("name,args,dim,shape", [("Linear", (4, 3), 0, (5, 4)), ("Conv1d", (2, 3, 2), 1, (2, 2, 6)),
                                                 ("Linear", (4, 3), None, (5, 4))])
def test_parametrizations_weight_norm_matches_torch(name, args, dim, shape):
    tm, fm = _pair(name, *args)
    torch.nn.utils.parametrizations.weight_norm(tm, dim=dim)
    ft.nn.utils.parametrizations.weight_norm(fm, dim=dim)
    assert sorted(fm.state_dict()) == sorted(tm.state_dict())
    for k in ("original0", "original1"):
        np.testing.assert_allclose(_np(getattr(fm.parametrizations.weight, k)),
                                   _np(getattr(tm.parametrizations.weight, k)), rtol=1e-6, atol=1e-7)
    x = np.random.default_rng(1).standard_normal(shape)
    ty = tm(torch.tensor(x.tolist(), dtype=torch.float32))
    fy = fm(ft.tensor(x.tolist()))
    np.testing.assert_allclose(_np(fy), _np(ty), rtol=1e-5, atol=1e-6)
    (ty ** 2).sum().backward()
    (fy ** 2).sum().backward()
    for k in ("original0", "original1"):
        np.testing.assert_allclose(_np(getattr(fm.parametrizations.weight, k).grad),
                                   _np(getattr(tm.parametrizations.weight, k).grad), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name,args,shape", [("Linear", (6, 4), (3, 6)), ("Conv2d", (3, 5, 3), (2, 3, 6, 6)),
                                             ("ConvTranspose2d", (3, 4, 2), (1, 3, 4, 4))])
def test_parametrizations_spectral_norm_matches_torch(name, args, shape):
    tm, fm = _pair(name, *args)
    ft.manual_seed(0)
    torch.nn.utils.parametrizations.spectral_norm(tm)
    ft.nn.utils.parametrizations.spectral_norm(fm)
    assert sorted(fm.state_dict()) == sorted(tm.state_dict())
    tsn, fsn = tm.parametrizations.weight[0], fm.parametrizations.weight[0]
    # Random start vectors differ; after 15 power iterations both estimates approach the
    # largest singular value from below.
    wm_np = _np(tsn._reshape_weight_to_matrix(tm.parametrizations.weight.original))
    top = np.linalg.svd(wm_np, compute_uv=False)[0]
    wm = fsn._reshape_weight_to_matrix(fm.parametrizations.weight.original)
    sigma_f = float(ft.dot(fsn._u, ft.mv(wm, fsn._v)))
    sigma_t = float(_np(tsn._u) @ wm_np @ _np(tsn._v))
    for sigma in (sigma_f, sigma_t):
        assert 0.9 * top <= sigma <= top * (1 + 1e-5)
    with ft.no_grad():
        fsn._u.copy_(ft.tensor(tsn._u.tolist()))
        fsn._v.copy_(ft.tensor(tsn._v.tolist()))
    x = np.random.default_rng(2).standard_normal(shape)
    for _ in range(3):
        ty = tm(torch.tensor(x.tolist(), dtype=torch.float32))
        fy = fm(ft.tensor(x.tolist()))
        np.testing.assert_allclose(_np(fy), _np(ty), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(_np(fsn._u), _np(tsn._u), rtol=1e-4, atol=1e-5)
    (ty ** 2).sum().backward()
    (fy ** 2).sum().backward()
    np.testing.assert_allclose(_np(fm.parametrizations.weight.original.grad),
                               _np(tm.parametrizations.weight.original.grad), rtol=1e-3, atol=1e-4)
    for lib in (torch, ft):
        with pytest.raises(ValueError, match="has no parameter or buffer with name 'nope'"):
            lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(2, 2), name="nope")


# ------------------------------------------------------------------- stateless
def test_functional_call_matches_torch():
    tm, fm = _pair("Linear", 3, 2)
    rng = np.random.default_rng(4)
    w = rng.standard_normal((2, 3))
    x = rng.standard_normal((4, 3))
    outs = []
    for lib, m in ((torch, tm), (ft, fm)):
        before = _np(m.weight)
        wt = lib.tensor(w.tolist(), dtype=lib.float32, requires_grad=True)
        with pytest.warns(FutureWarning, match="stateless.functional_call` is deprecated"):
            y = lib.nn.utils.stateless.functional_call(m, {"weight": wt}, lib.tensor(x.tolist(), dtype=lib.float32))
        y.sum().backward()
        # The module is restored and the gradient reached the tensor passed in.
        np.testing.assert_array_equal(_np(m.weight), before)
        assert isinstance(m.weight, lib.nn.Parameter) and m.weight.grad is None
        outs.append((_np(y), _np(wt.grad)))
        with pytest.raises(RuntimeError, match="Missing key\\(s\\): 'bias'"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                lib.nn.utils.stateless.functional_call(m, {"weight": wt}, (lib.ones(1, 3),), strict=True)
    np.testing.assert_allclose(outs[1][0], outs[0][0], rtol=1e-6)
    np.testing.assert_allclose(outs[1][1], outs[0][1], rtol=1e-6)


def test_functional_call_tied_weights():
    for lib in (torch, ft):
        a = lib.nn.Linear(2, 2, bias=False)
        b = lib.nn.Linear(2, 2, bias=False)
        b.weight = a.weight
        seq = lib.nn.Sequential(a, b)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = lib.nn.utils.stateless.functional_call(seq, {"0.weight": lib.eye(2) * 2}, lib.ones(1, 2))
            assert y.tolist() == [[4.0, 4.0]]
            y = lib.nn.utils.stateless.functional_call(seq, {"0.weight": lib.eye(2) * 2}, lib.ones(1, 2),
                                                       tie_weights=False)
            with pytest.raises(ValueError, match="which are tied"):
                lib.nn.utils.stateless.functional_call(seq, {"0.weight": lib.eye(2), "1.weight": lib.eye(2) * 3},
                                                       lib.ones(1, 2))


@pytest.mark.parametrize("dims", [2, 3])
def test_convert_conv_weight_memory_format_keeps_values_like_torch(dims):
    torch.manual_seed(5)
    conv, convt = f"Conv{dims}d", f"ConvTranspose{dims}d"
    tm = torch.nn.Sequential(getattr(torch.nn, conv)(2, 3, 2), torch.nn.ReLU(),
                             torch.nn.Sequential(getattr(torch.nn, convt)(3, 2, 2)))
    fm = ft.nn.Sequential(getattr(ft.nn, conv)(2, 3, 2), ft.nn.ReLU(),
                          ft.nn.Sequential(getattr(ft.nn, convt)(3, 2, 2)))
    _copy_into(fm, tm)
    fmt = torch.channels_last if dims == 2 else torch.channels_last_3d
    tfn = getattr(torch.nn.utils, f"convert_conv{dims}d_weight_memory_format")
    ffn = getattr(ft.nn.utils, f"convert_conv{dims}d_weight_memory_format")
    weights = [p for p in fm.parameters()]
    assert tfn(tm, fmt) is tm
    assert ffn(fm, getattr(ft, "channels_last" if dims == 2 else "channels_last_3d", None)) is fm
    assert tm[0].weight.is_contiguous(memory_format=fmt)
    assert [p for p in fm.parameters()] == weights and all(p.is_contiguous() for p in weights)
    x = np.random.default_rng(0).standard_normal((1, 2) + (5,) * dims)
    np.testing.assert_allclose(_np(fm(ft.tensor(x.tolist()))), _np(tm(torch.tensor(x.tolist(), dtype=torch.float32))),
                               rtol=1e-5, atol=1e-5)


ORTH = [((4, 4), None, True), ((4, 4), "cayley", True), ((6, 3), None, True), ((3, 6), "householder", True),
        ((5, 5), "householder", True), ((6, 3), "householder", False), ((6, 3), "matrix_exp", True),
        ((4, 6), "cayley", True)]


@pytest.mark.parametrize("shape,omap,triv", ORTH, ids=[f"{s}-{m}-{t}" for s, m, t in ORTH])
def test_parametrizations_orthogonal_matches_torch(shape, omap, triv):
    out_f, in_f = shape
    tm, fm = _pair("Linear", in_f, out_f)
    with torch.no_grad():
        tm.weight.mul_(3.0)
    _copy_into(fm, tm)
    torch.nn.utils.parametrizations.orthogonal(tm, orthogonal_map=omap, use_trivialization=triv)
    ft.nn.utils.parametrizations.orthogonal(fm, orthogonal_map=omap, use_trivialization=triv)
    assert sorted(n for n, _ in fm.named_parameters()) == sorted(n for n, _ in tm.named_parameters())
    tw, fw = tm.weight, fm.weight
    np.testing.assert_allclose(_np(fw), _np(tw), rtol=1e-4, atol=1e-5)
    k = min(shape)
    gram = _np(fw).T @ _np(fw) if shape[0] >= shape[1] else _np(fw) @ _np(fw).T
    np.testing.assert_allclose(gram, np.eye(k), atol=1e-5)
    # One SGD step on the unconstrained original, then the parametrized weights again.
    x = np.random.default_rng(3).standard_normal((2, in_f))
    for lib, m in ((torch, tm), (ft, fm)):
        opt = lib.optim.SGD(m.parameters(), lr=0.3)
        (m(lib.tensor(x.tolist(), dtype=lib.float32)) ** 3).sum().backward()
        opt.step()
    if triv and shape[0] != shape[1]:
        # The trivialization completes a non-square matrix to a square base with random
        # columns (in PyTorch too), and the gradient of the original depends on them: only
        # the orthogonality of the result can be compared.
        w = _np(fm.weight)
        gram = w.T @ w if shape[0] >= shape[1] else w @ w.T
        np.testing.assert_allclose(gram, np.eye(k), atol=1e-5)
    else:
        np.testing.assert_allclose(_np(fm.parametrizations.weight.original),
                                   _np(tm.parametrizations.weight.original), rtol=1e-3, atol=1e-4)
        np.testing.assert_allclose(_np(fm.weight), _np(tm.weight), rtol=1e-3, atol=1e-4)
    # Assigning an orthogonal matrix stores it (up to rounding) when the map can be inverted.
    if triv:
        q = np.linalg.qr(np.random.default_rng(4).standard_normal((max(shape), min(shape))))[0]
        q = q if shape[0] >= shape[1] else q.T
        with torch.no_grad():
            tm.weight = torch.tensor(q.tolist(), dtype=torch.float32)
        with ft.no_grad():
            fm.weight = ft.tensor(q.tolist())
        np.testing.assert_allclose(_np(fm.weight), _np(tm.weight), rtol=1e-4, atol=1e-5)


def test_parametrizations_orthogonal_errors_like_torch():
    for lib in (torch, ft):
        with pytest.raises(ValueError, match="Expected a matrix or batch of matrices. Got a tensor of 1 dimensions."):
            lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 2), name="bias")
        with pytest.raises(ValueError, match='orthogonal_map has to be one of "matrix_exp", "cayley", "householder"'):
            lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 2), orthogonal_map="qr")
        m = lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), use_trivialization=False)
        with pytest.raises(NotImplementedError, match="not possible to assign to the matrix exponential"):
            m.weight = lib.eye(3)

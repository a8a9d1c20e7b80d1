"""ferrotorch.utils.data against torch.utils.data.

Orders that depend on a seeded generator cannot match PyTorch's (the two libraries'
random generators differ), so for shuffling the tests check properties: each epoch is a
permutation, a seed reproduces its order, replicas partition the data.
"""

import collections
import warnings

import numpy as np
import pytest

import ferrotorch as ft
import ferrotorch.utils.data as fdata

import _data_workers as W

torch = pytest.importorskip("torch", reason="PyTorch reference wheel not installed")
tdata = torch.utils.data


def plain(x):
    """A library-neutral structure: tensors become (dtype, shape, values)."""
    if isinstance(x, (ft.Tensor, torch.Tensor)):
        return ("T", str(x.dtype), tuple(x.shape), x.tolist())
    if isinstance(x, dict):
        return (type(x).__name__, {k: plain(v) for k, v in x.items()})
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return (type(x).__name__, tuple(plain(v) for v in x))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [plain(v) for v in x])
    if isinstance(x, np.ndarray):
        return ("np", x.dtype.str, x.tolist())
    return (type(x).__name__, x)


class _Squares:
    def __init__(self, lib, n=10):
        self.lib, self.n = lib, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.lib.tensor([float(i), i * 0.5]), i


# ------------------------------------------------------------------------------------------------
# datasets
# ------------------------------------------------------------------------------------------------


def test_tensor_dataset_matches_torch():
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    y = np.arange(6)
    f = fdata.TensorDataset(ft.from_numpy(x), ft.from_numpy(y))
    t = tdata.TensorDataset(torch.from_numpy(x), torch.from_numpy(y))
    assert len(f) == len(t) == 6
    for i in range(-6, 6):
        assert plain(f[i]) == plain(t[i])
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        fdata.TensorDataset(ft.zeros(3), ft.zeros(4))


def test_stack_dataset_tuple_and_dict():
    a, b = list(range(5)), [str(i) for i in range(5)]
    for kwargs in ({}, {"dict": True}):
        if kwargs:
            f, t = fdata.StackDataset(x=a, y=b), tdata.StackDataset(x=a, y=b)
        else:
            f, t = fdata.StackDataset(a, b), tdata.StackDataset(a, b)
        assert len(f) == len(t)
        assert [f[i] for i in range(5)] == [t[i] for i in range(5)]
        assert f.__getitems__([4, 0, 2]) == t.__getitems__([4, 0, 2])
    for args, kw in (((a, b), {"z": a}), ((a, [1]), {}), ((), {})):
        with pytest.raises(ValueError) as ef:
            fdata.StackDataset(*args, **kw)
        with pytest.raises(ValueError) as et:
            tdata.StackDataset(*args, **kw)
        assert str(ef.value) == str(et.value)


def test_concat_chain_subset():
    parts = [list(range(3)), list(range(10, 15)), list(range(20, 22))]
    f, t = fdata.ConcatDataset(parts), tdata.ConcatDataset(parts)
    assert len(f) == len(t) == 10 and f.cumulative_sizes == t.cumulative_sizes
    assert [f[i] for i in range(-10, 10)] == [t[i] for i in range(-10, 10)]
    with pytest.raises(ValueError, match="absolute value of index"):
        f[-11]
    with pytest.raises(AssertionError, match="should not be an empty iterable"):
        fdata.ConcatDataset([])
    with pytest.raises(AssertionError, match="does not support IterableDataset"):
        fdata.ConcatDataset([W.Shards(3)])
    ds = W.Squares(5)
    assert isinstance(ds + ds, fdata.ConcatDataset) and len(ds + ds) == 10
    chain = W.Shards(3) + W.Shards(4)
    assert isinstance(chain, fdata.ChainDataset)
    assert list(chain) == [0, 1, 2, 0, 1, 2, 3] and len(chain) == 7
    sub_f, sub_t = fdata.Subset(parts[1], [4, 0, 2]), tdata.Subset(parts[1], [4, 0, 2])
    assert [sub_f[i] for i in range(3)] == [sub_t[i] for i in range(3)] and len(sub_f) == 3
    assert sub_f.__getitems__([2, 1]) == sub_t.__getitems__([2, 1])


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.2, 0.2, 0.6], [1 / 3] * 3, [0.5, 0.5, 0.0]])
def test_random_split(lengths):
    data = list(range(10))
    g = ft.Generator().manual_seed(5) if hasattr(ft.Generator(), "manual_seed") else None
    with warnings.catch_warnings(record=True) as wf:
        warnings.simplefilter("always")
        f = fdata.random_split(data, lengths, generator=g)
    with warnings.catch_warnings(record=True) as wt:
        warnings.simplefilter("always")
        t = tdata.random_split(data, lengths, generator=torch.Generator().manual_seed(5))
    assert [len(s) for s in f] == [len(s) for s in t]
    assert [str(w.message) for w in wf] == [str(w.message) for w in wt]
    got = [x for s in f for x in s]
    assert sorted(got) == data  # disjoint and covering
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = fdata.random_split(data, lengths, generator=ft.Generator().manual_seed(5))
    assert [list(s) for s in again] == [list(s) for s in f]
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        fdata.random_split(data, [3, 3])


def test_dataset_base_errors():
    with pytest.raises(NotImplementedError, match="Subclasses of Dataset should implement __getitem__"):
        fdata.Dataset()[0]
    with pytest.raises(NotImplementedError):
        iter(fdata.IterableDataset())


# ------------------------------------------------------------------------------------------------
# samplers
# ------------------------------------------------------------------------------------------------


def test_sequential_and_batch_sampler_match_torch():
    for n in (0, 1, 7, 12):
        assert list(fdata.SequentialSampler(range(n))) == list(tdata.SequentialSampler(range(n)))
        for bs in (1, 3, 4, 20):
            for drop in (False, True):
                f = fdata.BatchSampler(fdata.SequentialSampler(range(n)), bs, drop)
                t = tdata.BatchSampler(tdata.SequentialSampler(range(n)), bs, drop)
                assert list(f) == list(t) and len(f) == len(t)


def test_random_sampler_properties():
    n = 17
    s = fdata.RandomSampler(range(n))
    for _ in range(3):
        order = list(s)
        assert sorted(order) == list(range(n))
    g1, g2 = ft.Generator().manual_seed(3), ft.Generator().manual_seed(3)
    assert list(fdata.RandomSampler(range(n), generator=g1)) == list(fdata.RandomSampler(range(n), generator=g2))
    ft.manual_seed(11)
    a = list(fdata.RandomSampler(range(n)))
    ft.manual_seed(11)
    assert list(fdata.RandomSampler(range(n))) == a
    # num_samples beyond the dataset: whole permutations, then part of one
    more = list(fdata.RandomSampler(range(5), num_samples=12))
    assert len(more) == 12 and sorted(more[:5]) == list(range(5)) and sorted(more[5:10]) == list(range(5))
    rep = fdata.RandomSampler(range(4), replacement=True, num_samples=100)
    drawn = list(rep)
    assert len(drawn) == len(rep) == 100 and set(drawn) <= set(range(4)) and len(set(drawn)) == 4
    for kwargs in ({"replacement": 1}, {"num_samples": 0}, {"num_samples": 2.5}):
        with pytest.raises(Exception) as ef:
            fdata.RandomSampler(range(3), **kwargs)
        with pytest.raises(Exception) as et:
            tdata.RandomSampler(range(3), **kwargs)
        assert type(ef.value) is type(et.value) and str(ef.value) == str(et.value)


def test_subset_and_weighted_samplers():
    idx = [10, 20, 30, 40]
    got = list(fdata.SubsetRandomSampler(idx, generator=ft.Generator().manual_seed(1)))
    assert sorted(got) == idx and len(fdata.SubsetRandomSampler(idx)) == 4
    w = [0.0, 1.0, 0.0, 3.0]
    drawn = list(fdata.WeightedRandomSampler(w, 400))
    assert set(drawn) == {1, 3} and 0.6 < drawn.count(3) / 400 < 0.9
    nr = list(fdata.WeightedRandomSampler([1.0, 2, 3, 4, 5], 5, replacement=False))
    assert sorted(nr) == [0, 1, 2, 3, 4]
    assert len(fdata.WeightedRandomSampler(ft.tensor([1.0, 2.0]), 7)) == 7
    for args in (([1.0, 2.0], 0), ([1.0, 2.0], 2, 1), ([[1.0, 2.0]], 2)):
        with pytest.raises(ValueError) as ef:
            fdata.WeightedRandomSampler(*args)
        with pytest.raises(ValueError) as et:
            tdata.WeightedRandomSampler(*args)
        assert str(ef.value) == str(et.value)


@pytest.mark.parametrize("n,replicas,drop", [(10, 3, False), (10, 3, True), (9, 3, False), (2, 4, False), (11, 4, True)])
def test_distributed_sampler(n, replicas, drop):
    data = list(range(n))
    for rank in range(replicas):
        f = fdata.DistributedSampler(data, num_replicas=replicas, rank=rank, shuffle=False, drop_last=drop)
        t = tdata.DistributedSampler(data, num_replicas=replicas, rank=rank, shuffle=False, drop_last=drop)
        assert list(f) == list(t) and len(f) == len(t)
    shuffled = [fdata.DistributedSampler(data, num_replicas=replicas, rank=r, seed=4, drop_last=drop)
                for r in range(replicas)]
    parts = [list(s) for s in shuffled]
    everything = [i for p in parts for i in p]
    if drop:
        assert len(set(everything)) == len(everything)
    else:
        assert set(everything) == set(data)
    assert parts == [list(s) for s in shuffled]  # same epoch, same order
    for s in shuffled:
        s.set_epoch(1)
    parts1 = [list(s) for s in shuffled]
    every1 = [i for p in parts1 for i in p]
    assert len(every1) == len(everything) and (set(every1) == set(data) if not drop else len(set(every1)) == len(every1))
    with pytest.raises(ValueError, match="Invalid rank"):
        fdata.DistributedSampler(data, num_replicas=2, rank=2)


# ------------------------------------------------------------------------------------------------
# collate
# ------------------------------------------------------------------------------------------------

Point = collections.namedtuple("Point", ["x", "y"])


def _samples(lib):
    t = lib.tensor
    return [
        [t([1.0, 2.0]), t([3.0, 4.0])],
        [1, 2, 3],
        [1.5, 2.5],
        [True, False],
        ["a", "b"],
        [b"x", b"y"],
        [np.array([1, 2], dtype=np.int32), np.array([3, 4], dtype=np.int32)],
        [np.float32(1.5), np.float32(2.5)],
        [np.int64(3), np.int64(4)],
        [{"a": t([1]), "b": 2.0}, {"a": t([3]), "b": 4.0}],
        [collections.OrderedDict(z=1, a=t(2.0)), collections.OrderedDict(z=3, a=t(4.0))],
        [Point(t(1), "p"), Point(t(2), "q")],
        [(t([1, 2]), 3, ("s", 4.0)), (t([5, 6]), 7, ("u", 8.0))],
        [[1, [2, 3]], [4, [5, 6]]],
        [t(True), t(False)],
        [np.array(["a"]), np.array(["b"])],
        [object(), object()],
        [[1, 2], [3]],
    ]


@pytest.mark.parametrize("case", range(len(_samples(torch))))
def test_default_collate_matches_torch(case):
    fb, tb = _samples(ft)[case], _samples(torch)[case]
    try:
        expected = plain(tdata.default_collate(tb))
    except Exception as e:
        with pytest.raises(type(e)) as ef:
            fdata.default_collate(fb)
        assert str(ef.value) == str(e)
        return
    assert plain(fdata.default_collate(fb)) == expected


@pytest.mark.parametrize("case", range(len(_samples(torch)) - 2))
def test_default_convert_matches_torch(case):
    fb, tb = _samples(ft)[case][0], _samples(torch)[case][0]
    assert plain(fdata.default_convert(fb)) == plain(tdata.default_convert(tb))


# ------------------------------------------------------------------------------------------------
# DataLoader, single process
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("batch_size,drop_last", [(1, False), (3, False), (3, True), (4, False), (10, False), (None, False)])
def test_sequential_loader_matches_torch(batch_size, drop_last):
    f = fdata.DataLoader(_Squares(ft), batch_size=batch_size, drop_last=drop_last)
    t = tdata.DataLoader(_Squares(torch), batch_size=batch_size, drop_last=drop_last)
    assert len(f) == len(t)
    assert [plain(b) for b in f] == [plain(b) for b in t]
    assert [plain(b) for b in f] == [plain(b) for b in t]  # a second epoch


def test_loader_samplers_and_collate_fn():
    bs = fdata.BatchSampler(fdata.SequentialSampler(range(10)), 4, False)
    f = fdata.DataLoader(_Squares(ft), batch_sampler=bs, collate_fn=lambda b: [i for _, i in b])
    assert list(f) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]] and len(f) == 3
    f = fdata.DataLoader(_Squares(ft), sampler=[9, 0, 5], batch_size=2)
    assert [b[1].tolist() for b in f] == [[9, 0], [5]]
    f = fdata.DataLoader(_Squares(ft), batch_size=4, shuffle=True, generator=ft.Generator().manual_seed(0))
    for _ in range(3):
        assert sorted(i for b in f for i in b[1].tolist()) == list(range(10))
    g = fdata.DataLoader(_Squares(ft), batch_size=4, shuffle=True, generator=ft.Generator().manual_seed(0))
    assert [b[1].tolist() for b in g] == [b[1].tolist() for b in fdata.DataLoader(
        _Squares(ft), batch_size=4, shuffle=True, generator=ft.Generator().manual_seed(0))]


def test_iterable_dataset_single_process():
    for bs, drop in ((3, False), (3, True), (None, False)):
        f = fdata.DataLoader(W.Shards(10), batch_size=bs, drop_last=drop)
        t = tdata.DataLoader(_TorchShards(10), batch_size=bs, drop_last=drop)
        assert [plain(b) for b in f] == [plain(b) for b in t] and len(f) == len(t)


class _TorchShards(tdata.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = tdata.get_worker_info()
        k, m = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(k, self.n, m))

    def __len__(self):
        return self.n


def _bad_loaders(lib):
    d = lib.utils.data
    ds = _Squares(lib)
    it = W.Shards(3) if lib is ft else _TorchShards(3)
    s = d.SequentialSampler(ds)
    b = d.BatchSampler(s, 2, False)
    return [
        lambda: d.DataLoader(ds, num_workers=-1),
        lambda: d.DataLoader(ds, timeout=-1),
        lambda: d.DataLoader(ds, prefetch_factor=2),
        lambda: d.DataLoader(ds, persistent_workers=True),
        lambda: d.DataLoader(ds, sampler=s, shuffle=True),
        lambda: d.DataLoader(ds, batch_sampler=b, batch_size=2),
        lambda: d.DataLoader(ds, batch_sampler=b, drop_last=True),
        lambda: d.DataLoader(ds, batch_size=None, drop_last=True),
        lambda: d.DataLoader(it, shuffle=True),
        lambda: d.DataLoader(it, sampler=[0]),
        lambda: d.DataLoader(ds, multiprocessing_context="fork"),
        lambda: d.DataLoader(ds, num_workers=1, multiprocessing_context="nope"),
        lambda: setattr(d.DataLoader(ds), "batch_size", 3),
        lambda: d.BatchSampler(s, 0, False),
        lambda: d.BatchSampler(s, 2, 1),
    ]


@pytest.mark.parametrize("case", range(len(_bad_loaders(ft))))
def test_loader_argument_errors_match_torch(case):
    with pytest.raises(Exception) as et:
        _bad_loaders(torch)[case]()
    with pytest.raises(Exception) as ef:
        _bad_loaders(ft)[case]()
    assert type(ef.value) is type(et.value)
    assert str(ef.value).replace("ferrotorch", "torch") == str(et.value)


@pytest.mark.filterwarnings("ignore")
def test_pin_memory_accepted_and_len():
    f = fdata.DataLoader(_Squares(ft), batch_size=3, pin_memory=True)
    t = tdata.DataLoader(_Squares(torch), batch_size=3, pin_memory=True)
    with pytest.warns(UserWarning) as wf:
        batches = list(f)
    with pytest.warns(UserWarning) as wt:
        list(t)
    assert [str(w.message) for w in wf] == [str(w.message) for w in wt]
    assert len(f) == 4 and len(batches) == 4
    warnings.simplefilter("ignore")
    it = iter(f)
    assert len(it) == 4
    for i, _ in enumerate(f):  # the pattern tqdm relies on: len() then iteration
        assert i < len(f)


# ------------------------------------------------------------------------------------------------
# DataLoader with worker processes
# ------------------------------------------------------------------------------------------------


def _ids(loader):
    return [b[1].tolist() for b in loader]


def test_workers_keep_order_and_match_single_process():
    ds = W.Squares(23)
    single = list(fdata.DataLoader(ds, batch_size=4))
    multi = list(fdata.DataLoader(ds, batch_size=4, num_workers=2))
    assert [plain(b[:2]) for b in multi] == [plain(b[:2]) for b in single]
    assert [b[2]["worker"].tolist() for b in multi] == [[i % 2] * len(b[1]) for i, b in enumerate(multi)]
    assert all(b[2]["worker"].tolist() == [-1] * len(b[1]) for b in single)


def test_workers_tensor_dtypes_cross_intact():
    single = list(fdata.DataLoader(W.Typed(), batch_size=4))
    multi = list(fdata.DataLoader(W.Typed(), batch_size=4, num_workers=2))
    assert [plain(b) for b in multi] == [plain(b) for b in single]
    assert str(multi[0]["bf16"].dtype) == "torch.bfloat16" and multi[0]["np"].dtype == ft.float32


def test_workers_shuffle_each_epoch_a_permutation_and_persistent():
    loader = fdata.DataLoader(W.Squares(23), batch_size=5, shuffle=True, num_workers=2, persistent_workers=True,
                              prefetch_factor=3)
    orders = []
    for _ in range(3):
        order = [i for ids in _ids(loader) for i in ids]
        assert sorted(order) == list(range(23))
        orders.append(order)
    assert len({tuple(o) for o in orders}) > 1
    # an epoch abandoned halfway does not leak batches into the next one
    it = iter(loader)
    next(it)
    assert sorted(i for ids in _ids(loader) for i in ids) == list(range(23))
    loader._iterator._shutdown_workers()


def test_worker_init_fn_and_worker_info():
    loader = fdata.DataLoader(W.Squares(8), batch_size=2, num_workers=2, worker_init_fn=W.tag_worker)
    tags = [b[2]["tag"] for b in loader]
    assert tags == [["init0/2"] * 2, ["init1/2"] * 2] * 2
    assert fdata.get_worker_info() is None
    probes = list(fdata.DataLoader(W.Squares(4), batch_size=1, num_workers=2, collate_fn=W.seed_probe_collate,
                                   generator=ft.Generator().manual_seed(7)))
    assert probes[1][0] == probes[0][0] + 1  # seed = base_seed + worker id
    assert probes[0][1:] != probes[1][1:]  # workers draw different random numbers
    again = list(fdata.DataLoader(W.Squares(4), batch_size=1, num_workers=2, collate_fn=W.seed_probe_collate,
                                  generator=ft.Generator().manual_seed(7)))
    assert again == probes


def test_iterable_dataset_with_workers_matches_torch():
    for bs in (3, None):
        f = list(fdata.DataLoader(W.Shards(10), batch_size=bs, num_workers=2))
        t = list(tdata.DataLoader(_TorchShards(10), batch_size=bs, num_workers=2))
        assert [plain(b) for b in f] == [plain(b) for b in t]


def test_worker_exception_reraised_with_traceback():
    loader = fdata.DataLoader(W.Squares(23, fail_at=17), batch_size=4, num_workers=2)
    with pytest.raises(ValueError) as e:
        list(loader)
    msg = str(e.value)
    assert "Caught ValueError in DataLoader worker process 0." in msg
    assert "Original Traceback (most recent call last):" in msg and "bad sample 17" in msg
    assert "_data_workers.py" in msg
    with pytest.raises(KeyError) as e:
        list(fdata.DataLoader(W.Squares(4), num_workers=1, worker_init_fn=W.failing_init))
    assert "init failed" in str(e.value)


def test_worker_timeout_and_death():
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0.5 seconds"):
        list(fdata.DataLoader(W.Squares(4, sleep=3.0), batch_size=2, num_workers=1, timeout=0.5))
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly"):
        list(fdata.DataLoader(W.Squares(8, crash_at=2), batch_size=2, num_workers=1, timeout=5))


def test_tqdm_loop():
    tqdm = pytest.importorskip("tqdm")
    loader = fdata.DataLoader(W.Squares(10), batch_size=3, num_workers=2)
    assert sum(len(b[1]) for b in tqdm.tqdm(loader)) == 10


def _shm_files():
    import glob
    return glob.glob("/dev/shm/ferrotorch_dl_*")


def test_big_batches_through_shared_memory_leave_nothing_behind(monkeypatch):
    from ferrotorch.multiprocessing import reductions
    calls = []
    real = reductions._rebuild_shared
    monkeypatch.setattr(reductions, "_rebuild_shared", lambda *a: calls.append(a[0]) or real(*a))
    before = set(_shm_files())
    single = list(fdata.DataLoader(W.Big(), batch_size=3))
    multi = list(fdata.DataLoader(W.Big(), batch_size=3, num_workers=2))
    assert len(calls) == 3  # the float32 part of the three full batches (48 KiB each) took /dev/shm
    assert [plain(b) for b in multi] == [plain(b) for b in single]
    multi[0][0][0, 0, 0] = 5.0  # the received batch is an ordinary writable tensor
    assert multi[0][0][0, 0, 0].item() == 5.0
    # an epoch abandoned with batches in flight: the files are removed at shutdown
    it = iter(fdata.DataLoader(W.Big(), batch_size=3, num_workers=2, prefetch_factor=4))
    next(it)
    it._shutdown_workers()
    assert set(_shm_files()) == before


def test_argument_validation_binds_like_torch():
    def f(a, b: int = 2, *, c=3):
        return a + b + c

    vf, vt = fdata.argument_validation(f), tdata.argument_validation(f)
    assert vf(1) == vt(1) == 6 and vf(1, 5, c=0) == vt(1, 5, c=0) == 6
    assert vf.__name__ == "f"
    for args, kwargs in (((), {}), ((1, 2, 3), {}), ((1,), {"d": 1})):
        with pytest.raises(TypeError) as ef:
            vf(*args, **kwargs)
        with pytest.raises(TypeError) as et:
            vt(*args, **kwargs)
        assert str(ef.value) == str(et.value)


def test_workers_more_modes():
    # batch_size=None: samples one by one, converted (not collated)
    f = list(fdata.DataLoader(W.Squares(5), batch_size=None, num_workers=2))
    assert [plain(x[:2]) for x in f] == [plain(x[:2]) for x in fdata.DataLoader(W.Squares(5), batch_size=None)]
    assert [x[2]["worker"] for x in f] == [0, 1, 0, 1, 0]
    # __getitems__ datasets (StackDataset) in workers
    st = fdata.StackDataset(list(range(7)), [str(i) for i in range(7)])
    assert [plain(b) for b in fdata.DataLoader(st, batch_size=3, num_workers=2)] == [plain(b) for b in tdata.DataLoader(
        tdata.StackDataset(list(range(7)), [str(i) for i in range(7)]), batch_size=3)]
    # spawn works as well as the default forkserver
    sp = fdata.DataLoader(W.Squares(6), batch_size=2, num_workers=1, multiprocessing_context="spawn")
    assert _ids(sp) == [[0, 1], [2, 3], [4, 5]]
    # in_order=False hands out batches as they finish; all still arrive
    got = list(fdata.DataLoader(W.Slow(), batch_size=1, num_workers=2, in_order=False, collate_fn=W.ids_collate))
    assert sorted(i for b in got for i in b) == list(range(6)) and got[0] != [0]
    # persistent workers replay an IterableDataset every epoch
    loader = fdata.DataLoader(W.Shards(9), batch_size=2, num_workers=2, persistent_workers=True)
    epochs = [[x for b in loader for x in b.tolist()] for _ in range(2)]
    assert sorted(epochs[0]) == sorted(epochs[1]) == list(range(9))
    loader._iterator._shutdown_workers()


def test_dataset_tensors_reach_workers_through_shared_memory():
    before = set(_shm_files())
    ds = W.Holder()
    got = list(fdata.DataLoader(ds, batch_size=64, num_workers=2))
    assert [b.tolist() for b in got] == [ds.x[i:i + 64].tolist() for i in range(0, 256, 64)]
    it = iter(fdata.DataLoader(ds, batch_size=64, num_workers=2))
    next(it)
    it._shutdown_workers()
    assert set(_shm_files()) == before


def test_interpreter_exit_with_batches_in_flight_leaves_no_files(tmp_path):
    import os
    import subprocess
    import sys
    script = tmp_path / "leave.py"
    script.write_text(
        "import sys\n"
        f"sys.path.insert(0, {os.path.dirname(W.__file__)!r})\n"
        "import _data_workers as W\n"
        "from ferrotorch.utils.data import DataLoader\n"
        "if __name__ == '__main__':\n"
        "    loader = DataLoader(W.Big(), batch_size=3, num_workers=2, prefetch_factor=4, persistent_workers=True)\n"
        "    it = iter(loader)\n"
        "    next(it)\n"
        "    print(' '.join(str(w.pid) for w in it._workers), flush=True)\n"
        "    globals()['keep'] = (loader, it)\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    pids = out.stdout.split()
    assert len(pids) == 2
    assert not [f for f in _shm_files() if any(f"ferrotorch_dl_{pid}_" in f for pid in pids)]


def test_fork_from_a_threaded_process_warns():
    import threading
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        with pytest.warns(UserWarning, match="started with 'fork' from a process that runs other threads"):
            got = list(fdata.DataLoader(list(range(4)), batch_size=2, num_workers=1, multiprocessing_context="fork"))
    finally:
        stop.set()
        t.join()
    assert [b.tolist() for b in got] == [[0, 1], [2, 3]]

"""DataLoader(num_workers > 0): batches made in worker processes, as torch.utils.data's:
the order of num_workers=0, worker_init_fn and get_worker_info in the workers, exceptions
raised again in the main process, persistent workers, timeout, clean shutdown, option checks."""

import multiprocessing
import os
import time

import pytest

import autograd
from autograd.utils.data import (
    DataLoader,
    Dataset,
    TensorDataset,
    WorkerInfo,
    get_worker_info,
)

_INIT = []          # in a worker: the ids worker_init_fn was called with


def _record_init(worker_id):
    _INIT.append(worker_id)


class _WhoDataset(Dataset):
    """Sample i: (i, the worker's id, its pid, its seed, the ids worker_init_fn saw there)."""

    def __len__(self):
        return 10

    def __getitem__(self, i):
        info = get_worker_info()
        return {"i": i, "id": info.id, "pid": os.getpid(), "seed": info.seed,
                "n": info.num_workers, "same": info.dataset is self or None,
                "init": list(_INIT)}


class _FailingDataset(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            raise KeyError(f"sample {i} is broken")
        return float(i)


class _SlowDataset(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        time.sleep(1.5)
        return i


class _DyingDataset(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        os._exit(3)


def _alive(loader_iter):
    return [w.is_alive() for w in loader_iter._workers]


def _batches(loader):
    return [[t.tolist() for t in b] for b in loader]


@pytest.mark.parametrize("kwargs", [dict(batch_size=3), dict(batch_size=3, drop_last=True),
                                    dict(batch_size=4, shuffle=True),
                                    dict(batch_size=None), dict(batch_size=2, prefetch_factor=1)])
def test_batches_equal_those_of_num_workers_0(kwargs):
    x = autograd.randn(11, 3)
    y = autograd.arange(11)
    runs = []
    for nw in (0, 2):
        autograd.manual_seed(7)
        g = autograd.Generator().manual_seed(3)
        extra = dict(kwargs, num_workers=nw, generator=g)
        if nw == 0:
            extra.pop("prefetch_factor", None)
        loader = DataLoader(TensorDataset(x, y), **extra)
        runs.append([[t.tolist() for t in b] for b in loader] if kwargs["batch_size"] else
                    [[t.tolist() for t in s] for s in loader])
    assert runs[0] == runs[1] and len(runs[0]) > 0


def test_custom_collation_and_unordered_results():
    ds = list(range(20))

    def collate(samples):
        return [s * 10 for s in samples]
    ordered = list(DataLoader(ds, batch_size=3, collate_fn=collate, num_workers=3))
    assert ordered == list(DataLoader(ds, batch_size=3, collate_fn=collate))
    unordered = list(DataLoader(ds, batch_size=3, collate_fn=collate, num_workers=3,
                                in_order=False))
    assert sorted(unordered) == ordered


def test_worker_init_fn_and_get_worker_info():
    assert get_worker_info() is None
    autograd.manual_seed(0)
    loader = DataLoader(_WhoDataset(), batch_size=None, num_workers=2,
                        worker_init_fn=_record_init)
    samples = list(loader)
    assert [s["i"] for s in samples] == list(range(10))
    # task k goes to worker k % 2, as PyTorch's round-robin
    assert [s["id"] for s in samples] == [0, 1] * 5
    assert all(s["n"] == 2 and s["same"] for s in samples)
    for wid in (0, 1):
        mine = [s for s in samples if s["id"] == wid]
        assert all(s["init"] == [wid] for s in mine)          # called once, with its id
        assert len({s["pid"] for s in mine}) == 1 and mine[0]["pid"] != os.getpid()
    seeds = {s["id"]: s["seed"] for s in samples}
    assert seeds[1] == seeds[0] + 1
    assert _INIT == []                                        # never called here
    # reproducible under manual_seed
    autograd.manual_seed(0)
    again = list(DataLoader(_WhoDataset(), batch_size=None, num_workers=2))
    assert [s["seed"] for s in again] == [s["seed"] for s in samples]


def test_worker_info_is_read_only():
    info = WorkerInfo(id=0, num_workers=1, seed=5, dataset=None)
    with pytest.raises(RuntimeError, match="Cannot assign attributes to WorkerInfo"):
        info.id = 3
    assert "seed=5" in repr(info)


def test_exception_in_a_worker_is_raised_here_with_its_traceback():
    loader = DataLoader(_FailingDataset(), batch_size=2, num_workers=2)
    it = iter(loader)
    assert next(it).tolist() == [0.0, 1.0]
    assert next(it).tolist() == [2.0, 3.0]
    with pytest.raises(KeyError) as e:
        next(it)
    msg = str(e.value)
    assert "Caught KeyError in DataLoader worker process 0" in msg
    assert "sample 5 is broken" in msg and "__getitem__" in msg and "Traceback" in msg
    assert next(it).tolist() == [6.0, 7.0]          # the loader goes on, as PyTorch's
    with pytest.raises(StopIteration):
        next(it)
    assert _alive(it) == [False, False]


def test_exception_in_worker_init_fn_is_raised_here():
    def bad_init(worker_id):
        raise ValueError(f"init of {worker_id} failed")
    with pytest.raises(ValueError, match="init of 0 failed"):
        list(DataLoader(list(range(4)), batch_size=1, num_workers=1, worker_init_fn=bad_init))


def test_persistent_workers_are_reused_across_epochs():
    loader = DataLoader(_WhoDataset(), batch_size=None, num_workers=2, persistent_workers=True)
    first = [s["pid"] for s in loader]
    it = loader._iterator
    second = [s["pid"] for s in loader]
    assert first == second and loader._iterator is it and _alive(it) == [True, True]
    # an epoch left half-way: the next one starts from the beginning
    partial = iter(loader)
    next(partial)
    assert [s["i"] for s in loader] == list(range(10))
    del loader, partial
    it.__del__()
    assert _alive(it) == [False, False]

    loader = DataLoader(_WhoDataset(), batch_size=None, num_workers=2)
    assert set(s["pid"] for s in loader).isdisjoint(s["pid"] for s in loader)


def test_deleting_the_iterator_stops_its_workers():
    loader = DataLoader(list(range(100)), batch_size=1, num_workers=2)
    it = iter(loader)
    next(it)
    workers = it._workers
    assert all(w.is_alive() for w in workers)
    del it
    assert not any(w.is_alive() for w in workers)
    assert not [p for p in multiprocessing.active_children() if p in workers]


def test_timeout_and_dead_workers_raise_runtime_error():
    it = iter(DataLoader(_SlowDataset(), batch_size=1, num_workers=1, timeout=0.3))
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0.3 seconds"):
        next(it)
    del it
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited "
                                           r"unexpectedly"):
        list(DataLoader(_DyingDataset(), batch_size=1, num_workers=1))


def test_spawn_context_pickles_dataset_and_batches():
    x = autograd.arange(12.0).reshape(6, 2)
    ds = TensorDataset(x)
    got = _batches(DataLoader(ds, batch_size=4, num_workers=1, multiprocessing_context="spawn"))
    assert got == _batches(DataLoader(ds, batch_size=4))


@pytest.mark.parametrize("kwargs", [dict(num_workers=-1), dict(num_workers=-3, timeout=1),
                                    dict(multiprocessing_context="spawn"),
                                    dict(num_workers=1, multiprocessing_context="nope"),
                                    dict(num_workers=1, multiprocessing_context=3),
                                    dict(num_workers=2, prefetch_factor=-1)])
def test_worker_option_errors_as_torch(kwargs):
    torch = pytest.importorskip("torch")

    def error(f):
        try:
            f()
        except Exception as e:
            return type(e), str(e)
        return None
    expected = error(lambda: torch.utils.data.DataLoader([1.0, 2.0], **kwargs))
    assert expected is not None
    assert error(lambda: DataLoader([1.0, 2.0], **kwargs)) == expected


def test_batches_equal_torch_with_workers():
    torch = pytest.importorskip("torch")
    data = list(range(9))
    ours = list(DataLoader(data, batch_size=2, num_workers=2))
    theirs = list(torch.utils.data.DataLoader(data, batch_size=2, num_workers=2))
    assert [b.tolist() for b in ours] == [b.tolist() for b in theirs]
    assert str(ours[0].dtype).split(".")[-1] == str(theirs[0].dtype).split(".")[-1]

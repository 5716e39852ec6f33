"""RandomSampler's options and DataLoader's worker options, against torch.utils.data."""

import collections

import pytest

import autograd
from autograd.utils.data import DataLoader, RandomSampler


def _error(call):
    try:
        call()
    except (TypeError, ValueError) as e:
        return type(e), str(e)
    return None


@pytest.mark.parametrize("kwargs", [dict(replacement=1), dict(num_samples=0),
                                    dict(num_samples=-1), dict(num_samples=2.0)])
def test_random_sampler_errors_as_torch(kwargs):
    torch = pytest.importorskip("torch")
    assert _error(lambda: RandomSampler([1, 2, 3], **kwargs)) == \
        _error(lambda: torch.utils.data.RandomSampler([1, 2, 3], **kwargs)) is not None
    assert _error(lambda: RandomSampler([])) == \
        _error(lambda: torch.utils.data.RandomSampler([]))


def test_random_sampler_draws():
    s = list(RandomSampler(range(4)))
    assert sorted(s) == [0, 1, 2, 3]
    s = list(RandomSampler(range(3), num_samples=7))     # two permutations and one more
    assert len(s) == 7 and sorted(s[:3]) == sorted(s[3:6]) == [0, 1, 2]
    s = list(RandomSampler(range(3), replacement=True, num_samples=200))
    assert len(s) == 200 and set(s) == {0, 1, 2}
    assert max(collections.Counter(s).values()) < 120
    g = autograd.Generator().manual_seed(3)
    a = list(RandomSampler(range(10), generator=g))
    g.manual_seed(3)
    assert a == list(RandomSampler(range(10), generator=g))
    assert len(RandomSampler(range(3), num_samples=5)) == 5


@pytest.mark.parametrize("kwargs", [dict(num_workers=-1), dict(prefetch_factor=2),
                                    dict(persistent_workers=True),
                                    dict(num_workers=2, timeout=-1),
                                    dict(batch_size=None, drop_last=True),
                                    dict(shuffle=True, sampler=[0])])
def test_dataloader_errors_as_torch(kwargs):
    torch = pytest.importorskip("torch")
    assert _error(lambda: DataLoader([1.0, 2.0], **kwargs)) == \
        _error(lambda: torch.utils.data.DataLoader([1.0, 2.0], **kwargs)) is not None


def test_dataloader_accepts_worker_options_and_runs_in_process():
    x = autograd.arange(10.0)
    calls = []
    loader = DataLoader(autograd.utils.data.TensorDataset(x), batch_size=4, num_workers=2,
                        pin_memory=True, persistent_workers=True, prefetch_factor=2, timeout=5,
                        worker_init_fn=calls.append, drop_last=True)
    batches = [b[0].tolist() for b in loader]
    assert batches == [[0, 1, 2, 3], [4, 5, 6, 7]] and len(loader) == 2
    assert loader.num_workers == 2 and loader.pin_memory

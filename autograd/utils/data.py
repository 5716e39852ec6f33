"""Datasets and batching with torch.utils.data's names: Dataset, TensorDataset, Subset,
samplers, default_collate and DataLoader.

    loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True)
    for xb, yb in loader: ...

Shuffling draws a permutation from autograd's generator (the global one, seeded by
autograd.manual_seed, or the `generator=` passed in), once per epoch, so a run is reproducible.
To resume mid-epoch exactly (checkpoints), give the loader its own generator, save
generator.get_state() at the start of each epoch, and on resume set_state() it, iterate the
loader again (the permutation is drawn at the first batch, so the same one comes) and skip
the batches already done (itertools.islice(loader, done, None)).
A TensorDataset is batched by indexing each of its tensors with one index tensor (a gather),
not by stacking samples one by one. With num_workers > 0, batches are made in worker processes
(autograd/utils/_workers.py) and come back in the order num_workers=0 gives.
"""

import math
import numbers
import random

import carray
from autograd.factories import default_generator, randint, randperm, tensor
from autograd.ops import stack
from autograd.tensor import Tensor
from autograd.utils._workers import MultiProcessingIter, WorkerInfo, check_context, get_worker_info

__all__ = ["Dataset", "TensorDataset", "Subset", "Sampler", "SequentialSampler",
           "RandomSampler", "BatchSampler", "default_collate", "DataLoader",
           "get_worker_info", "WorkerInfo"]


# ---------------------------------------------------------------------------------------------
# datasets
# ---------------------------------------------------------------------------------------------

class Dataset:
    """A map-style dataset: subclasses define __getitem__(index) and __len__."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __len__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __len__")


class TensorDataset(Dataset):
    """Samples are (t[i] for t in tensors): tensors that share their first dimension.
    ValueError when their first dimensions differ (or a tensor is 0-d)."""

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        for t in tensors:
            if not isinstance(t, Tensor) or t.ndim == 0:
                raise ValueError(f"TensorDataset takes tensors with a first (sample) dimension, "
                                 f"got {_describe(t)}")
        n = tensors[0].shape[0]
        if any(t.shape[0] != n for t in tensors):
            raise ValueError(f"Size mismatch between tensors: first dimensions "
                             f"{[t.shape[0] for t in tensors]}")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of dataset at the given indices."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = list(indices)

    def __getitem__(self, index):
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __len__(self):
        return len(self.indices)


def _describe(x):
    return f"a {x.ndim}-d tensor" if isinstance(x, Tensor) else type(x).__name__


# ---------------------------------------------------------------------------------------------
# samplers
# ---------------------------------------------------------------------------------------------

class Sampler:
    """An iterable of dataset indices, with a length."""

    def __iter__(self):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """Random indices of data_source, as torch.utils.data.RandomSampler: without replacement,
    a new permutation at each iteration (num_samples > len(data_source) chains several);
    with replacement, num_samples independent draws. Draws come from generator (the global
    generator when None). TypeError when replacement is not a bool, ValueError when
    num_samples (default len(data_source)) is not a positive int."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got "
                            f"replacement={replacement}")
        n = self.num_samples
        if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={n}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        if self.replacement:
            drawn = randint(0, n, (self.num_samples,), generator=self.generator)
            yield from drawn.tolist()
            return
        for _ in range(self.num_samples // n):
            yield from randperm(n, generator=self.generator).tolist()
        rest = self.num_samples % n
        if rest:
            yield from randperm(n, generator=self.generator).tolist()[:rest]

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of batch_size indices from sampler; the last one shorter unless drop_last.
    ValueError for a batch_size that is not a positive int."""

    def __init__(self, sampler, batch_size, drop_last):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size!r}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for i in self.sampler:
            batch.append(i)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)


# ---------------------------------------------------------------------------------------------
# collation and the loader
# ---------------------------------------------------------------------------------------------

def default_collate(batch):
    """One batch from a list of samples, as torch's default_collate: tensors (and carray
    arrays) are stacked on a new first dimension, Python ints/floats/bools become int64/
    float64/bool tensors, tuples and lists are collated position by position (giving a list),
    dicts key by key; strings and other objects are returned as a list.
    RuntimeError when samples at one position have different sizes."""
    first = batch[0]
    if isinstance(first, Tensor):
        return stack(batch)
    if isinstance(first, carray.Array):
        return stack([Tensor._wrap(a) for a in batch])
    if isinstance(first, bool):
        return tensor(batch, dtype=carray.bool_)
    if isinstance(first, numbers.Integral):
        return tensor(batch, dtype=carray.int64)
    if isinstance(first, numbers.Real):
        return tensor(batch, dtype=carray.float64)
    if isinstance(first, dict):
        return {k: default_collate([s[k] for s in batch]) for k in first}
    if isinstance(first, (tuple, list)):
        if any(len(s) != len(first) for s in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(col)) for col in zip(*batch)]
    return list(batch)


class DataLoader:
    """Batches of a dataset, as torch.utils.data.DataLoader: batch_size samples per batch
    (None: single samples, not collated), in order or reshuffled every epoch (shuffle=True,
    drawn from generator or autograd's global generator), the last short batch dropped when
    drop_last. sampler / batch_sampler / collate_fn as PyTorch's.
    num_workers > 0 makes batches in that many worker processes (started with
    multiprocessing_context, default multiprocessing's default start method), each seeded with
    base_seed + worker id and calling worker_init_fn(worker_id) first; prefetch_factor (default
    2) batches per worker are in flight; batches come in the order of num_workers=0 (in_order);
    persistent_workers keeps the workers across epochs; timeout > 0 raises RuntimeError when no
    batch comes in time; pin_memory is accepted and does nothing. An exception in a worker is
    raised again here with the worker's traceback in its message. ValueError for conflicting or
    invalid options."""

    def __init__(self, dataset, batch_size=1, shuffle=False, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False,
                 timeout=0, worker_init_fn=None, multiprocessing_context=None, generator=None,
                 *, prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        _check_worker_options(num_workers, timeout, prefetch_factor, persistent_workers)
        check_context(multiprocessing_context, num_workers)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None
                                          or drop_last):
            raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                             "shuffle, sampler, and drop_last")
        if batch_size is None and batch_sampler is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        self.batch_size = None if batch_sampler is not None else batch_size
        if sampler is None:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else \
                SequentialSampler(dataset)
        if batch_sampler is None and batch_size is not None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.dataset = dataset
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
        self.generator = generator
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        self.collate_fn = collate_fn if collate_fn is not None else default_collate
        self._fetcher = _Fetcher(dataset, batch_sampler is not None, self.collate_fn,
                                 collate_fn is None and isinstance(dataset, TensorDataset))
        self._iterator = None          # the persistent workers' iterator
        self._epochs = 0

    def __iter__(self):
        if self.num_workers == 0:
            return self._single_process_iter()
        if self.persistent_workers and self._iterator is not None \
                and not self._iterator._shutdown:
            self._iterator._reset()
            return self._iterator
        it = MultiProcessingIter(self, self._fetcher, self._index_sampler, self._base_seed())
        if self.persistent_workers:
            self._iterator = it
        return it

    @property
    def _index_sampler(self):
        return self.sampler if self.batch_sampler is None else self.batch_sampler

    def _single_process_iter(self):
        for indices in self._index_sampler:
            yield self._fetcher(indices)

    def _base_seed(self):
        # The workers' base seed: reproducible under autograd.manual_seed / generator=, and
        # drawn without advancing the generator, so that the sampler draws the same
        # permutation as with num_workers=0.
        seed, offset = (self.generator or default_generator).get_state().tolist()
        self._epochs += 1
        return random.Random(f"{seed},{offset},{self._epochs}").getrandbits(63)

    def __len__(self):
        if self.batch_sampler is None:
            return len(self.sampler)
        return len(self.batch_sampler)


class _Fetcher:
    """One batch from one entry of the loader's index sampler: dataset[i] without
    auto-collation, else the collated samples (a gather for a TensorDataset with the default
    collation). A module-level class so that worker processes can unpickle it."""

    def __init__(self, dataset, auto_collation, collate_fn, fast):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.fast = fast

    def __call__(self, indices):
        if not self.auto_collation:
            return self.dataset[indices]
        if self.fast:
            return _gather(self.dataset.tensors, indices)
        return self.collate_fn([self.dataset[i] for i in indices])


def _check_worker_options(num_workers, timeout, prefetch_factor, persistent_workers):
    """PyTorch's checks of DataLoader's worker options (ValueError)."""
    if num_workers < 0:
        raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                         "disable multiprocessing.")
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                         "let num_workers > 0 to enable multiprocessing, otherwise set "
                         "prefetch_factor to None.")
    if prefetch_factor is not None and prefetch_factor < 0:
        raise ValueError("prefetch_factor option should be non-negative")
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")


def _gather(tensors, indices):
    """[t[indices] for t in tensors], each a gather with one int64 index tensor."""
    index = tensor(indices, dtype=carray.int64)
    return [t[index if t.device == "cpu" else index.to(t.device)] for t in tensors]

# data-parallel training (h15): torch.utils.data re-exports DistributedSampler
from autograd.utils.distributed import DistributedSampler  # noqa: E402, F401

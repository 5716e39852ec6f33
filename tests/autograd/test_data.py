"""The bundled digits dataset (counts, labels, values, the fixed split) and
autograd.utils.data (TensorDataset, DataLoader batching, shuffling, drop_last, len)."""

import hashlib
import math

import numpy as np
import pytest

import autograd
from autograd.datasets import digits, load_digits
from autograd.utils.data import (
    BatchSampler,
    DataLoader,
    Dataset,
    RandomSampler,
    SequentialSampler,
    Subset,
    TensorDataset,
    default_collate,
)

HISTOGRAM = [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]


# ---------------------------------------------------------------------------------------------
# digits
# ---------------------------------------------------------------------------------------------

def test_digits_shapes_dtypes_and_counts():
    images, labels = load_digits()
    assert images.shape == (1797, 1, 8, 8) and images.dtype == autograd.float32
    assert labels.shape == (1797,) and labels.dtype == autograd.int64
    assert not images.requires_grad and images.device == "cpu"
    assert np.bincount(labels.numpy(), minlength=10).tolist() == HISTOGRAM


def test_digits_values():
    images, labels = load_digits()
    x = images.numpy()
    assert x.min() == 0.0 and x.max() == 1.0
    assert np.array_equal(x * 16, np.round(x * 16))          # k / 16 exactly
    assert labels.numpy().min() == 0 and labels.numpy().max() == 9
    # the first image of scikit-learn's copy is a 0; its first row is 0 0 5 13 9 1 0 0
    assert labels[0].item() == 0
    assert (x[0, 0, 0] * 16).tolist() == [0, 0, 5, 13, 9, 1, 0, 0]
    assert labels[:10].tolist() == list(range(10))
    # the whole content, pinned: pixel values (0..16) and labels as bytes
    pixels = (x * 16).astype(np.uint8).tobytes()
    assert hashlib.sha256(pixels).hexdigest() == \
        "8f26b2bd9d135c256808f68f14fdabddde6d9c7f869ae419704b051f0f14b3b3"
    assert hashlib.sha256(labels.numpy().astype(np.uint8).tobytes()).hexdigest() == \
        "8ba4f891220f5e4c9c819638d1602d74b83618f167043c6da52a2a247841ddf0"


def test_digits_each_call_gives_fresh_tensors():
    a, _ = load_digits()
    a.zero_()
    b, _ = load_digits()
    assert b.numpy().max() == 1.0


def test_split_sizes_disjoint_and_covering():
    train, test = digits.split_indices("train"), digits.split_indices("test")
    assert len(train) == digits.N_TRAIN == 1437 and len(test) == digits.N_TEST == 360
    assert train == sorted(train) and test == sorted(test)
    assert not set(train) & set(test)
    assert sorted(train + test) == list(range(1797))


def test_split_is_fixed():
    """The rule (SplitMix64 Fisher-Yates, seed 0) must never change: pinned here."""
    test = digits.split_indices("test")
    assert test[:10] == [3, 9, 13, 20, 22, 26, 27, 28, 29, 33]
    assert hashlib.sha256(str(test).encode()).hexdigest() == _TEST_SPLIT_SHA256
    _, labels = load_digits("test")
    assert np.bincount(labels.numpy(), minlength=10).tolist() == \
        [34, 35, 28, 49, 27, 37, 35, 41, 38, 36]


def test_split_tensors_are_the_rows_of_the_full_set():
    images, labels = load_digits()
    for split in ("train", "test"):
        idx = digits.split_indices(split)
        x, y = load_digits(split)
        assert x.shape == (len(idx), 1, 8, 8) and y.shape == (len(idx),)
        np.testing.assert_array_equal(x.numpy(), images.numpy()[idx])
        np.testing.assert_array_equal(y.numpy(), labels.numpy()[idx])


def test_bad_split():
    with pytest.raises(ValueError, match="split"):
        load_digits("validation")


def test_splitmix64_reference_values():
    """SplitMix64 from seed 0 (the published reference outputs)."""
    rng = digits._splitmix64(0)
    assert [next(rng) for _ in range(3)] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4,
                                             0x06C45D188009454F]


# ---------------------------------------------------------------------------------------------
# datasets
# ---------------------------------------------------------------------------------------------

def test_tensor_dataset():
    x, y = autograd.randn(5, 3), autograd.arange(5)
    ds = TensorDataset(x, y)
    assert len(ds) == 5
    xi, yi = ds[2]
    assert xi.tolist() == x[2].tolist() and yi.item() == 2
    with pytest.raises(ValueError, match="Size mismatch"):
        TensorDataset(x, autograd.arange(4))
    with pytest.raises(ValueError):
        TensorDataset(autograd.tensor(1.0))


def test_subset_and_custom_dataset():
    class Squares(Dataset):
        def __len__(self):
            return 6

        def __getitem__(self, i):
            return i, float(i * i)

    sub = Subset(Squares(), [5, 1, 3])
    assert len(sub) == 3 and sub[0] == (5, 25.0)
    batches = list(DataLoader(sub, batch_size=2))
    assert [b[0].tolist() for b in batches] == [[5, 1], [3]]
    assert batches[0][1].dtype == autograd.float64 and batches[0][1].tolist() == [25.0, 1.0]
    with pytest.raises(NotImplementedError):
        Dataset()[0]


# ---------------------------------------------------------------------------------------------
# DataLoader
# ---------------------------------------------------------------------------------------------

def make_loader(n=10, **kwargs):
    x = autograd.arange(n * 2).reshape(n, 2).float()
    y = autograd.arange(n)
    return DataLoader(TensorDataset(x, y), **kwargs)


@pytest.mark.parametrize("n, batch_size, drop_last", [
    (10, 1, False), (10, 3, False), (10, 3, True), (10, 5, True), (10, 10, False),
    (10, 20, False), (10, 20, True), (0, 4, False), (1797, 64, False), (1797, 64, True)])
def test_batches_in_order(n, batch_size, drop_last):
    loader = make_loader(n, batch_size=batch_size, drop_last=drop_last)
    expected_len = n // batch_size if drop_last else math.ceil(n / batch_size)
    assert len(loader) == expected_len
    batches = list(loader)
    assert len(batches) == expected_len
    seen = []
    for i, (xb, yb) in enumerate(batches):
        size = min(batch_size, n - i * batch_size)
        assert xb.shape == (size, 2) and yb.shape == (size,)
        assert xb.dtype == autograd.float32 and yb.dtype == autograd.int64
        assert (xb[:, 0] == yb.float() * 2).all()
        seen += yb.tolist()
    kept = expected_len * batch_size if drop_last else n
    assert seen == list(range(kept))


def test_batches_are_lists_and_copies():
    loader = make_loader(4, batch_size=2)
    xb, yb = batch = next(iter(loader))
    assert isinstance(batch, list)
    xb.zero_()
    assert loader.dataset.tensors[0][0].tolist() == [0.0, 1.0]


def test_shuffle_is_a_permutation_reshuffled_each_epoch():
    loader = make_loader(50, batch_size=8, shuffle=True)
    epochs = [[v for _, yb in loader for v in yb.tolist()] for _ in range(3)]
    for e in epochs:
        assert sorted(e) == list(range(50))
    assert epochs[0] != list(range(50)) and epochs[0] != epochs[1] != epochs[2]


def test_shuffle_reproducible_with_manual_seed():
    def run():
        return [yb.tolist() for _, yb in make_loader(30, batch_size=4, shuffle=True)]
    autograd.manual_seed(123)
    a = run()
    autograd.manual_seed(123)
    b = run()
    autograd.manual_seed(124)
    c = run()
    assert a == b and a != c


def test_shuffle_reproducible_with_a_generator():
    def run(seed):
        g = autograd.Generator().manual_seed(seed)
        loader = make_loader(30, batch_size=7, shuffle=True, generator=g)
        return [yb.tolist() for _ in range(2) for _, yb in loader]
    autograd.manual_seed(1)
    a = run(5)
    autograd.manual_seed(2)           # the global seed does not matter with a generator
    assert run(5) == a and run(6) != a
    # the generator draws what randperm draws
    g = autograd.Generator().manual_seed(5)
    assert [v for b in a[:5] for v in b] == autograd.randperm(30, generator=g).tolist()


def test_shuffle_with_drop_last():
    loader = make_loader(10, batch_size=4, shuffle=True, drop_last=True)
    batches = [yb.tolist() for _, yb in loader]
    assert len(loader) == 2 and [len(b) for b in batches] == [4, 4]
    assert len(set(batches[0] + batches[1])) == 8


def test_batch_size_none_yields_samples():
    loader = make_loader(3, batch_size=None)
    samples = list(loader)
    assert len(loader) == 3 and len(samples) == 3
    assert samples[1][0].tolist() == [2.0, 3.0] and samples[1][1].item() == 1


def test_samplers_and_collate_fn():
    ds = TensorDataset(autograd.arange(10))
    loader = DataLoader(ds, batch_sampler=BatchSampler(SequentialSampler(ds), 4, False))
    assert [b[0].tolist() for b in loader] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert loader.batch_size is None and len(loader) == 3
    loader = DataLoader(ds, batch_size=5, collate_fn=lambda samples: len(samples))
    assert list(loader) == [5, 5]
    g = autograd.Generator().manual_seed(0)
    assert sorted(RandomSampler(ds, generator=g)) == list(range(10))
    with pytest.raises(ValueError):
        DataLoader(ds, shuffle=True, sampler=SequentialSampler(ds))
    with pytest.raises(ValueError, match="batch_size"):
        DataLoader(ds, batch_size=0)


def test_default_collate():
    a = default_collate([autograd.ones(2), autograd.zeros(2)])
    assert a.shape == (2, 2) and a.tolist() == [[1.0, 1.0], [0.0, 0.0]]
    b = default_collate([{"x": 1, "y": True}, {"x": 2, "y": False}])
    assert b["x"].dtype == autograd.int64 and b["y"].dtype == autograd.bool
    assert default_collate([("a", 1.5), ("b", 2.5)])[0] == ["a", "b"]
    with pytest.raises(RuntimeError):
        default_collate([autograd.ones(2), autograd.ones(3)])


def test_digits_through_a_loader():
    images, labels = load_digits("train")
    loader = DataLoader(TensorDataset(images, labels), batch_size=64, shuffle=True)
    assert len(loader) == math.ceil(1437 / 64)
    total = 0
    for xb, yb in loader:
        assert xb.shape[1:] == (1, 8, 8) and xb.shape[0] == yb.shape[0]
        total += yb.shape[0]
    assert total == 1437


_TEST_SPLIT_SHA256 = "115bd93552d62ab633ab36619a5d727672c36a90c8278d7e186a1c96c498316a"

"""cumsum, cumprod, sort, argsort and topk: values, dtypes and errors against PyTorch (on every
device), gradients with gradcheck on contiguous, transposed and sliced float64 inputs (cumprod
also with zeros in the input)."""

import numpy as np
import pytest

import autograd

from _check import check_op

torch = pytest.importorskip("torch")

DTYPES = ("bool", "int32", "int64", "float32", "float64")
SHAPES = [(), (0,), (5,), (3, 0), (3, 4), (2, 3, 4)]


def _values(dtype, shape, seed):
    """Random values with ties; floats also NaN, inf and -0.0."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return np.asarray(rng.random(shape) < 0.5)
    v = rng.integers(-4, 5, size=shape)
    if dtype.startswith("float"):
        v = v / 2
        flat = v.reshape(-1)
        for x in (np.nan, np.inf, -0.0, np.nan)[:flat.size if v.ndim else 0]:
            flat[rng.integers(0, flat.size)] = x
    return np.asarray(v).astype(dtype)


def _pair(values, device):
    return autograd.tensor(values).to(device), torch.from_numpy(values.copy())


def _same(ours, theirs):
    got = np.asarray(ours.cpu().array)
    want = theirs.numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cumulative_values_and_dtypes(device, dtype):
    for seed, shape in enumerate(SHAPES):
        v, t = _pair(_values(dtype, shape, seed), device)
        for dim in range(-max(len(shape), 1), max(len(shape), 1)):
            for name in ("cumsum", "cumprod"):
                _same(getattr(autograd, name)(v, dim), getattr(torch, name)(t, dim))
                _same(getattr(v, name)(dim), getattr(t, name)(dim))
            _same(v.cumsum(dim, dtype=autograd.float64), t.cumsum(dim, dtype=torch.float64))


@pytest.mark.parametrize("dtype", DTYPES)
def test_sort_argsort_topk(device, dtype):
    for seed, shape in enumerate(SHAPES):
        v, t = _pair(_values(dtype, shape, seed), device)
        for dim in range(-max(len(shape), 1), max(len(shape), 1)):
            for desc in (False, True):
                ours = autograd.sort(v, stable=True, dim=dim, descending=desc)
                theirs = torch.sort(t, stable=True, dim=dim, descending=desc)
                assert type(ours).__name__ == "sort" and ours._fields == ("values", "indices")
                _same(ours.values, theirs.values)
                _same(ours.indices, theirs.indices)
                _same(v.argsort(dim, desc), torch.argsort(t, stable=True, dim=dim, descending=desc))
                # stable=False may order ties differently in PyTorch: the values must match
                _same(v.sort(dim, descending=desc).values, t.sort(dim, descending=desc).values)
            if dtype == "bool":
                continue
            n = shape[dim] if shape else 1
            for k in {0, n // 2, n}:
                for largest in (True, False):
                    ours, theirs = v.topk(k, dim, largest), torch.topk(t, k, dim, largest)
                    assert type(ours).__name__ == "topk"
                    _same(ours.values, theirs.values)
                    if ours.values.numel():     # tied indices may differ from PyTorch's
                        _same(v.gather(dim, ours.indices) if shape else v, theirs.values)


def test_errors():
    v, t = _pair(_values("float32", (2, 3), 0), "cpu")
    b, tb = _pair(_values("bool", (2, 3), 0), "cpu")
    cases = [
        (lambda: v.cumsum(2), lambda: t.cumsum(2)),
        (lambda: autograd.cumprod(v, -3), lambda: torch.cumprod(t, -3)),
        (lambda: v.sort(2), lambda: t.sort(2)),
        (lambda: autograd.argsort(v, -3), lambda: torch.argsort(t, -3)),
        (lambda: v.topk(4), lambda: t.topk(4)),
        (lambda: v.topk(-1), lambda: t.topk(-1)),
        (lambda: v.topk(1, 2), lambda: t.topk(1, 2)),
        (lambda: b.topk(1), lambda: tb.topk(1)),
        (lambda: autograd.cumsum(v), lambda: torch.cumsum(t)),
    ]
    for ours, theirs in cases:
        with pytest.raises(Exception) as expected:
            theirs()
        with pytest.raises(expected.type):
            ours()


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumulative_gradients(dim):
    check_op(lambda x: x.cumsum(dim), lambda x: np.cumsum(x, axis=dim), (3, 4))
    check_op(lambda x: autograd.cumprod(x, dim), lambda x: np.cumprod(x, axis=dim), (3, 4),
             low=0.5, high=1.5)
    # zeros: one, two and none per lane
    x = np.array([[0.0, 1.2, -0.7, 0.9], [1.1, 0.0, 0.8, 0.0], [0.6, -1.3, 1.4, 0.0]])
    check_op(lambda x: autograd.cumprod(x, dim), lambda x: np.cumprod(x, axis=dim), x)


def test_sort_topk_gradients():
    rng = np.random.default_rng(1)
    x = rng.permutation(24).reshape(2, 3, 4) / 7.0      # distinct values: sorting is smooth
    for dim in (0, 1, -1):
        check_op(lambda x: x.sort(dim, descending=True).values,
                 lambda x: -np.sort(-x, axis=dim), x)
        check_op(lambda x: autograd.topk(x, 2, dim, largest=False).values,
                 lambda x: np.take(np.sort(x, axis=dim), [0, 1], axis=dim), x)
    check_op(lambda x: autograd.topk(x, 1).values, lambda x: x, np.array(2.5))

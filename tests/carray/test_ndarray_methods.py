"""The ndarray methods that call a carray function of the same name (dot, trace, diagonal,
nonzero, repeat, round, searchsorted) against NumPy's methods, on cpu and gpu."""

import numpy as np
import pytest

import carray as ca


def _on(x, device):
    return ca.asarray(x).to(device)


def _np(a):
    return np.asarray(a.to("cpu"))


@pytest.mark.parametrize("dtype", ["float64", "int32", "complex128"])
def test_dot_trace_diagonal(device, dtype):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((4, 5, 3)) * 10).astype(dtype)
    m = (rng.standard_normal((5, 4)) * 10).astype(dtype)
    a = _on(x, device)
    np.testing.assert_allclose(_np(a[:, :, 0].dot(_on(m, device))), x[:, :, 0].dot(m))
    v = x[0, :, 0].copy()                       # a transposed view times a vector
    np.testing.assert_allclose(_np(a[0].T.dot(_on(v, device))), x[0].T.dot(v))
    for kw in ({}, {"offset": 1}, {"offset": -2, "axis1": 1, "axis2": 0},
               {"axis1": 0, "axis2": 2}):
        np.testing.assert_allclose(_np(a.trace(**kw)), x.trace(**kw))
        np.testing.assert_allclose(_np(a.diagonal(**kw)), x.diagonal(**kw))
    out = _on(np.zeros(3, dtype), device)
    assert a.trace(out=out) is out
    np.testing.assert_allclose(_np(out), x.trace())


def test_nonzero_repeat_round_searchsorted(device):
    x = np.array([[0.0, 1.25, -2.5], [0.0, 0.0, 3.5]])
    a = _on(x, device)
    for got, want in zip(a.nonzero(), x.nonzero()):
        np.testing.assert_array_equal(_np(got), want)
    np.testing.assert_array_equal(_np(a.repeat(2)), x.repeat(2))
    np.testing.assert_array_equal(_np(a.repeat([1, 3], axis=0)), x.repeat([1, 3], axis=0))
    np.testing.assert_array_equal(_np(a.round()), x.round())        # halves to even
    np.testing.assert_array_equal(_np(a.round(1)), x.round(1))
    out = _on(np.zeros_like(x), device)
    assert a.round(out=out) is out
    np.testing.assert_array_equal(_np(out), x.round())
    s = np.array([1.0, 2.0, 2.0, 5.0])
    v = np.array([2.0, 0.0, 7.0])
    for side in ("left", "right"):
        np.testing.assert_array_equal(_np(_on(s, device).searchsorted(_on(v, device), side)),
                                      s.searchsorted(v, side))
    u = s[[3, 0, 2, 1]]                         # unsorted, with the order that sorts it
    np.testing.assert_array_equal(
        _np(_on(u, device).searchsorted(_on(v, device), sorter=_on(np.argsort(u), device))),
        u.searchsorted(v, sorter=np.argsort(u)))

"""The vectorised CPU row kernels (carray/cpu/_rows.h) against NumPy: max/min/argmax/argmin along
the last axis and softmax, log_softmax, cross entropy and their gradients, on rows of 1, odd
widths around the 16-lane blocks, NaN/inf in rows, float32 and float64, non-contiguous input."""

import numpy as np
import pytest

import carray as ca
from carray import nn

WIDTHS = [1, 3, 15, 16, 17, 31, 64, 255, 256, 257, 1000]


def _rows(rng, m, n, dt):
    x = rng.standard_normal((m, n)).astype(dt) * 4
    if n > 2:  # inf, -inf and NaN in chosen rows, at varying places
        x[1 % m, n // 2] = np.inf
        x[2 % m, n - 1] = -np.inf
        x[3 % m, (7 * n) // 9] = np.nan
    return x


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("n", WIDTHS)
def test_extremes_along_last_axis(dt, n):
    x = _rows(np.random.default_rng(n), 5, n, dt)
    a = ca.asarray(x)
    for name in ("max", "min", "argmax", "argmin"):
        got = np.asarray(getattr(ca, name)(a, axis=-1))
        np.testing.assert_array_equal(got, getattr(np, name)(x, axis=-1), err_msg=name)
    # non-contiguous rows (every other column) and a column reduction
    np.testing.assert_array_equal(np.asarray(ca.max(a[:, ::2], axis=-1)), x[:, ::2].max(-1))
    np.testing.assert_array_equal(np.asarray(ca.argmin(a[:, ::2], axis=-1)),
                                  x[:, ::2].argmin(-1))
    np.testing.assert_array_equal(np.asarray(ca.max(a, axis=0)), x.max(0))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_argmax_ties_and_first_nan(dt):
    x = np.zeros((4, 600), dt)
    x[0, [5, 300, 599]] = 2           # ties across blocks: the first
    x[1, [400, 10]] = np.nan          # the first NaN, even before a larger value
    x[1, 3] = 7
    x[2, 599] = 1                     # the last element
    x[3] = -np.inf
    a = ca.asarray(x)
    np.testing.assert_array_equal(np.asarray(ca.argmax(a, axis=-1)), np.argmax(x, -1))
    np.testing.assert_array_equal(np.asarray(ca.argmin(a, axis=-1)), np.argmin(x, -1))
    assert np.isnan(np.asarray(ca.max(a, axis=-1))[1])


def _softmax_ref(x):
    x = x.astype(np.float64)
    m = x.max(-1, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(-1, keepdims=True), (x - m) - np.log(e.sum(-1, keepdims=True))


@pytest.mark.parametrize("dt, tol", [(np.float32, 2e-6), (np.float64, 1e-14)])
@pytest.mark.parametrize("n", WIDTHS)
def test_softmax_rows(dt, tol, n):
    rng = np.random.default_rng(100 + n)
    x = (rng.standard_normal((6, n)) * 5).astype(dt)
    g = rng.standard_normal((6, n)).astype(dt)
    sm, lsm = _softmax_ref(x)
    y = nn.softmax(ca.asarray(x))
    ly = nn.log_softmax(ca.asarray(x))
    np.testing.assert_allclose(np.asarray(y), sm, rtol=tol * 4, atol=tol)
    np.testing.assert_allclose(np.asarray(ly), lsm, rtol=tol * 4, atol=tol * 8)
    gs = np.asarray(nn.softmax_grad(y, ca.asarray(g)))
    ref = sm * (g - (g * sm).sum(-1, keepdims=True))
    np.testing.assert_allclose(gs, ref, rtol=1e-4 if dt == np.float32 else 1e-12,
                               atol=tol * 8)
    gl = np.asarray(nn.log_softmax_grad(ly, ca.asarray(g)))
    ref = g - np.exp(lsm) * g.sum(-1, keepdims=True)
    np.testing.assert_allclose(gl, ref, rtol=1e-4 if dt == np.float32 else 1e-12,
                               atol=tol * 8 * max(1, np.abs(g).sum(-1).max()))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_softmax_rows_nan_and_inf(dt):
    x = np.array([[1, np.nan, 2, 3] * 5, [0, np.inf, 1, 2] * 5, [-np.inf] * 20], dt)
    with np.errstate(invalid="ignore"):
        sm, lsm = _softmax_ref(x)
    np.testing.assert_array_equal(np.isnan(np.asarray(nn.softmax(ca.asarray(x)))), np.isnan(sm))
    np.testing.assert_array_equal(np.isnan(np.asarray(nn.log_softmax(ca.asarray(x)))),
                                  np.isnan(lsm))
    masked = np.asarray(nn.softmax(ca.asarray(x), masked=True))
    np.testing.assert_array_equal(masked[2], np.zeros(20, dt))


@pytest.mark.parametrize("dt, tol", [(np.float32, 3e-6), (np.float64, 1e-14)])
@pytest.mark.parametrize("n", [1, 17, 65, 1000])
def test_cross_entropy_rows(dt, tol, n):
    rng = np.random.default_rng(7 + n)
    x = (rng.standard_normal((9, n)) * 3).astype(dt)
    t = rng.integers(0, n, 9).astype(np.int64)
    t[4] = -100
    sm, lsm = _softmax_ref(x)
    loss, probs, count = nn.softmax_cross_entropy(ca.asarray(x), ca.asarray(t),
                                                  reduction="none")
    ref = np.where(t == -100, 0, -lsm[np.arange(9), np.where(t == -100, 0, t)])
    np.testing.assert_allclose(np.asarray(loss), ref, rtol=tol * 4, atol=tol * 4)
    np.testing.assert_allclose(np.asarray(probs), sm, rtol=tol * 4, atol=tol)
    g = rng.standard_normal(9).astype(dt)
    gx = np.asarray(nn.softmax_cross_entropy_grad(probs, ca.asarray(t), ca.asarray(g)))
    ref = np.asarray(probs, np.float64).copy()
    ref[np.arange(9), np.where(t == -100, 0, t)] -= np.where(t == -100, 0, 1)
    ref *= np.where(t == -100, 0, g)[:, None]
    np.testing.assert_allclose(gx, ref, rtol=tol * 4, atol=tol * 4)

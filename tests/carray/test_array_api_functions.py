"""The array API functions carray composes from its ops (carray/_api_*.py), against NumPy 2's
functions of the same names, on every device: random values, non-contiguous views, empty and
0-d arrays where the function takes them."""

import numpy as np
import pytest

import carray as ca

from conftest import on

R = np.random.default_rng(13)


def check(got, want, device, exact=False):
    """got (a carray Array) equals want (a NumPy array) in shape, dtype and values."""
    assert isinstance(got, ca.Array) and got.device == device
    got = np.asarray(got.to("cpu"))
    assert got.shape == want.shape and got.dtype == want.dtype, (got.dtype, want.dtype)
    if exact or want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=2e-6 if want.dtype == np.float32 else 1e-12,
                                   atol=1e-30, equal_nan=True)


def floats(shape, dtype=np.float64):
    return (R.standard_normal(shape) * 3).astype(dtype)


# -- elementwise ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", [np.int32, np.int64])
def test_shifts(device, dt):
    bits = np.dtype(dt).itemsize * 8
    x = R.integers(-1000, 1000, (3, 5)).astype(dt)
    s = np.array([0, 1, 3, bits - 2, bits - 1], dtype=dt)
    s_big = np.array([bits, bits + 3], dtype=dt)
    a, b = on(x, device), on(s, device)
    check(ca.bitwise_left_shift(a, b), np.left_shift(x, s), device)
    check(ca.bitwise_right_shift(a, b), np.right_shift(x, s), device)
    check(a << 2, x << 2, device)
    check(a[:, ::2] >> on(s[::2], device), x[:, ::2] >> s[::2], device)
    check(3 << b[:3], 3 << s[:3].astype(dt), device)
    big = on(s_big, device)
    check(ca.bitwise_left_shift(a[:2, :2], big), np.zeros((2, 2), dt), device)
    check(ca.bitwise_right_shift(a[:2, :2], big), np.where(x[:2, :2] < 0, -1, 0).astype(dt),
          device)
    c = on(x.copy(), device)
    c <<= 1
    check(c, x << 1, device)
    with pytest.raises(TypeError, match="integer"):
        ca.bitwise_left_shift(on([1.0], device), 1)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_unary_float_functions(device, dt):
    x = floats((4, 6), dt)
    x[0, :6] = [np.inf, -np.inf, np.nan, 0.0, -0.0, 2.5]
    x[1, :6] = [0.5, -0.5, 1.5, -1.5, -0.4, 3.5]
    a = on(x, device)
    check(ca.isinf(a), np.isinf(x), device)
    check(ca.trunc(a), np.trunc(x), device, exact=True)
    check(ca.round(a), np.round(x), device, exact=True)
    check(ca.signbit(a), np.signbit(x), device)
    y = x.copy()
    y[2, :3] = [-np.nan, np.nan, -np.nan]      # NaNs with and without the sign bit, and a view
    check(ca.signbit(on(y, device)[:, ::-1]), np.signbit(y[:, ::-1]), device)
    check(ca.signbit(on(y.astype(np.float16), device)), np.signbit(y.astype(np.float16)),
          device)
    check(ca.round(a[:, ::-2], decimals=1), np.round(x[:, ::-2], decimals=1), device)
    pos = np.abs(x[1:]) + 0.1
    check(ca.log2(on(pos, device)), np.log2(pos), device)
    check(ca.log10(on(pos, device)), np.log10(pos), device)
    check(ca.tan(on(x[1:], device)), np.tan(x[1:]), device)
    check(ca.positive(a), +x, device)
    check(ca.real(a), np.real(x), device)
    check(ca.imag(a), np.imag(x), device)
    check(ca.conj(a), np.conj(x), device)
    check(ca.bitwise_invert(on(np.arange(5), device)), ~np.arange(5), device)
    check(ca.isinf(on(np.arange(3), device)), np.isinf(np.arange(3)), device)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_binary_float_functions(device, dt):
    x1 = floats((3, 4), dt)
    x2 = floats((4,), dt)
    x2[:3] = [-0.0, 0.0, np.inf]
    x1[0, :3] = [0.0, -np.inf, np.nan]
    a, b = on(x1, device), on(x2, device)
    check(ca.copysign(a, b), np.copysign(x1, x2), device)
    check(ca.logical_xor(a > 0, b > 0), np.logical_xor(x1 > 0, x2 > 0), device)
    check(ca.pow(on(np.abs(x1), device), b[3]), np.abs(x1) ** x2[3], device)
    y1 = np.array([1.0, 0.0, -0.0, 8.0, -2.0, np.inf, -np.inf, 1.0, 3.0, np.nan,
                   np.finfo(dt).tiny, np.finfo(dt).max, 2.0], dt)
    y2 = np.array([2.0, -1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, np.nan, 1.0, 0.0, np.inf, 1.0], dt)
    check(ca.nextafter(on(y1, device), on(y2, device)), np.nextafter(y1, y2), device, exact=True)
    r = floats(64, dt)
    check(ca.nextafter(on(r, device), 0.0), np.nextafter(r, dt(0)), device, exact=True)


# -- manipulation -------------------------------------------------------------------------------

def test_manipulation(device):
    x = floats((3, 4, 5))
    a = on(x, device)
    v = a[:, ::-1, 1:]                          # a non-contiguous view
    xv = x[:, ::-1, 1:]
    check(ca.concat([a, a], axis=1), np.concat([x, x], axis=1), device)
    check(ca.concat([a, v[:, :, :1]], axis=None), np.concat([x, xv[:, :, :1]], axis=None), device)
    idx = np.array([2, -1, 0, 2])
    check(ca.take(v, on(idx, device), axis=1), np.take(xv, idx, axis=1), device)
    check(ca.take(a, on(idx, device)), np.take(x, idx), device)
    order = np.argsort(xv, axis=2)
    check(ca.take_along_axis(v, on(order, device), axis=2),
          np.take_along_axis(xv, order, axis=2), device)
    check(ca.take_along_axis(v, on(order[:, :1], device), axis=-1),
          np.take_along_axis(xv, order[:, :1], axis=-1), device)
    check(ca.repeat(v, 2, axis=0), np.repeat(xv, 2, axis=0), device)
    check(ca.repeat(v, on(np.array([1, 0, 3, 2]), device), axis=2),
          np.repeat(xv, [1, 0, 3, 2], axis=2), device)
    check(ca.repeat(a, 2), np.repeat(x, 2), device)
    check(ca.roll(v, 2, axis=1), np.roll(xv, 2, axis=1), device)
    check(ca.roll(v, (1, -7), axis=(0, 2)), np.roll(xv, (1, -7), axis=(0, 2)), device)
    check(ca.roll(v, 5), np.roll(xv, 5), device)
    check(ca.tile(v, (2, 1, 3)), np.tile(xv, (2, 1, 3)), device)
    check(ca.tile(on(np.arange(3), device), 2), np.tile(np.arange(3), 2), device)
    got, want = ca.unstack(v, axis=1), np.unstack(xv, axis=1)
    assert isinstance(got, tuple) and len(got) == len(want)
    for g, w in zip(got, want):
        check(g, w, device)
    for k in (-1, 0, 2):
        check(ca.tril(v, k=k), np.tril(xv, k=k), device)
        check(ca.triu(v, k=k), np.triu(xv, k=k), device)
    for n in (0, 1, 2):
        check(ca.diff(v, n=n, axis=1), np.diff(xv, n=n, axis=1), device)
    check(ca.diff(a, prepend=on(x[..., :1], device), append=1.0),
          np.diff(x, prepend=x[..., :1], append=1.0), device)
    check(ca.diff(on(x > 0, device)), np.diff(x > 0), device)
    check(ca.diff(on(np.zeros(0), device)), np.diff(np.zeros(0)), device)


def test_meshgrid(device):
    x, y, z = np.arange(3.0), np.arange(4.0) * 2, np.arange(2.0)
    for indexing in ("xy", "ij"):
        got = ca.meshgrid(on(x, device), on(y, device), on(z, device), indexing=indexing)
        want = np.meshgrid(x, y, z, indexing=indexing)
        assert isinstance(got, tuple)
        for g, w in zip(got, want):
            check(g, w, device)
    with pytest.raises(ValueError, match="indexing"):
        ca.meshgrid(on(x, device), indexing="yx")


def test_cumulative(device):
    x = R.integers(-5, 5, (3, 4)).astype(np.int32)
    a = on(x, device)
    for include in (False, True):
        check(ca.cumulative_sum(a, axis=1, include_initial=include),
              np.cumulative_sum(x, axis=1, include_initial=include), device)
        check(ca.cumulative_prod(a[:, ::-1], axis=0, include_initial=include),
              np.cumulative_prod(x[:, ::-1], axis=0, include_initial=include), device)
        check(ca.cumulative_sum(a[0], include_initial=include, dtype=ca.float64),
              np.cumulative_sum(x[0], include_initial=include, dtype=np.float64), device)
    check(ca.cumulative_sum(on(np.zeros(0), device), include_initial=True),
          np.cumulative_sum(np.zeros(0), include_initial=True), device)
    with pytest.raises(ValueError, match="axis"):
        ca.cumulative_sum(a)


def test_standard_keywords(device):
    x = floats((4, 6))
    x[0, :3] = x[0, 3]                          # ties, for the stable descending order
    a = on(x, device)
    check(ca.reshape(a, (6, 4), copy=True), x.reshape(6, 4), device)
    view = ca.reshape(a, (24,), copy=False)
    assert view.base is a or view.base is a.base
    with pytest.raises(ValueError, match="copy"):
        ca.reshape(a.T, (24,), copy=False)
    assert ca.reshape(a, (24,), copy=True).base is None
    for axis in (0, 1, -1):
        check(ca.sort(a, axis=axis, descending=True), -np.sort(-x, axis=axis, stable=True),
              device)
        check(ca.argsort(a, axis=axis, descending=True),
              np.argsort(-x, axis=axis, stable=True), device)
    check(ca.sort(a, axis=None), np.sort(x, axis=None), device)
    check(ca.var(a, axis=1, correction=1), np.var(x, axis=1, correction=1), device)
    check(ca.std(a, axis=(0, 1), correction=0.5, keepdims=True),
          np.std(x, axis=(0, 1), correction=0.5, keepdims=True), device)
    with pytest.raises(ValueError, match="ddof"):
        ca.std(a, ddof=1, correction=1)
    check(ca.clip(a, min=-1.0, max=1.0), np.clip(x, min=-1.0, max=1.0), device)
    check(ca.clip(a, -1.0), np.clip(x, -1.0, None), device)
    check(ca.clip(a, max=on(x[0], device)), np.clip(x, max=x[0]), device)
    check(ca.clip(a), np.clip(x, None, None), device)
    check(ca.clip(a, a_min=0.0, a_max=0.5), np.clip(x, 0.0, 0.5), device)
    ints = on(np.arange(6, dtype=np.int32), device)
    check(ca.clip(ints, 1, 4), np.clip(np.arange(6, dtype=np.int32), 1, 4), device)


# -- searching and sets --------------------------------------------------------------------------

def test_nonzero_and_count(device):
    x = R.integers(0, 3, (3, 4, 2)) * 1.0
    a = on(x, device)
    got, want = ca.nonzero(a[:, ::-1]), np.nonzero(x[:, ::-1])
    assert isinstance(got, tuple) and len(got) == 3
    for g, w in zip(got, want):
        check(g, w, device)
    check(ca.count_nonzero(a, axis=(0, 2), keepdims=True),
          np.count_nonzero(x, axis=(0, 2), keepdims=True).astype(np.int64), device)
    assert int(ca.count_nonzero(a)) == np.count_nonzero(x)
    with pytest.raises(ValueError, match="0d"):
        ca.nonzero(on(np.float64(1.0), device))


def test_searchsorted_and_isin(device):
    s = np.sort(np.array([1.0, 2.0, 2.0, 2.0, 5.0, np.nan, 7.0, -3.0]))
    v = np.array([[2.0, 0.0, np.nan], [9.0, -4.0, 5.0]])
    for side in ("left", "right"):
        check(ca.searchsorted(on(s, device), on(v, device), side=side),
              np.searchsorted(s, v, side=side), device)
    perm = R.permutation(len(s))
    check(ca.searchsorted(on(s[perm], device), on(v, device), sorter=on(np.argsort(s[perm]),
                                                                        device)),
          np.searchsorted(s[perm], v, sorter=np.argsort(s[perm])), device)
    check(ca.searchsorted(on(np.zeros(0), device), on(v, device)),
          np.searchsorted(np.zeros(0), v), device)
    big = np.sort(R.integers(0, 50, 1000))
    q = R.integers(-5, 55, 77)
    check(ca.searchsorted(on(big, device), on(q, device), side="right"),
          np.searchsorted(big, q, side="right"), device)
    with pytest.raises(ValueError, match="side"):
        ca.searchsorted(on(s, device), on(v, device), side="middle")
    x1, x2 = R.integers(0, 10, (3, 4)), R.integers(0, 10, 5)
    check(ca.isin(on(x1, device), on(x2, device)), np.isin(x1, x2), device)
    check(ca.isin(on(x1, device), on(x2, device), invert=True), np.isin(x1, x2, invert=True),
          device)
    check(ca.isin(on(v, device), on(s, device)), np.isin(v, s), device)
    check(ca.isin(on(x1, device), on(np.zeros(0, np.int64), device)),
          np.isin(x1, np.zeros(0, np.int64)), device)


def test_unique(device):
    x = R.integers(0, 5, (4, 6)).astype(np.float64)
    x[0, :3] = np.nan
    a = on(x, device)
    check(ca.unique_values(a), np.unique_values(x), device)
    got, want = ca.unique_counts(a), np.unique_counts(x)
    check(got.values, want.values, device)
    check(got.counts, want.counts, device)
    got, want = ca.unique_inverse(a[:, ::2]), np.unique_inverse(x[:, ::2])
    check(got.values, want.values, device)
    check(got.inverse_indices, want.inverse_indices, device)
    got, want = ca.unique_all(a), np.unique_all(x)
    assert got._fields == want._fields
    for g, w in zip(got, want):
        check(g, w, device)
    empty = ca.unique_all(on(np.zeros(0), device))
    assert [e.shape for e in empty] == [(0,), (0,), (0,), (0,)]


# -- top-level linear algebra -------------------------------------------------------------------

def test_linear_algebra(device):
    x, y = floats((2, 3, 4)), floats((4, 3, 5))
    a, b = on(x, device), on(y, device)
    check(ca.matrix_transpose(a), np.matrix_transpose(x), device)
    check(ca.tensordot(a, b, axes=([1, 2], [1, 0])), np.tensordot(x, y, axes=([1, 2], [1, 0])),
          device)
    check(ca.tensordot(a, a, axes=0), np.tensordot(x, x, axes=0), device)
    check(ca.tensordot(a[0], b[:, 0], axes=1), np.tensordot(x[0], y[:, 0], axes=1), device)
    check(ca.vecdot(a, a[:, :1]), np.vecdot(x, x[:, :1]), device)
    xi = R.integers(-3, 3, (3, 4)).astype(np.int32)
    check(ca.vecdot(on(xi, device), on(xi, device), axis=0), np.vecdot(xi, xi, axis=0), device)
    with pytest.raises(ValueError, match="matrix_transpose"):
        ca.matrix_transpose(a[0, 0])
    with pytest.raises(ValueError, match="same size"):
        ca.vecdot(a, b)


def test_bad_input(device):
    a = on(floats((2, 3)), device)
    with pytest.raises(IndexError, match="integer"):
        ca.take(a, on([0.5], device), axis=0)
    with pytest.raises(ValueError, match="non-negative"):
        ca.diff(a, n=-1)
    with pytest.raises(ValueError, match="at least two"):
        ca.tril(a[0])
    with pytest.raises(ValueError, match="negative"):
        ca.repeat(a, -1)
    with pytest.raises(ca.AxisError, match="axis 5"):
        ca.take(a, on([0], device), axis=5)
    with pytest.raises(ValueError, match="dimensions"):
        ca.take_along_axis(a, on(np.zeros(2, np.int64), device), axis=0)


def test_eye_offsets_past_the_corner(device):
    for n, m, k in [(0, None, -2**63), (3, 4, 2**63 - 1), (3, 4, 3), (4, 3, -4), (4, 3, -3)]:
        check(ca.eye(n, m, k=k, dtype=ca.float64, device=device), np.eye(n, m, k=k), device)

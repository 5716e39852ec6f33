"""carray.nn's fused row kernels (softmax, log_softmax, layer_norm, rms_norm and their gradients)
against NumPy references on random inputs: any axis, non-contiguous views, empty rows and
batches, float32 and float64, on each device."""

import numpy as np
import pytest

import carray as ca
from carray import nn

from conftest import on, to_numpy

TOL = {"float32": dict(rtol=2e-5, atol=2e-6), "float64": dict(rtol=1e-12, atol=1e-13)}


def ref_softmax(x, axis):
    x = x.astype(np.float64)
    if x.size == 0:
        return x
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def ref_log_softmax(x, axis):
    x = x.astype(np.float64)
    if x.size == 0:
        return x
    s = x - x.max(axis=axis, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


def rand(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype) * 3


def check(a, ref, dtype):
    got = to_numpy(a)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_allclose(got, ref, **TOL[dtype])


CASES = [((7, 33), -1), ((7, 33), 0), ((3, 5, 6), 1), ((2, 3, 4, 5), 2), ((300, 257), -1),
         ((5,), 0), ((), 0), ((0, 4), -1), ((4, 0), -1), ((4, 0), 0)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,axis", CASES)
def test_softmax_and_log_softmax(device, dtype, shape, axis):
    x = rand(shape, dtype)
    a = on(x, device)
    y = nn.softmax(a, axis)
    assert y.device == device and y.shape == x.shape
    check(y, ref_softmax(x, axis) if x.ndim else np.ones(()), dtype)
    check(nn.log_softmax(a, axis), ref_log_softmax(x, axis) if x.ndim else np.zeros(()), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,axis", [s for s in CASES if s[0] != ()])
def test_softmax_grads(device, dtype, shape, axis):
    x, g = rand(shape, dtype), rand(shape, dtype, 1)
    y = ref_softmax(x, axis)
    ly = ref_log_softmax(x, axis)
    want = y * (g - (g * y).sum(axis=axis, keepdims=True))
    check(nn.softmax_grad(on(y.astype(dtype), device), on(g, device), axis), want, dtype)
    want = g - np.exp(ly) * g.sum(axis=axis, keepdims=True)
    check(nn.log_softmax_grad(on(ly.astype(dtype), device), on(g, device), axis), want, dtype)


def test_softmax_non_contiguous_views(device):
    x = rand((12, 40), "float64")
    a = on(x, device)
    for view, ref in ((a[::2, 1::3], x[::2, 1::3]), (a.T, x.T)):
        for axis in (0, 1, -1):
            check(nn.softmax(view, axis), ref_softmax(ref, axis), "float64")
            check(nn.log_softmax(view, axis), ref_log_softmax(ref, axis), "float64")
    g = rand((40, 12), "float64", 2)
    y = ref_softmax(x.T, 0)
    check(nn.softmax_grad(on(y, device), on(g, device).T.T, 0),
          y * (g - (g * y).sum(axis=0, keepdims=True)), "float64")


def test_softmax_extremes(device):
    x = np.array([[1e30, -1e30, 0.0], [-np.inf, -np.inf, -np.inf], [np.nan, 1.0, 2.0],
                  [-np.inf, 0.0, 0.0]], np.float32)
    y = to_numpy(nn.softmax(on(x, device), -1))
    np.testing.assert_array_equal(y[0], [1, 0, 0])
    assert np.isnan(y[1]).all() and np.isnan(y[2]).all()
    np.testing.assert_allclose(y[3], [0, 0.5, 0.5])
    ym = to_numpy(nn.softmax(on(x, device), -1, masked=True))
    np.testing.assert_array_equal(ym[1], [0, 0, 0])
    np.testing.assert_allclose(ym[3], [0, 0.5, 0.5])
    ly = to_numpy(nn.log_softmax(on(x[:1], device)))
    np.testing.assert_array_equal(ly[0], np.array([0, -2e30, -1e30], np.float32))


def test_softmax_errors():
    a = ca.ones((2, 3))
    with pytest.raises(ca.AxisError, match="axis 2 is out of bounds"):
        nn.softmax(a, 2)
    with pytest.raises(RuntimeError, match="float32 or float64"):
        nn.softmax(ca.ones((2, 3), dtype="int64"))
    with pytest.raises(TypeError, match="carray.Array"):
        nn.log_softmax([1.0, 2.0])
    with pytest.raises(RuntimeError, match="does not match"):
        nn.softmax_grad(a, ca.ones((3, 2)), -1)


def ref_layer_norm(x, k, w, b, eps, center=True):
    axes = tuple(range(x.ndim - k, x.ndim))
    x = x.astype(np.float64)
    mean = x.mean(axis=axes, keepdims=True) if center else np.zeros(x.shape[:x.ndim - k] + (1,) * k)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    rstd = 1 / np.sqrt(var + eps)
    y = (x - mean) * rstd
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y, mean, rstd


def ref_norm_grad(g, x, k, w, eps, center=True):
    axes = tuple(range(x.ndim - k, x.ndim))
    lead = tuple(range(x.ndim - k))
    _, mean, rstd = ref_layer_norm(x, k, None, None, eps, center)
    xhat = (x - mean) * rstd
    gh = g * w if w is not None else g
    gx = gh - xhat * (gh * xhat).mean(axis=axes, keepdims=True)
    if center:
        gx = gx - gh.mean(axis=axes, keepdims=True)
    return gx * rstd, (g * xhat).sum(axis=lead), g.sum(axis=lead)


NORM_CASES = [((6, 10), 1), ((4, 3, 37), 1), ((2, 3, 4, 5), 2), ((5, 300), 1), ((3, 4), 2),
              ((0, 8), 1), ((7,), 1)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,k", NORM_CASES)
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_and_grad(device, dtype, shape, k, affine):
    x, g = rand(shape, dtype) + 1.5, rand(shape, dtype, 1)
    nshape = shape[len(shape) - k:]
    w = rand(nshape, dtype, 2) if affine else None
    b = rand(nshape, dtype, 3) if affine else None
    d = (lambda v: None if v is None else on(v, device))
    y, mean, rstd = nn.layer_norm(d(x), k, d(w), d(b), 1e-5)
    ry, rmean, rrstd = ref_layer_norm(x, k, w, b, 1e-5)
    check(y, ry, dtype)
    assert mean.shape == rmean.shape and rstd.shape == rrstd.shape
    check(mean, rmean, dtype)
    check(rstd, rrstd, dtype)
    gx, gw, gb = nn.layer_norm_grad(d(g), d(x), mean, rstd, d(w))
    rgx, rgw, rgb = ref_norm_grad(g.astype(np.float64), x.astype(np.float64), k, w, 1e-5)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == "float32" else TOL[dtype]
    np.testing.assert_allclose(to_numpy(gx), rgx, **tol)
    np.testing.assert_allclose(to_numpy(gw), rgw, **tol)
    np.testing.assert_allclose(to_numpy(gb), rgb, **tol)
    gx, gw, gb = nn.layer_norm_grad(d(g), d(x), mean, rstd, d(w), (True, False, False))
    assert gw is None and gb is None and gx.shape == shape


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,k", NORM_CASES)
@pytest.mark.parametrize("affine", [True, False])
def test_rms_norm_and_grad(device, dtype, shape, k, affine):
    x, g = rand(shape, dtype), rand(shape, dtype, 1)
    nshape = shape[len(shape) - k:]
    w = rand(nshape, dtype, 2) if affine else None
    d = (lambda v: None if v is None else on(v, device))
    y, rstd = nn.rms_norm(d(x), k, d(w), 1e-6)
    ry, _, rrstd = ref_layer_norm(x, k, w, None, 1e-6, center=False)
    check(y, ry, dtype)
    check(rstd, rrstd, dtype)
    gx, gw = nn.rms_norm_grad(d(g), d(x), rstd, d(w))
    rgx, rgw, _ = ref_norm_grad(g.astype(np.float64), x.astype(np.float64), k, w, 1e-6, False)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == "float32" else TOL[dtype]
    np.testing.assert_allclose(to_numpy(gx), rgx, **tol)
    np.testing.assert_allclose(to_numpy(gw), rgw, **tol)


def test_norm_non_contiguous(device):
    x = rand((8, 24), "float64")
    a = on(x, device)
    w = rand((8,), "float64", 1)
    y, mean, rstd = nn.layer_norm(a.T, 1, on(w, device), None, 1e-5)
    check(y, ref_layer_norm(x.T, 1, w, None, 1e-5)[0], "float64")
    y, rstd = nn.rms_norm(a[:, ::3], 1, None, 1e-6)
    check(y, ref_layer_norm(x[:, ::3], 1, None, None, 1e-6, False)[0], "float64")


def test_norm_errors():
    x = ca.ones((2, 3))
    with pytest.raises(RuntimeError, match="weight of size \\[4\\] does not match"):
        nn.layer_norm(x, 1, ca.ones((4,)))
    with pytest.raises(RuntimeError, match="normalized_ndim"):
        nn.rms_norm(x, 3)
    with pytest.raises(RuntimeError, match="weight has dtype float64 but"):
        nn.layer_norm(x.astype("float32"), 1, ca.ones((3,), dtype="float64"))

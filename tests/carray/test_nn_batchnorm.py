"""carray.nn.batch_norm / batch_norm_grad (training mode; one-pass statistics and the running
statistics' update in one launch on the device) against NumPy float64 formulas on cpu and gpu:
2-d to 4-d inputs, channels longer than a work group, non-contiguous inputs, no weight or bias,
float64, and bad arguments."""

import numpy as np
import pytest

import carray as ca
from carray import nn

from conftest import have_gpu

DEVICES = ["cpu", "gpu"]


def _dev(device):
    if device == "gpu" and not have_gpu():
        pytest.skip("no OpenCL device")
    return device


def _reference(x, w, b, g, eps):
    axes = (0,) + tuple(range(2, x.ndim))
    cs = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    mean, var = x.mean(axes), x.var(axes)
    xhat = (x - mean.reshape(cs)) / np.sqrt(var.reshape(cs) + eps)
    y = xhat * (1 if w is None else w.reshape(cs)) + (0 if b is None else b.reshape(cs))
    m = x.size // x.shape[1]
    gx = (g - g.sum(axes, keepdims=True) / m - xhat * (g * xhat).sum(axes, keepdims=True) / m)
    gx = gx / np.sqrt(var.reshape(cs) + eps) * (1 if w is None else w.reshape(cs))
    return y, mean, var, gx, (g * xhat).sum(axes), g.sum(axes)


def _close(got, want, dtype):
    tol = 3e-5 if dtype == "float32" else 1e-11
    np.testing.assert_allclose(np.asarray(got.to("cpu")), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(5, 3), (4, 2, 7), (3, 4, 5, 6), (2, 3, 300), (1, 1, 2, 2)])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_and_grad_match_numpy(device, dtype, shape, affine):
    _dev(device)
    rng = np.random.default_rng(sum(shape))
    C = shape[1]
    x = rng.standard_normal(shape) * 3 + 2
    g = rng.standard_normal(shape)
    w, b = (rng.standard_normal(C), rng.standard_normal(C)) if affine else (None, None)
    rm0, rv0 = rng.standard_normal(C), rng.random(C) + 0.5
    on = [None if a is None else ca.array(a.astype(dtype)).to(device) for a in (x, w, b, rm0, rv0)]
    xa, wa, ba, rm, rv = on
    y, mean, var, invstd = nn.batch_norm(xa, wa, ba, 1e-5, rm, rv, 0.2)
    want = _reference(x, w, b, g, 1e-5)
    for got, ref in zip((y, mean, var), want):
        _close(got, ref, dtype)
    _close(invstd, 1 / np.sqrt(want[2] + 1e-5), dtype)
    m = x.size // C
    _close(rm, 0.8 * rm0 + 0.2 * want[1], dtype)
    _close(rv, 0.8 * rv0 + 0.2 * want[2] * m / (m - 1), dtype)
    grads = nn.batch_norm_grad(ca.array(g.astype(dtype)).to(device), xa, mean, invstd, wa)
    for got, ref in zip(grads, want[3:]):
        _close(got, ref, dtype)
    gx_only = nn.batch_norm_grad(ca.array(g.astype(dtype)).to(device), xa, mean, invstd, wa,
                                 (True, False, False))
    assert gx_only[1] is None and gx_only[2] is None
    _close(gx_only[0], want[3], dtype)


@pytest.mark.parametrize("device", DEVICES)
def test_non_contiguous_input_and_one_pass_accuracy(device):
    """A transposed view, and a channel with a large mean (where E[x^2] - E[x]^2 in float32
    would lose every digit of the variance)."""
    _dev(device)
    rng = np.random.default_rng(5)
    base = (rng.standard_normal((6, 2, 3, 4)) + np.array([1e4, 0])[None, :, None, None])
    xa = ca.array(np.ascontiguousarray(base.transpose(0, 1, 3, 2)).astype(np.float32)).to(device)
    xv = ca.array(base.astype(np.float32)).to(device).transpose((0, 1, 3, 2))
    for x in (xa, xv):
        y, mean, var, _ = nn.batch_norm(x)
        ref = base.transpose(0, 1, 3, 2).astype(np.float32).astype(np.float64)
        np.testing.assert_allclose(np.asarray(var.to("cpu")), ref.var((0, 2, 3)), rtol=2e-3)
        np.testing.assert_allclose(np.asarray(y.to("cpu")), _reference(ref, None, None, ref,
                                                                       1e-5)[0], atol=5e-3)


@pytest.mark.parametrize("device", DEVICES)
def test_bad_arguments(device):
    _dev(device)
    x = ca.ones((2, 3, 4), device=device)
    with pytest.raises(RuntimeError, match=r"weight must have shape \[3\]"):
        nn.batch_norm(x, ca.ones((4,), device=device))
    with pytest.raises(ValueError, match="both running_mean and running_var"):
        nn.batch_norm(x, running_mean=ca.zeros((3,), device=device))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.batch_norm(ca.ones((1, 3), device=device))
    with pytest.raises(ValueError, match="running_var must be C-contiguous"):
        nn.batch_norm(x, running_mean=ca.zeros((3,), device=device),
                      running_var=ca.zeros((6,), device=device)[::2])
    with pytest.raises(RuntimeError, match="float32 or float64"):
        nn.batch_norm(ca.ones((2, 3), dtype="int32", device=device))
    with pytest.raises(RuntimeError, match="must be \\(N, C, ...\\)"):
        nn.batch_norm(ca.ones((3,), device=device))
    y, mean, var, invstd = nn.batch_norm(x)
    with pytest.raises(RuntimeError, match="grad_output must have the input's shape"):
        nn.batch_norm_grad(ca.ones((2, 3), device=device), x, mean, invstd)
    if device == "gpu":
        with pytest.raises(ca.DeviceMismatchError):
            nn.batch_norm(x, ca.ones((3,)))


@pytest.mark.parametrize("parts", [2, 3, 5])
@pytest.mark.parametrize("shape", [(7, 3, 300), (4, 2, 5, 6), (9, 2), (3, 2, 70)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_statistics_spread_over_several_work_groups_per_channel(monkeypatch, parts, shape,
                                                                 dtype):
    """The device's statistics kernels with `parts` work groups per channel (their partial
    results merged by a second launch; parts beyond the rows of images get none), as a GPU
    with few channels per compute unit runs them: the same values as NumPy, incl. a channel
    with a large mean."""
    _dev("gpu")
    from carray.opencl import _batchnorm
    monkeypatch.setattr(_batchnorm, "_parts", lambda C, N, S: parts)
    rng = np.random.default_rng(parts + len(shape))
    C = shape[1]
    x = rng.standard_normal(shape) * 3 + np.arange(C).reshape((1, C) + (1,) * (len(shape) - 2))
    x[:, 0] += 1e3
    g = rng.standard_normal(shape)
    w, b = rng.standard_normal(C), rng.standard_normal(C)
    rm0, rv0 = rng.standard_normal(C), rng.random(C) + 0.5
    xa, wa, ba, rm, rv = (ca.array(a.astype(dtype)).to("gpu") for a in (x, w, b, rm0, rv0))
    y, mean, var, invstd = nn.batch_norm(xa, wa, ba, 1e-5, rm, rv, 0.2)
    want = _reference(x, w, b, g, 1e-5)
    tol = 2e-4 if dtype == "float32" else 1e-10
    for got, ref in zip((y, mean, var), want):
        np.testing.assert_allclose(np.asarray(got.to("cpu")), ref, rtol=tol, atol=tol)
    m = x.size // C
    np.testing.assert_allclose(np.asarray(rv.to("cpu")), 0.8 * rv0 + 0.2 * want[2] * m / (m - 1),
                               rtol=tol, atol=tol)
    grads = nn.batch_norm_grad(ca.array(g.astype(dtype)).to("gpu"), xa, mean, invstd, wa)
    for got, ref in zip(grads, want[3:]):
        np.testing.assert_allclose(np.asarray(got.to("cpu")), ref, rtol=tol, atol=tol)


def test_parts_fill_the_device_but_not_beyond_the_rows():
    """_parts: two work groups per compute unit in all, at most one per row of images, none
    smaller than 16K values; 1 when the channels alone fill the device."""
    _dev("gpu")
    from carray.opencl import _batchnorm
    from carray.opencl._runtime import runtime
    cus = runtime().device.max_compute_units
    assert _batchnorm._parts(4 * cus, 128, 1024) == 1
    assert _batchnorm._parts(1, 10**6, 1024) == 2 * cus
    assert _batchnorm._parts(1, 3, 1 << 20) == 3              # 3 images, a row each
    assert _batchnorm._parts(1, 1024, 64) == min(2 * cus, 1024 * 64 // 16384)

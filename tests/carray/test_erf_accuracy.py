"""carray.erf against math.erf (a float64 reference) on a dense grid of float32 values (every
float from 0 to 4.5 at a fixed bit stride, both sides of the 0.875 switch float by float, the
tails, subnormals, +-inf and NaN), as a maximum error in ulp on each device; float64 to double
accuracy. And carray.nn.gelu / gelu_grad (one kernel each on the device) against float64
references."""

import math

import numpy as np
import pytest

import carray as ca
from carray import nn

from conftest import on, to_numpy

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _grid32():
    """Non-negative float32 values: every 2003rd bit pattern below 4.5, 4000 consecutive floats
    around 0.875, around 1e-30, and the subnormals' edge; with their negatives."""
    bits = np.arange(0, 0x40900000, 2003, dtype=np.uint32)
    around = np.float32(0.875).view(np.uint32) + np.arange(-2000, 2000, dtype=np.int64)
    tiny = np.float32(1e-30).view(np.uint32) + np.arange(0, 200, dtype=np.int64)
    sub = np.arange(0, 100, dtype=np.uint32) + np.uint32(0x007fff00)
    x = np.concatenate([bits, around.astype(np.uint32), tiny.astype(np.uint32), sub])
    x = x.view(np.float32)
    return np.concatenate([x, -x, np.float32([3.9, 4.0, 4.01, 10.0, 1e30, 3e38])])


def _ulp_error(got, ref, dtype):
    """|got - ref| in units of the spacing of ref rounded to dtype."""
    r = ref.astype(dtype)
    return np.abs(got.astype(np.float64) - ref) / np.spacing(np.abs(r)).astype(np.float64)


@pytest.mark.parametrize("dtype, limit", [("float32", 2.0), ("float64", 2.0)])
def test_erf_max_ulp(device, dtype, limit):
    x = _grid32().astype(dtype)
    if dtype == "float64":
        x = x[::7]                                      # (math.erf is the slow part)
    got = to_numpy(ca.erf(on(x, device)))
    ref = _erf(x.astype(np.float64))
    err = _ulp_error(got, ref, dtype)
    worst = int(np.argmax(err))
    assert err.max() < limit, f"max error {err.max():.3f} ulp at x = {x[worst]!r}"
    assert np.array_equal(np.signbit(got), np.signbit(x))          # odd, -0.0 kept


def test_erf_every_float_near_the_switch_and_the_clamp(device):
    # float32 erf is 1 - e^(-a^2) R(a) from 0.875 up, a clamped at 4: its largest errors sit
    # just above the switch (where erfc is largest) and the clamp must round to 1 cleanly
    parts = []
    for lo, hi in ((0.875, 0.905), (3.85, 4.15)):
        b0, b1 = np.float32(lo).view(np.uint32), np.float32(hi).view(np.uint32)
        parts.append(np.arange(b0, b1, dtype=np.uint32)[::3].view(np.float32))
    x = np.concatenate(parts + [-parts[0]])
    got = to_numpy(ca.erf(on(x, device)))
    err = _ulp_error(got, _erf(x.astype(np.float64)), "float32")
    assert err.max() < 2, f"max error {err.max():.3f} ulp at x = {x[int(np.argmax(err))]!r}"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_erf_special_values(device, dtype):
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45 if dtype == "float32" else 5e-324,
                  -6.0, 6.0, 1e-8], dtype)
    got = to_numpy(ca.erf(on(x, device)))
    ref = _erf(x.astype(np.float64)).astype(dtype)
    np.testing.assert_array_equal(got, ref)
    assert np.signbit(got[1])


def test_erf_non_contiguous(device):
    x = np.linspace(-5, 5, 3000, dtype=np.float32).reshape(3, 1000)[:, ::3]
    got = to_numpy(ca.erf(on(np.ascontiguousarray(x.T), device).T))
    assert _ulp_error(got, _erf(x.astype(np.float64)), "float32").max() < 2


@pytest.mark.parametrize("dtype, tol", [("float32", 3e-7), ("float64", 1e-15)])
def test_gelu_and_its_gradient(device, dtype, tol):
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.standard_normal(3000) * 4, [0.0, -0.0, 40.0, -40.0, np.inf]])
    x = x.astype(dtype).reshape(5, 601)
    x64 = x.astype(np.float64)
    cdf = 0.5 * (1 + _erf(x64 / math.sqrt(2)))
    y = to_numpy(nn.gelu(on(x, device)))
    np.testing.assert_allclose(y, x64 * cdf, rtol=tol * 10, atol=tol * 10)
    g = rng.standard_normal(x.shape).astype(dtype)
    with np.errstate(invalid="ignore"):
        ref = g * (cdf + x64 * np.exp(-x64 * x64 / 2) / math.sqrt(2 * math.pi))
    gx = to_numpy(nn.gelu_grad(on(g, device), on(x, device)))
    finite = np.isfinite(x)
    np.testing.assert_allclose(gx[finite], ref[finite], rtol=tol * 10, atol=tol * 10)
    # a transposed view and an empty array
    yt = to_numpy(nn.gelu(on(np.ascontiguousarray(x.T), device).T))
    np.testing.assert_array_equal(yt, y)
    assert nn.gelu(on(np.zeros((0, 3), dtype), device)).shape == (0, 3)


def test_gelu_errors():
    with pytest.raises(RuntimeError, match="gelu"):
        nn.gelu(ca.zeros((3,), dtype="int64"))
    with pytest.raises(RuntimeError, match="gelu_grad"):
        nn.gelu_grad(ca.zeros((3,)), ca.zeros((4,)))
    with pytest.raises(TypeError, match="gelu"):
        nn.gelu([1.0])

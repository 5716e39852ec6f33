"""carray.tanh's float32 CPU loop (a polynomial near 0, 1 - 2/(e^2|x| + 1) above) is within
2 ulp of the float64 tanh over a dense sweep, keeps the special values, and float64 stays exact."""

import math

import numpy as np

import carray


def _ulp_error(x):
    y = np.asarray(carray.tanh(carray.asarray(x)).tolist(), dtype=np.float32)
    ref = np.tanh(x.astype(np.float64))
    ulp = np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64)
    return np.abs(y - ref) / ulp


def test_tanh_float32_within_2_ulp_dense_sweep():
    lin = np.linspace(-12, 12, 400_001)
    tiny = np.geomspace(1e-30, 20, 200_001)
    x = np.concatenate([lin, tiny, -tiny, [0.625, -0.625, np.nextafter(0.625, 0)]])
    x = x.astype(np.float32)
    assert _ulp_error(x).max() <= 2.0


def test_tanh_float32_special_values():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 100.0, -100.0, 1e-40], dtype=np.float32)
    y = np.asarray(carray.tanh(carray.asarray(x)).tolist(), dtype=np.float32)
    assert y[0] == 0 and not np.signbit(y[0]) and np.signbit(y[1])
    assert list(y[2:4]) == [1.0, -1.0] and np.isnan(y[4]) and list(y[5:7]) == [1.0, -1.0]
    assert y[7] == np.float32(1e-40)  # subnormal: tanh(x) = x


def test_tanh_float32_strided_and_float64():
    x = np.random.default_rng(0).standard_normal((50, 40)).astype(np.float32)
    a = carray.asarray(x)[:, ::3]
    np.testing.assert_allclose(np.asarray(carray.tanh(a).tolist()), np.tanh(x[:, ::3]),
                               rtol=3e-7, atol=1e-30)
    d = np.random.default_rng(1).standard_normal(1000) * 5
    assert carray.tanh(carray.asarray(d)).tolist() == [math.tanh(v) for v in d]  # libm's

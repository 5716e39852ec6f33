"""carray.cumsum / cumprod (functions and methods) against NumPy 2, on every device.

Random shapes (0-d, empty, up to 5-d) and views (transposed, negative steps, broadcast), every
dtype with NaN/inf, axis None / either sign; results must equal NumPy's bit for bit (both add or
multiply in order), be C-contiguous and of NumPy's dtype (bool/int32 -> int64). Also dtype=,
out= (cast into it), long lanes, and NumPy's errors.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import carray as ca

from _opcases import operand, small_shapes
from conftest import (
    ALL_DTYPES,
    DTYPES,
    assert_raises_like,
    gpu_examples,
    on,
    random_values,
    to_numpy,
)
from conftest import assert_same as _assert_same


def assert_same(a, n):
    """a equals NumPy's n in dtype, shape and values (bit for bit but for NaN payloads and signs,
    which depend on the CPU's default NaN), and is C-contiguous (NumPy keeps a transposed
    input's layout)."""
    assert a.flags.c_contiguous
    _assert_same(a, n, strides=False, values=False)
    m = to_numpy(a)
    np.testing.assert_array_equal(m, n)
    if n.dtype.kind == "f":
        assert (np.signbit(m) == np.signbit(n))[~np.isnan(n)].all()


SET = settings(max_examples=40, deadline=None)


@st.composite
def case(draw, device):
    dtype = draw(st.sampled_from(ALL_DTYPES))
    shape = draw(small_shapes())
    a, n = draw(operand(dtype, shape, special=True, device=device))
    nd = max(n.ndim, 1)     # a 0-d array accumulates as 1-d (axis 0 and -1 are fine)
    axis = draw(st.one_of(st.none(), st.integers(-nd, nd - 1)))
    return a, n, axis, draw(st.sampled_from(["cumsum", "cumprod"]))


@gpu_examples(15)
@given(data=st.data())
@SET
def test_matches_numpy(device, data):
    a, n, axis, name = data.draw(case(device))
    with np.errstate(all="ignore"):
        expected = getattr(np, name)(n, axis=axis)
    r = getattr(ca, name)(a, axis=axis)
    assert r.device == device and r.flags.c_contiguous
    assert_same(r, expected)
    assert_same(getattr(a, name)(axis=axis), expected)


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", DTYPES + ("int8", "uint16", "uint64"))
def test_long_lanes_and_dtype_argument(device, name, dtype):
    n = random_values(dtype, (3, 700, 2), 1)
    if name == "cumprod" and n.dtype.kind == "f":
        n = (1 + n / 1e4).astype(dtype)       # factors near 1: no overflow
    a = on(n, device)
    for axis in (0, 1, -1, None):
        assert_same(getattr(ca, name)(a, axis=axis), getattr(np, name)(n, axis=axis))
    for dt in ("float32", "int32", "bool", "uint8", "int16"):
        if dt == "uint8" and n.dtype.kind == "f":
            continue        # negative floats to uint8 are undefined in C (NVIDIA saturates)
        with np.errstate(all="ignore"):
            expected = getattr(np, name)(n[:, ::-7], axis=1, dtype=dt)
        assert_same(getattr(ca, name)(a[:, ::-7], axis=1, dtype=dt), expected)


def test_out_and_zero_d(device):
    n = np.arange(12, dtype=np.float64).reshape(3, 4)
    a = on(n, device)
    out = on(np.zeros((3, 4), np.int32), device)
    assert ca.cumsum(a, axis=1, out=out) is out
    assert_same(out, np.cumsum(n, axis=1, out=np.zeros((3, 4), np.int32)))
    flat = on(np.zeros(12, np.float32), device)
    assert ca.cumprod(a + 1, out=flat) is flat
    assert_same(flat, np.cumprod(n + 1).astype(np.float32))
    z = on(np.array(5, np.int32), device)
    for axis in (None, 0, -1):
        assert_same(ca.cumsum(z, axis=axis), np.cumsum(np.array(5, np.int32), axis=axis))


def test_errors(device):
    n = np.ones((2, 3))
    a = on(n, device)
    for axis in (2, -3):
        assert_raises_like(lambda: ca.cumsum(a, axis=axis), lambda: np.cumsum(n, axis=axis))
    assert_raises_like(lambda: ca.cumprod(on(np.array(1.0), device), axis=1),
                       lambda: np.cumprod(np.array(1.0), axis=1))
    assert_raises_like(lambda: ca.cumsum(a, axis=1.0), lambda: np.cumsum(n, axis=1.0))
    assert_raises_like(lambda: ca.cumsum(a, out=on(np.zeros(5), device)),
                       lambda: np.cumsum(n, out=np.zeros(5)))
    assert_raises_like(lambda: ca.cumsum(a, out=[0] * 6), lambda: np.cumsum(n, out=[0] * 6))
    other = "cpu" if device == "gpu" else None
    if other:
        with pytest.raises(ValueError):
            ca.cumsum(a, axis=0, out=ca.zeros((2, 3), dtype="float64"))

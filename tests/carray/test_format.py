"""repr/str of carray.Array against NumPy 2's (carray/core/_format.py).

The oracle is NumPy's own arrayprint with its "dtype implied by the values" set switched to
carray's defaults (float32, int64, bool), so that `repr(x)` of a NumPy array is exactly what carray
must print.
"""

import contextlib
import math
import struct
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import carray
from carray.core import _format

from conftest import fresh_env

try:
    from numpy._core import arrayprint as _np_arrayprint
except ImportError:  # pragma: no cover
    from numpy.core import arrayprint as _np_arrayprint

DTYPES = ["float32", "float64", "int32", "int64", "bool", "int8", "int16", "uint8", "uint16",
          "uint32", "uint64"]


@contextlib.contextmanager
def _carray_defaults():
    """NumPy's repr, but leaving out dtype= for carray's defaults instead of NumPy's."""
    saved = _np_arrayprint._typelessdata
    _np_arrayprint._typelessdata = [np.int64, np.float32, np.bool_]
    try:
        with np.printoptions(legacy=False):
            yield
    finally:
        _np_arrayprint._typelessdata = saved


def np_repr(x):
    with _carray_defaults():
        return repr(x)


def np_str(x):
    with np.printoptions(legacy=False):
        return str(x)


def check(x, a=None):
    """repr and str of carray's copy of NumPy array `x` (or of `a`, the same values) match x's."""
    x = np.asarray(x)  # NumPy arithmetic on 0-d arrays gives scalars
    if a is None:
        a = carray.asarray(x)
    assert tuple(a.shape) == x.shape and str(a.dtype) == str(x.dtype)
    assert repr(a) == np_repr(x)
    assert str(a) == np_str(x)


def test_oracle_is_adapted():
    assert np_repr(np.array([1.0, 2.0], np.float32)) == "array([1., 2.])"
    assert np_repr(np.array([1.0, 2.0])) == "array([1., 2.], dtype=float64)"
    assert repr(np.array([1.0, 2.0])) == "array([1., 2.])"  # restored


# -- fixed cases ---------------------------------------------------------------------------------

def test_examples():
    assert repr(carray.asarray([[1.0, 2.0], [3.0, 4.0]])) == "array([[1., 2.],\n       [3., 4.]])"
    assert repr(carray.asarray([1, 2, 3], dtype="int32")) == "array([1, 2, 3], dtype=int32)"
    assert repr(carray.asarray([1.5, 2.0], dtype="float64")) == "array([1.5, 2. ], dtype=float64)"
    assert repr(carray.asarray(1.5)) == "array(1.5)"
    assert str(carray.asarray(1.5)) == "1.5"
    assert repr(carray.asarray(3, dtype="int32")) == "array(3, dtype=int32)"
    assert repr(carray.asarray([True, False])) == "array([ True, False])"
    assert str(carray.asarray([[1, 2], [3, 4]])) == "[[1 2]\n [3 4]]"
    assert repr(carray.zeros((0, 3))) == "array([], shape=(0, 3), dtype=float32)"
    assert repr(carray.zeros(0, dtype="int64")) == "array([], dtype=int64)"
    assert repr(carray.arange(2000)) == (
        "array([   0,    1,    2, ..., 1997, 1998, 1999], shape=(2000,))")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (1,), (5,), (2, 3), (2, 3, 4), (2, 1, 3, 2), (0,), (0, 3),
                                   (3, 0, 2), (1, 1, 1, 1)])
def test_shapes(dtype, shape):
    n = math.prod(shape)
    x = (np.arange(n, dtype=np.float64).reshape(shape) * 1.25 - 3).astype(dtype)
    check(x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_zero_d(dtype):
    for v in [0, 1, -7, 2.5, -0.0, 1e10, 1e-7, 123456.789, float("nan"), float("inf"), -math.inf]:
        if dtype == "bool":
            v = bool(v)
        elif dtype.startswith(("int", "uint")):
            if not math.isfinite(v) or not np.iinfo(dtype).min <= v <= np.iinfo(dtype).max:
                continue
            v = int(v)
        check(np.array(v, dtype=dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("values", [
    [1.5, 2.25, -3.0],
    [0.1, 0.2, 0.3],
    [1 / 3, 2 / 3, 1.0],
    [-0.0, 0.0, 1.0],
    [-0.0],
    [math.nan, math.inf],
    [math.nan, -math.inf, 1.5],
    [math.nan, -math.inf, 1e20],
    [math.nan, math.nan],
    [-math.inf],
    [1e100, 1e-100, math.nan],
    [1e7, 1.0],          # scientific for float32 (>= 1e6), not for float64
    [1e8, 1.0],
    [999999.0, 1.0],
    [12345678.9, 0.5],
    [1e-4, 1.0],
    [1e-5, 1.0],
    [1e-4, 0.1],         # ratio exactly 1000 in float32
    [1e-5, 1.2345678e-5],  # min_digits pulls exact digits, exponent changes
    [0.1, 1.2345678e-5],
    [1.0, 1000.0],
    [1.0, 1000.5],
    [3.4e38, -1e-38],
    [1e-45, 1.0],
    [0.0, 0.0],
    [123.456, -0.001],
    [1e16, 1e-16],
    [1e300, -1e-300, 5.0],
])
def test_floats(dtype, values):
    with np.errstate(over="ignore"):
        x = np.array(values, dtype=dtype)
    check(x)
    check(x.reshape(-1, 1))


@pytest.mark.parametrize("dtype", ["int32", "int64", "int8", "int16", "uint8", "uint16", "uint32",
                                   "uint64"])
def test_ints(dtype):
    info = np.iinfo(dtype)
    check(np.array([info.min, 0, info.max], dtype=dtype))
    check(np.array([5, 3, 100], dtype=dtype))
    check(np.arange(-50 if info.min else 0, 50, dtype=dtype).reshape(-1, 10))


def test_bools():
    check(np.array([[True, False], [False, True]]))
    check(np.zeros((3, 4, 5), bool))


def test_line_wrapping():
    check(np.linspace(0, 1, 40))
    check(np.linspace(0, 1, 40, dtype=np.float32))
    check(np.arange(100, dtype=np.int32))
    check(np.arange(200).reshape(2, 100))
    check(np.linspace(-1, 1, 90).reshape(3, 30))
    check(np.array([1e-300] * 12))
    # the dtype= goes onto its own line when it does not fit on the last one
    check(np.arange(21, dtype=np.int32) + 10**9)
    check(np.arange(18, dtype=np.int32) * 1000)


@pytest.mark.parametrize("dtype", DTYPES)
def test_summarised(dtype):
    base = np.arange(-4000, 4000, 2.5)[:3000]
    check(base.astype(dtype))
    check(base.reshape(30, 100).astype(dtype))
    check(base.reshape(10, 3, 100).astype(dtype))
    check(base.reshape(5, 6, 100).astype(dtype))   # axis of 6 == 2 * edgeitems: not cut
    check(base.reshape(1000, 3).astype(dtype))
    check(np.arange(1001).astype(dtype))
    check(np.arange(1000).astype(dtype))          # threshold: 1000 elements are all shown


def test_summarised_uses_only_the_edges():
    # the formatter sees only the printed corners, as NumPy's does
    x = np.full(5000, 0.5)
    x[2500] = 1e20
    check(x)
    x = np.arange(3000.0, dtype=np.float32).reshape(3, 1000)
    x[1, 500] = np.nan
    check(x)


def test_large_summarised_is_fast():
    a = carray.zeros((1000, 10000))  # 10**7 elements: printing must not read them all
    assert repr(a) == np_repr(np.zeros((1000, 10000), np.float32))
    assert str(a) == np_str(np.zeros((1000, 10000), np.float32))


@pytest.mark.parametrize("dtype", DTYPES)
def test_views(dtype):
    x = (np.arange(60, dtype=np.float64).reshape(3, 4, 5) / 7 - 2).astype(dtype)
    a = carray.asarray(x)
    check(x.T, a.T)
    check(x[::-2], a[::-2])
    check(x[:, 1, ::-1], a[:, 1, ::-1])
    check(x[1:, ::2, 3], a[1:, ::2, 3])
    check(x[..., None], a[..., None])
    check(x[2, 3, 4, ...], a[2, 3, 4])  # a 0-d view
    y = (np.arange(3000, dtype=np.float64) * 0.37).astype(dtype).reshape(30, 100)
    b = carray.asarray(y)
    check(y.T, b.T)
    check(y[::-3, ::-1], b[::-3, ::-1])
    check(y[:, 7], b[:, 7])


def test_float32_scalar_str():
    for v in [1.5, 1e10, 1e16, 1e15, 123456789.0, 1e-4, 1e-5, 1.0, -0.0, 0.0, 100000.0,
              999999.0, 999999.94, 1e6, 1234567.0, 16777216.0, 0.00010001, 2.0**-13, 1e-45,
              3.4028235e38, -2.5e-7, 1000099968.0]:
        x = np.float32(v)
        assert str(carray.asarray(float(x))) == str(x), v
        assert repr(carray.asarray(float(x))) == np_repr(np.array(x))


def test_float32_powers_of_two():
    vals = [2.0**e for e in range(-149, 128)]
    for v in vals:
        x = np.array([v], np.float32)
        assert _format._shortest(v, True) == _format._split_digits(
            np.format_float_scientific(np.float32(v), unique=True, trim="k")), v
        check(x)
        check(np.array(v, np.float32))


def test_device_arrays_are_copied_to_cpu():
    class OnDevice:
        """Stands in for an array on another device: repr/str must go through .to('cpu')."""
        def __init__(self, a):
            self._a = a
            self.device = "gpu"
            self.dtype, self.shape = a.dtype, a.shape

        def to(self, device):
            assert device == "cpu"
            return self._a

        def tolist(self):
            raise AssertionError("read without copying to the cpu")

    a = carray.asarray([[1.0, 2.0], [3.0, 4.0]], dtype="float64")
    assert _format.array_repr(OnDevice(a)) == repr(a)
    assert _format.array_str(OnDevice(a)) == str(a)


def test_format_does_not_import_numpy():
    code = ("import sys, carray; a = carray.arange(5000); repr(a); str(a); "
            "repr(carray.ones((3, 3))); str(carray.asarray(1.5)); "
            "assert 'numpy' not in sys.modules, 'numpy imported'")
    subprocess.run([sys.executable, "-c", code], check=True, env=fresh_env())


# -- random cases --------------------------------------------------------------------------------

_F32_FINITE = st.floats(width=32, allow_nan=False, allow_infinity=False)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_float32_shortest_digits_match_numpy(bits):
    v = struct.unpack("<f", struct.pack("<I", bits))[0]
    x = np.float32(v)
    if not np.isfinite(x):
        return
    ours = _format._shortest(v, True)
    assert ours == _format._split_digits(np.format_float_scientific(abs(x), unique=True, trim="k"))
    assert str(carray.asarray(v)) == str(x)
    check(np.array([v], np.float32))


@settings(max_examples=150, deadline=None)
@given(hnp.arrays(dtype=st.sampled_from([np.float32, np.float64, np.int32, np.int64, np.bool_]),
                  shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=6)))
def test_random_arrays(x):
    check(x)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["float32", "float64"]),
       st.lists(st.one_of(_F32_FINITE, st.floats(), st.sampled_from([0.0, -0.0, 1e-4, 1e6, 1e8])),
                min_size=1, max_size=30),
       st.booleans())
def test_random_floats(dtype, values, as_2d):
    with np.errstate(over="ignore"):
        x = np.array(values, dtype=dtype)
    if as_2d and x.size % 2 == 0:
        x = x.reshape(2, -1)
    check(x)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["float32", "float64"]),
       st.floats(-30, 30), st.floats(0.001, 3), st.integers(0, 1200))
def test_random_scaled_rows(dtype, log_scale, spread, n):
    # values of one magnitude over many rows: exercises wrapping, padding and summarising
    x = (np.linspace(-spread, spread, n) * 10.0**log_scale).astype(dtype)
    check(x)
    if n % 4 == 0:
        check(x.reshape(4, -1))

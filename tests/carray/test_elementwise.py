"""carray's elementwise ops (functions and Array operators) against NumPy 2.

Random shapes (0-d, empty, up to 5-d), broadcasting pairs, views (transposed, sliced with steps of
either sign, stride-0 broadcasts, non-contiguous), every dtype, Python scalars on either side,
out=, in-place and reflected operators, and the errors. Result dtypes are NumPy 2's, except for
carray's deliberate differences (tests/carray/_opcases.py): its default float is float32 (a Python
float with a bool/int array gives float32), float ops of bool give float32 (NumPy float16),
square/power of bool give int64 (NumPy int8), reciprocal of ints gives float64 (NumPy: the int
dtype). Values: integers and IEEE-exact float ops (+ - * / sqrt max min ...) bit-equal to NumPy;
transcendental float32 ops within rtol 1e-5 (atol 1e-6) of the float64 result, float64 within 1e-12.
Every kernel build (generic, AVX2, AVX-512; CARRAY_SIMD) is checked in a subprocess.
"""

import math
import operator
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import carray as ca

from _opcases import (
    ARITH,
    COMPARISONS,
    FLOAT_BINARY,
    FLOAT_INPUT_UNARY,
    FLOAT_UNARY,
    PREDICATES,
    TRANSCENDENTAL,
    TRANSCENDENTAL_BINARY,
    broadcast_shapes_n,
    broadcast_shapes_pair,
    carray_binary_dtype,
    carray_compute_dtype,
    carray_unary_dtype,
    check_values,
    differs_from_numpy,
    operand,
    small_shapes,
)
from conftest import (
    ALL_DTYPES,
    DTYPES,
    SMALL_INTS,
    assert_raises_like,
    fresh_env,
    gpu_examples,
    on,
    random_values,
    to_numpy,
)

SET = settings(max_examples=30, deadline=None)
FEW = settings(max_examples=15, deadline=None)

UNARY = FLOAT_INPUT_UNARY + PREDICATES

NP_UNARY = {name: getattr(np, name) for name in UNARY if hasattr(np, name)}
NP_UNARY["relu"] = lambda x: np.maximum(x, np.zeros((), x.dtype))    # NaN kept
NP_UNARY["sigmoid"] = lambda x: 1.0 / (1.0 + np.exp(-x.astype(np.float64)))


def _erfinv_scalar(v):
    """erfinv of one float by bisection on math.erf (NumPy has no erf; scipy may be absent)."""
    if not -1 <= v <= 1:
        return math.nan
    if abs(v) == 1:
        return math.copysign(math.inf, v)
    if abs(v) < 1e-8:                       # the series: exact to double precision here
        return v * math.sqrt(math.pi) / 2 * (1 + math.pi / 12 * v * v)
    lo, hi = -6.0, 6.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if math.erf(mid) < v else (lo, mid)
    return (lo + hi) / 2


def _float_reference(f):
    """A NumPy-like unary function from a scalar one: computed in float64, returned in the
    input's float dtype (float64 for integers, float16 for bool, as NumPy's float ufuncs)."""
    def ref(x):
        out = np.vectorize(f, otypes=[np.float64])(x.astype(np.float64)) if x.size else \
            np.zeros(x.shape)
        kind = x.dtype.kind
        return out.astype(x.dtype if kind == "f" else np.float64 if kind in "iu" else np.float16)
    return ref


NP_UNARY["erf"] = _float_reference(math.erf)
NP_UNARY["erfinv"] = _float_reference(_erfinv_scalar)

BINARY_OPERATORS = {"add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
                    "divide": operator.truediv, "power": operator.pow, "equal": operator.eq,
                    "not_equal": operator.ne, "less": operator.lt, "less_equal": operator.le,
                    "greater": operator.gt, "greater_equal": operator.ge}
INPLACE = {"add": operator.iadd, "subtract": operator.isub, "multiply": operator.imul,
           "divide": operator.itruediv, "power": operator.ipow}

ERRSTATE = dict(all="ignore")


def _cast(x, dt):
    """x (a NumPy array or a Python scalar) in dtype dt."""
    return x.astype(dt) if isinstance(x, np.ndarray) else np.dtype(dt).type(x)


# -------------------------------------------------------------------------------------------------
# values kept in an op's domain
# -------------------------------------------------------------------------------------------------

def _power_base(v):
    return v / 50 if v.dtype.kind == "f" else (v % 21 - 10 if v.dtype.kind == "i" else v)


def _power_exponent(v):
    return v / 100 if v.dtype.kind == "f" else (np.abs(v) % 6 if v.dtype.kind == "i" else v)


def _fix(name, side):
    if name == "power":
        return _power_base if side == 0 else _power_exponent
    return None


def _scalar(name, side):
    """A strategy of Python scalars for operand `side` (0: left, 1: right) of op `name`."""
    if name == "power" and side == 1:
        return st.one_of(st.booleans(), st.integers(0, 5),
                         st.floats(-3, 3, allow_nan=False, width=32))
    if name == "power":
        return st.one_of(st.booleans(), st.integers(-10, 10),
                         st.floats(-10, 10, allow_nan=False, width=32))
    return st.one_of(st.booleans(), st.integers(-1000, 1000),
                     st.floats(-1e4, 1e4, allow_nan=False, width=32),
                     st.sampled_from([float("nan"), float("inf"), float("-inf"), -0.0, 0.5]))


# -------------------------------------------------------------------------------------------------
# unary ops
# -------------------------------------------------------------------------------------------------

def _unary_reference(name, n, dtype):
    """NumPy's result for carray's unary op `name` on n, to compare with a result of `dtype`
    (float32 transcendental results are referenced to the float64 result)."""
    with np.errstate(**ERRSTATE):
        if name == "sigmoid":
            return NP_UNARY[name](n)
        if name in TRANSCENDENTAL and dtype == np.float32:
            return NP_UNARY[name](n.astype(np.float64))
        native = NP_UNARY[name](n)
        if name not in ("relu",):
            # NumPy's float16 results (bool, int8, uint8) are carray's float32
            deliberate = n.dtype.itemsize == 1 and n.dtype.kind in "biu" and name in FLOAT_UNARY
            if not deliberate:
                assert native.dtype == dtype, (name, n.dtype, native.dtype, dtype)
        if native.dtype != dtype:
            return NP_UNARY[name](n.astype(dtype))
        return native


@pytest.mark.parametrize("name", UNARY)
@gpu_examples(4)
@given(data=st.data())
@SET
def test_unary(name, device, data):
    dt = data.draw(st.sampled_from(ALL_DTYPES), label="dtype")
    shape = data.draw(small_shapes(), label="shape")
    a, n = data.draw(operand(dt, shape, special=True, device=device), label="x")
    func = getattr(ca, name)
    expected = carray_unary_dtype(name, dt)
    if expected is None:                       # negative / sign of bool
        with pytest.raises(TypeError):         # NumPy: TypeError / UFuncTypeError
            NP_UNARY[name](n)
        with pytest.raises(TypeError):
            func(a)
        return
    r = func(a)
    ref = _unary_reference(name, n, expected)
    check_values(r, ref, expected, exact=name not in TRANSCENDENTAL, device=device)
    # the input is untouched
    np.testing.assert_array_equal(to_numpy(a), n)
    # operator forms
    if name == "negative":
        check_values(-a, ref, expected)
    elif name == "abs":
        check_values(abs(a), ref, expected)
        check_values(ca.absolute(a), ref, expected)
    elif name == "logical_not" and dt == "bool":
        check_values(~a, ref, expected)


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid",
                                  "log1p", "expm1"])
def test_float_ops_of_bool_and_int_dtypes(name):
    """Float ops of bool, int8 and uint8 give float16 (as NumPy); of int16 and uint16
    float32; of wider ints float64."""
    b = ca.array([True, False])
    assert getattr(ca, name)(b).dtype.name == "float16"
    for dt in ("int32", "int64", "uint32", "uint64"):
        assert getattr(ca, name)(ca.array([1, 2], dtype=dt)).dtype.name == "float64"
    for dt in ("int8", "uint8"):
        assert getattr(ca, name)(ca.array([1, 2], dtype=dt)).dtype.name == "float16"
    for dt in ("int16", "uint16"):
        assert getattr(ca, name)(ca.array([1, 2], dtype=dt)).dtype.name == "float32"
    assert getattr(ca, name)(ca.array([1.0], dtype="float32")).dtype.name == "float32"
    assert getattr(ca, name)(ca.array([1.0], dtype="float64")).dtype.name == "float64"


def test_reciprocal_of_integers_keeps_the_dtype(device):
    """As NumPy: 1 // x in the integer dtype; for 0 the most negative value (int32, int64) or 0
    (the narrow and unsigned ints); bool gives int8."""
    for dt in ("int32", "int64") + SMALL_INTS:
        x = np.array([0, 1, 2, -1, -3, 7]).astype(dt)
        with np.errstate(**ERRSTATE):
            expected = np.reciprocal(x)
        r = ca.reciprocal(on(x, device))
        assert r.dtype.name == dt
        np.testing.assert_array_equal(to_numpy(r), expected)
    assert ca.reciprocal(ca.array([True])).dtype.name == "int8"


def test_unary_special_values(device):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 88.0, -88.0, 100.0, -110.0,
                  1e-30, -1e-30], np.float32)
    a = on(x, device)
    with np.errstate(**ERRSTATE):
        for name in TRANSCENDENTAL + ("sqrt", "reciprocal"):
            r = getattr(ca, name)(a)
            ref = _unary_reference(name, x, np.dtype("float32"))
            check_values(r, ref, "float32", exact=name not in TRANSCENDENTAL)
            r64 = getattr(ca, name)(on(x.astype(np.float64), device))
            check_values(r64, _unary_reference(name, x.astype(np.float64), np.dtype("float64")),
                         "float64", exact=name not in TRANSCENDENTAL)
    np.testing.assert_array_equal(to_numpy(ca.relu(a)), np.where(x > 0, x, np.where(x != x, x, 0)))
    assert np.isnan(to_numpy(ca.relu(a))[0])
    s = to_numpy(ca.sigmoid(a))
    assert s[1] == 1 and s[2] == 0 and np.isnan(s[0]) and s[3] == 0.5
    s = to_numpy(ca.sigmoid(ca.linspace(-120, 120, 2001, dtype="float32", device=device)))
    assert (np.diff(s) >= 0).all()


# -------------------------------------------------------------------------------------------------
# binary ops and comparisons
# -------------------------------------------------------------------------------------------------

@st.composite
def binary_operands(draw, name, scalars=True, device="cpu"):
    """((carray x, carray y), (NumPy x, NumPy y)): arrays of broadcast-compatible shapes (on
    `device`), or one of them a Python scalar (on either side)."""
    s1, s2, _ = draw(broadcast_shapes_pair())
    form = draw(st.sampled_from(["arrays", "arrays", "scalar-right", "scalar-left"])
                if scalars else st.just("arrays"))
    cas, nps = [], []
    for side, shp in enumerate((s1, s2)):
        if (form == "scalar-right" and side == 1) or (form == "scalar-left" and side == 0):
            v = draw(_scalar(name, side), label=f"scalar{side}")
            cas.append(v)
            nps.append(v)
        else:
            dt = draw(st.sampled_from(ALL_DTYPES), label=f"dtype{side}")
            a, n = draw(operand(dt, shp, special=name != "power", fix=_fix(name, side),
                                device=device), label=f"x{side}")
            cas.append(a)
            nps.append(n)
    return tuple(cas), tuple(nps)


def _binary_reference(name, x, y):
    """(carray's result dtype, NumPy reference values computed in carray's compute dtype)."""
    expected = carray_binary_dtype(name, x, y)
    npf = getattr(np, name)
    with np.errstate(**ERRSTATE):
        if not differs_from_numpy(name, x, y):
            native = npf(x, y)
            assert np.asarray(native).dtype == expected, (name, native.dtype, expected)
        ct = carray_compute_dtype(x, y)
        if name in ("power", "fmod") and ct.kind == "b":
            ct = np.dtype("int8")
        if name in FLOAT_BINARY and ct.kind in "biu":
            ct = expected                   # (NumPy: float16 for bool, int8, uint8)
        ref = npf(_cast(x, ct), _cast(y, ct))
    return expected, ref


@pytest.mark.parametrize("name", ARITH + COMPARISONS)
@gpu_examples(5)
@given(data=st.data())
@SET
def test_binary(name, device, data):
    (xa, ya), (xn, yn) = data.draw(binary_operands(name, device=device))
    func = getattr(ca, name)
    expected = carray_binary_dtype(name, xn, yn)
    if expected is None:                       # bool - bool
        with pytest.raises(TypeError):
            getattr(np, name)(xn, yn)
        with pytest.raises(TypeError):
            func(xa, ya)
        if name in BINARY_OPERATORS:
            with pytest.raises(TypeError):
                BINARY_OPERATORS[name](xa, ya)
        return
    try:
        expected, ref = _binary_reference(name, xn, yn)
    except OverflowError:                      # a Python int out of an array's range
        if name not in COMPARISONS:            # NumPy compares it by value
            with pytest.raises(OverflowError):
                func(xa, ya)
            return
        expected, ref = np.dtype(bool), getattr(np, name)(xn, yn)
    exact = not (name in ("power",) + TRANSCENDENTAL_BINARY and expected.kind == "f")
    r = func(xa, ya)
    check_values(r, ref, expected, exact=exact, device=device)
    if name in BINARY_OPERATORS:                # x op y, reflected when x is a Python scalar
        r2 = BINARY_OPERATORS[name](xa, ya)
        check_values(r2, ref, expected, exact=exact, device=device)
    if name in ("logical_and", "logical_or") and all(
            isinstance(v, ca.Array) and v.dtype.name == "bool" for v in (xa, ya)):
        r3 = (xa & ya) if name == "logical_and" else (xa | ya)
        check_values(r3, ref, expected)


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "less", "power"])
@gpu_examples(3)
@given(data=st.data())
@FEW
def test_binary_same_array_and_self_views(name, device, data):
    """x op x and x op x[::-1] / x.T (operands sharing memory)."""
    dt = data.draw(st.sampled_from(ALL_DTYPES))
    k = data.draw(st.integers(0, 5))
    a, n = data.draw(operand(dt, (k, k), special=name != "power", fix=_fix(name, 1),
                             device=device))
    for fa, fn in ((lambda v: v, lambda v: v), (lambda v: v.T, lambda v: v.T),
                   (lambda v: v[::-1], lambda v: v[::-1])):
        expected, ref = _binary_reference(name, n, fn(n))
        check_values(getattr(ca, name)(a, fa(a)), ref, expected,
                     exact=not (name == "power" and expected.kind == "f"), device=device)


def test_nan_propagation(device):
    x = np.array([1.0, np.nan, 3.0, np.nan, -np.inf, 0.0], np.float32)
    y = np.array([np.nan, 2.0, 1.0, np.nan, np.nan, -0.0], np.float32)
    for dt in ("float32", "float64"):
        a, b = on(x.astype(dt), device), on(y.astype(dt), device)
        for name in ("maximum", "minimum", "add", "multiply"):
            check_values(getattr(ca, name)(a, b), getattr(np, name)(x.astype(dt), y.astype(dt)), dt)
        assert np.isnan(to_numpy(ca.maximum(a, b))[:2]).all()
        assert np.isnan(to_numpy(ca.minimum(a, b))[:2]).all()
        # with a NaN scalar, on either side
        assert np.isnan(to_numpy(ca.maximum(a, float("nan")))).all()
        assert np.isnan(to_numpy(ca.minimum(float("nan"), a))).all()
        check_values(a == a, x.astype(dt) == x.astype(dt), "bool")
        check_values(a != a, x.astype(dt) != x.astype(dt), "bool")


def test_weak_scalar_dtypes():
    i32 = ca.array([1, 2, 3], dtype="int32")
    assert (i32 + 1).dtype.name == "int32" and (1 + i32).dtype.name == "int32"
    assert (i32 * True).dtype.name == "int32"
    assert (i32 + 1.5).dtype.name == "float32"          # NumPy: float64 (carray's default float)
    assert (2.5 * i32).dtype.name == "float32"
    assert (i32 / 2).dtype.name == "float64"            # int / int -> float64, as NumPy
    assert (i32 / i32).dtype.name == "float64"
    assert (i32 / 2.0).dtype.name == "float32"
    b = ca.array([True, False])
    assert (b + 1).dtype.name == "int64" and (b + 1.0).dtype.name == "float32"
    assert (b + b).dtype.name == "bool" and (b * b).dtype.name == "bool"
    assert (b ** b).dtype.name == "int8"                # as NumPy
    f32 = ca.array([1.0], dtype="float32")
    assert (f32 + 1).dtype.name == "float32" and (f32 + 1e10).dtype.name == "float32"
    assert (f32 + ca.array([1], dtype="int32")).dtype.name == "float64"
    assert (ca.array([1], dtype="int64") + ca.array([1], dtype="int32")).dtype.name == "int64"
    np.testing.assert_array_equal(to_numpy(i32 + 1), [2, 3, 4])
    # two Python scalars: carray arrays (0-d) of bool / int64 / float32
    assert ca.add(1, 2).dtype.name == "int64" and ca.add(1, 2.0).dtype.name == "float32"
    assert ca.add(True, False).dtype.name == "bool"
    assert float(ca.add(1, 2.0)) == 3.0
    # lists and NumPy arrays are accepted as operands
    check_values(ca.add([1, 2], [3, 4]), np.add([1, 2], [3, 4]), "int64")


def test_integer_wraparound_and_extremes(device):
    info32 = np.iinfo(np.int32)
    x = np.array([info32.max, info32.min, -1, 0, 7], np.int32)
    a = on(x, device)
    with np.errstate(**ERRSTATE):
        for name in ("add", "subtract", "multiply"):
            check_values(getattr(ca, name)(a, a[::-1]), getattr(np, name)(x, x[::-1]), "int32")
        check_values(ca.negative(a), np.negative(x), "int32")
        check_values(ca.abs(a), np.abs(x), "int32")
        check_values(ca.square(a), np.square(x), "int32")
        check_values(a ** 3, x ** 3, "int32")
        check_values(on(x.astype(np.int64), device) ** 63, x.astype(np.int64) ** 63, "int64")


def test_python_int_out_of_range():
    i32 = ca.array([1, 2], dtype="int32")
    with pytest.raises(OverflowError):
        i32 + 2**40
    with pytest.raises(OverflowError):
        2**40 + i32
    with pytest.raises(OverflowError):
        ca.multiply(i32, -2**40)
    with pytest.raises(OverflowError):
        ca.array([1], dtype="int64") + 2**70
    with pytest.raises(OverflowError):
        i32 += 2**40
    # in range: stays int32
    assert (i32 + (2**31 - 1)).dtype.name == "int32"
    with pytest.raises(OverflowError):
        np.array([1, 2], np.int32) + 2**40          # NumPy does the same


def test_compare_with_out_of_range_python_int(device):
    """NumPy 2 compares int arrays with any Python int by value (no OverflowError)."""
    for dt in ("int32", "int64"):
        x = np.array([1, -5, 2**31 - 1], dt)
        a = on(x, device)
        for v in (2**40, -2**40, 2**70, -2**70, 2**31, 5):
            check_values(a == v, x == v, "bool")
            check_values(a != v, x != v, "bool")
            check_values(a < v, x < v, "bool")
            check_values(a > v, x > v, "bool")


def test_numpy_scalars_are_not_weak():
    """NumPy scalars (np.float64, np.int64, ...) are typed operands, not weak Python scalars: they
    promote as 0-d arrays of their dtype (NumPy 2), on either side."""
    x = np.array([1, -2, 3], np.int32)
    f = np.array([1.5, -2.0, 0.25], np.float32)
    a, af = ca.array(x), ca.array(f)
    cases = [(a, x, np.float64(1.5)), (a, x, np.float32(1.5)), (a, x, np.int64(3)),
             (a, x, np.int64(2**40)), (af, f, np.float64(0.1)), (af, f, np.bool_(True)),
             (af, f, np.int32(7))]
    for v, vn, s in cases:
        for name in ("add", "multiply", "maximum", "less"):
            ref = getattr(np, name)(vn, s)
            check_values(getattr(ca, name)(v, s), ref, ref.dtype)
            ref = getattr(np, name)(s, vn)
            check_values(getattr(ca, name)(s, v), ref, ref.dtype)
        ref = vn + s
        check_values(v + s, ref, ref.dtype)
        ref = s * vn                      # NumPy scalar on the left: defers to Array.__rmul__
        r = s * v
        assert isinstance(r, ca.Array)
        check_values(r, ref, ref.dtype)


def test_compare_with_none():
    x = np.array([1, 2], np.int32)
    check_values(ca.array(x) == None, x == None, "bool")      # noqa: E711
    check_values(ca.array(x) != None, x != None, "bool")      # noqa: E711


def test_negative_power_of_empty_base(device):
    """NumPy raises only when a negative exponent is used: an empty base gives an empty result."""
    for dt in ("int32", "int64"):
        check_values(ca.zeros(0, dtype=dt, device=device) ** -1, np.zeros(0, dt) ** -1, dt)
        check_values(ca.power(ca.zeros((0, 3), dtype=dt, device=device),
                              ca.array([-1, 1, 1], dtype=dt, device=device)),
                     np.zeros((0, 3), dt) ** np.array([-1, 1, 1], dt), dt)


# -------------------------------------------------------------------------------------------------
# where
# -------------------------------------------------------------------------------------------------

@gpu_examples(10)
@given(data=st.data())
@settings(max_examples=60, deadline=None)
def test_where(device, data):
    """where(condition, x, y): the three broadcast together; condition of any dtype (truthiness);
    x and y arrays or Python scalars; the result dtype is their promotion (carray's weak-scalar
    rules)."""
    cshape, s1, s2, _ = data.draw(broadcast_shapes_n(3))
    c, cn = data.draw(operand(data.draw(st.sampled_from(ALL_DTYPES)), cshape, special=True,
                              device=device))
    vals = []
    for side, shp in enumerate((s1, s2)):
        if data.draw(st.integers(0, 3)) == 0:
            v = data.draw(_scalar("where", side))
            vals.append((v, v))
        else:
            dt = data.draw(st.sampled_from(ALL_DTYPES))
            vals.append(data.draw(operand(dt, shp, special=True, device=device)))
    (xa, xn), (ya, yn) = vals
    try:
        ct = carray_compute_dtype(xn, yn)
        ref = np.where(cn, _cast(xn, ct), _cast(yn, ct))
    except OverflowError:                   # a Python int out of the other side's range
        with pytest.raises(OverflowError):
            ca.where(c, xa, ya)
        return
    if isinstance(xn, np.ndarray) or isinstance(yn, np.ndarray):
        if not differs_from_numpy("where", xn, yn):
            assert np.where(cn, xn, yn).dtype == ct      # NumPy's own dtype
    check_values(ca.where(c, xa, ya), ref, ct, device=device)


def test_where_errors():
    with pytest.raises(ValueError, match=r"\(2,\).*\(3,\)"):
        ca.where(ca.array([True, False]), ca.zeros(3), 0.0)


# -------------------------------------------------------------------------------------------------
# out=
# -------------------------------------------------------------------------------------------------

OUT_BINARY = ("add", "subtract", "divide", "maximum", "less", "logical_or")
OUT_UNARY = ("exp", "negative", "sqrt", "floor", "square", "isnan", "abs")


@pytest.mark.parametrize("name", OUT_BINARY)
def test_out_binary_casting(name):
    """out= of every dtype for every pair of input dtypes: same_kind casting as NumPy
    (TypeError), values as NumPy's."""
    for d1 in DTYPES:
        for d2 in DTYPES:
            xn = random_values(d1, (2, 3), 1)
            yn = random_values(d2, (3,), 2)
            for od in DTYPES:
                outn = np.zeros((2, 3), od)
                outa = ca.zeros((2, 3), dtype=od)
                npf, caf = getattr(np, name), getattr(ca, name)
                try:
                    with np.errstate(**ERRSTATE):
                        npf(xn, yn, out=outn)
                except TypeError:                  # UFuncTypeError: same_kind casting
                    with pytest.raises(TypeError):
                        caf(ca.array(xn), ca.array(yn), out=outa)
                    continue
                r = caf(ca.array(xn), ca.array(yn), out=outa)
                assert r is outa
                check_values(outa, outn, od)


@pytest.mark.parametrize("name", OUT_UNARY)
def test_out_unary_casting(name):
    """out= of every dtype: TypeError exactly where NumPy refuses (same_kind); values computed in
    carray's result dtype, then cast to out's."""
    npf, caf = getattr(np, name), getattr(ca, name)
    for d in DTYPES:
        xn = random_values(d, (4, 3), 3, special=True)
        expected = carray_unary_dtype(name, d)
        for od in DTYPES:
            outa = ca.zeros((4, 3), dtype=od)
            try:
                with np.errstate(**ERRSTATE):
                    npf(xn, out=np.zeros((4, 3), od))
            except TypeError:
                with pytest.raises(TypeError):
                    caf(ca.array(xn), out=outa)
                continue
            assert expected is not None
            outn = np.zeros((4, 3), od)
            with np.errstate(**ERRSTATE):
                npf(xn.astype(expected), out=outn)
            r = caf(ca.array(xn), out=outa)
            assert r is outa
            # exp: the tolerance of the dtype it is computed in (float32 for float32 and bool)
            rtol, atol = (1e-5, 1e-6) if expected == np.float32 else (1e-12, 1e-300)
            check_values(outa, outn, od, exact=name != "exp", rtol=rtol, atol=atol)


def test_out_errors():
    a = ca.ones((2, 3), dtype="float32")
    with pytest.raises(ValueError):
        ca.add(a, a, out=ca.zeros((3, 2), dtype="float32"))
    with pytest.raises(ValueError):
        ca.add(a, a, out=ca.zeros((2, 1), dtype="float32"))
    with pytest.raises(ValueError):
        ca.add(a, a, out=ca.zeros((3,), dtype="float32"))
    with pytest.raises(ValueError):
        ca.exp(a, out=ca.zeros((2,), dtype="float32"))
    with pytest.raises(TypeError):                       # float -> int is not same_kind
        ca.add(a, a, out=ca.zeros((2, 3), dtype="int32"))
    with pytest.raises(TypeError):
        ca.divide(ca.ones(3, dtype="int32"), 2, out=ca.zeros(3, dtype="int64"))
    with pytest.raises(TypeError):
        ca.exp(ca.ones(3, dtype="int64"), out=ca.zeros(3, dtype="int64"))
    with pytest.raises(TypeError):
        ca.add(a, a, out=np.zeros((2, 3), np.float32))   # out must be a carray Array
    with pytest.raises(ValueError):                      # a read-only (broadcast) view
        ca.add(a, a, out=ca.broadcast_to(ca.zeros(3, dtype="float32"), (2, 3)))
    # out given as a 1-tuple, as NumPy allows
    o = ca.zeros((2, 3), dtype="float32")
    assert ca.add(a, a, out=(o,)) is o
    np.testing.assert_array_equal(to_numpy(o), np.full((2, 3), 2, np.float32))


def test_out_larger_than_broadcast_shape():
    o = ca.zeros((2, 3), dtype="float32")
    ca.add(ca.ones(3, dtype="float32"), 1, out=o)
    np.testing.assert_array_equal(to_numpy(o), np.full((2, 3), 2, np.float32))


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "maximum", "power", "divide"])
@gpu_examples(4)
@given(data=st.data())
@FEW
def test_out_aliasing_inputs(name, device, data):
    """out= overlapping an input in every way: the same array, its transpose, reversed, shifted.
    The result must be NumPy's (computed as if the inputs were copied first)."""
    dt = data.draw(st.sampled_from(("int32", "int64", "float32", "float64")))
    if name == "divide" and dt[0] == "i":
        dt = "float64"
    k = data.draw(st.integers(1, 6))
    a, n = data.draw(operand(dt, (k, k), fix=_fix(name, 1), kinds=("contiguous", "transposed"),
                             device=device))
    npf, caf = getattr(np, name), getattr(ca, name)
    exact = name != "power" or dt[0] == "i"
    how = data.draw(st.sampled_from(["same", "T", "reversed", "shifted", "both_T"]))
    with np.errstate(**ERRSTATE):
        if how == "same":
            r = caf(a, a, out=a)
            npf(n, n, out=n)
        elif how == "T":
            r = caf(a, a.T, out=a)
            npf(n, n.T, out=n)
        elif how == "both_T":
            r = caf(a.T, a, out=a)
            npf(n.T, n, out=n)
        elif how == "reversed":
            r = caf(a, a[::-1, ::-1], out=a[:, ::-1])
            npf(n, n[::-1, ::-1], out=n[:, ::-1])
        else:
            r = caf(a[:-1], a[1:], out=a[1:])
            npf(n[:-1], n[1:], out=n[1:])
    assert isinstance(r, ca.Array)
    check_values(a, n, dt, exact=exact, device=device)


def test_iadd_transpose_square(device):
    """a += a.T on a square array equals NumPy's result (a symmetric matrix)."""
    for dt in ("float32", "int32", "float64", "int64"):
        for k in (1, 3, 64, 300):
            n = random_values(dt, (k, k), k)
            a = on(n, device)
            a0 = a
            a += a.T
            n += n.T
            assert a is a0
            check_values(a, n, dt)
            np.testing.assert_array_equal(to_numpy(a), to_numpy(a).T)


def test_unary_out_aliasing(device):
    n = random_values("float64", (5, 5), 4)
    a = on(n, device)
    ca.negative(a.T, out=a)
    np.negative(n.T, out=n)
    check_values(a, n, "float64")
    ca.exp(a[::-1], out=a)
    np.exp(n[::-1], out=n)
    check_values(a, n, "float64", exact=False)


# -------------------------------------------------------------------------------------------------
# in-place and reflected operators
# -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(INPLACE))
@gpu_examples(5)
@given(data=st.data())
@SET
def test_inplace_operators(name, device, data):
    """a op= b for every dtype pair and Python scalars: same object, values as NumPy's, the writes
    visible through a's base (views), TypeError where NumPy's same_kind casting refuses."""
    shape = data.draw(small_shapes(0, 4))
    dt = data.draw(st.sampled_from(ALL_DTYPES))
    a, n = data.draw(operand(dt, shape, fix=_fix(name, 0),
                             kinds=("contiguous", "transposed", "sliced", "sliced_transposed"),
                             device=device))
    base_a, base_n = (a.base if a.base is not None else a), (n.base if n.base is not None else n)
    if data.draw(st.booleans()):
        v = data.draw(_scalar(name, 1))
        b, bn = v, v
    else:
        drop = data.draw(st.integers(0, len(shape)))
        bshape = tuple(1 if data.draw(st.booleans()) else s for s in shape[drop:])
        b, bn = data.draw(operand(data.draw(st.sampled_from(ALL_DTYPES)), bshape,
                                  fix=_fix(name, 1), device=device))
    op = INPLACE[name]
    n_before = n.copy()
    try:
        with np.errstate(**ERRSTATE):
            n2 = op(n, bn)
    except (TypeError, OverflowError) as e:  # NumPy's same_kind casting refuses (or bool -),
        with pytest.raises(TypeError if isinstance(e, TypeError) else OverflowError):
            op(a, b)                          # or a Python int out of an unsigned type's range
        np.testing.assert_array_equal(to_numpy(a), n_before)
        return
    a0 = a
    a = op(a, b)
    assert a is a0 and n2 is n
    exact = not (name == "power" and n.dtype.kind == "f")
    check_values(a, n, dt, exact=exact, device=device)
    check_values(base_a, base_n, dt, exact=exact)         # written through to the base


def test_inplace_errors():
    i32 = ca.array([1, 2, 3], dtype="int32")
    with pytest.raises(TypeError):
        i32 /= 2                                    # float64 into int32
    with pytest.raises(TypeError):
        i32 += 1.5
    b = ca.array([True, False])
    with pytest.raises(TypeError):
        b -= b
    with pytest.raises(TypeError):
        b += 1                                      # int64 into bool
    with pytest.raises(ValueError):                 # result larger than a
        v = ca.ones(3)
        v += ca.ones((2, 3))
    with pytest.raises(ValueError):                 # read-only broadcast view
        w = ca.broadcast_to(ca.ones(3), (2, 3))
        w += 1
    np.testing.assert_array_equal(to_numpy(i32), [1, 2, 3])


def test_out_casting_is_checked_before_shapes():
    """NumPy resolves dtypes (and out='s same_kind cast) before it broadcasts: an out= or
    in-place target that fails both checks raises the casting TypeError, and so does an integer
    power with a negative exponent into a bool target."""
    rng = np.random.default_rng(7)
    for _ in range(60):
        d1, d2, od = (str(x) for x in rng.choice(DTYPES, 3))
        s1 = tuple(int(v) for v in rng.integers(0, 4, rng.integers(0, 3)))
        s2 = tuple(int(v) for v in rng.integers(0, 4, rng.integers(0, 3)))
        so = tuple(int(v) for v in rng.integers(0, 4, rng.integers(0, 3)))
        xn, yn, on_ = random_values(d1, s1, 1), random_values(d2, s2, 2), np.zeros(so, od)
        for name in ("add", "multiply", "divide", "maximum"):
            try:
                with np.errstate(**ERRSTATE):
                    getattr(np, name)(xn, yn, out=on_)
            except Exception as e:                   # noqa: BLE001
                expected = TypeError if isinstance(e, TypeError) else ValueError
                with pytest.raises(expected):
                    getattr(ca, name)(ca.array(xn), ca.array(yn), out=ca.array(on_))
        try:
            np.exp(xn, out=on_)
        except Exception as e:                       # noqa: BLE001
            with pytest.raises(TypeError if isinstance(e, TypeError) else ValueError):
                ca.exp(ca.array(xn), out=ca.array(on_))
    i32 = ca.zeros(3, dtype="int32")
    with pytest.raises(TypeError):
        i32 += ca.ones((2, 4), dtype="float64")      # NumPy: UFuncTypeError, not a shape error
    b = ca.array([True, False])
    with pytest.raises(TypeError):
        b **= -2                                     # int64 into bool, before the power check
    with pytest.raises(TypeError):
        ca.exp(ca.ones(3, dtype="int64"), out=ca.zeros((2,), dtype="int64"))


ALL_OPERATORS = dict(BINARY_OPERATORS, **{"and": operator.and_, "or": operator.or_,
                                          "xor": operator.xor})


@pytest.mark.parametrize("opname", list(ALL_OPERATORS))
def test_reflected_with_numpy_on_the_left(opname):
    """np_array OP carray_array returns a carray Array (Array sets __array_ufunc__ = None so NumPy
    defers to the reflected operator) with NumPy's values."""
    op = ALL_OPERATORS[opname]
    for d1 in DTYPES:
        for d2 in DTYPES:
            xn = random_values(d1, (2, 3), 5)
            yn = random_values(d2, (3,), 6)
            if opname == "power":
                xn, yn = _power_base(xn), _power_exponent(yn).astype(d2)
                xn = xn.astype(d1)
            ya = ca.array(yn)
            try:
                with np.errstate(**ERRSTATE):
                    ref = op(xn, yn)
            except TypeError:
                with pytest.raises(TypeError):
                    op(xn, ya)
                continue
            r = op(xn, ya)
            assert isinstance(r, ca.Array), (opname, d1, d2, type(r))
            expected = ref.dtype
            check_values(r, ref, expected, exact=not (opname == "power" and ref.dtype.kind == "f"))
            # and with the carray array on the left, NumPy's on the right
            r2 = op(ca.array(xn), yn)
            assert isinstance(r2, ca.Array)
            check_values(r2, ref, expected, exact=not (opname == "power" and ref.dtype.kind == "f"))


def test_numpy_inplace_with_carray_operand():
    """np_array += carray_array raises TypeError, as NumPy does for any operand whose
    __array_ufunc__ is None (in-place operators do not defer); the NumPy array is untouched."""
    n = np.ones(3, np.float32)
    with pytest.raises(TypeError):
        n += ca.ones(3, dtype="float32")
    np.testing.assert_array_equal(n, [1, 1, 1])


# -------------------------------------------------------------------------------------------------
# errors
# -------------------------------------------------------------------------------------------------

def test_broadcast_error_names_both_shapes():
    for s1, s2 in (((3,), (4,)), ((2, 3), (3, 2)), ((5, 1, 4), (2, 3)), ((0,), (2,))):
        for name in ("add", "less", "maximum", "power", "logical_and"):
            with pytest.raises(ValueError) as e:
                getattr(ca, name)(ca.ones(s1), ca.ones(s2))
            msg = str(e.value)
            for s in (s1, s2):
                assert str(s).replace(" ", "") in msg.replace(" ", ""), msg
            with pytest.raises(ValueError):
                getattr(np, name)(np.ones(s1), np.ones(s2))
        with pytest.raises(ValueError):
            ca.ones(s1) + ca.ones(s2)


def test_bool_subtract_and_negative_raise():
    b = ca.array([True, False])
    for f in (lambda: b - b, lambda: ca.subtract(b, b), lambda: b - True, lambda: True - b,
              lambda: -b, lambda: ca.negative(b), lambda: ca.sign(b), lambda: +b):
        with pytest.raises(TypeError):
            f()
    # bool with a Python int is an int64 subtraction, as NumPy
    check_values(b - 1, np.array([True, False]) - 1, "int64")


def test_unary_plus_copies(device):
    for dt in ("int32", "int64", "float32", "float64"):
        n = random_values(dt, (2, 3), 9)
        a = on(n, device)
        r = +a
        check_values(r, +n, dt, device=device)
        assert r.base is None


def test_in_operator_like_numpy(device):
    """`x in a` is (a == x).any(), for every shape (0-d and empty too) and dtype."""
    rng = np.random.default_rng(11)
    for dt in DTYPES:
        for shape in ((), (0,), (4,), (2, 3), (2, 0, 3)):
            n = random_values(dt, shape, int(rng.integers(1 << 30)))
            a = on(n, device)
            values = [True, 0, 3, -1.5, None] + [v.item() for v in n.reshape(-1)[:2]]
            for v in values:
                assert (v in a) == (v in n), (dt, shape, v)


def test_integer_negative_power_raises():
    for dt in ("int32", "int64"):
        x = ca.array([2, 3], dtype=dt)
        for f in (lambda: x ** -1, lambda: ca.power(x, -2),
                  lambda: x ** ca.array([1, -1], dtype=dt),
                  lambda: 2 ** ca.array([1, -1], dtype=dt), lambda: ca.power(x, ca.array(-1)),
                  lambda: ca.power(ca.array([True]), -1)):
            with pytest.raises(ValueError, match="negative"):
                f()
    with pytest.raises(ValueError):
        np.array([2]) ** -1
    # float bases are fine
    check_values(ca.array([2.0, 4.0]) ** -1, np.array([0.5, 0.25], np.float32), "float32")
    check_values(ca.array([2, 4]) ** -1.0, np.array([0.5, 0.25], np.float32), "float32")


def test_logical_ops_on_non_bool(device):
    x = np.array([0.0, np.nan, -1.0, 2.0])
    y = np.array([1, 0, 0, 3], np.int32)
    xa, ya = on(x, device), on(y, device)
    check_values(ca.logical_and(xa, ya), np.logical_and(x, y), "bool", device=device)
    check_values(ca.logical_or(xa, ya), np.logical_or(x, y), "bool", device=device)
    check_values(ca.logical_not(xa), np.logical_not(x), "bool", device=device)
    with pytest.raises(TypeError):
        xa & ya                   # NumPy: no bitwise and for floats either


# -------------------------------------------------------------------------------------------------
# bitwise ops (& | ^ ~) of bool and integer arrays
# -------------------------------------------------------------------------------------------------

BITWISE = {"bitwise_and": operator.and_, "bitwise_or": operator.or_,
           "bitwise_xor": operator.xor}
BITWISE_REFLECTED = {"bitwise_and": "__rand__", "bitwise_or": "__ror__",
                     "bitwise_xor": "__rxor__"}
BITWISE_INPLACE = {"bitwise_and": operator.iand, "bitwise_or": operator.ior,
                   "bitwise_xor": operator.ixor}
INTEGRAL = ("bool", "int32", "int64")


def _int_scalar():
    """Python bools and ints that fit int32 (NumPy 2 refuses wider ones with int32 arrays)."""
    return st.one_of(st.booleans(), st.integers(-1000, 1000),
                     st.sampled_from([0, -1, 2**31 - 1, -2**31, 0x5555]))


@st.composite
def bitwise_operands(draw, device="cpu"):
    """((carray x, carray y), (NumPy x, NumPy y)) of bool/int dtypes, broadcast-compatible
    shapes and any view kind (extreme ints included), or one of them a Python bool/int."""
    s1, s2, _ = draw(broadcast_shapes_pair())
    form = draw(st.sampled_from(["arrays", "arrays", "scalar-right", "scalar-left"]))
    cas, nps = [], []
    for side, shp in enumerate((s1, s2)):
        if form == ("scalar-left", "scalar-right")[side]:
            v = draw(_int_scalar(), label=f"scalar{side}")
            cas.append(v)
            nps.append(v)
        else:
            dt = draw(st.sampled_from(INTEGRAL), label=f"dtype{side}")
            a, n = draw(operand(dt, shp, special=True, device=device), label=f"x{side}")
            cas.append(a)
            nps.append(n)
    return tuple(cas), tuple(nps)


@pytest.mark.parametrize("name", list(BITWISE))
@gpu_examples(6)
@given(data=st.data())
@SET
def test_bitwise_binary(name, device, data):
    """The function, the operator and the reflected operator against NumPy: NumPy 2's result
    dtype (Python scalars weak), values bit for bit."""
    (xa, ya), (xn, yn) = data.draw(bitwise_operands(device=device))
    ref = getattr(np, name)(xn, yn)
    check_values(getattr(ca, name)(xa, ya), ref, ref.dtype, device=device)
    check_values(BITWISE[name](xa, ya), ref, ref.dtype, device=device)
    if isinstance(ya, ca.Array):
        check_values(getattr(ya, BITWISE_REFLECTED[name])(xa), ref, ref.dtype, device=device)


@gpu_examples(4)
@given(data=st.data())
@SET
def test_invert(device, data):
    dt = data.draw(st.sampled_from(INTEGRAL), label="dtype")
    a, n = data.draw(operand(dt, data.draw(small_shapes()), special=True, device=device))
    ref = np.invert(n)
    check_values(ca.invert(a), ref, dt, device=device)
    check_values(ca.bitwise_not(a), ref, dt, device=device)
    check_values(~a, ref, dt, device=device)


def test_bitwise_values_by_hand(device):
    x = on(np.array([12, -1, 0, 2**31 - 1, -2**31], np.int32), device)
    y = on(np.array([10, 5, -1, -2**31, -1], np.int32), device)
    assert (x & y).tolist() == [8, 5, 0, 0, -2**31]
    assert (x | y).tolist() == [14, -1, -1, -1, -1]
    assert (x ^ y).tolist() == [6, -6, -1, -1, 2**31 - 1]
    assert (~x).tolist() == [-13, 0, -1, -2**31, 2**31 - 1]
    assert (6 & x).tolist() == [4, 6, 0, 6, 0] and (x & 6).dtype.name == "int32"
    b = on(np.array([True, True, False, False]), device)
    c = on(np.array([True, False, True, False]), device)
    assert (b & c).tolist() == [True, False, False, False]
    assert (b | c).tolist() == [True, True, True, False]
    assert (b ^ c).tolist() == [False, True, True, False]
    assert (~b).tolist() == [False, False, True, True]
    assert (b ^ True).dtype.name == "bool" and (b & 3).dtype.name == "int64"
    assert (b | 2).tolist() == [3, 3, 2, 2]
    assert ca.bitwise_xor(3, 5).dtype.name == "int64" and int(ca.bitwise_xor(3, 5)) == 6


def test_bitwise_of_bools_is_logical(device):
    """On bool arrays & | ^ ~ give the logical ops' results (bool dtype)."""
    n1, n2 = random_values("bool", (3, 5), 1), random_values("bool", (5,), 2)
    b1, b2 = on(n1, device), on(n2, device)
    pairs = ((ca.bitwise_and, ca.logical_and), (ca.bitwise_or, ca.logical_or),
             (ca.bitwise_xor, ca.not_equal))
    for bitwise, logical in pairs:
        r = bitwise(b1.T[::-1].T, b2)
        check_values(r, to_numpy(logical(b1.T[::-1].T, b2)), "bool", device=device)
    check_values(~b1.T, to_numpy(ca.logical_not(b1.T)), "bool", device=device)


@pytest.mark.parametrize("name", list(BITWISE))
def test_bitwise_out(name, device):
    """out= of the result dtype, of a wider one (int32 into int64 and float64), broadcasting the
    inputs up to out's shape, a non-contiguous out, and out aliasing an input."""
    xn = random_values("int32", (3, 4), 3, special=True)
    yn = random_values("int32", (4,), 4, special=True)
    x, y = on(xn, device), on(yn, device)
    f, fn = getattr(ca, name), getattr(np, name)
    for od in ("int32", "int64", "float64"):
        o = ca.zeros((3, 4), dtype=od, device=device)
        assert f(x, y, out=o) is o
        check_values(o, fn(xn, yn, out=np.zeros((3, 4), od)), od, device=device)
    o = ca.zeros((2, 3, 4), dtype="int64", device=device)
    f(x, 7, out=o)
    check_values(o, fn(xn, 7, out=np.zeros((2, 3, 4), "int64")), "int64", device=device)
    o = ca.zeros((4, 3), dtype="int32", device=device).T          # a transposed out
    f(x, y, out=o)
    check_values(o, fn(xn, yn), "int32", device=device)
    xc, xcn = x.copy(), xn.copy()
    f(xc[:, ::-1], xc, out=xc)                                    # out is an input, reversed
    fn(xcn[:, ::-1], xcn, out=xcn)
    check_values(xc, xcn, "int32", device=device)
    o = ca.zeros(4, dtype="int32", device=device)
    assert ca.invert(y, out=o) is o
    check_values(o, np.invert(yn), "int32", device=device)
    with pytest.raises(TypeError):                                # int32 into bool
        f(x, y, out=ca.zeros((3, 4), dtype="bool", device=device))
    with pytest.raises(TypeError):
        ca.invert(y, out=ca.zeros(4, dtype="bool", device=device))
    with pytest.raises(ValueError):                               # broadcast shape (3, 4)
        f(x, y, out=ca.zeros((4,), dtype="int32", device=device))


@pytest.mark.parametrize("name", list(BITWISE_INPLACE))
@gpu_examples(5)
@given(data=st.data())
@FEW
def test_bitwise_inplace(name, device, data):
    """a op= b on views of every bool/int dtype pair and with Python scalars: same object,
    NumPy's values, the writes visible through the base; TypeError where NumPy's same_kind
    casting refuses (bool op= int)."""
    shape = data.draw(small_shapes(0, 4))
    dt = data.draw(st.sampled_from(INTEGRAL))
    a, n = data.draw(operand(dt, shape, special=True, device=device,
                             kinds=("contiguous", "transposed", "sliced", "sliced_transposed")))
    base_a, base_n = (a.base if a.base is not None else a), (n.base if n.base is not None else n)
    if data.draw(st.booleans()):
        b = bn = data.draw(_int_scalar())
    else:
        drop = data.draw(st.integers(0, len(shape)))
        bshape = tuple(1 if data.draw(st.booleans()) else s for s in shape[drop:])
        b, bn = data.draw(operand(data.draw(st.sampled_from(INTEGRAL)), bshape, special=True,
                                  device=device))
    op = BITWISE_INPLACE[name]
    n_before = n.copy()
    try:
        n2 = op(n, bn)
    except TypeError:
        with pytest.raises(TypeError):
            op(a, b)
        np.testing.assert_array_equal(to_numpy(a), n_before)
        return
    a0 = a
    a = op(a, b)
    assert a is a0 and n2 is n
    check_values(a, n, dt, device=device)
    check_values(base_a, base_n, dt)


def test_bitwise_of_floats_raises():
    """NumPy's TypeError ("ufunc 'bitwise_and' not supported for the input types ...") whenever
    the operands promote to a float type, before out= is looked at."""
    values = {dt: random_values(dt, (2, 3), 8) for dt in DTYPES}
    for name, op in BITWISE.items():
        for d1 in DTYPES:
            for y in [values[d] for d in DTYPES] + [1.5, 2, True]:
                if d1 in INTEGRAL and (not isinstance(y, np.ndarray) or y.dtype.kind != "f") \
                        and type(y) is not float:
                    continue
                xa, ya = ca.array(values[d1]), ca.array(y) if isinstance(y, np.ndarray) else y
                e = assert_raises_like(lambda: getattr(ca, name)(xa, ya),
                                       lambda: getattr(np, name)(values[d1], y))
                assert f"ufunc '{name}' not supported for the input types" in str(e)
                assert_raises_like(lambda: op(xa, ya), lambda: op(values[d1], y))
                assert_raises_like(lambda: op(ya, xa), lambda: op(y, values[d1]))
                with pytest.raises(TypeError, match="not supported"):
                    getattr(ca, name)(xa, ya, out=ca.zeros(7, dtype="bool"))
        f32 = ca.ones(3)
        with pytest.raises(TypeError):
            BITWISE_INPLACE[name](f32, 1)
        np.testing.assert_array_equal(to_numpy(f32), [1, 1, 1])
    for dt in ("float32", "float64"):
        for f in (ca.invert, ca.bitwise_not, operator.invert):
            e = assert_raises_like(lambda: f(ca.ones(2, dtype=dt)),
                                   lambda: np.invert(np.ones(2, dt)))
            assert "ufunc 'invert' not supported" in str(e)
    with pytest.raises(OverflowError):                  # NumPy 2: out of bounds for int32
        ca.array([1], dtype="int32") & 2**40
    with pytest.raises(ValueError):
        ca.ones((2,), dtype="int32") | ca.ones((3,), dtype="int32")


# -------------------------------------------------------------------------------------------------
# large arrays: the parallel (OpenMP) path against the serial one
# -------------------------------------------------------------------------------------------------

@pytest.fixture
def restore_threads():
    prev = ca.get_num_threads()
    yield
    ca.set_num_threads(prev)


def test_large_elementwise_parallel(restore_threads):
    n = random_values("float32", (300, 1000), 7, special=True)
    m = random_values("float32", (1000,), 8)
    a, b = ca.array(n), ca.array(m)
    results = []
    for nt in (1, 2, 3):
        ca.set_num_threads(nt)
        rs = [ca.add(a, b), ca.exp(a.T), ca.maximum(a[::-1, ::2], b[::2]), ca.less(a, 0.5),
              ca.sigmoid(a[:, ::-1])]
        results.append([to_numpy(r).copy() for r in rs])
    with np.errstate(**ERRSTATE):
        check_values(ca.array(results[0][0]), n + m, "float32")
        check_values(ca.array(results[0][1]), np.exp(n.T.astype(np.float64)), "float32",
                     exact=False)
        check_values(ca.array(results[0][2]), np.maximum(n[::-1, ::2], m[::2]), "float32")
        check_values(ca.array(results[0][3]), n < 0.5, "bool")
    for other in results[1:]:
        for x, y in zip(results[0], other):
            np.testing.assert_array_equal(x, y)


# -------------------------------------------------------------------------------------------------
# every kernel build: CARRAY_SIMD=generic|avx2|avx512, in a subprocess
# -------------------------------------------------------------------------------------------------

def _cpu_level():
    try:
        flags = open("/proc/cpuinfo").read()
    except OSError:
        return None
    if all(f" {f}" in flags for f in ("avx512f", "avx512vl", "avx512bw", "avx512dq")):
        return 2
    if " avx2" in flags and " fma" in flags:
        return 1
    return 0


SIMD_SCRIPT = textwrap.dedent(r"""
    import numpy as np
    import carray as ca
    from carray.ops import _ufunc
    print(_ufunc.simd_build)
    rng = np.random.default_rng(0)

    def close(r, ref, rtol, atol):
        r = np.asarray(r)
        ref = np.asarray(ref).astype(r.dtype)
        np.testing.assert_allclose(r, ref, rtol=rtol, atol=atol, equal_nan=True)

    def exact(r, ref):
        np.testing.assert_array_equal(np.asarray(r), ref, strict=True)

    with np.errstate(all="ignore"):
        for n in list(range(0, 35)) + [63, 64, 65, 127, 128, 129, 1000, 4099, 70001]:
            x = (rng.standard_normal(n) * 40).astype(np.float32)
            if n > 4:
                x[[0, n // 2, n - 1]] = [np.nan, np.inf, -np.inf]
            y = (rng.standard_normal(n) * 40).astype(np.float32)
            i = rng.integers(-1000, 1000, n).astype(np.int32)
            a, b, ia = ca.array(x), ca.array(y), ca.array(i)
            for v, vn in ((a, x), (a[::2], x[::2]), (a[::-1], x[::-1])):
                close(ca.exp(v), np.exp(vn.astype(np.float64)), 1e-5, 1e-6)
                close(ca.sigmoid(v), 1 / (1 + np.exp(-vn.astype(np.float64))), 1e-5, 1e-6)
                close(ca.tanh(v), np.tanh(vn.astype(np.float64)), 1e-5, 1e-6)
                exact(ca.sqrt(v), np.sqrt(vn))
                exact(ca.relu(v), np.where(vn > 0, vn, np.where(vn != vn, vn, 0)))
                exact(ca.isnan(v), np.isnan(vn))
                exact(ca.isfinite(v), np.isfinite(vn))
                x64 = vn.astype(np.float64)
                close(ca.exp(ca.array(x64)), np.exp(x64), 1e-12, 1e-300)
            exact(ca.add(a, b), x + y)
            exact(a + 1.5, x + np.float32(1.5))
            exact(ca.multiply(a, b[::-1]), x * y[::-1])
            exact(ca.maximum(a, b), np.maximum(x, y))
            exact(ca.minimum(a[::-1], b), np.minimum(x[::-1], y))
            exact(ca.add(ia, ia[::-1]), i + i[::-1])
            exact(ia * 3, i * 3)
            exact(ca.less(a, b), x < y)
            exact(ia & ia[::-1], i & i[::-1])
            exact(ca.bitwise_or(ia[::2], 0x0F0F), i[::2] | 0x0F0F)
            exact(ia ^ ca.array(i.astype(np.int64)), i ^ i.astype(np.int64))
            exact(~ia, ~i)
            exact(ca.less(a, b) ^ ca.less(b, a)[::-1], (x < y) ^ (y < x)[::-1])
            exact(ca.divide(a, b), x / y)
            exact(ca.where(ca.less(a, b), a, b), np.where(x < y, x, y))
            exact(ca.sum(ia), i.sum())
            f = np.nan_to_num(x, nan=0, posinf=0, neginf=0)
            fa = ca.array(f)
            tot = np.abs(f.astype(np.float64)).sum()
            assert abs(float(ca.sum(fa)) - f.astype(np.float64).sum()) <= 1e-5 * tot + 1e-30
            s3 = f[::-3].astype(np.float64).sum()
            assert abs(float(ca.sum(fa[::-3])) - s3) <= 1e-5 * tot + 1e-30
            s64 = f.astype(np.float64)
            assert abs(float(ca.sum(ca.array(s64))) - s64.sum()) <= 1e-12 * tot + 1e-300
            if n:
                exact(ca.max(a), np.max(x))
                exact(ca.min(ia), np.min(i))
                exact(ca.max(fa[::-1]), np.max(f[::-1]))
    print("OK")
""")


@pytest.mark.parametrize("build", ["generic", "avx2", "avx512"])
def test_every_simd_build(build):
    level = _cpu_level()
    wanted = ("generic", "avx2", "avx512").index(build)
    env = fresh_env(CARRAY_SIMD=build)
    proc = subprocess.run([sys.executable, "-c", SIMD_SCRIPT], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got, ok = proc.stdout.split()[:2]
    assert ok == "OK"
    if level is not None and level >= wanted:
        assert got == build
    else:
        assert ("generic", "avx2", "avx512").index(got) <= wanted


def test_bad_simd_env_value():
    env = fresh_env(CARRAY_SIMD="sse9")
    proc = subprocess.run([sys.executable, "-c", "import carray"], capture_output=True, text=True,
                          env=env, timeout=60)
    assert proc.returncode != 0
    assert "CARRAY_SIMD" in proc.stderr


# -------------------------------------------------------------------------------------------------
# floor_divide, remainder (//, %) and clip
# -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", ["int32", "int64", "float32", "float64"])
@gpu_examples(4)
@given(data=st.data())
@FEW
def test_floor_divide_and_remainder_match_numpy(dt, device, data):
    """x // y and x % y as NumPy (and Python): quotient rounded to -inf, remainder with the sign
    of y; integer division by 0 gives 0, float division by 0 inf/nan; broadcasting and scalars."""
    shape1, shape2, _ = data.draw(broadcast_shapes_pair(3), label="shapes")
    if dt[0] == "i":
        values = st.integers(-50, 50)
    else:
        values = st.one_of(st.floats(-1e3, 1e3, allow_nan=False, width=32),
                           st.sampled_from([0.0, -0.0, 0.1, -0.5, float("inf"), float("nan")]))
    x = np.array(data.draw(st.lists(values, min_size=int(np.prod(shape1)),
                                    max_size=int(np.prod(shape1)))), dt).reshape(shape1)
    y = np.array(data.draw(st.lists(values, min_size=int(np.prod(shape2)),
                                    max_size=int(np.prod(shape2)))), dt).reshape(shape2)
    a, b = on(x, device), on(y, device)
    with np.errstate(all="ignore"):
        for got, want in ((a // b, x // y), (a % b, x % y), (ca.floor_divide(a, 3), x // 3),
                          (ca.remainder(7, b), np.remainder(7, y)),
                          (a[..., ::-1] % b, x[..., ::-1] % y) if x.ndim else (a % 5, x % 5)):
            assert got.dtype.name == want.dtype.name and got.device == device
            np.testing.assert_array_equal(to_numpy(got), want)


def test_floor_divide_edge_cases():
    """1 // 0.1 is 9 (the exact quotient is just under 10), the most negative int // -1 wraps
    as NumPy's, bool operands give int8 (as NumPy), in-place forms write into the array."""
    assert float(ca.array(1.0, dtype="float64") // 0.1) == 1.0 // 0.1 == 9.0
    m = np.iinfo(np.int64).min
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(to_numpy(ca.array([m]) // -1), np.array([m]) // -1)
    b = ca.array([True, False])
    assert (b // True).dtype.name == "int8" and (b % True).tolist() == [0, 0]
    a = ca.arange(10)
    a //= 3
    assert a.tolist() == [v // 3 for v in range(10)]
    a %= 2
    assert a.tolist() == [(v // 3) % 2 for v in range(10)]


def test_clip_matches_numpy(device):
    x = np.array([[1.0, 5.0, np.nan], [-3.0, 2.5, 4.0]], np.float32)
    a = on(x, device)
    for lo, hi in ((0, 4), (None, 2), (1.5, None),
                   (np.float32(0), ca.array([1.0, 2.0, 3.0], device=device))):
        want = np.clip(x, lo, to_numpy(hi) if isinstance(hi, ca.Array) else hi)
        got = ca.clip(a, lo, hi)
        assert got.dtype.name == want.dtype.name
        np.testing.assert_array_equal(to_numpy(got), want)
    np.testing.assert_array_equal(to_numpy(ca.arange(5, device=device).clip(1, 3)),
                                  np.arange(5).clip(1, 3))
    # NumPy 2.1+ and the array API: no bounds give a copy
    np.testing.assert_array_equal(to_numpy(ca.clip(a, None, None)), np.clip(x, None, None))

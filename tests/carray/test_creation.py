"""Array creation against NumPy: array/asarray from nested sequences, scalars, NumPy arrays and
other buffers (with their copy semantics), and the factories.

carray's one deliberate difference is the default float, float32: where NumPy would choose
float64 for Python floats (or for zeros/ones/linspace/eye without dtype=), the tests compare
against NumPy called with the dtype carray chose.
"""

import array
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import carray as ca

from conftest import (
    ALL_DTYPES,
    DTYPES,
    assert_same,
    gpu_examples,
    random_basic_key,
    random_values,
    shapes,
)

SET = settings(max_examples=60, deadline=None)
SMALL = settings(max_examples=30, deadline=None)


def _prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


def _nest(flat, shape, tuples):
    """flat (a list) as nested lists (or tuples) of `shape`; the element itself for shape ()."""
    if not shape:
        return flat[0]
    step = _prod(shape[1:])
    rows = [_nest(flat[i * step:(i + 1) * step], shape[1:], tuples) for i in range(shape[0])]
    return tuple(rows) if tuples else rows


ELEMENTS = {
    "bool": st.booleans(),
    "int": st.integers(-2**63, 2**63 - 1),
    "float": st.floats(width=64),
    # ints small enough that float32 holds them exactly, so no double rounding is involved
    "mixed": st.one_of(st.booleans(), st.integers(-2**24, 2**24), st.floats(width=64)),
}


@st.composite
def nested(draw, kinds=tuple(ELEMENTS)):
    """(nested lists/tuples, its shape, the carray dtype it should infer)."""
    shape = draw(shapes(max_dims=4, max_side=4))
    if 0 in shape:                  # nested lists cannot show dims after an empty one
        shape = shape[:shape.index(0) + 1]
    kind = draw(st.sampled_from(kinds))
    n = _prod(shape)
    flat = draw(st.lists(ELEMENTS[kind], min_size=n, max_size=n))
    obj = _nest(flat, shape, draw(st.booleans()))
    if any(isinstance(x, float) for x in flat) or n == 0:
        expect = "float32"          # carray's default float (NumPy: float64)
    elif any(not isinstance(x, bool) for x in flat):
        expect = "int64"
    else:
        expect = "bool"
    return obj, shape, expect


def np_array(obj, dtype):
    """NumPy's array, quietly: floats beyond float32's range become inf in both libraries."""
    with np.errstate(over="ignore"):
        return np.array(obj, dtype=dtype)


# ---------------------------------------------------------------------------------------------
# nested sequences and scalars
# ---------------------------------------------------------------------------------------------

@SET
@given(nested())
def test_array_from_nested_sequences_infers_dtype(case):
    obj, shape, expect = case
    for f in (ca.array, ca.asarray):
        a = f(obj)
        assert a.shape == shape and a.dtype == expect
        assert_same(a, np_array(obj, dtype=expect))
        assert a.base is None and a.flags.writeable and a.flags.c_contiguous


@SET
@given(nested(kinds=("bool", "mixed")), st.sampled_from(DTYPES))
def test_array_from_nested_sequences_with_dtype(case, dtype):
    obj, shape, _ = case
    flat = np.array(obj, dtype=object).reshape(-1).tolist() if shape else [obj]
    if dtype in ("int32", "int64") and any(isinstance(x, float) and not math.isfinite(x)
                                           for x in flat):
        with pytest.raises((ValueError, OverflowError)):
            ca.array(obj, dtype=dtype)
        return
    if dtype in ("int32", "int64") and any(isinstance(x, float) and abs(x) >= 2**31
                                           for x in flat):
        return                      # out of range for the integer type: not a conversion case
    assert_same(ca.array(obj, dtype=dtype), np_array(obj, dtype=dtype))
    assert_same(ca.asarray(obj, dtype=getattr(ca, dtype if dtype != "bool" else "bool_")),
                np_array(obj, dtype=dtype))


def test_dtype_inference_examples():
    cases = [([True, False], "bool"), ([1, 2], "int64"), ([1.0, 2.0], "float32"),
             ([1, 2.5], "float32"), ([True, 2], "int64"), ([True, 2.5], "float32"),
             ([[1], [2.0]], "float32"), (((1, 2), (3, 4)), "int64"), ([], "float32"),
             ([[], []], "float32"), ([2**63 - 1], "int64")]
    for obj, dtype in cases:
        a = ca.array(obj)
        assert a.dtype == dtype, obj
        assert_same(a, np.array(obj, dtype=dtype))
    assert ca.array([[], []]).shape == (2, 0)


@pytest.mark.parametrize("value, dtype", [(3, "int64"), (-2**63, "int64"), (2.5, "float32"),
                                          (True, "bool"), (False, "bool"), (float("inf"),
                                                                            "float32")])
def test_python_scalars_make_0d_arrays(value, dtype):
    for f in (ca.array, ca.asarray):
        a = f(value)
        assert a.shape == () and a.ndim == 0 and a.size == 1 and a.dtype == dtype
        assert a.item() == value and type(a.item()) is type(value)
        assert_same(a, np.array(value, dtype=dtype))
        assert a.flags.writeable and a.base is None


@pytest.mark.parametrize("value", [np.float64(1.5), np.float32(-2.25), np.int32(-7),
                                   np.int64(2**40), np.bool_(True)])
def test_numpy_scalars_keep_their_dtype(value):
    # NumPy scalars are typed ("strong"), np.float64 included although it subclasses float
    for f in (ca.array, ca.asarray):
        a = f(value)
        assert_same(a, np.asarray(value))
        assert a.flags.writeable
        a[...] = 0
        assert a.item() == 0
    assert ca.full(2, value).dtype == np.full(2, value).dtype
    assert ca.array([value, value]).dtype == np.array([value, value]).dtype


def test_numpy_scalars_keep_their_dtype_or_are_converted():
    assert ca.asarray(np.uint8(200)).tolist() == 200
    assert ca.asarray(np.uint8(200)).dtype == "uint8"
    assert ca.asarray(np.float16(0.5)).tolist() == 0.5
    assert ca.array([np.uint16(3), np.int8(-4)]).tolist() == [3, -4]
    mixed = [np.uint16(3), np.int8(-4)]
    assert ca.array(mixed).dtype == np.array(mixed).dtype


def test_explicit_dtype_for_scalars_and_sequences():
    assert_same(ca.array(1.5, dtype="float64"), np.array(1.5, dtype="float64"))
    assert_same(ca.array(2.9, dtype="int32"), np.array(2.9, dtype="int32"))
    assert_same(ca.array([0, 2, -1], dtype=bool), np.array([0, 2, -1], dtype=bool))
    assert_same(ca.array([0.0, -0.0, 0.5], dtype="bool"), np.array([0.0, -0.0, 0.5], dtype=bool))
    assert_same(ca.asarray([1, 2], dtype=float), np.asarray([1, 2], dtype=np.float32))
    assert_same(ca.asarray([1, 2], dtype=np.float64), np.asarray([1, 2], dtype=np.float64))
    assert_same(ca.asarray([1.7, -1.7], dtype=int), np.asarray([1.7, -1.7], dtype=np.int64))


@pytest.mark.parametrize("obj", [range(4), range(3, -5, -2), [range(2), range(2)],
                                 (range(2), [1, 2]), [[range(3)]]])
@pytest.mark.parametrize("dtype", [None, "bool", "int32", "float32", "float64"])
def test_array_from_ranges(obj, dtype):
    """range objects are sequences of ints, as NumPy reads them."""
    assert_same(ca.array(obj, dtype=dtype), np.array(obj, dtype=dtype), strides=False)
    assert_same(ca.asarray(obj, dtype=dtype), np.asarray(obj, dtype=dtype), strides=False)
    with pytest.raises(ValueError):
        ca.array([range(2), range(3)])


def test_nested_carray_and_numpy_arrays_in_lists():
    rows = [ca.asarray([1, 2], dtype="int32"), np.asarray([3, 4], dtype=np.int32)]
    assert_same(ca.array(rows), np.array([np.asarray([1, 2], dtype=np.int32), rows[1]]))
    mixed = [ca.asarray([1.5, 2.5], dtype="float64"), [3, 4]]
    assert_same(ca.array(mixed), np.array([[1.5, 2.5], [3, 4]], dtype=np.float64))


# ---------------------------------------------------------------------------------------------
# from NumPy arrays: zero-copy when the dtype is carray's and the strides are whole elements
# ---------------------------------------------------------------------------------------------

def _first(shape):
    return (0,) * len(shape)


def _other(v):
    """A value different from NumPy scalar v, in v's dtype."""
    return (not v) if isinstance(v, (bool, np.bool_)) else v + 1


@st.composite
def numpy_views(draw, dtypes=DTYPES):
    """A NumPy array of one of carray's dtypes and a random basic view of it."""
    dtype = draw(st.sampled_from(dtypes))
    shape = draw(shapes(max_dims=4))
    n = random_values(dtype, shape, draw(st.integers(0, 2**32 - 1)))
    v = n[draw(random_basic_key(shape))]
    return n, (v if isinstance(v, np.ndarray) else n[...])     # an int key can give a scalar


def assert_same_layout(a, v):
    """a equals NumPy's v in values and dtype, and its byte strides are v's for every dim
    longer than 1 (NumPy's buffer export normalises the strides of length-1 dims)."""
    assert_same(a, v, strides=False)
    for d, size in enumerate(v.shape):
        if size > 1 and v.size:
            assert a.strides[d] == v.strides[d], (a.strides, v.strides)


@SET
@given(numpy_views(), st.sampled_from([None, False]))
def test_asarray_of_numpy_is_zero_copy(nv, copy):
    n, v = nv
    a = ca.asarray(v, copy=copy) if copy is not None else ca.asarray(v)
    assert_same_layout(a, v)    # byte strides (negative, zero) as NumPy's
    if v.size:
        m = np.asarray(a)
        assert np.shares_memory(m, v) and np.shares_memory(m, n)
        assert a.data_ptr == v.__array_interface__["data"][0]
        i = _first(v.shape)
        new = _other(v[i])
        a[i] = new
        assert v[i] == new                    # carray -> NumPy
        v[i] = _other(new)
        assert a[i].item() == _other(new)     # NumPy -> carray


@SET
@given(numpy_views())
def test_array_of_numpy_copies(nv):
    n, v = nv
    for a in (ca.array(v), ca.asarray(v, copy=True), ca.array(v, copy=True)):
        assert_same(a, v.copy(order="C"))
        assert a.base is None and a.flags.c_contiguous and a.flags.writeable
        if v.size:
            assert not np.shares_memory(np.asarray(a), n)
            i = _first(v.shape)
            before = v[i].copy()
            a[i] = _other(before)
            assert v[i] == before


@settings(max_examples=10, deadline=None)
@given(numpy_views())
def test_asarray_keeps_the_numpy_array_alive(nv):
    n, v = nv
    expect = v.copy()
    a = ca.asarray(v)
    del n, v
    import gc
    gc.collect()
    assert_same(a, expect, strides=False)


@SMALL
@given(numpy_views(dtypes=("int32", "float64")), st.sampled_from(DTYPES))
def test_asarray_with_another_dtype_converts(nv, dtype):
    n, v = nv
    a = ca.asarray(v, dtype=dtype)
    if np.dtype(dtype) == v.dtype:
        assert a.size == 0 or np.shares_memory(np.asarray(a), v)
        return
    assert_same(a, v.astype(dtype), strides=False)
    assert a.size == 0 or not np.shares_memory(np.asarray(a), n)
    with pytest.raises(ValueError):         # as np.asarray(v, dtype=..., copy=False)
        np.asarray(v, dtype=dtype, copy=False)
    with pytest.raises(ValueError, match="copy"):
        ca.asarray(v, dtype=dtype, copy=False)


def test_asarray_copy_false_raises_when_a_copy_is_needed():
    for obj in ([1, 2], (1.5,), 3, 2.5, True, [[1], [2]]):
        with pytest.raises(ValueError):
            np.asarray(obj, copy=False)
        with pytest.raises(ValueError, match="copy"):
            ca.asarray(obj, copy=False)
        with pytest.raises(ValueError, match="copy"):
            ca.array(obj, copy=False)
    n = np.arange(4.0)
    with pytest.raises(ValueError):
        ca.asarray(n, dtype="float32", copy=False)
    # carray holds no big-endian data: converting it is a copy (NumPy would share)
    for dt in (">f8",):
        with pytest.raises(ValueError, match="copy"):
            ca.asarray(np.arange(4, dtype=dt), copy=False)
    u8 = np.arange(4, dtype="uint8")
    assert np.shares_memory(np.asarray(ca.asarray(u8, copy=False)), u8)
    a = ca.arange(3)
    assert ca.asarray(a, copy=False) is a and ca.asarray(a) is a
    assert ca.asarray(a, dtype="int64", copy=False) is a
    b = ca.asarray(a, copy=True)
    assert b is not a and b.tolist() == a.tolist()
    b[0] = 7
    assert a[0].item() == 0


def test_read_only_numpy_is_shared_read_only():
    n = np.arange(6.0).reshape(2, 3)
    n.flags.writeable = False
    a = ca.asarray(n)
    assert_same(a, n)
    assert not a.flags.writeable
    assert np.shares_memory(np.asarray(a), n)
    with pytest.raises(ValueError, match="read-only"):
        a[0, 0] = 1.0
    c = ca.array(n)
    assert c.flags.writeable
    c[0, 0] = 9.0
    assert n[0, 0] == 0.0


# ---------------------------------------------------------------------------------------------
# other buffers
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("code, dtype", [("d", "float64"), ("f", "float32"), ("i", "int32"),
                                         ("q", "int64"), ("l", "int64")])
def test_array_array_is_shared(code, dtype):
    buf = array.array(code, [1, 2, 3, -4])
    a = ca.asarray(buf)
    assert a.dtype == dtype and a.shape == (4,)
    assert_same(a, np.asarray(buf).astype(dtype))
    a[1] = 20
    assert buf[1] == 20             # zero-copy: writes reach the array.array
    buf[2] = 30
    assert a[2].item() == 30
    c = ca.array(buf)
    c[0] = 99
    assert buf[0] == 1


@pytest.mark.parametrize("code", ["b", "B", "h", "H", "I", "L", "Q"])
def test_array_array_of_other_int_types_keeps_its_type_zero_copy(code):
    values = [1, 2, 3, 100]
    buf = array.array(code, values)
    a = ca.asarray(buf)
    assert a.tolist() == np.asarray(buf).tolist() == values
    assert a.dtype == np.asarray(buf).dtype
    a[0] = 5
    assert buf[0] == 5


def test_bytearray_and_memoryview_are_shared_as_uint8():
    data = bytearray([1, 2, 255, 0])
    a = ca.asarray(data)
    assert a.tolist() == np.asarray(data).tolist() == [1, 2, 255, 0]
    assert a.dtype == "uint8" == np.asarray(data).dtype
    a[0] = 5
    assert data[0] == 5
    assert ca.asarray(memoryview(b"\x07\x08")).tolist() == [7, 8]
    # a memoryview of a NumPy array (strided too) is shared like the array itself
    n = np.arange(12.0).reshape(3, 4)
    for v in (n, n.T, n[::-1, 1::2]):
        a = ca.asarray(memoryview(v))
        assert_same_layout(a, v)
        assert np.shares_memory(np.asarray(a), n)


@SMALL
@given(st.sampled_from(["uint8", "int8", "int16", "uint16", "uint32", "uint64", "float16",
                        ">f8", ">f4", ">i4", ">i8", "<f8"]),
       shapes(max_dims=3), st.integers(0, 2**32 - 1), st.booleans())
def test_numpy_arrays_of_other_dtypes_are_converted(dtype, shape, seed, transpose):
    rng = np.random.default_rng(seed)
    n = (rng.integers(0, 100, size=shape)).astype(dtype)
    if transpose:
        n = n.T
    a = ca.asarray(n)
    kind = np.dtype(dtype).kind
    # carray keeps the dtypes it has (byte order aside); others become the kind's default
    if np.dtype(dtype).newbyteorder("=").name in ALL_DTYPES + ("float16",):
        expect = np.dtype(dtype).newbyteorder("=").name
    else:
        expect = "float32" if kind == "f" else "int64"
    assert a.shape == n.shape and a.dtype == expect
    assert_same(a, n.astype(expect), strides=False)


def test_unaligned_buffer_is_copied():
    raw = np.zeros(8 * 4 + 1, dtype=np.uint8)
    v = raw[1:].view(np.float64)
    v[:] = [1.5, -2.0, 3.25, 4.0]
    assert not v.flags.aligned
    a = ca.asarray(v)
    assert a.tolist() == [1.5, -2.0, 3.25, 4.0] and a.dtype == "float64"


# ---------------------------------------------------------------------------------------------
# factories
# ---------------------------------------------------------------------------------------------

dtype_or_none = st.sampled_from((None,) + DTYPES)


def _as_arg(shape, form):
    if form == "tuple":
        return shape
    if form == "list":
        return list(shape)
    return shape[0] if len(shape) == 1 else shape


@gpu_examples(10)
@SET
@given(shapes(max_dims=4), dtype_or_none, st.sampled_from(["tuple", "list", "int"]),
       st.booleans())
def test_zeros_ones_empty(device, shape, dtype, form, default_device):
    expect = dtype or "float32"
    arg = _as_arg(shape, form)
    dev = None if device == "cpu" and default_device else device       # None: the CPU
    for fc, fn in ((ca.zeros, np.zeros), (ca.ones, np.ones)):
        a = fc(arg, dtype=dtype, device=dev)
        assert_same(a, fn(shape, dtype=expect))
        assert a.base is None and a.flags.writeable and a.device == device
    e = ca.empty(arg, dtype=dtype, device=dev)
    assert_same(e, np.empty(shape, dtype=expect), values=False)
    assert e.device == device


fill_values = st.one_of(st.booleans(), st.integers(-2**31, 2**31 - 1),
                        st.floats(width=32, allow_nan=False))


@gpu_examples(10)
@SET
@given(shapes(max_dims=4), fill_values, dtype_or_none)
def test_full(device, shape, value, dtype):
    if dtype is None:
        expect = "bool" if isinstance(value, bool) else "int64" if isinstance(value, int) \
            else "float32"
    else:
        expect = dtype
    if expect in ("int32", "int64") and isinstance(value, float):
        value = int(value) if abs(value) < 2**31 else 0
    a = ca.full(shape, value, dtype=dtype, device=device)
    assert_same(a, np.full(shape, value, dtype=expect))
    assert a.device == device


def test_full_broadcasts_an_array_fill_value():
    assert_same(ca.full((2, 3), ca.asarray([1.0, 2.0, 3.0])),
                np.full((2, 3), np.asarray([1.0, 2.0, 3.0], dtype=np.float32)))
    assert_same(ca.full((2, 3), [[1], [2]], dtype="int32"),
                np.full((2, 3), [[1], [2]], dtype="int32"))
    assert_same(ca.full((), 7), np.full((), 7))


@gpu_examples(10)
@SET
@given(dtype_or_none, shapes(max_dims=3), st.sampled_from(DTYPES), st.booleans(),
       st.one_of(st.none(), shapes(max_dims=3)), st.booleans())
def test_like_factories(device, dtype, shape, proto_dtype, from_numpy, new_shape, transposed):
    proto_n = random_values(proto_dtype, shape, 0)
    if transposed:
        proto_n = proto_n.T
    proto = proto_n if from_numpy else ca.asarray(proto_n)
    expect_dtype = dtype or proto_dtype
    expect_shape = proto_n.shape if new_shape is None else new_shape
    kw = {"dtype": dtype, "shape": new_shape, "device": device}
    # carray's *_like results are always C-contiguous (NumPy's order='K' would keep a
    # transposed prototype's layout), so strides are compared with C order
    assert_same(ca.zeros_like(proto, **kw), np.zeros(expect_shape, dtype=expect_dtype))
    assert_same(ca.ones_like(proto, **kw), np.ones(expect_shape, dtype=expect_dtype))
    assert_same(ca.full_like(proto, 1, **kw), np.full(expect_shape, 1, dtype=expect_dtype))
    assert_same(ca.empty_like(proto, **kw), np.empty(expect_shape, dtype=expect_dtype),
                values=False)
    for fc, fn in ((ca.zeros_like, np.zeros_like), (ca.ones_like, np.ones_like)):
        assert_same(fc(proto, dtype=dtype), fn(proto_n, dtype=dtype), strides=False)


def test_full_like_casts_the_fill_value():
    n = np.ones(3, dtype=np.int32)
    assert_same(ca.full_like(ca.asarray(n), 2.7), np.full_like(n, 2.7))
    assert_same(ca.full_like(ca.asarray(n), True, dtype="float64"),
                np.full_like(n, True, dtype="float64"))


# -- arange -----------------------------------------------------------------------------------

int_dtype_or_none = st.sampled_from([None, "int32", "int64", "float32", "float64"])


@gpu_examples(10)
@SET
@given(st.integers(-50, 50), st.integers(-50, 50), st.integers(-7, 7).filter(bool),
       st.integers(1, 3), int_dtype_or_none)
def test_arange_ints(device, start, stop, step, nargs, dtype):
    args = (stop,) if nargs == 1 else (start, stop) if nargs == 2 else (start, stop, step)
    a = ca.arange(*args, dtype=dtype, device=device)
    assert a.device == device
    assert_same(a, np.arange(*args, dtype=dtype or "int64"))


@gpu_examples(10)
@SET
@given(st.floats(-100, 100), st.floats(0.01, 10), st.floats(0, 300), st.booleans(),
       int_dtype_or_none)
def test_arange_floats_match_numpy_bit_for_bit(device, start, step, count, negative, dtype):
    if negative:
        step = -step
    stop = start + step * count
    n = np.arange(start, stop, step, dtype=dtype or "float32")
    a = ca.arange(start, stop, step, dtype=dtype, device=device)
    assert a.shape == np.arange(start, stop, step).shape    # NumPy's length
    assert_same(a, n)


@pytest.mark.parametrize("args", [(0, 1, 0.1), (1, 1.3, 0.1), (0.5,), (1, 3.5), (-1, 1, 0.25),
                                  (10, 0, -1.5), (0, 5, 0.5), (2.5, 2.5), (3, 1.5),
                                  (1e-9, 1e-8, 1e-9), (0.1, 0.4, 0.1)])
@pytest.mark.parametrize("dtype", [None, "float32", "float64", "int32", "int64"])
def test_arange_examples(args, dtype):
    expect = dtype or ("int64" if all(isinstance(x, int) for x in args) else "float32")
    assert_same(ca.arange(*args, dtype=dtype), np.arange(*args, dtype=expect))


def test_arange_bool_and_keyword_forms():
    assert_same(ca.arange(0, 2, dtype=bool), np.arange(0, 2, dtype=bool))
    assert_same(ca.arange(1, 3, dtype="bool"), np.arange(1, 3, dtype=bool))
    assert_same(ca.arange(5, step=2), np.arange(5, step=2))
    assert_same(ca.arange(start=1, stop=4), np.arange(start=1, stop=4))
    assert_same(ca.arange(np.int32(3)), np.arange(3))
    assert_same(ca.arange(True, 4), np.arange(True, 4))


# -- linspace ---------------------------------------------------------------------------------

@gpu_examples(10)
@SET
@given(st.floats(-1e6, 1e6), st.floats(-1e6, 1e6), st.integers(0, 60), st.booleans(),
       st.sampled_from([None, "float32", "float64", "int32", "int64"]))
def test_linspace(device, start, stop, num, endpoint, dtype):
    n, nstep = np.linspace(start, stop, num, endpoint=endpoint, retstep=True,
                           dtype=dtype or "float32")
    a, astep = ca.linspace(start, stop, num, endpoint=endpoint, retstep=True, dtype=dtype,
                           device=device)
    assert_same(a, n)
    assert (astep == nstep) or (math.isnan(astep) and math.isnan(nstep))
    assert_same(ca.linspace(start, stop, num, endpoint, dtype=dtype, device=device), n)


def test_linspace_examples():
    assert_same(ca.linspace(0, 1), np.linspace(0, 1, dtype=np.float32))
    assert_same(ca.linspace(2, 3, 5), np.linspace(2, 3, 5, dtype=np.float32))
    assert_same(ca.linspace(0, 1, 1), np.linspace(0, 1, 1, dtype=np.float32))
    assert_same(ca.linspace(-10, 0, 7, dtype="int64"), np.linspace(-10, 0, 7, dtype="int64"))
    assert_same(ca.linspace(0, 10, 4, endpoint=False), np.linspace(0, 10, 4, endpoint=False,
                                                                   dtype=np.float32))
    a, step = ca.linspace(0, 1, 5, retstep=True)
    assert step == 0.25 and isinstance(step, float)
    assert math.isnan(ca.linspace(0, 1, 1, retstep=True)[1])
    assert ca.linspace(0, 1, 0).shape == (0,)


# -- eye / identity ---------------------------------------------------------------------------

@gpu_examples(10)
@SET
@given(st.integers(0, 6), st.one_of(st.none(), st.integers(0, 6)), st.integers(-7, 7),
       dtype_or_none)
def test_eye(device, N, M, k, dtype):
    a = ca.eye(N, M, k=k, dtype=dtype, device=device)
    assert_same(a, np.eye(N, M, k=k, dtype=dtype or "float32"))
    assert a.device == device


def test_eye_with_an_empty_huge_side_is_instant():
    # only the rows the diagonal crosses are visited (this used to loop 2**48 times)
    assert ca.eye(2**48, 0).shape == (2**48, 0)
    assert ca.eye(0, 2**48).shape == (0, 2**48)
    assert_same(ca.eye(3, 5, k=-10**12), np.eye(3, 5, k=-10**12, dtype=np.float32))


@pytest.mark.parametrize("n", [0, 1, 4])
@pytest.mark.parametrize("dtype", (None,) + DTYPES)
def test_identity(n, dtype):
    assert_same(ca.identity(n, dtype=dtype), np.identity(n, dtype=dtype or "float32"))

"""dtypes against NumPy: the dtype objects, promote_types, result_type with weak Python scalars
(NumPy 2 / NEP 50 rules) and astype between every pair of dtypes.

carray's deliberate difference: the default float is float32, so a Python float (or the Python
type `float`) that NumPy would turn into float64 gives float32 here.
"""

import copy
import itertools
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import carray as ca

from conftest import ALL_DTYPES as DTYPES
from conftest import assert_same, random_values, shapes

SET = settings(max_examples=40, deadline=None)

CA_DTYPES = {name: ca.bool_ if name == "bool" else getattr(ca, name) for name in DTYPES}


# ---------------------------------------------------------------------------------------------
# the dtype objects
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", DTYPES)
def test_attributes_match_numpy(name):
    d, n = CA_DTYPES[name], np.dtype(name)
    assert d.name == n.name
    assert d.itemsize == n.itemsize
    assert d.kind == n.kind
    assert d.char == n.char
    assert d.str == n.str
    assert str(d) == str(n) == name
    assert repr(d) == repr(n) == f"dtype('{name}')"
    assert d.type in (bool, int, float)     # carray has no scalar types: the Python type


@pytest.mark.parametrize("name", DTYPES)
def test_equality(name):
    d = CA_DTYPES[name]
    n = np.dtype(name)
    assert d == name and d == n and d == n.type and d == n.str and d == n.char
    assert n == d                           # NumPy accepts carray dtypes too
    assert not (d != name)
    for other in DTYPES:
        if other != name:
            assert d != other and d != np.dtype(other) and d != CA_DTYPES[other]
            assert not (d == np.dtype(other).type)
    for junk in (None, 3, "foo", object(), [name]):
        assert d != junk and not (d == junk)


def test_python_types():
    # Python float means carray's default float (NumPy: float64); int -> int64; bool -> bool
    # (== with a Python type is what is tested here)
    assert ca.dtype(float) is ca.float32 and ca.float32 == float and ca.float64 != float  # noqa: E721
    assert ca.dtype(int) is ca.int64 == np.dtype(int) and ca.int32 != int  # noqa: E721
    assert ca.dtype(bool) is ca.bool_ and ca.bool_ == np.dtype(bool)
    assert ca.zeros(2, dtype=float).dtype == "float32"
    assert ca.zeros(2, dtype=int).dtype == np.zeros(2, dtype=int).dtype


def test_hashable():
    assert len({*CA_DTYPES.values()}) == len(DTYPES) == 11
    for name, d in CA_DTYPES.items():
        assert hash(d) == hash(name)        # so a dtype finds entries keyed by its name
        assert {name: 1}[d] == 1 and {d: 2}[name] == 2 and {d: 3}[d] == 3
        assert hash(ca.dtype(name)) == hash(d)


@pytest.mark.parametrize("spec", ["bool", "?", "b1", "|b1", "bool_", "int32", "i4", "<i4", "=i4",
                                  "i", "intc", "int64", "i8", "<i8", "l", "q", "int", "int_",
                                  "long", "longlong", "intp", "float32", "f4", "<f4", "f",
                                  "single", "float64", "f8", "<f8", "d", "double", "int8", "i1",
                                  "b", "byte", "int16", "i2", "h", "short", "uint8", "u1", "B",
                                  "ubyte", "uint16", "u2", "H", "ushort", "uint32", "u4", "I",
                                  "uintc", "uint64", "u8", "L", "Q", "uint", "ulong", "uintp"])
def test_names_as_numpy(spec):
    d = ca.dtype(spec)
    assert d.name == np.dtype(spec).name
    assert d is CA_DTYPES[d.name]           # one object per dtype
    assert d == spec


def test_float_name_is_the_default_float():
    # 'float' names the Python type float, which carray maps to its default float32
    assert ca.dtype("float") is ca.float32
    assert np.dtype("float") == np.float64


@pytest.mark.parametrize("name", DTYPES)
def test_numpy_objects_convert(name):
    n = np.dtype(name)
    assert ca.dtype(n) is CA_DTYPES[name]
    assert ca.dtype(n.type) is CA_DTYPES[name]
    assert ca.dtype(CA_DTYPES[name]) is CA_DTYPES[name]
    assert ca.zeros(1, dtype=n).dtype == n and ca.zeros(1, dtype=n.type).dtype == n
    assert ca.zeros(1, dtype=CA_DTYPES[name]).dtype is CA_DTYPES[name]
    # and a carray dtype is accepted by NumPy
    assert np.zeros(1, dtype=CA_DTYPES[name].str).dtype == n


@pytest.mark.parametrize("name", DTYPES)
def test_dtype_pickles_and_copies_to_the_same_object(name):
    d = CA_DTYPES[name]
    for proto in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(d, protocol=proto)) is d
    assert copy.copy(d) is d and copy.deepcopy(d) is d


def test_dtype_of_arrays():
    for name in DTYPES:
        a = ca.zeros((2, 3), dtype=name)
        assert a.dtype is CA_DTYPES[name]
        assert a.itemsize == a.dtype.itemsize == np.dtype(name).itemsize


# ---------------------------------------------------------------------------------------------
# promotion
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("t1, t2", list(itertools.product(DTYPES, DTYPES)))
def test_promote_types_matches_numpy(t1, t2):
    expect = np.promote_types(t1, t2).name
    assert ca.promote_types(t1, t2).name == expect
    assert ca.promote_types(CA_DTYPES[t1], np.dtype(t2)) is CA_DTYPES[expect]
    assert ca.promote_types(np.dtype(t1).type, t2) is CA_DTYPES[expect]
    assert ca.promote_types(t2, t1) is ca.promote_types(t1, t2)


@pytest.mark.parametrize("t1, t2", list(itertools.product(DTYPES, DTYPES)))
def test_result_type_of_arrays_matches_numpy(t1, t2):
    expect = np.result_type(np.zeros(1, t1), np.zeros(2, t2)).name
    assert ca.result_type(ca.zeros(1, dtype=t1), ca.zeros(2, dtype=t2)).name == expect
    # 0-d arrays and dtypes are "strong" as well (NEP 50)
    assert ca.result_type(ca.zeros((), dtype=t1), t2).name == expect
    assert ca.result_type(CA_DTYPES[t1], np.zeros(3, t2)).name == expect


def _expected_with_weak_scalars(strong, scalars):
    """NumPy 2's result_type, with carray's default float: when the float kind comes only from
    weak Python floats (every strong operand is bool or int), carray gives float32 where
    NumPy gives float64."""
    expect = np.result_type(*[np.zeros(1, t) for t in strong], *scalars).name
    strong_kind = "biuf".index(np.result_type(*strong).kind) if strong else -1
    strong_kind -= strong_kind >= 2           # int and uint are one kind here
    if any(type(s) is float for s in scalars) and strong_kind < 2:
        assert expect == "float64"
        return "float32"
    return expect


@pytest.mark.parametrize("t", DTYPES)
@pytest.mark.parametrize("scalars", [(True,), (1,), (-3,), (1.5,), (True, 2), (2, 0.5),
                                     (False, 1.0), (1, 1, 1)])
def test_result_type_with_weak_python_scalars(t, scalars):
    expect = _expected_with_weak_scalars([t], scalars)
    assert ca.result_type(ca.zeros(3, dtype=t), *scalars).name == expect
    assert ca.result_type(*scalars, CA_DTYPES[t]).name == expect
    assert ca.result_type(np.zeros(2, dtype=t), *scalars).name == expect


def test_result_type_examples():
    assert ca.result_type(ca.zeros(2, dtype="int32"), 1) == "int32"       # NumPy 2: int32
    assert np.result_type(np.zeros(2, dtype="int32"), 1) == "int32"
    assert ca.result_type(ca.zeros(2, dtype=bool), 1) == "int64"
    assert np.result_type(np.zeros(2, dtype=bool), 1) == "int64"
    assert ca.result_type(ca.zeros(2, dtype="int64"), 1.5) == "float32"    # NumPy: float64
    assert np.result_type(np.zeros(2, dtype="int64"), 1.5) == "float64"
    assert ca.result_type(ca.zeros(2, dtype="float32"), 1.5) == "float32"
    assert np.result_type(np.zeros(2, dtype="float32"), 1.5) == "float32"
    assert ca.result_type(ca.zeros(2, dtype="float64"), 1.5) == "float64"
    assert ca.result_type(ca.zeros(2, dtype="bool"), True) == "bool"
    assert ca.result_type(1) == "int64" and ca.result_type(True) == "bool"
    assert ca.result_type(1.0) == "float32" and ca.result_type(1, 2.0) == "float32"
    # NumPy scalars are strong, np.float64 included (it subclasses Python float)
    assert ca.result_type(ca.zeros(2, dtype="float32"), np.float64(1.5)) == "float64"
    assert ca.result_type(ca.zeros(2, dtype="int32"), np.int64(1)) == "int64"
    with pytest.raises(ValueError):
        ca.result_type()


@SET
@given(st.lists(st.sampled_from(DTYPES), min_size=1, max_size=4),
       st.lists(st.sampled_from([True, 7, -2, 0.25]), max_size=3))
def test_result_type_random_mixes(strong, scalars):
    expect = _expected_with_weak_scalars(strong, scalars)
    operands = [ca.zeros(1, dtype=t) for t in strong] + list(scalars)
    assert ca.result_type(*operands).name == expect
    assert ca.result_type(*reversed(operands)).name == expect
    # (not a pairwise fold: int8, uint16, float32 give float32, as NumPy's)
    assert ca.result_type(*strong).name == np.result_type(*strong).name


# ---------------------------------------------------------------------------------------------
# astype
# ---------------------------------------------------------------------------------------------

def _numpy_cast(n, dtype):
    """NumPy's cast, with float -> signed or unsigned int restricted to values in range (NumPy's
    result for nan, inf and out-of-range floats is platform-dependent): those become 0 first."""
    if n.dtype.kind == "f" and np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        n = n.copy()
        with np.errstate(over="ignore"):     # (info.max + 1.0 in float16 is inf)
            bad = ~np.isfinite(n) | (n <= info.min - 1.0) | (n >= info.max + 1.0)
        n[bad] = 0
    with np.errstate(all="ignore"):
        return n, n.astype(dtype)


@SET
@given(st.sampled_from(DTYPES), st.sampled_from(DTYPES), shapes(max_dims=3),
       st.integers(0, 2**32 - 1), st.booleans())
def test_astype_all_pairs(src, dst, shape, seed, view):
    n = random_values(src, shape, seed, special=True)
    n, expect = _numpy_cast(n, dst)
    a = ca.asarray(n)
    if view and a.ndim:
        a, n, expect = a[::-1].T, n[::-1].T, expect[::-1].T
    out = a.astype(dst)
    assert_same(out, np.ascontiguousarray(expect) if expect.ndim else expect, strides=False)
    assert out.flags.c_contiguous and out.base is None and out.flags.writeable
    if out.size:
        assert not np.shares_memory(np.asarray(out), np.asarray(a))


@pytest.mark.parametrize("src", ["float32", "float64"])
def test_astype_special_floats_to_bool_and_truncation(src):
    values = [np.nan, np.inf, -np.inf, -1.0, -0.0, 0.0, 0.5, -0.5, 1e-45, 1.7, -1.7, 2.5, -2.5,
              2147483647.0 if src == "float64" else 2147483520.0, -2147483648.0, 1e10]
    n = np.asarray(values, dtype=src)
    a = ca.asarray(values, dtype=src)
    assert_same(a.astype(bool), n.astype(bool))          # nan and inf are True, -0.0 False
    finite32 = n[np.isfinite(n) & (np.abs(n) < 2**31)]
    assert_same(ca.asarray(finite32).astype("int32"), finite32.astype("int32"))
    finite64 = n[np.isfinite(n)]
    assert_same(ca.asarray(finite64).astype("int64"), finite64.astype("int64"))
    assert ca.asarray([1.7, -1.7, 2.5, -2.5]).astype("int64").tolist() == [1, -1, 2, -2]


def test_astype_integer_wraparound_and_float_rounding():
    big = np.asarray([2**40 + 5, -2**40 - 3, 2**31, -2**31 - 1, 2**53 + 1, 2**63 - 1])
    assert_same(ca.asarray(big).astype("int32"), big.astype("int32"))     # C wraparound
    assert_same(ca.asarray(big).astype("float32"), big.astype("float32"))
    assert_same(ca.asarray(big).astype("float64"), big.astype("float64"))
    huge = np.asarray([1e300, -1e300, 3.5e38, 1e-300], dtype=np.float64)
    with np.errstate(over="ignore"):
        assert_same(ca.asarray(huge).astype("float32"), huge.astype("float32"))  # inf, 0
    assert_same(ca.asarray([True, False]).astype("float64"),
                np.asarray([True, False]).astype("float64"))


@pytest.mark.parametrize("dtype", DTYPES)
def test_astype_same_dtype_and_copy_flag(dtype):
    a = ca.arange(6).astype(dtype).reshape(2, 3)
    c = a.astype(dtype)
    assert c is not a and c.tolist() == a.tolist()
    assert a.astype(dtype, copy=False) is a
    assert a.astype(CA_DTYPES[dtype], copy=False) is a
    assert a.astype(np.dtype(dtype), copy=False) is a
    other = "float64" if dtype != "float64" else "int32"
    b = a.astype(other, copy=False)
    assert b is not a and b.dtype == other
    assert_same(b, np.arange(6).astype(dtype).reshape(2, 3).astype(other))

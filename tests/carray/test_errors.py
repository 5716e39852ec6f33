"""Bad input raises the exception NumPy raises, with a message that names what was wrong.

Each case is a function f(m) run once with m = numpy and once with m = carray: NumPy's exception
type is the oracle (carray's exception must be an instance of every builtin class NumPy's is,
so carray.AxisError stands for numpy.exceptions.AxisError), and carray's message must contain
the bad value. Cases where NumPy accepts the input (because it has object/string dtypes or more
dims) are checked against hand-derived expectations and say why. The last tests feed random
garbage to the whole API in a subprocess, so that a crash shows as a failed return code.
"""

import operator
import subprocess
import sys

import numpy as np
import pytest

import carray as ca

from conftest import assert_raises_like, fresh_env


def _builtin_bases(t):
    """The builtin exception classes t derives from (AxisError -> ValueError, IndexError, ...)."""
    return tuple(c for c in t.__mro__
                 if c.__module__ == "builtins" and c not in (object, BaseException, Exception))


def numpy_error(f):
    try:
        f(np)
    except Exception as e:             # noqa: BLE001 - the oracle may raise anything
        return type(e)
    pytest.fail("NumPy accepted the input, so it is not an error case")


def check_error(f, needles):
    """f(np) raises; f(carray) raises an exception of the same kind whose message contains
    every string in `needles`. Returns carray's exception."""
    t = numpy_error(f)
    bases = _builtin_bases(t)
    with pytest.raises(bases[0]) as info:
        f(ca)
    for b in bases:
        assert isinstance(info.value, b), f"carray raised {info.type.__name__}, NumPy {t.__name__}"
    if t.__name__ == "AxisError":
        assert isinstance(info.value, ca.AxisError)
    msg = str(info.value)
    for needle in needles:
        assert str(needle) in msg, f"{needle!r} not in carray's message {msg!r}"
    return info.value


def A(m, shape=(2, 3, 4), dtype="int64"):
    """arange(24) of `dtype` in `shape` (m is numpy or carray)."""
    return m.arange(24).astype(dtype).reshape(shape)


def setitem(a, key, value):
    a[key] = value
    return a


def case(name, f, *needles):
    return pytest.param(f, needles, id=name)


# ---------------------------------------------------------------------------------------------
# shapes: reshape and the factories
# ---------------------------------------------------------------------------------------------

SHAPE_CASES = [
    case("reshape-size", lambda m: A(m).reshape(5, 5), "24", "(5, 5)"),
    case("reshape-size-tuple", lambda m: A(m).reshape((7, 4)), "24", "(7, 4)"),
    case("reshape-size-unknown", lambda m: A(m).reshape(7, -1), "24", "(7, -1)"),
    case("reshape-0-unknown", lambda m: m.zeros((0, 3)).reshape(-1, 0), "(-1, 0)"),
    case("reshape-module", lambda m: m.reshape(A(m), (25,)), "(25,)"),
    case("reshape-two-unknown", lambda m: A(m).reshape(-1, -1), "unknown", "(-1, -1)"),
    case("reshape-two-unknown-3d", lambda m: A(m).reshape(2, -1, -1), "unknown", "(2, -1, -1)"),
    case("reshape-float", lambda m: A(m).reshape(2.0, 12), "2.0"),
    case("reshape-float-tuple", lambda m: A(m).reshape((2.5, 12)), "2.5"),
    case("reshape-str", lambda m: A(m).reshape("a", 12), "'a'"),
    case("reshape-huge", lambda m: A(m).reshape(2**63), str(2**63)),
    case("zeros-negative", lambda m: m.zeros((-1, 2)), "-1"),
    case("ones-negative", lambda m: m.ones((3, -2)), "-2"),
    case("empty-negative-int", lambda m: m.empty(-5), "-5"),
    case("full-negative", lambda m: m.full((-3,), 1), "-3"),
    case("broadcast_to-negative", lambda m: m.broadcast_to(m.ones(3), (-1,)), "-1"),
    case("zeros-float", lambda m: m.zeros((2.0, 2)), "2.0"),
    case("ones-float-scalar", lambda m: m.ones(3.0), "3.0"),
    case("zeros-str", lambda m: m.zeros((2, "a")), "'a'"),
    case("empty-str", lambda m: m.empty("ab"), "a"),
    case("zeros-None", lambda m: m.zeros(None), "None"),
    case("zeros-None-in-tuple", lambda m: m.zeros((2, None)), "None"),
    case("ones-bool-dim", lambda m: m.ones((True, 2)), "True"),
    case("zeros-huge-dim", lambda m: m.zeros((2**63,)), str(2**63)),
    case("zeros-huge-negative-dim", lambda m: m.zeros((-2**63 - 1,)), str(-2**63 - 1)),
    case("zeros-too-big", lambda m: m.zeros((2**40, 2**40)), str(2**40)),
    case("zeros-too-many-dims", lambda m: m.zeros((1,) * 65), "65"),
]


@pytest.mark.parametrize("f, needles", SHAPE_CASES)
def test_shape_errors(f, needles):
    check_error(f, needles)


def test_reshape_negative_other_than_minus_one():
    # NumPy treats any negative size in reshape as "unknown" (reshape(-2, 12) works there);
    # carray follows the array API and its own docs: only -1 means unknown, -2 is a bad size.
    with pytest.raises(ValueError, match="-2"):
        ca.arange(24).reshape(-2, 12)
    assert ca.arange(24).reshape(-1, 12).shape == np.arange(24).reshape(-1, 12).shape


def test_more_dims_than_carray_supports():
    # NumPy allows 64 dims, carray 32: beyond its limit carray raises the ValueError NumPy
    # raises beyond 64, naming the count.
    with pytest.raises(ValueError, match="33"):
        ca.zeros((1,) * 33)
    with pytest.raises(ValueError, match="33"):
        ca.ones(1).reshape((1,) * 33)
    assert ca.zeros((1,) * 32).ndim == 32


# ---------------------------------------------------------------------------------------------
# axes
# ---------------------------------------------------------------------------------------------

AXIS_CASES = [
    case("transpose-oob", lambda m: A(m).transpose(0, 1, 3), "3", "dimension 3"),
    case("transpose-oob-negative", lambda m: A(m).transpose(0, 1, -4), "-4"),
    case("transpose-module-oob", lambda m: m.transpose(A(m), (2, 0, 5)), "5"),
    case("permute_dims-oob", lambda m: m.permute_dims(A(m), (0, 1, 7)), "7"),
    case("transpose-repeated", lambda m: A(m).transpose(0, 1, 1), "repeated", "(0, 1, 1)"),
    case("transpose-repeated-negative", lambda m: A(m).transpose(0, -1, 2), "repeated"),
    case("transpose-too-few", lambda m: A(m).transpose(0, 1), "(0, 1)"),
    case("transpose-too-many", lambda m: A(m).transpose(0, 1, 2, 3), "(0, 1, 2, 3)"),
    case("transpose-float", lambda m: A(m).transpose(0, 1, 2.0), "2.0"),
    case("swapaxes-oob", lambda m: m.swapaxes(A(m), 0, 3), "3"),
    case("swapaxes-oob-negative", lambda m: A(m).swapaxes(-4, 0), "-4"),
    case("swapaxes-0d", lambda m: m.asarray(1.0).swapaxes(0, 0), "0"),
    case("expand_dims-oob", lambda m: m.expand_dims(A(m), 5), "5"),
    case("expand_dims-oob-negative", lambda m: m.expand_dims(A(m), -5), "-5"),
    case("expand_dims-oob-tuple", lambda m: m.expand_dims(A(m), (0, 5)), "5"),
    case("expand_dims-repeated", lambda m: m.expand_dims(A(m), (0, 0)), "repeated"),
    case("expand_dims-repeated-negative", lambda m: m.expand_dims(A(m), (4, -1)), "repeated"),
    case("expand_dims-float", lambda m: m.expand_dims(A(m), 0.5), "0.5"),
    case("squeeze-oob", lambda m: m.squeeze(A(m, (1, 24, 1)), 3), "3"),
    case("squeeze-oob-negative", lambda m: A(m, (1, 24, 1)).squeeze(-4), "-4"),
    case("squeeze-not-one", lambda m: m.squeeze(A(m), 1), "axis 1", "size 3"),
    case("squeeze-not-one-tuple", lambda m: A(m, (1, 24, 1)).squeeze((0, 1)), "axis 1", "24"),
    case("squeeze-repeated", lambda m: m.squeeze(A(m, (1, 24, 1)), (0, 0)), "repeated"),
    case("moveaxis-oob-source", lambda m: m.moveaxis(A(m), 3, 0), "3"),
    case("moveaxis-oob-destination", lambda m: m.moveaxis(A(m), 0, -4), "-4"),
    case("moveaxis-repeated-source", lambda m: m.moveaxis(A(m), (0, 0), (1, 2)),
         "repeated", "source"),
    case("moveaxis-repeated-destination", lambda m: m.moveaxis(A(m), (0, 1), (2, 2)),
         "repeated", "destination"),
    case("moveaxis-repeated-destination-negative", lambda m: m.moveaxis(A(m), (0, 1), (2, -1)),
         "repeated", "destination"),
    case("moveaxis-lengths", lambda m: m.moveaxis(A(m), (0, 1), (2,)), "2", "1"),
]


@pytest.mark.parametrize("f, needles", AXIS_CASES)
def test_axis_errors(f, needles):
    check_error(f, needles)


def test_axis_error_is_value_and_index_error():
    assert issubclass(ca.AxisError, ValueError) and issubclass(ca.AxisError, IndexError)
    with pytest.raises(IndexError):
        ca.zeros((2, 3)).swapaxes(0, 2)
    with pytest.raises(ValueError):
        ca.zeros((2, 3)).transpose(0, 2)


def test_moveaxis_valid_matches_numpy():
    # the repeated-axis checks must not reject valid moves
    n = np.zeros((2, 3, 4, 5))
    a = ca.zeros((2, 3, 4, 5))
    for src, dst in [((0, 1), (2, 3)), ((0, 1), (-1, -2)), ((3, 0), (0, 3)), (1, -1), ((), ())]:
        assert ca.moveaxis(a, src, dst).shape == np.moveaxis(n, src, dst).shape


# ---------------------------------------------------------------------------------------------
# indexing
# ---------------------------------------------------------------------------------------------

INDEX_CASES = [
    case("int-oob", lambda m: A(m)[2], "index 2", "axis 0", "size 2"),
    case("int-oob-negative", lambda m: A(m)[-3], "index -3", "axis 0"),
    case("int-oob-axis1", lambda m: A(m)[0, 3], "index 3", "axis 1", "size 3"),
    case("int-oob-axis2", lambda m: A(m)[:, :, 4], "index 4", "axis 2", "size 4"),
    case("int-oob-after-ellipsis", lambda m: A(m)[..., -5], "index -5", "axis 2"),
    case("int-oob-empty-axis", lambda m: m.zeros((0, 3))[0], "index 0", "size 0"),
    case("array-oob", lambda m: A(m)[m.asarray([0, 5])], "index 5", "size 2"),
    case("list-oob", lambda m: A(m)[[0, -5]], "index -5", "size 2"),
    case("list-oob-axis1", lambda m: A(m)[:, [0, 3]], "index 3", "axis 1", "size 3"),
    case("array-oob-2d", lambda m: A(m)[m.asarray([[0], [1]]), m.asarray([[0, 9]])], "index 9"),
    case("too-many", lambda m: A(m)[0, 0, 0, 0], "3-dimensional", "4"),
    case("too-many-slices", lambda m: A(m)[:, :, :, :], "3-dimensional", "4"),
    case("too-many-with-ellipsis", lambda m: A(m)[0, ..., 0, 0, 0], "3-dimensional", "4"),
    case("too-many-advanced", lambda m: A(m)[[0], 0, 0, 0], "3-dimensional", "4"),
    case("too-many-0d", lambda m: m.asarray(5.0)[0], "0-dimensional", "1"),
    case("too-many-mask", lambda m: A(m)[m.ones((2, 3, 4, 1), dtype=bool)], "3-dimensional", "4"),
    case("float", lambda m: A(m)[1.0], "1.0"),
    case("float-in-tuple", lambda m: A(m)[0, 1.5], "1.5"),
    case("numpy-float", lambda m: A(m)[np.float64(1.0)], "1.0"),
    case("str", lambda m: A(m)["a"], "'a'"),
    case("bytes", lambda m: A(m)[b"xy"], "b'xy'"),
    case("complex", lambda m: A(m)[1j], "complex"),
    case("dict", lambda m: A(m)[{}], "dict"),
    case("object", lambda m: A(m)[object()], "object"),
    case("float-array", lambda m: A(m)[m.asarray([0.0, 1.0])], "integer"),
    case("float-list", lambda m: A(m)[[0.0, 1.0]], "integer"),
    case("two-ellipses", lambda m: A(m)[..., ...], "ellipsis"),
    case("two-ellipses-apart", lambda m: A(m)[..., 0, ...], "ellipsis"),
    case("two-ellipses-advanced", lambda m: A(m)[..., [0], ...], "ellipsis"),
    case("step-0", lambda m: A(m)[::0], "step", "zero"),
    case("step-0-axis1", lambda m: A(m)[:, 1:2:0], "step", "zero"),
    case("slice-float-bound", lambda m: A(m)[0.5:2], "slice indices"),
    case("mask-shape", lambda m: A(m)[m.asarray([True, False, True])], "axis 0", "2", "3"),
    case("mask-shape-list", lambda m: A(m)[[True, False, True]], "axis 0", "2", "3"),
    case("mask-shape-2d", lambda m: A(m)[m.ones((2, 4), dtype=bool)], "axis 1", "3", "4"),
    case("mask-shape-axis1", lambda m: A(m)[:, m.asarray([True, False])], "axis 1", "3", "2"),
    case("unbroadcastable", lambda m: A(m)[m.asarray([0, 1]), m.asarray([0, 1, 2])],
         "(2,)", "(3,)"),
    case("unbroadcastable-lists", lambda m: A(m)[[0, 1], [0, 1, 2]], "(2,)", "(3,)"),
    case("unbroadcastable-3", lambda m: A(m)[[[0], [1]], [0, 1, 2], [[0, 1]]],
         "(2, 1)", "(3,)", "(1, 2)"),
]


@pytest.mark.parametrize("f, needles", INDEX_CASES)
def test_index_errors(f, needles):
    check_error(f, needles)


# ---------------------------------------------------------------------------------------------
# assignment
# ---------------------------------------------------------------------------------------------

def _write_broadcast(m, key, value=5):
    b = m.broadcast_to(m.arange(3), (4, 3))
    b[key] = value


def _fill_broadcast(m):
    m.broadcast_to(m.arange(3), (4, 3)).fill(5)


def _write_broadcast_view(m):
    b = m.broadcast_to(m.arange(3), (4, 3))[1:, ::-1]
    b[0] = 5


SETITEM_CASES = [
    case("shape-mismatch", lambda m: setitem(A(m), 0, m.ones((2, 2))), "(2, 2)", "(3, 4)"),
    case("shape-mismatch-list", lambda m: setitem(A(m), 0, [[1, 2], [3, 4]]), "(2, 2)", "(3, 4)"),
    case("shape-mismatch-column", lambda m: setitem(A(m), (slice(None), 0), m.ones(3)),
         "(3,)", "(2, 4)"),
    case("shape-mismatch-more-dims", lambda m: setitem(A(m), 0, m.ones((2, 3, 4))),
         "(2, 3, 4)", "(3, 4)"),
    case("shape-mismatch-advanced", lambda m: setitem(A(m), [0, 1], m.ones((3, 3, 4))),
         "(3, 3, 4)", "(2, 3, 4)"),
    case("shape-mismatch-mask", lambda m: setitem(A(m), m.ones((2, 3, 4), dtype=bool), m.ones(5)),
         "(5,)", "(24,)"),
    case("ragged-value", lambda m: setitem(A(m), 0, [[1, 2], [3]]), "inhomogeneous"),
    case("oob", lambda m: setitem(A(m), 5, 1), "index 5"),
    case("oob-advanced", lambda m: setitem(A(m), [5], 1), "index 5"),
    case("oob-advanced-axis1", lambda m: setitem(A(m), (0, [0, -4]), 1), "index -4", "axis 1"),
    case("float-key", lambda m: setitem(A(m), 1.0, 1), "1.0"),
    case("two-ellipses", lambda m: setitem(A(m), (Ellipsis, Ellipsis), 1), "ellipsis"),
    case("none-value", lambda m: setitem(A(m), 0, None), "NoneType"),
    case("object-value", lambda m: setitem(A(m), 0, object()), "object"),
    case("broadcast_to-int", lambda m: _write_broadcast(m, (0, 0)), "read-only"),
    case("broadcast_to-ellipsis", lambda m: _write_broadcast(m, Ellipsis), "read-only"),
    case("broadcast_to-advanced", lambda m: _write_broadcast(m, [0]), "read-only"),
    case("broadcast_to-mask", lambda m: _write_broadcast(m, m.ones((4, 3), dtype=bool)),
         "read-only"),
    case("broadcast_to-fill", _fill_broadcast, "read-only"),
    case("broadcast_to-view", _write_broadcast_view, "read-only"),
    case("broadcast_to-shape", lambda m: m.broadcast_to(m.arange(3), (4, 2)), "(3,)", "(4, 2)"),
    case("broadcast_to-fewer-dims", lambda m: m.broadcast_to(m.ones((2, 3)), (3,)),
         "(2, 3)", "(3,)"),
]


@pytest.mark.parametrize("f, needles", SETITEM_CASES)
def test_setitem_errors(f, needles):
    check_error(f, needles)


def test_failed_assignment_leaves_the_array_unchanged():
    # bounds are checked before any element is written, as in NumPy
    for m in (np, ca):
        a = A(m)
        with pytest.raises(IndexError):
            a[[0, 1, 7]] = 99
        assert a.tolist() == np.arange(24).reshape(2, 3, 4).tolist()


def test_read_only_error_keeps_data():
    base = ca.arange(3)
    b = ca.broadcast_to(base, (4, 3))
    assert not b.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        b[...] = 7
    assert base.tolist() == [0, 1, 2]


# ---------------------------------------------------------------------------------------------
# dtypes, nested sequences, integer overflow
# ---------------------------------------------------------------------------------------------

DTYPE_CASES = [
    case("zeros-unknown", lambda m: m.zeros(3, dtype="foo"), "foo"),
    case("zeros-typo", lambda m: m.zeros(3, dtype="flaot32"), "flaot32"),
    case("ones-empty-name", lambda m: m.ones(3, dtype=""), "''"),
    case("asarray-unknown", lambda m: m.asarray([1, 2], dtype="xyz"), "xyz"),
    case("array-unknown", lambda m: m.array([1, 2], dtype="int33"), "int33"),
    case("astype-unknown", lambda m: m.zeros(3).astype("bogus"), "bogus"),
    case("dtype-unknown", lambda m: m.dtype("float31"), "float31"),
    case("arange-unknown", lambda m: m.arange(3, dtype="nope"), "nope"),
    case("full-unknown", lambda m: m.full(2, 1, dtype="what"), "what"),
    case("eye-unknown", lambda m: m.eye(2, dtype="wat"), "wat"),
    case("dtype-int", lambda m: m.zeros(3, dtype=3), "3"),
    case("dtype-object", lambda m: m.zeros(3, dtype=object()), "object"),
    case("promote-unknown", lambda m: m.promote_types("float32", "foo"), "foo"),
]


@pytest.mark.parametrize("f, needles", DTYPE_CASES)
def test_dtype_errors(f, needles):
    check_error(f, needles)


@pytest.mark.parametrize("name", ["object", "U3", "S3", "datetime64[s]"])
def test_numpy_dtypes_carray_does_not_have(name):
    # NumPy has these; carray does not and says so (TypeError, as NumPy's for an unknown
    # name), naming the dtype asked for and the ones it has.
    np.dtype(name)
    for f in (lambda: ca.zeros(3, dtype=name), lambda: ca.dtype(name),
              lambda: ca.dtype(np.dtype(name)), lambda: ca.ones(2).astype(name)):
        with pytest.raises(TypeError) as info:
            f()
        msg = str(info.value)
        assert name.split("[")[0] in msg or repr(np.dtype(name)) in msg, msg
        assert "float32" in msg and "int64" in msg, msg


RAGGED_CASES = [
    case("ragged-rows", lambda m: m.array([[1, 2], [3]]), "inhomogeneous", "(2,)"),
    case("ragged-scalar-then-list", lambda m: m.array([1, [2, 3]]), "inhomogeneous", "(2,)"),
    case("ragged-list-then-scalar", lambda m: m.array([[1, 2], 3]), "inhomogeneous", "(2,)"),
    case("ragged-deep", lambda m: m.array([[[1], [2]], [[3], 4]]), "inhomogeneous", "(2, 2)"),
    case("ragged-empty-row", lambda m: m.asarray([[], [1]]), "inhomogeneous", "(2,)"),
    case("ragged-tuples", lambda m: m.asarray(((1.0, 2.0), (3.0,))), "inhomogeneous", "(2,)"),
    case("ragged-with-dtype", lambda m: m.array([[1], [2, 3]], dtype=m.float64), "inhomogeneous"),
    case("complex-element", lambda m: m.array([1j, 2j], dtype=m.float64), "complex"),
    case("dict", lambda m: m.asarray({}, dtype=m.float32), "dict"),
]


@pytest.mark.parametrize("f, needles", RAGGED_CASES)
def test_sequence_errors(f, needles):
    check_error(f, needles)


OVERFLOW_CASES = [
    case("array-2**70", lambda m: m.array([2**70], dtype=m.int64), str(2**70), "int64"),
    case("array-2**63", lambda m: m.array([1, 2**63], dtype=m.int64), str(2**63), "int64"),
    case("array-below-int64", lambda m: m.array([-2**63 - 1], dtype=m.int64),
         str(-2**63 - 1), "int64"),
    case("asarray-int32", lambda m: m.asarray(2**31, dtype=m.int32), str(2**31), "int32"),
    case("array-int32-nested", lambda m: m.array([[1], [-2**31 - 1]], dtype=m.int32),
         str(-2**31 - 1), "int32"),
    case("full-int32", lambda m: m.full(3, 2**40, dtype=m.int32), str(2**40), "int32"),
    case("setitem-int32", lambda m: setitem(A(m, dtype="int32"), 0, 2**40), str(2**40), "int32"),
    case("setitem-int32-element", lambda m: setitem(A(m, dtype="int32"), (0, 0, 0), -2**40),
         str(-2**40), "int32"),
    case("setitem-int32-ellipsis", lambda m: setitem(A(m, dtype="int32"), Ellipsis, 2**31),
         str(2**31), "int32"),
    case("setitem-int32-list", lambda m: setitem(A(m, dtype="int32"), (0, 0), [1, 2, 3, 2**40]),
         str(2**40), "int32"),
    case("setitem-int32-advanced", lambda m: setitem(A(m, dtype="int32"), [0], 2**40),
         str(2**40), "int32"),
    case("setitem-int32-advanced-list",
         lambda m: setitem(A(m, dtype="int32"), ([0, 1], 0, 0), [1, 2**40]), str(2**40), "int32"),
    case("setitem-int64", lambda m: setitem(A(m), 0, 2**70), str(2**70), "int64"),
    case("fill-int32", lambda m: A(m, dtype="int32").fill(2**40), str(2**40), "int32"),
]


@pytest.mark.parametrize("f, needles", OVERFLOW_CASES)
def test_int_overflow(f, needles):
    check_error(f, needles)


def test_int_overflow_without_dtype():
    # NumPy falls back to an object array for ints beyond int64; carray has no object dtype, so
    # it raises the OverflowError NumPy raises for dtype=int64, naming the value.
    assert np.array([2**70]).dtype == object
    for obj, big in (([2**70], 2**70), (2**70, 2**70), ([[1, 2], [3, 2**64]], 2**64),
                     ([-2**63 - 1], -2**63 - 1), ((True, 2**63), 2**63)):
        with pytest.raises(OverflowError, match=str(big)):
            ca.array(obj)
        with pytest.raises(OverflowError):
            np.array(obj, dtype=np.int64)
    # ints that fit are kept exactly
    assert ca.array([2**63 - 1, -2**63]).tolist() == [2**63 - 1, -2**63]


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_float_to_int_conversion_of_nan_and_inf(value):
    # ValueError for nan, OverflowError for infinities (as int() and NumPy)
    check_error(lambda m: setitem(A(m), 0, value), [str(value)])
    check_error(lambda m: setitem(A(m, dtype="int32"), (0, 0, [1]), value), [str(value)])
    check_error(lambda m: m.array([1.0, value], dtype=m.int64), [str(value)])
    # (np.full(2, nan, dtype=int32) casts through a float array and writes garbage with a
    # RuntimeWarning; carray's full assigns the Python float and raises as above)
    with pytest.raises((ValueError, OverflowError)):
        ca.full(2, value, dtype="int32")


# ---------------------------------------------------------------------------------------------
# Python protocols: float(), int(), bool(), len(), iter(), item(), __index__
# ---------------------------------------------------------------------------------------------

PROTOCOL_CASES = [
    case("float-1d", lambda m: float(m.ones(3)), "(3,)"),
    case("float-1-element-1d", lambda m: float(m.ones(1)), "(1,)"),
    case("float-2d", lambda m: float(m.ones((2, 2))), "(2, 2)"),
    case("int-2d", lambda m: int(m.ones((2, 2))), "(2, 2)"),
    case("int-1-element", lambda m: int(m.ones((1, 1), dtype=m.int64)), "(1, 1)"),
    case("int-empty", lambda m: int(m.ones(0)), "(0,)"),
    case("bool-empty", lambda m: bool(m.ones(0)), "empty"),
    case("bool-empty-2d", lambda m: bool(m.ones((3, 0))), "empty"),
    case("bool-two", lambda m: bool(m.ones(2)), "more than one element"),
    case("bool-2d", lambda m: bool(m.ones((2, 2))), "more than one element"),
    case("if-array", lambda m: 1 if m.zeros(3) else 0, "more than one element"),
    case("len-0d", lambda m: len(m.asarray(1.0)), "unsized"),
    case("iter-0d", lambda m: iter(m.asarray(1.0)), "0-d"),
    case("for-0d", lambda m: [x for x in m.asarray(1)], "0-d"),
    case("list-0d", lambda m: list(m.asarray(True)), "0-d"),
    case("item-size-3", lambda m: m.ones(3).item(), "size 1", "3"),
    case("item-size-0", lambda m: m.ones((2, 0)).item(), "size 1", "0"),
    case("item-flat-oob", lambda m: m.ones(3).item(5), "5"),
    case("item-flat-oob-negative", lambda m: m.ones((2, 2)).item(-5), "-5"),
    case("item-nd-oob", lambda m: m.ones((2, 2)).item(0, 5), "5", "axis 1"),
    case("item-wrong-count", lambda m: m.ones((2, 2)).item(0, 0, 0), "2", "3"),
    case("index-float", lambda m: operator.index(m.asarray(1.5)), "integer"),
    case("index-1d", lambda m: operator.index(m.asarray([1])), "integer"),
    case("index-bool", lambda m: operator.index(m.asarray(True)), "integer"),
    case("range-float", lambda m: range(m.asarray(2.0)), "integer"),
]


@pytest.mark.parametrize("f, needles", PROTOCOL_CASES)
def test_protocol_errors(f, needles):
    check_error(f, needles)


def test_protocols_on_valid_input_match_numpy():
    for m_value in (0, 1, -3):
        for dt in ("int32", "int64"):
            n, a = np.asarray(m_value, dtype=dt), ca.asarray(m_value, dtype=dt)
            assert operator.index(a) == operator.index(n) and range(5)[a] == range(5)[n]
    assert len(ca.ones((4, 2))) == len(np.ones((4, 2))) == 4
    assert [x.tolist() for x in ca.arange(6).reshape(3, 2)] == \
        [x.tolist() for x in np.arange(6).reshape(3, 2)]
    assert bool(ca.asarray([0.0])) is bool(np.asarray([0.0])) is False
    assert bool(ca.asarray([[3]])) is bool(np.asarray([[3]])) is True


# ---------------------------------------------------------------------------------------------
# factories
# ---------------------------------------------------------------------------------------------

FACTORY_CASES = [
    case("arange-step-0", lambda m: m.arange(0, 5, 0), "step"),
    case("arange-step-0.0", lambda m: m.arange(0.0, 5.0, 0.0), "step"),
    case("arange-step-0-negative", lambda m: m.arange(5, 0, 0), "step"),
    case("arange-str", lambda m: m.arange("a"), "str"),
    case("arange-None", lambda m: m.arange(None), "NoneType"),
    case("arange-nan", lambda m: m.arange(0, float("nan")), "nan"),
    case("arange-inf", lambda m: m.arange(0, float("inf")), "inf"),
    case("arange-too-long", lambda m: m.arange(0, 1e30, 1e-30), "arange"),
    case("arange-bool-long", lambda m: m.arange(0, 3, dtype=m.bool_), "length"),
    case("linspace-negative", lambda m: m.linspace(0, 1, -1), "-1"),
    case("linspace-negative-keyword", lambda m: m.linspace(0, 1, num=-5), "-5"),
    case("linspace-float-num", lambda m: m.linspace(0, 1, 2.5), "2.5"),
    case("linspace-str", lambda m: m.linspace("a", 1, 2), "str"),
    case("eye-negative", lambda m: m.eye(-1), "-1"),
    case("eye-negative-M", lambda m: m.eye(2, -3), "-3"),
    case("eye-float", lambda m: m.eye(2.5), "2.5"),
    case("eye-float-M", lambda m: m.eye(2, 1.5), "1.5"),
    case("identity-negative", lambda m: m.identity(-2), "-2"),
    case("full-ragged-fill", lambda m: m.full(3, [1, 2]), "(2,)", "(3,)"),
    case("full_like-shape", lambda m: m.full_like(m.ones(3), m.ones(2)), "(2,)", "(3,)"),
    case("zeros_like-negative-shape", lambda m: m.zeros_like(m.ones(3), shape=(-1, 2)), "-1"),
]


@pytest.mark.parametrize("f, needles", FACTORY_CASES)
def test_factory_errors(f, needles):
    check_error(f, needles)


DEVICE_CASES = [
    case("zeros", lambda m, d: m.zeros(3, device=d)),
    case("ones", lambda m, d: m.ones((2, 2), device=d)),
    case("empty", lambda m, d: m.empty(3, device=d)),
    case("full", lambda m, d: m.full(3, 1.0, device=d)),
    case("arange", lambda m, d: m.arange(3, device=d)),
    case("linspace", lambda m, d: m.linspace(0, 1, 3, device=d)),
    case("eye", lambda m, d: m.eye(3, device=d)),
    case("asarray", lambda m, d: m.asarray([1, 2], device=d)),
    case("zeros_like", lambda m, d: m.zeros_like(m.ones(2), device=d)),
    case("full_like", lambda m, d: m.full_like(m.ones(2), 3, device=d)),
]


@pytest.mark.parametrize("f", [p.values[0] for p in DEVICE_CASES],
                         ids=[p.id for p in DEVICE_CASES])
@pytest.mark.parametrize("device", ["tpu", "cuda:0", "xpu", "CPU0"])
def test_unknown_device(f, device):
    check_error(lambda m: f(m, device), [repr(device), "cpu"])


def test_device_cpu_and_to():
    assert ca.zeros(2, device="cpu").device == "cpu"
    a = ca.ones(3)
    assert a.to("cpu") is a
    with pytest.raises(ValueError, match="'tpu'"):
        a.to("tpu")
    with pytest.raises(ValueError, match="3"):
        ca.zeros(2, device=3)
    # np.array has no device= (np.asarray has); carray.array takes it as every factory does
    with pytest.raises(ValueError, match="'tpu'"):
        ca.array([1, 2], device="tpu")
    assert ca.array([1, 2], device="cpu").device == "cpu"


@pytest.mark.parametrize("args", [(), ((2, 3),), ([1, 2],), ("float32",)])
def test_array_type_is_not_a_constructor(args):
    # np.ndarray(shape) makes an array; carray.Array refuses (its layout fields are private)
    # with a TypeError that points at the factories.
    with pytest.raises(TypeError, match="carray.array"):
        ca.Array(*args)
    with pytest.raises(TypeError, match="asarray"):
        ca.ndarray(*args)
    with pytest.raises(TypeError, match="carray.float32"):
        ca.DType(*args)


# ---------------------------------------------------------------------------------------------
# nothing crashes the interpreter
# ---------------------------------------------------------------------------------------------

FUZZ_SCRIPT = r'''
import sys, random, faulthandler, pickle, copy, operator, json
faulthandler.enable()
faulthandler.dump_traceback_later(90, exit=True)     # a hang shows where it is
import numpy as np
import carray as ca

seed, iterations = int(sys.argv[1]), int(sys.argv[2])
r = random.Random(seed)
# big enough that any allocation of that many elements fails at once (nothing like 2**31:
# arange(-2**31, 5) would allocate and fill 16 GB)
HUGE = [2**48, -2**48, 2**62, 2**63, 2**64, -2**63, -2**63 - 1, 2**70, -2**70]

def garbage_int():
    return r.choice([r.randint(-6, 6), r.randint(-6, 6), r.choice(HUGE)])

def garbage_scalar():
    return r.choice([garbage_int, lambda: r.choice([True, False]),
                     lambda: r.choice([0.5, -1.0, float("nan"), float("inf"), -0.0, 1e308]),
                     lambda: r.choice(["a", "", b"x", bytearray(b"yz"), 1j, None, object(), {},
                                       set(), Ellipsis, slice(None), np.float64(1.5),
                                       np.int32(-2), np.bool_(True), np.uint8(200),
                                       np.float16(0.5)])])()

def small_array():
    shape = tuple(r.randint(0, 3) for _ in range(r.randint(0, 3)))
    dt = r.choice(["bool", "int32", "int64", "float32", "float64"])
    n = (np.random.default_rng(r.randint(0, 1000)).standard_normal(shape) * 4).astype(dt)
    kind = r.randint(0, 4)
    if kind == 0:
        return n
    a = ca.asarray(n)
    if kind == 1 and a.ndim:
        return a[::-1]
    if kind == 2 and a.ndim:
        return a.T
    if kind == 3:
        return ca.broadcast_to(a, (2,) + a.shape)
    return a

def garbage(depth=0):
    k = r.randint(0, 9)
    if k <= 3 or depth > 2:
        return garbage_scalar()
    if k <= 5:
        return small_array()
    if k == 6:
        return slice(*(r.choice([None, garbage_int(), garbage_scalar()]) for _ in range(3)))
    seq = [garbage(depth + 1) for _ in range(r.randint(0, 4))]
    return seq if k <= 7 else tuple(seq)

def garbage_shape():
    if r.random() < 0.2:
        return garbage()
    return tuple(r.choice([r.randint(0, 4), r.randint(0, 4), garbage_int(), garbage_scalar()])
                 for _ in range(r.randint(0, 4)))

def garbage_dtype():
    return r.choice([None, "float32", "int32", "bool", "int64", "float64", "float16", "foo", 3,
                     float, int, bool, np.uint8, np.float64, object(), ""])

class FakeDLPack:
    """An exporter whose __dlpack__ and __dlpack_device__ return garbage."""
    def __init__(self, capsule, device):
        self.capsule, self.device = capsule, device
    def __dlpack__(self, **kwargs):
        return self.capsule if r.random() < 0.7 else target().__dlpack__(**kwargs)
    def __dlpack_device__(self):
        return self.device if r.random() < 0.7 else (1, 0)

def target():
    a = small_array()
    return ca.asarray(a) if isinstance(a, np.ndarray) else a

OPS = {
    "getitem": lambda: target()[garbage()],
    "getitem_tuple": lambda: target()[tuple(garbage() for _ in range(r.randint(0, 5)))],
    "setitem": lambda: target().__setitem__(garbage(), garbage()),
    "setitem_tuple": lambda: target().__setitem__(tuple(garbage() for _ in range(r.randint(0, 4))),
                                                   garbage()),
    "reshape": lambda: target().reshape(garbage_shape()),
    "reshape_args": lambda: (lambda s: target().reshape(*s) if isinstance(s, tuple)
                             else target().reshape(s))(garbage_shape()),
    "transpose": lambda: target().transpose(*[garbage_int() for _ in range(r.randint(0, 4))]),
    "transpose_garbage": lambda: ca.transpose(target(), garbage()),
    "swapaxes": lambda: target().swapaxes(garbage_int(), garbage()),
    "moveaxis": lambda: ca.moveaxis(target(), garbage(), garbage()),
    "expand_dims": lambda: ca.expand_dims(target(), garbage()),
    "squeeze": lambda: ca.squeeze(target(), r.choice([None, garbage()])),
    "broadcast_to": lambda: ca.broadcast_to(target(), garbage_shape()),
    "asarray": lambda: ca.asarray(garbage(), dtype=garbage_dtype()),
    "array_copy": lambda: ca.array(garbage(), copy=r.choice([None, True, False])),
    "full": lambda: ca.full(garbage_shape(), garbage(), dtype=garbage_dtype()),
    "zeros": lambda: ca.zeros(garbage_shape(), dtype=garbage_dtype()),
    "empty_like": lambda: ca.empty_like(garbage(), shape=r.choice([None, garbage_shape()])),
    "arange": lambda: ca.arange(*[garbage_scalar() for _ in range(r.randint(1, 3))],
                                dtype=garbage_dtype()),
    "linspace": lambda: ca.linspace(garbage_scalar(), garbage_scalar(), garbage_scalar()),
    "eye": lambda: ca.eye(garbage_scalar(), r.choice([None, garbage_scalar()]),
                          k=r.choice([0, garbage_scalar()])),
    "astype": lambda: target().astype(garbage_dtype()),
    "item": lambda: target().item(*[garbage() for _ in range(r.randint(0, 3))]),
    "tolist": lambda: target().tolist(),
    "scalar_protocols": lambda: r.choice([float, int, bool, len, iter, operator.index])(target()),
    "memoryview": lambda: memoryview(target()).tolist(),
    "numpy": lambda: np.asarray(target()).sum(),
    "dlpack": lambda: np.from_dlpack(target()).sum(),
    "from_dlpack": lambda: ca.from_dlpack(garbage()),
    "pickle": lambda: pickle.loads(pickle.dumps(target())).tolist(),
    "copy": lambda: copy.deepcopy(target()).tolist(),
    "promote": lambda: ca.result_type(*[r.choice([garbage(), garbage_dtype()])
                                        for _ in range(r.randint(0, 3))]),
    "ascontiguous": lambda: ca.ascontiguousarray(garbage(), dtype=garbage_dtype()),
    "repr": lambda: repr(target()),
    "view": lambda: (lambda s: target().view(*s) if isinstance(s, tuple)
                     else target().view(s))(garbage_shape()),
    "expand": lambda: target().expand(garbage_shape()),
    "permute": lambda: target().permute(garbage()),
    "fill": lambda: target().fill(garbage()),
    "copy_order": lambda: target().copy(order=garbage_scalar()),
    "ravel_flatten": lambda: (target().ravel(), target().flatten(), target().mT),
    "broadcast_arrays": lambda: ca.broadcast_arrays(*[garbage() for _ in range(r.randint(0, 3))]),
    "broadcast_shapes": lambda: ca.broadcast_shapes(*[garbage_shape() for _ in range(3)]),
    "to_device": lambda: target().to(garbage_scalar()),
    "dlpack_args": lambda: target().__dlpack__(max_version=r.choice([None, (1, 0), garbage()]),
                                               dl_device=r.choice([None, (1, 0), garbage()]),
                                               stream=r.choice([None, None, garbage()]),
                                               copy=r.choice([None, True, garbage()])),
    "fake_dlpack": lambda: ca.from_dlpack(FakeDLPack(garbage(), garbage())),
    "unpickle_tampered": lambda: ca._array._reconstruct(
        garbage_shape(), garbage_dtype(), bytes(r.randint(0, 64))),
}

stats = {name: [0, 0] for name in OPS}
bad = []
names = sorted(OPS)
for it in range(iterations):
    name = names[it % len(names)]
    try:
        OPS[name]()
        stats[name][0] += 1
    except SystemError as e:            # a C-level error escaping as an exception is a bug too
        bad.append(f"{name}: SystemError {e}")
    except MemoryError:
        stats[name][1] += 1
    except Exception:
        stats[name][1] += 1
print(json.dumps({"stats": stats, "bad": bad}))
'''


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_garbage_never_crashes(tmp_path, seed):
    script = tmp_path / "fuzz.py"
    script.write_text(FUZZ_SCRIPT)
    proc = subprocess.run([sys.executable, str(script), str(seed), "6000"], capture_output=True,
                          text=True, timeout=120, env=fresh_env(), cwd=str(tmp_path))
    assert proc.returncode == 0, \
        f"the interpreter died (return code {proc.returncode}):\n{proc.stderr[-3000:]}"
    import json
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["bad"] == []
    # every operation was exercised, and the garbage was bad enough to be refused sometimes
    for name, (ok, refused) in out["stats"].items():
        assert ok + refused > 0, name
    assert sum(ok for ok, _ in out["stats"].values()) > 500
    assert sum(refused for _, refused in out["stats"].values()) > 500


# ---------------------------------------------------------------------------------------------
# shapes whose size (times the itemsize) overflows: ValueError where they are made, as NumPy
# ---------------------------------------------------------------------------------------------

HUGE = 2**62
OVERFLOWING_SHAPES = {
    "broadcast_to": lambda x: ca.broadcast_to(x, (HUGE, HUGE)),
    "broadcast_to_bytes": lambda x: ca.broadcast_to(x, (2**31, 2**31, 4)),  # size fits, bytes not
    "expand": lambda x: x.reshape(1, 1, 1).expand(2**31, 2**31, 4),
    "expand_wraps_to_0": lambda x: x.expand(2**32, 2**32),
    "broadcast_arrays": lambda x: ca.broadcast_arrays(ca.broadcast_to(x, (2**40, 1)),
                                                     ca.broadcast_to(x, (1, 2**40))),
    "add_broadcast": lambda x: ca.broadcast_to(x, (2**40, 1)) + ca.broadcast_to(x, (1, 2**40)),
    "reshape_of_empty": lambda x: x[:0].reshape(2**32, 2**32),
    "reshape_of_empty_infer": lambda x: x[:0].reshape(HUGE, HUGE, -1),
    "expand_of_view": lambda x: x.reshape(1, 1).expand(2**40, 2**20)[None].expand(2**10, -1, -1),
    "empty": lambda x: ca.empty((HUGE, HUGE), device=x.device),
}


@pytest.mark.parametrize("case", sorted(OVERFLOWING_SHAPES))
def test_overflowing_shape_raises(device, case):
    x = ca.ones(1).to(device)
    with pytest.raises(ValueError, match="too big|too large|cannot reshape") as e:
        OVERFLOWING_SHAPES[case](x)
    assert "2147483648" in str(e.value) or "4294967296" in str(e.value) or \
        "4611686018427387904" in str(e.value) or "1099511627776" in str(e.value)


def test_overflowing_concatenation_raises():
    # each part fits (2**62 one-byte items), their sum does not: must not wrap to a negative
    # or zero size
    part = ca.broadcast_to(ca.ones(1, dtype="bool"), (2**62,))
    for n in (2, 4):
        with pytest.raises((ValueError, MemoryError)):
            ca.concatenate([part] * n)


def test_large_but_valid_broadcast_still_works(device):
    x = ca.ones(1, dtype="bool").to(device)
    assert ca.broadcast_to(x, (2**62,)).shape == (2**62,)       # 2**62 bytes fit
    assert ca.broadcast_to(ca.ones(1).to(device), (2**30, 2**30)).size == 2**60
    assert ca.empty((0, 5)).shape == (0, 5)


SEGFAULTED_SCRIPT = r'''
import sys
import carray as ca
x = ca.ones(1).to(sys.argv[1])
ops = {"reshape": lambda a: a.reshape(-1), "ravel": lambda a: a.ravel(),
       "argmax": lambda a: a.argmax(), "argmin": lambda a: a.argmin(),
       "cumsum": lambda a: ca.cumsum(a.reshape(-1)), "sum": lambda a: a.sum(),
       "dlpack": lambda a: a.__dlpack__()}
for make in (lambda: ca.broadcast_to(x, (2**62, 2**62)), lambda: x.expand(2**31, 2**31, 4)):
    for name, op in ops.items():
        try:
            a = make()
        except ValueError:
            continue
        print("made a", a.shape, "array of size", a.size, "then", name, flush=True)
        op(a)
        sys.exit(1)
print("OK")
'''


def test_overflowing_shapes_in_a_subprocess(device, tmp_path):
    """The ops that used to crash on such arrays, where a crash cannot take pytest with it."""
    script = tmp_path / "huge.py"
    script.write_text(SEGFAULTED_SCRIPT)
    proc = subprocess.run([sys.executable, str(script), device], capture_output=True, text=True,
                          timeout=120, env=fresh_env(), cwd=str(tmp_path))
    assert proc.returncode == 0 and proc.stdout.strip() == "OK", \
        f"return code {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"


class _HostileDLPack:
    """A DLPack producer that lies about its shape: NumPy's legacy capsule of `arr` with the
    DLTensor's ndim and shape overwritten (DLTensor: data, device, int32 ndim, dtype, shape*)."""

    def __init__(self, arr, shape=None, ndim=None):
        self.arr, self.shape, self.ndim = arr, shape, ndim

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, **kwargs):
        import ctypes
        cap = self.arr.__dlpack__()
        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        t = get(cap, b"dltensor")
        if self.shape is not None:
            dims = (ctypes.c_int64 * len(self.shape)).from_address(
                ctypes.c_void_p.from_address(t + 24).value)
            dims[:] = self.shape
        if self.ndim is not None:
            ctypes.c_int32.from_address(t + 16).value = self.ndim
        return cap


@pytest.mark.parametrize("shape, ndim", [((-3,), None), ((2, -1), None), ((2**62, 2**62), None),
                                         ((2**61,), None), ((0, -1), None), ((3,), 65),
                                         ((3,), -1)], ids=str)
def test_from_dlpack_rejects_a_hostile_shape(shape, ndim):
    arr = np.zeros((1,) * len(shape))
    with pytest.raises((BufferError, ValueError), match="DLPack"):
        ca.from_dlpack(_HostileDLPack(arr, shape, ndim))
    assert arr.sum() == 0          # the producer's array is untouched and alive


def test_from_dlpack_of_an_honest_producer_through_the_same_path():
    a = ca.from_dlpack(_HostileDLPack(np.arange(6.0).reshape(2, 3)))
    assert a.shape == (2, 3) and a.tolist() == [[0, 1, 2], [3, 4, 5]]


def test_read_only_out_is_refused_before_anything_else():
    # NumPy checks out= for writeability first: before dtypes, shapes and loop types (found by
    # the op-program fuzzer: bitwise_or of floats into a broadcast view raised TypeError here)
    ro_f = ca.broadcast_to(ca.ones(3, dtype="float64"), (3,))
    ro_i = ca.broadcast_to(ca.arange(3), (3,))
    nro_f, nro_i = np.broadcast_to(np.ones(3), (3,)), np.broadcast_to(np.arange(3), (3,))
    cases = [
        (lambda m, a, b: m.add(m.ones(3), 1.5, out=b)),
        (lambda m, a, b: m.add(m.ones(4), 1.5, out=b)),
        (lambda m, a, b: m.negative(m.ones(3), out=b)),
        (lambda m, a, b: m.bitwise_or(m.ones(3), 1, out=a)),
        (lambda m, a, b: m.invert(m.ones(3), out=(a,))),
        (lambda m, a, b: a.__ior__(a)),
    ]
    for f in cases:
        assert_raises_like(lambda: f(ca, ro_f, ro_i), lambda: f(np, nro_f, nro_i))

"""Shared cases for the elementwise-op and reduction tests (NumPy is the oracle).

- `operand(dtype, shape, ...)`: a hypothesis strategy of (carray array, NumPy array) pairs of
  `shape` with equal contents, as a contiguous array or as a view: transposed, sliced with steps of
  either sign, broadcast (stride 0) by broadcast_to, or a slice of a transpose.
- `broadcast_shapes_pair()`: random shapes that broadcast together, and their broadcast shape.
- `carray_binary_dtype`, `carray_unary_dtype`: carray's result dtypes, i.e. NumPy 2's with the
  deliberate carray differences listed in DESIGN.md (default float float32, ...).
- `check_values(r, ref, ...)`: a carray result against a NumPy reference (exact or with rtol).

Operands are built on the `device` given (the conftest fixture); results are read back to the
host for the comparison, and check_values(..., device=) checks that they stayed there.
"""

import numpy as np
from hypothesis import strategies as st

import carray as ca
from carray.ops import _optable

from conftest import random_values, seeds, to_numpy

F32_RTOL, F32_ATOL = 1e-5, 1e-6
F64_RTOL, F64_ATOL = 1e-12, 1e-300


def _make_base(dtype, shape, seed, special, fix, device):
    n = random_values(dtype, shape, seed, special)
    if fix is not None:
        with np.errstate(all="ignore"):
            n = np.array(fix(n), dtype=dtype)      # a new C-contiguous array of n's shape
    assert n.shape == tuple(shape)
    a = ca.array(n)
    return (a if device == "cpu" else a.to(device)), n


def _slices_for(draw, shape):
    """(base shape, key): base[key] has `shape`; steps of either sign, random offsets."""
    base, key = [], []
    for n in shape:
        s = draw(st.sampled_from([1, 2, 3, -1, -2, -3]))
        extra = draw(st.integers(0, 2))
        length = n * abs(s) + extra
        off = draw(st.integers(0, extra))
        if n == 0:
            key.append(slice(off, off, s if s > 0 else -s))
        elif s > 0:
            key.append(slice(off, off + (n - 1) * s + 1, s))
        else:
            start = length - 1 - off
            stop = start + (n - 1) * s - 1
            key.append(slice(start, stop if stop >= 0 else None, s))
        base.append(length)
    return tuple(base), tuple(key)


VIEW_KINDS = ("contiguous", "transposed", "sliced", "broadcast", "sliced_transposed")


@st.composite
def operand(draw, dtype, shape, special=False, fix=None, kinds=VIEW_KINDS, device="cpu"):
    """(carray array on `device`, NumPy array) of `dtype` and `shape`, contiguous or a view of
    some kind.

    `fix`, if given, maps the random NumPy base values before they are copied into carray (to keep
    values in an op's domain). Values equal in both arrays; the NumPy array is the same view."""
    seed = draw(seeds)
    shape = tuple(shape)
    nd = len(shape)
    kind = draw(st.sampled_from(kinds))
    if kind == "contiguous":
        return _make_base(dtype, shape, seed, special, fix, device)
    if kind == "transposed":
        perm = draw(st.permutations(range(nd)))
        base = [0] * nd
        for i, p in enumerate(perm):
            base[p] = shape[i]
        a, n = _make_base(dtype, tuple(base), seed, special, fix, device)
        return a.transpose(perm), n.transpose(perm)
    if kind == "sliced":
        base, key = _slices_for(draw, shape)
        a, n = _make_base(dtype, base, seed, special, fix, device)
        return a[key], n[key + (Ellipsis,)]       # (NumPy: a 0-d view, not a scalar)
    if kind == "sliced_transposed":
        perm = draw(st.permutations(range(nd)))
        tshape = [0] * nd
        for i, p in enumerate(perm):
            tshape[p] = shape[i]
        base, key = _slices_for(draw, tshape)
        a, n = _make_base(dtype, base, seed, special, fix, device)
        return a[key].transpose(perm), n[key + (Ellipsis,)].transpose(perm)
    # broadcast: a smaller source (leading dims dropped, some dims 1) broadcast to `shape`
    drop = draw(st.integers(0, nd))
    src = [1 if draw(st.booleans()) else s for s in shape[drop:]]
    a, n = _make_base(dtype, tuple(src), seed, special, fix, device)
    return ca.broadcast_to(a, shape), np.broadcast_to(n, shape)


def small_shapes(min_dims=0, max_dims=5):
    """Shapes of 0..5 dims (zero-size dims included), at most a few hundred elements."""
    @st.composite
    def _shapes(draw):
        nd = draw(st.integers(min_dims, max_dims))
        side = 5 if nd <= 3 else (4 if nd == 4 else 3)
        return tuple(draw(st.integers(0, side)) for _ in range(nd))
    return _shapes()


@st.composite
def broadcast_shapes_n(draw, k, max_dims=5):
    """k shapes that broadcast together (each drops some leading dims of a random result shape
    and has some dims set to 1), and their broadcast shape."""
    out = draw(small_shapes(0, max_dims))
    res = []
    for _ in range(k):
        drop = draw(st.integers(0, len(out)))
        res.append(tuple(1 if draw(st.integers(0, 2)) == 0 else s for s in out[drop:]))
    return tuple(res) + (np.broadcast_shapes(*res),)


def broadcast_shapes_pair(max_dims=5):
    """(shape1, shape2, broadcast shape)."""
    return broadcast_shapes_n(2, max_dims)


# -------------------------------------------------------------------------------------------------
# result dtypes: NumPy 2's, with carray's deliberate differences
# -------------------------------------------------------------------------------------------------

# The op lists the tests walk come from the op table (carray.ops._optable), so a new row is tested.

def table_names(kind, keep=lambda op: True, aliases=False):
    """The public names of the op table's rows of `kind` for which keep(row) holds, in enum
    order (with their aliases when asked)."""
    out = []
    for op in _optable.of_kind(kind):
        if keep(op):
            out.extend((op.name,) + (op.aliases if aliases else ()))
    return tuple(out)


_K, _R = _optable.Kind, _optable.DTypeRule
FLOAT_UNARY = table_names(_K.UNARY, lambda op: op.rule == _R.TO_FLOAT)
TRANSCENDENTAL = table_names(_K.UNARY, lambda op: op.heavy)
COMPARISONS = table_names(_K.COMPARE)
PREDICATES = table_names(_K.PREDICATE)
BITWISE_BINARY = table_names(_K.BINARY, lambda op: op.rule == _R.INTEGER)
# the arithmetic checked against NumPy's operators on random values; floor_divide and remainder
# have their own tests (integer division by zero, signs)
ARITH = table_names(_K.BINARY, lambda op: op.rule != _R.INTEGER and op.name not in
                    ("floor_divide", "remainder"))
# every unary op that takes floats (invert is bitwise: its own tests)
FLOAT_INPUT_UNARY = table_names(_K.UNARY, lambda op: op.rule != _R.INTEGER)
REDUCTIONS = table_names(_K.REDUCE)
# binary ops with a float result (integers and bool give float64, as divide) and those among
# them that are not IEEE-exact (compared with a tolerance)
FLOAT_BINARY = table_names(_K.BINARY, lambda op: op.rule == _R.TO_FLOAT)
TRANSCENDENTAL_BINARY = table_names(_K.BINARY, lambda op: op.heavy)


def carray_compute_dtype(x, y):
    """The dtype carray computes x (op) y in: NumPy 2's promotion with Python scalars weak, except
    that a Python float with only bool/int arrays (or none) gives float32, carray's default float
    (NumPy: float64)."""
    dt = np.result_type(x, y)
    has_float_scalar = any(type(v) is float for v in (x, y))
    has_float_array = any(isinstance(v, np.ndarray) and v.dtype.kind == "f" for v in (x, y))
    if has_float_scalar and not has_float_array:
        return np.dtype("float32")
    return dt


def _int_float(x, y):
    """NumPy's float for a float op of int/bool operands: the smallest that every array operand
    casts to safely (with a Python scalar: the one that holds the promoted type)."""
    arrays = [v for v in (x, y) if isinstance(v, np.ndarray)]
    if len(arrays) < 2:
        return np.promote_types(np.result_type(x, y), np.float16)
    return np.result_type(*(np.promote_types(a.dtype, np.float16) for a in arrays))


def differs_from_numpy(name, x, y):
    """True where carray's result dtype deliberately differs from NumPy's for x (op) y."""
    has_float_scalar = any(type(v) is float for v in (x, y))
    has_float_array = any(isinstance(v, np.ndarray) and v.dtype.kind == "f" for v in (x, y))
    return has_float_scalar and not has_float_array and name not in COMPARISONS


def carray_binary_dtype(name, x, y):
    """carray's result dtype for the binary op `name`; None where it raises TypeError (bool
    subtract)."""
    ct = carray_compute_dtype(x, y)
    if name in COMPARISONS:
        return np.dtype("bool")
    if name == "subtract" and ct.kind == "b":
        return None
    if name in FLOAT_BINARY and ct.kind in "biu":
        # NumPy: int / int -> float64 (also with weak Python ints), bool / bool -> float64; the
        # other float ops take the float that holds the int type (float16 for 1-byte types);
        # carray: two Python scalars -> float32 (its default float)
        arrays = [v for v in (x, y) if isinstance(v, np.ndarray)]
        if not arrays:
            return np.dtype("float32")
        if name == "divide":
            return np.dtype("float64")
        return _int_float(x, y)
    if name in ("power", "fmod", "floor_divide", "remainder") and ct.kind == "b":
        return np.dtype("int8")                      # NumPy 2: bool op bool -> int8 for these
    return ct


def carray_unary_dtype(name, dt):
    """carray's result dtype for the unary op `name` of dtype dt; None where it raises TypeError."""
    dt = np.dtype(dt)
    if name in PREDICATES:
        return np.dtype("bool")
    if name in FLOAT_UNARY:
        if dt.kind in "biu":            # NumPy: float16 for 1-byte types, float32 for 2-byte
            return np.dtype("float16" if dt.itemsize == 1 else
                            "float32" if dt.itemsize == 2 else "float64")
        return dt
    if dt.kind == "b":
        if name in ("negative", "sign"):
            return None
        if name in ("square", "reciprocal"):
            return np.dtype("int8")
    return dt


# -------------------------------------------------------------------------------------------------
# value checks
# -------------------------------------------------------------------------------------------------

def check_values(r, ref, dtype, exact=True, rtol=None, atol=None, device=None):
    """The carray result r is an Array of `dtype` equal to the NumPy reference `ref` (exact: NaN in
    the same places, -0.0 == 0.0; else within rtol/atol with infinities and NaN in the same
    places). `ref` may be in a wider dtype (a float64 reference for a float32 result): it is
    rounded to `dtype` first. With `device`, r must be on that device (it is read back)."""
    dtype = np.dtype(dtype)
    assert isinstance(r, ca.Array), f"expected a carray.Array, got {type(r).__name__}"
    if device is not None:
        assert r.device == device, f"result on {r.device!r}, expected {device!r}"
    ref = np.asarray(ref)
    assert r.shape == ref.shape, f"shape {r.shape} != expected {ref.shape}"
    assert r.dtype.name == dtype.name, f"dtype {r.dtype.name} != expected {dtype.name}"
    m = to_numpy(r)
    with np.errstate(all="ignore"):
        ref = ref.astype(dtype)
    if exact or dtype.kind != "f":
        np.testing.assert_array_equal(m, ref, strict=True)
        return
    if rtol is None:
        rtol, atol = (F32_RTOL, F32_ATOL) if dtype == np.float32 else (F64_RTOL, F64_ATOL)
    np.testing.assert_allclose(m, ref, rtol=rtol, atol=atol, equal_nan=True, strict=True)

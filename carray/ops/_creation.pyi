# Stub for the compiled module carray.ops._creation: the factories. Without dtype= they give
# float32 (carray's default float) for float values and for zeros/ones/empty/linspace/eye, int64
# for Python ints, bool for bools.
from typing import Literal, SupportsIndex, overload

from carray.core._array import Array, _ArrayLike, _Device, _Scalar, _ShapeLike
from carray.core._dtype import _DTypeLike

# -- new arrays of a shape ------------------------------------------------------------------
def empty(shape: _ShapeLike, dtype: _DTypeLike | None = None, device: _Device = None) -> Array: ...
def zeros(shape: _ShapeLike, dtype: _DTypeLike | None = None, device: _Device = None) -> Array: ...
def ones(shape: _ShapeLike, dtype: _DTypeLike | None = None, device: _Device = None) -> Array: ...
def full(
    shape: _ShapeLike,
    fill_value: _Scalar | Array,
    dtype: _DTypeLike | None = None,
    device: _Device = None,
) -> Array: ...

# -- the *_like forms (a's shape, dtype and device unless given) ----------------------------
def empty_like(
    a: _ArrayLike,
    dtype: _DTypeLike | None = None,
    shape: _ShapeLike | None = None,
    device: _Device = None,
) -> Array: ...
def zeros_like(
    a: _ArrayLike,
    dtype: _DTypeLike | None = None,
    shape: _ShapeLike | None = None,
    device: _Device = None,
) -> Array: ...
def ones_like(
    a: _ArrayLike,
    dtype: _DTypeLike | None = None,
    shape: _ShapeLike | None = None,
    device: _Device = None,
) -> Array: ...
def full_like(
    a: _ArrayLike,
    fill_value: _Scalar | Array,
    dtype: _DTypeLike | None = None,
    shape: _ShapeLike | None = None,
    device: _Device = None,
) -> Array: ...

# -- ranges ---------------------------------------------------------------------------------
def arange(
    start: _Scalar | Array,
    stop: _Scalar | Array | None = None,
    step: _Scalar | Array | None = None,
    dtype: _DTypeLike | None = None,
    device: _Device = None,
) -> Array: ...
@overload
def linspace(
    start: _Scalar | Array,
    stop: _Scalar | Array,
    num: SupportsIndex = 50,
    endpoint: bool = True,
    retstep: Literal[False] = False,
    dtype: _DTypeLike | None = None,
    device: _Device = None,
) -> Array: ...
@overload
def linspace(
    start: _Scalar | Array,
    stop: _Scalar | Array,
    num: SupportsIndex,
    endpoint: bool,
    retstep: Literal[True],
    dtype: _DTypeLike | None = None,
    device: _Device = None,
) -> tuple[Array, float]: ...
@overload
def linspace(
    start: _Scalar | Array,
    stop: _Scalar | Array,
    num: SupportsIndex = 50,
    endpoint: bool = True,
    *,
    retstep: Literal[True],
    dtype: _DTypeLike | None = None,
    device: _Device = None,
) -> tuple[Array, float]: ...

# -- matrices -------------------------------------------------------------------------------
def eye(
    N: SupportsIndex,
    M: SupportsIndex | None = None,
    k: SupportsIndex = 0,
    dtype: _DTypeLike | None = None,
    device: _Device = None,
) -> Array: ...
def identity(
    n: SupportsIndex, dtype: _DTypeLike | None = None, device: _Device = None
) -> Array: ...

# -- argument parsing -----------------------------------------------------------------------
# x as an int (operator.index); TypeError naming `name` for floats, bools and non-integers
def operator_index(x: SupportsIndex, name: str) -> int: ...

# Stub for the compiled module carray.ops._join: concatenate, stack, split, pad, flip.
from collections.abc import Callable, Sequence
from typing import Any, Literal, SupportsIndex, overload

from typing_extensions import TypeAlias

from carray.core._array import Array, _ArrayLike
from carray.core._dtype import _DTypeLike

_Casting: TypeAlias = Literal["no", "equiv", "safe", "same_kind", "unsafe"]
# an int number of sections, or the indices to split at
_Sections: TypeAlias = SupportsIndex | Sequence[SupportsIndex]

# -- joining --------------------------------------------------------------------------------
def concatenate(
    arrays: Sequence[_ArrayLike],
    axis: SupportsIndex | None = 0,
    out: Array | None = None,
    *,
    dtype: _DTypeLike | None = None,
    casting: _Casting = "same_kind",
) -> Array: ...
def stack(
    arrays: Sequence[_ArrayLike],
    axis: SupportsIndex = 0,
    out: Array | None = None,
    *,
    dtype: _DTypeLike | None = None,
    casting: _Casting = "same_kind",
) -> Array: ...
def vstack(
    tup: Sequence[_ArrayLike], *, dtype: _DTypeLike | None = None, casting: _Casting = "same_kind"
) -> Array: ...
def hstack(
    tup: Sequence[_ArrayLike], *, dtype: _DTypeLike | None = None, casting: _Casting = "same_kind"
) -> Array: ...
def dstack(tup: Sequence[_ArrayLike]) -> Array: ...
def column_stack(tup: Sequence[_ArrayLike]) -> Array: ...

# -- at least n dims: one array for one input, else a tuple ----------------------------------
@overload
def atleast_1d(ary: _ArrayLike, /) -> Array: ...
@overload
def atleast_1d(*arys: _ArrayLike) -> tuple[Array, ...]: ...
@overload
def atleast_2d(ary: _ArrayLike, /) -> Array: ...
@overload
def atleast_2d(*arys: _ArrayLike) -> tuple[Array, ...]: ...
@overload
def atleast_3d(ary: _ArrayLike, /) -> Array: ...
@overload
def atleast_3d(*arys: _ArrayLike) -> tuple[Array, ...]: ...

# -- splitting (views) ----------------------------------------------------------------------
def array_split(
    ary: _ArrayLike, indices_or_sections: _Sections, axis: SupportsIndex = 0
) -> list[Array]: ...
def split(
    ary: _ArrayLike, indices_or_sections: _Sections, axis: SupportsIndex = 0
) -> list[Array]: ...
def hsplit(ary: _ArrayLike, indices_or_sections: _Sections) -> list[Array]: ...
def vsplit(ary: _ArrayLike, indices_or_sections: _Sections) -> list[Array]: ...
def dsplit(ary: _ArrayLike, indices_or_sections: _Sections) -> list[Array]: ...

# -- flipping (views with negative strides) -------------------------------------------------
def flip(m: _ArrayLike, axis: SupportsIndex | Sequence[SupportsIndex] | None = None) -> Array: ...
def fliplr(m: _ArrayLike) -> Array: ...
def flipud(m: _ArrayLike) -> Array: ...

# -- padding --------------------------------------------------------------------------------
# mode: 'constant' (constant_values=), 'edge', 'wrap', 'reflect' / 'symmetric' (reflect_type=),
# 'empty', or a function f(vector, (before, after), axis, kwargs) as NumPy's
def pad(
    array: _ArrayLike,
    pad_width: SupportsIndex | Sequence[Any],
    mode: str | Callable[..., Any] = "constant",
    **kwargs: Any,
) -> Array: ...

# Stub for the compiled module carray.ops._cumulative: cumsum and cumprod.
from typing import SupportsIndex

from carray.core._array import Array, _ArrayLike
from carray.core._dtype import _DTypeLike

def cumsum(
    a: _ArrayLike,
    axis: SupportsIndex | None = None,
    dtype: _DTypeLike | None = None,
    out: Array | None = None,
) -> Array: ...
def cumprod(
    a: _ArrayLike,
    axis: SupportsIndex | None = None,
    dtype: _DTypeLike | None = None,
    out: Array | None = None,
) -> Array: ...

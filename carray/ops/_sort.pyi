# Stub for the compiled module carray.ops._sort: stable sorts, NaNs last.
from typing import SupportsIndex

from carray.core._array import Array, _ArrayLike

# (kind= is accepted and ignored: every sort is stable; order= must be None)
def sort(
    a: _ArrayLike,
    axis: SupportsIndex | None = -1,
    kind: str | None = None,
    order: None = None,
    *,
    stable: bool | None = None,
) -> Array: ...
def argsort(
    a: _ArrayLike,
    axis: SupportsIndex | None = -1,
    kind: str | None = None,
    order: None = None,
    *,
    stable: bool | None = None,
) -> Array: ...

# (sort(a, axis), argsort(a, axis)) from one sort (for autograd's sort and topk)
def sort_with_indices(a: _ArrayLike, axis: SupportsIndex | None = -1) -> tuple[Array, Array]: ...

# Array.sort: in place
def sort_inplace(
    a: Array,
    axis: SupportsIndex | None = -1,
    kind: str | None = None,
    order: None = None,
    stable: bool | None = None,
) -> None: ...

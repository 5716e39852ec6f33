# Stub for the compiled module carray.cpu._random: the Philox4x32-10 generator and its fills
# (carray.random re-exports Generator). size=None draws a Python scalar unless a parameter is an
# array.
from collections.abc import Sequence
from typing import Any, SupportsIndex, overload

from carray.core._array import Array, _ArrayLike, _Device, _ShapeLike
from carray.core._dtype import _DTypeLike

# Philox4x32-10 of one block: 4 counter words and 2 key words -> 4 words (known-answer tests)
def philox4x32_10_block(
    counter: Sequence[int], key: Sequence[int]
) -> tuple[int, int, int, int]: ...

class Generator:
    def __init__(self, seed: SupportsIndex | None = None) -> None: ...
    # the key: seed & 0xFFFFFFFF is key word 0, seed >> 32 key word 1
    @property
    def seed(self) -> int: ...
    # counter blocks used so far
    @property
    def offset(self) -> int: ...
    def __reduce__(self) -> tuple[Any, ...]: ...

    # -- uniform floats in [0, 1) -------------------------------------------------------------
    @overload
    def random(
        self, size: None = None, dtype: _DTypeLike | None = None, device: _Device = None
    ) -> float: ...
    @overload
    def random(
        self, size: _ShapeLike, dtype: _DTypeLike | None = None, device: _Device = None
    ) -> Array: ...

    # -- uniform floats in [low, high) ----------------------------------------------------------
    @overload
    def uniform(
        self,
        low: float = 0.0,
        high: float = 1.0,
        size: None = None,
        dtype: _DTypeLike | None = None,
        device: _Device = None,
    ) -> float: ...
    @overload
    def uniform(
        self,
        low: _ArrayLike,
        high: _ArrayLike,
        size: _ShapeLike,
        dtype: _DTypeLike | None = None,
        device: _Device = None,
    ) -> Array: ...
    @overload
    def uniform(
        self,
        low: _ArrayLike = 0.0,
        high: _ArrayLike = 1.0,
        *,
        size: _ShapeLike,
        dtype: _DTypeLike | None = None,
        device: _Device = None,
    ) -> Array: ...
    @overload
    def uniform(
        self,
        low: _ArrayLike = 0.0,
        high: _ArrayLike = 1.0,
        size: _ShapeLike | None = None,
        dtype: _DTypeLike | None = None,
        device: _Device = None,
    ) -> Array | float: ...

    # -- normal floats (Box-Muller) -------------------------------------------------------------
    @overload
    def normal(
        self,
        loc: float = 0.0,
        scale: float = 1.0,
        size: None = None,
        dtype: _DTypeLike | None = None,
        device: _Device = None,
    ) -> float: ...
    @overload
    def normal(
        self,
        loc: _ArrayLike,
        scale: _ArrayLike,
        size: _ShapeLike,
        dtype: _DTypeLike | None = None,
        device: _Device = None,
    ) -> Array: ...
    @overload
    def normal(
        self,
        loc: _ArrayLike = 0.0,
        scale: _ArrayLike = 1.0,
        *,
        size: _ShapeLike,
        dtype: _DTypeLike | None = None,
        device: _Device = None,
    ) -> Array: ...
    @overload
    def normal(
        self,
        loc: _ArrayLike = 0.0,
        scale: _ArrayLike = 1.0,
        size: _ShapeLike | None = None,
        dtype: _DTypeLike | None = None,
        device: _Device = None,
    ) -> Array | float: ...

    # -- uniform integers in [low, high) ([low, high] with endpoint=True) -------------------------
    @overload
    def integers(
        self,
        low: int,
        high: int | None = None,
        size: None = None,
        dtype: _DTypeLike | None = None,
        endpoint: bool = False,
        device: _Device = None,
    ) -> int: ...
    @overload
    def integers(
        self,
        low: _ArrayLike,
        high: _ArrayLike | None,
        size: _ShapeLike,
        dtype: _DTypeLike | None = None,
        endpoint: bool = False,
        device: _Device = None,
    ) -> Array: ...
    @overload
    def integers(
        self,
        low: _ArrayLike,
        high: _ArrayLike | None = None,
        *,
        size: _ShapeLike,
        dtype: _DTypeLike | None = None,
        endpoint: bool = False,
        device: _Device = None,
    ) -> Array: ...
    @overload
    def integers(
        self,
        low: _ArrayLike,
        high: _ArrayLike | None = None,
        size: _ShapeLike | None = None,
        dtype: _DTypeLike | None = None,
        endpoint: bool = False,
        device: _Device = None,
    ) -> Array | int: ...

    # -- a shuffled arange(x) for an int x, else a shuffled copy of x along axis ----------------
    def permutation(self, x: SupportsIndex | _ArrayLike, axis: SupportsIndex = 0) -> Array: ...

# unpickle a Generator from its seed and counter offset
def _restore(seed: int, offset: int) -> Generator: ...

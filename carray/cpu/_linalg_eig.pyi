"""Type stub of carray.cpu._linalg_eig: the C loops behind carray.linalg's eig and eigvals."""

from carray.core._array import Array

def eig(a: Array, w: Array, v: Array | None, info: Array, real: bool) -> None: ...

"""Type stub of carray.cpu._linalg_complex: the C loops behind carray.linalg's complex eigh and
svd."""

from carray.core._array import Array

def eigh(a: Array, w: Array, v: Array, info: Array, lower: bool) -> None: ...
def svd(w: Array, s: Array, gt: Array, qo: Array, info: Array) -> None: ...

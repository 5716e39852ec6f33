"""carray.linalg.eig and eigvals: the eigenvalues (and right eigenvectors) of general square
matrices, by the complex Hessenberg QR of carray.cpu._linalg_eig on complex128 host copies.

Results are always complex, as the array API standard (2025.12) says: complex64 for float32 and
complex64 input, complex128 otherwise (bool and integers promote as NumPy's, to float64).
NumPy differs there: numpy.linalg.eig returns a real array when every eigenvalue is real. For
real input the values are as NumPy's nonetheless: real eigenvalues have an imaginary part of
exactly 0 and real eigenvectors, complex ones come in exact conjugate pairs with conjugate
eigenvectors (so `w.real` where `all(w.imag == 0)` gives NumPy's real result).
Eigenvalues come in the order of the Schur form's diagonal (as LAPACK's, though not the same
order as NumPy's, which balances and runs the real double-shift QR on real input); eigenvectors
are the columns, of unit 2-norm with their first largest component real and positive (zgeev's
normalisation). On gpu the matrices are read to the host and the results uploaded.
"""

from typing import NamedTuple

import carray
from carray.core._array import Array
from carray.cpu import _linalg_eig as _ke
from carray.ops._linalg import _back, _host64, _scaled

__all__ = ["EigResult", "eig", "eigvals"]


class EigResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


def _complex_type(dt):
    """complex64 for float32/complex64, complex128 for other floats, bool and integers;
    TypeError for the dtypes carray.linalg has no loops for."""
    if dt.name in ("float32", "complex64"):
        return carray.complex64
    if dt.kind in "biu" or dt.name in ("float64", "complex128"):
        return carray.complex128
    raise TypeError(f"array type {dt.name} is unsupported in linalg (expected a bool, integer, "
                    f"float32, float64, complex64 or complex128 array)")


def _eig(a, name, vectors):
    from carray.ops._linalg import LinAlgError, _failed, _info, _square, _where
    a = _square(a, name)
    dt = _complex_type(a.dtype)
    h = _host64(a, dtype=carray.complex128)
    B, n = h.shape[:2]
    if h.size and not bool(carray.all(carray.isfinite(h))):
        raise LinAlgError("Array must not contain infs or NaNs")
    h, scale = _scaled(h)
    w = carray.empty((B, n), dtype=carray.complex128)
    v = carray.empty((B, n, n), dtype=carray.complex128) if vectors else None
    info = _info((B,))
    _ke.eig(h, w, v, info, a.dtype.kind != "c")
    if _failed(info):
        raise LinAlgError(f"{name}: Eigenvalues did not converge{_where(info)}")
    w = carray.multiply(w, scale)
    w = _back(w, a.shape[:-1], dt, a.device)
    return w, (_back(v, a.shape, dt, a.device) if vectors else None)


def eig(a, /):
    """(eigenvalues, eigenvectors) of each square matrix of a (..., n, n), as an EigResult:
    eigenvalues (..., n) and eigenvectors (..., n, n) (column i belongs to eigenvalue i), both
    complex (see the module's docstring). LinAlgError for fewer than 2 dims, a non-square stack,
    NaN or inf entries, or when the QR iteration does not converge; TypeError for float16."""
    return EigResult(*_eig(a, "eig", True))


def eigvals(a, /):
    """The eigenvalues (..., n) of each square matrix of a (..., n, n), complex; see eig."""
    return _eig(a, "eigvals", False)[0]

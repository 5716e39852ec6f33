"""NumPy's and the array API's functions of complex numbers: real, imag, conj/conjugate, angle,
iscomplexobj, isrealobj, iscomplex, isreal. real/imag of a complex array are views of its
interleaved storage (writable, as NumPy's)."""

import math

from carray.core._array import Array, asarray
from carray.ops import _ufunc as uf
from carray.ops._creation import zeros_like


def _array(x):
    return x if isinstance(x, Array) else asarray(x)


def real(x, /):
    """The real part: a float view of a complex array; a real array itself (NumPy's real)."""
    return _array(x).real


def imag(x, /):
    """The imaginary part: a float view of a complex array; zeros for a real array."""
    x = _array(x)
    return x.imag if x.dtype.kind == "c" else zeros_like(x)


def conj(x, /):
    """The complex conjugate (a new array); a copy for real arrays."""
    x = _array(x)
    if x.dtype.kind != "c":
        return x.copy()
    from carray._complex import unary
    return unary("conjugate", x)


conjugate = conj


def angle(z, deg=False):
    """The argument of z in radians (degrees with deg=True): arctan2(imag, real)."""
    z = _array(z)
    if z.dtype.kind == "c":
        r = uf.arctan2(z.imag, z.real)
    else:
        r = uf.arctan2(zeros_like(z, dtype=z.dtype if z.dtype.kind == "f" else "float64"), z)
    return uf.multiply(r, 180.0 / math.pi) if deg else r


def iscomplexobj(x):
    """True when x's dtype is complex (whatever its values)."""
    return _array(x).dtype.kind == "c"


def isrealobj(x):
    """True when x's dtype is not complex."""
    return not iscomplexobj(x)


def iscomplex(x):
    """Elementwise: True where the imaginary part is nonzero."""
    return uf.not_equal(imag(x), 0)


def isreal(x):
    """Elementwise: True where the imaginary part is zero."""
    return uf.equal(imag(x), 0)

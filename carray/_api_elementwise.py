"""The array API's elementwise functions that carray composes from its op-table ops.

bitwise shifts, isinf, log2, log10, tan, trunc, round, signbit, copysign, nextafter,
logical_xor, positive, pow, bitwise_invert, conj, real, imag. Each is a few existing ops (so it
runs on every device); a hot one can become an op-table row later without changing its
behaviour. Integer/float checks use dtype kinds, so new dtypes need no edits here.
"""

import math

from carray.core._array import Array, asarray
from carray.core._dtype import as_dtype, result_type
from carray.ops import _ufunc as uf
from carray.ops._creation import zeros_like


def _device_of(*xs):
    for x in xs:
        if isinstance(x, Array):
            return x.device
    return "cpu"


def _pair(name, x1, x2, kinds):
    """x1 and x2 as arrays of their result dtype on their device; TypeError when that dtype's
    kind is not in `kinds`."""
    dt = result_type(x1, x2)
    if dt.kind not in kinds:
        raise TypeError(f"{name}: expected {_KIND_WORDS[kinds]} inputs, got dtype {dt.name}")
    dev = _device_of(x1, x2)
    a = x1.astype(dt, copy=False) if isinstance(x1, Array) else asarray(x1, dtype=dt, device=dev)
    b = x2.astype(dt, copy=False) if isinstance(x2, Array) else asarray(x2, dtype=dt, device=dev)
    return a, b, dt


def _one(name, x, kinds):
    if not isinstance(x, Array):
        x = asarray(x)
    if x.dtype.kind not in kinds:
        raise TypeError(f"{name}: expected {_KIND_WORDS[kinds]} input, got dtype {x.dtype.name}")
    return x


_INT = "iu"
_FLOAT = "f"
_REAL = "biuf"
_NUMERIC = "iufc"
_KIND_WORDS = {_INT: "integer", _FLOAT: "real floating", _REAL: "real-valued",
               _NUMERIC: "numeric", "biu": "integer or boolean", "fc": "floating",
               "biufc": "any"}


def bitwise_left_shift(x1, x2, /):
    """x1 << x2 for integer arrays (shifts of the width or more give 0, as NumPy)."""
    a, b, dt = _pair("bitwise_left_shift", x1, x2, _INT)
    bits = dt.itemsize * 8
    shifted = uf.multiply(a, uf.power(asarray(2, dtype=dt, device=a.device),
                                      uf.minimum(b, bits - 1)))
    return uf.where(uf.greater_equal(b, bits), asarray(0, dtype=dt, device=a.device), shifted)


def bitwise_right_shift(x1, x2, /):
    """x1 >> x2 for integer arrays: arithmetic for signed dtypes (floor division by 2**x2),
    logical for unsigned; shifts of the width or more give 0 (or -1 for negatives)."""
    a, b, dt = _pair("bitwise_right_shift", x1, x2, _INT)
    bits = dt.itemsize * 8
    top = bits - 1 if dt.kind == "i" else bits     # shifts from here on saturate
    two = asarray(2, dtype=dt, device=a.device)
    shifted = uf.floor_divide(a, uf.power(two, uf.minimum(b, top - 1)))
    if dt.kind == "i":
        saturated = uf.where(uf.less(a, 0), asarray(-1, dtype=dt, device=a.device),
                             asarray(0, dtype=dt, device=a.device))
    else:
        saturated = asarray(0, dtype=dt, device=a.device)
    return uf.where(uf.greater_equal(b, top), saturated, shifted)


def bitwise_invert(x, /):
    """~x for integer and bool arrays (NumPy's invert)."""
    return uf.invert(_one("bitwise_invert", x, "biu"))


def isinf(x, /):
    """True where x is +inf or -inf (never for integers and bools)."""
    x = _one("isinf", x, "biufc")
    if x.dtype.kind not in "fc":
        return uf.not_equal(x, x)                   # all False, x's shape and device
    return uf.equal(uf.absolute(x), math.inf)


def _log_scaled(name, x, scale):
    x = _one(name, x, "biufc")
    out = uf.log(x)
    return uf.multiply(out, asarray(scale, dtype=out.dtype, device=out.device))


def log2(x, /):
    """Base-2 logarithm (log(x) / log(2), to a few ulp)."""
    return _log_scaled("log2", x, 1.0 / math.log(2.0))


def log10(x, /):
    """Base-10 logarithm (log(x) / log(10), to a few ulp)."""
    return _log_scaled("log10", x, 1.0 / math.log(10.0))


def tan(x, /):
    """Tangent (sin(x) / cos(x); complex: -i tanh(ix))."""
    if isinstance(x, Array) and x.dtype.kind == "c":
        from carray._complex import unary
        return unary("tan", x)
    return uf.divide(uf.sin(x), uf.cos(x))


def trunc(x, /):
    """x rounded toward zero; integers and bools are returned as a copy of the same dtype."""
    x = _one("trunc", x, _REAL)
    if x.dtype.kind != "f":
        return x.copy()
    return uf.where(uf.less(x, 0), uf.ceil(x), uf.floor(x))


def round(x, /, decimals=0):  # noqa: A001  (the standard's name)
    """x rounded to `decimals` decimals, halves to even (NumPy's round); integers unchanged;
    complex numbers part by part."""
    if isinstance(x, Array) and x.dtype.kind == "c":
        from carray._complex import make
        return make(round(x.real, decimals), round(x.imag, decimals), x.dtype)
    x = _one("round", x, _REAL)
    if x.dtype.kind != "f":
        return x.copy()
    if decimals:
        scale = asarray(10.0 ** decimals, dtype=x.dtype, device=x.device)
        return uf.divide(round(uf.multiply(x, scale)), scale)
    f = uf.floor(x)
    d = uf.subtract(x, f)
    up = uf.add(f, 1)
    half_to_even = uf.where(uf.equal(uf.remainder(f, 2), 0), f, up)
    r = uf.where(uf.greater(d, 0.5), up, uf.where(uf.less(d, 0.5), f, half_to_even))
    # -0.4 rounds to -0.0, as NumPy
    return uf.where(uf.logical_and(uf.equal(r, 0), signbit(x)), -0.0, r)


_SAME_SIZE_INT = {2: "int16", 4: "int32", 8: "int64"}


def signbit(x, /):
    """True where x's sign bit is set: negatives, -0.0, -inf and NaNs with the sign bit (read
    from the bits: x viewed as the signed integer of its size is negative)."""
    x = _one("signbit", x, _REAL)
    if x.dtype.kind != "f":
        return uf.less(x, 0)
    return uf.less(x.view(_SAME_SIZE_INT[x.dtype.itemsize]), 0)


def copysign(x1, x2, /):
    """|x1| with the sign of x2 (floating point; integers promote to the default float)."""
    a, b, dt = _pair("copysign", x1, x2, _REAL)
    if dt.kind != "f":
        a, b = a.astype(as_dtype("float32") if dt.itemsize < 8 else as_dtype("float64")), b
    mag = uf.absolute(a)
    return uf.where(signbit(b), uf.negative(mag), mag)


# fraction bits and smallest normal exponent of the IEEE formats nextafter steps through
_FORMATS = {"float16": (10, -14), "bfloat16": (7, -126), "float32": (23, -126),
            "float64": (52, -1022)}


def nextafter(x1, x2, /):
    """The next representable floating value after x1 toward x2 (NumPy's nextafter)."""
    a, b, dt = _pair("nextafter", x1, x2, _FLOAT)
    frac, emin = _FORMATS[dt.name]
    dev = a.device

    def c(v):
        return asarray(v, dtype=dt, device=dev)

    mag = uf.absolute(a)
    finite = uf.logical_and(uf.isfinite(a), uf.greater(mag, 0))
    safe = uf.where(finite, mag, c(1.0))
    # the binade of |x1|: 2**e <= |x1| < 2**(e+1), corrected where log2 rounds across
    e = uf.floor(log2(safe))
    p = uf.power(c(2.0), e)
    e = uf.where(uf.greater(p, safe), uf.subtract(e, 1), e)
    p = uf.power(c(2.0), e)
    e = uf.where(uf.less_equal(uf.multiply(p, 2), safe), uf.add(e, 1), e)
    e = uf.maximum(e, emin)
    up = uf.greater(b, a)                      # moving toward +inf
    away = uf.equal(up, uf.greater(a, 0))      # moving away from zero
    # toward zero from an exact power of two the spacing halves
    at_power = uf.logical_and(uf.equal(safe, uf.power(c(2.0), e)), uf.greater(e, emin))
    step_exp = uf.where(uf.logical_and(uf.logical_not(away), at_power),
                        uf.subtract(e, frac + 1), uf.subtract(e, frac))
    step = uf.power(c(2.0), step_exp)
    moved = uf.where(up, uf.add(a, step), uf.subtract(a, step))
    tiny = c(2.0 ** (emin - frac))
    from_zero = uf.where(up, tiny, uf.negative(tiny))
    from_inf = uf.where(uf.greater(a, 0), c(_max_of(frac, emin)), c(-_max_of(frac, emin)))
    out = uf.where(uf.equal(a, 0), from_zero, uf.where(uf.isfinite(a), moved, from_inf))
    out = uf.where(uf.equal(a, b), b, out)
    return uf.where(uf.logical_or(uf.isnan(a), uf.isnan(b)), c(math.nan), out)


def _max_of(frac, emin):
    return (2.0 - 2.0 ** -frac) * 2.0 ** (-emin + 1)


def logical_xor(x1, x2, /):
    """x1 XOR x2, elementwise truth values (bool result)."""
    a = asarray(x1) if not isinstance(x1, Array) else x1
    b = asarray(x2, device=a.device) if not isinstance(x2, Array) else x2
    return uf.not_equal(a.astype("bool", copy=False), b.astype("bool", copy=False))


def positive(x, /):
    """+x (a copy); TypeError for bool, as NumPy."""
    x = asarray(x) if not isinstance(x, Array) else x
    return +x


def pow(x1, x2, /):  # noqa: A001
    """x1 ** x2 (the standard's name for power)."""
    return uf.power(x1, x2)


def _complex_part(name, x, real_result):
    x = asarray(x) if not isinstance(x, Array) else x
    if x.dtype.kind == "c":
        from carray import _api_complex
        return getattr(_api_complex, name)(x)
    return real_result(x)


def conj(x, /):
    """The complex conjugate; real arrays are returned as a copy."""
    return _complex_part("conjugate", x, lambda x: x.copy())


def real(x, /):
    """The real part; a real array is returned as is (NumPy's real)."""
    return _complex_part("real", x, lambda x: x)


def imag(x, /):
    """The imaginary part; zeros for a real array."""
    return _complex_part("imag", x, zeros_like)

"""Elementwise math, reductions and where on complex64/complex128 arrays, composed from the real
ops on the float views of the interleaved storage (array.real / array.imag), so they run on every
device without kernels of their own. carray.ops._ufunc sends every op whose computation type is
complex here (one place: binary, unary, where, reductions).

Formulas follow NumPy's complex loops (Smith's division, NumPy's expm1 and log1p); the
non-finite inputs of the transcendental functions take C99 Annex G's special values (those the
array API standard lists), computed on the host for just those elements.
"""

import cmath
import math

from carray.core._array import (
    Array,
    _complex_from_pairs,
    _complex_pairs,
    _complex_part,
    asarray,
    broadcast_shapes,
    expand_dims,
)
from carray.ops import _ufunc as uf
from carray.ops._creation import empty, ones

_PART = {"complex64": "float32", "complex128": "float64"}
_NOT_COMPLEX = ("floor_divide", "remainder", "fmod", "bitwise_and", "bitwise_or", "bitwise_xor",
                "arctan2", "hypot", "logaddexp", "floor", "ceil", "invert", "erf", "erfinv",
                "relu", "sigmoid")


def _refuse(name, dtype):
    raise TypeError(f"ufunc '{name}' not supported for the input types ({dtype}), and the inputs "
                    f"could not be safely coerced to any supported types according to the "
                    f"casting rule ''safe''")


def parts(z):
    """(real, imag) float views of complex z."""
    return _complex_part(z, 0), _complex_part(z, 1)


def make(re, im, dtype):
    """A new complex array of `dtype` from real and imaginary parts (broadcast together)."""
    shape = broadcast_shapes(re.shape if isinstance(re, Array) else (),
                                im.shape if isinstance(im, Array) else ())
    like = re if isinstance(re, Array) else im
    out = empty(shape, dtype=dtype, device=like.device)
    _complex_part(out, 0)[...] = re
    _complex_part(out, 1)[...] = im
    return out


def const(value, dtype, like):
    """A 0-d complex array of `dtype` holding `value`, on like's device."""
    return asarray(complex(value), dtype=dtype, device=like.device)


def pairs(z):
    """z as a float view z.shape + (2,)."""
    return _complex_pairs(z)


def from_pairs(f):
    """The complex view of a fresh float array of shape (..., 2)."""
    if not f.flags.c_contiguous:
        f = f.copy()
    return _complex_from_pairs(f)


# -- binary ------------------------------------------------------------------------------------

def _mul(a, b, c, d):
    return a * c - b * d, a * d + b * c


def _div(a, b, c, d):
    """(a + bi) / (c + di) by Smith's algorithm, as NumPy's loop (division by 0 gives inf/nan
    as a / 0 does)."""
    ac, ad = uf.absolute(c), uf.absolute(d)
    first = uf.greater_equal(ac, ad)
    zero = uf.logical_and(uf.equal(ac, 0), uf.equal(ad, 0))
    safe_c = uf.where(zero, 1.0, c)
    safe_d = uf.where(zero, 1.0, d)
    rat1 = safe_d / safe_c
    scl1 = 1.0 / (safe_c + safe_d * rat1)
    rat2 = safe_c / safe_d
    scl2 = 1.0 / (safe_d + safe_c * rat2)
    re = uf.where(first, (a + b * rat1) * scl1, (a * rat2 + b) * scl2)
    im = uf.where(first, (b - a * rat1) * scl1, (b * rat2 - a) * scl2)
    re = uf.where(zero, a / ac, re)
    im = uf.where(zero, b / ac, im)
    return re, im


def _lex_less(a, b, c, d):
    """a + bi < c + di in NumPy's lexicographic order."""
    return uf.logical_or(uf.less(a, c), uf.logical_and(uf.equal(a, c), uf.less(b, d)))


def _has_nan(a, b):
    return uf.logical_or(uf.isnan(a), uf.isnan(b))


def binary(name, x, y):
    """The op `name` of complex arrays x and y of one dtype (broadcast)."""
    a, b = parts(x)
    c, d = parts(y)
    dt = x.dtype
    if name == "add":
        return make(a + c, b + d, dt)
    if name == "subtract":
        return make(a - c, b - d, dt)
    if name == "multiply":
        return make(*_mul(a, b, c, d), dt)
    if name == "divide":
        return make(*_div(a, b, c, d), dt)
    if name == "power":
        return _power(x, y)
    if name == "equal":
        return uf.logical_and(uf.equal(a, c), uf.equal(b, d))
    if name == "not_equal":
        return uf.logical_or(uf.not_equal(a, c), uf.not_equal(b, d))
    if name == "less":
        return _lex_less(a, b, c, d)
    if name == "greater":
        return _lex_less(c, d, a, b)
    if name == "less_equal":
        return uf.logical_and(uf.logical_not(_lex_less(c, d, a, b)),
                              uf.logical_not(uf.logical_or(_has_nan(a, b), _has_nan(c, d))))
    if name == "greater_equal":
        return uf.logical_and(uf.logical_not(_lex_less(a, b, c, d)),
                              uf.logical_not(uf.logical_or(_has_nan(a, b), _has_nan(c, d))))
    if name == "logical_and":
        return uf.logical_and(_nonzero(a, b), _nonzero(c, d))
    if name == "logical_or":
        return uf.logical_or(_nonzero(a, b), _nonzero(c, d))
    if name in ("maximum", "minimum"):
        # NumPy: lexicographic, NaN (in either part) propagates from the first operand
        keep_x = _lex_less(c, d, a, b) if name == "maximum" else _lex_less(a, b, c, d)
        keep_x = uf.logical_or(keep_x, _has_nan(a, b))
        keep_x = uf.logical_and(keep_x, uf.logical_not(uf.logical_and(
            _has_nan(c, d), uf.logical_not(_has_nan(a, b)))))
        return where(keep_x, x, y)
    _refuse(name, dt)


def _nonzero(a, b):
    return uf.logical_or(uf.not_equal(a, 0), uf.not_equal(b, 0))


def _power(x, y):
    """x ** y: repeated multiplication for a 0-d integer exponent up to 100 (as NumPy), else
    exp(y log x); x ** 0 is 1 and 0 ** y is 0 for real y > 0."""
    dt = x.dtype
    if y.ndim == 0 and y.device == "cpu":
        w = complex(y.item())
        if w.imag == 0 and w.real == int(w.real) and abs(w.real) <= 100:
            n = int(w.real)
            if n == 0:
                return ones(x.shape, dtype=dt, device=x.device)
            base, k, acc = x, abs(n), None
            while k:
                if k & 1:
                    acc = base if acc is None else binary("multiply", acc, base)
                k >>= 1
                if k:
                    base = binary("multiply", base, base)
            return binary("divide", const(1, dt, x), acc) if n < 0 else acc
    r = unary("exp", binary("multiply", y, unary("log", x)))
    c, d = parts(y)
    a, b = parts(x)
    x_zero = uf.logical_and(uf.equal(a, 0), uf.equal(b, 0))
    y_zero = uf.logical_and(uf.equal(c, 0), uf.equal(d, 0))
    r = where(uf.logical_and(x_zero, uf.logical_and(uf.greater(c, 0), uf.equal(d, 0))),
              const(0, dt, x), r)
    return where(y_zero, const(1, dt, x), r)


# -- unary -------------------------------------------------------------------------------------

def _abs(a, b):
    return uf.hypot(a, b)


def _log(a, b):
    return uf.log(uf.hypot(a, b)), uf.arctan2(b, a)


def _exp(a, b):
    e = uf.exp(a)
    return e * uf.cos(b), e * uf.sin(b)


def _sqrt(a, b):
    """NumPy's csqrt: t = sqrt((|a| + |z|) / 2), the other part b / 2t."""
    t = uf.sqrt((uf.absolute(a) + uf.hypot(a, b)) * 0.5)
    zero = uf.equal(t, 0)
    t_safe = uf.where(zero, 1.0, t)
    other = uf.where(zero, 0.0, uf.absolute(b) / (2.0 * t_safe))
    big = uf.greater_equal(a, 0)
    re = uf.where(big, t, other)
    im = uf.where(big, uf.where(zero, b, b / (2.0 * t_safe)), _copysign(t, b))
    return re, im


def _copysign(m, s):
    from carray._api_elementwise import copysign
    return copysign(m, s)


def _sinh(a, b):
    return uf.sinh(a) * uf.cos(b), uf.cosh(a) * uf.sin(b)


def _cosh(a, b):
    return uf.cosh(a) * uf.cos(b), uf.sinh(a) * uf.sin(b)


def _tanh(a, b):
    """Kahan's tanh: t = tan(b), s = sinh(a), r = sqrt(1 + s^2): ((1 + t^2) r s + i t) /
    (1 + (1 + t^2) s^2); for |a| beyond 20 (the float's precision) it is sign(a) + 4i sin b cos b
    e^(-2|a|)."""
    from carray._api_elementwise import tan
    big = uf.greater(uf.absolute(a), 20.0)
    a_s = uf.where(big, 0.0, a)
    t = tan(b)
    bb = 1.0 + t * t
    s = uf.sinh(a_s)
    r = uf.sqrt(1.0 + s * s)
    den = 1.0 + bb * s * s
    re = uf.where(big, _copysign(1.0 + a * 0, a), bb * r * s / den)
    im = uf.where(big, 4.0 * uf.sin(b) * uf.cos(b) * uf.exp(-2.0 * uf.absolute(a)), t / den)
    return re, im


def _times_i(a, b):
    return -b, a


def _asinh(a, b, dt):
    # asinh(z) = log(z + sqrt(z^2 + 1)); odd, so computed for Re >= +0 and mirrored
    from carray._api_elementwise import signbit
    neg = signbit(a)
    a2 = uf.where(neg, -a, a)
    b2 = uf.where(neg, -b, b)
    z2r, z2i = _mul(a2, b2, a2, b2)
    sr, si = _sqrt(z2r + 1.0, z2i)
    re, im = _log(a2 + sr, b2 + si)
    return uf.where(neg, -re, re), uf.where(neg, -im, im)


def _acosh(a, b, dt):
    # acosh(z) = log(z + sqrt(z + 1) sqrt(z - 1))
    pr, pi = _sqrt(a + 1.0, b)
    mr, mi = _sqrt(a - 1.0, b)
    qr, qi = _mul(pr, pi, mr, mi)
    return _log(a + qr, b + qi)


def _atanh(a, b, dt):
    # atanh(z) = (log1p(z) - log1p(-z)) / 2
    pr, pi = _log(a + 1.0, b)
    mr, mi = _log(1.0 - a, -b)
    return (pr - mr) * 0.5, (pi - mi) * 0.5


def _via_i(fn):
    """f(z) = -i g(iz) for g = asinh, atanh, sinh, tanh (giving asin, atan, sin, tan)."""
    def f(a, b, dt):
        r, i = fn(-b, a, dt)
        return i, -r
    return f


def _acos(a, b, dt):
    # acos(z) = pi/2 - asin(z)
    r, i = _via_i(_asinh)(a, b, dt)
    return math.pi / 2 - r, -i


_FORMULAS = {
    "exp": lambda a, b, dt: _exp(a, b),
    "log": lambda a, b, dt: _log(a, b),
    "sqrt": lambda a, b, dt: _sqrt(a, b),
    "sinh": lambda a, b, dt: _sinh(a, b),
    "cosh": lambda a, b, dt: _cosh(a, b),
    "tanh": lambda a, b, dt: _tanh(a, b),
    "sin": _via_i(lambda a, b, dt: _sinh(a, b)),
    "cos": lambda a, b, dt: _cosh(-b, a),
    "tan": _via_i(lambda a, b, dt: _tanh(a, b)),
    "arcsinh": _asinh,
    "arccosh": _acosh,
    "arctanh": _atanh,
    "arcsin": _via_i(_asinh),
    "arccos": _acos,
    "arctan": _via_i(_atanh),
    # NumPy's expm1: expm1(a) cos b - 2 sin^2(b/2) + i e^a sin b (+0 + 0j at +-0 + 0j, as
    # the standard asks, where the formula gives -0 for a = -0)
    "expm1": lambda a, b, dt: (
        uf.where(uf.logical_and(uf.equal(a, 0), uf.equal(b, 0)), 0.0,
                 uf.expm1(a) * uf.cos(b) - 2.0 * uf.sin(b * 0.5) ** 2),
        uf.exp(a) * uf.sin(b)),
    "log1p": lambda a, b, dt: _log(a + 1.0, b),
    "log2": lambda a, b, dt: tuple(v * (1 / math.log(2.0)) for v in _log(a, b)),
    "log10": lambda a, b, dt: tuple(v * (1 / math.log(10.0)) for v in _log(a, b)),
}


def unary(name, x):
    """The op `name` of complex array x (abs and angle give real arrays, predicates bool)."""
    a, b = parts(x)
    dt = x.dtype
    if name == "negative":
        return make(-a, -b, dt)
    if name == "positive":
        return x.copy()
    if name in ("conjugate", "conj"):
        return make(a, -b, dt)
    if name == "absolute":
        return _abs(a, b)
    if name == "angle":
        return uf.arctan2(b, a)
    if name == "square":
        return binary("multiply", x, x)
    if name == "reciprocal":
        return binary("divide", ones(x.shape, dtype=dt, device=x.device), x)
    if name == "sign":
        m = _abs(a, b)
        zero = uf.equal(m, 0)
        ms = uf.where(zero, 1.0, m)
        re, im = uf.where(zero, 0.0, a / ms), uf.where(zero, 0.0, b / ms)
        nan = _has_nan(a, b)
        inf = uf.logical_and(uf.equal(m, math.inf), uf.logical_not(nan))
        # an infinite z: z / |z| as the division rules give it (a finite part becomes 0)
        re = uf.where(inf, uf.where(uf.equal(uf.absolute(a), _INF), a / m, 0.0 * a), re)
        im = uf.where(inf, uf.where(uf.equal(uf.absolute(b), _INF), b / m, 0.0 * b), im)
        return make(uf.where(nan, math.nan, re), uf.where(nan, math.nan, im), dt)
    if name == "isnan":
        return _has_nan(a, b)
    if name == "isfinite":
        return uf.logical_and(uf.isfinite(a), uf.isfinite(b))
    if name == "logical_not":
        return uf.logical_not(_nonzero(a, b))
    fn = _FORMULAS.get(name)
    if fn is None:
        _refuse(name, dt)
    re, im = fn(a, b, dt)
    out = make(re, im, dt)
    _special_values(name, x, out)
    return out


# -- C99 Annex G special values -----------------------------------------------------------------

_INF, _NAN = math.inf, math.nan


def _cmath_value(name, z):
    """f(z) by cmath (which follows Annex G), with Annex G's value where cmath raises."""
    base = {"arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh", "arcsin": "asin",
            "arccos": "acos", "arctan": "atan"}.get(name, name)
    if name in ("sin", "tan"):       # -i f(iz)
        w = _cmath_value({"sin": "sinh", "tan": "tanh"}[name], complex(-z.imag, z.real))
        return complex(w.imag, -w.real)
    if name == "cos":
        return _cmath_value("cosh", complex(-z.imag, z.real))
    if name in ("expm1", "log1p", "log2", "log10"):
        if name == "expm1":
            w = _cmath_value("exp", z)
            return complex(w.real - 1.0, w.imag) if math.isfinite(w.real) else w
        w = _cmath_value("log", complex(z.real + 1.0, z.imag) if name == "log1p" else z)
        if name in ("log2", "log10"):
            s = 1 / math.log(2.0 if name == "log2" else 10.0)
            return complex(w.real * s, w.imag * s)
        return w
    if base == "acosh" and z.real == 0 and math.isnan(z.imag):
        return complex(_NAN, math.pi / 2)               # Annex G: NaN +- i pi/2
    if base == "tanh" and z.real == 0 and math.isnan(z.imag):
        return complex(z.real, _NAN)                    # C11: +-0 + i NaN
    if base == "tanh" and math.isinf(z.real) and math.isfinite(z.imag):
        # +-1 + 0i with the sign of y (the array API's choice of Annex G's sign-unspecified 0)
        return complex(math.copysign(1.0, z.real), math.copysign(0.0, z.imag))
    try:
        return getattr(cmath, base)(z)
    except (ValueError, OverflowError):
        return _annex_g(base, z)


def _annex_g(name, z):
    """The Annex G values cmath raises for (an invalid operation or a pole)."""
    x, y = z.real, z.imag
    if name == "log":                                   # log(+-0 +- 0i) = -inf + i arg
        return complex(-_INF, math.atan2(y, x))
    if name == "atanh":                                 # atanh(+-1 + 0i) = +-inf + 0i
        return complex(math.copysign(_INF, x), y)
    if name == "exp":
        if x == _INF:
            return complex(_INF, _NAN)
        if x == -_INF:
            return complex(0.0, 0.0)
        return complex(_NAN, _NAN)
    if name == "sinh":
        if x == 0:
            return complex(x, _NAN)
        if math.isinf(x):
            return complex(x, _NAN)
        return complex(_NAN, _NAN)
    if name == "cosh":
        if x == 0:
            return complex(_NAN, 0.0)
        if math.isinf(x):
            return complex(_INF, _NAN)
        return complex(_NAN, _NAN)
    if name == "tanh":
        if x == 0:
            return complex(x, _NAN)
        return complex(_NAN, _NAN)
    return complex(_NAN, _NAN)


def _special_values(name, x, out):
    """Overwrite out where x has an infinite or NaN part (or is a pole) with Annex G's value."""
    a, b = parts(x)
    bad = uf.logical_not(uf.logical_and(uf.isfinite(a), uf.isfinite(b)))
    if name in ("log", "log2", "log10"):
        bad = uf.logical_or(bad, uf.logical_and(uf.equal(a, 0), uf.equal(b, 0)))
    elif name == "log1p":
        bad = uf.logical_or(bad, uf.logical_and(uf.equal(a, -1), uf.equal(b, 0)))
    elif name in ("arctanh", "arctan"):
        re, im = (a, b) if name == "arctanh" else (b, a)
        bad = uf.logical_or(bad, uf.logical_and(uf.equal(uf.absolute(re), 1), uf.equal(im, 0)))
    elif name in ("exp", "sinh", "cosh", "sin", "cos", "expm1"):
        # e^a overflows while the other factor is 0: inf * 0 must not give NaN
        bad = uf.logical_or(bad, uf.logical_not(uf.logical_and(
            uf.isfinite(_complex_part(out, 0)), uf.isfinite(_complex_part(out, 1)))))
    elif name in ("sqrt", "arcsinh", "arccosh", "arcsin", "arccos"):
        bad = uf.logical_or(bad, uf.logical_not(uf.logical_and(
            uf.isfinite(_complex_part(out, 0)), uf.isfinite(_complex_part(out, 1)))))
    if x.ndim == 0:
        if not bool(bad):
            return
        z = complex(x.item())
        out[...] = asarray(_cmath_value(name, z), dtype=x.dtype, device=x.device)
        return
    if not bool(uf.any(bad)):
        return
    zs = pairs(x)[bad].tolist()
    values = [_cmath_value(name, complex(r, i)) for r, i in zs]
    fixed = asarray([[v.real, v.imag] for v in values], dtype=_PART[x.dtype.name],
                    device=x.device)
    pairs(out)[bad] = fixed


# -- where and reductions ----------------------------------------------------------------------

def where(cond, x, y):
    """Elements of complex x where cond holds, else of y (x, y of one complex dtype)."""
    c = asarray(cond) if not isinstance(cond, Array) else cond
    # the front end lets 0-d host operands (Python scalars) join device arrays
    dev = next((v.device for v in (c, x, y) if v.device != "cpu"), "cpu")
    c, x, y = (v.to(dev) if v.ndim == 0 else v for v in (c, x, y))
    c = expand_dims(c, -1) if c.ndim else c
    return from_pairs(uf.where(c, pairs(x), pairs(y)))


def reduce(name, x, axis, keepdims):
    """sum/prod/max/min of complex x over axis (an int tuple of normalised axes, or None)."""
    axes = tuple(range(x.ndim)) if axis is None else axis
    if name == "sum":
        return from_pairs(uf.sum(pairs(x), axis=axes, keepdims=keepdims))
    if name == "prod":
        return _prod(x, axes, keepdims)
    # max / min: the lexicographic extreme of the reduced elements, flattened last
    from carray.core._array import moveaxis
    n = x.ndim
    rest = [d for d in range(n) if d not in axes]
    y = moveaxis(x, list(axes), list(range(n - len(axes), n))) if axes else x
    y = y.reshape(tuple(x.shape[d] for d in rest) + (-1,))
    idx = arg(y, -1, True, name == "max")
    from carray._api_manipulation import take_along_axis
    r = take_along_axis(y, idx, axis=-1)[..., 0]
    if keepdims:
        r = r.reshape(tuple(1 if d in axes else x.shape[d] for d in range(n)))
    return r.copy()


def arg(x, axis, keepdims, want_max):
    """argmax (want_max) or argmin of complex x in NumPy's lexicographic order: the first
    extreme, or the first element with a NaN part when there is one."""
    flat = axis is None
    if flat:
        x, axis = x.reshape(-1), 0
    if x.shape[axis] == 0:
        raise ValueError(f"attempt to get {'argmax' if want_max else 'argmin'} of an empty "
                         f"sequence")
    a, b = parts(x)
    red, worst = (uf.max, -_INF) if want_max else (uf.min, _INF)
    cand = uf.equal(a, red(a, axis=axis, keepdims=True))
    bi = uf.where(cand, b, worst)
    best = uf.logical_and(cand, uf.equal(bi, red(bi, axis=axis, keepdims=True)))
    nan = _has_nan(a, b)
    idx = uf.argmax(best.astype("int8"), axis=axis, keepdims=True)
    idx = uf.where(uf.any(nan, axis=axis, keepdims=True),
                   uf.argmax(nan.astype("int8"), axis=axis, keepdims=True), idx)
    if not keepdims:
        idx = idx.reshape(idx.shape[:axis] + idx.shape[axis + 1:]) if not flat else \
            idx.reshape(())
    return idx


def _prod(x, axes, keepdims):
    """The product over axes: moved to the end, flattened, halved by pairwise products."""
    from carray.core._array import moveaxis
    n = x.ndim
    rest = [d for d in range(n) if d not in axes]
    y = moveaxis(x, list(axes), list(range(n - len(axes), n))) if axes else x
    keep_shape = tuple(x.shape[d] for d in rest)
    y = y.reshape(keep_shape + (-1,))
    while y.shape[-1] > 1:
        m = y.shape[-1]
        if m % 2:
            pad = ones(keep_shape + (1,), dtype=x.dtype, device=x.device)
            from carray import concatenate
            y = concatenate([y, pad], axis=-1)
            m += 1
        y = binary("multiply", y[..., : m // 2], y[..., m // 2:])
    if y.shape[-1] == 0:
        y = ones(keep_shape + (1,), dtype=x.dtype, device=x.device)
    r = y[..., 0]
    if keepdims:
        r = r.reshape(tuple(1 if d in axes else x.shape[d] for d in range(n)))
    return r.copy()


# -- products and sorting ----------------------------------------------------------------------

def matmul(x, y):
    """x @ y for complex operands (a real one is promoted): four real matrix products."""
    from carray.core._dtype import result_type
    from carray.ops._matmul import matmul as real_matmul
    dt = result_type(x.dtype, y.dtype)
    x, y = x.astype(dt, copy=False), y.astype(dt, copy=False)
    a, b = parts(x)
    c, d = parts(y)
    return make(real_matmul(a, c) - real_matmul(b, d), real_matmul(a, d) + real_matmul(b, c), dt)


def sorted_along(x, ax, values, indices):
    """(sorted x or None, int64 sorting indices or None) along axis ax in NumPy's lexicographic
    order (real part, then imaginary part; stable): a stable sort by the imaginary parts, then
    one by the real parts in that order."""
    from carray._api_manipulation import take_along_axis
    from carray.ops._sort import argsort
    first = argsort(_complex_part(x, 1), ax)
    re = take_along_axis(_complex_part(x, 0), first, axis=ax)
    idx = take_along_axis(first, argsort(re, ax), axis=ax)
    out = take_along_axis(x, idx, axis=ax) if values else None
    return out, (idx if indices else None)


def scan(is_sum, x, ax):
    """The cumulative sum (is_sum) or product of complex x along axis ax: sums part by part;
    products by log2(n) doubling steps (Hillis-Steele) of complex multiplications."""
    from carray.ops._cumulative import cumsum
    if is_sum:
        return make(cumsum(_complex_part(x, 0), axis=ax), cumsum(_complex_part(x, 1), axis=ax),
                    x.dtype)
    from carray.core._array import moveaxis
    y = moveaxis(x, ax, -1).copy()
    n, step = y.shape[-1], 1
    while step < n:
        # (binary makes the product before the assignment: the overlapping read is safe)
        y[..., step:] = binary("multiply", y[..., step:], y[..., : n - step])
        step *= 2
    return moveaxis(y, -1, ax).copy()

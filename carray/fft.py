"""The array API's fft extension (NumPy's numpy.fft names and keywords): fft, ifft, fftn, ifftn,
rfft, irfft, rfftn, irfftn, hfft, ihfft, fftfreq, rfftfreq, fftshift, ifftshift.

Every transform is composed from carray's array ops, so it runs on every device and over the
whole batch at once: lengths that are powers of two take log2(n) radix-2 passes (Stockham
order: no bit reversal), other lengths Bluestein's chirp-z transform (a power-of-two convolution,
computed in complex128 so complex64 results keep their accuracy). Twiddle factors are computed in
float64 on the host. Real input: float32 gives complex64, float64 (and integers) complex128.
"""

import math

from carray._complex import binary, from_pairs, make, pairs, unary
from carray.core._array import Array, AxisError, asarray, moveaxis
from carray.ops._creation import zeros
from carray.ops._join import concatenate

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = (None, "backward", "ortho", "forward")


# -- the core transform over the last axis ------------------------------------------------------

def _cmul(x, y):
    """The complex product of two arrays of one complex dtype (broadcast)."""
    return binary("multiply", x, y)


def _twiddles(values, dtype, like):
    """[exp(i t) for t in values] as a complex array of `dtype` on like's device."""
    part = "float32" if dtype == "complex64" else "float64"
    re = asarray([math.cos(t) for t in values], dtype=part, device=like.device)
    im = asarray([math.sin(t) for t in values], dtype=part, device=like.device)
    return make(re, im, dtype)


def _radix2(z, sign):
    """The unnormalised DFT of z over its last axis (a power-of-two length): sum_j z_j
    exp(sign 2 pi i j k / n). Stockham passes: X has shape (..., L, M) with L * M = n."""
    n = z.shape[-1]
    x = z.reshape(z.shape[:-1] + (1, n))
    while x.shape[-2] < n:
        half = x.shape[-1] // 2
        length = x.shape[-2]
        even, odd = x[..., :half], x[..., half:]
        w = _twiddles([sign * math.pi * k / length for k in range(length)], z.dtype.name, z)
        t = _cmul(odd, w.reshape((length, 1)))
        x = concatenate([even + t, even - t], axis=-2)
    return x.reshape(z.shape)


def _bluestein(z, sign):
    """The unnormalised DFT of z over its last axis for any length, by the chirp-z transform:
    X_k = c_k sum_j (z_j c_j) conj(c_(k-j)), c_t = exp(sign pi i t^2 / n), a circular
    convolution of power-of-two length m >= 2n - 1."""
    n = z.shape[-1]
    dtype = z.dtype.name
    w = z.astype("complex128")
    m = 1
    while m < 2 * n - 1:
        m *= 2
    angles = [sign * math.pi * ((k * k) % (2 * n)) / n for k in range(n)]
    chirp = _twiddles(angles, "complex128", z)
    a = _cmul(w, chirp)
    a = concatenate([a, zeros(a.shape[:-1] + (m - n,), dtype="complex128", device=z.device)],
                    axis=-1)
    b_angles = [-t for t in angles] + [0.0] * (m - 2 * n + 1) + [-t for t in angles[:0:-1]]
    fb = _radix2(_twiddles(b_angles, "complex128", z), -1)
    conv = _radix2(_cmul(_radix2(a, -1), fb), 1)[..., :n]
    out = _cmul(conv, chirp)
    out = from_pairs(pairs(out) * (1.0 / m))
    return out.astype(dtype) if dtype != "complex128" else out


def _transform(z, sign):
    n = z.shape[-1]
    if n == 1 or z.size == 0:
        return z.copy()
    if n & (n - 1) == 0:
        return _radix2(z, sign)
    return _bluestein(z, sign)


# -- argument handling --------------------------------------------------------------------------

def normalize_axis_index(axis, ndim):
    """axis in [0, ndim); AxisError (a ValueError and IndexError) outside [-ndim, ndim)."""
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise TypeError(f"axis must be an integer, got {type(axis).__name__}")
    if not -ndim <= axis < ndim:
        raise AxisError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _as_array(x, name):
    if not isinstance(x, Array):
        x = asarray(x)
    if x.dtype.kind not in "biufc":
        raise TypeError(f"{name}: expected a numeric array, got dtype {x.dtype.name}")
    return x


def _complex(x):
    """x as complex: complex64 for float32 (and the 2-byte floats), complex128 else."""
    if x.dtype.kind == "c":
        return x
    return x.astype("complex64" if x.dtype.name in ("float32", "float16", "bfloat16")
                    else "complex128")


def _real_float(x, name):
    if x.dtype.kind == "c":
        raise TypeError(f"{name}: expected a real input array, got dtype {x.dtype.name}")
    if x.dtype.kind == "f":
        return x if x.dtype.name in ("float32", "float64") else x.astype("float32")
    return x.astype("float64")


def _check_norm(norm):
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm!r}; should be "backward", "ortho" or '
                         f'"forward".')


def _scale(norm, n, inverse):
    """The factor applied to a transform of length n."""
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    if (norm in (None, "backward")) == inverse:
        return 1.0 / n
    return 1.0


def _check_n(n, what="FFT data points"):
    if n is None:
        return
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"n must be an integer, got {type(n).__name__}")
    if n < 1:
        raise ValueError(f"Invalid number of {what} ({n}) specified.")


def _resize_last(z, n):
    """z cropped or zero-padded to length n along its last axis."""
    m = z.shape[-1]
    if n == m:
        return z
    if n < m:
        return z[..., :n]
    pad = zeros(z.shape[:-1] + (n - m,), dtype=z.dtype, device=z.device)
    return concatenate([z, pad], axis=-1)


def _scaled(z, factor):
    if factor == 1.0:
        return z
    if z.dtype.kind == "c":
        return from_pairs(pairs(z) * factor)
    return z * factor


def _c2c(x, n, axis, norm, inverse):
    """The complex transform of x along one axis (n points), scaled per norm."""
    _check_norm(norm)
    _check_n(n)
    axis = normalize_axis_index(axis, x.ndim)
    z = moveaxis(_complex(x), axis, -1)
    n = z.shape[-1] if n is None else n
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    out = _scaled(_transform(_resize_last(z, n), 1 if inverse else -1), _scale(norm, n, inverse))
    return moveaxis(out, -1, axis)


def _axes_and_sizes(x, s, axes):
    """NumPy's rules: axes defaults to all axes, or the last len(s) when s is given; s entries
    of -1 keep the axis' length."""
    if axes is None:
        axes = list(range(x.ndim)) if s is None else list(range(x.ndim - len(s), x.ndim))
    else:
        axes = [normalize_axis_index(a, x.ndim) for a in axes]
    if s is None:
        s = [x.shape[a] for a in axes]
    else:
        s = list(s)
        if len(s) != len(axes):
            raise ValueError(f"When given, axes and shape arguments have to be of the same "
                             f"length (got s={tuple(s)}, axes={tuple(axes)})")
        s = [x.shape[a] if k == -1 else k for k, a in zip(s, axes)]
    for k in s:
        _check_n(k)
    return s, axes


# -- the transforms -----------------------------------------------------------------------------

def fft(x, /, *, n=None, axis=-1, norm="backward"):
    """The one-dimensional discrete Fourier transform along `axis` (n points: the input cropped
    or zero-padded). ValueError for n < 1 or an unknown norm; AxisError for a bad axis."""
    return _c2c(_as_array(x, "fft"), n, axis, norm, False)


def ifft(x, /, *, n=None, axis=-1, norm="backward"):
    """The one-dimensional inverse discrete Fourier transform along `axis` (see fft)."""
    return _c2c(_as_array(x, "ifft"), n, axis, norm, True)


def fftn(x, /, *, s=None, axes=None, norm="backward"):
    """The n-dimensional discrete Fourier transform over `axes` with sizes `s` (see fft)."""
    x = _complex(_as_array(x, "fftn"))
    s, axes = _axes_and_sizes(x, s, axes)
    for k, a in zip(s, axes):
        x = _c2c(x, k, a, norm, False)
    return x


def ifftn(x, /, *, s=None, axes=None, norm="backward"):
    """The n-dimensional inverse discrete Fourier transform (see fftn)."""
    x = _complex(_as_array(x, "ifftn"))
    s, axes = _axes_and_sizes(x, s, axes)
    for k, a in zip(s, axes):
        x = _c2c(x, k, a, norm, True)
    return x


def rfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The transform of a real input along `axis`: the n // 2 + 1 non-negative frequencies.
    TypeError for complex input."""
    x = _real_float(_as_array(x, "rfft"), "rfft")
    _check_n(n)
    axis = normalize_axis_index(axis, x.ndim)
    n = x.shape[axis] if n is None else n
    out = moveaxis(_c2c(x, n, axis, norm, False), axis, -1)
    return moveaxis(out[..., : n // 2 + 1], -1, axis)


def irfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The inverse of rfft: n real points (default 2 (m - 1) for m input points) from the
    non-negative frequencies of a Hermitian-symmetric spectrum."""
    x = _complex(_as_array(x, "irfft"))
    _check_norm(norm)
    _check_n(n)
    axis = normalize_axis_index(axis, x.ndim)
    z = moveaxis(x, axis, -1)
    n = 2 * (z.shape[-1] - 1) if n is None else n
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    keep = n // 2 + 1
    z = _resize_last(z, keep)
    tail = z[..., 1: n - keep + 1]
    if tail.shape[-1]:
        tail = unary("conjugate", tail)[..., ::-1]
        z = concatenate([z, tail], axis=-1)
    out = _transform(z, 1).real * _scale(norm, n, True)
    return moveaxis(out, -1, axis)


def rfftn(x, /, *, s=None, axes=None, norm="backward"):
    """The n-dimensional transform of a real input: rfft over the last of `axes`, fft over the
    others."""
    x = _real_float(_as_array(x, "rfftn"), "rfftn")
    s, axes = _axes_and_sizes(x, s, axes)
    x = rfft(x, n=s[-1], axis=axes[-1], norm=norm)
    for k, a in zip(s[:-1], axes[:-1]):
        x = _c2c(x, k, a, norm, False)
    return x


def irfftn(x, /, *, s=None, axes=None, norm="backward"):
    """The inverse of rfftn: ifft over all but the last of `axes`, irfft over the last (whose
    output length is s[-1], default 2 (m - 1))."""
    x = _complex(_as_array(x, "irfftn"))
    if axes is None and s is None:
        axes = list(range(x.ndim))
    if axes is None:
        axes = list(range(x.ndim - len(s), x.ndim))
    axes = [normalize_axis_index(a, x.ndim) for a in axes]
    if s is None:
        s = [x.shape[a] for a in axes[:-1]] + [2 * (x.shape[axes[-1]] - 1)]
    s = list(s)
    if len(s) != len(axes):
        raise ValueError(f"When given, axes and shape arguments have to be of the same length "
                         f"(got s={tuple(s)}, axes={tuple(axes)})")
    s = [x.shape[a] if k == -1 else k for k, a in zip(s[:-1], axes[:-1])] + [
        2 * (x.shape[axes[-1]] - 1) if s[-1] == -1 else s[-1]]
    for k, a in zip(s[:-1], axes[:-1]):
        x = _c2c(x, k, a, norm, True)
    return irfft(x, n=s[-1], axis=axes[-1], norm=norm)


_SWAP = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def hfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The transform of a Hermitian-symmetric signal given by its first half: n real points
    (irfft of the conjugate with the norm's direction swapped, as NumPy)."""
    _check_norm(norm)
    x = _complex(_as_array(x, "hfft"))
    return irfft(unary("conjugate", x), n=n, axis=axis, norm=_SWAP[norm])


def ihfft(x, /, *, n=None, axis=-1, norm="backward"):
    """The inverse of hfft: the conjugate of rfft with the norm's direction swapped."""
    _check_norm(norm)
    r = rfft(x, n=n, axis=axis, norm=_SWAP[norm])
    return unary("conjugate", r)


# -- frequencies and shifts ---------------------------------------------------------------------

def _freq_dtype(dtype):
    if dtype is None:
        return "float32"            # carray's default real floating dtype
    from carray.core._dtype import as_dtype
    dt = as_dtype(dtype)
    if dt.kind != "f":
        raise ValueError(f"dtype must be a real floating dtype, got {dt.name}")
    return dt


def fftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """The sample frequencies of an n-point fft: [0, 1, ..., -(n // 2), ..., -1] / (d n)."""
    _check_n(n, "points")
    values = [(k if k < (n + 1) // 2 else k - n) / (d * n) for k in range(n)]
    return asarray(values, dtype=_freq_dtype(dtype), device=device)


def rfftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """The sample frequencies of an n-point rfft: [0, 1, ..., n // 2] / (d n)."""
    _check_n(n, "points")
    values = [k / (d * n) for k in range(n // 2 + 1)]
    return asarray(values, dtype=_freq_dtype(dtype), device=device)


def _shift(x, axes, sign):
    from carray._api_manipulation import roll
    x = _as_array(x, "fftshift")
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, int):
        axes = (axes,)
    axes = tuple(normalize_axis_index(a, x.ndim) for a in axes)
    shifts = tuple(sign * (x.shape[a] // 2) for a in axes)
    return roll(x, shifts, axis=axes) if axes else x.copy()


def fftshift(x, /, *, axes=None):
    """x with the zero frequency moved to the centre of `axes` (all by default)."""
    return _shift(x, axes, 1)


def ifftshift(x, /, *, axes=None):
    """The inverse of fftshift."""
    return _shift(x, axes, -1)


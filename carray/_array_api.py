"""The array API standard's namespace pieces that are about dtypes and devices.

`__array_namespace_info__()` (capabilities, devices, dtypes), `finfo`, `iinfo`, `isdtype`,
`can_cast`, `astype`, the constants `e pi inf nan newaxis` and `__array_api_version__`. Every
list of dtypes is derived from carray.core._dtype.DTYPE_NAMES and the dtype objects' kind and
itemsize, so dtypes added there appear here without edits.
"""

import math

from carray.core._array import Array
from carray.core._dtype import DTYPE_NAMES, DType, as_dtype, promote_types

__array_api_version__ = "2025.12"
SUPPORTED_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")

e = math.e
pi = math.pi
inf = math.inf
nan = math.nan
newaxis = None

_MAX_DIMS = 32      # carray.core._strided.MAXDIMS

# the standard's kind names -> the dtype kinds (NumPy's kind characters) they cover
_KINDS = {
    "bool": ("b",),
    "signed integer": ("i",),
    "unsigned integer": ("u",),
    "integral": ("i", "u"),
    "real floating": ("f",),
    "complex floating": ("c",),
    "numeric": ("i", "u", "f", "c"),
}

# IEEE-style formats: (fraction bits, exponent bits, decimal digits of precision)
_FLOAT_FORMATS = {"float16": (10, 5, 3), "bfloat16": (7, 8, 2), "float32": (23, 8, 6),
                  "float64": (52, 11, 15)}


def _all_dtypes():
    return [as_dtype(name) for name in DTYPE_NAMES]


def _dtype_arg(x, what):
    """The dtype of `x` (a dtype, an Array, or anything as_dtype takes); TypeError otherwise."""
    if isinstance(x, Array):
        return x.dtype
    try:
        return as_dtype(x)
    except TypeError:
        raise TypeError(f"{what}: expected a dtype or an array, got {x!r}") from None


def namespace(api_version=None):
    """The carray module, for Array.__array_namespace__ (ValueError for other versions)."""
    if api_version is not None and api_version not in SUPPORTED_VERSIONS:
        raise ValueError(f"unsupported array API version {api_version!r}; carray supports "
                         f"{', '.join(SUPPORTED_VERSIONS)}")
    import carray
    return carray


def isdtype(dtype, kind):
    """True when `dtype` is of `kind`: a dtype, one of the standard's kind names ('bool',
    'signed integer', 'unsigned integer', 'integral', 'real floating', 'complex floating',
    'numeric') or a tuple of those. TypeError for a non-dtype, ValueError for an unknown name."""
    if not isinstance(dtype, DType):
        raise TypeError(f"isdtype: dtype must be a carray dtype, got {dtype!r}")
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(f"isdtype: kind {kind!r} is not a known kind name; expected one "
                             f"of {', '.join(map(repr, _KINDS))}")
        # bfloat16's kind is ml_dtypes' 'V', but it is a real floating type
        return (dtype.kind if dtype.name != "bfloat16" else "f") in _KINDS[kind]
    if isinstance(kind, DType):
        return dtype == kind
    raise TypeError(f"isdtype: kind must be a dtype, a kind name or a tuple of them, "
                    f"got {kind!r}")


def can_cast(from_, to, /):
    """True when values of `from_` (a dtype or an array) cast to dtype `to` without loss
    (NumPy's 'safe' casting: the promotion of the two is `to`)."""
    a = _dtype_arg(from_, "can_cast")
    b = _dtype_arg(to, "can_cast")
    try:
        return promote_types(a, b) == b
    except TypeError:
        return False


def astype(x, dtype, /, *, copy=True, device=None):
    """x cast to `dtype` (on `device` when given); x itself when nothing changes and
    copy=False. TypeError when x is not an Array."""
    if not isinstance(x, Array):
        raise TypeError(f"astype: x must be a carray Array, got {type(x).__name__}")
    out = x.astype(dtype, copy=copy)
    if device is not None:
        out = out.to(device)
    return out


class finfo_object:
    """Machine limits of a floating dtype (NumPy's finfo): bits, eps, max, min, smallest_normal,
    tiny, resolution, precision, dtype (the real dtype for complex ones)."""

    def __init__(self, dtype):
        fraction, exponent, digits = _FLOAT_FORMATS[dtype.name]
        emax = 2 ** (exponent - 1) - 1
        self.dtype = dtype
        self.bits = dtype.itemsize * 8
        self.eps = 2.0 ** -fraction
        self.epsneg = 2.0 ** -(fraction + 1)
        self.max = (2.0 - 2.0 ** -fraction) * 2.0 ** emax
        self.min = -self.max
        self.smallest_normal = 2.0 ** (1 - emax)
        self.tiny = self.smallest_normal
        self.smallest_subnormal = 2.0 ** (1 - emax - fraction)
        self.precision = digits
        self.resolution = 10.0 ** -digits
        if self.bits == 16:         # NumPy's and ml_dtypes' resolution is a value of the dtype
            from carray.core._format import _to_bf16, _to_f16
            self.resolution = (_to_f16 if dtype.name == "float16" else _to_bf16)(self.resolution)
        self.nmant = fraction
        self.nexp = exponent
        self.maxexp = emax + 1
        self.minexp = 1 - emax

    def __repr__(self):
        return (f"finfo(resolution={self.resolution}, min={self.min:.6e}, max={self.max:.6e}, "
                f"dtype={self.dtype.name})")


class iinfo_object:
    """Machine limits of an integer dtype (NumPy's iinfo): bits, min, max, dtype."""

    def __init__(self, dtype):
        self.dtype = dtype
        self.bits = dtype.itemsize * 8
        self.kind = dtype.kind
        signed = dtype.kind == "i"
        self.min = -(2 ** (self.bits - 1)) if signed else 0
        self.max = 2 ** (self.bits - 1) - 1 if signed else 2 ** self.bits - 1

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype.name})"


def finfo(type, /):  # noqa: A002  (the standard's argument name)
    """Limits of a floating dtype (or an array's): ValueError for other dtypes."""
    dt = _dtype_arg(type, "finfo")
    if dt.kind == "c":
        dt = next(d for d in _all_dtypes() if d.kind == "f" and d.itemsize == dt.itemsize // 2
                  and d.name in _FLOAT_FORMATS and d.name != "bfloat16")
    if dt.name not in _FLOAT_FORMATS:
        raise ValueError(f"finfo: data type {dt.name!r} is not inexact; expected a floating "
                         f"dtype")
    return finfo_object(dt)


def iinfo(type, /):  # noqa: A002
    """Limits of an integer dtype (or an array's): ValueError for other dtypes."""
    dt = _dtype_arg(type, "iinfo")
    if dt.kind not in ("i", "u"):
        raise ValueError(f"iinfo: invalid integer data type {dt.name!r}; expected an integer "
                         f"dtype")
    return iinfo_object(dt)


def _gpu_available():
    """True when an OpenCL device exists; enumerates platforms, never creates a context."""
    try:
        from carray.opencl import _runtime
        cl = _runtime._import_pyopencl()
        return bool(_runtime._candidates(cl))
    except Exception:       # no pyopencl, no platform, no device: no "gpu"
        return False


def _check_device(device):
    if device is not None and device not in ("cpu", "gpu"):
        raise ValueError(f"unknown device {device!r}; expected 'cpu' or 'gpu'")


class Info:
    """What `carray.__array_namespace_info__()` returns: the standard's inspection API."""

    __module__ = "carray"

    def capabilities(self):
        """The optional features carray has."""
        return {"boolean indexing": True, "data-dependent shapes": True,
                "max dimensions": _MAX_DIMS}

    def default_device(self):
        """'cpu': where arrays go without device=."""
        return "cpu"

    def devices(self):
        """('cpu',), and 'gpu' beside it when an OpenCL device exists (a tuple: 2025.12)."""
        return ("cpu", "gpu") if _gpu_available() else ("cpu",)

    def default_dtypes(self, *, device=None):
        """The dtypes factories use without dtype=: float32 (carray's default float), int64."""
        _check_device(device)
        out = {"real floating": as_dtype("float32"), "integral": as_dtype("int64"),
               "indexing": as_dtype("int64")}
        complexes = [d for d in _all_dtypes() if d.kind == "c"]
        if complexes:
            out["complex floating"] = min(complexes, key=lambda d: d.itemsize)
        return out

    def dtypes(self, *, device=None, kind=None):
        """{name: dtype} of the dtypes `device` supports, limited to `kind` (a kind name as in
        isdtype, or a tuple of them; None for all)."""
        _check_device(device)
        # as NumPy's: the standard's dtypes only (no float16, and no bfloat16)
        found = [d for d in _all_dtypes() if d.name not in ("float16", "bfloat16")]
        if device == "gpu":
            from carray.opencl import runtime
            if not runtime().fp64:
                found = [d for d in found if d.kind not in "fc" or d.itemsize // (
                    2 if d.kind == "c" else 1) < 8]
        if kind is not None:
            found = [d for d in found if isdtype(d, kind)]
        return {d.name: d for d in found}


def __array_namespace_info__():
    """The standard's inspection object: capabilities, default_device, default_dtypes,
    devices, dtypes."""
    return Info()

"""The 2-byte floats (float16, bfloat16) in the front ends: the one place that says how they
compute. Their operands widen to float32, the float32 loop or kernel runs, and a result of the
2-byte type is rounded back once (as NumPy computes float16 ops: in float32, then rounded).
Comparisons, predicates and arg-reductions keep their bool/int64 results."""

import functools

from carray.core._dtype import as_dtype

_HALF = ("float16", "bfloat16")
_F32 = as_dtype("float32")


def _half_of(x):
    """The dtype of x when it is an array of a 2-byte float, else None."""
    dt = getattr(x, "dtype", None)
    if dt is not None and getattr(dt, "name", None) in _HALF and hasattr(x, "astype"):
        return dt
    return None


def widen(x):
    """x as float32 when it is an array of a 2-byte float; anything else unchanged."""
    return x.astype(_F32) if _half_of(x) is not None else x


def narrow(result, dtype):
    """result (float32 or a tuple of arrays) rounded back to the 2-byte float `dtype`; results
    that are not float32 (bool, int64 indices) stay as they are."""
    if isinstance(result, tuple):
        return tuple(narrow(r, dtype) for r in result)
    if getattr(result, "dtype", None) == _F32:
        return result.astype(as_dtype(dtype))
    return result


def _half_dtype(values):
    for v in values:
        dt = _half_of(v)
        if dt is not None:
            return dt
    return None


def accepting_half(fn):
    """fn (a function of float32/float64 arrays that returns new arrays) made to take 2-byte
    float arrays too: they widen to float32 and its float32 results round back to their dtype."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        dt = _half_dtype(args) or _half_dtype(kwargs.values())
        if dt is None:
            return fn(*args, **kwargs)
        return narrow(fn(*map(widen, args), **{k: widen(v) for k, v in kwargs.items()}), dt)
    return wrapper

# cython: wraparound=True
# (Python-level code here uses negative indices; hot loops index C arrays with i >= 0)
"""Factories: empty, zeros, ones, full, arange, linspace, eye and the *_like forms.

All take dtype= and device=. Without dtype= they follow carray's defaults: float32 for float
values and for zeros/ones/empty/linspace/eye, int64 for Python ints, bool for bools.
"""

import math

from carray.core._array cimport (Array, new_array, new_device_array, copy_into, on_gpu, parse_shape,
                            parse_dtype_num, parse_device, gpu_backend)
from carray.core._array cimport as_array
from carray.core._dtype cimport (BOOL, FLOAT32, FLOAT64, INT32, INT64, dtype_of, int_fits,
                                 is_int_num, itemsize_of, bool_t)
from carray.core._dtype cimport is_half_num
from carray.core._strided cimport MAXDIMS
from libc.stdint cimport int32_t, int64_t
from libc.math cimport floor
from libc.string cimport memset


cdef Array _new(object shape, object dtype, object device, int default):
    cdef Py_ssize_t buf[MAXDIMS]
    cdef str dev = parse_device(device)
    cdef int n = parse_shape(shape, buf)
    if dev == "gpu":
        return new_device_array(n, buf, parse_dtype_num(dtype, default))
    return new_array(n, buf, parse_dtype_num(dtype, default))


cdef object _like_device(Array src, object device):
    """device, or src's device when device is None (as PyTorch's *_like)."""
    return src.device if device is None else device


cdef Array _on(Array a, object device):
    """a moved to `device` (factories that build their values on the host)."""
    return a if parse_device(device) == "cpu" else a.to("gpu")


def empty(shape, dtype=None, device=None):
    """A new array of `shape` with uninitialised contents (float32 unless dtype= is given)."""
    return _new(shape, dtype, device, FLOAT32)


def zeros(shape, dtype=None, device=None):
    """A new array of `shape` filled with 0 (float32 unless dtype= is given)."""
    cdef Array a = _new(shape, dtype, device, FLOAT32)
    if on_gpu(a):
        a.fill(0)
    else:
        memset(a.data, 0, a.size_c() * a.itemsize)
    return a


def ones(shape, dtype=None, device=None):
    """A new array of `shape` filled with 1 (float32 unless dtype= is given)."""
    cdef Array a = _new(shape, dtype, device, FLOAT32)
    a.fill(1)
    return a


def _default_num_for(value):
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return INT64
    if isinstance(value, float) and not hasattr(value, "dtype"):    # np.float64 keeps float64
        return FLOAT32
    return as_array(value, -1).dtype_num


def full(shape, fill_value, dtype=None, device=None):
    """A new array of `shape` filled with fill_value (dtype from fill_value unless given:
    bool, int64 for ints, float32 for floats; an array fill_value broadcasts)."""
    cdef Array a = _new(shape, dtype, device, _default_num_for(fill_value))
    a[...] = fill_value
    return a


def empty_like(a, dtype=None, shape=None, device=None):
    """A new uninitialised array with a's shape and dtype (or the ones given)."""
    cdef Array src = as_array(a, -1)
    return _new(src.shape if shape is None else shape, dtype, _like_device(src, device),
                src.dtype_num)


def zeros_like(a, dtype=None, shape=None, device=None):
    """A new array of zeros with a's shape and dtype (or the ones given)."""
    cdef Array src = as_array(a, -1)
    return zeros(src.shape if shape is None else shape, dtype=src.dtype if dtype is None else dtype,
                 device=_like_device(src, device))


def ones_like(a, dtype=None, shape=None, device=None):
    """A new array of ones with a's shape and dtype (or the ones given)."""
    cdef Array src = as_array(a, -1)
    return ones(src.shape if shape is None else shape, dtype=src.dtype if dtype is None else dtype,
                device=_like_device(src, device))


def full_like(a, fill_value, dtype=None, shape=None, device=None):
    """A new array with a's shape and dtype (or the ones given) filled with fill_value."""
    cdef Array src = as_array(a, -1)
    return full(src.shape if shape is None else shape, fill_value,
                dtype=src.dtype if dtype is None else dtype, device=_like_device(src, device))


def _as_number(x, name):
    if isinstance(x, (bool, int, float)):
        return x
    if isinstance(x, Array) or hasattr(x, "__float__"):
        arr = as_array(x, -1)
        if arr.ndim != 0:
            raise TypeError(f"{name} must be a scalar, got an array of shape {arr.shape}")
        return arr.item()
    raise TypeError(f"{name} must be a number, got {type(x).__name__}")


def arange(start, stop=None, step=None, dtype=None, device=None):
    """Evenly spaced values in [start, stop) with `step` (NumPy's arange).

    int64 when start, stop and step are ints, float32 otherwise (unless dtype= is given).
    Raises ZeroDivisionError for step 0.
    """
    if parse_device(device) == "gpu":
        plan = _arange_plan(start, stop, step, dtype)
        if plan is not None:    # made on the device (no upload)
            return gpu_backend().arange(*plan)
    r = _arange_host(start, stop, step, dtype)
    return _on(r, device)


def _wrap_int32(v):
    return ((v + (1 << 31)) % (1 << 32)) - (1 << 31)


def _arange_plan(start, stop, step, dtype):
    """(n, type number, first, second) for the device's arange kernel when the dtype is int32,
    int64, float32 or float64 (the kernel computes first + i * (second - first) in the dtype as
    _arange_host does); None for the others (made on the host). Errors as _arange_host's."""
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    start = _as_number(start, "start")
    stop = _as_number(stop, "stop")
    step = _as_number(step, "step")
    if step == 0:
        raise ZeroDivisionError("arange: step must not be zero")
    all_int = all(isinstance(v, int) for v in (start, stop, step))
    cdef int num = parse_dtype_num(dtype, INT64 if all_int else FLOAT32)
    if num == BOOL or is_int_num(num) and num != INT32 and num != INT64 or is_half_num(num):
        return None
    if all_int:
        n = max(0, -((start - stop) // step))
    else:
        try:
            n = max(0, int(math.ceil((stop - start) / step)))
        except (OverflowError, ValueError):
            raise ValueError(f"arange: cannot compute the length of arange({start}, {stop}, "
                             f"{step})") from None
    if n >= (<Py_ssize_t>1 << 62):
        raise ValueError(f"arange: {n} elements exceed the maximum allowed size")
    second = start + step
    if num == FLOAT32 or num == FLOAT64:
        return n, num, float(start), float(second)
    first, second = int(start), int(second)
    if num == INT32:
        return n, num, _wrap_int32(first), _wrap_int32(second)
    if not -(1 << 63) <= first < (1 << 63) or not -(1 << 63) <= second < (1 << 63):
        return None
    return n, num, first, second


def _arange_host(start, stop=None, step=None, dtype=None, device=None):
    """Evenly spaced values in [start, stop) with `step` (NumPy's arange).

    int64 when start, stop and step are ints, float32 otherwise (unless dtype= is given).
    Raises ZeroDivisionError for step 0.
    """
    parse_device(device)
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    start = _as_number(start, "start")
    stop = _as_number(stop, "stop")
    step = _as_number(step, "step")
    if step == 0:
        raise ZeroDivisionError("arange: step must not be zero")
    all_int = all(isinstance(v, int) for v in (start, stop, step))
    cdef int num = parse_dtype_num(dtype, INT64 if all_int else FLOAT32)
    if is_int_num(num) and num != INT32 and num != INT64:
        # the narrow and unsigned ints: NumPy checks start's range, then the values wrap
        if isinstance(start, int) and not int_fits(start, num):
            raise OverflowError(f"Python integer {start} out of bounds for {dtype_of(num).name}")
        return _arange_host(start, stop, step, dtype_of(INT64)).astype(dtype_of(num))
    if is_half_num(num):            # in float32, each value rounded once
        return _arange_host(start, stop, step, dtype_of(FLOAT32)).astype(dtype_of(num))
    if all_int:
        n = max(0, -((start - stop) // step))
    else:
        try:
            n = max(0, int(math.ceil((stop - start) / step)))
        except (OverflowError, ValueError):
            raise ValueError(f"arange: cannot compute the length of arange({start}, {stop}, "
                             f"{step})") from None
    if n >= (<Py_ssize_t>1 << 62):
        raise ValueError(f"arange: {n} elements exceed the maximum allowed size")
    cdef Py_ssize_t size = n, i
    cdef Array a = new_array(1, &size, num)
    cdef double fstart, fstep
    cdef int64_t istart, istep
    if num == INT64 or num == INT32:
        if all_int:
            istart = start
            istep = step
            if num == INT64:
                for i in range(size):
                    (<int64_t*>a.data)[i] = istart + i * istep
            else:
                for i in range(size):
                    (<int32_t*>a.data)[i] = <int32_t>(istart + i * istep)
            return a
    # NumPy's algorithm, so that values match bit for bit: the first two values are start and
    # start + step (a Python sum) converted to the dtype; value i is first + i * (second - first)
    # in the dtype's own arithmetic (float32 for float32).
    if num == BOOL and size > 2:
        raise TypeError(f"arange() is only supported for booleans when the result has at most "
                        f"length 2, got length {size}")
    second = start + step
    cdef float f0, fd
    cdef double d0, dd
    if num == FLOAT32:
        f0 = <float>start
        fd = <float>second - f0
        for i in range(size):
            (<float*>a.data)[i] = f0 + <float>i * fd
        if size > 0:
            (<float*>a.data)[0] = f0            # start itself (keeps -0.0)
        if size > 1:
            (<float*>a.data)[1] = <float>second
    elif num == FLOAT64:
        d0 = start
        dd = <double>second - d0
        for i in range(size):
            (<double*>a.data)[i] = d0 + <double>i * dd
        if size > 0:
            (<double*>a.data)[0] = d0
        if size > 1:
            (<double*>a.data)[1] = <double>second
    elif num == BOOL:
        for i in range(size):
            (<bool_t*>a.data)[i] = bool(start if i == 0 else second)
    else:                           # an integer dtype from float arguments: truncate, as NumPy
        istart = int(start)
        istep = int(second) - istart
        for i in range(size):
            if num == INT64:
                (<int64_t*>a.data)[i] = istart + i * istep
            else:
                (<int32_t*>a.data)[i] = <int32_t>(istart + i * istep)
    return a


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, device=None):
    """`num` evenly spaced values from start to stop (included unless endpoint=False).

    float32 unless dtype= is given; with retstep=True also returns the step.
    Raises ValueError for num < 0.
    """
    parse_device(device)
    r = _linspace_host(start, stop, num, endpoint, retstep, dtype)
    if retstep:
        return _on(r[0], device), r[1]
    return _on(r, device)


def _linspace_host(start, stop, num=50, endpoint=True, retstep=False, dtype=None, device=None):
    """`num` evenly spaced values from start to stop (included unless endpoint=False).

    float32 unless dtype= is given; with retstep=True also returns the step.
    Raises ValueError for num < 0.
    """
    parse_device(device)
    num = operator_index(num, "num")
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    start = float(_as_number(start, "start"))
    stop = float(_as_number(stop, "stop"))
    cdef Py_ssize_t n = num, i
    cdef double div = (n - 1) if endpoint else n
    cdef double fstart = start, delta = stop - start
    cdef double step = delta / div if div > 0 else float("nan")
    cdef Array tmp = new_array(1, &n, FLOAT64)
    cdef double* t = <double*>tmp.data
    for i in range(n):
        t[i] = fstart + i * step if div > 0 else fstart + i * delta
    if endpoint and n > 1:
        t[n - 1] = stop
    cdef int out_num = parse_dtype_num(dtype, FLOAT32)
    if is_int_num(out_num):
        for i in range(n):
            t[i] = floor(t[i])          # NumPy 2 rounds towards -inf for integer dtypes
    cdef Array a = new_array(1, &n, out_num)
    copy_into(a, tmp)
    if retstep:
        return a, (step if div > 0 else float("nan"))
    return a


def operator_index(x, name):
    import operator
    if isinstance(x, (float, bool)):
        raise TypeError(f"{name} must be an integer, got {type(x).__name__} {x!r}")
    try:
        return operator.index(x)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {type(x).__name__}") from None


def eye(N, M=None, k=0, dtype=None, device=None):
    """An N x M array with ones on diagonal k and zeros elsewhere (float32 unless dtype=)."""
    return _eye_host(N, M, k, dtype, device)


def _eye_host(N, M=None, k=0, dtype=None, device=None):
    """An N x M array with ones on diagonal k and zeros elsewhere (float32 unless dtype=)."""
    N = operator_index(N, "N")
    M = N if M is None else operator_index(M, "M")
    k = operator_index(k, "k")
    if N < 0 or M < 0:
        raise ValueError(f"negative dimensions are not allowed, got N={N}, M={M}")
    k = max(-N, min(k, M))      # an offset past the corner (even -2**63) leaves no diagonal
    cdef Array a = zeros((N, M), dtype=dtype, device=device)
    cdef Py_ssize_t first = max(0, -k), last = min(N, M - k) if k < M else 0
    # the diagonal as one strided view of the flat array (one fill, also on the device)
    if last > first:
        a.reshape(-1)[first * M + first + k::M + 1][:last - first] = 1
    return a


def identity(n, dtype=None, device=None):
    """The n x n identity matrix."""
    return eye(n, dtype=dtype, device=device)

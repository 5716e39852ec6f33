"""Cumulative sums and products along an axis: cumsum and cumprod (NumPy's names and arguments).

The input is cast and copied into the C-contiguous result, which is then scanned in place lane by
lane: on the host by the typed loop below (it walks the dims after the axis innermost, so it
vectorises), on the device by carray/opencl/_scan.py (one work item per lane). Both add (or
multiply) in order, as NumPy's accumulate does, so results match NumPy's bit for bit.
"""

from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t

from carray.core._array cimport (Array, as_array, copy_into, gpu_backend, new_array_on, normalize_axis,
                            on_gpu, parse_dtype_num)
from carray.core._dtype cimport (BOOL, FLOAT32, FLOAT64, INT8, INT16, INT32, INT64, UINT8, UINT16,
                                 UINT32, UINT64, bool_t, is_unsigned_num, itemsize_of, num_t, u8_t)

from carray.ops._optable cimport S_PROD, S_SUM
from carray.core._dtype cimport dtype_of as _dtype_of, is_half_num
from carray.ops._half import narrow, widen


cdef inline num_t _add(num_t a, num_t b) noexcept nogil:
    """a + b; integers wrap around (through unsigned arithmetic), bools or."""
    if num_t is bool_t:
        return a | b
    elif num_t is int32_t:
        return <int32_t>(<uint32_t>a + <uint32_t>b)
    elif num_t is int64_t:
        return <int64_t>(<uint64_t>a + <uint64_t>b)
    else:
        return a + b


cdef inline num_t _mul(num_t a, num_t b) noexcept nogil:
    """a * b; integers wrap around (through unsigned arithmetic), bools and."""
    if num_t is bool_t:
        return a & b
    elif num_t is int32_t:
        return <int32_t>(<uint32_t>a * <uint32_t>b)
    elif num_t is int64_t:
        return <int64_t>(<uint64_t>a * <uint64_t>b)
    elif num_t is int8_t or num_t is int16_t or num_t is u8_t or num_t is uint16_t:
        return <num_t>(<uint32_t>a * <uint32_t>b)
    else:
        return a * b


cdef void _scan(num_t* r, Py_ssize_t outer, Py_ssize_t n, Py_ssize_t inner,
                int op) noexcept nogil:
    """r[o, k, i] = r[o, k - 1, i] + r[o, k, i] (or *) for k = 1 .. n - 1, in place; r is
    C-contiguous with shape (outer, n, inner)."""
    cdef Py_ssize_t o, k, i
    cdef num_t* cur
    cdef num_t* prev
    for o in range(outer):
        for k in range(1, n):
            cur = r + (o * n + k) * inner
            prev = cur - inner
            if op == S_SUM:
                for i in range(inner):
                    cur[i] = _add(prev[i], cur[i])
            else:
                for i in range(inner):
                    cur[i] = _mul(prev[i], cur[i])


cdef object _accumulate(int op, object a, object axis, object dtype, object out, str name):
    cdef Array x = as_array(a, -1)
    cdef int ax, d
    if out is not None and not isinstance(out, Array):
        raise TypeError("output must be an array")
    if axis is None:
        x = x.reshape(-1)
        ax = 0
    else:
        if x.ndim == 0:
            x = x.reshape(1)    # NumPy accumulates a 0-d array as a 1-element 1-d one
        ax = normalize_axis(axis, x.ndim)
    if out is not None:      # checked before the work
        if out.shape != x.shape:
            raise ValueError(f"{name}: provided out has shape {out.shape}, expected {x.shape}")
        if on_gpu(out) != on_gpu(x):
            raise ValueError(f"{name}: out is on device {out.device!r} but the input is on "
                             f"{x.device!r}; nothing moves between devices implicitly")
        if not out.flags.writeable:
            raise ValueError("output array is read-only")
    cdef int num = x.dtype_num
    # NumPy 2 accumulates bools and ints narrower than 64 bits in int64 (uint64 if unsigned)
    cdef int ct = parse_dtype_num(dtype, num if itemsize_of(num) == 8 or num == FLOAT32 or
                                  is_half_num(num) else
                                  (UINT64 if is_unsigned_num(num) else INT64))
    if is_half_num(ct):             # accumulated in float32, each result rounded back once
        res = narrow(_accumulate(op, widen(x.astype(_dtype_of(ct))), ax if axis is not None
                                 else None, _dtype_of(FLOAT32), None, name), _dtype_of(ct))
        if out is None:
            return res
        copy_into(out, res)
        return out
    cdef Array r = new_array_on(x.ndim, x.shape_, ct, x)
    copy_into(r, x)
    cdef Py_ssize_t outer = 1, inner = 1, n = x.shape_[ax]
    for d in range(ax):
        outer *= x.shape_[d]
    for d in range(ax + 1, x.ndim):
        inner *= x.shape_[d]
    if n > 1 and outer * inner > 0:
        if on_gpu(r):
            gpu_backend().scan(r, outer, n, inner, op)
        else:
            with nogil:
                if ct == FLOAT32:
                    _scan(<float*>r.data, outer, n, inner, op)
                elif ct == FLOAT64:
                    _scan(<double*>r.data, outer, n, inner, op)
                elif ct == INT64:
                    _scan(<int64_t*>r.data, outer, n, inner, op)
                elif ct == INT32:
                    _scan(<int32_t*>r.data, outer, n, inner, op)
                elif ct == INT8:
                    _scan(<int8_t*>r.data, outer, n, inner, op)
                elif ct == INT16:
                    _scan(<int16_t*>r.data, outer, n, inner, op)
                elif ct == UINT8:
                    _scan(<u8_t*>r.data, outer, n, inner, op)
                elif ct == UINT16:
                    _scan(<uint16_t*>r.data, outer, n, inner, op)
                elif ct == UINT32:
                    _scan(<uint32_t*>r.data, outer, n, inner, op)
                elif ct == UINT64:
                    _scan(<uint64_t*>r.data, outer, n, inner, op)
                else:
                    _scan(<bool_t*>r.data, outer, n, inner, op)
    if out is None:
        return r
    copy_into(out, r)      # cast as NumPy's accumulate into out (unsafe)
    return out


def cumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum along `axis` (of the flattened array when axis is None), C-contiguous.
    bool and int32 accumulate in int64, as NumPy 2; dtype= casts the input first. Raises
    AxisError for a bad axis, TypeError when out is not an Array, ValueError when its shape or
    device differs from the result's."""
    return _accumulate(S_SUM, a, axis, dtype, out, "cumsum")


def cumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product along `axis` (of the flattened array when axis is None); dtypes,
    out= and errors as cumsum."""
    return _accumulate(S_PROD, a, axis, dtype, out, "cumprod")

"""Sorting along an axis: sort and argsort (NumPy's names and arguments), always stable.

The axis is moved last and the lanes copied into one C-contiguous (lanes, n) array, each lane is
merge sorted in place (on the host by the typed loops below, on the device by
carray/opencl/_sort.py, one work item per lane), and the result is moved back into a
C-contiguous array of the input's shape. NaNs sort last; ties keep their original order.
"""

from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cython.parallel cimport prange, threadid
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy

from carray.core._array cimport (Array, as_array, copy_into, gpu_backend, new_array_on, normalize_axis,
                            on_gpu)
from carray.core._array import ascontiguousarray
from carray.core._dtype cimport is_complex_num
from carray.core._dtype cimport (BOOL, FLOAT32, FLOAT64, INT8, INT16, INT32, INT64, UINT8, UINT16,
                                 UINT32, UINT64, bool_t, itemsize_of, num_t, u8_t)
from carray.core._strided cimport max_threads, region_enter, region_exit, thread_seen
from carray.core._dtype cimport is_half_num
from carray.ops._half import narrow, widen

cdef enum:
    RUN = 16                 # lanes are insertion sorted in runs of this length, then merged
    PARALLEL_MIN = 1 << 15   # elements below which sorting stays on one thread


cdef inline bint _lt(num_t a, num_t b) noexcept nogil:
    """a sorts before b: a < b, and every number before NaN."""
    if num_t is float or num_t is double:
        return a < b or (b != b and a == a)
    else:
        return a < b


cdef void _sort_lane(num_t* k, int64_t* ix, Py_ssize_t n, num_t* tk, int64_t* ti) noexcept nogil:
    """Stable sort of k[0:n] in place (ix[0:n] moves along when not NULL): insertion sort of runs
    of RUN, then bottom-up merges back and forth between k and the scratch tk (and ti)."""
    cdef Py_ssize_t i, j, lo, mid, hi, a, b, o, w
    cdef num_t v
    cdef int64_t vi = 0
    cdef num_t* src = k
    cdef num_t* dst = tk
    cdef int64_t* isrc = ix
    cdef int64_t* idst = ti
    lo = 0
    while lo < n:
        hi = lo + RUN if lo + RUN < n else n
        for i in range(lo + 1, hi):
            v = k[i]
            if ix != NULL:
                vi = ix[i]
            j = i
            while j > lo and _lt(v, k[j - 1]):
                k[j] = k[j - 1]
                if ix != NULL:
                    ix[j] = ix[j - 1]
                j -= 1
            k[j] = v
            if ix != NULL:
                ix[j] = vi
        lo = hi
    w = RUN
    while w < n:
        lo = 0
        while lo < n:
            mid = lo + w if lo + w < n else n
            hi = lo + 2 * w if lo + 2 * w < n else n
            a, b, o = lo, mid, lo
            while a < mid and b < hi:
                if _lt(src[b], src[a]):        # the left one wins ties: stable
                    dst[o] = src[b]
                    if ix != NULL:
                        idst[o] = isrc[b]
                    b += 1
                else:
                    dst[o] = src[a]
                    if ix != NULL:
                        idst[o] = isrc[a]
                    a += 1
                o += 1
            while a < mid:
                dst[o] = src[a]
                if ix != NULL:
                    idst[o] = isrc[a]
                a += 1
                o += 1
            while b < hi:
                dst[o] = src[b]
                if ix != NULL:
                    idst[o] = isrc[b]
                b += 1
                o += 1
            lo = hi
        src, dst = dst, src
        isrc, idst = idst, isrc
        w *= 2
    if src != k:
        memcpy(k, src, n * sizeof(num_t))
        if ix != NULL:
            memcpy(ix, isrc, n * sizeof(int64_t))


cdef void _sort_lanes(num_t* k, int64_t* ix, Py_ssize_t first, Py_ssize_t last, Py_ssize_t n,
                      num_t* tk, int64_t* ti) noexcept nogil:
    """Sort lanes first .. last - 1 of the (lanes, n) array k (ix gets each lane's positions)."""
    cdef Py_ssize_t m, j
    for m in range(first, last):
        if ix != NULL:
            for j in range(n):
                ix[m * n + j] = j
        _sort_lane(k + m * n, ix + m * n if ix != NULL else NULL, n, tk, ti)


cdef int _sort_host(num_t* k, int64_t* ix, Py_ssize_t lanes, Py_ssize_t n) except -1:
    """Sort each lane of the C-contiguous (lanes, n) array k, split across threads."""
    cdef int nt = 1, t
    cdef double start
    if lanes > 1 and lanes * n >= PARALLEL_MIN:
        nt = max_threads()
        if nt > lanes:
            nt = <int>lanes
    cdef num_t* tk = <num_t*>PyMem_Malloc(nt * n * sizeof(num_t) + 1)
    cdef int64_t* ti = <int64_t*>PyMem_Malloc(nt * n * sizeof(int64_t) + 1) if ix != NULL \
        else NULL
    if tk == NULL or (ix != NULL and ti == NULL):
        PyMem_Free(tk)
        PyMem_Free(ti)
        raise MemoryError(f"cannot allocate the scratch space to sort lanes of {n} elements")
    if nt == 1:
        with nogil:
            _sort_lanes(k, ix, 0, lanes, n, tk, ti)
    else:
        start = region_enter(nt)
        for t in prange(nt, nogil=True, schedule="static", num_threads=nt):
            thread_seen(threadid())
            _sort_lanes(k, ix, lanes * t // nt, lanes * (t + 1) // nt, n, tk + t * n,
                        ti + t * n if ti != NULL else NULL)
        region_exit(start, nt)
    PyMem_Free(tk)
    PyMem_Free(ti)
    return 0


cdef tuple _sorted(Array x, int ax, bint values, bint indices):
    """(sorted values or None, int64 sorting indices or None) of x along axis ax, both
    C-contiguous with x's shape, on x's device."""
    if is_complex_num(x.dtype_num):         # lexicographic, from two stable real sorts
        import carray._complex as cx
        return cx.sorted_along(x, ax, values, indices)
    if is_half_num(x.dtype_num):    # the same order in float32 (exact both ways)
        wide = _sorted(widen(x), ax, values, indices)
        return (narrow(wide[0], x.dtype) if values else None), wide[1]
    cdef int last = x.ndim - 1, d
    perm = [d for d in range(x.ndim) if d != ax] + [ax]
    rows = x if ax == last else x.transpose(perm)
    cdef Array k = new_array_on(x.ndim, (<Array>rows).shape_, x.dtype_num, x)
    copy_into(k, rows)
    cdef Array ix = new_array_on(x.ndim, k.shape_, INT64, x) if indices else None
    cdef Py_ssize_t n = x.shape_[ax]
    cdef Py_ssize_t lanes = k.size_c() // n if n else 0
    cdef int num = x.dtype_num
    cdef int64_t* ip = NULL
    if lanes:
        if on_gpu(k):
            gpu_backend().sort_lanes(k, ix)
        else:
            if indices:
                ip = <int64_t*>ix.data
            if num == FLOAT32:
                _sort_host(<float*>k.data, ip, lanes, n)
            elif num == FLOAT64:
                _sort_host(<double*>k.data, ip, lanes, n)
            elif num == INT64:
                _sort_host(<int64_t*>k.data, ip, lanes, n)
            elif num == INT32:
                _sort_host(<int32_t*>k.data, ip, lanes, n)
            elif num == INT8:
                _sort_host(<int8_t*>k.data, ip, lanes, n)
            elif num == INT16:
                _sort_host(<int16_t*>k.data, ip, lanes, n)
            elif num == UINT8:
                _sort_host(<u8_t*>k.data, ip, lanes, n)
            elif num == UINT16:
                _sort_host(<uint16_t*>k.data, ip, lanes, n)
            elif num == UINT32:
                _sort_host(<uint32_t*>k.data, ip, lanes, n)
            elif num == UINT64:
                _sort_host(<uint64_t*>k.data, ip, lanes, n)
            else:
                _sort_host(<bool_t*>k.data, ip, lanes, n)
    if ax == last:
        return (k if values else None), ix
    inv = [perm.index(d) for d in range(x.ndim)]
    return (ascontiguousarray(k.transpose(inv)) if values else None,
            ascontiguousarray(ix.transpose(inv)) if indices else None)


cdef int _check_kind(object kind, object order) except -1:
    """NumPy's ValueErrors for an unknown kind= and for order= (arrays here have no fields)."""
    if kind is not None and not (isinstance(kind, str) and kind[:1].lower() in "qhms"
                                 and kind):
        raise ValueError(f"sort kind must be one of 'quick', 'heap', or 'stable' (got {kind!r})")
    if order is not None:
        raise ValueError("Cannot specify order when the array has no fields.")
    return 0


cdef tuple _lanes(object a, object axis, bint zero_d_as_1d):
    """(the array, the axis to sort along): the flattened array and 0 when axis is None."""
    cdef Array x = as_array(a, -1)
    if axis is None:
        return x.reshape(-1), 0
    if x.ndim == 0 and zero_d_as_1d:
        x = x.reshape(1)
    return x, normalize_axis(axis, x.ndim)


def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """A sorted copy of `a` along `axis` (of the flattened array when axis is None),
    C-contiguous. The sort is stable whatever kind= and stable= say; NaNs sort last. Raises
    AxisError for a bad axis (a 0-d array has none), ValueError for an unknown kind or order=."""
    _check_kind(kind, order)
    x, ax = _lanes(a, axis, False)
    return _sorted(x, ax, True, False)[0]


def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    """The int64 indices that sort `a` along `axis` (flattened when axis is None), C-contiguous:
    NumPy's stable order (ties by position, NaNs last). A 0-d array counts as 1-d, as NumPy.
    Raises AxisError for a bad axis, ValueError for an unknown kind or order=."""
    _check_kind(kind, order)
    x, ax = _lanes(a, axis, True)
    return _sorted(x, ax, False, True)[1]


def sort_with_indices(a, axis=-1):
    """(sort(a, axis), argsort(a, axis)) from one sort (for autograd's sort and topk)."""
    x, ax = _lanes(a, axis, False)
    return _sorted(x, ax, True, True)


def sort_inplace(Array a, axis=-1, kind=None, order=None, stable=None):
    """Array.sort: sort `a` along axis in place (stable; NaNs last); None. Raises AxisError for
    a bad axis, ValueError for a read-only array, an unknown kind or order=."""
    _check_kind(kind, order)
    if axis is None:
        raise TypeError("'NoneType' object cannot be interpreted as an integer")
    if not a.writeable:
        raise ValueError("assignment destination is read-only")
    copy_into(a, _sorted(a, normalize_axis(axis, a.ndim), True, False)[0])

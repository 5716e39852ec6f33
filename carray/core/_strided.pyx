"""The strided n-d loop driver and the typed cast/copy kernels.

prepare_loop turns n-d operands (a shape plus per-operand byte strides, stride 0 for broadcast
dimensions) into the cheapest walk: size-1 dimensions dropped, dimensions ordered by the output's
strides, neighbours that are contiguous with each other merged, so most work is a few long 1-d
inner loops. When an input's fastest axis is not the output's (a transposed copy, a.T + b), the two
fastest dimensions are walked in TILE x TILE blocks so both sides stay in cache. run_loop splits
the work across OpenMP threads above a size threshold; kernels never touch Python.
"""

from cython.parallel cimport prange, threadid
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy

from carray.core._dtype cimport (BFLOAT16, BOOL, FLOAT16, FLOAT32, FLOAT64, INT8, INT16, INT32,
                                 INT64, NTYPES, UINT8, UINT16, UINT32, UINT64, bool_t, u8_t)
from carray.core._half cimport (carray_bf16_t, carray_bf16_to_float, carray_double_to_bf16,
                                carray_double_to_half, carray_float_to_bf16, carray_float_to_half,
                                carray_half_t, carray_half_to_double, carray_half_to_float)

cdef extern from "_omp.h" nogil:
    int carray_max_threads()
    int carray_region_threads()
    int carray_busy_threads()
    void carray_set_threads(int n)
    double carray_region_enter(int nthreads)
    void carray_thread_seen(int tid)
    void carray_region_exit(double start, int nthreads)
    void carray_region_reports(long* judged, long* unreported)
    int carray_omp_init()
    int carray_forked()


if carray_omp_init() != 0:      # the at-fork handler (see _omp.h): a forked child runs serially
    raise ImportError("carray: pthread_atfork failed")


cdef int max_threads() noexcept nogil:
    """Threads for a parallel region starting now (the cores other callers' regions leave)."""
    return carray_region_threads()


# Contention back-off (see _omp.h): every parallel region of carray brackets itself with these,
# so that one module-wide state knows when worker threads start late.
cdef double region_enter(int nthreads) noexcept nogil:
    return carray_region_enter(nthreads)


cdef void thread_seen(int tid) noexcept nogil:
    carray_thread_seen(tid)


cdef void region_exit(double start, int nthreads) noexcept nogil:
    carray_region_exit(start, nthreads)


def get_num_threads():
    """Number of threads carray's parallel loops use (1 in a child of fork(), whose OpenMP
    threads did not survive the fork)."""
    return carray_max_threads()


def _busy_threads():
    """Threads that carray's parallel regions hold right now, across all calling threads."""
    return carray_busy_threads()


def _region_reports():
    """For tests of the contention back-off (_omp.h): (regions judged for lateness so far, those
    of them in which a worker thread never reported its start). A parallel region whose loop
    does not report (thread_seen) counts in the second, and is judged late whenever it lasts
    over a millisecond."""
    cdef long judged, unreported
    carray_region_reports(&judged, &unreported)
    return judged, unreported


def _threads_beside(sizes):
    """For tests of the sharing (_omp.h): the thread count a region starting now would take
    while regions of the given sizes run (entered, asked, exited). The sizes are converted
    first: a bad one raises before any region is entered (none left counted)."""
    cdef list ints = [int(size) for size in sizes]
    cdef int size
    for size in ints:
        if size < 1:
            raise ValueError(f"region sizes must be >= 1, got {size}")
    for size in ints:
        carray_region_enter(size)
    cdef int n = carray_region_threads()
    for size in ints:
        carray_region_exit(-1.0, size)      # (-1: not judged for lateness)
    return n


def _judge_region(bint overlapped):
    """For tests of the contention back-off (_omp.h): bracket a 2-thread region that seems to have
    lasted a second without its worker ever starting (another caller's 1-thread region running
    inside it when `overlapped`), and return the thread count carray uses afterwards: 1 when the
    region was judged late, the configured count when it was not judged."""
    cdef double start, other
    start = carray_region_enter(2)
    if overlapped:
        other = carray_region_enter(1)
        carray_region_exit(other, 1)
    carray_region_exit(start - 1.0 if start >= 0.0 else start, 2)
    return carray_max_threads()


def _forked():
    """True in a child of fork() (carray's loops run on one thread there; see _omp.h)."""
    return bool(carray_forked())


def set_num_threads(int n):
    """Use `n` threads in carray's parallel loops (ValueError unless n >= 1)."""
    if n < 1:
        raise ValueError(f"number of threads must be >= 1, got {n}")
    carray_set_threads(n)


cdef inline Py_ssize_t _abs(Py_ssize_t x) noexcept nogil:
    return -x if x < 0 else x


cdef void prepare_loop(NdLoop* it, int nop, int ndim, const Py_ssize_t* shape, char** data,
                       Py_ssize_t (*strides)[MAXDIMS]) noexcept nogil:
    """Plan the walk over `ndim`-d operands; operand 0 is the output (its layout sets the order)."""
    prepare_loop_by(it, nop, ndim, shape, data, strides, 0)


cdef void prepare_loop_by(NdLoop* it, int nop, int ndim, const Py_ssize_t* shape, char** data,
                          Py_ssize_t (*strides)[MAXDIMS], int order_op) noexcept nogil:
    """prepare_loop with the walk order set by operand `order_op`'s strides (reductions walk
    in their input's memory order; their output has stride 0 along reduced dims)."""
    cdef int perm[MAXDIMS]
    cdef Py_ssize_t sh[MAXDIMS]
    cdef Py_ssize_t st[MAXOPS][MAXDIMS]
    cdef int k = 0, d, i, j, op, p
    cdef bint merge
    it.nop = nop
    it.size = 1
    it.tiled = False
    for op in range(nop):
        it.data[op] = data[op]
    for d in range(ndim):
        it.size *= shape[d]
    if it.size == 0:
        it.outer_ndim = 0
        it.inner_n = 0
        return
    # keep dims of extent > 1, sorted by |output stride| descending (stable insertion sort)
    for d in range(ndim):
        if shape[d] == 1:
            continue
        i = k
        while i > 0 and _abs(strides[order_op][perm[i - 1]]) < _abs(strides[order_op][d]):
            perm[i] = perm[i - 1]
            i -= 1
        perm[i] = d
        k += 1
    # merge neighbours that are contiguous with each other in every operand
    j = -1
    for i in range(k):
        p = perm[i]
        merge = j >= 0
        if merge:
            for op in range(nop):
                if st[op][j] != strides[op][p] * shape[p]:
                    merge = False
                    break
        if merge:
            sh[j] *= shape[p]
            for op in range(nop):
                st[op][j] = strides[op][p]
        else:
            j += 1
            sh[j] = shape[p]
            for op in range(nop):
                st[op][j] = strides[op][p]
    k = j + 1
    if k == 0:                     # a single element
        it.outer_ndim = 0
        it.inner_n = 1
        for op in range(nop):
            it.inner_steps[op] = 0
        return
    # tile when some input runs fastest along the output's second-fastest dim
    if k >= 2 and sh[k - 1] >= TILE and sh[k - 2] >= TILE:
        for op in range(nop):
            if op != order_op and 0 < _abs(st[op][k - 2]) < _abs(st[op][k - 1]):
                it.tiled = True
                break
    if it.tiled:
        it.outer_ndim = k
        for d in range(k - 2):
            it.outer_shape[d] = sh[d]
            for op in range(nop):
                it.outer_strides[op][d] = st[op][d]
        it.tile_rows = sh[k - 2]
        it.tile_cols = sh[k - 1]
        it.outer_shape[k - 2] = (sh[k - 2] + TILE - 1) // TILE
        it.outer_shape[k - 1] = (sh[k - 1] + TILE - 1) // TILE
        for op in range(nop):
            it.outer_strides[op][k - 2] = st[op][k - 2] * TILE
            it.outer_strides[op][k - 1] = st[op][k - 1] * TILE
            it.row_steps[op] = st[op][k - 2]
            it.inner_steps[op] = st[op][k - 1]
        it.inner_n = TILE
    else:
        it.outer_ndim = k - 1
        for d in range(k - 1):
            it.outer_shape[d] = sh[d]
            for op in range(nop):
                it.outer_strides[op][d] = st[op][d]
        it.inner_n = sh[k - 1]
        for op in range(nop):
            it.inner_steps[op] = st[op][k - 1]


cdef inline void _seek(NdLoop* it, Py_ssize_t item, Py_ssize_t* idx, char** ptr) noexcept nogil:
    """Set the odometer `idx` and the operand pointers to outer item number `item`."""
    cdef int d, op
    for op in range(it.nop):
        ptr[op] = it.data[op]
    for d in range(it.outer_ndim - 1, -1, -1):
        idx[d] = item % it.outer_shape[d]
        item //= it.outer_shape[d]
        for op in range(it.nop):
            ptr[op] += idx[d] * it.outer_strides[op][d]


cdef inline void _advance(NdLoop* it, Py_ssize_t* idx, char** ptr) noexcept nogil:
    """Step the odometer to the next outer item."""
    cdef int d, op
    for d in range(it.outer_ndim - 1, -1, -1):
        idx[d] += 1
        for op in range(it.nop):
            ptr[op] += it.outer_strides[op][d]
        if idx[d] < it.outer_shape[d]:
            return
        idx[d] = 0
        for op in range(it.nop):
            ptr[op] -= it.outer_strides[op][d] * it.outer_shape[d]


cdef void _run_elems(NdLoop* it, loop1d_t fn, void* aux, void* aux2,
                     Py_ssize_t e0, Py_ssize_t e1) noexcept nogil:
    """Run elements [e0, e1) of an untiled walk (in walk order)."""
    cdef Py_ssize_t idx[MAXDIMS]
    cdef char* ptr[MAXOPS]
    cdef char* p[MAXOPS]
    cdef Py_ssize_t off = e0 % it.inner_n, n
    cdef int op
    _seek(it, e0 // it.inner_n, idx, ptr)
    while e0 < e1:
        n = it.inner_n - off
        if n > e1 - e0:
            n = e1 - e0
        for op in range(it.nop):
            p[op] = ptr[op] + off * it.inner_steps[op]
        fn(p, it.inner_steps, n, aux, aux2)
        e0 += n
        off = 0
        _advance(it, idx, ptr)


cdef void _run_tiles(NdLoop* it, loop1d_t fn, void* aux, void* aux2,
                     Py_ssize_t t0, Py_ssize_t t1) noexcept nogil:
    """Run tiles [t0, t1) of a tiled walk, each row by row."""
    cdef Py_ssize_t idx[MAXDIMS]
    cdef char* ptr[MAXOPS]
    cdef char* p[MAXOPS]
    cdef Py_ssize_t t, r, rows, cols
    cdef int op, k = it.outer_ndim
    _seek(it, t0, idx, ptr)
    for t in range(t0, t1):
        rows = it.tile_rows - idx[k - 2] * TILE
        cols = it.tile_cols - idx[k - 1] * TILE
        if rows > TILE:
            rows = TILE
        if cols > TILE:
            cols = TILE
        for r in range(rows):
            for op in range(it.nop):
                p[op] = ptr[op] + r * it.row_steps[op]
            fn(p, it.inner_steps, cols, aux, aux2)
        _advance(it, idx, ptr)


cdef void run_loop(NdLoop* it, loop1d_t fn, void* aux, void* aux2,
                   Py_ssize_t parallel_min) noexcept nogil:
    """Run `fn` over a prepared walk; split across threads when size >= parallel_min."""
    cdef Py_ssize_t total, c, nchunks = 1
    cdef double start
    cdef int d
    if it.size == 0:
        return
    if it.tiled:
        total = 1
        for d in range(it.outer_ndim):
            total *= it.outer_shape[d]
    else:
        total = it.size
    if it.size >= parallel_min:
        nchunks = carray_region_threads()
        if nchunks > total:
            nchunks = total
    if nchunks <= 1:
        if it.tiled:
            _run_tiles(it, fn, aux, aux2, 0, total)
        else:
            _run_elems(it, fn, aux, aux2, 0, total)
        return
    start = region_enter(nchunks)
    for c in prange(nchunks, schedule="static", num_threads=nchunks):
        thread_seen(threadid())
        if it.tiled:
            _run_tiles(it, fn, aux, aux2, total * c // nchunks, total * (c + 1) // nchunks)
        else:
            _run_elems(it, fn, aux, aux2, total * c // nchunks, total * (c + 1) // nchunks)
    region_exit(start, nchunks)


# ---------------------------------------------------------------------------------------------
# cast / copy kernels: data[0] is the destination, data[1] the source
# ---------------------------------------------------------------------------------------------

ctypedef fused src_t:
    bool_t
    int8_t
    int16_t
    int32_t
    int64_t
    u8_t
    uint16_t
    uint32_t
    uint64_t
    float
    double
    carray_half_t
    carray_bf16_t

ctypedef fused dst_t:
    bool_t
    int8_t
    int16_t
    int32_t
    int64_t
    u8_t
    uint16_t
    uint32_t
    uint64_t
    float
    double
    carray_half_t
    carray_bf16_t


cdef inline dst_t _from_float(float f, dst_t* tag) noexcept nogil:
    """A 2-byte float's value (exact in float) as dst_t: one rounding at most."""
    cdef dst_t r
    if dst_t is carray_half_t:
        r.bits = carray_float_to_half(f)
        return r
    elif dst_t is carray_bf16_t:
        r.bits = carray_float_to_bf16(f)
        return r
    elif dst_t is bool_t:
        return f != 0
    else:
        return <dst_t>f


cdef inline dst_t _convert(src_t x, dst_t* tag) noexcept nogil:
    cdef dst_t r
    if src_t is carray_half_t and dst_t is double:
        return carray_half_to_double(x.bits)
    elif src_t is carray_half_t:
        return _from_float(carray_half_to_float(x.bits), tag)
    elif src_t is carray_bf16_t:
        return _from_float(carray_bf16_to_float(x.bits), tag)
    elif dst_t is carray_half_t:
        # ints beyond float16's range overflow either way: float holds the rest exactly
        r.bits = carray_double_to_half(x) if src_t is double else carray_float_to_half(<float>x)
        return r
    elif dst_t is carray_bf16_t:
        # wide ints and doubles round once, from a double (a float would round first)
        if src_t is float or src_t is bool_t or src_t is int8_t or src_t is u8_t or \
                src_t is int16_t or src_t is uint16_t:
            r.bits = carray_float_to_bf16(<float>x)
        else:
            r.bits = carray_double_to_bf16(<double>x)
        return r
    elif dst_t is bool_t:
        return x != 0
    else:
        return <dst_t>x


cdef void cast_loop(char** data, const Py_ssize_t* steps, Py_ssize_t n,
                    dst_t* dst_tag, src_t* src_tag) noexcept nogil:
    """dst[i] = (dst_t) src[i] over n elements (tags only select the types)."""
    cdef Py_ssize_t i, ds = steps[0], ss = steps[1]
    cdef dst_t* d
    cdef src_t* s
    cdef dst_t v
    cdef char* o = data[0]
    cdef char* a = data[1]
    if ds == sizeof(dst_t) and ss == sizeof(src_t):
        d = <dst_t*>o
        s = <src_t*>a
        if dst_t is src_t:
            memcpy(d, s, n * sizeof(dst_t))
        else:
            for i in range(n):
                d[i] = _convert(s[i], dst_tag)
    elif ds == sizeof(dst_t) and ss == 0:
        d = <dst_t*>o
        v = _convert((<src_t*>a)[0], dst_tag)
        for i in range(n):
            d[i] = v
    else:
        for i in range(n):
            (<dst_t*>o)[0] = _convert((<src_t*>a)[0], dst_tag)
            o += ds
            a += ss


cdef loop1d_t CAST_LOOPS[NTYPES][NTYPES]


cdef loop1d_t cast_loop_for(int dst_num, int src_num) noexcept nogil:
    """The kernel that converts src_num elements to dst_num elements."""
    return CAST_LOOPS[dst_num][src_num]


cdef void _fill_row(int src, src_t* tag) noexcept:
    """Fill CAST_LOOPS[*][src] with the kernels reading src_t."""
    CAST_LOOPS[BOOL][src] = <loop1d_t>cast_loop[bool_t, src_t]
    CAST_LOOPS[INT8][src] = <loop1d_t>cast_loop[int8_t, src_t]
    CAST_LOOPS[INT16][src] = <loop1d_t>cast_loop[int16_t, src_t]
    CAST_LOOPS[INT32][src] = <loop1d_t>cast_loop[int32_t, src_t]
    CAST_LOOPS[INT64][src] = <loop1d_t>cast_loop[int64_t, src_t]
    CAST_LOOPS[UINT8][src] = <loop1d_t>cast_loop[u8_t, src_t]
    CAST_LOOPS[UINT16][src] = <loop1d_t>cast_loop[uint16_t, src_t]
    CAST_LOOPS[UINT32][src] = <loop1d_t>cast_loop[uint32_t, src_t]
    CAST_LOOPS[UINT64][src] = <loop1d_t>cast_loop[uint64_t, src_t]
    CAST_LOOPS[FLOAT32][src] = <loop1d_t>cast_loop[float, src_t]
    CAST_LOOPS[FLOAT64][src] = <loop1d_t>cast_loop[double, src_t]
    CAST_LOOPS[FLOAT16][src] = <loop1d_t>cast_loop[carray_half_t, src_t]
    CAST_LOOPS[BFLOAT16][src] = <loop1d_t>cast_loop[carray_bf16_t, src_t]


_fill_row(BOOL, <bool_t*>NULL)
_fill_row(INT8, <int8_t*>NULL)
_fill_row(INT16, <int16_t*>NULL)
_fill_row(INT32, <int32_t*>NULL)
_fill_row(INT64, <int64_t*>NULL)
_fill_row(UINT8, <u8_t*>NULL)
_fill_row(UINT16, <uint16_t*>NULL)
_fill_row(UINT32, <uint32_t*>NULL)
_fill_row(UINT64, <uint64_t*>NULL)
_fill_row(FLOAT32, <float*>NULL)
_fill_row(FLOAT64, <double*>NULL)
_fill_row(FLOAT16, <carray_half_t*>NULL)
_fill_row(BFLOAT16, <carray_bf16_t*>NULL)

# The one strided n-d iteration mechanism: every elementwise kernel (copies and casts now, the ops
# later) is a 1-d loop over `n` elements with byte steps, driven over n-d operands by run_loop.

cdef enum:
    MAXDIMS = 32      # most dimensions an array may have
    MAXOPS = 4        # most operands of one loop (output first)
    TILE = 8            # tile edge (elements) when the output's and an input's fast axes differ

# A 1-d kernel: data[k] points at operand k's first element, steps[k] is its byte step.
# aux and aux2 carry per-kernel extras (a typed scalar, ...). Fused kernels declare them as typed
# pointers and are stored cast to this type: the calling convention is the same for any pointer.
ctypedef void (*loop1d_t)(char** data, const Py_ssize_t* steps, Py_ssize_t n,
                          void* aux, void* aux2) noexcept nogil

cdef struct NdLoop:
    int nop
    Py_ssize_t size                          # elements in all
    int outer_ndim                           # dims walked by the odometer (tile grid included)
    Py_ssize_t outer_shape[MAXDIMS]
    Py_ssize_t outer_strides[MAXOPS][MAXDIMS]
    Py_ssize_t inner_n                       # length of the 1-d inner loop (untiled)
    Py_ssize_t inner_steps[MAXOPS]
    char* data[MAXOPS]
    bint tiled                               # the two fastest dims are walked in TILE x TILE blocks
    Py_ssize_t tile_rows, tile_cols          # extents of the two tiled dims
    Py_ssize_t row_steps[MAXOPS]             # byte step between rows inside a tile

cdef void prepare_loop(NdLoop* it, int nop, int ndim, const Py_ssize_t* shape, char** data,
                       Py_ssize_t (*strides)[MAXDIMS]) noexcept nogil
cdef void prepare_loop_by(NdLoop* it, int nop, int ndim, const Py_ssize_t* shape, char** data,
                          Py_ssize_t (*strides)[MAXDIMS], int order_op) noexcept nogil
cdef void run_loop(NdLoop* it, loop1d_t fn, void* aux, void* aux2,
                   Py_ssize_t parallel_min) noexcept nogil
cdef int max_threads() noexcept nogil
cdef double region_enter(int nthreads) noexcept nogil
cdef void thread_seen(int tid) noexcept nogil
cdef void region_exit(double start, int nthreads) noexcept nogil

# casts: cast_loop_for(dst, src) converts elements (bool targets get x != 0, as NumPy)
cdef loop1d_t cast_loop_for(int dst_num, int src_num) noexcept nogil

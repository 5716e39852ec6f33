# complex64/complex128 storage is interleaved (real, imag), as NumPy's: a complex array is also a
# float32/float64 array with a trailing axis of 2. Every complex copy and cast goes through such
# float views, so the real loops and kernels serve complex data on every device.
# (included by _array.pyx)

cdef inline int _part_num(int num) noexcept nogil:
    """The component type of a complex type (float32 for complex64, float64 for complex128)."""
    return FLOAT32 if num == COMPLEX64 else FLOAT64


cdef Array _float_view(Array a, int ndim, const Py_ssize_t* shape, const Py_ssize_t* strides,
                       Py_ssize_t offset):
    """A view of complex a's storage as its component float type."""
    cdef int fnum = _part_num(a.dtype_num)
    cdef Array v = make_view(a, ndim, shape, strides, offset)
    v.dtype_num = fnum
    v.itemsize = itemsize_of(fnum)
    v.data = NULL if a.storage.ptr == NULL else a.storage.ptr + offset * v.itemsize
    return v


cdef Array complex_pairs(Array a):
    """Complex a as a float view of shape a.shape + (2,): [..., 0] real, [..., 1] imaginary."""
    cdef Py_ssize_t shape[MAXDIMS]
    cdef Py_ssize_t strides[MAXDIMS]
    cdef int d
    if a.ndim >= MAXDIMS:
        raise ValueError(f"a complex array of {a.ndim} dims has no float view (at most "
                         f"{MAXDIMS - 1} dims)")
    for d in range(a.ndim):
        shape[d] = a.shape_[d]
        strides[d] = 2 * a.strides_[d]
    shape[a.ndim] = 2
    strides[a.ndim] = 1
    return _float_view(a, a.ndim + 1, shape, strides, 2 * a.offset)


cdef Array complex_part(Array a, int k):
    """The real (k=0) or imaginary (k=1) part of complex a: a writable float view."""
    cdef Py_ssize_t strides[MAXDIMS]
    cdef int d
    for d in range(a.ndim):
        strides[d] = 2 * a.strides_[d]
    return _float_view(a, a.ndim, a.shape_, strides, 2 * a.offset + k)


cdef Array complex_from_pairs(Array f):
    """The complex view of a float32/float64 array whose last axis has size 2 and stride 1 and
    whose other strides and offset are even (what complex_pairs gives, or a fresh array)."""
    cdef Py_ssize_t strides[MAXDIMS]
    cdef int d, nd = f.ndim - 1
    if not (f.dtype_num == FLOAT32 or f.dtype_num == FLOAT64) or nd < 0 or \
            f.shape_[nd] != 2 or f.strides_[nd] != 1 or f.offset % 2:
        raise ValueError("complex_from_pairs: expected a float array with a last axis of 2")
    for d in range(nd):
        if f.strides_[d] % 2:
            raise ValueError("complex_from_pairs: odd stride")
        strides[d] = f.strides_[d] // 2
    cdef Array v = make_view(f, nd, f.shape_, strides, f.offset // 2)
    v.dtype_num = COMPLEX64 if f.dtype_num == FLOAT32 else COMPLEX128
    v.itemsize = itemsize_of(v.dtype_num)
    v.data = NULL if f.storage.ptr == NULL else f.storage.ptr + v.offset * v.itemsize
    return v


cdef int _copy_complex(Array dst, Array src) except -1:
    """dst[...] = src when either is complex: complex -> complex copies both parts, real ->
    complex writes the real part and zeros the imaginary one, complex -> real takes the real
    part (NumPy's astype), complex -> bool is (real != 0) | (imag != 0)."""
    cdef Array b
    if is_complex_num(dst.dtype_num) and is_complex_num(src.dtype_num):
        try:
            b = broadcast_view(drop_leading_ones(src, dst.ndim), dst.ndim, dst.shape_)
        except ValueError:
            raise ValueError(f"could not broadcast input array from shape {src.shape} "
                             f"into shape {dst.shape}") from None
        copy_into(complex_pairs(dst), complex_pairs(b))
    elif is_complex_num(dst.dtype_num):
        if may_overlap(dst, src):
            src = src.copy()
        copy_into(complex_part(dst, 0), src)
        copy_into(complex_part(dst, 1), _scalar_array(0.0, _part_num(dst.dtype_num)))
    elif dst.dtype_num == BOOL:
        copy_into(dst, _binary(COMPARE, C_NE, src, 0, None))
    else:
        copy_into(dst, complex_part(src, 0))
    return 0


def _complex_pairs(a):
    """Complex a as a float view a.shape + (2,) (real, imag): the interleaved storage."""
    return complex_pairs(<Array?>a)


def _complex_from_pairs(f):
    """The complex view of a float array of shape (..., 2) (see complex_pairs)."""
    return complex_from_pairs(<Array?>f)


def _complex_part(a, int k):
    """The real (k=0) or imaginary (k=1) part of complex a as a writable float view."""
    return complex_part(<Array?>a, k)

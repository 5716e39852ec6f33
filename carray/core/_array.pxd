from carray.core._storage cimport Storage
from carray.core._strided cimport MAXDIMS

cdef class Array:
    """A strided n-d array: a Storage plus dtype, shape, strides (in elements) and offset."""
    cdef Storage storage
    cdef Array owner           # the array that owns the storage; None for an owner
    cdef char* data            # host address of element [0, ..., 0]; NULL on a device
    cdef Py_ssize_t offset     # element [0, ..., 0] is storage element `offset`
    cdef int ndim
    cdef int dtype_num
    cdef Py_ssize_t itemsize
    cdef bint writeable
    cdef Py_ssize_t shape_[MAXDIMS]
    cdef Py_ssize_t strides_[MAXDIMS]     # in elements
    cdef object __weakref__

    cdef Py_ssize_t size_c(self) noexcept
    cdef bint c_contiguous(self) noexcept
    cdef bint f_contiguous(self) noexcept


cdef Array new_array(int ndim, const Py_ssize_t* shape, int dtype_num)
cdef Array new_device_array(int ndim, const Py_ssize_t* shape, int dtype_num)
cdef Array new_array_on(int ndim, const Py_ssize_t* shape, int dtype_num, Array like)
cdef object gpu_backend()
cdef int check_same_device(str name, Array a, Array b) except -1
cdef Array new_like_shape(Array a, int dtype_num)
cdef Array make_view(Array src, int ndim, const Py_ssize_t* shape, const Py_ssize_t* strides,
                     Py_ssize_t offset)
cdef int copy_into(Array dst, Array src) except -1
cdef bint may_overlap(Array a, Array b) noexcept
cdef Array as_array(object obj, int dtype_num)
cdef int parse_shape(object shape, Py_ssize_t* out) except -1
cdef int normalize_axis(object axis, int ndim) except -1
cdef int parse_dtype_num(object dtype, int default) except -2
cdef str parse_device(object device)
cdef Array broadcast_view(Array a, int ndim, const Py_ssize_t* shape)


# Device arrays (OpenCL) keep their buffer in storage.handle and have data == NULL; every op
# that reads `data` first asks on_gpu and hands device arrays to carray.opencl.
cdef inline bint on_gpu(Array a) noexcept:
    return a.storage.handle is not None


# Whether two shapes (or stride lists) of n dims are equal.
cdef inline bint same_dims(int n, const Py_ssize_t* x, const Py_ssize_t* y) noexcept:
    cdef int d
    for d in range(n):
        if x[d] != y[d]:
            return False
    return True

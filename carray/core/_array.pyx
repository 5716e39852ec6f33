# cython: wraparound=True
# (Python-level code here uses negative indices; hot loops index C arrays with i >= 0)
"""carray.Array: the strided array type, its views, copies and conversions.

An Array is metadata over a Storage: dtype, shape, strides (in elements) and the element offset of
[0, ..., 0]. Views (reshape, transpose, slicing, broadcast_to, ...) share the Storage and differ only
in that metadata; `base` is always the owner, never a view of a view (as in NumPy). Every copy,
cast and fill goes through one strided loop (copy_into -> _strided.run_loop).

Sections: the type and its properties; views; copies; indexing (_indexing.pxi); conversion from
Python objects and buffers (_fromobject.pxi); export through the buffer protocol, DLPack and pickle
(_export.pxi).
"""

cimport cython
from cpython.buffer cimport PyBUF_ND, PyBUF_STRIDES, PyBUF_WRITABLE, PyBUF_FORMAT
from cpython.buffer cimport PyBUF_RECORDS_RO, PyObject_CheckBuffer, PyObject_GetBuffer
from cpython.long cimport PyLong_Check
from cpython.pycapsule cimport PyCapsule_GetName, PyCapsule_GetPointer
from cpython.slice cimport PySlice_Check
from cpython.tuple cimport PyTuple_Check, PyTuple_GET_SIZE, PyTuple_GET_ITEM
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdint cimport PTRDIFF_MAX as PY_SSIZE_T_MAX
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

from carray.core._dtype cimport (BOOL, dtype_of, FLOAT32, FLOAT64, INT32, INT64, itemsize_of, NTYPES,
                            DType, as_dtype, bool_t, promote_nums, INT8, INT16, UINT8,
                            UINT16, UINT32, UINT64, int_fits, is_int_num, is_float_num,
                            is_unsigned_num, kind_rank)
from carray.core._dtype cimport COMPLEX64, COMPLEX128, is_complex_num
from carray.core._dtype import DTYPE_NAMES as _DTYPE_NAMES
from carray.core._dtype cimport BFLOAT16, FLOAT16
from carray.core._half cimport (carray_bf16_to_float, carray_double_to_bf16, carray_double_to_half,
                                carray_half_to_float)
from carray.core._storage cimport Storage, new_host_storage, storage_from_buffer, host_alloc, host_free
from carray.core._strided cimport (cast_loop_for, MAXDIMS, MAXOPS, NdLoop, loop1d_t, prepare_loop,
                              run_loop)

import operator

cdef extern from "Python.h":
    int PySlice_Unpack(object slice, Py_ssize_t* start, Py_ssize_t* stop,
                       Py_ssize_t* step) except -1
    Py_ssize_t PySlice_AdjustIndices(Py_ssize_t length, Py_ssize_t* start, Py_ssize_t* stop,
                                     Py_ssize_t step) noexcept

from carray.ops._optable cimport (BINARY, COMPARE, UNARY, B_ADD, B_AND, B_DIV, B_FLOORDIV,
                                  B_MOD, B_MUL, B_OR, B_POW, B_SUB, B_XOR, C_EQ, C_GE, C_GT, C_LE,
                                  C_LT, C_NE, U_ABS, U_INVERT, U_NEG)

# copies below this many elements run on one thread
cdef Py_ssize_t PARALLEL_COPY_MIN = 1 << 16


# -- the ops layer above this type ------------------------------------------------------------
# Array's operators and math methods are carray.ops's front ends, which build Arrays and so sit a
# layer above this module. They are looked up on first use: one call-time import, kept (as
# torch's Tensor.backward imports the engine when called); nothing is installed from outside.

ctypedef object (*binary_fn)(int kind, int code, object x, object y, object out)
ctypedef object (*unary_fn)(int kind, int code, object x, object out)
cdef binary_fn _binary_impl = NULL
cdef unary_fn _unary_impl = NULL
cdef object _ufunc = None


cdef object ops():
    """The module carray.ops._ufunc (imported on the first call), whose binary() and unary()
    the operators call directly through their C entry points."""
    global _ufunc, _binary_impl, _unary_impl
    if _ufunc is None:
        import carray.ops._ufunc as m
        capi = m.__pyx_capi__
        _binary_impl = <binary_fn>_c_function(capi["binary"])
        _unary_impl = <unary_fn>_c_function(capi["unary"])
        _ufunc = m
    return _ufunc


cdef void* _c_function(object capsule) except NULL:
    return PyCapsule_GetPointer(capsule, PyCapsule_GetName(capsule))


cdef inline object _binary(int kind, int code, object x, object y, object out):
    if _binary_impl == NULL:
        ops()
    return _binary_impl(kind, code, x, y, out)


cdef inline object _unary(int kind, int code, object x, object out):
    if _unary_impl == NULL:
        ops()
    return _unary_impl(kind, code, x, out)


class AxisError(ValueError, IndexError):
    """An axis argument outside [-ndim, ndim) (NumPy's AxisError: a ValueError and IndexError)."""


# ---------------------------------------------------------------------------------------------
# argument parsing shared by the type, the factories and the ops
# ---------------------------------------------------------------------------------------------

cdef Py_ssize_t _as_index(object x, str what) except? -1:
    """x as a Python int (anything with __index__); TypeError naming `what` otherwise."""
    if PyLong_Check(x) and not isinstance(x, bool):
        return x
    try:
        return operator.index(x)
    except TypeError:
        raise TypeError(f"{what} must be an integer, got {type(x).__name__} {x!r}") from None


cdef int parse_shape(object shape, Py_ssize_t* out) except -1:
    """Write a shape (an int or a sequence of ints) to `out`; return its length.

    Raises TypeError for non-integers, ValueError for negative sizes or more than MAXDIMS dims.
    """
    cdef int n = 0
    if PyLong_Check(shape) or (hasattr(shape, "__index__") and not isinstance(shape, (list, tuple))
                               and getattr(shape, "ndim", 0) == 0):     # (a 1-d array is a sequence)
        items = (shape,)
    else:
        try:
            items = tuple(shape)
        except TypeError:
            raise TypeError(f"expected a sequence of integers or a single integer, "
                            f"got {shape!r}") from None
    if len(items) > MAXDIMS:
        raise ValueError(f"maximum supported dimension for an array is {MAXDIMS}, "
                         f"found {len(items)}")
    for x in items:
        if isinstance(x, float) or isinstance(x, bool):
            raise TypeError(f"expected a sequence of integers or a single integer, got '{x}'")
        try:
            out[n] = operator.index(x)
        except TypeError:
            raise TypeError(f"expected a sequence of integers or a single integer, "
                            f"got {x!r}") from None
        except OverflowError:
            raise ValueError(f"array dimension {x} is out of range: maximum allowed dimension "
                             f"exceeded") from None
        if out[n] < 0:
            raise ValueError(f"negative dimensions are not allowed, got shape {tuple(items)}")
        n += 1
    return n


cdef int normalize_axis(object axis, int ndim) except -1:
    """axis in [-ndim, ndim) as an index in [0, ndim); AxisError otherwise."""
    cdef Py_ssize_t ax = _as_index(axis, "axis")
    if ax < -ndim or ax >= ndim:
        raise AxisError(f"axis {ax} is out of bounds for array of dimension {ndim}")
    return <int>(ax + ndim if ax < 0 else ax)


cdef int parse_dtype_num(object dtype, int default) except -2:
    """The type number of `dtype`, or `default` when dtype is None."""
    if dtype is None:
        return default
    return (<DType>as_dtype(dtype)).num


cdef str parse_device(object device):
    """Validate a device argument; return its canonical name: "cpu" or "gpu" (the OpenCL
    device carray.opencl reports; "opencl", "gpu:0" and "opencl:0" name it too)."""
    if device is None or device == "cpu":
        return "cpu"
    if isinstance(device, str) and device.split(":")[0] in ("gpu", "opencl"):
        if device.count(":") > 1 or ":" in device and device.split(":")[1] not in ("", "0"):
            raise ValueError(f"unknown device {device!r}: carray uses one OpenCL device, "
                             f"'gpu' (choose it with CARRAY_OPENCL_DEVICE)")
        return "gpu"
    raise ValueError(f"unknown device {device!r}; expected 'cpu' or 'gpu'")


_gpu = None             # carray.opencl, imported on first use of a device array


cdef object gpu_backend():
    """The carray.opencl module (importing it does not import pyopencl; its runtime() does)."""
    global _gpu
    if _gpu is None:
        import carray.opencl as m
        _gpu = m
    return _gpu


class DeviceMismatchError(ValueError, RuntimeError):
    """Operands of one op on different devices. A ValueError (NumPy's kind of error for bad
    operands) and a RuntimeError (what PyTorch raises for it), so either handler catches it."""


cdef int check_same_device(str name, Array a, Array b) except -1:
    """DeviceMismatchError naming both devices when a and b live on different devices (a host
    0-d array counts as a scalar and goes with any device, as PyTorch's CPU scalars do)."""
    if on_gpu(a) == on_gpu(b):
        return 0
    if (not on_gpu(a) and a.ndim == 0) or (not on_gpu(b) and b.ndim == 0):
        return 0
    raise DeviceMismatchError(f"{name}: expected all arrays on one device, got arrays on "
                              f"{a.storage.device!r} and {b.storage.device!r}; move one with "
                              f".to()")


cdef Py_ssize_t ALLOC_MAX_BYTES = <Py_ssize_t>1 << 62     # the most one allocation may ask for


cdef Py_ssize_t _checked_size(int ndim, const Py_ssize_t* shape, Py_ssize_t itemsize,
                              Py_ssize_t max_bytes=ALLOC_MAX_BYTES) except -1:
    """Number of elements; ValueError naming the shape when a dim is negative or when the
    nonzero dims' product times itemsize exceeds max_bytes (NumPy checks them even when another
    dim is 0), so that no size or byte count computed from the shape can wrap around."""
    cdef Py_ssize_t size = 1, limit = max_bytes // itemsize
    cdef bint empty = False
    cdef int d
    for d in range(ndim):
        if shape[d] < 0:
            raise ValueError(f"negative dimensions are not allowed, got shape "
                             f"{tuple([shape[i] for i in range(ndim)])}")
        if shape[d] == 0:
            empty = True
        elif shape[d] > limit // size:
            raise ValueError(f"array is too big: shape {tuple([shape[i] for i in range(ndim)])} "
                             f"of {itemsize}-byte items is larger than the maximum possible "
                             f"size ({max_bytes} bytes)")
        else:
            size *= shape[d]
    return 0 if empty else size


cdef int check_view_shape(int ndim, const Py_ssize_t* shape, Py_ssize_t itemsize) except -1:
    """ValueError unless `shape` is a valid shape for a view: dims >= 0 and the byte size (of
    the nonzero dims) within Py_ssize_t."""
    _checked_size(ndim, shape, itemsize, PY_SSIZE_T_MAX)
    return 0


# ---------------------------------------------------------------------------------------------
# construction
# ---------------------------------------------------------------------------------------------

cdef Array new_array(int ndim, const Py_ssize_t* shape, int dtype_num):
    """A new C-contiguous, uninitialised host array."""
    cdef Py_ssize_t itemsize = itemsize_of(dtype_num)
    cdef Py_ssize_t size = _checked_size(ndim, shape, itemsize)
    cdef Array a = Array.__new__(Array)
    cdef int d
    cdef Py_ssize_t stride = 1
    a.storage = new_host_storage(size * itemsize)
    a.owner = None
    a.data = a.storage.ptr
    a.offset = 0
    a.ndim = ndim
    a.dtype_num = dtype_num
    a.itemsize = itemsize
    a.writeable = True
    for d in range(ndim - 1, -1, -1):
        a.shape_[d] = shape[d]
        a.strides_[d] = stride
        stride *= shape[d] if shape[d] > 0 else 1
    return a


cdef object _device_runtime = None   # the backend's runtime (one per process, made once)


cdef Array new_device_array(int ndim, const Py_ssize_t* shape, int dtype_num):
    """A new C-contiguous, uninitialised array in a pooled OpenCL buffer (data is NULL).

    Raises ImportError without pyopencl, RuntimeError without an OpenCL device, MemoryError
    naming the size when the device has no room."""
    global _device_runtime
    cdef Py_ssize_t itemsize = itemsize_of(dtype_num)
    cdef Py_ssize_t size = _checked_size(ndim, shape, itemsize)
    cdef Storage s = Storage.__new__(Storage)
    cdef Array a = Array.__new__(Array)
    cdef int d
    cdef Py_ssize_t stride = 1
    if _device_runtime is None:
        _device_runtime = gpu_backend().runtime()
    s.handle = _device_runtime.alloc(size * itemsize)
    s.nbytes = size * itemsize
    s.device = "gpu"
    a.storage = s
    a.owner = None
    a.data = NULL
    a.offset = 0
    a.ndim = ndim
    a.dtype_num = dtype_num
    a.itemsize = itemsize
    a.writeable = True
    for d in range(ndim - 1, -1, -1):
        a.shape_[d] = shape[d]
        a.strides_[d] = stride
        stride *= shape[d] if shape[d] > 0 else 1
    return a


cdef Array new_array_on(int ndim, const Py_ssize_t* shape, int dtype_num, Array like):
    """A new C-contiguous array on the device of `like` (the host when like is None)."""
    if like is not None and on_gpu(like):
        return new_device_array(ndim, shape, dtype_num)
    return new_array(ndim, shape, dtype_num)


cdef Array new_like_shape(Array a, int dtype_num):
    """A new C-contiguous array with a's shape, on a's device."""
    return new_array_on(a.ndim, a.shape_, dtype_num, a)


cdef Array _bits_view(Array a, DType dt):
    """a's bytes read as dtype dt of the same itemsize (NumPy's view(dtype), same shape)."""
    if dt.itemsize != a.itemsize:
        raise ValueError(f"view as {dt.name} needs the itemsize {a.itemsize} of {a.dtype.name}; "
                         f"carray views only between dtypes of one itemsize")
    cdef Array v = make_view(a, a.ndim, a.shape_, a.strides_, a.offset)
    v.dtype_num = dt.num
    return v


def _bfloat16_to_numpy(Array a, dtype, copy):
    """A NumPy array of ml_dtypes.bfloat16 holding a's values (numpy.asarray of bfloat16)."""
    import numpy
    try:
        import ml_dtypes
    except ImportError:
        raise TypeError("NumPy has no bfloat16 dtype and ml_dtypes is not installed; convert "
                        "with a.astype(carray.float32) (or pip install ml_dtypes)") from None
    bits = numpy.array(_bits_view(a.to("cpu"), dtype_of(UINT16)), copy=copy)
    out = bits.view(ml_dtypes.bfloat16)
    return out if dtype is None else out.astype(dtype)


cdef Array make_view(Array src, int ndim, const Py_ssize_t* shape, const Py_ssize_t* strides,
                     Py_ssize_t offset):
    """A view of src's storage with the given shape, element strides and element offset;
    ValueError when the shape's size overflows (a broadcast or a reshape of an empty array)."""
    check_view_shape(ndim, shape, src.itemsize)
    cdef Array v = Array.__new__(Array)
    cdef int d
    v.storage = src.storage
    v.owner = src if src.owner is None else src.owner
    v.offset = offset
    v.data = NULL if src.storage.ptr == NULL else src.storage.ptr + offset * src.itemsize
    v.ndim = ndim
    v.dtype_num = src.dtype_num
    v.itemsize = src.itemsize
    v.writeable = src.writeable
    for d in range(ndim):
        v.shape_[d] = shape[d]
        v.strides_[d] = strides[d]
    return v


cdef Array broadcast_view(Array a, int ndim, const Py_ssize_t* shape):
    """a broadcast to `shape` (stride 0 along new and size-1 dims); ValueError if it cannot be."""
    cdef Py_ssize_t strides[MAXDIMS]
    cdef int d, k = ndim - a.ndim
    if k < 0:
        raise ValueError(f"cannot broadcast array of shape {a.shape} to shape "
                         f"{tuple([shape[i] for i in range(ndim)])}: the target has fewer dims")
    for d in range(ndim):
        if d < k:
            strides[d] = 0
        elif a.shape_[d - k] == shape[d]:
            strides[d] = a.strides_[d - k] if shape[d] != 1 else 0
        elif a.shape_[d - k] == 1:
            strides[d] = 0
        else:
            raise ValueError(f"cannot broadcast array of shape {a.shape} to shape "
                             f"{tuple([shape[i] for i in range(ndim)])}")
    return make_view(a, ndim, shape, strides, a.offset)


# ---------------------------------------------------------------------------------------------
# the one copy: broadcast, cast, overlap-safe
# ---------------------------------------------------------------------------------------------

cdef void _copy_raw(int ndim, const Py_ssize_t* shape, char* dst, const Py_ssize_t* dst_bstrides,
                    int dst_num, char* src, const Py_ssize_t* src_bstrides,
                    int src_num) noexcept nogil:
    """dst[...] = src[...] cast to dst's type; strides in bytes, src already broadcast."""
    cdef NdLoop it
    cdef char* data[2]
    cdef Py_ssize_t strides[2][MAXDIMS]
    cdef Py_ssize_t pshape[MAXDIMS]
    cdef int d
    data[0] = dst
    data[1] = src
    for d in range(ndim):
        strides[0][d] = dst_bstrides[d]
        strides[1][d] = src_bstrides[d]
        pshape[d] = shape[d]
    if is_complex_num(dst_num) and dst_num == src_num and ndim < MAXDIMS:
        # complex elements move as (real, imag) pairs of their float type
        pshape[ndim] = 2
        strides[0][ndim] = strides[1][ndim] = itemsize_of(dst_num) // 2
        dst_num = src_num = _part_num(dst_num)
        ndim += 1
        shape = pshape
    prepare_loop(&it, 2, ndim, shape, data, strides)
    run_loop(&it, cast_loop_for(dst_num, src_num), NULL, NULL, PARALLEL_COPY_MIN)


cdef inline void _byte_strides(Array a, Py_ssize_t* out) noexcept:
    cdef int d
    for d in range(a.ndim):
        out[d] = a.strides_[d] * a.itemsize


cdef void _extent(Array a, char** lo, char** hi) noexcept:
    """The byte range [lo, hi) that a's elements occupy."""
    cdef char* low = a.data
    cdef char* high = a.data
    cdef int d
    for d in range(a.ndim):
        if a.shape_[d] == 0:
            lo[0] = hi[0] = a.data
            return
        if a.strides_[d] < 0:
            low += (a.shape_[d] - 1) * a.strides_[d] * a.itemsize
        else:
            high += (a.shape_[d] - 1) * a.strides_[d] * a.itemsize
    lo[0] = low
    hi[0] = high + a.itemsize


cdef bint may_overlap(Array a, Array b) noexcept:
    """True when the bytes a and b occupy intersect (also across storages that alias)."""
    cdef char* alo
    cdef char* ahi
    cdef char* blo
    cdef char* bhi
    if a.data == NULL or b.data == NULL:
        return False
    # compare addresses even across storages: two storages can show the same memory (an array
    # made from np.asarray(a) or from DLPack shares a's bytes under a Storage of its own)
    _extent(a, &alo, &ahi)
    _extent(b, &blo, &bhi)
    return alo < bhi and blo < ahi


cdef Array drop_leading_ones(Array a, int ndim):
    """a without leading size-1 dims beyond `ndim` dims (a itself when it has other leading
    dims): NumPy's assignment accepts a value of shape (1, 1, n) for a target of shape (n,)."""
    cdef int k = a.ndim - ndim, d
    if k <= 0:
        return a
    for d in range(k):
        if a.shape_[d] != 1:
            return a
    return make_view(a, ndim, a.shape_ + k, a.strides_ + k, a.offset)


cdef int copy_into(Array dst, Array src) except -1:
    """dst[...] = src, broadcasting src to dst's shape and casting to dst's dtype (unsafe, as
    NumPy's assignment). Safe when src and dst overlap. Raises ValueError when src cannot be
    broadcast or dst is read-only."""
    cdef Py_ssize_t db[MAXDIMS]
    cdef Py_ssize_t sb[MAXDIMS]
    cdef Array b
    if not dst.writeable:
        raise ValueError("assignment destination is read-only")
    if is_complex_num(dst.dtype_num) or is_complex_num(src.dtype_num):
        return _copy_complex(dst, src)
    if on_gpu(dst) or on_gpu(src):
        gpu_backend().copy_into(dst, src)
        return 0
    try:
        b = broadcast_view(drop_leading_ones(src, dst.ndim), dst.ndim, dst.shape_)
    except ValueError:
        raise ValueError(f"could not broadcast input array from shape {src.shape} "
                         f"into shape {dst.shape}") from None
    if may_overlap(dst, src) and dst.size_c() > 0:
        b = broadcast_view(drop_leading_ones(src.copy(), dst.ndim), dst.ndim, dst.shape_)
    if cast_loop_for(dst.dtype_num, b.dtype_num) == NULL:
        raise TypeError(f"cannot convert {b.dtype} to {dst.dtype}: no conversion loop")
    _byte_strides(dst, db)
    _byte_strides(b, sb)
    with nogil:
        _copy_raw(dst.ndim, dst.shape_, dst.data, db, dst.dtype_num, b.data, sb, b.dtype_num)
    return 0


# ---------------------------------------------------------------------------------------------
# the type
# ---------------------------------------------------------------------------------------------

cdef class _Flags:
    """NumPy-style flags: c_contiguous, f_contiguous, owndata, writeable, aligned."""
    cdef readonly bint c_contiguous, f_contiguous, owndata, writeable, aligned

    def __getitem__(self, key):
        names = {"C_CONTIGUOUS": self.c_contiguous, "C": self.c_contiguous,
                 "F_CONTIGUOUS": self.f_contiguous, "F": self.f_contiguous,
                 "OWNDATA": self.owndata, "O": self.owndata, "WRITEABLE": self.writeable,
                 "W": self.writeable, "ALIGNED": self.aligned, "A": self.aligned}
        try:
            return names[key]
        except KeyError:
            raise KeyError(f"unknown flag {key!r}") from None

    def __repr__(self):
        return "\n".join(f"  {k} : {v}" for k, v in (
            ("C_CONTIGUOUS", self.c_contiguous), ("F_CONTIGUOUS", self.f_contiguous),
            ("OWNDATA", self.owndata), ("WRITEABLE", self.writeable), ("ALIGNED", self.aligned)))


cdef class Array:
    """An n-d array of bool, int32, int64, float32 or float64 on one device.

    Make one with carray.array/asarray/zeros/...; `Array(...)` itself is not a constructor.
    """

    def __init__(self, *args, **kwargs):
        raise TypeError("carray.Array cannot be constructed directly; "
                        "use carray.array, carray.asarray, carray.empty or carray.zeros")

    # -- properties ----------------------------------------------------------------------------

    cdef Py_ssize_t size_c(self) noexcept:
        cdef Py_ssize_t n = 1
        cdef int d
        for d in range(self.ndim):
            n *= self.shape_[d]
        return n

    cdef bint c_contiguous(self) noexcept:
        cdef Py_ssize_t expect = 1
        cdef int d
        if self.size_c() == 0:          # empty arrays are contiguous whatever their strides
            return True
        for d in range(self.ndim - 1, -1, -1):
            if self.shape_[d] != 1 and self.strides_[d] != expect:
                return False
            expect *= self.shape_[d]
        return True

    cdef bint f_contiguous(self) noexcept:
        cdef Py_ssize_t expect = 1
        cdef int d
        if self.size_c() == 0:
            return True
        for d in range(self.ndim):
            if self.shape_[d] != 1 and self.strides_[d] != expect:
                return False
            expect *= self.shape_[d]
        return True

    @property
    def shape(self):
        """Tuple of dimension sizes."""
        return tuple([self.shape_[d] for d in range(self.ndim)])

    @property
    def strides(self):
        """Tuple of byte steps per dimension (as NumPy reports them)."""
        return tuple([self.strides_[d] * self.itemsize for d in range(self.ndim)])

    @property
    def ndim(self):
        """Number of dimensions."""
        return self.ndim

    @property
    def size(self):
        """Number of elements."""
        return self.size_c()

    @property
    def itemsize(self):
        """Bytes per element."""
        return self.itemsize

    @property
    def nbytes(self):
        """Bytes the elements take (size * itemsize)."""
        return self.size_c() * self.itemsize

    @property
    def dtype(self):
        """The element type (a carray dtype, equal to NumPy's dtype of the same name)."""
        return dtype_of(self.dtype_num)

    @property
    def device(self):
        """Where the data lives: 'cpu' (or the OpenCL device's name)."""
        return self.storage.device

    @property
    def base(self):
        """The array that owns the memory this view shows; None when this array owns it."""
        return self.owner

    @property
    def flags(self):
        """c_contiguous, f_contiguous, owndata, writeable, aligned (attribute or ['C_CONTIGUOUS'])."""
        cdef _Flags f = _Flags.__new__(_Flags)
        f.c_contiguous = self.c_contiguous()
        f.f_contiguous = self.f_contiguous()
        f.owndata = self.owner is None
        f.writeable = self.writeable
        f.aligned = True
        return f

    def is_contiguous(self):
        """True when the elements are laid out in C order with no gaps (PyTorch's is_contiguous)."""
        return self.c_contiguous()

    @property
    def T(self):
        """The view with the axes reversed."""
        return _reversed_axes(self)

    @property
    def mT(self):
        """The view with the last two axes swapped (ValueError for fewer than 2 dims)."""
        if self.ndim < 2:
            raise ValueError(f"matrix transpose with ndim < 2 is undefined (got ndim {self.ndim})")
        return self.swapaxes(-1, -2)

    @property
    def data_ptr(self):
        """The host address of element [0, ..., 0] as an int (0 for device arrays)."""
        return <size_t>self.data

    # -- views ---------------------------------------------------------------------------------

    def reshape(self, *shape, order="C"):
        """The same elements in a new shape; a view when the strides allow, else a copy.

        One dimension may be -1 (inferred). Raises ValueError when the sizes differ.
        """
        if len(shape) == 1 and not PyLong_Check(shape[0]) and not hasattr(shape[0], "__index__"):
            shape = shape[0]
        return _reshape(self, shape, order)

    def view(self, *shape):
        """reshape that never copies (PyTorch's view): RuntimeError when the strides forbid it.
        With one dtype argument, NumPy's view(dtype): the same bytes read as a dtype of the same
        itemsize (ValueError for another itemsize)."""
        if len(shape) == 1 and isinstance(shape[0], (DType, str)):
            return _bits_view(self, as_dtype(shape[0]))
        if len(shape) == 1 and not PyLong_Check(shape[0]) and not hasattr(shape[0], "__index__"):
            shape = shape[0]
        cdef Py_ssize_t newshape[MAXDIMS]
        cdef Py_ssize_t newstrides[MAXDIMS]
        cdef int n = _resolve_shape(self, shape, newshape)
        if not _reshape_strides(self, n, newshape, newstrides):
            raise RuntimeError(f"view size is not compatible with input tensor's size and stride "
                               f"(shape {self.shape}, strides {self.strides}); use reshape")
        return make_view(self, n, newshape, newstrides, self.offset)

    def transpose(self, *axes):
        """The view with axes permuted (reversed when none are given); ValueError/AxisError
        when `axes` is not a permutation of the dimensions."""
        if len(axes) == 1 and axes[0] is not None and not PyLong_Check(axes[0]) \
                and not hasattr(axes[0], "__index__"):
            return _permute(self, tuple(axes[0]))     # a sequence, () included
        if len(axes) == 0 or axes == (None,):
            return _reversed_axes(self)
        return _permute(self, axes)

    def permute(self, *dims):
        """PyTorch's name for transpose(axes): the view with dimensions reordered."""
        if len(dims) == 1 and not PyLong_Check(dims[0]) and not hasattr(dims[0], "__index__"):
            dims = tuple(dims[0])
        return _permute(self, dims)

    def swapaxes(self, axis1, axis2):
        """The view with two axes exchanged."""
        cdef int a = normalize_axis(axis1, self.ndim)
        cdef int b = normalize_axis(axis2, self.ndim)
        perm = list(range(self.ndim))
        perm[a], perm[b] = perm[b], perm[a]
        return _permute(self, perm)

    def squeeze(self, axis=None):
        """The view without size-1 dims (all, or those in `axis`); ValueError if one is not 1."""
        return squeeze(self, axis)

    def expand(self, *shape):
        """PyTorch's expand: broadcast_to where -1 keeps a dimension's size."""
        if len(shape) == 1 and not PyLong_Check(shape[0]) and not hasattr(shape[0], "__index__"):
            shape = tuple(shape[0])
        k = len(shape) - self.ndim
        if k < 0:
            raise ValueError(f"expand: the number of sizes provided ({len(shape)}) must be greater "
                             f"or equal to the number of dimensions in the array ({self.ndim})")
        target = [self.shape_[i - k] if s == -1 and i >= k else s for i, s in enumerate(shape)]
        return broadcast_to(self, target)

    def ravel(self):
        """The elements as a 1-d array in C order: a view when contiguous, else a copy."""
        return _reshape(self if self.c_contiguous() else self.copy(), (-1,), "C")

    def flatten(self):
        """A 1-d C-order copy of the elements."""
        return _reshape(self.copy(), (-1,), "C")

    # -- copies --------------------------------------------------------------------------------

    def copy(self, order="C"):
        """A new C-contiguous (or order='F') array with the same elements."""
        return _copy_as(self, self.dtype_num, order)

    def astype(self, dtype, copy=True):
        """The elements cast to `dtype` (C order); self when the dtype already matches and
        copy=False. Casts as NumPy's unsafe casting (float -> int truncates, x -> bool is x != 0)."""
        cdef int num = parse_dtype_num(dtype, self.dtype_num)
        if not copy and num == self.dtype_num:
            return self
        return _copy_as(self, num, "K")

    def fill(self, value):
        """Set every element to the scalar `value` (cast to the array's dtype)."""
        copy_into(self, _scalar_for(value, self.dtype_num))

    def to(self, device):
        """This array on `device` ("cpu" or "gpu"): self when it is already there, else a
        C-contiguous copy (reading a device array to the host waits for its queue)."""
        cdef str dev = parse_device(device)
        cdef Array out
        if dev == self.storage.device:
            return self
        out = new_device_array(self.ndim, self.shape_, self.dtype_num) if dev == "gpu" \
            else new_array(self.ndim, self.shape_, self.dtype_num)
        copy_into(out, self)
        return out

    def cpu(self):
        """This array on the CPU (self when it is there already)."""
        return self.to("cpu")

    def _cl(self):
        """(OpenCL buffer or None, element offset, type number, shape, element strides): what
        the OpenCL backend launches kernels with."""
        return (self.storage.handle, self.offset, self.dtype_num,
                tuple([self.shape_[d] for d in range(self.ndim)]),
                tuple([self.strides_[d] for d in range(self.ndim)]))

    # -- Python protocols ----------------------------------------------------------------------

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return self.shape_[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape_[0]))

    def __contains__(self, value):
        """`value in a`: whether any element equals value ((a == value).any(), as NumPy)."""
        return bool((self == value).any())

    def __getitem__(self, key):
        try:
            return _getitem(self, key)
        except OverflowError:           # an index beyond int64: out of bounds, as NumPy says
            raise _index_overflow(key) from None

    def __setitem__(self, key, value):
        _setitem(self, key, value)

    def __delitem__(self, key):
        """Arrays have a fixed size: ValueError, as NumPy."""
        raise ValueError("cannot delete array elements")

    def item(self, *args):
        """The element as a Python scalar: the only one, or the one at a flat or n-d index."""
        if len(args) == 0:
            if self.size_c() != 1:
                raise ValueError(f"can only convert an array of size 1 to a Python scalar "
                                 f"(got size {self.size_c()})")
            return _read_scalar(self, 0)
        if len(args) == 1 and PyLong_Check(args[0]) or hasattr(args[0], "__index__") and len(args) == 1:
            return _read_scalar(self, _flat_offset(self, _as_index(args[0], "index")))
        if len(args) == 1:
            args = tuple(args[0])
        if len(args) != self.ndim:
            raise ValueError(f"incorrect number of indices for array: expected {self.ndim}, "
                             f"got {len(args)}")
        cdef Py_ssize_t off = 0, i
        for d in range(self.ndim):
            i = _as_index(args[d], "index")
            if i < -self.shape_[d] or i >= self.shape_[d]:
                raise IndexError(f"index {i} is out of bounds for axis {d} with size "
                                 f"{self.shape_[d]}")
            off += (i + self.shape_[d] if i < 0 else i) * self.strides_[d]
        return _read_scalar(self, off)

    def tolist(self):
        """The elements as nested Python lists of bool/int/float (a scalar for 0-d arrays)."""
        return _tolist(self)

    def _scalar(self, str what):
        if self.ndim != 0:
            raise TypeError(f"only 0-dimensional arrays can be converted to Python scalars "
                            f"(got shape {self.shape} in {what}())")
        return _read_scalar(self, 0)

    def __float__(self):
        return float(self._scalar("float"))

    def __int__(self):
        return int(self._scalar("int"))

    def __index__(self):
        if self.ndim != 0 or not is_int_num(self.dtype_num):
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return _read_scalar(self, 0)

    def __bool__(self):
        cdef Py_ssize_t n = self.size_c()
        if n == 0:
            raise ValueError("The truth value of an empty array is ambiguous. "
                             "Use `array.size > 0` to check that an array is not empty.")
        if n > 1:
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()")
        return bool(_read_scalar(self, _flat_offset(self, 0)))

    def __complex__(self):
        return complex(self._scalar("complex"))

    def __format__(self, spec):
        if self.ndim == 0:
            return format(_read_scalar(self, 0), spec)
        if spec:
            raise TypeError(f"unsupported format string {spec!r} passed to carray.Array.__format__")
        return str(self)

    def __repr__(self):
        from carray.core._format import array_repr
        if on_gpu(self):
            return array_repr(self.to("cpu"))[:-1] + ", device='gpu')"
        return array_repr(self)

    def __str__(self):
        from carray.core._format import array_str
        return array_str(self.to("cpu") if on_gpu(self) else self)

    def __array__(self, dtype=None, copy=None):
        """NumPy's conversion for device arrays (host arrays export their buffer, zero-copy).
        bfloat16 becomes ml_dtypes.bfloat16 (TypeError when ml_dtypes is not installed)."""
        import numpy
        if self.dtype_num == BFLOAT16:
            return _bfloat16_to_numpy(self, dtype, copy)
        return numpy.array(self.to("cpu"), dtype=dtype, copy=copy)

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    # -- reductions and math methods (implemented in _ufunc) -----------------------------------

    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        """Sum over axis (see carray.sum)."""
        return ops().sum(self, axis, dtype, out, keepdims)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False):
        """Product over axis (see carray.prod)."""
        return ops().prod(self, axis, dtype, out, keepdims)

    def max(self, axis=None, out=None, keepdims=False):
        """Largest element over axis (see carray.max)."""
        return ops().max(self, axis, out, keepdims)

    def min(self, axis=None, out=None, keepdims=False):
        """Smallest element over axis (see carray.min)."""
        return ops().min(self, axis, out, keepdims)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        """Mean over axis (see carray.mean)."""
        return ops().mean(self, axis, dtype, out, keepdims)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        """Variance over axis (see carray.var)."""
        return ops().var(self, axis, dtype, out, ddof, keepdims)

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        """Standard deviation over axis (see carray.std)."""
        return ops().std(self, axis, dtype, out, ddof, keepdims)

    def argmax(self, axis=None, out=None, keepdims=False):
        """Index of the largest element (see carray.argmax)."""
        return ops().argmax(self, axis, out, keepdims)

    def argmin(self, axis=None, out=None, keepdims=False):
        """Index of the smallest element (see carray.argmin)."""
        return ops().argmin(self, axis, out, keepdims)

    def cumsum(self, axis=None, dtype=None, out=None):
        """Cumulative sum along axis (see carray.cumsum)."""
        from carray.ops._cumulative import cumsum
        return cumsum(self, axis, dtype, out)

    def cumprod(self, axis=None, dtype=None, out=None):
        """Cumulative product along axis (see carray.cumprod)."""
        from carray.ops._cumulative import cumprod
        return cumprod(self, axis, dtype, out)

    def sort(self, axis=-1, kind=None, order=None, *, stable=None):
        """Sort in place along axis, stably, NaNs last; returns None (see carray.sort)."""
        from carray.ops._sort import sort_inplace
        sort_inplace(self, axis, kind, order, stable)

    def argsort(self, axis=-1, kind=None, order=None, *, stable=None):
        """The int64 indices that sort the array along axis (see carray.argsort)."""
        from carray.ops._sort import argsort
        return argsort(self, axis, kind, order, stable=stable)

    def clip(self, min=None, max=None, out=None):
        """The elements limited to [min, max] (see carray.clip)."""
        return ops().clip(self, min, max, out)

    def any(self, axis=None, out=None, keepdims=False):
        """True where any element over axis is nonzero."""
        return ops().any(self, axis, out, keepdims)

    def all(self, axis=None, out=None, keepdims=False):
        """True where every element over axis is nonzero."""
        return ops().all(self, axis, out, keepdims)

    # NumPy's ndarray methods that call a carray function of the same name
    def dot(self, b, out=None):
        """The dot product with b (see carray.dot)."""
        import carray
        return carray.dot(self, b, out=out)

    def trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
        """The sum along a diagonal (see carray.trace)."""
        import carray
        r = carray.trace(self, offset, axis1, axis2, dtype)
        if out is None:
            return r
        out[...] = r
        return out

    def diagonal(self, offset=0, axis1=0, axis2=1):
        """The diagonal(s) between axis1 and axis2 (see carray.diagonal)."""
        import carray
        return carray.diagonal(self, offset, axis1, axis2)

    def nonzero(self):
        """A tuple of the indices of the nonzero elements, one array per dimension (see
        carray.nonzero)."""
        import carray
        return carray.nonzero(self)

    def repeat(self, repeats, axis=None):
        """Each element repeated (see carray.repeat)."""
        import carray
        return carray.repeat(self, repeats, axis=axis)

    def round(self, decimals=0, out=None):
        """Rounded to decimals, halves to even (see carray.round)."""
        import carray
        r = carray.round(self, decimals=decimals)
        if out is None:
            return r
        out[...] = r
        return out

    def searchsorted(self, v, side="left", sorter=None):
        """Where v's elements would go in this sorted 1-d array (see carray.searchsorted)."""
        import carray
        return carray.searchsorted(self, v, side=side, sorter=sorter)

    # -- operators (implemented in _ufunc) ------------------------------------------------------

    __array_ufunc__ = None     # NumPy defers to our reflected operators: ndarray + Array -> Array
    __hash__ = None

    def __add__(self, other):
        return _binary(BINARY, B_ADD, self, other, None)

    def __radd__(self, other):
        return _binary(BINARY, B_ADD, other, self, None)

    def __iadd__(self, other):
        return _binary(BINARY, B_ADD, self, other, self)

    def __sub__(self, other):
        return _binary(BINARY, B_SUB, self, other, None)

    def __rsub__(self, other):
        return _binary(BINARY, B_SUB, other, self, None)

    def __isub__(self, other):
        return _binary(BINARY, B_SUB, self, other, self)

    def __mul__(self, other):
        return _binary(BINARY, B_MUL, self, other, None)

    def __rmul__(self, other):
        return _binary(BINARY, B_MUL, other, self, None)

    def __imul__(self, other):
        return _binary(BINARY, B_MUL, self, other, self)

    def __truediv__(self, other):
        return _binary(BINARY, B_DIV, self, other, None)

    def __rtruediv__(self, other):
        return _binary(BINARY, B_DIV, other, self, None)

    def __itruediv__(self, other):
        return _binary(BINARY, B_DIV, self, other, self)

    def __floordiv__(self, other):
        return _binary(BINARY, B_FLOORDIV, self, other, None)

    def __rfloordiv__(self, other):
        return _binary(BINARY, B_FLOORDIV, other, self, None)

    def __ifloordiv__(self, other):
        return _binary(BINARY, B_FLOORDIV, self, other, self)

    def __mod__(self, other):
        return _binary(BINARY, B_MOD, self, other, None)

    def __rmod__(self, other):
        return _binary(BINARY, B_MOD, other, self, None)

    def __imod__(self, other):
        return _binary(BINARY, B_MOD, self, other, self)

    def __pow__(self, other, modulo=None):
        if modulo is not None:
            raise TypeError("pow() with a modulus is not supported for carray arrays")
        return _binary(BINARY, B_POW, self, other, None)

    def __rpow__(self, other, modulo=None):
        return _binary(BINARY, B_POW, other, self, None)

    def __ipow__(self, other):
        return _binary(BINARY, B_POW, self, other, self)

    def __eq__(self, other):
        if other is None:             # NumPy 2: compares elementwise, nothing equals None
            return _full_bool(self, False)
        return _binary(COMPARE, C_EQ, self, other, None)

    def __ne__(self, other):
        if other is None:
            return _full_bool(self, True)
        return _binary(COMPARE, C_NE, self, other, None)

    def __lt__(self, other):
        return _binary(COMPARE, C_LT, self, other, None)

    def __le__(self, other):
        return _binary(COMPARE, C_LE, self, other, None)

    def __gt__(self, other):
        return _binary(COMPARE, C_GT, self, other, None)

    def __ge__(self, other):
        return _binary(COMPARE, C_GE, self, other, None)

    def __and__(self, other):
        return _binary(BINARY, B_AND, self, other, None)

    def __rand__(self, other):
        return _binary(BINARY, B_AND, other, self, None)

    def __iand__(self, other):
        return _binary(BINARY, B_AND, self, other, self)

    def __or__(self, other):
        return _binary(BINARY, B_OR, self, other, None)

    def __ror__(self, other):
        return _binary(BINARY, B_OR, other, self, None)

    def __ior__(self, other):
        return _binary(BINARY, B_OR, self, other, self)

    def __xor__(self, other):
        return _binary(BINARY, B_XOR, self, other, None)

    def __rxor__(self, other):
        return _binary(BINARY, B_XOR, other, self, None)

    def __ixor__(self, other):
        return _binary(BINARY, B_XOR, self, other, self)

    def __invert__(self):
        return _unary(UNARY, U_INVERT, self, None)

    def __matmul__(self, other):
        return ops().matmul(self, other)

    def __rmatmul__(self, other):
        return ops().matmul(other, self)

    def __imatmul__(self, other):
        return ops().matmul(self, other, out=self)

    def __neg__(self):
        return _unary(UNARY, U_NEG, self, None)

    def __pos__(self):
        if self.dtype_num == BOOL:
            raise TypeError("ufunc 'positive' did not contain a loop with signature matching "
                            "types bool (as NumPy: unary + is not defined for bool arrays)")
        return self.copy()

    def __abs__(self):
        return _unary(UNARY, U_ABS, self, None)

    # -- complex parts (views of the interleaved storage, as NumPy's; _complex_views.pxi) ------

    @property
    def real(self):
        """The real part: a writable float view for complex arrays, the array itself else."""
        return complex_part(self, 0) if is_complex_num(self.dtype_num) else self

    @real.setter
    def real(self, value):
        copy_into(self.real, as_array(value, -1))

    @property
    def imag(self):
        """The imaginary part: a writable float view for complex arrays; read-only zeros of
        the array's dtype else (as NumPy)."""
        if is_complex_num(self.dtype_num):
            return complex_part(self, 1)
        z = new_array_on(self.ndim, self.shape_, self.dtype_num, self)
        copy_into(z, _scalar_array(0, self.dtype_num))
        (<Array>z).writeable = False
        return z

    @imag.setter
    def imag(self, value):
        if not is_complex_num(self.dtype_num):
            raise TypeError("array does not have imaginary part to set")
        copy_into(self.imag, as_array(value, -1))

    def conj(self):
        """The complex conjugate (see carray.conj)."""
        import carray
        return carray.conj(self)

    def conjugate(self):
        """The complex conjugate (see carray.conjugate)."""
        import carray
        return carray.conj(self)

    # -- the array API standard's methods (carray/_array_api.py, carray/_api_elementwise.py) --

    def __array_namespace__(self, *, api_version=None):
        """The carray module (the array API namespace); ValueError for unsupported versions."""
        from carray._array_api import namespace
        return namespace(api_version)

    def to_device(self, device, /, *, stream=None):
        """This array on `device` ('cpu' or 'gpu'): self when it is there already, else a copy.
        `stream` must be None (carray has one queue per device)."""
        if stream is not None:
            raise ValueError(f"to_device: stream must be None, got {stream!r}")
        return self.to(device)

    def __lshift__(self, other):
        from carray._api_elementwise import bitwise_left_shift
        return bitwise_left_shift(self, other)

    def __rlshift__(self, other):
        from carray._api_elementwise import bitwise_left_shift
        return bitwise_left_shift(other, self)

    def __ilshift__(self, other):
        from carray._api_elementwise import bitwise_left_shift
        self[...] = bitwise_left_shift(self, other)
        return self

    def __rshift__(self, other):
        from carray._api_elementwise import bitwise_right_shift
        return bitwise_right_shift(self, other)

    def __rrshift__(self, other):
        from carray._api_elementwise import bitwise_right_shift
        return bitwise_right_shift(other, self)

    def __irshift__(self, other):
        from carray._api_elementwise import bitwise_right_shift
        self[...] = bitwise_right_shift(self, other)
        return self

    # buffer protocol, DLPack and pickling live in _export.pxi
    def __getbuffer__(self, Py_buffer* view, int flags):
        _get_buffer(self, view, flags)

    def __releasebuffer__(self, Py_buffer* view):
        free(view.internal)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """Export as a DLPack capsule (zero-copy; a versioned capsule when max_version >= (1, 0))."""
        return _to_dlpack(self, stream, max_version, dl_device, copy)

    def __dlpack_device__(self):
        """(device type, device id): (1, 0), the CPU (device arrays export a host copy)."""
        return (1, 0)

    def __reduce__(self):
        if on_gpu(self):
            return (_reconstruct_on, (self.to("cpu"), "gpu"))
        return (_reconstruct, (self.shape, dtype_of(self.dtype_num).name,
                               memoryview(_bits_view(self.copy(), dtype_of(UINT16))
                                          if self.dtype_num == BFLOAT16 else
                                          self.copy()).tobytes()))


def _reconstruct_on(host, device):
    """Unpickle a device array: its host copy moved to `device`."""
    return host.to(device)


cdef Array _full_bool(Array a, bint value):
    """A new bool array of a's shape (on a's device) filled with value."""
    cdef Array out = new_array_on(a.ndim, a.shape_, BOOL, a)
    if on_gpu(out):
        out.fill(value)
    elif out.size_c():
        memset(out.data, value, out.size_c())
    return out


# ---------------------------------------------------------------------------------------------
# view helpers
# ---------------------------------------------------------------------------------------------

cdef int _resolve_shape(Array a, object shape, Py_ssize_t* out) except -1:
    """Parse a reshape target (one -1 allowed) for a's size; ValueError when sizes differ."""
    cdef int n = 0, unknown = -1, d
    cdef Py_ssize_t known = 1, size = a.size_c(), v
    cdef bint empty = False
    if PyLong_Check(shape) or hasattr(shape, "__index__") and not isinstance(shape, (list, tuple)):
        shape = (shape,)
    shape = tuple(shape)
    if len(shape) > MAXDIMS:
        raise ValueError(f"maximum supported dimension for an array is {MAXDIMS}, "
                         f"found {len(shape)}")
    for x in shape:
        if isinstance(x, float) or isinstance(x, bool):
            raise TypeError(f"'{type(x).__name__}' object cannot be interpreted as an integer "
                            f"(got {x!r} in shape {shape})")
        try:
            v = operator.index(x)
        except TypeError:
            raise TypeError(f"'{type(x).__name__}' object cannot be interpreted as an integer "
                            f"(got {x!r} in shape {shape})") from None
        except OverflowError:
            raise ValueError(f"array dimension {x} in shape {shape} is out of range: maximum "
                             f"allowed dimension exceeded") from None
        if v == -1:
            if unknown >= 0:
                raise ValueError(f"can only specify one unknown dimension, got shape {shape}")
            unknown = n
            out[n] = 1
        elif v < 0:
            raise ValueError(f"negative dimensions are not allowed, got {v} in shape {shape}")
        else:
            out[n] = v
            if v == 0:
                empty = True
            elif known > PY_SSIZE_T_MAX // v:     # no array has that many elements
                raise ValueError(f"cannot reshape array of size {size} into shape {shape}")
            else:
                known *= v
        n += 1
    if empty:
        known = 0
    if unknown >= 0:
        if known == 0 or size % known != 0:
            raise ValueError(f"cannot reshape array of size {size} into shape {shape}")
        out[unknown] = size // known
    elif known != size:
        raise ValueError(f"cannot reshape array of size {size} into shape {shape}")
    return n


cdef bint _reshape_strides(Array a, int n, const Py_ssize_t* newshape,
                           Py_ssize_t* newstrides) noexcept:
    """Strides that show a's elements (in C order) in `newshape` without copying, if any exist.

    Walks runs of old dims that are contiguous with each other and splits each run into the new
    dims that cover the same elements (NumPy's attempt_nocopy_reshape)."""
    cdef Py_ssize_t olddims[MAXDIMS]
    cdef Py_ssize_t oldstrides[MAXDIMS]
    cdef int oldnd = 0, d, oi, oj, ni, nj, ok
    cdef Py_ssize_t np_, op_
    for d in range(a.ndim):
        if a.shape_[d] == 0:          # empty: any C strides do
            np_ = 1
            for d in range(n - 1, -1, -1):
                newstrides[d] = np_
                np_ *= newshape[d] if newshape[d] > 0 else 1
            return True
        if a.shape_[d] != 1:
            olddims[oldnd] = a.shape_[d]
            oldstrides[oldnd] = a.strides_[d]
            oldnd += 1
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < n and oi < oldnd:
        np_ = newshape[ni]
        op_ = olddims[oi]
        while np_ != op_:
            if np_ < op_:
                np_ *= newshape[nj]
                nj += 1
            else:
                op_ *= olddims[oj]
                oj += 1
        for ok in range(oi, oj - 1):
            if oldstrides[ok] != olddims[ok + 1] * oldstrides[ok + 1]:
                return False
        newstrides[nj - 1] = oldstrides[oj - 1]
        for d in range(nj - 1, ni, -1):
            newstrides[d - 1] = newstrides[d] * newshape[d]
        ni = nj
        nj += 1
        oi = oj
        oj += 1
    # trailing size-1 dims (and all dims when a has a single element) take the last stride,
    # as NumPy's attempt_nocopy_reshape
    np_ = newstrides[ni - 1] if ni >= 1 else 1
    for d in range(ni, n):
        newstrides[d] = np_
    return True


cdef Array _reshape(Array a, object shape, object order):
    cdef Py_ssize_t newshape[MAXDIMS]
    cdef Py_ssize_t newstrides[MAXDIMS]
    cdef int n
    if order == "F":
        rev = tuple(_reversed_shape(a, shape))
        return _reshape(a.transpose(), rev, "C").transpose()
    if order not in ("C", "A"):
        raise ValueError(f"order must be one of 'C', 'F', 'A', got {order!r}")
    n = _resolve_shape(a, shape, newshape)
    if n == a.ndim and same_dims(n, newshape, a.shape_) \
            and -1 not in (shape if isinstance(shape, (tuple, list)) else (shape,)):
        return make_view(a, n, a.shape_, a.strides_, a.offset)    # same shape: NumPy keeps strides
    if _reshape_strides(a, n, newshape, newstrides):
        return make_view(a, n, newshape, newstrides, a.offset)
    cdef Array c = a.copy()
    _reshape_strides(c, n, newshape, newstrides)
    return make_view(c, n, newshape, newstrides, c.offset)


cdef list _reversed_shape(Array a, object shape):
    if PyLong_Check(shape) or hasattr(shape, "__index__") and not isinstance(shape, (list, tuple)):
        shape = (shape,)
    return list(shape)[::-1]


cdef Array _reversed_axes(Array a):
    cdef Py_ssize_t shape[MAXDIMS]
    cdef Py_ssize_t strides[MAXDIMS]
    cdef int d
    for d in range(a.ndim):
        shape[d] = a.shape_[a.ndim - 1 - d]
        strides[d] = a.strides_[a.ndim - 1 - d]
    return make_view(a, a.ndim, shape, strides, a.offset)


cdef Array _permute(Array a, object axes):
    cdef Py_ssize_t shape[MAXDIMS]
    cdef Py_ssize_t strides[MAXDIMS]
    cdef bint seen[MAXDIMS]
    cdef int d, ax
    axes = tuple(axes)
    if len(axes) != a.ndim:
        raise ValueError(f"axes don't match array: got {len(axes)} axes {axes} "
                         f"for an array of dimension {a.ndim}")
    for d in range(a.ndim):
        seen[d] = False
    for d in range(a.ndim):
        ax = normalize_axis(axes[d], a.ndim)
        if seen[ax]:
            raise ValueError(f"repeated axis in transpose: {axes}")
        seen[ax] = True
        shape[d] = a.shape_[ax]
        strides[d] = a.strides_[ax]
    return make_view(a, a.ndim, shape, strides, a.offset)


cdef tuple _axis_tuple(object axis, int ndim):
    """Normalise an int or a tuple of ints to sorted unique axes in [0, ndim)."""
    if isinstance(axis, (tuple, list)):
        axes = [normalize_axis(x, ndim) for x in axis]
    else:
        axes = [normalize_axis(axis, ndim)]
    if len(set(axes)) != len(axes):
        raise ValueError(f"repeated axis in {tuple(axis) if isinstance(axis, list) else axis}")
    return tuple(sorted(axes))


cdef Array _copy_as(Array a, int dtype_num, object order):
    cdef Array out
    cdef Py_ssize_t stride = 1
    cdef int d
    if order == "F":
        out = new_array_on(a.ndim, a.shape_, dtype_num, a)
        for d in range(a.ndim):          # an F-contiguous owner (NumPy's copy(order='F'))
            out.strides_[d] = stride
            stride *= a.shape_[d] if a.shape_[d] > 0 else 1
        copy_into(out, a)
        return out
    if order not in ("C", "K", "A"):
        raise ValueError(f"order must be one of 'C', 'F', 'A', 'K', got {order!r}")
    out = new_array_on(a.ndim, a.shape_, dtype_num, a)
    copy_into(out, a)
    return out


# ---------------------------------------------------------------------------------------------
# module-level view functions (NumPy names)
# ---------------------------------------------------------------------------------------------

def reshape(a, shape, order="C"):
    """a's elements in a new shape: a view when possible, else a copy (see Array.reshape)."""
    return _reshape(as_array(a, -1), shape, order)


def transpose(a, axes=None):
    """The view of a with axes permuted (reversed when axes is None)."""
    a = as_array(a, -1)
    return a.transpose() if axes is None else a.transpose(tuple(axes))


def permute_dims(a, axes):
    """The array API name for transpose(a, axes)."""
    return as_array(a, -1).transpose(tuple(axes))


def swapaxes(a, axis1, axis2):
    """The view of a with axis1 and axis2 exchanged."""
    return as_array(a, -1).swapaxes(axis1, axis2)


def moveaxis(a, source, destination):
    """The view of a with the axes `source` moved to positions `destination`."""
    cdef Array arr = as_array(a, -1)
    src = [normalize_axis(s, arr.ndim) for s in (source if isinstance(source, (tuple, list)) else (source,))]
    dst = [normalize_axis(s, arr.ndim) for s in (destination if isinstance(destination, (tuple, list)) else (destination,))]
    if len(set(src)) != len(src):
        raise ValueError(f"repeated axis in `source` argument: {source}")
    if len(set(dst)) != len(dst):
        raise ValueError(f"repeated axis in `destination` argument: {destination}")
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number of "
                         f"elements, got {len(src)} and {len(dst)}")
    order = [n for n in range(arr.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _permute(arr, order)


def expand_dims(a, axis):
    """The view of a with size-1 dims inserted at the positions `axis` (int or tuple) of the
    result; AxisError for a position outside the result's dims."""
    cdef Array arr = as_array(a, -1)
    cdef Py_ssize_t shape[MAXDIMS]
    cdef Py_ssize_t strides[MAXDIMS]
    cdef int n = arr.ndim + (len(axis) if isinstance(axis, (tuple, list)) else 1), d, k = 0
    if n > MAXDIMS:
        raise ValueError(f"maximum supported dimension for an array is {MAXDIMS}, found {n}")
    axes = _axis_tuple(axis, n)
    for d in range(n):
        if d in axes:
            shape[d] = 1
        else:
            shape[d] = arr.shape_[k]
            k += 1
    _reshape_strides(arr, n, shape, strides)     # NumPy's expand_dims is a reshape: same strides
    return make_view(arr, n, shape, strides, arr.offset)


def squeeze(a, axis=None):
    """The view of a without its size-1 dims (all, or the ones in `axis`); ValueError when an
    axis named is not of size 1."""
    cdef Array arr = as_array(a, -1)
    cdef Py_ssize_t shape[MAXDIMS]
    cdef Py_ssize_t strides[MAXDIMS]
    cdef int n = 0, d
    axes = None if axis is None else _axis_tuple(axis, arr.ndim)
    for d in range(arr.ndim):
        if axes is None and arr.shape_[d] == 1:
            continue
        if axes is not None and d in axes:
            if arr.shape_[d] != 1:
                raise ValueError(f"cannot select an axis to squeeze out which has size not equal "
                                 f"to one (axis {d} has size {arr.shape_[d]})")
            continue
        shape[n] = arr.shape_[d]
        strides[n] = arr.strides_[d]
        n += 1
    if n == arr.ndim and arr is a:       # nothing to squeeze: NumPy returns the array itself
        return arr
    return make_view(arr, n, shape, strides, arr.offset)


def broadcast_shapes(*shapes):
    """The shape that all `shapes` broadcast to (NumPy's rules); ValueError naming the shapes
    when they are incompatible."""
    cdef Py_ssize_t buf[MAXDIMS]
    out = []
    parsed = []
    for s in shapes:
        n = parse_shape(s, buf)
        parsed.append(tuple(buf[i] for i in range(n)))
    ndim = max((len(s) for s in parsed), default=0)
    result = [1] * ndim
    for s in parsed:
        k = ndim - len(s)
        for i, v in enumerate(s):
            r = result[k + i]
            if r == 1:
                result[k + i] = v
            elif v != 1 and v != r:
                raise ValueError("shape mismatch: objects cannot be broadcast to a single shape: "
                                 + " and ".join(str(p) for p in parsed))
    return tuple(result)


def broadcast_to(array, shape):
    """A read-only view of `array` broadcast to `shape` (stride 0 along repeated dims);
    ValueError when it cannot be broadcast."""
    cdef Array a = as_array(array, -1)
    cdef Py_ssize_t buf[MAXDIMS]
    cdef int n = parse_shape(shape, buf)
    cdef Array v
    check_view_shape(n, buf, a.itemsize)       # (not a broadcasting error: checked apart)
    try:
        v = broadcast_view(a, n, buf)
    except ValueError:
        raise ValueError(f"operands could not be broadcast together with remapped shapes "
                         f"[original->remapped]: {a.shape} and requested shape "
                         f"{tuple(buf[i] for i in range(n))}") from None
    v.writeable = False
    return v


def broadcast_arrays(*arrays):
    """Read-only views of the arrays broadcast to their common shape, as a tuple (NumPy 2 and
    the array API)."""
    arrs = [as_array(x, -1) for x in arrays]
    shape = broadcast_shapes(*[a.shape for a in arrs])
    return tuple([broadcast_to(a, shape) for a in arrs])


def ascontiguousarray(a, dtype=None):
    """a as a C-contiguous array: a itself when it already is (and has `dtype`), else a copy."""
    cdef Array arr = as_array(a, parse_dtype_num(dtype, -1))
    if arr.ndim == 0:                   # at least 1-d, as NumPy's
        return _reshape(arr, (1,), "C")
    if arr.c_contiguous():
        return arr
    return _copy_as(arr, arr.dtype_num, "C")


def copy(a):
    """A C-contiguous copy of a."""
    return _copy_as(as_array(a, -1), as_array(a, -1).dtype_num, "C")


def shape(a):
    """The shape of a (an array or anything asarray accepts)."""
    return as_array(a, -1).shape


def ndim(a):
    """The number of dimensions of a."""
    return as_array(a, -1).ndim


def size(a):
    """The number of elements of a."""
    return as_array(a, -1).size


include "_scalars.pxi"
include "_indexing.pxi"
include "_fromobject.pxi"
include "_export.pxi"
include "_complex_views.pxi"

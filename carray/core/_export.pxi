# Export: the buffer protocol, DLPack (export and import) and pickling. (included by _array.pyx)

from cpython.buffer cimport PyBUF_C_CONTIGUOUS, PyBUF_F_CONTIGUOUS, PyBUF_ANY_CONTIGUOUS
from cpython.buffer cimport PyBuffer_Release
from cpython.pycapsule cimport (PyCapsule_New, PyCapsule_IsValid, PyCapsule_GetPointer,
                                PyCapsule_SetName)
from cpython.ref cimport Py_INCREF, Py_DECREF, PyObject

cdef extern from "_dlpack.h":
    ctypedef struct DLPackVersion:
        unsigned int major
        unsigned int minor
    ctypedef struct DLDevice:
        int device_type
        int device_id
    ctypedef struct DLDataType:
        unsigned char code
        unsigned char bits
        unsigned short lanes
    ctypedef struct DLTensor:
        void* data
        DLDevice device
        int ndim
        DLDataType dtype
        int64_t* shape
        int64_t* strides
        unsigned long long byte_offset
    ctypedef struct DLManagedTensor:
        DLTensor dl_tensor
        void* manager_ctx
        void (*deleter)(DLManagedTensor*) noexcept
    ctypedef struct DLManagedTensorVersioned:
        DLPackVersion version
        void* manager_ctx
        void (*deleter)(DLManagedTensorVersioned*) noexcept
        unsigned long long flags
        DLTensor dl_tensor
    int kDLCPU, kDLCUDAHost, kDLInt, kDLUInt, kDLFloat, kDLBool, kDLBfloat
    unsigned long long DLPACK_FLAG_BITMASK_READ_ONLY, DLPACK_FLAG_BITMASK_IS_COPIED

cdef const char* _BUFFER_FORMATS[NTYPES]
_BUFFER_FORMATS[:] = [b"?", b"b", b"h", b"i", b"q", b"B", b"H", b"I", b"Q", b"f", b"d", b"e", b"E", b"Zf",
                      b"Zd"]


# -- buffer protocol --------------------------------------------------------------------------

cdef int _get_buffer(Array a, Py_buffer* view, int flags) except -1:
    """Fill `view` for a consumer; shape and byte strides live in view.internal."""
    cdef int d
    cdef Py_ssize_t* dims
    if on_gpu(a):
        raise BufferError("a device array has no host buffer; copy it with .to('cpu') first "
                          "(numpy.asarray does that through __array__)")
    if flags & PyBUF_WRITABLE and not a.writeable:
        raise BufferError("cannot export a read-only array as a writable buffer")
    if a.dtype_num == BFLOAT16 and flags & PyBUF_FORMAT:
        # (numpy.asarray then calls __array__, which gives ml_dtypes.bfloat16)
        raise BufferError("bfloat16 has no buffer-protocol format; use a.view(carray.uint16) "
                          "for its bits or a.astype(carray.float32)")
    if ((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS or (flags & PyBUF_ND) != PyBUF_ND
            or (flags & PyBUF_STRIDES) != PyBUF_STRIDES) and not a.c_contiguous():
        if (flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS and a.f_contiguous():
            pass
        else:
            raise BufferError(f"the consumer needs a C-contiguous buffer but the array has "
                              f"strides {a.strides}; use carray.ascontiguousarray first")
    if (flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS and not a.f_contiguous():
        raise BufferError("the consumer needs a Fortran-contiguous buffer")
    dims = <Py_ssize_t*>malloc(sizeof(Py_ssize_t) * (2 * a.ndim + 1))
    if dims == NULL:
        raise MemoryError("out of memory exporting a buffer")
    for d in range(a.ndim):
        dims[d] = a.shape_[d]
        dims[a.ndim + d] = a.strides_[d] * a.itemsize
    view.internal = dims
    view.buf = a.data
    view.obj = a
    view.len = a.size_c() * a.itemsize
    view.readonly = not a.writeable
    view.itemsize = a.itemsize
    view.format = <char*>_BUFFER_FORMATS[a.dtype_num] if flags & PyBUF_FORMAT else NULL
    view.ndim = a.ndim
    view.shape = dims if flags & PyBUF_ND else NULL
    view.strides = dims + a.ndim if (flags & PyBUF_STRIDES) == PyBUF_STRIDES else NULL
    view.suboffsets = NULL
    return 0


# -- DLPack export ----------------------------------------------------------------------------

cdef DLDataType _dl_dtype(int num) noexcept:
    cdef DLDataType t
    t.lanes = 1
    t.bits = <unsigned char>(itemsize_of(num) * 8)
    t.code = kDLBool if num == BOOL else (kDLFloat if is_float_num(num) else
                                          (kDLUInt if is_unsigned_num(num) else kDLInt))
    if num == BFLOAT16:
        t.code = kDLBfloat
    return t


cdef void _fill_dltensor(DLTensor* t, Array a, int64_t* dims) noexcept:
    cdef int d
    for d in range(a.ndim):
        dims[d] = a.shape_[d]
        dims[a.ndim + d] = a.strides_[d]
    t.data = a.data
    t.device.device_type = kDLCPU
    t.device.device_id = 0
    t.ndim = a.ndim
    t.dtype = _dl_dtype(a.dtype_num)
    t.shape = dims
    t.strides = dims + a.ndim
    t.byte_offset = 0


cdef void _release_ctx(void* ctx) noexcept with gil:
    Py_DECREF(<object>ctx)


cdef void _delete_legacy(DLManagedTensor* m) noexcept:
    _release_ctx(m.manager_ctx)
    free(m)


cdef void _delete_versioned(DLManagedTensorVersioned* m) noexcept:
    _release_ctx(m.manager_ctx)
    free(m)


cdef void _capsule_legacy(object capsule) noexcept:
    # runs when the capsule dies unconsumed (a consumer renames it to "used_dltensor")
    if PyCapsule_IsValid(capsule, b"dltensor"):
        _delete_legacy(<DLManagedTensor*>PyCapsule_GetPointer(capsule, b"dltensor"))


cdef void _capsule_versioned(object capsule) noexcept:
    if PyCapsule_IsValid(capsule, b"dltensor_versioned"):
        _delete_versioned(<DLManagedTensorVersioned*>PyCapsule_GetPointer(
            capsule, b"dltensor_versioned"))


cdef object _to_dlpack(Array a, object stream, object max_version, object dl_device, object copy):
    cdef DLManagedTensor* m
    cdef DLManagedTensorVersioned* mv
    cdef size_t dims_bytes = sizeof(int64_t) * (2 * a.ndim + 1)
    if on_gpu(a):
        a = a.to("cpu")         # the consumer gets a host copy (DLPack has no OpenCL device type)
    if stream is not None and stream != -1:
        raise ValueError(f"stream must be None for CPU arrays, got {stream!r}")
    if dl_device is not None and tuple(dl_device) != (kDLCPU, 0):
        raise BufferError(f"cannot export a CPU array to DLPack device {dl_device!r} without a copy")
    copied = bool(copy)
    if copied:
        a = a.copy()
    if max_version is not None:
        # checked: this module indexes tuples without bounds checks, so () would crash
        max_version = tuple(max_version)
        if len(max_version) != 2:
            raise TypeError(f"max_version must be a (major, minor) tuple, got {max_version!r}")
    if max_version is None or max_version[0] < 1:
        if not a.writeable:
            raise BufferError("cannot export a read-only array through DLPack < 1.0 "
                              "(the consumer did not pass max_version=(1, 0))")
        m = <DLManagedTensor*>malloc(sizeof(DLManagedTensor) + dims_bytes)
        if m == NULL:
            raise MemoryError("out of memory exporting DLPack")
        _fill_dltensor(&m.dl_tensor, a, <int64_t*>(m + 1))
        Py_INCREF(a)
        m.manager_ctx = <void*>a
        m.deleter = _delete_legacy
        return PyCapsule_New(m, b"dltensor", _capsule_legacy)
    mv = <DLManagedTensorVersioned*>malloc(sizeof(DLManagedTensorVersioned) + dims_bytes)
    if mv == NULL:
        raise MemoryError("out of memory exporting DLPack")
    _fill_dltensor(&mv.dl_tensor, a, <int64_t*>(mv + 1))
    mv.version.major = 1
    mv.version.minor = 0
    mv.flags = (0 if a.writeable else DLPACK_FLAG_BITMASK_READ_ONLY) | \
        (DLPACK_FLAG_BITMASK_IS_COPIED if copied else 0)
    Py_INCREF(a)
    mv.manager_ctx = <void*>a
    mv.deleter = _delete_versioned
    return PyCapsule_New(mv, b"dltensor_versioned", _capsule_versioned)


# -- DLPack import ----------------------------------------------------------------------------

cdef int _num_from_dl(DLDataType t) except -1:
    if t.lanes == 1:
        if t.code == kDLBool and t.bits == 8:
            return BOOL
        if t.code == kDLInt and t.bits in (8, 16, 32, 64):
            return (INT8, INT16, INT32, INT64)[(8, 16, 32, 64).index(t.bits)]
        if t.code == kDLUInt and t.bits in (8, 16, 32, 64):
            return (UINT8, UINT16, UINT32, UINT64)[(8, 16, 32, 64).index(t.bits)]
        if t.code == kDLFloat and t.bits == 32:
            return FLOAT32
        if t.code == kDLFloat and t.bits == 64:
            return FLOAT64
        if t.code == kDLFloat and t.bits == 16:
            return FLOAT16
        if t.code == kDLBfloat and t.bits == 16:
            return BFLOAT16
    raise BufferError(f"unsupported DLPack dtype (code {t.code}, bits {t.bits}, lanes {t.lanes}); "
                      f"carray holds {', '.join(_DTYPE_NAMES)}")


cdef int _check_dl_shape(DLTensor* t, Py_ssize_t itemsize) except -1:
    """BufferError for a negative dim, ValueError for a size that overflows: a producer's shape
    is not trusted (the capsule stays unused, so its deleter still runs)."""
    cdef Py_ssize_t shape[MAXDIMS]
    cdef int d
    if t.ndim > 0 and t.shape == NULL:
        raise BufferError("from_dlpack: the DLPack tensor has no shape")
    for d in range(t.ndim):
        if t.shape[d] < 0:
            raise BufferError(f"from_dlpack: the DLPack tensor has a negative dimension, shape "
                              f"{tuple(t.shape[i] for i in range(t.ndim))}")
        shape[d] = <Py_ssize_t>t.shape[d]
    try:
        check_view_shape(t.ndim, shape, itemsize)
    except ValueError as e:
        raise ValueError(f"from_dlpack: the DLPack tensor's shape is invalid: {e}") from None
    return 0


def from_dlpack(x, *, device=None, copy=None):
    """An Array sharing the memory of any DLPack exporter on the CPU (NumPy, PyTorch, ...).

    copy=True copies; device="gpu" copies to the device. Raises TypeError when x has no
    __dlpack__, BufferError for a device or dtype carray cannot hold.
    """
    if device is not None and parse_device(device) != "cpu":
        return from_dlpack(x).to(device)
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"{type(x).__name__} does not support DLPack (no __dlpack__ method)")
    if hasattr(x, "__dlpack_device__"):
        dev = tuple(x.__dlpack_device__())
        if len(dev) != 2:
            raise BufferError(f"from_dlpack: __dlpack_device__() returned {dev!r}, expected a "
                              f"(device type, device id) pair")
        if dev[0] not in (kDLCPU, kDLCUDAHost):
            raise BufferError(f"from_dlpack: the data is on DLPack device {dev}; "
                              f"only CPU memory can be shared")
    try:
        capsule = x.__dlpack__(max_version=(1, 0))
    except TypeError:
        capsule = x.__dlpack__()
    cdef bint versioned = PyCapsule_IsValid(capsule, b"dltensor_versioned")
    cdef DLTensor* t
    cdef void* managed
    cdef bint readonly = False
    if versioned:
        managed = PyCapsule_GetPointer(capsule, b"dltensor_versioned")
        if (<DLManagedTensorVersioned*>managed).version.major > 1:
            raise BufferError("DLPack version of the producer is newer than 1.x")
        t = &(<DLManagedTensorVersioned*>managed).dl_tensor
        readonly = ((<DLManagedTensorVersioned*>managed).flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0
    elif PyCapsule_IsValid(capsule, b"dltensor"):
        managed = PyCapsule_GetPointer(capsule, b"dltensor")
        t = &(<DLManagedTensor*>managed).dl_tensor
    else:
        raise BufferError("__dlpack__ did not return an unused DLPack capsule")
    if t.ndim > MAXDIMS or t.ndim < 0:
        raise BufferError(f"DLPack tensor has {t.ndim} dims; carray supports at most {MAXDIMS}")
    if t.device.device_type not in (kDLCPU, kDLCUDAHost):
        raise BufferError(f"from_dlpack: DLPack device type {t.device.device_type} is not the CPU")
    cdef int num = _num_from_dl(t.dtype)
    _check_dl_shape(t, itemsize_of(num))
    cdef Storage s = Storage.__new__(Storage)
    cdef Array a = Array.__new__(Array)
    cdef int d
    cdef Py_ssize_t stride = 1
    s.ptr = <char*>t.data + t.byte_offset
    s.dl_managed = managed
    s.dl_versioned = versioned
    PyCapsule_SetName(capsule, b"used_dltensor_versioned" if versioned else b"used_dltensor")
    a.storage = s
    a.owner = None
    a.data = s.ptr
    a.offset = 0
    a.ndim = t.ndim
    a.dtype_num = num
    a.itemsize = itemsize_of(num)
    a.writeable = not readonly
    for d in range(t.ndim - 1, -1, -1):
        a.shape_[d] = t.shape[d]
        a.strides_[d] = t.strides[d] if t.strides != NULL else stride
        stride *= t.shape[d]
    s.nbytes = a.size_c() * a.itemsize
    if s.ptr == NULL:
        # PyTorch gives empty tensors no data pointer; carray reads NULL as device memory, so
        # an empty result gets fresh (empty) host memory instead
        if s.nbytes != 0:
            raise BufferError("from_dlpack: the DLPack tensor has no data pointer")
        return new_array(a.ndim, a.shape_, num)
    return a.copy() if copy else a


# -- pickling ---------------------------------------------------------------------------------

def _reconstruct(shape, dtype, data):
    """Rebuild a pickled array from its shape, dtype name and C-order bytes."""
    cdef Py_ssize_t buf[MAXDIMS]
    cdef int n = parse_shape(shape, buf)
    cdef Array a = new_array(n, buf, (<DType>as_dtype(dtype)).num)
    cdef const unsigned char[:] raw = data
    if len(data) != a.size_c() * a.itemsize:
        raise ValueError(f"pickled array data has {len(data)} bytes, expected "
                         f"{a.size_c() * a.itemsize} for shape {tuple(shape)} {dtype}")
    if len(data):
        memcpy(a.data, &raw[0], len(data))
    return a

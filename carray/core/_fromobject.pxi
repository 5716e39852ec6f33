# Arrays from Python objects: scalars, nested sequences, buffer-protocol exporters, DLPack.
# (included by _array.pyx)

cdef bint _is_numpy_scalar(object x):
    """True for NumPy scalars (np.float64(1.5), np.int32(2)): 0-d, typed, immutable."""
    return hasattr(x, "dtype") and getattr(x, "ndim", None) == 0 and not hasattr(x, "__setitem__")


cdef object _dtype_of_leaf(object x):
    """(kind rank, strong type number or -1, Python value) of one scalar leaf."""
    cdef int num
    d = None if type(x) in (bool, int, float, complex) else getattr(x, "dtype", None)
    if d is not None:         # a NumPy scalar: its dtype is strong when carray has it
        try:
            num = (<DType>as_dtype(d)).num
        except TypeError:
            num = -1
        if num >= 0:
            return kind_rank(num), num, x.item()
    if isinstance(x, bool):
        return 0, -1, x
    if isinstance(x, int):
        return 1, -1, x
    if isinstance(x, float):
        return 2, -1, x
    if isinstance(x, complex):
        return 3, -1, x
    if isinstance(x, (str, bytes)):
        raise TypeError(f"cannot convert {type(x).__name__} {x!r} to a carray element; "
                        f"expected bool, int, float or complex")
    if hasattr(x, "__index__"):
        return 1, -1, operator.index(x)
    if hasattr(x, "__float__"):
        return 2, -1, float(x)
    if hasattr(x, "__complex__"):
        return 3, -1, complex(x)
    raise TypeError(f"cannot convert {type(x).__name__} to a carray element; "
                    f"expected bool, int or float")


cdef str _ragged(list shape, int depth):
    return (f"setting an array element with a sequence. The requested array has an "
            f"inhomogeneous shape after {depth} dimensions. The detected shape was "
            f"{tuple(shape[:depth])} + inhomogeneous part.")


cdef void _flatten(object obj, int depth, list shape, list leaves, list state) except *:
    """Walk nested sequences; append scalar leaves; check the shape is rectangular.

    state = [leaf depth or -1, highest weak kind rank, strong type number or -1] (strong types
    fold pairwise, as NumPy's array coercion: int16, uint16, float32 scalars give float64).
    """
    cdef Array arr
    if isinstance(obj, (list, tuple, range)):
        if depth >= MAXDIMS:
            raise ValueError(f"maximum supported dimension for an array is {MAXDIMS}")
        n = len(obj)
        if len(shape) == depth:
            if state[0] >= 0 and state[0] <= depth:
                raise ValueError(_ragged(shape, depth))
            shape.append(n)
        elif len(shape) < depth or shape[depth] != n:
            raise ValueError(_ragged(shape, depth))
        for x in obj:
            _flatten(x, depth + 1, shape, leaves, state)
        return
    if isinstance(obj, Array) or (PyObject_CheckBuffer(obj) and not isinstance(obj, (bytes, str))
                                  and not _is_numpy_scalar(obj)):
        # a nested array: its dtype is strong; its elements join as leaves of their own kind
        arr = as_array(obj, -1)
        state[2] = arr.dtype_num if state[2] < 0 else promote_nums(state[2], arr.dtype_num)
        if arr.ndim == 0:
            _place_leaf(depth, shape, state)
            leaves.append(arr.item())
        else:
            _flatten(arr.tolist(), depth, shape, leaves, state)
        return
    rank, strong, value = _dtype_of_leaf(obj)
    _place_leaf(depth, shape, state)
    if strong >= 0:
        state[2] = strong if state[2] < 0 else promote_nums(state[2], strong)
    elif rank > state[1]:
        state[1] = rank
    leaves.append(value)


cdef void _place_leaf(int depth, list shape, list state) except *:
    if len(shape) != depth or (state[0] >= 0 and state[0] != depth):
        raise ValueError(_ragged(shape, min(depth, len(shape))))
    state[0] = depth


cdef Array _from_sequence(object seq, int num):
    cdef Py_ssize_t buf[MAXDIMS]
    cdef int nd, i
    shape = []
    leaves = []
    state = [-1, -1, -1]
    _flatten(seq, 0, shape, leaves, state)
    if num < 0:
        num = _infer_num(state[1], state[2])
    nd = len(shape)
    for i in range(nd):
        buf[i] = shape[i]
    cdef Array out = new_array(nd, buf, num)
    cdef char* p = out.data
    for x in leaves:
        _write_scalar(p, num, x)
        p += out.itemsize
    return out


cdef int _infer_num(int weak_rank, int strong) noexcept:
    """dtype of mixed leaves: strong dtypes promote; weak Python scalars raise the kind only."""
    cdef int weak = (BOOL, INT64, FLOAT32, COMPLEX64)[weak_rank] if weak_rank >= 0 else -1
    if strong < 0:
        return FLOAT32 if weak < 0 else weak
    if weak_rank > kind_rank(strong):
        # a Python complex with float64 leaves is complex128, as float64 + 1j
        return COMPLEX128 if weak == COMPLEX64 and strong == FLOAT64 else weak
    return strong


cdef int _format_num(Py_buffer* view) noexcept:
    """Our type number for a buffer's format, or -1 when we cannot use it without converting."""
    cdef bytes fmt = view.format if view.format != NULL else b"B"
    if fmt[:1] in (b"@", b"=", b"<"):
        fmt = fmt[1:]
    if fmt == b"Zf" and view.itemsize == 8:
        return COMPLEX64
    if fmt == b"Zd" and view.itemsize == 16:
        return COMPLEX128
    if len(fmt) != 1:
        return -1
    c = fmt
    if c == b"?":
        return BOOL
    if c == b"f" and view.itemsize == 4:
        return FLOAT32
    if c == b"d" and view.itemsize == 8:
        return FLOAT64
    if c == b"e" and view.itemsize == 2:
        return FLOAT16
    if c in (b"b", b"h", b"i", b"l", b"q", b"n") and view.itemsize in (1, 2, 4, 8):
        return (INT8, INT16, INT32, INT64)[(1, 2, 4, 8).index(view.itemsize)]
    if c in (b"B", b"H", b"I", b"L", b"Q", b"N") and view.itemsize in (1, 2, 4, 8):
        return (UINT8, UINT16, UINT32, UINT64)[(1, 2, 4, 8).index(view.itemsize)]
    return -1


def _buffer_values(m):
    """Nested lists of the values of memoryview m, read with struct (memoryview.tolist cannot
    read every format: 'e' float16, byte-swapped '>d'); TypeError for formats struct cannot read."""
    import struct
    fmt = m.format
    try:
        item = struct.Struct(fmt if fmt[:1] in "@=<>!" else "@" + fmt)
    except struct.error:
        item = None
    if item is None or item.size != m.itemsize or len(item.unpack(bytes(m.itemsize))) != 1:
        raise TypeError(f"cannot convert a buffer of format {fmt!r}; carray holds "
                        f"{', '.join(_DTYPE_NAMES)}") from None
    flat = [v[0] for v in item.iter_unpack(m.tobytes())]
    def nest(lo, dims):
        if not dims:
            return flat[lo]
        step = 1
        for s in dims[1:]:
            step *= s
        return [nest(lo + i * step, dims[1:]) for i in range(dims[0])]
    return nest(0, tuple(m.shape))


cdef Array _from_buffer(object obj, int num):
    """An array over obj's buffer: zero-copy when its format and strides fit, else a copy."""
    cdef Py_buffer view
    cdef bint readonly = False
    cdef int fnum, d
    cdef Array a
    cdef Py_ssize_t bstrides[MAXDIMS]
    try:
        PyObject_GetBuffer(obj, &view, PyBUF_RECORDS_RO | PyBUF_WRITABLE)
    except (BufferError, ValueError):       # NumPy raises ValueError for read-only arrays
        PyObject_GetBuffer(obj, &view, PyBUF_RECORDS_RO)
        readonly = True
    fnum = _format_num(&view)
    if fnum < 0 or view.ndim > MAXDIMS:
        PyBuffer_Release(&view)
        m = memoryview(obj)
        fmt = m.format.lstrip("@=<>!")
        if num < 0 and len(fmt) == 1:
            # the dtype follows the format (also for empty buffers): a byte-swapped type carray
            # has keeps it; other ints become int64, other floats (float16) float32
            if fmt in "bhilqn" and m.itemsize in (1, 2, 4, 8):
                num = (INT8, INT16, INT32, INT64)[(1, 2, 4, 8).index(m.itemsize)]
            elif fmt in "BHILQN" and m.itemsize in (1, 2, 4, 8):
                num = (UINT8, UINT16, UINT32, UINT64)[(1, 2, 4, 8).index(m.itemsize)]
            elif fmt in "bBhHiIlLqQnN":
                num = INT64
            elif fmt in "efd":
                num = FLOAT64 if fmt == "d" and m.itemsize == 8 else (
                    FLOAT16 if fmt == "e" else FLOAT32)
            elif fmt == "?":
                num = BOOL
        return as_array(_buffer_values(m), num).reshape(m.shape)
    a = Array.__new__(Array)
    a.storage = storage_from_buffer(obj, &view)     # owns `view` from here on
    a.owner = None
    a.data = <char*>view.buf
    a.offset = 0
    a.ndim = view.ndim
    a.dtype_num = fnum
    a.itemsize = itemsize_of(fnum)
    a.writeable = not readonly
    cdef Py_ssize_t dstb[MAXDIMS]
    cdef Py_ssize_t step = a.itemsize
    cdef bint whole = True        # strides are whole elements (else we must copy)
    for d in range(view.ndim - 1, -1, -1):
        a.shape_[d] = view.shape[d]
        bstrides[d] = view.strides[d] if view.strides != NULL else step
        step *= view.shape[d]
        whole = whole and bstrides[d] % a.itemsize == 0
        a.strides_[d] = bstrides[d] // a.itemsize
    check_view_shape(a.ndim, a.shape_, a.itemsize)     # (an exporter's shape is not trusted)
    if not whole:
        out = new_array(a.ndim, a.shape_, fnum)
        for d in range(a.ndim):
            dstb[d] = (<Array>out).strides_[d] * a.itemsize
        _copy_raw(a.ndim, a.shape_, (<Array>out).data, dstb, fnum, a.data, bstrides, fnum)
        a = out
    if num >= 0 and num != a.dtype_num:
        return _copy_as(a, num, "C")
    return a


cdef bint _is_bfloat16_ndarray(object obj):
    dt = getattr(obj, "dtype", None)
    return getattr(dt, "name", None) == "bfloat16" and getattr(obj, "ndim", None) is not None \
        and hasattr(obj, "view") and not isinstance(obj, Array)


cdef Array as_array(object obj, int num):
    """obj as an Array of type num (-1: keep or infer the dtype), copying only when needed."""
    cdef Array a
    cdef type t = type(obj)
    if t is float:          # (the Python scalars of operators first: exactly the cases below)
        return _scalar_array(obj, FLOAT32 if num < 0 else num)
    if t is int:
        return _scalar_array(obj, INT64 if num < 0 else num)
    if isinstance(obj, Array):
        a = <Array>obj
        if num < 0 or num == a.dtype_num:
            return a
        return _copy_as(a, num, "K")
    if isinstance(obj, bool):
        return _scalar_array(obj, BOOL if num < 0 else num)
    if isinstance(obj, int):
        return _scalar_array(obj, INT64 if num < 0 else num)
    if isinstance(obj, float) and not hasattr(obj, "dtype"):
        return _scalar_array(obj, FLOAT32 if num < 0 else num)
    if isinstance(obj, complex) and not hasattr(obj, "dtype"):
        return _scalar_array(obj, COMPLEX64 if num < 0 else num)
    if isinstance(obj, (list, tuple, range)):         # range: as NumPy, a sequence of ints
        return _from_sequence(obj, num)
    if isinstance(obj, (str, bytes)):
        raise TypeError(f"cannot make a carray array from {type(obj).__name__} {obj!r}; "
                        f"expected numbers, nested sequences of numbers or a buffer")
    if _is_numpy_scalar(obj):
        return _from_sequence(obj, num)     # a new 0-d array of its dtype (owns its memory)
    if _is_bfloat16_ndarray(obj):       # ml_dtypes' bfloat16 has no buffer format: share its bits
        a = _bits_view(_from_buffer(obj.view("uint16"), -1), dtype_of(BFLOAT16))
        return a if num < 0 or num == BFLOAT16 else _copy_as(a, num, "K")
    if PyObject_CheckBuffer(obj):
        return _from_buffer(obj, num)
    if hasattr(obj, "__dlpack__"):
        a = from_dlpack(obj)
        return a if num < 0 or num == a.dtype_num else _copy_as(a, num, "K")
    if hasattr(obj, "__float__") or hasattr(obj, "__index__") or hasattr(obj, "dtype") or \
            hasattr(obj, "__complex__"):
        return _from_sequence(obj, num)
    raise TypeError(f"cannot make a carray array from {type(obj).__name__}; expected a number, "
                    f"a nested sequence of numbers, or an object with the buffer protocol")


def asarray(obj, dtype=None, device=None, copy=None):
    """obj as an Array, sharing memory when possible.

    obj: an Array, a Python scalar, nested lists/tuples, or any buffer-protocol or DLPack
    exporter (NumPy arrays are shared without copying when their dtype is supported).
    copy: None copies only when needed, True always copies, False raises ValueError when a copy
    cannot be avoided. Raises TypeError for objects that hold no numbers, ValueError for ragged
    nested sequences and OverflowError for ints that do not fit the dtype.
    """
    cdef str dev = parse_device(device)
    cdef int num = parse_dtype_num(dtype, -1)
    cdef Array a
    if device is not None:
        a = as_array(obj, num)
        if a.storage.device != dev:       # a move is a copy
            if copy is False:
                raise ValueError("Unable to avoid copy while creating an array as requested.")
            return a.to(dev)
        device = None
    if copy is False:
        if isinstance(obj, Array) or (PyObject_CheckBuffer(obj) and not isinstance(obj, (bytes, str))) \
                or hasattr(obj, "__dlpack__"):
            a = as_array(obj, -1)
            if (num < 0 or num == a.dtype_num) and _shares_input(a, obj):
                return a
        raise ValueError("Unable to avoid copy while creating an array as requested.")
    a = as_array(obj, num)
    if copy:
        if _shares_input(a, obj):
            a = a.copy()
    return a


cdef bint _shares_input(Array a, object obj):
    """True when a may share memory with obj (so copy=True must copy)."""
    if isinstance(obj, Array):
        return a is obj or a.storage is (<Array>obj).storage
    return a.storage.has_view or a.storage.dl_managed != NULL


def array(obj, dtype=None, copy=True, device=None):
    """A new Array with the contents of obj (see asarray); copies unless copy=False/None."""
    return asarray(obj, dtype=dtype, device=device, copy=copy)

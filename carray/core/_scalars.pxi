# Reading single elements as Python scalars, and making 0-d arrays from Python scalars.
# (included by _array.pyx)

cdef object _read_at(char* p, int num):
    """The element at p as a Python bool/int/float."""
    if num == FLOAT32:
        return (<float*>p)[0]
    if num == FLOAT64:
        return (<double*>p)[0]
    if num == FLOAT16:
        return <double>carray_half_to_float((<uint16_t*>p)[0])
    if num == BFLOAT16:
        return <double>carray_bf16_to_float((<uint16_t*>p)[0])
    if num == INT64:
        return (<int64_t*>p)[0]
    if num == INT32:
        return (<int32_t*>p)[0]
    if num == INT8:
        return (<int8_t*>p)[0]
    if num == INT16:
        return (<int16_t*>p)[0]
    if num == UINT8:
        return (<uint8_t*>p)[0]
    if num == UINT16:
        return (<uint16_t*>p)[0]
    if num == UINT32:
        return (<uint32_t*>p)[0]
    if num == UINT64:
        return (<uint64_t*>p)[0]
    return (<bool_t*>p)[0] != 0


cdef object _read_scalar(Array a, Py_ssize_t elem_offset):
    """The element `elem_offset` elements from a[0, ..., 0] as a Python scalar."""
    cdef Array host
    if on_gpu(a):            # one element to the host (waits for the queue)
        host = make_view(a, 0, NULL, NULL, a.offset + elem_offset).to("cpu")
        return _read_at(host.data, a.dtype_num)
    return _read_at(a.data + elem_offset * a.itemsize, a.dtype_num)


cdef Py_ssize_t _flat_offset(Array a, Py_ssize_t flat) except? -1:
    """The element offset of flat (C-order) index `flat`; IndexError when out of range."""
    cdef Py_ssize_t size = a.size_c(), off = 0
    cdef int d
    if flat < -size or flat >= size:
        raise IndexError(f"index {flat} is out of bounds for size {size}")
    if flat < 0:
        flat += size
    for d in range(a.ndim - 1, -1, -1):
        off += (flat % a.shape_[d]) * a.strides_[d]
        flat //= a.shape_[d]
    return off


cdef object _tolist_rec(Array a, char* p, int d):
    if d == a.ndim:
        return _read_at(p, a.dtype_num)
    cdef Py_ssize_t i, step = a.strides_[d] * a.itemsize
    return [_tolist_rec(a, p + i * step, d + 1) for i in range(a.shape_[d])]


cdef object _tolist(Array a):
    if on_gpu(a):
        a = a.to("cpu")
    return _tolist_rec(a, a.data, 0)


cdef int _write_scalar(char* p, int num, object value) except -1:
    """Store a Python scalar at p as type `num`; OverflowError when an int does not fit."""
    cdef int64_t v
    if num == FLOAT32:
        (<float*>p)[0] = <float>float(value)
    elif num == FLOAT64:
        (<double*>p)[0] = float(value)
    elif num == FLOAT16:
        (<uint16_t*>p)[0] = carray_double_to_half(float(value))
    elif num == BFLOAT16:
        (<uint16_t*>p)[0] = carray_double_to_bf16(float(value))
    elif num == BOOL:
        (<bool_t*>p)[0] = 1 if value else 0
    else:
        if isinstance(value, float):
            if value != value:
                raise ValueError(f"cannot convert float {value} to integer")
            if value in (float("inf"), float("-inf")):      # OverflowError, as int(inf)
                raise OverflowError(f"cannot convert float {value} to integer")
            value = int(value)
        else:
            value = operator.index(value)
        if not int_fits(value, num):
            raise OverflowError(f"Python integer {value} out of bounds for {_DTYPE_NAMES[num]}")
        if num == INT32:
            (<int32_t*>p)[0] = <int32_t>value
        elif num == INT64:
            (<int64_t*>p)[0] = <int64_t>value
        elif num == INT8:
            (<int8_t*>p)[0] = <int8_t>value
        elif num == INT16:
            (<int16_t*>p)[0] = <int16_t>value
        elif num == UINT8:
            (<uint8_t*>p)[0] = <uint8_t>value
        elif num == UINT16:
            (<uint16_t*>p)[0] = <uint16_t>value
        elif num == UINT32:
            (<uint32_t*>p)[0] = <uint32_t>value
        else:
            (<uint64_t*>p)[0] = <uint64_t>value
    return 0


cdef Array _scalar_array(object value, int num):
    """A 0-d array of type num holding the Python scalar value."""
    cdef Array a = new_array(0, NULL, num)
    _write_scalar(a.data, num, value)
    return a


cdef Array _scalar_for(object value, int num):
    """value as an array to assign into an array of type num (Python scalars written directly
    with range checks; anything else through as_array)."""
    if isinstance(value, (bool, int, float)):
        return _scalar_array(value, num)
    if isinstance(value, (list, tuple)):
        return _from_sequence(value, num)      # NumPy converts sequences with the target dtype
    return as_array(value, -1)

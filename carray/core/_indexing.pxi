# Indexing: a[key] and a[key] = value, with NumPy's rules. (included by _array.pyx)
#
# Basic keys (ints, slices, None, Ellipsis) make a view. Any integer or boolean array in the key
# makes it advanced: slices and None still apply as a view first, then the index arrays (booleans
# turned into the integer positions of their True values, ints into 0-d arrays) are broadcast
# together to a shape B and gathered into a new array. B's dims replace the indexed dims in
# place when the array indices sit next to each other in the key, else they go first (NumPy's rule).

cdef enum:
    MODE_GET = 0      # _advanced: gather a[key]
    MODE_ASSIGN = 1   # a[key] = value
    MODE_ADD = 2      # a[key] += value, each repeated index adding (NumPy's add.at)

cdef enum:
    K_INT = 0
    K_SLICE = 1
    K_NONE = 2
    K_ELLIPSIS = 3
    K_ADV = 4

_BAD_INDEX = ("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
              "integer or boolean arrays are valid indices")


cdef int _kind(object k) except -1:
    """The kind of one key entry (K_INT, K_SLICE, ...); IndexError for anything else."""
    if k is None:
        return K_NONE
    if PySlice_Check(k):
        return K_SLICE
    if PyLong_Check(k):
        return K_ADV if isinstance(k, bool) else K_INT
    if k is Ellipsis:
        return K_ELLIPSIS
    if isinstance(k, (float, str, bytes, bytearray)):
        raise IndexError(_BAD_INDEX + f"; got {type(k).__name__} {k!r}")
    if _is_numpy_scalar(k) and getattr(k.dtype, "kind", None) in ("i", "u"):
        return K_INT        # NumPy integer scalars index like ints (a view); 0-d arrays do not
    if isinstance(k, (Array, list, tuple)) or hasattr(k, "ndim") or PyObject_CheckBuffer(k):
        return K_ADV
    if hasattr(k, "__index__"):
        return K_INT
    raise IndexError(_BAD_INDEX + f"; got {type(k).__name__}")


cdef object _index_overflow(object key):
    return IndexError(f"index {key!r} is out of bounds: it does not fit a 64-bit integer")


cdef Array _index_array(object k):
    """An advanced key entry as an int64 or bool Array; IndexError for other dtypes."""
    cdef Array arr
    if isinstance(k, bool):
        return _scalar_array(k, BOOL)
    try:
        arr = as_array(k, -1)
    except OverflowError:
        raise _index_overflow(k) from None
    if on_gpu(arr) and arr.dtype_num == BOOL:
        arr = arr.to("cpu")  # the positions of True decide the shape (this read waits)
    if arr.dtype_num == BOOL:
        return arr
    if arr.dtype_num == INT32 or arr.dtype_num == INT64:
        return arr
    if is_int_num(arr.dtype_num):     # int8 ... uint64 index arrays: NumPy accepts any integer
        return arr.astype(dtype_of(INT64))
    if arr.size_c() == 0 and isinstance(k, (list, tuple)):  # a[[]] indexes with an empty int list
        return new_array(arr.ndim, arr.shape_, INT64)
    raise IndexError(f"arrays used as indices must be of integer (or boolean) type, "
                     f"got {dtype_of(arr.dtype_num).name}")


cdef inline Py_ssize_t _wrap_index(Py_ssize_t i, Py_ssize_t n, int axis) except? -1:
    if i < -n or i >= n:
        raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
    return i + n if i < 0 else i


cdef object _getitem(Array a, object key):
    cdef Py_ssize_t shape[MAXDIMS]
    cdef Py_ssize_t strides[MAXDIMS]
    cdef Py_ssize_t offset = a.offset, start, stop, step, i, n
    cdef int nd = 0, src = 0, consumed = 0, nkey, j, kind, ellipsis_at = -1, d
    # fast path: a single integer or slice on dim 0
    if PyLong_Check(key) and not isinstance(key, bool) and a.ndim > 0:
        i = _wrap_index(key, a.shape_[0], 0)
        return make_view(a, a.ndim - 1, a.shape_ + 1, a.strides_ + 1,
                         a.offset + i * a.strides_[0])
    if PySlice_Check(key) and a.ndim > 0:
        PySlice_Unpack(key, &start, &stop, &step)
        shape[0] = PySlice_AdjustIndices(a.shape_[0], &start, &stop, step)
        strides[0] = a.strides_[0] * (step if shape[0] > 0 else 1)   # NumPy: empty, step 1
        for d in range(1, a.ndim):
            shape[d] = a.shape_[d]
            strides[d] = a.strides_[d]
        return make_view(a, a.ndim, shape, strides,
                         a.offset + (start * a.strides_[0] if shape[0] > 0 else 0))
    if not PyTuple_Check(key):
        key = (key,)
    nkey = <int>PyTuple_GET_SIZE(key)
    for j in range(nkey):
        kind = _kind(<object>PyTuple_GET_ITEM(key, j))
        if kind == K_ADV:
            return _advanced(a, key, None, MODE_GET)
        if kind == K_INT or kind == K_SLICE:
            consumed += 1
        elif kind == K_ELLIPSIS:
            if ellipsis_at >= 0:
                raise IndexError("an index can only have a single ellipsis ('...')")
            ellipsis_at = j
    if consumed > a.ndim:
        raise IndexError(f"too many indices for array: array is {a.ndim}-dimensional, "
                         f"but {consumed} were indexed")
    for j in range(nkey):
        k = <object>PyTuple_GET_ITEM(key, j)
        if nd >= MAXDIMS:
            raise IndexError(f"too many dimensions: an array can have at most {MAXDIMS}")
        if k is None:
            shape[nd] = 1
            strides[nd] = 0
            nd += 1
        elif PySlice_Check(k):
            PySlice_Unpack(k, &start, &stop, &step)
            n = PySlice_AdjustIndices(a.shape_[src], &start, &stop, step)
            shape[nd] = n
            strides[nd] = a.strides_[src] * (step if n > 0 else 1)   # NumPy: empty, step 1
            if n > 0:
                offset += start * a.strides_[src]
            nd += 1
            src += 1
        elif k is Ellipsis:
            for d in range(a.ndim - consumed):
                if nd >= MAXDIMS:
                    raise IndexError(f"too many dimensions: an array can have at most {MAXDIMS}")
                shape[nd] = a.shape_[src]
                strides[nd] = a.strides_[src]
                nd += 1
                src += 1
        else:
            i = _wrap_index(k if PyLong_Check(k) else operator.index(k), a.shape_[src], src)
            offset += i * a.strides_[src]
            src += 1
    while src < a.ndim:
        if nd >= MAXDIMS:
            raise IndexError(f"too many dimensions: an array can have at most {MAXDIMS}")
        shape[nd] = a.shape_[src]
        strides[nd] = a.strides_[src]
        nd += 1
        src += 1
    return make_view(a, nd, shape, strides, offset)


cdef int _check_mask_value(Array a, object mask, object value) except -1:
    """a[mask] = value with one boolean mask of a's dimensions takes a 0-d or 1-d value only:
    NumPy's TypeError otherwise (it does not broadcast an n-d value into the selection)."""
    cdef int nd
    if type(mask) is not Array or (<Array>mask).dtype_num != BOOL or (<Array>mask).ndim != a.ndim:
        return 0
    nd = (<Array>value).ndim if type(value) is Array else \
        (len(value.shape) if hasattr(value, "shape") and hasattr(value, "dtype") else 0)
    if nd > 1:
        raise TypeError(f"NumPy boolean array indexing assignment requires a 0 or 1-dimensional "
                        f"input, input has {nd} dimensions")
    return 0


cdef int _setitem(Array a, object key, object value) except -1:
    cdef int j
    if not a.writeable:
        raise ValueError("assignment destination is read-only")
    if not PyTuple_Check(key):
        key = (key,)
    for j in range(PyTuple_GET_SIZE(key)):
        if _kind(<object>PyTuple_GET_ITEM(key, j)) == K_ADV:
            if PyTuple_GET_SIZE(key) == 1:
                _check_mask_value(a, <object>PyTuple_GET_ITEM(key, 0), value)
            _advanced(a, key, value, MODE_ASSIGN)
            return 0
    try:
        view = _getitem(a, key)
    except OverflowError:
        raise _index_overflow(key) from None
    if view.ndim == 0 and a.dtype_num != BOOL and _names_one_element(key) \
            and _is_sequence_value(value):
        # all-integer keys assign one element, as NumPy 2's item assignment: no n-d value
        # (NumPy's bool elements take any value's truth instead: carray broadcasts there)
        raise ValueError("setting an array element with a sequence.")
    copy_into(view, _scalar_for(value, a.dtype_num))
    return 0


cdef bint _names_one_element(tuple key):
    """True when every entry of key is an integer (an element's coordinates; () for 0-d)."""
    for k in key:
        if _kind(k) != K_INT:
            return False
    return True


cdef bint _is_sequence_value(object value):
    """True for values NumPy refuses as one element: lists, tuples and arrays with ndim > 0."""
    if isinstance(value, (list, tuple)):
        return True
    return getattr(value, "ndim", 0) > 0


cdef object _advanced(Array a, tuple key, object value, int mode):
    """Gather a[key] (assign=False) or scatter a[key] = value (assign=True) for keys with arrays."""
    cdef Py_ssize_t vshape[MAXDIMS]
    cdef Py_ssize_t vstrides[MAXDIMS]
    cdef Py_ssize_t offset = a.offset, start, stop, step, n
    cdef int nd = 0, src = 0, consumed = 0, d, e, entry
    cdef Array idx, arr
    # 1. count the dims the key consumes (a k-d boolean array consumes k)
    items = list(key)
    ellipsis_count = 0
    for k in items:
        kind = _kind(k)
        if kind == K_INT or kind == K_SLICE:
            consumed += 1
        elif kind == K_ELLIPSIS:
            ellipsis_count += 1
        elif kind == K_ADV and not isinstance(k, bool):
            idx = _index_array(k)
            consumed += idx.ndim if idx.dtype_num == BOOL else 1
    if ellipsis_count > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > a.ndim:
        raise IndexError(f"too many indices for array: array is {a.ndim}-dimensional, "
                         f"but {consumed} were indexed")
    # 2. apply slices and None as a view; collect (index array, view dim, axis) per array index
    adv = []            # (int Array, view dim, original axis, key entry number)
    for entry, k in enumerate(items):
        kind = _kind(k)
        if nd >= MAXDIMS:
            raise IndexError(f"too many dimensions: an array can have at most {MAXDIMS}")
        if kind == K_NONE:
            vshape[nd] = 1
            vstrides[nd] = 0
            nd += 1
        elif kind == K_SLICE:
            PySlice_Unpack(k, &start, &stop, &step)
            n = PySlice_AdjustIndices(a.shape_[src], &start, &stop, step)
            vshape[nd] = n
            vstrides[nd] = a.strides_[src] * (step if n > 0 else 1)
            if n > 0:
                offset += start * a.strides_[src]
            nd += 1
            src += 1
        elif kind == K_ELLIPSIS:
            for d in range(a.ndim - consumed):
                vshape[nd] = a.shape_[src]
                vstrides[nd] = a.strides_[src]
                nd += 1
                src += 1
        elif kind == K_INT:
            # bounds checked now, as NumPy does, even when other index arrays select nothing
            try:
                idx = _scalar_array(_wrap_index(operator.index(k), a.shape_[src], src), INT64)
            except OverflowError:
                raise _index_overflow(k) from None
            adv.append((idx, nd, src, entry))
            vshape[nd] = a.shape_[src]
            vstrides[nd] = a.strides_[src]
            nd += 1
            src += 1
        else:
            idx = _index_array(k)
            if idx.dtype_num != BOOL:
                adv.append((idx, nd, src, entry))
                vshape[nd] = a.shape_[src]
                vstrides[nd] = a.strides_[src]
                nd += 1
                src += 1
            elif idx.ndim == 0:
                # a boolean scalar adds a new axis of length 1 and selects it or nothing
                adv.append((_nonzero(idx.reshape(1))[0], nd, -1, entry))
                vshape[nd] = 1
                vstrides[nd] = 0
                nd += 1
            else:
                # NumPy lets a length-0 dim of a boolean index stand for a dim of any length
                for d in range(idx.ndim):
                    if idx.shape_[d] != a.shape_[src + d] and idx.shape_[d] != 0:
                        raise IndexError(
                            f"boolean index did not match indexed array along axis {src + d}; "
                            f"size of axis is {a.shape_[src + d]} but size of corresponding "
                            f"boolean axis is {idx.shape_[d]}")
                for d, positions in enumerate(_nonzero(idx)):
                    adv.append((positions, nd, src, entry))
                    vshape[nd] = a.shape_[src]
                    vstrides[nd] = a.strides_[src]
                    nd += 1
                    src += 1
    while src < a.ndim:
        if nd >= MAXDIMS:
            raise IndexError(f"too many dimensions: an array can have at most {MAXDIMS}")
        vshape[nd] = a.shape_[src]
        vstrides[nd] = a.strides_[src]
        nd += 1
        src += 1
    cdef Array view = make_view(a, nd, vshape, vstrides, offset)
    # 3. broadcast the index arrays together
    try:
        bshape = broadcast_shapes(*[(<Array>t[0]).shape for t in adv])
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together with "
                         "shapes " + " ".join(str((<Array>t[0]).shape) for t in adv)) from None
    adv_dims = [t[1] for t in adv]
    entries = sorted(set(t[3] for t in adv))
    adjacent = entries[-1] - entries[0] == len(entries) - 1
    rest = [d for d in range(nd) if d not in adv_dims]
    if adjacent:
        first = min(adv_dims)
        before = [d for d in rest if d < first]
        after = [d for d in rest if d > first]
    else:
        before, after = [], rest
    rshape = tuple(vshape[d] for d in before) + bshape + tuple(vshape[d] for d in after)
    # 4. element offsets of each index combination (bounds checked before any write)
    cdef Array offsets = _gather_offsets(view, adv, bshape, mode)
    # 5. move the blocks
    cdef Array result
    if mode != MODE_GET:
        result = _scalar_for(value, a.dtype_num)
        if result.storage is a.storage:
            result = result.copy()
        try:
            result = broadcast_to(drop_leading_ones(result, len(rshape)), rshape)
        except ValueError:
            raise ValueError(f"shape mismatch: value array of shape {result.shape} could not be "
                             f"broadcast to indexing result of shape {rshape}") from None
        result = _copy_as(result, a.dtype_num, "C")
        if on_gpu(a) and not on_gpu(result):
            result = result.to("gpu")
    else:
        result = _new_from_tuple(rshape, a.dtype_num)
        if on_gpu(a):
            result = result.to("gpu") if result.size_c() == 0 else \
                new_device_array(result.ndim, result.shape_, a.dtype_num)
    _move_blocks(view, result, offsets, before + after, len(before), len(bshape), mode)
    return None if mode != MODE_GET else result


cdef Array _new_from_tuple(tuple shape, int num):
    cdef Py_ssize_t buf[MAXDIMS]
    cdef int n = parse_shape(shape, buf)
    return new_array(n, buf, num)


cdef list _nonzero(Array mask):
    """For a boolean array, one int64 array per dim with the positions of its True elements."""
    cdef Array m = _copy_as(mask, BOOL, "C") if not mask.c_contiguous() else mask
    cdef Py_ssize_t total = m.size_c(), count = 0, i, flat, k
    cdef bool_t* p = <bool_t*>m.data
    cdef int d, nd = m.ndim
    for i in range(total):
        count += p[i] != 0
    cdef Py_ssize_t shape1[1]
    shape1[0] = count
    outs = [new_array(1, shape1, INT64) for d in range(nd)]
    cdef int64_t* cols[MAXDIMS]
    for d in range(nd):
        cols[d] = <int64_t*>(<Array>outs[d]).data
    k = 0
    for i in range(total):
        if p[i]:
            flat = i
            for d in range(nd - 1, -1, -1):
                cols[d][k] = flat % m.shape_[d]
                flat //= m.shape_[d]
            k += 1
    return outs


cdef Array _gather_offsets(Array view, list adv, tuple bshape, int mode):
    """int64 array of shape bshape: the element offset (from view's [0,...]) each index
    combination selects. IndexError for an index out of bounds of its axis. On the device, when
    an index array is there and mode is not MODE_ASSIGN (whose repeated indices are resolved on
    the host), the offsets are worked out there, with no wait, and a bad device index raises
    IndexError at the next read from the device (carray/opencl/_index.py)."""
    if on_gpu(view):
        if mode != MODE_ASSIGN and any(on_gpu(<Array>t[0]) for t in adv):
            return gpu_backend().device_offsets(
                bshape, [(t[0], view.shape_[<int>t[1]], view.strides_[<int>t[1]],
                          t[2] if t[2] >= 0 else 0) for t in adv])
        adv = [((<Array>t[0]).to("cpu") if on_gpu(<Array>t[0]) else t[0],) + tuple(t[1:])
               for t in adv]   # (this read waits)
    cdef Py_ssize_t bbuf[MAXDIMS]
    cdef int bnd = parse_shape(bshape, bbuf)
    cdef Array out = new_array(bnd, bbuf, INT64)
    cdef int64_t* o = <int64_t*>out.data
    cdef Py_ssize_t total = out.size_c(), i, flat, pos, v, n, vstride
    cdef int d, k
    cdef Array ib
    cdef int64_t* ptr64
    cdef int32_t* ptr32
    for i in range(total):
        o[i] = 0
    for t in adv:
        ib = broadcast_view(<Array>t[0], bnd, bbuf)
        n = view.shape_[<int>t[1]]
        vstride = view.strides_[<int>t[1]]
        axis = t[2] if t[2] >= 0 else 0
        for i in range(total):
            flat = i
            pos = 0
            for d in range(bnd - 1, -1, -1):
                pos += (flat % bbuf[d]) * ib.strides_[d]
                flat //= bbuf[d]
            if ib.dtype_num == INT64:
                v = (<int64_t*>ib.data)[pos]
            else:
                v = (<int32_t*>ib.data)[pos]
            if v < -n or v >= n:
                raise IndexError(f"index {v} is out of bounds for axis {axis} with size {n}")
            o[i] += (v + n if v < 0 else v) * vstride
    return out


cdef void _move_blocks(Array view, Array result, Array offsets, list rest, int nbefore,
                       int nb, int mode) except *:
    """Copy, for each index combination b, the block of view's `rest` dims at offsets[b] to
    result's block b (MODE_GET), or from it (MODE_ASSIGN), or add result's block into it
    (MODE_ADD, serially, so repeated indices add up). result's dims are (before, B, after),
    C-contiguous."""
    cdef Py_ssize_t shape[MAXDIMS]
    cdef Py_ssize_t vst[MAXDIMS]
    cdef Py_ssize_t rst[MAXDIMS]
    cdef int nr = len(rest), d, rd
    cdef Py_ssize_t total = offsets.size_c(), i, bstep, isz = view.itemsize
    cdef int64_t* off = <int64_t*>offsets.data
    cdef bint assign = mode == MODE_ASSIGN
    cdef loop1d_t acc = _add_into_loop(view.dtype_num)
    cdef NdLoop it
    cdef char* data[2]
    cdef Py_ssize_t steps[2][MAXDIMS]
    cdef char* vbase = view.data
    cdef char* rbase = result.data
    # result strides (bytes) for the rest dims: before-dims come first, after-dims after B
    for d in range(nr):
        rd = d if d < nbefore else d + nb
        shape[d] = view.shape_[<int>rest[d]]
        vst[d] = view.strides_[<int>rest[d]] * isz
        rst[d] = result.strides_[rd] * isz
    if on_gpu(view):
        vs = []
        for d in range(result.ndim):
            if d < nbefore:
                vs.append(view.strides_[<int>rest[d]])
            elif d < nbefore + nb:
                vs.append(0)
            else:
                vs.append(view.strides_[<int>rest[d - nb]])
        if mode == MODE_ADD:
            gpu_backend().add_blocks(view, result, offsets, result.shape or (1,), vs or [0],
                                     nbefore, nb)
        else:
            gpu_backend().move_blocks(view, result, offsets, result.shape or (1,), vs or [0],
                                      nbefore, nb, assign)
        return
    # B dims are consecutive in the C-contiguous result: block b starts b * bstep elements in
    bstep = 1
    for d in range(nbefore + nb, result.ndim):
        bstep *= result.shape_[d]
    if result.size_c() == 0:
        return
    if mode == MODE_ADD:
        for d in range(nr):
            steps[0][d] = vst[d]
            steps[1][d] = rst[d]
        with nogil:
            for i in range(total):
                data[0] = vbase + off[i] * isz
                data[1] = rbase + i * bstep * isz
                prepare_loop(&it, 2, nr, shape, data, steps)
                run_loop(&it, acc, NULL, NULL, PY_SSIZE_T_MAX)
        return
    with nogil:
        for i in range(total):
            if nr == 0:
                if assign:
                    memcpy(vbase + off[i] * isz, rbase + i * isz, isz)
                else:
                    memcpy(rbase + i * isz, vbase + off[i] * isz, isz)
            elif assign:
                _copy_raw(nr, shape, vbase + off[i] * isz, vst, view.dtype_num,
                          rbase + i * bstep * isz, rst, view.dtype_num)
            else:
                _copy_raw(nr, shape, rbase + i * bstep * isz, rst, view.dtype_num,
                          vbase + off[i] * isz, vst, view.dtype_num)


# ---------------------------------------------------------------------------------------------
# add.at: a[key] += value where repeated indices accumulate
# ---------------------------------------------------------------------------------------------

ctypedef fused addable_t:
    float
    double
    int8_t
    int16_t
    int32_t
    int64_t
    uint8_t
    uint16_t
    uint32_t
    uint64_t


cdef void _add_into(char** data, const Py_ssize_t* steps, Py_ssize_t n, addable_t* tag,
                    void* aux2) noexcept nogil:
    """dst[i] += src[i] (a loop1d_t; the tag pointer only selects the type)."""
    cdef Py_ssize_t i
    cdef char* d = data[0]
    cdef char* s = data[1]
    for i in range(n):
        (<addable_t*>d)[0] = <addable_t>((<addable_t*>d)[0] + (<addable_t*>s)[0])
        d += steps[0]
        s += steps[1]


cdef void _or_into_bool(char** data, const Py_ssize_t* steps, Py_ssize_t n, void* aux,
                        void* aux2) noexcept nogil:
    cdef Py_ssize_t i
    cdef char* d = data[0]
    cdef char* s = data[1]
    for i in range(n):
        (<bool_t*>d)[0] = (<bool_t*>d)[0] or (<bool_t*>s)[0]
        d += steps[0]
        s += steps[1]


cdef loop1d_t _add_into_loop(int num) noexcept:
    if num == FLOAT32:
        return <loop1d_t>_add_into[float]
    if num == FLOAT64:
        return <loop1d_t>_add_into[double]
    if num == INT32:
        return <loop1d_t>_add_into[int32_t]
    if num == INT64:
        return <loop1d_t>_add_into[int64_t]
    if num == INT8:
        return <loop1d_t>_add_into[int8_t]
    if num == INT16:
        return <loop1d_t>_add_into[int16_t]
    if num == UINT8:
        return <loop1d_t>_add_into[uint8_t]
    if num == UINT16:
        return <loop1d_t>_add_into[uint16_t]
    if num == UINT32:
        return <loop1d_t>_add_into[uint32_t]
    if num == UINT64:
        return <loop1d_t>_add_into[uint64_t]
    return _or_into_bool


def add_at(Array a, indices, values):
    """a[indices] += values in place, unbuffered: an element indexed more than once gets every
    value added (NumPy's numpy.add.at; bool arrays get a logical or). indices is any index
    NumPy accepts; values broadcasts to a[indices]'s shape and is cast to a's dtype.
    Raises IndexError for bad indices, ValueError for a value of the wrong shape or a
    read-only a. On the device it runs there (atomic adds, so float sums into one element may
    round differently from run to run), and an index array on the device is checked there: a
    bad index adds nothing and raises IndexError at the next read from the device."""
    cdef int j
    cdef Array wide
    if not a.writeable:
        raise ValueError("assignment destination is read-only")
    if a.dtype_num == FLOAT16 or a.dtype_num == BFLOAT16:
        # summed in float32, each element rounded back once (as the ops' 2-byte floats)
        wide = a.astype(dtype_of(FLOAT32))
        add_at(wide, indices, values)
        copy_into(a, wide)
        return None
    key = indices if PyTuple_Check(indices) else (indices,)
    for j in range(PyTuple_GET_SIZE(key)):
        if _kind(<object>PyTuple_GET_ITEM(key, j)) == K_ADV:
            _advanced(a, key, values, MODE_ADD)
            return None
    view = _getitem(a, key)
    ops().add(view, values, out=view)   # a basic index never repeats an element
    return None

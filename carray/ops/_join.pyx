# cython: wraparound=False
"""Joining, splitting, padding and flipping: concatenate, stack, vstack, hstack, dstack,
column_stack, split, array_split, hsplit, vsplit, dsplit, pad, flip, fliplr, flipud,
atleast_1d/2d/3d.

Everything here is views plus copy_into (the one strided copy: broadcast, cast, parallel,
overlap-safe): concatenate writes each input into a slice view of the result, stack inserts a
size-1 axis into each input (a view) and concatenates, split returns slice views, flip negates
strides, and pad copies the input into the middle of the result and fills the borders from views
of the result itself, following NumPy's algorithm step by step so the results match bit for bit
(modes constant, edge, reflect, symmetric, wrap, empty and a function; not NumPy's statistical
modes).

Sections: view helpers; casting and layout; concatenate and the stacks; splits; flip; pad.
"""

from carray.core._array import DeviceMismatchError
from carray.core._array cimport (Array, as_array, copy_into, make_view, may_overlap, new_array,
                            new_array_on, on_gpu,
                            normalize_axis, parse_dtype_num)
from carray.core._dtype cimport (BOOL, INT32, INT64, FLOAT32, FLOAT64, dtype_of, int_fits,
                                 is_int_num, is_unsigned_num, kind_rank, promote_nums,
                                 promote_seq)
from carray.core._strided cimport MAXDIMS
from libc.stdint cimport PTRDIFF_MAX as PY_SSIZE_T_MAX


# ---------------------------------------------------------------------------------------------
# view helpers
# ---------------------------------------------------------------------------------------------

cdef Array _sub(Array a, int axis, Py_ssize_t start, Py_ssize_t count, Py_ssize_t step):
    """The view of `count` elements of a along `axis`, from index `start` by `step` (indices are
    valid: 0 <= start + k * step < a.shape[axis] for k < count)."""
    cdef Py_ssize_t shape[MAXDIMS]
    cdef Py_ssize_t strides[MAXDIMS]
    cdef int d
    for d in range(a.ndim):
        shape[d] = a.shape_[d]
        strides[d] = a.strides_[d]
    shape[axis] = count
    strides[axis] = a.strides_[axis] * step
    return make_view(a, a.ndim, shape, strides,
                     a.offset + (start * a.strides_[axis] if count > 0 else 0))


cdef Array _insert_axis(Array a, int axis):
    """The view of a with a new size-1 axis (stride 0) at position `axis` of the result."""
    cdef Py_ssize_t shape[MAXDIMS]
    cdef Py_ssize_t strides[MAXDIMS]
    cdef int d, k = 0
    if a.ndim + 1 > MAXDIMS:
        raise ValueError(f"maximum supported dimension for an array is {MAXDIMS}, "
                         f"found {a.ndim + 1}")
    for d in range(a.ndim + 1):
        if d == axis:
            shape[d] = 1
            strides[d] = 0
        else:
            shape[d] = a.shape_[k]
            strides[d] = a.strides_[k]
            k += 1
    return make_view(a, a.ndim + 1, shape, strides, a.offset)


cdef Array _with_shape(Array a, int ndim, const Py_ssize_t* shape):
    """The 0-d array a viewed with `shape` (all ones), as NumPy's a.reshape(1, ..., 1)."""
    cdef Py_ssize_t strides[MAXDIMS]
    cdef int d
    for d in range(ndim):
        strides[d] = 1
    return make_view(a, ndim, shape, strides, a.offset)


cdef list _as_arrays(object arrays, str what):
    """The items of a sequence as Arrays (TypeError naming `what` when arrays is no sequence)."""
    if isinstance(arrays, Array):
        if (<Array>arrays).ndim == 0:
            raise TypeError(f"{what}: iteration over a 0-d array")
        return list(arrays)
    if not hasattr(arrays, "__getitem__") or not hasattr(arrays, "__len__") \
            or isinstance(arrays, (dict, str, bytes)):
        raise TypeError(f'{what}: arrays must be passed as a sequence such as a list or tuple, '
                        f'got {type(arrays).__name__}')
    return [x if isinstance(x, Array) else as_array(x, -1) for x in arrays]


# ---------------------------------------------------------------------------------------------
# casting and layout
# ---------------------------------------------------------------------------------------------

cdef tuple _CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


cdef int _parse_casting(object casting) except -1:
    if casting not in _CASTINGS:
        raise ValueError(f"casting must be one of 'no', 'equiv', 'safe', 'same_kind', 'unsafe' "
                         f"(got {casting!r})")
    return _CASTINGS.index(casting)


cdef inline int _kind_rank(int num) noexcept:
    return kind_rank(num)


cdef bint _can_cast(int src, int dst, int casting) noexcept:
    """NumPy's can_cast(src, dst, casting) for carray's dtypes (casting: index into
    _CASTINGS)."""
    if src == dst or casting == 4:
        return True
    if casting <= 1:
        return False
    if casting == 2:
        return promote_nums(src, dst) == dst
    # same_kind: NumPy orders the kinds bool < unsigned < signed < float
    return _kind_rank(dst) > _kind_rank(src) or _kind_rank(dst) == _kind_rank(src) and \
        (_kind_rank(src) != 1 or is_unsigned_num(src) or not is_unsigned_num(dst))


cdef int _check_casts(list arrs, int dst, int casting) except -1:
    cdef Array a
    for a in arrs:
        if not _can_cast(a.dtype_num, dst, casting):
            raise TypeError(f"Cannot cast array data from dtype('{dtype_of(a.dtype_num).name}') "
                            f"to dtype('{dtype_of(dst).name}') according to the rule "
                            f"'{_CASTINGS[casting]}'")
    return 0


cdef void _stride_perm(list arrs, int ndim, int* perm):
    """The axes from the largest to the smallest stride, agreed over all arrays (size-1 axes
    ignored, C order on conflicts or ties): NumPy's PyArray_CreateMultiSortedStridePerm, so a
    result is laid out as its inputs are (F-ordered inputs give an F-ordered result)."""
    cdef int i0, i1, ipos, j0, j1
    cdef bint ambig, swap
    cdef Array a
    cdef Py_ssize_t s0, s1
    for i0 in range(ndim):
        perm[i0] = i0
    for i0 in range(1, ndim):
        ipos = i0
        j0 = perm[i0]
        for i1 in range(i0 - 1, -1, -1):
            ambig = True
            swap = False
            j1 = perm[i1]
            for a in arrs:
                if a.shape_[j0] != 1 and a.shape_[j1] != 1:
                    s0 = a.strides_[j0] if a.strides_[j0] >= 0 else -a.strides_[j0]
                    s1 = a.strides_[j1] if a.strides_[j1] >= 0 else -a.strides_[j1]
                    if s0 <= s1:
                        swap = False
                    elif ambig:
                        swap = True
                    ambig = False
            if not ambig:
                if swap:
                    ipos = i1
                else:
                    break
        if ipos != i0:
            for i1 in range(i0, ipos, -1):
                perm[i1] = perm[i1 - 1]
            perm[ipos] = j0


cdef Array _new_ordered(int ndim, const Py_ssize_t* shape, int num, const int* perm,
                        Array like):
    """A new array of `shape` on like's device whose memory order follows perm (slowest axis
    first)."""
    cdef Array out = new_array_on(ndim, shape, num, like)
    cdef Py_ssize_t stride = 1
    cdef int d
    for d in range(ndim - 1, -1, -1):
        out.strides_[perm[d]] = stride
        stride *= shape[perm[d]] if shape[perm[d]] > 0 else 1
    return out


# ---------------------------------------------------------------------------------------------
# concatenate and the stacks
# ---------------------------------------------------------------------------------------------

cdef Array _check_out(object out, int ndim, const Py_ssize_t* shape):
    cdef Array o
    cdef int d
    if not isinstance(out, Array):
        raise TypeError(f"'out' must be a carray Array, got {type(out).__name__}")
    o = <Array>out
    if o.ndim != ndim:
        raise ValueError(f"Output array has wrong dimensionality: out has {o.ndim} dimension(s), "
                         f"the result has {ndim}")
    for d in range(ndim):
        if o.shape_[d] != shape[d]:
            raise ValueError(f"Output array is the wrong shape: out has shape {o.shape}, the "
                             f"result has shape {tuple(shape[i] for i in range(ndim))}")
    if not o.writeable:
        raise ValueError("output array is read-only")
    return o


cdef Array _concat(list arrs, object axis, object out, object dtype, object casting,
                   int res_num=-1):
    """concatenate's body, for a list of Arrays (axis None or an int). The result dtype is
    res_num when >= 0 (weak Python scalars decided it), else the promotion of arrs' dtypes."""
    cdef Py_ssize_t shape[MAXDIMS]
    cdef Py_ssize_t vshape[MAXDIMS]
    cdef Py_ssize_t vstrides[MAXDIMS]
    cdef int perm[MAXDIMS]
    cdef int n = len(arrs), ndim, ax = 0, d, i, num, cast
    cdef Py_ssize_t pos, total, stride
    cdef Array a, first, o
    if out is not None and dtype is not None:
        raise TypeError("concatenate() only takes `out` or `dtype` as an argument, but both "
                        "were provided.")
    cast = _parse_casting(casting)
    if n == 0:
        raise ValueError("need at least one array to concatenate")

    if axis is None:
        total = 0
        for a in arrs:
            total += a.size_c()
        ndim = 1
        shape[0] = total
    else:
        first = <Array>arrs[0]
        ndim = first.ndim
        if ndim == 0:
            raise ValueError("zero-dimensional arrays cannot be concatenated")
        ax = normalize_axis(axis, ndim)
        for d in range(ndim):
            shape[d] = first.shape_[d]
        for i in range(1, n):
            a = <Array>arrs[i]
            if a.ndim != ndim:
                raise ValueError(f"all the input arrays must have same number of dimensions, but "
                                 f"the array at index 0 has {ndim} dimension(s) and the array at "
                                 f"index {i} has {a.ndim} dimension(s)")
            for d in range(ndim):
                if d != ax and a.shape_[d] != shape[d]:
                    raise ValueError(f"all the input array dimensions except for the "
                                     f"concatenation axis must match exactly, but along "
                                     f"dimension {d}, the array at index 0 has size {shape[d]} "
                                     f"and the array at index {i} has size {a.shape_[d]}")
            if shape[ax] > PY_SSIZE_T_MAX - a.shape_[ax]:
                raise ValueError(f"array is too big: concatenating along axis {ax} gives more "
                                 f"elements than an array can hold")
            shape[ax] += a.shape_[ax]

    # the result's dtype: NumPy 2 promotion of the inputs (Python scalars weak)
    num = res_num
    if num < 0:
        num = promote_seq([(<Array>a).dtype_num for a in arrs])
    if out is not None:
        o = _check_out(out, ndim, shape)
        num = o.dtype_num
    elif dtype is not None:
        num = parse_dtype_num(dtype, -1)
    _check_casts(arrs, num, cast)

    first = <Array>arrs[0]
    for i in range(n):
        if on_gpu(<Array>arrs[i]) != on_gpu(first):
            raise DeviceMismatchError(
                f"concatenate: expected all arrays on one device, got arrays on "
                f"{first.device!r} and {(<Array>arrs[i]).device!r}; move one with .to()")
    if out is not None:
        if on_gpu(o) != on_gpu(first):
            raise ValueError(f"concatenate: out is on {o.device!r} but the arrays are on "
                             f"{first.device!r}")
        # an input that shares memory with out would be overwritten before it is read
        for i in range(n):
            if may_overlap(<Array>arrs[i], o) or on_gpu(o) and \
                    (<Array>arrs[i]).storage is o.storage:
                arrs[i] = arrs[i].copy()
    elif axis is None:
        o = new_array_on(1, shape, num, first)
    else:
        _stride_perm(arrs, ndim, perm)
        o = _new_ordered(ndim, shape, num, perm, first)

    pos = 0
    if axis is None:
        # each input, flattened in C order, goes to o[pos:pos + size] seen in the input's shape
        for a in arrs:
            stride = o.strides_[0]
            for d in range(a.ndim - 1, -1, -1):
                vshape[d] = a.shape_[d]
                vstrides[d] = stride
                stride *= a.shape_[d]
            copy_into(make_view(o, a.ndim, vshape, vstrides, o.offset + pos * o.strides_[0]), a)
            pos += a.size_c()
    else:
        for a in arrs:
            if a.shape_[ax] > 0:
                copy_into(_sub(o, ax, pos, a.shape_[ax], 1), a)
            pos += a.shape_[ax]
    return o


cdef inline int _weak_kind(object x) noexcept:
    """0/1/2 for a Python bool/int/float (weak in NumPy 2 promotion), -1 for anything else."""
    cdef type t = type(x)
    return 2 if t is float else (1 if t is int else (0 if t is bool else -1))


def concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """Join arrays along an existing axis: the result's slices along `axis` are the inputs in
    order. axis=None flattens each input (C order) and joins them into a 1-d array.

    The result dtype is the NumPy 2 promotion of the inputs (Python scalars weak), or `dtype`, or
    out's dtype; each input must cast to it under `casting`. The result is laid out as the inputs
    are (NumPy's rule). Raises ValueError for no inputs, 0-d inputs (with an axis), a different
    number of dimensions or different sizes off the axis (naming the dimension, the arrays and
    their sizes), a wrong `out`; AxisError for a bad axis; TypeError for a forbidden cast or for
    both `out` and `dtype`.
    """
    cdef list arrs, strongs = []
    cdef int i, wk, weak = -1, strong = -1, num = -1
    cdef Array a
    if isinstance(arrays, Array):
        return _concat(_as_arrays(arrays, "concatenate"), axis, out, dtype, casting)
    if not hasattr(arrays, "__getitem__") or not hasattr(arrays, "__len__") \
            or isinstance(arrays, (dict, str, bytes)):
        raise TypeError(f"The first input argument needs to be a sequence, "
                        f"got {type(arrays).__name__}")
    arrs = list(arrays)
    for i in range(len(arrs)):
        x = arrs[i]
        wk = _weak_kind(x) if axis is None else -1
        if wk >= 0:
            weak = max(weak, wk)
        else:
            a = x if isinstance(x, Array) else as_array(x, -1)
            arrs[i] = a
            strongs.append(a.dtype_num)
    strong = promote_seq(strongs)
    if weak >= 0:
        # Python scalars take the arrays' dtype within their kind (int32 array + 1 -> int32)
        # and raise it only to their kind's default (bool array + 1 -> int64), as NumPy 2's
        num = strong if strong >= 0 and weak <= _kind_rank(strong) else (BOOL, INT64, FLOAT32)[weak]
        for i in range(len(arrs)):
            if not isinstance(arrs[i], Array):
                arrs[i] = as_array(arrs[i], num)
    return _concat(arrs, axis, out, dtype, casting, num)


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """Join arrays of one shape along a new axis: result[..., i, ...] (i at position `axis` of
    the result, which has one more dimension) is arrays[i].

    dtype, out and casting as in concatenate. Raises ValueError for no inputs or different
    shapes, AxisError for an axis outside [-ndim - 1, ndim].
    """
    cdef list arrs = _as_arrays(arrays, "stack")
    cdef Array a, first
    cdef int ax, i
    if not arrs:
        raise ValueError("need at least one array to stack")
    first = <Array>arrs[0]
    for i in range(1, len(arrs)):
        a = <Array>arrs[i]
        if a.shape != first.shape:
            raise ValueError(f"all input arrays must have the same shape, but the array at index "
                             f"0 has shape {first.shape} and the array at index {i} has shape "
                             f"{a.shape}")
    ax = normalize_axis(axis, first.ndim + 1)
    return _concat([_insert_axis(a, ax) for a in arrs], ax, out, dtype, casting)


cdef Array _atleast(Array a, int nd):
    """a viewed with at least nd dims (NumPy's atleast_1d/2d/3d placement of the new dims)."""
    cdef Py_ssize_t shape[3]
    if a.ndim >= nd:
        return a
    if a.ndim == 0:
        shape[0] = shape[1] = shape[2] = 1
        return _with_shape(a, nd, shape)
    if a.ndim == 1:
        a = _insert_axis(a, 0)           # (N,) -> (1, N)
        return a if nd == 2 else _insert_axis(a, 2)     # -> (1, N, 1)
    return _insert_axis(a, 2)           # (M, N) -> (M, N, 1)


def _atleast_nd(arys, int nd):
    res = [_atleast(x if isinstance(x, Array) else as_array(x, -1), nd) for x in arys]
    return res[0] if len(res) == 1 else tuple(res)


def atleast_1d(*arys):
    """Each input as an array of at least 1 dimension (0-d -> (1,)); one array or a tuple."""
    return _atleast_nd(arys, 1)


def atleast_2d(*arys):
    """Each input as an array of at least 2 dimensions ((N,) -> (1, N)); one array or a tuple."""
    return _atleast_nd(arys, 2)


def atleast_3d(*arys):
    """Each input as an array of at least 3 dimensions ((N,) -> (1, N, 1), (M, N) -> (M, N, 1));
    one array or a tuple."""
    return _atleast_nd(arys, 3)


def vstack(tup, *, dtype=None, casting="same_kind"):
    """Stack arrays vertically: concatenate along axis 0 after making them at least 2-d."""
    arrs = [_atleast(a, 2) for a in _as_arrays(tup, "vstack")]
    return _concat(arrs, 0, None, dtype, casting)


def hstack(tup, *, dtype=None, casting="same_kind"):
    """Stack arrays horizontally: concatenate along axis 1 (axis 0 when the first array is 1-d)
    after making them at least 1-d."""
    arrs = [_atleast(a, 1) for a in _as_arrays(tup, "hstack")]
    ax = 0 if arrs and (<Array>arrs[0]).ndim == 1 else 1
    return _concat(arrs, ax, None, dtype, casting)


def dstack(tup):
    """Stack arrays depth-wise: concatenate along axis 2 after making them at least 3-d."""
    arrs = [_atleast(a, 3) for a in _as_arrays(tup, "dstack")]
    return _concat(arrs, 2, None, None, "same_kind")


def column_stack(tup):
    """Stack 1-d arrays as the columns of a 2-d array ((N,) -> (N, 1)); 2-d arrays are joined
    as they are, along axis 1."""
    cdef Array a
    arrs = []
    for a in _as_arrays(tup, "column_stack"):
        if a.ndim == 0:
            a = _atleast(a, 2)
        elif a.ndim == 1:
            a = _insert_axis(a, 1)
        arrs.append(a)
    return _concat(arrs, 1, None, None, "same_kind")


# ---------------------------------------------------------------------------------------------
# splits
# ---------------------------------------------------------------------------------------------

_MAX_SECTIONS = 2**31 - 1


def array_split(ary, indices_or_sections, axis=0):
    """Views of ary split along `axis`: into `indices_or_sections` parts (an int; the first
    len % n parts get one extra element), or at the given indices (a sequence; each part is
    ary[..., i:j, ...] with Python's slice rules, so indices may be negative, out of range or
    decreasing). Raises ValueError for a number of sections below 1, AxisError for a bad axis.
    """
    cdef Array a = ary if isinstance(ary, Array) else as_array(ary, -1)
    cdef int ax = normalize_axis(axis, a.ndim)
    cdef Py_ssize_t ntotal = a.shape_[ax], each, extras, start, stop, step, k
    cdef list points
    try:
        points = [0] + list(indices_or_sections) + [ntotal]
    except TypeError:
        nsections = int(indices_or_sections)
        if nsections <= 0:
            raise ValueError(f"number sections must be larger than 0., got {nsections}") from None
        if nsections > _MAX_SECTIONS:   # one view object each: refuse before looping for ever
            raise MemoryError(f"array_split: cannot make {nsections} sections (one view each); "
                              f"at most {_MAX_SECTIONS}") from None
        each, extras = divmod(ntotal, nsections)
        points = [0]
        for k in range(nsections):
            points.append(points[k] + each + (1 if k < extras else 0))
    out = []
    for k in range(len(points) - 1):
        start, stop, step = slice(points[k], points[k + 1]).indices(ntotal)
        out.append(_sub(a, ax, start, stop - start if stop > start else 0, 1))
    return out


def split(ary, indices_or_sections, axis=0):
    """array_split, except that an int number of sections must divide the axis exactly:
    ValueError 'array split does not result in an equal division' otherwise (ZeroDivisionError
    for 0 sections, as NumPy)."""
    cdef Array a
    try:
        len(indices_or_sections)
    except TypeError:
        a = ary if isinstance(ary, Array) else as_array(ary, -1)
        n = a.shape_[normalize_axis(axis, a.ndim)]
        sections = indices_or_sections
        if sections == 0:       # NumPy's type (its n % 0 fails), with a message that says why
            raise ZeroDivisionError("integer modulo by zero: split into 0 sections") from None
        if n % sections:
            raise ValueError(f"array split does not result in an equal division: axis {axis} "
                             f"of length {n} into {sections} sections") from None
        return array_split(a, indices_or_sections, axis)
    return array_split(ary, indices_or_sections, axis)


def hsplit(ary, indices_or_sections):
    """split along axis 1 (axis 0 for 1-d arrays)."""
    cdef Array a = ary if isinstance(ary, Array) else as_array(ary, -1)
    if a.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(a, indices_or_sections, 1 if a.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    """split along axis 0 of an array of at least 2 dimensions."""
    cdef Array a = ary if isinstance(ary, Array) else as_array(ary, -1)
    if a.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(a, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    """split along axis 2 of an array of at least 3 dimensions."""
    cdef Array a = ary if isinstance(ary, Array) else as_array(ary, -1)
    if a.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(a, indices_or_sections, 2)


# ---------------------------------------------------------------------------------------------
# flip
# ---------------------------------------------------------------------------------------------

def flip(m, axis=None):
    """The view of m with the order of elements reversed along `axis` (an int, a tuple of ints,
    or None for all axes): negative strides, no copy. AxisError for a bad axis, ValueError for a
    repeated one."""
    cdef Array a = m if isinstance(m, Array) else as_array(m, -1)
    cdef Py_ssize_t strides[MAXDIMS]
    cdef Py_ssize_t offset = a.offset
    cdef int d
    if axis is None:
        axes = range(a.ndim)
    else:
        items = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
        axes = [normalize_axis(x, a.ndim) for x in items]
        if len(set(axes)) != len(axes):
            raise ValueError(f"repeated axis in flip: {axis}")
    for d in range(a.ndim):
        strides[d] = a.strides_[d]
    for d in axes:
        if a.shape_[d] > 0:
            offset += (a.shape_[d] - 1) * a.strides_[d]
            strides[d] = -a.strides_[d]
    return make_view(a, a.ndim, a.shape_, strides, offset)


def fliplr(m):
    """flip(m, 1) for an array of at least 2 dimensions."""
    cdef Array a = m if isinstance(m, Array) else as_array(m, -1)
    if a.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return flip(a, 1)


def flipud(m):
    """flip(m, 0) for an array of at least 1 dimension."""
    cdef Array a = m if isinstance(m, Array) else as_array(m, -1)
    if a.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return flip(a, 0)


# ---------------------------------------------------------------------------------------------
# pad
# ---------------------------------------------------------------------------------------------

cdef dict _PAD_KWARGS = {
    "constant": ("constant_values",), "edge": (), "wrap": (), "empty": (),
    "reflect": ("reflect_type",), "symmetric": ("reflect_type",),
}
cdef dict _PAD_NOT_IMPLEMENTED = {
    "linear_ramp": ("end_values",), "maximum": ("stat_length",), "mean": ("stat_length",),
    "median": ("stat_length",), "minimum": ("stat_length",),
}


cdef str _np_shape(tuple shape):
    """A shape as NumPy's broadcasting errors print it: (2,2), (3,)."""
    return "(" + ",".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


cdef list _as_pairs(Array x, int ndim, bint as_index):
    """NumPy's pad normalisation: x (a scalar, a pair, one pair per axis, ...) as ndim
    (before, after) pairs of 0-d views of x (Python ints when as_index). Rules: one value ->
    (v, v) for every axis; two values, except shape (2, 1) -> (v0, v1) for every axis; else x
    broadcast to (ndim, 2)."""
    cdef Array flat, b
    cdef Py_ssize_t bstrides[2]
    cdef Py_ssize_t bshape[2]
    cdef int i, k
    cdef bint broadcastable = True
    if x.ndim < 3 and x.size_c() in (1, 2) and not (x.size_c() == 2 and x.shape == (2, 1)):
        flat = x.reshape(-1)
        vals = [flat[0], flat[0]] if x.size_c() == 1 else [flat[0], flat[1]]
        if as_index:
            vals = [int(v) for v in vals]
            if vals[0] < 0 or vals[1] < 0:
                raise ValueError(f"index can't contain negative values: pad_width "
                                 f"{x.tolist()!r}")
        return [vals] * ndim
    if x.size_c() == 0:
        raise ValueError(f"{'pad_width' if as_index else 'constant_values'} has no values "
                         f"(shape {x.shape}); expected a value, a (before, after) pair or one "
                         f"pair per axis")
    # broadcast x to (ndim, 2)
    if x.ndim > 2:
        broadcastable = False
    else:
        bshape[0] = ndim
        bshape[1] = 2
        for i in range(2):
            k = i - (2 - x.ndim)
            if k < 0:
                bstrides[i] = 0
            elif x.shape_[k] == bshape[i]:
                bstrides[i] = x.strides_[k]
            elif x.shape_[k] == 1:
                bstrides[i] = 0
            else:
                broadcastable = False
    if not broadcastable:
        raise ValueError(f"operands could not be broadcast together with remapped shapes "
                         f"[original->remapped]: {_np_shape(x.shape)}  and requested shape "
                         f"({ndim},2)")
    b = make_view(x, 2, bshape, bstrides, x.offset)
    if as_index:
        pairs = b.tolist()
        for p in pairs:
            if p[0] < 0 or p[1] < 0:
                raise ValueError(f"index can't contain negative values: pad_width "
                                 f"{x.tolist()!r}")
        return pairs
    return [[b[i, 0], b[i, 1]] for i in range(ndim)]


cdef Array _roi(Array padded, list widths, Array orig, int axis):
    """NumPy's _view_roi: padded in full along axes <= axis, and only the original area along
    the axes after it (their pads are filled later, corners included)."""
    cdef int d
    for d in range(axis + 1, padded.ndim):
        padded = _sub(padded, d, widths[d][0], orig.shape_[d], 1)
    return padded


cdef int _set_pad_area(Array roi, int axis, Py_ssize_t left, Py_ssize_t right,
                       Array lval, Array rval) except -1:
    """roi[:left] = lval and roi[-right:] = rval along axis (values broadcast)."""
    cdef Py_ssize_t n = roi.shape_[axis]
    if left > 0:
        copy_into(_sub(roi, axis, 0, left, 1), lval)
    if right > 0:
        copy_into(_sub(roi, axis, n - right, right, 1), rval)
    return 0


cdef int _set_edges(Array roi, int axis, Py_ssize_t left, Py_ssize_t right) except -1:
    """Fill the pads along axis with copies of the first and last original slices."""
    cdef Py_ssize_t n = roi.shape_[axis]
    return _set_pad_area(roi, axis, left, right, _sub(roi, axis, left, 1, 1),
                         _sub(roi, axis, n - right - 1, 1, 1))


cdef tuple _set_reflect_both(Array padded, int axis, Py_ssize_t left, Py_ssize_t right,
                             bint odd, Py_ssize_t period, bint include_edge):
    """One step of NumPy's reflect/symmetric padding: fill as much of each pad as the area
    already filled allows (a multiple of the original length), mirrored about the current edge;
    'odd' reflects the values about the edge value too (2 * edge - x). Returns the pads left."""
    cdef Py_ssize_t n = padded.shape_[axis]
    cdef Py_ssize_t old_length = n - right - left, edge_offset, chunk, start
    cdef Array src, edge
    if include_edge:
        old_length = old_length // period * period
        edge_offset = 1
    else:
        old_length = (old_length - 1) // (period - 1) * (period - 1) + 1
        edge_offset = 0
        old_length -= 1
    if left > 0:
        chunk = min(old_length, left)
        # padded[left - edge_offset + chunk : left - edge_offset : -1]
        src = _sub(padded, axis, left - edge_offset + chunk, chunk, -1)
        if odd:
            edge = _sub(padded, axis, left, 1, 1)
            src = 2 * edge - src
        copy_into(_sub(padded, axis, left - chunk, chunk, 1), src)
        left -= chunk
    if right > 0:
        chunk = min(old_length, right)
        # padded[n - right + edge_offset - 2 : n - right + edge_offset - 2 - chunk : -1]
        start = n - right + edge_offset - 2
        src = _sub(padded, axis, start, chunk, -1)
        if odd:
            edge = _sub(padded, axis, n - right - 1, 1, 1)
            src = 2 * edge - src
        copy_into(_sub(padded, axis, n - right, chunk, 1), src)
        right -= chunk
    return left, right


cdef tuple _set_wrap_both(Array padded, int axis, Py_ssize_t left, Py_ssize_t right,
                          Py_ssize_t original_period):
    """One step of NumPy's wrap padding: copy the far end of the filled area (a multiple of the
    original length) into each pad. Returns the pads left."""
    cdef Py_ssize_t n = padded.shape_[axis]
    cdef Py_ssize_t period = (n - right - left) // original_period * original_period
    cdef Py_ssize_t new_left = 0, new_right = 0, chunk
    if left > 0:
        chunk = min(period, left)
        src = _sub(padded, axis, left + period - chunk, chunk, 1)
        if left > period:
            copy_into(_sub(padded, axis, left - period, period, 1), src)
            new_left = left - period
        else:
            copy_into(_sub(padded, axis, 0, left, 1), src)
    if right > 0:
        chunk = min(period, right)
        src = _sub(padded, axis, n - right - period, chunk, 1)
        if right > period:
            copy_into(_sub(padded, axis, n - right, period, 1), src)
            new_right = right - period
        else:
            copy_into(_sub(padded, axis, n - right, right, 1), src)
    return new_left, new_right


cdef int _check_pad_values(Array cv, int num) except -1:
    """NumPy writes per-axis constant_values (not one value or one pair, whose values it casts
    unsafely) as Python numbers: into an integer array they must fit (OverflowError)."""
    if not is_int_num(num) or cv.ndim < 3 and cv.size_c() in (1, 2) and cv.shape != (2, 1):
        return 0
    for v in cv.reshape(-1).tolist():
        if isinstance(v, float) and v - v == 0:
            v = int(v)
        if type(v) is int and not int_fits(v, num):
            raise OverflowError(f"Python integer {v} out of bounds for {dtype_of(num).name}")
    return 0


cdef list _pad_widths(object pad_width, int nd):
    """pad_width as nd [before, after] pairs of Python ints (TypeError unless integers)."""
    cdef Array w
    try:
        w = pad_width if isinstance(pad_width, Array) else as_array(pad_width, -1)
    except (TypeError, ValueError):
        raise TypeError(f"`pad_width` must be of integral type, got {pad_width!r}") from None
    if not is_int_num(w.dtype_num):
        raise TypeError(f"`pad_width` must be of integral type, got {dtype_of(w.dtype_num).name} "
                        f"{pad_width!r}")
    return _as_pairs(w, nd, True)


cdef Array _pad_simple(Array a, list widths):
    """A new array with a in its middle (borders uninitialised), laid out as NumPy's: F order
    for an F- and not C-contiguous input."""
    cdef Py_ssize_t shape[MAXDIMS]
    cdef Py_ssize_t stride = 1
    cdef int d, nd = a.ndim
    cdef Array padded, inner
    for d in range(nd):
        shape[d] = widths[d][0] + a.shape_[d] + widths[d][1]
    padded = new_array_on(nd, shape, a.dtype_num, a)
    if a.f_contiguous() and not a.c_contiguous():
        for d in range(nd):
            padded.strides_[d] = stride
            stride *= shape[d] if shape[d] > 0 else 1
    inner = padded
    for d in range(nd):
        inner = _sub(inner, d, widths[d][0], a.shape_[d], 1)
    copy_into(inner, a)
    return padded


cdef Array _pad_callable(Array a, object pad_width, object function, dict kwargs):
    """NumPy's pad with a function as mode: the result starts as a zero-padded copy, then
    function(vector, (before, after), axis, kwargs) is called on every 1-d view along each axis
    in turn and fills the vector's borders in place."""
    cdef list widths = _pad_widths(pad_width, a.ndim)
    cdef Array padded = _pad_simple(a, widths)
    cdef Array z = as_array(0, a.dtype_num)
    cdef Array vec
    cdef int d, axis, nd = a.ndim
    cdef Py_ssize_t shape[MAXDIMS]
    cdef Py_ssize_t strides[MAXDIMS]
    cdef Py_ssize_t index[MAXDIMS]
    cdef Py_ssize_t offset
    for d in range(nd):
        _set_pad_area(_roi(padded, widths, a, d), d, widths[d][0], widths[d][1], z, z)
    for axis in range(nd):
        if padded.size_c() == 0:
            break
        shape[0] = padded.shape_[axis]
        strides[0] = padded.strides_[axis]
        for d in range(nd):
            index[d] = 0
        while True:
            offset = padded.offset
            for d in range(nd):
                offset += index[d] * padded.strides_[d]
            vec = make_view(padded, 1, shape, strides, offset)
            function(vec, widths[axis], axis, kwargs)
            # the next index over the other axes, last fastest (NumPy's ndindex order)
            d = nd - 1
            while d >= 0:
                if d != axis:
                    index[d] += 1
                    if index[d] < padded.shape_[d]:
                        break
                    index[d] = 0
                d -= 1
            if d < 0:
                break
    return padded


def pad(array, pad_width, mode="constant", **kwargs):
    """array with borders added: result[l0:l0 + n0, l1:l1 + n1, ...] = array, where pad_width
    gives (before, after) widths: an int (every side), (before, after) (every axis) or one pair
    per axis ((n,) and ((n,),) count as n for every side). The borders are filled by `mode`:

    - 'constant' (constant_values: a value, a pair, or one pair per axis, as pad_width),
    - 'edge' (repeat the first/last slice), 'wrap' (periodic),
    - 'reflect' (mirror without repeating the edge: 3 2 | 1 2 3 | 2 1),
    - 'symmetric' (mirror repeating it: 2 1 | 1 2 3 | 3 2), both with reflect_type 'even' or
      'odd' (reflect the values about the edge value too: 2 * edge - x),
    - 'empty' (left uninitialised).

    - a function f(vector, (before, after), axis, kwargs), as NumPy's: called on every 1-d view
      along each axis of the zero-padded result, it fills the vector's borders in place.

    Along an axis, later axes' pads are written after earlier ones, so corners come from the
    last axis, as in NumPy. Raises TypeError for a non-integer pad_width, ValueError for a
    negative width, a pad_width that does not fit the array's dims, an unknown mode or keyword,
    or padding an empty axis with a mode that needs its values, and for NumPy's statistical
    modes ('maximum', 'mean', 'median', 'minimum', 'linear_ramp'), which carray does not have.
    """
    cdef Array a = array if isinstance(array, Array) else as_array(array, -1)
    cdef Array padded, roi, cv
    cdef int d, nd = a.ndim
    cdef Py_ssize_t left, right
    cdef list widths
    if callable(mode):
        return _pad_callable(a, pad_width, mode, kwargs)
    if not isinstance(mode, str) or (mode not in _PAD_KWARGS and mode not in _PAD_NOT_IMPLEMENTED):
        raise ValueError(f"mode {mode!r} is not supported; carray.pad supports 'constant', "
                         f"'edge', 'reflect', 'symmetric', 'wrap' and 'empty'")
    if mode in _PAD_NOT_IMPLEMENTED:
        raise ValueError(f"pad mode {mode!r} is not supported by carray; supported modes: "
                         f"'constant', 'edge', 'reflect', 'symmetric', 'wrap', 'empty'")
    unsupported = set(kwargs) - set(_PAD_KWARGS[mode])
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    reflect_type = kwargs.get("reflect_type", "even")
    if reflect_type not in ("even", "odd"):
        raise ValueError(f"reflect_type must be 'even' or 'odd', got {reflect_type!r}")

    widths = _pad_widths(pad_width, nd)
    padded = _pad_simple(a, widths)

    if mode == "constant":
        values = kwargs.get("constant_values", 0)
        cv = values if isinstance(values, Array) else as_array(values, -1)
        if cv.dtype_num == FLOAT32 and not isinstance(values, Array) and \
                not hasattr(values, "dtype"):
            cv = as_array(values, FLOAT64)      # Python floats: keep their full precision
        vals = _as_pairs(cv, nd, False)
        _check_pad_values(cv, padded.dtype_num)
        for d in range(nd):
            roi = _roi(padded, widths, a, d)
            _set_pad_area(roi, d, widths[d][0], widths[d][1],
                          as_array(vals[d][0], -1), as_array(vals[d][1], -1))
        return padded
    if mode == "empty":
        return padded
    if a.size_c() == 0:
        for d in range(nd):
            if a.shape_[d] == 0 and (widths[d][0] or widths[d][1]):
                raise ValueError(f"can't extend empty axis {d} using modes other than "
                                 f"'constant' or 'empty'")
        return padded

    if mode == "edge":
        for d in range(nd):
            _set_edges(_roi(padded, widths, a, d), d, widths[d][0], widths[d][1])
    elif mode == "reflect" or mode == "symmetric":
        for d in range(nd):
            left, right = widths[d]
            if a.shape_[d] == 1 and (left > 0 or right > 0):
                _set_edges(padded, d, left, right)     # NumPy's legacy rule for length 1
                continue
            roi = _roi(padded, widths, a, d)
            while left > 0 or right > 0:
                left, right = _set_reflect_both(roi, d, left, right, reflect_type == "odd",
                                                a.shape_[d], mode == "symmetric")
    else:   # wrap
        for d in range(nd):
            left, right = widths[d]
            roi = _roi(padded, widths, a, d)
            while left > 0 or right > 0:
                left, right = _set_wrap_both(roi, d, left, right, a.shape_[d])
    return padded

# cython: wraparound=True
"""Elementwise ops and reductions: dtype resolution, broadcasting, output allocation, dispatch.

Every op here is a row of the op table (carray.ops._optable): the elementwise functions (`add`,
`exp`, ...) are made from its rows, with their names, dtype rules and identities. This layer decides the compute and
result dtypes (NumPy 2 promotion, Python scalars weak), broadcasts the operands (stride 0),
checks `out=`, then runs the op's typed 1-d loop through the shared strided driver
(_strided.prepare_loop/run_loop). The loops come from the kernel build the CPU supports best
(_kernels_avx512, _kernels_avx2 or _kernels_generic; CARRAY_SIMD=generic|avx2|avx512 overrides).
"""

import importlib
import operator
import os

from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.pycapsule cimport PyCapsule_GetPointer
from cython.parallel cimport prange, threadid
from libc.math cimport INFINITY, NAN
from libc.stdint cimport (int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t,
                         INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN)
from libc.string cimport memset

from carray.core._array cimport (Array, as_array, check_same_device, copy_into, gpu_backend,
                                 make_view, may_overlap, new_array, new_array_on, normalize_axis,
                                 on_gpu, parse_dtype_num, same_dims)
from carray.core._dtype cimport (BOOL, FLOAT32, FLOAT64, INT8, INT16, INT32, INT64, NTYPES, UINT8,
                                 UINT16, UINT32, UINT64, bool_t, dtype_of, int_fits,
                                 is_unsigned_num, itemsize_of, kind_rank, num_t, promote_nums,
                                 u8_t)
from carray.core._strided cimport (MAXDIMS, MAXOPS, NdLoop, cast_loop_for, loop1d_t,
                                   max_threads, prepare_loop, prepare_loop_by, region_enter,
                                   region_exit, run_loop, thread_seen)
from carray.core._dtype cimport COMPLEX64, COMPLEX128, is_complex_num
from carray.cpu._kernel_table cimport KernelTable
from carray.ops._optable cimport *

from carray.core._dtype import DTYPE_NAMES
from carray.ops import _optable
from carray.core._dtype cimport FLOAT16, is_half_num
from carray.ops._half import narrow, widen

cdef extern from "_cpu.h":
    int carray_simd_level()

cdef extern from "_rows.h" nogil:
    # argmax/argmin of a contiguous float row, vectorised and cloned for AVX2 / AVX-512
    Py_ssize_t carray_row_maxf_arg(const float* x, Py_ssize_t n)
    Py_ssize_t carray_row_minf_arg(const float* x, Py_ssize_t n)
    Py_ssize_t carray_row_maxd_arg(const double* x, Py_ssize_t n)
    Py_ssize_t carray_row_mind_arg(const double* x, Py_ssize_t n)

# elementwise work below this many elements stays on one thread: measured on 2 cores (Zen 4),
# starting the second thread pays off from ~64K elements for add/copy-like ops and from ~16K for
# transcendental ones (exp costs ~0.6 ns per element, add ~0.15 ns)
cdef Py_ssize_t PARALLEL_MIN = 1 << 16
cdef Py_ssize_t PARALLEL_MIN_HEAVY = 1 << 14

# -- choosing the kernel build -----------------------------------------------------------------

cdef KernelTable* K = NULL
_BUILDS = ("generic", "avx2", "avx512")


def _load_kernels():
    """Import the widest kernel build this CPU runs (or the one CARRAY_SIMD names)."""
    global K
    level = carray_simd_level()
    wanted = os.environ.get("CARRAY_SIMD")
    if wanted is not None:
        if wanted not in _BUILDS:
            raise ValueError(f"CARRAY_SIMD={wanted!r}; expected one of {_BUILDS}")
        level = min(level, _BUILDS.index(wanted))
    for lvl in range(level, -1, -1):
        try:
            mod = importlib.import_module("carray.cpu._kernels_" + _BUILDS[lvl])
        except ImportError:
            continue
        K = <KernelTable*>PyCapsule_GetPointer(mod.kernel_table(), b"carray.KernelTable")
        return _BUILDS[lvl]
    raise ImportError("no carray kernel build could be imported")


simd_build = _load_kernels()

# -- what the op table says, in C arrays for the hot path ---------------------------------------

cdef list _UNARY_ROWS = list(_optable.of_kind(UNARY))
cdef list _BINARY_ROWS = list(_optable.of_kind(BINARY))
cdef list _COMPARE_ROWS = list(_optable.of_kind(COMPARE))
cdef list _PREDICATE_ROWS = list(_optable.of_kind(PREDICATE))
cdef list _REDUCE_ROWS = list(_optable.of_kind(REDUCE))
# names for error messages (NumPy's ufunc names), by code
cdef tuple _UNARY_NAMES = tuple(row.ufunc for row in _UNARY_ROWS)
cdef tuple _BINARY_NAMES = tuple(row.ufunc for row in _BINARY_ROWS)
cdef tuple _COMPARE_NAMES = tuple(row.ufunc for row in _COMPARE_ROWS)
cdef tuple _PREDICATE_NAMES = tuple(row.ufunc for row in _PREDICATE_ROWS)
cdef int _UNARY_RULE[<int>NUNARY]
cdef bint _UNARY_HEAVY[<int>NUNARY]
cdef int _BINARY_RULE[<int>NBINARY]
cdef int _IDENTITY[<int>NREDUCE]


cdef int _load_rules() except -1:
    for row in _UNARY_ROWS:
        _UNARY_RULE[<int>row.code] = row.rule
        _UNARY_HEAVY[<int>row.code] = row.heavy
    for row in _BINARY_ROWS:
        _BINARY_RULE[<int>row.code] = row.rule
    for row in _REDUCE_ROWS:
        _IDENTITY[<int>row.code] = row.identity
    return 0


_load_rules()


def cpu_loop_exists(int kind, int code, int num):
    """True when this kernel build has a CPU loop for op (kind, code) on type number num (the op
    table's coverage test asks)."""
    if not 0 <= num < NTYPES:
        raise ValueError(f"type number {num} out of range")
    if kind == UNARY and 0 <= code < NUNARY:
        return K.unary[code][num] != NULL
    if kind == BINARY and 0 <= code < NBINARY:
        return K.binary[code][num] != NULL
    if kind == COMPARE and 0 <= code < NCOMPARE:
        return K.compare[code][num] != NULL
    if kind == PREDICATE and 0 <= code < NPREDICATE:
        return K.predicate[code][num] != NULL
    if kind == REDUCE and 0 <= code < NREDUCE:
        return K.reduce[code][num] != NULL
    if kind == WHERE and code == W_WHERE:
        return K.where[num] != NULL
    raise ValueError(f"no elementwise or reduction op ({kind}, {code})")


cdef object _complex_module = None


cdef object _cx():
    """carray._complex (imported on first use): the complex math, composed from real ops."""
    global _complex_module
    if _complex_module is None:
        import carray._complex as m
        _complex_module = m
    return _complex_module


# -- operands ----------------------------------------------------------------------------------

cdef inline int _weak_kind(object x) noexcept:
    """0/1/2/3 for a Python bool/int/float/complex (weak scalars), -1 for anything else."""
    cdef type t = type(x)
    if t is float:
        return 2
    if t is complex:
        return 3
    if t is int:
        return 1
    if t is bool:
        return 0
    return -1


cdef inline int _kind_rank(int num) noexcept:
    return kind_rank(num)


cdef inline int _float_for(int num) noexcept:
    """The float type a float-only op computes an int or bool type in: NumPy gives float16 for
    1-byte types, float32 for 2-byte, float64 for wider."""
    return FLOAT16 if itemsize_of(num) == 1 else (FLOAT32 if itemsize_of(num) == 2 else FLOAT64)


cdef inline int _with_weak(int num, int kind) noexcept:
    """The dtype of an array of type num combined with a weak scalar of `kind`."""
    if kind <= _kind_rank(num):
        return num
    if kind == 3:           # a Python complex: complex128 with float64, carray's complex64 else
        return COMPLEX128 if num == FLOAT64 else COMPLEX64
    return (BOOL, INT64, FLOAT32)[kind]


cdef Array _operand(object x, int weak, int num):
    """x as an Array of type num (a weak scalar becomes a 0-d array, range-checked)."""
    cdef Array a
    if weak >= 0:
        return as_array(x, num)
    a = <Array>x
    if a.dtype_num == num:
        return a
    return a.astype(dtype_of(num))


cdef int _broadcast(Array a, Array b, Array c, Py_ssize_t* shape) except -1:
    """Write the broadcast shape of a, b and c (c may be None) to `shape`; return its ndim.
    ValueError naming every shape when they do not broadcast (NumPy's message)."""
    cdef int nd = 0, d, k
    cdef Py_ssize_t v
    cdef Array x
    ops = (a, b) if c is None else (a, b, c)
    for x in ops:
        if x.ndim > nd:
            nd = x.ndim
    for d in range(nd):
        shape[d] = 1
    for x in ops:
        k = nd - x.ndim
        for d in range(x.ndim):
            v = x.shape_[d]
            if v != shape[k + d]:
                if shape[k + d] == 1:
                    shape[k + d] = v
                elif v != 1:
                    raise ValueError("operands could not be broadcast together with shapes "
                                     + " ".join(str(y.shape).replace(" ", "") for y in ops))
    return nd


cdef inline void _bstrides(Array a, int nd, Py_ssize_t* out) noexcept:
    """a's byte strides broadcast to nd dims (0 along new and size-1 dims)."""
    cdef int k = nd - a.ndim, d
    for d in range(k):
        out[d] = 0
    for d in range(a.ndim):
        out[k + d] = 0 if a.shape_[d] == 1 else a.strides_[d] * a.itemsize


cdef bint _same_layout(Array a, Array b) noexcept:
    cdef int d
    if a.data != b.data or a.ndim != b.ndim:
        return False
    for d in range(a.ndim):
        if a.shape_[d] != b.shape_[d] or (a.shape_[d] > 1 and a.strides_[d] != b.strides_[d]):
            return False
    return True


cdef bint _overlaps(Array a, Array b) noexcept:
    """True when a and b share storage but are not the same view (an in-place hazard)."""
    return may_overlap(a, b) and not _same_layout(a, b)


cdef inline bint _can_cast_same_kind(int src, int dst) noexcept:
    """NumPy's same_kind casting: the kinds ordered bool < unsigned < signed < float."""
    return _kind_rank(dst) > _kind_rank(src) or _kind_rank(dst) == _kind_rank(src) and \
        (_kind_rank(src) != 1 or is_unsigned_num(src) or not is_unsigned_num(dst))


cdef Array _output(object out, int nd, Py_ssize_t* shape, int num, str name,
                   bint same_kind=True, Array dev=None):
    """The array to write results of type num into: a new one, or `out` when it fits exactly.

    Raises TypeError when out is not an Array, ValueError when its shape differs from the
    broadcast shape, TypeError (NumPy's UFuncTypeError) when num cannot be cast to its dtype
    with same_kind casting (unless not same_kind: reductions cast unsafely into out, as NumPy)."""
    cdef Array o
    cdef int d
    if out is None:
        return new_array_on(nd, shape, num, dev)
    if isinstance(out, tuple) and len(out) == 1:
        out = out[0]
    if not isinstance(out, Array):
        raise TypeError(f"{name}: out must be a carray Array, got {type(out).__name__}")
    o = <Array>out
    if o.ndim != nd or not same_dims(nd, o.shape_, shape):
        raise ValueError(f"non-broadcastable output operand with shape {o.shape} doesn't match "
                         f"the broadcast shape {tuple([shape[d] for d in range(nd)])}")
    if not o.writeable:
        raise ValueError("output array is read-only")
    if on_gpu(o) != (dev is not None):
        raise ValueError(f"{name}: out is on device {o.device!r} but the operands are on "
                         f"{'gpu' if dev is not None else 'cpu'!r}; nothing moves between "
                         f"devices implicitly")
    if same_kind:
        _check_out_cast(o, num, name)
    return o


cdef inline int _check_out_writeable(object out) except -1:
    """ValueError for a read-only `out`: NumPy checks this before anything else of an op."""
    if type(out) is tuple and len(<tuple>out) == 1:
        out = (<tuple>out)[0]
    if type(out) is Array and not (<Array>out).writeable:
        raise ValueError("output array is read-only")
    return 0


cdef int _check_out_cast(object out, int num, str name) except -1:
    """TypeError (NumPy's UFuncTypeError) when a result of type num cannot be cast to the
    dtype of `out` (an Array, else nothing to check) with same_kind casting. NumPy checks this
    before broadcasting, so ops call it before they look at shapes."""
    if type(out) is Array and not _can_cast_same_kind(num, (<Array>out).dtype_num):
        raise TypeError(f"Cannot cast ufunc '{name}' output from dtype('{dtype_of(num).name}') "
                        f"to dtype('{(<Array>out).dtype.name}') with casting rule 'same_kind'")
    return 0


cdef int _run(Array o, Array a, Array b, Array c, int nd, Py_ssize_t* shape, loop1d_t fn,
              int order_op, Py_ssize_t parallel_min=PARALLEL_MIN, void* aux=NULL) except -1:
    """Run fn over o (the output) and the inputs a, b, c (b, c may be None), broadcast to
    `shape`; the walk follows operand order_op's layout. aux goes to fn."""
    cdef NdLoop it
    cdef char* data[MAXOPS]
    cdef Py_ssize_t strides[MAXOPS][MAXDIMS]
    cdef int nops = 2 if b is None else (3 if c is None else 4)
    data[0] = o.data
    _bstrides(o, nd, strides[0])
    data[1] = a.data
    _bstrides(a, nd, strides[1])
    if b is not None:
        data[2] = b.data
        _bstrides(b, nd, strides[2])
    if c is not None:
        data[3] = c.data
        _bstrides(c, nd, strides[3])
    with nogil:
        prepare_loop_by(&it, nops, nd, shape, data, strides, order_op)
        run_loop(&it, fn, aux, NULL, parallel_min)
    return 0


cdef object _finish(Array result, object out):
    """Copy a result computed in another dtype into `out` (or return it)."""
    if out is None:
        return result
    if isinstance(out, tuple):
        out = out[0]
    if result is not out:
        copy_into(<Array>out, result)
    return out


cdef object _finish_half(object result, object out, str name):
    """Write a 2-byte float op's result into `out` after _output's checks (an Array, on the
    result's device, of the broadcast shape, same_kind); or return it."""
    if out is None:
        return result
    cdef Array r = <Array>result
    cdef Py_ssize_t shape[MAXDIMS]
    if isinstance(out, tuple) and len(out) == 1:
        out = out[0]
    if not isinstance(out, Array):
        raise TypeError(f"{name}: out must be a carray Array, got {type(out).__name__}")
    cdef int nd = _broadcast(r, <Array>out, None, shape)
    copy_into(_output(out, nd, shape, r.dtype_num, name, True, r if on_gpu(r) else None), r)
    return out


# -- binary ops --------------------------------------------------------------------------------

cdef object binary(int kind, int code, object x, object y, object out):
    """The op (kind, code) of x and y: kind BINARY (code a BinaryOp) or COMPARE (a CompareOp)."""
    cdef int wx = _weak_kind(x), wy = _weak_kind(y), ct, res_num, d, rule
    cdef Array a, b, o
    cdef Py_ssize_t shape[MAXDIMS]
    cdef bint compare = kind == COMPARE
    cdef str name = _COMPARE_NAMES[code] if compare else _BINARY_NAMES[code]
    if out is not None:
        _check_out_writeable(out)
    if wx < 0 and type(x) is not Array:
        x = as_array(x, -1)
    if wy < 0 and type(y) is not Array:
        y = as_array(y, -1)
    # compute dtype: NumPy 2 promotion with weak Python scalars
    if wx < 0 and wy < 0:
        ct = promote_nums((<Array>x).dtype_num, (<Array>y).dtype_num)
        if compare and ct == FLOAT64 and code <= C_GE and _kind_rank((<Array>x).dtype_num) == 1 \
                and _kind_rank((<Array>y).dtype_num) == 1:
            return _signed_unsigned_compare(code, <Array>x, <Array>y, out)
    elif wx < 0:
        ct = _with_weak((<Array>x).dtype_num, wy)
    elif wy < 0:
        ct = _with_weak((<Array>y).dtype_num, wx)
    else:
        ct = (BOOL, INT64, FLOAT32, COMPLEX64)[wx if wx > wy else wy]
    if not compare:
        rule = _BINARY_RULE[code]
        if rule == INTEGER and _kind_rank(ct) >= 2:
            _refuse_float(name)
        if ct == BOOL and _BINARY_ROWS[code].bool_error is not None:
            raise TypeError(_BINARY_ROWS[code].bool_error)
        if rule == TO_FLOAT and _kind_rank(ct) < 2:
            # NumPy: int / int is float64; the other float ops of ints take the float that
            # holds the int type (float16 for 1-byte types: carray's float32); two Python
            # scalars give carray's default float
            if wx >= 0 and wy >= 0:
                ct = FLOAT32
            elif code == B_DIV:
                ct = FLOAT64
            elif wx < 0 and wy < 0:     # the float each input casts to safely (int8 + uint16:
                ct = promote_nums(_float_for((<Array>x).dtype_num),      # float32)
                                  _float_for((<Array>y).dtype_num))
            else:
                ct = _float_for(ct)
        if rule == BOOL_TO_INT and ct == BOOL:
            ct = INT8         # as NumPy
    elif _kind_rank(ct) == 1 and (wx < 0) != (wy < 0) and \
            (wx == 1 and not _fits(x, ct) or wy == 1 and not _fits(y, ct)):
        # NumPy 2 compares an int array with any Python int by value: one beyond the type's
        # range compares as the type's max (or min) with the comparison adjusted, exactly
        if wx == 1:                     # v op a is a op' v
            x, y, wx, wy = y, x, wy, wx
            code = _FLIPPED[code]
        code, y = _clamped_compare(code, y, ct)
    elif _kind_rank(ct) == 1 and (wx == 1 and not _fits(x, ct) or wy == 1 and not _fits(y, ct)):
        # two Python ints beyond int64: compared as float64
        ct = FLOAT64
    res_num = BOOL if compare else ct
    _check_out_cast(out, res_num, name)
    if is_half_num(ct):             # in float32, rounded back (carray/ops/_half.py)
        return _finish_half(narrow(binary(kind, code, widen(_operand(x, wx, ct)),
                                          widen(_operand(y, wy, ct)), None), dtype_of(ct)),
                            out, name)
    cdef Array dev = None         # a device operand: the op runs on its device
    if wx < 0 and on_gpu(<Array>x) or wy < 0 and on_gpu(<Array>y) or \
            type(out) is Array and on_gpu(<Array>out):
        dev = _device_operand(name, x, y, out)
    a = _operand(x, wx, ct)
    b = _operand(y, wy, ct)
    if is_complex_num(ct):
        r = _cx().binary(name, a, b)
        return r if out is None else _finish_into(r, out, name)
    if not compare and code == B_POW and _kind_rank(ct) == 1 and not is_unsigned_num(ct) and \
            a.size_c() > 0 and \
            _any_negative(b):
        raise ValueError("Integers to negative integer powers are not allowed.")
    # a given out takes part in broadcasting: the inputs may broadcast up to its shape
    cdef int nd = _broadcast(a, b, out if type(out) is Array else None, shape) \
        if a.ndim or b.ndim or type(out) is Array else 0
    o = _output(out, nd, shape, res_num, name, True, dev)
    if o.dtype_num != res_num:
        o = new_array_on(nd, shape, res_num, dev)
    elif out is not None:
        if _overlaps(o, a):
            a = a.copy()
        if _overlaps(o, b):
            b = b.copy()
    if dev is not None:
        gpu_backend().elementwise(kind, code, ct, o, [a, b])
        return _finish(o, out)
    _run(o, a, b, None, nd, shape, K.compare[code][ct] if compare else K.binary[code][ct], 0)
    return _finish(o, out)


cdef int _refuse_float(str name) except -1:
    """NumPy's TypeError for a bitwise op whose operands promote to a float type."""
    raise TypeError(f"ufunc '{name}' not supported for the input types, and the inputs could "
                    f"not be safely coerced to any supported types according to the casting "
                    f"rule ''safe''")


cdef Array _device_operand(str name, object x, object y, object z):
    """The device Array among x, y, z (Arrays or Python scalars) after checking that no host
    array other than a 0-d one (a scalar) takes part; ValueError naming both devices."""
    cdef Array dev = None, host = None
    for v in (x, y, z):
        if type(v) is Array:
            if on_gpu(<Array>v):
                dev = <Array>v
            elif (<Array>v).ndim > 0 or v is z:
                host = <Array>v
    if host is not None:
        check_same_device(name, dev, host)
    return dev


cdef object _signed_unsigned_compare(int code, Array x, Array y, object out):
    """x (code) y exactly for a signed int array and a uint64 one (their promotion, float64,
    would round): a negative value is below every unsigned one; others compare as uint64."""
    cdef str name = _COMPARE_NAMES[code]
    if is_unsigned_num(x.dtype_num):        # s op u, with s the signed operand on the left
        x, y, code = y, x, _FLIPPED[code]
    cdef Array u64 = y.astype(dtype_of(UINT64)) if y.dtype_num != UINT64 else y
    exact = binary(COMPARE, code, x.astype(dtype_of(UINT64)), u64, None)
    negative_result = code in (C_LT, C_LE, C_NE)
    result = where(binary(COMPARE, C_LT, x, 0, None), negative_result, exact)
    return result if out is None else _finish_into(result, out, name)


cdef tuple _FLIPPED = (C_EQ, C_NE, C_GT, C_GE, C_LT, C_LE, C_AND, C_OR)     # a op b = b op' a


cdef tuple _clamped_compare(int code, object v, int num):
    """(code', v') such that `a code' v'` equals `a code v` for every a of integer type num,
    where the Python int v lies outside num's range and v' is num's max (or min)."""
    lo, hi = _int_identity(num, LOWEST), _int_identity(num, HIGHEST)
    if code == C_AND or code == C_OR:
        return code, 1                  # (v is nonzero)
    if v > hi:      # a < v, a <= v, a != v: always; a > v, a >= v, a == v: never
        return (C_LE if code in (C_LT, C_LE, C_NE) else C_GT), hi
    return (C_GE if code in (C_GT, C_GE, C_NE) else C_LT), lo


cdef inline bint _fits(object value, int num):
    """True when the Python int `value` fits integer type num."""
    return int_fits(value, num) == 1


cdef bint _any_negative(Array b) except -1:
    if on_gpu(b):
        return bool(binary(COMPARE, C_LT, b, 0, None).any())
    cdef Array c = b.astype(dtype_of(INT64))
    cdef Py_ssize_t i, n = c.size_c()
    cdef int64_t* p = <int64_t*>c.data
    for i in range(n):
        if p[i] < 0:
            return True
    return False


# -- unary ops ---------------------------------------------------------------------------------

cdef object unary(int kind, int code, object x, object out):
    """The op (kind, code) of x: kind UNARY (code a UnaryOp) or PREDICATE (a PredicateOp)."""
    cdef Array a = x if type(x) is Array else as_array(x, -1)
    cdef Array o
    cdef int ct = a.dtype_num, res_num, rule
    cdef bint predicate = kind == PREDICATE
    cdef str name = _PREDICATE_NAMES[code] if predicate else _UNARY_NAMES[code]
    if out is not None:
        _check_out_writeable(out)
    if not predicate:
        rule = _UNARY_RULE[code]
        if rule == TO_FLOAT and _kind_rank(ct) < 2:
            ct = _float_for(ct)
        elif ct == BOOL and _UNARY_ROWS[code].bool_error is not None:
            raise TypeError(_UNARY_ROWS[code].bool_error)
        elif ct == BOOL and rule == BOOL_TO_INT:
            ct = INT8         # as NumPy
        elif rule == INTEGER and _kind_rank(ct) >= 2:
            _refuse_float(name)
    res_num = BOOL if predicate else ct
    if is_complex_num(ct) and not predicate and code == U_ABS:
        res_num = FLOAT32 if ct == COMPLEX64 else FLOAT64
    _check_out_cast(out, res_num, name)
    if is_half_num(ct):             # in float32, rounded back (carray/ops/_half.py)
        return _finish_half(narrow(unary(kind, code, widen(_operand(a, -1, ct)), None),
                                   dtype_of(ct)), out, name)
    cdef Array dev = None
    if on_gpu(a) or type(out) is Array and on_gpu(<Array>out):
        dev = _device_operand(name, a, None, out)
    a = _operand(a, -1, ct)
    if is_complex_num(ct):
        r = _cx().unary(name, a)
        return r if out is None else _finish_into(r, out, name)
    cdef Py_ssize_t shape[MAXDIMS]
    cdef int nd = _broadcast(a, out, None, shape) if type(out) is Array else a.ndim
    if type(out) is not Array:
        for d in range(nd):
            shape[d] = a.shape_[d]
    o = _output(out, nd, shape, res_num, name, True, dev)
    if o.dtype_num != res_num:
        o = new_array_on(nd, shape, res_num, dev)
    elif out is not None and _overlaps(o, a):
        a = a.copy()
    if dev is not None:
        gpu_backend().elementwise(kind, code, ct, o, [a])
        return _finish(o, out)
    _run(o, a, None, None, nd, shape, K.predicate[code][ct] if predicate else K.unary[code][ct],
         0, PARALLEL_MIN_HEAVY if not predicate and _UNARY_HEAVY[code] else PARALLEL_MIN)
    return _finish(o, out)


def where(condition, x, y):
    """Elements of x where condition is true, else of y (all three broadcast together).

    The result dtype is the NumPy 2 promotion of x and y (Python scalars weak)."""
    cdef int wx = _weak_kind(x), wy = _weak_kind(y), ct
    cdef Py_ssize_t shape[MAXDIMS]
    cdef Array c = as_array(condition, -1)
    if c.dtype_num != BOOL:
        c = <Array>unary(PREDICATE, P_NOT, unary(PREDICATE, P_NOT, c, None), None)
    if wx < 0:
        x = as_array(x, -1)
    if wy < 0:
        y = as_array(y, -1)
    if wx < 0 and wy < 0:
        ct = promote_nums((<Array>x).dtype_num, (<Array>y).dtype_num)
    elif wx < 0:
        ct = _with_weak((<Array>x).dtype_num, wy)
    elif wy < 0:
        ct = _with_weak((<Array>y).dtype_num, wx)
    else:
        ct = (BOOL, INT64, FLOAT32, COMPLEX64)[wx if wx > wy else wy]
    cdef Array dev = None
    if on_gpu(c) or wx < 0 and on_gpu(<Array>x) or wy < 0 and on_gpu(<Array>y):
        dev = _device_operand("where", c if on_gpu(c) or c.ndim else None, x, y)
        if not on_gpu(c) and c.ndim > 0:
            check_same_device("where", dev, c)
    cdef Array a = _operand(x, wx, ct)
    cdef Array b = _operand(y, wy, ct)
    if is_complex_num(ct):
        return _cx().where(c, a, b)
    if is_half_num(ct):             # a byte mover: the 2-byte floats move as their bits
        return where(c, a.view(dtype_of(UINT16)), b.view(dtype_of(UINT16))).view(dtype_of(ct))
    cdef int nd = _broadcast(c, a, b, shape)
    cdef Array o = new_array_on(nd, shape, ct, dev)
    if dev is not None:
        gpu_backend().elementwise(WHERE, W_WHERE, ct, o, [c, a, b])
        return o
    _run(o, c, a, b, nd, shape, K.where[ct], 0)
    return o


# -- reductions --------------------------------------------------------------------------------

cdef tuple _REDUCE_NAMES = tuple(row.ufunc for row in _REDUCE_ROWS)   # for error messages


cdef int _reduced_axes(object axis, int ndim, bint* reduced) except -1:
    """Mark the dims `axis` names (None: all); return how many. AxisError / ValueError."""
    cdef int d, n = 0
    for d in range(ndim):
        reduced[d] = axis is None
    if axis is None:
        return ndim
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    for ax in axes:
        d = normalize_axis(ax, ndim)
        if reduced[d]:
            raise ValueError(f"duplicate value in 'axis': {axis}")
        reduced[d] = True
    for d in range(ndim):
        n += reduced[d]
    return n


cdef int _fill_identity(Array o, int op) except -1:
    """Set every element of the contiguous array o to the identity the op table gives op (ZERO,
    ONE, or the LOWEST/HIGHEST value of o's type: -inf/+inf for floats)."""
    cdef Py_ssize_t i, n = o.size_c()
    cdef int num = o.dtype_num, ident = _IDENTITY[op]
    if ident == ZERO:
        memset(o.data, 0, n * o.itemsize)
        return 0
    if num != FLOAT32 and num != FLOAT64 and num != INT64 and num != INT32 and num != BOOL:
        copy_into(o, as_array(_int_identity(num, ident), num))
        return 0
    for i in range(n):
        if num == FLOAT32:
            (<float*>o.data)[i] = 1 if ident == ONE else (-INFINITY if ident == LOWEST else INFINITY)
        elif num == FLOAT64:
            (<double*>o.data)[i] = 1 if ident == ONE else (-INFINITY if ident == LOWEST else INFINITY)
        elif num == INT64:
            (<int64_t*>o.data)[i] = 1 if ident == ONE else (INT64_MIN if ident == LOWEST else INT64_MAX)
        elif num == INT32:
            (<int32_t*>o.data)[i] = 1 if ident == ONE else (INT32_MIN if ident == LOWEST else INT32_MAX)
        else:
            (<bool_t*>o.data)[i] = 0 if ident == LOWEST else 1
    return 0


cdef object _int_identity(int num, int ident):
    """The identity `ident` (ONE, LOWEST or HIGHEST) of integer type num as a Python int."""
    cdef object bits = 8 * itemsize_of(num)         # (Python ints: 2**64 - 1 is exact)
    if ident == ONE:
        return 1
    if is_unsigned_num(num):
        return 0 if ident == LOWEST else (1 << bits) - 1
    return -(1 << (bits - 1)) if ident == LOWEST else (1 << (bits - 1)) - 1


# A reduction into another dtype (sum of bools into int64, sum(dtype="float64") of ints, ...)
# casts CAST_BLOCK input elements at a time into a buffer on the stack and folds that with the
# result type's loop: no cast copy of the whole input (8x its size for bools).
cdef enum:
    CAST_BLOCK = 4096

ctypedef struct CastReduce:
    loop1d_t cast           # input type -> result type
    loop1d_t reduce         # the result type's reduce loop
    Py_ssize_t itemsize     # of the result type


cdef void _cast_reduce_loop(char** data, const Py_ssize_t* steps, Py_ssize_t n, void* aux,
                            void* aux2) noexcept nogil:
    """A reduce loop (data[0] the output, step 0 when folding; data[1] the input) reading the
    input type and folding in the result type; aux is a CastReduce."""
    cdef CastReduce* cr = <CastReduce*>aux
    cdef double buf[CAST_BLOCK]           # 8-byte aligned: CAST_BLOCK elements of any type
    cdef char* cdata[2]
    cdef char* rdata[2]
    cdef Py_ssize_t csteps[2]
    cdef Py_ssize_t rsteps[2]
    cdef Py_ssize_t m
    cdata[0] = <char*>buf
    cdata[1] = data[1]
    csteps[0] = cr.itemsize
    csteps[1] = steps[1]
    rdata[0] = data[0]
    rdata[1] = <char*>buf
    rsteps[0] = steps[0]
    rsteps[1] = cr.itemsize
    while n > 0:
        m = n if n < CAST_BLOCK else CAST_BLOCK
        cr.cast(cdata, csteps, m, NULL, NULL)
        cr.reduce(rdata, rsteps, m, NULL, NULL)
        cdata[1] += m * steps[1]
        rdata[0] += m * steps[0]
        n -= m


cdef Array _reduce_into(Array a, int op, bint* reduced, int ct):
    """Reduce a over the marked dims in dtype ct (each element cast to ct as it is read); the
    result, of dtype ct, keeps every dim (size 1 where reduced). Parallel: threads split the
    outermost walk dim; when that dim is reduced, each thread folds into its own partial result
    and the partials are combined."""
    cdef Py_ssize_t oshape[MAXDIMS]
    cdef Py_ssize_t ostr[MAXDIMS]
    cdef int d, nd = a.ndim
    if on_gpu(a):
        return gpu_backend().reduce(a, op, [bool(reduced[d]) for d in range(nd)], None, ct)
    for d in range(nd):
        oshape[d] = 1 if reduced[d] else a.shape_[d]
    cdef Array o = new_array(nd, oshape, ct)
    _fill_identity(o, op)
    if a.size_c() == 0:
        return o
    cdef CastReduce cr
    cdef loop1d_t fn = K.reduce[op][ct]
    cdef void* aux = NULL
    if a.dtype_num != ct:
        cr.cast = cast_loop_for(ct, a.dtype_num)
        cr.reduce = fn
        cr.itemsize = itemsize_of(ct)
        fn = _cast_reduce_loop
        aux = &cr
    # the output seen at the input's shape: stride 0 along reduced dims
    cdef Array ov = make_view(o, nd, a.shape_, o.strides_, 0)
    for d in range(nd):
        if reduced[d]:
            ov.strides_[d] = 0
    cdef int split = _split_dim(a) if a.size_c() >= PARALLEL_MIN and max_threads() > 1 else -1
    # rows of a C-contiguous array folded over the last dim (at least two rows: one row is
    # split among the threads by _parallel_reduce)
    if split >= 0 and reduced[nd - 1] and a.c_contiguous() and a.shape_[nd - 1] > 1 and \
            a.size_c() // a.shape_[nd - 1] >= 2:
        for d in range(nd - 1):
            if reduced[d] and a.shape_[d] > 1:
                break
        else:
            _reduce_rows(o, a, fn, aux)
            return o
    if split < 0:
        _run(ov, a, None, None, nd, a.shape_, fn, 1, PARALLEL_MIN, aux)
        return o
    return _parallel_reduce(o, ov, a, op, split, reduced[split], fn, aux)


cdef int _reduce_rows(Array o, Array a, loop1d_t fn, void* aux) except -1:
    """o[i] = fold of row i of a (C-contiguous, reduced over its last dim only; o contiguous and
    filled with the identity), the rows shared out among the threads: what _parallel_reduce
    does for this layout (the same loop over each whole row, so the same results), without a
    view and a walk per thread."""
    cdef Py_ssize_t cols = a.shape_[a.ndim - 1]
    cdef Py_ssize_t rows = a.size_c() // cols
    cdef int nt = max_threads(), c
    cdef double start
    if nt > rows:
        nt = <int>rows
    with nogil:
        start = region_enter(nt)
        for c in prange(nt, num_threads=nt, schedule="static"):
            thread_seen(threadid())
            _fold_rows(fn, aux, o.data, a.data, rows * c // nt, rows * (c + 1) // nt, cols,
                       a.itemsize, o.itemsize)
        region_exit(start, nt)
    return 0


cdef void _fold_rows(loop1d_t fn, void* aux, char* out, char* src, Py_ssize_t r0, Py_ssize_t r1,
                     Py_ssize_t cols, Py_ssize_t isz, Py_ssize_t osz) noexcept nogil:
    """Rows [r0, r1) of _reduce_rows."""
    cdef char* data[2]
    cdef Py_ssize_t steps[2]
    cdef Py_ssize_t i
    steps[0] = 0
    steps[1] = isz
    for i in range(r0, r1):
        data[0] = out + i * osz
        data[1] = src + i * cols * isz
        fn(data, steps, cols, aux, NULL)


cdef int _split_dim(Array a) noexcept:
    """The dim with the largest |stride| and extent > 1 (the outermost of the walk)."""
    cdef int d, best = -1
    cdef Py_ssize_t s, bs = -1
    for d in range(a.ndim):
        s = a.strides_[d] if a.strides_[d] >= 0 else -a.strides_[d]
        if a.shape_[d] > 1 and s > bs:
            bs = s
            best = d
    return best


cdef Array _parallel_reduce(Array o, Array ov, Array a, int op, int split, bint split_reduced,
                            loop1d_t fn, void* aux):
    cdef int nt = max_threads(), t, d, nd = a.ndim
    cdef Py_ssize_t n = a.shape_[split], lo, hi
    if nt > n:
        nt = <int>n
    parts = []
    chunks = []
    cdef Array part, pv, av
    cdef Py_ssize_t shape[MAXDIMS]
    for t in range(nt):
        lo = n * t // nt
        hi = n * (t + 1) // nt
        for d in range(nd):
            shape[d] = a.shape_[d]
        shape[split] = hi - lo
        av = make_view(a, nd, shape, a.strides_, a.offset + lo * a.strides_[split])
        if split_reduced:
            part = o if t == 0 else o.copy()
            if t > 0:
                _fill_identity(part, op)
            pv = make_view(part, nd, shape, ov.strides_, part.offset)
            parts.append(part)
        else:
            pv = make_view(o, nd, shape, ov.strides_, o.offset + lo * ov.strides_[split])
        chunks.append((pv, av))
    _run_chunks(chunks, nd, fn, aux)
    if split_reduced:
        for t in range(1, nt):
            _combine(o, <Array>parts[t], op)
    return o


cdef int _run_chunks(list chunks, int nd, loop1d_t fn, void* aux) except -1:
    """Run one serial reduction walk per chunk (the reduce loop fn, given aux), the chunks on
    parallel threads."""
    cdef int nt = len(chunks), t, d
    cdef double start
    cdef NdLoop* its = <NdLoop*>PyMem_Malloc(nt * sizeof(NdLoop))
    cdef char* data[2]
    cdef Py_ssize_t strides[2][MAXDIMS]
    cdef Array pv, av
    if its == NULL:
        raise MemoryError()
    try:
        for t in range(nt):
            pv = chunks[t][0]
            av = chunks[t][1]
            data[0] = pv.data
            data[1] = av.data
            for d in range(nd):
                strides[0][d] = pv.strides_[d] * pv.itemsize
                strides[1][d] = av.strides_[d] * av.itemsize
            prepare_loop_by(&its[t], 2, nd, av.shape_, data, strides, 1)
        with nogil:
            start = region_enter(nt)
            for t in prange(nt, num_threads=nt, schedule="static"):
                thread_seen(threadid())
                run_loop(&its[t], fn, aux, NULL, 1 << 62)
            region_exit(start, nt)
    finally:
        PyMem_Free(its)
    return 0


cdef void _combine(Array o, Array part, int op) except *:
    _run(o, o, part, None, o.ndim, o.shape_,
         K.binary[(B_ADD, B_MUL, B_MAX, B_MIN)[op]][o.dtype_num], 0)


cdef object _shape_result(Array r, Array a, bint* reduced, bint keepdims):
    """Drop the reduced dims of r (unless keepdims)."""
    cdef Py_ssize_t shape[MAXDIMS]
    cdef Py_ssize_t strides[MAXDIMS]
    cdef int d, n = 0
    if keepdims:
        return r
    for d in range(a.ndim):
        if not reduced[d]:
            shape[n] = r.shape_[d]
            strides[n] = r.strides_[d]
            n += 1
    return make_view(r, n, shape, strides, r.offset)


cdef Py_ssize_t _reduced_count(Array a, bint* reduced) noexcept:
    """How many elements each result of reducing a over the marked dims combines."""
    cdef Py_ssize_t count = 1
    cdef int d
    for d in range(a.ndim):
        if reduced[d]:
            count *= a.shape_[d]
    return count


cdef bint _zero_d_axis(Array a, object axis) except -1:
    """True for an integer axis 0 or -1 on a 0-d array: NumPy's ufunc reductions and
    argmax/argmin accept those (a legacy rule) and reduce over nothing, as axis=None does."""
    if a.ndim != 0 or axis is None or isinstance(axis, (tuple, list, bool)) \
            or not hasattr(axis, "__index__"):
        return False
    return operator.index(axis) in (0, -1)


cdef object _reduce(int op, object x, object axis, object dtype, object out, bint keepdims,
                    bint empty_ok=False):
    """Reduce x with op over axis. max/min of nothing raise ValueError (they have no identity)
    unless empty_ok: any/all give their identity there."""
    cdef Array a = x if type(x) is Array else as_array(x, -1)
    cdef bint reduced[MAXDIMS]
    if _zero_d_axis(a, axis):
        axis = None
    _reduced_axes(axis, a.ndim, reduced)
    cdef Py_ssize_t count = _reduced_count(a, reduced)
    cdef int ct = a.dtype_num
    if dtype is not None:
        ct = parse_dtype_num(dtype, ct)
    elif op == R_SUM or op == R_PROD:
        if ct == BOOL or ct == INT8 or ct == INT16 or ct == INT32:
            ct = INT64        # NumPy 2 sums small ints in the default int (uint64 if unsigned)
        elif ct == UINT8 or ct == UINT16 or ct == UINT32:
            ct = UINT64
    if (op == R_MAX or op == R_MIN) and count == 0 and not empty_ok:
        raise ValueError(f"zero-size array to reduction operation {_REDUCE_NAMES[op]} which has "
                         f"no identity")
    if is_complex_num(a.dtype_num) and not is_complex_num(ct):
        a = _operand(a, -1, ct)         # dtype= real: NumPy casts (drops the imaginary part)
    if is_complex_num(ct):
        result = _cx().reduce(("sum", "prod", "max", "min")[op], _operand(a, -1, ct),
                              tuple([d for d in range(a.ndim) if reduced[d]]), keepdims)
        return result if out is None else _finish_into(result, out, _REDUCE_NAMES[op])
    cdef Array r
    if is_half_num(ct):             # accumulated in float32, rounded back once
        result = narrow(_reduce(op, widen(a), axis, dtype_of(FLOAT32), None, keepdims, empty_ok),
                        dtype_of(ct))
    else:
        if ct != a.dtype_num and cast_loop_for(ct, a.dtype_num) == NULL:
            raise TypeError(f"{_REDUCE_NAMES[op]}: cannot accumulate {dtype_of(a.dtype_num)} in "
                            f"{dtype_of(ct)} (no conversion loop)")
        r = _reduce_into(a, op, reduced, ct)
        result = _shape_result(r, a, reduced, keepdims)
    if out is not None:
        o = _output(out, (<Array>result).ndim, (<Array>result).shape_, ct, _REDUCE_NAMES[op],
                    False, a if on_gpu(a) else None)
        copy_into(o, result)
        return out
    return result


cdef Py_ssize_t _nonreduced_size(Array a, bint* reduced) noexcept:
    cdef Py_ssize_t n = 1
    cdef int d
    for d in range(a.ndim):
        if not reduced[d]:
            n *= a.shape_[d]
    return n


# -- public functions (NumPy names and arguments) ----------------------------------------------

cdef object _unary_function(object row):
    """The public function of a UNARY or PREDICATE row: f(x, out=None)."""
    cdef int kind = row.kind, code = row.code

    def f(x, out=None):
        return unary(kind, code, x, out)
    return _named(f, row)


cdef object _binary_function(object row):
    """The public function of a BINARY or COMPARE row: f(x1, x2, out=None)."""
    cdef int kind = row.kind, code = row.code

    def f(x1, x2, out=None):
        return binary(kind, code, x1, x2, out)
    return _named(f, row)


cdef object _named(object f, object row):
    f.__name__ = f.__qualname__ = row.name
    f.__module__ = "carray"
    f.__doc__ = row.doc
    return f


cdef list _elementwise_names():
    """Make a public function of every elementwise row (and its aliases); return their names."""
    names = []
    for row in _UNARY_ROWS + _PREDICATE_ROWS:
        fn = _unary_function(row)
        for name in (row.name,) + row.aliases:
            globals()[name] = fn
            names.append(name)
    for row in _BINARY_ROWS + _COMPARE_ROWS:
        fn = _binary_function(row)
        for name in (row.name,) + row.aliases:
            globals()[name] = fn
            names.append(name)
    return names


ELEMENTWISE = tuple(_elementwise_names())

# the public names: the elementwise functions made from the op table, then the front ends
# written out below (where, clip, the reductions and their NumPy aliases, argmax/argmin)
__all__ = list(ELEMENTWISE) + ["where", "clip", "sum", "prod", "max", "min", "amax", "amin",
                               "mean", "var", "std", "any", "all", "argmax", "argmin"]


def clip(a, a_min=None, a_max=None, out=None):
    """a limited to [a_min, a_max] elementwise: minimum(maximum(a, a_min), a_max) (either bound
    may be None, not both; NaN stays NaN). ValueError when both are None."""
    if a_min is None and a_max is None:
        raise ValueError("One of max or min must be given")
    r = a if a_min is None else binary(BINARY, B_MAX, a, a_min, None)
    if a_max is not None:
        r = binary(BINARY, B_MIN, r, a_max, None)
    return r if out is None else _finish_into(r, out, "clip")


def sum(a, axis=None, dtype=None, out=None, keepdims=False):
    """Sum over `axis` (int, tuple or None); pairwise summation for floats.
    bool and int32 sum to int64, as NumPy."""
    return _reduce(R_SUM, a, axis, dtype, out, keepdims)


def prod(a, axis=None, dtype=None, out=None, keepdims=False):
    """Product over `axis` (int, tuple or None)."""
    return _reduce(R_PROD, a, axis, dtype, out, keepdims)


def max(a, axis=None, out=None, keepdims=False):
    """Largest element over `axis`; NaN if any is NaN; ValueError for an empty reduction."""
    return _reduce(R_MAX, a, axis, None, out, keepdims)


def min(a, axis=None, out=None, keepdims=False):
    """Smallest element over `axis`; NaN if any is NaN; ValueError for an empty reduction."""
    return _reduce(R_MIN, a, axis, None, out, keepdims)


amax = max
amin = min


def mean(a, axis=None, dtype=None, out=None, keepdims=False):
    """Arithmetic mean over `axis`; ints and bools average in float64, float32 stays float32.
    The mean of nothing is NaN. An integer dtype= truncates the mean to it, as NumPy."""
    cdef Array x = as_array(a, -1)
    cdef int ct = parse_dtype_num(dtype, x.dtype_num if _kind_rank(x.dtype_num) >= 2 else FLOAT64)
    if is_half_num(ct):             # in float32, rounded back once (NumPy's float16 mean)
        result = narrow(mean(widen(x), axis, dtype_of(FLOAT32), None, keepdims), dtype_of(ct))
        return result if out is None else _finish_into(result, out, "mean", False)
    cdef bint reduced[MAXDIMS]
    _reduced_axes(axis, x.ndim, reduced)
    cdef Py_ssize_t count = _reduced_count(x, reduced)
    total = _reduce(R_SUM, x, axis, dtype_of(ct), None, keepdims)
    n = float(count) if count else float("nan")
    if _kind_rank(ct) < 2:
        # an integer or bool dtype=: NumPy divides in float64, then casts (truncates) to it
        result = (<Array>binary(BINARY, B_DIV, total, as_array(n, FLOAT64), None)).astype(dtype_of(ct))
    else:
        result = binary(BINARY, B_DIV, total, n, None)
    return result if out is None else _finish_into(result, out, "mean", False)


cdef object _finish_into(object result, object out, str name, bint same_kind=True):
    """Copy result into `out` and return out (cast unsafely unless same_kind: NumPy's mean
    and var write any dtype of out, as reductions do)."""
    cdef Array r = <Array>result
    o = _output(out, r.ndim, r.shape_, r.dtype_num, name, same_kind, r if on_gpu(r) else None)
    copy_into(o, r)
    return out


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Variance over `axis`: mean(|x - mean(x)|**2) * n / (n - ddof), two passes (as NumPy);
    inf (NaN where all deviations are 0) when ddof >= n. Complex x: the (real) sum of the
    variances of the real and imaginary parts, as NumPy."""
    cdef Array x = as_array(a, -1)
    if is_complex_num(x.dtype_num):
        result = binary(BINARY, B_ADD, var(x.real, axis, None, None, ddof, keepdims),
                        var(x.imag, axis, None, None, ddof, keepdims), None)
        return result if out is None else _finish_into(result, out, "var", False)
    cdef int ct = parse_dtype_num(dtype, x.dtype_num if _kind_rank(x.dtype_num) == 2 else FLOAT64)
    if is_half_num(ct):             # in float32, rounded back once
        result = narrow(var(widen(x), axis, dtype_of(FLOAT32), None, ddof, keepdims),
                        dtype_of(ct))
        return result if out is None else _finish_into(result, out, "var", False)
    cdef bint reduced[MAXDIMS]
    _reduced_axes(axis, x.ndim, reduced)
    cdef Py_ssize_t count = _reduced_count(x, reduced)
    x = _operand(x, -1, ct)
    centred = binary(BINARY, B_SUB, x, mean(x, axis, None, None, True), None)
    total = _reduce(R_SUM, binary(BINARY, B_MUL, centred, centred, None), axis, None, None, keepdims)
    # NumPy divides by max(n - ddof, 0): inf (or NaN for 0 / 0) when ddof >= n
    dof = count - ddof
    result = binary(BINARY, B_DIV, total, float(dof) if dof > 0 else 0.0, None)
    return result if out is None else _finish_into(result, out, "var", False)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Standard deviation over `axis`: sqrt(var(a, axis, ddof=ddof))."""
    result = unary(UNARY, U_SQRT, var(a, axis, dtype, None, ddof, keepdims), None)
    return result if out is None else _finish_into(result, out, "std")


def any(a, axis=None, out=None, keepdims=False):
    """True where any element over `axis` is nonzero (False for nothing)."""
    return _reduce(R_MAX, as_array(a, BOOL), axis, None, out, keepdims, True)


def all(a, axis=None, out=None, keepdims=False):
    """True where every element over `axis` is nonzero (True for nothing)."""
    return _reduce(R_MIN, as_array(a, BOOL), axis, None, out, keepdims, True)


# -- argmax / argmin ----------------------------------------------------------------------------

cdef void _arg_rows(num_t* x, Py_ssize_t rows, Py_ssize_t n, int64_t* out,
                    bint want_max) noexcept nogil:
    """For each contiguous row of n values, the index of its max (or min); the first one on
    ties; the first NaN when there is one (NaN counts as the extreme, as NumPy)."""
    cdef Py_ssize_t r
    if num_t is float or num_t is double:
        for r in range(rows):
            if num_t is float:
                out[r] = carray_row_maxf_arg(x, n) if want_max else carray_row_minf_arg(x, n)
            else:
                out[r] = carray_row_maxd_arg(x, n) if want_max else carray_row_mind_arg(x, n)
            x += n
        return
    else:
        _arg_rows_scalar(x, rows, n, out, want_max)


cdef void _arg_rows_scalar(num_t* x, Py_ssize_t rows, Py_ssize_t n, int64_t* out,
                           bint want_max) noexcept nogil:
    """_arg_rows for integer and bool rows."""
    cdef Py_ssize_t r, i, best
    cdef num_t v, bv
    for r in range(rows):
        best = 0
        bv = x[0]
        if not (bv != bv):
            for i in range(1, n):
                v = x[i]
                if v != v:
                    best = i
                    break
                if (want_max and v > bv) or (not want_max and v < bv):
                    bv = v
                    best = i
        out[r] = best
        x += n


cdef object _arg(object a, object axis, object out, bint keepdims, bint want_max):
    cdef Array x = as_array(a, -1)
    if is_half_num(x.dtype_num):                # the same order in float32
        x = widen(x)
    cdef str name = "argmax" if want_max else "argmin"
    cdef int ax, d
    cdef Array rows
    if is_complex_num(x.dtype_num):
        found = _cx().arg(x, axis, keepdims, want_max)
        return found if out is None else _finish_into(found, out, name)
    if _zero_d_axis(x, axis):
        axis = None
    if axis is None:
        rows = x.reshape(-1) if x.ndim != 1 else x
        ax = 0
    else:
        ax = normalize_axis(axis, x.ndim)
        # the reduced axis moved last; the others keep their order
        rows = x.transpose([d for d in range(x.ndim) if d != ax] + [ax])
    cdef Py_ssize_t n = rows.shape_[rows.ndim - 1] if rows.ndim else 1
    if n == 0:
        raise ValueError(f"attempt to get {name} of an empty sequence")
    cdef Array res
    if on_gpu(rows):
        if rows.ndim == 0:
            rows = rows.reshape(1)
        res = gpu_backend().arg(rows, want_max)
        return _arg_finish(res, x, axis, ax, out, keepdims, name)
    if not rows.c_contiguous():
        rows = rows.copy()
    cdef Py_ssize_t nrows = rows.size_c() // n
    res = new_array(rows.ndim - 1 if rows.ndim else 0, rows.shape_, INT64)
    cdef int num = rows.dtype_num
    with nogil:
        if num == FLOAT32:
            _arg_rows(<float*>rows.data, nrows, n, <int64_t*>res.data, want_max)
        elif num == FLOAT64:
            _arg_rows(<double*>rows.data, nrows, n, <int64_t*>res.data, want_max)
        elif num == INT64:
            _arg_rows(<int64_t*>rows.data, nrows, n, <int64_t*>res.data, want_max)
        elif num == INT32:
            _arg_rows(<int32_t*>rows.data, nrows, n, <int64_t*>res.data, want_max)
        elif num == INT8:
            _arg_rows(<int8_t*>rows.data, nrows, n, <int64_t*>res.data, want_max)
        elif num == INT16:
            _arg_rows(<int16_t*>rows.data, nrows, n, <int64_t*>res.data, want_max)
        elif num == UINT8:
            _arg_rows(<u8_t*>rows.data, nrows, n, <int64_t*>res.data, want_max)
        elif num == UINT16:
            _arg_rows(<uint16_t*>rows.data, nrows, n, <int64_t*>res.data, want_max)
        elif num == UINT32:
            _arg_rows(<uint32_t*>rows.data, nrows, n, <int64_t*>res.data, want_max)
        elif num == UINT64:
            _arg_rows(<uint64_t*>rows.data, nrows, n, <int64_t*>res.data, want_max)
        else:
            _arg_rows(<bool_t*>rows.data, nrows, n, <int64_t*>res.data, want_max)
    return _arg_finish(res, x, axis, ax, out, keepdims, name)


cdef object _arg_finish(Array res, Array x, object axis, int ax, object out, bint keepdims,
                        str name):
    cdef int d
    if keepdims:
        if axis is None:
            res = res.reshape((1,) * x.ndim)
        else:
            res = res.reshape(tuple(1 if d == ax else x.shape_[d] for d in range(x.ndim)))
    return res if out is None else _finish_into(res, out, name)


def argmax(a, axis=None, out=None, keepdims=False):
    """Index of the largest element (flat when axis is None); the first on ties, the first NaN
    if any. ValueError for an empty sequence."""
    return _arg(a, axis, out, keepdims, True)


def argmin(a, axis=None, out=None, keepdims=False):
    """Index of the smallest element (flat when axis is None); the first on ties, the first NaN
    if any. ValueError for an empty sequence."""
    return _arg(a, axis, out, keepdims, False)


from carray.ops._matmul import matmul       # Array.__matmul__ calls this module's matmul

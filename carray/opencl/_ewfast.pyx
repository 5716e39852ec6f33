"""The elementwise launch that repeats (what every small op pays): run() builds the plan key
from the Arrays' fields, finds the plan that _elementwise made the first time, and launches it
through carray.opencl._clcall's Plan.launch, all in C. First launches of a key (and operands
that read another view of the output's buffer) go to _elementwise._run_planned, which keeps the
plans in _elementwise._plans.

A plan key (bytes) is the op, its compute type and each operand's layout: type number, offset,
shape and strides for a device array; the type number alone for a scalar (a host 0-d array,
passed by value). The plan (an EwPlan) holds the kernel, its packed layout arguments, the sizes
and where each scalar operand goes; only the buffers and the scalars' values change per launch.
"""

from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.dict cimport PyDict_GetItem
from cpython.object cimport PyObject
from libc.stdint cimport int64_t, uintptr_t

from carray.core._array cimport Array, same_dims
from carray.core._storage cimport Storage
from carray.core._strided cimport MAXDIMS
from carray.opencl._clcall cimport LaunchLock, Plan, quiet_done, quiet_turn

from carray.opencl import _launch
from carray.opencl._types import BFLOAT16, BOOL, FLOAT16

cdef enum:
    MAXIN = 3                               # the most inputs of an elementwise op (where)
    KEYLEN = 4 + (MAXIN + 1) * (3 + 2 * MAXDIMS)

cdef int _BOOL = BOOL
cdef int _FLOAT16 = FLOAT16
cdef int _BFLOAT16 = BFLOAT16

cdef LaunchLock _lock = _launch.LAUNCH_LOCK
cdef object _elementwise = None     # carray.opencl._elementwise (it imports this module)
cdef dict _ew_globals = None        # its globals (the plans, _plans, are looked up per call)


cdef class EwPlan(Plan):
    """A Plan of one elementwise op on one layout, and its scalar operands' argument indices
    and types: EwPlan(queue, knl, consts, gsize, lsize, scalars), scalars ((argument index,
    carray type number), ...) in operand order."""
    cdef readonly tuple scalars
    cdef int nscalar
    cdef unsigned int scalar_index[MAXIN]
    cdef int scalar_num[MAXIN]

    def __init__(self, queue, knl, tuple consts, tuple gsize, lsize, tuple scalars):
        cdef int i
        Plan.__init__(self, queue, knl, consts, gsize, lsize)
        if len(scalars) > MAXIN:
            raise ValueError(f"EwPlan: at most {MAXIN} scalars, got {len(scalars)}")
        self.scalars = scalars
        self.nscalar = len(scalars)
        for i in range(self.nscalar):
            self.scalar_index[i] = scalars[i][0]
            self.scalar_num[i] = scalars[i][1]


cdef inline int _put_layout(int64_t* key, int n, Array a) noexcept:
    """Write a device array's layout to key[n:]; return the next free index."""
    cdef int d
    key[n] = a.ndim
    key[n + 1] = a.dtype_num
    key[n + 2] = a.offset
    n += 3
    for d in range(a.ndim):
        key[n] = a.shape_[d]
        key[n + 1] = a.strides_[d]
        n += 2
    return n


cdef inline uintptr_t _mem(Storage s) except? 0:
    """The cl_mem of a device storage's buffer (its pyopencl int_ptr, read once)."""
    if s.handle_ptr == 0:
        s.handle_ptr = s.handle.int_ptr
    return s.handle_ptr


cdef inline bint _same_view(Array a, Array b) noexcept:
    """Whether a and b have the same offset, type, shape and strides."""
    return a.ndim == b.ndim and a.dtype_num == b.dtype_num and a.offset == b.offset and \
        same_dims(a.ndim, a.shape_, b.shape_) and same_dims(a.ndim, a.strides_, b.strides_)


cdef object _slow():
    """carray.opencl._elementwise (imported on first use: it imports this module)."""
    global _elementwise, _ew_globals
    if _elementwise is None:
        from carray.opencl import _elementwise as m
        _ew_globals = m.__dict__
        _elementwise = m
    return _elementwise


def run(kind, int code, int t, Array out not None, inputs):
    """out[...] = op(inputs...) elementwise. kind: an op-table Kind (code its op) or
    _elementwise.CAST (a conversion); `out` is a device Array; each input is a device Array
    broadcastable to out's shape or a host 0-d Array (a scalar). t: the compute type. Returns
    out.

    The launch is planned once per key (op, types, layouts): a repeat only gathers the
    buffers and scalar values, sets them and enqueues."""
    cdef int64_t key[KEYLEN]
    cdef uintptr_t mems[MAXIN + 1]
    cdef unsigned int buf_index[MAXIN + 1]
    cdef const void* vals[MAXIN]
    cdef size_t val_sizes[MAXIN]
    cdef unsigned char bools[MAXIN]
    cdef Array x
    cdef EwPlan plan
    cdef PyObject* found
    cdef int n, k, nin, nbuf = 1, nscalar = 0
    cdef long since
    cdef bint converted = False
    if type(inputs) is not list:
        inputs = list(inputs)
    nin = len(<list>inputs)
    if nin > MAXIN or type(kind) is str and kind != "cast":
        return _slow()._run_planned(kind, code, t, out, inputs, None)
    obuf = out.storage.handle
    key[0] = -1 if type(kind) is str else <int64_t>kind     # (Kinds are >= 0; "cast")
    key[1] = code
    key[2] = t
    key[3] = nin
    n = _put_layout(key, 4, out)
    for k in range(nin):
        x = <Array?>(<list>inputs)[k]
        buf = x.storage.handle
        if buf is None:                 # a scalar
            key[n] = -1
            key[n + 1] = x.dtype_num
            n += 2
        elif buf is obuf and not _same_view(x, out):
            # another view of the output's buffer: no plan (see _run_planned); the output
            # itself as an operand is planned (y += b)
            return _slow()._run_planned(kind, code, t, out, inputs, None)
        else:
            n = _put_layout(key, n, x)
    pkey = PyBytes_FromStringAndSize(<char*>key, n * sizeof(int64_t))
    if _ew_globals is None:
        _slow()
    found = PyDict_GetItem(_ew_globals["_plans"], pkey)
    if found is NULL:
        return _slow()._run_planned(kind, code, t, out, inputs, pkey)
    plan = <EwPlan>found
    # the arguments: buffers' cl_mem handles, scalars' values from their host bytes
    mems[0] = _mem(out.storage)
    buf_index[0] = 0
    for k in range(nin):
        x = <Array>(<list>inputs)[k]
        if x.storage.handle is None:
            if plan.scalar_num[nscalar] != x.dtype_num or x.dtype_num == _FLOAT16 or \
                    x.dtype_num == _BFLOAT16:
                converted = True        # (packed by _layout.pack_scalar, in _submit)
            elif x.dtype_num == _BOOL:
                bools[nscalar] = x.data[0] != 0
                vals[nscalar] = &bools[nscalar]
            else:
                vals[nscalar] = x.data
            val_sizes[nscalar] = x.itemsize
            nscalar += 1
        else:
            mems[nbuf] = _mem(x.storage)
            buf_index[nbuf] = k + 1
            nbuf += 1
    # From quiet_turn() to the enqueue no Python code runs and the GIL is held: no other
    # thread can set this kernel's arguments meanwhile, so LAUNCH_LOCK need not be taken
    # unless another thread holds it (in the middle of its own launch)
    if not converted:
        since = quiet_turn()
        if since >= 0 and _lock.free_for_launch() and \
                plan.launch(nbuf, buf_index, mems, nscalar, plan.scalar_index, vals,
                            val_sizes) == 0:
            quiet_done(since)
            return out
    with _lock:
        _submit(plan, out, inputs)
    return out


cdef int _submit(EwPlan plan, Array out, list inputs) except -1:
    """Launch plan through _launch.submit (pyopencl's calls, or its event-less one), as the
    launches of every other op go: the MARK_EVERY-th launch, under a profiler, where the C
    entry points are not bound, or after Plan.launch failed."""
    cdef list bufs = [0, out.storage.handle]
    cdef list consts = list(plan.consts)
    cdef int k, j = 0
    cdef Array x
    for k in range(len(inputs)):
        x = <Array>inputs[k]
        if x.storage.handle is None:
            consts.append(plan.scalar_index[j])
            consts.append(_slow()._layout.pack_scalar(plan.scalar_num[j], x.item()))
            j += 1
        else:
            bufs.append(k + 1)
            bufs.append(x.storage.handle)
    # (_launch.submit looked up per call: tests wrap it)
    _launch.submit(plan.queue, plan.knl, bufs, consts, plan.gsize, plan.lsize)
    return 0

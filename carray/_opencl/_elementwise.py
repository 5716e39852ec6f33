"""Elementwise ops on the device: the op table (one C expression per op and dtype, matching the
CPU loops of carray/_kernels.pxi) and the launcher of the elementwise.cl kernels."""

from carray._opencl import _cache, _layout
from carray._opencl._runtime import runtime

CL = _cache.CL_TYPES
BOOL, INT32, INT64, FLOAT32, FLOAT64 = range(5)

# op kinds, as carray._ufunc names its tables
UNARY, BINARY, COMPARE, PREDICATE, WHERE, CAST = range(6)

_FLOAT_FUNCS = {3: "exp", 4: "log", 5: "log1p", 6: "expm1", 7: "sqrt", 10: "sin", 11: "cos",
                12: "tanh"}


def _unary(code, t):
    T = CL[t]
    f = t >= FLOAT32
    if code in _FLOAT_FUNCS:
        return f"{_FLOAT_FUNCS[code]}(x1)"
    return {
        0: "-x1",
        1: ("fabs(x1)" if f else "x1" if t == BOOL else "(x1 < 0 ? -x1 : x1)"),
        2: (f"carray_sign_{T}(x1)" if f else f"(({T})((x1 > 0) - (x1 < 0)))"),
        8: "x1 * x1",
        9: (f"(({T})1 / x1)" if f else
            f"(x1 == 0 ? ({T})({'LONG_MIN' if t == INT64 else 'INT_MIN'}) : ({T})(1 / x1))"),
        13: "floor(x1)" if f else "x1",
        14: "ceil(x1)" if f else "x1",
        15: f"(x1 <= 0 ? ({T})0 : x1)",
        16: f"carray_sigmoid_{T}(x1)",
        17: "(x1 == 0)" if t == BOOL else "(~x1)",       # invert: ints only (_ufunc checks)
    }[code]


def _binary(code, t):
    T = CL[t]
    f = t >= FLOAT32
    b = t == BOOL
    return {
        0: "(x1 | x2)" if b else "(x1 + x2)",
        1: "(x1 - x2)",
        2: "(x1 & x2)" if b else "(x1 * x2)",
        3: "(x1 / x2)" if f else f"(x2 == 0 ? ({T})0 : ({T})(x1 / x2))",
        4: "pow(x1, x2)" if f else ("(x1 | !x2)" if b else f"(({T})carray_ipow(x1, x2))"),
        5: "NAN_MAX(x1, x2)",
        6: "NAN_MIN(x1, x2)",
        7: f"carray_floordiv_{T}(x1, x2)" if f else f"(({T})carray_floordiv_i(x1, x2))",
        8: f"carray_mod_{T}(x1, x2)" if f else f"(({T})carray_mod_i(x1, x2))",
        9: "(x1 & x2)",          # bitwise and, or, xor: bool and ints only (_ufunc checks)
        10: "(x1 | x2)",
        11: "(x1 ^ x2)",
    }[code]


_COMPARE = ("(x1 == x2)", "(x1 != x2)", "(x1 < x2)", "(x1 <= x2)", "(x1 > x2)", "(x1 >= x2)",
            "((x1 != 0) & (x2 != 0))", "((x1 != 0) | (x2 != 0))")


def _predicate(code, t):
    f = t >= FLOAT32
    return ("(x1 == 0)", "(x1 != x1)" if f else "0", "(x1 - x1 == 0)" if f else "1")[code]


def op_expr(kind, code, t, out_t):
    """The C expression of op (kind, code) on inputs x1, x2, x3 of compute type t."""
    if kind == UNARY:
        return _unary(code, t)
    if kind == BINARY:
        return _binary(code, t)
    if kind == COMPARE:
        return _COMPARE[code]
    if kind == PREDICATE:
        return _predicate(code, t)
    if kind == WHERE:
        return "(x1 ? x2 : x3)"
    return "(x1 != 0)" if out_t == BOOL else "x1"        # CAST


def _source(kind, code, nums, is_arr, rank, vec, expr):
    """Render elementwise.cl for operands of types `nums` (output first)."""
    nin = len(nums) - 1
    params = [f"__global {CL[nums[0]]}* restrict out"]
    args = []
    arr_k = 1
    for k in range(1, nin + 1):
        if is_arr[k]:
            params.append(f"__global const {CL[nums[k]]}* restrict in{k}")
            args.append(f"in{k}[p[{arr_k}]]")
            arr_k += 1
        else:
            params.append(f"const {CL[nums[k]]} s{k}")
            args.append(f"s{k}")
    narr = arr_k
    fargs = ", ".join(f"x{k}" for k in range(1, nin + 1))
    vbody = ""
    if vec > 1:
        lines = []
        vargs = []
        arr_k = 1
        for k in range(1, nin + 1):
            if is_arr[k]:
                vt = f"{CL[nums[k]]}{vec}"
                ptr = f"(__global const {vt}*)(in{k} + L.off[{arr_k}])"
                lines.append(f"        {vt} v{k} = ({ptr})[i];")
                vargs.append(f"v{k}.s{{c}}")
                arr_k += 1
            else:
                vargs.append(f"s{k}")
        ot = f"{CL[nums[0]]}{vec}"
        comps = ", ".join(f"({CL[nums[0]]})(F({', '.join(v.format(c=c) for v in vargs)}))"
                          for c in "0123456789abcdef"[:vec])
        lines.append(f"        ((__global {ot}*)(out + L.off[0]))[i] = ({ot})({comps});")
        vbody = "\n".join(lines)
    return _cache.render("elementwise.cl", narr=narr, rank=rank, params=", ".join(params),
                         args=", ".join(args), fdef=f"#define F({fargs}) ({expr})",
                         out_t=CL[nums[0]], vec=vec, vbody=vbody)


_plans = _cache.PlanCache()     # launch key (op, types, layouts, offsets) -> _Plan


class _Plan:
    """What a repeated launch of one elementwise op on one layout reuses: the kernel, its packed
    layout arguments, the global and local sizes, and where each scalar operand goes."""
    __slots__ = ("knl", "consts", "gsize", "lsize", "scalars")

    def __init__(self, knl, consts, gsize, lsize, scalars):
        self.knl, self.consts, self.gsize, self.lsize = knl, consts, gsize, lsize
        self.scalars = scalars       # ((argument index, carray type number), ...)


def run(kind, code, t, out, inputs):
    """out[...] = op(inputs...) elementwise. `out` is a device Array; each input is a device
    Array broadcastable to out's shape or a host 0-d Array (a scalar). t: the compute type.

    The launch is planned once per key (op, types, shapes, strides, offsets): a repeat only
    gathers the buffers and scalar values, sets them and enqueues (the G3 path)."""
    oc = out._cl()
    obuf = oc[0]
    key = [kind, code, t, oc[1:]]
    bufs = [0, obuf]
    svals = None
    k = 0
    for x in inputs:
        k += 1
        xc = x._cl()
        buf = xc[0]
        if buf is None:
            key.append(xc[2])
            if svals is None:
                svals = []
            svals.append(x.item())
        elif buf is obuf and xc[1:] != oc[1:]:
            key = None      # another view of the output's buffer: no plan (see _run_planned)
            break
        else:               # (the output itself as an operand is planned: y += b)
            key.append(xc[1:])
            bufs.append(k)
            bufs.append(buf)
    if key is not None:
        plan = _plans.get(tuple(key))
        if plan is not None:
            knl = plan.knl
            set_buffers(knl, bufs)
            if svals is None:
                set_bytes(knl, plan.consts)
            else:
                c = list(plan.consts)
                for (i, num), v in zip(plan.scalars, svals):
                    c.append(i)
                    c.append(_layout.pack_scalar(num, v))
                set_bytes(knl, c)
            _enqueue(runtime().queue, knl, plan.gsize, plan.lsize)
            return out
    return _run_planned(kind, code, t, out, inputs, None if key is None else tuple(key))


def _run_planned(kind, code, t, out, inputs, plan_key):
    """run() the first time for plan_key (or every time when it is None): lay the operands
    out, build the kernel, launch it, and keep the plan under plan_key."""
    rt = runtime()
    obuf, ooff, onum, shape, ost = out._cl()
    n = 1
    for s in shape:
        n *= s
    if n == 0:
        return out
    nums = [onum]
    is_arr = [True]
    args = [obuf]
    offs = [ooff]
    ost = _layout.broadcast_strides(shape, shape, ost)     # as the inputs' (0 on size-1 dims)
    strides = [ost]
    for x in inputs:
        buf, off, num, xshape, xst = x._cl()
        if buf is obuf and (off, _layout.broadcast_strides(shape, xshape, xst)) != (ooff, ost):
            x = x.copy()        # another view of the output's buffer: read it all first
            buf, off, num, xshape, xst = x._cl()
            plan_key = None     # the layout is the copy's: a repeat must not reuse it
        nums.append(num)
        if buf is None:
            is_arr.append(False)
            args.append(_layout.pack_scalar(num, x.item()))
        else:
            is_arr.append(True)
            args.append(buf)
            offs.append(off)
            strides.append(_layout.broadcast_strides(shape, xshape, xst))
    cshape, cst = _layout.coalesce(shape, strides)
    idx = _layout.index_type(n, cshape, cst, offs)
    rank = len(cshape)
    flat = rank == 1 and all(s[0] == 1 for s in cst)
    vec = 1
    if flat and n >= 4096 and all(o % 4 == 0 for o in offs):
        vec = 4
    fp64 = FLOAT64 in nums
    key = ("ew", kind, code, t, tuple(nums), tuple(is_arr), idx,
           ("flat", vec) if flat else rank)
    knl = _cache.kernel(key, "ew_flat" if flat else "ew_strided",
                        lambda: _source(kind, code, nums, is_arr, 1 if flat else rank, vec,
                                        op_expr(kind, code, t, onum)), idx, fp64)
    if flat:
        layout = _layout.pack(idx, offs)
        items = n // vec + n % vec
    else:
        flat_st = [s for st in cst for s in st]
        layout = _layout.pack(idx, list(cshape) + flat_st + offs)
        items = n
    launch(knl, items, args + [layout, _layout.pack(idx, [n])])
    if plan_key is not None:
        nin = len(inputs)
        g = rt.max_group
        _plans.put(plan_key, _Plan(knl, (nin + 1, layout, nin + 2, _layout.pack(idx, [n])),
                                   (-(-items // g) * g,), (g,),
                                   tuple((k, nums[k]) for k in range(1, nin + 1)
                                         if not is_arr[k])))
    return out


def _set_generic(knl, pairs):
    for i in range(0, len(pairs), 2):
        knl.set_arg(pairs[i], pairs[i + 1])


# Kernel.set_arg on a bytes value tries other argument kinds first and costs ~6 us a call;
# pyopencl's one-call setters cost ~0.1 us: _set_arg_multi for buffers, _set_arg_buf_multi for
# by-value arguments given as bytes. Both take (index, value, index, value, ...).

def set_buffers(knl, pairs):
    """Set buffer arguments of knl: pairs = [index, buffer, index, buffer, ...]."""
    try:
        knl._set_arg_multi(tuple(pairs))
    except AttributeError:          # a pyopencl without it
        _set_generic(knl, pairs)


def set_bytes(knl, pairs):
    """Set by-value arguments of knl: pairs = [index, bytes, index, bytes, ...]."""
    try:
        knl._set_arg_buf_multi(tuple(pairs))
    except AttributeError:
        _set_generic(knl, pairs)


_cl_enqueue = None


def _enqueue(queue, knl, gsize, lsize):
    """Enqueue knl (its arguments set) through pyopencl._cl directly: no wait list, no keyword
    handling. pyopencl is imported on first use, as everywhere in this package."""
    global _cl_enqueue
    if _cl_enqueue is None:
        from pyopencl._cl import enqueue_nd_range_kernel as _cl_enqueue
    _cl_enqueue(queue, knl, gsize, lsize, None, None, False, False)


def launch(knl, items, args, group=None):
    """Enqueue knl over `items` work items (rounded up to whole work groups); no wait.

    args: buffers and by-value arguments (bytes), in the kernel's order. Every argument is set
    on every launch, buffers in one call and by-value ones in another (both cheap)."""
    rt = runtime()
    g = group or rt.max_group
    bufs = []
    vals = []
    for i, a in enumerate(args):
        if type(a) is bytes:
            vals.append(i)
            vals.append(a)
        else:
            bufs.append(i)
            bufs.append(a)
    if bufs:
        set_buffers(knl, bufs)
    if vals:
        set_bytes(knl, vals)
    _enqueue(rt.queue, knl, (-(-items // g) * g,), (g,))

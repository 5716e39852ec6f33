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


def run(kind, code, t, out, inputs):
    """out[...] = op(inputs...) elementwise. `out` is a device Array; each input is a device
    Array broadcastable to out's shape or a host 0-d Array (a scalar). t: the compute type."""
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
    strides = [ost]
    for x in inputs:
        buf, off, num, xshape, xst = x._cl()
        if buf is obuf and (off, _layout.broadcast_strides(shape, xshape, xst)) != (ooff, ost):
            x = x.copy()        # another view of the output's buffer: read it all first
            buf, off, num, xshape, xst = x._cl()
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
    return out


_last_args = {}      # kernel -> the arguments last set on it (they persist between launches)


def launch(knl, items, args, group=None):
    """Enqueue knl over `items` work items (rounded up to whole work groups); no wait.

    By-value arguments (bytes) equal to the ones the kernel already holds are not set again:
    setting one costs microseconds on some drivers, and a loop repeats the same shapes."""
    rt = runtime()
    g = group or rt.max_group
    prev = _last_args.get(knl)
    if prev is None or len(prev) != len(args):
        knl.set_args(*args)
    else:
        for i, a in enumerate(args):
            if type(a) is not bytes or a != prev[i]:
                knl.set_arg(i, a)
    _last_args[knl] = args
    rt.cl.enqueue_nd_range_kernel(rt.queue, knl, (-(-items // g) * g,), (g,))

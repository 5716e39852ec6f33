"""Elementwise ops on the device: one C expression per op-table row and dtype (matching the CPU
loops of carray/cpu/_kernels.pxi), keyed by the op table's enum members, and the launcher of the
kernels/elementwise.cl kernels."""

from carray.opencl import _cache, _ewfast, _half, _layout, _transpose
from carray.opencl._launch import launch
from carray.opencl._runtime import runtime
from carray.opencl._types import (
    BOOL,
    CL_TYPES,
    FLOAT32,
    FLOAT64,
    FLOATS,
    INT32,
    INT64,
    INTEGERS,
    UINT64,
    UNSIGNED,
)
from carray.ops._optable import BinaryOp as B
from carray.ops._optable import CompareOp as C
from carray.ops._optable import Kind
from carray.ops._optable import PredicateOp as P
from carray.ops._optable import UnaryOp as U

CL = CL_TYPES
CAST = "cast"       # a conversion between dtypes (copies): not an op-table row

# Each expression is a function of (T, the OpenCL type; f, a float type; b, bool; t, the carray
# type number) giving C over the inputs x1, x2 (and x3 for where).
UNARY_EXPR = {
    U.U_NEG: lambda T, f, b, t: "-x1",
    U.U_ABS: lambda T, f, b, t: "fabs(x1)" if f else "x1" if b else "(x1 < 0 ? -x1 : x1)",
    U.U_SIGN: lambda T, f, b, t: f"carray_sign_{T}(x1)" if f else f"(({T})((x1 > 0) - (x1 < 0)))",
    U.U_EXP: lambda T, f, b, t: "exp(x1)",
    U.U_LOG: lambda T, f, b, t: "log(x1)",
    U.U_LOG1P: lambda T, f, b, t: "log1p(x1)",
    U.U_EXPM1: lambda T, f, b, t: "expm1(x1)",
    U.U_SQRT: lambda T, f, b, t: "sqrt(x1)",
    U.U_SQUARE: lambda T, f, b, t: "x1 * x1",
    U.U_RECIP: lambda T, f, b, t: (
        f"(({T})1 / x1)" if f else
        f"(x1 == 0 ? ({T})({'LONG_MIN' if t == INT64 else 'INT_MIN' if t == INT32 else 0}) : "
        f"({T})(1 / x1))"),
    U.U_SIN: lambda T, f, b, t: "sin(x1)",
    U.U_COS: lambda T, f, b, t: "cos(x1)",
    U.U_TANH: lambda T, f, b, t: "tanh(x1)",
    U.U_FLOOR: lambda T, f, b, t: "floor(x1)" if f else "x1",
    U.U_CEIL: lambda T, f, b, t: "ceil(x1)" if f else "x1",
    U.U_RELU: lambda T, f, b, t: f"(x1 <= 0 ? ({T})0 : x1)",
    U.U_SIGMOID: lambda T, f, b, t: f"carray_sigmoid_{T}(x1)",
    U.U_INVERT: lambda T, f, b, t: "(x1 == 0)" if b else "(~x1)",   # ints only (ops checks)
    # float-only (ops casts integers first)
    U.U_ARCSIN: lambda T, f, b, t: "asin(x1)",
    U.U_ARCCOS: lambda T, f, b, t: "acos(x1)",
    U.U_ARCTAN: lambda T, f, b, t: "atan(x1)",
    U.U_SINH: lambda T, f, b, t: "sinh(x1)",
    U.U_COSH: lambda T, f, b, t: "cosh(x1)",
    U.U_ARCSINH: lambda T, f, b, t: "asinh(x1)",
    U.U_ARCCOSH: lambda T, f, b, t: "acosh(x1)",
    U.U_ARCTANH: lambda T, f, b, t: "atanh(x1)",
    U.U_ERF: lambda T, f, b, t: "carray_erf_float(x1)" if t == FLOAT32 else "erf(x1)",
    U.U_ERFINV: lambda T, f, b, t: f"carray_erfinv_{T}(x1)",
}

BINARY_EXPR = {
    B.B_ADD: lambda T, f, b, t: "(x1 | x2)" if b else "(x1 + x2)",
    B.B_SUB: lambda T, f, b, t: "(x1 - x2)",
    B.B_MUL: lambda T, f, b, t: "(x1 & x2)" if b else "(x1 * x2)",
    B.B_DIV: lambda T, f, b, t: "(x1 / x2)" if f else f"(x2 == 0 ? ({T})0 : ({T})(x1 / x2))",
    B.B_POW: lambda T, f, b, t: (
        "pow(x1, x2)" if f else ("(x1 | !x2)" if b else f"(({T})carray_ipow(x1, x2))")),
    B.B_MAX: lambda T, f, b, t: "NAN_MAX(x1, x2)",
    B.B_MIN: lambda T, f, b, t: "NAN_MIN(x1, x2)",
    B.B_FLOORDIV: lambda T, f, b, t: (
        f"carray_floordiv_{T}(x1, x2)" if f else f"(x2 == 0 ? ({T})0 : ({T})(x1 / x2))"
        if t in UNSIGNED else f"(({T})carray_floordiv_i(x1, x2))"),
    B.B_MOD: lambda T, f, b, t: (
        f"carray_mod_{T}(x1, x2)" if f else f"(x2 == 0 ? ({T})0 : ({T})(x1 % x2))"
        if t in UNSIGNED else f"(({T})carray_mod_i(x1, x2))"),
    B.B_AND: lambda T, f, b, t: "(x1 & x2)",       # bitwise: bool and ints only (ops checks)
    B.B_OR: lambda T, f, b, t: "(x1 | x2)",
    B.B_XOR: lambda T, f, b, t: "(x1 ^ x2)",
    B.B_ARCTAN2: lambda T, f, b, t: "atan2(x1, x2)",     # float-only (ops casts integers)
    B.B_HYPOT: lambda T, f, b, t: "hypot(x1, x2)",
    B.B_FMOD: lambda T, f, b, t: (
        "fmod(x1, x2)" if f else f"(x2 == 0 ? ({T})0 : ({T})(x1 % x2))"
        if t in UNSIGNED else f"(({T})carray_fmod_i(x1, x2))"),
    B.B_LOGADDEXP: lambda T, f, b, t: f"carray_logaddexp_{T}(x1, x2)",
}

COMPARE_EXPR = {
    C.C_EQ: lambda T, f, b, t: "(x1 == x2)",
    C.C_NE: lambda T, f, b, t: "(x1 != x2)",
    C.C_LT: lambda T, f, b, t: "(x1 < x2)",
    C.C_LE: lambda T, f, b, t: "(x1 <= x2)",
    C.C_GT: lambda T, f, b, t: "(x1 > x2)",
    C.C_GE: lambda T, f, b, t: "(x1 >= x2)",
    C.C_AND: lambda T, f, b, t: "((x1 != 0) & (x2 != 0))",
    C.C_OR: lambda T, f, b, t: "((x1 != 0) | (x2 != 0))",
}

PREDICATE_EXPR = {
    P.P_NOT: lambda T, f, b, t: "(x1 == 0)",
    P.P_ISNAN: lambda T, f, b, t: "(x1 != x1)" if f else "0",
    P.P_ISFINITE: lambda T, f, b, t: "(x1 - x1 == 0)" if f else "1",
}

WHERE_EXPR = "(x1 ? x2 : x3)"

EXPRESSIONS = {Kind.UNARY: UNARY_EXPR, Kind.BINARY: BINARY_EXPR, Kind.COMPARE: COMPARE_EXPR,
               Kind.PREDICATE: PREDICATE_EXPR}


def op_expr(kind, code, t, out_t):
    """The C expression of op (kind, code) on inputs x1, x2, x3 of compute type t; KeyError when
    the backend has none (the op table's coverage test looks)."""
    if kind == Kind.WHERE:
        return WHERE_EXPR
    if kind == CAST:
        if out_t == BOOL:
            return "(x1 != 0)"
        if t in FLOATS and out_t in INTEGERS:
            # through a long, as x86 C (NumPy) casts: -1.0 to uint8 is 255; an OpenCL cast of
            # a float out of the target's range is undefined (NVIDIA's saturates: 0)
            if out_t == UINT64:
                return "(x1 < 9223372036854775808.0 ? (ulong)(long)x1 : (ulong)x1)"
            return "(long)x1"
        return "x1"
    return EXPRESSIONS[kind][code](CL[t], t >= FLOAT32, t == BOOL, t)


def _source(kind, code, nums, is_arr, rank, vec, expr):
    """Render elementwise.cl for operands of types `nums` (output first)."""
    nin = len(nums) - 1
    params = [f"__global {CL[nums[0]]}* restrict out"]
    args = []
    arr_k = 1
    for k in range(1, nin + 1):
        if is_arr[k]:
            params.append(f"__global const {CL[nums[k]]}* restrict in{k}")
            args.append(_half.load(nums[k], f"in{k}", f"p[{arr_k}]", nums[0]))
            arr_k += 1
        else:
            params.append(f"const {CL[_half.scalar_num(nums[k])]} s{k}")
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
                         args=", ".join(args),
                         fdef=f"{_half_helpers(nums)}\n#define F({fargs}) ({expr})\n"
                              f"{_half.store_macro(nums[0], nums[1] if nin else nums[0])}",
                         out_t=CL[nums[0]], vec=vec, vbody=vbody)


def _half_helpers(nums):
    """The 2-byte float conversion helpers a kernel of these types needs ('' for none)."""
    if not _half.any_half(nums):
        return ""
    return _half.HELPERS + (_half.H2D if _half.FLOAT64 in nums else "")


_plans = _cache.PlanCache()     # plan key (see carray/opencl/_ewfast.pyx) -> _ewfast.EwPlan

# run: the repeated launch of a planned key, in C (carray/opencl/_ewfast.pyx); _run_planned makes
# the plans it reuses
run = _ewfast.run


def _run_planned(kind, code, t, out, inputs, plan_key):
    """run() the first time for plan_key (or every time when it is None): lay the operands
    out, build the kernel, launch it, and keep the plan (an _ewfast.EwPlan) under plan_key."""
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
            args.append(_layout.pack_scalar(_half.scalar_num(num), x.item()))
        else:
            is_arr.append(True)
            args.append(buf)
            offs.append(off)
            strides.append(_layout.broadcast_strides(shape, xshape, xst))
    cshape, cst = _layout.coalesce(shape, strides)
    if kind == CAST and nums[0] == nums[1] and is_arr[1] and _transpose.fits(cshape, cst) \
            and _transpose.wanted():
        _transpose.run(obuf, args[1], onum, cshape, cst, offs)
        return out
    idx = _layout.index_type(n, cshape, cst, offs)
    rank = len(cshape)
    flat = rank == 1 and all(s[0] == 1 for s in cst)
    vec = 1
    if flat and n >= 4096 and all(o % 4 == 0 for o in offs) and not _half.any_half(nums):
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
        _plans.put(plan_key, _ewfast.EwPlan(
            rt.queue, knl, (nin + 1, layout, nin + 2, _layout.pack(idx, [n])),
            (-(-items // g) * g,), (g,),
            tuple((k, _half.scalar_num(nums[k])) for k in range(1, nin + 1) if not is_arr[k])))
    return out

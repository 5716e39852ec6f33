"""Elementwise ops: arithmetic, comparisons' differentiable cousins (maximum, where, clamp)
and math functions, each with its derivative next to its forward.

The unary math functions whose derivative is one formula are rows of one table (PyTorch's
tools/autograd/derivatives.yaml, as plain Python) at the end of this file: a reader finds exp's
backward in exp's row. Ops that need more (broadcasting binary ops, pow, clamp, where, neg's
bool check) are classes with forward and backward side by side.

Binary ops broadcast; their gradients go back through reduce_grad. Either argument may be a
Python number (it gets no gradient).
"""

import math

import autograd.function as _function
import carray
from autograd._defaults import get_default_dtype, is_floating
from autograd.function import _NO_EDGE, Function, _edge, _refresh_view, _sequence
from autograd.grad_mode import _state
from autograd.ops._util import Builtin, broadcasting, data_of, meta, reduce_grad, wrap
from autograd.tensor import Tensor

__all__ = ["Abs", "Add", "Ceil", "Clamp", "Cos", "Div", "Exp", "Expm1", "Floor", "FloorDivide",
           "Log", "Log1p", "Maximum", "Minimum", "Mul", "Neg", "Pow", "Relu", "Remainder",
           "Sigmoid", "Sign", "Sin", "Sqrt", "Sub", "Tanh", "TruncDivide", "Where"]


# ---------------------------------------------------------------------------------------------
# binary
# ---------------------------------------------------------------------------------------------

def promote_pair(a, b):
    """a and b, tensors cast (differentiably) to the dtype PyTorch gives their result: the
    highest category (bool < int < float) wins, and within it dimensioned tensors outrank 0-d
    ones (so float32 * float64-0d stays float32, int64 + float32 gives float32). Python numbers
    are left to carray (weak scalars, as in PyTorch)."""
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        return a, b
    da, db = a.array.dtype, b.array.dtype
    if da == db:
        return a, b
    ka, kb = _CATEGORY[da.kind], _CATEGORY[db.kind]
    if ka != kb:
        target = da if ka > kb else db
    else:
        pa, pb = a.array.ndim > 0, b.array.ndim > 0
        target = da if pa and not pb else db if pb and not pa else carray.promote_types(da, db)
    return (a if da == target else a.to(target)), (b if db == target else b.to(target))


_CATEGORY = {"b": 0, "i": 1, "u": 1, "f": 2, "V": 2}     # ("V": bfloat16's kind)


class _Binary(Builtin):
    """Base of add, sub, mul, div: `apply` does the bookkeeping of Function.apply inline (these
    ops dominate small-tensor code, so their per-call overhead is kept to the minimum). forward
    only computes on carray data, so it needs no grad-mode switch; it keeps in ctx.a / ctx.b the
    data of the operands (their shape and dtype, for reduce_grad) and saves, with save(), the
    tensors backward reads."""

    @classmethod
    def apply(cls, a, b):
        if _function._tracer is not None:  # autograd.onnx is recording (function.set_tracer)
            return _function._tracer(cls, (a, b), {})
        ta = isinstance(a, Tensor)
        tb = isinstance(b, Tensor)
        if not (ta or a.__class__ in _NUMBERS) or not (tb or b.__class__ in _NUMBERS):
            return Function.apply.__func__(cls, _as_operand(a, b), _as_operand(b, a))
        if ta and tb and a.array.dtype is not b.array.dtype:  # (dtypes are singletons)
            a, b = promote_pair(a, b)
        if _state.enabled:
            # a view whose base got a history in place since it was made is remade first
            if ta and a._view_of is not None and a._vc[0] != a._view_version:
                _refresh_view(a)
            if tb and b._view_of is not None and b._vc[0] != b._view_version:
                _refresh_view(b)
            ra = ta and a._rg
            rb = tb and b._rg
            if ra or rb:
                ctx = _new(cls)
                ctx.needs_input_grad = _NEEDS[ra, rb]
                out = cls.forward(ctx, a, b)
                # the edges (function._edge inlined: the hottest path of small-tensor code)
                ea = eb = _NO_EDGE
                if ra:
                    fn = a.grad_fn
                    ea = (fn, a._output_nr) if fn is not None else (a._accum or _edge(a)[0], 0)
                elif ta and a.grad_fn is not None:
                    ea = (a.grad_fn, a._output_nr)
                if rb:
                    fn = b.grad_fn
                    eb = (fn, b._output_nr) if fn is not None else (b._accum or _edge(b)[0], 0)
                elif tb and b.grad_fn is not None:
                    eb = (b.grad_fn, b._output_nr)
                ctx.next_functions = (ea, eb)
                ctx._seq = next(_sequence)
                out._rg = True      # an input requires grad, so it is a float and so is out
                out.grad_fn = ctx
                return out
        # nothing to record: no node at all
        return wrap(broadcasting(cls.compute, a.array if ta else a, b.array if tb else b))

    @classmethod
    def forward(cls, ctx, a, b):
        """cls.compute on the operands' data; keeps the data in ctx.a / ctx.b (for reduce_grad)
        and lets cls.save keep the tensors backward reads."""
        if cls.save is not None and ctx.needs_input_grad is not _NO:
            ctx._saved = cls.save(ctx.needs_input_grad, a, b)
        a = a.array if isinstance(a, Tensor) else a
        b = b.array if isinstance(b, Tensor) else b
        ctx.a = a
        ctx.b = b
        return wrap(broadcasting(cls.compute, a, b))

    compute = None      # the carray function: compute(a_data, b_data) -> Array
    save = None         # save(needs_input_grad, a, b) -> ctx._saved pairs, or None: nothing


class Add(_Binary):
    """a + b;  da = g, db = g."""

    compute = staticmethod(carray.add)

    @staticmethod
    def backward(ctx, g):
        need = ctx.needs_input_grad
        return (reduce_grad(g, ctx.a) if need[0] else None,
                reduce_grad(g, ctx.b) if need[1] else None)


class Sub(_Binary):
    """a - b;  da = g, db = -g. RuntimeError for bool operands (as PyTorch)."""

    @classmethod
    def apply(cls, a, b):
        _check_bool_sub(data_of(a), data_of(b))  # (before bool operands are promoted)
        return _Binary.apply.__func__(cls, a, b)

    compute = staticmethod(carray.subtract)

    @staticmethod
    def backward(ctx, g):
        need = ctx.needs_input_grad
        return (reduce_grad(g, ctx.a) if need[0] else None,
                reduce_grad(-g, ctx.b) if need[1] else None)


def _check_bool_sub(a, b):
    """RuntimeError for a subtraction with a bool operand, as PyTorch."""
    if _is_bool(a) or _is_bool(b):
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
            "`^` or `logical_xor()` operator instead." if _is_bool(a) and _is_bool(b) else
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead.")


class Mul(_Binary):
    """a * b;  da = g * b, db = g * a."""

    @staticmethod
    def save(need, a, b):
        # b for da and a for db (a Python number is used as it is)
        return ((b, b._vc[0]) if need[0] and isinstance(b, Tensor) else _NOTHING,
                (a, a._vc[0]) if need[1] and isinstance(a, Tensor) else _NOTHING)

    compute = staticmethod(carray.multiply)

    @staticmethod
    def backward(ctx, g):
        b, a = ctx.saved_tensors
        need = ctx.needs_input_grad
        ga = gb = None
        if need[0]:
            ga = reduce_grad(_times(g, b if b is not None else ctx.b), ctx.a)
        if need[1]:
            gb = reduce_grad(_times(g, a if a is not None else ctx.a), ctx.b)
        return ga, gb


def _times(g, other):
    """g * other, in a backward. Not recording (no create_graph) and with plain tensors of one
    dtype, that is carray's multiply of the data: done so, without the Tensor op's dispatch
    (which dominates the backward of small graphs)."""
    if (not _state.enabled and g.__class__ is Tensor and other.__class__ is Tensor
            and g.array.dtype is other.array.dtype):
        return wrap(carray.multiply(g.array, other.array))
    return g * other


class Div(_Binary):
    """a / b;  da = g / b, db = -g * a / b**2."""

    @staticmethod
    def save(need, a, b):
        return ((a, a._vc[0]) if need[1] and isinstance(a, Tensor) else _NOTHING,
                (b, b._vc[0]) if isinstance(b, Tensor) else _NOTHING)

    @staticmethod
    def compute(a, b):
        out = carray.divide(a, b)
        if out.dtype == carray.float64 and _int_operand(a) and _int_operand(b):
            out = out.astype(get_default_dtype())  # int / int gives the default float (PyTorch)
        return out

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        ga = gb = None
        if need[0]:
            ga = reduce_grad(g / (b if b is not None else ctx.b), ctx.a)
        if need[1]:
            gb = reduce_grad(-g * (a if a is not None else ctx.a) / (b * b), ctx.b)
        return ga, gb


class _RoundedDiv(_Binary):
    """Base of floor and trunc division: integer division by zero raises RuntimeError (as
    PyTorch); the gradient is zero (as PyTorch's div with a rounding_mode)."""

    @staticmethod
    def backward(ctx, g):
        need = ctx.needs_input_grad
        return (reduce_grad(g * 0, ctx.a) if need[0] else None,
                reduce_grad(g * 0, ctx.b) if need[1] else None)


class FloorDivide(_RoundedDiv):
    """a // b (div with rounding_mode='floor'); zero gradient."""

    @staticmethod
    def compute(a, b):
        _check_int_divisor(a, b)
        return carray.floor_divide(a, b)


class TruncDivide(_RoundedDiv):
    """a / b rounded towards zero (div with rounding_mode='trunc'); zero gradient."""

    @staticmethod
    def compute(a, b):
        _check_int_divisor(a, b)
        q = carray.divide(a, b)
        out = carray.where(carray.less(q, 0), carray.ceil(q), carray.floor(q))
        kind = carray.result_type(a, b)
        return out.astype(kind) if not is_floating(kind) else out


class Remainder(_Binary):
    """a % b with the sign of b (torch.remainder);  da = g, db = -g * floor(a / b)."""

    @staticmethod
    def compute(a, b):
        _check_int_divisor(a, b)
        return carray.remainder(a, b)

    @staticmethod
    def backward(ctx, g):
        need = ctx.needs_input_grad
        gb = None
        if need[1]:
            gb = reduce_grad(-g * wrap(carray.floor_divide(ctx.a, ctx.b)), ctx.b)
        return (reduce_grad(g, ctx.a) if need[0] else None), gb


def _check_int_divisor(a, b):
    """RuntimeError('ZeroDivisionError') for an integer division by zero, as PyTorch."""
    if _int_operand(a) and _int_operand(b) and not isinstance(b, float):
        zero = carray.any(carray.equal(b, 0)) if isinstance(b, carray.Array) else b == 0
        if zero:
            raise RuntimeError("ZeroDivisionError")


def _is_bool(x):
    """True for a bool array or a Python bool."""
    return x.dtype.kind == "b" if isinstance(x, carray.Array) else isinstance(x, bool)


_NUMBERS = (int, float, bool)


def _int_operand(x):
    """True for an integer or bool array or Python number (true division makes them float)."""
    return not is_floating(x.dtype) if isinstance(x, carray.Array) else not isinstance(x, float)


_NO = (False, False)
_NEEDS = {(x, y): (x, y) for x in (False, True) for y in (False, True)}
_NEEDS[False, False] = _NO
_NOTHING = (None, 0)
_new = object.__new__


def _as_operand(x, other):
    """x as a Tensor or a Python number (lists, NumPy arrays and such become tensors)."""
    if isinstance(x, Tensor) or isinstance(x, (int, float, bool)):
        return x
    dev = other.array.device if isinstance(other, Tensor) else None
    return Tensor(x, device=dev)


class Pow(Builtin):
    """a ** b;  da = g * b * a**(b-1), db = g * a**b * log(a) (0 where a == 0 and b >= 0)."""

    @staticmethod
    def forward(ctx, a, b):
        out = wrap(broadcasting(_power, data_of(a), data_of(b)))
        need = ctx.needs_input_grad
        if True in need:
            ctx.save_for_backward(a if isinstance(a, Tensor) else None,
                                  b if isinstance(b, Tensor) else None,
                                  out if need[1] else None)
            ctx.a, ctx.b = meta(a), meta(b)
            ctx.sa = None if isinstance(a, Tensor) else a
            ctx.sb = None if isinstance(b, Tensor) else b
        return out

    @staticmethod
    def backward(ctx, g):
        a, b, out = ctx.saved_tensors
        need = ctx.needs_input_grad
        ga = gb = None
        if need[0]:
            if b is None:
                e = ctx.sb
                ga = g * 0 if e == 0 else g * e * a ** (e - 1)
            else:  # 0 where b == 0 (also at a == 0, as PyTorch)
                ga = Where.apply(b == 0, 0.0, g * b * a ** (b - 1))
            ga = reduce_grad(ga, ctx.a)
        if need[1]:
            if a is None and ctx.sa == 0:  # 0 ** b: 0 where b >= 0, as PyTorch
                gb = Where.apply(b >= 0, 0.0, g * out * float("-inf"))
            elif a is None:
                gb = g * out * (math.log(ctx.sa) if ctx.sa > 0 else float("nan"))
            else:
                # d/db a**b = a**b log a, taken as 0 where a == 0 and b >= 0 (as PyTorch)
                safe = Where.apply(((a == 0) & (b >= 0)), 1.0, a)
                gb = g * out * safe.log()
            gb = reduce_grad(gb, ctx.b)
        return ga, gb


def _power(a, b):
    """carray.power with PyTorch's integer rules: a negative scalar exponent raises
    RuntimeError; negative elements of an integer exponent tensor give a ** -n truncated
    (1 for a == 1, +-1 for a == -1, else 0)."""
    try:
        return carray.power(a, b)
    except ValueError as e:
        if not isinstance(b, carray.Array):
            raise RuntimeError(str(e)) from None
    a = a if isinstance(a, carray.Array) else carray.asarray(a, device=b.device)
    neg = carray.less(b, 0)
    out = carray.power(a, carray.where(neg, 0, b))
    sign = carray.where(carray.equal(carray.remainder(b, 2), 1), -1, 1)
    small = carray.where(carray.equal(a, 1), 1, carray.where(carray.equal(a, -1), sign, 0))
    return carray.where(neg, small.astype(out.dtype), out)


class Maximum(Builtin):
    """maximum(a, b); the gradient goes to the larger input, split evenly on ties."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return wrap(broadcasting(carray.maximum, a.array, b.array))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return _split_by(g, a, b, a.array > b.array, ctx.needs_input_grad)


class Minimum(Builtin):
    """minimum(a, b); the gradient goes to the smaller input, split evenly on ties."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return wrap(broadcasting(carray.minimum, a.array, b.array))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return _split_by(g, a, b, a.array < b.array, ctx.needs_input_grad)


def _split_by(g, a, b, a_wins, need):
    """Gradients of a max/min of a and b: all of g to the winner, half to each on a tie."""
    tie = carray.equal(a.array, b.array)
    dt = g.array.dtype
    wa = wrap(carray.add(a_wins.astype(dt), carray.multiply(tie.astype(dt), 0.5)))
    ga = reduce_grad(g * wa, a) if need[0] else None
    gb = reduce_grad(g * (1 - wa), b) if need[1] else None
    return ga, gb


class Where(Builtin):
    """where(cond, x, y);  dx = g where cond, dy = g where not cond."""

    @staticmethod
    def forward(ctx, cond, x, y):
        c = data_of(cond)
        ctx.cond = c
        ctx.x, ctx.y = meta(x), meta(y)
        return wrap(carray.where(c, data_of(x), data_of(y)))

    @staticmethod
    def backward(ctx, g):
        need = ctx.needs_input_grad
        zero = carray.zeros((), dtype=g.array.dtype, device=g.array.device)
        gx = gy = None
        if need[1]:
            gx = reduce_grad(wrap(carray.where(ctx.cond, g.array, zero)) if not g._rg
                             else Where.apply(ctx.cond, g, 0.0), ctx.x)
        if need[2]:
            gy = reduce_grad(wrap(carray.where(ctx.cond, zero, g.array)) if not g._rg
                             else Where.apply(ctx.cond, 0.0, g), ctx.y)
        return None, gx, gy


# ---------------------------------------------------------------------------------------------
# unary
# ---------------------------------------------------------------------------------------------

class Neg(Builtin):
    """-x;  dx = -g. RuntimeError for bool tensors (as PyTorch)."""

    @staticmethod
    def forward(ctx, x):
        if x.array.dtype.kind == "b":
            raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. "
                               "If you are trying to invert a mask, use the `~` or "
                               "`logical_not()` operator instead.")
        return wrap(carray.negative(x.array))

    @staticmethod
    def backward(ctx, g):
        return -g


class Clamp(Builtin):
    """clamp(x, min, max) (either bound may be None, a number or a Tensor); dx = g where
    min <= x <= max, the bounds get g where they were picked."""

    @staticmethod
    def forward(ctx, x, lo, hi):
        ctx.save_for_backward(x, lo if isinstance(lo, Tensor) else None,
                              hi if isinstance(hi, Tensor) else None)
        ctx.lo, ctx.hi = lo, hi
        return wrap(carray.clip(x.array, data_of(lo), data_of(hi)))

    @staticmethod
    def backward(ctx, g):
        x, lo_t, hi_t = ctx.saved_tensors
        lo, hi = ctx.lo, ctx.hi
        need = ctx.needs_input_grad
        keep = carray.ones(x.array.shape, dtype=carray.bool, device=x.array.device)
        below = above = None
        if lo is not None:
            below = carray.less(x.array, data_of(lo))
            keep = carray.logical_and(keep, carray.logical_not(below))
        if hi is not None:
            above = carray.greater(x.array, data_of(hi))
            if lo is not None:  # when min > max every element is max
                above = carray.logical_or(above, carray.greater(data_of(lo), data_of(hi)))
                below = carray.logical_and(below, carray.logical_not(above))
                keep = carray.logical_and(keep, carray.logical_not(above))
            else:
                keep = carray.logical_and(keep, carray.logical_not(above))
        dt = g.array.dtype
        gx = g * wrap(keep.astype(dt)) if need[0] else None
        glo = reduce_grad(g * wrap(below.astype(dt)), lo_t) if lo_t is not None and need[1] \
            else None
        ghi = reduce_grad(g * wrap(above.astype(dt)), hi_t) if hi_t is not None and need[2] \
            else None
        # (lo_t / hi_t are saved Tensors: reduce_grad reads their shape and dtype)
        return gx, glo, ghi


# ---------------------------------------------------------------------------------------------
# the table of unary ops with a one-formula derivative
# ---------------------------------------------------------------------------------------------

class _Unary(Builtin):
    """Base of the table's ops: forward is `kernel` on the data and keeps what `derivative`
    reads; backward is `derivative(g, x, y)`, x the input and y the result (None when not kept).
    """

    kernel = None        # the carray function
    saves = None         # "input", "result" or None: what the derivative reads
    to_float = False     # the torch function casts integer and bool inputs to the default float

    @classmethod
    def forward(cls, ctx, x):
        out = wrap(cls.kernel(x.array))
        if cls.saves is not None:
            ctx.save_for_backward(x if cls.saves == "input" else out)
        return out

    @classmethod
    def backward(cls, ctx, g):
        if cls.saves is None:
            return cls.derivative(g, None, None)
        (kept,) = ctx.saved_tensors
        if cls.saves == "input":
            return cls.derivative(g, kept, None)
        return cls.derivative(g, None, kept)


def unary(name, kernel, saves, to_float, derivative, formula):
    """The Function class of one table row: `name` (also the node's name, as ExpBackward0)
    computes kernel(x); dx = derivative(g, x, y), which `formula` states for the docstring."""
    return type(name, (_Unary,), {
        "__doc__": f"{name.lower()}(x);  dx = {formula}.", "__module__": __name__,
        "kernel": staticmethod(kernel), "saves": saves, "to_float": to_float,
        "derivative": staticmethod(derivative)})


def _relu_grad(g, x, y):
    """g where the result is > 0; a mask product when recording (create_graph keeps the graph),
    else one carray where."""
    if _state.enabled:
        return g * wrap(carray.greater(y.array, 0).astype(g.array.dtype))
    return wrap(carray.where(carray.greater(y.array, 0), g.array, 0))


# Each row: unary(name, kernel, saves, to_float, derivative, formula). The derivative gets g,
# the gradient of the result, and x (the input) or y (the result), whichever `saves` names;
# to_float: integer inputs are cast to the default float first (as PyTorch); formula states the
# derivative in the class's docstring.
Exp = unary("Exp", carray.exp, "result", True, lambda g, x, y: g * y, "g exp(x)")
Expm1 = unary("Expm1", carray.expm1, "result", True, lambda g, x, y: g * (y + 1), "g exp(x)")
Log = unary("Log", carray.log, "input", True, lambda g, x, y: g / x, "g / x")
Log1p = unary("Log1p", carray.log1p, "input", True, lambda g, x, y: g / (x + 1), "g / (1 + x)")
Sqrt = unary("Sqrt", carray.sqrt, "result", True, lambda g, x, y: g / (y * 2), "g / (2 sqrt(x))")
Sin = unary("Sin", carray.sin, "input", True, lambda g, x, y: g * x.cos(), "g cos(x)")
Cos = unary("Cos", carray.cos, "input", True, lambda g, x, y: -g * x.sin(), "-g sin(x)")
Tanh = unary("Tanh", carray.tanh, "result", True, lambda g, x, y: g * (1 - y * y),
             "g (1 - tanh(x)^2)")
Sigmoid = unary("Sigmoid", carray.sigmoid, "result", True, lambda g, x, y: g * y * (1 - y),
                "g s (1 - s), s = sigmoid(x)")
Relu = unary("Relu", carray.relu, "result", False, _relu_grad, "g where x > 0")
Abs = unary("Abs", carray.abs, "input", False, lambda g, x, y: g * wrap(carray.sign(x.array)),
            "g sign(x)")
Sign = unary("Sign", carray.sign, None, False, lambda g, x, y: g * 0, "0")
Floor = unary("Floor", carray.floor, None, False, lambda g, x, y: g * 0, "0")
Ceil = unary("Ceil", carray.ceil, None, False, lambda g, x, y: g * 0, "0")

# -- inverse trigonometric and hyperbolic functions, erf, erfinv (tensor functions, issue 12) --
Asin = unary("Asin", carray.arcsin, "input", True, lambda g, x, y: g / (1 - x * x).sqrt(),
             "g / sqrt(1 - x^2)")
Acos = unary("Acos", carray.arccos, "input", True, lambda g, x, y: -g / (1 - x * x).sqrt(),
             "-g / sqrt(1 - x^2)")
Atan = unary("Atan", carray.arctan, "input", True, lambda g, x, y: g / (x * x + 1),
             "g / (1 + x^2)")
Sinh = unary("Sinh", carray.sinh, "input", True, lambda g, x, y: g * Cosh.apply(x), "g cosh(x)")
Cosh = unary("Cosh", carray.cosh, "input", True, lambda g, x, y: g * Sinh.apply(x), "g sinh(x)")
Asinh = unary("Asinh", carray.arcsinh, "input", True, lambda g, x, y: g / (x * x + 1).sqrt(),
              "g / sqrt(x^2 + 1)")
Acosh = unary("Acosh", carray.arccosh, "input", True, lambda g, x, y: g / (x * x - 1).sqrt(),
              "g / sqrt(x^2 - 1)")
Atanh = unary("Atanh", carray.arctanh, "input", True, lambda g, x, y: g / (1 - x * x),
              "g / (1 - x^2)")
Erf = unary("Erf", carray.erf, "input", True,
            lambda g, x, y: g * (-x * x).exp() * 1.1283791670955126, "g 2/sqrt(pi) exp(-x^2)")
Erfinv = unary("Erfinv", carray.erfinv, "result", True,
               lambda g, x, y: g * (y * y).exp() * 0.886226925452758, "g sqrt(pi)/2 exp(y^2)")
__all__ += ["Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Cosh", "Erf", "Erfinv", "Sinh"]

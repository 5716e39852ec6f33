"""The torch.* functions on tensors (autograd.exp(x), autograd.cat(ts), ...): the argument
handling of each op (defaults, dtype promotion, PyTorch's errors) in front of the Functions of
ops/elementwise.py, reduce.py, linalg.py, scan.py, sort.py and shape.py, which hold the forward
and backward. Ops without a gradient (comparisons, logic, argmax, ...) compute on the data here.

Most of these are also Tensor methods (x.exp()): see ops/tensor_methods.py.
"""

import builtins
import collections

import carray
from autograd._defaults import get_default_dtype, is_floating, scalar_type_name
from autograd.ops._util import along_dim_key, broadcasting, data_of, norm_dim, norm_dims, wrap
from autograd.ops.binary_math import Atan2, Fmod, Hypot, LogAddExp
from autograd.ops.contract import Cdist, diagonal_out, einsum_out, tensordot_out
from autograd.ops.elementwise import (
    _CATEGORY,
    Abs,
    Acos,
    Acosh,
    Add,
    Asin,
    Asinh,
    Atan,
    Atanh,
    Ceil,
    Clamp,
    Cos,
    Cosh,
    Div,
    Erf,
    Erfinv,
    Exp,
    Expm1,
    Floor,
    FloorDivide,
    Log,
    Log1p,
    Maximum,
    Minimum,
    Mul,
    Neg,
    Pow,
    Relu,
    Remainder,
    Sigmoid,
    Sign,
    Sin,
    Sinh,
    Sqrt,
    Sub,
    Tanh,
    TruncDivide,
    Where,
    promote_pair,
)
from autograd.ops.indexing import (
    index_add_out,
    scatter_add_out,
    scatter_out,
    take_along_dim_out,
)
from autograd.ops.linalg import MatMul
from autograd.ops.norms import LinalgVectorNorm  # h12
from autograd.ops.random_ops import bernoulli_out, multinomial_out, normal_out
from autograd.ops.reduce import (
    AmaxDims,
    LogSoftmax,
    LogSumExp,
    MaxAll,
    MaxDim,
    MaxValues,
    Mean,
    MinValues,
    Prod,
    Softmax,
    StdSqrt,
    Sum,
    Var,
)
from autograd.ops.scan import Cumprod, Cumsum
from autograd.ops.shape import (
    Cat,
    Clone,
    Flip,
    Index,
    Permute,
    Reshape,
    Squeeze,
    Stack,
    Transpose,
    Unbind,  # h12
    Unsqueeze,
)
from autograd.ops.sort import Sort, SortResult, TopkResult, sorted_along
from autograd.tensor import Tensor

__all__ = ["add", "sub", "mul", "div", "remainder", "floor_divide", "pow", "neg", "matmul", "mm",
           "bmm", "dot", "outer", "maximum", "minimum", "where", "clamp", "clamp_min", "clamp_max",
           "exp", "expm1", "log", "log1p", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "abs",
           "sign", "floor", "ceil", "rsqrt", "reciprocal", "square", "log2", "log10", "eq", "ne",
           "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "logical_not",
           "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "isnan", "isfinite", "isinf",
           "trunc", "round", "equal", "allclose", "sum", "mean", "var", "std", "prod", "max",
           "min", "amax", "amin", "argmax", "argmin", "all", "any", "cumsum", "cumprod", "sort",
           "argsort", "topk", "logsumexp", "softmax", "log_softmax", "norm", "reshape", "permute",
           "transpose", "squeeze", "unsqueeze", "flatten", "cat", "concat", "concatenate", "stack",
           "flip", "clone", "split", "chunk", "unbind", "narrow", "unflatten", "index_select",
           "gather", "masked_select"]


def tensor_arg(x, like=None):
    """A Tensor or a Python number as an op argument (other objects become tensors)."""
    if isinstance(x, (Tensor, int, float, bool)):
        return x
    return Tensor(x, dtype=None, device=like.array.device if like is not None else None)


# ---------------------------------------------------------------------------------------------
# arithmetic
# ---------------------------------------------------------------------------------------------

def add(input, other, *, alpha=1):
    """input + alpha * other (broadcasting)."""
    if alpha != 1:
        other = mul(other, alpha)
    return Add.apply(tensor_arg(input), tensor_arg(other, input))


def sub(input, other, *, alpha=1):
    """input - alpha * other (broadcasting)."""
    if alpha != 1:
        other = mul(other, alpha)
    return Sub.apply(tensor_arg(input), tensor_arg(other, input))


def mul(input, other):
    """input * other (broadcasting)."""
    return Mul.apply(tensor_arg(input), tensor_arg(other, input))


def div(input, other, *, rounding_mode=None):
    """input / other (true division; rounding_mode 'floor' or 'trunc' give no gradient)."""
    if rounding_mode is None:
        return Div.apply(tensor_arg(input), tensor_arg(other, input))
    if rounding_mode == "floor":
        return FloorDivide.apply(tensor_arg(input), tensor_arg(other, input))
    if rounding_mode == "trunc":
        return TruncDivide.apply(tensor_arg(input), tensor_arg(other, input))
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                       f"found '{rounding_mode}'")


def remainder(input, other):
    """input % other with the sign of other (Python's convention, torch.remainder)."""
    return Remainder.apply(tensor_arg(input), tensor_arg(other, input))


def floor_divide(input, other):
    """input // other (rounded down; zero gradient)."""
    return FloorDivide.apply(tensor_arg(input), tensor_arg(other, input))


def pow(input, exponent):
    """input ** exponent (either may be a number)."""
    a, b = promote_pair(tensor_arg(input),
                        tensor_arg(exponent, input if isinstance(input, Tensor) else None))
    return Pow.apply(a, b)


def neg(input):
    return Neg.apply(input)


def matmul(input, other):
    """Matrix product with NumPy's rules (1-d operands, batch broadcasting)."""
    return MatMul.apply(input, other)


def mm(input, mat2):
    """Matrix product of two 2-d tensors."""
    if input.array.ndim != 2 or mat2.array.ndim != 2:
        raise RuntimeError(f"mm: expected 2D tensors, got {input.array.ndim}D and "
                           f"{mat2.array.ndim}D")
    return MatMul.apply(input, mat2)


def bmm(input, mat2):
    """Batched matrix product of two 3-d tensors (no broadcasting)."""
    if input.array.ndim != 3 or mat2.array.ndim != 3:
        raise RuntimeError(f"bmm: expected 3D tensors, got {input.array.ndim}D and "
                           f"{mat2.array.ndim}D")
    if input.array.shape[0] != mat2.array.shape[0]:
        raise RuntimeError(f"bmm: batch sizes differ: {input.array.shape[0]} and "
                           f"{mat2.array.shape[0]}")
    return MatMul.apply(input, mat2)


def dot(input, other):
    """Inner product of two 1-d tensors."""
    if input.array.ndim != 1 or other.array.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.array.ndim}D and "
                           f"{other.array.ndim}D tensors")
    return MatMul.apply(input, other)


def outer(input, vec2):
    """input[i] * vec2[j] of two 1-d tensors."""
    return mul(input.reshape(-1, 1), vec2.reshape(1, -1))


def maximum(input, other):
    return Maximum.apply(*promote_pair(input, other))


def minimum(input, other):
    return Minimum.apply(*promote_pair(input, other))


def where(condition, input=None, other=None):
    """input where condition else other (broadcasting; input/other may be numbers)."""
    if input is None and other is None:
        raise TypeError("where(condition) with one argument is not supported; use nonzero()")
    if isinstance(condition, Tensor) and condition.array.dtype.kind != "b":
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {scalar_type_name(condition.dtype)}")
    return Where.apply(condition, *promote_pair(tensor_arg(input), tensor_arg(other)))


def clamp(input, min=None, max=None):
    """input limited to [min, max] (bounds may be numbers or tensors). RuntimeError when both
    are None."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    return Clamp.apply(input, min, max)


def clamp_min(input, min):
    return clamp(input, min=min)


def clamp_max(input, max):
    return clamp(input, max=max)


def _unary(fn_class):
    """The op function of a table row of ops/elementwise.py; integer and bool inputs are first
    converted to the default float dtype when the row says to_float (as PyTorch does for exp,
    log, ...)."""
    def op(input):
        if fn_class.to_float and not is_floating(input.array.dtype):
            input = input.to(get_default_dtype())
        return fn_class.apply(input)
    op.__name__ = fn_class.__name__.lower()
    op.__doc__ = fn_class.__doc__
    return op


exp = _unary(Exp)
expm1 = _unary(Expm1)
log = _unary(Log)
log1p = _unary(Log1p)
sqrt = _unary(Sqrt)
sin = _unary(Sin)
cos = _unary(Cos)
tanh = _unary(Tanh)
sigmoid = _unary(Sigmoid)
relu = _unary(Relu)
abs = _unary(Abs)
sign = _unary(Sign)
floor = _unary(Floor)
ceil = _unary(Ceil)


def rsqrt(input):
    return sqrt(input).reciprocal()


def reciprocal(input):
    return Div.apply(1.0, input)


def square(input):
    return Mul.apply(input, input)


def log2(input):
    return log(input) / 0.6931471805599453


def log10(input):
    return log(input) / 2.302585092994046


# ---------------------------------------------------------------------------------------------
# comparisons and logic (no gradient)
# ---------------------------------------------------------------------------------------------

def _compare(fn):
    def op(input, other):
        if other is None:  # t == None is False, t != None True (Python's default)
            return fn is carray.not_equal
        return wrap(broadcasting(fn, data_of(input), data_of(other)))
    op.__name__ = fn.__name__
    return op


eq = _compare(carray.equal)
ne = _compare(carray.not_equal)
lt = _compare(carray.less)
le = _compare(carray.less_equal)
gt = _compare(carray.greater)
ge = _compare(carray.greater_equal)
logical_and = _compare(carray.logical_and)
logical_or = _compare(carray.logical_or)


def logical_xor(input, other):
    return ne(data_of(input).astype(carray.bool_) if isinstance(input, Tensor) else bool(input),
              data_of(other).astype(carray.bool_) if isinstance(other, Tensor) else bool(other))


def logical_not(input):
    return wrap(carray.logical_not(input.array))


def float_result(*args):
    """The float dtype PyTorch gives a result of these (promoted) operands, or None."""
    dtype = None
    for x in args:
        if isinstance(x, Tensor) and is_floating(x.array.dtype):
            return x.array.dtype
        if isinstance(x, float):
            dtype = get_default_dtype()
    return dtype


def check_integral(name, *args):
    """PyTorch's NotImplementedError when bitwise op `name` would compute in a float type."""
    dtype = float_result(*args)
    if dtype is not None:
        dev = next((x.array.device for x in args if isinstance(x, Tensor)), "cpu")
        raise NotImplementedError(f'"{name}_{"cpu" if dev == "cpu" else "cuda"}" not '
                                  f"implemented for '{scalar_type_name(dtype)}'")


def _bitwise(fn, doc):
    """A bitwise op of bool and integer tensors (or Python numbers): PyTorch's result dtype,
    no gradient, NotImplementedError for float operands."""
    def op(input, other):
        a, b = promote_pair(tensor_arg(input),
                            tensor_arg(other, input if isinstance(input, Tensor) else None))
        check_integral(fn.__name__, a, b)
        return wrap(broadcasting(fn, data_of(a), data_of(b)))
    op.__name__ = fn.__name__
    op.__doc__ = doc
    return op


bitwise_and = _bitwise(carray.bitwise_and, "input & other bitwise (bool: logical and).")
bitwise_or = _bitwise(carray.bitwise_or, "input | other bitwise (bool: logical or).")
bitwise_xor = _bitwise(carray.bitwise_xor, "input ^ other bitwise (bool: logical xor).")


def bitwise_not(input):
    """~input bitwise (bool: logical not); NotImplementedError for float tensors."""
    check_integral("bitwise_not", input)
    return wrap(carray.invert(input.array))


def isnan(input):
    return wrap(carray.isnan(input.array))


def isfinite(input):
    return wrap(carray.isfinite(input.array))


def isinf(input):
    return wrap(carray.logical_not(carray.logical_or(carray.isfinite(input.array),
                                                     carray.isnan(input.array))))


def trunc(input):
    """input rounded towards zero (zero gradient)."""
    return where(input < 0, ceil(input), floor(input)) if is_floating(input.array.dtype) \
        else clone(input)


def round(input, *, decimals=0):
    """input rounded to the nearest integer, halves to even (as PyTorch); zero gradient."""
    if not is_floating(input.array.dtype):
        return clone(input)
    x = input * 10.0 ** decimals if decimals else input
    low = floor(x)
    diff = x.array - low.array
    up = carray.logical_or(carray.greater(diff, 0.5), carray.logical_and(
        carray.equal(diff, 0.5), carray.equal(carray.remainder(low.array, 2), 1)))
    out = low + wrap(up.astype(low.array.dtype))
    return out / 10.0 ** decimals if decimals else out


def equal(input, other):
    """True when both have the same shape and elements."""
    return input.shape == other.shape and bool(carray.all(carray.equal(input.array, other.array)))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = input.array, other.array
    close = carray.less_equal(carray.abs(a - b), atol + rtol * carray.abs(b))
    if equal_nan:
        close = carray.logical_or(close, carray.logical_and(carray.isnan(a), carray.isnan(b)))
    return bool(carray.all(close))


# ---------------------------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------------------------

def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum over dim (an int, a tuple, or None for all)."""
    return Sum.apply(input, dim, keepdim, dtype)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean over dim (float tensors; RuntimeError for integer ones without dtype=)."""
    return Mean.apply(input, dim, keepdim, dtype)


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance over dim with Bessel's correction by default (correction=1)."""
    if isinstance(dim, bool):  # var(False): the unbiased flag given positionally
        dim, unbiased = None, dim
    if not is_floating(input.array.dtype):
        raise RuntimeError("std and var only support floating point and complex dtypes")
    return Var.apply(input, dim, _correction(unbiased, correction), keepdim)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation over dim with Bessel's correction by default (gradient 0 where the
    deviation is 0, as PyTorch)."""
    return StdSqrt.apply(var(input, dim, unbiased, keepdim, correction=correction))


def prod(input, dim=None, keepdim=False, *, dtype=None):
    return Prod.apply(input, dim, keepdim, dtype)


def _max_or_min(input, dim, keepdim, largest, other_name):
    if isinstance(dim, Tensor):
        return (maximum if largest else minimum)(input, dim)
    if dim is None:
        if keepdim:
            raise TypeError(f"{other_name}() received an invalid combination of arguments: "
                            f"keepdim without dim")
        return MaxAll.apply(input, largest)
    values, indices = MaxDim.apply(input, dim, keepdim, largest)
    return (MaxValues if largest else MinValues)(values, indices)


def max(input, dim=None, keepdim=False):
    """The largest element, or (values, indices) along dim, or the elementwise maximum when dim
    is a Tensor. Ties in the whole-tensor max share the gradient evenly."""
    return _max_or_min(input, dim, keepdim, True, "max")


def min(input, dim=None, keepdim=False):
    """The smallest element, or (values, indices) along dim (see max)."""
    return _max_or_min(input, dim, keepdim, False, "min")


def amax(input, dim=(), keepdim=False):
    return AmaxDims.apply(input, dim if dim != () else None, keepdim, True)


def amin(input, dim=(), keepdim=False):
    return AmaxDims.apply(input, dim if dim != () else None, keepdim, False)


def _arg_extreme(input, dim, keepdim, fn, name):
    """argmax / argmin: the flat index when dim is None; errors as PyTorch's."""
    a = input.array
    if a.dtype.kind == "b":
        raise RuntimeError(f"{name}(): does not support bool input")
    if dim is not None:
        d = norm_dim(dim, a.ndim)
        if a.ndim == 0:
            return wrap(carray.zeros((), dtype=carray.int64, device=a.device))
        if a.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
        return wrap(fn(a, axis=d, keepdims=keepdim))
    if a.size == 0:
        raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() "
                         f"== 0.")
    out = fn(a)
    return wrap(out.reshape((1,) * a.ndim) if keepdim else out)


def argmax(input, dim=None, keepdim=False):
    """Index of the largest element (flat when dim is None)."""
    return _arg_extreme(input, dim, keepdim, carray.argmax, "argmax")


def argmin(input, dim=None, keepdim=False):
    """Index of the smallest element (flat when dim is None)."""
    return _arg_extreme(input, dim, keepdim, carray.argmin, "argmin")


def all(input, dim=None, keepdim=False):
    axis = dim if dim is None or dim == () else norm_dims(dim, input.array.ndim)
    return wrap(carray.all(input.array, axis=axis, keepdims=keepdim))


def any(input, dim=None, keepdim=False):
    axis = dim if dim is None or dim == () else norm_dims(dim, input.array.ndim)
    return wrap(carray.any(input.array, axis=axis, keepdims=keepdim))


def _cumulative(fn_class, input, dim, dtype):
    """fn_class (Cumsum or Cumprod) applied to input cast to dtype (bool and ints: int64)."""
    if dtype is None and input.array.dtype.kind in "biu":
        dtype = carray.int64
    if dtype is not None and carray.dtype(dtype) != input.array.dtype:
        input = input.to(dtype)
    return fn_class.apply(input, dim)


def cumsum(input, dim, *, dtype=None):
    """Cumulative sum along dim (bool and ints sum to int64; dtype= casts the input first);
    the gradient is the reverse cumulative sum of g. IndexError for a bad dim."""
    return _cumulative(Cumsum, input, dim, dtype)


def cumprod(input, dim, *, dtype=None):
    """Cumulative product along dim (dtypes as cumsum); the gradient is exact also where the
    input has zeros. IndexError for a bad dim."""
    return _cumulative(Cumprod, input, dim, dtype)


def sort(input, dim=-1, descending=False, *, stable=False):
    """(values, indices) sorted along dim: a namedtuple `sort`, as torch.return_types.sort.
    Always stable (ties keep their original order, also when descending, whatever stable=
    says); NaN sorts as the largest value. Gradients flow from values to the positions they
    came from. IndexError for a bad dim."""
    values, indices = Sort.apply(input, dim, descending, None)
    return SortResult(values, indices)


def argsort(input, dim=-1, descending=False, *, stable=False):
    """The int64 indices that sort input along dim (stably, as sort). IndexError for a bad
    dim."""
    a = input.array
    return wrap(sorted_along(a, norm_dim(dim, a.ndim), descending)[1])


def topk(input, k, dim=-1, largest=True, sorted=True):
    """The k largest (or smallest) entries along dim and their indices: a namedtuple `topk`.
    NaN counts as the largest value; the values always come sorted, ties in their original
    order (PyTorch may order tied indices differently; the values are the same). Raises
    RuntimeError when k is not in [0, size of dim] or input is bool, IndexError for a bad
    dim."""
    a = input.array
    d = norm_dim(dim, a.ndim)
    if a.dtype.kind == "b":
        raise RuntimeError("topk does not support bool dtypes")
    if not 0 <= k <= (a.shape[d] if a.ndim else 1):
        raise RuntimeError("selected index k out of range")
    values, indices = Sort.apply(input, d, largest, k)
    return TopkResult(values, indices)


def logsumexp(input, dim, keepdim=False):
    """log(sum(exp(input))) over dim, computed stably (integer inputs give the default float)."""
    if not is_floating(input.array.dtype):
        input = input.to(get_default_dtype())
    return LogSumExp.apply(input, dim, keepdim)


def softmax(input, dim, dtype=None):
    """exp(x) / sum(exp(x)) along dim, computed stably."""
    if dtype is not None:
        input = input.to(dtype)
    return Softmax.apply(input, dim)


def log_softmax(input, dim, dtype=None):
    """log(softmax(x)) along dim, computed stably."""
    if dtype is not None:
        input = input.to(dtype)
    return LogSoftmax.apply(input, dim)


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """The p-norm of input over dim (all dims when None) as a vector norm: p a number, inf, -inf,
    or 'fro' (the 2-norm). NotImplementedError for 'nuc'; RuntimeError for an integer input."""
    if p == "fro" or p is None:
        p = 2
    if p == "nuc":
        raise NotImplementedError("norm: p='nuc' (the nuclear norm) is not supported")
    if isinstance(p, str):
        raise RuntimeError(f"norm: invalid p {p!r}")
    if dtype is not None:
        input = input.to(dtype)
    result = LinalgVectorNorm.apply(input, float(p), dim, keepdim)
    return result if out is None else out.copy_(result)


# ---------------------------------------------------------------------------------------------
# shape
# ---------------------------------------------------------------------------------------------

def reshape(input, shape):
    return Reshape.apply(input, tuple(shape), False)


def permute(input, dims):
    return Permute.apply(input, tuple(dims))


def transpose(input, dim0, dim1):
    return Transpose.apply(input, dim0, dim1)


def squeeze(input, dim=None):
    return Squeeze.apply(input, dim)


def unsqueeze(input, dim):
    return Unsqueeze.apply(input, dim)


def flatten(input, start_dim=0, end_dim=-1):
    """The dims start_dim..end_dim merged into one (a view when possible)."""
    nd = input.array.ndim
    if nd == 0:
        return reshape(input, (1,))
    s, e = norm_dim(start_dim, nd), norm_dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shp = input.array.shape
    n = 1
    for k in shp[s:e + 1]:
        n *= k
    return reshape(input, shp[:s] + (n,) + shp[e + 1:])


def _common_dtype(tensors):
    """tensors cast (differentiably) to the dtype PyTorch gives their concatenation: the highest
    category (bool < int < float) and, within it, the promotion of those dtypes."""
    tensors = list(tensors)
    dtypes = {t.array.dtype for t in tensors}
    if len(dtypes) < 2:
        return tensors
    top = builtins.max(_CATEGORY[d.kind] for d in dtypes)  # (max here is the tensor op)
    target = None
    for d in dtypes:
        if _CATEGORY[d.kind] == top:
            target = d if target is None else carray.promote_types(target, d)
    return [t if t.array.dtype is target else t.to(target) for t in tensors]


def cat(tensors, dim=0):
    """Join tensors along an existing dim (mixed dtypes promote as in PyTorch)."""
    return Cat.apply(dim, *_common_dtype(tensors))


concat = concatenate = cat


def stack(tensors, dim=0):
    """Join tensors along a new dim (mixed dtypes promote as in PyTorch)."""
    return Stack.apply(dim, *_common_dtype(tensors))


def flip(input, dims):
    return Flip.apply(input, tuple(dims) if isinstance(dims, (tuple, list)) else (dims,))


def clone(input):
    return Clone.apply(input)


def split(tensor, split_size_or_sections, dim=0):
    """Views of tensor along dim: pieces of split_size (the last may be smaller) or of the given
    section sizes."""
    d = norm_dim(dim, tensor.array.ndim)
    n = tensor.array.shape[d]
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        if size <= 0 and n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {n}")
        sizes = [size] * (n // size) + ([n % size] if n % size else []) if size else [0]
    else:
        sizes = list(split_size_or_sections)
        if builtins.sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                               f"(input tensor's size at dimension {d}), but got "
                               f"split_sizes={sizes}")
    out = []
    start = 0
    name = "Split" if isinstance(split_size_or_sections, int) else "SplitWithSizes"
    for size in sizes:
        out.append(_multi_output_view(tensor[(slice(None),) * d + (slice(start, start + size),)],
                                      name, len(out)))
        start += size
    return tuple(out)


def _multi_output_view(t, name, i):
    """t marked as output i of the multi-view op `name` (in-place ops on it then raise, as
    PyTorch's)."""
    t._multi_view = (name, i)
    return t


def chunk(input, chunks, dim=0):
    n = input.array.shape[norm_dim(dim, input.array.ndim)]
    size = -(-n // chunks) if chunks > 0 else 0
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    return split(input, size or 1, dim)


def unbind(input, dim=0):
    """The slices along dim, as views (one node: backward stacks their gradients)."""
    return Unbind.apply(input, dim)


def narrow(input, dim, start, length):
    """The view of length elements from start along dim (a negative start counts from the
    end); RuntimeError when they do not fit."""
    d = norm_dim(dim, input.array.ndim)
    n = input.array.shape[d]
    if start < 0:
        start += n
    if not 0 <= start <= n or length < 0 or start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return input[(slice(None),) * d + (slice(start, start + length),)]


def unflatten(input, dim, sizes):
    """dim split into the given sizes (one may be -1)."""
    d = norm_dim(dim, input.array.ndim)
    shp = input.array.shape
    return reshape(input, shp[:d] + tuple(sizes) + shp[d + 1:])


def index_select(input, dim, index):
    """The entries of input at the 1-d integer tensor index along dim."""
    d = norm_dim(dim, input.array.ndim)
    if index.array.ndim > 1 or index.array.dtype.kind not in "iu":
        raise IndexError("index_select(): Index is supposed to be a vector of integers")
    return input[(slice(None),) * d + (index.reshape(-1),)]


def gather(input, dim, index):
    """out[i][j][k] = input[index[i][j][k]][j][k] (for dim 0, and so on);  the gradient adds
    back into the gathered places."""
    nd = input.array.ndim
    d = norm_dim(dim, nd)
    idx = index.array
    if idx.dtype.kind not in "iu":
        raise RuntimeError("gather(): Expected dtype int64 for index")
    if idx.ndim != nd:
        raise RuntimeError("Index tensor must have the same number of dimensions as input "
                           "tensor")
    for k in range(nd):
        if k != d and idx.shape[k] > input.array.shape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index "
                               f"{list(idx.shape)} to be no larger than self "
                               f"{list(input.array.shape)} apart from dimension {d}")
    return Index.apply(input, along_dim_key(idx, d))


def masked_select(input, mask):
    """The 1-d tensor of input's entries where mask (broadcast with input) is True."""
    shape = carray.broadcast_shapes(input.array.shape, mask.array.shape)
    return input.expand(shape)[mask.expand(shape).array]


# ---------------------------------------------------------------------------------------------
# tensor functions (issue 12 item 1): triangles, indexing, contractions, math, sampling
# ---------------------------------------------------------------------------------------------

def _tri_mask(input, diagonal, lower, name):
    a = input.array
    if a.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    m, n = a.shape[-2:]
    rows = carray.arange(m, dtype=carray.int64, device=a.device).reshape((m, 1))
    cols = carray.arange(n, dtype=carray.int64, device=a.device)
    off = carray.subtract(cols, rows)
    return carray.less_equal(off, diagonal) if lower else carray.greater_equal(off, diagonal)


def tril(input, diagonal=0):
    """input with the entries above the diagonal-th diagonal of its last two dims zeroed."""
    zero = wrap(carray.zeros((), dtype=input.array.dtype, device=input.array.device))
    return Where.apply(_tri_mask(input, diagonal, True, "tril"), input, zero)


def triu(input, diagonal=0):
    """input with the entries below the diagonal-th diagonal of its last two dims zeroed."""
    zero = wrap(carray.zeros((), dtype=input.array.dtype, device=input.array.device))
    return Where.apply(_tri_mask(input, diagonal, False, "triu"), input, zero)


def _tri_indices(row, col, offset, lower, dtype, device):
    pairs = [(i, j) for i in range(row) for j in range(col)
             if (j - i <= offset if lower else j - i >= offset)]
    arr = carray.asarray([[p[0] for p in pairs], [p[1] for p in pairs]] if pairs else
                         carray.zeros((2, 0)), dtype=dtype or carray.int64)
    return wrap(arr if device in (None, "cpu") else arr.to(str(device).split(":")[0]))


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, N) int64 coordinates of the lower triangle of a row x col matrix."""
    return _tri_indices(row, col, offset, True, dtype, device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, N) int64 coordinates of the upper triangle of a row x col matrix."""
    return _tri_indices(row, col, offset, False, dtype, device)


def masked_fill(input, mask, value):
    """input with value where mask is True (broadcasting)."""
    return input.masked_fill(mask, value)


def roll(input, shifts, dims=None):
    """input's entries shifted cyclically by shifts along dims (flattened when dims is None)."""
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"roll: shifts must have one element when dims is None, got "
                               f"{len(shifts)}")
        return roll(input.reshape(-1), shifts, 0).reshape(input.array.shape)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:"
                           f"{len(dims)}")
    out = input
    for s, dim in zip(shifts, dims):
        d = norm_dim(dim, out.array.ndim)
        n = out.array.shape[d]
        if n == 0 or s % n == 0:
            continue
        s %= n
        out = cat([narrow(out, d, n - s, s), narrow(out, d, 0, n - s)], d)
    return out if out is not input else clone(input)


def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    """input with src's entries (or value) written at index along dim (out of place)."""
    src = value if src is None else src
    if reduce is None:
        return scatter_out(input, dim, index, tensor_arg(src, input))
    if reduce == "add":
        return scatter_add(input, dim, index, src)
    raise NotImplementedError(f"scatter(): reduce={reduce!r} is not supported (use "
                              f"scatter_reduce)")


def scatter_add(input, dim, index, src):
    """input with src's entries added at index along dim (repeated indices add up)."""
    return scatter_add_out(input, dim, index, src)


def index_add(input, dim, index, source, *, alpha=1):
    """input with alpha * source's slices added at the positions index gives along dim."""
    return index_add_out(input, dim, index, source, alpha)


def take_along_dim(input, indices, dim=None):
    """input's values at indices along dim (torch.take_along_dim)."""
    return take_along_dim_out(input, indices, dim)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each entry of input repeated repeats times (an int, or one count per entry) along dim
    (of the flattened input when dim is None). With one tensor argument: its indices repeated
    by its values."""
    if repeats is None:
        counts = input
        input = wrap(carray.arange(counts.array.shape[0], dtype=carray.int64,
                                   device=counts.array.device))
        repeats, dim = counts, 0
    if dim is None:
        input, dim = input.reshape(-1), 0
    d = norm_dim(dim, input.array.ndim)
    n = input.array.shape[d]
    if isinstance(repeats, Tensor):
        if repeats.array.ndim > 1:
            raise RuntimeError("repeat_interleave(): repeats must be 0-dim or 1-dim tensor")
        counts = repeats.array.reshape(-1).tolist()
    else:
        counts = [repeats]
    if len(counts) == 1:
        counts = counts * n
    if len(counts) != n:
        raise RuntimeError(f"repeat_interleave(): repeats must have the same size as input "
                           f"along dim, but got repeats.size(0) = {len(counts)} and "
                           f"input.size({d}) = {n}")
    if builtins.any(c < 0 for c in counts):
        raise RuntimeError("repeat_interleave(): repeats can not be negative")
    idx = [i for i, c in enumerate(counts) for _ in range(c)]
    key = carray.asarray(idx, dtype=carray.int64).reshape(-1)
    if input.array.device != "cpu":
        key = key.to(input.array.device)
    return Index.apply(input, (slice(None),) * d + (key,))


def einsum(equation, *operands):
    """Einstein summation (explicit/implicit output, ellipsis, repeated labels)."""
    return einsum_out(equation, *operands)


def tensordot(a, b, dims=2):
    """Sum of a * b over the dims given (an int n: a's last n and b's first n)."""
    return tensordot_out(a, b, dims)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * (batch1 @ batch2) (batched; input broadcasts; beta 0 ignores
    input, NaN included)."""
    prod = bmm(batch1, batch2)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        carray.broadcast_shapes(input.array.shape, prod.array.shape)   # (still checked)
        return prod
    return add(prod, input if beta == 1 else input * beta)


def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal over dim1 and dim2 as the last dim (a copy, not a view)."""
    return diagonal_out(input, offset, dim1, dim2)


def diag(input, diagonal=0):
    """1-d input: the square matrix with input on its diagonal-th diagonal; 2-d input: that
    diagonal."""
    nd = input.array.ndim
    if nd == 2:
        return diagonal_out(input, diagonal, 0, 1)
    if nd != 1:
        raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + str(nd) + "D")
    m, k = input.array.shape[0], builtins.abs(diagonal)
    n = m + k
    a = input.array
    eye = wrap(carray.eye(m, dtype=a.dtype, device=a.device))
    sq = input.reshape(-1, 1) * eye if a.dtype.kind != "b" else Where.apply(
        carray.eye(m, dtype=carray.bool_, device=a.device), input.reshape(-1, 1),
        wrap(carray.zeros((), dtype=a.dtype, device=a.device)))
    if k == 0:
        return sq
    z_cols = wrap(carray.zeros((m, k), dtype=a.dtype, device=a.device))
    z_rows = wrap(carray.zeros((k, n), dtype=a.dtype, device=a.device))
    if diagonal > 0:
        return cat([cat([z_cols, sq], 1), z_rows], 0)
    return cat([z_rows, cat([sq, z_cols], 1)], 0)


def trace(input):
    """The sum of the main diagonal of a 2-d tensor."""
    if input.array.ndim != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim "
                           f"{input.array.ndim}")
    return diagonal_out(input).sum()


def lerp(input, end, weight):
    """input + weight * (end - input) (weight a number or a tensor; broadcasting)."""
    return add(input, mul(weight, sub(end, input)))


def _float_args(a, b):
    """a and b as op arguments, integer/bool tensors (when neither is float) converted to the
    default float (PyTorch's result dtype of atan2, hypot, logaddexp)."""
    a, b = promote_pair(tensor_arg(a), tensor_arg(b, a if isinstance(a, Tensor) else None))
    if float_result(a, b) is None:
        a = a.to(get_default_dtype()) if isinstance(a, Tensor) else float(a)
        b = b.to(get_default_dtype()) if isinstance(b, Tensor) else float(b)
    return a, b


def atan2(input, other):
    """The angle of (other, input), elementwise (arctan2)."""
    return Atan2.apply(*_float_args(input, other))


arctan2 = atan2


def _floats_only(name, a, b):
    """a, b promoted; NotImplementedError (PyTorch's) when neither is a float."""
    a, b = promote_pair(tensor_arg(a), tensor_arg(b, a if isinstance(a, Tensor) else None))
    if float_result(a, b) is None:
        t = a if isinstance(a, Tensor) else b
        dev = "cpu" if t.array.device == "cpu" else "cuda"
        raise NotImplementedError(f'"{name}_{dev}" not implemented for '
                                  f"'{scalar_type_name(t.array.dtype)}'")
    return a, b


def hypot(input, other):
    """sqrt(input^2 + other^2) elementwise. NotImplementedError for integer operands."""
    return Hypot.apply(*_floats_only("hypot", input, other))


def logaddexp(input, other):
    """log(exp(input) + exp(other)) elementwise, without overflow. NotImplementedError for
    integer operands."""
    return LogAddExp.apply(*_floats_only("logaddexp", input, other))


def fmod(input, other):
    """The C remainder input - trunc(input / other) * other (sign of input)."""
    return Fmod.apply(tensor_arg(input), tensor_arg(other, input))


asin = arcsin = _unary(Asin)
acos = arccos = _unary(Acos)
atan = arctan = _unary(Atan)
sinh = _unary(Sinh)
cosh = _unary(Cosh)
asinh = arcsinh = _unary(Asinh)
acosh = arccosh = _unary(Acosh)
atanh = arctanh = _unary(Atanh)
erf = _unary(Erf)
erfinv = _unary(Erfinv)


def addcmul(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 * tensor2."""
    prod = mul(tensor1, tensor2)
    return add(input, prod if value == 1 else mul(prod, value))


def addcdiv(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 / tensor2."""
    q = div(tensor1, tensor2)
    return add(input, q if value == 1 else mul(q, value))


MedianResult = collections.namedtuple("median", ["values", "indices"])


def median(input, dim=None, keepdim=False):
    """The lower median (NaN when there is one); with dim, (values, indices) along it."""
    if dim is None:
        flat = input.reshape(-1)
        n = flat.array.shape[0]
        if n == 0:
            return wrap(carray.full((), float("nan"), dtype=input.array.dtype,
                                    device=input.array.device))
        values, _ = Sort.apply(flat, 0, False, None)
        nan = is_floating(input.array.dtype) and bool(carray.any(carray.isnan(flat.array)))
        return values[n - 1 if nan else (n - 1) // 2]
    nd = input.array.ndim
    d = norm_dim(dim, nd)
    n = input.array.shape[d] if nd else 1
    if n == 0:
        raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
    values, indices = Sort.apply(input, d, False, None)
    if not nd:
        return MedianResult(values, indices)
    k = carray.full(tuple(1 if j == d else s for j, s in enumerate(input.array.shape)),
                    (n - 1) // 2, dtype=carray.int64, device=input.array.device)
    if is_floating(input.array.dtype):
        has_nan = carray.any(carray.isnan(input.array), axis=d, keepdims=True)
        k = carray.where(has_nan, n - 1, k).astype(carray.int64)
    key = along_dim_key(k, d)
    v, i = Index.apply(values, key), wrap(indices.array[key])
    if not keepdim:
        v, i = v.squeeze(d), i.squeeze(d)
    return MedianResult(v, i)


def cdist(x1, x2, p=2.0, compute_mode=None):
    """Pairwise p-norm distances between the rows of x1 (..., P, M) and x2 (..., R, M)."""
    if x1.array.ndim < 2 or x2.array.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: "
                           f"{x1.array.ndim}D")
    if x1.array.shape[-1] != x2.array.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.array.shape[-1]} X2: {x2.array.shape[-1]}")
    if not is_floating(x1.array.dtype) or not is_floating(x2.array.dtype):
        raise RuntimeError("cdist only supports floating-point dtypes, X1 got: "
                           f"{scalar_type_name(x1.array.dtype)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    return Cdist.apply(x1, x2, float(p))


def nonzero(input, *, as_tuple=False):
    """The int64 coordinates (N, ndim) of input's nonzero entries, in C order (as_tuple: one
    1-d tensor per dim)."""
    a = input.array
    shape = a.shape
    flat = carray.arange(a.size, dtype=carray.int64, device=a.device)[
        carray.not_equal(a, 0).reshape(-1)]
    coords = []
    step = a.size
    for n in shape:
        step = step // n if n else 1
        coords.append(carray.remainder(carray.floor_divide(flat, step), n) if n else flat)
    if as_tuple:
        if not shape:
            return (wrap(carray.zeros((flat.shape[0],), dtype=carray.int64, device=a.device)),)
        return tuple(wrap(c) for c in coords)
    if not coords:
        return wrap(carray.zeros((flat.shape[0], 0), dtype=carray.int64, device=a.device))
    return wrap(carray.stack(coords, axis=1))


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The sorted distinct values of input (flattened), with the index of each entry's value
    (return_inverse, input's shape) and each value's count (return_counts)."""
    if dim is not None:
        raise NotImplementedError("unique(): dim is not supported yet")
    a = input.array.reshape(-1)
    n = a.shape[0]
    s, order = sorted_along(a, 0, False)
    starts = carray.ones((n,), dtype=carray.bool_, device=a.device)
    if n > 1:
        starts[1:] = carray.not_equal(s[1:], s[:-1])
    values = wrap(s[starts])
    out = [values]
    if return_inverse:
        group = carray.subtract(carray.cumsum(starts.astype(carray.int64)), 1)
        inv = carray.zeros((n,), dtype=carray.int64, device=a.device)
        inv[order] = group
        out.append(wrap(inv.reshape(input.array.shape)))
    if return_counts:
        pos = carray.arange(n, dtype=carray.int64, device=a.device)[starts]
        ends = carray.concatenate([pos[1:], carray.full((1,), n, dtype=carray.int64,
                                                        device=a.device)]) if pos.shape[0] \
            else pos
        out.append(wrap(carray.subtract(ends, pos)))
    return out[0] if len(out) == 1 else tuple(out)


def bincount(input, weights=None, minlength=0):
    """The count (or the sum of weights) of each value of a 1-d non-negative int tensor."""
    a = input.array
    if a.ndim != 1 or a.dtype.kind not in "iu" or (a.size and int(carray.min(a)) < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("bincount(): minlength should be >= 0")
    if weights is not None and weights.array.shape != a.shape:
        raise RuntimeError("bincount(): weights should be 1-d and have the same length as "
                           "input")
    n = builtins.max(int(carray.max(a)) + 1 if a.size else 0, minlength)
    if weights is None:
        out = carray.zeros((n,), dtype=carray.int64, device=a.device)
        carray.add_at(out, (a,), 1)
    else:
        w = weights.array
        dt = w.dtype if is_floating(w.dtype) else carray.float64
        out = carray.zeros((n,), dtype=dt, device=a.device)
        carray.add_at(out, (a,), w.astype(dt))
    return wrap(out)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None):
    """For each value of input, the index in sorted_sequence (sorted along its last dim; leading
    dims match input's) where it would be inserted to keep the order (side 'left' or
    'right')."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites")
        right = side == "right"
    seq = sorted_sequence.array
    if sorter is not None:
        seq = seq[along_dim_key(sorter.array, seq.ndim - 1)]
    scalar = not isinstance(input, Tensor)
    v = carray.asarray(input, dtype=seq.dtype, device=seq.device) if scalar else input.array
    if seq.ndim > 1 and seq.shape[:-1] != v.shape[:-1]:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the "
                           "first N-1 dimensions of boundaries tensor and input value tensor "
                           "must match")
    cmp = carray.less_equal if right else carray.less
    if seq.ndim == 1:
        hits = cmp(seq, carray.expand_dims(v, -1))
    else:
        hits = cmp(carray.expand_dims(seq, -2), carray.expand_dims(v, -1))
    out = carray.sum(hits.astype(carray.int64), axis=-1)
    return wrap(out.astype(carray.int32) if out_int32 else out)


_FLOAT_MAX = {"float32": 3.4028234663852886e38, "float64": 1.7976931348623157e308,
              "float16": 65504.0, "bfloat16": 3.3895313892515355e38}


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """input with NaN, +inf and -inf replaced (by default: 0, the dtype's largest and lowest
    finite values); the gradient passes where input is finite."""
    a = input.array
    if not is_floating(a.dtype):
        return clone(input)
    big = _FLOAT_MAX[a.dtype.name]
    hi = big if posinf is None else posinf
    lo = -big if neginf is None else neginf
    out = Where.apply(carray.isnan(a), float(nan), input)
    out = Where.apply(carray.equal(a, float("inf")), float(hi), out)
    return Where.apply(carray.equal(a, float("-inf")), float(lo), out)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|input - other| <= atol + rtol * |other| elementwise (equal infinities are close; NaN
    only with equal_nan)."""
    a, b = data_of(input), data_of(other)
    if isinstance(b, carray.Array) and isinstance(a, carray.Array) and a.dtype != b.dtype:
        raise RuntimeError(f"{scalar_type_name(a.dtype)} did not match "
                           f"{scalar_type_name(b.dtype)}")
    eq = carray.equal(a, b)
    diff = carray.abs(carray.subtract(a, b)) if a.dtype.kind != "b" else \
        carray.not_equal(a, b).astype(carray.float32)
    close = carray.less_equal(diff, carray.add(atol, carray.multiply(rtol, carray.abs(b)))) \
        if a.dtype.kind != "b" else eq
    out = carray.logical_or(eq, carray.logical_and(close, carray.isfinite(diff)))
    if equal_nan and is_floating(a.dtype):
        out = carray.logical_or(out, carray.logical_and(carray.isnan(a), carray.isnan(b)))
    return wrap(out)


def bernoulli(input, p=None, *, generator=None):
    """0/1 samples, 1 with probability input (or p), in input's dtype."""
    return bernoulli_out(input, p, generator=generator)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None,
           requires_grad=False):
    """Samples of N(mean, std): tensors (broadcasting) or numbers with size."""
    out = normal_out(mean, std, size, generator=generator, dtype=dtype, device=device)
    return out.requires_grad_() if requires_grad else out


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """num_samples category indices drawn from each row of the weights input."""
    return multinomial_out(input, num_samples, replacement, generator=generator)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids of 1-d tensors ('ij': the first varies along dim 0; 'xy': the first
    two dims swapped)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    indexing = indexing or "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    for t in tensors:
        if t.array.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got: {t}")
    ts = [t.reshape(-1) for t in tensors]
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.array.shape[0] for t in ts)
    k = len(ts)
    grids = [t.reshape(tuple(-1 if j == i else 1 for j in range(k))).expand(shape)
             for i, t in enumerate(ts)]
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


__all__ += ["tril", "triu", "tril_indices", "triu_indices", "masked_fill", "roll", "scatter",
            "scatter_add", "index_add", "take_along_dim", "repeat_interleave", "einsum",
            "tensordot", "baddbmm", "diagonal", "diag", "trace", "lerp", "atan2", "arctan2",
            "hypot", "logaddexp", "fmod", "asin", "arcsin", "acos", "arccos", "atan", "arctan",
            "sinh", "cosh", "asinh", "arcsinh", "acosh", "arccosh", "atanh", "arctanh", "erf",
            "erfinv", "addcmul", "addcdiv", "median", "cdist", "nonzero", "unique", "bincount",
            "searchsorted", "nan_to_num", "isclose", "bernoulli", "normal", "multinomial",
            "meshgrid"]

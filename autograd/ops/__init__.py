"""The ops under PyTorch's names: module functions (autograd.exp(x)) and Tensor methods
(x.exp(), x + y, x.add_(y)). Each name maps to a Function from this package."""

import operator

import carray

from autograd import factories
from autograd._defaults import get_default_dtype
from autograd import function as _function_module
from autograd.function import _check_inplace_allowed
from autograd.grad_mode import _state
from autograd.ops import inplace as _inplace_mod
from autograd.ops._util import (along_dim_key, broadcasting, data_of, norm_dim, norm_dims,
                                wrap)
from autograd.ops.arith import (Abs, Add, Ceil, Clamp, Cos, Div, Exp, Expm1, Floor, FloorDivide,
                                Log, Log1p, Maximum, Minimum, Mul, Neg, Pow, Relu, Remainder,
                                Sigmoid, Sign, Sin, Sqrt, Sub, Tanh, TruncDivide, Where,
                                _CATEGORY, promote_pair)
from autograd.ops.inplace import inplace, raw_binary
from autograd.ops.reduce import (AmaxDims, LogSoftmax, LogSumExp, MatMul, MaxAll, MaxDim, Mean,
                                 MaxValues, MinValues, Prod, Softmax, StdSqrt, Sum,
                                 Var)
from autograd.ops.shape import (Cat, Clone, Expand, Flip, Index, IndexPut, Pad, Permute, Reshape,
                                Squeeze, Stack, ToCopy, Transpose, Unsqueeze, index_key, is_basic)
from autograd.ops.sort import (Cumprod, Cumsum, Sort, SortResult, TopkResult,
                               sorted_along as _sorted_along)
from autograd.tensor import Tensor

def _tensor_arg(x, like=None):
    """A Tensor or a Python number as an op argument (other objects become tensors)."""
    if isinstance(x, (Tensor, int, float, bool)):
        return x
    return Tensor(x, dtype=None, device=like.data.device if like is not None else None)


# ---------------------------------------------------------------------------------------------
# arithmetic
# ---------------------------------------------------------------------------------------------

def add(input, other, *, alpha=1):
    """input + alpha * other (broadcasting)."""
    if alpha != 1:
        other = mul(other, alpha)
    return Add.apply(_tensor_arg(input), _tensor_arg(other, input))


def sub(input, other, *, alpha=1):
    """input - alpha * other (broadcasting)."""
    if alpha != 1:
        other = mul(other, alpha)
    return Sub.apply(_tensor_arg(input), _tensor_arg(other, input))


def mul(input, other):
    """input * other (broadcasting)."""
    return Mul.apply(_tensor_arg(input), _tensor_arg(other, input))


def div(input, other, *, rounding_mode=None):
    """input / other (true division; rounding_mode 'floor' or 'trunc' give no gradient)."""
    if rounding_mode is None:
        return Div.apply(_tensor_arg(input), _tensor_arg(other, input))
    if rounding_mode == "floor":
        return FloorDivide.apply(_tensor_arg(input), _tensor_arg(other, input))
    if rounding_mode == "trunc":
        return TruncDivide.apply(_tensor_arg(input), _tensor_arg(other, input))
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                       f"found '{rounding_mode}'")


def remainder(input, other):
    """input % other with the sign of other (Python's convention, torch.remainder)."""
    return Remainder.apply(_tensor_arg(input), _tensor_arg(other, input))


def floor_divide(input, other):
    """input // other (rounded down; zero gradient)."""
    return FloorDivide.apply(_tensor_arg(input), _tensor_arg(other, input))


def pow(input, exponent):
    """input ** exponent (either may be a number)."""
    a, b = promote_pair(_tensor_arg(input),
                        _tensor_arg(exponent, input if isinstance(input, Tensor) else None))
    return Pow.apply(a, b)


def neg(input):
    return Neg.apply(input)


def matmul(input, other):
    """Matrix product with NumPy's rules (1-d operands, batch broadcasting)."""
    return MatMul.apply(input, other)


def mm(input, mat2):
    """Matrix product of two 2-d tensors."""
    if input.data.ndim != 2 or mat2.data.ndim != 2:
        raise RuntimeError(f"mm: expected 2D tensors, got {input.data.ndim}D and "
                           f"{mat2.data.ndim}D")
    return MatMul.apply(input, mat2)


def bmm(input, mat2):
    """Batched matrix product of two 3-d tensors (no broadcasting)."""
    if input.data.ndim != 3 or mat2.data.ndim != 3:
        raise RuntimeError(f"bmm: expected 3D tensors, got {input.data.ndim}D and "
                           f"{mat2.data.ndim}D")
    if input.data.shape[0] != mat2.data.shape[0]:
        raise RuntimeError(f"bmm: batch sizes differ: {input.data.shape[0]} and "
                           f"{mat2.data.shape[0]}")
    return MatMul.apply(input, mat2)


def dot(input, other):
    """Inner product of two 1-d tensors."""
    if input.data.ndim != 1 or other.data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.data.ndim}D and "
                           f"{other.data.ndim}D tensors")
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
    if isinstance(condition, Tensor) and condition.data.dtype.kind != "b":
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {_function_module.scalar_type_name(condition.dtype)}")
    return Where.apply(condition, *promote_pair(_tensor_arg(input), _tensor_arg(other)))


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


def _unary(fn_class, to_float=False):
    """The op function of a one-input Function; to_float: integer and bool inputs are first
    converted to the default float dtype (as PyTorch does for exp, log, ...)."""
    def op(input):
        if to_float and input.data.dtype.kind != "f":
            input = input.to(get_default_dtype())
        return fn_class.apply(input)
    op.__name__ = fn_class.__name__.lower()
    op.__doc__ = fn_class.__doc__
    return op


exp = _unary(Exp, to_float=True)
expm1 = _unary(Expm1, to_float=True)
log = _unary(Log, to_float=True)
log1p = _unary(Log1p, to_float=True)
sqrt = _unary(Sqrt, to_float=True)
sin = _unary(Sin, to_float=True)
cos = _unary(Cos, to_float=True)
tanh = _unary(Tanh, to_float=True)
sigmoid = _unary(Sigmoid, to_float=True)
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
    return wrap(carray.logical_not(input.data))


def _float_result(*args):
    """The float dtype PyTorch gives a result of these (promoted) operands, or None."""
    dtype = None
    for x in args:
        if isinstance(x, Tensor) and x.data.dtype.kind == "f":
            return x.data.dtype
        if isinstance(x, float):
            dtype = get_default_dtype()
    return dtype


def _check_integral(name, *args):
    """PyTorch's NotImplementedError when bitwise op `name` would compute in a float type."""
    dtype = _float_result(*args)
    if dtype is not None:
        dev = next((x.data.device for x in args if isinstance(x, Tensor)), "cpu")
        raise NotImplementedError(f'"{name}_{"cpu" if dev == "cpu" else "cuda"}" not '
                                  f"implemented for '{_function_module.scalar_type_name(dtype)}'")


def _bitwise(fn, doc):
    """A bitwise op of bool and integer tensors (or Python numbers): PyTorch's result dtype,
    no gradient, NotImplementedError for float operands."""
    def op(input, other):
        a, b = promote_pair(_tensor_arg(input),
                            _tensor_arg(other, input if isinstance(input, Tensor) else None))
        _check_integral(fn.__name__, a, b)
        return wrap(broadcasting(fn, data_of(a), data_of(b)))
    op.__name__ = fn.__name__
    op.__doc__ = doc
    return op


bitwise_and = _bitwise(carray.bitwise_and, "input & other bitwise (bool: logical and).")
bitwise_or = _bitwise(carray.bitwise_or, "input | other bitwise (bool: logical or).")
bitwise_xor = _bitwise(carray.bitwise_xor, "input ^ other bitwise (bool: logical xor).")


def bitwise_not(input):
    """~input bitwise (bool: logical not); NotImplementedError for float tensors."""
    _check_integral("bitwise_not", input)
    return wrap(carray.invert(input.data))


def _invert(self):
    """~self; TypeError for float tensors (PyTorch's operator check)."""
    if self.data.dtype.kind == "f":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return bitwise_not(self)


def isnan(input):
    return wrap(carray.isnan(input.data))


def isfinite(input):
    return wrap(carray.isfinite(input.data))


def isinf(input):
    return wrap(carray.logical_not(carray.logical_or(carray.isfinite(input.data),
                                                     carray.isnan(input.data))))


def trunc(input):
    """input rounded towards zero (zero gradient)."""
    return where(input < 0, ceil(input), floor(input)) if input.data.dtype.kind == "f" \
        else clone(input)


def round(input, *, decimals=0):
    """input rounded to the nearest integer, halves to even (as PyTorch); zero gradient."""
    if input.data.dtype.kind != "f":
        return clone(input)
    x = input * 10.0 ** decimals if decimals else input
    low = floor(x)
    diff = x.data - low.data
    up = carray.logical_or(carray.greater(diff, 0.5), carray.logical_and(
        carray.equal(diff, 0.5), carray.equal(carray.remainder(low.data, 2), 1)))
    out = low + wrap(up.astype(low.data.dtype))
    return out / 10.0 ** decimals if decimals else out


def equal(input, other):
    """True when both have the same shape and elements."""
    return input.shape == other.shape and bool(carray.all(carray.equal(input.data, other.data)))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = input.data, other.data
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
    if input.data.dtype.kind != "f":
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
    a = input.data
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
    axis = dim if dim is None or dim == () else norm_dims(dim, input.data.ndim)
    return wrap(carray.all(input.data, axis=axis, keepdims=keepdim))


def any(input, dim=None, keepdim=False):
    axis = dim if dim is None or dim == () else norm_dims(dim, input.data.ndim)
    return wrap(carray.any(input.data, axis=axis, keepdims=keepdim))


def _cumulative(fn_class, input, dim, dtype):
    """fn_class (Cumsum or Cumprod) applied to input cast to dtype (bool and ints: int64)."""
    if dtype is None and input.data.dtype.kind in "biu":
        dtype = carray.int64
    if dtype is not None and carray.dtype(dtype) != input.data.dtype:
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
    a = input.data
    return wrap(_sorted_along(a, norm_dim(dim, a.ndim), descending)[1])


def topk(input, k, dim=-1, largest=True, sorted=True):
    """The k largest (or smallest) entries along dim and their indices: a namedtuple `topk`.
    NaN counts as the largest value; the values always come sorted, ties in their original
    order (PyTorch may order tied indices differently; the values are the same). Raises
    RuntimeError when k is not in [0, size of dim] or input is bool, IndexError for a bad
    dim."""
    a = input.data
    d = norm_dim(dim, a.ndim)
    if a.dtype.kind == "b":
        raise RuntimeError("topk does not support bool dtypes")
    if not 0 <= k <= (a.shape[d] if a.ndim else 1):
        raise RuntimeError("selected index k out of range")
    values, indices = Sort.apply(input, d, largest, k)
    return TopkResult(values, indices)


def logsumexp(input, dim, keepdim=False):
    """log(sum(exp(input))) over dim, computed stably (integer inputs give the default float)."""
    if input.data.dtype.kind != "f":
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


def norm(input, p=2, dim=None, keepdim=False):
    """The p-norm (p = 2, 1 or inf) over dim."""
    if p == 2 or p == "fro":
        return sqrt(sum(input * input, dim, keepdim))
    if p == 1:
        return sum(abs(input), dim, keepdim)
    if p == float("inf"):
        return amax(abs(input), dim if dim is not None else (), keepdim)
    return pow(sum(pow(abs(input), p), dim, keepdim), 1.0 / p)


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
    nd = input.data.ndim
    if nd == 0:
        return reshape(input, (1,))
    s, e = norm_dim(start_dim, nd), norm_dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shp = input.data.shape
    n = 1
    for k in shp[s:e + 1]:
        n *= k
    return reshape(input, shp[:s] + (n,) + shp[e + 1:])


def _common_dtype(tensors):
    """tensors cast (differentiably) to the dtype PyTorch gives their concatenation: the highest
    category (bool < int < float) and, within it, the promotion of those dtypes."""
    tensors = list(tensors)
    dtypes = {t.data.dtype for t in tensors}
    if len(dtypes) < 2:
        return tensors
    top = _builtins.max(_CATEGORY[d.kind] for d in dtypes)  # (max here is the tensor op)
    target = None
    for d in dtypes:
        if _CATEGORY[d.kind] == top:
            target = d if target is None else carray.promote_types(target, d)
    return [t if t.data.dtype is target else t.to(target) for t in tensors]


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
    d = norm_dim(dim, tensor.data.ndim)
    n = tensor.data.shape[d]
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        if size <= 0 and n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {n}")
        sizes = [size] * (n // size) + ([n % size] if n % size else []) if size else [0]
    else:
        sizes = list(split_size_or_sections)
        if builtins_sum(sizes) != n:
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
    n = input.data.shape[norm_dim(dim, input.data.ndim)]
    size = -(-n // chunks) if chunks > 0 else 0
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    return split(input, size or 1, dim)


def unbind(input, dim=0):
    d = norm_dim(dim, input.data.ndim)
    return tuple(_multi_output_view(input[(slice(None),) * d + (i,)], "Unbind", i)
                 for i in range(input.data.shape[d]))


def narrow(input, dim, start, length):
    """The view of length elements from start along dim (a negative start counts from the
    end); RuntimeError when they do not fit."""
    d = norm_dim(dim, input.data.ndim)
    n = input.data.shape[d]
    if start < 0:
        start += n
    if not 0 <= start <= n or length < 0 or start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return input[(slice(None),) * d + (slice(start, start + length),)]


def unflatten(input, dim, sizes):
    """dim split into the given sizes (one may be -1)."""
    d = norm_dim(dim, input.data.ndim)
    shp = input.data.shape
    return reshape(input, shp[:d] + tuple(sizes) + shp[d + 1:])


def index_select(input, dim, index):
    """The entries of input at the 1-d integer tensor index along dim."""
    d = norm_dim(dim, input.data.ndim)
    if index.data.ndim > 1 or index.data.dtype.kind not in "iu":
        raise IndexError("index_select(): Index is supposed to be a vector of integers")
    return input[(slice(None),) * d + (index.reshape(-1),)]


def gather(input, dim, index):
    """out[i][j][k] = input[index[i][j][k]][j][k] (for dim 0, and so on);  the gradient adds
    back into the gathered places."""
    nd = input.data.ndim
    d = norm_dim(dim, nd)
    idx = index.data
    if idx.dtype.kind not in "iu":
        raise RuntimeError("gather(): Expected dtype int64 for index")
    if idx.ndim != nd:
        raise RuntimeError("Index tensor must have the same number of dimensions as input "
                           "tensor")
    for k in range(nd):
        if k != d and idx.shape[k] > input.data.shape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index "
                               f"{list(idx.shape)} to be no larger than self "
                               f"{list(input.data.shape)} apart from dimension {d}")
    return Index.apply(input, along_dim_key(idx, d))


def masked_select(input, mask):
    """The 1-d tensor of input's entries where mask (broadcast with input) is True."""
    shape = carray.broadcast_shapes(input.data.shape, mask.data.shape)
    return input.expand(shape)[mask.expand(shape).data]


import builtins as _builtins  # noqa: E402  (sum and max are shadowed above)

builtins_sum = _builtins.sum


# ---------------------------------------------------------------------------------------------
# Tensor methods
# ---------------------------------------------------------------------------------------------

def _method_to(self, *args, **kwargs):
    """to(device), to(dtype), to(device, dtype), to(other): a converted copy (self when nothing
    changes), differentiable."""
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    kwargs.pop("non_blocking", None)
    kwargs.pop("copy", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, str) and a.split(":")[0] in ("cpu", "gpu", "cuda", "opencl"):
            device = a
        elif a is not None:
            dtype = a
    if dtype is not None:
        dtype = carray.dtype(dtype)
        if dtype == self.data.dtype:
            dtype = None
    if device is not None:
        device = str(device).split(":")[0]
        if device == self.data.device:
            device = None
    if dtype is None and device is None:
        return self
    return ToCopy.apply(self, dtype, device)


def _getitem(self, key):
    return Index.apply(self, index_key(key))


def _setitem(self, key, value):
    key = index_key(key)
    if _inplace_mod.records(self, value):
        _check_inplace_allowed(self)
        if not isinstance(value, Tensor):
            value = wrap(carray.asarray(value, dtype=self.data.dtype, device=self.data.device))
        try:
            new = IndexPut.apply(self, key, value)
        except ValueError as e:  # a value that does not broadcast: RuntimeError, as PyTorch
            raise RuntimeError(str(e)) from None
        _inplace_mod.commit(self, new)
        return
    try:
        self.data[key] = data_of(value) if not isinstance(value, Tensor) else value.data
    except ValueError as e:
        raise RuntimeError(str(e)) from None
    self._vc[0] += 1


def _view(self, *shape):
    if len(shape) == 1 and not isinstance(shape[0], (tuple, list, int)):
        return self.to(shape[0])  # view(dtype) is not supported beyond a same-size cast
    return Reshape.apply(self, shape_arg(shape), True)


def shape_arg(shape):
    return shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape


def _expand(self, *sizes):
    return Expand.apply(self, tuple(shape_arg(sizes)))


def _permute(self, *dims):
    return Permute.apply(self, tuple(shape_arg(dims)))


def _repeat(self, *sizes):
    sizes = tuple(shape_arg(sizes))
    x = self
    if len(sizes) < x.data.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    x = x.reshape((1,) * (len(sizes) - x.data.ndim) + x.data.shape)
    shp = x.data.shape
    inter = []
    final = []
    for r, n in zip(sizes, shp):
        inter += [r, n]
        final.append(r * n)
    expanded = x.reshape(tuple(v for n in shp for v in (1, n))).expand(tuple(inter))
    return expanded.reshape(tuple(final))


def _t(self):
    if self.data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{self.data.ndim}D")
    return self.transpose(0, 1) if self.data.ndim == 2 else self


def _contiguous(self):
    return self if self.data.flags.c_contiguous else Clone.apply(self)


def _masked_fill(self, mask, value):
    """self with value where mask is True; keeps self's dtype (as PyTorch)."""
    out = Where.apply(mask, _tensor_arg(value), self)
    return out if out.data.dtype == self.data.dtype else out.to(self.data.dtype)


def _inplace_binary(op_class, carray_fn, saves_self):
    def method(self, other, *, alpha=1):
        if alpha != 1:
            other = other * alpha
        return inplace(self, lambda src: op_class.apply(src, other),
                       raw_binary(carray_fn, self, other), (other,), saves_self)
    method.__name__ = carray_fn.__name__ + "_"
    return method


def _inplace_unary(op_class, carray_fn):
    def method(self):
        return inplace(self, lambda src: op_class.apply(src),
                       lambda: carray_fn(self.data, out=self.data), (), True)
    method.__name__ = carray_fn.__name__ + "_"
    return method


def _inplace_bitwise(op):
    """self op= other for a bitwise op: RuntimeError when the result type cannot be written into
    self (an int result into bool, a float one into an int), NotImplementedError for a float
    self (as PyTorch)."""
    def method(self, other):
        a, b = promote_pair(self, _tensor_arg(other, self))
        result = _float_result(a, b) or carray.result_type(a.data, data_of(b))
        if _CATEGORY[result.kind] > _CATEGORY[self.data.dtype.kind]:  # (int64 into int32 is fine)
            name = _function_module.scalar_type_name
            raise RuntimeError(f"result type {name(result)} can't be cast to the desired output "
                               f"type {name(self.data.dtype)}")
        _check_integral(op.__name__, self)
        return inplace(self, lambda src: op(src, other),
                       raw_binary(getattr(carray, op.__name__), self, other), (other,))
    method.__name__ = op.__name__ + "_"
    return method


def _bitwise_not_(self):
    _check_integral("bitwise_not", self)
    return inplace(self, bitwise_not, lambda: carray.invert(self.data, out=self.data), ())


def _zero_(self):
    return inplace(self, lambda src: Mul.apply(src, 0.0), lambda: self.data.fill(0), ())


def _fill_(self, value):
    v = value.item() if isinstance(value, Tensor) and not value._rg else value
    if isinstance(v, Tensor):
        return inplace(self, lambda src: Add.apply(Mul.apply(src, 0.0), v), None, (v,))
    return inplace(self, lambda src: Add.apply(Mul.apply(src, 0.0), v),
                   lambda: self.data.fill(v), ())


def _copy_(self, src, non_blocking=False):
    def raw():
        value = src.data if isinstance(src, Tensor) else carray.asarray(src)
        if value.device != self.data.device:
            value = value.to(self.data.device)
        self.data[...] = value
    return inplace(self, lambda dst: Add.apply(Mul.apply(dst, 0.0),
                                               ToCopy.apply(src, self.data.dtype, None)
                                               if src.dtype != self.dtype else src).to(self.dtype),
                   raw, (src,))


def _clamp_(self, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    return inplace(self, lambda src: Clamp.apply(src, min, max),
                   lambda: carray.clip(self.data, data_of(min), data_of(max), out=self.data),
                   (min, max), True)


def _masked_fill_(self, mask, value):
    return inplace(self, lambda src: Where.apply(mask, _tensor_arg(value), src),
                   lambda: self.data.__setitem__(data_of(mask), data_of(value)), (value,))


def _random_fill(kind):
    def method(self, a=None, b=None, *, generator=None):
        with _no_record():
            new = factories._random_array(kind, self.data.shape, self.data.dtype,
                                          self.data.device, a, b, generator)
            self.data[...] = new
            self._vc[0] += 1
        return self
    method.__name__ = kind + "_"
    return method


class _no_record:
    def __enter__(self):
        self.prev = _state.enabled
        _state.enabled = False

    def __exit__(self, *exc):
        _state.enabled = self.prev


def _reflected(fn):
    def method(self, other):
        return fn(_tensor_arg(other, self), self)
    return method


def _new_factory(name):
    def method(self, *size, dtype=None, device=None, requires_grad=False, fill_value=None):
        dtype = dtype or self.data.dtype
        device = device or self.data.device
        if name == "new_full":
            size, fill_value = size[0], size[1]
            return factories.full(size, fill_value, dtype=dtype, device=device,
                                  requires_grad=requires_grad)
        if name == "new_tensor":
            return factories.tensor(size[0], dtype=dtype, device=device,
                                    requires_grad=requires_grad)
        return getattr(factories, name[4:])(*size, dtype=dtype, device=device,
                                            requires_grad=requires_grad)
    method.__name__ = name
    return method


def _type_cast(dtype):
    def method(self):
        return self.to(dtype)
    return method


_METHODS = {
    # arithmetic and math
    "add": add, "sub": sub, "mul": mul, "div": div, "pow": pow, "neg": neg, "matmul": matmul,
    "mm": mm, "bmm": bmm, "dot": dot, "outer": outer,
    "maximum": maximum, "minimum": minimum, "clamp": clamp, "clip": clamp,
    "clamp_min": clamp_min, "clamp_max": clamp_max, "remainder": remainder,
    "floor_divide": floor_divide,
    "exp": exp, "expm1": expm1, "log": log, "log1p": log1p, "log2": log2, "log10": log10,
    "sqrt": sqrt, "rsqrt": rsqrt, "sin": sin, "cos": cos, "tanh": tanh, "sigmoid": sigmoid,
    "relu": relu, "abs": abs, "sign": sign, "floor": floor, "ceil": ceil,
    "reciprocal": reciprocal, "square": square, "masked_fill": _masked_fill,
    "multiply": mul, "subtract": sub, "divide": div, "true_divide": div, "negative": neg,
    "absolute": abs, "where": lambda self, cond, other: where(cond, self, other),
    # comparisons
    "eq": eq, "ne": ne, "lt": lt, "le": le, "gt": gt, "ge": ge, "isnan": isnan,
    "isfinite": isfinite, "isinf": isinf, "logical_and": logical_and, "logical_or": logical_or,
    "logical_xor": logical_xor, "trunc": trunc, "round": round,
    "__contains__": lambda self, item: bool(any(eq(self, item))),
    "logical_not": logical_not, "equal": equal, "allclose": allclose,
    "bitwise_and": bitwise_and, "bitwise_or": bitwise_or, "bitwise_xor": bitwise_xor,
    "bitwise_not": bitwise_not,
    # reductions
    "sum": sum, "mean": mean, "var": var, "std": std, "prod": prod, "max": max, "min": min,
    "amax": amax, "amin": amin, "argmax": argmax, "argmin": argmin, "all": all, "any": any,
    "logsumexp": logsumexp, "softmax": softmax, "log_softmax": log_softmax, "norm": norm,
    # cumulative and sorting
    "cumsum": cumsum, "cumprod": cumprod, "sort": sort, "argsort": argsort, "topk": topk,
    # shape
    "reshape": lambda self, *shape: reshape(self, shape_arg(shape)), "view": _view,
    "permute": _permute, "transpose": transpose, "swapaxes": transpose, "squeeze": squeeze,
    "unsqueeze": unsqueeze, "flatten": flatten, "expand": _expand,
    "expand_as": lambda self, other: _expand(self, other.shape),
    "view_as": lambda self, other: _view(self, other.shape),
    "reshape_as": lambda self, other: reshape(self, other.shape),
    "repeat": _repeat, "flip": lambda self, *dims: flip(self, shape_arg(dims)),
    "t": _t, "contiguous": _contiguous, "clone": clone, "split": split, "chunk": chunk,
    "unbind": unbind, "narrow": narrow, "to": _method_to, "unflatten": unflatten,
    "index_select": index_select, "gather": gather, "masked_select": masked_select,
    "cpu": lambda self: _method_to(self, "cpu"),
    "float": _type_cast(carray.float32), "double": _type_cast(carray.float64),
    "long": _type_cast(carray.int64), "int": _type_cast(carray.int32),
    "bool": _type_cast(carray.bool_),
    "type_as": lambda self, other: _method_to(self, other.dtype),
    "__getitem__": _getitem, "__setitem__": _setitem,
    # operators
    "__add__": lambda self, other: Add.apply(self, other),
    "__radd__": lambda self, other: Add.apply(other, self),
    "__sub__": lambda self, other: Sub.apply(self, other),
    "__rsub__": lambda self, other: Sub.apply(other, self),
    "__mul__": lambda self, other: Mul.apply(self, other),
    "__rmul__": lambda self, other: Mul.apply(other, self),
    "__truediv__": lambda self, other: Div.apply(self, other),
    "__rtruediv__": lambda self, other: Div.apply(other, self),
    "__pow__": pow, "__rpow__": _reflected(pow),
    "__matmul__": matmul, "__rmatmul__": _reflected(matmul), "__neg__": neg,
    "__pos__": lambda self: self, "__abs__": abs,
    "__floordiv__": floor_divide, "__rfloordiv__": _reflected(floor_divide),
    "__mod__": remainder, "__rmod__": _reflected(remainder),
    "__eq__": eq, "__ne__": ne, "__lt__": lt, "__le__": le, "__gt__": gt, "__ge__": ge,
    "__and__": bitwise_and, "__rand__": _reflected(bitwise_and),
    "__or__": bitwise_or, "__ror__": _reflected(bitwise_or),
    "__xor__": bitwise_xor, "__rxor__": _reflected(bitwise_xor), "__invert__": _invert,
    # in place
    "add_": _inplace_binary(Add, carray.add, False),
    "sub_": _inplace_binary(Sub, carray.subtract, False),
    "mul_": _inplace_binary(Mul, carray.multiply, True),
    "div_": _inplace_binary(Div, carray.divide, True),
    "pow_": _inplace_binary(Pow, carray.power, True),
    "exp_": _inplace_unary(Exp, carray.exp), "log_": _inplace_unary(Log, carray.log),
    "sqrt_": _inplace_unary(Sqrt, carray.sqrt), "abs_": _inplace_unary(Abs, carray.abs),
    "neg_": _inplace_unary(Neg, carray.negative), "relu_": _inplace_unary(Relu, carray.relu),
    "sigmoid_": _inplace_unary(Sigmoid, carray.sigmoid),
    "tanh_": _inplace_unary(Tanh, carray.tanh),
    "bitwise_and_": _inplace_bitwise(bitwise_and), "bitwise_or_": _inplace_bitwise(bitwise_or),
    "bitwise_xor_": _inplace_bitwise(bitwise_xor), "bitwise_not_": _bitwise_not_,
    "zero_": _zero_, "fill_": _fill_, "copy_": _copy_, "clamp_": _clamp_, "clip_": _clamp_,
    "masked_fill_": _masked_fill_,
    "uniform_": _random_fill("uniform"), "normal_": _random_fill("normal"),
    "new_zeros": _new_factory("new_zeros"), "new_ones": _new_factory("new_ones"),
    "new_empty": _new_factory("new_empty"), "new_full": _new_factory("new_full"),
    "new_tensor": _new_factory("new_tensor"),
}
_METHODS["__iadd__"] = _METHODS["add_"]
_METHODS["__isub__"] = _METHODS["sub_"]
_METHODS["__imul__"] = _METHODS["mul_"]
_METHODS["__itruediv__"] = _METHODS["div_"]
_METHODS["__iand__"] = _METHODS["bitwise_and_"]
_METHODS["__ior__"] = _METHODS["bitwise_or_"]
_METHODS["__ixor__"] = _METHODS["bitwise_xor_"]

for _name, _fn in _METHODS.items():
    setattr(Tensor, _name, _fn)


Tensor.T = property(lambda self: self.permute(tuple(range(self.data.ndim - 1, -1, -1))))
Tensor.mT = property(lambda self: self.transpose(-2, -1))

"""Tensor's op methods, under PyTorch's names: x.exp(), x + y, x.add_(y), x[i] = v, x.T.

This is the one place Tensor gets its ops: METHODS maps each method name to its function (most
are the torch.* functions of ops/torch_functions.py; in-place ops, operators and conversions are
defined here) and the loop at the end sets them on the class, once, when autograd.ops is first
imported (which `import autograd` does). tensor.py cannot import them itself: every op is a
Function, a layer above Tensor. autograd/tensor.pyi lists every method for IDEs and type
checkers (tests/autograd/test_layering.py checks that it matches METHODS).
"""

import carray
from autograd import factories
from autograd._defaults import is_floating, scalar_type_name
from autograd.function import _check_inplace_allowed
from autograd.grad_mode import no_grad
from autograd.ops import factorizations
from autograd.ops import torch_functions as tensor_functions
from autograd.ops._util import data_of, wrap
from autograd.ops.elementwise import (
    _CATEGORY,
    Abs,
    Add,
    Clamp,
    Div,
    Exp,
    Log,
    Mul,
    Neg,
    Pow,
    Relu,
    Sigmoid,
    Sqrt,
    Sub,
    Tanh,
    Where,
    promote_pair,
)
from autograd.ops.inplace import commit, inplace, raw_binary, records
from autograd.ops.shape import Clone, Expand, Index, IndexPut, Permute, Reshape, ToCopy, index_key
from autograd.ops.tensor_type import tensor_cuda, tensor_type
from autograd.ops.torch_functions import (
    abs,
    add,
    all,
    allclose,
    amax,
    amin,
    any,
    argmax,
    argmin,
    argsort,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    bmm,
    ceil,
    check_integral,
    chunk,
    clamp,
    clamp_max,
    clamp_min,
    clone,
    cos,
    cumprod,
    cumsum,
    div,
    dot,
    eq,
    equal,
    exp,
    expm1,
    flatten,
    flip,
    float_result,
    floor,
    floor_divide,
    gather,
    ge,
    gt,
    index_select,
    isfinite,
    isinf,
    isnan,
    le,
    log,
    log1p,
    log2,
    log10,
    log_softmax,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    logsumexp,
    lt,
    masked_select,
    matmul,
    max,
    maximum,
    mean,
    min,
    minimum,
    mm,
    mul,
    narrow,
    ne,
    neg,
    norm,
    outer,
    pow,
    prod,
    reciprocal,
    relu,
    remainder,
    reshape,
    round,
    rsqrt,
    sigmoid,
    sign,
    sin,
    softmax,
    sort,
    split,
    sqrt,
    square,
    squeeze,
    std,
    sub,
    sum,
    tanh,
    tensor_arg,
    topk,
    transpose,
    trunc,
    unbind,
    unflatten,
    unsqueeze,
    var,
    where,
)
from autograd.tensor import Tensor, device_name

__all__ = ["METHODS"]


def _invert(self):
    """~self; TypeError for float tensors (PyTorch's operator check)."""
    if is_floating(self.array.dtype):
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return bitwise_not(self)


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
        if dtype == self.array.dtype:
            dtype = None
    if device is not None:
        device = device_name(device)
        if device == self.array.device:
            device = None
    if dtype is None and device is None:
        return self
    return ToCopy.apply(self, dtype, device)


def _getitem(self, key):
    return Index.apply(self, index_key(key))


def _setitem(self, key, value):
    key = index_key(key)
    if records(self, value):
        _check_inplace_allowed(self)
        if not isinstance(value, Tensor):
            value = wrap(carray.asarray(value, dtype=self.array.dtype, device=self.array.device))
        try:
            new = IndexPut.apply(self, key, value)
        except ValueError as e:  # a value that does not broadcast: RuntimeError, as PyTorch
            raise RuntimeError(str(e)) from None
        commit(self, new)
        return
    try:
        self.array[key] = data_of(value) if not isinstance(value, Tensor) else value.array
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
    if len(sizes) < x.array.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    x = x.reshape((1,) * (len(sizes) - x.array.ndim) + x.array.shape)
    shp = x.array.shape
    inter = []
    final = []
    for r, n in zip(sizes, shp):
        inter += [r, n]
        final.append(r * n)
    expanded = x.reshape(tuple(v for n in shp for v in (1, n))).expand(tuple(inter))
    return expanded.reshape(tuple(final))


def _t(self):
    if self.array.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{self.array.ndim}D")
    return self.transpose(0, 1) if self.array.ndim == 2 else self


def _contiguous(self):
    return self if self.array.flags.c_contiguous else Clone.apply(self)


def _masked_fill(self, mask, value):
    """self with value where mask is True; keeps self's dtype (as PyTorch)."""
    out = Where.apply(mask, tensor_arg(value), self)
    return out if out.array.dtype == self.array.dtype else out.to(self.array.dtype)


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
                       lambda: carray_fn(self.array, out=self.array), (), True)
    method.__name__ = carray_fn.__name__ + "_"
    return method


def _inplace_bitwise(op):
    """self op= other for a bitwise op: RuntimeError when the result type cannot be written into
    self (an int result into bool, a float one into an int), NotImplementedError for a float
    self (as PyTorch)."""
    def method(self, other):
        a, b = promote_pair(self, tensor_arg(other, self))
        result = float_result(a, b) or carray.result_type(a.array, data_of(b))
        if _CATEGORY[result.kind] > _CATEGORY[self.array.dtype.kind]:  # (int64 into int32 is fine)
            name = scalar_type_name
            raise RuntimeError(f"result type {name(result)} can't be cast to the desired output "
                               f"type {name(self.array.dtype)}")
        check_integral(op.__name__, self)
        return inplace(self, lambda src: op(src, other),
                       raw_binary(getattr(carray, op.__name__), self, other), (other,))
    method.__name__ = op.__name__ + "_"
    return method


def _bitwise_not_(self):
    check_integral("bitwise_not", self)
    return inplace(self, bitwise_not, lambda: carray.invert(self.array, out=self.array), ())


def _zero_(self):
    return inplace(self, lambda src: Mul.apply(src, 0.0), lambda: self.array.fill(0), ())


def _fill_(self, value):
    v = value.item() if isinstance(value, Tensor) and not value._rg else value
    if isinstance(v, Tensor):
        return inplace(self, lambda src: Add.apply(Mul.apply(src, 0.0), v), None, (v,))
    return inplace(self, lambda src: Add.apply(Mul.apply(src, 0.0), v),
                   lambda: self.array.fill(v), ())


def _copy_(self, src, non_blocking=False):
    def raw():
        value = src.array if isinstance(src, Tensor) else carray.asarray(src)
        if value.device != self.array.device:
            value = value.to(self.array.device)
        self.array[...] = value
    return inplace(self, lambda dst: Add.apply(Mul.apply(dst, 0.0),
                                               ToCopy.apply(src, self.array.dtype, None)
                                               if src.dtype != self.dtype else src).to(self.dtype),
                   raw, (src,))


def _clamp_(self, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    return inplace(self, lambda src: Clamp.apply(src, min, max),
                   lambda: carray.clip(self.array, data_of(min), data_of(max), out=self.array),
                   (min, max), True)


def _masked_fill_(self, mask, value):
    return inplace(self, lambda src: Where.apply(mask, tensor_arg(value), src),
                   lambda: self.array.__setitem__(data_of(mask), data_of(value)), (value,))


def _random_fill(kind):
    def method(self, a=None, b=None, *, generator=None):
        with no_grad():
            new = factories._random_array(kind, self.array.shape, self.array.dtype,
                                          self.array.device, a, b, generator)
            self.array[...] = new
            self._vc[0] += 1
        return self
    method.__name__ = kind + "_"
    return method


def _reflected(fn):
    def method(self, other):
        return fn(tensor_arg(other, self), self)
    return method


def _new_factory(name):
    def method(self, *size, dtype=None, device=None, requires_grad=False, fill_value=None):
        dtype = dtype or self.array.dtype
        device = device or self.array.device
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


METHODS = {
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
    "bool": _type_cast(carray.bool_), "byte": _type_cast(carray.uint8),
    "char": _type_cast(carray.int8), "short": _type_cast(carray.int16),
    "half": _type_cast(carray.float16), "bfloat16": _type_cast(carray.bfloat16),
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
    # properties
    "T": property(lambda self: self.permute(tuple(range(self.array.ndim - 1, -1, -1)))),
    "mT": property(lambda self: self.transpose(-2, -1)),
}
METHODS["__iadd__"] = METHODS["add_"]
METHODS["__isub__"] = METHODS["sub_"]
METHODS["__imul__"] = METHODS["mul_"]
METHODS["__itruediv__"] = METHODS["div_"]
METHODS["__iand__"] = METHODS["bitwise_and_"]
METHODS["__ior__"] = METHODS["bitwise_or_"]
METHODS["__ixor__"] = METHODS["bitwise_xor_"]
# -- h1 (PyTorch's surface): legacy type names and the GPU's other name ("cuda") -------------
METHODS["type"] = tensor_type
METHODS["cuda"] = tensor_cuda

# -- tensor functions (issue 12 item 1) --
def _recorded_inplace(fn):
    """The in-place method of the out-of-place function fn (self -> fn(self, ...)): recorded
    as fn when grad is needed, else fn's result written into self's memory."""
    def method(self, *args, **kwargs):
        def raw():
            with no_grad():
                self.array[...] = fn(self, *args, **kwargs).array
        others = tuple(a for a in list(args) + list(kwargs.values()) if isinstance(a, Tensor))
        return inplace(self, lambda src: fn(src, *args, **kwargs), raw, others)
    method.__name__ = fn.__name__ + "_"
    return method


for _fn in (tensor_functions.tril, tensor_functions.triu, tensor_functions.multinomial,
            tensor_functions.roll, tensor_functions.scatter, tensor_functions.scatter_add,
            tensor_functions.index_add, tensor_functions.repeat_interleave,
            tensor_functions.baddbmm, tensor_functions.diag, tensor_functions.diagonal,
            tensor_functions.trace, tensor_functions.lerp, tensor_functions.erf,
            tensor_functions.erfinv, tensor_functions.logaddexp, tensor_functions.median,
            tensor_functions.nonzero, tensor_functions.unique, tensor_functions.bincount,
            tensor_functions.take_along_dim, tensor_functions.nan_to_num,
            tensor_functions.isclose, tensor_functions.atan2, tensor_functions.arctan2,
            tensor_functions.hypot, tensor_functions.fmod, tensor_functions.asin,
            tensor_functions.arcsin, tensor_functions.acos, tensor_functions.arccos,
            tensor_functions.atan, tensor_functions.arctan, tensor_functions.sinh,
            tensor_functions.cosh, tensor_functions.asinh, tensor_functions.arcsinh,
            tensor_functions.acosh, tensor_functions.arccosh, tensor_functions.atanh,
            tensor_functions.arctanh, tensor_functions.addcmul, tensor_functions.addcdiv,
            tensor_functions.bernoulli):
    METHODS[_fn.__name__] = _fn
METHODS["arcsin"], METHODS["arccos"], METHODS["arctan"] = (
    tensor_functions.asin, tensor_functions.acos, tensor_functions.atan)
METHODS["arcsinh"], METHODS["arccosh"], METHODS["arctanh"] = (
    tensor_functions.asinh, tensor_functions.acosh, tensor_functions.atanh)
METHODS["arctan2"] = tensor_functions.atan2
for _fn in (tensor_functions.scatter, tensor_functions.scatter_add, tensor_functions.index_add,
            tensor_functions.addcmul, tensor_functions.addcdiv):
    METHODS[_fn.__name__ + "_"] = _recorded_inplace(_fn)

for _name, _fn in METHODS.items():
    setattr(Tensor, _name, _fn)

# linear algebra (issue 13): x.det(), x.inverse(), x.logdet(), x.slogdet()
for _fn in (factorizations.det, factorizations.inverse, factorizations.logdet,
            factorizations.slogdet):
    setattr(Tensor, _fn.__name__, _fn)
    METHODS[_fn.__name__] = _fn

"""`out=` for the torch.* functions that take it (add, sub, mul, div, matmul, mm, bmm, cat,
stack): the result is written into a given tensor, as PyTorch does.

    autograd.add(a, b, out=c)        # c holds a + b (cast to c's dtype); returns c

The functions here wrap those of torch_functions.py (autograd.ops exports these in their place;
Tensor methods keep the plain ones). As PyTorch: no graph is recorded, so RuntimeError when grad
mode is on and an input or `out` requires grad; RuntimeError when the result's dtype cannot be
cast to out's (float into int, anything but bool into bool) or out is on another device; an out
of another shape is resized (a UserWarning when it had elements).
"""

import functools
import warnings

import carray
from autograd._defaults import is_floating, scalar_type_name
from autograd.grad_mode import is_grad_enabled, no_grad
from autograd.ops import torch_functions as _tf
from autograd.tensor import Tensor

__all__ = ["add", "sub", "mul", "div", "matmul", "mm", "bmm", "cat", "concat", "concatenate",
           "stack"]


def _requires_grad(args):
    for a in args:
        if isinstance(a, Tensor) and a.requires_grad:
            return True
        if isinstance(a, (list, tuple)) and _requires_grad(a):
            return True
    return False


def _can_cast(src, dst):
    """PyTorch's canCast: no float into an integer, nothing but bool into bool."""
    if is_floating(src) and dst.kind in "iub":
        return False
    return not (dst.kind == "b" and src.kind != "b")


def write_out(name, result, out):
    """Write the tensor result into out (resizing, casting) and return out; PyTorch's errors."""
    if out.array.device != result.array.device:
        raise RuntimeError(f"{name}(): expected out tensor to have device "
                           f"{result.array.device}, but got {out.array.device} instead")
    src, dst = result.array.dtype, out.array.dtype
    if not _can_cast(src, dst):
        raise RuntimeError(f"result type {scalar_type_name(src)} can't be cast to the desired "
                           f"output type {scalar_type_name(dst)}")
    if out.array.shape != result.array.shape:
        if out.array.size:
            warnings.warn(f"An output with one or more elements was resized since it had shape "
                          f"{list(out.array.shape)}, which does not match the required output "
                          f"shape {list(result.array.shape)}. This behavior is deprecated, and "
                          f"in a future release outputs will not be resized unless they have "
                          f"zero elements. You can explicitly reuse an out tensor t by resizing "
                          f"it, inplace, to zero elements with t.resize_(0).", stacklevel=3)
        out.array = carray.empty(result.array.shape, dtype=dst, device=out.array.device)
    value = result.array if src == dst else result.array.astype(dst)
    out.array[...] = value
    out._vc[0] += 1
    return out


def _with_out(fn, name):
    """fn with an `out=` keyword (see the module's docstring)."""
    @functools.wraps(fn)
    def wrapper(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        if not isinstance(out, Tensor):
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not "
                            f"{type(out).__name__}")
        if is_grad_enabled() and (out.requires_grad or _requires_grad(args)
                                  or _requires_grad(kwargs.values())):
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support "
                               f"automatic differentiation, but one of the arguments requires "
                               f"grad.")
        with no_grad():
            result = fn(*args, **kwargs)
        return write_out(name, result, out)
    return wrapper


add = _with_out(_tf.add, "add")
sub = _with_out(_tf.sub, "sub")
mul = _with_out(_tf.mul, "mul")
div = _with_out(_tf.div, "div")
matmul = _with_out(_tf.matmul, "matmul")
mm = _with_out(_tf.mm, "mm")
bmm = _with_out(_tf.bmm, "bmm")
cat = concat = concatenate = _with_out(_tf.cat, "cat")
stack = _with_out(_tf.stack, "stack")

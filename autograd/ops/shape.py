"""View and shape ops: reshape, permute, transpose, expand, squeeze, unsqueeze, indexing,
cat, stack, flip, pad, and copies (clone, to).

A view op's output shares its input's memory and version counter and remembers how it was made
(`_view_of`), so an in-place op on the view can be replayed on its base (see ops/inplace.py).
"""

import operator

import carray
from autograd.ops._util import Builtin, meta, norm_dim, reduce_grad, wrap
from autograd.tensor import Tensor

__all__ = ["Cat", "Clone", "Expand", "Flip", "Index", "IndexAdd", "IndexPut", "Pad", "Permute",
           "Reshape", "Squeeze", "Stack", "ToCopy", "Transpose", "Unbind", "Unsqueeze"]

_new = object.__new__


def view_result(x, arr, name, args):
    """The tensor over `arr`, a view of x's memory made by x.<name>(*args)."""
    t = _new(Tensor)
    t.array = arr
    t._vc = x._vc
    t._base = x._base if x._base is not None else x
    t._view_of = (x, name, args)
    t._view_version = x._vc[0]
    t._multi_view = x._multi_view
    return t


def _is_view(arr, src):
    base = arr.base
    return base is not None and (base is src or base is src.base)


class Reshape(Builtin):
    """x.reshape(shape) (a view when the strides allow, else a copy); dx = g.reshape(x.shape)."""

    @staticmethod
    def forward(ctx, x, shape, must_view):
        ctx.shape = x.array.shape
        try:
            arr = x.array.reshape(shape)
        except ValueError as e:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size "
                               f"{x.array.size}") from e
        if _is_view(arr, x.array) or arr is x.array:
            return view_result(x, arr, "reshape", (shape,))
        if must_view:
            raise RuntimeError("view size is not compatible with input tensor's size and stride "
                               "(at least one dimension spans across two contiguous subspaces). "
                               "Use .reshape(...) instead.")
        return wrap(arr)

    @staticmethod
    def backward(ctx, g):
        return g.reshape(ctx.shape), None, None


class Permute(Builtin):
    """x.permute(dims);  dx = g.permute(inverse of dims)."""

    @staticmethod
    def forward(ctx, x, dims):
        nd = x.array.ndim
        if len(dims) != nd:
            raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input "
                               f"does not match the length of the desired ordering of dimensions "
                               f"i.e. input.dim() = {nd} is not equal to len(dims) = {len(dims)}")
        dims = tuple(norm_dim(d, nd) for d in dims)
        if len(set(dims)) != nd:
            raise RuntimeError(f"permute(): duplicate dims are not allowed: {dims}")
        ctx.inverse = tuple(sorted(range(nd), key=lambda i: dims[i]))
        return view_result(x, x.array.transpose(dims), "permute", (dims,))

    @staticmethod
    def backward(ctx, g):
        return g.permute(ctx.inverse), None


class Transpose(Builtin):
    """x.transpose(d0, d1);  dx = g.transpose(d0, d1)."""

    @staticmethod
    def forward(ctx, x, d0, d1):
        nd = x.array.ndim
        d0, d1 = norm_dim(d0, nd), norm_dim(d1, nd)
        ctx.dims = (d0, d1)
        if nd == 0:
            return view_result(x, x.array.reshape(()), "transpose", (d0, d1))
        return view_result(x, x.array.swapaxes(d0, d1), "transpose", (d0, d1))

    @staticmethod
    def backward(ctx, g):
        return g.transpose(*ctx.dims), None, None


class Expand(Builtin):
    """x.expand(shape) (-1 keeps a dim), a view with stride 0;  dx = g summed back."""

    @staticmethod
    def forward(ctx, x, shape):
        xs = x.array.shape
        if len(shape) < len(xs):
            raise RuntimeError(f"expand({list(xs)}, size={list(shape)}): the number of sizes "
                               f"provided ({len(shape)}) must be greater or equal to the number "
                               f"of dimensions in the tensor ({len(xs)})")
        lead = len(shape) - len(xs)
        target = []
        for i, n in enumerate(shape):
            if n == -1:
                if i < lead:
                    raise RuntimeError(f"expand: -1 is not allowed in a leading, non-existing "
                                       f"dimension {i}")
                n = xs[i - lead]
            target.append(n)
        target = tuple(target)
        ctx.x = meta(x)
        try:
            arr = carray.broadcast_to(x.array, target)
        except ValueError as e:
            if all(n in (1, m) for n, m in zip(xs, target[lead:])):   # shapes fit: too big
                raise RuntimeError(f"expand: {e}") from None
            raise RuntimeError(f"The expanded size of the tensor ({list(target)}) must match the "
                               f"existing size ({list(xs)}) at non-singleton dimensions") \
                from None
        return view_result(x, arr, "expand", (target,))

    @staticmethod
    def backward(ctx, g):
        return reduce_grad(g, ctx.x), None


class Squeeze(Builtin):
    """x.squeeze(dim) (dim None: every size-1 dim; a dim of other size stays);
    dx = g.reshape(x.shape)."""

    @staticmethod
    def forward(ctx, x, dim):
        shape = x.array.shape
        ctx.shape = shape
        if dim is None:
            dims = {i for i, n in enumerate(shape) if n == 1}
        else:
            dims = dim if isinstance(dim, (tuple, list)) else (dim,)
            dims = {norm_dim(d, len(shape)) for d in dims}
            dims = {d for d in dims if len(shape) and shape[d] == 1}
        new = tuple(n for i, n in enumerate(shape) if i not in dims)
        return view_result(x, x.array.reshape(new), "squeeze", (dim,))

    @staticmethod
    def backward(ctx, g):
        return g.reshape(ctx.shape), None


class Unsqueeze(Builtin):
    """x.unsqueeze(dim), a view with a new size-1 dim;  dx = g.squeeze(dim)."""

    @staticmethod
    def forward(ctx, x, dim):
        nd = x.array.ndim
        d = operator.index(dim)
        if not -nd - 1 <= d <= nd:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-nd - 1}, "
                             f"{nd}], but got {d})")
        d %= nd + 1
        ctx.shape = x.array.shape
        return view_result(x, carray.expand_dims(x.array, d), "unsqueeze", (d,))

    @staticmethod
    def backward(ctx, g):
        return g.reshape(ctx.shape), None


class Clone(Builtin):
    """A copy with its own memory;  dx = g."""

    @staticmethod
    def forward(ctx, x):
        return wrap(x.array.copy())

    @staticmethod
    def backward(ctx, g):
        return g


class ToCopy(Builtin):
    """x converted to a dtype and/or device;  dx = g converted back."""

    @staticmethod
    def forward(ctx, x, dtype, device):
        ctx.dtype, ctx.device = x.array.dtype, x.array.device
        arr = x.array
        if device is not None and arr.device != device:
            arr = arr.to(device)
        if dtype is not None and arr.dtype != dtype:
            arr = arr.astype(dtype)
        if arr is x.array:
            arr = arr.copy()
        return wrap(arr)

    @staticmethod
    def backward(ctx, g):
        return ToCopy.apply(g, ctx.dtype, ctx.device), None, None


# ---------------------------------------------------------------------------------------------
# indexing
# ---------------------------------------------------------------------------------------------

def index_key(key):
    """A Tensor index key with Tensors replaced by their carray data."""
    if isinstance(key, tuple):
        return tuple(k.array if isinstance(k, Tensor) else _seq_key(k) for k in key)
    if isinstance(key, Tensor):
        return key.array
    return _seq_key(key)


def _seq_key(k):
    if k.__class__ is slice and k.step is not None and k.step <= 0:
        # PyTorch has no negative strides (carray has): same error as torch
        raise ValueError("step must be greater than zero" if k.step else
                         "slice step cannot be zero")
    if isinstance(k, list) and any(isinstance(v, Tensor) for v in k):
        return carray.asarray([v.item() if isinstance(v, Tensor) else v for v in k])
    return k


def is_basic(key):
    """True when the key makes a view (ints, slices, None, Ellipsis only)."""
    keys = key if isinstance(key, tuple) else (key,)
    for k in keys:
        if k is None or k is Ellipsis or isinstance(k, slice):
            continue
        if isinstance(k, (bool, carray.Array, list, tuple)):
            return False
        try:
            operator.index(k)
        except TypeError:
            return False
    return True


class Index(Builtin):
    """x[key] (basic keys make views, integer/boolean array keys gather a copy);
    dx = zeros with g added at the indexed places (repeated indices add up)."""

    @staticmethod
    def forward(ctx, x, key):
        ctx.x = meta(x)
        ctx.key = key
        ctx.device = x.array.device
        arr = x.array[key]
        if is_basic(key):
            return view_result(x, arr, "__getitem__", (key,))
        return wrap(arr)

    @staticmethod
    def backward(ctx, g):
        shape, dtype = ctx.x
        if g._rg:  # create_graph: build the gradient with differentiable ops
            return IndexAdd.apply(shape, ctx.key, g), None
        out = carray.zeros(shape, dtype=dtype, device=ctx.device)
        if is_basic(ctx.key):
            out[ctx.key] = g.array
        else:
            carray.add_at(out, ctx.key, g.array)
        return wrap(out), None


class IndexAdd(Builtin):
    """zeros(shape) with v added at key (the adjoint of Index);  dv = g[key]."""

    @staticmethod
    def forward(ctx, shape, key, v):
        ctx.key = key
        out = carray.zeros(shape, dtype=v.array.dtype, device=v.array.device)
        carray.add_at(out, key, v.array)
        return wrap(out)

    @staticmethod
    def backward(ctx, g):
        return None, None, Index.apply(g, ctx.key)


class IndexPut(Builtin):
    """x with x[key] = v, out of place;  dx = g with zeros at key, dv = g[key] summed to v."""

    @staticmethod
    def forward(ctx, x, key, v):
        ctx.key = key
        ctx.v = meta(v)
        out = x.array.copy()
        out[key] = v.array if isinstance(v, Tensor) else v
        return wrap(out)

    @staticmethod
    def backward(ctx, g):
        need = ctx.needs_input_grad
        gx = gv = None
        if need[0]:
            gx = IndexPut.apply(g, ctx.key, 0.0)
        if need[2]:
            gv = reduce_grad(Index.apply(g, ctx.key), ctx.v)
        return gx, None, gv


# ---------------------------------------------------------------------------------------------
# joining and reordering
# ---------------------------------------------------------------------------------------------

class Cat(Builtin):
    """cat(tensors, dim);  each input gets its slice of g."""

    @staticmethod
    def forward(ctx, dim, *tensors):
        if not tensors:
            raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
        arrays = [t.array for t in tensors]
        for i, a in enumerate(arrays):
            if a.ndim == 0:
                raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                                   f"concatenated")
        nd = max(a.ndim for a in arrays)
        d = norm_dim(dim, nd)
        # PyTorch skips 1-d empty tensors in cat (legacy behaviour)
        keep = [a for a in arrays if not (a.ndim == 1 and a.shape[0] == 0)] or arrays[:1]
        ctx.dim = d
        ctx.sizes = [a.shape[d] if not (a.ndim == 1 and a.shape[0] == 0 and nd > 1) else 0
                     for a in arrays]
        ctx.metas = [meta(t) for t in tensors]
        try:
            out = carray.concatenate(keep, axis=d)
        except ValueError as e:
            raise RuntimeError(f"torch.cat(): {e}") from None
        return wrap(out)

    @staticmethod
    def backward(ctx, g):
        grads = [None]
        start = 0
        d = ctx.dim
        for size, m in zip(ctx.sizes, ctx.metas):
            if size == 0 and len(m[0]) != g.array.ndim:
                grads.append(wrap(carray.zeros(m[0], dtype=m[1], device=g.array.device)))
                continue
            key = (slice(None),) * d + (slice(start, start + size),)
            grads.append(g[key])
            start += size
        return tuple(grads)


class Stack(Builtin):
    """stack(tensors, dim);  input i gets g.select(dim, i)."""

    @staticmethod
    def forward(ctx, dim, *tensors):
        if not tensors:
            raise RuntimeError("stack expects a non-empty TensorList")
        nd = tensors[0].array.ndim + 1
        d = operator.index(dim)
        if not -nd <= d < nd:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, "
                             f"{nd - 1}], but got {d})")
        d %= nd
        ctx.dim = d
        ctx.n = len(tensors)
        try:
            out = carray.stack([t.array for t in tensors], axis=d)
        except ValueError as e:
            raise RuntimeError(f"stack expects each tensor to be equal size: {e}") from None
        return wrap(out)

    @staticmethod
    def backward(ctx, g):
        d = ctx.dim
        return (None,) + tuple(g[(slice(None),) * d + (i,)] for i in range(ctx.n))


class Flip(Builtin):
    """x.flip(dims);  dx = g.flip(dims)."""

    @staticmethod
    def forward(ctx, x, dims):
        nd = x.array.ndim
        dims = tuple(norm_dim(d, nd) for d in dims)
        ctx.dims = dims
        return wrap(carray.flip(x.array, axis=dims).copy())

    @staticmethod
    def backward(ctx, g):
        return g.flip(ctx.dims), None


class Pad(Builtin):
    """Constant padding with PyTorch's pad list (last dim first: (left, right, top, bottom...));
    negative pads crop. dx = g cropped back."""

    @staticmethod
    def forward(ctx, x, pad, value):
        if len(pad) % 2:
            raise RuntimeError(f"Padding length must be divisible by 2, got {len(pad)}")
        nd = x.array.ndim
        if len(pad) // 2 > nd:
            raise RuntimeError(f"Padding length should be less than or equal to two times the "
                               f"input dimension but got padding length {len(pad)} and input of "
                               f"dimension {nd}")
        widths = [(0, 0)] * nd
        for i in range(len(pad) // 2):
            widths[nd - 1 - i] = (pad[2 * i], pad[2 * i + 1])
        arr = x.array
        crop = []
        grow = []
        for (lo, hi), n in zip(widths, arr.shape):
            crop.append(slice(max(-lo, 0), n - max(-hi, 0)))
            grow.append((max(lo, 0), max(hi, 0)))
        arr = arr[tuple(crop)]
        out = carray.pad(arr, grow, constant_values=value)
        ctx.shape = x.array.shape
        ctx.widths = widths
        return wrap(out)

    @staticmethod
    def backward(ctx, g):
        key = []
        grow = []
        for (lo, hi), n in zip(ctx.widths, g.array.shape):
            key.append(slice(max(lo, 0), n - max(hi, 0)))
            grow.append((max(-lo, 0), max(-hi, 0)))
        gx = g[tuple(key)]
        if any(a or b for a, b in grow):
            flat = []
            for a, b in reversed(grow):
                flat += [a, b]
            gx = Pad.apply(gx, tuple(flat), 0.0)
        return gx, None, None


# -- unbind as one node (h12: moved here from ops/rnn.py and given a dim) --


class Split(Builtin):
    """The pieces of x along dim of the given sizes (views of x, marked as outputs of the
    multi-view op `name`);  dx = their gradients side by side, zeros for pieces that got none.
    One node however many pieces (indexing each would make backward write one full-size
    gradient per piece and then sum them)."""

    @staticmethod
    def forward(ctx, x, dim, sizes, name):
        d = x.array
        ctx.meta = (d.shape, d.dtype, d.device, dim, sizes)
        lead = (slice(None),) * dim
        out = []
        start = 0
        for i, size in enumerate(sizes):
            key = lead + (slice(start, start + size),)
            t = view_result(x, d[key], "__getitem__", (key,))
            t._multi_view = (name, i)
            out.append(t)
            start += size
        return tuple(out)

    @staticmethod
    def backward(ctx, *grads):
        shape, dtype, device, dim, sizes = ctx.meta
        if any(g is not None and g._rg for g in grads):  # create_graph: differentiable ops
            parts = [wrap(carray.zeros(shape[:dim] + (size,) + shape[dim + 1:], dtype=dtype,
                                       device=device)) if g is None else g
                     for g, size in zip(grads, sizes)]
            return Cat.apply(dim, *parts), None, None, None
        out = carray.empty(shape, dtype=dtype, device=device)
        lead = (slice(None),) * dim
        start = 0
        for g, size in zip(grads, sizes):
            out[lead + (slice(start, start + size),)] = 0.0 if g is None else g.array
            start += size
        return wrap(out), None, None, None


class SplitWithSizes(Split):
    """Split with explicit sizes (PyTorch's split_with_sizes; its own name in grad_fn)."""


class Unbind(Builtin):
    """The slices x.select(dim, 0), x.select(dim, 1), ... (views of x, marked as outputs of a
    multi-view op);  dx = the stack of their gradients along dim, zeros for slices that got
    none. One node however many slices (indexing each would make backward write T full-size
    gradients)."""

    @staticmethod
    def forward(ctx, x, dim):
        d = x.array
        dim = norm_dim(dim, d.ndim)
        ctx.meta = (d.shape, d.dtype, d.device, dim)
        lead = (slice(None),) * dim
        out = []
        for i in range(d.shape[dim]):
            key = lead + (i,)
            t = view_result(x, d[key], "__getitem__", (key,))
            t._multi_view = ("Unbind", i)
            out.append(t)
        return tuple(out)

    @staticmethod
    def backward(ctx, *grads):
        shape, dtype, device, dim = ctx.meta
        if any(g is not None and g._rg for g in grads):  # create_graph: differentiable ops
            zero = None
            parts = []
            for g in grads:
                if g is None:
                    if zero is None:
                        zero = wrap(carray.zeros(shape[:dim] + shape[dim + 1:], dtype=dtype,
                                                 device=device))
                    g = zero
                parts.append(g)
            return Stack.apply(dim, *parts), None
        out = carray.empty(shape, dtype=dtype, device=device)
        lead = (slice(None),) * dim
        for i, g in enumerate(grads):
            out[lead + (i,)] = 0.0 if g is None else g.array
        return wrap(out), None

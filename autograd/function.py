"""autograd.Function: one op of the graph, with PyTorch's custom-function API.

    class Exp(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

    y = Exp.apply(x)

`apply` makes an instance of the class (the ctx), runs `forward` with grad mode off, and, when
grad mode is on and an input requires grad, links the outputs to the ctx: the ctx is then the
outputs' `grad_fn`, the node the engine (autograd/engine.py) calls `backward` on. Every built-in
op is a Function of this same kind.

A node's edges (`next_functions`) hold, for each argument of forward, the node its gradient goes
to: the argument's own grad_fn, an AccumulateGrad for a leaf that requires grad, or None.
"""

import functools
import itertools

import carray
from autograd._defaults import is_floating, scalar_type_name
from autograd.grad_mode import _state
from autograd.tensor import Tensor, _RemovableHandle

__all__ = ["Function", "AccumulateGrad", "once_differentiable"]

# Creation order of nodes: the engine runs the ready node created last first.
_sequence = itertools.count()

_FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you "
    "call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors after calling "
    "backward.")


class _SavedOutput:
    """An output of a node saved by that node: kept as its data and version counter (not the
    Tensor, which points back at the node) and rebuilt when saved_tensors is read."""

    __slots__ = ("array", "vc", "output_nr")

    def __init__(self, tensor):
        self.array = tensor.array
        self.vc = tensor._vc
        self.output_nr = tensor._output_nr


class Function:
    """Base of every differentiable op. Subclasses define the static methods
    `forward(ctx, *args, **kwargs)` and `backward(ctx, *grad_outputs)` (one gradient, or None,
    per argument of forward) and are called through `Cls.apply(*args)`."""

    # defaults of a node; apply sets the rest
    next_functions = ()
    needs_input_grad = ()
    _saved = None            # tuple of (tensor or _SavedOutput or None, version) pairs
    _to_save = ()
    _freed = False
    _materialize = True
    _dirty = ()
    _non_differentiable = ()
    _pre_hooks = None        # {output_nr: [hook, ...]} from Tensor.register_hook on outputs
    _retained = None         # {output_nr: weakref to a tensor that called retain_grad()}
    _hooks = None            # [hook(grad_inputs, grad_outputs)] from register_hook on the node
    _out_meta = ()           # (shape, dtype, device) of each output, to make zero gradients
    _n_out = 1               # number of outputs of forward
    _in_shapes = ()          # shape of each tensor argument (None for others), to check gradients
    _trusted = False         # built-in ops: backward returns gradients of the right shape
    # what an autocast region does to the op's floating-point tensor arguments: "lower" (cast to
    # the region's dtype: matmul, convolution), "float32" (losses), "float32_gpu" (float32 on the
    # GPU only: softmax, norms, sums), None (run in the arguments' own dtypes); autograd.amp
    autocast_policy = None

    def __init__(self, *args, **kwargs):
        pass

    # -- the API of ctx ---------------------------------------------------------------------------

    @staticmethod
    def forward(ctx, *args, **kwargs):
        """The op on tensors; runs with grad mode off. Override in subclasses."""
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """One gradient per argument of forward (None where there is none). Override it."""
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode AD.")

    def save_for_backward(self, *tensors):
        """Keep tensors (or None) for backward; read them back with saved_tensors, which raises
        RuntimeError if one was modified in place since."""
        self._to_save = tensors

    @property
    def saved_tensors(self):
        """The tensors given to save_for_backward. Raises RuntimeError after the graph was freed
        or when one of them was modified in place after it was saved."""
        saved = self._saved
        if saved is None:
            if self._freed:
                raise RuntimeError(_FREED_MESSAGE)
            return self._to_save
        out = []
        for item, version in saved:
            if item is None:
                out.append(None)
                continue
            if item.__class__ is _SavedOutput:
                tensor = Tensor._from_node(item.array, item.vc, self, item.output_nr)
                vc = item.vc
            else:
                tensor = item
                vc = item._vc
            if vc[0] != version:
                raise _modified_error(tensor, self, version, vc[0])
            out.append(tensor)
        return tuple(out)

    def mark_dirty(self, *tensors):
        """Declare the arguments forward modified in place (they become its outputs)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        """Declare outputs that get no gradient (such as indices)."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value):
        """When True (the default) backward gets zeros, not None, for outputs without a
        gradient."""
        self._materialize = bool(value)

    def name(self):
        """The node's name, as in PyTorch: 'MulBackward0' for built-ins, 'MyFnBackward' else."""
        cls = type(self)
        return cls.__name__ + ("Backward0" if cls._trusted else "Backward")

    def register_hook(self, hook):
        """hook(grad_inputs, grad_outputs) runs after this node's backward; it may return new
        grad_inputs."""
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(hook)
        return _RemovableHandle(self._hooks, hook)

    def __repr__(self):
        return f"<{self.name()} object at {id(self):#x}>"

    # -- making nodes -----------------------------------------------------------------------------

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward on args and, when grad mode is on and an argument requires grad, record
        the node so backward reaches the arguments. Returns forward's result."""
        if _tracer is not None:
            return _tracer(cls, args, kwargs)
        if _autocast is not None and cls.autocast_policy is not None:
            args = _autocast(cls.autocast_policy, args)
        ctx = _new(cls)
        if not _state.enabled:
            ctx.needs_input_grad = _no_needs(len(args))
            return cls.forward(ctx, *args, **kwargs)
        # what each argument needs, and where its gradient goes (taken before forward, as
        # PyTorch collects a node's edges)
        record = False
        needs = []
        edges = []
        for a in args:
            if not isinstance(a, Tensor):
                needs.append(False)
                edges.append(_NO_EDGE)
                continue
            if a._view_of is not None and a._vc[0] != a._view_version:
                _refresh_view(a)
            fn = a.grad_fn
            if fn is not None:
                edges.append((fn, a._output_nr))
            elif a._rg:
                edges.append((a._accum or _accumulator(a), 0))
            else:
                edges.append(_NO_EDGE)
            if a._rg:
                needs.append(True)
                record = True
            else:
                needs.append(False)
        ctx.needs_input_grad = tuple(needs)
        _state.enabled = False
        try:
            result = cls.forward(ctx, *args, **kwargs)
        finally:
            _state.enabled = True
        if record:
            ctx.next_functions = tuple(edges)
            _link(ctx, args, result)
        return result

    # -- what the engine calls --------------------------------------------------------------------

    def _run_backward(self, grads):
        """backward on the gradients of the outputs (a list, None where none arrived); returns
        one gradient or None per argument of forward."""
        if self._trusted:
            result = type(self).backward(self, *grads)
            if self._hooks:
                result = self._run_hooks(result if isinstance(result, tuple) else (result,),
                                         grads)
            return result if isinstance(result, tuple) else (result,)
        if self._materialize:
            for i, g in enumerate(grads):
                if g is None and self._out_meta[i] is not None:
                    shape, dtype, device = self._out_meta[i]
                    grads[i] = Tensor._wrap(carray.zeros(shape, dtype=dtype, device=device))
        result = type(self).backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n = len(self.next_functions)
        if len(result) != n:
            if len(result) > n and all(r is None for r in result[n:]):
                result = result[:n]
            else:
                raise RuntimeError(f"function {self.name()} returned an incorrect number of "
                                   f"gradients (expected {n}, got {len(result)})")
        result = tuple(self._check_grad(i, g) for i, g in enumerate(result))
        if self._hooks:
            result = self._run_hooks(result, grads)
        return result

    def _run_hooks(self, result, grads):
        for hook in self._hooks:
            new = hook(result, tuple(grads))
            if new is not None:
                result = tuple(new)
        return result

    def _check_grad(self, i, g):
        """A custom backward's gradient i, summed to the argument's shape when it broadcasts."""
        if g is None or self.next_functions[i][0] is None:
            return None
        if not isinstance(g, Tensor):
            raise TypeError(f"function {self.name()} returned a gradient of type "
                            f"{type(g).__name__} at index {i}; expected a Tensor or None")
        shape = self._in_shapes[i]
        if g.shape != shape:
            try:
                g = reduce_to_shape(g, shape)
            except (ValueError, RuntimeError):
                raise RuntimeError(f"Function {self.name()} returned an invalid gradient at index "
                                   f"{i} - got {list(g.shape)} but expected shape compatible "
                                   f"with {list(shape)}") from None
        return g

    def _release(self):
        """Free what backward needed (after a backward without retain_graph)."""
        self._saved = None
        self._freed = True


def _link(ctx, args, result):
    """Make ctx (its edges already set) the grad_fn of forward's outputs and record its saved
    tensors."""
    ctx._seq = next(_sequence)
    if result.__class__ is Tensor and not ctx._dirty and not ctx._non_differentiable:
        # the common case: one new output
        if is_floating(result.array.dtype):
            result._rg = True
            result.grad_fn = ctx
            result._output_nr = 0
        if not ctx._trusted:
            ctx._out_meta = ((result.array.shape, result.array.dtype, result.array.device),)
    else:
        _link_outputs(ctx, result)
    if not ctx._trusted:
        ctx._in_shapes = tuple(a.array.shape if isinstance(a, Tensor) else None for a in args)
    to_save = ctx._to_save
    if to_save:
        saved = []
        for t in to_save:
            if t is None:
                saved.append(_NOTHING_SAVED)
            elif not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument "
                                f"{len(saved)} is of type {type(t).__name__}")
            elif t.grad_fn is ctx:
                saved.append((_SavedOutput(t), t._vc[0]))
            else:
                saved.append((t, t._vc[0]))
        ctx._saved = tuple(saved)
        ctx._to_save = ()


def _link_outputs(ctx, result):
    """_link for several outputs, in-place outputs (mark_dirty) and non-differentiable ones."""
    outputs = result if isinstance(result, tuple) else (result,)
    meta = []
    non_diff = ctx._non_differentiable
    dirty = ctx._dirty
    for i, out in enumerate(outputs):
        if not isinstance(out, Tensor):
            meta.append(None)
            continue
        meta.append((out.array.shape, out.array.dtype, out.array.device))
        if any(out is t for t in non_diff):
            continue
        if not is_floating(out.array.dtype):
            continue
        if any(out is t for t in dirty):
            _check_inplace_allowed(out)
        out._rg = True
        out.grad_fn = ctx
        out._output_nr = i
    ctx._out_meta = tuple(meta)
    ctx._n_out = len(outputs)


# The one tracing hook (autograd.onnx.export): while set, every Function application
# (Function.apply and the inline path of add/sub/mul/div, ops/elementwise.py) calls
# _tracer(cls, args, kwargs) instead, which runs the op itself (with the hook unset) and records
# it. None otherwise: the cost is one global lookup per op.
_tracer = None


def set_tracer(tracer):
    """Install tracer (or None) as the hook every Function application calls; returns the
    previous one."""
    global _tracer
    prev = _tracer
    _tracer = tracer
    return prev


# The autocast hook: while an autograd.autocast region is active, autograd.amp sets it to
# cast(policy, args), which returns args with floating tensors cast by the op's policy. None
# otherwise: the cost is one global lookup per op.
_autocast = None


def set_autocast_hook(hook):
    """Install hook (or None) as the cast every Function with an autocast_policy applies to its
    arguments; returns the previous one."""
    global _autocast
    prev = _autocast
    _autocast = hook
    return prev


_NO_EDGE = (None, 0)
_NOTHING_SAVED = (None, 0)
_new = object.__new__
_NO_NEEDS = [()]


def _no_needs(n):
    """(False,) * n, cached."""
    while len(_NO_NEEDS) <= n:
        _NO_NEEDS.append((False,) * len(_NO_NEEDS))
    return _NO_NEEDS[n]


def _accumulator(t):
    acc = t._accum = AccumulateGrad(t)
    return acc


def _edge(t):
    """Where the gradient of tensor t goes: (its grad_fn, output_nr), (its AccumulateGrad, 0) for
    a leaf that requires grad, else (None, 0)."""
    if t._view_of is not None and t._vc[0] != t._view_version:
        _refresh_view(t)
    fn = t.grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    if t._rg:
        return (t._accum or _accumulator(t), 0)
    return (None, 0)


def _refresh_view(t):
    """Give view t the history of its base after the base (or another view of it) was modified
    in place since t got its grad_fn: t is remade from the base, as PyTorch regenerates a
    view's grad_fn."""
    t._view_version = t._vc[0]
    base = t._base
    if base is None or not base._rg:
        return
    prev = _state.enabled
    _state.enabled = True
    try:
        remade = replay(base, view_path(t))
    finally:
        _state.enabled = prev
    t.grad_fn = remade.grad_fn
    t._output_nr = remade._output_nr
    t._rg = remade._rg


class AccumulateGrad:
    """The node that ends every path at a leaf: adds the gradient into leaf.grad."""

    next_functions = ()
    _pre_hooks = None
    _retained = None
    _n_out = 1
    _seq = float("inf")  # run as soon as ready (it frees the gradient early)

    def __init__(self, variable):
        self.variable = variable

    def name(self):
        return "AccumulateGrad"

    def __repr__(self):
        return f"<AccumulateGrad object at {id(self):#x}>"

    def _release(self):
        pass


def once_differentiable(fn):
    """Decorator for a backward that is not itself differentiable (as torch's): it runs with
    grad mode off even under create_graph."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        prev = _state.enabled
        _state.enabled = False
        try:
            return fn(ctx, *args)
        finally:
            _state.enabled = prev
    return wrapper


def _modified_error(tensor, node, expected, actual):
    kind = scalar_type_name(tensor.array.dtype) + "Tensor"
    where = ""
    if tensor.grad_fn is not None:
        where = f", which is output {tensor._output_nr} of {tensor.grad_fn.name()},"
    elif tensor.requires_grad:
        where = ", which is a leaf,"
    return RuntimeError(
        f"one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [torch.{kind} {list(tensor.shape)}]{where} is at version {actual}; expected "
        f"version {expected} instead. Hint: the backtrace further above can point to the "
        f"operation that failed to compute its gradient. The variable in question was changed in "
        f"there or anywhere later. Good luck!")


def _check_inplace_allowed(t):
    """RuntimeError when t (or the tensor it views) is a leaf that requires grad, or t is (a
    view of) one of the views split/unbind return (PyTorch's rule for multi-output views)."""
    if t._multi_view is not None:
        name, i = t._multi_view
        raise RuntimeError(f"Output {i} of {name} is a view and is being modified inplace. This "
                           f"view is the output of a function that returns multiple views. Such "
                           f"functions do not allow the output views to be modified inplace. You "
                           f"should replace the inplace operation by an out-of-place one.")
    if t.grad_fn is None and t._rg:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    base = t._base
    if base is not None and base.grad_fn is None and base._rg:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")


# ---------------------------------------------------------------------------------------------
# helpers the ops share with the nodes
# ---------------------------------------------------------------------------------------------

def reduce_to_shape(g, shape):
    """g summed over the dims it has beyond `shape` and over those where shape has 1 (ValueError
    when g's shape does not broadcast from shape): the one place gradients are unbroadcast (a
    custom backward's gradients here, the built-in ops' through ops/_util.reduce_grad)."""
    gshape = g.array.shape
    if gshape == shape:
        return g
    lead = len(gshape) - len(shape)
    if lead < 0:
        raise ValueError(f"cannot reduce a gradient of shape {gshape} to shape {shape}")
    dims = list(range(lead))
    for i, n in enumerate(shape):
        if n == 1 and gshape[lead + i] != 1:
            dims.append(lead + i)
        elif n != gshape[lead + i] and n != 1:
            raise ValueError(f"cannot reduce a gradient of shape {gshape} to shape {shape}")
    if dims:
        g = g.sum(dim=tuple(dims), keepdim=True)
    if lead:
        g = g.reshape(shape)
    return g


def view_path(t):
    """The (method, args) steps that make view t from its base, base first."""
    steps = []
    while t._view_of is not None:
        parent, name, args = t._view_of
        steps.append((name, args))
        t = parent
    steps.reverse()
    return tuple(steps)


def replay(x, path):
    """Apply the view steps of `path` to x (Tensor methods, by name)."""
    for name, args in path:
        x = getattr(x, name)(*args)
    return x

"""autograd.Tensor: a carray.Array (`.array`) plus what autograd needs to differentiate it.

This file holds the Tensor's own state and protocols (graph attributes, conversion, repr,
backward). It is the lowest layer of autograd but for grad_mode.py, _defaults.py and _format.py:

    grad_mode, _defaults, _format  <-  tensor  <-  function  <-  engine  <-  factories
        <-  ops/*  <-  nn, optim, gradcheck, ...  <-  autograd/__init__.py

so the ops (arithmetic, math, reductions, views, indexing), which are Functions of
autograd/ops/, are set on the class by autograd/ops/tensor_methods.py (its METHODS table),
under PyTorch's names; autograd/tensor.pyi lists every method for IDEs. Tensor.backward reaches
the engine by the one call-time import of the package (as torch/_tensor.py does).

Every tensor has a version counter (`_vc`, a one-element list shared by all views of the same
memory): each in-place op bumps it, so a node whose saved tensor was modified since can refuse
to run backward (see Function.saved_tensors).
"""

import importlib
import operator
import weakref

import carray
from autograd._defaults import is_floating
from autograd._format import format_tensor
from autograd._size import Size

__all__ = ["Tensor"]

_new = object.__new__
_tuple_new = tuple.__new__


class Tensor:
    """An n-d array that records the ops made on it for backward (torch.Tensor)."""

    # class-level defaults: an instance stores only what differs
    grad = None
    grad_fn = None
    _rg = False          # requires_grad
    _output_nr = 0       # which output of grad_fn this tensor is
    _base = None         # the tensor this one is a view of (always the non-view one)
    _view_of = None      # (parent, method name, args): how to remake this view from its parent
    _view_version = 0    # the version when this view's grad_fn was made (see function._edge)
    _multi_view = None   # (op name, output number) for views made by split/unbind, and views of
                         # them: PyTorch refuses to record in-place ops on those
    _accum = None        # this leaf's AccumulateGrad node, made on first use
    _hooks = None        # hooks of a leaf (register_hook), run before accumulation
    _post_acc_hooks = None  # hooks of a leaf run after its .grad was accumulated
    __array_priority__ = 1000
    __hash__ = object.__hash__

    def __init__(self, data=None, *, dtype=None, device=None, requires_grad=False):
        """Tensor(data): a tensor holding a copy of `data` (nested sequences, a carray.Array, a
        NumPy array or a Tensor); float32 by default when data are floats (see autograd.tensor)."""
        arr = _to_array(data if data is not None else [], dtype, device)
        if arr is data or (isinstance(data, Tensor) and arr is data.array) or not isinstance(
                data, (list, tuple, int, float, bool, carray.Array, Tensor, type(None))):
            arr = arr.copy()  # (asarray reads NumPy arrays and buffers without copying)
        self.array = arr
        self._vc = [0]
        if requires_grad:
            self.requires_grad = True

    @staticmethod
    def _wrap(data):
        """A new tensor over the carray.Array `data` (no copy, no graph)."""
        t = _new(Tensor)
        t.array = data
        t._vc = [0]
        return t

    @staticmethod
    def _from_node(data, vc, node, output_nr):
        """Output `output_nr` of `node` remade from its saved data and version counter."""
        t = _new(Tensor)
        t.array = data
        t._vc = vc
        t._rg = True
        t.grad_fn = node
        t._output_nr = output_nr
        return t

    # -- the storage ----------------------------------------------------------------------------
    # `array` is the carray.Array holding the values (every op reads it); `data` is PyTorch's
    # detached view of the same memory.

    @property
    def data(self):
        """A tensor sharing this one's memory, detached from the graph (PyTorch's .data): it
        does not require grad, and in-place changes through it are not recorded (no version
        bump), so `p.data.add_(p.grad, alpha=-lr)` updates a leaf that requires grad.
        Assigning `t.data = other` makes t hold other's values (any shape; same device)."""
        t = _new(Tensor)
        t.array = self.array
        t._vc = [0]
        return t

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        if value.array.device != self.array.device:
            raise RuntimeError(f"data set to a tensor on device {value.device} of a tensor on "
                               f"{self.device}; move it first (.to)")
        self.array = value.array

    # -- graph attributes -------------------------------------------------------------------------

    @property
    def requires_grad(self):
        """Whether ops on this tensor are recorded for backward."""
        return self._rg

    @requires_grad.setter
    def requires_grad(self, value):
        value = bool(value)
        if value and not is_floating(self.array.dtype):
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               "gradients")
        if not value and self.grad_fn is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If "
                               "you want to use a computed variable in a subgraph that doesn't "
                               "require differentiation use var_no_grad = var.detach().")
        self._rg = value

    def requires_grad_(self, requires_grad=True):
        """Set requires_grad in place and return self (RuntimeError for non-float tensors)."""
        self.requires_grad = requires_grad
        return self

    @property
    def is_leaf(self):
        """True for tensors not made by a recorded op (by the user, or with requires_grad off)."""
        return self.grad_fn is None

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def _version(self):
        """How many times the memory of this tensor (or a view of it) was modified in place."""
        return self._vc[0]

    @property
    def retains_grad(self):
        fn = self.grad_fn
        return bool(fn is not None and fn._retained and self._output_nr in fn._retained)

    def retain_grad(self):
        """Make backward store this non-leaf tensor's gradient in .grad (no-op for leaves).
        Raises RuntimeError when the tensor does not require grad."""
        if not self._rg:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        fn = self.grad_fn
        if fn is None:
            return
        if fn._retained is None:
            fn._retained = {}
        fn._retained[self._output_nr] = weakref.ref(self)

    def register_hook(self, hook):
        """hook(grad) runs when this tensor's gradient is computed and may return a new gradient
        to use instead. Returns a handle with .remove(). RuntimeError if the tensor does not
        require grad."""
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        fn = self.grad_fn
        if fn is None:
            if self._hooks is None:
                self._hooks = []
            hooks = self._hooks
        else:
            if fn._pre_hooks is None:
                fn._pre_hooks = {}
            hooks = fn._pre_hooks.setdefault(self._output_nr, [])
        hooks.append(hook)
        return _RemovableHandle(hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """hook(tensor) runs after backward has accumulated this leaf's .grad (its return value
        is ignored). Returns a handle with .remove(). RuntimeError for a tensor that does not
        require grad or is not a leaf."""
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        if self._post_acc_hooks is None:
            self._post_acc_hooks = []
        self._post_acc_hooks.append(hook)
        return _RemovableHandle(self._post_acc_hooks, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate d(self)/d(leaf), times `gradient`, into every leaf's .grad. `gradient` is
        required unless self has one element. Raises RuntimeError when self does not require
        grad, or when the graph was already freed by an earlier backward (pass
        retain_graph=True to the first one)."""
        # The one call-time import of the package, as torch/_tensor.py does: the engine is a
        # layer above this module (it walks graphs of Functions, which are made of Tensors).
        from autograd import engine
        engine.backward(self, gradient, retain_graph, create_graph, inputs)

    def detach(self):
        """A tensor sharing this one's memory (and version counter) outside the graph."""
        t = _new(Tensor)
        t.array = self.array
        t._vc = self._vc
        return t

    def detach_(self):
        """Take this tensor out of the graph in place (it becomes a leaf); returns self."""
        self.grad_fn = None
        self._rg = False
        self._output_nr = 0
        return self

    def _clone_data(self):
        """A detached copy (contiguous, own memory)."""
        return Tensor._wrap(self.array.copy())

    # -- metadata ---------------------------------------------------------------------------------

    @property
    def shape(self):
        """The sizes of the dimensions, an autograd.Size (a tuple)."""
        return _tuple_new(Size, self.array.shape)

    @property
    def dtype(self):
        return self.array.dtype

    @property
    def device(self):
        """The device the data live on: autograd.device('cpu') or ('gpu'), equal to the string."""
        name = self.array.device
        return _DEVICES.get(name) or _DEVICES.setdefault(name, device(name))

    @property
    def ndim(self):
        return self.array.ndim

    @property
    def is_cuda(self):
        """True when the data live on the OpenCL GPU ("cuda" is another name for it)."""
        return self.array.device == "gpu"

    def is_floating_point(self):
        return is_floating(self.array.dtype)

    def size(self, dim=None):
        """The shape (an autograd.Size), or its length along dim."""
        if dim is None:
            return _tuple_new(Size, self.array.shape)
        return self.array.shape[norm_dim(dim, self.array.ndim)]

    def dim(self):
        return self.array.ndim

    def numel(self):
        return self.array.size

    def nelement(self):
        return self.array.size

    def element_size(self):
        return self.array.itemsize

    def stride(self, dim=None):
        """Strides in elements (PyTorch's convention), or the stride along dim."""
        item = self.array.itemsize
        strides = tuple(s // item for s in self.array.strides)
        return strides if dim is None else strides[norm_dim(dim, self.array.ndim)]

    def is_contiguous(self):
        return self.array.flags.c_contiguous

    def data_ptr(self):
        return self.array.data_ptr

    def __len__(self):
        if self.array.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.array.shape[0]

    # -- conversion -------------------------------------------------------------------------------

    def item(self):
        """The one element as a Python number (RuntimeError when there is not exactly one)."""
        if self.array.size != 1:
            raise RuntimeError(f"a Tensor with {self.array.size} elements cannot be converted to "
                               f"Scalar")
        return self.array.reshape(()).item()

    def tolist(self):
        return self.array.tolist()

    def numpy(self, *, force=False):
        """The data as a NumPy array sharing memory (CPU). RuntimeError when the tensor
        requires grad (use detach().numpy())."""
        if self._rg and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        import numpy
        data = self.array if self.array.device == "cpu" else self.array.to("cpu")
        return numpy.asarray(data)

    def __array__(self, dtype=None, copy=None):
        """NumPy's conversion with numpy.array's rules: numpy.array(t) copies, numpy.asarray(t)
        shares a CPU tensor's memory (device tensors give a host copy)."""
        import numpy
        if self.array.device != "cpu":
            return self.array.__array__(dtype, copy)
        return numpy.array(self.array, dtype=dtype, copy=copy)

    def __dlpack__(self, *args, **kwargs):
        if self._rg:
            raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
        return self.array.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()

    def __bool__(self):
        if self.array.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with "
                               f"{'no values' if self.array.size == 0 else 'more than one value'} "
                               f"is ambiguous")
        return bool(self.item())

    def _one(self):
        """The one element, for float() / int() (ValueError otherwise, as PyTorch)."""
        if self.array.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self.item()

    def __float__(self):
        return float(self._one())

    def __int__(self):
        return int(self._one())

    def __index__(self):
        if self.array.dtype.kind not in "iub" or self.array.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return operator.index(self.item())

    def __iter__(self):
        if self.array.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.array.shape[0]))

    def __repr__(self):
        return format_tensor(self)

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return (_rebuild, (self.array.copy(), self._rg))

    def __deepcopy__(self, memo):
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.")
        t = Tensor._wrap(self.array.copy())
        t._rg = self._rg
        if self.grad is not None:
            t.grad = Tensor._wrap(self.grad.array.copy())
        if type(self) is not Tensor:
            t.__class__ = type(self)
        memo[id(self)] = t
        return t


class _RemovableHandle:
    """What register_hook returns: handle.remove() unregisters the hook."""

    def __init__(self, hooks, hook):
        self._hooks = hooks
        self._hook = hook

    def remove(self):
        try:
            self._hooks.remove(self._hook)
        except ValueError:
            pass


class device(str):
    """A device: 'cpu' or 'gpu' (the OpenCL device). 'cuda' and 'opencl' are other names of
    'gpu', so PyTorch programs run unchanged: device('cuda') == device('gpu') == 'gpu', and its
    .type is 'gpu'. A str, so it compares equal to the name; .index is the number after ':'
    (or the index argument), None when not given. RuntimeError for other device names."""

    def __new__(cls, name="cpu", index=None):
        if isinstance(name, device) and index is None:
            return name
        text = str(name)
        kind, sep, num = text.partition(":")
        if kind in ("cuda", "opencl"):
            kind = "gpu"
        if kind not in ("cpu", "gpu") or (sep and not num.isdigit()):
            raise RuntimeError(f"Expected one of cpu, gpu, cuda device type at start of device "
                               f"string: {text}")
        out = str.__new__(cls, kind)
        if sep:
            out.index = int(num)
        elif index is not None:
            out.index = operator.index(index)
        return out

    @property
    def type(self):
        return str(self)

    index = None

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self}')"
        return f"device(type='{self}', index={self.index})"


def device_name(d):
    """'cpu' or 'gpu' for any accepted spelling of a device ('cuda:0', autograd.device('cuda'),
    'gpu' ...); RuntimeError for others (see device). A GPU ordinal ('cuda:1') names the device
    this process uses: before the first GPU operation it chooses it, afterwards it must be the
    one in use (RuntimeError otherwise; one device per process, see autograd.cuda)."""
    if type(d) is str and (d == "cpu" or d == "gpu"):
        return d
    d = device(d)
    if d.index is not None and d == "gpu":
        importlib.import_module("carray.opencl").select(d.index)
    return str(d)


_DEVICES = {}


def _rebuild(data, requires_grad):
    t = Tensor._wrap(data)
    t._rg = requires_grad
    return t


def norm_dim(dim, ndim):
    """dim wrapped into [0, ndim) (a 0-d tensor accepts 0 and -1); IndexError naming the range
    otherwise, as PyTorch. Shared by every op taking a dim."""
    n = max(ndim, 1)
    try:
        d = operator.index(dim)
    except TypeError:
        raise TypeError(f"dim must be an int, not {type(dim).__name__}") from None
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {d})")
    return d % n


def _to_array(data, dtype, device):
    """data as a carray.Array, float32 for Python floats (PyTorch's default), of dtype/device."""
    if isinstance(data, Tensor):
        data = data.array
    if dtype is not None:
        dtype = carray.dtype(dtype)
    if isinstance(data, carray.Array):
        arr = data
        if dtype is not None and arr.dtype != dtype:
            arr = arr.astype(dtype)
    else:
        arr = carray.asarray(data, dtype=dtype)
        if dtype is None and arr.dtype == carray.float64 and not _is_float64_source(data):
            arr = arr.astype(carray.float32)
    if device is not None and arr.device != device_name(device):
        arr = arr.to(device_name(device))
    return arr


def _is_float64_source(data):
    """True for array objects that carry their own float64 dtype (NumPy arrays, buffers), and
    for sequences (carray reads Python floats as float32, so float64 came from an element such
    as numpy.float64, as PyTorch infers)."""
    return hasattr(data, "dtype") or hasattr(data, "__array_interface__") or \
        isinstance(data, (list, tuple))

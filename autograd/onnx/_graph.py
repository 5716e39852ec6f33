"""The recording hook and the ONNX graph under construction.

Tracer: installed with autograd.function.set_tracer, it runs each Function application itself
(with the hook unset, so the ops a Function's forward applies inside are not recorded) and keeps
(cls, args, kwargs, result) in order. Keeping the arguments alive keeps tensor ids unique.

Graph: ONNX names for tensors. A tensor is a graph value once an input or a node output, an
initializer (under its state_dict name) when it is a parameter or buffer, and otherwise a
constant initializer holding its present value (a mask built inside forward, a folded buffer
computation).
"""


from autograd import function
from autograd.tensor import Tensor


def _np():
    """NumPy, imported when an export runs (`import autograd` never imports it)."""
    import numpy
    return numpy


class Tracer:
    """The hook: records every Function application as (cls, args, kwargs, result)."""

    def __init__(self):
        self.records = []
        self.modules = []   # (dotted name, Module) of the forwards running now, innermost last
        self.where = []     # per record: the innermost module running it, or None

    def __call__(self, cls, args, kwargs):
        prev = function.set_tracer(None)
        try:
            result = cls.apply(*args, **kwargs)
        finally:
            function.set_tracer(prev)
        self.records.append((cls, args, kwargs, result))
        self.where.append(self.modules[-1] if self.modules else None)
        return result

    def __enter__(self):
        self._prev = function.set_tracer(self)
        return self

    def __exit__(self, *exc):
        function.set_tracer(self._prev)


def np_of(array):
    """A carray.Array as a NumPy array (copied to the host when on the gpu)."""
    if array.device != "cpu":
        array = array.to("cpu")
    return _np().asarray(array)


def np_dtype(dtype):
    """The NumPy dtype of a carray dtype."""
    return _np().dtype(str(dtype))


class Graph:
    """Nodes, initializers and the tensor -> name table of the graph being built."""

    def __init__(self, onnx, params):
        self.onnx = onnx
        self.nodes = []
        self.initializers = []
        self.names = {}         # id(Tensor) -> value name
        self.array_names = {}   # id(carray.Array) -> value name (ops that take a tensor's data)
        self.params = params    # id(Tensor) -> (Tensor, state_dict name)
        self.param_arrays = {id(t.array): (n, t) for t, n in params.values()}
        self.done_params = set()
        self.count = 0

    def fresh(self, base):
        self.count += 1
        return f"{base}_{self.count}"

    def bind(self, tensor, name):
        """Name tensor (and its data) as the graph value `name`."""
        self.names[id(tensor)] = name
        self.array_names[id(tensor.array)] = name

    def known(self, x):
        """True when x is a graph value or a parameter (so an op on it must be exported)."""
        if isinstance(x, Tensor):
            return id(x) in self.names or id(x) in self.params or \
                id(x.array) in self.array_names
        if isinstance(x, (list, tuple)):
            return any(self.known(v) for v in x)
        return id(x) in self.array_names or id(x) in self.param_arrays

    def constant(self, value, base="const"):
        """An initializer holding the NumPy array value; returns its name."""
        name = self.fresh(base)
        self.initializers.append(self.onnx.numpy_helper.from_array(_np().ascontiguousarray(value),
                                                                   name))
        return name

    def _param(self, name, tensor):
        if name not in self.done_params:
            self.done_params.add(name)
            self.initializers.append(self.onnx.numpy_helper.from_array(
                _np().ascontiguousarray(np_of(tensor.array)), name))
        return name

    def value(self, x, dtype=None):
        """The name of x (a Tensor, a carray.Array or a Python number), cast to the carray
        dtype `dtype` when given and different."""
        if isinstance(x, Tensor):
            arr = x.array
            name = self.names.get(id(x)) or self.array_names.get(id(arr))
            if name is None and id(x) in self.params:
                name = self._param(self.params[id(x)][1], x)
            if name is None:
                name = self.constant(np_of(arr))
        elif isinstance(x, (bool, int, float)):
            nd = np_dtype(dtype) if dtype is not None else _np().asarray(x).dtype
            return self.constant(_np().asarray(x, dtype=nd))
        else:
            arr = x
            name = self.array_names.get(id(arr))
            if name is None and id(arr) in self.param_arrays:
                pname, t = self.param_arrays[id(arr)]
                name = self._param(pname, t)
            if name is None:
                name = self.constant(np_of(arr))
        if dtype is not None and arr.dtype != dtype:
            name = self.node("Cast", [name], to=self.onnx_type(dtype))
        return name

    def onnx_type(self, dtype):
        """The ONNX element type of a carray dtype."""
        return self.onnx.helper.np_dtype_to_tensor_dtype(np_dtype(dtype))

    def ints(self, values):
        """An int64 1-d constant (shapes, axes, pads)."""
        return self.constant(_np().asarray(list(values), dtype=_np().int64), "ints")

    def node(self, op, inputs, n_out=1, **attrs):
        """Add an ONNX node; returns its output name (a list of them when n_out > 1)."""
        outs = [self.fresh(op.lower()) for _ in range(n_out)]
        self.nodes.append(self.onnx.helper.make_node(op, list(inputs), outs, name=outs[0],
                                                     **attrs))
        return outs[0] if n_out == 1 else outs

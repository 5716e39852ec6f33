"""autograd.onnx.export: trace the model once (twice with dynamic axes) and write the graph."""

import enum
import inspect

import carray
from autograd.grad_mode import no_grad
from autograd.nn.dropout import Dropout
from autograd.onnx._errors import UnsupportedOperatorError
from autograd.onnx._graph import Graph, Tracer
from autograd.onnx._symbolic import SYMBOLICS
from autograd.tensor import Tensor

_DEFAULT_OPSET = 17


class TrainingMode(enum.IntEnum):
    """The mode export runs the model in (torch.onnx.TrainingMode): EVAL (the default) puts it
    in eval mode, PRESERVE keeps its mode, TRAINING puts it in training mode."""

    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


def _import_onnx():
    try:
        import onnx  # an optional extra: imported only when exporting
    except ImportError:
        raise ImportError("autograd.onnx.export needs the onnx package: "
                          "pip install 'carray[onnx]' (or pip install onnx)") from None
    return onnx


def export(model, args, f, input_names=None, output_names=None, dynamic_axes=None,
           opset_version=None, training=TrainingMode.EVAL):
    """Export model (an autograd.nn.Module, run on the example args, a Tensor or a tuple of
    them) to the ONNX file f (a path or a binary file object), as torch.onnx.export.
    Parameters and buffers become initializers under their state_dict names (in training mode
    the running statistics after the one traced forward, as torch.onnx); input_names and
    output_names name the graph's inputs and outputs; dynamic_axes ({name: {axis: "label"}} or
    {name: [axes]}) makes those axes symbolic. Default opset: 17. training (a TrainingMode)
    picks the mode the model runs in, eval by default; in training mode batch norm uses batch
    statistics (BatchNormalization with training_mode=1, as torch.onnx). Raises ImportError
    without the onnx package, autograd.onnx.UnsupportedOperatorError for an op with no ONNX
    mapping and for a dropout module in training mode (named), ValueError for names that do
    not match the inputs/outputs or an unknown training mode."""
    onnx = _import_onnx()
    opset = _DEFAULT_OPSET if opset_version is None else int(opset_version)
    args = (args,) if isinstance(args, Tensor) else tuple(args)
    for i, a in enumerate(args):
        if not isinstance(a, Tensor):
            raise ValueError(f"export(): args must be Tensors, but argument {i} is "
                             f"{type(a).__name__}")
    input_names = list(input_names) if input_names is not None else _arg_names(model, len(args))
    if len(input_names) > len(args):
        raise ValueError(f"export(): {len(input_names)} input_names given for {len(args)} "
                         f"inputs")
    input_names += [f"input_{i}" for i in range(len(input_names), len(args))]
    dynamic_axes = {k: _axes_dict(k, v) for k, v in (dynamic_axes or {}).items()}

    was_training = model.training
    _set_mode(model, training)
    try:
        _check_no_dropout(model)
        records, outputs, where = _trace(model, args, with_modules=True)
        alt = None
        dyn_inputs = {i: dynamic_axes[n] for i, n in enumerate(input_names) if n in dynamic_axes}
        if dyn_inputs:
            # the second trace must not update running statistics a second time
            buffers = [(b, b.array.copy()) for b in model.buffers()]
            try:
                records2, outputs2, _ = _trace(model, _grown(args, dyn_inputs))
            finally:
                for b, saved in buffers:
                    b.array[...] = saved
            alt = _alt_shapes(records, records2)
    finally:
        model.train(was_training)

    outputs = _flat_outputs(outputs)
    output_names = list(output_names) if output_names is not None else []
    if len(output_names) > len(outputs):
        raise ValueError(f"export(): {len(output_names)} output_names given for {len(outputs)} "
                         f"outputs")
    output_names += [f"output_{i}" for i in range(len(output_names), len(outputs))]
    unknown = set(dynamic_axes) - set(input_names) - set(output_names)
    if unknown:
        raise ValueError(f"export(): dynamic_axes names {sorted(unknown)} are neither "
                         f"input_names nor output_names")

    params = {}
    for name, t in list(model.named_parameters()) + list(model.named_buffers()):
        params.setdefault(id(t), (t, name))
    g = Graph(onnx, params)
    for a, name in zip(args, input_names):
        g.bind(a, name)
    for i, (cls, a, kw, result) in enumerate(records):
        if not g.known(a) and not g.known(tuple(kw.values())):
            continue  # nothing from the inputs or parameters: the result is a constant
        emit = SYMBOLICS.get(cls)
        if emit is None:
            raise UnsupportedOperatorError(f"Exporting the operator '{cls.__name__}'"
                                           f"{_in_module(where[i])} to ONNX opset version "
                                           f"{opset} is not supported")
        op = _Op(a, kw, result, opset, alt[i] if alt is not None else None)
        names = emit(g, op)
        if isinstance(result, tuple):
            for t, n in zip(result, names if isinstance(names, list) else [names]):
                if isinstance(t, Tensor):
                    g.bind(t, n)
        else:
            g.bind(result, names)
    for t, name in zip(outputs, output_names):
        g.nodes.append(onnx.helper.make_node("Identity", [g.value(t)], [name], name=name))

    used = {n for node in g.nodes for n in node.input}
    g.initializers = [t for t in g.initializers if t.name in used]  # folded-away constants
    outputs2 = _flat_outputs(outputs2) if dyn_inputs else None
    graph = onnx.helper.make_graph(
        g.nodes, "main_graph",
        [_value_info(g, a, n, dynamic_axes.get(n), None) for a, n in zip(args, input_names)],
        [_value_info(g, t, n, dynamic_axes.get(n), outputs2[i] if outputs2 else None)
         for i, (t, n) in enumerate(zip(outputs, output_names))],
        initializer=g.initializers)
    proto = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", opset)],
                                   producer_name="autograd")
    proto.ir_version = min(proto.ir_version, 10)  # what current runtimes read
    onnx.checker.check_model(proto)
    onnx.save(proto, f)


def _set_mode(model, training):
    if training == TrainingMode.EVAL:
        model.eval()
    elif training == TrainingMode.TRAINING:
        model.train()
    elif training != TrainingMode.PRESERVE:
        raise ValueError(f"export(): training must be an autograd.onnx.TrainingMode, not "
                         f"{training!r}")


def _check_no_dropout(model):
    """A dropout in training mode draws its mask while tracing (it would be folded into a
    constant): UnsupportedOperatorError naming the module."""
    for name, m in model.named_modules():
        p = m.p if isinstance(m, Dropout) else getattr(m, "dropout", None)
        if m.training and isinstance(p, float) and p > 0:
            raise UnsupportedOperatorError(
                f"Exporting {type(m).__name__} module '{name or type(m).__name__}' in training "
                f"mode (dropout p={p}) to ONNX is not supported: export in eval mode "
                f"(training=TrainingMode.EVAL, the default)")


class _Op:
    """One recorded application, as the symbolic functions see it."""

    __slots__ = ("args", "kwargs", "result", "opset", "alt")

    def __init__(self, args, kwargs, result, opset, alt):
        self.args, self.kwargs, self.result, self.opset, self.alt = \
            args, kwargs, result, opset, alt


def _arg_names(model, n):
    """The names of forward's first n parameters (torch.onnx's default input names)."""
    try:
        params = [p.name for p in inspect.signature(model.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return params[:n]


def _axes_dict(name, axes):
    if isinstance(axes, dict):
        return {int(k): str(v) for k, v in axes.items()}
    if isinstance(axes, (list, tuple)):
        return {int(k): f"{name}_dynamic_axes_{i + 1}" for i, k in enumerate(axes)}
    raise ValueError(f"export(): dynamic_axes['{name}'] must be a dict or a list of axes, not "
                     f"{type(axes).__name__}")


def _trace(model, args, with_modules=False):
    """Run model on args with the tracer set: (records, outputs, the module of each record).
    with_modules: forward hooks on every submodule tell the tracer which module runs."""
    tracer = Tracer()
    handles = []

    def leave(module, inputs, output):
        tracer.modules.pop()

    if with_modules:
        for name, m in model.named_modules():
            entry = (name or type(model).__name__, m)
            handles.append(m.register_forward_pre_hook(
                lambda mod, a, e=entry: tracer.modules.append(e), prepend=True))
            handles.append(m.register_forward_hook(leave))
    try:
        with no_grad(), tracer:
            outputs = model(*args)
    finally:
        for h in handles:
            h.remove()
    return tracer.records, outputs, tracer.where


def _in_module(entry):
    """' in module 'name' (Class)' for an error message, or '' outside every module."""
    if entry is None:
        return ""
    name, m = entry
    return f" in module '{name}' ({type(m).__name__})"


def _grown(args, dyn_inputs):
    """args with each dynamic axis one longer (its first slice repeated), for the second trace
    that tells which dims of the recorded shapes follow the dynamic axes."""
    out = list(args)
    for i, axes in dyn_inputs.items():
        arr = args[i].array
        for ax in axes:
            first = arr[(slice(None),) * (ax % arr.ndim) + (slice(0, 1),)]
            arr = carray.concatenate([arr, first], axis=ax)
        out[i] = Tensor._wrap(arr)
    return tuple(out)


def _shapes(result):
    if isinstance(result, tuple):
        return tuple(t.shape if isinstance(t, Tensor) else None for t in result)
    return result.shape


def _alt_shapes(records, records2):
    if len(records) != len(records2) or any(r[0] is not s[0] for r, s in zip(records, records2)):
        raise UnsupportedOperatorError("export(): the model runs different ops when the dynamic "
                                       "axes change size; it cannot be exported with "
                                       "dynamic_axes")
    return [_shapes(r[3]) for r in records2]


def _flat_outputs(outputs):
    if isinstance(outputs, Tensor):
        return [outputs]
    flat = []
    for o in outputs:
        flat.extend(_flat_outputs(o) if isinstance(o, (tuple, list)) else [o])
    return flat


def _value_info(g, t, name, axes, alt):
    """The graph input/output entry: dtype and shape, `axes` ({axis: label}) symbolic and dims
    that changed in the second trace (alt: that trace's tensor) unnamed."""
    dims = list(t.shape)
    axes = {a % max(len(dims), 1): label for a, label in (axes or {}).items()}
    for i in range(len(dims)):
        if i in axes:
            dims[i] = axes[i]
        elif alt is not None and alt.shape[i] != t.shape[i]:
            dims[i] = None
    return g.onnx.helper.make_tensor_value_info(name, g.onnx_type(t.array.dtype), dims)

"""Module.register_full_backward_hook's machinery (torch/utils/hooks.py's BackwardHook).

A module with full backward hooks passes, in __call__, the tensor arguments that require grad
through one identity node (_InputsHook) and its tensor outputs through another (_OutputsHook).
Backward reaches the outputs' node first, which records grad_output; the inputs' node then has
every grad_input at once, calls hook(module, grad_input, grad_output) and passes on what the
hook returns in place of grad_input. When no input requires grad, the hooks run at the outputs'
node with grad_input all None, as PyTorch.
"""

from autograd.function import Function
from autograd.grad_mode import is_grad_enabled
from autograd.tensor import Tensor

__all__ = ["BackwardHook"]


class _InputsHook(Function):
    """Identity on the tensor inputs; backward runs the module's hooks."""

    @staticmethod
    def forward(ctx, state, *tensors):
        ctx.state = state
        return tuple(t.detach() for t in tensors)

    @staticmethod
    def backward(ctx, *grads):
        return (None,) + ctx.state.run_hooks(grads)


class _OutputsHook(Function):
    """Identity on the tensor outputs; backward records grad_output."""

    @staticmethod
    def forward(ctx, state, *tensors):
        ctx.state = state
        return tuple(t.detach() for t in tensors)

    @staticmethod
    def backward(ctx, *grads):
        ctx.state.outputs_done(grads)
        return (None,) + grads


def _tensor_positions(values):
    return [i for i, v in enumerate(values) if isinstance(v, Tensor) and v.requires_grad]


class BackwardHook:
    """One forward call's hook state: setup_inputs(args) before forward, setup_outputs(out)
    after."""

    def __init__(self, module, hooks):
        self.module = module
        self.hooks = hooks
        self.n_inputs = 0
        self.input_positions = None
        self.n_outputs = 0
        self.output_positions = []
        self.grad_outputs = None

    def setup_inputs(self, args):
        """args with the tensors that require grad replaced by the hooked identities."""
        self.n_inputs = len(args)
        positions = _tensor_positions(args)
        if not positions or not is_grad_enabled():
            return args
        self.input_positions = positions
        new = _InputsHook.apply(self, *(args[i] for i in positions))
        args = list(args)
        for i, t in zip(positions, new):
            args[i] = t
        return tuple(args)

    def setup_outputs(self, out):
        """out (a tensor, or a tuple/list of them) with its tensors that require grad hooked."""
        single = isinstance(out, Tensor)
        values = (out,) if single else out
        if not isinstance(values, (tuple, list)) or not is_grad_enabled():
            return out
        positions = _tensor_positions(values)
        if not positions:
            return out
        self.n_outputs = len(values)
        self.output_positions = positions
        new = _OutputsHook.apply(self, *(values[i] for i in positions))
        values = list(values)
        for i, t in zip(positions, new):
            values[i] = t
        return values[0] if single else type(out)(values)

    @staticmethod
    def _pack(positions, grads, n):
        packed = [None] * n
        for i, g in zip(positions, grads):
            packed[i] = g
        return tuple(packed)

    def outputs_done(self, grads):
        self.grad_outputs = self._pack(self.output_positions, grads, self.n_outputs)
        if self.input_positions is not None:
            return
        grad_inputs = (None,) * self.n_inputs
        for hook in list(self.hooks.values()):
            res = hook(self.module, grad_inputs, self.grad_outputs)
            if res is not None and not (isinstance(res, tuple) and
                                        all(r is None for r in res)):
                raise RuntimeError("Backward hook for Modules where no input requires gradient "
                                   "should always return None or None for all gradients.")

    def run_hooks(self, grads):
        """The gradients of the hooked inputs after every hook (each may replace them)."""
        grad_inputs = self._pack(self.input_positions, grads, self.n_inputs)
        for hook in list(self.hooks.values()):
            res = hook(self.module, grad_inputs, self.grad_outputs)
            if res is None:
                continue
            if not isinstance(res, (tuple, list)) or len(res) != len(grad_inputs):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, "
                                   f"got {len(res) if isinstance(res, (tuple, list)) else 1}, "
                                   f"but expected {len(grad_inputs)}")
            grad_inputs = tuple(res)
        return tuple(grad_inputs[i] for i in self.input_positions)

"""Composite: an op built from other autograd Functions that autograd.onnx records as one
application, so that it becomes one ONNX node (Conv with groups, ConvTranspose,
BatchNormalization, Pad) instead of the unfold/matmul/index steps it runs.

A subclass defines `compute(*args)`; `Cls.apply(*args)` runs it, through the tracing hook of
autograd/function.py when one is set (the hook runs `apply` again with itself unset, so the
Functions inside are not recorded). Gradients flow through the Functions compute applies.
"""

from autograd import function as _function


class Composite:
    """Base of the composite ops: apply(*args) = compute(*args), seen whole by the tracer."""

    @staticmethod
    def compute(*args):
        raise NotImplementedError

    @classmethod
    def apply(cls, *args):
        """compute(*args), recorded as one application while autograd.onnx traces."""
        tracer = _function._tracer
        if tracer is not None:
            return tracer(cls, args, {})
        return cls.compute(*args)

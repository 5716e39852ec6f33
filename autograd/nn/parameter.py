"""nn.Parameter: a leaf tensor that a Module registers as one of its parameters."""

import carray
from autograd.tensor import Tensor

__all__ = ["Parameter"]


class Parameter(Tensor):
    """Parameter(data=None, requires_grad=True): a tensor sharing data's memory (and version
    counter) that Modules list in parameters(). RuntimeError when requires_grad is asked for a
    non-float tensor; TypeError when data is not a Tensor or carray.Array."""

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            arr, vc = carray.empty((0,), dtype=carray.float32), [0]
        elif isinstance(data, Tensor):
            arr, vc = data.array, data._vc
        elif isinstance(data, carray.Array):
            arr, vc = data, [0]
        else:
            raise TypeError(f"Parameter(): data must be a Tensor, got {type(data).__name__}")
        self.array = arr
        self._vc = vc
        self.requires_grad = requires_grad

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (self.array.copy(), self._rg))


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)

"""parameters_to_vector / vector_to_parameters (torch.nn.utils.convert_parameters)."""

from autograd.ops.torch_functions import cat
from autograd.tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _same_device(param, device):
    if device is not None and param.device != device:
        raise TypeError("Found two parameters on different devices, this is currently not "
                        "supported.")
    return param.device


def parameters_to_vector(parameters):
    """The parameters flattened and concatenated into one 1-d tensor (differentiable).
    TypeError for parameters on different devices."""
    device = None
    flat = []
    for p in parameters:
        device = _same_device(p, device)
        flat.append(p.reshape(-1))
    return cat(flat)


def vector_to_parameters(vec, parameters):
    """Copy consecutive slices of vec into the parameters' data (their .data becomes views of
    vec). TypeError when vec is not a tensor or parameters are on different devices."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    device = None
    start = 0
    for p in parameters:
        device = _same_device(p, device)
        n = p.numel()
        p.data = vec[start:start + n].view_as(p).data
        start += n

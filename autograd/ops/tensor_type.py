"""Tensor.type and Tensor.cuda: PyTorch's legacy type names ('torch.FloatTensor') and the GPU's
other name.

Names carry this package's prefix: x.type() is 'autograd.FloatTensor' on the CPU and
'autograd.cuda.FloatTensor' on the GPU ("cuda" names the OpenCL device). x.type(...) accepts
those names with either prefix 'autograd.' or 'torch.', and dtypes.
"""

import carray
from autograd.tensor import device_name

__all__ = ["tensor_type", "tensor_cuda"]

_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
          "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
          "bool": "Bool"}
_DTYPES = {v + "Tensor": k for k, v in _NAMES.items()}


def _type_name(t):
    kind = _NAMES.get(t.array.dtype.name, t.array.dtype.name)
    return f"autograd.{'cuda.' if t.array.device == 'gpu' else ''}{kind}Tensor"


def _parse(name):
    """(dtype, device) of a name such as 'torch.cuda.FloatTensor'; ValueError for others."""
    for prefix in ("torch.", "autograd."):
        if name.startswith(prefix):
            rest = name[len(prefix):]
            device = "cpu"
            if rest.startswith("cuda."):
                rest, device = rest[len("cuda."):], "gpu"
            if rest in _DTYPES:
                return carray.dtype(_DTYPES[rest]), device
    raise ValueError(f"invalid type: {name!r}")


def tensor_type(self, dtype=None, non_blocking=False, **kwargs):
    """x.type(): this tensor's type name ('autograd.FloatTensor', 'autograd.cuda.LongTensor').
    x.type(t): self when already of type t, else a copy converted to t, a dtype or a name
    ('torch.DoubleTensor', 'autograd.cuda.FloatTensor': a 'cuda.' name moves it to the GPU,
    another to the CPU). ValueError for an unknown name, TypeError for another kind of t."""
    if dtype is None:
        return _type_name(self)
    if isinstance(dtype, str):
        dtype, device = _parse(dtype)
    elif isinstance(dtype, carray.DType):
        device = self.array.device
    else:
        raise TypeError("dtype must be a type, str, or dtype object")
    if dtype == self.array.dtype and device == self.array.device:
        return self
    return self.to(device=device, dtype=dtype)


def tensor_cuda(self, device=None, non_blocking=False, memory_format=None):
    """A copy on the GPU (the OpenCL device; self when already there). RuntimeError when device
    names a CPU."""
    if device is not None and not isinstance(device, int) and device_name(device) != "gpu":
        raise RuntimeError("Invalid device, must be cuda device")
    return self.to("gpu")




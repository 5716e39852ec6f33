"""What the lowest layers share: the default float dtype and PyTorch's names of dtypes.

Nothing here imports another autograd module, so tensor.py, function.py, _format.py and the
ops can all read it (autograd.get_default_dtype / set_default_dtype are these functions).
"""

import carray

__all__ = ["get_default_dtype", "set_default_dtype", "scalar_type_name"]

_default_float = carray.float32


def get_default_dtype():
    """The dtype of tensors made from Python floats (float32 unless set_default_dtype)."""
    return _default_float


def set_default_dtype(d):
    """Make d (float32 or float64) the dtype of tensors made from Python floats. TypeError for
    other dtypes."""
    global _default_float
    d = carray.dtype(d)
    if d.kind != "f":
        raise TypeError(f"only floating-point types are supported as the default type, "
                        f"got {d}")
    _default_float = d


def is_floating(dtype):
    """True for a floating dtype (bfloat16 included: its NumPy kind is ml_dtypes' 'V')."""
    return dtype.kind == "f" or dtype.name == "bfloat16"


def scalar_type_name(dtype):
    """PyTorch's name of a dtype in error messages: 'Float', 'Double', 'Long', 'Int', 'Bool'."""
    return _SCALAR_TYPE_NAMES.get(dtype.name, dtype.name)


_SCALAR_TYPE_NAMES = {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int",
                      "bool": "Bool", "int8": "Char", "int16": "Short", "uint8": "Byte",
                      "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64",
                      "float16": "Half", "bfloat16": "BFloat16"}

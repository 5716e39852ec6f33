"""The float32 matmul precision setting (torch.set_float32_matmul_precision), shared with
backends.cuda.matmul.allow_tf32."""

import warnings

__all__ = ["get_float32_matmul_precision", "set_float32_matmul_precision"]

_PRECISIONS = ("highest", "high", "medium")
_precision = "highest"


def get_float32_matmul_precision():
    """'highest', 'high' or 'medium', as last set (default 'highest')."""
    return _precision


def set_float32_matmul_precision(precision):
    """Record the float32 matmul precision PyTorch programs ask for: 'highest', 'high' or
    'medium'. carray's matmul always computes in full float32 (there is no TF32 or bfloat16
    fast path), so results do not change. An unknown name is ignored with a UserWarning, as
    PyTorch does."""
    global _precision
    if precision not in _PRECISIONS:
        warnings.warn(f"set_float32_matmul_precision(): invalid precision {precision!r}; "
                      f"expected one of {', '.join(_PRECISIONS)}", stacklevel=2)
        return
    _precision = precision

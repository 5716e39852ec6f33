"""The errors of autograd.onnx."""


class UnsupportedOperatorError(RuntimeError):
    """An op of the traced model has no ONNX mapping (as torch.onnx's error of that name)."""

"""autograd.backends.cuda (torch.backends.cuda): flags for the GPU. The GPU is carray's OpenCL
device, whose matmul is full float32: allow_tf32 and the reduced-precision flags are kept for
programs that set them and change no result."""

from autograd.backends import _precision

__all__ = ["matmul", "is_built"]


def is_built():
    """True: autograd always has its GPU backend (whether a device exists: autograd.cuda
    .is_available())."""
    return True


class _MatmulFlags:
    """backends.cuda.matmul: allow_tf32 (tied to get_float32_matmul_precision(): True unless
    'highest'), allow_fp16_reduced_precision_reduction, allow_bf16_reduced_precision_reduction.
    AttributeError for other names, as PyTorch."""

    _OTHER = ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction",
              "allow_fp16_accumulation")

    def __init__(self):
        object.__setattr__(self, "_values", {"allow_fp16_reduced_precision_reduction": True,
                                             "allow_bf16_reduced_precision_reduction": True,
                                             "allow_fp16_accumulation": False})

    def __getattr__(self, name):
        if name == "allow_tf32":
            return _precision.get_float32_matmul_precision() != "highest"
        if name in self._OTHER:
            return self._values[name]
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name, value):
        if name == "allow_tf32":
            _precision.set_float32_matmul_precision("high" if value else "highest")
        elif name in self._OTHER:
            self._values[name] = bool(value)
        else:
            raise AttributeError(f"Unknown attribute {name}")


matmul = _MatmulFlags()


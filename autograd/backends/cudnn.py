"""autograd.backends.cudnn (torch.backends.cudnn): flags programs set for cuDNN. There is no
cuDNN here (convolutions are carray's own kernels, deterministic, full float32), so the flags
are stored for reading back and change nothing:

    enabled        True    (PyTorch: use cuDNN)
    benchmark      False   (PyTorch: autotune convolution algorithms)
    deterministic  False   (PyTorch: pick deterministic algorithms; ours always are)
    allow_tf32     True    (PyTorch: TF32 in cuDNN convolutions; ours never use TF32)
"""

__all__ = ["enabled", "benchmark", "deterministic", "allow_tf32", "is_available", "version"]

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available():
    """False: autograd does not use cuDNN."""
    return False


def version():
    """None: there is no cuDNN."""
    return None

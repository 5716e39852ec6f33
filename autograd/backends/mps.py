"""autograd.backends.mps (torch.backends.mps): Apple's Metal backend, which autograd does not
have (Apple GPUs run through OpenCL as "gpu")."""

__all__ = ["is_available", "is_built"]


def is_available():
    """False: there is no MPS backend; use device "gpu" (OpenCL)."""
    return False


def is_built():
    """False: there is no MPS backend."""
    return False

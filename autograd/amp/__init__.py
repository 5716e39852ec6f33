"""autograd.amp: automatic mixed precision, as torch.amp (also autograd.cuda.amp).

autocast (a context manager and decorator) runs matmul/linear/convolution in float16 or
bfloat16 and softmax/norms/losses in float32; GradScaler scales the loss so small float16
gradients do not flush to zero, and skips steps whose gradients overflowed.
"""

from autograd.amp.autocast_mode import (
    autocast,
    custom_bwd,
    custom_fwd,
    get_autocast_dtype,
    is_autocast_available,
    is_autocast_enabled,
)
from autograd.amp.grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd", "is_autocast_available",
           "is_autocast_enabled", "get_autocast_dtype"]

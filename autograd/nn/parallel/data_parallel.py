"""DataParallel: PyTorch's single-process multi-GPU wrapper, here a pass-through.

carray uses one OpenCL device, so there is nothing to split a batch across: DataParallel runs
the wrapped module as it is, on the device its parameters are on. It keeps PyTorch's surface
so programs written for it run unchanged: the module is `.module`, and state_dict keys carry
the 'module.' prefix, as PyTorch's.
"""

from autograd.nn.module import Module

__all__ = ["DataParallel"]


class DataParallel(Module):
    """DataParallel(module, device_ids=None, output_device=None, dim=0): forward calls
    module(*inputs, **kwargs) on one device. device_ids and output_device are kept for
    reading back (only device 0 exists); TypeError when module is not a Module."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel wraps an nn.Module, got {type(module).__name__}")
        self.module = module
        self.device_ids = [0] if device_ids is None else list(device_ids)
        self.output_device = self.device_ids[0] if output_device is None and self.device_ids \
            else output_device
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)

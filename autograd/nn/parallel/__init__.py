"""autograd.nn.parallel: DataParallel (torch.nn.parallel). DistributedDataParallel belongs to
autograd's distributed package."""

from autograd.nn.parallel.data_parallel import DataParallel

__all__ = ["DataParallel"]

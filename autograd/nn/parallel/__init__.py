"""autograd.nn.parallel: DataParallel and DistributedDataParallel (torch.nn.parallel)."""

from autograd.nn.parallel.data_parallel import DataParallel

# data-parallel training over MPI (h15)
from autograd.nn.parallel.distributed import DistributedDataParallel  # noqa: E402

__all__ = ["DataParallel", "DistributedDataParallel"]

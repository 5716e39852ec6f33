"""DistributedSampler (torch.utils.data.distributed): each rank reads its own part of a
dataset.

The permutation comes from autograd's generator seeded with seed + epoch, so every rank draws
the same one (the numbers differ from torch's generator; the partitioning is torch's exactly).
"""

import math

from autograd import distributed as dist
from autograd.factories import Generator, randperm
from autograd.utils.data import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """DistributedSampler(dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
    drop_last=False): yields the indices rank `rank` of `num_replicas` reads: every
    num_replicas-th index of the (shuffled) index list, padded by repeating its start to a
    multiple of num_replicas, or cut to one with drop_last. num_replicas and rank default to the
    process group's. Call set_epoch(epoch) before each epoch for a new permutation. Raises
    ValueError for a rank outside [0, num_replicas - 1]."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None:
            num_replicas = dist.get_world_size()
        if rank is None:
            rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if drop_last and len(dataset) % num_replicas != 0:
            self.num_samples = math.ceil((len(dataset) - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(len(dataset) / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def _permutation(self):
        """The full index list before partitioning (the same on every rank)."""
        n = len(self.dataset)
        if not self.shuffle:
            return list(range(n))
        g = Generator()
        g.manual_seed(self.seed + self.epoch)
        return randperm(n, generator=g).tolist()

    def _partition(self, indices):
        """This rank's share of `indices` (torch's padding, cutting and striding)."""
        indices = list(indices)
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        return indices[self.rank:self.total_size:self.num_replicas]

    def __iter__(self):
        return iter(self._partition(self._permutation()))

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Use permutation number `epoch` (seed + epoch) from the next iteration on."""
        self.epoch = epoch

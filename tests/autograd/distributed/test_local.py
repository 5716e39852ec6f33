"""autograd.distributed without mpiexec: errors before init_process_group, DistributedSampler's
partitioning against torch's, and that importing autograd does not import mpi4py."""

import subprocess
import sys

import pytest

import autograd
import autograd.distributed as dist
from autograd import nn
from autograd.nn.parallel import DistributedDataParallel
from autograd.utils.data import DistributedSampler, TensorDataset


def test_import_autograd_does_not_import_mpi4py():
    code = "import sys, autograd, autograd.distributed; print('mpi4py' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("call", [
    lambda: dist.all_reduce(autograd.ones(2)), dist.get_rank, dist.get_world_size,
    dist.barrier, lambda: DistributedDataParallel(nn.Linear(2, 2)),
    lambda: DistributedSampler(list(range(4))), dist.new_group,
    lambda: dist.all_gather_object([None], 1), lambda: dist.gather_object(1),
    lambda: dist.scatter_object_list([None], [1]), lambda: dist.get_process_group_ranks(None)])
def test_before_init_process_group(call):
    torch = pytest.importorskip("torch")
    with pytest.raises(Exception) as theirs:
        torch.distributed.all_reduce(torch.ones(2))
    with pytest.raises(type(theirs.value), match="Default process group has not been "
                       "initialized, please make sure to call init_process_group."):
        call()
    with pytest.raises(RuntimeError):      # (older torch raised RuntimeError)
        call()
    assert not dist.is_initialized() and dist.is_available()


def test_bad_backend():
    with pytest.raises(ValueError, match="backend must be 'mpi'"):
        dist.init_process_group("nccl")


@pytest.mark.parametrize("n,replicas,drop_last", [(10, 3, False), (10, 3, True), (2, 5, False),
                                                   (12, 4, False), (7, 2, True), (1, 3, False)])
def test_sampler_partitions_as_torch(n, replicas, drop_last):
    torch = pytest.importorskip("torch")
    from torch.utils.data.distributed import DistributedSampler as TorchSampler
    data = TensorDataset(autograd.arange(n))
    seen = []
    for rank in range(replicas):
        ours = DistributedSampler(data, replicas, rank, shuffle=True, seed=3, drop_last=drop_last)
        ours.set_epoch(2)
        perm = ours._permutation()
        assert sorted(perm) == list(range(n))
        # torch without shuffling yields positions into the index list: map them through ours
        theirs = TorchSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(ours) == [perm[i] for i in theirs]
        assert len(ours) == len(theirs)
        plain = DistributedSampler(data, replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(plain) == list(theirs)
        seen.append(list(ours))
    flat = [i for part in seen for i in part]
    if drop_last:
        assert len(set(flat)) == len(flat)          # disjoint
    else:
        assert set(flat) == set(range(n))           # covers the data
        if n % replicas == 0:
            assert len(set(flat)) == len(flat)
    del torch


def test_sampler_epochs_and_seed():
    data = list(range(20))
    a = DistributedSampler(data, 2, 0, seed=1)
    first = list(a)
    assert list(a) == first
    a.set_epoch(1)
    assert list(a) != first
    b = DistributedSampler(data, 2, 1, seed=1)
    b.set_epoch(1)
    assert not set(a) & set(b) and set(a) | set(b) == set(data)


def test_sampler_bad_rank():
    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval "
                                         r"\[0, 1\]"):
        DistributedSampler(list(range(4)), num_replicas=2, rank=2)


def test_group_names_as_torch():
    torch = pytest.importorskip("torch")
    assert dist.group.WORLD is None and dist.GroupMember.WORLD is None   # before init
    assert dist.GroupMember.NON_GROUP_MEMBER == torch.distributed.GroupMember.NON_GROUP_MEMBER
    for name in ("new_group", "ProcessGroup", "gather_object", "scatter_object_list",
                 "send_object_list", "recv_object_list", "get_group_rank", "get_global_rank",
                 "get_process_group_ranks", "group", "GroupMember"):
        assert hasattr(torch.distributed, name) and hasattr(dist, name), name

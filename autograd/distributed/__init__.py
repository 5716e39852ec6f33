"""autograd.distributed: data-parallel training over MPI with torch.distributed's names.

    mpiexec -n 4 python train.py      # in train.py: autograd.distributed.init_process_group("mpi")

Importing this package does not import mpi4py; init_process_group does (pip install
'carray[distributed]'). See process_group.py for faults and timeouts, collectives.py for how
tensors reach MPI.
"""

from autograd.distributed.collectives import (
    ReduceOp,
    Work,
    all_gather,
    all_gather_into_tensor,
    all_gather_object,
    all_reduce,
    barrier,
    broadcast,
    broadcast_object_list,
    gather,
    gather_object,
    irecv,
    isend,
    recv,
    recv_object_list,
    reduce,
    reduce_scatter_tensor,
    scatter,
    scatter_object_list,
    send,
    send_object_list,
)
from autograd.distributed.groups import (
    GroupMember,
    get_global_rank,
    get_group_rank,
    get_process_group_ranks,
    group,
    new_group,
)
from autograd.distributed.process_group import (
    Backend,
    ProcessGroup,
    destroy_process_group,
    get_backend,
    get_rank,
    get_world_size,
    init_process_group,
    is_available,
    is_initialized,
    is_mpi_available,
    launched_by_mpiexec,
)

__all__ = ["Backend", "ReduceOp", "Work", "all_gather", "all_gather_into_tensor",
           "all_gather_object", "all_reduce", "barrier", "broadcast", "broadcast_object_list",
           "destroy_process_group", "gather", "get_backend", "get_rank", "get_world_size",
           "init_process_group", "irecv", "is_available", "is_initialized", "is_mpi_available",
           "isend", "launched_by_mpiexec", "recv", "reduce", "reduce_scatter_tensor", "scatter",
           "send",
           # process groups and object collectives (h15)
           "GroupMember", "ProcessGroup", "gather_object", "get_global_rank", "get_group_rank",
           "get_process_group_ranks", "group", "new_group", "recv_object_list",
           "scatter_object_list", "send_object_list"]

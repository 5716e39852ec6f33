"""Process groups other than the default one (torch.distributed.new_group and its helpers).

new_group(ranks) splits MPI.COMM_WORLD: the members get a ProcessGroup over the sub-communicator
(ranks numbered 0 .. len(ranks) - 1 in the order of their global ranks, as torch sorts them),
the other ranks get GroupMember.NON_GROUP_MEMBER, with which get_rank/get_world_size return -1
and collectives warn and do nothing, as torch's. `src=`/`dst=` arguments stay global ranks;
`group_src=`/`group_dst=` name a rank within the group.
"""

import datetime
import warnings

from autograd.distributed.process_group import (
    NON_GROUP_MEMBER,
    ProcessGroup,
    _default_group,
    _Group,
    _state,
    _world,
)

__all__ = ["new_group", "group", "GroupMember", "get_group_rank", "get_global_rank",
           "get_process_group_ranks"]


class _WorldMeta(type):
    """Gives `group` and `GroupMember` the class property WORLD (None before
    init_process_group)."""

    @property
    def WORLD(cls):
        return _world()


class group(metaclass=_WorldMeta):  # noqa: N801  (torch's name)
    """dist.group.WORLD: the default process group (torch.distributed.group)."""


class GroupMember(metaclass=_WorldMeta):
    """GroupMember.WORLD and GroupMember.NON_GROUP_MEMBER, as torch's."""

    NON_GROUP_MEMBER = NON_GROUP_MEMBER


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None):
    """A ProcessGroup of the given global ranks (all ranks when None), backed by an MPI
    sub-communicator; every rank of the default group must call it (MPI Comm.Split). Ranks
    outside `ranks` get GroupMember.NON_GROUP_MEMBER. `timeout` (a datetime.timedelta; the
    default group's when None) bounds this group's collectives. Raises ValueError for
    duplicate or out-of-range ranks or a backend other than "mpi", TypeError for a bad
    timeout."""
    default = _default_group()
    if backend is not None and str(backend).lower() not in ("mpi", "gloo", "cpu:mpi"):
        raise ValueError(f"new_group: backend must be 'mpi' (got {backend!r}); "
                         "autograd.distributed runs over MPI")
    if timeout is None:
        seconds = default.timeout
    elif isinstance(timeout, datetime.timedelta):
        seconds = timeout.total_seconds()
    else:
        raise TypeError(f"new_group: timeout must be a datetime.timedelta, got "
                        f"{type(timeout).__name__}")
    world = default.size
    if ranks is None:
        ranks = list(range(world))
    else:
        ranks = sorted(ranks)
        if len(set(ranks)) != len(ranks):
            raise ValueError(f"ranks list must not contain duplicate entries, got {ranks}")
        if len(ranks) > world:
            raise ValueError("the new group's world size should be less or equal to the world "
                             "size set by init_process_group")
        for r in ranks:
            if not isinstance(r, int) or not 0 <= r < world:
                raise ValueError(f"Rank {r} is out of range. Valid ranks are 0 to {world - 1} "
                                 f"(world_size={world})")
    member = default.rank in ranks
    mpi = default.MPI
    comm = default.comm.Split(0 if member else mpi.UNDEFINED, default.rank)
    if not member:
        return NON_GROUP_MEMBER
    return ProcessGroup(_Group(mpi, comm, seconds), ranks, default)


def get_process_group_ranks(group):
    """The global ranks of `group` (the default group when None), in group-rank order."""
    if group is None:
        group = _world() or _default_group()
    _state(group)
    return list(group._ranks)


def get_group_rank(group, global_rank):
    """The rank within `group` of global rank `global_rank`; ValueError when it is not a
    member."""
    ranks = get_process_group_ranks(group)
    if global_rank not in ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return ranks.index(global_rank)


def get_global_rank(group, group_rank):
    """The global rank of rank `group_rank` of `group`; ValueError when there is none."""
    ranks = get_process_group_ranks(group)
    if not isinstance(group_rank, int) or not 0 <= group_rank < len(ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return ranks[group_rank]


# --- for the collectives -------------------------------------------------------------------

def _resolve(group, fn):
    """The _Group that runs `fn` for the `group` argument; None (after torch's warning) when
    this rank is not a member."""
    if group is not None and group == NON_GROUP_MEMBER:
        rank = _default_group().rank
        warnings.warn(f"Running {fn} on global rank {rank} which does not belong to the given "
                      "group.", stacklevel=3)
        return None
    return _state(group)


def _root(group, state, fn, name, global_rank, group_rank, default=None):
    """The group rank of a src/dst given as a global rank (`name`) or as a group rank
    (`group_name`); `default` (a global rank) when neither is given. ValueError when both are
    given, neither (without default), or the rank is not in the group."""
    group_name = "group_" + name
    if global_rank is None and group_rank is None:
        global_rank = default
    if group_rank is not None:
        if global_rank is not None:
            raise ValueError(f"{fn}: Can't specify both {group_name} and {name}")
        if not isinstance(group_rank, int) or not 0 <= group_rank < state.size:
            raise ValueError(f"{fn}: {group_name} must be a rank in [0, {state.size}), got "
                             f"{group_rank!r}")
        return group_rank
    if global_rank is None:
        raise ValueError(f"{fn}: Must specify {name} or {group_name}")
    if group is None:
        if not isinstance(global_rank, int) or not 0 <= global_rank < state.size:
            raise ValueError(f"{fn}: {name} must be a rank in [0, {state.size}), got "
                             f"{global_rank!r}")
        return global_rank
    ranks = group._ranks
    if global_rank not in ranks:
        raise ValueError(f"{fn}: {name} must be a global rank of the group {ranks}, got "
                         f"{global_rank!r}")
    return ranks.index(global_rank)

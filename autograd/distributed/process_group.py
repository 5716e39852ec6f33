"""The default process group over MPI: init_process_group and friends (torch.distributed).

mpi4py is imported only when a process group starts (init_process_group), so `import autograd`
never needs it. The group is MPI.COMM_WORLD: rank and world size come from mpiexec's launch.
ProcessGroup (at the end) is the object form of a group: dist.group.WORLD for this one,
groups.py's new_group for sub-communicators.

Faults: once a group exists, an uncaught exception on one rank calls MPI Abort (through
sys.excepthook), so the other ranks stop instead of waiting forever in a collective; and every
collective waits at most `timeout` (init_process_group's argument, 30 minutes by default, as
torch's) before raising RuntimeError.

Devices: init_process_group sets LOCAL_RANK and LOCAL_WORLD_SIZE (as torchrun does) from MPI's
shared-memory split, and on a machine with several OpenCL GPUs gives each of its ranks its own
(local rank modulo the count) unless the process chose one before (autograd.cuda.set_device).
"""

import datetime
import importlib
import os
import sys
import time

__all__ = ["Backend", "init_process_group", "is_initialized", "is_available", "is_mpi_available",
           "get_rank", "get_world_size", "get_backend", "destroy_process_group",
           "launched_by_mpiexec", "ProcessGroup"]

_NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                    "init_process_group.")
_INSTALL = ("autograd.distributed needs mpi4py and an MPI library: pip install "
            "'carray[distributed]' (mpi4py; on Linux x86-64 `pip install mpich` brings MPICH)")

# environment variables that MPI launchers set in every rank (Open MPI, MPICH/Hydra, Intel MPI,
# MVAPICH, Slurm's PMI)
_LAUNCH_VARS = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS",
                "MV2_COMM_WORLD_SIZE")


class _NotInitializedError(ValueError, RuntimeError):
    """Raised before init_process_group: a ValueError as torch 2's, and a RuntimeError as older
    torch's (so either `except` catches it)."""


class Backend(str):
    """The name of a backend; only "mpi" exists here (torch.distributed.Backend)."""

    MPI = "mpi"


class _Group:
    """The state of the default group: the communicator and its settings."""

    def __init__(self, mpi, comm, timeout):
        self.MPI = mpi
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.timeout = timeout
        self.check = os.environ.get("CARRAY_DISTRIBUTED_CHECK", "1") != "0"


_group = None
_old_excepthook = None


def _mpi():
    """The mpi4py.MPI module; ImportError naming the extra to install when missing."""
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise ImportError(_INSTALL) from e
    return MPI


def is_available():
    """True: the distributed package is part of autograd (torch.distributed.is_available)."""
    return True


def is_mpi_available():
    """True when mpi4py can be imported (torch.distributed.is_mpi_available)."""
    try:
        _mpi()
    except ImportError:
        return False
    return True


def launched_by_mpiexec():
    """True when this process was started by an MPI launcher (mpiexec, mpirun, srun) with more
    than one rank, judged from the environment the launcher sets."""
    for var in _LAUNCH_VARS:
        value = os.environ.get(var)
        if value is not None:
            return not value.isdigit() or int(value) > 1 or var == "PMIX_RANK"
    return False


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Start the default process group over MPI.COMM_WORLD (torch.distributed.
    init_process_group). Rank and world size come from MPI (mpiexec); passing others raises
    ValueError. `timeout` (a datetime.timedelta) bounds every collective's wait. Raises
    ValueError for a backend other than "mpi", RuntimeError when called twice, ImportError when
    mpi4py is missing."""
    global _group, _old_excepthook
    if backend is not None and str(backend).lower() not in ("mpi", "gloo", "cpu:mpi"):
        raise ValueError(f"init_process_group: backend must be 'mpi' (got {backend!r}); "
                         "autograd.distributed runs over MPI")
    if _group is not None:
        raise RuntimeError("trying to initialize the default process group twice!")
    if timeout is None:
        timeout = datetime.timedelta(minutes=30)
    if not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"init_process_group: timeout must be a datetime.timedelta, got "
                        f"{type(timeout).__name__}")
    mpi = _mpi()
    if not mpi.Is_initialized():
        mpi.Init_thread(mpi.THREAD_SERIALIZED)
    comm = mpi.COMM_WORLD
    if world_size not in (-1, None) and world_size != comm.Get_size():
        raise ValueError(f"init_process_group: world_size={world_size} but MPI started "
                         f"{comm.Get_size()} processes; the MPI backend takes both from mpiexec")
    if rank not in (-1, None) and rank != comm.Get_rank():
        raise ValueError(f"init_process_group: rank={rank} but MPI gave this process rank "
                         f"{comm.Get_rank()}; the MPI backend takes both from mpiexec")
    _group = _Group(mpi, comm, timeout.total_seconds())
    os.environ.setdefault("RANK", str(_group.rank))
    os.environ.setdefault("WORLD_SIZE", str(_group.size))
    local_rank, local_size = _local_rank(mpi, comm)
    os.environ.setdefault("LOCAL_RANK", str(local_rank))
    os.environ.setdefault("LOCAL_WORLD_SIZE", str(local_size))
    if local_size > 1:
        _spread_over_devices(local_rank)
    if _old_excepthook is None:
        _old_excepthook = sys.excepthook
        sys.excepthook = _abort_on_exception


def _local_rank(mpi, comm):
    """(this process's rank among those on its machine, how many there are): MPI's
    shared-memory split of the communicator (what torchrun's LOCAL_RANK says)."""
    local = comm.Split_type(mpi.COMM_TYPE_SHARED, key=comm.Get_rank())
    try:
        return local.Get_rank(), local.Get_size()
    finally:
        local.Free()


def _spread_over_devices(local_rank):
    """One OpenCL device per rank of a machine with several (device local_rank % count), unless
    the process already chose one (autograd.cuda.set_device, a first "cuda:i") or used it.
    Nothing happens without pyopencl or an OpenCL device: CPU training needs neither."""
    try:
        opencl = importlib.import_module("carray.opencl")
        count = opencl.device_count()
    except Exception:       # no pyopencl, no driver, no device: the ranks train on the CPU
        return
    if count > 1:
        opencl.suggest(local_rank % count)


def _abort_on_exception(exc_type, exc, tb):
    """sys.excepthook while a group exists: print the error, then abort every rank."""
    (_old_excepthook or sys.__excepthook__)(exc_type, exc, tb)
    group = _group
    if group is not None and group.size > 1:
        sys.stderr.write(f"autograd.distributed: rank {group.rank} raised "
                         f"{exc_type.__name__}; aborting all ranks\n")
        sys.stderr.flush()
        time.sleep(0.2)     # let mpiexec forward this rank's output before it kills the ranks
        group.comm.Abort(1)


def _default_group():
    """The default group's state; raises torch's error before init_process_group (ValueError,
    also a RuntimeError)."""
    if _group is None:
        raise _NotInitializedError(_NOT_INITIALIZED)
    return _group


def is_initialized():
    """True once init_process_group has run (and destroy_process_group has not)."""
    return _group is not None


def _state(group):
    """The _Group behind `group` (None or dist.group.WORLD: the default group; a ProcessGroup
    from new_group: its own); raises the not-initialized error before init_process_group and
    ValueError for a destroyed group."""
    default = _default_group()
    if group is None:
        return default
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup from new_group (or None), got "
                        f"{type(group).__name__}")
    state = group._state
    if state is None or group._world_state is not default:
        raise ValueError(f"{group!r} has been destroyed")
    return state


def get_rank(group=None):
    """This process's rank in `group` (the default group when None): 0 .. size - 1, or -1 when
    this process is not a member (new_group returned GroupMember.NON_GROUP_MEMBER)."""
    if group == NON_GROUP_MEMBER:
        _default_group()
        return -1
    return _state(group).rank


def get_world_size(group=None):
    """The number of processes in `group` (the default group when None); -1 for a group this
    process is not a member of."""
    if group == NON_GROUP_MEMBER:
        _default_group()
        return -1
    return _state(group).size


def get_backend(group=None):
    """The backend's name: "mpi"."""
    _default_group()
    return Backend.MPI


def destroy_process_group(group=None):
    """End the default group and every group made from it (group None), or only `group` (MPI
    itself stays up until the interpreter exits, as mpi4py's)."""
    global _group, _old_excepthook
    default = _default_group()
    if group is not None and group == NON_GROUP_MEMBER:
        return
    if group is not None and _state(group) is not default:
        group._free()
        return
    _group = None
    if _old_excepthook is not None:
        sys.excepthook = _old_excepthook
        _old_excepthook = None


# --- process groups as objects: dist.group.WORLD and new_group's result (h15 groups) ----------

# what new_group returns on ranks outside the group (torch's GroupMember.NON_GROUP_MEMBER)
NON_GROUP_MEMBER = -100


class ProcessGroup:
    """A set of ranks that run collectives together (torch.distributed.ProcessGroup), backed by
    an MPI communicator: dist.group.WORLD (MPI.COMM_WORLD) or new_group's sub-communicator.
    rank() and size() are this process's rank in it and its number of ranks."""

    def __init__(self, state, ranks, world_state):
        self._state = state
        self._ranks = list(ranks)
        # the default group this one was made in: it dies with it
        self._world_state = world_state

    def rank(self):
        return _state(self).rank

    def size(self):
        return _state(self).size

    def name(self):
        return "mpi"

    def _free(self):
        state, self._state = self._state, None
        if state is not None and state.comm != state.MPI.COMM_WORLD:
            state.comm.Free()

    def __repr__(self):
        return f"ProcessGroup(ranks={self._ranks})"


_world_pg = None


def _world():
    """The ProcessGroup of the default group (None before init_process_group): one object for as
    long as the default group lives, so `is` comparisons hold."""
    global _world_pg
    if _group is None:
        return None
    if _world_pg is None or _world_pg._state is not _group:
        _world_pg = ProcessGroup(_group, range(_group.size), _group)
    return _world_pg

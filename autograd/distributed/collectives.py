"""Collectives and point-to-point messages on tensors (torch.distributed's functions).

How a tensor reaches MPI: a contiguous CPU tensor is handed over as a buffer (carray arrays
export the buffer protocol), so nothing is copied. A non-contiguous tensor is copied to a
contiguous one first and the result copied back; a "gpu" tensor is staged through a host buffer
the same way (read to the host, communicate, write back to the device).

Every call starts a non-blocking MPI operation (Iallreduce, Ibcast, ...); async_op=True returns
a Work whose wait() finishes it, otherwise the call waits itself. Waiting polls the request so
that it can give up after the group's timeout with RuntimeError.

Unless CARRAY_DISTRIBUTED_CHECK=0, each collective first all-gathers the shapes and dtypes of its
tensors, so that ranks that disagree all raise ValueError instead of corrupting memory or
hanging.
"""

import enum
import pickle
import time

import carray
from autograd.distributed.process_group import _default_group
from autograd.tensor import Tensor

__all__ = ["ReduceOp", "Work", "barrier", "all_reduce", "reduce", "broadcast", "all_gather",
           "all_gather_into_tensor", "reduce_scatter_tensor", "gather", "scatter", "send",
           "recv", "isend", "irecv", "broadcast_object_list", "all_gather_object"]


class ReduceOp(enum.Enum):
    """How all_reduce combines values (torch.distributed.ReduceOp)."""

    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"


def _mpi_op(MPI, op, dtype, fn):
    if not isinstance(op, ReduceOp):
        raise TypeError(f"{fn}: op must be a ReduceOp, got {op!r}")
    if dtype == carray.bool:
        if op is ReduceOp.AVG:
            raise ValueError(f"{fn}: ReduceOp.AVG is not defined for bool tensors")
        # torch reduces bools logically: SUM and MAX are "any", PRODUCT and MIN are "all"
        return MPI.LOR if op in (ReduceOp.SUM, ReduceOp.MAX) else MPI.LAND
    return {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD,
            ReduceOp.MIN: MPI.MIN, ReduceOp.MAX: MPI.MAX}[op]


# ---------------------------------------------------------------------------------------------
# staging: a host contiguous buffer for a tensor, and writing results back
# ---------------------------------------------------------------------------------------------

class _Host:
    """A tensor's values in host contiguous memory: the tensor's own memory when it is a
    contiguous CPU tensor, else a copy; write_back() puts the buffer's values into the tensor."""

    def __init__(self, tensor, fn, name="tensor", read=True):
        if not isinstance(tensor, Tensor):
            raise TypeError(f"{fn}: {name} must be a Tensor, got {type(tensor).__name__}")
        self.tensor = tensor
        arr = tensor.array
        self.direct = arr.device == "cpu" and arr.flags.c_contiguous
        if self.direct:
            self.array = arr
        elif read:
            self.array = carray.ascontiguousarray(arr.to("cpu"))
        else:
            self.array = carray.empty(arr.shape, dtype=arr.dtype)
        self.buffer = memoryview(self.array)

    def write_back(self):
        t = self.tensor
        if not self.direct:
            src = self.array if t.array.device == "cpu" else self.array.to(t.array.device)
            t.array[...] = src
        t._vc[0] += 1


class Work:
    """A started communication (torch.distributed's Work): wait() finishes it (RuntimeError
    after the group's timeout), is_completed() tells without waiting."""

    def __init__(self, group, requests, finish=None):
        self._group = group
        self._requests = requests
        self._finish = finish
        self._done = False
        self._result = None
        self._statuses = [group.MPI.Status() for _ in requests]

    def is_completed(self):
        if self._done:
            return True
        if self._group.MPI.Request.Testall(self._requests, self._statuses):
            self._complete()
        return self._done

    def wait(self, timeout=None):
        """Block until the operation has finished on this rank; returns True."""
        if self._done:
            return True
        limit = self._group.timeout if timeout is None else _seconds(timeout)
        testall = self._group.MPI.Request.Testall
        requests, statuses = self._requests, self._statuses
        if not testall(requests, statuses):
            deadline = time.monotonic() + limit
            n = 0
            while not testall(requests, statuses):
                n += 1
                if n % 64 == 0:
                    if time.monotonic() > deadline:
                        raise RuntimeError(
                            f"autograd.distributed: a collective on rank {self._group.rank} did "
                            f"not finish within the timeout of {limit:g} s (another rank may "
                            "have failed or called a different collective)")
                    if n > 100_000:
                        time.sleep(0.0002)  # a long wait: give the CPU to the other ranks
        self._complete()
        return True

    def result(self):
        return self._result

    def _complete(self):
        self._done = True
        if self._finish is not None:
            self._result = self._finish()
            self._finish = None


def _seconds(timeout):
    return timeout.total_seconds() if hasattr(timeout, "total_seconds") else float(timeout)


def _run(work, async_op):
    if async_op:
        return work
    work.wait()
    return None


def _check_same(group, fn, meta):
    """ValueError on every rank when ranks pass tensors of different shapes or dtypes."""
    if not group.check or group.size == 1:
        return
    metas = group.comm.allgather(meta)
    if any(m != metas[0] for m in metas):
        lines = "; ".join(f"rank {r}: {m}" for r, m in enumerate(metas))
        raise ValueError(f"{fn}: the ranks passed tensors of different shapes or dtypes "
                         f"({lines}); every rank must pass the same")


def _meta(*tensors):
    return tuple((tuple(t.shape), str(t.dtype)) for t in tensors)


def _check_rank(group, fn, name, r):
    if not isinstance(r, int) or not 0 <= r < group.size:
        raise ValueError(f"{fn}: {name} must be a rank in [0, {group.size}), got {r!r}")


# ---------------------------------------------------------------------------------------------
# collectives
# ---------------------------------------------------------------------------------------------

def barrier(group=None, async_op=False, device_ids=None):
    """Wait until every rank has reached this call."""
    g = _default_group()
    return _run(Work(g, [g.comm.Ibarrier()]), async_op)


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Combine `tensor` over all ranks with `op` and store the result in it on every rank.
    AVG divides the sum by the world size (integers round down). Raises ValueError when ranks
    disagree on shape or dtype, TypeError for a bad op."""
    g = _default_group()
    fn = "all_reduce"
    host = _Host(tensor, fn)
    mpi_op = _mpi_op(g.MPI, op, host.array.dtype, fn)
    _check_same(g, fn, _meta(tensor))
    req = g.comm.Iallreduce(g.MPI.IN_PLACE, host.buffer, mpi_op)

    def finish():
        if op is ReduceOp.AVG:
            _divide(host.array, g.size)
        host.write_back()

    return _run(Work(g, [req], finish), async_op)


def _divide(arr, n):
    if arr.dtype.kind == "f" or arr.dtype.kind == "c":
        arr /= n
    else:
        arr //= n


def reduce(tensor, dst, op=ReduceOp.SUM, group=None, async_op=False):
    """Combine `tensor` over all ranks with `op` into `tensor` on rank `dst` (others keep
    theirs)."""
    g = _default_group()
    fn = "reduce"
    _check_rank(g, fn, "dst", dst)
    host = _Host(tensor, fn)
    mpi_op = _mpi_op(g.MPI, op, host.array.dtype, fn)
    _check_same(g, fn, _meta(tensor))
    if g.rank == dst:
        req = g.comm.Ireduce(g.MPI.IN_PLACE, host.buffer, mpi_op, root=dst)
    else:
        req = g.comm.Ireduce(host.buffer, None, mpi_op, root=dst)

    def finish():
        if g.rank == dst:
            if op is ReduceOp.AVG:
                _divide(host.array, g.size)
            host.write_back()

    return _run(Work(g, [req], finish), async_op)


def broadcast(tensor, src, group=None, async_op=False):
    """Copy `tensor` of rank `src` into `tensor` on every other rank."""
    g = _default_group()
    fn = "broadcast"
    _check_rank(g, fn, "src", src)
    host = _Host(tensor, fn, read=g.rank == src)
    _check_same(g, fn, _meta(tensor))
    req = g.comm.Ibcast(host.buffer, root=src)
    return _run(Work(g, [req], None if g.rank == src else host.write_back), async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Concatenate every rank's `input_tensor` along dim 0 into `output_tensor` (whose first
    dimension is world size times the input's, or which has world size times its elements).
    Raises ValueError for a wrong output size."""
    g = _default_group()
    fn = "all_gather_into_tensor"
    inp = _Host(input_tensor, fn, "input_tensor")
    if output_tensor.numel() != g.size * input_tensor.numel() or \
            output_tensor.dtype != input_tensor.dtype:
        raise ValueError(f"{fn}: output_tensor must have world_size ({g.size}) times the "
                         f"elements of input_tensor and its dtype; got {tuple(output_tensor.shape)}"
                         f" {output_tensor.dtype} for input {tuple(input_tensor.shape)} "
                         f"{input_tensor.dtype}")
    out = _Host(output_tensor, fn, "output_tensor", read=False)
    _check_same(g, fn, _meta(input_tensor))
    req = g.comm.Iallgather(inp.buffer, out.buffer)
    return _run(Work(g, [req], out.write_back), async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """tensor_list[r] = `tensor` of rank r, for every rank r. Raises ValueError when
    tensor_list does not hold world size tensors of tensor's shape and dtype."""
    g = _default_group()
    fn = "all_gather"
    _check_list(fn, "tensor_list", tensor_list, tensor, g.size)
    inp = _Host(tensor, fn)
    gathered = carray.empty((g.size, *tensor.shape), dtype=inp.array.dtype)
    _check_same(g, fn, _meta(tensor))
    req = g.comm.Iallgather(inp.buffer, memoryview(gathered))

    def finish():
        for r, t in enumerate(tensor_list):
            _store(t, gathered[r])

    return _run(Work(g, [req], finish), async_op)


def _check_list(fn, name, tensors, like, n):
    if not isinstance(tensors, (list, tuple)) or len(tensors) != n:
        raise ValueError(f"{fn}: {name} must be a list of world_size ({n}) tensors, got "
                         f"{type(tensors).__name__} of length "
                         f"{len(tensors) if hasattr(tensors, '__len__') else '?'}")
    for t in tensors:
        if not isinstance(t, Tensor) or t.shape != like.shape or t.dtype != like.dtype:
            raise ValueError(f"{fn}: every tensor of {name} must have shape "
                             f"{tuple(like.shape)} and dtype {like.dtype}")


def _store(t, host_arr):
    """t's values = the host array's (t on any device, any strides)."""
    t.array[...] = host_arr if t.array.device == "cpu" else host_arr.to(t.array.device)
    t._vc[0] += 1


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce `input` over all ranks with `op`, then give rank r the r-th of world size equal
    chunks (along dim 0) in `output`. Raises ValueError for a wrong input size."""
    g = _default_group()
    fn = "reduce_scatter_tensor"
    if input.numel() != g.size * output.numel() or output.dtype != input.dtype:
        raise ValueError(f"{fn}: input must have world_size ({g.size}) times the elements of "
                         f"output and its dtype; got {tuple(input.shape)} {input.dtype} for "
                         f"output {tuple(output.shape)} {output.dtype}")
    inp = _Host(input, fn, "input")
    out = _Host(output, fn, "output", read=False)
    mpi_op = _mpi_op(g.MPI, op, inp.array.dtype, fn)
    _check_same(g, fn, _meta(input))
    req = g.comm.Ireduce_scatter_block(inp.buffer, out.buffer, mpi_op)

    def finish():
        if op is ReduceOp.AVG:
            _divide(out.array, g.size)
        out.write_back()

    return _run(Work(g, [req], finish), async_op)


def gather(tensor, gather_list=None, dst=0, group=None, async_op=False):
    """gather_list[r] = `tensor` of rank r on rank `dst` (gather_list only there). Raises
    ValueError when dst gives no list of world size tensors, or another rank gives one."""
    g = _default_group()
    fn = "gather"
    _check_rank(g, fn, "dst", dst)
    inp = _Host(tensor, fn)
    if g.rank == dst:
        _check_list(fn, "gather_list", gather_list, tensor, g.size)
        gathered = carray.empty((g.size, *tensor.shape), dtype=inp.array.dtype)
        recvbuf = memoryview(gathered)
    elif gather_list:
        raise ValueError(f"{fn}: Argument ``gather_list`` must NOT be specified on non-destination"
                         f" ranks (dst={dst}, this is rank {g.rank}).")
    else:
        recvbuf = None
    _check_same(g, fn, _meta(tensor))
    req = g.comm.Igather(inp.buffer, recvbuf, root=dst)

    def finish():
        if g.rank == dst:
            for r, t in enumerate(gather_list):
                _store(t, gathered[r])

    return _run(Work(g, [req], finish), async_op)


def scatter(tensor, scatter_list=None, src=0, group=None, async_op=False):
    """`tensor` on rank r = scatter_list[r] of rank `src` (scatter_list only there)."""
    g = _default_group()
    fn = "scatter"
    _check_rank(g, fn, "src", src)
    out = _Host(tensor, fn, read=False)
    if g.rank == src:
        _check_list(fn, "scatter_list", scatter_list, tensor, g.size)
        staged = carray.empty((g.size, *tensor.shape), dtype=out.array.dtype)
        for r, t in enumerate(scatter_list):
            staged[r] = t.array if t.array.device == "cpu" else t.array.to("cpu")
        sendbuf = memoryview(staged)
    elif scatter_list:
        raise ValueError(f"{fn}: Argument ``scatter_list`` must NOT be specified on non-source "
                         f"ranks (src={src}, this is rank {g.rank}).")
    else:
        sendbuf = None
    _check_same(g, fn, _meta(tensor))
    req = g.comm.Iscatter(sendbuf, out.buffer, root=src)
    return _run(Work(g, [req], out.write_back), async_op)


# ---------------------------------------------------------------------------------------------
# point to point
# ---------------------------------------------------------------------------------------------

_TAG_ANY = -1


def isend(tensor, dst, group=None, tag=0):
    """Start sending `tensor` to rank `dst`; returns a Work (keep the tensor unchanged until
    its wait() returns)."""
    g = _default_group()
    _check_rank(g, "isend", "dst", dst)
    host = _Host(tensor, "isend")
    return Work(g, [g.comm.Isend(host.buffer, dest=dst, tag=tag)])


def irecv(tensor, src=None, group=None, tag=0):
    """Start receiving into `tensor` from rank `src` (any rank when None); returns a Work whose
    result() is the sender's rank after wait()."""
    g = _default_group()
    if src is not None:
        _check_rank(g, "irecv", "src", src)
    host = _Host(tensor, "irecv", read=False)
    req = g.comm.Irecv(host.buffer, source=g.MPI.ANY_SOURCE if src is None else src, tag=tag)

    def finish():
        host.write_back()
        return work._statuses[0].Get_source()

    work = Work(g, [req], finish)
    return work


def send(tensor, dst, group=None, tag=0):
    """Send `tensor` to rank `dst` (returns when the message is on its way)."""
    isend(tensor, dst, group, tag).wait()


def recv(tensor, src=None, group=None, tag=0):
    """Receive into `tensor` from rank `src` (any rank when None); returns the sender's rank."""
    work = irecv(tensor, src, group, tag)
    work.wait()
    return work.result()


# ---------------------------------------------------------------------------------------------
# Python objects
# ---------------------------------------------------------------------------------------------

def broadcast_object_list(object_list, src=0, group=None, device=None):
    """object_list[:] = rank src's object_list (pickled; every rank passes a list of the same
    length)."""
    g = _default_group()
    _check_rank(g, "broadcast_object_list", "src", src)
    data = g.comm.bcast(pickle.dumps(list(object_list)) if g.rank == src else None, root=src)
    if g.rank != src:
        object_list[:] = pickle.loads(data)


def all_gather_object(object_list, obj, group=None):
    """object_list[r] = `obj` of rank r (pickled)."""
    g = _default_group()
    object_list[:] = g.comm.allgather(obj)


# ---------------------------------------------------------------------------------------------
# for DistributedDataParallel: started without the shape check (its buckets agree by design)
# ---------------------------------------------------------------------------------------------

def _all_reduce_host_sum(array):
    """Start an in-place SUM all-reduce of a contiguous host carray array; returns its Work."""
    g = _default_group()
    return Work(g, [g.comm.Iallreduce(g.MPI.IN_PLACE, memoryview(array), g.MPI.SUM)])


def _broadcast_unchecked(tensor, src):
    """Start broadcasting `tensor` from rank src; returns its Work."""
    g = _default_group()
    host = _Host(tensor, "broadcast", read=g.rank == src)
    req = g.comm.Ibcast(host.buffer, root=src)
    return Work(g, [req], None if g.rank == src else host.write_back)

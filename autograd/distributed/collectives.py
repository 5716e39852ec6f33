"""Collectives and point-to-point messages on tensors (torch.distributed's functions).

How a tensor reaches MPI: a contiguous CPU tensor is handed over as a buffer (carray arrays
export the buffer protocol), so nothing is copied. A non-contiguous tensor is copied to a
contiguous one first and the result copied back; a "gpu" tensor is staged through a host buffer
the same way (read to the host, communicate, write back to the device).

Every call starts a non-blocking MPI operation (Iallreduce, Ibcast, ...); async_op=True returns
a Work whose wait() finishes it, otherwise the call waits itself. Waiting polls the request so
that it can give up after the group's timeout with RuntimeError.

Unless CARRAY_DISTRIBUTED_CHECK=0, each collective first all-reduces a 64-bit signature of its
name, tensor shape, dtype and root (one 16-byte message, see _check_same), so that ranks that
disagree all raise ValueError instead of corrupting memory or hanging.

`group=` selects the communicator (groups.py); `src`/`dst` are global ranks, `group_src`/
`group_dst` ranks within the group. On a rank outside the group a collective warns and returns
None, as torch's. Python objects travel pickled, through the same non-blocking operations (so
the group's timeout holds for them too).
"""

import enum
import hashlib
import pickle
import struct
import time

import carray
from autograd._defaults import is_floating
from autograd.distributed.groups import _resolve, _root
from autograd.tensor import Tensor

__all__ = ["ReduceOp", "Work", "barrier", "all_reduce", "reduce", "broadcast", "all_gather",
           "all_gather_into_tensor", "reduce_scatter_tensor", "gather", "scatter", "send",
           "recv", "isend", "irecv", "broadcast_object_list", "all_gather_object",
           "gather_object", "scatter_object_list", "send_object_list", "recv_object_list"]


class ReduceOp(enum.Enum):
    """How all_reduce combines values (torch.distributed.ReduceOp)."""

    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"


_MPI_OPS = {}


def _mpi_op(MPI, op, dtype, fn):
    if not isinstance(op, ReduceOp):
        raise TypeError(f"{fn}: op must be a ReduceOp, got {op!r}")
    if dtype == carray.bool:
        if op is ReduceOp.AVG:
            raise ValueError(f"{fn}: ReduceOp.AVG is not defined for bool tensors")
        # torch reduces bools logically: SUM and MAX are "any", PRODUCT and MIN are "all"
        return MPI.LOR if op in (ReduceOp.SUM, ReduceOp.MAX) else MPI.LAND
    if not _MPI_OPS:
        _MPI_OPS.update({ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM,
                         ReduceOp.PRODUCT: MPI.PROD, ReduceOp.MIN: MPI.MIN,
                         ReduceOp.MAX: MPI.MAX})
    return _MPI_OPS[op]


# ---------------------------------------------------------------------------------------------
# staging: a host contiguous buffer for a tensor, and writing results back
# ---------------------------------------------------------------------------------------------

class _Host:
    """A tensor's values in host contiguous memory: the tensor's own memory when it is a
    contiguous CPU tensor, else a copy (float32 for a 2-byte float tensor); write_back() puts
    the buffer's values into the tensor."""

    def __init__(self, tensor, fn, name="tensor", read=True):
        if not isinstance(tensor, Tensor):
            raise TypeError(f"{fn}: {name} must be a Tensor, got {type(tensor).__name__}")
        self.tensor = tensor
        arr = tensor.array
        # MPI has no 2-byte float types: float16/bfloat16 travel (and are reduced) as float32,
        # which holds them exactly, and are rounded back once in write_back
        half = arr.dtype.name in ("float16", "bfloat16")
        self.direct = arr.device == "cpu" and arr.flags.c_contiguous and not half
        if self.direct:
            self.array = arr
        elif read:
            host = arr.to("cpu")
            self.array = host.astype("float32") if half else carray.ascontiguousarray(host)
        else:
            self.array = carray.empty(arr.shape, dtype="float32" if half else arr.dtype)
        self.buffer = memoryview(self.array)

    def write_back(self):
        t = self.tensor
        if not self.direct:
            src = self.array if t.array.device == "cpu" else self.array.to(t.array.device)
            t.array[...] = src
        t._vc[0] += 1


class Work:
    """A started communication (torch.distributed's Work): wait() finishes it (RuntimeError
    after the group's timeout), is_completed() tells without waiting. With statuses=True the
    requests' MPI statuses are kept (in _statuses: a receive's source)."""

    def __init__(self, group, requests, finish=None, statuses=False):
        self._group = group
        self._requests = requests
        self._finish = finish
        self._done = False
        self._result = None
        self._statuses = [group.MPI.Status() for _ in requests] if statuses else None

    def _test(self):
        if self._statuses is None and len(self._requests) == 1:
            return self._requests[0].Test()
        return self._group.MPI.Request.Testall(self._requests, self._statuses)

    def is_completed(self):
        if self._done:
            return True
        if self._test():
            self._complete()
        return self._done

    def wait(self, timeout=None):
        """Block until the operation has finished on this rank; returns True."""
        if self._done:
            return True
        test = self._test
        if not test():
            limit = self._group.timeout if timeout is None else _seconds(timeout)
            deadline = time.monotonic() + limit
            n = 0
            while not test():
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


# the cross-rank check: one 16-byte Iallreduce(MAX) of (signature, -signature) per collective; the
# ranks agree iff max == -max(-signature) == min. Only on disagreement are the full
# descriptions gathered (every rank sees the same result, so all take that path and all raise).
_SIGNATURES = {}
_SIG_BUFFER = bytearray(16)


def _signature(key):
    """A 62-bit number for a (function, shape, dtype, root) key, the same in every process (not
    Python's hash, which is salted per process); cached."""
    fn, shape, dtype, root = key
    text = repr((fn, tuple(shape), str(dtype), root)).encode()
    if len(_SIGNATURES) > 4096:
        _SIGNATURES.clear()
    digest = hashlib.blake2b(text, digest_size=8).digest()
    sig = _SIGNATURES[key] = int.from_bytes(digest, "little") >> 2
    return sig


def _check_same(group, fn, tensor, root=None):
    """ValueError on every rank when ranks pass tensors of different shapes or dtypes (or call
    different collectives, or name different roots); RuntimeError after the group's
    timeout."""
    if not group.check or group.size == 1:
        return
    key = (fn, tensor.shape, tensor.dtype, root)
    sig = _SIGNATURES.get(key)
    if sig is None:
        sig = _signature(key)
    buf = _SIG_BUFFER
    struct.pack_into("=qq", buf, 0, sig, -sig)
    MPI = group.MPI
    req = group.comm.Iallreduce(MPI.IN_PLACE, [buf, 2, MPI.INT64_T], MPI.MAX)
    if not req.Test():
        Work(group, [req]).wait()
    high, neg_low = struct.unpack_from("=qq", buf)
    if high != -neg_low:
        # (non-blocking with the timeout: a rank in another collective may have matched the
        # signature's all-reduce and gone on)
        metas = _all_gather_pickled(group, (fn, tuple(tensor.shape), str(tensor.dtype), root))
        lines = "; ".join(f"rank {r}: {m[0]} of shape {m[1]} {m[2]}"
                          + ("" if m[3] is None else f" root {m[3]}") for r, m in enumerate(metas))
        raise ValueError(f"{fn}: the ranks passed tensors of different shapes or dtypes, or "
                         f"called different collectives ({lines}); every rank must pass the "
                         "same")


# ---------------------------------------------------------------------------------------------
# collectives
# ---------------------------------------------------------------------------------------------

def barrier(group=None, async_op=False, device_ids=None):
    """Wait until every rank of the group has reached this call."""
    g = _resolve(group, "barrier")
    if g is None:
        return None
    return _run(Work(g, [g.comm.Ibarrier()]), async_op)


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Combine `tensor` over the group's ranks with `op` and store the result in it on every
    rank. AVG divides the sum by the group size (integers round down). Raises ValueError when
    ranks disagree on shape or dtype, TypeError for a bad op."""
    fn = "all_reduce"
    g = _resolve(group, fn)
    if g is None:
        return None
    host = _Host(tensor, fn)
    mpi_op = _mpi_op(g.MPI, op, host.array.dtype, fn)
    _check_same(g, fn, tensor)
    req = g.comm.Iallreduce(g.MPI.IN_PLACE, host.buffer, mpi_op)

    def finish():
        if op is ReduceOp.AVG:
            _divide(host.array, g.size)
        host.write_back()

    return _run(Work(g, [req], finish), async_op)


def _divide(arr, n):
    if is_floating(arr.dtype) or arr.dtype.kind == "c":
        arr /= n
    else:
        arr //= n


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Combine `tensor` over the group's ranks with `op` into `tensor` on rank `dst` (a global
    rank; or `group_dst` within the group); the others keep theirs."""
    fn = "reduce"
    g = _resolve(group, fn)
    if g is None:
        return None
    root = _root(group, g, fn, "dst", dst, group_dst)
    host = _Host(tensor, fn)
    mpi_op = _mpi_op(g.MPI, op, host.array.dtype, fn)
    _check_same(g, fn, tensor, root)
    if g.rank == root:
        req = g.comm.Ireduce(g.MPI.IN_PLACE, host.buffer, mpi_op, root=root)
    else:
        req = g.comm.Ireduce(host.buffer, None, mpi_op, root=root)

    def finish():
        if g.rank == root:
            if op is ReduceOp.AVG:
                _divide(host.array, g.size)
            host.write_back()

    return _run(Work(g, [req], finish), async_op)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy `tensor` of rank `src` (a global rank; or `group_src` within the group) into
    `tensor` on every other rank of the group."""
    fn = "broadcast"
    g = _resolve(group, fn)
    if g is None:
        return None
    root = _root(group, g, fn, "src", src, group_src)
    host = _Host(tensor, fn, read=g.rank == root)
    _check_same(g, fn, tensor, root)
    req = g.comm.Ibcast(host.buffer, root=root)
    return _run(Work(g, [req], None if g.rank == root else host.write_back), async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Concatenate every rank's `input_tensor` along dim 0 into `output_tensor` (whose first
    dimension is group size times the input's, or which has group size times its elements).
    Raises ValueError for a wrong output size."""
    fn = "all_gather_into_tensor"
    g = _resolve(group, fn)
    if g is None:
        return None
    inp = _Host(input_tensor, fn, "input_tensor")
    if output_tensor.numel() != g.size * input_tensor.numel() or \
            output_tensor.dtype != input_tensor.dtype:
        raise ValueError(f"{fn}: output_tensor must have world_size ({g.size}) times the "
                         f"elements of input_tensor and its dtype; got {tuple(output_tensor.shape)}"
                         f" {output_tensor.dtype} for input {tuple(input_tensor.shape)} "
                         f"{input_tensor.dtype}")
    out = _Host(output_tensor, fn, "output_tensor", read=False)
    _check_same(g, fn, input_tensor)
    req = g.comm.Iallgather(inp.buffer, out.buffer)
    return _run(Work(g, [req], out.write_back), async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """tensor_list[r] = `tensor` of group rank r, for every rank r. Raises ValueError when
    tensor_list does not hold group size tensors of tensor's shape and dtype."""
    fn = "all_gather"
    g = _resolve(group, fn)
    if g is None:
        return None
    _check_list(fn, "tensor_list", tensor_list, tensor, g.size)
    inp = _Host(tensor, fn)
    gathered = carray.empty((g.size, *tensor.shape), dtype=inp.array.dtype)
    _check_same(g, fn, tensor)
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
    """Reduce `input` over the group's ranks with `op`, then give group rank r the r-th of
    group size equal chunks (along dim 0) in `output`. Raises ValueError for a wrong input
    size."""
    fn = "reduce_scatter_tensor"
    g = _resolve(group, fn)
    if g is None:
        return None
    if input.numel() != g.size * output.numel() or output.dtype != input.dtype:
        raise ValueError(f"{fn}: input must have world_size ({g.size}) times the elements of "
                         f"output and its dtype; got {tuple(input.shape)} {input.dtype} for "
                         f"output {tuple(output.shape)} {output.dtype}")
    inp = _Host(input, fn, "input")
    out = _Host(output, fn, "output", read=False)
    mpi_op = _mpi_op(g.MPI, op, inp.array.dtype, fn)
    _check_same(g, fn, input)
    req = g.comm.Ireduce_scatter_block(inp.buffer, out.buffer, mpi_op)

    def finish():
        if op is ReduceOp.AVG:
            _divide(out.array, g.size)
        out.write_back()

    return _run(Work(g, [req], finish), async_op)


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """gather_list[r] = `tensor` of group rank r on rank `dst` (a global rank, 0 by default;
    or `group_dst`), gather_list given only there. Raises ValueError when dst gives no list of
    group size tensors, or another rank gives one."""
    fn = "gather"
    g = _resolve(group, fn)
    if g is None:
        return None
    root = _root(group, g, fn, "dst", dst, group_dst, default=0)
    inp = _Host(tensor, fn)
    if g.rank == root:
        _check_list(fn, "gather_list", gather_list, tensor, g.size)
        gathered = carray.empty((g.size, *tensor.shape), dtype=inp.array.dtype)
        recvbuf = memoryview(gathered)
    elif gather_list:
        raise ValueError(f"{fn}: Argument ``gather_list`` must NOT be specified on non-destination"
                         f" ranks (dst={dst}, this is rank {g.rank}).")
    else:
        recvbuf = None
    _check_same(g, fn, tensor, root)
    req = g.comm.Igather(inp.buffer, recvbuf, root=root)

    def finish():
        if g.rank == root:
            for r, t in enumerate(gather_list):
                _store(t, gathered[r])

    return _run(Work(g, [req], finish), async_op)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """`tensor` on group rank r = scatter_list[r] of rank `src` (a global rank, 0 by default;
    or `group_src`), scatter_list given only there."""
    fn = "scatter"
    g = _resolve(group, fn)
    if g is None:
        return None
    root = _root(group, g, fn, "src", src, group_src, default=0)
    out = _Host(tensor, fn, read=False)
    if g.rank == root:
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
    _check_same(g, fn, tensor, root)
    req = g.comm.Iscatter(sendbuf, out.buffer, root=root)
    return _run(Work(g, [req], out.write_back), async_op)


# ---------------------------------------------------------------------------------------------
# point to point (peers are global ranks, or group_dst/group_src within `group`)
# ---------------------------------------------------------------------------------------------

_TAG_ANY = -1


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Start sending `tensor` to rank `dst`; returns a Work (keep the tensor unchanged until
    its wait() returns)."""
    g = _resolve(group, "isend")
    if g is None:
        return None
    peer = _root(group, g, "isend", "dst", dst, group_dst)
    host = _Host(tensor, "isend")
    return Work(g, [g.comm.Isend(host.buffer, dest=peer, tag=tag)])


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Start receiving into `tensor` from rank `src` (any rank when src and group_src are
    None); returns a Work whose result() is the sender's global rank after wait()."""
    g = _resolve(group, "irecv")
    if g is None:
        return None
    any_source = src is None and group_src is None
    peer = g.MPI.ANY_SOURCE if any_source else _root(group, g, "irecv", "src", src, group_src)
    host = _Host(tensor, "irecv", read=False)
    req = g.comm.Irecv(host.buffer, source=peer, tag=tag)
    ranks = None if group is None else group._ranks

    def finish():
        host.write_back()
        source = work._statuses[0].Get_source()
        return source if ranks is None else ranks[source]

    work = Work(g, [req], finish, statuses=True)
    return work


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send `tensor` to rank `dst` (returns when the message is on its way)."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into `tensor` from rank `src` (any rank when None); returns the sender's global
    rank (-1 outside the group)."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    return work.result()


# ---------------------------------------------------------------------------------------------
# Python objects: pickled to bytes; the sizes travel first, then the bytes, each through a
# non-blocking MPI operation waited with the group's timeout
# ---------------------------------------------------------------------------------------------

def _wait(g, request):
    Work(g, [request]).wait()


def _sizes(g, nbytes):
    """Every rank's int (an all-gather of one int64 each) as a list."""
    buf = struct.pack("=q", nbytes)
    out = bytearray(8 * g.size)
    _wait(g, g.comm.Iallgather([buf, g.MPI.INT64_T], [out, g.MPI.INT64_T]))
    return list(struct.unpack(f"={g.size}q", out))


def _displacements(sizes):
    displs, n = [], 0
    for s in sizes:
        displs.append(n)
        n += s
    return displs, n


def _pieces(data, sizes, displs):
    return [pickle.loads(data[d:d + s]) for s, d in zip(sizes, displs)]


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """object_list[:] = the object_list of rank `src` (a global rank, 0 by default; or
    `group_src`), pickled; every rank passes a list of the same length."""
    fn = "broadcast_object_list"
    g = _resolve(group, fn)
    if g is None:
        return
    root = _root(group, g, fn, "src", src, group_src, default=0)
    data = pickle.dumps(list(object_list)) if g.rank == root else b""
    size = bytearray(struct.pack("=q", len(data)))
    _wait(g, g.comm.Ibcast([size, 1, g.MPI.INT64_T], root=root))
    if g.rank == root:
        _wait(g, g.comm.Ibcast([bytearray(data), g.MPI.BYTE], root=root))
        return
    buf = bytearray(struct.unpack("=q", size)[0])
    _wait(g, g.comm.Ibcast([buf, g.MPI.BYTE], root=root))
    object_list[:] = pickle.loads(buf)


def all_gather_object(object_list, obj, group=None):
    """object_list[r] = `obj` of group rank r (pickled), for every rank r of the group."""
    fn = "all_gather_object"
    g = _resolve(group, fn)
    if g is None:
        return
    for r, item in enumerate(_all_gather_pickled(g, obj)):
        object_list[r] = item


def _all_gather_pickled(g, obj):
    """[obj of group rank r for every r], through pickle."""
    data = pickle.dumps(obj)
    sizes = _sizes(g, len(data))
    displs, total = _displacements(sizes)
    out = bytearray(total)
    _wait(g, g.comm.Iallgatherv([data, g.MPI.BYTE], [out, sizes, displs, g.MPI.BYTE]))
    return _pieces(out, sizes, displs)


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """object_gather_list[r] = `obj` of group rank r on rank `dst` (a global rank, 0 by
    default; or `group_dst`), the list given only there. Raises ValueError when dst gives no
    list or another rank gives one."""
    fn = "gather_object"
    g = _resolve(group, fn)
    if g is None:
        return
    root = _root(group, g, fn, "dst", dst, group_dst, default=0)
    if g.rank == root and not object_gather_list:
        raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
    if g.rank != root and object_gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination "
                         "ranks.")
    data = pickle.dumps(obj)
    sizes = _sizes(g, len(data))
    displs, total = _displacements(sizes)
    out = bytearray(total) if g.rank == root else None
    recv = [out, sizes, displs, g.MPI.BYTE] if g.rank == root else None
    _wait(g, g.comm.Igatherv([data, g.MPI.BYTE], recv, root=root))
    if g.rank == root:
        for r, item in enumerate(_pieces(out, sizes, displs)):
            object_gather_list[r] = item


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None,
                        group=None, group_src=None):
    """scatter_object_output_list[0] = scatter_object_input_list[r] of rank `src` (a global
    rank, 0 by default; or `group_src`) on group rank r. Raises ValueError for an output that
    is not a non-empty list, or no input list on src."""
    fn = "scatter_object_list"
    g = _resolve(group, fn)
    if g is None:
        return
    root = _root(group, g, fn, "src", src, group_src, default=0)
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at "
                         "least 1.")
    if g.rank == root:
        if scatter_object_input_list is None:
            raise ValueError("source rank must provide non-None scatter_object_input_list")
        if len(scatter_object_input_list) < g.size:
            raise ValueError(f"{fn}: scatter_object_input_list must hold one object per rank of "
                             f"the group ({g.size}), got {len(scatter_object_input_list)}")
        pieces = [pickle.dumps(o) for o in scatter_object_input_list[:g.size]]
        sizes = [len(p) for p in pieces]
        displs, _ = _displacements(sizes)
        data = b"".join(pieces)
    size = bytearray(8)
    MPI = g.MPI
    send = [struct.pack(f"={g.size}q", *sizes), MPI.INT64_T] if g.rank == root else None
    _wait(g, g.comm.Iscatter(send, [size, MPI.INT64_T], root=root))
    buf = bytearray(struct.unpack("=q", size)[0])
    send = [data, sizes, displs, MPI.BYTE] if g.rank == root else None
    _wait(g, g.comm.Iscatterv(send, [buf, MPI.BYTE], root=root))
    scatter_object_output_list[0] = pickle.loads(buf)


_OBJECT_TAG = 0x7A11   # the object messages' tag (size and bytes), apart from tensors' tag 0


def send_object_list(object_list, dst=None, group=None, device=None, group_dst=None):
    """Send the pickled `object_list` to rank `dst` (a global rank; or `group_dst`)."""
    fn = "send_object_list"
    g = _resolve(group, fn)
    if g is None:
        return
    peer = _root(group, g, fn, "dst", dst, group_dst)
    data = pickle.dumps(list(object_list))
    MPI = g.MPI
    _wait(g, g.comm.Isend([struct.pack("=q", len(data)), 1, MPI.INT64_T], peer, _OBJECT_TAG))
    _wait(g, g.comm.Isend([data, MPI.BYTE], peer, _OBJECT_TAG))


def recv_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """object_list[:] = the list sent by rank `src` (any rank when None); returns the sender's
    global rank."""
    fn = "recv_object_list"
    g = _resolve(group, fn)
    if g is None:
        return -1
    MPI = g.MPI
    any_source = src is None and group_src is None
    peer = MPI.ANY_SOURCE if any_source else _root(group, g, fn, "src", src, group_src)
    size = bytearray(8)
    work = Work(g, [g.comm.Irecv([size, 1, MPI.INT64_T], peer, _OBJECT_TAG)], statuses=True)
    work.wait()
    source = work._statuses[0].Get_source()
    buf = bytearray(struct.unpack("=q", size)[0])
    _wait(g, g.comm.Irecv([buf, MPI.BYTE], source, _OBJECT_TAG))
    object_list[:] = pickle.loads(buf)
    return source if group is None else group._ranks[source]


# ---------------------------------------------------------------------------------------------
# for DistributedDataParallel: started without the shape check (its buckets agree by design)
# ---------------------------------------------------------------------------------------------

def _all_reduce_host_sum(array, group=None):
    """Start an in-place SUM all-reduce of a contiguous host carray array over `group`; returns
    its Work."""
    g = _resolve(group, "all_reduce")
    return Work(g, [g.comm.Iallreduce(g.MPI.IN_PLACE, memoryview(array), g.MPI.SUM)])


def _broadcast_unchecked(tensor, src, group=None):
    """Start broadcasting `tensor` from group rank src; returns its Work."""
    g = _resolve(group, "broadcast")
    host = _Host(tensor, "broadcast", read=g.rank == src)
    req = g.comm.Ibcast(host.buffer, root=src)
    return Work(g, [req], None if g.rank == src else host.write_back)

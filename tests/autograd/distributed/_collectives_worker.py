"""mpiexec worker: every collective against NumPy, every dtype, contiguous and strided, cpu and
gpu. Prints 'OK <rank>' at the end."""

import numpy as np

import autograd
import autograd.distributed as dist
from autograd.distributed import ReduceOp

dist.init_process_group("mpi")
rank, world = dist.get_rank(), dist.get_world_size()
DTYPES = ["bool", "int32", "int64", "float32", "float64"]
devices = ["cpu"] + (["gpu"] if autograd.gpu.is_available() else [])


def values(r, dtype, shape=(3, 4)):
    """Rank r's data: different on every rank, exact in every dtype."""
    rng = np.random.default_rng(100 + r)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    return rng.integers(-5, 6, shape).astype(dtype)


def make(a, device, strided):
    """A tensor holding a (transposed view of a contiguous one when strided)."""
    if strided:
        t = autograd.tensor(np.ascontiguousarray(a.T), device=device).t()
        assert not t.is_contiguous()
        return t
    return autograd.tensor(a, device=device)


def check(t, expected, what):
    got = np.asarray(t.cpu().numpy())
    assert got.dtype == expected.dtype and np.array_equal(got, expected), \
        f"rank {rank}: {what}: {got} != {expected}"


NP_OPS = {ReduceOp.SUM: np.sum, ReduceOp.PRODUCT: np.prod, ReduceOp.MAX: np.max,
          ReduceOp.MIN: np.min}
BOOL_OPS = {ReduceOp.SUM: np.any, ReduceOp.MAX: np.any, ReduceOp.PRODUCT: np.all,
            ReduceOp.MIN: np.all}

for device in devices:
    for dtype in DTYPES:
        for strided in (False, True):
            what = f"{device} {dtype} strided={strided}"
            every = np.stack([values(r, dtype) for r in range(world)])
            mine = every[rank]
            for op in (ReduceOp.SUM, ReduceOp.PRODUCT, ReduceOp.MAX, ReduceOp.MIN, ReduceOp.AVG):
                if dtype == "bool" and op is ReduceOp.AVG:
                    continue
                t = make(mine, device, strided)
                work = dist.all_reduce(t, op=op, async_op=(op is ReduceOp.SUM))
                if work is not None:
                    work.wait()
                if op is ReduceOp.AVG:
                    s = every.sum(0)
                    ref = s / world if dtype.startswith("float") else s // world
                    ref = ref.astype(dtype)
                elif dtype == "bool":
                    ref = BOOL_OPS[op](every, axis=0)
                else:
                    ref = NP_OPS[op](every, axis=0).astype(dtype)
                check(t, ref, f"all_reduce {op} {what}")
            t = make(mine, device, strided)
            dist.broadcast(t, src=world - 1)
            check(t, every[world - 1], f"broadcast {what}")
            outs = [make(np.zeros_like(mine), device, strided) for _ in range(world)]
            dist.all_gather(outs, make(mine, device, strided))
            for r in range(world):
                check(outs[r], every[r], f"all_gather {what}")
            out = autograd.zeros((world * 3, 4), dtype=getattr(autograd, dtype), device=device)
            dist.all_gather_into_tensor(out, make(mine, device, strided))
            check(out, every.reshape(world * 3, 4), f"all_gather_into_tensor {what}")
            if dtype != "bool":
                big = np.stack([values(r, dtype, (world, 2, 4)) for r in range(world)])
                out = make(np.zeros((2, 4), dtype), device, strided)
                dist.reduce_scatter_tensor(out, autograd.tensor(big[rank], device=device))
                check(out, big.sum(0)[rank].astype(dtype), f"reduce_scatter_tensor {what}")
            gl = [make(np.zeros_like(mine), device, strided) for _ in range(world)] \
                if rank == 0 else None
            dist.gather(make(mine, device, strided), gl, dst=0)
            if rank == 0:
                for r in range(world):
                    check(gl[r], every[r], f"gather {what}")
            sl = [make(every[r], device, strided) for r in range(world)] if rank == 1 else None
            t = make(np.zeros_like(mine), device, strided)
            dist.scatter(t, sl, src=1)
            check(t, mine, f"scatter {what}")
            # a ring of send/recv
            t = make(np.zeros_like(mine), device, strided)
            nxt, prv = (rank + 1) % world, (rank - 1) % world
            w = dist.isend(make(mine, device, strided), nxt)
            src = dist.recv(t, src=None)
            w.wait()
            assert src == prv
            check(t, every[prv], f"send/recv {what}")

# 2-byte floats (carried as float32 through MPI): small integers, exact in both
for device in devices:
    for dtype in ("float16", "bfloat16"):
        every = np.stack([values(r, "float32") for r in range(world)])
        for op, ref in ((ReduceOp.SUM, every.sum(0)), (ReduceOp.MAX, every.max(0)),
                        (ReduceOp.AVG, every.sum(0) / world)):
            t = autograd.tensor(every[rank], device=device).to(getattr(autograd, dtype))
            dist.all_reduce(t, op=op)
            assert t.dtype == getattr(autograd, dtype), (t.dtype, dtype)
            want = autograd.tensor(ref).to(getattr(autograd, dtype)).float().numpy()
            check(t.float(), want, f"all_reduce {op} {device} {dtype}")
        t = autograd.tensor(every[rank], device=device).to(getattr(autograd, dtype))
        dist.broadcast(t, src=0)
        check(t.float(), every[0], f"broadcast {device} {dtype}")
        out = [autograd.zeros((3, 4), dtype=getattr(autograd, dtype), device=device)
               for _ in range(world)]
        dist.all_gather(out, autograd.tensor(every[rank], device=device).to(getattr(autograd,
                                                                                      dtype)))
        for r in range(world):
            check(out[r].float(), every[r], f"all_gather {device} {dtype}")

# empty tensors and 0-d tensors
e = autograd.zeros((0, 3))
dist.all_reduce(e)
assert e.shape == (0, 3)
s = autograd.tensor(float(rank + 1))
dist.all_reduce(s)
assert s.item() == world * (world + 1) / 2
objs = [{"a": rank}, "x"] if rank == 0 else [None, None]
dist.broadcast_object_list(objs, src=0)
assert objs == [{"a": 0}, "x"], objs
gathered = [None] * world
dist.all_gather_object(gathered, rank * 10)
assert gathered == [r * 10 for r in range(world)]
dist.barrier()
w = dist.barrier(async_op=True)
w.wait()
assert w.is_completed()
dist.destroy_process_group()
assert not dist.is_initialized()
print(f"OK {rank}", flush=True)   # one write: ranks' lines interleave in the output

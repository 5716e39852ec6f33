"""Run with `mpiexec -n 2 python bench/bench_distributed.py`: all_reduce of 1, 16 and 256 MB
float32 against raw mpi4py Allreduce on the same buffers, and DDP's cost per step (MLP
784-128-10, global batch 64) with a breakdown of where backward's time goes. Rank 0 prints."""

import time

import numpy as np
from mpi4py import MPI

import autograd
import autograd.distributed as dist
from autograd import nn
from autograd.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("mpi")
rank, world = dist.get_rank(), dist.get_world_size()
comm = MPI.COMM_WORLD


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        comm.Barrier()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


for mb, repeat in ((1, 20), (16, 5), (256, 2)):
    t = autograd.ones(mb * 1024 * 1024 // 4)
    buf = memoryview(t.array)
    raw = best(lambda buf=buf: comm.Allreduce(MPI.IN_PLACE, buf, MPI.SUM), repeat)
    ours = best(lambda t=t: dist.all_reduce(t), repeat)
    if rank == 0:
        print(f"all_reduce {mb:4d} MB: autograd {ours * 1e3:8.2f} ms  mpi4py {raw * 1e3:8.2f} ms"
              f"  ratio {ours / raw:.2f}")


def mlp():
    autograd.manual_seed(0)
    return nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))


def steps(model, batch, n=30):
    opt = autograd.optim.SGD(model.parameters(), lr=0.01)
    x, y = autograd.randn(batch, 784), autograd.randint(0, 10, (batch,))
    loss_fn = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()
    step()
    return best(step, n)


single = steps(mlp(), 64)     # one process, the whole batch (timed on every rank alike)
comm.Barrier()
ddp_model = DDP(mlp())
per_rank = steps(ddp_model, 64 // world)
local = steps(mlp(), 64 // world)                   # the same per-rank work without DDP
# where DDP's backward time goes: waiting at the end of backward for the all-reduce
waits = []
orig = ddp_model._finish_backward


def timed_finish():
    t = time.perf_counter()
    orig()
    waits.append(time.perf_counter() - t)


ddp_model._finish_backward = timed_finish
steps(ddp_model, 64 // world, 20)
if rank == 0:
    print(f"MLP 784-128-10 step, global batch 64: one process {single * 1e3:.2f} ms; "
          f"DDP on {world} ranks {per_rank * 1e3:.2f} ms per step (same per-rank work without "
          f"DDP {local * 1e3:.2f} ms, so DDP adds {(per_rank - local) * 1e3:.2f} ms); "
          f"end-of-backward wait + write-back {np.median(waits) * 1e3:.3f} ms")

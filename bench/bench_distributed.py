"""Run with `mpiexec -n 2 python bench/bench_distributed.py [--quick]`; rank 0 prints.

1. all_reduce of 1, 16 and 256 MB float32 against raw mpi4py Allreduce on the same buffer
   (medians; rounds alternate raw / checked / unchecked so that load drifts hit all three), with
   the cross-rank shape/dtype check on and off (CARRAY_DISTRIBUTED_CHECK=0 turns it off).
2. DDP's cost per step on a small MLP (784-128-10, global batch 64).
3. Overlap of communication with backward on an MLP big enough for it (1024-4096-4096-1024-10,
   25M parameters, 100 MB of gradients, batch 32 per rank): for each bucket, when it was
   launched and when its all-reduce was seen complete, relative to the start of backward and
   to the end of the autograd graph; and the end-of-backward wait with the default buckets
   (25 MB) against one bucket (launched only when the graph is done: no overlap).
"""

import sys
import time

import numpy as np
from mpi4py import MPI

import autograd
import autograd.distributed as dist
import autograd.nn.parallel.distributed as ddp_module
from autograd import nn
from autograd.distributed.process_group import _default_group
from autograd.nn.parallel import DistributedDataParallel as DDP

QUICK = "--quick" in sys.argv
dist.init_process_group("mpi")
rank, world = dist.get_rank(), dist.get_world_size()
comm = MPI.COMM_WORLD
group = _default_group()


def say(*args):
    if rank == 0:
        print(*args, flush=True)


def timed(fn):
    comm.Barrier()
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


# --- 1. all_reduce against raw mpi4py ----------------------------------------------------------
say(f"== all_reduce float32, {world} ranks, medians (ms)")
for mb, rounds in ((1, 2000), (16, 100), (256, 6)):
    if QUICK:
        rounds = max(3, rounds // 20)
    t = autograd.ones(mb * 1024 * 1024 // 4)
    buf = memoryview(t.array)
    raw, checked, unchecked = [], [], []
    for _ in range(rounds):
        raw.append(timed(lambda buf=buf: comm.Allreduce(MPI.IN_PLACE, buf, MPI.SUM)))
        group.check = True
        checked.append(timed(lambda t=t: dist.all_reduce(t)))
        group.check = False
        unchecked.append(timed(lambda t=t: dist.all_reduce(t)))
    group.check = True
    r, c, u = (np.median(x) * 1e3 for x in (raw, checked, unchecked))
    say(f"{mb:4d} MB: mpi4py {r:8.3f}  autograd {c:8.3f} (ratio {c / r:.3f})  "
        f"without the check {u:8.3f} (ratio {u / r:.3f})")


# --- 2. DDP on a small MLP ---------------------------------------------------------------------
def steps(model, x, y, n, loss_fn=None):
    """The median time of n SGD steps of model on (x, y)."""
    opt = autograd.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = loss_fn or nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()
    step()
    return np.median([timed(step) for _ in range(n)])


def mlp(*sizes):
    autograd.manual_seed(0)
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers[:-1])


n = 5 if QUICK else 30
x, y = autograd.randn(64, 784), autograd.randint(0, 10, (64,))
xs, ys = x[:64 // world], y[:64 // world]
single = steps(mlp(784, 128, 10), x, y, n)
ddp = steps(DDP(mlp(784, 128, 10)), xs, ys, n)
local = steps(mlp(784, 128, 10), xs, ys, n)
say(f"== MLP 784-128-10 SGD step, global batch 64 (ms, medians): one process {single * 1e3:.2f}; "
    f"DDP on {world} ranks {ddp * 1e3:.2f}; the same per-rank work without DDP "
    f"{local * 1e3:.2f} (DDP adds {(ddp - local) * 1e3:.2f})")


# --- 3. overlap on a big MLP -------------------------------------------------------------------
class _Timeline:
    """Launch and observed-completion times of DDP's bucket all-reduces, and the end of the
    autograd graph (when DDP's end-of-backward callback starts) and of its wait."""

    def __init__(self):
        self.launch, self.done = [], []
        self.graph_end = self.wait_end = None

    def wrap(self, model):
        start_reduce = ddp_module._all_reduce_host_sum
        finish = model._finish_backward
        timeline = self

        def all_reduce(array, group=None):
            work = start_reduce(array, group)
            index = len(timeline.launch)
            timeline.launch.append(time.perf_counter())
            timeline.done.append(None)
            complete = work._complete

            def completed():
                timeline.done[index] = time.perf_counter()
                complete()
            work._complete = completed
            return work

        def finish_backward():
            timeline.graph_end = time.perf_counter()
            finish()
            timeline.wait_end = time.perf_counter()

        ddp_module._all_reduce_host_sum = all_reduce
        model._finish_backward = finish_backward
        return start_reduce

    def reset(self):
        self.launch, self.done = [], []


def overlap(bucket_cap_mb, n):
    """Per-step figures of DDP on the big MLP with the given bucket cap (medians over n)."""
    model = DDP(mlp(1024, 4096, 4096, 1024, 10), bucket_cap_mb=bucket_cap_mb)
    timeline = _Timeline()
    original = timeline.wrap(model)
    opt = autograd.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    autograd.manual_seed(rank)
    x, y = autograd.randn(32, 1024), autograd.randint(0, 10, (32,))
    rows = []
    for i in range(n + 1):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        timeline.reset()
        comm.Barrier()
        t0 = time.perf_counter()
        loss.backward()
        t1 = time.perf_counter()
        opt.step()
        if i:      # the first step allocates
            rows.append((t0, t1, timeline.graph_end, timeline.wait_end, list(timeline.launch),
                         list(timeline.done)))
    ddp_module._all_reduce_host_sum = original
    sizes = [b.flat.size * 4 / 2**20 for b in model._buckets]
    ms = 1e3
    backward = np.median([r[1] - r[0] for r in rows]) * ms
    graph = np.median([r[2] - r[0] for r in rows]) * ms
    wait = np.median([r[3] - r[2] for r in rows]) * ms
    buckets = []
    for b in range(len(sizes)):
        launch = np.median([r[4][b] - r[0] for r in rows]) * ms
        done = np.median([r[5][b] - r[0] for r in rows]) * ms
        buckets.append(f"bucket {b} ({sizes[b]:.0f} MB): launched {launch:.1f}, complete "
                       f"{done:.1f} ({done - graph:+.1f} vs the graph's end)")
    return backward, graph, wait, buckets


n = 2 if QUICK else 8
say(f"== overlap: MLP 1024-4096-4096-1024-10 (25M parameters), batch 32 per rank, {world} "
    "ranks; ms from the start of backward, medians")
for cap, name in ((25, "default buckets (25 MB)"), (1000, "one bucket (no overlap)")):
    backward, graph, wait, buckets = overlap(cap, n)
    say(f"{name}: backward {backward:.1f} = autograd graph {graph:.1f} + end-of-backward wait "
        f"and write-back {wait:.1f}")
    for line in buckets:
        say("    " + line)

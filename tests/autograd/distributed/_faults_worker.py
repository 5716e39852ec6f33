"""mpiexec worker for fault tests: `raise` (rank 1 raises while rank 0 waits in a collective),
`mismatch` (ranks pass different shapes, then dtypes, then call different collectives: every
rank raises ValueError), `timeout`
(rank 1 skips a collective; rank 0 gives up after its timeout)."""

import datetime
import sys

import autograd
import autograd.distributed as dist

mode = sys.argv[1]
dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=3))
rank = dist.get_rank()

if mode == "raise":
    if rank == 1:
        raise ValueError("rank 1 fails on purpose")
    dist.all_reduce(autograd.ones(3))     # never completes: the abort stops this rank
    print("rank 0 finished", flush=True)
elif mode == "mismatch":
    for t in (autograd.ones(2 + rank), autograd.ones(2, dtype=[autograd.float32,
                                                                autograd.int64][rank % 2])):
        try:
            dist.all_reduce(t)
        except ValueError as e:
            assert "different shapes or dtypes" in str(e), e
            print(f"raised {rank}", flush=True)
    try:
        if rank == 0:
            dist.all_reduce(autograd.ones(2))
        else:
            dist.broadcast(autograd.ones(2), src=0)
    except ValueError as e:
        assert "called different collectives" in str(e), e
        print(f"raised {rank}", flush=True)
    dist.barrier()
elif mode == "timeout":
    if rank == 0:
        try:
            dist.all_reduce(autograd.ones(3))
        except RuntimeError as e:
            assert "timeout" in str(e), e
            print(f"timed out {rank}", flush=True)
    dist.barrier()

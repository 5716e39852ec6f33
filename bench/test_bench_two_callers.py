"""Issue 14 item 6: carray called from two Python threads at once (the GIL is released in its
loops). Each workload runs 2k calls on one thread, then k calls on each of two threads started
together; with both callers' OpenMP teams at full size the second case would oversubscribe the
cores (2N threads on N). carray's parallel regions share the cores instead (carray/core/_omp.h:
a region that starts while others run takes the cores left over). The peer is PyTorch doing the
same (its intra-op pool from two Python threads). Compare the two groups' medians: two callers
should take about as long as one doing twice the work, not longer.

    python -m pytest bench/test_bench_two_callers.py --benchmark-only
"""

import threading

import pytest

import carray

K = 20


def _ops(lib, np):
    rng = np.random.default_rng(0)
    big = rng.random((2048, 4096), dtype=np.float32)
    sq = rng.random((512, 512), dtype=np.float32)
    if lib == "carray":
        a, b = carray.asarray(big), carray.asarray(sq)
        return {"sum-axis1": lambda: carray.sum(a, axis=1), "matmul-512": lambda: a[:512, :512]
                @ b, "exp": lambda: carray.exp(a)}
    import torch
    a, b = torch.from_numpy(big), torch.from_numpy(sq)
    return {"sum-axis1": lambda: a.sum(1), "matmul-512": lambda: a[:512, :512] @ b,
            "exp": lambda: torch.exp(a)}


def _one_caller(fn):
    for _ in range(2 * K):
        fn()


def _two_callers(fn):
    def work():
        for _ in range(K):
            fn()
    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


@pytest.mark.parametrize("op", ["sum-axis1", "matmul-512", "exp"])
@pytest.mark.parametrize("callers", ["one", "two"])
def test_two_callers_carray(benchmark, np, op, callers):
    benchmark.group = f"two-callers-{op}"
    fn = _ops("carray", np)[op]
    benchmark(_one_caller if callers == "one" else _two_callers, fn)


@pytest.mark.parametrize("op", ["sum-axis1", "matmul-512", "exp"])
@pytest.mark.parametrize("callers", ["one", "two"])
def test_two_callers_torch(benchmark, np, torch, op, callers):
    benchmark.group = f"two-callers-{op}"
    fn = _ops("torch", np)[op]
    benchmark(_one_caller if callers == "one" else _two_callers, fn)

"""G2 in full (BENCHMARKS.md, GPU): sgemm 4096 and 8192 float32, row-major (nn), with one
operand a transposed view (tn: A.T @ B, a weight gradient; nt: A @ B.T, a linear layer) and
batched (bnn: 8 row-major products of half the size, the same flops), carray
on its OpenCL device beside PyTorch on CUDA (TF32 off) in the same run. Every timed call ends by
waiting for its queue/stream; a table of TFLOP/s and ratios is printed at the end.
CARRAY_BENCH_SMALL=1 shrinks the sizes for a CPU OpenCL device (PoCL)."""

import os

import pytest

import carray

try:
    carray.opencl.runtime()
except Exception as e:         # no pyopencl or no device
    pytest.skip(f"no OpenCL device ({e})", allow_module_level=True)

SIZES = (256, 512) if os.environ.get("CARRAY_BENCH_SMALL") == "1" else (4096, 8192)
LAYOUTS = ("nn", "tn", "nt", "bnn")
_RATES = {}     # (n, layout, library) -> TFLOP/s at the median


@pytest.fixture(scope="module", autouse=True)
def _report(show_lines):
    yield
    lines = ["", f"sgemm on {carray.opencl.name!r} (TFLOP/s at the median)"]
    for n in SIZES:
        for lay in LAYOUTS:
            c, t = _RATES.get((n, lay, "carray")), _RATES.get((n, lay, "torch"))
            if c is None:
                continue
            lines.append(f"{n} {lay}: carray {c:.1f}" + (f"  torch {t:.1f}  carray/torch "
                                                         f"{c / t:.3f}" if t else ""))
    show_lines(lines)


def _record(benchmark, n, layout, lib):
    if benchmark.stats is not None:         # None under --benchmark-disable
        _RATES[(n, layout, lib)] = 2 * n ** 3 / benchmark.stats.stats.median / 1e12


def _operands(lib_rand, n, layout):
    if layout == "bnn":
        return lib_rand((8, n // 2, n // 2)), lib_rand((8, n // 2, n // 2))
    a, b = lib_rand((n, n)), lib_rand((n, n))
    return (a.T if layout == "tn" else a), (b.T if layout == "nt" else b)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("n", SIZES)
def test_sgemm_carray(benchmark, n, layout):
    benchmark.group = f"sgemm {n} {layout}"
    g = carray.random.Generator(0)
    a, b = _operands(lambda shape: g.random(shape, device="gpu"), n, layout)

    def run():
        c = a @ b
        carray.opencl.queue.finish()
        return c
    benchmark.pedantic(run, rounds=10, warmup_rounds=2)
    _record(benchmark, n, layout, "carray")


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("n", SIZES)
def test_sgemm_torch(benchmark, n, layout, torch):
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device here")
    torch.backends.cuda.matmul.allow_tf32 = False
    benchmark.group = f"sgemm {n} {layout}"
    a, b = _operands(lambda shape: torch.rand(*shape, device="cuda"), n, layout)

    def run():
        c = a @ b
        torch.cuda.synchronize()
        return c
    benchmark.pedantic(run, rounds=10, warmup_rounds=2)
    _record(benchmark, n, layout, "torch")

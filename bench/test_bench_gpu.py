"""G1-G3 (BENCHMARKS.md, GPU): carray on its OpenCL device beside PyTorch on CUDA (when both
exist on the machine). Each workload is one group; rates go into extra_info and a table with
ratios is printed at the end. Every timed call ends by waiting for its queue/stream.

G1 add 128M float32 (GB/s counting 3 arrays), G2 sgemm 4096 float32 (TFLOP/s, PyTorch with TF32
off), G3 per-op launch overhead on 16 elements (us/op, 100 queued ops then one wait).
CARRAY_BENCH_SMALL=1 shrinks G1/G2 for a CPU OpenCL device (PoCL).
"""

import os

import pytest

import carray

try:
    carray.opencl.runtime()
except Exception as e:         # no pyopencl or no device
    pytest.skip(f"no OpenCL device ({e})", allow_module_level=True)

SMALL = os.environ.get("CARRAY_BENCH_SMALL") == "1"
N_ADD = (1 << 22) if SMALL else (128 << 20)
N_GEMM = 512 if SMALL else 4096
LAUNCHES = 100
_RATES = {}      # (group, library) -> (rate, unit)


@pytest.fixture(scope="module", autouse=True)
def _report(show_lines):
    yield
    if not _RATES:
        return
    lines = ["", f"GPU workloads on {carray.opencl.name!r} (rate at the median)"]
    for group in ("G1", "G2", "G3"):
        row = {lib: r for (g, lib), r in _RATES.items() if g == group}
        if "carray" not in row:
            continue
        text = "  ".join(f"{lib} {v:.3g} {u}" for lib, (v, u) in sorted(row.items()))
        ratio = "  ".join(f"carray/{lib} {row['carray'][0] / v:.2f}"
                          for lib, (v, u) in sorted(row.items()) if lib != "carray")
        lines.append(f"{group}: {text}   {ratio}")
    show_lines(lines)


def _cuda(torch):
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device here")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return torch


def _record(benchmark, group, lib, work, unit, scale):
    rate = work / benchmark.stats.stats.median / scale
    benchmark.extra_info[unit] = rate
    _RATES[(group, lib)] = (rate, unit)


def _finish():
    carray.opencl.queue.finish()


@pytest.mark.benchmark(group="G1 add 128M float32")
def test_g1_add_carray(benchmark):
    a = carray.ones(N_ADD, device="gpu")
    b = carray.ones(N_ADD, device="gpu")

    def run():
        c = a + b
        _finish()
        return c
    benchmark(run)
    _record(benchmark, "G1", "carray", 3 * 4 * N_ADD, "GB/s", 1e9)


@pytest.mark.benchmark(group="G1 add 128M float32")
def test_g1_add_torch(benchmark, torch):
    torch = _cuda(torch)
    a = torch.ones(N_ADD, device="cuda")
    b = torch.ones(N_ADD, device="cuda")

    def run():
        c = a + b
        torch.cuda.synchronize()
        return c
    benchmark(run)
    _record(benchmark, "G1", "torch", 3 * 4 * N_ADD, "GB/s", 1e9)


@pytest.mark.benchmark(group="G2 sgemm 4096 float32")
def test_g2_sgemm_carray(benchmark):
    g = carray.random.Generator(0)
    a = g.random((N_GEMM, N_GEMM), device="gpu")
    b = g.random((N_GEMM, N_GEMM), device="gpu")

    def run():
        c = a @ b
        _finish()
        return c
    benchmark(run)
    _record(benchmark, "G2", "carray", 2 * N_GEMM ** 3, "TFLOP/s", 1e12)


@pytest.mark.benchmark(group="G2 sgemm 4096 float32")
def test_g2_sgemm_torch(benchmark, torch):
    torch = _cuda(torch)
    a = torch.rand(N_GEMM, N_GEMM, device="cuda")
    b = torch.rand(N_GEMM, N_GEMM, device="cuda")

    def run():
        c = a @ b
        torch.cuda.synchronize()
        return c
    benchmark(run)
    _record(benchmark, "G2", "torch", 2 * N_GEMM ** 3, "TFLOP/s", 1e12)


@pytest.mark.benchmark(group="G3 launch overhead, 16 elements")
def test_g3_launch_carray(benchmark):
    x = carray.ones(16, device="gpu")
    y = carray.ones(16, device="gpu")

    def run():
        for _ in range(LAUNCHES):
            x + y
        _finish()
    benchmark(run)
    us = benchmark.stats.stats.median / LAUNCHES * 1e6
    benchmark.extra_info["us/op"] = us
    _RATES[("G3", "carray")] = (us, "us/op")


@pytest.mark.benchmark(group="G3 launch overhead, 16 elements")
def test_g3_launch_torch(benchmark, torch):
    torch = _cuda(torch)
    x = torch.ones(16, device="cuda")
    y = torch.ones(16, device="cuda")

    def run():
        for _ in range(LAUNCHES):
            x + y
        torch.cuda.synchronize()
    benchmark(run)
    us = benchmark.stats.stats.median / LAUNCHES * 1e6
    benchmark.extra_info["us/op"] = us
    _RATES[("G3", "torch")] = (us, "us/op")

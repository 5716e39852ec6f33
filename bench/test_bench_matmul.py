"""W1: sgemm, float32 n x n @ n x n for n = 256, 1024, 2048: carray vs NumPy (OpenBLAS) vs PyTorch.

Each size is one group. GFLOP/s (2 n^3 / median time) goes into each benchmark's extra_info, and
a table of GFLOP/s and ratios to NumPy is printed at the end of the module. Target (BENCHMARKS.md):
carray >= 0.8x NumPy at n = 1024 and 2048.
"""

import pytest

import carray

SIZES = (256, 1024, 2048)
_GFLOPS = {}          # (n, library) -> GFLOP/s at the median time


@pytest.fixture(scope="module", autouse=True)
def _report(show_lines):
    yield
    if not _GFLOPS:
        return
    lines = ["", "W1 sgemm float32 (GFLOP/s at the median; ratio = carray / peer)"]
    for n in SIZES:
        row = {lib: g for (m, lib), g in _GFLOPS.items() if m == n}
        if not row:
            continue
        text = "  ".join(f"{lib} {g:6.1f}" for lib, g in sorted(row.items()))
        ratios = "  ".join(f"carray/{lib} {row['carray'] / g:.2f}" for lib, g in sorted(row.items())
                           if lib != "carray" and "carray" in row)
        lines.append(f"n={n:5d}: {text}   {ratios}")
    show_lines(lines)


def _inputs(np, n):
    rng = np.random.default_rng(n)
    return (rng.random((n, n), dtype=np.float32) - 0.5, rng.random((n, n), dtype=np.float32) - 0.5)


def _record(benchmark, n, lib):
    g = 2.0 * n ** 3 / benchmark.stats.stats.median / 1e9
    benchmark.extra_info["gflops"] = round(g, 1)
    _GFLOPS[(n, lib)] = g


@pytest.mark.parametrize("n", SIZES)
def test_sgemm_carray(benchmark, np, n):
    benchmark.group = f"sgemm-f32-{n}"
    a, b = _inputs(np, n)
    ca, cb = carray.asarray(a), carray.asarray(b)
    out = benchmark(carray.matmul, ca, cb)
    _record(benchmark, n, "carray")
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(np.asarray(out) - ref).max() <= 1e-4 * (np.abs(a) @ np.abs(b)).max()


@pytest.mark.parametrize("n", SIZES)
def test_sgemm_numpy(benchmark, np, n):
    benchmark.group = f"sgemm-f32-{n}"
    a, b = _inputs(np, n)
    benchmark(np.matmul, a, b)
    _record(benchmark, n, "numpy")


@pytest.mark.parametrize("n", SIZES)
def test_sgemm_torch(benchmark, np, torch, n):
    benchmark.group = f"sgemm-f32-{n}"
    a, b = _inputs(np, n)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    benchmark(torch.matmul, ta, tb)
    _record(benchmark, n, "torch")

"""Issue 13 item 7: float16 matmul (2048 x 2048) and elementwise add of 2**24 float16 elements,
carray on cpu and on its OpenCL device beside NumPy (cpu) and PyTorch (cpu; CUDA when
torch.cuda.is_available()). carray computes the 2-byte floats in float32 and rounds back
(carray/ops/_half.py), so its time includes the conversions. Every timed device call ends by
waiting for its queue/stream. CARRAY_BENCH_SMALL=1 shrinks the sizes (for PoCL or CI).
"""

import os

import pytest

import carray

SMALL = os.environ.get("CARRAY_BENCH_SMALL") == "1"
N_GEMM = 256 if SMALL else 2048
N_ADD = (1 << 20) if SMALL else (1 << 24)
GEMM = f"float16 matmul {N_GEMM}x{N_GEMM}"
ADD = f"float16 add {N_ADD} elements"


def _gpu():
    try:
        carray.opencl.runtime()
    except Exception as e:         # no pyopencl or no device
        pytest.skip(f"no OpenCL device ({e})")


def _cuda(torch):
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device here")
    return torch


def _operands(np, shape):
    rng = np.random.default_rng(0)
    return (rng.standard_normal(shape).astype(np.float16),
            rng.standard_normal(shape).astype(np.float16))


def _carray_run(device, fn):
    if device == "gpu":
        _gpu()

        def run():
            r = fn()
            carray.opencl.queue.finish()
            return r
        return run
    return fn


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.benchmark(group=GEMM)
def test_matmul_carray(benchmark, np, device):
    x, y = _operands(np, (N_GEMM, N_GEMM))
    if device == "gpu":
        _gpu()
    a, b = carray.asarray(x, device=device), carray.asarray(y, device=device)
    benchmark(_carray_run(device, lambda: a @ b))


@pytest.mark.benchmark(group=GEMM)
def test_matmul_numpy(benchmark, np):
    x, y = _operands(np, (N_GEMM, N_GEMM))
    if not SMALL:
        pytest.skip("NumPy's float16 matmul has no BLAS (minutes at 2048); run with "
                    "CARRAY_BENCH_SMALL=1 to time it")
    benchmark(np.matmul, x, y)


@pytest.mark.benchmark(group=GEMM)
def test_matmul_torch_cpu(benchmark, np, torch):
    x, y = _operands(np, (N_GEMM, N_GEMM))
    a, b = torch.from_numpy(x), torch.from_numpy(y)
    benchmark(torch.matmul, a, b)


@pytest.mark.benchmark(group=GEMM)
def test_matmul_torch_cuda(benchmark, np, torch):
    torch = _cuda(torch)
    x, y = _operands(np, (N_GEMM, N_GEMM))
    a, b = torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()

    def run():
        r = a @ b
        torch.cuda.synchronize()
        return r
    benchmark(run)


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.benchmark(group=ADD)
def test_add_carray(benchmark, np, device):
    x, y = _operands(np, (N_ADD,))
    if device == "gpu":
        _gpu()
    a, b = carray.asarray(x, device=device), carray.asarray(y, device=device)
    benchmark(_carray_run(device, lambda: a + b))


@pytest.mark.benchmark(group=ADD)
def test_add_numpy(benchmark, np):
    x, y = _operands(np, (N_ADD,))
    benchmark(np.add, x, y)


@pytest.mark.benchmark(group=ADD)
def test_add_torch_cpu(benchmark, np, torch):
    x, y = _operands(np, (N_ADD,))
    benchmark(torch.add, torch.from_numpy(x), torch.from_numpy(y))


@pytest.mark.benchmark(group=ADD)
def test_add_torch_cuda(benchmark, np, torch):
    torch = _cuda(torch)
    x, y = _operands(np, (N_ADD,))
    a, b = torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()

    def run():
        r = a + b
        torch.cuda.synchronize()
        return r
    benchmark(run)

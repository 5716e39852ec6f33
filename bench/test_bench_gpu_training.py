"""G4 (BENCHMARKS.md, GPU): one SGD step of W7's MLP and W8's CNN at batch 256, with autograd on
the OpenCL device beside autograd on the CPU (and PyTorch on CUDA when present, for
information). Every timed step ends by reading the loss to the host, so the device queue has
drained."""

import pytest

import autograd
import carray

from test_bench_training import _cnn, _mlp

try:
    carray.opencl.runtime()
except Exception as e:         # no pyopencl or no device
    pytest.skip(f"no OpenCL device ({e})", allow_module_level=True)

BATCH = 256


def _step_fn(lib, model, device):
    gen = lib.Generator().manual_seed(0) if lib is not autograd else None
    x = lib.randn(BATCH, 1, 28, 28, generator=gen).to(device)
    y = lib.randint(0, 10, (BATCH,), generator=gen).to(device)
    model = model.to(device)
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = lib.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()
    step()  # compile the kernels outside the timing
    return step


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.benchmark(group="G4-W7-mlp-step-batch256")
def test_g4_mlp_step_autograd(benchmark, device):
    autograd.manual_seed(0)
    benchmark(_step_fn(autograd, _mlp(autograd.nn), device))


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.benchmark(group="G4-W8-cnn-step-batch256")
def test_g4_cnn_step_autograd(benchmark, device):
    autograd.manual_seed(0)
    benchmark(_step_fn(autograd, _cnn(autograd.nn), device))


def _cuda(torch):
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device here")
    return torch


@pytest.mark.benchmark(group="G4-W7-mlp-step-batch256")
def test_g4_mlp_step_torch_cuda(benchmark, torch):
    torch = _cuda(torch)
    benchmark(_step_fn(torch, _mlp(torch.nn), "cuda"))


@pytest.mark.benchmark(group="G4-W8-cnn-step-batch256")
def test_g4_cnn_step_torch_cuda(benchmark, torch):
    torch = _cuda(torch)
    benchmark(_step_fn(torch, _cnn(torch.nn), "cuda"))

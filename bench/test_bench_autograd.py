"""W5b and W6 of BENCHMARKS.md: the per-op overhead of recording the graph, and a small forward +
backward; each group holds autograd and PyTorch (if installed)."""

import pytest

import autograd

# -- W5b: a * b on 16-element tensors that require grad (records one node per call) --

@pytest.mark.benchmark(group="W5b-mul-requires-grad")
def test_mul_requires_grad_autograd(benchmark):
    a = autograd.randn(16, requires_grad=True)
    b = autograd.randn(16, requires_grad=True)
    benchmark(a.__mul__, b)


@pytest.mark.benchmark(group="W5b-mul-requires-grad")
def test_mul_requires_grad_torch(benchmark, torch):
    a = torch.randn(16, requires_grad=True)
    b = torch.randn(16, requires_grad=True)
    benchmark(a.__mul__, b)


# -- W6: ((x * y + x).relu() * y).sum().backward() on 16 elements --

def _w6(x, y):
    ((x * y + x).relu() * y).sum().backward()


@pytest.mark.benchmark(group="W6-small-backward")
def test_small_backward_autograd(benchmark):
    x = autograd.randn(16, requires_grad=True)
    y = autograd.randn(16, requires_grad=True)
    benchmark(_w6, x, y)


@pytest.mark.benchmark(group="W6-small-backward")
def test_small_backward_torch(benchmark, torch):
    x = torch.randn(16, requires_grad=True)
    y = torch.randn(16, requires_grad=True)
    benchmark(_w6, x, y)

"""W7 and W8 of BENCHMARKS.md: one SGD training step (forward, cross-entropy, backward, update)
of an MLP and of a small CNN at batch 64, with autograd and with PyTorch (same model, batch and
optimizer; PyTorch is skipped when not installed)."""

import pytest

import autograd


def _mlp(nn):
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))


def _cnn(nn):
    return nn.Sequential(
        nn.Conv2d(1, 8, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(400, 10))


def _step_fn(lib, model, batch=64):
    """A closure running one SGD step of model on a fixed random batch of 28x28 images."""
    x = lib.randn(batch, 1, 28, 28)
    y = lib.randint(0, 10, (batch,))
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = lib.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    return step


@pytest.mark.benchmark(group="W7-mlp-sgd-step")
def test_mlp_step_autograd(benchmark):
    autograd.manual_seed(0)
    benchmark(_step_fn(autograd, _mlp(autograd.nn)))


@pytest.mark.benchmark(group="W7-mlp-sgd-step")
def test_mlp_step_torch(benchmark, torch):
    torch.manual_seed(0)
    benchmark(_step_fn(torch, _mlp(torch.nn)))


@pytest.mark.benchmark(group="W8-cnn-sgd-step")
def test_cnn_step_autograd(benchmark):
    autograd.manual_seed(0)
    benchmark(_step_fn(autograd, _cnn(autograd.nn)))


@pytest.mark.benchmark(group="W8-cnn-sgd-step")
def test_cnn_step_torch(benchmark, torch):
    torch.manual_seed(0)
    benchmark(_step_fn(torch, _cnn(torch.nn)))

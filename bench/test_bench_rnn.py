"""The LSTM language model's core (issue 12): an embedding lookup (10000 x 256) into a 2-layer
LSTM of 256 units over 35 steps at batch 20, forward and backward of output.sum(), with autograd
and with PyTorch (skipped when not installed)."""

import pytest

import autograd

VOCAB, WIDTH, LAYERS, STEPS, BATCH = 10000, 256, 2, 35, 20


def _step_fn(lib):
    """A closure running forward and backward once on fixed random token ids."""
    emb = lib.randn(VOCAB, WIDTH, requires_grad=True)
    lstm = lib.nn.LSTM(WIDTH, WIDTH, LAYERS)
    tokens = lib.randint(0, VOCAB, (STEPS, BATCH))

    def step():
        emb.grad = None
        lstm.zero_grad()
        out, (h, c) = lstm(lib.nn.functional.embedding(tokens, emb))
        out.sum().backward()
    return step


@pytest.mark.benchmark(group="lstm-lm-fwd-bwd")
def test_lstm_lm_autograd(benchmark):
    autograd.manual_seed(0)
    benchmark(_step_fn(autograd))


@pytest.mark.benchmark(group="lstm-lm-fwd-bwd")
def test_lstm_lm_torch(benchmark, torch):
    torch.manual_seed(0)
    benchmark(_step_fn(torch))

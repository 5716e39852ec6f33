"""W10 and W11 (issue 12): one full training step of the two language-model examples, with
autograd and with PyTorch on identical weights and batches (PyTorch is skipped when not
installed).

W10  char-GPT of examples/train_gpt.py (n_layer 4, n_head 4, n_embd 128, block 64, vocab 65,
     tied head), batch 32: zero_grad, forward, cross-entropy, backward, clip_grad_norm_(1.0),
     AdamW step.
W11  LSTM LM of examples/word_lm.py (Embedding 10000 x 256, 2-layer LSTM 256, Linear to 10000,
     dropout 0), seq 35, batch 20: the state carried over detached, zero_grad, forward,
     cross-entropy, backward, clip_grad_norm_(0.25), SGD step (lr 20).

The PyTorch model is the example file itself with its `import autograd as torch` lines turned
into `import torch` (so this also checks that the examples are PyTorch code); torch's initial
state_dict is copied into the autograd model, and both see the same token ids.

CPU (default): `python -m pytest bench/test_bench_models.py --benchmark-only`.
GPU: `BENCH_MODELS_DEVICE=gpu python -m pytest bench/test_bench_models.py --benchmark-only`
runs autograd on the OpenCL device ("gpu") beside PyTorch on "cuda" (skipped without CUDA);
each timed GPU step ends by reading the loss, so the queues have drained.
"""

import os
import pathlib
import random
import types

import pytest

import autograd

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"
DEVICE = os.environ.get("BENCH_MODELS_DEVICE", "cpu")
GPT = dict(vocab_size=65, block_size=64, n_layer=4, n_head=4, n_embd=128)
GPT_BATCH = 32
LM = dict(ntoken=10000, ninp=256, nhid=256, nlayers=2, dropout=0.0)
LM_SEQ, LM_BATCH = 35, 20

if DEVICE not in ("cpu", "gpu"):
    raise ValueError(f"BENCH_MODELS_DEVICE must be 'cpu' or 'gpu', got {DEVICE!r}")
if DEVICE == "gpu":
    import carray
    try:
        carray.opencl.runtime()
    except Exception as e:         # no pyopencl or no device
        pytest.skip(f"no OpenCL device ({e})", allow_module_level=True)


def _example(name, lib):
    """examples/<name>.py as a module; for lib == "torch" its autograd imports become torch's."""
    source = (EXAMPLES / f"{name}.py").read_text()
    if lib == "torch":
        for sub in ("", ".nn", ".nn.functional", ".distributed"):
            source = source.replace(f"import autograd{sub} as ", f"import torch{sub} as ")
        source = source.replace("from autograd.nn.parallel import", "from torch.nn.parallel import")
    module = types.ModuleType(f"{name}_{lib}")
    module.__file__ = str(EXAMPLES / f"{name}.py")
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


def _torch_device(torch):
    if DEVICE == "cpu":
        return "cpu"
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device here")
    return "cuda"


def _copy_weights(torch_model, model, device):
    """Load torch_model's state_dict into the autograd model (same keys), on device."""
    state = {k: autograd.tensor(v.detach().cpu().numpy()) for k, v in
             torch_model.state_dict().items()}
    model.load_state_dict(state)
    return model.to(device)


def _models(name, cls, kwargs, torch):
    """(torch model, autograd model) of examples/<name>.py's cls with identical weights; without
    PyTorch (torch None) the torch model is None and the autograd model keeps its own init."""
    model = getattr(_example(name, "autograd"), cls)(**kwargs)
    if torch is None:
        return None, model.to(DEVICE)
    torch.manual_seed(0)
    torch_model = getattr(_example(name, "torch"), cls)(**kwargs)
    return torch_model, _copy_weights(torch_model, model, DEVICE)


def _ids(shape, high):
    """Fixed pseudo-random token ids in [0, high) as nested lists (the same for both libs)."""
    rng = random.Random(1)
    rows, cols = shape
    return [[rng.randrange(high) for _ in range(cols)] for _ in range(rows)]


def _gpt_step(lib, model, device):
    """A closure running one W10 step of model on a fixed random batch."""
    x = _ids((GPT_BATCH, GPT["block_size"] + 1), GPT["vocab_size"])
    idx = lib.tensor([r[:-1] for r in x]).to(device)
    targets = lib.tensor([r[1:] for r in x]).to(device)
    model = model.to(device)
    optimizer = model.configure_optimizer(weight_decay=0.1, lr=1e-3)

    def step():
        optimizer.zero_grad(set_to_none=True)
        _, loss = model(idx, targets)
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        return loss.item() if device != "cpu" else loss
    step()      # compile kernels / allocate state outside the timing
    return step


def _lm_step(lib, model, device):
    """A closure running one W11 step of model on a fixed random batch, state carried over."""
    x = _ids((LM_SEQ + 1, LM_BATCH), LM["ntoken"])
    data = lib.tensor(x[:-1]).to(device)
    targets = lib.tensor([t for r in x[1:] for t in r]).to(device)
    model = model.to(device)
    optimizer = lib.optim.SGD(model.parameters(), lr=20.0)
    criterion = lib.nn.CrossEntropyLoss()
    state = {"hidden": model.init_hidden(LM_BATCH, device)}

    def step():
        hidden = tuple(h.detach() for h in state["hidden"])
        optimizer.zero_grad()
        output, state["hidden"] = model(data, hidden)
        loss = criterion(output.view(-1, LM["ntoken"]), targets)
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        optimizer.step()
        return loss.item() if device != "cpu" else loss
    step()
    return step


@pytest.fixture(scope="module")
def torch_lib():
    torch = pytest.importorskip("torch")
    pytest.importorskip("numpy")    # the weights travel to autograd through numpy
    return torch


def _torch_or_none():
    try:
        import numpy  # noqa: F401
        import torch
    except ImportError:
        return None
    return torch


@pytest.mark.benchmark(group=f"W10-char-gpt-adamw-step-{DEVICE}")
def test_w10_gpt_step_autograd(benchmark):
    _, model = _models("train_gpt", "GPT", GPT, _torch_or_none())
    benchmark(_gpt_step(autograd, model, DEVICE))


@pytest.mark.benchmark(group=f"W10-char-gpt-adamw-step-{DEVICE}")
def test_w10_gpt_step_torch(benchmark, torch_lib):
    torch_model, _ = _models("train_gpt", "GPT", GPT, torch_lib)
    benchmark(_gpt_step(torch_lib, torch_model, _torch_device(torch_lib)))


@pytest.mark.benchmark(group=f"W11-lstm-lm-sgd-step-{DEVICE}")
def test_w11_lstm_lm_step_autograd(benchmark):
    _, model = _models("word_lm", "RNNModel", LM, _torch_or_none())
    benchmark(_lm_step(autograd, model, DEVICE))


@pytest.mark.benchmark(group=f"W11-lstm-lm-sgd-step-{DEVICE}")
def test_w11_lstm_lm_step_torch(benchmark, torch_lib):
    torch_model, _ = _models("word_lm", "RNNModel", LM, torch_lib)
    benchmark(_lm_step(torch_lib, torch_model, _torch_device(torch_lib)))


def test_same_first_step_loss(torch_lib):
    """Both libraries start from the same weights and batch, so their first losses agree."""
    for name, cls, kwargs, make in (("train_gpt", "GPT", GPT, _gpt_step),
                                    ("word_lm", "RNNModel", LM, _lm_step)):
        torch_model, model = _models(name, cls, kwargs, torch_lib)
        ours, theirs = (make(autograd, model, DEVICE)(),
                        make(torch_lib, torch_model, _torch_device(torch_lib))())
        ours, theirs = (v if isinstance(v, float) else v.item() for v in (ours, theirs))
        assert abs(ours - theirs) < 1e-3 * abs(theirs), (name, ours, theirs)

"""Issue 14 item 1: a training step reads nothing back from the gpu but what the user asks for
(loss.item()): a small CNN with BatchNorm (SGD with momentum, Adam), and examples/train_gpt.py's
GPT at tiny sizes (AdamW, clip_grad_norm_). And the ops that got there: embedding, index_select,
gather and indexing with index tensors on the device, against PyTorch on every device; their
index checks run on the device and raise IndexError at the next read (see
autograd.nn.functional.embedding). (The MLP step is in test_profiler.py.)"""

import importlib.util
import pathlib

import numpy as np
import pytest

import autograd
from autograd import nn
from autograd.nn import functional as F
from autograd.profiler import profile

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _gpt_module():
    spec = importlib.util.spec_from_file_location("train_gpt", ROOT / "examples" / "train_gpt.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _blocking_reads(step):
    """Run step once to build its kernels, then once under the profiler: the number of
    blocking reads (the host waiting for a value) and the names of every host wait row."""
    step()
    with profile() as prof:
        step()
    rows = {r.key: r for r in prof.key_averages()}
    reads = rows.get("clEnqueueReadBuffer (blocking)")
    return (reads.count if reads is not None else 0), [k for k in rows if k == "clFinish"]


def _cnn_step(device, make_opt):
    autograd.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10)).to(device)
    model.train()
    opt = make_opt(model.parameters())
    x = autograd.randn(4, 3, 8, 8, device=device)
    y = autograd.randint(0, 10, (4,), device=device)

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        loss.item()
    return step


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_cnn_batchnorm_step_makes_one_blocking_read(device, optimizer):
    make = {"sgd": lambda p: autograd.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=1e-4),
            "adam": lambda p: autograd.optim.Adam(p, lr=1e-3)}[optimizer]
    reads, waits = _blocking_reads(_cnn_step(device, make))
    assert reads == (1 if device == "gpu" else 0) and not waits


def test_gpt_step_makes_one_blocking_read(device):
    """examples/train_gpt.py's loop body (batch, forward, backward, clip_grad_norm_, AdamW,
    LambdaLR, loss.item()): the one read is the item()."""
    tg = _gpt_module()
    autograd.manual_seed(0)
    model = tg.GPT(40, 16, 2, 2, 32).to(device)
    opt = model.configure_optimizer(0.1, 1e-3)
    sched = autograd.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0)
    data = autograd.randint(0, 40, (500,))
    gen = autograd.Generator().manual_seed(0)

    def step():
        x, y = tg.get_batch(data, 16, 4, device, gen)
        _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        loss.item()
    reads, waits = _blocking_reads(step)
    assert reads == (1 if device == "gpu" else 0) and not waits


# ---------------------------------------------------------------------------------------------
# the ops, against PyTorch
# ---------------------------------------------------------------------------------------------

def _pair(torch, array, device, requires_grad=False):
    t = torch.tensor(array, requires_grad=requires_grad)
    a = autograd.tensor(array, device=device, requires_grad=requires_grad)
    return t, a


def _close(mine, theirs, tol=1e-5):
    np.testing.assert_allclose(mine.detach().cpu().numpy(), theirs.detach().numpy(), rtol=tol,
                               atol=tol)


@pytest.mark.parametrize("index_dtype", ["int64", "int32"])
@pytest.mark.parametrize("options", [{}, {"padding_idx": 2}, {"scale_grad_by_freq": True},
                                     {"padding_idx": -1, "scale_grad_by_freq": True}])
def test_embedding_matches_torch(device, index_dtype, options):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    w = rng.standard_normal((11, 6)).astype(np.float32)
    idx = rng.integers(0, 11, (5, 7)).astype(index_dtype)
    idx[0, :3] = 2                                          # repeats (and the padding row)
    tw, aw = _pair(torch, w, device, requires_grad=True)
    ti = torch.tensor(idx)
    ai = autograd.tensor(idx, device=device)
    g = rng.standard_normal((5, 4, 6)).astype(np.float32)
    tout = torch.nn.functional.embedding(ti[:, ::2], tw, **options)     # non-contiguous ids
    aout = F.embedding(ai[:, ::2], aw, **options)
    _close(aout, tout)
    tout.backward(torch.tensor(g))
    aout.backward(autograd.tensor(g, device=device))
    _close(aw.grad, tw.grad)
    m = nn.Embedding(11, 6).to(device)
    assert list(m.state_dict()) == ["weight"]
    assert m(ai[:0]).shape == (0, 7, 6)


def test_embedding_float64_gradcheck(device):
    w = autograd.randn(6, 3, dtype=autograd.float64, device=device, requires_grad=True)
    idx = autograd.tensor([[0, 2, 2], [5, 1, 0]], device=device)
    assert autograd.gradcheck(lambda w: F.embedding(idx, w), (w,))


def test_embedding_out_of_range_raises_at_the_next_read(device):
    m = nn.Embedding(5, 3).to(device)
    ok = autograd.tensor([[0, 4]], device=device)
    for bad in ([[1, 5]], [[-1, 0]]):
        with pytest.raises(IndexError, match="index out of range in self"):
            out = m(autograd.tensor(bad, device=device))     # raises here on the cpu
            out.sum().backward()
            out.sum().item()                                # on the gpu: here
        assert m(ok).sum().item() == pytest.approx(float(m.weight[[0, 4]].sum().item()))


@pytest.mark.parametrize("index_dtype", ["int64", "int32"])
def test_index_select_gather_and_indexing_match_torch(device, index_dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 5, 4)).astype(np.float32)
    tx, ax = _pair(torch, x, device, requires_grad=True)
    sel = rng.integers(0, 5, (9,)).astype(index_dtype)
    gat = rng.integers(0, 6, (3, 5, 4)).astype(np.int64)
    neg = np.array([-1, 0, -6, 3]).astype(index_dtype)
    tys = [torch.index_select(tx, 1, torch.tensor(sel)),
           torch.gather(tx, 0, torch.tensor(gat)),
           tx[torch.tensor(neg)][:, :, ::2]]
    ays = [autograd.index_select(ax, 1, autograd.tensor(sel, device=device)),
           autograd.gather(ax, 0, autograd.tensor(gat, device=device)),
           ax[autograd.tensor(neg, device=device)][:, :, ::2]]
    tl = sum((y * (i + 1)).sum() for i, y in enumerate(tys))
    al = sum((y * (i + 1)).sum() for i, y in enumerate(ays))
    for ay, ty in zip(ays, tys):
        _close(ay, ty)
    tl.backward()
    al.backward()
    _close(ax.grad, tx.grad)


def test_indexing_float64_gradcheck(device):
    x = autograd.randn(5, 4, dtype=autograd.float64, device=device, requires_grad=True)
    idx = autograd.tensor([4, -1, 0, 0], device=device)
    assert autograd.gradcheck(lambda x: x[idx] * 2 + autograd.index_select(x, 1, idx[2:]).sum(),
                              (x,))


@pytest.mark.parametrize("args", [(7,), (2, 11, 3), (-4, 4)])
@pytest.mark.parametrize("dtype", [None, "int32", "float32"])
def test_arange_on_the_device_matches_torch(device, args, dtype):
    torch = pytest.importorskip("torch")
    want = torch.arange(*args, dtype=getattr(torch, dtype) if dtype else None)
    got = autograd.arange(*args, dtype=getattr(autograd, dtype) if dtype else None,
                          device=device)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())

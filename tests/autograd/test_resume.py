"""Resuming from a checkpoint continues bitwise like the uninterrupted run: optimizer
state_dicts survive a file round trip exactly (moments, step counts as tensors like torch's),
and a run checkpointed mid-epoch and continued in a fresh process ends with the parameters,
optimizer state and random state of the run that was never stopped (cpu and gpu)."""

import os
import subprocess
import sys

import numpy as np
import pytest
from test_checkpoint import same

import autograd
import carray
from autograd import optim

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

OPTIMIZERS = {
    "SGD": lambda p: optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
    "Adam": lambda p: optim.Adam(p, lr=0.01, amsgrad=True),
    "AdamW": lambda p: optim.AdamW(p, lr=0.01),
    "RMSprop": lambda p: optim.RMSprop(p, lr=0.01, momentum=0.5, centered=True),
    "Adagrad": lambda p: optim.Adagrad(p, lr=0.1),
    "Adamax": lambda p: optim.Adamax(p, lr=0.01),
    "NAdam": lambda p: optim.NAdam(p, lr=0.01),
    "RAdam": lambda p: optim.RAdam(p, lr=0.01),
}


def make(device, seed=0):
    autograd.manual_seed(seed)
    return autograd.nn.Sequential(autograd.nn.Linear(4, 5), autograd.nn.Tanh(),
                                  autograd.nn.Linear(5, 2)).to(device)


def train(model, opt, steps, device):
    for i in range(steps):
        autograd.manual_seed(100 + i)
        x = autograd.randn(6, 4, device=device)
        opt.zero_grad()
        (model(x) ** 2).mean().backward()
        opt.step()


def bits(model):
    return [np.asarray(p.detach().cpu().array).tobytes() for p in model.parameters()]


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_state_survives_a_file_and_continues_bitwise(tmp_path, device, name):
    model = make(device)
    opt = OPTIMIZERS[name](model.parameters())
    train(model, opt, 3, device)
    autograd.save({"model": model.state_dict(), "opt": opt.state_dict()},
                  tmp_path / "ck.safetensors")

    ck = autograd.load(tmp_path / "ck.safetensors", map_location=device)
    fresh = make(device, seed=5)
    fresh.load_state_dict(ck["model"])
    fresh_opt = OPTIMIZERS[name](fresh.parameters())
    fresh_opt.load_state_dict(ck["opt"])
    same(fresh_opt.state_dict(), opt.state_dict(), devices=False)

    train(model, opt, 2, device)
    train(fresh, fresh_opt, 2, device)
    assert bits(fresh) == bits(model)
    same(fresh_opt.state_dict(), opt.state_dict(), devices=False)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "NAdam"])
def test_state_dict_has_torchs_keys_and_step_tensors(name):
    torch = pytest.importorskip("torch")
    model = make("cpu")
    opt = OPTIMIZERS[name](model.parameters())
    train(model, opt, 1, "cpu")
    ref = torch.nn.Linear(4, 5)
    ref_opt = getattr(torch.optim, name)(ref.parameters(), **{
        k: v for k, v in opt.defaults.items() if k in ("lr", "momentum", "nesterov", "amsgrad",
                                                         "centered", "weight_decay")})
    ref(torch.randn(6, 4)).pow(2).mean().backward()
    ref_opt.step()
    ours, theirs = opt.state_dict(), ref_opt.state_dict()
    assert sorted(ours["state"][0]) == sorted(theirs["state"][0])
    for key, value in theirs["state"][0].items():
        if key == "step":
            mine = ours["state"][0]["step"]
            assert isinstance(mine, autograd.Tensor) and mine.shape == tuple(value.shape)
            assert mine.dtype.name == str(value.dtype).removeprefix("torch.")
            assert mine.item() == value.item() == 1
    assert set(ours["param_groups"][0]) >= set(theirs["param_groups"][0]) - {"params"}


def run(*args):
    """Run _resume_run.py in a fresh interpreter (the repository first on sys.path)."""
    # the folder that holds the carray and autograd this test imported: the checkout with an
    # in-place build, else the installed packages (CI: the checkout has carray's sources only)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(carray.__file__))
               + os.pathsep + os.environ.get("PYTHONPATH", ""))
    res = subprocess.run([sys.executable, os.path.join(HERE, "_resume_run.py"), *map(str, args)],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr


def test_a_run_resumed_mid_epoch_in_a_fresh_process_ends_bitwise_equal(tmp_path, device):
    # 12 batches of 8 over 40 samples: the checkpoint after batch 7 falls inside epoch 2
    whole, resumed, ck = (tmp_path / n for n in ("whole", "resumed", "ck"))
    run(device, 12, whole, "--save-at", 7, ck)
    run(device, 12, resumed, "--resume", ck)
    a, b = autograd.load(whole), autograd.load(resumed)
    same(b, a)
    assert whole.read_bytes() == resumed.read_bytes()
    saved = autograd.load(ck)
    assert (saved["epoch"], saved["batch"]) == (1, 2)      # mid-epoch, as intended

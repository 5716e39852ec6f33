"""The language-model jobs, examples/train_gpt.py and examples/word_lm.py: their --quick runs,
started as scripts in a subprocess, must finish, print their final lines, and lower the
validation loss (a broken gradient anywhere in attention, LayerNorm, GELU, the LSTM, AdamW, the
schedulers or clip_grad_norm_ fails these)."""

import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import pytest

import carray

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _run(script, *args):
    # the folder that holds the carray this test imported (the checkout with an in-place build,
    # else the installed package: CI's checkout has carray's sources only)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(os.path.dirname(carray.__file__))]
        + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    done = subprocess.run([sys.executable, str(ROOT / "examples" / script), *args], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{script} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _load(script):
    spec = importlib.util.spec_from_file_location(script[:-3], ROOT / "examples" / script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_train_gpt_quick_learns():
    out = _run("train_gpt.py", "--quick", "--seed", "1")
    vals = [float(v) for v in re.findall(r"\bval (\d+\.\d+)", out)]
    assert len(vals) == 3, out
    # chance is ln(65) = 4.17; the quick run gets well under it and keeps improving
    assert vals[-1] < vals[0] - 0.1 and vals[-1] < 3.0, out
    final = re.search(r"^val loss: (\d+\.\d+)$", out, re.M)
    assert final and float(final.group(1)) == vals[-1], out
    sample = out.split("--- sample ---\n", 1)[1]
    assert len(sample.strip()) > 50 and set(sample) <= set(_load("train_gpt.py").load_text(
        "tinyshakespeare")), out


def test_word_lm_quick_learns():
    out = _run("word_lm.py", "--quick", "--seed", "1")
    vals = [float(v) for v in re.findall(r"valid loss (\d+\.\d+)", out)]
    assert len(vals) == 3, out
    assert vals[-1] < vals[0] - 0.2, out
    ppl = re.search(r"^test ppl: (\d+\.\d+)$", out, re.M)
    # the quick vocabulary has 1,000 words: a model that learned nothing sits near 1000
    assert ppl and float(ppl.group(1)) < 200, out


@pytest.mark.parametrize("script, argv", [
    ("train_gpt.py", ["--steps", "0"]),
    ("train_gpt.py", ["--n-embd", "30", "--n-head", "4"]),
    ("train_gpt.py", ["--device", "tpu"]),
    ("word_lm.py", ["--bptt", "0"]),
    ("word_lm.py", ["--tied", "--emsize", "128", "--nhid", "256"]),
])
def test_bad_arguments_exit(script, argv):
    with pytest.raises(SystemExit):
        _load(script).parse_args(argv)


def test_gpt_rejects_too_long_input():
    gpt = _load("train_gpt.py")
    model = gpt.GPT(vocab_size=10, block_size=4, n_layer=1, n_head=1, n_embd=8)
    with pytest.raises(ValueError, match="GPT.forward.*length 5.*block size 4"):
        model(gpt.torch.zeros(1, 5, dtype=gpt.torch.long))


def test_tied_weights_are_one_parameter():
    gpt = _load("train_gpt.py")
    tied = gpt.GPT(vocab_size=10, block_size=4, n_layer=1, n_head=1, n_embd=8)
    untied = gpt.GPT(vocab_size=10, block_size=4, n_layer=1, n_head=1, n_embd=8, tie=False)
    assert tied.lm_head.weight is tied.transformer.wte.weight
    n = sum(p.numel() for p in untied.parameters()) - sum(p.numel() for p in tied.parameters())
    assert n == 10 * 8
    lm = _load("word_lm.py")
    model = lm.RNNModel(10, 8, 8, 2, tie=True)
    assert model.decoder.weight is model.encoder.weight

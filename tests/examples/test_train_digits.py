"""The main job, examples/train_digits.py: short runs must learn the digits (a broken gradient
anywhere in the stack fails these), print the final line, and survive the save/reload check."""

import importlib.util
import pathlib

import pytest

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "train_digits.py"


@pytest.fixture(scope="module")
def train_digits():
    spec = importlib.util.spec_from_file_location("train_digits", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("model, epochs, least", [("mlp", 5, 0.93), ("cnn", 3, 0.90)])
def test_short_training_run_learns(train_digits, capsys, tmp_path, model, epochs, least):
    args = train_digits.parse_args(["--model", model, "--epochs", str(epochs), "--seed", "1",
                                    "--save", str(tmp_path / "m.safetensors")])
    accuracy = train_digits.train(args)
    out = capsys.readouterr().out
    assert accuracy >= least, f"{model}: test accuracy {accuracy:.3f} after {epochs} epochs"
    assert f"test accuracy: {100 * accuracy:.1f}%" in out
    assert "reloaded: same accuracy" in out
    assert (tmp_path / "m.safetensors").stat().st_size > 0


def test_plot_without_matplotlib_says_so(train_digits, capsys, monkeypatch, tmp_path):
    import builtins
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    train_digits.plot({"loss": [1.0], "train_acc": [0.5], "test_acc": [0.5]},
                      str(tmp_path / "c.png"))
    assert "matplotlib is not installed" in capsys.readouterr().err
    assert not (tmp_path / "c.png").exists()


def test_bad_arguments_exit(train_digits):
    with pytest.raises(SystemExit):
        train_digits.parse_args(["--epochs", "0"])
    with pytest.raises(SystemExit):
        train_digits.parse_args(["--model", "rnn"])


# -- checkpoints (h10): --checkpoint / --resume continue the run bitwise ---------------------

def test_resume_equals_the_uninterrupted_run(train_digits, capsys, tmp_path):
    common = ["--model", "mlp", "--seed", "3"]
    whole = tmp_path / "whole.safetensors"
    train_digits.train(train_digits.parse_args([*common, "--epochs", "2", "--save", str(whole)]))
    ck = tmp_path / "ck.safetensors"
    train_digits.train(train_digits.parse_args([*common, "--epochs", "1", "--checkpoint", str(ck),
                                                "--save", str(tmp_path / "half.safetensors")]))
    resumed = tmp_path / "resumed.safetensors"
    train_digits.train(train_digits.parse_args([*common, "--epochs", "2", "--resume", str(ck),
                                                "--save", str(resumed)]))
    assert "resumed from" in capsys.readouterr().out
    assert resumed.read_bytes() == whole.read_bytes()
    # the half-way model differs, so the comparison above is not trivially true
    assert (tmp_path / "half.safetensors").read_bytes() != whole.read_bytes()


def test_resume_refuses_a_checkpoint_of_another_model(train_digits, tmp_path):
    ck = tmp_path / "ck.safetensors"
    train_digits.train(train_digits.parse_args(["--model", "mlp", "--epochs", "1",
                                                "--checkpoint", str(ck),
                                                "--save", str(tmp_path / "m.safetensors")]))
    with pytest.raises(SystemExit, match="mlp model, not of --model cnn"):
        train_digits.train(train_digits.parse_args(["--model", "cnn", "--epochs", "2",
                                                    "--resume", str(ck)]))


# -- mixed precision (issue 13 item 6): --amp trains under autocast + GradScaler -------------

@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_mixed_precision_cnn_reaches_the_float32_accuracy(train_digits, monkeypatch, tmp_path,
                                                          device):
    import autograd
    if device == "gpu" and not autograd.cuda.is_available():
        pytest.skip("no OpenCL device")
    seen = []
    make = train_digits.make_model

    def recording(kind):     # the dtypes the first convolution computes in
        model = make(kind)
        model[0].register_forward_hook(lambda m, i, o: seen.append(o.dtype))
        return model

    monkeypatch.setattr(train_digits, "make_model", recording)
    accuracy = {}
    for amp in (False, True):
        flags = ["--model", "cnn", "--epochs", "3", "--seed", "1", "--device", device,
                 "--save", str(tmp_path / f"m{amp}.safetensors")] + (["--amp"] if amp else [])
        seen.clear()
        accuracy[amp] = train_digits.train(train_digits.parse_args(flags))
        lower = autograd.float16 if device == "gpu" else autograd.bfloat16
        assert (lower in seen) == amp     # training steps ran in the lower precision
    assert accuracy[True] >= 0.90
    assert abs(accuracy[True] - accuracy[False]) <= 0.02, accuracy

"""The ResNet-ish convolutions on the OpenCL device: carray's implicit-GEMM kernels
(carray/opencl/_conv.py), its im2col + GEMM path (CARRAY_OPENCL_CONV=im2col, set per test) and
PyTorch CUDA (cuDNN, TF32 off) when present. float32, 3x3 kernels, padding 1:

- s1: x 128x64x32x32, w 64x64x3x3, stride 1;
- s2: x 128x64x32x32, w 128x64x3x3, stride 2 (the first conv of a downsampling stage);

each as forward (with bias), grad_input and grad_weight; TFLOP/s = 2 N O Ho Wo C kh kw / median
time. CARRAY_BENCH_SMALL=1 takes batch 8 (for a CPU OpenCL device, PoCL). Every timed call ends
by waiting for the queue / stream. A table with ratios is printed at the end."""

import os

import pytest

import carray
from carray import nn

try:
    carray.opencl.runtime()
except Exception as e:         # no pyopencl or no device
    pytest.skip(f"no OpenCL device ({e})", allow_module_level=True)

BATCH = 8 if os.environ.get("CARRAY_BENCH_SMALL") == "1" else 128
SHAPES = {"s1": (64, 1), "s2": (128, 2)}      # name -> (output channels, stride)
OPS = ("forward", "grad_input", "grad_weight")
LIBS = ("implicit", "im2col", "torch")
_RESULTS = {}      # (shape, op, lib) -> median seconds


def _flop(shape):
    O, s = SHAPES[shape]
    Ho = 32 // s
    return 2 * BATCH * O * Ho * Ho * 64 * 9


@pytest.fixture(scope="module", autouse=True)
def _report(show_lines):
    yield
    if not _RESULTS:
        return
    lines = ["", f"conv2d on {carray.opencl.name!r}, batch {BATCH} (median, TFLOP/s)"]
    for shape in SHAPES:
        for op in OPS:
            row = {lib: t for (s, o, lib), t in _RESULTS.items() if (s, o) == (shape, op)}
            if not row:
                continue
            text = "  ".join(f"{lib} {row[lib] * 1e3:8.3f} ms {_flop(shape) / row[lib] / 1e12:6.2f}"
                             for lib in LIBS if lib in row)
            for other in ("im2col", "torch"):
                if "implicit" in row and other in row:
                    text += f"   {other}/implicit {row[other] / row['implicit']:.2f}"
            lines.append(f"{shape} {op:12s} {text}")
    show_lines(lines)


def _inputs(shape, lib, torch=None):
    O, s = SHAPES[shape]
    g = carray.random.Generator(0)
    x = g.normal(size=(BATCH, 64, 32, 32), dtype="float32")
    w = g.normal(scale=0.05, size=(O, 64, 3, 3), dtype="float32")
    b = g.normal(size=(O,), dtype="float32")
    go = g.normal(size=(BATCH, O, 32 // s, 32 // s), dtype="float32")
    if lib == "torch":
        import numpy as np
        return [torch.from_numpy(np.asarray(a)).to("cuda") for a in (x, w, b, go)]
    return [a.to("gpu") for a in (x, w, b, go)]


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("shape", list(SHAPES))
def test_conv(benchmark, monkeypatch, request, shape, op, lib):
    benchmark.group = f"conv {shape} {op}"
    O, s = SHAPES[shape]
    if lib == "torch":
        torch = request.getfixturevalue("torch")
        if not torch.cuda.is_available():
            pytest.skip("PyTorch has no CUDA device here")
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        x, w, b, go = _inputs(shape, lib, torch)
        F = torch.nn.functional
        fn = {"forward": lambda: F.conv2d(x, w, b, stride=s, padding=1),
              "grad_input": lambda: torch.nn.grad.conv2d_input(x.shape, w, go, stride=s,
                                                               padding=1),
              "grad_weight": lambda: torch.nn.grad.conv2d_weight(x, w.shape, go, stride=s,
                                                                 padding=1)}[op]
        finish = torch.cuda.synchronize
    else:
        monkeypatch.setenv("CARRAY_OPENCL_CONV", lib)
        x, w, b, go = _inputs(shape, lib)
        fn = {"forward": lambda: nn.conv2d(x, w, b, stride=s, padding=1),
              "grad_input": lambda: nn.conv2d_grad_input(go, w, x.shape, stride=s, padding=1),
              "grad_weight": lambda: nn.conv2d_grad_weight(x, go, w.shape, stride=s,
                                                           padding=1)}[op]
        finish = carray.opencl.queue.finish

    def run():
        out = fn()
        finish()
        return out
    benchmark(run)
    median = benchmark.stats.stats.median
    _RESULTS[(shape, op, lib)] = median
    benchmark.extra_info["TFLOP/s"] = round(_flop(shape) / median / 1e12, 3)

"""W9 and W8's layers: carray.nn's convolution and pooling primitives beside PyTorch.

- W9 (group conv2d-W9): conv2d forward, input 64x16x32x32 float32, 32 filters 3x3, padding 1;
  GFLOP/s = 2 * N * O * Ho * Wo * C * kH * kW / median time. Target (BENCHMARKS.md): carray
  >= 0.7x PyTorch.
- W8's layers, batch 64 (for information): 1x28x28 -> conv 8 3x3 -> max pool 2 -> conv 16 3x3
  -> max pool 2, forward (group conv-W8-forward) and forward + backward (group
  conv-W8-forward-backward: the gradients of both weights and biases and of the first pooling
  output, as training needs; no gradient for the input image). PyTorch runs the same ops through
  its autograd (no ReLU here: the primitives only).

A table of GFLOP/s (W9) and of times with ratios is printed at the end of the module.
"""

import pytest

import carray as ca
from carray import nn

W9 = dict(N=64, C=16, H=32, W=32, O=32, k=3, padding=1)
W9_FLOP = 2 * 64 * 32 * 32 * 32 * 16 * 3 * 3
_RESULTS = {}           # (group, library) -> median seconds


@pytest.fixture(scope="module", autouse=True)
def _report(show_lines):
    yield
    if not _RESULTS:
        return
    lines = ["", "carray.nn vs PyTorch (median; ratio = PyTorch time / carray time, > 1: carray "
             "faster)"]
    for group in sorted({g for g, _ in _RESULTS}):
        row = {lib: t for (g, lib), t in _RESULTS.items() if g == group}
        text = "  ".join(f"{lib} {t * 1e3:8.3f} ms" for lib, t in sorted(row.items()))
        if group == "conv2d-W9":
            text += "   " + "  ".join(f"{lib} {W9_FLOP / t / 1e9:6.1f} GFLOP/s"
                                      for lib, t in sorted(row.items()))
        if "carray" in row and "torch" in row:
            text += f"   torch/carray {row['torch'] / row['carray']:.2f}"
        lines.append(f"{group:26s} {text}")
    show_lines(lines)


def _record(benchmark, group, lib):
    median = benchmark.stats.stats.median
    _RESULTS[(group, lib)] = median
    if group == "conv2d-W9":
        benchmark.extra_info["gflops"] = round(W9_FLOP / median / 1e9, 1)


def _w9_inputs(np):
    rng = np.random.default_rng(9)
    x = rng.standard_normal((W9["N"], W9["C"], W9["H"], W9["W"]), dtype=np.float32)
    w = rng.standard_normal((W9["O"], W9["C"], W9["k"], W9["k"]), dtype=np.float32) * 0.1
    b = rng.standard_normal(W9["O"], dtype=np.float32)
    return x, w, b


# ---------------------------------------------------------------------------------------------
# W9: conv2d forward
# ---------------------------------------------------------------------------------------------

def test_conv2d_w9_carray(benchmark, np):
    benchmark.group = "conv2d-W9"
    x, w, b = _w9_inputs(np)
    cx, cw, cb = ca.asarray(x), ca.asarray(w), ca.asarray(b)
    out = benchmark(nn.conv2d, cx, cw, cb, 1, W9["padding"])
    _record(benchmark, "conv2d-W9", "carray")
    # the result, against a float64 NumPy reference (a sum over the 9 taps)
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    ref = np.zeros(out.shape) + b[None, :, None, None]
    for u in range(3):
        for v in range(3):
            ref += np.einsum("nchw,oc->nohw", xp[:, :, u:u + 32, v:v + 32], w[:, :, u, v])
    assert np.abs(np.asarray(out) - ref).max() <= 1e-4 * np.abs(ref).max()


def test_conv2d_w9_torch(benchmark, np, torch):
    benchmark.group = "conv2d-W9"
    x, w, b = (torch.from_numpy(v) for v in _w9_inputs(np))
    with torch.no_grad():
        benchmark(torch.nn.functional.conv2d, x, w, b, 1, W9["padding"])
    _record(benchmark, "conv2d-W9", "torch")


# ---------------------------------------------------------------------------------------------
# W8's layers
# ---------------------------------------------------------------------------------------------

def _w8_inputs(np):
    rng = np.random.default_rng(8)
    x = rng.random((64, 1, 28, 28), dtype=np.float32)
    w1 = rng.standard_normal((8, 1, 3, 3), dtype=np.float32) * 0.3
    b1 = rng.standard_normal(8, dtype=np.float32) * 0.1
    w2 = rng.standard_normal((16, 8, 3, 3), dtype=np.float32) * 0.1
    b2 = rng.standard_normal(16, dtype=np.float32) * 0.1
    return x, w1, b1, w2, b2


def _carray_forward(x, w1, b1, w2, b2):
    c1 = nn.conv2d(x, w1, b1)
    p1, i1 = nn.max_pool2d(c1, 2, return_indices=True)
    c2 = nn.conv2d(p1, w2, b2)
    p2, i2 = nn.max_pool2d(c2, 2, return_indices=True)
    return c1, p1, i1, c2, p2, i2


def _carray_forward_backward(x, w1, b1, w2, b2):
    c1, p1, i1, c2, p2, i2 = _carray_forward(x, w1, b1, w2, b2)
    g_p2 = ca.ones(p2.shape, dtype="float32")                  # d sum(p2) / d p2
    g_c2 = nn.max_pool2d_grad(g_p2, i2, c2.shape)
    g_w2, g_b2 = nn.conv2d_grad_weight(p1, g_c2, w2.shape), nn.conv2d_grad_bias(g_c2)
    g_p1 = nn.conv2d_grad_input(g_c2, w2, p1.shape)
    g_c1 = nn.max_pool2d_grad(g_p1, i1, c1.shape)
    g_w1, g_b1 = nn.conv2d_grad_weight(x, g_c1, w1.shape), nn.conv2d_grad_bias(g_c1)
    return g_w1, g_b1, g_w2, g_b2


def _torch_forward(F, x, w1, b1, w2, b2):
    return F.max_pool2d(F.conv2d(F.max_pool2d(F.conv2d(x, w1, b1), 2), w2, b2), 2)


def test_w8_forward_carray(benchmark, np):
    benchmark.group = "conv-W8-forward"
    args = [ca.asarray(v) for v in _w8_inputs(np)]
    benchmark(_carray_forward, *args)
    _record(benchmark, "conv-W8-forward", "carray")


def test_w8_forward_torch(benchmark, np, torch):
    benchmark.group = "conv-W8-forward"
    args = [torch.from_numpy(v) for v in _w8_inputs(np)]
    with torch.no_grad():
        benchmark(_torch_forward, torch.nn.functional, *args)
    _record(benchmark, "conv-W8-forward", "torch")


def test_w8_forward_backward_carray(benchmark, np):
    benchmark.group = "conv-W8-forward-backward"
    args = [ca.asarray(v) for v in _w8_inputs(np)]
    grads = benchmark(_carray_forward_backward, *args)
    _record(benchmark, "conv-W8-forward-backward", "carray")
    try:                                    # the gradients, against PyTorch's in float64
        import torch
    except ImportError:
        return
    targs = [torch.from_numpy(v).double().requires_grad_(i > 0)
             for i, v in enumerate(_w8_inputs(np))]
    _torch_forward(torch.nn.functional, *targs).sum().backward()
    for ours, t in zip(grads, targs[1:]):
        ref = t.grad.numpy()
        assert np.abs(np.asarray(ours) - ref).max() <= 1e-3 * (np.abs(ref).max() + 1)


def test_w8_forward_backward_torch(benchmark, np, torch):
    benchmark.group = "conv-W8-forward-backward"
    x, *params = [torch.from_numpy(v) for v in _w8_inputs(np)]
    params = [p.requires_grad_() for p in params]

    def step():
        for p in params:
            p.grad = None
        _torch_forward(torch.nn.functional, x, *params).sum().backward()

    benchmark(step)
    _record(benchmark, "conv-W8-forward-backward", "torch")

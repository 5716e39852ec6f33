"""Time the row-wise kernels of issue 14 item 3 on the OpenCL device, beside PyTorch CUDA when
torch sees a GPU: `python bench/bench_row_kernels.py [--quick] [--cpu]`.

Kernels (float32): the fused softmax cross-entropy forward (mean over rows) and its gradient,
softmax and log_softmax over the last axis and their gradients, layer norm over the last axis
(forward, and the input / weight / bias gradients), sum over the last axis and over axis 0, max
over the last axis, erf and exact GELU (forward and gradient), causal attention
(carray.nn.attention, the memory-efficient kernels, forward and backward, beside PyTorch's
scaled_dot_product_attention).
Shapes follow the GPT step of issue 14: logits 4096 x 8192 (batch 32 x seq 128, vocab 8192),
activations 4096 x 512 and 4096 x 2048 (the MLP's hidden layer), attention batch 32 x 8 heads x
128 x 64.

Each row is the best of several timed runs of a few repetitions between queue.finish() calls
(torch.cuda.synchronize() for PyTorch), after a warm-up that compiles the kernels. --cpu times
carray on the CPU against PyTorch's CPU instead, one thread each (figures on a shared machine).
"""

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import carray as ca  # noqa: E402
from carray import nn  # noqa: E402

QUICK = "--quick" in sys.argv
ON_CPU = "--cpu" in sys.argv
DEV = "cpu" if ON_CPU else "gpu"
M, V, D, H = (512, 1024, 256, 1024) if QUICK else (4096, 8192, 512, 2048)
REPS, RUNS = (3, 7) if QUICK else (10, 7)

try:
    import torch
    TDEV = "cpu" if ON_CPU else ("cuda" if torch.cuda.is_available() else None)
except ImportError:
    torch, TDEV = None, None


def _sync_ca():
    if DEV == "gpu":
        from carray.opencl import finish
        finish()


def _sync_torch():
    if TDEV == "cuda":
        torch.cuda.synchronize()


def timed(fn, sync):
    """The best seconds per call of fn over RUNS runs of REPS calls each."""
    fn()
    sync()
    times = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        for _ in range(REPS):
            fn()
        sync()
        times.append((time.perf_counter() - t0) / REPS)
    return min(times)


def main():
    if ON_CPU:
        ca.set_num_threads(1)
        if torch is not None:
            torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((M, V)).astype(np.float32)
    target = rng.integers(0, V, M).astype(np.int64)
    act = rng.standard_normal((M, D)).astype(np.float32)
    hid = rng.standard_normal((M, H)).astype(np.float32)
    w = rng.standard_normal(D).astype(np.float32)
    b = rng.standard_normal(D).astype(np.float32)

    x, t = ca.asarray(logits).to(DEV), ca.asarray(target).to(DEV)
    a, wa, ba, h = (ca.asarray(v).to(DEV) for v in (act, w, b, hid))
    loss, probs, count = nn.softmax_cross_entropy(x, t)
    one = ca.asarray(np.float32(1.0)).to(DEV)
    sm = nn.softmax(x)
    lsm = nn.log_softmax(x)
    y, mean, rstd = nn.layer_norm(a, 1, wa, ba)
    B, NH, T = M // 128, D // 64, 128
    qkv = [rng.standard_normal((B, NH, T, 64)).astype(np.float32) for _ in range(3)]
    aq, ak, av = (ca.asarray(v).to(DEV) for v in qkv)
    ao, alse = nn.attention(aq, ak, av, is_causal=True)
    cases = {
        "cross_entropy fwd (M x V)": lambda: nn.softmax_cross_entropy(x, t),
        "cross_entropy bwd": lambda: nn.softmax_cross_entropy_grad(probs, t, one, count),
        "softmax fwd (M x V)": lambda: nn.softmax(x),
        "softmax bwd": lambda: nn.softmax_grad(sm, x),
        "log_softmax fwd (M x V)": lambda: nn.log_softmax(x),
        "log_softmax bwd": lambda: nn.log_softmax_grad(lsm, x),
        "layer_norm fwd (M x D)": lambda: nn.layer_norm(a, 1, wa, ba),
        "layer_norm bwd (dx, dw, db)": lambda: nn.layer_norm_grad(a, a, mean, rstd, wa),
        "sum axis=-1 (M x V)": lambda: ca.sum(x, axis=-1),
        "sum axis=0 (M x V)": lambda: ca.sum(x, axis=0),
        "max axis=-1 (M x V)": lambda: ca.max(x, axis=-1),
        "erf (M x H)": lambda: ca.erf(h),
        "gelu fwd (M x H)": lambda: nn.gelu(h),
        "gelu bwd (M x H)": lambda: nn.gelu_grad(h, h),
        "attention causal fwd": lambda: nn.attention(aq, ak, av, is_causal=True),
        "attention causal bwd": lambda: nn.attention_grad(aq, ak, av, ao, alse, ao,
                                                          is_causal=True),
    }
    tcases = {}
    if TDEV is not None:
        F = torch.nn.functional
        tx = torch.tensor(logits, device=TDEV, requires_grad=True)
        tt = torch.tensor(target, device=TDEV)
        ta, th = torch.tensor(act, device=TDEV), torch.tensor(hid, device=TDEV)
        tw, tb = torch.tensor(w, device=TDEV), torch.tensor(b, device=TDEV)
        tloss = F.cross_entropy(tx, tt)
        tsm = torch.softmax(tx.detach(), -1)
        tlsm = torch.log_softmax(tx.detach(), -1)
        tal = ta.clone().requires_grad_()
        tln = F.layer_norm(tal, (D,), tw.requires_grad_(), tb.requires_grad_())
        tg = th.clone().requires_grad_()
        tgelu = F.gelu(tg)
        tq, tk, tv = (torch.tensor(v, device=TDEV, requires_grad=True) for v in qkv)
        tatt = F.scaled_dot_product_attention(tq, tk, tv, is_causal=True)
        tcases = {
            "cross_entropy fwd (M x V)": lambda: F.cross_entropy(tx.detach(), tt),
            "cross_entropy bwd": lambda: torch.autograd.grad(tloss, tx, retain_graph=True),
            "softmax fwd (M x V)": lambda: torch.softmax(tx.detach(), -1),
            "softmax bwd": lambda: torch._softmax_backward_data(tx.detach(), tsm, -1,
                                                                torch.float32),
            "log_softmax fwd (M x V)": lambda: torch.log_softmax(tx.detach(), -1),
            "log_softmax bwd": lambda: torch._log_softmax_backward_data(tx.detach(), tlsm, -1,
                                                                        torch.float32),
            "layer_norm fwd (M x D)": lambda: F.layer_norm(ta, (D,), tw.detach(), tb.detach()),
            "layer_norm bwd (dx, dw, db)": lambda: torch.autograd.grad(
                tln, (tal, tw, tb), ta, retain_graph=True),
            "sum axis=-1 (M x V)": lambda: tx.detach().sum(-1),
            "sum axis=0 (M x V)": lambda: tx.detach().sum(0),
            "max axis=-1 (M x V)": lambda: tx.detach().amax(-1),
            "erf (M x H)": lambda: torch.erf(th),
            "gelu fwd (M x H)": lambda: F.gelu(th),
            "gelu bwd (M x H)": lambda: torch.autograd.grad(tgelu, tg, th, retain_graph=True),
            "attention causal fwd": lambda: F.scaled_dot_product_attention(
                tq.detach(), tk.detach(), tv.detach(), is_causal=True),
            "attention causal bwd": lambda: torch.autograd.grad(
                tatt, (tq, tk, tv), tatt.detach(), retain_graph=True),
        }
    name = "carray " + DEV
    if DEV == "gpu":
        from carray.opencl._runtime import runtime
        name += f" ({runtime().name})"
    tname = f"torch {TDEV}" + (f" ({torch.cuda.get_device_name()})" if TDEV == "cuda" else "")
    print(f"M={M} V={V} D={D} H={H}, float32; best of {RUNS} runs x {REPS} calls")
    print(f"{'kernel':32} {name[:40]:>40} {tname[:40]:>40} {'ratio':>7}")
    for key, fn in cases.items():
        ours = timed(fn, _sync_ca)
        theirs = timed(tcases[key], _sync_torch) if key in tcases else None
        ratio = f"{ours / theirs:7.2f}" if theirs else "      -"
        tcol = f"{theirs * 1e3:37.3f} ms" if theirs else f"{'-':>40}"
        print(f"{key:32} {ours * 1e3:37.3f} ms {tcol} {ratio}", flush=True)


if __name__ == "__main__":
    main()

"""W6 of bench/test_bench_autograd.py by phase: ((x * y + x).relu() * y).sum().backward() on
16-element tensors, timed with plain perf_counter loops (cProfile inflates small calls), beside
PyTorch when it is installed.

    PYTHONPATH=. python bench/profile_small_backward.py [--profile]    # from the repository root

Prints, per library, the best mean over repeated loops of the forward (building the graph), the
backward alone (on graphs built beforehand), and the whole iteration; --profile adds autograd's
top functions by own time under cProfile.
"""

import cProfile
import io
import pstats
import sys
import time

import autograd


def _best(loop, n, repeats=7):
    """The best mean time in us of loop(n) over `repeats` runs (loop returns seconds)."""
    return min(loop(n) for _ in range(repeats)) / n * 1e6


def phases(lib):
    """(forward, backward, whole) W6 times in us for the module `lib` (autograd or torch)."""
    x = lib.randn(16, requires_grad=True)
    y = lib.randn(16, requires_grad=True)

    def forward():
        return ((x * y + x).relu() * y).sum()

    def timed(fn):
        def loop(n):
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            return time.perf_counter() - t0
        return loop

    def backward_only(n):
        outs = [forward() for _ in range(n)]
        t0 = time.perf_counter()
        for out in outs:
            out.backward()
        return time.perf_counter() - t0

    forward().backward()
    return (_best(timed(forward), 2000), _best(backward_only, 2000),
            _best(timed(lambda: forward().backward()), 2000))


def main():
    libs = [("autograd", autograd)]
    try:
        import torch
        libs.append(("torch", torch))
    except ImportError:
        pass
    for name, lib in libs:
        f, b, w = phases(lib)
        print(f"{name:9s} forward {f:6.2f} us  backward {b:6.2f} us  whole {w:6.2f} us")
    if "--profile" in sys.argv:
        x = autograd.randn(16, requires_grad=True)
        y = autograd.randn(16, requires_grad=True)
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(5000):
            ((x * y + x).relu() * y).sum().backward()
        prof.disable()
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(30)
        print(buf.getvalue())


if __name__ == "__main__":
    main()

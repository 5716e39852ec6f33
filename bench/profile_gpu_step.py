"""Where a G4 step's time goes on the OpenCL device: every kernel launch and transfer of one
training step (W7's MLP, W8's CNN at batch 256), each followed by queue.finish() and timed, grouped
by kernel and call site; the step's wall time without the finishes and its launch count; and
where the host's time goes in the MLP's step (cProfile, by own time).

    PYTHONPATH=. python bench/profile_gpu_step.py [out.txt]
"""
import collections
import cProfile
import os
import pstats
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# every launch through _launch.enqueue (the C path, which most launches take, bypasses it), so
# that enq below sees them all; the host times then include pyopencl's per-launch event
os.environ["CARRAY_OPENCL_LAUNCH"] = "pyopencl"
import autograd  # noqa: E402
from carray.opencl import _launch, _runtime  # noqa: E402

from test_bench_training import _cnn, _mlp  # noqa: E402

BATCH = 256
stats = collections.defaultdict(lambda: [0, 0.0])
mode = {"time": False, "count": 0}
_orig = _launch.enqueue


def _site():
    fr = [f"{f.filename.split('/')[-1]}:{f.lineno}" for f in traceback.extract_stack(limit=10)[:-2]
          if "/opencl/" not in f.filename and "profile_gpu" not in f.filename]
    return " < ".join(reversed(fr[-3:]))


def enq(queue, knl, g, l):
    mode["count"] += 1
    if not mode["time"]:
        return _orig(queue, knl, g, l)
    queue.finish()
    t = time.perf_counter()
    _orig(queue, knl, g, l)
    queue.finish()
    s = stats[(knl.function_name, g, l, _site())]
    s[0] += 1
    s[1] += time.perf_counter() - t


_launch.enqueue = enq       # (submit calls it by this module's global name)


def run(name, model, out):
    autograd.manual_seed(0)
    x = autograd.randn(BATCH, 1, 28, 28).to("gpu")
    y = autograd.randint(0, 10, (BATCH,)).to("gpu")
    model = model.to("gpu")
    opt = autograd.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = autograd.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()
    for _ in range(3):
        step()
    mode["count"] = 0
    ts = []
    for _ in range(20):
        t = time.perf_counter()
        step()
        ts.append(time.perf_counter() - t)
    ts.sort()
    launches = mode["count"] // 20
    stats.clear()
    mode["time"] = True
    reps = 5
    for _ in range(reps):
        step()
    mode["time"] = False
    total = sum(v[1] for v in stats.values()) / reps
    print(f"== {name}: step median {ts[len(ts) // 2] * 1e3:.3f} ms, {launches} launches/step; "
          f"serialised kernels sum {total * 1e3:.3f} ms", file=out)
    for (k, g, l, site), (n, t) in sorted(stats.items(), key=lambda kv: -kv[1][1]):
        print(f"{t / reps * 1e6:9.1f} us  x{n // reps:<3} {k:<14} g={g} l={l}  {site}", file=out)
    if name == "mlp":
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(50):
            step()
        prof.disable()
        print(f"-- {name}: host time by function, 50 steps (cProfile)", file=out)
        pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(40)


def main():
    out = open(sys.argv[1], "w") if len(sys.argv) > 1 else sys.stdout
    print(_runtime.runtime(), file=out)
    run("mlp", _mlp(autograd.nn), out)
    run("cnn", _cnn(autograd.nn), out)


if __name__ == "__main__":
    main()

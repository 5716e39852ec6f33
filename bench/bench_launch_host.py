"""Host cost of small elementwise ops on device "gpu" (issue 14 item 6): microseconds per op
for c = a + b, a * 2.0, exp(a) and a += b on 16 float32 elements, queued back to back.

    PYTHONPATH=. python bench/bench_launch_host.py [--ops N] [--stub]

Without --stub the ops run (the driver's enqueue included); with --stub clSetKernelArg and
clEnqueueNDRangeKernel are counting stand-ins (carray.opencl._clcall.bind_counting) and
MARK_EVERY is out of reach, so the figures are carray's own host cost alone (nothing runs on the
device; the results are garbage). Best of 5 repeats per op.
"""

import argparse
import time

import carray as ca


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ops", type=int, default=20000, help="ops per repeat")
    p.add_argument("--stub", action="store_true", help="time carray alone (stand-in driver)")
    args = p.parse_args()
    from carray.opencl import _clcall, _launch
    a = ca.asarray([float(i) for i in range(16)], dtype="float32", device="gpu")
    b = ca.asarray([float(i) for i in range(16)], dtype="float32", device="gpu")
    state = {"a": ca.asarray(a, copy=True)}

    def iadd():
        x = state["a"]
        x += b

    ops = {"a + b": lambda: a + b, "a * 2.0": lambda: a * 2.0, "exp(a)": lambda: ca.exp(a),
           "a += b": iadd}
    for f in ops.values():          # kernels built and plans made
        for _ in range(100):
            f()
    ca.opencl.queue.finish()
    if args.stub:
        _launch.MARK_EVERY = 10**9
        _clcall.bind_counting()
    print(f"{ca.opencl!r}{' (stand-in driver)' if args.stub else ''}")
    for name, f in ops.items():
        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(args.ops):
                f()
            if not args.stub:
                ca.opencl.queue.finish()
            best = min(best, (time.perf_counter() - t0) / args.ops * 1e6)
        print(f"  {name:8s} {best:6.2f} us/op")


if __name__ == "__main__":
    main()

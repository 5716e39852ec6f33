#!/usr/bin/env bash
# One batch for the NVIDIA machine (device tool), from the repository root after `.gpu/run.sh`
# has installed pyopencl and built the extensions:
#   run(command="bash .gpu/run.sh bash bench/run_gpu.sh", carry=[".gpu"])
# It runs the OpenCL tests on the GPU, the G1-G3 benchmarks beside PyTorch (if installed), and
# a sweep of GEMM tile shapes (CARRAY_OPENCL_GEMM="TM,TN,BK,WM,WN"); logs go to $OUT.
set -uo pipefail
out=${OUT:-/tmp/carray-gpu}
mkdir -p "$out"
python3 -c "import carray; print(carray.opencl)" 2>&1 | tee "$out/device.txt"
python3 -m pytest tests/carray/test_opencl.py -q -p no:cacheprovider 2>&1 | tee "$out/tests.txt" | tail -5
python3 -m pytest bench/test_bench_gpu.py -q -p no:cacheprovider --benchmark-min-rounds=5 \
    --benchmark-json="$out/bench.json" 2>&1 | tee "$out/bench.txt" | grep -E "^G[123]|passed|failed"
# G3's floor: the same 16-element add as a bare pyopencl kernel with its arguments preset (only
# the enqueue), beside carray's a + b (output allocation, dispatch, argument setting, enqueue)
python3 - <<'PY' 2>&1 | tee "$out/g3_floor.txt"
import time, carray
import pyopencl as cl
x = carray.ones(16, device="gpu"); y = carray.ones(16, device="gpu")
rt = carray.opencl.runtime(); q = rt.queue
k = cl.Program(rt.context, "__kernel void k(__global float* o, __global const float* a, "
               "__global const float* b, const int n) { int i = get_global_id(0); "
               "if (i < n) o[i] = a[i] + b[i]; }").build().k
o = rt.alloc(64)
k.set_args(o, x._cl()[0], y._cl()[0], b"\x10\0\0\0")
def per_op(f, n=2000):
    f(); q.finish(); best = 1e9
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(n): f()
        q.finish(); best = min(best, (time.perf_counter() - t0) / n)
    return best * 1e6
enq = lambda: cl._cl.enqueue_nd_range_kernel(q, k, (256,), (256,), None, None, False, False)
print("G3 floor: enqueue only %.2f us/op" % per_op(enq))
print("G3 floor: alloc + enqueue %.2f us/op" % per_op(lambda: (rt.alloc(64), enq())))
print("G3 carray a + b %.2f us/op (best of 7)" % per_op(lambda: x + y))
PY
# GEMM variants: "TM,TN,BK,WM,WN" (WM = WN = 8 takes the fast kernel when it divides 4096), with
# ":pad0" (no local padding), ":general" (the general kernel, the fast path off) or ":regs128"
# (NVIDIA's register cap); NVIDIA's verbose build log (registers, spills) follows each line
for v in 128,128,8,8,8 128,128,16,8,8 128,128,8,8,8:pad0 64,128,8,8,8 128,64,8,8,8 \
    128,128,8,8,8:regs128 128,128,16,8,8:general; do
  cfg=${v%%:*}
  case $v in *:pad0) export CARRAY_OPENCL_GEMM_PAD=0 ;; *) unset CARRAY_OPENCL_GEMM_PAD ;; esac
  case $v in *:general) export CARRAY_OPENCL_GEMM_FAST=0 ;; *) unset CARRAY_OPENCL_GEMM_FAST ;; esac
  opts=-cl-nv-verbose
  case $v in *:regs128) opts="$opts -cl-nv-maxrregcount=128" ;; esac
  grep -qi nvidia "$out/device.txt" || opts=
  export CARRAY_OPENCL_BUILD_OPTIONS=$opts
  CARRAY_OPENCL_GEMM=$cfg python3 - <<PY 2>&1 | tee -a "$out/gemm_sweep.txt"
import time, carray
g = carray.random.Generator(0)
n = 4096
a = g.random((n, n), device="gpu"); b = g.random((n, n), device="gpu")
c = a @ b; carray.opencl.queue.finish()
ref = (a[:64].to("cpu") @ b.to("cpu"))
err = float(abs(c[:64].to("cpu") - ref).max())
t = []
for _ in range(5):
    t0 = time.perf_counter(); c = a @ b; carray.opencl.queue.finish(); t.append(time.perf_counter() - t0)
t.sort()
print("$v", "TFLOP/s %.2f" % (2 * n**3 / t[2] / 1e12), "max err %.2e" % err)
try:
    from carray.opencl import _cache
    cl = carray.opencl.runtime().cl
    knl = [k for key, k in _cache._kernels.items() if key[0] == "gemm"][-1]
    log = knl.get_info(cl.kernel_info.PROGRAM).get_build_info(carray.opencl.runtime().device,
                                                               cl.program_build_info.LOG)
    print("  ", " | ".join(l.strip() for l in log.splitlines() if "gemm" in l or "register" in l
                           or "spill" in l.lower())[:400])
except Exception as e:
    print("   (no build log:", e, ")")
PY
done
unset CARRAY_OPENCL_BUILD_OPTIONS

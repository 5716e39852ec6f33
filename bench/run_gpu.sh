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
for cfg in 128,128,16,8,8 128,128,8,8,8 64,128,16,8,8 128,64,16,8,8 64,64,16,4,4 128,128,16,8,4; do
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
print("$cfg", "TFLOP/s %.2f" % (2 * n**3 / t[2] / 1e12), "max err %.2e" % err)
PY
done

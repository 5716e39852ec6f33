#!/usr/bin/env bash
# The autograd half of the NVIDIA batch (device tool), from the repository root after
# `.gpu/run.sh` has installed pyopencl and built the extensions:
#   run(command="bash .gpu/run.sh bash bench/run_gpu_autograd.sh", carry=[".gpu"])
# It runs the OpenCL and autograd device tests on the GPU, G1-G3 and G4 (W7/W8 steps at batch 256
# on the GPU beside our CPU path), and the main job on the GPU; logs go to $OUT.
set -uo pipefail
out=${OUT:-/tmp/carray-gpu}
mkdir -p "$out"
python3 -c "import carray; print(carray.opencl)" 2>&1 | tee "$out/device.txt"
python3 -m pytest tests/carray/test_opencl.py tests/autograd/test_device.py -q -p no:cacheprovider \
    2>&1 | tee "$out/tests.txt" | tail -3
(cd bench && python3 -m pytest test_bench_gpu.py test_bench_gpu_training.py -q -p no:cacheprovider \
    --benchmark-min-rounds=5 --benchmark-columns=median,min,rounds \
    --benchmark-json="$out/bench.json" 2>&1 | tee "$out/bench.txt" \
    | grep -E "^G[1-4]|^test_|passed|failed|rror")
for model in mlp cnn; do
  python3 examples/train_digits.py --model $model --device gpu 2>&1 | tee "$out/train_$model.txt" \
      | tail -3
done
# h9: W10/W11 (char-GPT and LSTM LM steps) with autograd on the device beside PyTorch on CUDA,
# and the language-model examples' quick runs on the device
BENCH_MODELS_DEVICE=gpu python3 -m pytest bench/test_bench_models.py --benchmark-only -q \
    -p no:cacheprovider --benchmark-columns=median,min,rounds \
    --benchmark-json="$out/bench_models.json" 2>&1 | tee "$out/bench_models.txt" \
    | grep -E "^W1[01]|^test_|passed|failed|rror"
for example in train_gpt word_lm; do
  python3 examples/$example.py --quick --device gpu 2>&1 | tee "$out/$example.txt" | tail -3
done

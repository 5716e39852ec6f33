#!/usr/bin/env bash
# Issue 16's batch for a machine with several GPUs (device tool, kind nvidia-h100-x2 or larger),
# from the repository root after `.gpu/run.sh` installed pyopencl (and the mpich/mpi4py wheels
# carried in .gpu/wheels) and built the extensions:
#   run(command="bash .gpu/run.sh bash bench/run_multi_gpu.sh", carry=[".gpu"], kind=...)
# For each model: autograd on 1 GPU and DDP over MPI on N GPUs, PyTorch on 1 GPU and DDP over
# NCCL on N GPUs (torchrun), the parameter check, and a profile of autograd's DDP step.
# One JSON line per run in $OUT/results.jsonl; logs beside it.
set -uo pipefail
out=${OUT:-/tmp/carray-multi-gpu}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
n=$(python3 -c "import torch; print(torch.cuda.device_count())")
nvidia-smi -L | tee "$out/cards.txt"
nvidia-smi topo -m >> "$out/cards.txt" 2>&1
python3 -c "import carray; print(carray.opencl.device_count(), [carray.opencl.device_name(i) for i in range(carray.opencl.device_count())])" | tee -a "$out/cards.txt"
mpiexec=$(command -v mpiexec || python3 -c 'import os, sys; print(os.path.join(os.path.dirname(sys.executable), "mpiexec"))')
python3 -m pytest tests/autograd/test_gpu_devices.py tests/autograd/test_gpu_module.py \
    tests/autograd/distributed -q -p no:cacheprovider 2>&1 | tail -n 15 > "$out/tests.txt"
tail -n 3 "$out/tests.txt"
echo "mpiexec: $mpiexec; GPUs: $n" | tee -a "$out/cards.txt"
res="$out/results.jsonl"
steps=${STEPS:-20}
for model in ${MODELS:-gpt resnet}; do
  python3 bench/bench_multi_gpu.py --lib torch --model $model --steps $steps >>"$res" 2>>"$out/torch.log"
  python3 -m torch.distributed.run --standalone --nproc_per_node $n bench/bench_multi_gpu.py \
      --lib torch --model $model --steps $steps >>"$res" 2>>"$out/torch.log"
  python3 bench/bench_multi_gpu.py --lib autograd --model $model --steps $steps >>"$res" 2>>"$out/autograd.log"
  timeout 300 "$mpiexec" -n $n python3 bench/bench_multi_gpu.py --lib autograd --model $model \
      --steps $steps --profile "$out/profile_$model.txt" >>"$res" 2>>"$out/autograd.log"
  timeout 300 "$mpiexec" -n $n python3 bench/bench_multi_gpu.py --lib autograd --model $model \
      --check >>"$res" 2>>"$out/autograd.log"
  tail -n 5 "$res"
done
tail -n 20 "$out/autograd.log" "$out/torch.log"

"""mpiexec worker: init_process_group sets LOCAL_RANK/LOCAL_WORLD_SIZE and gives each rank of a
machine its own OpenCL device. The one device PoCL has is listed `copies` times (argv[1]) in
place of the machine's devices, so the spread is checked without several GPUs; argv[2] ==
"chosen" makes each rank choose device 0 itself first, which init_process_group must keep."""

import os
import sys

import pyopencl as cl

import autograd
import autograd.distributed as dist
import carray.opencl._runtime as runtime

copies, mode = int(sys.argv[1]), sys.argv[2]
one = runtime._candidates(cl)[0]
runtime._found[os.environ.get("CARRAY_OPENCL_DEVICE", "").strip()] = [one] * copies
if mode == "chosen":
    autograd.cuda.set_device(0)
dist.init_process_group("mpi")
rank = dist.get_rank()
assert os.environ["LOCAL_RANK"] == str(rank), os.environ["LOCAL_RANK"]
assert os.environ["LOCAL_WORLD_SIZE"] == str(dist.get_world_size())
expected = 0 if mode == "chosen" else rank % copies
assert autograd.cuda.current_device() == expected, (autograd.cuda.current_device(), expected)
assert not autograd.cuda.is_initialized()
x = autograd.full((3,), float(rank + 1), device=f"cuda:{expected}")
dist.all_reduce(x)
world = dist.get_world_size()
assert x.tolist() == [world * (world + 1) / 2] * 3 and autograd.cuda.is_initialized()
print(f"rank {rank} uses device {autograd.cuda.current_device()}: ok")

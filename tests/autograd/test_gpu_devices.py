"""Several OpenCL devices, one per process (as PyTorch's one GPU per DDP process): ordinals,
set_device before the first GPU operation, a first "cuda:i" choosing device i, and errors for
another device once one is in use. Each case runs in a fresh interpreter (the device is chosen
once per process); PoCL's one device is listed twice where two devices are needed."""

import os
import subprocess
import sys
import textwrap

import pytest
from distributed._mpi import mpiexec

import carray

from conftest import have_gpu

pytestmark = pytest.mark.skipif(not have_gpu(), reason="no OpenCL device")

PRELUDE = """
import carray.opencl._runtime as runtime
import pyopencl as cl
import autograd
one = runtime._candidates(cl)[0]
runtime._found[""] = [one, one]          # two devices (the same one twice)
"""


def _run(body):
    """Run PRELUDE + body in a fresh interpreter; its stdout (fails on a non-zero exit)."""
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(carray.__file__)))
    env.pop("CARRAY_OPENCL_DEVICE", None)
    code = PRELUDE + textwrap.dedent(body)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_set_device_chooses_the_device_before_first_use():
    out = _run("""
        cuda = autograd.cuda
        assert cuda.device_count() == 2 and cuda.current_device() == 0
        assert cuda.is_available() and not cuda.is_initialized()
        cuda.set_device(1)
        assert cuda.current_device() == 1 and not cuda.is_initialized()
        x = autograd.ones(4, device="cuda") * 3
        assert cuda.is_initialized() and x.sum().item() == 12.0
        assert autograd.ones(2, device="cuda:1").is_cuda    # the device in use: fine
        for other in (lambda: cuda.set_device(0), lambda: autograd.ones(2, device="cuda:0"),
                      lambda: autograd.ones(2).to("cuda:0")):
            try:
                other()
            except RuntimeError as e:
                assert "already uses OpenCL device 1" in str(e) and "set_device(0)" in str(e)
            else:
                raise AssertionError("another device was accepted")
        assert cuda.memory_allocated(0) == 0 and cuda.memory_allocated(1) > 0
        cuda.synchronize(0)      # a device this process does not use has nothing queued
        print(cuda.get_device_name(0) == cuda.get_device_name(1))
    """)
    assert out.strip() == "True"


def test_first_cuda_index_chooses_the_device():
    _run("""
        m = autograd.nn.Linear(3, 2).to("cuda:1")
        assert autograd.cuda.current_device() == 1 and m.weight.is_cuda
        with autograd.cuda.device(1):
            pass
    """)


def test_bad_ordinals():
    _run("""
        cuda = autograd.cuda
        for bad in (2, "cuda:2", -2):
            try:
                cuda.set_device(bad)
            except RuntimeError as e:
                assert "invalid device ordinal" in str(e), e
            else:
                raise AssertionError(bad)
        try:
            autograd.zeros(1, device="cuda:5")
        except RuntimeError as e:
            assert "invalid device ordinal 5: 2 OpenCL devices" in str(e), e
        else:
            raise AssertionError("cuda:5")
    """)


def test_carray_device_count_counts_named_devices():
    import pyopencl as cl

    import carray.opencl._runtime as runtime
    devices = runtime._candidates(cl)
    assert carray.opencl.device_count() == len(devices) >= 1
    assert carray.opencl.device_name(0) == devices[0].name.strip()
    with pytest.raises(IndexError, match="out of range"):
        carray.opencl.device_name(len(devices))
    assert carray.opencl.selected() == 0 or carray.opencl.is_initialized()


@pytest.mark.parametrize("mode", ["spread", "chosen"])
def test_ranks_of_one_machine_get_their_own_device(mode):
    out = mpiexec(2, "_devices_worker.py", "2", mode)
    assert out.returncode == 0, out.stdout + out.stderr
    expected = {0: 0, 1: 0 if mode == "chosen" else 1}
    for rank, dev in expected.items():
        assert f"rank {rank} uses device {dev}: ok" in out.stdout, out.stdout


def test_more_ranks_than_devices_share_them():
    out = mpiexec(3, "_devices_worker.py", "2", "spread")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "rank 2 uses device 0: ok" in out.stdout, out.stdout

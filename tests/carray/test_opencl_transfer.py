"""carray.opencl.download_async (a device-to-host copy that does not wait), checked against
NumPy."""

import numpy as np
import pytest

import carray as ca

from conftest import fresh_env, have_gpu

pytestmark = pytest.mark.skipif(not have_gpu(), reason="no OpenCL device")


@pytest.mark.parametrize("dtype", ["float32", "int64", "float64", "bool"])
@pytest.mark.parametrize("n", [0, 1, 1000])
def test_download_async(dtype, n):
    if dtype == "float64" and not ca.opencl.fp64:
        pytest.skip("the device has no fp64")
    rng = np.random.default_rng(n)
    ref = (rng.standard_normal(n) * 10).astype(dtype)
    host = ca.empty(n, dtype=dtype)
    assert host.shape == (n,) and host.dtype == ca.dtype(dtype) and host.device == "cpu"
    event = ca.opencl.download_async(ca.asarray(ref).to("gpu"), host)
    if event is not None:
        event.wait()
    np.testing.assert_array_equal(np.asarray(host), ref)
    host[...] = ca.asarray(ref[::-1].copy())     # writable, usable as an ordinary array
    np.testing.assert_array_equal(np.asarray(host * 2), ref[::-1] * 2)


def test_download_async_of_a_view_and_rejections():
    d = ca.arange(20, dtype=ca.float32, device="gpu")
    host = ca.empty(10, dtype=ca.float32)
    ca.opencl.download_async(d[5:15], host).wait()       # a contiguous view: its offset
    assert host.tolist() == list(range(5, 15))
    with pytest.raises(ValueError, match="same size and dtype"):
        ca.opencl.download_async(d, host)
    with pytest.raises(ValueError, match="C-contiguous"):
        ca.opencl.download_async(d[::2], host)
    with pytest.raises(ValueError, match="same size and dtype"):
        ca.opencl.download_async(d[:10], ca.empty(10, dtype=ca.int32))


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_pinned_empty_is_an_ordinary_host_array(dtype):
    host = ca.opencl.pinned_empty(7, dtype)
    assert host.shape == (7,) and host.dtype == ca.dtype(dtype) and host.device == "cpu"
    ref = (np.arange(7) % 3).astype(dtype)
    ca.opencl.download_async(ca.asarray(ref).to("gpu"), host).wait()
    np.testing.assert_array_equal(np.asarray(host), ref)
    host[...] = ca.asarray(ref[::-1].copy())
    np.testing.assert_array_equal(np.asarray(host.to("gpu").to("cpu")), ref[::-1])
    assert ca.opencl.pinned_empty(0, dtype).shape == (0,)


def test_pinned_arrays_alive_at_exit_do_not_crash_the_interpreter():
    # the mappings are undone at exit while the context lives (an NVIDIA driver crashed when
    # they were left to the interpreter's teardown)
    import subprocess
    import sys
    code = ("import carray as ca\n"
            "class Holder: pass\n"
            "h = Holder(); h.me = h\n"
            "h.arrays = [ca.opencl.pinned_empty(1000, 'float32') for _ in range(3)]\n"
            "ca.opencl.download_async(ca.ones(1000, device='gpu'), h.arrays[0]).wait()\n"
            "print(float(h.arrays[0].sum()))\n")
    env = fresh_env()
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120, check=False)
    assert run.returncode == 0 and run.stdout.strip() == "1000.0", run.stderr

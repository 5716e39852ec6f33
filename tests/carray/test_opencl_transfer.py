"""carray.opencl.download_async (a device-to-host copy that does not wait), checked against
NumPy."""

import numpy as np
import pytest

import carray as ca

try:
    ca.opencl.runtime()
    HAVE_GPU = True
except Exception:                   # no pyopencl or no device
    HAVE_GPU = False

pytestmark = pytest.mark.skipif(not HAVE_GPU, reason="no OpenCL device")


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

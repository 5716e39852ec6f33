"""Issue 14 item 1: integer-array indexing, add_at, carray.nn.embedding, arange and eye made on
the device, against NumPy on every device. Index arrays on the device are checked there: a bad
index raises IndexError at the next read from the device (not at the call), and none of these
ops waits for the device."""

import numpy as np
import pytest

import carray as ca
from carray.opencl import _profiling

from conftest import have_gpu, on, to_numpy

INDEX_DTYPES = ["int32", "int64"]


class _Reads:
    """An OpenCL observer counting blocking reads (installed while the `with` block runs)."""

    def __enter__(self):
        self.blocking = 0
        self.prev = _profiling.set_observer(self)
        return self

    def __exit__(self, *exc):
        _profiling.set_observer(self.prev)

    def kernel(self, knl, event):
        pass

    def copy(self, kind, nbytes, event, blocking, t0):
        self.blocking += bool(blocking)

    def wait(self, name, t0):
        self.blocking += 1


def _gpu_only(device):
    if device != "gpu":
        pytest.skip("the deferred check and the no-wait paths are the device's")


@pytest.mark.parametrize("it", INDEX_DTYPES)
@pytest.mark.parametrize("seed", range(6))
def test_gather_with_index_arrays_matches_numpy(device, it, seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(n) for n in rng.integers(1, 6, 3))
    n = rng.standard_normal(shape).astype(np.float32)
    a = on(n, device)
    i0 = rng.integers(-shape[0], shape[0], tuple(rng.integers(0, 4, 2))).astype(it)
    i2 = rng.integers(-shape[2], shape[2], (i0.shape[-1],)).astype(it)
    j0, j2 = on(i0, device), on(i2, device)
    cases = [
        (n[i0], a[j0]),
        (n[:, ::-1, i2], a[:, ::-1, j2]),                   # after a reversed slice
        (n[i0, 1:, i2], a[j0, 1:, j2]),                     # broadcast, non-adjacent
        (n[i0, :, 0], a[j0, :, 0]),                         # with an int entry
        (n[..., i2[::2]], a[..., j2[::2]]),                 # a non-contiguous index array
        (n.T[i2], a.T[j2]),                                 # a transposed source
    ]
    for want, got in cases:
        assert got.device == device
        np.testing.assert_array_equal(to_numpy(got), want)


def test_gather_float64_and_empty_index(device):
    rng = np.random.default_rng(1)
    n = rng.standard_normal((5, 3))
    a = on(n, device)
    idx = np.array([4, -5, 0, 4])
    np.testing.assert_array_equal(to_numpy(a[on(idx, device)]), n[idx])
    empty = np.zeros((0,), dtype=np.int64)
    got = a[on(empty, device)]
    assert got.shape == (0, 3)
    assert a[:, on(empty, device)].shape == (5, 0)


@pytest.mark.parametrize("it", INDEX_DTYPES)
def test_gather_out_of_range_raises_at_the_next_read(device, it):
    a = on(np.arange(12, dtype=np.float32).reshape(4, 3), device)
    bad = on(np.array([1, 4], dtype=it), device)
    if device == "cpu":
        with pytest.raises(IndexError, match="index 4 is out of bounds for axis 0 with size 4"):
            a[bad]
        return
    got = a[bad]                                    # queued, no error yet
    low = on(np.array([-5], dtype=it), device)
    a[:, low]
    with pytest.raises(IndexError, match="out of bounds for axis .* with size .*next read"):
        got.to("cpu")
    np.testing.assert_array_equal(to_numpy(a[on(np.array([3, -4]), device)]),
                                  np.arange(12, dtype=np.float32).reshape(4, 3)[[3, -4]])


def test_a_bad_index_is_reported_to_the_thread_that_passed_it(device):
    """Each calling thread has its own flag: another thread's reads neither raise this thread's
    IndexError nor clear it (one shared flag did both), and this thread's next read raises."""
    import threading
    _gpu_only(device)
    a = on(np.arange(12, dtype=np.float32).reshape(4, 3), device)
    queued, read, results = threading.Event(), threading.Event(), {}

    def bad_caller():
        got = a[on(np.array([1, 4]), device)]           # queued: the error waits for a read
        queued.set()
        read.wait()
        try:
            got.to("cpu")
            results["bad"] = "no error"
        except IndexError as e:
            results["bad"] = str(e)

    def reader():
        queued.wait()
        try:
            for _ in range(3):
                results.setdefault("reader", []).append(float(a.sum().to("cpu")))
        except IndexError as e:
            results["reader"] = repr(e)
        read.set()
    threads = [threading.Thread(target=bad_caller), threading.Thread(target=reader)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results["reader"] == [66.0, 66.0, 66.0]
    assert "out of bounds" in results["bad"] and "next read" in results["bad"]
    assert float(a[on(np.array([3]), device)].sum().to("cpu")) == 9 + 10 + 11


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool"])
@pytest.mark.parametrize("it", INDEX_DTYPES)
def test_add_at_matches_numpy(device, dtype, it):
    rng = np.random.default_rng(3)
    base = (rng.standard_normal((6, 5)) * 4).astype(dtype)
    rows = rng.integers(-6, 6, (40,)).astype(it)        # many repeats
    vals = (rng.standard_normal((40, 5)) * 4).astype(dtype)
    want = base.copy()
    np.add.at(want, rows, vals)
    a = on(base.copy(), device)
    ca.add_at(a, on(rows, device), on(vals, device))
    got = to_numpy(a)
    if dtype.startswith("float"):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_array_equal(got, want)
    # along axis 1 of a non-contiguous view, values broadcast from one row
    cols = rng.integers(-3, 3, (7,)).astype(it)
    v = (rng.standard_normal((1, 7)) * 4).astype(dtype)
    want = base.copy()
    np.add.at(want[::2, 1:4], (slice(None), cols), v)
    a = on(base.copy(), device)
    ca.add_at(a[::2, 1:4], (slice(None), on(cols, device)), on(v, device))
    got = to_numpy(a)
    if dtype.startswith("float"):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_array_equal(got, want)


def test_add_at_host_index_and_empty_index(device):
    base = np.ones((4, 2), dtype=np.float32)
    a = on(base.copy(), device)
    ca.add_at(a, [0, 0, 3], 1.5)                    # host index list, scalar value
    want = base.copy()
    np.add.at(want, [0, 0, 3], 1.5)
    np.testing.assert_array_equal(to_numpy(a), want)
    ca.add_at(a, on(np.zeros((0,), dtype=np.int64), device), on(np.zeros((0, 2), np.float32),
                                                                  device))
    np.testing.assert_array_equal(to_numpy(a), want)


def test_add_at_out_of_range_adds_nothing_and_raises_at_the_next_read(device):
    _gpu_only(device)
    a = on(np.zeros((3, 2), dtype=np.float32), device)
    ca.add_at(a, on(np.array([0, 3, 2, -4]), device), on(np.ones((4, 2), np.float32), device))
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 3"):
        a.to("cpu")
    np.testing.assert_array_equal(to_numpy(a), [[1, 1], [0, 0], [1, 1]])


@pytest.mark.parametrize("it", INDEX_DTYPES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_embedding_matches_numpy(device, it, dtype):
    rng = np.random.default_rng(4)
    w = rng.standard_normal((9, 4)).astype(dtype)
    idx = rng.integers(0, 9, (3, 5)).astype(it)
    got = ca.nn.embedding(on(w, device), on(idx, device))
    assert got.shape == (3, 5, 4) and got.device == device
    np.testing.assert_array_equal(to_numpy(got), w[idx])
    # a non-contiguous weight and index array, an empty index array
    wt = on(np.ascontiguousarray(w.T), device).T
    np.testing.assert_array_equal(to_numpy(ca.nn.embedding(wt, on(idx, device)[:, ::2])),
                                  w[idx[:, ::2]])
    assert ca.nn.embedding(on(w, device), on(idx[:0], device)).shape == (0, 5, 4)


def test_embedding_errors(device):
    w = on(np.zeros((3, 2), np.float32), device)
    with pytest.raises(ValueError, match="embedding.*weight must be 2-d"):
        ca.nn.embedding(w.reshape(-1), on(np.array([0]), device))
    with pytest.raises(TypeError, match="embedding.*indices must be int32 or int64"):
        ca.nn.embedding(w, on(np.array([0.0]), device))
    for bad in ([3], [-1]):
        if device == "cpu":
            with pytest.raises(IndexError, match="index out of range in self"):
                ca.nn.embedding(w, on(np.array(bad), device))
        else:
            out = ca.nn.embedding(w, on(np.array(bad), device))
            with pytest.raises(IndexError, match="index out of range in self"):
                out.tolist()
    if have_gpu():
        with pytest.raises(ca.DeviceMismatchError, match="embedding"):
            ca.nn.embedding(on(np.zeros((3, 2), np.float32), "cpu"), on(np.array([0]), "gpu"))


@pytest.mark.parametrize("args", [(5,), (2, 9, 3), (-3, 5), (9, 2, -2), (0.5, 3.2, 0.3),
                                  (1, 10**6, 7), (3, 3), (-1.5, 1.0, 0.25)])
@pytest.mark.parametrize("dtype", [None, "int32", "int64", "float32", "float64"])
def test_arange_on_the_device_matches_numpy(device, args, dtype):
    want = np.arange(*args, dtype=dtype if dtype else None)
    if dtype is None and want.dtype == np.float64:
        want = np.arange(*args, dtype=np.float32)
    got = ca.arange(*args, dtype=dtype, device=device)
    assert got.device == device and got.dtype.name == want.dtype.name
    np.testing.assert_array_equal(to_numpy(got), want)


@pytest.mark.parametrize("nmk", [(4, None, 0), (3, 5, 1), (5, 3, -2), (3, 3, 5), (0, 3, 0),
                                 (4, 4, -4), (1, 1, 0)])
def test_eye_matches_numpy(device, nmk):
    n, m, k = nmk
    for dtype in ("float32", "int64", "bool"):
        got = ca.eye(n, m, k, dtype=dtype, device=device)
        assert got.device == device
        np.testing.assert_array_equal(to_numpy(got), np.eye(n, m, k, dtype=dtype))


def test_device_paths_make_no_blocking_read(device):
    _gpu_only(device)
    rng = np.random.default_rng(5)
    a = on(rng.standard_normal((50, 8)).astype(np.float32), device)
    idx = on(rng.integers(0, 50, (64,)), device)
    g = on(rng.standard_normal((64, 8)).astype(np.float32), device)
    a[idx]                                          # (build the kernels)
    with _Reads() as reads:
        rows = a[idx]
        emb = ca.nn.embedding(a, idx.reshape(8, 8))
        out = ca.zeros((50, 8), device="gpu")
        ca.add_at(out, idx, g)
        ca.arange(10, device="gpu")
        ca.eye(6, device="gpu")
        a[:, (idx[:3] % 8).astype("int32")]
    assert reads.blocking == 0
    np.testing.assert_array_equal(to_numpy(rows), to_numpy(a)[to_numpy(idx)])
    np.testing.assert_array_equal(to_numpy(emb), to_numpy(a)[to_numpy(idx).reshape(8, 8)])
    want = np.zeros((50, 8), np.float32)
    np.add.at(want, to_numpy(idx), to_numpy(g))
    np.testing.assert_allclose(to_numpy(out), want, rtol=1e-5, atol=1e-5)

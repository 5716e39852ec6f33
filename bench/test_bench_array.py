"""Array foundation workloads: a transposed copy and the cost of making a view."""

import pytest

import carray

N = 4096


@pytest.fixture(scope="module")
def big(np):
    rng = np.random.default_rng(0)
    return rng.random((N, N), dtype=np.float32)


# -- ascontiguousarray of a transposed 4096x4096 float32 array (64 MiB read + 64 MiB written) --

@pytest.mark.benchmark(group="transpose-copy-4096-f32")
def test_transpose_copy_carray(benchmark, big, np):
    a = carray.asarray(big).T
    out = benchmark(carray.ascontiguousarray, a)
    assert np.array_equal(np.asarray(out), big.T)


@pytest.mark.benchmark(group="transpose-copy-4096-f32")
def test_transpose_copy_numpy(benchmark, big, np):
    benchmark(np.ascontiguousarray, big.T)


@pytest.mark.benchmark(group="transpose-copy-4096-f32")
def test_transpose_copy_torch(benchmark, big, torch):
    t = torch.from_numpy(big).T
    benchmark(t.contiguous)


# -- view creation a[1:3, ::2] on a small array --

def _view(a):
    return a[1:3, ::2]


@pytest.mark.benchmark(group="view-slice-small")
def test_view_carray(benchmark):
    a = carray.zeros((8, 8))
    benchmark(_view, a)


@pytest.mark.benchmark(group="view-slice-small")
def test_view_numpy(benchmark, np):
    benchmark(_view, np.zeros((8, 8), dtype=np.float32))


@pytest.mark.benchmark(group="view-slice-small")
def test_view_torch(benchmark, torch):
    benchmark(_view, torch.zeros((8, 8)))

"""W4 of BENCHMARKS.md: sum of 16M float32, and sum over axis 0 / axis 1 of 4096 x 4096."""

import pytest

import carray


@pytest.fixture(scope="module")
def mat(np):
    return np.random.default_rng(2).random((4096, 4096), dtype=np.float32)


@pytest.mark.parametrize("axis", [None, 0, 1], ids=["all", "axis0", "axis1"])
@pytest.mark.benchmark(group="W4-sum")
def test_sum_carray(benchmark, mat, axis):
    benchmark.group = f"W4-sum-{axis}"
    benchmark(carray.sum, carray.asarray(mat), axis)


@pytest.mark.parametrize("axis", [None, 0, 1], ids=["all", "axis0", "axis1"])
def test_sum_numpy(benchmark, mat, axis, np):
    benchmark.group = f"W4-sum-{axis}"
    benchmark(np.sum, mat, axis)


@pytest.mark.parametrize("axis", [None, 0, 1], ids=["all", "axis0", "axis1"])
def test_sum_torch(benchmark, mat, axis, torch):
    benchmark.group = f"W4-sum-{axis}"
    t = torch.from_numpy(mat)
    if axis is None:
        benchmark(torch.sum, t)
    else:
        benchmark(torch.sum, t, axis)

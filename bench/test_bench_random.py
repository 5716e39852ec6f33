"""Random numbers: 16M float32 uniforms and normals, carray's Philox4x32-10 (all threads) beside
NumPy's Generator (PCG64, one thread) and PyTorch's CPU generator (mt19937)."""

import pytest

import carray
import carray.random

N = 1 << 24


@pytest.fixture(scope="module")
def gen():
    return carray.random.Generator(0)


@pytest.fixture(scope="module")
def npgen(np):
    return np.random.default_rng(0)


# -- random(): 16M float32 in [0, 1) --

@pytest.mark.benchmark(group="random-16M-f32")
def test_random_carray(benchmark, gen):
    out = benchmark(gen.random, N)
    assert out.shape == (N,) and out.dtype == carray.float32


@pytest.mark.benchmark(group="random-16M-f32")
def test_random_numpy(benchmark, npgen, np):
    benchmark(npgen.random, N, dtype=np.float32)


@pytest.mark.benchmark(group="random-16M-f32")
def test_random_torch(benchmark, torch):
    benchmark(torch.rand, N)


# -- normal(): 16M float32 standard normals --

@pytest.mark.benchmark(group="normal-16M-f32")
def test_normal_carray(benchmark, gen):
    out = benchmark(gen.normal, size=N)
    assert out.shape == (N,) and out.dtype == carray.float32


@pytest.mark.benchmark(group="normal-16M-f32")
def test_normal_numpy(benchmark, npgen, np):
    benchmark(npgen.standard_normal, N, dtype=np.float32)


@pytest.mark.benchmark(group="normal-16M-f32")
def test_normal_torch(benchmark, torch):
    benchmark(torch.randn, N)


# -- integers(0, 1000): 16M int64 --

@pytest.mark.benchmark(group="integers-16M-i64")
def test_integers_carray(benchmark, gen):
    benchmark(gen.integers, 0, 1000, N)


@pytest.mark.benchmark(group="integers-16M-i64")
def test_integers_numpy(benchmark, npgen):
    benchmark(npgen.integers, 0, 1000, N)


@pytest.mark.benchmark(group="integers-16M-i64")
def test_integers_torch(benchmark, torch):
    benchmark(torch.randint, 0, 1000, (N,))

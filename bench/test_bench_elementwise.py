"""W2-W3 and W5a of BENCHMARKS.md: elementwise add/exp, broadcasting, a transposed operand, and
the per-call overhead on tiny arrays; each group holds carray, NumPy and PyTorch (if installed)."""

import pytest

import carray

N = 16 * 1024 * 1024


@pytest.fixture(scope="module")
def vecs(np):
    rng = np.random.default_rng(0)
    return rng.random(N, dtype=np.float32), rng.random(N, dtype=np.float32)


@pytest.fixture(scope="module")
def mats(np):
    rng = np.random.default_rng(1)
    return (rng.random((4096, 4096), dtype=np.float32), rng.random((4096, 4096), dtype=np.float32),
            rng.random(4096, dtype=np.float32))


# -- W2a: add 16M float32, out of place --

@pytest.mark.benchmark(group="W2a-add-16M")
def test_add_carray(benchmark, vecs):
    a, b = carray.asarray(vecs[0]), carray.asarray(vecs[1])
    benchmark(carray.add, a, b)


@pytest.mark.benchmark(group="W2a-add-16M")
def test_add_numpy(benchmark, vecs, np):
    benchmark(np.add, *vecs)


@pytest.mark.benchmark(group="W2a-add-16M")
def test_add_torch(benchmark, vecs, torch):
    benchmark(torch.add, torch.from_numpy(vecs[0]), torch.from_numpy(vecs[1]))


# -- W2b: add 16M float32 into out= --

@pytest.mark.benchmark(group="W2b-add-out-16M")
def test_add_out_carray(benchmark, vecs):
    a, b = carray.asarray(vecs[0]), carray.asarray(vecs[1])
    out = carray.empty(N)
    benchmark(carray.add, a, b, out=out)


@pytest.mark.benchmark(group="W2b-add-out-16M")
def test_add_out_numpy(benchmark, vecs, np):
    out = np.empty(N, dtype=np.float32)
    benchmark(np.add, vecs[0], vecs[1], out=out)


@pytest.mark.benchmark(group="W2b-add-out-16M")
def test_add_out_torch(benchmark, vecs, torch):
    out = torch.empty(N)
    benchmark(torch.add, torch.from_numpy(vecs[0]), torch.from_numpy(vecs[1]), out=out)


# -- W2c: exp 16M float32 --

@pytest.mark.benchmark(group="W2c-exp-16M")
def test_exp_carray(benchmark, vecs):
    benchmark(carray.exp, carray.asarray(vecs[0]))


@pytest.mark.benchmark(group="W2c-exp-16M")
def test_exp_numpy(benchmark, vecs, np):
    benchmark(np.exp, vecs[0])


@pytest.mark.benchmark(group="W2c-exp-16M")
def test_exp_torch(benchmark, vecs, torch):
    benchmark(torch.exp, torch.from_numpy(vecs[0]))


# -- W3a: (4096, 4096) + (4096,) --

@pytest.mark.benchmark(group="W3a-broadcast-add")
def test_bcast_carray(benchmark, mats):
    benchmark(carray.add, carray.asarray(mats[0]), carray.asarray(mats[2]))


@pytest.mark.benchmark(group="W3a-broadcast-add")
def test_bcast_numpy(benchmark, mats, np):
    benchmark(np.add, mats[0], mats[2])


@pytest.mark.benchmark(group="W3a-broadcast-add")
def test_bcast_torch(benchmark, mats, torch):
    benchmark(torch.add, torch.from_numpy(mats[0]), torch.from_numpy(mats[2]))


# -- W3b: a.T + b, 4096 x 4096 --

@pytest.mark.benchmark(group="W3b-transposed-add")
def test_tadd_carray(benchmark, mats):
    benchmark(carray.add, carray.asarray(mats[0]).T, carray.asarray(mats[1]))


@pytest.mark.benchmark(group="W3b-transposed-add")
def test_tadd_numpy(benchmark, mats, np):
    benchmark(np.add, mats[0].T, mats[1])


@pytest.mark.benchmark(group="W3b-transposed-add")
def test_tadd_torch(benchmark, mats, torch):
    benchmark(torch.add, torch.from_numpy(mats[0]).T, torch.from_numpy(mats[1]))


# -- W5a: a + b on 16-element arrays (per-op overhead) --

def _add(a, b):
    return a + b


@pytest.mark.benchmark(group="W5a-small-add")
def test_small_add_carray(benchmark):
    a, b = carray.ones(16), carray.ones(16)
    benchmark(_add, a, b)


@pytest.mark.benchmark(group="W5a-small-add")
def test_small_add_numpy(benchmark, np):
    a, b = np.ones(16, dtype=np.float32), np.ones(16, dtype=np.float32)
    benchmark(_add, a, b)


@pytest.mark.benchmark(group="W5a-small-add")
def test_small_add_torch(benchmark, torch):
    a, b = torch.ones(16), torch.ones(16)
    benchmark(_add, a, b)

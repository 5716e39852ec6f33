"""carray.linalg's factorisations beside numpy.linalg (LAPACK) and torch.linalg, float64:
solve, cholesky, qr and eigh of a 512 x 512 matrix, the SVD of a 2000 x 100 one (PCA's shape)
and a batch of 256 small (8 x 8) inverses."""

import pytest

import carray
from carray import linalg

N = 512


@pytest.fixture(scope="module")
def mats(np):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((N, N))
    return {"a": a, "b": rng.standard_normal((N, 16)), "spd": a @ a.T + N * np.eye(N),
            "tall": rng.standard_normal((2000, 100)),
            "small": rng.standard_normal((256, 8, 8)) + 8 * np.eye(8)}


CASES = [
    ("solve-512", lambda la, m: la.solve(m["a"], m["b"]), ("a", "b")),
    ("cholesky-512", lambda la, m: la.cholesky(m["spd"]), ("spd",)),
    ("qr-512", lambda la, m: la.qr(m["a"]), ("a",)),
    ("eigh-512", lambda la, m: la.eigh(m["spd"]), ("spd",)),
    ("svd-2000x100", lambda la, m: la.svd(m["tall"], full_matrices=False), ("tall",)),
    ("inv-256x8x8", lambda la, m: la.inv(m["small"]), ("small",)),
]


@pytest.mark.parametrize("name, fn, keys", CASES, ids=[c[0] for c in CASES])
def test_carray(benchmark, mats, name, fn, keys):
    benchmark.group = "linalg-" + name
    m = {k: carray.asarray(mats[k]) for k in keys}
    benchmark(fn, linalg, m)


@pytest.mark.parametrize("name, fn, keys", CASES, ids=[c[0] for c in CASES])
def test_numpy(benchmark, mats, name, fn, keys, np):
    benchmark.group = "linalg-" + name
    benchmark(fn, np.linalg, mats)


@pytest.mark.parametrize("name, fn, keys", CASES, ids=[c[0] for c in CASES])
def test_torch(benchmark, mats, name, fn, keys, torch):
    benchmark.group = "linalg-" + name
    m = {k: torch.from_numpy(mats[k]) for k in keys}
    benchmark(fn, torch.linalg, m)

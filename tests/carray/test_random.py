"""carray.random: Philox4x32-10 against Random123's known answers, every method against a
pure-Python model of the documented stream (bit for bit), determinism (seeds, successive draws,
thread counts, draw sizes), statistics with fixed seeds, arguments and errors.

Guarantees tested: a number depends only on (seed, offset, position); a draw of n elements equals
the first n of a larger draw at the same offset; draws whose sizes are multiples of the per-block
count (4 for float32, 2 for float64 and integers) concatenate into one draw.
"""

import math
import pickle

import numpy as np
import pytest

import carray as ca
import carray.random as cr

from conftest import assert_raises_like


def host(a, device):
    """The draw a (checked to be on `device`) as a NumPy array."""
    assert a.device == device, (a.device, device)
    return np.asarray(a.to("cpu"))

# ---------------------------------------------------------------------------------------------
# the model: carray.random's docstring written out in Python
# ---------------------------------------------------------------------------------------------

M32 = 0xFFFFFFFF


def philox(ctr, key, rounds=10):
    """Philox4x32-R (Salmon et al., SC'11), written independently of carray's."""
    x0, x1, x2, x3 = ctr
    k0, k1 = key
    for _ in range(rounds):
        p0 = 0xD2511F53 * x0
        p1 = 0xCD9E8D57 * x2
        x0, x1, x2, x3 = (p1 >> 32) ^ x1 ^ k0, p1 & M32, (p0 >> 32) ^ x3 ^ k1, p0 & M32
        k0 = (k0 + 0x9E3779B9) & M32
        k1 = (k1 + 0xBB67AE85) & M32
    return x0, x1, x2, x3


def words(seed, block, attempt=0):
    return philox((block & M32, block >> 32, attempt, 0), (seed & M32, seed >> 32))


def u64s(seed, block, attempt=0):
    w = words(seed, block, attempt)
    return w[0] | w[1] << 32, w[2] | w[3] << 32


def ref_random_f32(seed, n, offset=0):
    return np.array([(words(seed, offset + i // 4)[i % 4] >> 8) * 2.0**-24 for i in range(n)],
                    dtype=np.float32)


def ref_random_f64(seed, n, offset=0):
    return np.array([(u64s(seed, offset + i // 2)[i % 2] >> 11) * 2.0**-53 for i in range(n)])


def ref_bounded(seed, block, half, s):
    """Lemire with rejection as documented: s == 0 means 2**64."""
    x = u64s(seed, block)[half]
    if s == 0:
        return x
    t = 2**64 % s
    attempt = 0
    while (x * s) % 2**64 < t:
        attempt += 1
        x = u64s(seed, block, attempt)[half]
    return (x * s) >> 64


def ref_integers(seed, low, high, n, offset=0):
    s = (high - low) % 2**64
    return np.array([low + ref_bounded(seed, offset + i // 2, i % 2, s) for i in range(n)],
                    dtype=np.int64)


SQRT2 = 1.4142135623730951
LN2_HI, LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10
TWO_PI = 6.283185307179586
LOG_C = [1.0 / (2 * k + 3) for k in range(10)]
SIN_C = [(-1.0) ** (k + 1) / math.factorial(2 * k + 3) for k in range(8)]
COS_C = [(-1.0) ** k / math.factorial(2 * k + 4) for k in range(8)]


def ref_log_scaled(v, bits):
    """ln(v 2**-bits) as documented: 2 atanh series on [sqrt(1/2), sqrt(2)) plus k ln 2."""
    m, e = math.frexp(float(v))
    m, k = 2.0 * m, e - 1
    if m > SQRT2:
        m, k = m * 0.5, k + 1
    t = (m - 1.0) / (m + 1.0)
    z = t * t
    p = LOG_C[9]
    for c in LOG_C[8::-1]:
        p = p * z + c
    p = p * z + 1.0
    k -= bits
    return float(k) * LN2_HI + (float(k) * LN2_LO + (t + t) * p)


def ref_sincos_turn(v, bits):
    """(cos, sin) of 2 pi v 2**-bits as documented: exact quarter turns, Taylor on [-pi/4, pi/4]."""
    q = (v + (1 << (bits - 3))) >> (bits - 2)
    a = float(v - (q << (bits - 2))) * (TWO_PI / float(1 << bits))
    a2 = a * a
    ps = SIN_C[7]
    for c in SIN_C[6::-1]:
        ps = ps * a2 + c
    sa = a + a * a2 * ps
    pc = COS_C[7]
    for c in COS_C[6::-1]:
        pc = pc * a2 + c
    ca = 1.0 - 0.5 * a2 + a2 * a2 * pc
    if q & 1:
        sa, ca = ca, sa
    return (-ca if (q + 1) & 2 else ca), (-sa if q & 2 else sa)


def ref_box_muller(v1, v2, bits):
    r = math.sqrt(-2.0 * ref_log_scaled(v1 + 1, bits))
    c, s = ref_sincos_turn(v2, bits)
    return r * c, r * s


def ref_normal_f64(seed, n, offset=0):
    out = []
    for b in range((n + 1) // 2):
        x0, x1 = u64s(seed, offset + b)
        out += ref_box_muller(x0 >> 11, x1 >> 11, 53)
    return np.array(out[:n])


def ref_normal_f32(seed, n, offset=0):
    out = []
    for b in range((n + 3) // 4):
        w = words(seed, offset + b)
        out += ref_box_muller(w[0], w[1], 32) + ref_box_muller(w[2], w[3], 32)
    return np.array(out[:n]).astype(np.float32)      # float64 rounded once to float32


def ref_permutation(seed, n, offset=0):
    a = [ref_bounded(seed, offset + i // 2, i % 2, i + 1) for i in range(n)]
    for i in range(n):
        j = a[i]
        a[i] = a[j]
        a[j] = i
    return np.array(a, dtype=np.int64)


@pytest.fixture
def threads():
    """Restore carray's thread count after a test that changes it."""
    n = ca.get_num_threads()
    yield
    ca.set_num_threads(n)


# ---------------------------------------------------------------------------------------------
# Philox4x32-10 known answers (Random123, tests/kat_vectors, the three "philox4x32 10" lines)
# ---------------------------------------------------------------------------------------------

KAT = [
    ((0x00000000, 0x00000000, 0x00000000, 0x00000000), (0x00000000, 0x00000000),
     (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF),
     (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


@pytest.mark.parametrize("ctr,key,expected", KAT)
def test_philox_kat(ctr, key, expected):
    assert cr.philox4x32_10_block(ctr, key) == expected
    assert philox(ctr, key) == expected          # the model used below is Philox too


def test_philox_kat_through_the_stream():
    # seed 0, block 0 is KAT line 1: random(4) float32 are its words >> 8
    got = np.asarray(cr.Generator(0).random(4))
    want = np.array([(w >> 8) * 2.0**-24 for w in KAT[0][2]], dtype=np.float32)
    assert got.tobytes() == want.tobytes()


# ---------------------------------------------------------------------------------------------
# every method against the model, bit for bit
# ---------------------------------------------------------------------------------------------

SEED = 0x0123456789ABCDEF     # both key words nonzero


def test_random_matches_model(device):
    g = cr.Generator(SEED)
    a = host(g.random(13, device=device), device)      # blocks 0..3 (the tail of block 3 unused)
    assert a.dtype == np.float32 and a.tobytes() == ref_random_f32(SEED, 13).tobytes()
    b = host(g.random(7, dtype="float64", device=device), device)      # blocks 4..7
    assert b.tobytes() == ref_random_f64(SEED, 7, offset=4).tobytes()
    assert g.offset == 8
    assert g.random() == float(ref_random_f32(SEED, 1, offset=8)[0])
    assert g.random(dtype=ca.float64) == ref_random_f64(SEED, 1, offset=9)[0]
    assert g.offset == 10


def test_uniform_matches_model(device):
    g = cr.Generator(SEED)
    u = ref_random_f32(SEED, 9)
    want = np.float32(-2.0) + (np.float32(3.5) - np.float32(-2.0)) * u
    got = host(g.uniform(-2.0, 3.5, 9, device=device), device)
    assert got.tobytes() == want.astype(np.float32).tobytes()
    u = ref_random_f64(SEED, 5, offset=3)
    got = host(g.uniform(1.0, 11.0, size=5, dtype="float64", device=device), device)
    assert got.tobytes() == (1.0 + 10.0 * u).tobytes()


def test_normal_matches_model(device):
    g = cr.Generator(SEED)
    a = host(g.normal(size=11, device=device), device)
    assert a.dtype == np.float32 and a.tobytes() == ref_normal_f32(SEED, 11).tobytes()
    b = host(g.normal(size=9, dtype="float64", device=device), device)
    assert b.tobytes() == ref_normal_f64(SEED, 9, offset=3).tobytes()
    c = host(g.normal(3.0, 2.0, size=4, dtype="float64", device=device), device)
    assert c.tobytes() == (3.0 + 2.0 * ref_normal_f64(SEED, 4, offset=8)).tobytes()
    d = host(g.normal(np.float32(-1.5), np.float32(0.25), size=6, device=device), device)
    want = np.float32(-1.5) + np.float32(0.25) * ref_normal_f32(SEED, 6, offset=10)
    assert d.tobytes() == want.tobytes()


def test_box_muller_math_is_accurate():
    """The polynomial log and sincos against libm on the exactly reduced angle: within ~2 ulp of
    1 (the reference's own rounding of the angle included)."""
    rng = np.random.default_rng(0)
    for bits in (53, 32):
        edge = [0, 1, 2, 2**(bits - 3) - 1, 2**(bits - 3), 2**(bits - 2), 3 * 2**(bits - 3),
                2**(bits - 1), 2**bits - 2, 2**bits - 1]
        for v in edge + rng.integers(0, 2**bits, 3000).tolist():
            u1 = (v + 1) * 2.0**-bits
            assert abs(ref_log_scaled(v + 1, bits) - math.log(u1)) <= \
                2.5e-16 * max(1.0, -math.log(u1))
            f = v * 2.0**-bits
            t = TWO_PI * (f - round(f))          # the turn reduced exactly, then one rounding
            c, s = ref_sincos_turn(v, bits)
            assert abs(c - math.cos(t)) <= 5e-16 and abs(s - math.sin(t)) <= 5e-16
    # the largest |z|: u1 = 2**-53 gives r = sqrt(106 ln 2) = 8.57; float32 draws reach 6.66
    assert ref_box_muller(0, 0, 53)[0] == pytest.approx(math.sqrt(106 * math.log(2)), rel=1e-15)


@pytest.mark.parametrize("low,high", [(0, 10), (-5, 7), (0, 2**40 + 3),
                                      (-(2**63), 1),                 # span 2**63 + 1: ~1/2 rejected
                                      (-(2**63), 2**63 - 1)])
def test_integers_match_model(low, high, device):
    g = cr.Generator(SEED)
    got = host(g.integers(low, high, size=41, device=device), device)
    assert got.dtype == np.int64
    assert got.tolist() == ref_integers(SEED, low, high, 41).tolist()


def test_integers_full_range_is_low_plus_raw_u64(device):
    g = cr.Generator(SEED)
    got = host(g.integers(-(2**63), 2**63 - 1, size=6, endpoint=True, device=device), device)
    want = [(u64s(SEED, i // 2)[i % 2] - 2**63) % 2**64 for i in range(6)]
    assert got.view(np.uint64).tolist() == want


def test_permutation_matches_model(device):
    g = cr.Generator(SEED)
    x = 23 if device == "cpu" else ca.arange(23, device=device)     # x[perm] is perm
    assert host(g.permutation(x), device).tolist() == ref_permutation(SEED, 23).tolist()
    assert g.offset == 12


# ---------------------------------------------------------------------------------------------
# determinism
# ---------------------------------------------------------------------------------------------

DRAWS = {
    "random": lambda g, n: g.random(n),
    "random64": lambda g, n: g.random(n, dtype="float64"),
    "uniform": lambda g, n: g.uniform(-3, 4, size=n),
    "normal": lambda g, n: g.normal(size=n),
    "normal64": lambda g, n: g.normal(1.0, 2.0, size=n, dtype="float64"),
    "integers": lambda g, n: g.integers(-100, 2**33, size=n),
    "integers32": lambda g, n: g.integers(0, 7, size=n, dtype="int32"),
    "bool": lambda g, n: g.integers(0, 2, size=n, dtype="bool"),
    "permutation": lambda g, n: g.permutation(n),
}


def _draw(kind, seed, n):
    return np.asarray(DRAWS[kind](cr.Generator(seed), n))


@pytest.mark.parametrize("kind", DRAWS)
def test_same_seed_same_numbers(kind):
    assert _draw(kind, 7, 1001).tobytes() == _draw(kind, 7, 1001).tobytes()
    assert _draw(kind, 7, 1001).tobytes() != _draw(kind, 8, 1001).tobytes()
    assert _draw(kind, 7, 1001).tobytes() != _draw(kind, 7 + 2**32, 1001).tobytes()


ON_DEVICE = {
    "random": lambda g, n, d: g.random(n, device=d),
    "random64": lambda g, n, d: g.random(n, dtype="float64", device=d),
    "uniform": lambda g, n, d: g.uniform(-3, 4, size=n, device=d),
    "normal": lambda g, n, d: g.normal(size=n, device=d),
    "normal64": lambda g, n, d: g.normal(1.0, 2.0, size=n, dtype="float64", device=d),
    "integers": lambda g, n, d: g.integers(-100, 2**33, size=n, device=d),
    "integers32": lambda g, n, d: g.integers(0, 7, size=n, dtype="int32", device=d),
    "bool": lambda g, n, d: g.integers(0, 2, size=n, dtype="bool", device=d),
    "permutation": lambda g, n, d: g.permutation(ca.arange(n, device=d)),
}


@pytest.mark.parametrize("kind", ON_DEVICE)
def test_same_numbers_on_every_device(kind, device):
    """One seed gives the same numbers on every device, for every draw (sizes ending inside a
    block, successive draws, one large enough for many work groups)."""
    gc, gd = cr.Generator(17), cr.Generator(17)
    for n in (1, 3, 1001, 70_001):
        want = np.asarray(ON_DEVICE[kind](gc, n, "cpu"))
        got = host(ON_DEVICE[kind](gd, n, device), device)
        assert got.tobytes() == want.tobytes(), n
    assert gd.offset == gc.offset


@pytest.mark.parametrize("kind", DRAWS)
def test_successive_draws_differ(kind):
    g = cr.Generator(5)
    a, b = np.asarray(DRAWS[kind](g, 1000)), np.asarray(DRAWS[kind](g, 1000))
    assert a.tobytes() != b.tobytes()


@pytest.mark.parametrize("kind", DRAWS)
def test_threads_do_not_change_numbers(kind, threads):
    n = 300_001          # above the parallel threshold, ends inside a block
    ca.set_num_threads(1)
    one = _draw(kind, 11, n)
    ca.set_num_threads(2)
    two = _draw(kind, 11, n)
    ca.set_num_threads(3)
    three = _draw(kind, 11, n)
    assert one.tobytes() == two.tobytes() == three.tobytes()


@pytest.mark.parametrize("kind", [k for k in DRAWS if k != "permutation"])
def test_prefix_of_a_larger_draw(kind):
    big = _draw(kind, 3, 200_003)
    for n in (1, 2, 3, 5, 1000, 70_001):
        assert _draw(kind, 3, n).tobytes() == big[:n].tobytes()


@pytest.mark.parametrize("kind,per_block", [("random", 4), ("random64", 2), ("normal", 4),
                                            ("normal64", 2), ("integers", 2)])
def test_draws_concatenate(kind, per_block):
    g = cr.Generator(9)
    parts = [np.asarray(DRAWS[kind](g, per_block * k)) for k in (1, 5, 20_000, 3)]
    assert np.concatenate(parts).tobytes() == _draw(kind, 9, per_block * 20_009).tobytes()
    assert g.offset == 20_009


def test_offset_counts_blocks():
    g = cr.Generator(1)
    g.random(5)                       # 2 blocks
    g.random(5, dtype="float64")      # 3 blocks
    g.normal(size=(2, 3))             # 2 blocks
    g.integers(10, size=0)            # none
    g.integers(10)                    # a scalar takes one block
    g.permutation(7)                  # 4 blocks
    assert g.offset == 12


def test_shape_is_c_order_of_the_flat_draw():
    a = np.asarray(cr.Generator(4).random((3, 5, 2)))
    assert a.shape == (3, 5, 2)
    assert a.ravel().tobytes() == np.asarray(cr.Generator(4).random(30)).tobytes()


def test_pickle_continues_the_stream():
    g = cr.Generator(21)
    g.random(10)
    h = pickle.loads(pickle.dumps(g))
    assert (h.seed, h.offset) == (21, g.offset)
    assert np.asarray(h.normal(size=8)).tobytes() == np.asarray(g.normal(size=8)).tobytes()


def test_default_rng():
    assert isinstance(cr.default_rng(), cr.Generator)
    assert cr.default_rng().seed != cr.default_rng().seed       # 64 bits from os.urandom
    assert cr.default_rng(5).random() == cr.Generator(5).random()
    g = cr.Generator(1)
    assert cr.default_rng(g) is g
    assert "Philox4x32-10" in repr(g) and "seed=1" in repr(g)


# ---------------------------------------------------------------------------------------------
# statistics (fixed seeds, so the checks are deterministic; bounds at ~5 standard errors)
# ---------------------------------------------------------------------------------------------

N = 10**6


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_uniform_moments(dtype):
    u = np.asarray(cr.Generator(100).random(N, dtype=dtype)).astype(np.float64)
    assert u.min() >= 0.0 and u.max() < 1.0
    assert abs(u.mean() - 0.5) < 5 * math.sqrt(1 / 12 / N)
    # var of a uniform: 1/12; Var(sample var) = (1/80 - 1/144) / N
    assert abs(u.var() - 1 / 12) < 5 * math.sqrt((1 / 80 - 1 / 144) / N)
    hist = np.bincount((u * 100).astype(int), minlength=100)
    chi2 = ((hist - N / 100) ** 2 / (N / 100)).sum()
    assert chi2 < 99 + 5 * math.sqrt(2 * 99)
    # neighbours are uncorrelated
    assert abs(np.corrcoef(u[:-1], u[1:])[0, 1]) < 5 / math.sqrt(N)


def test_uniform_range():
    x = np.asarray(cr.Generator(101).uniform(-3.0, 5.0, size=N, dtype="float64"))
    assert x.min() >= -3.0 and x.max() < 5.0
    assert abs(x.mean() - 1.0) < 5 * 8 * math.sqrt(1 / 12 / N)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_normal_moments(dtype):
    z = np.asarray(cr.Generator(102).normal(size=N, dtype=dtype)).astype(np.float64)
    assert np.isfinite(z).all()
    assert abs(z.mean()) < 5 / math.sqrt(N)
    assert abs(z.var() - 1.0) < 5 * math.sqrt(2 / N)
    assert abs((z**3).mean()) < 5 * math.sqrt(15 / N)                 # skewness 0
    assert abs((z**4).mean() - 3.0) < 5 * math.sqrt(96 / N)           # kurtosis 3
    # the two numbers of a Box-Muller pair are uncorrelated
    assert abs(np.corrcoef(z[0::2], z[1::2])[0, 1]) < 5 / math.sqrt(N / 2)
    # chi-square against the normal CDF on 40 equiprobable-ish bins in [-4, 4]
    edges = np.linspace(-4, 4, 41)
    cdf = np.array([0.5 * (1 + math.erf(e / math.sqrt(2))) for e in edges])
    expected = np.diff(cdf) * N
    observed = np.histogram(z, edges)[0]
    chi2 = ((observed - expected) ** 2 / expected).sum()
    assert chi2 < 39 + 5 * math.sqrt(2 * 39)


def test_normal_loc_scale():
    x = np.asarray(cr.Generator(103).normal(10.0, 3.0, size=N, dtype="float64"))
    assert abs(x.mean() - 10.0) < 5 * 3 / math.sqrt(N)
    assert abs(x.std() - 3.0) < 5 * 3 * math.sqrt(0.5 / N)


@pytest.mark.parametrize("low,high,dtype", [(0, 10, "int64"), (-7, 13, "int32"),
                                            (0, 2, "bool"), (-(2**62), 2**62, "int64"),
                                            (0, 256, "uint8"), (-128, -100, "int8"),
                                            (2**63 - 20, 2**63 - 1, "uint64")])
def test_integers_uniform_chi_square(low, high, dtype):
    x = np.asarray(cr.Generator(104).integers(low, high, size=N, dtype=dtype))
    assert x.dtype == np.dtype(dtype)
    x = x.astype(np.int64)
    assert x.min() >= low and x.max() < high
    k = high - low if high - low <= 64 else 16          # the wide span is a multiple of 16
    bins = x - low if high - low <= 64 else (x - low) // ((high - low) // k)
    hist = np.bincount(bins, minlength=k)
    chi2 = ((hist - N / k) ** 2 / (N / k)).sum()
    assert chi2 < (k - 1) + 5 * math.sqrt(2 * (k - 1))


def test_integers_endpoint_reaches_high():
    x = np.asarray(cr.Generator(105).integers(3, 6, size=10_000, endpoint=True))
    assert set(x.tolist()) == {3, 4, 5, 6}
    x = np.asarray(cr.Generator(105).integers(5, size=10_000))        # high None: [0, 5)
    assert set(x.tolist()) == {0, 1, 2, 3, 4}


def test_permutation_is_a_permutation():
    for n in (0, 1, 2, 5, 1000, 100_003):
        p = np.asarray(cr.Generator(n).permutation(n))
        assert p.dtype == np.int64 and sorted(p.tolist()) == list(range(n))
    # every position of a 4-element permutation is uniform over the 4 values
    g = cr.Generator(106)
    counts = np.zeros((4, 4))
    for _ in range(4000):
        p = np.asarray(g.permutation(4))
        counts[np.arange(4), p] += 1
    chi2 = ((counts - 1000) ** 2 / 1000).sum()
    assert chi2 < 9 + 5 * math.sqrt(18) + 20          # 16 cells, 9 free


def test_permutation_of_arrays():
    x = np.arange(24, dtype=np.float32).reshape(6, 4)
    g = cr.Generator(107)
    p = np.asarray(g.permutation(ca.asarray(x)))
    perm = np.asarray(cr.Generator(107).permutation(6))
    assert p.dtype == np.float32 and p.shape == (6, 4)
    assert np.array_equal(p, x[perm])
    # a non-contiguous view, a list, a 1-d array of ints, a NumPy array
    v = ca.asarray(x).T
    assert np.array_equal(np.asarray(cr.Generator(1).permutation(v)),
                          x.T[np.asarray(cr.Generator(1).permutation(4))])
    assert sorted(np.asarray(cr.Generator(2).permutation([5, 6, 7])).tolist()) == [5, 6, 7]
    perm = np.asarray(cr.Generator(2).permutation(np.arange(10)))
    assert sorted(perm.tolist()) == list(range(10))
    assert np.asarray(cr.Generator(2).permutation(np.int64(3))).shape == (3,)
    assert np.asarray(cr.Generator(2).permutation(np.zeros((0, 3)))).shape == (0, 3)


@pytest.mark.parametrize("axis", [1, -1, 2, -3])
def test_permutation_axis(axis):
    """axis= shuffles along that axis (a C-contiguous copy), as NumPy; AxisError beyond ndim."""
    x = np.arange(60).reshape(3, 4, 5)
    p = cr.Generator(5).permutation(ca.asarray(x), axis=axis)
    perm = np.asarray(cr.Generator(5).permutation(x.shape[axis]))
    assert p.flags.c_contiguous and np.array_equal(np.asarray(p), np.take(x, perm, axis=axis))
    assert_raises_like(lambda: cr.Generator(5).permutation(ca.asarray(x), axis=3),
                       lambda: np.random.default_rng(5).permutation(x, axis=3))


def test_integers_float_bounds_truncate_like_numpy():
    """Float bounds truncate toward zero (as NumPy, and as float array bounds already did)."""
    g = cr.Generator(3)
    assert g.integers(2.9) in (0, 1)
    assert set(np.asarray(g.integers(-0.9, 1.5, size=50)).tolist()) == {0}
    assert type(g.integers(np.float64(5.0))) is int
    for bad in (0.5, math.nan, math.inf):
        assert_raises_like(lambda: g.integers(bad), lambda: np.random.default_rng(0).integers(bad))


# ---------------------------------------------------------------------------------------------
# arguments: size, dtype, device, broadcasting parameters
# ---------------------------------------------------------------------------------------------

def test_size_none_returns_python_scalars():
    g = cr.Generator(0)
    assert type(g.random()) is float and type(g.random(dtype="float64")) is float
    assert type(g.uniform(1, 2)) is float and type(g.normal()) is float
    assert type(g.integers(5)) is int and type(g.integers(0, 2, dtype="bool")) is bool
    assert type(g.integers(5, dtype="int32")) is int


@pytest.mark.parametrize("size,shape", [(0, (0,)), (3, (3,)), ((), ()), ((2, 0, 3), (2, 0, 3)),
                                        ([2, 3], (2, 3)), (np.int64(4), (4,)),
                                        (np.array([2, 3]), (2, 3))])
def test_size_forms(size, shape):
    g = cr.Generator(0)
    for a in (g.random(size), g.uniform(size=size), g.normal(size=size), g.integers(9, size=size)):
        assert isinstance(a, ca.Array) and a.shape == shape and a.device == "cpu"


def test_dtypes():
    g = cr.Generator(0)
    assert g.random(3).dtype == ca.float32                     # carray's default float
    assert g.random(3, dtype=ca.float64).dtype == ca.float64
    assert g.uniform(size=3, dtype=np.float64).dtype == ca.float64
    assert g.normal(size=3, dtype="float64").dtype == ca.float64
    assert g.integers(3, size=3).dtype == ca.int64
    assert g.integers(3, size=3, dtype="int32").dtype == ca.int32
    assert g.integers(2, size=3, dtype=bool).dtype == ca.bool_


def test_device_argument():
    g = cr.Generator(0)
    assert g.random(3, device="cpu").device == "cpu"
    for f in (lambda: g.normal(size=3, device="tpu"),
              lambda: g.integers(3, size=3, device="gpu:1")):
        with pytest.raises(ValueError):
            f()


def test_uniform_array_parameters():
    low = np.array([0.0, 10.0, -5.0])
    high = np.array([[1.0], [2.0]])
    u = ref_random_f64(12, 6).reshape(2, 3)
    with pytest.raises(ValueError, match="high - low < 0"):      # at low 10, high 1
        cr.Generator(12).uniform(ca.asarray(low), ca.asarray(high), dtype="float64")
    high = np.array([[11.0], [12.0]])
    got = np.asarray(cr.Generator(12).uniform(low, high, dtype="float64"))
    assert got.shape == (2, 3)
    assert got.tobytes() == (low + (high - low) * u).tobytes()
    got = np.asarray(cr.Generator(12).uniform([0.0, 1.0, 2.0], 3.0, size=(2, 3), dtype="float64"))
    assert got.tobytes() == (np.array([0.0, 1.0, 2.0]) + (3.0 - np.array([0.0, 1.0, 2.0])) * u
                             ).tobytes()
    with pytest.raises(ValueError):      # does not broadcast to size
        cr.Generator(12).uniform([0.0, 1.0, 2.0], 3.0, size=(2, 4))


def test_normal_array_parameters():
    loc = np.array([0.0, 100.0, -100.0, 5.0])
    z = ref_normal_f64(13, 8).reshape(2, 4)
    got = np.asarray(cr.Generator(13).normal(loc, 2.0, size=(2, 4), dtype="float64"))
    np.testing.assert_allclose(got, loc + 2.0 * z, rtol=1e-14, atol=1e-13)
    got = np.asarray(cr.Generator(13).normal(0.0, ca.asarray([1.0, 0.0, 2.0, 3.0]), size=4))
    assert got.dtype == np.float32 and got[1] == 0.0
    with pytest.raises(ValueError, match="scale < 0"):
        cr.Generator(13).normal(0.0, [1.0, -1.0])


def test_integers_array_parameters():
    g = cr.Generator(14)
    x = np.asarray(g.integers([0, 10, 100], [5, 20, 1000], size=(1000, 3)))
    assert x.shape == (1000, 3)
    assert (x[:, 0] >= 0).all() and (x[:, 0] < 5).all()
    assert (x[:, 1] >= 10).all() and (x[:, 1] < 20).all()
    assert (x[:, 2] >= 100).all() and (x[:, 2] < 1000).all()
    # one array bound: the same numbers as the scalar stream where the bounds agree
    a = np.asarray(cr.Generator(15).integers(ca.asarray([3, 3, 3]), 9))
    assert a.tolist() == np.asarray(cr.Generator(15).integers(3, 9, size=3)).tolist()
    y = np.asarray(cr.Generator(16).integers(np.array([0, 1]), 2, endpoint=True))
    assert y.shape == (2,) and 0 <= y[0] <= 2 and 1 <= y[1] <= 2
    with pytest.raises(ValueError, match="high <= low"):
        cr.Generator(16).integers([0, 5], [3, 5])


# ---------------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------------

def test_errors_like_numpy():
    """Each bad call raises with carray where NumPy raises, an exception of the same kind."""
    g = cr.Generator(0)
    ng = np.random.default_rng(0)
    cases = [
        ("random", lambda m, dt: m.random(3, dtype=dt("int32"))),
        ("random-negative", lambda m, dt: m.random(-1)),
        ("random-neg-tuple", lambda m, dt: m.random((2, -1))),
        ("random-float-size", lambda m, dt: m.random(2.5)),
        ("uniform-range", lambda m, dt: m.uniform(2.0, 1.0, size=3)),
        ("uniform-inf", lambda m, dt: m.uniform(0.0, math.inf)),
        ("normal-scale", lambda m, dt: m.normal(0.0, -1.0)),
        ("integers-empty", lambda m, dt: m.integers(5, 5)),
        ("integers-reversed", lambda m, dt: m.integers(5, 4)),
        ("integers-float-dtype", lambda m, dt: m.integers(0, 10, dtype=dt("float32"))),
        ("integers-int32-high", lambda m, dt: m.integers(0, 2**31 + 1, dtype=dt("int32"))),
        ("integers-int32-low", lambda m, dt: m.integers(-(2**31) - 1, 0, dtype=dt("int32"))),
        ("integers-bool-high", lambda m, dt: m.integers(0, 3, dtype=dt("bool"))),
        ("integers-int64-high", lambda m, dt: m.integers(0, 2**63 + 1)),
        ("integers-endpoint", lambda m, dt: m.integers(0, 2**63, endpoint=True)),
        ("integers-high-none", lambda m, dt: m.integers(0)),
        ("permutation-0d", lambda m, dt: m.permutation(np.array(5))),
        ("permutation-float", lambda m, dt: m.permutation(5.0)),
    ]
    for _name, f in cases:
        assert_raises_like(lambda: f(g, ca.dtype), lambda: f(ng, np.dtype))


def test_error_messages():
    g = cr.Generator(0)
    with pytest.raises(ValueError, match="high <= low"):
        g.integers(3, 3)
    with pytest.raises(ValueError, match="scale < 0"):
        g.normal(scale=-0.5, size=2)
    with pytest.raises(ValueError, match="high - low < 0"):
        g.uniform(1.0, 0.0)
    with pytest.raises(TypeError, match="Unsupported dtype"):
        g.integers(0, 3, dtype="float32")
    with pytest.raises(TypeError, match="Unsupported dtype"):
        g.normal(dtype="int64")
    with pytest.raises(TypeError):
        g.integers("0", 3)
    for dt, bad in (("uint8", (0, 257)), ("int8", (-129, 0)), ("uint16", (-1, 3))):
        with pytest.raises(ValueError, match=f"out of bounds for {dt}"):
            np.random.default_rng(0).integers(*bad, dtype=dt)
        with pytest.raises(ValueError, match=f"out of bounds for {dt}"):
            g.integers(*bad, dtype=dt)
    with pytest.raises(ValueError, match="negative dimensions"):
        g.normal(size=-2)


def test_seed_errors():
    for bad in (1.5, "1", [1], True):
        with pytest.raises(TypeError):
            cr.Generator(bad)
    for bad in (-1, 2**64):
        with pytest.raises(ValueError):
            cr.Generator(bad)
    assert cr.Generator(2**64 - 1).seed == 2**64 - 1
    assert cr.Generator(np.uint64(2**63)).seed == 2**63

"""float16 and bfloat16: conversions bit for bit against NumPy (and ml_dtypes, or a bit-level
reference), arithmetic in float32 rounded back, reductions, matmul, sorting, interop."""

import math
import pickle
import struct

import numpy as np
import pytest

import carray as ca

from conftest import on, to_numpy

ALL16 = np.arange(65536, dtype=np.uint16)
F16 = ALL16.view(np.float16)


def bits16(a):
    """The uint16 bits of a carray 2-byte float array."""
    return np.asarray(a.to("cpu").view("uint16"))


def assert_bits(a, ref, err_msg=""):
    """carray 2-byte float array a holds ref's values bit for bit (any NaN matches any NaN:
    its sign is the platform's, not the op's)."""
    got, want = bits16(a), np.asarray(ref).view(np.uint16)
    nan = (got & 0x7FFF > 0x7C00) & (want & 0x7FFF > 0x7C00) if np.asarray(ref).dtype == \
        np.float16 else (got & 0x7FFF > 0x7F80) & (want & 0x7FFF > 0x7F80)
    np.testing.assert_array_equal(np.where(nan, 0, got), np.where(nan, 0, want), err_msg=err_msg)


def bf16_from_f32(x):
    """Reference float32 -> bfloat16 bits: round to nearest even, NaN kept quiet."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    return np.where(nan, ((u >> 16) | 0x40).astype(np.uint16), r)


def bf16_from_f64(x):
    """Reference float64 -> bfloat16 bits, rounded once (exactly, via Python's fractions)."""
    out = []
    for v in np.asarray(x, dtype=np.float64).ravel().tolist():
        if math.isnan(v):
            out.append(0x7FC0 | (0x8000 if math.copysign(1, v) < 0 else 0))
            continue
        # bfloat16 values are float32 values with 16 zero low bits: pick the nearest, ties even
        f = struct.unpack("<I", struct.pack("<f", np.float32(v)))[0] & 0xFFFF0000 if \
            math.isfinite(v) and abs(v) < 3.4e38 else None
        if f is None:
            out.append(0x7F80 | (0x8000 if v < 0 else 0))
            continue
        cands = [(f >> 16) + d for d in (-1, 0, 1) if 0 <= (f >> 16) + d < 0x10000]
        vals = [struct.unpack("<f", struct.pack("<I", c << 16))[0] for c in cands]
        best = min(zip(cands, vals), key=lambda cv: (abs(cv[1] - v), cv[0] & 1))
        out.append(best[0])
    return np.array(out, dtype=np.uint16).reshape(np.shape(x))


# -- conversions ---------------------------------------------------------------------------

def test_every_float16_to_float32_and_float64_and_back(device):
    a = on(ca.asarray(ALL16).view(ca.float16), device)
    for name in ("float32", "float64"):
        wide = a.astype(name)
        np.testing.assert_array_equal(to_numpy(wide).view(f"u{np.dtype(name).itemsize}"),
                                      F16.astype(name).view(f"u{np.dtype(name).itemsize}"))
        back = wide.astype(ca.float16)
        np.testing.assert_array_equal(bits16(back), F16.astype(name).astype(np.float16)
                                      .view(np.uint16))


@pytest.mark.filterwarnings("ignore:overflow encountered")
def test_float32_and_float64_to_float16_round_once(device):
    rng = np.random.default_rng(0)
    f32 = rng.standard_normal(4000).astype(np.float32) * np.float32(3e4)
    f32 = np.concatenate([f32, (rng.random(1000) * 1e-4).astype(np.float32),
                          np.array([65504, 65519.99, 65520, 1e9, -1e9, np.nan, np.inf, -0.0,
                                    2**-25, 2**-24, 3 * 2**-26], np.float32)])
    # doubles just above a float16 tie: rounding through float32 would land on the tie
    ties = (1 + 2.0**-11) + np.array([2.0**-40, -(2.0**-40), 2.0**-30, 0])
    f64 = np.concatenate([f32.astype(np.float64) * (1 + 1e-9), ties,
                          2.0**-25 * (1 + np.array([2.0**-40, 0]))])
    for x in (f32, f64):
        got = bits16(on(ca.asarray(x), device).astype(ca.float16))
        np.testing.assert_array_equal(got, x.astype(np.float16).view(np.uint16))


@pytest.mark.filterwarnings("ignore:overflow encountered")
def test_float16_from_and_to_every_dtype(device):
    vals = np.array([0, 1, 2, 7, 100, 127, 255, 300, 2048, 2049, 65504, 65519, 65520, 70000],
                    dtype=np.int64)
    for name in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                 "uint64"):
        n = vals.astype(name)
        a = on(ca.asarray(n), device)
        np.testing.assert_array_equal(bits16(a.astype(ca.float16)),
                                      n.astype(np.float16).view(np.uint16))
        h = np.array([0, 1.5, 2.5, 100.25, 255.0, -0.0], np.float16)
        if name != "bool" and name[0] == "u":
            h = np.abs(h)
        got = to_numpy(on(ca.asarray(h), device).astype(name))
        np.testing.assert_array_equal(got, h.astype(name))


def test_bfloat16_conversions_bit_level(device):
    rng = np.random.default_rng(1)
    f32 = np.concatenate([rng.standard_normal(3000).astype(np.float32) * 1e3,
                          np.array([np.nan, -np.nan, np.inf, -np.inf, 3.4e38, 1e-40, -0.0,
                                    1 + 2.0**-8, 1 + 3 * 2.0**-8], np.float32)])
    a = on(ca.asarray(f32), device)
    b = a.astype(ca.bfloat16)
    np.testing.assert_array_equal(bits16(b), bf16_from_f32(f32))
    # back to float32: exact (the bits shifted up)
    back = to_numpy(b.astype(ca.float32)).view(np.uint32)
    np.testing.assert_array_equal(back, bits16(b).astype(np.uint32) << 16)
    # doubles round once: 1 + 2**-8 + tiny is above the tie and rounds up
    f64 = np.array([1 + 2.0**-8 + 2.0**-30, 1 + 2.0**-8, 1 + 3 * 2.0**-8 - 2.0**-40, -2.5e-39,
                    1e300, np.nan], np.float64)
    np.testing.assert_array_equal(bits16(on(ca.asarray(f64), device).astype(ca.bfloat16)),
                                  bf16_from_f64(f64))
    ints = np.array([2**24 + 2**16 + 1, -(2**31), 2**31 - 1, 255, 257], np.int64)
    for name in ("int32", "int64"):
        got = bits16(on(ca.asarray(ints.astype(name)), device).astype(ca.bfloat16))
        np.testing.assert_array_equal(got, bf16_from_f64(ints.astype(np.float64)))


def test_bfloat16_matches_ml_dtypes(device):
    ml = pytest.importorskip("ml_dtypes")
    every = ca.asarray(ALL16).view(ca.bfloat16)
    ref = ALL16.view(ml.bfloat16).astype(np.float32)
    np.testing.assert_array_equal(to_numpy(on(every, device).astype(ca.float32)).view(np.uint32),
                                  ref.view(np.uint32))
    x = np.random.default_rng(2).standard_normal(500).astype(np.float32)
    np.testing.assert_array_equal(bits16(on(ca.asarray(x), device).astype(ca.bfloat16)),
                                  x.astype(ml.bfloat16).view(np.uint16))


def test_scalars_factories_and_printing(device):
    a = ca.asarray([0.1, 1.0, 65504.0], dtype="float16", device=device)
    assert a.dtype == ca.float16 and a.itemsize == 2
    assert a.tolist() == np.array([0.1, 1.0, 65504.0], np.float16).tolist()
    assert float(a[0]) == float(np.float16(0.1))
    assert repr(a.to("cpu")) == repr(np.array([0.1, 1.0, 65504.0], np.float16))
    assert repr(ca.asarray([0.1, 1.0], dtype=ca.float16)) == "array([0.1, 1. ], dtype=float16)"
    assert str(ca.asarray(0.1, dtype=ca.float16)) == str(np.float16(0.1))
    assert repr(ca.asarray([1e4, 2.0], dtype=ca.float16)) == repr(np.array([1e4, 2], np.float16))
    assert repr(ca.asarray([0.1, 1.0], dtype=ca.bfloat16)) == \
        "array([0.1, 1. ], dtype=bfloat16)"
    for dt in ("float16", "bfloat16"):
        np.testing.assert_array_equal(to_numpy(ca.zeros((2, 3), dtype=dt, device=device)
                                               .astype("float32")), np.zeros((2, 3)))
        assert ca.full((2,), 1.5, dtype=dt, device=device).tolist() == [1.5, 1.5]
        assert ca.arange(4, dtype=dt, device=device).tolist() == [0, 1, 2, 3]
        assert ca.ones(3, dtype=dt, device=device).dtype == dt
        np.testing.assert_array_equal(
            to_numpy(ca.linspace(0, 1, 5, dtype=dt, device=device).astype("float32")),
            np.linspace(0, 1, 5))
        assert ca.eye(2, dtype=dt, device=device).tolist() == [[1, 0], [0, 1]]
    assert ca.asarray([], dtype=ca.float16).shape == (0,)


def test_pickle_and_dlpack_and_buffer():
    a = ca.asarray([1.5, -2.0, 0.1], dtype=ca.float16)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(a)).tolist(), a.tolist())
    b = a.astype(ca.bfloat16)
    assert pickle.loads(pickle.dumps(b)).dtype == ca.bfloat16
    m = memoryview(a)
    assert m.format == "e" and m.itemsize == 2
    n = np.asarray(a)
    assert n.dtype == np.float16
    n[0] = 3.0                                  # zero-copy
    assert a[0] == 3.0
    back = ca.asarray(np.array([0.5, 7.0], np.float16))
    assert back.dtype == ca.float16 and back.tolist() == [0.5, 7.0]
    assert ca.from_dlpack(a).dtype == ca.float16
    assert ca.from_dlpack(b).dtype == ca.bfloat16
    assert ca.from_dlpack(b).tolist() == b.tolist()


def test_numpy_interop_bfloat16():
    b = ca.asarray([1.5, -2.0, 0.1], dtype=ca.bfloat16)
    with pytest.raises(BufferError, match="bfloat16"):
        memoryview(b)
    ml = pytest.importorskip("ml_dtypes")
    n = np.asarray(b)
    assert n.dtype == ml.bfloat16
    np.testing.assert_array_equal(n.astype(np.float32), np.float32([1.5, -2.0, 0.1]).astype(
        ml.bfloat16).astype(np.float32))
    back = ca.asarray(n)
    assert back.dtype == ca.bfloat16 and back.tolist() == b.tolist()


def test_torch_dlpack():
    torch = pytest.importorskip("torch")
    for tdt, cdt in ((torch.float16, ca.float16), (torch.bfloat16, ca.bfloat16)):
        t = torch.tensor([1.5, -2.0, 0.1], dtype=tdt)
        a = ca.from_dlpack(t)
        assert a.dtype == cdt and a.tolist() == t.tolist()
        assert torch.from_dlpack(a).dtype == tdt
        assert torch.from_dlpack(a).tolist() == t.tolist()


# -- arithmetic ----------------------------------------------------------------------------

BINARY = ("add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "arctan2",
          "hypot", "floor_divide", "mod")
UNARY = ("negative", "abs", "exp", "log", "sqrt", "square", "sin", "tanh", "floor", "ceil",
         "reciprocal", "sign", "expm1", "log1p")


def _randn16(shape, seed):
    return (np.random.default_rng(seed).standard_normal(shape) * 3).astype(np.float16)


def test_elementwise_float16_bit_for_bit_with_numpy(device):
    x = _randn16((5, 6), 0)
    y = _randn16((6,), 1)
    ax, ay = on(ca.asarray(x), device), on(ca.asarray(y), device)
    with np.errstate(all="ignore"):
        for name in BINARY:
            got = getattr(ca, name)(ax, ay)
            ref = getattr(np, name)(x, y)
            assert got.dtype == ca.float16, name
            assert_bits(got, ref, err_msg=name)
        for name in UNARY:
            got = getattr(ca, name)(ax[:, ::2])
            ref = getattr(np, name)(x[:, ::2])
            assert got.dtype == ca.float16, name
            assert_bits(got, ref, err_msg=name)
        for name in ("less", "equal", "greater_equal"):
            np.testing.assert_array_equal(to_numpy(getattr(ca, name)(ax, ay)),
                                          getattr(np, name)(x, y))
        np.testing.assert_array_equal(to_numpy(ca.isnan(ax / 0)), np.isnan(x / 0))


def test_python_scalars_are_weak_and_promotion(device):
    x = _randn16((4,), 3)
    a = on(ca.asarray(x), device)
    for got, ref in ((a + 0.1, x + 0.1), (a * 3, x * 3), (2.5 - a, 2.5 - x), (a ** 2, x ** 2)):
        assert got.dtype == ca.float16
        np.testing.assert_array_equal(bits16(got), ref.view(np.uint16))
    # promotion with every other dtype follows NumPy
    for name in ("bool", "int8", "uint8", "int16", "int32", "int64", "uint64", "float32",
                 "float64"):
        other = on(ca.ones(2, dtype=name), device)
        assert (a[:2] + other).dtype == np.result_type(np.float16, name).name, name
    assert ca.result_type(ca.float16, ca.bfloat16) == ca.float32
    assert (on(ca.ones(2, dtype="int8"), device) / 2).dtype == ca.float64
    assert ca.sqrt(on(ca.ones(2, dtype="uint8"), device)).dtype == ca.float16
    b = a.astype(ca.bfloat16)
    assert (b + 1.5).dtype == ca.bfloat16 and (b + a).dtype == ca.float32


def test_bfloat16_arithmetic_rounds_float32_result(device):
    x = np.random.default_rng(4).standard_normal((3, 4)).astype(np.float32)
    y = np.random.default_rng(5).standard_normal(4).astype(np.float32)
    bx = bf16_from_f32(x).astype(np.uint32) << 16
    by = bf16_from_f32(y).astype(np.uint32) << 16
    xf, yf = bx.view(np.float32), by.view(np.float32)
    a = on(ca.asarray(x), device).astype(ca.bfloat16)
    b = on(ca.asarray(y), device).astype(ca.bfloat16)
    np.testing.assert_array_equal(bits16(a * b), bf16_from_f32(xf * yf))
    np.testing.assert_array_equal(bits16(ca.exp(a)), bf16_from_f32(np.exp(xf)))


def test_empty_zero_d_and_views(device):
    a = on(ca.asarray(np.float16(2.5)), device)
    assert (a * 2).shape == () and float(a * 2) == 5.0
    e = on(ca.zeros((0, 3), dtype=ca.bfloat16), device)
    assert (e + 1).shape == (0, 3) and e.sum(axis=0).tolist() == [0, 0, 0]
    x = _randn16((4, 5), 6)
    v = on(ca.asarray(x), device)[::-1, 1::2].T
    np.testing.assert_array_equal(bits16(v + v), (x[::-1, 1::2].T * 2).view(np.uint16))
    np.testing.assert_array_equal(bits16(ca.ascontiguousarray(v)),
                                  np.ascontiguousarray(x[::-1, 1::2].T).view(np.uint16))


def test_reductions(device):
    x = _randn16((6, 7), 7)
    a = on(ca.asarray(x), device)
    for name in ("sum", "mean", "max", "min", "prod", "var", "std"):
        for axis in (None, 0, 1):
            got = getattr(ca, name)(a, axis=axis)
            ref = getattr(np, name)(x, axis=axis)
            assert got.dtype == ca.float16, name
            np.testing.assert_allclose(to_numpy(got).astype(np.float32), ref.astype(np.float32),
                                       rtol=4e-3, atol=1e-2, err_msg=name)
    for name in ("argmax", "argmin"):
        np.testing.assert_array_equal(to_numpy(getattr(ca, name)(a, axis=1)),
                                      getattr(np, name)(x, axis=1))
    np.testing.assert_array_equal(to_numpy(ca.cumsum(a, axis=1)).astype(np.float32),
                                  np.cumsum(x.astype(np.float32), axis=1).astype(np.float16)
                                  .astype(np.float32))
    assert ca.cumsum(a).dtype == ca.float16 and ca.cumprod(a, axis=0).dtype == ca.float16
    assert bool(ca.any(a)) and not bool(ca.all(a * 0))


def test_matmul_where_clip_sort_join(device):
    x = _randn16((5, 8), 8)
    y = _randn16((8, 3), 9)
    a, b = on(ca.asarray(x), device), on(ca.asarray(y), device)
    got = a @ b
    assert got.dtype == ca.float16
    np.testing.assert_allclose(to_numpy(got).astype(np.float32),
                               x.astype(np.float32) @ y.astype(np.float32), rtol=2e-3, atol=2e-2)
    assert ca.tensordot(a, b, axes=1).dtype == ca.float16
    np.testing.assert_array_equal(bits16(ca.where(a > 0, a, 0.5)),
                                  np.where(x > 0, x, np.float16(0.5)).view(np.uint16))
    np.testing.assert_array_equal(bits16(ca.clip(a, -1, 1)), np.clip(x, -1, 1).view(np.uint16))
    np.testing.assert_array_equal(bits16(ca.sort(a, axis=1)), np.sort(x, axis=1).view(np.uint16))
    np.testing.assert_array_equal(to_numpy(ca.argsort(a, axis=0)),
                                  np.argsort(x, axis=0, kind="stable"))
    s = np.sort(x.ravel())
    np.testing.assert_array_equal(to_numpy(ca.searchsorted(on(ca.asarray(s), device),
                                                           a[0])),
                                  np.searchsorted(s, x[0]))
    np.testing.assert_array_equal(bits16(ca.unique_values(a[:2])),
                                  np.unique(x[:2]).view(np.uint16))
    np.testing.assert_array_equal(bits16(ca.concatenate([a, a[:1]])),
                                  np.concatenate([x, x[:1]]).view(np.uint16))
    np.testing.assert_array_equal(bits16(ca.stack([a, a], axis=1)),
                                  np.stack([x, x], axis=1).view(np.uint16))
    np.testing.assert_array_equal(bits16(a[ca.asarray([0, 3, 3])]), x[[0, 3, 3]].view(np.uint16))
    np.testing.assert_array_equal(bits16(a[a > 0]), x[x > 0].view(np.uint16))
    np.testing.assert_array_equal(bits16(ca.take(a, ca.asarray([1, 0]), axis=1)),
                                  np.take(x, [1, 0], axis=1).view(np.uint16))
    c = a.copy()
    c[1:3, ::2] = 7.0
    x2 = x.copy()
    x2[1:3, ::2] = 7.0
    np.testing.assert_array_equal(bits16(c), x2.view(np.uint16))


# -- namespace and bad input ---------------------------------------------------------------

def test_finfo_isdtype_can_cast():
    for dt, ref in ((ca.float16, np.finfo(np.float16)),):
        fi = ca.finfo(dt)
        for attr in ("eps", "max", "min", "smallest_normal", "tiny", "resolution", "bits"):
            assert float(getattr(fi, attr)) == float(getattr(ref, attr)), attr
        assert fi.dtype == ca.float16
    fb = ca.finfo(ca.bfloat16)
    assert (fb.bits, fb.eps, fb.smallest_normal) == (16, 2.0**-7, 2.0**-126)
    assert abs(fb.resolution - 0.01) < 1e-4
    assert fb.max == (2 - 2.0**-7) * 2.0**127
    ml = pytest.importorskip("ml_dtypes")
    rb = ml.finfo(ml.bfloat16)
    assert (fb.eps, fb.max, fb.tiny, fb.resolution) == (float(rb.eps), float(rb.max),
                                                         float(rb.tiny), float(rb.resolution))
    assert ca.isdtype(ca.float16, "real floating") and ca.isdtype(ca.bfloat16, "real floating")
    assert not ca.isdtype(ca.float16, "integral")
    assert ca.can_cast(ca.float16, ca.float32) and ca.can_cast(ca.int8, ca.float16)
    assert not ca.can_cast(ca.float32, ca.float16) and not ca.can_cast(ca.int16, ca.float16)
    info = ca.__array_namespace_info__().dtypes()
    numpy_info = np.__array_namespace_info__().dtypes()
    assert ("float16" in info) == ("float16" in numpy_info)


def test_bad_input():
    a = ca.eye(3, dtype=ca.float16)
    with pytest.raises(TypeError):
        np.linalg.inv(np.eye(3, dtype=np.float16))
    with pytest.raises(TypeError, match="float16"):
        ca.linalg.inv(a)
    with pytest.raises(TypeError):
        a & a
    with pytest.raises(ValueError, match="itemsize"):
        a.view(ca.float32)


def test_nn_random_and_add_at(device):
    x = on(ca.asarray(_randn16((2, 3, 5, 5), 10)), device)
    w = on(ca.asarray(_randn16((4, 3, 3, 3), 11)), device)
    for dt in ("float16", "bfloat16"):
        xd, wd = x.astype(dt), w.astype(dt)
        ref = ca.nn.conv2d(xd.astype("float32"), wd.astype("float32")).astype(dt)
        got = ca.nn.conv2d(xd, wd)
        assert got.dtype == dt
        np.testing.assert_array_equal(bits16(got), bits16(ref))
        s = ca.nn.softmax(xd.reshape(6, 25))
        assert s.dtype == dt
        np.testing.assert_array_equal(bits16(s), bits16(ca.nn.softmax(
            xd.reshape(6, 25).astype("float32")).astype(dt)))
    g = ca.random.Generator(0)
    with pytest.raises(TypeError, match="float16"):
        g.random(3, dtype="float16")
    with pytest.raises(TypeError, match="float16"):
        np.random.default_rng(0).random(3, dtype=np.float16)
    a = on(ca.zeros(4, dtype=ca.float16), device)
    ca.add_at(a, ca.asarray([0, 0, 3]), 1.5)
    assert a.tolist() == [3.0, 0.0, 0.0, 1.5]

"""The array API namespace: __array_namespace__, __array_namespace_info__, finfo, iinfo,
isdtype, can_cast, astype, result_type, constants, to_device; against NumPy 2's answers."""

import math

import numpy as np
import pytest

import carray as ca
from carray.core._dtype import DTYPE_NAMES

from conftest import have_gpu, on

DTYPES = [ca.dtype(n) for n in DTYPE_NAMES]
NP_DTYPES = [t for t in DTYPES if t.name != "bfloat16"]     # NumPy has no bfloat16
KINDS = ["bool", "signed integer", "unsigned integer", "integral", "real floating",
         "complex floating", "numeric"]


def test_namespace_and_versions(device):
    x = on([1.0, 2.0], device)
    assert x.__array_namespace__() is ca
    for v in ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12"):
        assert x.__array_namespace__(api_version=v) is ca
    with pytest.raises(ValueError, match="2019.12"):
        x.__array_namespace__(api_version="2019.12")
    assert ca.__array_api_version__ == "2025.12"


def test_constants():
    assert (ca.e, ca.pi, ca.inf) == (math.e, math.pi, math.inf)
    assert math.isnan(ca.nan) and ca.newaxis is None
    assert ca.zeros((2, 3))[:, ca.newaxis].shape == (2, 1, 3)


def test_info():
    info = ca.__array_namespace_info__()
    caps = info.capabilities()
    assert caps["boolean indexing"] and caps["data-dependent shapes"]
    assert caps["max dimensions"] == 32
    assert info.default_device() == "cpu"
    assert info.devices() == (("cpu", "gpu") if have_gpu() else ("cpu",))
    d = info.default_dtypes()
    assert (d["real floating"], d["integral"], d["indexing"]) == (ca.float32, ca.int64, ca.int64)
    everything = info.dtypes()
    # as NumPy's: the standard's dtypes (no float16, nor bfloat16)
    assert list(everything) == [n for n in DTYPE_NAMES if n not in ("float16", "bfloat16")]
    for kind in KINDS:
        got = info.dtypes(kind=kind)
        assert got == {n: t for n, t in everything.items() if ca.isdtype(t, kind)}
    assert info.dtypes(kind=("bool", "real floating")) == {
        n: t for n, t in everything.items() if t.kind in "bf"}
    with pytest.raises(ValueError, match="tpu"):
        info.dtypes(device="tpu")
    if have_gpu():
        on_gpu = info.dtypes(device="gpu")
        assert "float32" in on_gpu and set(on_gpu) <= set(everything)
        assert ("float64" in on_gpu) == ca.opencl.fp64


@pytest.mark.parametrize("dt", NP_DTYPES, ids=str)
def test_isdtype_matches_numpy(dt):
    for kind in KINDS:
        assert ca.isdtype(dt, kind) == np.isdtype(np.dtype(dt.name), kind), kind
    assert ca.isdtype(dt, dt) and ca.isdtype(dt, ("bool", dt))
    with pytest.raises(ValueError, match="'integer'"):
        ca.isdtype(dt, "integer")
    with pytest.raises(TypeError, match="dtype"):
        ca.isdtype(dt.name, "bool")


def test_can_cast_matches_numpy():
    for a in NP_DTYPES:
        for b in NP_DTYPES:
            assert ca.can_cast(a, b) == np.can_cast(np.dtype(a.name), np.dtype(b.name)), (a, b)
    assert ca.can_cast(ca.zeros(2, dtype=ca.int32), ca.float64)
    with pytest.raises(TypeError, match="dtype"):
        ca.can_cast([1], ca.int32)


@pytest.mark.parametrize("dt", [t for t in DTYPES if t.kind in "fc"], ids=str)
def test_finfo_matches_numpy(dt):
    got, want = ca.finfo(dt), np.finfo(np.dtype(dt.name))
    for attr in ("bits", "eps", "max", "min", "smallest_normal", "tiny", "resolution",
                 "precision"):
        assert getattr(got, attr) == getattr(want, attr), attr
        if attr != "bits" and attr != "precision":
            assert isinstance(getattr(got, attr), float)
    assert got.dtype == want.dtype.name
    assert ca.finfo(ca.zeros(1, dtype=dt)).eps == got.eps


@pytest.mark.parametrize("dt", [t for t in DTYPES if t.kind in "iu"], ids=str)
def test_iinfo_matches_numpy(dt):
    got, want = ca.iinfo(dt), np.iinfo(np.dtype(dt.name))
    assert (got.bits, got.min, got.max) == (want.bits, want.min, want.max)
    assert got.dtype == dt


def test_finfo_iinfo_errors():
    with pytest.raises(ValueError, match="int64"):
        ca.finfo(ca.int64)
    with pytest.raises(ValueError, match="float32"):
        ca.iinfo(ca.float32)
    with pytest.raises(TypeError, match="not understood|expected"):
        ca.finfo("float13")


def test_astype_function(device):
    x = on([1.5, -2.5], device)
    y = ca.astype(x, ca.int32)
    assert y.dtype == ca.int32 and y.device == device and y.tolist() == [1, -2]
    assert ca.astype(x, ca.float32, copy=False) is x
    assert ca.astype(x, ca.float32) is not x
    z = ca.astype(x, ca.float64, device="cpu")
    assert z.device == "cpu" and z.dtype == ca.float64
    with pytest.raises(TypeError, match="Array"):
        ca.astype([1, 2], ca.int32)


def test_to_device(device):
    x = ca.arange(4)
    y = x.to_device(device)
    assert y.device == device and y.tolist() == [0, 1, 2, 3]
    assert y.to_device(device) is y
    with pytest.raises(ValueError, match="stream"):
        x.to_device("cpu", stream=1)


def test_result_type_with_python_scalars():
    i32 = ca.zeros(2, dtype=ca.int32)
    assert ca.result_type(i32, 1) == ca.int32
    assert ca.result_type(ca.float64, 1.0, True) == ca.float64
    assert ca.result_type(i32, 1.5) == ca.float32   # carray's default float


def test_broadcast_arrays_is_a_tuple(device):
    a, b = on(np.arange(3.0), device), on(np.ones((2, 1)), device)
    out = ca.broadcast_arrays(a, b)
    assert isinstance(out, tuple) and [o.shape for o in out] == [(2, 3), (2, 3)]

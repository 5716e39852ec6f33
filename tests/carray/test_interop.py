"""Interop against NumPy (and PyTorch when installed): the buffer protocol both ways, DLPack both
ways, pickling and copying, the Python scalar protocols, and `import carray` without NumPy."""

import copy
import ctypes
import gc
import json
import math
import operator
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import carray as ca

from conftest import ALL_DTYPES, assert_same, make_pair, random_basic_key, shapes, to_numpy

SET = settings(max_examples=50, deadline=None)
SMALL = settings(max_examples=25, deadline=None)

FORMATS = {"bool": {"?"}, "int32": {"i"}, "int64": {"q", "l"}, "float32": {"f"},
           "float64": {"d"}, "int8": {"b"}, "int16": {"h"}, "uint8": {"B"}, "uint16": {"H"},
           "uint32": {"I"}, "uint64": {"Q", "L"}}


@st.composite
def views(draw, dtypes=ALL_DTYPES, max_dims=4, allow_broadcast=True, allow_negative=True):
    """(carray view, the same NumPy view, carray owner, NumPy owner) with equal contents; the
    view is a random basic index, maybe transposed or broadcast."""
    dtype = draw(st.sampled_from(dtypes))
    shape = draw(shapes(max_dims=max_dims))
    a, n = make_pair(dtype, shape, draw(st.integers(0, 2**32 - 1)))
    key = draw(random_basic_key(shape))
    if not allow_negative:
        key = _positive(key)
    va, vn = a[key], n[key]
    if not isinstance(vn, np.ndarray):
        va, vn = a[...], n[...]
    how = draw(st.sampled_from(["plain", "T", "broadcast"] if allow_broadcast else ["plain", "T"]))
    if how == "T":
        va, vn = va.T, vn.T
    elif how == "broadcast":
        target = (draw(st.integers(0, 3)),) + vn.shape
        va, vn = ca.broadcast_to(va, target), np.broadcast_to(vn, target)
    return va, vn, a, n


def _positive(key):
    """key with every slice step made positive (PyTorch cannot hold negative strides)."""
    items = key if isinstance(key, tuple) else (key,)
    out = tuple(slice(k.start, k.stop, abs(k.step)) if isinstance(k, slice) and k.step else k
                for k in items)
    return out if isinstance(key, tuple) else out[0]


def _first(shape):
    return (0,) * len(shape)


def _changed(v):
    return (not v) if isinstance(v, (bool, np.bool_)) else v + 1


# ---------------------------------------------------------------------------------------------
# buffer protocol: export
# ---------------------------------------------------------------------------------------------

@SET
@given(views())
def test_memoryview_matches_numpy(v):
    va, vn, _, _ = v
    m, mn = memoryview(va), memoryview(vn)
    assert m.format in FORMATS[vn.dtype.name] and mn.format in FORMATS[vn.dtype.name]
    assert m.itemsize == mn.itemsize == vn.itemsize
    assert m.ndim == vn.ndim and m.shape == vn.shape
    for d, size in enumerate(vn.shape):
        if size > 1 and vn.size:    # NumPy normalises the strides of length-1 dims (and of
            assert m.strides[d] == vn.strides[d]        # empty arrays, to 0)
    assert m.readonly == mn.readonly == (not vn.flags.writeable)
    assert m.nbytes == mn.nbytes
    assert m.tobytes() == mn.tobytes()          # C-order bytes of the elements
    if vn.ndim:
        assert m.tolist() == mn.tolist()
    assert m.obj is va
    m.release()


def test_memoryview_of_special_layouts():
    a = ca.arange(24, dtype="float64").reshape(2, 3, 4)
    cases = {"contiguous": a, "transposed": a.T, "negative": a[::-1, :, ::-2],
             "broadcast": ca.broadcast_to(ca.arange(4, dtype="int32"), (3, 4)),
             "0-d": ca.asarray(1.5), "empty": ca.zeros((0, 3))}
    n = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    expect = {"contiguous": n, "transposed": n.T, "negative": n[::-1, :, ::-2],
              "broadcast": np.broadcast_to(np.arange(4, dtype=np.int32), (3, 4)),
              "0-d": np.asarray(1.5, dtype=np.float32), "empty": np.zeros((0, 3), np.float32)}
    for name, arr in cases.items():
        m, e = memoryview(arr), expect[name]
        assert (m.shape, m.itemsize) == (e.shape, e.itemsize), name
        if e.size:
            assert m.strides == e.strides, name
        else:
            assert m.strides == (12, 4)             # C strides (NumPy 2.4 reports 0s)
        assert m.readonly == (name == "broadcast"), name
        assert m.c_contiguous == e.flags.c_contiguous, name
        assert m.tobytes() == e.tobytes(), name


def test_memoryview_writes_reach_the_array():
    a = ca.zeros(4, dtype="int64")
    m = memoryview(a)
    m[1] = 7
    assert a.tolist() == [0, 7, 0, 0]
    a[2] = -3
    assert m[2] == -3
    b = ca.broadcast_to(a, (2, 4))
    with pytest.raises(TypeError):
        memoryview(b)[0, 0] = 1                    # a read-only buffer


def test_contiguous_consumers_refuse_strided_arrays():
    a = ca.arange(6.0).reshape(2, 3)
    assert bytes(a) == np.arange(6.0, dtype=np.float32).tobytes()   # contiguous: fine
    n = np.arange(6.0).reshape(2, 3)
    with pytest.raises(Exception) as expected:
        ctypes.c_char.from_buffer(n.T)             # needs a C-contiguous buffer
    with pytest.raises(expected.type):
        ctypes.c_char.from_buffer(a.T)
    assert bytes(memoryview(a.T)) == np.arange(6.0, dtype=np.float32).reshape(2, 3).T.tobytes()


@SET
@given(views())
def test_numpy_asarray_is_zero_copy(v):
    va, vn, a, n = v
    m = to_numpy(va)                # checks the data pointer and strides
    assert_same(va, vn, strides=False)
    assert m.flags.writeable == vn.flags.writeable
    if m.size:
        assert np.shares_memory(m, to_numpy(a))
        if m.flags.writeable:
            i = _first(m.shape)
            new = _changed(m[i])
            m[i] = new                              # NumPy -> carray
            assert va[i].item() == new
            va[i] = _changed(new)                   # carray -> NumPy
            assert m[i] == _changed(new)


def test_numpy_view_keeps_the_array_alive():
    a = ca.arange(1000, dtype="float64")
    m = np.asarray(a[::3])
    del a
    gc.collect()
    assert m.tolist() == np.arange(1000.0)[::3].tolist()


# ---------------------------------------------------------------------------------------------
# buffer protocol: import (NumPy arrays, memoryviews)
# ---------------------------------------------------------------------------------------------

@SET
@given(views(allow_broadcast=True))
def test_asarray_of_numpy_views_shares(v):
    _, vn, _, n = v
    a = ca.asarray(vn)
    assert_same(a, vn, strides=False)
    for d, size in enumerate(vn.shape):
        if size > 1 and vn.size:
            assert a.strides[d] == vn.strides[d]
    assert a.flags.writeable == vn.flags.writeable
    if vn.size:
        assert np.shares_memory(to_numpy(a), n)
    else:
        assert a.tolist() == vn.tolist()


def test_asarray_of_memoryview_shares():
    n = np.arange(12, dtype=np.int32).reshape(3, 4)
    a = ca.asarray(memoryview(n)[::-1])
    assert_same(a, n[::-1])
    a[0, 0] = 100
    assert n[2, 0] == 100


# ---------------------------------------------------------------------------------------------
# DLPack
# ---------------------------------------------------------------------------------------------

def test_dlpack_device():
    assert ca.zeros(3).__dlpack_device__() == (1, 0)
    assert ca.zeros(3).__dlpack_device__() == np.zeros(3).__dlpack_device__()
    assert ca.broadcast_to(ca.zeros(3), (2, 3)).__dlpack_device__() == (1, 0)


@SET
@given(views())
def test_numpy_from_dlpack_is_zero_copy(v):
    va, vn, _, _ = v
    m = np.from_dlpack(va)
    assert m.shape == vn.shape and m.dtype == vn.dtype
    assert np.array_equal(m, vn, equal_nan=vn.dtype.kind == "f")
    assert m.flags.writeable == vn.flags.writeable     # a broadcast view stays read-only
    if m.size:
        assert m.__array_interface__["data"][0] == va.data_ptr
        assert m.strides == va.strides
        if m.flags.writeable:
            i = _first(m.shape)
            va[i] = _changed(m[i])
            assert m[i] == va[i].item()


@SET
@given(views(allow_broadcast=False))
def test_carray_from_dlpack_of_numpy_is_zero_copy(v):
    _, vn, _, _ = v
    a = ca.from_dlpack(vn)
    assert_same(a, vn, strides=False)
    if vn.size:
        assert a.data_ptr == vn.__array_interface__["data"][0]
        for d, size in enumerate(vn.shape):
            if size > 1:
                assert a.strides[d] == vn.strides[d]
        i = _first(vn.shape)
        a[i] = _changed(vn[i])
        assert vn[i] == a[i].item()


def test_from_dlpack_read_only_and_copy():
    n = np.arange(6.0).reshape(2, 3)
    n.flags.writeable = False
    a = ca.from_dlpack(n)
    assert not a.flags.writeable and np.shares_memory(to_numpy(a), n)
    with pytest.raises(ValueError, match="read-only"):
        a[0, 0] = 1
    w = np.arange(4)
    c = ca.from_dlpack(w, copy=True)
    c[0] = 9
    assert w[0] == 0 and c.tolist() == [9, 1, 2, 3]
    m = np.from_dlpack(ca.arange(4), copy=True)
    assert m.tolist() == [0, 1, 2, 3]
    with pytest.raises(TypeError):
        ca.from_dlpack([1, 2, 3])


def test_from_dlpack_device(device):
    """device= puts the result there (a copy on "gpu"), as the array API's from_dlpack."""
    n = np.arange(6.0).reshape(2, 3)
    a = ca.from_dlpack(n, device=device)
    assert a.device == device and to_numpy(a).tolist() == n.tolist()
    assert np.shares_memory(to_numpy(a), n) == (device == "cpu")


def test_dlpack_capsules():
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype = ctypes.c_char_p
    get_name.argtypes = [ctypes.py_object]
    a = ca.arange(5)
    assert get_name(a.__dlpack__()) == b"dltensor"
    assert get_name(a.__dlpack__(max_version=(1, 0))) == b"dltensor_versioned"
    b = ca.broadcast_to(a, (2, 5))
    assert get_name(b.__dlpack__(max_version=(1, 0))) == b"dltensor_versioned"
    with pytest.raises(BufferError):        # a legacy capsule cannot say "read-only"
        b.__dlpack__()
    # capsules that nobody consumes release their reference to the array
    before = sys.getrefcount(a)
    for _ in range(100):
        a.__dlpack__()
        a.__dlpack__(max_version=(1, 0))
    gc.collect()
    assert sys.getrefcount(a) == before


def test_dlpack_bad_arguments_raise():
    a = ca.arange(3)
    for bad in ((), (1,), (1, 0, 0)):
        with pytest.raises(TypeError, match="max_version"):
            a.__dlpack__(max_version=bad)
    with pytest.raises(BufferError, match="device"):
        a.__dlpack__(dl_device=(2, 0))
    with pytest.raises(ValueError, match="stream"):
        a.__dlpack__(stream=5)

    class BadDevice:
        def __dlpack__(self, **kwargs):
            return a.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return ()

    with pytest.raises(BufferError, match="device"):
        ca.from_dlpack(BadDevice())

    class NotACapsule(BadDevice):
        def __dlpack_device__(self):
            return (1, 0)

        def __dlpack__(self, **kwargs):
            return "capsule"

    with pytest.raises(BufferError, match="capsule"):
        ca.from_dlpack(NotACapsule())


def test_empty_dlpack_tensor_without_data_pointer():
    # PyTorch exports empty tensors with a NULL data pointer
    torch = pytest.importorskip("torch")
    for shape in [(0,), (2, 0), (0, 3, 1)]:
        t = torch.zeros(shape)
        a = ca.from_dlpack(t)
        assert a.shape == shape and a.tolist() == t.tolist() and a.dtype == "float32"
        assert np.asarray(a).shape == shape


def test_numpy_from_dlpack_keeps_the_array_alive():
    a = ca.arange(100, dtype="int32")
    m = np.from_dlpack(a[10:50:2])
    del a
    gc.collect()
    assert m.tolist() == list(range(10, 50, 2))


# -- PyTorch ----------------------------------------------------------------------------------

TORCH_DTYPES = ("bool", "int32", "int64", "float32", "float64")


@SMALL
@given(views(allow_negative=False))
def test_torch_from_dlpack_is_zero_copy(v):
    # PyTorch has no negative strides (it aborts the process on them, from NumPy as well),
    # so the views here step forwards only.
    torch = pytest.importorskip("torch")
    va, vn, _, _ = v
    t = torch.from_dlpack(va)
    assert tuple(t.shape) == vn.shape
    assert str(t.dtype) == f"torch.{vn.dtype.name}"
    assert np.array_equal(t.numpy(), vn, equal_nan=vn.dtype.kind == "f")
    if t.numel():
        assert t.data_ptr() == va.data_ptr
        for ts, s, size in zip(t.stride(), va.strides, va.shape):
            assert size <= 1 or ts * va.itemsize == s       # stride 0 for broadcast dims
        if va.flags.writeable:
            i = _first(vn.shape)
            t[i] = not bool(t[i]) if vn.dtype == np.bool_ else \
                t[i] + 1 if vn.dtype.kind != "u" or vn.itemsize == 1 else 1   # (torch: no + here)
            assert va[i].item() == t[i].item()


@SMALL
@given(st.sampled_from(TORCH_DTYPES), shapes(max_dims=3), st.integers(0, 2**32 - 1),
       st.booleans())
def test_carray_from_torch_is_zero_copy(dtype, shape, seed, transposed):
    torch = pytest.importorskip("torch")
    _, n = make_pair(dtype, shape, seed)
    t = torch.from_numpy(n.copy())
    if transposed:
        t = t.T if t.ndim >= 2 else t
        n = n.T if n.ndim >= 2 else n
    for a in (ca.from_dlpack(t), ca.asarray(t)):
        assert_same(a, t.numpy(), strides=False)
        if t.numel():
            assert a.data_ptr == t.data_ptr()
            assert all(size <= 1 or s == ts * t.element_size()
                       for s, ts, size in zip(a.strides, t.stride(), a.shape))
            i = _first(n.shape)
            a[i] = not a[i].item() if dtype == "bool" else a[i].item() + 1
            assert t[i].item() == a[i].item()


def test_torch_round_trip_examples():
    torch = pytest.importorskip("torch")
    t = torch.arange(12.0).reshape(3, 4)[:, ::2]
    a = ca.from_dlpack(t)
    assert a.shape == (3, 2) and a.strides == (16, 8) and a.dtype == "float32"
    a[0, 0] = 99
    assert t[0, 0].item() == 99
    back = torch.from_dlpack(a.T)
    assert back.shape == (2, 3) and back.data_ptr() == t.data_ptr()
    assert ca.asarray(torch.tensor([True, False])).tolist() == [True, False]
    c = ca.array(t)                     # array() copies
    c[0, 0] = -1
    assert t[0, 0].item() == 99


# ---------------------------------------------------------------------------------------------
# pickling and copying
# ---------------------------------------------------------------------------------------------

@SET
@given(views(), st.integers(0, pickle.HIGHEST_PROTOCOL))
def test_pickle_round_trip(v, protocol):
    va, vn, _, _ = v
    b = pickle.loads(pickle.dumps(va, protocol=protocol))
    expect = vn.copy(order="C")
    assert_same(b, expect)
    assert b.base is None and b.flags.writeable and b.flags.c_contiguous
    if b.size:
        assert not np.shares_memory(to_numpy(b), to_numpy(va))
    # NumPy's own pickle of the same view gives the same values
    assert np.array_equal(pickle.loads(pickle.dumps(vn)), to_numpy(b),
                          equal_nan=vn.dtype.kind == "f")


@SET
@given(views())
def test_copy_and_deepcopy(v):
    va, vn, _, _ = v
    for b in (copy.copy(va), copy.deepcopy(va)):
        assert_same(b, vn.copy(order="C"))
        assert b is not va and b.base is None and b.flags.writeable
        if b.size:
            assert not np.shares_memory(to_numpy(b), to_numpy(va))


def test_pickle_and_deepcopy_keep_shared_references():
    a = ca.arange(3)
    for out in (pickle.loads(pickle.dumps([a, a])), copy.deepcopy([a, a])):
        assert out[0] is out[1] and out[0] is not a
        assert out[0].tolist() == [0, 1, 2]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 2), (2, 3)])
def test_pickle_each_dtype_and_shape(dtype, shape):
    a, n = make_pair(dtype, shape, 7, special=True)
    b = pickle.loads(pickle.dumps(a))
    assert_same(b, n)
    assert b.dtype is a.dtype


# ---------------------------------------------------------------------------------------------
# Python scalar protocols
# ---------------------------------------------------------------------------------------------

def _same_scalar(x, y):
    return type(x) is type(y) and (x == y or (isinstance(x, float) and math.isnan(x)
                                                and math.isnan(y)))


def _same_list(x, y):
    if isinstance(x, list):
        return isinstance(y, list) and len(x) == len(y) and all(map(_same_list, x, y))
    return _same_scalar(x, y)


@SET
@given(views())
def test_tolist(v):
    va, vn, _, _ = v
    assert _same_list(va.tolist(), vn.tolist())


@SET
@given(st.sampled_from(ALL_DTYPES), shapes(max_dims=3, min_side=1), st.integers(0, 2**32 - 1),
       st.data())
def test_item(dtype, shape, seed, data):
    a, n = make_pair(dtype, shape, seed, special=True)
    if a.size == 1:
        assert _same_scalar(a.item(), n.item())
    flat = data.draw(st.integers(-n.size, n.size - 1))
    assert _same_scalar(a.item(flat), n.item(flat))
    index = tuple(data.draw(st.integers(-s, s - 1)) for s in shape)
    assert _same_scalar(a.item(*index), n.item(*index))
    if index:
        assert _same_scalar(a.item(index), n.item(index))
        assert _same_scalar(a[index].item(), n[index].item())


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("value", [0, 1, -3, 2.75, -0.5, float("inf"), float("nan")])
def test_scalar_conversions_of_0d(dtype, value):
    if dtype not in ("bool", "float32", "float64") and (not math.isfinite(value) or value < 0):
        return                      # NumPy's cast of nan/inf (and < 0 to uint) is undefined
    n = np.asarray(value).astype(dtype)
    a = ca.asarray(n)
    assert _same_scalar(float(a), float(n))
    assert _same_scalar(bool(a), bool(n))
    c, cn = complex(a), complex(n)
    assert _same_scalar(c.real, cn.real) and c.imag == cn.imag == 0
    if math.isfinite(float(n)):
        assert _same_scalar(int(a), int(n))
    else:
        with pytest.raises(Exception) as expected:      # ValueError for nan, OverflowError inf
            int(n)
        with pytest.raises(expected.type):
            int(a)
    if dtype not in ("bool", "float32", "float64"):
        assert operator.index(a) == operator.index(n)
        assert [10, 20, 30, 40, 50][a] == [10, 20, 30, 40, 50][n]
    else:
        for x in (a, n):
            with pytest.raises(TypeError):
                operator.index(x)
    assert format(a, "") == format(n, "")
    assert format(a, ".3f") == format(n, ".3f")


@pytest.mark.parametrize("shape", [(1,), (1, 1), (1, 1, 1)])
def test_size_one_arrays_convert_to_bool_and_item(shape):
    for value in (0, 5):
        a, n = ca.full(shape, value), np.full(shape, value)
        assert bool(a) is bool(n)
        assert _same_scalar(a.item(), n.item())


@SET
@given(views())
def test_len_and_iter(v):
    va, vn, _, _ = v
    if vn.ndim == 0:
        with pytest.raises(TypeError):
            len(va)
        with pytest.raises(TypeError):
            iter(va)
        return
    assert len(va) == len(vn)
    rows = list(va)
    assert len(rows) == len(vn)
    for ra, rn in zip(rows, vn):
        assert isinstance(ra, ca.Array)
        assert_same(ra, rn, strides=False)
        assert ra.base is (va if va.base is None else va.base)     # rows are views


# ---------------------------------------------------------------------------------------------
# no NumPy at import
# ---------------------------------------------------------------------------------------------

NO_NUMPY = r'''
import sys, json, pickle, array

class BlockNumPy:
    def find_spec(self, name, path=None, target=None):
        if name == "numpy" or name.startswith("numpy."):
            raise ImportError(f"numpy is blocked in this test ({name})")

sys.meta_path.insert(0, BlockNumPy())
import carray as ca

a = ca.arange(6).reshape(2, 3)
out = {
    "T": a.T.tolist(),
    "dtype_list": ca.asarray([[1.5, 2], [3, 4]]).dtype.name,
    "zeros": ca.zeros((2, 2), dtype="int32").tolist(),
    "full": ca.full(3, 7).tolist(),
    "linspace": ca.linspace(0, 1, 5).tolist(),
    "eye": ca.eye(2).tolist(),
    "index": a[1, ::-1].tolist(),
    "mask": a[ca.asarray([True, False])].tolist(),
    "pickle": pickle.loads(pickle.dumps(a.T)).tolist(),
    "buffer": ca.asarray(array.array("d", [1.0, 2.0])).tolist(),
    "memoryview": memoryview(a).tolist(),
    "promote": ca.promote_types("int32", "float32").name,
    "repr": repr(ca.arange(3)),
    "numpy_loaded": "numpy" in sys.modules,
}
print(json.dumps(out))
'''


def test_import_carray_does_not_import_numpy(tmp_path):
    script = tmp_path / "no_numpy.py"
    script.write_text(NO_NUMPY)
    root = os.path.dirname(os.path.dirname(os.path.abspath(ca.__file__)))
    env = dict(os.environ, PYTHONPATH=root)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=60, env=env, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["numpy_loaded"] is False
    assert out["T"] == [[0, 3], [1, 4], [2, 5]]
    assert out["dtype_list"] == "float32"
    assert out["zeros"] == [[0, 0], [0, 0]]
    assert out["full"] == [7, 7, 7]
    assert out["linspace"] == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert out["eye"] == [[1.0, 0.0], [0.0, 1.0]]
    assert out["index"] == [5, 4, 3]
    assert out["mask"] == [[0, 1, 2]]
    assert out["pickle"] == [[0, 3], [1, 4], [2, 5]]
    assert out["buffer"] == [1.0, 2.0]
    assert out["memoryview"] == [[0, 1, 2], [3, 4, 5]]
    assert out["promote"] == "float64"
    assert out["repr"] == "array([0, 1, 2])"


def test_pickles_from_before_the_layout_by_role_still_load():
    # pickles made before carray/core/ existed name carray._array._reconstruct
    a = ca.arange(6, dtype="float64").reshape(2, 3)
    new = pickle.dumps(a, protocol=0)
    assert b"carray.core._array" in new
    old = new.replace(b"carray.core._array", b"carray._array")
    b = pickle.loads(old)
    assert b.shape == (2, 3) and b.dtype == ca.float64 and b.tolist() == a.tolist()

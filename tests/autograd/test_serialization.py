"""autograd.save / autograd.load (safetensors): round trips of every dtype and layout, the exact
bytes of the reference writer, each kind of corrupted file raising ValueError, and files
exchanged with the `safetensors` package (when installed)."""

import io
import json
import os
import struct

import numpy as np
import pytest

import autograd
import carray
from autograd.serialization import load_metadata

DTYPES = ("float32", "float64", "int32", "int64", "bool")


def values(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.startswith("int"):
        return np.asarray(rng.integers(-2**31, 2**31 - 1, size=shape).astype(dtype))
    return np.asarray(rng.standard_normal(shape).astype(dtype))


def as_numpy(t):
    return np.asarray(t.array)


def raw_file(header, data=b"", pad=True):
    """The bytes of a safetensors file with the given header (a dict, or raw JSON bytes)."""
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    if pad:
        text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


F32_ONE = {"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}


# ---------------------------------------------------------------------------------------------
# round trips
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 2), (1,), (5,), (2, 3, 4)])
def test_round_trip(tmp_path, dtype, shape):
    n = values(dtype, shape)
    path = tmp_path / "t.safetensors"
    autograd.save({"x": autograd.tensor(n)}, path)
    out = autograd.load(path)
    assert list(out) == ["x"]
    t = out["x"]
    assert isinstance(t, autograd.Tensor)
    assert t.dtype.name == dtype and t.shape == shape and t.device == "cpu"
    assert not t.requires_grad and t.is_leaf
    np.testing.assert_array_equal(as_numpy(t), n)
    assert t.array.flags.c_contiguous and t.array.flags.owndata


def test_many_tensors_and_names(tmp_path):
    state = {f"layer{i}.{kind}": autograd.tensor(values(dt, (i + 1, 2), seed=i))
             for i, (kind, dt) in enumerate([("w", "float32"), ("b", "float64"), ("n", "int64"),
                                             ("m", "bool"), ("i", "int32"), ("w2", "float32")])}
    state["ünïcödé name/with spaces"] = autograd.ones(2)
    state[""] = autograd.zeros(())
    autograd.save(state, str(tmp_path / "m.safetensors"))
    out = autograd.load(str(tmp_path / "m.safetensors"))
    assert set(out) == set(state)
    for k, v in state.items():
        assert out[k].dtype == v.dtype and out[k].shape == v.shape
        np.testing.assert_array_equal(as_numpy(out[k]), as_numpy(v))


def test_non_contiguous_views_are_saved_as_their_values(tmp_path):
    base = autograd.tensor(values("float64", (4, 6)))
    views = {"T": base.t(), "step": base[::2, 1::3], "neg": base.flip(0),
             "bcast": autograd.tensor([1, 2, 3]).expand(4, 3)}
    autograd.save(views, tmp_path / "v.safetensors")
    out = autograd.load(tmp_path / "v.safetensors")
    for k, v in views.items():
        assert out[k].shape == v.shape
        np.testing.assert_array_equal(as_numpy(out[k]), as_numpy(v))


def test_requires_grad_tensors_are_saved_detached(tmp_path):
    w = autograd.randn(3, 2, requires_grad=True)
    y = w * 2
    autograd.save({"w": w, "y": y}, tmp_path / "g.safetensors")
    out = autograd.load(tmp_path / "g.safetensors")
    assert not out["w"].requires_grad and out["y"].grad_fn is None
    np.testing.assert_array_equal(as_numpy(out["y"]), as_numpy(w.detach()) * 2)


def test_carray_arrays_are_accepted(tmp_path):
    a = carray.arange(6, dtype=carray.int32).reshape(2, 3).T
    autograd.save({"a": a}, tmp_path / "a.safetensors")
    out = autograd.load(tmp_path / "a.safetensors")
    assert out["a"].tolist() == a.tolist()


def test_loaded_tensors_own_their_memory(tmp_path):
    autograd.save({"a": autograd.ones(3), "b": autograd.zeros(2)}, tmp_path / "o.safetensors")
    out = autograd.load(tmp_path / "o.safetensors")
    out["a"].add_(1)
    assert out["a"].tolist() == [2.0, 2.0, 2.0] and out["b"].tolist() == [0.0, 0.0]


def test_metadata(tmp_path):
    path = tmp_path / "meta.safetensors"
    autograd.save({"x": autograd.ones(1)}, path, metadata={"format": "pt", "epoch": "3"})
    assert load_metadata(path) == {"format": "pt", "epoch": "3"}
    assert autograd.load(path)["x"].tolist() == [1.0]
    autograd.save({"x": autograd.ones(1)}, path)
    assert load_metadata(path) == {}


def test_state_dict_of_a_module(tmp_path):
    nn = pytest.importorskip("autograd.nn")
    if not hasattr(nn, "Linear"):
        pytest.skip("autograd.nn.Linear is not there yet")
    model = nn.Linear(4, 3)
    autograd.save(model.state_dict(), tmp_path / "lin.safetensors")
    other = nn.Linear(4, 3)
    other.load_state_dict(autograd.load(tmp_path / "lin.safetensors"))
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(as_numpy(other.state_dict()[k]), as_numpy(v))


def test_file_objects(tmp_path):
    buf = io.BytesIO()
    autograd.save({"x": autograd.arange(4)}, buf)
    buf.seek(0)
    assert autograd.load(buf)["x"].tolist() == [0, 1, 2, 3]


def test_empty_dict(tmp_path):
    autograd.save({}, tmp_path / "e.safetensors")
    assert (tmp_path / "e.safetensors").read_bytes() == b"\x08" + b"\0" * 7 + b"{}      "
    assert autograd.load(tmp_path / "e.safetensors") == {}


def test_device_argument(tmp_path):
    autograd.save({"x": autograd.ones(2)}, tmp_path / "d.safetensors")
    assert autograd.load(tmp_path / "d.safetensors", device="cpu")["x"].device == "cpu"


# ---------------------------------------------------------------------------------------------
# the bytes written
# ---------------------------------------------------------------------------------------------

def test_layout_matches_the_reference_writer(tmp_path):
    """Header padded with spaces to 8 bytes, compact JSON, __metadata__ first, tensors ordered
    by dtype alignment (I64, F64, F32, I32, BOOL) then name, data back to back."""
    state = {"b": autograd.zeros(2), "a": autograd.zeros(3, dtype=autograd.bool),
             "c": autograd.zeros(1, dtype=autograd.int64), "d": autograd.zeros(1).double(),
             "e": autograd.zeros(1, dtype=autograd.int32), "Z": autograd.zeros(0, 2)}
    path = tmp_path / "l.safetensors"
    autograd.save(state, path, metadata={"k": "v"})
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    assert n % 8 == 0
    text = raw[8:8 + n]
    assert text == text.rstrip(b" ") + b" " * (len(text) - len(text.rstrip(b" ")))
    header = json.loads(text)
    assert list(header) == ["__metadata__", "c", "d", "Z", "b", "e", "a"]
    assert b", " not in text and b": " not in text
    offsets = [header[k]["data_offsets"] for k in list(header)[1:]]
    assert offsets == [[0, 8], [8, 16], [16, 16], [16, 24], [24, 28], [28, 31]]
    assert len(raw) == 8 + n + 31


def test_bytes_equal_the_safetensors_package(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    arrays = {f"t{i}.{dt}": values(dt, shape, seed=i) for i, (dt, shape) in enumerate(
        [(d, s) for d in DTYPES for s in [(), (0, 3), (2, 3)]])}
    ours = tmp_path / "ours.safetensors"
    autograd.save({k: autograd.tensor(v) for k, v in arrays.items()}, ours,
                  metadata={"format": "np"})
    assert ours.read_bytes() == st.save(arrays, metadata={"format": "np"})


# ---------------------------------------------------------------------------------------------
# interoperability with the safetensors package
# ---------------------------------------------------------------------------------------------

def test_safetensors_loads_our_files(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    arrays = {dt: values(dt, (3, 4)) for dt in DTYPES}
    arrays["scalar"] = np.float32(2.5).reshape(())
    arrays["empty"] = np.zeros((0, 5), np.int64)
    state = {k: autograd.tensor(v) for k, v in arrays.items()}
    state["view"] = autograd.tensor(arrays["float64"]).t()
    arrays["view"] = arrays["float64"].T
    autograd.save(state, tmp_path / "o.safetensors", metadata={"who": "autograd"})
    back = st.load_file(str(tmp_path / "o.safetensors"))
    assert set(back) == set(arrays)
    for k, v in arrays.items():
        assert back[k].dtype == v.dtype and back[k].shape == v.shape
        np.testing.assert_array_equal(back[k], v)
    from safetensors import safe_open
    with safe_open(str(tmp_path / "o.safetensors"), framework="np") as f:
        assert f.metadata() == {"who": "autograd"}


def test_we_load_safetensors_files(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    arrays = {dt: values(dt, (2, 5), seed=3) for dt in DTYPES}
    arrays["scalar"] = np.array(7, np.int32)
    arrays["empty"] = np.zeros((4, 0), np.float32)
    st.save_file(arrays, str(tmp_path / "st.safetensors"), metadata={"a": "b"})
    out = autograd.load(tmp_path / "st.safetensors")
    assert set(out) == set(arrays)
    for k, v in arrays.items():
        assert out[k].dtype.name == v.dtype.name and out[k].shape == v.shape
        np.testing.assert_array_equal(as_numpy(out[k]), v)
    assert load_metadata(tmp_path / "st.safetensors") == {"a": "b"}


def test_unsupported_dtype_of_the_format_is_named(tmp_path):
    header = b'{"u":{"dtype":"F8_E5M2","shape":[3],"data_offsets":[0,3]}}'
    header += b" " * (-len(header) % 8)
    (tmp_path / "f8.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 3)
    with pytest.raises(ValueError, match="F8_E5M2"):
        autograd.load(tmp_path / "f8.safetensors")


# ---------------------------------------------------------------------------------------------
# corrupted files
# ---------------------------------------------------------------------------------------------

def good_file():
    buf = io.BytesIO()
    autograd.save({"a": autograd.arange(6).reshape(2, 3), "b": autograd.ones(3)}, buf)
    return buf.getvalue()


CORRUPT = {
    "empty file": (b"", "too short"),
    "short length": (b"\x10\0\0", "too short"),
    "header past the end": (struct.pack("<Q", 1000) + b"{}", "truncated"),
    "huge header length": (struct.pack("<Q", 2**63) + b"{}", "limit"),
    "not utf-8": (raw_file(b'{"\xff":1}'), "UTF-8"),
    "not json": (raw_file(b"{not json}"), "not JSON"),
    "zero header length": (struct.pack("<Q", 0), "not JSON"),
    "json list": (raw_file(b"[1, 2]"), "expected a JSON object"),
    "json number": (raw_file(b"8"), "expected a JSON object"),
    "garbage after json": (raw_file(b'{"a":1} x'), "not JSON"),
    "nul padding": (raw_file(b"{}\0\0\0\0\0\0", pad=False), "not JSON"),
    "entry not an object": (raw_file({"a": [1]}), "expected an object"),
    "missing dtype": (raw_file({"a": {"shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4),
                      "missing 'dtype'"),
    "missing offsets": (raw_file({"a": {"dtype": "F32", "shape": [1]}}, b"\0" * 4),
                        "missing 'data_offsets'"),
    "bad dtype": (raw_file({"a": {"dtype": "f32", "shape": [1], "data_offsets": [0, 4]}},
                           b"\0" * 4), "unknown dtype 'f32'"),
    "dtype not a string": (raw_file({"a": {"dtype": 4, "shape": [1], "data_offsets": [0, 4]}},
                                    b"\0" * 4), "unknown dtype"),
    "negative dim": (raw_file({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}},
                              b"\0" * 4), "shape"),
    "float dim": (raw_file({"a": {"dtype": "F32", "shape": [1.0], "data_offsets": [0, 4]}},
                           b"\0" * 4), "shape"),
    "bool dim": (raw_file({"a": {"dtype": "F32", "shape": [True], "data_offsets": [0, 4]}},
                          b"\0" * 4), "shape"),
    "shape not a list": (raw_file({"a": {"dtype": "F32", "shape": 1, "data_offsets": [0, 4]}},
                                  b"\0" * 4), "shape"),
    "three offsets": (raw_file({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4, 8]}},
                               b"\0" * 4), "data_offsets"),
    "negative offset": (raw_file({"a": {"dtype": "F32", "shape": [1],
                                        "data_offsets": [-4, 0]}}), "data_offsets"),
    "end before begin": (raw_file({"a": {"dtype": "F32", "shape": [0],
                                         "data_offsets": [4, 0]}}, b"\0" * 4), "span"),
    "shape/size mismatch": (raw_file({"a": {"dtype": "F32", "shape": [2],
                                            "data_offsets": [0, 4]}}, b"\0" * 4), "needs 8"),
    "offsets past the buffer": (raw_file(F32_ONE, b"\0" * 2), "truncated"),
    "truncated data": (good_file()[:-3], "truncated"),
    "trailing garbage": (good_file() + b"\0", "belong to no tensor"),
    "hole at the start": (raw_file({"a": {"dtype": "F32", "shape": [1],
                                          "data_offsets": [4, 8]}}, b"\0" * 8), "hole"),
    "hole between": (raw_file({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                               "b": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]}},
                              b"\0" * 12), "hole"),
    "overlap": (raw_file({"a": {"dtype": "F64", "shape": [1], "data_offsets": [0, 8]},
                          "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}},
                         b"\0" * 8), "overlaps"),
    "same range twice": (raw_file({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                                   "b": {"dtype": "I32", "shape": [1], "data_offsets": [0, 4]}},
                                  b"\0" * 4), "overlaps"),
    "duplicate name": (raw_file(b'{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
                                b'"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}',
                                b"\0" * 4), "twice"),
    "metadata not str": (raw_file({"__metadata__": {"a": 1}}), "__metadata__"),
    "metadata a list": (raw_file({"__metadata__": ["a"]}), "__metadata__"),
    "bool byte 2": (raw_file({"a": {"dtype": "BOOL", "shape": [2], "data_offsets": [0, 2]}},
                             b"\x01\x02"), "other than 0 and 1"),
    "NaN in header": (raw_file(b'{"a":{"dtype":"F32","shape":[NaN],"data_offsets":[0,4]}}',
                               b"\0" * 4), "NaN"),
    "deep nesting": (raw_file(b"[" * 100000 + b"]" * 100000), "nested too deeply|not JSON"),
    "huge dims": (raw_file({"a": {"dtype": "F32", "shape": [2**64, 0], "data_offsets": [0, 0]}}),
                  "shape"),
    "dtype a list": (raw_file({"a": {"dtype": ["F32"], "shape": [1], "data_offsets": [0, 4]}},
                              b"\0" * 4), "unknown dtype"),
    "dtype an object": (raw_file({"a": {"dtype": {"F32": 1}, "shape": [1],
                                        "data_offsets": [0, 4]}}, b"\0" * 4), "unknown dtype"),
    "dtype a float": (raw_file({"a": {"dtype": 4.5, "shape": [1], "data_offsets": [0, 4]}},
                               b"\0" * 4), "unknown dtype"),
    "dtype null": (raw_file({"a": {"dtype": None, "shape": [1], "data_offsets": [0, 4]}},
                            b"\0" * 4), "unknown dtype"),
    # (a product of this many huge dims is a bignum that takes long to compute)
    "too many dims": (raw_file({"a": {"dtype": "F32", "shape": [2**62] * 100000 + [0],
                                      "data_offsets": [0, 0]}}), "dims"),
}


@pytest.mark.parametrize("case", list(CORRUPT))
def test_corrupted_file_raises_value_error(tmp_path, case):
    raw, message = CORRUPT[case]
    path = tmp_path / "bad.safetensors"
    path.write_bytes(raw)
    with pytest.raises(ValueError, match=message):
        autograd.load(path)


def test_many_keys_with_one_duplicate_raise_value_error(tmp_path):
    """20k distinct keys and then a repeat of the last: found in one pass (a pairwise search
    takes minutes on such a header, and an attacker controls the header)."""
    items = b",".join(b'"k%d":0' % i for i in range(20000))
    path = tmp_path / "dup.safetensors"
    path.write_bytes(raw_file(b"{" + items + b',"k19999":0}'))
    with pytest.raises(ValueError, match="'k19999' appears twice"):
        autograd.load(path)
    nested = b'{"__metadata__":{' + items.replace(b":0", b':"v"') + b',"k19999":"v"}}'
    path.write_bytes(raw_file(nested))
    with pytest.raises(ValueError, match="twice"):
        load_metadata(path)


@pytest.mark.parametrize("reader", [autograd.load, load_metadata])
def test_header_over_the_limit_is_refused_before_it_is_read(tmp_path, monkeypatch, reader):
    """A header length over 100 MB (the reference reader's limit) is refused from the 8-byte
    prefix: the file is sparse (the bytes are there) and read() never asks for the header."""
    n = 100_000_008
    path = tmp_path / "huge_header.safetensors"
    with open(path, "wb") as fh:
        fh.write(struct.pack("<Q", n))
        fh.truncate(8 + n)
    import io as _io
    asked = []
    real_read = _io.BufferedReader.read

    class Reader(_io.BufferedReader):
        def read(self, size=-1):
            asked.append(size)
            return real_read(self, size)

    with open(path, "rb") as raw:
        fh = Reader(raw.raw)
        with pytest.raises(ValueError, match="100000000-byte limit"):
            reader(fh)
    assert max(asked) <= 8, asked


def test_reference_reader_rejects_the_corrupted_files_too(tmp_path):
    """Our corruption cases are corrupt for the safetensors package as well (apart from the
    checks it does not make: duplicate names, bool bytes, deep nesting, NaN)."""
    st = pytest.importorskip("safetensors.numpy")
    lenient = {"duplicate name", "bool byte 2", "deep nesting"}
    for case, (raw, _) in CORRUPT.items():
        if case in lenient:
            continue
        with pytest.raises(Exception):  # noqa: B017  (the reference reader's own error types)
            st.load(raw)


def test_unpadded_header_and_extra_keys_are_accepted(tmp_path):
    """As the reference reader: padding is the writer's duty, unknown keys are ignored."""
    raw = raw_file({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4], "x": 1},
                    "__metadata__": None}, struct.pack("<f", 1.5), pad=False)
    path = tmp_path / "u.safetensors"
    path.write_bytes(raw)
    assert autograd.load(path)["a"].tolist() == [1.5]


NO_CODE_SCRIPT = """
import pickle, sys
import autograd
events = []
watched = {"exec", "compile", "import", "os.system", "subprocess.Popen", "pickle.find_class",
           "ctypes.dlopen", "os.exec", "os.posix_spawn"}
sys.addaudithook(lambda event, args: event in watched and events.append(event))
try:
    out = autograd.load(sys.argv[1])
    print("loaded", sorted(out), out and list(out.values())[0].tolist())
except ValueError as e:
    print("ValueError", e)
print("events", events)
"""


def test_loading_never_runs_code(tmp_path):
    """A file whose names and metadata hold code and pickles, and a file that is a pickle, are
    only parsed: an audit hook sees no exec, compile, import, unpickling or process start."""
    import pickle
    import subprocess
    import sys

    payload = pickle.dumps(print)  # a pickle that would look up and call something
    name = "__import__('os').system('exit 1')"
    evil = {name: {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
            "__metadata__": {"pickle": payload.hex(), "code": "eval('1+1')"}}
    files = {"evil": raw_file(evil, struct.pack("<f", 1.0)), "pickle": payload}
    script = tmp_path / "check.py"
    script.write_text(NO_CODE_SCRIPT)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    for kind, raw in files.items():
        path = tmp_path / f"{kind}.safetensors"
        path.write_bytes(raw)
        res = subprocess.run([sys.executable, str(script), str(path)], capture_output=True,
                             text=True, env=env, timeout=120)
        assert res.returncode == 0, res.stderr
        lines = res.stdout.splitlines()
        assert lines[-1] == "events []", res.stdout
        if kind == "evil":
            assert lines[0] == f"loaded [{name!r}] [1.0]"
        else:
            assert lines[0].startswith("ValueError"), res.stdout


# ---------------------------------------------------------------------------------------------
# bad arguments to save
# ---------------------------------------------------------------------------------------------

# (lists, int keys and a key "__metadata__" are checkpoints now: tests/autograd/test_checkpoint.py)
@pytest.mark.parametrize("obj, error", [
    ({"a": {1.5: autograd.ones(1)}}, TypeError),
    ({"a": {1, 2}}, TypeError),
    ([object()], TypeError),
])
def test_save_rejects_bad_state(tmp_path, obj, error):
    with pytest.raises(error):
        autograd.save(obj, tmp_path / "x.safetensors")


@pytest.mark.parametrize("metadata", [{"a": 1}, {1: "a"}, ["a"]])
def test_save_rejects_bad_metadata(tmp_path, metadata):
    with pytest.raises(TypeError):
        autograd.save({"a": autograd.ones(1)}, tmp_path / "x.safetensors", metadata=metadata)


# ---------------------------------------------------------------------------------------------
# atomic save: an interrupted save leaves the previous file as it was
# ---------------------------------------------------------------------------------------------

def test_interrupted_save_keeps_the_previous_file(tmp_path, monkeypatch):
    import autograd.serialization as ser
    path = tmp_path / "model.safetensors"
    autograd.save({"w": autograd.arange(4.0)}, path)
    before = path.read_bytes()
    real_write = ser._write_array
    calls = []

    def failing_write(fh, arr):       # writes the first tensor and half of the second, then fails
        calls.append(arr)
        if len(calls) == 2:
            fh.write(memoryview(arr).cast("B")[:arr.nbytes // 2])
            raise OSError("No space left on device")
        real_write(fh, arr)

    monkeypatch.setattr(ser, "_write_array", failing_write)
    with pytest.raises(OSError, match="No space left"):
        autograd.save({"a": autograd.ones(1000), "b": autograd.zeros(1000)}, path)
    assert len(calls) == 2
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["model.safetensors"]       # no temporary file left
    monkeypatch.undo()
    assert np.array_equal(as_numpy(autograd.load(path)["w"]), np.arange(4.0, dtype="float32"))


def test_save_replaces_the_file_and_keeps_ordinary_permissions(tmp_path):
    path = tmp_path / "model.safetensors"
    plain = tmp_path / "plain"
    plain.write_bytes(b"")
    autograd.save({"w": autograd.ones(2)}, path)
    autograd.save({"w": autograd.zeros(3)}, str(path))
    assert as_numpy(autograd.load(path)["w"]).tolist() == [0, 0, 0]
    assert sorted(os.listdir(tmp_path)) == ["model.safetensors", "plain"]
    assert os.stat(path).st_mode == os.stat(plain).st_mode      # as open(path, "wb") makes it

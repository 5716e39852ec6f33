"""autograd.save / autograd.load of checkpoints: nested dicts, lists and tuples of tensors and
Python scalars, stored as safetensors entries plus a JSON structure in the header's metadata;
flat {str: tensor} dicts stay plain safetensors files; hostile structures raise ValueError."""

import json
import math
import struct
from collections import Counter, OrderedDict

import numpy as np
import pytest

import autograd
from autograd.serialization import load_metadata

STRUCTURE = "autograd.structure"


def header_of(path):
    """The JSON header of the safetensors file at path."""
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    return json.loads(raw[8:8 + n])


def raw_checkpoint(structure, tensors=None):
    """The bytes of a safetensors file holding float32 1-d tensors ({name: list}) and the
    structure (JSON text, or a value dumped to JSON) under the checkpoint's metadata key."""
    tensors = tensors or {}
    text = structure if isinstance(structure, str) else json.dumps(structure)
    header, data = {"__metadata__": {STRUCTURE: text}}, b""
    for name, vals in tensors.items():
        blob = struct.pack(f"<{len(vals)}f", *vals)
        header[name] = {"dtype": "F32", "shape": [len(vals)],
                        "data_offsets": [len(data), len(data) + len(blob)]}
        data += blob
    head = json.dumps(header).encode()
    head += b" " * (-len(head) % 8)
    return struct.pack("<Q", len(head)) + head + data


def same(a, b, devices=True):
    """a and b are equal checkpoints: same types and structure, tensors bitwise equal (and on
    the same device unless not devices), floats equal or both nan."""
    assert type(a) is type(b), (a, b)
    if isinstance(a, autograd.Tensor):
        assert a.device == b.device or not devices
        assert a.dtype == b.dtype and a.shape == b.shape
        assert np.asarray(a.detach().cpu().array).tobytes() == \
            np.asarray(b.detach().cpu().array).tobytes()
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            same(a[k], b[k], devices)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y, devices)
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b)
    else:
        assert a == b


# ---------------------------------------------------------------------------------------------
# round trips
# ---------------------------------------------------------------------------------------------

def test_training_checkpoint_round_trip(tmp_path, device):
    model = autograd.nn.Sequential(autograd.nn.Linear(3, 4), autograd.nn.ReLU(),
                                   autograd.nn.Linear(4, 2)).to(device)
    opt = autograd.optim.Adam(model.parameters(), lr=0.01)
    sched = autograd.optim.lr_scheduler.MultiStepLR(opt, [2, 2, 5])
    model(autograd.randn(5, 3, device=device)).sum().backward()
    opt.step()
    sched.step()
    ck = {"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 3,
          "rng": autograd.get_rng_state(), "sched": sched.state_dict()}
    autograd.save(ck, tmp_path / "ck.safetensors")
    back = autograd.load(tmp_path / "ck.safetensors", map_location=device)
    same(back, ck, devices=False)     # (the step counts and the RNG state were CPU tensors)
    assert {t.device.type for t in back["opt"]["state"][0].values()} == {device}
    assert type(back["sched"]["milestones"]) is Counter
    assert type(back["model"]) is OrderedDict


def test_every_value_type_comes_back_exactly(tmp_path):
    t = autograd.randn(2, 3)
    ck = {"none": None, "bools": [True, False], "ints": (0, -7, 2**70), "str": "é ü",
          "floats": [0.1, -0.0, 1e308, 5e-324, math.inf, -math.inf, math.nan],
          "nested": {1: (t, [t.T, {"deep": ()}]), -2: [], "x": {}},
          "od": OrderedDict([("b", 1), ("a", 2)]), "counter": Counter({3: 2}),
          "i32": autograd.tensor([1, 2], dtype=autograd.int32),
          "flags": autograd.tensor([True, False])}
    autograd.save(ck, tmp_path / "ck.safetensors")
    back = autograd.load(tmp_path / "ck.safetensors")
    same(back, ck)
    assert math.copysign(1.0, back["floats"][1]) == -1.0


def test_bare_values_at_the_root(tmp_path):
    for obj in ([autograd.ones(2), 3], (1, "a"), autograd.arange(4), 5, None):
        autograd.save(obj, tmp_path / "x.safetensors")
        same(autograd.load(tmp_path / "x.safetensors"), obj)


def test_a_shared_tensor_is_stored_once_and_comes_back_shared(tmp_path):
    t = autograd.randn(3)
    autograd.save({"a": t, "b": [t, {"c": t}], "n": 1}, tmp_path / "ck.safetensors")
    header = header_of(tmp_path / "ck.safetensors")
    assert sorted(k for k in header if k != "__metadata__") == ["a"]
    back = autograd.load(tmp_path / "ck.safetensors")
    assert back["b"][0] is back["a"] and back["b"][1]["c"] is back["a"]


def test_entry_names_follow_key_paths_and_never_collide(tmp_path):
    ck = {"a/b": autograd.ones(1), "a": {"b": autograd.zeros(1)}, "__metadata__": autograd.ones(2),
          7: [autograd.ones(3)]}
    autograd.save(ck, tmp_path / "ck.safetensors")
    names = sorted(k for k in header_of(tmp_path / "ck.safetensors") if k != "__metadata__")
    assert names == ["7/0", "__metadata__#2", "a/b", "a/b#2"]
    same(autograd.load(tmp_path / "ck.safetensors"), ck)


def test_non_contiguous_and_empty_tensors(tmp_path):
    x = autograd.randn(4, 5)
    ck = {"t": x.T, "s": x[::2, 1:], "e": autograd.zeros(0, 3), "k": 1}
    autograd.save(ck, tmp_path / "ck.safetensors")
    back = autograd.load(tmp_path / "ck.safetensors")
    same(back, {k: v.contiguous() if isinstance(v, autograd.Tensor) else v
                for k, v in ck.items()})


def test_user_metadata_is_kept_beside_the_structure(tmp_path):
    autograd.save({"a": [autograd.ones(1)]}, tmp_path / "ck.safetensors", metadata={"m": "v"})
    assert load_metadata(tmp_path / "ck.safetensors") == {"m": "v"}
    with pytest.raises(ValueError, match="'autograd.structure' is reserved"):
        autograd.save({"a": [1]}, tmp_path / "x.safetensors", metadata={STRUCTURE: "x"})


# ---------------------------------------------------------------------------------------------
# plain files and the safetensors package
# ---------------------------------------------------------------------------------------------

def test_a_flat_dict_stays_a_plain_safetensors_file(tmp_path):
    autograd.save({"w": autograd.ones(2), "b": autograd.zeros(1)}, tmp_path / "m.safetensors")
    assert "__metadata__" not in header_of(tmp_path / "m.safetensors")
    back = autograd.load(tmp_path / "m.safetensors")
    assert type(back) is dict and sorted(back) == ["b", "w"]


def test_safetensors_reads_our_checkpoints_and_we_read_its_files(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    t = autograd.randn(2, 2)
    autograd.save({"model": {"w": t}, "epoch": 2}, tmp_path / "ck.safetensors")
    theirs = st.load_file(str(tmp_path / "ck.safetensors"))
    assert list(theirs) == ["model/w"]
    np.testing.assert_array_equal(theirs["model/w"], np.asarray(t.array))
    autograd.save({"w": t}, tmp_path / "flat.safetensors")
    np.testing.assert_array_equal(st.load_file(str(tmp_path / "flat.safetensors"))["w"],
                                  np.asarray(t.array))
    st.save_file({"v": np.arange(3, dtype=np.float32)}, str(tmp_path / "theirs.safetensors"))
    assert autograd.load(tmp_path / "theirs.safetensors")["v"].tolist() == [0.0, 1.0, 2.0]


# ---------------------------------------------------------------------------------------------
# what save refuses
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("obj, message", [
    ({"opt": {"state": {0: {"fn": print}}}},
     r"not a builtin_function_or_method object \(at the checkpoint\['opt'\]\['state'\]\[0\]"
     r"\['fn'\]\)"),
    ({"a": [1, {2.5: 1}]}, r"the checkpoint\['a'\]\[1\] has a key 2.5 of type float"),
    ({"a": {True: 1}}, r"has a key True of type bool"),
    ({"s": {1, 2}}, r"not a set object"),
    ({"m": autograd.nn.Linear(1, 1)}, r"not a Linear object.*state_dict\(\)"),
])
def test_save_names_the_path_of_an_unsupported_value(tmp_path, obj, message):
    with pytest.raises(TypeError, match=message):
        autograd.save(obj, tmp_path / "x.safetensors")
    assert not (tmp_path / "x.safetensors").exists()


def test_save_refuses_cycles_and_too_deep_nesting(tmp_path):
    loop = []
    loop.append(loop)
    with pytest.raises(ValueError, match="circular"):
        autograd.save({"a": loop}, tmp_path / "x.safetensors")
    deep = [1]
    for _ in range(120):
        deep = [deep]
    with pytest.raises(ValueError, match="more than 100 levels"):
        autograd.save(deep, tmp_path / "x.safetensors")


def test_the_same_list_twice_is_not_a_cycle(tmp_path):
    row = [1, 2]
    autograd.save({"a": row, "b": row}, tmp_path / "x.safetensors")
    assert autograd.load(tmp_path / "x.safetensors") == {"a": [1, 2], "b": [1, 2]}


# ---------------------------------------------------------------------------------------------
# hostile structures: ValueError, never a crash
# ---------------------------------------------------------------------------------------------

_DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("structure, tensors, message", [
    ("{not json", {}, "not JSON"),
    ('[NaN]', {}, "NaN is not a valid JSON number"),
    ({"tensor": "missing"}, {}, "no stored tensor named 'missing'"),
    ({"tensor": 3}, {}, "no stored tensor named 3"),
    ([1, 2], {"t": [1.0]}, "tensor 't' is stored but no value"),
    ({"tuple": [1], "dict": []}, {}, "one tag key"),
    ({}, {}, "one tag key"),
    ({"set": [1]}, {}, "unknown tag 'set'"),
    ({"tuple": 5}, {}, "needs a list"),
    ({"dict": [[1.5, 2]]}, {}, "key must be a str or an int"),
    ({"dict": [[True, 2]]}, {}, "key must be a str or an int"),
    ({"dict": [[None, 2]]}, {}, "key must be a str or an int"),
    ({"dict": [["a", 1], ["a", 2]]}, {}, "'a' appears twice"),
    ({"dict": [["a"]]}, {}, r"must be \[key, value\]"),
    ({"dict": ["ab"]}, {}, r"must be \[key, value\]"),
    ({"float": "1e400"}, {}, "'inf', '-inf' or 'nan'"),
    ('{"a": 1, "a": 2}', {}, "appears twice"),
    (_DEEP, {}, "nested"),
    ("[" * 150 + "]" * 150, {}, "more than 100 levels"),
    ({"dict": [["x", [{"dict": [[0, {"tensor": "nope"}]]}]]]}, {},
     r"at the checkpoint\['x'\]\[0\]\[0\]: no stored tensor"),
])
def test_hostile_structures_raise_value_error(tmp_path, structure, tensors, message):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(raw_checkpoint(structure, tensors))
    with pytest.raises(ValueError, match=message):
        autograd.load(path)


def test_a_valid_handmade_structure_loads(tmp_path):
    # the same writer as the hostile cases, so those fail for their own reason only
    path = tmp_path / "ok.safetensors"
    path.write_bytes(raw_checkpoint({"dict": [["t", {"tensor": "t"}], [0, {"tuple": [1]}]]},
                                    {"t": [1.0, 2.0]}))
    back = autograd.load(path)
    assert list(back) == ["t", 0] and back[0] == (1,) and back["t"].tolist() == [1.0, 2.0]


def test_too_many_values_raise_value_error(tmp_path, monkeypatch):
    import autograd.serialization as serialization
    monkeypatch.setattr(serialization, "_MAX_NODES", 50)
    path = tmp_path / "big.safetensors"
    path.write_bytes(raw_checkpoint(list(range(100))))
    with pytest.raises(ValueError, match="more than 50 values"):
        autograd.load(path)


# ---------------------------------------------------------------------------------------------
# the GPU's random state (torch.cuda's functions; one generator for every device)
# ---------------------------------------------------------------------------------------------

def test_gpu_rng_state_is_the_global_one(tmp_path):
    state = autograd.gpu.get_rng_state()
    assert state.tolist() == autograd.get_rng_state().tolist()
    first = autograd.rand(4).tolist()
    autograd.gpu.set_rng_state(state)
    assert autograd.rand(4).tolist() == first
    autograd.gpu.set_rng_state_all(autograd.gpu.get_rng_state_all())
    n = autograd.gpu.device_count()
    with pytest.raises(RuntimeError, match=f"invalid device ordinal {n}"):
        autograd.gpu.get_rng_state(n)
    with pytest.raises(TypeError, match="RNG state"):
        autograd.gpu.set_rng_state([0, 0])


def test_a_loaded_rng_state_restores_on_any_device(tmp_path, device):
    autograd.save({"rng": autograd.get_rng_state()}, tmp_path / "r.safetensors")
    first = autograd.randn(5, device=device).tolist()
    autograd.set_rng_state(autograd.load(tmp_path / "r.safetensors", map_location=device)["rng"])
    assert autograd.randn(5, device=device).tolist() == first

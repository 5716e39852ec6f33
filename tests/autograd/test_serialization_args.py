"""autograd.load's torch.load arguments (map_location, weights_only, mmap) and save's error
for a whole Module."""

import pytest

import autograd


def _saved(tmp_path):
    path = tmp_path / "w.safetensors"
    autograd.save({"w": autograd.arange(4.0)}, path)
    return path


@pytest.mark.parametrize("where", ["cpu", "gpu", "cuda", "cuda:0"])
def test_map_location_device(tmp_path, where):
    if where != "cpu" and not autograd.cuda.is_available():
        pytest.skip("no OpenCL device")
    path = _saved(tmp_path)
    for loc in (where, autograd.device(where), {"cpu": where}):
        t = autograd.load(path, map_location=loc, weights_only=True)["w"]
        assert t.device == autograd.device(where) and t.tolist() == [0, 1, 2, 3]
    assert autograd.load(path, where)["w"].device == autograd.device(where)


def test_map_location_callable_and_other_options(tmp_path):
    path = _saved(tmp_path)
    seen = []

    def fn(t, location):
        seen.append(location)
        return t * 2

    assert autograd.load(path, map_location=fn)["w"].tolist() == [0, 2, 4, 6]
    assert seen == ["cpu"]
    assert autograd.load(path, map_location=lambda t, loc: None)["w"].tolist() == [0, 1, 2, 3]
    assert autograd.load(path, map_location={"cuda:0": "cpu"}, mmap=True,
                         weights_only=False)["w"].device == "cpu"
    with pytest.raises(RuntimeError, match="explicit pickle_module"):
        autograd.load(path, pickle_module=object(), weights_only=True)
    with pytest.raises(TypeError, match="map_location should be"):
        autograd.load(path, map_location=3)


def test_save_module_names_state_dict(tmp_path):
    with pytest.raises(TypeError, match=r"not a Linear object.*state_dict\(\)"):
        autograd.save(autograd.nn.Linear(2, 2), tmp_path / "m.safetensors")

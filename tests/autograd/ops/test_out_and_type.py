"""out= on the torch.* functions that take it, Tensor.type and autograd.Size, against torch."""

import warnings

import numpy as np
import pytest

import autograd


def _pair(torch, *shape, dtype="float32", device="cpu"):
    a = np.random.default_rng(len(shape)).standard_normal(shape).astype(dtype)
    return autograd.tensor(a, device=device), torch.tensor(a)


CASES = [
    ("add", lambda lib, a, b: (a, b), {"alpha": 2}),
    ("sub", lambda lib, a, b: (a, b), {}),
    ("mul", lambda lib, a, b: (a, 3.0), {}),
    ("div", lambda lib, a, b: (a, b), {}),
    ("matmul", lambda lib, a, b: (a, b.T), {}),
    ("mm", lambda lib, a, b: (a, b.T), {}),
    ("cat", lambda lib, a, b: ([a, b],), {"dim": 1}),
    ("stack", lambda lib, a, b: ([a, b],), {}),
]


@pytest.mark.parametrize("name,args,kwargs", CASES, ids=[c[0] for c in CASES])
def test_out_writes_into_the_given_tensor(name, args, kwargs, device):
    torch = pytest.importorskip("torch")
    a, ta = _pair(torch, 3, 4, device=device)
    b, tb = _pair(torch, 3, 4, 1, device=device)
    b, tb = b[:, :, 0], tb[:, :, 0]               # non-contiguous inputs
    out, tout = autograd.empty(0, device=device), torch.empty(0)
    r = getattr(autograd, name)(*args(autograd, a, b), out=out, **kwargs)
    tr = getattr(torch, name)(*args(torch, ta, tb), out=tout, **kwargs)
    assert r is out and r.device == device
    assert r.shape == tuple(tr.shape)
    np.testing.assert_allclose(r.cpu().numpy(), tr.numpy(), rtol=1e-5, atol=1e-6)
    assert out._version >= 1


def test_out_into_a_transposed_view_and_with_a_cast(device):
    a = autograd.arange(6, device=device).reshape(2, 3)
    base = autograd.zeros(3, 2, device=device)
    autograd.add(a, a, out=base.t())
    assert base.tolist() == [[0.0, 6.0], [2.0, 8.0], [4.0, 10.0]]
    out = autograd.zeros(2, 3, dtype=autograd.float64, device=device)
    autograd.mul(a, 2, out=out)
    assert out.dtype == autograd.float64 and out.tolist() == (a * 2).tolist()


def test_out_resize_warns_as_torch():
    a = autograd.ones(2, 3)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = autograd.add(a, a, out=autograd.empty(5))
    assert out.shape == (2, 3) and "was resized" in str(w[0].message)


def test_out_errors_as_torch():
    torch = pytest.importorskip("torch")
    for lib in (torch, autograd):
        x = lib.ones(2, 3, requires_grad=True)
        y = lib.ones(2, 3)
        msgs = []
        for call in (lambda: lib.add(x, y, out=lib.empty(2, 3)),
                     lambda: lib.add(y, y, out=lib.empty(2, 3, requires_grad=True)),
                     lambda: lib.cat([x, y], out=lib.empty(4, 3)),
                     lambda: lib.add(y, y, out=lib.empty(2, 3, dtype=lib.int64))):
            with pytest.raises(RuntimeError) as e:
                call()
            msgs.append(str(e.value))
        with lib.no_grad():
            assert not lib.add(x, y, out=lib.empty(2, 3)).requires_grad
        if lib is torch:
            expected = msgs
    assert msgs == expected
    with pytest.raises(TypeError, match="'out' must be Tensor"):
        autograd.add(autograd.ones(1), 1, out=[0.0])


def test_out_on_another_device():
    if not autograd.cuda.is_available():
        pytest.skip("no OpenCL device")
    with pytest.raises(RuntimeError, match="expected out tensor to have device gpu"):
        autograd.add(autograd.ones(2, device="gpu"), 1, out=autograd.empty(2))


# -- Tensor.type ---------------------------------------------------------------------------------

def test_type_names_as_torch():
    torch = pytest.importorskip("torch")
    for cast in ("float", "double", "int", "long", "bool"):
        t = getattr(torch.zeros(2), cast)().type()
        a = getattr(autograd.zeros(2), cast)().type()
        assert a == t.replace("torch.", "autograd.")
    x = autograd.zeros(2)
    assert x.type(autograd.float32) is x
    assert x.type("torch.DoubleTensor").dtype == autograd.float64
    assert x.type("autograd.LongTensor").dtype == autograd.int64
    assert x.type(autograd.float64).dtype == autograd.float64
    for lib in (torch, autograd):
        with pytest.raises(ValueError, match="invalid type: 'foo'"):
            lib.zeros(2).type("foo")
        with pytest.raises(TypeError, match="dtype must be a type, str, or dtype object"):
            lib.zeros(2).type(5)


def test_type_with_cuda_name_moves():
    if not autograd.cuda.is_available():
        pytest.skip("no OpenCL device")
    x = autograd.zeros(2).type("torch.cuda.FloatTensor")
    assert x.is_cuda and x.type() == "autograd.cuda.FloatTensor"
    assert x.type("torch.FloatTensor").device == "cpu"


# -- Size ----------------------------------------------------------------------------------------

def test_size_as_torch():
    torch = pytest.importorskip("torch")
    x, t = autograd.zeros(2, 3, 4), torch.zeros(2, 3, 4)
    for s, ts in ((x.size(), t.size()), (x.shape, t.shape)):
        assert isinstance(s, autograd.Size) and isinstance(s, tuple)
        assert repr(s) == repr(ts).replace("torch.", "autograd.") == "autograd.Size([2, 3, 4])"
        assert s == (2, 3, 4) and s.numel() == ts.numel() == 24
        assert repr(s[1:]) == "autograd.Size([3, 4])" and s[0] == 2
        assert repr(s + (5,)) == "autograd.Size([2, 3, 4, 5])"
        assert repr((1,) + s) == "autograd.Size([1, 2, 3, 4])"
    assert autograd.Size([]).numel() == 1 and repr(autograd.zeros(()).shape) == \
        "autograd.Size([])"
    assert x.size(1) == 3
    with pytest.raises(TypeError, match=r"item 1 is 'str'"):
        autograd.Size([2, "a"])
    assert autograd.zeros(x.shape).shape == x.shape

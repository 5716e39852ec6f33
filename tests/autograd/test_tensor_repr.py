"""repr(tensor) (autograd/_format.py) against PyTorch's torch/_tensor_str.py: the same values
give the same text, with "torch." written "autograd.". The comparisons skip without torch;
the hand-written expected strings at the top always run."""

import math
import random
import re

import pytest

import autograd
from autograd import nn

from conftest import have_gpu

NAN, INF = math.nan, math.inf


@pytest.fixture(autouse=True)
def _default_printoptions():
    """Every test starts and ends with the default print options (ours and torch's)."""
    autograd.set_printoptions(profile="default")
    yield
    autograd.set_printoptions(profile="default")
    autograd.set_default_dtype(autograd.float32)
    try:
        import torch
    except ImportError:
        return
    torch.set_printoptions(profile="default", sci_mode=None)
    torch.set_default_dtype(torch.float32)


# ------------------------------------------------------------------------------------------------
# Hand-written expected strings (no torch needed)
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("values, kwargs, expected", [
    ([0.7361611, -1.1512251], {}, "tensor([ 0.7362, -1.1512])"),
    ([1.0, 2.0], {}, "tensor([1., 2.])"),
    ([1.0, -20.0, 300.0], {}, "tensor([  1., -20., 300.])"),
    ([1e10, 1.0], {}, "tensor([1.0000e+10, 1.0000e+00])"),
    ([1e-5, 0.5], {}, "tensor([1.0000e-05, 5.0000e-01])"),
    ([NAN, 1.0, -INF], {}, "tensor([nan, 1., -inf])"),
    ([NAN, 1.5], {}, "tensor([   nan, 1.5000])"),
    ([-0.0, 1.0], {}, "tensor([-0., 1.])"),
    ([0.0, 0.0], {}, "tensor([0., 0.])"),
    (1.5, {}, "tensor(1.5000)"),
    (-0.0, {}, "tensor(-0.)"),
    (3, {}, "tensor(3)"),
    (True, {}, "tensor(True)"),
    ([1, -22, 333], {}, "tensor([  1, -22, 333])"),
    ([True, False], {}, "tensor([ True, False])"),
    ([1.0, 2.5], {"dtype": autograd.float64}, "tensor([1.0000, 2.5000], dtype=autograd.float64)"),
    ([1, 2], {"dtype": autograd.int32}, "tensor([1, 2], dtype=autograd.int32)"),
    ([[1.0, 2.0], [3.0, 4.5]], {}, "tensor([[1.0000, 2.0000],\n        [3.0000, 4.5000]])"),
    ([[[1, 2]], [[3, 4]]], {}, "tensor([[[1, 2]],\n\n        [[3, 4]]])"),
    ([], {}, "tensor([])"),
    ([], {"dtype": autograd.int64}, "tensor([], dtype=autograd.int64)"),
])
def test_expected_text(values, kwargs, expected):
    assert repr(autograd.tensor(values, **kwargs)) == expected
    assert str(autograd.tensor(values, **kwargs)) == expected


def test_expected_text_of_shapes_and_suffixes():
    assert repr(autograd.zeros(0, 3)) == "tensor([], size=(0, 3))"
    assert repr(autograd.zeros(2, 0, dtype=autograd.bool)) == \
        "tensor([], size=(2, 0), dtype=autograd.bool)"
    x = autograd.tensor([1.0, 2.0], requires_grad=True)
    assert repr(x) == "tensor([1., 2.], requires_grad=True)"
    assert repr(x * 2) == "tensor([2., 4.], grad_fn=<MulBackward0>)"
    assert repr((x * 2).detach()) == "tensor([2., 4.])"
    assert repr(nn.Parameter(autograd.tensor([1.0, 2.0]))) == \
        "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    assert repr(autograd.arange(2000)) == \
        "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"
    assert repr(autograd.arange(30)) == (
        "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n"
        "        18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29])")
    # A suffix that would pass 80 columns goes to its own line, under the first bracket.
    assert repr(autograd.arange(17.0, dtype=autograd.float64)) == (
        "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n"
        "        14., 15., 16.], dtype=autograd.float64)")
    assert repr(autograd.ones(17, dtype=autograd.float64, requires_grad=True)) == (
        "tensor([1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1.],\n"
        "       dtype=autograd.float64, requires_grad=True)")
    # "dtype=autograd.float64" is 3 characters longer than torch's "dtype=torch.float64", so it
    # moves to its own line where torch's would still fit (torch prints 12 ones on one line).
    assert repr(autograd.ones(12, dtype=autograd.float64)) == (
        "tensor([1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1.],\n"
        "       dtype=autograd.float64)")


def test_gpu_tensors_name_their_device():
    if not have_gpu():
        pytest.skip("no OpenCL device")
    x = autograd.tensor([[1.5, -2.0], [3.0, 4.0]])
    assert repr(x.to("gpu")) == repr(x)[:-1] + ", device='gpu')"
    assert repr(autograd.tensor([1, 2], device="gpu")) == "tensor([1, 2], device='gpu')"


def test_set_printoptions_expected_text():
    x = autograd.tensor([1.12345, 2.5])
    autograd.set_printoptions(precision=2)
    assert repr(x) == "tensor([1.12, 2.50])"
    autograd.set_printoptions(threshold=5)  # sci_mode=None again, precision stays 2
    assert repr(autograd.arange(10)) == "tensor([0, 1, 2,  ..., 7, 8, 9])"
    autograd.set_printoptions(profile="default")
    assert repr(x) == "tensor([1.1235, 2.5000])"
    autograd.set_printoptions(sci_mode=True)
    assert repr(x) == "tensor([1.1235e+00, 2.5000e+00])"
    autograd.set_printoptions(sci_mode=False)
    assert repr(autograd.tensor([1e10, 1.5])) == "tensor([10000000000.0000,           1.5000])"
    with autograd._format.printoptions(precision=1):
        assert repr(autograd.tensor(0.25)) == "tensor(0.2)"
    assert repr(autograd.tensor(0.25)) == "tensor(0.2500)"
    assert autograd._format.get_printoptions()["sci_mode"] is False
    with pytest.raises(ValueError, match="profile"):
        autograd.set_printoptions(profile="long")


def test_import_autograd_does_not_import_numpy():
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(autograd.__file__)))
    code = ("import sys, autograd; repr(autograd.randn(3, 3)); "
            "sys.exit('numpy' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], cwd=root).returncode == 0


# ------------------------------------------------------------------------------------------------
# Against PyTorch
# ------------------------------------------------------------------------------------------------

def _rng(seed):
    return random.Random(seed)


def _randn(n, scale=1.0, seed=0):
    r = _rng(seed)
    return [r.gauss(0.0, 1.0) * scale for _ in range(n)]


def _mixed_magnitudes(n, seed=0):
    r = _rng(seed)
    return [r.choice((-1, 1)) * 10.0 ** r.uniform(-8, 8) for _ in range(n)]


def _ints(n, lo, hi, seed=0):
    r = _rng(seed)
    return [r.randint(lo, hi) for _ in range(n)]


def _sprinkle(values, specials, seed=0):
    """values with some entries replaced by the given special values."""
    r = _rng(seed)
    out = list(values)
    for s in specials:
        out[r.randrange(len(out))] = s
    return out


F32, F64, I64, I32, BOOL = "float32", "float64", "int64", "int32", "bool"

# (id, flat values (or a scalar for 0-d), shape, dtype name)
CASES = []
for _scale in (1e-6, 1e-3, 0.1, 1.0, 10.0, 1e3, 1e5, 1e9):
    for _shape in ((5,), (3, 4), (2, 3, 4), (2, 2, 3, 3)):
        _n = math.prod(_shape)
        CASES.append((f"randn*{_scale:g}-{_shape}", _randn(_n, _scale, seed=_n), _shape, F32))
CASES += [
    ("mixed-magnitudes", _mixed_magnitudes(12), (12,), F32),
    ("mixed-magnitudes-2d", _mixed_magnitudes(20, seed=1), (4, 5), F32),
    ("mixed-magnitudes-f64", _mixed_magnitudes(9, seed=2), (3, 3), F64),
    ("ratio-just-under-1000", [1.0, 999.0, -0.5], (3,), F32),
    ("ratio-over-1000", [1.0, 1001.0, -0.5], (3,), F32),
    ("max-over-1e8", [2e8, 1.5e8], (2,), F32),
    ("min-under-1e-4", [5e-5, 9e-5], (2,), F32),
    ("int-valued", [float(v) for v in _ints(12, -100, 100)], (3, 4), F32),
    ("int-valued-large", [float(v) for v in _ints(6, -10**6, 10**6)], (6,), F32),
    ("int-valued-sci", [1e9, 2.0, -3e10], (3,), F32),
    ("int-valued-f64-sci", [1e12, 5.0, 7.0], (3,), F64),
    ("int-valued-with-nan", [1.0, NAN, -3.0, INF], (4,), F32),
    ("nan-inf-randn", _sprinkle(_randn(10), [NAN, INF, -INF]), (10,), F32),
    ("nan-inf-sci", _sprinkle(_mixed_magnitudes(8), [NAN, -INF]), (2, 4), F32),
    ("all-nan", [NAN, NAN], (2,), F32),
    ("nan-inf-zero", [NAN, INF, 0.0, -INF], (4,), F32),
    ("nan-0d", NAN, (), F32),
    ("inf-0d", -INF, (), F32),
    ("negative-zero", [-0.0, 0.0, 1.5], (3,), F32),
    ("negative-zero-int-mode", [-0.0, 2.0, 0.0], (3,), F32),
    ("negative-zero-sci", [-0.0, 1e10, 1.0], (3,), F32),
    ("negative-zero-only", [-0.0, -0.0], (2,), F32),
    ("zeros", [0.0] * 6, (2, 3), F32),
    ("ints", _ints(12, -50, 50), (3, 4), I64),
    ("ints-large", _ints(6, -10**15, 10**15), (6,), I64),
    ("ints-int32", _ints(8, -1000, 1000), (2, 4), I32),
    ("ints-3d", _ints(24, 0, 9), (2, 3, 4), I64),
    ("bools", [bool(v) for v in _ints(10, 0, 1)], (2, 5), BOOL),
    ("bools-all-true", [True, True], (2,), BOOL),
    ("0d-float", 1.5, (), F32),
    ("0d-float-neg", -0.123456, (), F32),
    ("0d-float-big", 1.2345e10, (), F32),
    ("0d-float-int", 3.0, (), F32),
    ("0d-float64", 2.718281828, (), F64),
    ("0d-int", 7, (), I64),
    ("0d-int32", -7, (), I32),
    ("0d-bool", False, (), BOOL),
    ("empty", [], (0,), F32),
    ("empty-2d", [], (0, 3), F32),
    ("empty-3d", [], (2, 0, 4), F32),
    ("empty-int", [], (0,), I64),
    ("empty-f64", [], (3, 0), F64),
    ("empty-bool", [], (0,), BOOL),
    ("summarised-1d", _randn(2000), (2000,), F32),
    ("summarised-1001", _randn(1001), (1001,), F32),
    ("summarised-2d", _randn(1600), (40, 40), F32),
    ("summarised-3d", _randn(1331), (11, 11, 11), F32),
    ("summarised-4d", _randn(1200), (3, 4, 5, 20), F32),
    ("summarised-4d-all-long", _randn(2401), (7, 7, 7, 7), F32),
    ("summarised-short-rows", _randn(2000), (2, 1000), F32),
    ("summarised-ints", _ints(1500, -10**6, 10**6), (1500,), I64),
    ("summarised-bools", [bool(v) for v in _ints(1200, 0, 1)], (30, 40), BOOL),
    ("summarised-edges-decide-mode", [1.0] * 3 + [1e-9] * 1494 + [3.0] * 3, (1500,), F32),
    ("not-summarised-1000", _randn(1000), (1000,), F32),
    ("wide-row", _randn(100), (100,), F32),
    ("wide-rows-2d", _randn(90), (3, 30), F32),
    ("wide-rows-3d", _randn(120), (2, 2, 30), F32),
    ("wide-sci", _mixed_magnitudes(40), (40,), F32),
    ("wide-ints", _ints(60, -10**9, 10**9), (60,), I64),
    ("wide-f64", _randn(50, 100.0), (50,), F64),
    ("f64-randn", _randn(12), (3, 4), F64),
    ("f64-precision", [1 / 3, 2 / 3, 1e-3], (3,), F64),
    ("4d", _randn(16), (2, 2, 2, 2), F32),
    ("4d-ints", _ints(24, -5, 5), (1, 2, 3, 4), I64),
    ("ones-dims", _randn(3), (1, 3, 1), F32),
]


def _pair(values, shape, dtype, requires_grad=False):
    """The same tensor in torch and in autograd."""
    torch = pytest.importorskip("torch")
    if shape == ():
        t = torch.tensor(values, dtype=getattr(torch, dtype))
        a = autograd.tensor(values, dtype=getattr(autograd, dtype))
    else:
        t = torch.tensor(values, dtype=getattr(torch, dtype)).reshape(shape)
        a = autograd.tensor(values, dtype=getattr(autograd, dtype)).reshape(shape)
    if requires_grad:
        t.requires_grad_(True)
        a.requires_grad_(True)
    return t, a


_SUFFIX_BREAK = re.compile(r",\n *(?=(device|size|dtype|grad_fn|requires_grad)=)")


def _same(t, a):
    """repr(a) is torch's repr(t) with "torch." written "autograd.". Where a dtype is named,
    the 3 extra characters can move a suffix to its own line (ours, or torch's, stays within
    linewidth), so there the suffixes are compared with their line breaks joined."""
    expected = repr(t).replace("torch.", "autograd.")
    got = repr(a)
    assert str(a) == got
    if "dtype=autograd." in expected:
        got, expected = _SUFFIX_BREAK.sub(", ", got), _SUFFIX_BREAK.sub(", ", expected)
    assert got == expected


@pytest.mark.parametrize("name, values, shape, dtype", CASES, ids=[c[0] for c in CASES])
def test_matches_torch(name, values, shape, dtype):
    t, a = _pair(values, shape, dtype)
    _same(t, a)


@pytest.mark.parametrize("seed", range(40))
def test_matches_torch_random(seed):
    """Random shapes (0-d to 4-d, some past the threshold), dtypes and magnitudes."""
    r = _rng(1000 + seed)
    ndim = r.randint(0, 4)
    shape = tuple(r.randint(0, 2) if r.random() < 0.05 else r.randint(1, 13)
                  for _ in range(ndim))
    n = math.prod(shape)
    dtype = r.choice((F32, F32, F32, F64, I64, I32, BOOL))
    if dtype in (F32, F64):
        kind = r.choice(("randn", "mixed", "int", "special"))
        scale = 10.0 ** r.randint(-6, 9)
        if kind == "randn":
            values = _randn(n, scale, seed)
        elif kind == "mixed":
            values = _mixed_magnitudes(n, seed)
        elif kind == "int":
            values = [float(v) for v in _ints(n, -1000, 1000, seed)]
        else:
            values = _sprinkle(_randn(n, scale, seed), [NAN, INF, -INF, -0.0, 0.0][:n], seed)
    elif dtype == BOOL:
        values = [bool(v) for v in _ints(n, 0, 1, seed)]
    else:
        values = _ints(n, -10 ** r.randint(0, 9), 10 ** r.randint(0, 9), seed)
    if shape == ():
        values = values[0] if values else 0
    t, a = _pair(values, shape, dtype, requires_grad=dtype in (F32, F64) and r.random() < 0.3)
    _same(t, a)


@pytest.mark.parametrize("shape, dtype", [((5,), F32), ((3, 11), F32), ((3, 11), F64),
                                           ((), F64), ((2, 2, 9), F64), ((1500,), F64)])
def test_matches_torch_with_requires_grad_and_grad_fn(shape, dtype):
    n = math.prod(shape)
    values = _randn(n, seed=n)[0] if shape == () else _randn(n, seed=n)
    t, a = _pair(values, shape, dtype, requires_grad=True)
    _same(t, a)
    _same(t * 2, a * 2)
    _same(t + 1, a + 1)
    _same(t.sum(), a.sum())
    _same(t.exp(), a.exp())


def test_parameter_matches_torch():
    torch = pytest.importorskip("torch")
    t, a = _pair(_randn(12), (3, 4), F32)
    assert repr(nn.Parameter(a)) == repr(torch.nn.Parameter(t))
    t, a = _pair(_randn(6), (6,), F64)
    assert repr(nn.Parameter(a)) == repr(torch.nn.Parameter(t)).replace("torch.", "autograd.")
    assert repr(nn.Parameter(a, requires_grad=False)) == \
        repr(torch.nn.Parameter(t, requires_grad=False)).replace("torch.", "autograd.")


def test_default_dtype_float64_matches_torch():
    torch = pytest.importorskip("torch")
    torch.set_default_dtype(torch.float64)
    autograd.set_default_dtype(autograd.float64)
    for values, shape, dtype in (([1.5, 2.0], (2,), F32), ([1.5, 2.0], (2,), F64),
                                 ([], (0,), F64), ([], (0,), F32), ([1, 2], (2,), I64)):
        _same(*_pair(values, shape, dtype))


@pytest.mark.parametrize("options", [
    {"precision": 2}, {"precision": 0}, {"precision": 8}, {"threshold": 5}, {"edgeitems": 1},
    {"threshold": 10, "edgeitems": 0}, {"edgeitems": 0}, {"linewidth": 40},
    {"linewidth": 10}, {"sci_mode": True}, {"sci_mode": False}, {"profile": "short"},
    {"profile": "full"}, {"threshold": 0},
])
def test_printoptions_match_torch(options):
    torch = pytest.importorskip("torch")
    torch.set_printoptions(**options)
    autograd.set_printoptions(**options)
    for _name, values, shape, dtype in CASES[::3] + CASES[-20:]:
        _same(*_pair(values, shape, dtype))


def test_views_match_torch():
    """Transposed, sliced, stepped and broadcast views print their own values."""
    t, a = _pair(_randn(60), (3, 4, 5), F32)
    _same(t.transpose(0, 2), a.transpose(0, 2))
    _same(t[1:, ::2, 1], a[1:, ::2, 1])
    _same(t.flip(2), a.flip(2))
    _same(t[0:1].expand(300, 4, 5), a[0:1].expand(300, 4, 5))

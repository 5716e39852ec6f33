"""Fuzzing of the newer entry points: elementwise functions and reductions, operators (in-place
included), matmul, carray.nn, carray.random and the join/split/pad/flip functions.

As test_errors.test_garbage_never_crashes: a subprocess makes random calls with garbage and
half-valid arguments (fixed seeds, so a failure reproduces), and the test fails when the
interpreter dies (segfault, abort), hangs (faulthandler exits after 60 s) or a SystemError
escapes. Sizes are capped; the "huge" values overflow or clearly exceed memory, so the library
must refuse them before allocating. Regression tests for what the fuzzing found follow.
"""

import json
import subprocess
import sys
import time

import pytest

import carray as ca
import carray.nn as nn

from conftest import fresh_env

FUZZ_SCRIPT = r'''
import sys, random, faulthandler, operator, json
faulthandler.enable()
faulthandler.dump_traceback_later(60, exit=True)     # a hang shows where it is
import numpy as np
import carray as ca
import carray.nn as nn

seed, iterations = int(sys.argv[1]), int(sys.argv[2])
r = random.Random(seed)
HUGE = [2**40, 2**48, -2**48, 2**62, 2**63 - 1, 2**63, 2**64, -2**63, -2**63 - 1, 2**70]

def gint():
    return r.choice([r.randint(-3, 6), r.randint(-3, 6), r.randint(-3, 6), r.choice(HUGE)])

def gscalar():
    return r.choice([gint, lambda: r.choice([True, False]),
                     lambda: r.choice([0.5, -1.0, 0.0, float("nan"), float("inf"), -0.0, 1e308, 2.0]),
                     lambda: r.choice(["a", "", b"x", 1j, None, object(), {}, Ellipsis,
                                       np.float64(1.5), np.int32(-2), np.bool_(True), np.uint8(200),
                                       np.float16(0.5), np.int64(2**62)])])()

DTS = ["bool", "int32", "int64", "float32", "float64", "int8", "int16", "uint8", "uint16", "uint32",
       "uint64"]

def small_np(shape=None, dt=None):
    if shape is None:
        shape = tuple(r.randint(0, 3) for _ in range(r.choice([0, 1, 1, 2, 2, 3, 4, 6])))
    dt = dt or r.choice(DTS)
    return (np.random.default_rng(r.randint(0, 1000)).standard_normal(shape) * 4).astype(dt)

def small_array(shape=None, dt=None):
    n = small_np(shape, dt)
    kind = r.randint(0, 6)
    if kind == 0:
        return n if r.random() < 0.7 else n.astype(r.choice([np.uint8, np.int16, np.float16, np.complex64, object]))
    a = ca.asarray(n)
    if kind == 1 and a.ndim:
        return a[::-1]
    if kind == 2 and a.ndim:
        return a.T
    if kind == 3:
        return ca.broadcast_to(a, (2,) + a.shape)
    if kind == 4 and a.ndim and a.shape[-1] > 1:
        return a[..., ::2]
    return a

def operand(depth=0):
    k = r.randint(0, 11)
    if k <= 5:
        return small_array()
    if k <= 7 or depth > 1:
        return gscalar()
    if k == 8:
        return [[gscalar() for _ in range(r.randint(0, 3))] for _ in range(r.randint(0, 3))]
    if k == 9:
        return [operand(depth + 1) for _ in range(r.randint(0, 3))]
    if k == 10:
        return small_np().tolist()
    return r.choice([None, "abc", [1, [2, 3]], [[1, 2], [3]], ca.zeros(()), ca.zeros((0, 3))])

def gaxis():
    k = r.randint(0, 6)
    if k <= 1:
        return None
    if k <= 3:
        return r.randint(-4, 4)
    if k == 4:
        return tuple(r.randint(-4, 4) for _ in range(r.randint(0, 3)))
    if k == 5:
        return gint()
    return r.choice([1.0, "0", [0], (0, 0), True, object(), (None,)])

def gdtype():
    return r.choice([None, None, "float32", "int32", "bool", "int64", "float64", "float16", "foo",
                     float, int, bool, np.uint8, np.float64, object(), ca.float32, 3])

def gout():
    k = r.randint(0, 5)
    if k <= 1:
        return None
    if k == 2:
        return small_array()
    if k == 3:
        a = small_array()
        if isinstance(a, ca.Array):
            return a
        return ca.asarray(small_np())
    return r.choice([np.zeros(3), [0, 0], 5, (None,), (small_array(),), "out", ca.zeros(()),
                     ca.broadcast_to(ca.zeros(3), (2, 3))])

from carray.ops import _optable                      # every elementwise row of the op table
BIN = [name for op in _optable.of_kind(_optable.Kind.BINARY) + _optable.of_kind(_optable.Kind.COMPARE)
       for name in (op.name,) + op.aliases]
UN = [name for op in _optable.of_kind(_optable.Kind.UNARY) + _optable.of_kind(_optable.Kind.PREDICATE)
      for name in (op.name,) + op.aliases]
RED_D = ["sum", "prod", "mean"]
RED = ["max", "min", "amax", "amin", "any", "all", "argmax", "argmin"]
PYOPS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
         operator.mod, operator.pow, operator.eq, operator.ne, operator.lt, operator.le,
         operator.gt, operator.ge, operator.and_, operator.or_, operator.xor, operator.lshift,
         operator.rshift, operator.matmul]
IOPS = [operator.iadd, operator.isub, operator.imul, operator.itruediv, operator.ifloordiv,
        operator.imod, operator.ipow, operator.iand, operator.ior, operator.ixor,
        operator.imatmul, operator.ilshift]

def kw(**d):
    return {k: v for k, v in d.items() if r.random() < 0.6}

def tgt():
    a = small_array()
    return a if isinstance(a, ca.Array) else ca.asarray(small_np())

def gpair():
    k = r.randint(0, 5)
    if k <= 2:
        return r.randint(-1, 4)
    if k == 3:
        return tuple(r.randint(-1, 4) for _ in range(r.randint(0, 3)))
    if k == 4:
        return gint()
    return r.choice([1.5, "2", None, [1, 2], (2, 2.0), True, (2**63, 1), (2**40, 2**40)])

def img(dt=None):
    dt = dt or r.choice(["float32", "float64", "float32", "int32"])
    nd = r.choice([3, 4, 4, 4, 2, 5])
    shape = tuple(r.randint(0, 5) for _ in range(nd))
    a = ca.asarray(small_np(shape, dt))
    if r.random() < 0.2 and a.ndim:
        a = a[..., ::-1]
    return a

def gshape():
    k = r.randint(0, 4)
    if k <= 1:
        return tuple(r.randint(0, 5) for _ in range(r.choice([3, 4, 4])))
    if k == 2:
        return tuple(r.choice([r.randint(0, 5), gint()]) for _ in range(r.randint(0, 5)))
    if k == 3:
        return (2**40, 2**40, 2**40, 2**40)
    return r.choice([None, 5, "x", [1, 2, 3, 3], (1.5, 2, 3, 3)])

def gsize():
    k = r.randint(0, 5)
    if k <= 1:
        return None
    if k == 2:
        return r.randint(-1, 5)
    if k == 3:
        return tuple(r.randint(-1, 4) for _ in range(r.randint(0, 7)))
    if k == 4:
        return r.choice([2**62, 2**63, 2**64, (2**31, 2**31, 2**31), (2**40, 2**40), (2**33,),
                         (0, 2**63), (2**62, 0), -2**63, (1,) * 40])
    return r.choice([1.5, "3", [2, 3], (2, None), object(), np.int64(3), True])

def gen():
    return ca.random.Generator(r.choice([0, 1, 2**64 - 1, 12345]))

def pool_idx(go):
    k = r.randint(0, 4)
    if k == 0:
        return ca.asarray(np.random.default_rng(r.randint(0, 99)).integers(-10, 100, go.shape))
    if k == 1:
        return ca.asarray(np.full(go.shape, r.choice(HUGE[:2] + [2**31, -1, -2**62]), dtype=np.int64))
    if k == 2:
        return ca.asarray(np.zeros(go.shape, dtype=r.choice(["int32", "float32", "bool", "float64"])))
    if k == 3:
        return ca.zeros(tuple(s + 1 for s in go.shape), dtype="int64")
    return operand()

def pool_grad_case():
    x = img("float32" if r.random() < 0.8 else r.choice(DTS))
    try:
        y, idx = nn.max_pool2d(x, r.choice([1, 2, 3]), return_indices=True)
    except Exception:
        y = x
        idx = ca.zeros(x.shape, dtype="int64")
    if r.random() < 0.7:
        idx2 = pool_idx(y)
    else:
        idx2 = idx
    shp = x.shape if r.random() < 0.6 else gshape()
    return nn.max_pool2d_grad(y, idx2, shp)

def gpad():
    k = r.randint(0, 4)
    if k <= 1:
        return r.randint(-1, 3)
    if k == 2:
        return tuple((r.randint(-1, 3), r.randint(-1, 3)) for _ in range(r.randint(0, 4)))
    if k == 3:
        return gint()
    return r.choice([((1,),), (1, 2), [[1, 2, 3]], "x", 1.5, None, ((2**40, 0),), ((2**62, 2**62),)])

OPS = {}
for nm in BIN:
    OPS["bin_" + nm] = (lambda nm: lambda: getattr(ca, nm)(operand(), operand(), **kw(out=gout())))(nm)
for nm in UN:
    OPS["un_" + nm] = (lambda nm: lambda: getattr(ca, nm)(operand(), **kw(out=gout())))(nm)
for nm in RED_D:
    OPS["red_" + nm] = (lambda nm: lambda: getattr(ca, nm)(
        operand(), **kw(axis=gaxis(), dtype=gdtype(), out=gout(), keepdims=r.choice([True, False, 2, None, "x"]))))(nm)
for nm in RED:
    OPS["red_" + nm] = (lambda nm: lambda: getattr(ca, nm)(
        operand(), **kw(axis=gaxis(), out=gout(), keepdims=r.choice([True, False, 2, None, "x"]))))(nm)
for nm in ["var", "std"]:
    OPS["red_" + nm] = (lambda nm: lambda: getattr(ca, nm)(
        operand(), **kw(axis=gaxis(), dtype=gdtype(), out=gout(), ddof=r.choice([0, 1, 5, -1, 2**63, 1.5, "x", None, float("nan")]),
                        keepdims=r.choice([True, False])))) (nm)
for nm in ["sum", "prod", "mean", "max", "min", "any", "all", "argmax", "argmin", "var", "std"]:
    OPS["meth_" + nm] = (lambda nm: lambda: getattr(tgt(), nm)(**kw(axis=gaxis(), keepdims=r.choice([True, False]))))(nm)
OPS.update({
    "where": lambda: ca.where(operand(), operand(), operand()),
    "clip": lambda: ca.clip(operand(), operand(), operand(), **kw(out=gout())),
    "pyop": lambda: r.choice(PYOPS)(r.choice([tgt, operand])(), operand()),
    "pyop_r": lambda: r.choice(PYOPS)(operand(), tgt()),
    "iop": lambda: r.choice(IOPS)(tgt(), operand()),
    "unop": lambda: r.choice([operator.neg, operator.pos, operator.invert, abs])(tgt()),
    "matmul": lambda: ca.matmul(operand(), operand(), **kw(out=gout())),
    "matmul_shapes": lambda: ca.matmul(small_array(tuple(r.randint(0, 3) for _ in range(r.randint(0, 4)))),
                                       small_array(tuple(r.randint(0, 3) for _ in range(r.randint(0, 4)))),
                                       **kw(out=gout())),
    "conv2d": lambda: nn.conv2d(img(), img(), r.choice([None, None, operand(), ca.zeros(r.randint(0, 4))]),
                                **kw(stride=gpair(), padding=gpair(), dilation=gpair(), groups=r.choice([1, 1, 2, 0, "x"]))),
    "conv2d_grad_input": lambda: nn.conv2d_grad_input(img(), img(), gshape(),
                                **kw(stride=gpair(), padding=gpair(), dilation=gpair())),
    "conv2d_grad_weight": lambda: nn.conv2d_grad_weight(img(), img(), gshape(),
                                **kw(stride=gpair(), padding=gpair(), dilation=gpair())),
    "conv2d_grad_bias": lambda: nn.conv2d_grad_bias(r.choice([img, operand])()),
    "max_pool2d": lambda: nn.max_pool2d(img(), gpair(), **kw(stride=gpair(), padding=gpair(), dilation=gpair(),
                                ceil_mode=r.choice([True, False, 2]), return_indices=r.choice([True, False]))),
    "max_pool2d_grad": pool_grad_case,
    "max_pool2d_grad_raw": lambda: nn.max_pool2d_grad(img(), pool_idx(img()), gshape()),
    "avg_pool2d": lambda: nn.avg_pool2d(img(), gpair(), **kw(stride=gpair(), padding=gpair(),
                                ceil_mode=r.choice([True, False]), count_include_pad=r.choice([True, False]),
                                divisor_override=r.choice([None, 0, -1, 2, 2**63, 1.5]))),
    "avg_pool2d_grad": lambda: nn.avg_pool2d_grad(img(), gshape(), gpair(), **kw(stride=gpair(), padding=gpair(),
                                ceil_mode=r.choice([True, False]), count_include_pad=r.choice([True, False]),
                                divisor_override=r.choice([None, 0, -1, 2, 2**63]))),
    "rng_random": lambda: gen().random(**kw(size=gsize(), dtype=gdtype())),
    "rng_uniform": lambda: gen().uniform(*[operand() for _ in range(r.randint(0, 2))], **kw(size=gsize(), dtype=gdtype())),
    "rng_normal": lambda: gen().normal(*[operand() for _ in range(r.randint(0, 2))], **kw(size=gsize(), dtype=gdtype())),
    "rng_integers": lambda: gen().integers(r.choice([operand(), gint(), 5]), *([r.choice([operand(), gint(), None])] if r.random() < 0.6 else []),
                                           **kw(size=gsize(), dtype=gdtype(), endpoint=r.choice([True, False, "x"]))),
    "rng_permutation": lambda: gen().permutation(r.choice([operand(), gint(), 5])),
    "rng_ctor": lambda: ca.random.Generator(r.choice([gscalar(), operand()])).random(3),
    "default_rng": lambda: ca.random.default_rng(gscalar()).random(gsize()),
    "concatenate": lambda: ca.concatenate([operand() for _ in range(r.randint(0, 3))], **kw(axis=gaxis(), out=gout(), dtype=gdtype())),
    "concatenate_g": lambda: ca.concatenate(operand(), **kw(axis=gaxis())),
    "stack": lambda: ca.stack([operand() for _ in range(r.randint(0, 3))], **kw(axis=gaxis(), out=gout(), dtype=gdtype())),
    "hvd_stack": lambda: r.choice([ca.vstack, ca.hstack, ca.dstack, ca.column_stack])([operand() for _ in range(r.randint(0, 3))]),
    "atleast": lambda: r.choice([ca.atleast_1d, ca.atleast_2d, ca.atleast_3d])(*[operand() for _ in range(r.randint(0, 2))]),
    "split": lambda: r.choice([ca.split, ca.array_split])(operand(), r.choice([gint(), [gint(), gint()], operand(), 0, 2]),
                                                          **kw(axis=gaxis())),
    "hvdsplit": lambda: r.choice([ca.hsplit, ca.vsplit, ca.dsplit])(operand(), r.choice([gint(), [gint()], 2, 1])),
    "pad": lambda: ca.pad(operand(), gpad(), **kw(mode=r.choice(["constant", "edge", "reflect", "symmetric", "wrap", "foo", 3]),
                                                 constant_values=r.choice([0, operand(), (1, 2), ((1, 2),)]))),
    "flip": lambda: r.choice([lambda a: ca.flip(a, gaxis()), ca.fliplr, ca.flipud])(operand()),
})

# mostly-valid nn calls with one thing mutated, so that the checks past the first are reached
def maybe(v, bad):
    return bad() if r.random() < 0.07 else v

def fimg(shape, dt):
    return ca.asarray(small_np(shape, dt))

def nn_geom():
    dt = r.choice(["float32", "float64"])
    n, c, h, w = r.randint(0, 2), r.randint(maybe(1, lambda: 0), 3), r.randint(maybe(2, lambda: 0), 7), r.randint(maybe(2, lambda: 0), 7)
    o, kh, kw_ = r.randint(0, 3), r.randint(1, 3), r.randint(1, 3)
    x = fimg(maybe((n, c, h, w), lambda: r.choice([(c, h, w), (n, c, h), (n, c + 1, h, w), (n, c, h, w, 1)])), maybe(dt, lambda: r.choice(DTS)))
    wt = fimg(maybe((o, c, kh, kw_), lambda: r.choice([(o, c + 1, kh, kw_), (o, c, 0, kw_), (o, c, 9, 9), (o, c, kh)])), maybe(dt, lambda: r.choice(DTS)))
    p = dict(stride=maybe(r.randint(1, 3), gpair), padding=maybe(r.randint(0, 2), gpair),
             dilation=maybe(r.randint(1, 2), gpair))
    return dt, x, wt, p

def nn_conv_chain():
    dt, x, wt, p = nn_geom()
    b = maybe(None, lambda: r.choice([fimg((wt.shape[0],), dt), fimg((wt.shape[0] + 1,), dt), operand()]))
    y = nn.conv2d(x, wt, b, **p)
    g = fimg(maybe(y.shape, lambda: tuple(s + r.choice([0, 1, -1]) for s in y.shape)), maybe(dt, lambda: r.choice(DTS)))
    k = r.randint(0, 2)
    if k == 0:
        return nn.conv2d_grad_input(g, wt, maybe(x.shape, gshape), **p)
    if k == 1:
        return nn.conv2d_grad_weight(x, g, maybe(wt.shape, gshape), **p)
    return nn.conv2d_grad_bias(g)

def nn_pool_chain():
    dt, x, wt, p = nn_geom()
    ks = maybe(r.randint(1, 3), gpair)
    st = maybe(r.choice([None, 1, 2]), gpair)
    pd = maybe(r.randint(0, 1) if ks not in (0, 1) else 0, gpair)
    cm = r.choice([True, False])
    if r.random() < 0.5:
        y, idx = nn.max_pool2d(x, ks, st, pd, maybe(1, gpair), cm, return_indices=True)
        g = fimg(maybe(y.shape, lambda: tuple(s + r.choice([0, 1]) for s in y.shape)), maybe(dt, lambda: r.choice(DTS)))
        if r.random() < 0.4 and idx.size:
            idx = idx.copy()
            flat = idx.reshape(-1)
            flat[r.randrange(flat.size)] = r.choice([-1, -2**62, 2**40, 2**31, 10**6, x.shape[-1] * x.shape[-2]])
        idx = maybe(idx, lambda: pool_idx(g))
        return nn.max_pool2d_grad(g, idx, maybe(x.shape, gshape))
    cip = r.choice([True, False])
    dv = maybe(None, lambda: r.choice([0, -1, 2, 2**63, 1.5]))
    y = nn.avg_pool2d(x, ks, st, pd, cm, cip, dv)
    g = fimg(maybe(y.shape, lambda: tuple(s + r.choice([0, 1]) for s in y.shape)), maybe(dt, lambda: r.choice(DTS)))
    return nn.avg_pool2d_grad(g, maybe(x.shape, gshape), ks, st, pd, cm, cip, dv)

OPS["nn_conv_chain"] = nn_conv_chain
OPS["nn_pool_chain"] = nn_pool_chain

def mm_chain():
    dt = r.choice(DTS)
    b = tuple(r.randint(0, 2) for _ in range(r.randint(0, 3)))
    m, k, n = r.randint(0, 4), r.randint(0, 4), r.randint(0, 4)
    sa = maybe(b + (m, k), lambda: r.choice([(k,), (), (m, k + 1), (3,) + b + (m, k)]))
    sb = maybe((k, n), lambda: r.choice([(k,), (), b + (k, n), (k + 1, n)]))
    x, y = small_array(sa, dt), small_array(sb, maybe(dt, lambda: r.choice(DTS)))
    out = None
    if r.random() < 0.4:
        ref = np.matmul(np.asarray(x).astype(dt), np.asarray(y).astype(dt)) if r.random() < 0.8 else small_np()
        out = ca.zeros(ref.shape, dtype=maybe(str(ref.dtype) if str(ref.dtype) in DTS else dt, lambda: r.choice(DTS)))
        if r.random() < 0.3 and out.ndim:
            out = out[..., ::-1]
        if r.random() < 0.2:
            out = x if isinstance(x, ca.Array) else out  # aliasing out
    return ca.matmul(x, y, out=out)

def join_chain():
    dt = r.choice(DTS)
    base = tuple(r.randint(0, 3) for _ in range(r.randint(1, 4)))
    arrs = [ca.asarray(small_np(maybe(base, lambda: tuple(s + 1 for s in base)), maybe(dt, lambda: r.choice(DTS))))
            for _ in range(r.randint(1, 4))]
    ax = maybe(r.randint(-len(base), len(base) - 1), gaxis)
    f = r.choice([ca.concatenate, ca.stack])
    out = None
    if r.random() < 0.4:
        try:
            ref = (np.concatenate if f is ca.concatenate else np.stack)([np.asarray(a) for a in arrs], axis=ax)
            out = ca.zeros(maybe(ref.shape, lambda: ref.shape[::-1] if ref.ndim else (1,)), dtype=maybe(dt, lambda: r.choice(DTS)))
            if r.random() < 0.3:
                out = ca.broadcast_to(ca.zeros(ref.shape[-1:] if ref.ndim else ()), ref.shape)
        except Exception:
            out = gout()
    return f(arrs, axis=ax, out=out, **kw(dtype=gdtype() if out is None else None, casting=r.choice(["no", "equiv", "safe", "same_kind", "unsafe", "x"])))

def iop_chain():
    dt = r.choice(DTS)
    s = tuple(r.randint(0, 3) for _ in range(r.randint(0, 4)))
    a = small_array(s, dt)
    a = a if isinstance(a, ca.Array) else ca.asarray(a)
    b = maybe(small_array(s[r.randint(0, len(s)):], r.choice(DTS)), operand)
    if r.random() < 0.15:
        b = a.T if a.ndim else a
    return r.choice(IOPS)(a, b)

OPS["mm_chain"] = mm_chain
OPS["join_chain"] = join_chain
OPS["iop_chain"] = iop_chain

stats = {name: [0, 0] for name in OPS}
bad = []
names = sorted(OPS)
import warnings
warnings.simplefilter("ignore")
for it in range(iterations):
    name = names[it % len(names)]
    try:
        OPS[name]()
        stats[name][0] += 1
    except SystemError as e:
        bad.append(f"{name}: SystemError {e}")
    except Exception:
        stats[name][1] += 1
print(json.dumps({"stats": stats, "bad": bad}))
'''


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_ops_garbage_never_crashes(tmp_path, seed):
    script = tmp_path / "fuzz_ops.py"
    script.write_text(FUZZ_SCRIPT)
    proc = subprocess.run([sys.executable, str(script), str(seed), "20000"], capture_output=True,
                          text=True, timeout=120, env=fresh_env(), cwd=str(tmp_path))
    assert proc.returncode == 0, \
        f"the interpreter died (return code {proc.returncode}):\n{proc.stderr[-3000:]}"
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["bad"] == []
    for name, (ok, refused) in out["stats"].items():
        assert ok + refused > 0, name


# ---------------------------------------------------------------------------------------------
# regressions found by the fuzzing
# ---------------------------------------------------------------------------------------------

def test_split_into_huge_number_of_sections_is_refused_not_a_hang():
    # array_split looped once per section (2**48 views of an empty axis): now MemoryError at once
    for f in (ca.array_split, ca.split, ca.hsplit):
        t = time.perf_counter()
        with pytest.raises(MemoryError, match="sections"):
            f(ca.zeros((0, 0, 0)), 2**48)
        assert time.perf_counter() - t < 1
    assert [p.shape for p in ca.array_split(ca.zeros(3), 5)] == [(1,), (1,), (1,), (0,), (0,)]


def test_pool_parameters_past_int32_are_refused():
    x = ca.ones((1, 1, 4, 4))
    with pytest.raises(RuntimeError, match="kernel_size"):
        nn.max_pool2d(x, 2**62, 1, 2**61)        # used to loop ~2**61 times per window
    with pytest.raises(RuntimeError, match="stride"):
        nn.avg_pool2d(x, 2, 2**62, 0, True)
    with pytest.raises(RuntimeError, match="dilation"):
        nn.max_pool2d(x, 1, 1, 0, 2**40)


def test_max_pool_huge_padding_is_fast():
    # the first tap of a window in the padding was found by stepping one dilation at a time
    x = ca.arange(30, dtype="float32").reshape(1, 1, 5, 6)
    t = time.perf_counter()
    y, idx = nn.max_pool2d(x, 2**31 - 1, 1, 2**30 - 1, return_indices=True)
    assert time.perf_counter() - t < 1
    assert y.shape == (1, 1, 5, 6)
    assert y.tolist() == [[[[29.0] * 6] * 5]]
    assert idx.tolist() == [[[[29] * 6] * 5]]

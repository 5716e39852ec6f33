"""Crash fuzzing (issue 17, item 10): hostile shapes, sizes, axes, indices, steps and dtypes fed
to carray's public functions and methods, in a subprocess per device, so that a crash (a
segfault, an abort, a kernel fault) or a hang fails the test naming the call instead of killing
pytest. Any Python exception is an acceptable answer to bad input; the differential fuzzers
(test_fuzz_ops, test_fuzz_programs) check the values of the good inputs.

CI runs CASES calls per device from fixed seeds; run longer with
`CARRAY_CRASH_FUZZ_CASES=100000 python -m pytest tests/carray/test_crash_fuzz.py` (and other
calls with CARRAY_CRASH_FUZZ_SEED=N).

Sizes are either small or astronomically large (2**40 elements and more): carray must refuse the
latter before allocating, and sizes in between would only measure the machine's memory."""

import os
import random
import subprocess
import sys

import pytest

from conftest import fresh_env, have_gpu

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = int(os.environ.get("CARRAY_CRASH_FUZZ_CASES", "600"))
SEED = int(os.environ.get("CARRAY_CRASH_FUZZ_SEED", "0"))

SMALL = [0, 1, 2, 3, 4, 5, -1, -2, -3, -5, 7]
HUGE = [2**31 - 1, 2**31, 2**32 + 1, 2**40, 2**62, 2**63 - 1, -(2**63), -(2**31) - 1, 10**20,
        -(10**20)]
ODD = ["1.5", "None", "'x'", "True", "[]", "()", "[1, 2]", "float('nan')", "float('inf')",
       "ca.float32", "(1, None)", "[[0]]"]
DTYPES = ["'float32'", "'float64'", "'int32'", "'int64'", "'bool'", "'complex64'", "'int8'",
          "'x'", "None", "ca.float32", "1", "object"]


def _int(r):
    return r.choice(SMALL if r.random() < 0.7 else HUGE)


def _ints(r, k=None):
    k = r.randint(0, 4) if k is None else k
    return [_int(r) for _ in range(k)]


def _shape(r):
    """A shape tuple whose element count (of the non-negative dims) is <= 1e5 or >= 2**40."""
    while True:
        dims = _ints(r)
        prod = 1
        for d in dims:
            prod *= max(d, 0)
        if prod <= 100_000 or prod >= 2**40 or any(d < 0 for d in dims):
            return "(" + "".join(f"{d}, " for d in dims) + ")"


def _size(r):
    """A count (of elements, rows, pad widths): small, negative, odd or >= 2**40, never in the
    range a machine could hold but slowly fill."""
    if r.random() < 0.15:
        return r.choice(ODD)
    return str(r.choice(SMALL if r.random() < 0.7 else [d for d in HUGE if not 0 < d < 2**40]))


def _bound(r):
    """An arange bound: small, odd or of magnitude >= 2**40, so that two bounds never span the
    2**31-element ranges that a machine could hold but slowly fill (as NumPy would too)."""
    if r.random() < 0.15:
        return r.choice(ODD)
    return str(r.choice(SMALL if r.random() < 0.7 else [d for d in HUGE if abs(d) >= 2**40]))


def _value(r):
    return str(_int(r)) if r.random() < 0.6 else r.choice(ODD)


def _axis(r):
    return str(_int(r)) if r.random() < 0.8 else r.choice(ODD + ["(0, 0)", "(0, -1)", "(5,)"])


def _slice(r):
    parts = [r.choice(["", str(_int(r))]) for _ in range(r.randint(2, 3))]
    return ":".join(parts)


def _index(r):
    items = []
    for _ in range(r.randint(1, 5)):
        kind = r.random()
        if kind < 0.35:
            items.append(str(_int(r)))
        elif kind < 0.6:
            items.append(_slice(r))
        elif kind < 0.7:
            items.append(r.choice(["None", "...", "True", "False"]))
        elif kind < 0.85:
            items.append("ca.asarray(" + str(_ints(r, r.randint(0, 3))) + ", dtype=ca.int64)"
                         + ".to(a.device)")
        else:
            items.append("ca.asarray(" + str([r.random() < 0.5 for _ in range(r.randint(0, 5))])
                         + ").to(a.device)")
    return ", ".join(items)


def _target(r):
    return r.choice(["a", "a", "v", "e", "z", "a[:, ::-1]", "a.T", "a[0]", "a[..., 1:]"])


TEMPLATES = [
    lambda r: f"ca.zeros({_shape(r)}, device=a.device)",
    lambda r: f"ca.ones({_shape(r)}, dtype={r.choice(DTYPES)})",
    lambda r: f"ca.empty({_shape(r)})",
    lambda r: f"ca.full({_shape(r)}, {_value(r)}, device=a.device)",
    lambda r: f"ca.arange({_size(r)}, device=a.device)",
    lambda r: f"ca.arange({_bound(r)}, {_bound(r)}, {r.choice(['2**50', '-1', '0', '1.5'])})",
    lambda r: f"ca.linspace(0, 1, {_size(r)})",
    lambda r: f"ca.eye({_size(r)}, {_size(r)}, k={_value(r)})",
    lambda r: f"{_target(r)}.reshape({_shape(r)})",
    lambda r: f"ca.broadcast_to({_target(r)}, {_shape(r)})",
    lambda r: f"{_target(r)}.expand({_shape(r)})",
    lambda r: f"{_target(r)}[{_index(r)}]",
    lambda r: f"{_target(r)}[{_index(r)}] = {r.choice(['1', '-2.5', 'v', 'a', 'e', 'z'])}",
    lambda r: f"{_target(r)}.sum(axis={_axis(r)})",
    lambda r: f"ca.mean({_target(r)}, axis={_axis(r)})",
    lambda r: f"ca.max({_target(r)}, axis={_axis(r)})",
    lambda r: f"ca.argmax({_target(r)}, axis={_axis(r)})",
    lambda r: f"ca.cumsum({_target(r)}, axis={_axis(r)})",
    lambda r: f"ca.sort({_target(r)}, axis={_axis(r)})",
    lambda r: f"ca.argsort({_target(r)}, axis={_axis(r)})",
    lambda r: f"{_target(r)}.transpose({', '.join(str(_int(r)) for _ in range(r.randint(0, 4)))})",
    lambda r: f"ca.moveaxis({_target(r)}, {_axis(r)}, {_axis(r)})",
    lambda r: f"ca.swapaxes({_target(r)}, {_axis(r)}, {_axis(r)})",
    lambda r: f"ca.squeeze({_target(r)}, axis={_axis(r)})",
    lambda r: f"ca.expand_dims({_target(r)}, {_axis(r)})",
    lambda r: f"ca.flip({_target(r)}, axis={_axis(r)})",
    lambda r: f"ca.concatenate([{_target(r)}, {_target(r)}], axis={_axis(r)})",
    lambda r: f"ca.stack([{_target(r)}, {_target(r)}], axis={_axis(r)})",
    # (sections: small counts only; NumPy too makes one array per section)
    lambda r: f"ca.split({_target(r)}, {r.choice(SMALL + ODD)}, axis={_axis(r)})",
    lambda r: f"ca.array_split({_target(r)}, {r.choice(SMALL + ODD)})",
    lambda r: f"ca.matmul({_target(r)}, ca.ones({_shape(r)}, device=a.device))",
    lambda r: f"{_target(r)}.astype({r.choice(DTYPES)})",
    lambda r: f"{_target(r)}.view({r.choice(DTYPES)})",
    lambda r: f"ca.where({_target(r)} > 3, {_target(r)}, {_value(r)})",
    lambda r: f"ca.clip({_target(r)}, {_value(r)}, {_value(r)})",
    lambda r: f"ca.pad({_target(r)}, {_size(r)})",
    lambda r: f"ca.add_at({_target(r)}, ca.asarray({_ints(r)}, dtype=ca.int64).to(a.device), 1)",
    lambda r: f"{_target(r)}.item({', '.join(str(_int(r)) for _ in range(r.randint(0, 3)))})",
    lambda r: f"ca.diff if False else {_target(r)}.std(axis={_axis(r)}, ddof={_value(r)})",
    lambda r: f"{_target(r)}.fill({_value(r)})",
    lambda r: f"ca.random.default_rng(0).integers(0, 5, size={_shape(r)})",
    lambda r: f"ca.nn.softmax({_target(r)}, axis={_axis(r)})",
    lambda r: f"ca.power({_target(r)}, {_value(r)})",
    lambda r: f"ca.floor_divide(v, {_value(r)})",
    lambda r: f"ca.remainder(v, ca.asarray({_ints(r, 5)}, dtype=ca.int64).to(a.device))",
    lambda r: f"{_target(r)}.to({r.choice(['a.device', repr('cpu'), repr('tpu'), '1'])})",
]


def _cases(seed, n):
    r = random.Random(seed)
    return [r.choice(TEMPLATES)(r) for _ in range(n)]


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_hostile_calls_never_crash(device):
    if device == "gpu" and not have_gpu():
        pytest.skip("no OpenCL device")
    cases = _cases((1234 if device == "cpu" else 5678) + SEED, CASES)
    env = fresh_env()
    try:
        run = subprocess.run([sys.executable, os.path.join(HERE, "_crash_worker.py"), device],
                             input="\n".join(cases) + "\n", capture_output=True, text=True,
                             env=env, timeout=60 + CASES * 0.5, check=False)
    except subprocess.TimeoutExpired as e:
        last = [ln for ln in (e.stdout or "").splitlines() if ln.startswith("CASE")][-1:]
        pytest.fail(f"the worker hung; last case started: {last}")
    done = run.stdout.rstrip().endswith("DONE")
    last = [ln for ln in run.stdout.splitlines() if ln.startswith("CASE")][-1:]
    assert run.returncode == 0 and done, (
        f"the worker died (exit {run.returncode}) on {last}\n{run.stderr[-3000:]}")

"""The one helper that checks an autograd op: forward against a NumPy reference, gradients with
autograd.gradcheck (float64 central differences), on contiguous, transposed and sliced inputs.

    check_op(lambda x, y: x * y, lambda x, y: x * y, (2, 3), (3,))

Each input is a shape (random normal values, or values from `low`/`high`) or a NumPy array
(float64 arrays become differentiable inputs; other dtypes are passed as constants). The op is
run on each layout of the float inputs (see `LAYOUTS`); for every layout its value must match
`ref` on the same NumPy values and `gradcheck` must pass.
"""

import numpy as np

import autograd

LAYOUTS = ("contiguous", "transposed", "sliced")


def make_input(values, layout, requires_grad=True):
    """A leaf autograd tensor holding `values` (a NumPy array) in the given memory layout:
    'contiguous', 'transposed' (a transposed view of memory laid out the other way; 1-d and 0-d
    arrays stay contiguous) or 'sliced' (every other element of a larger array along each dim)."""
    values = np.asarray(values)
    if layout == "contiguous" or values.ndim == 0:
        arr = np.array(values, copy=True)
    elif layout == "transposed":
        if values.ndim < 2:
            arr = np.array(values, copy=True)
        else:
            arr = np.ascontiguousarray(values.T).T
    elif layout == "sliced":
        big = np.full(tuple(2 * n + 1 for n in values.shape), np.nan, dtype=values.dtype)
        arr = big[tuple(slice(1, None, 2) for _ in values.shape)]
        arr[...] = values
    else:
        raise ValueError(layout)
    t = autograd.from_numpy(arr)
    assert np.shares_memory(np.asarray(t.array), arr) or arr.size == 0
    if requires_grad and values.dtype.kind == "f":
        t.requires_grad_(True)
    return t


def _values(spec, rng, low, high):
    if isinstance(spec, tuple):
        if low is None:
            return rng.standard_normal(spec)
        return rng.uniform(low, high, spec)
    return np.asarray(spec)


def check_op(fn, ref, *specs, seed=0, low=None, high=None, layouts=LAYOUTS, grad=True,
             rtol=1e-7, atol=1e-10, eps=1e-6, grad_atol=1e-5, grad_rtol=1e-3):
    """Check `fn` (on autograd tensors) against `ref` (the same op on NumPy arrays).

    specs: one per argument, a shape tuple (random float64 values, normal or uniform in
    [low, high)) or an array (float64 ones are differentiated, others are constants).
    For each layout: the forward values (each output, if fn returns a tuple) must equal ref's to
    rtol/atol, outputs must have ref's shape, and, when `grad`, gradcheck must pass.
    Returns the NumPy input values (for extra checks by the caller).
    """
    rng = np.random.default_rng(seed)
    values = [_values(s, rng, low, high) for s in specs]
    expected = ref(*[v.copy() for v in values])
    expected = expected if isinstance(expected, (tuple, list)) else (expected,)
    for layout in layouts:
        inputs = [make_input(v, layout) for v in values]
        out = fn(*inputs)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        assert len(outs) == len(expected), \
            f"{layout}: {len(outs)} outputs, expected {len(expected)}"
        for k, (o, e) in enumerate(zip(outs, expected)):
            e = np.asarray(e)
            got = np.asarray(o.detach().array)
            assert got.shape == e.shape, f"{layout}: output {k} shape {got.shape} != {e.shape}"
            if e.dtype.kind == "f":
                np.testing.assert_allclose(got, e, rtol=rtol, atol=atol,
                                           err_msg=f"{layout}: output {k}")
            else:
                np.testing.assert_array_equal(got, e, err_msg=f"{layout}: output {k}")
        if grad and any(isinstance(t, autograd.Tensor) and t.requires_grad for t in inputs):
            assert autograd.gradcheck(fn, tuple(inputs), eps=eps, atol=grad_atol,
                                      rtol=grad_rtol), layout
    return values

"""The op table's coverage: every row (carray.ops._optable.OPS) has everything an op needs.

Adding an op means one table row, one CPU loop, one OpenCL expression and, when it is
differentiable, one autograd function; each test here names the row and the part that is missing.
The values themselves are checked against NumPy by the op family's own tests (test_elementwise,
test_reductions, test_cumulative, test_nn, test_opencl), whose op lists come from this table.
"""

import numpy as np
import pytest

import carray as ca
import carray.nn
from carray.cpu import _nn as cpu_nn
from carray.ops import _optable, _ufunc
from carray.ops._optable import Identity, Kind

ROWS = _optable.OPS
ELEMENTWISE_KINDS = (Kind.UNARY, Kind.BINARY, Kind.COMPARE, Kind.PREDICATE)
LOOP_KINDS = ELEMENTWISE_KINDS + (Kind.WHERE, Kind.REDUCE)
ENUMS = {Kind.UNARY: _optable.UnaryOp, Kind.BINARY: _optable.BinaryOp,
         Kind.COMPARE: _optable.CompareOp, Kind.PREDICATE: _optable.PredicateOp,
         Kind.WHERE: _optable.WhereOp, Kind.REDUCE: _optable.ReduceOp,
         Kind.SCAN: _optable.ScanOp, Kind.NN: _optable.NNOp}


def row_id(op):
    return op.name


def _num(name):
    return ca.dtype(name).num


def _have_gpu():
    try:
        ca.opencl
        return True
    except Exception:               # no pyopencl or no device
        return False


# -- the table itself ---------------------------------------------------------------------------

def test_every_enum_member_has_exactly_one_row():
    for kind, enum in ENUMS.items():
        *members, count = list(enum)        # the last member (NUNARY, ...) counts the others
        codes = sorted(op.code for op in ROWS if op.kind == kind)
        assert codes == members, f"{enum.__name__}: rows {codes} vs members {members}"
        assert count.name.startswith("N") and count == len(members), enum.__name__


def test_names_are_unique_and_rows_are_consistent():
    names = [name for op in ROWS for name in (op.name,) + op.aliases]
    assert len(names) == len(set(names)), "a public name appears in two rows"
    for op in ROWS:
        assert set(op.dtypes) <= set(_optable.ALL_DTYPES), op.name
        assert (op.identity != Identity.NO_IDENTITY) == (op.kind in (Kind.REDUCE, Kind.SCAN)), \
            f"{op.name}: reductions and scans (only) have an identity"
        if op.kind in (Kind.COMPARE, Kind.PREDICATE):
            assert op.rule == _optable.DTypeRule.TO_BOOL and op.grad is None, op.name


def test_lookup_and_of_kind():
    assert _optable.lookup(Kind.UNARY, _optable.UnaryOp.U_EXP).name == "exp"
    assert [op.name for op in _optable.of_kind(Kind.REDUCE)] == ["sum", "prod", "max", "min"]
    with pytest.raises(KeyError):
        _optable.lookup(Kind.UNARY, 10_000)


# -- public functions ---------------------------------------------------------------------------

@pytest.mark.parametrize("op", ROWS, ids=row_id)
def test_row_has_a_public_function(op):
    where = carray.nn if op.kind == Kind.NN else ca
    for name in (op.name,) + op.aliases:
        fn = getattr(where, name, None)
        assert callable(fn), f"{op.name}: no public function {where.__name__}.{name}"
    if op.kind in ELEMENTWISE_KINDS:
        fn = getattr(ca, op.name)
        assert fn.__name__ == op.name and fn.__doc__ == op.doc
        assert op.name in _ufunc.ELEMENTWISE and op.name in _ufunc.__all__


def test_elementwise_functions_follow_the_row():
    # the generated functions dispatch on their own row: a value check of one of each kind
    x = ca.asarray([1.0, -2.0, 0.5])
    np.testing.assert_allclose(np.asarray(ca.exp(x)), np.exp([1.0, -2.0, 0.5]), rtol=1e-6)
    assert ca.less(x, 0).tolist() == [False, True, False]
    assert ca.isnan(x).tolist() == [False, False, False]
    assert ca.maximum(x, 0.75).tolist() == [1.0, 0.75, 0.75]
    assert ca.absolute is ca.abs and ca.true_divide is ca.divide and ca.mod is ca.remainder


# -- the CPU backend ------------------------------------------------------------------------------

@pytest.mark.parametrize("op", [op for op in ROWS if op.kind in LOOP_KINDS], ids=row_id)
def test_row_has_a_cpu_loop_for_each_dtype(op):
    for dtype in op.dtypes:
        assert _ufunc.cpu_loop_exists(op.kind, op.code, _num(dtype)), \
            f"{op.name}: no CPU loop for {dtype} in carray/cpu/_kernels.pxi (_fill)"


def test_cpu_loop_exists_rejects_unknown_ops():
    with pytest.raises(ValueError):
        _ufunc.cpu_loop_exists(Kind.UNARY, 10_000, 0)
    with pytest.raises(ValueError):
        _ufunc.cpu_loop_exists(Kind.UNARY, 0, 99)


@pytest.mark.parametrize("op", [op for op in ROWS if op.kind == Kind.SCAN], ids=row_id)
def test_scan_rows_run_on_the_cpu_for_each_dtype(op):
    ref = {"cumsum": np.cumsum, "cumprod": np.cumprod}[op.name]
    for dtype in op.dtypes:
        n = np.array([[1, 0, 1], [1, 1, 0]], dtype=dtype)
        got = getattr(ca, op.name)(ca.asarray(n), axis=1)
        np.testing.assert_array_equal(np.asarray(got), ref(n, axis=1))


@pytest.mark.parametrize("op", [op for op in ROWS if op.kind == Kind.NN], ids=row_id)
def test_nn_row_has_a_cpu_kernel(op):
    name = _optable.NN_BACKEND_NAMES[op.code]
    assert callable(getattr(cpu_nn, name, None)), f"{op.name}: carray.cpu._nn has no {name}"


# -- the OpenCL backend (its code is Python: checked without a device) ---------------------------

@pytest.mark.parametrize("op", [op for op in ROWS if op.kind in ELEMENTWISE_KINDS + (Kind.WHERE,)],
                         ids=row_id)
def test_row_has_an_opencl_expression_for_each_dtype(op):
    from carray.opencl import _elementwise
    for dtype in op.dtypes:
        try:
            expr = _elementwise.op_expr(op.kind, op.code, _num(dtype), _num(dtype))
        except KeyError:
            pytest.fail(f"{op.name}: no OpenCL expression in carray/opencl/_elementwise.py")
        assert isinstance(expr, str) and expr, (op.name, dtype, expr)


@pytest.mark.parametrize("op", [op for op in ROWS if op.kind in (Kind.REDUCE, Kind.SCAN)],
                         ids=row_id)
def test_reduction_and_scan_rows_have_opencl_code(op):
    from carray.opencl import _reduce, _scan
    module = _reduce if op.kind == Kind.REDUCE else _scan
    for dtype in op.dtypes:
        combine = module._combine(op.code, _num(dtype))
        assert "a" in combine and "b" in combine, (op.name, dtype, combine)
    if op.kind == Kind.REDUCE:
        expect = {Identity.ZERO: "(float)0", Identity.ONE: "(float)1",
                  Identity.LOWEST: "(float)(-INFINITY)", Identity.HIGHEST: "(float)(INFINITY)"}
        assert _reduce._identity(op.code, _num("float32")) == expect[op.identity], op.name


@pytest.mark.parametrize("op", [op for op in ROWS if op.kind == Kind.NN], ids=row_id)
def test_nn_row_has_an_opencl_kernel(op):
    from carray.opencl import _nn as gpu_nn
    name = _optable.NN_BACKEND_NAMES[op.code]
    assert callable(getattr(gpu_nn, name, None)), f"{op.name}: carray.opencl._nn has no {name}"


def test_opencl_backend_contract():
    import carray.opencl as backend
    for name in backend.__all__:
        assert hasattr(backend, name), f"carray.opencl.__all__ names {name}, which is missing"
    assert set(_optable.NN_BACKEND_NAMES.values()) <= set(dir(backend.nn))
    assert set(_optable.NN_BACKEND_NAMES.values()) <= set(dir(cpu_nn))


@pytest.mark.skipif(not _have_gpu(), reason="no OpenCL device")
@pytest.mark.parametrize("op", [op for op in ROWS if op.kind in ELEMENTWISE_KINDS], ids=row_id)
def test_row_runs_on_the_device_as_on_the_cpu(op):
    rng = np.random.default_rng(op.code)
    for dtype in op.dtypes:
        args = [rng.uniform(0.5, 3.0, size=(2, 3)).astype(dtype)]
        if op.kind in (Kind.BINARY, Kind.COMPARE):
            args.append(rng.uniform(0.5, 3.0, size=(3,)).astype(dtype))
        fn = getattr(ca, op.name)
        host = fn(*[ca.asarray(a) for a in args])
        device = fn(*[ca.asarray(a).to("gpu") for a in args])
        assert device.device == "gpu" and device.dtype == host.dtype
        np.testing.assert_allclose(np.asarray(device.to("cpu")), np.asarray(host), rtol=1e-5,
                                   err_msg=f"{op.name} {dtype}")


# -- autograd -------------------------------------------------------------------------------------

def _autograd_call(op):
    """(function, inputs) exercising the autograd function of a differentiable row, on float64
    values inside every op's domain."""
    import autograd
    import autograd.nn.functional as F

    def t(*shape):
        x = autograd.rand(*shape, dtype=autograd.float64) * 1.5 + 0.5
        if op.name in ("arcsin", "arccos", "arctanh", "erfinv"):     # domain (-1, 1)
            x = x - 1.25
        elif op.name == "arccosh":                                    # domain (1, inf)
            x = x + 1
        return x.requires_grad_()
    if op.kind == Kind.NN:
        fn = getattr(F, op.grad)
        if op.name == "conv2d":
            return fn, (t(2, 3, 5, 5), t(4, 3, 3, 3))
        if op.name == "softmax_cross_entropy":
            target = autograd.tensor([0, 2, 1])
            return (lambda x: fn(x, target)), (t(3, 4),)
        return (lambda x: fn(x, 2)), (t(1, 2, 4, 4),)
    fn = getattr(autograd, op.grad)
    if op.kind == Kind.BINARY:
        return fn, (t(2, 3), t(3))
    if op.kind == Kind.WHERE:
        cond = autograd.tensor([[True, False, True], [False, True, False]])
        return (lambda x, y: fn(cond, x, y)), (t(2, 3), t(2, 3))
    if op.kind == Kind.SCAN:
        return (lambda x: fn(x, 1)), (t(2, 3),)
    return fn, (t(2, 3),)


@pytest.mark.parametrize("op", [op for op in ROWS if op.grad is not None], ids=row_id)
def test_differentiable_row_has_an_autograd_function(op):
    import autograd
    fn, inputs = _autograd_call(op)
    out = fn(*inputs)
    assert isinstance(out.grad_fn, autograd.Function), \
        f"{op.name}: autograd's {op.grad} records no Function"
    # its gradient agrees with finite differences (away from kinks: values in [0.5, 2])
    assert autograd.gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-4)

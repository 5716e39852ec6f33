"""Recurrent layers (autograd/nn/rnn.py) against PyTorch on identical weights: outputs, h_n, c_n
and every input, state and parameter gradient, state_dict keys, reprs and errors, on cpu and gpu;
initialisation and dropout without PyTorch."""

import math
import warnings

import numpy as np
import pytest

import autograd
from autograd import nn

torch = pytest.importorskip("torch")


def _np(t):
    return t.detach().cpu().numpy()


def _pair(name, device, *args, **kwargs):
    """(torch module, autograd module on device) of class `name`, autograd's holding torch's
    weights (copied through NumPy)."""
    torch.manual_seed(0)
    tm = getattr(torch.nn, name)(*args, **kwargs).double()
    am = getattr(nn, name)(*args, **kwargs)
    assert list(am.state_dict()) == list(tm.state_dict())
    assert [n for n, _ in am.named_parameters()] == [n for n, _ in tm.named_parameters()]
    am.load_state_dict({k: autograd.tensor(v.numpy().astype(np.float32))
                        for k, v in tm.state_dict().items()})
    return tm.float(), am.to(device)


def _leaves(device, *arrays):
    """(torch leaves, autograd leaves on device) holding the same float32 values."""
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    ats = [autograd.tensor(a, device=device, requires_grad=True) for a in arrays]
    return ts, ats


def _close(a, t, what, tol=2e-5):
    got = _np(a)
    assert got.shape == tuple(t.shape), what
    np.testing.assert_allclose(got, t.detach().numpy(), rtol=tol, atol=tol, err_msg=what)


def _flat(out):
    """The tensors of a module's result ((out, h) or (out, (h, c)) or a cell's h / (h, c))."""
    if isinstance(out, tuple):
        return [t for o in out for t in _flat(o)]
    return [out]


def _check(tm, am, t_args, a_args, leaves, seed=1):
    """Run both modules, compare every result, backpropagate the same random weighting of the
    results and compare the gradients of the leaves and of every parameter."""
    touts, aouts = _flat(tm(*t_args)), _flat(am(*a_args))
    assert len(touts) == len(aouts)
    rng = np.random.default_rng(seed)
    tloss = aloss = 0
    for k, (t, a) in enumerate(zip(touts, aouts)):
        _close(a, t, f"result {k}")
        w = rng.standard_normal(tuple(t.shape)).astype(np.float32)
        tloss = tloss + (t * torch.tensor(w)).sum()
        aloss = aloss + (a * autograd.tensor(w, device=a.device)).sum()
    tloss.backward()
    aloss.backward()
    for k, (t, a) in enumerate(zip(*leaves)):
        _close(a.grad, t.grad, f"grad of input {k}", 1e-4)
    tparams = dict(tm.named_parameters())
    for name, p in am.named_parameters():
        assert p.grad is not None, name
        assert p.grad.device == p.device
        _close(p.grad, tparams[name].grad, f"grad of {name}", 1e-4)
    return aouts


LAYER_CASES = [
    ("LSTM", {}),
    ("LSTM", dict(num_layers=2)),
    ("LSTM", dict(bidirectional=True)),
    ("LSTM", dict(num_layers=2, bidirectional=True, batch_first=True)),
    ("LSTM", dict(proj_size=3)),
    ("LSTM", dict(proj_size=2, num_layers=2, bidirectional=True)),
    ("LSTM", dict(bias=False, num_layers=2)),
    ("GRU", {}),
    ("GRU", dict(num_layers=2, bidirectional=True)),
    ("GRU", dict(batch_first=True, bias=False)),
    ("RNN", {}),
    ("RNN", dict(nonlinearity="relu", num_layers=2, bidirectional=True)),
    ("RNN", dict(nonlinearity="relu", batch_first=True)),
]


def _hidden(name, kw, batch, hidden=6):
    rows = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    out = kw.get("proj_size") or hidden
    shapes = [(rows, batch, out)] + ([(rows, batch, hidden)] if name == "LSTM" else [])
    return shapes


@pytest.mark.parametrize("given_hx", [False, True])
@pytest.mark.parametrize("name,kw", LAYER_CASES)
def test_layers_match_torch(device, name, kw, given_hx):
    tm, am = _pair(name, device, 5, 6, **kw)
    rng = np.random.default_rng(0)
    steps, batch = 4, 3
    shape = (batch, steps, 5) if kw.get("batch_first") else (steps, batch, 5)
    arrays = [rng.standard_normal(shape).astype(np.float32)]
    if given_hx:
        arrays += [rng.standard_normal(s).astype(np.float32) for s in _hidden(name, kw, batch)]
    ts, ats = _leaves(device, *arrays)
    hx_t = hx_a = None
    if given_hx:
        hx_t = tuple(ts[1:]) if name == "LSTM" else ts[1]
        hx_a = tuple(ats[1:]) if name == "LSTM" else ats[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch: "LSTM with projections is not supported with
        outs = _check(tm, am, (ts[0], hx_t), (ats[0], hx_a), (ts, ats))  # oneDNN"
    assert all(o.device == ats[0].device for o in outs)
    assert outs[0].grad_fn is not None


@pytest.mark.parametrize("name,kw", [("LSTM", dict(num_layers=2, proj_size=2)),
                                     ("GRU", dict(bidirectional=True)),
                                     ("RNN", dict(batch_first=True))])
def test_unbatched_input(device, name, kw):
    tm, am = _pair(name, device, 5, 6, **kw)
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal((4, 5)).astype(np.float32)]
    arrays += [rng.standard_normal((s[0], s[2])).astype(np.float32)
               for s in _hidden(name, kw, 1)]
    ts, ats = _leaves(device, *arrays)
    hx_t = tuple(ts[1:]) if name == "LSTM" else ts[1]
    hx_a = tuple(ats[1:]) if name == "LSTM" else ats[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outs = _check(tm, am, (ts[0], hx_t), (ats[0], hx_a), (ts, ats))
        assert outs[0].shape[0] == 4 and outs[1].ndim == 2
        tm2, am2 = _pair(name, device, 5, 6, **kw)
        ts, ats = _leaves(device, arrays[0])
        _check(tm2, am2, (ts[0],), (ats[0],), (ts, ats))


def test_non_contiguous_input_and_empty_batch(device):
    tm, am = _pair("LSTM", device, 5, 6, num_layers=2)
    x = np.random.default_rng(3).standard_normal((3, 4, 5)).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    ax = autograd.tensor(x, device=device, requires_grad=True)
    _check(tm, am, (tx.transpose(0, 1),), (ax.transpose(0, 1),), ([tx], [ax]))
    out, (h, c) = am(autograd.zeros(4, 0, 5, device=device))
    assert out.shape == (4, 0, 6) and h.shape == (2, 0, 6) and c.shape == (2, 0, 6)


@pytest.mark.parametrize("name,kw", [("LSTMCell", {}), ("LSTMCell", dict(bias=False)),
                                     ("GRUCell", {}), ("GRUCell", dict(bias=False)),
                                     ("RNNCell", {}), ("RNNCell", dict(nonlinearity="relu"))])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("given_hx", [True, False])
def test_cells_match_torch(device, name, kw, batched, given_hx):
    tm, am = _pair(name, device, 5, 6, **kw)
    rng = np.random.default_rng(4)
    lead = (3,) if batched else ()
    arrays = [rng.standard_normal(lead + (5,)).astype(np.float32)]
    if given_hx:
        n = 2 if name == "LSTMCell" else 1
        arrays += [rng.standard_normal(lead + (6,)).astype(np.float32) for _ in range(n)]
    ts, ats = _leaves(device, *arrays)
    args_t, args_a = [ts[0]], [ats[0]]
    if given_hx:
        args_t.append(tuple(ts[1:]) if name == "LSTMCell" else ts[1])
        args_a.append(tuple(ats[1:]) if name == "LSTMCell" else ats[1])
    _check(tm, am, args_t, args_a, (ts, ats))


def test_lstm_cell_second_order_matches_torch(device):
    tm, am = _pair("LSTMCell", device, 4, 3)
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal((2, 4)).astype(np.float32) for _ in range(1)]
    arrays += [rng.standard_normal((2, 3)).astype(np.float32) for _ in range(2)]
    ts, ats = _leaves(device, *arrays)
    th, tc = tm(ts[0], (ts[1], ts[2]))
    ah, ac = am(ats[0], (ats[1], ats[2]))
    tg = torch.autograd.grad((th * th).sum() + (tc * tc).sum(), ts, create_graph=True)
    ag = autograd.grad((ah * ah).sum() + (ac * ac).sum(), ats, create_graph=True)
    sum(g.pow(3).sum() for g in tg).backward()
    sum((g * g * g).sum() for g in ag).backward()
    for t, a in zip(ts, ats):
        _close(a.grad, t.grad, "second-order gradient", 1e-4)
    tw = dict(tm.named_parameters())
    for name, p in am.named_parameters():
        _close(p.grad, tw[name].grad, name, 1e-4)


def test_lstm_layer_second_order_matches_torch(device):
    """The whole-layer LSTM node's create_graph backward (both directions, two layers, the
    final states used too)."""
    tm, am = _pair("LSTM", device, 3, 4, num_layers=2, bidirectional=True)
    x = np.random.default_rng(7).standard_normal((3, 2, 3)).astype(np.float32)
    (tx,), (ax,) = _leaves(device, x)
    tout, (th, tc) = tm(tx)
    aout, (ah, ac) = am(ax)
    (tg,) = torch.autograd.grad(tout.pow(2).sum() + (th * tc).sum(), tx, create_graph=True)
    (ag,) = autograd.grad((aout * aout).sum() + (ah * ac).sum(), ax, create_graph=True)
    _close(ag, tg, "first-order gradient", 1e-4)
    (tg * tg).sum().backward()
    (ag * ag).sum().backward()
    _close(ax.grad, tx.grad, "second-order gradient", 1e-4)
    tw = dict(tm.named_parameters())
    for name, p in am.named_parameters():
        _close(p.grad, tw[name].grad, name, 1e-4)


def test_gru_second_order_matches_torch(device):
    tm, am = _pair("GRU", device, 3, 4)
    x = np.random.default_rng(6).standard_normal((3, 2, 3)).astype(np.float32)
    (tx,), (ax,) = _leaves(device, x)
    (tg,) = torch.autograd.grad(tm(tx)[0].pow(2).sum(), tx, create_graph=True)
    (ag,) = autograd.grad((am(ax)[0] * am(ax)[0]).sum(), ax, create_graph=True)
    _close(ag, tg, "first-order gradient", 1e-4)
    (tg * tg).sum().backward()
    (ag * ag).sum().backward()
    _close(ax.grad, tx.grad, "second-order gradient", 1e-4)


# ---------------------------------------------------------------------------------------------
# construction: parameters, initialisation, reprs, dropout
# ---------------------------------------------------------------------------------------------


def test_parameters_and_init():
    m = nn.LSTM(10, 20, num_layers=2, bidirectional=True, proj_size=5)
    t = torch.nn.LSTM(10, 20, num_layers=2, bidirectional=True, proj_size=5)
    assert [(n, tuple(p.shape)) for n, p in m.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in t.named_parameters()]
    assert m._flat_weights_names == t._flat_weights_names
    assert [[tuple(w.shape) for w in ws] for ws in m.all_weights] == \
        [[tuple(w.shape) for w in ws] for ws in t.all_weights]
    bound = 1 / math.sqrt(20)
    vals = np.concatenate([_np(p).ravel() for p in m.parameters()])
    assert np.abs(vals).max() <= bound and np.abs(vals).max() > 0.9 * bound
    cell = nn.GRUCell(3, 8, bias=False)
    assert [n for n, _ in cell.named_parameters()] == ["weight_ih", "weight_hh"]
    assert cell.bias_ih is None and cell.weight_hh.shape == (24, 8)
    assert nn.GRU(2, 3, dtype=autograd.float64).weight_ih_l0.dtype == autograd.float64
    autograd.manual_seed(7)
    a = nn.RNN(3, 4)
    autograd.manual_seed(7)
    b = nn.RNN(3, 4)
    np.testing.assert_array_equal(_np(a.weight_hh_l0), _np(b.weight_hh_l0))


@pytest.mark.parametrize("name,args,kw", [
    ("LSTM", (10, 20), {}), ("LSTM", (10, 20, 2), dict(batch_first=True, dropout=0.5)),
    ("LSTM", (10, 20), dict(proj_size=5, bias=False, bidirectional=True)),
    ("GRU", (3, 4), dict(num_layers=3)), ("RNN", (3, 4), dict(nonlinearity="relu")),
    ("RNN", (3, 4, 2, "relu"), {}), ("LSTMCell", (3, 4), {}), ("GRUCell", (3, 4), dict(bias=False)),
    ("RNNCell", (3, 4), dict(nonlinearity="relu")),
])
def test_repr(name, args, kw):
    assert repr(getattr(nn, name)(*args, **kw)) == repr(getattr(torch.nn, name)(*args, **kw))


def test_dropout_between_layers():
    m = nn.LSTM(4, 5, num_layers=3, dropout=0.5)
    x = autograd.randn(6, 2, 4)
    out, (h, c) = m(x)
    m.eval()
    out_eval, (h_eval, _) = m(x)
    assert not np.allclose(_np(out), _np(out_eval))
    # the first layer's final state sees no dropout
    np.testing.assert_allclose(_np(h)[0], _np(h_eval)[0], rtol=1e-6, atol=1e-7)
    out2 = m(x)[0]
    np.testing.assert_array_equal(_np(out2), _np(out_eval))  # eval: deterministic
    with pytest.warns(UserWarning, match="num_layers greater than 1"):
        nn.GRU(3, 4, dropout=0.2)


# ---------------------------------------------------------------------------------------------
# errors: PyTorch's types and messages
# ---------------------------------------------------------------------------------------------


def _same_error(make, call):
    """make(lib) builds the object, call(lib, obj) uses it; both libraries must raise the same
    exception type with the same message."""
    errors = []
    for lib in (torch, autograd):
        with pytest.raises(Exception) as info:  # noqa: PT011 (compared below)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                obj = make(lib)
                if call is not None:
                    call(lib, obj)
        errors.append(info.value)
    t, a = errors
    assert type(a) is type(t) and str(a) == str(t)


@pytest.mark.parametrize("args,kw", [
    ((10, 20), dict(dropout=1.5)), ((10, 20), dict(dropout=True)), ((10, 20), dict(bias=1)),
    ((10, 20), dict(batch_first=None)), ((10.0, 20), {}), ((10, 0), {}), ((0, 20), {}),
    ((10, 20, 0), {}), ((10, 20), dict(proj_size=-1)), ((10, 20), dict(proj_size=20)),
    ((10, 20), dict(nonlinearity="sigmoid")), ((10, 20), dict(proj_size=3)),
])
@pytest.mark.parametrize("name", ["RNN", "GRU", "LSTM"])
def test_constructor_errors(name, args, kw):
    if name == "LSTM" and ("nonlinearity" in kw or kw.get("proj_size") == 3):
        return  # valid for LSTM (proj_size), or a TypeError worded by Python (nonlinearity)
    _same_error(lambda lib: getattr(lib.nn, name)(*args, **kw), None)


def _lstm_call(x_shape, hx_shapes=None, dtype="float32", **kw):
    def call(lib, m):
        x = lib.zeros(x_shape, dtype=getattr(lib, dtype))
        hx = None if hx_shapes is None else tuple(lib.zeros(s) for s in hx_shapes)
        if hx is not None and len(hx) == 1:
            hx = hx[0]
        m(x, hx)
    return call


@pytest.mark.parametrize("name,x,hx,dtype", [
    ("LSTM", (4, 3, 5), None, "float32"),                          # wrong feature size
    ("LSTM", (4, 3, 10), [(1, 3, 20), (2, 3, 20)], "float32"),     # wrong h0 shape
    ("LSTM", (4, 3, 10), [(2, 3, 20), (2, 2, 20)], "float32"),     # wrong c0 shape
    ("LSTM", (4, 3, 10), [(2, 3, 20), (3, 20)], "float32"),        # c0 of the wrong dims
    ("LSTM", (4, 10), [(2, 1, 20), (2, 1, 20)], "float32"),        # unbatched with 3-d hx
    ("LSTM", (4, 3, 10), None, "float64"),                         # wrong dtype
    ("LSTM", (2, 4, 3, 10), None, "float32"),                      # 4-d input
    ("LSTM", (10,), None, "float32"),                              # 1-d input
    ("LSTM", (0, 3, 10), None, "float32"),                         # no time steps
    ("GRU", (4, 3, 10), [(2, 3, 21)], "float32"),
    ("GRU", (4, 3, 10), [(3, 20)], "float32"),
    ("GRU", (4, 10), [(2, 1, 20)], "float32"),
    ("GRU", (4, 3, 10, 1), None, "float32"),
    ("RNN", (4, 3, 10, 1), None, "float32"),
    ("RNN", (4, 3, 9), None, "float32"),
    ("RNN", (4, 3, 10), [(2, 4, 20)], "float32"),
])
def test_forward_errors(name, x, hx, dtype):
    _same_error(lambda lib: getattr(lib.nn, name)(10, 20, 2), _lstm_call(x, hx, dtype))


@pytest.mark.parametrize("name,x,hx", [
    ("LSTMCell", (3, 5), None), ("LSTMCell", (3, 10), [(2, 20), (2, 20)]),
    ("LSTMCell", (3, 10), [(3, 7), (3, 20)]), ("LSTMCell", (3, 10), [(3, 20), (3, 7)]),
    ("LSTMCell", (1, 3, 10), None), ("LSTMCell", (3, 10), [(1, 3, 20), (3, 20)]),
    ("GRUCell", (3, 5), None), ("GRUCell", (3, 10), [(2, 20)]), ("GRUCell", (3, 10), [(3, 7)]),
    ("GRUCell", (10,), [(3, 20)]), ("GRUCell", (3, 10), [(1, 3, 20)]),
    ("RNNCell", (3, 5), None), ("RNNCell", (3, 10), [(2, 20)]), ("RNNCell", (2, 3, 10), None),
])
def test_cell_errors(name, x, hx):
    _same_error(lambda lib: getattr(lib.nn, name)(10, 20), _lstm_call(x, hx))


def test_cell_dtype_error():
    _same_error(lambda lib: lib.nn.RNNCell(10, 20),
                lambda lib, m: m(lib.zeros((3, 10), dtype=lib.float64)))

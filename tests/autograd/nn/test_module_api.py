"""Module API beyond layers: hooks (forward, pre, full backward), repr of nested models,
get_buffer/get_parameter, cuda(), DataParallel; compared with torch."""

import inspect

import numpy as np
import pytest

import autograd


def _model(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))


def _copy_weights(src, dst):
    with autograd.no_grad():
        for (_, p), (_, q) in zip(src.named_parameters(), dst.named_parameters()):
            p.copy_(autograd.tensor(q.detach().numpy()))


@pytest.mark.parametrize("input_grad", [True, False])
def test_full_backward_hook_as_torch(input_grad, device):
    torch = pytest.importorskip("torch")
    x0 = np.random.default_rng(0).standard_normal((5, 3)).astype("float32")
    results = {}
    for lib in (torch, autograd):
        m = _model(lib)
        if lib is torch:
            tm = m
        else:
            _copy_weights(m, tm)
            m.to(device)
        seen = []

        def hook(mod, grad_input, grad_output, seen=seen):
            seen.append(([None if g is None else g.detach().cpu().numpy() for g in grad_input],
                         [g.detach().cpu().numpy() for g in grad_output]))
            if grad_input[0] is not None:
                return (grad_input[0] * 2,)
            return None

        m[2].register_full_backward_hook(hook)
        handle = m[0].register_full_backward_hook(hook)
        x = lib.tensor(x0, requires_grad=input_grad)
        if lib is autograd:
            x = x.to(device).detach().requires_grad_(input_grad)
        with pytest.warns(UserWarning) if lib is torch and not input_grad else _nothing():
            m(x).sum().backward()
        results[lib] = (list(seen), m[0].weight.grad.cpu().numpy().copy(),
                        None if x.grad is None else x.grad.cpu().numpy().copy())
        handle.remove()
        m(x).sum().backward()
        assert len(seen) == 3      # the removed hook did not run again
    (ts, tw, tx), (s, w, x) = results[torch], results[autograd]
    assert len(s) == len(ts) == 2
    for (gi, go), (tgi, tgo) in zip(s, ts):
        assert [g is None for g in gi] == [g is None for g in tgi]
        for a, b in zip(gi + go, tgi + tgo):
            if b is not None:
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w, tw, rtol=1e-5, atol=1e-6)
    assert (x is None) == (tx is None)
    if tx is not None:
        np.testing.assert_allclose(x, tx, rtol=1e-5, atol=1e-6)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_backward_hook_returning_wrong_count():
    m = autograd.nn.Linear(2, 2)
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError, match="invalid number of grad_input, got 2, but "
                                           "expected 1"):
        m(autograd.ones(1, 2, requires_grad=True)).sum().backward()


def test_forward_hooks_prepend_and_kwargs():
    torch = pytest.importorskip("torch")
    for lib in (torch, autograd):
        m = lib.nn.Linear(2, 2)
        order = []
        m.register_forward_pre_hook(lambda mod, args: order.append("pre1"))
        m.register_forward_pre_hook(lambda mod, args: order.append("pre0"), prepend=True)

        def pre_kw(mod, args, kwargs):
            order.append(("prekw", sorted(kwargs)))
            return (args[0] * 0,), kwargs

        m.register_forward_pre_hook(pre_kw, with_kwargs=True)
        m.register_forward_hook(lambda mod, args, out: order.append("post1"))
        m.register_forward_hook(lambda mod, args, kwargs, out: out + 1, with_kwargs=True,
                                prepend=True)
        out = m(lib.ones(1, 2))
        assert out.tolist() == [(m.bias + 1).tolist()]
        if lib is torch:
            expected = order
    assert order == expected == ["pre0", "pre1", ("prekw", []), "post1"]


def test_pre_hook_with_kwargs_bad_return():
    m = autograd.nn.Linear(2, 2)
    m.register_forward_pre_hook(lambda mod, args, kwargs: 3, with_kwargs=True)
    with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"):
        m(autograd.ones(1, 2))


def test_repr_of_nested_models_as_torch():
    torch = pytest.importorskip("torch")

    def build(nn):
        return nn.Sequential(
            nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
            nn.MaxPool2d(2), nn.Dropout(0.25),
            nn.Sequential(nn.Flatten(), nn.Linear(32, 10), nn.BatchNorm1d(10), nn.Sigmoid()),
            nn.Linear(10, 2, bias=False))

    def ours(text):
        # PyTorch before BatchNorm's `bias` flag (2.13) leaves it out of the repr
        if "bias" not in inspect.signature(torch.nn.BatchNorm2d).parameters:
            text = text.replace(", bias=True, track_running_stats", ", track_running_stats")
        return text

    assert ours(repr(build(autograd.nn))) == repr(build(torch.nn))
    assert ours(repr(autograd.nn.DataParallel(build(autograd.nn)))) == \
        repr(torch.nn.DataParallel(build(torch.nn)))


def test_get_buffer_and_get_parameter_as_torch():
    torch = pytest.importorskip("torch")
    for lib in (torch, autograd):
        m = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
        assert m.get_buffer("1.running_mean") is m[1].running_mean
        assert m.get_parameter("0.weight") is m[0].weight
        msgs = []
        for call in (lambda: m.get_buffer("0.weight"), lambda: m.get_buffer("0.foo"),
                     lambda: m.get_parameter("1.running_var"),
                     lambda: m.get_parameter("0.foo"), lambda: m.get_submodule("2")):
            with pytest.raises(AttributeError) as e:
                call()
            msgs.append(str(e.value))
        if lib is torch:
            expected = msgs
    assert msgs == expected


def test_non_persistent_buffer_and_incompatible_keys():
    torch = pytest.importorskip("torch")
    for lib in (torch, autograd):
        m = lib.nn.Linear(2, 2)
        m.register_buffer("kept", lib.zeros(2))
        m.register_buffer("scratch", lib.zeros(2), persistent=False)
        keys = list(m.state_dict())
        sd = {k: v for k, v in m.state_dict().items() if k != "bias"}
        sd["extra"] = lib.zeros(1)
        r = m.load_state_dict(sd, strict=False)
        if lib is torch:
            expected = (keys, r.missing_keys, r.unexpected_keys, repr(r))
    assert (keys, r.missing_keys, r.unexpected_keys, repr(r)) == expected
    assert type(r).__name__ == "_IncompatibleKeys" and r._fields == expected_fields()


def expected_fields():
    return ("missing_keys", "unexpected_keys")


def test_data_parallel_runs_the_module(device):
    torch = pytest.importorskip("torch")
    inner = autograd.nn.Linear(3, 2).to(device)
    dp = autograd.nn.DataParallel(inner)
    tdp = torch.nn.DataParallel(torch.nn.Linear(3, 2))
    assert list(dp.state_dict()) == list(tdp.state_dict())
    assert dp.module is inner
    x = autograd.randn(4, 3, device=device)
    y = dp(x)
    assert y.tolist() == inner(x).tolist()
    y.sum().backward()
    assert inner.weight.grad is not None
    with pytest.raises(TypeError, match="wraps an nn.Module"):
        autograd.nn.DataParallel(3)
    assert isinstance(dp, autograd.nn.parallel.DataParallel)

"""Grad mode: no_grad, enable_grad, set_grad_enabled as context managers and decorators
(no_grad with and without parentheses), nesting, exceptions, thread-locality."""

import threading

import pytest

import autograd


def _x():
    return autograd.ones(2, requires_grad=True)


def test_no_grad_context():
    x = _x()
    with autograd.no_grad():
        assert not autograd.is_grad_enabled()
        y = x * 2
    assert autograd.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf
    assert (x * 2).requires_grad


def test_no_grad_decorator_with_and_without_parentheses():
    x = _x()

    @autograd.no_grad()
    def f(t):
        return t * 2, autograd.is_grad_enabled()

    @autograd.no_grad
    def g(t):
        """doc of g"""
        return t * 2, autograd.is_grad_enabled()

    for fn in (f, g):
        y, enabled = fn(x)
        assert not y.requires_grad and not enabled
        assert autograd.is_grad_enabled()
    assert g.__name__ == "g" and g.__doc__ == "doc of g"


def test_enable_grad_inside_no_grad():
    x = _x()
    with autograd.no_grad():
        with autograd.enable_grad():
            y = x * 2
        z = x * 2
    assert y.requires_grad and not z.requires_grad

    @autograd.enable_grad()
    def f(t):
        return t * 2

    with autograd.no_grad():
        assert f(x).requires_grad
        assert not autograd.is_grad_enabled()


def test_enable_grad_decorator_without_parentheses():
    @autograd.enable_grad
    def f():
        return autograd.is_grad_enabled()

    with autograd.no_grad():
        assert f() is True


def test_set_grad_enabled():
    x = _x()
    with autograd.set_grad_enabled(False):
        assert not (x * 2).requires_grad
        with autograd.set_grad_enabled(True):
            assert (x * 2).requires_grad
    assert autograd.is_grad_enabled()

    @autograd.set_grad_enabled(False)
    def f(t):
        return t * 2

    assert autograd.is_grad_enabled()  # decorating does not change the mode
    assert not f(x).requires_grad
    assert autograd.is_grad_enabled()
    # as a function it takes effect at once
    autograd.set_grad_enabled(False)
    try:
        assert not autograd.is_grad_enabled()
    finally:
        autograd.set_grad_enabled(True)
    assert autograd.is_grad_enabled()
    with pytest.raises(TypeError):
        autograd.set_grad_enabled("yes")


def test_mode_restored_after_exception():
    with pytest.raises(ValueError):
        with autograd.no_grad():
            raise ValueError

    assert autograd.is_grad_enabled()

    @autograd.no_grad()
    def boom():
        raise KeyError

    with pytest.raises(KeyError):
        boom()
    assert autograd.is_grad_enabled()


def test_nested_no_grad_restores_outer_mode():
    with autograd.no_grad():
        with autograd.no_grad():
            pass
        assert not autograd.is_grad_enabled()
    assert autograd.is_grad_enabled()


def test_thread_started_inside_no_grad_has_grad_enabled():
    result = {}

    def work():
        result["enabled"] = autograd.is_grad_enabled()
        result["rg"] = (_x() * 2).requires_grad

    with autograd.no_grad():
        t = threading.Thread(target=work)
        t.start()
        t.join()
        assert not autograd.is_grad_enabled()
    assert result == {"enabled": True, "rg": True}


def test_no_grad_in_thread_does_not_leak():
    ready = threading.Event()
    done = threading.Event()

    def work():
        with autograd.no_grad():
            ready.set()
            done.wait(5)

    t = threading.Thread(target=work)
    t.start()
    ready.wait(5)
    assert autograd.is_grad_enabled()
    assert (_x() * 2).requires_grad
    done.set()
    t.join()


def test_backward_still_works_after_no_grad_section():
    x = _x()
    y = x * 3
    with autograd.no_grad():
        z = y * 2  # not recorded
    assert not z.requires_grad
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_factories_under_no_grad_still_require_grad_when_asked():
    with autograd.no_grad():
        w = autograd.zeros(2, requires_grad=True)
    assert w.requires_grad and w.is_leaf


def test_no_grad_matches_torch():
    torch = pytest.importorskip("torch")
    with torch.no_grad():
        tx = torch.ones(2, requires_grad=True)
        ty = tx * 2
    with autograd.no_grad():
        x = _x()
        y = x * 2
    assert y.requires_grad == ty.requires_grad and x.requires_grad == tx.requires_grad

"""gradgradcheck's default grad_outputs live on the outputs' device (h12 item 1)."""

import autograd


def test_gradgradcheck_default_grad_outputs_on_the_device(device):
    x = autograd.randn(3, 4, dtype=autograd.float64, device=device, requires_grad=True)
    w = autograd.randn(4, 2, dtype=autograd.float64, device=device, requires_grad=True)
    assert autograd.gradgradcheck(lambda a, b: (a @ b).tanh(), (x, w))


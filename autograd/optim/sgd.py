"""SGD with momentum, dampening, Nesterov momentum, weight decay and maximize (torch.optim.SGD).

For each parameter p with gradient g (PyTorch's update rule, in place on p.array):
    g = -g if maximize;  g = g + weight_decay * p
    buf = g on the first step, else buf = momentum * buf + (1 - dampening) * g
    g = g + momentum * buf if nesterov else buf          (only when momentum != 0)
    p = p - lr * g
"""

import carray as ca
from autograd.grad_mode import no_grad
from autograd.optim.optimizer import Optimizer
from autograd.tensor import Tensor
from carray import nn as _cnn

__all__ = ["SGD"]


class SGD(Optimizer):
    """SGD(params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
    maximize=False). ValueError for a negative lr, momentum or weight_decay, and for nesterov
    without momentum or with dampening."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)

    @no_grad()
    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns closure()'s loss (the
        closure runs first, with grad enabled)."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr = group["lr"]
            momentum = group["momentum"]
            dampening = group["dampening"]
            decay = group["weight_decay"]
            if momentum == 0 and decay == 0 and not group["maximize"]:
                self._plain_step(group["params"], lr)
                continue
            fused = {}      # device -> (params, grads, buffers) for carray.nn.sgd_momentum_step
            for p in group["params"]:
                if p.grad is None:
                    continue
                buf = self.state[p].get("momentum_buffer") if momentum != 0 else None
                if buf is not None and p.array.flags.c_contiguous:
                    rows = fused.setdefault(p.array.device, ([], [], []))
                    for seq, a in zip(rows, (p.array, p.grad.array, buf.array)):
                        seq.append(a)
                    buf._vc[0] += 1
                    p._vc[0] += 1
                    continue
                g = p.grad.array
                if group["maximize"]:
                    g = ca.negative(g)
                if decay != 0:
                    g = ca.add(g, ca.multiply(p.array, decay))
                if momentum != 0:
                    buf = self._momentum(p, g, momentum, dampening)
                    if group["nesterov"]:
                        g = ca.add(g, ca.multiply(buf, momentum))
                    else:
                        g = buf
                ca.subtract(p.array, ca.multiply(g, lr), out=p.array)
                p._vc[0] += 1
            for data, grads, bufs in fused.values():
                _cnn.sgd_momentum_step(data, grads, bufs, lr, momentum, dampening, decay,
                                       group["nesterov"], group["maximize"])
        return loss

    @staticmethod
    def _plain_step(params, lr):
        """p -= lr * g for every parameter with a gradient, by carray.nn.sgd_step: one pass over
        each parameter, one kernel launch for many on the device (by device; a parameter that
        is not C-contiguous is updated by itself)."""
        by_device = {}
        for p in params:
            if p.grad is None:
                continue
            if p.array.flags.c_contiguous:
                pair = by_device.setdefault(p.array.device, ([], []))
                pair[0].append(p.array)
                pair[1].append(p.grad.array)
            else:
                ca.subtract(p.array, ca.multiply(p.grad.array, lr), out=p.array)
            p._vc[0] += 1
        for data, grads in by_device.values():
            _cnn.sgd_step(data, grads, lr)

    def _momentum(self, p, g, momentum, dampening):
        """The momentum buffer of p updated with g (a copy of g on the first step)."""
        state = self.state[p]
        buf = state.get("momentum_buffer")
        if buf is None:
            buf = state["momentum_buffer"] = Tensor._wrap(g.copy())
            return buf.array
        b = buf.array
        ca.multiply(b, momentum, out=b)
        if dampening != 0:
            ca.add(b, ca.multiply(g, 1 - dampening), out=b)
        else:
            ca.add(b, g, out=b)
        buf._vc[0] += 1
        return b

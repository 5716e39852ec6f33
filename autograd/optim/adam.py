"""Adam and AdamW (torch.optim.Adam / AdamW), PyTorch's update rule in place on p.array.

For each parameter p with gradient g, at step t (1, 2, ...):
    g = -g if maximize
    Adam:  g = g + weight_decay * p          AdamW:  p = p * (1 - lr * weight_decay)
    m = lerp(m, g, 1 - beta1)                (= beta1 * m + (1 - beta1) * g)
    v = beta2 * v + (1 - beta2) * g * g
    vmax = max(vmax, v), used instead of v    (amsgrad)
    p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)
"""

import math

import carray as ca
from autograd.grad_mode import no_grad
from autograd.optim.optimizer import Optimizer
from autograd.tensor import Tensor
from carray import nn as _cnn

__all__ = ["Adam", "AdamW"]


def _check(lr, betas, eps, weight_decay):
    """ValueError naming the first invalid hyperparameter."""
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


class Adam(Optimizer):
    """Adam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
    maximize=False, decoupled_weight_decay=False). weight_decay is L2 (added to the
    gradient) unless decoupled_weight_decay (AdamW). ValueError for invalid hyperparameters."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        _check(lr, betas, eps, weight_decay)
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps,
                    "weight_decay": weight_decay, "amsgrad": amsgrad, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    @no_grad()
    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns closure()'s loss."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            fused = {}          # device -> the parameters updated by one carray.nn.adam_step
            for p in group["params"]:
                if p.grad is None:
                    continue
                if group["amsgrad"] or not p.array.flags.c_contiguous:
                    self._update(p, group)
                else:
                    fused.setdefault(p.array.device, []).append(p)
            for params in fused.values():
                self._fused_update(params, group)
        return loss

    def _fused_update(self, params, group):
        """The update of params (C-contiguous, one device, no amsgrad) in one pass each: one
        kernel launch for many on the device."""
        states = [self._state(p, False) for p in params]
        for state in states:
            state["step"] += 1
        beta1, beta2 = group["betas"]
        _cnn.adam_step([p.array for p in params], [p.grad.array for p in params],
                       [s["exp_avg"].array for s in states],
                       [s["exp_avg_sq"].array for s in states], [s["step"] for s in states],
                       group["lr"], beta1, beta2, group["eps"], group["weight_decay"],
                       group["decoupled_weight_decay"], group["maximize"])
        for p in params:
            p._vc[0] += 1

    def _state(self, p, amsgrad):
        """p's state, made on first use: step 0 and zero moments."""
        state = self.state[p]
        if not state:
            state["step"] = 0
            state["exp_avg"] = Tensor._wrap(ca.zeros_like(p.array))
            state["exp_avg_sq"] = Tensor._wrap(ca.zeros_like(p.array))
            if amsgrad:
                state["max_exp_avg_sq"] = Tensor._wrap(ca.zeros_like(p.array))
        return state

    def _update(self, p, group):
        lr = group["lr"]
        beta1, beta2 = group["betas"]
        decay = group["weight_decay"]
        amsgrad = group["amsgrad"]
        state = self._state(p, amsgrad)
        d = p.array
        g = p.grad.array
        if group["maximize"]:
            g = ca.negative(g)
        step = state["step"] = state["step"] + 1
        if decay != 0:
            if group["decoupled_weight_decay"]:
                ca.multiply(d, 1 - lr * decay, out=d)
            else:
                g = ca.add(g, ca.multiply(d, decay))
        m = state["exp_avg"].array
        v = state["exp_avg_sq"].array
        _lerp_(m, g, 1 - beta1)
        ca.multiply(v, beta2, out=v)
        gg = ca.multiply(g, 1 - beta2)
        ca.add(v, ca.multiply(gg, g, out=gg), out=v)
        if amsgrad:
            vmax = state["max_exp_avg_sq"].array
            ca.maximum(vmax, v, out=vmax)
            v = vmax
        step_size = lr / (1 - beta1 ** step)
        denom = ca.sqrt(v)
        ca.divide(denom, math.sqrt(1 - beta2 ** step), out=denom)
        ca.add(denom, group["eps"], out=denom)
        ca.divide(m, denom, out=denom)
        ca.subtract(d, ca.multiply(denom, step_size, out=denom), out=d)
        p._vc[0] += 1


def _lerp_(start, end, weight):
    """start += weight * (end - start) in place, with PyTorch's two formulas for precision."""
    diff = ca.subtract(end, start)
    if weight < 0.5:
        ca.add(start, ca.multiply(diff, weight, out=diff), out=start)
    else:
        ca.subtract(end, ca.multiply(diff, 1 - weight, out=diff), out=start)


class AdamW(Adam):
    """AdamW(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False,
    *, maximize=False): Adam with decoupled weight decay p *= 1 - lr * weight_decay."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

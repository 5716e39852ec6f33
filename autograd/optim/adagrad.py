"""Adagrad (torch.optim.Adagrad), PyTorch's single-tensor update rule in place on p.array.

For each parameter p with gradient g, at step t (1, 2, ...):
    g = -g if maximize;  g = g + weight_decay * p
    clr = lr / (1 + (t - 1) * lr_decay)
    s = s + g * g                      (s starts at initial_accumulator_value)
    p = p - clr * g / (sqrt(s) + eps)
"""

import carray as ca
from autograd.grad_mode import no_grad
from autograd.optim._ops import addcdiv_, addcmul_, full_state
from autograd.optim.optimizer import Optimizer

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad(params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
    eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None). The state
    (step, sum) of the constructor's parameters is made at once, as PyTorch's. ValueError for a
    negative lr, lr_decay, weight_decay, initial_accumulator_value or eps."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0,
                 initial_accumulator_value=0, eps=1e-10, foreach=None, *, maximize=False,
                 differentiable=False, fused=None):
        for name, value in (("learning rate", lr), ("lr_decay value", lr_decay),
                            ("weight_decay value", weight_decay),
                            ("initial_accumulator_value value", initial_accumulator_value),
                            ("epsilon value", eps)):
            if not 0.0 <= value:
                raise ValueError(f"Invalid {name}: {value}")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value,
                    "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, group)

    def _init_state(self, p, group):
        state = self.state[p]
        if not state:
            state["step"] = 0
            state["sum"] = full_state(p, group["initial_accumulator_value"])

    @no_grad()
    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns closure()'s loss."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    self._update(p, group)
        return loss

    def _update(self, p, group):
        self._init_state(p, group)  # a parameter added to the optimizer later
        state = self.state[p]
        state["step"] += 1
        g = p.grad.array
        if group["maximize"]:
            g = ca.negative(g)
        if group["weight_decay"] != 0:
            g = ca.add(g, ca.multiply(p.array, group["weight_decay"]))
        clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        s = addcmul_(state["sum"].array, g, g)
        std = ca.sqrt(s)
        ca.add(std, group["eps"], out=std)
        addcdiv_(p.array, g, std, -clr)
        p._vc[0] += 1

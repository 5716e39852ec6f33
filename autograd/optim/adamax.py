"""Adamax (torch.optim.Adamax), PyTorch's single-tensor update rule in place on p.array.

For each parameter p with gradient g, at step t (1, 2, ...):
    g = -g if maximize;  g = g + weight_decay * p
    m = lerp(m, g, 1 - beta1)
    u = max(beta2 * u, |g| + eps)
    p = p - lr / (1 - beta1**t) * m / u
"""

import carray as ca
from autograd.grad_mode import no_grad
from autograd.optim._ops import addcdiv_, lerp_, zeros_state
from autograd.optim.optimizer import Optimizer

__all__ = ["Adamax"]


def check_adam_like(lr, eps, betas, weight_decay):
    """ValueError naming the first invalid hyperparameter (PyTorch's messages)."""
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


class Adamax(Optimizer):
    """Adamax(params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
    maximize=False, differentiable=False, capturable=False): Adam with the infinity norm.
    ValueError for invalid hyperparameters."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        check_adam_like(lr, eps, betas, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

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
        state = self.state[p]
        if not state:
            state["step"] = 0
            state["exp_avg"] = zeros_state(p)
            state["exp_inf"] = zeros_state(p)
        state["step"] += 1
        beta1, beta2 = group["betas"]
        g = p.grad.array
        if group["maximize"]:
            g = ca.negative(g)
        if group["weight_decay"] != 0:
            g = ca.add(g, ca.multiply(p.array, group["weight_decay"]))
        m = lerp_(state["exp_avg"].array, g, 1 - beta1)
        u = state["exp_inf"].array
        ca.multiply(u, beta2, out=u)
        bound = ca.abs(g)
        ca.add(bound, group["eps"], out=bound)
        ca.maximum(u, bound, out=u)
        clr = group["lr"] / (1 - beta1 ** state["step"])
        addcdiv_(p.array, m, u, -clr)
        p._vc[0] += 1

"""RAdam (torch.optim.RAdam), PyTorch's single-tensor update rule in place on p.array.

For each parameter p with gradient g, at step t (1, 2, ...):
    g = -g if maximize;  weight decay as Adam's (or AdamW's if decoupled_weight_decay)
    m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
    rho_inf = 2 / (1 - beta2) - 1;  rho_t = rho_inf - 2 t beta2**t / (1 - beta2**t)
    rho_t > 5:  p = p - m / (1 - beta1**t) * lr * sqrt(1 - beta2**t) / (sqrt(v) + eps) * rect,
                rect = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
    else:       p = p - m / (1 - beta1**t) * lr
"""

import math

import carray as ca
from autograd.grad_mode import no_grad
from autograd.optim._ops import addcmul_, lerp_, zeros_state
from autograd.optim.adamax import check_adam_like
from autograd.optim.optimizer import Optimizer

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """RAdam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
    differentiable=False): Adam with the variance rectification of Liu et al. ValueError for
    invalid hyperparameters."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        check_adam_like(lr, eps, betas, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
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
            state["exp_avg_sq"] = zeros_state(p)
        step = state["step"] = state["step"] + 1
        lr, (beta1, beta2), decay = group["lr"], group["betas"], group["weight_decay"]
        d = p.array
        g = p.grad.array
        if group["maximize"]:
            g = ca.negative(g)
        if decay != 0:
            if group["decoupled_weight_decay"]:
                ca.multiply(d, 1 - lr * decay, out=d)
            else:
                g = ca.add(g, ca.multiply(d, decay))
        m = lerp_(state["exp_avg"].array, g, 1 - beta1)
        v = state["exp_avg_sq"].array
        ca.multiply(v, beta2, out=v)
        addcmul_(v, g, g, 1 - beta2)
        bias1 = 1 - beta1 ** step
        bias2 = 1 - beta2 ** step
        update = ca.divide(m, bias1)
        ca.multiply(update, lr, out=update)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias2
        if rho_t > 5.0:
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                             / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            adaptive = ca.sqrt(v)
            ca.add(adaptive, group["eps"], out=adaptive)
            ca.divide(bias2 ** 0.5, adaptive, out=adaptive)
            ca.multiply(update, adaptive, out=update)
            ca.multiply(update, rect, out=update)
        ca.subtract(d, update, out=d)
        p._vc[0] += 1

"""RMSprop (torch.optim.RMSprop), PyTorch's single-tensor update rule in place on p.array.

For each parameter p with gradient g:
    g = -g if maximize;  g = g + weight_decay * p
    v = alpha * v + (1 - alpha) * g * g
    centered:  gbar = lerp(gbar, g, 1 - alpha);  avg = sqrt(v - gbar * gbar) + eps
    else:      avg = sqrt(v) + eps
    momentum > 0:  buf = momentum * buf + g / avg;  p = p - lr * buf
    else:          p = p - lr * g / avg
"""

import carray as ca
from autograd.grad_mode import no_grad
from autograd.optim._ops import addcdiv_, addcmul_, lerp_, zeros_state
from autograd.optim.optimizer import Optimizer

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop(params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
    centered=False, capturable=False, foreach=None, maximize=False, differentiable=False).
    ValueError for a negative lr, eps, momentum, weight_decay or alpha."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        for name, value in (("learning rate", lr), ("epsilon value", eps),
                            ("momentum value", momentum), ("weight_decay value", weight_decay),
                            ("alpha value", alpha)):
            if not 0.0 <= value:
                raise ValueError(f"Invalid {name}: {value}")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay,
                    "capturable": capturable, "foreach": foreach, "maximize": maximize,
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
            state["square_avg"] = zeros_state(p)
            if group["momentum"] > 0:
                state["momentum_buffer"] = zeros_state(p)
            if group["centered"]:
                state["grad_avg"] = zeros_state(p)
        state["step"] += 1
        alpha = group["alpha"]
        g = p.grad.array
        if group["maximize"]:
            g = ca.negative(g)
        if group["weight_decay"] != 0:
            g = ca.add(g, ca.multiply(p.array, group["weight_decay"]))
        v = state["square_avg"].array
        ca.multiply(v, alpha, out=v)
        addcmul_(v, g, g, 1 - alpha)
        if group["centered"]:
            gbar = lerp_(state["grad_avg"].array, g, 1 - alpha)
            avg = ca.subtract(v, ca.multiply(gbar, gbar))
            ca.sqrt(avg, out=avg)
        else:
            avg = ca.sqrt(v)
        ca.add(avg, group["eps"], out=avg)
        if group["momentum"] > 0:
            buf = state["momentum_buffer"].array
            ca.multiply(buf, group["momentum"], out=buf)
            addcdiv_(buf, g, avg)
            ca.subtract(p.array, ca.multiply(buf, group["lr"]), out=p.array)
        else:
            addcdiv_(p.array, g, avg, -group["lr"])
        p._vc[0] += 1

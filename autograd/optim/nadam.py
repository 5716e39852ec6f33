"""NAdam (torch.optim.NAdam), PyTorch's single-tensor update rule in place on p.array.

For each parameter p with gradient g, at step t (1, 2, ...):
    g = -g if maximize;  weight decay as Adam's (or AdamW's if decoupled_weight_decay)
    mu_t = beta1 * (1 - 0.5 * 0.96**(t * momentum_decay));  prod_t = mu_1 * ... * mu_t
    m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
    denom = sqrt(v / (1 - beta2**t)) + eps
    p = p - lr (1 - mu_t) / (1 - prod_t) * g / denom
          - lr mu_{t+1} / (1 - prod_t * mu_{t+1}) * m / denom
The product prod_t is kept as a 0-d float32 tensor ('mu_product'), as PyTorch keeps it, so
its rounding matches PyTorch's.
"""

import struct

import carray as ca
from autograd.grad_mode import no_grad
from autograd.optim._ops import addcdiv_, addcmul_, lerp_, zeros_state
from autograd.optim.adamax import check_adam_like
from autograd.optim.optimizer import Optimizer
from autograd.tensor import Tensor

__all__ = ["NAdam"]


def _float32(x):
    """x rounded to the nearest float32."""
    return struct.unpack("f", struct.pack("f", x))[0]


class NAdam(Optimizer):
    """NAdam(params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None, maximize=False,
    capturable=False, differentiable=False): Adam with Nesterov momentum (Dozat).
    ValueError for invalid hyperparameters."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        check_adam_like(lr, eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
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

    def _mu_product(self, state, mu):
        """prod_t = prod_{t-1} * mu in the dtype of the stored 0-d tensor; returns prod_t."""
        prod = state["mu_product"]
        value = prod.item() * mu
        if prod.array.dtype == ca.float32:
            value = _float32(prod.item() * _float32(mu))
        prod.array[...] = value
        return prod.item()

    def _update(self, p, group):
        state = self.state[p]
        if not state:
            state["step"] = 0
            state["mu_product"] = Tensor._wrap(ca.asarray(1.0, dtype=ca.float32))
            state["exp_avg"] = zeros_state(p)
            state["exp_avg_sq"] = zeros_state(p)
        step = state["step"] = state["step"] + 1
        lr, (beta1, beta2), decay = group["lr"], group["betas"], group["weight_decay"]
        d = p.array
        g = p.grad.array
        if group["maximize"]:
            g = ca.negative(g)
        bias2 = 1 - beta2 ** step
        if decay != 0:
            if group["decoupled_weight_decay"]:
                ca.multiply(d, 1 - lr * decay, out=d)
            else:
                g = ca.add(g, ca.multiply(d, decay))
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * group["momentum_decay"])))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * group["momentum_decay"])))
        prod = self._mu_product(state, mu)
        m = lerp_(state["exp_avg"].array, g, 1 - beta1)
        v = state["exp_avg_sq"].array
        ca.multiply(v, beta2, out=v)
        addcmul_(v, g, g, 1 - beta2)
        denom = ca.divide(v, bias2)
        ca.sqrt(denom, out=denom)
        ca.add(denom, group["eps"], out=denom)
        addcdiv_(d, g, denom, -lr * (1.0 - mu) / (1.0 - prod))
        addcdiv_(d, m, denom, (-lr * mu_next) / (1.0 - prod * mu_next))
        p._vc[0] += 1

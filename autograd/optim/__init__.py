"""autograd.optim: optimizers with PyTorch's API (torch.optim)."""

from autograd.optim.adam import Adam, AdamW
from autograd.optim.optimizer import Optimizer
from autograd.optim.sgd import SGD

__all__ = ["Adam", "AdamW", "Optimizer", "SGD"]

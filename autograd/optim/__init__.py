"""autograd.optim: optimizers with PyTorch's API (torch.optim)."""

from autograd.optim.adam import Adam, AdamW
from autograd.optim.optimizer import Optimizer
from autograd.optim.sgd import SGD

# -- h7: more optimizers, lr schedulers --
# isort: split
from autograd.optim import lr_scheduler  # noqa: F401
from autograd.optim.adagrad import Adagrad
from autograd.optim.adamax import Adamax
from autograd.optim.nadam import NAdam
from autograd.optim.radam import RAdam
from autograd.optim.rmsprop import RMSprop

__all__ = ["Adam", "AdamW", "Optimizer", "SGD"]
__all__ += ["Adagrad", "Adamax", "NAdam", "RAdam", "RMSprop", "lr_scheduler"]  # h7

"""BatchNorm1d and BatchNorm2d: normalise each channel by batch statistics while training and
by running estimates in eval mode (PyTorch's rules for momentum and num_batches_tracked)."""

from autograd import factories
from autograd.grad_mode import no_grad
from autograd.nn import functional as F
from autograd.nn import init
from autograd.nn.module import Module
from autograd.nn.parameter import Parameter

__all__ = ["BatchNorm1d", "BatchNorm2d"]


class _NormBase(Module):
    """What batch and instance norm share (torch.nn.modules.batchnorm._NormBase): weight (1)
    and bias (0, unless bias=False) when affine; running_mean (0), running_var (1) and
    num_batches_tracked (int64 0) buffers when track_running_stats."""

    _expected_dims = ()
    _optional_state = ("num_batches_tracked",)  # older checkpoints lack it (PyTorch keeps ours)

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        kw = {"dtype": dtype, "device": device}
        if affine:
            self.weight = Parameter(factories.empty(num_features, **kw))
            if bias:
                self.bias = Parameter(factories.empty(num_features, **kw))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", factories.zeros(num_features, **kw))
            self.register_buffer("running_var", factories.ones(num_features, **kw))
            self.register_buffer("num_batches_tracked",
                                 factories.tensor(0, dtype="int64", device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        """running_mean = 0, running_var = 1, num_batches_tracked = 0."""
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self):
        """Running statistics reset; weight = 1 and bias = 0."""
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input):
        if input.dim() not in self._expected_dims:
            want = " or ".join(f"{d}D" for d in self._expected_dims)
            raise ValueError(f"expected {want} input (got {input.dim()}D input)")

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    """Batch norm's forward: batch statistics while training (updating the running ones), the
    running statistics in eval mode (the base of BatchNorm1d/2d, as in PyTorch)."""

    def forward(self, input):
        """ValueError for inputs of the wrong rank."""
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked.item())
        batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        use_running = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if use_running else None,
                            self.running_var if use_running else None, self.weight, self.bias,
                            batch_stats, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch norm over (N, C) or (N, C, L) inputs, per channel C."""

    _expected_dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch norm over (N, C, H, W) inputs, per channel C."""

    _expected_dims = (4,)

"""Utilities with torch.utils' names: autograd.utils.data (Dataset, TensorDataset, DataLoader)."""

from autograd.utils import data  # noqa: F401

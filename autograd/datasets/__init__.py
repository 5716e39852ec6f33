"""Small datasets bundled with autograd (no download): load_digits, the UCI 8x8 digits."""

from autograd.datasets.digits import load_digits

__all__ = ["load_digits"]

"""Small datasets bundled with autograd (no download): load_digits, the UCI 8x8 digits;
load_text, text corpora (tiny Shakespeare) for language models."""

from autograd.datasets.digits import load_digits
from autograd.datasets.text import load_text  # h9: text corpora

__all__ = ["load_digits", "load_text"]

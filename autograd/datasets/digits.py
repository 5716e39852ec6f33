"""The UCI "Optical Recognition of Handwritten Digits" images (1,797 of 8x8 pixels, values
0..16, labels 0..9), bundled as digits.bin.gz next to this file (source and licence:
digits_LICENSE.txt). Read with gzip/struct/array only: no NumPy, no download.

digits.bin.gz is the gzip of:
    8 bytes      b"DIGITS01"
    2 x u32 LE   N = 1797 images, D = 64 pixels per image
    N * D bytes  the pixels, one byte each (0..16), each image's 8x8 in row-major order,
                 images in the order of scikit-learn's copy
    N bytes      the labels (0..9)

The train/test split is fixed: a Fisher-Yates shuffle of range(N) (for i = N-1 down to 1, swap
i with j = x % (i + 1), x the next SplitMix64 output, seed 0); the first 1,437 shuffled indices
are the training set, the last 360 the test set, each returned in file order. Plain integer
arithmetic, so it is the same on every machine and with every version of carray.
"""

import functools
import gzip
import struct
from array import array
from importlib import resources

import carray
from autograd.tensor import Tensor

__all__ = ["load_digits", "split_indices", "N_TRAIN", "N_TEST"]

N_IMAGES = 1797
N_TRAIN = 1437
N_TEST = N_IMAGES - N_TRAIN     # 360
_FILE = "digits.bin.gz"
_MAGIC = b"DIGITS01"
_MASK = 2**64 - 1


def load_digits(split=None, *, device=None):
    """(images, labels) of the digits dataset: images a float32 tensor (N, 1, 8, 8) of pixels
    scaled to [0, 1] (value / 16), labels an int64 tensor (N,). split None gives all 1,797
    images, "train" the 1,437 training images, "test" the 360 test images (see the module
    docstring for the fixed rule). ValueError for another split."""
    pixels, labels = _raw()
    if split is not None:
        idx = split_indices(split)
        pixels = b"".join(pixels[i * 64:(i + 1) * 64] for i in idx)
        labels = bytes(labels[i] for i in idx)
    scale = [k / 16 for k in range(17)]
    images = carray.asarray(array("f", map(scale.__getitem__, pixels)))
    images = images.reshape(len(labels), 1, 8, 8)
    targets = carray.asarray(array("q", list(labels)))
    if device is not None and str(device).split(":")[0] != "cpu":
        images, targets = images.to(str(device)), targets.to(str(device))
    return Tensor._wrap(images), Tensor._wrap(targets)


def split_indices(split):
    """The sorted indices (into the full dataset) of split "train" or "test" (ValueError for
    others)."""
    if split == "train":
        return sorted(_permutation()[:N_TRAIN])
    if split == "test":
        return sorted(_permutation()[N_TRAIN:])
    raise ValueError(f"split must be None, 'train' or 'test', got {split!r}")


@functools.lru_cache(maxsize=None)
def _permutation():
    """The fixed shuffle of range(N_IMAGES) that defines the split (a tuple)."""
    perm = list(range(N_IMAGES))
    rng = _splitmix64(0)
    for i in range(N_IMAGES - 1, 0, -1):
        j = next(rng) % (i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    return tuple(perm)


def _splitmix64(state):
    """SplitMix64 (Steele, Lea, Flood 2014): a stream of 64-bit integers from a seed."""
    while True:
        state = (state + 0x9E3779B97F4A7C15) & _MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        yield z ^ (z >> 31)


@functools.lru_cache(maxsize=None)
def _raw():
    """(pixels, labels) as bytes, read from the bundled file and checked."""
    blob = gzip.decompress(resources.files(__package__).joinpath(_FILE).read_bytes())
    magic, n, d = struct.unpack_from("<8sII", blob)
    body = blob[16:]
    if magic != _MAGIC or n != N_IMAGES or d != 64 or len(body) != n * (d + 1):
        raise ValueError(f"the bundled {_FILE} is corrupted (bad header or size); reinstall "
                         f"the package")
    pixels, labels = body[:n * d], body[n * d:]
    if max(pixels) > 16 or max(labels) > 9:
        raise ValueError(f"the bundled {_FILE} is corrupted (values out of range); reinstall "
                         f"the package")
    return pixels, labels

"""carray.fft against numpy.fft (pocketfft) on every device: power-of-two and other lengths,
batches, n=/s=, axis=/axes=, the three norms, real-input transforms, frequencies and shifts,
bad input."""

import numpy as np
import pytest

import carray as ca

from conftest import on

NORMS = ("backward", "ortho", "forward")


def _signal(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _check(got, expected, single):
    g = np.asarray(got.to("cpu"))
    assert g.shape == expected.shape
    assert g.dtype == expected.dtype, (g.dtype, expected.dtype)
    scale = max(np.abs(expected).max(), 1.0) if expected.size else 1.0
    err = np.abs(g - expected).max() / scale if expected.size else 0.0
    assert err < (2e-6 if single else 1e-12), err


@pytest.mark.parametrize("n", (1, 8, 12))
@pytest.mark.parametrize("dtype", ("complex64", "complex128"))
def test_fft_ifft(dtype, n, device):
    x = _signal((3, n), dtype)
    a = on(x, device)
    single = dtype == "complex64"
    for norm in NORMS:
        _check(ca.fft.fft(a, norm=norm), np.fft.fft(x, norm=norm), single)
        _check(ca.fft.ifft(a, norm=norm), np.fft.ifft(x, norm=norm), single)
    _check(ca.fft.fft(a, n=5), np.fft.fft(x, n=5), single)         # zero-padded / cropped
    _check(ca.fft.fft(a, n=max(n // 2, 1)), np.fft.fft(x, n=max(n // 2, 1)), single)
    _check(ca.fft.fft(a.T, axis=0), np.fft.fft(x.T, axis=0), single)   # non-contiguous


def test_accuracy_n1024_complex64():
    x = _signal((2, 1024), "complex64", 1)
    exact = np.fft.fft(x.astype("complex128"))
    got = np.asarray(ca.fft.fft(ca.asarray(x)))
    assert got.dtype == np.complex64
    assert np.abs(got - exact).max() / np.abs(exact).max() < 1e-6
    x = _signal((1000,), "complex64", 2)                            # Bluestein
    got = np.asarray(ca.fft.fft(ca.asarray(x)))
    exact = np.fft.fft(x.astype("complex128"))
    assert np.abs(got - exact).max() / np.abs(exact).max() < 1e-6


@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_real_transforms(dtype, device):
    x = _signal((2, 6), dtype)
    a = on(x, device)
    single = dtype == "float32"
    _check(ca.fft.rfft(a), np.fft.rfft(x), single)
    _check(ca.fft.rfft(a, n=9, norm="ortho"), np.fft.rfft(x, n=9, norm="ortho"), single)
    X = np.fft.rfft(x)
    A = on(X, device)
    for n in (None, 7, 10):
        _check(ca.fft.irfft(A, n=n), np.fft.irfft(X, n=n), single)
        _check(ca.fft.hfft(A, n=n, norm="forward"), np.fft.hfft(X, n=n, norm="forward"), single)
    _check(ca.fft.ihfft(a), np.fft.ihfft(x), single)
    assert ca.fft.rfft(a).dtype == ("complex64" if single else "complex128")


def test_nd_transforms(device):
    x = _signal((2, 4, 6), "complex128")
    a = on(x, device)
    _check(ca.fft.fftn(a), np.fft.fftn(x), False)
    _check(ca.fft.ifftn(a, axes=(0, 2), norm="ortho"), np.fft.ifftn(x, axes=(0, 2), norm="ortho"),
           False)
    _check(ca.fft.fftn(a, s=(3, 8)), np.fft.fftn(x, s=(3, 8), axes=(1, 2)), False)
    r = x.real.copy()
    _check(ca.fft.rfftn(on(r, device)), np.fft.rfftn(r), False)
    R = np.fft.rfftn(r)
    _check(ca.fft.irfftn(on(R, device)), np.fft.irfftn(R), False)
    _check(ca.fft.irfftn(on(R, device), s=(4, 5), axes=(1, 2)),
           np.fft.irfftn(R, s=(4, 5), axes=(1, 2)), False)


def test_empty_batch_and_0d_error():
    x = np.zeros((0, 4), "complex64")
    assert ca.fft.fft(ca.asarray(x)).shape == (0, 4)
    with pytest.raises((ValueError, IndexError)):
        ca.fft.fft(ca.asarray(1j))


def test_freq_and_shift(device):
    for n in (1, 5, 8):
        _check(ca.fft.fftfreq(n, d=0.5, dtype="float64", device=device),
               np.fft.fftfreq(n, d=0.5), False)
        _check(ca.fft.rfftfreq(n, dtype="float64", device=device), np.fft.rfftfreq(n), False)
    assert ca.fft.fftfreq(4).dtype == ca.float32                 # carray's default float
    x = np.arange(12).reshape(3, 4)
    a = on(x, device)
    assert np.array_equal(np.asarray(ca.fft.fftshift(a).to("cpu")), np.fft.fftshift(x))
    assert np.array_equal(np.asarray(ca.fft.ifftshift(a, axes=1).to("cpu")),
                          np.fft.ifftshift(x, axes=1))


def test_bad_input():
    a = ca.asarray([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        ca.fft.fft(a, n=0)
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        ca.fft.irfft(ca.asarray([1 + 0j]))                       # n = 2 (1 - 1) = 0
    with pytest.raises(ValueError, match="norm"):
        ca.fft.fft(a, norm="bad")
    with pytest.raises(IndexError):
        ca.fft.fft(a, axis=1)
    with pytest.raises(TypeError, match="real input"):
        ca.fft.rfft(ca.asarray([1j]))
    with pytest.raises(ValueError, match="same length"):
        ca.fft.fftn(ca.zeros((2, 2)), s=(2,), axes=(0, 1))

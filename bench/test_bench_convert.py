"""Issue 13 item 7: uint8 -> float32 conversion of an image batch (64 x 3 x 224 x 224, 9.6M
elements: 9.6 MB read, 38.5 MB written) on the CPU, beside NumPy and PyTorch. At memory
bandwidth the time is (read + written bytes) / bandwidth."""

import pytest

import carray

SHAPE = (64, 3, 224, 224)


@pytest.fixture(scope="module")
def batch(np):
    return np.random.default_rng(0).integers(0, 256, SHAPE, dtype=np.uint8)


@pytest.mark.benchmark(group="uint8-to-float32-64x3x224x224")
def test_convert_carray(benchmark, batch):
    a = carray.asarray(batch)
    benchmark(a.astype, carray.float32)


@pytest.mark.benchmark(group="uint8-to-float32-64x3x224x224")
def test_convert_numpy(benchmark, batch, np):
    benchmark(batch.astype, np.float32)


@pytest.mark.benchmark(group="uint8-to-float32-64x3x224x224")
def test_convert_torch(benchmark, batch, torch):
    t = torch.from_numpy(batch)
    benchmark(t.float)

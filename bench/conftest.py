"""pytest-benchmark setup: every workload is a group holding carray and its peers.

Run with `python -m pytest bench --benchmark-only` (add `--benchmark-group-by=group`); peers that
are not installed (PyTorch) are skipped. Compare only within one run: the machines are shared and
noisy.
"""

import pytest


def pytest_collection_modifyitems(items):
    for item in items:
        item.add_marker(pytest.mark.benchmark(min_rounds=5, warmup=True))


@pytest.fixture(scope="session")
def np():
    return pytest.importorskip("numpy")


@pytest.fixture(scope="session")
def torch():
    torch = pytest.importorskip("torch")
    torch.set_num_threads(torch.get_num_threads())
    return torch

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


@pytest.fixture(scope="session")
def show_lines(request):
    """A function writing lines to the terminal even while pytest captures output (the tables
    the bench modules print when their tests are done)."""
    tr = request.config.pluginmanager.get_plugin("terminalreporter")
    capman = request.config.pluginmanager.get_plugin("capturemanager")

    def show(lines):
        if tr is None or capman is None:
            print("\n".join(lines))
            return
        with capman.global_and_fixture_disabled():
            for line in lines:
                tr.write_line(line)
    return show

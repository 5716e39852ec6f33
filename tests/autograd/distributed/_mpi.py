"""Runs a worker script under `mpiexec -n N` for the tests (skips without mpi4py/mpiexec)."""

import os
import shutil
import subprocess
import sys

import pytest

import carray

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


def mpiexec(n, script, *args, timeout=120, env=None):
    """Run tests/autograd/distributed/<script> on n ranks (env: extra environment variables);
    returns the CompletedProcess."""
    pytest.importorskip("mpi4py")
    exe = shutil.which("mpiexec")
    if exe is None:
        pytest.skip("mpiexec is not installed")
    # the folder that holds the carray and autograd this test imported: the checkout with an
    # in-place build, else the installed packages (CI: the checkout has carray's sources only)
    env = dict(os.environ, **(env or {}),
               PYTHONPATH=os.path.dirname(os.path.dirname(carray.__file__))
               + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        return subprocess.run([exe, "-n", str(n), sys.executable, os.path.join(HERE, script),
                               *args], capture_output=True, text=True, timeout=timeout, env=env,
                              check=False)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"mpiexec -n {n} {script} did not finish within {timeout} s:\n{e.stdout}\n"
                    f"{e.stderr}")

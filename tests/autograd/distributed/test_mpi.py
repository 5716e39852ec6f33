"""autograd.distributed and DistributedDataParallel under `mpiexec -n 2` and `-n 3` (the worker
scripts beside this file compare against NumPy and one-process training; skipped without
mpi4py or mpiexec)."""

import re

import pytest
from _mpi import mpiexec


@pytest.mark.parametrize("n", [2, 3])
def test_collectives_match_numpy(n):
    run = mpiexec(n, "_collectives_worker.py")
    assert run.returncode == 0, run.stdout + run.stderr
    assert sorted(re.findall(r"OK (\d+)", run.stdout)) == [str(r) for r in range(n)], run.stdout


def test_ddp_matches_one_process_on_the_whole_batch():
    run = mpiexec(2, "_ddp_worker.py")
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count("OK") == 2, run.stdout


def test_a_rank_that_raises_stops_the_others():
    run = mpiexec(2, "_faults_worker.py", "raise", timeout=60)
    assert run.returncode != 0
    assert "rank 1 fails on purpose" in run.stderr
    assert "aborting all ranks" in run.stderr
    assert "rank 0 finished" not in run.stdout


def test_mismatched_shapes_and_dtypes_raise_on_every_rank():
    run = mpiexec(2, "_faults_worker.py", "mismatch", timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert sorted(re.findall(r"raised (\d+)", run.stdout)) == ["0", "0", "0", "1", "1", "1"], \
        run.stdout


def test_a_collective_gives_up_after_the_timeout():
    run = mpiexec(2, "_faults_worker.py", "timeout", timeout=60)
    assert run.returncode != 0
    assert "did not finish within the timeout of 3 s" in run.stderr


def test_groups_objects_and_group_timeouts():
    run = mpiexec(3, "_groups_worker.py")
    assert run.returncode == 0, run.stdout + run.stderr
    assert sorted(re.findall(r"OK (\d+)", run.stdout)) == ["0", "1", "2"], run.stdout

"""fork() after a parallel op: the child's OpenMP threads do not exist, so carray runs its loops
on one thread there instead of waiting for them forever (issue: multiprocessing with the fork
start method hung in its first parallel op). Each case runs in a subprocess with a deadline."""

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() on this platform")

# Big enough for every op below to run in parallel in the parent (above the OpenMP thresholds).
FORK_AFTER_PARALLEL = textwrap.dedent("""
    import os, sys, time
    import carray as ca
    ca.set_num_threads(2)
    a = ca.ones(1 << 21)
    assert float((a * 2).sum()) == 2.0 * (1 << 21)
    pid = os.fork()
    if pid == 0:
        n = ca.get_num_threads()
        b = ca.arange(1 << 21, dtype="float64")
        s = float((b * 3).sum())
        m = ca.ones((300, 300)) @ ca.ones((300, 300))
        x = ca.ones((8, 3, 32, 32))
        y = ca.nn.conv2d(x, ca.ones((16, 3, 3, 3)), padding=1)
        ok = (n == 1 and s == 3.0 * (1 << 21) * ((1 << 21) - 1) / 2 and float(m[0, 0]) == 300.0
              and float(y[0, 0, 5, 5]) == 27.0)
        os._exit(0 if ok else 3)
    deadline = time.time() + 60
    while time.time() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            sys.exit(os.waitstatus_to_exitcode(status))
        time.sleep(0.05)
    os.kill(pid, 9)
    sys.exit(4)      # the child hung
""")

POOL_AFTER_PARALLEL = textwrap.dedent("""
    import multiprocessing as mp
    import carray as ca

    def work(k):
        return float((ca.ones(1 << 20) * k).sum())

    if __name__ == "__main__":
        ca.set_num_threads(2)
        assert float((ca.ones(1 << 21) + 1).sum()) == 2.0 * (1 << 21)
        with mp.get_context("fork").Pool(2) as pool:
            got = pool.map_async(work, [1, 2, 3]).get(timeout=60)
        assert got == [float(k << 20) for k in (1, 2, 3)], got
        print("ok")
""")


def _run(script):
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "OMP_NUM_THREADS": "2"})


def test_forked_child_runs_parallel_ops_on_one_thread():
    r = _run(FORK_AFTER_PARALLEL)
    assert r.returncode == 0, f"child exit {r.returncode} (4: hung, 3: wrong values)\n{r.stderr}"


def test_multiprocessing_fork_pool_after_a_parallel_op():
    r = _run(POOL_AFTER_PARALLEL)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_only_the_child_is_marked():
    # (the thread count itself can drop to 1 for a while in a loaded parent: see _omp.h)
    script = textwrap.dedent("""
        import os, carray as ca
        from carray.core._strided import _forked
        float((ca.ones(1 << 21) * 2).sum())
        pid = os.fork()
        if pid == 0:
            os._exit(0 if _forked() and ca.get_num_threads() == 1 else 3)
        _, status = os.waitpid(pid, 0)
        print(_forked(), os.waitstatus_to_exitcode(status))
    """)
    r = _run(script)
    assert r.returncode == 0 and r.stdout.split() == ["False", "0"], (r.stdout, r.stderr)

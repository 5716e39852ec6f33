"""The OpenCL queue is bounded: every launch goes through carray.opencl._launch.submit (most by
the event-less C call, every MARK_EVERY-th through enqueue, pyopencl's call with an event), which
waits for the launch MAX_IN_FLIGHT back every MARK_EVERY launches, so after a Ctrl-C the next
read waits for at most about MAX_IN_FLIGHT kernels, not the whole backlog. Counted by wrapping
the enqueue call and the wait: at no launch are more than MAX_IN_FLIGHT + MARK_EVERY launches
after the last one waited for; results are unchanged."""

import numpy as np
import pytest

import carray as ca

from conftest import have_gpu


@pytest.fixture
def launches(monkeypatch):
    """Records every kernel launch and every backpressure wait: yields a dict with "events" (the
    launches' events, in order), "waited" (the index of the newest launch waited for, -1 before
    any), "max" (the most launches after it seen at a launch) and "waits"."""
    if not have_gpu():
        pytest.skip("no OpenCL device")
    from carray.opencl import _launch
    warm = ca.ones(4, device="gpu") + 1         # pyopencl imported, the kernel built
    warm.to("cpu")
    ca.opencl.queue.finish()
    real_enqueue, real_wait = _launch._cl_enqueue, getattr(_launch, "_wait", None)
    complete = ca.opencl.runtime().cl.command_execution_status.COMPLETE
    state = {"events": [], "waited": -1, "max": 0, "waits": 0}

    def record(event):
        state["events"].append(event)
        state["max"] = max(state["max"], len(state["events"]) - 1 - state["waited"])

    def enqueue(*args):
        event = real_enqueue(*args)
        record(event)
        return event

    real_quiet = _launch._quiet

    def quiet(*args):       # the event-less launches (most of them): no event to record
        done = real_quiet(*args)
        if done:
            record(None)
        return done

    def wait(event):
        real_wait(event)
        assert event.command_execution_status == complete
        # (an event launched before the recording started counts as -1)
        idx = next((i for i, e in enumerate(state["events"]) if e is event), -1)
        state["waited"] = max(state["waited"], idx)
        state["waits"] += 1

    monkeypatch.setattr(_launch, "_cl_enqueue", enqueue)
    monkeypatch.setattr(_launch, "_wait", wait, raising=False)
    if real_quiet:
        monkeypatch.setattr(_launch, "_quiet", quiet)
    yield state


def test_queue_depth_is_bounded(launches):
    from carray.opencl import _launch
    depth, every = getattr(_launch, "MAX_IN_FLIGHT", 256), getattr(_launch, "MARK_EVERY", 1)
    assert 64 <= depth <= 256
    bound = depth + every
    x = ca.zeros((8, 8), dtype="float32", device="gpu")
    w = ca.full((8, 8), 0.125, dtype="float32", device="gpu")
    n = 1500
    for i in range(n):
        x = x + 1
        if i % 100 == 0:
            x = x @ (w * 8) / 8 * 8     # matmul and elementwise launches mixed in
    total = ca.sum(x, axis=1)
    assert len(launches["events"]) >= n
    assert launches["max"] <= bound, launches["max"]
    assert launches["waits"] >= len(launches["events"]) // every - depth // every - 1
    if _launch._quiet:      # all but one launch in MARK_EVERY make no event (cheaper)
        assert launches["events"].count(None) >= len(launches["events"]) * (every - 1) // every - 1
    # results unchanged: x @ (w * 8) sums a row of ones-scaled values
    ref = np.zeros((8, 8), np.float32)
    for i in range(n):
        ref = ref + 1
        if i % 100 == 0:
            ref = ref @ np.full((8, 8), 1.0, np.float32) / 8 * 8
    np.testing.assert_array_equal(x.to("cpu"), ref)
    np.testing.assert_array_equal(total.to("cpu"), ref.sum(axis=1))


def test_every_launch_path_is_counted(launches):
    """Elementwise, reduction, matmul, indexing and nn launches all go through enqueue."""
    a = ca.asarray(np.arange(12, dtype=np.float32).reshape(3, 4)).to("gpu")
    counts = []
    for op in (lambda: a * 2, lambda: a.sum(axis=0), lambda: a @ a.T,
               lambda: a[ca.asarray([0, 2]).to("gpu")],
               lambda: ca.nn.softmax_cross_entropy(a, ca.asarray([0, 1, 3]).to("gpu"))):
        before = len(launches["events"])
        op()
        counts.append(len(launches["events"]) - before)
    assert all(c >= 1 for c in counts), counts

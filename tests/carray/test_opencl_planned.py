"""Repeated elementwise launches on the device (carray.opencl._ewfast): the plan cache hit that
sets a kernel's arguments and enqueues it from C. A plan is reused for each key (op, types,
layouts), kernels are shared by plans of other layouts and by threads, and the launch policy of
carray.opencl._launch (every MARK_EVERY-th launch with an event, all of them under a profiler)
still holds. Results are compared with NumPy."""

import threading

import numpy as np
import pytest

import carray as ca

from conftest import have_gpu, run_fresh

pytestmark = pytest.mark.skipif(not have_gpu(), reason="no OpenCL device")


def gpu(n):
    return ca.asarray(n).to("gpu")


def test_plans_of_one_kernel_alternate():
    """Views at other offsets and strides share the flat or strided kernel with other layout
    arguments: alternating them on one kernel reads each call's own layout and buffers."""
    rng = np.random.default_rng(0)
    n = rng.standard_normal(40).astype(np.float32)
    m = rng.standard_normal(40).astype(np.float32)
    a, b = gpu(n), gpu(m)
    cases = [(slice(0, 16), slice(0, 16)), (slice(3, 19), slice(5, 21)),
             (slice(0, 32, 2), slice(1, 33, 2)), (slice(7, 39, 2), slice(0, 16))]
    for _ in range(3):
        for sa, sb in cases:
            np.testing.assert_array_equal((a[sa] + b[sb]).to("cpu"), n[sa] + m[sb])
            np.testing.assert_array_equal((-a[sa]).to("cpu"), -n[sa])
            np.testing.assert_allclose(ca.exp(a[sa]).to("cpu"), np.exp(n[sa]), rtol=1e-6)


def test_repeats_take_each_call_s_scalars():
    """One plan, other scalar values: each launch passes its own (Python scalars of every kind,
    a float16 array times a Python float, which travels converted to float)."""
    n = np.arange(16, dtype=np.float32)
    a = gpu(n)
    for v in (2.0, -0.5, 3.0, 1e30):
        np.testing.assert_array_equal((a * v).to("cpu"), n * np.float32(v))
    i = gpu(np.arange(16, dtype=np.int32))
    for v in (3, -7, 0):
        np.testing.assert_array_equal((i + v).to("cpu"), np.arange(16, dtype=np.int32) + v)
    flags = gpu(np.arange(16) % 3 == 0)
    for v in (True, False, True):
        np.testing.assert_array_equal((flags | v).to("cpu"), (np.arange(16) % 3 == 0) | v)
    h = np.linspace(-2, 2, 16).astype(np.float16)
    for v in (0.5, 3.0):
        np.testing.assert_array_equal((gpu(h) * v).to("cpu"), h * np.float16(v))
    d = np.linspace(-2, 2, 16)
    for v in (ca.asarray(0.25, dtype="float64"), ca.asarray(4.0, dtype="float64")):
        np.testing.assert_array_equal(ca.where(gpu(d > 0), gpu(d), v).to("cpu"),
                                      np.where(d > 0, d, float(v)))


def test_in_place_and_aliased_operands():
    """y += b reuses its plan (the output is an operand); an operand that is another view of
    the output's buffer is read whole before the output is written (no plan)."""
    n = np.arange(20, dtype=np.float32)
    y, b = gpu(n.copy()), gpu(np.ones(20, np.float32))
    for _ in range(20):
        y += b
    np.testing.assert_array_equal(y.to("cpu"), n + 20)
    z = gpu(n.copy())
    for _ in range(3):
        z[1:] += z[:-1]
    want = n.copy()
    for _ in range(3):
        want[1:] = want[1:] + want[:-1]
    np.testing.assert_array_equal(z.to("cpu"), want)


def test_mark_every_launch_keeps_its_event(monkeypatch):
    """Planned launches count towards the MARK_EVERY turn: one in MARK_EVERY goes through
    pyopencl's enqueue (keeping its event), the others through the C call."""
    from carray.opencl import _launch
    a = gpu(np.ones(16, np.float32))
    b = a + a               # planned and _launch set up
    events = []
    real = _launch._cl_enqueue

    def enqueue(*args):
        events.append(real(*args))
        return events[-1]
    monkeypatch.setattr(_launch, "_cl_enqueue", enqueue)
    n = 20 * _launch.MARK_EVERY
    for _ in range(n):
        b = a + a
    if _launch._quiet:
        assert n // _launch.MARK_EVERY - 1 <= len(events) <= n // _launch.MARK_EVERY + 1
    else:           # CARRAY_OPENCL_LAUNCH=pyopencl: every launch through pyopencl
        assert len(events) == n
    np.testing.assert_array_equal(b.to("cpu"), np.full(16, 2, np.float32))


def test_profiler_sees_every_planned_launch(monkeypatch):
    """While an observer is installed every launch goes through pyopencl with its event."""
    from carray.opencl import _profiling
    a = gpu(np.arange(16, dtype=np.float32))
    c = a * 2.0
    seen = []

    class Observer:
        def kernel(self, knl, event):
            seen.append(event)

        def wait(self, name, t0):
            pass

    monkeypatch.setattr(_profiling, "observer", Observer())
    for _ in range(40):
        c = a * 2.0
    assert len(seen) == 40 and all(e is not None for e in seen)
    monkeypatch.setattr(_profiling, "observer", None)
    np.testing.assert_array_equal(c.to("cpu"), np.arange(16, dtype=np.float32) * 2)


def test_threads_share_planned_kernels():
    """Threads launching the same plans with their own arrays get their own results."""
    errors = []

    def work(k):
        n = np.arange(16, dtype=np.float32) * (k + 1)
        a, b = gpu(n), gpu(np.full(16, k, np.float32))
        for _ in range(200):
            c = a + b
            d = a * float(k)
        if not (np.array_equal(c.to("cpu"), n + k) and np.array_equal(d.to("cpu"), n * k)):
            errors.append(k)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_planned_launch_sets_each_argument_once():
    """With counting stand-ins for clSetKernelArg and clEnqueueNDRangeKernel bound, a planned
    a + b sets out, a, b and the two layout arguments and enqueues once, from C; a * 3.0 out,
    a, the scalar and the layout; exp(a) out, a and the layout."""
    from carray.opencl import _clcall, _launch
    a = gpu(np.ones(16, np.float32))
    c = a + a
    s = a * 3.0
    e = ca.exp(a)
    if not _launch._quiet:
        pytest.skip("the C launch is off (CARRAY_OPENCL_LAUNCH=pyopencl)")
    ca.opencl.queue.finish()
    before = _clcall.bind_counting()
    try:
        since = _launch._since_mark
        _launch._since_mark = 0             # no MARK_EVERY turn in the next two launches
        args0, enq0 = _clcall.counts()
        c = a + a
        args1, enq1 = _clcall.counts()
        s = a * 3.0
        args2, enq2 = _clcall.counts()
        e = ca.exp(a)
        args3, enq3 = _clcall.counts()
    finally:
        _clcall.bind(*before)
        _launch._since_mark = since
    assert (args1 - args0, enq1 - enq0) == (5, 1)
    assert (args2 - args1, enq2 - enq1) == (5, 1)
    assert (args3 - args2, enq3 - enq2) == (4, 1)
    del c, s, e


def test_launch_lock_is_reentrant_and_exclusive():
    """LAUNCH_LOCK behaves as threading.RLock: its holder takes it again, another thread does
    not get it until it is given back as often as it was taken, and giving back a lock not held
    raises RuntimeError."""
    from carray.opencl._clcall import LaunchLock
    lock = LaunchLock()
    got = []

    def other():
        got.append(lock.acquire(False))
    with lock:
        with lock:
            t = threading.Thread(target=other)
            t.start()
            t.join()
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert got == [False, False]
    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert got == [False, False, True]
    with pytest.raises(RuntimeError, match="un-acquired"):
        lock.release()      # held by the other thread, not this one


class _CountingPool:
    """A stand-in pool: allocate(n) -> "buffer n", a new block (managed_bytes grows) for sizes
    it has not made before, raising for 7."""

    def __init__(self, calls):
        self.calls, self.made, self.managed_bytes = calls, set(), 0

    def allocate(self, n):
        self.calls.append(("pool", n))
        if n == 7:
            raise RuntimeError("out of memory")
        if n not in self.made:
            self.made.add(n)
            self.managed_bytes += n
        return f"buffer {n}"


def test_pool_alloc_hands_what_the_pool_cannot_take_to_the_checked_path():
    """Runtime.alloc (a PoolAlloc) calls the pool for 0 < nbytes <= the largest buffer, and the
    checked path (errors, retries) for empty arrays, sizes beyond it and failed allocations;
    a block the pool has just made (its managed_bytes moved) goes through `fresh`, a reused one
    does not, and one the device cannot back goes to the checked path."""
    from carray.opencl._alloc import PoolAlloc
    calls = []

    def checked(n):
        calls.append(("checked", n))
        return "checked buffer"

    def fresh(buf):
        calls.append(("fresh", buf))
        return buf != "buffer 16"          # as when the device has no memory left for it
    alloc = PoolAlloc(_CountingPool(calls), 100, checked, fresh)
    assert [alloc(n) for n in (64, 64, 0, 101, 7, 32, 16)] == [
        "buffer 64", "buffer 64", "checked buffer", "checked buffer", "checked buffer",
        "buffer 32", "checked buffer"]
    assert calls == [("pool", 64), ("fresh", "buffer 64"), ("pool", 64), ("checked", 0),
                     ("checked", 101), ("pool", 7), ("checked", 7), ("pool", 32),
                     ("fresh", "buffer 32"), ("pool", 16), ("fresh", "buffer 16"),
                     ("checked", 16)]
    assert isinstance(ca.opencl.runtime().alloc, PoolAlloc)
    with pytest.raises(MemoryError, match=str(2**61)):
        ca.opencl.runtime().alloc(2**61)


def test_new_device_buffers_are_backed_at_allocation_and_a_shortage_frees_held_blocks():
    """The pool's allocator is deferred; a new block is backed by a 1-byte fill at once, so a
    shortage shows at the allocation (MemoryError after the held blocks were freed and the
    allocation tried again), not at a later launch. Here the fill fails as a driver out of
    memory would (MEM_OBJECT_ALLOCATION_FAILURE) until the held blocks are freed."""
    rt = ca.opencl.runtime()
    cl = rt.cl
    real_fill, real_pool = cl.enqueue_fill_buffer, rt.pool
    state = {"fills": 0, "freed": 0, "short": True, "back_after": 1}

    def fill(queue, buf, pattern, offset, size):
        state["fills"] += 1
        if state["short"]:
            raise cl.MemoryError("clEnqueueFillBuffer failed: MEM_OBJECT_ALLOCATION_FAILURE")
        return real_fill(queue, buf, pattern, offset, size)

    class Pool:
        """The real pool, counting free_held(); memory comes back after `back_after` frees."""

        def __getattr__(self, name):
            return getattr(real_pool, name)

        def free_held(self):
            state["freed"] += 1
            state["short"] = state["freed"] < state["back_after"]
            real_pool.free_held()
    nbytes = 3 * 1000 * 1000
    real_pool.free_held()       # no held blocks: the next allocation makes a new one
    try:
        cl.enqueue_fill_buffer, rt.pool = fill, Pool()
        x = ca.full((nbytes // 4,), 2.5, dtype="float32", device="gpu")
        # (the new block's failed fill, checked_alloc's first try's, then the backed one)
        assert (state["fills"], state["freed"]) == (3, 1)
        assert float(x.sum().to("cpu")) == 2.5 * (nbytes // 4)
        state.update(fills=0, freed=0, short=True, back_after=3)
        real_pool.free_held()
        with pytest.raises(MemoryError, match=f"out of device memory allocating {nbytes + 8}"):
            ca.empty(((nbytes + 8) // 4,), dtype="float32", device="gpu")
        assert state["freed"] == 2
    finally:
        cl.enqueue_fill_buffer, rt.pool = real_fill, real_pool


def test_a_new_block_after_freeing_held_ones_is_backed_too():
    """Freeing held blocks lowers the pool's managed_bytes; a new block of the freed size brings
    it back to where it was, and is still backed at once (Runtime.free_held re-reads it)."""
    rt = ca.opencl.runtime()
    cl = rt.cl
    real_fill = cl.enqueue_fill_buffer
    fills = []

    def fill(queue, buf, pattern, offset, size):
        fills.append(size)
        return real_fill(queue, buf, pattern, offset, size)
    n = 4 * 1000 * 1000 + 4 * 613
    rt.free_held()
    try:
        cl.enqueue_fill_buffer = fill
        a = ca.empty((n // 4,), dtype="float32", device="gpu")
        del a                           # its block is held for reuse
        b = ca.empty((n // 4,), dtype="float32", device="gpu")
        assert len(fills) == 1          # the held block again: backed already
        del b
        rt.free_held()
        ca.full((n // 4,), 1.0, dtype="float32", device="gpu")
        assert len(fills) == 2
    finally:
        cl.enqueue_fill_buffer = real_fill


def test_allocations_while_other_threads_copy_do_not_crash_the_driver(tmp_path):
    """Threads making new device buffers while others copy to and from the device: the pool's
    immediate allocator (clEnqueueMigrateMemObjects) crashed NVIDIA's driver in 14% of such
    runs; a fresh interpreter each time, so the pool starts empty."""
    run_fresh(tmp_path, THREADED_COPIES_SCRIPT, attempts=4)


THREADED_COPIES_SCRIPT = r'''
import threading
import numpy as np
import carray as ca
start = threading.Barrier(8)
errors = []

def work(k):
    try:
        start.wait()
        for rep in range(4):
            h = np.arange(1000 + 64 * k + rep, dtype="float32") * k
            back = ca.asarray(h).to("gpu").to("cpu")
            if not np.array_equal(np.asarray(back), h):
                errors.append(f"thread {k}: wrong values")
    except BaseException as e:
        errors.append(f"thread {k}: {type(e).__name__}: {e}")

threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("\n".join(errors) if errors else "OK")
'''

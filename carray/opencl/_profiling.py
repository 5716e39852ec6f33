"""The hook a profiler (autograd.profiler) installs to see the OpenCL work.

`observer` is None unless a profiler is running, so the launch and transfer paths pay one
global check. While set, they report to it:

    observer.kernel(knl, event)                       a kernel was enqueued
    observer.copy(kind, nbytes, event, blocking, t0)  "HtoD" or "DtoH" copy enqueued at t0
    observer.wait(name, t0)                           the host waited for the queue since t0

(t0: time.perf_counter_ns() before the call). The runtime's queue is made with
PROFILING_ENABLE, so the observer can read each event's device start and end times.
"""

observer = None


def set_observer(obs):
    """Install obs (or None) as the observer of OpenCL work; returns the previous one."""
    global observer
    prev = observer
    observer = obs
    return prev

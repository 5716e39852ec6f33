"""autograd.profiler: where time goes, per op and per kernel, as torch.autograd.profiler.

    with autograd.profiler.profile() as prof:
        loss = model(x).sum(); loss.backward(); opt.step()
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=20))

What becomes a row (an event, averaged per name by key_averages):
- every Function application (forward, named after its class: "MatMul", "Add", a custom
  Function's class name) and every node the backward pass runs ("MatMulBackward0",
  "AccumulateGrad"), timed on the host. The ops a Function's own forward applies are part of its
  row (its forward runs with the hook off, as for autograd.onnx); the ops a backward formula
  applies are rows nested under the backward row;
- `record_function(name)` ranges, around any code;
- on the gpu, every kernel (named after its OpenCL function) and every copy ("Memcpy HtoD",
  "Memcpy DtoH", with its bytes), timed on the device from the queue's profiling events; and the
  host calls that issue copies or wait for the device: "clEnqueueWriteBuffer" (an upload),
  "clEnqueueReadBuffer (blocking)" (a read to the host: item(), tolist(), .cpu(), printing...;
  the host waits for the whole queue), "clEnqueueReadBuffer" (a queued read that a blocking read
  waits for), "clFinish" (synchronize), "clWaitForEvents (queue bound)" (the host waited because
  too many kernels were queued).

A host row's device time is the device time of the kernels and copies issued inside it.
Times are microseconds. The hooks (autograd.function.set_tracer, autograd.engine.set_observer,
carray.opencl._profiling.set_observer) are global, so one profiler runs at a time per process
and ops that other threads run meanwhile are recorded too (on their own threads' stacks); an op
another thread starts while one op is being recorded may be missed. Without a profiler the cost
is one global check per op, backward pass and kernel launch.
"""

import functools
import json
import os
import sys
import threading
import time
import warnings

from autograd import engine, function
from autograd.tensor import Tensor
from carray.opencl import _profiling as _opencl_profiling
from carray.opencl._runtime import runtime as _opencl_runtime

__all__ = ["profile", "record_function", "EventList", "FunctionEvent", "FunctionEventAvg"]

_active = None          # the _Recorder of the profiler running now, or None
# the hooks' own frames, left out of recorded stacks
_HOOK_FILES = {os.path.abspath(m.__file__) for m in (sys.modules[__name__], function, engine)}


# ---------------------------------------------------------------------------------------------
# events
# ---------------------------------------------------------------------------------------------

class FunctionEvent:
    """One recorded range: a host range (an op, a backward node, a record_function, a transfer
    call) or a device range (a kernel or copy, device_type "gpu"). Times in microseconds."""

    def __init__(self, id, name, thread, start_us, end_us, device_type="cpu", input_shapes=None,
                 stack=None, nbytes=0):
        self.id = id
        self.name = name
        self.thread = thread
        self.start_us = start_us
        self.end_us = end_us
        self.device_type = device_type
        self.input_shapes = input_shapes
        self.stack = stack
        self.nbytes = nbytes        # bytes a copy moved (0 for other events)
        self.cpu_parent = None
        self.cpu_children = []
        self.kernels = []           # the device events issued directly inside this host range
        self.count = 1
        self.is_async = False
        self.is_user_annotation = False
        self.node_id = -1

    @property
    def key(self):
        return self.name

    @property
    def cpu_time_total(self):
        """Host time of the range, children included (0 for device events)."""
        if self.device_type != "cpu":
            return 0.0
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self):
        """Host time of the range less that of its children."""
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def device_time_total(self):
        """Device time: a kernel's or copy's own; for a host range, that of everything it
        issued, children included."""
        if self.device_type != "cpu":
            return self.end_us - self.start_us
        return (sum(k.device_time_total for k in self.kernels)
                + sum(c.device_time_total for c in self.cpu_children))

    @property
    def self_device_time_total(self):
        """Device time of a kernel or copy; for a host range, of what it issued directly."""
        if self.device_type != "cpu":
            return self.end_us - self.start_us
        return sum(k.device_time_total for k in self.kernels)

    @property
    def cpu_time(self):
        return self.cpu_time_total

    @property
    def device_time(self):
        return self.device_time_total

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} device_type={self.device_type} "
                f"cpu_time_total={self.cpu_time_total:.3f}us "
                f"device_time_total={self.device_time_total:.3f}us>")


class FunctionEventAvg:
    """The events of one key (name; and input shapes or stack when grouped by them) summed:
    count, cpu_time_total, self_cpu_time_total, device_time_total, self_device_time_total,
    nbytes; cpu_time and device_time are the averages per call."""

    def __init__(self, key, input_shapes=None, stack=None):
        self.key = key
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.device_time_total = 0.0
        self.self_device_time_total = 0.0
        self.nbytes = 0
        self.input_shapes = input_shapes
        self.stack = stack
        self.device_type = "cpu"
        self.is_async = False
        self.is_user_annotation = False
        self.node_id = -1

    def add(self, other):
        """Add an event (or another average) of this key; returns self."""
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.device_time_total += other.device_time_total
        self.self_device_time_total += other.self_device_time_total
        self.nbytes += other.nbytes
        self.device_type = other.device_type
        return self

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count if self.count else 0.0

    @property
    def device_time(self):
        return self.device_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} count={self.count} "
                f"self_cpu_time_total={self.self_cpu_time_total:.3f}us "
                f"cpu_time_total={self.cpu_time_total:.3f}us "
                f"device_time_total={self.device_time_total:.3f}us>")


class EventList(list):
    """A list of FunctionEvent (from profile.events()) or FunctionEventAvg (from
    key_averages()), with table() and key_averages()."""

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """The events averaged per name (and per input shapes / the innermost
        group_by_stack_n stack frames when asked), as an EventList of FunctionEventAvg, in the
        order each key first occurred."""
        rows = {}
        for e in self:
            key = (e.key,
                   str(e.input_shapes) if group_by_input_shape else None,
                   tuple((e.stack or ())[:group_by_stack_n]) if group_by_stack_n else None)
            row = rows.get(key)
            if row is None:
                row = rows[key] = FunctionEventAvg(
                    e.key, e.input_shapes if group_by_input_shape else None,
                    list(key[2]) if group_by_stack_n else None)
            row.add(e)
        return EventList(rows.values())

    @property
    def self_cpu_time_total(self):
        """Host time of all events, each counted once (the sum of self times)."""
        return sum(e.self_cpu_time_total for e in self)

    def total_average(self):
        """One FunctionEventAvg summing every event, keyed "Total"."""
        total = FunctionEventAvg("Total")
        for e in self:
            total.add(e)
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None):
        """The rows as a text table, largest `sort_by` first (an attribute of the rows, such
        as "self_cpu_time_total", "cpu_time_total", "device_time_total", "count"; "cuda" reads
        as "device"), at most row_limit rows (-1: all). AttributeError for an unknown sort_by;
        ValueError for an unknown time_unit."""
        return _table(self, sort_by, row_limit, max_src_column_width, max_name_column_width,
                      max_shapes_column_width, header, top_level_events_only, time_unit)

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace (JSON; open it in chrome://tracing or Perfetto):
        host ranges on process "CPU", one track per thread, device ranges on process "GPU"."""
        trace = []
        for e in self:
            pid = "GPU" if e.device_type != "cpu" else "CPU"
            args = {}
            if e.input_shapes:
                args["Input Dims"] = e.input_shapes
            if e.nbytes:
                args["bytes"] = e.nbytes
            trace.append({"name": e.name, "ph": "X", "ts": e.start_us,
                          "dur": e.end_us - e.start_us, "pid": pid,
                          "tid": e.thread, "cat": "kernel" if pid == "GPU" else "cpu_op",
                          "args": args})
        with open(path, "w") as f:
            json.dump({"traceEvents": trace, "displayTimeUnit": "ms"}, f)


# ---------------------------------------------------------------------------------------------
# recording
# ---------------------------------------------------------------------------------------------

class _Recorder:
    """What a running profile installs: the Function tracer, the backward pass's observer and
    the OpenCL observer. Collects events; per-thread stacks of open host ranges."""

    def __init__(self, record_shapes, with_stack):
        self.record_shapes = record_shapes
        self.with_stack = with_stack
        self.events = []            # host events, in the order they began
        self.device = []            # (device event, pyopencl event, host ns at enqueue)
        self.stacks = {}            # thread id -> [open host events]
        self.next_id = 0
        self.prev_tracer = None
        self.on = True

    # -- host ranges ------------------------------------------------------------------------

    def begin(self, name, shapes=None):
        tid = threading.get_ident()
        stack = self.stacks.get(tid)
        if stack is None:
            stack = self.stacks[tid] = []
        self.next_id += 1
        ev = FunctionEvent(self.next_id, name, tid, 0.0, 0.0, input_shapes=shapes,
                           stack=_stack() if self.with_stack else None)
        if stack:
            ev.cpu_parent = stack[-1]
            stack[-1].cpu_children.append(ev)
        stack.append(ev)
        self.events.append(ev)
        ev.start_us = time.perf_counter_ns() / 1e3
        return ev

    def end(self, ev):
        ev.end_us = time.perf_counter_ns() / 1e3
        stack = self.stacks.get(ev.thread)
        while stack:                # (ranges an exception left open close with it)
            top = stack.pop()
            if top is ev:
                break
            top.end_us = ev.end_us

    def __call__(self, cls, args, kwargs):
        """The Function tracer: one host range around the application."""
        shapes = [list(a.array.shape) if isinstance(a, Tensor) else [] for a in args] \
            if self.record_shapes else None
        ev = self.begin(cls.__name__, shapes)
        prev = self.prev_tracer
        function.set_tracer(prev)
        try:
            if prev is not None:
                return prev(cls, args, kwargs)
            return cls.apply(*args, **kwargs)
        finally:
            if self.on:
                function.set_tracer(self)
            self.end(ev)

    # -- the OpenCL observer ----------------------------------------------------------------

    def _device_event(self, name, cl_event, t0_ns, parent, nbytes=0):
        self.next_id += 1
        dev = FunctionEvent(self.next_id, name, 0, 0.0, 0.0, device_type="gpu", nbytes=nbytes)
        if parent is not None:
            parent.kernels.append(dev)
            dev.cpu_parent = parent
        self.device.append((dev, cl_event, t0_ns))

    def kernel(self, knl, cl_event):
        stack = self.stacks.get(threading.get_ident())
        self._device_event(knl.function_name, cl_event, time.perf_counter_ns(),
                           stack[-1] if stack else None)

    def copy(self, kind, nbytes, cl_event, blocking, t0):
        name = ("clEnqueueWriteBuffer" if kind == "HtoD" else
                "clEnqueueReadBuffer (blocking)" if blocking else "clEnqueueReadBuffer")
        ev = self.wait(name, t0)
        ev.nbytes = nbytes
        self._device_event("Memcpy " + kind, cl_event, t0, ev, nbytes)

    def wait(self, name, t0):
        """Record a host range `name` that began at t0 (ns) and ends now; returns it."""
        end = time.perf_counter_ns() / 1e3
        ev = self.begin(name)
        self.stacks[ev.thread].pop()
        ev.start_us = t0 / 1e3
        ev.end_us = end
        return ev

    # -- after the run ----------------------------------------------------------------------

    def finish(self):
        """Close open ranges; wait for the device and read its events' times."""
        now = time.perf_counter_ns() / 1e3
        for stack in self.stacks.values():
            for ev in stack:
                ev.end_us = now
            stack.clear()
        if not self.device:
            return []
        _opencl_runtime().queue.finish()
        out = []
        for dev, cl_event, t0 in self.device:
            try:
                p = cl_event.profile
                queued, start, end = p.queued, p.start, p.end
            except Exception:       # a queue without profiling: no device time
                queued = start = end = 0
            # device clock -> host clock: the command was queued at t0 (host ns)
            dev.start_us = (t0 + max(start - queued, 0)) / 1e3
            dev.end_us = dev.start_us + max(end - start, 0) / 1e3
            out.append(dev)
        self.device = []
        return out


def _stack():
    """The Python stack, innermost first, as "file(line): function" (without the frames of
    the hooks: this module, autograd.function, autograd.engine)."""
    out = []
    f = sys._getframe(1)
    while f is not None and len(out) < 64:
        code = f.f_code
        if code.co_filename not in _HOOK_FILES:
            out.append(f"{code.co_filename}({f.f_lineno}): {code.co_name}")
        f = f.f_back
    return out


# ---------------------------------------------------------------------------------------------
# the public context managers
# ---------------------------------------------------------------------------------------------

_VALID_DEVICES = ("gpu", "cuda")


class profile:
    """Record ops, backward nodes, record_function ranges, kernels and transfers while active
    (a context manager), as torch.autograd.profiler.profile. `use_device` may be "gpu" or
    "cuda" (the OpenCL device; its work is recorded whenever it runs, with or without it);
    record_shapes keeps the tensor arguments' shapes of ops, with_stack the Python stack of
    every host range. with_flops, profile_memory, with_modules, use_kineto,
    experimental_config, acc_events and custom_trace_id_callback are accepted and ignored.
    RuntimeError when entered twice or while another profiler runs."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None):
        self.enabled = enabled
        self.entered = False
        self.record_shapes = record_shapes
        self.with_stack = with_stack
        self.use_cpu = use_cpu
        if use_cuda:
            warnings.warn("The attribute `use_cuda` will be deprecated soon, please use "
                          "``use_device = 'cuda'`` instead.", FutureWarning, stacklevel=2)
            use_device = "cuda"
        if use_device is not None and use_device not in _VALID_DEVICES:
            warnings.warn(f"The {use_device} is not a valid device option.", stacklevel=2)
            use_device = None
        self.use_device = use_device
        self._recorder = None
        self._events = None

    def __enter__(self):
        global _active
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        if _active is not None:
            raise RuntimeError("Profiler is already enabled on this thread (a profile is "
                               "already running; autograd.profiler runs one at a time)")
        self.entered = True
        rec = self._recorder = _Recorder(self.record_shapes, self.with_stack)
        _active = rec
        rec.prev_tracer = function.set_tracer(rec)
        engine.set_observer(rec)
        _opencl_profiling.set_observer(rec)
        return self

    def __exit__(self, *exc):
        global _active
        if not self.enabled or self._recorder is None:
            return
        rec = self._recorder
        rec.on = False
        _opencl_profiling.set_observer(None)
        engine.set_observer(None)
        function.set_tracer(rec.prev_tracer)
        _active = None
        device = rec.finish()
        events = rec.events if self.use_cpu else []
        self._events = EventList(sorted(events + device, key=lambda e: e.start_us))
        self._recorder = None

    def _finished(self):
        if self._events is None:
            raise RuntimeError("Profiler didn't finish running" if self.entered else
                               "Profiler must be initialized before exiting")
        return self._events

    def events(self):
        """Every recorded event (FunctionEvent), in the order they began, as an EventList.
        RuntimeError before the profile finished."""
        return self._finished()

    @property
    def function_events(self):
        """events(), under torch.autograd.profiler.profile's name."""
        return self._finished()

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """The events averaged per name: an EventList of FunctionEventAvg with .table()."""
        return self._finished().key_averages(group_by_input_shape, group_by_stack_n)

    def table(self, sort_by=None, row_limit=100, **kwargs):
        """key_averages().table(...) (as torch's profile.table)."""
        return self.key_averages().table(sort_by=sort_by, row_limit=row_limit, **kwargs)

    def total_average(self):
        return self._finished().total_average()

    @property
    def self_cpu_time_total(self):
        return self._finished().self_cpu_time_total

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace JSON file (see EventList.export_chrome_trace)."""
        self._finished().export_chrome_trace(path)

    def __str__(self):
        return self.table()


class record_function:
    """A named host range in the profile (a row of its own, the ops inside nested under it):
    `with record_function("data"): ...` or `@record_function("step")` on a function, as
    torch.autograd.profiler.record_function. Does nothing while no profiler runs. `args` is
    accepted (a string shown with the row in torch) and kept."""

    def __init__(self, name, args=None):
        if not isinstance(name, str):
            raise TypeError(f"record_function(): argument 'name' must be str, not "
                            f"{type(name).__name__}")
        self.name = name
        self.args = args
        self._tokens = []

    def __enter__(self):
        rec = _active
        self._tokens.append((rec, rec.begin(self.name) if rec is not None else None))
        return self

    def __exit__(self, *exc):
        rec, ev = self._tokens.pop()
        if rec is not None:
            rec.end(ev)

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return wrapper


# ---------------------------------------------------------------------------------------------
# the table
# ---------------------------------------------------------------------------------------------

def _format_time(us, unit):
    if unit == "s":
        return f"{us / 1e6:.3f}s"
    if unit == "ms":
        return f"{us / 1e3:.3f}ms"
    if unit == "us":
        return f"{us:.3f}us"
    if unit is not None:
        raise ValueError(f"table(): time_unit must be None, 's', 'ms' or 'us', not {unit!r}")
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _share(part, total):
    return f"{100.0 * part / total:.2f}%" if total > 0 else "0.00%"


def _table(rows, sort_by, row_limit, max_src_width, max_name_width, max_shapes_width, header,
           top_level_only, unit):
    """The text of EventList.table (torch's layout: Name, Self CPU %, Self CPU, CPU total %,
    CPU total, CPU time avg, then the GPU columns when there is device time, # of Calls, and
    Input Shapes / Source Location when recorded)."""
    _format_time(0, unit)       # (ValueError for a bad unit, even with no rows)
    if len(rows) == 0:
        return ""
    rows = list(rows)
    self_cpu = sum(r.self_cpu_time_total for r in rows)
    self_dev = sum(r.self_device_time_total for r in rows if r.device_type != "cpu")
    if sort_by is not None:
        attr = sort_by.replace("cuda", "device")
        rows.sort(key=lambda r: getattr(r, attr), reverse=True)
    if top_level_only:
        rows = [r for r in rows if getattr(r, "cpu_parent", None) is None]
    if row_limit is not None and row_limit >= 0:
        rows = rows[:row_limit]
    has_device = any(r.self_device_time_total > 0 for r in rows)
    has_shapes = any(r.input_shapes for r in rows)
    has_stack = any(r.stack for r in rows)
    name_w = max(len(r.key) for r in rows) + 4
    if max_name_width is not None:
        name_w = min(name_w, max_name_width)
    columns = [("Name", name_w, "<"), ("Self CPU %", 12, ">"), ("Self CPU", 12, ">"),
               ("CPU total %", 12, ">"), ("CPU total", 12, ">"), ("CPU time avg", 12, ">")]
    if has_device:
        columns += [("Self GPU", 12, ">"), ("Self GPU %", 12, ">"), ("GPU total", 12, ">"),
                    ("GPU time avg", 12, ">")]
    columns.append(("# of Calls", 12, ">"))
    if has_shapes:
        w = max(len(str(r.input_shapes)) for r in rows) + 4
        columns.append(("Input Shapes", min(w, max_shapes_width or w), "<"))
    if has_stack:
        w = max(len(s) for r in rows for s in (r.stack or [""])) + 4
        columns.append(("Source Location", min(w, max_src_width or w), "<"))
    sep = "  ".join("-" * w for _, w, _ in columns)

    def line(values):
        return "  ".join(f"{_cut(str(v), w):{a}{w}}" for v, (_, w, a) in zip(values, columns))

    out = []
    if header is not None:
        out += ["=" * len(sep), header]
    out += [sep, line([c for c, _, _ in columns]), sep]
    for r in rows:
        values = [r.key, _share(r.self_cpu_time_total, self_cpu),
                  _format_time(r.self_cpu_time_total, unit),
                  _share(r.cpu_time_total, self_cpu), _format_time(r.cpu_time_total, unit),
                  _format_time(r.cpu_time, unit)]
        if has_device:
            values += [_format_time(r.self_device_time_total, unit),
                       _share(r.self_device_time_total, self_dev),
                       _format_time(r.device_time_total, unit),
                       _format_time(r.device_time, unit)]
        values.append(r.count)
        if has_shapes:
            values.append(str(r.input_shapes) if r.input_shapes else "")
        if has_stack:
            values.append(r.stack[0] if r.stack else "")
        out.append(line(values))
    out.append(sep)
    out.append(f"Self CPU time total: {_format_time(self_cpu, unit)}")
    if has_device:
        out.append(f"Self GPU time total: {_format_time(self_dev, unit)}")
    return "\n".join(out) + "\n"


def _cut(text, width):
    """text shortened to fit width (with "..." at the end)."""
    return text if len(text) <= width else text[:max(width - 3, 0)] + "..."

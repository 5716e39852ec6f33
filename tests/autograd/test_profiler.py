"""autograd.profiler: rows per op, backward node, record_function range, kernel and transfer;
call counts, times, nesting, the table, the hooks' cleanup, and the blocking reads of a step."""

import json
import threading

import pytest

import autograd
from autograd import engine, function, nn
from autograd.profiler import profile, record_function
from carray.opencl import _profiling


def _rows(prof):
    return {r.key: r for r in prof.key_averages()}


def _mlp_step(device):
    autograd.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)).to(device)
    opt = autograd.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = autograd.randn(6, 8, device=device)
    y = autograd.tensor([0, 1, 2, 3, 0, 1], device=device)

    def step():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def test_one_row_per_op_with_its_call_count(device):
    a = autograd.randn(4, 4, device=device, requires_grad=True)
    with profile() as prof:
        b = a @ a
        c = b @ a
        d = c @ b
        loss = d.sum()
    rows = _rows(prof)
    assert rows["MatMul"].count == 3
    assert rows["Sum"].count == 1
    assert "MatMulBackward0" not in rows
    with profile() as prof:
        loss.backward()
    rows = _rows(prof)
    assert rows["MatMulBackward0"].count == 3
    assert rows["SumBackward0"].count == 1
    assert rows["AccumulateGrad"].count == 1


def test_times_are_nonnegative_and_self_at_most_total(device):
    step = _mlp_step(device)
    step()
    with profile() as prof:
        step().item()
    events = prof.events()
    assert len(events) > 0
    for e in list(events) + list(prof.key_averages()):
        assert e.cpu_time_total >= 0 and e.self_cpu_time_total >= 0
        assert e.self_cpu_time_total <= e.cpu_time_total + 1e-6
        assert e.device_time_total >= 0 and e.self_device_time_total >= 0
        assert e.self_device_time_total <= e.device_time_total + 1e-6
        assert e.cpu_time <= e.cpu_time_total + 1e-6
    host = [e for e in events if e.device_type == "cpu"]
    for e in host:
        assert e.start_us <= e.end_us
        for c in e.cpu_children:
            assert e.start_us <= c.start_us and c.end_us <= e.end_us


def test_record_function_rows_nest(device):
    x = autograd.randn(3, 3, device=device)
    with profile() as prof:
        with record_function("outer"):
            with record_function("inner"):
                y = x + x
            z = y * 2
    del z
    events = prof.events()
    outer = [e for e in events if e.name == "outer"]
    inner = [e for e in events if e.name == "inner"]
    assert len(outer) == 1 and len(inner) == 1
    outer, inner = outer[0], inner[0]
    assert inner.cpu_parent is outer
    assert [e.name for e in inner.cpu_children] == ["Add"]
    assert "Mul" in [e.name for e in outer.cpu_children]
    assert outer.cpu_time_total >= inner.cpu_time_total
    assert outer.self_cpu_time_total <= outer.cpu_time_total - inner.cpu_time_total + 1e-6


def test_record_function_as_decorator_and_outside_a_profile():
    @record_function("my_step")
    def work(t):
        return t * 3

    x = autograd.ones(2)
    assert work(x).tolist() == [3.0, 3.0]       # no profiler: nothing recorded, no error
    with record_function("idle"):
        pass
    with profile() as prof:
        work(x)
        work(x)
    rows = _rows(prof)
    assert rows["my_step"].count == 2
    assert rows["Mul"].count == 2
    with pytest.raises(TypeError, match="record_function.*name.*str"):
        record_function(3)


def test_table_has_the_header_and_the_rows(device):
    a = autograd.randn(4, 4, device=device)
    with profile() as prof:
        with record_function("block"):
            for _ in range(3):
                a = a @ a
    text = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=20)
    lines = text.splitlines()
    for column in ("Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
                   "# of Calls"):
        assert column in lines[1]
    row = [ln for ln in lines if ln.startswith("MatMul ")]
    assert len(row) == 1 and row[0].split()[-1] == "3"
    assert any(ln.startswith("block ") for ln in lines)
    assert any(ln.startswith("Self CPU time total:") for ln in lines)
    if device == "gpu":
        assert "Self GPU" in lines[1] and "GPU total" in lines[1]
        assert lines[-1].startswith("Self GPU time total:")
    one = prof.key_averages().table(sort_by="cpu_time_total", row_limit=1)
    assert one.splitlines()[3].startswith("block ")     # the largest total: the enclosing range
    assert len(one.splitlines()) == 6
    assert "ms" in prof.key_averages().table(time_unit="ms").splitlines()[3]
    with pytest.raises(AttributeError):
        prof.key_averages().table(sort_by="no_such_column")
    with pytest.raises(ValueError, match="time_unit"):
        prof.key_averages().table(time_unit="hours")
    assert str(prof) == prof.table()


def test_cpu_profile_has_no_device_rows():
    a = autograd.randn(4, 4)
    with profile() as prof:
        (a @ a).tolist()
    assert all(e.device_type == "cpu" for e in prof.events())
    assert all(r.device_time_total == 0 for r in prof.key_averages())
    assert not any(r.key.startswith(("Memcpy", "clEnqueue")) for r in prof.key_averages())


def test_gpu_kernels_and_transfers_with_bytes(device):
    if device != "gpu":
        pytest.skip("device rows exist on the gpu only")
    host = autograd.randn(5, 7)
    with profile() as prof:
        x = host.to("gpu")                  # one upload of 5 * 7 float32
        y = (x * 2).sum(dim=1)
        y.tolist()                          # one blocking read of 5 float32
    rows = _rows(prof)
    assert rows["clEnqueueWriteBuffer"].count == 1
    assert rows["clEnqueueWriteBuffer"].nbytes == 5 * 7 * 4
    assert rows["Memcpy HtoD"].count == 1 and rows["Memcpy HtoD"].nbytes == 5 * 7 * 4
    assert rows["clEnqueueReadBuffer (blocking)"].count == 1
    assert rows["Memcpy DtoH"].nbytes == 5 * 4
    kernels = [e for e in prof.events() if e.device_type == "gpu"]
    assert len(kernels) >= 4                # two copies, the multiply, the sum
    assert all(e.device_time_total >= 0 for e in kernels)
    mul = [e for e in prof.events() if e.name == "Mul"][0]
    assert len(mul.kernels) >= 1 and mul.kernels[0].cpu_parent is mul
    assert mul.device_time_total == sum(k.device_time_total for k in mul.kernels)


def test_mlp_step_on_gpu_makes_one_blocking_read(device):
    """Issue 14 item 1: a training step reads nothing back from the device except the loss's
    item(). The MLP step (forward, cross-entropy, backward, SGD with momentum) queues one
    non-blocking read of the kernels' bad-index flag (cross_entropy's target check), which
    returns with the item() read. (The host may also wait when the device lags more than
    _launch.MAX_IN_FLIGHT kernels behind: "clWaitForEvents (queue bound)", which depends on the
    device's speed and is not counted here.)"""
    step = _mlp_step(device)
    step().item()                               # (compile the kernels)
    with profile() as prof:
        loss = step()
        loss.item()
    rows = _rows(prof)
    reads = rows.get("clEnqueueReadBuffer (blocking)")
    waits = [k for k in rows if k == "clFinish"]
    if device == "cpu":
        assert reads is None and not waits
        return
    assert reads.count == 1
    assert rows["clEnqueueReadBuffer"].count == 1       # the flag, read with the item()
    assert "clEnqueueWriteBuffer" not in rows
    assert not waits
    with profile() as prof:
        step()
    assert "clEnqueueReadBuffer (blocking)" not in _rows(prof)


def test_with_stack_and_record_shapes(device):
    a = autograd.randn(2, 3, device=device)
    b = autograd.randn(3, 4, device=device)
    with profile(record_shapes=True, with_stack=True) as prof:
        a @ b
    mm = [e for e in prof.events() if e.name == "MatMul"][0]
    assert mm.input_shapes == [[2, 3], [3, 4]]
    assert any("test_profiler.py" in f and "test_with_stack_and_record_shapes" in f
               for f in mm.stack[:3])
    assert not any("autograd/function.py" in f or "autograd/profiler.py" in f for f in mm.stack)
    grouped = prof.key_averages(group_by_input_shape=True, group_by_stack_n=1)
    row = [r for r in grouped if r.key == "MatMul"][0]
    assert row.input_shapes == [[2, 3], [3, 4]] and len(row.stack) == 1
    text = grouped.table()
    assert "Input Shapes" in text and "Source Location" in text


def test_custom_function_row_and_its_backward():
    class Twice(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = autograd.randn(3, requires_grad=True)
    with profile() as prof:
        Twice.apply(x).sum().backward()
    events = prof.events()
    rows = _rows(prof)
    assert rows["Twice"].count == 1 and rows["TwiceBackward"].count == 1
    back = [e for e in events if e.name == "TwiceBackward"][0]
    assert [c.name for c in back.cpu_children] == ["Mul"]   # backward's ops nest under it
    fwd = [e for e in events if e.name == "Twice"][0]
    assert fwd.cpu_children == []   # forward's own ops are part of its row
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_nothing_is_recorded_outside_the_profile(device):
    x = autograd.randn(3, device=device)
    x + x
    with profile() as prof:
        x * x
    x - x
    names = [e.name for e in prof.events() if e.device_type == "cpu"]
    assert names == ["Mul"]
    assert function._tracer is None
    assert engine._observer is None
    assert _profiling.observer is None
    assert len(prof.events()) == len(prof.events())     # stable after the fact


def test_hooks_are_removed_when_the_body_raises(device):
    x = autograd.randn(3, device=device)
    with pytest.raises(ZeroDivisionError):
        with profile() as prof:
            with record_function("failing"):
                x + x
                1 / 0
    assert function._tracer is None and engine._observer is None
    assert _profiling.observer is None
    failing = [e for e in prof.events() if e.name == "failing"][0]
    assert failing.end_us >= failing.start_us


def test_nested_or_reentered_profile_raises():
    with profile() as outer:
        with pytest.raises(RuntimeError, match="already enabled"):
            with profile():
                pass
        with pytest.raises(RuntimeError, match="not reentrant"):
            outer.__enter__()
    assert function._tracer is None
    with profile():     # a new one after the first finished
        pass


def test_disabled_profile_and_arguments():
    with profile(enabled=False) as prof:
        autograd.ones(2) + 1
    assert function._tracer is None
    with pytest.raises(RuntimeError, match="didn't finish|must be initialized"):
        prof.key_averages()
    with pytest.raises(RuntimeError, match="must be initialized"):
        profile().events()
    with pytest.warns(UserWarning, match="not a valid device option"):
        assert profile(use_device="tpu").use_device is None
    with pytest.warns(FutureWarning, match="use_cuda"):
        assert profile(use_cuda=True).use_device == "cuda"
    assert profile(use_device="gpu").use_device == "gpu"


def test_ops_of_other_threads_are_recorded_on_their_thread(device):
    a = autograd.randn(3, 3, device=device)

    def work():
        a @ a

    with profile() as prof:
        t = threading.Thread(target=work)
        t.start()
        t.join()
        a + a
    mm = [e for e in prof.events() if e.name == "MatMul"]
    add = [e for e in prof.events() if e.name == "Add"]
    assert len(mm) == 1 and len(add) == 1
    assert mm[0].thread == t.ident and add[0].thread == threading.get_ident()


def test_export_chrome_trace(device, tmp_path):
    a = autograd.randn(3, 3, device=device)
    with profile() as prof:
        with record_function("region"):
            a @ a
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())["traceEvents"]
    names = [e["name"] for e in trace]
    assert "region" in names and "MatMul" in names
    for e in trace:
        assert e["ph"] == "X" and e["dur"] >= 0
    if device == "gpu":
        assert any(e["pid"] == "GPU" for e in trace)


def test_synchronize_is_a_clfinish_row(device):
    if device != "gpu":
        pytest.skip("synchronize needs the OpenCL device")
    x = autograd.randn(4, device=device)
    with profile() as prof:
        x + x
        autograd.cuda.synchronize()
    assert _rows(prof)["clFinish"].count == 1


def test_profiling_does_not_make_the_engine_copy_gradients(monkeypatch):
    """A leaf keeps the gradient the engine hands it (no copy) whether or not a profiler
    observes: the observed path must not hold an extra reference that makes it copy."""
    from autograd.tensor import Tensor
    copies = []
    real = Tensor._clone_data

    def counting(self):
        copies.append(1)
        return real(self)
    monkeypatch.setattr(Tensor, "_clone_data", counting)
    x = autograd.randn(4, 5, requires_grad=True)
    w = autograd.randn(5, 3, requires_grad=True)

    def step():
        x.grad = w.grad = None
        (x @ w).relu().sum().backward()
    step()
    plain = len(copies)
    with autograd.profiler.profile():
        step()
    assert len(copies) - plain == plain, (plain, len(copies) - plain)

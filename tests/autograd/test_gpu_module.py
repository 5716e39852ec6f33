"""autograd.gpu (= autograd.cuda), autograd.accelerator, autograd.backends, inference_mode and
"cuda" as a device name, checked against torch's behaviour where torch runs without a GPU."""

import sys
import warnings

import pytest

import autograd
import carray

from conftest import have_gpu


def test_cuda_is_the_gpu_module():
    import autograd.cuda as cuda_module
    assert cuda_module is autograd.gpu is autograd.cuda is sys.modules["autograd.cuda"]


def test_is_available_matches_carray():
    assert autograd.cuda.is_available() is have_gpu()
    assert autograd.cuda.device_count() == (carray.opencl.device_count() if have_gpu() else 0)
    assert autograd.accelerator.is_available() is have_gpu()
    assert autograd.accelerator.device_count() == autograd.cuda.device_count()


@pytest.mark.skipif(not have_gpu(), reason="no OpenCL device")
def test_device_functions():
    cuda = autograd.cuda
    assert cuda.get_device_name() == carray.opencl.runtime().name
    assert cuda.get_device_name("cuda:0") == cuda.get_device_name(0)
    assert cuda.current_device() == 0
    cuda.set_device(0)
    cuda.set_device("cuda:0")
    n = cuda.device_count()
    with pytest.raises(RuntimeError, match=f"invalid device ordinal {n}"):
        cuda.set_device(n)
    with pytest.raises(ValueError, match="Expected a cuda device"):
        cuda.set_device("cpu")
    with cuda.device(0):
        pass
    assert autograd.accelerator.current_accelerator() == autograd.device("gpu")
    assert autograd.accelerator.current_device_index() == 0
    x = autograd.ones(1000, device="cuda") * 2
    cuda.synchronize()
    autograd.accelerator.synchronize()
    held = cuda.memory_allocated()
    assert held >= 4000 and cuda.memory_reserved() >= held
    del x
    assert cuda.memory_allocated() <= held - 4000
    cuda.empty_cache()
    assert cuda.memory_reserved() >= cuda.memory_allocated()


def test_manual_seed_seeds_the_one_generator():
    autograd.cuda.manual_seed(5)
    a = autograd.rand(4)
    autograd.manual_seed(5)
    assert autograd.equal(a, autograd.rand(4))
    autograd.cuda.manual_seed_all(5)
    assert autograd.equal(a, autograd.rand(4))


@pytest.mark.parametrize("name", ["cuda", "cuda:0", "gpu", "opencl"])
def test_cuda_names_the_gpu(name):
    d = autograd.device(name)
    assert d == autograd.device("gpu") == "gpu" and d.type == "gpu"
    if not have_gpu():
        pytest.skip("no OpenCL device")
    for t in (autograd.zeros(2, device=name), autograd.tensor([1.0], device=d),
              autograd.arange(3, device=name), autograd.randn(2, device=name),
              autograd.zeros(2).to(name), autograd.zeros(2).to(d), autograd.zeros(2).cuda()):
        assert t.device == "gpu" and t.is_cuda
    m = autograd.nn.Linear(2, 2).to(name)
    assert m.weight.is_cuda
    assert not m.cpu().weight.is_cuda and m.cuda().weight.is_cuda
    assert not autograd.zeros(2, device=name).cpu().is_cuda


def test_device_repr_and_errors():
    assert repr(autograd.device("cuda:0")) == "device(type='gpu', index=0)"
    assert autograd.device("cuda:0").index == 0 and autograd.device("cuda").index is None
    assert repr(autograd.device("cpu")) == "device(type='cpu')"
    with pytest.raises(RuntimeError, match="Expected one of cpu, gpu, cuda"):
        autograd.device("tpu")
    with pytest.raises(RuntimeError, match="Expected one of"):
        autograd.zeros(2, device="cuda:x")
    with pytest.raises(RuntimeError, match="must be cuda device"):
        autograd.zeros(2).cuda("cpu")


# -- backends ------------------------------------------------------------------------------------

def test_backends_flags_as_torch():
    torch = pytest.importorskip("torch")
    b, tb = autograd.backends, torch.backends
    assert (b.cudnn.enabled, b.cudnn.benchmark, b.cudnn.deterministic, b.cudnn.allow_tf32) == \
        (tb.cudnn.enabled, tb.cudnn.benchmark, tb.cudnn.deterministic, tb.cudnn.allow_tf32)
    assert autograd.get_float32_matmul_precision() == torch.get_float32_matmul_precision()
    assert b.cuda.matmul.allow_tf32 == tb.cuda.matmul.allow_tf32
    assert not b.mps.is_available()
    assert b.opencl.is_available() is have_gpu()


def test_matmul_precision_and_allow_tf32_are_one_setting():
    m = autograd.backends.cuda.matmul
    try:
        autograd.set_float32_matmul_precision("high")
        assert m.allow_tf32 is True
        m.allow_tf32 = False
        assert autograd.get_float32_matmul_precision() == "highest"
        m.allow_tf32 = True
        assert autograd.get_float32_matmul_precision() == "high"
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            autograd.set_float32_matmul_precision("fastest")
        assert w and autograd.get_float32_matmul_precision() == "high"
        with pytest.raises(AttributeError, match="Unknown attribute foo"):
            m.foo = 1
        with pytest.raises(AttributeError, match="Unknown attribute foo"):
            m.foo  # noqa: B018
    finally:
        autograd.set_float32_matmul_precision("highest")


def test_cudnn_flags_can_be_set():
    import autograd.backends.cudnn as cudnn
    old = cudnn.benchmark
    try:
        cudnn.benchmark = True
        assert autograd.backends.cudnn.benchmark is True
    finally:
        cudnn.benchmark = old


# -- inference_mode ------------------------------------------------------------------------------

def test_inference_mode_as_torch():
    torch = pytest.importorskip("torch")
    for lib in (torch, autograd):
        seen = []
        with lib.no_grad():
            with lib.inference_mode(False):
                seen.append((lib.is_grad_enabled(), lib.is_inference_mode_enabled()))
        with lib.inference_mode():
            seen.append((lib.is_grad_enabled(), lib.is_inference_mode_enabled()))
            with lib.inference_mode(mode=False):
                seen.append((lib.is_grad_enabled(), lib.is_inference_mode_enabled()))
            seen.append((lib.is_grad_enabled(), lib.is_inference_mode_enabled()))
        seen.append((lib.is_grad_enabled(), lib.is_inference_mode_enabled()))

        @lib.inference_mode
        def bare():
            return lib.is_grad_enabled(), lib.is_inference_mode_enabled()

        @lib.inference_mode()
        def called():
            return lib.is_grad_enabled(), lib.is_inference_mode_enabled()

        seen += [bare(), called(), (lib.is_grad_enabled(), lib.is_inference_mode_enabled())]
        if lib is torch:
            expected = seen
    assert seen == expected


def test_inference_mode_records_no_graph():
    x = autograd.ones(2, requires_grad=True)
    with autograd.inference_mode():
        y = x * 2
    assert not y.requires_grad and y.grad_fn is None
    with pytest.raises(TypeError, match="'mode' must be bool"):
        autograd.inference_mode(1)
    assert autograd.inference_mode(False).clone().mode is False

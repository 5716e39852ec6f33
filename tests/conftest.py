"""Hypothesis profiles for the whole suite: "ci" (the default: hypothesis's usual budget, no
deadline) and "long" (thousands of examples, for the fuzzers: `--hypothesis-profile=long`).
Registered here, in the top conftest, so that hypothesis's own --hypothesis-profile option finds
them when it loads the named profile. Also the OpenCL build options of a CPU-only OpenCL device
(see the end)."""

import os

from hypothesis import settings

settings.register_profile("ci", max_examples=100, deadline=None)
settings.register_profile("long", max_examples=3000, deadline=None)
if settings._current_profile == "default":
    settings.load_profile("ci")


def _pocl_only():
    """True when the OpenCL device carray would pick is a CPU one (PoCL in CI): no platform
    offers a GPU. False without pyopencl or any device."""
    try:
        import pyopencl as cl
        devices = [d for p in cl.get_platforms() for d in p.get_devices()]
    except Exception:   # no pyopencl, no ICD, no platform: nothing to tune
        return False
    return bool(devices) and not any(d.type & cl.device_type.GPU for d in devices)


# On a CPU OpenCL device (PoCL: CI and machines without a GPU) compiling kernels is most of the
# suite's time and the test arrays are tiny, so kernels are built without optimisation (about
# half the build time). A GPU keeps full optimisation; CARRAY_OPENCL_BUILD_OPTIONS, when set,
# wins.
if "CARRAY_OPENCL_BUILD_OPTIONS" not in os.environ and _pocl_only():
    os.environ["CARRAY_OPENCL_BUILD_OPTIONS"] = "-cl-opt-disable"

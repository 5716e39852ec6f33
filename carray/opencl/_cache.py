"""Kernel templates (.cl files next to this module) rendered, built once per key and cached.

A key names what a kernel is specialised on (op, dtypes, rank, layout); the built Kernel object is
kept per key for the life of the runtime's context, and pyopencl keeps the compiled binaries on
disk between runs. CARRAY_DEBUG=1 logs every build, CARRAY_DEBUG=2 also prints its source;
CARRAY_OPENCL_BUILD_OPTIONS adds compiler options (for tuning, e.g. -cl-nv-maxrregcount=128).
"""

import os
import string
import sys
import threading

from carray.opencl._runtime import runtime

_HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels")
_templates = {}
_kernels = {}
_build_lock = threading.RLock()     # one build per key when threads ask at once



def template(name):
    """The text of the template file `name` (read once)."""
    t = _templates.get(name)
    if t is None:
        with open(os.path.join(_HERE, name)) as f:
            t = f.read()
        _templates[name] = t
    return t


def render(name, **values):
    """Template `name` with $placeholders replaced by `values`."""
    return string.Template(template(name)).substitute(values)


def kernel(key, names, make_source, idx="int", fp64=False):
    """The Kernel(s) `names` (a str or tuple) of the program that make_source() builds, cached
    under `key`. TypeError when the program needs float64 and the device has no cl_khr_fp64."""
    k = _kernels.get(key)
    if k is not None:
        return k
    with _build_lock:
        k = _kernels.get(key)
        if k is None:
            k = _kernels[key] = _build(names, make_source, idx, fp64, key)
    return k


def _build(names, make_source, idx, fp64, key):
    """Build the program and return its Kernel(s) `names` (see kernel)."""
    rt = runtime()
    if fp64 and not rt.fp64:
        raise TypeError(f"float64 is not supported on OpenCL device {rt.name!r} (it has no "
                        f"cl_khr_fp64); use float32 or device='cpu'")
    defines = f"#define IDX {idx}\n" + ("#define CARRAY_FP64 1\n" if fp64 else "")
    source = defines + template("common.cl") + "\n" + make_source()
    if rt.debug >= 1:
        print(f"carray.opencl: building {key}", file=sys.stderr)
    if rt.debug >= 2:
        print(source, file=sys.stderr)
    # correctly rounded float32 / and sqrt (OpenCL allows 2.5 and 3 ulp by default, and NVIDIA
    # uses that), so results match the CPU's IEEE ones
    program = rt.cl.Program(rt.context, source).build(
        options=["-cl-fp32-correctly-rounded-divide-sqrt"]
        + os.environ.get("CARRAY_OPENCL_BUILD_OPTIONS", "").split())
    if isinstance(names, str):
        return getattr(program, names)
    return tuple(getattr(program, n) for n in names)


class PlanCache(dict):
    """Launch plans by key (what a repeated launch of one layout reuses: kernel, packed
    arguments, sizes), at most `limit` of them: put() empties it when full."""

    def __init__(self, limit=4096):
        super().__init__()
        self.limit = limit

    def put(self, key, plan):
        """Keep plan under key; returns plan."""
        if len(self) >= self.limit:
            self.clear()
        self[key] = plan
        return plan

"""Build the carray Cython extensions.

Every `carray/*/*.pyx` becomes one extension module (carray/core, ops, cpu, opencl). OpenMP is
used when the compiler accepts `-fopenmp` (setup.py probes it); the build never uses
-march=native or -ffast-math, so one wheel runs on any CPU of its architecture. Set
CARRAY_DEBUG_BUILD=1 to turn Cython's bounds checks and C debug info on.
"""

import glob
import os
import sys
import tempfile

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

DEBUG = os.environ.get("CARRAY_DEBUG_BUILD") == "1"

# The elementwise kernels are one source compiled per x86-64 SIMD level; carray.ops._ufunc imports
# the widest one the CPU supports at run time, so the wheel itself assumes only baseline x86-64.
SIMD_FLAGS = {
    "carray.cpu._kernels_avx2": ["-mavx2", "-mfma"],
    "carray.cpu._kernels_avx512": ["-mavx512f", "-mavx512vl", "-mavx512bw", "-mavx512dq", "-mavx2",
                               "-mfma", "-mprefer-vector-width=512"],
}


def _targets_x86_64():
    """True when building for x86-64 (not for arm64, also when cross-compiling on macOS)."""
    import platform

    archflags = os.environ.get("ARCHFLAGS", "")      # macOS cross builds name their target here
    if archflags:
        return "x86_64" in archflags and "arm64" not in archflags
    if sys.platform == "win32":
        return False
    return platform.machine().lower() in ("x86_64", "amd64")


def _compiler_accepts(compiler, flag):
    """True when the C compiler builds and links a tiny OpenMP program with `flag`."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "probe.c")
        with open(src, "w") as f:
            f.write("#include <omp.h>\nint main(void){return omp_get_max_threads() > 0 ? 0 : 1;}\n")
        try:
            objs = compiler.compile([src], output_dir=tmp, extra_postargs=[flag])
            compiler.link_executable(objs, "probe", output_dir=tmp, extra_postargs=[flag])
        except Exception:
            return False
    return True


class BuildExt(build_ext):
    """build_ext that adds OpenMP flags when the compiler supports them."""

    def finalize_options(self):
        super().finalize_options()
        if self.parallel is None:  # pip and `python -m build` pass no -j: compile on every core
            self.parallel = os.cpu_count() or 1

    def build_extensions(self):
        compiler = self.compiler
        openmp = sys.platform != "win32" and _compiler_accepts(compiler, "-fopenmp")
        for ext in self.extensions:
            if sys.platform != "win32":
                # -fno-math-errno: sqrt and friends never set errno (carray never reads it), so
                # their loops vectorise; NaN and inf results are unchanged
                ext.extra_compile_args += ["-O3", "-std=c11", "-Wno-unused-function",
                                           "-fno-math-errno"]
                if not DEBUG:  # Python's CFLAGS carry -g; debug info triples the wheel's size
                    ext.extra_compile_args.append("-g0")
            ext.extra_compile_args += SIMD_FLAGS.get(ext.name, [])
            if openmp:
                ext.extra_compile_args.append("-fopenmp")
                ext.extra_link_args.append("-fopenmp")
        if not openmp:
            print("carray: building without OpenMP (compiler does not accept -fopenmp)")
        super().build_extensions()


def extensions():
    from Cython.Build import cythonize

    directives = {
        "language_level": 3,
        "boundscheck": DEBUG,
        "wraparound": DEBUG,
        "cdivision": not DEBUG,
        "initializedcheck": DEBUG,
        "embedsignature": True,
    }
    sources = sorted(glob.glob(os.path.join("carray", "*", "*.pyx")))
    if not _targets_x86_64():
        sources = [p for p in sources if p[:-4].replace(os.sep, ".") not in SIMD_FLAGS]
    if not sources:
        # An sdist without its .pyx files would otherwise build a pure-Python wheel that cannot
        # import: fail here instead (MANIFEST.in lists what the sdist must carry).
        sys.exit("carray: no carray/*/*.pyx found next to setup.py; nothing to build")
    # every extension may include any carray/*/*.h or *.pxi: editing one rebuilds them all
    depends = (glob.glob(os.path.join("carray", "*", "*.h"))
               + glob.glob(os.path.join("carray", "*", "*.pxi")))
    include_dirs = [os.path.join("carray", d) for d in ("core", "ops", "cpu")]
    exts = [Extension(path[:-4].replace(os.sep, "."), [path], include_dirs=include_dirs,
                      depends=depends)
            for path in sources]
    return cythonize(exts, compiler_directives=directives, nthreads=os.cpu_count() or 1)


# The guard keeps cythonize's worker processes (spawned on macOS) from running setup() again;
# setuptools' PEP 517 backend executes this file as __main__.
if __name__ == "__main__":
    setup(ext_modules=extensions(), cmdclass={"build_ext": BuildExt})

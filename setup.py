"""Build the carray Cython extensions.

Every `carray/*.pyx` becomes one extension module. OpenMP is used when the compiler accepts
`-fopenmp` (setup.py probes it); the build never uses -march=native or -ffast-math, so one wheel
runs on any CPU of its architecture. Set CARRAY_DEBUG_BUILD=1 to turn Cython's bounds checks on.
"""

import glob
import os
import shutil
import subprocess
import sys
import tempfile

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


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

    def build_extensions(self):
        compiler = self.compiler
        openmp = sys.platform != "win32" and _compiler_accepts(compiler, "-fopenmp")
        for ext in self.extensions:
            if sys.platform != "win32":
                ext.extra_compile_args += ["-O3", "-std=c11", "-Wno-unused-function"]
            if openmp:
                ext.extra_compile_args.append("-fopenmp")
                ext.extra_link_args.append("-fopenmp")
        if not openmp:
            print("carray: building without OpenMP (compiler does not accept -fopenmp)")
        super().build_extensions()


def extensions():
    from Cython.Build import cythonize

    debug = os.environ.get("CARRAY_DEBUG_BUILD") == "1"
    directives = {
        "language_level": 3,
        "boundscheck": debug,
        "wraparound": debug,
        "cdivision": not debug,
        "initializedcheck": debug,
        "embedsignature": True,
    }
    exts = [
        Extension(
            path[:-4].replace(os.sep, "."),
            [path],
            include_dirs=["carray"],
            define_macros=[("NPY_NO_DEPRECATED_API", "0")],
        )
        for path in sorted(glob.glob(os.path.join("carray", "*.pyx")))
    ]
    return cythonize(exts, compiler_directives=directives, nthreads=os.cpu_count() or 1)


setup(ext_modules=extensions(), cmdclass={"build_ext": BuildExt})

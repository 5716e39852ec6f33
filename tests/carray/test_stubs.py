"""The type stubs (*.pyi) of carray's compiled modules cover their public names.

For every compiled module with a stub, each public name of the runtime module (its __all__, and
the names it defines: classes and functions whose __module__ is the module, and other non-module
values) must be defined in the stub; every public method and property of carray.Array, and its
operators and protocols, must be in the stub's Array class. When mypy is installed, it must
accept a snippet using carray and reject a wrong one (showing that the stubs, not Any, are seen),
and mypy's stubtest must find the stubs' signatures (parameter names, kinds and defaults) equal
to the runtime's, but for the differences allowed in STUBTEST_ALLOWLIST.
"""

import ast
import importlib
import importlib.util
import os
import pathlib
import subprocess
import sys
import textwrap
import types

import pytest

import carray as ca

PACKAGE = pathlib.Path(ca.__file__).resolve().parent
ROOT = PACKAGE.parent

MODULES = (
    "carray.core._array",
    "carray.core._dtype",
    "carray.core._storage",
    "carray.core._strided",
    "carray.ops._ufunc",
    "carray.ops._optable",
    "carray.ops._creation",
    "carray.ops._join",
    "carray.ops._matmul",
    "carray.ops._cumulative",
    "carray.ops._sort",
    "carray.cpu._random",
    "carray.cpu._nn",
    "carray.cpu._kernels_generic",
    "carray.cpu._kernels_avx2",
    "carray.cpu._kernels_avx512",
)
BUILDS = ("generic", "avx2", "avx512")      # the SIMD levels of carray.cpu._kernels_*

# Array's operators and Python protocols, which the stub must declare
ARRAY_DUNDERS = (
    # arithmetic, bitwise and matmul operators, reflected and in place
    "__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__",
    "__mul__", "__rmul__", "__imul__", "__truediv__", "__rtruediv__", "__itruediv__",
    "__floordiv__", "__rfloordiv__", "__ifloordiv__", "__mod__", "__rmod__", "__imod__",
    "__pow__", "__rpow__", "__ipow__", "__matmul__", "__rmatmul__", "__imatmul__",
    "__and__", "__rand__", "__iand__", "__or__", "__ror__", "__ior__",
    "__xor__", "__rxor__", "__ixor__",
    "__lshift__", "__rlshift__", "__ilshift__", "__rshift__", "__rrshift__", "__irshift__",
    # comparisons (elementwise)
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
    # unary
    "__neg__", "__pos__", "__abs__", "__invert__",
    # containers, conversions, copies
    "__len__", "__iter__", "__contains__", "__getitem__", "__setitem__",
    "__delitem__",
    "__bool__", "__int__", "__float__", "__index__", "__complex__", "__format__",
    "__copy__", "__deepcopy__", "__array__", "__array_ufunc__", "__hash__",
    # export: DLPack and pickling
    "__dlpack__", "__dlpack_device__", "__reduce__",
    # the array API namespace
    "__array_namespace__",
)
# dunders Array's own __dict__ has that the stub need not declare: Cython's and object's
ARRAY_DUNDERS_IGNORED = {
    "__doc__", "__init__", "__new__", "__pyx_vtable__", "__repr__", "__str__",
    # Python 3.12 and newer expose the buffer protocol as methods (PEP 688)
    "__buffer__", "__release_buffer__",
}


def _stub_path(modname):
    return ROOT.joinpath(*modname.split(".")).with_suffix(".pyi")


def _parse_stub(modname):
    return ast.parse(_stub_path(modname).read_text(), filename=str(_stub_path(modname)))


def _bound_names(body):
    """Names a stub body binds: defs, classes, (annotated) assignments, `import x as x`."""
    names = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                names.update(t.id for t in ast.walk(target) if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            # only explicit re-exports (`from m import x as x`) count, as in PEP 484 stubs
            names.update(a.asname for a in node.names if a.asname is not None
                         and a.asname == a.name.split(".")[-1])
        elif isinstance(node, ast.If):
            names.update(_bound_names(node.body) | _bound_names(node.orelse))
    return names


def _stub_all(tree):
    """The stub's __all__ list literal, or None."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return ast.literal_eval(node.value)
    return None


def _runtime_public_names(mod):
    """__all__, plus the public names the module defines (not the modules, classes and
    functions it imports from elsewhere)."""
    names = set(getattr(mod, "__all__", ()))
    for name, value in vars(mod).items():
        if name.startswith("_") or isinstance(value, types.ModuleType):
            continue
        # classes and functions from elsewhere are imports (the op-table functions say
        # __module__ "carray" but are in _ufunc's __all__)
        if callable(value) and getattr(value, "__module__", None) != mod.__name__:
            continue
        names.add(name)
    return names


def _importable(modname):
    """False for the SIMD kernel builds wider than the one carray picked: this CPU may not run
    them (carray.ops._ufunc never imports those either)."""
    if not modname.startswith("carray.cpu._kernels_"):
        return True
    import carray.ops._ufunc as uf
    return BUILDS.index(modname.rsplit("_", 1)[1]) <= BUILDS.index(uf.simd_build)


IMPORTABLE = [m for m in MODULES if _importable(m)]


@pytest.mark.parametrize("modname", MODULES)
def test_stub_exists_for_compiled_module(modname):
    origin = importlib.util.find_spec(modname).origin     # (finds it without importing it)
    assert not origin.endswith(".py"), f"{modname} is not a compiled module"
    assert _stub_path(modname).is_file(), f"no stub {_stub_path(modname)}"


@pytest.mark.parametrize("modname", IMPORTABLE)
def test_stub_defines_every_public_name(modname):
    mod = importlib.import_module(modname)
    stub = _bound_names(_parse_stub(modname).body)
    missing = sorted(_runtime_public_names(mod) - stub)
    assert not missing, f"{_stub_path(modname).name} lacks {missing}"


@pytest.mark.parametrize("modname", [m for m in IMPORTABLE
                                     if hasattr(importlib.import_module(m), "__all__")])
def test_stub_all_matches_runtime(modname):
    mod = importlib.import_module(modname)
    assert _stub_all(_parse_stub(modname)) == list(mod.__all__)


def test_ufunc_stub_has_every_elementwise_function():
    import carray.ops._ufunc as uf
    stub = _bound_names(_parse_stub("carray.ops._ufunc").body)
    missing = sorted(set(uf.ELEMENTWISE) - stub)
    assert not missing, (f"_ufunc.pyi lacks the elementwise functions {missing}: run "
                         f"PYTHONPATH=. python tools/stub_elementwise.py")


def _array_class_names():
    tree = _parse_stub("carray.core._array")
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Array")
    return _bound_names(cls.body)


def test_array_stub_has_every_public_method_and_property():
    stub = _array_class_names()
    public = {n for n in dir(ca.Array) if not n.startswith("_")}
    assert public, "carray.Array has no public attributes?"
    missing = sorted(public - stub)
    assert not missing, f"the Array stub lacks {missing}"


def test_array_stub_has_operators_and_protocols():
    stub = _array_class_names()
    runtime = set(dir(ca.Array))
    assert not set(ARRAY_DUNDERS) - runtime, "ARRAY_DUNDERS names a dunder Array lacks"
    missing = sorted(set(ARRAY_DUNDERS) - stub)
    assert not missing, f"the Array stub lacks {missing}"
    # a dunder added to Array (a new operator) must be listed above, and so stubbed
    own = {n for n in vars(ca.Array) if n.startswith("__") and n.endswith("__")}
    unlisted = sorted(own - set(ARRAY_DUNDERS) - ARRAY_DUNDERS_IGNORED)
    assert not unlisted, f"Array defines {unlisted}: add them to ARRAY_DUNDERS and the stub"


def test_array_stub_has_no_stale_members():
    # whatever the stub declares (private helpers included) exists at runtime, except the
    # typing-only __buffer__ (the buffer protocol of a Cython type has no Python method on 3.11)
    stale = sorted(_array_class_names() - set(dir(ca.Array)) - {"__buffer__"})
    assert not stale, f"the Array stub declares {stale}, which carray.Array lacks"


def test_py_typed_marker():
    assert (PACKAGE / "py.typed").is_file()


# -- mypy (optional) ---------------------------------------------------------------------------

GOOD_SNIPPET = """
    import carray as ca
    from carray.ops._optable import Kind, UnaryOp, lookup

    a = ca.zeros((2, 3))
    b: ca.Array = a.reshape(3, 2) + ca.exp(a.T)
    c: ca.Array = a.reshape((3, 2)) @ a
    d: ca.Array = (a > 0) & ~(a == 1.0)
    e: ca.Array = ca.where(a < 1, a, 2.0).sum(axis=0, keepdims=True)
    n: int = a.ndim + a.size + len(a)
    s: tuple[int, ...] = a.shape
    dt: ca.DType = a.dtype
    f: float = float(a[0, 0])
    parts: list[ca.Array] = ca.split(ca.arange(6), 3)
    m: ca.Array = ca.amax(a, axis=(0, 1)) + ca.true_divide(a, 2)
    i: ca.Array = ca.bitwise_not(ca.ones(3, dtype="int32")) | ca.isnan(a)
    x, step = ca.linspace(0, 1, 5, retstep=True)
    g = ca.random.Generator(0)
    r1: float = g.random()
    r2: ca.Array = g.random((2, 2))
    a += 1
    a[0, 1:] = 5
    a.sort()
    name: str = lookup(Kind.UNARY, UnaryOp.U_EXP).name
    ca.set_num_threads(ca.get_num_threads())
    view = memoryview(a)
"""

BAD_SNIPPET = """
    import carray as ca
    a = ca.zeros((2, 3))
    s: str = a.reshape(3, 2)
    a.no_such_method()
    ca.exp(a, a, a)
"""


def _mypy(tmp_path, monkeypatch, source):
    api = pytest.importorskip("mypy.api", reason="mypy is not installed")
    path = tmp_path / "snippet.py"
    path.write_text(textwrap.dedent(source))
    monkeypatch.setenv("MYPYPATH", str(ROOT))
    monkeypatch.chdir(tmp_path)
    stdout, stderr, status = api.run([
        "--follow-imports=silent", "--no-error-summary", "--show-error-codes",
        "--cache-dir", str(tmp_path / ".mypy_cache"), str(path)])
    return stdout + stderr, status


def test_mypy_accepts_carray_code(tmp_path, monkeypatch):
    out, status = _mypy(tmp_path, monkeypatch, GOOD_SNIPPET)
    assert status == 0, out


def test_mypy_rejects_wrong_carray_code(tmp_path, monkeypatch):
    out, status = _mypy(tmp_path, monkeypatch, BAD_SNIPPET)
    assert status == 1, out
    assert 'expression has type "Array", variable has type "str"' in out, out
    assert '"Array" has no attribute "no_such_method"' in out, out
    assert 'Too many arguments for "exp"' in out, out


# what stubtest may report: Cython's module and pickling internals, the typing-only __buffer__,
# the __init__(*args, **kwargs) that only raises TypeError (Array and DType are not made by
# calling them), and PEP 800's @disjoint_base, which the stubs leave out for older checkers
STUBTEST_ALLOWLIST = r"""
carray\..*\.__test__
carray\..*\.__pyx_capi__
carray\..*\.__reduce_cython__
carray\..*\.__setstate_cython__
carray\.core\._array\.Array\.__buffer__
carray\.core\._array\.Array\.__init__
carray\.core\._dtype\.DType\.__init__
carray\.core\._array\.Array
carray\.core\._array\._Flags
carray\.core\._dtype\.DType
carray\.core\._storage\.Storage
carray\.cpu\._random\.Generator
"""


def test_stubtest_agrees_with_runtime(tmp_path):
    pytest.importorskip("mypy.stubtest", reason="mypy is not installed")
    allowlist = tmp_path / "allowlist.txt"
    allowlist.write_text(STUBTEST_ALLOWLIST)
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    proc = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "--concise", "--ignore-unused-allowlist",
         "--allowlist", str(allowlist), "--mypy-config-file", str(config), *IMPORTABLE],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr

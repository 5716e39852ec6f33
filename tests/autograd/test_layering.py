"""autograd's modules form layers without an import circle (see autograd/tensor.py):

    grad_mode, _defaults, _format  <-  tensor  <-  function  <-  engine  <-  factories
        <-  ops/*  <-  nn, optim, gradcheck, serialization, utils, datasets  <-  autograd

Each layer is imported alone in a fresh interpreter (the packages' __init__ files replaced by
empty packages, so only real imports load modules) and must not load a module of a higher
layer. No function body imports a project module, except Tensor.backward's documented call-time
import of the engine; no module sets attributes on another; tensor.pyi lists Tensor's methods.
"""

import ast
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PKG = os.path.join(ROOT, "autograd")

def _package_modules(sub):
    """The modules of the package autograd.<sub> (its files), by their import names."""
    return sorted(f"autograd.{sub}.{f[:-3]}" for f in os.listdir(os.path.join(PKG, sub))
                  if f.endswith(".py") and f != "__init__.py")


LAYERS = [
    ["autograd.grad_mode", "autograd._defaults", "autograd._format", "autograd._size"],
    ["autograd.tensor"],
    ["autograd.function"],
    ["autograd.engine"],
    ["autograd.profiler"],
    ["autograd.factories"],
    ["autograd.ops", *_package_modules("ops")],   # every module of autograd/ops
    ["autograd.gradcheck", "autograd.serialization", "autograd.nn", "autograd.optim",
     "autograd.utils", "autograd.datasets", "autograd.gpu", "autograd.accelerator",
     "autograd.backends", "autograd.linalg", "autograd.special", "autograd.onnx",
     "autograd.distributed", "autograd.amp"],
    ["autograd"],
]

# the modules of each package (nn.functional, optim.sgd, ...) belong to the package's layer
_SUBPACKAGES = ("autograd.nn", "autograd.optim", "autograd.utils", "autograd.datasets",
                "autograd.backends", "autograd.onnx", "autograd.distributed", "autograd.amp")


# modules known under a second name (autograd/__init__.py puts autograd.gpu in sys.modules as
# autograd.cuda, as torch.cuda, and autograd.amp as autograd.cuda.amp)
_ALIASES = {"autograd.cuda": "autograd.gpu", "autograd.cuda.amp": "autograd.amp"}


def _layer_of(name):
    name = _ALIASES.get(name, name)
    for n, layer in enumerate(LAYERS):
        if name in layer:
            return n
    for pkg in _SUBPACKAGES:
        if name.startswith(pkg + "."):
            return _layer_of(pkg)
    raise AssertionError(f"{name} is in no layer of tests/autograd/test_layering.py")


def _all_modules():
    out = []
    for dirpath, _, files in os.walk(PKG):
        for f in files:
            if f.endswith(".py"):
                rel = os.path.relpath(os.path.join(dirpath, f), ROOT)[:-3].replace(os.sep, ".")
                out.append(rel[:-len(".__init__")] if rel.endswith(".__init__") else rel)
    return sorted(out)


# Imports `modules` with empty stand-ins for the given packages (so that importing
# autograd.tensor does not run autograd/__init__.py), and prints the autograd modules loaded.
_PROBE = """
import importlib, json, sys, types
root, modules, stubs = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
try:        # carray as installed (CI: the checkout's carray/ has sources only) ...
    import carray
except ImportError:     # ... or built in place in the checkout
    sys.path.insert(0, root)
    import carray
sys.path.insert(0, root)    # autograd (pure Python) from the checkout
for pkg in stubs:
    stub = types.ModuleType(pkg)
    stub.__path__ = [root + "/" + pkg.replace(".", "/")]
    sys.modules[pkg] = stub
for name in modules:
    importlib.import_module(name)
print(json.dumps(sorted(n for n, m in sys.modules.items()
                        if n.startswith("autograd") and getattr(m, "__file__", None))))
"""
_PACKAGES = ("autograd", "autograd.ops") + _SUBPACKAGES


def test_every_module_has_a_layer():
    for name in _all_modules():
        _layer_of(name)


@pytest.mark.parametrize("n", range(len(LAYERS)))
def test_a_layer_imports_only_lower_layers(n, tmp_path):
    modules = LAYERS[n]
    # packages of this layer and above load as empty stand-ins unless asked for
    stubs = [p for p in _PACKAGES if _layer_of(p) >= n and p not in modules]
    run = subprocess.run([sys.executable, "-c", _PROBE, ROOT, json.dumps(modules),
                          json.dumps(stubs)],
                         capture_output=True, text=True, check=False,
                         cwd=tmp_path)  # (not tests/, whose carray/ folder would shadow carray)
    assert run.returncode == 0, run.stderr
    loaded = json.loads(run.stdout)
    assert set(modules) <= set(loaded)
    higher = [m for m in loaded if _layer_of(m) > n]
    assert not higher, f"importing layer {n} {modules} loads higher layers: {higher}"


def _parse(name):
    path = os.path.join(ROOT, *name.split("."))
    path = os.path.join(path, "__init__.py") if os.path.isdir(path) else path + ".py"
    with open(path, encoding="utf-8") as f:
        return ast.parse(f.read(), path)


def _is_project(module):
    return module is not None and module.split(".")[0] in ("autograd", "carray")


# (module, function) pairs allowed one call-time project import, with why
_CALL_TIME_IMPORTS = {
    ("autograd.tensor", "backward"),  # the engine is a layer above Tensor (torch/_tensor.py)
}


def test_no_project_import_inside_a_function():
    found = []
    for name in _all_modules():
        for fn in ast.walk(_parse(name)):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom) and node.level == 0:
                    mods = [node.module]
                elif isinstance(node, ast.Import):
                    mods = [a.name for a in node.names]
                else:
                    continue
                if any(_is_project(m) for m in mods) and (name, fn.name) not in \
                        _CALL_TIME_IMPORTS:
                    found.append(f"{name}.{fn.name} imports {mods}")
    assert not found


def test_no_module_sets_attributes_of_another():
    """No `other_module.x = ...` at module level (the injection that hid the import circle)."""
    found = []
    for name in _all_modules():
        tree = _parse(name)
        imported = set()
        for node in tree.body:
            if isinstance(node, ast.Import):
                imported |= {(a.asname or a.name).split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and _is_project(node.module):
                for a in node.names:
                    full = f"{node.module}.{a.name}"
                    if full in _all_modules():  # `from autograd import engine`: a module
                        imported.add(a.asname or a.name)
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            for t in targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and \
                        t.value.id in imported:
                    found.append(f"{name} sets {t.value.id}.{t.attr}")
    assert not found


def test_tensor_pyi_lists_every_method():
    """autograd/tensor.pyi names every public and operator method of Tensor, and no other."""
    import autograd  # noqa: F401  (sets the op methods)
    from autograd.ops.tensor_methods import METHODS
    from autograd.tensor import Tensor

    stub = ast.parse(open(os.path.join(PKG, "tensor.pyi"), encoding="utf-8").read())
    cls = next(n for n in stub.body if isinstance(n, ast.ClassDef) and n.name == "Tensor")
    listed = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
    listed |= {n.target.id for n in cls.body if isinstance(n, ast.AnnAssign)}
    real = {k for k in vars(Tensor) if not k.startswith("_") or k.startswith("__")}
    real -= {"__module__", "__dict__", "__weakref__", "__doc__", "__hash__", "__firstlineno__",
             "__array_priority__", "__static_attributes__"}
    assert set(METHODS) <= listed
    assert real == listed - {"array"}       # (an instance attribute, not on the class)


def test_test_file_names_are_unique_across_the_test_folders():
    """tests/carray and tests/autograd are collected as rootdir-relative modules: two test files
    with one basename outside a package (a folder with __init__.py) cannot both be collected in
    one `pytest tests` run."""
    import collections
    import pathlib
    root = pathlib.Path(__file__).resolve().parent.parent
    seen = collections.defaultdict(list)
    for path in root.rglob("test_*.py"):
        if not (path.parent / "__init__.py").exists():
            seen[path.name].append(str(path.relative_to(root)))
    clashes = {name: paths for name, paths in seen.items() if len(paths) > 1}
    assert not clashes, f"test files sharing a basename: {clashes}"

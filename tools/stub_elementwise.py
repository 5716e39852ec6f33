"""Rewrite the op-table parts of the stubs from carray.ops._optable after a row was added
(tests/carray/test_stubs.py says when): carray/ops/_ufunc.pyi's __all__ and elementwise
functions, and the enum members in carray/ops/_optable.pyi. Run from the repository root with
carray built in place:
    PYTHONPATH=. python tools/stub_elementwise.py
"""

import os
import textwrap

from carray.ops import _optable, _ufunc

OPS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                       "carray", "ops")
STUB = os.path.join(OPS_DIR, "_ufunc.pyi")
TABLE_STUB = os.path.join(OPS_DIR, "_optable.pyi")
UNARY = "def {}(x: _ArrayLike, out: Array | None = None) -> Array: ..."
BINARY = "def {}(x1: _ArrayLike, x2: _ArrayLike, out: Array | None = None) -> Array: ..."
SECTIONS = [
    (_optable.Kind.UNARY, "unary: x -> y of the same shape", UNARY),
    (_optable.Kind.PREDICATE, "predicates: x -> bool", UNARY),
    (_optable.Kind.BINARY, "binary: (x1, x2) -> y, broadcasting", BINARY),
    (_optable.Kind.COMPARE, "comparisons: (x1, x2) -> bool, broadcasting", BINARY),
]
START = "# fmt: off\n__all__ = ["
FUNCTIONS = "# == elementwise functions"
END = "# == selection and clipping"


def render_all():
    names = ", ".join(f'"{n}"' for n in _ufunc.__all__)
    body = textwrap.fill(names, width=95, initial_indent="    ", subsequent_indent="    ")
    return f'{START}  # noqa: RUF022 (the runtime\'s order)\n{body},\n]\n# fmt: on\n'


def render_functions():
    out = [f"{FUNCTIONS} (unary ones take (x, out=None), binary ones (x1, x2, out=None)) "
           + "=" * 7 + "\n"]
    for kind, title, template in SECTIONS:
        out.append(f"\n# -- {title} " + "-" * (91 - len(title)) + "\n")
        for op in _optable.of_kind(kind):
            for name in (op.name,) + op.aliases:
                out.append(template.format(name) + "\n")
    return "".join(out) + "\n"


def rewrite_enums():
    """Each `class X(IntEnum):` block of _optable.pyi gets the runtime enum's members."""
    with open(TABLE_STUB) as f:
        lines = f.read().split("\n")
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        i += 1
        if line.startswith("class ") and "(IntEnum)" in line:
            enum = getattr(_optable, line.split()[1].split("(")[0])
            out.extend(f"    {m.name} = {int(m)}" for m in enum)
            while i < len(lines) and lines[i].startswith("    "):
                i += 1
    with open(TABLE_STUB, "w") as f:
        f.write("\n".join(out))


def main():
    with open(STUB) as f:
        text = f.read()
    a, f_, e = text.index(START), text.index(FUNCTIONS), text.index(END)
    end_all = text.index("# fmt: on\n", a) + len("# fmt: on\n")
    text = text[:a] + render_all() + text[end_all:f_] + render_functions() + text[e:]
    with open(STUB, "w") as f:
        f.write(text)
    rewrite_enums()


if __name__ == "__main__":
    main()

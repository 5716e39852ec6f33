"""repr of a Tensor, laid out as PyTorch's torch/_tensor_str.py lays it out.

    tensor([[ 0.7362, -1.1512],
            [ 2.0000,  1.0000]], dtype=autograd.float64, grad_fn=<MulBackward0>)

The values are read to the host once (only the printed edges of a summarised tensor), as
Python numbers; one _Formatter looks at every printed value and picks the mode (int_mode
"1.", fixed "1.2346" or scientific "1.2346e+08") and the common width, then the nested
brackets are written line by line. set_printoptions changes the module-wide options.
"""

import math
from contextlib import contextmanager

from autograd._defaults import get_default_dtype, is_floating

# ------------------------------------------------------------------------------------------------
# Options
# ------------------------------------------------------------------------------------------------

_DEFAULTS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80,
             "sci_mode": None}
_PROFILES = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}
_OPTS = dict(_DEFAULTS)


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Set how tensors print, as torch.set_printoptions: precision (digits after the point,
    default 4), threshold (more elements than this are summarised with "...", default 1000),
    edgeitems (items kept at each end of a summarised dimension, default 3), linewidth
    (characters per line, default 80), profile ("default", "short" or "full") and sci_mode
    (True/False forces scientific notation on/off; None, the default, lets each tensor choose).
    Options left None keep their value, except sci_mode, which is always set. ValueError for
    an unknown profile."""
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions(): unknown profile {profile!r}, expected one of "
                             f"{', '.join(_PROFILES)}")
        _OPTS.update(_PROFILES[profile])
    for key, value in (("precision", precision), ("threshold", threshold),
                       ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            _OPTS[key] = value
    _OPTS["sci_mode"] = sci_mode


def get_printoptions():
    """The current print options, as a dict that set_printoptions(**options) accepts."""
    return dict(_OPTS)


@contextmanager
def printoptions(**kwargs):
    """Context manager: set_printoptions(**kwargs) inside the block, the old options after."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


# ------------------------------------------------------------------------------------------------
# Reading the values
# ------------------------------------------------------------------------------------------------

class _Dots:
    """Stands where a summarised dimension leaves items out."""


_DOTS = _Dots()


def _host_values(arr, summarize, edge):
    """arr's values as nested Python lists; when summarize, each dimension longer than
    2 * edge keeps only its first and last edge items, with _DOTS between them."""
    if arr.ndim == 0 or not summarize:
        return arr.tolist()
    n = arr.shape[0]
    if n > 2 * edge:
        if arr.ndim == 1:
            return arr[:edge].tolist() + [_DOTS] + arr[n - edge:].tolist()
        rows = list(range(edge)) + [None] + list(range(n - edge, n))
    elif arr.ndim == 1:
        return arr.tolist()
    else:
        rows = range(n)
    return [_DOTS if i is None else _host_values(arr[i], summarize, edge) for i in rows]


def _leaves(values, out):
    """Append the numbers of nested lists values (no _DOTS) to out; out."""
    stack = [values]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(reversed(item))
        elif item is not _DOTS:
            out.append(item)
    return out


# ------------------------------------------------------------------------------------------------
# Formatting one value
# ------------------------------------------------------------------------------------------------

class _Formatter:
    """Picks one layout for all the values of a tensor: ints and bools as str(); floats in
    int_mode ("3.") when every finite value is an integer, in sci_mode ("1.0000e+08") when the
    nonzero finite magnitudes span more than 1000x, pass 1e8 or fall below 1e-4, otherwise
    fixed with `precision` digits. Only nonzero finite values decide the mode and the width
    (as in PyTorch, so "nan", "inf" and "0." are not counted)."""

    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        precision = _OPTS["precision"]
        if not floating:
            for v in values:
                self.max_width = max(self.max_width, len(str(v)))
            return
        vals = [v for v in values if v != 0 and math.isfinite(v)]
        if not vals:
            return
        mags = [abs(v) for v in vals]
        lo, hi = min(mags), max(mags)
        self.int_mode = all(v == math.ceil(v) for v in vals)
        if _OPTS["sci_mode"] is None:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        else:
            self.sci_mode = _OPTS["sci_mode"]
        if self.sci_mode:
            texts = [f"{v:.{precision}e}" for v in vals]
        elif self.int_mode:
            texts = [f"{v:.0f}." for v in vals]  # the "." marks a float tensor
        else:
            texts = [f"{v:.{precision}f}" for v in vals]
        self.max_width = max(len(s) for s in texts)

    def format(self, v):
        """v's text, right-aligned to the common width."""
        if not self.floating:
            text = str(v)
        elif self.sci_mode:
            text = f"{v:.{_OPTS['precision']}e}"
        elif self.int_mode:
            text = f"{v:.0f}"
            if math.isfinite(v):
                text += "."
        else:
            text = f"{v:.{_OPTS['precision']}f}"
        return text.rjust(self.max_width)


# ------------------------------------------------------------------------------------------------
# Laying out the brackets
# ------------------------------------------------------------------------------------------------

def _vector_str(values, indent, fmt):
    """One dimension: elements separated by ", ", wrapped to linewidth, continuation lines
    indented under the first element."""
    per_line = max(1, (_OPTS["linewidth"] - indent) // (fmt.max_width + 2))
    data = [" ..." if v is _DOTS else fmt.format(v) for v in values]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(values, ndim, indent, fmt):
    """ndim >= 1 nested lists: rows joined by ",", dim - 1 newlines and the next indent."""
    if ndim == 1:
        return _vector_str(values, indent, fmt)
    rows = ["..." if v is _DOTS else _nested_str(v, ndim - 1, indent + 1, fmt) for v in values]
    return "[" + ("," + "\n" * (ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _add_suffixes(text, suffixes, indent):
    """text + ", suffix" for each suffix, moving a suffix to its own line (indented) when it
    would pass linewidth. The +1 in the length of the last line is PyTorch's and kept."""
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > _OPTS["linewidth"]:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def format_tensor(t):
    """PyTorch-style text of tensor t (its values read to the host once):
    tensor(<values>[, device='gpu'][, size=...][, dtype=autograd.X][, grad_fn=<...> |
    requires_grad=True])."""
    prefix = "tensor("
    indent = len(prefix)
    arr = t.array
    suffixes = []
    if arr.device != "cpu":
        suffixes.append(f"device='{arr.device}'")
        arr = arr.to("cpu")
    dtype = arr.dtype
    default_dtype = get_default_dtype()
    edge = _OPTS["edgeitems"]
    if arr.size == 0:
        # Nothing shows the dtype of an empty tensor, so only the default float one is omitted.
        if arr.ndim != 1:
            suffixes.append(f"size={tuple(arr.shape)}")
        if dtype != default_dtype:
            suffixes.append(f"dtype=autograd.{dtype.name}")
        body = "[]"
    else:
        if not edge:
            suffixes.append(f"size={tuple(arr.shape)}")
        if dtype.name not in (default_dtype.name, "int64", "bool"):
            suffixes.append(f"dtype=autograd.{dtype.name}")
        summarize = arr.size > _OPTS["threshold"]
        values = _host_values(arr, summarize, edge)
        fmt = _Formatter(_leaves(values, []), is_floating(dtype))
        if arr.ndim == 0:
            body = fmt.format(values)
        elif summarize and not edge:
            body = "[...]"
        else:
            body = _nested_str(values, arr.ndim, indent, fmt)
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._rg:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)

"""NumPy 2's `repr`/`str` of arrays, for carray.Array (pure Python; never imports NumPy).

`array_repr(a)` and `array_str(a)` follow `numpy/_core/arrayprint.py` with its default print
options (precision=8, floatmode='maxprec', threshold=1000, edgeitems=3, linewidth=75,
legacy=False), with one change: `dtype=` is left out for carray's default dtypes (float32, int64,
bool) instead of NumPy's (float64, int64, bool).

Floats print with the fewest digits that read back as the same value in their own dtype (float32
values use float32's shortest digits), at most 8 after the point (positional) or in the mantissa
(scientific). Scientific notation is used when the largest finite nonzero |x| is >= 1e6 (float32)
or 1e8 (float64), the smallest is < 1e-4, or their ratio is > 1000, as NumPy 2 does.
"""

import math
import struct

__all__ = ["array_repr", "array_str"]

_LINEWIDTH = 75
_THRESHOLD = 1000  # summarise (with "...") arrays with more elements than this
_EDGEITEMS = 3  # items kept at each end of a summarised axis
_PRECISION = 8  # most digits after the point (or in a scientific mantissa)
_IMPLIED_DTYPES = ("float32", "int64", "bool")  # carray's defaults: repr leaves out `dtype=`

_F32 = struct.Struct("<f")


def _to_f32(x):
    """x rounded to float32 (returned as a Python float); +-inf past float32's range."""
    try:
        return _F32.unpack(_F32.pack(x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


_F16 = struct.Struct("<e")


def _to_f16(x):
    """x rounded to float16 (a Python float); +-inf past float16's range."""
    try:
        return _F16.unpack(_F16.pack(x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def _to_bf16(x):
    """x rounded to bfloat16 (8 significant bits, ties to even); +-inf past its range."""
    if x == 0 or not math.isfinite(x):
        return x
    e = max(math.frexp(x)[1], -125)
    r = math.ldexp(round(math.ldexp(x, 8 - e)), e - 8)
    return r if abs(r) < 2.0**128 else math.copysign(math.inf, x)


class _Small:
    """A float type narrower than a double: its rounding, NumPy's scientific-notation cutoff
    (10**precision) and 1e-4 in it, and its smallest normal."""

    def __init__(self, rnd, cutoff, tiny):
        self.round, self.cutoff, self.small, self.tiny = rnd, cutoff, rnd(1e-4), tiny


_SMALL = {"float32": _Small(_to_f32, 1e6, 2.0**-126), "float16": _Small(_to_f16, 1e3, 2.0**-14),
          "bfloat16": _Small(_to_bf16, 1e2, 2.0**-126)}


# -- shortest round-trip digits ------------------------------------------------------------------

def _split_digits(s):
    """'1.25e-03' / '0.0001' / '123.0' -> (significant digits, decimal exponent of the first)."""
    mant, _, exp = s.partition("e")
    ip, _, fp = mant.partition(".")
    allds = ip + fp
    digits = allds.lstrip("0")
    if not digits:
        return "0", 0
    lead = len(allds) - len(digits)
    return digits.rstrip("0") or "0", (int(exp) if exp else 0) + len(ip) - 1 - lead


def _shortest(x, f32):
    """Shortest decimal digits of finite |x| that read back as x (in the narrow float type `f32`,
    a _Small, when given).

    Returns (digits, exponent): |x| ~= 0.d1d2d3... * 10**(exponent + 1), no trailing zeros.
    """
    x = abs(x)
    if x == 0:
        return "0", 0
    if f32 is True:
        f32 = _SMALL["float32"]
    if not f32:
        return _split_digits(repr(x))  # Python's repr is the shortest round-trip for doubles
    for p in range(1, 10):  # 9 significant digits always round-trip a float32
        s = "%.*e" % (p - 1, x)
        y = float(s)
        if f32.round(y) == x:
            return _split_digits(s)
        if y < x and math.frexp(x)[0] == 0.5 and x >= f32.tiny:
            # At a power of two the gap below is half the gap above: the nearest p-digit decimal
            # may fall outside the lower half-gap while the next one up still reads back as x.
            digits, e = _split_digits(s)
            up = "%de%d" % (int(digits.ljust(p, "0")) + 1, e - p + 1)
            if f32.round(float(up)) == x:
                return _split_digits("%.*e" % (p - 1, float(up)))
    return _split_digits("%.8e" % x)


def _positional_parts(digits, exp):
    """Integer and fraction digit strings of 0.d1d2... * 10**(exp + 1)."""
    if exp >= 0:
        return digits[:exp + 1].ljust(exp + 1, "0"), digits[exp + 1:]
    if digits == "0":
        return "0", ""
    return "0", "0" * (-exp - 1) + digits


def _negative(x):
    return x < 0 or (x == 0 and math.copysign(1.0, x) < 0)


# -- element formatters --------------------------------------------------------------------------

class _FloatFormat:
    """NumPy's FloatingFormat for floatmode='maxprec', precision=8, sign='-'."""

    def __init__(self, values, f32, plus=False):
        self.f32 = f32
        self.plus = plus            # sign='+' (the imaginary parts of complex numbers)
        finite = [v for v in values if math.isfinite(v)]
        nonzero = [abs(v) for v in finite if v != 0]
        self.exp_format = False
        if nonzero:
            max_val, min_val = max(nonzero), min(nonzero)
            ratio = max_val / min_val
            if f32:  # NumPy computes these in the dtype: 1e6 = 10**finfo(float32).precision
                cutoff, small, ratio = f32.cutoff, f32.small, f32.round(ratio)
            else:
                cutoff, small = 1e8, 1e-4
            self.exp_format = max_val >= cutoff or min_val < small or ratio > 1000.0

        if not finite:
            self.pad_left = self.pad_right = 0
            self.precision, self.exp_size = _PRECISION, -1
        elif self.exp_format:
            parts = [self._sci_first(v) for v in finite]
            self.pad_left = max(len(ip) for ip, _, _ in parts)
            self.precision = max(len(fp) for _, fp, _ in parts)
            self.exp_size = max(max(len(str(abs(e))) for _, _, e in parts), 2)
            self.pad_right = self.exp_size + 2 + self.precision  # only used to pad nan/inf
        else:
            parts = [self._pos_first(v) for v in finite]
            self.pad_left = max(len(ip) for ip, _ in parts)
            self.pad_right = max(len(fp) for _, fp in parts)
            self.exp_size = -1

        if len(finite) != len(values):  # room for 'nan', 'inf', '-inf'
            neginf = plus or any(v == -math.inf for v in values)
            offset = self.pad_right + 1
            self.pad_left = max(self.pad_left, 3 - offset, 3 + neginf - offset)

    def _pos_first(self, x):
        """Integer part (with sign) and fraction digits: shortest, cut at 8 fractional digits."""
        digits, exp = _shortest(x, self.f32)
        if len(digits) - 1 - exp > _PRECISION:
            ip, _, fp = ("%.*f" % (_PRECISION, abs(x))).partition(".")
            fp = fp.rstrip("0")
        else:
            ip, fp = _positional_parts(digits, exp)
        return self._sign(x) + ip, fp

    def _sign(self, x):
        return "-" if _negative(x) else ("+" if self.plus else "")

    def _sci_first(self, x):
        """Mantissa integer digit (with sign), mantissa fraction digits, exponent."""
        digits, exp = _shortest(x, self.f32)
        if len(digits) - 1 > _PRECISION:
            digits, exp = _split_digits("%.*e" % (_PRECISION, abs(x)))
        return self._sign(x) + digits[0], digits[1:], exp

    def __call__(self, x):
        if not math.isfinite(x):
            word = "nan" if math.isnan(x) else ("-inf" if x < 0 else "inf")
            if self.plus and word[0] != "-":
                word = "+" + word
            return word.rjust(self.pad_left + self.pad_right + 1)
        if self.exp_format:
            ip, fp, exp = self._sci_first(x)
            if len(fp) < self.precision:
                # NumPy's min_digits: more digits of the exact value, correctly rounded
                mant, _, e = ("%.*e" % (self.precision, abs(x))).partition("e")
                ip, _, fp = mant.partition(".")
                ip, exp = self._sign(x) + ip, int(e)
            return "%s.%se%s%s" % (ip.rjust(self.pad_left), fp, "-" if exp < 0 else "+",
                                   str(abs(exp)).zfill(self.exp_size))
        ip, fp = self._pos_first(x)
        return ip.rjust(self.pad_left) + "." + fp.ljust(self.pad_right)


class _IntFormat:
    def __init__(self, values):
        self.width = max(len(str(max(values))), len(str(min(values))))

    def __call__(self, x):
        return str(x).rjust(self.width)


class _BoolFormat:
    def __init__(self, zero_d):
        # " True" lines up with "False", except in 0-d arrays
        self.true = "True" if zero_d else " True"

    def __call__(self, x):
        return self.true if x else "False"


class _ComplexFormat:
    """NumPy's ComplexFloatingFormat: the real parts as floats, the imaginary ones with a sign,
    'j' before the imaginary part's padding."""

    def __init__(self, values, f32):
        small = _SMALL["float32"] if f32 else None     # complex64's parts print as float32
        self.real = _FloatFormat([v.real for v in values], small)
        self.imag = _FloatFormat([v.imag for v in values], small, plus=True)

    def __call__(self, x):
        i = self.imag(x.imag)
        sp = len(i.rstrip())
        return self.real(x.real) + i[:sp] + "j" + i[sp:]


def _complex_scalar_str(x, f32):
    """str of a NumPy complex scalar: '(1.5+2j)', the parts as their float type prints them."""
    def part(v):
        if not math.isfinite(v):
            return repr(v)
        t = _float32_scalar_str(v) if f32 else repr(v)
        return t[:-2] if t.endswith(".0") else t
    if x.real == 0 and not _negative(x.real):
        return part(x.imag) + "j"
    im = part(x.imag)
    return "(" + part(x.real) + ("" if im[0] == "-" else "+") + im + "j)"


def _formatter(values, kind, zero_d):
    if kind in ("complex64", "complex128"):
        return _ComplexFormat(values, kind == "complex64")
    if kind == "bool":
        return _BoolFormat(zero_d)
    if kind == "int":
        return _IntFormat(values)
    return _FloatFormat(values, _SMALL.get(kind))


def _kind(name):
    if name == "bool":
        return "bool"
    if name.startswith(("int", "uint")):
        return "int"
    return name  # "float32" / "float64"


def _float32_scalar_str(x, kind="float32"):
    """str(numpy.float32(x)) (or of float16, bfloat16: `kind`): shortest digits; positional for
    1e-4 <= |x| < 1e6 (float16: 1e3), else scientific."""
    if not math.isfinite(x):
        return repr(x)
    f32 = _SMALL[kind]
    digits, exp = _shortest(x, f32)
    sign = "-" if _negative(x) else ""
    if x == 0 or 1e-4 <= abs(x) < f32.cutoff:
        ip, fp = _positional_parts(digits, exp)
        return "%s%s.%s" % (sign, ip, fp or "0")
    mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return "%s%se%s%02d" % (sign, mant, "-" if exp < 0 else "+", abs(exp))


# -- reading the elements ------------------------------------------------------------------------

def _corners(a, edge, cut_from):
    """Nested lists of a's elements, keeping only `edge` items at each end of long axes.

    cut_from[d] is True when some axis >= d is longer than 2 * edge (else the rest is read whole).
    """
    if not cut_from[0]:
        return a.tolist()
    n = a.shape[0]
    if a.ndim == 1:  # cut_from[0] says this axis is long
        return a[:edge].tolist() + a[n - edge:].tolist()
    keep = list(range(edge)) + list(range(n - edge, n)) if n > 2 * edge else range(n)
    return [_corners(a[i], edge, cut_from[1:]) for i in keep]


def _flatten(nested, ndim):
    items = nested
    for _ in range(ndim - 1):
        items = [y for x in items for y in x]
    return items


# -- layout (numpy's _formatArray) ---------------------------------------------------------------

def _extend_line(out, line, word, line_width, next_line_prefix):
    # wrap before `word` unless the line holds only the indent (wrapping would not help)
    if len(line) + len(word) > line_width and len(line) > len(next_line_prefix):
        out.append(line.rstrip() + "\n")
        line = next_line_prefix
    return line + word


def _format_array(data, shape, fmt, line_width, next_line_prefix, separator, summarize):
    ndim = len(shape)
    edge = _EDGEITEMS

    def recurse(node, axis, hanging_indent, curr_width):
        if axis == ndim:
            return fmt(node)
        axes_left = ndim - axis
        # one more space to line up with the "[" added, and one less column for the "]"
        next_indent = hanging_indent + " "
        next_width = curr_width - 1
        a_len = shape[axis]
        show_summary = summarize and 2 * edge < a_len
        leading, trailing = (edge, edge) if show_summary else (0, a_len)
        out = []
        if axes_left == 1:
            elem_width = curr_width - max(len(separator.rstrip()), 1)
            line = hanging_indent
            for i in range(leading):
                word = recurse(node[i], axis + 1, next_indent, next_width)
                line = _extend_line(out, line, word, elem_width, hanging_indent) + separator
            if show_summary:
                line = _extend_line(out, line, "...", elem_width, hanging_indent) + separator
            for i in range(trailing, 1, -1):
                word = recurse(node[-i], axis + 1, next_indent, next_width)
                line = _extend_line(out, line, word, elem_width, hanging_indent) + separator
            word = recurse(node[-1], axis + 1, next_indent, next_width)
            out.append(_extend_line(out, line, word, elem_width, hanging_indent))
        else:
            line_sep = separator.rstrip() + "\n" * (axes_left - 1)
            for i in range(leading):
                out += (hanging_indent, recurse(node[i], axis + 1, next_indent, next_width),
                        line_sep)
            if show_summary:
                out += (hanging_indent, "...", line_sep)
            for i in range(trailing, 1, -1):
                out += (hanging_indent, recurse(node[-i], axis + 1, next_indent, next_width),
                        line_sep)
            out += (hanging_indent, recurse(node[-1], axis + 1, next_indent, next_width))
        s = "".join(out)
        return "[" + s[len(hanging_indent):] + "]"

    return recurse(data, 0, next_line_prefix, line_width)


def _array2string(a, kind, shape, size, separator, prefix, line_width):
    if size == 0:
        return "[]"
    summarize = size > _THRESHOLD
    if summarize:
        cut_from = [any(n > 2 * _EDGEITEMS for n in shape[d:]) for d in range(len(shape))]
        data = _corners(a, _EDGEITEMS, cut_from)
    else:
        data = a.tolist()
    values = [data] if not shape else _flatten(data, len(shape))
    fmt = _formatter(values, kind, not shape)
    return _format_array(data, shape, fmt, line_width, " " * (len(prefix) + 1), separator,
                         summarize)


def _prepare(a):
    if a.device != "cpu":
        a = a.to("cpu")
    name = getattr(a.dtype, "name", None) or str(a.dtype)
    shape = tuple(a.shape)
    size = 1
    for n in shape:
        size *= n
    return a, name, shape, size


# -- entry points --------------------------------------------------------------------------------

def array_repr(a):
    """repr of an Array as NumPy 2 writes it, with `dtype=` left out for float32, int64 and bool."""
    a, name, shape, size = _prepare(a)
    prefix = "array("
    lst = _array2string(a, _kind(name), shape, size, ", ", prefix, _LINEWIDTH - len(")"))
    extras = []
    if (size == 0 and shape != (0,)) or size > _THRESHOLD:
        extras.append(f"shape={shape}")
    if size == 0 or name not in _IMPLIED_DTYPES:
        extras.append(f"dtype={name}")
    if not extras:
        return prefix + lst + ")"
    arr_str = prefix + lst + ","
    extra_str = ", ".join(extras) + ")"
    # put the extras on a new line when they would push the last line past the line width
    last_line_len = len(arr_str) - (arr_str.rfind("\n") + 1)
    spacer = " "
    if last_line_len + len(extra_str) + 1 > _LINEWIDTH:
        spacer = "\n" + " " * len(prefix)
    return arr_str + spacer + extra_str


def array_str(a):
    """str of an Array as NumPy 2 writes it: the scalar's str for 0-d, else "[1. 2.]" style."""
    a, name, shape, size = _prepare(a)
    kind = _kind(name)
    if not shape:
        x = a.tolist()
        if kind in ("complex64", "complex128"):
            return _complex_scalar_str(x, kind == "complex64")
        return _float32_scalar_str(x, kind) if kind in _SMALL else str(x)
    return _array2string(a, kind, shape, size, " ", "", _LINEWIDTH)

"""NumPy's product functions at carray's top level: dot, vdot, inner, outer, kron, cross, einsum,
trace and diagonal (NumPy's signatures, results, dtypes and errors), composed of carray's
device ops, so they run where their operands live (mixed devices raise).

Contractions of two operands go through carray.matmul (batched: the shared kept axes become its
batch); einsum contracts its operands pairwise from the left, summing out each index as soon as
no later operand or the output needs it. diagonal (and einsum's repeated indices) index with
arange pairs, so they return copies where NumPy returns read-only views.
"""

import math
import operator

import carray

__all__ = ["cross", "diagonal", "dot", "einsum", "inner", "kron", "outer", "trace", "vdot"]


def _asarray(x):
    return x if isinstance(x, carray.Array) else carray.asarray(x)


def _operands(name, *xs):
    xs = [_asarray(x) for x in xs]
    devices = {x.device for x in xs}
    if len(devices) > 1:
        raise carray.DeviceMismatchError(f"{name}: the operands are on {sorted(devices)}; move "
                                         f"them to one device with .to()")
    return xs


def _sum(x, axes, dt):
    """sum over axes in dt (bool: any, the or of the ands, as NumPy's products)."""
    if not axes:
        return x
    if dt == carray.bool_:
        return carray.any(x, axis=tuple(axes))
    return carray.sum(x, axis=tuple(axes), dtype=dt)


def _shape_str(shape):
    return "(" + ",".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def _not_aligned(a, b, da, db):
    return ValueError(f"shapes {_shape_str(a.shape)} and {_shape_str(b.shape)} not aligned: "
                      f"{a.shape[da]} (dim {da}) != {b.shape[db]} (dim {db})")


def _contract(a, b, dt):
    """sum_k a[..., m, k] * b[..., k, n] for a (..., M, K) and b (..., K, N) by matmul in dt."""
    return carray.matmul(a.astype(dt, copy=False), b.astype(dt, copy=False))


def dot(a, b, out=None):
    """NumPy's dot: a * b when either is 0-d, the inner product of two 1-d arrays, the matrix
    product of 2-d ones, else the sum over a's last axis and b's second-to-last (b's only one
    when 1-d), the result's shape a.shape[:-1] + b.shape[:-2] + b.shape[-1:]; written to out
    (an array of that shape) when given. ValueError ('shapes ... not aligned') when those sizes
    differ, or for an out of another shape."""
    r = _dot(a, b)
    if out is None:
        return r
    if not isinstance(out, carray.Array) or tuple(out.shape) != tuple(r.shape):
        raise ValueError(f"dot: out must be an array of the result's shape {tuple(r.shape)} "
                         f"(got {getattr(out, 'shape', type(out).__name__)})")
    out[...] = r
    return out


def _dot(a, b):
    a, b = _operands("dot", a, b)
    if a.ndim == 0 or b.ndim == 0:
        return carray.multiply(a, b)
    dt = carray.result_type(a.dtype, b.dtype)
    db = 0 if b.ndim == 1 else b.ndim - 2
    if a.shape[-1] != b.shape[db]:
        raise _not_aligned(a, b, a.ndim - 1, db)
    if b.ndim <= 2:
        return _contract(a, b, dt)
    # (..., k) with (..., k, n): every row of a against every matrix of b
    k = a.shape[-1]
    a2 = a.reshape((math.prod(a.shape[:-1]), k))
    bm = carray.moveaxis(b, -2, 0)                               # (k, ..., n)
    out = _contract(a2, bm.reshape((k, math.prod(bm.shape[1:]))), dt)
    return out.reshape(a.shape[:-1] + b.shape[:-2] + b.shape[-1:])


def vdot(a, b, /):
    """The dot product of a and b flattened, a conjugated first (complex). ValueError when their
    sizes differ."""
    a, b = _operands("vdot", a, b)
    if a.size != b.size:
        raise ValueError(f"vdot: a has {a.size} elements and b {b.size}; they must have the "
                         f"same number")
    dt = carray.result_type(a.dtype, b.dtype)
    if dt.kind == "c":
        a = carray.conj(a)
    return _contract(a.reshape((1, -1)), b.reshape((-1, 1)), dt)[0, 0]


def inner(a, b, /):
    """The sum of products over the last axes of a and b: shape a.shape[:-1] + b.shape[:-1]
    (a * b when either is 0-d). ValueError when the last sizes differ."""
    a, b = _operands("inner", a, b)
    if a.ndim == 0 or b.ndim == 0:
        return carray.multiply(a, b)
    if a.shape[-1] != b.shape[-1]:       # NumPy's message names b with its last axis first
        raise _not_aligned(a, carray.moveaxis(b, -1, 0), a.ndim - 1, 0)
    dt = carray.result_type(a.dtype, b.dtype)
    k = a.shape[-1]
    out = _contract(a.reshape((math.prod(a.shape[:-1]), k)),
                    b.reshape((math.prod(b.shape[:-1]), k)).mT, dt)
    return out.reshape(a.shape[:-1] + b.shape[:-1])


def outer(a, b, /):
    """out[i, j] = a.ravel()[i] * b.ravel()[j] (NumPy's outer flattens its inputs)."""
    a, b = _operands("outer", a, b)
    return carray.multiply(a.reshape((-1, 1)), b.reshape((1, -1)))


def kron(a, b, /):
    """The Kronecker product: blocks a[i, j, ...] * b, the shapes padded with leading ones to
    the same number of dims."""
    a, b = _operands("kron", a, b)
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + tuple(a.shape)
    sb = (1,) * (nd - b.ndim) + tuple(b.shape)
    ea = a.reshape(tuple(x for s in sa for x in (s, 1)))
    eb = b.reshape(tuple(x for s in sb for x in (1, s)))
    return carray.multiply(ea, eb).reshape(tuple(p * q for p, q in zip(sa, sb)))


def cross(a, b, /, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of the 3-vectors along axisa of a and axisb of b, the other axes
    broadcast, the vectors of the result along axisc (axis, if given, sets all three).
    ValueError when a vector size is not 3 (2-vectors too, as NumPy once the deprecation of
    NumPy 2.0 expired, and as the array API's linalg.cross); AxisError for a bad axis."""
    a, b = _operands("cross", a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("cross: At least one array has zero dimension")
    a = carray.moveaxis(a, _axis(axisa, a.ndim, "axisa"), -1)
    b = carray.moveaxis(b, _axis(axisb, b.ndim, "axisb"), -1)
    if a.shape[-1] != 3 or b.shape[-1] != 3:
        raise ValueError(f"Both input arrays must be (arrays of) 3-dimensional vectors, but they "
                         f"are {a.shape[-1]} and {b.shape[-1]} dimensional instead.")
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    x, y, z = carray.broadcast_arrays(a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0)
    out = carray.stack([x, y, z], axis=-1)
    return carray.moveaxis(out, -1, _axis(axisc, out.ndim, "axisc"))


def _axis(ax, nd, name="axis"):
    ax = operator.index(ax)
    if not -nd <= ax < nd:
        raise carray.AxisError(f"{name} {ax} is out of bounds for array of dimension {nd}")
    return ax % nd


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal a[..., i, i + offset] of the 2-d sections over axis1 and axis2, as the last
    axis of the result (the other axes in order); a copy. ValueError for fewer than 2 dims or
    axis1 == axis2."""
    a = _asarray(a)
    if a.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    ax1, ax2 = _axis(axis1, a.ndim, "axis1"), _axis(axis2, a.ndim, "axis2")
    if ax1 == ax2:
        raise ValueError("axis1 and axis2 cannot be the same")
    x = carray.moveaxis(a, (ax1, ax2), (-2, -1))
    m, n = x.shape[-2:]
    offset = operator.index(offset)
    length = max(0, min(m + min(offset, 0), n - max(offset, 0)))
    rows = carray.arange(length, device=a.device) + max(-offset, 0)
    cols = carray.arange(length, device=a.device) + max(offset, 0)
    return x[..., rows, cols]


def trace(a, offset=0, axis1=0, axis2=1, dtype=None):
    """The sum along the diagonals (see diagonal), in dtype (default: sum's, as NumPy's)."""
    return carray.sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


# ---------------------------------------------------------------- einsum

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _parse_term(term, where):
    """A subscripts term -> list of labels (letters, and '...' once)."""
    out, i = [], 0
    while i < len(term):
        c = term[i]
        if term.startswith("...", i):
            if "..." in out:
                raise ValueError(f"einstein sum subscripts string contains more than one "
                                 f"ellipsis in {where}")
            out.append("...")
            i += 3
            continue
        if c == " ":
            i += 1
            continue
        if c not in _LETTERS:
            raise ValueError(f"invalid subscript '{c}' in einstein sum subscripts string, "
                             f"subscripts must be letters")
        out.append(c)
        i += 1
    return out


def _interleaved(args):
    """einsum(op0, sublist0, op1, sublist1, ..., [out]) -> (subscripts, operands)."""
    def term(sub):
        return "".join("..." if s is Ellipsis else _LETTERS[operator.index(s)] for s in sub)
    ops, terms = [], []
    args = list(args)
    while len(args) >= 2:
        ops.append(args.pop(0))
        terms.append(term(args.pop(0)))
    subs = ",".join(terms) + ("->" + term(args[0]) if args else "")
    return subs, ops


def einsum(subscripts, *operands, out=None, dtype=None, order="K", casting="safe",
           optimize=False):
    """Einstein summation as NumPy's: 'ij,jk->ik', implicit output (the indices that appear
    once, in alphabetical order, after the broadcast '...' axes), '...' broadcasting, repeated
    indices within an operand (diagonals; traces when summed), the interleaved form
    einsum(a, [0, 1], b, [1, 2], [0, 2]), out= (an array of the result's shape, written);
    optimize, order and casting are accepted (the contraction order is always left to right).
    ValueError for malformed subscripts, operand counts or dims that do not match."""
    if not isinstance(subscripts, str):
        subscripts, operands = _interleaved((subscripts,) + operands)
    ops = _operands("einsum", *operands)
    if "->" in subscripts:
        lhs, _, rhs = subscripts.partition("->")
        if "->" in rhs or ">" in rhs or "-" in rhs:
            raise ValueError("einstein sum subscripts string includes output subscript "
                             "'-' or '>' where it should not")
    else:
        lhs, rhs = subscripts, None
    terms = lhs.split(",")
    if len(terms) > len(ops):
        raise ValueError("fewer operands provided to einstein sum function than specified in "
                         "the subscripts string")
    if len(terms) < len(ops):
        raise ValueError("more operands provided to einstein sum function than specified in "
                         "the subscripts string")
    labels, ell = [], 0
    for i, (t, x) in enumerate(zip(terms, ops)):
        lab = _parse_term(t, f"operand {i}")
        letters = len(lab) - ("..." in lab)
        if letters > x.ndim or ("..." not in lab and letters != x.ndim):
            raise ValueError(f"einstein sum subscripts string contains too "
                             f"{'many' if letters > x.ndim else 'few'} subscripts for operand "
                             f"{i}")
        if "..." in lab:
            e = x.ndim - letters
            ell = max(ell, e)
            p = lab.index("...")
            lab = lab[:p] + [("...", e, k) for k in range(e)] + lab[p + 1:]
        labels.append(lab)
    # ellipsis axes aligned from the right: ('...', e, k) of an operand with e of them is
    # broadcast axis ell - e + k
    labels = [[("...", ell - lb[1] + lb[2]) if isinstance(lb, tuple) else lb for lb in lab]
              for lab in labels]
    ell_labels = [("...", k) for k in range(ell)]
    counts = {}
    for lab in labels:
        for lb in lab:
            counts[lb] = counts.get(lb, 0) + 1
    if rhs is None:
        output = ell_labels + sorted(c for c, k in counts.items() if isinstance(c, str) and k == 1)
    else:
        out_lab = _parse_term(rhs, "the output")
        seen = set()
        for c in out_lab:
            if c in seen and c != "...":
                raise ValueError(f"einstein sum subscripts string includes output subscript "
                                 f"'{c}' multiple times")
            seen.add(c)
            if c != "..." and c not in counts:
                raise ValueError(f"einstein sum subscripts string included output subscript "
                                 f"'{c}' which never appeared in an input")
        if "..." not in out_lab and ell:
            raise ValueError("output has more dimensions than subscripts given in einstein sum, "
                             "but no '...' ellipsis provided to broadcast the extra dimensions.")
        p = out_lab.index("...") if "..." in out_lab else len(out_lab)
        output = out_lab[:p] + (ell_labels if "..." in out_lab else []) + out_lab[p + 1:]
    dt = carray.result_type(*[x.dtype for x in ops]) if dtype is None else carray.dtype(dtype)
    # repeated labels within an operand: diagonals
    terms = []
    for i, (lab, x) in enumerate(zip(labels, ops)):
        x, lab = _diagonals(x, list(lab), i, len(ops) == 1 and rhs is not None)
        terms.append((x, lab))
    sizes = _sizes(terms, ops)
    x, lab = terms[0]
    x, lab = _reduce(x, lab, set(output) | _labels(terms[1:]), dt)
    for j in range(1, len(terms)):
        y, ylab = terms[j]
        need = set(output) | _labels(terms[j + 1:])
        y, ylab = _reduce(y, ylab, need | set(lab), dt)
        x, lab = _pair(x, lab, y, ylab, need, sizes, dt)
        x, lab = _reduce(x, lab, need, dt)
    x, lab = _reduce(x, lab, set(output), dt)
    missing = [lb for lb in output if lb not in lab]          # ellipsis axes of no operand
    for lb in missing:
        x = carray.expand_dims(x, -1)
        lab = lab + [lb]
    x = carray.permute_dims(x, tuple(lab.index(lb) for lb in output)) if output else x
    shape = tuple(sizes.get(lb, 1) for lb in output)
    if tuple(x.shape) != shape:
        x = carray.broadcast_to(x, shape)
    x = x.astype(dt, copy=False)
    if out is None:
        return x
    if not isinstance(out, carray.Array) or tuple(out.shape) != shape:
        raise ValueError(f"einsum: out must be an array of the result's shape {shape} (got "
                         f"{getattr(out, 'shape', type(out).__name__)})")
    out[...] = x
    return out


def _labels(terms):
    return {lb for _, lab in terms for lb in lab}


def _diagonals(x, lab, i, single):
    """x with the axes of each repeated label replaced by their diagonal (the last axis)."""
    while True:
        dup = next((lb for lb in lab if lab.count(lb) > 1), None)
        if dup is None:
            return x, lab
        p = lab.index(dup)
        q = lab.index(dup, p + 1)
        if x.shape[p] != x.shape[q]:
            where = "single operand" if single else f"operand {i}"
            raise ValueError(f"dimensions in {where} for collapsing index '{dup}' don't match "
                             f"({x.shape[p]} != {x.shape[q]})")
        x = diagonal(x, 0, p, q)
        lab = [lb for k, lb in enumerate(lab) if k not in (p, q)] + [dup]


def _sizes(terms, ops):
    """The size of each label (sizes 1 broadcast); ValueError as NumPy's for a mismatch."""
    sizes = {}
    for x, lab in terms:
        for n, lb in zip(x.shape, lab):
            if sizes.get(lb, 1) == 1:
                sizes[lb] = n
            elif n != 1 and n != sizes[lb]:
                shapes = " ".join(_shape_str(o.shape) for o in ops)
                raise ValueError(f"operands could not be broadcast together with remapped "
                                 f"shapes [original->remapped]: {shapes}")
    return sizes


def _reduce(x, lab, need, dt):
    """x with the axes whose labels are not in need summed out."""
    drop = [k for k, lb in enumerate(lab) if lb not in need]
    if not drop:
        return x, lab
    return _sum(x.astype(dt, copy=False), drop, dt), [lb for lb in lab if lb in need]


def _pair(x, xl, y, yl, need, sizes, dt):
    """The product of x (labels xl) and y (labels yl), summed over the shared labels not in
    need, by one batched matmul: (batch, x-only, shared summed) @ (batch, shared summed,
    y-only)."""
    batch = [lb for lb in xl if lb in yl and lb in need]
    summed = [lb for lb in xl if lb in yl and lb not in need]
    xo = [lb for lb in xl if lb not in yl]
    yo = [lb for lb in yl if lb not in xl]

    def arrange(a, al, order):
        a = carray.permute_dims(a, tuple(al.index(lb) for lb in order))
        return carray.broadcast_to(a, tuple(sizes[lb] if lb in batch or lb in summed
                                            else a.shape[k] for k, lb in enumerate(order)))
    xa = arrange(x, xl, batch + xo + summed)
    ya = arrange(y, yl, batch + summed + yo)
    bs = tuple(sizes[lb] for lb in batch)
    m = math.prod(xa.shape[len(batch):len(batch) + len(xo)])
    n = math.prod(ya.shape[len(batch) + len(summed):])
    k = math.prod(sizes[lb] for lb in summed)
    out = _contract(xa.reshape(bs + (m, k)), ya.reshape(bs + (k, n)), dt)
    shape = bs + xa.shape[len(batch):len(batch) + len(xo)] + ya.shape[len(batch) + len(summed):]
    return out.reshape(shape), batch + xo + yo

"""Contractions and diagonals: einsum, tensordot, diagonal, and cdist's Function.

einsum reduces every equation to diagonals (repeated labels in one operand), sums (labels no
one else needs), and one batched matrix product per pair of operands (permute, reshape, bmm),
so its gradient comes from those ops'.
"""

import carray
from autograd.ops._util import Builtin, norm_dim, reduce_grad, wrap
from autograd.ops.linalg import MatMul
from autograd.ops.shape import Index

__all__ = ["Cdist", "diagonal_out", "einsum_out", "tensordot_out"]


def diagonal_out(x, offset=0, dim1=0, dim2=1):
    """The diagonal of x over dims dim1 and dim2 (offset above the main one when positive),
    as the last dim of the result (a copy: carray has no diagonal view)."""
    nd = x.array.ndim
    d1, d2 = norm_dim(dim1, nd), norm_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    rest = [k for k in range(nd) if k not in (d1, d2)]
    y = x.permute(tuple(rest) + (d1, d2))
    n1, n2 = x.array.shape[d1], x.array.shape[d2]
    if offset >= 0:
        length = max(0, min(n1, n2 - offset))
        r0, c0 = 0, offset
    else:
        length = max(0, min(n1 + offset, n2))
        r0, c0 = -offset, 0
    dev = x.array.device
    rows = carray.arange(r0, r0 + length, dtype=carray.int64, device=dev)
    cols = carray.arange(c0, c0 + length, dtype=carray.int64, device=dev)
    return Index.apply(y, (Ellipsis, rows, cols))


def tensordot_out(a, b, dims=2):
    """Sum of a * b over a's dims dims[0] and b's dims dims[1] (an int n: a's last n, b's first
    n), a's other dims then b's."""
    na, nb = a.array.ndim, b.array.ndim
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(na, nb):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da, db = list(range(na - dims, na)), list(range(dims))
    else:
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
        if len(da) != len(db):
            raise RuntimeError("both dimension lists should have same length")
        da = [norm_dim(d, na) for d in da]
        db = [norm_dim(d, nb) for d in db]
    for i, j in zip(da, db):
        if a.array.shape[i] != b.array.shape[j]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.array.shape[i]} in dim {i} and second has size "
                               f"{b.array.shape[j]} in dim {j}")
    fa = [k for k in range(na) if k not in da]
    fb = [k for k in range(nb) if k not in db]
    k = _prod(a.array.shape[i] for i in da)
    sa = tuple(a.array.shape[i] for i in fa)
    sb = tuple(b.array.shape[i] for i in fb)
    am = a.permute(tuple(fa + da)).reshape(_prod(sa), k)
    bm = b.permute(tuple(db + fb)).reshape(k, _prod(sb))
    return MatMul.apply(am, bm).reshape(sa + sb)


def _prod(xs):
    r = 1
    for x in xs:
        r *= x
    return r


# ---------------------------------------------------------------------------------------------
# einsum
# ---------------------------------------------------------------------------------------------

def _parse(equation, operands):
    """(labels of each operand, output labels, size of each label): letters are labels, an
    ellipsis becomes labels -1, -2, ... (from the right, broadcasting)."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise ValueError("einsum(): more operands were provided than specified in the equation"
                         if len(operands) > len(terms) else
                         "einsum(): fewer operands were provided than specified in the equation")
    labels, sizes, ell_dims = [], {}, 0
    for i, (term, x) in enumerate(zip(terms, operands)):
        nd = x.array.ndim
        parts = term.split("...")
        if len(parts) > 2:
            raise RuntimeError("einsum(): found '.' for operand {i} that is not part of any "
                               "ellipsis")
        for ch in "".join(parts):
            if not ch.isalpha():
                raise RuntimeError(f"einsum(): invalid subscript given at index {eq.index(ch)} "
                                   f"in the equation string, subscripts must be in [a-zA-Z]")
        named = len(parts[0]) + (len(parts[1]) if len(parts) == 2 else 0)
        if (len(parts) == 1 and named != nd) or (len(parts) == 2 and named > nd):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({named}) "
                               f"does not match the number of dimensions ({nd}) for operand "
                               f"{i}" + (" and no ellipsis was given" if len(parts) == 1 else ""))
        if len(parts) == 2:
            k = nd - named
            ell_dims = max(ell_dims, k)
            lab = [ord(c) for c in parts[0]] + [-(k - j) for j in range(k)] + \
                [ord(c) for c in parts[1]]
        else:
            lab = [ord(c) for c in term]
        for ax, lb in enumerate(lab):
            n = x.array.shape[ax]
            old = sizes.get(lb, 1)
            if old != n and old != 1 and n != 1:
                raise RuntimeError(f"einsum(): operands do not broadcast with remapped shapes "
                                   f"(original->remapped): subscript {chr(lb) if lb > 0 else '.'}"
                                   f" has size {n} for operand {i} which does not broadcast "
                                   f"with previously seen size {old}")
            sizes[lb] = max(old, n) if old != 1 else n
        labels.append(lab)
    ell = [-(ell_dims - j) for j in range(ell_dims)]
    if arrow:
        parts = rhs.split("...")
        out = [ord(c) for c in parts[0]] + (ell + [ord(c) for c in parts[1]]
                                            if len(parts) == 2 else [])
        seen = set()
        for lb in out:
            if lb > 0 and (lb in seen or all(lb not in lab for lab in labels)):
                raise RuntimeError(f"einsum(): output subscript {chr(lb)} " +
                                   ("appears more than once in the output" if lb in seen else
                                    "does not appear in the equation for any input operand"))
            seen.add(lb)
    else:
        count = {}
        for lab in labels:
            for lb in lab:
                count[lb] = count.get(lb, 0) + 1
        out = ell + sorted(lb for lb, c in count.items() if lb > 0 and c == 1)
    return labels, out, sizes


def _take_diagonals(x, lab):
    """x with every label repeated within it reduced to its diagonal (one dim per label)."""
    while len(set(lab)) != len(lab):
        for i, lb in enumerate(lab):
            j = lab.index(lb, i + 1) if lab.count(lb) > 1 else -1
            if j >= 0:
                x = diagonal_out(x, 0, i, j)
                lab = [v for k, v in enumerate(lab) if k not in (i, j)] + [lb]
                break
    return x, lab


def _expand_to(x, lab, sizes):
    """x with its size-1 dims broadcast to their label's size."""
    shape = tuple(sizes[lb] for lb in lab)
    return x if x.array.shape == shape else x.expand(shape)


def _contract(a, la, b, lb, keep):
    """a (labels la) times b (labels lb) summed over the labels both have and `keep` lacks:
    one batched matrix product. Returns the result and its labels."""
    batch = [v for v in la if v in lb and v in keep]
    summed = [v for v in la if v in lb and v not in keep]
    only_a = [v for v in la if v not in lb]
    only_b = [v for v in lb if v not in la]
    sa = a.array.shape
    sb = b.array.shape
    size = dict(zip(la, sa))
    size.update(zip(lb, sb))
    pa = a.permute(tuple(la.index(v) for v in batch + only_a + summed))
    pb = b.permute(tuple(lb.index(v) for v in batch + summed + only_b))
    nb, na, ns, nbb = (_prod(size[v] for v in g) for g in (batch, only_a, summed, only_b))
    r = MatMul.apply(pa.reshape(nb, na, ns), pb.reshape(nb, ns, nbb))
    return r.reshape(tuple(size[v] for v in batch + only_a + only_b)), batch + only_a + only_b


def einsum_out(equation, *operands):
    """Einstein summation over the operands as `equation` says (explicit or implicit output,
    ellipsis, repeated labels for diagonals)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    labels, out, sizes = _parse(equation, operands)
    xs = []
    for x, lab in zip(operands, labels):
        x, lab = _take_diagonals(x, list(lab))
        xs.append([_expand_to(x, lab, sizes), lab])
    # sum each operand's labels that no other operand and not the output has
    for i, (x, lab) in enumerate(xs):
        others = set(out).union(*(set(v[1]) for k, v in enumerate(xs) if k != i))
        drop = [k for k, lb in enumerate(lab) if lb not in others]
        if drop:
            xs[i] = [x.sum(tuple(drop)), [lb for lb in lab if lb in others]]
    x, lab = xs[0]
    for i in range(1, len(xs)):
        keep = set(out).union(*(set(v[1]) for v in xs[i + 1:]))
        x, lab = _contract(x, lab, xs[i][0], xs[i][1], keep)
    drop = [k for k, lb in enumerate(lab) if lb not in out]
    if drop:
        x = x.sum(tuple(drop))
        lab = [lb for lb in lab if lb in out]
    perm = tuple(lab.index(lb) for lb in out)
    return x.permute(perm) if perm != tuple(range(len(perm))) else x


# ---------------------------------------------------------------------------------------------
# cdist
# ---------------------------------------------------------------------------------------------

class Cdist(Builtin):
    """dist[..., i, j] = ||x1[..., i, :] - x2[..., j, :]||_p;  the gradient of each pair goes
    to both rows (0 where the distance is 0, as PyTorch)."""

    @staticmethod
    def forward(ctx, x1, x2, p):
        diff = carray.subtract(carray.expand_dims(x1.array, -2), carray.expand_dims(x2.array, -3))
        ad = carray.abs(diff)
        if p == 0:
            dist = carray.sum(carray.not_equal(ad, 0).astype(diff.dtype), axis=-1)
        elif p == float("inf"):
            dist = carray.max(ad, axis=-1) if ad.shape[-1] else carray.sum(ad, axis=-1)
        elif p == 1:
            dist = carray.sum(ad, axis=-1)
        elif p == 2:
            dist = carray.sqrt(carray.sum(carray.multiply(ad, ad), axis=-1))
        else:
            dist = carray.power(carray.sum(carray.power(ad, p), axis=-1), 1.0 / p)
        ctx.save_for_backward(x1, x2)
        ctx.p, ctx.dist = p, dist
        return wrap(dist)

    @staticmethod
    def backward(ctx, g):
        x1, x2 = ctx.saved_tensors
        p, dist = ctx.p, wrap(ctx.dist).unsqueeze(-1)
        diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
        if p == 0:
            w = diff * 0
        elif p == 1:
            w = diff.sign()
        elif p == float("inf"):
            w = diff.sign() * (diff.abs() == dist).to(diff.dtype)
        else:
            ad = diff.abs()
            safe = dist.masked_fill(dist == 0, 1.0)
            w = diff * ad ** (p - 2) / safe ** (p - 1) if p >= 2 else \
                diff.sign() * ad ** (p - 1) / safe ** (p - 1)
            w = w.masked_fill(dist == 0, 0.0)
        gw = g.unsqueeze(-1) * w
        need = ctx.needs_input_grad
        g1 = reduce_grad(gw.sum(-2), x1) if need[0] else None
        g2 = reduce_grad(-gw.sum(-3), x2) if need[1] else None
        return g1, g2, None

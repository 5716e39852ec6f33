"""Updates of many arrays in one launch (foreach.cl): plain SGD, SGD with momentum and
Adam/AdamW, for carray.nn.sgd_step, sgd_momentum_step and adam_step, and scaling by a device
scalar (carray.nn.scale_all); and the sum of squares of many arrays (foreach_sumsq.cl) for
carray.nn.total_norm. Gradient clipping is these two.

One kernel is made per (update, dtype, parameter count, flags): each parameter contributes its
arrays (buffer + offset each), its size and its own scalars (`per`), the launch shares the rest;
the body is written once against the short names. Parameters are grouped by dtype and at most
MAX_PARAMS go in one launch; a buffer region that appears twice goes to separate launches (two
work items updating one element would race).
"""

import carray
from carray.opencl import _cache
from carray.opencl._launch import launch
from carray.opencl._layout import dense_operand, long_arg, pack_scalar
from carray.opencl._runtime import runtime
from carray.opencl._types import CL_TYPES, FLOAT64

MAX_PARAMS = 16


def _kernel(name, t, n, arrays, per, shared, body, defines=""):
    """The kernel `name` for n parameters of type t, each with `arrays` (names, the first one
    written) and per-parameter scalars `per`, then the `shared` scalars."""
    def source():
        params = []
        blocks = []
        for k in range(n):
            params += [f"__global T* restrict {a}{k}, const long {a}o{k}" for a in arrays]
            params += [f"const long n{k}"] + [f"const T {s}{k}" for s in per]
            local = " ".join(f"__global T* {a} = {a}{k} + {a}o{k};" for a in arrays)
            local += " " + " ".join(f"const T {s} = {s}{k};" for s in per)
            blocks.append(f"    if (e < n{k}) {{ {local}\n{body}\n        return; }}\n"
                          f"    e -= n{k};")
        params += [f"const T {s}" for s in shared]
        return _cache.render("foreach.cl", t=CL_TYPES[t], n=n, arrays=len(arrays), kname=name,
                             defines=defines, params=", ".join(params), body="\n".join(blocks))
    key = ("foreach", name, t, n, defines)
    return _cache.kernel(key, name, source, "long", t == FLOAT64)


def _rounds(rows):
    """rows (tuples whose first item is the parameter) grouped by dtype, at most MAX_PARAMS per
    group and no parameter region twice in one group."""
    rounds = []
    for row in rows:
        p = row[0]
        if not p.size:
            continue
        key = p._cl()[:2]
        for r in rounds:
            if r[0] == p.dtype.num and key not in r[1] and len(r[1]) < MAX_PARAMS:
                r[1][key] = row
                break
        else:
            rounds.append((p.dtype.num, {key: row}))
    return [(t, list(group.values())) for t, group in rounds]


def _run(name, arrays, per, shared, body, rows, shared_values, defines=""):
    """Launch the update over rows = [(array, ..., per scalar, ...)] (arrays first)."""
    na = len(arrays)
    for t, group in _rounds(rows):
        args = []
        for row in group:
            for short, a in zip(arrays, row[:na]):     # all but g are written: contiguous
                args += dense_operand(a) if short == "g" else [a._cl()[0], long_arg(a._cl()[1])]
            args.append(long_arg(row[0].size))
            args += [pack_scalar(t, v) for v in row[na:]]
        args += [pack_scalar(t, v) for v in shared_values]
        launch(_kernel(name, t, len(group), arrays, per, shared, body, defines),
               sum(row[0].size for row in group), args)


def sgd_step(params, grads, lr):
    """params[k] -= lr * grads[k] (C-contiguous parameters, float dtypes)."""
    _run("sgd_step", ("p", "g"), (), ("lr",), "        p[e] -= lr * g[e];",
         list(zip(params, grads)), (lr,))


_SGD_MOMENTUM = """\
        T d = g[e];
#if MAXIMIZE
        d = -d;
#endif
#if DECAY
        d = d + p[e] * decay;
#endif
        T b = buf[e] * momentum;
#if DAMPENING
        b = b + d * damp;
#else
        b = b + d;
#endif
        buf[e] = b;
#if NESTEROV
        d = d + b * momentum;
#else
        d = b;
#endif
        p[e] = p[e] - d * lr;"""


def sgd_momentum_step(params, grads, bufs, lr, momentum, dampening, weight_decay, nesterov,
                      maximize):
    """SGD with momentum after the first step (buf = momentum buf + (1 - dampening) g)."""
    defines = (f"#define MAXIMIZE {int(bool(maximize))}\n#define DECAY {int(weight_decay != 0)}\n"
               f"#define DAMPENING {int(dampening != 0)}\n#define NESTEROV {int(bool(nesterov))}")
    _run("sgd_momentum_step", ("p", "g", "buf"), (), ("lr", "momentum", "damp", "decay"),
         _SGD_MOMENTUM, list(zip(params, grads, bufs)),
         (lr, momentum, 1 - dampening, weight_decay), defines)


_ADAM = """\
        T d = g[e];
#if MAXIMIZE
        d = -d;
#endif
#if DECOUPLED
        p[e] = p[e] * keep;
#elif DECAY
        d = d + p[e] * decay;
#endif
        T diff = d - m[e];
#if LERP_FROM_START
        T mm = m[e] + diff * w1;
#else
        T mm = d - diff * w1c;
#endif
        m[e] = mm;
        T vv = v[e] * beta2;
        T gg = d * w2;
        vv = vv + gg * d;
        v[e] = vv;
        T denom = sqrt(vv) / bc2 + eps;
        p[e] = p[e] - (mm / denom) * step_size;"""


def adam_step(params, grads, exp_avgs, exp_avg_sqs, step_sizes, bc2s, lr, beta1, beta2, eps,
              weight_decay, decoupled, maximize):
    """Adam / AdamW (no amsgrad) with per-parameter step sizes lr / (1 - beta1^t) and
    sqrt(1 - beta2^t)."""
    w1 = 1 - beta1
    defines = (f"#define MAXIMIZE {int(bool(maximize))}\n"
               f"#define DECOUPLED {int(bool(decoupled) and weight_decay != 0)}\n"
               f"#define DECAY {int(weight_decay != 0)}\n"
               f"#define LERP_FROM_START {int(w1 < 0.5)}")
    rows = [(p, g, m, v, s, b) for p, g, m, v, s, b in
            zip(params, grads, exp_avgs, exp_avg_sqs, step_sizes, bc2s)]
    _run("adam_step", ("p", "g", "m", "v"), ("step_size", "bc2"),
         ("keep", "decay", "w1", "w1c", "beta2", "w2", "eps"), _ADAM, rows,
         (1 - lr * weight_decay, weight_decay, w1, 1 - w1, beta2, 1 - beta2, eps), defines)


def scale_all(arrays, factor):
    """arrays[k] *= factor[0] in place (C-contiguous arrays of factor's dtype, factor a device
    array of one element), up to MAX_PARAMS arrays a launch."""
    _run("scale_all", ("p", "c"), (), (), "        p[e] = p[e] * c[0];",
         [(a, factor) for a in arrays], ())


SUMSQ_GROUPS = 64       # work groups of one sum-of-squares launch: its partial sums


def _sumsq_kernel(t, n, group):
    def source():
        params = []
        loops = []
        for k in range(n):
            params += [f"__global const T* restrict a{k}", f"const long ao{k}", f"const long n{k}"]
            loops.append(f"    for (long i = gid; i < n{k}; i += stride) "
                         f"{{ const T x = a{k}[ao{k} + i]; s += x * x; }}")
        return _cache.render("foreach_sumsq.cl", t=CL_TYPES[t], n=n, group=group,
                             kname="sum_squares", params=", ".join(params), body="\n".join(loops))
    return _cache.kernel(("foreach_sumsq", t, n, group), "sum_squares", source, "long",
                         t == FLOAT64)


def sum_squares_partials(arrays):
    """Partial sums of squares of the elements of arrays (of one float dtype, on the device;
    a non-contiguous one is read from a contiguous copy), SUMSQ_GROUPS per launch of up to
    MAX_PARAMS arrays, as one new array: its sum is the total sum of squares."""
    group = 1 << (runtime().max_group.bit_length() - 1)      # a power of two for the tree
    t = arrays[0].dtype.num
    rounds = -(-len(arrays) // MAX_PARAMS)
    out = carray.empty((rounds * SUMSQ_GROUPS,), dtype=arrays[0].dtype, device="gpu")
    obuf = out._cl()[0]
    for r in range(rounds):
        chunk = arrays[r * MAX_PARAMS:(r + 1) * MAX_PARAMS]
        args = []
        for a in chunk:
            args += [*dense_operand(a), long_arg(a.size)]
        args += [obuf, long_arg(r * SUMSQ_GROUPS)]
        launch(_sumsq_kernel(t, len(chunk), group), SUMSQ_GROUPS * group, args, group)
    return out

"""gradcheck: compare backward's gradients with central finite differences (float64)."""

import random
import warnings

import carray
from autograd.engine import grad as _grad
from autograd.factories import randn
from autograd.grad_mode import enable_grad, no_grad
from autograd.tensor import Tensor

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck when an analytical gradient differs from the numerical one."""


def _outputs(fn, inputs):
    out = fn(*inputs)
    return out if isinstance(out, (tuple, list)) else (out,)


def gradcheck(fn, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, fast_mode=False):
    """Check the gradients of fn at inputs (a Tensor or a tuple; the float64 ones with
    requires_grad are checked) against central differences with step eps: every element must
    satisfy |analytical - numerical| <= atol + rtol * |numerical|.

    nondet_tol: the analytical Jacobian is computed twice; the two may differ by at most this
    (0: backward must be deterministic). check_undefined_grad: a backward from each output with
    a zero gradient (what an undefined gradient becomes) must give zero or no gradients.
    fast_mode: compare v^T J u for random u and v (one backward and two evaluations of fn per
    output) instead of the whole Jacobians.

    Returns True, or raises GradcheckError (a RuntimeError) naming the output, input and the
    two Jacobians' differing entry; returns False instead when raise_exception=False. ValueError
    when no input requires grad or nondet_tol is negative."""
    if isinstance(inputs, Tensor):
        inputs = (inputs,)
    inputs = tuple(inputs)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of the them have requires_grad=True.")
    if nondet_tol < 0:
        raise ValueError(f"gradcheck: nondet_tol must be >= 0, got {nondet_tol}")
    for i in diff:
        if inputs[i].dtype != carray.float64:
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating "
                          f"point. gradcheck needs float64 inputs for its tolerances to hold.",
                          stacklevel=2)
    try:
        outputs = _outputs(fn, inputs)
        for k, out in enumerate(outputs):
            if not isinstance(out, Tensor) or not out.requires_grad:
                continue
            if check_undefined_grad:
                _check_zero_grad_output(out, k, inputs, diff)
            if fast_mode:
                _check_projection(fn, inputs, diff, out, k, eps, atol, rtol, nondet_tol)
            else:
                _check_jacobians(fn, inputs, diff, out, k, eps, atol, rtol, nondet_tol)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def _check_jacobians(fn, inputs, diff, out, k, eps, atol, rtol, nondet_tol):
    """Output k's analytical Jacobian (twice, for nondet_tol) against the numerical one."""
    n_out = out.numel()
    analytical = _analytical_jacobian(out, inputs, diff)
    _check_reentrant(analytical, _analytical_jacobian(out, inputs, diff), k, nondet_tol)
    for i in diff:
        x = inputs[i]
        flat = x.array.reshape(-1) if x.array.flags.c_contiguous else None
        for e in range(x.numel()):
            col = _numerical_column(fn, inputs, x, flat, e, k, eps)
            for j in range(n_out):
                a = analytical[i][e][j]
                b = col[j]
                if not abs(a - b) <= atol + rtol * abs(b):
                    raise GradcheckError(
                        f"Jacobian mismatch for output {k} with respect to input {i},\n"
                        f"numerical:{b}\nanalytical:{a}\n(at input element {e}, output "
                        f"element {j}; atol={atol}, rtol={rtol}, eps={eps})")


def _analytical_jacobian(out, inputs, diff):
    """{input number: rows (one per input element) of d out[j] / d x[e] over j}: one backward
    per output element."""
    n_out = out.numel()
    analytical = {i: [[0.0] * n_out for _ in range(inputs[i].numel())] for i in diff}
    for j in range(n_out):
        seed = carray.zeros(out.shape, dtype=out.dtype, device=out.device)
        seed.reshape(-1)[j] = 1.0
        grads = _grad(out, [inputs[i] for i in diff], Tensor._wrap(seed), retain_graph=True,
                      allow_unused=True)
        for i, g in zip(diff, grads):
            if g is not None:
                for e, v in enumerate(g.array.reshape(-1).tolist()):
                    analytical[i][e][j] = v
    return analytical


def _check_reentrant(first, second, k, nondet_tol):
    """GradcheckError when two backward passes over the same graph disagree by > nondet_tol."""
    for i, rows in first.items():
        for row, again in zip(rows, second[i]):
            for a, b in zip(row, again):
                if not abs(a - b) <= nondet_tol:
                    raise GradcheckError(
                        f"Backward is not reentrant, i.e., running backward with same input "
                        f"and grad_output multiple times gives different values, although "
                        f"analytical gradient matches numerical gradient (output {k}, input "
                        f"{i}: {a} and {b}). The tolerance for nondeterminism was "
                        f"{nondet_tol}.")


def _check_zero_grad_output(out, k, inputs, diff):
    """A backward from output k with a zero gradient must give zero (or no) gradients."""
    zero = Tensor._wrap(carray.zeros(out.shape, dtype=out.dtype, device=out.device))
    grads = _grad(out, [inputs[i] for i in diff], zero, retain_graph=True, allow_unused=True)
    for i, g in zip(diff, grads):
        if g is not None and g.array.size and bool(carray.any(carray.not_equal(g.array, 0))):
            raise GradcheckError(f"Expected backward function to handle undefined output grads: "
                                 f"a zero gradient of output {k} gave a nonzero gradient for "
                                 f"input {i}.")


def _check_projection(fn, inputs, diff, out, k, eps, atol, rtol, nondet_tol):
    """fast_mode: v^T J u, from one backward with seed v and the inputs' gradients dotted with
    u, against (v . (f(x + eps u) - f(x - eps u))) / (2 eps)."""
    rng = random.Random(k)
    v = [rng.uniform(-1.0, 1.0) for _ in range(out.numel())]
    u = {i: [rng.uniform(-1.0, 1.0) for _ in range(inputs[i].numel())] for i in diff}
    seed = Tensor._wrap(carray.asarray(v, dtype=out.dtype, device=out.device).reshape(out.shape))
    results = []
    for _ in range(2):  # twice, for nondet_tol
        grads = _grad(out, [inputs[i] for i in diff], seed, retain_graph=True, allow_unused=True)
        results.append(sum(_dot(g.array.reshape(-1).tolist(), u[i])
                                    for i, g in zip(diff, grads) if g is not None))
    analytical, again = results
    if not abs(analytical - again) <= nondet_tol:
        raise GradcheckError(f"Backward is not reentrant (output {k}: v^T J u was {analytical} "
                             f"and {again}). The tolerance for nondeterminism was {nondet_tol}.")
    saved = {i: inputs[i].array.copy() for i in diff}
    with no_grad():
        try:
            _shift(inputs, diff, u, eps)
            plus = _outputs(fn, inputs)[k].array.reshape(-1).tolist()
            _shift(inputs, diff, u, -2 * eps)
            minus = _outputs(fn, inputs)[k].array.reshape(-1).tolist()
        finally:
            for i in diff:
                inputs[i].array[...] = saved[i]
    numerical = _dot([(p - m) / (2 * eps) for p, m in zip(plus, minus)], v)
    if not abs(analytical - numerical) <= atol + rtol * abs(numerical):
        raise GradcheckError(f"Jacobian mismatch for output {k} (fast mode: v^T J u for random u "
                             f"and v),\nnumerical:{numerical}\nanalytical:{analytical}\n"
                             f"(atol={atol}, rtol={rtol}, eps={eps}; run with fast_mode=False "
                             f"to see which input and element differ)")


def _shift(inputs, diff, u, step):
    """x_i += step * u_i in place, for every checked input."""
    for i in diff:
        x = inputs[i].array
        du = carray.asarray(u[i], dtype=x.dtype, device=x.device).reshape(x.shape)
        x[...] = carray.add(x, carray.multiply(du, step))


def _dot(a, b):
    return sum(p * q for p, q in zip(a, b))


def _numerical_column(fn, inputs, x, flat, e, k, eps):
    """d output_k / d x[e] by central differences, as a list over output elements."""
    idx = _unravel(e, x.shape)
    with no_grad():
        orig = x.array[idx].item() if x.ndim else x.array.item()
        x.array[idx] = orig + eps
        plus = _outputs(fn, inputs)[k].array.reshape(-1).tolist()
        x.array[idx] = orig - eps
        minus = _outputs(fn, inputs)[k].array.reshape(-1).tolist()
        x.array[idx] = orig
    return [(p - m) / (2 * eps) for p, m in zip(plus, minus)]


def _unravel(e, shape):
    idx = []
    for n in reversed(shape):
        idx.append(e % n)
        e //= n
    return tuple(reversed(idx))


def gradgradcheck(fn, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  raise_exception=True):
    """gradcheck of the first gradients (made with create_graph=True): checks second
    derivatives."""
    if isinstance(inputs, Tensor):
        inputs = (inputs,)
    inputs = tuple(inputs)
    outs = _outputs(fn, inputs)
    if grad_outputs is None:
        grad_outputs = [randn(o.shape, dtype=o.dtype, device=o.device) for o in outs]
    grad_outputs = list(grad_outputs)
    for g in grad_outputs:
        g.requires_grad_(True)

    def first_grads(*args):
        xs = args[:len(inputs)]
        gs = args[len(inputs):]
        with enable_grad():  # gradcheck's finite differences call this under no_grad
            outs = _outputs(fn, xs)
            dx = [x for x in xs if isinstance(x, Tensor) and x.requires_grad]
            grads = _grad(outs, dx, gs, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_grads, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)

"""gradcheck: compare backward's gradients with central finite differences (float64)."""

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
    satisfy |analytical - numerical| <= atol + rtol * |numerical|. Returns True, or raises
    GradcheckError (a RuntimeError) naming the output, input and the two Jacobians' worst
    entry; returns False instead when raise_exception=False."""
    if isinstance(inputs, Tensor):
        inputs = (inputs,)
    inputs = tuple(inputs)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of the them have requires_grad=True.")
    for i in diff:
        if inputs[i].dtype != carray.float64:
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating "
                          f"point. gradcheck needs float64 inputs for its tolerances to hold.")
    outputs = _outputs(fn, inputs)
    for k, out in enumerate(outputs):
        if not isinstance(out, Tensor) or not out.requires_grad:
            continue
        n_out = out.numel()
        # analytical Jacobian: one backward per output element
        analytical = {i: [[0.0] * n_out for _ in range(inputs[i].numel())] for i in diff}
        for j in range(n_out):
            seed = carray.zeros(out.shape, dtype=out.dtype, device=out.device)
            seed.reshape(-1)[j] = 1.0
            grads = _grad(out, [inputs[i] for i in diff], Tensor._wrap(seed),
                          retain_graph=True, allow_unused=True)
            for i, g in zip(diff, grads):
                if g is not None:
                    for e, v in enumerate(g.data.reshape(-1).tolist()):
                        analytical[i][e][j] = v
        # numerical Jacobian
        for i in diff:
            x = inputs[i]
            flat = x.data.reshape(-1) if x.data.flags.c_contiguous else None
            for e in range(x.numel()):
                col = _numerical_column(fn, inputs, x, flat, e, k, eps)
                for j in range(n_out):
                    a = analytical[i][e][j]
                    b = col[j]
                    if not abs(a - b) <= atol + rtol * abs(b):
                        if not raise_exception:
                            return False
                        raise GradcheckError(
                            f"Jacobian mismatch for output {k} with respect to input {i},\n"
                            f"numerical:{b}\nanalytical:{a}\n(at input element {e}, output "
                            f"element {j}; atol={atol}, rtol={rtol}, eps={eps})")
    return True


def _numerical_column(fn, inputs, x, flat, e, k, eps):
    """d output_k / d x[e] by central differences, as a list over output elements."""
    idx = _unravel(e, x.shape)
    with no_grad():
        orig = x.data[idx].item() if x.ndim else x.data.item()
        x.data[idx] = orig + eps
        plus = _outputs(fn, inputs)[k].data.reshape(-1).tolist()
        x.data[idx] = orig - eps
        minus = _outputs(fn, inputs)[k].data.reshape(-1).tolist()
        x.data[idx] = orig
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
    diff = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    outs = _outputs(fn, inputs)
    if grad_outputs is None:
        grad_outputs = [randn(o.shape, dtype=o.dtype) for o in outs]
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

    del diff
    return gradcheck(first_grads, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)

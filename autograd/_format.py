"""repr of a Tensor in PyTorch's layout: tensor([...], dtype=..., grad_fn=<...>)."""

import carray

_DEFAULT_OMITTED = ("float32", "int64", "bool")


def format_tensor(t):
    """PyTorch-style text of tensor t (its values read to the host)."""
    body = t.data.to("cpu") if t.data.device != "cpu" else t.data
    text = repr(carray.asarray(body))
    text = text[len("array("):]
    for tail in (", dtype=", ", shape="):
        cut = text.find(tail) if tail == ", shape=" else text.rfind(tail)
        if cut >= 0:
            text = text[:cut] + ")"
    text = text[:-1]
    text = text.replace("\n      ", "\n       ")
    extras = []
    if body.ndim and body.size == 0 and body.shape != (0,):
        extras.append(f"size={tuple(body.shape)}")
    if t.data.device != "cpu":
        extras.append(f"device='{t.data.device}'")
    if body.dtype.name not in _DEFAULT_OMITTED:
        extras.append(f"dtype=autograd.{body.dtype.name}")
    if t.grad_fn is not None:
        extras.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._rg:
        extras.append("requires_grad=True")
    return "tensor(" + ", ".join([text] + extras) + ")"

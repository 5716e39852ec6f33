"""The backward engine: PyTorch's design, iterative so any depth works.

1. Walk the graph from the roots once and count, for every node, how many edges lead into it
   (its dependencies).
2. Keep, per node, a buffer with one gradient slot per output; every gradient delivered to a slot
   is added to what is there.
3. A node is ready when all its dependencies have delivered. Ready nodes wait in a heap and the one
   created last runs first (the reverse of the forward order), so a chain runs in one pass.
4. Running a node calls its backward on the buffer and delivers the results along its edges. An
   AccumulateGrad node adds the gradient into its leaf's .grad. Saved tensors are freed after a
   node runs unless retain_graph.
5. Callbacks queued during the pass with queue_callback run once all nodes have run (what
   DistributedDataParallel uses to wait for its gradient all-reduces).
"""

import sys
from heapq import heapify, heappop, heappush

import carray
from autograd._defaults import is_floating
from autograd.function import AccumulateGrad, _edge
from autograd.grad_mode import _state
from autograd.tensor import Tensor

__all__ = ["backward", "grad", "queue_callback"]

# one list of end-of-backward callbacks per backward pass in progress (innermost last)
_callbacks = []

# The profiling hook of the backward pass (autograd.profiler): while set, each node's backward
# (and each AccumulateGrad) runs between observer.begin(name) and observer.end(token). Read once
# per pass, so a pass without a profiler pays nothing per node.
_observer = None


def set_observer(observer):
    """Install observer (or None) as the backward pass's profiling hook; returns the previous
    one."""
    global _observer
    prev = _observer
    _observer = observer
    return prev


def queue_callback(callback):
    """Run callback() once the backward pass that is running now has finished all its nodes
    (torch's Variable._execution_engine.queue_callback). Callbacks run in the order queued and
    may queue more. Raises RuntimeError outside a backward pass."""
    if not _callbacks:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    _callbacks[-1].append(callback)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate into the leaves' .grad the gradient of sum(<tensor, grad_tensor>) over the given
    tensors (torch.autograd.backward). Raises RuntimeError for a tensor that does not require
    grad, or a non-scalar tensor without a grad_tensor."""
    if retain_graph is None:
        retain_graph = create_graph
    if tensors.__class__ is Tensor and grad_tensors is None and inputs is None:
        # loss.backward(): one root with the implicit gradient 1 (checks as _make_grads's)
        _run([(_root_edge(tensors, 0), _implicit_grad(tensors))], retain_graph, create_graph)
        return
    tensors = _as_tuple(tensors)
    grads = _make_grads(tensors, _as_tuple(grad_tensors, len(tensors)), create_graph)
    roots = [(_root_edge(t, i), g) for i, (t, g) in enumerate(zip(tensors, grads))]
    only = None
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
        only = {id(_edge(t)[0]) for t in inputs}
    _run(roots, retain_graph, create_graph, accumulate_only=only)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=None, materialize_grads=False):
    """The gradients of sum(<output, grad_output>) with respect to each input, returned as a tuple
    (torch.autograd.grad); .grad attributes are left alone. Raises RuntimeError for an input that
    the outputs do not depend on unless allow_unused=True (its gradient is then None, or zeros with
    materialize_grads=True)."""
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    for i, t in enumerate(inputs):
        if not t.requires_grad:
            raise RuntimeError(f"One of the differentiated Tensors does not require grad "
                               f"(input {i})")
    grads = _make_grads(outputs, _as_tuple(grad_outputs, len(outputs)), create_graph)
    if retain_graph is None:
        retain_graph = create_graph
    roots = [(_root_edge(t, i), g) for i, (t, g) in enumerate(zip(outputs, grads))]
    targets = {}
    for i, t in enumerate(inputs):
        node, nr = _edge(t)
        targets.setdefault(id(node), []).append((nr, i))
    captured = [None] * len(inputs)
    _run(roots, retain_graph, create_graph, capture=(targets, captured))
    for i, g in enumerate(captured):
        if g is None:
            if not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have been "
                                   "used in the graph. Set allow_unused=True if this is the "
                                   "desired behavior.")
            if materialize_grads:
                captured[i] = Tensor._wrap(carray.zeros(inputs[i].shape, dtype=inputs[i].dtype,
                                                         device=inputs[i].device))
    return tuple(captured)


# ---------------------------------------------------------------------------------------------
# the loop
# ---------------------------------------------------------------------------------------------

def _run(roots, retain_graph, create_graph, capture=None, accumulate_only=None):
    """Propagate the root gradients through the graph (see the module docstring)."""
    buffers = {}
    for (node, nr), g in roots:
        _deliver(buffers, node, nr, g)
    # the buffers' keys are now the root nodes, each once, in order
    deps = _count_dependencies(buffers)
    ready = [(-node._seq, tick, node) for tick, node in enumerate(buffers) if deps[node] == 0]
    tick = len(buffers)
    heapify(ready)
    targets, captured = capture if capture is not None else (None, None)
    prev = _state.enabled
    _state.enabled = create_graph
    callbacks = []
    _callbacks.append(callbacks)
    obs = _observer
    try:
        while ready:
            node = heappop(ready)[2]
            grads = buffers.pop(node)
            if node._pre_hooks:
                _run_pre_hooks(node, grads)
            if node._retained:
                _retain(node, grads, create_graph)
            if targets is not None:
                slots = targets.get(id(node))
                if slots:
                    if node.__class__ is AccumulateGrad and node.variable._hooks \
                            and grads[0] is not None:  # a leaf's hooks change what grad returns
                        for hook in list(node.variable._hooks):
                            new = hook(grads[0])
                            if new is not None:
                                grads[0] = new
                    for nr, i in slots:
                        captured[i] = grads[nr]
            if node.__class__ is AccumulateGrad:
                if grads[0] is not None and targets is None and (
                        accumulate_only is None or id(node) in accumulate_only):
                    if obs is None:
                        _accumulate(node.variable, grads[0], create_graph)
                    else:   # (inline: a wrapper's extra reference would make _owned copy)
                        token = obs.begin("AccumulateGrad")
                        try:
                            _accumulate(node.variable, grads[0], create_graph)
                        finally:
                            obs.end(token)
                    if node.variable._post_acc_hooks:
                        for hook in list(node.variable._post_acc_hooks):
                            hook(node.variable)  # (register_post_accumulate_grad_hook)
                continue
            if obs is None and node._trusted and not node._hooks and grads[0] is not None:
                # the common case (a built-in op, no hooks, no profiler): _run_backward's first
                # branch inline, one call less per node
                out = node.__class__.backward(node, *grads)
                if not isinstance(out, tuple):
                    out = (out,)
            else:
                out = _call_backward(node, grads, obs)
            if not retain_graph and node._saved is not None:
                node._release()
            for (nxt, nr), g in zip(node.next_functions, out):
                if nxt is None:
                    continue
                buf = buffers.get(nxt)  # (_deliver inlined: this loop runs once per edge)
                if buf is None:
                    buf = buffers[nxt] = [None] * nxt._n_out
                if g is not None:
                    old = buf[nr]
                    buf[nr] = g if old is None else _sum(old, g, create_graph)
                left = deps[nxt] - 1
                deps[nxt] = left
                if left == 0:
                    heappush(ready, (-nxt._seq, tick, nxt))
                    tick += 1
            out = g = old = None  # drop references, so that leaves can keep gradients they own
        _state.enabled = prev
        while callbacks:
            callbacks.pop(0)()
    finally:
        _state.enabled = prev
        _callbacks.pop()


def _call_backward(node, grads, obs):
    """node's backward on its gradients (a profiled range when obs is set); Nones when no
    gradient arrived (nothing to compute, but the edges still count down)."""
    for g in grads:
        if g is not None:
            if obs is None:
                return node._run_backward(grads)
            return _observed(obs, node.name(), node._run_backward, grads)
    return (None,) * len(node.next_functions)


def _observed(obs, name, fn, *args):
    """fn(*args) as one profiled range named `name`."""
    token = obs.begin(name)
    try:
        return fn(*args)
    finally:
        obs.end(token)


def _count_dependencies(root_nodes):
    """{node: number of edges into it} over the graph reachable from the (distinct) root nodes
    (iterative)."""
    deps = {}   # (a node is in deps once seen: the roots start at 0)
    stack = []
    for n in root_nodes:
        if n is not None:
            deps[n] = 0
            stack.append(n)
    while stack:
        for nxt, _ in stack.pop().next_functions:
            if nxt is None:
                continue
            if nxt in deps:
                deps[nxt] += 1
            else:
                deps[nxt] = 1
                stack.append(nxt)
    return deps


def _deliver(buffers, node, nr, g):
    """Add root gradient g (or None: nothing to add) into slot nr of node's buffer (the loop of
    _run does the same for the gradients it computes)."""
    buf = buffers.get(node)
    if buf is None:
        buf = buffers[node] = [None] * node._n_out
    if g is None:
        return
    old = buf[nr]
    buf[nr] = g if old is None else old + g


def _sum(old, g, create_graph):
    """old + g, two gradients of one output. Unless recording (create_graph), carray's add of
    the data when the dtypes agree: the same result as the Tensor op, without its dispatch."""
    if create_graph or old.array.dtype is not g.array.dtype:
        return old + g
    return Tensor._wrap(carray.add(old.array, g.array))


def _run_pre_hooks(node, grads):
    """Hooks registered on the node's output tensors: each may replace its gradient."""
    for nr, hooks in node._pre_hooks.items():
        for hook in list(hooks):
            if grads[nr] is None:
                break
            new = hook(grads[nr])
            if new is not None:
                grads[nr] = new


def _retain(node, grads, create_graph):
    """Store the gradient of outputs that called retain_grad() in their .grad."""
    for nr, ref in node._retained.items():
        t = ref()
        if t is None or grads[nr] is None:
            continue
        g = grads[nr] if create_graph else grads[nr].detach()
        t.grad = g._clone_data() if t.grad is None else t.grad + g


def _accumulate(leaf, g, create_graph):
    """leaf.grad += g after the leaf's hooks; the first gradient is stored without a copy when
    nothing else holds it."""
    if leaf._hooks:
        for hook in list(leaf._hooks):
            new = hook(g)
            if new is not None:
                g = new
    if g.array.dtype != leaf.array.dtype:
        g = g.to(leaf.array.dtype)
    old = leaf.grad
    if old is None:
        if create_graph:
            leaf.grad = g
        elif _owned(g):
            leaf.grad = g.detach() if g.grad_fn is not None else g
        else:
            leaf.grad = g._clone_data()
    elif create_graph or _state.enabled:
        leaf.grad = old + g
    else:
        carray.add(old.array, g.array, out=old.array)
        old._vc[0] += 1


def _owned(g):
    """True when no one but the engine holds g and its memory is its own and contiguous, so the
    leaf can keep it as its .grad (sys.getrefcount counts the caller's references too)."""
    d = g.array
    # g: the buffer list, _accumulate's and our parameter, getrefcount's argument;
    # d: g.array, our variable, getrefcount's argument; a view's base: d and the argument (then
    # no other array can see the memory)
    return (sys.getrefcount(g) <= 4 and sys.getrefcount(d) <= 3
            and (d.base is None or sys.getrefcount(d.base) <= 2) and d.flags.c_contiguous)


# ---------------------------------------------------------------------------------------------
# roots
# ---------------------------------------------------------------------------------------------

def _as_tuple(x, n=None):
    if x is None:
        return (None,) * n if n is not None else ()
    if isinstance(x, (tuple, list)):
        return tuple(x)
    return (x,)


def _make_grads(outputs, grads, create_graph):
    """The gradient each output starts with: given, or 1 for a scalar output."""
    if len(grads) != len(outputs):
        raise RuntimeError(f"grad can be implicitly created only for scalar outputs; got "
                           f"{len(grads)} gradients for {len(outputs)} outputs")
    out = []
    for i, (t, g) in enumerate(zip(outputs, grads)):
        if not isinstance(t, Tensor):
            raise TypeError(f"backward: expected Tensors as outputs, got {type(t).__name__}")
        if g is None:
            g = _implicit_grad(t)
        else:
            if not isinstance(g, Tensor):
                g = Tensor._wrap(carray.asarray(g, dtype=t.dtype, device=t.device))
            if g.device != t.device:
                raise RuntimeError(f"invalid gradient at index {i} - expected device {t.device} "
                                   f"but got {g.device}")
            if g.array.shape != t.array.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"{_size(g.shape)} and output[{i}] has a shape of "
                                   f"{_size(t.shape)}.")
            if not create_graph:
                g = g.detach()
        out.append(g)
    return out


def _implicit_grad(t):
    """The gradient 1 of a scalar output. RuntimeError when t requires grad and is not a real
    scalar."""
    d = t.array
    if t._rg:
        if d.size != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        if not is_floating(d.dtype):
            raise RuntimeError("grad can be implicitly created only for real scalar outputs "
                               f"but got {d.dtype}")
    return Tensor._wrap(carray.ones(d.shape, dtype=d.dtype, device=d.device))


def _size(shape):
    return "torch.Size([" + ", ".join(str(s) for s in shape) + "])"


def _root_edge(t, i):
    if not t.requires_grad:
        raise RuntimeError(f"element {i} of tensors does not require grad and does not have a "
                           f"grad_fn")
    return _edge(t)

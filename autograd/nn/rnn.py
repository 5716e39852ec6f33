"""Recurrent layers as PyTorch's: RNN, LSTM, GRU (multi-layer, bidirectional, batch_first,
dropout between layers, LSTM projections) and the single-step cells RNNCell, LSTMCell, GRUCell.

Each layer and direction projects the inputs of all time steps in one matmul (x @ W_ih^T plus
the biases), then runs the steps: h @ W_hh^T and one gate Function per step (autograd/ops/rnn.py).
Parameters, their names and order, initialisation U(-1/sqrt(hidden), 1/sqrt(hidden)), shapes,
results and error messages follow torch.nn. PackedSequence inputs are not supported.
"""

import math
import numbers
import warnings

from autograd import factories
from autograd._defaults import scalar_type_name
from autograd.nn import functional as F
from autograd.nn import init
from autograd.nn.module import Module
from autograd.nn.parameter import Parameter
from autograd.ops.nn import Addmm
from autograd.ops.rnn import LstmLayer, ThnnFusedGruCell, ThnnFusedLstmCell, Unbind
from autograd.ops.shape import Cat, Stack

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _dtype_name(dtype):
    return f"torch.{dtype}"


class RNNBase(Module):
    """The parameters and forward shared by RNN, LSTM and GRU (`mode` is 'LSTM', 'GRU',
    'RNN_TANH' or 'RNN_RELU'). Per layer l and direction, in this order: weight_ih_l{l}
    (G*hidden, in), weight_hh_l{l} (G*hidden, out), bias_ih_l{l}, bias_hh_l{l} (G*hidden,)
    when bias, weight_hr_l{l} (proj_size, hidden) when proj_size; '_reverse' names the second
    direction. TypeError/ValueError for bad sizes or options, as PyTorch."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        _check_options(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout,
                       proj_size)
        gates = _GATES[mode] * hidden_size
        directions = 2 if bidirectional else 1
        out_size = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_in = input_size if layer == 0 else out_size * directions
                shapes = [("weight_ih_l{}{}", (gates, layer_in)),
                          ("weight_hh_l{}{}", (gates, out_size))]
                if bias:
                    shapes += [("bias_ih_l{}{}", (gates,)), ("bias_hh_l{}{}", (gates,))]
                if proj_size > 0:
                    shapes += [("weight_hr_l{}{}", (proj_size, hidden_size))]
                suffix = "_reverse" if direction == 1 else ""
                names = []
                for pattern, shape in shapes:
                    name = pattern.format(layer, suffix)
                    setattr(self, name, Parameter(factories.empty(shape, dtype=dtype,
                                                                  device=device)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self):
        """Redraw every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self):
        """A no-op (PyTorch packs the weights for cuDNN here)."""

    @property
    def _flat_weights(self):
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        """The parameters, one list per layer and direction."""
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # -- forward ----------------------------------------------------------------------------------

    def _prepare(self, input, hx):
        """Checks and batches input and hx as PyTorch does: returns (input (T, B, in) or
        (B, T, in), [h0, c0 or None] each (layers * directions, B, size), is_batched)."""
        lstm = self.mode == "LSTM"
        nd = input.dim()
        if nd not in (2, 3):
            name = self.mode if self.mode in ("LSTM", "GRU") else "RNN"
            tail = " tensor" if name == "RNN" else ""
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {nd}D{tail} instead")
        batched = nd == 3
        if not batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
        if hx is not None:
            hs = list(hx) if lstm else [hx]
            dims = [h.dim() for h in hs]
            want = 3 if batched else 2
            if any(d != want for d in dims):
                kind = "batched 3-D" if batched else "unbatched 2-D"
                if lstm:
                    raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D "
                                       f"but got ({dims[0]}-D, {dims[1]}-D) tensors")
                raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got "
                                   f"{dims[0]}-D tensor")
            if not batched:
                hs = [h.unsqueeze(1) for h in hs]
        self._check_input(input)
        batch = input.shape[0] if self.batch_first else input.shape[1]
        rows = self.num_layers * (2 if self.bidirectional else 1)
        out_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        expected = [(rows, batch, out_size)] + ([(rows, batch, self.hidden_size)] if lstm else [])
        if hx is None:
            hs = [factories.zeros(s, dtype=input.dtype, device=input.device) for s in expected]
        else:
            for k, (h, e) in enumerate(zip(hs, expected)):
                if tuple(h.shape) != e:
                    what = f"hidden[{k}] size" if lstm else "hidden size"
                    raise RuntimeError(f"Expected {what} {e}, got {list(h.shape)}")
        return input, hs, batched

    def _check_input(self, input):
        wdtype = self.weight_ih_l0.dtype
        if input.dtype != wdtype:
            a, b = _dtype_name(input.dtype), _dtype_name(wdtype)
            raise ValueError(f"RNN input dtype ({a}) does not match weight dtype ({b}). "
                             f"Convert input: input.to({b}), or convert model: model.to({a})")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    def _run(self, input, hs):
        """The layers over input (T, B, in): returns (output (T, B, directions * out), [h_n,
        c_n or absent])."""
        if input.shape[0] == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        directions = 2 if self.bidirectional else 1
        starts = [Unbind.apply(h, 0) for h in hs]  # per layer and direction
        finals = [[] for _ in hs]
        x = input
        for layer in range(self.num_layers):
            outs = []
            for direction in range(directions):
                k = layer * directions + direction
                weights = [getattr(self, n) for n in self._all_weights[k]]
                out, last = self._direction(x, weights, [s[k] for s in starts], direction == 1)
                outs.append(out)
                for f, v in zip(finals, last):
                    f.append(v)
            x = outs[0] if directions == 1 else Cat.apply(2, *outs)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, [Stack.apply(0, *f) for f in finals]

    def _direction(self, x, weights, state, reverse):
        """One layer in one direction over x (T, B, in): (outputs (T, B, out), final state)."""
        w_ih, w_hh = weights[0], weights[1]
        b_ih, b_hh = (weights[2], weights[3]) if self.bias else (None, None)
        w_hr = weights[-1] if self.proj_size > 0 else None
        mode = self.mode
        if mode == "GRU":   # b_hh stays in the step: r multiplies the hidden projection's n part
            steps = Unbind.apply(Addmm.apply(x, w_ih, b_ih), 0)
        else:
            proj = Addmm.apply(x, w_ih, None if b_ih is None else b_ih + b_hh)
            if mode == "LSTM" and w_hr is None:     # the whole layer as one node
                out, h, c = LstmLayer.apply(proj, w_hh, state[0], state[1], reverse)
                return out, [h, c]
            steps = Unbind.apply(proj, 0)
        n = len(steps)
        outs = [None] * n
        h = state[0]
        c = state[1] if mode == "LSTM" else None
        for t in (range(n - 1, -1, -1) if reverse else range(n)):
            if mode == "LSTM":
                h, c = ThnnFusedLstmCell.apply(steps[t], Addmm.apply(h, w_hh, None), c)
                if w_hr is not None:
                    h = Addmm.apply(h, w_hr, None)
            elif mode == "GRU":
                h = ThnnFusedGruCell.apply(steps[t], Addmm.apply(h, w_hh, b_hh), h)
            else:
                pre = steps[t] + Addmm.apply(h, w_hh, None)
                h = pre.tanh() if mode == "RNN_TANH" else pre.relu()
            outs[t] = h
        return Stack.apply(0, *outs), ([h, c] if mode == "LSTM" else [h])

    def forward(self, input, hx=None):
        """(output, h_n) for RNN and GRU, (output, (h_n, c_n)) for LSTM, as PyTorch: input
        (T, B, in) ((B, T, in) with batch_first) or unbatched (T, in); hx (layers * directions,
        B, out) (a pair with c0 (layers * directions, B, hidden) for LSTM), zeros when None.
        ValueError for input of other than 2 or 3 dims or of the wrong dtype, RuntimeError for
        a wrong feature size or hx shape."""
        x, hs, batched = self._prepare(input, hx)
        if self.batch_first:
            x = x.transpose(0, 1)
        out, finals = self._run(x, hs)
        if self.batch_first:
            out = out.transpose(0, 1)
        if not batched:
            out = out.squeeze(0 if self.batch_first else 1)
            finals = [f.squeeze(1) for f in finals]
        return (out, tuple(finals)) if self.mode == "LSTM" else (out, finals[0])


def _check_options(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout,
                   proj_size):
    """PyTorch's checks of RNNBase's arguments, in its order."""
    if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or \
            isinstance(dropout, bool):
        raise ValueError("dropout should be a number in range [0, 1] representing the "
                         "probability of an element being zeroed")
    if dropout > 0 and num_layers == 1:
        warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                      "non-zero dropout expects num_layers greater than 1, but got "
                      f"dropout={dropout} and num_layers={num_layers}", stacklevel=4)
    for name, value in (("bias", bias), ("batch_first", batch_first)):
        if not isinstance(value, bool):
            raise TypeError(f"{name} should be of type bool, got: {type(value).__name__}")
    for name, value in (("input_size", input_size), ("hidden_size", hidden_size)):
        if not isinstance(value, int):
            raise TypeError(f"{name} should be of type int, got: {type(value).__name__}")
        if value <= 0:
            raise ValueError(f"{name} must be greater than zero")
    if num_layers <= 0:
        raise ValueError("num_layers must be greater than zero")
    if proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable projections")
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")
    if mode not in _GATES:
        raise ValueError("Unrecognized RNN mode: " + mode)


class RNN(RNNBase):
    """Elman RNN: h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh), act tanh or relu
    (`nonlinearity`). Arguments (input_size, hidden_size, num_layers=1, nonlinearity='tanh',
    bias=True, batch_first=False, dropout=0.0, bidirectional=False); ValueError for proj_size
    or another nonlinearity."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             f"'relu'.")
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Long short-term memory: per step i, f, g, o = gates of x W_ih^T + b_ih + h W_hh^T + b_hh,
    c' = f c + i g, h' = o tanh(c') (then h' W_hr^T with proj_size). Arguments (input_size,
    hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0, bidirectional=False,
    proj_size=0); forward returns (output, (h_n, c_n))."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    """Gated recurrent unit: r, z = sigmoid(...), n = tanh(x W_in^T + b_in + r (h W_hn^T + b_hn)),
    h' = (1 - z) n + z h. Arguments as RNN's without nonlinearity."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


# ---------------------------------------------------------------------------------------------
# cells: one time step
# ---------------------------------------------------------------------------------------------


class RNNCellBase(Module):
    """weight_ih (G*hidden, in), weight_hh (G*hidden, hidden) and, when bias, bias_ih and bias_hh
    (G*hidden,), all from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        g = num_chunks * hidden_size
        self.weight_ih = Parameter(factories.empty((g, input_size), dtype=dtype, device=device))
        self.weight_hh = Parameter(factories.empty((g, hidden_size), dtype=dtype,
                                                   device=device))
        if bias:
            self.bias_ih = Parameter(factories.empty(g, dtype=dtype, device=device))
            self.bias_hh = Parameter(factories.empty(g, dtype=dtype, device=device))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Redraw every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _prepare(self, name, input, hx, n_states):
        """(input (B, in), states [(B, hidden)] * n_states, is_batched) with PyTorch's checks;
        hx is None, a tensor, or (LSTMCell) a pair."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        states = None if hx is None else (list(hx) if n_states == 2 else [hx])
        if states is not None:
            for k, h in enumerate(states):
                if h.dim() not in (1, 2):
                    what = f"hx[{k}]" if n_states == 2 else "hidden"
                    raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {h.dim()}D "
                                     f"instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
            if states is not None:
                states = [h.unsqueeze(0) for h in states]
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} "
                               f"expected {self.input_size}")
        if states is None:
            zeros = factories.zeros((input.shape[0], self.hidden_size), dtype=input.dtype,
                                    device=input.device)
            states = [zeros] * n_states
        for k, h in enumerate(states):
            if h.shape[0] != input.shape[0]:
                raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{k} "
                                   f"batch size {h.shape[0]}")
            size = h.shape[1] if h.dim() > 1 else None
            if size != self.hidden_size:
                raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got {size}, "
                                   f"expected {self.hidden_size}")
        if input.dtype != self.weight_ih.dtype:
            raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                                   f"{scalar_type_name(input.dtype)} and "
                                   f"{scalar_type_name(self.weight_ih.dtype)}")
        return input, states, batched


class RNNCell(RNNCellBase):
    """One Elman step: h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh), act tanh or relu; input
    (B, in) or (in,), hx (B, hidden) or (hidden,), zeros when None. ValueError/RuntimeError for
    bad dims or sizes, as PyTorch."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        x, (h,), batched = self._prepare("RNNCell", input, hx, 1)
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        pre = Addmm.apply(x, self.weight_ih, self.bias_ih) + \
            Addmm.apply(h, self.weight_hh, self.bias_hh)
        out = pre.tanh() if self.nonlinearity == "tanh" else pre.relu()
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: (h', c') from input (B, in) or (in,) and hx = (h, c) ((B, hidden) or
    (hidden,) each), zeros when None. ValueError/RuntimeError for bad dims or sizes."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        x, (h, c), batched = self._prepare("LSTMCell", input, hx, 2)
        h, c = ThnnFusedLstmCell.apply(Addmm.apply(x, self.weight_ih, self.bias_ih),
                                       Addmm.apply(h, self.weight_hh, self.bias_hh), c)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step: h' from input (B, in) or (in,) and hx (B, hidden) or (hidden,), zeros when
    None. ValueError/RuntimeError for bad dims or sizes."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        x, (h,), batched = self._prepare("GRUCell", input, hx, 1)
        h = ThnnFusedGruCell.apply(Addmm.apply(x, self.weight_ih, self.bias_ih),
                                   Addmm.apply(h, self.weight_hh, self.bias_hh), h)
        return h if batched else h.squeeze(0)

# Stub for the compiled module carray.cpu._nn: the CPU kernels of carray.nn (convolution, pooling,
# fused softmax cross entropy, SGD). Internal: carray.nn validates the arguments and passes
# C-contiguous float32/float64 arrays and tuples of ints.

from carray.core._array import Array

# -- convolution ----------------------------------------------------------------------------
def conv2d_forward(
    x: Array,
    w: Array,
    b: Array | None,
    out_shape: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
) -> Array: ...
def conv2d_grad_input(
    gout: Array,
    w: Array,
    input_shape: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
) -> Array: ...
def conv2d_grad_weight(
    x: Array,
    gout: Array,
    weight_shape: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
) -> Array: ...
def conv2d_grad_bias(gout: Array) -> Array: ...

# -- pooling --------------------------------------------------------------------------------
# (out, indices or None)
def max_pool2d_forward(
    x: Array,
    out_shape: tuple[int, ...],
    kernel: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
    with_indices: bool,
) -> tuple[Array, Array | None]: ...
def max_pool2d_backward(gout: Array, idx: Array, input_shape: tuple[int, ...]) -> Array: ...
def avg_pool2d_forward(
    x: Array,
    out_shape: tuple[int, ...],
    kernel: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    count_include_pad: bool,
    divisor: int,
) -> Array: ...
def avg_pool2d_backward(
    gout: Array,
    input_shape: tuple[int, ...],
    kernel: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    count_include_pad: bool,
    divisor: int,
) -> Array: ...

# -- softmax cross entropy ------------------------------------------------------------------
# (loss, probs, count: a 0-d array, None for reduction 'none')
def softmax_nll(
    x: Array, t: Array, ignore_index: int, reduction: str
) -> tuple[Array, Array, Array | None]: ...
def softmax_nll_grad(
    probs: Array, t: Array, g: Array, count: Array | None, ignore_index: int
) -> Array: ...

# -- optimiser ------------------------------------------------------------------------------
# params[k] -= lr * grads[k] in place
def sgd_step(params: list[Array], grads: list[Array], lr: float) -> None: ...

# set the bytes of im2col buffer per chunk of images (0: one image per chunk); returns the old
def _set_col_budget(nbytes: int) -> int: ...

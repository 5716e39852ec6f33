"""carray's device-neutral front ends: validate arguments, promote dtypes, broadcast, allocate
the result, then dispatch to carray.cpu's loops or carray.opencl's kernels.

_optable (the op table: every primitive declared once), _ufunc (elementwise ops and reductions),
_creation (factories), _join (concatenate, stack, split, pad, flip), _matmul, _cumulative
(cumsum, cumprod), _sort (sort, argsort).
"""

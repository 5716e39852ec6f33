"""carray.linalg: the array API standard's linear algebra extension and numpy.linalg's common
extras, with NumPy's names, arguments, results and LinAlgError (a ValueError).

Products, views and norms are device ops (carray.ops._linalg_products); the factorisations
(det, slogdet, inv, solve, cholesky, qr, svd, svdvals, eigh, eigvalsh and what is built on them:
pinv, matrix_rank, matrix_power's inverse, lstsq) run as C loops on the host
(carray.ops._linalg, carray.cpu._linalg); gpu inputs are read to the host and the results
uploaded, so every result stays on its input's device.
"""

from carray.ops._linalg import (
    EighResult,
    LinAlgError,
    QRResult,
    SlogdetResult,
    SVDResult,
    cholesky,
    det,
    eigh,
    eigvalsh,
    inv,
    lstsq,
    matrix_power,
    matrix_rank,
    pinv,
    qr,
    slogdet,
    solve,
    svd,
    svdvals,
)
from carray.ops._linalg_products import (
    cond,
    cross,
    diagonal,
    matmul,
    matrix_norm,
    matrix_transpose,
    multi_dot,
    norm,
    outer,
    tensordot,
    trace,
    vecdot,
    vector_norm,
)

__all__ = ["EighResult", "LinAlgError", "QRResult", "SVDResult", "SlogdetResult", "cholesky",
           "cond", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "lstsq", "matmul",
           "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "multi_dot", "norm",
           "outer",
           "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot",
           "vector_norm"]

# the general (non-symmetric) eigenvalue problem: eig and eigvals (always complex results)
from carray.ops._linalg_eig import EigResult, eig, eigvals  # noqa: E402

__all__ += ["EigResult", "eig", "eigvals"]

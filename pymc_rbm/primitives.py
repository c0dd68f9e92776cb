"""The numerical primitives of every formula, for NumPy arrays and PyTensor tensors alike.

:func:`softplus`, :func:`sigmoid` and :func:`product` dispatch on the type of
their arguments, so the energies (:mod:`pymc_rbm.energy`) and the layer types
(:mod:`pymc_rbm.layers`) are written once for both.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from pymc_rbm._runtime import THREADED_PRODUCT, map_blocks, single_blas_thread

__all__ = ["POOLED_PRODUCT", "PRODUCT_ROWS", "is_symbolic", "product", "softplus", "sigmoid"]

#: Most rows of one block of :func:`product`. The blocks depend on the number of rows only, so that they, and
#: with them every sum, are the same on any number of cores.
PRODUCT_ROWS = 256
#: Products of fewer multiply-adds (``x.size · M.shape[1]``) form their blocks one after another on the calling
#: thread (the same blocks, so the same bits): handing them to the pool costs more than it saves. A 1000 x 16
#: by 16 x 16 product took 260 µs through the pool and 95 µs on one thread (2 cores, 2026-12-02).
POOLED_PRODUCT = 2**20


def is_symbolic(x) -> bool:
    """Whether ``x`` is a PyTensor variable (and not a NumPy array or number)."""
    return type(x).__module__.startswith("pytensor")


def softplus(x):
    """``log(1 + exp(x))``, stable for any ``|x|`` (NumPy or PyTensor)."""
    if isinstance(x, np.ndarray):
        return np.maximum(x, 0.0) + np.log1p(np.exp(-np.abs(x)))
    if is_symbolic(x):
        import pytensor.tensor as pt

        return pt.softplus(x)
    x = np.asarray(x)
    return np.maximum(x, 0.0) + np.log1p(np.exp(-np.abs(x)))


def sigmoid(x):
    """``1 / (1 + exp(-x))``, stable for any ``|x|`` (NumPy or PyTensor)."""
    if is_symbolic(x):
        import pytensor.tensor as pt

        return pt.sigmoid(x)
    return expit(x)


def product(x, M):
    """``x @ M`` over the last axis of ``x``, with the same bits on any number of threads.

    A multi-threaded BLAS sums a product differently with each number of
    threads (:func:`~pymc_rbm._runtime.single_blas_thread`). A large product
    is therefore formed in blocks of at most :data:`PRODUCT_ROWS` rows, each by one
    BLAS call on one thread, the blocks spread over the cores
    (:func:`~pymc_rbm._runtime.map_blocks`): the sums depend on the shapes
    only, and the cores are still used. One row, a small product, and
    PyTensor tensors are ``x @ M`` itself.

    Parameters
    ----------
    x : array of shape (..., n)
    M : array of shape (n, m)

    Returns
    -------
    array of shape (..., m)
    """
    if is_symbolic(x) or is_symbolic(M):
        return x @ M
    x = np.asarray(x)
    # one row is a matrix-vector product, which BLAS sums alike on any number of threads
    if x.ndim < 2 or x.size == x.shape[-1] or x.size * M.shape[1] < THREADED_PRODUCT:
        return x @ M
    rows = x.reshape(-1, x.shape[-1])
    out = np.empty((rows.shape[0], M.shape[1]), dtype=np.result_type(rows, M))

    def fill(block: slice) -> None:
        np.matmul(rows[block], M, out=out[block])

    n = rows.shape[0]
    n_blocks = -(-n // PRODUCT_ROWS)
    bounds = [n * i // n_blocks for i in range(n_blocks + 1)]  # sizes as equal as possible
    blocks = [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:])]
    with single_blas_thread():
        if x.size * M.shape[1] < POOLED_PRODUCT:
            for block in blocks:
                fill(block)
        else:
            map_blocks(fill, blocks)
    return out.reshape(x.shape[:-1] + (M.shape[1],))

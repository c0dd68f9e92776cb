"""The two numerical primitives of every formula, for NumPy arrays and PyTensor tensors alike.

:func:`softplus` and :func:`sigmoid` dispatch on the type of their argument,
so the energies (:mod:`pymc_rbm.energy`) and the layer types
(:mod:`pymc_rbm.layers`) are written once for both.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

__all__ = ["is_symbolic", "softplus", "sigmoid"]


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

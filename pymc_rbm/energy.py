"""Energy, free energy and conditionals of a binary RBM, written once.

Every function works on NumPy arrays and on PyTensor tensors alike: the
formulas are written with operators and the two primitives
:func:`softplus` and :func:`sigmoid`, which dispatch on the type of their
argument. ``params`` is anything with the attributes ``W``, ``vbias`` and
``hbias``: an :class:`~pymc_rbm.params.RBMParams`, or an
:class:`RBMTensors` of PyTensor variables inside a model graph.

Batch axes come first and the unit axis last: ``v`` has shape
``(..., n_visible)`` and ``h`` shape ``(..., n_hidden)``. An inverse
temperature ``beta`` (a scalar, or an array of the batch shape, one per
chain) multiplies the energy.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from scipy.special import expit

__all__ = [
    "RBMTensors",
    "softplus",
    "sigmoid",
    "hidden_activation",
    "visible_activation",
    "energy",
    "free_energy",
    "mean_hiddens",
    "mean_visibles",
]


class RBMTensors(NamedTuple):
    """The parameters as symbolic tensors (or any arrays), for use in graphs.

    Attributes
    ----------
    W : tensor of shape (n_visible, n_hidden)
    vbias : tensor of shape (n_visible,)
    hbias : tensor of shape (n_hidden,)
    """

    W: Any
    vbias: Any
    hbias: Any


def _is_symbolic(x) -> bool:
    return type(x).__module__.startswith("pytensor")


def softplus(x):
    """``log(1 + exp(x))``, stable for any ``|x|`` (NumPy or PyTensor)."""
    if isinstance(x, np.ndarray):
        return np.maximum(x, 0.0) + np.log1p(np.exp(-np.abs(x)))
    if _is_symbolic(x):
        import pytensor.tensor as pt

        return pt.softplus(x)
    x = np.asarray(x)
    return np.maximum(x, 0.0) + np.log1p(np.exp(-np.abs(x)))


def sigmoid(x):
    """``1 / (1 + exp(-x))``, stable for any ``|x|`` (NumPy or PyTensor)."""
    if _is_symbolic(x):
        import pytensor.tensor as pt

        return pt.sigmoid(x)
    return expit(x)


def _tempered(x, beta, *, unit_axis=True):
    """``beta * x``; ``beta`` is a scalar or holds one value per batch element.

    With ``unit_axis`` the last axis of ``x`` is the unit axis, which a
    per-chain ``beta`` broadcasts over.
    """
    if beta is None:
        return x
    if not _is_symbolic(beta):
        beta = np.asarray(beta)
        if beta.ndim == 0:
            return x if beta == 1.0 else beta * x
    return (beta[..., None] if unit_axis else beta) * x


def hidden_activation(v, params):
    """Input to the hidden units, ``hbias + v·W``.

    Parameters
    ----------
    v : array of shape (..., n_visible)
    params : RBMParams or RBMTensors

    Returns
    -------
    array of shape (..., n_hidden)
    """
    return params.hbias + v @ params.W


def visible_activation(h, params):
    """Input to the visible units, ``vbias + W·h``.

    Parameters
    ----------
    h : array of shape (..., n_hidden)
    params : RBMParams or RBMTensors

    Returns
    -------
    array of shape (..., n_visible)
    """
    return params.vbias + h @ params.W.T


def energy(v, h, params):
    """Joint energy ``E(v, h) = -v·W·h - vbias·v - hbias·h``.

    Parameters
    ----------
    v : array of shape (..., n_visible)
    h : array of shape (..., n_hidden)
    params : RBMParams or RBMTensors

    Returns
    -------
    array of shape (...)
    """
    return -((v @ params.W) * h).sum(axis=-1) - v @ params.vbias - h @ params.hbias


def free_energy(v, params, beta=None):
    """Free energy of the visible units, the hidden units summed out.

    ``F(v) = -vbias·v - Σ_j softplus(hbias_j + (v·W)_j)``, so that
    ``p(v) = exp(-F(v)) / Z``. With an inverse temperature ``beta`` the
    free energy of ``p_β(v, h) ∝ exp(-β E(v, h))`` is returned instead:
    ``-β vbias·v - Σ_j softplus(β (hbias_j + (v·W)_j))``.

    Parameters
    ----------
    v : array of shape (..., n_visible)
    params : RBMParams or RBMTensors
    beta : float or array of shape (...), optional

    Returns
    -------
    array of shape (...)
    """
    return -_tempered(v @ params.vbias, beta, unit_axis=False) - softplus(
        _tempered(hidden_activation(v, params), beta)
    ).sum(axis=-1)


def mean_hiddens(v, params, beta=None):
    """``p(h_j = 1 | v) = sigmoid(β (hbias_j + (v·W)_j))``.

    Parameters
    ----------
    v : array of shape (..., n_visible)
    params : RBMParams or RBMTensors
    beta : float or array of shape (...), optional

    Returns
    -------
    array of shape (..., n_hidden)
    """
    return sigmoid(_tempered(hidden_activation(v, params), beta))


def mean_visibles(h, params, beta=None):
    """``p(v_i = 1 | h) = sigmoid(β (vbias_i + (W·h)_i))``.

    Parameters
    ----------
    h : array of shape (..., n_hidden)
    params : RBMParams or RBMTensors
    beta : float or array of shape (...), optional

    Returns
    -------
    array of shape (..., n_visible)
    """
    return sigmoid(_tempered(visible_activation(h, params), beta))

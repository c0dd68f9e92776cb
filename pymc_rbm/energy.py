"""Energy, free energy and conditionals of an RBM, written once.

Every function works on NumPy arrays and on PyTensor tensors alike: the
formulas are written with operators and the two primitives
:func:`softplus` and :func:`sigmoid` (:mod:`pymc_rbm.primitives`), which
dispatch on the type of their argument. ``params`` is anything with the
attributes ``W``, ``vbias`` and ``hbias``: an :class:`~pymc_rbm.params.RBMParams`,
a :class:`~pymc_rbm.params.SpinRBMParams`, or an :class:`RBMTensors` of
PyTensor variables inside a model graph. Its ``visible`` and ``hidden``
layer types (:mod:`pymc_rbm.layers`; Bernoulli when it names none) say what
a unit is: the hidden layer's log normaliser is the term that summing it
out adds to the free energy.

Batch axes come first and the unit axis last: ``v`` has shape
``(..., n_visible)`` and ``h`` shape ``(..., n_hidden)``. An inverse
temperature ``beta`` (a scalar, or an array of the batch shape, one per
chain) multiplies the energy.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from pymc_rbm.layers import BERNOULLI, Layer
from pymc_rbm.primitives import is_symbolic, product, sigmoid, softplus

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

    Its units are Bernoulli (the layers of the PyMC distribution).
    """

    W: Any
    vbias: Any
    hbias: Any


def _layers(params) -> tuple[Layer, Layer]:
    """The visible and hidden layer types of ``params`` (Bernoulli where it names none)."""
    return getattr(params, "visible", BERNOULLI), getattr(params, "hidden", BERNOULLI)


def _tempered(x, beta, *, unit_axis=True):
    """``beta * x``; ``beta`` is a scalar or holds one value per batch element.

    With ``unit_axis`` the last axis of ``x`` is the unit axis, which a
    per-chain ``beta`` broadcasts over.
    """
    if beta is None:
        return x
    if not is_symbolic(beta):
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
    return params.hbias + product(v, params.W)


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
    return params.vbias + product(h, params.W.T)


def energy(v, h, params):
    """Joint energy ``E(v, h) = -v·W·h - vbias·v - hbias·h`` (the same for every two-state layer).

    Parameters
    ----------
    v : array of shape (..., n_visible)
    h : array of shape (..., n_hidden)
    params : RBMParams or RBMTensors

    Returns
    -------
    array of shape (...)
    """
    return -(product(v, params.W) * h).sum(axis=-1) - v @ params.vbias - h @ params.hbias


def free_energy(v, params, beta=None):
    """Free energy of the visible units, the hidden units summed out.

    ``F(v) = -vbias·v - Σ_j A(hbias_j + (v·W)_j)`` with ``A`` the hidden
    layer's log normaliser (softplus for Bernoulli units, ``log 2 cosh`` for
    spins, the truncated Gaussian's for ReLU units), so that ``p(v) = exp(-F(v)) / Z``. With an inverse temperature
    ``beta`` the free energy of ``p_β(v, h) ∝ exp(-β E(v, h))`` is returned
    instead: ``-β vbias·v - Σ_j A(β (hbias_j + (v·W)_j))`` (for ReLU units, whose
    precision ``γ`` is tempered too, ``A`` is that of precisions ``β γ``).

    Parameters
    ----------
    v : array of shape (..., n_visible)
    params : RBMParams or RBMTensors
    beta : float or array of shape (...), optional

    Returns
    -------
    array of shape (...)
    """
    hidden = _layers(params)[1]
    a = hidden_activation(v, params)
    if beta is not None and hasattr(hidden, "log_normaliser_at_beta"):  # a quadratic term: ReLU units
        per_chain = is_symbolic(beta) or np.ndim(beta) > 0
        summed = hidden.log_normaliser_at_beta(a, (beta if is_symbolic(beta) else np.asarray(beta))[..., None]
                                               if per_chain else beta)
    else:
        summed = hidden.log_normaliser(_tempered(a, beta))
    return -_tempered(v @ params.vbias, beta, unit_axis=False) - summed.sum(axis=-1)


def mean_hiddens(v, params, beta=None):
    """``E[h_j | v]``: ``p(h_j = 1 | v) = sigmoid(β (hbias_j + (v·W)_j))`` for Bernoulli units.

    Parameters
    ----------
    v : array of shape (..., n_visible)
    params : RBMParams or RBMTensors
    beta : float or array of shape (...), optional

    Returns
    -------
    array of shape (..., n_hidden)
    """
    return _layers(params)[1].mean(_tempered(hidden_activation(v, params), beta))


def mean_visibles(h, params, beta=None):
    """``E[v_i | h]``: ``p(v_i = 1 | h) = sigmoid(β (vbias_i + (W·h)_i))`` for Bernoulli units.

    Parameters
    ----------
    h : array of shape (..., n_hidden)
    params : RBMParams or RBMTensors
    beta : float or array of shape (...), optional

    Returns
    -------
    array of shape (..., n_visible)
    """
    return _layers(params)[0].mean(_tempered(visible_activation(h, params), beta))

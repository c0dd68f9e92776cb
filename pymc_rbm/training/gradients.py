"""Log-likelihood gradients of an RBM: the data term and the model term.

For data ``v^(1..N)`` the gradient of the mean log-likelihood is the data
expectation minus the model expectation of the energy's derivatives
(Brügge, Fischer & Igel 2013, §2; Hinton, Welling & Mnih 2003, eq. 3):

``∂/∂W = ⟨v p(h|v)ᵀ⟩_data - ⟨v hᵀ⟩_model``,
``∂/∂vbias = ⟨v⟩_data - ⟨v⟩_model``, ``∂/∂hbias = ⟨p(h|v)⟩_data - ⟨h⟩_model``.

The data term sums the hidden units out exactly (:func:`data_statistics`). The
model term is what the training methods differ in: statistics of samples
(:func:`data_statistics` of the negative samples: CD, PCD, PT), or the
moments of :func:`pymc_rbm.estimators.moments` (exact enumeration, naive mean
field, TAP, Bethe, mixture mean field).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from pymc_rbm.energy import mean_hiddens
from pymc_rbm.estimators import MOMENT_METHODS, Moments, moments
from pymc_rbm.params import RBMParams
from pymc_rbm.validation import check_binary

__all__ = [
    "Gradient",
    "DETERMINISTIC_METHODS",
    "data_statistics",
    "sample_statistics",
    "gradient_from_statistics",
    "model_statistics",
    "log_likelihood_gradient",
]

#: Methods whose model term is a moment computation (:data:`pymc_rbm.estimators.MOMENT_METHODS`).
DETERMINISTIC_METHODS = tuple(MOMENT_METHODS)


class Gradient(NamedTuple):
    """A gradient (or an update) in the parameters of an RBM.

    Attributes
    ----------
    W : ndarray of shape (n_visible, n_hidden)
    vbias : ndarray of shape (n_visible,)
    hbias : ndarray of shape (n_hidden,)
    """

    W: np.ndarray
    vbias: np.ndarray
    hbias: np.ndarray

    def norm(self) -> float:
        """Euclidean norm over all parameters."""
        return math.sqrt(sum(float(np.vdot(a, a)) for a in self))


def data_statistics(v, params: RBMParams) -> Moments:
    """``⟨v⟩``, ``⟨p(h|v)⟩`` and ``⟨v p(h|v)ᵀ⟩`` averaged over a batch of visible vectors.

    The hidden units are summed out (Rao-Blackwellised): the data term of
    the gradient, and the model term when ``v`` are samples of the model.

    Parameters
    ----------
    v : ndarray of shape (n_samples, n_visible)
        Binary visible vectors (not checked here: callers validate once).
    params : RBMParams

    Returns
    -------
    Moments
        ``v`` of shape (n_visible,), ``h`` of shape (n_hidden,), ``vh`` of
        shape (n_visible, n_hidden).
    """
    return sample_statistics(v, mean_hiddens(v, params))


def sample_statistics(v, ph) -> Moments:
    """``⟨v⟩``, ``⟨ph⟩`` and ``⟨v phᵀ⟩`` over a batch: :func:`data_statistics` given ``ph = p(h | v)``.

    Parameters
    ----------
    v : ndarray of shape (n_samples, n_visible)
    ph : ndarray of shape (n_samples, n_hidden)
        The hidden probabilities of ``v`` (or hidden samples).

    Returns
    -------
    Moments
    """
    n = v.shape[0]  # sums over n, not .mean(): the same values, without mean's Python-level overhead
    return Moments(v=v.sum(axis=0) / n, h=ph.sum(axis=0) / n, vh=(v.T @ ph) / n)


def gradient_from_statistics(positive: Moments, negative: Moments) -> Gradient:
    """The log-likelihood gradient ``positive - negative`` in ``(W, vbias, hbias)``.

    Parameters
    ----------
    positive : Moments
        The data term (:func:`data_statistics` of the data).
    negative : Moments
        The model term (samples or moments).

    Returns
    -------
    Gradient
    """
    return Gradient(positive.vh - negative.vh, positive.v - negative.v, positive.h - negative.h)


def _check_method(method: str) -> str:
    if method not in MOMENT_METHODS:
        raise ValueError(f"unknown gradient method {method!r}; choose one of {sorted(MOMENT_METHODS)}")
    return method


def model_statistics(params: RBMParams, method: str = "exact", **options) -> Moments:
    """The model term by a deterministic method: :func:`pymc_rbm.estimators.moments`.

    Parameters
    ----------
    params : RBMParams
    method : {"exact", "mean_field", "tap", "bethe", "mixture_mean_field"}, default "exact"
        ``"exact"`` enumerates the smaller layer (at most 2**24 states);
        ``"mean_field"`` is the naive mean-field fixed point, ``"tap"`` the
        TAP expansion (order 2 by default, ``order=3`` allowed), ``"bethe"``
        the Bethe approximation (Huang & Toyoizumi 2015, eq. 6) and ``"mixture_mean_field"``
        the mixture of factorized distributions (Lawrence, Bishop & Jordan 1998, eq. 28).
    **options
        Passed to the method's moment function, e.g. ``n_components`` for the
        mixture, ``order`` for TAP, ``max_bits`` for exact.

    Returns
    -------
    Moments
    """
    return moments(params, _check_method(method), **options)


def log_likelihood_gradient(params: RBMParams, data, *, method: str = "exact", **options) -> Gradient:
    """Gradient of the mean log-likelihood of ``data``, with the model term from ``method``.

    Parameters
    ----------
    params : RBMParams
    data : array_like of shape (n_samples, n_visible)
        Binary data; it is not modified.
    method : str, default "exact"
        See :func:`model_statistics`. With ``"exact"`` this is the true
        gradient of ``mean(log p(data))``.
    **options
        Passed to the moment function.

    Returns
    -------
    Gradient

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm import RBMParams
    >>> from pymc_rbm.training import log_likelihood_gradient
    >>> params = RBMParams.random(4, 3, rng=0)
    >>> g = log_likelihood_gradient(params, np.eye(4))
    >>> g.W.shape, g.vbias.shape, g.hbias.shape
    ((4, 3), (4,), (3,))
    """
    if not isinstance(params, RBMParams):
        raise TypeError(f"params must be an RBMParams, got {type(params).__name__}")
    v = check_binary(data, params.n_visible, name="data", dtype=params.dtype)
    if v.ndim != 2 or v.shape[0] == 0:
        raise ValueError(f"data must have shape (n_samples, n_visible) with n_samples >= 1, got {v.shape}")
    return gradient_from_statistics(data_statistics(v, params), model_statistics(params, method, **options))

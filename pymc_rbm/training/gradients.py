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

__all__ = [
    "Gradient",
    "DETERMINISTIC_METHODS",
    "data_statistics",
    "sample_statistics",
    "gradient_from_statistics",
    "centered_gradient",
    "centered_update",
    "center",
    "centered_from_ordinary",
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


def centered_gradient(positive: Moments, negative: Moments, v_offset, h_offset) -> Gradient:
    """The gradient in the centered parameters (Montavon & Müller 2012; Melchior, Fischer & Wiskott 2016).

    The centered RBM writes the same model with offsets ``μ`` (visible) and
    ``λ`` (hidden): ``E(v, h) = -(v - μ)ᵀ W (h - λ) - bᵀ (v - μ) - cᵀ (h - λ)``,
    that is ``vbias = b - W λ`` and ``hbias = c - Wᵀ μ`` (and a constant).
    Its log-likelihood gradient is

    ``∂/∂W = ⟨(v - μ)(h - λ)ᵀ⟩_data - ⟨(v - μ)(h - λ)ᵀ⟩_model``,
    ``∂/∂b = ⟨v⟩_data - ⟨v⟩_model``, ``∂/∂c = ⟨h⟩_data - ⟨h⟩_model``,

    both terms with the same offsets (centering one term only is not a
    gradient of anything: the tests check it against the exact gradient).

    Parameters
    ----------
    positive, negative : Moments
        The data and model terms (:func:`gradient_from_statistics`).
    v_offset : ndarray of shape (n_visible,)
        ``μ``.
    h_offset : ndarray of shape (n_hidden,)
        ``λ``.

    Returns
    -------
    Gradient
        In ``(W, b, c)``, the centered parameters.
    """

    def centered_vh(m: Moments):
        # ⟨(v - μ)(h - λ)ᵀ⟩ = ⟨v hᵀ⟩ - μ ⟨h⟩ᵀ - ⟨v⟩ λᵀ + μ λᵀ
        return m.vh - np.outer(v_offset, m.h) - np.outer(m.v, h_offset) + np.outer(v_offset, h_offset)

    return Gradient(centered_vh(positive) - centered_vh(negative), positive.v - negative.v, positive.h - negative.h)


def centered_update(gradient: Gradient, v_offset, h_offset) -> Gradient:
    """A step in the centered parameters, written in the RBM's own ``(W, vbias, hbias)``.

    With ``vbias = b - W λ`` and ``hbias = c - Wᵀ μ`` (:func:`centered_gradient`),
    a step ``(ΔW, Δb, Δc)`` of the centered parameters at fixed offsets moves
    ``W`` by ``ΔW``, ``vbias`` by ``Δb - ΔW λ`` and ``hbias`` by ``Δc - ΔWᵀ μ``:
    the same model as the centered step, exactly (it is linear).

    Parameters
    ----------
    gradient : Gradient
        In the centered parameters.
    v_offset, h_offset : ndarray of shape (n_visible,) / (n_hidden,)

    Returns
    -------
    Gradient
    """
    return Gradient(gradient.W, gradient.vbias - gradient.W @ h_offset, gradient.hbias - v_offset @ gradient.W)


def center(gradient: Gradient, v_offset, h_offset) -> Gradient:
    """The centered gradient ascent direction from the ordinary gradient, in ``(W, vbias, hbias)``.

    :func:`centered_update` of :func:`centered_gradient`, computed from the
    ordinary gradient ``g`` alone (the offsets' ``μ λᵀ`` terms cancel between
    the data and the model terms): ``G = g_W - μ g_hbiasᵀ - g_vbias λᵀ``, then
    ``(G, g_vbias - G λ, g_hbias - Gᵀ μ)``. With zero offsets it is ``g``.
    What every negative phase of :func:`~pymc_rbm.training.fit` uses with
    ``centered=True`` (the offsets are the batch's data means, as in the
    ``rbms`` package).

    Parameters
    ----------
    gradient : Gradient
        The ordinary log-likelihood gradient (or its estimate).
    v_offset : ndarray of shape (n_visible,)
    h_offset : ndarray of shape (n_hidden,)

    Returns
    -------
    Gradient
    """
    return centered_update(centered_from_ordinary(gradient, v_offset, h_offset), v_offset, h_offset)


def centered_from_ordinary(gradient: Gradient, v_offset, h_offset) -> Gradient:
    """:func:`centered_gradient` from the ordinary gradient ``g``.

    ``(g_W - μ g_hbiasᵀ - g_vbias λᵀ, g_vbias, g_hbias)``.

    The offsets' ``μ λᵀ`` terms cancel between the data and the model terms,
    so the ordinary gradient (or its estimate) is all it needs.
    """
    g = gradient
    W = g.W - v_offset[:, None] * g.hbias[None, :]
    W -= g.vbias[:, None] * h_offset[None, :]
    return Gradient(W, g.vbias, g.hbias)


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


def log_likelihood_gradient(params, data, *, method: str = "exact", **options) -> Gradient:
    """Gradient of the mean log-likelihood of ``data``, with the model term from ``method``.

    Parameters
    ----------
    params : RBMParams, CategoricalRBMParams or GaussianRBMParams
    data : array_like of shape (n_samples, n_visible)
        Binary data, integer labels (or one-hot data) or real data, as
        ``params`` has units; it is not modified.
    method : str, default "exact"
        See :func:`model_statistics`. With ``"exact"`` this is the true
        gradient of ``mean(log p(data))``; categorical and Gaussian RBMs have
        ``"exact"`` only (:mod:`~pymc_rbm.training.families`).
    **options
        Passed to the moment function.

    Returns
    -------
    Gradient
        In the parameters' own shapes: for a categorical RBM ``W`` (n, q, m)
        and ``vbias`` (n, q); for a Gaussian RBM the derivatives with respect
        to ``W``, ``vbias`` and ``hbias`` at fixed ``sigma``.

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
    from pymc_rbm.training.families import family_of

    family = family_of(params)
    v = family.check(data, params.n_visible, name="data", dtype=params.dtype)
    if v.ndim != 2 or v.shape[0] == 0:
        raise ValueError(f"data must have shape (n_samples, n_visible) with n_samples >= 1, got {v.shape}")
    if family.name == "bernoulli":
        negative = model_statistics(params, method, **options)
    elif method == "exact":
        negative = family.exact_moments(params, **options)
    else:
        raise ValueError(f"the gradient of a {family.name} RBM is computed with method='exact' only, not {method!r}")
    positive = data_statistics(family.features(v), family.flat(params))
    return family.gradient(gradient_from_statistics(positive, negative), params)

"""Training's Gibbs chains and gradients for small models in one compiled call each, with NumPy's values.

For small models NumPy's per-call costs are most of a training update; these
run a PCD or CD chain (:func:`gibbs_chain`, :func:`persistent_gibbs_gradient`)
and the centered gradient and step (:func:`centered_sample_gradient`,
:func:`centered_ascent_step`) in one call of the loops of
:mod:`pymc_rbm.kernels.training_loops`. Their products are BLAS calls and
their layer updates the rule the NumPy kernels use, with the uniforms in the
NumPy kernels' order, so for the same generator the values are the NumPy
path's, bit for bit.
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["persistent_gibbs_gradient", "gibbs_chain", "centered_sample_gradient", "centered_ascent_step"]


@functools.cache
def _loops():
    """:mod:`pymc_rbm.kernels.training_loops`, imported on first use (importing the kernels does not load Numba)."""
    from pymc_rbm.kernels import training_loops

    return training_loops


def persistent_gibbs_gradient(rng: np.random.Generator, batch, v, h, params, k: int):
    """One PCD-k update's gradient with block Gibbs, in one compiled call (stochastic).

    The data term of ``batch`` minus the model term of the persistent chains
    ``(v, h)`` after ``k`` sweeps ``v ~ p(v | h)``, ``h ~ p(h | v)`` (the
    visible layer first, from the ``h`` the chains carry), both with the
    hidden units summed out: the gradient of
    :func:`pymc_rbm.training.chains.gibbs_sweeps_visible_first` followed
    by the statistics, the same chain for the same generator (its sweeps are
    :func:`gibbs_chain`'s, visible layer first: the values of the NumPy
    kernels). For small models, where NumPy's per-call costs are most of an update.

    Parameters
    ----------
    rng : numpy.random.Generator
        Per sweep, ``n_chains * n_visible`` uniforms then ``n_chains * n_hidden``.
    batch : ndarray of shape (n_samples, n_visible), float64
        Binary data.
    v, h : ndarray of shape (n_chains, n_visible / n_hidden), float64, C order
        The chains, updated in place.
    params : RBMParams
        float64.
    k : int

    Returns
    -------
    W, vbias, hbias : ndarray
        The gradient (data minus model term) in each parameter.
    """
    u = rng.random(k * v.shape[0] * (v.shape[1] + h.shape[1]))
    return _loops().persistent_gibbs_gradient(u, batch, v, h, params.W, params.vbias, params.hbias)


def gibbs_chain(rng: np.random.Generator, v, h, params, n_sweeps: int, *, first_draw: bool = False,
                last_draw: bool = True) -> np.ndarray:
    """Block-Gibbs sweeps from the visible states, in one compiled call, with NumPy's values (stochastic).

    The chain of :func:`~pymc_rbm.training.chains.gibbs_sweeps_from_visible`
    (``last_draw``) or of CD's start and sweeps (``first_draw``: ``h ~ p(h | v)``
    first, as :func:`~pymc_rbm.kernels.gibbs.init_state`), the same values for
    the same generator: the uniforms in the NumPy kernels' order, each layer
    by the same compiled rule (:func:`~pymc_rbm.kernels.update_rule.gibbs_rows`)
    at activations formed as NumPy forms them (a BLAS product, then the bias).
    For small models, where NumPy's per-call costs are most of an update.

    Parameters
    ----------
    rng : numpy.random.Generator
        ``n_chains * n_hidden`` uniforms per hidden update and
        ``n_chains * n_visible`` per visible one, in the order of the updates.
    v : ndarray of shape (n_chains, n_visible), C order
        Binary visible states in ``params``' dtype, updated in place.
    h : ndarray of shape (n_chains, n_hidden), C order
        Receives the hidden states (with neither draw, those of the last sweep).
    params : RBMParams
        float64 or float32.
    n_sweeps : int
    first_draw, last_draw : bool
        Draw ``h ~ p(h | v)`` before the first sweep / of the final ``v``.

    Returns
    -------
    ndarray of shape (n_chains, n_hidden)
        The hidden input ``hbias + v @ W`` of the final ``v``.
    """
    n_c, n_v = v.shape
    n_h = h.shape[1]
    u = rng.random(n_sweeps * n_c * (n_v + n_h) + (int(first_draw) + int(last_draw)) * n_c * n_h)
    return _loops().gibbs_chain(u, v, h, params.W, params.vbias, params.hbias, n_sweeps, first_draw, last_draw)


def centered_sample_gradient(v_data, params, v_model, ph_model):
    """The centered gradient of data and model samples, in one compiled call with NumPy's values.

    ``G = ⟨(v - μ)(p - λ)ᵀ⟩_data - ⟨(v - μ)(p - λ)ᵀ⟩_model``, ``g_v = μ - ⟨v⟩_model``,
    ``g_h = λ - ⟨p⟩_model`` with ``p = p(h | v)``, the data's at ``params`` and the
    data means ``μ = ⟨v⟩_data``, ``λ = ⟨p⟩_data`` as offsets: the arithmetic of
    :func:`~pymc_rbm.energy.mean_hiddens` and
    :func:`~pymc_rbm.training.negative.centered_from_samples` (the same BLAS
    products, element-wise operations and ``expit``, means as NumPy's), without
    their per-call costs.

    Parameters
    ----------
    v_data : ndarray of shape (n_samples, n_visible)
    params : RBMParams
    v_model : ndarray of shape (n_chains, n_visible)
    ph_model : ndarray of shape (n_chains, n_hidden)
        ``p(h | v)`` of the model samples. The arrays C-ordered, in ``params``' dtype.

    Returns
    -------
    G, g_v, g_h, mu, lam : ndarray
        Of shapes (n_visible, n_hidden), (n_visible,), (n_hidden,), (n_visible,), (n_hidden,).
    """
    return _loops().centered_sample_gradient(v_data, params.W, params.hbias, v_model, ph_model)


def centered_ascent_step(arrays, gradient, offsets, learning_rate: float) -> None:
    """Plain gradient ascent in the centered parameters, mapped to ``(W, vbias, hbias)``, in one compiled call.

    ``p += learning_rate * g`` for each array and ``g`` of
    :func:`~pymc_rbm.training.gradients.centered_update` of ``gradient`` at
    ``offsets``: the same BLAS products and element-wise operations as NumPy
    (the learning rate taken in the arrays' dtype, as NumPy takes a Python
    float), so the same values.

    Parameters
    ----------
    arrays : tuple of ndarray
        ``(W, vbias, hbias)``, moved in place.
    gradient : Gradient
        In the centered parameters, in the arrays' dtype.
    offsets : tuple of ndarray
        ``(μ, λ)`` of shapes (n_visible,) and (n_hidden,).
    learning_rate : float
    """
    W = arrays[0]
    _loops().centered_ascent_step(*arrays, *gradient, *offsets, W.dtype.type(learning_rate))

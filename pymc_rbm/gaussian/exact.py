"""Exact enumeration of a Gaussian-Bernoulli RBM's hidden layer: ``log Z``, the mixture ``p(v)``, its mean, exact draws.

Integrating ``v`` out leaves the marginal of the hidden layer (the formulas
are in :mod:`pymc_rbm.gaussian`'s docstring), so every quantity here sums
over the ``2**n_hidden`` hidden states, in blocks. NumPy only.
"""

from __future__ import annotations

import numpy as np

from pymc_rbm.enumeration import EnumerationTooLarge
from pymc_rbm.gaussian.params import GaussianRBMParams, free_energy, visible_mean
from pymc_rbm.layers import BERNOULLI

__all__ = [
    "MAX_HIDDEN_ENUMERATED",
    "hidden_marginal",
    "log_partition_exact",
    "log_prob_exact",
    "mean_exact",
    "sample_exact",
]

#: Largest hidden layer whose ``2**n_hidden`` states are enumerated by default (for ``log Z``, the mixture and
#: exact draws; the distribution's logp enumerates them at every evaluation, inside the graph).
MAX_HIDDEN_ENUMERATED = 16

#: Hidden states handled at once by the NumPy enumeration (bounds the memory to ~ this x n_visible floats).
_BLOCK = 4096


def _check_hidden(params, max_hidden):
    if params.n_hidden > max_hidden:
        raise EnumerationTooLarge(
            f"the mixture of a Gaussian RBM has 2**{params.n_hidden} components, more than the limit of "
            f"2**{max_hidden} (raise max_hidden if you have the time and memory)"
        )


def _hidden_log_weights(params, max_hidden):
    """All hidden states (2**H, H) and their log weights ``hbias·h + (vbias/σ)·Wh + |Wh|²/2``, in blocks."""
    _check_hidden(params, max_hidden)
    Hs = BERNOULLI.states(params.n_hidden)
    lw = np.empty(len(Hs))
    for start in range(0, len(Hs), _BLOCK):
        block = Hs[start : start + _BLOCK]
        m = block @ params.W.T  # (B, n): W h
        lw[start : start + _BLOCK] = block @ params.hbias + m @ (params.vbias / params.sigma) + 0.5 * (m**2).sum(-1)
    return Hs, lw


def _lse(x):
    mx = float(np.max(x))
    return mx + float(np.log(np.exp(x - mx).sum()))


def log_partition_exact(params: GaussianRBMParams, *, max_hidden: int = MAX_HIDDEN_ENUMERATED) -> float:
    """``log Z`` by enumerating the hidden layer (the Gaussian integral in closed form: :mod:`pymc_rbm.gaussian`)."""
    _, lw = _hidden_log_weights(params, max_hidden)
    return _lse(lw) + float(np.log(np.sqrt(2 * np.pi) * params.sigma).sum())


def hidden_marginal(params: GaussianRBMParams, *, max_hidden: int = MAX_HIDDEN_ENUMERATED):
    """The mixture: hidden states (2**H, H) and their probabilities ``p(h)`` (2**H,)."""
    Hs, lw = _hidden_log_weights(params, max_hidden)
    return Hs, np.exp(lw - _lse(lw))


def log_prob_exact(v, params: GaussianRBMParams, *, max_hidden: int = MAX_HIDDEN_ENUMERATED):
    """``log p(v) = -F(v) - log Z``, shape (...).

    :func:`pymc_rbm.estimators.log_likelihood` ``(params, data, log_z=None)``
    gives the same numbers and takes every layer type (and an estimate of
    ``log Z``); use it.
    """
    if isinstance(v, GaussianRBMParams) or not isinstance(params, GaussianRBMParams):
        raise TypeError(
            f"log_prob_exact takes (v, params) with params a GaussianRBMParams, got ({type(v).__name__}, "
            f"{type(params).__name__}); or call pymc_rbm.estimators.log_likelihood(params, data)"
        )
    v = params.visible.check(v, params.n_visible)
    return -free_energy(v, params) - log_partition_exact(params, max_hidden=max_hidden)


def mean_exact(params: GaussianRBMParams, *, max_hidden: int = MAX_HIDDEN_ENUMERATED) -> np.ndarray:
    """``E[v] = vbias + σ ∘ (W E[h])``, shape (n_visible,)."""
    Hs, p = hidden_marginal(params, max_hidden=max_hidden)
    return visible_mean(p @ Hs, params)


def sample_exact(params: GaussianRBMParams, size=(), rng=None, *, max_hidden: int = MAX_HIDDEN_ENUMERATED):
    """Independent exact draws of ``v``: ``h`` from its marginal, then ``v ~ N(vbias + σ W h, σ²)`` (stochastic)."""
    rng = np.random.default_rng(rng)
    size = (size,) if np.ndim(size) == 0 else tuple(size)
    m = int(np.prod(size, dtype=np.int64))
    Hs, p = hidden_marginal(params, max_hidden=max_hidden)
    h = Hs[rng.choice(len(p), size=m, p=p / p.sum())]
    v = visible_mean(h, params) + params.sigma * rng.standard_normal((m, params.n_visible))
    return v.reshape(size + (params.n_visible,))


"""Exact answers for categorical RBMs by enumerating the layer with fewer configurations.

``log Z``, ``log p(v)``, marginals, moments and independent exact draws, from
``2**n_hidden`` hidden states (``Σ_i logsumexp_k`` per state) or ``q**n_visible``
visible ones, whichever is fewer, in blocks of bounded memory.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from pymc_rbm.categorical.params import (
    CategoricalRBMParams,
    as_labels,
    free_energy,
    hidden_input,
    one_hot,
    visible_fields,
)
from pymc_rbm.enumeration import EnumerationTooLarge
from pymc_rbm.kernels.layer import GIBBS
from pymc_rbm.layers import BERNOULLI, logsumexp_last, softmax_last
from pymc_rbm.primitives import sigmoid, softplus

__all__ = [
    "MAX_ENUMERATED_STATES",
    "CategoricalEnumeration",
    "CategoricalMoments",
    "EnumerationTooLarge",
    "ExactSampler",
    "enumeration_plan",
    "log_partition_exact",
    "log_prob_exact",
    "marginals_exact",
    "moments_exact",
    "sample_exact",
    "visible_distribution",
]

#: Largest number of configurations (of the enumerated layer) that exact enumeration visits by default.
MAX_ENUMERATED_STATES = 2**20

#: Rows of an enumeration handled at once (bounds the memory of a block to ~ this × n_visible × q floats).
_BLOCK = 4096


class CategoricalEnumeration(NamedTuple):
    """Which layer an exact computation enumerates, and how many configurations that is.

    Attributes
    ----------
    layer : {"hidden", "visible"}
    n_configurations : int
    """

    layer: str
    n_configurations: int


def enumeration_plan(
    params: CategoricalRBMParams, max_states: int | None = MAX_ENUMERATED_STATES
) -> CategoricalEnumeration:
    """The smaller of the ``2**n_hidden`` hidden and ``q**n_visible`` visible enumerations, or a refusal.

    Raises
    ------
    EnumerationTooLarge
        When both exceed ``max_states`` (None: no limit); the message says
        how large each is and what to use instead.
    """
    n_h = 2**params.n_hidden
    n_v = params.n_states**params.n_visible
    plan = CategoricalEnumeration("hidden", n_h) if n_h <= n_v else CategoricalEnumeration("visible", n_v)
    if max_states is not None and plan.n_configurations > max_states:
        raise EnumerationTooLarge(
            f"exact enumeration of this categorical RBM needs 2**{params.n_hidden} = {n_h:.3g} hidden or "
            f"{params.n_states}**{params.n_visible} = {float(n_v):.3g} visible configurations, more than the limit "
            f"of {max_states} (raise max_states if you have the time); sample it with pm.sample instead "
            "(annealed importance sampling for categorical models is not written yet)"
        )
    return plan


def _hidden_block(params, start, stop):
    """Hidden states ``start .. stop - 1`` with their log weights ``hbias·h + Σ_i logsumexp_k f_ik(h)``."""
    Hs = BERNOULLI.states(params.n_hidden, start, stop)
    fields = visible_fields(Hs, params)  # (B, n, q)
    return Hs, fields, Hs @ params.hbias + logsumexp_last(fields).sum(axis=-1)


def _visible_block(params, start, stop):
    """Visible states ``start .. stop - 1`` (labels) with their hidden inputs and ``-F(v)``."""
    V = params.visible.states(params.n_visible, start, stop, dtype=np.int64)
    a = hidden_input(V, params)
    neg_f = params.vbias[np.arange(params.n_visible), V].sum(axis=-1) + softplus(a).sum(axis=-1)
    return V, a, neg_f


def _blocks(plan):
    for start in range(0, plan.n_configurations, _BLOCK):
        yield start, min(start + _BLOCK, plan.n_configurations)


def _log_weights(params, plan) -> np.ndarray:
    block = _hidden_block if plan.layer == "hidden" else _visible_block
    return np.concatenate([block(params, a, b)[2] for a, b in _blocks(plan)])


def _lse(x: np.ndarray) -> float:
    m = float(np.max(x))
    return m + float(np.log(np.exp(x - m).sum()))


def log_partition_exact(params: CategoricalRBMParams, *, max_states: int | None = MAX_ENUMERATED_STATES) -> float:
    """``log Z`` by exact enumeration of the layer with fewer configurations.

    Over the hidden layer, ``log Z = logsumexp_h [hbias·h + Σ_i logsumexp_k (vbias[i, k] + W[i, k]·h)]``;
    over the visible layer, ``log Z = logsumexp_v -F(v)``.

    Parameters
    ----------
    params : CategoricalRBMParams
    max_states : int or None, default :data:`MAX_ENUMERATED_STATES`

    Returns
    -------
    float

    Raises
    ------
    EnumerationTooLarge
        See :func:`enumeration_plan`.

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm.categorical import CategoricalRBMParams, log_partition_exact
    >>> p = CategoricalRBMParams(np.zeros((3, 4, 2)), np.zeros((3, 4)), np.zeros(2))
    >>> bool(np.isclose(log_partition_exact(p), np.log(4**3 * 2**2)))
    True
    """
    return _lse(_log_weights(params, enumeration_plan(params, max_states)))


def log_prob_exact(v, params: CategoricalRBMParams, *, log_z: float | None = None, max_states=MAX_ENUMERATED_STATES):
    """``log p(v) = -F(v) - log Z`` of labels (or one-hot data, :func:`as_labels`), shape (...)."""
    labels = as_labels(v, params)
    if log_z is None:
        log_z = log_partition_exact(params, max_states=max_states)
    return -free_energy(labels, params) - log_z


class CategoricalMoments(NamedTuple):
    """Exact moments of a categorical RBM (the gradient of ``log Z``).

    Attributes
    ----------
    log_z : float
    vh : ndarray of shape (n_visible, n_states, n_hidden)
        ``⟨1(v_i = k) h_j⟩``.
    v : ndarray of shape (n_visible, n_states)
        ``p(v_i = k)``, the single-site marginals.
    h : ndarray of shape (n_hidden,)
        ``p(h_j = 1)``.
    """

    log_z: float
    vh: np.ndarray
    v: np.ndarray
    h: np.ndarray


def moments_exact(
    params: CategoricalRBMParams, *, max_states: int | None = MAX_ENUMERATED_STATES
) -> CategoricalMoments:
    """``log Z`` and the exact moments ``⟨1(v_i = k) h_j⟩``, ``p(v_i = k)``, ``p(h_j = 1)`` by enumeration."""
    plan = enumeration_plan(params, max_states)
    log_z = _lse(_log_weights(params, plan))
    n, q, H = params.W.shape
    vh, vm, hm = np.zeros((n, q, H)), np.zeros((n, q)), np.zeros(H)
    for start, stop in _blocks(plan):
        if plan.layer == "hidden":
            Hs, fields, lw = _hidden_block(params, start, stop)
            w = np.exp(lw - log_z)
            P = softmax_last(fields)  # (B, n, q): p(v_i = k | h)
            hm += w @ Hs
            vm += np.einsum("b,bik->ik", w, P)
            vh += np.einsum("b,bik,bj->ikj", w, P, Hs)
        else:
            V, a, lw = _visible_block(params, start, stop)
            w = np.exp(lw - log_z)
            S = sigmoid(a)  # (B, H): p(h_j = 1 | v)
            oh = one_hot(V, q)
            hm += w @ S
            vm += np.einsum("b,bik->ik", w, oh)
            vh += np.einsum("b,bik,bj->ikj", w, oh, S)
    return CategoricalMoments(log_z, vh, vm, hm)


def marginals_exact(params: CategoricalRBMParams, *, max_states: int | None = MAX_ENUMERATED_STATES) -> np.ndarray:
    """The single-site marginals ``p(v_i = k)``, shape (n_visible, n_states), by enumeration."""
    return moments_exact(params, max_states=max_states).v


def visible_distribution(params: CategoricalRBMParams, *, max_states: int | None = MAX_ENUMERATED_STATES) -> np.ndarray:
    """``p(v)`` of every visible configuration in :meth:`Potts.states` order, shape (q**n_visible,).

    Enumerates the visible layer whatever its size relative to the hidden one
    (``log Z`` from the cheaper layer).
    """
    n_v = params.n_states**params.n_visible
    if max_states is not None and n_v > max_states:
        raise EnumerationTooLarge(
            f"the distribution of {params.n_states}**{params.n_visible} = {float(n_v):.3g} visible configurations "
            f"exceeds the limit of {max_states}"
        )
    lw = _log_weights(params, CategoricalEnumeration("visible", n_v))
    return np.exp(lw - _lse(lw))


class ExactSampler:
    """Independent exact draws of the visible labels, the enumeration done once (stochastic draws).

    Where the visible layer is the smaller enumeration, ``v`` is drawn from
    ``p(v)`` directly; otherwise ``h`` from its marginal
    ``p(h) ∝ exp(hbias·h) Π_i Σ_k exp(f_ik(h))``, then ``v ~ p(v | h)``: an
    exact draw of the joint ``(v, h)``, so of ``v``. The cumulative
    probabilities are kept, so a draw costs a binary search and, via the
    hidden layer, one Gibbs draw of the visible units.

    Parameters
    ----------
    params : CategoricalRBMParams
    max_states : int or None, default :data:`MAX_ENUMERATED_STATES`

    Raises
    ------
    EnumerationTooLarge
        See :func:`enumeration_plan`.
    """

    def __init__(self, params: CategoricalRBMParams, *, max_states: int | None = MAX_ENUMERATED_STATES):
        self.params = params
        self.plan = enumeration_plan(params, max_states)
        lw = _log_weights(params, self.plan)
        self.log_z = _lse(lw)
        cdf = np.cumsum(np.exp(lw - self.log_z))
        self._cdf = cdf / cdf[-1]

    def draw(self, rng: np.random.Generator, m: int) -> tuple[np.ndarray, np.ndarray | None]:
        """``m`` independent draws: labels (int64, (m, n_visible)) and, via the hidden layer, their ``h`` (else None).

        Uses ``m`` uniforms for the enumerated layer (then one per visible unit of each draw).
        """
        p = self.params
        idx = np.minimum(np.searchsorted(self._cdf, rng.random(m), side="right"), self.plan.n_configurations - 1)
        if self.plan.layer == "visible":
            powers = p.n_states ** np.arange(p.n_visible - 1, -1, -1, dtype=np.int64)
            return (idx[:, None] // powers) % p.n_states, None
        shifts = np.arange(p.n_hidden - 1, -1, -1, dtype=np.int64)
        h = ((idx[:, None] >> shifts) & 1).astype(np.float64)
        v, _ = p.visible.update(rng, None, visible_fields(h, p), GIBBS)
        return v.astype(np.int64), h


def sample_exact(params: CategoricalRBMParams, size=(), rng=None, *, max_states=MAX_ENUMERATED_STATES) -> np.ndarray:
    """Independent exact draws of the visible labels (stochastic; :class:`ExactSampler`).

    Parameters
    ----------
    params : CategoricalRBMParams
    size : int or tuple of int
    rng : numpy.random.Generator or seed, optional
    max_states : int or None

    Returns
    -------
    ndarray of int64 of shape ``size + (n_visible,)``
    """
    rng = np.random.default_rng(rng)
    size = (size,) if np.ndim(size) == 0 else tuple(size)
    m = int(np.prod(size, dtype=np.int64))
    v, _ = ExactSampler(params, max_states=max_states).draw(rng, m)
    return v.reshape(size + (params.n_visible,))

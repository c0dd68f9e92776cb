"""Likelihood-informed proposals for the visible layer: conditionals tilted by the other model terms.

Inside a larger model the visible units ``v`` of an RBM also enter other
terms ``L(v)`` (a likelihood, a Potential). The step methods sample the
augmented target ``π(v, h) ∝ p_RBM(v, h) L(v)``; given ``h`` the RBM part
factorises over the units, ``p_RBM(v | h) ∝ exp(a · v)`` with the visible
logits ``a = vbias + W·h``, but ``L`` need not.

A proposal that ignores ``L`` is exact once Metropolis-corrected, but
rarely accepted when ``L`` is informative. The tilted proposal draws every
unit independently from

    q(v' | h, v) = Π_i Bernoulli(v'_i; sigmoid(a_i + δ_i(v))),

where the tilt ``δ_i(v) = log L(v | v_i = 1) - log L(v | v_i = 0)`` is the
exact change of the other terms when unit ``i`` alone is switched on, at
the current state (Grathwohl, Swersky, Hashemi, Duvenaud & Maddison 2021
use its first-order approximation, the gradient; Zhang, Liu & Liu 2022
the same in discrete Langevin form). It is accepted with the
Metropolis-Hastings ratio of ``π(v | h)``:

    log r = log L(v') - log L(v)
            + Σ_i [v_i δ_i(v') - v'_i δ_i(v)]
            - Σ_i softplus(a_i + δ_i(v')) + Σ_i softplus(a_i + δ_i(v)),

the ``a · v`` terms of target and proposal cancelling. When ``L`` is a sum
of per-unit terms the tilt does not depend on ``v``, ``q`` is the exact
conditional ``π(v | h)`` and every proposal is accepted: the move is then
block Gibbs on the full target.

All functions take a batch of rows (the chains) and are pure: the random
generator is the only input they change.
"""

from __future__ import annotations

import numpy as np

from pymc_rbm.energy import softplus
from pymc_rbm.kernels.state import sigmoid_

__all__ = ["flip_tilt", "propose_tilted", "tilted_log_ratio"]


def flip_tilt(v: np.ndarray, log_rest: np.ndarray, log_rest_flipped: np.ndarray) -> np.ndarray:
    """The tilt ``δ_i = log L(v | v_i = 1) - log L(v | v_i = 0)`` from single-unit flips.

    Parameters
    ----------
    v : ndarray of shape (n_chains, n_visible)
        Current states, values in {0, 1}.
    log_rest : ndarray of shape (n_chains,)
        ``log L(v)``.
    log_rest_flipped : ndarray of shape (n_chains, n_visible)
        ``log L`` with unit ``i`` of the row flipped.

    Returns
    -------
    ndarray of shape (n_chains, n_visible)
        ``(1 - 2 v_i) (log L(v ⊕ e_i) - log L(v))``. Where both values are
        ``-inf`` the unit cannot change ``L``'s support and the tilt is 0;
        where only one is, the tilt is ``±inf`` (the proposal never leaves
        the support of ``L``).
    """
    with np.errstate(invalid="ignore"):
        diff = np.asarray(log_rest_flipped, dtype=np.float64) - np.asarray(log_rest, dtype=np.float64)[:, None]
    diff = np.where(np.isnan(diff), 0.0, diff)
    return (1.0 - 2.0 * v) * diff


def propose_tilted(rng: np.random.Generator, logits: np.ndarray, tilt: np.ndarray) -> np.ndarray:
    """Draw ``v'_i ~ Bernoulli(sigmoid(a_i + δ_i))`` independently (stochastic).

    Parameters
    ----------
    rng : numpy.random.Generator
    logits : ndarray of shape (n_chains, n_visible)
        The RBM's visible logits ``a = vbias + W·h``; not modified.
    tilt : ndarray of shape (n_chains, n_visible)
        ``δ`` from :func:`flip_tilt` (or any other tilt; the ratio of
        :func:`tilted_log_ratio` corrects for it).

    Returns
    -------
    ndarray of float64 of shape (n_chains, n_visible)
        0/1 values.
    """
    p = sigmoid_(np.add(logits, tilt, dtype=np.float64))
    return (rng.random(p.shape) < p).astype(np.float64)


def tilted_log_ratio(v, v_new, logits, tilt, tilt_new, log_rest, log_rest_new) -> np.ndarray:
    """Log Metropolis-Hastings ratio of the tilted move ``v -> v'`` for ``π(v | h) ∝ exp(a·v) L(v)``.

    Parameters
    ----------
    v, v_new : ndarray of shape (n_chains, n_visible)
        Current and proposed states.
    logits : ndarray of shape (n_chains, n_visible)
        The RBM's visible logits ``a`` given the current ``h``.
    tilt, tilt_new : ndarray of shape (n_chains, n_visible)
        ``δ(v)`` (which drew ``v'``) and ``δ(v')`` (which would draw ``v`` back).
    log_rest, log_rest_new : ndarray of shape (n_chains,)
        ``log L(v)`` and ``log L(v')``.

    Returns
    -------
    ndarray of shape (n_chains,)
        ``+inf`` where ``L(v) = 0`` and ``L(v') > 0`` (a move back into the
        support), ``-inf`` where ``L(v') = 0``.
    """
    forward = np.add(logits, tilt, dtype=np.float64)
    backward = np.add(logits, tilt_new, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        proposal = (
            np.sum(np.where(v > 0, tilt_new, 0.0), axis=-1)
            - np.sum(np.where(v_new > 0, tilt, 0.0), axis=-1)
            - softplus(backward).sum(axis=-1)
            + softplus(forward).sum(axis=-1)
        )
        out = np.asarray(log_rest_new, dtype=np.float64) - np.asarray(log_rest, dtype=np.float64) + proposal
    out = np.where(np.asarray(log_rest_new) == -np.inf, -np.inf, out)
    return np.where(np.isnan(out) & (np.asarray(log_rest) == -np.inf), np.inf, out)

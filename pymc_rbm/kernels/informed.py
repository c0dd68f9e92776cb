"""Likelihood-informed proposals for the visible layer: conditionals tilted by the other model terms.

Inside a larger model the visible units ``v`` of an RBM also enter other
terms ``L(v)`` (a likelihood, a Potential). The step methods sample the
augmented target ``π(v, h) ∝ p_RBM(v, h) L(v)``; given ``h`` the RBM part
factorises over the units, ``p_RBM(v | h) ∝ exp(a · v)`` with the visible
logits ``a = vbias + W·h``, but ``L`` need not.

A proposal that ignores ``L`` is exact once Metropolis-corrected, but
rarely accepted when ``L`` is informative. The tilted proposal applies the
sampler's own layer update (Gibbs, flip-the-state or their mixture) to the
tilted logits ``a + δ(v)``; for Gibbs every unit is drawn independently from

    q(v' | h, v) = Π_i Bernoulli(v'_i; sigmoid(a_i + δ_i(v))),

where the tilt ``δ_i(v) = log L(v | v_i = 1) - log L(v | v_i = 0)`` is the
exact change of the other terms when unit ``i`` alone is switched on, at
the current state (Grathwohl, Swersky, Hashemi, Duvenaud & Maddison 2021
use its first-order approximation, the gradient; Zhang, Liu & Liu 2022
the same in discrete Langevin form). It is accepted with the
Metropolis-Hastings ratio of ``π(v | h)``:

    log r = log L(v') - log L(v) + a·(v' - v)
            + log Q(v' -> v; a + δ(v')) - log Q(v -> v'; a + δ(v)),

``Q`` the operator's per-unit transition probabilities (for Gibbs this is
``Σ_i [v_i δ_i(v') - v'_i δ_i(v)] - Σ_i softplus(a_i + δ_i(v')) + Σ_i
softplus(a_i + δ_i(v))``). When ``L`` is a sum of per-unit terms the tilt
does not depend on ``v``, the tilted operator is reversible with respect to
the exact conditional ``π(v | h)`` and every proposal is accepted: the move
is then that operator (block Gibbs, or flip-the-state with its faster
mixing) on the full target.

All functions take a batch of rows (the chains) and are pure: the random
generator is the only input they change.
"""

from __future__ import annotations

import numpy as np

from pymc_rbm.kernels.flip import flip_layer, flip_probability, stay_probability
from pymc_rbm.kernels.layer import compiled_rule

__all__ = ["flip_tilt", "log_move_probability", "predictor_scan", "propose_tilted", "tilted_log_ratio"]


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


def propose_tilted(rng: np.random.Generator, v: np.ndarray, logits: np.ndarray, tilt: np.ndarray,
                   alpha: float = 0.0) -> np.ndarray:
    """The operator's layer update of ``v`` on the tilted logits ``a + δ`` (stochastic).

    Parameters
    ----------
    rng : numpy.random.Generator
    v : ndarray of shape (n_chains, n_visible)
        Current states (flip-the-state moves from them; Gibbs ignores them).
    logits : ndarray of shape (n_chains, n_visible)
        The RBM's visible logits ``a = vbias + W·h``; not modified.
    tilt : ndarray of shape (n_chains, n_visible)
        ``δ`` from :func:`flip_tilt` (or any other tilt; the ratio of
        :func:`tilted_log_ratio` corrects for it).
    alpha : float in [0, 1], default 0.0
        The operator: 0 Gibbs, 1 flip-the-state, or their mixture
        (:func:`~pymc_rbm.kernels.flip.flip_layer`).

    Returns
    -------
    ndarray of float64 of shape (n_chains, n_visible)
        0/1 values.
    """
    return flip_layer(rng, np.asarray(v, dtype=np.float64), np.add(logits, tilt, dtype=np.float64), alpha=alpha)


def log_move_probability(x, x_new, logit, alpha: float = 0.0) -> np.ndarray:
    """``log P(x -> x_new)`` of the operator's layer update at the given logits, units independent.

    Parameters
    ----------
    x, x_new : ndarray of shape (n_chains, n_units)
    logit : ndarray of shape (n_chains, n_units)
    alpha : float in [0, 1], default 0.0
        As for :func:`propose_tilted`.

    Returns
    -------
    ndarray of shape (n_chains,)
        ``-inf`` where the move is impossible (flip-the-state never keeps a
        unit in its less probable state).
    """
    changed = np.asarray(x) != np.asarray(x_new)
    p = np.where(changed, flip_probability(x, logit, alpha), stay_probability(x, logit, alpha))
    with np.errstate(divide="ignore"):
        return np.log(p).sum(axis=-1)


def tilted_log_ratio(v, v_new, logits, tilt, tilt_new, log_rest, log_rest_new, alpha: float = 0.0) -> np.ndarray:
    """Log Metropolis-Hastings ratio of the tilted move ``v -> v'`` for ``π(v | h) ∝ exp(a·v) L(v)``.

    ``log L(v') - log L(v) + a·(v' - v) + log Q(v' -> v; a + δ(v')) - log Q(v -> v'; a + δ(v))``
    with ``Q`` the operator's per-unit update (:func:`log_move_probability`).

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
    alpha : float in [0, 1], default 0.0
        The operator that proposed (0 Gibbs, 1 flip-the-state).

    Returns
    -------
    ndarray of shape (n_chains,)
        ``-inf`` where ``L(v') = 0`` or the way back is impossible; ``+inf``
        where ``L(v) = 0`` and ``L(v') > 0`` (a move back into the support).
    """
    v, v_new = np.asarray(v, dtype=np.float64), np.asarray(v_new, dtype=np.float64)
    forward = np.add(logits, tilt, dtype=np.float64)
    backward = np.add(logits, tilt_new, dtype=np.float64)
    log_rest, log_rest_new = np.asarray(log_rest, dtype=np.float64), np.asarray(log_rest_new, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        out = (
            log_rest_new - log_rest
            + ((v_new - v) * logits).sum(axis=-1)
            + log_move_probability(v_new, v, backward, alpha)
            - log_move_probability(v, v_new, forward, alpha)
        )
    out = np.where(log_rest_new == -np.inf, -np.inf, out)
    return np.where(np.isnan(out) & (log_rest == -np.inf), np.inf, out)


def predictor_scan(rng: np.random.Generator, v: np.ndarray, logits: np.ndarray, loadings, etas, log_rest,
                   row_values, alpha: float = 1.0):
    """One scan of single-unit updates of ``π(v | h) ∝ exp(a·v) Π_k L_k(v_k B_1, ..., v_k B_J)``, every row at once.

    Where the other terms read row ``k`` only through its linear predictors
    ``η_{kj} = v_k B_j``, flipping unit ``i`` moves them by ``±B_{j,i}``, so
    the exact conditional of that unit given the rest of its row, ``logit
    a_{ki} + log L_k(v_k | v_{ki} = 1) - log L_k(v_k | v_{ki} = 0)``, costs one
    evaluation of the readout at ``K`` rows of predictors. Each row visits
    its units in its own random order (the rows' updates are then independent
    of each other, as their conditionals are); each unit is updated by the operator's single-unit
    rule at its exact conditional logit (Gibbs, or Metropolised Gibbs for
    ``alpha = 1``), which leaves the conditional, and so ``π(v | h)``,
    invariant whatever the coupling of a row's units through ``L_k``: no
    proposal is rejected as a whole.

    Parameters
    ----------
    rng : numpy.random.Generator
    v : ndarray of float64 of shape (K, n_visible)
        0/1 rows; not modified.
    logits : ndarray of shape (K, n_visible)
        The RBM's visible logits ``a = vbias + W·h``.
    loadings : sequence of ndarray of shape (n_visible, m_j)
        ``B_j``.
    etas : sequence of ndarray of shape (K, m_j)
        ``v @ B_j``; not modified (the scan keeps its own, updated with every flip).
    log_rest : ndarray of shape (K,)
        ``log L_k`` at ``v``.
    row_values : callable
        ``row_values(etas) -> log L_k`` of every row, shape ``(K,)``.
    alpha : float in [0, 1], default 1.0
        The single-unit rule (:func:`~pymc_rbm.kernels.flip.flip_probability`).

    Returns
    -------
    v : ndarray of float64 of shape (K, n_visible)
    log_rest : ndarray of shape (K,)
        ``log L_k`` at the new rows.
    """
    rule = compiled_rule()
    v = np.array(v, dtype=np.float64)
    logits = np.ascontiguousarray(logits, dtype=np.float64)
    widths = np.cumsum([0] + [b.shape[1] for b in loadings])
    eta = np.ascontiguousarray(np.concatenate(etas, axis=1), dtype=np.float64)  # all predictors side by side
    rows = np.ascontiguousarray(np.concatenate(loadings, axis=1), dtype=np.float64)
    log_rest = np.array(log_rest, dtype=np.float64)
    n_rows, n = v.shape
    moved = np.empty_like(eta)
    parts = [moved[:, a:b] for a, b in zip(widths[:-1], widths[1:])]
    order = np.ascontiguousarray(rng.permuted(np.broadcast_to(np.arange(n), (n_rows, n)), axis=1).T)
    u = rng.random((n, n_rows))
    for step in range(n):
        rule.shift_predictors(v, order[step], eta, rows, moved)
        new = np.ascontiguousarray(row_values(parts), dtype=np.float64)
        rule.update_unit_of_rows(u[step], v, order[step], logits, log_rest, new, float(alpha), eta, moved)
    return v, log_rest

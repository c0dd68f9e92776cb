"""Replica rounds in one compiled call each: tempered rounds with their swaps, the informed proposal, ladders of models.

A tempered round (:func:`tempered_round`) sweeps every replica at its own
``β`` and swaps neighbouring replicas by the Metropolis rule; the informed
proposal (:func:`informed_proposal`) is its sweep without swaps, on visible
logits tilted by other model terms; a round of a ladder of models
(:func:`model_ladder_round`) sweeps every rung at its own model and swaps by
the models' free energies. The sweeps are those of
:mod:`pymc_rbm.kernels.compiled` (the one compiled sweep,
:func:`~pymc_rbm.kernels.chain_sweeps.sweep_rows`); the loops live in
:mod:`pymc_rbm.kernels.round_loops`. :func:`count_round_trips` counts the
round trips of the replicas' labels between the ends of a ladder.
"""

from __future__ import annotations

import functools

import numpy as np

from pymc_rbm.kernels.activations import FULL_EVERY
from pymc_rbm.kernels.layer import LayerRule

__all__ = [
    "tempered_round",
    "count_round_trips",
    "informed_proposal",
    "tilted_log_ratio",
    "model_ladder_round",
    "model_ladder_log_ratios",
]


@functools.cache
def _loops():
    """:mod:`pymc_rbm.kernels.round_loops`, imported on first use (importing the kernels does not load Numba)."""
    from pymc_rbm.kernels import round_loops

    return round_loops


_NO_EVIDENCE = np.zeros((1, 1, 1))
_NO_FIELDS = np.zeros((1, 1))


def tempered_round(rng: np.random.Generator, v, h, model, betas, n_swept: int, swaps, *,
                   rule: LayerRule = LayerRule(), evidence=None, sweeps=None, energies=None,
                   hidden_fields=None) -> None:
    """One replica-exchange round of the first ``n_swept`` replicas, in place, in one compiled call (stochastic).

    Each replica is swept at its own ``β`` (``sweeps[r]`` times, default once) with the layer rule
    ``rule`` on the activations times ``β`` (the compiled sweeps), then the pairs of the parity of
    ``swaps`` among those replicas are swapped by the Metropolis rule of
    :func:`~pymc_rbm.kernels.tempering.swap_neighbours`, so this is the
    round of :func:`~pymc_rbm.kernels.tempering.tempered_sweep` and
    :func:`~pymc_rbm.kernels.tempering.swap_neighbours` (the same
    transitions, another random stream).

    Parameters
    ----------
    rng : numpy.random.Generator
    v, h : ndarray of shape (n_temperatures, n_chains, n_visible / n_hidden), float64, C order
        Replicas, modified in place.
    model : tuple
        ``(W, W_T, vbias, hbias)``, float64 arrays, ``W`` and ``W_T`` (``W.T``) in C order: the model record
        of the compiled sweeps (:func:`~pymc_rbm.kernels.chain_sweeps.sweep_rows`).
    betas : ndarray of shape (n_temperatures,)
    n_swept : int
        Replicas ``0 .. n_swept - 1`` move and may swap (the rest are the caller's).
    swaps : tuple
        ``(parity, labels, swap_sum, swap_n)``: the parity of the pairs attempted, {0, 1} (none for
        ``n_swept`` or more); the labels, ints of shape (n_temperatures, n_chains), which follow their
        replicas through the swaps; arrays of shape (n_temperatures - 1,) that receive (are added) each
        attempted pair's acceptance probabilities and attempts.
    rule : LayerRule, default flip-the-state
        The layer update rule (its ``alpha`` is not read with ``gibbs``).
    evidence : ndarray of shape (n_temperatures, n_chains, n_visible), optional
        Per-unit evidence of every replica of every chain, added untempered to
        its visible logits: replica ``r`` of chain ``b`` then targets
        ``exp(-β_r E(v, h) + evidence[r, b]·v)``, and swaps use the exact ratio
        of the two targets (the RBM tempered, a per-unit likelihood kept).
        float64, C order.
    sweeps : ndarray of int of shape (n_temperatures,) or (n_swept,), optional
        Sweeps of each replica before the swaps (the explorers of the round,
        each sweep invariant for its replica's target, so the round is exact
        for any numbers >= 1). Default: one each; the random stream is then
        the same as before this option existed, draw for draw.
    hidden_fields : ndarray of shape (n_temperatures, n_hidden), optional
        A field added untempered to the hidden logits of each rung (the same
        for every chain): replica ``r`` then targets ``exp(-β_r E(v, h) +
        evidence[r, b]·v + hidden_fields[r]·h)``, and swaps use the exact ratio
        of the two targets (a reference that is independent units on both
        layers). float64, C order.
    energies : ndarray of shape (2, n_swept, n_chains), optional
        Receives the energy ``E(v, h)`` at each rung before its sweeps
        (``[0]``) and after them, before the swaps (``[1]``): what a tuning
        measures the explorers' relaxation from.
    """
    n_t, n_chains = v.shape[:2]
    n_swept = int(n_swept)
    if sweeps is None:
        n_sweeps = np.ones(n_swept, dtype=np.int64)
    else:
        n_sweeps = np.ascontiguousarray(np.asarray(sweeps)[:n_swept], dtype=np.int64)
        if n_sweeps.shape != (n_swept,) or np.any(n_sweeps < 1):
            raise ValueError(f"sweeps must give every one of the {n_swept} replicas at least one sweep, got {sweeps}")
    if energies is None:
        energies = np.empty((2, n_swept, n_chains))
    u = rng.random((int(n_sweeps.sum()), n_chains, h.shape[2] + v.shape[2]))
    swap_u = rng.random((max(n_t - 1, 1), n_chains))
    parity, labels, swap_sum, swap_n = swaps
    alpha = float(rule.alpha)
    target = (_NO_EVIDENCE if evidence is None else evidence, evidence is not None,
              _NO_FIELDS if hidden_fields is None else hidden_fields, hidden_fields is not None)
    _loops().tempered_round_sweeps(u, swap_u, v, h, model, (alpha, alpha, bool(rule.gibbs)),
                                   (n_swept, np.asarray(betas, dtype=np.float64), n_sweeps), target,
                                   (energies, True, True, _NO_EVIDENCE, False), (int(parity), labels, swap_sum, swap_n))


def count_round_trips(labels, last_end, went_up) -> int:
    """Round trips completed by the replicas at the ends of the ladder now (updates the two trackers in place).

    Parameters
    ----------
    labels : ndarray of int of shape (n_temperatures, n_chains)
        Which replica is at each rung.
    last_end : ndarray of int8 of shape (n_temperatures, n_chains)
        Per replica label: 0 no end visited yet, 1 the bottom rung, 2 the top.
    went_up : ndarray of bool of shape (n_temperatures, n_chains)
        Per label: reached the top since its last visit to the bottom.

    Returns
    -------
    int
        Labels back at the bottom after bottom, top, bottom.
    """
    return int(_loops().count_round_trips(labels, last_end, went_up))


_ONES = np.ones(64)


def informed_proposal(rng: np.random.Generator, v, h, params, W_T, tilt, *, betas=None, alpha: float = 1.0,
                      alpha_visible: float | None = None, gibbs: bool = False):
    """Per row: the hidden update, then the same operator's visible update on logits tilted by ``tilt`` (stochastic).

    The compiled form of the hidden layer update at each row's ``β``
    followed by :func:`~pymc_rbm.kernels.informed.propose_tilted` on
    ``β (a + tilt)``: the informed move of the RBM ``β θ`` with other terms
    ``β log L``.

    Parameters
    ----------
    rng : numpy.random.Generator
    v, h : ndarray of shape (n_rows, n_visible) / (n_rows, n_hidden), float64
        Not modified.
    params : RBMTensors
    W_T : ndarray of shape (n_hidden, n_visible)
    tilt : ndarray of shape (n_rows, n_visible) or (n_visible,)
        The flip tilt of ``log L`` at each row (not yet times ``β``).
    betas : ndarray of shape (n_rows,), optional
        Default 1.
    alpha, alpha_visible : float
        Flip-the-state mixture weights of the hidden update and of the
        visible proposal (default ``alpha``); ignored with ``gibbs``.
    gibbs : bool, default False

    Returns
    -------
    h_new : ndarray of shape (n_rows, n_hidden)
    proposal : ndarray of shape (n_rows, n_visible)
    logits : ndarray of shape (n_rows, n_visible)
        ``β (vbias + W·h_new)``, the untilted tempered visible logits.
    """
    n_rows = v.shape[0]
    u = rng.random((n_rows, h.shape[1] + v.shape[1]))
    h_new, proposal, logits = np.empty_like(h), np.empty_like(v), np.empty_like(v)
    betas = _ONES[:n_rows] if betas is None and n_rows <= _ONES.size else betas
    betas = np.ones(n_rows) if betas is None else np.asarray(betas, dtype=np.float64)
    tilt = np.asarray(tilt, dtype=np.float64)
    tilt = tilt.reshape(v.shape) if tilt.size == v.size else np.ascontiguousarray(np.broadcast_to(tilt, v.shape))
    alpha_v = alpha if alpha_visible is None else alpha_visible
    _loops().informed_proposal(u, v, h, (params.W, W_T, params.vbias, params.hbias),
                               (float(alpha), float(alpha_v), bool(gibbs)), betas, tilt, h_new, proposal, logits)
    return h_new, proposal, logits


def tilted_log_ratio(v, v_new, logits, tilt, tilt_new, log_rest, log_rest_new, *,
                     alpha: float = 1.0, gibbs: bool = False) -> np.ndarray:
    """:func:`pymc_rbm.kernels.informed.tilted_log_ratio` per row, compiled.

    Parameters
    ----------
    v, v_new, logits, tilt, tilt_new : ndarray of shape (n_rows, n_visible), float64
    log_rest, log_rest_new : ndarray of shape (n_rows,)
    alpha : float, default 1.0
    gibbs : bool, default False
        The operator (``gibbs`` or the mixture weight ``alpha``).

    Returns
    -------
    ndarray of shape (n_rows,)
    """
    f = lambda x: np.ascontiguousarray(x, dtype=np.float64)  # noqa: E731
    return _loops().tilted_log_ratio(f(v), f(v_new), f(logits), f(tilt), f(tilt_new), f(np.atleast_1d(log_rest)),
                                      f(np.atleast_1d(log_rest_new)), float(alpha), bool(gibbs))


def model_ladder_round(rng: np.random.Generator, v, h, a, h_off, models, n_sweeps: int, parity: int, labels, *,
                       alpha: float = 1.0, gibbs: bool = False):
    """One round of a ladder of models, in place, in two compiled calls (stochastic).

    ``n_sweeps`` sweeps of every rung at its own model (the sweeps of
    :func:`~pymc_rbm.kernels.compiled.carried_sweeps`, rung after rung, with the uniforms it would
    draw), then the swaps of the pairs ``(r, r + 1)`` of the given parity,
    accepted by the models' own free energies
    ``F_r(v_r) + F_{r+1}(v_{r+1}) - F_r(v_{r+1}) - F_{r+1}(v_r)``, whose
    cross hidden inputs ``hbias_r + v_{r+1} W_r`` follow from the carried
    ``hbias_r + v_r W_r`` by the rows of the units where the two states
    differ (or, when fewer, of the units on); the swapped replicas then draw
    their hidden units by Gibbs from their new models. The random stream is
    that of per-rung :func:`~pymc_rbm.kernels.compiled.carried_sweeps`, one uniform per attempted pair
    and chain (:func:`~pymc_rbm.kernels.metropolis.metropolis_accept`), and
    the Gibbs redraws pair by pair (the lower rung first), for batches that
    do not take the dense path (:func:`~pymc_rbm.kernels.compiled.dense`).

    Parameters
    ----------
    rng : numpy.random.Generator
    v : ndarray of shape (n_rungs, n_chains, n_visible), float64, C order
        Modified in place.
    h, a : ndarray of shape (sum_r n_chains * n_hidden_r,), float64
        The hidden states and their inputs ``hbias_r + v_r W_r``, rung ``r``'s
        ``(n_chains, n_hidden_r)`` block at ``h_off[r]:h_off[r + 1]``;
        modified in place.
    h_off : ndarray of int64 of shape (n_rungs + 1,)
    models : PackedModels
        The models' arrays end to end (:class:`~pymc_rbm.kernels.model_ladder.PackedModels`: each rung's
        ``W`` and ``W.T`` in C order at ``w_off[r]:w_off[r + 1]``, ``vbias`` of shape (n_rungs, n_visible),
        rung ``r``'s ``hbias`` at ``hb_off[r]:hb_off[r + 1]``), float64 and int64 arrays.
    n_sweeps : int
    parity : {0, 1}
    labels : ndarray of int64 of shape (n_rungs, n_chains)
        Follow their visible states through the swaps (in place).
    alpha : float, default 1.0
    gibbs : bool, default False

    Returns
    -------
    log_ratio : ndarray of shape (n_rungs - 1, n_chains)
        Of the attempted pairs (NaN elsewhere).
    accepted : ndarray of bool of shape (n_rungs - 1, n_chains)
    n_changed : ndarray of int64 of shape (n_rungs, n_chains)
        Visible units changed by each rung's sweeps.
    """
    loops = _loops()
    k, n_chains, n_v = v.shape
    n_h = np.diff(models.hb_off)
    u_off = np.concatenate([[0], np.cumsum(n_sweeps * n_chains * (n_h + n_v))])
    u = rng.random(int(u_off[-1]))
    n_pairs = len(range(parity, k - 1, 2))
    swap_u = rng.random((n_pairs, n_chains))
    log_ratio = np.full((k - 1, n_chains), np.nan)
    accepted = np.zeros((k - 1, n_chains), dtype=bool)
    n_changed = np.empty((k, n_chains), dtype=np.int64)
    loops.model_ladder_round((u, u_off), swap_u, v, (h, a, h_off), models, (float(alpha), float(alpha), bool(gibbs)),
                             int(parity), FULL_EVERY, labels, log_ratio, accepted, n_changed)
    n_took = accepted.sum(axis=1)  # redraws: per swapped chain, both rungs' hidden units
    n_redraw = int(n_took @ (n_h[:-1] + n_h[1:]))
    if n_redraw:
        loops.ladder_redraw_hidden(rng.random(n_redraw), h, a, h_off, models.hb_off, n_chains, int(parity), accepted)
    return log_ratio, accepted, n_changed


def model_ladder_log_ratios(v, a, h_off, models) -> np.ndarray:
    """The swap log ratios of :func:`model_ladder_round` for every neighbouring pair, compiled.

    Parameters
    ----------
    v, a, h_off, models
        As for :func:`model_ladder_round` (not modified).

    Returns
    -------
    ndarray of shape (n_rungs - 1, n_chains)
        ``F_r(v_r) + F_{r+1}(v_{r+1}) - F_r(v_{r+1}) - F_{r+1}(v_r)``.
    """
    k, n_chains = v.shape[:2]
    out = np.empty((k - 1, n_chains))
    _loops().ladder_log_ratios(v, a, h_off, models.W, models.w_off, models.vbias, models.hbias, models.hb_off, out)
    return out

"""Replica rounds and swaps, compiled: the loops of :mod:`pymc_rbm.kernels.replica_rounds`.

A tempered round sweeps each replica at its own ``β`` (with per-unit
evidence) by the one sweep of :func:`pymc_rbm.kernels.chain_sweeps.sweep_rows`
and swaps neighbouring replicas; the informed proposal is such a round
without swaps; a ladder of models sweeps each rung at its own model and
swaps by the models' free energies. Imported on first use.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from pymc_rbm.kernels.chain_sweeps import ROWS, free_energy, propagate, sweep_rows, sweeps
from pymc_rbm.kernels.update_rule import gibbs_rows, log_move


@njit(cache=True, nogil=True, inline="always")
def replica_rows(x):  # pragma: no cover - compiled
    """``(K, B, n)`` as ``(K B, n)`` (a view): replica ``r``'s chains are the rows ``r B .. (r + 1) B - 1``, the
    blocks of :func:`~pymc_rbm.kernels.chain_sweeps.sweep_rows`."""
    return x.reshape((x.shape[0] * x.shape[1], x.shape[2]))


@njit(cache=True, nogil=True)
def tempered_round_sweeps(u, swap_u, v, h, model, rule, ladder, target, record, swaps):  # pragma: no cover - compiled
    """One round of the first ``n_swept`` replicas of ``(K, B, ·)`` arrays, in place.

    Replica ``r`` of row ``b`` makes ``n_sweeps[r]`` sweeps at ``β_r``
    (:func:`~pymc_rbm.kernels.chain_sweeps.sweep_rows`, the activations summed
    afresh), its visible logits plus ``evidence[r, b]`` (untempered) with
    ``has_evidence``, its hidden logits plus ``h_fields[r]`` with
    ``has_h_fields``; each sweep leaves the replica's target invariant, so
    any number of them does. Then the pairs ``(r, r + 1)`` of
    the given parity (none for a parity of ``K`` or more) swap by the ratio of
    their targets ``exp(-β_r E + evidence_r·v + h_fields_r·h)``, ``(β_{r+1} - β_r)(E_{r+1} -
    E_r) + Σ_i (evidence_{r+1,i} - evidence_{r,i})(v_{r,i} - v_{r+1,i})`` (and the same sum over the
    hidden units and their fields) over
    the units that differ (so ``±1e300``, a value ruled out, never swamps the
    rest), accepted when ``log u < log ratio`` (:func:`swap_round`); labels follow their replicas,
    acceptance probabilities add to ``swap_sum`` and attempts to ``swap_n``.

    Parameters
    ----------
    u : (Σ_r n_sweeps[r], B, n_hidden + n_visible)
        The sweeps' uniforms, rung ``r``'s sweeps taking the rows from ``Σ_{q<r} n_sweeps[q]`` on.
    swap_u : (K - 1, B)
        The swaps' uniforms, row ``r`` pair ``r``'s.
    v, h : (K, B, n_visible), (K, B, n_hidden)
        The replicas, 0/1 floats.
    model, rule : tuple
        The records of :func:`~pymc_rbm.kernels.chain_sweeps.sweep_rows`: ``(W, W_T, vbias, hbias)`` and
        ``(alpha_h, alpha_v, gibbs)``.
    ladder : tuple
        ``(n_swept, betas, n_sweeps)``: the replicas swept (its ``blocks``), and each replica's β and
        number of sweeps.
    target : tuple
        ``(evidence, has_evidence, h_fields, has_h_fields)``, its ``target`` with the evidence of the
        replicas, (K, B, n_visible), and the fields of the rungs, (K, n_hidden).
    record : tuple
        ``(energies, energy_in, energy_out, logits_out, keep_logits)``, its ``record`` of the replicas:
        ``energies[0, r, b]`` and ``energies[1, r, b]`` (2, K, B) receive the energy ``E(v, h)`` of the
        state at rung ``r`` before its sweeps and after them (before the swaps; the explorer's relaxation,
        measured at no extra product); the swaps read ``energies[1]``, so ``energy_out`` wherever a pair is
        attempted. With ``keep_logits`` the last sweep's visible logits without the evidence go to
        ``logits_out`` (K, B, n_visible).
    swaps : tuple
        ``(parity, labels, swap_sum, swap_n)``: the parity of the pairs attempted, the labels (K, B) that
        follow their replicas, and the acceptance probabilities and attempts of each pair (K - 1,), added to.
    """
    n_swept, betas, _ = ladder
    evidence, has_evidence, h_fields, has_h_fields = target
    energies, energy_in, energy_out, logits_out, keep_logits = record
    parity, labels, swap_sum, swap_n = swaps
    k, n_b, n_v = v.shape
    n_h = h.shape[2]
    a_h = np.empty((n_b, n_h))
    a_v = np.empty((n_b, n_v))
    v_rows, h_rows = replica_rows(v), replica_rows(h)
    u_rows = u.reshape((u.shape[0], n_b * (n_h + n_v)))
    rows_record = (energies.reshape((2, energies.shape[1] * n_b)), energy_in, energy_out, replica_rows(logits_out),
                   keep_logits)
    sweep_rows(ROWS, (u_rows, n_h + n_v, n_h, n_h + n_v), v_rows, h_rows, model, rule, ladder,
               (replica_rows(evidence), has_evidence, h_fields, has_h_fields),
               (a_h, a_v, False, 0, 0), (h_rows, v_rows), rows_record,  # the activations afresh, the states in place
               (False, False, None, False))
    e = energies[1]
    log_ratio = np.empty((max(n_swept - 1, 0), n_b))
    for r in range(parity, n_swept - 1, 2):
        for b in range(n_b):
            lr = (betas[r + 1] - betas[r]) * (e[r + 1, b] - e[r, b])
            if has_evidence:
                for i in range(n_v):
                    if v[r, b, i] != v[r + 1, b, i]:
                        lr += (evidence[r + 1, b, i] - evidence[r, b, i]) * (v[r, b, i] - v[r + 1, b, i])
            if has_h_fields:
                for j in range(n_h):
                    if h[r, b, j] != h[r + 1, b, j]:
                        lr += (h_fields[r + 1, j] - h_fields[r, j]) * (h[r, b, j] - h[r + 1, b, j])
            log_ratio[r, b] = lr
            swap_sum[r] += np.exp(min(lr, 0.0))
            swap_n[r] += 1.0
    # a replica is its v and h, both exchanged; swap_u[r] is pair r's, so row i of swap_u[parity::2] the i-th's
    swap_round(parity, n_swept, swap_u[parity::2], log_ratio, v, h, labels, None)


@njit(cache=True, nogil=True, inline="always")
def exchange_rows(x, r, b):  # pragma: no cover - compiled
    """Exchange the rows ``x[r, b]`` and ``x[r + 1, b]`` of a ``(K, B, n)`` array in place."""
    for i in range(x.shape[2]):
        t = x[r, b, i]
        x[r, b, i] = x[r + 1, b, i]
        x[r + 1, b, i] = t


@njit(cache=True, nogil=True)
def swap_round(parity, n_rungs, swap_u, log_ratio, v, h, labels, accepted):  # pragma: no cover - compiled
    """The Metropolis swaps of a ladder's neighbouring pairs ``(r, r + 1)``, ``r = parity, parity + 2, ...``
    below ``n_rungs - 1``, in place: the swap round of the β-ladder (:func:`tempered_round_sweeps`) and of the
    ladder of models (:func:`model_ladder_round`).

    Chain ``b`` of pair ``r`` is accepted when ``log swap_u[(r - parity) // 2, b] < log_ratio[r, b]``; an
    accepted swap exchanges the rows ``[r, b]`` and ``[r + 1, b]`` of ``v``, of ``h`` (when given) and of
    ``labels``. Each ladder brings its own log ratio (that of its two targets) and carries any other state of
    its replicas itself.

    Parameters
    ----------
    parity : int
        0 or 1; no pair is attempted for ``n_rungs - 1`` or more.
    n_rungs : int
        The pairs attempted lie among the first ``n_rungs`` rungs.
    swap_u : (n_pairs, B)
        One uniform per attempted pair and chain, the pairs in order.
    log_ratio : (n_rungs - 1, B)
        Of the attempted pairs (read only there).
    v : (K, B, n_visible)
        The visible states.
    h : (K, B, n_hidden) or None
        The hidden states, where they follow their visible states (the β-ladder's replicas).
    labels : (K, B)
    accepted : (n_rungs - 1, B), bool, or None
        Receives, at the attempted pairs, whether each swap was accepted.
    """
    for r in range(parity, n_rungs - 1, 2):
        for b in range(labels.shape[1]):
            took = np.log(swap_u[(r - parity) // 2, b]) < log_ratio[r, b]
            if accepted is not None:
                accepted[r, b] = took
            if took:
                exchange_rows(v, r, b)
                if h is not None:
                    exchange_rows(h, r, b)
                lab = labels[r, b]
                labels[r, b] = labels[r + 1, b]
                labels[r + 1, b] = lab


@njit(cache=True, nogil=True)
def count_round_trips(labels, last_end, went_up):  # pragma: no cover - compiled
    """Round trips completed now: a label back at the bottom rung after reaching the top since its last visit.

    ``last_end[label, b]``: 0 none, 1 bottom, 2 top; ``went_up``: reached the top after the bottom.
    """
    k = labels.shape[0]
    trips = 0
    for b in range(labels.shape[1]):
        top = labels[k - 1, b]
        if last_end[top, b] == 1:
            went_up[top, b] = True
        last_end[top, b] = 2
        bottom = labels[0, b]
        if last_end[bottom, b] == 2 and went_up[bottom, b]:
            trips += 1
            went_up[bottom, b] = False
        last_end[bottom, b] = 1
    return trips


@njit(cache=True, nogil=True)
def informed_proposal(u, v, h, model, rule, betas, tilt, h_out, v_out, a_v):  # pragma: no cover - compiled
    """:func:`pymc_rbm.kernels.replica_rounds.informed_proposal`: a round of :func:`tempered_round_sweeps`
    with the rows as its replicas, one sweep each, no swaps, the evidence ``β_r tilt`` and the logits kept
    in ``a_v``; ``model`` and ``rule`` are its records."""
    n, n_v = v.shape
    h_out[:, :] = h
    v_out[:, :] = v
    evidence = np.empty((n, 1, n_v))
    for r in range(n):
        for i in range(n_v):
            evidence[r, 0, i] = betas[r] * tilt[r, i]
    labels = np.zeros((n, 1), dtype=np.int64)
    no_swaps = np.zeros(max(n - 1, 1))
    tempered_round_sweeps(u.reshape(n, 1, u.shape[1]), np.ones((max(n - 1, 1), 1)), v_out.reshape(n, 1, n_v),
                          h_out.reshape(n, 1, h.shape[1]), model, rule, (n, betas, np.ones(n, dtype=np.int64)),
                          (evidence, True, np.empty((1, 1)), False),
                          (np.empty((2, n, 1)), False, False, a_v.reshape(n, 1, n_v), True),  # only the logits
                          (n, labels, no_swaps, no_swaps))


@njit(cache=True, nogil=True)
def tilted_log_ratio(v, v_new, a, tilt, tilt_new, log_rest, log_rest_new, alpha, gibbs):  # pragma: no cover
    """Per row, :func:`pymc_rbm.kernels.informed.tilted_log_ratio` (2-D arrays, 1-D ``log_rest``)."""
    out = np.empty(v.shape[0])
    for r in range(v.shape[0]):
        if log_rest_new[r] == -np.inf:
            out[r] = -np.inf
            continue
        if log_rest[r] == -np.inf:
            out[r] = np.inf
            continue
        x = log_rest_new[r] - log_rest[r]
        for i in range(v.shape[1]):
            x += (v_new[r, i] - v[r, i]) * a[r, i]
        x += log_move(v_new[r], v[r], a[r] + tilt_new[r], alpha, gibbs)
        x -= log_move(v[r], v_new[r], a[r] + tilt[r], alpha, gibbs)
        out[r] = x
    return out


# A ladder of models (kernels/model_ladder.py): the models' arrays are packed end to end in flat buffers,
# rung ``r`` at ``off[r]:off[r + 1]`` (``W`` of rung ``r`` is ``W_flat[w_off[r]:w_off[r + 1]].reshape(n_visible,
# n_hidden_r)``), so that one call serves models of any hidden sizes and the same compiled code serves every
# number of rungs.


@njit(cache=True, nogil=True, inline="always")
def rung_rows(flat, off, r, n_rows):  # pragma: no cover - compiled
    """Rung ``r``'s block of a packed buffer as an ``(n_rows, ·)`` array (a view)."""
    return flat[off[r]:off[r + 1]].reshape((n_rows, (off[r + 1] - off[r]) // n_rows))


@njit(cache=True, nogil=True)
def ladder_pair_log_ratio(v_a, v_b, a_a, a_b, W_a, W_b, vbias_a, vbias_b, hbias_a, hbias_b, a_of_b,
                          b_of_a):  # pragma: no cover - compiled
    """``F_a(v_a) + F_b(v_b) - F_a(v_b) - F_b(v_a)`` of one chain (rows of shape (1, ·)), from the carried
    ``a_a = hbias_a + v_a W_a`` and ``a_b``; the cross inputs ``hbias_a + v_b W_a`` and ``hbias_b + v_a W_b``
    go to ``a_of_b`` and ``b_of_a``, each by the rows of the units where ``v_a`` and ``v_b`` differ or, when
    fewer, of the units on (:func:`~pymc_rbm.kernels.chain_sweeps.propagate`)."""
    a_of_b[:, :] = a_a
    propagate(a_of_b, v_a, v_b, W_a, hbias_a)
    b_of_a[:, :] = a_b
    propagate(b_of_a, v_b, v_a, W_b, hbias_b)
    return (free_energy(v_a, a_a, vbias_a)[0] + free_energy(v_b, a_b, vbias_b)[0]
            - free_energy(v_b, a_of_b, vbias_a)[0] - free_energy(v_a, b_of_a, vbias_b)[0])


@njit(cache=True, nogil=True)
def ladder_log_ratios(v, a, h_off, W, w_off, vbias, hbias, hb_off, log_ratio):  # pragma: no cover - compiled
    """:func:`ladder_pair_log_ratio` of every pair ``(r, r + 1)`` into ``log_ratio[r]``; ``v`` (K, B, n_visible),
    the rest packed."""
    k, n_b, n_v = v.shape
    for r in range(k - 1):
        a_r, a_s = rung_rows(a, h_off, r, n_b), rung_rows(a, h_off, r + 1, n_b)
        W_r, W_s = rung_rows(W, w_off, r, n_v), rung_rows(W, w_off, r + 1, n_v)
        hb_r, hb_s = hbias[hb_off[r]:hb_off[r + 1]], hbias[hb_off[r + 1]:hb_off[r + 2]]
        a_of_b, b_of_a = np.empty((1, a_r.shape[1])), np.empty((1, a_s.shape[1]))
        for b in range(n_b):
            log_ratio[r, b] = ladder_pair_log_ratio(v[r, b:b + 1], v[r + 1, b:b + 1], a_r[b:b + 1], a_s[b:b + 1],
                                                    W_r, W_s, vbias[r], vbias[r + 1], hb_r, hb_s, a_of_b, b_of_a)


@njit(cache=True, nogil=True)
def model_ladder_round(u, swap_u, v, hidden, models, rule, parity, full_every, labels, log_ratio, accepted,
                       n_changed):  # pragma: no cover - compiled
    """One round of a ladder of models in place: :func:`~pymc_rbm.kernels.chain_sweeps.sweeps` of every rung at its
    model (the visible activation computed afresh, the count of incremental updates from 0), the visible units that
    changed into ``n_changed``; then the pairs ``(r, r + 1)``, ``r = parity, parity + 2, ...``:
    :func:`ladder_pair_log_ratio` into ``log_ratio[r]`` and the swap round of :func:`swap_round` (accepted when
    ``log swap_u[(r - parity) // 2, b] < log_ratio[r, b]``, into ``accepted[r, b]``, exchanging the visible rows and
    labels); each swapped rung then takes its cross hidden input. The hidden units of the swapped replicas are left
    for :func:`ladder_redraw_hidden`. Each pair's log ratio is computed right after its upper rung's sweep, while
    the two models' weights are in the caches; the result is the same in any order.

    Parameters
    ----------
    u : tuple
        ``(uniforms, u_off)``: rung ``r``'s sweeps take the block ``uniforms[u_off[r]:u_off[r + 1]]``, of shape
        (n_sweeps, B (n_hidden_r + n_visible)) as :func:`pymc_rbm.kernels.compiled.carried_sweeps` draws them.
    swap_u : (n_pairs, B)
        One uniform per attempted pair and chain.
    v : (K, B, n_visible)
    hidden : tuple
        ``(h, a, h_off)``: the hidden states and their inputs ``hbias_r + v_r W_r``, packed, rung ``r``'s
        (B, n_hidden_r) block at ``h_off[r]:h_off[r + 1]``.
    models : PackedModels
        The models' arrays end to end (:class:`~pymc_rbm.kernels.model_ladder.PackedModels`: ``W``, ``W_T``,
        ``w_off``, ``vbias`` (K, n_visible), ``hbias``, ``hb_off``).
    rule : tuple
        ``(alpha_h, alpha_v, gibbs)``, the record of :func:`~pymc_rbm.kernels.chain_sweeps.sweep_rows`.
    parity : int
    full_every : int
        As for :func:`~pymc_rbm.kernels.chain_sweeps.sweeps`.
    labels : (K, B)
        Follow their visible states through the swaps.
    log_ratio : (K - 1, B)
    accepted : (K - 1, B), bool
    n_changed : (K, B)
    """
    uniforms, u_off = u
    h, a, h_off = hidden
    W, W_T, w_off, vbias, hbias, hb_off = models
    k, n_b, n_v = v.shape
    a_v = np.empty((n_b, n_v))
    start = np.empty((n_b, n_v))
    cross = np.empty_like(a)  # a swapped rung's new hidden input, hbias_r + (its partner's v) W_r, packed as a
    for r in range(k):
        n_h = (hb_off[r + 1] - hb_off[r])
        h_r, a_r = rung_rows(h, h_off, r, n_b), rung_rows(a, h_off, r, n_b)
        start[:, :] = v[r]
        model_r = (rung_rows(W, w_off, r, n_v), rung_rows(W_T, w_off, r, n_h), vbias[r], hbias[hb_off[r]:hb_off[r + 1]])
        sweeps(rung_rows(uniforms, u_off, r, (u_off[r + 1] - u_off[r]) // (n_b * (n_h + n_v))), v[r], h_r, model_r,
               rule, (a_r, a_v, False, 0, full_every))
        for b in range(n_b):
            c = 0
            for i in range(n_v):
                if v[r, b, i] != start[b, i]:
                    c += 1
            n_changed[r, b] = c
        p = r - 1  # the pair (r - 1, r) once its upper rung has been swept
        if p < parity or (p - parity) % 2 != 0:
            continue
        a_p = rung_rows(a, h_off, p, n_b)
        W_p = rung_rows(W, w_off, p, n_v)
        cross_p, cross_r = rung_rows(cross, h_off, p, n_b), rung_rows(cross, h_off, r, n_b)
        for b in range(n_b):
            log_ratio[p, b] = ladder_pair_log_ratio(v[p, b:b + 1], v[r, b:b + 1], a_p[b:b + 1], a_r[b:b + 1], W_p,
                                                    rung_rows(W, w_off, r, n_v), vbias[p], vbias[r],
                                                    hbias[hb_off[p]:hb_off[r]], hbias[hb_off[r]:hb_off[r + 1]],
                                                    cross_p[b:b + 1], cross_r[b:b + 1])
    swap_round(parity, k, swap_u, log_ratio, v, None, labels, accepted)  # the visible states; the hidden are redrawn
    for p in range(parity, k - 1, 2):
        for r in (p, p + 1):
            a_r, cross_r = rung_rows(a, h_off, r, n_b), rung_rows(cross, h_off, r, n_b)
            for b in range(n_b):
                if accepted[p, b]:
                    a_r[b, :] = cross_r[b]


@njit(cache=True, nogil=True)
def ladder_redraw_hidden(u, h, a, h_off, hb_off, n_b, parity, accepted):  # pragma: no cover - compiled
    """Redraw by Gibbs (:func:`~pymc_rbm.kernels.update_rule.gibbs_rows`) the hidden units of the replicas that
    :func:`model_ladder_round` swapped, pair by pair, the lower rung's then the upper's, chains in order, with the
    uniforms ``u`` in that order (the order of :func:`pymc_rbm.kernels.model_ladder.model_ladder_round`'s per-rung
    redraws)."""
    # a hidden draw, not a sweep: the rule of the per-rung path's redraws (LayerRule.update), so the same values
    pos = 0
    for p in range(parity, accepted.shape[0], 2):
        for r in (p, p + 1):
            n_h = hb_off[r + 1] - hb_off[r]
            h_r, a_r = rung_rows(h, h_off, r, n_b), rung_rows(a, h_off, r, n_b)
            for b in range(n_b):
                if accepted[p, b]:
                    gibbs_rows(u[pos:pos + n_h].reshape((1, n_h)), a_r[b:b + 1], h_r[b:b + 1])
                    pos += n_h

"""The cold replica's moves when other model terms involve the RBM: informed moves, the swap that carries ``L``.

:class:`ColdReplicaMoves` is the part of :class:`~pymc_rbm.step_methods.ReplicaExchange`
that only the replica at ``β = 1`` needs when the model's other terms ``L(v)``
involve the visible units: its informed visible move (a proposal tilted by
the exact change of ``log L`` when each unit alone flips, accepted by the
Metropolis-Hastings ratio of :func:`~pymc_rbm.kernels.informed.tilted_log_ratio`),
row by row or for all rows at once where ``L`` factorises over rows, or, where
the row terms read ``v`` only through linear predictors ``v @ B`` (Gaussian,
logistic or Poisson readouts), a scan of single-unit updates at their exact
conditionals (:func:`~pymc_rbm.kernels.informed.predictor_scan`); the swap
of the ladder's top rung with it, accepted with ``L``; and the round of a
ladder that tempers the whole posterior ``[p(v, h) L(v)]^β``. The invariant
target and why each move leaves it invariant are in
:mod:`pymc_rbm.step_methods.tempered`. The methods read the step's replicas
(``_replicas``, ``betas``, ``replica_labels``), its other terms
(``other_terms``), its operator (``informed_alpha``, ``keeps_hidden``) and
its generator ``rng``.

**Tempering the whole posterior.** When ``L`` involves no free variable
but ``v`` (a likelihood with known loadings and noise, a Potential of ``v``
alone) and the variable is one chain, no target depends on another variable
even if ``L`` is tempered. At its first adaptation, if the RBM needs
tempering at all, the step then switches to a ladder of
``[p_RBM(v, h) L(v)]^β``: every replica makes the informed move at its
``β`` (the informed move of the RBM ``β θ`` with other terms ``β log L``) and
neighbours swap with ``exp((β_{r+1} - β_r)(U_{r+1} - U_r))``,
``U = E - log L``. Modes that the likelihood creates or reweights are then
crossed at high temperature too, rather than only through the one swap into
the cold replica.
"""

from __future__ import annotations

import numpy as np

from pymc_rbm.energy import energy, hidden_activation, visible_activation
from pymc_rbm.kernels import replica_rounds
from pymc_rbm.kernels.informed import predictor_scan, propose_tilted, tilted_log_ratio
from pymc_rbm.kernels.metropolis import acceptance_probability, metropolis_accept
from pymc_rbm.kernels.tempering import TemperedState, exchange_pairs, swap_pairs, tempered_log_ratio

__all__ = ["ColdReplicaMoves"]


class ColdReplicaMoves:
    """The moves of the cold replica of :class:`~pymc_rbm.step_methods.ReplicaExchange` with other terms."""

    def _posterior_round(self, point, params, accept_sum, accepted, swap_sum, swap_n):
        """One round of a ladder that tempers the whole posterior of one chain, ``[p(v, h) L(v)]^β``.

        Used when ``L`` involves no free variable but ``v`` (its other inputs
        are constants or data), so no target depends on another variable.
        Every replica makes the informed move at its ``β`` (logits, tilt and
        ``log L`` all times ``β``: the informed move of the RBM ``β θ`` with
        other terms ``β log L``), then neighbours swap with the ratio
        ``exp((β_{r+1} - β_r)(U_{r+1} - U_r))``, ``U = E - log L``. Two
        vectorised evaluations of ``L`` per round serve all replicas.
        """
        state = self._replicas
        beta = self.betas[:, None]
        v, h = state.v[:, 0], state.h[:, 0]
        log_rest, tilt = self.other_terms.tilts(point, v, self._shape, self._out_dtype)
        if self.compiled_rounds:
            h, proposal, logits = replica_rounds.informed_proposal(
                self.rng, v, h, self.params, self.W_T, tilt, betas=self.betas, alpha=self.alpha,
                alpha_visible=self.informed_alpha, gibbs=not self.keeps_hidden)
        else:
            a_h = beta * hidden_activation(v, params)
            h = self._update_hidden(h, a_h) if self.keeps_hidden else self._draw_hidden(a_h)
            logits = beta * visible_activation(h, params)
            proposal = propose_tilted(self.rng, v, logits, beta * tilt, self.informed_alpha)
        state.h[:, 0] = h
        moved = np.flatnonzero(np.any(proposal != v, axis=1))
        accept_p = np.ones(v.shape[0])
        if moved.size:
            log_new, tilt_new = self.other_terms.tilts(point, proposal[moved], self._shape, self._out_dtype)
            b = beta[moved]
            args = (v[moved], proposal[moved], logits[moved], b * tilt[moved], b * tilt_new,
                    b[:, 0] * log_rest[moved], b[:, 0] * log_new)
            if self.compiled_rounds:
                log_ratio = replica_rounds.tilted_log_ratio(*args, alpha=self.informed_alpha, gibbs=not self.keeps_hidden)
            else:
                log_ratio = tilted_log_ratio(*args, self.informed_alpha)
            accept_p[moved] = acceptance_probability(log_ratio)
            took = moved[metropolis_accept(self.rng, log_ratio)]
            v[took] = proposal[took]
            log_rest[took] = log_new[np.searchsorted(moved, took)]
        accept_sum[0] += accept_p[-1]
        accepted[0] += float(np.array_equal(v[-1], proposal[-1]))
        state.v[:, 0] = v
        k = self.n_temperatures
        if k > 1:
            u = energy(v, h, params) - log_rest
            pairs = swap_pairs(k, state.n_rounds % 2)
            exchange_pairs(self.rng, state.v, state.h, tempered_log_ratio(self.betas, u[:, None]), pairs,
                           carried=(self.replica_labels, log_rest[:, None]), record=(swap_sum, swap_n))
            self._replicas = TemperedState(state.v, state.h, state.n_rounds + 1)
            self._count_round_trips()
        self._tilt = None
        return state.v[-1].astype(self._out_dtype).reshape(self._shape), float(log_rest[-1])

    def _rest_value(self, point, v_int, moved: bool) -> float:
        """``log L`` at the incoming state, cached while ``v`` and ``L``'s other inputs stay."""
        others = [point[name] for name in self._rest_input_names if name != self._name]
        cache = self.carried.rest
        if not moved and cache is not None and all(np.array_equal(a, b) for a, b in zip(others, cache[0])):
            return cache[1]
        if self.row_wise:
            value = self.other_terms.row_values(point, v_int[None])[0]
        else:
            value = self.other_terms.log_rest(point, v_int)
        self.carried.rest = ([np.array(a, copy=True) for a in others], value)
        self._tilt = None  # the tilt at the state the step left no longer applies
        return value

    def _cold_sweep(self, point, params, v_int, log_rest, accept_sum, accepted):
        """The cold replica's hidden update, then its (informed or corrected) visible move, row by row."""
        if self.row_wise:
            return self._cold_sweep_rows(point, params, v_int, log_rest, accept_sum, accepted)
        state = self._replicas
        v = state.v[-1]
        single = self._n_chains == 1  # then the tilt at the current state is kept between sweeps
        if single and self.informed and self.other_terms.predictors is not None:  # one row read through v @ B
            v_int, log_rest = self._cold_scan_rows(point, params, accept_sum, accepted)
            self._tilt = None
            return v_int, float(log_rest[0])
        if single and self.informed and self.compiled_rounds:  # hidden update and tilted proposal in one call
            if self._tilt is None:
                self._tilt, log_rest = self.other_terms.tilt(point, v_int, 0, log_rest)
            h, proposal, a_v = replica_rounds.informed_proposal(
                self.rng, v, state.h[-1], self.params, self.W_T, self._tilt, alpha=self.alpha,
                alpha_visible=self.informed_alpha, gibbs=not self.keeps_hidden)
            state.h[-1] = h
            return self._visible_move(point, v, v_int, log_rest, a_v, proposal[0], 0, accept_sum, accepted)
        a_h = hidden_activation(v, params)
        h = self._update_hidden(state.h[-1], a_h) if self.keeps_hidden else self._draw_hidden(a_h)
        state.h[-1] = h
        a_v = visible_activation(h, params)
        for row in range(self._n_chains):
            if self.informed:
                if single and self._tilt is not None:
                    tilt = self._tilt
                else:
                    tilt, log_rest = self.other_terms.tilt(point, v_int, row, log_rest)
                    if single:
                        self._tilt = tilt
                proposal = propose_tilted(self.rng, v[row][None], a_v[row][None], tilt[None], self.informed_alpha)[0]
            else:
                proposal = self._update_visible(v[row][None], a_v[row][None])[0]
            v_int, log_rest = self._visible_move(point, v, v_int, log_rest, a_v, proposal, row, accept_sum, accepted,
                                                 tilt=tilt if self.informed else None)
        return v_int, log_rest

    def _cold_sweep_rows(self, point, params, v_int, log_rest, accept_sum, accepted):
        """The cold replica's hidden update, then the informed visible move of every row at once.

        Where ``L`` factorises over the rows, ``L(v) = Π_k L_k(v_k)``, the
        Metropolis-within-Gibbs scan over the rows of :meth:`_cold_sweep`
        accepts row ``k``'s proposal by a ratio that involves ``L_k`` alone, and
        no row's proposal or ratio depends on another row's outcome: the scan
        is then the product of independent moves, one per row, made together.
        ``log_rest`` holds ``log L_k`` of every row (shape ``(n_chains,)``);
        two vectorised evaluations of the row terms per sweep (at the current
        rows, kept between sweeps, and at the proposals) serve all rows.
        """
        if self.other_terms.predictors is not None:
            return self._cold_scan_rows(point, params, accept_sum, accepted)
        state = self._replicas
        v = state.v[-1]
        a_h = hidden_activation(v, params)
        h = self._update_hidden(state.h[-1], a_h) if self.keeps_hidden else self._draw_hidden(a_h)
        state.h[-1] = h
        a_v = visible_activation(h, params)
        if self._tilt is None:
            values, tilt = self.other_terms.row_tilts(point, v_int[None])
            log_rest, self._tilt = values[0], tilt[0]
        proposal = propose_tilted(self.rng, v, a_v, self._tilt, self.informed_alpha)
        moved = np.flatnonzero((proposal != v).any(axis=1))
        accept_p = np.ones(v.shape[0])
        took = moved[:0]
        if moved.size:
            new_int = proposal.astype(self._out_dtype).reshape(self._shape)
            values, tilt = self.other_terms.row_tilts(point, new_int[None])
            log_new, tilt_new = values[0], tilt[0]
            log_ratio = tilted_log_ratio(v[moved], proposal[moved], a_v[moved], self._tilt[moved], tilt_new[moved],
                                         log_rest[moved], log_new[moved], alpha=self.informed_alpha)
            accept_p[moved] = acceptance_probability(log_ratio)
            took = moved[metropolis_accept(self.rng, log_ratio)]
            v[took] = proposal[took]
            v_int = v_int.copy()
            v_int[took] = new_int[took]
            log_rest = log_rest.copy()
            log_rest[took] = log_new[took]
            self._tilt[took] = tilt_new[took]
        accept_sum += accept_p
        accepted += 1.0
        accepted[np.setdiff1d(moved, took)] -= 1.0
        return v_int, log_rest

    def _cold_scan_rows(self, point, params, accept_sum, accepted):
        """The cold replica's hidden update, then the visible update of every row by single-unit scans, where the
        row terms read ``v`` through ``v @ B``.

        A row term ``L_k(v_k B)`` couples the units of its row; a move that
        changes many of them at once is then almost always rejected when
        ``L_k`` is informative (many readouts, little noise), however its
        proposal is tilted. A scan of single-unit updates at their exact
        conditionals (:func:`~pymc_rbm.kernels.informed.predictor_scan`) is
        never rejected, and its cost per scan, ``n_visible`` evaluations of the
        readout at ``K x m`` predictors, is that of one evaluation of the
        whole term. Returns the rows in the variable's dtype and shape, and ``log L_k`` of each.
        """
        state = self._replicas
        v = state.v[-1]
        a_h = hidden_activation(v, params)
        state.h[-1] = self._update_hidden(state.h[-1], a_h) if self.keeps_hidden else self._draw_hidden(a_h)
        predictors = self.other_terms.predictors
        loadings = predictors.loadings(point)
        etas = predictors.predictors(v, loadings)
        log_rest = predictors.row_values(point, etas)
        v[:], log_rest = predictor_scan(self.rng, v, visible_activation(state.h[-1], params), loadings, etas,
                                        log_rest, lambda e: predictors.row_values(point, e), self.alpha)
        accept_sum += 1.0  # exact conditionals: nothing is rejected
        accepted += 1.0
        return v.astype(self._out_dtype).reshape(self._shape), log_rest

    def _visible_move(self, point, v, v_int, log_rest, a_v, proposal, row, accept_sum, accepted, tilt=None):
        """Accept or reject row ``row``'s proposal for ``π(v | h) ∝ p(v | h) L(v)`` (tilted or plain ratio)."""
        if np.array_equal(proposal, v[row]):
            accept_sum[row] += 1.0
            accepted[row] += 1.0
            return v_int, log_rest
        new_int = v_int.copy()
        new_int.reshape(self._n_chains, -1)[row] = proposal
        if self.informed:
            tilt = self._tilt if tilt is None else tilt
            tilt_new, log_new = self.other_terms.tilt(point, new_int, row)
            if self.compiled_rounds:
                log_ratio = float(replica_rounds.tilted_log_ratio(
                    v[row][None], proposal[None], a_v[row][None], tilt[None], tilt_new[None], log_rest, log_new,
                    alpha=self.informed_alpha, gibbs=not self.keeps_hidden)[0])
            else:
                log_ratio = tilted_log_ratio(
                    v[row][None], proposal[None], a_v[row][None], tilt[None], tilt_new[None],
                    np.array([log_rest]), np.array([log_new]), alpha=self.informed_alpha,
                )[0]
        else:
            log_new = self.other_terms.log_rest(point, new_int)
            log_ratio = np.inf if log_rest == -np.inf else log_new - log_rest
        accept_sum[row] += acceptance_probability(log_ratio)
        if metropolis_accept(self.rng, log_ratio):
            accepted[row] += 1.0
            v[row] = proposal
            v_int, log_rest = new_int, log_new
            if self._n_chains == 1 and self.informed:
                self._tilt = tilt_new
        return v_int, log_rest

    def _swap_cold(self, point, params, v_int, log_rest, swap_sum, swap_n):
        """The swap of the top rung with the cold replica, accepted with ``L``: all rows at once where ``L``
        factorises over rows, else row by row at the batch where only that row changed."""
        state = self._replicas
        k, n = self.n_temperatures, self._n_chains
        if self.row_wise:  # every row at once, L_k evaluated for all rows in one call
            e = energy(state.v[-2:], state.h[-2:], params)
            hot_int = state.v[-2].astype(self._out_dtype).reshape(self._shape)
            if self.other_terms.predictors is not None:  # the scans need no tilt
                values, tilt = self.other_terms.row_values(point, hot_int[None]), None
            else:
                values, tilt = self.other_terms.row_tilts(point, hot_int[None])
            log_ratio = (self.betas[-1] - self.betas[-2]) * (e[1] - e[0]) + values[0] - log_rest
            swap_sum[k - 2] += acceptance_probability(log_ratio).sum()
            swap_n[k - 2] += n
            rows = np.flatnonzero(metropolis_accept(self.rng, log_ratio))
            for x in (state.v, state.h, self.replica_labels):
                x[-2, rows], x[-1, rows] = x[-1, rows], x[-2, rows]
            if rows.size:
                v_int, log_rest = v_int.copy(), log_rest.copy()
                v_int[rows] = hot_int[rows]
                log_rest[rows] = values[0][rows]
                if self._tilt is not None and tilt is not None:
                    self._tilt[rows] = tilt[0][rows]
        else:  # row by row, L evaluated at the batch with only that row changed
            e = energy(state.v[-2:], state.h[-2:], params)
            log_ratio = np.zeros((k - 1, n))
            log_ratio[k - 2] = (self.betas[-1] - self.betas[-2]) * (e[1] - e[0])
            for row in range(n):
                new_int = v_int.copy()
                new_int.reshape(n, -1)[row] = state.v[-2, row]
                log_new = self.other_terms.log_rest(point, new_int)
                ratio = log_ratio[k - 2, row] + log_new - log_rest
                swap_sum[k - 2] += acceptance_probability(ratio)
                swap_n[k - 2] += 1
                if metropolis_accept(self.rng, ratio):
                    for x in (state.v, state.h):
                        x[[-2, -1], row] = x[[-1, -2], row]
                    self.replica_labels[[-2, -1], row] = self.replica_labels[[-1, -2], row]
                    v_int, log_rest = new_int, log_new
                    self._tilt = None
        return v_int, log_rest

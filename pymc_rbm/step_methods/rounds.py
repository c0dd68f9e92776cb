"""The rounds of :class:`~pymc_rbm.step_methods.ReplicaExchange`: every replica's sweeps, the swap round, the draw.

:class:`ReplicaRounds` is the part of the step that moves the replicas: a draw
is ``rounds_per_draw`` rounds, each the sweeps of every replica at its rung
(compiled for all replicas and rows in one call where the step's draws are
compiled, else the operator's NumPy sweep of
:mod:`pymc_rbm.kernels.operators`, or :func:`~pymc_rbm.kernels.sweep.sweep` on
the annealing path from a reference) followed by the swaps of the round's
parity (Syed, Bouchard-Côté, Deligiannidis & Doucet 2022), with the round-trip
counting of :class:`~pymc_rbm.step_methods.ladder.LadderTuning`. Where the
model's other terms are per-unit evidence every replica carries it in its
visible biases and a round is one compiled call
(:func:`~pymc_rbm.kernels.replica_rounds.tempered_round`); where they are not, the
cold replica's own move and its swap are those of
:class:`~pymc_rbm.step_methods.cold.ColdReplicaMoves`. The invariant target
and why each round leaves it invariant are in
:mod:`pymc_rbm.step_methods.tempered`.

The methods read the step's replicas (``_replicas``, a
:class:`~pymc_rbm.kernels.tempering.TemperedState` of shape ``(K, B, ·)``
with the cold replica last), its ladder (``betas``, ``rung_sweeps``,
``replica_labels``, the reference of
:class:`~pymc_rbm.step_methods.ladder.LadderTuning`), its operator
(``alpha``, ``keeps_hidden``, ``rule``) and its generator ``rng``.
"""

from __future__ import annotations

import numpy as np

from pymc_rbm.energy import energy, free_energy, hidden_activation
from pymc_rbm.kernels import compiled, replica_rounds
from pymc_rbm.kernels.state import RBMState
from pymc_rbm.kernels.mixture_reference import swap_log_ratio as mixture_swap_log_ratio
from pymc_rbm.kernels.sweep import sweep
from pymc_rbm.kernels.tempering import TemperedState, exchange_pairs, swap_pairs, tempered_log_ratio

__all__ = ["ReplicaRounds"]


def replica_energy(v: np.ndarray, h: np.ndarray, params) -> np.ndarray:
    """``E(v, h)`` of replicas ``v`` (k, n, n_visible), ``h`` (k, n, n_hidden), (k, n): one matrix product over all
    rows (a product of the 3-D stack would read ``W`` once per replica)."""
    k, n = v.shape[:2]
    return energy(v.reshape(k * n, -1), h.reshape(k * n, -1), params).reshape(k, n)


class ReplicaRounds:
    """The replicas' rounds of :class:`~pymc_rbm.step_methods.ReplicaExchange` (a mixin of the step)."""

    def _init_replicas(self, v: np.ndarray) -> None:
        """Make the replicas: every rung starts at ``v`` (shape ``(B, n_visible)``), ``h`` drawn at its ``β``."""
        k, params = self.n_temperatures, self._rbm
        vr = np.repeat(v[None], k, axis=0)
        h = np.empty((k, *v.shape[:-1], self.n_hidden))
        for r, beta in enumerate(self.betas):
            h[r] = self._draw_hidden(beta * hidden_activation(vr[r], params))
        self._replicas = TemperedState(vr, h, 0)
        self._reset_counters()

    def _draw_component_labels(self, hot: int) -> np.ndarray:
        """The mixture reference's label of each of the first ``hot`` replicas, drawn from ``p_β(z | v, h)``, and
        the whole state of a rung at ``β = 0`` drawn from the mixture; the labels, (hot, B).

        Both are exact draws from conditionals of the rungs' targets, whatever came before, so the labels are
        not kept between rounds: the swaps sum them out (the top rung's, at ``β = 1``, is uniform and enters
        no target).
        """
        state, n, mixture = self._replicas, self._n_chains, self.mixture
        flat_v, flat_h = state.v[:hot].reshape(hot * n, -1), state.h[:hot].reshape(hot * n, -1)
        z = mixture.draw_labels(self.rng, flat_v, flat_h, np.repeat(self.betas[:hot], n),
                                label_log_weights=self._kept_label_log_weights(hot)).reshape(hot, n)
        for r in np.flatnonzero(self.betas[:hot] == 0.0):
            state.v[r], state.h[r], z[r] = mixture.draw(self.rng, n)
        return z

    def _cold_from_point(self, v_in: np.ndarray) -> bool:
        """Bring the cold replica up to the point's ``v``; True when the replicas were made or ``h`` redrawn."""
        if self._replicas is None or self._replicas.v.shape[0] != self.n_temperatures:
            self._init_replicas(v_in.astype(np.float64))
            return True
        if compiled.same_values(v_in, self._replicas.v[-1]):
            return False
        cold_v = v_in.astype(np.float64)  # by value: not the state this step left
        self._replicas.v[-1] = cold_v
        self._replicas.h[-1] = self._draw_hidden(hidden_activation(cold_v, self._rbm))
        return True

    def _tempered_step(self, point):
        """One draw of an RBM alone or with other terms on ``v``: ``rounds_per_draw`` rounds (:meth:`_round`)."""
        params = self._rbm
        n, k = self._n_chains, self.n_temperatures
        v_in = point[self._name].reshape(n, self._shape[-1])
        refreshed = self._cold_from_point(v_in)
        v_start = self._replicas.v[-1].copy()
        h_start = self._replicas.h[-1].copy()
        corrected = self.corrected
        if corrected:
            v_int = v_in.astype(self._out_dtype).reshape(self._shape)
            log_rest = self._rest_value(point, v_int, refreshed)
        accept_sum, accepted = np.zeros(n), np.zeros(n)
        swap_sum = np.zeros(max(k - 1, 1))
        swap_n = np.zeros(max(k - 1, 1))
        rounds = self.rounds_per_draw
        for _ in range(rounds):
            v_int, log_rest = self._round(point, params, v_int if corrected else None,
                                          log_rest if corrected else None, accept_sum, accepted, swap_sum, swap_n)
        if corrected:
            self.carried.rest = (self.carried.rest[0], log_rest)
            accept, accept_rate = accept_sum / rounds, accepted / rounds
        else:
            accept = accept_rate = self._ones
        return self._draw_result(point, v_start, h_start, refreshed, accept, accept_rate, swap_sum, swap_n)

    def _tilted_step(self, point):
        """One draw where the other terms are per-unit evidence: each replica an RBM with its own visible bias.

        With ``log L(v) = Σ_{k,i} log L_{ki}(v_{ki})`` (``"units"`` structure of
        :class:`~pymc_rbm.step_methods.terms.OtherTerms`), ``p_RBM(v, h) L(v)``
        is, row by row, the RBM whose visible bias is ``vbias + δ_k`` with the
        per-unit evidence ``δ_{ki} = log L_{ki}(1) - log L_{ki}(0)``, and its
        tempered posterior ``[p_RBM(v, h) L(v)]^β`` is that RBM at ``β``. Every
        replica is swept by the operator's exact layer update on its own
        biases (nothing to correct) and neighbours swap by the exact ratio of
        their targets, all rows and rungs in one compiled call per round
        (:func:`~pymc_rbm.kernels.replica_rounds.tempered_round`). See
        :mod:`pymc_rbm.step_methods.tempered` ("Per-unit evidence") for the hot
        rungs' evidence when ``L`` involves other free variables.
        """
        n, k = self._n_chains, self.n_temperatures
        v_in = point[self._name].reshape(n, self._shape[-1])
        tilt = self._evidence(point)
        refreshed = self._cold_from_point(v_in)
        if self.ladder_tilt is None or not self.tilt_frozen:
            self.ladder_tilt = tilt
        evidence = np.empty_like(self._replicas.v)
        evidence[:] = self.ladder_tilt
        if self.path is not None:  # the hot rungs start from the reference: (1 - β_r) b on top of the evidence
            evidence += (1.0 - self.betas)[:, None, None] * self.path.base_vbias
        evidence[-1] = tilt
        v_start = self._replicas.v[-1].copy()
        h_start = self._replicas.h[-1].copy()
        swap_sum = np.zeros(max(k - 1, 1))
        swap_n = np.zeros(max(k - 1, 1))
        energies = np.empty((2, k, n))
        for _ in range(self.rounds_per_draw):
            state = self._replicas
            p = self.params
            replica_rounds.tempered_round(self.rng, state.v, state.h, (p.W, self.W_T, p.vbias, p.hbias), self.betas, k,
                                          (state.n_rounds % 2, self.replica_labels, swap_sum, swap_n), rule=self.rule,
                                          evidence=evidence, sweeps=self.rung_sweeps, energies=energies,
                                          hidden_fields=self._reference_hidden_fields())
            self._record_explorers(energies)
            self._replicas = TemperedState(state.v, state.h, state.n_rounds + 1)
            if k > 1:
                self._count_round_trips()
        return self._draw_result(point, v_start, h_start, refreshed, self._ones, self._ones, swap_sum, swap_n)

    def _draw_result(self, point, v_start, h_start, refreshed, accept, accept_rate, swap_sum, swap_n):
        """The new point, the draw's stats and the per-pair swap acceptance (NaN where not attempted)."""
        params, k = self._rbm, self.n_temperatures
        self.swap_sum[: k - 1] += swap_sum[: k - 1]
        self.swap_n[: k - 1] += swap_n[: k - 1]
        cold_v, cold_h = self._replicas.v[-1], self._replicas.h[-1]
        v_out = cold_v.astype(self._out_dtype)
        n_changed = (cold_v != v_start).sum(axis=-1)
        n_hidden_changed = (cold_h != h_start).sum(axis=-1)
        if self.compiled_rounds:
            fe = compiled.free_energy_of_states(cold_v, params)
        else:
            fe = free_energy(cold_v, params)
        stats = self._chain_stats(fe, n_changed, n_hidden_changed, accept, accept_rate, refreshed)
        if self.record_hidden:
            stats["hidden"] = cold_h.astype(np.int8).reshape(-1)
        swap = np.full(self.max_temperatures - 1, np.nan)
        if k > 1:
            tried = swap_n[: k - 1] > 0
            swap[: k - 1][tried] = swap_sum[: k - 1][tried] / swap_n[: k - 1][tried]
        out = point.copy()
        out[self._name] = v_out.reshape(self._shape)
        return out, [stats], swap

    def _kept_label_log_weights(self, hot: int) -> np.ndarray | None:
        """The mixture's label log weights of the first ``hot`` replicas, (hot B, n_components), as the last swap
        round left them (the swaps only move states between rungs), or None where those states or the mixture
        changed since."""
        kept, self._label_weights = self._label_weights, None
        if kept is None:
            return None
        mixture, v, h, ell = kept
        state = self._replicas
        n_v, n_h = state.v.shape[-1], state.h.shape[-1]
        same = (mixture is self.mixture and v.shape == state.v.shape and h.shape == state.h.shape
                and compiled.same_values(v[:hot].reshape(-1, n_v), state.v[:hot].reshape(-1, n_v))
                and compiled.same_values(h[:hot].reshape(-1, n_h), state.h[:hot].reshape(-1, n_h)))
        return ell[:hot].reshape(-1, ell.shape[-1]) if same else None

    def _round(self, point, params, v_int, log_rest, accept_sum, accepted, swap_sum, swap_n):
        """One round: every replica's sweep, then the swaps of the round's parity.

        Compiled (one call for the RBM's replicas) where the step's draws are
        compiled, else the NumPy kernels; the cold replica of a model with
        other terms is moved and swapped here, row by row.
        """
        if self.posterior_ladder and self.n_temperatures > 1:
            return self._posterior_round(point, params, accept_sum, accepted, swap_sum, swap_n)
        state = self._replicas
        k, n = self.n_temperatures, self._n_chains
        corrected = v_int is not None
        hot = k - 1 if corrected else k
        parity = state.n_rounds % 2
        mixture = self.mixture
        if mixture is not None and hot:  # each replica's label from its conditional, then sweeps given the labels
            z = self._draw_component_labels(hot)
        e_after = None
        if self.compiled_rounds and hot:
            energies = np.empty((2, hot, n))
            if mixture is None:
                evidence, hidden_fields = self._reference_evidence(), self._reference_hidden_fields()
            else:  # one chain: each rung's fields are those of its replica's label; the swaps below, labels summed out
                cool = (1.0 - self.betas[:hot])[:, None]
                evidence = np.ascontiguousarray(cool[:, None] * mixture.visible_logits[z])
                hidden_fields = np.ascontiguousarray(cool * mixture.hidden_logits[z[:, 0]])
            p = self.params
            swaps = (parity if mixture is None else k, self.replica_labels, swap_sum, swap_n)
            replica_rounds.tempered_round(self.rng, state.v, state.h, (p.W, self.W_T, p.vbias, p.hbias), self.betas,
                                          hot, swaps, rule=self.rule, evidence=evidence, sweeps=self.rung_sweeps,
                                          energies=energies, hidden_fields=hidden_fields)
            self._record_explorers(energies)
            e_after = energies[1]
        elif hot:
            measuring = self._measuring_explorers
            if measuring:
                before = replica_energy(state.v[:hot], state.h[:hot], params)
            counts = self.rung_sweeps[:hot]
            for s in range(int(counts.max())):  # pass s sweeps the rungs that make more than s sweeps
                rungs = np.flatnonzero(counts > s)
                m = rungs.size
                flat = RBMState(state.v[rungs].reshape(m * n, -1), state.h[rungs].reshape(m * n, -1))
                betas = np.repeat(self.betas[rungs], n)
                if mixture is not None:
                    new, _ = sweep(self.rng, flat, mixture.at(params, betas, z[rungs].reshape(-1)), self.rule)
                elif self.path is None:
                    new, _ = self._sweep_kernel(self.rng, flat, params, betas)
                else:
                    new, _ = sweep(self.rng, flat, self.path.at(self.path.coefficients(betas)), self.rule)
                state.v[rungs] = new.v.reshape(m, n, -1)
                state.h[rungs] = new.h.reshape(m, n, -1)
            if measuring:
                self._record_explorers(np.stack([before, replica_energy(state.v[:hot], state.h[:hot], params)]))
        if corrected:
            v_int, log_rest = self._cold_sweep(point, params, v_int, log_rest, accept_sum, accepted)
        if k > 1:
            v_int, log_rest = self._swap_round(point, params, v_int, log_rest, swap_sum, swap_n,
                                               hot_swapped=self.compiled_rounds and mixture is None,
                                               e=e_after if hot == k else None)
        return v_int, log_rest

    def _swap_round(self, point, params, v_int, log_rest, swap_sum, swap_n, *, hot_swapped: bool, e=None):
        """Swap neighbouring replicas (even or odd pairs by the round's parity); the cold pair carries ``L``.

        ``hot_swapped``: the pairs among the RBM's own replicas were swapped
        already (by the compiled round); only the cold pair is left. ``e``:
        the replicas' energies ``E(v, h)``, (k, n), where the sweeps recorded
        them.
        """
        state = self._replicas
        k = self.n_temperatures
        corrected = v_int is not None
        pairs = swap_pairs(k, state.n_rounds % 2)
        cold = corrected and pairs.size and pairs[-1] == k - 2
        if cold:
            pairs = pairs[:-1]
        if not hot_swapped and pairs.size:
            e = replica_energy(state.v, state.h, params) if e is None else e  # (k, n)
            if self.mixture is None:
                log_ratio = tempered_log_ratio(self.betas, self._reference_energy(e, state.v, state.h))
            else:  # labels summed out; the next round redraws them at the replicas' new rungs
                k, n = e.shape
                ell = self.mixture.label_log_weights(state.v.reshape(k * n, -1), state.h.reshape(k * n, -1))
                ell = ell.reshape(k, n, -1)
                log_ratio = mixture_swap_log_ratio(self.betas, e, ell, pairs)
            carried = (self.replica_labels,) if self.mixture is None else (self.replica_labels, ell)
            exchange_pairs(self.rng, state.v, state.h, log_ratio, pairs, carried=carried, record=(swap_sum, swap_n))
            if self.mixture is not None:  # the states' label weights, moved with them, for the next round's labels
                self._label_weights = (self.mixture, state.v.copy(), state.h.copy(), ell)
        if cold:
            v_int, log_rest = self._swap_cold(point, params, v_int, log_rest, swap_sum, swap_n)
        self._replicas = TemperedState(state.v, state.h, state.n_rounds + 1)
        self._count_round_trips()
        return v_int, log_rest

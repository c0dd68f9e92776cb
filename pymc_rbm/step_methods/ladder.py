"""The ladder of :class:`~pymc_rbm.step_methods.ReplicaExchange` in tuning: its reference, its adaptation,
its round trips.

:class:`LadderTuning` holds what Pigeons.jl (Surjanovic, Syed, Bouchard-Côté &
Campbell 2023) calls the recorders and the adaptation: the round trips of the
replicas between the bottom and the top rung; the reference the hot rungs
start from (the estimators' :class:`~pymc_rbm.estimators.path.AnnealingPath`
from independent visible units to the RBM), chosen in tuning by the lower
barrier; and the new ladder, spaced evenly in the communication barrier
measured from the swap rejection rates (Syed, Bouchard-Côté, Deligiannidis &
Doucet 2022), with about ``2Λ`` rungs. All of it runs in tuning only; after
tuning the ladder and the reference are frozen. The methods read and set the
step's ladder (``betas``, ``barrier``, the swap counters) and replicas.

**Tuning.** During PyMC's tune phase the ladder is adapted at draws
``tune/16, tune/8, tune/4, tune/2``: from each pair's mean swap rejection
rate the cumulative communication barrier ``Λ`` is estimated
(:func:`~pymc_rbm.kernels.tempering.communication_barrier`), the number
of replicas set to ``⌈2Λ⌉ + 1`` (Syed et al. 2022 find about ``2Λ``
suffices) and the rungs spaced so that each pair rejects equally often
(:func:`~pymc_rbm.kernels.tempering.equalized_ladder`); the cold pair of a
model with ``L`` is left out of ``Λ``, as no rung can lower its rejection.
When ``Λ`` is below
``collapse_below`` the ladder collapses to the cold replica alone: the
distributions from ``β = 0`` to ``1`` then overlap so much that the
model needs no tempering, and the step costs what
:class:`~pymc_rbm.step_methods.FlipTheState` costs (it runs that step's
compiled draws). After tuning the ladder is frozen, so the draws are from a
time-homogeneous chain that leaves ``Π`` invariant.
"""

from __future__ import annotations

import numpy as np

from pymc_rbm.energy import hidden_activation
from pymc_rbm.estimators.path import AnnealingPath, annealing_path
from pymc_rbm.kernels import compiled
from pymc_rbm.kernels.tempering import TemperedState, communication_barrier, equalized_ladder

__all__ = ["LadderTuning"]


class LadderTuning:
    """Reference, adaptation and round trips of the ladder of :class:`~pymc_rbm.step_methods.ReplicaExchange`."""

    @property
    def path(self) -> AnnealingPath | None:
        """The annealing path of the hot rungs from the reference in use to the RBM; None for the uniform one."""
        if self.reference_in_use == "zero":
            return None
        if self._path is None:
            base = self.reference if self.reference_in_use == "given" else self.reference_in_use
            self._path = annealing_path(self._rbm, base=base, operator=self.operator)
        return self._path

    def _use_reference(self, name: str) -> None:
        """Switch the hot rungs' reference (tuning only): new targets on the same ladder."""
        self.reference_in_use = name
        self._path = None
        self._reset_counters()

    @property
    def reference_vbias(self) -> np.ndarray:
        """The reference's visible biases ``b`` (zeros for the uniform reference)."""
        path = self.path
        return np.zeros(self.n_visible) if path is None else path.base_vbias

    def _reference_evidence(self) -> np.ndarray | None:
        """``(1 - β_r) b`` for every replica and chain, (K, n_chains, n_visible), for the compiled rounds."""
        if self.path is None:
            return None
        if self._path_evidence is None or self._path_evidence.shape[0] != self.n_temperatures:
            ev = (1.0 - self.betas)[:, None] * self.path.base_vbias[None, :]
            self._path_evidence = np.ascontiguousarray(np.repeat(ev[:, None, :], self._n_chains, axis=1))
        return self._path_evidence

    def _count_round_trips(self) -> None:
        """A replica that went from the bottom rung to the top and back to the bottom completes a round trip."""
        if self.compiled_rounds:
            self.round_trips += compiled.count_round_trips(self.replica_labels, self.trip_ends, self.trip_up)
            return
        cols = np.arange(self.replica_labels.shape[1])
        top, bottom = self.replica_labels[-1], self.replica_labels[0]
        up = self.trip_ends[top, cols] == 1
        self.trip_up[top[up], cols[up]] = True
        self.trip_ends[top, cols] = 2
        done = (self.trip_ends[bottom, cols] == 2) & self.trip_up[bottom, cols]
        self.round_trips += int(done.sum())
        self.trip_up[bottom[done], cols[done]] = False
        self.trip_ends[bottom, cols] = 1

    # ------------------------------------------------------------ tuning

    def _adapt_ladder(self) -> None:
        """New ladder from the swap rejection rates since the last adaptation (tuning only).

        With other model terms the pair of the cold replica (the RBM alone at
        ``β = 1`` against the full conditional) is left out: its rejection
        comes from ``L`` and no rung of the RBM's ladder can lower it.
        """
        k = self.n_temperatures
        if k < 2 or not np.all(self.swap_n > 0):
            return
        rejection = 1.0 - self.swap_sum / self.swap_n
        ladder = self.betas
        separate = self.separate_cold
        if separate:
            ladder, rejection = ladder[:-1], rejection[:-1]
        self.barrier = float(communication_barrier(ladder, rejection)[-1])
        if self.reference_trial == 0:  # the uniform reference measured: measure the mean-field one next
            self.reference_trial = 1
            self.reference_trial_barrier = self.barrier
            self.reference_trial_ladder, self.reference_trial_rejection = ladder.copy(), rejection.copy()
            self._use_reference("mean_field")
            return
        if self.reference_trial == 1:  # both measured: keep the lower barrier
            self.reference_trial = 2
            if not self.reference_trial_barrier > self.barrier:
                self._use_reference("zero")
                self.barrier = self.reference_trial_barrier
                ladder, rejection = self.reference_trial_ladder, self.reference_trial_rejection
        if self._fixed_ladder:
            new = equalized_ladder(ladder, rejection, ladder.size) if ladder.size > 1 else ladder
        elif self.barrier < self.collapse_below:
            new = np.array([1.0])
        else:
            limit = self.max_temperatures - int(separate)
            new = equalized_ladder(ladder, rejection, int(min(limit, max(2, np.ceil(2.0 * self.barrier) + 1))))
            if self.can_temper_likelihood:  # the RBM needs tempering: temper the whole posterior from now on
                self.posterior_ladder = True
        if self.tilted and self.carried.evidence is not None:  # the hot rungs' evidence: the current draw's
            self.ladder_tilt = self.carried.evidence[1]
        self._move_replicas(self._with_cold(new))

    def _move_replicas(self, new: np.ndarray) -> None:
        """Put each new rung's replica at the old rung nearest in β (the cold one stays); redraw hot ``h``."""
        old, state = self.betas, self._replicas
        self.betas = new
        self._reset_counters()
        if state is None:
            return
        if new.size == 1:
            self._replicas = None
            self.visible_state = self.hidden_state = self.hidden_input = self.visible_input = None
            return
        source = np.abs(old[None, :] - new[:, None]).argmin(axis=1)
        source[-1] = old.size - 1
        v, h = state.v[source].copy(), state.h[source].copy()
        params = self._rbm
        for r in range(new.size - 1):
            h[r] = self._draw_hidden(new[r] * hidden_activation(v[r], params))
        self._replicas = TemperedState(v, h, 0)

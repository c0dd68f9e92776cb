"""The ladder of :class:`~pymc_rbm.step_methods.ReplicaExchange` in tuning: its reference, its adaptation,
its round trips.

:class:`LadderTuning` holds what Pigeons.jl (Surjanovic, Syed, Bouchard-Côté &
Campbell 2023) calls the recorders and the adaptation: the round trips of the
replicas between the bottom and the top rung; the reference the hot rungs
start from (the estimators' :class:`~pymc_rbm.estimators.path.AnnealingPath`
from independent units to the RBM), chosen in tuning by the lower
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
(:func:`~pymc_rbm.kernels.tempering.equalized_ladder`), each pair's barrier
taken as ``-log`` of its acceptance rate (``saturating=True``: the same for
small rejections, and a pair that rarely swaps asks for the several rungs it
needs, where its rejection rate alone would count it as at most one); the cold pair of a
model with ``L`` is left out of ``Λ``, as no rung can lower its rejection.
When ``Λ`` is below
``collapse_below`` (and was with the uniform reference, where tuning measured
it: a reference close to one mode can show a low barrier because its ladder
stays in that mode) the ladder collapses to the cold replica alone: the
distributions from ``β = 0`` to ``1`` then overlap so much that the
model needs no tempering, and the step costs what
:class:`~pymc_rbm.step_methods.FlipTheState` costs (it runs that step's
compiled draws). After tuning the ladder is frozen, so the draws are from a
time-homogeneous chain that leaves ``Π`` invariant.

**Explorers that relax.** A swap can only carry a replica across the ladder
if the replicas it meets have relaxed at their rungs since the last swap; on
RBMs trained on clustered data the rungs near a first-order transition
(Béreux, Decelle, Furtlehner & Seoane 2025) do not relax in one sweep. With
``explorer_sweeps="auto"`` every round records, at each rung the compiled
round sweeps, the energy ``E(v, h)`` of its state before its sweeps and after
them (computed from activations the sweep forms anyway), and each adaptation
of the ladder turns the lag-one correlation ``ρ`` of the two, pooled over
rounds within each row since the last adaptation, into sweeps per round, as
Pigeons.jl adapts its explorers between rounds: one sweep correlates as
``ρ_1 = ρ^{1/n}`` (``n`` the sweeps it was measured with), so
``⌈log ρ* / log ρ_1⌉`` sweeps take the rung to about ``ρ* = EXPLORER_TARGET``
(at most ``EXPLORER_MAX_SWEEPS``), at the rungs that do not relax in one sweep
(``ρ_1 > EXPLORER_STICKY``); the others keep one. The new
rungs take the sweeps of the old rung nearest in β, and if their total passes
``EXPLORER_BUDGET`` times the number of rungs, the sweeps above one are
scaled down to fit, so that a draw costs at most that many times the round
of one sweep per rung: the sweeps go where the relaxation is slow, and a
model that relaxes everywhere keeps one per rung. The budget of three sweeps per
rung on average keeps a draw within three times its earlier cost while the
sticky rungs, a few of the ladder on mnist_h500, get several times their one
sweep; twice the budget measured no better there (docs/benchmarks.md). Like the ladder, the sweeps
are frozen when tuning ends, so the recorded draws come from one
time-homogeneous kernel, each of whose sweeps leaves its rung's target
invariant.

**A ladder that carries nothing.** With explorers that relax, a ladder of
barrier ``Λ`` makes about ``1 / (2 + 2Λ)`` round trips a round (Syed,
Bouchard-Côté, Deligiannidis & Doucet 2022). At the last adaptation the
round trips of the window before it are compared with that
(:func:`ladder_carries`); where fewer than ``CARRY_MIN_SHARE`` of them
happened, replicas from the reference almost never reach the top rung: the
reference does not lead to the modes the model's mass is in. The cold
replica's states of that window show where those modes are, so a single row
restarts its ladder from them: the reference becomes the mixture of the
mean-field fixed points those states lead to
(:func:`~pymc_rbm.estimators.base_rate.mixture_reference`), on as many rungs,
even in β, and one more adaptation at ``RESTART_ADAPT_AT`` of the tune phase
spaces the ladder for it. From then on a draw is one round in which each hot
rung sweeps once and the cold replica makes the rest of the draw's ``K²``
sweeps (:func:`cold_takes_rest`): what limits the draws is how far the cold
replica relaxes between the replicas that arrive. Several rows keep their
reference and their ladder and take the rest at once. Where tuning had chosen
the mean-field reference for its lower barrier over a uniform one whose ladder
fits in ``max_temperatures`` rungs, that low barrier may be the one of a
ladder that stays in one mode (an RBM sharper than the bundled
bars-and-stripes one): tuning then goes back to the uniform reference instead,
spaces its ladder anew at ``RESTART_ADAPT_AT`` and judges it there (a uniform
ladder that carries nothing is kept, the cold replica taking the rest). This
applies to an RBM alone with adapted sweeps (``sweeps`` and ``explorer_sweeps`` "auto")
from a product reference. Of the MNIST RBMs only mnist_h500's ladder falls
short; restarted, its replicas make round trips in every chain, at about the
effective sample size of ``F(v)`` a second of its cold replica alone, with
chains that agree better (docs/benchmarks.md).

**The mixture refitted.** With ``reference="mixture"`` the ladder starts from
the mixture of the model's mean-field fixed points that the visible biases
and each hidden unit's receptive field lead to
(:func:`~pymc_rbm.estimators.base_rate.mixture_reference`), which need not be
the modes the model's mass is in. From the first adaptation to the third
(``tune/16`` to ``tune/4``) the top rung's state of every draw is kept, and at
the third the components become the distinct fixed points reached from the
current components' modes and from those states (at most
``MIXTURE_REFIT_COMPONENTS`` starts); the fourth adaptation spaces the ladder
for them. On mnist_h500 this gave about four times the round trips per
second of the mixture as first built (docs/benchmarks.md). A mode that the
chain does not visit in that window gains no component. A mixture's ladder
brings the top rung fresh modes every few rounds, so the draws are limited by
how far the cold replica relaxes between arrivals: at the last adaptation its
sweeps a round become those of the hot rungs together
(:func:`cold_matches_hot`).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from pymc_rbm.energy import hidden_activation
from pymc_rbm.estimators.base_rate import mean_field_fields, mixture_reference
from pymc_rbm.estimators.path import AnnealingPath, annealing_path
from pymc_rbm.kernels import replica_rounds
from pymc_rbm.kernels.tempering import TemperedState, communication_barrier, equalized_ladder, rungs_for_barrier

__all__ = ["LadderTuning", "LadderAdaptation", "CARRY_MIN_PREDICTED", "CARRY_MIN_SHARE", "EXPLORER_BUDGET", "EXPLORER_MAX_SWEEPS",
           "EXPLORER_STICKY", "EXPLORER_TARGET", "MIXTURE_REFIT_COMPONENTS", "MIXTURE_REFIT_MIN_TUNE",
           "RESTART_ADAPT_AT", "cold_matches_hot", "cold_takes_rest", "explorer_sweeps_for", "ladder_carries",
           "within_budget"]

#: ``explorer_sweeps="auto"``: the correlation of a rung's energy that a round should come down to.
EXPLORER_TARGET = 0.5
#: ... at rungs whose energy keeps more than this correlation over one sweep; a rung that relaxes faster keeps
#: one sweep. On mnist_h500 thresholds of 0.6-0.8 gave fewer round trips than 0.5 (docs/benchmarks.md); the
#: bundled bars-and-stripes RBM measures 0.4-0.75 at its upper rungs early in tuning, and with the default
#: 1000 tuning draws its last window keeps every rung at one sweep.
EXPLORER_STICKY = 0.5
#: Most sweeps a rung makes in one round.
EXPLORER_MAX_SWEEPS = 32
#: Most sweeps per rung on average, so that a draw costs at most this many times one sweep per rung.
EXPLORER_BUDGET = 3.0
#: Fewest rounds a rung is measured over before its sweeps change.
EXPLORER_MIN_ROUNDS = 16
#: A ladder carries replicas across when they make at least this share of the round trips its barrier predicts
#: (``rounds / (2 + 2Λ)`` a row). In the window before the last adaptation (1000 tuning draws, seeds 2026, 1, 2)
#: mnist_h100's ladder made 12-14 % of them, mnist_h500's 1 %, the bundled model's uniform ladder 71 %.
CARRY_MIN_SHARE = 0.05
#: ... judged only where at least this many round trips were predicted (fewer say too little either way).
CARRY_MIN_PREDICTED = 20.0
#: ``reference="mixture"``: fewest tuning draws for which the mixture is refitted to the states the chain visits
#: (the top rung's state of each draw from the first adaptation to the third: 3/16 of them).
MIXTURE_REFIT_MIN_TUNE = 200
#: Most components of the refitted mixture.
MIXTURE_REFIT_COMPONENTS = 128
#: A ladder that carries nothing, restarted from the modes its model's replica visited, is spaced for its new
#: reference at this share of the tune phase (the last adaptation before it is at one half).
RESTART_ADAPT_AT = 3 / 4
#: Nats of the mean-field bound by which the best fixed point must beat every other (distinct) one for the
#: mean-field reference to be its product on both layers; below it (symmetric patterns) the reference is the
#: visible magnetisations alone, with the hidden units uniform.
MEAN_FIELD_CLEAR_GAP = 1.0


def explorer_sweeps_for(rho, current, *, target: float | None = None, sticky: float | None = None,
                        max_sweeps: int | None = None) -> np.ndarray:
    """Sweeps per rung that take each rung's energy to a correlation of about ``target`` in one round.

    Parameters
    ----------
    rho : ndarray of shape (n_rungs,)
        Measured correlation of each rung's energy before and after its
        ``current`` sweeps (NaN: not measured, the current sweeps are kept).
    current : ndarray of int of shape (n_rungs,)

    Returns
    -------
    ndarray of int64 of shape (n_rungs,)
        ``⌈log target / log ρ_1⌉`` with ``ρ_1 = ρ^{1 / current}`` the
        correlation of one sweep; 1 where ``ρ_1 <= sticky`` (default
        ``EXPLORER_STICKY``) or ``ρ_1 <= target``; at most ``max_sweeps``.
    """
    target = EXPLORER_TARGET if target is None else target
    sticky = EXPLORER_STICKY if sticky is None else sticky
    max_sweeps = EXPLORER_MAX_SWEEPS if max_sweeps is None else max_sweeps
    rho = np.asarray(rho, dtype=np.float64)
    current = np.asarray(current, dtype=np.int64)
    out = current.copy()
    known = np.isfinite(rho)
    one = np.clip(rho[known], 0.0, 1.0 - 1e-12) ** (1.0 / current[known])
    with np.errstate(divide="ignore"):
        need = np.where((one <= target) | (one <= sticky), 1.0, np.ceil(np.log(target) / np.log(np.maximum(one, 1e-300)) - 1e-9))
    out[known] = np.clip(need, 1, max_sweeps).astype(np.int64)
    return out


def within_budget(sweeps, budget: float | None = None) -> np.ndarray:
    """Scale the sweeps above one down so that their total is at most ``budget`` per rung (floor; each >= 1;
    default ``EXPLORER_BUDGET``)."""
    budget = EXPLORER_BUDGET if budget is None else budget
    sweeps = np.asarray(sweeps, dtype=np.int64)
    limit = int(np.floor(budget * sweeps.size))
    extra = sweeps - 1
    if sweeps.sum() <= limit or extra.sum() == 0:
        return sweeps.copy()
    scale = (limit - sweeps.size) / extra.sum()
    return 1 + np.floor(extra * scale).astype(np.int64)


def ladder_carries(round_trips: int, rounds: float, barrier: float, n_rows: int = 1) -> bool:
    """Whether a ladder carries replicas across: False only when its round trips fall short of what its barrier
    predicts.

    With explorers that relax, a non-reversible ladder of barrier ``Λ`` makes
    about ``1 / (2 + 2Λ)`` round trips a round (Syed, Bouchard-Côté,
    Deligiannidis & Doucet 2022). Replicas that make far fewer are held at
    rungs that do not relax between swaps (a first-order transition), and the
    ladder then brings the top rung almost nothing from below.

    Parameters
    ----------
    round_trips : int
        Round trips counted over the window, all rows together.
    rounds : float
        Rounds each row made in the window.
    barrier : float
        The ladder's measured barrier ``Λ``.
    n_rows : int, default 1
        Rows (independent ladders) counted.

    Returns
    -------
    bool
        False when at least ``CARRY_MIN_PREDICTED`` round trips were predicted
        and fewer than ``CARRY_MIN_SHARE`` of them happened; True otherwise.
    """
    predicted = n_rows * rounds / (2.0 + 2.0 * barrier)
    return not (predicted >= CARRY_MIN_PREDICTED and round_trips < CARRY_MIN_SHARE * predicted)


def cold_takes_rest(sweeps) -> np.ndarray:
    """The sweeps per round of a ladder that carries no replica across: one per hot rung, the rest to the cold one.

    A draw of ``K`` rungs costs about ``K²`` sweeps (``sweeps="auto"``). When
    the ladder brings the top rung almost nothing from below, the explorers'
    extra sweeps buy nothing either: a draw becomes one round, each hot rung
    sweeping once and the cold replica, whose states are the draws, making the
    other ``K² - K + 1`` sweeps (at least what it had).

    Parameters
    ----------
    sweeps : ndarray of int of shape (n_rungs,)
        The sweeps per round the explorers' adaptation chose, the cold replica
        last.

    Returns
    -------
    ndarray of int64 of shape (n_rungs,)
    """
    out = np.ones(np.size(sweeps), dtype=np.int64)
    k = out.size
    out[-1] = max(int(np.asarray(sweeps)[-1]), k * k - (k - 1))
    return out


def cold_matches_hot(sweeps) -> np.ndarray:
    """The sweeps per round of a mixture's ladder after tuning: the cold replica sweeps as often as the hot rungs
    together (at least what it had), the hot rungs as their explorers' adaptation chose.

    Parameters
    ----------
    sweeps : ndarray of int of shape (n_rungs,)
        The explorers' sweeps per round, the cold replica last.

    Returns
    -------
    ndarray of int64 of shape (n_rungs,)
    """
    out = np.array(sweeps, dtype=np.int64)
    out[-1] = max(int(out[-1]), int(out[:-1].sum()))
    return out


@dataclass(frozen=True)
class LadderAdaptation:
    """How :class:`~pymc_rbm.step_methods.ReplicaExchange` adapts its ladder in tuning (``adapt=LadderAdaptation(...)``).

    Parameters
    ----------
    max_temperatures : int, default 32
        Most replicas the adaptation may use.
    collapse_below : float, default 1.5
        Barrier ``Λ`` under which tuning drops every hot replica. ``Λ`` is
        about the number of rejected swaps a replica meets on its way across
        the ladder; below 1.5 the measured models (docs/benchmarks.md) mixed as
        well without tempering, for less.

    Raises
    ------
    ValueError
        For ``max_temperatures`` not an integer of at least 2, or ``collapse_below`` not a finite number >= 0.
    """

    max_temperatures: int = 32
    collapse_below: float = 1.5

    def __post_init__(self):
        m = self.max_temperatures
        if isinstance(m, bool) or not isinstance(m, numbers.Integral) or m < 2:
            raise ValueError(f"max_temperatures must be an integer >= 2, got {m!r}")
        c = self.collapse_below
        if isinstance(c, bool) or not (isinstance(c, numbers.Real) and np.isfinite(c) and c >= 0):
            raise ValueError(f"collapse_below must be a finite number >= 0, got {c!r}")
        object.__setattr__(self, "max_temperatures", int(m))
        object.__setattr__(self, "collapse_below", float(c))


class LadderTuning:
    """Reference, adaptation and round trips of the ladder of :class:`~pymc_rbm.step_methods.ReplicaExchange`."""

    @property
    def path(self) -> AnnealingPath | None:
        """The annealing path of the hot rungs from the reference in use to the RBM; None for the uniform one and
        for a mixture (whose targets are :class:`~pymc_rbm.kernels.mixture_reference.MixturePoint`)."""
        if self.reference_in_use in ("zero", "mixture"):
            return None
        if self._path is None:
            mf = mean_field_fields(self._rbm) if self.reference_in_use == "mean_field" else None
            if mf is not None and mf.gap > MEAN_FIELD_CLEAR_GAP:  # one clear solution: its product on both layers
                self._path = AnnealingPath(self._rbm, mf.vbias, base_hbias=mf.hbias, operator=self.operator)
            else:  # a given reference, or mean-field solutions of about equal weight: visible fields alone
                base = self.reference if self.reference_in_use == "given" else self.reference_in_use
                self._path = annealing_path(self._rbm, base=base, operator=self.operator)
        return self._path

    def _use_reference(self, name: str) -> None:
        """Switch the hot rungs' reference (tuning only): new targets on the same ladder."""
        self.reference_in_use = name
        self._path = self._path_evidence = self._path_hidden = None
        self._reset_counters()

    @property
    def reference_vbias(self) -> np.ndarray:
        """The reference's visible biases ``b`` (zeros for the uniform reference)."""
        path = self.path
        return np.zeros(self.n_visible) if path is None else path.base_vbias

    @property
    def reference_hbias(self) -> np.ndarray:
        """The reference's hidden fields ``c`` (zeros but for the mean-field reference)."""
        path = self.path
        return np.zeros(self.n_hidden) if path is None or path.base_hbias is None else path.base_hbias

    def _reference_energy(self, e: np.ndarray, v: np.ndarray, h: np.ndarray) -> np.ndarray:
        """``U = E + b·v + c·h`` of replicas with energies ``e`` (..., ): the energy the hot rungs are tempered
        by, the reference's terms entering untempered (``E`` itself for the uniform reference)."""
        path = self.path
        if path is None:
            return e
        u = e + v @ path.base_vbias
        return u if path.base_hbias is None else u + h @ path.base_hbias

    def _reference_hidden_fields(self) -> np.ndarray | None:
        """``(1 - β_r) c`` for every replica, (K, n_hidden), for the compiled rounds; None without hidden fields."""
        path = self.path
        if path is None or path.base_hbias is None:
            return None
        if self._path_hidden is None or self._path_hidden.shape[0] != self.n_temperatures:
            self._path_hidden = np.ascontiguousarray((1.0 - self.betas)[:, None] * path.base_hbias[None, :])
        return self._path_hidden

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
            self.round_trips += replica_rounds.count_round_trips(self.replica_labels, self.trip_ends, self.trip_up)
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

    # ------------------------------------------------------------ explorers

    @property
    def _measuring_explorers(self) -> bool:
        """Whether rounds record the explorers' relaxation: adapted sweeps, in tuning, before the last adaptation."""
        return bool(self.explorer_auto and self.ladder_adapt_at and self.ladder_draw <= self.ladder_adapt_at[-1]
                    and not self.posterior_ladder)

    def _record_explorers(self, energies: np.ndarray) -> None:
        """Add a round's energies before and after each rung's sweeps, ``(2, n_rungs, n_chains)``, to the sums."""
        if not self._measuring_explorers:
            return
        x, y = energies[0], energies[1]
        k = x.shape[0]
        sums = self.rung_energy_sums
        sums[0, :k] += x
        sums[1, :k] += y
        sums[2, :k] += x * x
        sums[3, :k] += y * y
        sums[4, :k] += x * y
        self.rung_energy_n[:k] += 1

    def explorer_correlation(self) -> np.ndarray:
        """Per rung: the correlation of the energy before and after its sweeps since the last adaptation.

        Covariances within each row (chain), pooled over rows; NaN at rungs with
        fewer than ``EXPLORER_MIN_ROUNDS`` rounds recorded or no variance.
        """
        n = self.rung_energy_n
        sx, sy, sxx, syy, sxy = self.rung_energy_sums
        with np.errstate(invalid="ignore", divide="ignore"):
            nn = np.maximum(n, 1.0)[:, None]
            cov = (sxy - sx * sy / nn).sum(axis=1)
            vx = (sxx - sx * sx / nn).sum(axis=1)
            vy = (syy - sy * sy / nn).sum(axis=1)
            rho = cov / np.sqrt(vx * vy)
        rho[(n < EXPLORER_MIN_ROUNDS) | ~(vx > 0) | ~(vy > 0)] = np.nan
        return rho

    def _adapt_explorers(self, new_betas: np.ndarray) -> np.ndarray:
        """The sweeps per replica of the ladder ``new_betas``: measured at the current rungs, each new rung
        taking those of the current rung nearest in β, within the budget (call before the ladder moves)."""
        if not self.explorer_auto:
            return self._initial_explorer_sweeps(new_betas.size)
        if new_betas.size == 1 or self.posterior_ladder:
            return np.ones(new_betas.size, dtype=np.int64)
        wanted = explorer_sweeps_for(self.explorer_correlation(), self.rung_sweeps)
        old = self.betas
        source = np.abs(old[None, :] - new_betas[:, None]).argmin(axis=1)
        source[-1] = old.size - 1
        return within_budget(wanted[source])

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
        judged = self.reference_trial != 1  # the window's round trips are those of the reference kept
        if separate:
            ladder, rejection = ladder[:-1], rejection[:-1]
        self.barrier = float(communication_barrier(ladder, rejection, saturating=True)[-1])
        if self.reference_trial == 0:  # the uniform reference measured: measure the mean-field one next
            self.rung_sweeps = self._adapt_explorers(self.betas)
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
            new = equalized_ladder(ladder, rejection, ladder.size, saturating=True) if ladder.size > 1 else ladder
        elif self.barrier < self.collapse_below and not self._uniform_needs_tempering and self.mixture is None:
            new = np.array([1.0])  # (a mixture's low barrier says its bottom rung, drawn exactly, is near the model)
        else:
            new = equalized_ladder(ladder, rejection, self._rungs_for(self.barrier), saturating=True)
            if self.can_temper_likelihood:  # the RBM needs tempering: temper the whole posterior from now on
                self.posterior_ladder = True
        if self.tilted and self.carried.evidence is not None:  # the hot rungs' evidence: the current draw's
            self.ladder_tilt = self.carried.evidence[1]
        new = self._with_cold(new)
        sweeps = self._adapt_explorers(new)
        restart = back = False
        if new.size > 1 and self.ladder_draw == self.ladder_adapt_at[-1] and self._cold_sweeps_adapted:
            if self.mixture is not None and self.ladder_carries:  # replicas arrive with fresh modes: the draws
                sweeps = cold_matches_hot(sweeps)  # need the cold one relaxed
            elif self.mixture is not None:  # a ladder restarted from the visited modes: the cold one takes the rest
                sweeps = cold_takes_rest(sweeps)
            elif judged:
                self.ladder_carries = ladder_carries(self.round_trips, self._window_rounds, self.barrier,
                                                     self._n_chains)
                if not self.ladder_carries:
                    sweeps = cold_takes_rest(sweeps)
                    back = self._uniform_may_carry
                    restart = not back and self.mixture_states is not None
        if back:
            self._back_to_uniform()
        elif restart:
            self._restart_from_visited(new.size)
        else:
            self._move_replicas(new)
            self.rung_sweeps = sweeps
        self._next_mixture_refit()

    def _rungs_for(self, barrier: float) -> int:
        """Rungs of a ladder of barrier ``Λ``: ``⌈2Λ⌉ + 1``, at least 2, at most what ``max_temperatures`` leaves
        the RBM's ladder."""
        limit = self.max_temperatures - int(self.separate_cold)
        return rungs_for_barrier(barrier, limit)

    @property
    def _uniform_may_carry(self) -> bool:
        """Whether tuning chose the mean-field reference over a uniform one whose measured ladder fits in
        ``max_temperatures`` rungs: where the mean-field ladder then carries nothing, its low barrier may have
        come from a ladder that stays in one mode."""
        if self.reference_trial != 2 or self.reference_in_use != "mean_field":
            return False
        limit = self._rungs_for(np.inf)
        return bool(rungs_for_barrier(self.reference_trial_barrier, limit + 1) <= limit)

    def _back_to_uniform(self) -> None:
        """Go back to the uniform reference measured in tuning (``reference_trial`` 3), on the ladder its rejection
        rates ask for with one sweep a rung; one more adaptation at ``RESTART_ADAPT_AT`` of the tune phase spaces
        it anew and judges it, and a ladder that carries nothing then keeps it (the cold replica the rest)."""
        self.reference_trial = 3
        self._use_reference("zero")
        self.barrier = self.reference_trial_barrier
        new = equalized_ladder(self.reference_trial_ladder, self.reference_trial_rejection,
                               self._rungs_for(self.barrier), saturating=True)
        self._move_replicas(self._with_cold(new))
        self.rung_sweeps = np.ones(self.n_temperatures, dtype=np.int64)
        self.ladder_carries = True  # judged anew
        self._one_more_adaptation()

    def _one_more_adaptation(self) -> None:
        """Add an adaptation at ``RESTART_ADAPT_AT`` of the tune phase (after this draw, at most its end)."""
        again = min(max(int(self.ladder_tune * RESTART_ADAPT_AT), self.ladder_draw + 1), self.ladder_tune)
        self.ladder_adapt_at = sorted(set(self.ladder_adapt_at) | {again})

    def _restart_from_visited(self, n_rungs: int) -> None:
        """Restart a ladder that carries nothing from the modes its model's replica visited (tuning only).

        The reference becomes the mixture of the distinct mean-field fixed points that the states kept since
        the adaptation before lead to (at most ``MIXTURE_REFIT_COMPONENTS`` of them drawn as starts,
        :func:`~pymc_rbm.estimators.base_rate.mixture_reference`), on ``n_rungs`` rungs even in β with one sweep
        each; one more adaptation, at ``RESTART_ADAPT_AT`` of the tune phase, spaces them for it and gives the
        cold replica the rest of a draw's sweeps (:func:`cold_takes_rest`).
        """
        states = self.mixture_states.reshape(-1, self.n_visible)
        self.mixture = mixture_reference(self._rbm, states, n_components=MIXTURE_REFIT_COMPONENTS, rng=self.rng)
        self.mixture_refit, self.mixture_states = 2, None
        self._use_reference("mixture")
        self._move_replicas(np.linspace(0.0, 1.0, n_rungs))
        self.rung_sweeps = np.ones(n_rungs, dtype=np.int64)
        self._one_more_adaptation()

    # ------------------------------------------------------------ the mixture refitted in tuning

    def _plans_mixture_refit(self, tune: int) -> bool:
        """Whether tuning refits the mixture reference: ``reference="mixture"`` (the model's own fixed points, not a
        mixture given) with an adapted ladder and at least ``MIXTURE_REFIT_MIN_TUNE`` tuning draws."""
        return bool(self.refits_mixture and self.adapt and tune >= MIXTURE_REFIT_MIN_TUNE)

    def _next_mixture_refit(self) -> None:
        """After an adaptation. A product's ladder of one row, at the adaptation before its last: keep the top
        rung's state of every draw (``mixture_states``) until the last, for :meth:`_restart_from_visited`. A
        mixture's ladder: from the first, keep the top rung's state of every draw; at the third, refit the
        mixture to them: the distinct mean-field fixed points reached from those states and from the current
        components' modes (:func:`~pymc_rbm.estimators.base_rate.mixture_reference`), so that the components
        sit in the modes the chain visits. The ladder is adapted to the new mixture at the next
        adaptation, and both are frozen with the ladder when tuning ends."""
        later = [a for a in self.ladder_adapt_at if a > self.ladder_draw]
        if self.mixture is None:  # a product's ladder: keep the model's replica's states of the window judged last
            keep = (len(later) == 1 and self.n_temperatures > 1 and self._n_chains == 1 and self._cold_sweeps_adapted
                    and self.reference_trial != 3)  # (a uniform ladder taken back is not restarted)
            self.mixture_states = np.zeros((later[0] - self.ladder_draw, 1, self.n_visible)) if keep else None
            self.mixture_states_start, self.mixture_refit = self.ladder_draw, (1 if keep else -1)
            return
        if self.mixture_refit < 0 or self.n_temperatures < 2:
            return
        if self.mixture_refit == 0 and len(later) >= 2:  # collect until the adaptation after next
            self.mixture_states = np.zeros((later[1] - self.ladder_draw, self._n_chains, self.n_visible))
            self.mixture_states_start = self.ladder_draw
            self.mixture_refit = 1
        elif self.mixture_refit == 1 and self.ladder_draw >= self.mixture_states_start + self.mixture_states.shape[0]:
            modes = (self.mixture.visible_logits > 0).astype(np.float64)  # every current component's mode, and
            states = self.mixture_states.reshape(-1, self.n_visible)  # visited states up to the cap
            take = min(states.shape[0], max(MIXTURE_REFIT_COMPONENTS - modes.shape[0], 0))
            starts = np.vstack([modes, states[np.sort(self.rng.choice(states.shape[0], size=take, replace=False))]])
            self.mixture = mixture_reference(self._rbm, starts, n_components=starts.shape[0], rng=self.rng)
            self._use_reference("mixture")
            self.mixture_refit, self.mixture_states = 2, None

    def _record_top_state(self) -> None:
        """While the mixture's refit collects, keep the top rung's state of the RBM's ladder (every row)."""
        i = self.ladder_draw - self.mixture_states_start - 1
        if i < self.mixture_states.shape[0] and self._replicas is not None:
            self.mixture_states[i] = self._replicas.v[-2 if self.separate_cold else -1]

    @property
    def _window_rounds(self) -> int:
        """Rounds each row made since the adaptation before this draw's: the draws since then times the rounds a
        draw, which only an adaptation changes (for an adaptation, call before the ladder moves)."""
        earlier = [a for a in self.ladder_adapt_at if a < self.ladder_draw]
        return (self.ladder_draw - (earlier[-1] if earlier else 0)) * self.rounds_per_draw

    @property
    def _cold_sweeps_adapted(self) -> bool:
        """Whether the last adaptation sets the cold replica's sweeps (:func:`cold_takes_rest` from a product
        reference, :func:`cold_matches_hot` from a mixture): the RBM alone with adapted sweeps."""
        return bool(self.explorer_auto and self.auto_sweeps
                    and not (self.corrected or self.tilted or self.posterior_ladder))

    @property
    def _uniform_needs_tempering(self) -> bool:
        """Whether the uniform reference, measured in tuning, found a barrier above ``collapse_below``.

        A reference close to one mode of the model can show a low barrier
        because its ladder stays in that mode; the ladder collapses only when
        the uniform reference, which favours no mode, finds the model easy too.
        """
        return bool(self.reference_trial >= 2 and self.reference_trial_barrier >= self.collapse_below)

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

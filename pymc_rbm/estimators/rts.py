"""Rao-Blackwellized tempered sampling (RTS) of ``log Z``.

Carlson, Stinson, Pakman & Paninski (2016, "Partition functions from
Rao-Blackwellized tempered sampling") run simulated tempering on the joint
``(x, β)`` with

    q(x, β_k) ∝ f_k(x) r_k / Ẑ_k,

where ``f_k`` are the unnormalised marginals of the AIS path
(:class:`~pymc_rbm.estimators.path.AnnealingPath`: ``β_1 = 0`` is the base-rate
model, whose ``Z_1`` is known, ``β_K = 1`` the target), ``r_k`` a prior on
the ladder (uniform here) and ``Ẑ_k`` the current guesses of ``Z_k``. The
marginal of the temperature is ``q(β_k) ∝ r_k Z_k / Ẑ_k``, so

    Z_k = Z_1 (Ẑ_k / Ẑ_1) (r_1 / r_k) q(β_k) / q(β_1),

and ``q(β_k)`` is estimated by the Rao-Blackwellized average
``ĉ_k = (1/N) Σ_t q(β_k | x_t)`` over the whole conditional, not by counting
visits. An iteration moves ``x`` with a kernel that leaves ``q(x | β)``
invariant (``sweeps_per_move`` sweeps of the path's intermediate RBM at the
chain's own β), then draws ``β`` from ``q(β | x) ∝ f_k(x) r_k / Ẑ_k`` (a
Gibbs update over the whole ladder) and adds ``q(· | x)`` to ``ĉ``. After
each round of ``n_sweeps`` sweeps the guesses are replaced by the estimates,

    log Ẑ_k ← log Ẑ_k + log ĉ_k - log ĉ_1,        (``log Ẑ_1 = log Z_1`` stays fixed)

which drives ``q(β)`` towards the prior: at the fixed point every β is
visited equally often and ``ĉ_k = 1/K``.

Why Zhang's (2016) RTS "collapsed to β = 1"
-------------------------------------------
Zhang (2016, §2.4.2) starts from ``Ẑ_k = 1``, reports that ``q(β | x)``
concentrates on ``β = 1`` after a few draws and that the results do not
converge, and falls back to drawing β uniformly. Running the real method from
the same start (``init="flat"``: every ``log Ẑ_k = log Z_1``) on the MNIST
models shows what happens:

1. *The collapse is correct behaviour, caused by the start.* The marginal is
   ``q(β_k) ∝ Z_k / Ẑ_k``; with equal guesses it is ``∝ Z_k``, and along the
   path ``log Z_K - log Z_1`` is tens of nats, so the whole mass sits at
   ``β = 1``: round 1 puts nearly all the draws on the top rung. Nothing is
   wrong with the sampler or with the sign of the update.
2. *The non-convergence is the update overshooting.* From a collapsed round,
   ``ĉ_k / ĉ_1`` is in effect an importance-sampling estimate of
   ``Z_k / Z_1`` from draws of the top distribution only; for the far rungs it
   misses the mass that matters and is off by tens of nats, always in the
   direction that makes the *other* end look too probable. The next round
   collapses onto ``β = 0``, and so on: the estimate of ``log Z`` swings by
   tens of nats from round to round before it settles. The fixed-point
   iteration only contracts once the guesses are within a few nats.
3. *The uniform-β fallback is biased.* With β drawn uniformly, independently of
   ``x``, the chain no longer samples ``q(x, β)``, so ``ĉ_k`` no longer
   estimates ``q(β_k)`` (it would only if the ``x`` chain sampled the mixture
   ``Σ_k p_k / K`` exactly), which fits Zhang's RTS errors of several nats.

So the real method works as published once it starts inside the region where
its update contracts. ``init="ais"`` takes the guesses from a short AIS pilot
along the ladder, accurate to a fraction of a nat on small and medium models,
with the chains spread over the ladder from the pilot's states; from the
second round on, the draws are spread evenly over the ladder. All quantities
are logarithms (``q(β | x)`` by log-sum-exp). ``init="flat"`` remains
available to reproduce Zhang's start; a warning is raised when the last
round is still collapsed, since its estimate is then unreliable.

Starting from BAR (the default)
-------------------------------
On large trained models a pilot is not enough (next section): the chains
need far longer than a run to reach the tempered distribution from it. By
default (``init="bar"``, :func:`~pymc_rbm.estimators.ladder.bar_ladder`) RTS therefore starts from a run
of Bennett's acceptance ratio along the ladder
(:func:`~pymc_rbm.estimators.bar.ladder_start`): every rung's ``log Ẑ_k``
from the forward and reverse runs' partial weights, and every chain from a
draw of its rung's weighted states followed by sweeps there, the chains
spread evenly over the ladder. The tempered chain then starts near its
stationary distribution, and the rounds only have to keep it there. They
still swing, since each round's estimate is noisy and the slowly mixing
chains react to a new guess only after several rounds; so after a BAR start
the guesses are the running mean of the start's and the rounds' estimates
(``update="mean"``) instead of the last round's (Carlson et al.'s
``update="replace"``). ``update`` and ``n_rounds`` are the fields of
:class:`RTSRounds`, ``init`` and the start's other options those of
:class:`~pymc_rbm.estimators.options.StartOptions`.

Near the top of the ladder the states relax slowly (the region where AIS's
chains lag), and with one sweep per draw of β (Carlson et al.'s iteration) a
chain that has just moved up is drawn back down before its state has
relaxed at the new β: the top rungs then lose their share of the draws for
thousands of iterations, and the rounds drift from the start by more than
half a nat. After a BAR start an iteration therefore takes four sweeps
(``sweeps_per_move=4``) and a round 2000 sweeps (500 draws of β): for the
same number of sweeps there are fewer evaluations of ``f_k`` at every rung,
which cost more than a sweep, and the estimates stay within their standard
errors ("RTS and SAMS on h500" in docs/estimators.md has the figures).

The estimate and its error
--------------------------
Within a round ``Ẑ`` is fixed and the ``n_chains`` chains are independent, so
the round's estimate ``log Ẑ_K + log ĉ_K - log ĉ_1`` has a delta-method
standard error from the spread of the per-chain averages ``ĉ^{(m)}``,
``Var(log ĉ_K - log ĉ_1) ≈ Var_m(ĉ_K^{(m)}/ĉ_K - ĉ_1^{(m)}/ĉ_1) / n_chains``,
which accounts for the autocorrelation within each chain. The first round is
burn-in; the returned ``log Z`` is the mean of the other rounds' estimates.
An error in one round's ``Ẑ`` is undone, to first order, by the next round's
``ĉ``, so the rounds' errors are nearly independent and their standard
errors are combined as such. The rounds also serve as batches: the returned
standard error is the larger of that combination and the spread of the
rounds' estimates over ``sqrt(n_rounds - 1)``. When the rounds disagree
beyond their errors (chi-square test at 0.001), as they do when the chains
have not reached every temperature often enough, or when the last round is
collapsed (a temperature got less than a tenth of its share of the draws), a
warning is raised and the standard error is at least the standard deviation
of the rounds themselves, not divided by ``sqrt(n_rounds - 1)``: rounds that
drift or disagree are not independent draws around one value, and their mean
is no more precise than one of them (the rule is ``spread_stderr`` of the
module shared with SAMS). Ctrl-C ends the run after the rounds done so
far, with a warning; their estimate is returned.

On large trained models (mnist_h500) started from the pilot, that is what
happens: the states mix slowly near ``β ≈ 1`` (the same region where AIS's
chains lag). While the top rung's guess is too low the chains crowd onto it,
and they stay there long after the guess has been corrected, so the next
update overshoots and the rounds' estimates swing over several thousand
iterations. Re-estimating each round's draws by MBAR, which does not assume
the occupancy that ``Ẑ`` implies, gives the same numbers
(``benchmarks/rts_rounds.py``). So the update is sound and it is the draws
that are not yet from the tempered distribution. The BAR start is the
remedy; "RTS and SAMS on h500" in docs/estimators.md has the measurements of
both starts.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy.stats import chi2

from pymc_rbm._runtime import Progress, StopOnInterrupt, single_blas_thread
from pymc_rbm.estimators.bar import LadderStart
from pymc_rbm.estimators.ladder import (
    LADDER_SPACING,
    Ladder,
    bar_ladder,
    build_ladder,
    check_init,
    check_ladder,
    count_moves,
    initial_log_z,
)
from pymc_rbm.estimators.path import AnnealingPath
from pymc_rbm.estimators.options import PathOptions, StartOptions, check_record, refuse_moved
from pymc_rbm.estimators.path_arguments import path_from_options
from pymc_rbm.estimators.coverage import top_states, with_coverage
from pymc_rbm.estimators.reliability import check_occupancy, check_start, combine_with_start, spread_stderr
from pymc_rbm.estimates import LogPartitionEstimate, fingerprint_of
from pymc_rbm.estimators.rts_rounds import RoundRecorder, run_rounds
from pymc_rbm.params import RBMParams
from pymc_rbm.validation import check_positive_int

__all__ = [
    "rts",
    "RTSRounds",
    "RTSOptions",
    "RTSStart",
    "rts_start",
    "rts_estimate",
]


# ---------------------------------------------------------------- options
@dataclass(frozen=True, eq=False)
class RTSRounds:
    """The rounds of RTS: how many, and how the guesses ``log Ẑ`` follow them.

    Carlson et al. (2016) iterate: each round of ``n_sweeps`` sweeps runs the
    tempered chains with the guesses ``Ẑ`` fixed and estimates every rung's
    ``log Z`` from the Rao-Blackwellized occupancy ``ĉ``; the guesses are then
    updated (the module docstring has the method).

    Parameters
    ----------
    n_rounds : int, default 4
        Rounds of ``n_sweeps`` sweeps; ``Ẑ`` is updated after each. The first
        round is burn-in and adaptation only; the estimate averages the
        others.
    update : {"mean", "replace"}, optional
        How the guesses follow the rounds. ``"replace"`` (Carlson et al.
        2016, the default except after ``init="bar"``): ``log Ẑ`` becomes each
        round's estimate. ``"mean"`` (the default after ``init="bar"``): it
        becomes the mean of the start's and every round's estimates so far
        (a stochastic-approximation gain ``1/(r + 2)`` after round ``r``). On
        slowly mixing models a round's estimate is noisy and the chains react
        to a new guess only after several rounds, so replacing the guess
        makes the rounds swing; the mean damps that, but needs a start
        within about a nat.

    Raises
    ------
    ValueError
        For a count of rounds that is not a positive integer, or another update.

    Examples
    --------
    >>> from pymc_rbm.estimators import RTSRounds
    >>> RTSRounds(n_rounds=8, update="replace").n_rounds
    8
    """

    n_rounds: int = 4
    update: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "n_rounds", check_positive_int(self.n_rounds, "n_rounds"))
        if self.update is not None and not (isinstance(self.update, str) and self.update in ("mean", "replace")):
            raise ValueError(f'update must be "mean" or "replace", got {self.update!r}')


#: Where the keywords that :func:`rts` took before its records went: ``{keyword: (record keyword, record)}``.
RTS_MOVED = {
    **{name: ("rounds", RTSRounds) for name in ("n_rounds", "update")},
    **{name: ("start", StartOptions) for name in ("init", "n_start", "n_equilibrate", "n_pilot", "spacing")},
    **{name: ("path_options", PathOptions) for name in ("operator", "base", "base_smoothing", "dtype")},
}


@dataclass(frozen=True, eq=False)
class RTSOptions:
    """The options of :func:`rts`, checked, with the defaults of their start resolved; bound once per call.

    Attributes
    ----------
    betas : None, int or array_like
        The ladder as given (:func:`~pymc_rbm.estimators.ladder.check_ladder`).
    n_chains, n_rounds, n_sweeps, sweeps_per_move : int
    update : {"mean", "replace"}
    start : StartOptions
        With ``init``, ``n_equilibrate`` and ``spacing`` filled in.
    """

    betas: object
    n_chains: int
    n_rounds: int
    n_sweeps: int
    sweeps_per_move: int
    update: str
    start: StartOptions

    @classmethod
    def resolve(
        cls,
        *,
        betas=None,
        n_chains=300,
        n_sweeps=None,
        sweeps_per_move=None,
        rounds=None,
        start=None,
        callback=None,
    ) -> "RTSOptions":
        """Check the arguments of :func:`rts` and fill in the defaults of the start they choose."""
        check_ladder(betas)
        n_chains = check_positive_int(
            n_chains, "n_chains", 2, " (the standard error comes from the spread between chains)"
        )
        rounds = check_record(rounds, RTSRounds, "rounds")
        start = check_record(start, StartOptions, "start").resolved(init="bar", spacing=LADDER_SPACING)
        check_init(start.init, flat="flat")
        warm = start.warm
        # the defaults measured for each start (docs/estimators.md, "RTS and SAMS on h500")
        n_sweeps = (2000 if warm else 1000) if n_sweeps is None else n_sweeps
        sweeps_per_move = (4 if warm else 1) if sweeps_per_move is None else sweeps_per_move
        count_moves(n_sweeps, sweeps_per_move)
        update = ("mean" if warm else "replace") if rounds.update is None else rounds.update
        if callback is not None and not callable(callback):
            raise TypeError(f"callback must be callable, got {type(callback).__name__}")
        return cls(
            betas=betas,
            n_chains=n_chains,
            n_rounds=rounds.n_rounds,
            n_sweeps=n_sweeps,
            sweeps_per_move=sweeps_per_move,
            update=update,
            start=start,
        )

    @property
    def warm(self) -> bool:
        """Whether the run starts from BAR (``init="bar"``)."""
        return self.start.warm

    @property
    def sweeps_per_round(self) -> int:
        """The sweeps a round takes: whole iterations of ``sweeps_per_move`` sweeps."""
        return count_moves(self.n_sweeps, self.sweeps_per_move) * self.sweeps_per_move

    @property
    def total_sweeps(self) -> int:
        """The sweeps of the whole call (pilot, BAR start, rounds), for the progress bar."""
        s = self.start
        start = 2 * s.n_start + 2 * s.n_equilibrate if self.warm else 0
        return s.n_pilot + self.n_rounds * self.sweeps_per_round + start


# ------------------------------------------------------------------ start
class RTSStart(NamedTuple):
    """Where the rounds of RTS begin (:func:`rts_start`).

    Attributes
    ----------
    ladder : Ladder
        The temperatures, with the starting states and labels of the chains.
    log_z_init : ndarray of shape (K,)
        The initial guesses ``log Ẑ_k`` (``log Ẑ_1 = log Z_1``).
    start : LadderStart or None
        The BAR run of ``init="bar"``, else None.
    """

    ladder: Ladder
    log_z_init: np.ndarray
    start: LadderStart | None


def rts_start(path: AnnealingPath, rng, options: RTSOptions, *, bar=None, guard=None) -> RTSStart:
    """The pilot phase of RTS: the ladder, the initial guesses and the chains' starting states (stochastic).

    A pilot AIS run places the ladder (:func:`~pymc_rbm.estimators.ladder.build_ladder`); with
    ``init="bar"`` a BAR run along it gives the guesses and equilibrated states instead
    (:func:`~pymc_rbm.estimators.ladder.bar_ladder`).
    """
    s = options.start
    ladder = build_ladder(path, rng, options.n_chains, options.betas, n_pilot=s.n_pilot, spacing=s.spacing, bar=bar)
    start = None
    if options.warm:
        ladder, start = bar_ladder(
            path, rng, ladder, options.n_chains, n_steps=s.n_start, n_equilibrate=s.n_equilibrate, bar=bar, guard=guard
        )
    log_zhat = path.log_z_base + initial_log_z(s.init, ladder.log_z_init, flat="flat")
    return RTSStart(ladder, log_zhat, start)


# ----------------------------------------------------------------- result
def rts_estimate(
    path: AnnealingPath, options: RTSOptions, start: RTSStart, recorder: RoundRecorder, *, interrupted: bool, t0: float
) -> LogPartitionEstimate:
    """The estimate of :func:`rts` from its recorded rounds: the mean of rounds 2 on, with the standard error rule.

    The first round is burn-in; the rounds' delta-method errors are combined as for
    independent rounds, then checked against their spread (chi-square at 0.001),
    the ladder's occupancy and the BAR start
    (:mod:`~pymc_rbm.estimators.reliability`), with warnings where they fail.
    """
    n_done = len(recorder)
    diagnostics = {"interrupted": interrupted, "n_rounds_done": n_done, "seconds": time.perf_counter() - t0}
    if n_done == 0:
        warnings.warn(
            "RTS was interrupted (Ctrl-C) before its first round ended: there is no estimate (log_z is NaN)",
            RuntimeWarning,
            stacklevel=3,
        )
        return LogPartitionEstimate(log_z=float("nan"), method="rts", stderr=float("nan"), diagnostics=diagnostics)
    if interrupted:
        warnings.warn(
            f"RTS was interrupted (Ctrl-C) after {n_done} of {options.n_rounds} rounds: the estimate uses the rounds "
            "that ended (diagnostics['interrupted'] is True)",
            RuntimeWarning,
            stacklevel=3,
        )
    occupancy = recorder.occupancy[n_done - 1]
    consistent = check_occupancy(occupancy, "RTS", stacklevel=4)
    used = slice(1, n_done) if n_done > 1 else slice(None, n_done)
    est = np.array(recorder.estimates[used])
    se = np.array(recorder.stderrs[used])
    log_z = float(est.mean())
    nominal = float(np.sqrt((se**2).sum()) / est.size)
    agree = np.all(np.abs(est - log_z) <= 1e-9 * (1.0 + abs(log_z)))  # to rounding (a product model: W = 0)
    if est.size >= 2 and not agree:
        chi2_stat = float((((est - log_z) / np.maximum(se, np.finfo(float).tiny)) ** 2).sum())
        if chi2.sf(chi2_stat, est.size - 1) < 1e-3:
            consistent = False
            warnings.warn(
                f"RTS: the rounds' estimates {np.round(est, 3).tolist()} disagree beyond their standard errors "
                "(Ẑ is still adapting or the chains mix too slowly); the standard error is their spread, not "
                "the spread over sqrt(rounds): use more or longer rounds",
                RuntimeWarning,
                stacklevel=3,
            )
    # the rounds as batches: their spread needs no assumption about the chains (spread_stderr has the rule)
    stderr, rule = spread_stderr(nominal, est, consistent)
    start_estimate = None if start.start is None else start.start.estimate
    rounds_log_z, rounds_stderr = log_z, stderr
    # rounds whose checks failed (their error is their spread) are not weighed with the start: their error is no
    # measure of their precision
    trusted = start_estimate if rule != "spread" else None
    stderr, agrees = check_start(log_z, stderr, start_estimate, "RTS", stacklevel=4)
    rule = rule if agrees else "start"
    log_z, combined, start_weight = combine_with_start(rounds_log_z, rounds_stderr, trusted)
    stderr = combined if agrees else max(combined, abs(log_z - rounds_log_z), abs(log_z - start_estimate.log_z))
    estimate = LogPartitionEstimate(
        fingerprint=fingerprint_of(path.models[0]),
        log_z=log_z,
        method="rts",
        stderr=stderr,
        interval=(log_z - 3.0 * stderr, log_z + 3.0 * stderr),
        diagnostics={
            **diagnostics,
            "stderr_nominal": nominal,
            "stderr_rule": rule,
            "betas": start.ladder.s,
            "log_z_ladder": recorder.log_zhat,
            "log_z_init": start.log_z_init,
            "log_z_guesses": recorder.guesses,
            "occupancy": occupancy,
            "c_hat": recorder.c_hat,
            "history": np.array(recorder.estimates),
            "history_stderr": np.array(recorder.stderrs[:n_done]),
            "occupancy_history": np.array(recorder.occupancy[:n_done]),
            "log_z_base": path.log_z_base,
            "start": start_estimate,
            "rounds": rounds_log_z,
            "rounds_stderr": rounds_stderr,
            "start_weight": start_weight,
            "update": options.update,
            "n_chains": options.n_chains,
            "n_rounds": options.n_rounds,
            "n_sweeps": options.n_sweeps,
            "sweeps_per_move": options.sweeps_per_move,
            "operator": path.alpha,
        },
    )
    return with_coverage(estimate, path.models[0], samples=top_states(path, start.ladder), stacklevel=5)


# ------------------------------------------------------------- estimator
def rts(
    params: RBMParams,
    *,
    betas=None,
    n_chains: int = 300,
    n_sweeps: int | None = None,
    sweeps_per_move: int | None = None,
    rounds: RTSRounds | None = None,
    start: StartOptions | None = None,
    path_options: PathOptions | None = None,
    data=None,
    rng=None,
    progress: bool = False,
    callback=None,
    **moved,
) -> LogPartitionEstimate:
    """Rao-Blackwellized tempered sampling estimate of ``log Z`` (stochastic).

    See the module docstring for the method, the iterated update of the
    guesses ``Ẑ_k`` and why Zhang's (2016) version collapsed onto ``β = 1``.

    Parameters
    ----------
    params : RBMParams or AnnealingPath
        The target RBM, or an annealing path to it built once
        (:func:`~pymc_rbm.estimators.annealing_path`), which then fixes the
        base distribution, ``dtype`` and ``operator``.
    betas : None, int or array_like, default None
        The ladder (:func:`~pymc_rbm.estimators.ladder.check_ladder`). ``None``: placed at equal
        thermodynamic length ``spacing`` from a pilot AIS run
        (:func:`~pymc_rbm.estimators.ladder.build_ladder`). An int ``K``: ``K`` uniform values.
        The cost of an iteration grows with ``len(betas) * n_hidden``
        (``q(β | x)`` needs ``f_k(x)`` at every rung).
    n_chains : int, default 300
        Independent tempered chains, advanced together. Where chains mix
        slowly, many chains for a few rounds beat few chains for many:
        each round's estimate then averages more chains, and the chains have
        less time to drift from their start.
    n_sweeps : int, optional
        Sweeps of ``x`` per round: default 2000 after the BAR start, else
        1000.
    sweeps_per_move : int, optional
        Sweeps of ``x`` at fixed β between draws of β (an iteration): default
        4 after the BAR start, else 1 (Carlson et al.'s iteration). Where the
        states relax slowly near β = 1, a chain that has just moved up needs
        a few sweeps there before β is drawn again, or it is drawn straight
        back down and the top rungs lose their share (module docstring).
    rounds : RTSRounds, optional
        How many rounds, and how the guesses follow them
        (:class:`RTSRounds`; default 4 rounds, ``update="mean"`` after the
        BAR start, else Carlson et al.'s (2016) ``"replace"``). The first
        round is burn-in and adaptation only; the estimate averages the
        others (see Returns).
    start : StartOptions, optional
        The pilot run that places the ladder and the start of the guesses
        ``log Ẑ_k`` and of the chains
        (:class:`~pymc_rbm.estimators.options.StartOptions`). ``init``
        defaults to ``"bar"``: a BAR run of ``n_start`` steps each way gives
        every rung's guess and equilibrated starting states, spread evenly
        over the ladder (:func:`~pymc_rbm.estimators.ladder.bar_ladder`).
        ``"ais"``: guesses from the pilot run, the chains starting from its
        states; ``"flat"``: all equal to ``log Z_1`` (Zhang's (2016) start,
        for comparison); an array: those values (shifted so that the first
        is ``log Z_1``). The last three start from the pilot's states, spread
        over the ladder. The rungs' ``spacing`` defaults to 1.0: neighbouring
        ``q(x | β_k)`` overlap well, and RTS, which jumps over the whole
        ladder, needs no finer one; Carlson et al. (2016) found it
        insensitive to the number of temperatures.
    path_options : PathOptions, optional
        The annealing path's operator (``"gibbs"``, ``"flip"`` or a weight,
        as in :func:`~pymc_rbm.estimators.ais.ais`), base distribution and
        dtype (:class:`~pymc_rbm.estimators.options.PathOptions`); the dtype
        defaults to float32 (``log f`` and the estimates are accumulated in
        float64). Refused with a path as ``params``, which fixes them.
    data : array_like, optional
        Training data for the base-rate model at ``β = 0``, as in
        :func:`~pymc_rbm.estimators.ais.ais`.
    rng : numpy.random.Generator or seed, optional
    progress : bool, default False
    callback : callable, optional
        Called after every draw of β of every round as
        ``callback(round, t, k_swept, log_f)`` (see :func:`~pymc_rbm.estimators.rts_rounds.rts_round`; rounds
        from 0, sweeps from 1). For diagnostics only:
        ``benchmarks/rts_rounds.py`` uses it to re-estimate each round by a
        histogram analysis of its draws.
    **moved
        None: the keywords that moved into the records (``n_rounds``,
        ``update``, ``init``, ``n_pilot``, ``operator``, ...) are refused with a
        TypeError that names the record to use.

    Returns
    -------
    LogPartitionEstimate
        ``log_z``: the mean of the per-round estimates
        ``log Ẑ_K + log ĉ_K - log ĉ_1`` of rounds 2 to ``n_rounds`` (all of
        them when ``n_rounds == 1``), after a BAR start weighed with the
        start's estimate by their inverse variances (unless the rounds failed their checks)
        (:func:`~pymc_rbm.estimators.reliability.combine_with_start`);
        ``stderr``: that of the rounds (the per-round delta-method
        errors over chains combined as for independent rounds, or the spread
        between rounds over ``sqrt(n)`` if larger, or the spread itself when
        the rounds disagree or the ladder collapsed, module docstring),
        combined with the start's as for fully correlated estimates, and
        at least the distance to either when the rounds and the start disagree beyond
        three standard errors of the difference (with a warning);
        ``interval``: ``±3 stderr``. ``diagnostics``: ``rounds`` and
        ``rounds_stderr`` (the rounds' estimate alone), ``start_weight`` (the
        start's weight in ``log_z``, 0 without a BAR start), ``stderr_nominal`` (the
        rounds' combination alone), ``stderr_rule`` (of the rounds: ``"nominal"``, ``"batch_means"``,
        ``"spread"``, ``"start"`` or ``"coverage"``: which set ``stderr``; the last where modes no chain
        visited would raise the estimate, :func:`~pymc_rbm.estimators.coverage.with_coverage`), ``interrupted`` and
        ``n_rounds_done`` (Ctrl-C stops after the rounds that ended);
        ``betas``; ``log_z_ladder`` (the estimates of ``log Z_k`` at every β
        after the last round); ``log_z_init`` (the initial guesses);
        ``log_z_guesses`` (those the last round ran with); ``update``;
        ``start`` (with ``init="bar"``, the BAR run's estimate at the target);
        ``occupancy`` (fraction of the last round's draws at each β) and
        ``c_hat`` (its Rao-Blackwellized counterpart, ``1/K`` each at
        convergence); ``history`` and ``history_stderr`` (the estimate of each
        round); ``occupancy_history`` (per round); ``log_z_base``;
        ``n_chains``, ``n_rounds``, ``n_sweeps``, ``sweeps_per_move``;
        ``seconds``.

    Notes
    -----
    Pass ``data=`` the training data for trained models. On large trained
    models the chains lag near ``β = 1``; if the rounds drift from the BAR
    start, RTS warns and widens its error, but rounds that stay near a start
    that is off raise no warning, so use RTS beside
    :func:`~pymc_rbm.estimators.bar.bar` rather than instead of it
    (docs/estimators.md, "RTS and SAMS on h500", has the measurements).

    Examples
    --------
    >>> from pymc_rbm import RBMParams
    >>> from pymc_rbm.estimators import log_partition_exact
    >>> from pymc_rbm.estimators import RTSRounds, StartOptions, rts
    >>> p = RBMParams.random(12, 6, scale=0.5, rng=0)
    >>> est = rts(p, n_chains=20, n_sweeps=300, rounds=RTSRounds(n_rounds=3),
    ...           start=StartOptions(n_pilot=200, n_start=1000), rng=1)
    >>> abs(est.log_z - log_partition_exact(p).log_z) < 5 * est.stderr + 0.05
    True
    """
    refuse_moved("rts", moved, RTS_MOVED)
    t0 = time.perf_counter()
    rng = np.random.default_rng(rng)
    path = path_from_options(params, data, path_options, estimator=rts, dtype=np.float32, single=True)
    options = RTSOptions.resolve(
        betas=betas,
        n_chains=n_chains,
        n_sweeps=n_sweeps,
        sweeps_per_move=sweeps_per_move,
        rounds=rounds,
        start=start,
        callback=callback,
    )
    recorder = RoundRecorder()
    with (
        StopOnInterrupt() as guard,
        Progress(options.total_sweeps, "RTS", progress) as bar,
        single_blas_thread(),
    ):
        start = rts_start(path, rng, options, bar=bar, guard=guard)
        run_rounds(
            path,
            rng,
            start.ladder,
            start.log_z_init,
            recorder,
            n_rounds=options.n_rounds,
            n_sweeps=options.n_sweeps,
            sweeps_per_move=options.sweeps_per_move,
            update=options.update,
            bar=bar,
            callback=callback,
        )
    return rts_estimate(path, options, start, recorder, interrupted=guard.interrupted, t0=t0)

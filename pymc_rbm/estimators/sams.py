"""Self-adjusted mixture sampling (SAMS) of ``log Z``, for one RBM or several at once.

Tan (2017, "Optimally adjusted mixture sampling and locally weighted histogram
analysis", JCGS 26(1); Zhang (2016) §2.3.4 and §2.4.4) samples a label ``L`` and a
state ``x`` from the mixture

    p(j, x; ζ) ∝ π_j exp(-ζ_j) f_j(x),        j = 0, ..., m - 1,

over unnormalised distributions ``f_j`` with normalisers ``Z_j``, and adjusts
the log-weights ``ζ`` by stochastic approximation until every label is
visited in the proportions ``π`` (uniform here): then ``ζ_j = log Z_j - log Z_0``.

Here the labels are points of the annealing path of
:class:`~pymc_rbm.estimators.path.AnnealingPath`: label 0 is the base-rate
model (``log Z_0`` known), the ladder runs to the target at β = 1, and with
several RBMs (on the same visible units, as in Zhang's (2016) table) it goes on
from model 1 to model 2 and so on, through intermediate RBMs whose hidden
layer joins both models' hidden units. The ladder is placed at equal
thermodynamic length by a pilot AIS run
(:func:`~pymc_rbm.estimators.ladder.build_ladder`), so that neighbouring labels
overlap evenly.

One iteration ``t`` of a run:

1. *Markov move*: ``sweeps_per_move`` sweeps of the intermediate RBM of the
   current label, ``X_t ~ ψ_{L_{t-1}}(X_{t-1}, ·)`` (one in Tan's SAMS).
2. *Local jump*: propose ``j = L ± 1`` (the only neighbour at either end) with
   probabilities ``Γ(L, j)`` and accept with the Metropolis-Hastings ratio
   ``min{1, Γ(j, L) π_j e^{-ζ_j} f_j(X_t) / (Γ(L, j) π_L e^{-ζ_L} f_L(X_t))}``
   (Zhang 2016, eq. 2.4.9; the decision is the kernels' shared
   :func:`~pymc_rbm.kernels.metropolis_accept`).
3. *Update*: ``ζ^{(t-1/2)} = ζ^{(t-1)} + γ_t o_t / π`` and
   ``ζ^{(t)} = ζ^{(t-1/2)} - ζ_0^{(t-1/2)}`` (Zhang 2016, eq. 2.4.10-11), where the
   observation ``o_t`` is the indicator ``δ(L_t)`` (``rao_blackwell="none"``),
   or a Rao-Blackwellized version of it: ``"global"`` (default), Tan's
   ``w(X_t; ζ) = (p(j | X_t; ζ))_j``, the whole conditional of the label; or
   ``"local"``, the conditional expectation of ``δ(L_t)`` under the local jump,
   the row of jump probabilities from ``L_{t-1}``, which needs ``f`` at three
   labels only. All three have the same expectation at stationarity, so they
   share the fixed point; the Rao-Blackwellized ones are less noisy.

The gain is Tan's two-stage schedule (``gain="tan"``): ``γ_t = min(π_min,
t^{-β})`` with ``β = gain_exponent`` (default 0.6) in the first stage, which
ends at the first ``t_0`` where the labels visited so far are within
``flat_tolerance`` (relative) of ``π``; then the optimal
``γ_t = min(π_min, 1 / (t - t_0 + t_0^β))``, continuous at ``t_0``.
``gain="samc"`` is the gain of Zhang (2016) (Liang et al. 2007's SAMC),
``ζ ← ζ + γ_t (o_t - π)`` with ``γ_t = t0 / max(t0, t)``. These options are
the fields of :class:`SAMSAdaptation` (``sams(..., adaptation=SAMSAdaptation(gain="samc"))``);
those of the start below (``init``, ``n_start``, ...) are the fields of
:class:`~pymc_rbm.estimators.options.StartOptions`.

Start, runs and chains
----------------------
For one model the runs start from a run of Bennett's acceptance ratio along
the ladder (``init="bar"``, :func:`~pymc_rbm.estimators.ladder.bar_ladder`, as
RTS does): every label's ``ζ`` from it, and every chain from a draw of its
label's weighted states, spread evenly over the ladder, swept there. The
start's ``ζ`` then counts as ``t_start`` observations (default: as many
as the run has iterations): the optimal gain is ``1 / (t + t_start)``. Each
run has ``chains_per_run`` chains (default 16 after this start, 1 after the
others) that share its ``ζ``, and its observation is their mean. With one
chain per run (Tan's SAMS), a chain that
stays at a label pushes its run's ``ζ`` there for as long as it stays, and on
slowly mixing models the runs' ``ζ`` wander apart by nats; a mean over
chains, and a start that the early, large gains cannot overwrite, keep them
together ("RTS and SAMS on h500" in docs/estimators.md). After this start
an iteration also takes four sweeps (``sweeps_per_move=4``, 12000 sweeps in
all): near β = 1 a chain that has just moved up needs a few sweeps at its
new label before the next jump and observation, as in RTS.

Standard error
--------------
``n_runs`` independent runs (each with its own ``ζ`` and chains) are advanced
together; the estimate is the mean of their final ``ζ`` and the standard
error the standard deviation between runs over ``sqrt(n_runs)``, combined,
after a BAR start, with the part of the start's error that every run shares
(its standard error times its weight ``t_start / (t_start + t)`` after
``t`` iterations). This needs
no assumption about the correlation within a run, whose adapted ``ζ`` is a
running average over its whole history; batch means would. The runs do share
the pilot's ladder and starting states (and initial ``ζ``). Where the
chains mix slowly (large trained models such as mnist_h500, near β = 1)
they remember that shared start for a long time, and the spread between
calls is larger than the standard error. Such runs are also still moving
at the end: each run's estimate half-way and at the end are compared, and a
mean difference beyond 3.3 of its standard errors raises a warning
(:func:`_check_drift`). "SAMS on h500" in docs/estimators.md has the
measurements of the pilot start, and an estimate that moved more than three
standard errors from its BAR start raises a warning and widens the error to
that move, as in RTS.

When that test fails, or when a label got less than a tenth of its share of
the iterations (collapsed chains), the runs are not independent draws around
one value, and the standard error reported is at least the standard deviation
of the runs themselves (not divided by ``sqrt(n_runs)``) and at least the mean
move over the second half: the rule RTS follows for its rounds
(``spread_stderr``). Even the widened standard error can understate the
real one where the chains never visited part of the space, and the warning
says so (docs/estimators.md, "When an estimate cannot be trusted", has an
example). Ctrl-C ends the run and returns each run's ``ζ`` so far, with a
warning.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from pymc_rbm._runtime import Progress, StopOnInterrupt, single_blas_thread
from pymc_rbm.estimators.bar import LadderStart
from pymc_rbm.estimators.ladder import Ladder, bar_ladder, build_ladder, check_init, check_ladder, count_moves, initial_log_z
from pymc_rbm.estimators.coverage import top_states, with_coverage
from pymc_rbm.estimators.path import AnnealingPath
from pymc_rbm.estimators.options import PathOptions, StartOptions, check_record, refuse_moved
from pymc_rbm.estimators.path_arguments import path_from_options
from pymc_rbm.estimators.reliability import check_occupancy, check_start, spread_stderr
from pymc_rbm.estimates import LogPartitionEstimate
from pymc_rbm.estimators.sams_kernel import SAMSGain, SAMSRecorder, run_iterations
from pymc_rbm.params import RBMParams
from pymc_rbm.validation import check_bool, check_positive_int, check_real

__all__ = ["sams", "SAMSAdaptation", "SAMSOptions", "SAMSStart", "sams_start", "init_adaptation", "sams_estimates"]

#: Default thermodynamic length between neighbouring labels: a local jump is a random-walk
#: Metropolis move, whose rate of progress along the ladder is best at acceptance rates of
#: about 0.4-0.5, not near 1 (docs/estimators.md has the rates measured on the MNIST models).
SAMS_SPACING = 2.0


# ---------------------------------------------------------------- options
@dataclass(frozen=True, eq=False)
class SAMSAdaptation:
    """How SAMS adapts its log-weights ``ζ``: the gain sequence, its start and the observation.

    Tan's (2017) self-adjusted mixture sampling updates
    ``ζ ← ζ + γ_t o_t / π`` after every iteration; this record chooses the
    gain ``γ_t``, how much the start counts in it and the observation
    ``o_t`` (the module docstring has the algorithm).

    Parameters
    ----------
    gain : {"tan", "samc"}, default "tan"
        Tan's (2017) two-stage gain, ``min(π_min, t^{-β})`` until the labels
        visited are within ``flat_tolerance`` of uniform, then the optimal
        ``1 / (t - t_0 + t_0^β)``; or the gain of Liang et al.'s (2007) SAMC,
        ``t0 / max(t0, t)``, as in Zhang (2016).
    gain_exponent : float in (0.5, 1], default 0.6
        ``β`` of Tan's first stage.
    flat_tolerance : float, default 0.2
        End of Tan's first stage: the visits within this relative distance of
        uniform; positive.
    two_stage : bool, optional
        Whether to run Tan's first stage. Default: yes, except after the BAR
        start's or the pilot's ``ζ`` (``init="bar"`` or ``"ais"``), which is
        already within a fraction of a nat: the first stage's large gains
        (``t^{-0.6}``, up to one nat per step) would only add noise to it, so
        the optimal gain ``1/t`` is used from the start.
    t0 : float, optional
        SAMC's ``t0``, positive; default ``10 * n_labels`` (Liang et al.
        recommend ``2m`` to ``100m``).
    rao_blackwell : {"global", "local", "none"}, default "global"
        The observation that updates ``ζ``: Tan's whole conditional of the
        label given the state (``"global"``), the conditional expectation of
        the label's indicator under the local jump (``"local"``), or the
        indicator itself (``"none"``).
    t_start : float, optional
        Iterations that the initial ``ζ`` counts as, at least 0: the optimal
        gain becomes ``1 / (t + t_start)``, so ``ζ`` is in effect the average
        of the start, weighted as ``t_start`` observations, and the run's
        observations. Default: the number of iterations after the BAR start
        (which on large models is more accurate than the runs' slowly mixing
        chains), else 0 (Tan's gain).

    Raises
    ------
    ValueError
        For an unknown gain or observation, or a number out of range.
    TypeError
        For a ``two_stage`` other than None, True and False.

    Examples
    --------
    >>> from pymc_rbm.estimators import SAMSAdaptation
    >>> SAMSAdaptation(gain="samc", t0=50).t0
    50.0
    """

    gain: str = "tan"
    gain_exponent: float = 0.6
    flat_tolerance: float = 0.2
    two_stage: bool | None = None
    t0: float | None = None
    rao_blackwell: str = "global"
    t_start: float | None = None

    def __post_init__(self):
        if not (isinstance(self.gain, str) and self.gain in ("tan", "samc")):
            raise ValueError(f'gain must be "tan" or "samc", got {self.gain!r}')
        set_field = object.__setattr__
        set_field(self, "gain_exponent", check_real(self.gain_exponent, "gain_exponent", 0.5, 1.0, lo_open=True))
        set_field(self, "flat_tolerance", check_real(self.flat_tolerance, "flat_tolerance", 0.0, lo_open=True))
        if self.two_stage is not None:
            set_field(self, "two_stage", check_bool(self.two_stage, "two_stage"))
        if self.t0 is not None:
            set_field(self, "t0", check_real(self.t0, "t0", 0.0, lo_open=True))
        if not (isinstance(self.rao_blackwell, str) and self.rao_blackwell in ("global", "local", "none")):
            raise ValueError(f'rao_blackwell must be "global", "local" or "none", got {self.rao_blackwell!r}')
        if self.t_start is not None:
            set_field(self, "t_start", check_real(self.t_start, "t_start", 0.0))


#: Where the keywords that :func:`sams` took before its records went: ``{keyword: (record keyword, record)}``.
SAMS_MOVED = {
    **{name: ("adaptation", SAMSAdaptation) for name in
       ("gain", "gain_exponent", "flat_tolerance", "two_stage", "t0", "rao_blackwell", "t_start")},
    **{name: ("start", StartOptions) for name in ("init", "n_start", "n_equilibrate", "n_pilot", "spacing")},
    **{name: ("path_options", PathOptions) for name in ("operator", "base", "base_smoothing", "dtype")},
}  # fmt: skip


@dataclass(frozen=True, eq=False)
class SAMSOptions:
    """The options of :func:`sams`, checked, with the defaults of their start resolved; bound once per call.

    Attributes
    ----------
    betas : None, int or array_like
        The ladder as given (:func:`~pymc_rbm.estimators.ladder.check_ladder`).
    n_runs, chains_per_run, n_sweeps, sweeps_per_move, n_moves : int
    adaptation : SAMSAdaptation
        As given; the defaults of ``t_start``, ``t0`` and ``two_stage``, which
        depend on the start and the number of labels, are filled in by
        :func:`init_adaptation` once the ladder is known.
    start : StartOptions
        With ``init``, ``n_equilibrate`` and ``spacing`` filled in.
    """

    betas: object
    n_runs: int
    chains_per_run: int
    n_sweeps: int
    sweeps_per_move: int
    n_moves: int
    adaptation: SAMSAdaptation
    start: StartOptions

    @classmethod
    def resolve(
        cls,
        n_models: int,
        *,
        betas=None,
        n_runs=None,
        chains_per_run=None,
        n_sweeps=None,
        sweeps_per_move=None,
        adaptation=None,
        start=None,
    ) -> "SAMSOptions":
        """Check the arguments of :func:`sams` for ``n_models`` targets and fill in the defaults of their start."""
        check_ladder(betas)
        adaptation = check_record(adaptation, SAMSAdaptation, "adaptation")
        start = check_record(start, StartOptions, "start")
        start = start.resolved(init="bar" if n_models == 1 else "ais", spacing=SAMS_SPACING)
        check_init(start.init, flat="zero")
        warm = start.warm
        # the defaults measured for each start (docs/estimators.md, "RTS and SAMS on h500")
        n_runs = (8 if warm else 32) if n_runs is None else n_runs
        chains_per_run = (16 if warm else 1) if chains_per_run is None else chains_per_run
        n_sweeps = (12000 if warm else 15000) if n_sweeps is None else n_sweeps
        sweeps_per_move = (4 if warm else 1) if sweeps_per_move is None else sweeps_per_move
        n_runs = check_positive_int(n_runs, "n_runs", 2, " (the standard error comes from the spread between runs)")
        chains_per_run = check_positive_int(chains_per_run, "chains_per_run")
        n_moves = count_moves(n_sweeps, sweeps_per_move)
        return cls(
            betas=betas,
            n_runs=n_runs,
            chains_per_run=chains_per_run,
            n_sweeps=n_sweeps,
            sweeps_per_move=sweeps_per_move,
            n_moves=n_moves,
            adaptation=adaptation,
            start=start,
        )

    @property
    def warm(self) -> bool:
        """Whether the runs start from BAR (``init="bar"``)."""
        return self.start.warm

    @property
    def n_chains(self) -> int:
        """Chains in all: ``n_runs * chains_per_run``."""
        return self.n_runs * self.chains_per_run

    def total_sweeps(self, n_models: int) -> int:
        """The sweeps of the whole call (pilot, BAR start, iterations), for the progress bar."""
        s = self.start
        start = 2 * s.n_start + 2 * s.n_equilibrate if self.warm else 0
        return s.n_pilot * n_models + self.n_moves * self.sweeps_per_move + start


# ------------------------------------------------------------------ start
class SAMSStart(NamedTuple):
    """Where the runs of SAMS begin (:func:`sams_start`).

    Attributes
    ----------
    ladder : Ladder
        The labels, with the chains' starting states and labels in run order:
        chain ``i`` belongs to run ``i // chains_per_run``.
    start : LadderStart or None
        The BAR run of ``init="bar"``, else None.
    """

    ladder: Ladder
    start: LadderStart | None


def sams_start(path: AnnealingPath, rng, options: SAMSOptions, *, bar=None, guard=None) -> SAMSStart:
    """The pilot phase of SAMS: the labels and the chains' starting states, from a pilot run or BAR (stochastic)."""
    n, s = options.n_chains, options.start
    ladder = build_ladder(path, rng, n, options.betas, n_pilot=s.n_pilot, spacing=s.spacing, bar=bar)
    start = None
    if options.warm:
        ladder, start = bar_ladder(path, rng, ladder, n, n_steps=s.n_start, n_equilibrate=s.n_equilibrate, bar=bar, guard=guard)
    # the ladder's chains come in order along the path: run r takes every n_runs-th, so each spans it
    n_runs, c = options.n_runs, options.chains_per_run
    spread = (np.arange(n_runs)[:, None] + n_runs * np.arange(c)[None, :]).ravel()
    return SAMSStart(ladder._replace(states=ladder.states[spread], labels=ladder.labels[spread]), start)


def init_adaptation(options: SAMSOptions, ladder: Ladder) -> tuple[np.ndarray, SAMSGain]:
    """Every run's initial ``ζ`` and the gain sequence, with the defaults that depend on the start and the labels.

    Returns
    -------
    zeta : ndarray of shape (n_runs, m)
    gains : SAMSGain
        In its second stage from the start unless ``two_stage`` (default: only
        for starts other than the BAR run's and the pilot's ``ζ``).
    """
    m = ladder.coefs.shape[0]
    a, init = options.adaptation, options.start.init
    zeta = np.tile(initial_log_z(init, ladder.log_z_init, flat="zero"), (options.n_runs, 1))
    t_start = (options.n_moves if options.warm else 0) if a.t_start is None else a.t_start
    t0 = 10.0 * m if a.t0 is None else a.t0
    gains = SAMSGain(options.n_runs, m, a.gain, a.gain_exponent, a.flat_tolerance, t0, t_start)
    two_stage = a.two_stage
    if two_stage is None:
        two_stage = not (isinstance(init, str) and init in ("ais", "bar"))
    if not two_stage:
        gains.burn_in_end[:] = 1.0  # the pilot's ζ is good: start with the optimal gain 1/t
    return zeta, gains


# ----------------------------------------------------------------- result
#: Two-sided 0.001 point of the standard normal: the level of the drift test (RTS's rounds test uses 0.001 too).
DRIFT_Z = 3.29


def _check_drift(drift: np.ndarray) -> dict:
    """Warn when the runs' estimates still move between the middle and the end of the run.

    With the gain ``1/t`` the final ``ζ`` is in effect the mean of the
    observations over the whole run and the half-way ``ζ`` that of its first
    half, so at stationarity their difference has mean zero. The runs are
    independent, so a mean difference beyond :data:`DRIFT_Z` standard errors
    (two-sided 0.001) means the draws of the two halves differ: the chains are still
    approaching the mixture (slow mixing, as near β = 1 on mnist_h500), and the
    estimate is biased by more than its standard error says.

    Parameters
    ----------
    drift : ndarray of shape (n_runs, M)
        Each run's estimate of each model's ``log Z`` at the end minus that half-way.

    Returns
    -------
    dict
        ``{"mean", "stderr"}``: ndarrays of shape (M,), over runs, and
        ``"moving"``: bool ndarray of shape (M,), True where the test failed.
    """
    mean = drift.mean(axis=0)
    se = drift.std(axis=0, ddof=1) / np.sqrt(drift.shape[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, np.abs(mean) / se, np.where(mean == 0, 0.0, np.inf))
    moving = z > DRIFT_Z
    if np.any(moving):
        warnings.warn(
            f"SAMS: the estimates still move between the middle and the end of the run (by {np.round(mean, 3).tolist()} "
            f"± {np.round(se, 3).tolist()}): the chains have not reached the mixture; the standard error is "
            "widened to the spread of the runs (or the move, if larger), and may still understate the error: "
            "use longer runs, or compare with AIS",
            RuntimeWarning,
            stacklevel=4,  # the caller of sams()
        )
    return {"mean": mean, "stderr": se, "moving": moving}


def sams_estimates(
    path: AnnealingPath,
    options: SAMSOptions,
    start: SAMSStart,
    zeta: np.ndarray,
    gains: SAMSGain,
    recorder: SAMSRecorder,
    *,
    interrupted: bool,
    t_begin: float,
) -> list[LogPartitionEstimate]:
    """The estimates of :func:`sams`, one per model, from the runs' final ``ζ`` and what the iterations recorded.

    Each model's estimate is the mean over runs; its standard error follows the
    rule of :func:`~pymc_rbm.estimators.reliability.spread_stderr`, checked for
    drift between the halves (:func:`_check_drift`), collapsed labels and the BAR start.
    """
    models = path.models
    ladder, n_runs = start.ladder, options.n_runs
    t_done = recorder.t_done
    if t_done == 0:
        warnings.warn(
            "SAMS was interrupted (Ctrl-C) before its first iteration: there is no estimate (log_z is NaN)",
            RuntimeWarning,
            stacklevel=3,
        )
        nan = LogPartitionEstimate(
            log_z=float("nan"),
            method="sams",
            stderr=float("nan"),
            diagnostics={"interrupted": True, "n_sweeps_done": 0, "n_moves_done": 0},
        )
        return [nan] * len(models)
    if interrupted:
        zeta = zeta - zeta[:, :1]  # Ctrl-C may have come between the update of ζ and its normalization
        warnings.warn(
            f"SAMS was interrupted (Ctrl-C) after {t_done} of {options.n_moves} iterations: the estimate is each "
            "run's ζ at that point (diagnostics['interrupted'] is True)",
            RuntimeWarning,
            stacklevel=3,
        )

    log_z0 = path.log_z_base
    log_z_runs = log_z0 + zeta  # (n_runs, m), log Z of each label's joint model
    offsets = path.log_offset(ladder.coefs)
    log_z_labels = log_z_runs.mean(axis=0) - offsets
    visits = recorder.visits
    occupancy = visits.sum(axis=0) / max(visits.sum(), 1.0)
    diagnostics = {
        "labels_beta": ladder.s,
        "labels_segment": ladder.segment,
        "model_labels": ladder.model_labels,
        "log_z_labels": log_z_labels,
        "zeta": zeta,
        "occupancy": occupancy,
        "acceptance": recorder.accepted / max(recorder.proposed, 1),
        "burn_in_end": gains.burn_in_end.copy(),
        "log_z_base": log_z0,
        "start": None if start.start is None else start.start.estimate,
        "n_runs": n_runs,
        "chains_per_run": options.chains_per_run,
        "n_sweeps": options.n_sweeps,
        "sweeps_per_move": options.sweeps_per_move,
        "n_moves": options.n_moves,
        "gain": options.adaptation.gain,
        "rao_blackwell": options.adaptation.rao_blackwell,
        "operator": path.alpha,
        "seconds": time.perf_counter() - t_begin,
        "interrupted": interrupted,
        "n_sweeps_done": recorder.sweeps_done,
        "n_moves_done": t_done,
    }
    consistent = check_occupancy(occupancy, "SAMS", stacklevel=4) if visits.sum() > 0 else True

    def per_model_estimates(z):  # (n_runs, M): log Z of each model from each run's ζ
        return log_z0 + z[:, ladder.model_labels] - offsets[ladder.model_labels]

    per_model = per_model_estimates(zeta)
    if recorder.zeta_half is not None:
        diagnostics["drift"] = _check_drift(per_model - per_model_estimates(recorder.zeta_half))
    if len(models) > 1:
        diff = per_model - per_model[:, :1]
        diagnostics["log_z_differences"] = {
            "mean": diff.mean(axis=0),
            "stderr": diff.std(axis=0, ddof=1) / np.sqrt(n_runs),
        }
    drift = diagnostics.get("drift")
    estimates = []
    for i in range(len(models)):
        runs = per_model[:, i]
        log_z = float(runs.mean())
        nominal = float(runs.std(ddof=1) / np.sqrt(n_runs))
        if start.start is not None:  # the runs share the start's ζ, weighted t_start against t observations
            nominal = float(np.hypot(nominal, start.start.estimate.stderr * gains.t_start / (gains.t_start + t_done)))
        settled = drift is None or not drift["moving"][i]
        floor = 0.0 if drift is None else abs(float(drift["mean"][i]))
        se, rule = spread_stderr(nominal, runs, consistent and settled, floor=floor)
        se, agrees = check_start(log_z, se, diagnostics["start"], "SAMS", stacklevel=4)
        rule = rule if agrees else "start"
        estimates.append(
            LogPartitionEstimate(
                log_z=log_z,
                method="sams",
                fingerprint=models[i].fingerprint(),
                stderr=se,
                interval=(log_z - 3.0 * se, log_z + 3.0 * se),
                diagnostics={
                    **diagnostics,
                    "log_z_runs": runs,
                    "model": i,
                    "stderr_nominal": nominal,
                    "stderr_rule": rule,
                },
            )
        )
    return estimates


# ------------------------------------------------------------- estimator
def sams(
    params,
    *,
    betas=None,
    n_runs: int | None = None,
    chains_per_run: int | None = None,
    n_sweeps: int | None = None,
    sweeps_per_move: int | None = None,
    adaptation: SAMSAdaptation | None = None,
    start: StartOptions | None = None,
    path_options: PathOptions | None = None,
    data=None,
    rng=None,
    progress: bool = False,
    **moved,
):
    """Self-adjusted mixture sampling estimate of ``log Z`` of one or several RBMs (stochastic).

    See the module docstring for the algorithm.

    Parameters
    ----------
    params : RBMParams, sequence of RBMParams or AnnealingPath
        One target, or several on the same visible units: the labels then run
        base → model 1 → model 2 → ..., and every model's ``log Z`` is
        estimated in one run (Zhang's (2016) table). Or an annealing path to
        them built once (:func:`~pymc_rbm.estimators.annealing_path`), which
        then fixes the base distribution, ``dtype`` and ``operator``.
    betas : None, int or array_like, default None
        Interpolation values of each segment of the path
        (:func:`~pymc_rbm.estimators.ladder.check_ladder`); ``None`` places them
        at equal thermodynamic length ``spacing`` from the pilot run.
    n_runs : int, optional
        Independent SAMS runs (each with its own ``ζ``), advanced together;
        the standard error comes from their spread. Default 8 after the BAR
        start, 32 otherwise.
    chains_per_run : int, optional
        Chains that share a run's ``ζ``: each iteration moves all of them,
        and the run's observation is the mean of theirs. One chain per run is
        Tan's (2017) SAMS. Where chains mix slowly, a single chain that stays
        at a label keeps pushing its run's ``ζ`` there, and the runs wander
        apart by nats; averaging over several chains takes most of that push
        away. Default 16 after the BAR start, 1 otherwise.
    n_sweeps : int, optional
        Sweeps of each chain: default 12000 after the BAR start, 15000
        otherwise (as before it: a joint run over several models needs many
        iterations to cross its ladder).
    sweeps_per_move : int, optional
        Sweeps per iteration (before each label jump and update of ``ζ``):
        ``n_sweeps // sweeps_per_move`` iterations. Default 4 after the BAR
        start, else 1 (Tan's iteration).
    adaptation : SAMSAdaptation, optional
        The gain sequence, its start and the observation that update ``ζ``
        (Tan's (2017) two-stage gain and Rao-Blackwellized observation by
        default; see :class:`SAMSAdaptation`).
    start : StartOptions, optional
        The pilot run that places the labels and the start of ``ζ`` and of
        the chains (:class:`~pymc_rbm.estimators.options.StartOptions`).
        ``init`` defaults to ``"bar"`` for one model: every label's ``log Z``
        from a BAR run of ``n_start`` steps each way, and equilibrated
        starting states spread evenly over the labels
        (:func:`~pymc_rbm.estimators.ladder.bar_ladder`); and to ``"ais"`` for
        several models: from the pilot AIS run, starting from its states.
        ``"zero"`` is Tan's plain start (the first stage then does all the
        work); an array gives values of ``log Z_j - log Z_0`` per label. The
        labels' ``spacing`` defaults to 2.0 (``SAMS_SPACING``).
    path_options : PathOptions, optional
        The annealing path's operator, base distribution and dtype
        (:class:`~pymc_rbm.estimators.options.PathOptions`); the dtype
        defaults to float32 (``log f`` and ``ζ`` are accumulated in float64).
        Refused with a path as ``params``, which fixes them.
    data, rng, progress
        As in :func:`~pymc_rbm.estimators.ais.ais`.
    **moved
        None: the keywords that moved into the records (``gain``, ``init``,
        ``n_pilot``, ``operator``, ...) are refused with a TypeError that
        names the record to use.

    Returns
    -------
    LogPartitionEstimate, or a list of them (one per model) when ``params`` is a sequence
        ``log_z``: ``log Z_0 + mean over runs of ζ`` at the model's label;
        ``stderr``: standard deviation between runs / ``sqrt(n_runs)``
        (after a BAR start, combined with the start's standard error times
        its weight in ``ζ``, ``t_start / (t_start + t)`` after ``t``
        iterations, which the runs share), or
        when the runs still move or the chains collapsed, the standard
        deviation itself or the move if larger (module docstring), and at
        least the distance to the BAR start when the two disagree (with a
        warning; ``stderr_nominal`` and ``stderr_rule`` in the diagnostics),
        and for one model at least the mass of the modes no chain visited
        (:func:`~pymc_rbm.estimators.coverage.with_coverage`);
        ``interval``: ``±3 stderr``. ``diagnostics`` (shared by the models):
        ``labels_beta`` (interpolation value of each label), ``labels_segment``,
        ``model_labels``, ``log_z_labels`` (mean over runs of
        ``log Z_0 + ζ_j``, the adapted free energies of every label, with the
        ``log 2`` of absent hidden units removed), ``zeta`` (final ``ζ`` of
        every run, (n_runs, n_labels)), ``occupancy`` (fraction of iterations
        at each label after the first stage), ``acceptance`` (of the label
        jumps), ``burn_in_end`` (``t_0`` of each run, ``-1`` if it never
        ended), ``log_z_runs`` (each run's estimate), ``log_z_base``;
        ``drift`` (mean and stderr over runs of each model's estimate at the
        end minus half-way; a RuntimeWarning is raised when it is beyond 3.3
        standard errors, see :func:`_check_drift`); ``n_sweeps``,
        ``sweeps_per_move``, ``n_moves`` (iterations), ``interrupted``,
        ``n_sweeps_done`` and ``n_moves_done`` (Ctrl-C); ``seconds``. With several
        models, ``log_z_differences`` holds ``log Z_m - log Z_1`` (mean and
        stderr over runs).

    Notes
    -----
    Pass ``data=`` the training data for trained models. After the default
    BAR start, the start counts for half of the estimate (docs/estimators.md,
    "RTS and SAMS on h500", has the measurements). Started from the pilot
    (``init="ais"``), the runs drift there (module docstring).

    With several models the labels run through every model's ladder and
    the bridges between them. A local random walk over ``L`` labels with
    acceptance ``a`` needs of the order of ``L² / a`` iterations per
    crossing, so a joint run over models of very different sizes needs far
    more iterations than one model alone, and the far labels' ``ζ`` adapt
    last. Estimate large models one at a time, and use a joint run for the
    differences between small related models
    (``diagnostics["log_z_differences"]``). docs/estimators.md has the
    measurements, among them a joint run over Zhang's (2016) four MNIST
    models.

    Examples
    --------
    >>> from pymc_rbm import RBMParams
    >>> from pymc_rbm.estimators import log_partition_exact
    >>> from pymc_rbm.estimators import StartOptions, sams
    >>> p = RBMParams.random(12, 6, scale=0.5, rng=0)
    >>> est = sams(p, n_runs=4, n_sweeps=2000, start=StartOptions(n_pilot=200, n_start=1000), rng=1)
    >>> abs(est.log_z - log_partition_exact(p).log_z) < 5 * est.stderr + 0.05
    True
    """
    refuse_moved("sams", moved, SAMS_MOVED)
    t_begin = time.perf_counter()
    rng = np.random.default_rng(rng)
    given_path = params if isinstance(params, AnnealingPath) else None
    if given_path is not None:
        params = given_path.models[0] if given_path.n_models == 1 else given_path.models
    single = isinstance(params, RBMParams)
    models = [params] if single else list(params) if isinstance(params, Sequence) else None
    if not models or not all(isinstance(m, RBMParams) for m in models):
        raise TypeError("params must be an RBMParams or a non-empty sequence of RBMParams")
    options = SAMSOptions.resolve(
        len(models),
        betas=betas,
        n_runs=n_runs,
        chains_per_run=chains_per_run,
        n_sweeps=n_sweeps,
        sweeps_per_move=sweeps_per_move,
        adaptation=adaptation,
        start=start,
    )
    path = path_from_options(
        models if given_path is None else given_path, data, path_options, estimator=sams, dtype=np.float32
    )
    with (
        StopOnInterrupt() as guard,
        Progress(options.total_sweeps(len(models)), "SAMS", progress) as bar,
        single_blas_thread(),
    ):
        start = sams_start(path, rng, options, bar=bar, guard=guard)
        zeta, gains = init_adaptation(options, start.ladder)
        recorder = SAMSRecorder(options.n_runs, zeta.shape[1])
        run_iterations(
            path,
            rng,
            start.ladder,
            zeta,
            gains,
            recorder,
            chains_per_run=options.chains_per_run,
            n_moves=options.n_moves,
            sweeps_per_move=options.sweeps_per_move,
            gain=options.adaptation.gain,
            rao_blackwell=options.adaptation.rao_blackwell,
            bar=bar,
        )
    estimates = sams_estimates(path, options, start, zeta, gains, recorder, interrupted=guard.interrupted, t_begin=t_begin)
    if single:
        return with_coverage(estimates[0], path.models[0], samples=top_states(path, start.ladder), stacklevel=4)
    return estimates

"""``fit``: train an RBM (binary, categorical or Gaussian visible units) by gradient ascent on the log-likelihood.

One loop serves every method, in three small parts: a batch stream (each
epoch's rows in a fresh random order), the gradient of a
:class:`~pymc_rbm.training.negative.NegativePhase` (the data term of the batch
minus the model term, centered by default:
:func:`~pymc_rbm.training.negative.phase_gradient`), and an updater
(schedule, clipping, weight decay, then the step of an optimiser of
:mod:`~pymc_rbm.training.optimizers`); a trajectory recorder keeps the
parameters at spaced updates and writes them as resumable checkpoints
(:mod:`~pymc_rbm.training.trajectory`). The log-likelihood of the training data (or of
``eval_data``) is recorded every ``eval_every`` updates: exactly when the
smaller layer can be enumerated, otherwise with an estimate of ``log Z``
(AIS by default, sized so that the records cost about as much time as the
training itself).

A run never ends all-or-nothing: Ctrl-C stops it cleanly and returns what
was done (``stopped_early``, as ``pm.sample`` does), and a learning rate too
large for the model (parameters that become non-finite or explode, a
log-likelihood that collapses) stops it with a warning that names the
learning rate, keeping ``best_params``.

The visible units are a *family* (:mod:`~pymc_rbm.training.families`): the
loop works on the family's sufficient statistics in flat coordinates, where
every gradient, centering and optimiser step is the binary one, and only the
chains, the exact moments and the records use the family's own model.
"""

from __future__ import annotations

import contextlib
import json
import math
import sys
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from pymc_rbm._runtime import Progress, StopOnInterrupt, blas_threads, single_blas_thread
from pymc_rbm.estimators import LOG_PARTITION_METHODS, LogPartitionEstimate, log_partition
from pymc_rbm.estimators.exact import REPEATED_ENUMERATION_BITS
from pymc_rbm.kernels.operators import build_operator
from pymc_rbm.kernels.tempering import check_ladder, uniform_ladder
from pymc_rbm.params import RBMParams
from pymc_rbm.training.families import INITS, BernoulliFamily, family_for, family_of
from pymc_rbm.training.gradients import DETERMINISTIC_METHODS, Gradient
from pymc_rbm.training.gradients import centered_update
from pymc_rbm.training.optimizers import SGD, check_schedule, clip, make_optimizer, schedule_factor
from pymc_rbm.training.trajectory import (
    Checkpoint,
    Trajectory,
    check_save_updates,
    load_checkpoint,
    save_checkpoint,
)
from pymc_rbm.training.negative import (
    HIDDEN_MODES,
    SAMPLING_METHODS,
    FAMILY_METHODS,
    NegativePhase,
    centered_phase_gradient,
    contrastive_divergence,
    deterministic,
    family_phase,
    parallel_tempering,
    persistent_contrastive_divergence,
    phase_gradient,
)
from pymc_rbm.validation import check_positive_int, check_real

__all__ = [
    "fit",
    "EvaluationFailed",
    "FitResult",
    "History",
    "TrainingStep",
    "METHODS",
    "EXACT_EVAL_MAX_BITS",
    "EVAL_BUDGET",
    "DIVERGENCE_SCALE",
]

#: Every training method :func:`fit` knows.
METHODS = SAMPLING_METHODS + DETERMINISTIC_METHODS

#: ``eval_method="auto"`` enumerates exactly up to this smaller-layer size, else runs AIS: the limit
#: of every enumeration that is repeated (:data:`pymc_rbm.estimators.exact.REPEATED_ENUMERATION_BITS`).
EXACT_EVAL_MAX_BITS = REPEATED_ENUMERATION_BITS

#: ``eval_method="auto"`` with AIS: the records may take this many times the estimated training time.
#: Half, not all of it: the probes time AIS on the starting parameters, and on the busy 2-core machine
#: the records of a trained model (784 x 64 on MNIST) took up to twice the probes' figure per step.
EVAL_BUDGET = 0.5

#: AIS steps per record of ``eval_method="auto"``: at least (records are thinned to stay in budget)
#: and at most (Salakhutdinov & Murray's schedule; more buys little for a training curve).
EVAL_AIS_STEPS = (500, 14500)

#: Training stops as diverged when a parameter's magnitude exceeds this, or 100 times the largest
#: magnitude of the starting parameters if that is larger: no RBM worth sampling has such weights,
#: and a learning rate far too large gets there in a few updates.
DIVERGENCE_SCALE = 1e4

@dataclass
class History:
    """What :func:`fit` recorded every ``eval_every`` updates.

    Attributes
    ----------
    updates : ndarray of int of shape (n_records,)
        Number of updates done when the record was taken (0: the start).
    log_likelihood : ndarray of shape (n_records,)
        Mean log-likelihood per example of the evaluation data.
    stderr : ndarray of shape (n_records,)
        Standard error of ``log Z`` for stochastic estimates (0 when exact).
    estimator : str
        How ``log Z`` was obtained: ``"exact"``, an estimator's name, or
        ``"callable"``.
    estimator_options : dict
        The options it ran with (for ``eval_method="auto"`` with AIS, the
        number of steps sized to the budget).
    diagnostics : dict of str to ndarray of shape (n_records,)
        Means since the previous record of per-update quantities: the
        fraction of accepted swaps (``swap_accept``, PT), of accepted
        wormhole moves (``wormhole_accept``) and of accepted moves that
        changed region (``wormhole_jumps``), the gradient norm
        (``gradient_norm``), and for TAP the fraction of updates whose
        moments were outside the physical domain (``unphysical``). NaN at
        update 0.
    """

    updates: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    log_likelihood: np.ndarray = field(default_factory=lambda: np.zeros(0))
    stderr: np.ndarray = field(default_factory=lambda: np.zeros(0))
    estimator: str = ""
    diagnostics: dict = field(default_factory=dict)
    estimator_options: dict = field(default_factory=dict)

    @property
    def best(self) -> float:
        """The largest recorded log-likelihood (NaN when nothing was recorded)."""
        ll = self.log_likelihood
        return float(np.nanmax(ll)) if ll.size and not np.all(np.isnan(ll)) else float("nan")

    def __len__(self) -> int:
        return int(self.updates.size)


class TrainingStep(NamedTuple):
    """What the callback of :func:`fit` sees after every update.

    Attributes
    ----------
    update : int
        Updates done so far (1 after the first).
    epoch : int
        Passes over the data started so far (1 during the first).
    params : RBMParams, CategoricalRBMParams or GaussianRBMParams
        The parameters after this update.
    gradient : Gradient
        The gradient estimate of this update (before momentum and decay); with
        ``centered=True`` the centered gradient, in the centered parameters.
        For categorical and Gaussian RBMs it is in the flat coordinates
        ``(W, a, c)`` of :mod:`~pymc_rbm.training.families`.
    log_likelihood : float
        The recorded log-likelihood if one was recorded after this update, else NaN.
    info : dict
        Per-update diagnostics of the negative phase (acceptance rates).
    """

    update: int
    epoch: int
    params: RBMParams
    gradient: Gradient
    log_likelihood: float
    info: dict


@dataclass
class FitResult:
    """The outcome of :func:`fit`.

    Attributes
    ----------
    params : RBMParams, CategoricalRBMParams or GaussianRBMParams
        The final parameters; drop them into :class:`pymc_rbm.RBM` as
        ``RBM("v", params.W, params.vbias, params.hbias)`` (or
        ``CategoricalRBM``, ``GaussianRBM``).
    history : History
    best_params : RBMParams, CategoricalRBMParams or GaussianRBMParams
        The parameters at the largest recorded log-likelihood (``params``
        when nothing was recorded).
    n_updates : int
        Updates done (fewer than asked when training stopped early).
    stopped_early : bool
        Whether training stopped before ``n_updates``: see ``stop_reason``.
    chains : object
        The persistent chains (PCD: an ``RBMState``, whose ``v`` holds labels
        or reals for categorical and Gaussian units; PT: a ``TemperedState``;
        else None); pass them back as ``fit(..., chains=...)`` to resume.
    method : str
    operator : object
    stop_reason : str
        ``""`` (ran to the end), ``"callback"``, ``"interrupted"`` (Ctrl-C),
        ``"diverged"`` (the learning rate was too large; ``params`` are
        then the last parameters before the divergence) or
        ``"evaluation_failed"`` (``eval_method`` gave no finite ``log Z`` for
        a record after the start; at the start that is an
        :class:`EvaluationFailed` error).
    trajectory : Trajectory
        The parameters kept at the updates of ``save_updates`` (log-spaced by
        default) and the checkpoint files written
        (:mod:`~pymc_rbm.training.trajectory`).
    """

    params: RBMParams
    history: History
    best_params: RBMParams
    n_updates: int
    stopped_early: bool = False
    chains: Any = None
    method: str = ""
    operator: Any = None
    stop_reason: str = ""
    trajectory: Trajectory = field(default_factory=Trajectory)

    def __repr__(self) -> str:
        return (
            f"FitResult(method={self.method!r}, operator={self.operator!r}, n_updates={self.n_updates}, "
            f"best_log_likelihood={self.history.best:.4f}, params={self.params!r})"
        )


# ------------------------------------------------------------------ validation
def _initial_params(family, n_visible: int, n_hidden, params, init_scale: float, rng, init: str = "data",
                    data=None):
    if params is None:
        if n_hidden is None:
            raise ValueError("give n_hidden (the number of hidden units) or starting params")
        n_hidden = check_positive_int(n_hidden, "n_hidden")
        return family.initial(n_visible, n_hidden, rng, init, init_scale, data)
    if params.n_visible != n_visible:
        raise ValueError(f"params have n_visible = {params.n_visible}, but the data have {n_visible} units per row")
    if n_hidden is not None and n_hidden != params.n_hidden:
        raise ValueError(f"n_hidden = {n_hidden!r} contradicts the starting params, which have {params.n_hidden}")
    return family.astype(params, np.float64)


def _negative_phase(method, operator, k, n_temperatures, betas, n_chains, wormholes, moment_options,
                    hidden="redraw", family=None) -> NegativePhase:
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {list(METHODS)}")
    if family is not None and family.name != "bernoulli":
        return _family_phase(family, method, operator, k, n_chains, wormholes, moment_options, hidden)
    if method in DETERMINISTIC_METHODS:
        if wormholes is not None:
            raise ValueError(f"wormholes need a sampling method {SAMPLING_METHODS}, not the deterministic {method!r}")
        chain_options = {
            "operator": operator != "gibbs",
            "k": k != 1,
            "n_chains": n_chains is not None,
            "betas": betas is not None,
        }
        given = [name for name, was_set in chain_options.items() if was_set]
        if given:
            raise ValueError(
                f"{', '.join(given)} apply to the sampling methods {SAMPLING_METHODS}; the deterministic "
                f"method {method!r} draws no samples (its options go in moment_options)"
            )
        return deterministic(method, **(moment_options or {}))
    if moment_options:
        raise ValueError(f"moment_options apply to the deterministic methods {DETERMINISTIC_METHODS}, not {method!r}")
    kernel = build_operator(operator)
    k = check_positive_int(k, "k")
    n_chains = check_positive_int(n_chains, "n_chains", allow_none=True)
    if wormholes is not None and not callable(getattr(wormholes, "propose", None)):
        raise TypeError(
            "wormholes must be a proposal with a propose(rng, x) method, e.g. "
            f"pymc_rbm.kernels.wormhole.PointWormholes(data); got {type(wormholes).__name__}"
        )
    if method == "cd":
        if n_chains is not None:
            raise ValueError("CD starts one chain at every row of the batch; n_chains applies to 'pcd' and 'pt'")
        return contrastive_divergence(kernel, k, wormholes=wormholes)
    if method == "pcd":
        return persistent_contrastive_divergence(kernel, k, n_chains=n_chains, wormholes=wormholes, hidden=hidden)
    if betas is None:
        betas = uniform_ladder(check_positive_int(n_temperatures, "n_temperatures", minimum=2))
    else:
        betas = check_ladder(betas)
    return parallel_tempering(kernel, k, betas=betas, n_chains=n_chains, wormholes=wormholes)


def _family_phase(family, method, operator, k, n_chains, wormholes, moment_options, hidden) -> NegativePhase:
    """The negative phase of a categorical or Gaussian RBM, or a ValueError naming what is supported."""
    if method not in FAMILY_METHODS:
        raise ValueError(
            f"fit trains {family.name} RBMs with the methods {FAMILY_METHODS} only, not {method!r} (parallel "
            "tempering and the mean-field, TAP and Bethe model terms are written for binary units)"
        )
    if wormholes is not None:
        raise ValueError(f"wormholes are written for binary RBMs; {family.name} RBMs train without them")
    if hidden != "redraw":
        raise ValueError(f"hidden={hidden!r} applies to binary PCD with block Gibbs; {family.name} chains always "
                         "redraw h")
    if method == "exact":
        given = [name for name, was_set in (("operator", operator != "gibbs"), ("k", k != 1),
                                            ("n_chains", n_chains is not None)) if was_set]
        if given:
            raise ValueError(f"{', '.join(given)} apply to the sampling methods; 'exact' draws no samples")
    return family_phase(method, family, operator, k, n_chains=n_chains, **(moment_options or {}))


class EvaluationFailed(ValueError):
    """The estimator of the log-likelihood records gave no finite ``log Z`` for finite parameters."""


class _Evaluator:
    """Mean log-likelihood of the evaluation data, with log Z exact or estimated.

    With ``eval_method="auto"`` on a model too large to enumerate, the AIS
    behind each record is sized once, after the first updates, by
    :meth:`size_to_budget`: all records together should take about
    :data:`EVAL_BUDGET` times the training time.
    """

    def __init__(self, method, options, data, params, rng, family=None):
        self.data, self.rng, self.options = data, rng, dict(options or {})
        self.family = BernoulliFamily() if family is None else family
        auto = isinstance(method, str) and method == "auto"
        if auto:
            method = _auto_eval_method(self.family, params)
        if not callable(method) and not (isinstance(method, str) and method in LOG_PARTITION_METHODS):
            raise ValueError(
                f"eval_method must be 'auto', a callable params -> log Z, or one of {sorted(LOG_PARTITION_METHODS)}; "
                f"got {method!r}"
            )
        if method in ("ais", "reverse_ais") and "data" not in self.options:
            self.options["data"] = data  # the base-rate model fitted to the data (Salakhutdinov & Murray)
        self.method = method
        self.name = "callable" if callable(method) else method
        #: whether the AIS of each record still has to be sized to the training time
        self.needs_sizing = auto and method == "ais" and not {"n_steps", "schedule"} & set(self.options)
        self.budgeted = self.needs_sizing  # records then also skip themselves to stay in budget (affords)
        self.note = ""
        self.seconds_spent = self.last_seconds = 0.0

    def size_to_budget(self, params: RBMParams, seconds_per_update: float, n_updates: int, eval_every: int) -> int:
        """Choose the AIS steps per record from the training time; return the (maybe thinned) ``eval_every``.

        After a warm-up run, two probes of 20 and 100 AIS steps measure the
        cost of a step and the fixed cost of a run; the records planned (the start, every ``eval_every`` updates, the end) then share
        ``EVAL_BUDGET`` times the estimated training time, with
        :data:`EVAL_AIS_STEPS` steps each at the least and at the most. When
        even the least is over budget, records are thinned (``eval_every``
        multiplied), down to the start and the end.
        """
        t_start = time.perf_counter()
        n_chains = self.options.get("n_chains", 100)
        ais_options = {k: v for k, v in self.options.items() if k != "progress"}

        def timed(n_steps):
            t0 = time.perf_counter()
            with single_blas_thread():
                log_partition(params, "ais", rng=self.rng, **{**ais_options, "schedule": n_steps})
            return time.perf_counter() - t0

        # a warm-up run (first calls compile and fill caches), then two timed probes: their difference is the
        # cost of a step, the rest the fixed cost of a run; at least half the long probe's time per step, so
        # that timing noise on a busy machine cannot make steps look free
        timed(10)
        short, long = timed(20), timed(100)
        per_step = max((long - short) / 80.0, 0.5 * long / 100.0)
        fixed = max(short - 20 * per_step, 0.0)
        budget = EVAL_BUDGET * seconds_per_update * n_updates
        lo, hi = EVAL_AIS_STEPS

        def n_records(every):
            return 1 + -(-n_updates // every)

        def affordable(every):
            return int((budget / n_records(every) - fixed) / per_step)

        steps = affordable(eval_every)
        while steps < lo and n_records(eval_every) > 2:
            eval_every = min(2 * eval_every, n_updates)
            steps = affordable(eval_every)
        steps = int(min(max(steps, lo), hi))
        self.options["n_steps"] = steps
        self.needs_sizing = False
        records = n_records(eval_every) * (fixed + steps * per_step)
        if records > budget:  # even the fewest, shortest records are over budget: say so, bar or no bar
            warnings.warn(
                f"fit: the {n_records(eval_every)} log-likelihood records (AIS with {n_chains} chains x {steps} "
                f"steps each) will take about {records:.3g} s, more than the "
                f"{budget:.3g} s allowed ({EVAL_BUDGET:g} x the {seconds_per_update * n_updates:.3g} s of "
                f"training), after {time.perf_counter() - t_start:.3g} s spent timing them; pass "
                "eval_every=None for no records, or eval_method/eval_options for cheaper ones",
                RuntimeWarning,
                stacklevel=4,
            )
        self.note = (
            f"log-likelihood records: AIS with {n_chains} chains x {steps} steps every {eval_every} updates, "
            f"about {n_records(eval_every) * (fixed + steps * per_step):.3g} s in all for about "
            f"{seconds_per_update * n_updates:.3g} s of training (eval_method, eval_options and eval_every "
            "choose otherwise)"
        )
        self.seconds_spent += time.perf_counter() - t_start
        return eval_every

    def affords(self, projected_training: float) -> bool:
        """Whether a record now, and the final one after it, stay within the budget.

        Only for records sized by :meth:`size_to_budget`: their measured cost
        corrects the sizing (a busy machine makes the probes unreliable), by
        skipping intermediate records once the evaluation time would exceed
        ``EVAL_BUDGET`` times the projected training time.
        """
        if not self.budgeted:
            return True
        return self.seconds_spent + 2.0 * self.last_seconds <= EVAL_BUDGET * projected_training

    def __call__(self, params: RBMParams) -> tuple[float, float]:
        t0 = time.perf_counter()
        try:
            return self._evaluate(params)
        finally:
            self.last_seconds = time.perf_counter() - t0
            self.seconds_spent += self.last_seconds

    def _evaluate(self, params: RBMParams) -> tuple[float, float]:
        if callable(self.method):
            est = self.method(params)
        else:
            # sized records run BLAS on one thread, as their probes did: on a busy machine several BLAS
            # threads on AIS's small products cost up to ten times more, and the budget needs a steady cost
            with single_blas_thread() if self.budgeted else contextlib.nullcontext():
                est = self.family.log_partition(params, self.method, rng=self.rng, **self.options)
        stderr = float(est.stderr) if isinstance(est, LogPartitionEstimate) else 0.0
        log_z = float(est)
        if not math.isfinite(log_z):  # the parameters are finite and bounded here (_Divergence): not the model's fault
            raise EvaluationFailed(
                f"eval_method {self.name!r} returned log Z = {log_z} for finite parameters, and the "
                "log-likelihood records need a finite log Z: fix eval_method (or eval_options), or pass "
                "eval_every=None for no records"
            )
        return float(self.family.log_likelihood(params, self.data, log_z).mean()), stderr


def _auto_eval_method(family, params) -> str | None:
    """``eval_method="auto"``: exact where enumerable, else the family's estimator (AIS), else None (no records)."""
    if family.enumerable(params, EXACT_EVAL_MAX_BITS):
        return "exact"
    return family.estimator


class _Recorder:
    """The log-likelihood records of :func:`fit` and the diagnostics averaged between them."""

    def __init__(self, evaluator: _Evaluator | None):
        self.evaluator = evaluator
        self.records: list[tuple[int, float, float]] = []  # (update, log-likelihood, stderr): appended whole
        self.pending: dict[str, list] = {}
        self.diagnostics: dict[str, list] = {}
        self.best_ll, self.best_params, self.best_update = -np.inf, None, None

    def collect(self, info: dict) -> None:
        for key, value in info.items():
            self.pending.setdefault(key, []).append(value)

    def record(self, update: int, params: RBMParams) -> float:
        """Evaluate and store; NaN (and nothing stored) without an evaluator or when already recorded."""
        if self.evaluator is None:
            return np.nan
        if self.records and self.records[-1][0] == update:
            return self.records[-1][1]
        ll, se = self.evaluator(params)
        n = len(self.records)
        used = self.pending if update > 0 else {}  # the start has no updates (its record may come late)
        for key in set(used) | set(self.diagnostics):
            values = used.get(key, [])
            self.diagnostics.setdefault(key, [np.nan] * n)
            self.diagnostics[key] = self.diagnostics[key][:n] + [float(np.mean(values)) if values else np.nan]
        if update > 0:
            self.pending.clear()
        self.records.append((update, ll, se))
        if ll > self.best_ll:
            self.best_ll, self.best_params, self.best_update = ll, params, update
        return ll

    def history(self) -> History:
        n = len(self.records)
        updates, ll, se = (np.asarray(col) for col in zip(*self.records)) if n else ([], [], [])
        return History(
            updates=np.asarray(updates, dtype=np.int64),
            log_likelihood=np.asarray(ll, dtype=np.float64),
            stderr=np.asarray(se, dtype=np.float64),
            estimator="" if self.evaluator is None else self.evaluator.name,
            diagnostics={key: np.asarray(val[:n], dtype=np.float64) for key, val in self.diagnostics.items()},
            estimator_options={}
            if self.evaluator is None
            else {k: v for k, v in self.evaluator.options.items() if k != "data"},
        )


class _Divergence:
    """Whether training diverged: non-finite or exploding parameters, or a collapsing log-likelihood."""

    def __init__(self, params: RBMParams, learning_rate: float):
        start = max(float(np.abs(a).max()) for a in (params.W, params.vbias, params.hbias))
        self.scale = max(DIVERGENCE_SCALE, 100.0 * start)
        self.learning_rate = learning_rate
        self.drop = params.n_visible * math.log(2.0)
        self.reason, self.at = "", 0

    def parameters(self, arrays, update: int) -> bool:
        """True (and the reason kept) when the parameters after ``update`` are no longer usable."""
        self.at = update
        largest = [float(np.abs(a).max()) for a in arrays]  # NaN or inf where an entry is: one pass each
        if not all(math.isfinite(x) for x in largest):
            self.reason = "the parameters became non-finite"
        elif max(largest) > self.scale:
            self.reason = f"a parameter reached {max(largest):.3g} (beyond {self.scale:.3g})"
        return bool(self.reason)

    def log_likelihood(self, ll: float, best: float, update: int) -> bool:
        """True when a record collapsed: non-finite, or ``n_visible · log 2`` nats below the best one."""
        self.at = update
        if not math.isfinite(ll):
            self.reason = f"the recorded log-likelihood became {ll}"
        elif math.isfinite(best) and ll < best - self.drop:
            self.reason = (
                f"the recorded log-likelihood fell to {ll:.6g} from its best {best:.6g} (a drop of more than "
                f"n_visible · log 2 = {self.drop:.4g} nats)"
            )
        return bool(self.reason)

    def warn(self, best_update) -> None:
        kept = (
            f"best_params are those of update {best_update}, the best recorded log-likelihood"
            if best_update is not None
            else "nothing was recorded: best_params are the last parameters before it"
        )
        warnings.warn(
            f"fit stopped at update {self.at}: {self.reason}. The learning rate {self.learning_rate:g} is too "
            f"large for this model and method: try {self.learning_rate / 10:g} or less. params are the last "
            f"finite parameters; {kept} (stop_reason='diverged')",
            RuntimeWarning,
            stacklevel=3,
        )


# ------------------------------------------------------------------ fit
def fit(
    data,
    n_hidden: int | None = None,
    *,
    params=None,
    visible=None,
    method: str = "cd",
    operator="gibbs",
    k: int = 1,
    n_temperatures: int = 10,
    betas=None,
    n_chains: int | None = None,
    batch_size: int | None = None,
    learning_rate: float = 0.01,
    momentum: float = 0.0,
    weight_decay: float = 0.0,
    n_updates: int | None = None,
    epochs: int | None = None,
    init_scale: float = 0.01,
    init: str = "data",
    rng=None,
    eval_every: int | None = 100,
    eval_method="auto",
    eval_options: dict | None = None,
    eval_data=None,
    moment_options: dict | None = None,
    wormholes=None,
    chains=None,
    callback=None,
    progress: bool = True,
    centered: bool = True,
    hidden: str = "redraw",
    optimizer="sgd",
    lr_schedule="constant",
    max_grad_norm: float | None = None,
    dtype=np.float64,
    save_updates=None,
    checkpoint_dir=None,
    resume=None,
) -> FitResult:
    """Train an RBM with binary, categorical (Potts) or Gaussian visible units (stochastic for the sampling methods).

    Parameters
    ----------
    data : array_like of shape (n_samples, n_visible)
        Training data, never modified: values in {0, 1} (booleans allowed)
        for binary units; integer labels in ``[0, n_states)`` (or one-hot
        data of shape (n_samples, n_visible, n_states)) for categorical
        units; real numbers for Gaussian units.
    n_hidden : int, optional
        Number of hidden units; needed unless ``params`` are given.
    params : RBMParams, CategoricalRBMParams or GaussianRBMParams, optional
        Starting parameters (copied, never modified); their type says which
        RBM is trained. Default: ``W`` and the biases as ``init`` says.
    visible : {"bernoulli", "categorical", "gaussian"}, Potts or Gaussian, optional
        The visible units when ``params`` are not given (default binary):
        :func:`~pymc_rbm.training.families.family_for`. ``"categorical"``
        reads the number of values from the data (``pymc_rbm.layers.Potts(q)``
        fixes it); ``"gaussian"`` fixes σ at each column's standard deviation
        (``pymc_rbm.layers.Gaussian(sigma)`` gives it). σ is not trained. The
        categorical and Gaussian RBMs train with ``"cd"``, ``"pcd"`` (operator
        ``"gibbs"``; for categorical units also ``"flip"`` or ``α``: Liu's
        Metropolised Gibbs mixed with Gibbs) and ``"exact"``
        (:mod:`~pymc_rbm.training.families`); the gradient, the centering
        and the optimiser are the binary ones on their sufficient statistics.
    method : str, default "cd"
        ``"cd"`` (CD-k), ``"pcd"`` (PCD-k), ``"pt"`` (t-PT k, Brügge, Fischer & Igel 2013, §4.2),
        or a deterministic model term: ``"exact"`` (enumeration: the true
        gradient), ``"mean_field"``, ``"tap"``, ``"bethe"`` (Huang & Toyoizumi 2015, eq. 6),
        ``"mixture_mean_field"`` (Lawrence, Bishop & Jordan 1998, eq. 28).
    operator : {"gibbs", "flip"} or float, default "gibbs"
        Sweep of the sampling methods: block Gibbs, flip-the-state (Brügge, Fischer & Igel 2013),
        or the mixture ``α T + (1 - α) G`` for ``α`` in [0, 1].
    k : int, default 1
        Sweeps per update (per replica and swap round for PT).
    n_temperatures : int, default 10
        PT: replicas per ladder, inverse temperatures uniform in [0, 1].
    betas : array_like, optional
        PT: the ladder itself (strictly increasing, ending at 1); overrides
        ``n_temperatures``.
    n_chains : int, optional
        PCD and PT: number of persistent chains (ladders); default the batch
        size, as in Brügge, Fischer & Igel (2013).
    batch_size : int, optional
        Rows per mini-batch (shuffled every epoch); default all rows (batch learning).
    learning_rate : float, default 0.01
    momentum : float in [0, 1), default 0
    weight_decay : float, default 0
        L2 penalty on ``W``: ``weight_decay · W`` is subtracted from its gradient.
    n_updates, epochs : int, optional
        Length of training: give at most one; default 1000 updates. An epoch
        is one pass over the data (``ceil(n_samples / batch_size)`` updates).
    init_scale : float, default 0.01
        Standard deviation of the starting ``W`` (and of the biases with ``init="normal"``).
    init : {"data", "normal"}, default "data"
        Starting parameters when ``params`` is not given: ``"data"``: ``W ~
        N(0, init_scale²)``, visible biases at the logits of the data means
        (clipped to ``[1e-4, 1 - 1e-4]``), hidden biases 0 (Hinton 2010, §8; as
        ``rbms``); ``"normal"``: ``W`` and both biases from ``N(0, init_scale²)``
        (Brügge, Fischer & Igel 2013, §4.2; the default of pymc-rbm 0.2). With
        centered gradients ``"data"`` is the one that works on MNIST
        (``docs/training.md``).
    rng : numpy.random.Generator or seed, optional
        Training and evaluation draw from two independent child streams, so
        changing how often the log-likelihood is estimated never changes the
        trained parameters.
    eval_every : int or None, default 100
        Record the log-likelihood at the start, every ``eval_every`` updates
        and at the end; ``None`` or 0 records nothing.
    eval_method : str or callable, default "auto"
        How ``log Z`` is obtained: ``"auto"`` is exact enumeration when the
        smaller layer has at most :data:`EXACT_EVAL_MAX_BITS` units, else
        ``"ais"`` with a number of steps chosen after the first (at most
        ten) updates, from their time, so that all records together take about
        half the training time (:data:`EVAL_BUDGET`; between 500 and
        14500 steps per record; with fewer than 500 affordable the records
        are thinned, down to the start and the end; and a record is skipped
        when the measured cost of the records so far says it would overrun
        the budget). The choice is printed
        once (with ``progress``) and kept in ``history.estimator_options``;
        give ``eval_options={"n_steps": ...}`` to fix it yourself. Any method
        of :func:`pymc_rbm.estimators.log_partition` (e.g. ``"tap"``), or a
        callable ``params -> log Z``.
    eval_options : dict, optional
        Passed to the estimator (e.g. ``{"n_chains": 100, "schedule": 1000}`` for AIS).
    eval_data : array_like of shape (n_eval, n_visible), optional
        Data whose log-likelihood is recorded; default the training data.
    moment_options : dict, optional
        Options of the deterministic methods' moment functions.
    wormholes : proposal, optional
        A proposal of :mod:`pymc_rbm.kernels.wormhole` (``PointWormholes``,
        ``RegionWormholes``): one wormhole move per chain at β = 1 after the
        sweeps of each update (Hinton, Welling & Mnih 2003); sampling methods only.
    chains : optional
        Persistent chains from an earlier :class:`FitResult` to continue from.
    callback : callable, optional
        ``callback(step: TrainingStep)`` after every update; training stops
        when it returns True.
    progress : bool, default True
        Show progress on stderr: a bar (rich) on a terminal, a log line
        every ten seconds otherwise (a file, a CI log), with the latest
        recorded log-likelihood.
    centered : bool, default True
        Centered gradient ascent (Montavon & Müller 2012; Melchior, Fischer
        & Wiskott 2016) with the batch's data means ``⟨v⟩``, ``⟨p(h|v)⟩`` as
        offsets, for every method (:func:`~pymc_rbm.training.gradients.center`);
        False: the ordinary gradient.
    hidden : {"redraw", "carry"}, default "redraw"
        PCD with block Gibbs: draw the chains' hidden units at the new
        parameters every update (as ``rbms`` does), or sweep the visible layer
        first from the hidden state they carry (one product fewer, the 0.2
        loop; worse at PCD-1 on MNIST:
        :func:`~pymc_rbm.training.negative.persistent_contrastive_divergence`).
    optimizer : {"sgd", "adam"} or SGD or Adam, default "sgd"
        :mod:`~pymc_rbm.training.optimizers`; ``momentum`` is SGD's.
    lr_schedule : {"constant", "linear", "cosine", "exponential"} or callable, default "constant"
        The learning rate of update ``u`` (0-based) is ``learning_rate`` times
        :func:`~pymc_rbm.training.optimizers.schedule_factor`; a callable is
        ``(u, n_updates) -> factor``.
    max_grad_norm : float, optional
        Gradient clipping: a gradient estimate longer than this is rescaled
        to this norm (before weight decay).
    dtype : {numpy.float64, numpy.float32}, default float64
        Floating type of the parameters, chains and products during
        training; float32 halves the time of the products (the result's
        ``params`` are in this type).
    save_updates : None, int or array_like of int, optional
        The updates whose parameters are kept in ``result.trajectory``
        (:class:`~pymc_rbm.training.trajectory.Trajectory`): None,
        :data:`~pymc_rbm.training.trajectory.DEFAULT_SAVED` log-spaced points
        from the start to the end; an int, that many log-spaced points (0:
        none); or the update numbers themselves.
    checkpoint_dir : str or os.PathLike, optional
        Also write every kept point to ``checkpoint_dir/update_<n>.npz``,
        with the chains, the optimiser's state and the random states
        (:mod:`~pymc_rbm.training.trajectory`).
    resume : str or os.PathLike, optional
        A checkpoint file, or a directory whose latest checkpoint is used:
        continue that run (stopped by Ctrl-C, say) up to ``n_updates`` in
        all, draw for draw as it would have gone on. The options that shape
        the run (method, k, batch size, ...) must be those it was written
        with; ``params``, ``chains`` and ``rng`` come from the file.

    Returns
    -------
    FitResult
        Its ``params`` are of the type of the starting ones (the family of ``visible``).

    Raises
    ------
    ValueError
        For data that are not of the visible units' kind (non-binary, labels
        out of range or not integers, NaN), mismatched shapes, a method that
        the categorical and Gaussian RBMs do not train with, unknown method or operator
        names, options out of range, or chain options given to a
        deterministic method.
        Also for an unknown optimizer, schedule or dtype, ``max_grad_norm``
        not positive, ``save_updates`` outside ``[0, n_updates]``, or a
        ``resume`` checkpoint that is missing or was written with other
        options; nothing is written or modified then.
    TypeError
        For ``params`` that are not an ``RBMParams``, ``CategoricalRBMParams`` or ``GaussianRBMParams``, a ``wormholes`` object
        without ``propose``, or a callback that is not callable.

    Warns
    -----
    RuntimeWarning
        When training stopped early: Ctrl-C (``stop_reason="interrupted"``,
        the result so far is returned, as ``pm.sample`` does), or a
        divergence (``"diverged"``: parameters non-finite or beyond
        :data:`DIVERGENCE_SCALE`, or a recorded log-likelihood non-finite or
        more than ``n_visible · log 2`` below the best; the message names the
        learning rate and ``best_params`` keeps the best recorded
        parameters); and once per run when a deterministic method's moments
        lie outside the physical domain (TAP on strongly coupled models).

    Examples
    --------
    >>> from pymc_rbm.datasets import bars_and_stripes
    >>> from pymc_rbm.training import fit
    >>> data = bars_and_stripes(3)
    >>> result = fit(data, 9, method="pcd", operator="flip", k=5, learning_rate=0.3,
    ...              init_scale=0.5, n_updates=300, rng=0, progress=False)
    >>> ll = result.history.log_likelihood
    >>> bool(ll[-1] > ll[0] + 1.0)
    True
    """
    if resume is not None:  # the checkpoint's parameters say which RBM it trains
        checkpoint = load_checkpoint(resume)
        family = family_of(checkpoint.params)
    else:
        checkpoint = None
        family = family_for(visible, data) if params is None else _family_of_start(params, visible)
    dtype = _check_dtype(dtype)
    v = family.check(data, name="data", dtype=dtype)
    if v.ndim != 2 or v.shape[0] == 0:
        raise ValueError(f"data must have shape (n_samples, n_visible) with n_samples >= 1, got {v.shape}")
    n_samples, n_visible = v.shape
    x = family.features(v).astype(dtype, copy=False)  # the sufficient statistics' visible part: v for binary units
    learning_rate = check_real(learning_rate, "learning_rate", 0.0, lo_open=True)
    init_scale = check_real(init_scale, "init_scale", 0.0)
    if init not in INITS:
        raise ValueError(f"init must be one of {INITS}, got {init!r}")
    batch_size = check_positive_int(batch_size, "batch_size", allow_none=True)
    if batch_size is not None and batch_size >= n_samples:
        batch_size = None
    n_batches = 1 if batch_size is None else -(-n_samples // batch_size)
    if n_updates is not None and epochs is not None:
        raise ValueError("give n_updates or epochs, not both")
    if epochs is not None:
        n_updates = check_positive_int(epochs, "epochs") * n_batches
    n_updates = 1000 if n_updates is None else check_positive_int(n_updates, "n_updates")
    eval_every = check_positive_int(eval_every or 0, "eval_every", minimum=0)
    if callback is not None and not callable(callback):
        raise TypeError(f"callback must be callable, got {type(callback).__name__}")
    if hidden not in HIDDEN_MODES:
        raise ValueError(f"hidden must be one of {HIDDEN_MODES}, got {hidden!r}")
    updater = _Updater(optimizer, momentum, learning_rate, lr_schedule, weight_decay, max_grad_norm, n_updates)
    saved = check_save_updates(save_updates, n_updates)
    config = {"method": method, "operator": str(operator), "k": k, "n_chains": n_chains, "batch_size": batch_size,
              "n_samples": n_samples, "n_visible": n_visible, "centered": bool(centered), "hidden": hidden,
              "dtype": np.dtype(dtype).name, **updater.config(), **family.config()}
    if checkpoint is not None:
        _check_resume(checkpoint, config, params, chains, n_updates)
        params, chains = checkpoint.params, checkpoint.chains

    seed_rng = np.random.default_rng(rng)
    init_rng, train_rng, eval_rng = seed_rng.spawn(3)
    params = family.astype(_initial_params(family, n_visible, n_hidden, params, init_scale, init_rng, init, v), dtype)
    phase = _negative_phase(method, operator, k, n_temperatures, betas, n_chains, wormholes, moment_options, hidden,
                            family)
    flat = family.flat(params)  # the coordinates (W, a, c) of the features: params itself for binary units
    if chains is None:
        chains = phase.init(train_rng, x, flat, batch_size or n_samples)
    else:
        _check_chains(chains, phase.init(np.random.default_rng(0), x, flat, batch_size or n_samples), phase.name)
        chains = _as_dtype(chains, dtype)
    evaluator = None
    if eval_every:
        e_data = v if eval_data is None else family.check(eval_data, n_visible, name="eval_data")
        if e_data.ndim != 2:
            raise ValueError(f"eval_data must have shape (n_eval, n_visible), got {e_data.shape}")
        if isinstance(eval_method, str) and eval_method == "auto" and _auto_eval_method(family, params) is None:
            warnings.warn(
                f"fit records no log-likelihood: this {family.name} RBM is too large to enumerate (more than "
                f"2**{EXACT_EVAL_MAX_BITS} states in its smaller layer), and no estimator of "
                f"pymc_rbm.estimators.log_partition takes {family.name} RBMs; pass eval_method= a callable "
                "params -> log Z for records",
                RuntimeWarning,
                stacklevel=2,
            )
            eval_every = 0
        else:
            evaluator = _Evaluator(eval_method, eval_options, e_data, params, eval_rng, family)
    recorder = _Recorder(evaluator)

    W, vbias, hbias = (np.array(a, dtype=dtype) for a in (flat.W, flat.vbias, flat.hbias))
    opt_state = updater.init((W, vbias, hbias))
    batches = _BatchStream(n_samples, batch_size)
    start = 0
    if checkpoint is not None:  # the run goes on where the checkpoint was written, with its random states
        opt_state = {key: np.array(value) for key, value in checkpoint.optimizer_state.items()}
        train_rng.bit_generator.state = checkpoint.train_rng
        eval_rng.bit_generator.state = checkpoint.eval_rng
        batches = _BatchStream(n_samples, batch_size, checkpoint.batch_order, checkpoint.batch_position,
                               checkpoint.epoch)
        start = checkpoint.update
    trajectory = _TrajectoryRecorder(saved, checkpoint_dir, config)

    def snapshot(update_done):
        return Checkpoint(params, update_done, batches.epoch, chains, opt_state, train_rng.bit_generator.state,
                          eval_rng.bit_generator.state, batches.order, batches.position, config)

    update, stop_reason, failure = start, "", None
    divergence = _Divergence(params, learning_rate)
    warned_unphysical = False
    # eval_method="auto" with AIS: the record of the start waits until the first updates have been timed
    start_params, sizing = params, evaluator is not None and evaluator.needs_sizing
    probe = start + min(eval_every, n_updates - start, 10) if sizing else 0
    seconds: list[float] = []
    n_rows = (n_chains or batch_size or n_samples) * (n_temperatures if method == "pt" else 1)
    n_features = flat.n_visible
    if checkpoint is None:
        trajectory.keep(0, params, snapshot)
    with (
        StopOnInterrupt() as guard,
        blas_threads(n_rows, n_features, params.n_hidden),
        Progress(n_updates - start, f"fit ({phase.name})", progress) as bar,
    ):
        if not sizing:
            _show(bar, recorder.record(start, params))
        while update < n_updates:
            t_update = time.perf_counter()
            batch = x[batches.next(train_rng)]
            if centered:  # the optimiser steps in the centered parameters; the step is mapped to (W, vbias, hbias)
                grad, offsets, chains, info = centered_phase_gradient(phase, train_rng, chains, flat, batch)
            else:
                (grad, chains, info), offsets = phase_gradient(phase, train_rng, chains, flat, batch), None
            norm = updater.apply(opt_state, (W, vbias, hbias), grad, update, offsets)
            if divergence.parameters((W, vbias, hbias), update + 1):
                stop_reason = "diverged"
                break
            flat = RBMParams(W, vbias, hbias, dtype=dtype)
            params = family.unflat(flat)
            update += 1
            seconds.append(time.perf_counter() - t_update)
            bar.advance()
            trajectory.keep(update, params, snapshot)
            info = dict(info, gradient_norm=norm)
            if info.get("unphysical") and not warned_unphysical:
                warned_unphysical = True
                _warn_unphysical(phase.name, update)
            recorder.collect(info)
            if sizing and update >= probe:
                eval_every = _size_and_start(evaluator, recorder, bar, start_params, params, seconds,
                                             n_updates - start, eval_every, progress, start)
                sizing = False
            ll = np.nan
            due = eval_every and not sizing and (update % eval_every == 0 or update == n_updates)
            if due and (update == n_updates or evaluator.affords(sum(seconds) * (n_updates - start)
                                                                  / (update - start))):
                try:
                    ll = recorder.record(update, params)
                except EvaluationFailed as err:  # the updates so far are kept: stop and say why
                    stop_reason, failure = "evaluation_failed", err
                    break
                _show(bar, ll)
                if divergence.log_likelihood(ll, recorder.best_ll, update):
                    stop_reason = "diverged"
                    break
            if callback is not None and callback(TrainingStep(update, batches.epoch, params, grad, ll, info)):
                stop_reason = "callback"
                break
        if sizing and seconds and stop_reason != "diverged":  # stopped (callback) before the first updates were timed
            _size_and_start(evaluator, recorder, bar, start_params, params, seconds, n_updates - start, eval_every,
                            progress, start)
            sizing = False
        if stop_reason not in ("diverged", "evaluation_failed") and not sizing:
            recorder.record(update, params)  # a no-op when this update was just recorded

    if guard.interrupted:
        stop_reason = "interrupted"
        where = f"; or resume from the last checkpoint: fit(..., resume={str(checkpoint_dir)!r})" if (
            checkpoint_dir is not None and trajectory.paths) else ""
        warnings.warn(
            f"fit was interrupted (Ctrl-C) after {update} of {n_updates} updates: the result so far is returned "
            "(stopped_early=True, stop_reason='interrupted'); continue with "
            f"fit(data, params=result.params, chains=result.chains, ...){where}",
            RuntimeWarning,
            stacklevel=2,
        )
    elif stop_reason == "diverged":
        divergence.warn(recorder.best_update)
    elif stop_reason == "evaluation_failed":
        warnings.warn(
            f"fit stopped at update {update}: {failure}. params are the parameters after update {update} "
            "(stop_reason='evaluation_failed')",
            RuntimeWarning,
            stacklevel=2,
        )
    return FitResult(
        params=params,
        history=recorder.history(),
        best_params=recorder.best_params if recorder.best_params is not None else params,
        n_updates=update,
        stopped_early=bool(stop_reason),
        chains=chains,
        method=phase.name,
        operator=operator if method in SAMPLING_METHODS else None,
        stop_reason=stop_reason,
        trajectory=trajectory.result(),
    )


def _family_of_start(params, visible):
    """The family of starting ``params``, which ``visible`` (if given) must agree with."""
    family = family_of(params)
    if visible is not None and not (isinstance(visible, str) and visible == family.name) and not (
            family.name != "bernoulli" and visible == family.layer):
        raise ValueError(f"visible={visible!r} contradicts the starting params, a {type(params).__name__}")
    return family


def _check_dtype(dtype) -> np.dtype:
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"dtype must be numpy.float32 or numpy.float64, got {dtype!r}")
    return dt


def _as_dtype(chains, dtype):
    """Persistent chains with their arrays in ``dtype`` (copies where they are not)."""
    return type(chains)(*(np.asarray(x, dtype=dtype) if isinstance(x, np.ndarray) else x for x in chains))


def _check_resume(checkpoint, config: dict, params, chains, n_updates: int) -> None:
    """Refuse to resume a checkpoint with options other than its own, or with params / chains of the caller."""
    if params is not None or chains is not None:
        raise ValueError("resume= continues the checkpoint's parameters and chains: give neither params= nor chains=")
    ignore = {"n_updates"} if config.get("lr_schedule") == "constant" else set()
    changed = sorted(k for k in set(config) | set(checkpoint.config) - ignore
                     if k not in ignore and checkpoint.config.get(k) != _jsonable(config.get(k)))
    if changed:
        detail = ", ".join(
            f"{k}: {checkpoint.config.get(k)!r} there, {_jsonable(config.get(k))!r} here" for k in changed
        )
        raise ValueError(f"the checkpoint was written with other options ({detail}): resume with the same ones")
    if checkpoint.update >= n_updates:
        raise ValueError(f"the checkpoint is at update {checkpoint.update}; n_updates = {n_updates} leaves nothing "
                         "to do (n_updates counts all updates, those before the checkpoint included)")


def _jsonable(x):
    return json.loads(json.dumps(x, default=str))


class _BatchStream:
    """The mini-batches: the rows of each epoch in a fresh random order, drawn when the epoch starts."""

    def __init__(self, n_samples: int, batch_size: int | None, order=None, position: int = 0, epoch: int = 0):
        self.n_samples, self.batch_size = n_samples, batch_size
        self.order = None if order is None else np.asarray(order)
        self.position, self.epoch = position, epoch

    def next(self, rng: np.random.Generator):
        """The indices (or slice) of the next batch; a new epoch draws its order from ``rng``."""
        if self.batch_size is None:
            self.epoch += 1
            return slice(None)
        if self.order is None or self.position * self.batch_size >= self.n_samples:
            self.order, self.position = rng.permutation(self.n_samples), 0
            self.epoch += 1
        i = self.position * self.batch_size
        self.position += 1
        return self.order[i : i + self.batch_size]


class _Updater:
    """One parameter update: schedule, clipping, weight decay, then the optimiser's step."""

    def __init__(self, optimizer, momentum, learning_rate, schedule, weight_decay, max_grad_norm, n_updates):
        self.optimizer = make_optimizer(optimizer, momentum)
        self.learning_rate, self.n_updates = learning_rate, n_updates
        self.schedule = check_schedule(schedule)
        self.weight_decay = check_real(weight_decay, "weight_decay", 0.0)
        self.max_grad_norm = None if max_grad_norm is None else check_real(
            max_grad_norm, "max_grad_norm", 0.0, lo_open=True)

    def config(self) -> dict:
        return {"optimizer": repr(self.optimizer), "learning_rate": self.learning_rate,
                "lr_schedule": self.schedule if isinstance(self.schedule, str) else "callable",
                "weight_decay": self.weight_decay, "max_grad_norm": self.max_grad_norm, "n_updates": self.n_updates}

    def init(self, arrays) -> dict:
        return self.optimizer.init(arrays)

    def apply(self, state: dict, arrays, grad: Gradient, update: int, offsets=None) -> float:
        """Move ``arrays`` in place by the step of ``grad`` at update ``update`` (0-based); its norm before clipping.

        With ``offsets`` ``(μ, λ)``, ``grad`` is a centered gradient: the
        optimiser steps in the centered parameters and
        :func:`~pymc_rbm.training.gradients.centered_update` maps the step.
        """
        grad, norm = clip(grad, self.max_grad_norm)
        if self.weight_decay:
            grad = grad._replace(W=grad.W - self.weight_decay * arrays[0])
        lr = self.learning_rate * schedule_factor(self.schedule, update, self.n_updates)
        with np.errstate(over="ignore", invalid="ignore"):  # a divergence is reported by the caller
            if offsets is None:
                self.optimizer.apply(state, arrays, grad, lr)
            elif isinstance(self.optimizer, SGD) and not self.optimizer.momentum:  # the step is lr · grad: map grad
                for p, g in zip(arrays, centered_update(grad, *offsets)):
                    p += lr * g
            else:
                step = [np.zeros_like(a) for a in arrays]
                self.optimizer.apply(state, step, grad, lr)
                for p, g in zip(arrays, centered_update(Gradient(*step), *offsets)):
                    p += g
        return norm


class _TrajectoryRecorder:
    """Keeps the parameters at the saved updates, and writes them as checkpoints when asked."""

    def __init__(self, saved, directory, config):
        self.saved = set(int(u) for u in saved)
        self.directory = directory
        self.kept = Trajectory()

    @property
    def paths(self):
        return self.kept.paths

    def keep(self, update: int, params: RBMParams, snapshot) -> None:
        if update not in self.saved:
            return
        self.kept.updates.append(update)
        self.kept.params.append(params)
        if self.directory is not None:
            self.kept.paths.append(save_checkpoint(self.directory, snapshot(update)))

    def result(self) -> Trajectory:
        return self.kept


def _check_chains(chains, template, method: str) -> None:
    """Refuse persistent chains that ``method`` cannot continue (of another method, model or ladder).

    ``template`` is what the method would start from: the chains must be of
    its type, with the same shapes but for the number of chains.
    """
    def shapes(state):
        return [np.shape(a)[:-2] + np.shape(a)[-1:] for a in (state.v, state.h) if a is not None]

    if template is None:
        raise ValueError(
            f"method {method!r} keeps no persistent chains (only 'pcd' and 'pt' do); got chains= of type "
            f"{type(chains).__name__}"
        )
    if type(chains) is not type(template):
        raise ValueError(
            f"chains= holds a {type(chains).__name__}, but method {method!r} continues a {type(template).__name__}: "
            f"pass the chains of an earlier fit(..., method={method!r}) of this model, or none"
        )
    if shapes(chains) != shapes(template):
        raise ValueError(
            f"chains= have the shapes {[np.shape(chains.v), np.shape(chains.h)]} (v, h), which do not fit method "
            f"{method!r} on this model (it needs {[np.shape(template.v), np.shape(template.h)]}, but for the number "
            "of chains): pass the chains of an earlier run of the same method, model and ladder"
        )


def _size_and_start(evaluator, recorder, bar, start_params, params, seconds, n_updates, eval_every, progress,
                    start: int = 0) -> int:
    """Size the AIS of the records from the updates timed so far, record the start, return ``eval_every``."""
    eval_every = evaluator.size_to_budget(params, float(np.median(seconds)), n_updates, eval_every)
    if progress:
        print(f"fit: {evaluator.note}", file=sys.stderr, flush=True)
    _show(bar, recorder.record(start, start_params))
    return eval_every


def _show(bar: Progress, ll: float) -> None:
    """The latest recorded log-likelihood, next to the progress."""
    if np.isfinite(ll):
        bar.set_postfix(f"log-likelihood {ll:.6g}")


def _warn_unphysical(method: str, update: int) -> None:
    warnings.warn(
        f"fit (method={method!r}): the model moments at update {update} come from a fixed point outside the "
        "physical domain (pair moments outside [0, 1]): the gradient is that of an expansion used outside its "
        "range. Training goes on; history.diagnostics['unphysical'] counts such updates. Use 'pcd' or 'pt' "
        "for strongly coupled models",
        RuntimeWarning,
        stacklevel=3,
    )

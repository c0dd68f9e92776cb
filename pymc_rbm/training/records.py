"""The log-likelihood records of :func:`~pymc_rbm.training.fit`: how each is evaluated, and what is kept.

An :class:`Evaluator` gives the mean log-likelihood of the evaluation data at
given parameters, with ``log Z`` exact where the smaller layer can be
enumerated and estimated otherwise (AIS sized to a share of the training
time, :data:`EVAL_BUDGET`); a :class:`Recorder` keeps the records, the best
parameters, and the per-update diagnostics averaged between records, and
makes the :class:`History` of the result.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from pymc_rbm._runtime import Progress, single_blas_thread
from pymc_rbm.estimators import LOG_PARTITION_METHODS, LogPartitionEstimate, log_partition
from pymc_rbm.enumeration import REPEATED_ENUMERATION_BITS
from pymc_rbm.params import RBMParams
from pymc_rbm.training.families import BernoulliFamily

__all__ = [
    "History",
    "EvaluationFailed",
    "Evaluator",
    "Recorder",
    "auto_eval_method",
    "size_and_start",
    "show_record",
    "EXACT_EVAL_MAX_BITS",
    "EVAL_BUDGET",
    "EVAL_BUDGET_TIMED",
    "EVAL_AIS_STEPS",
]

#: ``eval_method="auto"`` enumerates exactly up to this smaller-layer size, else runs AIS: the limit
#: of every enumeration that is repeated (:data:`pymc_rbm.enumeration.REPEATED_ENUMERATION_BITS`).
EXACT_EVAL_MAX_BITS = REPEATED_ENUMERATION_BITS

#: ``eval_method="auto"`` with AIS: the records may take this many times the estimated training time.
#: Half, not all of it: the probes time AIS on the starting parameters, and on the busy 2-core machine
#: the records of a trained model (784 x 64 on MNIST) took up to twice the probes' figure per step.
EVAL_BUDGET = 0.5

#: :data:`EVAL_BUDGET` under ``max_time``: records sized to a tenth of the training time, as the
#: budget is for training (on MNIST 784x500 in 600 s, half would have cost a third of the updates).
EVAL_BUDGET_TIMED = 0.1

#: AIS steps per record of ``eval_method="auto"``: at least (records are thinned to stay in budget)
#: and at most (Salakhutdinov & Murray's schedule; more buys little for a training curve).
EVAL_AIS_STEPS = (500, 14500)


@dataclass
class History:
    """What :func:`~pymc_rbm.training.fit` recorded every ``Evaluation.every`` updates.

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
    n_updates : int
        The length of the run the learning-rate schedule ran over: ``n_updates``
        as given, or as fixed from ``max_time`` (``fit(..., n_updates=that,
        rng=same)`` repeats such a run exactly).
    """

    updates: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    log_likelihood: np.ndarray = field(default_factory=lambda: np.zeros(0))
    stderr: np.ndarray = field(default_factory=lambda: np.zeros(0))
    estimator: str = ""
    diagnostics: dict = field(default_factory=dict)
    estimator_options: dict = field(default_factory=dict)
    n_updates: int = 0

    @property
    def best(self) -> float:
        """The largest recorded log-likelihood (NaN when nothing was recorded)."""
        ll = self.log_likelihood
        return float(np.nanmax(ll)) if ll.size and not np.all(np.isnan(ll)) else float("nan")

    def __len__(self) -> int:
        return int(self.updates.size)


class EvaluationFailed(ValueError):
    """The estimator of the log-likelihood records gave no finite ``log Z`` for finite parameters."""


class Evaluator:
    """Mean log-likelihood of the evaluation data, with log Z exact or estimated.

    With ``eval_method="auto"`` on a model too large to enumerate, the AIS
    behind each record is sized once, after the first updates, by
    :meth:`size_to_budget`: all records together should take about
    :data:`EVAL_BUDGET` times the training time.
    """

    def __init__(self, method, options, data, params, rng, family=None, share=EVAL_BUDGET):
        self.data, self.rng, self.options = data, rng, dict(options or {})
        self.share = share  # records sized to the training time take this share of it
        self.family = BernoulliFamily() if family is None else family
        auto = isinstance(method, str) and method == "auto"
        if auto:
            method = auto_eval_method(self.family, params)
        if not callable(method) and not (isinstance(method, str) and method in LOG_PARTITION_METHODS):
            raise ValueError(
                f"the evaluation method must be 'auto', a callable params -> log Z, or one of {sorted(LOG_PARTITION_METHODS)}; "
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
        self.warned = False  # whether a record's estimator has warned yet (budgeted records: once per run)
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
        budget = self.share * seconds_per_update * n_updates
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
                f"{budget:.3g} s allowed ({self.share:g} x the {seconds_per_update * n_updates:.3g} s of "
                f"training), after {time.perf_counter() - t_start:.3g} s spent timing them; pass "
                "evaluation=None for no records, or an Evaluation(every=..., method=..., options=...) for cheaper ones",
                RuntimeWarning,
                skip_file_prefixes=(os.path.dirname(os.path.abspath(__file__)),),  # the caller of fit
            )
        self.note = (
            f"log-likelihood records: AIS with {n_chains} chains x {steps} steps every {eval_every} updates, "
            f"about {n_records(eval_every) * (fixed + steps * per_step):.3g} s in all for about "
            f"{seconds_per_update * n_updates:.3g} s of training (fit's evaluation= "
            "chooses otherwise)"
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
        return self.seconds_spent + 2.0 * self.last_seconds <= self.share * projected_training

    def __call__(self, params: RBMParams) -> tuple[float, float]:
        t0 = time.perf_counter()
        try:
            return self._evaluate(params)
        finally:
            self.last_seconds = time.perf_counter() - t0
            self.seconds_spent += self.last_seconds

    def _rough_estimate(self, params):
        """log Z of a record sized to the budget: the estimator's checks warn once per run, not once per record.

        Records sized to a share of the training time are rough by design (a short AIS on a large model); a
        check that fails on one record (weight ESS, unvisited modes) fails on most, and one warning says it.
        """
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RuntimeWarning)
            est = self.family.log_partition(params, self.method, rng=self.rng, **self.options)
        if caught and not self.warned:
            self.warned = True
            warnings.warn(
                f"fit: the log-likelihood records are rough ({self.note or 'AIS sized to the training time'}); "
                f"their estimator warned: {caught[0].message} (said once per run; score the result with "
                "pymc_rbm.estimators.log_partition, method='auto')",
                RuntimeWarning,
                skip_file_prefixes=(os.path.dirname(os.path.abspath(__file__)),),
            )
        return est

    def _evaluate(self, params: RBMParams) -> tuple[float, float]:
        if callable(self.method):
            est = self.method(params)
        else:
            # sized records run BLAS on one thread, as their probes did: on a busy machine several BLAS
            # threads on AIS's small products cost up to ten times more, and the budget needs a steady cost
            with single_blas_thread() if self.budgeted else contextlib.nullcontext():
                if self.budgeted:
                    est = self._rough_estimate(params)
                else:
                    est = self.family.log_partition(params, self.method, rng=self.rng, **self.options)
        stderr = float(est.stderr) if isinstance(est, LogPartitionEstimate) else 0.0
        try:
            if isinstance(est, (str, bytes, bool, np.bool_)):
                raise TypeError
            log_z = float(est)
        except (TypeError, ValueError):
            raise TypeError(
                f"the evaluation method {self.name!r} must return log Z as a number (or a LogPartitionEstimate), but returned "
                f"{est!r:.200} of type {type(est).__name__}"
            ) from None
        if not math.isfinite(log_z):  # the parameters are finite and bounded here (Divergence): not the model's fault
            raise EvaluationFailed(
                f"the evaluation method {self.name!r} returned log Z = {log_z} for finite parameters, and the "
                "log-likelihood records need a finite log Z: fix the Evaluation's method (or options), or pass "
                "evaluation=None for no records"
            )
        return float(self.family.log_likelihood(params, self.data, log_z).mean()), stderr


def auto_eval_method(family, params) -> str | None:
    """``eval_method="auto"``: exact where enumerable, else the family's estimator (AIS), else None (no records)."""
    if family.enumerable(params, EXACT_EVAL_MAX_BITS):
        return "exact"
    return family.estimator


class Recorder:
    """The log-likelihood records of :func:`~pymc_rbm.training.fit` and the diagnostics averaged between them."""

    def __init__(self, evaluator: Evaluator | None):
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

    def history(self, n_updates: int = 0) -> History:
        """The records so far; ``n_updates``: the run's length (:attr:`History.n_updates`)."""
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
            n_updates=int(n_updates),
        )


def size_and_start(evaluator, recorder, bar, start_params, params, seconds, n_updates, eval_every, progress,
                    start: int = 0) -> int:
    """Size the AIS of the records from the updates timed so far, record the start, return ``eval_every``."""
    eval_every = evaluator.size_to_budget(params, float(np.median(seconds)), n_updates, eval_every)
    if progress:
        print(f"fit: {evaluator.note}", file=sys.stderr, flush=True)
    show_record(bar, recorder.record(start, start_params))
    return eval_every


def show_record(bar: Progress, ll: float) -> None:
    """The latest recorded log-likelihood, next to the progress."""
    if np.isfinite(ll):
        bar.set_postfix(f"log-likelihood {ll:.6g}")

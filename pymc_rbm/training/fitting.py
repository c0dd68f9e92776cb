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
the evaluation data) is recorded every ``Evaluation.every`` updates: exactly when the
smaller layer can be enumerated, otherwise with an estimate of ``log Z``
(AIS by default, sized so that the records cost about as much time as the
training itself). The options of each part are small records
(:mod:`~pymc_rbm.training.options`, :mod:`~pymc_rbm.training.optimizers`).

A run never ends all-or-nothing: Ctrl-C stops it cleanly and returns what
was done (``stopped_early``, as ``pm.sample`` does), and a learning rate too
large for the model (parameters that become non-finite or explode, a
log-likelihood that collapses) stops it with a warning that names the
learning rate, keeping ``best_params``.

``fit`` reads as its three phases: :func:`~pymc_rbm.training.run.prepare_run`
checks the options and makes the start (nothing is written or modified
before it returns), a :class:`Training` runs the loop, and
:meth:`Training.finish` says why a run stopped early and returns the
:class:`FitResult`. The records live in :mod:`~pymc_rbm.training.records`,
the divergence guard in :mod:`~pymc_rbm.training.divergence`, the kept
trajectory and the resume checks in :mod:`~pymc_rbm.training.trajectory`.

The visible units are a *family* (:mod:`~pymc_rbm.training.families`): the
loop works on the family's sufficient statistics in flat coordinates, where
every gradient, centering and optimiser step is the binary one, and only the
chains, the exact moments and the records use the family's own model.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import os
import time
import warnings
from dataclasses import dataclass, field
from time import perf_counter  # the clock of max_time (tests replace this name)
from typing import Any, NamedTuple

import numpy as np

from pymc_rbm._runtime import Progress, StopOnInterrupt, single_blas_thread
from pymc_rbm.params import RBMParams
from pymc_rbm.training.divergence import DIVERGENCE_SCALE, Divergence
from pymc_rbm.training.gradients import Gradient
from pymc_rbm.training.negative import SAMPLING_METHODS, centered_phase_gradient, phase_gradient
from pymc_rbm.training.records import (
    EVAL_BUDGET,
    EXACT_EVAL_MAX_BITS,
    EvaluationFailed,
    History,
    Recorder,
    show_record,
    size_and_start,
)
from pymc_rbm.estimators.options import refuse_moved
from pymc_rbm.training.optimizers import SGD
from pymc_rbm.training.options import DEFAULT_EVAL_EVERY, PCD, PT, Checkpoints, Evaluation, Init, Moments
from pymc_rbm.training.run import METHODS, BatchStream, Plan, Run, prepare_run
from pymc_rbm.training.trajectory import Checkpoint, Trajectory, TrajectoryRecorder, invalid_checkpoint

__all__ = [
    "fit",
    "Training",
    "EvaluationFailed",
    "FitResult",
    "History",
    "TrainingStep",
    "METHODS",
    "EXACT_EVAL_MAX_BITS",
    "EVAL_BUDGET",
    "DIVERGENCE_SCALE",
    "BUDGET_TARGET",
    "BUDGET_PROBE",
]

#: ``max_time``: the run's length is fixed so that it ends at this fraction of the budget (a safety margin; the
#: updates stop earlier if the run is slower than planned, in time for the last record).
BUDGET_TARGET = 0.95

#: ``max_time``: the updates after the first (which compiles) are timed for this fraction of the budget.
BUDGET_PROBE = 0.02

#: Warnings of a run name the line that called :func:`fit`: the frames of this package are skipped.
_OWN_FRAMES = (os.path.dirname(os.path.abspath(__file__)),)


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
        ``CategoricalRBM``, ``GaussianRBM``). With ``average``, the mean of
        the parameters over the averaged updates (``raw_params`` where none
        were averaged yet).
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
        else None); pass them back in the method's record (``method=PCD(chains=result.chains)``) to continue.
    method : str
    operator : object
    stop_reason : str
        ``""`` (ran to the end), ``"callback"``, ``"interrupted"`` (Ctrl-C),
        ``"max_time"`` (the time budget ran out before the planned updates),
        ``"diverged"`` (the learning rate was too large; ``params`` are
        then the last parameters before the divergence) or
        ``"evaluation_failed"`` (the evaluation's method gave no finite ``log Z`` for
        a record after the start; at the start that is an
        :class:`EvaluationFailed` error) or ``"error"`` (the result attached
        as ``partial_result`` to an exception raised during the run, by
        ``callback`` or the evaluation's method say).
    trajectory : Trajectory
        The parameters kept at the updates of ``Checkpoints.updates`` (log-spaced by
        default) and the checkpoint files written
        (:mod:`~pymc_rbm.training.trajectory`).
    raw_params : RBMParams, CategoricalRBMParams or GaussianRBMParams
        The parameters after the last update: ``params`` itself without
        averaging. A run continues from these (``fit(data,
        params=result.raw_params, method=PCD(chains=result.chains), ...)``).
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
    raw_params: Any = None

    def __repr__(self) -> str:
        return (
            f"FitResult(method={self.method!r}, operator={self.operator!r}, n_updates={self.n_updates}, "
            f"best_log_likelihood={self.history.best:.4f}, params={self.params!r})"
        )


# ------------------------------------------------------------------ fit
#: Where the keywords that :func:`fit` took before its option records went: ``{old: (keyword, record[, field])}``.
FIT_MOVED = {
    **{name: ("method", PCD) for name in ("operator", "k", "n_chains", "hidden", "wormholes", "chains")},
    **{name: ("method", PT) for name in ("n_temperatures", "betas")},
    "moment_options": ("method", Moments, "options"),
    **{name: ("optimizer", SGD) for name in ("momentum", "weight_decay", "centered", "max_grad_norm", "average")},
    "lr_schedule": ("optimizer", SGD, "schedule"),
    "eval_every": ("evaluation", Evaluation, "every"),
    "eval_method": ("evaluation", Evaluation, "method"),
    "eval_options": ("evaluation", Evaluation, "options"),
    "eval_data": ("evaluation", Evaluation, "data"),
    "save_updates": ("checkpoints", Checkpoints, "updates"),
    "checkpoint_dir": ("checkpoints", Checkpoints, "directory"),
    "resume": ("checkpoints", Checkpoints, "resume"),
    "init": ("params", Init, "start"),
    "init_scale": ("params", Init, "scale"),
    "dtype": ("params", Init, "dtype"),
}


def fit(
    data,
    n_hidden: int | None = None,
    *,
    params=None,
    visible=None,
    method="pcd",
    batch_size: int | None = None,
    learning_rate: float = 0.05,
    n_updates: int | None = None,
    epochs: int | None = None,
    max_time: float | None = None,
    optimizer="sgd",
    evaluation=DEFAULT_EVAL_EVERY,
    checkpoints: Checkpoints | None = None,
    rng=None,
    callback=None,
    progress: bool = True,
    **moved,
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
    params : RBMParams, CategoricalRBMParams, GaussianRBMParams or Init, optional
        Starting parameters (copied, never modified); their type says which
        RBM is trained. An :class:`~pymc_rbm.training.options.Init` says how
        to draw them instead, and the floating type of training. Default:
        ``Init()``, ``W ~ N(0, 0.01²)`` with the visible biases at the logits
        of the data means (Hinton 2010, §8).
    visible : {"bernoulli", "categorical", "gaussian"}, Potts or Gaussian, optional
        The visible units when ``params`` are not given (default binary):
        :func:`~pymc_rbm.training.families.family_for`. ``"categorical"``
        reads the number of values from the data (``pymc_rbm.layers.Potts(q)``
        fixes it); ``"gaussian"`` fixes σ at half of each column's standard
        deviation (:data:`~pymc_rbm.training.families.GAUSSIAN_SIGMA_SCALE`;
        ``pymc_rbm.layers.Gaussian(sigma)`` gives it). σ is not trained. The
        categorical and Gaussian RBMs train with CD, PCD (operator
        ``"gibbs"``; for categorical units also ``"flip"`` or ``α``: Liu's
        Metropolised Gibbs mixed with Gibbs) and ``"exact"``
        (:mod:`~pymc_rbm.training.families`); the gradient, the centering
        and the optimiser are the binary ones on their sufficient statistics.
    method : str or CD, PCD, PT or Moments, default "pcd"
        Where the model term of the gradient comes from, a name with its
        defaults or a record of :mod:`~pymc_rbm.training.options` with its
        options: ``"cd"`` (:class:`~pymc_rbm.training.options.CD`, CD-k),
        ``"pcd"`` (:class:`~pymc_rbm.training.options.PCD`, PCD-k; e.g.
        ``PCD(k=1, operator="flip")``), ``"pt"``
        (:class:`~pymc_rbm.training.options.PT`, t-PT k, Brügge, Fischer & Igel
        2013, §4.2), or a deterministic model term
        (:class:`~pymc_rbm.training.options.Moments`): ``"exact"``
        (enumeration: the true gradient), ``"mean_field"``, ``"tap"``,
        ``"bethe"`` (Huang & Toyoizumi 2015, eq. 6), ``"mixture_mean_field"``
        (Lawrence, Bishop & Jordan 1998, eq. 28). The defaults (PCD-5,
        mini-batches of 100, learning rate 0.05 held constant with the
        parameters averaged over the last half, 5000 updates or ``max_time``)
        are those that trained small models and MNIST best
        (``docs/training.md``, "Defaults").
    batch_size : int, optional
        Rows per mini-batch (shuffled every epoch); default
        :data:`~pymc_rbm.training.run.DEFAULT_BATCH_SIZE` (100), all rows
        when there are fewer; ``len(data)`` for batch learning.
    learning_rate : float, default 0.05
        The step at the start; the optimiser's ``schedule`` lowers it along the run.
    n_updates, epochs : int, optional
        Length of training: give at most one; default
        :data:`~pymc_rbm.training.run.DEFAULT_N_UPDATES` (5000) updates. An epoch
        is one pass over the data (``ceil(n_samples / batch_size)`` updates).
    max_time : float, optional
        A time budget in seconds (> 0), counted from the call. Without
        ``n_updates`` or ``epochs``, ``fit`` trains until the budget: the
        learning-rate schedule needs the run's length, so the first update
        (which carries the compile) is done and the next ones are timed for
        :data:`BUDGET_PROBE` (2 %) of the budget, on a throwaway copy of the
        start, and one log-likelihood record too; ``n_updates`` is then fixed
        so that the run, the remaining records included, ends at
        :data:`BUDGET_TARGET` (95 %) of the budget, and the schedule runs over
        that many updates. That number is kept as ``result.n_updates`` and
        ``result.history.n_updates``: ``fit(..., n_updates=that, rng=same)``
        repeats the run exactly (the result depends on the seed and on that
        number only). Whether or not ``n_updates`` is given, training stops
        at the budget if the machine slows down: with a warning, what was
        done is returned as a completed run (the last record taken) with
        ``stop_reason="max_time"`` (the updates stop early enough for the
        last record, timed as the one before it). The progress bar shows the time left.
        A resumed run's ``n_updates`` is the checkpoint's, and ``max_time``
        only stops the run at the budget.
    optimizer : {"sgd", "adam"} or SGD or Adam, default "sgd"
        :mod:`~pymc_rbm.training.optimizers`: ``"sgd"`` is ``SGD()``, gradient
        ascent with momentum 0.5 (Hinton 2010). The records also hold what
        every optimiser shares (:class:`~pymc_rbm.training.optimizers.Ascent`):
        weight decay, clipping, the learning-rate schedule, Polyak-Ruppert
        averaging (by default over the last half of the updates for the
        sampling methods, at a constant rate) and centering (on by default).
    evaluation : int, None or Evaluation, default 100
        The log-likelihood records: every that many updates (and at the start
        and the end) by the default ``log Z`` (exact where the smaller layer
        enumerates, else AIS sized to half the training time); None or 0
        records nothing; an :class:`~pymc_rbm.training.options.Evaluation`
        chooses the estimator and the data as well.
    checkpoints : Checkpoints, optional
        Which updates' parameters are kept in ``result.trajectory`` (by
        default :data:`~pymc_rbm.training.trajectory.DEFAULT_SAVED` log-spaced
        ones), the directory they are also written to, and the checkpoint a
        run resumes (:class:`~pymc_rbm.training.options.Checkpoints`).
    rng : numpy.random.Generator or seed, optional
        Training and evaluation draw from two independent child streams, so
        changing how often the log-likelihood is estimated never changes the
        trained parameters.
    callback : callable, optional
        ``callback(step: TrainingStep)`` after every update; training stops
        when it returns True.
    progress : bool, default True
        Show progress on stderr: a bar (rich) on a terminal, a log line
        every ten seconds otherwise (a file, a CI log), with the latest
        recorded log-likelihood.
    **moved
        None: the keywords that moved into the option records (``k``,
        ``operator``, ``momentum``, ``eval_every``, ``init``, ...) are refused
        with a TypeError that names the record to use (:data:`FIT_MOVED`).

    Returns
    -------
    FitResult
        Its ``params`` are of the type of the starting ones (the family of ``visible``).

    Raises
    ------
    ValueError
        For data that are not of the visible units' kind (non-binary, labels
        out of range or not integers, NaN: missing values, which are not
        trained on; the same for masked arrays with masked cells), mismatched shapes, a method that
        the categorical and Gaussian RBMs do not train with, unknown method or operator
        names, or options out of range (the records check their own fields
        when they are made).
        Also for an unknown optimizer, schedule or dtype, kept updates
        outside ``[0, n_updates]``, or a checkpoint to resume that is
        missing, damaged (``"not a valid checkpoint: <path>: ..."``), written
        with other options or on other data, or a checkpoint directory that
        is an existing file; nothing is written or modified then.
    TypeError
        For ``params`` that are not an ``RBMParams``, ``CategoricalRBMParams``,
        ``GaussianRBMParams`` or ``Init``, a method, evaluation or checkpoints
        argument that is not one of the records, a ``wormholes`` object
        without ``propose``, or a callback that is not callable; and for an
        evaluation callable that returns no number.
    Exception
        Whatever ``callback`` or the evaluation's method raise (or any other error
        during the run) propagates, with the work done so far kept: the
        exception carries the :class:`FitResult` so far as
        ``partial_result`` (``stop_reason="error"``; its parameters, chains,
        history and trajectory) and a note that says so.

    Warns
    -----
    RuntimeWarning
        When training stopped early: Ctrl-C (``stop_reason="interrupted"``,
        the result so far is returned, as ``pm.sample`` does), or a
        divergence (``"diverged"``: parameters non-finite or beyond
        :data:`DIVERGENCE_SCALE`, or a recorded log-likelihood non-finite or
        more than ``n_visible · log 2`` below the best; the message names the
        learning rate and ``best_params`` keeps the best recorded
        parameters); once per run when a deterministic method's moments
        lie outside the physical domain (TAP on strongly coupled models);
        when a checkpoint cannot be written (a full disk: the run goes on,
        keeping its result in memory); and when a resumed run continues a
        checkpoint of an earlier version, which records no fingerprint of
        its training data to check ``data`` against.

    Examples
    --------
    >>> from pymc_rbm.datasets import bars_and_stripes
    >>> from pymc_rbm.training import PCD, Init, fit
    >>> data = bars_and_stripes(3)
    >>> result = fit(data, 9, params=Init(scale=0.5), method=PCD(k=5, operator="flip"), learning_rate=0.3,
    ...              n_updates=300, rng=0, progress=False)
    >>> ll = result.history.log_likelihood
    >>> bool(ll[-1] > ll[0] + 1.0)
    True
    """
    refuse_moved("fit", moved, FIT_MOVED)
    t_start = perf_counter()
    run = prepare_run(
        data, n_hidden, params=params, visible=visible, method=method,
        plan=Plan(batch_size, learning_rate, n_updates, epochs, max_time), optimizer=optimizer,
        evaluation=evaluation, checkpoints=checkpoints, rng=rng, callback=callback, progress=progress,
    )
    if run.length_from_budget:
        with single_blas_thread():
            run.set_length(planned_updates(run, t_start))
    training = Training(run, None if run.max_time is None else t_start + run.max_time)
    title = f"fit ({run.phase.name}" + ("" if run.max_time is None else f", max_time {run.max_time:g} s") + ")"
    try:
        training.keep_start()
        with (
            StopOnInterrupt() as guard,
            single_blas_thread(),
            Progress(run.n_updates - training.start, title, run.progress) as bar,
        ):
            training.loop(bar)
    except Exception as err:  # a raising callback or eval_method: the work done so far goes with the error
        training.attach_partial_result(err)
        raise
    return training.finish(interrupted=guard.interrupted)


class Training:
    """The loop of :func:`fit` and what it carries from update to update.

    Parameters
    ----------
    run : Run
        The checked options and the start (:func:`~pymc_rbm.training.run.prepare_run`);
        a run that resumes a checkpoint takes its optimiser state, random
        states and place in the batch order.

    Attributes
    ----------
    params : RBMParams (or the family's parameters)
        The parameters after the last complete update: a copy, made when
        first asked for (most updates of a small model are never looked at,
        and the copy costs more than their arithmetic).
    arrays : tuple of ndarray
        ``(W, vbias, hbias)`` in the flat coordinates, moved in place by each update.
    flat : RBMParams
        Views of ``arrays`` (:meth:`~pymc_rbm.params.RBMParams.viewing`): what
        the gradients read; they follow the arrays as they move.
    chains : object
        The phase's chains.
    update : int
        Updates done, those before a resumed checkpoint included.
    stop_reason : str
        As :attr:`FitResult.stop_reason`.
    """

    def __init__(self, run: Run, deadline: float | None = None):
        self.run = run
        self.deadline = deadline  # perf_counter() at which max_time runs out (None: no budget)
        self.chains = run.chains
        self.arrays = tuple(np.array(a, dtype=run.dtype) for a in (run.flat.W, run.flat.vbias, run.flat.hbias))
        self.flat = RBMParams.viewing(*self.arrays)
        self._params = run.params
        # the arrays of the last complete update while one is under way (it may diverge or be interrupted)
        self._committed = tuple(np.empty_like(a) for a in self.arrays)
        self._pending = False
        self.opt_state = run.updater.init(self.arrays)
        self.batches = BatchStream(run.n_samples, run.batch_size)
        self.start = 0
        checkpoint = run.checkpoint
        if checkpoint is not None:  # the run goes on where the checkpoint was written, with its random states
            self.opt_state = {key: np.array(value) for key, value in checkpoint.optimizer_state.items()}
            run.train_rng.bit_generator.state = checkpoint.train_rng
            run.eval_rng.bit_generator.state = checkpoint.eval_rng
            self.batches = BatchStream(run.n_samples, run.batch_size, checkpoint.batch_order,
                                       checkpoint.batch_position, checkpoint.epoch)
            self.start = checkpoint.update
        self.update, self.stop_reason, self.failure = self.start, "", None
        # average=: the running mean of the arrays over the updates after average_from (Polyak & Juditsky 1992)
        n_averaged = math.ceil(run.average * run.n_updates)
        self.average_from = run.n_updates - n_averaged
        self.mean = tuple(np.zeros_like(a) for a in self.arrays) if n_averaged else None
        self.n_averaged = 0
        if checkpoint is not None and self.mean is not None:
            mean, count = resumed_average(checkpoint, self.arrays)
            expected = max(0, checkpoint.update - self.average_from)  # updates of this run's window done already
            if count == expected:
                self.mean, self.n_averaged = mean, count
            elif expected:  # a longer run at a constant rate whose window began before the checkpoint
                longer = "" if run.average >= 1 else (
                    f"n_updates of at least {shortest_fresh_window(checkpoint.update, run.average)} (the window then "
                    "begins after the checkpoint), or with ")
                raise ValueError(
                    f"resume: this run of {run.n_updates} updates averages from update {self.average_from + 1}, "
                    f"but the checkpoint at update {checkpoint.update} kept the mean of its last {count} updates: "
                    f"the mean of this run cannot be rebuilt; resume with {longer}the checkpoint's own n_updates"
                )
        self.trajectory = TrajectoryRecorder(run.saved, run.checkpoint_dir)
        self.recorder = Recorder(run.evaluator)
        self.divergence = Divergence(run.params, run.updater.learning_rate)
        self.eval_every = run.eval_every
        # eval_method="auto" with AIS: the record of the start waits until the first updates have been timed
        self.sizing = run.evaluator is not None and run.evaluator.needs_sizing
        self.probe = self.start + min(self.eval_every, run.n_updates - self.start, 10) if self.sizing else 0
        self.seconds: list[float] = []
        self.warned_unphysical = False

    def snapshot(self, update_done: int) -> Checkpoint:
        """A checkpoint of the run after ``update_done`` updates."""
        run = self.run
        average = {} if self.mean is None else {
            **{f"mean_{i}": m for i, m in enumerate(self.mean)}, "count": np.int64(self.n_averaged)}
        return Checkpoint(self.params, update_done, self.batches.epoch, self.chains, self.opt_state,
                          run.train_rng.bit_generator.state, run.eval_rng.bit_generator.state, self.batches.order,
                          self.batches.position, run.config, run.data_fingerprint, average=average)

    def chains_hint(self, result: str = "result") -> str:
        """The keyword that passes the result's chains on: ``, method=PCD(..., chains=result.chains)`` (or none)."""
        if self.chains is None:
            return ""
        return f", method={type(self.run.method_options).__name__}(..., chains={result}.chains)"

    @property
    def raw_name(self) -> str:
        """The result's attribute a run continues from: ``raw_params`` with averaging, else ``params``."""
        return "params" if self.mean is None else "raw_params"

    @property
    def params(self):
        """The parameters after the last complete update (a copy, made once per update when asked for)."""
        if self._params is None:
            arrays = self._committed if self._pending else self.arrays
            self._params = self.run.family.unflat(RBMParams(*arrays, dtype=self.run.dtype))
        return self._params

    @property
    def returned(self):
        """What a stop now would return as ``params``: the running mean once averaging has begun, else ``params``."""
        if not self.n_averaged:
            return self.params
        return self.run.family.unflat(RBMParams(*(m.copy() for m in self.mean), dtype=self.run.dtype))

    def keep_start(self) -> None:
        """Keep (and write) the starting point of a new run."""
        if self.run.checkpoint is None:
            self.trajectory.keep(0, lambda: self.params, self.snapshot)

    def loop(self, bar: Progress) -> None:
        """Update until ``n_updates`` or a reason to stop, then the last record (stochastic)."""
        if not self.sizing:
            show_record(bar, self.recorder.record(self.start, self.params))
        while self.update < self.run.n_updates and not self.stop_reason:
            self.stop_reason = self._step(bar)
        if self.sizing and self.seconds and self.stop_reason != "diverged":  # stopped before the probe's updates
            self._start_records(bar)
        if self.stop_reason not in ("diverged", "evaluation_failed") and not self.sizing:
            self.recorder.record(self.update, self.returned)  # a no-op when this update was just recorded

    def _step(self, bar: Progress) -> str:
        """One update, its record and the callback: the reason to stop, or ``""``."""
        run = self.run
        t_update = time.perf_counter()
        if self._params is None:  # no copy of the parameters yet: keep their arrays while the update runs
            for kept, a in zip(self._committed, self.arrays):
                np.copyto(kept, a)
        self._pending = True
        grad, info = self._ascend()
        if self.divergence.parameters(self.arrays, self.update + 1):
            return "diverged"
        self._params, self._pending = None, False
        self.update += 1
        if self.mean is not None and self.update > self.average_from:
            self.n_averaged += 1
            for m, a in zip(self.mean, self.arrays):
                m += (a - m) / self.n_averaged
        self.seconds.append(time.perf_counter() - t_update)
        bar.advance()
        self.trajectory.keep(self.update, lambda: self.params, self.snapshot)
        if info.get("unphysical") and not self.warned_unphysical:
            self.warned_unphysical = True
            warn_unphysical(run.phase.name, self.update)
        self.recorder.collect(info)
        ll, reason = self._record(bar)
        if reason:
            return reason
        if run.callback is not None and run.callback(
                TrainingStep(self.update, self.batches.epoch, self.params, grad, ll, info)):
            return "callback"
        if self.deadline is not None and self.update < run.n_updates and perf_counter() > self.deadline - (
                run.evaluator.last_seconds if self.eval_every else 0.0):  # time for the last record
            return "max_time"
        return ""

    def _ascend(self) -> tuple[Gradient, dict]:
        """The gradient of the next batch, with ``arrays`` moved by the optimiser's step; the phase's info."""
        run = self.run
        batch = run.x[self.batches.next(run.train_rng)]
        if run.centered:  # the optimiser steps in the centered parameters; the step is mapped to (W, vbias, hbias)
            grad, offsets, self.chains, info = centered_phase_gradient(run.phase, run.train_rng, self.chains,
                                                                        self.flat, batch)
        else:
            (grad, self.chains, info), offsets = phase_gradient(run.phase, run.train_rng, self.chains, self.flat,
                                                                batch), None
        norm = run.updater.apply(self.opt_state, self.arrays, grad, self.update, offsets)
        return grad, dict(info, gradient_norm=norm)

    def _record(self, bar: Progress) -> tuple[float, str]:
        """The log-likelihood recorded after this update (NaN when none is due), and the reason to stop or ``""``."""
        run, update = self.run, self.update
        if self.sizing and update >= self.probe:
            self._start_records(bar)
        due = self.eval_every and not self.sizing and (update % self.eval_every == 0 or update == run.n_updates)
        if not due or not (update == run.n_updates or run.evaluator.affords(
                sum(self.seconds) * (run.n_updates - self.start) / (update - self.start))):
            return np.nan, ""
        try:
            ll = self.recorder.record(update, self.returned)
        except EvaluationFailed as err:  # the updates so far are kept: stop and say why
            self.failure = err
            return np.nan, "evaluation_failed"
        show_record(bar, ll)
        return ll, "diverged" if self.divergence.log_likelihood(ll, self.recorder.best_ll, update) else ""

    def _start_records(self, bar: Progress) -> None:
        """Size the AIS of the records from the updates timed so far, and record the start."""
        run = self.run
        self.eval_every = size_and_start(run.evaluator, self.recorder, bar, run.params, self.params, self.seconds,
                                         run.n_updates - self.start, self.eval_every, run.progress, self.start)
        self.sizing = False

    def attach_partial_result(self, err: Exception) -> None:
        """Attach the result so far to ``err`` as ``err.partial_result`` (``stop_reason="error"``), with a note."""
        self.stop_reason = "error"
        result = self.result()
        try:
            err.partial_result = result
        except (AttributeError, TypeError):  # an exception type that takes no attributes
            err.add_note(f"fit stopped at update {self.update} of {self.run.n_updates} on this error (the result so "
                         f"far could not be attached to a {type(err).__name__})")
            return
        err.add_note(
            f"fit stopped at update {self.update} of {self.run.n_updates} on this error; the result so far (the "
            "parameters, chains, history and trajectory) is attached as the exception's partial_result "
            f"(stop_reason='error'): continue with fit(data, params=err.partial_result.{self.raw_name}"
            f"{self.chains_hint('err.partial_result')}, ...)"
        )

    def finish(self, interrupted: bool = False) -> FitResult:
        """The result, with a warning that says why the run stopped early (Ctrl-C, divergence, a failed record)."""
        run, update = self.run, self.update
        if interrupted:
            self.stop_reason = "interrupted"
            where = (f"; or resume from the last checkpoint: fit(..., checkpoints=Checkpoints("
                     f"resume={str(run.checkpoint_dir)!r}))") if (
                run.checkpoint_dir is not None and self.trajectory.paths) else ""
            warnings.warn(
                f"fit was interrupted (Ctrl-C) after {update} of {run.n_updates} updates: the result so far is "
                "returned (stopped_early=True, stop_reason='interrupted'); continue with "
                f"fit(data, params=result.{self.raw_name}{self.chains_hint()}, ...){where}",
                RuntimeWarning,
                skip_file_prefixes=_OWN_FRAMES,
            )
        elif self.stop_reason == "max_time":
            cut = ("its average taken over fewer updates" if run.config.get("lr_schedule") == "constant"
                   else "its learning-rate schedule not run to the end")
            records = "" if run.evaluator is None else (
                f"; the log-likelihood records took {run.evaluator.seconds_spent:.3g} s")
            warnings.warn(
                f"fit ran out of its time budget (max_time={run.max_time:g} s) after {update} of {run.n_updates} "
                f"updates, the run slower than when it was planned{records}: the result so far is returned "
                f"(stop_reason='max_time'), {cut}; give a larger max_time, evaluation=None, "
                "or n_updates= for a run of fixed length",
                RuntimeWarning,
                skip_file_prefixes=_OWN_FRAMES,
            )
        elif self.stop_reason == "diverged":
            self.divergence.warn(self.recorder.best_update)
        elif self.stop_reason == "evaluation_failed":
            warnings.warn(
                f"fit stopped at update {update}: {self.failure}. params are the parameters after update {update} "
                "(stop_reason='evaluation_failed')",
                RuntimeWarning,
                skip_file_prefixes=_OWN_FRAMES,
            )
        return self.result()

    def result(self) -> FitResult:
        """The :class:`FitResult` of the updates done so far."""
        run, update = self.run, self.update
        recorder = self.recorder
        params = self.returned
        return FitResult(
            params=params,
            history=recorder.history(run.n_updates),
            best_params=recorder.best_params if recorder.best_params is not None else params,
            n_updates=update,
            stopped_early=bool(self.stop_reason),
            chains=self.chains,
            method=run.phase.name,
            operator=run.operator if run.method in SAMPLING_METHODS else None,
            stop_reason=self.stop_reason,
            trajectory=self.trajectory.result(),
            raw_params=self.params,
        )


def warn_unphysical(method: str, update: int) -> None:
    """Say once per run that a deterministic method's moments left the physical domain."""
    warnings.warn(
        f"fit (method={method!r}): the model moments at update {update} come from a fixed point outside the "
        "physical domain (pair moments outside [0, 1]): the gradient is that of an expansion used outside its "
        "range. Training goes on; history.diagnostics['unphysical'] counts such updates. Use 'pcd' or 'pt' "
        "for strongly coupled models",
        RuntimeWarning,
        skip_file_prefixes=_OWN_FRAMES,
    )


def planned_updates(run: Run, t_start: float) -> int:
    """The number of updates of a ``max_time`` run: measured on a throwaway copy of its start.

    The first update (which compiles) is done, then the next ones are timed
    for :data:`BUDGET_PROBE` of the budget, on copies of the start, the chains
    and the random streams (the run itself then starts where they did, so
    that it is the run of ``n_updates=`` that many, draw for draw); one
    log-likelihood record is timed as well. The updates planned fill what
    is left of :data:`BUDGET_TARGET` times ``max_time`` (since ``t_start``,
    the :func:`perf_counter` at the call of ``fit``), the records included.

    Raises
    ------
    ValueError
        When the budget does not leave time for one update.
    """
    probe = Training(dataclasses.replace(
        run, chains=copy.deepcopy(run.chains), train_rng=copy.deepcopy(run.train_rng), evaluator=None,
        eval_every=0, callback=None, checkpoint_dir=None, saved=np.zeros(0, dtype=np.int64)))
    bar = Progress(0, "", False)
    reason = probe._step(bar)  # the first update: it compiles, and no later one repeats that
    t_first = t_timed = perf_counter()
    n_timed = 0
    while not reason and t_timed - t_first < BUDGET_PROBE * run.max_time:
        reason = probe._step(bar)
        t_timed, n_timed = perf_counter(), n_timed + 1
    per_update = (t_timed - t_first) / n_timed if n_timed else t_first - t_start
    per_record = 0.0
    evaluator = run.evaluator
    if evaluator is not None and evaluator.needs_sizing:  # the records are sized to a share of the training time
        per_update *= 1.0 + evaluator.share
    elif evaluator is not None:  # one record timed, on a copy whose draws the run never sees
        evaluator = copy.copy(evaluator)
        evaluator.rng = copy.deepcopy(evaluator.rng)
        t0 = perf_counter()
        try:
            evaluator(probe.params)
        except EvaluationFailed:  # the run's own records say so
            pass
        per_record = perf_counter() - t0
    left = BUDGET_TARGET * run.max_time - (perf_counter() - t_start)
    every = run.eval_every
    n_updates = math.floor((left - 2 * per_record) / (per_update + (per_record / every if every else 0.0)))
    if n_updates < 1:
        records = f" and a log-likelihood record {per_record:.3g} s" if per_record else ""
        raise ValueError(
            f"max_time={run.max_time:g} s leaves no time for an update: the set-up and the first update (which "
            f"compiles) took {t_first - t_start:.3g} s, an update takes about {per_update:.3g} s{records}, and the run "
            f"aims to end at {BUDGET_TARGET:g} x max_time; give a larger max_time (or n_updates= instead)"
        )
    return n_updates


def shortest_fresh_window(update: int, average: float) -> int:
    """The fewest updates of a run whose averaging window (the last ``ceil(average · n)``) begins after ``update``."""
    n = update
    while n - math.ceil(average * n) < update:
        n += 1
    return n


def resumed_average(checkpoint: Checkpoint, arrays) -> tuple[tuple, int]:
    """The running mean of the parameters (flat ``arrays``' shapes and dtypes) and its count kept in ``checkpoint``."""
    state = checkpoint.average
    means = tuple(np.asarray(state.get(f"mean_{i}")) for i in range(len(arrays)))
    count = np.asarray(state.get("count"))
    if any(m.shape != a.shape or m.dtype != a.dtype for m, a in zip(means, arrays)) or count.ndim or \
            count.dtype.kind not in "iu" or int(count) < 0:
        raise invalid_checkpoint(checkpoint.path, f"its averaged parameters (entries {sorted(state)}) do not fit the "
                                 "run: expected mean_0, mean_1, mean_2 of the parameters' shapes and a count")
    return tuple(np.array(m) for m in means), int(count)

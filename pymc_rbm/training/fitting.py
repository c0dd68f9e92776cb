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
from pymc_rbm.training.run import METHODS, BatchStream, Run, prepare_run
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
        else None); pass them back as ``fit(..., chains=...)`` to resume.
    method : str
    operator : object
    stop_reason : str
        ``""`` (ran to the end), ``"callback"``, ``"interrupted"`` (Ctrl-C),
        ``"max_time"`` (the time budget ran out before the planned updates),
        ``"diverged"`` (the learning rate was too large; ``params`` are
        then the last parameters before the divergence) or
        ``"evaluation_failed"`` (``eval_method`` gave no finite ``log Z`` for
        a record after the start; at the start that is an
        :class:`EvaluationFailed` error) or ``"error"`` (the result attached
        as ``partial_result`` to an exception raised during the run, by
        ``callback`` or ``eval_method`` say).
    trajectory : Trajectory
        The parameters kept at the updates of ``save_updates`` (log-spaced by
        default) and the checkpoint files written
        (:mod:`~pymc_rbm.training.trajectory`).
    raw_params : RBMParams, CategoricalRBMParams or GaussianRBMParams
        The parameters after the last update: ``params`` itself without
        ``average``. A run continues from these (``fit(data,
        params=result.raw_params, chains=result.chains, ...)``).
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
def fit(
    data,
    n_hidden: int | None = None,
    *,
    params=None,
    visible=None,
    method: str = "pcd",
    operator="gibbs",
    k: int | None = None,
    n_temperatures: int = 10,
    betas=None,
    n_chains: int | None = None,
    batch_size: int | None = None,
    learning_rate: float = 0.05,
    momentum: float | None = None,
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
    lr_schedule=None,
    max_grad_norm: float | None = None,
    dtype=None,
    save_updates=None,
    checkpoint_dir=None,
    resume=None,
    max_time: float | None = None,
    average: float | None = None,
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
        fixes it); ``"gaussian"`` fixes σ at half of each column's standard
        deviation (:data:`~pymc_rbm.training.families.GAUSSIAN_SIGMA_SCALE`;
        ``pymc_rbm.layers.Gaussian(sigma)`` gives it). σ is not trained. The
        categorical and Gaussian RBMs train with ``"cd"``, ``"pcd"`` (operator
        ``"gibbs"``; for categorical units also ``"flip"`` or ``α``: Liu's
        Metropolised Gibbs mixed with Gibbs) and ``"exact"``
        (:mod:`~pymc_rbm.training.families`); the gradient, the centering
        and the optimiser are the binary ones on their sufficient statistics.
    method : str, default "pcd"
        ``"cd"`` (CD-k), ``"pcd"`` (PCD-k), ``"pt"`` (t-PT k, Brügge, Fischer & Igel 2013, §4.2),
        or a deterministic model term: ``"exact"`` (enumeration: the true
        gradient), ``"mean_field"``, ``"tap"``, ``"bethe"`` (Huang & Toyoizumi 2015, eq. 6),
        ``"mixture_mean_field"`` (Lawrence, Bishop & Jordan 1998, eq. 28).
        The defaults (PCD-5, mini-batches of 100, learning rate 0.05 held
        constant with the parameters averaged over the last half, 5000
        updates or ``max_time``) are those that trained small models and
        MNIST best (``docs/training.md``, "Defaults").
    operator : {"gibbs", "flip"} or float, default "gibbs"
        Sweep of the sampling methods: block Gibbs, flip-the-state (Brügge, Fischer & Igel 2013),
        or the mixture ``α T + (1 - α) G`` for ``α`` in [0, 1].
    k : int, optional
        Sweeps per update (per replica and swap round for PT); default
        :data:`~pymc_rbm.training.run.DEFAULT_K` (5) for ``"cd"`` and
        ``"pcd"``, 1 for ``"pt"``. The deterministic methods draw no samples
        (a ``k`` other than 1 is refused).
    n_temperatures : int, default 10
        PT: replicas per ladder, inverse temperatures uniform in [0, 1].
    betas : array_like, optional
        PT: the ladder itself (strictly increasing, ending at 1); overrides
        ``n_temperatures``.
    n_chains : int, optional
        PCD and PT: number of persistent chains (ladders); default the batch
        size, as in Brügge, Fischer & Igel (2013).
    batch_size : int, optional
        Rows per mini-batch (shuffled every epoch); default
        :data:`~pymc_rbm.training.run.DEFAULT_BATCH_SIZE` (100), all rows
        when there are fewer; ``len(data)`` for batch learning.
    learning_rate : float, default 0.05
        The step at the start; ``lr_schedule`` lowers it along the run.
    momentum : float in [0, 1), optional
        Classical (heavy-ball) momentum of ``optimizer="sgd"``; default 0.5
        (Hinton 2010), none with Adam. ``momentum=0`` is plain gradient ascent.
    weight_decay : float, default 0
        L2 penalty on ``W``: ``weight_decay · W`` is subtracted from its gradient.
    n_updates, epochs : int, optional
        Length of training: give at most one; default
        :data:`~pymc_rbm.training.run.DEFAULT_N_UPDATES` (5000) updates. An epoch
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
        half the training time (:data:`EVAL_BUDGET`; a tenth with
        ``max_time``, :data:`~pymc_rbm.training.records.EVAL_BUDGET_TIMED`;
        between 500 and 14500 steps per record; with fewer than 500
        affordable the records are thinned, down to the start and the end;
        and a record is skipped when the measured cost of the records so far
        says it would overrun the budget). The choice is printed
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
    lr_schedule : {"constant", "linear", "cosine", "exponential"} or callable, optional
        The learning rate of update ``u`` (0-based) is ``learning_rate`` times
        :func:`~pymc_rbm.training.optimizers.schedule_factor`; a callable is
        ``(u, n_updates) -> factor``. Default: ``"constant"`` where the run is
        averaged (``average``, the default of the sampling methods: the mean
        of the oscillating parameters settles them), ``"cosine"`` where not
        (the decay to 0 lets the last parameters settle: at a constant rate
        without averaging they oscillate about the best ones, -7.2 at the end
        of a run on 4x4 bars and stripes whose best record was -3.9). A run on
        a decaying schedule resumes from a checkpoint with its own
        ``n_updates`` only; ``"constant"`` resumes for longer.
    max_grad_norm : float, optional
        Gradient clipping: a gradient estimate longer than this is rescaled
        to this norm (before weight decay).
    dtype : {numpy.float64, numpy.float32}, optional
        Floating type of the parameters, chains and products during
        training; float32 halves the time of the products (the result's
        ``params`` are in this type). Default: float32 for binary RBMs of at
        least :data:`~pymc_rbm.training.run.FLOAT32_WEIGHTS` (65 536)
        weights, where the products are most of an update (on MNIST it
        learned as float64 did at equal updates), float64 otherwise.
    save_updates : None, int or array_like of int, optional
        The updates whose parameters are kept in ``result.trajectory``
        (:class:`~pymc_rbm.training.trajectory.Trajectory`): None,
        :data:`~pymc_rbm.training.trajectory.DEFAULT_SAVED` log-spaced points
        from the start to the end; an int, that many log-spaced points (0:
        none); or the update numbers themselves.
    checkpoint_dir : str or os.PathLike, optional
        Also write every kept point to ``checkpoint_dir/update_<n>.npz``,
        with the chains, the optimiser's state, the random states and a
        fingerprint of the training data (:mod:`~pymc_rbm.training.trajectory`).
        A checkpoint that cannot be written (a full disk) warns and leaves no
        partial file; the run goes on.
    resume : str or os.PathLike, optional
        A checkpoint file, or a directory whose latest checkpoint is used:
        continue that run (stopped by Ctrl-C, say) up to ``n_updates`` in
        all (by default the checkpoint's, a budget's plan included), draw for
        draw as it would have gone on. The options that shape
        the run (method, k, batch size, ...) must be those it was written
        with, and ``data`` the data it was trained on (the checkpoint keeps
        their fingerprint); ``params``, ``chains`` and ``rng`` come from the file.
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
        With ``resume``, ``n_updates`` is the checkpoint's and ``max_time``
        only stops the run at the budget.
    average : float in [0, 1], optional
        Polyak-Ruppert averaging: ``result.params`` is the mean of the
        parameters after each of the last ``ceil(average · n_updates)``
        updates (in the flat coordinates of the family); the parameters after
        the last update are kept as ``result.raw_params``. The records and
        ``best_params`` see what a stop at their update would return (the
        running mean once averaging has begun); the trajectory and the
        callback see the raw parameters.
        Checkpoints keep the running mean, so ``resume`` continues it exactly.
        Default: :data:`~pymc_rbm.training.run.DEFAULT_AVERAGE` (0.5, the
        last half) for the sampling methods, at a constant rate: on 4x4 bars
        and stripes -3.534 against -3.638 for the cosine decay without
        averaging, on MNIST 784x500 in 150 s -91.7 against -92.8
        (``docs/training.md``, "Averaged parameters"); 0 (none) for the
        deterministic methods, whose gradients are not noisy. 0 turns it off.

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
        names, options out of range, or chain options given to a
        deterministic method.
        Also for an unknown optimizer, schedule or dtype, ``max_grad_norm``
        not positive, ``save_updates`` outside ``[0, n_updates]``, or a
        ``resume`` checkpoint that is missing, damaged (``"not a valid
        checkpoint: <path>: ..."``), written with other options or on other
        data, or a ``checkpoint_dir`` that is an existing file; nothing is
        written or modified then.
    TypeError
        For ``params`` that are not an ``RBMParams``, ``CategoricalRBMParams`` or ``GaussianRBMParams``, a ``wormholes`` object
        without ``propose``, or a callback that is not callable; and for an
        ``eval_method`` callable that returns no number.
    Exception
        Whatever ``callback`` or ``eval_method`` raise (or any other error
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
        keeping its result in memory); and when ``resume`` continues a
        checkpoint of an earlier version, which records no fingerprint of
        its training data to check ``data`` against.

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
    t_start = perf_counter()
    run = prepare_run(
        data, n_hidden, params=params, visible=visible, method=method, operator=operator, k=k,
        n_temperatures=n_temperatures, betas=betas, n_chains=n_chains, batch_size=batch_size,
        learning_rate=learning_rate, momentum=momentum, weight_decay=weight_decay, n_updates=n_updates,
        epochs=epochs, init_scale=init_scale, init=init, rng=rng, eval_every=eval_every, eval_method=eval_method,
        eval_options=eval_options, eval_data=eval_data, moment_options=moment_options, wormholes=wormholes,
        chains=chains, callback=callback, progress=progress, centered=centered, hidden=hidden, optimizer=optimizer,
        lr_schedule=lr_schedule, max_grad_norm=max_grad_norm, dtype=dtype, save_updates=save_updates,
        checkpoint_dir=checkpoint_dir, resume=resume, max_time=max_time, average=average,
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
            f"(stop_reason='error'): continue with fit(data, params=err.partial_result.{self.raw_name}, "
            "chains=err.partial_result.chains, ...)"
        )

    def finish(self, interrupted: bool = False) -> FitResult:
        """The result, with a warning that says why the run stopped early (Ctrl-C, divergence, a failed record)."""
        run, update = self.run, self.update
        if interrupted:
            self.stop_reason = "interrupted"
            where = f"; or resume from the last checkpoint: fit(..., resume={str(run.checkpoint_dir)!r})" if (
                run.checkpoint_dir is not None and self.trajectory.paths) else ""
            warnings.warn(
                f"fit was interrupted (Ctrl-C) after {update} of {run.n_updates} updates: the result so far is "
                "returned (stopped_early=True, stop_reason='interrupted'); continue with "
                f"fit(data, params=result.{self.raw_name}, chains=result.chains, ...){where}",
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
                f"(stop_reason='max_time'), {cut}; give a larger max_time, eval_every=None, "
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

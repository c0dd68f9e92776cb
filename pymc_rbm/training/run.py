"""The set-up of a :func:`~pymc_rbm.training.fit` run: its options checked, its start made.

:func:`prepare_run` checks every option of ``fit`` (nothing is written or
modified before it returns), loads the checkpoint to resume, draws the
starting parameters, builds the negative phase and its chains and the
log-likelihood evaluator, and returns them as one :class:`Run`. The helpers
it uses are here too: the phase of a method (:func:`negative_phase`), the
starting parameters and chains, and the batch stream.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

import numpy as np

from pymc_rbm._runtime import spawn
from pymc_rbm.kernels.operators import build_operator
from pymc_rbm.estimators.options import check_record
from pymc_rbm.training.families import family_for, family_of
from pymc_rbm.training.gradients import DETERMINISTIC_METHODS
from pymc_rbm.training.negative import (
    FAMILY_METHODS,
    SAMPLING_METHODS,
    NegativePhase,
    contrastive_divergence,
    deterministic,
    family_phase,
    parallel_tempering,
    persistent_contrastive_divergence,
)
from pymc_rbm.training.optimizers import Updater, make_optimizer
from pymc_rbm.training.options import CD, PCD, PT, Checkpoints, Init, Moments, evaluation_options, method_options
from pymc_rbm.training.records import EVAL_BUDGET, EVAL_BUDGET_TIMED, EXACT_EVAL_MAX_BITS, Evaluator, auto_eval_method
from pymc_rbm.training.trajectory import (
    Checkpoint,
    check_checkpoint_dir,
    check_checkpoint_state,
    check_resume,
    check_save_updates,
    data_fingerprint,
    invalid_checkpoint,
    load_checkpoint,
)
from pymc_rbm.validation import check_positive_int, check_real

__all__ = [
    "METHODS",
    "DEFAULT_N_UPDATES",
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_AVERAGE",
    "FLOAT32_WEIGHTS",
    "Run",
    "Plan",
    "prepare_run",
    "negative_phase",
    "family_negative_phase",
    "initial_params",
    "check_chains",
    "family_of_start",
    "check_dtype",
    "as_dtype",
    "BatchStream",
]

#: Every training method :func:`~pymc_rbm.training.fit` knows.
METHODS = SAMPLING_METHODS + DETERMINISTIC_METHODS

#: Length of a run when neither ``n_updates`` nor ``epochs`` is given. With the other defaults (PCD-5, learning
#: rate 0.05 on a cosine schedule) 5000 updates train 4x4 bars and stripes to -3.64 (2000: -5.9) and a 64-pixel
#: mixture of ten prototypes to its entropy (``benchmarks/fit_defaults.py``, ``docs/training.md``).
DEFAULT_N_UPDATES = 5000

#: Rows per mini-batch when ``batch_size`` is not given (all rows when there are fewer). On binarized MNIST
#: (784x500) batches of 100 reach -97.6 nats in 150 s where the whole data set per update (50 000 rows) makes
#: few updates; small data sets (4x4 bars and stripes, 30 rows) still train on all rows (``docs/training.md``).
DEFAULT_BATCH_SIZE = 100

#: ``dtype=None`` trains binary RBMs with at least this many weights in float32, where the matrix products are
#: most of an update and float32 halves their time; smaller ones, whose updates are compiled calls, in float64.
#: On MNIST 784x500 float32 matched float64 at equal updates (-132.30 against -132.29) and in 150 s made 5545
#: updates to float64's 3229 (-92.8 against -97.6 nats).
FLOAT32_WEIGHTS = 2**16

#: ``average`` of the sampling methods (CD, PCD, PT) when not given: the parameters returned are the mean over the
#: last half of the updates (Polyak & Juditsky 1992), at a constant learning rate (``lr_schedule=None``: constant
#: where averaged, cosine where not). Their gradients are noisy, and the mean of a constant-rate run beat the
#: cosine decay to 0: 4x4 bars and stripes -3.534 against -3.638 (mean of 3 seeds, 5000 updates), MNIST 784x500
#: in 150 s -91.7 against -92.8 (the cosine decay averaged: -93.0). The deterministic methods do not average.
DEFAULT_AVERAGE = 0.5

@dataclass
class Run:
    """A checked :func:`~pymc_rbm.training.fit` run and its start (:func:`prepare_run`).

    Attributes
    ----------
    family : BernoulliFamily, CategoricalFamily or GaussianFamily
    x : ndarray of shape (n_samples, n_features)
        The training data's features (``v`` itself for binary units), in ``dtype``.
    batch_size : int or None
        None: every row in each update.
    n_updates, eval_every : int
        ``eval_every`` is 0 for no records.
    phase : NegativePhase
    updater : Updater
    evaluator : Evaluator or None
    params : RBMParams, CategoricalRBMParams or GaussianRBMParams
        The starting parameters, in ``dtype``.
    flat : RBMParams
        ``params`` in the family's flat coordinates.
    chains : object
        The phase's starting chains.
    train_rng, eval_rng : numpy.random.Generator
    checkpoint : Checkpoint or None
        The checkpoint the run continues.
    saved : ndarray of int
        The updates whose parameters are kept.
    config : dict
        The options that shape the run, as checkpoints record them.
    method, operator, centered, dtype, callback, progress, checkpoint_dir
        As given to ``fit`` (``dtype`` checked, ``centered`` a bool).
    data_fingerprint : str or None
        :func:`~pymc_rbm.training.trajectory.data_fingerprint` of the training
        data, for the checkpoints (None when none are written or read).
    max_time : float or None
        The time budget of the run in seconds (None: none).
    length_from_budget : bool
        Whether ``n_updates`` is still to be fixed from ``max_time``
        (:meth:`set_length`): neither ``n_updates`` nor ``epochs`` was given.
    save_updates : object
        ``save_updates`` as given, for :meth:`set_length`.
    average : float
        The fraction of the last updates whose parameters are averaged (0: none).
    method_options : CD, PCD, PT or Moments
        The method's record (:mod:`~pymc_rbm.training.options`).
    """

    family: Any
    x: np.ndarray
    batch_size: int | None
    n_updates: int
    eval_every: int
    phase: NegativePhase
    updater: Updater
    evaluator: Evaluator | None
    params: Any
    flat: Any
    chains: Any
    train_rng: np.random.Generator
    eval_rng: np.random.Generator
    checkpoint: Checkpoint | None
    saved: np.ndarray
    config: dict
    method: str
    operator: Any
    centered: bool
    dtype: np.dtype
    callback: Callable | None
    progress: bool
    checkpoint_dir: Any
    data_fingerprint: str | None = None
    max_time: float | None = None
    length_from_budget: bool = False
    save_updates: Any = None
    average: float = 0.0
    method_options: Any = None

    @property
    def n_samples(self) -> int:
        """Rows of the training data."""
        return self.x.shape[0]

    def set_length(self, n_updates: int) -> None:
        """Fix the run's length (the schedule, the saved updates and the configuration follow it)."""
        self.n_updates = self.updater.n_updates = self.config["n_updates"] = int(n_updates)
        self.saved = check_save_updates(self.save_updates, self.n_updates)
        self.length_from_budget = False


class Plan(NamedTuple):
    """The length and pace of a :func:`~pymc_rbm.training.fit` run, as given to it (:func:`prepare_run`)."""

    batch_size: int | None
    learning_rate: float
    n_updates: int | None
    epochs: int | None
    max_time: float | None


def prepare_run(data, n_hidden, *, params, visible, method, plan: Plan, optimizer, evaluation, checkpoints, rng,
                callback, progress) -> Run:
    """Check the options of :func:`~pymc_rbm.training.fit` (its parameters, undefaulted) and make the run's start.

    The checks come first, in the order of ``fit``'s documentation; then the
    random streams (initialisation, training, evaluation) are spawned from
    ``rng`` and the starting parameters, phase, chains and evaluator made.

    Returns
    -------
    Run

    Raises
    ------
    ValueError, TypeError
        As :func:`~pymc_rbm.training.fit` says; nothing is written or modified.
    """
    init = params if isinstance(params, Init) else Init() if params is None else Init(params)
    params = init.params
    method = method_options(method)
    evaluation = evaluation_options(evaluation)
    checkpoints = check_record(checkpoints, Checkpoints, "checkpoints")
    optimizer = make_optimizer(optimizer)
    data = unmasked(data, "data")
    eval_data = None if evaluation.data is None else unmasked(evaluation.data, "evaluation data")
    with missing_values_hint(data, "data"):
        family, checkpoint = _family_and_checkpoint(data, params, visible, checkpoints.resume)
    dtype = init.dtype
    dtype = check_dtype(default_dtype(family, np.shape(data), n_hidden, params, checkpoint) if dtype is None else dtype)
    with missing_values_hint(data, "data"):
        v = family.check(data, name="data", dtype=dtype)
    if v.ndim != 2 or v.shape[0] == 0:
        raise ValueError(f"data must have shape (n_samples, n_visible) with n_samples >= 1, got {v.shape}")
    n_samples, n_visible = v.shape
    x = family.features(v).astype(dtype, copy=False)  # the sufficient statistics' visible part: v for binary units
    learning_rate = check_real(plan.learning_rate, "learning_rate", 0.0, lo_open=True)
    max_time = None if plan.max_time is None else check_real(plan.max_time, "max_time", 0.0, lo_open=True)
    sampling = not isinstance(method, Moments)
    average = optimizer.average
    if average is None:
        average = DEFAULT_AVERAGE if sampling else 0.0
    schedule = optimizer.schedule
    if schedule is None:
        schedule = "constant" if average > 0 else "cosine"
    n_updates, epochs, resume = plan.n_updates, plan.epochs, checkpoints.resume
    length_from_budget = max_time is not None and n_updates is None and epochs is None and resume is None
    if checkpoint is not None and n_updates is None and epochs is None:
        n_updates = checkpoint.config.get("n_updates")  # the length it was run for (a budget's plan included)
    batch_size, n_updates = _run_length(plan.batch_size, n_updates, epochs, n_samples)
    if callback is not None and not callable(callback):
        raise TypeError(f"callback must be callable, got {type(callback).__name__}")
    updater = Updater(optimizer, learning_rate, schedule, n_updates)
    saved = check_save_updates(checkpoints.updates, 2**62 if length_from_budget else n_updates)  # checked again
    if checkpoints.directory is not None:
        check_checkpoint_dir(checkpoints.directory)
    # the data's fingerprint, for checkpoints: a run resumes on the data it was trained on
    fingerprint = data_fingerprint(v) if checkpoints.directory is not None or checkpoint is not None else None
    config = {"method": method.name, "operator": str(getattr(method, "operator", "gibbs")),
              "k": getattr(method, "k", 1), "n_chains": getattr(method, "n_chains", None), "batch_size": batch_size,
              "n_samples": n_samples, "n_visible": n_visible, "centered": optimizer.centered,
              "hidden": getattr(method, "hidden", "redraw"), "dtype": np.dtype(dtype).name, **updater.config(),
              **family.config(), "average": average or None}
    if isinstance(method, PT):  # a ladder adapted or not: a resume with the other is refused, as for k
        config["adapt_every"] = method.adapt_every
    chains = getattr(method, "chains", None)
    if checkpoint is not None:
        check_resume(checkpoint, config, params, chains, n_updates, fingerprint)
        params, chains = checkpoint.params, checkpoint.chains

    init_rng, train_rng, eval_rng = spawn(np.random.default_rng(rng), 3)
    start = "data" if init.params is not None else init.start
    params = family.astype(initial_params(family, n_visible, n_hidden, params, init.scale, init_rng, start, v), dtype)
    phase = negative_phase(method, family)
    flat = family.flat(params)  # the coordinates (W, a, c) of the features: params itself for binary units
    if checkpoint is not None:
        check_checkpoint_state(checkpoint, updater.init((flat.W, flat.vbias, flat.hbias)), n_samples, batch_size)
        try:
            chains = _starting_chains(phase, chains, train_rng, x, flat, batch_size or n_samples, dtype)
        except ValueError as err:
            raise invalid_checkpoint(checkpoint.path, f"its chains do not fit the run ({err})") from None
    else:
        chains = _starting_chains(phase, chains, train_rng, x, flat, batch_size or n_samples, dtype)
    evaluator, eval_every = _evaluator(family, params, v, evaluation, eval_data, eval_rng, timed=max_time is not None)
    return Run(family=family, x=x, batch_size=batch_size, n_updates=n_updates, eval_every=eval_every, phase=phase,
               updater=updater, evaluator=evaluator, params=params, flat=flat, chains=chains, train_rng=train_rng,
               eval_rng=eval_rng, checkpoint=checkpoint, saved=saved, config=config, method=method.name,
               operator=getattr(method, "operator", "gibbs"), centered=optimizer.centered, dtype=dtype,
               callback=callback, progress=progress, checkpoint_dir=checkpoints.directory,
               data_fingerprint=fingerprint, max_time=max_time, length_from_budget=length_from_budget,
               save_updates=checkpoints.updates, average=average, method_options=method)


def unmasked(data, name: str):
    """``data`` as a plain array where it is a masked array with nothing masked; a ValueError where cells are masked.

    ``fit`` trains on complete rows: the values under a mask would be trained on as if they were observed.
    """
    if not isinstance(data, np.ma.MaskedArray):
        return data
    mask = np.ma.getmaskarray(data)
    if mask.any():
        rows = int(np.count_nonzero(mask.reshape(mask.shape[0], -1).any(axis=1))) if mask.ndim else 1
        raise ValueError(
            f"{name} is a masked array with {int(mask.sum())} masked value(s) in {rows} row(s), and fit trains on "
            f"observed values only: drop the incomplete rows ({name}[~{name}.mask.any(axis=1)], then "
            "numpy.ma.getdata) or impute the masked values first, and pass a plain array"
        )
    return np.ma.getdata(data)


@contextlib.contextmanager
def missing_values_hint(data, name: str):
    """Add to a ValueError of the data's check, where ``data`` hold NaN, that NaN marks missing values and what to do."""
    try:
        yield
    except ValueError as err:
        a = data if isinstance(data, np.ndarray) else None
        if a is None:
            try:
                a = np.asarray(data)
            except Exception:  # noqa: BLE001 - the check's own error says what is wrong
                raise err from None
        if a.dtype.kind not in "fc" or not np.isnan(a).any():
            raise
        rows = int(np.count_nonzero(np.isnan(a).reshape(a.shape[0], -1).any(axis=1))) if a.ndim else 1
        raise ValueError(
            f"{err}. {name} hold {int(np.isnan(a).sum())} NaN value(s) in {rows} row(s): fit does not train on "
            f"missing values; drop the incomplete rows ({name}[~numpy.isnan({name}).any(axis=1)]) or impute them first"
        ) from None


def _family_and_checkpoint(data, params, visible, resume):
    """The family of the RBM trained, and the checkpoint to continue (None): a checkpoint's parameters say which."""
    if resume is not None:
        checkpoint = load_checkpoint(resume)
        return family_of(checkpoint.params), checkpoint
    return (family_for(visible, data) if params is None else family_of_start(params, visible)), None


def _run_length(batch_size, n_updates, epochs, n_samples: int) -> tuple[int | None, int]:
    """The checked batch size (None for all rows; :data:`DEFAULT_BATCH_SIZE` by default) and number of updates
    (:data:`DEFAULT_N_UPDATES` by default)."""
    batch_size = DEFAULT_BATCH_SIZE if batch_size is None else check_positive_int(batch_size, "batch_size")
    if batch_size is not None and batch_size >= n_samples:
        batch_size = None
    n_batches = 1 if batch_size is None else -(-n_samples // batch_size)
    if n_updates is not None and epochs is not None:
        raise ValueError("give n_updates or epochs, not both")
    if epochs is not None:
        n_updates = check_positive_int(epochs, "epochs") * n_batches
    return batch_size, DEFAULT_N_UPDATES if n_updates is None else check_positive_int(n_updates, "n_updates")


def _starting_chains(phase, chains, rng, x, flat, batch_size: int, dtype):
    """The phase's chains: new ones drawn from ``rng``, or the caller's checked and in ``dtype``."""
    if chains is None:
        return phase.init(rng, x, flat, batch_size)
    check_chains(chains, phase.init(np.random.default_rng(0), x, flat, batch_size), phase.name)
    return as_dtype(chains, dtype)


def _evaluator(family, params, v, evaluation, eval_data, rng, timed=False):
    """The log-likelihood evaluator (None for no records) and the updates between records (0 when none are)."""
    eval_every = evaluation.every
    if not eval_every:
        return None, eval_every
    if eval_data is None:
        e_data = v
    else:
        with missing_values_hint(eval_data, "evaluation data"):
            e_data = family.check(eval_data, v.shape[1], name="evaluation data")
    if e_data.ndim != 2:
        raise ValueError(f"the evaluation data must have shape (n_eval, n_visible), got {e_data.shape}")
    if isinstance(evaluation.method, str) and evaluation.method == "auto" and auto_eval_method(family, params) is None:
        warnings.warn(
            f"fit records no log-likelihood: this {family.name} RBM is too large to enumerate (more than "
            f"2**{EXACT_EVAL_MAX_BITS} states in its smaller layer), and no estimator of "
            f"pymc_rbm.estimators.log_partition takes {family.name} RBMs; pass evaluation=Evaluation(method=...) "
            "a callable params -> log Z for records",
            RuntimeWarning,
            skip_file_prefixes=(os.path.dirname(os.path.abspath(__file__)),),  # the caller of fit
        )
        return None, 0
    share = EVAL_BUDGET_TIMED if timed else EVAL_BUDGET
    return Evaluator(evaluation.method, evaluation.options, e_data, params, rng, family, share), eval_every


def initial_params(family, n_visible: int, n_hidden, params, init_scale: float, rng, init: str = "data",
                   data=None):
    """The starting parameters: drawn as ``init`` says (stochastic), or a float64 copy of the given ``params``.

    Parameters
    ----------
    family : BernoulliFamily, CategoricalFamily or GaussianFamily
    n_visible : int
    n_hidden : int or None
        Needed when ``params`` is None; else it must agree with them.
    params : RBMParams, CategoricalRBMParams, GaussianRBMParams or None
    init_scale : float
    rng : numpy.random.Generator
    init : {"data", "normal"}
    data : ndarray of shape (n_samples, n_visible), optional
        For the visible biases of ``init="data"``.
    """
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


def negative_phase(method, family=None) -> NegativePhase:
    """The negative phase of a method record (:mod:`~pymc_rbm.training.options`): the model term of every update.

    Returns
    -------
    NegativePhase
        CD, PCD, PT (:mod:`~pymc_rbm.training.negative`) or a deterministic
        model term for binary RBMs; :func:`family_negative_phase` for the others.

    Raises
    ------
    ValueError
        For a method the RBM's family does not train with.
    """
    method = method_options(method)
    if family is not None and family.name != "bernoulli":
        return family_negative_phase(family, method)
    if isinstance(method, Moments):
        return deterministic(method.method, **method.options)
    kernel = build_operator(method.operator)
    if isinstance(method, CD):
        return contrastive_divergence(kernel, method.k, wormholes=method.wormholes)
    if isinstance(method, PCD):
        return persistent_contrastive_divergence(kernel, method.k, n_chains=method.n_chains,
                                                 wormholes=method.wormholes, hidden=method.hidden)
    return parallel_tempering(kernel, method.k, betas=method.ladder, n_chains=method.n_chains,
                              wormholes=method.wormholes, adapt_every=method.adapt_every)


def family_negative_phase(family, method) -> NegativePhase:
    """The negative phase of a categorical or Gaussian RBM, or a ValueError naming what is supported."""
    if method.name not in FAMILY_METHODS:
        raise ValueError(
            f"fit trains {family.name} RBMs with the methods {FAMILY_METHODS} only, not {method.name!r} (parallel "
            "tempering and the mean-field, TAP and Bethe model terms are written for binary units)"
        )
    if getattr(method, "wormholes", None) is not None:
        raise ValueError(f"wormholes are written for binary RBMs; {family.name} RBMs train without them")
    if getattr(method, "hidden", "redraw") != "redraw":
        raise ValueError(f"hidden={method.hidden!r} applies to binary PCD with block Gibbs; {family.name} chains "
                         "always redraw h")
    if isinstance(method, Moments):
        return family_phase("exact", family, **method.options)
    return family_phase(method.name, family, method.operator, method.k, n_chains=getattr(method, "n_chains", None))


def family_of_start(params, visible):
    """The family of starting ``params``, which ``visible`` (if given) must agree with."""
    family = family_of(params)
    if visible is not None and not (isinstance(visible, str) and visible == family.name) and not (
            family.name != "bernoulli" and visible == family.layer):
        raise ValueError(f"visible={visible!r} contradicts the starting params, a {type(params).__name__}")
    return family


def default_dtype(family, data_shape, n_hidden, params, checkpoint) -> type:
    """The training dtype of ``fit(dtype=None)``: float32 for binary RBMs of at least :data:`FLOAT32_WEIGHTS`
    weights, else float64 (a resumed run: the dtype it was written with)."""
    if checkpoint is not None:
        return np.dtype(checkpoint.config["dtype"]).type
    if params is not None:
        n_hidden = params.n_hidden
    large = n_hidden is not None and len(data_shape) == 2 and data_shape[1] * n_hidden >= FLOAT32_WEIGHTS
    return np.float32 if family.name == "bernoulli" and large else np.float64


def check_dtype(dtype) -> np.dtype:
    """``dtype`` as a NumPy dtype, float32 or float64, or a ValueError."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"dtype must be numpy.float32 or numpy.float64, got {dtype!r}")
    return dt


def as_dtype(chains, dtype):
    """Persistent chains with their arrays in ``dtype`` (copies where they are not)."""
    return type(chains)(*(np.asarray(x, dtype=dtype) if isinstance(x, np.ndarray) else x for x in chains))


def check_chains(chains, template, method: str) -> None:
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


class BatchStream:
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

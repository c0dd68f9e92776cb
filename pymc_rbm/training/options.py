"""The option records of :func:`~pymc_rbm.training.fit`: its method, evaluation, checkpoints and start.

``fit`` takes the options that shape every run (the data, the method, the
batch size, the learning rate, the length) as arguments, and each group of
the others as one small frozen record:

- the method: a name (``"pcd"``, ``"exact"``, ...) or :class:`CD`, :class:`PCD`,
  :class:`PT`, :class:`Moments` with the options of that method only (a CD
  has no persistent chains to count, a deterministic method no sweeps);
- :class:`Evaluation`: how often and how the log-likelihood is recorded;
- :class:`Checkpoints`: which updates are kept, where they are written, and
  the checkpoint a run resumes;
- :class:`Init`: how the starting parameters are drawn (or which are given)
  and the floating type of training.

The optimiser's options (momentum, schedule, averaging, weight decay,
clipping, centering) are those of :class:`~pymc_rbm.training.optimizers.SGD`
and :class:`~pymc_rbm.training.optimizers.Adam`. Every record checks its
fields when it is made, so a bad option fails before anything runs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from pymc_rbm.kernels.operators import build_operator
from pymc_rbm.kernels.tempering import check_ladder, uniform_ladder
from pymc_rbm.training.families import INITS
from pymc_rbm.training.gradients import DETERMINISTIC_METHODS
from pymc_rbm.training.negative import DEFAULT_ADAPT_EVERY, HIDDEN_MODES, SAMPLING_METHODS, check_adapt_every
from pymc_rbm.validation import check_positive_int, check_real

__all__ = [
    "CD",
    "PCD",
    "PT",
    "Moments",
    "Evaluation",
    "Checkpoints",
    "Init",
    "DEFAULT_K",
    "DEFAULT_EVAL_EVERY",
    "method_options",
    "evaluation_options",
]

#: Sweeps per update of :class:`CD` and :class:`PCD` when ``k`` is not given (:class:`PT`: 1 per replica and swap
#: round). PCD-1 at the default learning rate lost 0.3 nats on 4x4 bars and stripes, and half a nat on one seed
#: of three.
DEFAULT_K = 5

#: Updates between two log-likelihood records of :class:`Evaluation` when not given.
DEFAULT_EVAL_EVERY = 100


def _check_wormholes(wormholes) -> None:
    if wormholes is not None and not callable(getattr(wormholes, "propose", None)):
        raise TypeError(
            "wormholes must be a proposal with a propose(rng, x) method, e.g. "
            f"pymc_rbm.kernels.wormhole.PointWormholes(data); got {type(wormholes).__name__}"
        )


@dataclass(frozen=True, eq=False)
class CD:
    """CD-k (Hinton 2002): every update, one chain starts at each row of the batch and makes ``k`` sweeps.

    Parameters
    ----------
    k : int, default :data:`DEFAULT_K` (5)
        Sweeps per update.
    operator : {"gibbs", "flip"} or float, default "gibbs"
        The sweep: block Gibbs, flip-the-state (Brügge, Fischer & Igel 2013), or
        the mixture ``α T + (1 - α) G`` for ``α`` in [0, 1].
    wormholes : proposal, optional
        A proposal of :mod:`pymc_rbm.kernels.wormhole` (``PointWormholes``,
        ``RegionWormholes``): one wormhole move per chain after the sweeps of
        each update (Hinton, Welling & Mnih 2003); binary RBMs only.
    """

    k: int = DEFAULT_K
    operator: Any = "gibbs"
    wormholes: Any = None
    name: ClassVar[str] = "cd"

    def __post_init__(self):
        object.__setattr__(self, "k", check_positive_int(self.k, "k"))
        build_operator(self.operator)  # an unknown name or α out of [0, 1] fails here
        _check_wormholes(self.wormholes)


@dataclass(frozen=True, eq=False)
class PCD:
    """PCD-k (Tieleman 2008): persistent chains, ``k`` sweeps per update.

    Parameters
    ----------
    k : int, default :data:`DEFAULT_K` (5)
    operator : {"gibbs", "flip"} or float, default "gibbs"
        As :class:`CD`'s.
    n_chains : int, optional
        Number of persistent chains; default the batch size, as in Brügge,
        Fischer & Igel (2013).
    hidden : {"redraw", "carry"}, default "redraw"
        With block Gibbs: draw the chains' hidden units at the new parameters
        every update (as ``rbms`` does), or sweep the visible layer first from
        the hidden state they carry (one product fewer; worse at PCD-1 on
        MNIST: :func:`~pymc_rbm.training.negative.persistent_contrastive_divergence`).
    wormholes : proposal, optional
        As :class:`CD`'s, at the end of each update.
    chains : RBMState, optional
        Persistent chains to continue from, those of an earlier
        :class:`~pymc_rbm.training.FitResult` of the same model.
    """

    k: int = DEFAULT_K
    operator: Any = "gibbs"
    n_chains: int | None = None
    hidden: str = "redraw"
    wormholes: Any = None
    chains: Any = None
    name: ClassVar[str] = "pcd"

    def __post_init__(self):
        object.__setattr__(self, "k", check_positive_int(self.k, "k"))
        build_operator(self.operator)
        object.__setattr__(self, "n_chains", check_positive_int(self.n_chains, "n_chains", allow_none=True))
        if self.hidden not in HIDDEN_MODES:
            raise ValueError(f"hidden must be one of {HIDDEN_MODES}, got {self.hidden!r}")
        _check_wormholes(self.wormholes)


@dataclass(frozen=True, eq=False)
class PT:
    """t-PT k (Brügge, Fischer & Igel 2013, §4.2): persistent ladders of replicas, ``k`` sweeps each, then a swap round.

    The replicas at β = 1 give the samples.

    Parameters
    ----------
    k : int, default 1
        Sweeps per replica and swap round.
    operator : {"gibbs", "flip"} or float, default "gibbs"
        As :class:`CD`'s.
    n_temperatures : int, default 10
        Replicas per ladder, inverse temperatures uniform in [0, 1] at the start.
    betas : array_like, optional
        The starting ladder itself (strictly increasing, ending at 1); overrides ``n_temperatures``.
    n_chains : int, optional
        Number of ladders; default the batch size.
    wormholes : proposal, optional
        Offered to the replicas at β = 1 after the swap round.
    chains : TemperedState, optional
        Persistent ladders to continue from, those of an earlier run (they carry their adapted ladder).
    adapt_every : int or None, default :data:`~pymc_rbm.training.negative.DEFAULT_ADAPT_EVERY` (50)
        Every that many updates the ladder is spaced anew for equal swap rejection between neighbours,
        from the rates measured since the last time (Syed et al. 2022; the rule of every ladder of the
        package, :func:`~pymc_rbm.kernels.tempering.equalized_ladder`); the number of replicas and the
        end points stay. None or 0: the ladder stays where it started.
    """

    k: int = 1
    operator: Any = "gibbs"
    n_temperatures: int = 10
    betas: Any = None
    n_chains: int | None = None
    wormholes: Any = None
    chains: Any = None
    adapt_every: int | None = DEFAULT_ADAPT_EVERY
    name: ClassVar[str] = "pt"

    def __post_init__(self):
        object.__setattr__(self, "k", check_positive_int(self.k, "k"))
        build_operator(self.operator)
        object.__setattr__(self, "n_chains", check_positive_int(self.n_chains, "n_chains", allow_none=True))
        if self.betas is None:
            n = check_positive_int(self.n_temperatures, "n_temperatures", minimum=2)
            object.__setattr__(self, "n_temperatures", n)
        else:
            betas = check_ladder(self.betas)
            if betas[-1] != 1.0:
                raise ValueError(f"the last inverse temperature must be 1 (the model itself), got {betas[-1]}")
            object.__setattr__(self, "betas", betas)
            object.__setattr__(self, "n_temperatures", betas.size)
        object.__setattr__(self, "adapt_every", check_adapt_every(self.adapt_every) or None)
        _check_wormholes(self.wormholes)

    @property
    def ladder(self) -> np.ndarray:
        """The starting inverse temperatures, of shape (n_temperatures,)."""
        return uniform_ladder(self.n_temperatures) if self.betas is None else self.betas


@dataclass(frozen=True, eq=False)
class Moments:
    """A deterministic model term: the moments of :func:`pymc_rbm.estimators.moments` by ``method``.

    Parameters
    ----------
    method : {"exact", "mean_field", "tap", "bethe", "mixture_mean_field"}
        Exact enumeration (the true gradient), naive mean field, TAP, the Bethe
        approximation (Huang & Toyoizumi 2015, eq. 6) or mixture mean field
        (Lawrence, Bishop & Jordan 1998, eq. 28).
    options : dict, optional
        Options of the method's moment function (e.g. its damping).
    """

    method: str
    options: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.method not in DETERMINISTIC_METHODS:
            raise ValueError(f"Moments takes one of {DETERMINISTIC_METHODS}, got {self.method!r}")
        if not isinstance(self.options, dict):
            raise TypeError(f"Moments' options must be a dict, got {type(self.options).__name__}")

    @property
    def name(self) -> str:
        return self.method


_SAMPLING_RECORDS = {"cd": CD, "pcd": PCD, "pt": PT}


def method_options(method):
    """The record of ``fit(method=...)``: a method's name with its defaults, or the record given.

    Raises
    ------
    ValueError
        For an unknown name.
    TypeError
        For something that is neither a name nor a record.
    """
    if isinstance(method, (CD, PCD, PT, Moments)):
        return method
    if isinstance(method, str):
        if method in _SAMPLING_RECORDS:
            return _SAMPLING_RECORDS[method]()
        if method in DETERMINISTIC_METHODS:
            return Moments(method)
        raise ValueError(f"unknown method {method!r}; choose one of {list(SAMPLING_METHODS + DETERMINISTIC_METHODS)}")
    raise TypeError(f"method must be a name or a CD, PCD, PT or Moments record, got {type(method).__name__}")


@dataclass(frozen=True, eq=False)
class Evaluation:
    """The log-likelihood records of a run: how often, by which ``log Z``, on which data.

    Parameters
    ----------
    every : int, default :data:`DEFAULT_EVAL_EVERY` (100)
        Record the mean log-likelihood at the start, every ``every`` updates
        and at the end; 0 records nothing.
    method : str or callable, default "auto"
        How ``log Z`` is obtained: ``"auto"`` is exact enumeration when the
        smaller layer has at most
        :data:`~pymc_rbm.training.records.EXACT_EVAL_MAX_BITS` units, else
        ``"ais"`` with a number of steps chosen after the first (at most ten)
        updates, from their time, so that all records together take about
        half the training time (:data:`~pymc_rbm.training.records.EVAL_BUDGET`;
        a tenth under a time budget,
        :data:`~pymc_rbm.training.records.EVAL_BUDGET_TIMED`; between 500 and
        14500 steps per record; with fewer than 500 affordable the records
        are thinned, down to the start and the end; and a record is skipped
        when the measured cost of the records so far says it would overrun
        the budget). The choice is printed once (with ``progress``) and kept
        in ``history.estimator_options``; give ``options={"n_steps": ...}`` to
        fix it yourself. Any method of
        :func:`pymc_rbm.estimators.log_partition` (e.g. ``"tap"``), or a
        callable ``params -> log Z``.
    options : dict, optional
        Passed to the estimator (e.g. ``{"n_chains": 100, "schedule": 1000}`` for AIS).
    data : array_like of shape (n_eval, n_visible), optional
        Data whose log-likelihood is recorded; default the training data.
    """

    every: int = DEFAULT_EVAL_EVERY
    method: Any = "auto"
    options: dict | None = None
    data: Any = None

    def __post_init__(self):
        object.__setattr__(self, "every", check_positive_int(self.every or 0, "every", minimum=0))
        if self.options is not None and not isinstance(self.options, dict):
            raise TypeError(f"Evaluation's options must be a dict, got {type(self.options).__name__}")


def evaluation_options(evaluation) -> Evaluation:
    """The record of ``fit(evaluation=...)``: an :class:`Evaluation`, or an int (``every``), or None (no records)."""
    if isinstance(evaluation, Evaluation):
        return evaluation
    if evaluation is None:
        return Evaluation(every=0)
    if isinstance(evaluation, bool) or not isinstance(evaluation, (int, np.integer)):
        raise TypeError(f"evaluation must be an Evaluation record, a number of updates or None, got {evaluation!r}")
    return Evaluation(every=int(evaluation))


@dataclass(frozen=True, eq=False)
class Checkpoints:
    """The parameters kept along a run, where they are written, and the checkpoint a run continues.

    Parameters
    ----------
    updates : None, int or array_like of int, optional
        The updates whose parameters are kept in ``result.trajectory``
        (:class:`~pymc_rbm.training.trajectory.Trajectory`): None,
        :data:`~pymc_rbm.training.trajectory.DEFAULT_SAVED` log-spaced points
        from the start to the end; an int, that many log-spaced points (0:
        none); or the update numbers themselves.
    directory : str or os.PathLike, optional
        Also write every kept point to ``directory/update_<n>.npz``, with the
        chains, the optimiser's state, the random states and a fingerprint of
        the training data (:mod:`~pymc_rbm.training.trajectory`). A checkpoint
        that cannot be written (a full disk) warns and leaves no partial file;
        the run goes on.
    resume : str or os.PathLike, optional
        A checkpoint file, or a directory whose latest checkpoint is used:
        continue that run (stopped by Ctrl-C, say) up to ``n_updates`` in all
        (by default the checkpoint's, a budget's plan included), draw for draw
        as it would have gone on. The options that shape the run (method, k,
        batch size, ...) must be those it was written with, and ``data`` the
        data it was trained on (the checkpoint keeps their fingerprint); the
        parameters, chains and random streams come from the file.
    """

    updates: Any = None
    directory: Any = None
    resume: Any = None

    def __post_init__(self):
        for name in ("directory", "resume"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, (str, os.PathLike)):
                raise TypeError(f"Checkpoints' {name} must be a path, got {type(value).__name__}")


@dataclass(frozen=True, eq=False)
class Init:
    """The starting parameters of a run, and the floating type it trains in.

    Parameters
    ----------
    start : {"data", "normal"} or RBMParams, CategoricalRBMParams, GaussianRBMParams, default "data"
        ``"data"``: ``W ~ N(0, scale²)``, visible biases at the logits of the
        data means (clipped to ``[1e-4, 1 - 1e-4]``), hidden biases 0 (Hinton
        2010, §8; as ``rbms``); ``"normal"``: ``W`` and both biases from
        ``N(0, scale²)`` (Brügge, Fischer & Igel 2013, §4.2). With centered
        gradients ``"data"`` is the one that works on MNIST
        (``docs/training.md``). Parameters given are copied, never modified,
        and their type says which RBM is trained.
    scale : float, default 0.01
        Standard deviation of the drawn ``W`` (and of the biases with ``"normal"``).
    dtype : {numpy.float64, numpy.float32}, optional
        Floating type of the parameters, chains and products during
        training; float32 halves the time of the products (the result's
        ``params`` are in this type). Default: float32 for binary RBMs of at
        least :data:`~pymc_rbm.training.run.FLOAT32_WEIGHTS` (65 536)
        weights, where the products are most of an update (on MNIST it
        learned as float64 did at equal updates), float64 otherwise.
    """

    start: Any = "data"
    scale: float = 0.01
    dtype: Any = None

    def __post_init__(self):
        if isinstance(self.start, str) and self.start not in INITS:
            raise ValueError(f"Init's start must be one of {INITS} or starting parameters, got {self.start!r}")
        object.__setattr__(self, "scale", check_real(self.scale, "scale", 0.0))

    @property
    def params(self):
        """The starting parameters given, or None where they are drawn."""
        return None if isinstance(self.start, str) else self.start

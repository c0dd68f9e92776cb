"""Option records shared by the tempered estimators of ``log Z``, SAMS and RTS.

:func:`~pymc_rbm.estimators.sams.sams` (Tan 2017) and
:func:`~pymc_rbm.estimators.rts.rts` (Carlson et al. 2016) take the options
that users pass most (the model, the number of chains or runs, the sweeps,
``data``, ``rng``, ``progress``, the ladder ``betas``) as keywords, and the
others grouped by meaning in small frozen records, checked when they are made:

- :class:`StartOptions`: where the chains and the guesses of ``log Z`` along
  the ladder start (``init``, the BAR run's ``n_start`` and
  ``n_equilibrate``) and how the pilot run places the ladder (``n_pilot``,
  ``spacing``);
- :class:`PathOptions`: the annealing path's reference distribution and
  arithmetic (``operator``, ``base``, ``base_smoothing``, ``dtype``), the
  options of :func:`~pymc_rbm.estimators.path.annealing_path` besides ``data``;
- each estimator's own record of how its weights adapt:
  :class:`~pymc_rbm.estimators.sams.SAMSAdaptation` and
  :class:`~pymc_rbm.estimators.rts.RTSRounds`.

A keyword that moved into a record is refused with a TypeError that names the
record (:func:`refuse_moved`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from pymc_rbm.kernels.operators import operator_alpha
from pymc_rbm.validation import check_float_array, check_positive_int, check_real, check_sampling_dtype

__all__ = ["StartOptions", "PathOptions", "check_record", "refuse_moved"]

#: The names of ``StartOptions.init``: the starts of both estimators (SAMS calls its flat start "zero", RTS "flat").
INIT_NAMES = ("bar", "ais", "zero", "flat")

#: The names of ``PathOptions.base`` (:func:`~pymc_rbm.estimators.base_rate.base_rate_vbias`).
BASE_NAMES = ("data", "mean_field", "target", "zero")


def _set(record, name: str, value) -> None:
    object.__setattr__(record, name, value)


def check_record(value, cls, name: str):
    """``value`` when it is a ``cls``, ``cls()`` (its defaults) for None, else a TypeError naming ``name``."""
    if value is None:
        return cls()
    if not isinstance(value, cls):
        raise TypeError(f"{name} must be a {cls.__name__} (or None for its defaults), got {type(value).__name__}")
    return value


def refuse_moved(function: str, moved: dict, records: dict) -> None:
    """A TypeError for keywords that ``function`` no longer takes; nothing when ``moved`` is empty.

    Parameters
    ----------
    function : str
        The estimator's name, for the message.
    moved : dict
        The keywords it received beyond its own (its ``**moved``).
    records : dict
        ``{old keyword: (keyword, record class)}``, or ``(keyword, record class, field)``
        where the record's field has another name: where each old keyword went. A
        keyword not there is told as Python tells an unexpected keyword.

    Raises
    ------
    TypeError
        Naming, for each old keyword, the record that now takes it, e.g.
        ``sams() no longer takes the keyword n_pilot: it moved into an option record; pass
        start=StartOptions(n_pilot=...)``.
    """
    if not moved:
        return
    unknown = [name for name in moved if name not in records]
    if unknown:
        raise TypeError(f"{function}() got an unexpected keyword argument {unknown[0]!r}")
    by_record: dict = {}
    for name in moved:
        keyword, cls, *field = records[name]
        by_record.setdefault((keyword, cls.__name__), []).append(field[0] if field else name)
    where = ", ".join(
        f"{keyword}={cls}(" + ", ".join(f"{n}=..." for n in names) + ")" for (keyword, cls), names in by_record.items()
    )
    s = "s" if len(moved) > 1 else ""
    raise TypeError(
        f"{function}() no longer takes the keyword{s} {', '.join(moved)}: "
        f"{'they' if s else 'it'} moved into an option record; pass {where}"
    )


@dataclass(frozen=True, eq=False)
class StartOptions:
    """Where SAMS and RTS start: the ladder's pilot run, the initial guesses of ``log Z`` and the chains' states.

    Both estimators place a ladder of interpolation values along the annealing
    path by a pilot AIS run (at equal thermodynamic length ``spacing``,
    :func:`~pymc_rbm.estimators.ladder.build_ladder`), then start their chains
    and their guesses of every label's ``log Z`` from a run of Bennett's
    acceptance ratio along it (``init="bar"``,
    :func:`~pymc_rbm.estimators.ladder.bar_ladder`), from the pilot
    (``"ais"``), from a flat start, or from given values.

    Parameters
    ----------
    init : {"bar", "ais", "zero", "flat"} or array_like of shape (K,), optional
        The start. ``"bar"``: every label's guess from a BAR run of
        ``n_start`` steps each way, and equilibrated starting states spread
        evenly over the ladder. ``"ais"``: the pilot run's guesses and
        states. The flat start (all guesses equal to the base's ``log Z``;
        SAMS calls it ``"zero"``, Tan's (2017) plain start, RTS ``"flat"``,
        Zhang's (2016)). An array: those guesses of ``log Z_k - log Z_0`` per
        label (shifted so that the first is 0). Default: the estimator's
        (``"bar"`` for one model, ``"ais"`` for a SAMS run over several).
    n_start : int, default 18000
        Steps each way of the BAR run of ``init="bar"``.
    n_equilibrate : int, optional
        Sweeps of the ``init="bar"`` starting states at their labels (and of
        the BAR run's reverse starts at the target), at least 0; default
        ``n_start // 9``.
    n_pilot : int, default 1000
        Steps per segment of the pilot run that places the labels.
    spacing : float, optional
        Thermodynamic length between neighbouring labels, positive; default
        the estimator's (2.0 for SAMS, whose local jumps move best at
        acceptance rates near 0.4; 1.0 for RTS, which draws β over the whole
        ladder).

    Raises
    ------
    ValueError
        For an unknown name of ``init``, non-finite guesses, or counts and a
        spacing out of range.

    Examples
    --------
    >>> from pymc_rbm.estimators import StartOptions
    >>> StartOptions(init="ais", n_pilot=300).n_pilot
    300
    """

    init: object = None
    n_start: int = 18000
    n_equilibrate: int | None = None
    n_pilot: int = 1000
    spacing: float | None = None

    def __post_init__(self):
        init = self.init
        if isinstance(init, str):
            if init not in INIT_NAMES:
                raise ValueError(
                    f'init must be "bar", "ais", "zero" (SAMS), "flat" (RTS) or an array of log Z guesses, '
                    f"got {init!r}"
                )
        elif init is not None:
            init = check_float_array(init, "init", ndim=1, readonly=True)
        _set(self, "init", init)
        _set(self, "n_start", check_positive_int(self.n_start, "n_start"))
        if self.n_equilibrate is not None:
            _set(self, "n_equilibrate", check_positive_int(self.n_equilibrate, "n_equilibrate", 0))
        _set(self, "n_pilot", check_positive_int(self.n_pilot, "n_pilot"))
        if self.spacing is not None:
            _set(self, "spacing", check_real(self.spacing, "spacing", 0.0, lo_open=True))

    @property
    def warm(self) -> bool:
        """Whether the chains start from the BAR run (``init="bar"``)."""
        return isinstance(self.init, str) and self.init == "bar"

    def resolved(self, *, init, spacing: float) -> "StartOptions":
        """This record with the estimator's defaults filled in: ``init`` and ``spacing`` where None, and
        ``n_equilibrate`` (a ninth of ``n_start``)."""
        return dataclasses.replace(
            self,
            init=init if self.init is None else self.init,
            n_equilibrate=self.n_start // 9 if self.n_equilibrate is None else self.n_equilibrate,
            spacing=spacing if self.spacing is None else self.spacing,
        )


@dataclass(frozen=True, eq=False)
class PathOptions:
    """The annealing path's options for SAMS and RTS: its base distribution, its Markov operator and its dtype.

    These are the options of :func:`~pymc_rbm.estimators.path.annealing_path`
    besides ``data``, which the estimators take as a keyword of their own. An
    estimator given an :class:`~pymc_rbm.estimators.path.AnnealingPath` built
    once takes them from the path and refuses a record that changes them.

    Parameters
    ----------
    operator : {"gibbs", "flip"} or float in [0, 1], default "gibbs"
        Visible-layer update of the sweeps: block Gibbs, flip-the-state
        (Brügge, Fischer & Igel 2013), or their mixture of that weight.
    base : {None, "data", "mean_field", "target", "zero"} or array_like of shape (n_visible,), optional
        The base distribution at ``β = 0``
        (:func:`~pymc_rbm.estimators.base_rate.base_rate_vbias`): default
        ``"data"`` with ``data``, else ``"mean_field"``.
    base_smoothing : float, default 0.005
        Pseudo-counts of the base rate, positive.
    dtype : numpy dtype, optional
        Floating type of the sampling arithmetic, float32 or float64; default
        the estimator's (float32 for SAMS and RTS, which accumulate ``log f``
        and their estimates in float64).

    Raises
    ------
    ValueError
        For an unknown operator or base name, a smoothing that is not
        positive, or a dtype other than float32 and float64.

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm.estimators import PathOptions
    >>> PathOptions(base="target", dtype=np.float64).dtype
    dtype('float64')
    """

    operator: object = "gibbs"
    base: object = None
    base_smoothing: float = 0.005
    dtype: object = None

    def __post_init__(self):
        operator_alpha(self.operator)  # checked; kept as given ("gibbs", "flip" or the weight)
        base = self.base
        if isinstance(base, str):
            if base not in BASE_NAMES:
                raise ValueError(f'base must be "data", "mean_field", "target", "zero" or an array of biases, got {base!r}')
        elif base is not None:
            base = check_float_array(base, "base", readonly=True)
        _set(self, "base", base)
        _set(self, "base_smoothing", check_real(self.base_smoothing, "base_smoothing", 0.0, lo_open=True))
        if self.dtype is not None:
            _set(self, "dtype", check_sampling_dtype(self.dtype))

    def changed(self) -> list[str]:
        """The names of the fields not at their defaults, in field order."""
        default = PathOptions()
        return [
            f.name
            for f in dataclasses.fields(self)
            if not _same(getattr(self, f.name), getattr(default, f.name))
        ]

    def annealing_options(self, dtype) -> dict:
        """The keywords of :func:`~pymc_rbm.estimators.path.annealing_path`, with ``dtype`` where this record has none."""
        return {
            "base": self.base,
            "base_smoothing": self.base_smoothing,
            "dtype": np.dtype(dtype) if self.dtype is None else self.dtype,
            "operator": self.operator,
        }


def _same(value, default) -> bool:
    if isinstance(value, np.ndarray) or isinstance(default, np.ndarray):
        return False
    return value is default or (type(value) is type(default) and value == default)

"""How the annealing estimators take their target: a model with the path's options, or a path built once.

AIS, reverse AIS, BAR, RTS and SAMS accept either an RBM (with the options of
:func:`~pymc_rbm.estimators.path.annealing_path`: as keywords for AIS and BAR,
as a :class:`~pymc_rbm.estimators.options.PathOptions` record for RTS and SAMS)
or an :class:`~pymc_rbm.estimators.path.AnnealingPath`; :func:`as_path`,
:func:`single_model_path` and :func:`path_from_options` turn either into the
path, refusing options that a given path already fixes (and categorical models
for the estimators not in :data:`CATEGORICAL_ESTIMATORS`), and
:func:`check_states` checks rows of visible states against the model's layer
type.
"""

from __future__ import annotations

import inspect

import numpy as np

from pymc_rbm.categorical.params import CategoricalRBMParams, as_labels
from pymc_rbm.estimators.options import PathOptions, check_record
from pymc_rbm.estimators.path import AnnealingPath, annealing_path, layers_of, path_model_types
from pymc_rbm.layers import BERNOULLI, Gaussian
from pymc_rbm.validation import check_binary

__all__ = ["CATEGORICAL_ESTIMATORS", "as_path", "single_model_path", "path_from_options", "check_states"]

#: The annealing estimators that take categorical (Potts) and Gaussian-Bernoulli models; the others (RTS, SAMS)
#: refuse them.
CATEGORICAL_ESTIMATORS = ("ais", "reverse_ais", "bar")


def check_states(x, model, *, name: str = "data") -> np.ndarray:
    """Visible states of ``model`` as rows (shape (n, n_visible)), checked against its visible layer type.

    A categorical model's states are labels (float64), given as labels or as
    one-hot rows of shape (n, n_visible, q) (:func:`pymc_rbm.categorical.as_labels`).
    """
    n = model.n_visible
    layer = layers_of(model)[0]
    if layer == BERNOULLI:
        return check_binary(x, n, name=name).reshape(-1, n)
    if isinstance(model, CategoricalRBMParams):
        return as_labels(x, model, name=name).astype(np.float64).reshape(-1, n)
    return layer.check(x, n, name=name).reshape(-1, n)


def check_categorical_support(params, estimator) -> None:
    """A ValueError when ``estimator`` (a function, or None for :func:`annealing_path`) cannot take the
    categorical model ``params`` (a model or a path), naming the estimators that can."""
    name = getattr(estimator, "__name__", "annealing_path")
    model = params.models[0] if isinstance(params, AnnealingPath) else params
    categorical = isinstance(model, CategoricalRBMParams)
    gaussian = isinstance(getattr(model, "visible", None), Gaussian)
    if (categorical or gaussian) and name not in CATEGORICAL_ESTIMATORS + ("annealing_path",):
        kind, cls = ("categorical (Potts)", "CategoricalRBMParams") if categorical else (
            "Gaussian-Bernoulli", "GaussianRBMParams")
        raise ValueError(
            f"{name} does not support {kind} RBMs; log Z of a {cls} is estimated by "
            f"{', '.join(CATEGORICAL_ESTIMATORS)} (or computed by method='exact' where it can be enumerated)"
        )


def as_path(params, data=None, *, estimator=None, data_name: str = "data", **options) -> AnnealingPath:
    """``params`` itself when it is an :class:`AnnealingPath`, else :func:`annealing_path` of it.

    ``options`` are those of :func:`annealing_path` as ``estimator`` (the calling function) received
    them; with a path they must be left at the estimator's defaults (the path fixes them), and ``data``
    (the estimator's argument ``data_name``) None, else a ValueError names them.
    """
    check_categorical_support(params, estimator)
    if not isinstance(params, AnnealingPath):
        return annealing_path(params, data, **options)
    defaults = inspect.signature(estimator if estimator is not None else annealing_path).parameters
    given = [name for name, value in options.items() if not _is_default(value, defaults[name].default)]
    _refuse_with_path(given, data, data_name)
    return params


def _refuse_with_path(given: list, data, data_name: str) -> None:
    """A ValueError naming the path's options (and ``data``) given beside a path that fixes them."""
    if data is not None:
        given = [data_name, *given]
    if given:
        raise ValueError(
            f"{', '.join(given)}: these belong to the annealing path; pass them to annealing_path(...), "
            "not with a path"
        )


def single_model_path(params, data=None, *, estimator, **options) -> AnnealingPath:
    """:func:`as_path` for the estimators that anneal to one model (AIS, reverse AIS, BAR, RTS).

    Raises
    ------
    TypeError
        When ``params`` is neither an RBMParams nor an AnnealingPath.
    ValueError
        For a path to several models (:func:`~pymc_rbm.estimators.sams` takes those).
    """
    name = estimator.__name__
    if isinstance(params, AnnealingPath):
        if params.n_models != 1:
            raise ValueError(f"{name} anneals to one target model; sams estimates several in one run")
    elif not isinstance(params, path_model_types()):
        raise TypeError(f"params must be an RBMParams or an AnnealingPath, got {type(params).__name__}")
    return as_path(params, data, estimator=estimator, **options)


def path_from_options(params, data, options, *, estimator, dtype, single: bool = False) -> AnnealingPath:
    """:func:`as_path` (or :func:`single_model_path`) for the estimators that take the path's options as a record.

    Parameters
    ----------
    params : RBMParams, sequence of RBMParams or AnnealingPath
    data : array_like, optional
        The estimator's ``data`` (for the base rate).
    options : PathOptions or None
        The estimator's ``path_options``; None for the defaults.
    estimator : callable
        The calling estimator (its name goes into the messages).
    dtype : numpy dtype
        The estimator's default dtype, for a record without one.
    single : bool, default False
        Whether the estimator anneals to one model (RTS): then the checks of
        :func:`single_model_path` apply.

    Raises
    ------
    TypeError
        When ``options`` is not a PathOptions (or ``params`` not a model or a path, with ``single``).
    ValueError
        When a path is given with ``data`` or with a record that changes its options
        (``"path_options.base: these belong to the annealing path ..."``).
    """
    options = check_record(options, PathOptions, "path_options")
    if not isinstance(params, AnnealingPath):
        build = single_model_path if single else as_path
        return build(params, data, estimator=estimator, **options.annealing_options(dtype))
    check_categorical_support(params, estimator)
    if single and params.n_models != 1:
        raise ValueError(f"{estimator.__name__} anneals to one target model; sams estimates several in one run")
    _refuse_with_path([f"path_options.{name}" for name in options.changed()], data, "data")
    return params


def _is_default(value, default) -> bool:
    if isinstance(value, np.ndarray) or isinstance(default, np.ndarray):
        return False
    if isinstance(default, type) and issubclass(default, np.generic):  # a dtype
        try:
            return np.dtype(value) == np.dtype(default)
        except TypeError:
            return False
    return value is default or (type(value) is type(default) and value == default)

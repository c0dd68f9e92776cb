"""Estimators of what sampling cannot give directly: log Z, log-likelihood, moments.

Every method of :func:`log_partition` returns a
:class:`LogPartitionEstimate`; each method is also a function of its own.
"""

from __future__ import annotations

import inspect

import numpy as np

from pymc_rbm.categorical.params import CategoricalRBMParams
from pymc_rbm.energy import free_energy
from pymc_rbm.estimators.path import AnnealingPath, annealing_path
from pymc_rbm.estimators.ais import ais, reverse_ais
from pymc_rbm.estimators.bar import bar
from pymc_rbm.enumeration import (
    MAX_ENUMERATION_BITS,
    EnumerationTooLarge,
    ExactMoments,
    binary_states,
    log_marginal_visible,
    log_partition_exact,
    moments_exact,
    sample_visible_exact,
    states_at,
)
from pymc_rbm.estimators.bethe import log_partition_bethe, moments_bethe
from pymc_rbm.estimators.boltzmann_machine import BoltzmannMachine
from pymc_rbm.estimators.mean_field import log_partition_mean_field, moments_mean_field
from pymc_rbm.estimators.mixture_mean_field import log_partition_mixture_mean_field, moments_mixture_mean_field
from pymc_rbm.estimates import LogPartitionEstimate, Moments
from pymc_rbm.estimators.options import PathOptions, StartOptions
from pymc_rbm.estimators.rts import RTSRounds, rts
from pymc_rbm.estimators.sams import SAMSAdaptation, sams
from pymc_rbm.estimators.sampling import SampledMoments, moments_sampling
from pymc_rbm.estimators.tap import log_partition_tap, moments_tap
from pymc_rbm.estimators.tempered_ladder import log_partition_ladder
from pymc_rbm.estimators.trajectory import log_partition_trajectory
from pymc_rbm.params import RBMParams, SpinRBMParams
from pymc_rbm.validation import check_real

__all__ = [
    "LogPartitionEstimate",
    "Moments",
    "ExactMoments",
    "EnumerationTooLarge",
    "MAX_ENUMERATION_BITS",
    "log_partition",
    "log_partition_exact",
    "log_likelihood",
    "moments",
    "moments_exact",
    "moments_sampling",
    "SampledMoments",
    "log_marginal_visible",
    "sample_visible_exact",
    "binary_states",
    "states_at",
    "log_partition_tap",
    "log_partition_ladder",
    "moments_tap",
    "log_partition_bethe",
    "moments_bethe",
    "log_partition_mean_field",
    "moments_mean_field",
    "log_partition_mixture_mean_field",
    "moments_mixture_mean_field",
    "BoltzmannMachine",
    "ais",
    "reverse_ais",
    "annealing_path",
    "AnnealingPath",
    "bar",
    "rts",
    "RTSRounds",
    "sams",
    "SAMSAdaptation",
    "StartOptions",
    "PathOptions",
    "log_partition_trajectory",
]

#: The estimators :func:`log_partition` dispatches to, by name.
LOG_PARTITION_METHODS = {
    "ladder": log_partition_ladder,
    "exact": log_partition_exact,
    "tap": log_partition_tap,
    "bethe": log_partition_bethe,
    "mean_field": log_partition_mean_field,
    "mixture_mean_field": log_partition_mixture_mean_field,
    "ais": ais,
    "reverse_ais": reverse_ais,
    "bar": bar,
    "rts": rts,
    "sams": sams,
}

#: The methods of :func:`log_partition` that take a categorical (Potts) RBM.
CATEGORICAL_LOG_PARTITION_METHODS = ("exact", "ais", "reverse_ais", "bar")

#: The methods of :func:`log_partition` that take a Gaussian-Bernoulli RBM (the annealing ones along the path of
#: :mod:`pymc_rbm.estimators.path`, "Gaussian visible units").
GAUSSIAN_LOG_PARTITION_METHODS = ("exact", "ais", "reverse_ais", "bar")

MOMENT_METHODS = {
    "exact": moments_exact,
    "tap": moments_tap,
    "bethe": moments_bethe,
    "mean_field": moments_mean_field,
    "mixture_mean_field": moments_mixture_mean_field,
    "sampling": moments_sampling,
}


def _lookup(table: dict, method: str, what: str):
    try:
        return table[method]
    except (KeyError, TypeError):
        raise ValueError(f"unknown {what} method {method!r}; choose one of {sorted(table)}") from None


def _accepts_rng(fn) -> bool:
    params = inspect.signature(fn).parameters.values()
    return any(p.name == "rng" or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def _categorical_log_partition_exact(params: CategoricalRBMParams, **options) -> LogPartitionEstimate:
    """:func:`pymc_rbm.categorical.log_partition_exact` as an estimate of ``log Z``, like the binary exact method's."""
    from pymc_rbm.categorical.exact import MAX_ENUMERATED_STATES, enumeration_plan
    from pymc_rbm.categorical.exact import log_partition_exact as categorical_exact

    options.pop("rng", None)  # exact: no randomness, as for binary units
    max_states = options.pop("max_states", MAX_ENUMERATED_STATES)
    plan = enumeration_plan(params, max_states)
    return LogPartitionEstimate(
        fingerprint=params.fingerprint(),
        log_z=categorical_exact(params, max_states=max_states, **options),
        method="exact",
        kind="exact",
        diagnostics={"n_states": plan.n_configurations, "enumerated_layer": plan.layer},
    )


def _gaussian_log_partition_exact(params, **options) -> LogPartitionEstimate:
    """:func:`pymc_rbm.gaussian.exact.log_partition_exact` (the hidden layer enumerated) as an estimate of ``log Z``."""
    from pymc_rbm.gaussian.exact import log_partition_exact as gaussian_exact

    options.pop("rng", None)
    return LogPartitionEstimate(
        fingerprint=params.fingerprint(),
        log_z=gaussian_exact(params, **options),
        method="exact",
        kind="exact",
        diagnostics={"n_states": 2**params.n_hidden, "enumerated_layer": "hidden"},
    )


#: The methods of :func:`log_partition` that take an RBM with ReLU hidden units (``"exact"`` enumerates its
#: visible layer; the annealing ones along the path of :mod:`pymc_rbm.estimators.path`, "ReLU hidden units").
RELU_LOG_PARTITION_METHODS = ("exact", "ais", "reverse_ais", "bar")


def _relu_log_partition_exact(params, **options) -> LogPartitionEstimate:
    """:func:`~pymc_rbm.enumeration.log_partition_exact` of a ReLU RBM (the visible layer enumerated)."""
    options.pop("rng", None)
    return log_partition_exact(params, **options)


def _other_units(params):
    """``(description, class name, methods, exact function)`` of a categorical, Gaussian-Bernoulli or ReLU-hidden
    model (or a path to one), None for binary units and spins."""
    from pymc_rbm.gaussian.params import GaussianRBMParams
    from pymc_rbm.params import ReLURBMParams

    if isinstance(params, ReLURBMParams):
        return ("ReLU-hidden", "ReLURBMParams", RELU_LOG_PARTITION_METHODS, _relu_log_partition_exact)

    model = params.models[0] if isinstance(params, AnnealingPath) else params
    if isinstance(model, CategoricalRBMParams):
        return ("categorical (Potts)", "CategoricalRBMParams", CATEGORICAL_LOG_PARTITION_METHODS,
                _categorical_log_partition_exact)
    if isinstance(model, GaussianRBMParams):
        return ("Gaussian-Bernoulli", "GaussianRBMParams", GAUSSIAN_LOG_PARTITION_METHODS,
                _gaussian_log_partition_exact)
    return None


def _other_units_method(units, method: str, backend: str):
    """The function of ``method`` for a model of :func:`_other_units` ``units``, or a ValueError naming the methods
    that take one."""
    kind, cls, methods, exact = units
    if backend != "numpy" or method not in methods:
        what = f'backend="{backend}"' if backend != "numpy" else f"method {method!r}"
        raise ValueError(
            f"log_partition: {what} does not support {kind} RBMs; for a {cls} "
            f"use one of {list(methods)} with the numpy backend"
        )
    return exact if method == "exact" else LOG_PARTITION_METHODS[method]


#: ``method="auto"`` enumerates where the enumeration is estimated to take at most this long (seconds).
AUTO_EXACT_SECONDS = 60.0

#: ``method="auto"`` runs the ladder estimator on binary RBMs with at most this many weights
#: (``n_visible * n_hidden``; its default run then takes at most about a minute), BAR above.
AUTO_LADDER_WEIGHTS = 16384

#: The options ``method="auto"`` passes on; a method's other options need that method named.
AUTO_OPTIONS = ("data", "progress")


def _auto_choice(params) -> tuple[str, str]:
    """The method ``method="auto"`` takes for ``params`` (``"exact"``, ``"ladder"`` or ``"bar"``), and why."""
    from pymc_rbm.enumeration import enumeration_cost

    if isinstance(params, AnnealingPath):
        return "bar", "an annealing path was given"
    n_v, n_h = params.n_visible, params.n_hidden
    if _other_units(params) is not None:  # categorical or Gaussian visible units
        return "exact", "the model's own enumeration decides (BAR where it is refused)"
    small = min(n_v, n_h)
    if small <= MAX_ENUMERATION_BITS:
        cost = enumeration_cost(small, max(n_v, n_h))
        fits = cost.available_bytes is None or cost.bytes <= cost.available_bytes
        if fits and (cost.seconds is None or cost.seconds <= AUTO_EXACT_SECONDS):
            return "exact", f"the smaller layer ({small} units) can be enumerated"
    if type(params) is RBMParams and n_v * n_h <= AUTO_LADDER_WEIGHTS:
        return "ladder", (f"{n_v} x {n_h} weights: a replica-exchange ladder from the uniform reference, which "
                          "holds every mode, runs in about a minute at most")
    return "bar", "too large for the ladder's default run; BAR is the most accurate per minute on large models"


def _auto(params, rng, options) -> LogPartitionEstimate:
    """``log_partition(params, "auto")``: exact, the ladder or BAR, the choice and its reason recorded."""
    unknown = sorted(set(options) - set(AUTO_OPTIONS))
    if unknown:
        raise TypeError(
            f'log_partition(method="auto") takes the options {list(AUTO_OPTIONS)}, got {unknown}; name the method '
            "whose options they are"
        )
    method, why = _auto_choice(params)
    if method == "exact":
        try:
            est = log_partition(params, "exact")
        except (EnumerationTooLarge, ValueError) as err:
            if _other_units(params) is None or "bar" not in _other_units(params)[2]:
                raise
            method, why = "bar", f"the enumeration was refused ({err})"
    if method != "exact":
        if method != "bar":
            options.pop("data", None)
        est = log_partition(params, method, rng=rng, **options)
    est.diagnostics["auto"] = {"method": method, "why": why}
    return est


def log_partition(
    params: RBMParams, method: str = "auto", *, rng=None, backend: str = "numpy", **options
) -> LogPartitionEstimate:
    """Estimate ``log Z`` of an RBM with the named method.

    Parameters
    ----------
    params : RBMParams, SpinRBMParams, CategoricalRBMParams or GaussianRBMParams (or an AnnealingPath for the
        annealing methods)
        A categorical (Potts) RBM takes the methods of
        ``CATEGORICAL_LOG_PARTITION_METHODS`` (``"exact"``, ``"ais"``,
        ``"reverse_ais"``, ``"bar"``), a Gaussian-Bernoulli RBM those of
        ``GAUSSIAN_LOG_PARTITION_METHODS`` (the same; ``"exact"`` enumerates its
        hidden layer), an RBM with ReLU hidden units (``ReLURBMParams``) those of
        ``RELU_LOG_PARTITION_METHODS`` (the same; ``"exact"`` enumerates its visible layer);
        the others refuse them with a ValueError.
    method : str, default "auto"
        One of the keys of ``LOG_PARTITION_METHODS``, or ``"auto"``: ``"exact"``
        where the smaller layer can be enumerated within :data:`AUTO_EXACT_SECONDS`,
        else ``"ladder"`` for binary RBMs of at most :data:`AUTO_LADDER_WEIGHTS`
        weights (stepping stones along a tuned replica-exchange ladder from the
        uniform reference, which holds every mode), else ``"bar"``. It takes
        only the options ``data`` (for BAR's base) and ``progress``; the choice
        and its reason are in ``diagnostics["auto"]``.
    rng : numpy.random.Generator or seed, optional
        Source of randomness for stochastic methods.
    backend : {"numpy", "jax"}, default "numpy"
        ``"jax"`` runs the method of :mod:`pymc_rbm.jax` instead (``"ais"``
        and ``"reverse_ais"``; needs the ``jax`` extra); docs/scaling.md
        says when it pays.
    **options
        Passed to the method's own function.

    Returns
    -------
    LogPartitionEstimate
    """
    if method == "auto" and backend == "numpy":
        return _auto(params, rng, options)
    units = _other_units(params)
    if units is not None:
        _lookup(LOG_PARTITION_METHODS, method, "log_partition")  # an unknown name is told as such first
        fn = _other_units_method(units, method, backend)
        if rng is not None and _accepts_rng(fn):
            options["rng"] = rng
        return fn(params, **options)
    if backend == "jax":
        try:
            from pymc_rbm.jax import LOG_PARTITION_METHODS as table
        except ImportError as err:
            raise ImportError(f'backend="jax" needs JAX: pip install "pymc-rbm[jax]" ({err})') from None
        fn = _lookup(table, method, 'backend="jax" log_partition')
    elif backend == "numpy":
        fn = _lookup(LOG_PARTITION_METHODS, method, "log_partition")
    else:
        raise ValueError(f'backend must be "numpy" or "jax", got {backend!r}')
    if rng is not None and _accepts_rng(fn):  # deterministic methods take no rng: ignore it for them
        options["rng"] = rng
    return fn(params, **options)


def moments(params: RBMParams, method: str = "exact", *, rng=None, **options) -> Moments:
    """``⟨v⟩``, ``⟨h⟩`` and ``⟨v hᵀ⟩`` of an RBM by the named method.

    Parameters
    ----------
    params : RBMParams
    method : str, default "exact"
        One of the keys of ``MOMENT_METHODS``: ``"exact"``, ``"sampling"``
        (:func:`moments_sampling`, stochastic, with standard errors),
        ``"tap"``, ``"bethe"``, ``"mean_field"``, ``"mixture_mean_field"``.
    rng : numpy.random.Generator or seed, optional
        Source of randomness for the stochastic method (ignored by the others).
    **options
        Passed to the method's own function.

    Returns
    -------
    Moments
        An :class:`ExactMoments` for ``"exact"``; for ``"sampling"`` a
        :class:`SampledMoments` (with ``stderr`` and ``diagnostics``); the
        approximations' own (``"tap"``: with ``diagnostics``).
    """
    fn = _lookup(MOMENT_METHODS, method, "moments")
    if rng is not None and "rng" in inspect.signature(fn).parameters:
        options["rng"] = rng
    return fn(params, **options)


def log_likelihood(params, data, log_z=None) -> np.ndarray:
    """``log p(v)`` of each row of ``data``, for an RBM of any layer type: the one entry point.

    Parameters
    ----------
    params : RBMParams, SpinRBMParams, CategoricalRBMParams, GaussianRBMParams or ReLURBMParams
    data : array_like of shape (..., n_visible)
        Checked for the model's visible layer (and not modified): values in
        {0, 1} (or booleans) for binary units; -1 and +1 for spins; integer
        labels in ``[0, n_states)``, or one-hot data of shape
        (..., n_visible, n_states), for categorical (Potts) units
        (:func:`~pymc_rbm.categorical.params.as_labels`); finite real numbers
        for Gaussian units.
    log_z : float or LogPartitionEstimate, optional
        ``log Z``; computed exactly when omitted (the smaller layer of a
        binary or spin RBM enumerated, the smaller of the hidden and visible
        configurations of a categorical one, the ``2**n_hidden`` mixture
        components of a Gaussian one). NaN and infinite values are refused
        (every log-likelihood would be NaN or infinite), and so is an
        estimate computed for another model (its fingerprint differs); a
        plain number is taken as it is.

    Returns
    -------
    ndarray of shape (...)
        ``-F(v) - log Z`` for each row, ``F`` the free energy of the model's
        layers; take ``.mean()`` for the average log-likelihood.

    Raises
    ------
    TypeError
        When ``params`` is none of the four parameter classes.
    ValueError
        For data that the visible layer cannot take (the message says what
        is wrong), a non-finite ``log_z``, or an estimate of another model.

    Notes
    -----
    :func:`pymc_rbm.gaussian.log_prob_exact` and
    :func:`pymc_rbm.categorical.log_prob_exact` (arguments ``(v, params)``)
    give the same numbers for their layer types.
    """
    from pymc_rbm.categorical.params import as_labels
    from pymc_rbm.categorical.params import free_energy as categorical_free_energy
    from pymc_rbm.gaussian.params import GaussianRBMParams
    from pymc_rbm.gaussian.params import free_energy as gaussian_free_energy
    from pymc_rbm.params import ReLURBMParams

    if isinstance(params, CategoricalRBMParams):
        minus_f = -categorical_free_energy(as_labels(data, params), params)
    elif isinstance(params, GaussianRBMParams):
        minus_f = -gaussian_free_energy(params.visible.check(data, params.n_visible), params)
    elif isinstance(params, (RBMParams, SpinRBMParams, ReLURBMParams)):
        minus_f = -free_energy(params.visible.check(data, params.n_visible), params)
    else:
        raise TypeError(
            "params must be an RBMParams, a SpinRBMParams, a CategoricalRBMParams or a GaussianRBMParams, got "
            f"{type(params).__name__}"
        )
    return minus_f - _checked_log_z(params, log_z)


def _checked_log_z(params, log_z) -> float:
    """``log Z`` of ``params`` for :func:`log_likelihood`: exact when None, else a checked number or estimate."""
    if log_z is None:
        if isinstance(params, SpinRBMParams):  # the binary form has log Z larger by log_offset
            return log_partition_exact(params.to_binary()).log_z - params.log_offset
        return log_partition(params, "exact").log_z
    if isinstance(log_z, LogPartitionEstimate):
        if log_z.fingerprint is not None and not hasattr(params, "fingerprint"):
            raise ValueError(
                f"this {log_z.method!r} estimate of log Z was computed for a model with a fingerprint, which a "
                f"{type(params).__name__} has not, so it cannot be checked against this one; pass log_z as a "
                "number (for spins, log Z of params.to_binary() minus params.log_offset)"
            )
        log_z.check_model(params)
        return check_real(log_z.log_z, f"log_z (the {log_z.method!r} estimate)")
    return check_real(log_z, "log_z")

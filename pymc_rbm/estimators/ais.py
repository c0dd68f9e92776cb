"""Annealed importance sampling (AIS) of ``log Z``, forward and reverse.

Salakhutdinov & Murray (2008, "On the quantitative analysis of deep belief
networks", §3-4) estimate the partition function of an RBM ``B`` by
annealing from a *base-rate model* ``A`` whose ``log Z_A`` is known in
closed form, through the intermediate distributions

    p_k(v) ∝ p*_k(v) = Σ_{h_A, h_B} exp(-(1 - β_k) E_A(v, h_A) - β_k E_B(v, h_B)),   0 = β_0 < ... < β_K = 1.

The path itself (:class:`~pymc_rbm.estimators.path.AnnealingPath`: the
intermediate RBMs, their transitions and unnormalised marginals, why the
transition is built from the path's own logits rather than from the kernels'
``beta``) is :mod:`pymc_rbm.estimators.path`, shared with BAR, RTS and SAMS;
the base-rate model is :mod:`~pymc_rbm.estimators.base_rate`, the schedules
:mod:`~pymc_rbm.estimators.schedules`, and the annealing run with the summary
of its weights :mod:`~pymc_rbm.estimators.annealing`.
"""

from __future__ import annotations

import time

import numpy as np

from pymc_rbm._runtime import Progress, StopOnInterrupt, single_blas_thread
from pymc_rbm.estimators.annealing import (
    TWO_CHAINS,
    anneal_in_threads,
    interrupted_estimate,
    weights_summary,
)
from pymc_rbm.estimators.coverage import with_coverage
from pymc_rbm.estimators.path import AnnealingPath, path_model_types
from pymc_rbm.estimators.path_arguments import check_states, single_model_path
from pymc_rbm.estimates import LogPartitionEstimate, fingerprint_of
from pymc_rbm.estimators.schedules import (
    PilotRun,
    check_schedule,
    default_schedule,
    pilot_run,
    thermodynamic_length,
)
from pymc_rbm.categorical.params import CategoricalRBMParams
from pymc_rbm.params import RBMParams
from pymc_rbm.validation import check_positive_int

__all__ = ["ais", "reverse_ais", "adaptive_schedule", "check_start_rows"]


#: β values at which :func:`ais` reports the variance of the partial log weights.
VARIANCE_CHECKPOINTS = (0.1, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 1.0)


def adaptive_schedule(
    path: AnnealingPath,
    rng,
    n_steps: int,
    *,
    n_chains: int = 100,
    n_pilot: int = 1000,
    floor: float = 0.1,
    bar=None,
) -> tuple[np.ndarray, PilotRun]:
    """A β schedule with equal thermodynamic length per step, from a short pilot run (stochastic).

    With steps ``δ_k`` the log weight of AIS has variance about
    ``Σ_k δ_k² I(β_k)`` (``I(β)``: the variance of ``d log f_β / dβ`` under
    ``p_β``), smallest for a given number of steps when every step adds the
    same variance, ``δ_k ∝ I(β_k)^{-1/2}``: equal steps of thermodynamic
    length. A pilot AIS run of ``n_pilot`` uniform steps measures the
    standard deviation of each step's log-weight increment
    (:func:`~pymc_rbm.estimators.schedules.pilot_run`); where the pilot's chains lag behind the path (slow
    mixing near β = 1 on large models) the increments are larger too, so
    the schedule also spends more steps there. A fraction ``floor`` of the
    steps is spread uniformly, so that no region is skipped because the
    pilot saw little there.

    Parameters
    ----------
    path : AnnealingPath
        One target model.
    rng : numpy.random.Generator
    n_steps : int
        Steps of the schedule.
    n_chains : int, default 100
        Chains of the pilot.
    n_pilot : int, default 1000
        Uniform steps of the pilot.
    floor : float in [0, 1), default 0.1
    bar : optional progress bar, advanced once per pilot step

    Returns
    -------
    betas : ndarray of shape (n_steps + 1,)
        Nondecreasing from exactly 0 to exactly 1.
    pilot : PilotRun
    """
    n_steps = check_positive_int(n_steps, "n_steps")
    n_pilot = check_positive_int(n_pilot, "n_pilot")
    if not 0.0 <= float(floor) < 1.0:
        raise ValueError(f"floor must lie in [0, 1), got {floor!r}")
    grid = np.linspace(0.0, 1.0, n_pilot + 1)
    pilot = pilot_run(path, rng, path.coefficients(grid), n_chains, bar)
    length = thermodynamic_length(pilot.sd_increment, n_pilot)
    if not np.isfinite(length[-1]) or length[-1] <= 0.0:
        return np.linspace(0.0, 1.0, n_steps + 1), pilot
    cum = (1.0 - floor) * length / length[-1] + floor * grid
    betas = np.interp(np.linspace(0.0, 1.0, n_steps + 1), cum, grid)
    betas[0], betas[-1] = 0.0, 1.0
    return np.maximum.accumulate(betas), pilot


def ais(
    params: RBMParams,
    *,
    n_chains: int = 100,
    schedule=None,
    n_steps: int | None = None,
    n_pilot: int = 1000,
    operator="gibbs",
    data=None,
    base=None,
    base_smoothing: float = 0.005,
    dtype=np.float64,
    rng=None,
    n_jobs: int = 1,
    progress: bool = False,
) -> LogPartitionEstimate:
    """Annealed importance sampling estimate of ``log Z`` (stochastic).

    Salakhutdinov & Murray (2008): ``n_chains`` independent runs start from
    exact draws of the base-rate model ``A`` and move through
    ``p_k ∝ p*_A^{1-β_k} p*_B^{β_k}`` (see the module docstring); run ``i``
    ends with the importance weight
    ``w_i = Π_k p*_k(x_k) / p*_{k-1}(x_k)``, an unbiased estimate of
    ``Z_B / Z_A``.

    Parameters
    ----------
    params : RBMParams, SpinRBMParams, CategoricalRBMParams, GaussianRBMParams, ReLURBMParams or AnnealingPath
        The target RBM ``B`` (binary units, ±1 spins, categorical or Gaussian
        visible units, ReLU hidden units: the path takes its layer types,
        :class:`~pymc_rbm.estimators.path.AnnealingPath`), or an
        annealing path to it built once
        (:func:`~pymc_rbm.estimators.annealing_path`), which then fixes the
        base distribution, ``dtype`` and ``operator``.
    n_chains : int, default 100
        Independent annealing runs, advanced together as one batch; at least
        2 (the standard error comes from the spread of their weights).
    schedule : None, "adaptive", int or array_like, default None
        The β values (:func:`~pymc_rbm.estimators.schedules.check_schedule`): ``None`` is Salakhutdinov &
        Murray's schedule (:func:`~pymc_rbm.estimators.schedules.default_schedule`) of ``n_steps`` steps;
        ``"adaptive"`` places ``n_steps`` steps at equal thermodynamic length
        measured by a pilot run of ``n_pilot`` steps (:func:`adaptive_schedule`;
        Notes say when it helps); an int ``K`` is ``K`` uniform
        steps; an array is used as given (0 first, 1 last, nondecreasing;
        repeated values add plain MCMC steps).
    n_steps : int, optional
        Steps of the ``None`` and ``"adaptive"`` schedules; default 14500.
    n_pilot : int, default 1000
        Steps of the pilot run of the ``"adaptive"`` schedule (its cost is
        added to the run's).
    operator : {"gibbs", "flip"} or float, default "gibbs"
        Update of the visible layer: block Gibbs, flip-the-state, or the
        mixture ``α T + (1 - α) G`` for a float ``α`` (for categorical units
        "flip" is Liu's Metropolised Gibbs sampler, :class:`~pymc_rbm.layers.Potts`).
        The hidden layer is always drawn from ``p_k(h | v)``.
    data : array_like of shape (n_samples, n_visible), optional
        Training data: gives the base-rate model its biases (smoothed means;
        for a categorical model, smoothed state frequencies of labels or one-hot rows).
    base : {None, "data", "mean_field", "target", "zero"} or array_like, optional
        The base-rate model (:func:`~pymc_rbm.estimators.base_rate.base_rate_vbias`): by default fitted to
        ``data`` when given, else to the model's naive mean-field solution.
    base_smoothing : float, default 0.005
        Smoothing of the data-based and mean-field base rates (:func:`~pymc_rbm.estimators.base_rate.base_rate_vbias`).
    dtype : numpy dtype, default float64
        Floating type of the sampling arithmetic; ``np.float32`` roughly halves
        the time on large models (log weights stay float64).
    rng : numpy.random.Generator or seed, optional
    n_jobs : int, default 1
        Threads to run the chains in. The chains are annealed in blocks of at
        most :data:`~pymc_rbm._runtime.CHAINS_PER_BLOCK`, each with its own
        generator spawned from ``rng``; the threads share out the blocks, so
        the estimate depends on the seed only, never on ``n_jobs``. Set it to
        the cores to use on large models (the timings are in docs/estimators.md).
    progress : bool, default False
        Show a progress bar on stderr.

    Returns
    -------
    LogPartitionEstimate
        ``log_z = log Z_A + log mean(w)``. ``stderr`` is the delta-method
        standard error ``sd(w) / (sqrt(n) mean(w))``; ``interval`` is
        ``log Z_A + log(mean(w) ± 3 sd(w)/sqrt(n))`` as Salakhutdinov & Murray
        report (the lower end is ``-inf`` when ``mean - 3 sd/√n <= 0``); where
        modes no chain visited would raise the estimate by more than that,
        ``stderr`` is that much and ``interval`` ``±3 stderr``
        (:func:`~pymc_rbm.estimators.coverage.with_coverage`).
        ``diagnostics``: ``log_weights`` (n_chains,), ``ess`` (effective
        sample size ``(Σw)² / Σw²``), ``log_z_base``, ``base_vbias``,
        ``n_steps``, ``n_chains``, ``operator`` (α), ``seconds``, ``samples``
        (final visible states, approximate draws from the target), ``betas``
        (the schedule), ``log_weight_variance`` (a pair: β values and the
        variance over chains of the partial log weights up to each, which
        shows where along the path the variance is added).

    Notes
    -----
    Ctrl-C stops the run with a warning and returns an estimate whose
    ``log_z`` is NaN (``diagnostics["interrupted"]``): chains stopped part of
    the way have weights for an intermediate model, not the target. Inside
    :func:`pymc_rbm.training.fit` the interrupt stops the training instead.

    ``E[w] = Z_B / Z_A`` exactly, so ``E[exp(log Ẑ)] = Z``, and by Jensen
    ``E[log Ẑ] <= log Z``: AIS is a stochastic *lower* bound of ``log Z``
    (it tends to overestimate the log-likelihood). A too-fast schedule shows
    as a small ``ess`` and an underestimate. :func:`reverse_ais` gives the
    matching upper bound.

    The defaults, with ``data=`` the training data, suit models of tens of
    hidden units. On large trained models the default schedule is too short
    for 0.1 nats: the chains lag behind the path near ``β = 1``, where the
    model's modes form, and ``diagnostics["log_weight_variance"]`` shows the
    variance of the log weights added there. That variance is not the
    discretisation of the path, and the flip-the-state operator does not
    reduce it; longer schedules do. So for large models use
    ``dtype=np.float32`` and ``n_jobs`` (the cores to use) and spend the
    time on steps rather than chains (e.g. ``n_steps=50000``).
    The ``"adaptive"`` schedule helps on models without such a slow region,
    but on trained MNIST models Salakhutdinov & Murray's (2008) schedule,
    dense near ``β = 1``, is better. See "Large models" in
    docs/estimators.md for the measurements.

    Examples
    --------
    >>> from pymc_rbm import RBMParams
    >>> from pymc_rbm.estimators import log_partition_exact
    >>> from pymc_rbm.estimators.ais import ais
    >>> p = RBMParams.random(12, 6, scale=0.5, rng=0)
    >>> est = ais(p, n_chains=50, schedule=1000, rng=1)
    >>> abs(est.log_z - log_partition_exact(p).log_z) < 5 * est.stderr + 0.02
    True
    """
    t0 = time.perf_counter()
    rng = np.random.default_rng(rng)
    n_chains = check_positive_int(n_chains, "n_chains", 2, TWO_CHAINS)
    n_jobs = check_positive_int(n_jobs, "n_jobs")
    adaptive = isinstance(schedule, str) and schedule == "adaptive"
    if isinstance(schedule, str) and not adaptive:
        raise ValueError(f'schedule must be None, "adaptive", an int or an array of β values, got {schedule!r}')
    if n_steps is not None and not (schedule is None or adaptive):
        raise ValueError("n_steps applies to schedule=None or 'adaptive' only; give the schedule itself instead")
    n_steps = 14500 if n_steps is None else check_positive_int(n_steps, "n_steps")
    with StopOnInterrupt() as guard:  # from here on Ctrl-C ends the run with a warning, not a traceback
        if not adaptive:
            betas = default_schedule(n_steps) if schedule is None else check_schedule(schedule)
        path = single_model_path(
            params, data, estimator=ais, base=base, base_smoothing=base_smoothing, dtype=dtype, operator=operator
        )
        log_z0 = path.log_z_base
        total = n_steps + n_pilot if adaptive else betas.size - 1
        with Progress(total, "AIS", progress) as bar, single_blas_thread():
            if adaptive:
                betas, _ = adaptive_schedule(path, rng, n_steps, n_chains=n_chains, n_pilot=n_pilot, bar=bar)
            v0 = path.sample_base(rng, n_chains)
            steps = np.unique(np.searchsorted(betas, VARIANCE_CHECKPOINTS).clip(1, betas.size - 1))
            run = anneal_in_threads(path, rng, v0, betas, bar, record=steps, n_jobs=n_jobs)
    if guard.interrupted:
        return interrupted_estimate("ais", t0, n_chains)
    log_z, se, interval, ess = weights_summary(run.log_w, log_z0)
    estimate = LogPartitionEstimate(
        fingerprint=fingerprint_of(params),
        log_z=log_z,
        method="ais",
        stderr=se,
        interval=interval,
        diagnostics={
            "log_weights": run.log_w,
            "ess": ess,
            "log_z_base": log_z0,
            "base_vbias": path.base_vbias,
            "n_steps": betas.size - 1,
            "n_chains": n_chains,
            "operator": path.alpha,
            "seconds": time.perf_counter() - t0,
            "samples": run.v.astype(np.int8) if path.visible_layer.discrete else run.v,
            "betas": betas,
            "log_weight_variance": (betas[steps], run.trace.var(axis=1)),
        },
    )
    return with_coverage(estimate, path.models[0], samples=run.v, log_weights=run.log_w)


def check_start_rows(n_rows: int, n_chains) -> int | None:
    """``n_chains`` of a reverse AIS run started from ``n_rows`` rows of data, checked.

    Parameters
    ----------
    n_rows : int
        Rows of the starting data.
    n_chains : int or None
        At least 2 chains; None (one chain per row) needs at least 2 rows:
        the standard error comes from the spread of the chains' weights.

    Returns
    -------
    int or None
    """
    if n_rows == 0:
        raise ValueError("data has no rows")
    if n_chains is None:
        if n_rows < 2:
            raise ValueError(
                f"n_chains=None starts one chain per row of data, which has {n_rows}; at least 2 are "
                f"needed{TWO_CHAINS}"
            )
        return None
    return check_positive_int(n_chains, "n_chains", 2, TWO_CHAINS)


def reverse_ais(
    params: RBMParams,
    data,
    *,
    n_chains: int | None = 100,
    schedule=None,
    operator="gibbs",
    base=None,
    base_data=None,
    base_smoothing: float = 0.005,
    dtype=np.float64,
    rng=None,
    n_jobs: int = 1,
    progress: bool = False,
) -> LogPartitionEstimate:
    """Reverse AIS: anneal from states of the target down to the base model (stochastic).

    The schedule is run backwards, ``β = 1 → 0``, starting from the rows of
    ``data``, with the same reversible transitions as :func:`ais`. Each run
    ends with ``w_i = Π_k p*_{k-1}(x_k) / p*_k(x_k)``; when the starting
    states are exact draws from the target, ``E[w] = Z_A / Z_B`` and

        log Ẑ = log Z_A - log mean(w)

    is a stochastic *upper* bound of ``log Z`` (``E[1/Ẑ] = 1/Z``, so
    ``E[log Ẑ] >= log Z`` by Jensen), the mirror image of forward AIS's lower
    bound: together they bracket ``log Z``.

    Started from *data* (Burda, Grosse & Salakhutdinov 2015, RAISE), the
    states are not draws from the model and no bound on ``log Z`` is
    guaranteed. What is bounded then is RAISE's log-likelihood:
    ``diagnostics["log_likelihood"]``, ``-F_B(v_i) - log Z_A + log w_i`` for
    each starting row, is a stochastic lower bound (in expectation) of
    ``log q(v_i)``, the likelihood under the annealing model ``q`` (the
    distribution of forward AIS's final state), which approaches ``p_B`` as the
    schedule gets slower: a conservative estimate of the test
    log-likelihood, where forward AIS gives an optimistic one.

    Parameters
    ----------
    params : RBMParams, SpinRBMParams, CategoricalRBMParams, GaussianRBMParams, ReLURBMParams or AnnealingPath
        The target, or a path to it (as in :func:`ais`; ``base_data`` then
        belongs to the path).
    data : array_like of shape (n_samples, n_visible)
        Starting states: exact draws from the model (e.g.
        :func:`~pymc_rbm.estimators.sample_visible_exact`, or long
        tempered chains) for the bound on ``log Z``, or data points for RAISE.
    n_chains : int or None, default 100
        How many rows to start from, drawn without replacement (with
        replacement when there are fewer rows); ``None``: every row once, in
        order.
    schedule, operator, base, base_smoothing, dtype, rng, n_jobs, progress
        As in :func:`ais`. The base-rate model is fitted to ``base_data`` when
        given (as ``ais(..., data=base_data)`` would), else to ``data``.

    Returns
    -------
    LogPartitionEstimate
        ``log_z`` as above; ``stderr`` by the delta method on ``mean(w)``;
        ``interval`` ``log Z_A - log(mean(w) ± 3 sd/√n)``; ``diagnostics``:
        ``log_weights``, ``ess``, ``log_z_base``, ``log_likelihood`` (RAISE,
        one per chain), ``mean_log_likelihood``, ``rows`` (the starting rows),
        ``n_steps``, ``n_chains``, ``seconds``.
    """
    t0 = time.perf_counter()
    rng = np.random.default_rng(rng)
    model = params.models[0] if isinstance(params, AnnealingPath) else params
    if not isinstance(model, path_model_types()):
        raise TypeError(
            f"params must be an RBMParams, SpinRBMParams, CategoricalRBMParams, GaussianRBMParams, ReLURBMParams or "
            f"an AnnealingPath, "
            f"got {type(params).__name__}"
        )
    x = check_states(data, model, name="data")
    n_chains = check_start_rows(x.shape[0], n_chains)
    n_jobs = check_positive_int(n_jobs, "n_jobs")
    if n_chains is None:
        rows = np.arange(x.shape[0])
    else:
        rows = rng.choice(x.shape[0], size=n_chains, replace=n_chains > x.shape[0])
    betas = check_schedule(schedule)
    path = single_model_path(
        params,
        x if base_data is None and not isinstance(params, AnnealingPath) else base_data,
        estimator=reverse_ais,
        data_name="base_data",
        base=base,
        base_smoothing=base_smoothing,
        dtype=dtype,
        operator=operator,
    )
    params = model
    log_z0 = path.log_z_base
    start = x[rows]
    with (
        StopOnInterrupt() as guard,
        Progress(betas.size - 1, "reverse AIS", progress) as bar,
        single_blas_thread(),
    ):
        log_w = anneal_in_threads(path, rng, start, betas[::-1].copy(), bar, n_jobs=n_jobs).log_w
    if guard.interrupted:
        return interrupted_estimate("reverse_ais", t0, rows.size)
    log_z, se, interval, ess = weights_summary(log_w, log_z0, sign=-1.0)
    from pymc_rbm.gaussian.params import GaussianRBMParams  # on call: pymc_rbm.gaussian imports the estimators

    if isinstance(params, CategoricalRBMParams):
        from pymc_rbm.categorical.params import free_energy
    elif isinstance(params, GaussianRBMParams):
        from pymc_rbm.gaussian.params import free_energy
    else:
        from pymc_rbm.energy import free_energy

    loglik = -free_energy(start, params) - log_z0 + log_w
    estimate = LogPartitionEstimate(
        fingerprint=fingerprint_of(params),
        log_z=log_z,
        method="reverse_ais",
        stderr=se,
        interval=interval,
        diagnostics={
            "log_weights": log_w,
            "ess": ess,
            "log_z_base": log_z0,
            "log_likelihood": loglik,
            "mean_log_likelihood": float(loglik.mean()),
            "rows": rows,
            "n_steps": betas.size - 1,
            "n_chains": rows.size,
            "operator": path.alpha,
            "seconds": time.perf_counter() - t0,
        },
    )
    return with_coverage(estimate, path.models[0], samples=start, log_weights=log_w)

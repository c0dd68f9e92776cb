"""Whether a stochastic estimate of log Z reached the modes of its model: checks that warn and say what to do.

AIS, BAR, RTS and SAMS anneal from a base that sits near one mode; when the chains never reach
another mode that carries mass, the estimate is too low by that mass, and its standard error, the
spread within the mode reached, cannot show it. :func:`check_coverage` compares an estimate with what
the model itself says, independently of the chains:

- **the naive mean-field bound**: every fixed point ``m`` of the naive mean-field equations gives a
  strict lower bound on ``log Z`` (:func:`~pymc_rbm.estimators.log_partition_mean_field`); an
  estimate below the best bound by more than its errors is wrong;
- **modes no chain visited**: the fixed points reached from several starts are the model's modes as
  mean field sees them; those reached from the estimator's own final states are the modes its chains
  visited. A mode that no chain visited but whose bound ``b`` comes within a few nats of the estimate
  holds at least ``exp(b - log Ẑ)`` of ``Ẑ`` that the estimate left out;
- **the importance weights** of annealing runs: an effective sample size that is a small fraction of
  the runs, or a single distinct weight, means the standard error is not measured.

Each failed check is a ``RuntimeWarning`` naming what to do (most often ``method="ladder"``, whose
uniform reference holds every mode), and every check's outcome is recorded in
``estimate.diagnostics["checks"]``.
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np

from pymc_rbm.estimators.mean_field import naive_mean_field
from pymc_rbm.estimates import LogPartitionEstimate
from pymc_rbm.layers import BERNOULLI
from pymc_rbm.params import RBMParams

__all__ = ["MISSED_MASS_NATS", "MIN_WEIGHT_ESS", "check_coverage", "mean_field_modes", "top_states", "with_coverage"]

#: An estimate is flagged when the modes its chains missed would raise it by more than this (nats).
MISSED_MASS_NATS = 0.05

#: The effective sample size of the importance weights, as a fraction of the runs, below which
#: the standard error is flagged as unmeasured.
MIN_WEIGHT_ESS = 0.05

#: Fixed points whose visible magnetisations differ by at most this much in every unit are one mode.
SAME_MODE = 0.5

#: Random starts of the mean-field iteration (hidden states of densities spread over (0, 1)).
N_STARTS = 32

#: The most final states of the chains taken as starts (their fixed points are the modes visited).
MAX_SAMPLE_STARTS = 256


def mean_field_modes(params: RBMParams, samples=None, *, n_starts: int = N_STARTS):
    """Distinct naive mean-field fixed points of a binary RBM, their bounds, and which ``samples`` reach.

    Parameters
    ----------
    params : RBMParams
    samples : array_like of shape (n_samples, n_visible), optional
        Binary states (an estimator's final states); each is a start whose fixed point counts as visited.
    n_starts : int, default 32
        Starts of the model's own (:func:`~pymc_rbm.estimators.tap_equations.tap_starts`, a fixed seed).

    Returns
    -------
    m_v : ndarray of shape (n_modes, n_visible)
        The distinct fixed points, best bound first.
    bound : ndarray of shape (n_modes,)
        Their naive mean-field lower bounds on ``log Z``.
    visited : ndarray of bool of shape (n_modes,)
        Whether some sample's fixed point is that mode.
    found : ndarray of bool of shape (n_modes,)
        Whether one of the model's own starts reached that mode.
    """
    n_samples = 0 if samples is None else min(len(samples), MAX_SAMPLE_STARTS)
    data = None if samples is None else np.asarray(samples, dtype=np.float64)[:n_samples]
    sol, bound, _, _ = naive_mean_field(params, n_starts=n_starts, data=data, n_data_starts=n_samples, damping=0.0,
                                        tol=1e-9, max_iter=2000, temperatures=None, rng=0)
    order = np.argsort(-bound, kind="stable")
    keep: list[int] = []
    of: dict[int, int] = {}
    for i in order:
        match = next((k for k, j in enumerate(keep) if np.abs(sol.m_v[i] - sol.m_v[j]).max() <= SAME_MODE), None)
        if match is None:
            keep.append(int(i))
            match = len(keep) - 1
        of[int(i)] = match
    visited = np.zeros(len(keep), dtype=bool)
    for i in range(n_starts, n_starts + n_samples):
        visited[of[i]] = True
    found = np.zeros(len(keep), dtype=bool)
    for i in range(n_starts):
        found[of[i]] = True
    return sol.m_v[keep], bound[keep], visited, found


def check_coverage(estimate: LogPartitionEstimate, params, *, samples=None, log_weights=None,
                   stacklevel: int = 3) -> dict:
    """Check a stochastic estimate of ``log Z`` against the model's mean-field modes and its weights.

    Records the outcome in ``estimate.diagnostics["checks"]`` (and returns it) and warns once per failed
    check (module docstring).

    Parameters
    ----------
    estimate : LogPartitionEstimate
    params : RBMParams or other
        The model; the mean-field checks apply to binary RBMs only (others get the weight check alone).
    samples : array_like of shape (n, n_visible), optional
        The chains' final states (approximate draws of the model).
    log_weights : array_like of shape (n,), optional
        Log importance weights of annealing runs.
    stacklevel : int, default 3

    Returns
    -------
    dict
        ``weight_ess``, ``distinct_weights``, ``mean_field_bound``, ``modes`` (distinct fixed points),
        ``unvisited_modes`` (those no sample reached), ``missed_nats`` (how much the unvisited modes'
        bounds would add to the estimate, at least), ``lacking_nats`` (the larger of how far the estimate
        lies below the bound and ``missed_nats``), ``warnings`` (the messages).
    """
    checks: dict = {"warnings": []}
    log_z, se = float(estimate.log_z), float(estimate.stderr)
    method = estimate.method
    if not np.isfinite(log_z):
        estimate.diagnostics["checks"] = checks
        return checks
    if log_weights is not None:
        lw = np.asarray(log_weights, dtype=np.float64).ravel()
        w = np.exp(lw - lw.max())
        ess = float(w.sum() ** 2 / (w**2).sum())
        distinct = int(np.unique(lw).size)
        checks.update(weight_ess=ess, distinct_weights=distinct)
        if distinct <= 1:
            checks["warnings"].append(
                f"{method}: all {lw.size} runs have the same log weight, so the standard error (0) measures "
                "nothing: the runs never moved from where they started; use more runs (n_chains) or "
                'method="ladder"'
            )
        elif ess < max(2.0, MIN_WEIGHT_ESS * lw.size):
            checks["warnings"].append(
                f"{method}: the effective sample size of the importance weights is {ess:.1f} of {lw.size} runs: "
                "a few runs carry the estimate, and its standard error is unreliable; use longer schedules "
                '(n_steps) or method="ladder"'
            )
    if isinstance(params, RBMParams) and params.visible == BERNOULLI and params.hidden == BERNOULLI:
        modes, bounds, visited, found = mean_field_modes(params, samples)
        best = float(bounds.max())
        checks.update(mean_field_bound=best, modes=int(bounds.size))
        if log_z < best:
            checks["lacking_nats"] = best - log_z
        if log_z < best - 3.0 * se - 1e-9:
            checks["warnings"].append(
                f"{method}: the estimate {log_z:.4f} lies below the naive mean-field lower bound {best:.4f} on "
                f"log Z by {best - log_z:.3g} nats ({(best - log_z) / se if se else np.inf:.1f} standard errors): "
                'it is wrong; use method="ladder" (or a longer run)'
            )
        if samples is not None:
            missed = ~visited & (bounds > log_z - 10.0)
            missed_nats = float(np.log1p(np.exp(bounds[missed] - log_z).sum())) if missed.any() else 0.0
            # the modes the model's own starts reached are a sample of its modes independent of the chains: the
            # share of their mass (as their bounds weigh it) that no chain visited is the share the estimate lacks;
            # only where their bounds come within the window of the estimate: bounds far below it say the
            # mean-field family is loose there (a trained MNIST RBM: 30+ nats), and then their ratios say nothing
            # of the modes' masses
            near = found & (bounds > log_z - 10.0)
            share = 0.0
            if near.any():
                w = np.exp(bounds[near] - bounds[near].max())
                share = float(w[~visited[near]].sum() / w.sum())
            missed_nats = max(missed_nats, float(-np.log1p(-min(share, 1.0 - 1e-12))))
            missed |= near & ~visited
            checks.update(unvisited_modes=int((~visited).sum()), missed_share=share, missed_nats=missed_nats)
            checks["lacking_nats"] = max(checks.get("lacking_nats", 0.0), missed_nats)
            if missed_nats > max(MISSED_MASS_NATS, 3.0 * se):
                checks["warnings"].append(
                    f"{method}: {int(missed.sum())} mode(s) of the model that no chain visited (naive mean-field "
                    f"fixed points) hold mass that would raise the estimate by about {missed_nats:.3g} nats; the "
                    'chains missed modes and the standard error cannot show it: use method="ladder"'
                    + (" or data= (training data for the base)" if method in ("ais", "bar") else "")
                )
    for message in checks["warnings"]:
        warnings.warn(message, RuntimeWarning, stacklevel=stacklevel)
    estimate.diagnostics["checks"] = checks
    return checks


def with_coverage(estimate: LogPartitionEstimate, params, *, samples=None, log_weights=None,
                  stacklevel: int = 4) -> LogPartitionEstimate:
    """:func:`check_coverage`, and the estimate with a standard error that covers what the checks found missing.

    Where the estimate lies below the mean-field bound, or modes no chain visited would raise it, by
    ``lacking_nats`` more than its standard error, the standard error becomes ``lacking_nats``: the
    spread of the chains measures the mode they reached, not the mass they missed, and an error bar that
    leaves the missed mass out is a confident wrong answer. This holds below the level at which
    :func:`check_coverage` warns, too: an estimate one nat low with a standard error of 0.4 is within three
    standard errors of the truth only once the missing nat counts. The chains' own standard error stays in
    ``diagnostics["stderr_chains"]`` (and the rule that set it, if any, in ``"stderr_rule_chains"``), and
    ``diagnostics["stderr_rule"]`` becomes ``"coverage"``.

    Parameters
    ----------
    estimate, params, samples, log_weights, stacklevel
        As for :func:`check_coverage`.

    Returns
    -------
    LogPartitionEstimate
        ``estimate`` itself when nothing is missing; otherwise a copy with ``stderr`` and ``interval``
        (``±3 stderr``) widened.
    """
    checks = check_coverage(estimate, params, samples=samples, log_weights=log_weights, stacklevel=stacklevel)
    lacking = float(checks.get("lacking_nats", 0.0))
    if not lacking > estimate.stderr:
        return estimate
    diagnostics = {**estimate.diagnostics, "stderr_chains": estimate.stderr, "stderr_rule": "coverage"}
    if "stderr_rule" in estimate.diagnostics:
        diagnostics["stderr_rule_chains"] = estimate.diagnostics["stderr_rule"]
    return replace(estimate, stderr=lacking, interval=(estimate.log_z - 3.0 * lacking, estimate.log_z + 3.0 * lacking),
                   diagnostics=diagnostics)


def top_states(path, ladder):
    """The starting states of a tempered ladder (RTS, SAMS) at the labels of the model (``s = 1``), or None.

    Parameters
    ----------
    path : AnnealingPath
    ladder : Ladder
        Of :mod:`pymc_rbm.estimators.ladder`, with ``states`` and ``labels``.

    Returns
    -------
    ndarray of shape (n, n_visible) or None
        None when no state starts at the model. (Only the models of binary RBMs read them:
        :func:`check_coverage`.)
    """
    at_top = np.isin(ladder.labels, np.flatnonzero(ladder.s >= 1.0))
    return ladder.states[at_top] if at_top.any() else None

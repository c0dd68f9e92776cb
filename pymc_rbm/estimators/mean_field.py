"""Naive and mixture mean field: variational lower bounds on ``log Z`` (Lawrence, Bishop & Jordan 1998).

Any distribution ``Q`` gives ``log Z ≥ Σ_S Q(S)(-E(S)) + H(Q)`` (Lawrence,
Bishop & Jordan 1998, eq. 10, 13). With a factorized ``Q`` this is naive
mean field; Lawrence, Bishop & Jordan (1998, after Jaakkola & Jordan 1997)
take a mixture
``Q = Σ_l α_l Q_l`` of ``L`` factorized components, whose bound gains the
mutual information ``I(l; S)`` between component and state (eq. 23). That is
intractable; with factorized *smoothing distributions* ``R(S | l)`` and
parameters ``λ_l`` it is bounded below (eqs. 25-27) by::

    I_λ = Σ_l α_l ⟨ln R(S|l)⟩_l - Σ_l α_l ln α_l - Σ_l λ_l Σ_{l'} α_{l'} ⟨R(S|l)⟩_{l'} + Σ_l α_l ln λ_l + 1

so the bound ``L_mix = Σ_l α_l [⟨-E⟩_l + H(Q_l)] + I_λ`` is computable in
``O(L n² + L² n)``. Every parameter (component magnetizations ``m_l``,
mixing weights ``α``, smoothing ``R`` and ``λ``) has a closed-form
coordinate-wise maximizer, so the optimization is a coordinate ascent that
never decreases the bound; and *any* parameter values give a valid bound,
converged or not. The temperature ``T`` is annealed (``E → E / T``) from a
high value down to 1, as in the paper (T = 60 → 1 in 8 steps).

Models:

- :class:`~pymc_rbm.estimators.boltzmann_machine.BoltzmannMachine`: a general Boltzmann machine over ±1 spins,
  ``E(s) = -½ sᵀJs - b·s`` (symmetric ``J``, zero diagonal), the setting of
  Lawrence, Bishop & Jordan (1998), with exact enumeration for ``n ≤ 20``;
- :class:`~pymc_rbm.params.RBMParams`: naive mean field by alternating
  exact layer updates (the order-1 iteration of :mod:`~pymc_rbm.estimators.tap_equations`);
  mixture mean field on the spin form (:meth:`RBMParams.to_spin`), an RBM
  being a Boltzmann machine with bipartite couplings; ``log_offset`` is added back.

Moments are the derivatives of the bound (Lawrence, Bishop & Jordan 1998, eq. 20, 28-29):
``⟨s_i s_j⟩ ≈ Σ_l α_l m_li m_lj``.

This module holds naive mean field for an RBM; the mixture, and naive mean field for a
Boltzmann machine (its one-component case), are :mod:`~pymc_rbm.estimators.mixture_mean_field`.
"""

from __future__ import annotations

import numpy as np

from pymc_rbm.estimates import LogPartitionEstimate, Moments, fingerprint_of
from pymc_rbm.estimators.tap_equations import solve_tap, tap_fixed_point, tap_free_energy
from pymc_rbm.params import RBMParams

__all__ = [
    "annealing_schedule",
    "check_temperatures",
    "check_rbm_params",
    "naive_mean_field",
    "log_partition_mean_field",
    "moments_mean_field",
    "solution_gap",
]


def annealing_schedule(t_start: float = 60.0, n_steps: int = 8) -> np.ndarray:
    """``n_steps`` temperatures from ``t_start`` down to 1, geometrically spaced.

    Lawrence, Bishop & Jordan (1998) anneal from 60 to 1 in 8 steps.
    """
    if n_steps < 1 or t_start < 1.0:
        raise ValueError(f"need n_steps >= 1 and t_start >= 1, got {n_steps}, {t_start}")
    if n_steps == 1:
        return np.array([1.0])
    return t_start ** np.linspace(1.0, 0.0, n_steps)


def check_temperatures(temperatures) -> np.ndarray:
    """A validated annealing schedule: :func:`annealing_schedule` for None, else positive and ending at 1."""
    t = np.atleast_1d(np.asarray(annealing_schedule() if temperatures is None else temperatures, dtype=np.float64))
    if t.ndim != 1 or not np.all(np.isfinite(t)) or np.any(t <= 0.0) or t[-1] != 1.0:
        raise ValueError(f"temperatures must be positive and end at 1, got {t}")
    return t


def check_rbm_params(params) -> RBMParams:
    """``params`` in float64, or a TypeError unless it is an RBMParams."""
    if not isinstance(params, RBMParams):
        raise TypeError(f"params must be an RBMParams, got {type(params).__name__}")
    return params.astype(np.float64)


def naive_mean_field(params, *, n_starts, data, n_data_starts, damping, tol, max_iter, temperatures, rng):
    """The naive mean-field fixed points of an RBM from several starts, annealed, with their bounds.

    The order-1 iteration of :func:`~pymc_rbm.estimators.tap_equations.solve_tap` (alternating exact
    layer updates) at the first temperature, then continued from its fixed points at each
    further one (:func:`check_temperatures`). Options as in :func:`log_partition_mean_field`.

    Returns
    -------
    sol : TAPSolution
        The fixed points at ``T = 1``.
    bound : ndarray of shape (n_starts,)
        The naive mean-field lower bound on ``log Z`` of each.
    best : int
        The start with the largest bound.
    iterations : ndarray of int of shape (n_starts,)
        Iterations summed over the temperatures.
    """
    params = check_rbm_params(params)
    temps = check_temperatures([1.0] if temperatures is None else temperatures)
    sol, _ = solve_tap(
        RBMParams(params.W / temps[0], params.vbias / temps[0], params.hbias / temps[0]),
        order=1,
        n_starts=n_starts,
        data=data,
        n_data_starts=n_data_starts,
        update="newton",
        damping=damping,
        tol=tol,
        max_iter=max_iter,
        rng=rng,
    )
    iterations = sol.iterations.copy()
    for T in temps[1:]:
        scaled = RBMParams(params.W / T, params.vbias / T, params.hbias / T)
        sol = tap_fixed_point(scaled, sol.m_v, sol.m_h, order=1, damping=damping, tol=tol, max_iter=max_iter)
        iterations += sol.iterations
    bound = tap_free_energy(params, sol.m_v, sol.m_h, order=1)
    best = int(np.argmax(bound))
    return sol, bound, best, iterations


def log_partition_mean_field(
    params: RBMParams,
    *,
    n_starts: int = 8,
    data=None,
    n_data_starts: int = 16,
    damping: float = 0.0,
    tol: float = 1e-9,
    max_iter: int = 2000,
    temperatures=None,
    rng=None,
) -> LogPartitionEstimate:
    """Naive mean-field lower bound on ``log Z`` of an RBM.

    ``log Z ≥ S(m_v) + S(m_h) + vbias·m_v + hbias·m_h + m_vᵀ W m_h`` for any
    magnetizations (the factorized variational bound, Lawrence, Bishop & Jordan 1998, eq. 16). The
    layers are updated alternately, ``m_h = sigmoid(hbias + m_v·W)``,
    ``m_v = sigmoid(vbias + W·m_h)``: each is the exact maximizer over its
    layer, so the bound increases monotonically (damping is allowed but not
    needed). The largest bound over the starts is returned.

    Parameters
    ----------
    params : RBMParams
    n_starts : int, default 8
        ``sigmoid(vbias)`` and ``n_starts - 1`` random binary hidden states
        (see :func:`~pymc_rbm.estimators.tap_equations.tap_starts`).
    data : array_like of shape (n_samples, n_visible), optional
        Binary rows used as further starts.
    n_data_starts : int, default 16
    damping : float in [0, 1), default 0
    tol : float, default 1e-9
    max_iter : int, default 2000
        Per temperature.
    temperatures : array_like, optional
        Annealing schedule ending at 1 (the model at ``T`` has energy ``E / T``);
        default none.
    rng : numpy.random.Generator or seed, optional
        Default a fixed seed (deterministic).

    Returns
    -------
    LogPartitionEstimate
        ``log_z`` is a lower bound, whether converged or not.
        ``diagnostics``: ``iterations``, ``residual``, ``converged``,
        ``n_starts``, ``n_converged``, ``values``, ``bound`` (True), ``m_v``, ``m_h``, and ``gap``: how far, in
        nats of the bound, the best fixed point lies above the next one that differs from it (some unit's
        magnetisation by more than 0.5); ``inf`` when every start reached the best one. A small gap says that
        the model has several solutions of about equal weight, of which ``m_v`` stands for one.

    Examples
    --------
    >>> from pymc_rbm import RBMParams
    >>> from pymc_rbm.estimators import log_partition_exact
    >>> p = RBMParams.random(6, 4, rng=0)
    >>> bool(log_partition_mean_field(p).log_z <= log_partition_exact(p).log_z)
    True
    """
    sol, bound, best, iterations = naive_mean_field(
        params,
        n_starts=n_starts,
        data=data,
        n_data_starts=n_data_starts,
        damping=damping,
        tol=tol,
        max_iter=max_iter,
        temperatures=temperatures,
        rng=rng,
    )
    return LogPartitionEstimate(
        fingerprint=fingerprint_of(params),
        log_z=float(bound[best]),
        method="mean_field",
        kind="lower bound",
        diagnostics={
            "iterations": int(iterations[best]),
            "residual": float(sol.residual[best]),
            "converged": bool(sol.converged[best]),
            "n_starts": int(bound.size),
            "n_converged": int(sol.converged.sum()),
            "best_start": best,
            "values": bound,
            "bound": True,
            "m_v": sol.m_v[best].copy(),
            "m_h": sol.m_h[best].copy(),
            "gap": solution_gap(sol.m_v, bound, best),
        },
    )


def solution_gap(m_v: np.ndarray, bound: np.ndarray, best: int) -> float:
    """Nats of ``bound`` between fixed point ``best`` and the best other one whose ``m_v`` differs by more than 0.5.

    Parameters
    ----------
    m_v : ndarray of shape (n_starts, n_visible)
    bound : ndarray of shape (n_starts,)
    best : int

    Returns
    -------
    float
        ``inf`` when no start reached another fixed point.
    """
    other = np.abs(m_v - m_v[best]).max(axis=1) > 0.5
    return float(bound[best] - bound[other].max()) if other.any() else np.inf


def moments_mean_field(params: RBMParams, **options) -> Moments:
    """``⟨v⟩ ≈ m_v``, ``⟨h⟩ ≈ m_h``, ``⟨v hᵀ⟩ ≈ m_v m_hᵀ`` at the best naive mean-field solution.

    Options as in :func:`log_partition_mean_field`.
    """
    est = log_partition_mean_field(params, **options)
    mv, mh = est.diagnostics["m_v"], est.diagnostics["m_h"]
    return Moments(v=mv, h=mh, vh=np.outer(mv, mh))

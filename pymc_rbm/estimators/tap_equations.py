"""The TAP equations of a binary RBM: the expanded Gibbs free energy, its stationarity, and their fixed points.

The free energy ``-Γ(m_v, m_h)`` to order 1, 2 or 3 in the couplings (the
formula is in :mod:`~pymc_rbm.estimators.tap`), the pair moments that are its
derivative in ``W``, the damped fixed point iteration of the stationarity
equations from a batch of starts (order 1 is naive mean field), and the starts
themselves. :mod:`~pymc_rbm.estimators.tap` builds the estimator from them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.special import entr, expit

from pymc_rbm._runtime import on_one_blas_thread
from pymc_rbm.estimators.damping import AdaptiveDamping
from pymc_rbm.params import RBMParams
from pymc_rbm.validation import check_binary, check_real

__all__ = [
    "TAPSolution",
    "check_order",
    "tap_free_energy",
    "tap_pair_moments",
    "tap_fixed_point",
    "tap_starts",
    "solve_tap",
]


class TAPSolution(NamedTuple):
    """Fixed points of the TAP (or naive mean-field) equations for a batch of starts.

    Attributes
    ----------
    m_v : ndarray of shape (n_starts, n_visible)
        Visible magnetizations ``⟨v_i⟩`` in [0, 1].
    m_h : ndarray of shape (n_starts, n_hidden)
        Hidden magnetizations ``⟨h_j⟩``.
    neg_gibbs : ndarray of shape (n_starts,)
        ``-Γ(m_v, m_h)`` at the returned points: the ``log Z`` estimates.
    iterations : ndarray of int of shape (n_starts,)
        Iterations each start ran until it converged (or ``max_iter``).
    residual : ndarray of shape (n_starts,)
        ``max |m_new - m_old|`` of the undamped update at the last iteration.
    converged : ndarray of bool of shape (n_starts,)
        ``residual < tol``.
    damping : ndarray of shape (n_starts,)
        The damping each start ended with (larger than the initial one where
        the adaptive damping found an oscillation).
    """

    m_v: np.ndarray
    m_h: np.ndarray
    neg_gibbs: np.ndarray
    iterations: np.ndarray
    residual: np.ndarray
    converged: np.ndarray
    damping: np.ndarray


def check_order(order: int, allowed=(1, 2, 3)) -> int:
    """``order`` as an int, or a ValueError unless it is one of ``allowed``."""
    if order not in allowed:
        raise ValueError(f"order must be one of {allowed}, got {order!r}")
    return int(order)


def _powers(params: RBMParams, order: int):
    """``W**2`` and ``W**3`` where the order needs them (None otherwise)."""
    W = params.W
    W2 = W * W if order >= 2 else None
    W3 = W2 * W if order >= 3 else None
    return W2, W3


def _var(m):
    return m - m * m


def _skew(m):
    """``(m - m²)(½ - m)``: the third-order factor of one unit."""
    return (m - m * m) * (0.5 - m)


def _skew_slope(m):
    """Derivative of :func:`_skew`: ``2 (½ - m)² - (m - m²)``."""
    return 2.0 * (0.5 - m) ** 2 - (m - m * m)


def _entropy(m):
    """Binary entropy summed over the last axis (0 log 0 = 0)."""
    return (entr(m) + entr(1.0 - m)).sum(axis=-1)


@on_one_blas_thread
def tap_free_energy(params: RBMParams, m_v, m_h, *, order: int = 2) -> np.ndarray:
    """``-Γ(m_v, m_h)``, the TAP expansion of ``log Z`` at given magnetizations.

    Parameters
    ----------
    params : RBMParams
    m_v : array_like of shape (..., n_visible)
        Visible magnetizations in [0, 1].
    m_h : array_like of shape (..., n_hidden)
        Hidden magnetizations in [0, 1].
    order : {1, 2, 3}, default 2
        Order of the expansion in ``W``; 1 is the naive mean-field value,
        a lower bound on ``log Z`` at any ``(m_v, m_h)``.

    Returns
    -------
    ndarray of shape (...)
        ``-Γ``; at a fixed point of :func:`tap_fixed_point` this is the TAP
        estimate of ``log Z`` (the Gibbs free energy is ``Γ``).
    """
    order = check_order(order)
    m_v = np.asarray(m_v, dtype=np.float64)
    m_h = np.asarray(m_h, dtype=np.float64)
    W2, W3 = _powers(params, order)
    out = _entropy(m_v) + _entropy(m_h) + m_v @ params.vbias + m_h @ params.hbias
    out = out + ((m_v @ params.W) * m_h).sum(axis=-1)
    if order >= 2:
        out = out + 0.5 * ((_var(m_v) @ W2) * _var(m_h)).sum(axis=-1)
    if order >= 3:
        out = out + (2.0 / 3.0) * ((_skew(m_v) @ W3) * _skew(m_h)).sum(axis=-1)
    return out


@on_one_blas_thread
def tap_pair_moments(W, mv, mh, order: int) -> np.ndarray:
    """``⟨v hᵀ⟩`` at a TAP fixed point: the derivative of ``-Γ`` with respect to ``W``."""
    vh = np.outer(mv, mh) + W * np.outer(_var(mv), _var(mh))
    if order >= 3:
        vh += 2.0 * W * W * np.outer(_skew(mv), _skew(mh))
    return vh


class _Layer(NamedTuple):
    """The fields one layer sees from the other: ``logit(m) = c - κ (m - ½) + c3 p'(m)`` at stationarity."""

    c: np.ndarray  # bias + mean input
    kappa: np.ndarray | None  # Σ W² (m' - m'²) over the other layer (order >= 2)
    c3: np.ndarray | None  # ⅔ Σ W³ p(m') over the other layer (order 3)


def _layer(bias, W, W2, W3, m_other, order) -> _Layer:
    """Fields on a layer whose couplings to the other layer are ``W`` (other units on the rows)."""
    return _Layer(
        c=bias + m_other @ W,
        kappa=_var(m_other) @ W2 if order >= 2 else None,
        c3=(2.0 / 3.0) * (_skew(m_other) @ W3) if order >= 3 else None,
    )


def _stationarity_field(f: _Layer, m):
    """``c - κ (m - ½) + c3 p'(m)``: the TAP field of the layer at its own magnetizations ``m``."""
    x = f.c.copy()
    if f.kappa is not None:
        x -= f.kappa * (m - 0.5)
    if f.c3 is not None:
        x += f.c3 * _skew_slope(m)
    return x


def _solve_layer(f: _Layer, m0, *, tol: float = 1e-13, max_newton: int = 60):
    """The magnetizations ``m`` with ``logit(m) = c - κ (m - ½) + c3 p'(m)``, unit by unit, in parallel.

    Safeguarded Newton in ``y = logit(m)``, started at ``logit(m0)``, inside
    the bracket ``c ± (κ + |c3|) / 2`` that must hold the root (``|m - ½| ≤ ½``
    and ``|p'(m)| ≤ ½``); a Newton step leaving the bracket is replaced by
    bisection. For order <= 2 the left side minus the right side increases
    with ``y``, so the root is unique: it is the exact minimizer of the
    (convex) Gibbs free energy over this layer with the other layer fixed.
    """
    if f.kappa is None:
        return expit(f.c)
    half = 0.5 * f.kappa if f.c3 is None else 0.5 * (f.kappa + np.abs(f.c3))
    lo, hi = f.c - half, f.c + half
    with np.errstate(divide="ignore"):
        y = np.clip(np.log(m0) - np.log1p(-m0), lo, hi)
    for _ in range(max_newton):
        m = expit(y)
        phi = y - _stationarity_field(f, m)
        slope = 1.0 + f.kappa * m * (1.0 - m)
        if f.c3 is not None:
            slope -= f.c3 * (6.0 * m - 3.0) * m * (1.0 - m)
        neg = phi < 0.0
        lo = np.where(neg, y, lo)
        hi = np.where(neg, hi, y)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = phi / slope
        y_new = y - step
        bad = ~((y_new >= lo) & (y_new <= hi)) | ~(slope > 0.0)
        y_new = np.where(bad, 0.5 * (lo + hi), y_new)
        done = np.abs(y_new - y) <= tol * (1.0 + np.abs(y))
        y = y_new
        if done.all():
            break
    return expit(y)


@on_one_blas_thread
def tap_fixed_point(
    params: RBMParams,
    m_v,
    m_h=None,
    *,
    order: int = 2,
    update: str = "newton",
    damping: float | None = None,
    tol: float = 1e-8,
    max_iter: int = 2000,
    adaptive: bool = True,
) -> TAPSolution:
    """Iterate the TAP equations from a batch of starts to their fixed points.

    One iteration updates the hidden layer from the visible one, then the
    visible layer from the new hidden one, each damped:
    ``m ← damping · m_old + (1 - damping) · m_new``. Starts that have
    converged are frozen; the others go on until ``max_iter``.

    Two updates of a layer are offered. ``"fixed_point"`` is the iteration of
    Gabrié et al. (Zhang 2016, eq. 2.4.7-2.4.8): the right-hand side is
    evaluated at the layer's old magnetizations, ``m_h ← sigmoid(b + m_v·W -
    (m_h_old - ½)((m_v - m_v²)·W²))``; its self-coupling term makes it
    oscillate on strongly coupled models (the MNIST RBMs), which damping
    cures slowly. ``"newton"`` solves each unit's equation for its own
    ``m`` exactly (:func:`_solve_layer`); at order <= 2 that is the exact
    minimum of Γ over the layer with the other layer fixed (Γ is convex in
    one layer), so the iteration is a block coordinate descent of Γ: Γ never
    increases, damping or not, and no oscillation can arise.

    Parameters
    ----------
    params : RBMParams
    m_v : array_like of shape (n_starts, n_visible)
        Starting visible magnetizations in [0, 1] (copied).
    m_h : array_like of shape (n_starts, n_hidden), optional
        Starting hidden magnetizations; by default ``sigmoid(hbias + m_v·W)``.
    order : {1, 2, 3}, default 2
        1: naive mean field (both updates are then the same exact coordinate
        ascent step of the bound); 2: TAP; 3: third order.
    update : {"newton", "fixed_point"}, default "newton"
    damping : float in [0, 1), optional
        Default 0 for ``"newton"``, 0.5 for ``"fixed_point"``.
    tol : float, default 1e-8
        Convergence when the largest change of an undamped layer update is below ``tol``.
    max_iter : int, default 2000
    adaptive : bool, default True
        With ``"fixed_point"``: raise the damping of starts that oscillate
        (see :class:`~pymc_rbm.estimators.damping.AdaptiveDamping`). ``"newton"`` cannot oscillate and
        ignores it.

    Returns
    -------
    TAPSolution
    """
    order = check_order(order)
    if update not in ("newton", "fixed_point"):
        raise ValueError(f"update must be 'newton' or 'fixed_point', got {update!r}")
    if damping is None:
        damping = 0.0 if update == "newton" else 0.5
    if not 0.0 <= damping < 1.0:
        raise ValueError(f"damping must lie in [0, 1), got {damping!r}")
    if max_iter < 1:
        raise ValueError(f"max_iter must be >= 1, got {max_iter!r}")
    check_real(tol, "tol", 0.0)  # tol = 0 runs max_iter iterations; a negative one is a mistake
    m_v = np.array(m_v, dtype=np.float64, ndmin=2, copy=True)
    if m_v.ndim != 2 or m_v.shape[1] != params.n_visible:
        raise ValueError(f"m_v must have shape (n_starts, {params.n_visible}), got {m_v.shape}")
    if not (np.all(m_v >= 0.0) and np.all(m_v <= 1.0)):
        raise ValueError("m_v must lie in [0, 1]")
    n = m_v.shape[0]
    W2, W3 = _powers(params, order)
    if m_h is None:
        m_h = expit(params.hbias + m_v @ params.W)
    else:
        m_h = np.array(m_h, dtype=np.float64, ndmin=2, copy=True)
        if m_h.shape != (n, params.n_hidden):
            raise ValueError(f"m_h must have shape ({n}, {params.n_hidden}), got {m_h.shape}")
    iterations = np.zeros(n, dtype=np.int64)
    residual = np.full(n, np.inf)
    damp = AdaptiveDamping(n, damping, enabled=adaptive and update == "fixed_point")
    active = np.arange(n)
    W, WT = params.W, params.W.T
    W2T = W2.T if W2 is not None else None
    W3T = W3.T if W3 is not None else None
    newton = update == "newton"
    for it in range(1, max_iter + 1):
        mv, mh, da = m_v[active], m_h[active], damp[active, None]
        f = _layer(params.hbias, W, W2, W3, mv, order)
        dh = (_solve_layer(f, mh) if newton else expit(_stationarity_field(f, mh))) - mh
        mh = mh + (1.0 - da) * dh
        f = _layer(params.vbias, WT, W2T, W3T, mh, order)
        dv = (_solve_layer(f, mv) if newton else expit(_stationarity_field(f, mv))) - mv
        mv = mv + (1.0 - da) * dv
        res = np.maximum(np.abs(dh).max(axis=1), np.abs(dv).max(axis=1))
        m_v[active], m_h[active] = mv, mh
        residual[active] = res
        iterations[active] = it
        damp.update(it, active, res, np.concatenate([dh, dv], axis=1))
        active = active[res >= tol]
        if active.size == 0:
            break
    return TAPSolution(
        m_v=m_v,
        m_h=m_h,
        neg_gibbs=tap_free_energy(params, m_v, m_h, order=order),
        iterations=iterations,
        residual=residual,
        converged=residual < tol,
        damping=damp.d,
    )


@on_one_blas_thread
def tap_starts(
    params: RBMParams, *, n_starts: int = 8, data=None, n_data_starts: int = 16, rng=None
) -> tuple[np.ndarray, np.ndarray]:
    """Starting magnetizations ``(m_v, m_h)`` for the fixed point iterations.

    Start 0 is the factorized state ``m_v = sigmoid(vbias)``. Starts 1 to
    ``n_starts - 1`` are random binary *hidden* states, of densities spread
    evenly over (0, 1) (start ``s`` has density ``(s - ½) / (n_starts - 1)``;
    stochastic), with ``m_v = sigmoid(vbias + W·m_h)``: on trained models
    these find the modes that random visible states miss (docs/estimators.md).
    Then up to ``n_data_starts`` rows of ``data``, chosen at random
    without replacement. Where ``m_h`` is not drawn it is
    ``sigmoid(hbias + m_v·W)``.

    Parameters
    ----------
    params : RBMParams
    n_starts : int, default 8
        Number of non-data starts (at least 1).
    data : array_like of shape (n_samples, n_visible), optional
        Binary data; it is validated and not modified.
    n_data_starts : int, default 16
    rng : numpy.random.Generator or seed, optional
        Default: a fixed seed, so that the estimators are deterministic.

    Returns
    -------
    m_v : ndarray of shape (n_total, n_visible)
    m_h : ndarray of shape (n_total, n_hidden)
        ``n_total = n_starts + min(n_data_starts, n_samples)``.
    """
    if n_starts < 1:
        raise ValueError(f"n_starts must be >= 1, got {n_starts!r}")
    rng = np.random.default_rng(0 if rng is None else rng)
    k = n_starts - 1
    density = (np.arange(1, k + 1) - 0.5) / max(k, 1)
    h = (rng.random((k, params.n_hidden)) < density[:, None]).astype(np.float64)
    v_rows = [expit(params.vbias)[None, :], expit(params.vbias + h @ params.W.T)]
    if data is not None:
        d = check_binary(data, params.n_visible, name="data")
        d = d.reshape(-1, params.n_visible)
        n_data = min(int(n_data_starts), d.shape[0])
        if n_data > 0:
            v_rows.append(d[np.sort(rng.choice(d.shape[0], size=n_data, replace=False))])
    m_v = np.concatenate(v_rows, axis=0)
    m_h = expit(params.hbias + m_v @ params.W)
    m_h[1 : 1 + k] = h
    return m_v, m_h


def _best(sol: TAPSolution) -> int:
    """Index of the converged start of largest ``-Γ`` (lowest free energy); any start if none converged."""
    pool = np.flatnonzero(sol.converged)
    if pool.size == 0:
        pool = np.arange(sol.neg_gibbs.size)
    return int(pool[np.argmax(sol.neg_gibbs[pool])])


@on_one_blas_thread
def solve_tap(params, *, order, n_starts, data, n_data_starts, update, damping, tol, max_iter, rng, adaptive=True):
    """The fixed points of :func:`tap_fixed_point` from the starts of :func:`tap_starts`, and the best one.

    Parameters
    ----------
    params : RBMParams
    order : {1, 2, 3}
        1 is naive mean field (used by :mod:`pymc_rbm.estimators.mean_field`).
    n_starts, data, n_data_starts, rng
        As for :func:`tap_starts`.
    update, damping, tol, max_iter, adaptive
        As for :func:`tap_fixed_point`.

    Returns
    -------
    solution : TAPSolution
        One fixed point per start.
    best : int
        The start of largest ``-Γ`` (lowest free energy) among the converged ones, or among all when
        none converged.
    """
    if not isinstance(params, RBMParams):
        raise TypeError(f"params must be an RBMParams, got {type(params).__name__}")
    params = params.astype(np.float64)
    m_v, m_h = tap_starts(params, n_starts=n_starts, data=data, n_data_starts=n_data_starts, rng=rng)
    sol = tap_fixed_point(
        params,
        m_v,
        m_h,
        order=order,
        update=update,
        damping=damping,
        tol=tol,
        max_iter=max_iter,
        adaptive=adaptive,
    )
    return sol, _best(sol)

"""The TAP (Thouless-Anderson-Palmer) approximation of ``log Z`` of a binary RBM.

Gabrié, Tramel & Krzakala (2015), as summarised in Zhang (2016) §2.3.3 and
§2.4.3: the Gibbs free energy ``Γ(m_v, m_h)`` of the RBM, expanded to second
(or third) order in the couplings around the factorized state (a Plefka
expansion), is made stationary by a damped fixed point iteration, and
``log Z ≈ -Γ`` at the fixed point. For binary units, with the binary entropy
``S``, ``a = vbias``, ``b = hbias``::

    -Γ = S(m_v) + S(m_h) + a·m_v + b·m_h + m_v·W·m_h                       (order 1: naive mean field)
         + ½ Σ_ij W_ij² (m_vi - m_vi²)(m_hj - m_hj²)                       (order 2: TAP, Onsager term)
         + ⅔ Σ_ij W_ij³ (m_vi - m_vi²)(½ - m_vi)(m_hj - m_hj²)(½ - m_hj)     (order 3)

(the third-order term of Georges & Yedidia for a bipartite graph, which has
no triangles). Stationarity gives ``m_h = sigmoid(b + m_v·W - (m_h - ½)
((m_v - m_v²)·W²) + ...)`` and the same for ``m_v``; the layers are updated
alternately, each with damping ``m ← d m_old + (1 - d) m_new``. Gabrié et
al. evaluate the right-hand side at the old ``m_h`` (``update="fixed_point"``,
with an adaptive damping here); by default each unit's equation is instead
solved for its own ``m`` (``update="newton"``), which at order 2 minimizes Γ
exactly over one layer: a block coordinate descent that cannot oscillate.

The fixed point is found from several starts at once (the factorized
``sigmoid(vbias)`` state, random binary hidden states, and rows of ``data``
when given), as one batch: an iteration costs a few ``(n_starts, n_visible)
@ (n_visible, n_hidden)`` products, O(n_starts · n_visible · n_hidden). The
estimate is the fixed point of lowest free energy, ``log Z ≈ -min Γ``. TAP
is not a bound, and at strong coupling (``|W| ≫ 1``) the second-order
expansion can overshoot by far: the Onsager term rewards half-on units.

Order 1 is the naive mean-field lower bound; :mod:`pymc_rbm.estimators.mean_field`
uses the same iteration for it. The equations and their fixed points are
:mod:`~pymc_rbm.estimators.tap_equations`; this module is the estimator built on them.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.special import log_expit

from pymc_rbm.estimates import LogPartitionEstimate, Moments, fingerprint_of
from pymc_rbm.estimators.tap_equations import TAPSolution, check_order, solve_tap, tap_free_energy, tap_pair_moments
from pymc_rbm.validation import check_positive_int
from pymc_rbm.params import RBMParams

__all__ = [
    "TAPMoments",
    "UnphysicalFixedPoint",
    "log_partition_upper_bound",
    "log_partition_tap",
    "moments_tap",
]


class UnphysicalFixedPoint(RuntimeWarning):
    """A TAP fixed point outside the physical domain: its estimate and moments are not to be trusted."""


#: Tolerance of the domain checks: moments may exceed [0, 1] by rounding only.
_DOMAIN_TOL = 1e-9


class TAPMoments(Moments):
    """:class:`~pymc_rbm.estimators.Moments` from a TAP fixed point, with what the check found.

    It is a ``Moments`` (``v``, ``h``, ``vh``, unpacking and
    ``isinstance`` work as for every other method) with one more attribute.

    Attributes
    ----------
    diagnostics : dict
        ``physical`` (bool: every moment in [0, 1]), ``vh_range`` (the
        smallest and largest ``⟨v_i h_j⟩``), ``converged``, ``residual``,
        ``iterations``, ``order``.
    """

    def __new__(cls, v, h, vh, *, diagnostics: dict):
        self = super().__new__(cls, v, h, vh)
        self.diagnostics = diagnostics
        return self


def log_partition_upper_bound(params: RBMParams) -> float:
    """An upper bound of ``log Z`` in closed form (cheap; loose).

    Summing the visible units out, ``log Z ≤ n_hidden log 2 + max_h [hbias·h
    + Σ_i softplus(vbias_i + (W h)_i)]``, and the maximum is at most
    ``Σ_j max(hbias_j, 0) + Σ_i softplus(vbias_i + Σ_j max(W_ij, 0))``
    (softplus increases); the same with the layers exchanged, and the smaller
    of the two is returned. An estimate above it is impossible.

    Parameters
    ----------
    params : RBMParams

    Returns
    -------
    float
    """

    def one_side(W, a, b):
        return W.shape[1] * np.log(2.0) + np.maximum(b, 0.0).sum() + (-log_expit(-(a + np.maximum(W, 0.0).sum(axis=1)))).sum()

    return float(min(one_side(params.W, params.vbias, params.hbias), one_side(params.W.T, params.hbias, params.vbias)))


def _domain(mv, mh, vh) -> dict:
    """Whether the moments lie in [0, 1], and the range of ``vh``."""
    lo, hi = float(vh.min()), float(vh.max())
    physical = bool(
        lo >= -_DOMAIN_TOL
        and hi <= 1.0 + _DOMAIN_TOL
        and np.all((mv >= 0.0) & (mv <= 1.0))
        and np.all((mh >= 0.0) & (mh <= 1.0))
    )
    return {"physical": physical, "vh_range": (lo, hi)}


def _warn_unphysical(what: str, vh_range, *, extra: str = "", stacklevel: int = 3) -> None:
    warnings.warn(
        f"TAP: {what}: the pair moments <v_i h_j> of its fixed point range from {vh_range[0]:.3g} to "
        f"{vh_range[1]:.3g}, outside [0, 1]{extra}. The expansion is used outside its range (couplings too "
        "strong for a second-order expansion); use AIS, RTS or SAMS for log Z, sampling for moments "
        "(diagnostics['physical'] is False)",
        UnphysicalFixedPoint,
        stacklevel=stacklevel,
    )


def _diagnostics(sol: TAPSolution, best: int, **extra) -> dict:
    distinct = _count_distinct(sol)
    return {
        "iterations": int(sol.iterations[best]),
        "residual": float(sol.residual[best]),
        "converged": bool(sol.converged[best]),
        "n_starts": int(sol.neg_gibbs.size),
        "n_converged": int(sol.converged.sum()),
        "n_distinct_fixed_points": distinct,
        "best_start": best,
        "damping": float(sol.damping[best]),
        "values": sol.neg_gibbs.copy(),
        "m_v": sol.m_v[best].copy(),
        "m_h": sol.m_h[best].copy(),
        **extra,
    }


def _count_distinct(sol: TAPSolution, atol: float = 1e-4) -> int:
    """Number of distinct converged fixed points (by their magnetizations)."""
    pts = np.concatenate([sol.m_v, sol.m_h], axis=1)[sol.converged]
    reps: list[np.ndarray] = []
    for p in pts:
        if not any(np.abs(p - r).max() < atol for r in reps):
            reps.append(p)
    return len(reps)


def log_partition_tap(
    params: RBMParams,
    *,
    order: int = 2,
    n_starts: int = 8,
    data=None,
    n_data_starts: int = 16,
    update: str = "newton",
    damping: float | None = None,
    tol: float = 1e-8,
    max_iter: int = 2000,
    adaptive: bool = True,
    rng=None,
) -> LogPartitionEstimate:
    """TAP estimate of ``log Z``: ``-min Γ`` over the fixed points found from several starts.

    Parameters
    ----------
    params : RBMParams
    order : {2, 3}, default 2
        Order of the expansion of the Gibbs free energy (Gabrié et al. 2015
        use 2; 3 adds the ``W³`` term).
    n_starts : int, default 8
        Non-data starts: ``sigmoid(vbias)`` and ``n_starts - 1`` random
        binary hidden states (see :func:`~pymc_rbm.estimators.tap_equations.tap_starts`).
    data : array_like of shape (n_samples, n_visible), optional
        Binary data; up to ``n_data_starts`` of its rows are used as starts.
    n_data_starts : int, default 16
    update : {"newton", "fixed_point"}, default "newton"
        How a layer is updated (see :func:`~pymc_rbm.estimators.tap_equations.tap_fixed_point`); "fixed_point" is
        Gabrié et al.'s damped iteration.
    damping : float in [0, 1), optional
        Default 0 for "newton", 0.5 for "fixed_point".
    tol : float, default 1e-8
    max_iter : int, default 2000
    adaptive : bool, default True
        Raise the damping of oscillating starts (see :func:`~pymc_rbm.estimators.tap_equations.tap_fixed_point`).
    rng : numpy.random.Generator or seed, optional
        Draws the random starts; default a fixed seed (the result is deterministic).

    Returns
    -------
    LogPartitionEstimate
        ``stderr`` 0; ``diagnostics`` has ``iterations``, ``residual`` and
        ``converged`` of the chosen fixed point, ``n_starts``, ``n_converged``,
        ``n_distinct_fixed_points``, ``values`` (``-Γ`` of every start),
        ``order``, the chosen ``m_v``, ``m_h``, and ``terms``: the expansion
        at the chosen point split by order (``mean_field``, the order-1
        value; ``second_order``, the Onsager term; ``third_order``), which
        sum to ``log_z``. A second-order term of many nats says the
        expansion is outside its range (see Notes). ``physical`` is False,
        with an :class:`UnphysicalFixedPoint` warning, when the fixed point
        is outside the physical domain: a pair moment ``⟨v_i h_j⟩`` outside
        [0, 1] (``vh_range``), or an estimate above
        :func:`log_partition_upper_bound` (``upper_bound``).

    Notes
    -----
    TAP is not a bound. Far from weak coupling the expansion is used outside
    its range and can land far above ``log Z`` at a converged fixed point:
    its pair moments then leave [0, 1] or the estimate exceeds
    :func:`log_partition_upper_bound`, and the result is flagged
    (``diagnostics["physical"]``) and warned about. A large
    ``diagnostics["terms"]["second_order"]`` shows the same. The figures on
    the MNIST models and on a strongly coupled random RBM are in
    docs/estimators.md ("Which method when").

    Examples
    --------
    >>> from pymc_rbm import RBMParams
    >>> from pymc_rbm.estimators import log_partition_exact
    >>> p = RBMParams.random(8, 5, scale=0.3, rng=0)
    >>> est = log_partition_tap(p)
    >>> est.diagnostics["converged"], abs(est.log_z - log_partition_exact(p).log_z) < 1e-3
    (True, True)
    """
    order = check_order(order, (2, 3))
    n_starts = check_positive_int(n_starts, "n_starts")
    n_data_starts = check_positive_int(n_data_starts, "n_data_starts", 0)
    sol, best = solve_tap(
        params,
        order=order,
        n_starts=n_starts,
        data=data,
        n_data_starts=n_data_starts,
        update=update,
        damping=damping,
        tol=tol,
        max_iter=max_iter,
        adaptive=adaptive,
        rng=rng,
    )
    p = params.astype(np.float64)
    mv, mh = sol.m_v[best], sol.m_h[best]
    by_order = [float(tap_free_energy(p, mv, mh, order=k)) for k in range(1, order + 1)]
    terms = {"mean_field": by_order[0], "second_order": by_order[1] - by_order[0]}
    if order == 3:
        terms["third_order"] = by_order[2] - by_order[1]
    log_z = float(sol.neg_gibbs[best])
    domain = _domain(mv, mh, tap_pair_moments(p.W, mv, mh, order))
    bound = log_partition_upper_bound(p)
    domain["upper_bound"] = bound
    if log_z > bound:
        domain["physical"] = False
    if not domain["physical"]:
        extra = f", and the estimate {log_z:.6g} exceeds the upper bound {bound:.6g} of log Z" if log_z > bound else ""
        _warn_unphysical(f"the estimate log Z = {log_z:.6g} is not trustworthy", domain["vh_range"], extra=extra)
    return LogPartitionEstimate(
        fingerprint=fingerprint_of(params),
        log_z=log_z,
        method="tap",
        kind="approximation",
        diagnostics=_diagnostics(sol, best, order=order, terms=terms, **domain),
    )


def moments_tap(params: RBMParams, *, order: int = 2, **options) -> TAPMoments:
    """``⟨v⟩``, ``⟨h⟩`` and ``⟨v hᵀ⟩`` from the TAP fixed point of lowest free energy.

    The moments are the gradient of the TAP ``log Z`` with respect to the
    biases and ``W`` (the fixed point is stationary, so only the explicit
    dependence counts): ``⟨v h_ᵀ⟩ ≈ m_v m_hᵀ + W ∘ (m_v - m_v²)(m_h - m_h²)ᵀ``
    (+ ``2 W² ∘ ...`` at third order), the gradient Gabrié et al. train with.

    Parameters
    ----------
    params : RBMParams
    order : {2, 3}, default 2
    **options
        As in :func:`log_partition_tap`.

    Returns
    -------
    TAPMoments
        A :class:`~pymc_rbm.estimators.Moments` with ``diagnostics``; ``physical`` is False, with
        an :class:`UnphysicalFixedPoint` warning, when a pair moment lies
        outside [0, 1] (the moments are returned as the expansion gives them,
        not clipped: they are the gradient of the TAP estimate).
    """
    order = check_order(order, (2, 3))
    defaults = dict(
        n_starts=8, data=None, n_data_starts=16, update="newton", damping=None, tol=1e-8, max_iter=2000, adaptive=True, rng=None
    )
    unknown = set(options) - set(defaults)
    if unknown:
        raise TypeError(f"moments_tap got unexpected option(s) {sorted(unknown)}")
    sol, best = solve_tap(params, order=order, **{**defaults, **options})
    mv, mh = sol.m_v[best], sol.m_h[best]
    vh = tap_pair_moments(params.W, mv, mh, order)
    diagnostics = {
        **_domain(mv, mh, vh),
        "converged": bool(sol.converged[best]),
        "residual": float(sol.residual[best]),
        "iterations": int(sol.iterations[best]),
        "order": order,
    }
    if not diagnostics["physical"]:
        _warn_unphysical("moments outside the physical domain", diagnostics["vh_range"])
    return TAPMoments(mv.copy(), mh.copy(), vh, diagnostics=diagnostics)

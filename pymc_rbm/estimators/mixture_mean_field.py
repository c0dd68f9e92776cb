"""Mixture mean field (Lawrence, Bishop & Jordan 1998): a mixture of factorized distributions bounds ``log Z``.

The method and its bound are described in :mod:`~pymc_rbm.estimators.mean_field`. Here are the
engine, a coordinate ascent on a batch of Boltzmann machines (:func:`mixture_mean_field_arrays`),
its front ends for a :class:`~pymc_rbm.estimators.boltzmann_machine.BoltzmannMachine`
(:func:`mean_field_bm`, :func:`mixture_mean_field_bm`) and for an RBM through its spin form
(:func:`log_partition_mixture_mean_field`, :func:`moments_mixture_mean_field`), seeded with the
RBM's naive mean-field fixed points (:func:`~pymc_rbm.estimators.mean_field.naive_mean_field`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from pymc_rbm._runtime import on_one_blas_thread
from pymc_rbm.energy import softplus
from pymc_rbm.estimators.boltzmann_machine import BoltzmannMachine
from pymc_rbm.estimators.mean_field import check_rbm_params, check_temperatures, naive_mean_field
from pymc_rbm.estimates import LogPartitionEstimate, Moments, fingerprint_of
from pymc_rbm.estimators.tap_equations import tap_free_energy
from pymc_rbm.params import RBMParams, SpinRBMParams

__all__ = [
    "MixtureMeanField",
    "mixture_mean_field_arrays",
    "mean_field_bm",
    "mixture_mean_field_bm",
    "log_partition_mixture_mean_field",
    "moments_mixture_mean_field",
]

_X_MAX = 40.0  # natural parameters are clipped to ±_X_MAX: tanh(40) = 1 in float64, log q stays finite


# --------------------------------------------------------------------------- the mixture engine
class MixtureMeanField(NamedTuple):
    """An optimized (mixture) mean-field approximation, for a batch of machines.

    Attributes
    ----------
    bound : ndarray of shape (batch,)
        The lower bound on ``log Z`` (at T = 1).
    naive_bound : ndarray of shape (batch,)
        The naive (one-component) mean-field bound, found along the way.
    alpha : ndarray of shape (batch, L)
        Mixing weights.
    m : ndarray of shape (batch, L, n_units)
        Component magnetizations ``⟨s_i⟩_l``.
    log_r : ndarray of shape (batch, L, n_units, 2)
        Log smoothing factors ``ln r_li(s)``, ``s = +1`` then ``-1``.
    log_lam : ndarray of shape (batch, L)
        ``ln λ_l``.
    iterations : ndarray of int of shape (batch,)
        Sweeps, summed over the temperatures.
    residual : ndarray of shape (batch,)
        Change of the bound over the last sweep (at T = 1).
    converged : ndarray of bool of shape (batch,)
    naive_seeded : ndarray of bool of shape (batch,)
        Whether the kept solution came from the naive-seeded start (or is the
        naive solution itself).
    """

    bound: np.ndarray
    naive_bound: np.ndarray
    alpha: np.ndarray
    m: np.ndarray
    log_r: np.ndarray
    log_lam: np.ndarray
    iterations: np.ndarray
    residual: np.ndarray
    converged: np.ndarray
    naive_seeded: np.ndarray

    def magnetizations(self) -> np.ndarray:
        """``⟨s_i⟩ ≈ Σ_l α_l m_li``, shape (batch, n_units)."""
        return np.einsum("bl,bli->bi", self.alpha, self.m)

    def correlations(self) -> np.ndarray:
        """``⟨s_i s_j⟩ ≈ Σ_l α_l m_li m_lj`` (Lawrence, Bishop & Jordan 1998, eq. 29).

        Shape (batch, n, n), ones on the diagonal.
        """
        C = np.einsum("bl,bli,blj->bij", self.alpha, self.m, self.m)
        idx = np.arange(C.shape[-1])
        C[:, idx, idx] = 1.0
        return C


def _lse(a, axis):
    """``log Σ exp(a)`` along ``axis`` (a lean scipy.special.logsumexp for finite-or--inf inputs)."""
    top = np.max(a, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    return np.squeeze(top, axis=axis) + np.log(np.exp(a - top).sum(axis=axis))


def _lse_spin(a):
    """``log Σ_s exp(a[..., s])`` over the last axis of length 2."""
    return np.logaddexp(a[..., 0], a[..., 1])


class _Mix:
    """Working arrays of the coordinate ascent (batch b, component l, smoothing index k, unit i, spin s)."""

    def __init__(self, J, bias, x, lr, la):
        self.J, self.bias = J, bias
        self.x, self.lr, self.la = np.clip(x, -_X_MAX, _X_MAX), lr, la
        self.refresh()

    # log q_li(±1) = -softplus(∓2 x_li)
    def refresh(self):
        self.m = np.tanh(self.x)
        self.lq = np.stack([-softplus(-2.0 * self.x), -softplus(2.0 * self.x)], axis=-1)
        # A[b, k, l, i] = ln <r_ki>_l
        self.A = _lse_spin(self.lr[:, :, None] + self.lq[:, None, :])
        self.P = self.A.sum(axis=-1)  # ln <R_k>_l
        self.update_lambda()

    def update_lambda(self):
        self.ll = self.la - _lse(self.la[:, None, :] + self.P, axis=-1)

    def _set_unit_A(self, i):
        new = _lse_spin(self.lr[:, :, None, i] + self.lq[:, None, :, i])
        self.P += new - self.A[..., i]
        self.A[..., i] = new

    def update_unit_m(self, i, T, smoothing):
        field = np.einsum("bln,bn->bl", self.m, self.J[:, :, i]) + self.bias[:, None, i]
        x = field / T
        if smoothing:
            x += 0.5 * (self.lr[:, :, i, 0] - self.lr[:, :, i, 1])
            e = self.ll[:, :, None] + self.P - self.A[..., i]  # (b, k, l)
            lr_i = self.lr[:, :, i, :][:, :, None, :]  # (b, k, 1, s)
            x -= 0.5 * (np.exp(e + lr_i[..., 0]) - np.exp(e + lr_i[..., 1])).sum(axis=1)
        x = np.clip(x, -_X_MAX, _X_MAX)
        self.x[:, :, i] = x
        self.m[:, :, i] = np.tanh(x)
        self.lq[:, :, i, 0] = -softplus(-2.0 * x)
        self.lq[:, :, i, 1] = -softplus(2.0 * x)
        if smoothing:
            self._set_unit_A(i)

    def update_unit_r(self, i):
        # ln r_ki(s) = ln α_k + ln q_ki(s) - ln λ_k - ln Σ_l α_l q_li(s) Π_{j≠i} <r_kj>_l
        rest = self.P - self.A[..., i]  # (b, k, l)
        denom = _lse(self.la[:, None, :, None] + self.lq[:, None, :, i, :] + rest[..., None], axis=2)
        self.lr[:, :, i, :] = self.la[:, :, None] + self.lq[:, :, i, :] - self.ll[:, :, None] - denom
        self._set_unit_A(i)

    def component_value(self, T):
        """``F_l = ⟨-E⟩_l / T + H(Q_l)`` of each component, shape (b, l)."""
        m = self.m
        neg_e = 0.5 * np.einsum("bli,bij,blj->bl", m, self.J, m) + np.einsum("bli,bi->bl", m, self.bias)
        entropy = -(np.exp(self.lq) * self.lq).sum(axis=(-1, -2))
        return neg_e / T + entropy

    def smoothing_mean(self):
        """``⟨ln R_l⟩_l`` per component, shape (b, l)."""
        return (np.exp(self.lq) * self.lr).sum(axis=(-1, -2))

    def update_alpha(self, T):
        cross = np.exp(self.ll[:, :, None] + self.P).sum(axis=1)  # Σ_k λ_k <R_k>_l, shape (b, l)
        score = self.component_value(T) + self.smoothing_mean() + self.ll - cross
        la = score - _lse(score, axis=-1)[:, None]
        self.la = np.maximum(la, -700.0)
        self.update_lambda()

    def bound(self, T, smoothing):
        F = self.component_value(T)
        if not smoothing:
            return F[:, 0]
        alpha = np.exp(self.la)
        inner = F + self.smoothing_mean() - self.la + self.ll
        cross = np.exp(self.ll[:, :, None] + self.la[:, None, :] + self.P).sum(axis=(1, 2))
        return (alpha * inner).sum(axis=-1) - cross + 1.0


def _optimize(J, b, x, *, lr, la, temps, tol, max_iter) -> MixtureMeanField:
    """Coordinate ascent of the (mixture) bound from the given starting parameters, annealed over ``temps``."""
    B, L, n = x.shape
    smoothing = L > 1
    if la is None:  # weights ∝ exp(F_l): the best mixture of these components with uniform smoothing
        state = _Mix(J, b, x, lr, np.zeros((B, L)))
        F = state.component_value(temps[0])
        la = np.maximum(F - _lse(F, axis=-1)[:, None], -700.0)
    state = _Mix(J, b, x, lr, la)
    iterations = np.zeros(B, dtype=np.int64)
    residual = np.full(B, np.inf)
    for T in temps:
        value = state.bound(T, smoothing)
        for _ in range(max_iter):
            for i in range(n):
                state.update_unit_m(i, T, smoothing)
            if smoothing:
                state.update_lambda()
                for i in range(n):
                    state.update_unit_r(i)
                state.update_lambda()
                state.update_alpha(T)
                state.refresh()  # recompute the running sums exactly, so rounding never drifts
            new = state.bound(T, smoothing)
            residual = np.abs(new - value)
            value = new
            iterations += 1
            if np.all(residual <= tol * (1.0 + np.abs(value))):
                break
    return MixtureMeanField(
        bound=value,
        naive_bound=value.copy() if not smoothing else np.full(B, np.nan),
        alpha=np.exp(state.la),
        m=state.m.copy(),
        log_r=state.lr.copy(),
        log_lam=state.ll.copy(),
        iterations=iterations,
        residual=residual,
        converged=residual <= tol * (1.0 + np.abs(value)),
        naive_seeded=np.zeros(B, dtype=bool),
    )


def _pick(a: MixtureMeanField, b: MixtureMeanField, take_b: np.ndarray) -> MixtureMeanField:
    """Per machine, ``b``'s solution where ``take_b`` and ``a``'s elsewhere."""
    out = []
    for x, y in zip(a, b):
        mask = take_b.reshape(-1, *([1] * (np.ndim(x) - 1)))
        out.append(np.where(mask, y, x))
    return MixtureMeanField(*out)


@on_one_blas_thread
def mixture_mean_field_arrays(
    J,
    b,
    *,
    n_components: int = 1,
    n_starts: int = 1,
    naive_start: bool = True,
    seed_m=None,
    temperatures=None,
    tol: float = 1e-9,
    max_iter: int = 200,
    init_scale: float = 1.0,
    rng=None,
) -> MixtureMeanField:
    """Mixture mean field (naive for ``n_components = 1``) for a batch of Boltzmann machines.

    The vectorised core of :func:`mixture_mean_field_bm`: batch axes first.

    Parameters
    ----------
    J : array_like of shape (batch, n, n)
        Symmetric couplings with zero diagonals (not checked here; see
        :class:`BoltzmannMachine`).
    b : array_like of shape (batch, n)
    n_components : int, default 1
        ``L``. With 1 there is no smoothing, α or λ: naive mean field,
        sequential updates from ``m = 0``.
    n_starts : int, default 1
        Random initializations of the mixture (annealed, as in Lawrence, Bishop & Jordan 1998),
        run as one batch; each machine keeps its largest bound.
    naive_start : bool, default True
        Also start the mixture (at T = 1 only) from the annealed naive
        solution as component 0 (further components from ``seed_m``, the
        rest random), with weights ``∝ exp(F_l)``; and keep the naive
        solution itself (the mixture of weights ``(1, 0, ..., 0)``) if all
        else is worse. The result is then never below the naive mean-field
        bound, which the random starts alone do not guarantee. Ignored when
        ``n_components = 1``.
    seed_m : array_like of shape (batch, n) or (batch, k, n), optional
        Magnetizations of naive mean-field solutions found elsewhere (the
        RBM front end passes the distinct fixed points of its multi-start
        iteration, best first). The first is polished at T = 1 and, where
        its bound beats the annealed naive solution, replaces it (as
        ``naive_bound`` and as component 0 of the naive-seeded start); the
        next ``L - 1`` become that start's other components.
    temperatures : array_like, optional
        Annealing schedule ending at 1; default :func:`~pymc_rbm.estimators.mean_field.annealing_schedule`
        (60 → 1 in 8 steps). Pass ``[1.0]`` for no annealing.
    tol : float, default 1e-9
        A temperature step ends when no machine's bound changed by more
        than ``tol · (1 + |bound|)`` over a sweep.
    max_iter : int, default 200
        Sweeps per temperature at most.
    init_scale : float, default 1.0
        Starting natural parameters ``x_li`` (``m = tanh x``) and log smoothing
        factors are drawn from normals with this standard deviation (stochastic).
    rng : numpy.random.Generator or seed, optional
        Default a fixed seed (deterministic).

    Returns
    -------
    MixtureMeanField

    Notes
    -----
    A sweep updates, in turn: every unit of every component (sequentially
    over the units, all components and machines at once), λ, every unit of
    the smoothing distributions, λ, the mixing weights α, λ. Each step is the
    exact maximizer of the bound in its coordinates, so the bound never
    decreases at fixed temperature.
    """
    J = np.asarray(J, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if J.ndim != 3 or J.shape[1] != J.shape[2] or b.shape != J.shape[:2]:
        raise ValueError(f"need J of shape (batch, n, n) and b of shape (batch, n), got {J.shape}, {b.shape}")
    if n_components < 1:
        raise ValueError(f"n_components must be >= 1, got {n_components!r}")
    if n_starts < 1:
        raise ValueError(f"n_starts must be >= 1, got {n_starts!r}")
    if not (np.isfinite(init_scale) and init_scale >= 0.0):
        raise ValueError(f"init_scale must be a finite number >= 0, got {init_scale!r}")
    temps = check_temperatures(temperatures)
    rng = np.random.default_rng(0 if rng is None else rng)
    B, n = b.shape
    L = int(n_components)
    opts = dict(tol=tol, max_iter=max_iter)
    zeros = dict(lr=np.zeros((B, 1, n, 2)), la=np.zeros((B, 1)))
    naive = _optimize(J, b, np.zeros((B, 1, n)), temps=temps, **zeros, **opts)
    extra = None
    if seed_m is not None:
        seed_m = np.asarray(seed_m, dtype=np.float64)
        seed_m = seed_m.reshape(B, -1, n) if seed_m.ndim == 3 else seed_m.reshape(B, 1, n)
        x = np.arctanh(np.clip(seed_m[:, :1], -1.0 + 1e-15, 1.0 - 1e-15))
        polished = _optimize(J, b, x, temps=np.array([1.0]), **zeros, **opts)
        naive = _pick(naive, polished, polished.bound > naive.bound)
        extra = seed_m[:, 1 : max(L, 1)]
    if L == 1:
        return naive
    # random starts, annealed; the starts are the slow axis of one batch
    S = int(n_starts)
    x = rng.normal(0.0, init_scale, size=(S * B, L, n))
    lr = rng.normal(0.0, init_scale, size=(S * B, L, n, 2))
    la = np.full((S * B, L), -np.log(L))
    sol = _optimize(np.tile(J, (S, 1, 1)), np.tile(b, (S, 1)), x, lr=lr, la=la, temps=temps, **opts)
    best = sol.bound.reshape(S, B).argmax(axis=0) * B + np.arange(B)
    sol = MixtureMeanField(*(a[best] for a in sol))
    if naive_start:
        x = rng.normal(0.0, init_scale, size=(B, L, n))
        x[:, 0] = np.arctanh(np.clip(naive.m[:, 0], -1.0 + 1e-15, 1.0 - 1e-15))
        if extra is not None and extra.shape[1]:
            x[:, 1 : 1 + extra.shape[1]] = np.arctanh(np.clip(extra, -1.0 + 1e-15, 1.0 - 1e-15))
        seeded = _optimize(J, b, x, lr=np.zeros((B, L, n, 2)), la=None, temps=np.array([1.0]), **opts)
        seeded = seeded._replace(naive_seeded=np.ones(B, dtype=bool))
        sol = _pick(sol, seeded, seeded.bound > sol.bound)
        # the naive solution itself is the mixture with weights (1, 0, ..., 0) and bound naive.bound
        alpha = np.zeros((B, L))
        alpha[:, 0] = 1.0
        degenerate = sol._replace(
            bound=naive.bound,
            alpha=alpha,
            m=np.repeat(naive.m, L, axis=1),
            log_r=np.zeros((B, L, n, 2)),
            log_lam=np.log(alpha + 1e-300),
            iterations=naive.iterations,
            residual=naive.residual,
            converged=naive.converged,
            naive_seeded=np.ones(B, dtype=bool),
        )
        sol = _pick(sol, degenerate, naive.bound > sol.bound)
    return sol._replace(naive_bound=naive.bound)


def _run_bm(bm: BoltzmannMachine, n_components, **options) -> MixtureMeanField:
    if not isinstance(bm, BoltzmannMachine):
        raise TypeError(f"expected a BoltzmannMachine, got {type(bm).__name__}")
    return mixture_mean_field_arrays(bm.J[None], bm.b[None], n_components=n_components, **options)


def mean_field_bm(
    bm: BoltzmannMachine, *, temperatures=None, tol: float = 1e-9, max_iter: int = 200
) -> MixtureMeanField:
    """Naive mean field for a Boltzmann machine: ``m_i = tanh(Σ_j J_ij m_j + b_i)``.

    Lawrence, Bishop & Jordan (1998), eq. 19.

    Sequential (Gauss-Seidel) updates from ``m = 0``, annealed; each update
    maximizes the bound in one unit, so the bound never decreases.

    Returns
    -------
    MixtureMeanField
        With one component (batch of 1): ``bound[0]`` is the lower bound on ``log Z``.
    """
    return _run_bm(bm, 1, temperatures=temperatures, tol=tol, max_iter=max_iter)


def mixture_mean_field_bm(
    bm: BoltzmannMachine,
    n_components: int = 4,
    *,
    n_starts: int = 1,
    naive_start: bool = True,
    temperatures=None,
    tol: float = 1e-9,
    max_iter: int = 200,
    init_scale: float = 1.0,
    rng=None,
) -> MixtureMeanField:
    """Mixture mean field of Lawrence, Bishop & Jordan (1998) for a Boltzmann machine.

    Parameters
    ----------
    bm : BoltzmannMachine
    n_components : int, default 4
        ``L``.
    n_starts : int, default 1
        Random initializations run as one batch; the largest bound is kept.
    naive_start, temperatures, tol, max_iter, init_scale, rng
        As in :func:`mixture_mean_field_arrays`.

    Returns
    -------
    MixtureMeanField
        A batch of 1.

    Examples
    --------
    >>> bm = BoltzmannMachine.random(10, rng=0)  # the ensemble of Lawrence, Bishop & Jordan (1998, Fig. 1)
    >>> naive = mean_field_bm(bm).bound[0]
    >>> mix = mixture_mean_field_bm(bm, 3, tol=1e-6).bound[0]
    >>> bool(naive <= mix <= bm.log_partition_exact())
    True
    """
    return _run_bm(
        bm,
        n_components,
        n_starts=n_starts,
        naive_start=naive_start,
        temperatures=temperatures,
        tol=tol,
        max_iter=max_iter,
        init_scale=init_scale,
        rng=rng,
    )


# --------------------------------------------------------------------------- RBM front ends
def _mixture_rbm(params, n_components, options) -> tuple[MixtureMeanField, SpinRBMParams]:
    params = check_rbm_params(params)
    spin = params.to_spin()
    bm = BoltzmannMachine.from_rbm(spin)
    # seed with the multi-start naive solution of the RBM (layer-parallel, hidden-state starts)
    sol, _, best, _ = naive_mean_field(
        params,
        n_starts=8,
        data=None,
        n_data_starts=0,
        damping=0.0,
        tol=options["tol"],
        max_iter=2000,
        temperatures=None,
        rng=options["rng"],
    )
    bound = tap_free_energy(params, sol.m_v, sol.m_h, order=1)
    spins = np.concatenate([2.0 * sol.m_v - 1.0, 2.0 * sol.m_h - 1.0], axis=1)[np.argsort(-bound)]
    distinct: list[np.ndarray] = []
    for s in spins:
        if all(np.abs(s - d).max() > 1e-3 for d in distinct):
            distinct.append(s)
    seed = np.stack(distinct[: max(1, n_components)])[None]
    return _run_bm(bm, n_components, seed_m=seed, **options), spin


def log_partition_mixture_mean_field(
    params: RBMParams,
    *,
    n_components: int = 4,
    n_starts: int = 1,
    naive_start: bool = True,
    temperatures=None,
    tol: float = 1e-9,
    max_iter: int = 200,
    init_scale: float = 1.0,
    rng=None,
) -> LogPartitionEstimate:
    """Mixture mean-field lower bound on ``log Z`` of an RBM (Lawrence, Bishop & Jordan 1998).

    Runs :func:`mixture_mean_field_arrays` on the RBM's spin form (a
    Boltzmann machine with bipartite couplings) and adds ``log_offset``; the
    naive-seeded start uses the distinct fixed points of
    :func:`log_partition_mean_field`'s 8 starts as its components (the best
    with weight 1 at first), so the result is at least that bound.
    Costs ``O(L (n_v + n_h)² + L² (n_v + n_h))`` per sweep with a Python loop
    over the units: meant for small and medium models.

    Parameters
    ----------
    params : RBMParams
    n_components : int, default 4
    n_starts : int, default 1
    naive_start : bool, default True
    temperatures : array_like, optional
        Default 60 → 1 in 8 steps.
    tol, max_iter, init_scale, rng
        As in :func:`mixture_mean_field_arrays`.

    Returns
    -------
    LogPartitionEstimate
        ``log_z`` is a lower bound. ``diagnostics``: ``iterations``,
        ``residual``, ``converged``, ``n_starts``, ``n_components``,
        ``alpha``, ``naive_bound`` (the one-component bound found on the
        way), ``naive_seeded`` (whether the naive-seeded start won), ``bound`` (True).
    """
    options = dict(
        n_starts=n_starts,
        naive_start=naive_start,
        temperatures=temperatures,
        tol=tol,
        max_iter=max_iter,
        init_scale=init_scale,
        rng=rng,
    )
    sol, spin = _mixture_rbm(params, n_components, options)
    return LogPartitionEstimate(
        fingerprint=fingerprint_of(params),
        log_z=float(sol.bound[0]) + spin.log_offset,
        method="mixture_mean_field",
        kind="lower bound",
        diagnostics={
            "iterations": int(sol.iterations[0]),
            "residual": float(sol.residual[0]),
            "converged": bool(sol.converged[0]),
            "n_starts": int(n_starts),
            "n_components": int(n_components),
            "alpha": sol.alpha[0].copy(),
            "naive_bound": float(sol.naive_bound[0]) + spin.log_offset,
            "naive_seeded": bool(sol.naive_seeded[0]),
            "bound": True,
        },
    )


def moments_mixture_mean_field(
    params: RBMParams,
    *,
    n_components: int = 4,
    n_starts: int = 1,
    naive_start: bool = True,
    temperatures=None,
    tol: float = 1e-9,
    max_iter: int = 200,
    init_scale: float = 1.0,
    rng=None,
) -> Moments:
    """``⟨v⟩``, ``⟨h⟩``, ``⟨v hᵀ⟩`` as mixtures of the components' factorized moments.

    Lawrence, Bishop & Jordan (1998), eq. 28-29.

    ``⟨v_i h_a⟩ ≈ Σ_l α_l ⟨v_i⟩_l ⟨h_a⟩_l``. Options as in :func:`log_partition_mixture_mean_field`.
    """
    options = dict(
        n_starts=n_starts,
        naive_start=naive_start,
        temperatures=temperatures,
        tol=tol,
        max_iter=max_iter,
        init_scale=init_scale,
        rng=rng,
    )
    sol, spin = _mixture_rbm(params, n_components, options)
    nv = spin.n_visible
    alpha, p = sol.alpha[0], 0.5 * (1.0 + sol.m[0])  # (L,), (L, n) binary means per component
    pv, ph = p[:, :nv], p[:, nv:]
    return Moments(v=alpha @ pv, h=alpha @ ph, vh=np.einsum("l,li,la->ia", alpha, pv, ph))

"""The Bethe approximation of an RBM by message passing (Huang & Toyoizumi 2015).

The hidden units are summed out: ``P(σ) ∝ Π_a 2cosh(w_a·σ + h_a) Π_i e^{φ_i σ_i}``
(Huang & Toyoizumi 2015, eq. 1), a factor graph with one factor per hidden unit connected
to every visible spin. The paper works with ±1 spins; the binary model is
mapped with :meth:`RBMParams.to_spin` (``w_ai = J[i, a]``, ``φ = vfield``,
``h = hfield``) and ``log Z_binary = -F + log_offset``.

Messages are the cavity magnetizations ``m_{i→a}``, stored as an array of the
shape of ``J``, ``(n_visible, n_hidden)``, with a batch axis of starts in
front. One iteration (eqs. 3a–3b) is::

    G_{a→i} = Σ_{j≠i} g(m_{j→a}, w_aj)                  (cavity field on hidden a)
    u_{a→i} = ½ ln[cosh(h_a + G_{a→i} + w_ai) / cosh(h_a + G_{a→i} - w_ai)]   (3b)
    m_{i→a} = tanh(φ_i + Σ_{b≠a} u_{b→i})                                      (3a)

with the totals over ``j`` and ``b`` computed once and the own term subtracted,
O(n_visible · n_hidden) per iteration. ``factor`` chooses how a factor sums
over its other visible spins:

- ``"gaussian"`` (the paper): the central limit theorem, ``U_{a→i} = Σ_j w_aj σ_j``
  normal with mean ``G = Σ w m`` and variance ``Ξ² = Σ w²(1 - m²)``, so
  ``g = w m``, and the log normalizer per edge is ``w²(1 - m²)/2``.
- ``"exact"``: the sum is done exactly, since ``2cosh(x) = Σ_{s=±1} e^{s x}``
  factorizes over the spins: ``g = atanh(m tanh w)`` and the log normalizer
  per edge is ``ln cosh w + ½ ln(1 - m² tanh² w)``. This is ordinary loopy belief
  propagation on the RBM; it is exact on trees (one hidden unit, or one
  visible unit) and tends to the Gaussian form when ``w = O(1/√N)``.

The Bethe free energy is eq. (4), ``F = -Σ_i ln Z_i + (N - 1) Σ_a ln Z_a``
(it uses that ``Z_{ia} = Z_a`` for every edge, exact with ``"exact"``
factors). The stability parameter λ of eq. (5) is the growth factor per
iteration of the total variance ``S(t) = Σ V_{i→a}`` of the messages' linear
response, run at the fixed point until the ratio settles (a power iteration
for the leading eigenvalue of that linear map); λ < 1: stable. The moments
are eq. (6).
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
from numpy.polynomial.hermite_e import hermegauss

from pymc_rbm._runtime import on_one_blas_thread
from pymc_rbm.estimates import LogPartitionEstimate, Moments, fingerprint_of
from pymc_rbm.estimators.damping import AdaptiveDamping
from pymc_rbm.params import RBMParams, SpinRBMParams
from pymc_rbm.validation import check_binary, check_real

__all__ = [
    "BetheSolution",
    "BetheMoments",
    "bethe_message_passing",
    "bethe_free_energy",
    "bethe_stability",
    "bethe_moments",
    "log_partition_bethe",
    "moments_bethe",
]

_LN2 = float(np.log(2.0))
_FACTORS = ("gaussian", "exact")
_GAUSS_NODES, _GAUSS_WEIGHTS = hermegauss(61)
_GAUSS_WEIGHTS = _GAUSS_WEIGHTS / _GAUSS_WEIGHTS.sum()


class BetheSolution(NamedTuple):
    """Fixed points of the message passing equations for a batch of starts.

    Attributes
    ----------
    m : ndarray of shape (n_starts, n_visible, n_hidden)
        Cavity magnetizations ``m_{i→a}`` (entry ``[s, i, a]``).
    log_z : ndarray of shape (n_starts,)
        ``-F`` of eq. (4) at the messages: ``log Z`` of the *spin* model.
    iterations : ndarray of int of shape (n_starts,)
    residual : ndarray of shape (n_starts,)
        ``max |m_new - m_old|`` of the undamped update at the last iteration.
    converged : ndarray of bool of shape (n_starts,)
    damping : ndarray of shape (n_starts,)
        The damping each start ended with.
    """

    m: np.ndarray
    log_z: np.ndarray
    iterations: np.ndarray
    residual: np.ndarray
    converged: np.ndarray
    damping: np.ndarray


class BetheMoments(NamedTuple):
    """The spin moments of Huang & Toyoizumi (2015) eq. (6).

    Attributes
    ----------
    m : ndarray of shape (n_visible,)
        ``m_i = ⟨σ_i⟩``.
    m_hat : ndarray of shape (n_hidden,)
        ``m̂_a = ⟨tanh(w_a·σ + h_a)⟩ = ⟨s_a⟩``.
    C : ndarray of shape (n_hidden, n_visible)
        ``C_aj = ⟨tanh(w_a·σ + h_a) σ_j⟩ = ⟨s_a σ_j⟩``.
    """

    m: np.ndarray
    m_hat: np.ndarray
    C: np.ndarray


def _check_factor(factor: str) -> str:
    if factor not in _FACTORS:
        raise ValueError(f"factor must be one of {_FACTORS}, got {factor!r}")
    return factor


def _lncosh(x):
    """``ln cosh x``, stable for any ``|x|``."""
    a = np.abs(x)
    return a + np.log1p(np.exp(-2.0 * a)) - _LN2


def _half_lncosh_ratio(x, w):
    """``½ ln[cosh(x + w) / cosh(x - w)]`` (eq. 3b), stable for any ``|x|``, ``|w|``."""
    p, q = np.abs(x + w), np.abs(x - w)
    return 0.5 * ((p - q) + np.log1p(np.exp(-2.0 * p)) - np.log1p(np.exp(-2.0 * q)))


class _Factor(NamedTuple):
    g: np.ndarray  # field contribution of edge (i, a) to hidden a
    c: np.ndarray  # log-normalizer contribution of edge (i, a)


def _factor_terms(J, tanh_J, lncosh_J, m, factor) -> _Factor:
    if factor == "gaussian":
        return _Factor(J * m, 0.5 * J * J * (1.0 - m * m))
    mt = m * tanh_J
    return _Factor(np.arctanh(mt), lncosh_J + 0.5 * np.log1p(-mt * mt))


class _Model(NamedTuple):
    J: np.ndarray
    phi: np.ndarray  # (N, 1)
    h: np.ndarray  # (M,)
    tanh_J: np.ndarray
    lncosh_J: np.ndarray


def _model(spin: SpinRBMParams) -> _Model:
    J = np.asarray(spin.J, dtype=np.float64)
    return _Model(J, np.asarray(spin.vfield, np.float64)[:, None], np.asarray(spin.hfield, np.float64), np.tanh(J), _lncosh(J))


def _cavity_fields(mod: _Model, m, factor):
    """``(f, x)``: the edge terms and ``x_{ia} = h_a + G_{a→i}``, the cavity field on hidden ``a``."""
    f = _factor_terms(mod.J, mod.tanh_J, mod.lncosh_J, m, factor)
    return f, mod.h + f.g.sum(axis=-2, keepdims=True) - f.g


@on_one_blas_thread
def bethe_free_energy(spin: SpinRBMParams, m, *, factor: str = "gaussian") -> np.ndarray:
    """``-F`` of Huang & Toyoizumi (2015) eq. (4) at cavity magnetizations ``m``: ``log Z`` of the spin model.

    ``F = -Σ_i ln Z_i + (N - 1) Σ_a ln Z_a`` with
    ``Z_i = e^{φ_i} Π_b μ_{b→i}(+1) + e^{-φ_i} Π_b μ_{b→i}(-1)``,
    ``μ_{b→i}(σ) = 2 e^{Ξ²_{b→i}/2} cosh(h_b + G_{b→i} + w_bi σ)`` and
    ``Z_a = 2 e^{Ξ²_a/2} cosh(h_a + G_a)`` (Gaussian factors; with exact
    factors ``Ξ²/2`` and ``G`` are replaced by their exact counterparts).

    Parameters
    ----------
    spin : SpinRBMParams
    m : array_like of shape (..., n_visible, n_hidden)
        Cavity magnetizations in (-1, 1).
    factor : {"gaussian", "exact"}

    Returns
    -------
    ndarray of shape (...)
    """
    factor = _check_factor(factor)
    mod = _model(spin)
    m = np.asarray(m, dtype=np.float64)
    f, x = _cavity_fields(mod, m, factor)
    G = f.g.sum(axis=-2)
    C = f.c.sum(axis=-2)
    ln_za = _LN2 + C + _lncosh(mod.h + G)  # (..., M)
    base = _LN2 + C[..., None, :] - f.c  # ln 2 + Ξ²_{a→i} / 2
    up = (base + _lncosh(x + mod.J)).sum(axis=-1)
    down = (base + _lncosh(x - mod.J)).sum(axis=-1)
    ln_zi = np.logaddexp(mod.phi[:, 0] + up, -mod.phi[:, 0] + down)  # (..., N)
    n = spin.n_visible
    return ln_zi.sum(axis=-1) - (n - 1) * ln_za.sum(axis=-1)


@on_one_blas_thread
def bethe_message_passing(
    spin: SpinRBMParams,
    m0,
    *,
    factor: str = "gaussian",
    damping: float = 0.0,
    tol: float = 1e-9,
    max_iter: int = 500,
    adaptive: bool = True,
) -> BetheSolution:
    """Iterate Huang & Toyoizumi (2015) eqs. (3a)-(3b) from a batch of starts.

    Parameters
    ----------
    spin : SpinRBMParams
    m0 : array_like of shape (n_starts, n_visible, n_hidden)
        Starting cavity magnetizations ``m_{i→a}`` in (-1, 1) (copied).
    factor : {"gaussian", "exact"}, default "gaussian"
        How a factor sums over its spins (see the module notes).
    damping : float in [0, 1), default 0
        ``m ← damping · m_old + (1 - damping) · m_new``.
    tol : float, default 1e-9
        Convergence when ``max |m_new - m_old| < tol``.
    max_iter : int, default 500
        The paper's ``t_max``.
    adaptive : bool, default True
        Raise the damping of starts whose messages oscillate (see
        :class:`~pymc_rbm.estimators.damping.AdaptiveDamping`). The paper
        iterates undamped; so does this wherever that does not oscillate.

    Returns
    -------
    BetheSolution
        Converged starts are frozen while the others go on.
    """
    factor = _check_factor(factor)
    if not 0.0 <= damping < 1.0:
        raise ValueError(f"damping must lie in [0, 1), got {damping!r}")
    if max_iter < 1:
        raise ValueError(f"max_iter must be >= 1, got {max_iter!r}")
    check_real(tol, "tol", 0.0)
    mod = _model(spin)
    m = np.array(m0, dtype=np.float64, copy=True)
    if m.ndim == 2:
        m = m[None]
    if m.ndim != 3 or m.shape[1:] != mod.J.shape:
        raise ValueError(f"m0 must have shape (n_starts, {mod.J.shape[0]}, {mod.J.shape[1]}), got {np.shape(m0)}")
    if not np.all(np.abs(m) <= 1.0):
        raise ValueError("m0 must lie in [-1, 1]")
    n = m.shape[0]
    iterations = np.zeros(n, dtype=np.int64)
    residual = np.full(n, np.inf)
    damp = AdaptiveDamping(n, damping, enabled=adaptive)
    active = np.arange(n)
    for it in range(1, max_iter + 1):
        ma = m[active]
        _, x = _cavity_fields(mod, ma, factor)
        u = _half_lncosh_ratio(x, mod.J)  # u_{a→i}, entry [s, i, a]
        field = mod.phi + u.sum(axis=-1, keepdims=True) - u
        delta = np.tanh(field, out=field)
        delta -= ma
        res = np.abs(delta).max(axis=(1, 2))
        m[active] = ma + (1.0 - damp[active, None, None]) * delta
        residual[active] = res
        iterations[active] = it
        damp.update(it, active, res, delta)
        active = active[res >= tol]
        if active.size == 0:
            break
    return BetheSolution(
        m=m,
        log_z=bethe_free_energy(spin, m, factor=factor),
        iterations=iterations,
        residual=residual,
        converged=residual < tol,
        damping=damp.d,
    )


@on_one_blas_thread
def bethe_stability(
    spin: SpinRBMParams, m, *, factor: str = "gaussian", max_iter: int = 200, tol: float = 1e-6
) -> tuple[float, np.ndarray]:
    """Stability parameter λ of Huang & Toyoizumi (2015) eq. (5) at cavity magnetizations ``m``.

    Iterates ``V_{i→a} = (1 - m_{i→a}²)²/4 Σ_{b≠a} P_{b→i} [tanh Γ_{b→i} -
    tanh(Γ_{b→i} - 2 w_bi)]²`` with ``P_{b→i} = Σ_{j≠i} (∂g/∂m)_{jb}² V_{j→b}``
    (``∂g/∂m = w_bj`` for Gaussian factors, as in the paper; the exact
    factors' ``tanh w / (1 - m² tanh² w)`` otherwise) from ``V = 1``,
    renormalizing each step, and returns ``λ = S(t+1) / S(t)`` once it
    changes by less than ``tol`` (relative) or after ``max_iter`` steps.

    Parameters
    ----------
    spin : SpinRBMParams
    m : array_like of shape (n_visible, n_hidden)
        Cavity magnetizations, normally a fixed point.
    factor : {"gaussian", "exact"}
    max_iter : int, default 200
    tol : float, default 1e-6

    Returns
    -------
    lam : float
        λ; above 1 the message passing fixed point is unstable.
    ratios : ndarray
        ``S(t+1)/S(t)`` of every step (its history).
    """
    factor = _check_factor(factor)
    mod = _model(spin)
    m = np.asarray(m, dtype=np.float64)
    if m.shape != mod.J.shape:
        raise ValueError(f"m must have shape {mod.J.shape}, got {m.shape}")
    _, x = _cavity_fields(mod, m, factor)
    D = (np.tanh(x + mod.J) - np.tanh(x - mod.J)) ** 2
    if factor == "gaussian":
        dg2 = mod.J * mod.J
    else:
        mt = m * mod.tanh_J
        dg2 = (mod.tanh_J / (1.0 - mt * mt)) ** 2
    pref = 0.25 * (1.0 - m * m) ** 2
    V = np.full(m.shape, 1.0 / m.size)
    ratios = []
    for _ in range(max_iter):
        dV = dg2 * V
        P = dV.sum(axis=0, keepdims=True) - dV  # P_{b→i}, entry [i, b]
        PD = P * D
        V = pref * (PD.sum(axis=1, keepdims=True) - PD)
        total = V.sum()
        ratios.append(float(total))
        if not total > 0.0:
            break
        V /= total
        if len(ratios) > 1 and abs(ratios[-1] - ratios[-2]) <= tol * ratios[-1]:
            break
    ratios = np.asarray(ratios)
    return float(ratios[-1]), ratios


def _gauss_average(f, mean, std):
    """``∫ Dx f(std·x + mean)`` for arrays ``mean``, ``std`` (Gauss-Hermite, 61 nodes)."""
    z = mean[..., None] + std[..., None] * _GAUSS_NODES
    return f(z) @ _GAUSS_WEIGHTS


@on_one_blas_thread
def bethe_moments(spin: SpinRBMParams, m, *, factor: str = "gaussian") -> BetheMoments:
    """The moments of Huang & Toyoizumi (2015) eq. (6) at cavity magnetizations ``m`` (normally a fixed point).

    ``m_i = tanh(φ_i + Σ_b u_{b→i})`` (6a). With Gaussian factors
    ``m̂_a = ∫Dx tanh(Ξ̃_a x + G̃_a)`` (6b) and
    ``C_aj = m̂_a m_j + w_aj (1 - m_j²) A_a``, ``A_a = 1 - ∫Dx tanh²(Ξ̃_a x + G̃_a)`` (6c),
    with ``G̃_a = Σ_k w_ak m_k + h_a`` and ``Ξ̃_a² = Σ_k w_ak² (1 - m_k²)``. With
    exact factors the factor beliefs of belief propagation are used instead:
    ``m̂_a = tanh(h_a + G_a)`` and ``C_aj`` from the pair belief of ``(s_a, σ_j)``.

    Parameters
    ----------
    spin : SpinRBMParams
    m : array_like of shape (n_visible, n_hidden)
    factor : {"gaussian", "exact"}

    Returns
    -------
    BetheMoments
    """
    factor = _check_factor(factor)
    mod = _model(spin)
    m = np.asarray(m, dtype=np.float64)
    if m.shape != mod.J.shape:
        raise ValueError(f"m must have shape {mod.J.shape}, got {m.shape}")
    f, x = _cavity_fields(mod, m, factor)
    u = _half_lncosh_ratio(x, mod.J)
    mi = np.tanh(mod.phi[:, 0] + u.sum(axis=1))
    J = mod.J
    if factor == "gaussian":
        G = mi @ J + mod.h
        Xi = np.sqrt(np.maximum((J * J).T @ (1.0 - mi * mi), 0.0))
        m_hat = _gauss_average(np.tanh, G, Xi)
        A = 1.0 - _gauss_average(lambda z: np.tanh(z) ** 2, G, Xi)
        C = np.outer(m_hat, mi) + J.T * (1.0 - mi * mi)[None, :] * A[:, None]
    else:
        m_hat = np.tanh(mod.h + f.g.sum(axis=0))
        # pair belief of (s_a, σ_j): ∝ e^{s (x_ja + w_ja σ)} (1 + σ m_{j→a}) / 2
        with np.errstate(divide="ignore"):  # m = ±1 exactly: that branch has weight 0
            lw_up = np.log1p(m) + _lncosh(x + J)
            lw_dn = np.log1p(-m) + _lncosh(x - J)
        top = np.maximum(lw_up, lw_dn)
        w_up, w_dn = np.exp(lw_up - top), np.exp(lw_dn - top)
        C = ((w_up * np.tanh(x + J) - w_dn * np.tanh(x - J)) / (w_up + w_dn)).T
    return BetheMoments(m=mi, m_hat=m_hat, C=C)


def _starts(spin: SpinRBMParams, n_starts: int, data, n_data_starts: int, rng) -> np.ndarray:
    """Start 0: ``m_{i→a} = tanh(φ_i)`` (no factor); then uniform random in (-1, 1); then data rows."""
    if n_starts < 1:
        raise ValueError(f"n_starts must be >= 1, got {n_starts!r}")
    rng = np.random.default_rng(0 if rng is None else rng)
    shape = spin.J.shape
    rows = [np.broadcast_to(np.tanh(spin.vfield)[:, None], shape)[None]]
    rows.append(rng.uniform(-1.0, 1.0, size=(n_starts - 1, *shape)))
    if data is not None:
        d = check_binary(data, shape[0], name="data").reshape(-1, shape[0])
        k = min(int(n_data_starts), d.shape[0])
        if k > 0:
            pick = d[np.sort(rng.choice(d.shape[0], size=k, replace=False))]
            rows.append(np.broadcast_to((0.98 * (2.0 * pick - 1.0))[:, :, None], (k, *shape)))
    return np.concatenate(rows, axis=0)


def _run(params, *, factor, n_starts, data, n_data_starts, damping, tol, max_iter, adaptive, rng):
    if not isinstance(params, RBMParams):
        raise TypeError(f"params must be an RBMParams, got {type(params).__name__}")
    spin = params.astype(np.float64).to_spin()
    sol = bethe_message_passing(
        spin,
        _starts(spin, n_starts, data, n_data_starts, rng),
        factor=factor,
        damping=damping,
        tol=tol,
        max_iter=max_iter,
        adaptive=adaptive,
    )
    pool = np.flatnonzero(sol.converged)
    if pool.size == 0:
        pool = np.arange(sol.log_z.size)
    best = int(pool[np.argmax(sol.log_z[pool])])
    return spin, sol, best


def _warn_untrustworthy(what: str, sol: BetheSolution, best: int, lam: float = float("nan")) -> None:
    """Warn when the chosen fixed point did not converge or is unstable (λ >= 1, eq. 5); ``what`` ends in its verb."""
    problems = []
    if not sol.converged[best]:
        problems.append(
            f"the message passing did not converge (residual {sol.residual[best]:.3g} after "
            f"{int(sol.iterations[best])} iterations)"
        )
    if lam >= 1.0:
        problems.append(f"its fixed point is unstable (stability parameter {lam:.3g} >= 1)")
    if problems:
        warnings.warn(
            f"Bethe: {what} not trustworthy: {' and '.join(problems)}. The couplings are too strong for "
            "the approximation; use AIS, RTS or SAMS for log Z, sampling for moments",
            RuntimeWarning,
            stacklevel=3,
        )


def log_partition_bethe(
    params: RBMParams,
    *,
    factor: str = "gaussian",
    n_starts: int = 1,
    data=None,
    n_data_starts: int = 8,
    damping: float = 0.0,
    tol: float = 1e-9,
    max_iter: int = 500,
    adaptive: bool = True,
    stability: bool = True,
    rng=None,
) -> LogPartitionEstimate:
    """Bethe estimate of ``log Z`` by message passing (Huang & Toyoizumi 2015, eqs. 3-5).

    Parameters
    ----------
    params : RBMParams
        The binary model; the algorithm runs on ``params.to_spin()`` and adds
        its ``log_offset``.
    factor : {"gaussian", "exact"}, default "gaussian"
        "gaussian": the paper's central-limit form of the factor messages;
        "exact": the exact factor sums (plain loopy BP, exact on trees).
    n_starts : int, default 1
        Start 0 is ``m_{i→a} = tanh(φ_i)``; the others are uniform random in
        (-1, 1), as in the paper.
    data : array_like of shape (n_samples, n_visible), optional
        Binary rows used as further starts (``m_{i→a} = ±0.98``).
    n_data_starts : int, default 8
    damping : float in [0, 1), default 0
    tol : float, default 1e-9
    max_iter : int, default 500
    adaptive : bool, default True
        Raise the damping of oscillating starts (see :func:`bethe_message_passing`).
    stability : bool, default True
        Compute λ of eq. (5) at the chosen fixed point.
    rng : numpy.random.Generator or seed, optional
        Draws the random starts; default a fixed seed (deterministic).

    Returns
    -------
    LogPartitionEstimate
        A ``RuntimeWarning`` says when the chosen fixed point did not
        converge or is unstable (λ >= 1): strong couplings, where the
        estimate can be far off. ``stderr`` 0. ``diagnostics``: ``iterations``, ``residual``,
        ``converged`` (of the chosen start, the converged start of lowest
        Bethe free energy), ``n_starts``, ``n_converged``, ``values`` (every
        start's ``log Z``), ``stability`` (λ; NaN when not computed),
        ``stable`` (λ < 1), ``factor``, ``free_energy_spin`` (``F``).

    Examples
    --------
    >>> from pymc_rbm import RBMParams
    >>> from pymc_rbm.estimators import log_partition_exact
    >>> p = RBMParams.random(9, 1, rng=0)  # one hidden unit: a tree
    >>> est = log_partition_bethe(p, factor="exact")
    >>> abs(est.log_z - log_partition_exact(p).log_z) < 1e-9
    True
    """
    spin, sol, best = _run(
        params,
        factor=_check_factor(factor),
        n_starts=n_starts,
        data=data,
        n_data_starts=n_data_starts,
        damping=damping,
        tol=tol,
        max_iter=max_iter,
        adaptive=adaptive,
        rng=rng,
    )
    lam = bethe_stability(spin, sol.m[best], factor=factor)[0] if stability else float("nan")
    log_z_spin = float(sol.log_z[best])
    _warn_untrustworthy(f"the estimate log Z = {log_z_spin + spin.log_offset:.6g} is", sol, best, lam)
    return LogPartitionEstimate(
        fingerprint=fingerprint_of(params),
        log_z=log_z_spin + spin.log_offset,
        method="bethe",
        kind="approximation",
        diagnostics={
            "iterations": int(sol.iterations[best]),
            "residual": float(sol.residual[best]),
            "converged": bool(sol.converged[best]),
            "n_starts": int(sol.log_z.size),
            "n_converged": int(sol.converged.sum()),
            "best_start": best,
            "damping": float(sol.damping[best]),
            "values": sol.log_z + spin.log_offset,
            "stability": lam,
            "stable": bool(lam < 1.0) if stability else None,
            "factor": factor,
            "free_energy_spin": -log_z_spin,
            "log_offset": spin.log_offset,
        },
    )


def moments_bethe(
    params: RBMParams,
    *,
    factor: str = "gaussian",
    n_starts: int = 1,
    data=None,
    n_data_starts: int = 8,
    damping: float = 0.0,
    tol: float = 1e-9,
    max_iter: int = 500,
    adaptive: bool = True,
    rng=None,
) -> Moments:
    """``⟨v⟩``, ``⟨h⟩`` and ``⟨v hᵀ⟩`` from the Bethe fixed point (Huang & Toyoizumi 2015, eq. 6).

    The spin moments ``m``, ``m̂``, ``C`` of :func:`bethe_moments` are mapped
    to the binary ones: ``⟨v⟩ = (1 + m)/2``, ``⟨h⟩ = (1 + m̂)/2`` and
    ``⟨v_i h_a⟩ = (1 + m_i + m̂_a + C_ai)/4``. Options as in
    :func:`log_partition_bethe`.

    Returns
    -------
    Moments
    """
    spin, sol, best = _run(
        params,
        factor=_check_factor(factor),
        n_starts=n_starts,
        data=data,
        n_data_starts=n_data_starts,
        damping=damping,
        tol=tol,
        max_iter=max_iter,
        adaptive=adaptive,
        rng=rng,
    )
    _warn_untrustworthy("the moments are", sol, best)
    mom = bethe_moments(spin, sol.m[best], factor=factor)
    v = 0.5 * (1.0 + mom.m)
    h = 0.5 * (1.0 + mom.m_hat)
    vh = 0.25 * (1.0 + mom.m[:, None] + mom.m_hat[None, :] + mom.C.T)
    return Moments(v=v, h=h, vh=vh)

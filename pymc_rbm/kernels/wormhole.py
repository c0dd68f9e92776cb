"""Wormhole moves (Hinton, Welling & Mnih 2003): long-range Metropolis proposals suggested by the data.

Hinton, Welling and Mnih (2003, "Wormholes improve contrastive divergence")
use the training data to propose jumps between modes that brief MCMC cannot
connect. A move here **only proposes**: ``propose(rng, x)`` returns a
:class:`WormholeProposal` (the proposed states and the log proposal ratio
``log q(x | x') - log q(x' | x)``), and :func:`wormhole_step` accepts it with
the one shared Metropolis decision :func:`~pymc_rbm.kernels.metropolis_accept`
and the full log density of the model, so every move is exact for any target.

- :class:`PointWormholes` (§2): the offset between two distinct data points
  chosen at random, ``x' = x + (d_a - d_b)`` (continuous) or
  ``x' = x XOR d_a XOR d_b`` (binary). Symmetric: ``log_q_ratio = 0``.
- :class:`OptimizationWormholes` (§3, continuous): the forward jump
  ``x0 + d``, a few steps of steepest descent on ``-log π``, a Gaussian from
  the diagonal, positive-definite-adjusted Hessian, a draw ``y`` from it, the
  backward jump ``y - d`` and its Gaussian; ``log_q_ratio = log g_z(x0) - log g_x(y)``.
- :class:`RegionWormholes` (§4, "darting"): regions fitted to the data.
  Continuous: the ellipsoids ``(x - μ_k)ᵀ Σ_k⁻¹ (x - μ_k) <= α²`` of a Gaussian
  mixture fitted by EM, mapped onto each other by eq. (8) (with its minus
  sign). Binary: Hamming balls of one radius around cluster centres (modes of
  a Bernoulli mixture fitted by EM), mapped by XOR of the centres. Both use the
  overlap rule of eq. (9).

All moves act on a batch of chains, ``x`` of shape ``(n_chains, n_units)``,
and never modify their inputs.

**Why region wormholes are exact (eq. 9).** From ``x`` let ``n(x)`` be the
number of regions that contain it. If ``n(x) = 0`` the move stays put.
Otherwise it picks a departure region ``i`` uniformly among those ``n(x)``, a
target ``j`` with probability ``P_j`` (continuous: ``P_j = V_j / Σ_k V_k``, the
equilibrium of eq. (5); binary: uniformly among the *other* regions, which all
have the same volume), and proposes ``x' = T_ij(x)``. Each ``T_ij`` maps region
``i`` one-to-one onto region ``j`` and ``T_ji`` is its inverse:

- continuous, eq. (8): ``T_ij(x) = μ_j - A_j A_i⁻¹ (x - μ_i)`` with
  ``A_k = U_k S_k^{1/2}`` from ``Σ_k = U_k S_k U_kᵀ``; it keeps the Mahalanobis
  radius, and its Jacobian determinant is ``V_j / V_i`` in absolute value;
- binary: ``T_ij(x) = x XOR c_i XOR c_j`` keeps the Hamming distance to the
  centre, and is its own inverse.

The reverse move picks ``j`` among the ``n(x')`` regions of ``x'`` and ``i``
with probability ``P_i``. The Metropolis-Hastings ratio of the pair
``(i, j)`` is therefore (``J`` the absolute Jacobian determinant of ``T_ij``)::

    π(x') P_i / n(x') · J  /  (π(x) P_j / n(x))  =  n(x) π(x') / (n(x') π(x))

(continuous: ``P_i V_j / (P_j V_i) = 1``; binary: ``P_i = P_j``, Jacobian 1),
which is eq. (9). So ``log_q_ratio = log n(x) - log n(x')`` (for the
continuous map it includes the Jacobian), the same for every pair; a proposal
that several pairs reach is accepted with the same ratio.

**Why the optimization move is exact (§3).** Given the offset ``d`` (drawn
with ``P(d) = P(-d)``), the proposal density is ``g_{x0+d}(y)``; the reverse
move from ``y`` uses offset ``-d`` and density ``g_{y-d}(x0)``. The descent is
deterministic, so ``m_x`` and ``Σ_x`` are functions of ``x`` and the ratio
``π(y) g_z(x0) / (π(x0) g_x(y))`` with ``z = y - d`` makes each pair of
kernels ``(d, -d)`` reversible; their mixture is reversible too.

For example, point wormholes between two modes at ±3:

>>> import numpy as np
>>> from pymc_rbm.kernels.wormhole import PointWormholes, wormhole_step
>>> data = np.array([[-3.0], [-3.1], [3.0], [2.9]])
>>> moves = PointWormholes(data, binary=False)
>>> log_density = lambda x: -0.5 * np.min((x - np.array([-3.0, 3.0])) ** 2, axis=1)
>>> x, info = wormhole_step(np.random.default_rng(0), np.zeros((5, 1)) - 3.0, log_density, moves)
>>> x.shape, info.accepted.shape
((5, 1), (5,))
"""

from __future__ import annotations

import copy
from typing import NamedTuple

import numpy as np
from scipy.special import gammaln, logsumexp
from scipy.stats import chi2

from pymc_rbm.kernels.metropolis import metropolis_accept
from pymc_rbm.mixtures import fit_bernoulli_mixture, fit_gaussian_mixture
from pymc_rbm.validation import check_binary, check_bool

__all__ = [
    "WormholeProposal",
    "WormholeInfo",
    "PointWormholes",
    "OptimizationWormholes",
    "RegionWormholes",
    "wormhole_step",
]


class WormholeProposal(NamedTuple):
    """What a wormhole move proposes for a batch of chains.

    Attributes
    ----------
    x : ndarray of shape (n_chains, n_units)
        Proposed states (a new array; equal to the input where no jump was
        possible, e.g. outside every region).
    log_q_ratio : ndarray of float64 of shape (n_chains,)
        ``log q(x | x') - log q(x' | x)``; for the deterministic maps of
        region wormholes it includes the Jacobian (eq. 9: ``log n(x) - log n(x')``).
    region_changed : ndarray of bool of shape (n_chains,)
        Region wormholes: the target region differs from the departure
        region. Point and optimization wormholes have no regions: True where
        a jump through a wormhole was proposed (the data offset is not zero).
    """

    x: np.ndarray
    log_q_ratio: np.ndarray
    region_changed: np.ndarray


class WormholeInfo(NamedTuple):
    """What one :func:`wormhole_step` did, per chain.

    Attributes
    ----------
    accepted : ndarray of bool of shape (n_chains,)
        The proposal was accepted (trivially so where it equals the state).
        Accepted jumps are ``accepted & region_changed``.
    log_alpha : ndarray of float64 of shape (n_chains,)
        Log Metropolis-Hastings ratio ``log π(x') - log π(x) + log_q_ratio``
        (accepted with probability ``min(1, exp(log_alpha))``).
    region_changed : ndarray of bool of shape (n_chains,)
        As in :class:`WormholeProposal`.
    """

    accepted: np.ndarray
    log_alpha: np.ndarray
    region_changed: np.ndarray


# ----------------------------------------------------------------- input checks
def _check_data(data, binary: bool, min_rows: int = 2) -> np.ndarray:
    """A float64 copy of ``data`` of shape (n_data, n_units), validated."""
    arr = np.asarray(data)
    if arr.ndim != 2:
        raise ValueError(f"data must have shape (n_data, n_units), got shape {arr.shape}")
    if arr.shape[0] < min_rows:
        raise ValueError(f"data must hold at least {min_rows} rows, got {arr.shape[0]}")
    if arr.shape[1] < 1:
        raise ValueError("data must have at least one unit (column)")
    if binary:
        return check_binary(arr, name="data")
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"data must be numeric, got dtype {arr.dtype}")
    arr = arr.astype(np.float64, copy=True)
    if not np.isfinite(arr).all():
        raise ValueError("data must be finite (found NaN or inf)")
    return arr


def _check_states(x, n_units: int, binary: bool) -> np.ndarray:
    """``x`` as an array of shape (n_chains, n_units); never copied or modified."""
    x = np.asarray(x)
    if x.ndim != 2 or x.shape[1] != n_units:
        raise ValueError(f"x must have shape (n_chains, {n_units}), got shape {x.shape}")
    if x.dtype.kind not in "biuf":
        raise ValueError(f"x must be numeric, got dtype {x.dtype}")
    if binary:
        if not ((x == 0) | (x == 1)).all():
            raise ValueError("x must be binary (values in {0, 1}) for binary wormholes")
    elif not np.isfinite(x).all():
        raise ValueError("x must be finite (found NaN or inf)")
    return x


def _xor(x: np.ndarray, flip: np.ndarray) -> np.ndarray:
    """``x XOR flip`` for 0/1 states of any numeric dtype (a new array of ``x``'s dtype)."""
    return np.where(flip, 1 - x, x).astype(x.dtype, copy=False)


def _pairs(rng: np.random.Generator, n_data: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` ordered pairs ``(a, b)`` of distinct indices, uniform over the ``n_data (n_data - 1)`` pairs."""
    a = rng.integers(n_data, size=n)
    b = (a + 1 + rng.integers(n_data - 1, size=n)) % n_data
    return a, b


# ------------------------------------------------------------ point wormholes
class PointWormholes:
    """Point-to-point wormholes of Hinton, Welling & Mnih (2003, §2): jumps by the offset between two data points.

    Every point is connected to ``n_data (n_data - 1)`` others, one per
    ordered pair ``(a, b)`` of distinct data points: ``x' = x + (d_a - d_b)``
    for continuous states, ``x' = x XOR (d_a XOR d_b)`` for binary ones. The
    pair is drawn uniformly, so the proposal is symmetric (the pair ``(b, a)``
    leads back) and ``log_q_ratio = 0``.

    Parameters
    ----------
    data : array_like of shape (n_data, n_units)
        At least two data points; 0/1 values when ``binary``.
    binary : bool
        Binary states (XOR offsets) or continuous ones (vector offsets).

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm.kernels.wormhole import PointWormholes
    >>> moves = PointWormholes(np.array([[0, 0, 1], [1, 1, 1]]), binary=True)
    >>> moves.propose(np.random.default_rng(0), np.zeros((2, 3), dtype=int)).x
    array([[1, 1, 0],
           [1, 1, 0]])
    """

    def __init__(self, data, *, binary: bool):
        self.binary = check_bool(binary, "binary")
        self.data = _check_data(data, self.binary)
        self.data.setflags(write=False)

    @property
    def n_units(self) -> int:
        """Number of units (columns of the data)."""
        return self.data.shape[1]

    def propose(self, rng: np.random.Generator, x) -> WormholeProposal:
        """Propose one jump per chain (stochastic).

        Parameters
        ----------
        rng : numpy.random.Generator
        x : array_like of shape (n_chains, n_units)
            Current states (not modified).

        Returns
        -------
        WormholeProposal
            ``x`` keeps the dtype of the input.
        """
        x = _check_states(x, self.n_units, self.binary)
        a, b = _pairs(rng, self.data.shape[0], x.shape[0])
        if self.binary:
            flip = self.data[a] != self.data[b]
            new = _xor(x, flip)
            changed = flip.any(axis=1)
        else:
            offset = self.data[a] - self.data[b]
            new = x + offset
            changed = (offset != 0).any(axis=1)
        return WormholeProposal(new, np.zeros(x.shape[0]), changed)

    def proposal_distribution(self, x) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """All proposals from one binary state with their probabilities (for exact checks).

        Parameters
        ----------
        x : array_like of shape (n_units,)
            One binary state.

        Returns
        -------
        targets : ndarray of shape (m, n_units)
            One row per ordered pair of distinct data points (rows may repeat).
        probs : ndarray of shape (m,)
            Probability of each row, ``1 / (n_data (n_data - 1))``.
        log_q_ratio : ndarray of shape (m,)
            Zeros (the proposal is symmetric).
        """
        if not self.binary:
            raise ValueError("proposal_distribution lists a discrete proposal: binary wormholes only")
        x = _check_states(np.asarray(x)[None, :], self.n_units, True)[0]
        n = self.data.shape[0]
        a, b = np.nonzero(~np.eye(n, dtype=bool))
        targets = _xor(np.broadcast_to(x, (a.size, x.size)), self.data[a] != self.data[b])
        return targets, np.full(a.size, 1.0 / a.size), np.zeros(a.size)


# ----------------------------------------------------- optimization wormholes
class OptimizationWormholes:
    """Optimization-based wormholes of Hinton, Welling & Mnih (2003, §3), for continuous states.

    From ``x0``: draw the offset ``d = d_a - d_b`` of two distinct data points;
    jump forward to ``x = x0 + d``; run ``n_descent`` steps of steepest descent
    on the energy ``E = -log π`` from ``x`` to ``m_x``; take the diagonal of
    the Hessian of ``E`` at ``m_x``, made positive definite by adding a
    multiple of the identity (the smallest that lifts every entry to at least
    ``min_curvature``), as the precision of a Gaussian ``g_x``; draw
    ``y ~ g_x``; jump back ``z = y - d`` and build ``g_z`` the same way. The
    log proposal ratio is ``log g_z(x0) - log g_x(y)`` (see the module
    docstring for why this is exact).

    Steepest descent uses a deterministic backtracking (Armijo) line search
    per step, its step length growing by ``step_growth`` (1.5) after a success
    and halving on a failure (at most ``max_backtracks`` halvings; a row whose
    line search fails is converged and stops), so ``m_x`` is a function of
    ``x`` alone, as exactness needs. The
    diagonal Hessian is computed by central differences of the gradient (2
    gradient evaluations per unit, all in one batched call), or by
    ``hessian_diag`` when given; Hinton, Welling & Mnih (2003) used the method of Becker and LeCun
    for the same diagonal.

    Parameters
    ----------
    data : array_like of shape (n_data, n_units)
        At least two data points.
    log_density_and_grad : callable
        ``f(x) -> (log_pi, grad)`` for a batch ``x`` of shape ``(n, n_units)``:
        ``log π`` of shape ``(n,)`` (unnormalized is fine) and its gradient,
        shape ``(n, n_units)``. Non-finite values stop the descent there.
    n_descent : int, default 20
        Steepest-descent steps (Hinton, Welling & Mnih 2003: 20).
    step_size : float, default 0.1
        Initial step length of the line search.
    min_curvature : float, default 1e-2
        Smallest diagonal Hessian entry after the positive-definite
        adjustment; ``1 / min_curvature`` bounds the proposal variance.
    fd_step : float, default 1e-5
        Relative step of the central differences.
    hessian_diag : callable, optional
        ``h(x) -> (n, n_units)``: the diagonal of the Hessian of ``-log π``.

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm.kernels.wormhole import OptimizationWormholes
    >>> f = lambda x: (-0.5 * (x**2).sum(1), -x)
    >>> moves = OptimizationWormholes(np.array([[0.0, 0.0], [1.0, 1.0]]), f)
    >>> moves.propose(np.random.default_rng(0), np.ones((3, 2))).x.shape
    (3, 2)
    """

    max_backtracks = 30
    step_growth = 1.5
    gtol = 1e-10

    def __init__(
        self,
        data,
        log_density_and_grad,
        *,
        n_descent: int = 20,
        step_size: float = 0.1,
        min_curvature: float = 1e-2,
        fd_step: float = 1e-5,
        hessian_diag=None,
    ):
        self.data = _check_data(data, binary=False)
        self.data.setflags(write=False)
        if not callable(log_density_and_grad):
            raise TypeError("log_density_and_grad must be callable: f(x) -> (log_pi, grad)")
        if hessian_diag is not None and not callable(hessian_diag):
            raise TypeError("hessian_diag must be callable or None")
        if int(n_descent) != n_descent or n_descent < 0:
            raise ValueError(f"n_descent must be an integer >= 0, got {n_descent!r}")
        for name, value in (("step_size", step_size), ("min_curvature", min_curvature), ("fd_step", fd_step)):
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
        self.log_density_and_grad = log_density_and_grad
        self.hessian_diag = hessian_diag
        self.n_descent = int(n_descent)
        self.step_size = float(step_size)
        self.min_curvature = float(min_curvature)
        self.fd_step = float(fd_step)
        self.binary = False

    @property
    def n_units(self) -> int:
        """Number of units (columns of the data)."""
        return self.data.shape[1]

    def for_target(self, log_density_and_grad) -> OptimizationWormholes:
        """The same moves (data and options) towards another log density: a shallow copy.

        Parameters
        ----------
        log_density_and_grad : callable
            As for the constructor.

        Returns
        -------
        OptimizationWormholes
        """
        if not callable(log_density_and_grad):
            raise TypeError("log_density_and_grad must be callable: f(x) -> (log_pi, grad)")
        out = copy.copy(self)
        out.log_density_and_grad = log_density_and_grad
        return out

    def _evaluate(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        log_pi, grad = self.log_density_and_grad(x)
        log_pi = np.asarray(log_pi, dtype=np.float64).reshape(x.shape[0])
        grad = np.asarray(grad, dtype=np.float64).reshape(x.shape)
        return log_pi, grad

    def descend(self, x) -> np.ndarray:
        """``n_descent`` steps of steepest descent on ``-log π`` from each row (deterministic).

        Parameters
        ----------
        x : array_like of shape (n, n_units)

        Returns
        -------
        ndarray of shape (n, n_units)
            The end points ``m_x`` (a new array).
        """
        m = np.array(x, dtype=np.float64)
        log_pi, grad = self._evaluate(m)
        step = np.full(m.shape[0], self.step_size)
        # a row stops where log π or its gradient is not finite, at a stationary point, or when a
        # whole line search fails (no decrease left above rounding): all functions of x alone
        running = np.isfinite(log_pi) & np.isfinite(grad).all(axis=1)
        for _ in range(self.n_descent):
            running &= np.abs(grad).max(axis=1) > self.gtol
            active = running.copy()
            for _ in range(self.max_backtracks):
                rows = np.flatnonzero(active)
                if rows.size == 0:
                    break
                g = grad[rows]
                trial = m[rows] + step[rows, None] * g
                t_log_pi, t_grad = self._evaluate(trial)
                # Armijo: the energy -log π must fall by at least 1e-4 * step * |g|^2
                ok = np.isfinite(t_log_pi) & (t_log_pi >= log_pi[rows] + 1e-4 * step[rows] * (g * g).sum(axis=1))
                ok &= np.isfinite(t_grad).all(axis=1)
                good = rows[ok]
                m[good], log_pi[good], grad[good] = trial[ok], t_log_pi[ok], t_grad[ok]
                step[good] *= self.step_growth
                step[rows[~ok]] *= 0.5
                active[good] = False
            running &= ~active  # line search exhausted: converged to rounding
            if not running.any():
                break
        return m

    def curvature(self, m) -> np.ndarray:
        """The diagonal Hessian of ``-log π`` at ``m``, adjusted to be positive definite (deterministic).

        Parameters
        ----------
        m : array_like of shape (n, n_units)

        Returns
        -------
        ndarray of shape (n, n_units)
            Precisions of the proposal Gaussian: the diagonal plus the
            smallest multiple of the identity that makes every entry at least
            ``min_curvature`` (non-finite entries count as 0).
        """
        m = np.asarray(m, dtype=np.float64)
        n, k = m.shape
        if self.hessian_diag is not None:
            h = np.asarray(self.hessian_diag(m), dtype=np.float64).reshape(n, k)
        else:
            eps = self.fd_step * np.maximum(1.0, np.abs(m))  # (n, k)
            shift = np.einsum("nk,kl->nkl", eps, np.eye(k))  # row (i, k): eps_ik e_k
            points = np.concatenate([(m[:, None, :] + shift), (m[:, None, :] - shift)]).reshape(2 * n * k, k)
            _, g = self._evaluate(points)
            g = g.reshape(2, n, k, k)
            h = -(np.einsum("nkk->nk", g[0]) - np.einsum("nkk->nk", g[1])) / (2.0 * eps)
        h = np.where(np.isfinite(h), h, 0.0)
        lift = np.maximum(0.0, self.min_curvature - h.min(axis=1))
        return h + lift[:, None]

    def gaussian(self, x) -> tuple[np.ndarray, np.ndarray]:
        """Mean ``m_x`` and diagonal precision of the Gaussian ``g_x`` fitted at each row (deterministic)."""
        m = self.descend(x)
        return m, self.curvature(m)

    @staticmethod
    def _log_gaussian(y, mean, precision) -> np.ndarray:
        r = y - mean
        return 0.5 * (np.log(precision).sum(axis=1) - (precision * r * r).sum(axis=1) - r.shape[1] * np.log(2 * np.pi))

    def propose(self, rng: np.random.Generator, x) -> WormholeProposal:
        """Propose one jump per chain (stochastic); every chain is handled in one batch.

        Parameters
        ----------
        rng : numpy.random.Generator
        x : array_like of shape (n_chains, n_units)
            Current states (not modified).

        Returns
        -------
        WormholeProposal
        """
        x0 = _check_states(x, self.n_units, binary=False).astype(np.float64)
        a, b = _pairs(rng, self.data.shape[0], x0.shape[0])
        d = self.data[a] - self.data[b]
        noise = rng.standard_normal(x0.shape)
        m_x, h_x = self.gaussian(x0 + d)
        y = m_x + noise / np.sqrt(h_x)
        m_z, h_z = self.gaussian(y - d)
        log_q_ratio = self._log_gaussian(x0, m_z, h_z) - self._log_gaussian(y, m_x, h_x)
        return WormholeProposal(y, log_q_ratio, (d != 0).any(axis=1))


# ------------------------------------------------------------ region wormholes
class RegionWormholes:
    """Region wormholes ("darting", Hinton, Welling & Mnih 2003, §4) with the overlap rule of eq. (9).

    Continuous regions are the ellipsoids ``(x - μ_k)ᵀ Σ_k⁻¹ (x - μ_k) <= α²``
    with volume ``V_k = π^{d/2} α^d Π σ_ki / Γ(1 + d/2)`` (eq. 7); a jump
    picks the departure region uniformly among those holding ``x``, the target
    with probability ``V_j / Σ V`` (itself included: the minus sign of eq. (8)
    then reflects ``x`` through the centre) and maps ``x`` by eq. (8).

    Binary regions are the Hamming balls of one ``radius`` around distinct
    centres ``c_k``; a jump picks the departure region uniformly among those
    holding ``x``, the target uniformly among the other regions (all balls
    have the same volume, and the map from a ball to itself would be the
    identity), and maps ``x`` to ``x XOR c_i XOR c_j``.

    A state outside every region stays put. The log proposal ratio is
    ``log n(x) - log n(x')`` (eq. 9). The module docstring proves exactness.

    Parameters
    ----------
    centres : array_like of shape (n_regions, n_units)
        Region centres (0/1 values when ``binary``).
    binary : bool
    covariances : array_like of shape (n_regions, n_units, n_units), optional
        Continuous only: symmetric positive definite covariances.
    alpha : float, optional
        Continuous only: Mahalanobis radius of the ellipsoids. Default
        ``sqrt(chi2.ppf(0.99, n_units))``, the radius that holds 99 % of each
        Gaussian's mass.
    radius : int, optional
        Binary only: Hamming radius of the balls. Default: the largest radius
        whose balls do not overlap, ``(min distance between centres - 1) // 2``.

    See Also
    --------
    RegionWormholes.fit : regions from a mixture fitted to data by EM.

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm.kernels.wormhole import RegionWormholes
    >>> moves = RegionWormholes([[0, 0, 0, 0], [1, 1, 1, 1]], binary=True, radius=1)
    >>> moves.propose(np.random.default_rng(0), np.array([[0, 0, 0, 1]])).x
    array([[1, 1, 1, 0]])
    """

    def __init__(self, centres, *, binary: bool, covariances=None, alpha: float | None = None,
                 radius: int | None = None):
        self.binary = check_bool(binary, "binary")
        if self.binary:
            if covariances is not None or alpha is not None:
                raise ValueError("binary regions are Hamming balls: give radius, not covariances or alpha")
            self._init_binary(centres, radius)
        else:
            if radius is not None:
                raise ValueError("continuous regions are ellipsoids: give covariances and alpha, not radius")
            if covariances is None:
                raise ValueError("continuous region wormholes need the covariances of the regions")
            self._init_continuous(centres, covariances, alpha)
        self.centres.setflags(write=False)

    # ---------------------------------------------------------------- set-up
    def _init_binary(self, centres, radius) -> None:
        c = _check_data(centres, binary=True, min_rows=2)
        _, first = np.unique(c, axis=0, return_index=True)
        if first.size != c.shape[0]:
            raise ValueError("binary region centres must be distinct (two regions with one centre never move)")
        dist = np.abs(c[:, None, :] - c[None]).sum(-1)
        if radius is None:
            radius = int((dist[~np.eye(c.shape[0], dtype=bool)].min() - 1) // 2)
        if int(radius) != radius or radius < 0:
            raise ValueError(f"radius must be an integer >= 0, got {radius!r}")
        self.centres = c
        self.radius = int(radius)
        self.alpha = None
        self.log_volumes = np.zeros(c.shape[0])

    def _init_continuous(self, centres, covariances, alpha) -> None:
        mu = _check_data(centres, binary=False, min_rows=1)
        k, dim = mu.shape
        cov = np.asarray(covariances, dtype=np.float64)
        if cov.shape != (k, dim, dim):
            raise ValueError(f"covariances must have shape {(k, dim, dim)}, got {cov.shape}")
        if not np.isfinite(cov).all() or not np.allclose(cov, np.swapaxes(cov, 1, 2)):
            raise ValueError("covariances must be finite and symmetric")
        s, u = np.linalg.eigh(cov)  # ascending eigenvalues: a fixed pairing of the axes of two regions
        if not (s > 0).all():
            raise ValueError("covariances must be positive definite")
        if alpha is None:
            alpha = float(np.sqrt(chi2.ppf(0.99, dim)))
        if not (np.isfinite(alpha) and alpha > 0):
            raise ValueError(f"alpha must be a finite number > 0, got {alpha!r}")
        self.centres = mu
        self.covariances = cov
        self.alpha = float(alpha)
        self.radius = None
        self._A = u * np.sqrt(s)[:, None, :]  # U S^{1/2}
        self._A_inv = np.swapaxes(u, 1, 2) / np.sqrt(s)[:, :, None]  # S^{-1/2} U^T
        # eq. (7): V = π^{d/2} α^d Π σ_i / Γ(1 + d/2)
        self.log_volumes = (0.5 * dim * np.log(np.pi) + dim * np.log(self.alpha) + 0.5 * np.log(s).sum(axis=1)
                            - gammaln(1 + 0.5 * dim))
        self._target_probs = np.exp(self.log_volumes - logsumexp(self.log_volumes))

    @classmethod
    def fit(cls, data, n_regions: int, *, binary: bool, rng=None, alpha: float | None = None,
            radius: int | None = None, **em_kwargs) -> RegionWormholes:
        """Regions fitted to data: a Gaussian or Bernoulli mixture by EM (stochastic).

        Parameters
        ----------
        data : array_like of shape (n_data, n_units)
        n_regions : int
            Mixture components. Binary: components whose rounded means
            coincide give one region; at least two distinct centres are needed.
        binary : bool
            Bernoulli mixture with Hamming balls around the rounded means
            (binary), or Gaussian mixture with ellipsoids (continuous).
        rng : numpy.random.Generator or seed, optional
            For the EM initialisation.
        alpha : float, optional
            Continuous: size of the ellipsoids (default as in the class).
        radius : int, optional
            Binary: radius of the balls (default as in the class).
        **em_kwargs
            Passed to :func:`pymc_rbm.mixtures.fit_gaussian_mixture` or
            :func:`pymc_rbm.mixtures.fit_bernoulli_mixture`.

        Returns
        -------
        RegionWormholes
            With the fitted mixture as ``mixture`` (weights, means[, covariances]).
        """
        binary = check_bool(binary, "binary")
        if binary:
            if alpha is not None:
                raise ValueError("alpha sizes continuous ellipsoids; binary regions take radius")
            mixture = fit_bernoulli_mixture(data, n_regions, rng=rng, **em_kwargs)
            centres = (mixture[1] > 0.5).astype(np.float64)
            _, first = np.unique(centres, axis=0, return_index=True)
            if first.size < 2:
                raise ValueError(
                    f"the {n_regions}-component Bernoulli mixture has fewer than two distinct centres; "
                    "binary region wormholes need at least two regions"
                )
            out = cls(centres[np.sort(first)], binary=True, radius=radius)
        else:
            if radius is not None:
                raise ValueError("radius sizes binary Hamming balls; continuous regions take alpha")
            mixture = fit_gaussian_mixture(data, n_regions, rng=rng, **em_kwargs)
            out = cls(mixture[1], binary=False, covariances=mixture[2], alpha=alpha)
        out.mixture = mixture
        return out

    # ------------------------------------------------------------- geometry
    @property
    def n_regions(self) -> int:
        """Number of regions."""
        return self.centres.shape[0]

    @property
    def n_units(self) -> int:
        """Number of units."""
        return self.centres.shape[1]

    def membership(self, x) -> np.ndarray:
        """Which regions hold each state.

        Parameters
        ----------
        x : array_like of shape (n_chains, n_units)

        Returns
        -------
        ndarray of bool of shape (n_chains, n_regions)
        """
        x = np.asarray(x)
        if self.binary:
            return (x[:, None, :] != self.centres[None]).sum(axis=-1) <= self.radius
        z = np.einsum("kij,nkj->nki", self._A_inv, x[:, None, :] - self.centres[None])
        return (z * z).sum(axis=-1) <= self.alpha**2

    def map(self, x, i, j) -> np.ndarray:
        """The deterministic map ``T_ij`` from region ``i`` to region ``j``, per chain.

        Parameters
        ----------
        x : array_like of shape (n_chains, n_units)
        i, j : array_like of int of shape (n_chains,)
            Departure and target regions.

        Returns
        -------
        ndarray of shape (n_chains, n_units)
            Binary: ``x XOR c_i XOR c_j``; continuous: eq. (8),
            ``μ_j - A_j A_i⁻¹ (x - μ_i)``.
        """
        x = np.asarray(x)
        if self.binary:
            return _xor(x, self.centres[i] != self.centres[j])
        z = np.einsum("nij,nj->ni", self._A_inv[i], x - self.centres[i])
        return self.centres[j] - np.einsum("nij,nj->ni", self._A[j], z)

    def _choose_targets(self, i: np.ndarray, u: np.ndarray) -> np.ndarray:
        k = self.n_regions
        if self.binary:  # uniform over the other regions
            j = np.minimum((u * (k - 1)).astype(np.int64), k - 2)
            return j + (j >= i)
        return np.minimum(np.searchsorted(np.cumsum(self._target_probs), u, side="right"), k - 1)

    def propose(self, rng: np.random.Generator, x) -> WormholeProposal:
        """Propose one jump per chain; chains outside every region stay put (stochastic).

        Parameters
        ----------
        rng : numpy.random.Generator
        x : array_like of shape (n_chains, n_units)
            Current states (not modified).

        Returns
        -------
        WormholeProposal
        """
        x = _check_states(x, self.n_units, self.binary)
        n = x.shape[0]
        u = rng.random((2, n))
        member = self.membership(x)
        n_depart = member.sum(axis=1)
        inside = n_depart > 0
        # departure: the floor(u n(x))-th region holding x
        rank = np.minimum((u[0] * n_depart).astype(np.int64), np.maximum(n_depart - 1, 0))
        i = np.argmax(np.cumsum(member, axis=1) > rank[:, None], axis=1)
        j = self._choose_targets(i, u[1])
        new = x.copy() if self.binary else x.astype(np.float64, copy=True)
        log_q_ratio = np.zeros(n)
        rows = np.flatnonzero(inside)
        if rows.size:
            moved = self.map(x[rows], i[rows], j[rows])
            arrive = self.membership(moved)
            arrive[np.arange(rows.size), j[rows]] = True  # x' is in region j (guards rounding at the boundary)
            new[rows] = moved
            log_q_ratio[rows] = np.log(n_depart[rows]) - np.log(arrive.sum(axis=1))
        return WormholeProposal(new, log_q_ratio, inside & (i != j))

    def proposal_distribution(self, x) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """All proposals from one binary state with their probabilities (for exact checks).

        Parameters
        ----------
        x : array_like of shape (n_units,)
            One binary state.

        Returns
        -------
        targets : ndarray of shape (m, n_units)
            One row per (departure, target) pair; ``x`` itself (with
            probability 1) when no region holds ``x``.
        probs : ndarray of shape (m,)
            ``1 / (n(x) (n_regions - 1))`` per pair.
        log_q_ratio : ndarray of shape (m,)
            ``log n(x) - log n(x')`` (eq. 9).
        """
        if not self.binary:
            raise ValueError("proposal_distribution lists a discrete proposal: binary wormholes only")
        x = _check_states(np.asarray(x)[None, :], self.n_units, True)
        member = self.membership(x)[0]
        departs = np.flatnonzero(member)
        if departs.size == 0:
            return x.copy(), np.ones(1), np.zeros(1)
        k = self.n_regions
        i, j = np.array([(a, b) for a in departs for b in range(k) if b != a]).T
        targets = self.map(np.repeat(x, i.size, axis=0), i, j)
        n_arrive = self.membership(targets).sum(axis=1)
        probs = np.full(i.size, 1.0 / (departs.size * (k - 1)))
        return targets, probs, np.log(departs.size) - np.log(n_arrive)


# ------------------------------------------------------------- the Metropolis step
def wormhole_step(rng: np.random.Generator, x, log_density, proposal) -> tuple[np.ndarray, WormholeInfo]:
    """One Metropolis-accepted wormhole jump per chain (stochastic).

    Parameters
    ----------
    rng : numpy.random.Generator
    x : array_like of shape (n_chains, n_units)
        Current states (not modified).
    log_density : callable
        ``log_density(x) -> (n_chains,)``: the log target density (up to a
        constant), e.g. ``-free_energy(v, params)`` for the visible units of an RBM.
    proposal : PointWormholes, OptimizationWormholes or RegionWormholes
        Any object with ``propose(rng, x) -> WormholeProposal``.

    Returns
    -------
    x : ndarray of shape (n_chains, n_units)
        New states (a new array): the proposal where accepted.
    info : WormholeInfo
        ``log_alpha = log π(x') - log π(x) + log_q_ratio``, accepted with
        :func:`~pymc_rbm.kernels.metropolis_accept`.

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm import RBMParams
    >>> from pymc_rbm.energy import free_energy
    >>> from pymc_rbm.kernels.wormhole import RegionWormholes, wormhole_step
    >>> params = RBMParams.random(4, 3, rng=0)
    >>> moves = RegionWormholes([[0, 0, 0, 0], [1, 1, 1, 1]], binary=True, radius=1)
    >>> v = np.zeros((3, 4))
    >>> v, info = wormhole_step(np.random.default_rng(1), v, lambda v: -free_energy(v, params), moves)
    >>> info.accepted.shape
    (3,)
    """
    x = np.asarray(x)
    if x.ndim != 2:
        raise ValueError(f"x must have shape (n_chains, n_units), got shape {x.shape}")
    prop = proposal.propose(rng, x)
    with np.errstate(invalid="ignore"):  # -inf - -inf: NaN, rejected
        log_alpha = (
            np.asarray(log_density(prop.x), dtype=np.float64).reshape(x.shape[0])
            - np.asarray(log_density(x), dtype=np.float64).reshape(x.shape[0])
            + prop.log_q_ratio
        )
    accepted = metropolis_accept(rng, log_alpha)
    new = np.where(accepted[:, None], prop.x, x)
    return new, WormholeInfo(accepted, log_alpha, np.asarray(prop.region_changed, dtype=bool))

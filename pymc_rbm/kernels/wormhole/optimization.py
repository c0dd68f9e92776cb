"""Optimization-based wormholes (Hinton, Welling & Mnih 2003, §3), for continuous states.

**Why the optimization move is exact (§3).** Given the offset ``d`` (drawn
with ``P(d) = P(-d)``), the proposal density is ``g_{x0+d}(y)``; the reverse
move from ``y`` uses offset ``-d`` and density ``g_{y-d}(x0)``. The descent is
deterministic, so ``m_x`` and ``Σ_x`` are functions of ``x`` and the ratio
``π(y) g_z(x0) / (π(x0) g_x(y))`` with ``z = y - d`` makes each pair of
kernels ``(d, -d)`` reversible; their mixture is reversible too.
"""

from __future__ import annotations

import copy

import numpy as np

from pymc_rbm.kernels.wormhole.proposal import WormholeProposal, check_data, check_states, distinct_pairs

__all__ = ["OptimizationWormholes"]


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
        self.data = check_data(data, binary=False)
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
        x0 = check_states(x, self.n_units, binary=False).astype(np.float64)
        a, b = distinct_pairs(rng, self.data.shape[0], x0.shape[0])
        d = self.data[a] - self.data[b]
        noise = rng.standard_normal(x0.shape)
        m_x, h_x = self.gaussian(x0 + d)
        y = m_x + noise / np.sqrt(h_x)
        m_z, h_z = self.gaussian(y - d)
        log_q_ratio = self._log_gaussian(x0, m_z, h_z) - self._log_gaussian(y, m_x, h_x)
        return WormholeProposal(y, log_q_ratio, (d != 0).any(axis=1))


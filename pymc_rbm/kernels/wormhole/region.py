"""Region wormholes ("darting", Hinton, Welling & Mnih 2003, §4) with the overlap rule of eq. (9).

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
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln, logsumexp
from scipy.stats import chi2

from pymc_rbm.kernels.wormhole.proposal import WormholeProposal, check_data, check_states, xor_flip
from pymc_rbm.mixtures import fit_bernoulli_mixture, fit_gaussian_mixture
from pymc_rbm.validation import check_bool

__all__ = ["RegionWormholes"]


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
        c = check_data(centres, binary=True, min_rows=2)
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
        mu = check_data(centres, binary=False, min_rows=1)
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
            return xor_flip(x, self.centres[i] != self.centres[j])
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
        x = check_states(x, self.n_units, self.binary)
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
        x = check_states(np.asarray(x)[None, :], self.n_units, True)
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


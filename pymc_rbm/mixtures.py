"""Mixture models fitted by EM: data preparation for region wormholes.

Region wormholes (Hinton, Welling & Mnih 2003, §4;
:class:`~pymc_rbm.kernels.wormhole.region.RegionWormholes`) need regions where the
data lie: the ellipsoids of a full-covariance Gaussian mixture (continuous
data) or Hamming balls around the rounded means of a mixture of independent
Bernoullis (binary data). Both are fitted here by expectation-maximisation
(Dempster, Laird & Rubin 1977) from several k-means++ seedings (Arthur &
Vassilvitskii 2007), keeping the start of highest likelihood. This is
preparation of the data, not a sampling kernel, so it lives outside
:mod:`pymc_rbm.kernels` and imports nothing from the package.

>>> import numpy as np
>>> from pymc_rbm.mixtures import fit_bernoulli_mixture
>>> data = np.array([[0, 0, 0], [0, 0, 1], [1, 1, 1], [1, 1, 0]])
>>> weights, means = fit_bernoulli_mixture(data, 2, rng=0)
>>> weights.shape, means.shape
((2,), (2, 3))
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

__all__ = ["fit_gaussian_mixture", "fit_bernoulli_mixture"]


def _as_data(data, binary: bool) -> np.ndarray:
    """A float64 copy of ``data`` of shape (n_data, n_units), validated (binary: values in {0, 1})."""
    arr = np.asarray(data)
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(f"data must have shape (n_data, n_units) with at least one of each, got shape {arr.shape}")
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"data must be numeric, got dtype {arr.dtype}")
    arr = arr.astype(np.float64, copy=True)
    if not np.isfinite(arr).all():
        raise ValueError("data must be finite (found NaN or inf)")
    if binary and not ((arr == 0) | (arr == 1)).all():
        raise ValueError("binary data must hold values in {0, 1} only")
    return arr


def _init_centres(rng: np.random.Generator, data: np.ndarray, k: int) -> np.ndarray:
    """k-means++ seeding: indices of ``k`` data points, each far from those chosen before."""
    idx = [int(rng.integers(data.shape[0]))]
    dist = ((data - data[idx[0]]) ** 2).sum(axis=1)
    for _ in range(1, k):
        total = dist.sum()
        nxt = int(rng.choice(data.shape[0], p=dist / total)) if total > 0 else int(rng.integers(data.shape[0]))
        idx.append(nxt)
        dist = np.minimum(dist, ((data - data[nxt]) ** 2).sum(axis=1))
    return np.array(idx)


def _check_mixture_args(data, n_components, n_iter, tol, n_init) -> int:
    if int(n_components) != n_components or n_components < 1:
        raise ValueError(f"n_components must be an integer >= 1, got {n_components!r}")
    if n_components > data.shape[0]:
        raise ValueError(f"n_components = {n_components} exceeds the number of data points ({data.shape[0]})")
    if int(n_iter) != n_iter or n_iter < 1 or int(n_init) != n_init or n_init < 1:
        raise ValueError(f"n_iter and n_init must be integers >= 1, got {n_iter!r} and {n_init!r}")
    if not (tol >= 0):
        raise ValueError(f"tol must be >= 0, got {tol!r}")
    return int(n_components)


def fit_gaussian_mixture(data, n_components: int, *, rng=None, n_iter: int = 200, tol: float = 1e-8,
                         reg_covar: float = 1e-6, n_init: int = 3):
    """Fit a full-covariance Gaussian mixture by EM (stochastic initialisation).

    Parameters
    ----------
    data : array_like of shape (n_data, n_units)
    n_components : int
    rng : numpy.random.Generator or seed, optional
    n_iter : int, default 200
        Largest number of EM iterations per start.
    tol : float, default 1e-8
        Stop when the mean log-likelihood gains less than this.
    reg_covar : float, default 1e-6
        Added to the diagonal of every covariance (keeps them positive definite).
    n_init : int, default 3
        Starts (k-means++ seeding); the one with the highest likelihood is kept.

    Returns
    -------
    weights : ndarray of shape (n_components,)
    means : ndarray of shape (n_components, n_units)
    covariances : ndarray of shape (n_components, n_units, n_units)
    """
    x = _as_data(data, binary=False)
    k = _check_mixture_args(x, n_components, n_iter, tol, n_init)
    rng = np.random.default_rng(rng)
    n, dim = x.shape
    eye = np.eye(dim)
    best = None
    for _ in range(int(n_init)):
        centres = x[_init_centres(rng, x, k)]
        labels = np.argmin(((x[:, None, :] - centres[None]) ** 2).sum(-1), axis=1)
        resp = np.eye(k)[labels]
        previous = -np.inf
        for _ in range(int(n_iter)):
            nk = resp.sum(axis=0) + 10 * np.finfo(float).eps
            weights = nk / n
            means = resp.T @ x / nk[:, None]
            diff = x[None] - means[:, None]  # (k, n, dim)
            covs = np.einsum("kn,kni,knj->kij", resp.T, diff, diff) / nk[:, None, None] + reg_covar * eye
            chol = np.linalg.cholesky(covs)
            sol = np.linalg.solve(chol[:, None], diff[..., None])[..., 0]  # L^-1 (x - μ)
            log_det = 2 * np.log(np.diagonal(chol, axis1=1, axis2=2)).sum(axis=1)
            log_comp = -0.5 * ((sol**2).sum(-1) + log_det[:, None] + dim * np.log(2 * np.pi)) + np.log(weights)[:, None]
            log_norm = logsumexp(log_comp, axis=0)
            resp = np.exp(log_comp - log_norm).T
            ll = float(log_norm.mean())
            if ll - previous < tol:
                break
            previous = ll
        if best is None or ll > best[0]:
            best = (ll, weights, means, covs)
    return best[1], best[2], best[3]


def fit_bernoulli_mixture(data, n_components: int, *, rng=None, n_iter: int = 200, tol: float = 1e-8,
                          n_init: int = 3, prior: float = 1e-3):
    """Fit a mixture of independent Bernoullis by EM (stochastic initialisation).

    Parameters
    ----------
    data : array_like of shape (n_data, n_units)
        Values in {0, 1}.
    n_components : int
    rng : numpy.random.Generator or seed, optional
    n_iter : int, default 200
    tol : float, default 1e-8
        Stop when the mean log-likelihood gains less than this.
    n_init : int, default 3
        Starts (k-means++ seeding on Hamming distance); the best is kept.
    prior : float, default 1e-3
        Pseudo-count that keeps every probability inside (0, 1).

    Returns
    -------
    weights : ndarray of shape (n_components,)
    means : ndarray of shape (n_components, n_units)
        ``P(x_i = 1)`` per component.
    """
    x = _as_data(data, binary=True)
    k = _check_mixture_args(x, n_components, n_iter, tol, n_init)
    rng = np.random.default_rng(rng)
    n = x.shape[0]
    best = None
    for _ in range(int(n_init)):
        centres = x[_init_centres(rng, x, k)]
        labels = np.argmin(np.abs(x[:, None, :] - centres[None]).sum(-1), axis=1)
        resp = np.eye(k)[labels]
        previous = -np.inf
        for _ in range(int(n_iter)):
            nk = resp.sum(axis=0)
            weights = (nk + prior) / (n + k * prior)
            means = (resp.T @ x + prior) / (nk[:, None] + 2 * prior)
            log_comp = x @ np.log(means).T + (1 - x) @ np.log1p(-means).T + np.log(weights)  # (n, k)
            log_norm = logsumexp(log_comp, axis=1, keepdims=True)
            resp = np.exp(log_comp - log_norm)
            ll = float(log_norm.mean())
            if ll - previous < tol:
                break
            previous = ll
        if best is None or ll > best[0]:
            best = (ll, weights, means)
    return best[1], best[2]

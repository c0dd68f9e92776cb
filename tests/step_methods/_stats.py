"""Statistical comparison of sampled visible states with an exact distribution, with ESS-based tolerances."""

from __future__ import annotations

import arviz as az
import numpy as np
from scipy.special import logsumexp

from pymc_rbm.estimators import binary_states
from pymc_rbm.testing import state_index


def ess(x) -> np.ndarray:
    """ArviZ ESS over the leading (chain, draw) axes; a constant series counts as 1 effective draw."""
    x = np.asarray(x, dtype=np.float64)
    out = np.atleast_1d(np.asarray(az.ess(x), dtype=np.float64))
    flat = x.reshape(x.shape[0] * x.shape[1], -1)
    constant = np.all(flat == flat[:1], axis=0)
    out = out.reshape(constant.shape)
    out[constant] = 1.0
    return out


def assert_visible_distribution(samples, log_p, *, z: float = 5.0, label: str = "") -> dict:
    """Assert that draws of the visible units follow the exact ``exp(log_p)``.

    Parameters
    ----------
    samples : array of shape (n_chains, n_draws, n_visible)
        0/1 draws.
    log_p : array of shape (2**n_visible,)
        Exact log-probabilities (normalised here), in ``binary_states`` order.
    z : float
        Tolerance in standard errors (ESS-based) for the marginals, and in
        standard deviations above the expected total variation for the full
        distribution.

    Returns
    -------
    dict
        ``tv``, ``tv_bound``, ``max_z`` and ``ess`` (the smallest effective sample size used).
    """
    samples = np.asarray(samples)
    n_chains, n_draws, nv = samples.shape
    p = np.exp(np.asarray(log_p) - logsumexp(log_p))
    states = binary_states(nv)

    # marginals, each against its own ESS
    m_exact = p @ states
    m_hat = samples.mean(axis=(0, 1))
    ess_units = ess(samples.astype(np.float64))
    se = np.sqrt(np.maximum(m_exact * (1 - m_exact), 1e-12) / ess_units)
    zs = np.abs(m_hat - m_exact) / se
    assert zs.max() < z, f"{label}: visible marginals {m_hat} vs exact {m_exact}: |z| up to {zs.max():.2f}"

    # the whole distribution: total variation against its expected size under the smallest ESS
    idx = state_index(samples)
    frequent = np.flatnonzero(p > 0.01)
    indicators = (idx[..., None] == frequent).astype(np.float64)
    n_eff = float(min(ess_units.min(), ess(indicators).min()))
    p_hat = np.bincount(idx.ravel(), minlength=p.size) / idx.size
    tv = 0.5 * np.abs(p_hat - p).sum()
    var = p * (1 - p) / n_eff
    mean_tv = 0.5 * np.sqrt(2 * var / np.pi).sum()  # E|N(0, var)| per state, an upper bound of E|p_hat - p|
    sd_tv = 0.5 * np.sqrt(((1 - 2 / np.pi) * var).sum())
    bound = mean_tv + z * sd_tv
    assert tv < bound, f"{label}: total variation {tv:.4f} exceeds {bound:.4f} (ESS {n_eff:.0f})"
    return {"tv": tv, "tv_bound": bound, "max_z": float(zs.max()), "ess": n_eff}

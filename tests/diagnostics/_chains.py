"""Chains with a known autocorrelation time, and a DataTree shaped like pm.sample's, for the diagnostics tests."""

from __future__ import annotations

import math

import numpy as np
import xarray as xr
from scipy.signal import lfilter


def ar1(rho: float, n_chains: int, n_draws: int, seed: int = 0) -> np.ndarray:
    """Stationary AR(1) chains ``x_t = ρ x_{t-1} + ε_t``, shape (n_chains, n_draws); τ = (1 + ρ) / (1 - ρ)."""
    rng = np.random.default_rng(seed)
    eps = rng.normal(size=(n_chains, n_draws))
    x0 = rng.normal(size=n_chains) / math.sqrt(1.0 - rho * rho)  # start in the stationary law
    x, _ = lfilter([1.0], [1.0, -rho], eps, axis=1, zi=(rho * x0)[:, None])
    return x


def tree(free_energy: np.ndarray, dims=("chain", "draw"), **attrs) -> xr.DataTree:
    """A DataTree shaped like pm.sample's output, built by hand."""
    n_chains, n_draws = free_energy.shape[:2]
    posterior = xr.Dataset(
        {"v": (("chain", "draw", "v_dim_0"), np.zeros((n_chains, n_draws, 3)))},
        coords={"chain": np.arange(n_chains), "draw": np.arange(n_draws)},
        attrs=attrs,
    )
    stats = xr.Dataset(
        {"free_energy": (dims, free_energy), "n_changed": (("chain", "draw"), np.ones((n_chains, n_draws)))},
        coords={"chain": np.arange(n_chains), "draw": np.arange(n_draws)},
    )
    return xr.DataTree.from_dict({"posterior": posterior, "sample_stats": stats})


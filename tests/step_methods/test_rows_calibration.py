"""Simulation-based calibration (Talts, Betancourt, Simpson, Vehtari & Gelman 2018) of an RBM on every row.

A model of 50 latent 4x4 images with the bundled RBM as their prior, seen through Gaussian readouts with
scale, offset and noise unknown. Each simulation draws the shared parameters from their prior and the
images by exact draws of the RBM, simulates the data, and samples the posterior with ``pm.sample()``'s
defaults (NUTS for the shared parameters beside ``ExactDraws``, whose proposals from the RBM's exact
marginal and flip-the-state sweeps take the readouts in as per-unit evidence). The rank of each true parameter among its posterior draws is uniform when the sampler is exact;
a chi-square test of the ranks over 100 simulations must not reject it.
"""

from __future__ import annotations

import logging

import numpy as np
import pymc as pm
import pytest
from scipy import stats

from pymc_rbm import RBM
from pymc_rbm.datasets import bundled_rbm
from pymc_rbm.estimators import sample_visible_exact

N_ROWS = 50
N_SIMULATIONS = 100
N_BINS = 10
DRAWS, TUNE, CHAINS, THIN = 300, 300, 2, 6
SHARED = ("scale", "offset", "sigma")


def prior_draw(rng):
    """Shared parameters from their prior, as in the model below."""
    return {
        "scale": abs(rng.normal(0.0, 3.0)),
        "offset": rng.normal(0.0, 2.0),
        "sigma": abs(rng.normal(0.0, 2.0)),
    }


def ranks_of_one_simulation(params, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    truth = prior_draw(rng)
    v = sample_visible_exact(params, N_ROWS, rng=rng)
    y = truth["scale"] * v + truth["offset"] + truth["sigma"] * rng.normal(size=v.shape)
    with pm.Model():
        scale = pm.HalfNormal("scale", 3.0)
        offset = pm.Normal("offset", 0.0, 2.0)
        sigma = pm.HalfNormal("sigma", 2.0)
        latent = RBM("v", params.W, params.vbias, params.hbias, shape=y.shape)
        pm.Normal("y", scale * latent + offset, sigma, observed=y)
        idata = pm.sample(draws=DRAWS, tune=TUNE, chains=CHAINS, cores=1, random_seed=seed, progressbar=False,
                          compute_convergence_checks=False)
    post = idata.posterior
    return {name: int((post[name].values[:, ::THIN] < truth[name]).sum()) for name in SHARED}


@pytest.mark.slow
def test_shared_parameters_of_a_50_row_model_are_calibrated():
    logging.getLogger("pymc").setLevel(logging.ERROR)
    params = bundled_rbm()
    ranks = [ranks_of_one_simulation(params, 1000 + s) for s in range(N_SIMULATIONS)]
    n_ranks = CHAINS * len(range(0, DRAWS, THIN)) + 1  # ranks 0 .. n_draws
    for name in SHARED:
        counts = np.bincount(np.array([r[name] for r in ranks]) * N_BINS // n_ranks, minlength=N_BINS)
        p_value = stats.chisquare(counts).pvalue
        assert p_value > 0.01, (name, counts, p_value)

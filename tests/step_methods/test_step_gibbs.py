"""BlockGibbs through pm.sample: the kernel itself, exactness alone, with a likelihood, batched."""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import logsumexp
from scipy.stats import norm

from pymc_rbm import RBM, BlockGibbs, FlipTheState, RBMParams
from pymc_rbm.energy import free_energy
from pymc_rbm.estimators import binary_states, log_marginal_visible
from pymc_rbm.kernels import RBMState, gibbs_sweep

from ._stats import assert_visible_distribution

NV, NH = 6, 4
SAMPLE = dict(tune=200, progressbar=False, compute_convergence_checks=False)
A = np.array([-1.2, 0.9, 0.4, -0.7, 1.1, 0.5])
SIGMA = 0.4


@pytest.fixture(scope="module")
def params():
    return RBMParams.random(NV, NH, scale=2.0, rng=21)


def posterior_log_p(params, y):
    lp = log_marginal_visible(params) + norm.logpdf(y, binary_states(NV) @ A, SIGMA)
    return lp - logsumexp(lp)


def test_step_is_the_kernel(params):
    """With the same generator, the step's draws are gibbs_sweep's, batch of chains included."""
    with pm.Model() as model:
        RBM("v", params.W, params.vbias, params.hbias, shape=(5, NV))
        step = BlockGibbs(sweeps=3)
    assert not step.corrected
    step.setup_chain(np.random.default_rng(2), 0, 1)
    point = model.initial_point()
    rng = np.random.default_rng(2)
    state = RBMState(point["v"].astype(float), np.zeros((5, NH)))
    for _ in range(100):
        point, stats = step.step(point)
        for _ in range(3):
            state, _ = gibbs_sweep(rng, state, params)
        assert_array_equal(point["v"], state.v)
    assert_allclose(stats[0]["free_energy"], free_energy(state.v, params), rtol=1e-12)
    assert stats[0]["free_energy"].shape == (5,)


@pytest.mark.parametrize("sweeps", [1, 4])
def test_rbm_alone_matches_enumeration(params, sweeps):
    with pm.Model():
        RBM("v", params.W, params.vbias, params.hbias)
        idata = pm.sample(draws=3000, chains=2, cores=1, step=BlockGibbs(sweeps=sweeps), random_seed=11, **SAMPLE)
    assert_visible_distribution(idata.posterior["v"].values, log_marginal_visible(params), label=f"sweeps={sweeps}")


@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")  # PyMC forks
def test_likelihood_and_batch(params):
    """Two chains in one variable, each with its own Gaussian observation: p(v_k | y_k) by enumeration."""
    ys = np.array([1.3, -0.6])
    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias, shape=(2, NV))
        pm.Normal("y", v @ A, SIGMA, observed=ys)
        step = BlockGibbs()
        idata = pm.sample(draws=3000, chains=2, cores=2, step=step, random_seed=12, **SAMPLE)
    assert step.corrected and step.rest_terms == ["y"]
    vs = idata.posterior["v"].values
    for k, y in enumerate(ys):
        assert_visible_distribution(vs[:, :, k], posterior_log_p(params, y), label=f"chain {k}")
    accept = idata.sample_stats["accept"].values
    assert accept.shape == (2, 3000, 2) and 0.05 < accept.mean() < 0.95


def test_two_steps_on_the_same_variable(params):
    """Gibbs and flip-the-state alternate on v: each sees v moved by the other (flip refreshes h)."""
    ys = 0.8
    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias)
        pm.Normal("y", v @ A, SIGMA, observed=ys)
        steps = [BlockGibbs([v]), FlipTheState([v])]
        idata = pm.sample(draws=3000, chains=2, cores=1, step=steps, random_seed=13, **SAMPLE)
    assert_visible_distribution(idata.posterior["v"].values, posterior_log_p(params, ys), label="alternating")
    refreshed = idata.sample_stats["refreshed"].values  # last axis: sampler 0 (Gibbs), 1 (flip-the-state)
    assert refreshed.shape == (2, 3000, 2) and refreshed[..., 1].mean() > 0.2

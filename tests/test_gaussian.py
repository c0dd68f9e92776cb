"""Gaussian-Bernoulli RBMs: log Z by numerical integration, logp as the explicit mixture, sampled means vs exact."""

from __future__ import annotations

import itertools

import numpy as np
import pymc as pm
import pytest
from numpy.testing import assert_allclose
from scipy import integrate
from pymc.sampling.mcmc import assign_step_methods
from scipy.stats import multivariate_normal

from pymc_rbm.gaussian import (
    GaussianAtBeta,
    GaussianRBMParams,
    energy,
    free_energy,
    gaussian_at_beta,
    hidden_marginal,
    log_partition_exact,
    log_prob_exact,
    mean_exact,
    sample_exact,
)
from pymc_rbm.kernels.layer import GIBBS
from pymc_rbm.kernels.state import RBMState
from pymc_rbm.kernels.sweep import sweep
from pymc_rbm.layers import Gaussian

P2 = GaussianRBMParams.random(2, 3, scale=1.2, rng=3)


def brute_energy(v, h, p):
    """The textbook energy, loops."""
    e = sum((v[i] - p.vbias[i]) ** 2 / (2 * p.sigma[i] ** 2) for i in range(len(v)))
    e -= sum(p.hbias[j] * h[j] for j in range(len(h)))
    e -= sum(v[i] / p.sigma[i] * p.W[i, j] * h[j] for i in range(len(v)) for j in range(len(h)))
    return e


def test_log_z_by_numerical_integration():
    """2 visible units: ∫∫ Σ_h exp(-E(v, h)) dv by adaptive quadrature, independent of the closed form."""
    hs = np.array(list(itertools.product((0, 1), repeat=3)), dtype=np.float64)

    def unnormalised(v1, v0):  # Σ_h exp(-E(v, h)), the textbook energy over all 8 hidden states at once
        v = np.array([v0, v1])
        quadratic = (((v - P2.vbias) / P2.sigma) ** 2 / 2).sum()
        return np.exp(-quadratic + hs @ P2.hbias + hs @ ((v / P2.sigma) @ P2.W)).sum()

    z, err = integrate.dblquad(unnormalised, -15, 15, -15, 15, epsabs=1e-12, epsrel=1e-11)
    assert abs(log_partition_exact(P2) - np.log(z)) < 1e-8


def test_logp_is_the_mixture_of_gaussians():
    p = GaussianRBMParams.random(3, 4, scale=1.0, rng=5)
    Hs, w = hidden_marginal(p)
    v = np.random.default_rng(0).normal(size=(7, 3)) * 2
    cov = np.diag(p.sigma**2)
    mix = sum(wk * multivariate_normal(p.vbias + p.sigma * (p.W @ h), cov).pdf(v) for wk, h in zip(w, Hs))
    assert np.max(np.abs(log_prob_exact(v, p) - np.log(mix))) < 1e-8
    h = Hs[5]
    assert_allclose(energy(v[0], h, p), brute_energy(v[0], h, p), rtol=1e-13)
    assert_allclose(-free_energy(v, p), np.log([sum(np.exp(-brute_energy(x, hh, p)) for hh in Hs) for x in v]),
                    rtol=1e-12)


def test_the_gaussian_layer_is_its_definition():
    g = Gaussian([0.5, 2.0])
    f = np.array([[1.3, -0.4]])
    x = np.linspace(-30, 30, 200001)
    for i in range(2):
        dens = np.exp(f[0, i] * x - x**2 / (2 * g.sigma[i] ** 2))
        assert_allclose(g.log_normaliser(f)[0, i], np.log(integrate.trapezoid(dens, x)), rtol=1e-9)
        assert_allclose(g.mean(f)[0, i], integrate.trapezoid(x * dens, x) / integrate.trapezoid(dens, x), rtol=1e-8)
    with pytest.raises(ValueError, match="continuous"):
        g.states(2)
    with pytest.raises(ValueError, match="sigma > 0"):
        Gaussian([1.0, 0.0])
    assert Gaussian([1.0]) == Gaussian([1.0]) and Gaussian([1.0]) != Gaussian([2.0])


def test_params_validation_and_save_load(tmp_path):
    with pytest.raises(ValueError, match="sigma must be > 0"):
        GaussianRBMParams(P2.W, P2.vbias, P2.hbias, [1.0, -1.0])
    with pytest.raises(ValueError, match=r"needs \(3,\)"):
        GaussianRBMParams(P2.W, P2.vbias, [0.0, 1.0])
    P2.save(tmp_path / "g")
    back = GaussianRBMParams.load(tmp_path / "g.npz")
    assert back == P2 and back.fingerprint() == P2.fingerprint()


def test_exact_draws_and_gibbs_sweeps_have_the_exact_mean_and_second_moment():
    p = GaussianRBMParams.random(3, 4, scale=1.0, rng=5)
    Hs, w = hidden_marginal(p)
    m = mean_exact(p)
    second = sum(wk * (np.outer(mu, mu) + np.diag(p.sigma**2)) for wk, mu in zip(w, p.vbias + p.sigma * (Hs @ p.W.T)))
    draws = sample_exact(p, 200000, rng=1)
    assert np.max(np.abs(draws.mean(axis=0) - m)) < 0.02
    rng = np.random.default_rng(2)
    state = RBMState(rng.normal(size=(4000, 3)), None)
    for _ in range(50):
        state, _ = sweep(rng, state, GaussianAtBeta(p), GIBBS)
    acc_m, acc_s = np.zeros(3), np.zeros((3, 3))
    for _ in range(50):
        state, _ = sweep(rng, state, GaussianAtBeta(p), GIBBS)
        acc_m += state.v.mean(axis=0) / 50
        acc_s += state.v.T @ state.v / len(state.v) / 50
    assert np.max(np.abs(acc_m - m)) < 0.03
    assert np.max(np.abs(acc_s - second)) < 0.08
    with pytest.raises(ValueError, match="beta > 0"):
        gaussian_at_beta(p, 0.0)


def test_pm_sample_defaults_means_within_006_of_exact():
    """pm.sample's pick for a GaussianRBM with constant parameters and no other term: replica exchange."""
    from pymc_rbm.gaussian import GaussianRBM
    from pymc_rbm.step_methods.gaussian import GaussianReplicaExchange

    p = GaussianRBMParams.random(4, 3, scale=1.0, rng=7)
    with pm.Model() as model:
        GaussianRBM("v", p.W, p.vbias, p.hbias, p.sigma)
        idata = pm.sample(draws=2000, tune=500, chains=2, random_seed=3, progressbar=False,
                          compute_convergence_checks=False)
        _, chosen = assign_step_methods(model)
    assert list(chosen) == [GaussianReplicaExchange]
    means = idata.posterior["v"].mean(("chain", "draw")).values
    assert np.max(np.abs(means - mean_exact(p))) <= 0.06
    logp = model.compile_logp()
    x = np.array([0.3, -1.0, 2.0, 0.1])
    assert abs(logp({"v": x}) - log_prob_exact(x, p)) < 1e-8


def test_random_parameters_get_exact_gradients():
    from pymc_rbm.gaussian import GaussianRBM

    data = sample_exact(P2, 5, rng=0)
    with pm.Model() as model:
        W = pm.Normal("W", 0.0, 1.0, shape=P2.W.shape)
        GaussianRBM("v", W, P2.vbias, P2.hbias, P2.sigma, observed=data)
    logp, dlogp = model.compile_logp(), model.compile_dlogp()
    g = dlogp({"W": P2.W.copy()}).reshape(P2.W.shape)
    for idx in [(0, 0), (1, 2)]:
        up, down = P2.W.copy(), P2.W.copy()
        up[idx] += 1e-6
        down[idx] -= 1e-6
        assert abs(g[idx] - (logp({"W": up}) - logp({"W": down})) / 2e-6) < 1e-5
    with pytest.raises(ValueError, match="only correct while the parameters are constants"):
        with pm.Model():
            W = pm.Normal("W", 0.0, 1.0, shape=P2.W.shape)
            GaussianRBM("v", W, P2.vbias, P2.hbias, log_partition=None)


def test_a_batched_variable_has_a_start_and_draws():
    """``shape=(K, n_visible)``: PyTensor adds batch axes to the parameters; the start point strips them."""
    from pymc_rbm.gaussian import GaussianRBM

    with pm.Model() as model:
        v = GaussianRBM("v", P2.W, P2.vbias, P2.hbias, P2.sigma, shape=(4, 2))
    start = model.initial_point()["v"]
    assert start.shape == (4, 2)
    assert_allclose(start, np.tile(P2.vbias + P2.sigma * (P2.W @ (1 / (1 + np.exp(-P2.hbias)))), (4, 1)))
    assert pm.draw(v, random_seed=0).shape == (4, 2)

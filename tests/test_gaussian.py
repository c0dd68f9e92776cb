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
from pymc_rbm.estimators import log_likelihood
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
    assert np.max(np.abs(log_likelihood(p, v) - np.log(mix))) < 1e-8  # the one entry point of every layer type
    h = Hs[5]
    assert_allclose(energy(v[0], h, p), brute_energy(v[0], h, p), rtol=1e-13)
    assert_allclose(-free_energy(v, p), np.log([sum(np.exp(-brute_energy(x, hh, p)) for hh in Hs) for x in v]),
                    rtol=1e-12)


def test_log_prob_exact_with_its_arguments_swapped_names_the_order_and_log_likelihood():
    p = GaussianRBMParams.random(3, 2, rng=0)
    v = np.zeros((2, 3))
    with pytest.raises(TypeError, match=r"log_prob_exact takes \(v, params\) with params a GaussianRBMParams, got "
                                        r"\(GaussianRBMParams, ndarray\); or call pymc_rbm.estimators.log_likelihood"):
        log_prob_exact(p, v)


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


# ----------------------------------------------------------------------------- the PyMC distribution: bad input
G = GaussianRBMParams.random(3, 2, rng=0)


def _gaussian_model(observed, **kwargs):
    """``GaussianRBM("v", G...)`` observed; ``observed`` is checked to be left as it was."""
    import copy

    from pymc_rbm.gaussian import GaussianRBM

    before = copy.deepcopy(observed)
    with pm.Model() as model:
        GaussianRBM("v", G.W, G.vbias, G.hbias, G.sigma, observed=observed, **kwargs)
    np.testing.assert_array_equal(np.asarray(observed), np.asarray(before))
    return model


@pytest.mark.parametrize(
    "observed, match",
    [
        (np.zeros((2, 1)), r"has shape \(2, 1\), but each row must hold the n_visible = 3 units"),
        (np.zeros((2, 4)), r"has shape \(2, 4\), but each row must hold the n_visible = 3 units"),
        (np.float64(0.5), r"has shape \(\), but each row must hold the n_visible = 3 units"),
        (np.array([["a", "b", "c"]]), "observed data of the GaussianRBM must be numeric"),
        (np.array([[0.0, np.inf, 1.0]]), "contains 1 infinite value"),
        (np.full((2, 3), np.nan), "every cell of the observed data of the GaussianRBM is missing"),
    ],
    ids=["width-1", "width-4", "scalar", "strings", "inf", "all-nan"],
)
def test_observed_data_of_the_wrong_shape_or_kind_is_refused_early(observed, match):
    with pytest.raises(ValueError, match=match):
        _gaussian_model(observed)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf, "ais"])
def test_a_non_finite_or_non_numeric_log_partition_is_refused(value):
    with pytest.raises(ValueError, match="log_partition must be"):
        _gaussian_model(np.zeros((2, 3)), log_partition=value)


def test_its_own_estimate_of_log_z_is_taken_and_another_models_refused():
    from pymc_rbm.estimators import log_partition

    data = np.random.default_rng(1).normal(size=(2, 3))
    model = _gaussian_model(data, log_partition=log_partition(G))
    assert_allclose(float(model.compile_logp()({})), log_prob_exact(data, G).sum(), rtol=1e-12)
    with pytest.raises(ValueError, match="computed for another model"):
        _gaussian_model(data, log_partition=log_partition(GaussianRBMParams.random(3, 2, rng=1)))
    unit = GaussianRBMParams(G.W, G.vbias, G.hbias)  # sigma left out: ones, checked as such
    from pymc_rbm.gaussian import GaussianRBM

    with pm.Model() as default_sigma:
        GaussianRBM("v", unit.W, unit.vbias, unit.hbias, observed=data, log_partition=log_partition(unit))
    assert_allclose(float(default_sigma.compile_logp()({})), log_prob_exact(data, unit).sum(), rtol=1e-12)
    with pytest.raises(ValueError, match="computed for another model"), pm.Model():
        GaussianRBM("v", unit.W, unit.vbias, unit.hbias, observed=data, log_partition=log_partition(G))


@pytest.mark.filterwarnings("ignore:Data in v contains missing values")
def test_missing_cells_are_imputed():
    model = _gaussian_model(np.array([[0.5, np.nan, -1.0], [0.1, 0.2, 0.3]]))
    assert [rv.name for rv in model.free_RVs] == ["v_unobserved"]
    x = 0.7
    expected = log_prob_exact(np.array([[0.5, x, -1.0], [0.1, 0.2, 0.3]]), G).sum()
    assert_allclose(float(model.compile_logp()({"v_unobserved": np.array([x])})), expected, rtol=1e-12)


def test_an_estimate_is_checked_against_data_parameters_and_refused_for_random_ones():
    from pymc_rbm.estimators import log_partition
    from pymc_rbm.gaussian import GaussianRBM

    data = np.zeros((1, 3))
    other = GaussianRBMParams.random(3, 2, rng=1)
    with pytest.raises(ValueError, match="computed for another model"), pm.Model():
        GaussianRBM("v", pm.Data("W", other.W), G.vbias, G.hbias, G.sigma, log_partition=log_partition(G),
                    observed=data)
    with pytest.raises(ValueError, match=r"log Z of one fixed model.*\['s'\]"), pm.Model():
        s = pm.HalfNormal("s")
        GaussianRBM("v", G.W, G.vbias, G.hbias, s * G.sigma, log_partition=log_partition(G), observed=data)

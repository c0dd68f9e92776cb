"""The annealing path of a Gaussian-Bernoulli RBM (pymc_rbm.estimators.path, "Gaussian visible units").

The point at β is the Gaussian RBM ``(β W, vbias, β hbias, σ)``: the quadratic
term is not annealed. Checked exactly: its densities and conditionals against
that intermediate model; invariance of its sweep through the collapsed hidden
chain ``h -> v -> h'`` (``v`` integrated out by Gauss-Hermite quadrature) for
the exact hidden marginal, with a negative control that tempers the quadratic
term too (the step methods' ``exp(-β E)``); then AIS, reverse AIS and BAR
against ``log Z`` by enumerating the hidden layer, and the refusals.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.special import expit

from pymc_rbm.estimators import (
    GAUSSIAN_LOG_PARTITION_METHODS,
    LOG_PARTITION_METHODS,
    AnnealingPath,
    ais,
    annealing_path,
    bar,
    log_partition,
    reverse_ais,
    rts,
)
from pymc_rbm.gaussian import (
    GaussianRBMParams,
    free_energy,
    gaussian_at_beta,
    hidden_input,
    hidden_marginal,
    log_partition_exact,
    sample_exact,
    visible_mean,
)
from pymc_rbm.kernels.state import RBMState
from pymc_rbm.kernels.sweep import sweep
from pymc_rbm.testing import assert_stationary

TINY = GaussianRBMParams.random(2, 2, scale=1.2, rng=11)
SMALL = GaussianRBMParams.random(4, 3, scale=1.0, rng=1)

#: (model, AIS seed): small, wide and sharp (large W: a mixture of far-apart Gaussians)
MODELS = {
    "4x3": GaussianRBMParams.random(4, 3, scale=1.0, rng=1),
    "6x8": GaussianRBMParams.random(6, 8, scale=0.7, rng=2),
    "sharp_5x4": GaussianRBMParams.random(5, 4, scale=3.0, rng=3),
}


def intermediate(p, beta):
    return GaussianRBMParams(beta * p.W, p.vbias, beta * p.hbias, p.sigma)


@pytest.mark.parametrize("beta", [0.0, 0.37, 1.0])
def test_a_point_is_the_intermediate_gaussian_rbm(beta):
    path = annealing_path(SMALL)
    coef = path.coefficients(beta)
    want = intermediate(SMALL, beta)
    got = path.intermediate(coef)
    for name in ("W", "vbias", "hbias", "sigma"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name))
    v = np.random.default_rng(0).normal(size=(7, SMALL.n_visible)) * 2.0
    v, a, vb = path.start(v)
    np.testing.assert_allclose(path.log_f(a, vb, coef), -free_energy(v, want), rtol=1e-13, atol=1e-13)
    point = path.at(coef)
    np.testing.assert_allclose(point.hidden_logits(point.hidden_input(v)), hidden_input(v, want), atol=1e-13)
    h = np.array(list(itertools.product((0.0, 1.0), repeat=SMALL.n_hidden)))
    np.testing.assert_allclose(point.visible_layer.mean(point.visible_logits(h)), visible_mean(h, want), atol=1e-13)
    np.testing.assert_array_equal(point.visible_layer.sigma, SMALL.sigma)


def test_the_base_is_the_models_quadratic_term_with_free_hidden_units():
    path = annealing_path(SMALL)
    np.testing.assert_array_equal(path.base_vbias, SMALL.vbias)
    expected = np.log(np.sqrt(2 * np.pi) * SMALL.sigma).sum() + SMALL.n_hidden * np.log(2.0)
    assert path.log_z_base == pytest.approx(expected, abs=1e-13)
    assert path.log_z_base == pytest.approx(log_partition_exact(intermediate(SMALL, 0.0)), abs=1e-12)
    v = path.sample_base(np.random.default_rng(0), 40000)
    se = SMALL.sigma / np.sqrt(v.shape[0])
    assert np.all(np.abs(v.mean(axis=0) - SMALL.vbias) < 5 * se)
    np.testing.assert_allclose(v.std(axis=0), SMALL.sigma, rtol=0.03)


def collapsed_hidden_kernel(target, n_nodes=60):
    """``K(h, h') = ∫ p(v | h) Π_j Bern(h'_j; sigmoid(target's hidden logits of v)) dv`` on 2 visible units.

    ``v | h`` is the target's visible layer at its fields (mean ``s² f``,
    standard deviation ``s``), integrated by tensor Gauss-Hermite quadrature.
    """
    x, w = np.polynomial.hermite_e.hermegauss(n_nodes)
    nodes = np.array(list(itertools.product(x, repeat=2)))  # standard normal abscissae
    weights = np.prod(np.array(list(itertools.product(w, repeat=2))), axis=1) / (2 * np.pi)
    Hs = np.array(list(itertools.product((0.0, 1.0), repeat=2)))
    K = np.zeros((4, 4))
    for k, h in enumerate(Hs):
        s = np.broadcast_to(target.visible_layer.sigma, (1, 2))[0]
        mean = s**2 * target.visible_logits(h[None])[0]
        q = expit(target.hidden_logits(target.hidden_input(mean + s * nodes)))  # (nodes, 2)
        K[k] = np.prod(np.where(Hs[:, None, :] == 1, q[None], 1 - q[None]), axis=-1) @ weights
    return K


@pytest.mark.parametrize("beta", [1.0, 0.4, 0.05])
def test_the_sweep_leaves_the_hidden_marginal_of_the_point_invariant(beta):
    path = annealing_path(TINY)
    K = collapsed_hidden_kernel(path.at(path.coefficients(beta)))
    np.testing.assert_allclose(K.sum(axis=1), 1.0, atol=1e-13)
    assert_stationary(hidden_marginal(intermediate(TINY, beta))[1], K, atol=1e-12)


@pytest.mark.parametrize("beta", [0.4, 0.05])
def test_tempering_the_quadratic_term_too_is_caught(beta):
    """Negative control: the step methods' ``exp(-β E)`` (``v | h`` of variance ``σ² / β``) is not the path's point."""
    K = collapsed_hidden_kernel(gaussian_at_beta(TINY, beta))
    with pytest.raises(AssertionError, match="not stationary"):
        assert_stationary(hidden_marginal(intermediate(TINY, beta))[1], K, atol=1e-6)


def test_the_sweep_draws_from_the_points_conditionals():
    """The engine's sweep at a point: ``h`` Bernoulli in the path's logits, then ``v | h ~ N(b + σ ∘ β W h, σ²)``."""
    path, beta, n = annealing_path(SMALL), 0.6, 40000
    v0 = np.tile(np.array([0.3, -1.0, 2.0, 0.5]), (n, 1))
    state, _ = sweep(np.random.default_rng(1), RBMState(v0, None, None), path.at(path.coefficients(beta)), path.rule)
    want = intermediate(SMALL, beta)
    p_on = expit(hidden_input(v0[0], want))
    assert np.all(np.abs(state.h.mean(axis=0) - p_on) < 5 * np.sqrt(p_on * (1 - p_on) / n))
    z = (state.v - visible_mean(state.h, want)) / SMALL.sigma
    assert np.all(np.abs(z.mean(axis=0)) < 5 / np.sqrt(n))
    np.testing.assert_allclose(z.var(axis=0), 1.0, atol=5 * np.sqrt(2 / n))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_ais_reverse_ais_and_bar_match_the_exact_log_z(name):
    p = MODELS[name]
    exact = log_partition_exact(p)
    forward = ais(p, n_chains=200, n_steps=2000, rng=0)
    backward = reverse_ais(p, sample_exact(p, 200, rng=1), n_chains=None, schedule=2000, rng=0)
    both = bar(p, n_chains=200, n_steps=2000, rng=0, n_jobs=1)
    for est in (forward, backward, both):
        assert abs(est.log_z - exact) < 0.05, (est.method, est.log_z - exact, est.stderr)
        assert est.diagnostics["log_z_base"] == pytest.approx(annealing_path(p).log_z_base)
    assert log_partition(p, "ais", rng=0, n_chains=200, n_steps=2000).log_z == forward.log_z
    assert np.all(np.isfinite(backward.diagnostics["log_likelihood"]))
    assert both.diagnostics["samples"].dtype == np.float64  # real states, not truncated to integers


def test_exact_is_an_estimate_of_the_enumerated_log_z():
    est = log_partition(SMALL, "exact")
    assert est.log_z == log_partition_exact(SMALL)
    assert est.method == "exact" and est.kind == "exact"
    assert est.fingerprint == SMALL.fingerprint()


@pytest.mark.parametrize("method", sorted(set(LOG_PARTITION_METHODS) - set(GAUSSIAN_LOG_PARTITION_METHODS)))
def test_other_methods_are_refused_naming_the_supported_ones(method):
    with pytest.raises(ValueError, match="Gaussian-Bernoulli.*'exact', 'ais', 'reverse_ais', 'bar'"):
        log_partition(SMALL, method)


def test_other_refusals():
    with pytest.raises(ValueError, match="jax.*Gaussian-Bernoulli"):
        log_partition(SMALL, "ais", backend="jax")
    with pytest.raises(ValueError, match="unknown log_partition method"):
        log_partition(SMALL, "nope")
    with pytest.raises(ValueError, match="rts does not support Gaussian-Bernoulli"):
        rts(SMALL)
    with pytest.raises(ValueError, match='base must be None or "target"'):
        ais(SMALL, base="mean_field")
    with pytest.raises(ValueError, match="base_vbias must be the model's vbias"):
        AnnealingPath(SMALL, np.zeros(SMALL.n_visible))
    with pytest.raises(ValueError, match="one model"):
        AnnealingPath([SMALL, SMALL], SMALL.vbias)

"""The annealing path of an RBM with ReLU hidden units (pymc_rbm.estimators.path, "ReLU hidden units").

The point at β is the ReLU RBM ``(β W, (1 - β) b_A + β vbias, β hbias, γ)``: the hidden units' precision
``γ`` is not annealed. Checked exactly: its free energy against the energy module's at β = 1 and the
base's closed form at β = 0; invariance of its sweep on the visible marginal, the hidden unit integrated
out by quadrature, for a target whose marginal is itself computed by quadrature, with negative controls
(tempering ``γ`` too, leaving β off the hidden field); that the engine's sweep draws from those
conditionals; then AIS, reverse AIS and BAR against ``log Z`` by enumerating the visible layer.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from scipy.integrate import quad, quad_vec
from scipy.special import expit, logsumexp

from pymc_rbm import RBMParams, ReLURBMParams
from pymc_rbm.energy import free_energy
from pymc_rbm.estimators import (
    LOG_PARTITION_METHODS,
    RELU_LOG_PARTITION_METHODS,
    AnnealingPath,
    ais,
    annealing_path,
    bar,
    binary_states,
    log_partition,
    log_partition_exact,
    reverse_ais,
    sample_visible_exact,
)
from pymc_rbm.kernels.state import RBMState
from pymc_rbm.kernels.sweep import sweep
from pymc_rbm.layers import ReLU
from pymc_rbm.testing import assert_stationary


def relu_model(n_visible, n_hidden, scale, seed):
    """Weights uniform on [-scale, scale], visible biases that centre the fields, precisions in [0.5, 2]."""
    rng = np.random.default_rng(seed)
    W = rng.uniform(-scale, scale, (n_visible, n_hidden))
    return RBMParams(W, rng.uniform(-1, 1, n_visible) - W.sum(axis=1) / 2, rng.uniform(-1, 1, n_hidden),
                     hidden=ReLU(rng.uniform(0.5, 2.0, n_hidden)))


SMALL = relu_model(5, 3, 1.5, 0)
#: 3 visible units, 1 hidden unit: the transition matrix by quadrature over h
TINY = relu_model(3, 1, 1.5, 4)
TINY_BASE = np.array([0.3, -0.8, 0.5])
#: 10 visible units, 3 hidden units, weights on [-3, 3]: log Z = 33.2, one state holds 84 % of the mass
SHARP = relu_model(10, 3, 3.0, 1)


def half_line_log_integral(gamma, f):
    """``log ∫_0^∞ exp(-γ h² / 2 + f h) dh`` by quadrature."""
    peak = max(f / gamma, 0.0)
    scale = np.exp(-0.5 * gamma * peak**2 + f * peak)  # the integrand's maximum, so quad sees values near 1
    val = quad(lambda h: np.exp(-0.5 * gamma * h * h + f * h) / scale, 0, np.inf, epsabs=0, epsrel=1e-13)[0]
    return np.log(val) + np.log(scale)


def target_log_marginal(p, b_a, beta):
    """``log p*_β(v)`` of every visible state, by quadrature: the intended point, not the path's formulas."""
    out = []
    for v in binary_states(p.n_visible):
        f = beta * (p.hbias + v @ p.W)
        out.append(((1 - beta) * b_a + beta * p.vbias) @ v
                   + sum(half_line_log_integral(g, fj) for g, fj in zip(p.gamma, f)))
    return np.array(out)


@pytest.mark.parametrize("beta", [0.0, 0.37, 1.0])
def test_a_point_is_the_intermediate_relu_rbm(beta):
    b_a = np.linspace(-1.0, 1.0, SMALL.n_visible)
    path = AnnealingPath(SMALL, b_a)
    coef = path.coefficients(beta)
    got = path.intermediate(coef)
    assert type(got) is ReLURBMParams
    np.testing.assert_allclose(got.W, beta * SMALL.W, atol=1e-15)
    np.testing.assert_allclose(got.vbias, (1 - beta) * b_a + beta * SMALL.vbias, atol=1e-15)
    np.testing.assert_allclose(got.hbias, beta * SMALL.hbias, atol=1e-15)
    np.testing.assert_array_equal(got.gamma, SMALL.gamma)  # the precisions are not annealed
    v, a, vb = path.start(binary_states(SMALL.n_visible))
    log_f = path.log_f(a, vb, coef)
    np.testing.assert_allclose(log_f, -free_energy(v, got), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(log_f, target_log_marginal(SMALL, b_a, beta), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(path.log_f_ladder(a, vb, coef[None])[:, 0], log_f, rtol=1e-13, atol=1e-13)
    point = path.at(coef)
    assert point.hidden_layer == SMALL.hidden
    np.testing.assert_allclose(point.hidden_logits(point.hidden_input(v)), beta * (SMALL.hbias + v @ SMALL.W),
                               atol=1e-13)
    h = np.random.default_rng(0).exponential(size=(4, SMALL.n_hidden))
    np.testing.assert_allclose(point.visible_logits(h), b_a + beta * (SMALL.vbias - b_a + h @ SMALL.W.T), atol=1e-13)


def test_at_the_ends_the_path_is_the_model_and_the_base():
    path = annealing_path(SMALL, base="zero")
    v, a, vb = path.start(binary_states(SMALL.n_visible))
    np.testing.assert_allclose(path.log_f(a, vb, path.coefficients(1.0)), -free_energy(v, SMALL), rtol=1e-13)
    half_normal = 0.5 * np.log(2 * np.pi / SMALL.gamma) + np.log(0.5)  # A_j(0): the hidden units at β = 0
    np.testing.assert_allclose(half_normal, [half_line_log_integral(g, 0.0) for g in SMALL.gamma], rtol=1e-12)
    np.testing.assert_allclose(path.log_f(a, vb, path.coefficients(0.0)), half_normal.sum(), rtol=1e-13)
    expected = SMALL.n_visible * np.log(2.0) + half_normal.sum()
    assert path.log_z_base == pytest.approx(expected, abs=1e-12)
    assert path.log_z_base == pytest.approx(log_partition_exact(path.intermediate(path.coefficients(0.0))).log_z,
                                            abs=1e-12)
    np.testing.assert_allclose(path.log_offset(path.coefficients([0.0, 0.5])), [half_normal.sum(), 0.0], atol=1e-15)


def transition_matrix(target, n_visible):
    """``T(v, v') = ∫_0^∞ p(h | v) Π_i p(v'_i | h) dh`` of a sweep at ``target`` (one hidden unit), by quadrature.

    ``p(h | v)`` is the target's hidden layer in its hidden fields, ``p(v'_i | h)`` Bernoulli in its visible
    fields: what the kernels' sweep draws from.
    """
    V = binary_states(n_visible)
    T = np.empty((V.shape[0], V.shape[0]))
    layer = target.hidden_layer
    for r, v in enumerate(V):
        field = target.hidden_logits(target.hidden_input(v[None].astype(np.float64)))

        def integrand(h):
            hh = np.array([[h]])
            q = expit(target.visible_logits(hh))[0]
            return np.exp(layer.log_prob(hh, field))[0] * np.prod(np.where(V == 1, q, 1 - q), axis=1)

        T[r] = quad_vec(integrand, 0, np.inf, epsabs=1e-15, epsrel=1e-12)[0]
    return T


def target_marginal(beta):
    lp = target_log_marginal(TINY, TINY_BASE, beta)
    return np.exp(lp - logsumexp(lp))


@pytest.mark.parametrize("beta", [0.0, 0.35, 0.8, 1.0])
def test_the_sweep_leaves_the_visible_marginal_of_the_point_invariant(beta):
    path = AnnealingPath(TINY, TINY_BASE)
    T = transition_matrix(path.at(path.coefficients(beta)), TINY.n_visible)
    assert_stationary(target_marginal(beta), T, atol=1e-10)


@pytest.mark.parametrize("beta", [0.35, 0.8])
@pytest.mark.parametrize("mistake", ["tempered_gamma", "untempered_field"])
def test_the_likely_mistakes_are_caught(beta, mistake):
    """Negative controls: the hidden layer of ``exp(-β E)`` (precisions ``β γ``), or fields without ``β``."""
    point = AnnealingPath(TINY, TINY_BASE).at(np.array([1 - beta, beta]))
    wrong = SimpleNamespace(
        hidden_layer=TINY.hidden.tempered(beta) if mistake == "tempered_gamma" else point.hidden_layer,
        hidden_input=point.hidden_input,
        hidden_logits=point.hidden_logits if mistake == "tempered_gamma" else (lambda a: a),
        visible_logits=point.visible_logits,
    )
    T = transition_matrix(wrong, TINY.n_visible)
    np.testing.assert_allclose(T.sum(axis=1), 1.0, atol=1e-10)
    with pytest.raises(AssertionError, match="not stationary"):
        assert_stationary(target_marginal(beta), T, atol=1e-6)


def test_the_engines_sweep_draws_from_the_points_conditionals():
    """The kernels' sweep at a point: ``h`` from ReLU(γ) in ``β a`` (γ not tempered), then ``v'`` as ``T`` says."""
    path, beta, n = AnnealingPath(TINY, TINY_BASE), 0.6, 40000
    start = 5  # v = (1, 0, 1)
    v0 = np.tile(binary_states(TINY.n_visible)[start].astype(np.float64), (n, 1))
    state, _ = sweep(np.random.default_rng(1), RBMState(v0, None, None), path.at(path.coefficients(beta)), path.rule)
    field = beta * (TINY.hbias + v0[0] @ TINY.W)
    mean = TINY.hidden.mean(field)
    sd = np.sqrt(np.mean((state.h - mean) ** 2))
    assert abs(state.h.mean() - mean[0]) < 5 * sd / np.sqrt(n)
    assert abs(TINY.hidden.tempered(beta).mean(field)[0] - mean[0]) > 20 * sd / np.sqrt(n)  # γ tempered: far off
    row = transition_matrix(path.at(path.coefficients(beta)), TINY.n_visible)[start]
    counts = np.bincount(state.v.astype(np.int64) @ (2 ** np.arange(TINY.n_visible - 1, -1, -1)), minlength=8)
    assert np.all(np.abs(counts / n - row) < 5 * np.sqrt(row * (1 - row) / n) + 1e-12)
    v, a, vb = path.sweep(np.random.default_rng(1), v0, path.hidden_activation(v0), path.coefficients(beta))
    np.testing.assert_array_equal(v, state.v)  # the path's sweep is that kernel
    np.testing.assert_allclose(a, TINY.hbias + v @ TINY.W, atol=1e-12)


def test_ais_reverse_ais_and_bar_match_the_exact_log_z():
    exact = log_partition_exact(SHARP).log_z
    forward = ais(SHARP, n_chains=1000, schedule=1000, rng=0)
    backward = reverse_ais(SHARP, sample_visible_exact(SHARP, 500, rng=1), n_chains=None, schedule=1000, rng=0)
    both = bar(SHARP, n_chains=500, schedule=1000, rng=0, n_jobs=1)
    for est in (forward, backward, both):
        assert abs(est.log_z - exact) < 0.05, (est.method, est.log_z - exact, est.stderr)
        assert est.fingerprint == SHARP.fingerprint()
    for est in (forward, both):  # without data the base is the uniform distribution (reverse AIS fits its starts)
        assert est.diagnostics["log_z_base"] == pytest.approx(annealing_path(SHARP).log_z_base, abs=1e-12)
        np.testing.assert_array_equal(est.diagnostics["base_vbias"], np.zeros(SHARP.n_visible))
    assert log_partition(SHARP, "ais", rng=0, n_chains=1000, schedule=1000).log_z == forward.log_z
    assert log_partition(SHARP, "bar", rng=0, n_chains=500, schedule=1000, n_jobs=1).log_z == both.log_z
    assert np.all(np.isfinite(backward.diagnostics["log_likelihood"]))


def test_auto_is_exact_for_an_enumerable_relu_model():
    est = log_partition(SMALL)
    assert est.method == "exact" and est.kind == "exact"
    assert est.log_z == log_partition_exact(SMALL).log_z
    assert est.diagnostics["auto"]["method"] == "exact"


@pytest.mark.slow
def test_auto_falls_back_to_bar_where_the_enumeration_is_refused(monkeypatch):
    import pymc_rbm.enumeration as exact_module

    p = relu_model(6, 2, 1.0, 5)
    exact = log_partition_exact(p).log_z
    monkeypatch.setattr(exact_module, "MAX_ENUMERATION_BITS", 4)  # refuse the 2**6 visible states
    est = log_partition(p, rng=0)
    assert est.method == "bar" and est.diagnostics["auto"]["method"] == "bar"
    assert abs(est.log_z - exact) < 0.05


@pytest.mark.parametrize("method", sorted(set(LOG_PARTITION_METHODS) - set(RELU_LOG_PARTITION_METHODS)))
def test_other_methods_are_refused_naming_the_supported_ones(method):
    with pytest.raises(ValueError, match="ReLURBMParams.*'exact', 'ais', 'reverse_ais', 'bar'"):
        log_partition(SMALL, method)


def test_refusals():
    with pytest.raises(ValueError, match='base="mean_field" needs binary hidden units'):
        ais(SMALL, base="mean_field")
    with pytest.raises(ValueError, match="ReLU hidden units anneals to one model"):
        AnnealingPath([SMALL, SMALL], np.zeros(SMALL.n_visible))
    with pytest.raises(ValueError, match="base_hbias"):
        AnnealingPath(SMALL, np.zeros(SMALL.n_visible), base_hbias=np.zeros(SMALL.n_hidden))

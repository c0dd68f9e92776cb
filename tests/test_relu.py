"""RBMs with ReLU hidden units: parameters, free energy and exact log Z against quadrature over the hidden units."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.integrate import dblquad, quad
from scipy.special import logsumexp

from pymc_rbm import RBMParams, ReLURBMParams
from pymc_rbm.energy import free_energy
from pymc_rbm.estimators import log_likelihood, log_partition
from pymc_rbm.enumeration import binary_states, log_marginal_visible, sample_visible_exact
from pymc_rbm.layers import ReLU


def relu_params(n_visible=4, n_hidden=2, scale=1.0, seed=0):
    rng = np.random.default_rng(seed)
    return RBMParams(rng.uniform(-scale, scale, (n_visible, n_hidden)), rng.uniform(-scale, scale, n_visible),
                     rng.uniform(-scale, scale, n_hidden), hidden=ReLU(rng.uniform(0.5, 2.0, n_hidden)))


def brute_log_z(p: ReLURBMParams) -> float:
    """``log Σ_v ∫_{h >= 0} exp(-E(v, h)) dh`` by quadrature over one or two hidden units (scipy quad, dblquad)."""
    terms = []
    for v in binary_states(p.n_visible):
        f = p.hbias + v @ p.W
        g = p.gamma
        if p.n_hidden == 1:
            val = quad(lambda h: np.exp(-g[0] * h * h / 2 + f[0] * h), 0, np.inf, epsabs=0, epsrel=1e-12)[0]
        else:
            val = dblquad(lambda h1, h0: np.exp(-g[0] * h0**2 / 2 + f[0] * h0 - g[1] * h1**2 / 2 + f[1] * h1),
                          0, np.inf, 0, np.inf, epsabs=0, epsrel=1e-12)[0]
        terms.append(v @ p.vbias + np.log(val))
    return float(logsumexp(terms))


def test_relu_params_are_made_by_rbmparams_with_a_hidden_layer():
    W, vb, hb = np.ones((3, 2)), np.zeros(3), np.zeros(2)
    gamma = np.array([1.0, 2.0])
    p = RBMParams(W, vb, hb, hidden=ReLU(gamma))
    assert type(p) is ReLURBMParams and p.hidden == ReLU(gamma) and p.visible.name == "Bernoulli"
    assert_allclose(p.gamma, gamma)
    assert not p.gamma.flags.writeable
    gamma[0] = 5.0  # the caller's array is copied
    assert p.gamma[0] == 1.0
    assert_allclose(RBMParams(W, vb, hb, hidden=ReLU(3.0)).gamma, [3.0, 3.0])  # a scalar broadcast
    plain = RBMParams(W, vb, hb)
    assert type(plain) is RBMParams and RBMParams(W, vb, hb, hidden=None) == plain
    assert plain.fingerprint() == "34eb2ed71be59035914109b05de3540d"  # unchanged by the hidden keyword
    assert len({p.fingerprint(), plain.fingerprint(), RBMParams(W, vb, hb, hidden=ReLU([1.0, 2.5])).fingerprint()}) == 3
    with pytest.raises(ValueError, match="gamma"):
        RBMParams(W, vb, hb, hidden=ReLU([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError, match="hidden"):
        RBMParams(W, vb, hb, hidden="relu")


def test_relu_params_save_and_load_with_their_kind(tmp_path):
    p = relu_params()
    p.save(tmp_path / "m")
    q = ReLURBMParams.load(tmp_path / "m")
    assert q == p and q.fingerprint() == p.fingerprint()
    with np.load(tmp_path / "m.npz") as f:
        assert str(f["kind"]) == "ReLURBMParams"
    with pytest.raises(ValueError, match="ReLURBMParams.load"):
        RBMParams.load(tmp_path / "m")


def test_the_free_energy_integrates_the_hidden_units_out():
    p = relu_params(3, 1, scale=2.0)
    for v in binary_states(3):
        f = p.hbias[0] + v @ p.W[:, 0]
        integral = quad(lambda h: np.exp(-p.gamma[0] * h * h / 2 + f * h), 0, np.inf, epsabs=0, epsrel=1e-12)[0]
        assert_allclose(free_energy(v, p), -v @ p.vbias - np.log(integral), rtol=1e-10)
    # tempered: the density of exp(-βE), its precision βγ tempered as well
    v, beta = np.array([1.0, 0.0, 1.0]), 0.4
    f = p.hbias[0] + v @ p.W[:, 0]
    integral = quad(lambda h: np.exp(-beta * (p.gamma[0] * h * h / 2 - f * h)), 0, np.inf, epsabs=0, epsrel=1e-12)[0]
    assert_allclose(free_energy(v, p, beta=beta), -beta * (v @ p.vbias) - np.log(integral), rtol=1e-10)
    assert_allclose(free_energy(np.stack([v, v]), p, beta=np.array([beta, 1.0]))[0], free_energy(v, p, beta=beta))


@pytest.mark.parametrize("n_hidden", [1, 2])
def test_exact_log_z_is_the_sum_over_visible_states_of_the_hidden_integral(n_hidden):
    p = relu_params(4, n_hidden, scale=1.5, seed=n_hidden)
    est = log_partition(p, "exact")
    assert_allclose(est.log_z, brute_log_z(p), rtol=0, atol=1e-8)
    assert est.diagnostics["enumerated_layer"] == "visible" and est.diagnostics["n_states"] == 16
    auto = log_partition(p)
    assert auto.log_z == est.log_z and auto.diagnostics["auto"]["method"] == "exact"
    assert est.fingerprint == p.fingerprint()


def test_log_likelihood_and_exact_draws_of_a_relu_rbm():
    p = relu_params(5, 3, scale=2.0)
    log_p = log_marginal_visible(p)
    assert_allclose(np.exp(log_p).sum(), 1.0, rtol=1e-12)
    data = binary_states(5)[[0, 7, 31]]
    assert_allclose(log_likelihood(p, data), log_p[[0, 7, 31]], rtol=1e-12)
    with pytest.raises(ValueError, match="0, 1"):
        log_likelihood(p, np.full((1, 5), 0.5))
    draws = sample_visible_exact(p, 20_000, rng=1)
    idx = draws @ (2 ** np.arange(4, -1, -1))
    tv = 0.5 * np.abs(np.bincount(idx, minlength=32) / 20_000 - np.exp(log_p)).sum()
    assert tv < 0.03


def test_methods_that_do_not_take_relu_units_say_so():
    p = relu_params()
    with pytest.raises(ValueError, match="ReLURBMParams"):
        log_partition(p, "tap")
    with pytest.raises(ValueError, match="unknown"):
        log_partition(p, "no-such-method")


def test_exact_moments_are_the_gradient_of_log_z():
    from pymc_rbm.enumeration import moments_exact

    p = relu_params(4, 2, seed=5)
    m = moments_exact(p)
    eps = 1e-6
    def log_z(W=p.W, vbias=p.vbias, hbias=p.hbias):
        return log_partition(RBMParams(W, vbias, hbias, hidden=ReLU(p.gamma)), "exact").log_z
    for name, base, moment in (("W", p.W, m.vh), ("vbias", p.vbias, m.v), ("hbias", p.hbias, m.h)):
        for idx in np.ndindex(base.shape):
            up, down = base.copy(), base.copy()
            up[idx] += eps
            down[idx] -= eps
            grad = (log_z(**{name: up}) - log_z(**{name: down})) / (2 * eps)
            assert_allclose(grad, moment[idx], rtol=1e-6, atol=1e-8)


# ----------------------------------------------------------------------------- the PyMC distribution
def sharp_relu_model():
    """8 visible, 3 ReLU hidden units, weights uniform on [-2, 2]: a few visible states hold most of the mass."""
    rng = np.random.default_rng(1)
    W = rng.uniform(-2, 2, (8, 3))
    return RBMParams(W, rng.uniform(-1, 1, 8) - W.sum(axis=1) / 2, rng.uniform(-1, 1, 3),
                     hidden=ReLU(np.array([1.0, 2.0, 0.5])))


def _tv(draws, log_p):
    idx = draws.reshape(-1, draws.shape[-1]) @ (2 ** np.arange(draws.shape[-1] - 1, -1, -1))
    return 0.5 * np.abs(np.bincount(idx, minlength=log_p.size) / idx.size - np.exp(log_p)).sum()


def test_the_rbm_distribution_takes_relu_hidden_units_logp_is_the_closed_form():
    import pymc as pm

    from pymc_rbm import RBM

    p = sharp_relu_model()
    with pm.Model() as model:
        RBM("v", p.W, p.vbias, p.hbias, hidden=p.hidden)
    logp = model.compile_logp()
    states = binary_states(8)[[0, 77, 255]]
    expected = -free_energy(states, p) - log_partition(p, "exact").log_z
    for v, want in zip(states, expected):
        assert_allclose(logp({"v": v.astype(np.int64)}), want, rtol=1e-12)
    # the closed form itself: -F(v) from quadrature over the hidden units
    v = states[1]
    minus_f = v @ p.vbias + sum(np.log(quad(lambda h: np.exp(-g * h * h / 2 + f * h), 0, np.inf, epsabs=0,
                                                 epsrel=1e-12)[0]) for f, g in zip(p.hbias + v @ p.W, p.gamma))
    assert_allclose(logp({"v": v.astype(np.int64)}), minus_f - log_partition(p, "exact").log_z, rtol=1e-9)
    assert logp({"v": np.full(8, 2, dtype=np.int64)}) == -np.inf


@pytest.mark.filterwarnings("ignore:Numba will use object mode:UserWarning")
def test_pm_sample_draws_a_relu_rbm_exactly():
    import pymc as pm

    from pymc_rbm import RBM
    from pymc_rbm.step_methods.enumerated import VisibleExactDraws

    p = sharp_relu_model()
    log_p = log_marginal_visible(p)
    with pm.Model() as model:
        v = RBM("v", p.W, p.vbias, p.hbias, hidden=p.hidden)
        idata = pm.sample(draws=1000, tune=50, chains=2, random_seed=3, progressbar=False,
                          compute_convergence_checks=False)
    assert "n_states" in idata.sample_stats
    draws = idata.posterior["v"].values
    assert _tv(draws, log_p) <= 0.05
    # negative control: the binary RBM of the same weights has another visible distribution
    assert 0.5 * np.abs(np.exp(log_marginal_visible(RBMParams(p.W, p.vbias, p.hbias))) - np.exp(log_p)).sum() > 0.2
    # forward draws are exact too
    forward = pm.draw(v, draws=20_000, random_seed=4)
    assert _tv(forward, log_p) <= 0.03
    with model:
        step = VisibleExactDraws()
    assert step.vars == [model.rvs_to_values[v]]


def test_the_binary_steps_refuse_relu_hidden_units_and_bad_hidden_layers_are_refused():
    import pymc as pm

    from pymc_rbm import RBM, ExactDraws, FlipTheState

    p = sharp_relu_model()
    with pm.Model():
        v = RBM("v", p.W, p.vbias, p.hbias, hidden=ReLU(1.5))
        assert v.owner.op.gamma == (1.5, 1.5, 1.5)
        for step in (ExactDraws, FlipTheState):
            with pytest.raises((ValueError, TypeError)):
                step([v])
        with pytest.raises(TypeError, match="hidden"):
            RBM("w", p.W, p.vbias, p.hbias, hidden="relu")
        with pytest.raises(ValueError, match="gamma"):
            RBM("x", p.W, p.vbias, p.hbias, hidden=ReLU([1.0, 2.0]))
        big = np.zeros((22, 2))
        with pytest.raises(ValueError, match="visible layer"):
            RBM("y", big, np.zeros(22), np.zeros(2), hidden=ReLU(1.0), log_partition="exact")


@pytest.mark.filterwarnings("ignore:Numba will use object mode:UserWarning")
def test_the_logp_gradient_in_the_weights_is_exact():
    import pymc as pm

    from pymc_rbm import RBM

    p = relu_params(4, 2, seed=7)
    data = binary_states(4)[[1, 6, 6, 15]].astype(np.int64)
    with pm.Model() as model:
        W = pm.Normal("W", 0.0, 1.0, shape=(4, 2))
        RBM("v", W, p.vbias, p.hbias, hidden=p.hidden, observed=data)
    logp, dlogp = model.compile_logp(), model.compile_dlogp()
    point = {"W": p.W}
    def f(W):
        q = RBMParams(W, p.vbias, p.hbias, hidden=p.hidden)
        return log_likelihood(q, data).sum() - 0.5 * (W**2).sum() - 8 * 0.5 * np.log(2 * np.pi)
    assert_allclose(logp(point), f(p.W), rtol=1e-12)
    eps, grad = 1e-6, np.zeros((4, 2))
    for idx in np.ndindex(4, 2):
        up, down = p.W.copy(), p.W.copy()
        up[idx] += eps
        down[idx] -= eps
        grad[idx] = (f(up) - f(down)) / (2 * eps)
    assert_allclose(dlogp(point).reshape(4, 2), grad, rtol=1e-6, atol=1e-8)


def _block_gibbs_matrix(p, hidden_log_density):
    """``T(v, v') = ∫ p(h | v) p(v' | h) dh`` of the sweep v → h → v' with one hidden unit, by quadrature."""
    from scipy.special import expit

    states = binary_states(p.n_visible)
    T = np.empty((states.shape[0], states.shape[0]))
    for r, v in enumerate(states):
        f = p.hbias + v @ p.W
        for c, w in enumerate(states):
            def integrand(h):
                q = expit(p.vbias + p.W[:, 0] * h)
                return np.exp(hidden_log_density(h, f)) * np.prod(np.where(w == 1, q, 1 - q))
            lo = -np.inf if hidden_log_density(-1.0, f) > -np.inf else 0.0
            T[r, c] = quad(integrand, lo, np.inf, epsabs=1e-14, epsrel=1e-12, limit=200)[0]
    return T


def test_the_block_gibbs_sweep_leaves_the_visible_marginal_invariant():
    p = relu_params(3, 1, scale=1.5, seed=11)
    layer = p.hidden
    pi = np.exp(log_marginal_visible(p))

    def truncated(h, f):  # p(h | v) of the layer: its log_prob on h >= 0
        return layer.log_prob(np.array([[h]]), f)[0] if h >= 0 else -np.inf

    T = _block_gibbs_matrix(p, truncated)
    assert_allclose(T.sum(axis=1), 1.0, atol=1e-9)
    assert_allclose(pi @ T, pi, rtol=0, atol=1e-8)

    g = p.gamma[0]
    def untruncated(h, f):  # negative control: h ~ N(f/γ, 1/γ), ignoring h >= 0
        return -0.5 * g * (h - f[0] / g) ** 2 + 0.5 * np.log(g / (2 * np.pi))

    T_wrong = _block_gibbs_matrix(p, untruncated)
    assert_allclose(T_wrong.sum(axis=1), 1.0, atol=1e-9)
    assert np.abs(pi @ T_wrong - pi).max() > 1e-3


def test_a_given_estimate_of_log_z_must_be_of_the_relu_model():
    import pymc as pm

    from pymc_rbm import RBM

    p = sharp_relu_model()
    est = log_partition(p, "exact")
    with pm.Model() as model:
        RBM("v", p.W, p.vbias, p.hbias, hidden=p.hidden, log_partition=est)
        with pytest.raises(ValueError):
            RBM("w", p.W, p.vbias, p.hbias, hidden=p.hidden,
                log_partition=log_partition(RBMParams(p.W, p.vbias, p.hbias), "exact"))
    v = binary_states(8)[3].astype(np.int64)
    assert_allclose(model.compile_logp()({"v": v}), -free_energy(v, p) - est.log_z, rtol=1e-12)


def test_log_partition_ops_of_other_precisions_are_other_ops():
    """PyTensor merges equal Ops: two ReLU RBMs of other ``gamma`` in one graph must keep their own log Z."""
    from pymc_rbm.random_variable import ReLULogPartition, ReLUMomentsOp

    for op in (ReLULogPartition, ReLUMomentsOp):
        assert op(20, (1.0,)) == op(20, (1.0,)) and hash(op(20, (1.0,))) == hash(op(20, (1.0,)))
        assert op(20, (1.0,)) != op(20, (2.0,))

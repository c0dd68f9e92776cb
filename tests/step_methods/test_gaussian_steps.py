"""The Gaussian RBM step methods: the tempered block Gibbs kernel exactly, the steps against exact answers.

``v`` is continuous, so the transition matrix over joint states does not
exist; what can be checked exactly is the chain of the hidden layer that
block Gibbs at β induces, ``h -> v -> h'``, whose kernel

    K(h, h') = ∫ N(v; b + σ∘Wh, σ²/β) Π_j Bern(h'_j; sigmoid(β (c + (v/σ)·W)_j)) dv

is computed by Gauss-Hermite quadrature on a model of 2 visible units (exact
to rounding: the integrand is analytic) from the target's own fields and
layer. It must leave the hidden marginal of ``exp(-β E)``,
``p_β(h) ∝ exp(β (c·h + (b/σ)·Wh + |Wh|²/2))``, invariant; with the
untempered variance ``σ²`` it does not (negative control). The steps
themselves are checked by fixed-seed runs against exact means and mixture
weights, replica exchange rung by rung (negative control: a wrong swap
energy), and inside larger models against closed-form posteriors: a Normal
reading of each unit (the quadratic tilt is exact, every move accepted), a
Student-t reading (the tilt a proposal), the same Normal reading of some
units of each row written as a slice or a summed Potential (still the
replica exchange, not NUTS) and a term that couples the units (the
Metropolis correction; NUTS by default).
"""

from __future__ import annotations

import itertools
import subprocess
import sys

import numpy as np
import pymc as pm
import pytest
from pymc.sampling.mcmc import assign_step_methods
from scipy import integrate

from pymc_rbm import testing as ht
from pymc_rbm.gaussian import (
    GaussianRBM,
    GaussianRBMParams,
    energy,
    free_energy,
    gaussian_at_beta,
    hidden_input,
    hidden_marginal,
    mean_exact,
)
from pymc_rbm.kernels.layer import GIBBS
from pymc_rbm.kernels.state import RBMState
from pymc_rbm.kernels.sweep import sweep
from pymc_rbm.step_methods.gaussian import GaussianGibbs, GaussianReplicaExchange

TINY = GaussianRBMParams.random(2, 2, scale=1.0, rng=11)
HS = np.array(list(itertools.product((0, 1), repeat=2)), dtype=np.float64)


def tempered_hidden_marginal(p, beta):
    """``p_β(h) ∝ exp(β (c·h + (b/σ)·Wh + |Wh|²/2))`` over ``HS``: ``exp(-β E)`` with ``v`` integrated out."""
    m = HS @ p.W.T
    lw = beta * (HS @ p.hbias + m @ (p.vbias / p.sigma) + 0.5 * (m**2).sum(axis=-1))
    w = np.exp(lw - lw.max())
    return w / w.sum()


def hidden_kernel(target, *, variance_tempered=True, n_nodes=60):
    """``K(h, h')`` of the collapsed chain ``h -> v -> h'`` at ``target`` by tensor Gauss-Hermite quadrature.

    ``v | h`` is the target's visible layer at its fields (mean ``s² f``,
    standard deviation ``s``); with ``variance_tempered=False`` its standard
    deviation is the untempered ``σ`` (the mean kept): the negative control.
    """
    x, w = np.polynomial.hermite_e.hermegauss(n_nodes)
    nodes = np.array(list(itertools.product(x, repeat=2)))  # (n_nodes², 2): standard normal abscissae
    weights = np.prod(np.array(list(itertools.product(w, repeat=2))), axis=1) / (2 * np.pi)
    s = np.broadcast_to(target.visible_layer.sigma, (1, 2))[0]
    K = np.zeros((len(HS), len(HS)))
    for k, h in enumerate(HS):
        mean = s**2 * target.visible_logits(h[None])[0]
        sd = s if variance_tempered else target.params.sigma
        q = 1.0 / (1.0 + np.exp(-target.hidden_logits(target.hidden_input(mean + sd * nodes))))  # (nodes, 2)
        K[k] = np.prod(np.where(HS[:, None, :] == 1, q[None], 1 - q[None]), axis=-1) @ weights
    return K


def test_the_tempered_hidden_marginal_is_v_integrated_out():
    """One visible unit: ``∫ Σ exp(-β E(v, h)) dv`` per ``h`` by adaptive quadrature equals the closed form, and the
    tempered model is the RBM of parameters ``(√β W, b, β c, σ/√β)``."""
    p = GaussianRBMParams.random(1, 2, scale=1.3, rng=2)
    beta = 0.4
    z = np.array([integrate.quad(lambda v: np.exp(-beta * energy(np.array([v]), h, p)), -60, 60,
                                 epsabs=1e-13, epsrel=1e-12)[0] for h in HS])
    m = HS @ p.W.T
    lw = beta * (HS @ p.hbias + m @ (p.vbias / p.sigma) + 0.5 * (m**2).sum(axis=-1))
    np.testing.assert_allclose(z / z.sum(), np.exp(lw) / np.exp(lw).sum(), rtol=1e-9)
    rescaled = GaussianRBMParams(np.sqrt(beta) * p.W, p.vbias, beta * p.hbias, p.sigma / np.sqrt(beta))
    np.testing.assert_allclose(hidden_marginal(rescaled)[1], z / z.sum(), rtol=1e-9)


@pytest.mark.parametrize("beta", [1.0, 0.3, 0.05])
def test_block_gibbs_at_beta_leaves_the_hidden_marginal_invariant(beta):
    K = hidden_kernel(gaussian_at_beta(TINY, beta))
    np.testing.assert_allclose(K.sum(axis=1), 1.0, atol=1e-13)
    p = tempered_hidden_marginal(TINY, beta)
    ht.assert_stationary(p, K, atol=1e-12)
    assert ht.is_irreducible(K)


@pytest.mark.parametrize("beta", [0.3, 0.05])
def test_the_untempered_variance_is_caught(beta):
    """Negative control: ``v | h`` with variance σ² (the mean tempered) does not leave ``p_β(h)`` invariant."""
    K = hidden_kernel(gaussian_at_beta(TINY, beta), variance_tempered=False)
    with pytest.raises(AssertionError, match="not stationary"):
        ht.assert_stationary(tempered_hidden_marginal(TINY, beta), K, atol=1e-6)


def test_a_beta_per_chain_is_each_chains_own_target():
    betas = np.array([1.0, 0.3, 0.05])
    joint = gaussian_at_beta(TINY, np.repeat(betas, 4), 12)
    h = np.tile(HS, (3, 1))
    v = np.random.default_rng(0).normal(size=(12, 2))
    for r, beta in enumerate(betas):
        one = gaussian_at_beta(TINY, beta)
        rows = slice(4 * r, 4 * r + 4)
        np.testing.assert_allclose(joint.visible_logits(h)[rows], one.visible_logits(h[rows]), rtol=1e-14)
        np.testing.assert_allclose(np.broadcast_to(joint.visible_layer.sigma, (12, 2))[rows],
                                   np.broadcast_to(one.visible_layer.sigma, (4, 2)), rtol=1e-14)
        np.testing.assert_allclose(joint.hidden_logits(joint.hidden_input(v))[rows],
                                   one.hidden_logits(one.hidden_input(v[rows])), rtol=1e-14)
    with pytest.raises(ValueError, match="beta > 0"):
        gaussian_at_beta(TINY, 0.0)


def test_a_tilted_target_is_the_product_of_its_conditional_and_the_tilt():
    """Rows tilted by ``exp(a v² + b v)``: ``N(μ, s²) exp(a v² + b v)`` is ``N(m, t²)`` with
    ``1/t² = 1/s² - 2a``, ``m = t² (μ/s² + b)``: every chain at β = 1, the cold rows of a ladder."""
    rng = np.random.default_rng(3)
    h = HS[[0, 1, 3, 2, 1, 0]]
    for beta, m in ((None, 6), (np.repeat([1.0, 0.4], 3), 3)):
        a, b = -rng.uniform(0, 2, (m, 2)), rng.normal(size=(m, 2))
        target = gaussian_at_beta(TINY, beta, 6)._replace(tilt=(a, b))
        plain = gaussian_at_beta(TINY, beta, 6)
        s = np.broadcast_to(plain.visible_layer.sigma, (6, 2))
        mu = s**2 * plain.visible_logits(h)
        t2 = 1 / (1 / s[:m] ** 2 - 2 * a)
        t = np.broadcast_to(target.visible_layer.sigma, (6, 2))
        f = target.visible_logits(h)
        np.testing.assert_allclose(t[:m] ** 2, t2, rtol=1e-13)
        np.testing.assert_allclose(t[:m] ** 2 * f[:m], t2 * (mu[:m] / s[:m] ** 2 + b), rtol=1e-12)
        np.testing.assert_allclose(t[m:], s[m:], rtol=1e-14)  # the hot rows untouched
        np.testing.assert_allclose(f[m:], plain.visible_logits(h)[m:], rtol=1e-14)


def test_the_engines_sweep_at_beta_samples_the_hidden_marginal():
    """Through :func:`sweep` (the engine the steps run): hidden states of many chains at three β per chain."""
    betas = np.repeat([1.0, 0.3, 0.05], 3000)
    target = gaussian_at_beta(TINY, betas, betas.size)
    rng = np.random.default_rng(4)
    state = RBMState(rng.normal(size=(betas.size, 2)), None)
    for _ in range(30):
        state, _ = sweep(rng, state, target, GIBBS)
    index = (state.h @ [2, 1]).astype(int)
    for r, beta in enumerate([1.0, 0.3, 0.05]):
        counts = np.bincount(index[3000 * r : 3000 * (r + 1)], minlength=4)
        ht.assert_frequencies(counts, tempered_hidden_marginal(TINY, beta))


# ----------------------------------------------------------------------------- the steps in pm.sample
def sharp():
    """Two components 8.5 σ apart with weights 0.3 and 0.7 (one hidden unit): NUTS and Gibbs stay in one."""
    return GaussianRBMParams(np.array([[6.0], [6.0]]), np.zeros(2), np.array([-36.0 + np.log(7 / 3)]))


def mode_weights(v, p):
    """``mean over draws of p(h | v)``, shape (2**n_hidden,): its expectation under ``p(v)`` is ``p(h)`` exactly."""
    Hs, _ = hidden_marginal(p)
    a = hidden_input(v, p)
    log_q = Hs @ (-np.logaddexp(0, -a)).T + (1 - Hs) @ (-np.logaddexp(0, a)).T
    return np.exp(log_q).mean(axis=1)


def _sample(p, step=None, seed=1, **kwargs):
    with pm.Model() as model:
        GaussianRBM("v", p.W, p.vbias, p.hbias, p.sigma)
        if step is not None:
            kwargs["step"] = step()
        idata = pm.sample(draws=2000, tune=500, chains=4, cores=1, random_seed=seed, progressbar=False,
                          compute_convergence_checks=False, **kwargs)
    return model, idata.posterior["v"].values.reshape(-1, p.n_visible)


def test_pm_sample_defaults_on_a_sharp_mixture_get_the_weights_where_nuts_does_not():
    p = sharp()
    _, w = hidden_marginal(p)
    model, draws = _sample(p)
    with model:
        _, chosen = assign_step_methods(model)
    assert list(chosen) == [GaussianReplicaExchange]
    assert np.abs(mode_weights(draws, p) - w).max() <= 0.05
    assert np.abs(draws.mean(axis=0) - mean_exact(p)).max() <= 0.3
    _, nuts = _sample(p, pm.NUTS)
    assert np.abs(mode_weights(nuts, p) - w).max() > 0.1  # chains stuck in the component they started in


LIK = GaussianRBMParams.random(2, 2, scale=1.0, rng=3)


def conjugate_posterior_mean(p, y, A, s):
    """``E[v | y]`` for ``y ~ N(A v, s² I)`` and the mixture prior: per component the linear-Gaussian posterior,
    weighted by ``p(h) N(y; A μ_h, A Σ Aᵀ + s² I)``."""
    Hs, w = hidden_marginal(p)
    S = np.diag(p.sigma**2)
    C = A @ S @ A.T + s**2 * np.eye(len(y))
    log_w, means = [], []
    for wk, h in zip(w, Hs):
        mu = p.vbias + p.sigma * (p.W @ h)
        r = y - A @ mu
        log_w.append(np.log(wk) - 0.5 * r @ np.linalg.solve(C, r))
        means.append(mu + S @ A.T @ np.linalg.solve(C, r))
    log_w = np.array(log_w)
    post = np.exp(log_w - log_w.max())
    return (post / post.sum()) @ np.array(means)


def _sample_with(term, step, seed=5, draws=3000):
    with pm.Model() as model:
        v = GaussianRBM("v", LIK.W, LIK.vbias, LIK.hbias, LIK.sigma)
        term(v)
        kwargs = {} if step is None else {"step": step()}
        idata = pm.sample(draws=draws, tune=300, chains=2, cores=1, random_seed=seed, progressbar=False,
                          compute_convergence_checks=False, **kwargs)
        _, chosen = assign_step_methods(model)
    accept = float(idata.sample_stats["accept"].mean()) if "accept" in idata.sample_stats else None
    return idata.posterior["v"].mean(("chain", "draw")).values, accept, list(chosen)


def test_a_normal_reading_of_each_unit_is_swept_as_the_exact_tilt():
    """``y_i ~ N(v_i, s)``: per-unit evidence, quadratic in ``v``; the tilted conditional is exact, so every move
    is accepted, and ``pm.sample`` keeps replica exchange."""
    y, s = np.array([1.0, -0.5]), 0.8
    exact = conjugate_posterior_mean(LIK, y, np.eye(2), s)
    for step in (None, GaussianGibbs):
        means, accept, chosen = _sample_with(lambda v: pm.Normal("y", mu=v, sigma=s, observed=y), step)
        assert np.abs(means - exact).max() <= 0.06
        assert accept > 1 - 1e-9
    assert chosen == [GaussianReplicaExchange]


def test_a_non_gaussian_reading_is_a_tilted_proposal_corrected_by_its_ratio():
    """``y_i ~ StudentT(3, v_i, s)``: the quadratic tilt is only a proposal, accepted by ``L / T``; the posterior
    mean against 2-D quadrature of prior times likelihood."""
    from scipy import stats

    y, s = np.array([1.0, -0.5]), 0.8
    grid = np.linspace(-9, 9, 721)
    V0, V1 = np.meshgrid(grid, grid, indexing="ij")
    pts = np.stack([V0, V1], axis=-1)
    dens = np.exp(-free_energy(pts, LIK)) * stats.t.pdf(y[0], 3, V0, s) * stats.t.pdf(y[1], 3, V1, s)
    exact = np.array([(dens * V0).sum(), (dens * V1).sum()]) / dens.sum()
    means, accept, chosen = _sample_with(lambda v: pm.StudentT("y", nu=3, mu=v, sigma=s, observed=y), None)
    assert np.abs(means - exact).max() <= 0.06
    assert 0.3 < accept < 0.999
    assert chosen == [GaussianReplicaExchange]


def test_a_term_that_couples_the_units_is_corrected_and_left_to_nuts():
    """``y ~ N(v_0 + v_1, s)`` is not per-unit: the steps, passed explicitly, accept the RBM's moves by ``L``;
    ``pm.sample`` leaves the variable to NUTS."""
    y, s = np.array([0.7]), 0.6
    exact = conjugate_posterior_mean(LIK, y, np.ones((1, 2)), s)
    for step in (GaussianGibbs, GaussianReplicaExchange):
        means, accept, chosen = _sample_with(lambda v: pm.Normal("y", mu=v.sum(), sigma=s, observed=y[0]), step,
                                             draws=6000)
        assert np.abs(means - exact).max() <= 0.08, step.__name__  # about 1 move in 5 accepted: noisier
        assert 0.05 < accept < 0.99
    assert chosen == [pm.NUTS]


SOME = np.array([[1.0], [-0.5]])  # y_k ~ N(v_k0, s): unit 0 of each of two rows read, unit 1 not
READINGS = {
    "sliced Normal": lambda v, s: pm.Normal("y", v[:, :1], s, observed=SOME),
    "summed Potential": lambda v, s: pm.Potential("lik", pm.logp(pm.Normal.dist(v[:, :1], s), SOME).sum()),
}


@pytest.mark.parametrize("form", list(READINGS))
def test_a_sliced_or_summed_reading_of_some_units_keeps_replica_exchange(form):
    """``y_k ~ N(v[k, 0], s)`` for two rows, written ``pm.Normal(v[:, :1])`` or as a summed Potential: per-unit
    evidence, so ``pm.sample`` keeps replica exchange (not NUTS), the tilt is the exact conditional (every move
    accepted), and each row's posterior mean is the conjugate one."""
    s = 0.8
    with pm.Model() as model:
        v = GaussianRBM("v", LIK.W, LIK.vbias, LIK.hbias, LIK.sigma, shape=(2, 2))
        READINGS[form](v, s)
        _, chosen = assign_step_methods(model)
        idata = pm.sample(draws=3000, tune=300, chains=2, cores=1, random_seed=5, progressbar=False,
                          compute_convergence_checks=False)
    assert list(chosen) == [GaussianReplicaExchange]
    assert float(idata.sample_stats["accept"].min()) > 1 - 1e-9
    means = idata.posterior["v"].mean(("chain", "draw")).values
    for k in range(2):
        exact = conjugate_posterior_mean(LIK, SOME[k], np.array([[1.0, 0.0]]), s)
        assert np.abs(means[k] - exact).max() <= 0.06, (k, means[k], exact)


def test_random_parameters_are_left_to_nuts_and_refused_by_replica_exchange():
    p = TINY
    with pm.Model() as model:
        scale = pm.HalfNormal("scale", 1.0)
        GaussianRBM("v", p.W * scale, p.vbias, p.hbias, p.sigma)
        _, chosen = assign_step_methods(model)
        assert pm.NUTS in chosen and GaussianReplicaExchange not in chosen
        with pytest.raises(ValueError, match="constant parameters"):
            GaussianReplicaExchange()
        with pytest.raises(ValueError, match="beta > 0"):
            GaussianReplicaExchange(vars=[model["v"]], betas=[1.0, 0.5, 0.0])
        GaussianGibbs(vars=[model["v"]])  # the parameters computed from the point


def test_a_resumed_replica_exchange_continues_draw_for_draw():
    with pm.Model() as model:
        GaussianRBM("v", TINY.W, TINY.vbias, TINY.hbias, TINY.sigma)
        whole, first, resumed = (GaussianReplicaExchange(rng=r) for r in (3, 3, 99))
    for s in (whole, first):
        s.setup_chain(np.random.default_rng(5), tune=80, draws=40)
    resumed.setup_chain(np.random.default_rng(0), tune=80, draws=40)
    a = b = model.initial_point()
    for _ in range(60):
        a, _ = whole.step(a)
        b, _ = first.step(b)
    resumed.sampling_state = first.sampling_state
    for _ in range(40):
        a, _ = whole.step(a)
        b, _ = resumed.step(b)
        np.testing.assert_array_equal(a["v"], b["v"])


def test_using_the_distribution_alone_registers_its_steps():
    """In a fresh process, ``pymc_rbm.GaussianRBM`` alone makes pm.sample pick replica exchange; without it, not."""
    code = (
        "import numpy as np, pymc as pm, pymc_rbm\n"
        "from pymc.sampling.mcmc import assign_step_methods\n"
        "with pm.Model() as m:\n"
        "    x = pm.Normal('x')\n"
        "from pymc.step_methods import STEP_METHODS\n"
        "print(sorted(s.__name__ for s in STEP_METHODS if s.__name__.startswith('Gaussian')))\n"
        "p = pymc_rbm.GaussianRBMParams(np.ones((2, 1)), np.zeros(2), np.zeros(1))\n"
        "with pm.Model() as m:\n"
        "    pymc_rbm.GaussianRBM('v', p.W, p.vbias, p.hbias)\n"
        "    print([s.__name__ for s in assign_step_methods(m)[1]])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == ["[]", "['GaussianReplicaExchange']"]


class _SwapsWithoutTheQuadraticTerm(GaussianReplicaExchange):
    """Negative control: swaps decided by ``E(v, h)`` less its quadratic term."""

    def _energy(self, V, Hh):
        return energy(V, Hh, self.params) - (((V - self.params.vbias) / self.params.sigma) ** 2 / 2).sum(axis=-1)


@pytest.mark.parametrize("step_class", [GaussianReplicaExchange, _SwapsWithoutTheQuadraticTerm])
def test_replica_exchange_rounds_sample_every_rung(step_class):
    """2000 rows of a batched variable (independent chains), a fixed ladder: after 100 rounds the hidden states
    of every rung follow ``p_β(h)``; with the wrong swap energy the cold rung does not."""
    p, betas, K = GaussianRBMParams.random(2, 2, scale=1.6, rng=11), (1.0, 0.5, 0.2), 2000
    with pm.Model() as model:
        GaussianRBM("v", p.W, p.vbias, p.hbias, p.sigma, shape=(K, 2))
        step = step_class(betas=list(betas), rng=1)
    step.setup_chain(np.random.default_rng(2), tune=0, draws=100)
    point = model.initial_point()
    for _ in range(100):
        point, _ = step.step(point)
    rungs = (np.concatenate([step.hidden_state, step.hot_hidden]) @ [2, 1]).astype(int).reshape(len(betas), K)
    passed = []
    for r, beta in enumerate(betas):
        try:
            ht.assert_frequencies(np.bincount(rungs[r], minlength=4), tempered_hidden_marginal(p, beta))
            passed.append(True)
        except AssertionError:
            passed.append(False)
    if step_class is GaussianReplicaExchange:
        assert all(passed)
    else:
        assert not passed[0]  # the cold replica, the variable's draws


def test_the_steps_build_on_the_layer_not_its_distribution_and_register_with_the_others():
    """In a fresh process, the step methods load without the Gaussian distribution module (no import circle), and
    importing them registers every family once, in the order that breaks ties: binary, categorical, Gaussian."""
    code = (
        "import sys\n"
        "import pymc_rbm.step_methods.gaussian\n"
        "print(sorted(m for m in ('pymc_rbm.gaussian.distribution', 'pymc_rbm.categorical.distribution',\n"
        "                         'pymc_rbm.distribution') if m in sys.modules))\n"
        "from pymc.step_methods import STEP_METHODS\n"
        "import pymc_rbm.step_methods as sm\n"
        "sm.register()\n"
        "names = [s.__name__ for s in STEP_METHODS]\n"
        "ours = ['ExactDraws', 'ReplicaExchange', 'FlipTheState', 'BlockGibbs', 'CategoricalExactDraws',\n"
        "        'CategoricalReplicaExchange', 'CategoricalMetropolisedGibbs', 'CategoricalGibbs',\n"
        "        'GaussianReplicaExchange', 'GaussianGibbs']\n"
        "print([n for n in names if n in ours] == ours, all(names.count(n) == 1 for n in ours))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == ["[]", "True True"]

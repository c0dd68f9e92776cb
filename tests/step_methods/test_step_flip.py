"""FlipTheState through pm.sample: exactness alone, with a likelihood, batched, next to other steps."""

from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import pymc as pm
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from pymc.sampling.mcmc import assign_step_methods
from pymc.step_methods import STEP_METHODS, CompoundStep
from scipy.special import logsumexp
from scipy.stats import norm

from pymc_rbm import RBM, RBMParams
from pymc_rbm.energy import free_energy
from pymc_rbm.estimators import binary_states, log_marginal_visible
from pymc_rbm.kernels import flip_sweep, init_state
from pymc_rbm.step_methods import BlockGibbs, ExactDraws, FlipTheState, ReplicaExchange

from ._stats import assert_visible_distribution, ess

NV, NH = 6, 4
SAMPLE = dict(tune=200, progressbar=False, compute_convergence_checks=False)
A = np.array([1.0, -0.5, 0.8, 1.2, -1.0, 0.6])  # y ~ Normal(v @ A, SIGMA)
SIGMA, Y = 0.5, 1.7


@pytest.fixture(scope="module")
def params():
    return RBMParams.random(NV, NH, scale=1.5, rng=3)


@pytest.fixture(scope="module")
def rbm_model(params):
    with pm.Model() as model:
        RBM("v", params.W, params.vbias, params.hbias)
    return model


@pytest.fixture(scope="module")
def likelihood_model(params):
    with pm.Model() as model:
        v = RBM("v", params.W, params.vbias, params.hbias)
        pm.Normal("y", v @ A, SIGMA, observed=Y)
    return model


def posterior_log_p(params, y=Y):
    """Exact ``log p(v | y) ∝ log p_RBM(v) + log N(y | v·A, σ)`` by enumeration."""
    lp = log_marginal_visible(params) + norm.logpdf(y, binary_states(NV) @ A, SIGMA)
    return lp - logsumexp(lp)


def draws(idata, name="v"):
    return idata.posterior[name].values


# ------------------------------------------------------------ assignment
def test_registered_and_chosen_automatically(rbm_model, likelihood_model):
    assert FlipTheState in STEP_METHODS and BlockGibbs in STEP_METHODS
    assert STEP_METHODS.index(ExactDraws) < STEP_METHODS.index(ReplicaExchange)  # the first of equals is kept
    for model, chosen in ((rbm_model, ExactDraws), (likelihood_model, ExactDraws)):  # one row: a row term
        with model:  # as in pm.sample: ExactDraws looks for other terms on v in the model of the context
            _, selected = assign_step_methods(model)
        assert selected == {chosen: [model.rvs_to_values[model["v"]]]}


def test_competence():
    with pm.Model():
        v = RBM("v", np.ones((3, 2)), np.zeros(3), np.zeros(2))
        x = pm.Normal("x")
        b = pm.Bernoulli("b", 0.5)
    assert ReplicaExchange.competence(v, False) == pm.step_methods.compound.Competence.IDEAL
    assert FlipTheState.competence(v, False) == pm.step_methods.compound.Competence.PREFERRED
    assert BlockGibbs.competence(v, False) == pm.step_methods.compound.Competence.PREFERRED
    for other in (x, b):
        assert FlipTheState.competence(other, True) == pm.step_methods.compound.Competence.INCOMPATIBLE
        assert BlockGibbs.competence(other, True) == pm.step_methods.compound.Competence.INCOMPATIBLE


def test_clear_errors(params):
    with pm.Model():
        RBM("v", params.W, params.vbias, params.hbias)
        x = pm.Normal("x")
        data = RBM("data", params.W, params.vbias, params.hbias, observed=np.zeros((2, NV), dtype=int))
        with pytest.raises(ValueError, match="can only sample RBM variables.*; x is not"):
            FlipTheState([x])
        with pytest.raises(ValueError, match="observed"):
            FlipTheState([data])
        with pytest.raises(ValueError, match="sweeps"):
            FlipTheState(sweeps=0)
        with pytest.raises(ValueError, match="alpha"):
            FlipTheState(alpha=1.5)
    with pm.Model():
        pm.Normal("x")
        with pytest.raises(ValueError, match="no free RBM variable"):
            FlipTheState()


def test_one_step_per_rbm_variable(params):
    with pm.Model() as model:
        RBM("a", params.W, params.vbias, params.hbias)
        RBM("b", params.W, params.vbias, params.hbias, shape=(2, NV))
        step = FlipTheState()
    assert isinstance(step, CompoundStep) and [s.vars for s in step.methods] == [[v] for v in model.value_vars]
    with model, pytest.raises(ValueError, match="one RBM variable per step"):
        FlipTheState(blocked=True)


def test_importing_pymc_rbm_does_not_load_pymc():
    code = (
        "import sys, pymc_rbm; assert 'pymc' not in sys.modules; "
        "pymc_rbm.FlipTheState; from pymc.step_methods import STEP_METHODS; "
        "assert pymc_rbm.FlipTheState in STEP_METHODS"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# ------------------------------------------------------------- the kernel
def test_step_is_the_kernel(params, rbm_model):
    """With the same generator, the step's draws are flip_sweep's (h first drawn from p(h | v))."""
    with rbm_model:
        step = FlipTheState()
    step.setup_chain(np.random.default_rng(5), 0, 1)
    point = rbm_model.initial_point()
    rng = np.random.default_rng(5)
    state = init_state(rng, point["v"], params)
    for _ in range(300):
        point, stats = step.step(point)
        state, info = flip_sweep(rng, state, params)
        assert_array_equal(point["v"], state.v[0])
        assert stats[0]["n_changed"] <= NV
    assert_allclose(stats[0]["free_energy"], free_energy(state.v[0], params), rtol=1e-12)


# ------------------------------------------------------------ exactness
@pytest.mark.parametrize("options", [{}, {"alpha": 0.5, "sweeps": 3}], ids=["flip", "alpha0.5x3"])
def test_rbm_alone_matches_enumeration(params, rbm_model, options):
    with rbm_model:
        step = FlipTheState(**options)
        idata = pm.sample(draws=3000, chains=2, cores=1, step=step, random_seed=1, **SAMPLE)
    assert_visible_distribution(draws(idata), log_marginal_visible(params), label=str(options))
    stats = idata.sample_stats
    assert_allclose(stats["free_energy"].values, free_energy(draws(idata), params), rtol=1e-10)
    assert np.all(stats["accept"].values == 1.0) and not stats["refreshed"].values[:, 1:].any()


def test_likelihood_is_corrected_automatically(params, likelihood_model):
    """y ~ N(v·a, σ) observed: FlipTheState finds the term and samples p(v | y) exactly."""
    with likelihood_model:
        step = FlipTheState([likelihood_model["v"]], random_start=False)
        idata = pm.sample(draws=3000, chains=2, cores=1, random_seed=2, step=step, **SAMPLE)
    assert_visible_distribution(draws(idata), posterior_log_p(params), label="likelihood")
    accept = idata.sample_stats["accept"].values
    assert 0.05 < accept.mean() < 0.95  # the correction did work
    # the prior alone is far from this posterior: the test can tell them apart
    with pytest.raises(AssertionError):
        assert_visible_distribution(draws(idata), log_marginal_visible(params))


@pytest.mark.parametrize("step", [None, ReplicaExchange], ids=["default", "replica-exchange"])
def test_default_step_samples_the_posterior(params, likelihood_model, step):
    """pm.sample's default (ExactDraws: proposals from the exact marginal accepted by the likelihood, then
    corrected sweeps) and ReplicaExchange (informed moves of the cold replica) sample p(v | y) too."""
    with likelihood_model:
        chosen = None if step is None else step([likelihood_model["v"]])
        idata = pm.sample(draws=3000, chains=2, cores=1, random_seed=2, step=chosen, **SAMPLE)
    assert ("n_tries" if step is None else "n_temperatures") in idata.sample_stats
    assert_visible_distribution(draws(idata), posterior_log_p(params), label=str(step))


def test_batch_of_chains(params):
    """shape=(K, n_visible): K independent chains in one variable, each with its own likelihood."""
    ys = np.array([1.7, -0.8, 0.3])
    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias, shape=(3, NV))
        pm.Normal("y", v @ A, SIGMA, observed=ys)
        # from the shared all-zero start: this checks the batch's exactness, not mixing (from a random start
        # a row can sit in a minor mode for the whole run, which is what ReplicaExchange is for)
        step = FlipTheState(sweeps=2, random_start=False)
        idata = pm.sample(draws=2000, chains=2, cores=1, step=step, random_seed=3, **SAMPLE)
    vs = draws(idata)
    assert vs.shape == (2, 2000, 3, NV)
    assert idata.sample_stats["free_energy"].shape == (2, 2000, 3)
    assert_allclose(idata.sample_stats["free_energy"].values, free_energy(vs, params), rtol=1e-10)
    for k, y in enumerate(ys):
        assert_visible_distribution(vs[:, :, k], posterior_log_p(params, y), label=f"chain {k}")


# -------------------------------------------------- next to other steps
def test_hidden_refresh_when_the_weights_move():
    """A Metropolis step flips the sign of W between draws; p(b, v) is known exactly.

    ``b ~ Bernoulli(0.5)``, ``W = (2b - 1) W0``: the joint posterior is
    ``p(b) p_{W_b}(v)``. A stale hidden state (drawn under the other sign)
    biases the chain, though only by a few standard errors at this length:
    ``test_step_exact.py`` checks the refresh exactly.
    """
    p0 = RBMParams.random(4, 3, scale=2.5, rng=8)
    with pm.Model():
        b = pm.Bernoulli("b", 0.5)
        W = (2.0 * b - 1.0) * p0.W
        RBM("v", W, p0.vbias, p0.hbias, log_partition="exact")
        idata = pm.sample(draws=4000, chains=2, cores=1, random_seed=4, **SAMPLE)
    bs, vs = draws(idata, "b"), draws(idata, "v")
    refreshed = idata.sample_stats["refreshed"].values
    assert 0.05 < refreshed.mean() < 0.95
    assert abs(bs.mean() - 0.5) < 5 * 0.5 / np.sqrt(ess(bs)[0])  # p_b(v) is normalised: P(b = 1) = 1/2
    for sign in (0, 1):
        pb = RBMParams((2.0 * sign - 1.0) * p0.W, p0.vbias, p0.hbias)
        mask = bs == sign
        n = mask.sum(axis=1).min()
        sub = np.stack([vs[c][mask[c]][:n] for c in range(2)])
        assert_visible_distribution(sub, log_marginal_visible(pb), label=f"b={sign}")


def test_nuts_and_flip_the_state():
    """hbias + c with c ~ N(0, 1) learned from observed vectors of the same RBM; c by NUTS, v by FlipTheState.

    The parameters are random: the step reads them through its one compiled
    function every draw and refreshes h whenever c moved. Compared with
    quadrature over c.
    """
    p = RBMParams.random(4, 3, scale=1.5, rng=3)
    observed = pm.draw(RBM.dist(p.W, p.vbias, p.hbias + 1.0, size=(6,)), random_seed=9)
    with pm.Model():
        c = pm.Normal("c", 0.0, 1.0)
        RBM("data", p.W, p.vbias, p.hbias + c, observed=observed, log_partition="exact")
        RBM("v", p.W, p.vbias, p.hbias + c, log_partition="exact")
        idata = pm.sample(draws=800, chains=2, cores=1, random_seed=5, **SAMPLE)
    assert {"free_energy", "diverging"} <= set(idata.sample_stats.data_vars)  # both steps' stats
    grid = np.linspace(-5, 6, 1101)
    rows = observed @ (1 << np.arange(3, -1, -1))
    log_pv = np.array([log_marginal_visible(RBMParams(p.W, p.vbias, p.hbias + c)) for c in grid])
    log_post = norm.logpdf(grid) + log_pv[:, rows].sum(axis=1)
    w = np.exp(log_post - logsumexp(log_post))
    c_mean = w @ grid
    c_sd = np.sqrt(w @ (grid - c_mean) ** 2)
    cs = draws(idata, "c")
    assert abs(cs.mean() - c_mean) < 5 * c_sd / np.sqrt(ess(cs)[0])
    assert_visible_distribution(draws(idata), logsumexp(np.log(w)[:, None] + log_pv, axis=0), label="NUTS")
    assert idata.sample_stats["refreshed"].values.mean() > 0.5  # c moves almost every draw


def test_nuts_on_the_likelihood_location(params):
    """μ ~ N(0, 1) by NUTS in y ~ N(v·a + μ, σ), next to the corrected FlipTheState.

    The terms the correction evaluates change every draw (μ moves). μ given v
    is Gaussian, so ``p(v | y) ∝ p_RBM(v) N(y | v·a, sqrt(σ² + 1))`` and
    ``E[μ | y] = Σ_v p(v | y) (y - v·a) / (1 + σ²)`` exactly.
    """
    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias)
        mu = pm.Normal("mu", 0.0, 1.0)
        pm.Normal("y", v @ A + mu, SIGMA, observed=Y)
        idata = pm.sample(draws=2000, chains=2, cores=1, random_seed=6, **SAMPLE)
    mean = binary_states(NV) @ A
    log_p = log_marginal_visible(params) + norm.logpdf(Y, mean, np.sqrt(SIGMA**2 + 1.0))
    assert_visible_distribution(draws(idata), log_p, label="NUTS mu")
    w = np.exp(log_p - logsumexp(log_p))
    mu_mean = w @ ((Y - mean) / (1.0 + SIGMA**2))
    mu_var = w @ (((Y - mean) / (1.0 + SIGMA**2)) ** 2) - mu_mean**2 + SIGMA**2 / (1.0 + SIGMA**2)
    mus = draws(idata, "mu")
    assert abs(mus.mean() - mu_mean) < 5 * np.sqrt(mu_var / ess(mus)[0])
    assert 0.05 < idata.sample_stats["accept"].values.mean() < 0.95


# ---------------------------------------------------- pm.sample features
def test_reproducible_and_parallel(likelihood_model):
    kw = dict(draws=300, chains=2, **SAMPLE)
    with likelihood_model:
        a = pm.sample(cores=1, random_seed=7, **kw)
        b = pm.sample(cores=1, random_seed=7, **kw)
        c = pm.sample(cores=2, random_seed=7, mp_ctx="spawn", **kw)  # the step is pickled and re-imported
        d = pm.sample(cores=1, random_seed=8, **kw)
    assert_array_equal(draws(a), draws(b))
    assert_array_equal(draws(a), draws(c))  # the chains' generators do not depend on the process
    assert_array_equal(a.sample_stats["free_energy"].values, c.sample_stats["free_energy"].values)
    assert not np.array_equal(draws(a), draws(d))


def test_step_options_by_name_and_progressbar(rbm_model):
    with rbm_model:
        idata = pm.sample(
            draws=20, tune=5, chains=1, random_seed=1, compute_convergence_checks=False,
            progressbar=True, exact_draws={"record_hidden": True},
        )
    assert idata.sample_stats["hidden"].shape == (1, 20, NH)
    big = RBMParams.random(24, 23, rng=0)  # a smaller layer of 23 units: pm.sample picks replica exchange
    with pm.Model():
        RBM("v", big.W, big.vbias, big.hbias)
        idata = pm.sample(
            draws=20, tune=5, chains=1, random_seed=1, compute_convergence_checks=False,
            progressbar=True, replica_exchange={"sweeps": 2, "record_hidden": True, "betas": [0.5, 1.0]},
        )
    assert idata.sample_stats["hidden"].shape == (1, 20, 23)
    assert (idata.sample_stats["n_temperatures"] == 2).all()


def test_recorded_hidden_of_a_batch_keeps_draws_apart():
    # PyMC's NDArray trace stacks non-scalar stats with np.vstack: a (K, n_hidden) value would merge
    # the batch into the draw axis, so a batch is recorded as one flat, chain-major vector per draw
    params = RBMParams.random(5, 3, rng=2)
    with pm.Model():
        RBM("v", params.W, params.vbias, params.hbias, shape=(4, 5))
        step = FlipTheState(record_hidden=True)
        idata = pm.sample(draws=6, tune=0, chains=1, step=step, random_seed=2, progressbar=False,
                          compute_convergence_checks=False)
    hidden = idata.sample_stats["hidden"].values
    assert hidden.shape == (1, 6, 4 * 3)
    np.testing.assert_array_equal(hidden[0, -1].reshape(4, 3), step.hidden_state)


def test_sampling_state_resumes_exactly(likelihood_model):
    with likelihood_model:
        step = FlipTheState(sweeps=2)
    step.setup_chain(np.random.default_rng(3), 0, 1)
    point = likelihood_model.initial_point()
    for _ in range(20):
        point, _ = step.step(point)
    # ZarrTrace stores the state with the trace (pickled): resume from a pickled copy
    saved, saved_point = pickle.loads(pickle.dumps(step.sampling_state)), dict(point)
    assert saved.hidden_state is not None and saved.hidden_input is not None
    first = []
    for _ in range(30):
        point, stats = step.step(point)
        first.append((point["v"], stats[0]["free_energy"], stats[0]["accept"]))
    with likelihood_model:
        fresh = FlipTheState(sweeps=2)
    fresh.sampling_state = saved
    point = saved_point
    for expected in first:
        point, stats = fresh.step(point)
        assert_array_equal(point["v"], expected[0])
        assert (stats[0]["free_energy"], stats[0]["accept"]) == expected[1:]


@pytest.mark.parametrize("cls, options", [(FlipTheState, {}), (FlipTheState, {"alpha": 0.5}), (BlockGibbs, {})])
@pytest.mark.parametrize("shape", [(7,), (3, 7)])
def test_compiled_and_numpy_sweeps_give_the_same_trace(cls, options, shape):
    params = RBMParams.random(7, 4, scale=2.0, rng=8)
    traces = []
    for compiled in (False, True):
        with pm.Model():
            RBM("v", params.W, params.vbias, params.hbias, shape=shape)
            step = cls(compiled=compiled, sweeps=3, record_hidden=True, **options)
            assert step.compiled == compiled
            traces.append(pm.sample(draws=150, tune=20, chains=2, cores=1, step=step, random_seed=4,
                                    progressbar=False, compute_convergence_checks=False))
    a, b = traces
    assert_array_equal(a.posterior["v"].values, b.posterior["v"].values)
    for stat in ("hidden", "n_changed", "n_hidden_changed"):
        assert_array_equal(a.sample_stats[stat].values, b.sample_stats[stat].values)
    assert_allclose(a.sample_stats["free_energy"].values, b.sample_stats["free_energy"].values, atol=1e-9)

"""The RBM distribution: normalised logp, log Z modes, exact draws, bad input."""

import warnings

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import pytest
import _brute
from pymc.testing import Domain, RealMatrix, assert_support_point_is_expected, check_logp
from scipy.special import logsumexp

from pymc_rbm import RBM, RBMParams
from pymc_rbm.distribution import LogPartition, log_partition_mode, rbm_params_of
from pymc_rbm.energy import free_energy
from pymc_rbm.estimators import (
    EnumerationTooLarge,
    binary_states,
    log_likelihood,
    log_marginal_visible,
    log_partition,
    log_partition_exact,
)

# the check of a log Z estimate against pm.Data parameters runs in Numba's object mode on purpose, as the other Ops
pytestmark = pytest.mark.filterwarnings("ignore:Numba will use object mode to run EstimateFingerprintCheck:UserWarning")


def _logp_all_states(params, **kwargs):
    v = RBM.dist(params.W, params.vbias, params.hbias, **kwargs)
    return pm.logp(v, binary_states(params.n_visible).astype(np.int64)).eval()


@pytest.mark.parametrize("shape", [(1, 1), (3, 2), (2, 5), (7, 7), (12, 4), (6, 12)])
@pytest.mark.parametrize("scale", [0.5, 3.0, 20.0])
def test_logp_of_every_state_sums_to_one(shape, scale):
    params = RBMParams.random(*shape, scale=scale, rng=hash((shape, scale)) % 2**32)
    lp = _logp_all_states(params)
    assert logsumexp(lp) == pytest.approx(0.0, abs=1e-10)
    np.testing.assert_allclose(lp, log_marginal_visible(params), atol=1e-10)


def _brute_logp(value, W, vbias, hbias):
    """log p(v) from the independent brute-force enumeration of tests/_brute.py."""
    index = int(value @ (1 << np.arange(len(value) - 1, -1, -1)))
    return _brute.log_marginal_visible(W, vbias, hbias)[index]


def test_check_logp_against_brute_force():
    nv, nh = 3, 2
    values = [np.array(s, dtype=np.int64) for s in binary_states(nv)]
    rng = np.random.default_rng(5)
    vectors = lambda n: Domain([rng.normal(size=n) * 2 for _ in range(6)], edges=(None, None))  # noqa: E731
    check_logp(
        RBM,
        Domain(values, dtype="int64", edges=(None, None)),
        {"W": RealMatrix(nv, nh), "vbias": vectors(nv), "hbias": vectors(nh)},
        _brute_logp,
        decimal=10,
        n_samples=60,
        extra_args={"log_partition": "exact"},
    )


def test_non_binary_values_have_zero_probability():
    params = RBMParams.random(3, 2, rng=0)
    v = RBM.dist(params.W, params.vbias, params.hbias)
    lp = pm.logp(v, np.array([[0, 2, 1], [-1, 0, 0], [1, 0, 1]])).eval()
    assert lp[0] == -np.inf and lp[1] == -np.inf and np.isfinite(lp[2])


def test_log_partition_gradient_is_exact():
    rng = np.random.default_rng(1)
    W, vbias, hbias = rng.normal(size=(4, 3)), rng.normal(size=4), rng.normal(size=3)
    pytensor.gradient.verify_grad(LogPartition(), [W, vbias, hbias], rng=rng, abs_tol=1e-6, rel_tol=1e-6)


def test_log_partition_op_gives_nan_for_invalid_parameters():
    W = pt.dmatrix("W")
    out = LogPartition()(W, np.zeros(2), np.zeros(3)).eval({W: np.full((2, 3), np.nan)})
    assert np.isnan(out)


# ---------------------------------------------------------------- log Z modes
def test_auto_is_exact_when_enumerable():
    params = RBMParams.random(30, 6, rng=2)
    v = RBM.dist(params.W, params.vbias, params.hbias)
    assert log_partition_mode(v) == "exact"
    x = (np.arange(30) % 2).astype(np.int64)
    expected = -free_energy(x, params) - log_partition_exact(params).log_z
    assert pm.logp(v, x).eval() == pytest.approx(expected, abs=1e-10)


def _about_log_z(caught) -> list[str]:
    """The messages of caught warnings that speak of log Z."""
    return [str(w.message) for w in caught if "log Z" in str(w.message)]


def _two_blocks(n_visible: int, n_hidden: int, rng: int) -> tuple[RBMParams, float]:
    """An RBM of two independent blocks (block-diagonal W) and its exact log Z, the sum of the blocks' own."""
    a, b = (RBMParams.random(n_visible, n_hidden, rng=rng + k, scale=0.6) for k in (0, 1))
    W = np.zeros((2 * n_visible, 2 * n_hidden))
    W[:n_visible, :n_hidden], W[n_visible:, n_hidden:] = a.W, b.W
    whole = RBMParams(W, np.concatenate([a.vbias, b.vbias]), np.concatenate([a.hbias, b.hbias]))
    return whole, log_partition_exact(a).log_z + log_partition_exact(b).log_z


def test_auto_estimates_log_z_beyond_max_bits_once_at_the_first_evaluation():
    params, log_z = _two_blocks(20, 15, rng=3)  # 30 hidden units: beyond the estimators' enumeration too
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        v = RBM.dist(params.W, params.vbias, params.hbias)
        assert log_partition_mode(v) == "estimated"
        assert pm.draw(v, random_seed=1).shape == (40,)
    assert _about_log_z(caught) == []  # building and a forward draw estimate nothing, and say nothing
    x = (np.arange(40) % 3 == 0).astype(np.int64)
    with pytest.warns(UserWarning, match=r"estimated once .* chose method='ladder'") as said:
        first = float(pm.logp(v, x).eval())
    assert said[0].filename == __file__  # the warning points at the user's line
    estimate = log_partition(params, "auto", rng=0)  # the seed the distribution uses
    assert first == pytest.approx(-free_energy(x, params) - estimate.log_z, abs=1e-9)
    assert abs(estimate.log_z - log_z) <= max(4 * estimate.stderr, 0.1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = RBM.dist(params.W, params.vbias, params.hbias)
        assert float(pm.logp(again, x).eval()) == first
    assert _about_log_z(caught) == []  # kept: the same parameters are not estimated again


def test_auto_estimate_is_exact_where_the_estimators_can_enumerate():
    params = RBMParams.random(12, 8, rng=3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        v = RBM.dist(params.W, params.vbias, params.hbias, max_bits=4)
        x = np.ones(12, dtype=np.int64)
        value = pm.logp(v, x).eval()
    assert _about_log_z(caught) == []  # an exact value needs no warning
    assert log_partition_mode(v) == "estimated"
    assert value == pytest.approx(-free_energy(x, params) - log_partition_exact(params).log_z, abs=1e-10)


def test_auto_estimates_observed_values_and_leaves_log_z_out_of_a_latent_variable():
    params = RBMParams.random(12, 8, rng=4)
    data = np.eye(12, dtype=np.int64)[:3]
    with pm.Model() as model:
        observed = RBM("o", params.W, params.vbias, params.hbias, max_bits=4, observed=data)
        with pytest.warns(UserWarning, match="not observed, so log Z is left out") as said:
            latent = RBM("v", params.W, params.vbias, params.hbias, max_bits=4)
    assert said[0].filename == __file__
    assert (log_partition_mode(observed), log_partition_mode(latent)) == ("estimated", "omitted")
    pointwise = model.compile_logp(vars=[observed], sum=False)(model.initial_point())[0]
    np.testing.assert_allclose(pointwise, -free_energy(data, params) - log_partition_exact(params).log_z, atol=1e-10)
    x = np.ones(12, dtype=np.int64)
    assert float(model.compile_logp(vars=[latent])({"v": x})) == pytest.approx(-free_energy(x, params))


def test_auto_refuses_large_models_with_random_parameters():
    with pm.Model():
        W = pm.Normal("W", shape=(25, 24))
        with pytest.raises(ValueError, match="too many to enumerate.*W"):
            RBM("v", W, np.zeros(25), np.zeros(24))


def test_none_refused_for_random_parameters_and_allowed_for_constants():
    with pm.Model():
        b = pm.Normal("b", shape=3)
        with pytest.raises(ValueError, match="log_partition=None.*constants"):
            RBM("v", np.zeros((3, 2)), b, np.zeros(2), log_partition=None)
        v = RBM("w", np.zeros((3, 2)), np.zeros(3), np.zeros(2), log_partition=None)
    assert log_partition_mode(v) == "omitted"


def test_given_estimate_is_subtracted():
    params = RBMParams.random(4, 3, rng=4)
    est = log_partition_exact(params)
    for given in (est, est.log_z, pt.as_tensor_variable(est.log_z)):
        v = RBM.dist(params.W, params.vbias, params.hbias, log_partition=given)
        assert log_partition_mode(v) == "given"
        assert logsumexp(pm.logp(v, binary_states(4).astype(np.int64)).eval()) == pytest.approx(0, abs=1e-12)


_DATA = np.random.default_rng(8).integers(0, 2, (5, 6))


def _data_model(params, log_partition, hbias=None):
    """An RBM on pm.Data W (and hbias where given) with ``log_partition``; its model and compiled logp."""
    with pm.Model() as model:
        W = pm.Data("W", params.W)
        c = params.hbias if hbias is None else pm.Data("c", hbias)
        RBM("v", W, params.vbias, c, log_partition=log_partition, observed=_DATA)
    return model, model.compile_logp()


def test_estimate_of_another_model_is_refused_for_data_parameters():
    params, other = RBMParams.random(6, 4, rng=1), RBMParams.random(6, 4, rng=2)
    W_before = params.W.copy()
    with pytest.raises(ValueError, match="'exact' estimate of log Z .* computed for another model"):
        _data_model(params, log_partition_exact(other))
    with pytest.raises(ValueError, match="computed for another model"):  # W is the estimate's, the data hbias not
        _data_model(params, log_partition_exact(params), hbias=params.hbias + 0.5)
    np.testing.assert_array_equal(params.W, W_before)
    _data_model(params, log_partition_exact(params), hbias=params.hbias)  # the estimate's own model is taken


def test_estimate_of_data_parameters_is_exact_until_set_data_changes_them():
    params, other = RBMParams.random(6, 4, rng=1), RBMParams.random(6, 4, rng=2)
    expected = log_likelihood(params, _DATA).sum()
    model, logp = _data_model(params, log_partition_exact(params))
    assert logp({}) == pytest.approx(expected, abs=1e-10)
    with model:
        pm.set_data({"W": other.W})
        with pytest.raises(ValueError, match="other values of W, vbias and hbias .*pm.set_data"):
            logp({})
        with pytest.raises(ValueError, match="pm.set_data"):
            model.compile_logp()({})
        assert pm.draw(model["v"], random_seed=0).shape == (5, 6)  # draws do not use log Z
        pm.set_data({"W": params.W})
    assert logp({}) == pytest.approx(expected, abs=1e-10)


def test_data_log_z_set_together_with_the_parameters_is_not_checked():
    params = RBMParams.random(6, 4, rng=1)
    other = RBMParams(RBMParams.random(6, 4, rng=2).W, params.vbias, params.hbias)  # another W, the same biases
    with pm.Model() as model:
        W, log_z = pm.Data("W", params.W), pm.Data("log_z", log_partition_exact(params).log_z)
        RBM("v", W, params.vbias, params.hbias, log_partition=log_z, observed=_DATA)
        logp = model.compile_logp()
        pm.set_data({"W": other.W, "log_z": log_partition_exact(other).log_z})
    assert logp({}) == pytest.approx(log_likelihood(other, _DATA).sum(), abs=1e-10)


def test_estimate_refused_for_random_parameters():
    params = RBMParams.random(6, 4, rng=1)
    with pm.Model():
        W = pm.Normal("W", shape=(6, 4))
        with pytest.raises(ValueError, match=r"one fixed model.*\['W'\].*log_partition='exact'"):
            RBM("v", W, params.vbias, params.hbias, log_partition=log_partition_exact(params))


def test_exact_too_large_is_refused_with_the_size():
    params = RBMParams.random(30, 30, rng=5)
    with pytest.raises(EnumerationTooLarge, match=r"2\*\*30.*approximate"):
        RBM.dist(params.W, params.vbias, params.hbias, log_partition="exact", max_bits=20)


@pytest.mark.parametrize("bad", ["approx", 3 + 0j, [1.0, 2.0], np.nan])
def test_bad_log_partition_values(bad):
    params = RBMParams.random(3, 2, rng=6)
    with pytest.raises((ValueError, TypeError)):
        RBM.dist(params.W, params.vbias, params.hbias, log_partition=bad)


def test_parameters_with_random_ancestors_are_found():
    with pm.Model():
        s = pm.HalfNormal("s")
        W = pm.Deterministic("W", s * np.ones((3, 2)))
        v = RBM("v", W, np.zeros(3), np.zeros(2), log_partition="exact")
        assert set(rbm_params_of(v)._fields) == {"W", "vbias", "hbias"}
        with pytest.raises(ValueError, match="constants"):
            RBM("u", W, np.zeros(3), np.zeros(2), log_partition=None)


# ---------------------------------------------------------------- draws
@pytest.mark.parametrize("shape", [(12, 5), (6, 12)])
def test_exact_draws_match_enumeration(shape):
    params = RBMParams.random(*shape, rng=7)
    n = 1_000_000
    v = RBM.dist(params.W, params.vbias, params.hbias, shape=(n, shape[0]))
    draws = pm.draw(v, random_seed=11)
    assert draws.dtype == np.int64 and draws.shape == (n, shape[0])
    idx = draws @ (1 << np.arange(shape[0] - 1, -1, -1))
    freq = np.bincount(idx, minlength=2 ** shape[0]) / n
    tv = 0.5 * np.abs(freq - np.exp(log_marginal_visible(params))).sum()
    assert tv < 0.02


def test_draws_are_reproducible_and_batched():
    params = RBMParams.random(5, 3, rng=8)
    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias, shape=(4, 5))
        prior = pm.sample_prior_predictive(draws=50, random_seed=3)
    a = prior.prior["v"].values
    assert a.shape == (1, 50, 4, 5) and set(np.unique(a)) <= {0, 1}
    np.testing.assert_array_equal(pm.draw(v, random_seed=2), pm.draw(v, random_seed=2))
    assert pm.logp(v, a[0, 0]).eval().shape == (4,)


def test_approximate_draws_warn_and_are_close():
    params = RBMParams.random(6, 5, scale=0.5, rng=9)
    v = RBM.dist(params.W, params.vbias, params.hbias, max_bits=3, gibbs_sweeps=20, shape=(20_000, 6),
                 log_partition=None)
    with pytest.warns(UserWarning, match="approximate"):
        draws = pm.draw(v, random_seed=1)
    idx = draws @ (1 << np.arange(5, -1, -1))
    freq = np.bincount(idx, minlength=64) / len(idx)
    assert 0.5 * np.abs(freq - np.exp(log_marginal_visible(params))).sum() < 0.05


def test_support_point_is_a_mean_field_pass():
    params = RBMParams.random(6, 4, rng=10)
    with pm.Model() as model:
        RBM("x", params.W, params.vbias, params.hbias)
    expected = (params.vbias + params.W @ (1 / (1 + np.exp(-params.hbias))) > 0).astype(np.int64)
    assert_support_point_is_expected(model, expected)
    with pm.Model() as model:
        RBM("x", params.W, params.vbias, params.hbias, shape=(3, 6))
    assert_support_point_is_expected(model, np.tile(expected, (3, 1)))


# ---------------------------------------------------------------- bad input
def test_observed_data_is_validated_at_build_time():
    params = RBMParams.random(4, 2, rng=12)
    data = np.array([[0, 1, 1, 0], [1, 1, 0, 0.5]])
    before = data.copy()
    with pm.Model():
        with pytest.raises(ValueError, match="binary.*0.5"):
            RBM("a", params.W, params.vbias, params.hbias, observed=data)
        with pytest.raises(ValueError, match="3 units.*n_visible = 4"):
            RBM("b", params.W, params.vbias, params.hbias, observed=np.zeros((2, 3)))
        with pytest.raises(ValueError, match="binary"):
            RBM("c", params.W, params.vbias, params.hbias, observed=pm.Data("d", np.full((2, 4), 3)))
        ok = RBM("e", params.W, params.vbias, params.hbias, observed=(data > 0.7))
    np.testing.assert_array_equal(data, before)
    assert ok.eval().shape == (2, 4)


def test_mismatched_parameter_shapes_are_refused():
    with pytest.raises(ValueError, match="vbias has 3 entries.*4 rows"):
        RBM.dist(np.zeros((4, 2)), np.zeros(3), np.zeros(2))
    with pytest.raises(ValueError, match="hbias has 5 entries.*2 columns"):
        RBM.dist(np.zeros((4, 2)), np.zeros(4), np.zeros(5))
    with pytest.raises(ValueError, match="batched parameters"):
        RBM.dist(np.zeros((2, 4, 2)), np.zeros(4), np.zeros(2))


def test_non_finite_parameters_fail_the_parameter_check():
    W = pt.dmatrix("W")
    v = RBM.dist(W, np.zeros(3), np.zeros(2), log_partition="exact")
    fn = pytensor.function([W], pm.logp(v, np.zeros(3, dtype=np.int64)))
    assert np.isfinite(fn(np.ones((3, 2))))
    with pytest.raises(pm.logprob.utils.ParameterValueError, match="finite"):
        fn(np.full((3, 2), np.nan))


# ---------------------------------------------------------------- inference
def test_nuts_on_the_weights_matches_quadrature():
    """Posterior of a 2x1 RBM's weights under a Normal prior, by NUTS and by a grid."""
    rng = np.random.default_rng(13)
    data = (rng.random((40, 2)) < [0.8, 0.7]).astype(np.int64)
    data[:15, 1] = data[:15, 0]
    with pm.Model():
        W = pm.Normal("W", 0.0, 1.5, shape=(2, 1))
        RBM("v", W, np.zeros(2), np.zeros(1), log_partition="exact", observed=data)
        idata = pm.sample(
            draws=1500, tune=700, chains=2, cores=1, random_seed=2, progressbar=False, compute_convergence_checks=False
        )
    post = idata.posterior["W"].values.reshape(-1, 2)

    grid = np.linspace(-6, 6, 241)
    g0, g1 = np.meshgrid(grid, grid, indexing="ij")
    logpost = np.empty_like(g0)
    for i, j in np.ndindex(g0.shape):
        p = RBMParams([[g0[i, j]], [g1[i, j]]], np.zeros(2), np.zeros(1))
        logpost[i, j] = log_likelihood(p, data).sum() - (g0[i, j] ** 2 + g1[i, j] ** 2) / (2 * 1.5**2)
    w = np.exp(logpost - logpost.max())
    w /= w.sum()
    mean = np.array([(w * g0).sum(), (w * g1).sum()])
    sd = np.sqrt(np.array([(w * g0**2).sum(), (w * g1**2).sum()]) - mean**2)
    assert np.all(np.abs(post.mean(axis=0) - mean) < 4 * sd / np.sqrt(600))
    np.testing.assert_allclose(post.std(axis=0), sd, rtol=0.1)


# ---------------------------------------------------------------- real models
@pytest.mark.parametrize("h, expected", [(10, -173.874), (20, -145.057)])
def test_mnist_test_log_likelihood_through_pymc(mnist_model, binarized_mnist_test, h, expected):
    params = mnist_model(f"mnist_h{h}")
    test = binarized_mnist_test
    v = RBM.dist(params.W, params.vbias, params.hbias)
    assert log_partition_mode(v) == "exact"
    assert pm.logp(v, test.astype(np.int64)).eval().mean() == pytest.approx(expected, abs=1e-3)


@pytest.mark.filterwarnings("ignore:Data in v contains missing values:UserWarning")
def test_missing_cells_are_imputed_from_the_exact_conditional():
    """NaN cells of observed data: PyMC imputes them (its Metropolis; the RBM steps take whole rows only)."""
    from pymc.step_methods import Metropolis

    from pymc_rbm import FlipTheState

    p = RBMParams.random(6, 3, scale=1.5, rng=0)
    data = np.array([[1.0, np.nan, 0.0, 1.0, np.nan, 0.0], [0, 1, 1, 0, 0, 1]])
    with pm.Model() as model:
        RBM("v", p.W, p.vbias, p.hbias, observed=data)
        (free,) = model.free_RVs
        assert free.name == "v_unobserved" and FlipTheState.competence(free) == 0  # not an RBM variable
        idata = pm.sample(draws=3000, tune=500, chains=1, cores=1, step=Metropolis([free]), progressbar=False,
                          random_seed=1, compute_convergence_checks=False)
    draws = idata.posterior["v_unobserved"].values.reshape(-1, 2)
    assert set(np.unique(draws)) <= {0, 1}
    completions = np.array([[a, b] for a in (0, 1) for b in (0, 1)])
    rows = np.tile(np.nan_to_num(data[0]), (4, 1))
    rows[:, [1, 4]] = completions
    exact = np.exp(-free_energy(rows, p) - logsumexp(-free_energy(rows, p)))
    seen = np.array([np.mean((draws == c).all(axis=1)) for c in completions])
    assert 0.5 * np.abs(seen - exact).sum() < 0.06, (seen, exact)


@pytest.mark.filterwarnings("ignore:Data in v contains missing values:UserWarning")
def test_missing_rows_are_an_rbm_variable_for_the_rbm_steps():
    from pymc_rbm import FlipTheState

    p = RBMParams.random(6, 3, rng=0)
    data = np.array([[np.nan] * 6, [0, 1, 1, 0, 0, 1], [np.nan] * 6])
    with pm.Model() as model:
        RBM("v", p.W, p.vbias, p.hbias, observed=np.ma.masked_invalid(data))
    (free,) = model.free_RVs
    assert free.name == "v_unobserved" and model.initial_point()["v_unobserved"].shape == (2, 6)
    assert FlipTheState.competence(free) > 0

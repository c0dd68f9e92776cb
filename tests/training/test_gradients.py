"""Gradients of the log-likelihood: exact against finite differences, approximations against exact."""

import numpy as np
import pytest

import _brute
from pymc_rbm import RBMParams
from pymc_rbm.estimators.boltzmann_machine import BoltzmannMachine
from pymc_rbm.training import (
    Gradient,
    bm_kl_divergence,
    bm_model_moments,
    data_statistics,
    fit_boltzmann_machine,
    log_likelihood_gradient,
    model_statistics,
)

DATA = np.array([[1, 0, 1, 1], [0, 0, 1, 0], [1, 1, 1, 1], [0, 1, 0, 0], [1, 0, 1, 1]])


def brute_mean_log_likelihood(W, vbias, hbias, data=DATA):
    """Independent reference: every joint state enumerated (tests/_brute.py)."""
    return float(np.mean(-_brute.free_energy(data.astype(float), W, vbias, hbias) - _brute.log_z(W, vbias, hbias)))


def finite_difference_gradient(params, eps=1e-5):
    arrays = [np.array(a) for a in (params.W, params.vbias, params.hbias)]
    grads = []
    for a in arrays:
        g = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            old = a[idx]
            a[idx] = old + eps
            up = brute_mean_log_likelihood(*arrays)
            a[idx] = old - eps
            down = brute_mean_log_likelihood(*arrays)
            a[idx] = old
            g[idx] = (up - down) / (2 * eps)
        grads.append(g)
    return Gradient(*grads)


@pytest.mark.parametrize("scale", [0.5, 3.0])
def test_exact_gradient_matches_finite_differences(scale):
    params = RBMParams.random(4, 3, scale=scale, rng=7)
    g = log_likelihood_gradient(params, DATA)
    ref = finite_difference_gradient(params)
    for name, a, b in zip(Gradient._fields, g, ref):
        np.testing.assert_allclose(a, b, atol=1e-8, rtol=1e-6, err_msg=name)


def test_exact_gradient_transposed_orientation_matches():
    # 4 visible, 6 hidden: the exact moments enumerate the visible layer instead
    params = RBMParams.random(4, 6, scale=1.0, rng=3)
    g = log_likelihood_gradient(params, DATA)
    ref = finite_difference_gradient(params)
    for a, b in zip(g, ref):
        np.testing.assert_allclose(a, b, atol=1e-8, rtol=1e-6)


def test_data_statistics_sum_the_hiddens_out():
    params = RBMParams.random(4, 3, scale=1.0, rng=0)
    stats = data_statistics(DATA.astype(float), params)
    ph = np.stack([_brute.conditional_hidden(v, params.W, params.vbias, params.hbias) for v in DATA.astype(float)])
    np.testing.assert_allclose(stats.h, ph.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(stats.vh, DATA.T @ ph / len(DATA), rtol=1e-12)
    np.testing.assert_allclose(stats.v, DATA.mean(axis=0))


def test_model_statistics_exact_is_the_brute_force_moments():
    params = RBMParams.random(4, 3, scale=2.0, rng=1)
    m = model_statistics(params, "exact")
    ref = _brute.moments(params.W, params.vbias, params.hbias)
    mv, mh, mvh = ref
    np.testing.assert_allclose(m.v, mv, atol=1e-12)
    np.testing.assert_allclose(m.h, mh, atol=1e-12)
    np.testing.assert_allclose(m.vh, mvh, atol=1e-12)


@pytest.mark.parametrize(
    "method, tol",
    [("mean_field", 2e-2), ("tap", 2e-3), ("bethe", 2e-3), ("mixture_mean_field", 2e-2)],
)
def test_deterministic_gradients_approach_the_exact_one_for_weak_couplings(method, tol):
    params = RBMParams.random(5, 4, scale=0.2, rng=2)
    data = np.vstack([DATA, DATA[:, ::-1]])[:, :4]
    params = RBMParams(params.W[:4], params.vbias[:4], params.hbias)
    exact = log_likelihood_gradient(params, data)
    approx = log_likelihood_gradient(params, data, method=method)
    err = max(np.abs(a - b).max() for a, b in zip(approx, exact))
    assert err < tol, (method, err)


def test_tap_is_closer_than_naive_mean_field():
    params = RBMParams.random(4, 4, scale=0.6, rng=5)
    exact = log_likelihood_gradient(params, DATA)
    errs = {
        m: max(np.abs(a - b).max() for a, b in zip(log_likelihood_gradient(params, DATA, method=m), exact))
        for m in ("mean_field", "tap")
    }
    assert errs["tap"] < errs["mean_field"], errs


def test_gradient_validation():
    params = RBMParams.random(4, 3, rng=0)
    with pytest.raises(ValueError, match="binary"):
        log_likelihood_gradient(params, DATA * 0.5)
    with pytest.raises(ValueError, match="n_visible"):
        log_likelihood_gradient(params, DATA[:, :3])
    with pytest.raises(ValueError, match="n_samples"):
        log_likelihood_gradient(params, DATA[0])
    with pytest.raises(ValueError, match="unknown gradient method"):
        log_likelihood_gradient(params, DATA, method="cd")
    with pytest.raises(TypeError):
        log_likelihood_gradient(params.W, DATA)


# ----------------------------------------------------------------- Boltzmann machines (seed 003)
SPINS = np.array([[1, 1], [1, 1], [-1, -1]])


def test_bm_exact_learning_follows_the_log_likelihood_gradient():
    """One update of fit_boltzmann_machine equals a step along finite differences of the log-likelihood."""
    bm = BoltzmannMachine(np.array([[0.0, 0.3], [0.3, 0.0]]), np.array([0.1, -0.2]))

    def mean_ll(J01, b0, b1):
        m = BoltzmannMachine(np.array([[0.0, J01], [J01, 0.0]]), np.array([b0, b1]))
        return float(np.mean(-m.energy(SPINS) - m.log_partition_exact()))

    x = np.array([0.3, 0.1, -0.2])
    eps = 1e-6
    fd = np.array([(mean_ll(*(x + eps * e)) - mean_ll(*(x - eps * e))) / (2 * eps) for e in np.eye(3)])
    out = fit_boltzmann_machine(SPINS, machine=bm, learning_rate=0.1, n_updates=1)
    np.testing.assert_allclose(out.J[1, 0, 1] - out.J[0, 0, 1], 0.1 * fd[0], atol=1e-8)
    np.testing.assert_allclose(out.b[1] - out.b[0], 0.1 * fd[1:], atol=1e-8)


def test_bm_moments_and_kl():
    bm = BoltzmannMachine.random(3, rng=0)
    m, C = bm_model_moments(bm, "exact")
    mf_m, mf_C = bm_model_moments(bm, "mean_field")
    assert m.shape == (3,) and C.shape == (3, 3) and np.allclose(np.diag(mf_C), 1.0)
    mix_m, _ = bm_model_moments(bm, "mixture_mean_field", n_components=2)
    assert np.abs(mix_m - m).max() <= np.abs(mf_m - m).max() + 1e-9
    assert bm_kl_divergence(np.array([[1, 1, -1], [-1, 1, 1]]), bm) > 0
    with pytest.raises(ValueError, match="units"):
        bm_kl_divergence(SPINS, bm)
    with pytest.raises(ValueError, match="spins"):
        bm_kl_divergence(np.array([[0, 1]]), BoltzmannMachine.random(2, rng=0))
    with pytest.raises(ValueError, match="unknown method"):
        bm_model_moments(bm, "tap")


def test_bm_learning_exact_and_mixture_converge_naive_does_not():
    """Seed 003 §5.1 in miniature: exact and 2-component mixture reach a small KL; naive mean field oscillates."""
    opts = dict(temperatures=[1.0], tol=1e-4, max_iter=20)
    exact = fit_boltzmann_machine(SPINS, n_updates=80, rng=0)
    mix = fit_boltzmann_machine(
        SPINS, method="mixture_mean_field", n_updates=80, rng=0, moment_options=dict(n_components=2, **opts)
    )
    naive = fit_boltzmann_machine(SPINS, method="mean_field", n_updates=80, rng=0, moment_options=opts)
    assert exact.kl[-1] < 0.02 and mix.kl[-1] < 0.05
    # naive mean field: the KL keeps jumping over the last 40 updates
    assert np.abs(np.diff(naive.kl[40:])).max() > 0.1
    assert np.abs(np.diff(mix.kl[40:])).max() < 0.02
    with pytest.raises(ValueError, match="unknown method"):
        fit_boltzmann_machine(SPINS, method="bethe")

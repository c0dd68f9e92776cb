"""OtherTerms' tilts of the informed moves: exact single-unit flips, or the gradient of ``log L``.

The gradient tilt is ``∂ log L / ∂v`` at the state, ``v`` read as real; it
must equal the analytic gradient of a quadratic ``log L`` (one chain and
rows). Any tilt that is a function of the state gives an exact informed move:
the move's matrix with the gradient tilt must leave ``p(v, h) L(v)``
invariant (and fail when the reverse move reuses the forward tilt), and
``ReplicaExchange(tilt="gradient")`` must sample the enumerated posterior.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytest
from scipy.special import logsumexp

from pymc_rbm import RBM, RBMParams, ReplicaExchange
from pymc_rbm import testing as ht
from pymc_rbm.estimators import binary_states, log_marginal_visible
from pymc_rbm.step_methods.terms import EXACT_TILT_MAX_UNITS

from ._stats import assert_visible_distribution

A = np.array([[0.9, -0.4], [0.3, 1.1], [-0.7, 0.5], [1.2, 0.2], [0.1, -1.0]])  # 5 units read out in 2 numbers
Y, SIGMA = np.array([1.1, -0.3]), 0.7


def log_rest(v):
    """``log N(Y | v A, σ)`` up to a constant, for ``v`` of shape (..., 5)."""
    r = Y - np.asarray(v, dtype=np.float64) @ A
    return -0.5 * (r**2).sum(axis=-1) / SIGMA**2


def gradient(v):
    return ((Y - np.asarray(v, dtype=np.float64) @ A) @ A.T) / SIGMA**2


def readout_model(params, n_rows=None, product=True):
    """``y ~ N(v A, σ)``; ``product=False`` writes ``v A`` as a sum of products, which the step does not read as
    linear predictors, so that it makes its informed moves (with ``v @ A`` it scans single units instead)."""
    shape = (params.n_visible,) if n_rows is None else (n_rows, params.n_visible)
    model = pm.Model()
    with model:
        v = RBM("v", params.W, params.vbias, params.hbias, shape=shape)
        mean = v @ A if product else (v[..., :, None] * A).sum(axis=-2)
        pm.Normal("y", mean, SIGMA, observed=Y if n_rows is None else np.tile(Y, (n_rows, 1)))
    return model


@pytest.fixture(scope="module")
def params():
    return RBMParams.random(5, 3, scale=1.5, rng=2)


def test_the_gradient_tilt_is_the_gradient(params):
    rng = np.random.default_rng(0)
    with readout_model(params):
        step = ReplicaExchange(tilt="gradient")
    terms = step.other_terms
    assert terms.tilt_method == "gradient" and terms.structure is None
    states = rng.integers(0, 2, (4, 5))
    values, tilt = terms.tilts({"v": states[0]}, states, (5,), np.int64)
    np.testing.assert_allclose(tilt, gradient(states), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(values - values[0], log_rest(states) - log_rest(states[0]), rtol=1e-10, atol=1e-12)
    one, value = terms.tilt({"v": states[1]}, states[1], 0)
    np.testing.assert_allclose(one, gradient(states[1]), rtol=1e-10, atol=1e-12)
    with readout_model(params, n_rows=3):  # rows: each row's gradient from one call
        rows = ReplicaExchange(tilt="gradient").other_terms
    assert rows.structure == "rows"
    stack = rng.integers(0, 2, (2, 3, 5))
    values, tilt = rows.row_tilts({"v": stack[0]}, stack)
    assert values.shape == (2, 3) and tilt.shape == (2, 3, 5)
    np.testing.assert_allclose(tilt, gradient(stack), rtol=1e-10, atol=1e-12)


def test_the_tilt_choice(params):
    with readout_model(params):
        assert ReplicaExchange().other_terms.tilt_method == "exact"  # auto: a narrow layer
        with pytest.raises(ValueError, match="tilt must be one of"):
            ReplicaExchange(tilt="second-order")
    wide = RBMParams.random(EXACT_TILT_MAX_UNITS + 1, 2, rng=0)
    with pm.Model():
        v = RBM("v", wide.W, wide.vbias, wide.hbias, log_partition=None)
        pm.Normal("y", v.sum(), 1.0, observed=3.0)
        assert ReplicaExchange().other_terms.tilt_method == "gradient"


@pytest.mark.parametrize("kernel", ["gibbs", "flip", 0.5])
def test_an_informed_move_with_the_gradient_tilt_is_exact(params, kernel):
    T_h, _ = ht.layer_matrices(params, kernel)
    pi = ht.joint_distribution(params) * np.exp(log_rest(ht.joint_states(5, 3)[0]))
    pi /= pi.sum()
    K = T_h @ ht.informed_visible_matrix(params, log_rest, kernel, tilt=gradient)
    ht.assert_stationary(pi, K)
    if kernel != "flip":  # negative control, the forward tilt both ways: caught with Gibbs and the mixture (not by
        # pure flip-the-state on this model, whose moves are mostly forced)
        with pytest.raises(AssertionError, match="not stationary"):
            ht.assert_stationary(pi, T_h @ ht.informed_visible_matrix(params, log_rest, kernel, tilt=gradient,
                                                                      correction="forward"))


def test_pm_sample_with_the_gradient_tilt_matches_enumeration(params):
    log_p = log_marginal_visible(params) + log_rest(binary_states(5))
    with readout_model(params, product=False):
        step = ReplicaExchange(tilt="gradient")
        assert step.other_terms.predictors is None
        idata = pm.sample(draws=3000, tune=300, chains=2, cores=1, step=step,
                          random_seed=4, progressbar=False, compute_convergence_checks=False)
    assert_visible_distribution(idata.posterior["v"].values, log_p - logsumexp(log_p), label="gradient tilt")


def test_a_term_without_a_gradient_keeps_the_exact_tilt(params):
    """An integer-only operation of v (a parity here) has no gradient in v read as real: the tilt is exact."""
    import pytensor.tensor as pt

    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias)
        pm.Potential("parity", 0.8 * pt.bitwise_xor(v[0], v[1]))
        terms = ReplicaExchange(tilt="gradient").other_terms
    state = np.array([1, 0, 1, 1, 0])
    tilt, _ = terms.tilt({"v": state}, state, 0)
    assert terms.tilt_method == "exact"
    np.testing.assert_allclose(tilt, [0.8, -0.8, 0.0, 0.0, 0.0])

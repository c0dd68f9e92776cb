"""The one sweep kernel ``sweep(rng, state, target, rule)`` and its RBM-at-β target."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from pymc_rbm import RBMParams
from pymc_rbm import testing as ht
from pymc_rbm.energy import hidden_activation
from pymc_rbm.kernels import RBMState, flip_sweep, gibbs_sweep, init_state
from pymc_rbm.kernels.layer import GIBBS, LayerRule
from pymc_rbm.kernels.sweep import RBMAtBeta, at_beta, sweep

PARAMS = RBMParams.random(3, 2, scale=2.5, rng=4)


@pytest.mark.parametrize("beta", [1.0, 0.4])
@pytest.mark.parametrize("rule", [GIBBS, LayerRule(1.0), LayerRule(0.5)], ids=["gibbs", "flip", "alpha0.5"])
def test_sweep_follows_the_exact_transition_matrix(rule, beta):
    kind = "gibbs" if rule.gibbs else rule.alpha
    T = ht.transition_matrix(PARAMS, kind, beta)
    ht.assert_stationary(ht.joint_distribution(PARAMS, beta), T)

    def kernel(rng, s):
        return sweep(rng, s, at_beta(PARAMS, beta, s.v.shape[0]), rule)

    ht.empirical_transition_check(kernel, T, PARAMS.n_visible, PARAMS.n_hidden, n_draws=2000, rng=3)


def test_a_target_with_the_wrong_visible_logits_is_caught():
    """Negative control: tempering the couplings but not the visible biases is another chain, and the check sees it."""
    beta = 0.4

    class WrongTarget(RBMAtBeta):
        def visible_logits(self, h):
            return self.params.vbias + beta * (h @ self.params.W.T)

    T = ht.transition_matrix(PARAMS, "gibbs", beta)

    def kernel(rng, s):
        return sweep(rng, s, WrongTarget(PARAMS, beta), GIBBS)

    with pytest.raises(AssertionError):
        ht.empirical_transition_check(kernel, T, PARAMS.n_visible, PARAMS.n_hidden, n_draws=2000, rng=3)


def test_the_kernels_by_rbm_are_this_kernel():
    rng = np.random.default_rng(0)
    state = init_state(rng, rng.integers(0, 2, (20, 3)), PARAMS)
    beta = np.linspace(0.1, 1.0, 20)
    for rule, by_rbm in ((GIBBS, gibbs_sweep), (LayerRule(0.3), lambda r, s, p, b: flip_sweep(r, s, p, b, alpha=0.3))):
        a, ia = sweep(np.random.default_rng(7), state, at_beta(PARAMS, beta, 20), rule)
        b, ib = by_rbm(np.random.default_rng(7), state, PARAMS, beta)
        assert_array_equal(a.v, b.v)
        assert_array_equal(a.h, b.h)
        assert_array_equal(ia.n_changed, ib.n_changed)


@pytest.mark.parametrize("rule", [GIBBS, LayerRule(1.0)], ids=["gibbs", "flip"])
def test_a_carried_hidden_input_is_the_same_chain(rule):
    """Carrying ``hbias + v·W`` (updated by the changed rows) gives the chain of recomputing it, draw for draw."""
    params = RBMParams.random(40, 15, scale=1.5, rng=2)
    rng = np.random.default_rng(1)
    v0 = rng.integers(0, 2, (25, 40)).astype(float)
    state = init_state(rng, v0, params)
    target = at_beta(params, 0.8)
    carried = RBMState(state.v, state.h, target.hidden_input(state.v))
    plain = state
    for t in range(80):
        carried, ic = sweep(np.random.default_rng(t), carried, target, rule, refresh=t % 16 == 0)
        plain, ip = sweep(np.random.default_rng(t), plain, target, rule)
        assert plain.hidden_input is None
        assert_array_equal(carried.v, plain.v)
        assert_array_equal(carried.h, plain.h)
        assert_array_equal(ic.n_hidden_changed, ip.n_hidden_changed)
    assert_allclose(carried.hidden_input, hidden_activation(carried.v, params), rtol=1e-12, atol=1e-12)


def test_an_unknown_hidden_state_is_drawn_by_gibbs():
    rng = np.random.default_rng(2)
    v = rng.integers(0, 2, (10, 3)).astype(float)
    target = at_beta(PARAMS)
    s, info = sweep(np.random.default_rng(9), RBMState(v, None), target, LayerRule(1.0))
    h_gibbs = GIBBS.update(np.random.default_rng(9), None, target.hidden_logits(target.hidden_input(v)))[0]
    assert_array_equal(s.h, h_gibbs)
    assert_array_equal(info.n_hidden_changed, 0)


def test_sweep_does_not_modify_its_state_and_validates_beta():
    rng = np.random.default_rng(0)
    state = init_state(rng, np.zeros((4, 3)), PARAMS)
    a = hidden_activation(state.v, PARAMS)
    carried = RBMState(state.v.copy(), state.h.copy(), a.copy())
    sweep(rng, carried, at_beta(PARAMS, 0.5), LayerRule(1.0))
    assert_array_equal(carried.v, state.v)
    assert_array_equal(carried.h, state.h)
    assert_array_equal(carried.hidden_input, a)
    for bad in (-1.0, np.nan, np.ones(3)):
        with pytest.raises(ValueError, match="beta"):
            at_beta(PARAMS, bad, 4)

"""Layer types: each checked against its definition by enumeration, and spins sampled through the same engine."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from pymc_rbm import RBMParams, SpinRBMParams
from pymc_rbm import testing as ht
from pymc_rbm.energy import free_energy, mean_hiddens
from pymc_rbm.kernels import RBMState, init_state
from pymc_rbm.kernels.layer import GIBBS, LayerRule
from pymc_rbm.kernels.sweep import at_beta, sweep
from pymc_rbm.layers import BERNOULLI, SPIN, Bernoulli, Spin, TwoState, bits_form
from tests import _brute

LAYERS = [BERNOULLI, SPIN, TwoState(-0.5, 2.0)]
FIELDS = np.array([[-3.0, -0.2, 0.0, 0.7, 41.0]])


@pytest.mark.parametrize("layer", LAYERS, ids=repr)
def test_log_normaliser_and_mean_are_their_definitions(layer):
    values = np.array([layer.low, layer.high])
    weights = np.exp(values[:, None] * FIELDS[0][None, :])  # (2, n)
    assert_allclose(layer.log_normaliser(FIELDS)[0][:4], np.log(weights.sum(axis=0))[:4], rtol=1e-13)
    assert_allclose(layer.log_normaliser(FIELDS)[0][4], layer.high * 41.0, rtol=1e-13)  # no overflow
    assert_allclose(layer.mean(FIELDS)[0], (values[:, None] * weights).sum(0) / weights.sum(0), rtol=1e-12)
    p = np.exp(layer.log_prob(layer.states(3), FIELDS[0, :3]))
    assert_allclose(p.sum(), 1.0, rtol=1e-13)


@pytest.mark.parametrize("layer", LAYERS, ids=repr)
def test_states_are_every_configuration_in_lexicographic_order(layer):
    values = (layer.low, layer.high)
    assert_array_equal(layer.states(3), _brute.all_states(3, values))
    assert_array_equal(layer.states(4, 5, 9), _brute.all_states(4, values)[5:9])
    assert layer.n_states(5) == 32


def test_values_are_checked_per_layer():
    assert_array_equal(SPIN.check([[1, -1]]), [[1.0, -1.0]])
    with pytest.raises(ValueError, match=r"values in \{-1, 1\}"):
        SPIN.check([[0, 1]])
    with pytest.raises(ValueError, match=r"values in \{0, 1\}"):
        BERNOULLI.check([[-1, 1]])
    with pytest.raises(ValueError, match=r"numeric with values in \{-1, 1\}"):
        SPIN.check(np.array([True, False]))
    with pytest.raises(ValueError, match="low < high"):
        TwoState(1.0, 1.0)


def test_layers_compare_by_kind():
    assert Spin() == SPIN and Bernoulli() == BERNOULLI and SPIN != BERNOULLI
    assert TwoState(-1, 1) != SPIN  # a different class, even with the same values
    assert len({Spin(), SPIN, Bernoulli()}) == 2


@pytest.mark.parametrize("visible, hidden", [(SPIN, SPIN), (SPIN, BERNOULLI), (TwoState(-0.5, 2.0), SPIN)], ids=str)
def test_the_bits_form_has_the_same_distribution_and_a_known_log_z_offset(visible, hidden):
    p = RBMParams.random(4, 3, scale=1.5, rng=2)
    form = bits_form(p.W, p.vbias, p.hbias, visible, hidden)
    # -E over the layers' values, every joint state (brute force, independent of the package)
    V = _brute.all_states(4, (visible.low, visible.high))
    H = _brute.all_states(3, (hidden.low, hidden.high))
    table = np.einsum("ai,ij,bj->ab", V, p.W, H) + (V @ p.vbias)[:, None] + (H @ p.hbias)[None, :]
    bits_table, _, _ = _brute.neg_energy_table(form.W, form.vbias, form.hbias)
    assert_allclose(table, bits_table + form.log_offset, rtol=1e-12, atol=1e-12)
    assert_allclose(_brute._lse(table), _brute.log_z(form.W, form.vbias, form.hbias) + form.log_offset, rtol=1e-13)


def test_the_free_energy_sums_out_spins():
    spin = RBMParams.random(4, 3, scale=1.5, rng=3).to_spin()
    table, S, _ = _brute.neg_energy_table(spin.J, spin.vfield, spin.hfield, values=(-1.0, 1.0))
    assert_allclose(-free_energy(S, spin), _brute._lse(table, axis=1), rtol=1e-13)
    a = spin.hfield + S @ spin.J  # E[t_j | s] = tanh(a_j)
    assert_allclose(mean_hiddens(S, spin), np.tanh(a), rtol=1e-12)


# --------------------------------------------------------------- spins through the sweep engine
SPIN_PARAMS = SpinRBMParams(
    RBMParams.random(3, 2, scale=1.2, rng=4).W, [0.3, -0.4, 0.2], [-0.5, 0.25]
)  # a model sharp enough that a factor 2 in the logits shows


def spin_kernel(params, rule, beta):
    """The sweep on spins, read through the bits of the harness's binary states."""
    layer_v, layer_h = params.visible, params.hidden

    def kernel(rng, bits: RBMState):
        s = RBMState(layer_v.from_bits(bits.v), layer_h.from_bits(bits.h))
        new, info = sweep(rng, s, at_beta(params, beta, s.v.shape[0]), rule)
        return RBMState(layer_v.to_bits(new.v), layer_h.to_bits(new.h)), info

    return kernel


@pytest.mark.parametrize("beta", [1.0, 0.5])
@pytest.mark.parametrize("rule", [GIBBS, LayerRule(1.0), LayerRule(0.5)], ids=["gibbs", "flip", "alpha0.5"])
def test_spins_follow_the_exact_transition_matrix_of_their_distribution(rule, beta):
    """The exact matrix of the spin chain, and that the spin distribution (brute force) is stationary for it."""
    form = SPIN_PARAMS.to_binary()
    T = ht.transition_matrix(form, "gibbs" if rule.gibbs else rule.alpha, beta)
    table, _, _ = _brute.neg_energy_table(SPIN_PARAMS.J, SPIN_PARAMS.vfield, SPIN_PARAMS.hfield, values=(-1.0, 1.0))
    p = np.exp(beta * table - _brute._lse(beta * table)).ravel()  # joint (s, t), lexicographic
    ht.assert_stationary(p, T)
    ht.empirical_transition_check(spin_kernel(SPIN_PARAMS, rule, beta), T, 3, 2, n_draws=2000, rng=5)


def test_a_spin_layer_that_forgets_the_factor_two_is_caught():
    """Negative control: logits ``f`` instead of ``2 f`` sample another chain, and the check sees it."""

    class HalfSpin(Spin):
        def logits(self, field):
            return field

    class WrongSpins(SpinRBMParams):
        visible = HalfSpin()
        hidden = HalfSpin()

    wrong = WrongSpins(SPIN_PARAMS.J, SPIN_PARAMS.vfield, SPIN_PARAMS.hfield)
    T = ht.transition_matrix(SPIN_PARAMS.to_binary(), "gibbs", 1.0)
    with pytest.raises(AssertionError):
        ht.empirical_transition_check(spin_kernel(wrong, GIBBS, 1.0), T, 3, 2, n_draws=2000, rng=5)


def test_spin_states_are_drawn_and_checked_as_spins():
    rng = np.random.default_rng(0)
    state = init_state(rng, -np.ones((5, 3)), SPIN_PARAMS)
    assert set(np.unique(state.h)) <= {-1.0, 1.0}
    new, info = sweep(rng, state, at_beta(SPIN_PARAMS), LayerRule(1.0))
    assert set(np.unique(new.v)) <= {-1.0, 1.0} and new.v.dtype == np.float64
    assert_array_equal(info.n_changed, (new.v != state.v).sum(axis=1))
    with pytest.raises(ValueError, match=r"values in \{-1, 1\}"):
        init_state(rng, np.zeros((5, 3)), SPIN_PARAMS)

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


# ----------------------------------------------------------------------------- ReLU units
RELU_FIELDS = np.array([-50.0, -20.0, -3.0, -0.5, 0.0, 0.4, 2.0, 15.0, 50.0])


def _relu_integrals(f, gamma):
    """``log ∫_0^∞ exp(-γh²/2 + f h) dh`` and the mean of ``h``, by quadrature around the mode (scipy quad)."""
    from scipy.integrate import quad

    mode = max(f / gamma, 0.0)
    shift = -0.5 * gamma * mode**2 + f * mode  # the log integrand at its mode
    width = 40.0 / np.sqrt(gamma) + 40.0 / max(abs(f), 1.0)
    lo, hi = max(mode - width, 0.0), mode + width
    density = lambda h: np.exp(-0.5 * gamma * h * h + f * h - shift)  # noqa: E731
    mass = quad(density, lo, hi, points=[mode], epsabs=0, epsrel=1e-13, limit=200)[0]
    first = quad(lambda h: h * density(h), lo, hi, points=[mode], epsabs=0, epsrel=1e-13, limit=200)[0]
    return shift + np.log(mass), first / mass


@pytest.mark.parametrize("gamma", [1.0, 0.3, 4.0])
def test_relu_log_normaliser_and_mean_are_their_integrals(gamma):
    from pymc_rbm.layers import ReLU

    layer = ReLU(np.full(RELU_FIELDS.size, gamma))
    expected = np.array([_relu_integrals(f, gamma) for f in RELU_FIELDS])
    assert_allclose(layer.log_normaliser(RELU_FIELDS), expected[:, 0], rtol=1e-11, atol=1e-11)
    assert_allclose(layer.mean(RELU_FIELDS), expected[:, 1], rtol=1e-10)


def test_relu_is_finite_and_asymptotic_at_huge_fields():
    from pymc_rbm.layers import ReLU

    layer = ReLU(2.0)
    f = np.array([-1e3, -1e6, 1e3, 1e6])
    with np.errstate(over="raise", invalid="raise", divide="raise"):  # underflow to 0 is harmless
        a, m = layer.log_normaliser(f), layer.mean(f)
    assert np.all(np.isfinite(a)) and np.all(np.isfinite(m))
    # left tail: an exponential of rate |f|; right tail: a normal N(f/γ, 1/γ)
    assert_allclose(a[:2], -np.log(-f[:2]) - 2.0 / f[:2] ** 2, rtol=1e-9)
    assert_allclose(m[:2], -1.0 / f[:2], rtol=1e-5)
    assert_allclose(a[2:], f[2:] ** 2 / 4.0 + 0.5 * np.log(np.pi), rtol=1e-15)
    assert_allclose(m[2:], f[2:] / 2.0, rtol=1e-15)
    h = layer.update(np.random.default_rng(0), None, np.tile(f, (1000, 1)), GIBBS)[0]
    assert np.all(np.isfinite(h)) and np.all(h >= 0)
    assert_allclose(h.mean(axis=0)[:2], m[:2], rtol=0.15)  # exponential draws: relative sd 1/sqrt(1000)


def test_relu_pytensor_equals_numpy():
    import pytensor
    import pytensor.tensor as pt

    from pymc_rbm.layers import ReLU

    f = pt.dvector("f")
    fields = np.concatenate([RELU_FIELDS, [-1e3, 1e3]])
    layer = ReLU(np.linspace(0.5, 2.0, fields.size))
    fn = pytensor.function([f], [layer.log_normaliser(f), layer.mean(f), pt.grad(layer.log_normaliser(f).sum(), f)])
    a, m, g = fn(fields)
    assert_allclose(a, layer.log_normaliser(fields), rtol=1e-13)
    assert_allclose(m, layer.mean(fields), rtol=1e-12)
    assert_allclose(g, layer.mean(fields), rtol=1e-9)  # dA/df is the mean
    assert np.all(np.isfinite(g))


@pytest.mark.parametrize("f", [-4.0, 0.0, 1.5])
def test_relu_draws_are_the_truncated_normal(f):
    from scipy.stats import truncnorm

    from pymc_rbm.layers import ReLU

    gamma, n = 1.7, 200_000
    layer = ReLU(gamma)
    x = np.zeros((n, 1))
    h, changed = layer.update(np.random.default_rng(3), x, np.full((n, 1), f), LayerRule(alpha=1.0))
    law = truncnorm(-f / np.sqrt(gamma), np.inf, loc=f / gamma, scale=1 / np.sqrt(gamma))
    sd = np.sqrt(law.var())
    assert np.all(h >= 0) and np.all(changed == 1) and np.all(x == 0)
    assert abs(h.mean() - law.mean()) < 5 * sd / np.sqrt(n)
    fourth = law.expect(lambda y: (y - law.mean()) ** 4)
    assert abs(h.var() - law.var()) < 5 * np.sqrt(fourth - law.var() ** 2) / np.sqrt(n)
    assert_allclose(law.mean(), layer.mean(np.array([f]))[0], rtol=1e-10)


def test_relu_refuses_what_it_cannot_be():
    from pymc_rbm.layers import ReLU

    for bad in (0.0, -1.0, np.inf, np.nan, [], [[1.0]]):
        with pytest.raises(ValueError, match="gamma"):
            ReLU(bad)
    layer = ReLU([1.0, 2.0])
    for bad, what in (([[-0.1, 1.0]], "negative"), ([[np.nan, 1.0]], "non-finite"), ([[1.0]], "units")):
        with pytest.raises(ValueError, match=what):
            layer.check(bad)
    data = np.array([[0.0, 3.5]])
    assert_array_equal(layer.check(data), data)
    with pytest.raises(ValueError, match="continuous"):
        layer.states(2)
    with pytest.raises(ValueError, match="continuous"):
        layer.n_states(2)
    assert layer == ReLU(np.array([1.0, 2.0])) and layer != ReLU([1.0, 3.0])
    p = np.exp(ReLU(1.3).log_prob(np.array([[0.7]]), np.array([0.2])))
    assert_allclose(p, np.exp(-1.3 * 0.49 / 2 + 0.2 * 0.7 - ReLU(1.3).log_normaliser(np.array([0.2]))))


# ----------------------------------------------------------------------------- what an annealing path reads of a layer
def _layer_kinds():
    from pymc_rbm.layers import Gaussian, Potts, ReLU

    return {"bernoulli": BERNOULLI, "spin": SPIN, "potts": Potts(3), "gaussian": Gaussian([2.0, 0.5]),
            "relu": ReLU(2.0)}


def test_field_shapes_and_the_flags_of_each_kind_of_unit():
    layers = _layer_kinds()
    assert [layers[k].field_shape(4) for k in layers] == [(4,), (4,), (4, 3), (4,), (4,)]
    #                      discrete, incremental_input, linear_bias
    want = {"bernoulli": (True, True, True), "spin": (True, True, True), "potts": (True, False, True),
            "gaussian": (False, False, False), "relu": (False, False, False)}
    assert {k: (v.discrete, v.incremental_input, v.linear_bias) for k, v in layers.items()} == want


def test_dot_contracts_the_sufficient_statistics_with_per_unit_rows():
    layers = _layer_kinds()
    M = np.array([[1.0, 2.0], [3.0, 4.0]])
    assert_array_equal(BERNOULLI.dot(np.array([[1.0, 0.0], [1.0, 1.0]]), M), [[1.0, 2.0], [4.0, 6.0]])
    assert_array_equal(SPIN.dot(np.array([[1.0, -1.0]]), M), [[-2.0, -2.0]])
    assert_array_equal(layers["gaussian"].dot(np.array([[0.5, -2.0]]), M), [[-5.5, -7.0]])
    potts = layers["potts"]
    fields = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])  # (n_units, q): Σ_i f[i, x_i]
    assert_array_equal(potts.dot(np.array([[0.0, 2.0], [1.0, 0.0]]), fields), [7.0, 6.0])
    W = np.arange(12.0).reshape(2, 3, 2)  # (n_units, q, k): the input of labels, a gather of a row per unit
    assert_array_equal(potts.dot(np.array([[2, 1]]), W), [[4.0 + 8.0, 5.0 + 9.0]])
    assert_array_equal(potts.dot(np.array([2, 1]), W), [12.0, 14.0])  # one state, no batch axis
    f32 = M.astype(np.float32)
    assert BERNOULLI.dot(np.ones((1, 2), np.float32), f32).dtype == np.float32
    assert BERNOULLI.dot(np.ones((1, 2), np.float32), f32, dtype=np.float64).dtype == np.float64
    assert potts.dot(np.array([[0, 1]]), fields.astype(np.float32), dtype=np.float64).dtype == np.float64


def test_natural_couplings_and_fields_scale_gaussian_units_only():
    layers = _layer_kinds()
    W = np.array([[1.0, 2.0], [3.0, 4.0]])
    bias = np.array([[1.0, 1.0], [2.0, -1.0]])
    for name in ("bernoulli", "spin", "potts", "relu"):
        assert layers[name].natural_couplings(W) is W and layers[name].natural_field(bias) is bias
    gauss = layers["gaussian"]  # σ = (2, 0.5): W / σ by rows, bias / σ²
    assert_array_equal(gauss.natural_couplings(W), [[0.5, 1.0], [6.0, 8.0]])
    assert_array_equal(gauss.natural_field(bias), [[0.25, 4.0], [0.5, -4.0]])


def test_bias_log_weight_is_the_bias_term_of_minus_the_energy():
    layers = _layer_kinds()
    biases = np.array([[1.0, 2.0], [0.0, -0.5]])  # two rows of biases of two units
    assert_array_equal(BERNOULLI.bias_log_weight(np.array([[1.0, 0.0], [1.0, 1.0]]), biases), [[1.0, 0.0], [3.0, -0.5]])
    assert_array_equal(SPIN.bias_log_weight(np.array([[1.0, -1.0]]), biases), [[-1.0, 0.5]])
    potts = np.arange(12.0).reshape(2, 2, 3)  # (rows, n_units, q)
    assert_array_equal(layers["potts"].bias_log_weight(np.array([[2.0, 0.0]]), potts), [[2.0 + 3.0, 8.0 + 9.0]])
    # Gaussian: -Σ (x - b)² / (2σ²) with σ = (2, 0.5)
    assert_array_equal(layers["gaussian"].bias_log_weight(np.array([[1.0, 0.0]]), np.array([[1.0, 0.5], [-1.0, 0.0]])),
                       [[-0.5, -0.5]])
    # ReLU: x·b - Σ γ x² / 2 with γ = 2
    assert_array_equal(layers["relu"].bias_log_weight(np.array([[1.0, 2.0]]), biases), [[5.0 - 5.0, -1.0 - 5.0]])
    assert BERNOULLI.bias_log_weight(np.ones((1, 2), np.float32), biases).dtype == np.float64


def test_bias_log_partition_normalises_the_bias_log_weight():
    layers = _layer_kinds()
    assert BERNOULLI.bias_log_partition(np.array([0.0, np.log(3.0)])) == pytest.approx(np.log(8.0), rel=1e-15)
    assert SPIN.bias_log_partition(np.array([0.0, 0.0])) == pytest.approx(2 * np.log(2.0), rel=1e-15)
    assert layers["potts"].bias_log_partition(np.zeros((2, 3))) == pytest.approx(2 * np.log(3.0), rel=1e-15)
    gauss = layers["gaussian"]  # Σ log(√(2π) σ), whatever the means
    assert gauss.bias_log_partition(np.array([5.0, -3.0])) == pytest.approx(np.log(2 * np.pi), rel=1e-15)
    # the enumerable layers: log Σ_x exp(bias_log_weight(x, b)) over every configuration
    two = [0.3, -1.2, 2.0]
    for layer, bias in ((BERNOULLI, two), (SPIN, two), (TwoState(-0.5, 2.0), two),
                        (layers["potts"], [[0.1, -0.4, 1.0], [2.0, 0.0, -1.0], [0.5, 0.5, -3.0]])):
        b = np.asarray(bias)
        log_w = layer.bias_log_weight(layer.states(3), b[None])[:, 0]
        assert layer.bias_log_partition(b) == pytest.approx(_brute._lse(log_w), rel=1e-14)
    # the real ones by quadrature on a grid (one unit)
    from pymc_rbm.layers import Gaussian, ReLU

    for layer, x in ((Gaussian([0.7]), np.linspace(-12.0, 12.0, 200001)), (ReLU(2.0), np.linspace(0.0, 12.0, 200001))):
        w = np.exp(layer.bias_log_weight(x[:, None], np.array([[0.8]]))[:, 0])
        assert layer.bias_log_partition(np.array([0.8])) == pytest.approx(np.log(np.trapezoid(w, x)), abs=1e-8)


def test_sample_draws_independent_units_in_fixed_fields():
    layers = _layer_kinds()
    sure = np.array([-60.0, 60.0])
    assert_array_equal(BERNOULLI.sample(np.random.default_rng(0), sure, 3), [[0.0, 1.0]] * 3)
    spins = SPIN.sample(np.random.default_rng(0), sure, 3, dtype=np.float32)
    assert spins.dtype == np.float32 and rows_equal(spins, [-1.0, 1.0])
    one_label = np.array([[0.0, -800.0, -800.0], [-800.0, -800.0, 0.0]])
    labels = layers["potts"].sample(np.random.default_rng(0), one_label, 4)
    assert labels.dtype == np.float64 and rows_equal(labels, [0.0, 2.0])
    # two-state units: one uniform per unit, bit = u < sigmoid((high - low) f)
    f = np.array([0.3, -1.0, 2.0])
    u = np.random.default_rng(7).random((5, 3))
    assert_array_equal(SPIN.sample(np.random.default_rng(7), f, 5), np.where(u < 1 / (1 + np.exp(-2 * f)), 1.0, -1.0))
    # real units: the layer's exact draw, N(σ² f, σ²) for Gaussian units
    gauss = layers["gaussian"]
    g = np.array([1.0, -4.0])
    z = np.random.default_rng(7).standard_normal((5, 2))
    assert_allclose(gauss.sample(np.random.default_rng(7), g, 5), gauss.sigma**2 * g + gauss.sigma * z, rtol=1e-15)
    h = layers["relu"].sample(np.random.default_rng(7), np.array([0.5, -1.0]), 5)
    assert h.shape == (5, 2) and np.all(h >= 0)


def rows_equal(x, row) -> bool:
    """Every row of ``x`` is ``row``."""
    return bool(np.array_equal(x, np.broadcast_to(row, x.shape)))

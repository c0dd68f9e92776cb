"""Flip-the-state (seed 000, Definition 1) and its α mixture with Gibbs (§5.2)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import expit

from pymc_rbm import RBMParams
from pymc_rbm import testing as ht
from pymc_rbm.estimators import log_marginal_visible
from pymc_rbm.kernels import (
    RBMState,
    flip_hiddens,
    flip_layer,
    flip_probability,
    flip_sweep,
    flip_visibles,
    gibbs_sweep,
    init_state,
)
from pymc_rbm.kernels.flip import build_kernel

SIZES = [(1, 1), (2, 3), (3, 2), (4, 4)]
SCALES = [0.0, 1.0, 3.0, 10.0]
ALPHAS = [1.0, 0.75, 0.5, 0.25, 0.0]


def tie_prone(n_visible, n_hidden, seed):
    """Zero biases and weights in {-1, 0, 1}: many logits are exactly 0."""
    rng = np.random.default_rng(seed)
    return RBMParams(rng.integers(-1, 2, (n_visible, n_hidden)), np.zeros(n_visible), np.zeros(n_hidden))


def no_tie_rule(x, logit):
    """Definition 1 without its last case: a tie flips with probability min(1, 1) = 1."""
    s = np.where(np.asarray(x) != 0, -logit, logit)
    return np.exp(np.minimum(s, 0.0))


# ------------------------------------------------------------ per unit
def definition_1(x, logit):
    """Seed 000, Definition 1, case by case from the conditional probabilities."""
    p_one, p_zero = expit(logit), expit(-logit)  # each accurate, unlike 1 - p
    p_cur, p_oth = (p_one, p_zero) if x == 1 else (p_zero, p_one)
    if p_cur > p_oth:  # v*_i = v_i != v'_i
        return p_oth / p_cur
    if p_cur < p_oth:  # v_i != v'_i = v*_i
        return 1.0
    return 0.5  # v*_i = -1


@pytest.mark.parametrize("x", [0, 1])
def test_flip_probability_is_definition_1(x):
    logits = np.array([-30.0, -3.0, -0.5, -1e-9, 0.0, 1e-9, 0.5, 3.0, 30.0])
    expected = [definition_1(x, a) for a in logits]
    got = flip_probability(np.full(logits.shape, x), logits)
    assert_allclose(got, expected, rtol=1e-9, atol=0)
    assert got[logits == 0.0] == 0.5


def test_flip_probability_mixture_is_linear_in_alpha_and_alpha0_is_gibbs():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, 200)
    a = np.concatenate([rng.normal(0, 5, 190), np.zeros(10)])
    q_t, q_g = flip_probability(x, a, 1.0), flip_probability(x, a, 0.0)
    # Gibbs: the probability of ending in the other state, p(other | rest)
    assert_allclose(q_g, np.where(x == 1, expit(-a), expit(a)), rtol=1e-14)
    for alpha in ALPHAS:
        assert_allclose(flip_probability(x, a, alpha), alpha * q_t + (1 - alpha) * q_g, rtol=1e-14, atol=1e-300)
    # the flip-the-state operator changes state at least as often as Gibbs (Fig. 1)
    assert np.all(q_t >= q_g - 1e-15)


def test_flip_probability_is_exact_for_huge_logits():
    a = np.array([-1e4, -800.0, -50.0, 50.0, 800.0, 1e4])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for alpha in (1.0, 0.5, 0.0):
            q0 = flip_probability(np.zeros(6), a, alpha)
            q1 = flip_probability(np.ones(6), a, alpha)
            assert np.all(np.isfinite(q0)) and np.all(np.isfinite(q1))
    assert_array_equal(flip_probability(np.zeros(6), a), [0.0, 0.0, np.exp(-50.0), 1.0, 1.0, 1.0])
    assert_array_equal(flip_probability(np.ones(6), a), [1.0, 1.0, 1.0, np.exp(-50.0), 0.0, 0.0])


def test_flip_probability_does_not_modify_its_inputs_and_refuses_bad_alpha():
    x, a = np.array([0.0, 1.0]), np.array([1.0, -2.0])
    flip_probability(x, a, 0.3)
    assert_array_equal(a, [1.0, -2.0])
    for bad in (-0.1, 1.5, np.nan):
        with pytest.raises(ValueError, match="alpha"):
            flip_probability(x, a, bad)
    with pytest.raises(ValueError, match="alpha"):
        build_kernel(alpha=2.0)


def test_flip_layer_follows_flip_probability():
    rng = np.random.default_rng(1)
    n = 200_000
    x = np.tile([0.0, 1.0, 0.0, 1.0, 1.0], (n, 1))
    a = np.tile([0.7, 0.7, -2.0, 0.0, -40.0], (n, 1))
    new = flip_layer(rng, x, a)
    q = flip_probability(x[0], a[0])
    freq = (new != x).mean(axis=0)
    assert np.all(np.abs(freq - q) <= 5 * np.sqrt(q * (1 - q) / n) + 1e-12)
    assert_array_equal(new[:, 4], 0.0)  # less probable state left with certainty
    assert np.all((new == 0) | (new == 1))


# --------------------------------------------------- exact invariance
@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("size", SIZES)
def test_flip_and_mixture_leave_p_invariant_and_converge(size, scale, alpha):
    for seed in range(2):
        params = RBMParams.random(*size, scale=scale, rng=seed)
        ht.assert_converges(ht.joint_distribution(params), ht.transition_matrix(params, alpha), atol=1e-12)


@pytest.mark.parametrize("alpha", [1.0, 0.5])
@pytest.mark.parametrize("seed", range(4))
def test_flip_converges_on_tie_prone_models(seed, alpha):
    params = tie_prone(3, 3, seed)
    T = ht.transition_matrix(params, alpha)
    ht.assert_converges(ht.joint_distribution(params), T)
    assert ht.is_primitive(T)


@pytest.mark.parametrize("beta", [0.0, 0.3, 2.0])
@pytest.mark.parametrize("alpha", [1.0, 0.4])
def test_tempered_flip_leaves_p_beta_invariant(beta, alpha):
    params = RBMParams.random(3, 3, scale=4.0, rng=7)
    T = ht.transition_matrix(params, alpha, beta=beta)
    ht.assert_converges(ht.joint_distribution(params, beta=beta), T)
    scaled = RBMParams(beta * params.W, beta * params.vbias, beta * params.hbias)
    assert_allclose(T, ht.transition_matrix(scaled, alpha), atol=1e-15)


def test_flip_at_beta_zero_is_all_ties_and_draws_uniformly():
    params = RBMParams.random(2, 3, scale=5.0, rng=0)
    T = ht.transition_matrix(params, "flip", beta=0.0)
    assert_allclose(T, np.full(T.shape, 1 / T.shape[0]), atol=1e-16)


def test_alpha_zero_matrix_is_gibbs():
    params = RBMParams.random(3, 3, scale=5.0, rng=3)
    assert_allclose(ht.transition_matrix(params, 0.0), ht.transition_matrix(params, "gibbs"), atol=1e-15)


def test_dropping_the_tie_rule_breaks_irreducibility():
    """§3.2: without the tie rule "the flip-the-state proposal combined with the Metropolis
    acceptance function leads to non-ergodic chains"."""
    zero = RBMParams(np.zeros((2, 2)), np.zeros(2), np.zeros(2))
    p = ht.joint_distribution(zero)
    broken = ht.transition_matrix(zero, no_tie_rule)
    ht.assert_stationary(p, broken)  # still invariant ...
    assert not ht.is_irreducible(broken)  # ... but every state just flips to its complement
    assert not ht.is_primitive(broken)
    assert ht.slem(broken) == pytest.approx(1.0)
    fixed = ht.transition_matrix(zero, "flip")
    assert ht.is_irreducible(fixed) and ht.is_aperiodic(fixed)
    # with ties only in some units the broken operator also fails
    assert any(not ht.is_irreducible(ht.transition_matrix(tie_prone(2, 2, s), no_tie_rule)) for s in range(10))


def test_slem_for_independent_units_matches_section_5_1():
    """§5.1: with zero weights Gibbs "converges in a single step", flip-the-state
    converges "by a factor of (1 - p(v*_i)) / p(v*_i) (i.e., the SLEM of the base transition matrix)"."""
    vbias, hbias = np.array([0.3, -1.2]), np.array([2.0])
    params = RBMParams(np.zeros((2, 1)), vbias, hbias)
    p_star = expit(np.abs(np.concatenate([vbias, hbias])))
    assert ht.slem(ht.transition_matrix(params, "gibbs")) == pytest.approx(0.0, abs=1e-12)
    assert ht.slem(ht.transition_matrix(params, "flip")) == pytest.approx(((1 - p_star) / p_star).max(), rel=1e-10)


# -------------------------------------------- sampling code vs matrix
def bind(params, beta=None, alpha=1.0):
    kernel = build_kernel(alpha=alpha)
    return lambda rng, state: kernel(rng, state, params, beta)


@pytest.mark.parametrize(
    ("params", "alpha", "beta", "n_draws"),
    [
        (RBMParams.random(2, 2, scale=3.0, rng=0), 1.0, None, 4000),
        (RBMParams.random(3, 2, scale=10.0, rng=1), 1.0, None, 3000),
        (RBMParams(np.zeros((2, 3)), np.zeros(2), np.zeros(3)), 1.0, None, 3000),
        (tie_prone(3, 3, 0), 1.0, None, 2000),
        (tie_prone(3, 3, 1), 0.5, 1.0, 2000),
        (RBMParams.random(3, 3, scale=2.0, rng=2), 0.3, 0.5, 2000),
        (RBMParams.random(4, 4, scale=1.5, rng=3), 1.0, 0.8, 500),
    ],
    ids=["2x2", "3x2-c10", "zero", "ties", "ties-mix", "mix-beta", "4x4-beta"],
)
def test_flip_sweep_follows_its_matrix(params, alpha, beta, n_draws):
    T = ht.transition_matrix(params, alpha, beta=1.0 if beta is None else beta)
    ht.empirical_transition_check(
        bind(params, beta, alpha), T, params.n_visible, params.n_hidden, n_draws=n_draws, rng=11
    )


def test_flip_sweep_with_one_beta_per_chain_follows_the_mixed_matrix():
    """Chains alternate between β = 1 and β = 0.3; from each state half run at each."""
    params = RBMParams.random(2, 3, scale=3.0, rng=4)
    n_draws = 4000
    betas = np.tile([1.0, 0.3], 2**5 * n_draws // 2)
    T = 0.5 * (ht.transition_matrix(params, "flip", 1.0) + ht.transition_matrix(params, "flip", 0.3))
    ht.empirical_transition_check(bind(params, betas), T, 2, 3, n_draws=n_draws, rng=5)
    with pytest.raises(AssertionError):  # the statistics tell the two temperatures apart
        ht.empirical_transition_check(bind(params, betas), ht.transition_matrix(params, "flip"), 2, 3, n_draws=n_draws)


def reversed_order(params):
    """The wrong scan order T_v T_h: visible layer first."""

    def kernel(rng, state):
        v = flip_visibles(rng, state.v, state.h, params)
        return RBMState(v, flip_hiddens(rng, state.h, v, params))

    return kernel


@pytest.mark.parametrize(
    ("wrong", "label"),
    [
        (lambda p: reversed_order(p), "visible layer first"),
        (lambda p: bind(p, 0.8), "wrong temperature"),
        (lambda p: bind(p, None, 0.6), "wrong alpha"),
        (lambda p: (lambda rng, s: gibbs_sweep(rng, s, p)), "Gibbs"),
    ],
)
def test_the_empirical_check_rejects_wrong_samplers(wrong, label):
    params = RBMParams.random(2, 2, scale=3.0, rng=0)
    with pytest.raises(AssertionError):
        ht.empirical_transition_check(wrong(params), ht.transition_matrix(params, "flip"), 2, 2, n_draws=4000, rng=3)


def test_the_empirical_check_rejects_a_sampler_without_the_tie_rule():
    zero = RBMParams(np.zeros((2, 2)), np.zeros(2), np.zeros(2))
    flips_every_tie = lambda rng, s: RBMState(1.0 - s.v, 1.0 - s.h)  # noqa: E731
    with pytest.raises(AssertionError):
        ht.empirical_transition_check(flips_every_tie, ht.transition_matrix(zero, "flip"), 2, 2, n_draws=100)


# ------------------------------------------ long runs vs enumeration
def _burned_in(params, kernel, n_sweeps, beta=1.0):
    """Total variation between p and the law after n_sweeps from the test's start law."""
    n = 2 ** (params.n_visible + params.n_hidden)
    start = np.full(n, 1.0 / n) @ ht.layer_matrices(params, "gibbs", beta)[0]  # v uniform, h ~ p(h | v)
    law = start @ np.linalg.matrix_power(ht.transition_matrix(params, kernel, beta), n_sweeps)
    return 0.5 * np.abs(law - ht.joint_distribution(params, beta)).sum()


@pytest.mark.parametrize("alpha", [1.0, 0.5])
def test_long_batched_run_matches_the_visible_marginal(alpha):
    params = RBMParams.random(3, 3, scale=2.0, rng=8)
    n_chains, n_sweeps = 40_000, 40
    assert _burned_in(params, alpha, n_sweeps) < 1e-6
    rng = np.random.default_rng(12)
    state = init_state(rng, rng.integers(0, 2, (n_chains, 3)), params)
    kernel = build_kernel(alpha=alpha)
    for _ in range(n_sweeps):
        state, info = kernel(rng, state, params)
    counts = np.bincount(ht.state_index(state.v), minlength=8)
    ht.assert_frequencies(counts, np.exp(log_marginal_visible(params)))


def test_per_chain_beta_run_matches_each_tempered_marginal():
    params = RBMParams.random(3, 2, scale=3.0, rng=9)
    n_chains, n_sweeps = 40_000, 60
    betas = np.where(np.arange(n_chains) < n_chains // 2, 1.0, 0.4)
    for b in (1.0, 0.4):
        assert _burned_in(params, "flip", n_sweeps, b) < 1e-6
    rng = np.random.default_rng(13)
    state = init_state(rng, rng.integers(0, 2, (n_chains, 3)), params, betas)
    for _ in range(n_sweeps):
        state, _ = flip_sweep(rng, state, params, betas)
    for b in (1.0, 0.4):
        tempered = RBMParams(b * params.W, b * params.vbias, b * params.hbias)
        counts = np.bincount(ht.state_index(state.v[betas == b]), minlength=8)
        ht.assert_frequencies(counts, np.exp(log_marginal_visible(tempered)))


# ------------------------------------------------------- the API
def test_flip_sweep_shapes_dtypes_info_and_no_mutation():
    params = RBMParams.random(5, 4, scale=2.0, rng=0)
    rng = np.random.default_rng(0)
    state = init_state(rng, rng.integers(0, 2, (7, 5)), params)
    before = RBMState(state.v.copy(), state.h.copy())
    new, info = flip_sweep(rng, state, params)
    assert_array_equal(state.v, before.v)
    assert_array_equal(state.h, before.h)
    assert new.v.shape == (7, 5) and new.h.shape == (7, 4)
    assert new.v.dtype == np.float64 and new.h.dtype == np.float64
    assert_array_equal(info.n_changed, (new.v != state.v).sum(axis=1))
    assert_array_equal(info.n_hidden_changed, (new.h != state.h).sum(axis=1))
    # other state types pass through in their own dtype
    for dtype in (bool, np.int8, np.float32):
        s = RBMState(state.v.astype(dtype), state.h.astype(dtype))
        out, _ = flip_sweep(rng, s, params, alpha=0.5)
        assert out.v.dtype == dtype and out.h.dtype == dtype


def test_flip_sweep_refuses_bad_beta():
    params = RBMParams.random(3, 2, rng=0)
    rng = np.random.default_rng(0)
    state = init_state(rng, np.zeros((4, 3)), params)
    for bad in (-1.0, np.nan, np.ones(3), np.ones((4, 1)), np.array([1.0, 1.0, -0.1, 1.0])):
        with pytest.raises(ValueError, match="beta"):
            flip_sweep(rng, state, params, bad)


def test_flip_sweep_is_stable_for_weights_of_50():
    params = RBMParams.random(30, 20, scale=50.0, rng=1)
    rng = np.random.default_rng(1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        state = init_state(rng, rng.integers(0, 2, (16, 30)), params)
        for alpha in (1.0, 0.5, 0.0):
            for _ in range(5):
                state, info = flip_sweep(rng, state, params, np.linspace(0.0, 1.0, 16), alpha=alpha)
    assert np.all((state.v == 0) | (state.v == 1)) and np.all((state.h == 0) | (state.h == 1))


def test_flip_sweep_is_reproducible_with_a_seed():
    params = RBMParams.random(4, 3, scale=2.0, rng=0)
    state = init_state(np.random.default_rng(0), np.zeros((5, 4)), params)
    a, _ = flip_sweep(np.random.default_rng(42), state, params)
    b, _ = flip_sweep(np.random.default_rng(42), state, params)
    assert_array_equal(a.v, b.v)
    assert_array_equal(a.h, b.h)

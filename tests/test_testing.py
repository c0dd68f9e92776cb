"""The exact harness itself: state order, matrices against brute force, and every check on known cases."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from pymc_rbm import RBMParams
from pymc_rbm import testing as ht
from pymc_rbm.estimators import binary_states, log_partition_exact
from pymc_rbm.kernels import RBMState


# ----------------------------------------------------------- states
def test_joint_states_order_and_index_round_trip():
    v, h = ht.joint_states(2, 3)
    assert v.shape == (32, 2) and h.shape == (32, 3)
    assert_array_equal(ht.joint_index(v, h), np.arange(32))
    assert_array_equal(v[8], [0, 1]) and assert_array_equal(h[8], [0, 0, 0])  # 8 = 01|000
    assert_array_equal(ht.state_index(binary_states(4)), np.arange(16))
    assert_array_equal(ht.state_index(binary_states(3).astype(bool)), np.arange(8))


def test_joint_states_refuses_large_models():
    with pytest.raises(ValueError, match="at most"):
        ht.joint_states(6, 5)


def test_joint_distribution_matches_brute_force(brute):
    params = RBMParams.random(3, 2, scale=3.0, rng=0)
    table, _, _ = brute.neg_energy_table(params.W, params.vbias, params.hbias)
    for beta in (1.0, 0.3):
        p = np.exp(beta * table)
        assert_allclose(ht.joint_distribution(params, beta), (p / p.sum()).ravel(), rtol=1e-12)
    logz = log_partition_exact(params).log_z
    assert_allclose(ht.joint_distribution(params), np.exp(table.ravel() - logz), rtol=1e-12)


# ------------------------------------------------ matrices by brute force
def _definition_1(x, p_one):
    p_cur = p_one if x == 1 else 1.0 - p_one
    if abs(p_cur - 0.5) < 1e-12:
        return 0.5
    return (1.0 - p_cur) / p_cur if p_cur > 0.5 else 1.0


def _gibbs(x, p_one):
    return 1.0 - p_one if x == 1 else p_one


def _brute_matrix(params, unit, brute):
    """T = T_h T_v by explicit loops over every pair of joint states (seed 000, Definition 1)."""
    W, b, c = params.W, params.vbias, params.hbias
    V, H = brute.all_states(params.n_visible), brute.all_states(params.n_hidden)

    def layer(x, x_new, p_one):
        out = 1.0
        for xi, yi, pi in zip(x, x_new, p_one):
            q = unit(xi, pi)
            out *= q if xi != yi else 1.0 - q
        return out

    n = len(V) * len(H)
    T = np.zeros((n, n))
    for (a, v), (i, h), (a2, v2), (i2, h2) in itertools.product(enumerate(V), enumerate(H), enumerate(V), enumerate(H)):
        t_h = layer(h, h2, brute.conditional_hidden(v, W, b, c))
        t_v = layer(v, v2, brute.conditional_visible(h2, W, b, c))
        T[a * len(H) + i, a2 * len(H) + i2] = t_h * t_v
    return T


@pytest.mark.parametrize(
    "params", [RBMParams.random(2, 2, scale=3.0, rng=1), RBMParams(np.zeros((2, 1)), np.zeros(2), [0.0])]
)
def test_flip_and_gibbs_matrices_match_brute_force_loops(params, brute):
    assert_allclose(ht.transition_matrix(params, "flip"), _brute_matrix(params, _definition_1, brute), atol=1e-12)
    assert_allclose(ht.transition_matrix(params, "gibbs"), _brute_matrix(params, _gibbs, brute), atol=1e-12)
    mix = lambda x, p: 0.3 * _definition_1(x, p) + 0.7 * _gibbs(x, p)  # noqa: E731
    assert_allclose(ht.transition_matrix(params, 0.3), _brute_matrix(params, mix, brute), atol=1e-12)


@pytest.mark.parametrize("kernel", ["gibbs", "flip", 0.5])
def test_layer_matrices_change_one_layer_and_compose_to_the_sweep(kernel):
    params = RBMParams.random(2, 3, scale=2.0, rng=2)
    t_h, t_v = ht.layer_matrices(params, kernel)
    v, h = ht.joint_states(2, 3)
    same_v = (v[:, None, :] == v[None, :, :]).all(-1)
    same_h = (h[:, None, :] == h[None, :, :]).all(-1)
    assert np.all(t_h[~same_v] == 0) and np.all(t_v[~same_h] == 0)
    assert_allclose(t_h.sum(1), 1.0, atol=1e-14)
    assert_allclose(t_v.sum(1), 1.0, atol=1e-14)
    assert_allclose(t_h @ t_v, ht.transition_matrix(params, kernel), atol=1e-15)
    # each half-sweep is reversible with respect to p (detailed balance), the sweep is not
    p = ht.joint_distribution(params)
    for t in (t_h, t_v):
        flow = p[:, None] * t
        assert_allclose(flow, flow.T, atol=1e-15)


def test_transition_matrix_rejects_unknown_kernels_and_bad_rules():
    params = RBMParams.random(2, 2, rng=0)
    with pytest.raises(ValueError):
        ht.transition_matrix(params, "metropolis")
    with pytest.raises(ValueError, match="alpha"):
        ht.transition_matrix(params, 1.5)
    with pytest.raises(TypeError):
        ht.transition_matrix(params, None)
    with pytest.raises(ValueError, match="probabilities"):
        ht.transition_matrix(params, lambda x, a: 2.0 * np.ones_like(a))


def test_stay_probabilities_are_kept_without_cancellation():
    """A Gibbs stay probability of about exp(-200) must not round to 0."""
    params = RBMParams([[100.0]], [0.0], [100.0])
    G = ht.transition_matrix(params, "gibbs")
    assert np.all(G > 0)
    assert ht.is_irreducible(G)


# ------------------------------------------------------------ checks
def test_assert_stationary_accepts_and_rejects():
    T = np.array([[0.9, 0.1], [0.3, 0.7]])
    ht.assert_stationary([0.75, 0.25], T)
    with pytest.raises(AssertionError, match="not stationary"):
        ht.assert_stationary([0.5, 0.5], T)
    with pytest.raises(AssertionError, match="sums to"):
        ht.assert_stationary([0.75, 0.25], np.array([[0.9, 0.2], [0.3, 0.7]]))
    with pytest.raises(AssertionError, match="negative"):
        ht.assert_stationary([0.5, 0.5], np.array([[1.1, -0.1], [0.0, 1.0]]))
    with pytest.raises(ValueError):
        ht.assert_stationary([1.0], T)
    # detects a violation far below any sampling resolution
    ht.assert_stationary([0.75, 0.25], T + [[-1e-11, 1e-11], [0, 0]], atol=1e-10)
    with pytest.raises(AssertionError):
        ht.assert_stationary([0.75, 0.25], T + [[-1e-11, 1e-11], [0, 0]], atol=1e-12)


def cycle(n, self_loop=False):
    T = np.roll(np.eye(n), 1, axis=1)
    if self_loop:
        T[0] = 0.5 * (T[0] + np.eye(n)[0])
    return T


def test_irreducibility_period_and_primitivity_on_known_matrices():
    reducible = np.array([[1.0, 0.0], [0.5, 0.5]])
    assert not ht.is_irreducible(reducible) and not ht.is_primitive(reducible)
    with pytest.raises(ValueError, match="irreducible"):
        ht.period(reducible)
    for n in (2, 3, 5):
        assert ht.is_irreducible(cycle(n))
        assert ht.period(cycle(n)) == n and not ht.is_aperiodic(cycle(n)) and not ht.is_primitive(cycle(n))
        assert ht.is_aperiodic(cycle(n, True)) and ht.is_primitive(cycle(n, True))
    # bipartite walk: cycles of lengths 2 and 4 only
    walk = np.array([[0, 0.5, 0, 0.5], [0.5, 0, 0.5, 0], [0, 0.5, 0, 0.5], [0.5, 0, 0.5, 0]])
    assert ht.period(walk) == 2
    # cycles of lengths 2 and 3 give period 1, though no state has a self-loop
    t = np.array([[0, 0.5, 0.5], [1, 0, 0], [0, 1, 0]])
    assert ht.period(t) == 1 and ht.is_primitive(t)
    with pytest.raises(AssertionError, match="period 3"):
        ht.assert_converges(np.full(3, 1 / 3), cycle(3))


def test_primitivity_agrees_with_irreducible_and_aperiodic_on_random_patterns():
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = rng.integers(2, 7)
        T = (rng.random((n, n)) < rng.uniform(0.15, 0.5)).astype(float)
        T[T.sum(1) == 0, 0] = 1.0
        T /= T.sum(1, keepdims=True)
        expected = ht.is_irreducible(T) and ht.is_aperiodic(T)
        assert ht.is_primitive(T) == expected


def test_slem_on_known_matrices():
    a, b = 0.3, 0.9
    assert ht.slem(np.array([[1 - a, a], [b, 1 - b]])) == pytest.approx(abs(1 - a - b), abs=1e-14)
    assert ht.slem(cycle(2)) == pytest.approx(1.0)  # periodic
    assert ht.slem(np.eye(3)) == pytest.approx(1.0)  # reducible
    assert ht.slem(np.full((4, 4), 0.25)) == pytest.approx(0.0, abs=1e-14)  # independent draws
    assert ht.slem([[1.0]]) == 0.0


# -------------------------------------------------- frequency checks
def test_frequency_check_accepts_exact_counts_and_rejects_biased_ones():
    probs = np.array([[0.5, 0.3, 0.2, 0.0], [0.1, 0.1, 0.1, 0.7]])
    exact = ht.frequency_check(probs * 1000, probs)
    assert exact.statistic == pytest.approx(0.0) and exact.p_value == pytest.approx(1.0)
    assert exact.dof == 2 + 3
    biased = (probs + [[0.05, -0.05, 0, 0], [0, 0, 0, 0]]) * 100_000
    with pytest.raises(AssertionError, match="do not follow"):
        ht.assert_frequencies(biased, probs)
    impossible = probs * 1000 + [[0, 0, -1, 1], [0, 0, 0, 0]]
    with pytest.raises(AssertionError, match="probability 0"):
        ht.assert_frequencies(impossible, probs)


def test_frequency_check_pools_rare_cells_without_false_alarms():
    probs = np.array([0.6, 0.4 - 2e-6, 1e-6, 1e-6])
    counts = np.array([600, 399, 1, 0])  # a one-in-a-thousand event happened once
    check = ht.assert_frequencies(counts, probs)
    assert check.dof == 1


def test_frequency_check_is_calibrated():
    """Under the null hypothesis p-values are uniform: few fall below 0.01."""
    rng = np.random.default_rng(3)
    probs = rng.dirichlet(np.ones(12) * 0.5, size=20)
    p_values = [ht.frequency_check([rng.multinomial(300, p) for p in probs], probs).p_value for _ in range(300)]
    assert 0.0 <= np.mean(np.array(p_values) < 0.01) < 0.04
    assert 0.3 < np.mean(p_values) < 0.7


def test_transition_counts_layout_and_a_stub_kernel():
    stay = lambda rng, s: s  # noqa: E731
    counts = ht.transition_counts(stay, 1, 2, n_draws=3)
    assert_array_equal(counts, 3 * np.eye(8, dtype=int))
    flip_all = lambda rng, s: (RBMState(1 - s.v, 1 - s.h), None)  # noqa: E731
    assert_array_equal(ht.transition_counts(flip_all, 1, 2, 2), 2 * np.eye(8, dtype=int)[::-1])
    ht.empirical_transition_check(stay, np.eye(8), 1, 2, n_draws=10)
    # 1.25 expected counts a cell: all pooled, nothing left to test
    ht.empirical_transition_check(stay, np.full((8, 8), 1 / 8), 1, 2, n_draws=10)
    with pytest.raises(AssertionError):
        ht.empirical_transition_check(stay, np.full((8, 8), 1 / 8), 1, 2, n_draws=40)
    with pytest.raises(ValueError, match="shape"):
        ht.empirical_transition_check(stay, np.eye(4), 1, 2, n_draws=10)


def test_a_plugged_in_matrix_reuses_the_checks():
    """How a later move plugs in: its own T over the harness order, the shared checks."""
    params = RBMParams.random(2, 2, scale=4.0, rng=5)
    p = ht.joint_distribution(params)
    # an independence Metropolis move proposing uniform joint states, as a matrix
    n = p.size
    accept = np.minimum(1.0, p[None, :] / p[:, None])
    T = accept / n
    T[np.diag_indices(n)] += 1.0 - T.sum(1)
    ht.assert_converges(p, T)
    combined = ht.transition_matrix(params, "flip") @ T
    ht.assert_converges(p, combined)
    assert 0.0 <= ht.slem(combined) < 1.0

"""Parallel tempering: swap rounds and t-PT k steps leave the product of tempered distributions exactly invariant.

The state space of ``t`` replicas of a tiny RBM is listed (replica 0 the most
significant digit, each replica a joint state of :mod:`pymc_rbm.testing`); the
swap round's matrix is built from the real :func:`swap_log_ratio` evaluated at
every configuration at once (one ladder per configuration), and the sampling
code is checked against the matrix rows.
"""

import itertools

import numpy as np
import pytest

from pymc_rbm import RBMParams
from pymc_rbm.kernels import acceptance_probability
from pymc_rbm.kernels.flip import build_kernel as flip_kernel
from pymc_rbm.kernels.tempering import (
    TemperedState,
    build_kernel,
    check_ladder,
    init_tempered_state,
    swap_log_ratio,
    swap_neighbours,
    swap_pairs,
    tempered_sweep,
    uniform_ladder,
)
from pymc_rbm.testing import (
    assert_frequencies,
    assert_stationary,
    is_aperiodic,
    is_irreducible,
    joint_distribution,
    joint_index,
    joint_states,
    transition_matrix,
)


def configurations(params, t):
    """All configurations of ``t`` replicas as one batch of ladders, and their exact product probabilities."""
    v, h = joint_states(params.n_visible, params.n_hidden)
    n = v.shape[0]
    idx = np.array(list(itertools.product(range(n), repeat=t))).T  # (t, n**t), replica 0 most significant
    return TemperedState(v[idx], h[idx]), n


def product_distribution(params, betas):
    p = np.ones(1)
    for b in betas:
        p = np.kron(p, joint_distribution(params, b))
    return p


def config_index(digits, n):
    """Index of configurations whose replica states are ``digits`` (t, m)."""
    t = digits.shape[0]
    return (digits * (n ** np.arange(t - 1, -1, -1))[:, None]).sum(axis=0)


def swap_matrix(params, betas, parity):
    """Exact matrix of one swap round over all replica configurations."""
    t = len(betas)
    state, n = configurations(params, t)
    m = n**t
    digits = np.array(list(itertools.product(range(n), repeat=t))).T
    accept = acceptance_probability(swap_log_ratio(state, params, betas))  # (t-1, m)
    pairs = swap_pairs(t, parity)
    T = np.zeros((m, m))
    for outcome in itertools.product([False, True], repeat=len(pairs)):
        prob = np.ones(m)
        new = digits.copy()
        for r, swapped in zip(pairs, outcome):
            prob *= accept[r] if swapped else 1.0 - accept[r]
            if swapped:
                new[[r, r + 1]] = digits[[r + 1, r]]
        np.add.at(T, (np.arange(m), config_index(new, n)), prob)
    return T


def sweep_matrix(params, betas, kernel):
    T = np.ones((1, 1))
    for b in betas:
        T = np.kron(T, transition_matrix(params, kernel, b))
    return T


@pytest.fixture
def small():
    # 2 visible, 1 hidden: 8 joint states per replica, 3 replicas -> 512 configurations
    return RBMParams(np.array([[2.5], [-3.0]]), np.array([0.7, -1.2]), np.array([1.5])), uniform_ladder(3)


@pytest.mark.parametrize("parity", [0, 1])
def test_swap_round_is_exactly_invariant(small, parity):
    params, betas = small
    T = swap_matrix(params, betas, parity)
    np.testing.assert_allclose(T.sum(axis=1), 1.0, atol=1e-14)
    assert_stationary(product_distribution(params, betas), T, atol=1e-12)


def test_swap_round_with_two_pairs_is_exactly_invariant():
    # 1 visible, 1 hidden: 4 joint states; 4 replicas -> 256 configurations, the even round swaps 2 pairs at once
    params = RBMParams([[4.0]], [-2.0], [1.0])
    betas = np.array([0.0, 0.3, 0.7, 1.0])
    for parity in (0, 1):
        T = swap_matrix(params, betas, parity)
        assert_stationary(product_distribution(params, betas), T, atol=1e-12)


def test_swap_with_a_wrong_ratio_is_caught(small):
    """The harness detects a swap that uses the wrong sign of the ratio (the test has power)."""
    params, betas = small
    # a wrong matrix: the ratio with its sign turned
    state, n = configurations(params, 3)
    wrong = acceptance_probability(-swap_log_ratio(state, params, betas))
    right = acceptance_probability(swap_log_ratio(state, params, betas))
    assert not np.allclose(wrong, right)
    T = swap_matrix(params, betas, 0)
    digits = np.array(list(itertools.product(range(n), repeat=3))).T
    swapped = digits.copy()
    swapped[[0, 1]] = digits[[1, 0]]
    m = n**3
    T_wrong = np.zeros((m, m))
    np.add.at(T_wrong, (np.arange(m), config_index(swapped, n)), wrong[0])
    np.add.at(T_wrong, (np.arange(m), np.arange(m)), 1.0 - wrong[0])
    assert np.abs(T - T_wrong).max() > 0.1
    with pytest.raises(AssertionError):
        assert_stationary(product_distribution(params, betas), T_wrong, atol=1e-12)


@pytest.mark.parametrize("kernel", ["gibbs", "flip", 0.5])
def test_pt_step_is_invariant_irreducible_and_aperiodic(small, kernel):
    params, betas = small
    p = product_distribution(params, betas)
    sweeps = sweep_matrix(params, betas, kernel)
    k = 2
    even = np.linalg.matrix_power(sweeps, k) @ swap_matrix(params, betas, 0)
    odd = np.linalg.matrix_power(sweeps, k) @ swap_matrix(params, betas, 1)
    for T in (even, odd, even @ odd):
        assert_stationary(p, T, atol=1e-12)
    both = even @ odd
    assert is_irreducible(both) and is_aperiodic(both)


def test_swap_sampling_matches_the_matrix(small):
    """The sampling code follows the exact matrix rows (chi-square, every configuration at once)."""
    params, betas = small
    state, n = configurations(params, 3)
    m = n**3
    rng = np.random.default_rng(1)
    for parity in (0, 1):
        T = swap_matrix(params, betas, parity)
        counts = np.zeros((m, m))
        for _ in range(300):
            new, _ = swap_neighbours(rng, state, params, betas, parity=parity)
            digits = joint_index(new.v, new.h)  # (t, m): each replica's joint state
            np.add.at(counts, (np.arange(m), config_index(digits, n)), 1)
        assert_frequencies(counts, T)


def test_swap_round_bookkeeping(small):
    params, betas = small
    rng = np.random.default_rng(0)
    state = init_tempered_state(rng, np.array([[1, 0], [0, 1]]), params, betas)
    v_before = state.v.copy()
    new, info = swap_neighbours(rng, state, params, betas)
    np.testing.assert_array_equal(state.v, v_before)  # input untouched
    assert new.n_rounds == 1 and info.attempted.tolist() == [True, False]
    assert np.isnan(info.log_ratio[1]).all() and not info.accepted[1].any()
    new2, info2 = swap_neighbours(rng, new, params, betas)
    assert new2.n_rounds == 2 and info2.attempted.tolist() == [False, True]
    # an accepted swap exchanges whole joint states
    forced = TemperedState(state.v, state.h, 0)
    out, inf = swap_neighbours(rng, forced, params, np.array([0.0, 1e-12, 1.0]), parity=0)
    swapped = inf.accepted[0]
    np.testing.assert_array_equal(out.v[0][swapped], state.v[1][swapped])
    np.testing.assert_array_equal(out.h[1][swapped], state.h[0][swapped])


def test_tempered_sweep_and_pt_kernel_shapes(small):
    params, betas = small
    rng = np.random.default_rng(3)
    state = init_tempered_state(rng, np.zeros((5, 2)), params, betas)
    assert state.v.shape == (3, 5, 2) and state.h.shape == (3, 5, 1)
    s2, info = tempered_sweep(rng, state, params, betas, kernel=flip_kernel(alpha=1.0))
    assert info.n_changed.shape == (3, 5)
    step = build_kernel(flip_kernel(), k=3)
    s3, tinfo = step(rng, s2, params, betas)
    assert s3.n_rounds == 1 and tinfo.swap.accepted.shape == (2, 5)
    # the β = 0 replica is uniform: its visible states average 1/2
    state = init_tempered_state(rng, np.zeros((4000, 2)), params, betas)
    for _ in range(3):
        state, _ = step(rng, state, params, betas)
    assert abs(state.v[0].mean() - 0.5) < 0.05


def test_ladder_and_input_validation(small):
    params, betas = small
    assert check_ladder([0, 0.5, 1]).tolist() == [0.0, 0.5, 1.0]
    for bad in ([1.0, 0.5], [0.0, 0.0, 1.0], [-0.1, 1.0], [[0.0, 1.0]], [np.nan, 1.0], []):
        with pytest.raises(ValueError):
            check_ladder(bad)
    for bad in (1, 0, 2.5, True):
        with pytest.raises(ValueError):
            uniform_ladder(bad)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="binary"):
        init_tempered_state(rng, np.full((2, 2), 0.5), params, betas)
    with pytest.raises(ValueError, match="n_temperatures"):
        init_tempered_state(rng, np.zeros((2, 2, 2)), params, betas)
    state = init_tempered_state(rng, np.zeros((2, 2)), params, betas)
    with pytest.raises(ValueError, match="state.v"):
        swap_neighbours(rng, state, params, uniform_ladder(4))
    with pytest.raises(ValueError, match="parity"):
        swap_neighbours(rng, state, params, betas, parity=2)
    with pytest.raises(TypeError):
        swap_neighbours(rng, (state.v, state.h), params, betas)
    with pytest.raises(ValueError, match="k must"):
        build_kernel(k=0)


def test_equalized_ladder_spaces_the_barrier_evenly():
    from pymc_rbm.kernels.tempering import communication_barrier, equalized_ladder

    betas, rejection = np.array([0.0, 0.2, 0.5, 1.0]), np.array([0.1, 0.6, 0.3])
    lam = communication_barrier(betas, rejection)
    np.testing.assert_allclose(lam, [0.0, 0.1, 0.7, 1.0])
    new = equalized_ladder(betas, rejection, 5)
    assert new[0] == 0.0 and new[-1] == 1.0 and np.all(np.diff(new) > 0)
    # the piecewise-linear barrier at the new rungs rises by the same step between neighbours
    np.testing.assert_allclose(np.diff(np.interp(new, betas, lam)), 0.25, atol=1e-12)
    # no rejection seen: evenly spaced in beta
    np.testing.assert_allclose(equalized_ladder(betas, np.zeros(3), 3), [0.0, 0.5, 1.0])
    for bad in ([0.1, 0.6], [0.1, 1.5, 0.3]):
        with pytest.raises(ValueError, match="rejection"):
            communication_barrier(betas, bad)
    with pytest.raises(ValueError, match="n_temperatures"):
        equalized_ladder(betas, rejection, 1)


def test_a_saturating_barrier_counts_a_pair_that_rarely_swaps_as_the_pairs_it_needs():
    from pymc_rbm.kernels.tempering import MIN_ACCEPTANCE, communication_barrier, equalized_ladder

    betas = np.array([0.0, 0.5, 0.9, 1.0])
    small = np.array([0.01, 0.02, 0.03])
    np.testing.assert_allclose(communication_barrier(betas, small, saturating=True),
                               communication_barrier(betas, small), rtol=0.02)  # -log(1 - r) ≈ r for small r
    sharp = np.array([0.05, 0.05, 1.0])  # the last pair never swapped
    lam = communication_barrier(betas, sharp, saturating=True)
    np.testing.assert_allclose(np.diff(lam), -np.log([0.95, 0.95, MIN_ACCEPTANCE]))
    assert communication_barrier(betas, sharp)[-1] == pytest.approx(1.1)
    # about 2Λ + 1 rungs: 16 instead of 4, the new ones where the swaps failed
    n = int(np.ceil(2 * lam[-1])) + 1
    assert n == 16
    new = equalized_ladder(betas, sharp, n, saturating=True)
    assert np.sum(new > 0.9) >= 14

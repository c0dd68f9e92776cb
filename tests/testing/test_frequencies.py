"""Tests of pymc_rbm.testing.frequencies: chi-square checks of sampled transitions."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from pymc_rbm import RBMParams
from pymc_rbm import testing as ht
from pymc_rbm.kernels import RBMState


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

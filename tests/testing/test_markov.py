"""Tests of pymc_rbm.testing.markov: every check of a transition matrix on known cases."""

from __future__ import annotations

import numpy as np
import pytest

from pymc_rbm import testing as ht


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


def test_every_check_refuses_a_matrix_that_is_not_square():
    from pymc_rbm.testing.markov import as_transition_matrix

    assert as_transition_matrix([[1, 0], [0, 1]]).dtype == np.float64
    for check in (ht.is_irreducible, ht.period, ht.is_primitive, ht.slem, as_transition_matrix):
        with pytest.raises(ValueError, match="square"):
            check(np.ones((2, 3)))

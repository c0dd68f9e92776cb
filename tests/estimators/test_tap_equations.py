"""Tests of the TAP equations and their fixed points (pymc_rbm.estimators.tap_equations)."""

from __future__ import annotations

import numpy as np
import pytest

from pymc_rbm import RBMParams
from pymc_rbm.estimators import log_partition_exact
from pymc_rbm.estimators.tap_equations import tap_fixed_point, tap_free_energy, tap_starts


def _model(nv=7, nh=5, scale=0.2, seed=0):
    return RBMParams.random(nv, nh, scale=scale, rng=seed)


def test_order_one_is_a_lower_bound_anywhere():
    p = _model(scale=1.5, seed=4)
    rng = np.random.default_rng(0)
    vals = tap_free_energy(p, rng.random((50, p.n_visible)), rng.random((50, p.n_hidden)), order=1)
    assert np.all(vals <= log_partition_exact(p).log_z)


def test_free_energy_terms_by_hand():
    p = _model(4, 3, scale=0.7, seed=1)
    rng = np.random.default_rng(1)
    mv, mh = rng.random(4), rng.random(3)
    S = lambda m: -(m * np.log(m) + (1 - m) * np.log(1 - m)).sum()  # noqa: E731
    first = S(mv) + S(mh) + mv @ p.vbias + mh @ p.hbias + mv @ p.W @ mh
    second = 0.5 * sum(
        p.W[i, j] ** 2 * (mv[i] - mv[i] ** 2) * (mh[j] - mh[j] ** 2) for i in range(4) for j in range(3)
    )
    third = (2 / 3) * sum(
        p.W[i, j] ** 3 * (mv[i] - mv[i] ** 2) * (0.5 - mv[i]) * (mh[j] - mh[j] ** 2) * (0.5 - mh[j])
        for i in range(4)
        for j in range(3)
    )
    assert tap_free_energy(p, mv, mh, order=1) == pytest.approx(first, abs=1e-12)
    assert tap_free_energy(p, mv, mh, order=2) == pytest.approx(first + second, abs=1e-12)
    assert tap_free_energy(p, mv, mh, order=3) == pytest.approx(first + second + third, abs=1e-12)


@pytest.mark.parametrize("order", [1, 2, 3])
def test_fixed_point_is_stationary(order):
    """At the fixed point the gradient of -Γ in the magnetizations vanishes (central differences)."""
    p = _model(5, 4, scale=1.0, seed=7)
    sol = tap_fixed_point(p, np.full((1, 5), 0.5), order=order, tol=1e-12)
    assert sol.converged[0]
    mv, mh = sol.m_v[0], sol.m_h[0]
    h = 1e-6
    for k in range(5):
        d = np.zeros(5)
        d[k] = h
        g = (tap_free_energy(p, mv + d, mh, order=order) - tap_free_energy(p, mv - d, mh, order=order)) / (2 * h)
        assert abs(g) < 1e-6
    for k in range(4):
        d = np.zeros(4)
        d[k] = h
        g = (tap_free_energy(p, mv, mh + d, order=order) - tap_free_energy(p, mv, mh - d, order=order)) / (2 * h)
        assert abs(g) < 1e-6


def test_newton_update_never_lowers_the_estimate():
    """"newton" is a block coordinate descent of Γ (convex in one layer at order 2): -Γ never decreases."""
    p = RBMParams.random(6, 4, scale=3.0, rng=28)
    mv, mh = tap_starts(p, n_starts=3, rng=1)
    prev = tap_free_energy(p, mv, mh)
    for _ in range(30):
        sol = tap_fixed_point(p, mv, mh, order=2, max_iter=1, tol=0.0)
        mv, mh = sol.m_v, sol.m_h
        assert np.all(sol.neg_gibbs >= prev - 1e-10)
        prev = sol.neg_gibbs


def test_adaptive_damping_cures_an_oscillation():
    """Plain Gabrié iteration oscillates on this model; the adaptive damping makes it converge."""
    p = RBMParams.random(6, 4, scale=3.0, rng=28)
    mv, mh = tap_starts(p, n_starts=1)
    plain = tap_fixed_point(p, mv, mh, update="fixed_point", damping=0.0, adaptive=False, max_iter=400)
    adapted = tap_fixed_point(p, mv, mh, update="fixed_point", damping=0.0, adaptive=True, max_iter=400)
    newton = tap_fixed_point(p, mv, mh, update="newton")
    assert not plain.converged[0]
    assert adapted.converged[0] and adapted.damping[0] > 0.0
    assert newton.converged[0] and newton.damping[0] == 0.0
    assert adapted.neg_gibbs[0] == pytest.approx(newton.neg_gibbs[0], abs=1e-7)

"""Tests of mixture mean field (pymc_rbm.estimators.mixture_mean_field, seed 003)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from pymc_rbm import RBMParams
from pymc_rbm.estimators.boltzmann_machine import BoltzmannMachine
from pymc_rbm.estimators.mean_field import log_partition_mean_field
from pymc_rbm.estimators.mixture_mean_field import (
    _Mix,
    mean_field_bm,
    mixture_mean_field_arrays,
    mixture_mean_field_bm,
    moments_mixture_mean_field,
)

FAST = dict(tol=1e-6, max_iter=40)  # mixture options that keep the tests quick


@pytest.mark.parametrize("seed", range(4))
def test_bm_mixture_is_tighter_than_naive(seed):
    bm = BoltzmannMachine.random(10, rng=seed)
    exact = bm.log_partition_exact()
    naive = mean_field_bm(bm).bound[0]
    mix = mixture_mean_field_bm(bm, 3, **FAST)
    assert naive <= mix.bound[0] <= exact
    assert mix.naive_bound[0] == pytest.approx(naive)
    assert mix.bound[0] > naive + 1e-3  # strictly tighter on these frustrated machines


def test_random_starts_alone_still_bound():
    """Without the naive-seeded start, the annealed mixture is still a lower bound (not always above naive)."""
    bms = [BoltzmannMachine.random(8, rng=100 + k) for k in range(6)]
    J, b = np.stack([x.J for x in bms]), np.stack([x.b for x in bms])
    sol = mixture_mean_field_arrays(J, b, n_components=2, naive_start=False, **FAST)
    exact = np.array([x.log_partition_exact() for x in bms])
    assert np.all(sol.bound <= exact) and not sol.naive_seeded.any()
    np.testing.assert_allclose(sol.alpha.sum(axis=1), 1.0)


def test_coordinate_ascent_never_decreases_the_bound():
    bm = BoltzmannMachine.random(8, rng=7)
    rng = np.random.default_rng(0)
    L, n = 3, 8
    state = _Mix(bm.J[None], bm.b[None], rng.normal(size=(1, L, n)), rng.normal(size=(1, L, n, 2)), np.full((1, L), -np.log(L)))
    prev = state.bound(1.0, True)
    for _ in range(15):
        for i in range(n):
            state.update_unit_m(i, 1.0, True)
            now = state.bound(1.0, True)
            assert now >= prev - 1e-10
            prev = now
        state.update_lambda()
        for i in range(n):
            state.update_unit_r(i)
            now = state.bound(1.0, True)
            assert now >= prev - 1e-10
            prev = now
        for step in (state.update_lambda, lambda: state.update_alpha(1.0)):
            step()
            now = state.bound(1.0, True)
            assert now >= prev - 1e-10
            prev = now
    assert prev <= bm.log_partition_exact()


def test_bound_formula_by_enumeration():
    """The mixture bound equals Σ_S Q(-E) + H(Q) minus (I - I_λ) ≥ 0, with Q the mixture: check L_mix ≤ ELBO(Q) exactly."""
    bm = BoltzmannMachine.random(6, rng=9)
    sol = mixture_mean_field_bm(bm, 3, **FAST)
    s = np.array(list(itertools.product([-1.0, 1.0], repeat=6)))
    comp = np.prod((1 + s[None] * sol.m[0][:, None, :]) / 2, axis=-1)  # (L, 2**n)
    Q = sol.alpha[0] @ comp
    neg_e = np.array([0.5 * x @ bm.J @ x + bm.b @ x for x in s])
    elbo = Q @ neg_e - (Q[Q > 0] * np.log(Q[Q > 0])).sum()
    assert sol.bound[0] <= elbo + 1e-9 <= bm.log_partition_exact() + 1e-9


def test_naive_bm_and_rbm_agree_on_a_weak_rbm():
    p = RBMParams.random(6, 5, scale=0.3, rng=1)
    bm = BoltzmannMachine.from_rbm(p)
    rbm = log_partition_mean_field(p, tol=1e-12).log_z
    assert mean_field_bm(bm, temperatures=[1.0], tol=1e-14, max_iter=1000).bound[0] + p.to_spin().log_offset == pytest.approx(rbm, abs=1e-9)


def test_naive_fixed_point_equation_19():
    bm = BoltzmannMachine.random(9, scale=0.5, rng=4)
    m = mean_field_bm(bm, tol=1e-14, max_iter=1000).m[0, 0]
    np.testing.assert_allclose(m, np.tanh(bm.J @ m + bm.b), atol=1e-6)  # the stopping rule watches the bound


def test_correlation_error_falls_with_the_number_of_components():
    """Seed 003 Fig. 1 in miniature: Σ (Σ_l α_l m_li m_lj - ⟨s_i s_j⟩)² over 12 random 10-unit machines."""
    bms = [BoltzmannMachine.random(10, rng=200 + k) for k in range(12)]
    J, b = np.stack([x.J for x in bms]), np.stack([x.b for x in bms])
    exact = np.stack([x.moments_exact().C for x in bms])
    iu = np.triu_indices(10, 1)
    sse = []
    for L in (1, 4):
        C = mixture_mean_field_arrays(J, b, n_components=L, **FAST).correlations()
        sse.append((((C - exact)[:, iu[0], iu[1]]) ** 2).sum())
    assert sse[1] < 0.6 * sse[0]


def test_mixture_moments_are_mixtures():
    p = RBMParams.random(5, 3, scale=2.0, rng=8)
    mom = moments_mixture_mean_field(p, n_components=3, **FAST)
    assert np.all((mom.vh >= 0) & (mom.vh <= 1))
    assert np.all(mom.vh <= np.minimum(mom.v[:, None], mom.h[None, :]) + 1e-12)

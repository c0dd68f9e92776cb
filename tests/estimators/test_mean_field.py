"""Tests of naive and mixture mean field (pymc_rbm.estimators.mean_field, seed 003)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from pymc_rbm import RBMParams
from pymc_rbm.estimators import (
    LOG_PARTITION_METHODS,
    MOMENT_METHODS,
    EnumerationTooLarge,
    log_partition,
    log_partition_exact,
    moments,
    moments_exact,
)
from pymc_rbm.estimators.mean_field import (
    BoltzmannMachine,
    _Mix,
    annealing_schedule,
    log_partition_mean_field,
    log_partition_mixture_mean_field,
    mean_field_bm,
    mixture_mean_field_arrays,
    mixture_mean_field_bm,
    moments_mean_field,
    moments_mixture_mean_field,
)

MNIST_EXACT = {"mnist_h10": 226.1132, "mnist_h20": 221.0668}
FAST = dict(tol=1e-6, max_iter=40)  # mixture options that keep the tests quick


def _brute(bm: BoltzmannMachine):
    s = np.array(list(itertools.product([-1.0, 1.0], repeat=bm.n_units)))
    e = np.array([-0.5 * x @ bm.J @ x - bm.b @ x for x in s])
    p = np.exp(-e - logsumexp(-e))
    return logsumexp(-e), p @ s, (s * p[:, None]).T @ s


# ------------------------------------------------------------ the Boltzmann machine value type
def test_boltzmann_machine_exact_against_brute_force():
    bm = BoltzmannMachine.random(7, rng=3)
    log_z, m, C = _brute(bm)
    assert bm.log_partition_exact() == pytest.approx(log_z, abs=1e-12)
    mom = bm.moments_exact()
    np.testing.assert_allclose(mom.m, m, atol=1e-12)
    np.testing.assert_allclose(mom.C, C, atol=1e-12)
    np.testing.assert_allclose(np.diag(mom.C), 1.0, atol=1e-12)


def test_boltzmann_machine_validation_and_immutability():
    J = np.array([[0.0, 1.0], [1.0, 0.0]])
    bm = BoltzmannMachine(J, [0.1, -0.2])
    J[0, 1] = 5.0
    assert bm.J[0, 1] == 1.0 and not bm.J.flags.writeable and not bm.b.flags.writeable
    with pytest.raises(ValueError, match="symmetric"):
        BoltzmannMachine([[0.0, 1.0], [0.5, 0.0]], [0.0, 0.0])
    with pytest.raises(ValueError, match="zero diagonal"):
        BoltzmannMachine([[0.3, 1.0], [1.0, 0.0]], [0.0, 0.0])
    with pytest.raises(ValueError, match="needs"):
        BoltzmannMachine(np.zeros((2, 2)), [0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="square"):
        BoltzmannMachine(np.zeros((2, 3)), [0.0, 0.0])
    with pytest.raises(ValueError, match="non-finite"):
        BoltzmannMachine([[0.0, np.nan], [np.nan, 0.0]], [0.0, 0.0])
    with pytest.raises(EnumerationTooLarge, match="mixture_mean_field_bm"):
        BoltzmannMachine(np.zeros((21, 21)), np.zeros(21)).log_partition_exact()


def test_random_ensemble_of_seed_003():
    bm = BoltzmannMachine.random(10, rng=0)
    iu = np.triu_indices(10, 1)
    assert np.all(np.abs(bm.J[iu]) < 1.0) and np.all(np.abs(bm.b) < 1.0)
    assert np.array_equal(bm.J, bm.J.T) and np.all(np.diag(bm.J) == 0.0)


def test_from_rbm_uses_the_spin_map():
    p = RBMParams.random(5, 4, scale=1.5, rng=2)
    bm = BoltzmannMachine.from_rbm(p)
    assert bm.n_units == 9
    assert bm.log_partition_exact() + p.to_spin().log_offset == pytest.approx(log_partition_exact(p).log_z, abs=1e-10)


# ------------------------------------------------------------ the bound
BOUND_MODELS = [(7, 5, 0.3), (7, 5, 1.0), (4, 9, 3.0), (6, 6, 50.0), (10, 1, 2.0)]


@pytest.mark.parametrize("nv, nh, scale", BOUND_MODELS)
def test_rbm_naive_and_mixture_are_lower_bounds(nv, nh, scale):
    p = RBMParams.random(nv, nh, scale=scale, rng=nv + nh)
    exact = log_partition_exact(p).log_z
    naive = log_partition_mean_field(p)
    mix = log_partition_mixture_mean_field(p, n_components=3, **FAST)
    assert np.isfinite(naive.log_z) and np.isfinite(mix.log_z)
    assert naive.log_z <= exact + 1e-9
    assert mix.log_z <= exact + 1e-9
    assert mix.log_z >= naive.log_z - 1e-9
    assert naive.stderr == 0.0 and naive.diagnostics["bound"] and mix.diagnostics["bound"]


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


# ------------------------------------------------------------ moments
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


def test_rbm_moments_close_to_exact_at_weak_coupling():
    """⟨v hᵀ⟩ ≈ m_v m_hᵀ misses the connected part W (v - v²)(h - h²): small only when W is."""
    p = RBMParams.random(6, 4, scale=0.05, rng=3)
    e = moments_exact(p)
    for mom in (moments_mean_field(p), moments_mixture_mean_field(p, n_components=2, **FAST)):
        for a, b in zip(mom, e):
            np.testing.assert_allclose(a, b, atol=5e-3)


def test_mixture_moments_are_mixtures():
    p = RBMParams.random(5, 3, scale=2.0, rng=8)
    mom = moments_mixture_mean_field(p, n_components=3, **FAST)
    assert np.all((mom.vh >= 0) & (mom.vh <= 1))
    assert np.all(mom.vh <= np.minimum(mom.v[:, None], mom.h[None, :]) + 1e-12)


# ------------------------------------------------------------ options, diagnostics, dispatch
def test_annealing_schedule():
    t = annealing_schedule()
    assert t.size == 8 and t[0] == pytest.approx(60.0) and t[-1] == 1.0 and np.all(np.diff(t) < 0)
    with pytest.raises(ValueError, match="end at 1"):
        mixture_mean_field_arrays(np.zeros((1, 2, 2)), np.zeros((1, 2)), temperatures=[5.0, 2.0])


def test_diagnostics():
    p = RBMParams.random(6, 4, scale=1.0, rng=0)
    data = (np.random.default_rng(1).random((9, 6)) < 0.5).astype(np.int8)
    d = log_partition_mean_field(p, n_starts=3, data=data, n_data_starts=4).diagnostics
    assert d["n_starts"] == 7 and d["converged"] and d["iterations"] >= 1 and d["residual"] < 1e-9
    assert d["values"].shape == (7,) and d["m_v"].shape == (6,) and d["m_h"].shape == (4,)
    est = log_partition_mixture_mean_field(p, n_components=2, **FAST)
    d = est.diagnostics
    assert est.method == "mixture_mean_field" and est.stderr == 0.0
    assert d["n_components"] == 2 and d["alpha"].shape == (2,) and d["iterations"] >= 1
    assert isinstance(d["converged"], bool) and d["residual"] >= 0.0 and d["n_starts"] == 1
    assert d["naive_bound"] <= est.log_z + 1e-12
    annealed = log_partition_mean_field(p, temperatures=annealing_schedule(10.0, 4))
    assert annealed.log_z <= log_partition_exact(p).log_z


def test_bad_input():
    p = RBMParams.random(4, 3, rng=0)
    with pytest.raises(TypeError, match="RBMParams"):
        log_partition_mean_field(p.to_spin())
    with pytest.raises(ValueError, match="n_components"):
        log_partition_mixture_mean_field(p, n_components=0)
    with pytest.raises(ValueError, match="binary"):
        log_partition_mean_field(p, data=np.full((1, 4), 3))
    with pytest.raises(TypeError, match="BoltzmannMachine"):
        mixture_mean_field_bm(p, 2)


def test_dispatcher_entries():
    p = RBMParams.random(5, 4, scale=0.5, rng=0)
    assert LOG_PARTITION_METHODS["mean_field"] is log_partition_mean_field
    assert LOG_PARTITION_METHODS["mixture_mean_field"] is log_partition_mixture_mean_field
    assert MOMENT_METHODS["mean_field"] is moments_mean_field
    assert MOMENT_METHODS["mixture_mean_field"] is moments_mixture_mean_field
    assert log_partition(p, "mean_field", rng=2).log_z <= log_partition_exact(p).log_z
    est = log_partition(p, "mixture_mean_field", n_components=2, **FAST)
    assert est.log_z <= log_partition_exact(p).log_z
    np.testing.assert_allclose(moments(p, "mean_field").v, moments_mean_field(p).v)


# ------------------------------------------------------------ MNIST models
@pytest.mark.parametrize("name", ["mnist_h10", "mnist_h20"])
def test_mnist_models(mnist_model, name):
    """Naive mean field: 225.54 (h10) and 211.74 (h20) against exact 226.11 and 221.07: bounds."""
    est = log_partition_mean_field(mnist_model(name))
    assert est.diagnostics["converged"]
    assert MNIST_EXACT[name] - 12.0 < est.log_z < MNIST_EXACT[name]

"""Tests of the annealing path (pymc_rbm.estimators.path): its intermediate RBMs and transitions, built once
and handed to every annealing estimator."""

from __future__ import annotations

import itertools

import _brute
import numpy as np
import pytest
from numpy.testing import assert_array_equal
from scipy.special import logsumexp

from pymc_rbm import RBMParams
from pymc_rbm.energy import free_energy, hidden_activation, visible_activation
from pymc_rbm.estimators import (
    AnnealingPath,
    PathOptions,
    RTSRounds,
    StartOptions,
    ais,
    annealing_path,
    bar,
    log_partition_exact,
    reverse_ais,
    rts,
    sams,
)
from pymc_rbm.estimators.base_rate import base_rate_vbias
from pymc_rbm.enumeration import sample_visible_exact
from pymc_rbm.estimators.path import softplus_sum_
from pymc_rbm.kernels.layer import GIBBS, LayerRule
from pymc_rbm.layers import SPIN
from pymc_rbm.params import SpinRBMParams
from pymc_rbm.testing import assert_frequencies, assert_stationary, joint_distribution, layer_matrices

P = RBMParams.random(12, 6, scale=1.5, rng=3)
DATA = np.random.default_rng(0).integers(0, 2, (50, 12))
OPTIONS = {"data": DATA, "base_smoothing": 0.01, "dtype": np.float32, "operator": "flip"}


def _as_records(options: dict) -> dict:
    """The path's options as SAMS and RTS take them: those of annealing_path besides ``data`` in a PathOptions."""
    fields = {"operator", "base", "base_smoothing", "dtype"}
    path = {k: v for k, v in options.items() if k in fields}
    rest = {k: v for k, v in options.items() if k not in fields}
    return {**rest, **({"path_options": PathOptions(**path)} if path else {})}


def _model(nv, nh, scale, seed=0):
    return RBMParams.random(nv, nh, scale=scale, rng=100 * seed + 10 * nv + nh)


def _path_joint(target: RBMParams, b_a, beta) -> np.ndarray:
    """``p_β(v, h) ∝ exp((1 - β) b_A·v - β E_B(v, h))``, enumerated independently of the package."""
    table, V, _ = _brute.neg_energy_table(target.W, target.vbias, target.hbias)
    log_p = (beta * table + (1.0 - beta) * (V @ b_a)[:, None]).ravel()
    return np.exp(log_p - logsumexp(log_p))


def test_annealing_path_binds_its_options():
    path = annealing_path(P, **OPTIONS)
    assert isinstance(path, AnnealingPath)
    assert path.dtype == np.float32 and path.alpha == 1.0 and path.rule == LayerRule(1.0)
    np.testing.assert_allclose(path.base_vbias, base_rate_vbias(P, DATA, smoothing=0.01))
    assert annealing_path(P).rule is GIBBS
    with pytest.raises(ValueError, match="operator"):
        annealing_path(P, operator="metropolis")
    with pytest.raises(TypeError, match="RBMParams"):
        annealing_path("model")


@pytest.mark.parametrize(
    "run",
    [
        lambda x, **kw: ais(x, n_chains=20, n_steps=300, **kw),
        lambda x, **kw: bar(x, n_chains=20, n_steps=300, n_jobs=1, **kw),
        lambda x, **kw: rts(x, n_chains=10, n_sweeps=100, rounds=RTSRounds(n_rounds=2), start=StartOptions(n_pilot=100),
                            **_as_records(kw)),
        lambda x, **kw: sams(x, n_runs=4, n_sweeps=300, start=StartOptions(n_pilot=100), **_as_records(kw)),
    ],
    ids=["ais", "bar", "rts", "sams"],
)
def test_a_path_gives_the_run_of_its_options(run):
    """Draw for draw: the estimator on a path built once is the estimator on the model with the same options."""
    by_options = run(P, rng=4, **OPTIONS)
    by_path = run(annealing_path(P, **OPTIONS), rng=4)
    assert by_path.log_z == by_options.log_z
    assert by_path.diagnostics["operator"] == 1.0
    assert abs(by_path.log_z - log_partition_exact(P).log_z) < 6 * by_path.stderr + 0.1


def test_reverse_ais_takes_a_path():
    draws = sample_visible_exact(P, 30, rng=1)
    path = annealing_path(P, **OPTIONS)
    a = reverse_ais(path, draws, n_chains=20, schedule=300, rng=2)
    b = reverse_ais(P, draws, n_chains=20, schedule=300, rng=2, base_data=DATA, base_smoothing=0.01,
                    dtype=np.float32, operator="flip")
    assert a.log_z == b.log_z
    with pytest.raises(ValueError, match="base_data"):
        reverse_ais(path, draws, base_data=DATA)


def test_the_path_is_not_changed_by_the_estimators():
    path = annealing_path(P, **OPTIONS)
    W, b = path.W.copy(), path.base_vbias.copy()
    ais(path, n_chains=10, n_steps=50, rng=0)
    bar(path, n_chains=10, n_steps=50, rng=0, n_jobs=1)
    assert_array_equal(path.W, W)
    assert_array_equal(path.base_vbias, b)


@pytest.mark.parametrize("beta", [0.0, 0.3, 0.8, 1.0])
def test_path_logits_and_density_are_those_of_the_intermediate_rbm(beta):
    target = _model(6, 4, 2.0)
    b_a = np.linspace(-2, 2, 6)
    path = AnnealingPath(target, b_a)
    mid = path.intermediate(path.coefficients(beta))
    np.testing.assert_allclose(mid.W, beta * target.W, rtol=0, atol=1e-15)
    np.testing.assert_allclose(mid.vbias, (1 - beta) * b_a + beta * target.vbias, rtol=0, atol=1e-15)
    np.testing.assert_allclose(mid.hbias, beta * target.hbias, rtol=0, atol=1e-15)
    rng = np.random.default_rng(0)
    v = rng.integers(0, 2, (7, 6)).astype(float)
    h = rng.integers(0, 2, (7, 4)).astype(float)
    v, a, vb = path.start(v)
    coef = path.coefficients(beta)
    np.testing.assert_allclose(path.hidden_logits(a, coef), hidden_activation(v, mid), atol=1e-12)
    np.testing.assert_allclose(path.visible_logits(h, coef), visible_activation(h, mid), atol=1e-12)
    np.testing.assert_allclose(path.log_f(a, vb, coef), -free_energy(v, mid), atol=1e-12)
    # per chain: each chain at its own β gives the same numbers
    betas = np.linspace(0, 1, 7)
    per_chain = path.log_f(a, vb, path.coefficients(betas))
    for i, b in enumerate(betas):
        other = path.intermediate(path.coefficients(b))
        assert per_chain[i] == pytest.approx(float(-free_energy(v[i], other)), abs=1e-12)
    ladder = path.log_f_ladder(a, vb, path.coefficients(betas))
    np.testing.assert_allclose(ladder[np.arange(7), np.arange(7)], per_chain, atol=1e-12)
    # in blocks of chains (spread over threads) and of labels: the same numbers, to the bit
    for max_block in (1, 4, 9, 30, 10**9):
        np.testing.assert_array_equal(path.log_f_ladder(a, vb, path.coefficients(betas), max_block=max_block), ladder)
    # the base's partition function, and the target's at β = 1
    assert path.log_z_base == pytest.approx(log_partition_exact(path.intermediate(path.coefficients(0.0))).log_z)
    assert log_partition_exact(path.intermediate(path.coefficients(1.0))).log_z == pytest.approx(
        log_partition_exact(target).log_z
    )


@pytest.mark.parametrize("beta", [0.0, 0.3, 0.8, 1.0])
def test_a_base_with_hidden_fields_is_the_product_on_both_layers(beta):
    """``exp((1 - β)(b_A·v + c_A·h) - β E_B)``: the intermediate RBM, its logits, density and partition function."""
    target = _model(6, 4, 2.0)
    b_a, c_a = np.linspace(-2, 2, 6), np.array([0.7, -1.3, 2.1, -0.4])
    path = AnnealingPath(target, b_a, base_hbias=c_a)
    coef = path.coefficients(beta)
    mid = path.intermediate(coef)
    np.testing.assert_allclose(mid.hbias, beta * target.hbias + (1 - beta) * c_a, rtol=0, atol=1e-15)
    table, V, H = _brute.neg_energy_table(target.W, target.vbias, target.hbias)
    log_p = (beta * table + (1.0 - beta) * ((V @ b_a)[:, None] + (H @ c_a)[None, :])).ravel()
    np.testing.assert_allclose(joint_distribution(mid), np.exp(log_p - logsumexp(log_p)), rtol=0, atol=1e-14)
    rng = np.random.default_rng(0)
    v, a, vb = path.start(rng.integers(0, 2, (7, 6)).astype(float))
    h = rng.integers(0, 2, (7, 4)).astype(float)
    np.testing.assert_allclose(path.hidden_logits(a, coef), hidden_activation(v, mid), atol=1e-12)
    np.testing.assert_allclose(path.at(coef).hidden_logits(a), hidden_activation(v, mid), atol=1e-12)
    np.testing.assert_allclose(path.visible_logits(h, coef), visible_activation(h, mid), atol=1e-12)
    np.testing.assert_allclose(path.log_f(a, vb, coef), -free_energy(v, mid), atol=1e-12)
    betas = np.linspace(0, 1, 7)
    ladder = path.log_f_ladder(a, vb, path.coefficients(betas))
    for i, b in enumerate(betas):
        assert ladder[i, i] == pytest.approx(float(-free_energy(v[i], path.intermediate(path.coefficients(b)))),
                                             abs=1e-12)
    log_z0 = log_partition_exact(path.intermediate(path.coefficients(0.0))).log_z
    assert path.log_z_base == pytest.approx(log_z0)
    # at the base no model is on: what is left besides the offset is the visible units' normaliser
    assert log_z0 - path.log_offset(path.coefficients(0.0)) == pytest.approx(np.logaddexp(0.0, b_a).sum())
    assert path.log_offset(path.coefficients(0.5)) == 0.0


def test_a_base_with_hidden_fields_is_checked_and_refused_by_ais():
    target = _model(6, 4, 2.0)
    with pytest.raises(ValueError, match="base_hbias must be 4 finite"):
        AnnealingPath(target, np.zeros(6), base_hbias=np.zeros(3))
    with pytest.raises(ValueError, match="one model"):
        AnnealingPath([target, target], np.zeros(6), base_hbias=np.zeros(8))
    with pytest.raises(ValueError, match="zero field"):
        ais(AnnealingPath(target, np.zeros(6), base_hbias=np.ones(4)), n_chains=4, n_steps=10, rng=0)


@pytest.mark.parametrize("beta", [0.0, 0.25, 0.7, 1.0])
@pytest.mark.parametrize("operator", ["gibbs", "flip", 0.4])
def test_ais_transition_leaves_the_path_distribution_invariant_exactly(beta, operator):
    """``p_k T_k = p_k`` to 1e-12 for the intermediate RBM's sweep (h by Gibbs, then v by the operator)."""
    target = _model(4, 3, 2.0)
    b_a = np.array([1.5, -2.0, 0.5, 2.5])
    path = AnnealingPath(target, b_a)
    p = _path_joint(target, b_a, beta)
    mid = path.intermediate(path.coefficients(beta))
    np.testing.assert_allclose(joint_distribution(mid), p, rtol=0, atol=1e-14)
    kernel = "gibbs" if operator == "gibbs" else (1.0 if operator == "flip" else operator)
    t_h, _ = layer_matrices(mid, "gibbs")
    _, t_v = layer_matrices(mid, kernel)
    assert_stationary(p, t_h @ t_v, atol=1e-12)


@pytest.mark.parametrize("beta", [0.3, 0.7])
def test_tempering_the_target_alone_is_the_wrong_transition(beta):
    """The kernels' ``beta`` on the target samples exp(-β E_B): not p_k unless b_A = 0."""
    target = _model(4, 3, 2.0)
    b_a = np.array([1.5, -2.0, 0.5, 2.5])
    p = _path_joint(target, b_a, beta)
    t_h, t_v = layer_matrices(target, "gibbs", beta=beta)
    with pytest.raises(AssertionError, match="not stationary"):
        assert_stationary(p, t_h @ t_v, atol=1e-6)
    # ... and it is right exactly when the base has zero biases
    p0 = _path_joint(target, np.zeros(4), beta)
    assert_stationary(p0, t_h @ t_v, atol=1e-12)


@pytest.mark.parametrize("operator", ["gibbs", "flip"])
def test_path_sweep_follows_the_intermediate_rbms_matrix(operator):
    """The sampling code itself: visible-to-visible frequencies against the exact kernel, chains at several β."""
    target = _model(3, 2, 2.0)
    b_a = np.array([1.0, -1.5, 0.5])
    path = AnnealingPath(target, b_a, operator=operator)
    betas = np.array([0.2, 0.6, 1.0])
    n_draws = 4000
    V = _brute.all_states(3)
    rng = np.random.default_rng(5)
    for beta in betas:
        mid = path.intermediate(path.coefficients(beta))
        t_h, _ = layer_matrices(mid, "gibbs")
        _, t_v = layer_matrices(mid, "gibbs" if operator == "gibbs" else 1.0)
        T = (t_h @ t_v).reshape(8, 4, 8, 4)[:, 0].sum(axis=2)  # K[v, v'] from any h
        start = np.repeat(V, n_draws, axis=0)
        coef = path.coefficients(np.full(start.shape[0], beta))  # one β per chain
        v, a, _ = path.start(start)
        new, _, _ = path.sweep(rng, v, a, coef)
        idx = new @ np.array([4, 2, 1])
        counts = np.zeros((8, 8))
        np.add.at(counts, (np.repeat(np.arange(8), n_draws), idx.astype(int)), 1)
        assert_frequencies(counts, T)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_path_sweep_carries_activations(dtype):
    """``sweep(refresh=False)`` is the chain of ``refresh=True`` with activations equal to the full product."""
    p = _model(30, 10, 2.5)
    path = AnnealingPath(p, base_rate_vbias(p), dtype=dtype)
    assert path.W.flags.c_contiguous  # its rows are added to the activations
    coef = path.coefficients(np.linspace(0.6, 1.0, 25))  # one β per chain
    chains = []
    for refresh in (True, False):
        rng = np.random.default_rng(8)
        v, a, vb = path.start(path.sample_base(rng, 25))
        for _ in range(50):
            v, a, vb = path.sweep(rng, v, a, coef, refresh=refresh)
        chains.append((v, a, vb))
    (v1, a1, vb1), (v2, a2, vb2) = chains
    np.testing.assert_array_equal(v1, v2)
    np.testing.assert_array_equal(vb1, vb2)
    tol = 1e-12 if dtype == np.float64 else 2e-4
    np.testing.assert_allclose(a2, path.hidden_activation(v2), rtol=0, atol=tol)
    np.testing.assert_allclose(a1, path.hidden_activation(v1), rtol=0, atol=0)


# ------------------------------------------------------------ ±1 spins
def _spin_model(nv, nh, scale, seed=0):
    return RBMParams.random(nv, nh, scale=scale, rng=seed).to_spin()


def _spin_states(n):
    return np.array(list(itertools.product([-1.0, 1.0], repeat=n)))


def _spin_path_log_joint(spin, b_a, beta):
    """``log p*_β(v, h) = (1 - β) b_A·v - β E(v, h)`` of every spin state (rows v, columns h), by enumeration."""
    V, H = _spin_states(spin.n_visible), _spin_states(spin.n_hidden)
    return (1.0 - beta) * (V @ b_a)[:, None] + beta * (V @ spin.J @ H.T + (V @ spin.vfield)[:, None] + H @ spin.hfield)


@pytest.mark.parametrize("beta", [0.0, 0.3, 0.8, 1.0])
def test_spin_path_density_fields_and_base_are_those_of_the_intermediate_spin_rbm(beta):
    """A path to a ±1 spin RBM: its base, unnormalised marginals and fields against enumeration of the spins, exactly."""
    spin = _spin_model(5, 3, 1.5, seed=2)
    b_a = np.array([0.7, -1.2, 0.3, 2.0, -0.4])
    path = AnnealingPath(spin, b_a)
    assert path.visible_layer == SPIN and path.hidden_layer == SPIN
    log_joint = _spin_path_log_joint(spin, b_a, beta)
    V = _spin_states(5)
    v, a, vb = path.start(V)
    coef = path.coefficients(beta)
    np.testing.assert_allclose(path.log_f(a, vb, coef), logsumexp(log_joint, axis=1), rtol=0, atol=1e-12)
    np.testing.assert_allclose(path.log_f_ladder(a, vb, coef[None])[:, 0], path.log_f(a, vb, coef), rtol=0, atol=1e-12)
    assert path.log_z_base == pytest.approx(logsumexp(_spin_path_log_joint(spin, b_a, 0.0)), abs=1e-12)
    mid = path.intermediate(coef)
    assert isinstance(mid, SpinRBMParams)
    point = path.at(coef)
    H = _spin_states(3)
    np.testing.assert_allclose(point.hidden_logits(point.hidden_input(V)), beta * (V @ spin.J + spin.hfield), atol=1e-12)
    np.testing.assert_allclose(point.visible_logits(H), (1 - beta) * b_a + beta * (H @ spin.J.T + spin.vfield), atol=1e-12)
    # the binary formulas on spins would be another distribution: a negative control of the layer's log normaliser
    assert beta == 0.0 or not np.allclose(softplus_sum_(beta * a.copy()), logsumexp(log_joint, axis=1) - vb @ coef)


def test_spin_base_draws_are_exact():
    """The base's spins: +1 with probability sigmoid(2 b_A), every value in {-1, +1}."""
    spin = _spin_model(4, 2, 1.0)
    b_a = np.array([1.0, -0.5, 0.0, 2.0])
    path = AnnealingPath(spin, b_a)
    draws = path.sample_base(np.random.default_rng(0), 20000)
    assert set(np.unique(draws)) == {-1.0, 1.0}
    p_up = 1.0 / (1.0 + np.exp(-2.0 * b_a))
    counts = np.stack([(draws == -1).sum(axis=0), (draws == 1).sum(axis=0)], axis=1)
    assert_frequencies(counts, np.stack([1 - p_up, p_up], axis=1))


@pytest.mark.parametrize("beta", [0.0, 0.5, 1.0])
def test_spin_path_sweep_is_the_exact_kernel_and_leaves_the_path_invariant(beta):
    """The path's Gibbs sweep on spins against its kernel built by enumeration: ``p K = p`` exactly, and the
    sampling code's visible-to-visible frequencies follow ``K``."""
    spin = _spin_model(3, 2, 1.5, seed=4)
    b_a = np.array([0.8, -1.0, 0.3])
    path = AnnealingPath(spin, b_a)
    V, H = _spin_states(3), _spin_states(2)
    # K[v, v'] = Σ_h p(h | v) p(v' | h), each spin +1 with probability sigmoid(2 × its field)
    def cond(states, fields):  # p(states | fields) of independent spins: rows of fields, columns of states
        return np.exp((states[None, :, :] * fields[:, None, :] - np.logaddexp(fields, -fields)[:, None, :]).sum(-1))

    p_h = cond(H, beta * (V @ spin.J + spin.hfield))
    p_v = cond(V, (1 - beta) * b_a + beta * (H @ spin.J.T + spin.vfield))
    K = p_h @ p_v
    p = np.exp(logsumexp(_spin_path_log_joint(spin, b_a, beta), axis=1))
    p /= p.sum()
    assert_stationary(p, K, atol=1e-12)
    n_draws = 3000
    start = np.repeat(V, n_draws, axis=0)
    v, a, _ = path.start(start)
    new, _, _ = path.sweep(np.random.default_rng(6), v, a, path.coefficients(beta))
    idx = ((new + 1) / 2) @ np.array([4, 2, 1])
    counts = np.zeros((8, 8))
    np.add.at(counts, (np.repeat(np.arange(8), n_draws), idx.astype(int)), 1)
    assert_frequencies(counts, K)


def test_a_path_refuses_models_of_different_layer_types():
    with pytest.raises(TypeError, match="same layer types"):
        AnnealingPath([_model(4, 2, 1.0), _spin_model(4, 2, 1.0)], np.zeros(4))

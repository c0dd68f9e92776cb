"""The target record ``FieldTarget``: its energy, its swap ratio and the sweep on it, on enumerable RBMs.

The record's density is checked against the tempered, field-tilted joint
written out here by enumeration; the sweep's exact matrix is built from the
record's own logits (and equals the harness matrix without fields), shown
to leave that joint invariant, and the sampling code is checked against its
rows. A sweep that ignores the visible field is the negative control.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import logsumexp

from pymc_rbm import RBMParams, SpinRBMParams
from pymc_rbm import testing as ht
from pymc_rbm.energy import energy as rbm_energy_reference
from pymc_rbm.enumeration import binary_states
from pymc_rbm.kernels import RBMState, init_state
from pymc_rbm.kernels import target as tg
from pymc_rbm.kernels.flip import flip_probability, stay_probability
from pymc_rbm.kernels.layer import GIBBS, LayerRule
from pymc_rbm.kernels.sweep import at_beta, sweep
from pymc_rbm.kernels.target import FieldTarget
from pymc_rbm.kernels.tempering import TemperedState
from pymc_rbm.kernels.tempering import swap_log_ratio as pt_swap_log_ratio
from pymc_rbm.testing.matrices import gibbs_change_probability

PARAMS = RBMParams.random(3, 2, scale=2.0, rng=4)
PHI = np.array([1.5, -2.0, 0.7])  # visible field
PSI = np.array([-1.2, 0.9])  # hidden field
RULES = {"gibbs": GIBBS, "flip": LayerRule(1.0), "alpha0.5": LayerRule(0.5)}


def tilted_joint(params, beta, phi=0.0, psi=0.0):
    """``p(v, h) ∝ exp(β (v·vbias + h·hbias + v·W·h) + v·φ + h·ψ)`` by enumeration, in the harness order."""
    v, h = ht.joint_states(params.n_visible, params.n_hidden)
    log_w = beta * (v @ params.vbias + h @ params.hbias + np.einsum("ki,ij,kj->k", v, params.W, h))
    log_w = log_w + v @ (np.zeros(params.n_visible) + phi) + h @ (np.zeros(params.n_hidden) + psi)
    return np.exp(log_w - logsumexp(log_w))


def unit_probabilities(rule, x, logit):
    """``P(x' | x)`` of a layer for every candidate state, units independent, shape (rows, 2**n)."""
    if rule.gibbs:
        q, stay = gibbs_change_probability(x, logit), gibbs_change_probability(x == 0, logit)
    else:
        q, stay = flip_probability(x, logit, rule.alpha), stay_probability(x, logit, rule.alpha)
    change = (x[:, None, :] != 0) != (binary_states(x.shape[1]) != 0)[None, :, :]
    return np.where(change, q[:, None, :], stay[:, None, :]).prod(axis=-1)


def record_matrix(target, n_visible, n_hidden, rule) -> np.ndarray:
    """The exact matrix of one sweep ``T_h T_v`` on ``target``, from the target's own logits."""
    v, h = ht.joint_states(n_visible, n_hidden)
    kv, kh = 2**n_visible, 2**n_hidden
    p_h = unit_probabilities(rule, h, target.hidden_logits(target.hidden_input(v))).reshape(kv, kh, kh)
    p_v = unit_probabilities(rule, v, target.visible_logits(h)).reshape(kv, kh, kv)
    return (p_h[:, :, None, :] * p_v.transpose(0, 2, 1)[:, None, :, :]).reshape(kv * kh, kv * kh)


def tilted(beta=0.6):
    return FieldTarget.at_beta(PARAMS, beta)._replace(visible_field=PHI, hidden_field=PSI)


class IgnoresTheVisibleField(FieldTarget):
    """Negative control: the visible logits without ``φ``."""

    def visible_logits(self, h):
        return tg.visible_logits(self._replace(visible_field=0.0), h)


# ------------------------------------------------------------------ energy and density
def test_energy_is_the_rbm_energy_at_beta_one():
    v, h = ht.joint_states(3, 2)
    target = FieldTarget.at_beta(PARAMS)
    assert_allclose(target.energy(v, h), rbm_energy_reference(v, h, PARAMS), rtol=0, atol=1e-12)
    assert_allclose(tg.rbm_energy(target, v, h), rbm_energy_reference(v, h, PARAMS), rtol=0, atol=1e-12)


@pytest.mark.parametrize("beta", [1.0, 0.6, 0.0])
def test_exp_minus_energy_is_the_tempered_tilted_joint(beta):
    v, h = ht.joint_states(3, 2)
    target = tilted(beta)
    u = target.energy(v, h)
    assert_allclose(u, beta * rbm_energy_reference(v, h, PARAMS) - v @ PHI - h @ PSI, rtol=0, atol=1e-12)
    assert_allclose(np.exp(-u - logsumexp(-u)), tilted_joint(PARAMS, beta, PHI, PSI), rtol=1e-12, atol=0)


def test_per_chain_beta_gives_one_energy_per_chain():
    v, h = ht.joint_states(3, 2)
    betas = np.linspace(0.0, 1.0, v.shape[0])
    target = FieldTarget.at_beta(PARAMS, betas, v.shape[0])._replace(visible_field=PHI)
    assert target.beta.shape == (v.shape[0], 1)
    want = betas * rbm_energy_reference(v, h, PARAMS) - v @ PHI
    assert_allclose(target.energy(v, h), want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("beta", [0.0, 0.3, 1.0])
def test_the_annealing_point_is_the_path_between_base_and_rbm(beta):
    b_a = np.array([0.4, -1.0, 2.0])
    v, h = ht.joint_states(3, 2)
    point = FieldTarget.on_path(PARAMS, b_a, beta)
    u = point.energy(v, h)
    p = np.exp(-u - logsumexp(-u))
    # the RBM at β tilted by (1 - β) b_A: the same density
    assert_allclose(p, tilted_joint(PARAMS, beta, (1.0 - beta) * b_a), rtol=1e-12, atol=0)
    # ... and the same logits, up to rounding
    other = FieldTarget.at_beta(PARAMS, beta)._replace(visible_field=(1.0 - beta) * b_a)
    assert_allclose(point.visible_logits(h), other.visible_logits(h), rtol=0, atol=1e-12)
    if beta == 0.0:  # the base-rate model: independent visible units, uniform hidden units
        base = np.exp(v @ b_a - np.logaddexp(0.0, b_a).sum() - 2 * np.log(2.0))
        assert_allclose(p, base, rtol=1e-12, atol=0)
    if beta == 1.0:
        assert_allclose(p, ht.joint_distribution(PARAMS), rtol=1e-12, atol=0)


def test_constructors_validate():
    with pytest.raises(ValueError, match="beta"):
        FieldTarget.at_beta(PARAMS, -0.5)
    with pytest.raises(ValueError, match="beta"):
        FieldTarget.at_beta(PARAMS, np.ones(3), 4)
    with pytest.raises(ValueError, match="base_vbias"):
        FieldTarget.on_path(PARAMS, np.zeros(2), 0.5)
    with pytest.raises(TypeError, match="Bernoulli"):
        FieldTarget.at_beta(SpinRBMParams(PARAMS.W, PARAMS.vbias, PARAMS.hbias))
    assert FieldTarget.at_beta(PARAMS).beta == 1.0


# ------------------------------------------------------------------ swaps
def _pairs_of_states(seed, n=50):
    rng = np.random.default_rng(seed)
    return [(rng.integers(0, 2, (n, 3)).astype(float), rng.integers(0, 2, (n, 2)).astype(float)) for _ in range(2)]


def test_swap_log_ratio_is_the_ratio_of_the_enumerated_product():
    """``U_a(x_a) + U_b(x_b) - U_a(x_b) - U_b(x_a) = log p_a(x_b) p_b(x_a) / p_a(x_a) p_b(x_b)``."""
    t_a = tilted(0.3)
    t_b = FieldTarget.on_path(PARAMS, np.array([0.4, -1.0, 2.0]), 0.8)._replace(hidden_field=-PSI)
    v, h = ht.joint_states(3, 2)
    log_pa, log_pb = (np.log(np.exp(-t.energy(v, h) - logsumexp(-t.energy(v, h)))) for t in (t_a, t_b))
    i, j = np.meshgrid(np.arange(v.shape[0]), np.arange(v.shape[0]), indexing="ij")
    i, j = i.ravel(), j.ravel()
    got = tg.swap_log_ratio(t_a, t_b, (v[i], h[i]), (v[j], h[j]))
    assert_allclose(got, log_pa[j] + log_pb[i] - log_pa[i] - log_pb[j], rtol=0, atol=1e-10)


def test_a_beta_ladder_without_fields_gives_the_tempering_ratio():
    (va, ha), (vb, hb) = _pairs_of_states(1)
    t_a, t_b = FieldTarget.at_beta(PARAMS, 0.25), FieldTarget.at_beta(PARAMS, 0.9)
    want = (0.9 - 0.25) * (rbm_energy_reference(vb, hb, PARAMS) - rbm_energy_reference(va, ha, PARAMS))
    assert_allclose(tg.swap_log_ratio(t_a, t_b, (va, ha), (vb, hb)), want, rtol=0, atol=1e-12)


def test_ladder_log_ratio_is_the_swap_ratio_of_neighbouring_rungs():
    rng = np.random.default_rng(2)
    t, n = 4, 30
    betas = np.array([0.0, 0.3, 0.7, 1.0])
    phi = rng.normal(size=(t, 1, 3))
    psi = rng.normal(size=(t, n, 2))
    ladder = FieldTarget(PARAMS.W, PARAMS.vbias, PARAMS.hbias, betas[:, None, None], phi, psi)
    v = rng.integers(0, 2, (t, n, 3)).astype(float)
    h = rng.integers(0, 2, (t, n, 2)).astype(float)
    got = tg.ladder_log_ratio(ladder, v, h)
    assert got.shape == (t - 1, n)
    for r in range(t - 1):
        rung = [FieldTarget(PARAMS.W, PARAMS.vbias, PARAMS.hbias, betas[s], phi[s], psi[s]) for s in (r, r + 1)]
        assert_allclose(got[r], tg.swap_log_ratio(*rung, (v[r], h[r]), (v[r + 1], h[r + 1])), rtol=0, atol=1e-12)
    # fields shared by every rung (no rung axis) drop out
    shared = ladder._replace(visible_field=PHI, hidden_field=PSI)
    plain = ladder._replace(visible_field=0.0, hidden_field=0.0)
    assert_allclose(tg.ladder_log_ratio(shared, v, h), tg.ladder_log_ratio(plain, v, h), rtol=0, atol=1e-12)


def test_parallel_temperings_swap_ratio_is_the_records():
    rng = np.random.default_rng(3)
    betas = np.array([0.1, 0.5, 0.8, 1.0])
    state = TemperedState(rng.integers(0, 2, (4, 20, 3)).astype(float), rng.integers(0, 2, (4, 20, 2)).astype(float))
    ladder = tg.tempered(PARAMS.W, PARAMS.vbias, PARAMS.hbias, betas[:, None, None])
    assert_allclose(pt_swap_log_ratio(state, PARAMS, betas), tg.ladder_log_ratio(ladder, state.v, state.h),
                    rtol=0, atol=1e-12)


# ------------------------------------------------------------------ the sweep on the record
@pytest.mark.parametrize("rule", RULES.values(), ids=RULES.keys())
def test_without_fields_the_records_matrix_is_the_harness_matrix(rule):
    kind = "gibbs" if rule.gibbs else rule.alpha
    T = record_matrix(FieldTarget.at_beta(PARAMS, 0.6), 3, 2, rule)
    assert_allclose(T, ht.transition_matrix(PARAMS, kind, 0.6), rtol=0, atol=1e-12)


@pytest.mark.parametrize("rule", RULES.values(), ids=RULES.keys())
def test_a_sweep_on_the_record_leaves_the_tilted_joint_invariant(rule):
    target = tilted()
    T = record_matrix(target, 3, 2, rule)
    p = tilted_joint(PARAMS, 0.6, PHI, PSI)
    ht.assert_stationary(p, T)
    assert ht.is_irreducible(T)

    def kernel(rng, s):
        return sweep(rng, s, target, rule)

    ht.empirical_transition_check(kernel, T, 3, 2, n_draws=2000, rng=3)


def test_a_sweep_that_ignores_the_visible_field_is_caught():
    """Negative control: without ``φ`` in the visible logits the matrix moves p, and the draws leave its rows."""
    good, bad = tilted(), IgnoresTheVisibleField(*tilted())
    p = tilted_joint(PARAMS, 0.6, PHI, PSI)
    with pytest.raises(AssertionError, match="not stationary"):
        ht.assert_stationary(p, record_matrix(bad, 3, 2, GIBBS))
    T = record_matrix(good, 3, 2, GIBBS)

    def kernel(rng, s):
        return sweep(rng, s, bad, GIBBS)

    with pytest.raises(AssertionError):
        ht.empirical_transition_check(kernel, T, 3, 2, n_draws=2000, rng=3)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("beta", [None, 0.4, "per_chain"])
@pytest.mark.parametrize("rule", RULES.values(), ids=RULES.keys())
def test_the_record_at_beta_is_rbm_at_beta_draw_for_draw(rule, beta, dtype):
    params = RBMParams.random(30, 12, scale=1.5, rng=5).astype(dtype)
    rng = np.random.default_rng(0)
    n = 40
    b = np.linspace(0.05, 1.0, n) if beta == "per_chain" else beta
    old, new = at_beta(params, b, n), FieldTarget.at_beta(params, b, n)
    state = init_state(rng, rng.integers(0, 2, (n, 30)), params)
    a, b_ = state, state
    carried_a = carried_b = RBMState(state.v, state.h, old.hidden_input(state.v))
    for t in range(25):
        a, ia = sweep(np.random.default_rng(t), a, old, rule)
        b_, ib = sweep(np.random.default_rng(t), b_, new, rule)
        carried_a, _ = sweep(np.random.default_rng(100 + t), carried_a, old, rule, refresh=t % 8 == 0)
        carried_b, _ = sweep(np.random.default_rng(100 + t), carried_b, new, rule, refresh=t % 8 == 0)
    for x, y in ((a.v, b_.v), (a.h, b_.h), (ia.n_changed, ib.n_changed), (ia.n_hidden_changed, ib.n_hidden_changed),
                 (carried_a.v, carried_b.v), (carried_a.h, carried_b.h),
                 (carried_a.hidden_input, carried_b.hidden_input)):
        assert_array_equal(x, y)
    assert a.v.dtype == b_.v.dtype
    assert old.visible_logits(a.h).dtype == new.visible_logits(a.h).dtype
    assert old.hidden_logits(old.hidden_input(a.v)).dtype == new.hidden_logits(new.hidden_input(a.v)).dtype
    # an unknown hidden state is a Gibbs draw on both
    fresh_a, _ = sweep(np.random.default_rng(9), RBMState(a.v, None), old, rule)
    fresh_b, _ = sweep(np.random.default_rng(9), RBMState(a.v, None), new, rule)
    assert_array_equal(fresh_a.v, fresh_b.v)
    assert_array_equal(fresh_a.h, fresh_b.h)

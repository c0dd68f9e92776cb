"""Tests of pymc_rbm.testing.matrices: the transition matrices against brute-force loops."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from numpy.testing import assert_allclose

from pymc_rbm import RBMParams
from pymc_rbm import testing as ht


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

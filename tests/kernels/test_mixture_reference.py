"""The ladder from a mixture of products: each move leaves ``Π_r p_{β_r}(v, h, z)`` exactly invariant.

A replica's state is ``(v, h, z)`` of a tiny RBM (2 visible, 1 hidden) and a
two-component mixture: 16 states, 256 for two replicas. The matrices are built
from the package's own formulas (the labels' conditional from
:meth:`ProductMixture.label_log_weights`, the layers' logits from
:class:`MixturePoint`, the swap ratio from :func:`swap_log_ratio`), the target from the definition
``exp(-β E) [w_z q_z]^(1 - β)``. The negative control is the likely slip: a
swap ratio from the components' fields without their weights and normalisers.
"""

import itertools

import numpy as np
import pytest

from pymc_rbm import RBMParams
from pymc_rbm.energy import energy
from pymc_rbm.kernels.mixture_reference import ProductMixture, swap_log_ratio
from pymc_rbm.kernels.sweep import sweep
from pymc_rbm.kernels.state import RBMState
from pymc_rbm.testing import assert_frequencies, assert_stationary

PARAMS = RBMParams(np.array([[2.5], [-3.0]]), np.array([0.7, -1.2]), np.array([1.5]))
MIXTURE = ProductMixture.from_probabilities([[0.9, 0.2], [0.1, 0.7]], [[0.8], [0.3]], [0.3, 0.7])
# one replica's states (v0, v1, h, z), z slowest
STATES = np.array([(v0, v1, h, z) for z in (0, 1) for v0, v1, h in itertools.product((0.0, 1.0), repeat=3)])
V, H, Z = STATES[:, :2], STATES[:, 2:3], STATES[:, 3].astype(np.int64)
N = len(STATES)


def target(beta):
    """``p_β(v, h, z) ∝ exp(-β E(v, h)) [w_z q_z(v, h)]^(1 - β)`` from the definition."""
    m_v = 1 / (1 + np.exp(-MIXTURE.visible_logits[Z]))
    m_h = 1 / (1 + np.exp(-MIXTURE.hidden_logits[Z]))
    q = np.prod(np.where(V == 1, m_v, 1 - m_v), axis=1) * np.prod(np.where(H == 1, m_h, 1 - m_h), axis=1)
    log_p = -beta * energy(V, H, PARAMS) + (1 - beta) * np.log(np.exp(MIXTURE.log_weights[Z]) * q)
    p = np.exp(log_p - log_p.max())
    return p / p.sum()


def index(v, h, z):
    return int(z * 8 + v[0] * 4 + v[1] * 2 + h[0])


def label_matrix(beta):
    """``z ~ p_β(z | v, h)``, from the package's label weights."""
    lw = (1 - beta) * MIXTURE.label_log_weights(V, H)
    p = np.exp(lw - lw.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    T = np.zeros((N, N))
    for s in range(N):
        for z in (0, 1):
            T[s, index(V[s], H[s], z)] += p[s, z]
    return T


def sweep_matrix(beta):
    """Gibbs ``h | v, z`` then ``v | h, z`` at the logits of :class:`MixturePoint`."""
    point = MIXTURE.at(PARAMS, np.full(N, beta), Z)
    ph = 1 / (1 + np.exp(-point.hidden_logits(point.hidden_input(V))))  # (N, 1)
    T_h = np.zeros((N, N))
    for s in range(N):
        for h in (0.0, 1.0):
            T_h[s, index(V[s], [h], Z[s])] += ph[s, 0] if h else 1 - ph[s, 0]
    pv = 1 / (1 + np.exp(-point.visible_logits(H)))  # (N, 2)
    T_v = np.zeros((N, N))
    for s in range(N):
        for v in itertools.product((0.0, 1.0), repeat=2):
            T_v[s, index(v, H[s], Z[s])] += np.prod(np.where(np.array(v) == 1, pv[s], 1 - pv[s]))
    return T_h @ T_v


def swap_matrix(betas, *, normalised=True):
    """Exchange the two replicas' ``(v, h)``, each label staying at its rung (the next round redraws it), accepted
    with the package's ratio with the labels summed out; ``normalised=False``: the components' fields alone
    (``v·f_z + h·g_z``) in place of ``log w_z + log q_z``, without weights and normalisers."""
    e = energy(V, H, PARAMS)
    if normalised:
        ell = MIXTURE.label_log_weights(V, H)
    else:
        ell = V @ MIXTURE.visible_logits.T + H @ MIXTURE.hidden_logits.T
    T = np.zeros((N * N, N * N))
    for a in range(N):
        for b in range(N):
            la = swap_log_ratio(np.asarray(betas), np.array([[e[a]], [e[b]]]), ell[[a, b]][:, None, :])[0, 0]
            acc = min(1.0, np.exp(la))
            a2, b2 = index(V[b], H[b], Z[a]), index(V[a], H[a], Z[b])
            T[a * N + b, a2 * N + b2] += acc
            T[a * N + b, a * N + b] += 1 - acc
    return T


def marginal_target(beta):
    """``p_β(v, h)``, the labels summed out, on the states of label 0 (the first 8)."""
    p = target(beta)
    return p[:8] + p[8:]


@pytest.mark.parametrize("beta", [0.0, 0.4, 1.0])
def test_labels_and_sweeps_leave_each_rung_invariant(beta):
    p = target(beta)
    assert_stationary(p, label_matrix(beta), atol=1e-13)
    assert_stationary(p, sweep_matrix(beta), atol=1e-13)


@pytest.mark.parametrize("betas", [(0.0, 0.55), (0.3, 1.0)])
def test_a_round_leaves_the_product_of_rungs_invariant(betas):
    """Labels, sweeps, then the swap of ``(v, h)`` and the labels redrawn: the swap alone keeps the marginals."""
    p = np.kron(target(betas[0]), target(betas[1]))
    labels = np.kron(label_matrix(betas[0]), label_matrix(betas[1]))
    sweeps = np.kron(sweep_matrix(betas[0]), sweep_matrix(betas[1]))
    swap = swap_matrix(betas)
    assert_stationary(p, labels @ sweeps, atol=1e-13)
    assert_stationary(p, swap @ labels, atol=1e-13)
    assert_stationary(p, labels @ sweeps @ swap @ labels, atol=1e-13)
    # the swap alone: the product of the marginals in (v, h) (joint states of label 0 stand for their (v, h))
    fold = np.zeros((N * N, 64))
    for a in range(N):
        for b in range(N):
            fold[a * N + b, (a % 8) * 8 + b % 8] = 1.0
    marginal = np.kron(marginal_target(betas[0]), marginal_target(betas[1]))
    assert np.abs(p @ swap @ fold - marginal).max() < 1e-13


def test_a_swap_without_the_components_normalisers_is_caught():
    betas = (0.3, 0.8)
    p = np.kron(target(betas[0]), target(betas[1]))
    labels = np.kron(label_matrix(betas[0]), label_matrix(betas[1]))
    with pytest.raises(AssertionError):
        assert_stationary(p, swap_matrix(betas, normalised=False) @ labels, atol=1e-6)


def test_drawn_labels_follow_their_conditional():
    rng = np.random.default_rng(3)
    beta = 0.35
    s = 5  # one state, drawn many times
    lw = (1 - beta) * MIXTURE.label_log_weights(V[s : s + 1], H[s : s + 1])[0]
    probs = np.exp(lw - lw.max())
    probs /= probs.sum()
    n = 40_000
    z = MIXTURE.draw_labels(rng, np.repeat(V[s : s + 1], n, 0), np.repeat(H[s : s + 1], n, 0), np.full(n, beta))
    assert_frequencies(np.bincount(z, minlength=2), probs)


def test_the_sweep_kernel_draws_the_mixture_points_conditionals():
    # sampling through the package's sweep at a MixturePoint agrees with the matrix row
    rng = np.random.default_rng(4)
    beta, s, n = 0.45, 9, 40_000
    point = MIXTURE.at(PARAMS, np.full(n, beta), np.full(n, Z[s]))
    state = RBMState(np.repeat(V[s : s + 1], n, 0), np.repeat(H[s : s + 1], n, 0))
    new, _ = sweep(rng, state, point)
    idx = (Z[s] * 8 + new.v[:, 0] * 4 + new.v[:, 1] * 2 + new.h[:, 0]).astype(int)
    assert_frequencies(np.bincount(idx, minlength=N), sweep_matrix(beta)[s])


def test_label_weights_are_normalised_and_components_sample_their_products():
    assert np.isclose(np.exp(MIXTURE.label_log_weights(V, H)[np.arange(N), Z]).sum(), 1.0, rtol=0, atol=1e-14)
    v, h = MIXTURE.sample(np.random.default_rng(5), np.ones(20_000, dtype=np.int64))
    assert np.allclose(v.mean(0), [0.1, 0.7], atol=0.015) and np.allclose(h.mean(0), [0.3], atol=0.015)


def test_bad_components_are_refused():
    with pytest.raises(ValueError, match="same number of components"):
        ProductMixture.from_probabilities(np.full((2, 3), 0.5), np.full((3, 2), 0.5))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        ProductMixture.from_probabilities(np.full((2, 3), 1.5), np.full((2, 2), 0.5))
    with pytest.raises(ValueError, match="positive"):
        ProductMixture.from_probabilities(np.full((2, 3), 0.5), np.full((2, 2), 0.5), [1.0, 0.0])
    with pytest.raises(ValueError, match="clip"):
        ProductMixture.from_probabilities(np.full((2, 3), 0.5), np.full((2, 2), 0.5), clip=0.0)
    with pytest.raises(ValueError, match="must agree"):
        ProductMixture(np.zeros((2, 3)), np.zeros((2, 2)), np.log([0.5, 0.25, 0.25]))


def test_a_mixture_keeps_read_only_copies_of_its_arrays():
    f, g, lw = np.zeros((2, 3)), np.ones((2, 2)), np.log([0.25, 0.75])
    m = ProductMixture(f, g, lw)
    f[0, 0] = g[0, 0] = 5.0  # the caller's arrays change; the mixture's weights do not
    assert np.allclose(np.exp(m.label_log_weights(np.zeros((1, 3)), np.zeros((1, 2)))),
                       [0.25 / 8 / (1 + np.e) ** 2, 0.75 / 8 / (1 + np.e) ** 2], rtol=1e-14, atol=0)
    with pytest.raises(ValueError, match="read-only"):
        m.visible_logits[0, 0] = 1.0


def test_the_swap_ratio_of_a_round_s_pairs_is_that_of_every_pair():
    """``pairs``: the rows of the pairs asked for, the same values as with every pair, NaN elsewhere."""
    rng = np.random.default_rng(0)
    betas = np.array([0.0, 0.3, 0.7, 0.9, 1.0])
    states = rng.integers(0, N, size=(5, 3))
    e = energy(V, H, PARAMS)[states]
    ell = MIXTURE.label_log_weights(V, H)[states]
    every = swap_log_ratio(betas, e, ell)
    for parity in (0, 1):
        pairs = np.arange(parity, 4, 2)
        got = swap_log_ratio(betas, e, ell, pairs)
        np.testing.assert_array_equal(got[pairs], every[pairs])
        assert np.isnan(np.delete(got, pairs, axis=0)).all()


def test_labels_drawn_from_given_label_weights_are_those_drawn_from_the_states():
    beta = np.linspace(0.0, 1.0, N)
    ell = MIXTURE.label_log_weights(V, H)
    a = MIXTURE.draw_labels(np.random.default_rng(1), V, H, beta)
    b = MIXTURE.draw_labels(np.random.default_rng(1), V[:0], H[:0], beta, label_log_weights=ell)
    np.testing.assert_array_equal(a, b)

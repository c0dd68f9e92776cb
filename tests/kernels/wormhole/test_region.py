"""Tests of pymc_rbm.kernels.wormhole.region: the overlap rule, the maps between regions, fitted regions."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from pymc_rbm.datasets import artificial_mode_prototypes, artificial_modes
from pymc_rbm.estimators import binary_states
from pymc_rbm.kernels import RegionWormholes
from pymc_rbm.testing import assert_frequencies, assert_stationary

from ._moves import MEANS, N_VISIBLE, ZeroRatio, continuous_region_moves, overlapping_regions, wormhole_matrix


def test_overlap_rule_is_needed(rbm):
    """Without eq. (9)'s n(x) / n(x') the overlapping balls break invariance."""
    params, log_p = rbm
    moves = overlapping_regions()
    counts = moves.membership(binary_states(N_VISIBLE)).sum(axis=1)
    assert counts.max() == 2 and (counts == 0).any()  # overlap, and states outside every region
    T = wormhole_matrix(ZeroRatio(moves), log_p, N_VISIBLE)
    with pytest.raises(AssertionError):
        assert_stationary(np.exp(log_p), T, atol=1e-6)


def test_region_map_keeps_the_distance_to_the_centre_and_is_its_own_inverse():
    moves = overlapping_regions()
    x = binary_states(N_VISIBLE)
    k = moves.n_regions
    i, j = np.meshgrid(np.arange(k), np.arange(k))
    for a, b in zip(i.ravel(), j.ravel()):
        ia, jb = np.full(x.shape[0], a), np.full(x.shape[0], b)
        y = moves.map(x, ia, jb)
        assert_array_equal(np.abs(y - moves.centres[b]).sum(1), np.abs(x - moves.centres[a]).sum(1))
        assert_array_equal(moves.map(y, jb, ia), x)


def test_binary_regions_never_target_the_departure_region():
    moves = overlapping_regions()
    x = np.repeat(binary_states(N_VISIBLE), 20, axis=0)
    prop = moves.propose(np.random.default_rng(0), x)
    inside = moves.membership(x).any(axis=1)
    assert prop.region_changed[inside].all() and not prop.region_changed[~inside].any()
    assert_array_equal(prop.x[~inside], x[~inside])


def test_default_radius_gives_disjoint_balls():
    moves = RegionWormholes(artificial_mode_prototypes(), binary=True)
    assert moves.radius == 3  # prototypes are at least 8 apart
    x = np.random.default_rng(0).integers(0, 2, (5000, 16))
    assert moves.membership(x).sum(axis=1).max() <= 1


def test_regions_fitted_to_the_artificial_modes():
    """The Bernoulli mixture's rounded means are the four prototypes (the EM itself: tests/test_mixtures.py)."""
    data = artificial_modes(400, p_flip=0.01, rng=0)
    moves = RegionWormholes.fit(data, 4, binary=True, rng=1)
    found = {tuple(c) for c in moves.centres.astype(int)}
    assert found == {tuple(c) for c in artificial_mode_prototypes().astype(int)}


def test_eq8_map_is_an_involution_pair_with_the_volume_ratio_as_jacobian():
    moves = continuous_region_moves()
    rng = np.random.default_rng(0)
    x = rng.normal(size=(7, 2))
    for a in range(3):
        for b in range(3):
            i, j = np.full(7, a), np.full(7, b)
            y = moves.map(x, i, j)
            assert_allclose(moves.map(y, j, i), x, atol=1e-12)
            jac = moves._A[b] @ moves._A_inv[a]
            assert_allclose(abs(np.linalg.det(jac)), np.exp(moves.log_volumes[b] - moves.log_volumes[a]), rtol=1e-10)
            # Mahalanobis radius kept: membership of region a at x equals membership of b at y
            assert_array_equal(moves.membership(x)[:, a], moves.membership(y)[:, b])
    assert_allclose(moves.map(x, np.zeros(7, int), np.zeros(7, int)), 2 * MEANS[0] - x)  # the minus sign


def test_target_region_drawn_in_proportion_to_volume():
    moves = continuous_region_moves()
    x = np.repeat(MEANS[:1], 40_000, axis=0)  # inside regions 0 and 2
    y = moves.propose(np.random.default_rng(5), x).x
    arrived = np.argmin(np.stack([np.abs(y - moves.map(x, np.full(len(x), i), np.full(len(x), j))).sum(1)
                                  for i in (0, 2) for j in range(3)]), axis=0) % 3
    probs = np.exp(moves.log_volumes - np.logaddexp.reduce(moves.log_volumes))
    assert_frequencies(np.bincount(arrived, minlength=3), probs)

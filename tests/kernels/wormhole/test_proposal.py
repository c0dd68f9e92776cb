"""Tests of pymc_rbm.kernels.wormhole.proposal: what moves propose, and the input checks they share.

A move's sampled proposals must follow its own listing (``proposal_distribution``),
its inputs are never modified, and bad input gets a clear error.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from pymc_rbm.estimators import binary_states
from pymc_rbm.kernels import OptimizationWormholes, PointWormholes, RegionWormholes, wormhole_step
from pymc_rbm.testing import assert_frequencies, state_index

from ._moves import (
    N_VISIBLE,
    mixture_draws,
    mixture_logpdf_and_grad,
    overlapping_regions,
    point_moves,
    proposal_matrix,
    run_from_every_state,
)


@pytest.mark.parametrize("make", [point_moves, overlapping_regions], ids=["point", "region"])
def test_propose_follows_the_proposal_matrix(make):
    moves = make()
    Q = proposal_matrix(moves, N_VISIBLE)
    assert_allclose(Q.sum(axis=1), 1.0, atol=1e-14)
    counts = run_from_every_state(lambda rng, x: moves.propose(rng, x).x, N_VISIBLE, 3000, seed=1)
    assert_frequencies(counts, Q)


@pytest.mark.parametrize("make", [point_moves, overlapping_regions], ids=["point", "region"])
def test_sampled_log_q_ratio_matches_the_matrix(make):
    moves = make()
    Q = proposal_matrix(moves, N_VISIBLE)
    x = binary_states(N_VISIBLE).astype(np.int64)
    x = np.repeat(x, 50, axis=0)
    prop = moves.propose(np.random.default_rng(2), x)
    a, b = state_index(x), state_index(prop.x)
    moved = a != b
    assert moved.any()
    assert_allclose(prop.log_q_ratio[moved], (np.log(Q[b, a]) - np.log(Q[a, b]))[moved], atol=1e-12)
    assert_array_equal(prop.log_q_ratio[~moved], 0.0)


def test_inputs_are_never_modified():
    data = mixture_draws(30, 0)
    x = mixture_draws(10, 1)
    data.setflags(write=False)
    x.setflags(write=False)
    for moves in [PointWormholes(data, binary=False), RegionWormholes.fit(data, 2, binary=False, rng=0),
                  OptimizationWormholes(data, mixture_logpdf_and_grad)]:
        wormhole_step(np.random.default_rng(0), x, lambda y: mixture_logpdf_and_grad(y)[0], moves)
    v = binary_states(4).astype(np.int8)
    v.setflags(write=False)
    for moves in [PointWormholes(v[:6], binary=True), RegionWormholes(v[[0, 15]], binary=True, radius=1)]:
        prop = moves.propose(np.random.default_rng(0), v)
        assert prop.x.dtype == np.int8 and prop.x.flags.writeable


def test_bad_input_gets_a_clear_error():
    with pytest.raises(ValueError, match="binary"):
        PointWormholes([[0, 2], [1, 0]], binary=True)
    with pytest.raises(ValueError, match="at least 2 rows"):
        PointWormholes([[0.0, 1.0]], binary=False)
    with pytest.raises(TypeError, match="binary must be"):
        PointWormholes([[0, 1], [1, 0]], binary="yes")
    with pytest.raises(ValueError, match="finite"):
        PointWormholes([[0.0, np.nan], [1.0, 0.0]], binary=False)
    moves = PointWormholes([[0, 1], [1, 0]], binary=True)
    with pytest.raises(ValueError, match=r"shape \(n_chains, 2\)"):
        moves.propose(np.random.default_rng(0), np.zeros((3, 5)))
    with pytest.raises(ValueError, match="binary"):
        moves.propose(np.random.default_rng(0), np.full((3, 2), 0.5))
    with pytest.raises(ValueError, match="distinct"):
        RegionWormholes([[0, 1], [0, 1]], binary=True)
    with pytest.raises(ValueError, match="radius"):
        RegionWormholes([[0, 1], [1, 0]], binary=True, radius=-1)
    with pytest.raises(ValueError, match="covariances"):
        RegionWormholes([[0.0, 1.0]], binary=False)
    with pytest.raises(ValueError, match="positive definite"):
        RegionWormholes([[0.0, 1.0]], binary=False, covariances=[[[1.0, 0.0], [0.0, -1.0]]])
    with pytest.raises(ValueError, match="alpha"):
        RegionWormholes([[0.0, 1.0]], binary=False, covariances=[np.eye(2)], alpha=0.0)
    with pytest.raises(ValueError, match="n_components"):
        RegionWormholes.fit(np.zeros((3, 2)), 5, binary=False)
    with pytest.raises(ValueError, match="two distinct centres"):
        RegionWormholes.fit(np.zeros((10, 3)), 2, binary=True, rng=0)
    with pytest.raises(TypeError, match="callable"):
        OptimizationWormholes(np.eye(2), None)
    with pytest.raises(ValueError, match="n_descent"):
        OptimizationWormholes(np.eye(2), mixture_logpdf_and_grad, n_descent=-1)

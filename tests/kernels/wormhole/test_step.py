"""Tests of pymc_rbm.kernels.wormhole.step: every move, Metropolis-accepted, is exact.

Binary moves against the full transition matrix (``p T = p`` to 1e-12, and the
sampled steps against ``T``); continuous moves by iid draws that must stay iid
draws of the target. A move with its proposal ratio dropped shows the checks
have the power to see a wrong ratio.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from pymc_rbm.energy import free_energy, mean_hiddens
from pymc_rbm.kernels import (
    OptimizationWormholes,
    PointWormholes,
    RegionWormholes,
    WormholeInfo,
    wormhole_step,
)
from pymc_rbm.testing import (
    assert_converges,
    assert_frequencies,
    assert_stationary,
    frequency_check,
    is_irreducible,
    joint_distribution,
    joint_states,
    transition_matrix,
)

from ._moves import (
    N_VISIBLE,
    ZeroRatio,
    continuous_region_moves,
    invariance_check,
    mixture_draws,
    mixture_logpdf_and_grad,
    overlapping_regions,
    point_moves,
    run_from_every_state,
    wormhole_matrix,
)


@pytest.mark.parametrize("make", [point_moves, overlapping_regions], ids=["point", "region"])
def test_binary_moves_leave_the_rbm_marginal_invariant_exactly(rbm, make):
    params, log_p = rbm
    T = wormhole_matrix(make(), log_p, N_VISIBLE)
    assert_allclose(T.sum(axis=1), 1.0, atol=1e-14)
    assert (T >= 0).all()
    assert_stationary(np.exp(log_p), T, atol=1e-12)
    # and detailed balance, which the Metropolis construction promises
    flow = np.exp(log_p)[:, None] * T
    assert_allclose(flow, flow.T, atol=1e-14)


def test_flip_the_state_then_a_jump_with_hidden_refresh_is_exact_on_the_joint_space(rbm):
    """A flip-the-state sweep, a wormhole jump of v, then h redrawn from p(h | v) (what the RBM steps do).

    The jump is reversible for the marginal p(v); redrawing h afterwards
    makes it invariant for p(v, h). The composed chain is exact and
    irreducible on the joint space, so it converges to p(v, h).
    """
    params, log_p = rbm
    n_hidden = params.n_hidden
    v, h = joint_states(N_VISIBLE, n_hidden)
    ph = mean_hiddens(v, params)
    p_h_given_v = np.prod(np.where(h == 1, ph, 1 - ph), axis=1).reshape(2**N_VISIBLE, 2**n_hidden)
    p = joint_distribution(params)
    for moves in (point_moves(), overlapping_regions()):
        W = wormhole_matrix(moves, log_p, N_VISIBLE)
        # (v, h) -> (v', h'): W[v, v'] p(h' | v'), whatever h was
        jump = np.repeat(W[:, :, None] * p_h_given_v[None], 2**n_hidden, axis=0).reshape(p.size, p.size)
        T = transition_matrix(params, "flip") @ jump
        assert_stationary(p, T, atol=1e-12)
        assert is_irreducible(T)
        assert_converges(p, T)


@pytest.mark.parametrize("make", [point_moves, overlapping_regions], ids=["point", "region"])
def test_wormhole_step_follows_the_transition_matrix(rbm, make):
    params, log_p = rbm
    moves = make()
    T = wormhole_matrix(moves, log_p, N_VISIBLE)

    def step(rng, x):
        new, info = wormhole_step(rng, x, lambda v: -free_energy(v, params), moves)
        assert isinstance(info, WormholeInfo)
        return new

    counts = run_from_every_state(step, N_VISIBLE, 3000, seed=3)
    assert_frequencies(counts, T)


def test_the_empirical_check_sees_a_wrong_ratio():
    """The chi-square check tells a move without eq. (9)'s ratio from the right matrix.

    On a uniform target the acceptance is ``min(1, n(x) / n(x'))`` alone, so
    the broken move (which accepts everything) differs by 1/2 on every jump
    into the overlap.
    """
    moves = overlapping_regions()
    T = wormhole_matrix(moves, np.zeros(2**N_VISIBLE), N_VISIBLE)
    counts = run_from_every_state(
        lambda rng, x: wormhole_step(rng, x, lambda v: np.zeros(len(v)), ZeroRatio(moves))[0], N_VISIBLE, 3000, seed=3
    )
    assert frequency_check(counts, T).p_value < 1e-6


def test_continuous_moves_keep_iid_draws_from_the_target():
    data = mixture_draws(400, 10)
    for moves in [
        PointWormholes(data, binary=False),
        continuous_region_moves(),
        RegionWormholes.fit(data, 2, binary=False, rng=0),
        OptimizationWormholes(data, mixture_logpdf_and_grad),
    ]:
        check, jump_rate = invariance_check(moves)
        assert check.p_value > 1e-6, (type(moves).__name__, check)
        assert jump_rate > 0.02, (type(moves).__name__, jump_rate)  # the moves do cross between the modes


def test_continuous_checks_see_a_wrong_ratio():
    moves = continuous_region_moves()
    assert moves.membership(mixture_draws(5000, 3)).sum(axis=1).max() == 2
    check, _ = invariance_check(ZeroRatio(moves))
    assert check.p_value < 1e-6
    check, _ = invariance_check(ZeroRatio(OptimizationWormholes(mixture_draws(400, 10), mixture_logpdf_and_grad)))
    assert check.p_value < 1e-6

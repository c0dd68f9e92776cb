"""Wormhole moves (seed 002): exact invariance on enumerable spaces, sampling code against matrices.

Binary moves are checked exactly: the full transition matrix of the
Metropolis-accepted move over all visible states of a small RBM is built from
the moves' own ``proposal_distribution`` and must satisfy ``p T = p`` to
1e-12; then ``propose`` and ``wormhole_step`` are run from every state and
their next states tested against the proposal matrix and ``T`` (chi-square),
so the matrices and the sampling code cannot drift apart.

Continuous moves cannot be enumerated; there, exact iid draws from a
two-component Gaussian mixture go through one step and the result is tested
against the exact cell probabilities of a grid (chi-square): a kernel that
leaves ``π`` invariant keeps iid draws from ``π`` iid draws from ``π``. A
deliberately broken variant of each move shows the check has the power to
see a wrong proposal ratio.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.stats import norm

from pymc_rbm import RBMParams
from pymc_rbm.datasets import artificial_mode_prototypes, artificial_modes
from pymc_rbm.energy import free_energy, mean_hiddens
from pymc_rbm.estimators import binary_states, log_marginal_visible
from pymc_rbm.kernels import (
    OptimizationWormholes,
    PointWormholes,
    RegionWormholes,
    WormholeInfo,
    WormholeProposal,
    acceptance_probability,
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
    state_index,
    transition_matrix,
)

N_VISIBLE = 5


# ------------------------------------------------------------------ helpers
def proposal_matrix(moves, n_units: int) -> np.ndarray:
    """``Q[x, x']``: the proposal probabilities over all binary states, from the moves' own listing."""
    states = binary_states(n_units)
    Q = np.zeros((states.shape[0], states.shape[0]))
    for r, x in enumerate(states):
        targets, probs, _ = moves.proposal_distribution(x)
        np.add.at(Q[r], state_index(targets), probs)
    return Q


def wormhole_matrix(moves, log_p: np.ndarray, n_units: int) -> np.ndarray:
    """The Metropolis-accepted move: ``T[x, x'] = Σ q(x, x') min(1, p(x') q-ratio / p(x))``; rest on the diagonal."""
    states = binary_states(n_units)
    T = np.zeros((states.shape[0], states.shape[0]))
    for r, x in enumerate(states):
        targets, probs, log_q = moves.proposal_distribution(x)
        idx = state_index(targets)
        np.add.at(T[r], idx, probs * acceptance_probability(log_p[idx] - log_p[r] + log_q))
        T[r, r] += 1.0 - T[r].sum()
    return T


def run_from_every_state(step, n_units: int, n_draws: int, seed: int):
    """Run ``step(rng, x) -> x_new`` once from every binary state, ``n_draws`` times each; counts[x, x']."""
    states = binary_states(n_units).astype(np.int64)
    n = states.shape[0]
    start = np.repeat(np.arange(n), n_draws)
    new = step(np.random.default_rng(seed), states[start])
    return np.bincount(start * n + state_index(new), minlength=n * n).reshape(n, n)


@pytest.fixture(scope="module")
def rbm():
    params = RBMParams.random(N_VISIBLE, 3, scale=2.0, rng=4)
    return params, log_marginal_visible(params)


def point_moves():
    data = np.array([[1, 0, 0, 1, 1], [0, 0, 0, 0, 0], [1, 1, 0, 0, 1], [1, 0, 0, 1, 1]])  # a duplicate row
    return PointWormholes(data, binary=True)


def overlapping_regions():
    # centres 2 apart, radius 1: the balls of the first two overlap (states at distance 1 from both)
    centres = np.array([[0, 0, 0, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 1, 1]])
    return RegionWormholes(centres, binary=True, radius=1)


class ZeroRatio:
    """A broken move for negative controls: the wrapped proposal with its log proposal ratio dropped."""

    def __init__(self, moves):
        self.moves = moves

    def propose(self, rng, x):
        p = self.moves.propose(rng, x)
        return WormholeProposal(p.x, np.zeros_like(p.log_q_ratio), p.region_changed)

    def proposal_distribution(self, x):
        t, p, q = self.moves.proposal_distribution(x)
        return t, p, np.zeros_like(q)


# ------------------------------------------------------------ binary, exact
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


def test_overlap_rule_is_needed(rbm):
    """Without eq. (9)'s n(x) / n(x') the overlapping balls break invariance."""
    params, log_p = rbm
    moves = overlapping_regions()
    counts = moves.membership(binary_states(N_VISIBLE)).sum(axis=1)
    assert counts.max() == 2 and (counts == 0).any()  # overlap, and states outside every region
    T = wormhole_matrix(ZeroRatio(moves), log_p, N_VISIBLE)
    with pytest.raises(AssertionError):
        assert_stationary(np.exp(log_p), T, atol=1e-6)


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


# --------------------------------------------------------------- fitting
def test_regions_fitted_to_the_artificial_modes():
    """The Bernoulli mixture's rounded means are the four prototypes (the EM itself: tests/test_mixtures.py)."""
    data = artificial_modes(400, p_flip=0.01, rng=0)
    moves = RegionWormholes.fit(data, 4, binary=True, rng=1)
    found = {tuple(c) for c in moves.centres.astype(int)}
    assert found == {tuple(c) for c in artificial_mode_prototypes().astype(int)}


# --------------------------------------------------- continuous invariance
WEIGHTS = np.array([0.7, 0.3])
MEANS = np.array([[-2.0, 0.0], [2.0, 1.0]])
SDS = np.array([[0.5, 0.3], [0.3, 0.8]])
EDGES = [
    np.array([-np.inf, -2.5, -2.0, -1.5, 0.0, 1.8, 2.0, 2.2, np.inf]),
    np.array([-np.inf, -0.3, 0.0, 0.4, 1.0, 1.6, np.inf]),
]


def mixture_logpdf_and_grad(x):
    z = (x[:, None, :] - MEANS) / SDS  # (n, 2, 2)
    log_comp = np.log(WEIGHTS) + norm.logpdf(z).sum(-1) - np.log(SDS).sum(-1)
    log_p = np.logaddexp(log_comp[:, 0], log_comp[:, 1])
    resp = np.exp(log_comp - log_p[:, None])
    grad = -(resp[..., None] * z / SDS).sum(axis=1)
    return log_p, grad


def mixture_draws(n, seed):
    rng = np.random.default_rng(seed)
    k = rng.choice(2, size=n, p=WEIGHTS)
    return MEANS[k] + SDS[k] * rng.standard_normal((n, 2))


def cell_probabilities() -> np.ndarray:
    """Exact probability of each grid cell under the mixture (axis-aligned components)."""
    p = 0.0
    for w, m, s in zip(WEIGHTS, MEANS, SDS):
        px = np.diff(norm.cdf((EDGES[0] - m[0]) / s[0]))
        py = np.diff(norm.cdf((EDGES[1] - m[1]) / s[1]))
        p = p + w * np.outer(px, py)
    return p.ravel()


def cell_counts(x) -> np.ndarray:
    counts, _, _ = np.histogram2d(x[:, 0], x[:, 1], bins=EDGES)
    return counts.ravel()


def continuous_region_moves():
    # a region per mode and a third that overlaps the first: n(x) takes 0, 1 and 2
    covs = np.array([np.diag(SDS[0] ** 2), np.diag(SDS[1] ** 2), [[0.5, 0.2], [0.2, 0.3]]])
    return RegionWormholes(np.array([MEANS[0], MEANS[1], [-1.5, 0.3]]), binary=False, covariances=covs, alpha=2.0)


def invariance_check(moves, n=60_000, seed=0):
    x = mixture_draws(n, seed)
    new, info = wormhole_step(np.random.default_rng(seed + 1), x, lambda y: mixture_logpdf_and_grad(y)[0], moves)
    jumped = info.accepted & (np.sign(new[:, 0]) != np.sign(x[:, 0]))
    return frequency_check(cell_counts(new), cell_probabilities()), jumped.mean()


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


def test_optimization_gaussian_is_deterministic_and_descends():
    moves = OptimizationWormholes(mixture_draws(50, 1), mixture_logpdf_and_grad)
    x = mixture_draws(20, 2) + 0.8
    m1, h1 = moves.gaussian(x)
    m2, h2 = moves.gaussian(x.copy())
    assert_array_equal(m1, m2)
    assert_array_equal(h1, h2)
    assert (mixture_logpdf_and_grad(m1)[0] >= mixture_logpdf_and_grad(x)[0]).all()
    assert (h1 >= moves.min_curvature - 1e-12).all()
    # near a mode, the finite-difference curvature is the precision of the component
    m, h = moves.gaussian(MEANS[:1] + 0.05)
    assert_allclose(h[0], 1 / SDS[0] ** 2, rtol=1e-3)


def test_given_hessian_diagonal_replaces_the_finite_differences():
    def hessian_diag(m):
        return np.tile(1 / SDS[0] ** 2, (len(m), 1))

    data = mixture_draws(50, 1)
    exact = OptimizationWormholes(data, mixture_logpdf_and_grad, hessian_diag=hessian_diag)
    fd = OptimizationWormholes(data, mixture_logpdf_and_grad)
    m = MEANS[:1] + 0.01
    assert_array_equal(exact.curvature(m), hessian_diag(m))
    assert_allclose(fd.curvature(m), hessian_diag(m), rtol=1e-4)
    lifted = OptimizationWormholes(data, mixture_logpdf_and_grad, hessian_diag=lambda m: np.array([[-1.0, 2.0]]))
    assert_allclose(lifted.curvature(m), [[lifted.min_curvature, 3.0 + lifted.min_curvature]])


# ---------------------------------------------------------- input handling
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

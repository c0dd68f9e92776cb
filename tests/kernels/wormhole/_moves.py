"""Moves, targets and matrices shared by the wormhole tests.

Binary: a 5-unit space, small enough to list every state, with the moves' own
``proposal_distribution`` turned into matrices. Continuous: a two-component
Gaussian mixture with exact iid draws and exact cell probabilities of a grid.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

from pymc_rbm.estimators import binary_states
from pymc_rbm.kernels import (
    PointWormholes,
    RegionWormholes,
    WormholeProposal,
    acceptance_probability,
    wormhole_step,
)
from pymc_rbm.testing import frequency_check, state_index

N_VISIBLE = 5


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

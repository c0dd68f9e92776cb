"""The Metropolis step of wormhole moves: one shared decision for any move's proposal."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from pymc_rbm.kernels.metropolis import metropolis_accept

__all__ = ["WormholeInfo", "wormhole_step"]


class WormholeInfo(NamedTuple):
    """What one :func:`wormhole_step` did, per chain.

    Attributes
    ----------
    accepted : ndarray of bool of shape (n_chains,)
        The proposal was accepted (trivially so where it equals the state).
        Accepted jumps are ``accepted & region_changed``.
    log_alpha : ndarray of float64 of shape (n_chains,)
        Log Metropolis-Hastings ratio ``log π(x') - log π(x) + log_q_ratio``
        (accepted with probability ``min(1, exp(log_alpha))``).
    region_changed : ndarray of bool of shape (n_chains,)
        As in :class:`~pymc_rbm.kernels.wormhole.proposal.WormholeProposal`.
    """

    accepted: np.ndarray
    log_alpha: np.ndarray
    region_changed: np.ndarray


def wormhole_step(rng: np.random.Generator, x, log_density, proposal) -> tuple[np.ndarray, WormholeInfo]:
    """One Metropolis-accepted wormhole jump per chain (stochastic).

    Parameters
    ----------
    rng : numpy.random.Generator
    x : array_like of shape (n_chains, n_units)
        Current states (not modified).
    log_density : callable
        ``log_density(x) -> (n_chains,)``: the log target density (up to a
        constant), e.g. ``-free_energy(v, params)`` for the visible units of an RBM.
    proposal : PointWormholes, OptimizationWormholes or RegionWormholes
        Any object with ``propose(rng, x) -> WormholeProposal``.

    Returns
    -------
    x : ndarray of shape (n_chains, n_units)
        New states (a new array): the proposal where accepted.
    info : WormholeInfo
        ``log_alpha = log π(x') - log π(x) + log_q_ratio``, accepted with
        :func:`~pymc_rbm.kernels.metropolis_accept`.

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm import RBMParams
    >>> from pymc_rbm.energy import free_energy
    >>> from pymc_rbm.kernels.wormhole import RegionWormholes, wormhole_step
    >>> params = RBMParams.random(4, 3, rng=0)
    >>> moves = RegionWormholes([[0, 0, 0, 0], [1, 1, 1, 1]], binary=True, radius=1)
    >>> v = np.zeros((3, 4))
    >>> v, info = wormhole_step(np.random.default_rng(1), v, lambda v: -free_energy(v, params), moves)
    >>> info.accepted.shape
    (3,)
    """
    x = np.asarray(x)
    if x.ndim != 2:
        raise ValueError(f"x must have shape (n_chains, n_units), got shape {x.shape}")
    prop = proposal.propose(rng, x)
    with np.errstate(invalid="ignore"):  # -inf - -inf: NaN, rejected
        log_alpha = (
            np.asarray(log_density(prop.x), dtype=np.float64).reshape(x.shape[0])
            - np.asarray(log_density(x), dtype=np.float64).reshape(x.shape[0])
            + prop.log_q_ratio
        )
    accepted = metropolis_accept(rng, log_alpha)
    new = np.where(accepted[:, None], prop.x, x)
    return new, WormholeInfo(accepted, log_alpha, np.asarray(prop.region_changed, dtype=bool))

"""Point-to-point wormholes (Hinton, Welling & Mnih 2003, §2): jumps by the offset between two data points."""

from __future__ import annotations

import numpy as np

from pymc_rbm.kernels.wormhole.proposal import WormholeProposal, check_data, check_states, distinct_pairs, xor_flip
from pymc_rbm.validation import check_bool

__all__ = ["PointWormholes"]


class PointWormholes:
    """Point-to-point wormholes of Hinton, Welling & Mnih (2003, §2): jumps by the offset between two data points.

    Every point is connected to ``n_data (n_data - 1)`` others, one per
    ordered pair ``(a, b)`` of distinct data points: ``x' = x + (d_a - d_b)``
    for continuous states, ``x' = x XOR (d_a XOR d_b)`` for binary ones. The
    pair is drawn uniformly, so the proposal is symmetric (the pair ``(b, a)``
    leads back) and ``log_q_ratio = 0``.

    Parameters
    ----------
    data : array_like of shape (n_data, n_units)
        At least two data points; 0/1 values when ``binary``.
    binary : bool
        Binary states (XOR offsets) or continuous ones (vector offsets).

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm.kernels.wormhole import PointWormholes
    >>> moves = PointWormholes(np.array([[0, 0, 1], [1, 1, 1]]), binary=True)
    >>> moves.propose(np.random.default_rng(0), np.zeros((2, 3), dtype=int)).x
    array([[1, 1, 0],
           [1, 1, 0]])
    """

    def __init__(self, data, *, binary: bool):
        self.binary = check_bool(binary, "binary")
        self.data = check_data(data, self.binary)
        self.data.setflags(write=False)

    @property
    def n_units(self) -> int:
        """Number of units (columns of the data)."""
        return self.data.shape[1]

    def propose(self, rng: np.random.Generator, x) -> WormholeProposal:
        """Propose one jump per chain (stochastic).

        Parameters
        ----------
        rng : numpy.random.Generator
        x : array_like of shape (n_chains, n_units)
            Current states (not modified).

        Returns
        -------
        WormholeProposal
            ``x`` keeps the dtype of the input.
        """
        x = check_states(x, self.n_units, self.binary)
        a, b = distinct_pairs(rng, self.data.shape[0], x.shape[0])
        if self.binary:
            flip = self.data[a] != self.data[b]
            new = xor_flip(x, flip)
            changed = flip.any(axis=1)
        else:
            offset = self.data[a] - self.data[b]
            new = x + offset
            changed = (offset != 0).any(axis=1)
        return WormholeProposal(new, np.zeros(x.shape[0]), changed)

    def proposal_distribution(self, x) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """All proposals from one binary state with their probabilities (for exact checks).

        Parameters
        ----------
        x : array_like of shape (n_units,)
            One binary state.

        Returns
        -------
        targets : ndarray of shape (m, n_units)
            One row per ordered pair of distinct data points (rows may repeat).
        probs : ndarray of shape (m,)
            Probability of each row, ``1 / (n_data (n_data - 1))``.
        log_q_ratio : ndarray of shape (m,)
            Zeros (the proposal is symmetric).
        """
        if not self.binary:
            raise ValueError("proposal_distribution lists a discrete proposal: binary wormholes only")
        x = check_states(np.asarray(x)[None, :], self.n_units, True)[0]
        n = self.data.shape[0]
        a, b = np.nonzero(~np.eye(n, dtype=bool))
        targets = xor_flip(np.broadcast_to(x, (a.size, x.size)), self.data[a] != self.data[b])
        return targets, np.full(a.size, 1.0 / a.size), np.zeros(a.size)


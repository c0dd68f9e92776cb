"""What a wormhole move proposes, and the input checks every move shares.

A move only proposes: ``propose(rng, x)`` returns a :class:`WormholeProposal`,
and :func:`~pymc_rbm.kernels.wormhole.step.wormhole_step` decides. The
functions below are the moves' common vocabulary (validated data and states,
XOR offsets, pairs of data points), not part of the user-facing API.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from pymc_rbm.validation import check_binary

__all__ = ["WormholeProposal"]


class WormholeProposal(NamedTuple):
    """What a wormhole move proposes for a batch of chains.

    Attributes
    ----------
    x : ndarray of shape (n_chains, n_units)
        Proposed states (a new array; equal to the input where no jump was
        possible, e.g. outside every region).
    log_q_ratio : ndarray of float64 of shape (n_chains,)
        ``log q(x | x') - log q(x' | x)``; for the deterministic maps of
        region wormholes it includes the Jacobian (eq. 9: ``log n(x) - log n(x')``).
    region_changed : ndarray of bool of shape (n_chains,)
        Region wormholes: the target region differs from the departure
        region. Point and optimization wormholes have no regions: True where
        a jump through a wormhole was proposed (the data offset is not zero).
    """

    x: np.ndarray
    log_q_ratio: np.ndarray
    region_changed: np.ndarray


# ----------------------------------------------------------------- input checks
def check_data(data, binary: bool, min_rows: int = 2) -> np.ndarray:
    """A float64 copy of ``data`` of shape (n_data, n_units), validated."""
    arr = np.asarray(data)
    if arr.ndim != 2:
        raise ValueError(f"data must have shape (n_data, n_units), got shape {arr.shape}")
    if arr.shape[0] < min_rows:
        raise ValueError(f"data must hold at least {min_rows} rows, got {arr.shape[0]}")
    if arr.shape[1] < 1:
        raise ValueError("data must have at least one unit (column)")
    if binary:
        return check_binary(arr, name="data")
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"data must be numeric, got dtype {arr.dtype}")
    arr = arr.astype(np.float64, copy=True)
    if not np.isfinite(arr).all():
        raise ValueError("data must be finite (found NaN or inf)")
    return arr


def check_states(x, n_units: int, binary: bool) -> np.ndarray:
    """``x`` as an array of shape (n_chains, n_units); never copied or modified."""
    x = np.asarray(x)
    if x.ndim != 2 or x.shape[1] != n_units:
        raise ValueError(f"x must have shape (n_chains, {n_units}), got shape {x.shape}")
    if x.dtype.kind not in "biuf":
        raise ValueError(f"x must be numeric, got dtype {x.dtype}")
    if binary:
        if not ((x == 0) | (x == 1)).all():
            raise ValueError("x must be binary (values in {0, 1}) for binary wormholes")
    elif not np.isfinite(x).all():
        raise ValueError("x must be finite (found NaN or inf)")
    return x


def xor_flip(x: np.ndarray, flip: np.ndarray) -> np.ndarray:
    """``x XOR flip`` for 0/1 states of any numeric dtype (a new array of ``x``'s dtype)."""
    return np.where(flip, 1 - x, x).astype(x.dtype, copy=False)


def distinct_pairs(rng: np.random.Generator, n_data: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` ordered pairs ``(a, b)`` of distinct indices, uniform over the ``n_data (n_data - 1)`` pairs."""
    a = rng.integers(n_data, size=n)
    b = (a + 1 + rng.integers(n_data - 1, size=n)) % n_data
    return a, b


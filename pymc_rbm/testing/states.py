"""The joint states of a tiny RBM in the harness order, and their exact distribution.

Joint state ``r`` has visible part ``binary_states(n_visible)[r // 2**n_hidden]``
and hidden part ``binary_states(n_hidden)[r % 2**n_hidden]`` (unit 0 most
significant, as in :func:`pymc_rbm.estimators.binary_states`).
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from pymc_rbm.energy import energy
from pymc_rbm.enumeration import binary_states

__all__ = ["MAX_JOINT_UNITS", "joint_states", "state_index", "joint_index", "joint_distribution"]

#: Largest ``n_visible + n_hidden`` for which joint matrices are built (1024 states, 8 MiB a matrix).
MAX_JOINT_UNITS = 10

def _check_size(n_visible: int, n_hidden: int) -> None:
    if n_visible + n_hidden > MAX_JOINT_UNITS:
        raise ValueError(
            f"the joint state space of {n_visible} + {n_hidden} units has 2**{n_visible + n_hidden} states; "
            f"the exact harness handles at most {MAX_JOINT_UNITS} units in all"
        )


def joint_states(n_visible: int, n_hidden: int) -> tuple[np.ndarray, np.ndarray]:
    """Every joint state, in the harness order.

    Parameters
    ----------
    n_visible, n_hidden : int

    Returns
    -------
    v : ndarray of shape (2**(n_visible + n_hidden), n_visible)
    h : ndarray of shape (2**(n_visible + n_hidden), n_hidden)
        Row ``r`` is joint state ``r``: ``v`` is the high bits of ``r``,
        ``h`` the low bits.
    """
    _check_size(n_visible, n_hidden)
    s = binary_states(n_visible + n_hidden)
    return s[:, :n_visible].copy(), s[:, n_visible:].copy()


def state_index(x) -> np.ndarray:
    """Index of each binary state in :func:`~pymc_rbm.estimators.binary_states` order.

    Parameters
    ----------
    x : array_like of shape (..., n)
        0/1 values (or booleans).

    Returns
    -------
    ndarray of int64 of shape (...)
    """
    x = np.asarray(x) != 0
    weights = np.left_shift(1, np.arange(x.shape[-1] - 1, -1, -1, dtype=np.int64))
    return x.astype(np.int64) @ weights


def joint_index(v, h) -> np.ndarray:
    """Index of each joint state ``(v, h)`` in the harness order.

    Parameters
    ----------
    v : array_like of shape (..., n_visible)
    h : array_like of shape (..., n_hidden)

    Returns
    -------
    ndarray of int64 of shape (...)
        ``state_index(v) * 2**n_hidden + state_index(h)``.
    """
    h = np.asarray(h)
    return (state_index(v) << h.shape[-1]) + state_index(h)


def joint_distribution(params, beta: float = 1.0) -> np.ndarray:
    """``p_β(v, h) ∝ exp(-β E(v, h))`` of every joint state, by enumeration.

    Parameters
    ----------
    params : RBMParams
    beta : float, default 1.0

    Returns
    -------
    ndarray of shape (2**(n_visible + n_hidden),)
        Sums to 1; in the order of :func:`joint_states`.
    """
    v, h = joint_states(params.n_visible, params.n_hidden)
    log_w = -float(beta) * energy(v, h, params.astype(np.float64))
    return np.exp(log_w - logsumexp(log_w))

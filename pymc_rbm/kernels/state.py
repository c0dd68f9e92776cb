"""The state every sampling kernel carries, its sweep statistics, and β handling.

A kernel moves a batch of chains: ``v`` has shape ``(n_chains, n_visible)``
and ``h`` shape ``(n_chains, n_hidden)``, both holding 0/1 values (float64
by default). The inverse temperature ``beta`` is either a scalar or one
value per chain, shape ``(n_chains,)``; it multiplies the energy, so the
kernels at ``beta`` sample ``p_β(v, h) ∝ exp(-β E(v, h))``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["RBMState", "SweepInfo"]


class RBMState(NamedTuple):
    """The joint state of a batch of RBM chains.

    Attributes
    ----------
    v : ndarray of shape (n_chains, n_visible)
        Visible units, values in {0, 1}.
    h : ndarray of shape (n_chains, n_hidden)
        Hidden units, values in {0, 1}. Flip-the-state needs the current
        hidden state; Gibbs ignores it (it redraws ``h`` from ``p(h | v)``).
        None: not known, and the next hidden update is a Gibbs draw.
    hidden_input : ndarray of shape (n_chains, n_hidden), optional
        The carried untempered hidden activations of ``v`` under the target
        (``hbias + v·W`` for an RBM), kept up to date by the rows of the
        visible units that changed; None when not carried.
    """

    v: np.ndarray
    h: np.ndarray | None
    hidden_input: np.ndarray | None = None


class SweepInfo(NamedTuple):
    """What one sweep did, per chain.

    Attributes
    ----------
    n_changed : ndarray of int of shape (n_chains,)
        Number of visible units whose state changed in the sweep.
    n_hidden_changed : ndarray of int of shape (n_chains,)
        Number of hidden units whose state changed in the sweep.
    """

    n_changed: np.ndarray
    n_hidden_changed: np.ndarray


def check_beta(beta, n_chains: int):
    """Validate an inverse temperature for a batch of ``n_chains`` chains.

    Parameters
    ----------
    beta : None, float or array_like of shape (n_chains,)
    n_chains : int

    Returns
    -------
    None, float or ndarray of shape (n_chains, 1)
        ``None`` when no tempering is needed (``beta`` is None or 1), a
        float for a scalar, and a column ready to broadcast over the unit
        axis for one value per chain.

    Raises
    ------
    ValueError
        For a negative or non-finite ``beta`` or a wrong shape.
    """
    if beta is None:
        return None
    b = np.asarray(beta, dtype=np.float64)
    if b.ndim == 0:
        value = float(b)
        if not (np.isfinite(value) and value >= 0.0):
            raise ValueError(f"beta must be a finite number >= 0, got {value!r}")
        return None if value == 1.0 else value
    if b.shape != (n_chains,):
        raise ValueError(
            f"beta must be a scalar or have one value per chain, shape ({n_chains},); got shape {b.shape}"
        )
    if not (np.all(np.isfinite(b)) and np.all(b >= 0.0)):
        raise ValueError("beta must hold finite values >= 0")
    return b[:, None]


def temper_(activation: np.ndarray, beta) -> np.ndarray:
    """Multiply ``activation`` in place by a β from :func:`check_beta`; return it."""
    if beta is not None:
        activation *= beta
    return activation


def sigmoid_(a: np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(-a))`` in place, for any ``|a|``; returns ``a``.

    The same values as :func:`pymc_rbm.energy.sigmoid` (``scipy.special.expit``)
    to rounding, several times faster on large arrays: ``exp`` overflows to
    ``inf`` for ``a < -709`` and the reciprocal then gives the correct 0.
    """
    np.negative(a, out=a)
    with np.errstate(over="ignore"):
        np.exp(a, out=a)
    a += 1.0
    return np.reciprocal(a, out=a)

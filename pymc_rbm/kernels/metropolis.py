"""The one Metropolis accept/reject decision that every corrected move shares.

A move only proposes: it returns a proposal and the log of its
Metropolis-Hastings ratio ``log [π(x') q(x | x') / (π(x) q(x' | x))]``;
:func:`metropolis_accept` decides, vectorised over chains.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["metropolis_accept", "acceptance_probability"]


def acceptance_probability(log_ratio) -> np.ndarray:
    """``min(1, exp(log_ratio))``, with 0 for NaN.

    Parameters
    ----------
    log_ratio : array_like of shape (n_chains,)

    Returns
    -------
    ndarray of float64 of shape (n_chains,)
    """
    if isinstance(log_ratio, (float, np.floating)):
        return np.float64(0.0 if math.isnan(log_ratio) else math.exp(min(log_ratio, 0.0)))
    r = np.asarray(log_ratio, dtype=np.float64)
    return np.exp(np.minimum(np.where(np.isnan(r), -np.inf, r), 0.0))


def metropolis_accept(rng: np.random.Generator, log_ratio) -> np.ndarray:
    """Accept each chain's proposal with probability ``min(1, exp(log_ratio))`` (stochastic).

    Parameters
    ----------
    rng : numpy.random.Generator
        One uniform is drawn per entry of ``log_ratio``, in one call.
    log_ratio : float or array_like of shape (n_chains,)
        Log Metropolis-Hastings ratios (a float gives a NumPy bool). ``+inf`` is always accepted;
        ``-inf`` and NaN are always rejected.

    Returns
    -------
    ndarray of bool of shape (n_chains,)
        ``log u < log_ratio`` with ``u`` uniform on [0, 1).

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm.kernels import metropolis_accept
    >>> metropolis_accept(np.random.default_rng(0), [np.inf, -np.inf, np.nan, 0.0])
    array([ True, False, False,  True])
    """
    if isinstance(log_ratio, (float, np.floating)):  # one chain: the same rule without array overhead
        u = rng.random()
        return np.bool_((math.log(u) if u > 0.0 else -math.inf) < log_ratio)
    r = np.asarray(log_ratio, dtype=np.float64)
    with np.errstate(divide="ignore"):  # u == 0 gives log u = -inf, accepted unless log_ratio is -inf
        log_u = np.log(rng.random(r.shape))
    return log_u < r  # False for NaN

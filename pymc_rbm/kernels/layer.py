"""The layer update rule that every kernel applies: block Gibbs, or flip-the-state mixed with Gibbs.

Given the other layer the units of a layer are independent, so one layer
update changes each unit by a rule of its own state ``x``, its tempered
logit ``a`` (``P(x = 1 | other layer) = sigmoid(a)``) and one uniform ``u``:

- Gibbs: ``x' = [u < sigmoid(a)]``;
- flip-the-state mixed with Gibbs by ``α`` (Brügge, Fischer & Igel 2013, Definition 1 and
  §5.2): ``x' = x XOR [u < q]`` with ``s = log p(other) / p(current)``,
  ``q = α q_T + (1 - α) sigmoid(s)``, ``q_T = exp(min(s, 0))`` and ``q_T = 1/2``
  at the tie ``s = 0``.

The rule is written once, compiled, in :mod:`pymc_rbm.kernels.update_rule`
(``rule_state``): the NumPy kernels call it here through
:meth:`LayerRule.update` with uniforms from the caller's generator, and the
compiled sweep of :mod:`pymc_rbm.kernels.chain_sweeps` calls it inside its
loops. A rule is bound once (:func:`~pymc_rbm.kernels.operator_rule`, by name) and passed to every sweep.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

__all__ = ["LayerRule", "GIBBS", "check_alpha", "compiled_rule"]


def check_alpha(alpha) -> float:
    """The flip/Gibbs mixture weight ``alpha`` as a float in [0, 1], or a ValueError (NaN included)."""
    a = float(alpha)
    if not 0.0 <= a <= 1.0:  # also refuses NaN
        raise ValueError(f"alpha must lie in [0, 1] (1: flip-the-state, 0: Gibbs), got {alpha!r}")
    return a


@functools.cache
def compiled_rule():
    """The compiled module that holds the rule (:mod:`pymc_rbm.kernels.update_rule`), imported on first use
    (importing the kernels does not load Numba)."""
    from pymc_rbm.kernels import update_rule

    return update_rule


def _rows(x: np.ndarray) -> np.ndarray:
    """``x`` as a C-contiguous 2-D array of rows (a view where possible)."""
    return np.ascontiguousarray(x).reshape(-1, x.shape[-1]) if x.ndim else x.reshape(1, 1)


class LayerRule(NamedTuple):
    """A layer update rule with its options bound: block Gibbs, or flip-the-state mixed with Gibbs.

    Attributes
    ----------
    alpha : float in [0, 1]
        Weight of flip-the-state in the mixture ``α T + (1 - α) G``; 1 is
        flip-the-state, 0 Gibbs in distribution (it moves from ``x``).
    gibbs : bool
        The Gibbs rule ``x' = [u < sigmoid(a)]``, which does not read ``x``
        (``alpha`` is then ignored).
    """

    alpha: float = 1.0
    gibbs: bool = False

    @property
    def reads_state(self) -> bool:
        """Whether the new state depends on the current one (every rule but Gibbs)."""
        return not self.gibbs

    def update(self, rng: np.random.Generator, x, logit, *, dtype=None) -> tuple[np.ndarray, np.ndarray]:
        """One update of a layer given its tempered logits (stochastic).

        Parameters
        ----------
        rng : numpy.random.Generator
            One uniform per unit is drawn, in C order.
        x : ndarray of shape (n_chains, n_units), or None
            Current states, values in {0, 1}; None only for Gibbs (which
            does not read them; the counts are then 0). Not modified.
        logit : ndarray of shape (n_chains, n_units)
            Tempered conditional logits; not modified.
        dtype : numpy dtype, optional
            Of the new states; default that of ``x``, else of ``logit``.

        Returns
        -------
        new : ndarray of shape (n_chains, n_units)
            0/1 values.
        n_changed : ndarray of int64 of shape (n_chains,)
            Units that changed, per chain.
        """
        logit = np.asarray(logit)
        if not np.issubdtype(logit.dtype, np.floating):
            logit = logit.astype(np.float64)
        if x is None:
            if not self.gibbs:
                raise ValueError("only the Gibbs rule updates a layer without its current state")
            dt = logit.dtype if dtype is None else dtype
        else:
            x = np.asarray(x)
            dt = x.dtype if dtype is None else dtype
            if x.dtype == np.bool_:
                x = x.astype(logit.dtype)
            if x.shape != logit.shape:
                raise ValueError(f"states of shape {x.shape} do not match logits of shape {logit.shape}")
        a = _rows(logit)
        u = rng.random(a.shape)
        out = np.empty(a.shape, dtype=dt)
        if x is None:
            counts = np.zeros(a.shape[0], dtype=np.int64)
            compiled_rule().gibbs_rows(u, a, out)
        else:
            counts = np.empty(a.shape[0], dtype=np.int64)
            compiled_rule().update_rows(u, _rows(x), a, self.alpha, self.gibbs, out, counts)
        return out.reshape(logit.shape), counts.reshape(logit.shape[:-1])


#: The block Gibbs rule.
GIBBS = LayerRule(0.0, True)

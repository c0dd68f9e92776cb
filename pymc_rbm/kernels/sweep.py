"""The sweep kernel ``sweep(rng, state, target, rule) -> (state, info)`` and its targets.

One sweep updates the hidden layer given ``v``, then the visible layer given
the new ``h`` (Brügge, Fischer & Igel 2013, §2: ``G = G_h G_v``, ``T = T_h T_v``), each unit
by the layer rule of :mod:`pymc_rbm.kernels.layer`. What is sampled is the
*target*: a small object that gives each layer's tempered conditional
logits. Every NumPy user of a sweep calls this one function with its own
target:

- :class:`RBMAtBeta`: an RBM at inverse temperature ``β`` (shared or one per
  chain): ``pm.sample``'s step methods, training, moments by sampling,
  parallel tempering (:func:`~pymc_rbm.kernels.gibbs_sweep` and
  :func:`~pymc_rbm.kernels.flip_sweep` are this kernel at this target);
- :class:`~pymc_rbm.kernels.target.FieldTarget`: the record of arrays that
  the JAX sweep takes too, a binary RBM at ``β`` plus per-unit fields (the
  RBM at ``β``, a point of the AIS path, a tilted conditional); at ``β``
  without fields it is :class:`RBMAtBeta`'s chain, draw for draw;
- a point of the annealing path between a base distribution and one or more
  RBMs (``AnnealingPath.at`` in the estimators): AIS, reverse AIS, BAR, RTS,
  SAMS and their pilot run.

A target has

- ``visible_layer`` and ``hidden_layer`` (optional; Bernoulli units when
  absent): the layer types of :mod:`pymc_rbm.layers`, whose ``update``
  applies the layer rule to their units (two-state layers through the
  rule's bits);
- ``W``: the matrix whose rows update the carried hidden input when visible
  units change;
- ``hidden_input(v)``: the untempered hidden input of ``v`` (one matrix
  product), which the state may carry from sweep to sweep;
- ``hidden_logits(a)``: the tempered hidden fields from that input (for
  Bernoulli units, the logits);
- ``visible_logits(h)``: the tempered visible fields given ``h``.

The compiled sweeps of :mod:`pymc_rbm.kernels.compiled` (the step methods'
fast path, parallel tempering and informed proposals in one Numba call) run
the same layer rule at an :class:`RBMAtBeta` target inside their loops.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from pymc_rbm.energy import hidden_activation, visible_activation
from pymc_rbm.kernels.activations import BATCH_FRACTION, propagate_activation
from pymc_rbm.kernels.layer import GIBBS, LayerRule
from pymc_rbm.kernels.state import RBMState, SweepInfo, check_beta
from pymc_rbm.layers import BERNOULLI

__all__ = ["RBMAtBeta", "at_beta", "sweep"]


class RBMAtBeta(NamedTuple):
    """An RBM at inverse temperature β: ``p_β(v, h) ∝ exp(-β E(v, h))``.

    Attributes
    ----------
    params : RBMParams or SpinRBMParams
    beta : None, float or ndarray of shape (n_chains, 1)
        As :func:`~pymc_rbm.kernels.state.check_beta` returns it (None: β = 1).
    """

    params: object
    beta: object = None

    @property
    def visible_layer(self):
        """The visible layer type of ``params``."""
        return self.params.visible

    @property
    def hidden_layer(self):
        """The hidden layer type of ``params``."""
        return self.params.hidden

    @property
    def W(self) -> np.ndarray:
        """The couplings, (n_visible, n_hidden)."""
        return self.params.W

    def hidden_input(self, v: np.ndarray) -> np.ndarray:
        """``hbias + v·W``, (n_chains, n_hidden)."""
        return hidden_activation(v, self.params)

    def hidden_logits(self, a: np.ndarray) -> np.ndarray:
        """The tempered hidden fields ``β (hbias + v·W)`` from the hidden input ``a`` (not modified)."""
        return a if self.beta is None else a * self.beta

    def visible_logits(self, h: np.ndarray) -> np.ndarray:
        """The tempered visible fields ``β (vbias + W·h)``, (n_chains, n_visible)."""
        a = visible_activation(h, self.params)
        if self.beta is not None:
            a *= self.beta
        return a


def at_beta(params, beta=None, n_chains: int = 1) -> RBMAtBeta:
    """The target ``params`` at ``beta`` (a scalar or one per chain of ``n_chains``), validated.

    Raises
    ------
    ValueError
        For a negative or non-finite ``beta`` or a wrong shape.
    """
    return RBMAtBeta(params, check_beta(beta, n_chains))


def sweep(
    rng: np.random.Generator, state: RBMState, target, rule: LayerRule = GIBBS, *, refresh: bool = False, accept=None
) -> tuple[RBMState, SweepInfo]:
    """One sweep: the hidden layer given ``v``, then the visible layer given the new ``h`` (stochastic).

    Parameters
    ----------
    rng : numpy.random.Generator
        Per layer, one uniform per unit in C order: the hidden layer's, then
        the visible layer's.
    state : RBMState
        ``v`` (n_chains, n_visible) and ``h`` (n_chains, n_hidden). With
        ``h`` None the hidden layer is a Gibbs draw (the refresh of a state
        whose ``h`` is unknown or stale). With ``hidden_input`` given it is
        used instead of a matrix product and carried to the new state,
        updated by the rows of ``target.W`` of the visible units that
        changed (:func:`~pymc_rbm.kernels.activations.propagate_activation`).
    target : RBMAtBeta, FieldTarget or another target (module docstring)
    rule : LayerRule, default Gibbs
        The layer update (:func:`~pymc_rbm.kernels.operator_rule`), applied
        by each layer type (:meth:`~pymc_rbm.layers.Layer.update`).
    refresh : bool, default False
        Recompute the carried hidden input by one matrix product (callers
        that carry it do so every :data:`~pymc_rbm.kernels.activations.FULL_EVERY`
        sweeps, so rounding never drifts).
    accept : callable, optional
        ``accept(v, v_new) -> v_accepted``: a Metropolis correction of the
        visible update, which is then a proposal (reversible with respect to
        the target's ``p(v | h)``) for a target times other terms of ``v``;
        it returns the new visible states with rejected rows reverted, and may
        draw from ``rng`` after the visible update's uniforms. The step
        methods' likelihood-corrected sweeps pass one.

    Returns
    -------
    state : RBMState
        The new state, in the dtypes of the old one (``h`` in the logits'
        when it was None); ``hidden_input`` carried when it was given.
    info : SweepInfo
        Visible and hidden units that changed per chain (hidden: 0 when
        ``h`` was None).

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm import RBMParams
    >>> from pymc_rbm.kernels import init_state
    >>> from pymc_rbm.kernels import operator_rule
    >>> from pymc_rbm.kernels.sweep import at_beta, sweep
    >>> rng = np.random.default_rng(0)
    >>> params = RBMParams.random(6, 4, rng=1)
    >>> state = init_state(rng, np.zeros((10, 6)), params)
    >>> state, info = sweep(rng, state, at_beta(params, 0.5), operator_rule("flip"))
    >>> state.v.shape, info.n_hidden_changed.shape
    ((10, 6), (10,))
    """
    carried = state.hidden_input is not None
    a = state.hidden_input if carried else target.hidden_input(state.v)
    visible = getattr(target, "visible_layer", BERNOULLI)
    hidden = getattr(target, "hidden_layer", BERNOULLI)
    h, n_h = hidden.update(rng, state.h, target.hidden_logits(a), rule if state.h is not None else GIBBS)
    v, n_v = visible.update(rng, state.v, target.visible_logits(h), rule)
    if accept is not None:
        v = accept(state.v, v)
        n_v = np.count_nonzero(v != state.v, axis=-1)
    if carried:
        a, _ = propagate_activation(
            a, state.v, v, target.W, target.hidden_input, force_full=refresh, max_fraction=BATCH_FRACTION
        )
    return RBMState(v, h, a if carried else None), SweepInfo(n_changed=n_v, n_hidden_changed=n_h)

"""Sampling kernels for binary RBMs, in NumPy and Numba (this package never imports PyMC).

One kernel, :func:`~pymc_rbm.kernels.sweep.sweep` ``(rng, state, target, rule) ->
(state, info)``: randomness first, the :class:`RBMState` of a batch of chains
in and out, a *target* that gives each layer's tempered logits (an RBM at
``β``; a point of the estimators' annealing path), and the layer update rule
bound once (:mod:`~pymc_rbm.kernels.layer`, written once and compiled). The
kernels by RBM, ``kernel(rng, state, params, beta=None) -> (state, info)``
with options bound by ``build_kernel``, are that kernel at the RBM at ``β``.
The same kernel serves ``pm.sample``, training and the estimators (AIS runs
it along its path).

- :mod:`~pymc_rbm.kernels.sweep`: the sweep kernel and the RBM-at-β target.
- :mod:`~pymc_rbm.kernels.layer`: the layer update rule (Gibbs, flip-the-state, their mixture).
- :mod:`~pymc_rbm.kernels.gibbs`: block Gibbs, ``G = G_h G_v``.
- :mod:`~pymc_rbm.kernels.flip`: flip-the-state (Brügge, Fischer & Igel 2013), ``T = T_h T_v``,
  and its mixture ``T^α_i = α T_i + (1 - α) G_i`` with Gibbs.
- :mod:`~pymc_rbm.kernels.metropolis`: the shared accept/reject decision.
- :mod:`~pymc_rbm.kernels.operators`: the operators by name (``"gibbs"``,
  ``"flip"`` or a mixture weight α), for everything that lets users choose.
- :mod:`~pymc_rbm.kernels.tempering`: parallel tempering, replicas at a ladder
  of β moved by any kernel and swapped between neighbouring temperatures.
- :mod:`~pymc_rbm.kernels.wormhole`: wormhole moves (Hinton, Welling & Mnih 2003): point,
  optimization-based and region proposals, accepted by :func:`wormhole_step`.
- :mod:`~pymc_rbm.kernels.activations`: carried activations, updated by the
  units that changed instead of recomputed (the step methods' fast path).
- :mod:`~pymc_rbm.kernels.compiled`: several Gibbs or flip-the-state sweeps
  with carried activations in one Numba call, the same chain draw for draw.
- :mod:`~pymc_rbm.kernels.replica_rounds`: tempered rounds with their swaps,
  the informed proposal and ladders of models, each in one compiled call.
- :mod:`~pymc_rbm.kernels.training_steps`: training's Gibbs chains and
  gradients for small models in one compiled call, with NumPy's values.
- The compiled loops, loaded on first use: :mod:`~pymc_rbm.kernels.update_rule`
  (the layer rule), :mod:`~pymc_rbm.kernels.chain_sweeps` (the one sweep),
  :mod:`~pymc_rbm.kernels.round_loops`, :mod:`~pymc_rbm.kernels.training_loops`
  and :mod:`~pymc_rbm.kernels.philox` (counter-based uniforms).
- :mod:`~pymc_rbm.kernels.independence`: independence proposals from the exact
  marginal of an enumerated layer, accepted under per-unit evidence.
"""

from pymc_rbm.kernels import activations, flip, gibbs, layer, metropolis, operators, sweep, tempering, wormhole
from pymc_rbm.kernels.activations import propagate_activation
from pymc_rbm.kernels.flip import flip_hiddens, flip_layer, flip_probability, flip_sweep, flip_visibles
from pymc_rbm.kernels.gibbs import gibbs_sweep, init_state, sample_hiddens, sample_visibles
from pymc_rbm.kernels.metropolis import acceptance_probability, metropolis_accept
from pymc_rbm.kernels.layer import GIBBS, LayerRule
from pymc_rbm.kernels.operators import build_operator, operator_alpha, operator_rule
from pymc_rbm.kernels.state import RBMState, SweepInfo
from pymc_rbm.kernels.tempering import TemperedState, swap_neighbours
from pymc_rbm.kernels.wormhole import (
    OptimizationWormholes,
    PointWormholes,
    RegionWormholes,
    WormholeInfo,
    WormholeProposal,
    wormhole_step,
)

__all__ = [
    "RBMState",
    "SweepInfo",
    "init_state",
    "sample_hiddens",
    "sample_visibles",
    "gibbs_sweep",
    "flip_probability",
    "flip_layer",
    "flip_hiddens",
    "flip_visibles",
    "flip_sweep",
    "metropolis_accept",
    "acceptance_probability",
    "propagate_activation",
    "build_operator",
    "operator_alpha",
    "operator_rule",
    "LayerRule",
    "GIBBS",
    "layer",
    "sweep",
    "operators",
    "activations",
    "gibbs",
    "flip",
    "metropolis",
    "WormholeProposal",
    "WormholeInfo",
    "PointWormholes",
    "OptimizationWormholes",
    "RegionWormholes",
    "wormhole_step",
    "wormhole",
    "TemperedState",
    "swap_neighbours",
    "tempering",
]

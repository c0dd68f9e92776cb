"""Sampling kernels for binary RBMs, in pure NumPy (this package never imports PyMC).

Every kernel has the signature ``kernel(rng, state, params, beta=None) ->
(state, info)``: randomness first, the :class:`RBMState` of a batch of
chains in and out, parameters and the inverse temperature ``beta`` (a scalar
or one per chain) passed on every call, options bound once with
``build_kernel``. The same kernel serves ``pm.sample``, training and the
estimators (AIS runs it at ``β < 1``).

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
"""

from pymc_rbm.kernels import activations, flip, gibbs, metropolis, operators, tempering, wormhole
from pymc_rbm.kernels.activations import propagate_activation
from pymc_rbm.kernels.flip import flip_hiddens, flip_layer, flip_probability, flip_sweep, flip_visibles
from pymc_rbm.kernels.gibbs import gibbs_sweep, init_state, sample_hiddens, sample_visibles
from pymc_rbm.kernels.metropolis import acceptance_probability, metropolis_accept
from pymc_rbm.kernels.operators import build_operator, operator_alpha
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

"""PyMC step methods for RBM variables: thin adapters over :mod:`pymc_rbm.kernels`.

- :class:`FlipTheState`: the flip-the-state operator of seed 000 (and its α
  mixture with Gibbs); what ``pm.sample`` assigns to RBM variables by itself.
- :class:`BlockGibbs`: block Gibbs sweeps.
- :class:`WormholeMetropolis`: Metropolis-accepted wormhole jumps (seed 002)
  of RBM or continuous variables; never chosen automatically (it needs data).

Importing this module registers both in ``pymc.step_methods.STEP_METHODS``,
the list ``pm.sample`` chooses from by competence (:func:`register`).
Importing :mod:`pymc_rbm.distribution` imports this module, so any model with
an :class:`~pymc_rbm.RBM` variable is sampled with :class:`FlipTheState`
unless told otherwise; ``import pymc_rbm`` alone loads neither (PyMC stays
unloaded until ``pymc_rbm.RBM`` or a step method is first used).

The construction (hidden units as auxiliary state refreshed when the point
changed, the Metropolis correction for other model terms, and their proofs)
is documented in :mod:`pymc_rbm.step_methods.base`.
"""

from pymc_rbm.step_methods.base import RBMStep, RBMStepState, is_rbm_variable, rbm_value_vars
from pymc_rbm.step_methods.flip import FlipTheState
from pymc_rbm.step_methods.gibbs import BlockGibbs
from pymc_rbm.step_methods.tempered import ReplicaExchange
from pymc_rbm.step_methods.wormhole import WormholeMetropolis

__all__ = [
    "BlockGibbs",
    "FlipTheState",
    "RBMStep",
    "RBMStepState",
    "ReplicaExchange",
    "WormholeMetropolis",
    "is_rbm_variable",
    "rbm_value_vars",
    "register",
]


def register() -> None:
    """Add :class:`FlipTheState` and :class:`BlockGibbs` to ``pymc.step_methods.STEP_METHODS`` (once).

    ``pm.sample`` then rates every free variable with their ``competence``:
    ``FlipTheState`` is ``IDEAL`` for RBM variables, ``BlockGibbs``
    ``PREFERRED``; both are ``INCOMPATIBLE`` with anything else, so other
    variables keep their usual samplers.
    """
    from pymc.step_methods import STEP_METHODS

    for method in (ReplicaExchange, FlipTheState, BlockGibbs):
        if method not in STEP_METHODS:
            STEP_METHODS.append(method)


register()

"""PyMC step methods for RBM variables: thin adapters over :mod:`pymc_rbm.kernels`.

- :class:`ExactDraws`: independent exact draws by enumerating the smaller
  layer (an independence proposal when other model terms involve the
  visible units); what ``pm.sample`` assigns to RBM variables with constant
  parameters and a small enough smaller layer that no other term involves,
  or whose other terms are a sum of per-row terms on a visible layer small
  enough to tabulate (:mod:`pymc_rbm.step_methods.enumerated`).
- :class:`ReplicaExchange`: replicas on a ladder of inverse temperatures
  adapted during tuning, the cold one moved by likelihood-informed proposals
  when other model terms involve it; what ``pm.sample`` assigns to the other RBM
  variables with constant parameters (:mod:`pymc_rbm.step_methods.tempered`).
- :class:`FlipTheState`: the flip-the-state operator (Brügge, Fischer & Igel
  2013) and its α mixture with Gibbs; chosen for RBMs whose parameters are
  random variables.
- :class:`BlockGibbs`: block Gibbs sweeps.
- :class:`ImputedCells`: the missing cells of an RBM observed with gaps
  (``<name>_unobserved``), by replica exchange on the RBM with the observed
  cells clamped (:mod:`pymc_rbm.step_methods.imputed`).
- :class:`WormholeMetropolis`: Metropolis-accepted wormhole jumps (Hinton,
  Welling & Mnih 2003) of RBM or continuous variables; never chosen
  automatically (it needs data).

The steps of the other layer types live beside them:
:mod:`pymc_rbm.step_methods.categorical` (for
:class:`~pymc_rbm.categorical.distribution.CategoricalRBM` variables) and
:mod:`pymc_rbm.step_methods.gaussian` (for
:class:`~pymc_rbm.gaussian.distribution.GaussianRBM` variables).

Importing this module registers them all, here and once, in
``pymc.step_methods.STEP_METHODS``, the list ``pm.sample`` chooses from by
competence, and adds the stuck-chain checks of
:mod:`pymc_rbm.step_methods.convergence` to PyMC's convergence checks
(:func:`register`). Each distribution module (:mod:`pymc_rbm.distribution`,
:mod:`pymc_rbm.categorical.distribution`, :mod:`pymc_rbm.gaussian.distribution`)
imports this module, so any model with an RBM variable of any layer type gets
them; ``import pymc_rbm`` alone loads neither (PyMC stays unloaded until a
distribution or a step method is first used).

The construction (hidden units as auxiliary state refreshed when the point
changed, the Metropolis correction for other model terms, and their proofs)
is documented in :mod:`pymc_rbm.step_methods.base`.
"""

from pymc_rbm.step_methods import categorical, convergence, gaussian
from pymc_rbm.step_methods.base import RBMStep, RBMStepState, is_rbm_variable, rbm_value_vars
from pymc_rbm.step_methods.enumerated import ExactDraws
from pymc_rbm.step_methods.flip import FlipTheState
from pymc_rbm.step_methods.gibbs import BlockGibbs
from pymc_rbm.step_methods.imputed import ImputedCells
from pymc_rbm.step_methods.ladder import LadderAdaptation
from pymc_rbm.step_methods.model_ladder import ModelLadder
from pymc_rbm.step_methods.tempered import ReplicaExchange
from pymc_rbm.step_methods.wormhole import WormholeMetropolis

__all__ = [
    "BlockGibbs",
    "ExactDraws",
    "FlipTheState",
    "ImputedCells",
    "LadderAdaptation",
    "ModelLadder",
    "RBMStep",
    "RBMStepState",
    "ReplicaExchange",
    "WormholeMetropolis",
    "is_rbm_variable",
    "rbm_value_vars",
    "register",
]


def register() -> None:
    """Register the step methods and the stuck-chain checks with ``pm.sample`` (once).

    :class:`ExactDraws`, :class:`ReplicaExchange`, :class:`FlipTheState`,
    :class:`BlockGibbs` and :class:`ImputedCells` join
    ``pymc.step_methods.STEP_METHODS``, in that order, then the categorical steps
    (:func:`pymc_rbm.step_methods.categorical.register`) and the Gaussian ones
    (:func:`pymc_rbm.step_methods.gaussian.register`);
    :func:`~pymc_rbm.step_methods.convergence.rbm_convergence_checks`
    runs with PyMC's own convergence checks after sampling.

    ``pm.sample`` then rates every free variable with their ``competence``
    and keeps the first of the most competent: ``ExactDraws`` is ``IDEAL``
    for RBM variables with constant parameters whose smaller layer is small
    enough to enumerate and that no other model term involves, or whose other
    terms are a sum of per-row terms (per-unit evidence, or any likelihood of
    each row) on a visible layer small enough to tabulate
    (:func:`~pymc_rbm.step_methods.enumerated.exact_draws_pay`);
    ``ReplicaExchange`` is ``IDEAL`` for every RBM variable whose parameters
    are constants or data, ``FlipTheState`` (then ``BlockGibbs``)
    ``PREFERRED`` for every RBM variable; ``ImputedCells`` is ``IDEAL`` for
    the missing cells of an RBM observed with gaps; all are ``INCOMPATIBLE`` with
    anything else, so other variables keep their usual samplers. The
    categorical and Gaussian steps are ``INCOMPATIBLE`` with every variable
    but those of their own layer type, so placing them after these changes
    no choice.
    """
    from pymc.step_methods import STEP_METHODS

    for method in (ExactDraws, ReplicaExchange, FlipTheState, BlockGibbs, ImputedCells):
        if method in STEP_METHODS:
            STEP_METHODS.remove(method)
        STEP_METHODS.append(method)  # in this order: among equally competent steps pm.sample keeps the first
    categorical.register()
    gaussian.register()
    convergence.install()


register()

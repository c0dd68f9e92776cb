"""pymc-rbm: restricted Boltzmann machines as first-class citizens of PyMC.

The PyMC layer (:class:`RBM`, the step methods :class:`BlockGibbs`,
:class:`FlipTheState`, :class:`ReplicaExchange`, :class:`ExactDraws` and
:class:`WormholeMetropolis`) is imported lazily,
so that the pure NumPy parts (``pymc_rbm.kernels``, ``pymc_rbm.enumeration``, ``pymc_rbm.testing``)
load without PyMC. Using any of those names loads the PyMC layer and
registers the step methods with ``pm.sample``, which then picks one for RBM
variables by itself: :class:`ExactDraws` or :class:`ReplicaExchange` where
the RBM's parameters are constants, :class:`FlipTheState` where they are
random variables. :class:`CategoricalRBM` (Potts visible units) and
:class:`GaussianRBM` (real visible units) are the other layer types' distributions,
with their parameters :class:`CategoricalRBMParams` and :class:`GaussianRBMParams`.
The subpackages and modules
are attributes too, loaded on first use: ``import pymc_rbm as pr`` then
``pr.estimators.log_partition(...)``, ``pr.training.fit(...)``,
``pr.datasets.load_mnist(...)``.
"""

from pymc_rbm.params import RBMParams, ReLURBMParams, SpinRBMParams

__all__ = [
    "RBM",
    "CategoricalRBM",
    "GaussianRBM",
    "BlockGibbs",
    "ExactDraws",
    "FlipTheState",
    "RBMParams",
    "ReLURBMParams",
    "CategoricalRBMParams",
    "GaussianRBMParams",
    "LadderAdaptation",
    "ModelLadder",
    "ReplicaExchange",
    "SpinRBMParams",
    "WormholeMetropolis",
]
__version__ = "0.1.0"

_LAZY = {
    "RBM": "pymc_rbm.distribution",
    "CategoricalRBM": "pymc_rbm.categorical.distribution",
    "CategoricalRBMParams": "pymc_rbm.categorical",
    "GaussianRBM": "pymc_rbm.gaussian.distribution",
    "GaussianRBMParams": "pymc_rbm.gaussian",
    "BlockGibbs": "pymc_rbm.step_methods",
    "ExactDraws": "pymc_rbm.step_methods",
    "FlipTheState": "pymc_rbm.step_methods",
    "LadderAdaptation": "pymc_rbm.step_methods",
    "ModelLadder": "pymc_rbm.step_methods",
    "ReplicaExchange": "pymc_rbm.step_methods",
    "WormholeMetropolis": "pymc_rbm.step_methods",
}


#: Subpackages and modules loaded on first use, e.g. ``pymc_rbm.training.fit(...)`` or
#: ``pymc_rbm.estimators.log_partition(...)`` after ``import pymc_rbm`` (``jax`` needs JAX installed).
_LAZY_SUBPACKAGES = (
    "categorical",
    "datasets",
    "diagnostics",
    "distribution",
    "energy",
    "enumeration",
    "estimates",
    "estimators",
    "gaussian",
    "jax",
    "kernels",
    "layers",
    "params",
    "step_methods",
    "testing",
    "training",
    "validation",
)


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    if name in _LAZY_SUBPACKAGES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'pymc_rbm' has no attribute {name!r}")


def __dir__():
    # not "jax": introspection (inspect.getmembers) must not fail where JAX is not installed
    return sorted(set(globals()) | set(_LAZY) | set(_LAZY_SUBPACKAGES) - {"jax"})

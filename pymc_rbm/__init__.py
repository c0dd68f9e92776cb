"""pymc-rbm: restricted Boltzmann machines as first-class citizens of PyMC.

The PyMC layer (:class:`RBM`, the step methods :class:`BlockGibbs`,
:class:`FlipTheState` and :class:`WormholeMetropolis`) is imported lazily,
so that the pure NumPy parts (``pymc_rbm.kernels``, ``pymc_rbm.estimators.exact``, ``pymc_rbm.testing``)
load without PyMC. Using any of those names loads the PyMC layer and
registers the step methods with ``pm.sample``, which then samples RBM
variables with :class:`FlipTheState` by itself.
"""

from pymc_rbm.params import RBMParams, SpinRBMParams

__all__ = [
    "RBM",
    "BlockGibbs",
    "FlipTheState",
    "RBMParams",
    "ReplicaExchange",
    "SpinRBMParams",
    "WormholeMetropolis",
]
__version__ = "0.1.0"

_LAZY = {
    "RBM": "pymc_rbm.distribution",
    "BlockGibbs": "pymc_rbm.step_methods",
    "FlipTheState": "pymc_rbm.step_methods",
    "ReplicaExchange": "pymc_rbm.step_methods",
    "WormholeMetropolis": "pymc_rbm.step_methods",
}


#: Subpackages loaded on first use, e.g. ``pymc_rbm.training.fit(...)`` after ``import pymc_rbm``.
_LAZY_SUBPACKAGES = ("training",)


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    if name in _LAZY_SUBPACKAGES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'pymc_rbm' has no attribute {name!r}")

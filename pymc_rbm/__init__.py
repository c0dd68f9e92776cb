"""pymc-rbm: restricted Boltzmann machines as first-class citizens of PyMC.

The PyMC layer (:class:`RBM`) is imported lazily, so that the pure NumPy
parts (``pymc_rbm.kernels``, ``pymc_rbm.estimators.exact``,
``pymc_rbm.testing``) load without PyMC.
"""

from pymc_rbm.params import RBMParams, SpinRBMParams

__all__ = ["RBM", "RBMParams", "SpinRBMParams"]
__version__ = "0.1.0"

_LAZY = {"RBM": "pymc_rbm.distribution"}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'pymc_rbm' has no attribute {name!r}")

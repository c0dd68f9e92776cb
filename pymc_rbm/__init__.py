"""pymc-rbm: restricted Boltzmann machines as first-class citizens of PyMC."""

from pymc_rbm.params import RBMParams, SpinRBMParams

__all__ = ["RBMParams", "SpinRBMParams"]
__version__ = "0.1.0"

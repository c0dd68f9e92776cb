"""pymc-rbm: restricted Boltzmann machines as first-class citizens of PyMC."""

from pymc_rbm.distribution import RBM
from pymc_rbm.params import RBMParams, SpinRBMParams

__all__ = ["RBM", "RBMParams", "SpinRBMParams"]
__version__ = "0.1.0"

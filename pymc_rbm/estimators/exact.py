"""Exact answers by enumeration of the smaller layer: :mod:`pymc_rbm.enumeration`, as the estimators offer them.

The enumeration lives below the estimators, so that the distributions and the
categorical and Gaussian RBMs use it without importing the estimators; this
module names its public objects among theirs (the same objects, not copies).
"""

from pymc_rbm.enumeration import *  # noqa: F403 - the public names, as the enumeration lists them
from pymc_rbm.enumeration import __all__  # noqa: F401

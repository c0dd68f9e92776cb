"""The result types of the estimators: :mod:`pymc_rbm.estimates`, as the estimators offer them.

They live below the estimators, so that the distributions return them without importing the estimators.
"""

from pymc_rbm.estimates import *  # noqa: F403 - the public names, as the result types list them
from pymc_rbm.estimates import __all__  # noqa: F401

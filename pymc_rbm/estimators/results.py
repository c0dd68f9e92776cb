"""The result types of the estimators: :mod:`pymc_rbm.estimates`, as the estimators offer them.

They live below the estimators, so that the distributions return them without importing the estimators.
"""

from pymc_rbm.estimates import LogPartitionEstimate, Moments, fingerprint_of

__all__ = ["LogPartitionEstimate", "Moments", "fingerprint_of"]

"""Exact answers by enumeration of the smaller layer: :mod:`pymc_rbm.enumeration`, as the estimators offer them.

The enumeration lives below the estimators, so that the distributions and the
categorical and Gaussian RBMs use it without importing the estimators; this
module names its public functions among theirs.
"""

from pymc_rbm.enumeration import (
    MAX_ENUMERATION_BITS,
    MAX_ENUMERATION_SECONDS,
    REPEATED_ENUMERATION_BITS,
    EnumerationTooLarge,
    ExactMoments,
    binary_states,
    check_enumerable,
    enumerated_log_weights,
    enumeration_cost,
    log_marginal_visible,
    log_partition_exact,
    moments_exact,
    sample_visible_exact,
    states_at,
)

__all__ = [
    "MAX_ENUMERATION_BITS",
    "REPEATED_ENUMERATION_BITS",
    "MAX_ENUMERATION_SECONDS",
    "EnumerationTooLarge",
    "check_enumerable",
    "enumeration_cost",
    "binary_states",
    "states_at",
    "log_partition_exact",
    "moments_exact",
    "log_marginal_visible",
    "enumerated_log_weights",
    "sample_visible_exact",
    "ExactMoments",
]

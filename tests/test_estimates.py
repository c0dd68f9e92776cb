"""Tests of the result types of the estimators (pymc_rbm.estimates)."""

from __future__ import annotations

import pytest

from pymc_rbm import RBMParams
from pymc_rbm.estimators import log_partition
from pymc_rbm.estimates import KINDS, LogPartitionEstimate


@pytest.mark.parametrize(
    "method, kind, shown",
    [
        ("exact", "exact", ""),
        ("ais", "estimate", " ± "),
        ("tap", "approximation", "an approximation without error bound"),
        ("bethe", "approximation", "an approximation without error bound"),
        ("mean_field", "lower bound", "a lower bound"),
        ("mixture_mean_field", "lower bound", "a lower bound"),
    ],
)
def test_every_estimate_says_what_it_is(method, kind, shown):
    """A deterministic approximation's stderr is 0 as an exact value's is: the kind and the repr tell them apart."""
    p = RBMParams.random(10, 5, scale=0.5, rng=0)
    est = log_partition(p, method, **({"rng": 0, "n_steps": 200} if method == "ais" else {}))
    assert est.kind == kind
    assert shown in repr(est)
    if kind == "exact":
        assert repr(est) == f"LogPartitionEstimate(method='exact', log_z={est.log_z:.6f})"


def test_kind_is_checked():
    assert LogPartitionEstimate(log_z=1.0, method="ais").kind == "estimate"
    assert set(KINDS) == {"estimate", "exact", "approximation", "lower bound"}
    with pytest.raises(ValueError, match="kind must be one of"):
        LogPartitionEstimate(log_z=1.0, method="tap", kind="upper bound")


def test_the_estimators_offer_the_enumeration_and_the_result_types_under_their_own_names():
    """``pymc_rbm.estimators.exact`` and ``.results`` name the objects of the floors below, not copies."""
    import pymc_rbm.enumeration as enumeration
    import pymc_rbm.estimates as estimates
    import pymc_rbm.estimators.exact as exact
    import pymc_rbm.estimators.results as results

    for name in exact.__all__:
        assert getattr(exact, name) is getattr(enumeration, name)
    for name in results.__all__:
        assert getattr(results, name) is getattr(estimates, name)
    assert set(exact.__all__) == set(enumeration.__all__) and set(results.__all__) == set(estimates.__all__)

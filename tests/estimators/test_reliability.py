"""Tests of the reliability checks of RTS and SAMS (pymc_rbm.estimators.reliability)."""

from __future__ import annotations

import pytest


def test_an_estimate_that_left_its_bar_start_warns_and_widens():
    """RTS and SAMS check their estimate against the BAR run they started from (``check_start``)."""
    import warnings

    from pymc_rbm.estimators import LogPartitionEstimate
    from pymc_rbm.estimators.reliability import check_start

    start = LogPartitionEstimate(log_z=10.0, method="bar", stderr=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_start(10.3, 0.1, start, "RTS") == (0.1, True)  # 2.1 standard errors of the difference
        assert check_start(12.0, 0.1, None, "RTS") == (0.1, True)  # no BAR start: nothing to compare
    with pytest.warns(RuntimeWarning, match="RTS: the estimate .* moved -1.00 nats from its BAR start"):
        assert check_start(9.0, 0.1, start, "RTS") == (1.0, False)


def test_the_start_and_the_rounds_are_weighed_by_their_precisions():
    """``combine_with_start``: the inverse-variance mean, with the error bound that holds for any correlation."""
    from pymc_rbm.estimators import LogPartitionEstimate
    from pymc_rbm.estimators.reliability import combine_with_start

    start = LogPartitionEstimate(log_z=10.0, method="bar", stderr=0.1)
    log_z, stderr, weight = combine_with_start(10.3, 0.2, start)
    assert weight == pytest.approx(0.8)  # 0.2² / (0.1² + 0.2²)
    assert log_z == pytest.approx(0.8 * 10.0 + 0.2 * 10.3)
    assert stderr == pytest.approx(0.8 * 0.1 + 0.2 * 0.2)  # correlation one: never below the better one's share
    assert stderr > (0.1**-2 + 0.2**-2) ** -0.5  # wider than for independent estimates
    assert combine_with_start(10.3, 0.2, None) == (10.3, 0.2, 0.0)  # no BAR start: the rounds alone
    exact = LogPartitionEstimate(log_z=10.0, method="bar", stderr=0.0)
    assert combine_with_start(10.3, 0.2, exact) == (10.0, 0.0, 1.0)  # an error-free start decides

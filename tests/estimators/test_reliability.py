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

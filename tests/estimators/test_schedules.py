"""Tests of the β schedules and pilot runs (pymc_rbm.estimators.schedules)."""

from __future__ import annotations

import numpy as np
import pytest

from pymc_rbm.estimators.schedules import check_schedule, default_schedule


def test_default_schedule_is_salakhutdinov_murray():
    b = default_schedule()
    assert b.shape == (14501,)
    assert b[0] == 0.0 and b[-1] == 1.0
    assert b[500] == 0.5 and b[4500] == pytest.approx(0.9) and np.all(np.diff(b) > 0)
    np.testing.assert_allclose(np.diff(b[:501]), 1e-3)
    np.testing.assert_allclose(np.diff(b[501:4501]), 1e-4)
    np.testing.assert_allclose(np.diff(b[4501:]), 1e-5)
    short = default_schedule(145)
    assert short.shape == (146,) and short[5] == 0.5 and short[45] == pytest.approx(0.9)


def test_check_schedule():
    np.testing.assert_array_equal(check_schedule(None), default_schedule())
    np.testing.assert_allclose(check_schedule(4), [0, 0.25, 0.5, 0.75, 1.0])
    np.testing.assert_array_equal(check_schedule([0, 0.5, 0.5, 1]), [0, 0.5, 0.5, 1])  # repeats allowed
    for bad, msg in [
        ([0.1, 0.5, 1.0], "start at"),
        ([0.0, 0.5, 0.9], "end at"),
        ([0.0, 0.6, 0.4, 1.0], "nondecreasing"),
        ([0.0, np.nan, 1.0], "non-finite"),
        ([[0.0, 1.0]], "1-D"),
        ([0.0], "at least 2"),
        (0, "at least 1 step"),
        ("fast", "schedule must be"),
    ]:
        with pytest.raises(ValueError, match=msg):
            check_schedule(bad)
    with pytest.raises(ValueError, match="at least 3"):
        default_schedule(2)

"""Tests of one iteration of SAMS: the gain and the label's local jump (pymc_rbm.estimators.sams_kernel)."""

from __future__ import annotations

import numpy as np
import pytest

from pymc_rbm.estimators.sams_kernel import SAMSGain, _gamma, _neighbours


def test_tan_gain_two_stages():
    g = SAMSGain(2, 4, "tan", 0.6, 0.2, 1.0)
    # first stage: min(π_min, t^-0.6); run 0 alternates over all labels, run 1 stays on label 0
    gains = [g(t, np.array([(t - 1) % 4, 0])) for t in range(1, 9)]
    assert gains[0][1] == pytest.approx(0.25) and gains[7][1] == pytest.approx(min(0.25, 8**-0.6))
    assert g.burn_in_end[0] == 4 and g.burn_in_end[1] == -1  # run 0 was flat after visiting every label once
    # second stage from t_0 = 4: 1 / (t - t_0 + t_0^0.6), continuous at t_0
    assert gains[3][0] == pytest.approx(min(0.25, 1 / 4**0.6))
    assert gains[7][0] == pytest.approx(1 / (8 - 4 + 4**0.6))
    samc = SAMSGain(3, 5, "samc", 0.6, 0.2, 50.0)
    np.testing.assert_allclose(samc(10, np.zeros(3, dtype=int)), 1.0)
    np.testing.assert_allclose(samc(200, np.zeros(3, dtype=int)), 0.25)
    # runs of several chains: each chain's label counts 1/c towards the first stage's histogram
    grouped = SAMSGain(2, 4, "tan", 0.6, 0.2, 1.0)
    grouped(1, np.array([[0, 1, 2, 3], [0, 0, 0, 0]]))
    np.testing.assert_allclose(grouped.counts, [[0.25] * 4, [1.0, 0, 0, 0]])
    assert grouped.burn_in_end[0] == 1 and grouped.burn_in_end[1] == -1
    # a start counted as t_start observations: the optimal gain 1 / (t + t_start) from the first iteration
    started = SAMSGain(2, 4, "tan", 0.6, 0.2, 1.0, t_start=100.0)
    started.burn_in_end[:] = 1.0
    np.testing.assert_allclose(started(1, np.array([0, 3])), 1 / 101)
    np.testing.assert_allclose(started(50, np.array([0, 3])), 1 / 150)
    with pytest.raises(ValueError, match="t_start"):
        SAMSGain(1, 3, "tan", 0.6, 0.2, 1.0, t_start=-1.0)
    with pytest.raises(ValueError, match="gain must be"):
        SAMSGain(1, 3, "wang-landau", 0.6, 0.2, 1.0)
    with pytest.raises(ValueError, match="gain_exponent"):
        SAMSGain(1, 3, "tan", 0.4, 0.2, 1.0)


def test_local_jump_proposal():
    nb, gam = _neighbours(np.array([0, 2, 4]), 5)
    np.testing.assert_array_equal(nb, [[0, 1], [1, 3], [3, 4]])
    np.testing.assert_array_equal(gam, [[0, 1], [0.5, 0.5], [1, 0]])  # seed 004's Γ: 1 at the ends, 1/2 inside
    np.testing.assert_array_equal(_gamma(np.array([0, 1, 3, 4]), 5), [1, 0.5, 0.5, 1])

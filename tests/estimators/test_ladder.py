"""Tests of the ladder of labels of RTS and SAMS (pymc_rbm.estimators.ladder)."""

from __future__ import annotations

import numpy as np
import pytest

from pymc_rbm import RBMParams
from pymc_rbm.estimators import log_partition_exact
from pymc_rbm.estimators.base_rate import base_rate_vbias
from pymc_rbm.estimators.ladder import bar_ladder, build_ladder, check_ladder
from pymc_rbm.estimators.path import AnnealingPath


def _model(nv, nh, scale, seed=0):
    return RBMParams.random(nv, nh, scale=scale, rng=100 * seed + 10 * nv + nh)


def _exact_ladder_log_z(path: AnnealingPath, coefs) -> np.ndarray:
    return np.array([log_partition_exact(path.intermediate(c)).log_z for c in coefs])


def test_check_ladder():
    assert check_ladder(None) is None
    np.testing.assert_allclose(check_ladder(5), [0, 0.25, 0.5, 0.75, 1])
    np.testing.assert_array_equal(check_ladder([0, 0.3, 1]), [0, 0.3, 1])
    for bad, msg in [
        ([0.0, 0.5, 0.5, 1.0], "strictly increasing"),
        ([0.2, 1.0], "start at"),
        ([0.0, 0.9], "end at"),
        ([0.0, np.inf, 1.0], "non-finite"),
        (1, "at least 2"),
        ([[0.0, 1.0]], "1-D"),
        ("uniform", "betas must be"),
    ]:
        with pytest.raises(ValueError, match=msg):
            check_ladder(bad)


def test_build_ladder_auto_and_explicit():
    p = _model(20, 8, 2.0)
    path = AnnealingPath(p, base_rate_vbias(p, base="target"))
    rng = np.random.default_rng(0)
    auto = build_ladder(path, rng, 30, None, n_pilot=400, spacing=0.5)
    assert auto.s[0] == 0.0 and auto.s[-1] == 1.0 and np.all(np.diff(auto.s) > 0)
    assert auto.s.size >= 9 and list(auto.model_labels) == [auto.s.size - 1]
    assert auto.log_z_init[0] == path.log_z_base
    assert auto.log_z_init[-1] == pytest.approx(log_partition_exact(p).log_z, abs=0.5)
    # thermodynamic length: rungs are denser where the log weights change fastest, so a finer spacing gives more
    assert build_ladder(path, rng, 30, None, n_pilot=400, spacing=0.25).s.size > auto.s.size
    assert auto.states.shape == (30, 20) and auto.labels.shape == (30,) and auto.labels.max() == auto.s.size - 1
    wanted = [0.0, 0.1, 0.37, 0.8, 1.0]
    fixed = build_ladder(path, rng, 10, wanted, n_pilot=100)
    np.testing.assert_array_equal(fixed.s, wanted)
    np.testing.assert_allclose(fixed.coefs, path.coefficients(np.array(wanted)))


def test_bar_ladder_starts_every_rung_from_its_own_weighted_states():
    """The BAR start replaces the pilot's guesses and states: chains spread evenly over the rungs, each from
    its rung's states; a path to several models is refused."""
    p = _model(10, 5, 1.0)
    path = AnnealingPath(p, base_rate_vbias(p, None), dtype=np.float64)
    rng = np.random.default_rng(0)
    ladder = build_ladder(path, rng, 30, 6, n_pilot=50)
    warm, start = bar_ladder(path, rng, ladder, 30, n_steps=300, n_equilibrate=5)
    np.testing.assert_array_equal(np.bincount(warm.labels), [5] * 6)
    assert warm.states.shape == (30, 10) and set(np.unique(warm.states)) <= {0.0, 1.0}
    np.testing.assert_array_equal(warm.log_z_init, start.log_z)
    np.testing.assert_array_equal(warm.coefs, ladder.coefs)
    exact = _exact_ladder_log_z(path, ladder.coefs)
    assert np.all(np.abs(start.log_z - exact) < 4 * start.stderr + 1e-9)
    two = AnnealingPath([p, _model(10, 3, 1.0)], np.zeros(10))
    with pytest.raises(ValueError, match="one model"):
        bar_ladder(two, rng, build_ladder(two, rng, 10, 3, n_pilot=20), 10, n_steps=20)

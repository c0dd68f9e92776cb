"""Tests of how the annealing estimators take a model or a path (pymc_rbm.estimators.path_arguments)."""

from __future__ import annotations

import numpy as np
import pytest

from pymc_rbm import RBMParams
from pymc_rbm.estimators import AnnealingPath, PathOptions, ais, annealing_path, bar, rts, sams
from pymc_rbm.estimators.base_rate import base_rate_vbias
from pymc_rbm.estimators.path_arguments import check_states

P = RBMParams.random(12, 6, scale=1.5, rng=3)
DATA = np.random.default_rng(0).integers(0, 2, (50, 12))


@pytest.mark.parametrize("estimator", [ais, bar, rts, sams])
def test_options_given_with_a_path_are_refused(estimator):
    path = annealing_path(P)
    records = estimator in (rts, sams)  # they take the path's options, besides data, as a PathOptions
    other_dtype = np.float32 if estimator is ais else np.float64  # not the estimator's default
    for name, value in [("data", DATA), ("dtype", other_dtype), ("operator", "flip"), ("base", "zero")]:
        given = {"path_options": PathOptions(**{name: value})} if records and name != "data" else {name: value}
        with pytest.raises(ValueError, match=f"{name}.*annealing_path"):
            estimator(path, **given)
    multi = AnnealingPath([P, P], base_rate_vbias(P))
    if estimator is not sams:
        with pytest.raises(ValueError, match="one target"):
            estimator(multi)


def test_states_are_checked_against_the_models_layer():
    """0/1 rows for binary units, ±1 rows for spins, as (n, n_visible); anything else is refused."""
    spin = P.to_spin()
    rows = DATA[:3]
    np.testing.assert_array_equal(check_states(rows, P), rows)
    np.testing.assert_array_equal(check_states(2 * rows[0] - 1, spin), (2 * rows[:1] - 1).astype(float))
    with pytest.raises(ValueError):
        check_states(rows, spin)
    with pytest.raises(ValueError):
        check_states(2 * rows - 1, P)

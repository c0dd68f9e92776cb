"""Mode-coverage checks of the stochastic estimators: a wrong estimate warns, a right one does not."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from pymc_rbm import RBMParams, datasets
from pymc_rbm.estimators import ais, bar, log_partition_exact, reverse_ais
from pymc_rbm.estimators.coverage import check_coverage, mean_field_modes, with_coverage
from pymc_rbm.estimates import LogPartitionEstimate


def _two_modes() -> RBMParams:
    return RBMParams(np.full((12, 8), 1.5), np.full(12, -6.0), np.full(8, -9.0))


def test_mean_field_finds_both_modes_and_which_states_reach_them():
    p = _two_modes()
    m_v, bound, visited, found = mean_field_modes(p, np.zeros((3, 12)))
    assert found.sum() == 2 or found[bound > bound.max() - 0.1].all()
    on = {int(round(m.mean())) for m in m_v[bound > bound.max() - 0.1]}
    assert on == {0, 1}
    zero = np.argmin(np.abs(m_v.mean(axis=1)))
    assert visited[zero] and visited.sum() == 1


@pytest.mark.parametrize("estimator", [ais, bar])
def test_an_estimate_that_sits_on_one_of_two_modes_warns(estimator):
    p = _two_modes()
    exact = log_partition_exact(p).log_z
    with pytest.warns(RuntimeWarning, match="no chain visited"):
        est = estimator(p, n_chains=20, n_steps=300, rng=0)
    assert est.log_z < exact - 0.5  # it is wrong: log 2 off
    assert est.diagnostics["checks"]["missed_nats"] > 0.5
    # its standard error covers the mass it missed; the chains' own (the negative control) does not
    assert abs(est.log_z - exact) <= 3.0 * est.stderr
    assert est.diagnostics["stderr_rule"] == "coverage"
    assert abs(est.log_z - exact) > 10.0 * est.diagnostics["stderr_chains"]
    assert est.interval == pytest.approx((est.log_z - 3.0 * est.stderr, est.log_z + 3.0 * est.stderr))


def test_reverse_ais_from_draws_of_both_modes_is_right_and_quiet():
    p = _two_modes()
    exact = log_partition_exact(p).log_z
    rows = np.repeat(np.array([np.zeros(12), np.ones(12)]), 10, axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        est = reverse_ais(p, rows, schedule=300, rng=0)
    assert abs(est.log_z - exact) < max(4 * est.stderr, 0.1)
    assert est.diagnostics["checks"]["unvisited_modes"] == 0 or est.diagnostics["checks"]["missed_nats"] < 0.05


def test_one_distinct_weight_warns():
    p = RBMParams.random(12, 8, rng=0)
    p = RBMParams(p.W, np.full(12, -1e3), np.full(8, -1e3))
    with pytest.warns(RuntimeWarning, match="same log weight"):
        est = ais(p, n_chains=20, n_steps=100, rng=1)
    assert est.diagnostics["checks"]["distinct_weights"] == 1


def test_an_estimate_below_the_mean_field_bound_warns_and_a_negative_control_does_not():
    p = datasets.bundled_rbm()
    exact = log_partition_exact(p).log_z
    low = LogPartitionEstimate(log_z=exact - 40.0, method="made up", stderr=0.01)
    with pytest.warns(RuntimeWarning, match="below the naive mean-field lower bound"):
        check_coverage(low, p)
    right = LogPartitionEstimate(log_z=exact, method="made up", stderr=0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        checks = check_coverage(right, p)
    assert checks["warnings"] == [] and checks["mean_field_bound"] < exact


def test_with_coverage_widens_an_estimate_below_the_bound_and_returns_a_right_one_as_it_is():
    p = datasets.bundled_rbm()
    exact = log_partition_exact(p).log_z
    low = LogPartitionEstimate(log_z=exact - 40.0, method="made up", stderr=0.01)
    with pytest.warns(RuntimeWarning, match="below the naive mean-field lower bound"):
        widened = with_coverage(low, p)
    bound = widened.diagnostics["checks"]["mean_field_bound"]
    assert widened.stderr == pytest.approx(bound - low.log_z) and widened.diagnostics["stderr_chains"] == 0.01
    assert low.stderr == 0.01 and "stderr_rule" not in low.diagnostics  # the given estimate is not changed
    right = LogPartitionEstimate(log_z=exact, method="made up", stderr=0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert with_coverage(right, p) is right


def test_ais_with_training_data_on_the_bundled_model_is_quiet():
    p = datasets.bundled_rbm()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        est = ais(p, data=datasets.bars_and_stripes(4), n_chains=100, n_steps=2000, rng=0)
    assert abs(est.log_z - log_partition_exact(p).log_z) < max(4 * est.stderr, 0.1)


def test_bar_whose_two_directions_each_rest_on_a_run_or_two_warns():
    """The bundled model without data, seed 17: BAR 1.5 nats high, both directions' weights carried by one or
    two of 100 runs; the better direction's effective sample size is what is checked (the forward weights
    alone were checked only where the reverse runs never moved, and this run was silent)."""
    p = datasets.bundled_rbm()
    with pytest.warns(RuntimeWarning, match="effective sample size of the importance weights"):
        est = bar(p, rng=17)
    d = est.diagnostics
    assert max(d["forward"]["ess"], d["reverse"]["ess"]) < 0.05 * d["n_chains"]
    assert est.log_z - log_partition_exact(p).log_z > 1.0

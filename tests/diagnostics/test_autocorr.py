"""Tests of pymc_rbm.diagnostics.autocorr: τ, ESS and R(Δt) via ArviZ, from arrays and DataTrees."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import xarray as xr

from pymc_rbm.diagnostics import (
    StuckChainWarning,
    autocorrelation,
    chain_draws,
    ess_free_energy,
    integrated_autocorr_time,
)
from pymc_rbm.diagnostics.autocorr import chain_taus, tau_standard_error

from ._chains import ar1, tree


# ------------------------------------------------------------------ τ
@pytest.mark.parametrize("rho", [0.5, 0.8])
@pytest.mark.parametrize("method", ["mean", "identity", "bulk", "ar"])
def test_tau_of_ar1_matches_theory(rho, method):
    x = ar1(rho, n_chains=4, n_draws=50_000, seed=1)
    expected = (1.0 + rho) / (1.0 - rho)
    assert integrated_autocorr_time(x, method=method) == pytest.approx(expected, rel=0.08)
    assert integrated_autocorr_time(x, method=method, combine="mean") == pytest.approx(expected, rel=0.08)


def test_tau_per_chain_shape_and_values():
    x = ar1(0.8, n_chains=3, n_draws=40_000, seed=2)
    taus = integrated_autocorr_time(x, combine="none")
    assert taus.shape == (3,)
    np.testing.assert_allclose(taus, 9.0, rtol=0.15)
    assert integrated_autocorr_time(x, combine="mean") == pytest.approx(taus.mean())


def test_tau_of_iid_is_one():
    x = np.random.default_rng(3).normal(size=(4, 20_000))
    assert integrated_autocorr_time(x) == pytest.approx(1.0, abs=0.05)
    assert integrated_autocorr_time(x, method="ar") == pytest.approx(1.0, abs=0.05)
    # a single chain given as a 1-D array
    assert integrated_autocorr_time(x[0]) == pytest.approx(1.0, abs=0.08)


def test_antithetic_chain_has_tau_below_one():
    x = ar1(-0.5, n_chains=4, n_draws=20_000, seed=4)  # τ = 1/3: ESS > number of draws
    assert integrated_autocorr_time(x) == pytest.approx(1.0 / 3.0, rel=0.1)
    assert ess_free_energy(x) > x.size


def test_stuck_chain_is_infinite_with_a_warning():
    x = np.full((2, 500), -123.25)
    for combine in ("pooled", "mean"):
        with pytest.warns(StuckChainWarning, match="never changed"):
            assert integrated_autocorr_time(x, combine=combine) == math.inf
    with pytest.warns(StuckChainWarning):
        assert ess_free_energy(x) == 0.0


def test_one_stuck_chain_among_moving_ones():
    x = ar1(0.5, n_chains=3, n_draws=5000, seed=5)
    x[1] = 7.0
    with pytest.warns(StuckChainWarning, match="1 of 3 chain"):
        assert integrated_autocorr_time(x) == math.inf
    with pytest.warns(StuckChainWarning):
        taus = integrated_autocorr_time(x, combine="none")
    assert taus[1] == math.inf and np.all(np.isfinite(taus[[0, 2]]))


def test_moving_chains_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        integrated_autocorr_time(ar1(0.5, 2, 1000))


def test_the_stuck_chain_warning_points_at_the_callers_line():
    x = np.full((2, 500), 1.5)
    for measure in (integrated_autocorr_time, ess_free_energy, chain_taus):
        with pytest.warns(StuckChainWarning) as record:
            measure(x)
        assert record[0].filename == __file__, measure.__name__


def test_chain_taus_is_tau_of_chains_already_in_an_array():
    x = ar1(0.6, n_chains=4, n_draws=5000, seed=15)
    for combine in ("pooled", "mean"):
        assert chain_taus(x, combine=combine) == integrated_autocorr_time(x, combine=combine)
    np.testing.assert_array_equal(chain_taus(x, method="ar", combine="none"),
                                  integrated_autocorr_time(x, method="ar", combine="none"))
    with pytest.raises(ValueError, match="combine"):
        chain_taus(x, combine="median")
    with pytest.raises(ValueError, match="method"):
        chain_taus(x, method="geyer")


def test_tau_standard_error_is_the_jackknife_over_chains():
    x = ar1(0.6, n_chains=8, n_draws=5000, seed=16)
    single = chain_taus(x, combine="none")
    assert tau_standard_error(x, combine="mean") == pytest.approx(single.std(ddof=1) / math.sqrt(8))
    assert tau_standard_error(x[:1]) != tau_standard_error(x[:1])  # NaN with one chain
    with pytest.raises(ValueError, match="combine"):
        tau_standard_error(x, combine="none")


# ------------------------------------------------------------ xarray input
def test_datatree_input_reads_sample_stats_free_energy():
    x = ar1(0.8, n_chains=4, n_draws=10_000, seed=6)
    idata = tree(x)
    assert integrated_autocorr_time(idata) == integrated_autocorr_time(x)
    assert integrated_autocorr_time(idata["sample_stats"]["free_energy"]) == integrated_autocorr_time(x)
    assert integrated_autocorr_time(idata["sample_stats"].to_dataset()) == integrated_autocorr_time(x)
    assert ess_free_energy(idata) == pytest.approx(x.size / integrated_autocorr_time(x))


def test_datatree_from_arviz_from_dict():
    from arviz_base import from_dict

    x = ar1(0.5, n_chains=2, n_draws=5000, seed=7)
    idata = from_dict({"posterior": {"mu": np.zeros((2, 5000))}, "sample_stats": {"free_energy": x}})
    assert integrated_autocorr_time(idata) == integrated_autocorr_time(x)


def test_draw_dimension_order_does_not_matter():
    x = ar1(0.8, n_chains=2, n_draws=5000, seed=8)
    da = xr.DataArray(x, dims=("chain", "draw")).transpose("draw", "chain")
    assert integrated_autocorr_time(da) == integrated_autocorr_time(x)


def test_sub_chains_count_as_chains():
    x = ar1(0.8, n_chains=6, n_draws=5000, seed=9)  # 2 chains x 3 sub-chains
    per_draw = x.reshape(2, 3, 5000).transpose(0, 2, 1)  # (chain, draw, sub), as pm.sample stores it
    idata = tree(per_draw, dims=("chain", "draw", "free_energy_dim_0"))
    np.testing.assert_array_equal(chain_draws(idata), x)
    assert integrated_autocorr_time(idata) == integrated_autocorr_time(x)
    assert integrated_autocorr_time(idata, combine="none").shape == (6,)
    assert ess_free_energy(idata, rows="pooled") == pytest.approx(x.size / integrated_autocorr_time(x))
    assert ess_free_energy(idata) == pytest.approx(ess_free_energy(idata, rows="each").sum())


def test_ess_per_second_uses_sampling_time():
    x = ar1(0.5, n_chains=2, n_draws=4000, seed=10)
    idata = tree(x, sampling_time=4.0)
    assert ess_free_energy(idata, per_second=True) == pytest.approx(ess_free_energy(idata) / 4.0)
    with pytest.raises(ValueError, match="sampling_time"):
        ess_free_energy(tree(x), per_second=True)


def test_other_variable_and_group():
    x = ar1(0.5, n_chains=2, n_draws=4000, seed=11)
    idata = tree(x)
    # n_changed is constant in the hand-made tree: stuck
    with pytest.warns(StuckChainWarning, match="n_changed"):
        assert integrated_autocorr_time(idata, var_name="n_changed") == math.inf


def test_clear_errors_for_bad_input():
    idata = tree(ar1(0.5, 2, 100))
    with pytest.raises(ValueError, match="no variable 'energy'.*free_energy"):
        integrated_autocorr_time(idata, var_name="energy")
    with pytest.raises(ValueError, match="no group 'warmup_sample_stats'"):
        integrated_autocorr_time(idata, group="warmup_sample_stats")
    with pytest.raises(ValueError, match="not \\['draw'\\]"):
        integrated_autocorr_time(xr.DataArray(np.zeros((2, 10)), dims=("chain", "step")))
    with pytest.raises(ValueError, match="non-finite"):
        integrated_autocorr_time(np.array([[1.0, np.nan, 2.0, 3.0, 4.0]]))
    with pytest.raises(ValueError, match="at least 4 draws"):
        integrated_autocorr_time(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="method"):
        integrated_autocorr_time(ar1(0.5, 2, 100), method="tail")
    with pytest.raises(ValueError, match="combine"):
        integrated_autocorr_time(ar1(0.5, 2, 100), combine="median")
    with pytest.raises(ValueError, match="order_max"):
        integrated_autocorr_time(ar1(0.5, 2, 100), method="ar", order_max=100)


def test_input_is_not_modified():
    x = ar1(0.5, 2, 1000)
    before = x.copy()
    integrated_autocorr_time(x, method="ar")
    integrated_autocorr_time(x, combine="none")
    np.testing.assert_array_equal(x, before)


def test_ar_estimator_with_a_fixed_order():
    x = ar1(0.8, n_chains=4, n_draws=20_000, seed=15)
    # an AR(1) fit is the true model: τ = (1 + φ) / (1 - φ) with φ ≈ R(1)
    tau = integrated_autocorr_time(x, method="ar", order_max=1)
    phi = autocorrelation(x, max_lag=1)[1]
    assert tau == pytest.approx((1 + phi) / (1 - phi), rel=0.01)
    assert tau == pytest.approx(9.0, rel=0.08)


def test_autocorrelation_of_ar1():
    x = ar1(0.6, n_chains=4, n_draws=20_000, seed=12)
    r = autocorrelation(x, max_lag=3)
    assert r.shape == (4,)
    np.testing.assert_allclose(r, 0.6 ** np.arange(4), atol=0.03)
    assert np.isnan(autocorrelation(np.ones((2, 10)), max_lag=2)).all()


def test_ess_of_a_batched_variable_each_sum_or_pooled():
    """rows="each" is ArviZ's per-element ESS of the stat; the default sums it; "pooled" is about the sum here."""
    from arviz_stats.base import array_stats

    x = np.stack([ar1(0.5, 4, 1000, seed=s) for s in range(5)], axis=-1)  # 4 chains, 5 rows, τ = 3
    idata = tree(x, dims=("chain", "draw", "free_energy_dim_0"))
    each = ess_free_energy(idata, rows="each")
    assert each.shape == (5,)
    for r in range(5):
        assert each[r] == pytest.approx(float(array_stats.ess(x[:, :, r], chain_axis=0, draw_axis=1, method="mean")))
    assert ess_free_energy(idata) == pytest.approx(each.sum()) and ess_free_energy(idata, rows="sum") == ess_free_energy(idata)
    pooled = ess_free_energy(idata, rows="pooled")  # one distribution in every row: pooling is about the sum
    assert pooled == pytest.approx(each.sum(), rel=0.15)
    assert pooled == pytest.approx(x.size / 3.0, rel=0.15) and each.mean() == pytest.approx(4000 / 3.0, rel=0.15)
    np.testing.assert_allclose(ess_free_energy(x, rows="each"), each)  # a plain array, (chain, draw, row)
    np.testing.assert_allclose(ess_free_energy(x, rows="each", method="ar"), 4000 / 3.0, rtol=0.15)
    with pytest.raises(ValueError, match="rows must be"):
        ess_free_energy(idata, rows="mean")


def test_ess_of_rows_with_their_own_means_is_the_sum_of_the_rows():
    """Rows with their own data have their own mean of F: the default counts each row for itself, pooling collapses."""
    means = np.linspace(-40.0, 40.0, 20)  # 20 rows, F about its own mean in each
    x = np.stack([ar1(0.5, 2, 2000, seed=100 + r) + means[r] for r in range(20)], axis=-1)  # (chain, draw, row)
    before = x.copy()
    each = ess_free_energy(x, rows="each")
    assert each.shape == (20,) and each.mean() == pytest.approx(4000 / 3.0, rel=0.1)  # τ = 3 in every row
    assert ess_free_energy(x) == pytest.approx(each.sum(), rel=0.2)
    assert ess_free_energy(x) == pytest.approx(20 * 4000 / 3.0, rel=0.2)
    # the pooled ESS counts the differences between the rows' means against mixing, as an R-hat failure
    assert ess_free_energy(x, rows="pooled") < 0.05 * each.sum()
    # the sum is unchanged by shifting a row, as it is with one distribution in every row
    assert ess_free_energy(x - means) == pytest.approx(ess_free_energy(x))
    np.testing.assert_array_equal(x, before)


def test_ess_per_row_of_a_stuck_row_is_zero():
    x = np.stack([ar1(0.5, 2, 500), np.ones((2, 500)), ar1(0.5, 2, 500, seed=1)], axis=-1)
    x[1, :, 2] = 3.0  # row 2: one chain never moved
    with pytest.warns(StuckChainWarning, match=r"2 of 3 row\(s\) of free_energy had a chain that never changed.*rows \[1, 2\]"):
        each = ess_free_energy(x, rows="each")
    assert each[1] == each[2] == 0.0 and each[0] > 100
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        total = ess_free_energy(x)
    assert total == each[0] and len(caught) == 1  # one warning for all rows
    with pytest.warns(StuckChainWarning):
        assert ess_free_energy(x, rows="pooled") == 0.0

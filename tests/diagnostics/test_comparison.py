"""Tests of pymc_rbm.diagnostics.comparison: samplers side by side (Brügge, Fischer & Igel 2013, Table 2)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pymc_rbm.diagnostics import SamplerComparison, StuckChainWarning, compare_samplers, integrated_autocorr_time

from ._chains import ar1, tree


def test_compare_samplers_table_contents():
    gibbs, flip = ar1(0.8, 8, 20_000, seed=13), ar1(0.6, 8, 20_000, seed=14)
    table = compare_samplers({"Gibbs": gibbs, "flip": flip}, problem="AR(1)")
    assert isinstance(table, SamplerComparison)
    assert table.samplers == ("Gibbs", "flip") and table.problems == ("AR(1)",)
    assert table.tau.shape == (1, 2)
    assert table.tau[0, 0] == integrated_autocorr_time(gibbs)
    assert table.tau[0, 1] == integrated_autocorr_time(flip)
    np.testing.assert_allclose(table.tau, [[9.0, 4.0]], rtol=0.1)
    assert table.gain[0, 0] == pytest.approx(1.0 - table.tau[0, 1] / table.tau[0, 0])
    assert table.gain[0, 0] == pytest.approx(1.0 - 4.0 / 9.0, abs=0.06)
    # jackknife over chains (8 chains: delete one at a time)
    loo = np.array([integrated_autocorr_time(np.delete(gibbs, k, axis=0)) for k in range(8)])
    assert table.tau_se[0, 0] == pytest.approx(math.sqrt(7 / 8 * np.sum((loo - loo.mean()) ** 2)))
    by_mean = compare_samplers({"Gibbs": gibbs, "flip": flip}, combine="mean")
    se = np.std(integrated_autocorr_time(gibbs, combine="none"), ddof=1) / math.sqrt(8)
    assert by_mean.tau_se[0, 0] == pytest.approx(se)
    assert np.all(table.gain_se > 0.0)
    np.testing.assert_array_equal(table.n_chains, [[8, 8]])
    np.testing.assert_array_equal(table.n_draws, [[20_000, 20_000]])

    text = str(table)
    lines = text.splitlines()
    header = next(line for line in lines if line.startswith("problem"))
    assert "τ Gibbs" in header and "τ flip" in header and "gain flip vs Gibbs" in header
    row = next(line for line in lines if line.startswith("AR(1)"))
    assert f"{table.tau[0, 0]:.2f}" in row and f"{table.tau[0, 1]:.2f}" in row
    assert f"{100 * table.gain[0, 0]:.2f}" in row and row.endswith("%")
    assert "free_energy" in lines[0] and "'mean'" in lines[0]


def test_compare_samplers_several_problems_and_extra_columns():
    traces = {
        "easy": {"G": ar1(0.5, 4, 5000, 1), "T": ar1(0.3, 4, 5000, 2), "T0.5": ar1(0.4, 4, 5000, 3)},
        "hard": {"G": ar1(0.9, 4, 5000, 4), "T": ar1(0.8, 4, 5000, 5), "T0.5": ar1(0.85, 4, 5000, 6)},
    }
    table = compare_samplers(traces, combine="mean", quantity="E(v, h)")
    assert table.problems == ("easy", "hard") and table.samplers == ("G", "T", "T0.5")
    assert table.tau.shape == (2, 3) and table.gain.shape == (2, 2)
    assert np.all(table.gain > 0.0)
    assert table.tau[1, 0] == integrated_autocorr_time(traces["hard"]["G"], combine="mean")
    text = table.format({"paper": ["-", "17.28 %"]})
    assert "E(v, h)" in text and "mean of single-chain τ" in text
    assert text.splitlines()[-2].rstrip().endswith("17.28 %")
    with pytest.raises(ValueError, match="2 problems"):
        table.format({"paper": ["only one"]})


def test_compare_samplers_standard_errors_cover_the_truth():
    # 40 chains -> 20 jackknife groups; the true τ lies within a few standard errors
    table = compare_samplers({"a": ar1(0.8, 40, 5000, 21), "b": ar1(0.5, 40, 5000, 22)})
    assert np.all(np.abs(table.tau - [[9.0, 3.0]]) < 4 * table.tau_se)
    assert np.all(table.tau_se < 0.1 * table.tau)


def test_compare_samplers_accepts_datatrees_and_sequences():
    a, b = ar1(0.7, 2, 4000, 1), ar1(0.2, 2, 4000, 2)
    by_tree = compare_samplers([tree(a), tree(b)], labels=["G", "T"])
    by_array = compare_samplers({"G": a, "T": b})
    np.testing.assert_array_equal(by_tree.tau, by_array.tau)
    assert compare_samplers([a, b]).samplers == ("0", "1")


def test_compare_samplers_stuck_sampler():
    with pytest.warns(StuckChainWarning):
        table = compare_samplers({"G": ar1(0.5, 2, 1000), "stuck": np.zeros((2, 1000))})
    assert table.tau[0, 1] == math.inf and table.gain[0, 0] == -math.inf
    assert "inf" in str(table)


def test_compare_samplers_errors():
    with pytest.raises(ValueError, match="at least two samplers"):
        compare_samplers({"G": ar1(0.5, 2, 100)})
    with pytest.raises(ValueError, match="samplers"):
        compare_samplers({"p": {"G": ar1(0.5, 2, 100), "T": ar1(0.5, 2, 100)}, "q": {"G": ar1(0.5, 2, 100)}})
    with pytest.raises(ValueError, match="labels"):
        compare_samplers([ar1(0.5, 2, 100)] * 2, labels=["only"])
    with pytest.raises(ValueError, match="combine"):
        compare_samplers([ar1(0.5, 2, 100)] * 2, combine="none")


"""Tests of pymc_rbm.diagnostics.mixing: stuck chains, disagreeing chains and dead ladders, in words."""

from __future__ import annotations

import math

import numpy as np
import pytest
import xarray as xr

from pymc_rbm import RBMParams
from pymc_rbm.diagnostics import ess_free_energy, integrated_autocorr_time


def _mixed(rng, n_chains=4, n_draws=400, n=6):
    return (rng.random((n_chains, n_draws, n)) < 0.3).astype(np.int64)


def test_mixing_problems_see_nothing_in_well_mixed_chains():
    from pymc_rbm.diagnostics import mixing_problems

    rng = np.random.default_rng(0)
    draws = _mixed(rng)
    assert mixing_problems(draws, draws.sum(axis=-1) + rng.normal(0, 0.1, draws.shape[:2])) == []


def test_mixing_problems_name_a_stuck_chain():
    from pymc_rbm.diagnostics import mixing_problems

    draws = _mixed(np.random.default_rng(1))
    draws[2] = draws[2, 0]
    (msg,) = mixing_problems(draws, name="img")
    assert "'img' did not move in chain(s) [2]" in msg and "else ReplicaExchange" in msg
    (msg,) = mixing_problems(draws, name="img", tempered=True)
    assert "more rungs" in msg


def test_mixing_problems_accept_a_concentrated_distribution():
    """Every chain holds the same state (they started apart): the data settled it; that is no stuck chain."""
    from pymc_rbm.diagnostics import mixing_problems

    draws = np.zeros((4, 200, 3, 5), dtype=np.int64)
    draws[:, :, 1] = (np.random.default_rng(4).random((4, 200, 5)) < 0.5)  # row 1 mixes, rows 0 and 2 settled
    draws[1, 50:, 2, 0] = 1  # row 2: chain 1 moves to a second state that the others never see...
    fe = draws.sum(axis=-1).astype(float)
    msgs = mixing_problems(draws, fe)
    (msg,) = msgs  # the held state was also seen by the moving chain: R-hat has nothing to add
    assert "did not move in chain(s) [0, 2, 3]" in msg
    draws[:, :, 2] = 0  # ... and without it nothing is wrong
    assert mixing_problems(draws, draws.sum(axis=-1).astype(float)) == []


def test_mixing_problems_see_chains_in_different_modes():
    from pymc_rbm.diagnostics import RHAT_LIMIT, mixing_problems

    rng = np.random.default_rng(2)
    modes = np.array([[1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1]])
    draws = np.repeat(modes[[0, 1, 0, 1]][:, None], 300, axis=1)
    noise = rng.random(draws.shape) < 0.05  # each chain wanders a little around its mode
    draws = np.where(noise, 1 - draws, draws)
    # different free energies: R-hat
    fe = draws @ np.array([1.0, 1, 1, 0, 0, 0]) * 3.0 + rng.normal(0, 0.1, draws.shape[:2])
    (msg,) = mixing_problems(draws, fe)
    assert "R-hat" in msg and f"> {RHAT_LIMIT}" in msg
    # equal free energies (symmetric modes): the chains' state frequencies still tell them apart
    fe_equal = draws.sum(axis=-1) + rng.normal(0, 0.1, draws.shape[:2])
    (msg,) = mixing_problems(draws, fe_equal)
    assert "visit different states" in msg


def test_mixing_problems_of_a_ladder():
    from pymc_rbm.diagnostics import mixing_problems

    rng = np.random.default_rng(3)
    draws = _mixed(rng, n_chains=2, n_draws=100)
    pairs = np.full((2, 100, 7), np.nan)
    pairs[:, :, :3] = 0.4
    pairs[1, :, 1] = 0.0  # chain 1: rungs 1 and 2 never swap
    k = np.full((2, 100), 4)
    trips = np.zeros((2, 100), dtype=int)
    trips[1] = 5
    msgs = mixing_problems(draws, swap_accept_pairs=pairs, n_temperatures=k, round_trips=trips)
    assert any("chain 1: the pair(s) of rungs [1] never swapped" in m for m in msgs)
    (crossed,) = [m for m in msgs if "chain 0: no replica crossed the ladder" in m]
    assert "Tuning found so too" not in crossed
    # a ladder that tuning found to carry nothing: the message says the draws rest on the model's replica
    carries = np.ones((2, 100), dtype=bool)
    carries[0] = False
    msgs = mixing_problems(draws, swap_accept_pairs=pairs, n_temperatures=k, round_trips=trips,
                           ladder_carries=carries)
    (crossed,) = [m for m in msgs if "chain 0: no replica crossed the ladder" in m]
    assert "Tuning found so too" in crossed and "rest on its own moves" in crossed
    tree = _as_tree(draws, swap_accept_pairs=pairs, n_temperatures=k, round_trips=trips, ladder_carries=carries)
    assert mixing_problems(tree) == msgs  # read from pm.sample's stats
    collapsed = mixing_problems(draws, swap_accept_pairs=pairs, n_temperatures=np.ones((2, 100)), round_trips=trips)
    assert collapsed == []


def _as_tree(draws, **stats) -> xr.DataTree:
    """A DataTree shaped like pm.sample's output: the draws as posterior 'v', the given sample stats."""
    n_chains, n_draws = draws.shape[:2]
    coords = {"chain": np.arange(n_chains), "draw": np.arange(n_draws)}
    unit_dims = tuple(f"v_dim_{k}" for k in range(draws.ndim - 2))
    posterior = xr.Dataset({"v": (("chain", "draw", *unit_dims), draws)}, coords=coords)
    sample_stats = xr.Dataset(
        {key: (("chain", "draw", *(f"{key}_dim_{k}" for k in range(value.ndim - 2))), value)
         for key, value in stats.items()},
        coords=coords,
    )
    return xr.DataTree.from_dict({"posterior": posterior, "sample_stats": sample_stats})


def test_mixing_problems_read_a_datatree_as_the_arrays():
    """pm.sample's DataTree gives the same messages as the arrays it holds (draws, F(v), ladder stats)."""
    from pymc_rbm.diagnostics import mixing_problems

    rng = np.random.default_rng(2)
    modes = np.array([[1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1]])
    draws = np.repeat(modes[[0, 1, 0, 1]][:, None], 300, axis=1)
    draws = np.where(rng.random(draws.shape) < 0.05, 1 - draws, draws)
    fe = draws @ np.array([1.0, 1, 1, 0, 0, 0]) * 3.0 + rng.normal(0, 0.1, draws.shape[:2])
    expected = mixing_problems(draws, fe)
    assert len(expected) == 1 and "R-hat" in expected[0]
    assert mixing_problems(_as_tree(draws, free_energy=fe)) == expected
    assert mixing_problems(_as_tree(draws, free_energy=fe)["posterior"].to_dataset(), fe) == expected

    ladder = _mixed(rng, n_chains=2, n_draws=100)
    pairs = np.full((2, 100, 7), np.nan)
    pairs[:, :, :3] = 0.4
    pairs[1, :, 1] = 0.0
    k, trips = np.full((2, 100), 4), np.zeros((2, 100), dtype=int)
    trips[1] = 5
    from_arrays = mixing_problems(ladder, swap_accept_pairs=pairs, n_temperatures=k, round_trips=trips, tempered=True)
    idata = _as_tree(ladder, swap_accept_pairs=pairs, n_temperatures=k, round_trips=trips)
    assert mixing_problems(idata) == from_arrays and len(from_arrays) == 2


def test_mixing_problems_name_what_a_datatree_lacks():
    from pymc_rbm.diagnostics import mixing_problems

    idata = _as_tree(_mixed(np.random.default_rng(0)))
    with pytest.raises(ValueError, match=r"no variable 'x'.*name=.*\['v'\]"):
        mixing_problems(idata, name="x")
    with pytest.raises(ValueError, match="no group 'posterior'"):
        mixing_problems(xr.DataTree.from_dict({"sample_stats": idata["sample_stats"].to_dataset()}))


def test_mixing_problems_take_pm_sample_output():
    """The DataTree pm.sample returns, as its neighbours in this module take it."""
    import pymc as pm

    from pymc_rbm import RBM, FlipTheState
    from pymc_rbm.diagnostics import mixing_problems

    p = RBMParams.random(6, 4, scale=0.3, rng=0)
    with pm.Model():
        v = RBM("v", p.W, p.vbias, p.hbias, shape=(2, 6))
        idata = pm.sample(draws=200, tune=50, chains=2, cores=1, step=FlipTheState([v]), progressbar=False,
                          compute_convergence_checks=False, random_seed=1)
    draws = idata.posterior["v"].values
    fe = idata.sample_stats["free_energy"].values
    assert mixing_problems(idata) == mixing_problems(draws, fe) == []
    assert integrated_autocorr_time(idata) < math.inf and ess_free_energy(idata) > 0



# ------------------------------------------------------------ unit_diagnostics
def _unit_draws():
    """(chain, draw, row, unit) draws with a moving unit, a unit always on, and a unit each chain holds apart."""
    rng = np.random.default_rng(5)
    v = (rng.random((2, 300, 2, 3)) < 0.4).astype(np.int8)
    v[:, :, :, 1] = 1  # never changes
    v[0, :, 1, 2], v[1, :, 1, 2] = 0, 1  # row 1, unit 2: each chain holds its own value
    return xr.DataArray(v, dims=("chain", "draw", "v_dim_0", "v_dim_1"), coords={"v_dim_0": [10, 11]})


def test_unit_diagnostics_set_constant_units_apart_quietly():
    import warnings

    from arviz_stats.base import array_stats

    from pymc_rbm.diagnostics import unit_diagnostics

    draws = _unit_draws()
    before = draws.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # ArviZ alone warns for each constant unit
        d = unit_diagnostics(draws)
    assert d["rhat"].dims == ("v_dim_0", "v_dim_1") and list(d["v_dim_0"].values) == [10, 11]
    np.testing.assert_array_equal(d["constant"], [[False, True, False], [False, True, False]])
    np.testing.assert_allclose(d["mean"], draws.mean(("chain", "draw")))
    assert np.isnan(d["rhat"][:, 1]).all() and np.isnan(d["ess_bulk"][:, 1]).all()
    assert d["rhat"][1, 2] == math.inf and d["ess_bulk"][1, 2] == 0.0  # chains disagree, none moves
    series = draws.values[:, :, 0, 0].astype(float)  # a moving unit: ArviZ's own numbers
    assert d["rhat"][0, 0] == pytest.approx(float(array_stats.rhat(series, chain_axis=0, draw_axis=1)))
    assert d["ess_bulk"][0, 0] == pytest.approx(float(array_stats.ess(series, chain_axis=0, draw_axis=1)))
    xr.testing.assert_identical(draws, before)


def test_unit_diagnostics_read_a_datatree_and_name_bad_input():
    from pymc_rbm.diagnostics import unit_diagnostics

    draws = _unit_draws()
    tree = xr.DataTree.from_dict({"posterior": xr.Dataset({"v": draws})})
    xr.testing.assert_identical(unit_diagnostics(tree), unit_diagnostics(draws))
    xr.testing.assert_identical(unit_diagnostics(tree["posterior"].to_dataset()), unit_diagnostics(draws))
    with pytest.raises(ValueError, match="no variable 'w'"):
        unit_diagnostics(tree, "w")
    with pytest.raises(ValueError, match="no group 'prior'"):
        unit_diagnostics(tree, group="prior")
    with pytest.raises(ValueError, match=r"not \['chain'\]"):
        unit_diagnostics(draws.rename(chain="c"))
    with pytest.raises(TypeError, match="DataTree, Dataset or DataArray"):
        unit_diagnostics(draws.values)

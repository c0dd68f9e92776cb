"""Tests of pymc_rbm.diagnostics: τ / ESS via ArviZ, comparisons, exact SLEM, class changes."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import xarray as xr
from scipy.signal import lfilter

from pymc_rbm import RBMParams
from pymc_rbm.datasets import AMBIGUOUS, artificial_mode_prototypes, classify_modes
from pymc_rbm.diagnostics import (
    NO_CHANGE,
    SamplerComparison,
    StuckChainWarning,
    autocorrelation,
    chain_draws,
    class_changes,
    compare_samplers,
    ess_free_energy,
    exact_slem,
    integrated_autocorr_time,
)
from pymc_rbm.testing import MAX_JOINT_UNITS, slem, transition_matrix


def ar1(rho: float, n_chains: int, n_draws: int, seed: int = 0) -> np.ndarray:
    """Stationary AR(1) chains ``x_t = ρ x_{t-1} + ε_t``, shape (n_chains, n_draws); τ = (1 + ρ) / (1 - ρ)."""
    rng = np.random.default_rng(seed)
    eps = rng.normal(size=(n_chains, n_draws))
    x0 = rng.normal(size=n_chains) / math.sqrt(1.0 - rho * rho)  # start in the stationary law
    x, _ = lfilter([1.0], [1.0, -rho], eps, axis=1, zi=(rho * x0)[:, None])
    return x


def tree(free_energy: np.ndarray, dims=("chain", "draw"), **attrs) -> xr.DataTree:
    """A DataTree shaped like pm.sample's output, built by hand."""
    n_chains, n_draws = free_energy.shape[:2]
    posterior = xr.Dataset(
        {"v": (("chain", "draw", "v_dim_0"), np.zeros((n_chains, n_draws, 3)))},
        coords={"chain": np.arange(n_chains), "draw": np.arange(n_draws)},
        attrs=attrs,
    )
    stats = xr.Dataset(
        {"free_energy": (dims, free_energy), "n_changed": (("chain", "draw"), np.ones((n_chains, n_draws)))},
        coords={"chain": np.arange(n_chains), "draw": np.arange(n_draws)},
    )
    return xr.DataTree.from_dict({"posterior": posterior, "sample_stats": stats})


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
    assert ess_free_energy(idata) == pytest.approx(x.size / integrated_autocorr_time(x))


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


# -------------------------------------------------------------- comparison
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


# ------------------------------------------------------------------- SLEM
@pytest.mark.parametrize("kernel", ["gibbs", "flip", 0.5, 0.0, 1.0])
def test_exact_slem_equals_testing_slem(kernel):
    params = RBMParams.random(3, 2, scale=4.0, rng=5)
    assert exact_slem(params, kernel) == slem(transition_matrix(params, kernel))
    assert exact_slem(params, kernel, beta=0.5) == slem(transition_matrix(params, kernel, beta=0.5))


def test_exact_slem_orders_operators_on_strong_weights():
    # seed 000 Fig. 3: with large weights T usually mixes faster than G
    params = RBMParams.random(3, 3, scale=8.0, bias_scale=0.0, rng=2)
    assert exact_slem(params, "flip") < exact_slem(params, "gibbs") < 1.0


def test_exact_slem_refuses_large_models():
    params = RBMParams.random(MAX_JOINT_UNITS, 1, rng=0)
    with pytest.raises(ValueError, match=r"2\*\*11 joint states.*integrated_autocorr_time"):
        exact_slem(params)
    with pytest.raises(ValueError, match="kernel"):
        exact_slem(RBMParams.random(2, 2, rng=0), "metropolis")
    with pytest.raises(ValueError, match="alpha"):
        exact_slem(RBMParams.random(2, 2, rng=0), 1.5)


# ---------------------------------------------------------- class changes
MODES = artificial_mode_prototypes()


def ambiguous_state() -> np.ndarray:
    """Top two rows on: Hamming distance 8 to every mode."""
    v = np.zeros(16, dtype=np.uint8)
    v[:8] = 1
    return v


def noisy(mode: int, pixel: int) -> np.ndarray:
    v = MODES[mode].copy()
    v[pixel] ^= 1
    return v


def test_hand_made_states_classify_as_intended():
    assert classify_modes(ambiguous_state()) == AMBIGUOUS
    assert classify_modes(noisy(2, 5)) == 2


def test_class_changes_with_ambiguous_samples():
    amb = ambiguous_state()
    # classes: 0, ?, 0, 1, ?, ?, 1, 2
    chain = np.stack([MODES[0], amb, noisy(0, 3), MODES[1], amb, amb, noisy(1, 0), MODES[2]])
    out = class_changes(chain)
    assert out.n_changes == 2  # 0 -> 1 and 1 -> 2; the ambiguous ones are discarded
    assert out.first_change == 3
    assert out.n_ambiguous == 3


def test_class_changes_edge_cases():
    amb = ambiguous_state()
    start_ambiguous = np.stack([amb, MODES[2], MODES[2], MODES[3]])
    all_ambiguous = np.stack([amb] * 4)
    constant = np.stack([MODES[1]] * 4)
    back_and_forth = np.stack([MODES[3], MODES[2], MODES[3], MODES[2]])
    out = class_changes(np.stack([start_ambiguous, all_ambiguous, constant, back_and_forth]))
    np.testing.assert_array_equal(out.n_changes, [1, 0, 0, 3])
    np.testing.assert_array_equal(out.first_change, [3, NO_CHANGE, NO_CHANGE, 1])
    np.testing.assert_array_equal(out.n_ambiguous, [1, 4, 0, 0])


def test_class_changes_batch_shapes_and_labels():
    labels = np.array([[[0, -1, 0, 1], [2, 2, 2, 2], [-1, 3, -1, 0]]])  # (1, 3, n_steps)
    out = class_changes(labels, classify=None)
    assert out.n_changes.shape == (1, 3)
    np.testing.assert_array_equal(out.n_changes, [[1, 0, 1]])
    np.testing.assert_array_equal(out.first_change, [[3, NO_CHANGE, 3]])
    np.testing.assert_array_equal(out.n_ambiguous, [[1, 0, 2]])
    # the same through states
    states = MODES[np.where(labels < 0, 0, labels)].copy()
    states[labels < 0] = ambiguous_state()
    got = class_changes(states)
    for a, b in zip(got, out):
        np.testing.assert_array_equal(a, b)


def test_class_changes_of_a_dataarray():
    chains = np.stack([MODES[[0, 0, 1, 1, 1]], MODES[[2, 3, 2, 3, 2]]])  # (chain, draw, unit)
    da = xr.DataArray(chains, dims=("chain", "draw", "v_dim_0"))
    out = class_changes(da)
    np.testing.assert_array_equal(out.n_changes, [1, 4])
    np.testing.assert_array_equal(out.first_change, [2, 1])
    moved = class_changes(da.transpose("v_dim_0", "draw", "chain"), unit_dim="v_dim_0")
    np.testing.assert_array_equal(moved.n_changes, [1, 4])
    with pytest.raises(ValueError, match="unit_dim"):
        class_changes(da.transpose("chain", "v_dim_0", "draw"))


def test_class_changes_errors():
    with pytest.raises(ValueError, match="16"):
        class_changes(np.zeros((5, 10)))
    with pytest.raises(ValueError, match="n_steps, n_visible"):
        class_changes(np.zeros(16))
    with pytest.raises(ValueError, match="integer class labels"):
        class_changes(np.zeros((2, 5)), classify=None)
    with pytest.raises(ValueError, match="draw"):
        class_changes(xr.DataArray(np.zeros((5, 16)), dims=("step", "unit")))


# ------------------------------------------------------- mixing problems
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
    assert any("chain 0: no replica crossed the ladder" in m for m in msgs)
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


def test_ess_of_a_batched_variable_pooled_or_per_row():
    """rows="each" is ArviZ's per-element ESS of the stat; "pooled" counts all rows, about their sum."""
    from arviz_stats.base import array_stats

    x = np.stack([ar1(0.5, 4, 1000, seed=s) for s in range(5)], axis=-1)  # 4 chains, 5 rows, τ = 3
    idata = tree(x, dims=("chain", "draw", "free_energy_dim_0"))
    each = ess_free_energy(idata, rows="each")
    assert each.shape == (5,)
    for r in range(5):
        assert each[r] == pytest.approx(float(array_stats.ess(x[:, :, r], chain_axis=0, draw_axis=1, method="mean")))
    pooled = ess_free_energy(idata)
    assert pooled == pytest.approx(each.sum(), rel=0.15)
    assert pooled == pytest.approx(x.size / 3.0, rel=0.15) and each.mean() == pytest.approx(4000 / 3.0, rel=0.15)
    np.testing.assert_allclose(ess_free_energy(x, rows="each"), each)  # a plain array, (chain, draw, row)
    with pytest.raises(ValueError, match="rows must be"):
        ess_free_energy(idata, rows="mean")


def test_ess_per_row_of_a_stuck_row_is_zero():
    x = np.stack([ar1(0.5, 2, 500), np.ones((2, 500))], axis=-1)
    with pytest.warns(StuckChainWarning):
        each = ess_free_energy(x, rows="each")
    assert each[1] == 0.0 and each[0] > 100

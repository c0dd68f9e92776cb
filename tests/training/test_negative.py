"""Negative phases at fixed parameters sample the model: persistent chains and PT ladders against enumeration."""

import numpy as np
import pytest

from pymc_rbm import RBMParams
from pymc_rbm.estimators import log_marginal_visible
from pymc_rbm.testing import assert_frequencies, state_index
from pymc_rbm.training import (
    contrastive_divergence,
    parallel_tempering,
    persistent_contrastive_divergence,
)
from pymc_rbm.kernels.operators import build_operator
from pymc_rbm.kernels.tempering import uniform_ladder

PARAMS = RBMParams(
    np.array([[2.0, -1.5], [1.8, 1.0], [-2.2, 0.5]]), np.array([-0.5, 0.3, 0.4]), np.array([0.2, -0.6])
)
START = np.array([[1, 1, 1], [0, 0, 0]])


def visible_counts(v):
    return np.bincount(state_index(v), minlength=2 ** v.shape[-1])


@pytest.mark.parametrize(
    "phase",
    [
        persistent_contrastive_divergence(build_operator("flip"), k=2, n_chains=3000),
        persistent_contrastive_divergence(build_operator(0.3), k=1, n_chains=3000),
        parallel_tempering(build_operator("gibbs"), k=1, betas=uniform_ladder(3), n_chains=3000),
        parallel_tempering(build_operator("flip"), k=2, betas=[0.2, 0.6, 1.0], n_chains=3000),
    ],
    ids=["pcd-flip", "pcd-alpha", "pt-gibbs", "pt-flip"],
)
def test_persistent_negative_phases_sample_the_model(phase):
    rng = np.random.default_rng(0)
    chains = phase.init(rng, START, PARAMS)
    for _ in range(40):
        stats, chains, info = phase.step(rng, chains, PARAMS, START)
    v = chains.v if chains.v.ndim == 2 else chains.v[-1]
    p = np.exp(log_marginal_visible(PARAMS))
    assert_frequencies(visible_counts(v), p)
    # the statistics are those of the β = 1 samples, with h summed out
    np.testing.assert_allclose(stats.v, v.mean(axis=0))
    if phase.name == "pt":
        assert 0.0 < info["swap_accept"] <= 1.0


def test_cd_starts_at_the_batch_and_has_no_chains():
    phase = contrastive_divergence(build_operator("gibbs"), k=1)
    rng = np.random.default_rng(1)
    assert phase.init(rng, START, PARAMS) is None
    batch = np.repeat(START, 500, axis=0)
    stats, chains, info = phase.step(rng, None, PARAMS, batch)
    assert chains is None and info == {}
    assert stats.v.shape == (3,) and stats.vh.shape == (3, 2)


def test_pcd_chains_start_at_training_rows_batch_sized_by_default():
    phase = persistent_contrastive_divergence(build_operator("gibbs"))
    chains = phase.init(np.random.default_rng(0), START, PARAMS, 5)
    assert chains.v.shape == (5, 3)
    assert set(map(tuple, chains.v.astype(int))) <= set(map(tuple, START))


def test_operator_kernel_names():
    assert build_operator("gibbs").__name__ == "gibbs_sweep"
    assert build_operator("flip").keywords == {"alpha": 1.0}
    assert build_operator(0.25).keywords == {"alpha": 0.25}
    for bad in ("Gibbs", None, 2.0, -0.1, True):
        with pytest.raises(ValueError):
            build_operator(bad)


# ----------------------------------------------------------------- wormholes (seed 002)
def test_wormhole_moves_keep_the_persistent_chains_exact():
    """PCD chains with a wormhole move after every sweep still sample p(v) exactly (fixed parameters)."""
    from pymc_rbm.kernels.wormhole import PointWormholes

    moves = PointWormholes(np.array([[1, 1, 0], [0, 0, 1], [1, 0, 1]]), binary=True)
    phase = persistent_contrastive_divergence(build_operator("flip"), k=1, n_chains=3000, wormholes=moves)
    rng = np.random.default_rng(2)
    chains = phase.init(rng, START, PARAMS)
    for _ in range(30):
        _, chains, info = phase.step(rng, chains, PARAMS, START)
    assert_frequencies(visible_counts(chains.v), np.exp(log_marginal_visible(PARAMS)))
    assert 0.0 < info["wormhole_accept"] <= 1.0 and 0.0 <= info["wormhole_jumps"] <= info["wormhole_accept"]


def test_wormholes_in_cd_and_pt_training():
    from pymc_rbm.kernels.wormhole import PointWormholes, RegionWormholes
    from pymc_rbm.training import fit

    data = np.repeat(np.array([[1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1]]), [30, 10], axis=0)
    point = PointWormholes(data, binary=True)
    res = fit(data, 3, method="cd", wormholes=point, n_updates=20, eval_every=10, rng=0, progress=False)
    rates = res.history.diagnostics["wormhole_accept"]
    assert np.isnan(rates[0]) and np.all((rates[1:] >= 0) & (rates[1:] <= 1))
    region = RegionWormholes([[1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1]], binary=True)
    res = fit(
        data, 3, method="pt", n_temperatures=3, wormholes=region, n_updates=5, eval_every=5, rng=0, progress=False
    )
    assert "wormhole_jumps" in res.history.diagnostics and "swap_accept" in res.history.diagnostics
    assert res.chains.v.shape == (3, 40, 6)


def test_phase_constructors_validate():
    kernel = build_operator("gibbs")
    for make in (contrastive_divergence, persistent_contrastive_divergence):
        with pytest.raises(ValueError, match="k must"):
            make(kernel, 0)
    with pytest.raises(ValueError, match="n_chains"):
        persistent_contrastive_divergence(kernel, n_chains=0)
    with pytest.raises(ValueError, match="must be 1"):
        parallel_tempering(kernel, betas=[0.0, 0.5])
    phase = parallel_tempering(kernel, betas=[0.5, 1.0])
    rng = np.random.default_rng(0)
    pcd_chains = persistent_contrastive_divergence(kernel).init(rng, START, PARAMS)
    with pytest.raises(TypeError, match="TemperedState"):
        phase.step(rng, pcd_chains, PARAMS, START)

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
    from pymc_rbm.training import CD, PT, fit

    data = np.repeat(np.array([[1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1]]), [30, 10], axis=0)
    point = PointWormholes(data, binary=True)
    res = fit(data, 3, method=CD(wormholes=point), n_updates=20, evaluation=10, rng=0, progress=False)
    rates = res.history.diagnostics["wormhole_accept"]
    assert np.isnan(rates[0]) and np.all((rates[1:] >= 0) & (rates[1:] <= 1))
    region = RegionWormholes([[1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1]], binary=True)
    res = fit(data, 3, method=PT(n_temperatures=3, wormholes=region), n_updates=5, evaluation=5, rng=0, progress=False)
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


def test_pcd_gibbs_samples_the_model_with_summed_out_statistics():
    phase = persistent_contrastive_divergence(build_operator("gibbs"), k=1, n_chains=3000)
    rng = np.random.default_rng(0)
    chains = phase.init(rng, START, PARAMS)
    for _ in range(40):
        stats, chains, _ = phase.step(rng, chains, PARAMS, START)
    assert_frequencies(visible_counts(chains.v), np.exp(log_marginal_visible(PARAMS)))
    ph = 1.0 / (1.0 + np.exp(-(PARAMS.hbias + chains.v @ PARAMS.W)))
    np.testing.assert_allclose(stats.vh, chains.v.T @ ph / 3000)


@pytest.mark.parametrize("k", [1, 3])
def test_compiled_pcd_gradient_is_the_numpy_chain_and_gradient(k):
    """The one-call gradient of small models: the chain of gibbs_sweeps_visible_first, the gradient of the statistics."""
    from pymc_rbm.kernels.training_steps import persistent_gibbs_gradient
    from pymc_rbm.training import data_statistics, gibbs_sweeps_visible_first, gradient_from_statistics, phase_gradient
    from pymc_rbm.training.gradients import sample_statistics

    params = RBMParams.random(7, 5, scale=1.5, rng=2)
    batch = (np.random.default_rng(1).random((6, 7)) < 0.5).astype(float)
    phase = persistent_contrastive_divergence(build_operator("gibbs"), k=k, n_chains=4, hidden="carry")
    assert phase.gradient is not None
    chains = phase.init(np.random.default_rng(0), batch, params)
    r_numpy, r_compiled = np.random.default_rng(5), np.random.default_rng(5)
    for update in range(30):
        state, ph = gibbs_sweeps_visible_first(r_numpy, chains, params, k)
        expected = gradient_from_statistics(data_statistics(batch, params), sample_statistics(state.v, ph))
        before = chains.v.copy()
        grad, new_chains, info = phase_gradient(phase, r_compiled, chains, params, batch)
        if update == 0:  # the caller's chains (here those of init) are not modified; the phase's own are reused
            np.testing.assert_array_equal(chains.v, before)
        np.testing.assert_array_equal(new_chains.v, state.v)
        np.testing.assert_array_equal(new_chains.h, state.h)
        for got, want in zip(grad, expected):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
        chains = new_chains
    assert r_numpy.random() == r_compiled.random()
    v, h = chains.v.copy(), chains.h.copy()
    persistent_gibbs_gradient(np.random.default_rng(0), batch, v, h, params, k)  # in place on its arrays
    assert not np.array_equal(v, chains.v) or not np.array_equal(h, chains.h)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("k", [1, 4])
def test_one_call_chains_and_centered_gradient_are_the_numpy_values(k, dtype, monkeypatch):
    """Small models: the redrawn PCD chain, CD's chain and the centered gradient of samples run as compiled calls
    of NumPy's arithmetic (BLAS products, the same layer rule and uniforms): equal bit for bit, the generator left
    in the same state."""
    from pymc_rbm.kernels import compiled
    from pymc_rbm.training import chains as chain_module
    from pymc_rbm.training import negative

    if not compiled.available():
        pytest.skip("needs Numba")
    params = RBMParams.random(9, 6, scale=1.5, rng=2).astype(dtype)
    batch = (np.random.default_rng(1).random((7, 9)) < 0.5).astype(dtype)
    pcd = persistent_contrastive_divergence(build_operator("gibbs"), k=k, n_chains=5)
    cd = contrastive_divergence(build_operator("gibbs"), k=k)
    chains = pcd.init(np.random.default_rng(0), batch, params)
    assert chain_module.one_call(5, 9, 6, np.dtype(dtype))

    def run():
        rng = np.random.default_rng(5)
        out = []
        state = chains
        for _ in range(5):
            for phase in (pcd, cd):
                v, ph, new, _ = phase.samples(rng, state, params, batch)
                grad, offsets = negative.centered_batch_gradient(batch, params, v, ph)
                out += [v, ph, *grad, *offsets] + ([new.v, new.h] if new is not None else [])
                state = new if new is not None else state
        return out + [rng.random(3)]

    compiled_values = run()
    for module in (chain_module, negative):  # where the chains and the centered gradient look it up
        monkeypatch.setattr(module, "one_call", lambda *args: False)  # the NumPy kernels
    numpy_values = run()
    assert len(compiled_values) == len(numpy_values)
    for got, want in zip(compiled_values, numpy_values):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(chains.v, pcd.init(np.random.default_rng(0), batch, params).v)  # not modified

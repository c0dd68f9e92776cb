"""The dense path of large batches through the step methods: the NumPy kernels' chain, refreshed when moved.

A batch takes the dense path of :mod:`pymc_rbm.kernels.compiled` (BLAS products, vectorised
exponentials, ``exp(-|a_h|)`` kept from one draw to the next, counter-based uniforms keyed by the step's
generator) from :data:`~pymc_rbm.kernels.compiled.DENSE_MIN_WEIGHTS` chain-weights on; here every batch does.
Fed the uniforms of :func:`~pymc_rbm.kernels.compiled.dense_uniforms`, the NumPy kernels make its chain.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from pymc_rbm import RBM, RBMParams
from pymc_rbm.energy import free_energy
from pymc_rbm.estimators import log_marginal_visible
from pymc_rbm.kernels import compiled, flip_sweep, gibbs_sweep, init_state
from pymc_rbm.kernels.state import RBMState
from pymc_rbm.step_methods import BlockGibbs, FlipTheState

from _uniforms import UniformStream

from ._stats import assert_visible_distribution

NV, NH, K = 6, 4, 5


@pytest.fixture(autouse=True)
def dense_path(monkeypatch):
    monkeypatch.setattr(compiled, "DENSE_MIN_WEIGHTS", 1)


@pytest.fixture(scope="module")
def params():
    return RBMParams.random(NV, NH, scale=1.5, rng=3)


@pytest.mark.parametrize("sweeps", [1, 3])
@pytest.mark.parametrize("method", ["flip", "gibbs"])
def test_step_is_the_kernel_and_refreshes_when_moved(params, method, sweeps):
    """Draw for draw the NumPy kernel's chain (fed the draw's uniforms); when another step moves v, h is redrawn
    (flip) as the kernel's init_state does, and the kept exponentials are not reused."""
    cls, kernel = (FlipTheState, flip_sweep) if method == "flip" else (BlockGibbs, gibbs_sweep)
    with pm.Model() as model:
        RBM("v", params.W, params.vbias, params.hbias, shape=(K, NV))
        step = cls(sweeps=sweeps)
    assert step.compiled and compiled.dense(K, NV, NH)
    step.setup_chain(np.random.default_rng(2), 0, 1)
    point = model.initial_point()
    rng, other = np.random.default_rng(2), np.random.default_rng(7)
    state = init_state(rng, point["v"], params) if method == "flip" else RBMState(point["v"] * 1.0, np.zeros((K, NH)))
    for draw in range(120):
        if draw % 10 == 9:  # another step moved the visible units
            point = {**point, "v": other.integers(0, 2, (K, NV))}
            state = init_state(rng, point["v"], params) if method == "flip" else state._replace(v=point["v"] * 1.0)
        v_in = point["v"].copy()
        point, stats = step.step(point)
        h_in = state.h
        uniforms = UniformStream(compiled.dense_uniforms(compiled.dense_key(rng), sweeps, K, NH, NV))
        for _ in range(sweeps):
            state, _ = kernel(uniforms, state, params)
        assert_array_equal(point["v"], state.v)
        assert stats[0]["refreshed"] == (draw % 10 == 9 or draw == 0)
        assert_allclose(stats[0]["free_energy"], free_energy(state.v, params), rtol=1e-12)
        assert_array_equal(stats[0]["n_changed"], (state.v != v_in).sum(axis=1))
        if method == "flip":
            assert_array_equal(stats[0]["n_hidden_changed"], (state.h != h_in).sum(axis=1))


@pytest.mark.parametrize("cls", [FlipTheState, BlockGibbs])
def test_batch_matches_enumeration(params, cls):
    with pm.Model():
        RBM("v", params.W, params.vbias, params.hbias, shape=(K, NV))
        idata = pm.sample(draws=1500, tune=100, chains=1, cores=1, step=cls(), random_seed=5, progressbar=False,
                          compute_convergence_checks=False)
    draws = idata.posterior["v"].values[0].transpose(1, 0, 2)  # the K chains of the batch
    assert_visible_distribution(draws, log_marginal_visible(params), label=cls.__name__)

"""Tests of the annealing run shared by AIS, reverse AIS and BAR (pymc_rbm.estimators.annealing)."""

from __future__ import annotations

import numpy as np
import pytest

from pymc_rbm import RBMParams
from pymc_rbm._runtime import Progress
from pymc_rbm.estimators.annealing import anneal, anneal_in_threads
from pymc_rbm.estimators.base_rate import base_rate_vbias
from pymc_rbm.estimators.path import AnnealingPath


def _model(nv, nh, scale, seed=0):
    return RBMParams.random(nv, nh, scale=scale, rng=100 * seed + 10 * nv + nh)


def test_anneal_records_partial_log_weights():
    p = _model(8, 4, 1.0)
    path = AnnealingPath(p, base_rate_vbias(p))
    rng = np.random.default_rng(0)
    betas = np.linspace(0, 1, 21)
    run = anneal(path, rng, path.sample_base(rng, 7), betas, Progress(20, "", False), record=[5, 20])
    assert run.trace.shape == (2, 7)
    np.testing.assert_array_equal(run.trace[1], run.log_w)
    assert not np.array_equal(run.trace[0], run.trace[1])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("scale", [0.5, 40.0])  # 40: |δ| beyond float32's exp range, the float64 fallback
def test_weight_increments_equal_the_difference_of_log_f(dtype, scale):
    """A schedule 0 -> 1 (one increment, no transition) against AnnealingPath.log_f; float32 to its rounding."""
    params = RBMParams.random(15, 9, scale=scale, rng=3)
    path = AnnealingPath(params, np.zeros(15), dtype=dtype)
    v0 = path.sample_base(np.random.default_rng(0), 6)
    with np.errstate(invalid="raise", divide="raise"):  # no NaN on the way
        got = anneal(path, np.random.default_rng(1), v0, np.array([0.0, 1.0]), Progress(1, "", False)).log_w
    v, a, vb = path.start(v0.astype(np.float64))
    want = path.log_f(a, vb, path.coefficients(1.0)) - path.log_f(a, vb, path.coefficients(0.0))
    # float32: a few ulp of each of the 9 hidden terms, each of order |a| (about 1 at scale 0.5)
    tol = 1e-12 if dtype == np.float64 else 1e-6
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * params.n_hidden)


def test_threads_run_fixed_blocks_of_chains_with_spawned_generators():
    """Blocks of chains fixed by their number, each the serial annealing on its own spawned generator."""
    from pymc_rbm._runtime import CHAINS_PER_BLOCK, chain_blocks

    p = _model(15, 6, 1.5)
    path = AnnealingPath(p, base_rate_vbias(p))
    n = 2 * CHAINS_PER_BLOCK + 7
    v0 = path.sample_base(np.random.default_rng(0), n)
    betas = np.linspace(0.0, 1.0, 101)
    quiet = Progress(0, "", False)
    blocks, kids = chain_blocks(n, np.random.default_rng(7))
    assert len(blocks) == 3
    parts = [anneal(path, kid, v0[b], betas, quiet, record=[50, 100]) for b, kid in zip(blocks, kids)]
    for n_jobs in (1, 2, 3, 8):
        run = anneal_in_threads(path, np.random.default_rng(7), v0, betas, quiet, record=[50, 100], n_jobs=n_jobs)
        np.testing.assert_array_equal(run.log_w, np.concatenate([r.log_w for r in parts]))
        np.testing.assert_array_equal(run.v, np.concatenate([r.v for r in parts]))
        np.testing.assert_array_equal(run.trace, np.concatenate([r.trace for r in parts], axis=1))

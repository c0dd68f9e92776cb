"""Tests of the rounds of RTS at fixed guesses (pymc_rbm.estimators.rts_rounds)."""

from __future__ import annotations

import numpy as np
import pytest

from pymc_rbm import RBMParams
from pymc_rbm.estimators import log_partition_exact
from pymc_rbm.estimators.path import AnnealingPath
from pymc_rbm.estimators.rts_rounds import rts_round


def _model(nv, nh, scale, seed=0):
    return RBMParams.random(nv, nh, scale=scale, rng=100 * seed + 10 * nv + nh)


def _exact_ladder_log_z(path: AnnealingPath, coefs) -> np.ndarray:
    return np.array([log_partition_exact(path.intermediate(c)).log_z for c in coefs])


def _six_rungs_with_exact_log_z():
    """A path on an 8 × 4 RBM, six rungs with their exact ``log Z_k``, and 400 chains from the base spread over them."""
    path = AnnealingPath(_model(8, 4, 2.0), np.linspace(-1, 1, 8))
    coefs = path.coefficients(np.linspace(0, 1, 6))
    rng = np.random.default_rng(1)
    return path, coefs, _exact_ladder_log_z(path, coefs), rng, path.sample_base(rng, 400), rng.integers(0, 6, 400)


def test_with_exact_guesses_every_temperature_is_visited_equally():
    """At ``Ẑ_k = Z_k`` the marginal of β is the uniform prior and ``ĉ_k = 1/K``."""
    path, coefs, log_z, rng, v, k = _six_rungs_with_exact_log_z()
    _, _, c_chain, visits = rts_round(path, rng, v, k, coefs, log_z, 200)
    np.testing.assert_allclose(c_chain.mean(axis=0), 1 / 6, rtol=0.05)
    np.testing.assert_allclose(visits / visits.sum(), 1 / 6, rtol=0.1)
    # ... and with guesses off by known amounts, q(β_k) ∝ Z_k / Ẑ_k
    offset = np.array([0.0, 0.5, -0.5, 1.0, 0.0, -1.0])
    _, _, c_chain, _ = rts_round(path, rng, v, k, coefs, log_z + offset, 200)
    want = np.exp(-offset) / np.exp(-offset).sum()
    np.testing.assert_allclose(c_chain.mean(axis=0), want, rtol=0.07)


def test_several_sweeps_per_draw_of_beta():
    """With ``sweeps_per_move`` sweeps between draws, ``ĉ`` averages the draws only, and stays exact."""
    path, coefs, log_z, rng, v, k = _six_rungs_with_exact_log_z()
    seen = []
    _, _, c_chain, visits = rts_round(
        path, rng, v, k, coefs, log_z, 602, callback=lambda t, k, log_f: seen.append(t), sweeps_per_move=3
    )
    assert seen == list(range(3, 601, 3))  # 200 draws; the two sweeps left over are not taken
    assert visits.sum() == 400 * 200
    np.testing.assert_allclose(c_chain.sum(axis=1), 1.0, rtol=1e-12)  # a mean over the draws
    np.testing.assert_allclose(c_chain.mean(axis=0), 1 / 6, rtol=0.05)
    np.testing.assert_allclose(visits / visits.sum(), 1 / 6, rtol=0.1)
    # negative control: guesses off by known amounts must show in ĉ, as with one sweep per draw
    offset = np.array([0.0, 0.5, -0.5, 1.0, 0.0, -1.0])
    _, _, c_chain, _ = rts_round(path, rng, v, k, coefs, log_z + offset, 600, sweeps_per_move=3)
    want = np.exp(-offset) / np.exp(-offset).sum()
    np.testing.assert_allclose(c_chain.mean(axis=0), want, rtol=0.07)
    assert np.abs(c_chain.mean(axis=0) * 6 - 1).max() > 0.5
    with pytest.raises(ValueError, match="at least sweeps_per_move"):
        rts_round(path, rng, v, k, coefs, log_z, 2, sweeps_per_move=3)

"""The ladder estimator of log Z against enumeration on sharp, multimodal models, with negative controls."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.linalg import block_diag

from pymc_rbm import RBMParams, datasets
from pymc_rbm.estimators import log_partition, log_partition_exact
from pymc_rbm.estimators.tempered_ladder import ladder_log_ratios, log_partition_ladder, run_ladder


def _two_modes(w: float = 1.5) -> RBMParams:
    """All visible and hidden units off, or all on, at the same energy 0 (12 x 8): two sharp modes."""
    return RBMParams(np.full((12, 8), w), np.full(12, -4.0 * w), np.full(8, -6.0 * w))


def _sharp_bundled() -> RBMParams:
    p = datasets.bundled_rbm()
    return RBMParams(2.0 * p.W, 2.0 * p.vbias, 2.0 * p.hbias)


MODELS = {
    "two modes": _two_modes,
    "bundled 4x4 bars and stripes": datasets.bundled_rbm,
    "bundled, weights doubled": _sharp_bundled,
}


@pytest.mark.parametrize("name", list(MODELS))
def test_the_ladder_estimate_is_exact_within_its_error_over_seeds(name):
    p = MODELS[name]()
    exact = log_partition_exact(p).log_z
    z = []
    for seed in range(6):
        est = log_partition_ladder(p, n_chains=8, n_rounds=1024, rng=seed)
        assert np.all(est.diagnostics["round_trips"] > 0)
        z.append((est.log_z - exact) / est.stderr)
        assert abs(est.log_z - exact) < 0.1
    z = np.array(z)
    assert np.all(np.abs(z) < 4.0), z
    assert 0.2 < np.std(z) < 2.5, z  # the chains' spread is the error: neither far too small nor far too large


def test_a_stepping_stone_with_a_rung_misplaced_is_caught():
    """Negative control: the same run, its stones computed as if one rung sat at its neighbour's midpoint."""
    p = _two_modes()
    exact = log_partition_exact(p).log_z
    run = run_ladder(p, n_chains=8, n_rounds=1024, rng=0)
    e = run.energies
    log_z0 = (p.n_visible + p.n_hidden) * np.log(2.0)
    pooled = e.transpose(0, 2, 1).reshape(-1, e.shape[1])
    right = log_z0 + ladder_log_ratios(run.betas, pooled).sum()
    chains = [log_z0 + ladder_log_ratios(run.betas, e[:, :, b]).sum() for b in range(8)]
    se = np.std(chains, ddof=1) / np.sqrt(8)
    assert abs(right - exact) < 4 * se + 0.02
    wrong = run.betas.copy()
    r = wrong.size // 2
    wrong[r] = 0.5 * (wrong[r - 1] + wrong[r])
    misplaced = log_z0 + ladder_log_ratios(wrong, pooled).sum()
    assert abs(misplaced - exact) > 6 * se
    assert abs((log_z0 - 1.0) + ladder_log_ratios(run.betas, pooled).sum() - exact) > 10 * se  # reference off


def test_a_model_of_many_modes_beyond_enumeration_from_independent_parts():
    """Five independent two-mode blocks (60 x 40, 32 modes): log Z is the sum of the parts' exact values."""
    parts = [_two_modes(w) for w in (1.5, 1.2, 1.8, 1.5, 1.3)]
    p = RBMParams(block_diag(*[q.W for q in parts]), np.concatenate([q.vbias for q in parts]),
                  np.concatenate([q.hbias for q in parts]))
    exact = sum(log_partition_exact(q).log_z for q in parts)
    est = log_partition(p, rng=1)  # method="auto": too large to enumerate, small enough for the ladder
    assert est.method == "ladder" and est.diagnostics["auto"]["method"] == "ladder"
    assert abs(est.log_z - exact) < max(4 * est.stderr, 0.1)


def test_a_ladder_without_round_trips_warns():
    p = _two_modes(3.0)  # far sharper: a ladder of two rungs carries nothing across in a few rounds
    with pytest.warns(RuntimeWarning, match="made no round trip"):
        est = log_partition_ladder(p, n_chains=2, n_rounds=2, max_rungs=2, rng=0)
    assert "warning" in est.diagnostics


def test_the_estimate_depends_on_the_seed_only_and_refuses_other_layers():
    p = _two_modes()
    a = log_partition_ladder(p, n_chains=2, n_rounds=64, rng=5)
    b = log_partition_ladder(p, n_chains=2, n_rounds=64, rng=5)
    assert a.log_z == b.log_z
    from pymc_rbm import GaussianRBMParams

    with pytest.raises(TypeError, match="binary RBMParams"):
        log_partition_ladder(GaussianRBMParams.random(3, 2, rng=0))
    with pytest.raises(ValueError, match="operator"):
        log_partition_ladder(p, operator="nope")


def test_auto_enumerates_what_it_can():
    p = datasets.bundled_rbm()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = log_partition(p)
    assert est.method == "exact" and est.log_z == log_partition_exact(p).log_z
    with pytest.raises(TypeError, match='method="auto"'):
        log_partition(p, n_chains=3)

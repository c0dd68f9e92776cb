"""Tests of the Boltzmann machine over ±1 spins (pymc_rbm.estimators.boltzmann_machine, seed 003)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from pymc_rbm import RBMParams
from pymc_rbm.estimators import EnumerationTooLarge, log_partition_exact
from pymc_rbm.estimators.boltzmann_machine import BoltzmannMachine


def _brute(bm: BoltzmannMachine):
    s = np.array(list(itertools.product([-1.0, 1.0], repeat=bm.n_units)))
    e = np.array([-0.5 * x @ bm.J @ x - bm.b @ x for x in s])
    p = np.exp(-e - logsumexp(-e))
    return logsumexp(-e), p @ s, (s * p[:, None]).T @ s


def test_boltzmann_machine_exact_against_brute_force():
    bm = BoltzmannMachine.random(7, rng=3)
    log_z, m, C = _brute(bm)
    assert bm.log_partition_exact() == pytest.approx(log_z, abs=1e-12)
    mom = bm.moments_exact()
    np.testing.assert_allclose(mom.m, m, atol=1e-12)
    np.testing.assert_allclose(mom.C, C, atol=1e-12)
    np.testing.assert_allclose(np.diag(mom.C), 1.0, atol=1e-12)


def test_boltzmann_machine_validation_and_immutability():
    J = np.array([[0.0, 1.0], [1.0, 0.0]])
    bm = BoltzmannMachine(J, [0.1, -0.2])
    J[0, 1] = 5.0
    assert bm.J[0, 1] == 1.0 and not bm.J.flags.writeable and not bm.b.flags.writeable
    with pytest.raises(ValueError, match="symmetric"):
        BoltzmannMachine([[0.0, 1.0], [0.5, 0.0]], [0.0, 0.0])
    with pytest.raises(ValueError, match="zero diagonal"):
        BoltzmannMachine([[0.3, 1.0], [1.0, 0.0]], [0.0, 0.0])
    with pytest.raises(ValueError, match="needs"):
        BoltzmannMachine(np.zeros((2, 2)), [0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="square"):
        BoltzmannMachine(np.zeros((2, 3)), [0.0, 0.0])
    with pytest.raises(ValueError, match="non-finite"):
        BoltzmannMachine([[0.0, np.nan], [np.nan, 0.0]], [0.0, 0.0])
    with pytest.raises(EnumerationTooLarge, match="mixture_mean_field_bm"):
        BoltzmannMachine(np.zeros((21, 21)), np.zeros(21)).log_partition_exact()


def test_random_ensemble_of_seed_003():
    bm = BoltzmannMachine.random(10, rng=0)
    iu = np.triu_indices(10, 1)
    assert np.all(np.abs(bm.J[iu]) < 1.0) and np.all(np.abs(bm.b) < 1.0)
    assert np.array_equal(bm.J, bm.J.T) and np.all(np.diag(bm.J) == 0.0)


def test_from_rbm_uses_the_spin_map():
    p = RBMParams.random(5, 4, scale=1.5, rng=2)
    bm = BoltzmannMachine.from_rbm(p)
    assert bm.n_units == 9
    assert bm.log_partition_exact() + p.to_spin().log_offset == pytest.approx(log_partition_exact(p).log_z, abs=1e-10)

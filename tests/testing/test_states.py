"""Tests of pymc_rbm.testing.states: the state order and the exact joint distribution."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from pymc_rbm import RBMParams
from pymc_rbm import testing as ht
from pymc_rbm.estimators import binary_states, log_partition_exact


def test_joint_states_order_and_index_round_trip():
    v, h = ht.joint_states(2, 3)
    assert v.shape == (32, 2) and h.shape == (32, 3)
    assert_array_equal(ht.joint_index(v, h), np.arange(32))
    assert_array_equal(v[8], [0, 1]) and assert_array_equal(h[8], [0, 0, 0])  # 8 = 01|000
    assert_array_equal(ht.state_index(binary_states(4)), np.arange(16))
    assert_array_equal(ht.state_index(binary_states(3).astype(bool)), np.arange(8))


def test_joint_states_refuses_large_models():
    with pytest.raises(ValueError, match="at most"):
        ht.joint_states(6, 5)


def test_joint_distribution_matches_brute_force(brute):
    params = RBMParams.random(3, 2, scale=3.0, rng=0)
    table, _, _ = brute.neg_energy_table(params.W, params.vbias, params.hbias)
    for beta in (1.0, 0.3):
        p = np.exp(beta * table)
        assert_allclose(ht.joint_distribution(params, beta), (p / p.sum()).ravel(), rtol=1e-12)
    logz = log_partition_exact(params).log_z
    assert_allclose(ht.joint_distribution(params), np.exp(table.ravel() - logz), rtol=1e-12)

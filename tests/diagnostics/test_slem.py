"""Tests of pymc_rbm.diagnostics.slem: the exact SLEM of a tiny RBM's sweep."""

from __future__ import annotations

import pytest

from pymc_rbm import RBMParams
from pymc_rbm.diagnostics import exact_slem
from pymc_rbm.testing import MAX_JOINT_UNITS, slem, transition_matrix


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


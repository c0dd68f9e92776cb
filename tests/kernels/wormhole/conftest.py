"""The small RBM whose visible marginal the binary wormhole moves must leave invariant."""

from __future__ import annotations

import pytest

from pymc_rbm import RBMParams
from pymc_rbm.estimators import log_marginal_visible

from ._moves import N_VISIBLE


@pytest.fixture(scope="module")
def rbm():
    params = RBMParams.random(N_VISIBLE, 3, scale=2.0, rng=4)
    return params, log_marginal_visible(params)

"""The chains of the sampling negative phases: block Gibbs with the visible layer first against its exact matrix."""

import numpy as np

from pymc_rbm import RBMParams
from pymc_rbm.kernels import RBMState
from pymc_rbm.testing import assert_stationary, empirical_transition_check, joint_distribution, layer_matrices
from pymc_rbm.training.chains import gibbs_sweeps_visible_first


def test_visible_first_gibbs_sweep_follows_its_exact_matrix():
    """``G_v G_h`` (v given the carried h, then h given v) leaves p(v, h) invariant and is what the sweep does."""
    params = RBMParams.random(3, 2, scale=2.0, rng=4)
    t_h, t_v = layer_matrices(params, "gibbs")
    T = t_v @ t_h
    assert_stationary(joint_distribution(params), T)

    def kernel(rng, state):
        new, ph = gibbs_sweeps_visible_first(rng, state, params, 1)
        np.testing.assert_allclose(ph, 1.0 / (1.0 + np.exp(-(params.hbias + new.v @ params.W))))
        return RBMState(new.v, new.h)

    empirical_transition_check(kernel, T, 3, 2, n_draws=1500, rng=3)

"""The shared Metropolis accept/reject decision."""

from __future__ import annotations

import numpy as np
from numpy.testing import assert_allclose, assert_array_equal

from pymc_rbm.kernels import acceptance_probability, metropolis_accept


def test_accept_frequency_is_min_1_exp_log_ratio():
    rng = np.random.default_rng(0)
    probs = np.array([1e-3, 0.1, 0.5, 0.9])
    n = 200_000
    accepted = metropolis_accept(rng, np.repeat(np.log(probs), n)).reshape(4, n)
    sd = np.sqrt(probs * (1 - probs) / n)
    assert np.all(np.abs(accepted.mean(axis=1) - probs) <= 5 * sd)


def test_edge_cases_are_decided_without_warnings():
    rng = np.random.default_rng(1)
    r = np.repeat([np.inf, 0.0, 3.0, -np.inf, np.nan], 1000)
    with np.errstate(all="raise"):
        acc = metropolis_accept(rng, r).reshape(5, 1000)
    assert acc[:3].all()  # log u < 0 for every u in [0, 1)
    assert not acc[3:].any()  # -inf and NaN: reject


def test_shape_and_dtype_follow_log_ratio():
    rng = np.random.default_rng(2)
    out = metropolis_accept(rng, np.zeros(7))
    assert out.shape == (7,) and out.dtype == bool
    assert metropolis_accept(rng, 0.0).shape == ()


def test_reproducible_with_a_seed():
    r = np.linspace(-3, 1, 50)
    assert_array_equal(metropolis_accept(np.random.default_rng(5), r), metropolis_accept(np.random.default_rng(5), r))


def test_acceptance_probability():
    assert_allclose(
        acceptance_probability([np.nan, -np.inf, np.log(0.25), 0.0, 2.0, np.inf]),
        [0.0, 0.0, 0.25, 1.0, 1.0, 1.0],
    )

"""Mixture models fitted by EM (pymc_rbm.mixtures), the data preparation of region wormholes."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from pymc_rbm.datasets import artificial_mode_prototypes, artificial_modes
from pymc_rbm.mixtures import fit_bernoulli_mixture, fit_gaussian_mixture


def test_bernoulli_mixture_finds_the_artificial_modes():
    data = artificial_modes(400, p_flip=0.01, rng=0)
    weights, means = fit_bernoulli_mixture(data, 4, rng=1)
    assert_allclose(weights.sum(), 1.0)
    assert ((means > 0) & (means < 1)).all()
    found = {tuple(c) for c in (means > 0.5).astype(int)}
    assert found == {tuple(c) for c in artificial_mode_prototypes().astype(int)}


def test_gaussian_mixture_recovers_separated_components():
    rng = np.random.default_rng(0)
    data = np.concatenate([rng.normal([-4, 0], [0.5, 0.2], (600, 2)), rng.normal([4, 1], [0.2, 0.7], (200, 2))])
    weights, means, covs = fit_gaussian_mixture(data, 2, rng=1)
    order = np.argsort(means[:, 0])
    assert_allclose(weights[order], [0.75, 0.25], atol=1e-9)
    assert_allclose(means[order], [[-4, 0], [4, 1]], atol=0.1)
    assert_allclose(np.sqrt(np.diagonal(covs[order], axis1=1, axis2=2)), [[0.5, 0.2], [0.2, 0.7]], rtol=0.15)


@pytest.mark.parametrize(
    "fit, data, match",
    [
        (fit_bernoulli_mixture, [[0, 1], [1, 2]], "values in"),
        (fit_bernoulli_mixture, np.zeros((3,)), "shape"),
        (fit_gaussian_mixture, [[0.0, np.nan], [1.0, 2.0]], "finite"),
        (fit_gaussian_mixture, [["a", "b"]], "numeric"),
        (fit_gaussian_mixture, np.zeros((3, 2)), "exceeds"),
    ],
)
def test_bad_data_is_refused_and_not_modified(fit, data, match):
    original = np.array(data, copy=True)
    with pytest.raises(ValueError, match=match):
        fit(data, 4 if match == "exceeds" else 1)
    np.testing.assert_array_equal(np.asarray(data), original)

"""The families of fit: the exact gradient of categorical and Gaussian RBMs, and centering, against finite differences.

The gradient is data statistics minus model statistics of the family's sufficient statistics; each test
differentiates the enumerated log-likelihood numerically, and a negative control breaks the statistics the
way a plausible bug would (the one-hot of the wrong value, the features without their 1/σ) to show the
comparison catches it.
"""

import numpy as np
import pytest
from _finite_differences import log_likelihood_gradient_fd

from pymc_rbm import RBMParams
from pymc_rbm.categorical import CategoricalRBMParams, log_prob_exact, sample_exact
from pymc_rbm.gaussian import GaussianRBMParams
from pymc_rbm.gaussian import log_prob_exact as gaussian_log_prob
from pymc_rbm.gaussian import sample_exact as gaussian_sample
from pymc_rbm.layers import Gaussian, Potts
from pymc_rbm.training import centered_gradient, data_statistics, gradient_from_statistics, log_likelihood_gradient
from pymc_rbm.training.families import (
    BernoulliFamily,
    CategoricalFamily,
    GaussianFamily,
    family_for,
    family_of,
)


def categorical_case():
    params = CategoricalRBMParams.random(3, 3, 2, rng=0)
    return params, sample_exact(params, 20, rng=1), lambda v, p: log_prob_exact(v, p)


def gaussian_case():
    params = GaussianRBMParams.random(3, 2, rng=0)  # sigma uniform on [0.5, 1.5]: the 1/σ matters
    return params, gaussian_sample(params, 20, rng=1), lambda v, p: gaussian_log_prob(v, p)


CASES = {"categorical": categorical_case, "gaussian": gaussian_case}


@pytest.mark.parametrize("kind", CASES)
def test_exact_gradient_is_the_derivative_of_the_enumerated_log_likelihood(kind):
    params, data, log_prob = CASES[kind]()
    before = data.copy()
    grad = log_likelihood_gradient(params, data)
    numeric = log_likelihood_gradient_fd(params, data, log_prob)
    for name, g, fd in zip(("W", "vbias", "hbias"), grad, numeric):
        assert g.shape == getattr(params, name).shape
        np.testing.assert_allclose(g, fd, atol=1e-6, err_msg=name)
    np.testing.assert_array_equal(data, before)


def test_categorical_gradient_negative_control(monkeypatch):
    """One-hot statistics of the wrong value (off by one): the finite differences see it."""
    params, data, log_prob = categorical_case()
    numeric = log_likelihood_gradient_fd(params, data, log_prob)
    right = CategoricalFamily.features
    monkeypatch.setattr(CategoricalFamily, "features", lambda self, v: right(self, (np.asarray(v) + 1) % 3))
    wrong = log_likelihood_gradient(params, data)
    assert max(np.abs(g - fd).max() for g, fd in zip(wrong, numeric)) > 1e-2


def test_gaussian_gradient_negative_control(monkeypatch):
    """Statistics ``v ⊗ h`` that forget the 1/σ: the finite differences see it."""
    params, data, log_prob = gaussian_case()
    numeric = log_likelihood_gradient_fd(params, data, log_prob)
    monkeypatch.setattr(GaussianFamily, "features", lambda self, v: np.asarray(v, dtype=np.float64))
    wrong = log_likelihood_gradient(params, data)
    assert np.abs(wrong.W - numeric[0]).max() > 1e-2


@pytest.mark.parametrize("kind", CASES)
def test_centering_is_exact_for_the_family(kind):
    """The centered gradient is the derivative of the log-likelihood in the centered parameters.

    With offsets ``μ`` (the data means of the features: one-hot frequencies, ``v/σ``) and ``λ``, the
    parameters ``(W, b, c)`` give the flat ones ``(W, b - W λ, c - Wᵀ μ)``; fit's centering is exact when
    :func:`centered_gradient` of the family's statistics equals finite differences of that function.
    """
    params, data, log_prob = CASES[kind]()
    family = family_of(params)
    flat = family.flat(params)
    x = family.features(family.check(data))
    positive = data_statistics(x, flat)
    mu, lam = positive.v, positive.h
    b, c = flat.vbias + flat.W @ lam, flat.hbias + flat.W.T @ mu

    def mean_ll(W, b, c):
        return log_prob(data, family.unflat(RBMParams(W, b - W @ lam, c - W.T @ mu))).mean()

    arrays, eps = [flat.W.copy(), b, c], 1e-5
    numeric = []
    for i, a in enumerate(arrays):
        g = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            up, down = [x.copy() for x in arrays], [x.copy() for x in arrays]
            up[i][idx] += eps
            down[i][idx] -= eps
            g[idx] = (mean_ll(*up) - mean_ll(*down)) / (2 * eps)
        numeric.append(g)
    negative = family.exact_moments(params)
    centered = centered_gradient(positive, negative, mu, lam)
    for g, fd in zip(centered, numeric):
        np.testing.assert_allclose(g, fd, atol=1e-6)
    # control: the ordinary gradient is not the centered one here (the test can tell them apart)
    ordinary = gradient_from_statistics(positive, negative)
    assert np.abs(ordinary.vbias - numeric[1]).max() + np.abs(ordinary.W - numeric[0]).max() > 1e-3


def test_flat_coordinates_round_trip():
    cat = CategoricalRBMParams.random(4, 3, 2, rng=0)
    gauss = GaussianRBMParams.random(3, 2, rng=0)
    for params in (cat, gauss, RBMParams.random(3, 2, rng=0)):
        family = family_of(params)
        back = family.unflat(family.flat(params))
        for name in params.ARRAY_NAMES:
            np.testing.assert_allclose(getattr(back, name), getattr(params, name), rtol=1e-15)
    labels = np.array([[0, 2, 1, 1], [2, 2, 0, 1]])
    family = CategoricalFamily(3)
    np.testing.assert_array_equal(family.values(family.features(labels)), labels)
    np.testing.assert_array_equal(family.features(labels)[0], [1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 1, 0])


def test_family_for_reads_the_visible_units():
    labels = np.array([[0, 2, 1], [1, 1, 0]])
    assert isinstance(family_for(None, labels), BernoulliFamily)
    assert family_for("categorical", labels).n_states == 3
    assert family_for(Potts(5), labels).n_states == 5
    assert family_for("categorical", np.eye(3)[labels]).n_states == 3  # one-hot: the last axis
    reals = np.array([[0.0, 1.0], [2.0, 1.0], [4.0, 1.0]])
    np.testing.assert_allclose(family_for("gaussian", reals).sigma, [0.5 * np.std([0.0, 2.0, 4.0]), 1.0])
    np.testing.assert_array_equal(family_for(Gaussian([2.0, 3.0]), reals).sigma, [2.0, 3.0])
    with pytest.raises(ValueError, match="visible must be one of"):
        family_for("potts", labels)
    with pytest.raises(ValueError, match=r"Potts\(n_states\)"):
        family_for("categorical", np.zeros((3, 2), dtype=int))
    with pytest.raises(TypeError, match="CategoricalRBMParams"):
        family_of(np.zeros(3))

"""Centered gradients (Montavon & Müller 2012; Melchior, Fischer & Wiskott 2016): exact on enumerable models.

The centered RBM has energy ``-(v - μ)ᵀ W (h - λ) - bᵀ (v - μ) - cᵀ (h - λ)``, the same model as
``(W, b - W λ, c - Wᵀ μ)``. Its gradient, with the exact model term, must be the derivative of the
exact mean log-likelihood in the centered parameters (finite differences of an enumeration); centering
one term only is not (the negative control).
"""

import numpy as np
import pytest

from test_gradients import DATA, brute_mean_log_likelihood

from pymc_rbm import RBMParams
from pymc_rbm.training import Gradient, data_statistics, model_statistics
from pymc_rbm.training.gradients import center, centered_gradient, centered_update
from pymc_rbm.training.negative import deterministic, phase_gradient

PARAMS = RBMParams.random(4, 3, scale=0.8, rng=3)
rng = np.random.default_rng(7)
MU, LAMBDA = rng.random(4), rng.random(3)  # any offsets: the identities hold for all of them


def uncentered(Wc, b, c, mu, lam):
    """The RBM's own parameters of the centered ones (the constant of the energy drops out of p)."""
    return Wc, b - Wc @ lam, c - Wc.T @ mu


def centered_of(params, mu, lam):
    return params.W, params.vbias + params.W @ lam, params.hbias + params.W.T @ mu


def centered_finite_differences(params, mu, lam, eps=1e-5):
    """∂ mean log p(DATA) / ∂ (W, b, c) of the centered form, by central differences of an enumeration."""
    arrays = [np.array(a, dtype=float) for a in centered_of(params, mu, lam)]
    grads = []
    for a in arrays:
        g = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            old = a[idx]
            a[idx] = old + eps
            up = brute_mean_log_likelihood(*uncentered(*arrays, mu, lam))
            a[idx] = old - eps
            down = brute_mean_log_likelihood(*uncentered(*arrays, mu, lam))
            a[idx] = old
            g[idx] = (up - down) / (2 * eps)
        grads.append(g)
    return Gradient(*grads)


def one_term_only(positive, negative, mu, lam):
    """The negative control: the offsets applied to the data term only."""
    g = centered_gradient(positive, negative, mu, lam)
    # add back what centering took from the model term: ⟨(v-μ)(h-λ)ᵀ⟩_model → ⟨v hᵀ⟩_model
    W = g.W - np.outer(mu, negative.h) - np.outer(negative.v, lam) + np.outer(mu, lam)
    return Gradient(W, g.vbias, g.hbias)


def test_centered_form_is_the_same_model():
    W, b, c = centered_of(PARAMS, MU, LAMBDA)
    for got, want in zip(uncentered(W, b, c, MU, LAMBDA), (PARAMS.W, PARAMS.vbias, PARAMS.hbias)):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-14)


@pytest.mark.parametrize("offsets", ["random", "data means", "zero"])
def test_centered_gradient_is_the_exact_gradient_of_the_centered_parameters(offsets):
    positive = data_statistics(DATA.astype(float), PARAMS)
    negative = model_statistics(PARAMS, "exact")
    mu, lam = {"random": (MU, LAMBDA), "data means": (positive.v, positive.h),
               "zero": (np.zeros(4), np.zeros(3))}[offsets]
    want = centered_finite_differences(PARAMS, mu, lam)
    got = centered_gradient(positive, negative, mu, lam)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=0, atol=1e-8)
    # the negative control: one term centered is not the gradient (unless the offsets are zero)
    wrong = one_term_only(positive, negative, mu, lam)
    if offsets == "zero":
        np.testing.assert_allclose(wrong.W, want.W, atol=1e-8)
    else:
        assert np.abs(wrong.W - want.W).max() > 1e-3


def test_the_negative_control_fails_the_exact_check():
    """What the test above guards against: a one-sided centering really does fail an allclose at 1e-8."""
    positive = data_statistics(DATA.astype(float), PARAMS)
    negative = model_statistics(PARAMS, "exact")
    want = centered_finite_differences(PARAMS, MU, LAMBDA)
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(one_term_only(positive, negative, MU, LAMBDA).W, want.W, rtol=0, atol=1e-8)


def test_the_update_in_the_rbms_parameters_is_the_centered_step():
    """A step of the centered parameters, mapped back, moves (W, vbias, hbias) by centered_update, exactly."""
    positive = data_statistics(DATA.astype(float), PARAMS)
    g = centered_gradient(positive, model_statistics(PARAMS, "exact"), MU, LAMBDA)
    lr = 0.1
    Wc, b, c = centered_of(PARAMS, MU, LAMBDA)
    after = uncentered(Wc + lr * g.W, b + lr * g.vbias, c + lr * g.hbias, MU, LAMBDA)
    step = centered_update(g, MU, LAMBDA)
    for a, p, s in zip(after, (PARAMS.W, PARAMS.vbias, PARAMS.hbias), step):
        np.testing.assert_allclose(a, p + lr * s, rtol=0, atol=1e-13)


def test_center_of_the_ordinary_gradient_is_the_centered_update():
    positive = data_statistics(DATA.astype(float), PARAMS)
    negative = model_statistics(PARAMS, "exact")
    ordinary = Gradient(positive.vh - negative.vh, positive.v - negative.v, positive.h - negative.h)
    want = centered_update(centered_gradient(positive, negative, MU, LAMBDA), MU, LAMBDA)
    for got, w in zip(center(ordinary, MU, LAMBDA), want):
        np.testing.assert_allclose(got, w, rtol=0, atol=1e-14)
    for got, w in zip(center(ordinary, np.zeros(4), np.zeros(3)), ordinary):
        np.testing.assert_array_equal(got, w)


def test_fit_s_centered_update_with_the_exact_phase_is_the_exact_centered_step():
    """phase_gradient(centered=True) with the exact negative phase: the finite-difference centered gradient,
    offsets the batch's data means, mapped to (W, vbias, hbias)."""
    batch = DATA.astype(float)
    positive = data_statistics(batch, PARAMS)
    got, _, _ = phase_gradient(deterministic("exact"), np.random.default_rng(0), None, PARAMS, batch, centered=True)
    want = centered_update(centered_finite_differences(PARAMS, positive.v, positive.h), positive.v, positive.h)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=0, atol=1e-8)


@pytest.mark.parametrize("method", ["cd", "pcd", "pcd-carry", "pt"])
def test_sampled_centered_gradient_is_the_centered_transform_of_the_same_draws(method):
    """The sampling phases take their centered products on centered samples: the same numbers as center()."""
    from pymc_rbm.kernels.operators import build_operator
    from pymc_rbm.training.negative import (
        contrastive_divergence,
        parallel_tempering,
        persistent_contrastive_divergence,
    )

    kernel = build_operator("gibbs")
    phase = {
        "cd": lambda: contrastive_divergence(kernel, 2),
        "pcd": lambda: persistent_contrastive_divergence(kernel, 2, n_chains=6),
        "pcd-carry": lambda: persistent_contrastive_divergence(kernel, 2, n_chains=6, hidden="carry"),
        "pt": lambda: parallel_tempering(kernel, 1, betas=[0.5, 1.0], n_chains=6),
    }[method]()
    batch = DATA.astype(float)
    chains = phase.init(np.random.default_rng(0), batch, PARAMS, 5)
    got, _, _ = phase_gradient(phase, np.random.default_rng(1), chains, PARAMS, batch, centered=True)
    plain, _, _ = phase_gradient(phase, np.random.default_rng(1), chains, PARAMS, batch, centered=False)
    positive = data_statistics(batch, PARAMS)
    for g, w in zip(got, center(plain, positive.v, positive.h)):
        np.testing.assert_allclose(g, w, rtol=0, atol=1e-13)


def test_large_models_center_the_carried_chain_on_its_samples():
    """Above the compiled path's size the carried PCD gradient is centered on its samples: same numbers, no
    extra product (the phase's samples are used, not center() of a fused gradient)."""
    from pymc_rbm.kernels import compiled
    from pymc_rbm.kernels.operators import build_operator
    from pymc_rbm.training.negative import persistent_contrastive_divergence

    params = RBMParams.random(128, 128, scale=0.1, rng=0)
    batch = (np.random.default_rng(1).random((128, 128)) < 0.3).astype(float)
    assert compiled.dense(128, 128, 128)
    phase = persistent_contrastive_divergence(build_operator("gibbs"), 1, n_chains=128)
    chains = phase.init(np.random.default_rng(0), batch, params, 128)
    assert phase.fused is None or not phase.fused(chains, params)
    got, _, _ = phase_gradient(phase, np.random.default_rng(1), chains, params, batch, centered=True)
    plain, _, _ = phase_gradient(phase, np.random.default_rng(1), chains, params, batch, centered=False)
    positive = data_statistics(batch, params)
    for g, w in zip(got, center(plain, positive.v, positive.h)):
        np.testing.assert_allclose(g, w, rtol=0, atol=1e-12)

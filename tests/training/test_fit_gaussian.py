"""``fit`` on Gaussian-Bernoulli RBMs: it learns a mixture of Gaussians with σ fixed, resumes, refuses bad input."""

import re

import numpy as np
import pytest

from pymc_rbm.estimators import log_likelihood
from pymc_rbm.gaussian import GaussianRBMParams, log_prob_exact, sample_exact
from pymc_rbm.layers import Gaussian
from pymc_rbm.training import CD, Checkpoints, Init, SGD, fit
from pymc_rbm.training.families import GAUSSIAN_SIGMA_SCALE
from pymc_rbm.training.negative import FAMILY_METHODS

# four equally likely, well separated components (hbias_j = -|W_j|² / 2), σ = 0.5
TRUE = GaussianRBMParams(2.0 * np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 1.0]]), np.zeros(4),
                         np.array([-6.0, -6.0]), np.full(4, 0.5))
DATA = sample_exact(TRUE, 400, rng=1)  # exact mean log-likelihood of TRUE on DATA: -4.160
FAST = dict(progress=False, rng=0)
LEARN = dict(visible=Gaussian(TRUE.sigma), learning_rate=0.05, batch_size=50, n_updates=400, **FAST, evaluation=100,
             params=Init(scale=0.1))


@pytest.mark.parametrize("method", ["pcd", "cd", "exact"])
def test_training_learns_the_mixture(method):
    res = fit(DATA, 2, method=method, **LEARN)
    ll = res.history.log_likelihood
    best = log_prob_exact(DATA, TRUE).mean()
    assert res.history.estimator == "exact"
    assert isinstance(res.params, GaussianRBMParams)
    np.testing.assert_array_equal(res.params.sigma, TRUE.sigma)  # σ is not trained
    # the start is one Gaussian at the data mean (-5.75); training reaches the true model's likelihood
    assert ll[0] < -5.5 and ll[-1] > best - 0.05, (ll, best)
    np.testing.assert_allclose(ll[-1], log_prob_exact(DATA, res.params).mean(), rtol=1e-12)


def test_sigma_from_the_data_and_uncentered_training():
    res = fit(DATA, 2, method="pcd", **dict(LEARN, visible="gaussian"), optimizer=SGD(centered=False))
    assert GAUSSIAN_SIGMA_SCALE == 0.5
    np.testing.assert_allclose(res.params.sigma, 0.5 * DATA.std(axis=0))  # the default: half the column std
    ll = res.history.log_likelihood
    assert ll[-1] > ll[0]


def test_the_default_sigma_beats_the_column_std_on_held_out_data():
    # σ = std makes every mixture component as wide as the data; half of it lets the components separate
    # (benchmarks/gaussian_sigma.py measures it on three data sets)
    held_out = sample_exact(TRUE, 2000, rng=2)
    options = dict(learning_rate=0.05, n_updates=1000, **FAST, method=CD(k=1), optimizer=SGD(schedule="constant"),
                   evaluation=None)
    default = fit(DATA, 8, visible="gaussian", **options)
    old = fit(DATA, 8, visible=Gaussian(DATA.std(axis=0)), **options)
    np.testing.assert_allclose(default.params.sigma, 0.5 * old.params.sigma)
    ll_default, ll_old, ll_true = (log_likelihood(p, held_out).mean() for p in (default.params, old.params, TRUE))
    # measured: -4.19, -4.54 and -4.10: the old default stays far from the truth, the new one comes close
    assert ll_default > ll_old + 0.25 and ll_default > ll_true - 0.15 and ll_old < ll_true - 0.3, (ll_default, ll_old)


def test_resume_gives_the_uninterrupted_run(tmp_path):
    options = dict(LEARN, method="pcd", n_updates=30, evaluation=10, optimizer="adam", learning_rate=0.01)
    whole = fit(DATA, 2, **options)
    fit(DATA, 2, callback=lambda step: step.update == 12, **options,
        checkpoints=Checkpoints(updates=[12], directory=tmp_path))
    resumed = fit(DATA, **dict(options, visible=None), checkpoints=Checkpoints(resume=tmp_path))
    assert resumed.params == whole.params  # sigma included: it was written to the checkpoint
    np.testing.assert_array_equal(resumed.chains.v, whole.chains.v)


@pytest.mark.parametrize(
    "bad, match",
    [
        (np.where(DATA > 1.0, np.nan, DATA), "non-finite"),
        (np.where(DATA > 1.0, np.inf, DATA), "non-finite"),
        (DATA[:, :3], r"4 units in its last axis, got shape \(400, 3\)"),
        (DATA > 0, "dtype bool"),
    ],
)
def test_bad_data_is_refused_and_not_mutated(bad, match):
    copy = np.array(bad, copy=True)
    with pytest.raises(ValueError, match=match):
        fit(bad, params=TRUE, method="pcd", n_updates=2, **FAST)
    np.testing.assert_array_equal(bad, copy)


@pytest.mark.parametrize("method", ["pt", "tap", "mean_field"])
def test_other_methods_are_refused_by_name(method):
    with pytest.raises(ValueError, match=re.escape(f"with the methods {FAMILY_METHODS!r} only, not {method!r}")):
        fit(DATA, params=TRUE, method=method, n_updates=2, **FAST)


def test_no_records_beyond_enumeration_with_a_clear_warning():
    rng = np.random.default_rng(0)
    data = rng.normal(size=(20, 3))  # 17 hidden units: 2**17 mixture components, beyond the enumeration
    with pytest.warns(RuntimeWarning, match="records no log-likelihood") as caught:
        res = fit(data, 17, visible="gaussian", method="cd", n_updates=2, **FAST)
    assert len(caught) == 1
    assert len(res.history) == 0 and res.n_updates == 2 and not res.stopped_early

"""``fit`` on categorical (Potts-visible) RBMs: it learns, resumes draw for draw, and refuses what it cannot do."""

import re
import warnings

import numpy as np
import pytest

from pymc_rbm.categorical import CategoricalRBMParams, log_prob_exact, sample_exact
from pymc_rbm.layers import Potts
from pymc_rbm.training import CD, PCD, SGD, Checkpoints, Evaluation, Init, Moments, fit
from pymc_rbm.training.negative import FAMILY_METHODS
from pymc_rbm.training.run import DEFAULT_BATCH_SIZE

TRUE = CategoricalRBMParams.random(5, 3, 3, scale=1.5, rng=0)  # 3**5 = 243 sequences: enumerable
DATA = sample_exact(TRUE, 300, rng=1)  # exact mean log-likelihood of TRUE on DATA: -3.540
FAST = dict(progress=False, rng=0)
LEARN = dict(learning_rate=0.5, batch_size=50, n_updates=300, **FAST, evaluation=100, params=Init(scale=0.1))


@pytest.mark.parametrize("method, operator", [("pcd", "gibbs"), ("pcd", "flip"), ("pcd", 0.5), ("cd", "gibbs"),
                                              ("exact", "gibbs")])
def test_training_raises_the_exact_log_likelihood(method, operator):
    record = Moments(method) if method == "exact" else {"cd": CD, "pcd": PCD}[method](operator=operator)
    res = fit(DATA, 3, visible="categorical", method=record, **LEARN)
    ll = res.history.log_likelihood
    best = log_prob_exact(DATA, TRUE).mean()
    assert res.history.estimator == "exact"
    assert isinstance(res.params, CategoricalRBMParams) and res.params.W.shape == (5, 3, 3)
    # the start is the independent-site model (-3.664); training closes most of the gap to the true model
    assert ll[-1] - ll[0] > 0.07 and ll[-1] > best - 0.04, (ll, best)
    np.testing.assert_allclose(ll[-1], log_prob_exact(DATA, res.params).mean(), rtol=1e-12)


def test_uncentered_training_learns_too():
    res = fit(DATA, 3, visible="categorical", method="pcd", **LEARN, optimizer=SGD(centered=False))
    ll = res.history.log_likelihood
    assert ll[-1] - ll[0] > 0.05, ll


def test_start_is_the_independent_site_model():
    res = fit(DATA, 3, visible=Potts(3), n_updates=1, **FAST, evaluation=None, checkpoints=Checkpoints(updates=[0]))
    start = res.trajectory.params[0]
    freq = np.stack([np.bincount(DATA[:, i], minlength=3) for i in range(5)]) / len(DATA)
    np.testing.assert_allclose(np.exp(start.vbias), freq, rtol=1e-12)
    np.testing.assert_array_equal(start.hbias, 0.0)


def test_one_hot_data_trains_as_its_labels():
    a = fit(DATA, 3, visible="categorical", method="pcd", n_updates=20, **FAST, evaluation=10)
    b = fit(np.eye(3)[DATA], 3, visible="categorical", method="pcd", n_updates=20, **FAST, evaluation=10)
    assert a.params == b.params
    np.testing.assert_array_equal(a.history.log_likelihood, b.history.log_likelihood)


def test_seeds_reproduce_and_params_start_the_run():
    start = CategoricalRBMParams.random(5, 3, 2, scale=0.1, rng=3)
    a = fit(DATA, params=start, n_updates=15, **FAST, method=PCD(operator="flip"), evaluation=None)
    b = fit(DATA, params=start, n_updates=15, **FAST, method=PCD(operator="flip"), evaluation=None)
    assert a.params == b.params
    # one persistent chain per row of the default mini-batch (DEFAULT_BATCH_SIZE of the 300 rows)
    assert a.chains.v.shape == (DEFAULT_BATCH_SIZE, 5) and set(np.unique(a.chains.v)) <= {0.0, 1.0, 2.0}


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_resume_gives_the_uninterrupted_run_draw_for_draw(tmp_path, optimizer):
    options = dict(visible="categorical", batch_size=40, n_updates=30, optimizer=optimizer, learning_rate=0.05,
                   **FAST, method=PCD(k=2, operator="flip"), evaluation=10)
    whole = fit(DATA, 3, **options)
    fit(DATA, 3, callback=lambda step: step.update == 12, **options,
        checkpoints=Checkpoints(updates=[12], directory=tmp_path))
    rest = dict(options, visible=None)
    resumed = fit(DATA, **rest, checkpoints=Checkpoints(resume=tmp_path))
    assert isinstance(resumed.params, CategoricalRBMParams)
    assert resumed.params == whole.params
    np.testing.assert_array_equal(resumed.chains.v, whole.chains.v)
    np.testing.assert_array_equal(resumed.chains.h, whole.chains.h)
    np.testing.assert_array_equal(resumed.history.log_likelihood[-1], whole.history.log_likelihood[-1])


@pytest.mark.parametrize(
    "bad, match",
    [
        (np.where(DATA == 2, 3, DATA), r"integer labels in \[0, 3\)"),  # out of range for the 3-state params
        (DATA[:, :4], "n_visible = 5, but the data have 4"),
        (np.where(DATA == 2, np.nan, DATA), r"integer labels in \[0, 3\)"),
        (DATA + 0.5, r"integer labels in \[0, 3\)"),  # float labels
        (DATA.astype(bool), "dtype bool"),
    ],
)
def test_bad_data_is_refused_and_not_mutated(bad, match):
    start = CategoricalRBMParams.random(5, 3, 2, rng=0)
    copy = np.array(bad, copy=True)
    with pytest.raises(ValueError, match=match):
        fit(bad, params=start, method="pcd", n_updates=2, **FAST)
    np.testing.assert_array_equal(bad, copy)


def test_inputs_are_not_mutated_by_a_run():
    data, start = DATA.copy(), CategoricalRBMParams.random(5, 3, 2, rng=0)
    W = start.W.copy()
    fit(data, params=start, method="pcd", n_updates=5, **FAST, evaluation=None)
    np.testing.assert_array_equal(data, DATA)
    np.testing.assert_array_equal(start.W, W)


@pytest.mark.parametrize("method", ["pt", "mean_field", "tap", "bethe", "mixture_mean_field"])
def test_other_methods_are_refused_by_name(method):
    with pytest.raises(ValueError, match=re.escape(f"with the methods {FAMILY_METHODS!r} only, not {method!r}")):
        fit(DATA, 3, visible="categorical", method=method, n_updates=2, **FAST)


def test_other_options_are_refused():
    class Proposal:
        def propose(self, rng, x):
            return x, np.zeros(len(x))

    with pytest.raises(ValueError, match="wormholes are written for binary"):
        fit(DATA, 3, visible="categorical", n_updates=2, **FAST, method=PCD(wormholes=Proposal()))
    with pytest.raises(TypeError, match="no longer takes the keyword k"):
        fit(DATA, 3, visible="categorical", method="exact", k=3, n_updates=2, **FAST)
    with pytest.raises(ValueError, match="contradicts the starting params"):
        fit(DATA, params=CategoricalRBMParams.random(5, 3, 2, rng=0), visible="gaussian", n_updates=2, **FAST)


def test_records_by_ais_agree_with_exact_and_leave_training_alone():
    options = dict(visible="categorical", method="pcd", n_updates=40, **FAST, evaluation=20)
    exact = fit(DATA, 3, **options)
    ais = fit(DATA, 3, **options | {"evaluation": Evaluation(every=20, method="ais",
                                                             options={"n_steps": 300, "n_chains": 50})})
    assert ais.params == exact.params  # the records draw from their own stream
    assert ais.history.estimator == "ais" and np.all(ais.history.stderr > 0)
    np.testing.assert_allclose(ais.history.log_likelihood, exact.history.log_likelihood, atol=0.03)


def test_records_beyond_enumeration_are_estimated_by_ais():
    rng = np.random.default_rng(0)
    data = rng.integers(0, 21, (20, 8))  # 21**8 sequences, 2**21 hidden states: not enumerable
    res = fit(data, 21, visible=Potts(21), method="cd", n_updates=2, **FAST,
              evaluation=Evaluation(options={"n_steps": 20, "n_chains": 10}))
    assert res.history.estimator == "ais" and len(res.history) == 2
    assert np.all(np.isfinite(res.history.log_likelihood))


def test_float32_runs():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = fit(DATA, 3, visible="categorical", method="pcd", **LEARN | {"params": Init(scale=0.1, dtype=np.float32)})
    assert res.params.dtype == np.float32
    assert res.history.log_likelihood[-1] - res.history.log_likelihood[0] > 0.05

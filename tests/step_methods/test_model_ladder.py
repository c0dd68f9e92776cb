"""ModelLadder in pm.sample: draws of a bimodal RBM match enumeration; bad ladders and models are refused."""

import numpy as np
import pymc as pm
import pytest

from pymc_rbm import RBM, ModelLadder, RBMParams
from pymc_rbm.estimators import binary_states, log_marginal_visible
from pymc_rbm.testing import state_index
from pymc_rbm.training import Checkpoints, PCD, SGD

SAMPLE = dict(progressbar=False, compute_convergence_checks=False, cores=1)


@pytest.fixture(scope="module")
def bimodal():
    """8 visible units, mostly all on or all off (about 12 nats between), and a ladder towards it."""
    a, n = 6.0, 8
    target = RBMParams(np.full((n, 1), a), np.full(n, -a / 2), np.array([-a * n / 2]))
    # an independent first model with two hidden units, then the target scaled up: a training-like path
    first = RBMParams(np.zeros((n, 2)), np.zeros(n), np.zeros(2))
    models = [first] + [RBMParams(t * target.W, t * target.vbias, t * target.hbias) for t in np.linspace(0.1, 1.0, 8)]
    return target, models


def tv_to_exact(draws, params):
    p = np.exp(log_marginal_visible(params))
    idx = state_index(draws.reshape(-1, params.n_visible))
    freq = np.bincount(idx, minlength=p.size) / idx.size
    return 0.5 * np.abs(freq - p).sum()


def test_draws_match_enumeration_on_a_bimodal_model(bimodal):
    target, models = bimodal
    with pm.Model():
        v = RBM("v", target.W, target.vbias, target.hbias)
        idata = pm.sample(draws=1500, tune=200, chains=2, step=ModelLadder([v], models=models), random_seed=7,
                          **SAMPLE)
    draws = idata.posterior["v"].values
    tv = tv_to_exact(draws, target)
    assert tv < 0.08, tv
    # both modes, in both chains, in about equal shares
    on = draws.sum(axis=-1) >= 4
    assert np.all(np.abs(on.mean(axis=1) - 0.5) < 0.15)
    stats = idata.sample_stats
    assert int(stats["round_trips"].values[:, -1].min()) > 10
    rungs = np.asarray(stats["rungs"].values[0, -1], dtype=int)
    assert rungs[0] == 0 and rungs[rungs >= 0][-1] == len(models) - 1


def test_the_same_model_without_the_ladder_is_stuck(bimodal):
    """The test has power: one chain of flip-the-state stays in its mode."""
    from pymc_rbm import FlipTheState

    target, _ = bimodal
    with pm.Model():
        v = RBM("v", target.W, target.vbias, target.hbias)
        idata = pm.sample(draws=1500, tune=200, chains=2, step=FlipTheState([v]), random_seed=7, **SAMPLE)
    assert tv_to_exact(idata.posterior["v"].values, target) > 0.2


def test_batched_variable_and_all_rungs(bimodal):
    target, models = bimodal
    with pm.Model():
        v = RBM("v", target.W, target.vbias, target.hbias, shape=(3, 8))
        step = ModelLadder([v], models=models, rungs="all", operator="gibbs", rounds=2)
        idata = pm.sample(draws=300, tune=20, chains=1, step=step, random_seed=3, **SAMPLE)
    assert idata.posterior["v"].shape == (1, 300, 3, 8)
    assert int(idata.sample_stats["n_temperatures"].max()) == len(models)
    assert tv_to_exact(idata.posterior["v"].values, target) < 0.15


def test_refusals(bimodal):
    target, models = bimodal
    other = RBMParams(target.W * 1.01, target.vbias, target.hbias)
    with pm.Model():
        v = RBM("v", target.W, target.vbias, target.hbias)
        with pytest.raises(ValueError, match="last model of the ladder must be the RBM variable"):
            ModelLadder([v], models=[*models[:-1], other])
        with pytest.raises(ValueError, match="at least two"):
            ModelLadder([v], models=[target])
        with pytest.raises(ValueError, match="rungs"):
            ModelLadder([v], models=models, rungs=[1, 4])
        with pytest.raises(ValueError, match="rounds"):
            ModelLadder([v], models=models, rounds=0)
    with pm.Model():
        v = RBM("v", target.W, target.vbias, target.hbias)
        pm.Normal("y", mu=v.sum(), sigma=1.0, observed=2.0)
        with pytest.raises(ValueError, match="other model terms involve its visible units"):
            ModelLadder([v], models=models)
    with pm.Model():
        w = pm.Normal("w", 0, 1, shape=(8, 1))
        v = RBM("v", w, target.vbias, target.hbias)
        with pytest.raises(ValueError, match="constants or data"):
            ModelLadder([v], models=models)


def test_a_training_trajectory_is_a_ladder():
    """The documented workflow: fit keeps a trajectory, whose last model is fit's result."""
    from pymc_rbm.training import fit

    rng = np.random.default_rng(0)
    data = np.repeat(binary_states(4)[[0, 15]], 50, axis=0)
    flip = rng.random(data.shape) < 0.05
    data = np.where(flip, 1 - data, data)
    result = fit(data, 3, batch_size=20, n_updates=200, progress=False, rng=1, learning_rate=0.1, method=PCD(k=1),
                 optimizer=SGD(average=0), evaluation=None, checkpoints=Checkpoints(updates=12))
    p = result.params
    with pm.Model():
        v = RBM("v", p.W, p.vbias, p.hbias)
        idata = pm.sample(draws=100, tune=40, chains=1, random_seed=1,
                          step=ModelLadder([v], models=result.trajectory), **SAMPLE)
    rungs = np.asarray(idata.sample_stats["rungs"].values[0, -1], dtype=int)
    assert rungs[0] == 0 and rungs[rungs >= 0][-1] == len(result.trajectory) - 1

"""pm.sample warns, in PyMC's style, when the chains of an RBM variable are stuck; not when they mix."""

import logging

import pymc as pm
import pytest

from pymc_rbm import RBM, FlipTheState, RBMParams
from pymc_rbm.datasets import bundled_rbm
from pymc_rbm.step_methods.convergence import rbm_convergence_checks


def sample(step_factory, caplog, seed=2, **kwargs):
    params = bundled_rbm()
    with pm.Model() as model:
        v = RBM("v", params.W, params.vbias, params.hbias)
        with caplog.at_level(logging.WARNING, logger="pymc"):
            idata = pm.sample(draws=300, tune=300, chains=3, cores=1, random_seed=seed, progressbar=False,
                              step=step_factory(v), **kwargs)
    return model, idata, [r.getMessage() for r in caplog.records if "RBM variable" in r.getMessage()]


def test_stuck_local_sampler_is_reported(caplog):
    model, idata, messages = sample(lambda v: FlipTheState([v]), caplog)
    assert messages and "'v'" in messages[0]
    assert [w.message for w in rbm_convergence_checks(idata, model)] == messages


def test_mixing_default_is_not_reported(caplog):
    _, idata, messages = sample(lambda v: None, caplog)
    assert messages == []


def test_chains_start_apart_unless_asked_not_to(caplog):
    params = RBMParams.random(16, 4, scale=0.01, rng=0)
    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias)
        idata = pm.sample(draws=5, tune=5, chains=3, cores=1, random_seed=5, progressbar=False,
                          discard_tuned_samples=False, compute_convergence_checks=False, step=FlipTheState([v]))
        with pytest.raises(ValueError, match="random_start"):
            FlipTheState([v], random_start="yes")
    firsts = idata.warmup_posterior["v"].values[:, 0]
    assert len({tuple(x) for x in firsts}) == 3  # the shared start (all zeros) is left at once

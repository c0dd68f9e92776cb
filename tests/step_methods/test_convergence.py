"""pm.sample warns, in PyMC's style, when the chains of an RBM variable are stuck; not when they mix. It warns
before sampling when a step that cannot sample its variables alone is given them alone."""

import logging
import warnings

import numpy as np
import pymc as pm
import pytest
from pymc.step_methods.compound import CompoundStep

from pymc_rbm import RBM, FlipTheState, RBMParams, WormholeMetropolis
from pymc_rbm.datasets import bars_and_stripes, bundled_rbm
from pymc_rbm.step_methods.convergence import lone_step_warnings, rbm_convergence_checks


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


# --- a step that cannot sample its variables alone (WormholeMetropolis) --------------------------------------
def _local_moves(idata):
    """Per chain, whether each draw changed v without an accepted jump (so another step moved it)."""
    v = idata.posterior["v"].values
    jumped = idata.sample_stats["accepted"].values & idata.sample_stats["region_changed"].values
    jumped = jumped.reshape(*v.shape[:2], -1).any(axis=-1)  # two wormhole steps: a stat each
    return (v[:, 1:] != v[:, :-1]).any(axis=-1) & ~jumped[:, 1:]


def _sample_with(steps, params, draws, seed=0):
    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            idata = pm.sample(draws=draws, tune=0, chains=2, cores=1, random_seed=seed, progressbar=False,
                              compute_convergence_checks=False, step=steps(v))
    return idata, [str(w.message) for w in caught if "no other step moved" in str(w.message)]


def test_wormhole_jumps_alone_are_reported_before_sampling():
    params = RBMParams.random(6, 4, rng=0)
    data = np.array([[1, 1, 0, 0, 0, 0], [0, 0, 1, 1, 0, 0], [0, 0, 0, 0, 1, 1]])
    for steps in (lambda v: WormholeMetropolis([v], data=data),
                  lambda v: [WormholeMetropolis([v], data=data), WormholeMetropolis([v], data=data, kind="region")]):
        idata, said = _sample_with(steps, params, draws=20)
        assert len(said) >= 1 and "['v']" in said[0] and "reducible" in said[0]
        assert not _local_moves(idata).any()  # indeed nothing but the jumps moved v


def test_lone_step_warnings_look_inside_compound_steps():
    params = RBMParams.random(6, 4, rng=0)
    data = np.array([[1, 1, 0, 0, 0, 0], [0, 0, 1, 1, 0, 0]])
    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias)
        jumps = WormholeMetropolis([v], data=data)
        assert lone_step_warnings(CompoundStep([jumps])) == [jumps.alone_warning.format(names=["v"])]
        assert lone_step_warnings(CompoundStep([FlipTheState([v]), jumps])) == []
        assert lone_step_warnings([FlipTheState([v])]) == lone_step_warnings(None) == []


def test_demo_wormholes_next_to_flip_the_state_are_not_reported():
    # the demo's step on the bundled (sharp) RBM: flip-the-state leaves a pattern so rarely that it moves v
    # in none of 100 draws of a chain, but it moves it, and the chain with the jumps is irreducible
    params = bundled_rbm()
    data = bars_and_stripes(4, variant="mackay")
    idata, said = _sample_with(
        lambda v: [FlipTheState([v]), WormholeMetropolis([v], data=data, kind="point")], params, draws=300, seed=1)
    assert said == []
    local = _local_moves(idata)
    assert local.any()  # flip-the-state moves v ...
    gaps = [np.diff(np.flatnonzero(np.r_[True, chain, True])).max() for chain in local]
    assert max(gaps) > 100  # ... yet not in every 100 draws: no count of draws can tell it from jumps alone


def test_rows_whose_units_data_fix_sample_without_runtime_warnings(caplog):
    # sharp readouts fix most pixels of 12 rows: ArviZ's R-hat divides by zero for each of them in PyMC's checks
    rng = np.random.default_rng(3)
    params = RBMParams.random(8, 4, rng=0)
    y = rng.integers(0, 2, size=(12, 8)) + rng.normal(0.0, 0.25, size=(12, 8))
    with pm.Model() as model, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        v = RBM("v", params.W, params.vbias, params.hbias, shape=(12, 8))
        pm.Normal("y", v, 0.25, observed=y)
        with caplog.at_level(logging.WARNING, logger="pymc"):
            idata = pm.sample(draws=200, tune=100, chains=2, cores=1, random_seed=4, progressbar=False)
    draws = idata.posterior["v"].values
    assert np.all(draws == draws[:1, :1], axis=(0, 1)).sum() > 10  # units that never changed, in any chain
    assert [w for w in caught if issubclass(w.category, RuntimeWarning)] == []
    assert rbm_convergence_checks(idata, model) == []  # all chains hold them: concentrated, not stuck

"""moments(params, method="sampling"): Rao-Blackwellized chain averages against exact enumeration."""

from __future__ import annotations

import numpy as np
import pytest

from pymc_rbm import RBMParams
from pymc_rbm.estimators import ExactMoments, SampledMoments, moments, moments_exact, moments_sampling


def _z_scores(est: SampledMoments, exact: ExactMoments) -> np.ndarray:
    fields = ("v", "h", "vh")
    return np.concatenate([((getattr(est, f) - getattr(exact, f)) / getattr(est.stderr, f)).ravel() for f in fields])


@pytest.mark.parametrize("operator", ["gibbs", "flip", 0.5])
@pytest.mark.parametrize("nv, nh, scale", [(9, 5, 1.0), (6, 8, 2.0)])
def test_matches_exact_moments_within_stderr(operator, nv, nh, scale):
    params = RBMParams.random(nv, nh, scale=scale, rng=10 * nv + nh)
    exact = moments_exact(params)
    est = moments_sampling(params, n_chains=16, n_sweeps=1500, burn_in=200, operator=operator, rng=7)
    z = _z_scores(est, exact)
    # the standard errors are honest: z-scores look standard normal (a wrong mean or a too small
    # stderr gives |z| of tens; 1.5 is far above the sampling spread of the rms over ~70 entries)
    assert np.abs(z).max() < 5.0
    assert 0.4 < np.sqrt(np.mean(z**2)) < 1.6
    # and small: a few thousandths for 24000 draws
    assert est.stderr.vh.max() < 0.02
    assert est.diagnostics["max_z_between"] < 5.0


def test_result_type_and_dispatch():
    params = RBMParams.random(5, 3, scale=0.5, rng=0)
    a = moments(params, "sampling", rng=3, n_chains=4, n_sweeps=50, burn_in=5)
    b = moments_sampling(params, rng=3, n_chains=4, n_sweeps=50, burn_in=5)
    assert isinstance(a, ExactMoments) and isinstance(a, SampledMoments)
    v, h, vh = a  # unpacks like every other method's result
    assert v.shape == (5,) and h.shape == (3,) and vh.shape == (5, 3)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))  # same seed, same numbers
    assert a.stderr.vh.shape == (5, 3) and np.all(a.stderr.v > 0)
    assert a.diagnostics["n_chains"] == 4
    # deterministic methods ignore rng in the dispatcher
    assert np.allclose(moments(params, "tap", rng=1).v, moments(params, "tap").v)


def test_rao_blackwellized_values_stay_in_range_and_start_from_data():
    params = RBMParams.random(7, 4, scale=3.0, rng=5)
    data = (np.random.default_rng(0).random((3, 7)) < 0.5).astype(np.int8)
    before = data.copy()
    est = moments_sampling(params, init=data, n_chains=6, n_sweeps=30, burn_in=0, rng=2)
    assert np.array_equal(data, before)  # not mutated
    for x in est:
        assert np.all((x >= 0.0) & (x <= 1.0))


@pytest.mark.parametrize(
    "kwargs, msg",
    [
        ({"n_chains": 1}, "at least 2"),
        ({"n_sweeps": 0}, "positive integer"),
        ({"burn_in": -1}, "burn_in"),
        ({"operator": "metropolis"}, "operator"),
        ({"init": np.full((2, 5), 0.5)}, "binary|0, 1"),
        ({"init": np.zeros((2, 4))}, "n_visible"),
    ],
)
def test_bad_input(kwargs, msg):
    params = RBMParams.random(5, 3, rng=0)
    with pytest.raises(ValueError, match=msg):
        moments_sampling(params, **kwargs)
    with pytest.raises(TypeError, match="RBMParams"):
        moments_sampling(np.zeros((5, 3)))

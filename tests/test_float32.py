"""Models under ``floatX="float32"``: the exact log Z Ops and their gradients, compiled and sampled by NUTS.

The enumeration Ops compute in float64 whatever the dtype of their inputs; a
float32 random ``W`` reaches them through a cast, and the gradient goes back
to float32 through it.
"""

import arviz as az
import numpy as np
import pymc as pm
import pytensor
import pytest

from pymc_rbm import RBM, RBMParams
from pymc_rbm.categorical import CategoricalRBM, CategoricalRBMParams

RNG = np.random.default_rng(11)
BINARY = RBMParams.random(6, 4, rng=3)
BINARY_DATA = RNG.integers(0, 2, (20, 6))
CATEGORICAL = CategoricalRBMParams(RNG.normal(0, 0.5, (4, 3, 2)), RNG.normal(0, 0.5, (4, 3)), RNG.normal(0, 0.5, 2))
CATEGORICAL_DATA = RNG.integers(0, 3, (15, 4))

# the categorical Ops run in Numba's object mode on purpose, as the binary ones (filtered in pyproject.toml)
pytestmark = pytest.mark.filterwarnings("ignore:Numba will use object mode to run Categorical:UserWarning")


def _binary_model():
    with pm.Model() as model:
        W = pm.Normal("W", 0.0, 0.5, shape=(6, 4))
        RBM("v", W, BINARY.vbias, BINARY.hbias, log_partition="exact", observed=BINARY_DATA)
    return model


def _categorical_model():
    with pm.Model() as model:
        W = pm.Normal("W", 0.0, 0.5, shape=(4, 3, 2))
        CategoricalRBM("v", W, CATEGORICAL.vbias, CATEGORICAL.hbias, log_partition="exact", observed=CATEGORICAL_DATA)
    return model


def _logp_and_dlogp(build, points, floatX):
    with pytensor.config.change_flags(floatX=floatX):
        model = build()
        assert model.initial_point()["W"].dtype == floatX
        logp, dlogp = model.compile_logp(), model.compile_dlogp()
        return [(logp({"W": w.astype(floatX)}), dlogp({"W": w.astype(floatX)})) for w in points]


@pytest.mark.parametrize("build, shape", [(_binary_model, (6, 4)), (_categorical_model, (4, 3, 2))])
def test_float32_logp_and_gradient_equal_float64(build, shape):
    rng = np.random.default_rng(4)
    points = [rng.normal(0, 0.7, shape).astype(np.float32) for _ in range(4)]  # exactly representable in both
    single = _logp_and_dlogp(build, points, "float32")
    double = _logp_and_dlogp(build, points, "float64")
    for (lp32, g32), (lp64, g64) in zip(single, double):
        assert g32.dtype == np.float32 and g64.dtype == np.float64
        assert lp32 == pytest.approx(lp64, rel=1e-6)
        np.testing.assert_allclose(g32, g64, rtol=1e-5, atol=1e-5)
        assert np.abs(g64).max() > 0.1  # a real gradient, not zeros on both sides


def _posterior_of_w(floatX):
    with pytensor.config.change_flags(floatX=floatX):
        with _binary_model():
            idata = pm.sample(
                draws=500, tune=500, chains=2, cores=1, random_seed=5, progressbar=False,
                compute_convergence_checks=False,
            )
    assert idata.posterior["W"].dtype == floatX
    return idata.posterior["W"].mean(("chain", "draw")).values, az.mcse(idata, var_names=["W"])["W"].values


@pytest.mark.slow
def test_nuts_on_float32_weights_matches_float64():
    mean32, mcse32 = _posterior_of_w("float32")
    mean64, mcse64 = _posterior_of_w("float64")
    assert np.all(np.abs(mean32 - mean64) < 4 * np.sqrt(mcse32**2 + mcse64**2))
    assert np.abs(mean64).max() > 0.2  # the data moved the posterior away from the prior's mean 0

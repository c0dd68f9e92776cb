"""The plumbing every RBM step shares (:class:`~pymc_rbm.step_methods.layer_base.VariableStep`).

Binary, categorical and Gaussian steps take their variable, options, random
start, parameters and stats from one base; these tests check that base once
for two layer types.
"""

import numpy as np
import pymc as pm
import pytest

from pymc_rbm import RBM
from pymc_rbm.categorical import CategoricalRBM, CategoricalRBMParams
from pymc_rbm.params import RBMParams
from pymc_rbm.step_methods import BlockGibbs, RBMStep
from pymc_rbm.step_methods.categorical import CategoricalGibbs
from pymc_rbm.step_methods.layer_base import LayerStep, VariableStep

BINARY = RBMParams.random(3, 2, scale=1.0, rng=0)
CATEGORICAL = CategoricalRBMParams.random(3, 3, 2, scale=1.0, rng=1)


def binary_model():
    with pm.Model() as model:
        RBM("v", BINARY.W, BINARY.vbias, BINARY.hbias, shape=(2, 3))
        pm.Normal("x")
    return model


def categorical_model():
    with pm.Model() as model:
        CategoricalRBM("v", CATEGORICAL.W, CATEGORICAL.vbias, CATEGORICAL.hbias, shape=(2, 3))
        pm.Normal("x")
    return model


CASES = [(binary_model, BlockGibbs, "RBM"), (categorical_model, CategoricalGibbs, "CategoricalRBM")]
IDS = ["binary", "categorical"]


def test_binary_and_layer_steps_share_one_base():
    assert issubclass(RBMStep, VariableStep)
    assert issubclass(LayerStep, VariableStep)


@pytest.mark.parametrize("make_model, step_class, kind", CASES, ids=IDS)
def test_the_variable_is_found_and_checked_by_the_layer_type(make_model, step_class, kind):
    model = make_model()
    with model:
        step = step_class()
        assert [v.name for v in step.vars] == ["v"]
        assert step._out_dtype == np.dtype(model["v"].dtype)
        assert step._n_chains == 2
        with pytest.raises(ValueError, match=f"can only sample {kind} variables; x is not"):
            step_class([model["x"]])
        with pytest.raises(ValueError, match="random_start must be True or False"):
            step_class(random_start=1)


@pytest.mark.parametrize("make_model, step_class, kind", CASES, ids=IDS)
def test_stats_are_declared_and_shaped_per_chain(make_model, step_class, kind):
    model = make_model()
    with model:
        step = step_class(rng=0)
    assert step.stats_dtypes_shapes["free_energy"] == (object, [2])
    assert step.stats_dtypes_shapes["refreshed"] == (bool, [])
    step.setup_chain(np.random.default_rng(0), tune=1, draws=1)
    point = model.initial_point()
    out, (stats,) = step.step(point)
    assert stats["free_energy"].shape == (2,)
    assert stats["n_changed"].dtype == np.int64
    assert stats["refreshed"] is True
    n_states = 2 if kind == "RBM" else CATEGORICAL.n_states
    assert set(np.unique(out["v"])) <= set(range(n_states))


@pytest.mark.parametrize("make_model, step_class, kind", CASES, ids=IDS)
def test_data_parameters_are_read_again_per_chain(make_model, step_class, kind):
    params = BINARY if kind == "RBM" else CATEGORICAL
    with pm.Model():
        hbias = pm.Data("hbias", params.hbias)
        dist = RBM if kind == "RBM" else CategoricalRBM
        dist("v", params.W, params.vbias, hbias)
        step = step_class(rng=0)
        assert step._data_fn is not None and step._param_fn is None
        pm.set_data({"hbias": params.hbias + 1.0})
        step.setup_chain(np.random.default_rng(0), tune=0, draws=1)
    np.testing.assert_allclose(step.params.hbias, params.hbias + 1.0)

"""The annealing path built once and handed to every annealing estimator."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from pymc_rbm import RBMParams
from pymc_rbm.estimators import AnnealingPath, ais, annealing_path, bar, log_partition_exact, reverse_ais, rts, sams
from pymc_rbm.estimators.ais import base_rate_vbias
from pymc_rbm.estimators.exact import sample_visible_exact
from pymc_rbm.kernels.layer import GIBBS, LayerRule

P = RBMParams.random(12, 6, scale=1.5, rng=3)
DATA = np.random.default_rng(0).integers(0, 2, (50, 12))
OPTIONS = {"data": DATA, "base_smoothing": 0.01, "dtype": np.float32, "operator": "flip"}


def test_annealing_path_binds_its_options():
    path = annealing_path(P, **OPTIONS)
    assert isinstance(path, AnnealingPath)
    assert path.dtype == np.float32 and path.alpha == 1.0 and path.rule == LayerRule(1.0)
    np.testing.assert_allclose(path.base_vbias, base_rate_vbias(P, DATA, smoothing=0.01))
    assert annealing_path(P).rule is GIBBS
    with pytest.raises(ValueError, match="operator"):
        annealing_path(P, operator="metropolis")
    with pytest.raises(TypeError, match="RBMParams"):
        annealing_path("model")


@pytest.mark.parametrize(
    "run",
    [
        lambda x, **kw: ais(x, n_chains=20, n_steps=300, **kw),
        lambda x, **kw: bar(x, n_chains=20, n_steps=300, n_jobs=1, **kw),
        lambda x, **kw: rts(x, n_chains=10, n_rounds=2, n_sweeps=100, n_pilot=100, **kw),
        lambda x, **kw: sams(x, n_runs=4, n_sweeps=300, n_pilot=100, **kw),
    ],
    ids=["ais", "bar", "rts", "sams"],
)
def test_a_path_gives_the_run_of_its_options(run):
    """Draw for draw: the estimator on a path built once is the estimator on the model with the same options."""
    by_options = run(P, rng=4, **OPTIONS)
    by_path = run(annealing_path(P, **OPTIONS), rng=4)
    assert by_path.log_z == by_options.log_z
    assert by_path.diagnostics["operator"] == 1.0
    assert abs(by_path.log_z - log_partition_exact(P).log_z) < 6 * by_path.stderr + 0.1


def test_reverse_ais_takes_a_path():
    draws = sample_visible_exact(P, 30, rng=1)
    path = annealing_path(P, **OPTIONS)
    a = reverse_ais(path, draws, n_chains=20, schedule=300, rng=2)
    b = reverse_ais(P, draws, n_chains=20, schedule=300, rng=2, base_data=DATA, base_smoothing=0.01,
                    dtype=np.float32, operator="flip")
    assert a.log_z == b.log_z
    with pytest.raises(ValueError, match="base_data"):
        reverse_ais(path, draws, base_data=DATA)


@pytest.mark.parametrize("estimator", [ais, bar, rts, sams])
def test_options_given_with_a_path_are_refused(estimator):
    path = annealing_path(P)
    other_dtype = np.float32 if estimator is ais else np.float64  # not the estimator's default
    for name, value in [("data", DATA), ("dtype", other_dtype), ("operator", "flip"), ("base", "zero")]:
        with pytest.raises(ValueError, match=f"{name}.*annealing_path"):
            estimator(path, **{name: value})
    multi = AnnealingPath([P, P], base_rate_vbias(P))
    if estimator is not sams:
        with pytest.raises(ValueError, match="one target"):
            estimator(multi)


def test_the_path_is_not_changed_by_the_estimators():
    path = annealing_path(P, **OPTIONS)
    W, b = path.W.copy(), path.base_vbias.copy()
    ais(path, n_chains=10, n_steps=50, rng=0)
    bar(path, n_chains=10, n_steps=50, rng=0, n_jobs=1)
    assert_array_equal(path.W, W)
    assert_array_equal(path.base_vbias, b)

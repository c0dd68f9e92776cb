"""log Z along a ladder of models by BAR between neighbours: within 0.05 nats of enumeration on small models."""

import numpy as np
import pytest

from pymc_rbm import RBMParams
from pymc_rbm.estimators import log_partition_exact, log_partition_trajectory, sample_visible_exact


@pytest.fixture(scope="module")
def ladder():
    """A sharp 10 x 6 RBM, reached from the uniform (independent, W = 0) model by scaling its parameters."""
    target = RBMParams.random(10, 6, scale=2.5, rng=4)
    return target, [RBMParams(t * target.W, t * target.vbias, t * target.hbias) for t in np.linspace(0, 1, 10)]


def test_log_z_of_the_last_model_from_an_independent_first(ladder):
    target, models = ladder
    exact = log_partition_exact(target).log_z
    est = log_partition_trajectory(models, n_chains=10, n_rounds=1500, rng=0)
    assert est.method == "trajectory_bar" and est.fingerprint == target.fingerprint()
    assert abs(est.log_z - exact) < 0.05, (est, exact)
    assert 0 < est.stderr < 0.05
    # every model on the way, against enumeration
    path = est.diagnostics["log_z_path"]
    assert path[0] == pytest.approx(16 * np.log(2), abs=1e-12)  # W = 0, zero biases: 2**16 states
    for m, lz in zip(models[::3], path[::3]):
        assert abs(lz - log_partition_exact(m).log_z) < 0.05
    assert est.diagnostics["round_trips"] > 0


def test_enumerable_first_model_and_given_samples(ladder):
    """From exact draws of every model (no ladder run); the first model here has couplings, so it is enumerated."""
    target, models = ladder
    models = models[2:]
    rng = np.random.default_rng(1)
    samples = [sample_visible_exact(m, 3000, rng=rng) for m in models]
    est = log_partition_trajectory(models, samples=samples, rng=2)
    assert abs(est.log_z - log_partition_exact(target).log_z) < 0.05
    assert est.diagnostics["log_z_first"] == pytest.approx(log_partition_exact(models[0]).log_z, abs=1e-12)
    # a wrong log Z of the first model shifts every value by the same amount
    shifted = log_partition_trajectory(models, samples=samples, log_z_first=est.diagnostics["log_z_first"] + 1.0)
    assert shifted.log_z == pytest.approx(est.log_z + 1.0, abs=1e-9)


def test_first_model_too_large_to_enumerate_is_refused():
    big = RBMParams.random(40, 40, scale=0.1, rng=0)
    models = [big, RBMParams(2 * big.W, big.vbias, big.hbias)]
    with pytest.raises(ValueError, match="log_z_first"):
        log_partition_trajectory(models, n_rounds=20, n_chains=2, rng=0)

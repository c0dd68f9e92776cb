"""AIS and reverse AIS on JAX against exact log Z, and the ``backend="jax"`` dispatch."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("jax.numpy")

import jax  # noqa: E402

from pymc_rbm import RBMParams  # noqa: E402
from pymc_rbm.estimators import log_partition, log_partition_exact, sample_visible_exact  # noqa: E402
from pymc_rbm.jax import ais, reverse_ais  # noqa: E402
from pymc_rbm.jax.ais import as_key  # noqa: E402

MODELS = [RBMParams.random(12, 6, scale=1.0, rng=0), RBMParams.random(8, 10, scale=2.5, rng=2)]


# every run below has 256 chains and 600 steps, so that runs of one model and operator share one compilation
CASES = [(0, "gibbs"), (0, "flip"), (0, 0.5), (1, "flip")]


@pytest.mark.parametrize(("model", "operator"), CASES)
def test_ais_matches_exact_log_z(model, operator):
    p = MODELS[model]
    exact = log_partition_exact(p).log_z
    est = ais(p, n_chains=256, schedule=600, operator=operator, rng=model)
    assert est.method == "ais" and est.diagnostics["backend"] == "jax"
    assert abs(est.log_z - exact) < 4 * est.stderr + 0.005
    lo, hi = est.interval
    assert lo < exact < hi
    assert est.diagnostics["log_weights"].shape == (256,)
    assert est.diagnostics["samples"].shape == (256, p.n_visible)


def test_ais_in_float64():
    p = MODELS[1]
    with jax.enable_x64(True):
        est = ais(p, n_chains=256, schedule=600, dtype="float64", rng=4)
    assert est.diagnostics["dtype"] == "float64"
    assert abs(est.log_z - log_partition_exact(p).log_z) < 4 * est.stderr + 0.005


def test_reverse_ais_from_exact_draws():
    p = MODELS[1]
    exact = log_partition_exact(p).log_z
    x = sample_visible_exact(p, 256, rng=3)
    est = reverse_ais(p, x, n_chains=None, schedule=600, operator="flip", rng=5)
    assert est.method == "reverse_ais"
    assert abs(est.log_z - exact) < 4 * est.stderr + 0.005
    ll = est.diagnostics["log_likelihood"]
    assert ll.shape == (256,) and np.all(np.isfinite(ll))


def test_ais_on_mnist_h10(mnist_model, binarized_mnist_test):
    """mnist_h10 (exact log Z 226.1132), 100 chains, 2000 steps, base rate from data."""
    p = mnist_model("mnist_h10")
    est = ais(p, n_chains=100, n_steps=2000, data=binarized_mnist_test, rng=0)
    assert abs(est.log_z - 226.1132) < 4 * est.stderr + 0.05


def test_log_partition_backend_dispatch():
    p = MODELS[0]
    est = log_partition(p, "ais", backend="jax", rng=1, n_chains=256, schedule=600)
    assert est.diagnostics["backend"] == "jax"
    again = log_partition(p, "ais", backend="jax", rng=1, n_chains=256, schedule=600)
    assert again.log_z == est.log_z  # seeded
    assert "backend" not in log_partition(p, "ais", rng=1, n_chains=16, schedule=50).diagnostics  # NumPy default
    with pytest.raises(ValueError, match="backend must be"):
        log_partition(p, "ais", backend="torch")
    with pytest.raises(ValueError, match="ais"):
        log_partition(p, "exact", backend="jax")


def test_bad_arguments():
    p = MODELS[0]
    with pytest.raises(ValueError, match="n_chains"):
        ais(p, n_chains=0)
    with pytest.raises(ValueError, match="schedule"):
        ais(p, schedule="adaptive")
    with pytest.raises(ValueError, match="float32 or float64"):
        ais(p, dtype="int32")
    with pytest.raises(TypeError, match="RBMParams"):
        ais((p.W, p.vbias, p.hbias))
    with pytest.raises(ValueError, match="binary"):
        reverse_ais(p, np.full((3, 12), 0.5))
    with pytest.raises(TypeError, match="rng"):
        as_key("seed")
    if not jax.config.jax_enable_x64:
        with pytest.raises(ValueError, match="64-bit"):
            ais(p, dtype="float64")

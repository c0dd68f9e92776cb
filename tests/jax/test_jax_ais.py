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


def _inline_anneal(key, v0, params, base_vbias, betas, dbetas, alpha, kahan):
    """AIS as it was written before it ran the sweep kernel on the path's target record: the reference."""
    import jax.numpy as jnp

    from pymc_rbm.jax.ais import _hidden_increment, _kahan_add
    from pymc_rbm.jax.arrays import matmul
    from pymc_rbm.jax.sweep import update_layer

    d = params.vbias - base_vbias
    acc = np.float32 if kahan else np.float64

    def weight(v, a, beta_prev, dbeta):
        return (dbeta * (v * d).sum(axis=-1) + _hidden_increment(a, beta_prev, dbeta)).astype(acc)

    def step(carry, xs):
        v, a, log_w, comp = carry
        k, beta_prev, beta, dbeta = xs
        inc = weight(v, a, beta_prev, dbeta)
        if kahan:
            log_w, comp = _kahan_add(log_w, comp, inc)
        else:
            log_w = log_w + inc
        key_h, key_v = jax.random.split(jax.random.fold_in(key, k))
        h, _ = update_layer(key_h, jnp.zeros_like(a), beta * a, 0.0)
        v, _ = update_layer(key_v, v, base_vbias + beta * (d + matmul(h, params.W.T)), alpha)
        return (v, matmul(v, params.W) + params.hbias, log_w, comp), None

    zeros = jnp.zeros(v0.shape[0], dtype=acc)
    ks = jnp.arange(1, dbetas.shape[0], dtype=jnp.uint32)
    carry = (v0, matmul(v0, params.W) + params.hbias, zeros, zeros)
    (v, a, log_w, comp), _ = jax.lax.scan(step, carry, (ks, betas[:-2], betas[1:-1], dbetas[:-1]))
    inc = weight(v, a, betas[-2], dbetas[-1])
    return (log_w + inc - comp if kahan else log_w + inc), v


@pytest.mark.parametrize(("operator", "x64"), [("gibbs", False), ("flip", False), (0.5, False), ("flip", True)])
def test_anneal_is_the_inline_sweep_bit_for_bit(operator, x64):
    """AIS on the sweep kernel at the path's records is the run of the former inline transition, to the last bit."""
    import functools

    import jax.numpy as jnp

    from pymc_rbm.jax import from_params
    from pymc_rbm.jax.ais import anneal
    from pymc_rbm.kernels.operators import operator_alpha

    p = RBMParams.random(10, 6, scale=1.5, rng=3)
    b_a = np.random.default_rng(5).normal(size=10) * 0.5
    v0 = np.random.default_rng(1).integers(0, 2, (32, 10))
    with jax.enable_x64(x64):
        dt = "float64" if x64 else "float32"
        arrays = from_params(p, dtype=dt)
        ref = jax.jit(functools.partial(_inline_anneal, alpha=operator_alpha(operator), kahan=not x64))
        for b in (np.linspace(0.0, 1.0, 40), np.linspace(1.0, 0.0, 40) ** 2):  # forward, reverse: one compilation
            log_w, v = anneal(jax.random.key(7), v0, arrays, b_a, b, operator=operator)
            want_w, want_v = ref(jax.random.key(7), jnp.asarray(v0, dtype=dt), arrays, jnp.asarray(b_a, dtype=dt),
                                 jnp.asarray(b, dtype=dt), jnp.asarray(np.diff(b), dtype=dt))
            np.testing.assert_array_equal(np.asarray(log_w), np.asarray(want_w))
            np.testing.assert_array_equal(np.asarray(v), np.asarray(want_v))

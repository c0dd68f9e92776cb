"""Tests of naive mean field (pymc_rbm.estimators.mean_field, seed 003), and of both bounds on RBMs side by side."""

from __future__ import annotations

import numpy as np
import pytest

from pymc_rbm import RBMParams
from pymc_rbm.estimators import (
    LOG_PARTITION_METHODS,
    MOMENT_METHODS,
    log_partition,
    log_partition_exact,
    moments,
    moments_exact,
)
from pymc_rbm.estimators.mean_field import annealing_schedule, log_partition_mean_field, moments_mean_field
from pymc_rbm.estimators.mixture_mean_field import (
    log_partition_mixture_mean_field,
    mixture_mean_field_arrays,
    mixture_mean_field_bm,
    moments_mixture_mean_field,
)

MNIST_EXACT = {"mnist_h10": 226.1132, "mnist_h20": 221.0668}
FAST = dict(tol=1e-6, max_iter=40)  # mixture options that keep the tests quick


# ------------------------------------------------------------ the bound
BOUND_MODELS = [(7, 5, 0.3), (7, 5, 1.0), (4, 9, 3.0), (6, 6, 50.0), (10, 1, 2.0)]


@pytest.mark.parametrize("nv, nh, scale", BOUND_MODELS)
def test_rbm_naive_and_mixture_are_lower_bounds(nv, nh, scale):
    p = RBMParams.random(nv, nh, scale=scale, rng=nv + nh)
    exact = log_partition_exact(p).log_z
    naive = log_partition_mean_field(p)
    mix = log_partition_mixture_mean_field(p, n_components=3, **FAST)
    assert np.isfinite(naive.log_z) and np.isfinite(mix.log_z)
    assert naive.log_z <= exact + 1e-9
    assert mix.log_z <= exact + 1e-9
    assert mix.log_z >= naive.log_z - 1e-9
    assert naive.stderr == 0.0 and naive.diagnostics["bound"] and mix.diagnostics["bound"]


# ------------------------------------------------------------ moments


def test_rbm_moments_close_to_exact_at_weak_coupling():
    """⟨v hᵀ⟩ ≈ m_v m_hᵀ misses the connected part W (v - v²)(h - h²): small only when W is."""
    p = RBMParams.random(6, 4, scale=0.05, rng=3)
    e = moments_exact(p)
    for mom in (moments_mean_field(p), moments_mixture_mean_field(p, n_components=2, **FAST)):
        for a, b in zip(mom, e):
            np.testing.assert_allclose(a, b, atol=5e-3)


# ------------------------------------------------------------ options, diagnostics, dispatch
def test_annealing_schedule():
    t = annealing_schedule()
    assert t.size == 8 and t[0] == pytest.approx(60.0) and t[-1] == 1.0 and np.all(np.diff(t) < 0)
    with pytest.raises(ValueError, match="end at 1"):
        mixture_mean_field_arrays(np.zeros((1, 2, 2)), np.zeros((1, 2)), temperatures=[5.0, 2.0])


def test_diagnostics():
    p = RBMParams.random(6, 4, scale=1.0, rng=0)
    data = (np.random.default_rng(1).random((9, 6)) < 0.5).astype(np.int8)
    d = log_partition_mean_field(p, n_starts=3, data=data, n_data_starts=4).diagnostics
    assert d["n_starts"] == 7 and d["converged"] and d["iterations"] >= 1 and d["residual"] < 1e-9
    assert d["values"].shape == (7,) and d["m_v"].shape == (6,) and d["m_h"].shape == (4,)
    est = log_partition_mixture_mean_field(p, n_components=2, **FAST)
    d = est.diagnostics
    assert est.method == "mixture_mean_field" and est.stderr == 0.0
    assert d["n_components"] == 2 and d["alpha"].shape == (2,) and d["iterations"] >= 1
    assert isinstance(d["converged"], bool) and d["residual"] >= 0.0 and d["n_starts"] == 1
    assert d["naive_bound"] <= est.log_z + 1e-12
    annealed = log_partition_mean_field(p, temperatures=annealing_schedule(10.0, 4))
    assert annealed.log_z <= log_partition_exact(p).log_z


def test_bad_input():
    p = RBMParams.random(4, 3, rng=0)
    with pytest.raises(TypeError, match="RBMParams"):
        log_partition_mean_field(p.to_spin())
    with pytest.raises(ValueError, match="n_components"):
        log_partition_mixture_mean_field(p, n_components=0)
    with pytest.raises(ValueError, match="binary"):
        log_partition_mean_field(p, data=np.full((1, 4), 3))
    with pytest.raises(TypeError, match="BoltzmannMachine"):
        mixture_mean_field_bm(p, 2)


def test_dispatcher_entries():
    p = RBMParams.random(5, 4, scale=0.5, rng=0)
    assert LOG_PARTITION_METHODS["mean_field"] is log_partition_mean_field
    assert LOG_PARTITION_METHODS["mixture_mean_field"] is log_partition_mixture_mean_field
    assert MOMENT_METHODS["mean_field"] is moments_mean_field
    assert MOMENT_METHODS["mixture_mean_field"] is moments_mixture_mean_field
    assert log_partition(p, "mean_field", rng=2).log_z <= log_partition_exact(p).log_z
    est = log_partition(p, "mixture_mean_field", n_components=2, **FAST)
    assert est.log_z <= log_partition_exact(p).log_z
    np.testing.assert_allclose(moments(p, "mean_field").v, moments_mean_field(p).v)


# ------------------------------------------------------------ MNIST models
@pytest.mark.parametrize("name", ["mnist_h10", "mnist_h20"])
def test_mnist_models(mnist_model, name):
    """Naive mean field: 225.54 (h10) and 211.74 (h20) against exact 226.11 and 221.07: bounds."""
    est = log_partition_mean_field(mnist_model(name))
    assert est.diagnostics["converged"]
    assert MNIST_EXACT[name] - 12.0 < est.log_z < MNIST_EXACT[name]

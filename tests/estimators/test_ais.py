"""Tests of annealed importance sampling (pymc_rbm.estimators.ais): forward and reverse."""

from __future__ import annotations

import importlib
import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from pymc_rbm import RBMParams
from pymc_rbm.energy import free_energy
from pymc_rbm.estimators import (
    LOG_PARTITION_METHODS,
    LogPartitionEstimate,
    log_partition,
    log_partition_exact,
    sample_visible_exact,
)
from pymc_rbm.estimators.ais import adaptive_schedule, ais, reverse_ais
from pymc_rbm.estimators.base_rate import base_rate_vbias
from pymc_rbm.estimators.path import AnnealingPath
from pymc_rbm.estimators.schedules import check_schedule
from pymc_rbm.kernels import RBMState, gibbs_sweep
sweep_module = importlib.import_module("pymc_rbm.kernels.sweep")  # the attribute of pymc_rbm.kernels is the function

TRUTH = {"mnist_h10": 226.1132, "mnist_h20": 221.0668}


def _model(nv, nh, scale, seed=0):
    return RBMParams.random(nv, nh, scale=scale, rng=100 * seed + 10 * nv + nh)


# -------------------------------------------------------------------- AIS
CASES = [(20, 8, 0.5), (20, 8, 2.0), (12, 10, 1.0)]


@pytest.mark.parametrize("nv, nh, scale", CASES)
@pytest.mark.parametrize("operator", ["gibbs", "flip"])
def test_ais_matches_exact(nv, nh, scale, operator):
    p = _model(nv, nh, scale)
    truth = log_partition_exact(p).log_z
    data = sample_visible_exact(p, 200, rng=1)
    est = ais(p, n_chains=100, schedule=1500, operator=operator, data=data, rng=2)
    assert isinstance(est, LogPartitionEstimate) and est.method == "ais"
    err = est.log_z - truth
    assert abs(err) < 4 * est.stderr + 1e-3, (err, est.stderr)
    assert abs(err) < 0.05 * max(1.0, scale)
    lo, hi = est.interval
    assert lo <= truth <= hi and lo < est.log_z < hi
    d = est.diagnostics
    assert d["log_weights"].shape == (100,) and 1.0 <= d["ess"] <= 100.0
    assert d["n_steps"] == 1500 and d["samples"].shape == (100, nv)


def test_ais_from_the_plain_bases():
    p = _model(20, 8, 1.0)
    truth = log_partition_exact(p).log_z
    for base in ("target", "zero"):
        est = ais(p, n_chains=100, schedule=1500, base=base, rng=3)
        assert abs(est.log_z - truth) < 4 * est.stderr + 1e-3


def test_a_target_only_tempered_transition_gives_a_wrong_estimate():
    """Negative control: AIS whose transition uses the kernels' ``beta`` on the target (wrong) fails."""
    p = _model(20, 8, 1.0)
    truth = log_partition_exact(p).log_z
    path = AnnealingPath(p, np.full(20, 2.0))  # a base far from zero biases
    betas = check_schedule(1500)
    rng = np.random.default_rng(4)
    v, a, vb = path.start(path.sample_base(rng, 200))
    log_w = np.zeros(200)
    state = RBMState(v, np.zeros((200, 8)))
    for k in range(1, betas.size):
        log_w += path.log_f(a, vb, path.coefficients(betas[k])) - path.log_f(a, vb, path.coefficients(betas[k - 1]))
        state, _ = gibbs_sweep(rng, state, p, beta=betas[k])  # wrong: p_k has vbias (1-β) b_A + β vbias_B
        v, a, vb = path.start(state.v)
    wrong = path.log_z_base + logsumexp(log_w) - np.log(200)
    right = ais(p, n_chains=200, schedule=1500, base=np.full(20, 2.0), rng=4)
    assert abs(right.log_z - truth) < 4 * right.stderr + 1e-3
    assert abs(wrong - truth) > 10 * right.stderr + 0.1


def test_reverse_ais_from_exact_samples_brackets_log_z():
    p = _model(20, 8, 2.0)
    truth = log_partition_exact(p).log_z
    x = sample_visible_exact(p, 150, rng=6)
    rev = reverse_ais(p, x, n_chains=None, schedule=1500, rng=7)
    assert rev.method == "reverse_ais" and rev.diagnostics["n_chains"] == 150
    assert abs(rev.log_z - truth) < 4 * rev.stderr + 1e-3
    assert rev.interval[0] <= truth <= rev.interval[1]
    # stochastic bounds: E log Ẑ <= log Z forward, >= log Z in reverse from exact draws. With one chain
    # per estimate and only 3 steps, Jensen's gap is large: average many single-chain estimates.
    many = sample_visible_exact(p, 600, rng=10)
    fwd = ais(p, n_chains=600, schedule=3, rng=8).diagnostics
    back = reverse_ais(p, many, n_chains=None, schedule=3, rng=9).diagnostics
    single_fwd = fwd["log_z_base"] + fwd["log_weights"]
    single_rev = back["log_z_base"] - back["log_weights"]
    assert single_fwd.mean() < truth - 4 * single_fwd.std() / np.sqrt(600)
    assert single_rev.mean() > truth + 2 * single_rev.std() / np.sqrt(600)
    # RAISE: per-row log-likelihoods, conservative on average (the same Jensen gap, seen from the data side)
    start = many[back["rows"]].astype(float)
    exact_ll = -free_energy(start, p) - truth
    np.testing.assert_allclose(back["log_likelihood"], back["log_weights"] - free_energy(start, p) - back["log_z_base"])
    gap = back["log_likelihood"] - exact_ll
    assert back["mean_log_likelihood"] == pytest.approx(back["log_likelihood"].mean())
    assert gap.mean() < -2 * gap.std() / np.sqrt(600)


def test_reverse_ais_rows_and_validation():
    p = _model(6, 3, 1.0)
    x = sample_visible_exact(p, 10, rng=0)
    rev = reverse_ais(p, x, n_chains=25, schedule=50, rng=1)  # more chains than rows: with replacement
    assert rev.diagnostics["rows"].shape == (25,)
    with pytest.raises(ValueError, match="binary"):
        reverse_ais(p, x * 2, schedule=10)
    with pytest.raises(ValueError, match="no rows"):
        reverse_ais(p, np.zeros((0, 6)), schedule=10)


# ------------------------------------------------------ API, rng, progress
def test_seeded_runs_repeat_and_float32_agrees():
    p = _model(12, 6, 1.0)
    a = ais(p, n_chains=30, schedule=200, rng=11)
    b = ais(p, n_chains=30, schedule=200, rng=np.random.default_rng(11))
    assert a.log_z == b.log_z
    np.testing.assert_array_equal(a.diagnostics["log_weights"], b.diagnostics["log_weights"])
    c = ais(p, n_chains=30, schedule=200, rng=12)
    assert c.log_z != a.log_z
    f32 = ais(p, n_chains=30, schedule=200, rng=11, dtype=np.float32)
    assert f32.log_z == pytest.approx(a.log_z, abs=1e-4)


def test_input_validation_and_nothing_mutated():
    p = _model(6, 3, 1.0)
    data = np.array([[0, 1, 1, 0, 1, 0]] * 3)
    before = data.copy()
    ais(p, n_chains=5, schedule=10, data=data, rng=0)
    np.testing.assert_array_equal(data, before)
    for kwargs, msg in [
        ({"n_chains": 0}, "n_chains"),
        ({"n_chains": 2.5}, "n_chains"),
        ({"operator": "metropolis"}, "operator"),
        ({"operator": 1.5}, "operator"),
        ({"schedule": [0.0, 0.5]}, "end at"),
        ({"data": data[:, :4]}, "n_visible"),
    ]:
        with pytest.raises(ValueError, match=msg):
            ais(p, rng=0, **kwargs)
    with pytest.raises(TypeError, match="RBMParams"):
        ais(p.W, rng=0)


def test_dispatcher_and_progress(capsys):
    p = _model(10, 5, 1.0)
    data = sample_visible_exact(p, 50, rng=0)
    assert LOG_PARTITION_METHODS["ais"] is ais and LOG_PARTITION_METHODS["reverse_ais"] is reverse_ais
    est = log_partition(p, "ais", rng=3, data=data, n_chains=20, schedule=100)
    assert est.method == "ais" and est.log_z == ais(p, rng=3, data=data, n_chains=20, schedule=100).log_z
    rev = log_partition(p, "reverse_ais", rng=3, data=data, schedule=100)
    assert rev.method == "reverse_ais"
    capsys.readouterr()
    ais(p, n_chains=5, schedule=400, rng=0)
    assert capsys.readouterr().err == ""  # progress is off by default
    ais(p, n_chains=5, schedule=400, rng=0, progress=True)
    assert "AIS" in capsys.readouterr().err


# ----------------------------------------------------------------- MNIST
@pytest.mark.slow
def test_ais_on_mnist_h20_with_defaults(mnist_model, shared_data):
    """Salakhutdinov & Murray's defaults (100 chains, 14500 steps, data base rate): within 0.1 nats."""
    p = mnist_model("mnist_h20")
    with np.load(shared_data("mnist/binarized_mnist_packed.npz")) as f:
        train = np.unpackbits(f["train"], axis=1)[:, :784]
    est = ais(p, data=train, rng=0)
    err = est.log_z - TRUTH["mnist_h20"]
    assert abs(err) < 0.1
    assert abs(err) < 3 * est.stderr
    assert est.interval[0] < TRUTH["mnist_h20"] < est.interval[1]


# ------------------------------------------------------ adaptive schedule
def test_adaptive_schedule_spends_steps_where_the_path_moves():
    p = _model(12, 6, 1.5)
    path = AnnealingPath(p, base_rate_vbias(p))
    rng = np.random.default_rng(0)
    betas, pilot = adaptive_schedule(path, rng, 400, n_chains=40, n_pilot=200, floor=0.0)
    assert betas.shape == (401,) and betas[0] == 0.0 and betas[-1] == 1.0
    assert np.all(np.diff(betas) >= 0.0)
    assert check_schedule(betas) is not betas  # a valid schedule
    # where the pilot's log-weight increments are larger, the steps are shorter
    grid = np.linspace(0, 1, 201)
    mid = 0.5 * (grid[1:] + grid[:-1])
    step_at = np.interp(mid, 0.5 * (betas[1:] + betas[:-1]), np.diff(betas))
    hi, lo = pilot.sd_increment > np.quantile(pilot.sd_increment, 0.8), pilot.sd_increment < np.quantile(
        pilot.sd_increment, 0.2
    )
    assert step_at[hi].mean() < step_at[lo].mean()
    # floor = 1 - ε is (nearly) uniform
    uniform, _ = adaptive_schedule(path, rng, 100, n_chains=10, n_pilot=50, floor=0.999)
    np.testing.assert_allclose(uniform, np.linspace(0, 1, 101), atol=2e-3)
    with pytest.raises(ValueError, match="floor"):
        adaptive_schedule(path, rng, 100, floor=1.0)


def test_ais_with_adaptive_schedule_matches_exact():
    p = _model(12, 6, 1.5)
    truth = log_partition_exact(p).log_z
    est = ais(p, n_chains=50, schedule="adaptive", n_steps=600, n_pilot=200, rng=1)
    assert abs(est.log_z - truth) < 4 * est.stderr + 0.01
    assert est.diagnostics["betas"].shape == (601,)
    # where the variance of the weights was added: partial variances, ending with the final weights'
    at, var = est.diagnostics["log_weight_variance"]
    assert at[-1] == 1.0 and np.all(np.diff(at) > 0) and at.shape == var.shape
    assert var[-1] == pytest.approx(np.var(est.diagnostics["log_weights"]), rel=1e-12)


def test_new_options_validate():
    p = _model(6, 3, 1.0)
    for kwargs, msg in [
        ({"schedule": "fast"}, "adaptive"),
        ({"schedule": 50, "n_steps": 10}, "n_steps"),
        ({"n_steps": 0}, "n_steps"),
    ]:
        with pytest.raises(ValueError, match=msg):
            ais(p, rng=0, **kwargs)


# ------------------------------------------------------ carried activations
def _counting_propagate(monkeypatch, module=sweep_module):
    """Wrap ``module.propagate_activation`` (the sweep kernel's) to count its incremental updates."""
    counts = {"incremental": 0, "calls": 0}
    inner = module.propagate_activation

    def wrapped(*args, **kwargs):
        out, incremental = inner(*args, **kwargs)
        counts["calls"] += 1
        counts["incremental"] += incremental
        return out, incremental

    monkeypatch.setattr(module, "propagate_activation", wrapped)
    return counts


def test_carried_activations_are_the_same_chain_as_recomputed_ones(monkeypatch):
    """AIS's activations updated by the changed rows give the run of full products, draw for draw."""
    annealing = importlib.import_module("pymc_rbm.estimators.annealing")  # the run that AIS anneals with

    p = _model(40, 12, 3.0)  # strong couplings: few visible units change near β = 1
    runs = []
    for full_every in (annealing.FULL_EVERY, 1):  # 1: every step recomputed by the full product
        monkeypatch.setattr(annealing, "FULL_EVERY", full_every)
        counts = _counting_propagate(monkeypatch)
        runs.append(ais(p, n_chains=30, schedule=400, rng=3))
        monkeypatch.undo()
        assert counts["calls"] == 399
        if full_every > 1:
            assert counts["incremental"] > 100  # the carried update was used, not the fallback
        else:
            assert counts["incremental"] == 0
    carried, recomputed = runs
    np.testing.assert_array_equal(carried.diagnostics["samples"], recomputed.diagnostics["samples"])
    np.testing.assert_allclose(carried.diagnostics["log_weights"], recomputed.diagnostics["log_weights"], rtol=1e-12)
    assert abs(carried.log_z - log_partition_exact(p).log_z) < 4 * carried.stderr + 0.05


def test_ais_in_threads_matches_exact_and_repeats():
    p = _model(20, 8, 1.0)
    exact = log_partition_exact(p).log_z
    a = ais(p, n_chains=60, schedule=1000, rng=4, n_jobs=2)
    b = ais(p, n_chains=60, schedule=1000, rng=4, n_jobs=2)
    np.testing.assert_array_equal(a.diagnostics["log_weights"], b.diagnostics["log_weights"])
    assert a.diagnostics["log_weights"].shape == (60,)
    assert abs(a.log_z - exact) < 4 * a.stderr + 0.01
    assert ais(p, n_chains=3, schedule=50, rng=4, n_jobs=8).diagnostics["log_weights"].shape == (3,)
    rev = reverse_ais(p, sample_visible_exact(p, 60, rng=1), schedule=1000, rng=5, n_jobs=2)
    assert abs(rev.log_z - exact) < 4 * rev.stderr + 0.01
    for fn, args in [(ais, (p,)), (reverse_ais, (p, np.zeros((2, 20))))]:
        for bad in (0, 1.5):
            with pytest.raises(ValueError, match="n_jobs"):
                fn(*args, n_jobs=bad, rng=0)


# ------------------------------------------------------------ ±1 spins
def _spin_log_z(spin) -> float:
    """``log Z`` of a spin RBM by enumerating its ±1 states, independently of the package."""
    s = np.array(list(itertools.product([-1.0, 1.0], repeat=spin.n_visible)))
    t = np.array(list(itertools.product([-1.0, 1.0], repeat=spin.n_hidden)))
    return float(logsumexp(s @ spin.J @ t.T + (s @ spin.vfield)[:, None] + (t @ spin.hfield)[None, :]))


@pytest.mark.parametrize("base", ["mean_field", "zero", "target"])
@pytest.mark.parametrize("operator, dtype", [("gibbs", np.float64), ("flip", np.float32)])
def test_ais_on_a_spin_rbm_matches_enumeration(base, operator, dtype):
    """AIS through the path of a ±1 spin RBM (base spins in their fields, spin sweeps, log 2 cosh weights)."""
    spin = RBMParams.random(10, 6, scale=1.0, rng=5).to_spin()
    truth = _spin_log_z(spin)
    est = ais(spin, n_chains=100, n_steps=1500, base=base, operator=operator, dtype=dtype, rng=1)
    assert abs(est.log_z - truth) < 4 * est.stderr + 0.01
    assert set(np.unique(est.diagnostics["samples"])) <= {-1, 1}


def test_reverse_ais_and_data_base_on_a_spin_rbm():
    """Reverse AIS from exact spin draws bounds from above; the data base takes spin rows; 0/1 rows are refused."""
    spin = RBMParams.random(8, 5, scale=1.0, rng=6).to_spin()
    truth = _spin_log_z(spin)
    draws = 2.0 * sample_visible_exact(spin.to_binary(), 80, rng=2) - 1.0
    rev = reverse_ais(spin, draws, n_chains=80, schedule=1500, rng=3)
    assert abs(rev.log_z - truth) < 4 * rev.stderr + 0.01
    fwd = ais(spin, data=draws, n_chains=80, n_steps=1500, rng=4)
    assert abs(fwd.log_z - truth) < 4 * fwd.stderr + 0.01
    with pytest.raises(ValueError):
        ais(spin, data=(draws + 1) / 2, n_chains=10, n_steps=10, rng=0)

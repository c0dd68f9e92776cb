"""Tests of annealed importance sampling (pymc_rbm.estimators.ais): forward, reverse, the path."""

from __future__ import annotations

import importlib

import _brute
import numpy as np
import pytest
from scipy.special import logsumexp

from pymc_rbm import RBMParams
from pymc_rbm.energy import free_energy, hidden_activation, visible_activation
from pymc_rbm.estimators import (
    LOG_PARTITION_METHODS,
    LogPartitionEstimate,
    log_partition,
    log_partition_exact,
    log_partition_mean_field,
    sample_visible_exact,
)
from pymc_rbm.estimators.ais import (
    AnnealingPath,
    _anneal,
    _Progress,
    adaptive_schedule,
    ais,
    base_rate_vbias,
    check_schedule,
    default_schedule,
    reverse_ais,
)
from pymc_rbm.kernels import RBMState, gibbs_sweep
sweep_module = importlib.import_module("pymc_rbm.kernels.sweep")  # the attribute of pymc_rbm.kernels is the function
from pymc_rbm.testing import assert_frequencies, assert_stationary, joint_distribution, layer_matrices

TRUTH = {"mnist_h10": 226.1132, "mnist_h20": 221.0668}


def _model(nv, nh, scale, seed=0):
    return RBMParams.random(nv, nh, scale=scale, rng=100 * seed + 10 * nv + nh)


def _path_joint(target: RBMParams, b_a, beta) -> np.ndarray:
    """``p_β(v, h) ∝ exp((1 - β) b_A·v - β E_B(v, h))``, enumerated independently of the package."""
    table, V, _ = _brute.neg_energy_table(target.W, target.vbias, target.hbias)
    log_p = (beta * table + (1.0 - beta) * (V @ b_a)[:, None]).ravel()
    return np.exp(log_p - logsumexp(log_p))


# ------------------------------------------------------------------ schedule
def test_default_schedule_is_salakhutdinov_murray():
    b = default_schedule()
    assert b.shape == (14501,)
    assert b[0] == 0.0 and b[-1] == 1.0
    assert b[500] == 0.5 and b[4500] == pytest.approx(0.9) and np.all(np.diff(b) > 0)
    np.testing.assert_allclose(np.diff(b[:501]), 1e-3)
    np.testing.assert_allclose(np.diff(b[501:4501]), 1e-4)
    np.testing.assert_allclose(np.diff(b[4501:]), 1e-5)
    short = default_schedule(145)
    assert short.shape == (146,) and short[5] == 0.5 and short[45] == pytest.approx(0.9)


def test_check_schedule():
    np.testing.assert_array_equal(check_schedule(None), default_schedule())
    np.testing.assert_allclose(check_schedule(4), [0, 0.25, 0.5, 0.75, 1.0])
    np.testing.assert_array_equal(check_schedule([0, 0.5, 0.5, 1]), [0, 0.5, 0.5, 1])  # repeats allowed
    for bad, msg in [
        ([0.1, 0.5, 1.0], "start at"),
        ([0.0, 0.5, 0.9], "end at"),
        ([0.0, 0.6, 0.4, 1.0], "nondecreasing"),
        ([0.0, np.nan, 1.0], "non-finite"),
        ([[0.0, 1.0]], "1-D"),
        ([0.0], "at least 2"),
        (0, "at least 1 step"),
        ("fast", "schedule must be"),
    ]:
        with pytest.raises(ValueError, match=msg):
            check_schedule(bad)
    with pytest.raises(ValueError, match="at least 3"):
        default_schedule(2)


# -------------------------------------------------------------- base model
def test_base_rate_vbias():
    p = _model(4, 3, 1.0)
    data = np.array([[1, 0, 0, 1], [1, 1, 0, 1], [1, 0, 0, 0]])
    b = base_rate_vbias(p, data)
    prob = (data.mean(0) + 0.005) / 1.01
    np.testing.assert_allclose(b, np.log(prob / (1 - prob)))
    assert np.all(np.isfinite(b))  # a unit on in every row still has a finite bias
    m_v = log_partition_mean_field(p).diagnostics["m_v"]  # without data: the mean-field base rate
    prob = (m_v + 0.005) / 1.01
    np.testing.assert_allclose(base_rate_vbias(p), np.log(prob / (1 - prob)))
    np.testing.assert_array_equal(base_rate_vbias(p, data, base="mean_field"), base_rate_vbias(p))
    np.testing.assert_array_equal(base_rate_vbias(p, data, base="target"), p.vbias)
    np.testing.assert_array_equal(base_rate_vbias(p, base="zero"), np.zeros(4))
    np.testing.assert_array_equal(base_rate_vbias(p, base=[1, 2, 3, 4]), [1, 2, 3, 4])
    with pytest.raises(ValueError, match="needs data"):
        base_rate_vbias(p, base="data")
    with pytest.raises(ValueError, match="binary"):
        base_rate_vbias(p, data + 0.5)
    with pytest.raises(ValueError, match="4 finite"):
        base_rate_vbias(p, base=[1.0, 2.0])
    with pytest.raises(ValueError, match="base must be"):
        base_rate_vbias(p, base="uniform")


# ------------------------------------------------------------------- path
@pytest.mark.parametrize("beta", [0.0, 0.3, 0.8, 1.0])
def test_path_logits_and_density_are_those_of_the_intermediate_rbm(beta):
    target = _model(6, 4, 2.0)
    b_a = np.linspace(-2, 2, 6)
    path = AnnealingPath(target, b_a)
    mid = path.intermediate(path.coefficients(beta))
    np.testing.assert_allclose(mid.W, beta * target.W, rtol=0, atol=1e-15)
    np.testing.assert_allclose(mid.vbias, (1 - beta) * b_a + beta * target.vbias, rtol=0, atol=1e-15)
    np.testing.assert_allclose(mid.hbias, beta * target.hbias, rtol=0, atol=1e-15)
    rng = np.random.default_rng(0)
    v = rng.integers(0, 2, (7, 6)).astype(float)
    h = rng.integers(0, 2, (7, 4)).astype(float)
    v, a, vb = path.start(v)
    coef = path.coefficients(beta)
    np.testing.assert_allclose(path.hidden_logits(a, coef), hidden_activation(v, mid), atol=1e-12)
    np.testing.assert_allclose(path.visible_logits(h, coef), visible_activation(h, mid), atol=1e-12)
    np.testing.assert_allclose(path.log_f(a, vb, coef), -free_energy(v, mid), atol=1e-12)
    # per chain: each chain at its own β gives the same numbers
    betas = np.linspace(0, 1, 7)
    per_chain = path.log_f(a, vb, path.coefficients(betas))
    for i, b in enumerate(betas):
        other = path.intermediate(path.coefficients(b))
        assert per_chain[i] == pytest.approx(float(-free_energy(v[i], other)), abs=1e-12)
    ladder = path.log_f_ladder(a, vb, path.coefficients(betas))
    np.testing.assert_allclose(ladder[np.arange(7), np.arange(7)], per_chain, atol=1e-12)
    # in blocks of chains (spread over threads) and of labels: the same numbers, to the bit
    for max_block in (1, 4, 9, 30, 10**9):
        np.testing.assert_array_equal(path.log_f_ladder(a, vb, path.coefficients(betas), max_block=max_block), ladder)
    # the base's partition function, and the target's at β = 1
    assert path.log_z_base == pytest.approx(log_partition_exact(path.intermediate(path.coefficients(0.0))).log_z)
    assert log_partition_exact(path.intermediate(path.coefficients(1.0))).log_z == pytest.approx(
        log_partition_exact(target).log_z
    )


@pytest.mark.parametrize("beta", [0.0, 0.25, 0.7, 1.0])
@pytest.mark.parametrize("operator", ["gibbs", "flip", 0.4])
def test_ais_transition_leaves_the_path_distribution_invariant_exactly(beta, operator):
    """``p_k T_k = p_k`` to 1e-12 for the intermediate RBM's sweep (h by Gibbs, then v by the operator)."""
    target = _model(4, 3, 2.0)
    b_a = np.array([1.5, -2.0, 0.5, 2.5])
    path = AnnealingPath(target, b_a)
    p = _path_joint(target, b_a, beta)
    mid = path.intermediate(path.coefficients(beta))
    np.testing.assert_allclose(joint_distribution(mid), p, rtol=0, atol=1e-14)
    kernel = "gibbs" if operator == "gibbs" else (1.0 if operator == "flip" else operator)
    t_h, _ = layer_matrices(mid, "gibbs")
    _, t_v = layer_matrices(mid, kernel)
    assert_stationary(p, t_h @ t_v, atol=1e-12)


@pytest.mark.parametrize("beta", [0.3, 0.7])
def test_tempering_the_target_alone_is_the_wrong_transition(beta):
    """The kernels' ``beta`` on the target samples exp(-β E_B): not p_k unless b_A = 0."""
    target = _model(4, 3, 2.0)
    b_a = np.array([1.5, -2.0, 0.5, 2.5])
    p = _path_joint(target, b_a, beta)
    t_h, t_v = layer_matrices(target, "gibbs", beta=beta)
    with pytest.raises(AssertionError, match="not stationary"):
        assert_stationary(p, t_h @ t_v, atol=1e-6)
    # ... and it is right exactly when the base has zero biases
    p0 = _path_joint(target, np.zeros(4), beta)
    assert_stationary(p0, t_h @ t_v, atol=1e-12)


@pytest.mark.parametrize("operator", ["gibbs", "flip"])
def test_path_sweep_follows_the_intermediate_rbms_matrix(operator):
    """The sampling code itself: visible-to-visible frequencies against the exact kernel, chains at several β."""
    target = _model(3, 2, 2.0)
    b_a = np.array([1.0, -1.5, 0.5])
    path = AnnealingPath(target, b_a, operator=operator)
    betas = np.array([0.2, 0.6, 1.0])
    n_draws = 4000
    V = _brute.all_states(3)
    rng = np.random.default_rng(5)
    for beta in betas:
        mid = path.intermediate(path.coefficients(beta))
        t_h, _ = layer_matrices(mid, "gibbs")
        _, t_v = layer_matrices(mid, "gibbs" if operator == "gibbs" else 1.0)
        T = (t_h @ t_v).reshape(8, 4, 8, 4)[:, 0].sum(axis=2)  # K[v, v'] from any h
        start = np.repeat(V, n_draws, axis=0)
        coef = path.coefficients(np.full(start.shape[0], beta))  # one β per chain
        v, a, _ = path.start(start)
        new, _, _ = path.sweep(rng, v, a, coef)
        idx = new @ np.array([4, 2, 1])
        counts = np.zeros((8, 8))
        np.add.at(counts, (np.repeat(np.arange(8), n_draws), idx.astype(int)), 1)
        assert_frequencies(counts, T)


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


def test_anneal_records_partial_log_weights():
    p = _model(8, 4, 1.0)
    path = AnnealingPath(p, base_rate_vbias(p))
    rng = np.random.default_rng(0)
    betas = np.linspace(0, 1, 21)
    run = _anneal(path, rng, path.sample_base(rng, 7), betas, _Progress(20, "", False), record=[5, 20])
    assert run.trace.shape == (2, 7)
    np.testing.assert_array_equal(run.trace[1], run.log_w)
    assert not np.array_equal(run.trace[0], run.trace[1])


def test_new_options_validate():
    p = _model(6, 3, 1.0)
    for kwargs, msg in [
        ({"schedule": "fast"}, "adaptive"),
        ({"schedule": 50, "n_steps": 10}, "n_steps"),
        ({"n_steps": 0}, "n_steps"),
    ]:
        with pytest.raises(ValueError, match=msg):
            ais(p, rng=0, **kwargs)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("scale", [0.5, 40.0])  # 40: |δ| beyond float32's exp range, the float64 fallback
def test_weight_increments_equal_the_difference_of_log_f(dtype, scale):
    """A schedule 0 -> 1 (one increment, no transition) against AnnealingPath.log_f; float32 to its rounding."""
    from pymc_rbm._runtime import Progress
    from pymc_rbm.estimators._tempering import AnnealingPath
    from pymc_rbm.estimators.ais import _anneal

    params = RBMParams.random(15, 9, scale=scale, rng=3)
    path = AnnealingPath(params, np.zeros(15), dtype=dtype)
    v0 = path.sample_base(np.random.default_rng(0), 6)
    with np.errstate(invalid="raise", divide="raise"):  # no NaN on the way
        got = _anneal(path, np.random.default_rng(1), v0, np.array([0.0, 1.0]), Progress(1, "", False)).log_w
    v, a, vb = path.start(v0.astype(np.float64))
    want = path.log_f(a, vb, path.coefficients(1.0)) - path.log_f(a, vb, path.coefficients(0.0))
    # float32: a few ulp of each of the 9 hidden terms, each of order |a| (about 1 at scale 0.5)
    tol = 1e-12 if dtype == np.float64 else 1e-6
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * params.n_hidden)


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
    ais_module = importlib.import_module("pymc_rbm.estimators.ais")  # the attribute is the function

    p = _model(40, 12, 3.0)  # strong couplings: few visible units change near β = 1
    runs = []
    for full_every in (ais_module.FULL_EVERY, 1):  # 1: every step recomputed by the full product
        monkeypatch.setattr(ais_module, "FULL_EVERY", full_every)
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


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_path_sweep_carries_activations(dtype):
    """``sweep(refresh=False)`` is the chain of ``refresh=True`` with activations equal to the full product."""
    p = _model(30, 10, 2.5)
    path = AnnealingPath(p, base_rate_vbias(p), dtype=dtype)
    assert path.W.flags.c_contiguous  # its rows are added to the activations
    coef = path.coefficients(np.linspace(0.6, 1.0, 25))  # one β per chain
    chains = []
    for refresh in (True, False):
        rng = np.random.default_rng(8)
        v, a, vb = path.start(path.sample_base(rng, 25))
        for _ in range(50):
            v, a, vb = path.sweep(rng, v, a, coef, refresh=refresh)
        chains.append((v, a, vb))
    (v1, a1, vb1), (v2, a2, vb2) = chains
    np.testing.assert_array_equal(v1, v2)
    np.testing.assert_array_equal(vb1, vb2)
    tol = 1e-12 if dtype == np.float64 else 2e-4
    np.testing.assert_allclose(a2, path.hidden_activation(v2), rtol=0, atol=tol)
    np.testing.assert_allclose(a1, path.hidden_activation(v1), rtol=0, atol=0)


def test_threads_run_fixed_blocks_of_chains_with_spawned_generators():
    """Blocks of chains fixed by their number, each the serial annealing on its own spawned generator."""
    from pymc_rbm._runtime import CHAINS_PER_BLOCK, chain_blocks
    from pymc_rbm.estimators.ais import _anneal_in_threads

    p = _model(15, 6, 1.5)
    path = AnnealingPath(p, base_rate_vbias(p))
    n = 2 * CHAINS_PER_BLOCK + 7
    v0 = path.sample_base(np.random.default_rng(0), n)
    betas = np.linspace(0.0, 1.0, 101)
    quiet = _Progress(0, "", False)
    blocks, kids = chain_blocks(n, np.random.default_rng(7))
    assert len(blocks) == 3
    parts = [_anneal(path, kid, v0[b], betas, quiet, record=[50, 100]) for b, kid in zip(blocks, kids)]
    for n_jobs in (1, 2, 3, 8):
        run = _anneal_in_threads(path, np.random.default_rng(7), v0, betas, quiet, record=[50, 100], n_jobs=n_jobs)
        np.testing.assert_array_equal(run.log_w, np.concatenate([r.log_w for r in parts]))
        np.testing.assert_array_equal(run.v, np.concatenate([r.v for r in parts]))
        np.testing.assert_array_equal(run.trace, np.concatenate([r.trace for r in parts], axis=1))


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

"""The categorical step methods are exact: transition matrices over every joint (v, h) state of a tiny model.

For a model ``p_RBM(v) L(v)`` (a categorical RBM observed through noisy
Gaussian reads), one step ``K = K_h K_v`` (hidden update, then the visible
update proposed given ``h`` and accepted with ``min(1, L(v') / L(v))``) must
leave ``π(v, h) ∝ p_RBM(v, h) L(v)`` invariant exactly; without the
acceptance step (or with Liu's acceptance left out) it does not. The step
methods themselves, run from every joint state many times (one row of a
batched variable per run), must follow the rows of that matrix.
"""

from __future__ import annotations

import itertools

import numpy as np
import pymc as pm
import pytest
from numpy.testing import assert_allclose

from pymc.sampling.mcmc import assign_step_methods

from pymc_rbm import testing as ht
from pymc_rbm.categorical import CategoricalRBM, CategoricalRBMParams, log_prob_exact, visible_distribution
from pymc_rbm.kernels.layer import GIBBS, LayerRule
from pymc_rbm.step_methods.categorical import (
    CategoricalExactDraws,
    CategoricalGibbs,
    CategoricalMetropolisedGibbs,
    CategoricalReplicaExchange,
)
from tests.test_categorical import layer_matrices

PARAMS = CategoricalRBMParams.random(3, 3, 2, scale=1.5, rng=4)
N, Q, H = 3, 3, 2
READS = np.array([1.6, 0.2, 2.1])  # per-unit evidence: y_i ~ Normal(0.8 v_i, 1)
TOTAL = 3.1  # evidence about the sum: y ~ Normal(0.8 Σ_i v_i, 1.5), which does not factorise over units
V = np.array(list(itertools.product(range(Q), repeat=N)))
HS = np.array(list(itertools.product((0, 1), repeat=H)), dtype=np.float64)


def log_rest(v):
    """``log L`` of the per-unit reads (up to a constant)."""
    return -0.5 * ((READS - 0.8 * np.asarray(v, dtype=np.float64)) ** 2).sum(axis=-1)


def log_rest_sum(v):
    """``log L`` of the reading of the sum (up to a constant)."""
    return -0.5 * ((TOTAL - 0.8 * np.asarray(v, dtype=np.float64).sum(axis=-1)) / 1.5) ** 2


def unit_evidence():
    """The reads as a tilt of the visible biases: ``ℓ_i(k) = -(READS_i - 0.8 k)² / 2``, shape (N, Q)."""
    return -0.5 * (READS[:, None] - 0.8 * np.arange(Q)[None, :]) ** 2


def target(rest=log_rest_sum):
    table = np.array([[-_energy(v, h) for h in HS] for v in V])  # -E(v, h)
    p = np.exp(table - table.max()) * np.exp(rest(V))[:, None]
    return (p / p.sum()).ravel()


def _energy(v, h):
    W, b, c = PARAMS.W, PARAMS.vbias, PARAMS.hbias
    return -sum(b[i, v[i]] for i in range(N)) - h @ c - sum(W[i, v[i]] @ h for i in range(N))


def corrected_matrix(rule, *, correct=True, accept=True):
    Th, Tv = layer_matrices(PARAMS, rule, accept=accept)
    if correct:
        lr = np.repeat(log_rest_sum(V), len(HS))
        Tv = Tv * np.exp(np.minimum(lr[None, :] - lr[:, None], 0.0))
        np.fill_diagonal(Tv, 0.0)
        np.fill_diagonal(Tv, np.maximum(1.0 - Tv.sum(axis=1), 0.0))  # rounding
    return Th @ Tv


RULES = {"gibbs": GIBBS, "metropolised": LayerRule(1.0), "alpha0.3": LayerRule(0.3)}


@pytest.mark.parametrize("rule", list(RULES.values()), ids=list(RULES))
def test_the_corrected_sweep_leaves_the_posterior_invariant(rule):
    K = corrected_matrix(rule)
    ht.assert_stationary(target(), K)
    assert ht.is_irreducible(K)


@pytest.mark.parametrize("kind", ["uncorrected", "no-liu-acceptance"])
def test_negative_controls_are_not_invariant(kind):
    K = corrected_matrix(LayerRule(1.0), correct=kind != "uncorrected", accept=kind != "no-liu-acceptance")
    with pytest.raises(AssertionError, match="not stationary"):
        ht.assert_stationary(target(), K)


def _model(n_rows, evidence="sum"):
    """The RBM with ``n_rows`` rows and, per row, a reading of the sum (``"sum"``) or reads of each unit."""
    with pm.Model() as model:
        v = CategoricalRBM("v", PARAMS.W, PARAMS.vbias, PARAMS.hbias, shape=(n_rows, N))
        if evidence == "sum":
            pm.Normal("y", mu=0.8 * v.sum(axis=-1), sigma=1.5, observed=np.full(n_rows, TOTAL))
        else:
            pm.Normal("y", mu=0.8 * v, sigma=1.0, observed=np.tile(READS, (n_rows, 1)))
    return model


def _run_from_every_state(step_class, n_draws, seed, evidence="sum", **kwargs):
    """One step from every joint state, ``n_draws`` rows each; counts[x, y] of the joint end states."""
    n_states = len(V) * len(HS)
    start = np.repeat(np.arange(n_states), n_draws)
    v0, h0 = V[start // len(HS)], HS[start % len(HS)]
    model = _model(len(start), evidence)
    with model:
        step = step_class(rng=seed, **kwargs)
    assert step.uses_evidence == (evidence == "reads")
    point = model.initial_point()
    point["v"] = v0.astype(point["v"].dtype)
    step.visible_state, step.hidden_state = v0.astype(np.float64), h0.copy()
    step.left_state = point["v"].copy()  # the step left exactly this state: h is kept, not refreshed
    out, stats = step.step(point)
    assert not stats[0]["refreshed"]
    end = (out["v"] @ (Q ** np.arange(N - 1, -1, -1))) * len(HS) + step.hidden_state.astype(int) @ [2, 1]
    return np.bincount(start * n_states + end, minlength=n_states**2).reshape(n_states, n_states)


@pytest.mark.parametrize(
    "step_class, kwargs, rule",
    [(CategoricalMetropolisedGibbs, {}, LayerRule(1.0)), (CategoricalMetropolisedGibbs, {"alpha": 0.3}, LayerRule(0.3)),
     (CategoricalGibbs, {}, GIBBS)],
    ids=["metropolised", "alpha0.3", "gibbs"],
)
def test_the_step_follows_the_exact_corrected_matrix(step_class, kwargs, rule):
    counts = _run_from_every_state(step_class, 400, 3, **kwargs)
    ht.assert_frequencies(counts, corrected_matrix(rule))


@pytest.mark.parametrize("rule", [LayerRule(1.0), GIBBS], ids=["metropolised", "gibbs"])
def test_per_unit_evidence_is_swept_exactly_as_tilted_fields(rule):
    """Reads of each unit: the step samples the RBM whose visible biases gain the evidence, with no correction."""
    tilted = CategoricalRBMParams(PARAMS.W, PARAMS.vbias + unit_evidence(), PARAMS.hbias)
    Th, Tv = layer_matrices(tilted, rule)
    ht.assert_stationary(target(log_rest), Th @ Tv)
    step_class = CategoricalGibbs if rule.gibbs else CategoricalMetropolisedGibbs
    ht.assert_frequencies(_run_from_every_state(step_class, 400, 5, evidence="reads"), Th @ Tv)


def test_the_step_without_its_correction_is_caught():
    """Negative control: a step that takes every visible move (no correction) fails the same check."""

    class Uncorrected(CategoricalMetropolisedGibbs):
        @property
        def corrected(self):
            return False

    counts = _run_from_every_state(Uncorrected, 400, 3)
    with pytest.raises(AssertionError):
        ht.assert_frequencies(counts, corrected_matrix(LayerRule(1.0)))


def test_a_moved_point_refreshes_the_hidden_state():
    with _model(2, "reads") as model:
        step = CategoricalMetropolisedGibbs(rng=0)
    point = model.initial_point()
    out, stats = step.step(point)
    assert stats[0]["refreshed"]
    out, stats = step.step(out)
    assert not stats[0]["refreshed"]
    moved = out.copy()
    moved["v"] = (out["v"] + 1) % Q
    _, stats = step.step(moved)
    assert stats[0]["refreshed"]


# ----------------------------------------------------------------------------- the distribution and pm.sample
def test_logp_is_exact_and_log_z_matches_enumeration():
    with pm.Model() as model:
        v = CategoricalRBM("v", PARAMS.W, PARAMS.vbias, PARAMS.hbias)
    fn = model.compile_logp()
    values = np.array([fn({"v": x}) for x in V])
    table = np.array([[-_energy(x, h) for h in HS] for x in V])
    m = table.max()
    exact = np.log(np.exp(table - m).sum(axis=1)) + m
    exact -= np.log(np.exp(exact - exact.max()).sum()) + exact.max()
    assert np.max(np.abs(values - exact)) < 1e-8
    assert_allclose(values, log_prob_exact(V, PARAMS), atol=1e-12)
    assert fn({"v": np.array([0, 3, 1])}) == -np.inf
    assert fn({"v": np.array([0, -1, 1])}) == -np.inf
    del v


def _chosen(model):
    """The step classes ``pm.sample`` assigns to the model's free variables by competence."""
    with model:
        _, selected = assign_step_methods(model)
    return {cls: [v.name for v in vs] for cls, vs in selected.items()}


def test_pm_sample_picks_the_categorical_steps():
    with pm.Model() as alone:
        CategoricalRBM("v", PARAMS.W, PARAMS.vbias, PARAMS.hbias)
    assert _chosen(alone) == {CategoricalExactDraws: ["v"]}
    assert _chosen(_model(2)) == {CategoricalReplicaExchange: ["v"]}
    with pm.Model() as random_params:
        W = pm.Normal("W", 0.0, 1.0, shape=(N, Q, H))
        CategoricalRBM("v", W, PARAMS.vbias, PARAMS.hbias)
    assert _chosen(random_params)[CategoricalMetropolisedGibbs] == ["v"]


def test_exact_draws_step_is_exact():
    with pm.Model():
        CategoricalRBM("v", PARAMS.W, PARAMS.vbias, PARAMS.hbias, shape=(20000, N))
        step = CategoricalExactDraws(rng=1)
        point = {"v": np.zeros((20000, N), dtype=np.int64)}
        out, _ = step.step(point)
    counts = np.bincount(out["v"] @ (Q ** np.arange(N - 1, -1, -1)), minlength=Q**N)
    ht.assert_frequencies(counts, visible_distribution(PARAMS))


def _sharp():
    """Two sharp modes of 4 units with 3 states: a hidden unit per pattern, weight 5 (p of each mode 0.47)."""
    W = np.zeros((4, 3, 2))
    for j, pattern in enumerate([(0, 1, 2, 0), (2, 0, 1, 1)]):
        W[np.arange(4), pattern, j] = 5.0
    return CategoricalRBMParams(W, np.zeros((4, 3)), np.full(2, -10.0))


def test_pm_sample_defaults_on_a_sharp_model_within_tv_005():
    p = _sharp()
    with pm.Model():
        CategoricalRBM("v", p.W, p.vbias, p.hbias)
        idata = pm.sample(draws=2000, tune=200, chains=4, random_seed=1, progressbar=False,
                          compute_convergence_checks=False)
    draws = idata.posterior["v"].values.reshape(-1, 4)
    emp = np.bincount(p.visible.index(draws), minlength=81) / len(draws)
    assert 0.5 * np.abs(emp - visible_distribution(p)).sum() <= 0.05


def test_pm_sample_posterior_of_noisy_reads_matches_enumeration():
    """pm.sample's pick (replica exchange, the cold replica corrected): the posterior of v given the reads."""
    with _model(1, "reads"):
        idata = pm.sample(draws=2000, tune=200, chains=2, random_seed=2, progressbar=False,
                          compute_convergence_checks=False)
    post = np.exp(log_prob_exact(V, PARAMS) + log_rest(V))
    post /= post.sum()
    draws = idata.posterior["v"].values.reshape(-1, N)
    emp = np.bincount(draws @ (Q ** np.arange(N - 1, -1, -1)), minlength=Q**N) / len(draws)
    assert 0.5 * np.abs(emp - post).sum() <= 0.06


def test_pm_sample_posterior_of_categorical_reads_through_a_table_matches_enumeration():
    """Reads ``y_i ~ Categorical(table[v_i])`` are per-site evidence (swept as tilted fields): the posterior."""
    table = np.array([[0.7, 0.2, 0.1], [0.15, 0.7, 0.15], [0.1, 0.2, 0.7]])
    reads = np.array([2, 0, 1])
    with pm.Model():
        v = CategoricalRBM("v", PARAMS.W, PARAMS.vbias, PARAMS.hbias)
        pm.Categorical("y", p=pm.math.constant(table)[v], observed=reads)
        step = CategoricalReplicaExchange()
        assert step.uses_evidence
        idata = pm.sample(draws=2000, tune=200, chains=2, random_seed=2, progressbar=False,
                          compute_convergence_checks=False)
    post = np.exp(log_prob_exact(V, PARAMS) + np.log(table[V, reads]).sum(axis=-1))
    post /= post.sum()
    draws = idata.posterior["v"].values.reshape(-1, N)
    emp = np.bincount(draws @ (Q ** np.arange(N - 1, -1, -1)), minlength=Q**N) / len(draws)
    assert 0.5 * np.abs(emp - post).sum() <= 0.06


def test_random_weights_get_the_exact_log_z_gradient():
    with pm.Model() as model:
        W = pm.Normal("W", 0.0, 1.0, shape=(N, Q, H))
        CategoricalRBM("v", W, PARAMS.vbias, PARAMS.hbias, observed=V[[3, 17, 20]])
    logp, dlogp = model.compile_logp(), model.compile_dlogp()
    point = {"W": PARAMS.W.copy()}
    g = dlogp(point)
    eps = 1e-6
    for idx in [(0, 0, 0), (1, 2, 1), (2, 1, 0)]:
        up, down = PARAMS.W.copy(), PARAMS.W.copy()
        up[idx] += eps
        down[idx] -= eps
        fd = (logp({"W": up}) - logp({"W": down})) / (2 * eps)
        assert abs(g.reshape(N, Q, H)[idx] - fd) < 1e-5


def test_one_hot_observations_and_bad_input():
    with pm.Model() as model:
        CategoricalRBM("v", PARAMS.W, PARAMS.vbias, PARAMS.hbias, observed=V[[3, 17]])
    assert np.isfinite(model.compile_logp()({}))
    wide = CategoricalRBMParams.random(2, 3, 2, rng=0)
    with pm.Model() as model:
        CategoricalRBM("v", wide.W, wide.vbias, wide.hbias, observed=(V[[3]][:, :2, None] == np.arange(3)).astype(int))
    assert_allclose(model.compile_logp()({}), log_prob_exact(V[[3]][:, :2], wide).sum(), atol=1e-10)
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        with pm.Model():
            CategoricalRBM("v", PARAMS.W, PARAMS.vbias, PARAMS.hbias, observed=[[0, 3, 1]])
    with pytest.raises(ValueError, match="vbias rows"):
        with pm.Model():
            CategoricalRBM("v", PARAMS.W, PARAMS.vbias[:2], PARAMS.hbias)
    with pytest.raises(ValueError, match="non-finite"):
        with pm.Model():
            CategoricalRBM("v", np.full((N, Q, H), np.nan), PARAMS.vbias, PARAMS.hbias)
    with pytest.raises(ValueError, match="log Z cannot be left out|log_partition=None"):
        with pm.Model():
            W = pm.Normal("W", 0.0, 1.0, shape=(N, Q, H))
            CategoricalRBM("v", W, PARAMS.vbias, PARAMS.hbias, log_partition=None)


# ----------------------------------------------------------------------------- replica exchange
TINY = CategoricalRBMParams.random(2, 3, 1, scale=2.5, rng=8)
TINY_READS = np.array([1.9, 0.1])
BETA_HOT = 0.4


def _tiny_states():
    v = np.array(list(itertools.product(range(3), repeat=2)))
    h = np.array([[0.0], [1.0]])
    return v, h


def _tiny_energies():
    v, h = _tiny_states()
    W, b, c = TINY.W, TINY.vbias, TINY.hbias
    return np.array(
        [[-(b[0, x[0]] + b[1, x[1]]) - y @ c - (W[0, x[0]] + W[1, x[1]]) @ y for y in h] for x in v]
    ).ravel()


def _tiny_log_rest(v, evidence="reads"):
    v = np.asarray(v, dtype=np.float64)
    if evidence == "reads":
        return -0.5 * ((TINY_READS - 0.8 * v) ** 2).sum(axis=-1)
    return -0.5 * ((2.5 - 0.8 * v.sum(axis=-1)) / 1.5) ** 2


def _tiny_extended_matrix(rule, *, with_rest_in_swap=True, evidence="reads"):
    """Two rungs (1 and BETA_HOT): cold sweep (tilted by the reads, or corrected) ⊗ hot sweep, then the swap."""
    v, h = _tiny_states()
    lr = np.repeat(_tiny_log_rest(v, evidence), len(h))
    if evidence == "reads":
        tilt = -0.5 * (TINY_READS[:, None] - 0.8 * np.arange(3)[None, :]) ** 2
        Th, Tv = layer_matrices(CategoricalRBMParams(TINY.W, TINY.vbias + tilt, TINY.hbias), rule)
    else:
        Th, Tv = layer_matrices(TINY, rule)
        Tv = Tv * np.exp(np.minimum(lr[None, :] - lr[:, None], 0.0))
        np.fill_diagonal(Tv, 0.0)
        np.fill_diagonal(Tv, np.maximum(1.0 - Tv.sum(axis=1), 0.0))
    cold = Th @ Tv
    Th_hot, Tv_hot = layer_matrices(TINY, rule, BETA_HOT)
    K = np.kron(cold, Th_hot @ Tv_hot)
    return K @ _tiny_swap_matrix(lr, with_rest_in_swap)


def _tiny_swap_matrix(lr, with_rest_in_swap):
    """The swap of the two rungs' joint states by the tempered ratio (``lr``, the rest's log values, counted again
    in the negative control ``with_rest_in_swap``)."""
    E = _tiny_energies()
    M = len(E)
    S = np.zeros((M * M, M * M))
    for a in range(M):
        for b in range(M):
            log_ratio = (1.0 - BETA_HOT) * (E[a] - E[b]) + (lr[b] - lr[a] if with_rest_in_swap else 0.0)
            acc = min(1.0, np.exp(log_ratio))
            S[a * M + b, b * M + a] += acc
            S[a * M + b, a * M + b] += 1.0 - acc
    return S


def _tiny_extended_target(evidence="reads"):
    E = _tiny_energies()
    v, h = _tiny_states()
    cold = np.exp(-E + np.repeat(_tiny_log_rest(v, evidence), len(h)))
    hot = np.exp(-BETA_HOT * E)
    return np.kron(cold / cold.sum(), hot / hot.sum())


@pytest.mark.parametrize("evidence", ["reads", "sum"])
def test_a_replica_exchange_round_leaves_the_extended_target_invariant(evidence):
    K = _tiny_extended_matrix(LayerRule(1.0), evidence=evidence)
    ht.assert_stationary(_tiny_extended_target(evidence), K)
    assert ht.is_irreducible(K)
    with pytest.raises(AssertionError, match="not stationary"):  # negative control: the swap ignores L
        ht.assert_stationary(_tiny_extended_target(evidence),
                             _tiny_extended_matrix(LayerRule(1.0), with_rest_in_swap=False, evidence=evidence))


@pytest.mark.parametrize("evidence", ["reads", "sum"])
def test_the_replica_exchange_step_follows_the_exact_extended_matrix(evidence):
    v, h = _tiny_states()
    M = len(v) * len(h)
    n_draws = 250
    start = np.repeat(np.arange(M * M), n_draws)
    c0, c1 = start // M, start % M
    n_rows = len(start)
    with pm.Model() as model:
        x = CategoricalRBM("v", TINY.W, TINY.vbias, TINY.hbias, shape=(n_rows, 2))
        if evidence == "reads":
            pm.Normal("y", mu=0.8 * x, sigma=1.0, observed=np.tile(TINY_READS, (n_rows, 1)))
        else:
            pm.Normal("y", mu=0.8 * x.sum(axis=-1), sigma=1.5, observed=np.full(n_rows, 2.5))
        step = CategoricalReplicaExchange(betas=[1.0, BETA_HOT], rng=4)
    assert step.uses_evidence == (evidence == "reads")
    point = model.initial_point()
    point["v"] = v[c0 // 2].astype(point["v"].dtype)
    step.visible_state, step.hidden_state = v[c0 // 2].astype(float), h[c0 % 2].copy()
    step.left_state = point["v"].copy()
    step.hot_visible, step.hot_hidden = v[c1 // 2].astype(float), h[c1 % 2].copy()
    out, _ = step.step(point)
    end0 = (out["v"] @ [3, 1]) * 2 + step.hidden_state[:, 0].astype(int)
    end1 = (step.hot_visible.astype(int) @ [3, 1]) * 2 + step.hot_hidden[:, 0].astype(int)
    counts = np.bincount(start * M * M + end0 * M + end1, minlength=(M * M) ** 2).reshape(M * M, M * M)
    ht.assert_frequencies(counts, _tiny_extended_matrix(LayerRule(1.0), evidence=evidence))


def test_replica_exchange_mixes_the_sharp_model_where_metropolised_gibbs_does_not():
    p = _sharp()
    tv = {}
    for name, make in (("mg", CategoricalMetropolisedGibbs), ("pt", CategoricalReplicaExchange)):
        with pm.Model():
            CategoricalRBM("v", p.W, p.vbias, p.hbias)
            idata = pm.sample(draws=2000, tune=400, chains=4, step=make(), random_seed=1, progressbar=False,
                              compute_convergence_checks=False)
        draws = idata.posterior["v"].values.reshape(-1, 4)
        emp = np.bincount(p.visible.index(draws), minlength=81) / len(draws)
        tv[name] = 0.5 * np.abs(emp - visible_distribution(p)).sum()
    assert tv["pt"] <= 0.05 < tv["mg"]


def test_the_ladder_adapts_in_tuning_and_is_then_frozen():
    p = _sharp()
    with pm.Model():
        CategoricalRBM("v", p.W, p.vbias, p.hbias)
        step = CategoricalReplicaExchange(rng=0)
        pm.sample(draws=200, tune=400, chains=1, step=step, random_seed=1, progressbar=False,
                  compute_convergence_checks=False)
    assert step.betas[0] == 1.0 and step.betas[-1] == step.initial_betas[-1]
    assert 2 <= step.betas.size <= step.max_replicas and not np.array_equal(step.betas, step.initial_betas)
    rates = step.swap_rates  # measured on the frozen ladder over the 200 draws and the end of tuning
    assert np.all(rates > 0.2)


@pytest.mark.parametrize("step_class", [CategoricalMetropolisedGibbs, CategoricalReplicaExchange])
def test_a_resumed_step_continues_draw_for_draw(step_class):
    """The sampling state (generator, hidden state, replicas, ladder) carries the chain on exactly."""
    with _model(2, "sum") as model:
        whole, first = step_class(rng=3), step_class(rng=3)
        resumed = step_class(rng=99)
    for s in (whole, first):
        s.setup_chain(np.random.default_rng(5), tune=80, draws=40)
    resumed.setup_chain(np.random.default_rng(0), tune=80, draws=40)
    point = model.initial_point()
    a = b = point
    for _ in range(60):
        a, _ = whole.step(a)
        b, _ = first.step(b)
    resumed.sampling_state = first.sampling_state
    for _ in range(40):
        a, _ = whole.step(a)
        b, _ = resumed.step(b)
        np.testing.assert_array_equal(a["v"], b["v"])


def test_using_the_distribution_alone_registers_its_steps():
    """In a fresh process, ``pymc_rbm.CategoricalRBM`` alone (no step imported) makes pm.sample pick its steps."""
    import subprocess
    import sys

    code = (
        "import numpy as np, pymc as pm, pymc_rbm\n"
        "p = pymc_rbm.CategoricalRBMParams(np.ones((3, 3, 2)), np.zeros((3, 3)), np.zeros(2))\n"
        "with pm.Model():\n"
        "    pymc_rbm.CategoricalRBM('x', p.W, p.vbias, p.hbias)\n"
        "from pymc.step_methods import STEP_METHODS\n"
        "print(sorted(m.__name__ for m in STEP_METHODS if m.__name__.startswith('Categorical')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "CategoricalExactDraws" in out and "CategoricalReplicaExchange" in out


# ----------------------------------------------------------------------------- the clamp on every rung
def _tiny_every_rung_matrix(rule, *, with_rest_in_swap=False):
    """Two rungs, each tilted by the reads (the hot one samples ``p_β(v, h) L(v)``), swapped by the tempered ratio
    alone (``L`` cancels); ``with_rest_in_swap`` is the negative control that counts ``L`` once more."""
    v, h = _tiny_states()
    lr = np.repeat(_tiny_log_rest(v), len(h))
    tilt = -0.5 * (TINY_READS[:, None] - 0.8 * np.arange(3)[None, :]) ** 2
    Th, Tv = layer_matrices(CategoricalRBMParams(TINY.W, TINY.vbias + tilt, TINY.hbias), rule)
    Th_hot, Tv_hot = layer_matrices(CategoricalRBMParams(TINY.W, TINY.vbias + tilt / BETA_HOT, TINY.hbias), rule,
                                    BETA_HOT)  # β (vbias + tilt / β + W h) = β (vbias + W h) + tilt
    K = np.kron(Th @ Tv, Th_hot @ Tv_hot)
    return K @ _tiny_swap_matrix(lr, with_rest_in_swap)


def test_tilt_every_rung_leaves_the_extended_target_invariant_and_the_step_follows_its_matrix():
    E = _tiny_energies()
    v, h = _tiny_states()
    lr = np.repeat(_tiny_log_rest(v), len(h))
    cold, hot = np.exp(-E + lr), np.exp(-BETA_HOT * E + lr)
    extended = np.kron(cold / cold.sum(), hot / hot.sum())
    K = _tiny_every_rung_matrix(LayerRule(1.0))
    ht.assert_stationary(extended, K)
    with pytest.raises(AssertionError, match="not stationary"):
        ht.assert_stationary(extended, _tiny_every_rung_matrix(LayerRule(1.0), with_rest_in_swap=True))
    M = len(v) * len(h)
    n_draws = 250
    start = np.repeat(np.arange(M * M), n_draws)
    c0, c1 = start // M, start % M
    n_rows = len(start)
    with pm.Model() as model:
        x = CategoricalRBM("v", TINY.W, TINY.vbias, TINY.hbias, shape=(n_rows, 2))
        pm.Normal("y", mu=0.8 * x, sigma=1.0, observed=np.tile(TINY_READS, (n_rows, 1)))
        step = CategoricalReplicaExchange(betas=[1.0, BETA_HOT], rng=4, tilt_every_rung=True)
    point = model.initial_point()
    point["v"] = v[c0 // 2].astype(point["v"].dtype)
    step.visible_state, step.hidden_state = v[c0 // 2].astype(float), h[c0 % 2].copy()
    step.left_state = point["v"].copy()
    step.hot_visible, step.hot_hidden = v[c1 // 2].astype(float), h[c1 % 2].copy()
    out, _ = step.step(point)
    end0 = (out["v"] @ [3, 1]) * 2 + step.hidden_state[:, 0].astype(int)
    end1 = (step.hot_visible.astype(int) @ [3, 1]) * 2 + step.hot_hidden[:, 0].astype(int)
    counts = np.bincount(start * M * M + end0 * M + end1, minlength=(M * M) ** 2).reshape(M * M, M * M)
    ht.assert_frequencies(counts, K)


def test_tilt_every_rung_is_refused_where_the_evidence_involves_other_random_variables():
    with pm.Model():
        x = CategoricalRBM("v", TINY.W, TINY.vbias, TINY.hbias)
        s = pm.HalfNormal("s")
        pm.Normal("y", mu=0.8 * x, sigma=s, observed=TINY_READS)
        with pytest.raises(ValueError, match=r"tilt_every_rung=True needs .* involve \['s_log__'\]"):
            CategoricalReplicaExchange([x], tilt_every_rung=True)
        with pytest.raises(TypeError, match="tilt_every_rung must be True or False"):
            CategoricalReplicaExchange([x], tilt_every_rung=1)


# ----------------------------------------------------------------------------- bad start values
@pytest.mark.parametrize("step_class", [None, CategoricalGibbs, CategoricalMetropolisedGibbs,
                                        CategoricalReplicaExchange, CategoricalExactDraws],
                         ids=["default", "gibbs", "metropolised", "replica-exchange", "exact-draws"])
@pytest.mark.parametrize("start", [[5, 0, 0], [0, -1, 0]], ids=["too-large", "negative"])
def test_a_start_label_out_of_range_is_refused_with_the_variable_and_value(step_class, start):
    start = np.array(start)
    before = start.copy()
    with pm.Model():
        CategoricalRBM("v", PARAMS.W, PARAMS.vbias, PARAMS.hbias)
        step = None if step_class is None else step_class()
        bad = start[np.flatnonzero((start < 0) | (start >= Q))[0]]
        with pytest.raises(ValueError, match=rf"start value of 'v' .* integer labels in \[0, 3\).*found {bad}"):
            pm.sample(draws=5, tune=0, chains=1, step=step, initvals={"v": start}, random_seed=0,
                      progressbar=False, compute_convergence_checks=False)
    np.testing.assert_array_equal(start, before)

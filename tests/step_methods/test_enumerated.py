"""ExactDraws: independent exact draws, the independence proposal inside larger models, and the default choice.

Alone, a draw of every row is exact by construction; the step itself, run
from every joint state ``(v, h)`` of tiny RBMs many times, must follow
``T[(v, h), (v', h')] = p(v', h')``. With other model terms ``L(v)``, the
transition over the visible states (one row, and two rows whose ``L``
couples them) must leave ``p_RBM(v) L(v)`` invariant exactly, and the step
must follow that matrix (with the hidden part drawn from ``p(h | v')``);
proposing from a wrong distribution, or accepting the rows at once with
per-row ratios of a coupled ``L``, must fail.
"""

from __future__ import annotations

import itertools

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import pytest
from pymc.sampling.mcmc import assign_step_methods
from pymc.step_methods.compound import Competence
from scipy.special import expit, logsumexp

from pymc_rbm import RBM, RBMParams
from pymc_rbm import testing as ht
from pymc_rbm.estimators import binary_states, log_marginal_visible
from pymc_rbm.enumeration import EnumerationTooLarge
from pymc_rbm.kernels import RBMState
from pymc_rbm.step_methods import ExactDraws, FlipTheState, ReplicaExchange
from pymc_rbm.step_methods.enumerated import (
    EXACT_DRAWS_MAX_BITS,
    MAX_TRIES,
    MIN_TRIES,
    TRIES_START,
    VISIBLE_TABLE_MAX_BITS,
    exact_draws_pay,
)

from ._stats import assert_visible_distribution

NV, NH = 3, 2
C = np.array([1.5, -2.0, 0.7])  # one row: log L(v) = C·v + D v_0 v_1 - E v_1 v_2
D, E = 2.5, 1.2
G = np.array([[1.1, -0.4, 0.0], [0.0, 0.9, -1.3], [0.6, 0.0, 0.8]])  # two rows: + v_a G v_b couples them


def log_rest_row(v):
    v = np.asarray(v, dtype=np.float64)
    return v @ C + D * v[..., 0] * v[..., 1] - E * v[..., 1] * v[..., 2]


def log_rest_pair(va, vb):
    return log_rest_row(va) + 0.5 * log_rest_row(vb) + np.einsum("...i,ij,...j->...", va, G, vb)


@pytest.fixture(scope="module")
def params():
    return RBMParams.random(NV, NH, scale=2.0, rng=11)


def log_p_rbm(params):
    """``log p_RBM(v)`` over ``binary_states(n_visible)``."""
    return log_marginal_visible(params)


# ------------------------------------------------------------ matrices
def independence_matrix(log_q, log_rest):
    """``T[v, v'] = q(v') min(1, L(v') / L(v))`` off the diagonal, the rest on it (one row)."""
    q = np.exp(log_q - logsumexp(log_q))
    T = q[None, :] * np.exp(np.minimum(log_rest[None, :] - log_rest[:, None], 0.0))
    np.fill_diagonal(T, 0.0)
    np.fill_diagonal(T, 1.0 - T.sum(axis=1))
    return T


def pair_scan_matrix(log_q, log_rest_ab):
    """Row a, then row b, each an independence update with the whole-model L, over the pairs (a, b).

    ``log_rest_ab`` has shape (2**n, 2**n); the state ``(a, b)`` has index ``a * 2**n + b``.
    """
    m = log_q.size
    T = np.zeros((m * m, m * m))
    Ta = [independence_matrix(log_q, log_rest_ab[:, b]) for b in range(m)]  # row a moves, b fixed
    Tb = [independence_matrix(log_q, log_rest_ab[a, :]) for a in range(m)]  # row b moves, a fixed
    for a, b in itertools.product(range(m), range(m)):
        for a2 in range(m):
            T[a * m + b, a2 * m : (a2 + 1) * m] += Ta[b][a, a2] * Tb[a2][b, :]
    return T


def parallel_rows_matrix(log_q, log_rest_ab):
    """Both rows proposed and accepted at once, each by its own ratio at the other row's old state."""
    m = log_q.size
    Ta = [independence_matrix(log_q, log_rest_ab[:, b]) for b in range(m)]
    Tb = [independence_matrix(log_q, log_rest_ab[a, :]) for a in range(m)]
    T = np.zeros((m * m, m * m))
    for a, b in itertools.product(range(m), range(m)):
        T[a * m + b] = np.outer(Ta[b][a], Tb[a][b]).ravel()
    return T


def pair_target(params):
    states = binary_states(NV)
    lr = log_rest_pair(states[:, None, :], states[None, :, :])
    lq = log_p_rbm(params)
    log_pi = lq[:, None] + lq[None, :] + lr
    return lq, lr, np.exp(log_pi - logsumexp(log_pi)).ravel()


def test_one_row_independence_update_leaves_the_posterior_invariant(params):
    lq, lr = log_p_rbm(params), log_rest_row(binary_states(NV))
    pi = np.exp(lq + lr - logsumexp(lq + lr))
    ht.assert_converges(pi, independence_matrix(lq, lr))
    # negative control: the same acceptance, but proposals from another RBM (or uniformly) are not exact
    other = RBMParams(params.W, params.vbias + 0.7, params.hbias)
    for wrong in (log_p_rbm(other), np.zeros(2**NV)):
        with pytest.raises(AssertionError, match="not stationary"):
            ht.assert_stationary(pi, independence_matrix(wrong, lr))


def test_row_by_row_update_with_a_coupled_likelihood_is_exact(params):
    lq, lr, pi = pair_target(params)
    ht.assert_converges(pi, pair_scan_matrix(lq, lr))
    # negative control: accepting both rows at once with their own ratios needs L to factorise over rows
    with pytest.raises(AssertionError, match="not stationary"):
        ht.assert_stationary(pi, parallel_rows_matrix(lq, lr))
    # ... which it does without the coupling term: then the parallel update is exact too
    states = binary_states(NV)
    lr_fact = log_rest_row(states)[:, None] + 0.5 * log_rest_row(states)[None, :]
    log_pi = lq[:, None] + lq[None, :] + lr_fact
    ht.assert_stationary(np.exp(log_pi - logsumexp(log_pi)).ravel(), parallel_rows_matrix(lq, lr_fact))


# ------------------------------------------------------ the step itself
N_DRAWS = 400  # runs from each joint state


def with_fresh_hidden(T_v, params):
    """Joint matrix: ``v -> v'`` by ``T_v``, then ``h' ~ p(h | v')`` whatever the start's h."""
    v, h = ht.joint_states(params.n_visible, params.n_hidden)
    iv = ht.state_index(v)
    p_on = expit(params.hbias + v @ params.W)
    p_h = np.prod(np.where(h == 1, p_on, 1.0 - p_on), axis=1)  # p(h | v) of each joint state
    return T_v[iv[:, None], iv[None, :]] * p_h[None, :]


@pytest.mark.parametrize("shape", [(NV, NH), (2, 3)], ids=["hidden-enumerated", "visible-enumerated"])
@pytest.mark.parametrize("with_rest", [False, True], ids=["alone", "with-L"])
def test_step_follows_its_matrix(shape, with_rest):
    """One row per (start, run) in a batch; ``L`` a sum of per-row terms, so every row moves by the one-row matrix."""
    nv, nh = shape
    params = RBMParams.random(nv, nh, scale=2.0, rng=5)
    coef = C[:nv]
    n = 2 ** (nv + nh) * N_DRAWS
    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias, shape=(n, nv))
        if with_rest:
            pm.Potential("rest", (v @ coef + D * v[:, 0] * v[:, 1]).sum())
        step = ExactDraws(record_hidden=True, tries=3 if with_rest else "auto", sweeps=0)
    assert step.corrected == with_rest and step.n_states == 2 ** min(nv, nh)
    assert step.row_draws == with_rest  # a row term that reads units together: the tries of all rows at once
    assert step.enumerated_layer == ("hidden" if nh <= nv else "visible")
    step.setup_chain(np.random.default_rng(3), 0, 1)
    states = binary_states(nv)
    log_rest = states @ coef + D * states[:, 0] * states[:, 1] if with_rest else np.zeros(2**nv)
    tries = 3 if with_rest else 1  # the step last left another state: h is drawn afresh, then the tries
    T = with_fresh_hidden(np.linalg.matrix_power(independence_matrix(log_p_rbm(params), log_rest), tries), params)

    def kernel_fn(rng, state):
        point, stats = step.step({"v": state.v.astype(np.int64)})
        return RBMState(point["v"], stats[0]["hidden"].reshape(n, nh))

    check = ht.empirical_transition_check(kernel_fn, T, nv, nh, n_draws=N_DRAWS)
    assert check.n_impossible == 0


def test_step_with_a_coupled_likelihood_follows_the_scan_matrix(params):
    """Pairs of rows ``(m, 2, n_visible)``, ``L`` coupling the two rows of each pair, every pair from every state."""
    m = 2 ** (2 * NV)
    runs = 120
    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias, shape=(m * runs, 2, NV))
        va, vb = v[:, 0], v[:, 1]
        rest = va @ C + D * va[:, 0] * va[:, 1] - E * va[:, 1] * va[:, 2]
        rest_b = vb @ C + D * vb[:, 0] * vb[:, 1] - E * vb[:, 1] * vb[:, 2]
        pm.Potential("rest", (rest + 0.5 * rest_b + ((va @ pt.as_tensor(G)) * vb).sum(axis=-1)).sum())
        step = ExactDraws()
    step.setup_chain(np.random.default_rng(4), 0, 1)
    lq, lr, _ = pair_target(params)
    T = pair_scan_matrix(lq, lr)
    states = binary_states(NV).astype(np.int64)
    start = np.repeat(np.arange(m), runs)
    v0 = np.stack([states[start // 2**NV], states[start % 2**NV]], axis=1)
    for moved in (False, True):  # True: the step last left another state, so it must re-evaluate L
        if moved:
            step.step({"v": 1 - v0})
        else:  # as if the step had left v0
            s = step.sampling_state
            s.visible_state = v0.reshape(-1, NV).astype(np.float64)
            step.sampling_state = s
        point, stats = step.step({"v": v0.copy()})
        assert stats[0]["refreshed"] == moved
        end = ht.state_index(point["v"][:, 0]) * 2**NV + ht.state_index(point["v"][:, 1])
        counts = np.bincount(start * m + end, minlength=m * m).reshape(m, m)
        ht.assert_frequencies(counts, T)


def test_the_step_refuses_what_it_cannot_do(params):
    with pm.Model():
        s = pm.HalfNormal("s")
        v = RBM("v", s * params.W, params.vbias, params.hbias, log_partition="exact")
        with pytest.raises(ValueError, match="constants or data"):
            ExactDraws([v])
        assert ExactDraws.competence(v) == Competence.INCOMPATIBLE
    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias)
        with pytest.raises(TypeError, match="compiled"):
            ExactDraws([v], compiled=False)
        for tries in (0, 1.5, True, "many"):
            with pytest.raises(ValueError, match="tries must be"):
                ExactDraws([v], tries=tries)
        with pytest.raises(ValueError, match="sweeps must be"):
            ExactDraws([v], sweeps=-1)
        with pytest.raises(EnumerationTooLarge, match="2\\*\\*2"):
            ExactDraws([v], max_bits=1)


# ------------------------------------------- per-unit evidence: proposals, then sweeps
READOUT = dict(scale=1.7, offset=-0.4, sigma=0.9)
Y_ROW = np.array([1.9, -0.8, 0.2, 1.1])  # the readouts of one row of 4 units


def readout_evidence(y, scale=READOUT["scale"], offset=READOUT["offset"], sigma=READOUT["sigma"]):
    """``δ = log N(y | scale + offset, σ) - log N(y | offset, σ)`` of each unit."""
    return ((y - offset) ** 2 - (y - offset - scale) ** 2) / (2 * sigma**2)


def evidence_draw_matrix(params, delta, *, sweep_params=None, forget_current=False):
    """One draw with ``tries=1, sweeps=1`` over the joint states: the try (``h ~ p(h | v')`` where it was
    taken, ``(v, h)`` kept where not), then a flip-the-state sweep of the tilted RBM (or of ``sweep_params``)."""
    nv, nh = params.n_visible, params.n_hidden
    v, h = ht.joint_states(nv, nh)
    states = binary_states(nv)
    q = np.exp(log_p_rbm(params) - logsumexp(log_p_rbm(params)))
    log_rest = states @ delta
    current = np.zeros_like(log_rest) if forget_current else log_rest
    take = q[None, :] * np.exp(np.minimum(log_rest[None, :] - current[:, None], 0.0))  # [v, v']
    p_on = expit(params.hbias + states @ params.W)
    h_states = binary_states(nh)
    p_h = np.prod(np.where(h_states[None] == 1, p_on[:, None], 1 - p_on[:, None]), axis=-1)  # [v', h']
    iv, ih = ht.state_index(v), ht.state_index(h)
    A = (take[iv][:, iv] * p_h[iv, ih][None, :])  # taken: to (v', h' ~ p(h | v'))
    A[np.arange(iv.size), np.arange(iv.size)] += 1.0 - take[iv].sum(axis=1)  # not taken: (v, h) kept
    tilted = RBMParams(params.W, params.vbias + delta, params.hbias)
    return A @ ht.transition_matrix(sweep_params or tilted, "flip")


def test_evidence_draw_leaves_the_tilted_rbm_invariant():
    params = RBMParams.random(4, 2, scale=2.0, rng=5)
    delta = readout_evidence(Y_ROW)
    pi = ht.joint_distribution(RBMParams(params.W, params.vbias + delta, params.hbias))
    ht.assert_converges(pi, evidence_draw_matrix(params, delta))
    for wrong in (dict(sweep_params=params), dict(forget_current=True)):  # negative controls
        with pytest.raises(AssertionError, match="not stationary"):
            ht.assert_stationary(pi, evidence_draw_matrix(params, delta, **wrong))


def readout_model(params, n_rows, y_rows=None, **readout):
    readout = {**READOUT, **readout}
    y = np.tile(Y_ROW[: params.n_visible], (n_rows, 1)) if y_rows is None else y_rows
    model = pm.Model()
    with model:
        v = RBM("v", params.W, params.vbias, params.hbias, shape=y.shape)
        pm.Normal("y", readout["scale"] * v + readout["offset"], readout["sigma"], observed=y)
    return model


def from_given_state(step, params):
    """A kernel for :func:`~pymc_rbm.testing.empirical_transition_check`: one draw of ``step`` from the joint
    state ``(v, h)`` it is given (set as its carried state), returning the draw and its recorded ``h``."""

    def kernel_fn(rng, state):
        s = step.sampling_state
        s.visible_state, s.hidden_state = state.v.astype(np.float64), state.h.astype(np.float64)
        s.hidden_input = params.hbias + s.visible_state @ params.W
        step.sampling_state = s
        point, stats = step.step({"v": state.v.astype(np.int64)})
        assert not stats[0]["refreshed"]  # the step starts from the (v, h) it was given
        return RBMState(point["v"], stats[0]["hidden"].reshape(state.v.shape[0], params.n_hidden))

    return kernel_fn


def test_evidence_step_follows_its_matrix():
    """Every joint state, many rows each, one draw of ``ExactDraws(tries=1, sweeps=1)`` against the matrix."""
    params = RBMParams.random(4, 2, scale=2.0, rng=5)
    runs = 300
    n = 2**6 * runs
    with readout_model(params, n):
        step = ExactDraws(tries=1, sweeps=1, record_hidden=True)
    assert step.evidence_draws and step.keeps_hidden and step.n_tries == 1
    step.setup_chain(np.random.default_rng(3), 0, 1)
    T = evidence_draw_matrix(params, readout_evidence(Y_ROW))

    check = ht.empirical_transition_check(from_given_state(step, params), T, 4, 2, n_draws=runs)
    assert check.n_impossible == 0


def test_pm_sample_with_readouts_matches_enumeration():
    """The default for readouts of every unit, three rows with their own data, against each row's posterior."""
    params = RBMParams.random(6, 4, scale=2.5, rng=8)
    y = np.random.default_rng(0).normal(0.5, 1.2, (3, 6))
    with readout_model(params, 3, y) as model:
        assert list(assign_step_methods(model)[1]) == [ExactDraws]
        idata = pm.sample(draws=3000, random_seed=5, **SAMPLE)
    stats = idata.sample_stats
    n_tries = stats["n_tries"].values
    assert (n_tries == n_tries[:, :1]).all() and MIN_TRIES <= n_tries.min() <= MAX_TRIES  # frozen after tuning
    draws = idata.posterior["v"].values
    for row in range(3):
        log_p = log_marginal_visible(params) + binary_states(6) @ readout_evidence(y[row])
        assert_visible_distribution(draws[:, :, row], log_p, label=f"row {row}")


def test_tries_adapt_to_the_acceptance():
    """Weak evidence: most proposals are taken and few are made; stronger evidence: more are made; evidence
    that pins 14 units far from the prior's modes: even the most would not move a row, and few are kept."""
    tries = {}
    for n_visible, sigma in ((6, 3.0), (6, 0.5), (14, 0.05)):
        params = RBMParams.random(n_visible, 4, scale=2.5, rng=8)
        y = np.random.default_rng(1).normal(0.0, 1.0, (20, n_visible))
        with readout_model(params, 20, y, sigma=sigma):
            idata = pm.sample(draws=5, tune=200, chains=1, random_seed=1, progressbar=False,
                              compute_convergence_checks=False)
        tries[n_visible, sigma] = int(idata.sample_stats["n_tries"].values[0, -1])
    assert tries[6, 3.0] < tries[6, 0.5] and tries[6, 0.5] > 2 * MIN_TRIES and tries[14, 0.05] == MIN_TRIES, tries


def test_resume_continues_draw_for_draw():
    """The adapted ``tries`` and its bookkeeping are part of the sampling state."""
    params = RBMParams.random(6, 4, scale=2.5, rng=8)
    with readout_model(params, 5, np.random.default_rng(2).normal(0.5, 1.0, (5, 6))):
        step = ExactDraws()
    step.setup_chain(np.random.default_rng(0), 40, 20)
    point = {"v": np.zeros((5, 6), dtype=np.int64)}
    for _ in range(30):
        point, _ = step.step(point)
    saved, saved_point = step.sampling_state, point
    assert saved.n_tries != TRIES_START and saved.tries_draw == 30
    first = []
    for _ in range(15):
        point, _ = step.step(point)
        first.append(point["v"])
    step.setup_chain(np.random.default_rng(99), 0, 1)  # forget everything, then resume
    step.sampling_state = saved
    point = saved_point
    for expected in first:
        point, _ = step.step(point)
        np.testing.assert_array_equal(point["v"], expected)


def test_corrected_sweeps_with_a_coupled_likelihood(params):
    """Elsewhere ``sweeps`` adds Metropolis-corrected flip-the-state sweeps after the proposals: still exact."""
    from scipy.stats import norm

    params = RBMParams.random(6, 4, scale=1.5, rng=3)
    a, sigma, y = np.array([1.0, -0.5, 0.8, 1.2, -1.0, 0.6]), 0.8, 1.7
    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias)
        pm.Normal("y", v @ a, sigma, observed=y)
        step = ExactDraws(tries=2, sweeps=1)
        assert step.sweeps == 1 and not step.evidence_draws
        idata = pm.sample(draws=3000, random_seed=4, step=step, **SAMPLE)
    log_p = log_marginal_visible(params) + norm.logpdf(y, binary_states(6) @ a, sigma)
    assert_visible_distribution(idata.posterior["v"].values, log_p, label="posterior")


# ------------------------------------------------------ through pm.sample
SAMPLE = dict(tune=100, chains=2, cores=1, progressbar=False, compute_convergence_checks=False)


def test_pm_sample_alone_matches_enumeration():
    params = RBMParams.random(6, 4, scale=2.0, rng=3)
    with pm.Model():
        RBM("v", params.W, params.vbias, params.hbias, shape=(2, 6))
        idata = pm.sample(draws=2000, random_seed=1, **SAMPLE)  # no step: ExactDraws
    stats = idata.sample_stats
    assert "n_states" in stats and "n_temperatures" not in stats and int(stats["n_states"].max()) == 16
    assert float(np.stack(stats["accept_rate"].values.ravel()).min()) == 1.0
    draws = idata.posterior["v"].values
    for row in range(2):
        assert_visible_distribution(draws[:, :, row], log_marginal_visible(params), label=f"row {row}")


def test_pm_sample_with_a_likelihood_matches_enumeration():
    from scipy.stats import norm

    params = RBMParams.random(6, 4, scale=1.5, rng=3)
    a, sigma, y = np.array([1.0, -0.5, 0.8, 1.2, -1.0, 0.6]), 0.8, 1.7
    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias)
        pm.Normal("y", v @ a, sigma, observed=y)
        idata = pm.sample(draws=3000, random_seed=2, step=ExactDraws(), **SAMPLE)
    accept = idata.sample_stats["accept_rate"].values.mean()
    assert 0.1 < accept < 0.95
    log_p = log_marginal_visible(params) + norm.logpdf(y, binary_states(6) @ a, sigma)
    assert_visible_distribution(idata.posterior["v"].values, log_p, label="posterior")


def test_same_seed_same_draws(params):
    with pm.Model():
        RBM("v", params.W, params.vbias, params.hbias)
        a = pm.sample(draws=50, random_seed=7, **SAMPLE)
        b = pm.sample(draws=50, random_seed=7, **SAMPLE)
    np.testing.assert_array_equal(a.posterior["v"].values, b.posterior["v"].values)


def test_data_parameters_are_read_per_run():
    params = RBMParams.random(4, 3, rng=1)
    with pm.Model():
        vbias = pm.Data("vbias", params.vbias)
        RBM("v", params.W, vbias, params.hbias)
        step = ExactDraws()
        pm.set_data({"vbias": np.full(4, 30.0)})  # every unit on, almost surely
        idata = pm.sample(draws=20, random_seed=1, step=step, **SAMPLE)
    assert (idata.posterior["v"].values == 1).all()


# ------------------------------------------------------ the default choice
def test_default_choice(params):
    with pm.Model() as alone:
        v = RBM("v", params.W, params.vbias, params.hbias)
        assert ExactDraws.competence(v) == Competence.IDEAL
        assert list(assign_step_methods(alone)[1]) == [ExactDraws]
    assert not exact_draws_pay(v)  # outside a model context the other terms cannot be checked
    assert exact_draws_pay(v, alone)
    with pm.Model() as likelihood:  # one row: any term of it is a row term
        v = RBM("v", params.W, params.vbias, params.hbias)
        pm.Bernoulli("y", pm.math.sigmoid(v.sum() - 1.5), observed=1)
        assert ExactDraws.competence(v) == Competence.IDEAL
        assert list(assign_step_methods(likelihood)[1]) == [ExactDraws]
    with pm.Model() as potential:
        v = RBM("v", params.W, params.vbias, params.hbias)
        pm.Potential("rest", v[0] * v[1])  # couples two units (v.sum() would be per-unit evidence)
        assert list(assign_step_methods(potential)[1]) == [ExactDraws]
    with pm.Model() as across_rows:  # a term that couples the rows: the tempered ladder
        v = RBM("v", params.W, params.vbias, params.hbias, shape=(4, NV))
        pm.Normal("y", v.sum(), 1.0, observed=3.0)
        assert ExactDraws.competence(v) == Competence.COMPATIBLE
        assert list(assign_step_methods(across_rows)[1]) == [ReplicaExchange]
    with pm.Model() as random:
        s = pm.HalfNormal("s")
        RBM("v", s * params.W, params.vbias, params.hbias, log_partition="exact")
        assert random.rvs_to_values[random["v"]] in assign_step_methods(random)[1][FlipTheState]
    with pm.Model() as readouts:  # per-unit evidence, here with a free shared parameter: proposals and sweeps
        v = RBM("v", params.W, params.vbias, params.hbias, shape=(4, NV))
        scale = pm.HalfNormal("scale")
        pm.Normal("y", scale * v, 1.0, observed=np.ones((4, NV)))
        assert list(assign_step_methods(readouts)[1]) == [ExactDraws, pm.NUTS]
    with pm.Model() as rows:  # each row's terms couple its units, its loadings free: row proposals, and NUTS
        v = RBM("v", params.W, params.vbias, params.hbias, shape=(4, NV))
        b = pm.Normal("b", 0.0, 1.0, shape=NV)
        pm.Normal("y", v @ b, 1.0, observed=np.ones(4))
        assert list(assign_step_methods(rows)[1]) == [ExactDraws, pm.NUTS]


def test_wide_visible_layers_with_evidence_keep_the_ladder():
    """Past VISIBLE_TABLE_MAX_BITS a proposal would need a draw of v | h: ReplicaExchange stays the default."""
    n = VISIBLE_TABLE_MAX_BITS + 1
    with pm.Model() as model:
        v = RBM("v", np.zeros((n, 4)), np.zeros(n), np.zeros(4), log_partition=None)
        pm.Normal("y", v, 1.0, observed=np.ones(n))
        assert list(assign_step_methods(model)[1]) == [ReplicaExchange]


@pytest.mark.parametrize("n_hidden, chosen", [(20, ExactDraws), (EXACT_DRAWS_MAX_BITS + 1, ReplicaExchange)])
def test_mnist_sized_layers(n_hidden, chosen):
    """784 x 20 qualifies (mnist_h20), a smaller layer past the budget does not; the choice enumerates nothing."""
    with pm.Model() as model:
        RBM("v", np.zeros((784, n_hidden)), np.zeros(784), np.zeros(n_hidden), log_partition=None)
        assert list(assign_step_methods(model)[1]) == [chosen]


def test_the_bundled_model_gets_exact_draws():
    from pymc_rbm.datasets import bundled_rbm

    params = bundled_rbm()
    with pm.Model() as model:
        RBM("v", params.W, params.vbias, params.hbias)
        assert list(assign_step_methods(model)[1]) == [ExactDraws]


def test_parallel_chains_and_pickling(params):
    """The step travels to worker processes (pickled) and its chains do not depend on the process."""
    import cloudpickle

    with pm.Model():
        RBM("v", params.W, params.vbias, params.hbias, shape=(2, NV))
        step = ExactDraws()
        copy = cloudpickle.loads(cloudpickle.dumps(step))
        outs = []
        for s in (step, copy):
            s.setup_chain(np.random.default_rng(0), 0, 5)
            outs.append([s.step({"v": np.zeros((2, NV), dtype=np.int64)})[0]["v"] for _ in range(5)])
        np.testing.assert_array_equal(outs[0], outs[1])
        kw = dict(draws=30, tune=10, chains=2, progressbar=False, compute_convergence_checks=False, random_seed=3)
        one = pm.sample(cores=1, **kw)
        two = pm.sample(cores=2, **kw)
    np.testing.assert_array_equal(one.posterior["v"].values, two.posterior["v"].values)


# ------------------------------------------- row terms that read a row's units together
B_ROW = np.array([[1.1, -0.6], [0.4, 0.9], [-0.8, 0.7], [1.3, 0.2]])  # 4 units seen through 2 coupled readouts


def coupled_log_rest(states, y, scale=1.0, sigma=0.7):
    """``log N(y | scale · v·B, σ)`` of each state (rows of ``states``), the constant dropped."""
    return -(((y - scale * (states @ B_ROW)) ** 2).sum(axis=-1)) / (2 * sigma**2)


def coupled_model(params, y, *, free_scale=False):
    model = pm.Model()
    with model:
        v = RBM("v", params.W, params.vbias, params.hbias, shape=(y.shape[0], params.n_visible))
        scale = pm.HalfNormal("scale", 2.0) if free_scale else 1.0
        pm.Normal("y", scale * (v @ B_ROW), 0.7, observed=y)
    return model


def joint_tries_matrix(params, log_rest, n_tries, *, stale=False):
    """``n_tries`` tries over the joint states: ``h' ~ p(h | v')`` where a try was taken, ``(v, h)`` kept where
    none was; ``stale``: the tries judged by another ``log L`` at the current state (``log_rest[0]``) than at the
    proposals (``log_rest[1]``)."""
    nv, nh = params.n_visible, params.n_hidden
    current, proposed = (log_rest, log_rest) if not stale else log_rest
    q = np.exp(log_p_rbm(params) - logsumexp(log_p_rbm(params)))
    one = q[None, :] * np.exp(np.minimum(proposed[None, :] - current[:, None], 0.0))  # [v, v'] of one try
    none_taken = (1.0 - one.sum(axis=1)) ** n_tries
    M = one.copy()
    M[np.arange(q.size), np.arange(q.size)] += 1.0 - one.sum(axis=1)
    landed = np.linalg.matrix_power(M, n_tries)
    landed[np.arange(q.size), np.arange(q.size)] -= none_taken  # ended where it started having taken a try
    states = binary_states(nv)
    p_on = expit(params.hbias + states @ params.W)
    p_h = np.prod(np.where(binary_states(nh)[None] == 1, p_on[:, None], 1 - p_on[:, None]), axis=-1)
    v, h = ht.joint_states(nv, nh)
    iv, ih = ht.state_index(v), ht.state_index(h)
    T = landed[iv][:, iv] * p_h[iv, ih][None, :]
    T[np.arange(iv.size), np.arange(iv.size)] += none_taken[iv]
    return T


def test_row_tries_leave_the_joint_posterior_invariant():
    params = RBMParams.random(4, 2, scale=2.0, rng=5)
    log_rest = coupled_log_rest(binary_states(4), np.array([0.9, 1.2]))
    pi = ht.joint_distribution(params) * np.exp(log_rest[ht.state_index(ht.joint_states(4, 2)[0])])
    pi /= pi.sum()
    ht.assert_converges(pi, joint_tries_matrix(params, log_rest, 3) @ joint_tries_matrix(params, log_rest, 1))
    with pytest.raises(AssertionError, match="not stationary"):  # negative control: tries that ignore L
        ht.assert_stationary(pi, joint_tries_matrix(params, np.zeros(16), 3))


def test_row_draws_follow_their_joint_matrix():
    """Every joint state on many rows, each row's readouts coupling its units: one draw of
    ``ExactDraws(tries=2, sweeps=0)`` from the ``(v, h)`` it was given, against the matrix (``h`` kept by rows
    that took no try)."""
    params = RBMParams.random(4, 2, scale=2.0, rng=5)
    runs = 300
    n = 2**6 * runs
    y = np.tile([0.9, 1.2], (n, 1))
    with coupled_model(params, y):
        step = ExactDraws(tries=2, sweeps=0, record_hidden=True)
    assert step.row_draws and step.keeps_hidden and step.other_terms.structure == "rows"
    step.setup_chain(np.random.default_rng(3), 0, 1)
    T = joint_tries_matrix(params, coupled_log_rest(binary_states(4), y[0]), 2)

    check = ht.empirical_transition_check(from_given_state(step, params), T, 4, 2, n_draws=runs)
    assert check.n_impossible == 0


def test_row_draws_read_the_shared_parameters_at_every_draw():
    """The readouts' scale is a free variable: a draw at a point with another scale (v unchanged) follows the
    tries of the new scale's posterior, not tries that keep the current state's value at the old scale."""
    params = RBMParams.random(4, 2, scale=2.0, rng=5)
    runs = 2000
    states = binary_states(4).astype(np.int64)
    n = 16 * runs
    y = np.tile([0.9, 1.2], (n, 1))
    with coupled_model(params, y, free_scale=True) as model:
        step = ExactDraws([model["v"]], tries=2, sweeps=0)
    step.setup_chain(np.random.default_rng(8), 0, 1)
    v0 = np.repeat(states, runs, axis=0)
    point = {"v": v0, "scale_log__": np.log(1.0)}
    step.step(point)  # the step now has log L at scale 1 for some state
    s = step.sampling_state
    s.visible_state = v0.astype(np.float64)  # as if it had left v0 at scale 1
    step.sampling_state = s
    out, _ = step.step({"v": v0.copy(), "scale_log__": np.log(2.0)})
    counts = np.zeros((16, 16))
    np.add.at(counts, (np.repeat(np.arange(16), runs), ht.state_index(out["v"])), 1)
    at = {c: coupled_log_rest(binary_states(4), y[0], scale=c) for c in (1.0, 2.0)}
    M = np.linalg.matrix_power(independence_matrix(log_p_rbm(params), at[2.0]), 2)
    assert ht.assert_frequencies(counts, M).n_impossible == 0
    stale = joint_tries_matrix(params, (at[1.0], at[2.0]), 2, stale=True)  # negative control, on v alone
    v_idx = ht.state_index(ht.joint_states(4, 2)[0])
    stale_v = np.zeros((16, 16))
    np.add.at(stale_v, (slice(None), v_idx), stale[np.searchsorted(v_idx, np.arange(16))])
    with pytest.raises(AssertionError, match="do not follow"):
        ht.assert_frequencies(counts, stale_v)


@pytest.mark.parametrize("readout", ["gaussian", "logistic"])
def test_pm_sample_with_coupled_readouts_matches_enumeration(readout):
    """The default for readouts that read a row's units together: each of three rows against its posterior."""
    from scipy.stats import norm

    params = RBMParams.random(6, 4, scale=2.5, rng=8)
    rng = np.random.default_rng(0)
    B = rng.normal(0.0, 1.0, (6, 3))
    y = rng.normal(0.5, 1.5, (3, 3)) if readout == "gaussian" else rng.integers(0, 2, (3, 3))
    with pm.Model() as model:
        v = RBM("v", params.W, params.vbias, params.hbias, shape=(3, 6))
        if readout == "gaussian":
            pm.Normal("y", v @ B, 0.6, observed=y)
        else:
            pm.Bernoulli("y", logit_p=2.0 * (v @ B) - 0.5, observed=y)
        assert list(assign_step_methods(model)[1]) == [ExactDraws]
        idata = pm.sample(draws=3000, random_seed=5, **SAMPLE)
    states = binary_states(6)
    draws = idata.posterior["v"].values
    for row in range(3):
        if readout == "gaussian":
            log_l = norm.logpdf(y[row], states @ B, 0.6).sum(axis=-1)
        else:
            z = 2.0 * (states @ B) - 0.5
            log_l = (y[row] * z - np.logaddexp(0.0, z)).sum(axis=-1)
        assert_visible_distribution(draws[:, :, row], log_marginal_visible(params) + log_l, label=f"row {row}")

"""A round of model-ladder tempering leaves the product of the models' distributions exactly invariant.

Two exact checks. (1) Three models of 4 visible x 2, 3, 2 hidden units under Gibbs sweeps: the visible
states of the three replicas form a Markov chain on 16**3 = 4096 configurations (Gibbs redraws h from v),
and ``p T = p`` is checked for the product of the models' visible marginals, with the swap's acceptance
taken from the kernel's own :func:`model_swap_log_ratio` at every configuration; a ratio that evaluates
both states under one rung's free energy fails the same check. (2) Three models of 2 visible x 1, 2, 1
hidden under flip-the-state, on the joint states (v, h) of every replica (8 * 16 * 8 = 1024
configurations), where the swap's fresh hidden draw matters: ``p T = p`` exactly, and the sampling code
(:func:`model_ladder_round`, every configuration at once) follows the matrix's rows.
"""

import itertools

import numpy as np
import pytest
from scipy.special import expit, logsumexp

from pymc_rbm import RBMParams
from pymc_rbm.energy import free_energy, hidden_activation
from pymc_rbm.estimators import binary_states, sample_visible_exact
from pymc_rbm.kernels import acceptance_probability, operator_rule
from pymc_rbm.kernels.model_ladder import (
    ModelLadderState,
    cross_terms,
    equal_rejection_rungs,
    init_model_ladder,
    model_ladder_round,
    model_rungs,
    model_swap_log_ratio,
    pair_rejection,
    rung_free_energies,
)
from pymc_rbm.kernels.tempering import swap_pairs
from pymc_rbm.testing import assert_frequencies, assert_stationary, joint_distribution, joint_index, joint_states
from pymc_rbm.testing import is_irreducible, transition_matrix


def models_of(n_visible, hiddens, seed=0):
    rng = np.random.default_rng(seed)
    return [RBMParams(rng.normal(0, s, (n_visible, h)), rng.normal(0, 1, n_visible), rng.normal(0, 1, h))
            for h, s in zip(hiddens, (0.5, 1.5, 3.0))]


def visible_marginal(params):
    v = binary_states(params.n_visible)
    lw = -free_energy(v, params)
    return np.exp(lw - logsumexp(lw))


def gibbs_visible_kernel(params):
    """G[v, v'] = Σ_h p(h | v) p(v' | h) over all visible states."""
    v, h = binary_states(params.n_visible), binary_states(params.n_hidden)
    ph = expit(v @ params.W + params.hbias)  # (V, H units)
    p_h_v = np.prod(np.where(h[None] == 1, ph[:, None], 1 - ph[:, None]), axis=-1)  # (V, 2^H)
    pv = expit(h @ params.W.T + params.vbias)
    p_v_h = np.prod(np.where(v[None] == 1, pv[:, None], 1 - pv[:, None]), axis=-1)  # (2^H, V)
    return p_h_v @ p_v_h


def all_configurations(models, per_rung_v, per_rung_h=None):
    """Every configuration of the replicas as one batch of ladders (replica 0 the most significant digit)."""
    sizes = [len(x) for x in per_rung_v]
    idx = np.array(list(itertools.product(*[range(s) for s in sizes]))).T  # (k, m)
    v = np.stack([per_rung_v[r][idx[r]] for r in range(len(models))]).astype(float)
    h = tuple((np.zeros((idx.shape[1], m.n_hidden)) if per_rung_h is None else per_rung_h[r][idx[r]].astype(float))
              for r, m in enumerate(models))
    a = tuple(hidden_activation(v[r], m) for r, m in enumerate(models))
    k, n = len(models), idx.shape[1]
    state = ModelLadderState(v, h, a, 0, np.zeros((k, n), dtype=np.int64), np.zeros((k, n), dtype=np.int8),
                             np.zeros((k, n), dtype=bool), 0)
    return state, idx, sizes


def one_rung_log_ratio(v, hidden_input, rungs, pairs):
    """The negative control: both states under rung a's free energy, F_a(v_a) + F_a(v_b) - F_a(v_b) - F_a(v_a)."""
    k, n = v.shape[:2]
    log_ratio = np.full((k - 1, n), np.nan)
    cross = {}
    for r in pairs:
        a, b = rungs.params[r], rungs.params[r + 1]
        a_of_b, b_of_a = hidden_activation(v[r + 1], a), hidden_activation(v[r], b)
        f_aa, f_ab = rung_free_energies(v[r], hidden_input[r], a), rung_free_energies(v[r + 1], a_of_b, a)
        log_ratio[r] = f_aa + f_ab - f_ab - f_aa
        cross[r] = (a_of_b, b_of_a)
    return log_ratio, cross


def visible_swap(p, log_ratio, idx, sizes, parity):
    """p S for the swap round on visible configurations: each attempted pair exchanges v with prob min(1, ratio)."""
    k = len(sizes)
    acc = acceptance_probability(log_ratio)  # (k - 1, m)
    out = p.copy().reshape(sizes)
    flat = p.reshape(sizes)
    for r in swap_pairs(k, parity):  # disjoint pairs: apply one after the other
        a = acc[r].reshape(sizes)
        # mass that stays, and mass that arrives from the configuration with v_r and v_{r+1} exchanged
        out = flat * (1 - a) + np.swapaxes(flat * a, r, r + 1)
        flat = out
    return out.ravel()


@pytest.fixture(scope="module")
def gibbs_ladder():
    models = models_of(4, (2, 3, 2), seed=3)
    states = binary_states(4)
    state, idx, sizes = all_configurations(models, [states] * 3)
    p = np.ones(1)
    for m in models:
        p = np.kron(p, visible_marginal(m))
    return models, state, idx, sizes, p


def sweep_visible(p, models, sizes):
    G = [gibbs_visible_kernel(m) for m in models]
    return np.einsum("abc,ax,by,cz->xyz", p.reshape(sizes), *G).ravel()


@pytest.mark.parametrize("compiled_ratio", [False, True])
@pytest.mark.parametrize("parity", [0, 1])
def test_round_leaves_the_product_of_marginals_invariant(gibbs_ladder, parity, compiled_ratio):
    models, state, idx, sizes, p = gibbs_ladder
    log_ratio = model_swap_log_ratio(state, models, compiled_ratio=compiled_ratio)
    # the kernel's ratio is each model's own free energy: check one entry by hand
    f = [free_energy(state.v[r], m) for r, m in enumerate(models)]
    fx = [free_energy(state.v[r + 1], models[r]) for r in range(2)]
    fy = [free_energy(state.v[r], models[r + 1]) for r in range(2)]
    np.testing.assert_allclose(log_ratio[0], f[0] + f[1] - fx[0] - fy[0], atol=1e-12)
    after = visible_swap(sweep_visible(p, models, sizes), log_ratio, idx, sizes, parity)
    np.testing.assert_allclose(after, p, atol=1e-12, rtol=0)
    assert np.abs(after - p).max() < 1e-12


def test_one_rung_swap_ratio_is_caught(gibbs_ladder):
    """Negative control: evaluating both states under one rung's free energy breaks invariance."""
    models, state, idx, sizes, p = gibbs_ladder
    wrong, _ = one_rung_log_ratio(state.v, state.hidden_input, model_rungs(models), [0, 1])
    after = visible_swap(sweep_visible(p, models, sizes), wrong, idx, sizes, 0)
    assert np.abs(after - p).max() > 1e-3
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(after, p, atol=1e-12, rtol=0)


# ---- the joint chain (v, h) of every replica under flip-the-state, where the fresh hidden draw matters


def joint_swap_matrix(models, state, idx, sizes, parity, log_ratio):
    """Exact matrix of a swap round on joint configurations: an accepted pair exchanges v and redraws each h."""
    k, m = len(models), idx.shape[1]
    acc = acceptance_probability(log_ratio)
    nh = [mod.n_hidden for mod in models]
    hs = [binary_states(n) for n in nh]
    # p_r(h | v) for every visible state v (rows) and hidden state (columns)
    vs = binary_states(models[0].n_visible)
    cond = []
    for mod, h in zip(models, hs):
        ph = expit(vs @ mod.W + mod.hbias)
        cond.append(np.prod(np.where(h[None] == 1, ph[:, None], 1 - ph[:, None]), axis=-1))
    vi = [idx[r] >> nh[r] for r in range(k)]  # visible index of each rung's joint state
    weights = np.array([int(np.prod(sizes[r + 1:])) for r in range(k)])
    T = np.zeros((m, m))
    pairs = swap_pairs(k, parity)
    for outcome in itertools.product([False, True], repeat=len(pairs)):
        # enumerate the hidden draws of the swapped rungs
        swapped = [r for r, s in zip(pairs, outcome) if s]
        rungs_redrawn = [x for r in swapped for x in (r, r + 1)]
        prob = np.ones(m)
        for r, s in zip(pairs, outcome):
            prob = prob * (acc[r] if s else 1 - acc[r])
        new_v = [v.copy() for v in vi]
        for r in swapped:
            new_v[r], new_v[r + 1] = vi[r + 1], vi[r]
        for hidden in itertools.product(*[range(2 ** nh[r]) for r in rungs_redrawn]):
            p2 = prob.copy()
            digits = idx.copy()
            for r, hj in zip(rungs_redrawn, hidden):
                p2 = p2 * cond[r][new_v[r], hj]
                digits[r] = (new_v[r] << nh[r]) + hj
            np.add.at(T, (np.arange(m), (digits * weights[:, None]).sum(axis=0)), p2)
    return T


@pytest.fixture(scope="module")
def flip_ladder():
    models = models_of(2, (1, 2, 1), seed=5)
    per_v, per_h = zip(*[joint_states(2, m.n_hidden) for m in models])
    state, idx, sizes = all_configurations(models, list(per_v), list(per_h))
    p = np.ones(1)
    sweeps = np.ones((1, 1))
    for m in models:
        p = np.kron(p, joint_distribution(m))
        sweeps = np.kron(sweeps, transition_matrix(m, "flip"))
    return models, state, idx, sizes, p, sweeps


@pytest.mark.parametrize("compiled_ratio", [False, True])
@pytest.mark.parametrize("parity", [0, 1])
def test_flip_round_on_joint_states_is_exactly_invariant(flip_ladder, parity, compiled_ratio):
    models, state, idx, sizes, p, sweeps = flip_ladder
    S = joint_swap_matrix(models, state, idx, sizes, parity,
                          model_swap_log_ratio(state, models, compiled_ratio=compiled_ratio))
    np.testing.assert_allclose(S.sum(axis=1), 1.0, atol=1e-13)
    T = sweeps @ S
    assert_stationary(p, T, atol=1e-12)
    if parity == 1:
        T0 = sweeps @ joint_swap_matrix(models, state, idx, sizes, 0, model_swap_log_ratio(state, models))
        assert is_irreducible(T0 @ T)
    wrong, _ = one_rung_log_ratio(state.v, state.hidden_input, model_rungs(models), swap_pairs(3, parity))
    with pytest.raises(AssertionError):
        assert_stationary(p, sweeps @ joint_swap_matrix(models, state, idx, sizes, parity, wrong), atol=1e-12)


def test_sampling_follows_the_matrix(flip_ladder):
    """The real round, run from every joint configuration at once, follows the exact matrix's rows."""
    models, state, idx, sizes, p, sweeps = flip_ladder
    rungs = model_rungs(models)
    m = idx.shape[1]
    weights = np.array([int(np.prod(sizes[r + 1:])) for r in range(3)])
    rng = np.random.default_rng(2)
    rule = operator_rule("flip")
    for parity in (0, 1):
        T = sweeps @ joint_swap_matrix(models, state, idx, sizes, parity, model_swap_log_ratio(state, models))
        counts = np.zeros((m, m))
        for compiled in (False, True):
            for _ in range(100):
                new, _ = model_ladder_round(rng, state, rungs, rule=rule, parity=parity, compiled_sweeps=compiled)
                digits = np.stack([joint_index(new.v[r], new.h[r]) for r in range(3)])
                np.add.at(counts, (np.arange(m), (digits * weights[:, None]).sum(axis=0)), 1)
        assert_frequencies(counts, T)


# ---- the compiled round (one call for every rung) against the per-rung round


@pytest.mark.parametrize("n_visible, hiddens, scale", [(4, (2, 3, 2), 1.0), (784, (500, 500, 500), 0.05)])
def test_compiled_swap_ratio_equals_full_products(n_visible, hiddens, scale):
    """The cross free energies from carried hidden inputs, by the rows of the units that differ, are the
    full products' to rounding: 1e-12 absolute on the small ladder (every configuration), relative to the
    free energies' size on MNIST-sized models."""
    if n_visible == 4:
        models = models_of(4, hiddens, seed=3)
        state = all_configurations(models, [binary_states(4)] * 3)[0]
    else:
        models = [RBMParams.random(n_visible, h, scale=scale * (r + 1), rng=r) for r, h in enumerate(hiddens)]
        state = init_model_ladder(np.random.default_rng(0), np.random.default_rng(1).random((5, n_visible)) < 0.3,
                                  models)
    plain = model_swap_log_ratio(state, models)
    fused = model_swap_log_ratio(state, models, compiled_ratio=True)
    scale_f = max(np.abs(rung_free_energies(state.v[r], state.hidden_input[r], m)).max() for r, m in enumerate(models))
    assert np.abs(fused - plain).max() <= 1e-12 * max(1.0, scale_f / 10)
    # a hand-built ModelRungs (no packed arrays) is packed on the fly
    rungs = model_rungs(models)
    np.testing.assert_array_equal(model_swap_log_ratio(state, rungs._replace(packed=None), compiled_ratio=True), fused)


@pytest.mark.parametrize("operator, sweeps, n_chains", [("flip", 1, 7), ("gibbs", 2, 3), (0.5, 1, 1)])
def test_compiled_round_draws_the_per_rung_chain(operator, sweeps, n_chains):
    """The one-call round uses the per-rung round's uniforms for the same purposes: the same chain (visible
    and hidden states, labels, log ratios to rounding) from the same generator, models of different hidden
    sizes; and the generators are left in the same state."""
    models = [RBMParams.random(12, h, scale=s, rng=h) for h, s in ((3, 0.3), (5, 0.6), (4, 0.9), (6, 1.2), (2, 1.5))]
    rungs, rule = model_rungs(models), operator_rule(operator)
    state = init_model_ladder(np.random.default_rng(0), np.zeros((n_chains, 12)), rungs)
    a = b = state
    ra, rb = np.random.default_rng(4), np.random.default_rng(4)
    n_accepted = 0
    for _ in range(60):
        a, ia = model_ladder_round(ra, a, rungs, rule=rule, sweeps=sweeps, compiled_sweeps=True)
        b, ib = model_ladder_round(rb, b, rungs, rule=rule, sweeps=sweeps, compiled_sweeps=True, log_ratio_fn=cross_terms)
        np.testing.assert_array_equal(a.v, b.v)
        np.testing.assert_array_equal(a.labels, b.labels)
        for r in range(len(models)):
            np.testing.assert_array_equal(a.h[r], b.h[r])
            np.testing.assert_allclose(a.hidden_input[r], b.hidden_input[r], atol=1e-12)
        np.testing.assert_array_equal(ia.swap.accepted, ib.swap.accepted)
        np.testing.assert_array_equal(ia.n_changed, ib.n_changed)
        np.testing.assert_allclose(ia.swap.log_ratio, ib.swap.log_ratio, atol=1e-12)
        n_accepted += int(ia.swap.accepted.sum())
    assert n_accepted > 20 and a.round_trips == b.round_trips
    assert ra.random() == rb.random()


def test_compiled_round_redraws_hidden_units_of_swapped_replicas():
    """A swapped replica's hidden units are a fresh draw from its new model given its new visible state: in two
    equal models where h_j = v_j (to 1e-21) every swap is accepted, and each rung's h follows its new v."""
    model = RBMParams(100.0 * np.eye(3), np.full(3, -50.0), np.full(3, -50.0))
    rng = np.random.default_rng(0)
    v = rng.random((2, 300, 3)) < 0.5
    state = init_model_ladder(rng, v, [model, model])
    new, info = model_ladder_round(rng, state, [model, model], rule=operator_rule("flip"), compiled_sweeps=True,
                                   parity=0)
    assert info.swap.accepted[0].all()
    np.testing.assert_array_equal(new.v[0], v[1])  # the sweeps keep v here; the swap exchanges it
    assert (v[0] != v[1]).any(axis=1).mean() > 0.5
    for r in range(2):
        np.testing.assert_array_equal(new.h[r], new.v[r])
        np.testing.assert_allclose(new.hidden_input[r], hidden_activation(new.v[r], model), atol=1e-12)


# ---- bookkeeping, round trips and the choice of rungs


def test_round_bookkeeping_and_round_trips():
    models = models_of(5, (2, 3, 4), seed=1)
    rng = np.random.default_rng(0)
    state = init_model_ladder(rng, np.zeros((50, 5)), models)
    v0 = state.v.copy()
    new, info = model_ladder_round(rng, state, models)
    np.testing.assert_array_equal(state.v, v0)  # the input is not modified
    assert new.n_rounds == 1 and info.swap.attempted.tolist() == [True, False]
    assert np.isnan(info.swap_accept[1]).all() and np.all((info.swap_accept[0] >= 0) & (info.swap_accept[0] <= 1))
    # the labels are a permutation of the rungs in every ladder, and follow the visible states
    for _ in range(200):
        new, info = model_ladder_round(rng, new, models)
        assert (np.sort(new.labels, axis=0) == np.arange(3)[:, None]).all()
        # the carried hidden input is each rung's own hbias + v W
        for r, mod in enumerate(models):
            np.testing.assert_allclose(new.hidden_input[r], hidden_activation(new.v[r], mod), atol=1e-9)
    assert new.round_trips > 0  # weak models: replicas travel the ladder


def test_models_are_validated():
    a = RBMParams.random(4, 2, rng=0)
    with pytest.raises(ValueError, match="at least two"):
        model_rungs([a])
    with pytest.raises(ValueError, match="share their visible units"):
        model_rungs([a, RBMParams.random(5, 2, rng=0)])
    with pytest.raises(TypeError, match="not an RBMParams"):
        model_rungs([a, "b"])


def test_pair_rejection_and_equal_rejection_rungs():
    models = models_of(4, (2, 2, 2), seed=2)
    rng = np.random.default_rng(0)
    samples = [sample_visible_exact(m, 1000, rng=rng) for m in models]
    rej = pair_rejection(models, samples)
    assert rej.shape == (3, 3) and np.allclose(rej, rej.T) and np.all(np.diag(rej) == 0)
    # against the exact expected rejection of the pair (0, 2)
    v = binary_states(4)
    p0, p2 = visible_marginal(models[0]), visible_marginal(models[2])
    f0, f2 = free_energy(v, models[0]), free_energy(v, models[2])
    lr = f0[:, None] + f2[None, :] - f0[None, :] - f2[:, None]  # x ~ p0 rows, y ~ p2 columns
    exact = float((p0[:, None] * p2[None, :] * (1 - np.exp(np.minimum(lr, 0)))).sum())
    assert abs(rej[0, 2] - exact) < 0.03
    assert equal_rejection_rungs(rej, 3).tolist() == [0, 1, 2]
    assert equal_rejection_rungs(rej, 2).tolist() == [0, 2]
    with pytest.raises(ValueError, match="more than"):
        equal_rejection_rungs(rej, 4)

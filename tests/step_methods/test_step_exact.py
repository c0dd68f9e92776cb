"""The step methods are exact: transition matrices over joint (v, h) states of tiny RBMs.

Correction: for an extra factor ``L(v)``, the matrix of one corrected sweep
``K = K_h K_v`` (hidden layer update, then the visible layer update proposed
given ``h`` and accepted with ``min(1, L(v') / L(v))``) must leave
``π(v, h) ∝ p_RBM(v, h) L(v)`` invariant exactly.

Hidden refresh: another step that moves the RBM's weights or its visible
units, followed by this step (which redraws ``h ~ p(h | v)`` when the point
changed), must leave the joint distribution invariant; without the refresh
it does not.

In both cases the step methods themselves, run through ``step.step`` from
every joint state many times, must follow the rows of the matrix, also when
v or the variables in L moved since the step's last draw (L re-evaluated).
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytest

from pymc_rbm import RBM, RBMParams
from pymc_rbm import testing as ht
from pymc_rbm.energy import hidden_activation, visible_activation
from pymc_rbm.kernels import RBMState
from pymc_rbm.step_methods import BlockGibbs, FlipTheState

NV, NH = 3, 2
C = np.array([1.5, -2.0, 0.7])  # log L(v) = C·v + D v_0 v_1 - E v_1 v_2
D, E = 2.5, 1.2


def log_rest(v):
    v = np.asarray(v, dtype=np.float64)
    return v @ C + D * v[..., 0] * v[..., 1] - E * v[..., 1] * v[..., 2]


@pytest.fixture(scope="module")
def params():
    return RBMParams.random(NV, NH, scale=2.0, rng=11)


def corrected_matrix(params, kernel):
    """``K_h K_v`` with the visible moves accepted by ``min(1, L(v') / L(v))``."""
    t_h, t_v = ht.layer_matrices(params, kernel)
    v, _ = ht.joint_states(NV, NH)
    lr = log_rest(v)
    accept = np.exp(np.minimum(lr[None, :] - lr[:, None], 0.0))
    t_corr = t_v * accept
    np.fill_diagonal(t_corr, 0.0)
    np.fill_diagonal(t_corr, 1.0 - t_corr.sum(axis=1))
    return t_h @ t_corr


def target(params):
    v, _ = ht.joint_states(NV, NH)
    p = ht.joint_distribution(params) * np.exp(log_rest(v))
    return p / p.sum()


KERNELS = [("flip", FlipTheState, {}), ("gibbs", BlockGibbs, {}), (0.5, FlipTheState, {"alpha": 0.5})]


@pytest.mark.parametrize("kernel", [k for k, _, _ in KERNELS], ids=str)
def test_corrected_sweep_leaves_the_augmented_target_invariant(params, kernel):
    pi = target(params)
    K = corrected_matrix(params, kernel)
    ht.assert_converges(pi, K)
    # without the correction the RBM's own sweep does not sample the full conditional
    with pytest.raises(AssertionError, match="not stationary"):
        ht.assert_stationary(pi, ht.transition_matrix(params, kernel))


def test_correcting_the_composed_flip_sweep_would_be_wrong(params):
    """Metropolis-correcting ``v -> v'`` of the whole sweep T_h T_v (not reversible) is not exact."""
    pi = target(params)
    T = ht.transition_matrix(params, "flip")
    v, _ = ht.joint_states(NV, NH)
    lr = log_rest(v)
    wrong = T * np.exp(np.minimum(lr[None, :] - lr[:, None], 0.0))
    np.fill_diagonal(wrong, 0.0)
    np.fill_diagonal(wrong, 1.0 - wrong.sum(axis=1))
    with pytest.raises(AssertionError, match="not stationary"):
        ht.assert_stationary(pi, wrong)


N_DRAWS = 600  # runs from each of the 32 joint states


@pytest.fixture(scope="module", params=["potential", "row terms"])
def batch_model(params, request):
    """One RBM variable holding every (start state, run) as a row, and L(v): a Potential of the whole value
    (the rows corrected one after another), or one term per row (the rows corrected at once)."""
    n = 2 ** (NV + NH) * N_DRAWS
    with pm.Model() as model:
        v = RBM("v", params.W, params.vbias, params.hbias, shape=(n, NV))
        rows = v @ C + D * v[:, 0] * v[:, 1] - E * v[:, 1] * v[:, 2]
        if request.param == "potential":  # a cumulative sum: not split by rows, so L takes the general path
            pm.Potential("rest", pm.math.cumsum(rows)[-1])
        else:
            pm.CustomDist("rest", rows, logp=lambda value, mu: mu, observed=np.zeros(n))
    return model


def recorded_hidden(point, stats):
    """The hidden states a draw recorded, one row per chain (a batch records one flat vector)."""
    return stats[0]["hidden"].reshape(point["v"].shape[0], -1)


CASES = [(*k, False) for k in KERNELS] + [(*k, True) for k in KERNELS[:2]]


@pytest.mark.parametrize(
    "kernel, cls, options, moved", CASES, ids=[f"{k}{'-v_moved' if m else ''}" for k, _, _, m in CASES]
)
def test_step_follows_the_corrected_matrix(params, batch_model, kernel, cls, options, moved):
    """Run the step method itself (``step.step``) once from every joint state, many times each.

    ``moved``: before the timed call the step made a draw from elsewhere, so
    the incoming v is not the one it left (as when another step moved v):
    it must redraw h and re-evaluate L, and then follow ``R K`` with ``R``
    the fresh draw of h.
    """
    with batch_model:
        step = cls(record_hidden=True, **options)
    assert step.corrected and step.rest_terms == ["rest"]
    assert step._row_terms == (step.other_terms.structure == "rows")
    step.setup_chain(np.random.default_rng(hash((str(kernel), moved)) % 2**32), 0, 1)

    def start(v, h):
        s = step.sampling_state  # start the step from (v, h), as when resuming
        s.visible_state, s.hidden_state = v, h
        s.hidden_input, s.visible_input = hidden_activation(v, params), visible_activation(h, params)
        step.sampling_state = s

    def kernel_fn(rng, state):
        v, h = state.v.astype(np.float64), state.h.astype(np.float64)
        if moved:
            start(1.0 - v, h)
            step.step({"v": (1 - v).astype(np.int64)})  # the step caches L of wherever it went
        else:
            start(v, h)
        point, stats = step.step({"v": v.astype(np.int64)})
        assert stats[0]["refreshed"] == moved
        return RBMState(point["v"], recorded_hidden(point, stats))

    K = corrected_matrix(params, kernel)
    if moved:
        K = refresh_matrix(params) @ K
    check = ht.empirical_transition_check(kernel_fn, K, NV, NH, n_draws=N_DRAWS)
    assert check.n_impossible == 0


# ------------------------------------------------------------ hidden refresh
def refresh_matrix(params):
    """``R[(v, h), (v, h')] = p(h' | v)``: a fresh hidden state (Gibbs' T_h ignores h)."""
    return ht.layer_matrices(params, "gibbs")[0]


def weight_move_composite(p0, refresh: bool):
    """b ~ Bernoulli(1/2), W = (2b - 1) W0; a Metropolis flip of b (h untouched), then FlipTheState.

    States ``(b, v, h)`` with index ``b * N + joint_index(v, h)``. The step
    refreshes h when b changed since its last call (exactly when the
    Metropolis move was accepted).
    """
    n = 2 ** (NV + NH)
    ps = [RBMParams((2.0 * b - 1.0) * p0.W, p0.vbias, p0.hbias) for b in (0, 1)]
    v, _ = ht.joint_states(NV, NH)
    log_pv = [np.log(ht.joint_distribution(p).reshape(2**NV, -1).sum(axis=1))[ht.state_index(v)] for p in ps]
    steps = [ht.transition_matrix(p, "flip") for p in ps]
    moved = [refresh_matrix(p) @ k if refresh else k for p, k in zip(ps, steps)]
    C = np.zeros((2 * n, 2 * n))
    for b in (0, 1):
        accept = np.exp(np.minimum(log_pv[1 - b] - log_pv[b], 0.0))  # per joint state, depends on v only
        rows = slice(b * n, (b + 1) * n)
        C[rows, b * n : (b + 1) * n] = (1.0 - accept)[:, None] * steps[b]
        C[rows, (1 - b) * n : (2 - b) * n] = accept[:, None] * moved[1 - b]
    pi = 0.5 * np.concatenate([ht.joint_distribution(p) for p in ps])
    return pi, C


def visible_move_composite(params, refresh: bool):
    """A single-unit Metropolis move of v under p(v) (h untouched), then FlipTheState."""
    n = 2 ** (NV + NH)
    v, h = ht.joint_states(NV, NH)
    log_pv = np.log(ht.joint_distribution(params).reshape(2**NV, -1).sum(axis=1))[ht.state_index(v)]
    M = np.zeros((n, n))
    for i in range(NV):
        w = v.copy()
        w[:, i] = 1 - w[:, i]
        j = ht.joint_index(w, h)
        a = np.exp(np.minimum(log_pv[j] - log_pv, 0.0)) / NV
        M[np.arange(n), j] += a
        M[np.arange(n), np.arange(n)] += 1.0 / NV - a
    K = ht.transition_matrix(params, "flip")
    same = ht.state_index(v)[:, None] == ht.state_index(v)[None, :]  # M's move kept v
    after = K if not refresh else refresh_matrix(params) @ K
    C = (M * same) @ K + (M * ~same) @ after
    return ht.joint_distribution(params), C


def test_refresh_after_a_weight_move_is_exact(params):
    pi, C = weight_move_composite(params, refresh=True)
    ht.assert_converges(pi, C)
    pi, C_stale = weight_move_composite(params, refresh=False)
    with pytest.raises(AssertionError, match="not stationary"):
        ht.assert_stationary(pi, C_stale)


def test_refresh_after_a_visible_move_is_exact(params):
    pi, C = visible_move_composite(params, refresh=True)
    ht.assert_converges(pi, C)
    pi, C_stale = visible_move_composite(params, refresh=False)
    with pytest.raises(AssertionError, match="not stationary"):
        ht.assert_stationary(pi, C_stale)


@pytest.fixture(scope="module")
def signed_model(params):
    n = 2 ** (NV + NH) * N_DRAWS
    with pm.Model() as model:
        b = pm.Bernoulli("b", 0.5)
        RBM("v", (2.0 * b - 1.0) * params.W, params.vbias, params.hbias, shape=(n, NV), log_partition="exact")
    return model


def test_step_refreshes_exactly_when_the_point_changed(params, signed_model):
    """From cached (b, v, h), the step follows K when nothing changed, R K when b or v did."""
    with signed_model:
        step = FlipTheState(record_hidden=True)
    step.setup_chain(np.random.default_rng(12), 0, 1)
    ps = [RBMParams((2.0 * b - 1.0) * params.W, params.vbias, params.hbias) for b in (0, 1)]

    def run(b_cached, b_point, move_v):
        def kernel_fn(rng, state):
            v, h = state.v.astype(np.float64), state.h.astype(np.float64)
            left = 1.0 - v if move_v else v  # what the step left; the point holds v
            s = step.sampling_state
            s.param_inputs = [np.array(b_cached)]
            s.visible_state, s.hidden_state = left, h
            s.hidden_input = hidden_activation(left, ps[b_cached])
            s.visible_input = visible_activation(h, ps[b_cached])
            step.sampling_state = s
            point, stats = step.step({"b": np.array(b_point), "v": v.astype(np.int64)})
            assert stats[0]["refreshed"] == (b_cached != b_point or move_v)
            return RBMState(point["v"], recorded_hidden(point, stats))

        return kernel_fn

    for b_cached, b_point, move_v in [(0, 0, False), (0, 1, False), (1, 1, True)]:
        p = ps[b_point]
        K = ht.transition_matrix(p, "flip")
        expected = K if (b_cached == b_point and not move_v) else refresh_matrix(p) @ K
        ht.empirical_transition_check(run(b_cached, b_point, move_v), expected, NV, NH, n_draws=N_DRAWS)


def test_step_reevaluates_L_when_the_other_terms_move(params):
    """L depends on another variable s that moved between two draws (v did not): ratios use L at the new s."""
    n = 2 ** (NV + NH) * N_DRAWS
    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias, shape=(n, NV))
        s = pm.Normal("s")
        pm.Potential("rest", (s * (v @ C) + D * v[:, 0] * v[:, 1] - E * v[:, 1] * v[:, 2]).sum())
        step = FlipTheState(record_hidden=True)
    assert step.corrected
    step.setup_chain(np.random.default_rng(13), 0, 1)
    v0, h0 = ht.joint_states(NV, NH)
    start = np.repeat(np.arange(v0.shape[0]), N_DRAWS)
    point, stats = step.step({"v": v0[start].astype(np.int64), "s": np.array(-1.0)})  # caches L at s = -1
    v1, h1 = point["v"], recorded_hidden(point, stats)
    point, stats = step.step({"v": v1, "s": np.array(1.0)})  # s moved, v did not
    assert not stats[0]["refreshed"]
    i, j = ht.joint_index(v1, h1), ht.joint_index(point["v"], recorded_hidden(point, stats))
    counts = np.bincount(i * v0.shape[0] + j, minlength=v0.shape[0] ** 2).reshape(v0.shape[0], -1)
    ht.assert_frequencies(counts, corrected_matrix(params, "flip"))  # L at s = 1 is log_rest


# ------------------------------------------------------------ per-unit evidence
Y_UNITS = np.array([0.9, -0.6, 0.2])


@pytest.mark.parametrize("kernel, cls, options", KERNELS, ids=[str(k) for k, _, _ in KERNELS])
def test_per_unit_evidence_is_swept_exactly_as_visible_logits(params, kernel, cls, options):
    """Readouts of every unit: each sweep is the operator's update of the RBM whose visible biases carry the
    evidence, with nothing to correct; against its exact matrix, and the RBM's own matrix must fail."""
    n_draws = 400
    n = 2 ** (NV + NH) * n_draws
    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias, shape=(n, NV))
        pm.Normal("y", 1.3 * v - 0.2, 0.8, observed=np.tile(Y_UNITS, (n, 1)))
        step = cls(record_hidden=True, **options)
    assert step.evidence_draws
    step.setup_chain(np.random.default_rng(17), 0, 1)
    evidence = ((Y_UNITS + 0.2) ** 2 - (Y_UNITS + 0.2 - 1.3) ** 2) / (2 * 0.8**2)
    tilted = RBMParams(params.W, params.vbias + evidence, params.hbias)

    def kernel_fn(rng, state):
        v, h = state.v.astype(np.float64), state.h.astype(np.float64)
        s = step.sampling_state
        s.visible_state, s.hidden_state = v, h
        s.hidden_input, s.visible_input = hidden_activation(v, params), visible_activation(h, params)
        step.sampling_state = s
        point, stats = step.step({"v": v.astype(np.int64)})
        assert stats[0]["accept"].min() == 1.0
        assert stats[0]["n_hidden_changed"].max() > 0  # counted against the start, not the changed state
        return RBMState(point["v"], recorded_hidden(point, stats))

    K = ht.transition_matrix(tilted, kernel)
    check = ht.empirical_transition_check(kernel_fn, K, NV, NH, n_draws=n_draws)
    assert check.n_impossible == 0
    pi = ht.joint_distribution(tilted)
    ht.assert_stationary(pi, K)
    with pytest.raises(AssertionError, match="not stationary"):
        ht.assert_stationary(pi, ht.transition_matrix(params, kernel))

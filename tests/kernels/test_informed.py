"""The tilted (likelihood-informed) visible move is exact: transition matrices over joint (v, h) states.

``K = K_h K_v``: the RBM's hidden update given ``v``, then a visible proposal
from the conditional tilted by the exact single-flip changes of ``log L``,
accepted with :func:`~pymc_rbm.kernels.informed.tilted_log_ratio`. It must
leave ``π(v, h) ∝ p_RBM(v, h) L(v)`` invariant; accepting the tilted
proposal without its correction (or with the likelihood ratio alone) must
fail the same test. With a per-unit ``L`` every proposal is accepted.
"""

import numpy as np
import pytest

from pymc_rbm import RBMParams
from pymc_rbm import testing as ht
from pymc_rbm.enumeration import binary_states
from pymc_rbm.kernels.informed import flip_tilt, propose_tilted, tilted_log_ratio
from pymc_rbm.step_methods.tempered import INFORMED_MAX_ALPHA

NV, NH = 3, 2
C = np.array([1.5, -2.0, 0.7])
D, E = 2.5, 1.2


def coupled(v):
    """``log L(v) = C·v + D v_0 v_1 - E v_1 v_2``: not a sum of per-unit terms."""
    v = np.asarray(v, dtype=np.float64)
    return v @ C + D * v[..., 0] * v[..., 1] - E * v[..., 1] * v[..., 2]


def per_unit(v):
    return np.asarray(v, dtype=np.float64) @ C


@pytest.fixture(scope="module")
def params():
    return RBMParams.random(NV, NH, scale=2.0, rng=11)


def exact_tilt(v, log_rest):
    flipped = np.stack([np.where(np.arange(NV) == i, 1 - v, v) for i in range(NV)], axis=1)
    return flip_tilt(v, log_rest(v), log_rest(flipped))


def target(params, log_rest):
    v, _ = ht.joint_states(NV, NH)
    p = ht.joint_distribution(params) * np.exp(log_rest(v))
    return p / p.sum()


KERNELS = ["gibbs", 0.5, INFORMED_MAX_ALPHA]


def test_pure_flip_the_state_proposals_can_make_the_chain_reducible(params):
    """Why the step caps the flip weight of informed proposals: alpha = 1 is exact but not irreducible here."""
    t_h, _ = ht.layer_matrices(params, "flip")
    T = t_h @ ht.informed_visible_matrix(params, coupled, "flip")
    ht.assert_stationary(target(params, coupled), T)
    assert not ht.is_irreducible(T)


@pytest.mark.parametrize("kernel", KERNELS, ids=str)
def test_tilted_move_leaves_the_full_target_invariant(params, kernel):
    pi = target(params, coupled)
    t_h, _ = ht.layer_matrices(params, kernel)
    ht.assert_converges(pi, t_h @ ht.informed_visible_matrix(params, coupled, kernel))


@pytest.mark.parametrize("kernel", KERNELS, ids=str)
@pytest.mark.parametrize("correction", ["none", "likelihood"])
def test_tilted_move_without_its_correction_is_caught(params, kernel, correction):
    pi = target(params, coupled)
    t_h, _ = ht.layer_matrices(params, kernel)
    with pytest.raises(AssertionError, match="not stationary"):
        ht.assert_stationary(pi, t_h @ ht.informed_visible_matrix(params, coupled, kernel, correction=correction))


def test_a_ratio_for_the_wrong_operator_is_caught(params):
    """Flip-the-state's tilted proposal accepted with Gibbs' ratio: the likely slip."""
    pi = target(params, coupled)
    t_h, _ = ht.layer_matrices(params, "flip")
    v, h = ht.joint_states(NV, NH)
    n = v.shape[0]
    logits = params.vbias + h @ params.W.T
    forward = exact_tilt(v, coupled)
    from pymc_rbm.kernels.flip import flip_probability, stay_probability

    T = np.zeros((n, n))
    for v_new in binary_states(NV):
        vn = np.broadcast_to(v_new, v.shape)
        changed = vn != v
        q = np.where(changed, flip_probability(v, logits + forward, 1.0), stay_probability(v, logits + forward, 1.0))
        log_r = tilted_log_ratio(v, vn, logits, forward, exact_tilt(vn, coupled), coupled(v), coupled(vn), alpha=0.0)
        moved = changed.any(axis=1)
        T[np.arange(n), ht.joint_index(vn, h)] += np.where(moved, q.prod(axis=1) * np.exp(np.minimum(log_r, 0)), 0)
    T[np.arange(n), np.arange(n)] += 1.0 - T.sum(axis=1)
    with pytest.raises(AssertionError, match="not stationary"):
        ht.assert_stationary(pi, t_h @ T)


@pytest.mark.parametrize("kernel", KERNELS, ids=str)
def test_per_unit_evidence_is_always_accepted(params, kernel):
    """``L`` a sum of per-unit terms: the tilted operator is reversible for the exact conditional, ratio 1."""
    from pymc_rbm.kernels.informed import log_move_probability
    from pymc_rbm.kernels.operators import operator_alpha

    alpha = operator_alpha(kernel)
    v, h = ht.joint_states(NV, NH)
    logits = params.vbias + h @ params.W.T
    tilt = exact_tilt(v, per_unit)
    np.testing.assert_allclose(tilt, np.broadcast_to(C, tilt.shape))
    for v_new in binary_states(NV):
        vn = np.broadcast_to(v_new, v.shape)
        possible = np.isfinite(log_move_probability(v, vn, logits + tilt, alpha))
        log_r = tilted_log_ratio(v, vn, logits, tilt, exact_tilt(vn, per_unit), per_unit(v), per_unit(vn), alpha)
        np.testing.assert_allclose(log_r[possible], 0.0, atol=1e-12)
    # and the uncorrected tilted move is then exact too
    ht.assert_stationary(target(params, per_unit),
                         ht.informed_visible_matrix(params, per_unit, kernel, correction="none"))


def test_proposal_frequencies_follow_the_tilted_conditional():
    rng = np.random.default_rng(3)
    logits = np.array([[0.3, -1.0, 2.0]])
    tilt = np.array([[1.0, 0.5, -3.0]])
    draws = np.concatenate([propose_tilted(rng, np.zeros((1, 3)), logits, tilt) for _ in range(20000)])
    p_on = 1.0 / (1.0 + np.exp(-(logits + tilt)))[0]
    counts = np.bincount(ht.state_index(draws), minlength=8)
    probs = np.array([np.prod(np.where(s > 0, p_on, 1 - p_on)) for s in binary_states(3)])
    ht.assert_frequencies(counts[None], probs[None])


def test_tilt_edge_cases():
    v = np.array([[0.0, 1.0]])
    tilt = flip_tilt(v, np.array([-np.inf]), np.array([[-np.inf, 0.0]]))
    assert tilt[0, 0] == 0.0 and tilt[0, 1] == -np.inf  # unit 1 on leaves the support... switched off it enters
    assert tilted_log_ratio(v, v, np.zeros((1, 2)), np.zeros((1, 2)), np.zeros((1, 2)),
                            np.array([0.0]), np.array([-np.inf]))[0] == -np.inf


# ----------------------------------------------------------------------------- scans through linear predictors
B_READ = np.array([[1.3, -0.4], [0.8, 1.1], [-1.5, 0.6]])  # (NV, 2): two readouts of each row
Y_READ = np.array([0.9, -0.2])


def readout(eta):
    """``log L_k = Σ_j log N(y_j | η_kj, 0.5)``: couples a row's units through ``η = v @ B``."""
    return -((Y_READ - np.asarray(eta)) ** 2).sum(axis=-1) / (2 * 0.25)


def through_predictors(v):
    return readout(np.asarray(v, dtype=np.float64) @ B_READ)


@pytest.mark.parametrize("kernel", ["gibbs", 0.5, "flip"], ids=str)
def test_a_predictor_scan_leaves_the_full_target_invariant(params, kernel):
    pi = target(params, through_predictors)
    t_h, _ = ht.layer_matrices(params, kernel)
    ht.assert_converges(pi, t_h @ ht.scan_visible_matrix(params, through_predictors, kernel))


@pytest.mark.parametrize("correction", ["none", "sign"])
def test_a_scan_that_forgets_L_or_its_sign_is_caught(params, correction):
    pi = target(params, through_predictors)
    t_h, _ = ht.layer_matrices(params, "flip")
    with pytest.raises(AssertionError, match="not stationary"):
        ht.assert_stationary(pi, t_h @ ht.scan_visible_matrix(params, through_predictors, "flip",
                                                              correction=correction))


@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_predictor_scan_follows_the_scan_matrix(params, alpha):
    """The kernel itself, from every (v, h) state many times, against the rows of the scan's matrix."""
    from pymc_rbm.kernels import RBMState
    from pymc_rbm.kernels.informed import predictor_scan

    def kernel_fn(rng, state):
        logits = params.vbias + state.h @ params.W.T
        etas = [state.v @ B_READ]
        v, log_rest = predictor_scan(rng, state.v, logits, [B_READ], etas, readout(etas[0]), readout_of, alpha)
        np.testing.assert_allclose(log_rest, through_predictors(v), atol=1e-12)  # the predictors followed the flips
        return RBMState(v, state.h)

    def readout_of(etas):
        return readout(etas[0])

    T = ht.scan_visible_matrix(params, through_predictors, alpha)
    ht.empirical_transition_check(kernel_fn, T, NV, NH, n_draws=4000)

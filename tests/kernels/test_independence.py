"""Independence tries from an enumerated layer under per-unit evidence: the exact matrix, and the kernel against it.

One try from state ``v`` of a row with evidence ``δ`` moves to ``v'`` with
probability ``p_RBM(v') min(1, exp(δ·(v' - v)))``. That matrix must leave
``p_RBM(v) exp(δ·v)`` invariant (and a try that forgets the current state's
evidence must not); the compiled kernel, run once from every state on many
rows, must follow it, with the visible and with the hidden layer enumerated.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp

from pymc_rbm import RBMParams
from pymc_rbm import testing as ht
from pymc_rbm.estimators import binary_states, log_marginal_visible
from pymc_rbm.enumeration import enumerated_log_weights
from pymc_rbm.kernels import RBMState
from pymc_rbm.kernels.independence import EnumeratedLayer, independence_tries

DELTA = np.array([1.3, -2.1, 0.4, 0.9])


def try_matrix(log_p, log_rest, *, forget_current=False):
    """``T[v, v'] = p(v') min(1, L(v') / L(v))`` off the diagonal (``L(v)`` taken as 1 when ``forget_current``)."""
    p = np.exp(log_p - logsumexp(log_p))
    current = np.zeros_like(log_rest) if forget_current else log_rest
    T = p[None, :] * np.exp(np.minimum(log_rest[None, :] - current[:, None], 0.0))
    np.fill_diagonal(T, 0.0)
    np.fill_diagonal(T, 1.0 - T.sum(axis=1))
    return T


@pytest.fixture(scope="module")
def params():
    return RBMParams.random(4, 3, scale=2.0, rng=7)


def test_a_try_leaves_the_tilted_rbm_invariant(params):
    states = binary_states(4)
    log_p, log_rest = log_marginal_visible(params), states @ DELTA
    pi = np.exp(log_p + log_rest - logsumexp(log_p + log_rest))
    ht.assert_converges(pi, try_matrix(log_p, log_rest))
    with pytest.raises(AssertionError, match="not stationary"):  # negative control
        ht.assert_stationary(pi, try_matrix(log_p, log_rest, forget_current=True))


def table_of(params, layer):
    if layer == "visible":
        return EnumeratedLayer.from_log_weights(log_marginal_visible(params), "visible", params.W, params.vbias)
    log_w, _, enumerated = enumerated_log_weights(params)
    assert enumerated == "hidden"
    return EnumeratedLayer.from_log_weights(log_w, "hidden", params.W, params.vbias)


@pytest.mark.parametrize("layer", ["visible", "hidden"])
@pytest.mark.parametrize("n_tries", [1, 3])
def test_the_kernel_follows_the_matrix(params, layer, n_tries):
    states = binary_states(4)
    T = np.linalg.matrix_power(try_matrix(log_marginal_visible(params), states @ DELTA), n_tries)
    n_runs = 4000
    v = np.repeat(states, n_runs, axis=0)
    accepted, accept_sum = independence_tries(np.random.default_rng(1), v, DELTA, table_of(params, layer), n_tries)
    counts = np.zeros((16, 16))
    np.add.at(counts, (np.repeat(np.arange(16), n_runs), ht.state_index(v)), 1)
    check = ht.assert_frequencies(counts, T)
    assert check.n_impossible == 0
    assert 0 < accepted.sum() <= n_tries * v.shape[0]
    assert abs(accepted.sum() - accept_sum.sum()) < 5 * np.sqrt(accept_sum.sum())  # the probabilities summed
    # negative control: the same counts against the tries that forget the current state's evidence
    wrong = try_matrix(log_marginal_visible(params), states @ DELTA, forget_current=True)
    with pytest.raises(AssertionError, match="do not follow"):
        ht.assert_frequencies(counts, np.linalg.matrix_power(wrong, n_tries))


def test_the_draws_depend_on_the_seed_only(params):
    table = table_of(params, "visible")
    runs = []
    for seed in (3, 3, 4):
        v = np.zeros((50, 4))
        independence_tries(np.random.default_rng(seed), v, DELTA, table, 5)
        runs.append(v)
    np.testing.assert_array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[0], runs[2])


def test_ruled_out_values_are_never_proposed_into(params):
    """A unit known to be 1 (evidence 1e300 as a stand-in for +inf) stays 1."""
    v = np.ones((200, 4))
    delta = np.array([1e300, 0.0, 0.0, 0.0])
    independence_tries(np.random.default_rng(0), v, delta, table_of(params, "visible"), 20)
    assert (v[:, 0] == 1.0).all() and not (v[:, 1:] == 1.0).all()


def test_bad_input(params):
    table = table_of(params, "visible")
    with pytest.raises(TypeError, match="C-contiguous 2-D float64"):
        independence_tries(np.random.default_rng(0), np.zeros((3, 4), dtype=np.int64), DELTA, table, 1)
    with pytest.raises(ValueError, match="layer must be"):
        EnumeratedLayer.from_log_weights(np.zeros(4), "both", params.W, params.vbias)


def test_the_hidden_refresh_follows_the_joint_matrix(params):
    """With ``h``, a row that took its try draws ``h ~ p(h | v')``; a row that did not keeps ``(v, h)``."""
    from scipy.special import expit

    states, h_states = binary_states(4), binary_states(3)
    log_p, log_rest = log_marginal_visible(params), states @ DELTA
    take = np.exp(log_p - logsumexp(log_p))[None, :] * np.exp(np.minimum(log_rest[None, :] - log_rest[:, None], 0))
    p_on = expit(params.hbias + states @ params.W)
    p_h = np.prod(np.where(h_states[None] == 1, p_on[:, None], 1 - p_on[:, None]), axis=-1)  # [v, h]
    v, h = ht.joint_states(4, 3)
    iv, ih = ht.state_index(v), ht.state_index(h)
    T = take[iv][:, iv] * p_h[iv, ih][None, :]
    T[np.arange(iv.size), np.arange(iv.size)] += 1.0 - take[iv].sum(axis=1)
    pi = ht.joint_distribution(RBMParams(params.W, params.vbias + DELTA, params.hbias))
    ht.assert_stationary(pi, T)
    table = table_of(params, "visible")

    def kernel(rng, state):
        v, h = state.v.astype(np.float64), state.h.astype(np.float64)
        independence_tries(rng, v, DELTA, table, 1, h=h, W=params.W, hbias=params.hbias)
        return RBMState(v, h)

    assert ht.empirical_transition_check(kernel, T, 4, 3, n_draws=400).n_impossible == 0


@pytest.mark.parametrize("n", [1, 2, 16, 4096])
def test_the_alias_table_holds_the_distribution(n):
    """Entry j is drawn with probability prob[j] / n directly and (1 - prob[j]) / n through its alias."""
    from pymc_rbm.kernels.independence import _alias_table

    p = np.random.default_rng(n).random(n) ** 3
    p /= p.sum()
    prob, alias = _alias_table(p.copy())
    implied = prob / n
    np.add.at(implied, alias, (1.0 - prob) / n)
    np.testing.assert_allclose(implied, p, rtol=0, atol=1e-15)
    assert ((prob >= 0) & (prob <= 1)).all()


@pytest.mark.parametrize("layer", ["visible", "hidden"])
def test_exact_draws_follow_the_joint_distribution(params, layer):
    """``exact_draws``: (v, h) from the table and p(h | v), every joint state at its probability."""
    from pymc_rbm.kernels.independence import exact_draws

    v, h = exact_draws(np.random.default_rng(2), table_of(params, layer), 60000, params.W, params.hbias)
    counts = np.bincount(ht.joint_index(v, h), minlength=2**7)
    check = ht.assert_frequencies(counts[None], ht.joint_distribution(params)[None])
    assert check.n_impossible == 0
    # negative control: the same draws against the joint distribution of another RBM
    other = RBMParams(params.W, params.vbias + 0.5, params.hbias)
    with pytest.raises(AssertionError, match="do not follow"):
        ht.assert_frequencies(counts[None], ht.joint_distribution(other)[None])


# ----------------------------------------------------------------------------- any per-row likelihood
def coupled_log_rest(states):
    """A row term that reads the units together: ``log L(v) = -(v·b - 1.5)² + 2 v_0 v_3``, any leading axes."""
    b = np.array([1.2, -0.7, 0.9, 0.5])
    s = np.asarray(states, dtype=np.float64)
    return -((s @ b - 1.5) ** 2) + 2.0 * s[..., 0] * s[..., 3]


@pytest.mark.parametrize("layer", ["visible", "hidden"])
def test_table_proposals_follow_the_marginal(params, layer):
    from pymc_rbm.kernels.independence import table_proposals

    draws = table_proposals(np.random.default_rng(5), table_of(params, layer), 300, 200, np.int64)
    assert draws.shape == (300, 200, 4) and draws.dtype == np.int64
    counts = np.bincount(ht.state_index(draws.reshape(-1, 4)), minlength=16)
    log_p = log_marginal_visible(params)
    ht.assert_frequencies(counts[None], np.exp(log_p - logsumexp(log_p))[None])
    with pytest.raises(AssertionError, match="do not follow"):  # negative control: a uniform marginal
        ht.assert_frequencies(counts[None], np.full((1, 16), 1 / 16))


@pytest.mark.parametrize("layer", ["visible", "hidden"])
@pytest.mark.parametrize("n_tries, max_entries", [(1, None), (5, None), (5, 2 * 16 * 4)],
                         ids=["one-try", "five-tries", "five-tries-in-chunks-of-two"])
def test_row_tries_follow_the_matrix_of_any_row_term(params, layer, n_tries, max_entries):
    """Tries decided from precomputed values of a coupled row term: the matrix of ``n_tries`` independence
    tries, from every state on many rows, whether the tries are evaluated at once or chunk after chunk; each
    row also reports the value of its final state."""
    from pymc_rbm.kernels.independence import MAX_STACK_ENTRIES, row_independence_tries

    states = binary_states(4)
    log_rest = coupled_log_rest(states)
    log_p = log_marginal_visible(params)
    pi = np.exp(log_p + log_rest - logsumexp(log_p + log_rest))
    one = try_matrix(log_p, log_rest)
    ht.assert_converges(pi, one)
    T = np.linalg.matrix_power(one, n_tries)
    n_runs = 1000
    v = np.repeat(states, n_runs, axis=0)
    calls = []

    def row_log_likelihood(stack):
        assert stack.dtype == np.int8 and stack.shape[1:] == v.shape
        calls.append(stack.shape[0])
        return coupled_log_rest(stack)

    values, accepted, accept_sum = row_independence_tries(
        np.random.default_rng(1), v, table_of(params, layer), n_tries, row_log_likelihood, dtype=np.int8,
        max_entries=max_entries or MAX_STACK_ENTRIES)
    np.testing.assert_allclose(values, coupled_log_rest(v))
    assert sum(calls) == n_tries + 1 and (max_entries is None or max(calls) <= 3)  # the current states, then tries
    counts = np.zeros((16, 16))
    np.add.at(counts, (np.repeat(np.arange(16), n_runs), ht.state_index(v)), 1)
    assert ht.assert_frequencies(counts, T).n_impossible == 0
    assert abs(accepted.sum() - accept_sum.sum()) < 5 * np.sqrt(accept_sum.sum())
    # negative controls: tries taken without the row term (every proposal), or by the ratio at the start's value
    # kept after a move (the current value never updated)
    prior_only = try_matrix(log_p, np.zeros(16))
    with pytest.raises(AssertionError, match="not stationary"):
        ht.assert_stationary(pi, prior_only)
    with pytest.raises(AssertionError, match="do not follow"):
        ht.assert_frequencies(counts, np.linalg.matrix_power(prior_only, n_tries))
    if n_tries > 1:
        stale = np.empty((16, 16))
        for start in range(16):  # every try judged against the start's value
            q = np.exp(log_p - logsumexp(log_p)) * np.exp(np.minimum(log_rest - log_rest[start], 0.0))
            M = np.tile(q, (16, 1))
            np.fill_diagonal(M, 0.0)
            np.fill_diagonal(M, 1.0 - M.sum(axis=1))
            stale[start] = np.linalg.matrix_power(M, n_tries)[start]
        with pytest.raises(AssertionError, match="do not follow"):
            ht.assert_frequencies(counts, stale)


def test_the_scan_reads_its_values_as_an_independence_sampler():
    """A current value of -inf takes any proposal; a NaN proposal is never taken; the scan reports the last try taken."""
    from pymc_rbm.kernels.independence import independence_scan

    current = np.array([-np.inf, 0.0, 0.0, 5.0])
    proposed = np.array([[-3.0, np.nan, 1.0, -np.inf], [-np.inf, np.nan, -40.0, 5.0]])
    accepted, accept_sum = np.zeros(4, dtype=np.int64), np.zeros(4)
    choice = independence_scan(np.random.default_rng(0), current, proposed, accepted, accept_sum)
    assert choice[0] == 0 and choice[1] == -1 and choice[2] == 0 and choice[3] == 1
    np.testing.assert_array_equal(current, [-3.0, 0.0, 1.0, 5.0])
    np.testing.assert_array_equal(accepted, [1, 0, 1, 1])
    np.testing.assert_allclose(accept_sum, [1.0 + np.exp(-np.inf), 0.0, 1.0 + np.exp(-41.0), 1.0])


def test_row_tries_depend_on_the_seed_only(params):
    from pymc_rbm.kernels.independence import row_independence_tries

    table = table_of(params, "hidden")
    runs = []
    for seed, entries in ((3, 2**18), (3, 2**18), (4, 2**18)):
        v = np.zeros((50, 4))
        row_independence_tries(np.random.default_rng(seed), v, table, 7, coupled_log_rest, max_entries=entries)
        runs.append(v)
    np.testing.assert_array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[0], runs[2])

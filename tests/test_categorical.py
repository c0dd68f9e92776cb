"""Categorical (Potts) units and RBMs: each piece against brute-force enumeration written here.

The references below enumerate every joint state ``(v, h)`` with ``itertools``
and the textbook energy ``E = -Σ_i vbias[i, v_i] - hbias·h - Σ_ij W[i, v_i, j] h_j``;
nothing in them comes from :mod:`pymc_rbm.categorical`.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from pymc_rbm import testing as ht
from pymc_rbm.categorical import (
    CategoricalAtBeta,
    CategoricalRBMParams,
    EnumerationTooLarge,
    as_labels,
    at_beta,
    energy,
    enumeration_plan,
    free_energy,
    hidden_input,
    log_partition_exact,
    log_prob_exact,
    marginals_exact,
    moments_exact,
    sample_exact,
    visible_distribution,
)
from pymc_rbm.kernels.layer import GIBBS, LayerRule
from pymc_rbm.kernels.state import RBMState
from pymc_rbm.kernels.sweep import sweep
from pymc_rbm.layers import Potts

# ----------------------------------------------------------------------------- brute force


def _lse(x, axis=None):
    x = np.asarray(x, dtype=np.float64)
    m = np.max(x, axis=axis, keepdims=True)
    out = m + np.log(np.exp(x - m).sum(axis=axis, keepdims=True))
    return np.squeeze(out, axis=axis) if axis is not None else float(out.reshape(()))


def brute_table(W, vbias, hbias):
    """``-E(v, h)`` of every pair (lexicographic v in range(q)^n, h in {0,1}^H), and the states."""
    n, q, H = W.shape
    V = list(itertools.product(range(q), repeat=n))
    Hs = list(itertools.product((0, 1), repeat=H))
    table = np.empty((len(V), len(Hs)))
    for a, v in enumerate(V):
        for b, h in enumerate(Hs):
            e = sum(vbias[i][v[i]] for i in range(n)) + sum(hbias[j] * h[j] for j in range(H))
            e += sum(W[i][v[i]][j] * h[j] for i in range(n) for j in range(H))
            table[a, b] = e
    return table, np.array(V), np.array(Hs, dtype=np.float64)


SMALL = CategoricalRBMParams.random(3, 3, 2, scale=1.5, rng=4)  # 27 visible states < ... > 4 hidden
WIDE = CategoricalRBMParams.random(2, 3, 6, scale=1.0, rng=5)  # 9 visible states < 64 hidden: visible enumerated


# ----------------------------------------------------------------------------- the Potts layer
FIELDS = np.array([[[-3.0, 0.2, 0.0], [0.7, 41.0, -2.0], [1e4, -1e4, 0.0]]])  # (1, 3 units, 3 states)


def test_potts_log_normaliser_and_mean_are_their_definitions():
    layer = Potts(3)
    assert_allclose(layer.log_normaliser(FIELDS)[0, 0], np.log(np.exp(FIELDS[0, 0]).sum()), rtol=1e-14)
    expected = [41.0 + np.log1p(np.exp(-40.3) + np.exp(-43)), 1e4]
    assert_allclose(layer.log_normaliser(FIELDS)[0, 1:], expected, rtol=1e-14)
    m = layer.mean(FIELDS)
    assert_allclose(m[0, 0], np.exp(FIELDS[0, 0]) / np.exp(FIELDS[0, 0]).sum(), rtol=1e-13)
    assert_allclose(m.sum(axis=-1), 1.0, rtol=1e-14)
    assert np.all(np.isfinite(m))
    x = layer.states(3)
    assert_allclose(np.exp(layer.log_prob(x, FIELDS[0, :, :] / 100)).sum(), 1.0, rtol=1e-13)


def test_potts_states_are_lexicographic_and_indexed():
    layer = Potts(3)
    assert_array_equal(layer.states(3), np.array(list(itertools.product(range(3), repeat=3)), dtype=float))
    assert_array_equal(layer.states(4, 7, 12), layer.states(4)[7:12])
    assert layer.n_states(5) == 3**5
    assert_array_equal(layer.index(layer.states(4)), np.arange(81))


def test_potts_values_and_one_hot_are_checked():
    layer = Potts(4)
    assert_array_equal(layer.check([[0, 3, 2]]), [[0.0, 3.0, 2.0]])
    for bad, match in [([[0, 4]], r"\[0, 4\)"), ([[0.5, 1]], "integer labels"), ([[-1, 0]], "integer labels"),
                       (np.array([True, False]), "numeric"), ([[np.nan, 0]], "integer labels")]:
        with pytest.raises(ValueError, match=match):
            layer.check(bad)
    with pytest.raises(ValueError, match="2 units in its last axis, expected 3"):
        layer.check([[0, 1]], 3)
    oh = layer.one_hot([[2, 0, 3]])
    assert oh.shape == (1, 3, 4)
    assert_array_equal(layer.from_one_hot(oh), [[2, 0, 3]])
    with pytest.raises(ValueError, match="exactly one 1"):
        layer.from_one_hot(np.ones((3, 4)))
    for q in (1, 2.0, True):
        with pytest.raises(ValueError, match="number of states"):
            Potts(q)
    assert Potts(3) == Potts(3) and Potts(3) != Potts(4) and len({Potts(3), Potts(3)}) == 1


def unit_kernel(p: np.ndarray, alpha: float, gibbs: bool, *, accept: bool = True) -> np.ndarray:
    """The q x q transition matrix of one Potts unit with probabilities ``p`` (written from Liu 1996)."""
    q = len(p)
    G = np.tile(p, (q, 1))
    if gibbs:
        return G
    M = np.zeros((q, q))
    for x in range(q):
        for y in range(q):
            if y != x:
                prop = p[y] / (1 - p[x])
                M[x, y] = prop * (min(1.0, (1 - p[x]) / (1 - p[y])) if accept else 1.0)
        M[x, x] = max(0.0, 1.0 - M[x].sum())  # rounding
    return alpha * M + (1 - alpha) * G


def bernoulli_kernel(a: float, alpha: float, gibbs: bool) -> np.ndarray:
    """The 2 x 2 matrix of a Bernoulli unit with logit ``a``: Gibbs, or flip-the-state mixed by ``alpha``."""
    p1 = 1 / (1 + np.exp(-a))
    p = np.array([1 - p1, p1])
    G = np.tile(p, (2, 1))
    if gibbs:
        return G
    T = np.zeros((2, 2))
    for x in range(2):
        qt = 0.5 if p[1 - x] == p[x] else min(1.0, p[1 - x] / p[x])
        T[x, 1 - x], T[x, x] = qt, 1 - qt
    return alpha * T + (1 - alpha) * G


def sweep_matrix(params, rule: LayerRule, beta: float = 1.0, *, accept: bool = True) -> np.ndarray:
    """``T = T_h T_v`` over every joint state (v lexicographic slowest, then h), from the unit kernels."""
    Th, Tv = layer_matrices(params, rule, beta, accept=accept)
    return Th @ Tv


def layer_matrices(params, rule: LayerRule, beta: float = 1.0, *, accept: bool = True):
    """``(T_h, T_v)``: the hidden and the visible layer updates over every joint state."""
    n, q, H = params.W.shape
    V = np.array(list(itertools.product(range(q), repeat=n)))
    Hs = np.array(list(itertools.product((0, 1), repeat=H)), dtype=np.float64)
    nv, nh = len(V), len(Hs)
    Th = np.zeros((nv * nh, nv * nh))
    Tv = np.zeros((nv * nh, nv * nh))
    for a, v in enumerate(V):
        act = beta * (params.hbias + sum(params.W[i, v[i]] for i in range(n)))
        K = [bernoulli_kernel(act[j], rule.alpha, rule.gibbs) for j in range(H)]
        for b, h in enumerate(Hs):
            for c, h2 in enumerate(Hs):
                Th[a * nh + b, a * nh + c] = np.prod([K[j][int(h[j]), int(h2[j])] for j in range(H)])
    for b, h in enumerate(Hs):
        f = beta * (params.vbias + params.W @ h)  # (n, q)
        K = [unit_kernel(np.exp(f[i] - _lse(f[i])), rule.alpha, rule.gibbs, accept=accept) for i in range(n)]
        for a, v in enumerate(V):
            for c, v2 in enumerate(V):
                Tv[a * nh + b, c * nh + b] = np.prod([K[i][v[i], v2[i]] for i in range(n)])
    return Th, Tv


def joint_p(params, beta=1.0):
    table, _, _ = brute_table(params.W, params.vbias, params.hbias)
    return np.exp(beta * table - _lse(beta * table)).ravel()


RULES = {"gibbs": GIBBS, "metropolised": LayerRule(1.0), "alpha0.5": LayerRule(0.5), "alpha0": LayerRule(0.0)}


@pytest.mark.parametrize("beta", [1.0, 0.6])
@pytest.mark.parametrize("rule", list(RULES.values()), ids=list(RULES))
def test_sweeps_leave_the_exact_joint_distribution_invariant(rule, beta):
    """``p T = p`` to 1e-12 on every joint state of a 3-unit, 3-state, 2-hidden RBM; T irreducible."""
    T = sweep_matrix(SMALL, rule, beta)
    ht.assert_stationary(joint_p(SMALL, beta), T)
    assert ht.is_irreducible(T)


def test_metropolised_gibbs_without_its_acceptance_step_is_caught():
    """Negative control (exact): always accepting Liu's proposal breaks stationarity."""
    T = sweep_matrix(SMALL, LayerRule(1.0), accept=False)
    with pytest.raises(AssertionError, match="not stationary"):
        ht.assert_stationary(joint_p(SMALL), T)


def test_metropolised_gibbs_on_two_states_is_flip_the_state_off_the_tie():
    p = np.array([0.3, 0.7])
    assert_allclose(unit_kernel(p, 1.0, False), [[0.0, 1.0], [0.3 / 0.7, 1 - 0.3 / 0.7]], rtol=1e-14)
    assert_allclose(unit_kernel(p, 1.0, False), bernoulli_kernel(np.log(0.7 / 0.3), 1.0, False), rtol=1e-13)


class NoAcceptPotts(Potts):
    """Liu's proposal taken every time: the acceptance step left out."""

    @staticmethod
    def _acceptance_ratio(rest_current, rest_proposed):
        return np.full(np.shape(rest_current), np.inf)


class NoAcceptTarget(CategoricalAtBeta):
    @property
    def visible_layer(self):
        return NoAcceptPotts(self.params.n_states)


def run_counts(target, rule, params, n_draws, rng):
    """Run one sweep of the engine ``n_draws`` times from every joint state; counts[x, y]."""
    n, q, H = params.W.shape
    V = params.visible.states(n)
    Hs = np.array(list(itertools.product((0, 1), repeat=H)), dtype=np.float64)
    v = np.repeat(V, len(Hs), axis=0)
    h = np.tile(Hs, (len(V), 1))
    N = len(v)
    start = np.repeat(np.arange(N), n_draws)
    new, _ = sweep(np.random.default_rng(rng), RBMState(v[start], h[start]), target, rule)
    end = params.visible.index(new.v) * len(Hs) + new.h.astype(np.int64) @ (2 ** np.arange(H - 1, -1, -1))
    return np.bincount(start * N + end, minlength=N * N).reshape(N, N)


@pytest.mark.parametrize("rule", list(RULES.values()), ids=list(RULES))
def test_the_engine_follows_the_exact_transition_matrix(rule):
    """The real sweep (engine + Potts layer + Bernoulli layer), run from every joint state, against T."""
    T = sweep_matrix(SMALL, rule)
    ht.assert_frequencies(run_counts(CategoricalAtBeta(SMALL), rule, SMALL, 2000, 6), T)


def test_the_engine_without_the_acceptance_step_is_caught():
    """Negative control (sampled): the no-acceptance layer does not follow the exact matrix."""
    T = sweep_matrix(SMALL, LayerRule(1.0))
    with pytest.raises(AssertionError):
        ht.assert_frequencies(run_counts(NoAcceptTarget(SMALL), LayerRule(1.0), SMALL, 2000, 6), T)


def test_tempered_target_per_chain():
    """β per chain: chain k is swept at its own β (the rows at β = 0.6 follow that matrix)."""
    target = at_beta(SMALL, np.full(27 * 4 * 1500, 0.6), 27 * 4 * 1500)
    ht.assert_frequencies(run_counts(target, GIBBS, SMALL, 1500, 7), sweep_matrix(SMALL, GIBBS, 0.6))


def test_large_fields_do_not_overflow():
    """|f| = 1e4: the Metropolised rule never leaves a state of probability 1, and never returns NaN."""
    layer = Potts(3)
    field = np.tile(np.array([[0.0, 1e4, -1e4]]), (500, 1, 1))
    new, n = layer.update(np.random.default_rng(0), np.zeros((500, 1)), field, LayerRule(1.0))
    assert_array_equal(new, 1.0)
    assert_array_equal(n, 1)
    new, _ = layer.update(np.random.default_rng(0), np.ones((500, 1)), field, LayerRule(1.0))
    assert_array_equal(new, 1.0)


# ----------------------------------------------------------------------------- parameters
def test_params_are_validated_and_read_only():
    p = SMALL
    assert (p.n_visible, p.n_states, p.n_hidden) == (3, 3, 2) and p.visible == Potts(3)
    with pytest.raises(ValueError):
        p.W[0, 0, 0] = 1.0
    for args, match in [
        ((np.zeros((3, 2)), np.zeros((3, 2)), np.zeros(2)), "3 dimension"),
        ((np.zeros((3, 1, 2)), np.zeros((3, 1)), np.zeros(2)), "at least 2 states"),
        ((np.zeros((3, 3, 2)), np.zeros((3, 2)), np.zeros(2)), r"needs \(3, 3\)"),
        ((np.zeros((3, 3, 2)), np.zeros((3, 3)), np.zeros(3)), r"needs \(2,\)"),
        ((np.full((3, 3, 2), np.nan), np.zeros((3, 3)), np.zeros(2)), "non-finite"),
    ]:
        with pytest.raises(ValueError, match=match):
            CategoricalRBMParams(*args)


def test_save_load_and_fingerprint(tmp_path):
    SMALL.save(tmp_path / "m")
    back = CategoricalRBMParams.load(tmp_path / "m.npz")
    assert back == SMALL and back.fingerprint() == SMALL.fingerprint()
    assert SMALL.fingerprint() != WIDE.fingerprint()
    np.savez(tmp_path / "bad.npz", W=np.zeros((3, 2)), vbias=np.zeros(3), hbias=np.zeros(2))
    with pytest.raises(ValueError, match="3 dimension"):
        CategoricalRBMParams.load(tmp_path / "bad.npz")
    np.savez(tmp_path / "missing.npz", W=np.zeros((3, 2, 2)))
    with pytest.raises(ValueError, match="lacks the key"):
        CategoricalRBMParams.load(tmp_path / "missing.npz")


def test_the_gauge_changes_log_z_by_the_stated_offset_and_nothing_else():
    fixed, offset = SMALL.zero_sum_gauge()
    assert_allclose(fixed.W.sum(axis=1), 0.0, atol=1e-14)
    assert_allclose(fixed.vbias.sum(axis=1), 0.0, atol=1e-14)
    assert_allclose(log_partition_exact(SMALL), log_partition_exact(fixed) + offset, rtol=1e-13)
    V = SMALL.visible.states(3)
    assert_allclose(log_prob_exact(V, SMALL), log_prob_exact(V, fixed), atol=1e-12)


def test_labels_and_one_hot_data():
    oh = Potts(3).one_hot([[0, 2, 1], [1, 1, 0]])
    assert_array_equal(as_labels(oh, SMALL, one_hot=True), [[0, 2, 1], [1, 1, 0]])  # n == q: said explicitly
    assert_array_equal(as_labels(Potts(3).one_hot([[2, 1]]), WIDE), [[2, 1]])  # n != q: recognised
    assert_array_equal(as_labels([[0, 2, 1]], SMALL), [[0, 2, 1]])
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        as_labels([[0, 3, 1]], SMALL)
    assert_allclose(log_prob_exact(Potts(3).one_hot([[2, 1]]), WIDE), log_prob_exact([[2, 1]], WIDE), rtol=1e-14)


# ----------------------------------------------------------------------------- energies and enumeration
@pytest.mark.parametrize("params", [SMALL, WIDE], ids=["hidden-enumerated", "visible-enumerated"])
def test_log_z_logp_and_moments_agree_with_brute_force(params):
    table, V, Hs = brute_table(params.W, params.vbias, params.hbias)
    assert enumeration_plan(params).layer == ("hidden" if params is SMALL else "visible")
    log_z = _lse(table)
    assert abs(log_partition_exact(params) - log_z) < 1e-8
    assert_allclose(-energy(V[:, None, :], Hs[None], params), table, rtol=1e-13, atol=1e-13)
    assert_allclose(-free_energy(V, params), _lse(table, axis=1), rtol=1e-13)
    assert np.max(np.abs(log_prob_exact(V, params) - (_lse(table, axis=1) - log_z))) < 1e-8
    p = np.exp(table - log_z)
    m = moments_exact(params)
    oh = (V[:, :, None] == np.arange(params.n_states)).astype(float)  # (nv, n, q)
    assert_allclose(m.v, np.einsum("ab,aik->ik", p, oh), atol=1e-12)
    assert_allclose(m.h, np.einsum("ab,bj->j", p, Hs), atol=1e-12)
    assert_allclose(m.vh, np.einsum("ab,aik,bj->ikj", p, oh, Hs), atol=1e-12)
    assert_allclose(marginals_exact(params), m.v, atol=1e-14)
    assert_allclose(visible_distribution(params), p.sum(axis=1), atol=1e-14)


def test_hidden_input_and_free_energy_on_tensors_match_numpy():
    import pytensor.tensor as pt

    V = SMALL.visible.states(3, dtype=np.int64)
    v = pt.lmatrix("v")
    f = free_energy(v, SMALL).eval({v: V})
    assert_allclose(f, free_energy(V, SMALL), rtol=1e-13)
    assert_allclose(hidden_input(v, SMALL).eval({v: V}), hidden_input(V, SMALL), rtol=1e-13)
    table = brute_table(SMALL.W, SMALL.vbias, SMALL.hbias)[0]
    assert_allclose(free_energy(V, SMALL, beta=0.5), -_lse(0.5 * table, axis=1), rtol=1e-12)


def test_huge_weights_do_not_overflow():
    big = CategoricalRBMParams(SMALL.W * 100, SMALL.vbias * 100, SMALL.hbias * 100)
    table, _, _ = brute_table(big.W, big.vbias, big.hbias)
    assert abs(log_partition_exact(big) - _lse(table)) < 1e-8 * abs(_lse(table))
    assert np.all(np.isfinite(moments_exact(big).vh))


def test_enumeration_too_large_is_refused_with_sizes():
    p = CategoricalRBMParams.random(20, 21, 30, rng=0)
    with pytest.raises(EnumerationTooLarge, match=r"2\*\*30 .* 21\*\*20"):
        log_partition_exact(p)


@pytest.mark.parametrize("params", [SMALL, WIDE], ids=["via-hidden", "via-visible"])
def test_exact_draws_follow_the_distribution(params):
    draws = sample_exact(params, (20000,), rng=1)
    assert draws.shape == (20000, params.n_visible) and draws.dtype == np.int64
    counts = np.bincount(params.visible.index(draws), minlength=params.n_states**params.n_visible)
    ht.assert_frequencies(counts, visible_distribution(params))


# ----------------------------------------------------------------------------- the PyMC distribution: bad input
CP = CategoricalRBMParams.random(4, 3, 2, rng=0)


def _model(observed=None, **kwargs):
    """A model holding ``CategoricalRBM("v", CP...)``; the inputs are checked to be left as they were."""
    import copy

    import pymc as pm

    from pymc_rbm.categorical import CategoricalRBM

    before = copy.deepcopy(observed)
    with pm.Model() as model:
        CategoricalRBM("v", CP.W, CP.vbias, CP.hbias, observed=observed, **kwargs)
    if observed is not None:
        assert type(observed) is type(before)
        assert_array_equal(np.ma.getdata(observed), np.ma.getdata(before))
        assert_array_equal(np.ma.getmaskarray(observed), np.ma.getmaskarray(before))
    return model


def _joint_logp(model, **values):
    return float(model.compile_logp()({k: np.asarray(x, dtype=np.int64) for k, x in values.items()}))


@pytest.mark.filterwarnings("ignore:Data in v contains missing values")
@pytest.mark.parametrize(
    "observed",
    [
        np.ma.array([[0, 1, 2, 1]], mask=[[0, 0, 1, 0]]),
        np.ma.array([[0, 1, 7, 1]], mask=[[0, 0, 1, 0]]),  # the value under the mask is not read, nor validated
        np.array([[0.0, 1.0, np.nan, 1.0]]),  # NaN in a plain array: missing, as for RBM and GaussianRBM
        np.ma.array(np.eye(3)[[[0, 1, 2, 1]]], mask=np.repeat([[0, 0, 1, 0]], 3, axis=-1).reshape(1, 4, 3)),  # one-hot
    ],
    ids=["masked", "masked-filler-out-of-range", "nan", "one-hot-masked"],
)
def test_missing_cells_are_a_free_variable_and_never_scored(observed):
    model = _model(observed)
    assert [rv.name for rv in model.free_RVs] == ["v_unobserved"]
    for label in range(3):  # logp = log p(v) of the completed row, whatever was under the mask
        expected = log_prob_exact([[0, 1, label, 1]], CP).sum()
        assert_allclose(_joint_logp(model, v_unobserved=[label]), expected, rtol=1e-10)


@pytest.mark.filterwarnings("ignore:Data in v contains missing values")
def test_a_fully_masked_row_is_a_free_categorical_rbm():
    from pymc_rbm.categorical.random_variable import is_categorical_rbm_variable

    observed = np.ma.array([[0, 1, 2, 1], [2, 2, 2, 2]], mask=[[0, 0, 0, 0], [1, 1, 1, 1]])
    model = _model(observed)
    (missing,) = model.free_RVs
    assert missing.name == "v_unobserved" and is_categorical_rbm_variable(missing)
    row = np.array([[1, 0, 0, 2]])
    expected = log_prob_exact([[0, 1, 2, 1]], CP).sum() + log_prob_exact(row, CP).sum()
    assert_allclose(_joint_logp(model, v_unobserved=row), expected, rtol=1e-10)


@pytest.mark.parametrize(
    "observed, match",
    [
        (np.ma.array([[0, 1, 2, 1]], mask=[[1, 1, 1, 1]]), "every cell of the observed data .* is missing"),
        (np.full((2, 4), np.nan), "every cell of the observed data .* is missing"),
        (np.ma.array(np.eye(3)[[[0, 1, 2, 1]]], mask=np.arange(12).reshape(1, 4, 3) == 6),  # 1 of unit 2's entries
         r"some but not all of the 3 entries of a unit missing \(first at unit index \(0, 2\)\)"),
        (np.ma.array([[0, 1, 5, 1]], mask=[[1, 0, 0, 0]]), r"integer labels in \[0, 3\).*found \S*5"),  # unmasked: read
    ],
    ids=["all-masked", "all-nan", "one-hot-partly-masked", "out-of-range-unmasked"],
)
def test_missing_cells_that_cannot_be_imputed_are_refused(observed, match):
    with pytest.raises(ValueError, match=match):
        _model(observed)


def test_an_estimate_of_log_z_of_another_model_is_refused():
    from pymc_rbm.estimators import log_partition

    other = CategoricalRBMParams.random(4, 3, 2, rng=1)
    with pytest.raises(ValueError, match="computed for another model"):
        _model([[0, 1, 2, 1]], log_partition=log_partition(other, "exact"))
    own = log_partition(CP, "exact")  # its own estimate: the exact logp
    model = _model([[0, 1, 2, 1]], log_partition=own)
    assert_allclose(_joint_logp(model), log_prob_exact([[0, 1, 2, 1]], CP).sum(), rtol=1e-12)
    assert_allclose(_joint_logp(_model([[0, 1, 2, 1]], log_partition=float(own) + 1.0)),  # a plain number: as given
                    log_prob_exact([[0, 1, 2, 1]], CP).sum() - 1.0, rtol=1e-12)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("kind", ["CategoricalRBM", "RBM"])
def test_a_non_finite_log_partition_is_refused(kind, value):
    import pymc as pm

    from pymc_rbm import RBM, RBMParams

    with pytest.raises(ValueError, match="log_partition must be finite"):
        if kind == "RBM":
            p = RBMParams.random(3, 2, rng=0)
            with pm.Model():
                RBM("v", p.W, p.vbias, p.hbias, log_partition=value, observed=[[0, 1, 1]])
        else:
            _model([[0, 1, 2, 1]], log_partition=value)


def test_an_estimate_is_checked_against_data_parameters_and_refused_for_random_ones():
    import pymc as pm

    from pymc_rbm.categorical import CategoricalRBM
    from pymc_rbm.estimators import log_partition

    own, other = log_partition(CP, "exact"), CategoricalRBMParams.random(4, 3, 2, rng=1)
    with pm.Model() as model:
        W = pm.Data("W", CP.W)
        CategoricalRBM("v", W, CP.vbias, CP.hbias, log_partition=own, observed=[[0, 1, 2, 1]])
    assert_allclose(float(model.compile_logp()({})), log_prob_exact([[0, 1, 2, 1]], CP).sum(), rtol=1e-12)
    with model:
        pm.set_data({"W": other.W})  # the estimate no longer applies: the logp says so instead of being off
    with pytest.raises(ValueError, match="computed for other values of W, vbias and hbias"):
        model.compile_logp()({})
    with pytest.raises(ValueError, match="computed for another model"), pm.Model():
        CategoricalRBM("v", pm.Data("W", other.W), CP.vbias, CP.hbias, log_partition=own, observed=[[0, 1, 2, 1]])
    with pytest.raises(ValueError, match=r"log Z of one fixed model.*\['s'\]"), pm.Model():
        s = pm.HalfNormal("s")
        CategoricalRBM("v", s * CP.W, CP.vbias, CP.hbias, log_partition=own, observed=[[0, 1, 2, 1]])

"""The layer update rule, written once (compiled) and called by every kernel."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from scipy.special import expit

from pymc_rbm import testing as ht
from pymc_rbm.kernels import flip_probability
from pymc_rbm.kernels import operator_rule
from pymc_rbm.kernels.layer import GIBBS, LayerRule

X = np.array([0, 1, 0, 1, 0, 1, 1, 0, 1, 0])
A = np.array([0.7, 0.7, -2.0, -2.0, 0.0, 0.0, -40.0, 40.0, 3.5, -0.3])
RULES = [GIBBS, LayerRule(1.0), LayerRule(0.0), LayerRule(0.4)]


def definition(rule: LayerRule, x, a):
    """The change probability of each unit, from the conditional probabilities (independent of the package).

    Gibbs and ``α = 0``: ``p(other | rest)``. Flip-the-state (Brügge, Fischer & Igel 2013, Definition 1):
    1 from the less probable state, ``p(other) / p(current)`` from the more probable one, 1/2 on a tie;
    the mixture is linear in ``α``.
    """
    p_one, p_zero = expit(a), expit(-a)
    p_cur, p_oth = np.where(x == 1, p_one, p_zero), np.where(x == 1, p_zero, p_one)
    gibbs = p_oth
    if rule.gibbs:
        return gibbs
    flip = np.where(p_cur > p_oth, p_oth / p_cur, np.where(p_cur < p_oth, 1.0, 0.5))
    return rule.alpha * flip + (1.0 - rule.alpha) * gibbs


def change_counts(rule, dtype, n=200_000, seed=1):
    rng = np.random.default_rng(seed)
    x = np.tile(X, (n, 1)).astype(dtype)
    a = np.tile(A, (n, 1)).astype(dtype)
    new, counts = rule.update(rng, x, a)
    assert_array_equal(counts, (new != x).sum(axis=-1))
    return (new != x).sum(axis=0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("rule", RULES, ids=["gibbs", "flip", "alpha0", "alpha0.4"])
def test_the_rule_changes_each_unit_with_its_definition(rule, dtype):
    n = 200_000
    changed = change_counts(rule, dtype, n)
    q = definition(rule, X, A.astype(dtype).astype(np.float64))
    counts = np.stack([n - changed, changed], axis=1)
    ht.assert_frequencies(counts, np.stack([1.0 - q, q], axis=1))


def test_the_frequency_check_catches_a_rule_without_the_tie_case():
    """Negative control: against Definition 1 without its tie rule (a tie always flips) the check fails."""
    n = 200_000
    changed = change_counts(LayerRule(1.0), np.float64, n)
    q = definition(LayerRule(1.0), X, A)
    q_no_tie = np.where(A == 0.0, 1.0, q)
    with pytest.raises(AssertionError):
        ht.assert_frequencies(np.stack([n - changed, changed], axis=1), np.stack([1.0 - q_no_tie, q_no_tie], axis=1))


def test_flip_probability_is_the_rules_change_probability():
    for rule in RULES[1:]:
        np.testing.assert_allclose(flip_probability(X, A, rule.alpha), definition(rule, X, A), rtol=1e-13)
    # broadcasting: one logit row for many states
    x = np.array([[0, 1], [1, 0]])
    assert flip_probability(x, [1.0, -1.0]).shape == (2, 2)


def test_gibbs_does_not_read_the_state_and_flip_needs_it():
    logit = np.array([[3.0, -3.0, 0.5]])
    a = GIBBS.update(np.random.default_rng(5), None, logit)[0]
    b = GIBBS.update(np.random.default_rng(5), np.ones_like(logit), logit)[0]
    assert_array_equal(a, b)  # the same uniforms give the same draw, whatever the current state
    assert GIBBS.reads_state is False and LayerRule(0.0).reads_state is True
    with pytest.raises(ValueError, match="only the Gibbs rule"):
        LayerRule(1.0).update(np.random.default_rng(0), None, logit)


def test_update_keeps_its_inputs_and_types():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 2, (50, 7))
    a = rng.normal(0, 2, (50, 7))
    x0, a0 = x.copy(), a.copy()
    for rule in RULES:
        new, counts = rule.update(rng, x, a)
        assert new.dtype == x.dtype and new.shape == x.shape and counts.shape == (50,)
        assert np.all((new == 0) | (new == 1))
        new32, _ = rule.update(rng, x, a, dtype=np.float32)
        assert new32.dtype == np.float32
        new_b, _ = rule.update(rng, x.astype(bool), a)
        assert new_b.dtype == bool
    assert_array_equal(x, x0)
    assert_array_equal(a, a0)
    one, c = LayerRule(1.0).update(rng, x[0], a[0])  # a single row
    assert one.shape == (7,) and c.shape == ()
    with pytest.raises(ValueError, match="do not match"):
        LayerRule(1.0).update(rng, x[:, :3], a)


def test_operator_rule_binds_the_operator_once():
    assert operator_rule("gibbs") is GIBBS
    assert operator_rule("flip") == LayerRule(1.0, False)
    assert operator_rule(0.25) == LayerRule(0.25, False)
    for bad in (-0.1, 1.5, np.nan, "metropolis"):
        with pytest.raises(ValueError, match="alpha|operator"):
            operator_rule(bad)


def test_the_same_uniforms_give_the_same_draw_in_every_kernel():
    """The NumPy kernels' layer update is the compiled rule: the uniforms of one generator, drawn in C order,
    decide it unit by unit (a threshold test on each uniform)."""
    rng = np.random.default_rng(11)
    x = rng.integers(0, 2, (30, 9)).astype(float)
    a = rng.normal(0, 2, (30, 9))
    u = np.random.default_rng(4).random(a.shape)
    for rule in RULES:
        new, _ = rule.update(np.random.default_rng(4), x, a)
        q = definition(rule, x, a)
        if rule.gibbs:
            expected = (u < expit(a)).astype(float)
        else:
            expected = np.where(u < q, 1.0 - x, x)
        assert_array_equal(new, expected)

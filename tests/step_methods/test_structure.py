"""Which other model terms factorise over the rows or units of an RBM variable, read off the graph.

The analysis must find the factorised models users write (readouts of every
unit, a readout of every row, products with loadings), and must never call a
coupled model factorised: every coupled model below is the negative control.
The per-unit tilts and per-row values it compiles are checked against the
whole model's ``log L`` evaluated state by state.
"""

from __future__ import annotations

import itertools

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import pytest

from pymc_rbm import RBM, RBMParams
from pymc_rbm.categorical import CategoricalRBM, CategoricalRBMParams
from pymc_rbm.step_methods.categorical import CategoricalMetropolisedGibbs
from pymc_rbm.step_methods.terms import INFINITE_TILT, OtherTerms

K, N = 3, 4
PARAMS = RBMParams.random(N, 2, rng=0)
RNG = np.random.default_rng(1)
Y = RNG.normal(size=(K, N))
A = RNG.normal(size=N)
M = RNG.normal(size=(N, 2))


def other_terms(add_terms, shape=(K, N)):
    with pm.Model() as model:
        v = RBM("v", PARAMS.W, PARAMS.vbias, PARAMS.hbias, shape=shape)
        s = pm.HalfNormal("s", 1.0)
        add_terms(v, s)
    return model, OtherTerms(model, v, model.rvs_to_values[v], {"on_unused_input": "ignore"})


FACTORISED = {
    "unit readouts": (lambda v, s: pm.Normal("y", s * v + 0.5, 1.0, observed=Y), "units"),
    "unit readouts, transposed": (lambda v, s: pm.Normal("y", (s * v).T, 1.0, observed=Y.T), "units"),
    "unit evidence": (lambda v, s: pm.Bernoulli("y", logit_p=2 * v - 1, observed=(Y > 0).astype(int)), "units"),
    "row readout": (lambda v, s: pm.Normal("y", (v * A).sum(axis=-1), s, observed=Y[:, 0]), "rows"),
    "row loadings, dot": (lambda v, s: pm.Normal("y", pm.math.dot(v, M), s, observed=Y[:, :2]), "rows"),
    "row loadings, matmul": (lambda v, s: pm.Normal("y", v @ M, s, observed=Y[:, :2]), "rows"),
    "units and a row readout": (lambda v, s: (pm.Normal("y", s * v, 1.0, observed=Y),
                                              pm.Normal("z", v.sum(axis=-1), 1.0, observed=Y[:, 0])), "rows"),
    # each element reads one unit, elsewhere than its own position: still one unit per element
    "rows in another order": (lambda v, s: pm.Normal("y", v[::-1], 1.0, observed=Y), "units"),
    "rows reshaped": (lambda v, s: pm.Normal("y", v.reshape((N, K)), 1.0, observed=Y.reshape(N, K)), "units"),
}

COUPLED = {
    "a term summing over rows": lambda v, s: pm.Normal("y", v.mean(axis=0), s, observed=Y[0]),
    "a Potential of the whole value": lambda v, s: pm.Potential("p", -(v.sum() - 5.0) ** 2),
    "a product of rows": lambda v, s: pm.Normal("y", v @ v.T, 1.0, observed=np.zeros((K, K))),
    "rows mixed by a matrix": lambda v, s: pm.Normal("y", pm.math.dot(np.ones((K, K)), v), 1.0, observed=Y),
}


def log_rest_of(model):
    """The whole ``log L`` at a value of v (s at the initial point), from the model's own logp."""
    fn = model.compile_logp(vars=[r for r in model.observed_RVs] + list(model.potentials))
    point = model.initial_point()
    return lambda v: float(fn({**point, "v": v.astype(point["v"].dtype)}))


@pytest.mark.parametrize("name", list(FACTORISED))
def test_factorised_models_are_found(name):
    add, expected = FACTORISED[name]
    _, terms = other_terms(add)
    assert terms.structure == expected


@pytest.mark.parametrize("name", list(COUPLED))
def test_coupled_models_are_never_taken_for_factorised(name):
    _, terms = other_terms(COUPLED[name])
    assert terms.active
    assert terms.structure is None


def test_one_row_with_per_unit_terms_factorises_over_units():
    _, terms = other_terms(lambda v, s: pm.Normal("y", s * v, 1.0, observed=Y[0]), shape=(N,))
    assert terms.structure == "units"
    _, terms = other_terms(lambda v, s: pm.Normal("y", v.sum(), 1.0, observed=1.0), shape=(N,))
    assert terms.structure is None


@pytest.mark.parametrize("name", list(FACTORISED))
def test_row_values_sum_to_log_L_and_flips_change_one_row(name):
    model, terms = other_terms(FACTORISED[name][0])
    point = model.initial_point()
    whole = log_rest_of(model)
    states = RNG.integers(0, 2, size=(5, K, N))
    rows = terms.row_values(point, states)
    np.testing.assert_allclose(rows.sum(axis=1), [whole(x) for x in states], rtol=1e-12, atol=1e-9)
    values, tilt = terms.row_tilts(point, states)
    np.testing.assert_allclose(values, rows, rtol=1e-12, atol=1e-12)
    for x, t in zip(states, tilt):
        for k in range(K):
            for i in range(N):
                flipped = x.copy()
                flipped[k, i] = 1 - flipped[k, i]
                expected = (1 - 2 * x[k, i]) * (whole(flipped) - whole(x))
                np.testing.assert_allclose(t[k, i], expected, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name", [n for n, (_, kind) in FACTORISED.items() if kind == "units"])
def test_unit_tilt_is_the_change_of_log_L_at_every_state(name):
    model, terms = other_terms(FACTORISED[name][0])
    point = model.initial_point()
    whole = log_rest_of(model)
    tilt = terms.unit_tilt(point, (K, N), point["v"].dtype)
    for x in RNG.integers(0, 2, size=(4, K, N)):
        for k in range(K):
            for i in range(N):
                on, off = x.copy(), x.copy()
                on[k, i], off[k, i] = 1, 0
                np.testing.assert_allclose(tilt[k, i], whole(on) - whole(off), rtol=1e-9, atol=1e-9)


def test_a_unit_value_ruled_out_is_a_finite_stand_in_for_infinity():
    observed = np.zeros((K, N), dtype=int)
    observed[0, 0] = 1
    model, terms = other_terms(lambda v, s: pm.Bernoulli("y", p=0.25 + 0.75 * v, observed=observed))
    # y = 1 at unit (0, 0) is possible either way; y = 0 elsewhere rules out nothing either: p < 1 at v = 0
    point = model.initial_point()
    assert np.isfinite(terms.unit_tilt(point, (K, N), point["v"].dtype)).all()
    model, terms = other_terms(lambda v, s: pm.Bernoulli("y", p=v * 1.0, observed=observed))
    tilt = terms.unit_tilt(point, (K, N), point["v"].dtype)
    assert tilt[0, 0] == INFINITE_TILT  # y = 1 needs v = 1
    assert (tilt.reshape(-1)[1:] == -INFINITE_TILT).all()  # y = 0 needs v = 0


# ----------------------------------------------------------------------------- categorical reads through a table
CAT = CategoricalRBMParams.random(N, 3, 2, rng=2)
TABLE = np.array([[0.7, 0.2, 0.1], [0.15, 0.7, 0.15], [0.1, 0.2, 0.7]])  # p(read | label), rows by label
READS = RNG.integers(0, 3, size=(K, N))


def categorical_step(p_of):
    """A CategoricalRBM ``x`` of K rows read through ``pm.Categorical("y", p=p_of(table, x))``, and its step."""
    with pm.Model() as model:
        x = CategoricalRBM("x", CAT.W, CAT.vbias, CAT.hbias, shape=(K, N))
        pm.Categorical("y", p=p_of(pt.as_tensor(TABLE), x), observed=READS)
        step = CategoricalMetropolisedGibbs(rng=0)
    return model, step


def test_a_table_indexed_by_the_labels_is_per_site_evidence():
    """``p=table[x]`` is one term per site: the step tilts each site's fields by ``log table[c, y_ki]``, equal to
    the model's own logp differences (site ``(k, i)`` set to ``c`` against 0) at every site and label."""
    model, step = categorical_step(lambda t, x: t[x])
    assert step.other_terms.structure == "units" and step.uses_evidence
    point = model.initial_point()
    point["x"] = RNG.integers(0, 3, size=(K, N)).astype(point["x"].dtype)
    step.step(point)
    ev = step.evidence  # (K, N, q)
    expected = np.log(TABLE[:, READS]).transpose(1, 2, 0) - np.log(TABLE[0, READS])[..., None]
    np.testing.assert_allclose(ev, expected, rtol=0, atol=1e-12)
    logp_y = model.compile_logp(vars=[model["y"]])
    zeros = np.zeros((K, N), dtype=point["x"].dtype)
    base = logp_y({**point, "x": zeros})
    for k, i, c in itertools.product(range(K), range(N), range(3)):
        x = zeros.copy()
        x[k, i] = c
        assert abs(ev[k, i, c] - (logp_y({**point, "x": x}) - base)) <= 1e-12


@pytest.mark.parametrize("name", ["every row reads row 0", "every site reads site 0"])
def test_a_table_indexed_by_other_sites_is_not_per_site(name):
    """Negative controls: ``p`` of every row from ``x[0]`` couples the rows, ``p`` of every site from
    ``x[:, 0]`` couples the sites: neither is per-site evidence (the correction by Metropolis is used)."""
    p_of = {"every row reads row 0": lambda t, x: t[x[0]], "every site reads site 0": lambda t, x: t[x[:, :1]]}[name]
    _, step = categorical_step(p_of)
    assert step.other_terms.active and step.other_terms.structure != "units" and not step.uses_evidence
    if name == "every row reads row 0":
        assert step.other_terms.structure is None

"""Which other model terms factorise over the rows or units of an RBM variable, read off the graph.

The analysis must find the factorised models users write (readouts of every
unit, a readout of every row, products with loadings, summed Potentials,
readings by constant indices and slices), and must never call a coupled model
factorised: every coupled model below is the negative control. The per-unit
tilts and per-row values it compiles are checked against the whole model's
``log L`` evaluated state by state, the per-unit pieces against a direct
computation, and ``pm.sample`` of the idiomatic forms against enumeration.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import pytest
from pymc.sampling.mcmc import assign_step_methods
from scipy.special import logsumexp

from pymc_rbm import RBM, RBMParams, ReplicaExchange
from pymc_rbm.categorical import CategoricalRBM, CategoricalRBMParams
from pymc_rbm.estimators import binary_states, log_marginal_visible
from pymc_rbm.step_methods.categorical import CategoricalMetropolisedGibbs
from pymc_rbm.step_methods.structure import factorisation
from pymc_rbm.step_methods.terms import INFINITE_TILT, OtherTerms

from ._stats import assert_visible_distribution

K, N = 3, 4
PARAMS = RBMParams.random(N, 2, rng=0)
RNG = np.random.default_rng(1)
Y = RNG.normal(size=(K, N))
A = RNG.normal(size=N)
M = RNG.normal(size=(N, 2))
# noisy pixels: BITS[k, i] is v[k, i] flipped with probability EPS, observed where MASK is 1
IDIOM = np.random.default_rng(7)
EPS = 0.1
BITS = (IDIOM.random((K, N)) > 0.5).astype(int)
MASK = (IDIOM.random((K, N)) > 0.3).astype(float)
ROWS, COLS = np.array([0, 2, 2, 1, 0]), np.array([3, 0, 1, 1, 3])  # unit (0, 3) read twice, (0, 0) never
READ = np.array([1, 0, 1, 1, 0])


def noisy_pixels(v, bits=BITS):
    """``log p(bits | v)`` per pixel, shape of ``v``: each pixel flipped with probability EPS."""
    return pm.logp(pm.Bernoulli.dist(p=v * (1 - EPS) + (1 - v) * EPS), bits)


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
    # the idioms: sums of per-unit (per-row) pieces, readings by constant indices and slices
    "a summed Potential": (lambda v, s: pm.Potential("lik", (MASK * noisy_pixels(v)).sum()), "units"),
    "a Potential summed over an axis": (lambda v, s: pm.Potential("lik", (MASK * noisy_pixels(v)).sum(axis=0)),
                                        "units"),
    "sums of pieces and a constant": (lambda v, s: pm.Potential(
        "lik", 2.0 * noisy_pixels(v)[0].sum() - (s * v).mean() + (MASK * noisy_pixels(v)).sum(axis=1).sum()
        + 1.5 * s), "units"),
    "readings by fancy indexing": (lambda v, s: pm.Bernoulli("y", p=0.1 + 0.8 * v[ROWS, COLS], observed=READ),
                                   "units"),
    "a column index": (lambda v, s: pm.Normal("y", v[:, [3, 1]], s, observed=Y[:, :2]), "units"),
    "a slice": (lambda v, s: pm.Normal("y", s * v[:, :3], 1.0, observed=Y[:, :3]), "units"),
    "a summed Potential of row pieces": (lambda v, s: pm.Potential(
        "lik", -((v[:, :3].sum(axis=1) - 1.5 * s) ** 2).sum()), "rows"),
    "rows read by index": (lambda v, s: pm.Normal("y", v[[2, 0]] @ M, s, observed=Y[:2, :2]), "rows"),
}

COUPLED = {
    "a term summing over rows": lambda v, s: pm.Normal("y", v.mean(axis=0), s, observed=Y[0]),
    "a Potential of the whole value": lambda v, s: pm.Potential("p", -(v.sum() - 5.0) ** 2),
    "a product of rows": lambda v, s: pm.Normal("y", v @ v.T, 1.0, observed=np.zeros((K, K))),
    "rows mixed by a matrix": lambda v, s: pm.Normal("y", pm.math.dot(np.ones((K, K)), v), 1.0, observed=Y),
    "a summed Potential coupling two rows": lambda v, s: pm.Potential("p", (v[0] * v[1]).sum()),
    "readings of two rows at once": lambda v, s: pm.Normal("y", v[[0, 1], [0, 0]] + v[[1, 2], [0, 0]], 1.0,
                                                           observed=[0.0, 1.0]),
    "a row chosen by another variable": lambda v, s: pm.Normal(
        "y", v[pm.Categorical("j", p=np.ones(K) / K)], 1.0, observed=Y[0]),
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


@pytest.mark.filterwarnings("ignore:The model term")
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


# ----------------------------------------------------------------------------- the idioms, piece by piece
def per_unit_values(add_terms):
    """The per-unit graph of ``log L`` (:func:`factorisation`) as a function of ``v``, its structure, and the
    whole ``log L`` from the model's own logp."""
    model, terms = other_terms(add_terms)
    value = model.rvs_to_values[model["v"]]
    rest = [t for t in model.logp(vars=list(model.observed_RVs) + list(model.potentials), sum=False)]
    found = factorisation(rest, value)
    fn = pytensor.function([value], found.per_position)
    return found.structure, (lambda x: fn(x.astype(value.dtype))), log_rest_of(model)


def direct_noisy_pixels(x):
    """``log p(BITS | x)`` per pixel, in NumPy."""
    p = x * (1 - EPS) + (1 - x) * EPS
    return np.where(BITS == 1, np.log(p), np.log1p(-p))


def test_the_pieces_of_a_summed_potential_are_its_summands():
    """The per-unit values of ``Potential((MASK * logp).sum())`` are ``MASK * logp`` itself; they add up to the
    model's logp of the Potential."""
    structure, per_unit, whole = per_unit_values(lambda v, s: pm.Potential("lik", (MASK * noisy_pixels(v)).sum()))
    assert structure == "units"
    for x in RNG.integers(0, 2, size=(4, K, N)):
        np.testing.assert_allclose(per_unit(x), MASK * direct_noisy_pixels(x), rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(per_unit(x).sum(), whole(x), rtol=1e-13, atol=1e-12)


def test_a_unit_read_several_times_by_fancy_indexing_gets_all_its_readings():
    """``y_j ~ Bernoulli(0.1 + 0.8 v[ROWS_j, COLS_j])``: unit ``(0, 3)`` carries its two readings, ``(0, 0)``
    none; the per-unit values add up to the model's logp."""
    structure, per_unit, whole = per_unit_values(
        lambda v, s: pm.Bernoulli("y", p=0.1 + 0.8 * v[ROWS, COLS], observed=READ))
    assert structure == "units"
    for x in RNG.integers(0, 2, size=(4, K, N)):
        p = 0.1 + 0.8 * x[ROWS, COLS]
        expected = np.zeros((K, N))
        np.add.at(expected, (ROWS, COLS), np.where(READ == 1, np.log(p), np.log1p(-p)))
        np.testing.assert_allclose(per_unit(x), expected, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(per_unit(x).sum(), whole(x), rtol=1e-13, atol=1e-12)
        assert per_unit(x)[0, 0] == 0.0


def test_a_piece_without_the_value_is_shared_by_every_unit():
    """``Potential(logp.sum() + 2.5)``: the constant is spread equally, so the total stays the model's logp."""
    structure, per_unit, whole = per_unit_values(lambda v, s: pm.Potential("lik", noisy_pixels(v).sum() + 2.5))
    assert structure == "units"
    x = RNG.integers(0, 2, size=(K, N))
    np.testing.assert_allclose(per_unit(x), direct_noisy_pixels(x) + 2.5 / (K * N), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(per_unit(x).sum(), whole(x), rtol=1e-13, atol=1e-12)


def test_the_general_path_says_once_which_term_and_why():
    """A term that couples two rows is sampled by the general path, and the step says so once, naming the term,
    the op that coupled them and the forms that would be split; a factorised model says nothing."""
    with pm.Model():
        v = RBM("v", PARAMS.W, PARAMS.vbias, PARAMS.hbias, shape=(K, N))
        pm.Potential("pairs", (v[0] * v[1]).sum())
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            step = ReplicaExchange(rng=0)
    messages = [str(w.message) for w in record if issubclass(w.category, UserWarning)]
    assert step.other_terms.structure is None
    assert len(messages) == 1, messages
    assert "'pairs'" in messages[0] and "Mul combines several rows" in messages[0]
    assert "v[rows, cols]" in messages[0] and ".sum()" in messages[0]
    with pm.Model():
        v = RBM("v", PARAMS.W, PARAMS.vbias, PARAMS.hbias, shape=(K, N))
        pm.Potential("lik", (MASK * noisy_pixels(v)).sum())
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert ReplicaExchange(rng=0).other_terms.structure == "units"


# ----------------------------------------------------------------------------- the idioms in pm.sample
TINY = RBMParams.random(4, 2, scale=1.5, rng=4)
TINY_BITS = np.array([[1, 0, 1, 1], [0, 0, 1, 0]])
TINY_MASK = np.array([[1.0, 1.0, 0.0, 1.0], [1.0, 0.0, 1.0, 1.0]])
OBSERVED = np.nonzero(TINY_MASK)
LIKELIHOODS = {
    "elementwise": lambda v: pm.Potential("lik", TINY_MASK * noisy_pixels(v, TINY_BITS)),
    "summed Potential": lambda v: pm.Potential("lik", (TINY_MASK * noisy_pixels(v, TINY_BITS)).sum()),
    "fancy readings": lambda v: pm.Bernoulli("y", p=v[OBSERVED] * (1 - EPS) + (1 - v[OBSERVED]) * EPS,
                                             observed=TINY_BITS[OBSERVED]),
}


@pytest.mark.parametrize("form", list(LIKELIHOODS))
def test_pm_sample_of_each_form_of_one_likelihood_matches_enumeration(form):
    """Three ways to write one noisy-pixel likelihood of 2 rows: each is per-unit, gets the step the elementwise
    form gets, and samples each row's posterior ``p(v_k) L_k(v_k)``, enumerated over the 16 states of a row."""
    with pm.Model() as model:
        v = RBM("v", TINY.W, TINY.vbias, TINY.hbias, shape=(2, 4))
        LIKELIHOODS[form](v)
        _, chosen = assign_step_methods(model)
        step = ReplicaExchange(rng=0)
        assert step.other_terms.structure == "units"
        idata = pm.sample(draws=1500, tune=300, chains=2, cores=1, step=step, random_seed=3, progressbar=False,
                          compute_convergence_checks=False)
    with pm.Model() as elementwise:
        LIKELIHOODS["elementwise"](RBM("v", TINY.W, TINY.vbias, TINY.hbias, shape=(2, 4)))
        _, expected = assign_step_methods(elementwise)
    assert list(chosen) == list(expected)
    states = binary_states(4)
    p = states * (1 - EPS) + (1 - states) * EPS
    draws = idata.posterior["v"].values
    for k in range(2):
        log_l = (TINY_MASK[k] * np.where(TINY_BITS[k] == 1, np.log(p), np.log1p(-p))).sum(axis=1)
        log_p = log_marginal_visible(TINY) + log_l
        assert_visible_distribution(draws[:, :, k], log_p - logsumexp(log_p), label=f"{form}, row {k}")


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
    the model's own logp differences (site ``(k, i)`` set to ``c`` against 0) at every site and label. The
    evidence is compared up to an offset per site (the same for every label, it changes no conditional)."""
    model, step = categorical_step(lambda t, x: t[x])
    assert step.other_terms.structure == "units" and step.uses_evidence
    point = model.initial_point()
    point["x"] = RNG.integers(0, 3, size=(K, N)).astype(point["x"].dtype)
    step.step(point)
    ev = step.evidence - step.evidence[..., :1]  # (K, N, q), against label 0 at every site
    expected = np.log(TABLE[:, READS]).transpose(1, 2, 0) - np.log(TABLE[0, READS])[..., None]
    np.testing.assert_allclose(ev, expected, rtol=0, atol=1e-12)
    logp_y = model.compile_logp(vars=[model["y"]])
    zeros = np.zeros((K, N), dtype=point["x"].dtype)
    base = logp_y({**point, "x": zeros})
    for k, i, c in itertools.product(range(K), range(N), range(3)):
        x = zeros.copy()
        x[k, i] = c
        assert abs(ev[k, i, c] - (logp_y({**point, "x": x}) - base)) <= 1e-12


READ_ELSEWHERE = {
    "every row reads row 0": lambda t, x: t[x[0]],
    "every site reads site 0": lambda t, x: t[x[:, :1]],
}


def read_elsewhere(name, x):
    """The per-site values of ``y ~ Categorical(TABLE[...])`` of :data:`READ_ELSEWHERE`, in NumPy: the sites
    read collect the readings of every cell that reads them; the others are 0."""
    logs = np.log(TABLE)
    out = np.zeros((K, N))
    if name == "every row reads row 0":
        out[0] = logs[x[0][None, :], READS].sum(axis=0)
    else:
        out[:, 0] = logs[x[:, :1], READS].sum(axis=1)
    return out


@pytest.mark.parametrize("name", list(READ_ELSEWHERE))
def test_a_table_indexed_by_other_sites_is_evidence_on_the_sites_read(name):
    """``p`` of every row from ``x[0]`` (or of every site from ``x[:, 0]``): every cell reads one site, so the
    term is per-site evidence on the sites read (each carries the readings of all cells that read it); the
    per-site values equal a direct computation and add up to the model's logp."""
    model, step = categorical_step(READ_ELSEWHERE[name])
    assert step.other_terms.structure == "units" and step.uses_evidence
    value = model.rvs_to_values[model["x"]]
    found = factorisation(model.logp(vars=[model["y"]], sum=False), value)
    per_site = pytensor.function([value], found.per_position)
    logp_y = model.compile_logp(vars=[model["y"]])
    point = model.initial_point()
    for x in RNG.integers(0, 3, size=(3, K, N)):
        x = x.astype(point["x"].dtype)
        np.testing.assert_allclose(per_site(x), read_elsewhere(name, x), rtol=1e-13, atol=1e-12)
        np.testing.assert_allclose(per_site(x).sum(), logp_y({**point, "x": x}), rtol=1e-13, atol=1e-12)


@pytest.mark.filterwarnings("ignore:The model term")
@pytest.mark.parametrize("name", ["two rows", "two sites"])
def test_a_table_indexed_by_two_sites_is_not_per_site(name):
    """Negative controls: ``p`` from the labels of rows 0 and 1 together couples the rows; ``p`` of each site
    from its own label and site 0's couples the sites of a row (per row, not per site)."""
    p_of = {"two rows": lambda t, x: t[(x[0] + x[1]) % 3], "two sites": lambda t, x: t[(x + x[:, :1]) % 3]}[name]
    _, step = categorical_step(p_of)
    assert step.other_terms.active and not step.uses_evidence
    assert step.other_terms.structure == (None if name == "two rows" else "rows")

# ----------------------------------------------------------------------------- linear predictors
def _row_terms(build):
    """The per-row graph of the terms ``build(v)`` adds, with the model and the value variable."""
    with pm.Model() as model:
        v = RBM("v", PARAMS.W, PARAMS.vbias, PARAMS.hbias, shape=(K, N))
        build(v)
    value = model.rvs_to_values[v]
    from pymc_rbm.step_methods.terms import other_terms
    from pytensor.graph.traversal import ancestors

    terms = [t for t in model.logp(vars=other_terms(model, v), sum=False) if value in set(ancestors([t]))]
    return model, v, value, factorisation(terms, value).per_position


@pytest.mark.parametrize("build", [
    lambda v: pm.Normal("y", v @ M, 1.0, observed=RNG.normal(size=(K, 2))),
    lambda v: pm.Bernoulli("y", logit_p=pt.dot(v, M) + 0.3, observed=RNG.integers(0, 2, (K, 2))),
    lambda v: pm.Poisson("y", pt.exp(pt.cast(v, "float64") @ M), observed=RNG.integers(0, 3, (K, 2))),
    lambda v: (pm.Normal("y", v @ M, 1.0, observed=RNG.normal(size=(K, 2))),
               pm.Normal("z", v @ pm.Normal("B", 0, 1, shape=(N, 3)), 1.0, observed=RNG.normal(size=(K, 3)))),
], ids=["gaussian", "logistic-dot", "poisson-cast", "two-products-one-free"])
def test_readouts_of_linear_predictors_are_found(build):
    from pymc_rbm.step_methods.structure import linear_predictors

    _, _, value, per_row = _row_terms(build)
    found = linear_predictors(per_row, value)
    assert found is not None and all(x.type.shape[0] == K and b.type.shape[0] == N for x, b in found)


@pytest.mark.parametrize("build", [
    lambda v: pm.Normal("y", v @ M + v[:, :2], 1.0, observed=RNG.normal(size=(K, 2))),  # v read elementwise too
    lambda v: pm.Normal("y", v @ (M + v[0, :, None]), 1.0, observed=RNG.normal(size=(K, 2))),  # B involves v
    lambda v: pm.Normal("y", (v * A).sum(axis=-1), 1.0, observed=RNG.normal(size=K)),  # a product written out
], ids=["elementwise-too", "loadings-of-v", "sum-of-products"])
def test_terms_that_read_v_otherwise_have_no_predictors(build):
    from pymc_rbm.step_methods.structure import linear_predictors

    _, _, value, per_row = _row_terms(build)
    assert per_row is None or linear_predictors(per_row, value) is None


def test_the_readout_of_the_predictors_equals_the_row_terms():
    """``RowPredictors.row_values(v @ B)`` against the compiled per-row terms, with a free loading matrix."""
    with pm.Model() as model:
        v = RBM("v", PARAMS.W, PARAMS.vbias, PARAMS.hbias, shape=(K, N))
        B = pm.Normal("B", 0.0, 1.0, shape=(N, 2))
        sigma = pm.HalfNormal("sigma", 1.0)
        pm.Normal("y", v @ B, sigma, observed=RNG.normal(size=(K, 2)))
        pm.Bernoulli("z", logit_p=v @ M, observed=RNG.integers(0, 2, (K, 2)))
    terms = OtherTerms(model, v, model.rvs_to_values[v], {})
    predictors = terms.predictors
    assert predictors is not None and sorted(predictors.input_names) == ["B", "sigma_log__"]
    rng = np.random.default_rng(4)
    for _ in range(3):
        point = {"B": rng.normal(size=(N, 2)), "sigma_log__": np.array(rng.normal()), "v": None}
        states = rng.integers(0, 2, (1, K, N))
        loadings = predictors.loadings(point)
        got = predictors.row_values(point, predictors.predictors(states[0], loadings))
        np.testing.assert_allclose(got, terms.row_values(point, states)[0], rtol=1e-12)

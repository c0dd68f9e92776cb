"""ImputedCells: the missing cells of an RBM observed with gaps, against each row's exact conditional.

With cells missing here and there, PyMC makes ``v_unobserved`` (every row's
missing cells, in row order); given the observed cells each row's missing
ones follow ``p(v_M | v_O) ∝ p_RBM(v_M, v_O)``, enumerable on a small RBM.
``pm.sample()`` must give the variable to :class:`ImputedCells` and its draws
must follow those conditionals; where another term involves the missing
cells, or the weights are random, the step must leave them to PyMC.
"""

from __future__ import annotations

import itertools

import numpy as np
import pymc as pm
import pytest
from pymc.sampling.mcmc import assign_step_methods
from pymc.step_methods.compound import Competence

from pymc_rbm import RBM, RBMParams
from pymc_rbm.energy import free_energy
from pymc_rbm.estimators import binary_states
from pymc_rbm.step_methods import ImputedCells
from pymc_rbm.step_methods.imputed import is_imputed_rbm_variable

from ._stats import assert_visible_distribution, ess

pytestmark = pytest.mark.filterwarnings("ignore:Data in v contains missing values")


@pytest.fixture(scope="module")
def params():
    return RBMParams.random(6, 4, scale=2.5, rng=4)


def gappy_data():
    """Four rows: one cell missing, three, none, five."""
    data = np.array([[1, 0, 1, 1, 0, 1], [0, 1, 1, 0, 0, 1], [1, 1, 0, 0, 1, 0], [0, 0, 1, 1, 1, 0]], dtype=float)
    data[0, 2] = np.nan
    data[1, [0, 3, 5]] = np.nan
    data[3, 1:] = np.nan
    return data


def conditional_log_p(params, row):
    """``log p(v_M | v_O)`` (unnormalised) over ``binary_states(|M|)``, for a row with NaN at M."""
    missing = np.isnan(row)
    states = binary_states(int(missing.sum()))
    full = np.tile(np.nan_to_num(row), (states.shape[0], 1))
    full[:, missing] = states
    return -free_energy(full, params)


def test_pm_sample_imputes_each_row_from_its_conditional(params):
    data = gappy_data()
    with pm.Model() as model:
        RBM("v", params.W, params.vbias, params.hbias, observed=np.ma.masked_invalid(data))
        assert list(assign_step_methods(model)[1]) == [ImputedCells]
        idata = pm.sample(draws=2500, tune=300, chains=2, cores=1, random_seed=3, progressbar=False,
                          compute_convergence_checks=False)
    draws = idata.posterior["v_unobserved"].values
    joined = idata.posterior["v"].values
    np.testing.assert_array_equal(joined[..., ~np.isnan(data)], np.broadcast_to(data[~np.isnan(data)], joined.shape[:2]
                                                                                + (int((~np.isnan(data)).sum()),)))
    start = 0
    for k, row in enumerate(data):
        m = int(np.isnan(row).sum())
        if m:
            assert_visible_distribution(draws[:, :, start:start + m], conditional_log_p(params, row), label=f"row {k}")
        start += m
    # negative control: the last row's five cells do not follow what they would with its observed cell flipped
    flipped = data[3].copy()
    flipped[0] = 1.0 - flipped[0]
    with pytest.raises(AssertionError):
        assert_visible_distribution(draws[:, :, -5:], conditional_log_p(params, flipped), label="wrong datum")


def test_same_seed_same_draws(params):
    with pm.Model():
        RBM("v", params.W, params.vbias, params.hbias, observed=np.ma.masked_invalid(gappy_data()))
        a, b = (pm.sample(draws=30, tune=30, chains=1, random_seed=5, progressbar=False,
                          compute_convergence_checks=False) for _ in range(2))
    np.testing.assert_array_equal(a.posterior["v_unobserved"].values, b.posterior["v_unobserved"].values)


def test_what_it_leaves_to_pymc(params):
    data = gappy_data()
    with pm.Model() as likelihood:  # another term involves the joined value: PyMC's Metropolis keeps the cells
        v = RBM("v", params.W, params.vbias, params.hbias, observed=np.ma.masked_invalid(data))
        pm.Normal("y", v.sum(), 1.0, observed=3.0)
        missing = likelihood["v_unobserved"]
        assert is_imputed_rbm_variable(missing)
        assert ImputedCells.competence(missing) == Competence.INCOMPATIBLE
        assert list(assign_step_methods(likelihood)[1]) == [pm.Metropolis]
    with pm.Model() as random:
        s = pm.HalfNormal("s")
        RBM("v", s * params.W, params.vbias, params.hbias, observed=np.ma.masked_invalid(data), log_partition="exact")
        assert ImputedCells.competence(random["v_unobserved"]) == Competence.INCOMPATIBLE
        with pytest.raises(ValueError, match="constants or data"):
            ImputedCells([random["v_unobserved"]])
    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias)
        assert not is_imputed_rbm_variable(v) and ImputedCells.competence(v) == Competence.INCOMPATIBLE
        with pytest.raises(ValueError, match="missing cells"):
            ImputedCells([v])


# ----------------------------------------------------------------------------- categorical RBMs
def _categorical():
    from pymc_rbm.categorical import CategoricalRBMParams

    return CategoricalRBMParams.random(4, 3, 2, scale=2.0, rng=0)


def gappy_labels():
    """Four rows of labels in {0, 1, 2}: one cell missing, two, none, all four (NaN)."""
    data = np.array([[0, 1, 2, 1], [2, 0, 1, 1], [1, 2, 0, 0], [1, 1, 0, 2]], dtype=float)
    data[0, 2] = np.nan
    data[1, [0, 3]] = np.nan
    data[3] = np.nan
    return data


def categorical_conditional(params, row):
    """``p(v_M | v_O)`` over the ``3**|M|`` labellings of the missing cells (lexicographic), for a row with NaN at M."""
    from pymc_rbm.categorical import free_energy as categorical_free_energy

    missing = np.isnan(row)
    states = np.array(list(itertools.product(range(params.n_states), repeat=int(missing.sum()))))
    full = np.tile(np.nan_to_num(row), (states.shape[0], 1))
    full[:, missing] = states
    log_p = -categorical_free_energy(full.astype(np.int64), params)
    p = np.exp(log_p - log_p.max())
    return p / p.sum()


def assert_label_distribution(draws, p, q, *, z=5.0, label=""):
    """Each labelling of probability above 0.01 is drawn as often as ``p`` says, within ``z`` ESS-based standard
    errors (the standard error of the frequency of a state is ``sqrt(p (1 - p) / ESS)``, ESS that of its indicator)."""
    m = draws.shape[-1]
    idx = draws.astype(np.int64) @ (q ** np.arange(m - 1, -1, -1))
    frequent = np.flatnonzero(p > 0.01)
    indicators = (idx[..., None] == frequent).astype(np.float64)
    freq = indicators.mean(axis=(0, 1))
    se = np.sqrt(p[frequent] * (1 - p[frequent]) / ess(indicators))
    zs = np.abs(freq - p[frequent]) / se
    assert zs.max() < z, f"{label}: frequencies {freq} vs exact {p[frequent]}: |z| up to {zs.max():.2f}"


@pytest.mark.filterwarnings("ignore:Data in v contains missing values")
def test_categorical_missing_cells_are_imputed_from_each_rows_conditional():
    from pymc_rbm.categorical import CategoricalRBM

    params, data = _categorical(), gappy_labels()
    observed = np.ma.masked_invalid(data)
    with pm.Model() as model:
        CategoricalRBM("v", params.W, params.vbias, params.hbias, observed=observed)
        missing = model["v_unobserved"]
        assert is_imputed_rbm_variable(missing) and ImputedCells.competence(missing) == Competence.IDEAL
        assert list(assign_step_methods(model)[1]) == [ImputedCells]
        idata = pm.sample(draws=2000, tune=300, chains=2, cores=1, random_seed=3, progressbar=False,
                          compute_convergence_checks=False)
    draws, joined = idata.posterior["v_unobserved"].values, idata.posterior["v"].values
    seen = ~np.isnan(data)
    np.testing.assert_array_equal(joined[..., seen], np.broadcast_to(data[seen], joined.shape[:2] + (seen.sum(),)))
    start = 0
    for k, row in enumerate(data):
        m = int(np.isnan(row).sum())
        if m:
            assert_label_distribution(draws[:, :, start:start + m], categorical_conditional(params, row), 3,
                                      label=f"row {k}")
        start += m
    # negative control: row 1's two cells do not follow the conditional they would have with its datum changed
    changed = data[1].copy()
    changed[1] = 2.0
    with pytest.raises(AssertionError):
        assert_label_distribution(draws[:, :, 1:3], categorical_conditional(params, changed), 3, label="wrong datum")


@pytest.mark.filterwarnings("ignore:Data in v contains missing values")
def test_categorical_missing_cells_with_random_weights_are_left_to_pymc():
    from pymc_rbm.categorical import CategoricalRBM

    params = _categorical()
    with pm.Model() as model:
        s = pm.HalfNormal("s")
        CategoricalRBM("v", s * params.W, params.vbias, params.hbias, observed=np.ma.masked_invalid(gappy_labels()),
                       log_partition="exact")
        assert ImputedCells.competence(model["v_unobserved"]) == Competence.INCOMPATIBLE
        with pytest.raises(ValueError, match="constants or data"):
            ImputedCells([model["v_unobserved"]])

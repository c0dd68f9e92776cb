"""ImputedCells: the missing cells of an RBM observed with gaps, against each row's exact conditional.

With cells missing here and there, PyMC makes ``v_unobserved`` (every row's
missing cells, in row order); given the observed cells each row's missing
ones follow ``p(v_M | v_O) ∝ p_RBM(v_M, v_O)``, enumerable on a small RBM.
``pm.sample()`` must give the variable to :class:`ImputedCells` and its draws
must follow those conditionals; where another term involves the missing
cells, or the weights are random, the step must leave them to PyMC.
"""

from __future__ import annotations

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

from ._stats import assert_visible_distribution

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

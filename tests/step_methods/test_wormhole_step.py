"""WormholeMetropolis through pm.sample: mode hopping that local samplers cannot do, exactly.

- A two-component Gaussian mixture (weights 0.8 / 0.2, modes 16 standard
  deviations apart): NUTS alone stays in one mode; NUTS plus each wormhole
  kind recovers the weights within 0.03.
- An RBM fitted to the four Artificial Modes (p_flip = 0.01): flip-the-state
  alone rarely changes class; with region wormholes the chains visit all four
  classes with the exact masses (enumeration of all 2**16 visible states).
- Inside a larger model the step accepts with the whole model's density:
  its transitions from every state of a tiny RBM with an extra model term
  follow the exact matrix of that target.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytest
from pymc.sampling.mcmc import assign_step_methods

from pymc_rbm import RBM, ExactDraws, FlipTheState, RBMParams, WormholeMetropolis
from pymc_rbm.datasets import artificial_modes, classify_modes
from pymc_rbm.diagnostics import class_changes
from pymc_rbm.energy import free_energy
from pymc_rbm.estimators import binary_states, log_marginal_visible
from pymc_rbm.kernels import RegionWormholes, acceptance_probability
from pymc_rbm.testing import assert_frequencies, state_index
from pymc_rbm.training import SGD, fit

SAMPLE = dict(chains=1, cores=1, progressbar=False, compute_convergence_checks=False)


def stat(idata, name):
    """A sampler stat as an array (draws, ...), whatever the trace stored (scalars or object vectors)."""
    return np.stack(list(idata.sample_stats[name].values[0]))


# ------------------------------------------------- continuous: NUTS + wormholes
WEIGHTS = [0.8, 0.2]
MUS = np.array([-8.0, 8.0])


@pytest.fixture(scope="module")
def mixture_data():
    rng = np.random.default_rng(0)
    k = rng.choice(2, size=400, p=WEIGHTS)
    return (MUS[k] + rng.normal(size=400))[:, None]


def sample_mixture(data=None, kind=None, draws=3000, seed=1, **kwargs):
    with pm.Model():
        x = pm.NormalMixture("x", w=WEIGHTS, mu=MUS, sigma=1.0, shape=1)
        steps = [pm.NUTS([x])]
        if kind is not None:
            steps.append(WormholeMetropolis([x], data=data, kind=kind, **kwargs))
        idata = pm.sample(draws, tune=500, step=steps, random_seed=seed, **SAMPLE)
    return idata


def test_nuts_alone_stays_in_one_mode():
    x = sample_mixture().posterior["x"].values.ravel()
    assert (x < 0).all() or (x > 0).all()


@pytest.mark.parametrize(
    "kind, options, draws",
    [("point", {}, 6000), ("region", {}, 6000), ("optimization", {"n_descent": 3}, 4000)],
)
def test_nuts_plus_wormholes_recovers_the_weights(mixture_data, kind, options, draws):
    """Within 0.03 (the spread over seeds is about 0.01).

    The optimization-based move is the most expensive per draw; it gets two
    data points, one at each mode, so that every proposal crosses and fewer
    draws suffice (with data from the mixture only a third of the offsets cross).
    """
    data = MUS[:, None] if kind == "optimization" else mixture_data
    idata = sample_mixture(data, kind, draws=draws, **options)
    x = idata.posterior["x"].values.ravel()
    assert abs((x < 0).mean() - WEIGHTS[0]) < 0.03
    accepted, changed = stat(idata, "accepted"), stat(idata, "region_changed")
    assert stat(idata, "attempted").all()
    crossings = (np.sign(x[1:]) != np.sign(x[:-1])).sum()
    assert crossings > 50
    assert np.isfinite(stat(idata, "log_alpha")).all()
    if kind == "region":
        assert (accepted & changed).sum() >= crossings  # every mode change is an accepted region change


# ---------------------------------------------- binary: the four artificial modes
def fit_exact(data, n_hidden, *, n_updates=500, learning_rate=0.1, momentum=0.9, seed=0) -> RBMParams:
    """Full-batch gradient ascent on the exact log-likelihood (small models only), by ``training.fit``."""
    return fit(data, n_hidden, method="exact", n_updates=n_updates, learning_rate=learning_rate, rng=seed,
               progress=False, optimizer=SGD(momentum=momentum), evaluation=None).params


@pytest.fixture(scope="module")
def modes_rbm():
    data = artificial_modes(200, p_flip=0.01, rng=0)
    params = fit_exact(data.astype(np.float64), 6, n_updates=500)
    p = np.exp(log_marginal_visible(params))
    cls = classify_modes(binary_states(16))
    masses = np.array([p[cls == k].sum() for k in range(4)])
    return params, data, masses / masses.sum()


def sample_modes(params, data, *, wormholes: bool, n_chains=8, draws=500):
    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias, shape=(n_chains, 16), initval=data[:n_chains])
        steps = [FlipTheState([v])]
        if wormholes:
            steps.append(WormholeMetropolis([v], data=data, kind="region", n_regions=4))
        idata = pm.sample(draws, tune=0, step=steps, random_seed=3, **SAMPLE)
    return idata


def test_region_wormholes_visit_all_four_modes_with_the_exact_masses(modes_rbm):
    params, data, masses = modes_rbm
    assert masses.min() > 0.15 and masses.max() - masses.min() > 0.05  # unequal masses, all substantial

    alone = sample_modes(params, data, wormholes=False).posterior["v"].values[0]  # (draws, chains, 16)
    with_worm = sample_modes(params, data, wormholes=True)
    v = with_worm.posterior["v"].values[0]
    n_steps = v.shape[0] * v.shape[1]

    changes_alone = class_changes(np.swapaxes(alone, 0, 1)).n_changes.sum()
    changes_worm = class_changes(np.swapaxes(v, 0, 1)).n_changes.sum()
    assert changes_alone < 0.01 * n_steps  # flip-the-state alone: rare class changes
    assert changes_worm > 0.3 * n_steps

    cls = classify_modes(v)
    freq = np.bincount(cls[cls >= 0], minlength=4) / (cls >= 0).sum()
    np.testing.assert_allclose(freq, masses, atol=0.04)
    jumps = stat(with_worm, "accepted") & stat(with_worm, "region_changed")
    assert jumps.shape == (v.shape[0], v.shape[1]) and jumps.mean() > 0.3


# --------------------------------------------------- exact inside a larger model
def test_step_follows_the_exact_matrix_of_the_whole_model():
    """A tiny RBM times an extra factor L(v): the step's transitions match the matrix for p(v) L(v)."""
    params = RBMParams.random(4, 2, scale=1.5, rng=7)
    a = np.array([0.7, -1.2, 0.4, 1.5])
    moves = RegionWormholes([[0, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 1]], binary=True, radius=1)  # overlapping
    with pm.Model() as model:
        v = RBM("v", params.W, params.vbias, params.hbias)
        pm.Potential("extra", pm.math.dot(v, a) ** 2 / 4)
        step = WormholeMetropolis([v], proposal=moves)
    states = binary_states(4).astype(np.int64)
    log_target = -free_energy(states, params) + (states @ a) ** 2 / 4
    T = np.zeros((16, 16))
    for r, x in enumerate(states):
        targets, probs, log_q = moves.proposal_distribution(x)
        idx = state_index(targets)
        np.add.at(T[r], idx, probs * acceptance_probability(log_target[idx] - log_target[r] + log_q))
        T[r, r] += 1 - T[r].sum()
    np.testing.assert_allclose((np.exp(log_target) / np.exp(log_target).sum()) @ T,
                               np.exp(log_target) / np.exp(log_target).sum(), atol=1e-12)

    step.rng = np.random.default_rng(0)
    point = model.initial_point()
    counts = np.zeros((16, 16), dtype=np.int64)
    for r, x in enumerate(states):
        for _ in range(250):
            out, _ = step.step({**point, "v": x.copy()})
            counts[r, state_index(out["v"])] += 1
    assert_frequencies(counts, T)


# ------------------------------------------------------------ PyMC integration
def test_wormholes_are_never_the_default_for_rbm_variables():
    params = RBMParams.random(5, 3, rng=0)
    with pm.Model() as model:
        RBM("v", params.W, params.vbias, params.hbias)
        _, selected = assign_step_methods(model)
    assert list(selected) == [ExactDraws]  # a smaller layer this small is enumerated
    assert WormholeMetropolis.competence(model.free_RVs[0]) == pm.step_methods.compound.Competence.INCOMPATIBLE


def test_jump_probability_and_stats(mixture_data):
    with pm.Model() as model:
        x = pm.NormalMixture("x", w=WEIGHTS, mu=MUS, sigma=1.0, shape=1)
        step = WormholeMetropolis([x], data=mixture_data, jump_probability=0.0)
    point = model.initial_point()
    out, (stats,) = step.step(point)
    assert out["x"] == point["x"] and not stats["attempted"] and np.isnan(stats["log_alpha"])
    assert set(stats) == {"attempted", "accepted", "region_changed", "log_alpha"}
    with pm.Model():
        x = pm.NormalMixture("x", w=WEIGHTS, mu=MUS, sigma=1.0, shape=1)
        steps = [pm.NUTS([x]), WormholeMetropolis([x], data=mixture_data, jump_probability=0.3)]
        idata = pm.sample(300, tune=50, step=steps, random_seed=5, **SAMPLE)
    assert 0.2 < stat(idata, "attempted").mean() < 0.4


def test_same_seed_same_trace(mixture_data):
    runs = [sample_mixture(mixture_data, "region", draws=100, seed=11).posterior["x"].values for _ in range(2)]
    np.testing.assert_array_equal(*runs)
    assert (runs[0] < 0).any() and (runs[0] > 0).any()


def test_bad_input_gets_a_clear_error(mixture_data):
    params = RBMParams.random(5, 3, rng=0)
    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias)
        x = pm.Normal("x", shape=2)
        with pytest.raises(ValueError, match="units"):
            WormholeMetropolis([v], data=np.zeros((4, 3), dtype=int))
        with pytest.raises(ValueError, match="kind"):
            WormholeMetropolis([v], data=np.zeros((4, 5), dtype=int), kind="teleport")
        with pytest.raises(ValueError, match="continuous"):
            WormholeMetropolis([v], data=np.eye(5, dtype=int), kind="optimization")
        with pytest.raises(ValueError, match="binary"):
            WormholeMetropolis([v], data=np.full((4, 5), 0.5))
        with pytest.raises(ValueError, match="not a mix"):
            WormholeMetropolis([v, x], data=np.zeros((4, 7)))
        with pytest.raises(ValueError, match="needs data"):
            WormholeMetropolis([x])
        with pytest.raises(ValueError, match="jump_probability"):
            WormholeMetropolis([x], data=np.eye(2), jump_probability=2.0)

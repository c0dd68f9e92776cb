"""ReplicaExchange is exact on the extended space of its replicas, and what pm.sample picks by default.

The extended state of a ladder of ``K`` replicas of a tiny RBM is listed
with the harness of :mod:`pymc_rbm.testing` (replica 0 the most significant
digits: visible parts first, then hidden parts). One round is a sweep of
every replica (hot: the RBM kernel at its β; cold: the hidden update and the
informed visible move under ``L``) and a swap round of one parity. Each must
leave ``Π = Π_{r<K-1} p_{β_r}(x_r) · p(x_{K-1}) L(v_{K-1}) / const``
invariant; a swap ratio that forgets ``L`` must fail. The step itself, run
from every extended state many times, must follow the matrices' rows.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytest

from pymc_rbm import RBM, FlipTheState, LadderAdaptation, RBMParams, ReplicaExchange
from pymc_rbm import testing as ht
from pymc_rbm.datasets import bars_and_stripes, bundled_rbm
from pymc_rbm.energy import energy
from pymc_rbm.estimators import binary_states
from pymc_rbm.enumeration import log_marginal_visible
from pymc_rbm.kernels import RBMState
from pymc_rbm.kernels.operators import operator_alpha
from pymc_rbm.kernels.tempering import TemperedState
from pymc_rbm.step_methods.tempered import INFORMED_MAX_ALPHA

NV, NH = 2, 1
C = np.array([1.2, -0.8])
D = 2.0
BETAS = np.array([0.0, 0.4, 1.0])
#: With L the RBM's ladder [0.4, 1] gets the cold replica (the RBM times L, also at beta = 1) above it.
LADDER_L = np.array([0.4, 1.0])
REPLICAS_L = np.array([0.4, 1.0, 1.0])


def log_rest(v):
    v = np.asarray(v, dtype=np.float64)
    return v @ C + D * v[..., 0] * v[..., 1]


@pytest.fixture(scope="module")
def params():
    return RBMParams.random(NV, NH, scale=2.5, rng=5)


def split(pv, ph, k):
    """Replica parts of listed extended states: lists of (n, NV) and (n, NH) arrays."""
    return [pv[:, r * NV:(r + 1) * NV] for r in range(k)], [ph[:, r * NH:(r + 1) * NH] for r in range(k)]


def extended_index(vs, hs):
    return ht.joint_index(np.concatenate(vs, axis=1), np.concatenate(hs, axis=1))


def fields(reference):
    """The reference's visible and hidden fields ``(b, c)``: None is the uniform one, an array ``b`` has
    its hidden units in a zero field, a pair is both layers' fields."""
    if isinstance(reference, tuple):
        return reference
    return (np.zeros(NV) if reference is None else reference), np.zeros(NH)


def path_params(params, beta, reference=None):
    """The RBM of the point ``β`` of the path from independent units in the fields ``reference`` (None: 0)."""
    b, c = fields(reference)
    return RBMParams(beta * params.W, beta * params.vbias + (1.0 - beta) * b, beta * params.hbias + (1.0 - beta) * c)


def extended_target(params, betas, with_rest, reference=None):
    pv, ph = ht.joint_states(len(betas) * NV, len(betas) * NH)
    vs, hs = split(pv, ph, len(betas))
    b, c = fields(reference)
    log_p = sum(-beta * energy(v, h, params) + (1.0 - beta) * (v @ b + h @ c) for beta, v, h in zip(betas, vs, hs))
    if with_rest:
        log_p = log_p + log_rest(vs[-1])
    p = np.exp(log_p - log_p.max())
    return p / p.sum()


def sweep_matrix(params, betas, with_rest, kernel="flip", rest=log_rest, reference=None, scan=None):
    """Every replica moved independently: the product of per-replica matrices over the extended states
    (``scan``: the cold replica's visible move a scan of single-unit updates, as for ``v @ B`` readouts, with
    the conditionals that :func:`~pymc_rbm.testing.scan_visible_matrix` calls ``scan``)."""
    k = len(betas)
    pv, ph = ht.joint_states(k * NV, k * NH)
    vs, hs = split(pv, ph, k)
    if reference is None:
        mats = [ht.transition_matrix(params, kernel, b) for b in betas]
    else:
        mats = [ht.transition_matrix(path_params(params, b, reference), kernel) for b in betas]
    if with_rest:
        t_h, _ = ht.layer_matrices(params, kernel)
        mats[-1] = t_h @ (ht.scan_visible_matrix(params, rest, kernel, correction=scan) if scan else
                          ht.informed_visible_matrix(params, rest, min(operator_alpha(kernel), INFORMED_MAX_ALPHA)))
    T = np.ones((pv.shape[0], pv.shape[0]))
    for m, v, h in zip(mats, vs, hs):
        idx = ht.joint_index(v, h)
        T *= m[idx[:, None], idx[None, :]]
    return T


def swap_matrix(params, betas, parity, with_rest, forget_rest=False, rest=log_rest, reference=None):
    """One swap round of the given parity (one pair per parity for K <= 3), the cold pair carrying L;
    swaps by ``U = E + b·v + c·h`` (the path from the reference's fields)."""
    k = len(betas)
    pv, ph = ht.joint_states(k * NV, k * NH)
    vs, hs = split(pv, ph, k)
    n = pv.shape[0]
    T = np.zeros((n, n))
    pairs = list(range(parity, k - 1, 2))
    assert len(pairs) <= 1
    if not pairs:
        return np.eye(n)
    (r,) = pairs
    b, c = fields(reference)
    u_up = energy(vs[r + 1], hs[r + 1], params) + vs[r + 1] @ b + hs[r + 1] @ c
    u_low = energy(vs[r], hs[r], params) + vs[r] @ b + hs[r] @ c
    log_ratio = (betas[r + 1] - betas[r]) * (u_up - u_low)
    if with_rest and r + 1 == k - 1 and not forget_rest:
        log_ratio += rest(vs[r]) - rest(vs[r + 1])
    accept = np.exp(np.minimum(log_ratio, 0.0))
    vs2, hs2 = list(vs), list(hs)
    vs2[r], vs2[r + 1], hs2[r], hs2[r + 1] = vs[r + 1], vs[r], hs[r + 1], hs[r]
    T[np.arange(n), extended_index(vs2, hs2)] += accept
    T[np.arange(n), np.arange(n)] += 1.0 - accept
    return T


@pytest.mark.parametrize("with_rest", [False, True], ids=["alone", "with-L"])
def test_each_round_leaves_the_extended_target_invariant(params, with_rest):
    betas = REPLICAS_L if with_rest else BETAS
    pi = extended_target(params, betas, with_rest)
    sweep = sweep_matrix(params, betas, with_rest)
    swaps = [swap_matrix(params, betas, p, with_rest) for p in (0, 1)]
    ht.assert_stationary(pi, sweep)
    for s in swaps:
        ht.assert_stationary(pi, s)
    ht.assert_converges(pi, sweep @ swaps[0] @ sweep @ swaps[1])


REFERENCE = np.array([1.2, -0.7])
HIDDEN_REFERENCE = np.array([-0.9])


@pytest.mark.parametrize("layers", ["visible", "both"])
@pytest.mark.parametrize("with_rest", [False, True], ids=["alone", "with-L"])
def test_each_round_from_a_reference_leaves_the_extended_target_invariant(params, with_rest, layers):
    """Hot rungs on the path from independent units in fields b (and c): p_β ∝ exp(-β E + (1 - β)(b·v + c·h)).
    Swaps, and sweeps, that forget the reference's last layer (E alone; b·v without c·h) must fail."""
    betas = REPLICAS_L if with_rest else BETAS
    reference, forgetful = (REFERENCE, None) if layers == "visible" else ((REFERENCE, HIDDEN_REFERENCE), REFERENCE)
    pi = extended_target(params, betas, with_rest, reference)
    sweep = sweep_matrix(params, betas, with_rest, reference=reference)
    swaps = [swap_matrix(params, betas, p, with_rest, reference=reference) for p in (0, 1)]
    ht.assert_stationary(pi, sweep)
    for s in swaps:
        ht.assert_stationary(pi, s)
    ht.assert_converges(pi, sweep @ swaps[0] @ sweep @ swaps[1])
    with pytest.raises(AssertionError, match="not stationary"):
        ht.assert_stationary(pi, swap_matrix(params, betas, 0, with_rest, reference=forgetful))
    with pytest.raises(AssertionError, match="not stationary"):
        ht.assert_stationary(pi, sweep_matrix(params, betas, with_rest, reference=forgetful))


def test_a_cold_swap_that_forgets_L_is_caught(params):
    pi = extended_target(params, REPLICAS_L, True)
    with pytest.raises(AssertionError, match="not stationary"):
        ht.assert_stationary(pi, swap_matrix(params, REPLICAS_L, 1, True, forget_rest=True))


def ladder_model(params, n_rows, with_rest):
    shape = (n_rows, NV) if n_rows else (NV,)
    with pm.Model() as model:
        v = RBM("v", params.W, params.vbias, params.hbias, shape=shape)
        if with_rest:  # a cumulative sum: not split by rows, so L takes the general path (row by row)
            pm.Potential("rest", pm.math.cumsum(v @ C + D * v[..., 0] * v[..., 1])[-1])
    return model


def start_round(step, vs, hs, parity):
    """Put the step's replicas at the given states (as when resuming) so that its next draw is one round."""
    step._replicas = TemperedState(np.stack(vs), np.stack(hs), parity)
    step._reset_counters()
    cold = vs[-1].astype(np.int64)
    step.carried.rest = None
    step._tilt = None
    return cold


def one_round(step, betas, parity):
    """A kernel for the harness: one round of the step from each listed extended state, all in one batch."""
    k = len(betas)

    def kernel_fn(rng, state):
        vs, hs = split(state.v.astype(np.float64), state.h.astype(np.float64), k)
        step.step({"v": start_round(step, vs, hs, parity)})
        rep = step._replicas
        return RBMState(np.concatenate(list(rep.v), axis=1), np.concatenate(list(rep.h), axis=1))

    return kernel_fn


def one_round_each(step, betas, parity):
    """The same for a single-chain variable: one draw per listed state, in a loop."""
    k = len(betas)

    def kernel_fn(rng, state):
        vs, hs = split(state.v.astype(np.float64), state.h.astype(np.float64), k)
        out_v, out_h = [], []
        for i in range(state.v.shape[0]):
            row_v, row_h = [x[i:i + 1] for x in vs], [x[i:i + 1] for x in hs]
            cold = start_round(step, row_v, row_h, parity)
            step.step({"v": cold[0]})
            rep = step._replicas
            out_v.append(rep.v[:, 0].reshape(-1))
            out_h.append(rep.h[:, 0].reshape(-1))
        return RBMState(np.array(out_v), np.array(out_h))

    return kernel_fn


N_DRAWS = 300


@pytest.mark.parametrize("reference", ["mean_field", "zero", REFERENCE], ids=["mean-field", "uniform", "given"])
@pytest.mark.parametrize("parity", [0, 1])
def test_step_follows_the_round_matrix_without_L(params, parity, reference):
    n_rows = 2 ** (len(BETAS) * (NV + NH)) * N_DRAWS
    with ladder_model(params, n_rows, False):
        step = ReplicaExchange(betas=BETAS, adapt=False, sweeps=1, reference=reference)
    step.setup_chain(np.random.default_rng(20 + parity), 0, 1)
    b = (step.reference_vbias, step.reference_hbias)
    assert (np.abs(b[0]).max() > 0.1) == (not isinstance(reference, str) or reference == "mean_field")
    assert (np.abs(b[1]).max() > 0.1) == (isinstance(reference, str) and reference == "mean_field")
    T = sweep_matrix(params, BETAS, False, reference=b) @ swap_matrix(params, BETAS, parity, False, reference=b)
    check = ht.empirical_transition_check(one_round(step, BETAS, parity), T, 3 * NV, 3 * NH, n_draws=N_DRAWS)
    assert check.n_impossible == 0


@pytest.mark.parametrize("parity", [0, 1])
def test_numpy_rounds_follow_the_round_matrix_from_the_mean_field_reference(params, parity):
    """The same without compiled rounds: the path's sweeps carry the hidden fields, the swaps ``U = E + b·v + c·h``."""
    n_rows = 2 ** (len(BETAS) * (NV + NH)) * N_DRAWS
    with ladder_model(params, n_rows, False):
        step = ReplicaExchange(betas=BETAS, adapt=False, sweeps=1, reference="mean_field", compiled=False)
    assert not step.compiled_rounds
    step.setup_chain(np.random.default_rng(40 + parity), 0, 1)
    b = (step.reference_vbias, step.reference_hbias)
    assert np.abs(b[1]).max() > 0.1
    T = sweep_matrix(params, BETAS, False, reference=b) @ swap_matrix(params, BETAS, parity, False, reference=b)
    check = ht.empirical_transition_check(one_round(step, BETAS, parity), T, 3 * NV, 3 * NH, n_draws=N_DRAWS)
    assert check.n_impossible == 0


def test_a_mean_field_solution_among_equals_keeps_the_hidden_units_uniform():
    """Bars and stripes: the mean-field fixed points are patterns of about equal bound, so the reference is the
    visible magnetisations of one of them alone (as the estimators' base), with no hidden fields."""
    from pymc_rbm.estimators.base_rate import base_rate_vbias, mean_field_fields
    from pymc_rbm.step_methods.ladder import MEAN_FIELD_CLEAR_GAP

    model = bundled_rbm()
    assert mean_field_fields(model).gap < MEAN_FIELD_CLEAR_GAP
    with pm.Model():
        v = RBM("v", model.W, model.vbias, model.hbias)
        step = ReplicaExchange([v], reference="mean_field")
    np.testing.assert_array_equal(step.reference_vbias, base_rate_vbias(model))
    assert not np.any(step.reference_hbias)


def test_a_reference_in_one_mode_does_not_collapse_a_ladder_the_uniform_one_needs(params):
    """Tuning measured the uniform reference above ``collapse_below`` and the mean-field one below it: the ladder
    keeps its rungs (a reference that sits in one mode can show a low barrier because its ladder stays there)."""
    with ladder_model(params, 0, False):
        step = ReplicaExchange()
    step.setup_chain(np.random.default_rng(3), 64, 10)
    step._init_replicas(np.zeros((1, NV)))

    def adapt_after_easy_swaps(uniform_barrier):
        step.reference_trial, step.reference_trial_barrier = 2, uniform_barrier
        step._use_reference("mean_field")
        k = step.n_temperatures
        step.swap_sum, step.swap_n = np.full(k - 1, 9.9), np.full(k - 1, 10.0)  # acceptance 0.99 everywhere
        step._adapt_ladder()

    adapt_after_easy_swaps(3.0)
    assert step.barrier < step.collapse_below and step.n_temperatures >= 2
    adapt_after_easy_swaps(1.0)  # the uniform reference found the model easy too: collapse
    assert step.n_temperatures == 1


@pytest.mark.parametrize("parity", [0, 1])
def test_step_follows_the_round_matrix_with_L(params, parity):
    """A single chain on the ladder [0.4, 1] with the cold replica above it: the informed cold move (its tilt
    kept between sweeps), then a hot swap (parity 0) or the swap that carries L (parity 1)."""
    n_draws = 40
    with ladder_model(params, 0, True):
        step = ReplicaExchange(betas=LADDER_L, adapt=False, sweeps=1)
    assert step.corrected and np.array_equal(step.betas, REPLICAS_L)
    step.setup_chain(np.random.default_rng(7 + parity), 0, 1)
    b = step.reference_vbias
    T = sweep_matrix(params, REPLICAS_L, True, reference=b) @ swap_matrix(params, REPLICAS_L, parity, True, reference=b)
    ht.empirical_transition_check(one_round_each(step, REPLICAS_L, parity), T, 3 * NV, 3 * NH, n_draws=n_draws)


def test_batched_step_follows_the_round_matrix_with_L(params):
    """A batch of ladders (one per row, L evaluated row by row): the cold replica right above beta = 1."""
    ladder, replicas, n_draws = np.array([0.0, 1.0]), np.array([0.0, 1.0, 1.0]), 30
    n_rows = 2 ** (3 * (NV + NH)) * n_draws
    with ladder_model(params, n_rows, True):
        step = ReplicaExchange(betas=ladder, adapt=False, sweeps=1)
    step.setup_chain(np.random.default_rng(9), 0, 1)
    b = step.reference_vbias
    T = sweep_matrix(params, replicas, True, reference=b) @ swap_matrix(params, replicas, 1, True, reference=b)
    ht.empirical_transition_check(one_round(step, replicas, 1), T, 3 * NV, 3 * NH, n_draws=n_draws)


# ------------------------------------------------------------- pm.sample
def test_pm_sample_picks_replica_exchange_for_constant_parameters(params):
    """Where the other terms couple the rows (ExactDraws would evaluate them row by row)."""
    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias, shape=(2, params.W.shape[0]))
        pm.Normal("y", v.sum(), 1.0, observed=1.0)
        idata = pm.sample(draws=20, tune=40, chains=1, progressbar=False, compute_convergence_checks=False,
                          random_seed=1)
    assert "n_temperatures" in idata.sample_stats


def test_random_parameters_get_flip_the_state_and_a_clear_refusal(params):
    with pm.Model():
        s = pm.HalfNormal("s")
        v = RBM("v", s * params.W, params.vbias, params.hbias, log_partition="exact")
        assert ReplicaExchange.competence(v) == pm.step_methods.compound.Competence.INCOMPATIBLE
        assert FlipTheState.competence(v) == pm.step_methods.compound.Competence.PREFERRED
        with pytest.raises(ValueError, match="constants or data"):
            ReplicaExchange([v])


def test_bad_options_are_refused(params):
    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias)
        for kwargs, match in [
            ({"betas": [0.0, 0.5]}, "end at beta = 1"),
            ({"betas": [0.5, 0.2, 1.0]}, "strictly increasing"),
            ({"sweeps": "many"}, "auto"),
            ({"operator": "metropolis"}, "operator"),
            ({"adapt": "yes"}, "LadderAdaptation"),
            ({"informed": "yes"}, "True or False"),
        ]:
            with pytest.raises(ValueError, match=match):
                ReplicaExchange([v], **kwargs)
        for kwargs, match in [({"max_temperatures": 1}, "max_temperatures"), ({"max_temperatures": 2.0}, "integer"),
                              ({"collapse_below": -1.0}, "collapse_below"), ({"collapse_below": np.nan}, "finite")]:
            with pytest.raises(ValueError, match=match):
                LadderAdaptation(**kwargs)
        with pytest.raises(TypeError, match="max_temperatures"):
            ReplicaExchange([v], max_temperatures=8)  # it is LadderAdaptation's
        step = ReplicaExchange([v], adapt=LadderAdaptation(max_temperatures=8, collapse_below=0.5))
        assert step.adapt and (step.max_temperatures, step.collapse_below) == (8, 0.5)
        fixed = ReplicaExchange([v], betas=np.linspace(0.0, 1.0, 40), adapt=False)
        assert fixed.max_temperatures == 41  # a fixed ladder has room for its rungs and the cold replica


def sample_bundled(seed, **kwargs):
    params = bundled_rbm()
    with pm.Model():
        RBM("v", params.W, params.vbias, params.hbias)
        # named: pm.sample() alone picks ExactDraws for an RBM this small
        idata = pm.sample(progressbar=False, compute_convergence_checks=False, random_seed=seed, cores=1,
                          step=ReplicaExchange(), **kwargs)
    return params, idata


def total_variation(params, draws):
    log_p = log_marginal_visible(params)
    p = np.exp(log_p - log_p.max())
    p /= p.sum()
    idx = ht.state_index(draws.reshape(-1, params.n_visible))
    q = np.bincount(idx, minlength=p.size) / idx.size
    return 0.5 * np.abs(p - q).sum()


def test_replica_exchange_moves_between_the_modes_of_the_bundled_model():
    """ReplicaExchange's defaults on the sharp bundled model: tuning builds a ladder, and the draws match the exact
    distribution."""
    params, idata = sample_bundled(3, draws=500, tune=500, chains=4)
    stats = idata.sample_stats
    assert int(stats["n_temperatures"].min()) >= 4
    assert float(stats["barrier"].isel(draw=-1).min()) > 2.0
    betas = stats["betas"].values  # frozen after tuning: one ladder in every draw of a chain
    assert all(np.allclose(np.stack(c.tolist()), np.stack(c.tolist())[0], equal_nan=True) for c in betas)
    assert int(stats["round_trips"].isel(draw=-1).min()) >= 20
    assert total_variation(params, idata.posterior["v"].values) < 0.12


def test_the_ladder_collapses_where_tempering_is_not_needed():
    weak = RBMParams.random(8, 4, scale=0.05, rng=2)
    with pm.Model():
        RBM("v", weak.W, weak.vbias, weak.hbias)
        idata = pm.sample(draws=50, tune=200, chains=1, progressbar=False, compute_convergence_checks=False,
                          random_seed=4, step=ReplicaExchange())
    assert idata.sample_stats["n_temperatures"].values[0, -1] == 1


def assert_resumes_exactly(make, tune, n_draws, stop, record, *, at=lambda point, i: point, before_stop=None):
    """Run ``make()``'s step for ``n_draws`` draws (tuning ``tune``); run another for ``stop`` draws and resume a
    third from its ``sampling_state``: each draw's ``record(step, point, stats)`` (a tuple of arrays) is the
    same as in the whole run. ``before_stop(step)`` checks where the stopped step is. Returns the whole run's
    step and the resumed one."""
    model, step = make()
    step.setup_chain(np.random.default_rng(6), tune, 20)
    point, whole = model.initial_point(), []
    for i in range(n_draws):
        point, stats = step.step(at(point, i))
        whole.append(record(step, point, stats))
    model, first = make()
    first.setup_chain(np.random.default_rng(6), tune, 20)
    point = model.initial_point()
    for i in range(stop):
        point, _ = first.step(at(point, i))
    if before_stop is not None:
        before_stop(first)
    state = first.sampling_state
    _, resumed = make()
    resumed.setup_chain(np.random.default_rng(99), tune, 20)  # overwritten by the state
    resumed.sampling_state = state
    for i in range(stop, n_draws):
        point, stats = resumed.step(at(point, i))
        for got, want in zip(record(resumed, point, stats), whole[i], strict=True):
            np.testing.assert_array_equal(got, want)
    return step, resumed


def bundled_maker(**kwargs):
    """``make()`` for :func:`assert_resumes_exactly`: the bundled RBM alone with ``ReplicaExchange(**kwargs)``."""
    params = bundled_rbm()

    def make():
        with pm.Model() as model:
            v = RBM("v", params.W, params.vbias, params.hbias)
            step = ReplicaExchange([v], **kwargs)
        return model, step

    return make


@pytest.mark.parametrize("with_rest", [False, True, "evidence"], ids=["alone", "with-L", "evidence"])
def test_sampling_state_resumes_exactly(with_rest):
    """Stop a chain in tuning, resume a fresh step from its sampling_state: the same draws, the same ladder.

    ``"evidence"``: three rows with per-unit readouts whose scale moves every draw (as NUTS would move it), so
    the hot rungs' frozen evidence must come back with the state."""
    params = bundled_rbm()
    y = np.random.default_rng(2).normal(size=(3, 16))

    def make():
        with pm.Model() as model:
            v = RBM("v", params.W, params.vbias, params.hbias, shape=(3, 16) if with_rest == "evidence" else None)
            if with_rest == "evidence":
                pm.Normal("y", pm.Normal("s", 1.0, 1.0) * v, 1.0, observed=y)
            elif with_rest:
                pm.Normal("y", v[:4].sum(), 1.0, observed=2.0)
            step = ReplicaExchange([v])
        assert step.tilted == (with_rest == "evidence")
        return model, step

    def at(point, i):
        if with_rest == "evidence":
            point["s"] = np.array(0.5 + 0.01 * i)
        return point

    assert_resumes_exactly(make, 64, 84, 30, lambda step, point, stats: (point["v"].copy(), stats[0]["betas"]),
                           at=at)


# --------------------------------------------- the whole posterior tempered
def tempered_params(params, beta):
    return RBMParams(beta * params.W, beta * params.vbias, beta * params.hbias)


def posterior_target(params, betas):
    pv, ph = ht.joint_states(len(betas) * NV, len(betas) * NH)
    vs, hs = split(pv, ph, len(betas))
    log_p = sum(b * (-energy(v, h, params) + log_rest(v)) for b, v, h in zip(betas, vs, hs))
    p = np.exp(log_p - log_p.max())
    return p / p.sum()


def ladder_round_matrix(replica_matrices, parity, swap_log_ratio):
    """One round of a ladder over the extended states: every replica moved by its own matrix, then the swap
    of the round's parity (one pair for K <= 3) accepted with ``swap_log_ratio(r, vs, hs)``."""
    k = len(replica_matrices)
    pv, ph = ht.joint_states(k * NV, k * NH)
    vs, hs = split(pv, ph, k)
    n = pv.shape[0]
    sweep = np.ones((n, n))
    for m, v, h in zip(replica_matrices, vs, hs):
        idx = ht.joint_index(v, h)
        sweep *= m[idx[:, None], idx[None, :]]
    swap = np.eye(n)
    pairs = list(range(parity, k - 1, 2))
    if pairs:
        (r,) = pairs
        accept = np.exp(np.minimum(swap_log_ratio(r, vs, hs), 0.0))
        vs2, hs2 = list(vs), list(hs)
        vs2[r], vs2[r + 1], hs2[r], hs2[r + 1] = vs[r + 1], vs[r], hs[r + 1], hs[r]
        swap = np.zeros((n, n))
        swap[np.arange(n), extended_index(vs2, hs2)] += accept
        swap[np.arange(n), np.arange(n)] += 1.0 - accept
    return sweep @ swap


def posterior_round_matrix(params, betas, parity, forget_rest=False):
    """Every replica makes the informed move of [p L]^beta, then the swaps of U = E - log L."""
    mats = []
    for b in betas:
        pb = tempered_params(params, b)
        t_h, _ = ht.layer_matrices(pb, "flip")
        mats.append(t_h @ ht.informed_visible_matrix(pb, lambda x, b=b: b * log_rest(x), INFORMED_MAX_ALPHA))

    def log_ratio(r, vs, hs):
        u = [energy(v, h, params) - (0.0 if forget_rest else log_rest(v)) for v, h in zip(vs, hs)]
        return (betas[r + 1] - betas[r]) * (u[r + 1] - u[r])

    return ladder_round_matrix(mats, parity, log_ratio)


def test_tempering_the_whole_posterior_is_exact(params):
    pi = posterior_target(params, BETAS)
    rounds = [posterior_round_matrix(params, BETAS, p) for p in (0, 1)]
    for t in rounds:
        ht.assert_stationary(pi, t)
    ht.assert_converges(pi, rounds[0] @ rounds[1])
    with pytest.raises(AssertionError, match="not stationary"):  # swaps that forget L at the hot rungs
        ht.assert_stationary(pi, posterior_round_matrix(params, BETAS, 0, forget_rest=True))


@pytest.mark.parametrize("parity", [0, 1])
def test_step_follows_the_posterior_round_matrix(params, parity):
    with ladder_model(params, 0, True):
        step = ReplicaExchange(betas=BETAS, adapt=False, sweeps=1)
    assert step.can_temper_likelihood and not step.posterior_ladder
    step.setup_chain(np.random.default_rng(30 + parity), 0, 1)
    step.posterior_ladder, step.betas = True, BETAS.copy()
    T = posterior_round_matrix(params, BETAS, parity)
    ht.empirical_transition_check(one_round_each(step, BETAS, parity), T, 3 * NV, 3 * NH, n_draws=40)


def test_tuning_switches_to_the_posterior_ladder_where_the_rbm_needs_tempering():
    """The bundled prior (sharp) with a readout that involves only v: the ladder tempers the whole posterior."""
    params = bundled_rbm()
    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias)
        pm.Normal("y", v[:4].sum() - v[4:8].sum(), 1.5, observed=1.0)
        idata = pm.sample(draws=100, tune=200, chains=1, cores=1, random_seed=1, progressbar=False,
                          compute_convergence_checks=False, step=ReplicaExchange([v]))
    betas = np.stack(idata.sample_stats["betas"].values[0])
    k = idata.sample_stats["n_temperatures"].values[0, -1]
    assert k >= 3 and np.count_nonzero(betas[-1] == 1.0) == 1  # no separate replica of the RBM alone at beta = 1


# ------------------------------------------- other terms that factorise over rows or units
A_ROW = np.array([0.9, -1.3])
Y_UNITS = np.array([0.8, -0.4])


def log_rest_row(v):
    """``log N(0 | v·A + D v_0 v_1, 1)`` up to a constant: a readout of each row (not a sum of per-unit terms)."""
    v = np.asarray(v, dtype=np.float64)
    return -0.5 * (v @ A_ROW + D * v[..., 0] * v[..., 1]) ** 2


def evidence_of(s):
    """Per-unit evidence of ``y_i ~ N(s v_i + 0.3, 1)`` at ``Y_UNITS``: ``log N(y | s + 0.3) - log N(y | 0.3)``."""
    return 0.5 * ((Y_UNITS - 0.3) ** 2 - (Y_UNITS - 0.3 - s) ** 2)


def evidence_target(params, betas, evidence):
    """Replica ``r`` at ``exp(-β_r E(x) + evidence_r·v)``, independent: the extended target."""
    pv, ph = ht.joint_states(len(betas) * NV, len(betas) * NH)
    vs, hs = split(pv, ph, len(betas))
    log_p = sum(-b * energy(v, h, params) + v @ ev for b, ev, v, h in zip(betas, evidence, vs, hs))
    p = np.exp(log_p - log_p.max())
    return p / p.sum()


def evidence_round_matrix(params, betas, evidence, parity, forget_evidence=False):
    """Every replica's flip-the-state sweep of its own target, then the swaps of the round's parity."""
    mats = [ht.transition_matrix(RBMParams(b * params.W, b * params.vbias + ev, b * params.hbias), "flip")
            for b, ev in zip(betas, evidence)]

    def log_ratio(r, vs, hs):
        out = (betas[r + 1] - betas[r]) * (energy(vs[r + 1], hs[r + 1], params) - energy(vs[r], hs[r], params))
        return out if forget_evidence else out + (vs[r] - vs[r + 1]) @ (evidence[r + 1] - evidence[r])

    return ladder_round_matrix(mats, parity, log_ratio)


#: The hot rungs carry the evidence of the shared parameter where the ladder was frozen (s = 1.5), the
#: cold replica that of the current s = -0.7.
FROZEN_S, CURRENT_S = 1.5, -0.7
EVIDENCE_LADDER = np.array([0.0, 1.0, 1.0])


def evidence_model(n_rows, free_s):
    with pm.Model() as model:
        v = RBM("v", *ladder_params(), shape=(n_rows, NV))
        s = pm.Normal("s", 0.0, 1.0) if free_s else CURRENT_S
        pm.Normal("y", s * v + 0.3, 1.0, observed=np.tile(Y_UNITS, (n_rows, 1)))
    return model


def ladder_params():
    p = RBMParams.random(NV, NH, scale=2.5, rng=5)
    return p.W, p.vbias, p.hbias


def test_the_evidence_ladder_is_exact_with_its_shared_parameters_frozen(params):
    """Hot rungs at the frozen evidence, the cold replica at the current one: every round leaves the
    extended target invariant; swaps that ignore the two evidences' difference are caught."""
    evidence = np.array([evidence_of(FROZEN_S), evidence_of(FROZEN_S), evidence_of(CURRENT_S)])
    pi = evidence_target(params, EVIDENCE_LADDER, evidence)
    rounds = [evidence_round_matrix(params, EVIDENCE_LADDER, evidence, p) for p in (0, 1)]
    for t in rounds:
        ht.assert_stationary(pi, t)
    ht.assert_converges(pi, rounds[0] @ rounds[1])
    with pytest.raises(AssertionError, match="not stationary"):
        ht.assert_stationary(pi, evidence_round_matrix(params, EVIDENCE_LADDER, evidence, 1, forget_evidence=True))


def evidence_round(step, k, parity, s):
    """One round of the step from each listed extended state (a batch of rows), the point's s given."""

    def kernel_fn(rng, state):
        vs, hs = split(state.v.astype(np.float64), state.h.astype(np.float64), k)
        point = {"v": start_round(step, vs, hs, parity)}
        if s is not None:
            point["s"] = np.array(s)
        step.step(point)
        rep = step._replicas
        return RBMState(np.concatenate(list(rep.v), axis=1), np.concatenate(list(rep.h), axis=1))

    return kernel_fn


@pytest.mark.parametrize("parity", [0, 1])
def test_step_follows_the_evidence_ladder_with_a_free_shared_parameter(params, parity):
    n_draws = 30
    n_rows = 2 ** (3 * (NV + NH)) * n_draws
    with evidence_model(n_rows, free_s=True):
        step = ReplicaExchange(betas=EVIDENCE_LADDER[:-1], adapt=False, sweeps=1)
    assert step.tilted and step.tilt_frozen and np.array_equal(step.betas, EVIDENCE_LADDER)
    step.setup_chain(np.random.default_rng(40 + parity), 0, 1)
    step.ladder_tilt = np.tile(evidence_of(FROZEN_S), (n_rows, 1))
    evidence = np.array([evidence_of(FROZEN_S), evidence_of(FROZEN_S), evidence_of(CURRENT_S)])
    T = evidence_round_matrix(params, EVIDENCE_LADDER, evidence, parity)
    ht.empirical_transition_check(evidence_round(step, 3, parity, CURRENT_S), T, 3 * NV, 3 * NH, n_draws=n_draws)


def test_step_follows_the_evidence_ladder_when_it_tempers_the_whole_posterior(params):
    """L involves only v: no separate cold replica, every rung carries the same evidence."""
    betas, n_draws = np.array([0.0, 0.5, 1.0]), 30
    n_rows = 2 ** (3 * (NV + NH)) * n_draws
    with evidence_model(n_rows, free_s=False):
        step = ReplicaExchange(betas=betas, adapt=False, sweeps=1)
    assert step.tilted and not step.tilt_frozen and np.array_equal(step.betas, betas)
    step.setup_chain(np.random.default_rng(44), 0, 1)
    evidence = np.tile(evidence_of(CURRENT_S), (3, 1))
    T = evidence_round_matrix(params, betas, evidence, 0)
    ht.empirical_transition_check(evidence_round(step, 3, 0, None), T, 3 * NV, 3 * NH, n_draws=n_draws)


def test_batched_step_follows_the_round_matrix_with_row_terms(params):
    """A readout of each row: the cold replicas of all rows move and swap at once, with ratios of L_k alone."""
    ladder, replicas, n_draws = np.array([0.0, 1.0]), np.array([0.0, 1.0, 1.0]), 30
    n_rows = 2 ** (3 * (NV + NH)) * n_draws
    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias, shape=(n_rows, NV))
        pm.Normal("y", (v * A_ROW).sum(axis=-1) + D * v[:, 0] * v[:, 1], 1.0, observed=np.zeros(n_rows))
        step = ReplicaExchange(betas=ladder, adapt=False, sweeps=1)
    assert step.row_wise and not step.tilted
    step.setup_chain(np.random.default_rng(11), 0, 1)
    b = step.reference_vbias
    for parity in (0, 1):
        T = sweep_matrix(params, replicas, True, rest=log_rest_row, reference=b) @ swap_matrix(
            params, replicas, parity, True, rest=log_rest_row, reference=b)
        ht.empirical_transition_check(evidence_round(step, 3, parity, None), T, 3 * NV, 3 * NH, n_draws=n_draws)


B_ROWS = np.array([[0.9, -0.6], [-1.3, 1.1]])  # two readouts of each row, coupling its units through v @ B


def log_rest_predictors(v):
    """``log N(0 | v @ B, 1)`` summed over the two readouts, up to a constant."""
    return -0.5 * ((np.asarray(v, dtype=np.float64) @ B_ROWS) ** 2).sum(axis=-1)


def predictor_round(step, k, parity, loadings):
    """One round of the step from each listed extended state, the point's free loadings ``B`` given."""

    def kernel_fn(rng, state):
        vs, hs = split(state.v.astype(np.float64), state.h.astype(np.float64), k)
        step.step({"v": start_round(step, vs, hs, parity), "B": np.array(loadings)})
        rep = step._replicas
        return RBMState(np.concatenate(list(rep.v), axis=1), np.concatenate(list(rep.h), axis=1))

    return kernel_fn


@pytest.mark.parametrize("case", ["exact", "scan-forgets-L", "stale-loadings"])
def test_batched_step_follows_the_round_matrix_with_a_readout_of_predictors(params, case):
    """Readouts ``v @ B`` of each row, ``B`` free: the cold replicas' visible move is the single-unit scan
    through the predictors at the point's ``B``. Negative controls: the matrix of a scan whose conditionals
    forget ``L``, and the step run at other loadings than the matrix's (a move that kept ``B``'s old value)."""
    ladder, replicas, n_draws = np.array([0.0, 1.0]), np.array([0.0, 1.0, 1.0]), 30
    n_rows = 2 ** (3 * (NV + NH)) * n_draws
    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias, shape=(n_rows, NV))
        B = pm.Normal("B", 0.0, 1.0, shape=B_ROWS.shape)
        pm.Normal("y", v @ B, 1.0, observed=np.zeros((n_rows, 2)))
        step = ReplicaExchange([v], betas=ladder, adapt=False, sweeps=1)
    assert step.row_wise and step.other_terms.predictors is not None
    step.setup_chain(np.random.default_rng(13), 0, 1)
    b = step.reference_vbias
    scan = "none" if case == "scan-forgets-L" else "exact"
    given = 0.3 * B_ROWS if case == "stale-loadings" else B_ROWS
    for parity in (0, 1):
        T = sweep_matrix(params, replicas, True, rest=log_rest_predictors, reference=b, scan=scan) @ swap_matrix(
            params, replicas, parity, True, rest=log_rest_predictors, reference=b)
        kernel = predictor_round(step, 3, parity, given)
        if case == "exact":
            ht.empirical_transition_check(kernel, T, 3 * NV, 3 * NH, n_draws=n_draws)
        else:
            with pytest.raises(AssertionError, match="do not follow|probability 0"):
                ht.empirical_transition_check(kernel, T, 3 * NV, 3 * NH, n_draws=n_draws)


@pytest.mark.parametrize("scan", ["exact", "none"], ids=["exact", "scan-forgets-L"])
def test_step_of_one_row_follows_the_round_matrix_with_a_readout_of_predictors(params, scan):
    """A variable of one row read through ``v @ B`` (PyTensor writes it ``Bᵀ v[:, None]``): the same scan."""
    ladder, replicas = np.array([0.0, 1.0]), np.array([0.0, 1.0, 1.0])
    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias, shape=(NV,))
        pm.Normal("y", v @ B_ROWS, 1.0, observed=np.zeros(2))
        step = ReplicaExchange(betas=ladder, adapt=False, sweeps=1)
    assert not step.row_wise and step.other_terms.predictors is not None
    step.setup_chain(np.random.default_rng(17), 0, 1)
    b = step.reference_vbias
    parity = 1  # the swap into the model's replica
    T = sweep_matrix(params, replicas, True, rest=log_rest_predictors, reference=b, scan=scan) @ swap_matrix(
        params, replicas, parity, True, rest=log_rest_predictors, reference=b)
    kernel = one_round_each(step, replicas, parity)
    if scan == "exact":
        ht.empirical_transition_check(kernel, T, 3 * NV, 3 * NH, n_draws=60)
    else:
        with pytest.raises(AssertionError, match="do not follow|probability 0"):
            ht.empirical_transition_check(kernel, T, 3 * NV, 3 * NH, n_draws=60)


def test_rows_of_the_bundled_prior_match_their_enumerated_posteriors():
    """Three latent 4x4 images seen through Gaussian readouts, pm.sample()'s defaults: per-pixel marginals
    against enumeration of each row's 2^16 states."""
    params = bundled_rbm()
    rng = np.random.default_rng(3)
    truth = bars_and_stripes(4)[[2, 17, 25]]
    y = 2.0 * truth - 0.5 + rng.normal(0.0, 1.2, truth.shape)
    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias, shape=y.shape)
        pm.Normal("y", 2.0 * v - 0.5, 1.2, observed=y)
        idata = pm.sample(draws=1500, tune=500, chains=2, cores=1, random_seed=5, progressbar=False,
                          compute_convergence_checks=False)
    states = binary_states(16)
    log_prior = log_marginal_visible(params)
    evidence = ((y + 0.5) ** 2 - (y + 0.5 - 2.0) ** 2) / (2 * 1.2**2)
    for k in range(3):
        log_post = log_prior + states @ evidence[k]
        exact = np.exp(log_post - log_post.max())
        exact = exact / exact.sum() @ states
        sampled = idata.posterior["v"].values[:, :, k].reshape(-1, 16).mean(axis=0)
        np.testing.assert_allclose(sampled, exact, atol=0.06)


# ------------------------------------------- the reference the ladder starts from, chosen in tuning
def tuned_step(params, tune, seed=1):
    """A ReplicaExchange step with the default reference after ``tune`` tuning draws of one chain."""
    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias, log_partition=None)
        step = ReplicaExchange([v])
        pm.sample(draws=1, tune=tune, chains=1, cores=1, step=step, random_seed=seed, progressbar=False,
                  compute_convergence_checks=False)
    return step


def test_the_uniform_reference_is_kept_where_mean_field_sits_in_one_pattern():
    """Bars and stripes: the naive mean-field solution is one pattern, a reference no replica leaves."""
    step = tuned_step(bundled_rbm(), 200)
    assert step.reference_trial == 2 and step.reference_in_use == "zero"
    assert not np.any(step.reference_vbias)


def test_the_mean_field_reference_is_chosen_on_a_trained_mnist_rbm(mnist_model):
    """mnist_h100: the uniform ladder meets a first-order transition (barrier about 16, no round trip);
    from the mean-field reference the barrier is about 9."""
    step = tuned_step(mnist_model("mnist_h100"), 64)
    assert step.reference_trial == 2 and step.reference_in_use == "mean_field"
    assert np.abs(step.reference_vbias).max() > 1.0


def test_a_given_reference_is_checked_and_kept(params):
    with ladder_model(params, 0, False):
        with pytest.raises(ValueError, match="shape"):
            ReplicaExchange(reference=np.zeros(NV + 1))
        with pytest.raises(ValueError, match="reference must be one of"):
            ReplicaExchange(reference="data")
        with pytest.raises(ValueError, match="finite"):
            ReplicaExchange(reference=[np.nan, 0.0])
        b = np.array([0.5, -0.5])
        step = ReplicaExchange(reference=b)
    b[0] = 9.0  # the step keeps its own copy
    assert step.reference_in_use == "given" and np.array_equal(step.reference_vbias, [0.5, -0.5])


@pytest.mark.parametrize("parity", [0, 1])
def test_step_follows_the_evidence_ladder_from_a_reference(params, parity):
    """Per-unit evidence and a reference together: hot rung r at exp(-β_r E + (1 - β_r) b·v + δ̂·v), the cold
    replica above it at the current evidence."""
    n_draws = 30
    n_rows = 2 ** (3 * (NV + NH)) * n_draws
    with evidence_model(n_rows, free_s=True):
        step = ReplicaExchange(betas=EVIDENCE_LADDER[:-1], adapt=False, sweeps=1, reference=REFERENCE)
    assert step.tilted and step.reference_in_use == "given"
    step.setup_chain(np.random.default_rng(60 + parity), 0, 1)
    step.ladder_tilt = np.tile(evidence_of(FROZEN_S), (n_rows, 1))
    hot = evidence_of(FROZEN_S)
    evidence = np.array([hot + (1.0 - b) * REFERENCE for b in EVIDENCE_LADDER[:-1]] + [evidence_of(CURRENT_S)])
    T = evidence_round_matrix(params, EVIDENCE_LADDER, evidence, parity)
    ht.empirical_transition_check(evidence_round(step, 3, parity, CURRENT_S), T, 3 * NV, 3 * NH, n_draws=n_draws)



# ------------------------------------------- explorers: sweeps per rung, adapted in tuning
EXPLORER_SWEEPS = np.array([1, 3, 2])


def explorer_matrix(params, betas, sweeps, reference=None, wrong_beta=None):
    """Every replica moved independently by ``sweeps[r]`` sweeps at its β (the product over the extended states).

    ``wrong_beta``: ``(r, β)``, rung r's sweeps after its first taken at β instead (the negative control)."""
    k = len(betas)
    pv, ph = ht.joint_states(k * NV, k * NH)
    vs, hs = split(pv, ph, k)
    b = np.zeros(NV) if reference is None else reference
    mats = [np.linalg.matrix_power(ht.transition_matrix(path_params(params, beta, b), "flip"), n)
            for beta, n in zip(betas, sweeps)]
    if wrong_beta is not None:
        r, beta = wrong_beta
        wrong = ht.transition_matrix(path_params(params, beta, b), "flip")
        mats[r] = ht.transition_matrix(path_params(params, betas[r], b), "flip") @ np.linalg.matrix_power(
            wrong, sweeps[r] - 1)
    T = np.ones((pv.shape[0], pv.shape[0]))
    for m, v, h in zip(mats, vs, hs):
        idx = ht.joint_index(v, h)
        T *= m[idx[:, None], idx[None, :]]
    return T


@pytest.mark.parametrize("reference", [None, REFERENCE], ids=["uniform", "given"])
@pytest.mark.parametrize("sweeps, wrong_beta", [(EXPLORER_SWEEPS, (1, BETAS[2])), (np.array([1, 1, 7]), (2, BETAS[1]))],
                         ids=["explorers", "cold-takes-rest"])
def test_a_round_with_unequal_sweeps_per_rung_is_exact(params, reference, sweeps, wrong_beta):
    """Rung r sweeps n_r times, then the swaps: each sweep leaves p_{β_r} invariant, so the round leaves Π
    invariant; the extra sweeps of a rung taken at a neighbour's β must be caught. The second set is a ladder
    that carries nothing (``cold_takes_rest``: the cold replica makes the draw's other sweeps)."""
    pi = extended_target(params, BETAS, False, reference)
    T = explorer_matrix(params, BETAS, sweeps, reference)
    swaps = [swap_matrix(params, BETAS, p, False, reference=reference) for p in (0, 1)]
    ht.assert_stationary(pi, T)
    ht.assert_converges(pi, T @ swaps[0] @ T @ swaps[1])
    for s in swaps:
        ht.assert_stationary(pi, T @ s)
    wrong = explorer_matrix(params, BETAS, sweeps, reference, wrong_beta=wrong_beta)
    with pytest.raises(AssertionError, match="not stationary"):
        ht.assert_stationary(pi, wrong @ swaps[0])


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "numpy"])
@pytest.mark.parametrize("parity", [0, 1])
def test_step_follows_the_round_matrix_with_unequal_sweeps(params, parity, compiled):
    n_rows = 2 ** (len(BETAS) * (NV + NH)) * N_DRAWS
    with ladder_model(params, n_rows, False):
        step = ReplicaExchange(betas=BETAS, adapt=False, sweeps=1, reference=REFERENCE, compiled=compiled,
                               explorer_sweeps=EXPLORER_SWEEPS)
    assert step.compiled_rounds == compiled
    np.testing.assert_array_equal(step.rung_sweeps, EXPLORER_SWEEPS)
    step.setup_chain(np.random.default_rng(30 + parity), 0, 1)
    T = explorer_matrix(params, BETAS, EXPLORER_SWEEPS, REFERENCE) @ swap_matrix(params, BETAS, parity, False,
                                                                                  reference=REFERENCE)
    check = ht.empirical_transition_check(one_round(step, BETAS, parity), T, 3 * NV, 3 * NH, n_draws=N_DRAWS)
    assert check.n_impossible == 0


STICKY = RBMParams(np.array([[5.0], [-5.0]]), np.array([-1.0, 2.0]), np.array([0.5]))


def test_the_step_follows_its_adapted_sweeps_frozen_after_tuning(monkeypatch):
    """Sweeps adapted in tuning (a low target correlation, so that this tiny model gets more than one), then
    unchanged by the draws after tuning, whose rounds follow the matrix of those sweeps."""
    from pymc_rbm.step_methods import ladder

    monkeypatch.setattr(ladder, "EXPLORER_TARGET", 0.1)
    monkeypatch.setattr(ladder, "EXPLORER_STICKY", 0.1)
    params = STICKY  # its energy at β = 1 keeps a correlation of about 0.45 over a sweep
    n_draws, tune = 100, 128
    n_rows = 2 ** (len(BETAS) * (NV + NH)) * n_draws
    with ladder_model(params, n_rows, False) as model:
        step = ReplicaExchange(betas=BETAS, sweeps=1, reference="zero")
    step.setup_chain(np.random.default_rng(3), tune, 10)
    point = model.initial_point()
    for _ in range(tune):
        point, _ = step.step(point)
    frozen, betas = step.rung_sweeps.copy(), step.betas.copy()
    assert frozen.max() > 1 and frozen.sum() <= ladder.EXPLORER_BUDGET * frozen.size
    for _ in range(5):
        point, _ = step.step(point)
    np.testing.assert_array_equal(step.rung_sweeps, frozen)
    T = explorer_matrix(params, betas, frozen) @ swap_matrix(params, betas, 1, False)
    ht.empirical_transition_check(one_round(step, betas, 1), T, 3 * NV, 3 * NH, n_draws=n_draws)


def test_sampling_state_resumes_the_adapted_sweeps_exactly(monkeypatch):
    """Stopped between two adaptations (energy sums half gathered, sweeps above one), resumed from the state:
    the same draws, the same sweeps."""
    from pymc_rbm.step_methods import ladder

    monkeypatch.setattr(ladder, "EXPLORER_TARGET", 0.1)
    monkeypatch.setattr(ladder, "EXPLORER_STICKY", 0.1)
    make = bundled_maker()

    def stopped(first):
        assert first.rung_sweeps.max() > 1 and first.rung_energy_n.max() > 0

    assert_resumes_exactly(make, 64, 84, 20, lambda step, point, stats: (point["v"].copy(), step.rung_sweeps.copy()),
                           before_stop=stopped)


def test_explorer_sweeps_from_the_measured_correlation():
    from pymc_rbm.step_methods.ladder import explorer_sweeps_for, within_budget

    rho = np.array([0.1, -0.3, 0.5, 0.9, 0.9, np.nan, 0.999])
    current = np.array([1, 1, 1, 1, 3, 4, 1])
    # 0.5 -> 1; 0.9 -> ceil(log .5 / log .9) = 7; 0.9 over 3 sweeps is 0.965 a sweep -> 20; NaN keeps 4; 0.999 capped
    np.testing.assert_array_equal(explorer_sweeps_for(rho, current, target=0.5, sticky=0.5, max_sweeps=32), [1, 1, 1, 7, 20, 4, 32])
    # a rung that relaxes within a few sweeps keeps one: 0.75 -> 1, 0.9 -> 7
    np.testing.assert_array_equal(explorer_sweeps_for([0.75, 0.9], [1, 1], target=0.5, sticky=0.8), [1, 7])
    fitted = within_budget(np.array([1, 1, 1, 7, 20, 4, 32]), budget=3.0)
    assert fitted.sum() <= 21 and np.all(fitted >= 1) and np.all(np.diff(fitted[[5, 3, 4, 6]]) >= 0)
    np.testing.assert_array_equal(within_budget(np.array([1, 2, 3]), budget=3.0), [1, 2, 3])


def test_adapted_sweeps_stay_one_where_every_rung_relaxes():
    """The bundled bars-and-stripes RBM with pm.sample's 1000 tuning draws: no rung's energy stays correlated
    over a sweep beyond the target; the default keeps one sweep per rung (it costs what it did)."""
    for seed in (1, 2):
        step = tuned_step(bundled_rbm(), 1000, seed=seed)
        assert step.explorer_auto and step.n_temperatures > 1 and step.ladder_carries
        np.testing.assert_array_equal(step.rung_sweeps, np.ones(step.n_temperatures))


def test_adapted_sweeps_go_to_the_sticky_rungs_of_a_sharp_model(mnist_model):
    """mnist_h100: the rungs next to the model (β near 1) keep their energy after a sweep and get more sweeps;
    the hot end keeps one, and the total stays within the budget."""
    from pymc_rbm.step_methods.ladder import EXPLORER_BUDGET

    step = tuned_step(mnist_model("mnist_h100"), 64)
    sweeps = step.rung_sweeps
    assert sweeps.max() > 1 and sweeps[0] == 1
    assert sweeps.sum() <= EXPLORER_BUDGET * sweeps.size
    assert sweeps[step.betas > 0.8].mean() > sweeps[step.betas < 0.5].mean()


def test_a_ladder_carries_unless_its_round_trips_fall_short_of_its_barrier():
    from pymc_rbm.step_methods.ladder import cold_matches_hot, cold_takes_rest, ladder_carries

    # Λ = 4: a round trip every 10 rounds; 1000 rounds predict 100, and fewer than 5 % of them fall short
    assert not ladder_carries(0, 1000, 4.0) and not ladder_carries(4, 1000, 4.0)
    assert ladder_carries(5, 1000, 4.0)
    assert ladder_carries(0, 150, 4.0)  # 15 predicted: too few to judge
    assert not ladder_carries(4, 500, 4.0, n_rows=2) and ladder_carries(4, 500, 4.0)  # rows count together
    # one sweep per hot rung, the cold replica the rest of K² (at least what it had)
    np.testing.assert_array_equal(cold_takes_rest(np.array([1, 3, 5, 2])), [1, 1, 1, 13])
    np.testing.assert_array_equal(cold_takes_rest(np.array([2, 1, 40])), [1, 1, 40])
    # a mixture's ladder: the cold replica as many as the hot rungs together
    np.testing.assert_array_equal(cold_matches_hot(np.array([1, 3, 5, 2])), [1, 3, 5, 9])
    np.testing.assert_array_equal(cold_matches_hot(np.array([1, 1, 40])), [1, 1, 40])


def test_a_ladder_that_carries_nothing_restarts_from_the_visited_modes(params, monkeypatch):
    """Judged at the last adaptation (every ladder judged not to carry): one row restarts from the mixture of
    the states its cold replica visited since the adaptation before, on a ladder even in β spaced for it at
    3/4 of tuning, where the cold replica takes the rest of a draw's K² sweeps (a draw one round); several
    rows keep their reference and take the rest at once. Frozen after tuning. A ladder that carries, sweeps
    given, or other terms on ``v`` keep the explorers' sweeps and nothing is restarted."""
    from pymc_rbm.estimators.base_rate import mixture_reference
    from pymc_rbm.step_methods import ladder

    def tuned(n_rows=0, with_rest=False, share=2.0, **kwargs):
        monkeypatch.setattr(ladder, "CARRY_MIN_SHARE", share)
        monkeypatch.setattr(ladder, "CARRY_MIN_PREDICTED", 1.0)
        with ladder_model(params, n_rows, with_rest) as model:
            step = ReplicaExchange(reference="zero", adapt=LadderAdaptation(collapse_below=0.0), **kwargs)
        step.setup_chain(np.random.default_rng(5), 256, 10)
        assert step.ladder_adapt_at[-2:] == [64, 128]
        point, tops = model.initial_point(), []
        for i in range(1, 257):
            before = step.rung_sweeps.copy()
            point, _ = step.step(point)
            if 64 < i <= 128:
                tops.append(step._replicas.v[-1].reshape(-1).copy())
            if i == 127:  # the rounds made since the last ladder moved (counted from 0), and the states kept
                assert step.ladder_carries and step._window_rounds == step.replica_rounds > 0
                if step.mixture_states is not None:
                    np.testing.assert_array_equal(step.mixture_states[:63, 0], tops)
        for _ in range(3):
            point, _ = step.step(point)
        np.testing.assert_array_equal(step.rung_sweeps, before)  # frozen
        return step, np.array(tops)

    step, tops = tuned()
    k = step.n_temperatures
    assert k > 1 and not step.ladder_carries and step.rounds_per_draw == 1
    assert step.reference_in_use == "mixture" and step.ladder_adapt_at[-1] == 192 and step.mixture_states is None
    np.testing.assert_array_equal(step.rung_sweeps, [1] * (k - 1) + [k * k - k + 1])
    # the components are the fixed points that the 64 visited states lead to (all of them starts)
    assert tops.shape == (64, NV)
    np.testing.assert_array_equal(step.mixture.visible_logits,
                                  mixture_reference(params, tops, n_components=128).visible_logits)
    step, _ = tuned(n_rows=2)
    assert not step.ladder_carries and step.rounds_per_draw == 1 and step.reference_in_use == "zero"
    for kept, _ in (tuned(share=0.0), tuned(explorer_sweeps=1), tuned(sweeps=2), tuned(with_rest=True)):
        assert kept.ladder_carries and kept.rung_sweeps[-1] < kept.n_temperatures ** 2 - kept.n_temperatures + 1
        assert kept.mixture is None and kept.mixture_states is None


@pytest.mark.parametrize("stop", [28, 40, 52], ids=["keeping", "restarted", "after"])
def test_sampling_state_resumes_the_judged_ladder_exactly(monkeypatch, stop):
    """Stopped while the cold replica's states are kept (before the last adaptation, at 32), after the ladder
    restarted from them, or after its new ladder (at 48), resumed: the same judgement, sweeps and draws; with
    every ladder judged not to carry (a monkeypatched share), the cold replica takes the rest."""
    from pymc_rbm.step_methods import ladder

    monkeypatch.setattr(ladder, "CARRY_MIN_SHARE", 2.0)
    monkeypatch.setattr(ladder, "CARRY_MIN_PREDICTED", 1.0)
    make = bundled_maker(reference="zero")

    def record(step, point, stats):
        return point["v"].copy(), step.rung_sweeps.copy(), np.array(stats[0]["ladder_carries"])

    def stopped(first):
        assert first.ladder_adapt_at[3] == 32 and first.ladder_carries == (stop < 32)
        assert (first.mixture_states is not None) == (stop < 32)
        assert (first.reference_in_use == "mixture") == (stop > 32)

    whole, resumed = assert_resumes_exactly(make, 64, 56, stop, record, before_stop=stopped)
    k = resumed.n_temperatures
    assert not resumed.ladder_carries and k > 1 and resumed.ladder_adapt_at[-1] == 48
    np.testing.assert_array_equal(resumed.rung_sweeps, [1] * (k - 1) + [k * k - k + 1])
    np.testing.assert_array_equal(resumed.mixture.visible_logits, whole.mixture.visible_logits)


def test_a_mean_field_ladder_that_carries_nothing_goes_back_to_the_uniform_one():
    """The bundled RBM made three times sharper: in some chains tuning measures a lower barrier from the
    mean-field reference, whose ladder then stays in one pattern and carries nothing. Where the uniform
    reference's measured ladder fits, tuning goes back to it at tune/2, spaces it anew at 3/4 and it carries:
    the chain's marginals are right (one such chain of 2000 draws: error 0.007; before, every draw was one
    pattern)."""
    base = bundled_rbm()
    params = RBMParams(3 * base.W, 3 * base.vbias, 3 * base.hbias)
    exact = np.exp(log_marginal_visible(params)) @ binary_states(params.n_visible)
    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias, log_partition=None)
        step = ReplicaExchange([v])
        idata = pm.sample(draws=2000, tune=1000, chains=1, cores=1, step=step, random_seed=8, progressbar=False,
                          compute_convergence_checks=False)
    assert step.reference_trial == 3 and step.reference_in_use == "zero" and step.mixture is None
    assert step.ladder_carries and step.ladder_adapt_at[-1] == 750 and step.n_temperatures > 4
    assert idata.sample_stats["round_trips"].values[0, -1] > 100
    est = idata.posterior["v"].values[0].mean(axis=0)
    assert np.abs(est - exact).mean() < 0.03


def test_sampling_state_resumes_the_way_back_to_the_uniform_reference_exactly(monkeypatch):
    """Every ladder judged not to carry and the uniform one taken to fit: back to it at the last adaptation
    (32), judged again at 48, where it keeps the uniform reference and its cold replica takes the rest.
    Stopped before, between and after, resumed: the same draws and sweeps."""
    from pymc_rbm.step_methods import ladder

    monkeypatch.setattr(ladder, "CARRY_MIN_SHARE", 2.0)
    monkeypatch.setattr(ladder, "CARRY_MIN_PREDICTED", 1.0)
    monkeypatch.setattr(ladder.LadderTuning, "_uniform_may_carry", property(lambda step: step.reference_trial == 2))
    make = bundled_maker()

    def record(step, point, stats):
        return point["v"].copy(), step.rung_sweeps.copy(), np.array(stats[0]["ladder_carries"])

    def stopped(first):
        assert first.reference_trial == (2 if stop < 32 else 3)

    for stop in (28, 40, 52):
        whole, resumed = assert_resumes_exactly(make, 64, 56, stop, record, before_stop=stopped)
        k = resumed.n_temperatures
        assert resumed.reference_trial == 3 and resumed.reference_in_use == "zero" and resumed.mixture is None
        assert not resumed.ladder_carries and k > 1 and resumed.ladder_adapt_at[-1] == 48
        np.testing.assert_array_equal(resumed.rung_sweeps, [1] * (k - 1) + [k * k - k + 1])


def test_mnist_h500_alone_restarts_its_ladder_from_the_visited_modes(mnist_model):
    """With pm.sample's 1000 tuning draws mnist_h500's mean-field ladder makes about 1 % of the round trips its
    barrier predicts: it restarts from the modes its cold replica visited, which then takes the rest of a draw.
    mnist_h100's makes 12-14 % and keeps its reference and explorers; so does the bundled model
    (test_adapted_sweeps_stay_one_where_every_rung_relaxes)."""
    step = tuned_step(mnist_model("mnist_h500"), 1000, seed=2)
    k = step.n_temperatures
    assert k > 4 and not step.ladder_carries and step.rounds_per_draw == 1
    assert step.reference_in_use == "mixture" and step.mixture.n_components > 1
    np.testing.assert_array_equal(step.rung_sweeps, [1] * (k - 1) + [k * k - k + 1])
    step = tuned_step(mnist_model("mnist_h100"), 1000, seed=2)
    assert step.ladder_carries and step.rung_sweeps.max() > 1 and step.rounds_per_draw > 1
    assert step.mixture is None and step.reference_in_use != "mixture"


def test_bad_explorer_sweeps_are_refused(params):
    with ladder_model(params, 0, False):
        for bad in ("fast", 0, True, [1, 2], [1.5, 1, 1], [1, 0, 1]):
            with pytest.raises(ValueError, match="explorer_sweeps"):
                ReplicaExchange(betas=BETAS, explorer_sweeps=bad)
        with pytest.raises(ValueError, match="explorer_sweeps"):
            ReplicaExchange(explorer_sweeps=[1, 1, 1])  # one per rung needs the rungs
        assert np.array_equal(ReplicaExchange(betas=BETAS, explorer_sweeps=2).rung_sweeps, [2, 2, 2])


def test_a_draw_with_more_explorer_sweeps_makes_fewer_rounds(params):
    """sweeps="auto": K rounds of one sweep per rung, or about K² sweeps in all where the explorers make more."""
    with ladder_model(params, 0, False):
        assert ReplicaExchange(betas=BETAS, explorer_sweeps=1).rounds_per_draw == 3
        assert ReplicaExchange(betas=BETAS, explorer_sweeps=[1, 3, 2]).rounds_per_draw == 2  # 9 / 6
        assert ReplicaExchange(betas=BETAS, explorer_sweeps=[1, 3, 2], sweeps=5).rounds_per_draw == 5


# ------------------------------------------------------------ a mixture of products as the reference
MIXTURE_V = [[0.9, 0.2], [0.1, 0.7]]
MIXTURE_H = [[0.8], [0.3]]


def mixture_rung_target(params, mixture, beta):
    """``p_β(v, h, z) ∝ exp(-β E) [w_z q_z(v, h)]^(1 - β)`` over ``(z, v, h)``, ``z`` slowest (16 states)."""
    vs, hs = ht.joint_states(NV, NH)
    log_p = []
    for z in range(mixture.n_components):
        log_p.append(-beta * energy(vs, hs, params) + (1 - beta) * mixture.label_log_weights(vs, hs)[:, z])
    log_p = np.concatenate(log_p)
    p = np.exp(log_p - log_p.max())
    return p / p.sum()


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "numpy"])
@pytest.mark.parametrize("explorers", [1, [1, 2, 3], [1, 1, 7]],
                         ids=["one-sweep", "cold-matches-hot", "cold-takes-rest"])
def test_a_mixture_reference_leaves_every_rung_at_its_target(params, compiled, explorers):
    """Each rung's ``(v, h, z)`` after many draws of a fixed ladder against ``p_β`` of the labelled path (the top
    rung's label is uniform: it enters no target at β = 1). A draw ends with a swap of ``(v, h)``, after which
    the labels are stale until the next round redraws them: they are redrawn (a Gibbs move) before counting.
    The second set of sweeps is what tuning leaves a mixture's ladder (the cold replica as many as the rest),
    the third what it leaves a ladder restarted from the visited modes (the cold replica the rest of K²)."""
    from pymc_rbm.kernels.mixture_reference import ProductMixture

    mixture = ProductMixture.from_probabilities(MIXTURE_V, MIXTURE_H, [0.3, 0.7])
    with ladder_model(params, 0, False):
        step = ReplicaExchange(betas=BETAS, adapt=False, sweeps=1, reference=mixture, compiled=compiled,
                               explorer_sweeps=explorers)
    assert step.compiled_rounds == compiled and step.reference_in_use == "mixture"
    n = 30_000
    step.setup_chain(np.random.default_rng(70), 0, n)
    point = {"v": np.zeros(NV, dtype=np.int64)}
    counts = np.zeros((len(BETAS), 2 ** (NV + NH) * 2))
    for _ in range(n):
        point, _ = step.step(point)
        rep, z = step._replicas, step._draw_component_labels(len(BETAS))
        idx = z[:, 0] * 2 ** (NV + NH) + ht.joint_index(rep.v[:, 0], rep.h[:, 0])
        counts[np.arange(len(BETAS)), idx] += 1
    for r, beta in enumerate(BETAS):
        tv = 0.5 * np.abs(counts[r] / n - mixture_rung_target(params, mixture, beta)).sum()
        assert tv < 0.02, (beta, tv)


def test_a_mixture_reference_samples_the_bundled_rbm():
    """``pm.sample`` from the mixture of the fixed points that the 30 patterns lead to: the bundled RBM's
    marginals, with round trips in every chain."""
    from pymc_rbm.estimators.base_rate import mixture_reference

    params = bundled_rbm()
    mixture = mixture_reference(params, bars_and_stripes(4), rng=0)
    assert mixture.n_components >= 20
    exact = np.exp(log_marginal_visible(params)) @ binary_states(params.n_visible)
    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias)
        step = ReplicaExchange([v], reference=mixture)
        idata = pm.sample(draws=1500, tune=500, chains=2, cores=1, random_seed=11, progressbar=False,
                          step=step, compute_convergence_checks=False)
    est = idata.posterior["v"].values.reshape(-1, params.n_visible).mean(0)
    assert np.abs(est - exact).max() < 0.05
    assert idata.sample_stats["round_trips"].values[:, -1].min() > 10
    # after tuning the cold replica sweeps as often as the hot rungs together (cold_matches_hot)
    assert step.n_temperatures > 1 and step.rung_sweeps[-1] == max(step.rung_sweeps[:-1].sum(), 1)


def test_the_model_mixture_is_refitted_in_tuning_to_the_states_the_chain_visits():
    """reference="mixture": from the first adaptation to the third the top rung's state of every draw is kept;
    at the third the components become the fixed points reached from those states and the first mixture's
    modes, and the ladder is adapted to them at the fourth. A mixture given, or a short tune phase, is kept
    as it is; a new chain starts from the model's mixture again."""
    from pymc_rbm.estimators.base_rate import mixture_reference

    params = bundled_rbm()
    with pm.Model() as model:
        v = RBM("v", params.W, params.vbias, params.hbias)
        step = ReplicaExchange([v], reference="mixture")
    assert step.refits_mixture
    first = step.mixture
    step.setup_chain(np.random.default_rng(3), 400, 10)
    assert step.ladder_adapt_at == [25, 50, 100, 200] and step.mixture_refit == 0
    point, tops = model.initial_point(), []
    for i in range(1, 101):
        point, _ = step.step(point)
        tops.append(step._replicas.v[-1].copy())
        if i == 25:
            assert step.mixture_refit == 1 and step.mixture_states.shape == (75, 1, 16)
        if i == 99:
            np.testing.assert_array_equal(step.mixture_states[:74, 0], np.array(tops[25:99])[:, 0])
    assert step.mixture_refit == 2 and step.mixture_states is None and step.reference_in_use == "mixture"
    assert step.mixture is not first and step.mixture.n_components > first.n_components
    # no mode of the first mixture is lost: each is again a component (starts of the refit), and visited
    # states add their own
    old_modes = first.visible_logits > 0
    new_modes = step.mixture.visible_logits > 0
    assert all((new_modes == m).all(axis=1).any() for m in old_modes)
    step.setup_chain(np.random.default_rng(3), 100, 10)
    assert step.mixture is first and step.mixture_refit == -1  # a new chain; too short a tune phase to refit
    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias)
        given = ReplicaExchange([v], reference=mixture_reference(params, bars_and_stripes(4), rng=0))
    given.setup_chain(np.random.default_rng(3), 400, 10)
    assert given.mixture_refit == -1


def test_sampling_state_resumes_the_mixture_refit_exactly():
    """Stopped while the states for the mixture's refit are being kept, resumed from the state: the same draws
    through the refit and after it, and the same refitted components."""
    make = bundled_maker(reference="mixture")

    def stopped(first):
        assert first.mixture_refit == 1

    whole, resumed = assert_resumes_exactly(make, 400, 230, 60, lambda step, point, stats: (point["v"].copy(),),
                                            before_stop=stopped)
    np.testing.assert_array_equal(resumed.mixture.visible_logits, whole.mixture.visible_logits)



def test_the_label_weights_kept_from_the_swaps_are_those_of_the_states():
    """The swap round keeps the mixture's label weights of the states it leaves (moved with them); the next
    round's labels use them only while the states and the mixture are the ones they belong to."""
    params = bundled_rbm()
    with pm.Model() as model:
        v = RBM("v", params.W, params.vbias, params.hbias)
        step = ReplicaExchange([v], reference="mixture", betas=[0.0, 0.5, 0.8, 1.0])
    step.setup_chain(np.random.default_rng(3), 0, 10)
    point = model.initial_point()
    for _ in range(3):
        point, _ = step.step(point)
        state, k = step._replicas, step.n_temperatures
        fresh = step.mixture.label_log_weights(state.v.reshape(k, -1), state.h.reshape(k, -1))
        np.testing.assert_array_equal(step._label_weights[3].reshape(k, -1), fresh)
        kept = step._label_weights
        np.testing.assert_array_equal(step._kept_label_log_weights(k), fresh)
        assert step._label_weights is None  # taken once
        step._label_weights = kept
    state.v[1, 0, 0] = 1.0 - state.v[1, 0, 0]  # a state changed since the swaps: weights computed afresh
    assert step._kept_label_log_weights(k) is None

def test_a_mixture_reference_is_refused_where_it_cannot_run(params):
    from pymc_rbm.kernels.mixture_reference import ProductMixture

    wide = ProductMixture.from_probabilities(np.full((2, NV + 1), 0.5), np.full((2, NH), 0.5))
    with ladder_model(params, 0, False):
        with pytest.raises(ValueError, match="mixture reference has"):
            ReplicaExchange(reference=wide)
    mixture = ProductMixture.from_probabilities(MIXTURE_V, MIXTURE_H)
    with evidence_model(3, free_s=False):
        with pytest.raises(ValueError, match="per-unit evidence"):
            ReplicaExchange(reference=mixture)

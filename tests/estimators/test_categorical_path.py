"""The annealing path, AIS, reverse AIS and BAR on categorical (Potts-visible, Bernoulli-hidden) RBMs.

The path to a :class:`~pymc_rbm.categorical.CategoricalRBMParams` is the same
:class:`~pymc_rbm.estimators.AnnealingPath` as for binary and spin RBMs, with the
Potts layer's fields ``(n_visible, q)``. Checked here by enumeration, against
formulas written out independently of the package: the path's densities and
fields, its base draws, ``p K = p`` of its sweep (with negative controls that
the same check catches) and the sampling code's frequencies against ``K``;
then AIS, reverse AIS and BAR against the exact ``log Z``.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.special import expit, logsumexp

from pymc_rbm.categorical import (
    CategoricalAtBeta,
    CategoricalRBMParams,
    free_energy,
    hidden_input,
    log_partition_exact,
    sample_exact,
    visible_fields,
)
from pymc_rbm.estimators import AnnealingPath, ais, annealing_path, bar, log_partition, reverse_ais, rts, sams
from pymc_rbm.estimators.base_rate import base_rate_vbias, categorical_mean_field
from pymc_rbm.estimators.path_arguments import as_path
from pymc_rbm.layers import Potts
from pymc_rbm.testing import assert_frequencies, assert_stationary

SMALL = CategoricalRBMParams.random(3, 3, 2, scale=1.5, rng=11)
B_A = np.array([[0.5, -1.0, 0.2], [1.2, 0.0, -0.7], [-0.3, 0.9, 0.1]])


def _labels(n, q):
    return np.array(list(itertools.product(range(q), repeat=n)))


def _softplus(x):
    return np.logaddexp(0.0, x)


def _log_path_marginal(params, b_a, beta, V):
    """``log p*_β(v) = Σ_i ((1 - β) b_A[i, v_i] + β vbias[i, v_i]) + Σ_j softplus(β (hbias + Σ_i W[i, v_i])_j)``."""
    n = params.n_visible
    rows = np.arange(n)
    lin = ((1 - beta) * b_a[rows, V] + beta * params.vbias[rows, V]).sum(axis=1)
    act = params.hbias + params.W[rows, V].sum(axis=1)
    return lin + _softplus(beta * act).sum(axis=1)


def _liu_kernel(p, alpha):
    """One Potts unit with probabilities ``p``: Liu's (1996) Metropolised Gibbs mixed with Gibbs by ``alpha``."""
    q = p.size
    M = np.zeros((q, q))
    for x in range(q):
        for y in range(q):
            if y != x:
                M[x, y] = p[y] / (1 - p[x]) * min(1.0, (1 - p[x]) / (1 - p[y]))
        M[x, x] = max(0.0, 1.0 - M[x].sum())  # rounding
    return alpha * M + (1 - alpha) * np.tile(p, (q, 1))


def _visible_kernel(hidden_logits, visible_fields_of, n, q, H, alpha):
    """``K[v, v'] = Σ_h p(h | v) Π_i U_i(h)[v_i, v'_i]`` over all labels, from given logits and fields."""
    V = _labels(n, q)
    Hs = np.array(list(itertools.product((0.0, 1.0), repeat=H)))
    p_on = expit(hidden_logits(V))  # (|V|, H)
    p_h = np.prod(np.where(Hs[None, :, :] == 1.0, p_on[:, None, :], 1.0 - p_on[:, None, :]), axis=2)  # (|V|, |H|)
    K = np.zeros((V.shape[0], V.shape[0]))
    for b, h in enumerate(Hs):
        f = visible_fields_of(h)  # (n, q)
        units = [_liu_kernel(np.exp(f[i] - logsumexp(f[i])), alpha) for i in range(n)]
        step = np.ones((V.shape[0], V.shape[0]))
        for i in range(n):
            step *= units[i][V[:, i][:, None], V[:, i][None, :]]
        K += p_h[:, b][:, None] * step
    return K


def _path_p(params, b_a, beta):
    lp = _log_path_marginal(params, b_a, beta, _labels(params.n_visible, params.n_states))
    return np.exp(lp - logsumexp(lp))


# ---------------------------------------------------------------- the path itself
@pytest.mark.parametrize("beta", [0.0, 0.35, 1.0])
def test_path_density_and_fields_are_those_of_the_intermediate_categorical_rbm(beta):
    """log f, the base's log Z, the hidden and visible fields: the intermediate RBM's, exactly."""
    path = AnnealingPath(SMALL, B_A)
    assert path.visible_layer == Potts(3) and path.field_shape == (3, 3) and not path.incremental
    V = _labels(3, 3)
    coef = path.coefficients(beta)
    v, a, vb = path.start(V)
    np.testing.assert_allclose(path.log_f(a, vb, coef), _log_path_marginal(SMALL, B_A, beta, V), rtol=0, atol=1e-12)
    np.testing.assert_allclose(path.log_f_ladder(a, vb, coef[None])[:, 0], path.log_f(a, vb, coef), atol=1e-12)
    mid = path.intermediate(coef)
    assert isinstance(mid, CategoricalRBMParams)
    np.testing.assert_allclose(-free_energy(V, mid), path.log_f(a, vb, coef), rtol=0, atol=1e-12)
    point = path.at(coef)
    Hs = np.array(list(itertools.product((0.0, 1.0), repeat=2)))
    np.testing.assert_allclose(point.hidden_logits(point.hidden_input(V)), hidden_input(V, mid), atol=1e-12)
    np.testing.assert_allclose(point.visible_logits(Hs), visible_fields(Hs, mid), atol=1e-12)
    fields = (1 - beta) * B_A + beta * (SMALL.vbias + np.einsum("ikj,bj->bik", SMALL.W, Hs))
    np.testing.assert_allclose(point.visible_logits(Hs), fields, atol=1e-12)
    # the base's log Z, and the target's at β = 1
    assert path.log_z_base == pytest.approx(logsumexp(B_A, axis=1).sum() + 2 * np.log(2.0), abs=1e-12)
    assert path.log_z_base == pytest.approx(log_partition_exact(path.intermediate(path.coefficients(0.0))), abs=1e-12)
    assert log_partition_exact(path.intermediate(path.coefficients(1.0))) == pytest.approx(log_partition_exact(SMALL))


def test_categorical_base_draws_are_exact():
    """The base's units: state k of unit i with probability softmax(b_A[i])_k, labels in [0, q)."""
    path = AnnealingPath(SMALL, B_A, dtype=np.float32)
    draws = path.sample_base(np.random.default_rng(0), 20000)
    assert draws.dtype == np.float32 and draws.shape == (20000, 3)
    counts = np.stack([(draws == k).sum(axis=0) for k in range(3)], axis=1)
    assert_frequencies(counts, np.exp(B_A - logsumexp(B_A, axis=1, keepdims=True)))


@pytest.mark.parametrize("beta", [0.0, 0.4, 0.85, 1.0])
@pytest.mark.parametrize("operator, alpha", [("gibbs", 0.0), ("flip", 1.0), (0.4, 0.4)])
def test_categorical_path_transition_leaves_the_intermediate_distribution_invariant_exactly(beta, operator, alpha):
    """``p_β K_β = p_β`` to 1e-12, K built from the path's own logits (Gibbs h, then the Potts rule on v)."""
    path = AnnealingPath(SMALL, B_A, operator=operator)
    assert path.alpha == alpha
    point = path.at(path.coefficients(beta))
    K = _visible_kernel(
        lambda V: point.hidden_logits(point.hidden_input(V)), lambda h: point.visible_logits(h[None])[0], 3, 3, 2, alpha
    )
    assert_stationary(_path_p(SMALL, B_A, beta), K, atol=1e-12)


@pytest.mark.parametrize("beta", [0.4, 0.85])
def test_negative_controls_of_the_categorical_path_transition(beta):
    """The same check catches a transition at the target's β alone (the base fields forgotten: the
    kernels' CategoricalAtBeta) and one whose base fields are not scaled by 1 - β."""
    p = _path_p(SMALL, B_A, beta)
    tempered = CategoricalAtBeta(SMALL, beta)
    K = _visible_kernel(
        lambda V: tempered.hidden_logits(tempered.hidden_input(V)),
        lambda h: tempered.visible_logits(h[None])[0],
        3, 3, 2, 0.0,
    )
    with pytest.raises(AssertionError, match="not stationary"):
        assert_stationary(p, K, atol=1e-6)
    untempered_base = _visible_kernel(
        lambda V: beta * hidden_input(V, SMALL),
        lambda h: B_A + beta * visible_fields(h, SMALL),
        3, 3, 2, 0.0,
    )
    with pytest.raises(AssertionError, match="not stationary"):
        assert_stationary(p, untempered_base, atol=1e-6)
    # ... and the target's β alone is right exactly when the base fields vanish
    assert_stationary(_path_p(SMALL, np.zeros((3, 3)), beta), K, atol=1e-12)


@pytest.mark.parametrize("operator, alpha", [("gibbs", 0.0), ("flip", 1.0)])
def test_categorical_path_sweep_follows_the_exact_kernel(operator, alpha):
    """The sampling code itself (path.sweep: the kernels' sweep with the Potts layer), run 2000 times from
    each of the 27 states at one β per chain, against ``K``."""
    path = AnnealingPath(SMALL, B_A, operator=operator)
    V = _labels(3, 3)
    n_draws = 2000
    rng = np.random.default_rng(7)
    index = 3 ** np.arange(2, -1, -1)
    for beta in (0.3, 0.9):
        point = path.at(path.coefficients(beta))
        K = _visible_kernel(
            lambda X: point.hidden_logits(point.hidden_input(X)), lambda h: point.visible_logits(h[None])[0], 3, 3, 2, alpha
        )
        start = np.repeat(V, n_draws, axis=0)
        v, a, _ = path.start(start)
        new, a_new, vb_new = path.sweep(rng, v, a, path.coefficients(np.full(start.shape[0], beta)), refresh=False)
        np.testing.assert_array_equal(a_new, path.hidden_activation(new))  # recomputed, never carried stale
        np.testing.assert_array_equal(vb_new, path.start(new)[2])
        counts = np.zeros((27, 27))
        np.add.at(counts, (np.repeat(np.arange(27), n_draws), (new @ index).astype(int)), 1)
        assert_frequencies(counts, K)


def test_a_path_refuses_mixed_or_misshapen_categorical_models():
    with pytest.raises(TypeError, match="same layer types"):
        AnnealingPath([SMALL, CategoricalRBMParams.random(3, 4, 2, rng=0)], np.zeros((3, 3)))
    with pytest.raises(ValueError, match=r"shape \(3, 3\)"):
        AnnealingPath(SMALL, np.zeros(3))
    with pytest.raises(ValueError, match="finite"):
        AnnealingPath(SMALL, np.full((3, 3), np.nan))


# ---------------------------------------------------------------- the base rate
def test_categorical_base_rate_fields():
    data = np.array([[0, 1, 2], [0, 2, 2], [1, 1, 2], [0, 1, 0]])
    s = 0.01
    b = base_rate_vbias(SMALL, data, smoothing=s)
    freq = np.stack([(data == k).mean(axis=0) for k in range(3)], axis=1)
    np.testing.assert_allclose(b, np.log((freq + s) / (1 + 3 * s)))
    wide = CategoricalRBMParams.random(3, 4, 2, rng=1)  # one-hot rows are recognised where q != n_visible
    one_hot = (data[..., None] == np.arange(4)).astype(int)
    np.testing.assert_array_equal(base_rate_vbias(wide, one_hot, smoothing=s), base_rate_vbias(wide, data, smoothing=s))
    np.testing.assert_array_equal(base_rate_vbias(SMALL, base="target"), SMALL.vbias)
    np.testing.assert_array_equal(base_rate_vbias(SMALL, base="zero"), np.zeros((3, 3)))
    m = categorical_mean_field(SMALL)
    np.testing.assert_allclose(m.sum(axis=1), 1.0)
    np.testing.assert_allclose(base_rate_vbias(SMALL), np.log((m + 0.005) / (1 + 3 * 0.005)))  # the default
    # the fixed point: m_v = softmax(vbias + W·sigmoid(hbias + Σ m_v W))
    f = visible_fields(expit(SMALL.hbias + m.ravel() @ SMALL.W_flat), SMALL)
    np.testing.assert_allclose(m, np.exp(f - logsumexp(f, axis=1, keepdims=True)), atol=1e-8)
    with pytest.raises(ValueError, match="integer labels"):
        base_rate_vbias(SMALL, data + 3)
    with pytest.raises(ValueError, match=r"shape \(3, 3\)"):
        base_rate_vbias(SMALL, base=np.zeros(3))
    with pytest.raises(ValueError, match="needs data"):
        base_rate_vbias(SMALL, base="data")


# ---------------------------------------------------------------- AIS and BAR against enumeration
# (n, q, m, scale, seed): the last two are sharp (|W| up to 3 and 4: exp(-E) spans e^20 and more)
MODELS = [(4, 3, 3, 1.0, 0), (5, 4, 6, 1.5, 1), (6, 5, 8, 1.0, 2), (4, 3, 4, 3.0, 3), (5, 3, 6, 4.0, 4)]


def _cat(n, q, m, scale, seed):
    return CategoricalRBMParams.random(n, q, m, scale=scale, rng=seed)


@pytest.mark.parametrize("case", MODELS, ids=[f"{n}x{q}x{m}-s{s}" for n, q, m, s, _ in MODELS])
def test_ais_and_bar_are_within_0_05_nats_of_exact(case):
    params = _cat(*case)
    truth = log_partition_exact(params)
    a = ais(params, n_chains=100, n_steps=1000, rng=1)
    b = bar(params, n_chains=100, n_steps=500, rng=2, n_jobs=1)
    assert a.method == "ais" and b.method == "bar"
    for est in (a, b):
        assert abs(est.log_z - truth) < 0.05, (est.method, est.log_z - truth, est.stderr)
        assert abs(est.log_z - truth) < 5 * est.stderr + 0.01
    assert a.fingerprint == params.fingerprint()
    assert a.diagnostics["samples"].shape == (100, params.n_visible)


def test_ais_flip_data_base_float32_and_adaptive_schedule_on_a_sharp_model():
    params = _cat(5, 3, 6, 4.0, 4)
    truth = log_partition_exact(params)
    data = sample_exact(params, 200, rng=3)
    for est in (
        ais(params, n_chains=100, n_steps=1000, operator="flip", data=data, rng=4),
        ais(params, n_chains=100, n_steps=1000, dtype=np.float32, base="target", rng=5),
        ais(params, n_chains=100, schedule="adaptive", n_steps=800, n_pilot=200, rng=6),
        bar(params, n_chains=100, n_steps=500, operator=0.5, data=data, rng=7, n_jobs=1),
    ):
        assert abs(est.log_z - truth) < 0.05, (est.log_z - truth, est.stderr)


def test_reverse_ais_from_exact_draws_is_an_upper_side_and_bar_from_them_is_exact():
    params = _cat(5, 4, 6, 1.5, 1)
    truth = log_partition_exact(params)
    draws = sample_exact(params, 300, rng=8)
    rev = reverse_ais(params, draws, n_chains=100, schedule=1000, rng=9)
    assert abs(rev.log_z - truth) < 0.05
    assert rev.diagnostics["log_likelihood"].shape == (100,)
    np.testing.assert_allclose(  # RAISE's bound is built on the categorical free energy
        rev.diagnostics["log_likelihood"],
        -free_energy(draws[rev.diagnostics["rows"]], params) - rev.diagnostics["log_z_base"] + rev.diagnostics["log_weights"],
    )
    one_hot = (draws[..., None] == np.arange(4)).astype(np.int8)
    est = bar(params, n_chains=100, n_steps=500, samples=one_hot, rng=10, n_jobs=1)
    assert est.diagnostics["start"] == "samples" and abs(est.log_z - truth) < 0.05


def test_a_categorical_path_is_the_run_of_its_options_and_seeded_runs_repeat():
    params = _cat(4, 3, 4, 3.0, 3)
    options = {"base": "target", "dtype": np.float32, "operator": "flip"}
    by_options = ais(params, n_chains=20, n_steps=200, rng=3, **options)
    by_path = ais(annealing_path(params, **options), n_chains=20, n_steps=200, rng=3)
    np.testing.assert_array_equal(by_path.diagnostics["log_weights"], by_options.diagnostics["log_weights"])
    via_dispatch = log_partition(params, "ais", n_chains=20, n_steps=200, rng=3, **options)
    assert via_dispatch.log_z == by_options.log_z
    assert log_partition(params, "bar", n_chains=20, n_steps=100, rng=1).log_z == bar(
        params, n_chains=20, n_steps=100, rng=1
    ).log_z


def test_log_partition_exact_and_refusals_for_categorical_models():
    params = _cat(4, 3, 3, 1.0, 0)
    exact = log_partition(params)
    assert exact.method == "exact" and exact.kind == "exact" and exact.log_z == log_partition_exact(params)
    assert exact.fingerprint == params.fingerprint() and exact.diagnostics["n_states"] == 8
    for method in ("tap", "bethe", "mean_field", "mixture_mean_field", "rts", "sams"):
        with pytest.raises(ValueError, match=r"does not support categorical.*'exact', 'ais', 'reverse_ais', 'bar'"):
            log_partition(params, method)
    with pytest.raises(ValueError, match="does not support categorical"):
        log_partition(params, "ais", backend="jax")
    with pytest.raises(ValueError, match="unknown log_partition method"):
        log_partition(params, "nope")
    path = annealing_path(params)
    with pytest.raises(ValueError, match="rts does not support categorical.*ais, reverse_ais, bar"):
        rts(path)
    with pytest.raises(ValueError, match="rts does not support categorical"):
        rts(params)
    with pytest.raises(ValueError, match="reverse_ais, bar"):  # a categorical path refused by name where
        as_path(path, estimator=sams)  # sams reaches it (sams itself first refuses non-RBMParams models by type)

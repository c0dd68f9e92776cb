"""Tests of exact enumeration (pymc_rbm.enumeration and the dispatchers)."""

from __future__ import annotations

import time

import _brute
import numpy as np
import pytest
from scipy.special import logsumexp

import pymc_rbm.enumeration as ex
from pymc_rbm import RBMParams
from pymc_rbm.energy import free_energy
from pymc_rbm.estimators import (
    MAX_ENUMERATION_BITS,
    EnumerationTooLarge,
    LogPartitionEstimate,
    binary_states,
    log_likelihood,
    log_marginal_visible,
    log_partition,
    log_partition_exact,
    moments,
    moments_exact,
    sample_visible_exact,
    states_at,
)

SHAPES = [(1, 1), (1, 3), (3, 1), (2, 5), (5, 2), (4, 4), (3, 7), (7, 3), (6, 8), (8, 6)]
SCALES = [0.1, 1.0, 5.0, 50.0]


def _model(nv, nh, scale, seed=0, distribution="uniform"):
    return RBMParams.random(nv, nh, scale=scale, distribution=distribution, rng=1000 * seed + 10 * nv + nh)


# ------------------------------------------------------------------- states
def test_binary_states_order():
    s = binary_states(3)
    np.testing.assert_array_equal(s, _brute.all_states(3))
    np.testing.assert_array_equal(binary_states(4, 5, 9), _brute.all_states(4)[5:9])
    np.testing.assert_array_equal(states_at(np.array([0, 6, 15]), 4), _brute.all_states(4)[[0, 6, 15]])
    assert binary_states(0).shape == (1, 0)
    assert binary_states(3, dtype=np.int8).dtype == np.int8


# -------------------------------------------------------------------- log Z
@pytest.mark.parametrize("nv, nh", SHAPES)
@pytest.mark.parametrize("scale", SCALES)
def test_log_z_matches_brute_force(nv, nh, scale):
    p = _model(nv, nh, scale)
    want = _brute.log_z(p.W, p.vbias, p.hbias)
    est = log_partition_exact(p)
    assert isinstance(est, LogPartitionEstimate)
    assert est.method == "exact" and est.stderr == 0.0
    assert est.log_z == pytest.approx(want, rel=1e-13, abs=1e-11)
    assert est.diagnostics["n_states"] == 2 ** min(nv, nh)
    assert est.diagnostics["enumerated_layer"] == ("hidden" if nh <= nv else "visible")
    # the transposed model has the same partition function
    assert log_partition_exact(p.transpose()).log_z == pytest.approx(want, rel=1e-13, abs=1e-11)


def test_log_z_normal_weights_and_float32_input():
    p = _model(5, 6, 2.0, distribution="normal")
    want = _brute.log_z(p.W, p.vbias, p.hbias)
    assert log_partition_exact(p).log_z == pytest.approx(want, rel=1e-13)
    p32 = p.astype(np.float32)
    want32 = _brute.log_z(p32.W, p32.vbias, p32.hbias)  # same float32 values, float64 arithmetic
    assert log_partition_exact(p32).log_z == pytest.approx(want32, rel=1e-12)


def test_log_z_zero_model():
    p = RBMParams(np.zeros((5, 3)), np.zeros(5), np.zeros(3))
    assert log_partition_exact(p).log_z == pytest.approx(8 * np.log(2.0), rel=1e-15)


def test_dispatcher():
    p = _model(4, 3, 1.0)
    assert log_partition(p).log_z == log_partition_exact(p).log_z
    assert log_partition(p, "exact").log_z == log_partition_exact(p).log_z
    assert float(log_partition(p)) == log_partition_exact(p).log_z
    # a uniform call over methods may pass rng: the deterministic exact method ignores it
    assert log_partition(p, "exact", rng=np.random.default_rng(0)).log_z == log_partition_exact(p).log_z
    with pytest.raises(ValueError, match=r"unknown log_partition method 'nope'; choose one of \[.*'exact'"):
        log_partition(p, "nope")
    with pytest.raises(ValueError, match=r"unknown moments method 'nope'"):
        moments(p, "nope")


def test_non_params_rejected():
    with pytest.raises(TypeError, match=r"params must be an RBMParams, got dict"):
        log_partition_exact({"W": np.zeros((2, 2))})


# ------------------------------------------------------------------ moments
@pytest.mark.parametrize("nv, nh", [(1, 1), (2, 5), (5, 2), (4, 4), (3, 7), (8, 6)])
@pytest.mark.parametrize("scale", [0.1, 1.0, 50.0])
def test_moments_match_brute_force(nv, nh, scale):
    p = _model(nv, nh, scale, seed=1)
    mv, mh, mvh = _brute.moments(p.W, p.vbias, p.hbias)
    m = moments_exact(p)
    assert m.v.shape == (nv,) and m.h.shape == (nh,) and m.vh.shape == (nv, nh)
    np.testing.assert_allclose(m.v, mv, atol=1e-12)
    np.testing.assert_allclose(m.h, mh, atol=1e-12)
    np.testing.assert_allclose(m.vh, mvh, atol=1e-12)
    # the dispatcher and a tiny chunk size give the same numbers
    m2 = moments(p, "exact", chunk_size=3)
    for a, b in zip(m, m2):
        np.testing.assert_allclose(a, b, atol=1e-14)


def test_moments_are_gradient_of_log_z():
    p = _model(4, 3, 1.0, seed=2)
    m = moments_exact(p)
    eps = 1e-6

    def lz(W, b, c):
        return log_partition_exact(RBMParams(W, b, c)).log_z

    W, b, c = (np.array(a) for a in (p.W, p.vbias, p.hbias))
    db = np.eye(4)[1] * eps
    assert (lz(W, b + db, c) - lz(W, b - db, c)) / (2 * eps) == pytest.approx(m.v[1], abs=1e-8)
    dc = np.eye(3)[2] * eps
    assert (lz(W, b, c + dc) - lz(W, b, c - dc)) / (2 * eps) == pytest.approx(m.h[2], abs=1e-8)
    dW = np.zeros_like(W)
    dW[3, 0] = eps
    assert (lz(W + dW, b, c) - lz(W - dW, b, c)) / (2 * eps) == pytest.approx(m.vh[3, 0], abs=1e-8)


# ---------------------------------------------------------------- marginals
@pytest.mark.parametrize("nv", [1, 2, 5, 8, 12])
@pytest.mark.parametrize("delta", [-3, 0, 2])
def test_log_marginal_visible_normalized(nv, delta):
    nh = max(1, nv + delta)
    p = _model(nv, nh, 1.0, seed=3)
    lp = log_marginal_visible(p)
    assert lp.shape == (2**nv,)
    assert np.all(np.isfinite(lp)) and np.all(lp <= 1e-12)
    assert logsumexp(lp) == pytest.approx(0.0, abs=1e-10)


@pytest.mark.parametrize("nv, nh", [(3, 7), (7, 3), (5, 5), (1, 4)])
@pytest.mark.parametrize("scale", [1.0, 50.0])
def test_log_marginal_visible_matches_brute_force(nv, nh, scale):
    p = _model(nv, nh, scale, seed=4)
    want = _brute.log_marginal_visible(p.W, p.vbias, p.hbias)
    got = log_marginal_visible(p)
    # compare where the probability is not astronomically small (there, only relative accuracy of -log p matters)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9)


def test_log_marginal_visible_honours_its_max_bits(monkeypatch):
    # a max_bits above the module default must also cover the log Z enumeration it needs
    monkeypatch.setattr(ex, "MAX_ENUMERATION_BITS", 3)
    p = _model(5, 6, 1.0, seed=3)
    lp = log_marginal_visible(p, max_bits=5)
    assert logsumexp(lp) == pytest.approx(0.0, abs=1e-12)


def test_log_marginal_visible_too_large():
    p = RBMParams(np.zeros((30, 2)), np.zeros(30), np.zeros(2))
    with pytest.raises(EnumerationTooLarge, match=r"the visible layer needs 2\*\*30"):
        log_marginal_visible(p)
    with pytest.raises(EnumerationTooLarge, match=r"2\*\*5 = 32 states, more than the limit of 2\*\*4"):
        log_marginal_visible(RBMParams(np.zeros((5, 2)), np.zeros(5), np.zeros(2)), max_bits=4)


# ------------------------------------------------------------------ sampling
def _total_variation(draws, log_p):
    nv = draws.shape[-1]
    idx = draws.reshape(-1, nv) @ (1 << np.arange(nv - 1, -1, -1))
    freq = np.bincount(idx, minlength=2**nv) / idx.size
    return 0.5 * np.abs(freq - np.exp(log_p)).sum()


@pytest.mark.parametrize(
    "nv, nh, scale",
    [(4, 6, 1.0), (6, 3, 1.0), (5, 5, 2.0), (3, 8, 3.0), (6, 2, 0.5)],
    ids=["visible-enumerated", "hidden-enumerated", "square", "visible-enumerated-strong", "hidden-enumerated-weak"],
)
def test_sample_visible_exact_distribution(nv, nh, scale):
    p = _model(nv, nh, scale, seed=5)
    draws = sample_visible_exact(p, 200_000, rng=np.random.default_rng(123))
    assert draws.shape == (200_000, nv) and draws.dtype == np.int64
    assert set(np.unique(draws)) <= {0, 1}
    log_p = _brute.log_marginal_visible(p.W, p.vbias, p.hbias)
    assert _total_variation(draws, log_p) < 0.02
    # first moments well inside a few standard errors of the exact ones
    mv = _brute.moments(p.W, p.vbias, p.hbias)[0]
    np.testing.assert_allclose(draws.mean(axis=0), mv, atol=5 * 0.5 / np.sqrt(200_000))


def test_sample_visible_exact_shapes_and_seed():
    p = _model(5, 3, 1.0)
    assert sample_visible_exact(p, rng=0).shape == (5,)
    assert sample_visible_exact(p, 7, rng=0).shape == (7, 5)
    assert sample_visible_exact(p, (2, 3), rng=0).shape == (2, 3, 5)
    np.testing.assert_array_equal(sample_visible_exact(p, 50, rng=9), sample_visible_exact(p, 50, rng=9))
    assert sample_visible_exact(p.transpose(), (4,), rng=0).shape == (4, 3)


def test_sample_visible_exact_deterministic_model():
    # a model that puts essentially all mass on one visible state
    W = np.zeros((4, 2))
    p = RBMParams(W, np.array([60.0, -60.0, 60.0, -60.0]), np.zeros(2))
    draws = sample_visible_exact(p, 100, rng=1)
    np.testing.assert_array_equal(draws, np.tile([1, 0, 1, 0], (100, 1)))
    draws_t = sample_visible_exact(RBMParams(np.zeros((2, 4)), np.zeros(2), p.vbias).transpose(), 100, rng=1)
    np.testing.assert_array_equal(draws_t, np.tile([1, 0, 1, 0], (100, 1)))


# --------------------------------------------------- blocked, threaded path
def _naive_log_z(p: RBMParams) -> float:
    """logsumexp of -F over all states of the smaller layer, straight from the formula."""
    q = p.transpose() if p.n_hidden <= p.n_visible else p
    return float(logsumexp(-free_energy(binary_states(q.n_visible), q)))


def _plain_log_weights(p: RBMParams) -> np.ndarray:
    """log w(h) = hbias·h + Σ_i log(1 + exp(vbias_i + (W h)_i)), independent of the package."""
    H = _brute.all_states(p.n_hidden)
    return H @ p.hbias + np.logaddexp(0.0, p.vbias[None, :] + H @ p.W.T).sum(axis=1)


@pytest.mark.parametrize(
    "nv, nh, scale",
    [(200, 14, 0.1), (200, 14, 1.0), (1000, 12, 0.05), (300, 12, 5.0), (14, 200, 0.3)],
)
def test_blocked_threaded_enumeration(nv, nh, scale):
    p = _model(nv, nh, scale, seed=6)
    q = p if nh <= nv else p.transpose()
    k, n_big = q.n_hidden, q.n_visible
    # the model is large enough to use several outer blocks
    n_low = min(k, max(0, int(np.log2(max(1, 2**18 // n_big)))))
    assert k - n_low >= 2
    ref = float(logsumexp(-free_energy(binary_states(k), q.transpose())))
    ref_plain = float(logsumexp(_plain_log_weights(q)))
    assert ref == pytest.approx(ref_plain, rel=1e-13)
    assert _naive_log_z(p) == pytest.approx(ref, rel=1e-13)
    results = []
    for n_threads in (1, 3, 8):
        ex._CACHE.clear()
        results.append(log_partition_exact(p, n_threads=n_threads).log_z)
    for r in results:
        assert r == pytest.approx(ref, rel=1e-13, abs=1e-10)
    assert max(results) - min(results) <= 1e-12 * max(1.0, abs(ref))
    # every enumerated state has the right log weight, in the lexicographic order
    logw = ex._enumerate(p).log_weights
    np.testing.assert_allclose(logw, _plain_log_weights(q), rtol=1e-13, atol=1e-10)


def test_softplus_column_sums_matches_logaddexp():
    rng = np.random.default_rng(12)
    for n_rows in (1, 2, 3, 7, 784, 1500):
        a = rng.normal(scale=30.0, size=(n_rows, 9))
        want = np.logaddexp(0.0, a).sum(axis=0)
        got = ex._softplus_column_sums(a.copy(), a.sum(axis=0))
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-10)


# -------------------------------------------------------------------- cache
def test_cache_identical_results_and_no_leak():
    ex._CACHE.clear()
    a = _model(30, 10, 1.0, seed=7)
    b = RBMParams(a.W, a.vbias, a.hbias + np.eye(10)[0] * 1e-9)  # differs in one entry, by a hair
    lz_a = log_partition_exact(a).log_z
    lz_a2 = log_partition_exact(RBMParams(a.W.copy(), a.vbias.copy(), a.hbias.copy())).log_z
    assert lz_a2 == lz_a  # a cache hit for an equal model: identical
    lz_b = log_partition_exact(b).log_z
    assert lz_b != lz_a
    # fresh computations (empty cache) give the same values: nothing leaked between models
    ex._CACHE.clear()
    assert log_partition_exact(b).log_z == pytest.approx(lz_b, rel=1e-15)
    assert log_partition_exact(a).log_z == pytest.approx(lz_a, rel=1e-15)
    assert lz_b - lz_a == pytest.approx(1e-9 * moments_exact(a).h[0], rel=1e-2)
    # moments, marginals and draws after log Z use the cached enumeration and stay right
    m = moments_exact(a)
    ex._CACHE.clear()
    m_fresh = moments_exact(a)
    for x, y in zip(m, m_fresh):
        np.testing.assert_array_equal(x, y)
    assert len(ex._CACHE) <= ex._CACHE_SIZE


def test_cache_distinguishes_shapes_with_same_bytes():
    ex._CACHE.clear()
    vals = np.arange(6.0) / 10
    p1 = RBMParams(vals.reshape(2, 3), np.zeros(2), np.zeros(3))
    p2 = RBMParams(vals.reshape(3, 2), np.zeros(3), np.zeros(2))
    p3 = RBMParams(vals.reshape(2, 3), np.zeros(2), np.zeros(3)).transpose()
    for p in (p1, p2, p3):
        assert log_partition_exact(p).log_z == pytest.approx(_brute.log_z(p.W, p.vbias, p.hbias), rel=1e-14)
        assert sample_visible_exact(p, 3, rng=0).shape == (3, p.n_visible)
        assert moments_exact(p).v.shape == (p.n_visible,)


def test_cache_eviction_bounded_and_read_only():
    ex._CACHE.clear()
    models = [_model(6, 3, 1.0, seed=s) for s in range(ex._CACHE_SIZE + 3)]
    values = [log_partition_exact(p).log_z for p in models]
    assert len(ex._CACHE) == ex._CACHE_SIZE
    for p, v in zip(models, values):  # evicted ones are recomputed to the same value
        assert log_partition_exact(p).log_z == v
    logw = ex._enumerate(models[0]).log_weights
    with pytest.raises(ValueError, match="read-only"):
        logw[0] = 0.0


def test_max_bits_checked_even_on_cache_hit():
    p = _model(8, 6, 1.0)
    log_partition_exact(p)
    with pytest.raises(EnumerationTooLarge):
        log_partition_exact(p, max_bits=5)


# ------------------------------------------------------- too large to enumerate
def test_enumeration_too_large_is_quick_and_clear(monkeypatch):
    def boom(*args, **kwargs):
        raise AssertionError("enumeration attempted")

    monkeypatch.setattr(ex, "_enumerated_log_weights", boom)
    p = RBMParams(np.zeros((30, 30)), np.zeros(30), np.zeros(30))
    t0 = time.perf_counter()
    with pytest.raises(EnumerationTooLarge) as info:
        log_partition_exact(p)
    assert time.perf_counter() - t0 < 0.5
    msg = str(info.value)
    assert "2**30" in msg and "1.07e+09" in msg
    assert f"2**{MAX_ENUMERATION_BITS}" in msg
    for method in ("ais", "rts", "sams", "tap", "bethe", "mean_field"):
        assert f"'{method}'" in msg
    assert "log_partition" in msg
    assert isinstance(info.value, ValueError)
    for fn in (moments_exact, sample_visible_exact, lambda q: log_likelihood(q, np.zeros(30))):
        with pytest.raises(EnumerationTooLarge, match=r"2\*\*30"):
            fn(p)
    with pytest.raises(EnumerationTooLarge, match=r"2\*\*8 = 256 states, more than the limit of 2\*\*7"):
        log_partition_exact(_model(8, 10, 1.0), max_bits=7)


def test_log_likelihood_with_given_log_z_on_large_model():
    p = RBMParams.random(40, 40, scale=0.01, rng=0)
    v = np.zeros((3, 40))
    ll = log_likelihood(p, v, log_z=12.5)
    np.testing.assert_allclose(ll, -free_energy(v, p) - 12.5)
    est = LogPartitionEstimate(log_z=12.5, method="ais", stderr=0.1)
    np.testing.assert_array_equal(log_likelihood(p, v, log_z=est), ll)


# ------------------------------------------------------------ log_likelihood
def test_log_likelihood_matches_brute_force():
    p = _model(5, 4, 2.0, seed=8)
    V = _brute.all_states(5)
    want = _brute.log_marginal_visible(p.W, p.vbias, p.hbias)
    np.testing.assert_allclose(log_likelihood(p, V), want, atol=1e-12)
    np.testing.assert_allclose(log_likelihood(p, V.astype(bool)), want, atol=1e-12)
    np.testing.assert_allclose(log_likelihood(p, V.astype(np.uint8)), want, atol=1e-12)
    got = log_likelihood(p, V[:12].reshape(3, 4, 5))
    assert got.shape == (3, 4)
    np.testing.assert_allclose(got.ravel(), want[:12], atol=1e-12)
    assert np.ndim(log_likelihood(p, V[3])) == 0


def test_log_likelihood_rejects_bad_data():
    p = _model(5, 4, 1.0)
    with pytest.raises(ValueError, match=r"data must be binary \(values in \{0, 1\}\); found 1 other value\(s\), e.g. 0.5 at index \(0, 2\)"):
        log_likelihood(p, [[0, 1, 0.5, 1, 0]])
    with pytest.raises(ValueError, match=r"data has 4 units in its last dimension \(shape \(2, 4\)\), but the RBM has n_visible = 5"):
        log_likelihood(p, np.zeros((2, 4)))
    with pytest.raises(ValueError, match=r"data must be binary"):
        log_likelihood(p, [[0, 1, np.nan, 1, 0]])
    with pytest.raises(ValueError, match=r"data must be binary.*-1"):
        log_likelihood(p, [[0, 1, -1, 1, 0]])
    with pytest.raises(ValueError, match=r"data must have at least one dimension"):
        log_likelihood(p, 1)
    with pytest.raises(ValueError, match=r"data must be numeric or boolean"):
        log_likelihood(p, np.array([["0", "1", "0", "1", "0"]]))


def test_log_likelihood_does_not_mutate_input():
    p = _model(5, 4, 1.0)
    rng = np.random.default_rng(0)
    data = (rng.random((7, 5)) < 0.5).astype(np.uint8)
    data0 = data.copy()
    log_likelihood(p, data)
    np.testing.assert_array_equal(data, data0)
    assert data.dtype == np.uint8
    data.setflags(write=False)  # read-only input is fine
    log_likelihood(p, data)
    f = data.astype(float)
    f0 = f.copy()
    log_likelihood(p, f)
    np.testing.assert_array_equal(f, f0)


# --------------------------------------------------------- shared MNIST models
@pytest.mark.parametrize(
    "name, log_z",
    [("mnist_h10", 226.1132), pytest.param("mnist_h20", 221.0668, marks=pytest.mark.slow)],
)
def test_mnist_log_z(mnist_model, name, log_z):
    p = mnist_model(name)
    assert (p.n_visible, p.n_hidden) == (784, int(name[len("mnist_h") :]))
    assert log_partition_exact(p).log_z == pytest.approx(log_z, abs=1e-3)


@pytest.mark.parametrize(
    "name, mean_ll",
    [("mnist_h10", -173.874), pytest.param("mnist_h20", -145.057, marks=pytest.mark.slow)],
)
def test_mnist_test_log_likelihood(mnist_model, binarized_mnist_test, name, mean_ll):
    p = mnist_model(name)
    data = binarized_mnist_test
    assert data.shape == (10000, 784)
    before = data.copy()
    ll = log_likelihood(p, data)
    assert ll.shape == (10000,)
    assert float(ll.mean()) == pytest.approx(mean_ll, abs=1e-3)
    np.testing.assert_array_equal(data, before)


def test_mnist_h10_blocked_equals_naive(mnist_model):
    p = mnist_model("mnist_h10")
    ex._CACHE.clear()
    assert log_partition_exact(p, n_threads=4).log_z == pytest.approx(_naive_log_z(p), rel=1e-13)


# ------------------------------------------------- log_likelihood of every layer type
def _layer_cases():
    """(name, params, a few rows of data, that layer's own exact log p of the rows)."""
    from pymc_rbm.categorical import CategoricalRBMParams
    from pymc_rbm.categorical import log_prob_exact as categorical_log_prob
    from pymc_rbm.gaussian import GaussianRBMParams
    from pymc_rbm.gaussian import log_prob_exact as gaussian_log_prob

    binary = _model(4, 3, 2.0, seed=3)
    V = _brute.all_states(4)
    spin = _model(4, 3, 2.0, seed=4).to_spin()
    S = _brute.all_states(4, values=(-1.0, 1.0))
    table, _, _ = _brute.neg_energy_table(spin.J, spin.vfield, spin.hfield, values=(-1.0, 1.0))
    categorical = CategoricalRBMParams.random(3, 4, 2, scale=1.5, rng=5)
    labels = np.array([[0, 1, 3], [2, 2, 0], [3, 0, 1]])
    gaussian = GaussianRBMParams.random(3, 2, scale=1.5, rng=6)
    x = np.random.default_rng(7).normal(size=(4, 3))
    return [
        ("binary", binary, V[[0, 5, 15]],
         _brute.log_marginal_visible(binary.W, binary.vbias, binary.hbias)[[0, 5, 15]]),
        ("spin", spin, S[[0, 6, 15]], (_brute._lse(table, axis=1) - _brute._lse(table))[[0, 6, 15]]),
        ("categorical", categorical, labels, categorical_log_prob(labels, categorical)),
        ("gaussian", gaussian, x, gaussian_log_prob(x, gaussian)),
    ]


@pytest.mark.parametrize("case", range(4), ids=["binary", "spin", "categorical", "gaussian"])
def test_log_likelihood_is_each_layers_exact_log_probability(case):
    _, params, rows, want = _layer_cases()[case]
    rows0 = rows.copy()
    got = log_likelihood(params, rows)
    assert got.shape == (len(rows),)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(rows, rows0)  # not modified
    # the same with log Z given as the model's own estimate (or a number)
    if hasattr(params, "fingerprint"):
        est = log_partition(params, "exact")
        np.testing.assert_allclose(log_likelihood(params, rows, log_z=est), want, rtol=1e-12, atol=1e-12)
    else:
        log_z = log_partition_exact(params.to_binary()).log_z - params.log_offset
        np.testing.assert_allclose(log_likelihood(params, rows, log_z=log_z), want, rtol=1e-12, atol=1e-12)
    # batch axes come first: a (2, 1, n) array gives (2, 1)
    assert log_likelihood(params, rows[:2, None]).shape == (2, 1)


def test_log_likelihood_sums_to_one_over_the_states_of_a_categorical_rbm():
    from pymc_rbm.categorical import CategoricalRBMParams
    from pymc_rbm.categorical.params import one_hot

    p = CategoricalRBMParams.random(3, 4, 2, scale=2.0, rng=8)  # 3 units of 4 values
    states = np.array(np.meshgrid(*[np.arange(4)] * 3, indexing="ij")).reshape(3, -1).T
    ll = log_likelihood(p, states)
    assert np.exp(ll).sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_array_equal(log_likelihood(p, one_hot(states, 4)), ll)  # one-hot rows read as labels


@pytest.mark.parametrize(
    "case, data, match",
    [
        ("spin", [[0.0, 1.0, 1.0, -1.0]], r"data must be binary \(values in \{-1, 1\}\); found 1 other value"),
        ("spin", np.ones((2, 3)),
         r"data has 3 units in its last dimension \(shape \(2, 3\)\), but the RBM has n_visible = 4"),
        ("categorical", [[0, 1, 4]], r"data must hold integer labels in \[0, 4\)"),
        ("categorical", [[0, 1.5, 2]], r"data must hold integer labels"),
        ("categorical", np.zeros((2, 4), dtype=int), r"data has 4 units"),
        ("gaussian", [[0.0, np.nan, 1.0]], r"data contains non-finite values"),
        ("gaussian", np.zeros((2, 4)), r"data must have 3 units in its last axis, got shape \(2, 4\)"),
        ("gaussian", np.array([["a", "b", "c"]]), r"data must be real numbers, got dtype <U1"),
        ("gaussian", np.zeros((2, 3), dtype=bool), r"data must be real numbers, got dtype bool"),
    ],
)
def test_log_likelihood_refuses_data_the_layer_cannot_take(case, data, match):
    params = {name: p for name, p, _, _ in _layer_cases()}[case]
    copy = np.array(data, copy=True)
    with pytest.raises(ValueError, match=match):
        log_likelihood(params, data)
    np.testing.assert_array_equal(np.asarray(data), copy)


def test_log_likelihood_refuses_estimates_of_other_models_and_non_models():
    from pymc_rbm.categorical import CategoricalRBMParams
    from pymc_rbm.gaussian import GaussianRBMParams

    cases = {name: (p, rows) for name, p, rows, _ in _layer_cases()}
    others = {"binary": RBMParams.random(4, 3, rng=99), "categorical": CategoricalRBMParams.random(3, 4, 2, rng=99),
              "gaussian": GaussianRBMParams.random(3, 2, rng=99)}
    for name, other in others.items():
        params, rows = cases[name]
        est = log_partition(other, "exact")
        with pytest.raises(ValueError, match=r"computed for another model than the one given"):
            log_likelihood(params, rows, log_z=est)
        with pytest.raises(ValueError, match=r"log_z must be a finite real number, got nan"):
            log_likelihood(params, rows, log_z=np.nan)
    spin, rows = cases["spin"]
    with pytest.raises(ValueError, match=r"pass log_z as a number \(for spins, log Z of params.to_binary\(\) minus"):
        log_likelihood(spin, rows, log_z=log_partition(spin.to_binary(), "exact"))
    with pytest.raises(TypeError, match=r"params must be an RBMParams, a SpinRBMParams, a CategoricalRBMParams or a "
                                        r"GaussianRBMParams, got dict"):
        log_likelihood({"W": np.zeros((2, 2))}, np.zeros((1, 2)))

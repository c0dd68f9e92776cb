"""Bennett's acceptance ratio over forward and reverse AIS, and the mean-field base rate, against enumeration."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.special import expit, logsumexp

from pymc_rbm import RBMParams
from pymc_rbm.estimators import (
    LogPartitionEstimate,
    log_partition,
    log_partition_exact,
    sample_visible_exact,
)
from pymc_rbm.estimators.ais import ais
from pymc_rbm.estimators.base_rate import base_rate_vbias
from pymc_rbm.estimators import annealing_path
from pymc_rbm.estimators.bar import bar, bennett_log_ratio, ladder_start, resample_by_weight

TRUTH_H20 = 221.0668  # exact, by enumeration of the hidden states (../shared/data/README.md)


def _model(nv, nh, scale, seed=0):
    return RBMParams.random(nv, nh, scale=scale, bias_scale=0.5, rng=seed)


def _product_draws(rng, bias, n):
    return (rng.random((n, bias.size)) < expit(bias)).astype(float)


def _product_log_z(bias):
    return float(np.logaddexp(0.0, bias).sum())


# ------------------------------------------------------ Bennett's equation
def test_bennett_log_ratio_of_two_product_distributions():
    """iid draws of two product distributions, whose log Z are known: BAR is right where one side is not."""
    rng = np.random.default_rng(0)
    b0, b1 = rng.normal(0.0, 1.0, 30), rng.normal(0.0, 1.0, 30) + 1.5
    truth = _product_log_z(b1) - _product_log_z(b0)
    x, y = _product_draws(rng, b0, 3000), _product_draws(rng, b1, 2000)  # unequal sizes: the s term matters
    u, r = x @ (b1 - b0), y @ (b0 - b1)
    delta = bennett_log_ratio(u, r)
    # its standard error here is about 0.05 (bootstrap); the one-sided average misses by several nats
    assert abs(delta - truth) < 0.15
    one_sided = logsumexp(u) - np.log(u.size)
    assert one_sided < truth - 1.0
    # the root of the equation, and antisymmetric in the direction
    s = np.log(r.size / u.size)
    assert expit(u - delta + s).sum() == pytest.approx(expit(delta + r - s).sum(), rel=1e-9)
    assert bennett_log_ratio(r, u) == pytest.approx(-delta, abs=1e-9)
    # equal distributions: the constant offset itself
    assert bennett_log_ratio(np.full(5, 2.5), np.full(7, -2.5)) == pytest.approx(2.5, abs=1e-9)


def test_bennett_log_ratio_negative_controls():
    """The likely mistakes (reverse weights with the wrong sign, the sample-size term left out) are caught."""
    rng = np.random.default_rng(1)
    b0, b1 = np.zeros(20), np.full(20, 1.0)
    truth = _product_log_z(b1) - _product_log_z(b0)
    x, y = _product_draws(rng, b0, 4000), _product_draws(rng, b1, 500)
    u, r = x @ (b1 - b0), y @ (b0 - b1)
    assert abs(bennett_log_ratio(u, r) - truth) < 0.1
    assert abs(bennett_log_ratio(u, -r) - truth) > 1.0  # reverse weights taken as forward ones

    def no_size_term(u, r):  # s = 0 although n_f != n_r
        from scipy.optimize import brentq

        return brentq(lambda d: expit(u - d).sum() - expit(d + r).sum(), -100, 100)

    assert abs(no_size_term(u, r) - truth) > 0.3


def test_bennett_log_ratio_validates():
    with pytest.raises(ValueError, match="at least one"):
        bennett_log_ratio([], [1.0])
    with pytest.raises(ValueError, match="finite"):
        bennett_log_ratio([np.nan], [1.0])


def test_resample_by_weight():
    rng = np.random.default_rng(2)
    states = np.arange(4)[:, None] * np.ones((1, 3))
    out = resample_by_weight(rng, states, np.log([0.0 + 1e-300, 1.0, 3.0, 0.0 + 1e-300]), 400)
    counts = np.bincount(out[:, 0].astype(int), minlength=4)
    assert counts.tolist() == [0, 100, 300, 0]  # systematic resampling: the expected counts exactly


# ----------------------------------------------------------------- bar()
CASES = [(20, 8, 0.5), (20, 8, 2.0), (12, 10, 1.0)]


@pytest.mark.parametrize("nv, nh, scale", CASES)
@pytest.mark.parametrize("operator", ["gibbs", "flip"])
def test_bar_matches_exact(nv, nh, scale, operator):
    p = _model(nv, nh, scale)
    truth = log_partition_exact(p).log_z
    est = bar(p, n_chains=100, n_steps=600, operator=operator, rng=2)
    assert isinstance(est, LogPartitionEstimate) and est.method == "bar"
    err = est.log_z - truth
    assert abs(err) < 4 * est.stderr + 1e-3, (err, est.stderr)
    assert abs(err) < 0.05 * max(1.0, scale)
    assert est.interval[0] <= truth <= est.interval[1]
    d = est.diagnostics
    assert d["log_weights_forward"].shape == (100,) and d["log_weights_reverse"].shape == (100,)
    assert d["start"] == "forward" and d["samples"].shape == (100, nv) and d["n_steps"] == 600
    assert 1.0 <= d["forward"]["ess"] <= 100.0 and 1.0 <= d["reverse"]["ess"] <= 100.0
    assert d["forward"]["log_z"] == pytest.approx(d["log_z_base"] + logsumexp(d["log_weights_forward"]) - np.log(100))


def test_bar_from_exact_samples_and_a_negative_control():
    """Reverse runs from exact draws agree with enumeration; from draws of another distribution they do not."""
    p = _model(20, 8, 2.0)
    truth = log_partition_exact(p).log_z
    exact_draws = sample_visible_exact(p, 300, rng=3)
    est = bar(p, n_chains=100, n_steps=300, samples=exact_draws, rng=4)
    assert est.diagnostics["start"] == "samples"
    assert abs(est.log_z - truth) < 4 * est.stderr + 1e-3
    # five steps from the target's own biases: the forward runs are poor, the reverse ones carry the estimate
    short = bar(p, n_chains=100, schedule=5, samples=exact_draws, base="target", rng=4)
    assert abs(short.log_z - truth) < 3 * short.stderr
    wrong = (np.random.default_rng(5).random((300, 20)) < 0.5).astype(int)  # uniform draws, not the model's
    with pytest.warns(RuntimeWarning, match="above the reverse"):  # and the directions say so
        bad = bar(p, n_chains=100, schedule=5, samples=wrong, base="target", n_equilibrate=0, rng=4)
    assert abs(bad.log_z - truth) > 8 * bad.diagnostics["stderr_chains"]  # the runs' own error is far too small
    assert bad.diagnostics["stderr_rule"] == "coverage"  # below the mean-field bound: widened to reach it
    assert abs(bad.log_z - truth) <= 3 * bad.stderr


def test_bar_is_more_accurate_than_ais_at_equal_cost():
    """A sharp RBM, short runs from a poor base: AIS's estimates scatter by nats, BAR's of as many sweeps less."""
    p = _model(20, 10, 3.0, seed=4)
    truth = log_partition_exact(p).log_z
    bar_err, ais_err = [], []
    for seed in range(6):
        bar_err.append(bar(p, n_chains=50, n_steps=60, base="target", n_equilibrate=0, rng=seed).log_z - truth)
        ais_err.append(ais(p, n_chains=100, n_steps=60, base="target", rng=seed).log_z - truth)
    assert np.sqrt(np.mean(np.square(bar_err))) < 0.5 * np.sqrt(np.mean(np.square(ais_err)))


def test_equilibrating_sweeps_keep_exact_draws_exact_and_move_the_starts():
    """Sweeps at β = 1 before the reverse runs leave the target invariant: from exact draws the estimate still
    agrees with enumeration; from the forward states they move the reverse runs' starts."""
    p = _model(20, 8, 2.0)
    truth = log_partition_exact(p).log_z
    exact = bar(p, n_chains=100, n_steps=300, samples=sample_visible_exact(p, 300, rng=3), n_equilibrate=500, rng=4)
    assert abs(exact.log_z - truth) < 4 * exact.stderr + 1e-3
    assert exact.diagnostics["n_equilibrate"] == 500
    moved = bar(p, n_chains=50, n_steps=90, n_equilibrate=50, rng=0)
    kept = bar(p, n_chains=50, n_steps=90, n_equilibrate=0, rng=0)
    assert not np.array_equal(moved.diagnostics["samples"], kept.diagnostics["samples"])
    assert moved.diagnostics["log_weights_forward"] == pytest.approx(kept.diagnostics["log_weights_forward"])
    assert bar(p, n_chains=10, n_steps=90, rng=0).diagnostics["n_equilibrate"] == 10  # a ninth of the steps
    with pytest.raises(ValueError, match="n_equilibrate"):
        bar(p, n_equilibrate=-1)


def test_bar_repeats_validates_and_mutates_nothing():
    p = _model(8, 4, 1.0)
    a = bar(p, n_chains=20, n_steps=50, rng=7)
    b = bar(p, n_chains=20, n_steps=50, rng=np.random.default_rng(7))
    assert a.log_z == b.log_z and a.stderr == b.stderr
    assert log_partition(p, "bar", n_chains=20, n_steps=50, rng=7).log_z == a.log_z
    samples = np.array([[0, 1] * 4] * 3)
    before = samples.copy()
    bar(p, n_chains=4, n_steps=10, samples=samples, rng=0)
    np.testing.assert_array_equal(samples, before)
    with pytest.raises(ValueError, match="n_chains"):
        bar(p, n_chains=1)
    with pytest.raises(ValueError, match="not both"):
        bar(p, n_steps=10, schedule=10)
    with pytest.raises(ValueError, match="binary"):
        bar(p, samples=samples * 2)
    with pytest.raises(ValueError, match="no rows"):
        bar(p, samples=np.zeros((0, 8)))
    with pytest.raises(TypeError, match="RBMParams"):
        bar(p.W)


# ------------------------------------------------------------ ladder_start
def _exact_on_path(path, beta):
    """log Z and the mean of v at the point β of a one-model path, by enumerating v."""
    nv = path.n_visible
    v = ((np.arange(2**nv)[:, None] >> np.arange(nv)) & 1).astype(np.float64)
    v, a, vb = path.start(v)
    log_f = path.log_f(a, vb, path.coefficients(beta))
    log_z = logsumexp(log_f)
    return log_z, np.exp(log_f - log_z) @ v


def test_ladder_start_matches_enumeration_at_every_rung():
    """Every rung's log Z against enumeration of the path's intermediate model, and its weighted states' mean
    against the exact mean there. Negative control: unweighted, the reverse chains that reached β = 0 in 60 steps
    still lag, and the mean there misses by several times as much."""
    p = _model(12, 8, 2.5, seed=3)
    path = annealing_path(p, base="target")
    rungs = np.array([0.0, 0.3, 0.6, 0.8, 1.0])
    start = ladder_start(path, np.random.default_rng(0), rungs, 1000, n_steps=60, n_equilibrate=20, n_jobs=1)
    assert start.states.shape == (5, 2000, 12) and start.log_w.shape == (5, 2000)
    assert start.log_z[0] == path.log_z_base and start.stderr[0] == 0.0
    assert start.estimate.log_z == start.log_z[-1] and start.estimate.stderr == start.stderr[-1]
    weighted_err, plain_err = [], []
    for k, beta in enumerate(rungs):
        log_z, mean = _exact_on_path(path, beta)
        assert abs(start.log_z[k] - log_z) < 4 * start.stderr[k] + 1e-9, (k, start.log_z[k] - log_z, start.stderr[k])
        w = np.exp(start.log_w[k] - logsumexp(start.log_w[k]))
        weighted_err.append(np.abs(w @ start.states[k] - mean).max())
        plain_err.append(np.abs(start.states[k].mean(axis=0) - mean).max())
    assert max(weighted_err) < 0.07, weighted_err  # Monte Carlo error of about 1000 effective draws
    assert plain_err[0] > 3 * weighted_err[0], (plain_err, weighted_err)


def test_ladder_start_validates():
    path = annealing_path(_model(8, 4, 1.0), base="target")
    rng = np.random.default_rng(0)
    for rungs in ([0.2, 1.0], [0.0, 0.5], [0.0, 0.6, 0.4, 1.0], [0.0]):
        with pytest.raises(ValueError, match="rungs"):
            ladder_start(path, rng, rungs, 10, n_steps=20)
    with pytest.raises(ValueError, match="n_steps"):
        ladder_start(path, rng, [0.0, 1.0], 10, n_steps=0)


# ----------------------------------------------------- mean-field base rate
@pytest.mark.parametrize("estimator", ["ais", "bar"])
def test_mean_field_base_matches_exact(estimator):
    p = _model(20, 8, 2.0, seed=1)
    truth = log_partition_exact(p).log_z
    est = log_partition(p, estimator, n_chains=100, n_steps=600, base="mean_field", rng=8)
    assert abs(est.log_z - truth) < 4 * est.stderr + 1e-3


def test_mean_field_base_is_the_default_without_data_and_beats_the_target_base():
    """The measurement behind the default: smaller log-weight spread than the target's own biases."""
    p = _model(20, 10, 1.5, seed=0)
    mf = ais(p, n_chains=100, n_steps=1000, rng=9)
    np.testing.assert_array_equal(mf.diagnostics["base_vbias"], base_rate_vbias(p, base="mean_field"))
    target = ais(p, n_chains=100, n_steps=1000, base="target", rng=9)
    assert mf.diagnostics["log_weights"].std() < 0.5 * target.diagnostics["log_weights"].std()


# ----------------------------------------------------------------- MNIST
@pytest.mark.slow
def test_bar_on_mnist_h20(mnist_model, shared_data):
    p = mnist_model("mnist_h20")
    with np.load(shared_data("mnist/binarized_mnist_packed.npz")) as f:
        train = np.unpackbits(f["train"], axis=1)[:, :784]
    est = bar(p, data=train, n_steps=8000, rng=0)
    assert abs(est.log_z - TRUTH_H20) < 0.1
    assert est.interval[0] < TRUTH_H20 < est.interval[1]


# ------------------------------------------------------------ ±1 spins
def test_bar_on_a_spin_rbm_matches_enumeration():
    """BAR through the path of a ±1 spin RBM, from its own forward run and from exact spin draws."""
    spin = RBMParams.random(10, 6, scale=1.5, rng=7).to_spin()
    s = np.array(list(itertools.product([-1.0, 1.0], repeat=10)))
    t = np.array(list(itertools.product([-1.0, 1.0], repeat=6)))
    truth = float(logsumexp(s @ spin.J @ t.T + (s @ spin.vfield)[:, None] + (t @ spin.hfield)[None, :]))
    est = bar(spin, n_chains=60, n_steps=900, rng=1)
    assert abs(est.log_z - truth) < 4 * est.stderr + 0.01
    assert set(np.unique(est.diagnostics["samples"])) <= {-1, 1}
    draws = 2.0 * sample_visible_exact(spin.to_binary(), 200, rng=2) - 1.0
    given = bar(spin, n_chains=60, n_steps=900, samples=draws, dtype=np.float64, operator="flip", rng=3)
    assert abs(given.log_z - truth) < 4 * given.stderr + 0.01
    with pytest.raises(ValueError, match="samples"):
        bar(spin, n_chains=10, n_steps=30, samples=(draws + 1) / 2, rng=0)

"""Tests of self-adjusted mixture sampling (pymc_rbm.estimators.sams)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from pymc_rbm import RBMParams
from pymc_rbm.estimators import (
    LOG_PARTITION_METHODS,
    PathOptions,
    SAMSAdaptation,
    StartOptions,
    log_partition,
    log_partition_exact,
    sample_visible_exact,
)
from pymc_rbm.estimators.sams import _check_drift, sams
from pymc_rbm.estimators.sams_kernel import SAMSGain

TRUTH = {"mnist_h10": 226.1132, "mnist_h20": 221.0668}


def _model(nv, nh, scale, seed=0):
    return RBMParams.random(nv, nh, scale=scale, rng=100 * seed + 10 * nv + nh)


# ----------------------------------------------------------------- single
CASES = [(20, 8, 0.5), (20, 8, 2.0), (12, 10, 1.0)]


@pytest.mark.parametrize("nv, nh, scale", CASES)
def test_sams_matches_exact(nv, nh, scale):
    p = _model(nv, nh, scale)
    truth = log_partition_exact(p).log_z
    data = sample_visible_exact(p, 200, rng=1)
    est = sams(p, data=data, n_runs=24, n_sweeps=3000, start=StartOptions(n_pilot=300, n_start=1500), rng=2)
    assert est.method == "sams"
    err = est.log_z - truth
    assert abs(err) < 4 * est.stderr + 2e-3, (err, est.stderr)
    assert abs(err) < 0.05 * max(1.0, scale)
    d = est.diagnostics
    L = d["labels_beta"].size
    assert d["zeta"].shape == (24, L) and np.all(d["zeta"][:, 0] == 0.0)
    assert d["log_z_runs"].shape == (24,) and d["log_z_labels"].shape == (L,)
    assert d["log_z_labels"][-1] == pytest.approx(est.log_z)
    assert 0.2 < d["acceptance"] < 0.95
    assert np.all(d["occupancy"] * L > 0.7) and np.all(d["occupancy"] * L < 1.3)
    assert abs(d["drift"]["mean"][0]) < 3.29 * d["drift"]["stderr"][0]  # converged: no trend, no warning


def _watch_gains(monkeypatch) -> list:
    """Record ``(t, t_start, labels)`` of every call of the gains, that is of every iteration of SAMS."""
    calls = []
    original = SAMSGain.__call__

    def spy(self, t, labels):
        calls.append((t, self.t_start, np.array(labels)))
        return original(self, t, labels)

    monkeypatch.setattr(SAMSGain, "__call__", spy)
    return calls


@pytest.mark.parametrize("init", ["bar", "ais"])
def test_runs_of_several_chains_match_exact(init, monkeypatch):
    """Chains sharing a run's ζ: the estimate agrees with enumeration, and every run's chains span the ladder."""
    p = _model(20, 8, 2.0)
    truth = log_partition_exact(p).log_z
    data = sample_visible_exact(p, 200, rng=1)
    calls = _watch_gains(monkeypatch)  # to see the labels the runs start from
    start = StartOptions(init=init, n_pilot=300, n_start=1500)
    est = sams(p, data=data, n_runs=6, chains_per_run=5, n_sweeps=2000, start=start, rng=2)
    assert abs(est.log_z - truth) < 4 * est.stderr + 2e-3 and abs(est.log_z - truth) < 0.1
    d = est.diagnostics
    assert d["chains_per_run"] == 5 and d["zeta"].shape[0] == 6 and d["log_z_runs"].shape == (6,)
    L = d["labels_beta"].size
    first = calls[0][2]
    assert calls[0][0] == 1 and first.shape == (6, 5) and np.all(first.max(axis=1) - first.min(axis=1) >= L // 2)
    with pytest.raises(ValueError, match="chains_per_run"):
        sams(p, chains_per_run=0)


@pytest.mark.filterwarnings("ignore:SAMS. the chains are collapsed:RuntimeWarning")  # the last run: 10 iterations
def test_several_sweeps_per_iteration(monkeypatch):
    """``sweeps_per_move`` sweeps before each jump and update: fewer iterations, the same fixed point."""
    p = _model(20, 8, 2.0)
    truth = log_partition_exact(p).log_z
    data = sample_visible_exact(p, 200, rng=1)
    seen = _watch_gains(monkeypatch)
    est = sams(p, data=data, n_runs=6, chains_per_run=5, n_sweeps=3002, sweeps_per_move=3,
               start=StartOptions(n_pilot=300, n_start=1500), rng=2)  # fmt: skip
    assert [t for t, _, _ in seen] == list(range(1, 1001))  # 1000 iterations; the sweeps left over are not taken
    assert seen[0][1] == 1000  # the BAR start counts as many observations as there are iterations
    d = est.diagnostics
    assert (d["sweeps_per_move"], d["n_moves"], d["n_moves_done"], d["n_sweeps_done"]) == (3, 1000, 1000, 3000)
    assert abs(est.log_z - truth) < 4 * est.stderr + 2e-3 and abs(est.log_z - truth) < 0.1
    # the BAR start's default: four sweeps per iteration
    seen.clear()
    assert sams(p, data=data, n_runs=2, chains_per_run=2, n_sweeps=40, start=StartOptions(n_pilot=40, n_start=200),
                rng=0).diagnostics["sweeps_per_move"] == 4  # fmt: skip
    assert [t for t, _, _ in seen] == list(range(1, 11))


@pytest.mark.filterwarnings("ignore:SAMS. the chains are collapsed:RuntimeWarning")
def test_drift_between_the_halves_warns():
    """A trend between the middle and the end of the runs is flagged; noise about zero is not."""
    rng = np.random.default_rng(0)
    for drift, warns in [(rng.normal(0.0, 1.0, (32, 2)), False), (np.zeros((8, 1)), False),
                         (rng.normal(1.0, 1.0, (32, 2)), True)]:  # fmt: skip
        if warns:
            with pytest.warns(RuntimeWarning, match="still move"):
                d = _check_drift(drift)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # any warning fails the test
                d = _check_drift(drift)
        np.testing.assert_allclose(d["mean"], drift.mean(axis=0))
        np.testing.assert_allclose(d["stderr"], drift.std(axis=0, ddof=1) / np.sqrt(drift.shape[0]))
    # a run far from converged (ζ from zero, SAMC's gain with a small t0, few iterations: 10 nats low) is still moving
    p = _model(20, 8, 2.0)
    with pytest.warns(RuntimeWarning, match="still move"):
        est = sams(p, n_runs=16, n_sweeps=300, start=StartOptions(init="zero", n_pilot=100),
                   adaptation=SAMSAdaptation(gain="samc", t0=5.0), path_options=PathOptions(base="target"), rng=0)
    assert est.log_z < log_partition_exact(p).log_z - 5.0
    assert abs(est.diagnostics["drift"]["mean"][0]) > 3.29 * est.diagnostics["drift"]["stderr"][0]
    # runs still moving are no independent draws around one value: the error is their spread, or the move
    runs, d = est.diagnostics["log_z_runs"], est.diagnostics
    assert d["stderr_rule_chains"] == "spread"
    assert d["stderr_chains"] == pytest.approx(max(runs.std(ddof=1), abs(d["drift"]["mean"][0])))
    assert d["stderr_chains"] > d["stderr_nominal"] * 3
    # 10 nats low, below the mean-field bound: the error then reaches the bound
    assert d["stderr_rule"] == "coverage" and est.stderr >= d["stderr_chains"]


@pytest.mark.parametrize("rao_blackwell", ["local", "none"])
@pytest.mark.parametrize("init, gain", [("ais", "tan"), ("zero", "tan"), ("zero", "samc")])
def test_sams_variants(rao_blackwell, init, gain):
    p = _model(20, 8, 1.0)
    truth = log_partition_exact(p).log_z
    est = sams(p, n_runs=24, n_sweeps=3000, adaptation=SAMSAdaptation(gain=gain, rao_blackwell=rao_blackwell),
               start=StartOptions(init=init, n_pilot=200), rng=3)
    assert abs(est.log_z - truth) < 4 * est.stderr + 2e-3
    assert abs(est.log_z - truth) < 0.3  # these variants are noisier than the default (global RB, Tan's gain)
    if init == "zero" and gain == "tan":
        assert np.all(est.diagnostics["burn_in_end"] > 1)  # the first stage ran and ended


def test_explicit_labels_and_init():
    p = _model(12, 6, 1.0)
    truth = log_partition_exact(p).log_z
    betas = np.linspace(0, 1, 7)
    est = sams(p, betas=betas, n_runs=16, n_sweeps=2000, start=StartOptions(init=np.arange(7.0), n_pilot=100), rng=4)
    np.testing.assert_array_equal(est.diagnostics["labels_beta"], betas)
    assert abs(est.log_z - truth) < 4 * est.stderr + 2e-3


# ---------------------------------------------------------------- several
def test_several_models_in_one_run():
    """Seed 004's use: every model's log Z (and the differences) from one mixture over all of them."""
    models = [_model(12, 4, 1.0, seed=1), _model(12, 6, 1.5, seed=2), _model(12, 3, 0.8, seed=3)]
    truths = np.array([log_partition_exact(m).log_z for m in models])
    ests = sams(models, n_runs=24, n_sweeps=4000, start=StartOptions(n_pilot=200), rng=5)
    assert isinstance(ests, list) and len(ests) == 3
    for est, truth in zip(ests, truths):
        assert abs(est.log_z - truth) < 4 * est.stderr + 2e-3
        assert abs(est.log_z - truth) < 0.1
    d = ests[0].diagnostics
    assert d["model_labels"].size == 3 and d["labels_segment"].max() == 2
    np.testing.assert_allclose(d["log_z_labels"][d["model_labels"]], [e.log_z for e in ests])
    diff = d["log_z_differences"]
    assert diff["mean"][0] == 0.0
    assert np.all(np.abs(diff["mean"] - (truths - truths[0])) < 4 * diff["stderr"] + 0.05)


@pytest.mark.filterwarnings("ignore:SAMS. the chains are collapsed:RuntimeWarning")  # runs of 40 iterations
def test_validation_repeatability_dispatcher_progress(capsys):
    p = _model(10, 5, 1.0)
    start = StartOptions(n_pilot=40, n_start=200)
    kw = dict(n_runs=4, n_sweeps=40, start=start)
    for bad, msg in [
        ({"n_runs": 1}, "at least 2"),
        ({"start": StartOptions(init="flat")}, "init must be"),  # a name of RTS's that SAMS calls "zero"
        ({"start": StartOptions(init=np.zeros(3)), "betas": 5}, "finite values"),
        ({"sweeps_per_move": 0}, "sweeps_per_move"),
        ({"sweeps_per_move": 41}, "at least sweeps_per_move"),
    ]:
        with pytest.raises(ValueError, match=msg):
            sams(p, rng=0, **{**kw, **bad})
    with pytest.raises(ValueError, match="visible units"):
        sams([p, _model(8, 5, 1.0)], rng=0, **kw)
    with pytest.raises(ValueError, match="one model"):  # the BAR start anneals to one model
        sams([p, _model(10, 3, 1.0)], start=StartOptions(init="bar", n_pilot=40, n_start=200), rng=0, n_sweeps=40)
    with pytest.raises(TypeError, match="RBMParams"):
        sams([], rng=0, **kw)
    a = sams(p, rng=6, **kw)
    assert sams(p, rng=6, **kw).log_z == a.log_z
    assert LOG_PARTITION_METHODS["sams"] is sams
    data = sample_visible_exact(p, 30, rng=0)
    assert log_partition(p, "sams", rng=6, data=data, **kw).log_z == sams(p, rng=6, data=data, **kw).log_z
    capsys.readouterr()
    sams(p, rng=0, **kw)
    assert capsys.readouterr().err == ""
    sams(p, rng=0, progress=True, **kw)
    assert "SAMS" in capsys.readouterr().err


@pytest.mark.parametrize(
    "record, bad, error, msg",
    [
        (SAMSAdaptation, {"gain": "wl"}, ValueError, "gain must be"),
        (SAMSAdaptation, {"gain_exponent": 0.5}, ValueError, "gain_exponent must lie in"),
        (SAMSAdaptation, {"flat_tolerance": 0.0}, ValueError, "flat_tolerance"),
        (SAMSAdaptation, {"two_stage": 1}, TypeError, "two_stage must be True or False"),
        (SAMSAdaptation, {"t0": -1.0}, ValueError, "t0 must lie in"),
        (SAMSAdaptation, {"rao_blackwell": "yes"}, ValueError, "rao_blackwell must be"),
        (SAMSAdaptation, {"t_start": float("nan")}, ValueError, "t_start must be a finite"),
        (StartOptions, {"init": "pilot"}, ValueError, "init must be"),
        (StartOptions, {"init": [0.0, np.inf]}, ValueError, "init contains 1 non-finite"),
        (StartOptions, {"n_start": 0}, ValueError, "n_start must be a positive integer"),
        (StartOptions, {"n_equilibrate": -1}, ValueError, "n_equilibrate must be an integer of at least 0"),
        (StartOptions, {"n_pilot": 2.5}, ValueError, "n_pilot must be a positive integer"),
        (StartOptions, {"spacing": 0.0}, ValueError, "spacing must lie in"),
        (PathOptions, {"operator": "swap"}, ValueError, "operator must be"),
        (PathOptions, {"base": "uniform"}, ValueError, "base must be"),
        (PathOptions, {"base_smoothing": -0.1}, ValueError, "base_smoothing must lie in"),
        (PathOptions, {"dtype": np.float16}, ValueError, "float64 or float32"),
    ],
)
def test_records_check_their_fields(record, bad, error, msg):
    with pytest.raises(error, match=msg):
        record(**bad)


def test_records_are_frozen_and_keep_what_they_were_given():
    a = SAMSAdaptation(gain="samc", t0=50, t_start=3)
    assert (a.gain, a.t0, a.t_start, a.two_stage) == ("samc", 50.0, 3.0, None)
    s = StartOptions(init=[0.0, 1.0], n_equilibrate=0)
    assert s.init.dtype == np.float64 and not s.init.flags.writeable and s.n_equilibrate == 0 and s.spacing is None
    assert PathOptions(dtype="float64").dtype == np.float64 and PathOptions().changed() == []
    assert PathOptions(base="target", operator="flip").changed() == ["operator", "base"]
    with pytest.raises(AttributeError):
        a.gain = "tan"


def test_old_keywords_and_wrong_records_are_refused():
    p = _model(10, 5, 1.0)
    for old, record in [("gain", "SAMSAdaptation"), ("t_start", "SAMSAdaptation"), ("init", "StartOptions"),
                        ("n_pilot", "StartOptions"), ("operator", "PathOptions"), ("dtype", "PathOptions")]:  # fmt: skip
        with pytest.raises(TypeError, match=rf"sams\(\) no longer takes the keyword {old}: .*{record}\({old}=\.\.\.\)"):
            sams(p, **{old: None})
    with pytest.raises(TypeError, match=r"keywords n_pilot, gain: .*start=StartOptions\(n_pilot=\.\.\.\), adaptation="):
        sams(p, n_pilot=10, gain="tan")
    with pytest.raises(TypeError, match="unexpected keyword argument 'n_chains'"):
        sams(p, n_chains=10)
    with pytest.raises(TypeError, match="no longer takes the keyword rao_blackwell"):  # through the dispatcher too
        log_partition(p, "sams", rao_blackwell="local")
    for name, value in [("adaptation", {"gain": "tan"}), ("start", SAMSAdaptation()), ("path_options", "gibbs")]:
        with pytest.raises(TypeError, match=f"{name} must be a"):
            sams(p, **{name: value})


#: ``sams`` at the commit before its records, with the same options as keywords (log_z, stderr): the records must
#: give the same draws.
BEFORE_THE_RECORDS = {
    "default": (12.142207927757426, 0.0032215412532238035),
    "samc": (11.130926562907543, 1.521378219702787),
    "bar": (12.30220247700386, 0.41107128426668044),
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # runs of 40-60 iterations
def test_records_give_the_estimate_of_the_keywords_they_replace():
    """The same seed gives the same estimate as the keywords the records replaced gave (to rounding)."""
    p = RBMParams.random(10, 5, scale=1.0, rng=105)
    data = np.random.default_rng(0).integers(0, 2, (30, 10))
    runs = {
        # sams(p, n_runs=4, n_sweeps=40, n_pilot=40, n_start=200, rng=6)
        "default": sams(p, n_runs=4, n_sweeps=40, start=StartOptions(n_pilot=40, n_start=200), rng=6),
        # sams(p, init="zero", gain="samc", t0=5.0, rao_blackwell="local", n_runs=4, n_sweeps=60, n_pilot=40,
        #      base="target", operator="flip", dtype=np.float64, spacing=1.5, rng=7)
        "samc": sams(p, n_runs=4, n_sweeps=60, adaptation=SAMSAdaptation(gain="samc", t0=5.0, rao_blackwell="local"),
                     start=StartOptions(init="zero", n_pilot=40, spacing=1.5),
                     path_options=PathOptions(base="target", operator="flip", dtype=np.float64), rng=7),
        # sams(p, n_runs=3, chains_per_run=2, n_sweeps=48, sweeps_per_move=3, n_pilot=40, n_start=180, n_equilibrate=7,
        #      t_start=5.0, two_stage=True, gain_exponent=0.7, flat_tolerance=0.3, base_smoothing=0.01, data=data, rng=9)
        "bar": sams(p, n_runs=3, chains_per_run=2, n_sweeps=48, sweeps_per_move=3,
                    adaptation=SAMSAdaptation(t_start=5.0, two_stage=True, gain_exponent=0.7, flat_tolerance=0.3),
                    start=StartOptions(n_pilot=40, n_start=180, n_equilibrate=7),
                    path_options=PathOptions(base_smoothing=0.01), data=data, rng=9),
    }  # fmt: skip
    for name, (log_z, stderr) in BEFORE_THE_RECORDS.items():
        assert (runs[name].log_z, runs[name].stderr) == pytest.approx((log_z, stderr), rel=1e-12), name


# ----------------------------------------------------------------- MNIST
@pytest.mark.slow
def test_sams_on_mnist_h20_with_defaults(mnist_model, shared_data):
    p = mnist_model("mnist_h20")
    with np.load(shared_data("mnist/binarized_mnist_packed.npz")) as f:
        train = np.unpackbits(f["train"], axis=1)[:, :784]
    est = sams(p, data=train, rng=0)
    err = est.log_z - TRUTH["mnist_h20"]
    assert abs(err) < 0.3
    assert abs(err) < 4 * est.stderr

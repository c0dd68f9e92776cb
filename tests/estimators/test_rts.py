"""Tests of Rao-Blackwellized tempered sampling (pymc_rbm.estimators.rts)."""

from __future__ import annotations

import numpy as np
import pytest

from pymc_rbm import RBMParams
from pymc_rbm.estimators import (
    LOG_PARTITION_METHODS,
    PathOptions,
    RTSRounds,
    StartOptions,
    log_partition,
    log_partition_exact,
    sample_visible_exact,
)
from pymc_rbm.estimators.base_rate import base_rate_vbias
from pymc_rbm.estimators.path import AnnealingPath, annealing_path
from pymc_rbm.estimators.rts import rts

TRUTH = {"mnist_h10": 226.1132, "mnist_h20": 221.0668}


def _model(nv, nh, scale, seed=0):
    return RBMParams.random(nv, nh, scale=scale, rng=100 * seed + 10 * nv + nh)


def _exact_ladder_log_z(path: AnnealingPath, coefs) -> np.ndarray:
    return np.array([log_partition_exact(path.intermediate(c)).log_z for c in coefs])


# --------------------------------------------------------------- sampler


CASES = [(20, 8, 0.5), (20, 8, 2.0), (12, 10, 1.0)]


@pytest.mark.parametrize("nv, nh, scale", CASES)
def test_rts_matches_exact(nv, nh, scale):
    p = _model(nv, nh, scale)
    truth = log_partition_exact(p).log_z
    data = sample_visible_exact(p, 200, rng=1)
    est = rts(p, data=data, n_chains=40, n_sweeps=400, start=StartOptions(n_pilot=300, n_start=1500), rng=2)
    assert est.method == "rts"
    err = est.log_z - truth
    assert abs(err) < 4 * est.stderr + 2e-3, (err, est.stderr)
    assert abs(err) < 0.05 * max(1.0, scale)
    d = est.diagnostics
    K = d["betas"].size
    assert d["log_z_ladder"].shape == (K,) and d["log_z_ladder"][0] == d["log_z_base"]
    assert d["occupancy"].shape == (K,) and d["occupancy"].sum() == pytest.approx(1.0)
    assert np.all(d["occupancy"] * K > 0.5) and np.all(np.abs(d["c_hat"] * K - 1) < 0.5)
    assert d["history"].shape == (4,) and d["update"] == "mean"
    assert abs(d["start"].log_z - truth) < 4 * d["start"].stderr + 2e-3  # the BAR run it started from
    assert est.interval == pytest.approx((est.log_z - 3 * est.stderr, est.log_z + 3 * est.stderr))
    # every rung's estimate, not only the last
    path = AnnealingPath(p, base_rate_vbias(p, data))
    exact = _exact_ladder_log_z(path, path.coefficients(d["betas"]))
    assert np.abs(d["log_z_ladder"] - exact).max() < 0.1 * max(1.0, scale)


def test_flat_start_collapses_then_recovers():
    """The seed's start (all Ẑ equal): round 1 piles onto β = 1, the iterated update then spreads it."""
    p = _model(20, 8, 2.0)
    truth = log_partition_exact(p).log_z
    target = PathOptions(base="target")
    est = rts(p, n_chains=40, n_sweeps=400, rounds=RTSRounds(n_rounds=5), start=StartOptions(init="flat", n_pilot=300),
              path_options=target, rng=3)  # fmt: skip
    occ = est.diagnostics["occupancy_history"]
    K = occ.shape[1]
    assert occ[0, -1] > 0.5  # collapsed onto the top rung
    assert np.all(occ[-1] * K > 0.5)  # spread evenly at the end
    assert abs(est.log_z - truth) < 4 * est.stderr + 2e-3
    np.testing.assert_allclose(est.diagnostics["log_z_init"], est.diagnostics["log_z_base"])
    with pytest.warns(RuntimeWarning, match="collapsed"):
        rts(p, n_chains=10, n_sweeps=50, rounds=RTSRounds(n_rounds=1), start=StartOptions(init="flat", n_pilot=50),
            path_options=target, rng=3)  # fmt: skip


def test_rounds_that_disagree_widen_the_error_and_warn():
    """Rounds too short to recover from the flat start: the spread between rounds itself becomes the error.

    Rounds that disagree are no independent draws around one value: their mean is not sqrt(3) times more
    precise than one of them, so the error is their standard deviation, not that over sqrt(3).
    """
    p = _model(20, 8, 2.0)
    with pytest.warns(RuntimeWarning, match="disagree"):
        est = rts(p, n_chains=20, n_sweeps=40, start=StartOptions(init="flat", n_pilot=100),
                  path_options=PathOptions(base="target"), rng=1)
    rounds = est.diagnostics["history"][1:]
    assert est.stderr == pytest.approx(rounds.std(ddof=1))
    assert est.diagnostics["stderr_rule"] == "spread"
    assert est.stderr > 2 * np.sqrt((est.diagnostics["history_stderr"][1:] ** 2).sum()) / 3


def test_explicit_ladder_and_init():
    p = _model(12, 6, 1.0)
    truth = log_partition_exact(p).log_z
    path = AnnealingPath(p, base_rate_vbias(p, base="target"))
    betas = np.linspace(0, 1, 12)
    exact = _exact_ladder_log_z(path, path.coefficients(betas))
    est = rts(
        p, betas=betas, n_chains=20, n_sweeps=300, rounds=RTSRounds(n_rounds=3),
        start=StartOptions(init=exact - 100.0, n_pilot=100), path_options=PathOptions(base="target"), rng=4,
    )  # fmt: skip
    np.testing.assert_array_equal(est.diagnostics["betas"], betas)
    np.testing.assert_allclose(est.diagnostics["log_z_init"], exact, atol=1e-9)  # shifted so that Ẑ_1 = Z_1
    assert abs(est.log_z - truth) < 4 * est.stderr + 2e-3


def test_validation_repeatability_dispatcher_progress(capsys):
    p = _model(10, 5, 1.0)
    kw = dict(n_chains=8, n_sweeps=30, rounds=RTSRounds(n_rounds=2), start=StartOptions(n_pilot=40, n_start=200))
    for bad, msg in [
        ({"n_chains": 1}, "at least 2"),
        ({"start": StartOptions(init="zero")}, "init must be"),  # a name of SAMS's that RTS calls "flat"
        ({"start": StartOptions(init=np.zeros(3)), "betas": 5}, "5 finite"),
        ({"betas": [0.0, 0.5]}, "end at"),
        ({"sweeps_per_move": 0}, "sweeps_per_move"),
        ({"sweeps_per_move": 31}, "at least sweeps_per_move"),
    ]:
        with pytest.raises(ValueError, match=msg):
            rts(p, rng=0, **{**kw, **bad})
    a = rts(p, rng=5, **kw)
    assert rts(p, rng=5, **kw).log_z == a.log_z
    assert LOG_PARTITION_METHODS["rts"] is rts
    data = sample_visible_exact(p, 30, rng=0)
    assert log_partition(p, "rts", rng=5, data=data, **kw).log_z == rts(p, rng=5, data=data, **kw).log_z
    capsys.readouterr()
    rts(p, rng=0, **kw)
    assert capsys.readouterr().err == ""
    rts(p, rng=0, progress=True, **kw)
    assert "RTS" in capsys.readouterr().err


@pytest.mark.parametrize(
    "bad, msg", [({"n_rounds": 0}, "n_rounds must be a positive integer"), ({"n_rounds": 2.0}, "n_rounds"),
                 ({"update": "damped"}, "update must be")],
)  # fmt: skip
def test_rounds_record_checks_its_fields(bad, msg):
    with pytest.raises(ValueError, match=msg):
        RTSRounds(**bad)
    r = RTSRounds()
    assert (r.n_rounds, r.update) == (4, None)


def test_old_keywords_and_wrong_records_are_refused():
    p = _model(10, 5, 1.0)
    for old, record in [("n_rounds", "RTSRounds"), ("update", "RTSRounds"), ("init", "StartOptions"),
                        ("n_start", "StartOptions"), ("spacing", "StartOptions"), ("base", "PathOptions")]:  # fmt: skip
        with pytest.raises(TypeError, match=rf"rts\(\) no longer takes the keyword {old}: .*{record}\({old}=\.\.\.\)"):
            rts(p, **{old: None})
    with pytest.raises(TypeError, match=r"keywords n_rounds, operator: .*rounds=RTSRounds\(n_rounds=\.\.\.\), path_"):
        rts(p, n_rounds=2, operator="flip")
    with pytest.raises(TypeError, match="unexpected keyword argument 'n_runs'"):
        rts(p, n_runs=4)
    with pytest.raises(TypeError, match="no longer takes the keyword n_pilot"):  # through the dispatcher too
        log_partition(p, "rts", n_pilot=100)
    for name, value in [("rounds", 4), ("start", RTSRounds()), ("path_options", {"operator": "flip"})]:
        with pytest.raises(TypeError, match=f"{name} must be a"):
            rts(p, **{name: value})
    with pytest.raises(ValueError, match="path_options.operator.*annealing_path"):
        rts(annealing_path(p), path_options=PathOptions(operator="flip"))
    with pytest.raises(ValueError, match="float64 or float32"):
        rts(p, path_options=PathOptions(dtype=np.float16))


#: ``rts`` at the commit before its records, with the same options as keywords (log_z, stderr): the records must
#: give the same draws.
BEFORE_THE_RECORDS = {
    "default": (12.151492345358033, 0.02163936767296926),
    "ais": (12.15744187605826, 0.033380067092922516),
    "bar": (12.149540081799898, 0.24115678170826685),
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # rounds of 24-30 sweeps
def test_records_give_the_estimate_of_the_keywords_they_replace():
    """The same seed gives the same estimate as the keywords the records replaced gave (to rounding)."""
    p = RBMParams.random(10, 5, scale=1.0, rng=105)
    data = np.random.default_rng(0).integers(0, 2, (30, 10))
    runs = {
        # rts(p, n_chains=8, n_rounds=2, n_sweeps=30, n_pilot=40, n_start=200, rng=5)
        "default": rts(p, n_chains=8, n_sweeps=30, rounds=RTSRounds(n_rounds=2),
                       start=StartOptions(n_pilot=40, n_start=200), rng=5),
        # rts(p, init="ais", update="mean", n_rounds=3, n_sweeps=30, n_pilot=40, spacing=0.8, base="target",
        #     operator=0.5, dtype=np.float64, n_chains=8, rng=8)
        "ais": rts(p, n_chains=8, n_sweeps=30, rounds=RTSRounds(n_rounds=3, update="mean"),
                   start=StartOptions(init="ais", n_pilot=40, spacing=0.8),
                   path_options=PathOptions(base="target", operator=0.5, dtype=np.float64), rng=8),
        # rts(p, n_chains=6, n_rounds=2, n_sweeps=24, sweeps_per_move=2, n_pilot=40, n_start=180, n_equilibrate=7,
        #     update="replace", base_smoothing=0.01, data=data, rng=10)
        "bar": rts(p, n_chains=6, n_sweeps=24, sweeps_per_move=2, rounds=RTSRounds(n_rounds=2, update="replace"),
                   start=StartOptions(n_pilot=40, n_start=180, n_equilibrate=7),
                   path_options=PathOptions(base_smoothing=0.01), data=data, rng=10),
    }  # fmt: skip
    for name, (log_z, stderr) in BEFORE_THE_RECORDS.items():  # the rounds' own estimate, before the start joins
        d = runs[name].diagnostics
        assert (d["rounds"], d["rounds_stderr"]) == pytest.approx((log_z, stderr), rel=1e-12), name


def test_callback_sees_the_draws_behind_c_hat():
    """The callback gets every draw's ``log f_k(x_t)``: the last round's ``ĉ`` is rebuilt from them."""
    from scipy.special import softmax

    p = _model(10, 5, 1.0)
    kw = dict(n_chains=6, n_sweeps=25, rounds=RTSRounds(n_rounds=3), start=StartOptions(n_pilot=40, n_start=200))
    seen = []
    est = rts(p, rng=3, callback=lambda r, t, k, log_f: seen.append((r, t, k.copy(), log_f.copy())), **kw)
    assert rts(p, rng=3, **kw).log_z == est.log_z  # watching changes nothing
    # after the BAR start β is drawn every 4 sweeps (6 draws of the 25 sweeps)
    assert [(r, t) for r, t, _, _ in seen] == [(r, t) for r in range(3) for t in range(4, 26, 4)]
    assert est.diagnostics["sweeps_per_move"] == 4
    d = est.diagnostics
    K = len(d["betas"])
    assert all(k.shape == (6,) and log_f.shape == (6, K) for _, _, k, log_f in seen)
    last = np.stack([log_f for r, _, _, log_f in seen if r == 2])  # (n_draws, n_chains, K)
    q = softmax(last - d["log_z_guesses"], axis=-1)  # q(β | x_t) under the last round's guesses
    np.testing.assert_allclose(q.mean(axis=(0, 1)), d["c_hat"], rtol=1e-10)
    # the round's estimate is the guesses corrected by ĉ; "mean" moves them 1/(r + 2) of the way, r = 2
    correction = np.log(d["c_hat"]) - np.log(d["c_hat"][0])
    assert d["history"][-1] == pytest.approx(d["log_z_guesses"][-1] + correction[-1])
    assert d["update"] == "mean"
    np.testing.assert_allclose(d["log_z_ladder"], d["log_z_guesses"] + correction / 4.0, rtol=1e-12)
    with pytest.raises(TypeError, match="callback must be callable"):
        rts(p, rng=0, callback=5, **kw)


# ----------------------------------------------------------------- MNIST
@pytest.mark.slow
def test_rts_on_mnist_h10_with_defaults(mnist_model, shared_data):
    p = mnist_model("mnist_h10")
    with np.load(shared_data("mnist/binarized_mnist_packed.npz")) as f:
        train = np.unpackbits(f["train"], axis=1)[:, :784]
    est = rts(p, data=train, rng=0)
    err = est.log_z - TRUTH["mnist_h10"]
    assert abs(err) < 0.3
    assert abs(err) < 4 * est.stderr
    occ = est.diagnostics["occupancy"] * est.diagnostics["betas"].size
    assert occ.min() > 0.7 and occ.max() < 1.3

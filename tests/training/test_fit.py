"""``fit``: every method learns, options work, bad input is refused, nothing is mutated, seeds reproduce."""

import re

import numpy as np
import pytest

from pymc_rbm import RBMParams
from pymc_rbm.datasets import bars_and_stripes
from pymc_rbm.estimators import log_likelihood
from pymc_rbm.training import TrainingStep, fit
from pymc_rbm.training.run import DEFAULT_K, DEFAULT_N_UPDATES, default_k

DATA = bars_and_stripes(3)  # 14 patterns of 9 pixels; best mean log-likelihood -log 14 = -2.64
FAST = dict(progress=False, rng=0)


@pytest.mark.parametrize(
    "method, operator, k",
    [
        ("cd", "gibbs", 1), ("cd", "flip", 5), ("pcd", "gibbs", 5), ("pcd", 0.5, 3), ("pt", "flip", 1),
        ("pt", "gibbs", 2),
    ],
)
def test_sampling_methods_improve_the_log_likelihood(method, operator, k):
    res = fit(
        DATA, 9, method=method, operator=operator, k=k, learning_rate=0.3, init_scale=0.5, n_updates=400,
        eval_every=100, **FAST
    )
    ll = res.history.log_likelihood
    assert ll[0] < -6.5  # the start is close to uniform: -9 log 2 = -6.24
    assert ll[-1] > -5.0 and ll[-1] - ll[0] > 1.5, ll
    np.testing.assert_allclose(ll[-1], log_likelihood(res.params, DATA).mean(), rtol=1e-12)


@pytest.mark.parametrize("method", ["exact", "mean_field", "tap", "bethe"])
def test_deterministic_methods_improve_the_log_likelihood(method):
    res = fit(DATA, 6, method=method, learning_rate=0.3, init_scale=0.5, n_updates=60, eval_every=30, **FAST)
    ll = res.history.log_likelihood
    assert ll[-1] - ll[0] > 0.5, ll


def test_mixture_mean_field_method_runs_and_learns():
    res = fit(
        DATA[:, :4], 2, method="mixture_mean_field", learning_rate=0.1, n_updates=15, eval_every=15,
        moment_options=dict(n_components=2, temperatures=[1.0], max_iter=20, tol=1e-6), **FAST
    )
    assert res.history.log_likelihood[-1] > res.history.log_likelihood[0]


def test_the_defaults_train_bars_and_stripes_as_well_as_the_readme_settings():
    # the README's fit(data, 16, method="pcd", operator="flip", k=5, learning_rate=0.05, n_updates=5000) reaches a
    # best record of -3.908 (seeds 0-2; -7.235 at the end): benchmarks/fit_defaults.py, docs/training.md
    data = bars_and_stripes(4)
    res = fit(data, 16, **FAST)
    assert (res.method, res.operator, res.n_updates) == ("pcd", "gibbs", DEFAULT_N_UPDATES)
    ll = res.history.log_likelihood
    assert ll[-1] > -3.908 - 0.1, ll[-1]  # the defaults before: -11.05
    assert ll[-1] > ll.max() - 0.02  # settled: the rate decays to 0, so the end is the best record
    np.testing.assert_allclose(ll[-1], log_likelihood(res.params, data).mean(), rtol=1e-12)


@pytest.mark.parametrize("method, k, expected", [("pcd", None, DEFAULT_K), ("cd", None, DEFAULT_K), ("pt", None, 1),
                                                  ("exact", None, 1), ("pcd", 2, 2), ("tap", 1, 1)])
def test_sweeps_per_update_default_to_five_for_cd_and_pcd_only(method, k, expected):
    assert default_k(method, k) == expected
    # the deterministic methods and PT train with k left out, as they did
    res = fit(DATA, 3, method=method, k=k, n_updates=2, eval_every=None, **FAST)
    assert res.n_updates == 2 and res.method == method


def test_exact_gradient_ascent_increases_the_likelihood_monotonically():
    res = fit(DATA, 6, method="exact", learning_rate=0.05, n_updates=100, eval_every=5, **FAST)
    assert np.all(np.diff(res.history.log_likelihood) > 0)
    assert res.best_params == res.params


def test_same_seed_same_result_and_evaluation_does_not_change_training():
    kw = dict(method="pt", operator="flip", k=1, n_temperatures=4, learning_rate=0.1, n_updates=50, progress=False)
    a = fit(DATA, 5, rng=3, eval_every=10, **kw)
    b = fit(DATA, 5, rng=3, eval_every=10, **kw)
    c = fit(DATA, 5, rng=3, eval_every=None, **kw)
    d = fit(DATA, 5, rng=4, eval_every=None, **kw)
    assert a.params == b.params == c.params
    assert a.params != d.params
    np.testing.assert_array_equal(a.history.log_likelihood, b.history.log_likelihood)
    # paired designs: Gibbs and flip runs of one seed start from the same parameters
    g = fit(DATA, 5, rng=3, n_updates=1, learning_rate=1e-300, operator="gibbs", eval_every=None, progress=False)
    f = fit(DATA, 5, rng=3, n_updates=1, learning_rate=1e-300, operator="flip", eval_every=None, progress=False)
    np.testing.assert_array_equal(g.params.W, f.params.W)


def test_inputs_are_never_mutated():
    data = DATA.astype(np.float64)
    before = data.copy()
    start = RBMParams.random(9, 4, scale=0.1, rng=0)
    W0 = start.W.copy()
    res = fit(data, params=start, method="pcd", operator="flip", k=2, n_updates=20, momentum=0.5, **FAST)
    np.testing.assert_array_equal(data, before)
    np.testing.assert_array_equal(start.W, W0)
    assert res.params != start and not np.shares_memory(res.params.W, start.W)


def test_history_records_and_diagnostics():
    res = fit(DATA, 4, method="pt", n_temperatures=3, n_updates=250, eval_every=100, **FAST)
    h = res.history
    assert h.updates.tolist() == [0, 100, 200, 250]
    assert h.log_likelihood.shape == h.stderr.shape == (4,) and np.all(h.stderr == 0)
    assert h.estimator == "exact" and len(h) == 4
    assert h.best == h.log_likelihood.max()
    sw = h.diagnostics["swap_accept"]
    assert np.isnan(sw[0]) and np.all((sw[1:] > 0) & (sw[1:] <= 1))
    assert "gradient_norm" in h.diagnostics
    none = fit(DATA, 4, n_updates=5, eval_every=None, **FAST)
    assert len(none.history) == 0 and np.isnan(none.history.best) and none.best_params == none.params
    assert repr(res).startswith("FitResult(method='pt', operator='gibbs', n_updates=250")


def test_callback_sees_every_update_and_can_stop():
    seen = []

    def callback(step):
        assert isinstance(step, TrainingStep) and isinstance(step.params, RBMParams)
        seen.append((step.update, step.log_likelihood))
        return step.update == 7

    res = fit(DATA, 4, n_updates=100, eval_every=5, callback=callback, **FAST)
    assert res.stopped_early and res.n_updates == 7
    assert [u for u, _ in seen] == list(range(1, 8))
    assert np.isnan(seen[0][1]) and np.isfinite(seen[4][1])  # recorded at update 5
    assert res.history.updates.tolist() == [0, 5, 7]


def test_mini_batches_epochs_momentum_and_weight_decay():
    data = np.repeat(DATA, 3, axis=0)  # 42 rows
    res = fit(data, 4, batch_size=10, epochs=3, eval_every=None, **FAST)
    assert res.n_updates == 3 * 5
    plain = fit(DATA, 6, method="exact", learning_rate=0.1, n_updates=100, eval_every=None, **FAST)
    decayed = fit(DATA, 6, method="exact", learning_rate=0.1, n_updates=100, weight_decay=0.05, eval_every=None, **FAST)
    assert np.linalg.norm(decayed.params.W) < np.linalg.norm(plain.params.W)
    moment = fit(DATA, 6, method="exact", learning_rate=0.1, n_updates=100, momentum=0.9, eval_every=100, **FAST)
    assert moment.history.log_likelihood[-1] > fit(
        DATA, 6, method="exact", learning_rate=0.1, n_updates=100, eval_every=100, **FAST
    ).history.log_likelihood[-1]


def test_persistent_chains_come_back_and_resume():
    res = fit(DATA, 4, method="pcd", n_chains=7, n_updates=10, eval_every=None, **FAST)
    assert res.chains.v.shape == (7, 9)
    more = fit(DATA, params=res.params, method="pcd", chains=res.chains, n_updates=10, eval_every=None, **FAST)
    assert more.chains.v.shape == (7, 9)
    pt = fit(DATA, 4, method="pt", betas=[0.0, 0.5, 1.0], n_chains=3, n_updates=3, eval_every=None, **FAST)
    assert pt.chains.v.shape == (3, 3, 9) and pt.chains.n_rounds == 3


def test_other_log_likelihood_estimators():
    tap = fit(DATA, 4, n_updates=10, eval_every=10, eval_method="tap", **FAST)
    assert tap.history.estimator == "tap" and np.all(np.isfinite(tap.history.log_likelihood))
    ais = fit(
        DATA, 4, n_updates=10, eval_every=10, eval_method="ais", eval_options=dict(n_chains=50, schedule=200), **FAST
    )
    exact = fit(DATA, 4, n_updates=10, eval_every=10, **FAST)
    assert ais.history.estimator == "ais" and np.all(ais.history.stderr > 0)
    np.testing.assert_allclose(ais.history.log_likelihood, exact.history.log_likelihood, atol=0.05)
    held_out = DATA[:5]
    cal = fit(DATA, 4, n_updates=10, eval_every=10, eval_method=lambda p: 0.0, eval_data=held_out, **FAST)
    assert cal.history.estimator == "callable"
    np.testing.assert_allclose(cal.history.log_likelihood[-1], log_likelihood(cal.params, held_out, log_z=0.0).mean())


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(data=DATA * 0.5), ValueError, "binary"),
        (dict(data=DATA[0]), ValueError, "n_samples"),
        (dict(data=DATA[:0]), ValueError, "n_samples"),
        (dict(n_hidden=None), ValueError, "n_hidden"),
        (dict(n_hidden=0), ValueError, "n_hidden"),
        (dict(params=RBMParams.random(8, 3, rng=0)), ValueError, "n_visible"),
        (dict(params=RBMParams.random(9, 3, rng=0), n_hidden=4), ValueError, "contradicts"),
        (dict(params=np.zeros((9, 3))), TypeError, "RBMParams"),
        (dict(method="sgd"), ValueError, "unknown method"),
        (dict(operator="metropolis"), ValueError, "operator"),
        (dict(operator=1.5), ValueError, "alpha"),
        (dict(operator=True), ValueError, "operator"),
        (dict(k=0), ValueError, "k must"),
        (dict(learning_rate=0.0), ValueError, "learning_rate"),
        (dict(learning_rate=-1.0), ValueError, "learning_rate"),
        (dict(momentum=1.0), ValueError, "momentum"),
        (dict(weight_decay=-0.1), ValueError, "weight_decay"),
        (dict(n_updates=5, epochs=1), ValueError, "not both"),
        (dict(n_updates=0), ValueError, "n_updates"),
        (dict(batch_size=0), ValueError, "batch_size"),
        (dict(method="pt", n_temperatures=1), ValueError, "n_temperatures"),
        (dict(method="pt", betas=[0.0, 0.5]), ValueError, "must be 1"),
        (dict(method="pt", betas=[0.5, 0.2, 1.0]), ValueError, "increasing"),
        (dict(method="cd", n_chains=5), ValueError, "n_chains"),
        (dict(method="exact", wormholes=object()), ValueError, "wormholes"),
        (dict(method="cd", wormholes=object()), TypeError, "propose"),
        (dict(method="cd", moment_options={"order": 3}), ValueError, "moment_options"),
        (dict(method="exact", operator="flip"), ValueError, "operator apply to the sampling"),
        (dict(method="tap", k=5, n_chains=3), ValueError, "k, n_chains apply"),
        (dict(eval_method=["exact"]), ValueError, "eval_method"),
        (dict(eval_method="guess"), ValueError, "eval_method"),
        (dict(eval_data=np.zeros((3, 4))), ValueError, "n_visible"),
        (dict(callback=3), TypeError, "callback"),
    ],
)
def test_bad_input_is_refused_with_a_clear_error(kwargs, error, match):
    args = dict(data=DATA, n_hidden=4, n_updates=2, progress=False)
    args.update(kwargs)
    with pytest.raises(error, match=match):
        fit(args.pop("data"), args.pop("n_hidden"), **args)


@pytest.mark.parametrize("learning_rate", [1e6, 1e308])
def test_diverging_training_stops_and_warns_naming_the_learning_rate(learning_rate):
    with pytest.warns(RuntimeWarning, match=re.escape(f"learning rate {learning_rate:g} is too large")):
        res = fit(DATA, 4, method="exact", learning_rate=learning_rate, n_updates=30, eval_every=1, **FAST)
    assert res.stopped_early and res.stop_reason == "diverged" and res.n_updates < 30
    ll = res.history.log_likelihood
    assert ll.size >= 1 and np.all(np.isfinite(ll))
    assert log_likelihood(res.best_params, DATA).mean() == pytest.approx(res.history.best, abs=1e-12)
    assert np.all(np.isfinite(res.params.W)) and np.abs(res.params.W).max() < 1e4


def test_a_diverged_run_returns_its_last_complete_update_when_nothing_was_recorded():
    # no records, callback or trajectory: the parameters are never copied while the run goes well
    with pytest.warns(RuntimeWarning, match="too large"):
        res = fit(DATA, 4, method="pcd", learning_rate=1e4, lr_schedule="constant", n_updates=30, eval_every=None,
                  save_updates=0, **FAST)
    assert res.stop_reason == "diverged" and 1 <= res.n_updates < 30
    # the same rate at every update (a schedule would set it from n_updates)
    same = fit(DATA, 4, method="pcd", learning_rate=1e4, lr_schedule="constant", n_updates=res.n_updates,
               eval_every=None, save_updates=0, **FAST)
    assert res.params == same.params and np.all(np.isfinite(res.params.W))


def test_progress_bar_can_be_shown(capsys):
    fit(DATA, 4, n_updates=3, eval_every=None, rng=0, progress=True)
    assert "fit (pcd)" in capsys.readouterr().err


def test_trained_params_drop_into_the_pymc_distribution():
    pm = pytest.importorskip("pymc")
    from pymc_rbm import RBM

    res = fit(DATA, 4, method="pcd", operator="flip", k=3, learning_rate=0.1, n_updates=100, eval_every=None, **FAST)
    p = res.params
    with pm.Model() as model:
        RBM("v", p.W, p.vbias, p.hbias, observed=DATA)
    logp = float(model.compile_logp()({}))
    np.testing.assert_allclose(logp, log_likelihood(p, DATA).sum(), rtol=1e-10)


def test_training_never_imports_pymc_and_loads_lazily():
    import subprocess
    import sys

    code = "import sys, pymc_rbm; pymc_rbm.training.fit; assert 'pymc' not in sys.modules, 'pymc imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


# ------------------------------------------------------------------ hardening: missing values, results kept
def _masked():
    data = np.ma.array(DATA.copy(), mask=np.zeros(DATA.shape, dtype=bool))
    data.mask[0, 0] = data.mask[3, 2] = True
    return data


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(data=_masked()),
         r"data is a masked array with 2 masked value\(s\) in 2 row\(s\).*drop the incomplete rows"),
        (dict(data=DATA, eval_data=_masked()), r"eval_data is a masked array with 2 masked value\(s\)"),
        (dict(data=np.where(np.eye(14, 9, dtype=bool), np.nan, DATA)),
         r"data hold 9 NaN value\(s\) in 9 row\(s\): fit does not train on missing values; drop the incomplete rows"),
        (dict(data=DATA * 1e200, visible="gaussian"),
         r"visible='gaussian' fixes σ at the standard deviation .*data of magnitude up to 1e\+200.*standardise"),
        (dict(data=DATA * 1e-160, visible="gaussian"), r"data of magnitude up to 1e-160"),
    ],
    ids=["masked", "masked-eval-data", "nan", "gaussian-1e200", "gaussian-1e-160"],
)
def test_missing_values_and_data_out_of_range_are_refused_naming_the_data(kwargs, match):
    data = kwargs.pop("data")
    before = data.copy()
    with pytest.raises(ValueError, match=match):
        fit(data, 4, n_updates=3, **kwargs, **FAST)
    np.testing.assert_array_equal(data, before)
    if isinstance(data, np.ma.MaskedArray):
        np.testing.assert_array_equal(data.mask, before.mask)


def test_a_masked_array_with_nothing_masked_trains_as_its_data():
    plain = fit(DATA, 4, n_updates=5, eval_every=None, **FAST)
    masked = fit(np.ma.array(DATA, mask=False), 4, n_updates=5, eval_every=None, **FAST)
    assert masked.params == plain.params


@pytest.mark.parametrize("returned", ["x", None, [1.0, 2.0], True])
def test_an_eval_method_that_returns_no_number_is_named(returned):
    with pytest.raises(TypeError, match=rf"eval_method 'callable' must return log Z as a number .* returned "
                                        rf"{re.escape(repr(returned))} of type {type(returned).__name__}"):
        fit(DATA, 4, n_updates=3, eval_method=lambda p: returned, **FAST)


def test_a_raising_callback_keeps_the_work_done_on_the_exception():
    # the same rate at every update: a schedule would set it from n_updates, 7 here and 10 below
    whole = fit(DATA, 4, method="pcd", lr_schedule="constant", n_updates=7, eval_every=2, **FAST)

    def callback(step):
        if step.update == 7:
            raise RuntimeError("callback failed")

    with pytest.raises(RuntimeError, match="callback failed") as info:
        fit(DATA, 4, method="pcd", lr_schedule="constant", n_updates=10, eval_every=2, callback=callback, **FAST)
    partial = info.value.partial_result
    assert partial.stop_reason == "error" and partial.stopped_early and partial.n_updates == 7
    assert partial.raw_params == whole.raw_params  # the 7 updates done, draw for draw
    np.testing.assert_array_equal(partial.chains.v, whole.chains.v)
    assert partial.history.updates.tolist() == [0, 2, 4, 6]
    assert any("partial_result" in note for note in info.value.__notes__)


def test_a_raising_eval_method_keeps_the_work_done_on_the_exception():
    calls = []

    def eval_method(params):
        calls.append(params)
        if len(calls) == 3:
            raise ArithmeticError("estimator failed")
        return float(np.log(2.0) * 13)

    with pytest.raises(ArithmeticError, match="estimator failed") as info:
        fit(DATA, 4, n_updates=10, eval_every=2, eval_method=eval_method, **FAST)
    partial = info.value.partial_result
    assert partial.n_updates == 4 and partial.stop_reason == "error"
    assert partial.history.updates.tolist() == [0, 2]
    assert partial.trajectory.updates[-1] == 4


def test_averaged_parameters_are_the_mean_of_the_last_updates_and_the_raw_ones_are_kept():
    seen = []
    res = fit(DATA, 4, n_updates=40, average=0.25, batch_size=5, callback=lambda s: seen.append(s.params), **FAST)
    mean = [np.mean([getattr(p, name) for p in seen[-10:]], axis=0) for name in ("W", "vbias", "hbias")]
    for a, b in zip((res.params.W, res.params.vbias, res.params.hbias), mean):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    assert res.raw_params == seen[-1]
    plain = fit(DATA, 4, n_updates=40, average=0, lr_schedule="constant", batch_size=5, **FAST)
    assert plain.raw_params == plain.params == res.raw_params  # averaging never changes the training itself
    default = fit(DATA, 4, n_updates=40, batch_size=5, **FAST)  # PCD's default: the last half, at a constant rate
    assert default.raw_params == plain.params and default.params != plain.params
    half = [np.mean([getattr(p, name) for p in seen[-20:]], axis=0) for name in ("W", "vbias", "hbias")]
    for a, b in zip((default.params.W, default.params.vbias, default.params.hbias), half):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("average", [-0.1, 1.5, float("nan"), "0.5", True])
def test_an_average_outside_zero_to_one_is_refused(average):
    data = DATA.copy()
    with pytest.raises(ValueError, match="average must"):
        fit(data, 4, n_updates=5, average=average, **FAST)
    np.testing.assert_array_equal(data, DATA)


def test_the_default_dtype_is_float32_for_large_binary_rbms_only():
    from pymc_rbm.training.run import FLOAT32_WEIGHTS

    rng = np.random.default_rng(0)
    large = (rng.random((20, 256)) < 0.5).astype(float)
    n_hidden = FLOAT32_WEIGHTS // 256
    res = fit(large, n_hidden, n_updates=2, eval_every=None, **FAST)
    assert res.params.W.dtype == np.float32 and res.chains.v.dtype == np.float32
    assert fit(large, n_hidden - 1, n_updates=2, eval_every=None, **FAST).params.W.dtype == np.float64
    assert fit(large, n_hidden, n_updates=2, eval_every=None, dtype=np.float64, **FAST).params.W.dtype == np.float64
    assert fit(DATA, 4, n_updates=2, eval_every=None, **FAST).params.W.dtype == np.float64


def test_the_default_mini_batch_is_100_rows_and_all_rows_when_fewer():
    from pymc_rbm.training.run import DEFAULT_BATCH_SIZE

    rows = np.repeat(DATA, 10, axis=0)  # 140 rows
    res = fit(rows, 4, n_updates=3, eval_every=None, **FAST)
    assert res.chains.v.shape == (DEFAULT_BATCH_SIZE, 9)  # one persistent chain per row of a batch
    assert fit(DATA, 4, n_updates=3, eval_every=None, **FAST).chains.v.shape == (len(DATA), 9)

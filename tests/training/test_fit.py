"""``fit``: every method learns, options work, bad input is refused, nothing is mutated, seeds reproduce."""

import re

import numpy as np
import pytest

from pymc_rbm import RBMParams
from pymc_rbm.datasets import bars_and_stripes
from pymc_rbm.estimators import log_likelihood
from pymc_rbm.training import CD, PCD, PT, SGD, Checkpoints, Evaluation, Init, Moments, TrainingStep, fit
from pymc_rbm.training.options import DEFAULT_K, method_options
from pymc_rbm.training.run import DEFAULT_N_UPDATES

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
    record = {"cd": CD, "pcd": PCD, "pt": PT}[method](operator=operator, k=k)
    res = fit(DATA, 9, method=record, learning_rate=0.3, params=Init(scale=0.5), n_updates=400, evaluation=100, **FAST)
    ll = res.history.log_likelihood
    assert ll[0] < -6.5  # the start is close to uniform: -9 log 2 = -6.24
    assert ll[-1] > -5.0 and ll[-1] - ll[0] > 1.5, ll
    np.testing.assert_allclose(ll[-1], log_likelihood(res.params, DATA).mean(), rtol=1e-12)


@pytest.mark.parametrize("method", ["exact", "mean_field", "tap", "bethe"])
def test_deterministic_methods_improve_the_log_likelihood(method):
    res = fit(DATA, 6, method=method, learning_rate=0.3, n_updates=60, **FAST, evaluation=30, params=Init(scale=0.5))
    ll = res.history.log_likelihood
    assert ll[-1] - ll[0] > 0.5, ll


def test_mixture_mean_field_method_runs_and_learns():
    res = fit(DATA[:, :4], 2, learning_rate=0.1, n_updates=15, **FAST,
              method=Moments('mixture_mean_field', options=dict(n_components=2, temperatures=[1.0], max_iter=20, tol=1e-6)),
              evaluation=15)
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


@pytest.mark.parametrize("method, expected", [("pcd", DEFAULT_K), ("cd", DEFAULT_K), ("pt", 1), ("exact", None),
                                              (PCD(k=2), 2), ("tap", None)])
def test_sweeps_per_update_default_to_five_for_cd_and_pcd_only(method, expected):
    record = method_options(method)
    assert getattr(record, "k", None) == expected  # the deterministic methods make no sweeps
    res = fit(DATA, 3, method=method, n_updates=2, evaluation=None, **FAST)
    assert res.n_updates == 2 and res.method == record.name


def test_exact_gradient_ascent_increases_the_likelihood_monotonically():
    res = fit(DATA, 6, method="exact", learning_rate=0.05, n_updates=100, **FAST, evaluation=5)
    assert np.all(np.diff(res.history.log_likelihood) > 0)
    assert res.best_params == res.params


def test_same_seed_same_result_and_evaluation_does_not_change_training():
    kw = dict(learning_rate=0.1, n_updates=50, progress=False, method=PT(k=1, operator="flip", n_temperatures=4))
    a = fit(DATA, 5, rng=3, **kw, evaluation=10)
    b = fit(DATA, 5, rng=3, **kw, evaluation=10)
    c = fit(DATA, 5, rng=3, **kw, evaluation=None)
    d = fit(DATA, 5, rng=4, **kw, evaluation=None)
    assert a.params == b.params == c.params
    assert a.params != d.params
    np.testing.assert_array_equal(a.history.log_likelihood, b.history.log_likelihood)
    # paired designs: Gibbs and flip runs of one seed start from the same parameters
    g = fit(DATA, 5, rng=3, n_updates=1, learning_rate=1e-300, progress=False, method=PCD(operator="gibbs"),
            evaluation=None)
    f = fit(DATA, 5, rng=3, n_updates=1, learning_rate=1e-300, progress=False, method=PCD(operator="flip"),
            evaluation=None)
    np.testing.assert_array_equal(g.params.W, f.params.W)


def test_inputs_are_never_mutated():
    data = DATA.astype(np.float64)
    before = data.copy()
    start = RBMParams.random(9, 4, scale=0.1, rng=0)
    W0 = start.W.copy()
    res = fit(data, params=start, n_updates=20, **FAST, method=PCD(k=2, operator="flip"), optimizer=SGD(momentum=0.5))
    np.testing.assert_array_equal(data, before)
    np.testing.assert_array_equal(start.W, W0)
    assert res.params != start and not np.shares_memory(res.params.W, start.W)


def test_pt_adapts_its_ladder_by_default_and_a_resume_keeps_the_choice(tmp_path):
    from pymc_rbm.kernels.tempering import uniform_ladder

    common = dict(n_updates=120, learning_rate=0.3, evaluation=60, progress=False, rng=0)
    adapted = fit(DATA, 6, method=PT(n_temperatures=5), **common, checkpoints=Checkpoints(updates=[60],
                                                                                             directory=tmp_path))
    fixed = fit(DATA, 6, method=PT(n_temperatures=5, adapt_every=None), **common)
    np.testing.assert_array_equal(fixed.chains.betas, uniform_ladder(5))
    betas = np.asarray(adapted.chains.betas)
    assert betas[0] == 0.0 and betas[-1] == 1.0 and np.all(np.diff(betas) > 0)
    assert np.abs(betas - uniform_ladder(5)).max() > 0.01  # two adaptations moved the inner rungs
    assert "barrier" in adapted.history.diagnostics
    with pytest.raises(ValueError, match="adapt_every: 50 there, None here"):
        fit(DATA, method=PT(n_temperatures=5, adapt_every=None), **{**common, "rng": None},
            checkpoints=Checkpoints(resume=tmp_path))
    with pytest.raises(ValueError, match="adapt_every"):
        PT(adapt_every=1)  # each pair swaps every other round: a window of one update measures half of them


def test_history_records_and_diagnostics():
    res = fit(DATA, 4, n_updates=250, **FAST, method=PT(n_temperatures=3), evaluation=100)
    h = res.history
    assert h.updates.tolist() == [0, 100, 200, 250]
    assert h.log_likelihood.shape == h.stderr.shape == (4,) and np.all(h.stderr == 0)
    assert h.estimator == "exact" and len(h) == 4
    assert h.best == h.log_likelihood.max()
    sw = h.diagnostics["swap_accept"]
    assert np.isnan(sw[0]) and np.all((sw[1:] > 0) & (sw[1:] <= 1))
    assert "gradient_norm" in h.diagnostics
    none = fit(DATA, 4, n_updates=5, **FAST, evaluation=None)
    assert len(none.history) == 0 and np.isnan(none.history.best) and none.best_params == none.params
    assert repr(res).startswith("FitResult(method='pt', operator='gibbs', n_updates=250")


def test_callback_sees_every_update_and_can_stop():
    seen = []

    def callback(step):
        assert isinstance(step, TrainingStep) and isinstance(step.params, RBMParams)
        seen.append((step.update, step.log_likelihood))
        return step.update == 7

    res = fit(DATA, 4, n_updates=100, callback=callback, **FAST, evaluation=5)
    assert res.stopped_early and res.n_updates == 7
    assert [u for u, _ in seen] == list(range(1, 8))
    assert np.isnan(seen[0][1]) and np.isfinite(seen[4][1])  # recorded at update 5
    assert res.history.updates.tolist() == [0, 5, 7]


def test_mini_batches_epochs_momentum_and_weight_decay():
    data = np.repeat(DATA, 3, axis=0)  # 42 rows
    res = fit(data, 4, batch_size=10, epochs=3, **FAST, evaluation=None)
    assert res.n_updates == 3 * 5
    plain = fit(DATA, 6, method="exact", learning_rate=0.1, n_updates=100, **FAST, evaluation=None)
    decayed = fit(DATA, 6, method="exact", learning_rate=0.1, n_updates=100, **FAST, optimizer=SGD(weight_decay=0.05),
                  evaluation=None)
    assert np.linalg.norm(decayed.params.W) < np.linalg.norm(plain.params.W)
    moment = fit(DATA, 6, method="exact", learning_rate=0.1, n_updates=100, **FAST, optimizer=SGD(momentum=0.9),
                 evaluation=100)
    assert moment.history.log_likelihood[-1] > fit(DATA, 6, method="exact", learning_rate=0.1, n_updates=100, **FAST,
                                                   evaluation=100).history.log_likelihood[-1]


def test_persistent_chains_come_back_and_resume():
    res = fit(DATA, 4, n_updates=10, **FAST, method=PCD(n_chains=7), evaluation=None)
    assert res.chains.v.shape == (7, 9)
    more = fit(DATA, params=res.params, n_updates=10, **FAST, method=PCD(chains=res.chains), evaluation=None)
    assert more.chains.v.shape == (7, 9)
    pt = fit(DATA, 4, n_updates=3, **FAST, method=PT(n_chains=3, betas=[0.0, 0.5, 1.0]), evaluation=None)
    assert pt.chains.v.shape == (3, 3, 9) and pt.chains.n_rounds == 3


def test_other_log_likelihood_estimators():
    tap = fit(DATA, 4, n_updates=10, **FAST, evaluation=Evaluation(every=10, method="tap"))
    assert tap.history.estimator == "tap" and np.all(np.isfinite(tap.history.log_likelihood))
    ais = fit(DATA, 4, n_updates=10, **FAST,
              evaluation=Evaluation(every=10, method="ais", options=dict(n_chains=50, schedule=200)))
    exact = fit(DATA, 4, n_updates=10, **FAST, evaluation=10)
    assert ais.history.estimator == "ais" and np.all(ais.history.stderr > 0)
    np.testing.assert_allclose(ais.history.log_likelihood, exact.history.log_likelihood, atol=0.05)
    held_out = DATA[:5]
    cal = fit(DATA, 4, n_updates=10, **FAST, evaluation=Evaluation(every=10, method=lambda p: 0.0, data=held_out))
    assert cal.history.estimator == "callable"
    np.testing.assert_allclose(cal.history.log_likelihood[-1], log_likelihood(cal.params, held_out, log_z=0.0).mean())


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (lambda: dict(data=DATA * 0.5), ValueError, "binary"),
        (lambda: dict(data=DATA[0]), ValueError, "n_samples"),
        (lambda: dict(data=DATA[:0]), ValueError, "n_samples"),
        (lambda: dict(n_hidden=None), ValueError, "n_hidden"),
        (lambda: dict(n_hidden=0), ValueError, "n_hidden"),
        (lambda: dict(params=RBMParams.random(8, 3, rng=0)), ValueError, "n_visible"),
        (lambda: dict(params=RBMParams.random(9, 3, rng=0), n_hidden=4), ValueError, "contradicts"),
        (lambda: dict(params=np.zeros((9, 3))), TypeError, "RBMParams"),
        (lambda: dict(method="sgd"), ValueError, "unknown method"),
        (lambda: dict(method=3), TypeError, "method must be a name or"),
        (lambda: dict(method=PCD(operator="metropolis")), ValueError, "operator"),
        (lambda: dict(method=PCD(operator=1.5)), ValueError, "alpha"),
        (lambda: dict(method=PCD(operator=True)), ValueError, "operator"),
        (lambda: dict(method=PCD(k=0)), ValueError, "k must"),
        (lambda: dict(method=PCD(hidden="keep")), ValueError, "hidden must"),
        (lambda: dict(learning_rate=0.0), ValueError, "learning_rate"),
        (lambda: dict(learning_rate=-1.0), ValueError, "learning_rate"),
        (lambda: dict(optimizer=SGD(momentum=1.0)), ValueError, "momentum"),
        (lambda: dict(optimizer="rmsprop"), ValueError, "optimizer must"),
        (lambda: dict(optimizer=SGD(weight_decay=-0.1)), ValueError, "weight_decay"),
        (lambda: dict(optimizer=SGD(schedule="step")), ValueError, "schedule must"),
        (lambda: dict(optimizer=SGD(average=1.5)), ValueError, "average"),
        (lambda: dict(n_updates=5, epochs=1), ValueError, "not both"),
        (lambda: dict(n_updates=0), ValueError, "n_updates"),
        (lambda: dict(batch_size=0), ValueError, "batch_size"),
        (lambda: dict(method=PT(n_temperatures=1)), ValueError, "n_temperatures"),
        (lambda: dict(method=PT(betas=[0.0, 0.5])), ValueError, "must be 1"),
        (lambda: dict(method=PT(betas=[0.5, 0.2, 1.0])), ValueError, "increasing"),
        (lambda: dict(method=CD(n_chains=5)), TypeError, "n_chains"),
        (lambda: dict(method=Moments("exact", wormholes=object())), TypeError, "wormholes"),
        (lambda: dict(method=CD(wormholes=object())), TypeError, "propose"),
        (lambda: dict(method=Moments("cd")), ValueError, "Moments takes one of"),
        (lambda: dict(method=Moments("tap", options=[1])), TypeError, "options must be a dict"),
        (lambda: dict(evaluation=Evaluation(method=["exact"])), ValueError, "evaluation method must be"),
        (lambda: dict(evaluation=Evaluation(method="guess")), ValueError, "evaluation method must be"),
        (lambda: dict(evaluation=Evaluation(data=np.zeros((3, 4)))), ValueError, "n_visible"),
        (lambda: dict(evaluation=Evaluation(every=-1)), ValueError, "every"),
        (lambda: dict(evaluation=2.5), TypeError, "evaluation must be"),
        (lambda: dict(checkpoints={"directory": "x"}), TypeError, "checkpoints must be"),
        (lambda: dict(checkpoints=Checkpoints(directory=3)), TypeError, "directory must be a path"),
        (lambda: dict(params=Init("uniform")), ValueError, "start must be one of"),
        (lambda: dict(params=Init(scale=-1.0)), ValueError, "scale"),
        (lambda: dict(params=Init(dtype=np.int32)), ValueError, "dtype"),
        (lambda: dict(callback=3), TypeError, "callback"),
    ],
)
def test_bad_input_is_refused_with_a_clear_error(kwargs, error, match):
    args = dict(data=DATA, n_hidden=4, n_updates=2, progress=False)
    with pytest.raises(error, match=match):  # a record refuses a bad field when it is made, fit the rest
        args.update(kwargs())
        fit(args.pop("data"), args.pop("n_hidden"), **args)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(k=3), r"no longer takes the keyword k: .* pass method=PCD\(k=\.\.\.\)"),
        (dict(n_temperatures=4), r"method=PT\(n_temperatures=\.\.\.\)"),
        (dict(momentum=0.9, lr_schedule="cosine"), r"keywords momentum, lr_schedule: .* optimizer=SGD\(momentum=\.\.\., "
                                                   r"schedule=\.\.\.\)"),
        (dict(eval_every=5, save_updates=10), r"evaluation=Evaluation\(every=\.\.\.\), checkpoints=Checkpoints\(updates"),
        (dict(init="normal", init_scale=0.1), r"params=Init\(start=\.\.\., scale=\.\.\.\)"),
        (dict(bogus=1), r"fit\(\) got an unexpected keyword argument 'bogus'"),
    ],
)
def test_keywords_that_moved_into_records_are_refused_naming_the_record(kwargs, match):
    with pytest.raises(TypeError, match=match):
        fit(DATA, 4, n_updates=2, progress=False, **kwargs)


@pytest.mark.parametrize("learning_rate", [1e6, 1e308])
def test_diverging_training_stops_and_warns_naming_the_learning_rate(learning_rate):
    with pytest.warns(RuntimeWarning, match=re.escape(f"learning rate {learning_rate:g} is too large")):
        res = fit(DATA, 4, method="exact", learning_rate=learning_rate, n_updates=30, **FAST, evaluation=1)
    assert res.stopped_early and res.stop_reason == "diverged" and res.n_updates < 30
    ll = res.history.log_likelihood
    assert ll.size >= 1 and np.all(np.isfinite(ll))
    assert log_likelihood(res.best_params, DATA).mean() == pytest.approx(res.history.best, abs=1e-12)
    assert np.all(np.isfinite(res.params.W)) and np.abs(res.params.W).max() < 1e4


def test_a_diverged_run_returns_its_last_complete_update_when_nothing_was_recorded():
    # no records, callback or trajectory: the parameters are never copied while the run goes well
    with pytest.warns(RuntimeWarning, match="too large"):
        res = fit(DATA, 4, method="pcd", learning_rate=1e4, n_updates=30, **FAST, optimizer=SGD(schedule="constant"),
                  evaluation=None, checkpoints=Checkpoints(updates=0))
    assert res.stop_reason == "diverged" and 1 <= res.n_updates < 30
    # the same rate at every update (a schedule would set it from n_updates)
    same = fit(DATA, 4, method="pcd", learning_rate=1e4, n_updates=res.n_updates, **FAST,
               optimizer=SGD(schedule="constant"), evaluation=None, checkpoints=Checkpoints(updates=0))
    assert res.params == same.params and np.all(np.isfinite(res.params.W))


def test_progress_bar_can_be_shown(capsys):
    fit(DATA, 4, n_updates=3, rng=0, progress=True, evaluation=None)
    assert "fit (pcd)" in capsys.readouterr().err


def test_trained_params_drop_into_the_pymc_distribution():
    pm = pytest.importorskip("pymc")
    from pymc_rbm import RBM

    res = fit(DATA, 4, learning_rate=0.1, n_updates=100, **FAST, method=PCD(k=3, operator="flip"), evaluation=None)
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
        (dict(data=DATA, evaluation=Evaluation(data=_masked())), r"evaluation data is a masked array with 2 masked value\(s\)"),
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
    plain = fit(DATA, 4, n_updates=5, **FAST, evaluation=None)
    masked = fit(np.ma.array(DATA, mask=False), 4, n_updates=5, **FAST, evaluation=None)
    assert masked.params == plain.params


@pytest.mark.parametrize("returned", ["x", None, [1.0, 2.0], True])
def test_an_eval_method_that_returns_no_number_is_named(returned):
    with pytest.raises(TypeError, match=rf"the evaluation method 'callable' must return log Z as a number .* returned "
                                        rf"{re.escape(repr(returned))} of type {type(returned).__name__}"):
        fit(DATA, 4, n_updates=3, **FAST, evaluation=Evaluation(method=lambda p: returned))


def test_a_raising_callback_keeps_the_work_done_on_the_exception():
    # the same rate at every update: a schedule would set it from n_updates, 7 here and 10 below
    whole = fit(DATA, 4, method="pcd", n_updates=7, **FAST, optimizer=SGD(schedule="constant"), evaluation=2)

    def callback(step):
        if step.update == 7:
            raise RuntimeError("callback failed")

    with pytest.raises(RuntimeError, match="callback failed") as info:
        fit(DATA, 4, method="pcd", n_updates=10, callback=callback, **FAST, optimizer=SGD(schedule="constant"),
            evaluation=2)
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
        fit(DATA, 4, n_updates=10, **FAST, evaluation=Evaluation(every=2, method=eval_method))
    partial = info.value.partial_result
    assert partial.n_updates == 4 and partial.stop_reason == "error"
    assert partial.history.updates.tolist() == [0, 2]
    assert partial.trajectory.updates[-1] == 4


def test_averaged_parameters_are_the_mean_of_the_last_updates_and_the_raw_ones_are_kept():
    seen = []
    res = fit(DATA, 4, n_updates=40, batch_size=5, callback=lambda s: seen.append(s.params), **FAST,
              optimizer=SGD(average=0.25))
    mean = [np.mean([getattr(p, name) for p in seen[-10:]], axis=0) for name in ("W", "vbias", "hbias")]
    for a, b in zip((res.params.W, res.params.vbias, res.params.hbias), mean):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    assert res.raw_params == seen[-1]
    plain = fit(DATA, 4, n_updates=40, batch_size=5, **FAST, optimizer=SGD(schedule="constant", average=0))
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
        fit(data, 4, n_updates=5, **FAST, optimizer=SGD(average=average))
    np.testing.assert_array_equal(data, DATA)


def test_the_default_dtype_is_float32_for_large_binary_rbms_only():
    from pymc_rbm.training.run import FLOAT32_WEIGHTS

    rng = np.random.default_rng(0)
    large = (rng.random((20, 256)) < 0.5).astype(float)
    n_hidden = FLOAT32_WEIGHTS // 256
    res = fit(large, n_hidden, n_updates=2, **FAST, evaluation=None)
    assert res.params.W.dtype == np.float32 and res.chains.v.dtype == np.float32
    assert fit(large, n_hidden - 1, n_updates=2, **FAST, evaluation=None).params.W.dtype == np.float64
    assert fit(large, n_hidden, n_updates=2, **FAST, evaluation=None, params=Init(dtype=np.float64)).params.W.dtype == np.float64
    assert fit(DATA, 4, n_updates=2, **FAST, evaluation=None).params.W.dtype == np.float64


def test_the_default_mini_batch_is_100_rows_and_all_rows_when_fewer():
    from pymc_rbm.training.run import DEFAULT_BATCH_SIZE

    rows = np.repeat(DATA, 10, axis=0)  # 140 rows
    res = fit(rows, 4, n_updates=3, **FAST, evaluation=None)
    assert res.chains.v.shape == (DEFAULT_BATCH_SIZE, 9)  # one persistent chain per row of a batch
    assert fit(DATA, 4, n_updates=3, **FAST, evaluation=None).chains.v.shape == (len(DATA), 9)

"""``fit(..., max_time=)``: a run planned from the measured cost of its first updates, reproducible by its length."""

import importlib
import math

import numpy as np
import pytest

from pymc_rbm.datasets import bars_and_stripes
from pymc_rbm.training import SGD, Checkpoints, fit

fitting = importlib.import_module("pymc_rbm.training.fitting")

DATA = bars_and_stripes(3)
RUN = dict(batch_size=7, progress=False, rng=3)


class FakeClock:
    """A clock that moves ``dt`` seconds each time it is read (and ``slow`` times more after ``slow_after`` reads)."""

    def __init__(self, dt, slow_after=None, slow=1.0):
        self.t, self.dt, self.reads, self.slow_after, self.slow = 100.0, dt, 0, slow_after, slow

    def __call__(self):
        self.reads += 1
        now = self.t
        self.t += self.dt * (self.slow if self.slow_after is not None and self.reads > self.slow_after else 1.0)
        return now


def test_a_budget_plans_its_updates_from_their_measured_cost(monkeypatch):
    clock = FakeClock(0.001)  # read once at the call, once after each probe update, once per record timed
    monkeypatch.setattr(fitting, "perf_counter", clock)
    res = fit(DATA, 4, max_time=1.0, **RUN, evaluation=None)
    # probe: 1 read after the first update, then 20 timed updates of 1 ms (2 % of 1 s), 1 read for the time left;
    # the updates fill 0.9 s less the 23 ms spent, at 1 ms each
    n_probe = math.ceil(fitting.BUDGET_PROBE * 1.0 / 0.001)
    expected = math.floor((fitting.BUDGET_TARGET * 1.0 - (n_probe + 3) * 0.001) / 0.001)
    assert abs(res.n_updates - expected) <= 1
    assert res.history.n_updates == res.n_updates and res.stop_reason == "" and not res.stopped_early


def test_records_are_counted_in_the_plan(monkeypatch):
    monkeypatch.setattr(fitting, "perf_counter", FakeClock(0.001))
    without = fit(DATA, 4, max_time=1.0, **RUN, evaluation=None).n_updates
    monkeypatch.setattr(fitting, "perf_counter", FakeClock(0.001))
    # the record timed reads the clock twice (1 ms): the start, the end and one record every 10 updates at 1 ms
    res = fit(DATA, 4, max_time=1.0, **RUN, evaluation=10)
    assert abs(res.n_updates - (without - 3) / 1.1) <= 3
    assert res.history.updates[-1] == res.n_updates


def test_a_budget_run_is_the_run_of_its_length_draw_for_draw(monkeypatch):
    monkeypatch.setattr(fitting, "perf_counter", FakeClock(0.001))
    res = fit(DATA, 4, max_time=0.5, **RUN, evaluation=25)
    assert res.n_updates > 300 and res.stop_reason == ""
    again = fit(DATA, 4, n_updates=res.history.n_updates, **RUN, evaluation=25)
    assert again.params == res.params and again.chains.v.tolist() == res.chains.v.tolist()
    np.testing.assert_array_equal(again.history.log_likelihood, res.history.log_likelihood)
    assert again.trajectory.updates == res.trajectory.updates


def test_a_slower_machine_stops_at_the_budget_with_a_warning(monkeypatch):
    clock = FakeClock(0.001, slow_after=30, slow=4.0)  # four times slower once the run is planned
    monkeypatch.setattr(fitting, "perf_counter", clock)
    with pytest.warns(RuntimeWarning, match=r"ran out of its time budget \(max_time=1 s\) after \d+ of \d+ updates"):
        res = fit(DATA, 4, max_time=1.0, **RUN, evaluation=50)
    assert res.stop_reason == "max_time" and res.n_updates < res.history.n_updates
    assert res.history.updates[-1] == res.n_updates  # the last record is taken, as at the end of a run
    assert clock.t - 100.0 < 1.0 + 0.01


def test_max_time_also_caps_a_run_of_given_length(monkeypatch):
    monkeypatch.setattr(fitting, "perf_counter", FakeClock(0.01))
    with pytest.warns(RuntimeWarning, match="ran out of its time budget"):
        res = fit(DATA, 4, n_updates=500, max_time=1.0, **RUN, evaluation=None)
    assert res.history.n_updates == 500 and 95 <= res.n_updates <= 101 and res.stop_reason == "max_time"


def test_a_budget_too_small_for_one_update_is_refused(monkeypatch):
    monkeypatch.setattr(fitting, "perf_counter", FakeClock(0.5))
    seen = []
    with pytest.raises(ValueError, match=r"max_time=1 s leaves no time for an update: .* give a larger max_time"):
        fit(DATA, 4, max_time=1.0, callback=seen.append, **RUN)
    assert not seen


@pytest.mark.parametrize("max_time", [float("nan"), -1.0, 0.0, float("inf"), "10", True])
def test_a_max_time_that_is_not_a_positive_number_is_refused(max_time):
    data = DATA.copy()
    with pytest.raises(ValueError, match="max_time must"):
        fit(data, 4, max_time=max_time, **RUN)
    np.testing.assert_array_equal(data, DATA)


def test_a_budget_run_on_the_real_clock_ends_near_its_budget(capsys):
    import time
    import warnings

    t0 = time.perf_counter()
    with warnings.catch_warnings():  # a busy machine may slow down after the plan: then it stops at the budget
        warnings.filterwarnings("ignore", "fit ran out of its time budget", RuntimeWarning)
        res = fit(DATA, 4, max_time=1.5, batch_size=7, progress=True, rng=0, evaluation=50)
    assert time.perf_counter() - t0 < 1.5 + 1.0 and res.n_updates >= 10  # the last record may come after the budget
    assert res.stop_reason in ("", "max_time") and res.history.updates[-1] == res.n_updates
    assert "fit (pcd, max_time 1.5 s)" in capsys.readouterr().err


def test_records_sized_to_the_training_take_a_tenth_of_it_under_a_budget():
    from pymc_rbm.training.records import EVAL_BUDGET, EVAL_BUDGET_TIMED, Evaluator
    from pymc_rbm.training.run import Plan, prepare_run

    data = (np.random.default_rng(0).random((30, 24)) < 0.5).astype(float)  # 24 x 24: the records are AIS
    options = dict(params=None, visible=None, method="pcd", optimizer="sgd", evaluation=100, checkpoints=None,
                   rng=None, callback=None, progress=False)
    timed = prepare_run(data, 24, plan=Plan(None, 0.05, None, None, 60.0), **options)
    plain = prepare_run(data, 24, plan=Plan(None, 0.05, None, None, None), **options)
    assert isinstance(timed.evaluator, Evaluator) and timed.evaluator.needs_sizing
    assert (timed.evaluator.share, plain.evaluator.share) == (EVAL_BUDGET_TIMED, EVAL_BUDGET)


def test_a_budget_run_stopped_by_ctrl_c_resumes_draw_for_draw(monkeypatch, tmp_path):
    run = dict(RUN, optimizer=SGD(average=0.5), evaluation=None)
    monkeypatch.setattr(fitting, "perf_counter", FakeClock(0.001))
    whole = fit(DATA, 4, max_time=0.3, **run, checkpoints=Checkpoints(updates=4))
    planned = whole.history.n_updates
    assert planned > 100 and whole.stop_reason == ""

    def ctrl_c(step):
        if step.update == planned - 5:
            raise KeyboardInterrupt

    monkeypatch.setattr(fitting, "perf_counter", FakeClock(0.001))
    with pytest.warns(RuntimeWarning, match="continue with fit"):
        stopped = fit(DATA, 4, max_time=0.3, callback=ctrl_c, **run,
                      checkpoints=Checkpoints(updates=4, directory=tmp_path))
    assert stopped.stop_reason == "interrupted" and stopped.params != stopped.raw_params
    resumed = fit(DATA, **run, checkpoints=Checkpoints(resume=tmp_path))  # the checkpoint's plan, not a new one
    assert resumed.n_updates == planned
    assert resumed.params == whole.params and resumed.raw_params == whole.raw_params
    assert resumed.chains.v.tolist() == whole.chains.v.tolist()

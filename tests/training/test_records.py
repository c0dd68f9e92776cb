"""The log-likelihood records of ``fit``: records sized to the training time warn once per run, not per record."""

import warnings

import numpy as np
import pytest

from pymc_rbm.estimators import LogPartitionEstimate
from pymc_rbm.params import RBMParams
from pymc_rbm.training.records import Evaluator


class _Warns:
    """A family whose estimator warns (as a failed coverage check does) and returns a fixed log Z."""

    def __init__(self, family):
        self.family, self.calls = family, 0

    def __getattr__(self, name):
        return getattr(self.family, name)

    def log_partition(self, params, method, **options):
        self.calls += 1
        warnings.warn(f"ais: check {self.calls} failed", RuntimeWarning)
        return LogPartitionEstimate(log_z=30.0, stderr=0.1, method="ais")


def test_sized_records_say_their_estimators_warning_once():
    params = RBMParams.random(30, 30, scale=0.1, rng=0)  # too large to enumerate: the records are AIS
    data = (np.random.default_rng(0).random((5, 30)) < 0.5).astype(float)
    ev = Evaluator("auto", None, data, params, np.random.default_rng(0))
    assert ev.method == "ais" and ev.budgeted
    ev.family = _Warns(ev.family)
    with pytest.warns(RuntimeWarning, match=r"records are rough .* ais: check 1 failed \(said once per run") as seen:
        for _ in range(3):
            ev(params)
    assert ev.family.calls == 3 and len([w for w in seen if "rough" in str(w.message)]) == 1
    assert not [w for w in seen if "check 2" in str(w.message) or "check 3" in str(w.message)]


def test_records_of_a_given_estimator_pass_its_warnings_on():
    params = RBMParams.random(30, 30, scale=0.1, rng=0)
    data = (np.random.default_rng(0).random((5, 30)) < 0.5).astype(float)
    ev = Evaluator("ais", {"n_steps": 10}, data, params, np.random.default_rng(0))
    assert not ev.budgeted
    ev.family = _Warns(ev.family)
    with pytest.warns(RuntimeWarning) as seen:
        for _ in range(2):
            ev(params)
    assert [str(w.message) for w in seen] == ["ais: check 1 failed", "ais: check 2 failed"]

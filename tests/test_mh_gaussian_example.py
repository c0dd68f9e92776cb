"""examples/mh_gaussian.py (Zhang 2016, section 1) runs in its short form and its output makes sense."""

import math
import runpy
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "mh_gaussian.py"


@pytest.fixture(scope="module")
def example():
    return runpy.run_path(str(EXAMPLE))


def _rows(out: str, first_word: str) -> list[str]:
    return [line for line in out.splitlines() if line.split()[:1] == [first_word]]


def test_short_run_estimates_the_correlation_for_both_proposals(example, capsys):
    results = example["main"](["--short", "--seed", "1"])
    out = capsys.readouterr().out
    assert set(results) == {"Gaussian", "uniform"}
    for name, runs in results.items():
        assert len(runs) == 3
        for run in runs:
            # 2000 draws give an ESS of r of several hundred: an sd of the relative error near 6 %
            assert math.isfinite(run.rel_error) and abs(run.rel_error) < 0.25, (name, run)
            assert 0.2 < run.accept < 0.8, (name, run)
            assert all(50 < ess < 2000 for ess in run.ess), (name, run)
            assert 50 < run.ess_corr < 4000 and run.seconds > 0, (name, run)
        mean_error = sum(run.rel_error for run in runs) / len(runs)
        assert abs(mean_error) < 0.15, name
    # each proposal has a row in the accuracy table and one in the efficiency table, beside the report
    for name in ("Gaussian", "uniform"):
        assert len(_rows(out, name)) == 2
        assert all("|" in row for row in _rows(out, name))
    assert "Zhang (2016)" in out and "ESS of r, uniform / Gaussian" in out


def test_fixed_scale_is_not_tuned(example, capsys):
    results = example["main"](["--runs", "1", "--draws", "500", "--tune", "200", "--scale", "1.8"])
    capsys.readouterr()
    for runs in results.values():
        assert [run.scale for run in runs] == [1.8]

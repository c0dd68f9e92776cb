"""The demo and the examples run end to end."""

import runpy
import sys
from pathlib import Path

from pymc_rbm.datasets import bars_and_stripes, bundled_rbm
from pymc_rbm.demo import main
from pymc_rbm.estimators import log_likelihood

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_bundled_rbm_models_bars_and_stripes():
    params = bundled_rbm()
    assert (params.n_visible, params.n_hidden) == (16, 16)
    assert log_likelihood(params, bars_and_stripes(4, variant="mackay")).mean() > -3.5


def test_demo_writes_its_outputs(tmp_path, capsys):
    argv = ["--output", str(tmp_path), "--draws", "200", "--chains", "2", "--sample-draws", "200"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "log Z (exact" in out and "bars-and-stripes patterns" in out and "τ Gibbs" in out
    # the local samplers stay in one pattern of this sharp model; wormholes from the data move between them
    rows = {line.split("pattern changes")[0].strip(): line for line in out.splitlines() if "pattern changes" in line}
    assert set(rows) == {"Gibbs", "flip-the-state", "flip + point wormholes"}
    changes = {k: float(v.split("per 1000 sweeps")[1].split()[0]) for k, v in rows.items()}
    assert changes["flip + point wormholes"] > 100 > changes["Gibbs"]
    for name in ("prior_draws.png", "autocorrelation.png"):
        assert (tmp_path / name).stat().st_size > 1000


def test_latent_features_example_recovers_the_images():
    sys.path.insert(0, str(EXAMPLES))
    try:
        example = runpy.run_path(str(EXAMPLES / "latent_features.py"))
    finally:
        sys.path.remove(str(EXAMPLES))
    idata = example["main"](draws=300)
    assert float(idata.sample_stats["n_changed"].mean()) > 0.02  # the latent images move
    assert 1.4 < float(idata.posterior["scale"].mean()) < 2.6


def _run_example(name, argv, monkeypatch, capsys) -> str:
    monkeypatch.setattr(sys, "argv", [name, *argv])
    runpy.run_path(str(EXAMPLES / name), run_name="__main__")
    return capsys.readouterr().out


def test_train_and_sample_example_trains_then_samples(monkeypatch, capsys):
    out = _run_example("train_and_sample.py", ["--updates", "600", "--draws", "300"], monkeypatch, capsys)
    lines = [line.split() for line in out.splitlines()]
    history = [float(w[1]) for w in lines if len(w) == 2 and w[0].isdigit()]
    assert len(history) >= 2 and history[-1] > history[0]  # training raised the exact log-likelihood
    assert "mass on the training patterns" in out


def test_wormholes_example_runs(monkeypatch, capsys):
    out = _run_example("wormholes.py", ["--draws", "600", "--chains", "4"], monkeypatch, capsys)
    assert "exact" in out and "NUTS" in out

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

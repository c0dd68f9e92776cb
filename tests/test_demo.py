"""The demo runs end to end on the bundled RBM and writes its image."""

from pymc_rbm.datasets import bundled_rbm
from pymc_rbm.demo import main
from pymc_rbm.estimators import log_likelihood
from pymc_rbm.datasets import bars_and_stripes


def test_bundled_rbm_models_bars_and_stripes():
    params = bundled_rbm()
    assert (params.n_visible, params.n_hidden) == (16, 16)
    assert log_likelihood(params, bars_and_stripes(4, variant="mackay")).mean() > -3.5


def test_demo_writes_its_outputs(tmp_path, capsys):
    assert main(["--output", str(tmp_path), "--draws", "200"]) == 0
    out = capsys.readouterr().out
    assert "log Z (exact" in out and "bars-and-stripes patterns" in out
    assert (tmp_path / "prior_draws.png").stat().st_size > 1000

"""The demo and the examples run end to end."""

import runpy
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from pymc_rbm.datasets import bars_and_stripes, bundled_rbm
from pymc_rbm.demo import main
from pymc_rbm.estimators import log_likelihood

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_bundled_rbm_models_bars_and_stripes():
    params = bundled_rbm()
    assert (params.n_visible, params.n_hidden) == (16, 16)
    assert log_likelihood(params, bars_and_stripes(4, variant="mackay")).mean() > -3.5


def _mixing_rows(out: str) -> dict[str, list[str]]:
    """The rows of the demo's sampler table: label -> the cells after it."""
    labels = ("Gibbs", "flip-the-state", "flip + point wormholes", "replica exchange", "default: pm.sample()")
    rows = {}
    for line in out.splitlines():
        for label in labels:
            cells = line[len(label):].split()
            if line.startswith(label + " ") and len(cells) >= 8 and cells[0].replace(".", "").isdigit():
                rows[label] = cells
    return rows


def test_demo_writes_its_outputs(tmp_path, capsys):
    argv = ["--output", str(tmp_path), "--draws", "200", "--chains", "2", "--sample-draws", "200", "--tune", "200"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(argv) == 0
    out = capsys.readouterr().out
    # the wormholes sit next to flip-the-state, which moves v: nothing to warn about
    assert not [w for w in caught if "no other step moved" in str(w.message)]
    assert "log Z (exact" in out and "bars-and-stripes patterns" in out and "τ Gibbs" in out
    # cells: time, pattern changes per 1000 draws, chains that changed ("k", "of", "n"), states,
    # TV (all states), TV (patterns), τ
    rows = _mixing_rows(out)
    assert set(rows) == {
        "Gibbs", "flip-the-state", "flip + point wormholes", "replica exchange", "default: pm.sample()"
    }
    changes = {k: float(r[1]) for k, r in rows.items()}
    tv = {k: float(r[6]) for k, r in rows.items()}
    # the local samplers stay in one pattern of this sharp model; the default and wormholes move between them
    assert changes["default: pm.sample()"] > 100 > changes["Gibbs"]
    assert changes["replica exchange"] > 100
    assert changes["flip + point wormholes"] > 100 > changes["flip-the-state"]
    assert max(tv["default: pm.sample()"], tv["replica exchange"]) < 0.3 < tv["Gibbs"]
    # a stuck sampler's autocorrelation time is reported as stuck, never as a small number
    assert rows["Gibbs"][-1] == "stuck" and rows["flip-the-state"][-1] == "stuck"
    # the default's draws of this model are independent (ExactDraws): τ near 1, the estimate scattering around it
    assert 0.5 < float(rows["default: pm.sample()"][-1]) < 2.0
    # Table 2 comes from the RBM at a β where both local samplers move between patterns: finite τ and ESS
    table2 = out.split("Table 2):")[-1]
    assert "where both move between patterns" in table2
    cells = next(line for line in table2.splitlines() if line.startswith("bundled RBM at β = 0.4 ")).split()[6:]
    tau_gibbs, tau_flip, ess_gibbs, ess_flip = float(cells[0]), float(cells[3]), float(cells[-2]), float(cells[-1])
    assert 0.5 < tau_gibbs < 20 and 0.5 < tau_flip < 20
    assert ess_gibbs == pytest.approx(2 * 200 / tau_gibbs, abs=1) and ess_flip == pytest.approx(400 / tau_flip, abs=1)
    assert "replica exchange: ladder of" in out
    assert "default: pm.sample() gives v the step " in out  # which one: the step methods' competence decides
    for name in ("prior_draws.png", "pattern_mixing.png", "autocorrelation.png"):
        assert (tmp_path / name).stat().st_size > 1000


@pytest.fixture(scope="module")
def latent_features():
    sys.path.insert(0, str(EXAMPLES))
    try:
        return runpy.run_path(str(EXAMPLES / "latent_features.py"))
    finally:
        sys.path.remove(str(EXAMPLES))


def test_latent_features_example_matches_the_enumerated_posterior(latent_features, capsys):
    # one image under the untempered prior, s, b and sigma fixed: the posterior of v is enumerable
    truth, y = latent_features["simulate"]()
    results = latent_features["one_image_exact"](bundled_rbm(), y[0], draws=600, tune=300, chains=4, seed=3)
    out = capsys.readouterr().out
    default = results["default (pm.sample picks the step)"]
    assert default.tv < 0.2 and default.max_marginal_error < 0.2
    assert default.top_two_moves_per_1000 > 10  # it moves between the posterior's two modes
    assert "TV to exact" in out


def test_latent_features_example_recovers_the_images(latent_features, capsys):
    truth, y = latent_features["simulate"]()
    idata = latent_features["full_model"](bundled_rbm(), y, truth, draws=200, tune=200, chains=2, seed=3)
    out = capsys.readouterr().out
    assert float(idata.sample_stats["n_changed"].mean()) > 0.01  # the latent images move
    assert 1.4 < float(idata.posterior["scale"].mean()) < 2.6
    assert "proposals per image and draw" in out and "pixels wrong" in out
    # whatever PyMC and pymc-rbm warned about after sampling, the example says what it means and what to do
    assert "passed PyMC's R-hat and ESS checks" in out or ("about the warnings above" in out and "--draws 3000" in out)


def test_latent_features_example_names_the_images_that_mix_slowly(latent_features):
    """A pixel that differs between chains but never changes within one has ESS 0; settled pixels are left out."""
    import xarray as xr

    v = np.zeros((2, 500, 3, 16), dtype=np.int64)
    v[:, :, 1, 0] = np.random.default_rng(0).random((2, 500)) < 0.5  # image 1, pixel 0 mixes (ESS about 1000)
    v[1, :, 2, 5] = 1  # image 2, pixel 5: chain 1 holds another value than chain 0, and neither moves
    posterior = xr.Dataset({"v": (("chain", "draw", "v_dim_0", "v_dim_1"), v)},
                           coords={"chain": [0, 1], "draw": np.arange(500)})
    slow = latent_features["slow_images"](xr.DataTree.from_dict({"posterior": posterior}))
    assert list(slow) == [2] and slow[2].pixels.tolist() == [5] and slow[2].ess[0] < 5
    np.testing.assert_allclose(slow[2].chain_means[:, 0], [0.0, 1.0])


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


def test_the_demo_warm_up_drops_its_progress_and_only_the_short_run_warning():
    """PyMC warns about a 10-draw run; the demo's warm-up run is short on purpose, so only that warning goes,
    with the progress lines of the run."""
    import logging

    import pymc as pm

    from pymc_rbm import RBM, RBMParams
    from pymc_rbm.demo import _quiet

    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logger = logging.getLogger("pymc.sampling.mcmc")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)  # whatever an earlier script set on "pymc" (examples/wormholes.py quietens it)
    p = RBMParams.random(4, 2, rng=0)
    try:
        with pm.Model():
            RBM("v", p.W, p.vbias, p.hbias)
            kwargs = dict(draws=10, tune=0, chains=1, cores=1, progressbar=False, compute_convergence_checks=False)
            pm.sample(**kwargs)
            assert any("samples per chain" in r.getMessage() for r in records)
            assert any(r.getMessage().startswith("Sampling 1 chain") for r in records)  # the progress
            records.clear()
            with _quiet():
                pm.sample(**kwargs)
                logger.warning("another warning")
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    messages = [r.getMessage() for r in records]
    assert messages == ["another warning"]
    assert not logger.filters  # the filter is gone after the warm-up

"""examples/mnist_inpainting.py on a handful of digits: the model reads as per-pixel evidence, and the
posterior mean beats the baselines that see the readouts without a prior over images."""

import runpy
from pathlib import Path

import numpy as np
import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mnist_inpainting.py"


@pytest.fixture(scope="module")
def example():
    return runpy.run_path(str(EXAMPLE))


def test_absent_data_ends_cleanly(example, tmp_path, capsys):
    assert example["main"](["--data", str(tmp_path)]) is None
    assert "MNIST data absent" in capsys.readouterr().out


def test_few_digits(example, shared_data, tmp_path):
    data = shared_data("rbm_models/mnist_h100.npz").parents[1]
    shared_data("mnist/binarized_mnist_packed.npz")
    result = example["run"](8, "h100", draws=60, tune=60, chains=1, sweeps=2, seed=1, data_dir=data)
    k = 8
    assert result.structure == "units"  # the masked readouts are per-pixel evidence: the fast path
    assert result.posterior_mean.shape == result.posterior_std.shape == (k, 784)
    assert np.all(np.isfinite(result.posterior_mean)) and np.all((0 <= result.posterior_mean) & (result.posterior_mean <= 1))
    for est in result.reconstructions.values():
        assert est.shape == (k, 784) and np.all(np.isfinite(est))
    assert result.per_draw_ms > 0 and result.cpu_per_draw_ms > 0
    sigma = result.idata.posterior["sigma"].values.mean()
    assert abs(sigma - example["TRUE_SIGMA"]) < 0.1  # 8 x ~650 readouts pin the noise level down
    table = result.table
    post = table["posterior mean (pm.sample)"]
    threshold = table["threshold, missing = training means"]
    # on the observed pixels the prior over images corrects many of the pixels that thresholding gets wrong
    assert post.mae_observed < 0.8 * threshold.mae_observed  # 0.049 against 0.067 here
    assert post.accuracy_observed > threshold.accuracy_observed
    # in the missing block the prior completes the strokes better than the training means do
    # (0.33 against 0.39 here; the accuracy of 8 digits' blocks is too coarse to tell them apart)
    assert post.mae_missing < 0.9 * threshold.mae_missing
    path = example["save_figure"](result, tmp_path / "f.png", n_columns=4)
    assert path is None or path.stat().st_size > 0

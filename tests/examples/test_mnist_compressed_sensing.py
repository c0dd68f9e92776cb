"""examples/mnist_compressed_sensing.py: its mean-field baseline against the exact posterior of a tiny model,
and on a handful of digits the model reads as one term per digit and the posterior mean beats least squares."""

import itertools
import runpy
from pathlib import Path

import numpy as np
import pytest

from pymc_rbm import RBMParams
from pymc_rbm.energy import free_energy

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mnist_compressed_sensing.py"


@pytest.fixture(scope="module")
def example():
    return runpy.run_path(str(EXAMPLE))


def tiny_problem(example, sigma, seed=0, weight_scale=1.0):
    """An enumerable problem: 8 visible and 3 hidden units, 5 measurements of 2 rows."""
    rng = np.random.default_rng(seed)
    p = RBMParams.random(8, 3, rng=seed)
    params = RBMParams(weight_scale * p.W, p.vbias, p.hbias)
    truth = rng.integers(0, 2, size=(2, 8)).astype(np.float64)
    A = rng.standard_normal((5, 8)) / np.sqrt(8)
    y = truth @ A.T + sigma * rng.standard_normal((2, 5))
    return example["Problem"](params, truth, A, y, sigma)


def exact_marginals(problem):
    """p(v_i = 1 | y_k) of every row by enumerating the 2^8 visible states."""
    states = np.array(list(itertools.product([0.0, 1.0], repeat=problem.truth.shape[1])))
    log_prior = -free_energy(states, problem.params)  # (256,)
    resid = problem.y[:, None, :] - (states @ problem.A.T)[None]  # (K, 256, m)
    log_post = log_prior - 0.5 * np.sum(resid**2, axis=-1) / problem.sigma**2
    w = np.exp(log_post - log_post.max(axis=1, keepdims=True))
    return (w / w.sum(axis=1, keepdims=True)) @ states


def test_mean_field_is_close_to_the_exact_posterior_where_the_likelihood_is_weak(example):
    # weak couplings (weights x 0.3, sigma = 1.5): naive mean field is accurate to second order in them
    # (0.003 here; 0.03 with the full weights), and the likelihood still moves the marginals
    problem = tiny_problem(example, sigma=1.5, weight_scale=0.3)
    exact = exact_marginals(problem)
    mf = example["posterior_mean_field"](problem, problem.sigma)
    assert np.max(np.abs(mf - exact)) < 0.01
    # negative control: the same iteration without the likelihood (sigma huge) misses the posterior (0.27)
    prior_only = example["posterior_mean_field"](problem, 1e6)
    assert np.max(np.abs(prior_only - exact)) > 0.1


def test_mean_field_is_a_fixed_point_of_its_equations(example):
    from pymc_rbm.energy import mean_hiddens, visible_activation

    problem = tiny_problem(example, sigma=0.5, seed=1)
    m = example["posterior_mean_field"](problem, problem.sigma, iterations=2000)
    G = problem.A.T @ problem.A
    off = G - np.diag(np.diag(G))
    logits = (visible_activation(mean_hiddens(m, problem.params), problem.params)
              + (problem.y @ problem.A - 0.5 * np.diag(G) - m @ off) / problem.sigma**2)
    np.testing.assert_allclose(m, 1 / (1 + np.exp(-logits)), atol=1e-8)


def test_absent_data_ends_with_a_message(example, tmp_path):
    with pytest.raises(SystemExit, match="MNIST data absent"):
        example["main"](["--rbm", str(tmp_path / "none.npz")])


def test_few_digits(example, shared_data, tmp_path, capsys):
    rbm = shared_data("rbm_models/mnist_h100.npz")
    mnist = shared_data("mnist/binarized_mnist_packed.npz")
    figure = tmp_path / "f.png"
    result = example["main"](["--rows", "3", "--measurements", "100", "--draws", "60", "--chains", "2",
                              "--seed", "1", "--rbm", str(rbm), "--mnist", str(mnist), "--out", str(figure)])
    k = 3
    assert result.structure == "rows"  # each digit's measurements are one term that couples its pixels
    assert result.chosen == {"NUTS": ["sigma"], "ReplicaExchange": ["v"]}  # pm.sample's own choice
    assert result.posterior_mean.shape == result.posterior_std.shape == (k, 784)
    assert np.all((0 <= result.posterior_mean) & (result.posterior_mean <= 1))
    for est in result.reconstructions.values():
        assert est.shape == (k, 784) and np.all(np.isfinite(est))
    assert result.per_draw_ms > 0
    table = result.table
    lstsq = table["least squares, thresholded at 1/2"]
    # the prior over images recovers pixels the 100 measurements of 784 leave open (0.079 against 0.101 here)
    assert table["posterior mean (pm.sample)"].mae < 0.9 * lstsq.mae
    assert table["mean field (true σ)"].mae < 0.9 * lstsq.mae
    agreement = result.agreement
    assert 0 <= agreement.above_1_01 <= 1 and 0 <= agreement.disagree <= 1 and agreement.median_rhat >= 0.99
    out = capsys.readouterr().out
    assert "the measurements read as 'rows'" in out and "| posterior mean (pm.sample) |" in out
    assert "R-hat" in out
    assert figure.stat().st_size > 0  # matplotlib is a dependency of the project

"""Block Gibbs sampling: G = G_h G_v (hidden layer given v, then visible layer given h)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from pymc_rbm import RBMParams
from pymc_rbm import testing as ht
from pymc_rbm.energy import mean_hiddens, mean_visibles
from pymc_rbm.estimators import log_marginal_visible
from pymc_rbm.kernels import RBMState, gibbs_sweep, init_state, sample_hiddens, sample_visibles

SIZES = [(1, 1), (2, 3), (3, 2), (4, 4)]
SCALES = [0.0, 1.0, 3.0, 10.0]


@pytest.mark.parametrize(
    ("sample", "mean", "n_in"), [(sample_hiddens, mean_hiddens, 4), (sample_visibles, mean_visibles, 3)]
)
def test_conditional_draws_follow_the_conditional_means(sample, mean, n_in):
    params = RBMParams.random(4, 3, scale=2.0, rng=0)
    rng = np.random.default_rng(0)
    x = np.tile(rng.integers(0, 2, n_in).astype(float), (100_000, 1))
    beta = np.full(x.shape[0], 0.7)
    for b in (None, 0.7, beta):
        draws = sample(rng, x, params, b)
        assert draws.dtype == np.float64 and np.all((draws == 0) | (draws == 1))
        m = mean(x[0], params, None if b is None else 0.7)
        sd = np.sqrt(m * (1 - m) / x.shape[0])
        assert np.all(np.abs(draws.mean(axis=0) - m) <= 5 * sd + 1e-12)


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("size", SIZES)
def test_gibbs_leaves_p_invariant_and_converges(size, scale):
    for seed in range(3):
        params = RBMParams.random(*size, scale=scale, rng=seed)
        G = ht.transition_matrix(params, "gibbs")
        ht.assert_converges(ht.joint_distribution(params), G, atol=1e-12)


@pytest.mark.parametrize("beta", [0.0, 0.5, 3.0])
def test_tempered_gibbs_leaves_p_beta_invariant(beta):
    params = RBMParams.random(3, 3, scale=4.0, rng=1)
    ht.assert_converges(ht.joint_distribution(params, beta), ht.transition_matrix(params, "gibbs", beta))


def test_gibbs_matrix_does_not_depend_on_the_old_hidden_state():
    params = RBMParams.random(2, 3, scale=3.0, rng=2)
    G = ht.transition_matrix(params, "gibbs").reshape(4, 8, 32)
    assert np.allclose(G, G[:, :1, :], atol=1e-15)


@pytest.mark.parametrize(
    ("params", "beta", "n_draws"),
    [
        (RBMParams.random(2, 2, scale=3.0, rng=0), None, 4000),
        (RBMParams.random(3, 2, scale=10.0, rng=1), None, 2000),
        (RBMParams(np.zeros((2, 2)), np.zeros(2), np.zeros(2)), None, 2000),
        (RBMParams.random(3, 3, scale=2.0, rng=2), 0.5, 2000),
    ],
    ids=["2x2", "3x2-c10", "zero", "3x3-beta"],
)
def test_gibbs_sweep_follows_its_matrix(params, beta, n_draws):
    T = ht.transition_matrix(params, "gibbs", 1.0 if beta is None else beta)
    kernel = lambda rng, s: gibbs_sweep(rng, s, params, beta)  # noqa: E731
    ht.empirical_transition_check(kernel, T, params.n_visible, params.n_hidden, n_draws=n_draws, rng=21)


def test_gibbs_sweep_order_is_hidden_then_visible():
    """A sampler that updates the visible layer first follows a different matrix, and the check sees it."""
    params = RBMParams.random(2, 2, scale=3.0, rng=0)

    def visible_first(rng, s):
        v = sample_visibles(rng, s.h, params)
        return RBMState(v, sample_hiddens(rng, v, params))

    with pytest.raises(AssertionError):
        ht.empirical_transition_check(visible_first, ht.transition_matrix(params, "gibbs"), 2, 2, n_draws=4000)


def test_gibbs_sweep_with_one_beta_per_chain():
    params = RBMParams.random(2, 2, scale=3.0, rng=6)
    n_draws = 4000
    betas = np.tile([1.0, 0.2], 16 * n_draws // 2)
    T = 0.5 * (ht.transition_matrix(params, "gibbs", 1.0) + ht.transition_matrix(params, "gibbs", 0.2))
    kernel = lambda rng, s: gibbs_sweep(rng, s, params, betas)  # noqa: E731
    ht.empirical_transition_check(kernel, T, 2, 2, n_draws=n_draws, rng=2)


def test_long_batched_gibbs_run_matches_the_visible_marginal():
    params = RBMParams.random(3, 3, scale=2.0, rng=8)
    n_chains, n_sweeps = 40_000, 40
    rng = np.random.default_rng(14)
    state = init_state(rng, rng.integers(0, 2, (n_chains, 3)), params)
    for _ in range(n_sweeps):
        state, _ = gibbs_sweep(rng, state, params)
    counts = np.bincount(ht.state_index(state.v), minlength=8)
    ht.assert_frequencies(counts, np.exp(log_marginal_visible(params)))


def test_gibbs_sweep_info_and_no_mutation():
    params = RBMParams.random(5, 4, rng=0)
    rng = np.random.default_rng(0)
    state = init_state(rng, rng.integers(0, 2, (6, 5)), params)
    v0, h0 = state.v.copy(), state.h.copy()
    new, info = gibbs_sweep(rng, state, params)
    assert_array_equal(state.v, v0)
    assert_array_equal(state.h, h0)
    assert_array_equal(info.n_changed, (new.v != v0).sum(axis=1))
    assert_array_equal(info.n_hidden_changed, (new.h != h0).sum(axis=1))
    assert new.v.shape == (6, 5) and new.h.shape == (6, 4)


def test_init_state_validates_and_copies():
    params = RBMParams.random(3, 2, rng=0)
    rng = np.random.default_rng(0)
    v = np.array([1, 0, 1])
    state = init_state(rng, v, params)
    assert state.v.shape == (1, 3) and state.h.shape == (1, 2) and state.v.dtype == np.float64
    state.v[0, 0] = 0.0
    assert v[0] == 1
    with pytest.raises(ValueError, match="binary"):
        init_state(rng, [[0.5, 0, 1]], params)
    with pytest.raises(ValueError, match="n_visible"):
        init_state(rng, np.zeros((2, 4)), params)
    with pytest.raises(ValueError, match="shape"):
        init_state(rng, np.zeros((2, 2, 3)), params)


def test_gibbs_is_stable_for_weights_of_50():
    params = RBMParams.random(30, 20, scale=50.0, rng=1)
    rng = np.random.default_rng(1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        state = init_state(rng, rng.integers(0, 2, (8, 30)), params)
        for _ in range(5):
            state, _ = gibbs_sweep(rng, state, params, np.linspace(0.0, 1.0, 8))
    assert np.all((state.v == 0) | (state.v == 1)) and np.all((state.h == 0) | (state.h == 1))


def test_kernel_modules_and_the_harness_import_neither_pymc_nor_pytensor():
    """kernels/ and testing.py are pure NumPy/SciPy (the package __init__ is bypassed: it loads PyMC)."""
    import subprocess
    import sys
    from pathlib import Path

    import pymc_rbm

    code = (
        "import sys, types\n"
        f"pkg = types.ModuleType('pymc_rbm'); pkg.__path__ = [{str(Path(pymc_rbm.__file__).parent)!r}]\n"
        "sys.modules['pymc_rbm'] = pkg\n"
        "import pymc_rbm.kernels, pymc_rbm.testing\n"
        "print(sorted(m for m in ('pymc', 'pytensor', 'arviz') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"

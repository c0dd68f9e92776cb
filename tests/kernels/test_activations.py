"""Carried activations: the incremental update equals the full product, whichever path it takes."""

import subprocess
import sys

import numpy as np
import pytest

from pymc_rbm.kernels.activations import (
    FULL_EVERY,
    _numpy_add_changed_rows,
    add_changed_rows,
    count_changes,
    incremental_fraction,
    propagate_activation,
)


def _case(rng, n_chains, n, m, n_flips):
    M = np.ascontiguousarray(rng.normal(size=(n, m)))
    bias = rng.normal(size=m)
    old = rng.integers(0, 2, (n_chains, n)).astype(np.float64)
    new = old.copy()
    for k in range(n_chains):
        idx = rng.choice(n, size=n_flips, replace=False)
        new[k, idx] = 1.0 - new[k, idx]
    return M, bias, old, new


@pytest.mark.parametrize("n_chains", [1, 5])
@pytest.mark.parametrize("n_flips", [0, 1, 3, 20])
def test_propagate_matches_full_product(n_chains, n_flips):
    rng = np.random.default_rng(n_chains * 100 + n_flips)
    M, bias, old, new = _case(rng, n_chains, 20, 7, n_flips)
    full = lambda x: bias + x @ M  # noqa: E731
    a_old = full(old)
    a_before = a_old.copy()
    old_before, new_before = old.copy(), new.copy()
    a, incremental = propagate_activation(a_old, old, new, M, full)
    np.testing.assert_allclose(a, full(new), rtol=0, atol=1e-12)
    # small changes go incrementally, all-units changes by the full product
    assert incremental == (0 < n_flips * n_chains <= incremental_fraction() * old.size)
    # inputs untouched
    np.testing.assert_array_equal(a_old, a_before)
    np.testing.assert_array_equal(old, old_before)
    np.testing.assert_array_equal(new, new_before)


def test_nothing_changed_returns_the_same_activation():
    rng = np.random.default_rng(1)
    M, bias, old, _ = _case(rng, 3, 10, 4, 0)
    a = bias + old @ M
    out, incremental = propagate_activation(a, old, old.copy(), M, lambda x: bias + x @ M)
    assert out is a and not incremental


def test_force_full_recomputes():
    rng = np.random.default_rng(2)
    M, bias, old, new = _case(rng, 2, 10, 4, 1)
    calls = []

    def full(x):
        calls.append(1)
        return bias + x @ M

    out, incremental = propagate_activation(bias + old @ M, old, new, M, full, force_full=True)
    assert calls and not incremental
    np.testing.assert_allclose(out, bias + new @ M, atol=1e-12)


@pytest.mark.parametrize("n_chains", [1, 4])
def test_compiled_and_numpy_paths_agree(n_chains):
    rng = np.random.default_rng(3)
    M, bias, old, new = _case(rng, n_chains, 30, 6, 2)
    a = bias + old @ M
    out_c, ok_c = add_changed_rows(a, old, new, M, 10**6)
    out_n, ok_n = _numpy_add_changed_rows(a, old, new, M, 10**6)
    assert ok_c and ok_n
    np.testing.assert_allclose(out_c, out_n, atol=1e-12)
    # over the limit both decline and hand back the input
    for update in (add_changed_rows, _numpy_add_changed_rows):
        out, ok = update(a, old, new, M, 0)
        assert not ok and out is a


def test_drift_stays_small_over_many_incremental_updates():
    # the callers recompute every FULL_EVERY updates; even 10x that many drifts by rounding only
    rng = np.random.default_rng(4)
    M, bias, x, _ = _case(rng, 2, 50, 30, 0)
    full = lambda s: bias + s @ M  # noqa: E731
    a = full(x)
    for _ in range(10 * FULL_EVERY):
        new = x.copy()
        idx = rng.integers(0, 50, size=2)
        new[:, idx] = 1.0 - new[:, idx]
        a, _ = propagate_activation(a, x, new, M, full)
        x = new
    np.testing.assert_allclose(a, full(x), atol=1e-9)


def test_count_changes():
    a = np.array([[0, 1, 1], [1, 1, 1.0]])
    b = np.array([[1, 1, 0], [1, 1, 1.0]])
    np.testing.assert_array_equal(count_changes(a, b), [2, 0])
    np.testing.assert_array_equal(count_changes(a[:1], b[:1]), [2])


def test_importing_the_kernels_does_not_load_numba():
    # the compiled update is built on first use, so importing the kernels stays cheap
    code = "import sys, pymc_rbm.kernels; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

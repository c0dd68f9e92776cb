"""Tests of pymc_rbm.diagnostics.modes: class changes between the Artificial Modes."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from pymc_rbm.datasets import AMBIGUOUS, artificial_mode_prototypes, classify_modes
from pymc_rbm.diagnostics import NO_CHANGE, class_changes


MODES = artificial_mode_prototypes()


def ambiguous_state() -> np.ndarray:
    """Top two rows on: Hamming distance 8 to every mode."""
    v = np.zeros(16, dtype=np.uint8)
    v[:8] = 1
    return v


def noisy(mode: int, pixel: int) -> np.ndarray:
    v = MODES[mode].copy()
    v[pixel] ^= 1
    return v


def test_hand_made_states_classify_as_intended():
    assert classify_modes(ambiguous_state()) == AMBIGUOUS
    assert classify_modes(noisy(2, 5)) == 2


def test_class_changes_with_ambiguous_samples():
    amb = ambiguous_state()
    # classes: 0, ?, 0, 1, ?, ?, 1, 2
    chain = np.stack([MODES[0], amb, noisy(0, 3), MODES[1], amb, amb, noisy(1, 0), MODES[2]])
    out = class_changes(chain)
    assert out.n_changes == 2  # 0 -> 1 and 1 -> 2; the ambiguous ones are discarded
    assert out.first_change == 3
    assert out.n_ambiguous == 3


def test_class_changes_edge_cases():
    amb = ambiguous_state()
    start_ambiguous = np.stack([amb, MODES[2], MODES[2], MODES[3]])
    all_ambiguous = np.stack([amb] * 4)
    constant = np.stack([MODES[1]] * 4)
    back_and_forth = np.stack([MODES[3], MODES[2], MODES[3], MODES[2]])
    out = class_changes(np.stack([start_ambiguous, all_ambiguous, constant, back_and_forth]))
    np.testing.assert_array_equal(out.n_changes, [1, 0, 0, 3])
    np.testing.assert_array_equal(out.first_change, [3, NO_CHANGE, NO_CHANGE, 1])
    np.testing.assert_array_equal(out.n_ambiguous, [1, 4, 0, 0])


def test_class_changes_batch_shapes_and_labels():
    labels = np.array([[[0, -1, 0, 1], [2, 2, 2, 2], [-1, 3, -1, 0]]])  # (1, 3, n_steps)
    out = class_changes(labels, classify=None)
    assert out.n_changes.shape == (1, 3)
    np.testing.assert_array_equal(out.n_changes, [[1, 0, 1]])
    np.testing.assert_array_equal(out.first_change, [[3, NO_CHANGE, 3]])
    np.testing.assert_array_equal(out.n_ambiguous, [[1, 0, 2]])
    # the same through states
    states = MODES[np.where(labels < 0, 0, labels)].copy()
    states[labels < 0] = ambiguous_state()
    got = class_changes(states)
    for a, b in zip(got, out):
        np.testing.assert_array_equal(a, b)


def test_class_changes_of_a_dataarray():
    chains = np.stack([MODES[[0, 0, 1, 1, 1]], MODES[[2, 3, 2, 3, 2]]])  # (chain, draw, unit)
    da = xr.DataArray(chains, dims=("chain", "draw", "v_dim_0"))
    out = class_changes(da)
    np.testing.assert_array_equal(out.n_changes, [1, 4])
    np.testing.assert_array_equal(out.first_change, [2, 1])
    moved = class_changes(da.transpose("v_dim_0", "draw", "chain"), unit_dim="v_dim_0")
    np.testing.assert_array_equal(moved.n_changes, [1, 4])
    with pytest.raises(ValueError, match="unit_dim"):
        class_changes(da.transpose("chain", "v_dim_0", "draw"))


def test_class_changes_errors():
    with pytest.raises(ValueError, match="16"):
        class_changes(np.zeros((5, 10)))
    with pytest.raises(ValueError, match="n_steps, n_visible"):
        class_changes(np.zeros(16))
    with pytest.raises(ValueError, match="integer class labels"):
        class_changes(np.zeros((2, 5)), classify=None)
    with pytest.raises(ValueError, match="draw"):
        class_changes(xr.DataArray(np.zeros((5, 16)), dims=("step", "unit")))


"""Tests of the run-time helpers (pymc_rbm._runtime) not covered by their users' tests."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from pymc_rbm._runtime import map_blocks


def test_map_blocks_fills_every_block_once_and_reraises():
    out = np.zeros(100)
    calls = []
    lock = threading.Lock()

    def fill(block: slice) -> None:
        with lock:
            calls.append(block.start)
        out[block] += np.arange(block.start, min(block.stop, 100))

    map_blocks(fill, (slice(i, i + 7) for i in range(0, 100, 7)))
    np.testing.assert_array_equal(out, np.arange(100))
    assert sorted(calls) == list(range(0, 100, 7))
    map_blocks(fill, [slice(0, 100)])  # one block: run here
    np.testing.assert_array_equal(out, 2 * np.arange(100))

    def fail(block: slice) -> None:
        if block.start == 14:
            raise ValueError("block 14")

    with pytest.raises(ValueError, match="block 14"):
        map_blocks(fail, (slice(i, i + 7) for i in range(0, 100, 7)))

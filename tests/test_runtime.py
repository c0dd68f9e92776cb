"""Tests of the run-time helpers (pymc_rbm._runtime) not covered by their users' tests."""

from __future__ import annotations

import multiprocessing
import os
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


def _fill_in_child(queue) -> None:
    out = np.zeros(20)

    def fill(block: slice) -> None:
        out[block] = 1.0

    map_blocks(fill, [slice(0, 10), slice(10, 20)])
    queue.put(out.sum())


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX only")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")  # the pool's threads
def test_map_blocks_works_in_a_forked_child_of_a_process_that_used_it():
    """PyMC's samplers fork on Linux: a child of a process that has the pool must still map its blocks."""
    map_blocks(lambda block: None, [slice(0, 1), slice(1, 2)])  # the parent's pool exists now
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_fill_in_child, args=(queue,))
    child.start()
    child.join(timeout=60)
    alive = child.is_alive()
    if alive:
        child.kill()
    assert not alive, "the forked child hung on the parent's pool"
    assert queue.get(timeout=5) == 20.0

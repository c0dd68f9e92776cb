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


def test_map_blocks_inside_a_block_runs_inline_instead_of_waiting_for_the_busy_pool(monkeypatch):
    """A block whose work splits into blocks again (a large product inside a block) would otherwise wait for
    the pool's threads, all busy with the outer blocks, for ever."""
    monkeypatch.setenv("PYMC_RBM_NUM_THREADS", "2")
    out = np.zeros((4, 10))

    def inner(row: int):
        def fill(block: slice) -> None:
            out[row, block] += 1.0

        return fill

    def outer(block: slice) -> None:
        for row in range(block.start, block.stop):
            map_blocks(inner(row), [slice(0, 5), slice(5, 10)])

    worker = threading.Thread(target=map_blocks, args=(outer, [slice(0, 2), slice(2, 4)]), daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive(), "map_blocks waited for its own busy pool"
    np.testing.assert_array_equal(out, 1.0)


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


# ------------------------------------------------------- thread invariance
def _estimates_with_threads(n: int, monkeypatch) -> list[float]:
    """AIS, reverse AIS, BAR, RTS, SAMS and exact on small models with ``n`` threads everywhere."""
    from threadpoolctl import threadpool_limits

    import pymc_rbm.enumeration as ex
    from pymc_rbm import RBMParams
    from pymc_rbm.estimators import RTSRounds, StartOptions, ais, bar, log_partition_exact, reverse_ais, rts, sams

    monkeypatch.setenv("PYMC_RBM_NUM_THREADS", str(n))  # map_blocks and every default thread count
    p = RBMParams.random(10, 5, scale=1.5, rng=0)
    big = RBMParams.random(40, 13, rng=1)  # enough outer steps for the enumeration to use threads
    ex._CACHE.clear()
    with threadpool_limits(limits=n, user_api="blas"):
        start = np.random.default_rng(2).integers(0, 2, (140, 10)).astype(float)
        out = [  # 140 chains: three blocks (CHAINS_PER_BLOCK)
            ais(p, n_chains=140, schedule=60, rng=3, n_jobs=n),
            reverse_ais(p, start, n_chains=None, schedule=60, rng=3, n_jobs=n),
            bar(p, n_chains=140, n_steps=60, rng=3),  # default n_jobs: $PYMC_RBM_NUM_THREADS
            rts(p, n_chains=40, n_sweeps=30, rounds=RTSRounds(n_rounds=2), start=StartOptions(n_pilot=30, n_start=60),
                rng=3),
            sams(p, n_sweeps=60, start=StartOptions(n_pilot=30, n_start=60), rng=3),
            log_partition_exact(big, n_threads=n),
            log_partition_exact(big),
        ]
    return [e.log_z for e in out]


def test_same_seed_same_estimates_bit_for_bit_with_1_2_and_4_threads(monkeypatch):
    """Random streams are split by blocks of chains, never by threads: results depend on the seed only."""
    one = _estimates_with_threads(1, monkeypatch)
    assert all(np.isfinite(one))
    for n in (2, 4):
        assert _estimates_with_threads(n, monkeypatch) == one


def test_chain_blocks_depend_on_the_number_of_chains_only():
    from pymc_rbm._runtime import CHAINS_PER_BLOCK, chain_blocks

    blocks, rngs = chain_blocks(2 * CHAINS_PER_BLOCK + 1, np.random.default_rng(0))
    assert len(blocks) == 3 == len(rngs) and blocks[0].start == 0 and blocks[-1].stop == 2 * CHAINS_PER_BLOCK + 1
    assert all(a.stop == b.start for a, b in zip(blocks[:-1], blocks[1:]))
    assert max(b.stop - b.start for b in blocks) <= CHAINS_PER_BLOCK
    again, _ = chain_blocks(2 * CHAINS_PER_BLOCK + 1, np.random.default_rng(0))
    assert again == blocks


def test_the_thread_count_variable_must_be_a_positive_integer(monkeypatch):
    from pymc_rbm._runtime import default_threads

    monkeypatch.setenv("PYMC_RBM_NUM_THREADS", "3")
    assert default_threads() == 3
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv("PYMC_RBM_NUM_THREADS", bad)
        with pytest.raises(ValueError, match="PYMC_RBM_NUM_THREADS"):
            default_threads()


def _large_products_with_blas_threads(n: int) -> list[bytes]:
    """Training, a mixture reference, TAP and a batch's draws at MNIST's width, with ``n`` BLAS threads."""
    import pymc as pm
    from threadpoolctl import threadpool_limits

    from pymc_rbm import RBM, RBMParams
    from pymc_rbm.estimators import log_partition
    from pymc_rbm.estimators.base_rate import mixture_reference
    from pymc_rbm.training import fit

    p = RBMParams.random(784, 100, scale=0.3, rng=4)
    data = (np.random.default_rng(5).random((300, 784)) < 0.2).astype(np.int8)
    with threadpool_limits(limits=n, user_api="blas"):
        trained = fit(data, 100, n_updates=3, batch_size=100, progress=False, rng=1).params
        mixture = mixture_reference(p, n_components=80, rng=np.random.default_rng(2))
        tap = log_partition(p, "tap", rng=3).log_z
        with pm.Model():
            RBM("v", p.W, p.vbias, p.hbias, shape=(200, 784))
            idata = pm.sample(draws=3, tune=2, chains=1, cores=1, random_seed=6, progressbar=False,
                              compute_convergence_checks=False)
    return [trained.W.tobytes(), mixture.visible_logits.tobytes(), np.float64(tap).tobytes(),
            idata.posterior["v"].values.tobytes(), idata.sample_stats["free_energy"].values.tobytes()]


def test_products_large_enough_for_blas_threads_give_the_same_bits_with_one_and_two():
    """OpenBLAS sums a (64 × 784) · (784 × 100) product differently with one thread and two; the package runs
    its products on one BLAS thread, so a machine's thread count does not change a seeded result (on a machine
    with one core, BLAS has one thread either way and this checks nothing)."""
    one, two = _large_products_with_blas_threads(1), _large_products_with_blas_threads(2)
    names = ["fit", "mixture_reference", "TAP", "draws of 200 rows", "their free energies"]
    assert [a == b for a, b in zip(one, two)] == [True] * len(names), names


# ----------------------------------------------------------------- progress
class _FakeClock:
    """A ``time.perf_counter`` that shows the time set by the test."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def _progress_lines(monkeypatch, capsys, steps, total=5000):
    """The log lines of a ``total``-step Progress on a non-terminal stderr, fed the (seconds, n_steps) of ``steps``."""
    from pymc_rbm import _runtime

    clock = _FakeClock()
    monkeypatch.setattr(_runtime.time, "perf_counter", clock)
    capsys.readouterr()
    with _runtime.Progress(total, "fit (pcd)", True) as bar:
        for seconds, n_steps in steps:
            clock.now += seconds
            bar.advance(n_steps)
    return [line for line in capsys.readouterr().err.splitlines() if line.startswith("fit (pcd)")]


def test_the_time_left_leaves_out_the_warm_up_of_the_first_step(monkeypatch, capsys):
    # the first update compiles for 9.61 s, the next 324 take 0.4 s: 4675 steps at 810 per second take 5.8 s
    lines = _progress_lines(monkeypatch, capsys, [(9.61, 1)] + [(0.4 / 324, 1)] * 324)
    assert lines[0] == "fit (pcd): 325/5000 (6%) after 10 s, about 6 s left", lines  # from the start: 144 s
    assert lines[-1] == "fit (pcd): 325/5000 (6%) in 10.0 s"


def test_the_time_left_is_shown_once_a_step_after_the_first_is_timed(monkeypatch, capsys):
    # a 12 s first step gives no rate; then 2 steps in 11 s leave 97 for 97 · 5.5 = 534 s (from the start: 744 s)
    lines = _progress_lines(monkeypatch, capsys, [(12.0, 1), (1.0, 1), (10.0, 1)], total=100)
    assert lines[:2] == ["fit (pcd): 1/100 (1%) after 12 s", "fit (pcd): 3/100 (3%) after 23 s, about 534 s left"]
    # steady steps: the estimate is the plain one, 1000 steps in 10.1 s leave 4000 for about 40 s
    steady = _progress_lines(monkeypatch, capsys, [(0.0101, 1)] * 1000)
    assert steady[0] == "fit (pcd): 1000/5000 (20%) after 10 s, about 40 s left", steady

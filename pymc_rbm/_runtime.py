"""Run-time helpers shared by the estimators and training: BLAS threads, progress, and Ctrl-C."""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

__all__ = [
    "LOG_EVERY_SECONDS",
    "Progress",
    "StopOnInterrupt",
    "THREADED_PRODUCT",
    "CHAINS_PER_BLOCK",
    "chain_blocks",
    "default_threads",
    "map_blocks",
    "on_one_blas_thread",
    "single_blas_thread",
    "spawn",
]

#: Products of at least this many multiply-adds may be split over BLAS threads (OpenBLAS forms smaller ones on
#: one thread): the package forms them with one BLAS thread (:func:`single_blas_thread`).
THREADED_PRODUCT = 2**16
#: The BLAS libraries' controllers (threadpoolctl), found on first use; None until then.
_BLAS = None


class _OneBlasThread:
    """:func:`single_blas_thread`'s context: each BLAS library set to one thread, and back on exit."""

    __slots__ = ("_saved",)

    def __enter__(self):
        self._saved = [(lib, n) for lib in _BLAS if (n := lib.get_num_threads()) != 1]
        for lib, _ in self._saved:
            lib.set_num_threads(1)
        return self

    def __exit__(self, *exc):
        for lib, n in self._saved:
            lib.set_num_threads(n)
        return False


def single_blas_thread():
    """A context that keeps BLAS on one thread: the package's products run in it.

    A multi-threaded BLAS sums a product differently with each number of
    threads: OpenBLAS's ``(64 × 784) · (784 × 100)`` product already differs
    in the last bits between one thread and two, and a mean-field solve or a
    training run carries such bits into its result. So every computation of
    the package whose products are large enough to be threaded runs with one
    BLAS thread, and its results depend on the seed only; where it uses the
    cores it runs its own threads over fixed blocks of chains
    (:func:`chain_blocks`) or rows (:func:`pymc_rbm.primitives.product`). One
    thread is also faster on a busy machine, where BLAS threads spin against
    each other: an AIS sweep took 2.5 ms instead of 0.18 ms, an
    exact-gradient update of a 16x16 RBM 1.47 s instead of 0.02 s.

    The libraries are looked up once (threadpoolctl); entering and leaving the
    context then costs a few microseconds.
    """
    global _BLAS
    if _BLAS is None:
        try:
            import scipy.linalg  # noqa: F401  (loads SciPy's BLAS, which compiled products call)
            from threadpoolctl import ThreadpoolController  # a dependency of PyMC
        except ImportError:  # pragma: no cover
            return contextlib.nullcontext()
        _BLAS = tuple(ThreadpoolController().select(user_api="blas").lib_controllers)
    return _OneBlasThread()


def on_one_blas_thread(fn):
    """``fn`` run in :func:`single_blas_thread` (a decorator of the package's deterministic solvers)."""

    @functools.wraps(fn)
    def on_one_thread(*args, **kwargs):
        with single_blas_thread():
            return fn(*args, **kwargs)

    return on_one_thread


# ------------------------------------------------------------ thread pool
#: Environment variable that sets :func:`default_threads` (a positive integer).
THREADS_VARIABLE = "PYMC_RBM_NUM_THREADS"


def default_threads() -> int:
    """Threads to use by default: ``$PYMC_RBM_NUM_THREADS`` if set, else one per core, at most 8.

    No result of the package depends on this number, only its speed.
    """
    value = os.environ.get(THREADS_VARIABLE, "").strip()
    if value:
        try:
            n = int(value)
        except ValueError:
            n = 0
        if n < 1:
            raise ValueError(f"{THREADS_VARIABLE} must be a positive integer, got {value!r}")
        return n
    return max(1, min(os.cpu_count() or 1, 8))


#: Most chains in one block of :func:`chain_blocks`. Smaller blocks share out over more threads, larger
#: ones run faster on one: AIS with 100 chains of a 784 x 200 RBM on one thread took 1.3 times as long in
#: two blocks of 50 as in one batch, 1.5 times in four of 25 (2026-11-26, a busy 2-core machine).
CHAINS_PER_BLOCK = 64


def chain_blocks(n_chains: int, rng) -> tuple[list[slice], list]:
    """Split ``n_chains`` independent chains into blocks, each with its own random generator.

    The blocks (consecutive chains, at most :data:`CHAINS_PER_BLOCK` each,
    sizes as equal as possible) and their generators (``rng.spawn``) depend
    on ``n_chains`` and ``rng`` only. A run that advances each block on its
    own generator, whichever thread runs it, therefore gives the same result
    bit for bit with any number of threads: the streams are split by chains,
    never by threads (the "strong parallelism invariance" of Surjanovic et
    al. 2023, Pigeons.jl).

    Parameters
    ----------
    n_chains : int
    rng : numpy.random.Generator
        Spawns one child per block (and so advances its spawn counter).

    Returns
    -------
    blocks : list of slice
    rngs : list of numpy.random.Generator
        One per block.
    """
    n_blocks = max(1, -(-int(n_chains) // CHAINS_PER_BLOCK))
    bounds = [n_chains * i // n_blocks for i in range(n_blocks + 1)]
    return [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:])], spawn(rng, n_blocks)


def spawn(rng: np.random.Generator, n: int) -> list[np.random.Generator]:
    """``n`` independent child generators of ``rng``: ``rng.spawn(n)``, also where its seed cannot spawn.

    A generator made from a legacy ``numpy.random.RandomState`` (``np.random.default_rng(RandomState(0))``)
    has no seed sequence to spawn from; its children are then spawned from a seed sequence seeded by four
    of its own draws, so they depend on its state only (and advance it, as scikit-learn's use of a
    RandomState does).

    Parameters
    ----------
    rng : numpy.random.Generator
    n : int

    Returns
    -------
    list of numpy.random.Generator
    """
    try:
        return rng.spawn(n)
    except TypeError:
        seed = np.random.SeedSequence(rng.integers(0, 2**63, size=4).tolist())
        return [np.random.default_rng(child) for child in seed.spawn(n)]


_POOL: ThreadPoolExecutor | None = None
_POOL_PREFIX = "pymc_rbm"
_POOL_SIZE = 0
_POOL_LOCK = threading.Lock()


def _forget_pool_after_fork() -> None:
    """A forked child has none of the parent's threads: it makes its own pool on first use."""
    global _POOL, _POOL_LOCK
    _POOL, _POOL_LOCK = None, threading.Lock()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_forget_pool_after_fork)


def map_blocks(fn, blocks) -> None:
    """Call ``fn(block)`` for every block, on a shared pool of threads when there are several cores.

    For NumPy work on disjoint blocks of an array: NumPy releases the GIL
    inside its loops, so the blocks run on separate cores. ``fn`` must not
    depend on which thread runs it or on the order of the blocks (no random
    numbers), so the result is the same with any number of cores. The pool
    (:func:`default_threads` threads) is made on first use and kept; a forked
    process (PyMC's samplers fork on Linux) makes its own.
    """
    global _POOL, _POOL_SIZE
    blocks = list(blocks)
    n_cores = default_threads()
    # inline inside one of the pool's own threads: waiting there for the pool could wait for ever
    if n_cores == 1 or len(blocks) == 1 or threading.current_thread().name.startswith(_POOL_PREFIX):
        for block in blocks:
            fn(block)
        return
    with _POOL_LOCK:
        if _POOL is None or _POOL_SIZE != n_cores:  # first use, or $PYMC_RBM_NUM_THREADS changed
            if _POOL is not None:
                _POOL.shutdown(wait=False)
            _POOL, _POOL_SIZE = ThreadPoolExecutor(n_cores, thread_name_prefix=_POOL_PREFIX), n_cores
        pool = _POOL
    for _ in pool.map(fn, blocks):  # re-raises the first error of any block
        pass


# ----------------------------------------------------------------- progress
#: Seconds between two progress lines when stderr is not a terminal (a log file, a CI job, a notebook).
LOG_EVERY_SECONDS = 10.0


class Progress:
    """Progress of a long loop on stderr: a bar (rich) on a terminal, log lines elsewhere.

    On a terminal the bar is drawn by rich (a dependency of PyMC). When stderr
    is not a terminal (output redirected to a file, a CI log, a notebook), a
    bar would print nothing useful until the end, so a line such as
    ``fit (pcd): 150/300 (50%) after 12 s, about 12 s left`` is written every
    :data:`LOG_EVERY_SECONDS` seconds, and one when the loop ends. The time
    left is reckoned from the steps after the first, as the bar's is: the
    first step carries the warm-up (Numba compiling the kernels, seconds
    that no later step repeats), which would otherwise swell every estimate.

    ``advance`` is cheap to call every step (the bar is touched about 200
    times in all) and safe to call from several threads.

    Parameters
    ----------
    total : int
        Number of steps.
    description : str
        What runs, e.g. ``"fit (pcd)"``.
    enabled : bool
        When False nothing is shown.
    """

    def __init__(self, total: int, description: str, enabled: bool):
        self.total, self.enabled, self.description = int(total), bool(enabled), description
        self._every = max(1, self.total // 200)
        self._pending = 0
        self._done = 0
        self._bar = self._task = None
        self._lines = False
        self._postfix = ""
        self._lock = threading.Lock()
        self._t0 = self._last_line = time.perf_counter()
        self._rate_start = None  # (time, steps done) at the end of the first step: the clock of the time left

    def __enter__(self):
        if not self.enabled:
            return self
        self._t0 = self._last_line = time.perf_counter()
        if not _is_terminal(sys.stderr):
            self._lines = True
            return self
        try:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=Console(file=sys.stderr),
                transient=False,
            )
            self._bar.__enter__()
            self._task = self._bar.add_task(self.description, total=self.total)
        except ImportError:  # pragma: no cover - rich comes with PyMC
            self._bar = None
            self._lines = True
        return self

    def set_postfix(self, text: str) -> None:
        """Text shown after the counts (e.g. the latest log-likelihood)."""
        if not self.enabled:
            return
        self._postfix = str(text)
        if self._bar is not None:
            self._bar.update(self._task, description=f"{self.description} {self._postfix}")

    def advance(self, n: int = 1) -> None:
        """Count ``n`` more steps done."""
        if not self.enabled:
            return
        with self._lock:
            self._pending += n
            if self._rate_start is None:
                self._rate_start = (time.perf_counter(), self._done + self._pending)
            if self._pending < self._every:
                return
            self._done += self._pending
            if self._bar is not None:
                self._bar.advance(self._task, self._pending)
            self._pending = 0
            if self._lines and time.perf_counter() - self._last_line >= LOG_EVERY_SECONDS:
                self._write_line()

    def shared(self, n_parts: int) -> "Progress":
        """A view of this bar for ``n_parts`` parts of the work that each make every step.

        Each part calls ``advance`` once per step, from any thread; the bar
        moves one step per ``n_parts`` calls.
        """
        return _SharedProgress(self, n_parts)

    def _write_line(self, final: bool = False) -> None:
        elapsed = time.perf_counter() - self._t0
        done = min(self._done, self.total) if self.total else self._done
        pct = f" ({100.0 * done / self.total:.0f}%)" if self.total else ""
        if final:
            timing = f" in {elapsed:.1f} s"
        else:
            left = self._time_left(done)
            timing = f" after {elapsed:.0f} s" + (f", about {left:.0f} s left" if left == left else "")
        post = f", {self._postfix}" if self._postfix else ""
        print(f"{self.description}: {done}/{self.total}{pct}{timing}{post}", file=sys.stderr, flush=True)
        self._last_line = time.perf_counter()

    def _time_left(self, done: int) -> float:
        """Seconds left at the rate of the steps after the first (NaN until a later one is done)."""
        if self._rate_start is None or not self.total:
            return float("nan")
        t_first, done_first = self._rate_start
        seconds, steps = time.perf_counter() - t_first, done - done_first
        return seconds * (self.total - done) / steps if steps > 0 and seconds > 0 else float("nan")

    def __exit__(self, *exc):
        if self._bar is not None:
            if self._pending:
                self._bar.advance(self._task, self._pending)
            self._bar.__exit__(*exc)
        elif self._lines:
            self._done += self._pending
            self._pending = 0
            self._write_line(final=True)
        return False


class _SharedProgress:
    """:meth:`Progress.shared`."""

    def __init__(self, bar: Progress, n_parts: int):
        self._bar, self._n, self._calls, self._lock = bar, max(1, int(n_parts)), 0, threading.Lock()

    def advance(self, n: int = 1) -> None:
        with self._lock:
            before = self._calls // self._n
            self._calls += n
            steps = self._calls // self._n - before
        if steps:
            self._bar.advance(steps)


def _is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # closed or replaced streams
        return False


# ----------------------------------------------------------------- Ctrl-C
class StopOnInterrupt:
    """A context that turns Ctrl-C into a clean stop of the outermost long computation.

    ``pm.sample``'s convention: a ``KeyboardInterrupt`` raised inside the
    block ends the block, :attr:`interrupted` becomes True, and the code
    after the block returns what it has so far (with a warning that says so).
    Only the outermost such block in a thread catches the interrupt; inner
    ones (an AIS evaluation inside :func:`pymc_rbm.training.fit`) let it
    through, so one Ctrl-C stops the whole call, not just its current part.

    Examples
    --------
    >>> with StopOnInterrupt() as guard:
    ...     pass  # the long loop
    >>> guard.interrupted
    False
    """

    _state = threading.local()

    def __init__(self):
        self.interrupted = False
        self._outermost = False

    def __enter__(self):
        depth = getattr(self._state, "depth", 0)
        self._outermost = depth == 0
        self._state.depth = depth + 1
        return self

    def __exit__(self, exc_type, exc, tb):
        self._state.depth -= 1
        if exc_type is not None and self._outermost and _is_interrupt(exc):
            self.interrupted = True
            return True
        return False


def _is_interrupt(exc: BaseException | None) -> bool:
    """A ``KeyboardInterrupt``, or an error it caused on its way out of compiled code.

    A Ctrl-C that lands while a Numba-compiled function hands its result back
    to Python surfaces as ``SystemError: ... returned a result with an
    exception set``, with the ``KeyboardInterrupt`` as its cause.
    """
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False

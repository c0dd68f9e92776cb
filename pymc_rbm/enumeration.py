"""Exact answers by enumeration of the smaller layer (below the estimators, which offer them as :mod:`pymc_rbm.estimators.exact`).

Summing the larger layer out analytically leaves a sum over the
``2**k`` states of the smaller layer (``k = min(n_visible, n_hidden)``):
``Z = Σ_h exp(hbias·h) Π_i (1 + exp(vbias_i + (W·h)_i))``. Everything here
enumerates that sum in bounded chunks, on several threads, and caches the
``2**k`` log weights of the last few models so that moments, draws and
``log Z`` of one model share one enumeration.

States are ordered lexicographically: in :func:`binary_states`, unit 0 is
the most significant bit of the state's index.
"""

from __future__ import annotations

import math
import os
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np
from scipy.special import expit, logsumexp

from pymc_rbm._runtime import Progress, default_threads, on_one_blas_thread
from pymc_rbm.energy import free_energy
from pymc_rbm.estimates import LogPartitionEstimate, Moments, fingerprint_of
from pymc_rbm.params import RBMParams, ReLURBMParams
from pymc_rbm.validation import check_positive_int

__all__ = [
    "MAX_ENUMERATION_BITS",
    "REPEATED_ENUMERATION_BITS",
    "MAX_ENUMERATION_SECONDS",
    "EnumerationTooLarge",
    "check_enumerable",
    "enumeration_cost",
    "binary_states",
    "states_at",
    "log_partition_exact",
    "moments_exact",
    "log_marginal_visible",
    "enumerated_log_weights",
    "sample_visible_exact",
    "ExactMoments",
]

#: Default largest smaller-layer size of a one-off enumeration (``2**24`` states; timings in docs/estimators.md).
MAX_ENUMERATION_BITS = 24

#: Default largest smaller-layer size where ``log Z`` is enumerated over and over: inside a PyMC model
#: (:class:`pymc_rbm.RBM`, at every logp and gradient evaluation and every forward draw) and for the
#: log-likelihood records of :func:`pymc_rbm.training.fit`. An enumeration of ``2**24`` states of a large
#: layer is too long to repeat at every step of a sampler, one of ``2**20`` sixteen times shorter. That is the
#: one reason the two defaults differ.
REPEATED_ENUMERATION_BITS = 20

#: Enumerations estimated to take longer than this (in seconds) are refused: at that size an
#: approximate estimator is the tool. Raise it (``pymc_rbm.enumeration.MAX_ENUMERATION_SECONDS``)
#: to enumerate anyway.
MAX_ENUMERATION_SECONDS = 3600.0

#: Enumerations estimated to take longer than this (in seconds) show their progress on stderr.
PROGRESS_SECONDS = 10.0

#: Unit-states per second per thread that the estimate of the time assumes: ``2**k`` states times the
#: size of the other layer (a conservative figure; the measurements are in docs/estimators.md).
ENUMERATION_RATE = 3e8

_APPROXIMATE_METHODS = "'ais', 'rts', 'sams', 'tap', 'bethe', 'mean_field' or 'mixture_mean_field'"
_BYTES_PER_STATE = 16  # the log weights and the probabilities of the moments, float64 each
_WORKSPACE_BYTES = 64 * 2**20  # per-thread blocks of activations


class EnumerationTooLarge(ValueError):
    """Raised when exact enumeration would need more states, memory or time than allowed."""


class EnumerationCost(NamedTuple):
    """What enumerating ``2**n_bits`` states is expected to cost (:func:`enumeration_cost`).

    Attributes
    ----------
    n_states : int
    bytes : int
        Memory the enumeration allocates (log weights, probabilities, workspace).
    available_bytes : int or None
        Memory the system reports as available (None where it cannot be read).
    seconds : float or None
        Estimated time (None when the size of the other layer is unknown).
    """

    n_states: int
    bytes: int
    available_bytes: int | None
    seconds: float | None


def _available_memory() -> int | None:
    """Bytes of memory available to a new allocation (``MemAvailable``), or None if unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def enumeration_cost(n_bits: int, n_other: int | None = None, n_threads: int | None = None) -> EnumerationCost:
    """Memory and estimated time of enumerating ``2**n_bits`` states against ``n_other`` units.

    Parameters
    ----------
    n_bits : int
        Size of the enumerated layer.
    n_other : int, optional
        Size of the layer summed out analytically; without it no time is estimated.
    n_threads : int, optional
        Threads of the enumeration (default: the cores, at most 8).

    Returns
    -------
    EnumerationCost
    """
    n_states = 2**n_bits
    threads = n_threads or default_threads()
    seconds = None
    if n_other is not None:
        try:  # 2**n_bits is beyond a float from 1024 bits on
            seconds = math.ldexp(n_other / (ENUMERATION_RATE * threads), n_bits)
        except OverflowError:
            seconds = math.inf
    return EnumerationCost(n_states, n_states * _BYTES_PER_STATE + _WORKSPACE_BYTES, _available_memory(), seconds)


def _approx(n) -> str:
    """``n`` to three significant digits, also an integer beyond the range of a float."""
    if isinstance(n, int) and n.bit_length() > 1000:
        exp10 = math.log10(n)
        return f"{10 ** (exp10 % 1):.3g}e+{math.floor(exp10)}"
    return f"{n:.3g}"


def _gib(n_bytes) -> str:
    big = isinstance(n_bytes, int) and n_bytes.bit_length() > 1000
    return f"{_approx(n_bytes >> 30 if big else n_bytes / 2**30)} GiB"


def check_enumerable(
    n_bits: int, max_bits: int | None, what: str = "the smaller layer", *, n_other: int | None = None
) -> EnumerationCost:
    """Refuse an enumeration that is too large, before anything is allocated.

    Parameters
    ----------
    n_bits : int
        Size of the enumerated layer.
    max_bits : int or None
        Largest size allowed (None: :data:`MAX_ENUMERATION_BITS`).
    what : str
        How the message calls the enumerated layer.
    n_other : int, optional
        Size of the other layer, for the estimate of the time.

    Returns
    -------
    EnumerationCost

    Raises
    ------
    EnumerationTooLarge
        When ``n_bits > max_bits``, when the enumeration needs more memory
        than the system has available, or when it is estimated to take
        longer than :data:`MAX_ENUMERATION_SECONDS`. The message says how
        large it is and which estimators to use instead.
    """
    max_bits = MAX_ENUMERATION_BITS if max_bits is None else max_bits
    instead = (
        f"use an approximate estimator instead, e.g. pymc_rbm.estimators.log_partition(params, "
        f"method=...) with method {_APPROXIMATE_METHODS}"
    )
    if n_bits > max_bits:
        raise EnumerationTooLarge(
            f"exact enumeration of {what} needs 2**{n_bits} = {_approx(2**n_bits)} states, more than the "
            f"limit of 2**{max_bits} (raise max_bits if you have the time and memory); {instead}"
        )
    cost = enumeration_cost(n_bits, n_other)
    if cost.available_bytes is not None and cost.bytes > cost.available_bytes:
        raise EnumerationTooLarge(
            f"exact enumeration of {what} (2**{n_bits} = {_approx(2**n_bits)} states) needs about "
            f"{_gib(cost.bytes)} of memory, but only {_gib(cost.available_bytes)} are available; {instead}"
        )
    if cost.seconds is not None and cost.seconds > MAX_ENUMERATION_SECONDS:
        raise EnumerationTooLarge(
            f"exact enumeration of {what} (2**{n_bits} = {_approx(2**n_bits)} states, each summed over "
            f"{n_other} units) is estimated to take {cost.seconds:.3g} s, more than "
            f"MAX_ENUMERATION_SECONDS = {MAX_ENUMERATION_SECONDS:g} s; {instead}"
        )
    return cost


def binary_states(n: int, start: int = 0, stop: int | None = None, dtype=np.float64) -> np.ndarray:
    """The binary states ``start .. stop-1`` of ``n`` units, in lexicographic order.

    Parameters
    ----------
    n : int
        Number of units.
    start, stop : int, optional
        Range of state indices; ``stop`` defaults to ``2**n``.
    dtype : numpy dtype, default float64

    Returns
    -------
    ndarray of shape (stop - start, n)
        Row ``r`` is state ``start + r``; unit 0 is the most significant bit.
    """
    stop = 2**n if stop is None else stop
    return states_at(np.arange(start, stop, dtype=np.int64), n, dtype=dtype)


def states_at(idx: np.ndarray, n: int, dtype=np.float64) -> np.ndarray:
    """The binary states of ``n`` units with the given indices.

    Parameters
    ----------
    idx : array of int of shape (m,)
    n : int
    dtype : numpy dtype, default float64

    Returns
    -------
    ndarray of shape (m, n)
        Unit 0 is the most significant bit, as in :func:`binary_states`.
    """
    shifts = np.arange(n - 1, -1, -1, dtype=np.int64)
    return ((np.asarray(idx, dtype=np.int64)[:, None] >> shifts) & 1).astype(dtype)


def _softplus_column_sums(a: np.ndarray, column_sums: np.ndarray) -> np.ndarray:
    """``softplus(a).sum(0)`` for a 2-D block of shape (units, states), overwriting ``a``.

    Uses ``softplus(x) = (x + |x|) / 2 + log(1 + exp(-|x|))``. ``column_sums``
    is ``a.sum(0)``, which callers know cheaply. The factors
    ``1 + exp(-|x|)`` lie in (1, 2]: rows are multiplied pairwise, in place,
    while a product holds at most 512 factors (so it cannot overflow), and
    only the few rows left go through the logarithm.
    """
    np.abs(a, out=a)
    total = a.sum(axis=0)
    total += column_sums
    total *= 0.5
    np.negative(a, out=a)
    np.exp(a, out=a)
    a += 1.0
    m, factors = a.shape[0], 1
    while m > 1 and factors <= 256:
        half = m // 2
        a[:half] *= a[m - half : m]
        m, factors = m - half, 2 * factors
    total += np.log(a[:m]).sum(axis=0)
    return total


class _Oriented(NamedTuple):
    """The model turned so that its hidden layer is the layer to enumerate."""

    params: RBMParams
    transposed: bool


def _orient(params: RBMParams) -> _Oriented:
    if params.n_hidden <= params.n_visible:
        return _Oriented(params, False)
    return _Oriented(params.transpose(), True)


def _enumerated_log_weights(params: RBMParams, n_threads: int, progress: bool = False) -> np.ndarray:
    """``log w(h) = hbias·h + Σ_i softplus(vbias_i + (W·h)_i)`` for every hidden state.

    The hidden units are split into high bits (an outer loop, spread over
    threads) and low bits (a block whose visible activations are computed
    once); each outer step adds one activation vector to that block. With
    ``progress`` the outer steps are shown on stderr. Ctrl-C stops every
    thread at its next outer step.
    """
    W, vbias, hbias = params.W, params.vbias, params.hbias
    n_big, k = W.shape
    # low block: about 2**18 activations (2 MiB), the size that ran fastest (docs/estimators.md)
    n_low = min(k, max(0, int(np.log2(max(1, 2**18 // n_big)))))
    n_high = k - n_low
    low_states = binary_states(n_low)
    a_low = vbias[:, None] + W[:, n_high:] @ low_states.T  # (n_big, 2**n_low)
    c_low = low_states @ hbias[n_high:]
    sum_low = a_low.sum(axis=0)
    W_high = np.ascontiguousarray(W[:, :n_high])
    out = np.empty(2**k)
    n_outer = 2**n_high
    stop = threading.Event()
    bar = Progress(n_outer, f"exact enumeration (2**{k} states x {n_big} units)", progress)

    def work(hi_range):
        buf = np.empty_like(a_low)
        for hi, hi_state in zip(range(*hi_range), binary_states(n_high, *hi_range)):
            if stop.is_set():
                return
            u = W_high @ hi_state  # one product per outer step, whatever the split: the same bits on any threads
            np.add(a_low, u[:, None], out=buf)
            block = out[hi << n_low : (hi + 1) << n_low]
            block[:] = _softplus_column_sums(buf, sum_low + u.sum())
            block += c_low + hi_state @ hbias[:n_high]
            bar.advance()

    n_jobs = min(n_threads, n_outer)
    bounds = np.linspace(0, n_outer, n_jobs + 1).astype(int)
    ranges = [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
    with bar:
        if len(ranges) == 1:
            work(ranges[0])
        else:
            pool = ThreadPoolExecutor(len(ranges))
            try:
                list(pool.map(work, ranges))
            except BaseException:  # Ctrl-C: the threads stop at their next outer step
                stop.set()
                raise
            finally:
                pool.shutdown(wait=True)
    return out


class _Enumeration(NamedTuple):
    oriented: _Oriented
    log_weights: np.ndarray  # (2**k,) unnormalised log probabilities of the enumerated layer
    log_z: float


_CACHE: OrderedDict[str, _Enumeration] = OrderedDict()
_CACHE_SIZE = 4
_CACHE_BYTES = 2**28  # older entries are dropped beyond this many bytes of log weights (the newest stays)


def _cache_bytes() -> int:
    return sum(e.log_weights.nbytes for e in _CACHE.values())


def _n_enumerated(params) -> int:
    """Size of the layer :func:`_enumerate` enumerates: the smaller one, the visible one for ReLU hidden units."""
    if isinstance(params, ReLURBMParams):
        return params.n_visible
    return min(params.n_visible, params.n_hidden)


def _visible_log_weights(params: ReLURBMParams, chunk: int = 2**14) -> np.ndarray:
    """``-F(v)`` of every visible state (binary visible units, any hidden layer summed out), in chunks."""
    n = params.n_visible
    out = np.empty(2**n)
    for start in range(0, out.size, chunk):
        stop = min(start + chunk, out.size)
        out[start:stop] = -free_energy(binary_states(n, start, stop), params)
    return out


def _enumerate(params: RBMParams, *, max_bits: int | None = None, n_threads: int | None = None) -> _Enumeration:
    """Enumerate the smaller layer of ``params`` (cached for the last few models).

    A :class:`~pymc_rbm.params.ReLURBMParams` has continuous hidden units: its
    visible layer is enumerated, whatever the sizes (``transposed`` True).
    """
    if not isinstance(params, (RBMParams, ReLURBMParams)):
        raise TypeError(f"params must be an RBMParams, got {type(params).__name__}")
    key = params.fingerprint()
    hit = _CACHE.get(key)
    if hit is not None and _n_enumerated(params) <= (MAX_ENUMERATION_BITS if max_bits is None else max_bits):
        _CACHE.move_to_end(key)
        return hit
    n_threads = n_threads or default_threads()
    if isinstance(params, ReLURBMParams):
        check_enumerable(params.n_visible, max_bits, "the visible layer", n_other=params.n_hidden)
        oriented = _Oriented(params.astype(np.float64), True)
        logw = _visible_log_weights(oriented.params)
    else:
        cost = check_enumerable(
            min(params.n_visible, params.n_hidden), max_bits, n_other=max(params.n_visible, params.n_hidden)
        )
        oriented = _orient(params.astype(np.float64))
        long = cost.seconds is not None and cost.seconds * default_threads() / n_threads > PROGRESS_SECONDS
        logw = _enumerated_log_weights(oriented.params, n_threads, progress=long)
    logw.setflags(write=False)
    result = _Enumeration(oriented, logw, float(logsumexp(logw)))
    _CACHE[key] = result
    while len(_CACHE) > _CACHE_SIZE or (len(_CACHE) > 1 and _cache_bytes() > _CACHE_BYTES):
        _CACHE.popitem(last=False)
    return result


@on_one_blas_thread
def log_partition_exact(
    params: RBMParams, *, max_bits: int | None = None, n_threads: int | None = None
) -> LogPartitionEstimate:
    """Exact ``log Z`` by enumerating the smaller layer.

    Parameters
    ----------
    params : RBMParams or ReLURBMParams
        For ReLU hidden units (continuous) the visible layer is enumerated,
        ``log Z = logsumexp_v -F(v)``, whatever the layer sizes.
    max_bits : int, optional
        Largest smaller layer to enumerate (default :data:`MAX_ENUMERATION_BITS`).
    n_threads : int, optional
        Threads for the enumeration (default: the number of cores, at most 8).

    Returns
    -------
    LogPartitionEstimate
        ``log_z`` exact to rounding, ``stderr`` 0, and the number of
        enumerated states in ``diagnostics["n_states"]``.

    Raises
    ------
    EnumerationTooLarge
        When the smaller layer has more than ``max_bits`` units, or the
        enumeration needs more memory than is available or more time than
        :data:`MAX_ENUMERATION_SECONDS` (checked before anything is
        allocated; :func:`check_enumerable`).

    Notes
    -----
    Enumerations estimated to take more than ten seconds show their
    progress on stderr (a bar on a terminal, log lines otherwise); Ctrl-C
    stops them.

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm import RBMParams
    >>> from pymc_rbm.estimators import log_partition_exact
    >>> p = RBMParams(np.zeros((3, 2)), np.zeros(3), np.zeros(2))
    >>> round(log_partition_exact(p).log_z / np.log(2), 12)  # 2**5 equally likely states
    5.0
    """
    e = _enumerate(params, max_bits=max_bits, n_threads=n_threads)
    k = _n_enumerated(params)
    return LogPartitionEstimate(
        fingerprint=fingerprint_of(params),
        log_z=e.log_z,
        method="exact",
        kind="exact",
        diagnostics={"n_states": 2**k, "enumerated_layer": "visible" if e.oriented.transposed else "hidden"},
    )


class ExactMoments(Moments):
    """:class:`~pymc_rbm.estimators.Moments` computed exactly, by enumerating the smaller layer.

    The attributes ``v``, ``h`` and ``vh`` (shapes ``(n_visible,)``,
    ``(n_hidden,)``, ``(n_visible, n_hidden)``) are those of ``Moments``.
    """

    __slots__ = ()


@on_one_blas_thread
def moments_exact(
    params: RBMParams, *, max_bits: int | None = None, n_threads: int | None = None, chunk_size: int = 4096
) -> ExactMoments:
    """Exact ``⟨v⟩``, ``⟨h⟩`` and ``⟨v hᵀ⟩`` by enumerating the smaller layer.

    These are the gradient of ``log Z`` with respect to ``vbias``, ``hbias``
    and ``W``.

    Parameters
    ----------
    params : RBMParams or ReLURBMParams
        For ReLU hidden units the visible layer is enumerated.
    max_bits, n_threads : int, optional
        As in :func:`log_partition_exact`.
    chunk_size : int, default 4096
        Enumerated states per block (bounds the memory).

    Returns
    -------
    ExactMoments
    """
    e = _enumerate(params, max_bits=max_bits, n_threads=n_threads)
    p = e.oriented.params
    prob = np.exp(e.log_weights - e.log_z)
    if isinstance(params, ReLURBMParams):  # the visible layer enumerated; E[h | v] from the hidden layer's mean
        m_v, m_h, m_vh = np.zeros(p.n_visible), np.zeros(p.n_hidden), np.zeros((p.n_visible, p.n_hidden))
        for start in range(0, prob.size, chunk_size):
            stop = min(start + chunk_size, prob.size)
            pr, states = prob[start:stop], binary_states(p.n_visible, start, stop)
            weighted = p.hidden.mean(p.hbias + states @ p.W) * pr[:, None]
            m_v += pr @ states
            m_h += weighted.sum(axis=0)
            m_vh += states.T @ weighted
        return ExactMoments(v=m_v, h=m_h, vh=m_vh)
    k = p.n_hidden
    m_small = np.zeros(k)
    m_big = np.zeros(p.n_visible)
    m_mixed = np.zeros((p.n_visible, k))
    for start in range(0, 2**k, chunk_size):
        stop = min(start + chunk_size, 2**k)
        pr = prob[start:stop]
        if not pr.any():
            continue
        states = binary_states(k, start, stop)
        weighted = expit(p.vbias + states @ p.W.T) * pr[:, None]
        m_small += pr @ states
        m_big += weighted.sum(axis=0)
        m_mixed += weighted.T @ states
    if e.oriented.transposed:
        return ExactMoments(v=m_small, h=m_big, vh=m_mixed.T.copy())
    return ExactMoments(v=m_big, h=m_small, vh=m_mixed)


@on_one_blas_thread
def log_marginal_visible(params: RBMParams, *, max_bits: int = 24) -> np.ndarray:
    """``log p(v)`` of every visible state, for small visible layers.

    Parameters
    ----------
    params : RBMParams
    max_bits : int, default 24
        Largest visible layer enumerated.

    Returns
    -------
    ndarray of shape (2**n_visible,)
        Entry ``r`` belongs to ``binary_states(n_visible)[r]``.
    """
    check_enumerable(params.n_visible, max_bits, "the visible layer", n_other=params.n_hidden)
    log_z = _enumerate(params, max_bits=max_bits).log_z  # min(n_visible, n_hidden) <= n_visible <= max_bits
    out = np.empty(2**params.n_visible)
    chunk = 2**16
    for start in range(0, out.size, chunk):
        stop = min(start + chunk, out.size)
        out[start:stop] = -free_energy(binary_states(params.n_visible, start, stop), params) - log_z
    return out


@on_one_blas_thread
def enumerated_log_weights(
    params: RBMParams, *, max_bits: int | None = None, n_threads: int | None = None
) -> tuple[np.ndarray, float, str]:
    """The unnormalised log probabilities of every state of the smaller layer, and ``log Z``.

    The enumeration behind :func:`log_partition_exact` and
    :func:`sample_visible_exact`, shared through the same cache.

    Parameters
    ----------
    params : RBMParams
    max_bits, n_threads : int, optional
        As in :func:`log_partition_exact`.

    Returns
    -------
    log_weights : ndarray of float64 of shape (2**k,), read-only
        ``log w(s)`` of state ``s`` of the smaller layer (``k`` units, states
        ordered as in :func:`binary_states`), the larger layer summed out;
        its marginal is ``exp(log_weights - log_z)``.
    log_z : float
    layer : {"hidden", "visible"}
        Which layer was enumerated (the hidden one when the layers are equal).
    """
    e = _enumerate(params, max_bits=max_bits, n_threads=n_threads)
    return e.log_weights, e.log_z, "visible" if e.oriented.transposed else "hidden"


@on_one_blas_thread
def sample_visible_exact(params: RBMParams, size=None, *, rng=None, max_bits: int | None = None) -> np.ndarray:
    """Independent exact draws of the visible layer (stochastic).

    The smaller layer is drawn from its enumerated marginal; when that is
    the hidden layer, ``v`` is then drawn from ``p(v | h)``. The visible layer of a
    :class:`~pymc_rbm.params.ReLURBMParams` is drawn from its enumerated marginal.

    Parameters
    ----------
    params : RBMParams or ReLURBMParams
    size : int or tuple of int, optional
        Batch shape of the draws.
    rng : numpy.random.Generator or seed, optional
    max_bits : int, optional
        As in :func:`log_partition_exact`.

    Returns
    -------
    ndarray of int64 of shape ``(*size, n_visible)``
    """
    rng = np.random.default_rng(rng)
    e = _enumerate(params, max_bits=max_bits)
    size = () if size is None else (size,) if np.ndim(size) == 0 else tuple(size)
    size = tuple(check_positive_int(n, "size", minimum=0) for n in size)
    n = int(np.prod(size))
    cdf = np.cumsum(np.exp(e.log_weights - e.log_z))
    idx = np.minimum(np.searchsorted(cdf, rng.random(n) * cdf[-1], side="right"), cdf.size - 1)
    p = e.oriented.params
    if e.oriented.transposed:
        v = states_at(idx, params.n_visible)
    else:
        states = states_at(idx, p.n_hidden)
        mean = expit(p.vbias + states @ p.W.T)
        v = (rng.random(mean.shape) < mean).astype(np.float64)
    return v.astype(np.int64).reshape(*size, params.n_visible)


"""Independence proposals from an RBM's exact marginal, accepted under per-unit evidence, in one compiled call.

Where one layer of an RBM can be enumerated, its exact marginal is a table
of ``2**k`` probabilities, kept as an alias table (Walker 1977, in Vose's
1991 construction) so that an exact draw of ``v`` costs one uniform and two
lookups (the visible layer enumerated), or that and a draw from ``p(v | h)``
(the hidden layer enumerated). For a target that tilts the RBM
by per-unit evidence,

    π_k(v) ∝ p_RBM(v) exp(δ_k · v)        (row k of a batch, δ_k given),

such a draw ``v'`` is an independence proposal (Tierney 1994) whose
Metropolis-Hastings ratio is ``π_k(v') p_RBM(v) / (π_k(v) p_RBM(v')) =
exp(δ_k · (v' - v))``: a try costs the draw and the evidence of the units
that differ. :func:`independence_tries` makes ``n_tries`` such tries on every
row in one compiled loop; each try leaves every ``π_k`` invariant, so any
number of them does. Units whose evidence is infinite in effect (stand-ins
such as ``±1e300`` for ruled-out values) only enter the ratio where the two
states differ, so they never swamp it: a proposal that changes a ruled-out
unit is rejected.

The uniforms are Philox4x32-10's (:func:`~pymc_rbm.kernels.philox.philox_uniforms`)
under one key drawn from the caller's generator per call, row ``k`` taking
counter row ``k``: the draws depend on the seed only.

**Any per-row likelihood.** Where row ``k``'s target is ``p_RBM(v) L_k(v)``
with ``L_k`` any function of the row (a readout ``v·B`` that reads the
units together, a logistic regression on them), the ratio of a try is
``L_k(v') / L_k(v)``, which the caller evaluates. The tries do not depend on
the state they start from, so all of them are drawn first
(:func:`table_proposals`), ``log L_k`` is evaluated at all of them in one
vectorised call, and the Metropolis-Hastings decisions are then a scan of
the precomputed values (:func:`independence_scan`): the tries of
:func:`row_independence_tries` are those of an independence sampler run try
after try, each leaving every ``p_RBM(v) L_k(v)`` invariant, at the cost of one
evaluation of the likelihood for all rows and tries (in chunks that bound
the memory).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from pymc_rbm.kernels.philox import philox_uniforms

__all__ = ["EnumeratedLayer", "exact_draws", "independence_scan", "independence_tries", "row_independence_tries",
           "table_proposals"]

#: Most entries (tries x rows x units) of one stack of proposals evaluated by :func:`row_independence_tries`
#: (2 MiB of int64): more tries are drawn and decided chunk after chunk, in one buffer. Larger stacks cost more
#: per entry, not less: on two cores, the likelihood ``v @ B`` of 16 units took 14 ms for 55 000 int64 rows in
#: one call and 1 ms in chunks of 16 000.
MAX_STACK_ENTRIES = 2**18


@dataclass(frozen=True)
class EnumeratedLayer:
    """The exact marginal of one enumerated layer of an RBM, ready for draws.

    Attributes
    ----------
    prob, alias : ndarray of shape (2**k,), float64 and int64
        The alias table of the layer's marginal: a uniform ``u`` picks
        ``j = floor(u 2**k)``, then state ``j`` if ``u 2**k - j < prob[j]``,
        else ``alias[j]``. States are in :func:`~pymc_rbm.estimators.binary_states`
        order (unit 0 the most significant bit).
    layer : {"visible", "hidden"}
        Which layer the table enumerates.
    W_T : ndarray of float64 of shape (n_hidden, n_visible)
        The transposed weights (read for ``p(v | h)`` when the hidden layer is enumerated).
    vbias : ndarray of float64 of shape (n_visible,)
    """

    prob: np.ndarray
    alias: np.ndarray
    layer: str
    W_T: np.ndarray
    vbias: np.ndarray

    @classmethod
    def from_log_weights(cls, log_weights: np.ndarray, layer: str, W: np.ndarray, vbias: np.ndarray):
        """The table of ``exp(log_weights - max)`` (any normalisation), for ``layer`` of an RBM with ``W``, ``vbias``."""
        if layer not in ("visible", "hidden"):
            raise ValueError(f"layer must be 'visible' or 'hidden', not {layer!r}")
        weights = np.exp(np.asarray(log_weights, dtype=np.float64) - np.max(log_weights))
        if weights.size & (weights.size - 1) or not np.isfinite(weights).all():
            raise ValueError("log_weights must hold 2**k finite values")
        prob, alias = _alias_table(weights / weights.sum())
        return cls(prob, alias, layer, np.ascontiguousarray(np.asarray(W, dtype=np.float64).T),
                   np.ascontiguousarray(vbias, dtype=np.float64))

    @property
    def n_bits(self) -> int:
        """Number of units of the enumerated layer."""
        return int(self.prob.size).bit_length() - 1


def independence_tries(rng: np.random.Generator, v: np.ndarray, evidence: np.ndarray, table: EnumeratedLayer,
                       n_tries: int, *, h: np.ndarray | None = None, W: np.ndarray | None = None,
                       hbias: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``n_tries`` independence Metropolis-Hastings tries on every row of ``v``, in place (stochastic).

    Row ``k`` targets ``p_RBM(v) exp(δ_k · v)`` (module docstring): each try
    draws ``v' ~ p_RBM`` exactly from ``table`` and takes it with probability
    ``min(1, exp(δ_k · (v' - v_k)))``. With ``h``, every row that took a try
    then draws its hidden units afresh from ``p(h | v)`` (a Gibbs update of
    ``h``, which leaves the joint ``p_RBM(v, h) exp(δ_k · v)`` invariant), so
    ``(v, h)`` stays a state of the joint chain.

    Parameters
    ----------
    rng : numpy.random.Generator
        Gives the call's Philox key (one draw of four 32-bit words).
    v : ndarray of float64 of shape (n_rows, n_visible)
        Binary states, C-contiguous; changed in place.
    evidence : ndarray of float64 of shape (n_rows, n_visible)
        ``δ``: each row's per-unit log-likelihood ratio ``log L(1) - log L(0)``.
    table : EnumeratedLayer
        The RBM's exact marginal of one layer.
    n_tries : int
        Tries per row (0 leaves ``v`` as it is).
    h : ndarray of float64 of shape (n_rows, n_hidden), optional
        The rows' hidden states, C-contiguous; redrawn in place where a try was taken.
    W, hbias : ndarray of float64, optional
        The weights (n_visible, n_hidden) and hidden biases, with ``h``.

    Returns
    -------
    accepted : ndarray of int64 of shape (n_rows,)
        The number of accepted tries of each row.
    accept_sum : ndarray of float64 of shape (n_rows,)
        The sum of each row's acceptance probabilities ``min(1, exp(δ_k · (v' - v_k)))``.
    """
    if v.dtype != np.float64 or not v.flags.c_contiguous or v.ndim != 2:
        raise TypeError("v must be a C-contiguous 2-D float64 array")
    if v.shape[1] != table.vbias.size:
        raise ValueError(f"v has {v.shape[1]} units, the table's RBM {table.vbias.size} visible units")
    if evidence.shape != v.shape or evidence.dtype != np.float64 or not evidence.flags.c_contiguous:
        evidence = np.ascontiguousarray(np.broadcast_to(evidence, v.shape), dtype=np.float64)
    refresh = h is not None
    if refresh and (h.dtype != np.float64 or not h.flags.c_contiguous or h.shape != (v.shape[0], W.shape[1])):
        raise TypeError("h must be a C-contiguous float64 array of shape (n_rows, n_hidden)")
    accepted, accept_sum = np.zeros(v.shape[0], dtype=np.int64), np.zeros(v.shape[0])
    if n_tries <= 0 or v.shape[0] == 0:
        return accepted, accept_sum
    key = _philox_key(rng)
    if table.layer == "visible":
        _visible_tries(key, int(n_tries), v, evidence, table.prob, table.alias, table.n_bits, accepted, accept_sum)
    else:
        _hidden_tries(key, int(n_tries), v, evidence, table.prob, table.alias, table.n_bits, table.W_T, table.vbias,
                      accepted, accept_sum)
    if refresh:
        _refresh_hidden(key, v, h, W, hbias, accepted)
    return accepted, accept_sum


def _philox_key(rng: np.random.Generator) -> np.ndarray:
    """Four 32-bit words (as uint64) of the caller's generator: two raw 64-bit draws, a tenth of the cost of
    ``rng.integers`` (which matters on small models, where a draw costs tens of microseconds)."""
    raw = rng.bit_generator.random_raw(2)
    return np.array([raw[0] & 0xFFFFFFFF, raw[0] >> 32, raw[1] & 0xFFFFFFFF, raw[1] >> 32], dtype=np.uint64)


def _alias_table(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vose's alias table of the probabilities ``p`` (summing to 1): ``(prob, alias)``."""
    prob, alias = np.ones(p.size), np.arange(p.size, dtype=np.int64)
    _fill_alias(p * p.size, prob, alias)
    return prob, alias


@njit(cache=True, nogil=True)
def _fill_alias(scaled, prob, alias):  # pragma: no cover - compiled
    """Vose's construction: each entry below 1 takes its alias from one above 1, which gives up the difference.
    Entries left over (rounding) keep probability 1. ``stack`` holds the entries below 1 from its start and
    those at or above 1 from its end."""
    n = scaled.shape[0]
    stack = np.empty(n, np.int64)
    n_small, n_large = 0, 0
    for i in range(n):
        n_small, n_large = _push(stack, n_small, n_large, i, scaled[i] < 1.0)
    while n_small and n_large:
        n_small -= 1
        n_large -= 1
        s, g = stack[n_small], stack[n - 1 - n_large]
        prob[s], alias[s] = scaled[s], g
        scaled[g] -= 1.0 - scaled[s]
        n_small, n_large = _push(stack, n_small, n_large, g, scaled[g] < 1.0)


@njit(cache=True, nogil=True, inline="always")
def _push(stack, n_small, n_large, i, small):  # pragma: no cover - compiled
    if small:
        stack[n_small] = i
        return n_small + 1, n_large
    stack[stack.shape[0] - 1 - n_large] = i
    return n_small, n_large + 1


def exact_draws(rng: np.random.Generator, table: EnumeratedLayer, n_rows: int, W: np.ndarray,
                hbias: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``n_rows`` independent exact draws ``(v, h) ~ p_RBM`` (stochastic).

    One try of :func:`independence_tries` under no evidence: its ratio is 1,
    so every row takes its draw ``v ~ p_RBM(v)`` from ``table``, and then
    ``h ~ p(h | v)``.

    Parameters
    ----------
    rng : numpy.random.Generator
    table : EnumeratedLayer
    n_rows : int
    W : ndarray of float64 of shape (n_visible, n_hidden)
    hbias : ndarray of float64 of shape (n_hidden,)

    Returns
    -------
    v : ndarray of float64 of shape (n_rows, n_visible)
    h : ndarray of float64 of shape (n_rows, n_hidden)
    """
    v, h = np.zeros((n_rows, table.vbias.size)), np.zeros((n_rows, W.shape[1]))
    independence_tries(rng, v, np.zeros_like(v), table, 1, h=h, W=W, hbias=hbias)
    return v, h


@njit(cache=True, nogil=True, inline="always")
def _state_index(prob, alias, u):  # pragma: no cover - compiled
    """The state drawn by the uniform ``u`` from the alias table."""
    x = u * prob.shape[0]
    j = min(np.int64(x), prob.shape[0] - 1)
    return j if x - j < prob[j] else alias[j]


@njit(cache=True, nogil=True, inline="always")
def _accept(log_ratio, u, k, accepted, accept_sum):  # pragma: no cover - compiled
    """``u < min(1, exp(log_ratio))``, counted for row ``k``."""
    p = 1.0 if log_ratio >= 0.0 else np.exp(log_ratio)
    accept_sum[k] += p
    if u < p:
        accepted[k] += 1
        return True
    return False


@njit(cache=True, nogil=True)
def _visible_tries(key, n_tries, v, evidence, prob, alias, n_bits, accepted, accept_sum):  # pragma: no cover - compiled
    n_rows, n = v.shape
    u = np.empty(2 * n_tries)
    for k in range(n_rows):
        philox_uniforms(key, k, 0, u)
        x, ev = v[k], evidence[k]
        for t in range(n_tries):
            idx = _state_index(prob, alias, u[2 * t])
            log_ratio = 0.0
            for i in range(n):  # 0 · ev where nothing changes: a ±1e300 stand-in enters only where it differs
                log_ratio += (((idx >> (n_bits - 1 - i)) & 1) - x[i]) * ev[i]
            if _accept(log_ratio, u[2 * t + 1], k, accepted, accept_sum):
                for i in range(n):
                    x[i] = (idx >> (n_bits - 1 - i)) & 1


@njit(cache=True, nogil=True)
def _hidden_tries(key, n_tries, v, evidence, prob, alias, n_bits, W_T, vbias, accepted, accept_sum):  # pragma: no cover - compiled
    n_rows, n = v.shape
    u = np.empty(2 * n_tries)
    u_v = np.empty(n + (n & 1))
    a = np.empty(n)
    proposal = np.empty(n)
    for k in range(n_rows):
        philox_uniforms(key, k, 0, u)
        x, ev = v[k], evidence[k]
        for t in range(n_tries):
            idx = _state_index(prob, alias, u[2 * t])
            a[:] = vbias
            for j in range(n_bits):
                if (idx >> (n_bits - 1 - j)) & 1:
                    a += W_T[j]
            philox_uniforms(key, k, 1 + t, u_v)
            log_ratio = 0.0
            for i in range(n):
                new = 1.0 if u_v[i] * (1.0 + np.exp(-a[i])) < 1.0 else 0.0  # u < sigmoid(a)
                proposal[i] = new
                if new != x[i]:
                    log_ratio += ev[i] if new else -ev[i]
            if _accept(log_ratio, u[2 * t + 1], k, accepted, accept_sum):
                x[:] = proposal


#: The Philox stream of the hidden refresh (the tries use streams ``0 .. n_tries``).
_REFRESH_STREAM = 0x7FFFFFFF


@njit(cache=True, nogil=True)
def _refresh_hidden(key, v, h, W, hbias, accepted):  # pragma: no cover - compiled
    """``h_k ~ p(h | v_k)`` for every row ``k`` that took a try."""
    n_hidden = h.shape[1]
    u = np.empty(n_hidden + (n_hidden & 1))
    a = np.empty(n_hidden)
    for k in range(v.shape[0]):
        if accepted[k] == 0:
            continue
        a[:] = hbias
        for i in range(v.shape[1]):
            if v[k, i] != 0.0:
                a += W[i]
        philox_uniforms(key, k, _REFRESH_STREAM, u)
        for j in range(n_hidden):
            h[k, j] = 1.0 if u[j] * (1.0 + np.exp(-a[j])) < 1.0 else 0.0  # u < sigmoid(a)


# ----------------------------------------------------------------------------- any per-row likelihood
def table_proposals(rng: np.random.Generator, table: EnumeratedLayer, n_tries: int, n_rows: int,
                    dtype=np.float64, out: np.ndarray | None = None) -> np.ndarray:
    """``n_tries`` independent exact draws ``v ~ p_RBM`` for each of ``n_rows`` rows (stochastic).

    Parameters
    ----------
    rng : numpy.random.Generator
        Gives the call's Philox key.
    table : EnumeratedLayer
    n_tries, n_rows : int
    dtype : numpy dtype, default float64
        The dtype of the states returned (the variable's, so that they go to the likelihood as they are).
    out : ndarray of shape (n_tries, n_rows, n_visible), optional
        C-contiguous, of ``dtype``: filled and returned (no allocation).

    Returns
    -------
    ndarray of shape (n_tries, n_rows, n_visible)
        Binary states; entry ``[t, k]`` is row ``k``'s ``t``-th draw.
    """
    shape = (int(n_tries), int(n_rows), table.vbias.size)
    if out is None:
        out = np.empty(shape, dtype=dtype)
    elif out.shape != shape or not out.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous array of shape {shape}")
    if out.size == 0:
        return out
    key = _philox_key(rng)
    if table.layer == "visible":
        _visible_proposals(key, table.prob, table.alias, table.n_bits, out)
    else:
        _hidden_proposals(key, table.prob, table.alias, table.n_bits, table.W_T, table.vbias, out)
    return out


@njit(cache=True, nogil=True)
def _visible_proposals(key, prob, alias, n_bits, out):  # pragma: no cover - compiled
    m, n_rows, n = out.shape
    u = np.empty(m + (m & 1))
    for k in range(n_rows):
        philox_uniforms(key, k, 0, u)
        for t in range(m):
            idx = _state_index(prob, alias, u[t])
            for i in range(n):
                out[t, k, i] = (idx >> (n_bits - 1 - i)) & 1


@njit(cache=True, nogil=True)
def _hidden_proposals(key, prob, alias, n_bits, W_T, vbias, out):  # pragma: no cover - compiled
    m, n_rows, n = out.shape
    u = np.empty(m + (m & 1))
    u_v = np.empty(n + (n & 1))
    a = np.empty(n)
    for k in range(n_rows):
        philox_uniforms(key, k, 0, u)
        for t in range(m):
            idx = _state_index(prob, alias, u[t])
            a[:] = vbias
            for j in range(n_bits):
                if (idx >> (n_bits - 1 - j)) & 1:
                    a += W_T[j]
            philox_uniforms(key, k, 1 + t, u_v)
            for i in range(n):
                out[t, k, i] = 1 if u_v[i] * (1.0 + np.exp(-a[i])) < 1.0 else 0  # u < sigmoid(a)


def independence_scan(rng: np.random.Generator, log_current: np.ndarray, log_proposed: np.ndarray,
                      accepted: np.ndarray, accept_sum: np.ndarray) -> np.ndarray:
    """The decisions of an independence sampler, try after try, from precomputed log-likelihood ratios (stochastic).

    Row ``k`` holds a state whose ``log L_k`` is ``log_current[k]``; try ``t``
    proposes a state (drawn from the prior the target tilts) whose value is
    ``log_proposed[t, k]`` and takes it with probability
    ``min(1, exp(log_proposed[t, k] - log_current[k]))``, the value of the
    current state becoming that of the proposal when taken. A current value
    of ``-inf`` (a state ``L`` rules out) takes any proposal; a NaN value is
    never taken.

    Parameters
    ----------
    rng : numpy.random.Generator
        Gives the call's Philox key (row ``k`` takes counter row ``k``).
    log_current : ndarray of float64 of shape (n_rows,)
        Changed in place: the value of each row's state after the scan.
    log_proposed : ndarray of float64 of shape (n_tries, n_rows)
    accepted : ndarray of int64 of shape (n_rows,)
        1 is added for each taken try.
    accept_sum : ndarray of float64 of shape (n_rows,)
        Each try's acceptance probability is added.

    Returns
    -------
    ndarray of int64 of shape (n_rows,)
        The last try each row took, -1 where it took none.
    """
    choice = np.full(log_current.shape[0], -1, dtype=np.int64)
    if log_proposed.size:
        _scan_tries(_philox_key(rng), log_current, np.ascontiguousarray(log_proposed, dtype=np.float64), choice,
                    accepted, accept_sum)
    return choice


@njit(cache=True, nogil=True)
def _scan_tries(key, log_current, log_proposed, choice, accepted, accept_sum):  # pragma: no cover - compiled
    m, n_rows = log_proposed.shape
    u = np.empty(m + (m & 1))
    for k in range(n_rows):
        philox_uniforms(key, k, 0, u)
        current = log_current[k]
        for t in range(m):
            new = log_proposed[t, k]
            log_ratio = np.inf if current == -np.inf else new - current
            if log_ratio != log_ratio:  # NaN: never taken
                log_ratio = -np.inf
            if _accept(log_ratio, u[t], k, accepted, accept_sum):
                current = new
                choice[k] = t
        log_current[k] = current


def row_independence_tries(rng: np.random.Generator, v: np.ndarray, table: EnumeratedLayer, n_tries: int,
                           row_log_likelihood, *, dtype=np.float64, h: np.ndarray | None = None,
                           W: np.ndarray | None = None, hbias: np.ndarray | None = None,
                           max_entries: int = MAX_STACK_ENTRIES) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``n_tries`` independence Metropolis-Hastings tries on every row of ``v`` for targets ``p_RBM(v) L_k(v)``,
    in place (stochastic; module docstring).

    Parameters
    ----------
    rng : numpy.random.Generator
    v : ndarray of float64 of shape (n_rows, n_visible)
        Binary states, C-contiguous; changed in place.
    table : EnumeratedLayer
        The RBM's exact marginal of one layer.
    n_tries : int
        Tries per row.
    row_log_likelihood : callable
        ``states -> log L``: states of shape ``(m, n_rows, n_visible)`` in
        ``dtype`` to the values ``log L_k`` of every row of each, shape ``(m, n_rows)``.
    dtype : numpy dtype, default float64
        The dtype of the states given to ``row_log_likelihood``.
    h : ndarray of float64 of shape (n_rows, n_hidden), optional
        The rows' hidden states, C-contiguous; redrawn from ``p(h | v)`` in place where a try was taken.
    W, hbias : ndarray of float64, optional
        The weights and hidden biases, with ``h``.
    max_entries : int, optional
        Most entries of one stack of proposals (:data:`MAX_STACK_ENTRIES`).

    Returns
    -------
    log_likelihood : ndarray of float64 of shape (n_rows,)
        ``log L_k`` of every row's state after the tries.
    accepted : ndarray of int64 of shape (n_rows,)
    accept_sum : ndarray of float64 of shape (n_rows,)
    """
    if v.dtype != np.float64 or not v.flags.c_contiguous or v.ndim != 2:
        raise TypeError("v must be a C-contiguous 2-D float64 array")
    n_rows, n = v.shape
    if n != table.vbias.size:
        raise ValueError(f"v has {n} units, the table's RBM {table.vbias.size} visible units")
    accepted, accept_sum = np.zeros(n_rows, dtype=np.int64), np.zeros(n_rows)
    chunk = max(1, min(int(n_tries), int(max_entries) // max(n_rows * n, 1)))
    stack = np.empty((chunk + 1, n_rows, n), dtype=dtype)  # the current states, then a chunk of tries
    stack[0] = v
    m = min(chunk, int(n_tries))
    table_proposals(rng, table, m, n_rows, dtype, out=stack[1 : m + 1])
    values = np.asarray(row_log_likelihood(stack[: m + 1]), dtype=np.float64).reshape(m + 1, n_rows)
    log_current = values[0].copy()
    done = 0
    while True:
        choice = independence_scan(rng, log_current, values[-m:] if m else values[:0], accepted, accept_sum)
        rows = np.flatnonzero(choice >= 0)
        v[rows] = stack[1 + choice[rows], rows]
        done += m
        if done >= n_tries:
            break
        m = min(chunk, int(n_tries) - done)
        proposals = table_proposals(rng, table, m, n_rows, dtype, out=stack[1 : m + 1])
        values = np.asarray(row_log_likelihood(proposals), dtype=np.float64).reshape(m, n_rows)
    if h is not None and n_tries > 0:
        if h.dtype != np.float64 or not h.flags.c_contiguous or h.shape != (n_rows, W.shape[1]):
            raise TypeError("h must be a C-contiguous float64 array of shape (n_rows, n_hidden)")
        _refresh_hidden(_philox_key(rng), v, h, W, hbias, accepted)
    return log_current, accepted, accept_sum

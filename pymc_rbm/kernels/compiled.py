"""Several sweeps with carried activations in one compiled call: the fast path of the step methods.

Through ``pm.sample`` a draw of a small RBM costs far more in NumPy calls
(a dozen per layer update, each a few microseconds) than in arithmetic: at
100x50 the two matrix-vector products take about 3 µs, a NumPy sweep about
15 µs. :func:`carried_sweeps` runs ``n_sweeps`` sweeps of block Gibbs or of
the flip-the-state mixture ``α T + (1 - α) G`` in one Numba-compiled loop,
with the activations carried.

**Activations by the cheaper set of rows.** The states are 0/1, so
``bias + x·M`` is ``bias`` plus the rows of ``M`` of the units that are on,
and the carried activation of a new state is the old one plus or minus the
rows of the units that changed. Each update adds whichever set of rows is
smaller; no dense product is formed. Where most units change at every sweep
(weak weights) that is about half the work of the two dense matrix-vector
products; in a trained RBM at ``β = 1``, where few units change, it is a
small fraction. Every :data:`~pymc_rbm.kernels.activations.FULL_EVERY`
incremental updates the activations are summed afresh, so rounding never
drifts.

**Large batches: BLAS products, vectorised exponentials, counter-based uniforms.**
For a batch of :data:`DENSE_MIN_WEIGHTS` chain-weights or more (:func:`dense`)
the sweeps run the dense path instead, chosen per sweep by cost: after a layer
update the other layer's activation follows by the rows of the units that
changed when at most :data:`~pymc_rbm.kernels.activations.BATCH_FRACTION` of
the layer's entries changed (below the break-even of those rows against one
gemm), else by one BLAS matrix product. Each layer is then one compiled pass,
chain by chain: the row's ``E = exp(-|a|)`` and its uniforms in loops that
vectorise, into buffers that stay in the L1 cache, then the rule over the row.
The uniforms come from Philox4x32-10 (Salmon, Moraes, Dror & Shaw 2011), a
counter-based generator whose key (:func:`dense_key`, four 32-bit words) is the
only thing a dense call draws from the caller's generator: NumPy's PCG64 makes
one uniform per call, sequentially, and cost about a tenth of the two products
here. The uniforms have NumPy's 53-bit resolution; the exponentials are within
one ulp. The free energy of a draw needs ``exp(-|a_h|)`` of its last state,
which is what the next draw's hidden update needs too, so
:func:`draw_in_place` keeps it for the caller. The measurements are in
docs/sampling.md ("Batches of chains").

**It is the same chain, draw for draw.** Outside the dense path the uniforms
are drawn in bulk from the caller's generator in exactly the order the NumPy
kernels draw them (per sweep: the hidden layer, chains then units, then the
visible layer), and each unit is updated by the rule of
:func:`~pymc_rbm.kernels.gibbs.sample_hiddens` /
:func:`~pymc_rbm.kernels.flip.flip_probability`: ``x' = [u < p]`` for Gibbs,
``x' = x XOR [u < q]`` for flip-the-state, written once in
:mod:`pymc_rbm.kernels.update_rule` for both paths (there ``u < sigmoid(y)`` is
tested as ``u (1 + exp(-|y|)) < 1`` or ``< exp(-|y|)``, without a division).
Given the same generator the result equals the NumPy path's, except where a
uniform falls within a rounding error of its threshold (``exp``, that form of
the comparison and the sums of rows may round differently in the last bit).
The dense path's chain is the NumPy kernels' fed its uniforms
(:func:`dense_uniforms`, in the same order). ``tests/kernels/test_compiled.py``
checks both equalities over long runs and the dense path against the exact
transition matrices; the exactness of the chain itself is that of the NumPy
kernels (checked on transition matrices).

The loops are those of :mod:`pymc_rbm.kernels.chain_sweeps` (the one
compiled sweep) and of :mod:`pymc_rbm.kernels.update_rule` (the layer rule
and the dense path's pass over a layer), imported on first use. The other
compiled entry points are the replica rounds
(:mod:`pymc_rbm.kernels.replica_rounds`) and training's chains and gradients
(:mod:`pymc_rbm.kernels.training_steps`).

Numba is a dependency of PyTensor; without it :func:`available` is False and
callers use the NumPy kernels.
"""

from __future__ import annotations

import functools
import threading

import numpy as np

from pymc_rbm.kernels.activations import BATCH_FRACTION, FULL_EVERY
from pymc_rbm.kernels.layer import LayerRule

__all__ = [
    "DENSE_MIN_WEIGHTS",
    "available",
    "dense",
    "carried_sweeps",
    "draw_in_place",
    "same_values",
    "dense_key",
    "dense_uniforms",
    "free_energy_from_activation",
    "free_energy_of_states",
]


#: Batches of at least this many chain-weights (``n_chains * n_visible * n_hidden``) run the dense path:
#: the activations by BLAS products when many units changed, the exponentials of each layer in one
#: vectorised ``np.exp``. Below it the per-row path (its per-unit ``exp`` scalar) costs less;
#: benchmarks/sampler_speed.py measures both.
DENSE_MIN_WEIGHTS = 2**21


_scratch = threading.local()


def _scratch_buffer(name: str, shape: tuple, dtype=np.float64) -> np.ndarray:
    """A C-contiguous work array of ``shape``, kept per thread between calls.

    The dense path's buffers are several hundred kilobytes: allocated afresh at every draw, their
    first writes cost page faults on the order of the arithmetic done in them.
    """
    buffers = _scratch.__dict__.setdefault("buffers", {})
    size = int(np.prod(shape))
    buf = buffers.get(name)
    if buf is None or buf.size < size or buf.dtype != dtype:
        buf = buffers[name] = np.empty(size, dtype=dtype)
    return buf[:size].reshape(shape)


@functools.cache
def _compiled():
    """The compiled loops, :mod:`~pymc_rbm.kernels.chain_sweeps` and :mod:`~pymc_rbm.kernels.philox`,
    imported on first use (an import statement per call costs a microsecond), or None without Numba."""
    try:
        from pymc_rbm.kernels import chain_sweeps, philox
    except ImportError:  # pragma: no cover - numba comes with PyTensor
        return None
    return chain_sweeps, philox


def available() -> bool:
    """Whether the compiled sweeps can run here (Numba importable)."""
    return _compiled() is not None


def carried_sweeps(rng: np.random.Generator, v, h, a_h, a_v, params, n_sweeps: int, *, alpha: float = 1.0,
                   gibbs: bool = False, n_incremental: int = 0, W_T=None):
    """``n_sweeps`` sweeps (hidden given v, then visible given h) with carried activations (stochastic).

    Parameters
    ----------
    rng : numpy.random.Generator
        ``n_sweeps * n_chains * (n_hidden + n_visible)`` uniforms are drawn,
        in the order of the NumPy kernels.
    v : ndarray of shape (n_chains, n_visible)
        0/1 floats (not modified).
    h : ndarray of shape (n_chains, n_hidden) or None
        0/1 floats (not modified). None (Gibbs only: its update does not
        look at ``h``) when no hidden state is known yet.
    a_h : ndarray of shape (n_chains, n_hidden)
        ``hbias + v·W`` (not modified).
    a_v : ndarray of shape (n_chains, n_visible) or None
        ``vbias + W·h``; None to compute it in the first sweep.
    params : RBMParams or RBMTensors
        Parameters at β = 1; ``W`` C-contiguous float64.
    n_sweeps : int
    alpha : float in [0, 1], default 1.0
        Flip-the-state mixture weight (ignored with ``gibbs``).
    gibbs : bool, default False
        Block Gibbs instead of flip-the-state.
    n_incremental : int, default 0
        Incremental updates since the activations were last computed in
        full; at :data:`~pymc_rbm.kernels.activations.FULL_EVERY` they are.
    W_T : ndarray of shape (n_hidden, n_visible), optional
        ``W.T`` in C order, when the caller keeps one (else it is made).

    Returns
    -------
    v, h, a_h, a_v : ndarray
        The new states and their activations (new arrays).
    n_incremental : int
    """
    compiled = _compiled()
    if compiled is None:  # pragma: no cover
        raise RuntimeError("the compiled sweeps need Numba; use the NumPy kernels")
    if h is None:
        if not gibbs:
            raise ValueError("flip-the-state needs the current hidden state h")
        h, a_v = np.zeros((v.shape[0], params.W.shape[1])), None
    n_chains = v.shape[0]
    is_dense = dense(n_chains, v.shape[1], h.shape[1])
    u = dense_key(rng) if is_dense else rng.random((n_sweeps, n_chains * (h.shape[1] + v.shape[1])))
    v, h, a_h = np.array(v, dtype=np.float64), np.array(h, dtype=np.float64), np.array(a_h, dtype=np.float64)
    valid = a_v is not None
    a_v = np.array(a_v, dtype=np.float64) if valid else np.empty_like(v)
    W = np.ascontiguousarray(params.W, dtype=np.float64)
    W_T = np.ascontiguousarray(W.T) if W_T is None else W_T
    hbias = np.asarray(params.hbias, dtype=np.float64)
    model = (W, W_T, np.asarray(params.vbias, dtype=np.float64), hbias)
    rule = (float(alpha), float(alpha), bool(gibbs))
    carried = (a_h, a_v, valid, int(n_incremental), FULL_EVERY)
    if is_dense:
        n_incremental, h_pending = _dense_sweeps(u, n_sweeps, v, h, model, rule, carried)
        if h_pending:
            _module()[0].add_bias_(a_h, hbias)
    else:
        n_incremental = compiled[0].sweeps(u, v, h, model, rule, carried)
    return v, h, a_h, a_v, n_incremental


def draw_in_place(rng: np.random.Generator, v, h, carried, model, n_sweeps: int, *, rule: LayerRule = LayerRule(),
                  v_out, stats, hidden_exp=None, hidden_exp_valid: bool = False) -> int:
    """:func:`carried_sweeps` on the caller's own arrays, with a draw's statistics (stochastic).

    The step methods' per-draw call: the state arrays are updated in place
    (no copies), and the free energy and the numbers of changed units are
    computed in the same call. The chain is :func:`carried_sweeps`' for the
    same generator.

    Parameters
    ----------
    rng : numpy.random.Generator
    v, h : ndarray of shape (n_chains, n_visible / n_hidden), float64, C order
        The state, modified in place.
    carried : tuple
        ``(a_h, a_v, a_v_valid, n_incremental, full_every)``, the record of the compiled sweeps
        (:func:`~pymc_rbm.kernels.chain_sweeps.sweep_rows`): the activations ``hbias + v·W`` and
        ``vbias + W·h`` (float64, C order, modified in place; ``a_v`` may hold anything when not
        ``a_v_valid``), the incremental updates since they were last computed in full, and how many of
        those bring a computation in full (:data:`~pymc_rbm.kernels.activations.FULL_EVERY`).
    model : tuple
        ``(W, W_T, vbias, hbias)``, float64 arrays, ``W`` and ``W_T`` (``W.T``) in C order: the model record
        of the compiled sweeps.
    n_sweeps : int
    rule : LayerRule, default flip-the-state
        The layer update rule (its ``alpha`` is not read with ``gibbs``).
    v_out : ndarray of shape (n_chains, n_visible)
        Receives the final ``v`` in its own dtype.
    stats : ndarray of shape (n_chains, 3), float64
        Receives per chain ``F(v)``, the visible units and the hidden units
        that differ from the state at the call.
    hidden_exp : ndarray of shape (n_chains, n_hidden), optional
        Where a batch on the dense path (:func:`dense`) keeps ``exp(-|a_h|)``,
        which the free energy of a draw and the hidden update of the next
        one share: pass the same array to every draw, with
        ``hidden_exp_valid`` True when ``a_h`` is the one the previous draw
        left (it then holds its ``exp(-|a_h|)``).
    hidden_exp_valid : bool, default False

    Returns
    -------
    int
        ``n_incremental`` after the sweeps.
    """
    a_h, a_v, a_v_valid, n_incremental, full_every = carried
    carried = (a_h, a_v, bool(a_v_valid), int(n_incremental), int(full_every))
    alpha = float(rule.alpha)
    rule = (alpha, alpha, bool(rule.gibbs))
    if not dense(*v.shape, h.shape[1]):
        u = rng.random((n_sweeps, v.shape[0] * (h.shape[1] + v.shape[1])))
        return _compiled()[0].draw(u, v, h, model, rule, carried, v_out, stats)
    nb = _module()[0]
    counts = np.empty((2, v.shape[0]))  # per chain: the visible and hidden changes of the last sweep
    start = (v.copy(), h.copy()) if n_sweeps > 1 else None
    known = hidden_exp_valid and hidden_exp is not None
    E = _scratch_buffer("hidden_exp", a_h.shape) if hidden_exp is None else hidden_exp
    n_incremental, h_pending = _dense_sweeps(dense_key(rng), n_sweeps, v, h, model, rule, carried, counts, v_out,
                                             E if known else None)
    free_energy = np.empty(v.shape[0])
    _, _, vbias, hbias = model
    nb.dense_free_energy(v, a_h, hbias, h_pending, vbias, E, free_energy)
    stats[:, 0] = free_energy
    if start is None:
        stats[:, 1:] = counts.T
    else:
        stats[:, 1] = nb.changes_and_copy(v, start[0], v_out)
        stats[:, 2] = nb.changes_and_copy(h, start[1], np.empty_like(h))
    return n_incremental


def dense_key(rng: np.random.Generator) -> np.ndarray:
    """The key of one dense call's uniforms: four 32-bit words (as uint64) from the caller's generator.

    The dense path draws this and nothing else from ``rng``, whatever the number of sweeps and chains;
    :func:`dense_uniforms` gives the uniforms it stands for.
    """
    return rng.integers(0, 2**32, size=4, dtype=np.uint64)


def dense_uniforms(key, n_sweeps: int, n_chains: int, n_hidden: int, n_visible: int) -> np.ndarray:
    """The uniforms that the dense path's sweeps use under ``key``, in the NumPy kernels' order.

    Sweep ``t`` updates the hidden layer with stream ``2t`` and the visible layer with stream ``2t + 1``,
    chain ``k`` taking row ``k`` of that stream (Philox4x32-10, Salmon et al. 2011; see
    :mod:`pymc_rbm.kernels.philox`). Laid out as the NumPy kernels draw theirs: per sweep the hidden
    layer, chains then units, then the visible layer; fed to them through a generator that hands these
    out in order, they make the dense path's chain.

    Parameters
    ----------
    key : ndarray of shape (4,), uint64
        From :func:`dense_key`.
    n_sweeps, n_chains, n_hidden, n_visible : int

    Returns
    -------
    ndarray of shape (n_sweeps, n_chains * (n_hidden + n_visible))
    """
    philox = _module()[1]
    out = np.empty((n_sweeps, n_chains * (n_hidden + n_visible)))
    for t in range(n_sweeps):
        for layer, n in enumerate((n_hidden, n_visible)):
            offset = layer * n_chains * n_hidden
            for k in range(n_chains):
                u = np.empty(n + (n & 1))
                philox.philox_uniforms(np.asarray(key, dtype=np.uint64), k, 2 * t + layer, u)
                out[t, offset + k * n : offset + (k + 1) * n] = u[:n]
    return out


def dense(n_chains: int, n_visible: int, n_hidden: int) -> bool:
    """Whether a batch of this size runs the dense path (:data:`DENSE_MIN_WEIGHTS`)."""
    return n_chains > 1 and n_chains * n_visible * n_hidden >= DENSE_MIN_WEIGHTS


def _dense_sweeps(key, n_sweeps, v, h, model, rule, carried, counts=None, v_out=None, hidden_exp=None):
    """The sweeps of :func:`carried_sweeps` for a large batch, in place, with the uniforms of ``key``: one call of
    :func:`~pymc_rbm.kernels.chain_sweeps.dense_sweeps` (the ``DENSE`` path of the one compiled sweep), given
    its records ``model``, ``rule`` and ``carried``.

    Each layer is one compiled pass (:func:`~pymc_rbm.kernels.update_rule.dense_layer`): per chain, the row's
    exponentials (none for the first hidden update when ``hidden_exp`` holds ``exp(-|a_h|)`` already) and
    uniforms in vectorised loops, then the rule. The activation of the other layer then follows by the
    rows of the units that changed when at most :data:`~pymc_rbm.kernels.activations.BATCH_FRACTION` of
    the layer's entries changed, else by one BLAS product (its bias added in the next pass over it).
    ``counts[0]``, ``counts[1]`` receive the visible and hidden changes of the last sweep per chain,
    ``v_out`` the final ``v`` in its own dtype. Returns ``n_incremental`` and whether ``a_h`` still lacks
    ``hbias`` (the caller adds it, or folds it into its next pass over ``a_h``).
    """
    n_chains, n_v = v.shape
    n_h = h.shape[1]
    changes = _scratch_buffer("changes", (n_chains * max(n_v, n_h),), np.int8)
    counts = np.empty((2, n_chains)) if counts is None else counts
    no_array = np.empty((0, 0))
    dense_record = (key, changes, counts, no_array if hidden_exp is None else hidden_exp,
                    no_array if v_out is None else v_out, BATCH_FRACTION)
    return _module()[0].dense_sweeps(n_sweeps, v, h, model, rule, carried, dense_record, hidden_exp is not None)


def same_values(x, y) -> bool:
    """Whether two arrays of shape (n_chains, n_units) hold equal values, whatever their dtypes.

    The step methods' test of whether the point they receive is the one they left: one compiled pass
    that stops at the first difference, no copy (NumPy's ``array_equal`` converts and allocates first).
    """
    if _compiled() is None:  # pragma: no cover
        return bool(np.array_equal(x, y))
    return bool(_module()[0].same_values(x, y))


def free_energy_from_activation(v, a_h, vbias) -> np.ndarray:
    """``F(v) = -v·vbias - Σ_j softplus(a_h)_j`` from the carried ``a_h = hbias + v·W``, compiled.

    Parameters
    ----------
    v : ndarray of shape (n_chains, n_visible), float64
    a_h : ndarray of shape (n_chains, n_hidden), float64
    vbias : ndarray of shape (n_visible,), float64

    Returns
    -------
    ndarray of shape (n_chains,)
        The free energy of :func:`pymc_rbm.energy.free_energy` (to rounding).
    """
    compiled = _compiled()
    if compiled is None:  # pragma: no cover
        raise RuntimeError("needs Numba")
    return compiled[0].free_energy(v, a_h, np.asarray(vbias, dtype=np.float64))


def free_energy_of_states(v, params) -> np.ndarray:
    """``F(v)`` of 0/1 states, compiled: the activation ``hbias + v·W`` summed from the rows of the units that
    are on, then :func:`free_energy_from_activation`'s sum (a sparse state's rows cost less than a product).

    Parameters
    ----------
    v : ndarray of shape (n_chains, n_visible), float64, entries 0 or 1
    params : RBMParams

    Returns
    -------
    ndarray of shape (n_chains,)
        The free energy of :func:`pymc_rbm.energy.free_energy` (to rounding).
    """
    return _module()[0].free_energy_rows(v, np.asarray(params.W, dtype=np.float64),
                                         np.asarray(params.vbias, dtype=np.float64),
                                         np.asarray(params.hbias, dtype=np.float64))


def _module():
    """The compiled loops ``(chain_sweeps, philox)`` of :func:`_compiled`; RuntimeError without Numba."""
    loops = _compiled()
    if loops is None:  # pragma: no cover
        raise RuntimeError("the compiled kernels need Numba; use the NumPy kernels")
    return loops

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
:mod:`pymc_rbm.kernels._numba` for both paths (there ``u < sigmoid(y)`` is
tested as ``u (1 + exp(-|y|)) < 1`` or ``< exp(-|y|)``, without a division).
Given the same generator the result equals the NumPy path's, except where a
uniform falls within a rounding error of its threshold (``exp``, that form of
the comparison and the sums of rows may round differently in the last bit).
The dense path's chain is the NumPy kernels' fed its uniforms
(:func:`dense_uniforms`, in the same order). ``tests/kernels/test_compiled.py``
checks both equalities over long runs and the dense path against the exact
transition matrices; the exactness of the chain itself is that of the NumPy
kernels (checked on transition matrices).

Numba is a dependency of PyTensor; without it :func:`available` is False and
callers use the NumPy kernels.
"""

from __future__ import annotations

import functools
import threading

import numpy as np

from pymc_rbm.kernels.activations import BATCH_FRACTION, FULL_EVERY

__all__ = [
    "DENSE_MIN_WEIGHTS",
    "available",
    "dense",
    "persistent_gibbs_gradient",
    "gibbs_chain",
    "centered_sample_gradient",
    "centered_ascent_step",
    "carried_sweeps",
    "draw_in_place",
    "same_values",
    "dense_key",
    "dense_uniforms",
    "free_energy_from_activation",
    "tempered_round",
    "count_round_trips",
    "informed_proposal",
    "tilted_log_ratio",
]


#: Batches of at least this many chain-weights (``n_chains * n_visible * n_hidden``) run the dense path:
#: the activations by BLAS products when many units changed, the exponentials of each layer in one
#: vectorised ``np.exp``. Below it one compiled loop per draw costs less (its per-unit ``exp`` is scalar,
#: but it makes no Python calls per sweep); benchmarks/sampler_speed.py measures both.
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
    """``(sweeps, free_energy, draw)`` compiled (:mod:`pymc_rbm.kernels._numba`), or None without Numba."""
    try:
        from pymc_rbm.kernels import _numba
    except ImportError:  # pragma: no cover - numba comes with PyTensor
        return None
    return _numba.sweeps, _numba.free_energy, _numba.draw


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
    vbias, hbias = np.asarray(params.vbias, dtype=np.float64), np.asarray(params.hbias, dtype=np.float64)
    if is_dense:
        n_incremental, h_pending = _dense_sweeps(u, n_sweeps, v, h, a_h, a_v, valid, W, W_T, vbias, hbias,
                                                 float(alpha), bool(gibbs), int(n_incremental))
        if h_pending:
            _module().add_bias_(a_h, hbias)
    else:
        n_incremental = compiled[0](u, v, h, a_h, a_v, W, W_T, vbias, hbias, float(alpha), bool(gibbs), valid,
                                    int(n_incremental), FULL_EVERY)
    return v, h, a_h, a_v, n_incremental


def draw_in_place(rng: np.random.Generator, v, h, a_h, a_v, a_v_valid: bool, params, W_T, n_sweeps: int, *,
                  alpha: float = 1.0, gibbs: bool = False, n_incremental: int = 0, v_out, stats,
                  hidden_exp=None, hidden_exp_valid: bool = False) -> int:
    """:func:`carried_sweeps` on the caller's own arrays, with a draw's statistics (stochastic).

    The step methods' per-draw call: the state arrays are updated in place
    (no copies), and the free energy and the numbers of changed units are
    computed in the same call. The chain is :func:`carried_sweeps`' for the
    same generator.

    Parameters
    ----------
    rng : numpy.random.Generator
    v, h, a_h, a_v : ndarray of shape (n_chains, n_visible / n_hidden), float64, C order
        The state and its activations ``hbias + v·W`` and ``vbias + W·h``,
        modified in place. ``a_v`` may hold anything when not ``a_v_valid``.
    a_v_valid : bool
    params : RBMTensors
        ``W`` (C order), ``vbias`` and ``hbias`` as float64 arrays.
    W_T : ndarray of shape (n_hidden, n_visible)
        ``W.T`` in C order.
    n_sweeps : int
    alpha : float, default 1.0
    gibbs : bool, default False
    n_incremental : int, default 0
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
    if not dense(*v.shape, h.shape[1]):
        u = rng.random((n_sweeps, v.shape[0] * (h.shape[1] + v.shape[1])))
        return _compiled()[2](
            u, v, h, a_h, a_v, params.W, W_T, params.vbias, params.hbias, float(alpha), bool(gibbs),
            bool(a_v_valid), int(n_incremental), FULL_EVERY, v_out, stats,
        )
    nb = _module()
    counts = np.empty((2, v.shape[0]))  # per chain: the visible and hidden changes of the last sweep
    start = (v.copy(), h.copy()) if n_sweeps > 1 else None
    known = hidden_exp_valid and hidden_exp is not None
    E = _scratch_buffer("hidden_exp", a_h.shape) if hidden_exp is None else hidden_exp
    n_incremental, h_pending = _dense_sweeps(dense_key(rng), n_sweeps, v, h, a_h, a_v, a_v_valid, params.W, W_T,
                                             params.vbias, params.hbias, float(alpha), bool(gibbs),
                                             int(n_incremental), counts, v_out, E if known else None)
    free_energy = np.empty(v.shape[0])
    nb.dense_free_energy(v, a_h, params.hbias, h_pending, params.vbias, E, free_energy)
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
    :mod:`pymc_rbm.kernels._numba`). Laid out as the NumPy kernels draw theirs: per sweep the hidden
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
    nb = _module()
    out = np.empty((n_sweeps, n_chains * (n_hidden + n_visible)))
    for t in range(n_sweeps):
        for layer, n in enumerate((n_hidden, n_visible)):
            offset = layer * n_chains * n_hidden
            for k in range(n_chains):
                u = np.empty(n + (n & 1))
                nb.philox_uniforms(np.asarray(key, dtype=np.uint64), k, 2 * t + layer, u)
                out[t, offset + k * n : offset + (k + 1) * n] = u[:n]
    return out


def dense(n_chains: int, n_visible: int, n_hidden: int) -> bool:
    """Whether a batch of this size runs the dense path (:data:`DENSE_MIN_WEIGHTS`)."""
    return n_chains > 1 and n_chains * n_visible * n_hidden >= DENSE_MIN_WEIGHTS


def _dense_sweeps(key, n_sweeps, v, h, a_h, a_v, a_v_valid, W, W_T, vbias, hbias, alpha, gibbs, n_incremental,
                  counts=None, v_out=None, hidden_exp=None):
    """The sweeps of :func:`carried_sweeps` for a large batch, in place, with the uniforms of ``key``.

    Each layer is one compiled pass (:func:`~pymc_rbm.kernels._numba.dense_layer`): per chain, the row's
    exponentials (none for the first hidden update when ``hidden_exp`` holds ``exp(-|a_h|)`` already) and
    uniforms in vectorised loops, then the rule. The activation of the other layer then follows by the
    rows of the units that changed when at most :data:`~pymc_rbm.kernels.activations.BATCH_FRACTION` of
    the layer's entries changed, else by one BLAS product (its bias added in the next pass over it).
    ``counts[0]``, ``counts[1]`` receive the visible and hidden changes of the last sweep per chain,
    ``v_out`` the final ``v`` in its own dtype. Returns ``n_incremental`` and whether ``a_h`` still lacks
    ``hbias`` (the caller adds it, or folds it into its next pass over ``a_h``).
    """
    nb = _module()
    n_chains, n_v = v.shape
    n_h = h.shape[1]
    changes = _scratch_buffer("changes", (n_chains * max(n_v, n_h),), np.int8)
    counts = np.empty((2, n_chains)) if counts is None else counts
    no_array = np.empty((0, 0))

    def layer(stream, x, a, bias, add_bias, count, other, M, out=no_array, known=None) -> tuple[bool, bool]:
        """Update ``x`` given ``a``; then ``other += (x' - x) M`` by rows, or say it needs a product."""
        d = changes[: x.size].reshape(x.shape)
        n = nb.dense_layer(key, stream, x, a, bias, add_bias, no_array if known is None else known,
                           known is not None, alpha, gibbs, count, d, out)
        by_rows = other is not None and n <= BATCH_FRACTION * x.size
        if by_rows and n:
            nb.add_changes(other, d, M)
        return by_rows, by_rows and n > 0

    h_pending = False  # a_h lacks hbias (a product left it out)
    for t in range(n_sweeps):
        if n_incremental >= FULL_EVERY:
            n_incremental, a_v_valid, h_pending, hidden_exp = 0, False, True, None
            np.dot(v, W, out=a_h)
        by_rows, incremental = layer(2 * t, h, a_h, hbias, h_pending, counts[1], a_v if a_v_valid else None, W_T,
                                     known=hidden_exp)
        hidden_exp = None
        n_incremental += incremental
        if not by_rows:
            np.dot(h, W.T, out=a_v)  # W's own memory (as the gemm floor), not W_T's: half the data in the caches
        a_v_valid = True
        last = t == n_sweeps - 1 and v_out is not None
        by_rows, incremental = layer(2 * t + 1, v, a_v, vbias, not by_rows, counts[0], a_h, W,
                                     v_out if last else no_array)
        n_incremental += incremental
        h_pending = not by_rows
        if h_pending:
            np.dot(v, W, out=a_h)
    return n_incremental, h_pending


def same_values(x, y) -> bool:
    """Whether two arrays of shape (n_chains, n_units) hold equal values, whatever their dtypes.

    The step methods' test of whether the point they receive is the one they left: one compiled pass
    that stops at the first difference, no copy (NumPy's ``array_equal`` converts and allocates first).
    """
    if _compiled() is None:  # pragma: no cover
        return bool(np.array_equal(x, y))
    return bool(_module().same_values(x, y))


def persistent_gibbs_gradient(rng: np.random.Generator, batch, v, h, params, k: int):
    """One PCD-k update's gradient with block Gibbs, in one compiled call (stochastic).

    The data term of ``batch`` minus the model term of the persistent chains
    ``(v, h)`` after ``k`` sweeps ``v ~ p(v | h)``, ``h ~ p(h | v)`` (the
    visible layer first, from the ``h`` the chains carry), both with the
    hidden units summed out: the gradient of
    :func:`pymc_rbm.training.negative.gibbs_sweeps_visible_first` followed
    by the statistics, the same chain for the same generator (its sweeps are
    :func:`gibbs_chain`'s, visible layer first: the values of the NumPy
    kernels). For small models, where NumPy's per-call costs are most of an update.

    Parameters
    ----------
    rng : numpy.random.Generator
        Per sweep, ``n_chains * n_visible`` uniforms then ``n_chains * n_hidden``.
    batch : ndarray of shape (n_samples, n_visible), float64
        Binary data.
    v, h : ndarray of shape (n_chains, n_visible / n_hidden), float64, C order
        The chains, updated in place.
    params : RBMParams
        float64.
    k : int

    Returns
    -------
    W, vbias, hbias : ndarray
        The gradient (data minus model term) in each parameter.
    """
    u = rng.random(k * v.shape[0] * (v.shape[1] + h.shape[1]))
    return _module().persistent_gibbs_gradient(u, batch, v, h, params.W, params.vbias, params.hbias)


def gibbs_chain(rng: np.random.Generator, v, h, params, n_sweeps: int, *, first_draw: bool = False,
                last_draw: bool = True) -> np.ndarray:
    """Block-Gibbs sweeps from the visible states, in one compiled call, with NumPy's values (stochastic).

    The chain of :func:`~pymc_rbm.training.negative.gibbs_sweeps_from_visible`
    (``last_draw``) or of CD's start and sweeps (``first_draw``: ``h ~ p(h | v)``
    first, as :func:`~pymc_rbm.kernels.gibbs.init_state`), the same values for
    the same generator: the uniforms in the NumPy kernels' order, each layer
    by the same compiled rule (:func:`~pymc_rbm.kernels._numba.gibbs_rows`)
    at activations formed as NumPy forms them (a BLAS product, then the bias).
    For small models, where NumPy's per-call costs are most of an update.

    Parameters
    ----------
    rng : numpy.random.Generator
        ``n_chains * n_hidden`` uniforms per hidden update and
        ``n_chains * n_visible`` per visible one, in the order of the updates.
    v : ndarray of shape (n_chains, n_visible), C order
        Binary visible states in ``params``' dtype, updated in place.
    h : ndarray of shape (n_chains, n_hidden), C order
        Receives the hidden states (with neither draw, those of the last sweep).
    params : RBMParams
        float64 or float32.
    n_sweeps : int
    first_draw, last_draw : bool
        Draw ``h ~ p(h | v)`` before the first sweep / of the final ``v``.

    Returns
    -------
    ndarray of shape (n_chains, n_hidden)
        The hidden input ``hbias + v @ W`` of the final ``v``.
    """
    n_c, n_v = v.shape
    n_h = h.shape[1]
    u = rng.random(n_sweeps * n_c * (n_v + n_h) + (int(first_draw) + int(last_draw)) * n_c * n_h)
    return _module().gibbs_chain(u, v, h, params.W, params.vbias, params.hbias, n_sweeps, first_draw, last_draw)


def centered_sample_gradient(v_data, params, v_model, ph_model):
    """The centered gradient of data and model samples, in one compiled call with NumPy's values.

    ``G = ⟨(v - μ)(p - λ)ᵀ⟩_data - ⟨(v - μ)(p - λ)ᵀ⟩_model``, ``g_v = μ - ⟨v⟩_model``,
    ``g_h = λ - ⟨p⟩_model`` with ``p = p(h | v)``, the data's at ``params`` and the
    data means ``μ = ⟨v⟩_data``, ``λ = ⟨p⟩_data`` as offsets: the arithmetic of
    :func:`~pymc_rbm.energy.mean_hiddens` and
    :func:`~pymc_rbm.training.negative.centered_from_samples` (the same BLAS
    products, element-wise operations and ``expit``, means as NumPy's), without
    their per-call costs.

    Parameters
    ----------
    v_data : ndarray of shape (n_samples, n_visible)
    params : RBMParams
    v_model : ndarray of shape (n_chains, n_visible)
    ph_model : ndarray of shape (n_chains, n_hidden)
        ``p(h | v)`` of the model samples. The arrays C-ordered, in ``params``' dtype.

    Returns
    -------
    G, g_v, g_h, mu, lam : ndarray
        Of shapes (n_visible, n_hidden), (n_visible,), (n_hidden,), (n_visible,), (n_hidden,).
    """
    return _module().centered_sample_gradient(v_data, params.W, params.hbias, v_model, ph_model)


def centered_ascent_step(arrays, gradient, offsets, learning_rate: float) -> None:
    """Plain gradient ascent in the centered parameters, mapped to ``(W, vbias, hbias)``, in one compiled call.

    ``p += learning_rate * g`` for each array and ``g`` of
    :func:`~pymc_rbm.training.gradients.centered_update` of ``gradient`` at
    ``offsets``: the same BLAS products and element-wise operations as NumPy
    (the learning rate taken in the arrays' dtype, as NumPy takes a Python
    float), so the same values.

    Parameters
    ----------
    arrays : tuple of ndarray
        ``(W, vbias, hbias)``, moved in place.
    gradient : Gradient
        In the centered parameters, in the arrays' dtype.
    offsets : tuple of ndarray
        ``(μ, λ)`` of shapes (n_visible,) and (n_hidden,).
    learning_rate : float
    """
    W = arrays[0]
    _module().centered_ascent_step(*arrays, *gradient, *offsets, W.dtype.type(learning_rate))


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
    return compiled[1](v, a_h, np.asarray(vbias, dtype=np.float64))


def _module():
    """The compiled loops (:mod:`pymc_rbm.kernels._numba`); RuntimeError without Numba."""
    if _compiled() is None:  # pragma: no cover
        raise RuntimeError("the compiled kernels need Numba; use the NumPy kernels")
    return _numba_module()


@functools.cache
def _numba_module():
    """:mod:`pymc_rbm.kernels._numba`, imported once (an import statement per call costs a microsecond)."""
    from pymc_rbm.kernels import _numba

    return _numba


_NO_EVIDENCE = np.zeros((1, 1, 1))


def tempered_round(rng: np.random.Generator, v, h, params, W_T, betas, n_swept: int, parity: int, labels,
                   swap_sum, swap_n, *, alpha: float = 1.0, gibbs: bool = False, evidence=None, sweeps=None,
                   energies=None) -> None:
    """One replica-exchange round of the first ``n_swept`` replicas, in place, in one compiled call (stochastic).

    Each replica is swept at its own ``β`` (``sweeps[r]`` times, default once) with the layer rule of the
    compiled sweeps (flip-the-state mixture or Gibbs on the activations
    times ``β``), then the pairs of the given parity among those replicas are
    swapped by the Metropolis rule of
    :func:`~pymc_rbm.kernels.tempering.swap_neighbours`, so this is the
    round of :func:`~pymc_rbm.kernels.tempering.tempered_sweep` and
    :func:`~pymc_rbm.kernels.tempering.swap_neighbours` (the same
    transitions, another random stream).

    Parameters
    ----------
    rng : numpy.random.Generator
    v, h : ndarray of shape (n_temperatures, n_chains, n_visible / n_hidden), float64, C order
        Replicas, modified in place.
    params : RBMParams or RBMTensors
        ``W`` C-contiguous float64.
    W_T : ndarray of shape (n_hidden, n_visible)
        ``W.T`` in C order.
    betas : ndarray of shape (n_temperatures,)
    n_swept : int
        Replicas ``0 .. n_swept - 1`` move and may swap (the rest are the caller's).
    parity : {0, 1}
    labels : ndarray of int of shape (n_temperatures, n_chains)
        Follow their replicas through the swaps.
    swap_sum, swap_n : ndarray of shape (n_temperatures - 1,)
        Receive each attempted pair's acceptance probabilities and attempts.
    alpha : float, default 1.0
    gibbs : bool, default False
    evidence : ndarray of shape (n_temperatures, n_chains, n_visible), optional
        Per-unit evidence of every replica of every chain, added untempered to
        its visible logits: replica ``r`` of chain ``b`` then targets
        ``exp(-β_r E(v, h) + evidence[r, b]·v)``, and swaps use the exact ratio
        of the two targets (the RBM tempered, a per-unit likelihood kept).
        float64, C order.
    sweeps : ndarray of int of shape (n_temperatures,) or (n_swept,), optional
        Sweeps of each replica before the swaps (the explorers of the round,
        each sweep invariant for its replica's target, so the round is exact
        for any numbers >= 1). Default: one each; the random stream is then
        the same as before this option existed, draw for draw.
    energies : ndarray of shape (2, n_swept, n_chains), optional
        Receives the energy ``E(v, h)`` at each rung before its sweeps
        (``[0]``) and after them, before the swaps (``[1]``): what a tuning
        measures the explorers' relaxation from.
    """
    n_t, n_chains = v.shape[:2]
    n_swept = int(n_swept)
    if sweeps is None:
        n_sweeps = np.ones(n_swept, dtype=np.int64)
    else:
        n_sweeps = np.ascontiguousarray(np.asarray(sweeps)[:n_swept], dtype=np.int64)
        if n_sweeps.shape != (n_swept,) or np.any(n_sweeps < 1):
            raise ValueError(f"sweeps must give every one of the {n_swept} replicas at least one sweep, got {sweeps}")
    if energies is None:
        energies = np.empty((2, n_swept, n_chains))
    u = rng.random((int(n_sweeps.sum()), n_chains, h.shape[2] + v.shape[2]))
    swap_u = rng.random((max(n_t - 1, 1), n_chains))
    has_evidence = evidence is not None
    if not has_evidence:
        evidence = _NO_EVIDENCE
    _module().tempered_round_sweeps(
        u, swap_u, v, h, params.W, W_T, params.vbias, params.hbias, np.asarray(betas, dtype=np.float64),
        float(alpha), bool(gibbs), int(parity), n_swept, labels, swap_sum, swap_n, evidence, has_evidence,
        float(alpha), _NO_EVIDENCE, False, n_sweeps, energies,
    )


def count_round_trips(labels, last_end, went_up) -> int:
    """Round trips completed by the replicas at the ends of the ladder now (updates the two trackers in place).

    Parameters
    ----------
    labels : ndarray of int of shape (n_temperatures, n_chains)
        Which replica is at each rung.
    last_end : ndarray of int8 of shape (n_temperatures, n_chains)
        Per replica label: 0 no end visited yet, 1 the bottom rung, 2 the top.
    went_up : ndarray of bool of shape (n_temperatures, n_chains)
        Per label: reached the top since its last visit to the bottom.

    Returns
    -------
    int
        Labels back at the bottom after bottom, top, bottom.
    """
    return int(_module().count_round_trips(labels, last_end, went_up))


_ONES = np.ones(64)


def informed_proposal(rng: np.random.Generator, v, h, params, W_T, tilt, *, betas=None, alpha: float = 1.0,
                      alpha_visible: float | None = None, gibbs: bool = False):
    """Per row: the hidden update, then the same operator's visible update on logits tilted by ``tilt`` (stochastic).

    The compiled form of the hidden layer update at each row's ``β``
    followed by :func:`~pymc_rbm.kernels.informed.propose_tilted` on
    ``β (a + tilt)``: the informed move of the RBM ``β θ`` with other terms
    ``β log L``.

    Parameters
    ----------
    rng : numpy.random.Generator
    v, h : ndarray of shape (n_rows, n_visible) / (n_rows, n_hidden), float64
        Not modified.
    params : RBMTensors
    W_T : ndarray of shape (n_hidden, n_visible)
    tilt : ndarray of shape (n_rows, n_visible) or (n_visible,)
        The flip tilt of ``log L`` at each row (not yet times ``β``).
    betas : ndarray of shape (n_rows,), optional
        Default 1.
    alpha, alpha_visible : float
        Flip-the-state mixture weights of the hidden update and of the
        visible proposal (default ``alpha``); ignored with ``gibbs``.
    gibbs : bool, default False

    Returns
    -------
    h_new : ndarray of shape (n_rows, n_hidden)
    proposal : ndarray of shape (n_rows, n_visible)
    logits : ndarray of shape (n_rows, n_visible)
        ``β (vbias + W·h_new)``, the untilted tempered visible logits.
    """
    n_rows = v.shape[0]
    u = rng.random((n_rows, h.shape[1] + v.shape[1]))
    h_new, proposal, logits = np.empty_like(h), np.empty_like(v), np.empty_like(v)
    betas = _ONES[:n_rows] if betas is None and n_rows <= _ONES.size else betas
    betas = np.ones(n_rows) if betas is None else np.asarray(betas, dtype=np.float64)
    tilt = np.asarray(tilt, dtype=np.float64)
    tilt = tilt.reshape(v.shape) if tilt.size == v.size else np.ascontiguousarray(np.broadcast_to(tilt, v.shape))
    alpha_v = alpha if alpha_visible is None else alpha_visible
    _module().informed_proposal(u, v, h, params.W, W_T, params.vbias, params.hbias, betas, tilt,
                                float(alpha), float(alpha_v), bool(gibbs), h_new, proposal, logits)
    return h_new, proposal, logits


def tilted_log_ratio(v, v_new, logits, tilt, tilt_new, log_rest, log_rest_new, *,
                     alpha: float = 1.0, gibbs: bool = False) -> np.ndarray:
    """:func:`pymc_rbm.kernels.informed.tilted_log_ratio` per row, compiled.

    Parameters
    ----------
    v, v_new, logits, tilt, tilt_new : ndarray of shape (n_rows, n_visible), float64
    log_rest, log_rest_new : ndarray of shape (n_rows,)
    alpha : float, default 1.0
    gibbs : bool, default False
        The operator (``gibbs`` or the mixture weight ``alpha``).

    Returns
    -------
    ndarray of shape (n_rows,)
    """
    f = lambda x: np.ascontiguousarray(x, dtype=np.float64)  # noqa: E731
    return _module().tilted_log_ratio(f(v), f(v_new), f(logits), f(tilt), f(tilt_new), f(np.atleast_1d(log_rest)),
                                      f(np.atleast_1d(log_rest_new)), float(alpha), bool(gibbs))


def model_ladder_round(rng: np.random.Generator, v, h, a, h_off, W, W_T, w_off, vbias, hbias, hb_off, n_sweeps: int,
                       parity: int, labels, *, alpha: float = 1.0, gibbs: bool = False):
    """One round of a ladder of models, in place, in two compiled calls (stochastic).

    ``n_sweeps`` sweeps of every rung at its own model (the sweeps of
    :func:`carried_sweeps`, rung after rung, with the uniforms it would
    draw), then the swaps of the pairs ``(r, r + 1)`` of the given parity,
    accepted by the models' own free energies
    ``F_r(v_r) + F_{r+1}(v_{r+1}) - F_r(v_{r+1}) - F_{r+1}(v_r)``, whose
    cross hidden inputs ``hbias_r + v_{r+1} W_r`` follow from the carried
    ``hbias_r + v_r W_r`` by the rows of the units where the two states
    differ (or, when fewer, of the units on); the swapped replicas then draw
    their hidden units by Gibbs from their new models. The random stream is
    that of per-rung :func:`carried_sweeps`, one uniform per attempted pair
    and chain (:func:`~pymc_rbm.kernels.metropolis.metropolis_accept`), and
    the Gibbs redraws pair by pair (the lower rung first), for batches that
    do not take the dense path (:func:`dense`).

    Parameters
    ----------
    rng : numpy.random.Generator
    v : ndarray of shape (n_rungs, n_chains, n_visible), float64, C order
        Modified in place.
    h, a : ndarray of shape (sum_r n_chains * n_hidden_r,), float64
        The hidden states and their inputs ``hbias_r + v_r W_r``, rung ``r``'s
        ``(n_chains, n_hidden_r)`` block at ``h_off[r]:h_off[r + 1]``;
        modified in place.
    h_off : ndarray of int64 of shape (n_rungs + 1,)
    W, W_T : ndarray of shape (sum_r n_visible * n_hidden_r,), float64
        Each rung's ``W`` (n_visible, n_hidden_r) and ``W.T`` (n_hidden_r,
        n_visible) in C order, at ``w_off[r]:w_off[r + 1]``.
    w_off : ndarray of int64 of shape (n_rungs + 1,)
    vbias : ndarray of shape (n_rungs, n_visible), float64
    hbias : ndarray of shape (sum_r n_hidden_r,), float64
        Rung ``r``'s at ``hb_off[r]:hb_off[r + 1]``.
    hb_off : ndarray of int64 of shape (n_rungs + 1,)
    n_sweeps : int
    parity : {0, 1}
    labels : ndarray of int64 of shape (n_rungs, n_chains)
        Follow their visible states through the swaps (in place).
    alpha : float, default 1.0
    gibbs : bool, default False

    Returns
    -------
    log_ratio : ndarray of shape (n_rungs - 1, n_chains)
        Of the attempted pairs (NaN elsewhere).
    accepted : ndarray of bool of shape (n_rungs - 1, n_chains)
    n_changed : ndarray of int64 of shape (n_rungs, n_chains)
        Visible units changed by each rung's sweeps.
    """
    nb = _module()
    k, n_chains, n_v = v.shape
    n_h = np.diff(hb_off)
    u_off = np.concatenate([[0], np.cumsum(n_sweeps * n_chains * (n_h + n_v))])
    u = rng.random(int(u_off[-1]))
    n_pairs = len(range(parity, k - 1, 2))
    swap_u = rng.random((n_pairs, n_chains))
    log_ratio = np.full((k - 1, n_chains), np.nan)
    accepted = np.zeros((k - 1, n_chains), dtype=bool)
    n_changed = np.empty((k, n_chains), dtype=np.int64)
    nb.model_ladder_round(u, u_off, swap_u, v, h, a, h_off, W, W_T, w_off, vbias, hbias, hb_off, float(alpha),
                          bool(gibbs), int(parity), FULL_EVERY, labels, log_ratio, accepted, n_changed)
    n_took = accepted.sum(axis=1)  # redraws: per swapped chain, both rungs' hidden units
    n_redraw = int(n_took @ (n_h[:-1] + n_h[1:]))
    if n_redraw:
        nb.ladder_redraw_hidden(rng.random(n_redraw), h, a, h_off, hb_off, n_chains, int(parity), accepted)
    return log_ratio, accepted, n_changed


def model_ladder_log_ratios(v, a, h_off, W, w_off, vbias, hbias, hb_off) -> np.ndarray:
    """The swap log ratios of :func:`model_ladder_round` for every neighbouring pair, compiled.

    Parameters
    ----------
    v, a, h_off, W, w_off, vbias, hbias, hb_off
        As for :func:`model_ladder_round` (not modified).

    Returns
    -------
    ndarray of shape (n_rungs - 1, n_chains)
        ``F_r(v_r) + F_{r+1}(v_{r+1}) - F_r(v_{r+1}) - F_{r+1}(v_r)``.
    """
    k, n_chains = v.shape[:2]
    out = np.empty((k - 1, n_chains))
    _module().ladder_log_ratios(v, a, h_off, W, w_off, vbias, hbias, hb_off, -1, out)
    return out

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

**It is the same chain, draw for draw.** The uniforms are drawn in bulk from
the caller's generator in exactly the order the NumPy kernels draw them
(per sweep: the hidden layer, chains then units, then the visible layer),
and each unit is updated with the same formula as
:func:`~pymc_rbm.kernels.gibbs.sample_hiddens` /
:func:`~pymc_rbm.kernels.flip.flip_probability`: ``x' = [u < p]`` for Gibbs,
``x' = x XOR [u < q]`` for flip-the-state. Given the same generator the
result equals the NumPy path's, except where a uniform falls within a
rounding error of its threshold (``exp`` and the sums of rows may round
differently in the last bit); ``tests/kernels/test_compiled.py`` checks the
equality over long runs, and the exactness of the chain itself is that of
the NumPy kernels (checked on transition matrices).

Numba is a dependency of PyTensor; without it :func:`available` is False and
callers use the NumPy kernels.
"""

from __future__ import annotations

import functools

import numpy as np

from pymc_rbm.kernels.activations import FULL_EVERY

__all__ = ["available", "carried_sweeps", "draw_in_place", "free_energy_from_activation"]


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
    u = rng.random((n_sweeps, n_chains * (h.shape[1] + v.shape[1])))
    v, h, a_h = np.array(v, dtype=np.float64), np.array(h, dtype=np.float64), np.array(a_h, dtype=np.float64)
    valid = a_v is not None
    a_v = np.array(a_v, dtype=np.float64) if valid else np.empty_like(v)
    W = np.ascontiguousarray(params.W, dtype=np.float64)
    W_T = np.ascontiguousarray(W.T) if W_T is None else W_T
    n_incremental = compiled[0](
        u, v, h, a_h, a_v, W, W_T, np.asarray(params.vbias, dtype=np.float64),
        np.asarray(params.hbias, dtype=np.float64), float(alpha), bool(gibbs), valid, int(n_incremental),
        FULL_EVERY,
    )
    return v, h, a_h, a_v, n_incremental


def draw_in_place(rng: np.random.Generator, v, h, a_h, a_v, a_v_valid: bool, params, W_T, n_sweeps: int, *,
                  alpha: float = 1.0, gibbs: bool = False, n_incremental: int = 0, v_out, stats) -> int:
    """:func:`carried_sweeps` on the caller's own arrays, with a draw's statistics (stochastic).

    The step methods' per-draw call: the state arrays are updated in place
    (no copies), and the free energy and the numbers of changed units are
    computed in the same compiled call. The chain is :func:`carried_sweeps`'
    for the same generator.

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

    Returns
    -------
    int
        ``n_incremental`` after the sweeps.
    """
    u = rng.random((n_sweeps, v.shape[0] * (h.shape[1] + v.shape[1])))
    return _compiled()[2](
        u, v, h, a_h, a_v, params.W, W_T, params.vbias, params.hbias, float(alpha), bool(gibbs), bool(a_v_valid),
        int(n_incremental), FULL_EVERY, v_out, stats,
    )


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

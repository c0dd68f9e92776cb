"""Carried activations: update ``bias + x·M`` by the units that changed instead of recomputing it.

A sweep needs the activations ``hbias + v·W`` and ``vbias + W·h``: two
matrix products, the naive cost of a sweep. In a trained RBM sampled at
``β = 1`` most units keep their state from one sweep to the next, so the
activation of the new state is the old one plus ``(x'_i - x_i) M[i]`` for
the few units ``i`` that changed. :func:`propagate_activation` does that
(compiled with Numba when available: it reads only the rows of ``M`` that
changed and copies nothing else), falling back to the full product when too
many units changed for the update to pay. A caller recomputes in full at
least every :data:`FULL_EVERY` updates so rounding never drifts (the step
methods after that many consecutive incremental ones; the annealing and
tempering loops of the estimators on every ``FULL_EVERY``-th sweep).

Every user of carried activations (the PyMC step methods, and any training
or estimator loop that keeps activations between sweeps) calls this one
function.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

__all__ = [
    "BATCH_FRACTION",
    "FULL_EVERY",
    "add_changed_rows",
    "count_changes",
    "incremental_fraction",
    "propagate_activation",
]

#: Recompute the activations in full at least once in this many updates (bounds rounding drift).
FULL_EVERY = 64

#: ``max_fraction`` of :func:`propagate_activation` for batches of many chains, whose full product is
#: one matrix-matrix product: measured break-even 0.19-0.22 of the entries for 100 chains of a
#: 784 x 500 RBM (float32 and float64, one thread; 0.5 against a single chain's matrix-vector product).
BATCH_FRACTION = 0.15


def _numpy_add_changed_rows(a, old, new, M, max_changes):
    """NumPy version of :func:`add_changed_rows`: one product over the union of changed units."""
    if old.shape[0] == 1:
        diff = new[0] - old[0]
        cols = diff.nonzero()[0]
        if cols.size == 0:
            return a, True
        if cols.size > max_changes:
            return a, False
        return a + diff[cols] @ M[cols], True
    cols = np.flatnonzero((old != new).any(axis=0))
    if cols.size == 0:
        return a, True
    if cols.size * old.shape[0] > max_changes:
        return a, False
    return a + (new[:, cols] - old[:, cols]) @ M[cols], True


@functools.cache
def _compiled_row_updates():
    """The compiled row updates ``(add_changed_rows_, add_changed_rows)``, or None without Numba.

    ``add_changed_rows_`` is the in-place core that the compiled sweeps
    (:mod:`pymc_rbm.kernels.chain_sweeps`) call too.
    """
    try:
        from pymc_rbm.kernels import chain_sweeps
    except ImportError:  # pragma: no cover - numba comes with PyTensor
        return None
    return chain_sweeps.add_changed_rows_, chain_sweeps.add_changed_rows


@functools.cache
def _implementation() -> tuple[Callable, float]:
    """The compiled update (built on first use, so importing the kernels stays cheap) and its break-even."""
    kernels = _compiled_row_updates()
    return (kernels[1], 0.5) if kernels is not None else (_numpy_add_changed_rows, 0.25)


def add_changed_rows(a, old, new, M, max_changes: int):
    """``(a + (new - old) @ M, True)`` from the units that changed only, or ``(a, False)``.

    Parameters
    ----------
    a : ndarray of shape (n_chains, m)
    old, new : ndarray of shape (n_chains, n), float64
    M : ndarray of shape (n, m), C-contiguous
    max_changes : int
        When more units than this changed in all chains together the update
        is not done (the full product is cheaper) and ``(a, False)`` is
        returned.

    Returns
    -------
    activation : ndarray of shape (n_chains, m)
        ``a`` itself when nothing changed; the inputs are never modified.
    done : bool
    """
    return _implementation()[0](a, old, new, M, max_changes)


def incremental_fraction() -> float:
    """Largest fraction of a layer's units (over all chains) that :func:`propagate_activation` updates
    incrementally; beyond it one full product is cheaper (0.5 compiled, 0.25 with NumPy alone)."""
    return _implementation()[1]


def propagate_activation(
    a: np.ndarray,
    old: np.ndarray,
    new: np.ndarray,
    M: np.ndarray,
    full: Callable,
    *,
    force_full: bool = False,
    max_fraction: float | None = None,
) -> tuple[np.ndarray, bool]:
    """Activation of ``new`` from the activation ``a`` of ``old``, by the rows of ``M`` that changed.

    Parameters
    ----------
    a : ndarray of shape (n_chains, m)
        ``bias + old @ M``.
    old, new : ndarray of shape (n_chains, n)
        The previous and the new 0/1 states of the layer (float64).
    M : ndarray of shape (n, m)
        C-contiguous: ``W`` for the hidden activation of a visible change,
        ``W.T`` for the visible activation of a hidden change.
    full : callable
        ``full(new) -> bias + new @ M``, used when more than
        ``max_fraction`` of the units changed, or with ``force_full``.
    force_full : bool, default False
    max_fraction : float, optional
        Largest fraction of ``new``'s entries (all chains together) that may
        have changed for the incremental update; default
        :func:`incremental_fraction`, the break-even against a matrix-vector
        product. Batches of many chains, whose full product is one
        matrix-matrix product (several times faster per entry), pass a
        smaller one.

    Returns
    -------
    activation : ndarray of shape (n_chains, m)
        ``bias + new @ M`` (may be ``a`` itself when nothing changed; the
        inputs are never modified).
    incremental : bool
        Whether it was updated incrementally (callers count these and
        recompute in full every :data:`FULL_EVERY`).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> M, bias = rng.normal(size=(6, 3)), rng.normal(size=3)
    >>> old = rng.integers(0, 2, (2, 6)).astype(float)
    >>> new = old.copy(); new[0, 1] = 1 - new[0, 1]
    >>> a, incremental = propagate_activation(bias + old @ M, old, new, M, lambda x: bias + x @ M)
    >>> bool(np.allclose(a, bias + new @ M)), incremental
    (True, True)
    """
    if not force_full:
        update, fraction = _implementation()
        out, ok = update(a, old, new, M, int((fraction if max_fraction is None else max_fraction) * old.size))
        if ok:
            return out, out is not a
    return full(new), False


def count_changes(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Units that differ between ``a`` and ``b``, per chain.

    Parameters
    ----------
    a, b : ndarray of shape (n_chains, n)

    Returns
    -------
    ndarray of int of shape (n_chains,)
    """
    if a.shape[0] == 1:
        return np.array([np.count_nonzero(a != b)])
    return np.count_nonzero(a != b, axis=-1)

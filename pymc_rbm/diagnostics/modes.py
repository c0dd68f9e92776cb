"""How often, and how soon, chains move between modes (Brügge, Fischer & Igel 2013, §4.4)."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import xarray as xr

from pymc_rbm.datasets import AMBIGUOUS, classify_modes

__all__ = ["ClassChanges", "NO_CHANGE", "class_changes"]

#: ``first_change`` of :func:`class_changes` for a chain that never changed its class.
NO_CHANGE = -1


class ClassChanges(NamedTuple):
    """Mode changes of chains (Brügge, Fischer & Igel 2013, §4.4, Tables 3 and 4).

    Attributes
    ----------
    n_changes : ndarray of int64 of shape (...)
        Number of class changes: consecutive classified samples of
        different classes (ambiguous samples discarded in between).
    first_change : ndarray of int64 of shape (...)
        Steps to the first class change: the index along the chain of the
        first sample whose class differs from the chain's first class;
        :data:`NO_CHANGE` (-1) when the class never changed.
    n_ambiguous : ndarray of int64 of shape (...)
        Samples equally near to two or more modes, discarded.
    """

    n_changes: np.ndarray
    first_change: np.ndarray
    n_ambiguous: np.ndarray


def class_changes(
    v, *, classify: Callable | None = classify_modes, draw_dim: str = "draw", unit_dim: str | None = None
) -> ClassChanges:
    """Count the class changes of chains, as Brügge, Fischer & Igel (2013, §4.4) do.

    "A sample belongs to the same class as the mode to which it has the
    smallest Hamming distance. Ambiguous samples which could not be assigned
    to a single class, because they were equally close to at least two of
    the modes, were discarded." Table 3 counts the class changes in a chain
    of 10000 samples, Table 4 "the number of sampling steps before the first
    class change" from a start drawn from the training data.

    Parameters
    ----------
    v : array_like of shape (..., n_steps, n_visible), or xarray.DataArray
        The chains, time on the second-to-last axis; ``v[..., 0, :]`` is
        the start state and ``v[..., k, :]`` the state after ``k`` steps.
        A DataArray (e.g. ``idata.posterior["v"]``) has its ``draw_dim``
        and ``unit_dim`` moved there. With
        ``classify=None``, the class labels themselves, shape (..., n_steps).
    classify : callable or None, default :func:`pymc_rbm.datasets.modes.classify_modes`
        Maps states (..., n_visible) to integer classes, ``AMBIGUOUS`` (-1)
        for ties; the default is the nearest of the four Artificial Modes.
    draw_dim : str, default "draw"
        Time dimension of a DataArray.
    unit_dim : str, optional
        Unit dimension of a DataArray; default its last dimension (where
        ``pm.sample`` puts the units of a vector variable).

    Returns
    -------
    ClassChanges
        ``n_changes``, ``first_change`` (steps, or :data:`NO_CHANGE`) and
        ``n_ambiguous``, each of shape (...).

    Notes
    -----
    An ambiguous sample does not end a run of one class: the classes
    ``0, -1, 0`` hold no change and ``0, -1, 1`` one change, counted at the
    ``1``. When the start is ambiguous, the first classified sample sets the
    chain's first class.

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm.datasets import artificial_mode_prototypes
    >>> from pymc_rbm.diagnostics import class_changes
    >>> modes = artificial_mode_prototypes()
    >>> chain = modes[[0, 0, 1, 1, 0]]  # (5 steps, 16 units)
    >>> class_changes(chain)
    ClassChanges(n_changes=array(2), first_change=array(2), n_ambiguous=array(0))
    >>> class_changes(np.array([[2, -1, 2, 3], [1, 1, 1, 1]]), classify=None).n_changes
    array([1, 0])
    """
    if isinstance(v, xr.DataArray):
        if draw_dim not in v.dims:
            raise ValueError(f"the DataArray has dimensions {v.dims}, but no {draw_dim!r} (draw_dim)")
        if classify is None:
            v = v.transpose(..., draw_dim).values
        else:
            unit_dim = v.dims[-1] if unit_dim is None else unit_dim
            if unit_dim == draw_dim or unit_dim not in v.dims:
                raise ValueError(
                    f"the DataArray has dimensions {v.dims}; unit_dim must name its unit dimension, "
                    f"not {unit_dim!r}"
                )
            v = v.transpose(..., draw_dim, unit_dim).values
    if classify is None:
        labels = np.asarray(v)
        if labels.dtype.kind not in "biu":
            raise ValueError(f"with classify=None, v must hold integer class labels, got dtype {labels.dtype}")
        if labels.ndim == 0:
            raise ValueError("the class labels need a step axis, got a scalar")
    else:
        arr = np.asarray(v)
        if arr.ndim < 2:
            raise ValueError(f"v must have shape (..., n_steps, n_visible), got shape {arr.shape}")
        labels = np.asarray(classify(arr))
        if labels.shape != arr.shape[:-1]:
            raise ValueError(f"classify returned shape {labels.shape} for states of shape {arr.shape}")
    labels = labels.astype(np.int64, copy=False)
    batch = labels.shape[:-1]
    flat = labels.reshape(-1, labels.shape[-1])
    n_changes = np.zeros(len(flat), dtype=np.int64)
    first = np.full(len(flat), NO_CHANGE, dtype=np.int64)
    ambiguous = flat == AMBIGUOUS
    for r, row in enumerate(flat):
        idx = np.flatnonzero(~ambiguous[r])
        if idx.size == 0:
            continue
        c = row[idx]
        n_changes[r] = np.count_nonzero(c[1:] != c[:-1])
        other = np.flatnonzero(c != c[0])
        if other.size:
            first[r] = idx[other[0]]
    return ClassChanges(
        n_changes.reshape(batch),
        first.reshape(batch),
        np.count_nonzero(ambiguous, axis=-1).astype(np.int64).reshape(batch),
    )

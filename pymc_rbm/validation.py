"""Checks of user input that more than one module needs."""

from __future__ import annotations

import numpy as np

__all__ = ["check_binary"]


def check_binary(data, n_visible: int | None = None, *, name: str = "data", dtype=np.float64) -> np.ndarray:
    """A float copy of binary ``data``, or a ValueError that says what is wrong.

    Parameters
    ----------
    data : array_like of shape (..., n_visible)
        Values in {0, 1} (booleans allowed).
    n_visible : int, optional
        Required size of the last axis.
    name : str
        How the error message calls the input.
    dtype : numpy dtype, default float64
        Type of the returned copy.

    Returns
    -------
    ndarray of shape (..., n_visible)
        A new array; ``data`` itself is never modified.
    """
    arr = np.asarray(data)
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be numeric or boolean with values in {{0, 1}}, got dtype {arr.dtype}")
    if arr.ndim == 0:
        raise ValueError(f"{name} must have at least one dimension (the units), got a scalar")
    if n_visible is not None and arr.shape[-1] != n_visible:
        raise ValueError(
            f"{name} has {arr.shape[-1]} units in its last dimension (shape {arr.shape}), "
            f"but the RBM has n_visible = {n_visible}"
        )
    bad = ~((arr == 0) | (arr == 1))
    if bad.any():
        first = np.argwhere(bad)[0]
        raise ValueError(
            f"{name} must be binary (values in {{0, 1}}); found {int(bad.sum())} other value(s), "
            f"e.g. {arr[tuple(first)].item()!r} at index {tuple(int(i) for i in first)}"
        )
    return arr.astype(dtype, copy=True)

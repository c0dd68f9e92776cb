"""Checks of user input that more than one module needs."""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["check_binary", "check_positive_int"]


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


def check_positive_int(value, name: str, minimum: int = 1, why: str = "", *, allow_none: bool = False):
    """``value`` as an int of at least ``minimum``, or a ValueError naming ``name``.

    Parameters
    ----------
    value : int
        Booleans and non-integers (``2.0`` included) are refused.
    name : str
        The argument's name, for the message.
    minimum : int, default 1
    why : str, optional
        Appended to the message (e.g. why the minimum is what it is).
    allow_none : bool, default False
        Let None through (returned as None).

    Returns
    -------
    int or None
    """
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        what = "a positive integer" if minimum == 1 else f"an integer of at least {minimum}"
        raise ValueError(f"{name} must be {what}{why}, got {value!r}")
    return int(value)

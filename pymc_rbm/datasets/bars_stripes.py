"""The n×n Bars and Stripes patterns (MacKay 2002)."""

from __future__ import annotations

import numpy as np

from pymc_rbm.validation import check_positive_int

__all__ = ["bars_and_stripes"]


def _all_lines(n: int) -> np.ndarray:
    """All ``2**n`` binary vectors of length ``n``, lexicographic (element 0 most significant)."""
    k = np.arange(2**n, dtype=np.int64)
    return ((k[:, None] >> np.arange(n - 1, -1, -1)) & 1).astype(np.uint8)


def bars_and_stripes(n: int = 4, *, variant: str = "distinct") -> np.ndarray:
    """The n×n Bars and Stripes patterns (MacKay 2002), flattened row by row.

    A *bars* pattern switches on whole columns (vertical bars), a *stripes*
    pattern whole rows (horizontal stripes). MacKay's generative process picks
    an orientation with probability 1/2 and then switches each of the ``n``
    columns (or rows) on with probability 1/2: its ``2**(n+1)`` equally likely
    outcomes contain the all-zero and the all-one image twice, once as bars
    and once as stripes.

    Brügge, Fischer & Igel (2013, §4.2) train on this set: "we
    used a 4×4 pixel version of Bars and Stripes (MacKay 2002)", with "batch
    learning for Bars and Stripes". It names no count; ``variant="mackay"``
    is MacKay's set of 32 outcomes, ``variant="distinct"`` the 30 distinct
    patterns.

    Parameters
    ----------
    n : int, default 4
        Side of the square image, ``n >= 2``.
    variant : {"distinct", "mackay"}, default "distinct"
        ``"distinct"``: the ``2**(n+1) - 2`` distinct patterns (30 for
        ``n = 4``). ``"mackay"``: all ``2**(n+1)`` outcomes of MacKay's
        process (32 for ``n = 4``), with the all-zero and all-one images
        twice each.

    Returns
    -------
    ndarray of shape (n_patterns, n * n), dtype uint8
        Deterministic order. ``"mackay"``: rows ``0 .. 2**n - 1`` are the bars,
        bars pattern ``k`` switching on column ``j`` when bit ``n-1-j`` of ``k``
        is set (column 0 is the most significant bit), so row 0 is all zero and
        row ``2**n - 1`` all one; rows ``2**n ..`` are the stripes in the same
        order with rows in place of columns. ``"distinct"``: the same, without
        the first (all-zero) and last (all-one) stripes pattern.

    Notes
    -----
    The largest average log-likelihood a model can reach on a training set is
    minus the entropy of its empirical distribution: ``-log 30 = -3.4012`` for
    the 30 distinct 4×4 patterns and ``-log 32 + log(2) / 8 = -3.3791`` for
    MacKay's 32 rows.

    Examples
    --------
    >>> from pymc_rbm.datasets import bars_and_stripes
    >>> bars_and_stripes().shape, bars_and_stripes(variant="mackay").shape
    ((30, 16), (32, 16))
    >>> bars_and_stripes(2, variant="mackay").tolist()  # doctest: +NORMALIZE_WHITESPACE
    [[0, 0, 0, 0], [0, 1, 0, 1], [1, 0, 1, 0], [1, 1, 1, 1],
     [0, 0, 0, 0], [0, 0, 1, 1], [1, 1, 0, 0], [1, 1, 1, 1]]
    """
    n = check_positive_int(n, "n", 2)
    if variant not in ("distinct", "mackay"):
        raise ValueError(f"variant must be 'distinct' or 'mackay', got {variant!r}")
    lines = _all_lines(n)  # (2**n, n)
    bars = np.repeat(lines[:, None, :], n, axis=1)  # every row equal: columns on
    stripes = np.repeat(lines[:, :, None], n, axis=2)  # every column equal: rows on
    if variant == "distinct":
        stripes = stripes[1:-1]
    return np.concatenate([bars, stripes]).reshape(-1, n * n)

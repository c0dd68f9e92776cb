"""Checks of any transition matrix: stationarity, irreducibility, period, convergence, SLEM."""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.sparse import csgraph

__all__ = [
    "assert_stationary",
    "is_irreducible",
    "period",
    "is_aperiodic",
    "is_primitive",
    "assert_converges",
    "slem",
]


def as_transition_matrix(T) -> np.ndarray:
    """``T`` as a square float64 array; ValueError for any other shape. What every check here starts with."""
    T = np.asarray(T, dtype=np.float64)
    if T.ndim != 2 or T.shape[0] != T.shape[1]:
        raise ValueError(f"a transition matrix must be square, got shape {T.shape}")
    return T


def assert_stationary(p, T, atol: float = 1e-12) -> None:
    """Assert that ``T`` is row-stochastic and leaves ``p`` invariant: ``max |p T - p| <= atol``.

    Parameters
    ----------
    p : array_like of shape (N,)
        A probability vector.
    T : array_like of shape (N, N)
    atol : float, default 1e-12

    Raises
    ------
    AssertionError
        Naming the worst state and the size of the violation.
    """
    T = as_transition_matrix(T)
    p = np.asarray(p, dtype=np.float64)
    if p.shape != T.shape[:1]:
        raise ValueError(f"p has shape {p.shape}, T has shape {T.shape}")
    if np.any(T < 0.0):
        raise AssertionError(f"T has negative entries (min {T.min():.3g})")
    row_err = np.abs(T.sum(axis=1) - 1.0)
    if row_err.max() > atol:
        i = int(row_err.argmax())
        raise AssertionError(f"row {i} of T sums to {T[i].sum()!r}, not 1 (tolerance {atol:g})")
    err = np.abs(p @ T - p)
    if err.max() > atol:
        i = int(err.argmax())
        raise AssertionError(
            f"p is not stationary for T: |(p T - p)[{i}]| = {err[i]:.3g} > {atol:g} "
            f"(p[{i}] = {p[i]:.6g}, (p T)[{i}] = {(p @ T)[i]:.6g})"
        )


def is_irreducible(T) -> bool:
    """Whether every state reaches every other: the graph of ``T > 0`` is strongly connected."""
    T = as_transition_matrix(T)
    n_components, _ = csgraph.connected_components(sparse.csr_matrix(T > 0), directed=True, connection="strong")
    return n_components == 1


def period(T) -> int:
    """Period of an irreducible chain: the gcd of the lengths of its cycles.

    Computed from breadth-first levels ``d`` from state 0: the period is the
    gcd of ``d[i] + 1 - d[j]`` over all edges ``i → j``.

    Raises
    ------
    ValueError
        When ``T`` is not irreducible (the period is then a property of
        each class, not of the chain).
    """
    T = as_transition_matrix(T)
    if not is_irreducible(T):
        raise ValueError("the period is defined here for irreducible chains only; T is reducible")
    graph = sparse.csr_matrix(T > 0)
    level = csgraph.shortest_path(graph, indices=0, unweighted=True).astype(np.int64)
    i, j = graph.nonzero()
    return int(np.gcd.reduce(np.abs(level[i] + 1 - level[j])))


def is_aperiodic(T) -> bool:
    """Whether an irreducible chain has period 1 (see :func:`period`)."""
    return period(T) == 1


def is_primitive(T) -> bool:
    """Whether some power of ``T`` is entrywise positive (irreducible and aperiodic).

    Squares the boolean pattern of ``T`` until the power passes Wielandt's
    bound ``(N - 1)**2 + 1``: a primitive matrix's powers beyond it are all
    positive, and no power of an imprimitive one is.
    """
    T = as_transition_matrix(T)
    n = T.shape[0]
    a = (T > 0).astype(np.float64)
    power, bound = 1, (n - 1) ** 2 + 1
    while power < bound:
        a = ((a @ a) > 0).astype(np.float64)
        power *= 2
    return bool(a.all())


def assert_converges(p, T, atol: float = 1e-12) -> None:
    """Assert everything that makes a chain with matrix ``T`` converge to ``p``.

    ``T`` is row-stochastic, ``p T = p`` to ``atol``, and the chain is
    irreducible and aperiodic.
    """
    assert_stationary(p, T, atol)
    if not is_irreducible(T):
        raise AssertionError("T is not irreducible")
    per = period(T)
    if per != 1:
        raise AssertionError(f"T is periodic with period {per}")


def slem(T) -> float:
    """Second largest eigenvalue modulus of a transition matrix.

    Brügge, Fischer & Igel (2013) §4.1: "The convergence speed of an ergodic, homogeneous Markov
    chain with finite state space is governed by the second largest
    eigenvector modulus (SLEM) [...] the SLEM computation considers absolute
    values". One eigenvalue closest to 1 (Perron's) is set aside and the
    largest modulus of the others returned; a reducible chain has a second
    eigenvalue 1.

    Parameters
    ----------
    T : array_like of shape (N, N)

    Returns
    -------
    float
    """
    T = as_transition_matrix(T)
    if T.shape[0] < 2:
        return 0.0
    ev = np.linalg.eigvals(T)
    return float(np.abs(np.delete(ev, np.argmin(np.abs(ev - 1.0)))).max())

"""Brute-force references for small RBMs, written independently of the package.

Everything here enumerates *all* joint states ``(v, h)`` and uses the plain
textbook formulas; nothing is imported from :mod:`pymc_rbm`, so a bug in the
package cannot hide in the reference.

Binary form:  ``E(v, h) = -v·W·h - vbias·v - hbias·h``,  v, h in {0, 1}.
Spin form:    ``E(s, t) = -s·J·t - vfield·s - hfield·t``, s, t in {-1, 1}.

States are listed in lexicographic order with unit 0 the most significant
bit (the order of ``itertools.product``), the order the package promises.
"""

from __future__ import annotations

import itertools
from decimal import Decimal, localcontext

import numpy as np

MAX_JOINT_UNITS = 22  # 2**22 joint states at most: a few MB per table row block


def all_states(n: int, values=(0.0, 1.0)) -> np.ndarray:
    """All ``len(values)**n`` states of ``n`` units, lexicographic, unit 0 slowest."""
    return np.array(list(itertools.product(values, repeat=n)), dtype=np.float64).reshape(-1, n)


def _lse(x, axis=None):
    """log Σ exp(x), stable; plain formula (max shift)."""
    x = np.asarray(x, dtype=np.float64)
    m = np.max(x, axis=axis, keepdims=True)
    out = m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))
    return np.squeeze(out, axis=axis) if axis is not None else float(out.reshape(()))


def neg_energy_table(W, vbias, hbias, values=(0.0, 1.0)):
    """``-E(v, h)`` for every pair: array of shape (n_v_states, n_h_states), plus the states."""
    W, vbias, hbias = (np.asarray(a, dtype=np.float64) for a in (W, vbias, hbias))
    nv, nh = W.shape
    assert nv + nh <= MAX_JOINT_UNITS, "too large for brute force"
    V = all_states(nv, values)
    H = all_states(nh, values)
    table = np.einsum("ai,ij,bj->ab", V, W, H) + (V @ vbias)[:, None] + (H @ hbias)[None, :]
    return table, V, H


def log_z(W, vbias, hbias) -> float:
    """log Z of the binary RBM, all joint states enumerated."""
    table, _, _ = neg_energy_table(W, vbias, hbias)
    return _lse(table)


def log_z_spin(J, vfield, hfield) -> float:
    """log Z of the spin RBM ``E = -s·J·t - vfield·s - hfield·t``, all ±1 states enumerated."""
    table, _, _ = neg_energy_table(J, vfield, hfield, values=(-1.0, 1.0))
    return _lse(table)


def log_marginal_visible(W, vbias, hbias) -> np.ndarray:
    """log p(v) for every visible state (lexicographic order)."""
    table, _, _ = neg_energy_table(W, vbias, hbias)
    return _lse(table, axis=1) - _lse(table)


def free_energy(v, W, vbias, hbias) -> np.ndarray:
    """``F(v) = -log Σ_h exp(-E(v, h))`` by enumerating h; v of shape (..., nv)."""
    v = np.asarray(v, dtype=np.float64)
    W, vbias, hbias = (np.asarray(a, dtype=np.float64) for a in (W, vbias, hbias))
    H = all_states(W.shape[1])
    neg_e = np.einsum("...i,ij,bj->...b", v, W, H) + (v @ vbias)[..., None] + (H @ hbias)
    return -_lse(neg_e, axis=-1)


def energy(v, h, W, vbias, hbias) -> float:
    """E(v, h) of a single pair, as explicit Python loops."""
    total = 0.0
    for i in range(len(v)):
        for j in range(len(h)):
            total -= v[i] * W[i][j] * h[j]
    for i in range(len(v)):
        total -= vbias[i] * v[i]
    for j in range(len(h)):
        total -= hbias[j] * h[j]
    return total


def conditional_hidden(v, W, vbias, hbias) -> np.ndarray:
    """p(h_j = 1 | v) for one v, by enumerating h (no sigmoid formula)."""
    H = all_states(W.shape[1])
    neg_e = np.array([-energy(v, h, W, vbias, hbias) for h in H])
    p = np.exp(neg_e - _lse(neg_e))
    return p @ H


def conditional_visible(h, W, vbias, hbias) -> np.ndarray:
    """p(v_i = 1 | h) for one h, by enumerating v (no sigmoid formula)."""
    V = all_states(W.shape[0])
    neg_e = np.array([-energy(v, h, W, vbias, hbias) for v in V])
    p = np.exp(neg_e - _lse(neg_e))
    return p @ V


def moments(W, vbias, hbias):
    """⟨v⟩, ⟨h⟩, ⟨v hᵀ⟩ under the joint distribution, all states enumerated."""
    table, V, H = neg_energy_table(W, vbias, hbias)
    p = np.exp(table - _lse(table))
    return p.sum(axis=1) @ V, p.sum(axis=0) @ H, V.T @ p @ H


# ------------------------------------------------------ high precision (Decimal)
def free_energy_decimal(v, W, vbias, hbias, *, digits: int = 60) -> float:
    """F(v) = -vbias·v - Σ_j ln(1 + exp(hbias_j + (v·W)_j)) in ``digits``-digit decimal arithmetic.

    No overflow is possible: Decimal has an unbounded exponent range for our purposes.
    """
    with localcontext() as ctx:
        ctx.prec = digits
        nv, nh = len(W), len(W[0])
        D = Decimal
        total = D(0)
        for i in range(nv):
            total -= D(float(vbias[i])) * D(float(v[i]))
        for j in range(nh):
            a = D(float(hbias[j]))
            for i in range(nv):
                a += D(float(v[i])) * D(float(W[i][j]))
            total -= (D(1) + a.exp()).ln()
        return float(total)


def free_energy_enumerated_decimal(v, W, vbias, hbias, *, digits: int = 60) -> float:
    """F(v) = -ln Σ_h exp(-E(v, h)) with every h enumerated, in decimal arithmetic."""
    with localcontext() as ctx:
        ctx.prec = digits
        total = Decimal(0)
        for h in itertools.product((0.0, 1.0), repeat=len(W[0])):
            e = Decimal(0)
            for i in range(len(v)):
                for j in range(len(h)):
                    e -= Decimal(float(v[i])) * Decimal(float(W[i][j])) * Decimal(h[j])
            for i in range(len(v)):
                e -= Decimal(float(vbias[i])) * Decimal(float(v[i]))
            for j in range(len(h)):
                e -= Decimal(float(hbias[j])) * Decimal(h[j])
            total += (-e).exp()
        return float(-total.ln())


def sigmoid_decimal(x: float, *, digits: int = 60) -> float:
    with localcontext() as ctx:
        ctx.prec = digits
        return float(Decimal(1) / (Decimal(1) + (-Decimal(float(x))).exp()))

"""The Numba-compiled loops of :mod:`pymc_rbm.kernels.activations` and :mod:`pymc_rbm.kernels.compiled`.

Imported only on first use (importing :mod:`pymc_rbm.kernels` does not load
Numba). The functions live at module level so that Numba's on-disk cache
finds them again in a new process; defined inside a function they were
compiled afresh in every process (7-10 s before the first draw).
"""

from __future__ import annotations

import numpy as np
from numba import njit

@njit(cache=True, nogil=True)
def add_changed_rows_(a, old, new, M, max_changes):  # pragma: no cover - compiled
    """``a += (new - old) @ M`` in place over the changed units; their number, or -1 (``a`` untouched)
    when more than ``max_changes`` changed."""
    n_chains, n = old.shape
    total = 0
    for k in range(n_chains):
        for i in range(n):
            if old[k, i] != new[k, i]:
                total += 1
    if total > max_changes:
        return -1
    m = M.shape[1]
    for k in range(n_chains):
        for i in range(n):
            d = new[k, i] - old[k, i]
            if d != 0.0:
                for j in range(m):
                    a[k, j] += d * M[i, j]
    return total

@njit(cache=True, nogil=True)
def add_changed_rows(a, old, new, M, max_changes):  # pragma: no cover - compiled
    out = a.copy()
    total = add_changed_rows_(out, old, new, M, max_changes)
    if total <= 0:
        return a, total == 0
    return out, True


@njit(cache=True, nogil=True, inline="always")
def update_layer(u, x, a, alpha, gibbs, out):  # pragma: no cover - compiled
    for i in range(x.shape[0]):
        if gibbs:
            new = 1.0 if u[i] < 1.0 / (1.0 + np.exp(-a[i])) else 0.0
        else:  # written without data-dependent branches: most units change in some regimes
            xi = x[i]
            s = a[i] * (1.0 - 2.0 * xi)  # log p(other) / p(current)
            if alpha == 0.0:
                q = 1.0 / (1.0 + np.exp(-s))
            else:
                q = np.exp(min(s, 0.0))  # 1 towards the more probable state
                if s == 0.0:
                    q = 0.5  # the tie rule
                if alpha != 1.0:
                    q = q * alpha + (1.0 / (1.0 + np.exp(-s))) * (1.0 - alpha)
            flip = 1.0 if u[i] < q else 0.0
            new = xi + flip - 2.0 * xi * flip  # x XOR flip
        out[i] = new

@njit(cache=True, nogil=True)
def sum_rows(a, x, M, bias):  # pragma: no cover - compiled
    """``a <- bias + x @ M`` in place, adding only the rows of the units that are on."""
    for k in range(x.shape[0]):
        a[k, :] = bias
        for i in range(x.shape[1]):
            xi = x[k, i]
            if xi != 0.0:
                for j in range(M.shape[1]):
                    a[k, j] += xi * M[i, j]

@njit(cache=True, nogil=True)
def propagate(a, old, new, M, bias):  # pragma: no cover - compiled
    """``a <- bias + new @ M`` in place by the changed rows or, when fewer, the rows of the units on.

    True when updated incrementally (by the changed rows, some changed)."""
    n_on = 0
    for k in range(new.shape[0]):
        for i in range(new.shape[1]):
            if new[k, i] != 0.0:
                n_on += 1
    total = add_changed_rows_(a, old, new, M, n_on)
    if total < 0:
        sum_rows(a, new, M, bias)
        return False
    return total > 0

@njit(cache=True, nogil=True)
def sweeps(u, v, h, a_h, a_v, W, W_T, vbias, hbias, alpha, gibbs, a_v_valid, n_incremental,
           full_every):  # pragma: no cover - compiled
    n_chains, n_v = v.shape
    n_h = h.shape[1]
    n_sweeps = u.shape[0]
    h_new = np.empty_like(h)
    v_new = np.empty_like(v)
    for t in range(n_sweeps):
        if n_incremental >= full_every:
            n_incremental = 0
            sum_rows(a_h, v, W, hbias)
            a_v_valid = False
        for k in range(n_chains):
            update_layer(u[t, k * n_h:(k + 1) * n_h], h[k], a_h[k], alpha, gibbs, h_new[k])
        if a_v_valid:
            n_incremental += propagate(a_v, h, h_new, W_T, vbias)
        else:
            sum_rows(a_v, h_new, W_T, vbias)
            a_v_valid = True
        h[:, :] = h_new
        offset = n_chains * n_h
        for k in range(n_chains):
            update_layer(u[t, offset + k * n_v:offset + (k + 1) * n_v], v[k], a_v[k], alpha, gibbs, v_new[k])
        n_incremental += propagate(a_h, v, v_new, W, hbias)
        v[:, :] = v_new
    return n_incremental

@njit(cache=True, nogil=True)
def free_energy(v, a_h, vbias):  # pragma: no cover - compiled
    """``-v·vbias - Σ_j softplus(a_h)_j`` per chain, with one ``log`` per 512 hidden units.

    ``softplus(x) = max(x, 0) + log(1 + exp(-|x|))`` and the factors
    ``1 + exp(-|x|)`` lie in [1, 2], so up to 512 of them multiply without
    overflow and their product's log replaces 512 ``log1p`` calls; the
    product's relative rounding error (~512 ulp) is a few 1e-14 in ``F``.
    """
    n_chains = v.shape[0]
    out = np.empty(n_chains)
    for k in range(n_chains):
        f = 0.0
        for i in range(v.shape[1]):
            f -= v[k, i] * vbias[i]
        prod = 1.0
        for j in range(a_h.shape[1]):
            x = a_h[k, j]
            f -= max(x, 0.0)
            prod *= 1.0 + np.exp(-abs(x))
            if (j & 511) == 511:
                f -= np.log(prod)
                prod = 1.0
        out[k] = f - np.log(prod)
    return out

@njit(cache=True, nogil=True)
def draw(u, v, h, a_h, a_v, W, W_T, vbias, hbias, alpha, gibbs, a_v_valid, n_incremental, full_every,
         v_out, stats):  # pragma: no cover - compiled
    v_start = v.copy()
    h_start = h.copy()
    n_incremental = sweeps(u, v, h, a_h, a_v, W, W_T, vbias, hbias, alpha, gibbs, a_v_valid, n_incremental,
                           full_every)
    f = free_energy(v, a_h, vbias)
    for k in range(v.shape[0]):
        changed = 0
        for i in range(v.shape[1]):
            v_out[k, i] = v[k, i]
            if v[k, i] != v_start[k, i]:
                changed += 1
        h_changed = 0
        for j in range(h.shape[1]):
            if h[k, j] != h_start[k, j]:
                h_changed += 1
        stats[k, 0] = f[k]
        stats[k, 1] = changed
        stats[k, 2] = h_changed
    return n_incremental

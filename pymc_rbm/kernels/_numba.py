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

@njit(cache=True, nogil=True)
def energies(v, h, W, vbias, hbias):  # pragma: no cover - compiled
    """``E(v, h) = -v·W·h - vbias·v - hbias·h`` of replicas ``(K, B, ·)``: shape (K, B)."""
    k_, b_ = v.shape[0], v.shape[1]
    out = np.empty((k_, b_))
    for r in range(k_):
        for b in range(b_):
            e = 0.0
            for j in range(h.shape[2]):
                if h[r, b, j] != 0.0:
                    s = hbias[j]
                    for i in range(v.shape[2]):
                        if v[r, b, i] != 0.0:
                            s += W[i, j]
                    e -= s
            for i in range(v.shape[2]):
                e -= v[r, b, i] * vbias[i]
            out[r, b] = e
    return out


@njit(cache=True, nogil=True)
def tempered_round(u, swap_u, v, h, W, W_T, vbias, hbias, betas, alpha, gibbs, parity, n_swept,
                   labels, swap_sum, swap_n):  # pragma: no cover - compiled
    """One round of the first ``n_swept`` replicas of ``(K, B, ·)`` arrays, in place.

    Each replica ``r`` is swept at ``β_r`` (the layer updates of
    :func:`update_layer` on the activations times ``β_r``, summed from the rows
    of the units that are on), then the pairs ``(r, r + 1)`` of the given
    parity with ``r + 1 < n_swept`` are swapped with probability
    ``min(1, exp((β_{r+1} - β_r)(E_{r+1} - E_r)))`` (``log u < log ratio``, the
    rule of :func:`~pymc_rbm.kernels.metropolis.metropolis_accept`); labels
    follow their replicas, and each pair's acceptance probability is added to
    ``swap_sum`` and its attempts to ``swap_n``. ``u`` has shape
    ``(n_swept, B, n_hidden + n_visible)``, ``swap_u`` ``(K - 1, B)``.
    """
    n_b = v.shape[1]
    n_h = h.shape[2]
    n_v = v.shape[2]
    a_h = np.empty((1, n_h))
    a_v = np.empty((1, n_v))
    for r in range(n_swept):
        beta = betas[r]
        for b in range(n_b):
            sum_rows(a_h, v[r, b:b + 1], W, hbias)
            for j in range(n_h):
                a_h[0, j] *= beta
            update_layer(u[r, b, :n_h], h[r, b], a_h[0], alpha, gibbs, h[r, b])
            sum_rows(a_v, h[r, b:b + 1], W_T, vbias)
            for i in range(n_v):
                a_v[0, i] *= beta
            update_layer(u[r, b, n_h:], v[r, b], a_v[0], alpha, gibbs, v[r, b])
    e = energies(v[:n_swept], h[:n_swept], W, vbias, hbias)
    for r in range(parity, n_swept - 1, 2):
        for b in range(n_b):
            log_ratio = (betas[r + 1] - betas[r]) * (e[r + 1, b] - e[r, b])
            swap_sum[r] += np.exp(min(log_ratio, 0.0))
            swap_n[r] += 1.0
            if np.log(swap_u[r, b]) < log_ratio:
                for i in range(n_v):
                    t = v[r, b, i]
                    v[r, b, i] = v[r + 1, b, i]
                    v[r + 1, b, i] = t
                for j in range(n_h):
                    t = h[r, b, j]
                    h[r, b, j] = h[r + 1, b, j]
                    h[r + 1, b, j] = t
                lab = labels[r, b]
                labels[r, b] = labels[r + 1, b]
                labels[r + 1, b] = lab


@njit(cache=True, nogil=True)
def count_round_trips(labels, last_end, went_up):  # pragma: no cover - compiled
    """Round trips completed now: a label back at the bottom rung after reaching the top since its last visit.

    ``last_end[label, b]``: 0 none, 1 bottom, 2 top; ``went_up``: reached the top after the bottom.
    """
    k = labels.shape[0]
    trips = 0
    for b in range(labels.shape[1]):
        top = labels[k - 1, b]
        if last_end[top, b] == 1:
            went_up[top, b] = True
        last_end[top, b] = 2
        bottom = labels[0, b]
        if last_end[bottom, b] == 2 and went_up[bottom, b]:
            trips += 1
            went_up[bottom, b] = False
        last_end[bottom, b] = 1
    return trips


@njit(cache=True, nogil=True)
def informed_proposal(u, v, h, W, W_T, vbias, hbias, tilt, alpha, alpha_v, gibbs, h_out, v_out,
                      a_v):  # pragma: no cover - compiled
    """One chain's hidden update (:func:`update_layer`) and a visible proposal from its tilted conditional.

    ``v``, ``h``, ``h_out``, ``v_out``, ``a_v`` have shape (1, n); ``a_v``
    receives the visible logits ``vbias + W·h'`` given the new hidden state;
    the proposal is the update with weight ``alpha_v`` on ``a_v + tilt``.
    """
    n_h = h.shape[1]
    a_h = np.empty((1, n_h))
    sum_rows(a_h, v, W, hbias)
    update_layer(u[:n_h], h[0], a_h[0], alpha, gibbs, h_out[0])
    sum_rows(a_v, h_out, W_T, vbias)
    tilted = a_v[0] + tilt
    update_layer(u[n_h:], v[0], tilted, alpha_v, gibbs, v_out[0])


@njit(cache=True, nogil=True)
def log_move(x, x_new, a, alpha, gibbs):  # pragma: no cover - compiled
    """``Σ_i log P(x_i -> x_new_i)`` of :func:`update_layer`'s rule at logits ``a`` (1-D arrays)."""
    total = 0.0
    for i in range(x.shape[0]):
        s = a[i] * (1.0 - 2.0 * x[i])  # log p(other) / p(current)
        q_g = 1.0 / (1.0 + np.exp(-s))
        stay_g = 1.0 / (1.0 + np.exp(s))
        if gibbs or alpha == 0.0:
            q, stay = q_g, stay_g
        else:
            q_t = 0.5 if s == 0.0 else np.exp(min(s, 0.0))
            q = q_t * alpha + q_g * (1.0 - alpha)
            stay = (1.0 - q_t) * alpha + stay_g * (1.0 - alpha)
        p = q if x[i] != x_new[i] else stay
        total += np.log(p) if p > 0.0 else -np.inf
    return total


@njit(cache=True, nogil=True)
def tilted_log_ratio(v, v_new, a, tilt, tilt_new, log_rest, log_rest_new, alpha, gibbs):  # pragma: no cover
    """One chain's ratio of :func:`pymc_rbm.kernels.informed.tilted_log_ratio` (1-D arrays, scalars)."""
    if log_rest_new == -np.inf:
        return -np.inf
    if log_rest == -np.inf:
        return np.inf
    out = log_rest_new - log_rest
    for i in range(v.shape[0]):
        out += (v_new[i] - v[i]) * a[i]
    out += log_move(v_new, v, a + tilt_new, alpha, gibbs) - log_move(v, v_new, a + tilt, alpha, gibbs)
    return out

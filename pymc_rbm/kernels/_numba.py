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


# ---------------------------------------------------------------- the layer rule, written once
# One unit's update given its logit ``a``: Gibbs ``x' = [u < sigmoid(a)]``, or flip-the-state mixed with
# Gibbs by ``alpha``, ``x' = x XOR [u < q]`` with ``s = log p(other) / p(current) = ±a``,
# ``q = alpha q_T + (1 - alpha) sigmoid(s)``, ``q_T = exp(min(s, 0))`` (1/2 at the tie ``s = 0``). Every
# case needs the one exponential ``E = exp(-|a|)``: ``q_T`` is ``E`` or 1, and ``u < sigmoid(y)`` for
# ``|y| = |a|`` is ``u (1 + E) < 1`` for ``y >= 0`` and ``u (1 + E) < E`` for ``y < 0`` (no division, no
# overflow). :func:`update_layer` takes it unit by unit with a scalar ``exp``; a large batch takes each
# row's exponentials in one vectorised loop (:func:`exp_neg_abs`) and passes ``E`` to :func:`rule_state`.
@njit(cache=True, nogil=True, inline="always")
def below_sigmoid(u, y, E):  # pragma: no cover - compiled
    """``u < sigmoid(y)`` given ``E = exp(-|y|)``."""
    return u * (1.0 + E) < (1.0 if y >= 0.0 else E)


@njit(cache=True, nogil=True, inline="always")
def change_probability(s, E, alpha):  # pragma: no cover - compiled
    """Flip-the-state mixed with Gibbs: the probability that a unit changes, given ``s = log p(other) /
    p(current)`` and ``E = exp(-|s|)``: ``q = alpha q_T + (1 - alpha) sigmoid(s)``, ``q_T = exp(min(s, 0))``
    and 1/2 at the tie ``s = 0`` (Brügge, Fischer & Igel 2013, Definition 1 and §5.2)."""
    q = E if s < 0.0 else 1.0  # 1 towards the more probable state
    if s == 0.0:
        q = 0.5  # the tie rule
    if alpha != 1.0:
        q = q * alpha + ((1.0 if s >= 0.0 else E) / (1.0 + E)) * (1.0 - alpha)
    return q


@njit(cache=True, nogil=True, inline="always")
def rule_state(u, x, a, E, alpha, gibbs):  # pragma: no cover - compiled
    """The unit's new state from its uniform ``u``, state ``x``, logit ``a`` and ``E = exp(-|a|)``."""
    if gibbs:
        return 1.0 if below_sigmoid(u, a, E) else 0.0
    # written without data-dependent branches: most units change in some regimes
    s = a * (1.0 - 2.0 * x)  # log p(other) / p(current)
    if alpha == 0.0:
        flip = below_sigmoid(u, s, E)  # u < sigmoid(s) = change_probability(s, E, 0), without the division
    else:
        flip = u < change_probability(s, E, alpha)
    f = 1.0 if flip else 0.0
    return x + f - 2.0 * x * f  # x XOR flip


@njit(cache=True, nogil=True, inline="always")
def update_units(u, x, a, alpha, gibbs, out):  # pragma: no cover - compiled
    for i in range(x.shape[0]):
        out[i] = rule_state(u[i], x[i], a[i], np.exp(-abs(a[i])), alpha, gibbs)


@njit(cache=True, nogil=True, inline="always")
def update_layer(u, x, a, alpha, gibbs, out):  # pragma: no cover - compiled
    """One chain's layer update by the rule, unit by unit (``out`` may be ``x``).

    The operator is fixed per call, so each case gets a loop of its own, specialised by the compiler
    (a loop over the general rule reading ``alpha`` and ``gibbs`` at run time is slower; docs/sampling.md)."""
    if gibbs:
        update_units(u, x, a, 1.0, True, out)
    elif alpha == 1.0:
        update_units(u, x, a, 1.0, False, out)
    elif alpha == 0.0:
        update_units(u, x, a, 0.0, False, out)
    else:
        update_units(u, x, a, alpha, False, out)


@njit(cache=True, nogil=True, inline="always")
def update_row(u, x, a, E, alpha, gibbs, out):  # pragma: no cover - compiled
    """One row by :func:`rule_state` into ``out`` (``x`` is not modified); the number of changed units."""
    c = 0
    for i in range(x.shape[0]):
        new = rule_state(u[i], x[i], a[i], E[i], alpha, gibbs)
        out[i] = new
        c += 1 if new != x[i] else 0
    return c


@njit(cache=True, nogil=True)
def update_rows(u, x, a, alpha, gibbs, out, counts):  # pragma: no cover - compiled
    """A batch's layer update by the rule, given its uniforms ``u`` (all arrays (n_chains, n)), into ``out``.

    Each row's exponentials are taken in one vectorised loop (:func:`exp_neg_abs`) before the rule; ``counts``
    receives the changed units per row. The NumPy kernels' layer update
    (:meth:`pymc_rbm.kernels.layer.LayerRule.update`)."""
    e = np.empty(x.shape[1])
    for k in range(x.shape[0]):
        exp_neg_abs(a[k], a[k], False, e)
        # the operator is fixed per call: a loop of its own for each case, specialised by the compiler
        if gibbs:
            counts[k] = update_row(u[k], x[k], a[k], e, 1.0, True, out[k])
        elif alpha == 1.0:
            counts[k] = update_row(u[k], x[k], a[k], e, 1.0, False, out[k])
        elif alpha == 0.0:
            counts[k] = update_row(u[k], x[k], a[k], e, 0.0, False, out[k])
        else:
            counts[k] = update_row(u[k], x[k], a[k], e, alpha, False, out[k])


@njit(cache=True, nogil=True)
def gibbs_rows(u, a, out):  # pragma: no cover - compiled
    """:func:`update_rows` by the Gibbs rule, which does not read the current states (none are given)."""
    e = np.empty(a.shape[1])
    for k in range(a.shape[0]):
        exp_neg_abs(a[k], a[k], False, e)
        for i in range(a.shape[1]):
            out[k, i] = rule_state(u[k, i], 0.0, a[k, i], e[i], 1.0, True)


@njit(cache=True, nogil=True)
def change_probabilities(x, a, alpha, out):  # pragma: no cover - compiled
    """``out = `` :func:`change_probability` of each unit of ``x`` at logits ``a`` (1-D arrays)."""
    for i in range(x.shape[0]):
        s = a[i] if x[i] == 0 else -a[i]
        out[i] = change_probability(s, np.exp(-abs(s)), alpha)


@njit(cache=True, nogil=True)
def add_changes(a, d, M):  # pragma: no cover - compiled
    """``a += d @ M`` by the rows of the nonzero entries of ``d`` (the changes of :func:`dense_layer`),
    in the order and with the arithmetic of :func:`add_changed_rows_`."""
    for k in range(d.shape[0]):
        for i in range(d.shape[1]):
            if d[k, i] != 0:
                di = float(d[k, i])
                for j in range(M.shape[1]):
                    a[k, j] += di * M[i, j]


@njit(cache=True, nogil=True)
def add_bias_(a, bias):  # pragma: no cover - compiled
    """``a += bias`` in place, per row."""
    for k in range(a.shape[0]):
        for j in range(a.shape[1]):
            a[k, j] += bias[j]


# ---------------------------------------------------------------- the dense path of large batches
# Per layer, chain by chain: the row's exponentials ``E = exp(-|a|)`` (:func:`exp_neg_abs`) and its uniforms
# (:func:`philox_uniforms`) in vectorised loops into buffers that stay in the L1 cache, then the rule
# (:func:`rule_row`) over the row; no array of a whole layer's uniforms or exponentials is written.
_U32 = np.uint64(0xFFFFFFFF)
_PHILOX_M0, _PHILOX_M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_PHILOX_W0, _PHILOX_W1 = np.uint64(0x9E3779B9), np.uint64(0xBB67AE85)
_TWO_M53 = 1.0 / 9007199254740992.0


@njit(cache=True, nogil=True, inline="always")
def philox4x32(c0, c1, c2, c3, k0, k1):  # pragma: no cover - compiled
    """Philox4x32-10 (Salmon, Moraes, Dror & Shaw 2011): the 4 x 32 random bits of counter ``c`` under key ``k``.

    Each word is a uint64 below 2**32. A counter-based generator: block ``c`` is a function of ``(c, k)``
    alone, so a loop over counters has no carried state and vectorises (unlike NumPy's sequential PCG64,
    one call per uniform)."""
    for _ in range(10):
        p0 = _PHILOX_M0 * c0
        p1 = _PHILOX_M1 * c2
        n0 = (p1 >> np.uint64(32)) ^ c1 ^ k0
        n2 = (p0 >> np.uint64(32)) ^ c3 ^ k1
        c1, c3 = p1 & _U32, p0 & _U32
        c0, c2 = n0, n2
        k0, k1 = (k0 + _PHILOX_W0) & _U32, (k1 + _PHILOX_W1) & _U32
    return c0, c1, c2, c3


@njit(cache=True, nogil=True)
def philox_uniforms(key, row, stream, u):  # pragma: no cover - compiled
    """Fill ``u`` (of even length) with uniforms ``m 2**-53`` (NumPy's ``random()`` resolution), two per block.

    Block ``j`` (``u[2j]``, ``u[2j + 1]``) is Philox's counter ``(j, row, stream ^ key[2], key[3])`` under
    the key ``(key[0], key[1])``: ``key`` holds four 32-bit words (uint64)."""
    c1 = np.uint64(row) & _U32
    c2 = (np.uint64(stream) ^ key[2]) & _U32
    c3, k0, k1 = key[3], key[0], key[1]
    for j in range(u.shape[0] // 2):
        r0, r1, r2, r3 = philox4x32(np.uint64(j), c1, c2, c3, k0, k1)
        u[2 * j] = np.float64(np.int64((r0 << np.uint64(21)) | (r1 >> np.uint64(11)))) * _TWO_M53
        u[2 * j + 1] = np.float64(np.int64((r2 << np.uint64(21)) | (r3 >> np.uint64(11)))) * _TWO_M53


_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01  # fdlibm's split of log 2: k * _LN2_HI is exact for |k| < 2**20
_LN2_LO = 1.90821492927058770002e-10


@njit(cache=True, nogil=True, fastmath={"contract"})
def exp_neg_abs(a, bias, add_bias, e):  # pragma: no cover - compiled
    """``e = exp(-|a|)`` for a 1-D row, in a loop that vectorises; with ``add_bias``, ``a += bias`` first.

    ``exp(y) = 2**k exp(r)``, ``r = y - k log 2`` in two parts (Cody & Waite 1980), ``|r| <= log(2) / 2``,
    ``exp(r)`` by its Taylor polynomial to degree 13 (remainder below 1e-17 relative), ``2**k`` added to the
    exponent bits: within one ulp of the exact value (measured: at most 0.85 ulp; NumPy's 0.71). Below
    ``-708`` (subnormal results) NumPy's ``exp`` takes over.
    """
    n = a.shape[0]
    bits = e.view(np.int64)
    n_tiny = 0
    for i in range(n):
        x = a[i]
        if add_bias:
            x += bias[i]
            a[i] = x
        y = -abs(x)
        n_tiny += 1 if y < -708.0 else 0
        y = max(y, -708.0)
        k = np.floor(y * _LOG2E + 0.5)
        r = (y - k * _LN2_HI) - k * _LN2_LO
        p = 1.0 / 6227020800.0
        p = p * r + 1.0 / 479001600.0
        p = p * r + 1.0 / 39916800.0
        p = p * r + 1.0 / 3628800.0
        p = p * r + 1.0 / 362880.0
        p = p * r + 1.0 / 40320.0
        p = p * r + 1.0 / 5040.0
        p = p * r + 1.0 / 720.0
        p = p * r + 1.0 / 120.0
        p = p * r + 1.0 / 24.0
        p = p * r + 1.0 / 6.0
        p = p * r + 0.5
        p = p * r + 1.0
        e[i] = p * r + 1.0
        bits[i] += np.int64(k) << 52  # exp(r) in [0.70, 1.42] times 2**k, k >= -1021: a normal number
    if n_tiny:
        for i in range(n):
            if -abs(a[i]) < -708.0:
                e[i] = np.exp(-abs(a[i]))


@njit(cache=True, nogil=True, inline="always")
def rule_row(u, x, a, E, alpha, gibbs, d, out, copy):  # pragma: no cover - compiled
    """One row (1-D arrays) by :func:`rule_state`, in place; ``d`` (int8) receives ``x' - x``, ``out`` (any
    dtype) ``x'`` when ``copy``. Returns the number of changed units."""
    c = 0
    for i in range(x.shape[0]):
        old = x[i]
        new = rule_state(u[i], old, a[i], E[i], alpha, gibbs)
        x[i] = new
        d[i] = np.int8(new - old)
        if copy:
            out[i] = new
        c += 1 if new != old else 0
    return c


@njit(cache=True, nogil=True)
def dense_layer(key, stream, x, a, bias, add_bias, E, e_known, alpha, gibbs, counts, d, out):  # pragma: no cover
    """A batch's layer update ``x`` (n_chains, n) given ``a``, in place, with the uniforms of ``(key, stream)``.

    Row ``k`` takes ``philox_uniforms(key, k, stream, ·)``. ``E`` holds ``exp(-|a|)`` when ``e_known``; else,
    when it has ``x``'s shape, it receives it (otherwise it is not touched). With ``add_bias``, ``a += bias``
    first. ``d`` (int8) receives each unit's change, ``counts`` the changed units per chain, ``out`` (when of
    ``x``'s shape) ``x'`` in its own dtype. Returns the total number of changed units."""
    n_chains, n = x.shape
    u = np.empty(n + (n & 1))
    e_row = np.empty(n)
    keep = E.shape == x.shape
    copy = out.shape == x.shape
    no_out = np.empty(n, out.dtype)
    total = 0
    for k in range(n_chains):
        e = E[k] if keep else e_row
        if not e_known:
            exp_neg_abs(a[k], bias, add_bias, e)
        philox_uniforms(key, k, stream, u)
        o = out[k] if copy else no_out
        # the operator is fixed per call: a loop of its own for each case, specialised by the compiler
        if gibbs:
            c = rule_row(u, x[k], a[k], e, 1.0, True, d[k], o, copy)
        elif alpha == 1.0:
            c = rule_row(u, x[k], a[k], e, 1.0, False, d[k], o, copy)
        elif alpha == 0.0:
            c = rule_row(u, x[k], a[k], e, 0.0, False, d[k], o, copy)
        else:
            c = rule_row(u, x[k], a[k], e, alpha, False, d[k], o, copy)
        counts[k] = c
        total += c
    return total


@njit(cache=True, nogil=True, fastmath={"reassoc"})
def dense_free_energy(v, a_h, hbias, add_bias, vbias, E, out):  # pragma: no cover - compiled
    """``out[k] = F(v_k) = -v_k·vbias - Σ_j softplus(a_h)_kj`` from the carried ``a_h``; ``E`` receives
    ``exp(-|a_h|)`` (the next draw's hidden update needs it). With ``add_bias``, ``a_h += hbias`` first.
    ``Σ log(1 + E)`` is one ``log`` of the product of up to 512 factors in [1, 2], as :func:`free_energy`."""
    for k in range(a_h.shape[0]):
        exp_neg_abs(a_h[k], hbias, add_bias, E[k])
        f = 0.0
        for i in range(v.shape[1]):
            f += v[k, i] * vbias[i]
        pos = 0.0
        for j in range(a_h.shape[1]):
            pos += max(a_h[k, j], 0.0)
        e = E[k]
        logs = 0.0
        for b in range(0, e.shape[0], 512):
            block = e[b : b + 512]  # a 1-D block: its product vectorises, indexing e[k, j] does not
            prod = 1.0
            for j in range(block.shape[0]):
                prod *= 1.0 + block[j]
            logs += np.log(prod)
        out[k] = -f - pos - logs


@njit(cache=True, nogil=True, inline="always")
def sigmoid_of(a, E):  # pragma: no cover - compiled
    """``sigmoid(a)`` given ``E = exp(-|a|)``."""
    return (1.0 if a >= 0.0 else E) / (1.0 + E)


# The two below are for small models (persistent_gibbs_gradient's statistics): they take every row, on or off,
# because a test of each unit's state mispredicts half the time and costs more than the multiplications it saves.
@njit(cache=True, nogil=True)
def add_rows(a, x, M, bias):  # pragma: no cover - compiled
    """``a = bias + x @ M`` for one chain (1-D ``a`` and ``x``)."""
    a[:] = bias
    for i in range(x.shape[0]):
        xi = x[i]
        for j in range(M.shape[1]):
            a[j] += xi * M[i, j]


@njit(cache=True, nogil=True)
def add_statistics(x, p, sign, gW, gv, gh):  # pragma: no cover - compiled
    """``gv += sign x``, ``gh += sign p``, ``gW += sign x pᵀ`` for one sample (1-D ``x``, ``p``)."""
    for j in range(p.shape[0]):
        gh[j] += sign * p[j]
    for i in range(x.shape[0]):
        gv[i] += sign * x[i]
        xi = sign * x[i]
        for j in range(p.shape[0]):
            gW[i, j] += xi * p[j]


# The functions below serve small models trained with the NumPy arithmetic (PCD, CD, the centered gradient):
# their products are BLAS calls (np.dot) and their layer updates gibbs_rows, as the NumPy kernels make them, so
# that the values are those of the NumPy path, bit for bit, without its per-call costs.
@njit(cache=True, nogil=True, inline="always")
def gibbs_layer(u, o, x, other, M, bias):  # pragma: no cover - compiled
    """``x ~ p(x | other)`` in place by :func:`gibbs_rows` at ``bias + other @ M`` (a BLAS product, then the
    bias, as NumPy forms it) with the uniforms ``u[o:]``, chains then units; the activation and the next ``o``."""
    n = x.shape[0] * x.shape[1]
    a = bias + np.dot(other, M)
    gibbs_rows(u[o : o + n].reshape(x.shape), a, x)
    return a, o + n


@njit(cache=True, nogil=True)
def gibbs_chain(u, v, h, W, vbias, hbias, n_sweeps, first_draw, last_draw, visible_first=False):  # pragma: no cover
    """Block-Gibbs sweeps of the chains ``(v, h)`` from their visible states, in place; the last hidden input.

    With ``visible_first``, ``v ~ p(v | h)`` first, from the ``h`` the chains carry; with ``first_draw``,
    ``h ~ p(h | v)`` first; then ``n_sweeps`` sweeps ``h ~ p(h | v)``, ``v ~ p(v | h)``;
    with ``last_draw``, ``h ~ p(h | v)`` of the final ``v``. Each layer is :func:`gibbs_layer` of the next
    ``n_chains * n_units`` uniforms of the 1-D ``u``. Returns ``hbias + v @ W`` of the final ``v``,
    (n_chains, n_hidden)."""
    # not sweep_rows: the BLAS products and vectorised exponentials keep training's values the NumPy path's
    W_T = W.T
    o = 0
    if visible_first:
        _, o = gibbs_layer(u, o, v, h, W_T, vbias)
    if first_draw:
        _, o = gibbs_layer(u, o, h, v, W, hbias)
    for _ in range(n_sweeps):
        _, o = gibbs_layer(u, o, h, v, W, hbias)
        _, o = gibbs_layer(u, o, v, h, W_T, vbias)
    if last_draw:
        return gibbs_layer(u, o, h, v, W, hbias)[0]
    return hbias + np.dot(v, W)


@njit(cache=True, nogil=True)
def column_means(x, n):  # pragma: no cover - compiled
    """``x.mean(axis=0)`` as NumPy takes it: the rows added in order, then divided by ``n[0]`` (``x``'s dtype)."""
    out = np.zeros_like(x[0])
    for k in range(x.shape[0]):
        for j in range(x.shape[1]):
            out[j] += x[k, j]
    for j in range(x.shape[1]):
        out[j] /= n[0]
    return out


@njit(cache=True, nogil=True)
def expit_(a):  # pragma: no cover - compiled
    """``1 / (1 + exp(-a))`` in place, in ``a``'s dtype: SciPy's ``expit``, element for element."""
    one = np.ones_like(a[0, :1])[0]  # 1 in a's dtype
    for k in range(a.shape[0]):
        for j in range(a.shape[1]):
            a[k, j] = one / (one + np.exp(-a[k, j]))
    return a


@njit(cache=True, nogil=True)
def centered_sample_gradient(v_data, W, hbias, v_model, ph_model):  # pragma: no cover - compiled
    """:func:`pymc_rbm.training.negative.centered_from_samples` of the data's ``p(h | v)`` at ``(W, hbias)``
    (:func:`pymc_rbm.energy.mean_hiddens`) in one call: ``(G, g_v, g_h, mu, lam)``."""
    ph_data = expit_(hbias + np.dot(v_data, W))
    n_data = np.full_like(v_data[0, :1], v_data.shape[0])  # divisors in the arrays' dtype, as NumPy divides
    n_model = np.full_like(v_data[0, :1], v_model.shape[0])
    mu, lam = column_means(v_data, n_data), column_means(ph_data, n_data)
    G = np.dot((v_data - mu).T, ph_data - lam)
    G /= n_data[0]
    G -= np.dot((v_model - mu).T, ph_model - lam) / n_model[0]
    return G, mu - column_means(v_model, n_model), lam - column_means(ph_model, n_model), mu, lam


@njit(cache=True, nogil=True)
def centered_ascent_step(W, vbias, hbias, G, g_v, g_h, mu, lam, lr):  # pragma: no cover - compiled
    """In place, ``p += lr g`` for ``g`` the centered step ``(G, g_v - G λ, g_h - Gᵀ μ)`` of
    :func:`pymc_rbm.training.gradients.centered_update`: its BLAS products and NumPy's element-wise
    arithmetic (``lr`` in the arrays' dtype)."""
    d_v = g_v - np.dot(G, lam)
    d_h = g_h - np.dot(mu, G)
    for i in range(W.shape[0]):
        for j in range(W.shape[1]):
            W[i, j] += lr * G[i, j]
    for i in range(vbias.shape[0]):
        vbias[i] += lr * d_v[i]
    for j in range(hbias.shape[0]):
        hbias[j] += lr * d_h[j]


@njit(cache=True, nogil=True)
def persistent_gibbs_gradient(u, batch, v, h, W, vbias, hbias):  # pragma: no cover - compiled
    """PCD's gradient with block Gibbs: ``⟨x p(h|x)ᵀ⟩`` of ``batch`` minus that of the chains after
    ``n`` sweeps ``v ~ p(v | h)``, ``h ~ p(h | v)`` of ``(v, h)`` in place (and likewise for the biases),
    returned as ``(gW, gv, gh)``. The chain is :func:`gibbs_chain`'s from the carried ``h``, visible layer
    first; ``u`` (1-D) holds per sweep the visible uniforms, chains then units, then the hidden ones. (Few
    arguments: for the small models it serves, the call's checking of each one costs more than the
    arithmetic.)"""
    n_c, n_v = v.shape
    n_h = h.shape[1]
    a = gibbs_chain(u, v, h, W, vbias, hbias, u.shape[0] // (n_c * (n_v + n_h)) - 1, False, True, True)
    gW = np.zeros((n_v, n_h))
    gv = np.zeros(n_v)
    gh = np.zeros(n_h)
    a_h = np.empty(n_h)
    p = np.empty(n_h)
    w_pos, w_neg = 1.0 / batch.shape[0], -1.0 / n_c
    for b in range(batch.shape[0]):
        add_rows(a_h, batch[b], W, hbias)
        for j in range(n_h):
            p[j] = sigmoid_of(a_h[j], np.exp(-abs(a_h[j])))
        add_statistics(batch[b], p, w_pos, gW, gv, gh)
    for c in range(n_c):
        for j in range(n_h):
            p[j] = sigmoid_of(a[c, j], np.exp(-abs(a[c, j])))
        add_statistics(v[c], p, w_neg, gW, gv, gh)
    return gW, gv, gh


@njit(cache=True, nogil=True)
def changes_and_copy(x, x_start, out):  # pragma: no cover - compiled
    """Units of ``x`` that differ from ``x_start``, per chain; ``out`` (any dtype) receives ``x``."""
    counts = np.zeros(x.shape[0])
    for k in range(x.shape[0]):
        c = 0
        for i in range(x.shape[1]):
            out[k, i] = x[k, i]
            c += 1 if x[k, i] != x_start[k, i] else 0
        counts[k] = c
    return counts

@njit(cache=True, nogil=True)
def same_values(x, y):  # pragma: no cover - compiled
    """Whether the 2-D arrays ``x`` and ``y`` (of one shape, any dtypes) hold equal values.

    Counts the differences of a row (a loop that vectorises) and stops after the first row with any."""
    for k in range(x.shape[0]):
        n = 0
        for i in range(x.shape[1]):
            n += 1 if x[k, i] != y[k, i] else 0
        if n:
            return False
    return True


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

@njit(cache=True, nogil=True, inline="always")
def sweep_rows(u_h, u_v, v, h, a_h, a_v, model, rule, target, carried, work, record):  # pragma: no cover
    """One sweep of a batch of chains, in place: each row's hidden update given ``v``, then its visible update
    given the new ``h``, by :func:`update_layer`; the sweep of every compiled sampler but the dense path and
    the training chain (:func:`gibbs_chain`).

    Parameters
    ----------
    u_h, u_v : (n_chains, n_hidden), (n_chains, n_visible)
        Each update's uniforms.
    v, h : (n_chains, n_visible), (n_chains, n_hidden)
        The states, 0/1 floats.
    a_h, a_v : (n_chains, n_hidden), (n_chains, n_visible)
        The activations ``hbias + v W`` and ``vbias + W h`` at β = 1.
    model : tuple
        ``(W, W_T, vbias, hbias)``, ``W_T`` being ``W.T`` in C order.
    rule : tuple
        ``(alpha_h, alpha_v, gibbs)``: the operator of each layer's update.
    target : tuple
        ``(beta, evidence, has_evidence)``: each layer updated at ``β a``, the visible logits plus
        ``evidence`` (n_chains, n_visible; untempered, read only with ``has_evidence``).
    carried : tuple
        ``(a_v_valid, n_incremental, full_every)``. With ``full_every > 0`` the activations are carried:
        both follow each layer update by the rows of the units that changed (:func:`propagate`), summed
        afresh (:func:`sum_rows`) once ``n_incremental`` reaches ``full_every``, and ``a_v`` computed when
        not ``a_v_valid``. With 0 both are summed afresh at every sweep, and ``a_h`` is left at the old ``v``.
    work : tuple
        ``(h_new, v_new, logit_h, logit_v)``: buffers of ``h``'s and ``v``'s shapes and of one row of each.
    record : tuple
        ``(energies, energy_in, energy_out, logits_out, keep_logits)``: with ``energy_in``, ``energies[0, k]``
        receives the energy ``E(v, h)`` of row ``k`` before the sweep, from the activation summed afresh; with
        ``energy_out``, ``energies[1, k]`` that after it, from the visible activation of the new ``h``; with
        ``keep_logits``, ``logits_out`` (n_chains, n_visible) the visible logits ``β a_v`` without evidence.

    Returns
    -------
    a_v_valid : bool
    n_incremental : int
    """
    W, W_T, vbias, hbias = model
    alpha_h, alpha_v, gibbs = rule
    beta, evidence, has_evidence = target
    a_v_valid, n_incremental, full_every = carried
    h_new, v_new, logit_h, logit_v = work
    energies, energy_in, energy_out, logits_out, keep_logits = record
    n_chains, n_v = v.shape
    n_h = h.shape[1]
    if n_incremental >= full_every:
        n_incremental = 0
        sum_rows(a_h, v, W, hbias)
        a_v_valid = False
    for k in range(n_chains):
        if energy_in:
            e = 0.0
            for i in range(n_v):
                if v[k, i] != 0.0:
                    e += vbias[i]
            for j in range(n_h):
                if h[k, j] != 0.0:
                    e += a_h[k, j]
            energies[0, k] = -e
        logits = a_h[k]
        if beta != 1.0:
            logits = logit_h
            for j in range(n_h):
                logits[j] = beta * a_h[k, j]
        update_layer(u_h[k], h[k], logits, alpha_h, gibbs, h_new[k])
    if a_v_valid:
        n_incremental += propagate(a_v, h, h_new, W_T, vbias)
    else:
        sum_rows(a_v, h_new, W_T, vbias)
        a_v_valid = True
    h[:, :] = h_new
    for k in range(n_chains):
        logits = a_v[k]
        if beta != 1.0 or has_evidence:
            logits = logit_v
            for i in range(n_v):
                logits[i] = beta * a_v[k, i]
        if keep_logits:
            logits_out[k, :] = logits
        if has_evidence:
            for i in range(n_v):
                logits[i] += evidence[k, i]
        update_layer(u_v[k], v[k], logits, alpha_v, gibbs, v_new[k])
    if full_every > 0:
        n_incremental += propagate(a_h, v, v_new, W, hbias)
    v[:, :] = v_new
    if energy_out:  # E(v, h) = -hbias·h - v·(vbias + W·h), from the visible activation of the new h
        for k in range(n_chains):
            e_h = 0.0
            for j in range(n_h):
                if h[k, j] != 0.0:
                    e_h += hbias[j]
            e_v = 0.0
            for i in range(n_v):
                if v[k, i] != 0.0:
                    e_v += a_v[k, i]
            energies[1, k] = -(e_h + e_v)
    return a_v_valid, n_incremental


@njit(cache=True, nogil=True)
def sweeps(u, v, h, a_h, a_v, W, W_T, vbias, hbias, alpha, gibbs, a_v_valid, n_incremental,
           full_every):  # pragma: no cover - compiled
    """``u.shape[0]`` sweeps of :func:`sweep_rows` with carried activations, in place; ``n_incremental`` after.

    Row ``t`` of ``u`` holds sweep ``t``'s uniforms in the NumPy kernels' order: the hidden layer, chains
    then units, then the visible layer."""
    n_chains, n_v = v.shape
    n_h = h.shape[1]
    work = (np.empty_like(h), np.empty_like(v), np.empty(0), np.empty(0))
    record = (a_v, False, False, a_v, False)  # nothing recorded: a_v stands in for the unused arrays
    for t in range(u.shape[0]):
        a_v_valid, n_incremental = sweep_rows(
            u[t, :n_chains * n_h].reshape((n_chains, n_h)), u[t, n_chains * n_h:].reshape((n_chains, n_v)), v, h,
            a_h, a_v, (W, W_T, vbias, hbias), (alpha, alpha, gibbs), (1.0, a_v, False),
            (a_v_valid, n_incremental, full_every), work, record)
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
def tempered_round(u, swap_u, v, h, W, W_T, vbias, hbias, betas, alpha, gibbs, parity, n_swept,
                   labels, swap_sum, swap_n, evidence, has_evidence, alpha_v, logits_out,
                   keep_logits):  # pragma: no cover - compiled
    """One round of the first ``n_swept`` replicas of ``(K, B, ·)`` arrays, in place: one sweep each.

    :func:`tempered_round_sweeps` with one sweep per replica (its docstring).
    """
    tempered_round_sweeps(u, swap_u, v, h, W, W_T, vbias, hbias, betas, alpha, gibbs, parity, n_swept, labels,
                          swap_sum, swap_n, evidence, has_evidence, alpha_v, logits_out, keep_logits,
                          np.ones(n_swept, dtype=np.int64), np.empty((2, n_swept, v.shape[1])))


@njit(cache=True, nogil=True)
def tempered_round_sweeps(u, swap_u, v, h, W, W_T, vbias, hbias, betas, alpha, gibbs, parity, n_swept,
                          labels, swap_sum, swap_n, evidence, has_evidence, alpha_v, logits_out,
                          keep_logits, n_sweeps, energies):  # pragma: no cover - compiled
    """One round of the first ``n_swept`` replicas of ``(K, B, ·)`` arrays, in place.

    Replica ``r`` of row ``b`` makes ``n_sweeps[r]`` sweeps at ``β_r`` (:func:`sweep_rows`, the activations
    summed afresh; visible weight ``alpha_v``), its visible logits plus ``evidence[r, b]`` (untempered)
    with ``has_evidence``; each sweep leaves the replica's target invariant, so
    any number of them does. With ``keep_logits`` the last sweep's logits
    without the evidence go to ``logits_out``. Then the pairs ``(r, r + 1)`` of
    the given parity (none for a parity of ``K`` or more) swap by the ratio of
    their targets ``exp(-β_r E + evidence_r·v)``, ``(β_{r+1} - β_r)(E_{r+1} -
    E_r) + Σ_i (evidence_{r+1,i} - evidence_{r,i})(v_{r,i} - v_{r+1,i})`` over
    the units that differ (so ``±1e300``, a value ruled out, never swamps the
    rest), accepted when ``log u < log ratio``; labels follow their replicas,
    acceptance probabilities add to ``swap_sum`` and attempts to ``swap_n``.
    ``energies[0, r, b]`` and ``energies[1, r, b]`` receive the energy ``E(v, h)``
    of the state at rung ``r`` before its sweeps and after them (before the
    swaps): the explorer's relaxation, measured at no extra product. ``u`` has
    shape ``(Σ_r n_sweeps[r], B, n_hidden + n_visible)``, rung ``r``'s sweeps
    taking the rows from ``Σ_{q<r} n_sweeps[q]`` on; ``swap_u`` ``(K - 1, B)``.
    """
    n_b = v.shape[1]
    n_h = h.shape[2]
    n_v = v.shape[2]
    a_h = np.empty((n_b, n_h))
    a_v = np.empty((n_b, n_v))
    work = (np.empty((n_b, n_h)), np.empty((n_b, n_v)), np.empty(n_h), np.empty(n_v))
    model = (W, W_T, vbias, hbias)
    rule = (alpha, alpha_v, gibbs)
    row = 0
    for r in range(n_swept):
        target = (betas[r], evidence[r] if has_evidence else evidence[0], has_evidence)
        out = logits_out[r] if keep_logits else a_v
        for s in range(n_sweeps[r]):
            sweep_rows(u[row + s, :, :n_h], u[row + s, :, n_h:], v[r], h[r], a_h, a_v, model, rule, target,
                       (False, 0, 0), work, (energies[:, r], s == 0, True, out, keep_logits))
        row += n_sweeps[r]
    e = energies[1]
    for r in range(parity, n_swept - 1, 2):
        for b in range(n_b):
            log_ratio = (betas[r + 1] - betas[r]) * (e[r + 1, b] - e[r, b])
            if has_evidence:
                for i in range(n_v):
                    if v[r, b, i] != v[r + 1, b, i]:
                        log_ratio += (evidence[r + 1, b, i] - evidence[r, b, i]) * (v[r, b, i] - v[r + 1, b, i])
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
def informed_proposal(u, v, h, W, W_T, vbias, hbias, betas, tilt, alpha, alpha_v, gibbs, h_out, v_out,
                      a_v):  # pragma: no cover - compiled
    """:func:`pymc_rbm.kernels.compiled.informed_proposal`: a round of :func:`tempered_round` with the rows
    as its replicas, no swaps, the evidence ``β_r tilt`` and the logits kept in ``a_v``."""
    n, n_v = v.shape
    h_out[:, :] = h
    v_out[:, :] = v
    evidence = np.empty((n, 1, n_v))
    for r in range(n):
        for i in range(n_v):
            evidence[r, 0, i] = betas[r] * tilt[r, i]
    labels = np.zeros((n, 1), dtype=np.int64)
    no_swaps = np.zeros(max(n - 1, 1))
    tempered_round(u.reshape(n, 1, u.shape[1]), np.ones((max(n - 1, 1), 1)), v_out.reshape(n, 1, n_v),
                   h_out.reshape(n, 1, h.shape[1]), W, W_T, vbias, hbias, betas, alpha, gibbs, n, n, labels,
                   no_swaps, no_swaps, evidence, True, alpha_v, a_v.reshape(n, 1, n_v), True)


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
    """Per row, :func:`pymc_rbm.kernels.informed.tilted_log_ratio` (2-D arrays, 1-D ``log_rest``)."""
    out = np.empty(v.shape[0])
    for r in range(v.shape[0]):
        if log_rest_new[r] == -np.inf:
            out[r] = -np.inf
            continue
        if log_rest[r] == -np.inf:
            out[r] = np.inf
            continue
        x = log_rest_new[r] - log_rest[r]
        for i in range(v.shape[1]):
            x += (v_new[r, i] - v[r, i]) * a[r, i]
        x += log_move(v_new[r], v[r], a[r] + tilt_new[r], alpha, gibbs)
        x -= log_move(v[r], v_new[r], a[r] + tilt[r], alpha, gibbs)
        out[r] = x
    return out


# ---------------------------------------------------------------- a ladder of models (kernels/model_ladder.py)
# The models' arrays are packed end to end in flat buffers, rung ``r`` at ``off[r]:off[r + 1]`` (``W`` of rung
# ``r`` is ``W_flat[w_off[r]:w_off[r + 1]].reshape(n_visible, n_hidden_r)``), so that one call serves models
# of any hidden sizes and the same compiled code serves every number of rungs.


@njit(cache=True, nogil=True, inline="always")
def rung_rows(flat, off, r, n_rows):  # pragma: no cover - compiled
    """Rung ``r``'s block of a packed buffer as an ``(n_rows, ·)`` array (a view)."""
    return flat[off[r]:off[r + 1]].reshape((n_rows, (off[r + 1] - off[r]) // n_rows))


@njit(cache=True, nogil=True)
def ladder_pair_log_ratio(v_a, v_b, a_a, a_b, W_a, W_b, vbias_a, vbias_b, hbias_a, hbias_b, a_of_b,
                          b_of_a):  # pragma: no cover - compiled
    """``F_a(v_a) + F_b(v_b) - F_a(v_b) - F_b(v_a)`` of one chain (rows of shape (1, ·)), from the carried
    ``a_a = hbias_a + v_a W_a`` and ``a_b``; the cross inputs ``hbias_a + v_b W_a`` and ``hbias_b + v_a W_b``
    go to ``a_of_b`` and ``b_of_a``, each by the rows of the units where ``v_a`` and ``v_b`` differ or, when
    fewer, of the units on (:func:`propagate`)."""
    a_of_b[:, :] = a_a
    propagate(a_of_b, v_a, v_b, W_a, hbias_a)
    b_of_a[:, :] = a_b
    propagate(b_of_a, v_b, v_a, W_b, hbias_b)
    return (free_energy(v_a, a_a, vbias_a)[0] + free_energy(v_b, a_b, vbias_b)[0]
            - free_energy(v_b, a_of_b, vbias_a)[0] - free_energy(v_a, b_of_a, vbias_b)[0])


@njit(cache=True, nogil=True)
def ladder_log_ratios(v, a, h_off, W, w_off, vbias, hbias, hb_off, first, log_ratio):  # pragma: no cover
    """:func:`ladder_pair_log_ratio` of the pairs ``(r, r + 1)``, ``r = first, first + 2, ...`` (``first`` 0 or 1;
    every pair for a negative ``first``), into ``log_ratio[r]``; ``v`` (K, B, n_visible), the rest packed."""
    k, n_b, n_v = v.shape
    step = 1 if first < 0 else 2
    for r in range(max(first, 0), k - 1, step):
        a_r, a_s = rung_rows(a, h_off, r, n_b), rung_rows(a, h_off, r + 1, n_b)
        W_r, W_s = rung_rows(W, w_off, r, n_v), rung_rows(W, w_off, r + 1, n_v)
        hb_r, hb_s = hbias[hb_off[r]:hb_off[r + 1]], hbias[hb_off[r + 1]:hb_off[r + 2]]
        a_of_b, b_of_a = np.empty((1, a_r.shape[1])), np.empty((1, a_s.shape[1]))
        for b in range(n_b):
            log_ratio[r, b] = ladder_pair_log_ratio(v[r, b:b + 1], v[r + 1, b:b + 1], a_r[b:b + 1], a_s[b:b + 1],
                                                    W_r, W_s, vbias[r], vbias[r + 1], hb_r, hb_s, a_of_b, b_of_a)


@njit(cache=True, nogil=True)
def model_ladder_round(u, u_off, swap_u, v, h, a, h_off, W, W_T, w_off, vbias, hbias, hb_off, alpha, gibbs, parity,
                       full_every, labels, log_ratio, accepted, n_changed):  # pragma: no cover - compiled
    """One round of a ladder of models in place: :func:`sweeps` of every rung at its model, each with its
    block ``u[u_off[r]:u_off[r + 1]]`` of uniforms (shape (n_sweeps, B * (n_hidden_r + n_visible)), as
    :func:`pymc_rbm.kernels.compiled.carried_sweeps` draws them; the visible activation computed afresh, the
    count of incremental updates from 0), the visible units that changed into ``n_changed`` (K, B); then the
    pairs ``(r, r + 1)``, ``r = parity, parity + 2, ...``: :func:`ladder_pair_log_ratio` into ``log_ratio[r]``,
    accepted when ``log swap_u[(r - parity) // 2, b] < log_ratio[r, b]`` (``accepted[r, b]``), which exchanges
    the visible rows and labels and gives each rung its cross hidden input. The hidden units of the swapped
    replicas are left for :func:`ladder_redraw_hidden`. ``h`` and ``a`` are packed (B, n_hidden_r) blocks,
    ``W`` and ``W_T`` packed (n_visible, n_hidden_r) and (n_hidden_r, n_visible) blocks, ``vbias`` (K,
    n_visible), ``hbias`` packed. Each pair's swap is computed right after its upper rung's sweep, while the
    two models' weights are in the caches; the result is the same in any order."""
    k, n_b, n_v = v.shape
    a_v = np.empty((n_b, n_v))
    start = np.empty((n_b, n_v))
    for r in range(k):
        n_h = (hb_off[r + 1] - hb_off[r])
        h_r, a_r = rung_rows(h, h_off, r, n_b), rung_rows(a, h_off, r, n_b)
        start[:, :] = v[r]
        sweeps(rung_rows(u, u_off, r, (u_off[r + 1] - u_off[r]) // (n_b * (n_h + n_v))), v[r], h_r, a_r, a_v,
               rung_rows(W, w_off, r, n_v), rung_rows(W_T, w_off, r, n_h), vbias[r], hbias[hb_off[r]:hb_off[r + 1]],
               alpha, gibbs, False, 0, full_every)
        for b in range(n_b):
            c = 0
            for i in range(n_v):
                if v[r, b, i] != start[b, i]:
                    c += 1
            n_changed[r, b] = c
        p = r - 1  # the pair (r - 1, r) once its upper rung has been swept
        if p < parity or (p - parity) % 2 != 0:
            continue
        a_p = rung_rows(a, h_off, p, n_b)
        W_p = rung_rows(W, w_off, p, n_v)
        a_of_b, b_of_a = np.empty((1, a_p.shape[1])), np.empty((1, n_h))
        for b in range(n_b):
            lr = ladder_pair_log_ratio(v[p, b:b + 1], v[r, b:b + 1], a_p[b:b + 1], a_r[b:b + 1], W_p,
                                       rung_rows(W, w_off, r, n_v), vbias[p], vbias[r],
                                       hbias[hb_off[p]:hb_off[r]], hbias[hb_off[r]:hb_off[r + 1]], a_of_b, b_of_a)
            log_ratio[p, b] = lr
            if np.log(swap_u[(p - parity) // 2, b]) < lr:
                accepted[p, b] = True
                for i in range(n_v):
                    t = v[p, b, i]
                    v[p, b, i] = v[r, b, i]
                    v[r, b, i] = t
                lab = labels[p, b]
                labels[p, b] = labels[r, b]
                labels[r, b] = lab
                a_p[b, :] = a_of_b[0]
                a_r[b, :] = b_of_a[0]


@njit(cache=True, nogil=True)
def ladder_redraw_hidden(u, h, a, h_off, hb_off, n_b, parity, accepted):  # pragma: no cover - compiled
    """Redraw by Gibbs (:func:`gibbs_rows`) the hidden units of the replicas that :func:`model_ladder_round`
    swapped, pair by pair, the lower rung's then the upper's, chains in order, with the uniforms ``u`` in that
    order (the order of :func:`pymc_rbm.kernels.model_ladder.model_ladder_round`'s per-rung redraws)."""
    pos = 0
    for p in range(parity, accepted.shape[0], 2):
        for r in (p, p + 1):
            n_h = hb_off[r + 1] - hb_off[r]
            h_r, a_r = rung_rows(h, h_off, r, n_b), rung_rows(a, h_off, r, n_b)
            for b in range(n_b):
                if accepted[p, b]:
                    gibbs_rows(u[pos:pos + n_h].reshape((1, n_h)), a_r[b:b + 1], h_r[b:b + 1])
                    pos += n_h

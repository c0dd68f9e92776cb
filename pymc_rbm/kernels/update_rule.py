"""The layer update rule, compiled: one unit, one chain's layer, a batch's layer row by row.

One unit's update given its logit ``a``: Gibbs ``x' = [u < sigmoid(a)]``, or
flip-the-state mixed with Gibbs by ``alpha`` (Brügge, Fischer & Igel 2013),
``x' = x XOR [u < q]`` with ``s = log p(other) / p(current) = ±a``,
``q = alpha q_T + (1 - alpha) sigmoid(s)``, ``q_T = exp(min(s, 0))`` (1/2 at
the tie ``s = 0``). Every case needs the one exponential ``E = exp(-|a|)``:
``q_T`` is ``E`` or 1, and ``u < sigmoid(y)`` for ``|y| = |a|`` is
``u (1 + E) < 1`` for ``y >= 0`` and ``u (1 + E) < E`` for ``y < 0`` (no
division, no overflow). :func:`rule_state` is that rule, written once;
:func:`update_layer` takes it unit by unit with a scalar ``exp`` (the sweeps
of :mod:`pymc_rbm.kernels.chain_sweeps`); a batch takes each row's
exponentials in one vectorised loop (:func:`exp_neg_abs`) and passes ``E``
to the rule (:func:`update_rows`, the NumPy kernels' layer update, and
:func:`dense_layer`, the dense path of large batches, with counter-based
uniforms). The operator is fixed per call, so each caller's loop is
specialised per operator by the compiler (a loop over the general rule
reading ``alpha`` and ``gibbs`` at run time is slower; docs/sampling.md).

Imported on first use (importing :mod:`pymc_rbm.kernels` does not load
Numba); the functions live at module level so that Numba's on-disk cache
finds them again in a new process.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from pymc_rbm.kernels.philox import philox_uniforms

_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01  # fdlibm's split of log 2: k * _LN2_HI is exact for |k| < 2**20
_LN2_LO = 1.90821492927058770002e-10


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
def update_units(u, x, row, a, k, logit, alpha, gibbs, out):  # pragma: no cover - compiled
    """:func:`update_layer` with the operator given (the compiler specialises the loop for it)."""
    uniforms, t, start = u
    beta, extra, e_row, has_extra, kept, keep = logit
    for i in range(x.shape[1]):
        s = beta * a[k, i]
        if keep:
            kept[row, i] = s
        if has_extra:
            s += extra[e_row, i]
        out[row, i] = rule_state(uniforms[t, start + i], x[row, i], s, np.exp(-abs(s)), alpha, gibbs)


@njit(cache=True, nogil=True)
def update_layer(u, x, row, a, k, logit, alpha, gibbs, out):  # pragma: no cover - compiled
    """One chain's layer update by the rule, unit by unit: row ``row`` of ``x`` into row ``row`` of ``out``.

    Unit ``i`` takes the uniform ``u[t, start + i]`` and the logit ``β a[k, i] + extra[e_row, i]`` (the
    extra term only with ``has_extra``); rows are addressed by index, so that a call creates no array
    views.

    Parameters
    ----------
    u : tuple
        ``(u, t, start)``: the uniforms (n_rows_u, m), and the row and column where the layer's begin.
    x, out : (n_rows, n)
        The states, 0/1 floats; ``out`` may be ``x`` (updated in place).
    row : int
    a : (n_chains, n)
        The layer's activations at β = 1; row ``k`` is this chain's.
    k : int
    logit : tuple
        ``(beta, extra, e_row, has_extra, kept, keep)``: with ``keep``, ``kept[row]`` receives the logits
        ``β a[k]`` before the extra term. At β = 1 they are ``a[k]`` itself (the product by 1 is exact).
    alpha : float
    gibbs : bool
        The operator (Gibbs, or the flip-the-state mixture of weight ``alpha``).

    The operator is fixed per call, so each case gets a loop of its own, specialised by the compiler
    (a loop over the general rule reading ``alpha`` and ``gibbs`` at run time is slower; docs/sampling.md).
    The function is compiled once per signature and called, not inlined into each caller's code: copying
    its four loops into every call site of the sweep made each caller's first compilation much longer, for
    the same draws at the same speed (docs/sampling.md).
    """
    if gibbs:
        update_units(u, x, row, a, k, logit, 1.0, True, out)
    elif alpha == 1.0:
        update_units(u, x, row, a, k, logit, 1.0, False, out)
    elif alpha == 0.0:
        update_units(u, x, row, a, k, logit, 0.0, False, out)
    else:
        update_units(u, x, row, a, k, logit, alpha, False, out)


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


# The dense path of large batches: per layer, chain by chain, the row's exponentials ``E = exp(-|a|)``
# (:func:`exp_neg_abs`) and its uniforms (:func:`philox_uniforms`) in vectorised loops into buffers that
# stay in the L1 cache, then the rule (:func:`rule_row`) over the row; no array of a whole layer's
# uniforms or exponentials is written.


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
def dense_layer(u, x, a, bias, add_bias, E, e_known, alpha, gibbs, counts, d, out):  # pragma: no cover - compiled
    """A batch's layer update ``x`` (n_chains, n) given ``a``, in place, with the uniforms of ``u``.

    ``u`` is ``(key, stream)``: row ``k`` takes ``philox_uniforms(key, k, stream, ·)``. ``E`` holds ``exp(-|a|)``
    when ``e_known``; else, when it has ``x``'s shape, it receives it (otherwise it is not touched). With
    ``add_bias``, ``a += bias`` first. ``d`` (int8) receives each unit's change, ``counts`` the changed units per
    chain, ``out`` (when of ``x``'s shape) ``x'`` in its own dtype. Returns the total number of changed units."""
    key, stream = u
    n_chains, n = x.shape
    u_row = np.empty(n + (n & 1))
    e_row = np.empty(n)
    keep = E.shape == x.shape
    copy = out.shape == x.shape
    no_out = np.empty(n, out.dtype)
    total = 0
    for k in range(n_chains):
        e = E[k] if keep else e_row
        if not e_known:
            exp_neg_abs(a[k], bias, add_bias, e)
        philox_uniforms(key, k, stream, u_row)
        o = out[k] if copy else no_out
        # the operator is fixed per call: a loop of its own for each case, specialised by the compiler
        if gibbs:
            c = rule_row(u_row, x[k], a[k], e, 1.0, True, d[k], o, copy)
        elif alpha == 1.0:
            c = rule_row(u_row, x[k], a[k], e, 1.0, False, d[k], o, copy)
        elif alpha == 0.0:
            c = rule_row(u_row, x[k], a[k], e, 0.0, False, d[k], o, copy)
        else:
            c = rule_row(u_row, x[k], a[k], e, alpha, False, d[k], o, copy)
        counts[k] = c
        total += c
    return total


@njit(cache=True, nogil=True)
def change_probabilities(x, a, alpha, out):  # pragma: no cover - compiled
    """``out = `` :func:`change_probability` of each unit of ``x`` at logits ``a`` (1-D arrays)."""
    for i in range(x.shape[0]):
        s = a[i] if x[i] == 0 else -a[i]
        out[i] = change_probability(s, np.exp(-abs(s)), alpha)


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


@njit(cache=True, nogil=True, inline="always")
def sigmoid_of(a, E):  # pragma: no cover - compiled
    """``sigmoid(a)`` given ``E = exp(-|a|)``."""
    return (1.0 if a >= 0.0 else E) / (1.0 + E)


@njit(cache=True, nogil=True)
def shift_predictors(v, units, etas, loadings, moved):  # pragma: no cover - compiled
    """``moved[k] = etas[k] + (1 - 2 v[k, i]) loadings[i]`` with ``i = units[k]``: the predictors of every row with
    its unit ``units[k]`` flipped.

    ``v`` (K, n) 0/1, ``units`` (K,) integers, ``etas`` and ``moved`` (K, m), ``loadings`` (n, m)."""
    for k in range(etas.shape[0]):
        i = units[k]
        d = 1.0 - 2.0 * v[k, i]
        for j in range(etas.shape[1]):
            moved[k, j] = etas[k, j] + d * loadings[i, j]


@njit(cache=True, nogil=True)
def update_unit_of_rows(u, v, units, logits, log_rest, new, alpha, etas, moved):  # pragma: no cover - compiled
    """Unit ``i = units[k]`` of every row ``k`` by the rule at its exact conditional logit, given ``log L`` with
    that unit flipped (``new``).

    The logit is ``logits[k, i] + (1 - 2 v[k, i]) (new[k] - log_rest[k])`` (0 for the change where both
    are ``-inf``, ±1e300 where one is); where the unit changes, ``v``, ``log_rest`` and ``etas`` take the
    flipped values, in place."""
    for k in range(v.shape[0]):
        i = units[k]
        x = v[k, i]
        gain = new[k] - log_rest[k]
        if gain != gain:  # both -inf: the unit cannot change L's support
            gain = 0.0
        gain = min(max(gain, -1e300), 1e300)
        a = logits[k, i] + (1.0 - 2.0 * x) * gain
        x_new = rule_state(u[k], x, a, np.exp(-abs(a)), alpha, False)
        if x_new != x:
            v[k, i] = x_new
            log_rest[k] = new[k]
            for j in range(etas.shape[1]):
                etas[k, j] = moved[k, j]

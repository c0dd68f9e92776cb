"""Training's Gibbs chains and gradients for small models, compiled (:mod:`pymc_rbm.kernels.training_steps`).

They serve small models trained with the NumPy arithmetic (PCD, CD, the
centered gradient): their products are BLAS calls (``np.dot``) and their
layer updates :func:`~pymc_rbm.kernels.update_rule.gibbs_rows`, as the NumPy
kernels make them (the chains are the ``PRODUCTS`` path of the one compiled
sweep, :func:`~pymc_rbm.kernels.chain_sweeps.sweep_rows`), so that the values
are those of the NumPy path, bit for bit, without its per-call costs.
Imported on first use.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from pymc_rbm.kernels.chain_sweeps import AT_ONE, PRODUCTS, sweep_rows
from pymc_rbm.kernels.update_rule import sigmoid_of


@njit(cache=True, nogil=True)
def gibbs_chain(u, v, h, W, vbias, hbias, n_sweeps, first_draw, last_draw, visible_first=False):  # pragma: no cover
    """Block-Gibbs sweeps of the chains ``(v, h)`` from their visible states, in place; the last hidden input.

    With ``visible_first``, ``v ~ p(v | h)`` first, from the ``h`` the chains carry; with ``first_draw``,
    ``h ~ p(h | v)`` first (not with ``visible_first``); then ``n_sweeps`` sweeps ``h ~ p(h | v)``,
    ``v ~ p(v | h)``; with ``last_draw``, ``h ~ p(h | v)`` of the final ``v``. Each layer takes the next
    ``n_chains * n_units`` uniforms of the 1-D ``u``, chains then units. The sweeps are
    :func:`~pymc_rbm.kernels.chain_sweeps.sweep_rows`' ``PRODUCTS`` path: each layer by
    :func:`~pymc_rbm.kernels.update_rule.gibbs_rows` at ``bias + np.dot(other, M)``, the values of the NumPy
    kernels. A first draw that another hidden draw from the same ``v`` follows is not made (the Gibbs update
    does not read ``h``); its uniforms are skipped.

    Parameters
    ----------
    u : (n_uniforms,)
        The uniforms, layer after layer.
    v, h : (n_chains, n_visible), (n_chains, n_hidden)
        The chains, 0/1 in the parameters' dtype, C order.
    W : (n_visible, n_hidden)
    vbias, hbias : (n_visible,), (n_hidden,)
    n_sweeps : int
    first_draw, last_draw, visible_first : bool

    Returns
    -------
    (n_chains, n_hidden)
        ``hbias + v @ W`` of the final ``v``.
    """
    if first_draw and visible_first:
        raise ValueError("first_draw and visible_first together are not supported")
    n_c, n_v = v.shape
    n_h = h.shape[1]
    redrawn = first_draw and (n_sweeps > 0 or last_draw)
    skip = n_c * n_h if redrawn else 0
    to_hidden = last_draw or (first_draw and not redrawn)
    n_total = n_sweeps + int(visible_first) + int(to_hidden)
    a_h = np.empty_like(h)
    a_v = np.empty_like(v)
    one_block = (1, AT_ONE, np.full(1, n_total))
    no_target = (a_v, False, a_h, False)  # no evidence, no hidden field, nothing recorded: stand-ins
    no_record = (a_v, False, False, a_v, False)
    sweep_rows(PRODUCTS, (u[skip:].reshape((1, u.shape[0] - skip)), 0, 0, 0), v, h, (W, W.T, vbias, hbias),
               (1.0, 1.0, True), one_block, no_target, (a_h, a_v, False, 0, 0), (h, v), no_record,
               (visible_first, to_hidden, None, False))
    if to_hidden:
        return a_h  # the input of the last hidden draw: of the final v
    return hbias + np.dot(v, W)


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


# The two below serve persistent_gibbs_gradient's statistics: they take every row, on or off, because a test
# of each unit's state mispredicts half the time and costs more than the multiplications it saves.


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

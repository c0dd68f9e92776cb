"""Sweeps of a batch of chains with carried activations, compiled: the loops of :mod:`pymc_rbm.kernels.compiled`.

The sweep (:func:`sweep_rows`: the hidden layer's update given ``v``, then
the visible layer's given ``h``) is written once here and serves the carried
sweeps and draws of the step methods (:func:`sweeps`, :func:`draw`), large
batches (:func:`dense_sweeps`), the replica rounds of
:mod:`pymc_rbm.kernels.round_loops` and training's chains
(:mod:`pymc_rbm.kernels.training_loops`), by three paths. On the samplers'
each chain's layer is :func:`~pymc_rbm.kernels.update_rule.update_layer`'s,
and the activations ``bias + x·M`` of 0/1 states follow each update by the
rows of the units that changed, or are summed from the rows of the units on
(:func:`propagate`, :func:`sum_rows`); on the dense path of large batches each
layer is one pass of :func:`~pymc_rbm.kernels.update_rule.dense_layer`, the
other layer's activation following by the changed rows or by NumPy's BLAS
product (:func:`dense_update`, :func:`numpy_product`); on training's, each
layer of the block is :func:`~pymc_rbm.kernels.update_rule.gibbs_rows`' at a
BLAS product (:func:`product_rows`).
Imported on first use (importing :mod:`pymc_rbm.kernels` does not load
Numba); the functions live at module level so that Numba's on-disk cache
finds them again in a new process (defined inside a function they were
compiled afresh in every process, 7-10 s before the first draw).
"""

from __future__ import annotations

import numpy as np
from numba import njit, objmode

from pymc_rbm.kernels.update_rule import dense_layer, exp_neg_abs, gibbs_rows, update_layer

# The paths of :func:`sweep_rows` (its argument ``path``).
#: Each chain's layer by :func:`~pymc_rbm.kernels.update_rule.update_layer`, the activations carried by the rows
#: of the units that changed or summed from the rows of the units on: the step methods and the replica rounds.
ROWS = 0
#: The block's layer by :func:`~pymc_rbm.kernels.update_rule.gibbs_rows` at ``bias + np.dot(rows, M)`` (a BLAS
#: product, then the bias, as NumPy forms it), the uniforms taken in order: the values of the NumPy kernels'
#: block Gibbs, for training's chains.
PRODUCTS = 1
#: Large batches: each layer one pass of :func:`~pymc_rbm.kernels.update_rule.dense_layer` (counter-based
#: uniforms, vectorised exponentials), the other layer's activation then following by the rows of the units that
#: changed or by NumPy's BLAS product, whichever costs less (:func:`dense_update`).
DENSE = 2


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
    """:func:`add_changed_rows_` on a copy of ``a``: ``(a + (new - old) @ M, True)``, or ``(a, False)`` when
    more than ``max_changes`` units changed (``a`` itself when none did)."""
    out = a.copy()
    total = add_changed_rows_(out, old, new, M, max_changes)
    if total <= 0:
        return a, total == 0
    return out, True


@njit(cache=True, nogil=True)
def add_changes(a, d, M):  # pragma: no cover - compiled
    """``a += d @ M`` by the rows of the nonzero entries of ``d`` (the changes of
    :func:`~pymc_rbm.kernels.update_rule.dense_layer`), in the order and with the arithmetic of
    :func:`add_changed_rows_`."""
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


@njit(cache=True, nogil=True, inline="always")
def sum_rows(a, x, first, M, bias):  # pragma: no cover - compiled
    """``a[k] <- bias + x[first + k] @ M`` in place for every row ``k`` of ``a``, adding only the rows of ``M`` of
    the units that are on."""
    for k in range(a.shape[0]):
        for j in range(a.shape[1]):
            a[k, j] = bias[j]
        for i in range(x.shape[1]):
            xi = x[first + k, i]
            if xi == 1.0:  # a state's unit that is on: its row itself (xi * M[i, j] is M[i, j])
                for j in range(M.shape[1]):
                    a[k, j] += M[i, j]
            elif xi != 0.0:
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
        sum_rows(a, new, 0, M, bias)
        return False
    return total > 0


@njit(cache=True, nogil=True, inline="always")
def product_rows(a, x, first, M, bias):  # pragma: no cover - compiled
    """``a[k] <- bias + x[first + k] @ M`` for every row ``k`` of ``a``, in place: one BLAS product, then the bias,
    the arithmetic of NumPy's ``bias + x @ M``.

    Parameters
    ----------
    a : (n_chains, m)
    x : (n_rows, n)
        The states; rows ``first .. first + n_chains - 1`` are read.
    first : int
    M : (n, m)
    bias : (m,)
    """
    d = np.dot(x[first : first + a.shape[0]], M)
    for k in range(a.shape[0]):
        for j in range(a.shape[1]):
            a[k, j] = bias[j] + d[k, j]


@njit(cache=True)
def numpy_product(a, b, out):  # pragma: no cover - compiled
    """``out = a @ b`` by NumPy's own ``np.dot`` (its BLAS: the products of the dense path before its loop was
    compiled; Numba's ``np.dot`` calls SciPy's BLAS, which may round differently).

    Parameters
    ----------
    a : (n_rows, n)
    b : (n, m)
    out : (n_rows, m), C order
    """
    with objmode():
        np.dot(a, b, out=out)


@njit(cache=True, nogil=True)
def dense_update(dense, stream, x, a, bias, add_bias, exp_known, alpha, gibbs, which, last,
                 follow):  # pragma: no cover - compiled
    """One layer of the ``DENSE`` path: ``x`` given ``a`` by :func:`~pymc_rbm.kernels.update_rule.dense_layer`
    with the uniforms of ``(key, stream)``, in place; then, when ``may_follow`` and at most ``max_fraction``
    (:data:`~pymc_rbm.kernels.activations.BATCH_FRACTION`) of the layer's entries changed, ``other += (x' - x) M``
    by the rows of the units that changed (:func:`add_changes`; below the break-even of those rows against
    one gemm).

    Parameters
    ----------
    dense : tuple
        ``(key, changes, counts, hidden_exp, v_out, max_fraction)``: the key (4,), uint64; a work buffer of
        at least ``x.size`` int8; ``counts[which]`` (n_chains,) receives the changed units per chain;
        ``hidden_exp`` (n_chains, n_hidden) holds ``exp(-|a|)`` of the hidden layer when ``exp_known``;
        ``v_out`` (n_chains, n_visible), any dtype, receives ``x'`` when ``last``; the largest fraction of
        changed entries that the rows follow.
    stream : int
    x : (n_chains, n)
    a : (n_chains, n)
        ``x``'s activation, less ``bias`` when ``add_bias`` (it is added first).
    bias : (n,)
    add_bias, exp_known : bool
    alpha : float
    gibbs : bool
    which : int
    last : bool
    follow : tuple
        ``(other, M, may_follow)``: the other layer's activation (n_chains, m), the weights (n, m) that take
        ``x`` to it, and whether ``other`` holds the activation of the current ``x`` (else it is not touched).

    Returns
    -------
    by_rows : bool
        ``other`` follows ``x'`` (else it needs a product).
    incremental : bool
        ``other`` was updated by rows (some units changed).
    """
    key, changes, counts, hidden_exp, v_out, max_fraction = dense
    other, M, may_follow = follow
    d = changes[: x.size].reshape(x.shape)
    E = hidden_exp if exp_known else hidden_exp[:0]
    # one signature of dense_layer for both layers: ``out`` of one type, and the switch as a run-time bool
    # (a constant argument is typed as a literal, and each literal compiles the whole layer update again)
    n = dense_layer((key, stream), x, a, bias, add_bias, E, np.bool_(exp_known), alpha, gibbs, counts[which], d,
                    v_out if last else v_out[:0])
    by_rows = may_follow and n <= max_fraction * x.size
    if by_rows and n:
        add_changes(other, d, M)
    return by_rows, by_rows and n > 0


@njit(cache=True, nogil=True, inline="always")
def sweep_rows(mode, u, v, h, model, rule, blocks, target, carried, work, record, path):  # pragma: no cover - compiled
    """Sweeps of blocks of chains, in place: each sweep, the hidden layer of all chains given ``v``, then the
    visible activation, the visible layer of all chains given the new ``h``, then the hidden activation (carried,
    or formed afresh at the next sweep's start); the sweep of every compiled sampler, the dense path of large
    batches (:func:`dense_sweeps`) included, and of training's chains
    (:func:`~pymc_rbm.kernels.training_loops.gibbs_chain`).

    Block ``r`` (a replica of a tempered round; the carried sweeps are one block) is the state rows
    ``r n_chains .. (r + 1) n_chains - 1`` (``n_chains`` the rows of the activations, ``carried``), swept
    ``n_sweeps[r]`` times at ``β = betas[r]``. Rows are addressed by index and the blocks swept in one loop here:
    an array view, or an array passed to a call, per block would cost more in reference counts than the sweep of
    a small model.

    Parameters
    ----------
    mode : int
        The path: :data:`ROWS`, :data:`PRODUCTS` or :data:`DENSE`, given as that constant (the compiler then
        leaves out the other paths' code).
    u : tuple
        ``(uniforms, h_step, v_offset, v_step)``: the uniforms (n_rows_u, m) and their layout. ``ROWS``: one
        row per sweep (block after block), chain ``k``'s hidden uniforms of a sweep on row ``t`` being
        ``uniforms[t, k h_step:][:n_hidden]``, its visible ones ``uniforms[t, v_offset + k v_step:][:n_visible]``.
        ``PRODUCTS``: one row, each layer update taking its next ``n_chains n_units``, chains then units (the
        layout not read). ``DENSE``: not read (the uniforms are counter-based, see ``path``).
    v, h : (n_blocks n_chains, n_visible), (n_blocks n_chains, n_hidden)
        The states, 0/1 floats.
    model : tuple
        ``(W, W_T, vbias, hbias)``, ``W_T`` being ``W.T`` in C order.
    rule : tuple
        ``(alpha_h, alpha_v, gibbs)``: the operator of each layer's update.
    blocks : tuple
        ``(n_blocks, betas, n_sweeps)``: the blocks swept, and each block's β and number of sweeps.
    target : tuple
        ``(evidence, has_evidence, h_fields, has_h_field)``: each layer updated at ``β a``, the visible logits
        of state row ``i`` plus ``evidence[i]`` (n_blocks n_chains, n_visible; untempered, read only with
        ``has_evidence``), the hidden logits of block ``r`` plus ``h_fields[r]`` (n_blocks, n_hidden; read only
        with ``has_h_field``).
    carried : tuple
        ``(a_h, a_v, a_v_valid, n_incremental, full_every)``: the activations ``hbias + v W`` (n_chains,
        n_hidden) and ``vbias + W h`` (n_chains, n_visible) at β = 1 of the block being swept, in place, and
        their bookkeeping. With ``full_every > 0`` (one block) the activations are carried: both follow each
        layer update by the rows of the units that changed (:func:`propagate`), summed afresh
        (:func:`sum_rows`) once ``n_incremental`` reaches ``full_every``, and ``a_v`` computed when not
        ``a_v_valid``. With 0 both are summed afresh at every sweep, and ``a_h`` is left at the last sweep's
        starting ``v``.
    work : tuple
        ``(h_new, v_new)``: buffers of ``h``'s and ``v``'s shapes. With ``full_every`` 0 no old state is
        needed: pass ``h`` and ``v`` themselves, updated in place.
    record : tuple
        ``(energies, energy_in, energy_out, logits_out, keep_logits)``: with ``energy_in``, ``energies[0, i]``
        receives the energy ``E(v, h)`` of state row ``i`` before its block's sweeps, from the activation
        summed afresh; with ``energy_out``, ``energies[1, i]`` that after them, from the visible activation of
        the last ``h``; with ``keep_logits``, ``logits_out[i]`` (n_blocks n_chains, n_visible) the last visible
        logits ``β a_v`` without evidence (``ROWS`` only).
    path : tuple
        ``(from_visible, to_hidden, dense, exp_known)``. ``PRODUCTS`` is block Gibbs at β = 1 without evidence
        or fields, with ``full_every`` 0 (``rule``, ``target``, ``record`` not read), and may sweep half sweeps:
        with ``from_visible`` the first sweep begins at the visible activation, with ``to_hidden`` the last
        ends after the hidden layer (``ROWS`` and ``DENSE`` sweep whole sweeps: both False). ``DENSE``
        is one block at β = 1 without evidence or fields, updated in place, with carried activations that may
        lack their bias (a product leaves it out: the next pass over them adds it); ``dense`` is
        ``(key, changes, counts, hidden_exp, v_out, max_fraction)`` (:func:`dense_update`; sweep ``t``
        updates the hidden layer with stream ``2t`` and the visible one with ``2t + 1``; ``hidden_exp`` holds
        ``exp(-|a_h|)`` of the ``a_h`` given when ``exp_known``), None on the other paths.

    Returns
    -------
    a_v_valid : bool
    n_incremental : int
    h_pending : bool
        ``a_h`` lacks ``hbias`` (``DENSE``; the caller adds it, or folds it into its next pass over ``a_h``).
    """
    uniforms, h_step, v_offset, v_step = u
    W, W_T, vbias, hbias = model
    alpha_h, alpha_v, gibbs = rule
    n_blocks, betas, n_sweeps = blocks
    evidence, has_evidence, h_fields, has_h_field = target
    a_h, a_v, a_v_valid, n_incremental, full_every = carried
    h_new, v_new = work
    energies, energy_in, energy_out, logits_out, keep_logits = record
    from_visible, to_hidden, dense, exp_known = path
    n_chains, n_v = a_v.shape
    n_h = a_h.shape[1]
    row_u = 0
    o = 0  # PRODUCTS: the next uniform of uniforms[0]
    h_pending = False  # DENSE: a_h lacks hbias
    by_rows = False  # DENSE: the activation of the layer just updated follows it by rows
    for r in range(n_blocks):
        beta = betas[r]
        first = r * n_chains
        for t in range(row_u, row_u + n_sweeps[r]):
            if not (from_visible and t == 0):
                if n_incremental >= full_every:
                    n_incremental = 0
                    if mode == PRODUCTS:
                        product_rows(a_h, v, first, W, hbias)
                    elif mode == DENSE:
                        numpy_product(v, W, a_h)
                        h_pending, exp_known = True, False
                    else:
                        sum_rows(a_h, v, first, W, hbias)
                    a_v_valid = False
                if mode == PRODUCTS:
                    gibbs_rows(uniforms[0, o : o + n_chains * n_h].reshape((n_chains, n_h)), a_h,
                               h[first : first + n_chains])
                    o += n_chains * n_h
                elif mode == DENSE:
                    by_rows, incremental = dense_update(dense, 2 * t, h, a_h, hbias, h_pending, exp_known,
                                                        alpha_h, gibbs, 1, False, (a_v, W_T, a_v_valid))
                    exp_known = False
                    n_incremental += incremental
                else:
                    for k in range(n_chains):
                        i_row = first + k
                        if energy_in and t == row_u:
                            e = 0.0
                            for i in range(n_v):
                                if v[i_row, i] != 0.0:
                                    e += vbias[i]
                            for j in range(n_h):
                                if h[i_row, j] != 0.0:
                                    e += a_h[k, j]
                            energies[0, i_row] = -e
                        update_layer((uniforms, t, k * h_step), h, i_row, a_h, k,
                                     (beta, h_fields, r, has_h_field, logits_out, False), alpha_h, gibbs, h_new)
            if to_hidden and t == row_u + n_sweeps[r] - 1:
                break
            if mode == PRODUCTS:
                product_rows(a_v, h, first, W_T, vbias)
                gibbs_rows(uniforms[0, o : o + n_chains * n_v].reshape((n_chains, n_v)), a_v,
                           v[first : first + n_chains])
                o += n_chains * n_v
                continue
            if mode == DENSE:
                if not by_rows:
                    numpy_product(h, W.T, a_v)  # W's own memory (as the gemm floor), not W_T's: half the data cached
                a_v_valid = True
                by_rows, incremental = dense_update(dense, 2 * t + 1, v, a_v, vbias, not by_rows, False,
                                                    alpha_v, gibbs, 0, t == row_u + n_sweeps[r] - 1, (a_h, W, True))
                n_incremental += incremental
                h_pending = not by_rows
                if h_pending:
                    numpy_product(v, W, a_h)
                continue
            if a_v_valid:
                n_incremental += propagate(a_v, h, h_new, W_T, vbias)
            else:
                sum_rows(a_v, h_new, first, W_T, vbias)
                a_v_valid = True
            if full_every > 0:
                h[:, :] = h_new
            for k in range(n_chains):
                i_row = first + k
                update_layer((uniforms, t, v_offset + k * v_step), v, i_row, a_v, k,
                             (beta, evidence, i_row, has_evidence, logits_out, keep_logits), alpha_v, gibbs, v_new)
            if full_every > 0:
                n_incremental += propagate(a_h, v, v_new, W, hbias)
                v[:, :] = v_new
        row_u += n_sweeps[r]
        if energy_out:  # E(v, h) = -hbias·h - v·(vbias + W·h), from the visible activation of the last h
            for k in range(n_chains):
                i_row = first + k
                e_h = 0.0
                for j in range(n_h):
                    if h[i_row, j] != 0.0:
                        e_h += hbias[j]
                e_v = 0.0
                for i in range(n_v):
                    if v[i_row, i] != 0.0:
                        e_v += a_v[k, i]
                energies[1, i_row] = -(e_h + e_v)
    return a_v_valid, n_incremental, h_pending


AT_ONE = np.ones(1)  #: one block at β = 1 (the carried sweeps, the dense path, training's chains)


@njit(cache=True, nogil=True)
def sweeps(u, v, h, model, rule, carried):  # pragma: no cover - compiled
    """``u.shape[0]`` sweeps of :func:`sweep_rows` with carried activations, in place; ``n_incremental`` after.

    Parameters
    ----------
    u : (n_sweeps, n_chains (n_hidden + n_visible))
        Row ``t`` holds sweep ``t``'s uniforms in the NumPy kernels' order: the hidden layer, chains then units,
        then the visible layer.
    v, h : (n_chains, n_visible), (n_chains, n_hidden)
        The states, 0/1 floats.
    model, rule, carried : tuple
        As for :func:`sweep_rows`: ``(W, W_T, vbias, hbias)``, ``(alpha_h, alpha_v, gibbs)`` and
        ``(a_h, a_v, a_v_valid, n_incremental, full_every)``, ``full_every > 0``.
    """
    n_chains, n_v = v.shape
    n_h = h.shape[1]
    a_h, a_v = carried[0], carried[1]
    work = (np.empty_like(h), np.empty_like(v))
    one_block = (1, AT_ONE, np.full(1, u.shape[0]))
    no_target = (a_v, False, a_h, False)  # no evidence, no hidden field: a_v and a_h stand in for them
    no_record = (a_v, False, False, a_v, False)  # nothing recorded
    return sweep_rows(ROWS, (u, n_h, n_chains * n_h, n_v), v, h, model, rule, one_block, no_target, carried, work,
                      no_record, (False, False, None, False))[1]


@njit(cache=True, nogil=True)
def dense_sweeps(n_sweeps, v, h, model, rule, carried, dense, exp_known):  # pragma: no cover - compiled
    """``n_sweeps`` sweeps of a large batch with carried activations by :func:`sweep_rows`' ``DENSE`` path, in place.

    Parameters
    ----------
    n_sweeps : int
    v, h : (n_chains, n_visible), (n_chains, n_hidden)
        The states, 0/1 floats.
    model, rule, carried : tuple
        As for :func:`sweep_rows`: ``(W, W_T, vbias, hbias)``, ``(alpha_h, alpha_v, gibbs)`` and
        ``(a_h, a_v, a_v_valid, n_incremental, full_every)`` (``a_v`` read only when ``a_v_valid``; the
        activations are formed afresh once ``n_incremental`` incremental updates reach ``full_every``).
    dense : tuple
        ``(key, changes, counts, hidden_exp, v_out, max_fraction)`` (:func:`dense_update`): the key (4,),
        uint64, of the sweeps' counter-based uniforms; work, int8, of at least ``n_chains max(n_visible,
        n_hidden)`` entries; ``counts`` (2, n_chains) receives the visible and hidden units of each chain
        that changed in the last sweep; ``hidden_exp`` (n_chains, n_hidden) or (0, 0) holds ``exp(-|a_h|)``
        when ``exp_known`` (the first hidden update then takes none); ``v_out`` (n_chains, n_visible) or
        (0, 0), any dtype, receives the final ``v`` in its own dtype; the other layer's activation follows by
        rows when at most the fraction ``max_fraction`` of a layer's entries changed
        (:data:`~pymc_rbm.kernels.activations.BATCH_FRACTION`), else by a product.
    exp_known : bool

    Returns
    -------
    n_incremental : int
    h_pending : bool
        ``a_h`` lacks ``hbias`` (the caller adds it, or folds it into its next pass over ``a_h``).
    """
    a_h, a_v = carried[0], carried[1]
    one_block = (1, AT_ONE, np.full(1, n_sweeps))
    no_target = (a_v, False, a_h, False)  # no evidence, no hidden field, nothing recorded: stand-ins
    no_record = (a_v, False, False, a_v, False)
    _, n_incremental, h_pending = sweep_rows(DENSE, (a_v, 0, 0, 0), v, h, model, rule, one_block, no_target, carried,
                                             (h, v), no_record, (False, False, dense, exp_known))
    return n_incremental, h_pending


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
def free_energy_rows(v, W, vbias, hbias):  # pragma: no cover - compiled
    """:func:`free_energy` of 0/1 states ``v`` (n_chains, n_visible), their activation ``hbias + v W`` summed from
    the rows of the units that are on (:func:`sum_rows`)."""
    a_h = np.empty((v.shape[0], W.shape[1]))
    sum_rows(a_h, v, 0, W, hbias)
    return free_energy(v, a_h, vbias)


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


@njit(cache=True, nogil=True)
def draw(u, v, h, model, rule, carried, v_out, stats):  # pragma: no cover - compiled
    """:func:`sweeps`, then the draw's statistics: ``v_out`` receives ``v`` in its own dtype, ``stats[k]`` the
    free energy of chain ``k`` (:func:`free_energy`) and its visible and hidden units that changed."""
    v_start = v.copy()
    h_start = h.copy()
    n_incremental = sweeps(u, v, h, model, rule, carried)
    a_h, vbias = carried[0], model[2]
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

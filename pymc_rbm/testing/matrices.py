"""Exact transition matrices of layer updates, sweeps and the informed visible move over the joint states.

Matrices act on row vectors, ``T[x, y] = P(next = y | current = x)``, in the
order of :func:`~pymc_rbm.testing.states.joint_states`; they are built from the
same per-unit probability functions the samplers use.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pymc_rbm.energy import hidden_activation, sigmoid, visible_activation
from pymc_rbm.enumeration import binary_states
from pymc_rbm.kernels.flip import flip_probability, stay_probability
from pymc_rbm.testing.states import joint_index, joint_states

__all__ = ["gibbs_change_probability", "layer_matrices", "transition_matrix", "informed_visible_matrix",
           "scan_visible_matrix"]


def gibbs_change_probability(x, logit) -> np.ndarray:
    """Probability that a Gibbs update changes each unit: ``p(other state | other layer)``.

    Parameters
    ----------
    x : array_like of shape (..., n_units)
        Current 0/1 states.
    logit : array_like of shape (..., n_units)
        Tempered logits, ``P(x = 1) = sigmoid(logit)``.

    Returns
    -------
    ndarray of shape (..., n_units)
    """
    logit = np.asarray(logit, dtype=np.float64)
    return sigmoid(np.where(np.asarray(x) != 0, -logit, logit))


UnitRule = Callable[[np.ndarray, np.ndarray], "np.ndarray | tuple[np.ndarray, np.ndarray]"]


def _gibbs_rule(x, logit):
    return gibbs_change_probability(x, logit), gibbs_change_probability(np.asarray(x) == 0, logit)


def _mixture_rule(alpha: float) -> UnitRule:
    """Change and stay probabilities of ``α T_i + (1 - α) G_i`` from :func:`flip_probability`.

    The stay probability is assembled from its parts, ``α (1 - q_T) + (1 - α) p(current)``,
    where ``p(current)`` is Gibbs' change probability from the other state; ``1 - q``
    would round a stay probability of, say, ``1e-22`` to 0 and make a chain look reducible.
    """

    def rule(x, logit):
        return flip_probability(x, logit, alpha), stay_probability(x, logit, alpha)

    return rule


def _unit_rule(kernel) -> UnitRule:
    """The per-unit change probability ``rule(x, logit)`` that ``kernel`` names."""
    if isinstance(kernel, str):
        if kernel == "gibbs":
            return _gibbs_rule
        if kernel == "flip":
            return _mixture_rule(1.0)
        raise ValueError(f"kernel must be 'gibbs', 'flip', an alpha in [0, 1] or a callable, got {kernel!r}")
    if callable(kernel):
        return kernel
    if isinstance(kernel, (int, float, np.floating, np.integer)) and not isinstance(kernel, bool):
        alpha = float(kernel)
        flip_probability(np.zeros(1), np.zeros(1), alpha)  # validates alpha
        return _mixture_rule(alpha)
    raise TypeError(f"kernel must be 'gibbs', 'flip', an alpha in [0, 1] or a callable, got {type(kernel).__name__}")


def _layer_block(x: np.ndarray, logit: np.ndarray, rule: UnitRule) -> np.ndarray:
    """``P(x' | x)`` for each row of ``x`` and each state ``x'`` of the layer, units independent.

    ``rule(x, logit)`` returns the change probabilities ``q``, or a pair
    ``(q, stay)`` with stay probabilities computed without cancellation.
    Returns an array of shape (n_rows, 2**n_units).
    """
    out = rule(x, logit)
    q, stay = out if isinstance(out, tuple) else (out, None)
    q = np.asarray(q, dtype=np.float64)
    stay = 1.0 - q if stay is None else np.asarray(stay, dtype=np.float64)
    for name, a in (("change", q), ("stay", stay)):
        if a.shape != x.shape or not np.all((a >= 0.0) & (a <= 1.0)):
            raise ValueError(f"the unit rule must return {name} probabilities in [0, 1] of the shape of x")
    if np.abs(q + stay - 1.0).max() > 1e-12:
        raise ValueError("the unit rule's change and stay probabilities do not sum to 1")
    candidates = binary_states(x.shape[1]) != 0
    change = (x[:, None, :] != 0) != candidates[None, :, :]
    return np.where(change, q[:, None, :], stay[:, None, :]).prod(axis=-1)


def _layer_blocks(params, kernel, beta: float) -> tuple[np.ndarray, np.ndarray]:
    """The nonzero blocks of ``T_h`` and ``T_v``.

    Returns ``P_h`` of shape (Kv, Kh, Kh), ``P_h[v, h, h'] = T_h[(v, h), (v, h')]``,
    and ``P_v`` of shape (Kv, Kh, Kv), ``P_v[v, h, v'] = T_v[(v, h), (v', h)]``,
    with ``Kv = 2**n_visible`` and ``Kh = 2**n_hidden``.
    """
    rule = _unit_rule(kernel)
    params = params.astype(np.float64)
    nv, nh = params.n_visible, params.n_hidden
    v, h = joint_states(nv, nh)
    kv, kh = 2**nv, 2**nh
    p_h = _layer_block(h, float(beta) * hidden_activation(v, params), rule).reshape(kv, kh, kh)
    p_v = _layer_block(v, float(beta) * visible_activation(h, params), rule).reshape(kv, kh, kv)
    return p_h, p_v


def layer_matrices(params, kernel="flip", beta: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """The matrices ``T_h`` and ``T_v`` of the two half-sweeps over the joint states.

    Parameters
    ----------
    params : RBMParams
        At most :data:`~pymc_rbm.testing.states.MAX_JOINT_UNITS` units in all.
    kernel : {"gibbs", "flip"}, float or callable, default "flip"
        The per-unit operator: ``"gibbs"``, ``"flip"`` (Definition 1 of seed
        000, :func:`~pymc_rbm.kernels.flip_probability`), a float ``α`` for the
        mixture ``α T_i + (1 - α) G_i``, or a callable ``rule(x, logit)``
        returning the probability ``q`` that each unit changes, or a pair
        ``(q, stay)`` (to test variants).
    beta : float, default 1.0
        Inverse temperature; logits are ``β (bias + input)``.

    Returns
    -------
    T_h : ndarray of shape (N, N)
        Changes only ``h``: ``T_h[(v, h), (v, h')] = Π_j P(h'_j | h_j, v)``.
    T_v : ndarray of shape (N, N)
        Changes only ``v``: ``T_v[(v, h), (v', h)] = Π_i P(v'_i | v_i, h)``.
    """
    p_h, p_v = _layer_blocks(params, kernel, beta)
    kv, kh = p_h.shape[0], p_h.shape[1]
    eye_v, eye_h = np.eye(kv), np.eye(kh)
    # T_h[(v, h), (v', h')] = [v == v'] P_h[v, h, h'];  T_v[(v, h), (v', h')] = [h == h'] P_v[v, h, v']
    t_h = np.einsum("ab,ach->acbh", eye_v, p_h).reshape(kv * kh, kv * kh)
    t_v = np.einsum("ch,acb->acbh", eye_h, p_v).reshape(kv * kh, kv * kh)
    return t_h, t_v


def transition_matrix(params, kernel="flip", beta: float = 1.0) -> np.ndarray:
    """Transition matrix of one sweep ``T = T_h T_v`` (hidden layer first, then visible).

    Brügge, Fischer & Igel (2013), Definition 1: "the flip-the-state transition operator is given
    by T = T_h T_v", and for Gibbs "G = G_h G_v"; Fig. 3 compares the SLEMs of
    these joint matrices. The product needs no matrix multiplication: a
    sweep from ``(v, h)`` to ``(v', h')`` passes through ``(v, h')`` only, so
    ``T[(v, h), (v', h')] = T_h[(v, h), (v, h')] T_v[(v, h'), (v', h')]``.

    Parameters
    ----------
    params : RBMParams
    kernel : {"gibbs", "flip"}, float or callable, default "flip"
        See :func:`layer_matrices`.
    beta : float, default 1.0

    Returns
    -------
    ndarray of shape (2**(n_visible + n_hidden),) * 2
        Row-stochastic; ``T[x, y]`` is the probability that a sweep from
        joint state ``x`` ends in ``y``.
    """
    p_h, p_v = _layer_blocks(params, kernel, beta)
    kv, kh = p_h.shape[0], p_h.shape[1]
    # T[v, h, v', h'] = P_h[v, h, h'] * P_v[v, h', v']
    t = p_h[:, :, None, :] * p_v.transpose(0, 2, 1)[:, None, :, :]
    return t.reshape(kv * kh, kv * kh)


def _visible_given_hidden(params):
    """``n_visible``, the joint states ``(v, h)`` and the visible logits given each ``h``, in float64."""
    params = params.astype(np.float64)
    v, h = joint_states(params.n_visible, params.n_hidden)
    return params.n_visible, v, h, visible_activation(h, params)


def informed_visible_matrix(params, log_rest: Callable, kernel="gibbs", *, correction: str = "tilted",
                            tilt: Callable | None = None) -> np.ndarray:
    """Matrix of the likelihood-informed visible move over the joint states (hidden units kept).

    Given ``h``, ``v'`` is proposed by the operator's layer update on the
    RBM's visible logits tilted by the exact single-flip changes of ``log L``
    (:func:`~pymc_rbm.kernels.informed.flip_tilt`) and accepted with
    ``min(1, exp(log r))``; ``h`` is unchanged. With the hidden update
    ``T_h`` of :func:`layer_matrices` before it, ``T_h @ K_v`` is one sweep of
    the step methods' informed move for ``π(v, h) ∝ p(v, h) L(v)``.

    Parameters
    ----------
    params : RBMParams
    log_rest : callable
        ``log L(v)`` for an array of shape ``(..., n_visible)``, vectorised.
    kernel : {"gibbs", "flip"} or float, default "gibbs"
        The operator whose tilted update proposes (see :func:`layer_matrices`).
    correction : {"tilted", "likelihood", "none"}, default "tilted"
        ``log r``: the exact ratio of
        :func:`~pymc_rbm.kernels.informed.tilted_log_ratio`; or, as negative
        controls that tests must catch, the likelihood ratio alone, or none.
        ``"forward"``, a third control, uses the tilt at the current state for
        the reverse move too.
    tilt : callable, optional
        The tilt of the proposal, a function of the state ``(..., n_visible) -> (..., n_visible)``;
        default the exact single-flip changes. Any function of the state gives an exact move.

    Returns
    -------
    ndarray of shape (2**(n_visible + n_hidden),) * 2
    """
    from pymc_rbm.kernels.informed import flip_tilt, tilted_log_ratio
    from pymc_rbm.kernels.operators import operator_alpha

    if correction not in ("tilted", "likelihood", "none", "forward"):
        raise ValueError(f'correction must be "tilted", "likelihood", "none" or "forward", got {correction!r}')
    alpha = operator_alpha(kernel)
    nv, v, h, logits = _visible_given_hidden(params)
    n = v.shape[0]

    def exact_tilt(x):
        flipped = np.stack([np.where(np.arange(nv) == i, 1.0 - x, x) for i in range(nv)], axis=1)
        return flip_tilt(x, log_rest(x), log_rest(flipped))

    tilt = exact_tilt if tilt is None else tilt

    forward = tilt(v)
    proposal = _layer_block(v, logits + forward, _unit_rule(kernel))  # (n, 2**nv)
    T = np.zeros((n, n))
    for j, v_new in enumerate(binary_states(nv)):
        vn = np.broadcast_to(v_new, v.shape)
        if correction in ("tilted", "forward"):
            backward = forward if correction == "forward" else tilt(vn)
            log_r = tilted_log_ratio(v, vn, logits, forward, backward, log_rest(v), log_rest(vn), alpha=alpha)
        elif correction == "likelihood":
            log_r = log_rest(vn) - log_rest(v)
        else:
            log_r = np.zeros(n)
        moved = ~np.all(vn == v, axis=1)
        T[np.arange(n), joint_index(vn, h)] += np.where(moved, proposal[:, j] * np.exp(np.minimum(log_r, 0.0)), 0.0)
    rest = 1.0 - T.sum(axis=1)
    T[np.arange(n), np.arange(n)] += np.where((rest < 0.0) & (rest > -1e-12), 0.0, rest)  # rounding, not a bug
    return T


def scan_visible_matrix(params, log_rest: Callable, kernel="flip", *, correction: str = "exact") -> np.ndarray:
    """Matrix of a random-order scan of single visible-unit updates at their conditionals under ``L``.

    Given ``h``, the units are visited in a uniformly random order; each is
    updated by the operator's single-unit rule at its exact conditional logit
    ``a_i + log L(v | v_i = 1) - log L(v | v_i = 0)`` (what
    :func:`~pymc_rbm.kernels.informed.predictor_scan` does); ``h`` is
    unchanged. The matrix is the average, over the ``n_visible!`` orders, of
    the products of the single-unit matrices.

    Parameters
    ----------
    params : RBMParams
    log_rest : callable
        ``log L(v)`` for an array of shape ``(..., n_visible)``, vectorised.
    kernel : {"gibbs", "flip"} or float, default "flip"
        The single-unit rule (see :func:`layer_matrices`).
    correction : {"exact", "none", "sign"}, default "exact"
        The conditional; or, as negative controls that tests must catch, the
        RBM's logit alone (``L`` ignored) or the change of ``log L`` taken
        without its sign (``log L(v ⊕ e_i) - log L(v)`` for a unit that is on).

    Returns
    -------
    ndarray of shape (2**(n_visible + n_hidden),) * 2
    """
    from itertools import permutations

    if correction not in ("exact", "none", "sign"):
        raise ValueError(f'correction must be "exact", "none" or "sign", got {correction!r}')
    rule = _unit_rule(kernel)
    nv, v, h, logits = _visible_given_hidden(params)
    n = v.shape[0]
    single = []
    for i in range(nv):
        flipped = v.copy()
        flipped[:, i] = 1.0 - flipped[:, i]
        gain = log_rest(flipped) - log_rest(v)
        d = 1.0 - 2.0 * v[:, i]
        tilt = {"exact": d * gain, "none": 0.0 * gain, "sign": gain}[correction]
        q, stay = (np.asarray(x, dtype=np.float64) for x in rule(v[:, i:i + 1], (logits[:, i] + tilt)[:, None]))
        T = np.zeros((n, n))
        T[np.arange(n), joint_index(flipped, h)] += q[:, 0]
        T[np.arange(n), np.arange(n)] += stay[:, 0]
        single.append(T)
    orders = list(permutations(range(nv)))
    total = np.zeros((n, n))
    for order in orders:
        T = np.eye(n)
        for i in order:
            T = T @ single[i]
        total += T
    return total / len(orders)

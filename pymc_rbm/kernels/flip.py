"""The flip-the-state transition operator (Brügge, Fischer & Igel 2013) and its α mixture with Gibbs.

Brügge, Fischer & Igel (2013), Definition 1: for a visible unit with
``v*_i`` its more probable state given ``h`` (or ``-1`` on a tie), the
basic operator ``T_i`` changes only ``v_i``, with

====================================  ==========================
case                                  ``T_i((v, h), (v', h))``
====================================  ==========================
``v*_i = v_i ≠ v'_i``                 ``p(v'_i | h) / p(v_i | h)``
``v*_i = v_i = v'_i``                 ``1 - p(v'_i | h) / p(v_i | h)``
``v_i ≠ v'_i = v*_i``                 ``1``
``v_i = v'_i ≠ v*_i``                 ``0``
``v*_i = -1``                         ``1/2``
====================================  ==========================

"The transition matrix containing the transition probabilities of the
visible layer is given by T_v = ∏_i T_i. The transition matrix for the
hidden layer T_h is defined analogously, and the flip-the-state transition
operator is given by T = T_h T_v." Given the other layer the units are
independent, so one layer update flips every unit at once, each with its
own probability; :func:`flip_probability` gives that probability.

The tie rule (last row) matters: "In the—in practice not relevant but for
theoretical considerations important—case of two states with the exact
same conditional probability, we use the transition probabilities of Gibbs
sampling to avoid a non-ergodic Markov chain." Here a tie is a tempered
logit that is exactly 0, so it occurs for ``β = 0`` (the start of AIS) and
for zero biases with an all-zero other layer.

§5.2 proposes to "softly blend between the basic operators and consider
T^α_i = α T_i + (1 - α) G_i, α ∈ [0, 1]". A mixture of two kernels for one
unit changes the unit with the mixed probability, so the layer update is the
same with ``q = α q_T + (1 - α) q_G``, where ``q_G = p(other state | rest)``
is the probability that a Gibbs update ends in the other state. Both ``T_i``
and ``G_i`` satisfy detailed balance, hence so does ``T^α_i``. ``α = 1`` is
the flip-the-state operator, ``α = 0`` Gibbs (in distribution).
"""

from __future__ import annotations

import functools

import numpy as np
from pymc_rbm.kernels.layer import LayerRule, check_alpha, compiled_rule
from pymc_rbm.kernels.state import RBMState, SweepInfo
from pymc_rbm.kernels.sweep import at_beta, sweep

__all__ = [
    "check_alpha",
    "flip_probability",
    "stay_probability",
    "flip_layer",
    "flip_hiddens",
    "flip_visibles",
    "flip_sweep",
    "build_kernel",
]


def flip_probability(x, logit, alpha: float = 1.0) -> np.ndarray:
    """Probability that each unit changes its state in one update.

    Parameters
    ----------
    x : array_like of shape (..., n_units)
        Current states, values in {0, 1} (or booleans).
    logit : array_like of shape (..., n_units)
        Tempered conditional logits ``a = β (bias + input)``, so that
        ``P(x = 1 | other layer) = sigmoid(a)``.
    alpha : float in [0, 1], default 1.0
        Mixture weight of §5.2: ``q = α q_T + (1 - α) q_G``.

    Returns
    -------
    ndarray of shape (..., n_units)
        ``q_T`` is Definition 1 of Brügge, Fischer & Igel (2013): 1 when the current state is the
        less probable one, ``p(other) / p(current) = exp(-|a|)`` when it is
        the more probable one, and 1/2 when ``a == 0`` exactly (the tie
        rule). ``q_G = p(other) = sigmoid(±a)`` is Gibbs' probability of
        ending in the other state.

    Examples
    --------
    >>> from pymc_rbm.kernels import flip_probability
    >>> flip_probability([0, 1, 1, 0], [2.0, 2.0, 0.0, -50.0]).round(6)
    array([1.      , 0.135335, 0.5     , 0.      ])
    >>> flip_probability([0, 1], [2.0, 2.0], alpha=0.0).round(6)  # Gibbs
    array([0.880797, 0.119203])
    """
    alpha = check_alpha(alpha)
    logit = np.asarray(logit, dtype=np.float64)
    on = np.asarray(x) != 0
    shape = np.broadcast_shapes(on.shape, logit.shape)
    a = np.ascontiguousarray(np.broadcast_to(logit, shape)).ravel()
    states = np.ascontiguousarray(np.broadcast_to(on, shape)).ravel().astype(np.float64)
    out = np.empty(a.size)
    compiled_rule().change_probabilities(states, a, alpha, out)  # the rule's own probability
    return out.reshape(shape)


def stay_probability(x, logit, alpha: float = 1.0) -> np.ndarray:
    """Probability that each unit keeps its state in one update: ``1 - flip_probability``, without cancellation.

    Assembled from its parts, ``α (1 - q_T) + (1 - α) p(current)``, where
    ``p(current) = sigmoid(-s)`` is Gibbs' probability of staying; ``1 - q``
    would round a stay probability of, say, ``1e-22`` to 0.

    Parameters
    ----------
    x, logit, alpha
        As for :func:`flip_probability`.

    Returns
    -------
    ndarray of shape (..., n_units)

    Examples
    --------
    >>> from pymc_rbm.kernels.flip import stay_probability
    >>> stay_probability([0, 1, 1], [2.0, 2.0, 0.0]).round(6)
    array([0.      , 0.864665, 0.5     ])
    """
    alpha = check_alpha(alpha)
    stay = 1.0 - flip_probability(x, logit, 1.0) if alpha != 0.0 else 0.0
    if alpha != 1.0:
        stay = stay * alpha + (1.0 - alpha) * flip_probability(np.asarray(x) == 0, logit, 0.0)
    return stay


def flip_layer(rng: np.random.Generator, x: np.ndarray, logit: np.ndarray, *, alpha: float = 1.0) -> np.ndarray:
    """One update of a layer given its tempered logits (stochastic).

    ``x_new = x XOR (u < q)`` with ``u`` uniform on [0, 1) and ``q`` from
    :func:`flip_probability`.

    Parameters
    ----------
    rng : numpy.random.Generator
    x : ndarray of shape (n_chains, n_units)
        Current states, values in {0, 1}.
    logit : ndarray of shape (n_chains, n_units)
        Tempered conditional logits of the layer given the other layer;
        not modified.
    alpha : float in [0, 1], default 1.0

    Returns
    -------
    ndarray of shape (n_chains, n_units)
        The new states, in the dtype of ``x``.
    """
    return LayerRule(check_alpha(alpha)).update(rng, x, logit)[0]


def flip_hiddens(rng: np.random.Generator, h: np.ndarray, v: np.ndarray, params, beta=None, *, alpha: float = 1.0):
    """The hidden half-sweep ``T_h``: update ``h`` given ``v`` (stochastic).

    Parameters
    ----------
    rng : numpy.random.Generator
    h : ndarray of shape (n_chains, n_hidden)
        Current hidden states (the operator depends on them).
    v : ndarray of shape (n_chains, n_visible)
    params : RBMParams or SpinRBMParams
    beta : float or ndarray of shape (n_chains,), optional
    alpha : float in [0, 1], default 1.0

    Returns
    -------
    ndarray of shape (n_chains, n_hidden)
        The new hidden states, in the dtype of ``h``.
    """
    target = at_beta(params, beta, v.shape[0])
    return params.hidden.update(rng, h, target.hidden_logits(target.hidden_input(v)), LayerRule(check_alpha(alpha)))[0]


def flip_visibles(rng: np.random.Generator, v: np.ndarray, h: np.ndarray, params, beta=None, *, alpha: float = 1.0):
    """The visible half-sweep ``T_v``: update ``v`` given ``h`` (stochastic).

    Reversible with respect to ``p_β(v | h)``, so it can serve as a proposal
    for the visible layer that a Metropolis step corrects for other model
    terms.

    Parameters
    ----------
    rng : numpy.random.Generator
    v : ndarray of shape (n_chains, n_visible)
        Current visible states (the operator depends on them).
    h : ndarray of shape (n_chains, n_hidden)
    params : RBMParams or SpinRBMParams
    beta : float or ndarray of shape (n_chains,), optional
    alpha : float in [0, 1], default 1.0

    Returns
    -------
    ndarray of shape (n_chains, n_visible)
        The new visible states, in the dtype of ``v``.
    """
    target = at_beta(params, beta, h.shape[0])
    return params.visible.update(rng, v, target.visible_logits(h), LayerRule(check_alpha(alpha)))[0]


def flip_sweep(
    rng: np.random.Generator, state: RBMState, params, beta=None, *, alpha: float = 1.0
) -> tuple[RBMState, SweepInfo]:
    """One sweep ``T = T_h T_v`` of the flip-the-state operator (stochastic).

    The hidden layer is updated given ``v``, then the visible layer given the
    new ``h``, each unit flipping with its :func:`flip_probability`. The
    chain leaves ``p_β(v, h)`` invariant and, thanks to the tie rule, is
    irreducible and aperiodic (Brügge, Fischer & Igel 2013, Theorems 1 and 2), for any
    ``alpha`` in [0, 1].

    Parameters
    ----------
    rng : numpy.random.Generator
    state : RBMState
        Current ``v`` (n_chains, n_visible) and ``h`` (n_chains, n_hidden),
        0/1 floats, ints or booleans. The operator depends on ``h``: when
        something else changed ``v`` or the parameters since the last sweep,
        redraw ``h`` from ``p(h | v)`` first (:func:`~pymc_rbm.kernels.init_state`).
    params : RBMParams
    beta : float or ndarray of shape (n_chains,), optional
        Inverse temperature, shared or one per chain.
    alpha : float in [0, 1], default 1.0
        ``T^α_i = α T_i + (1 - α) G_i`` per unit; 0 is Gibbs in distribution.

    Returns
    -------
    state : RBMState
        The new state, in the dtypes of the old one.
    info : SweepInfo
        Numbers of visible and hidden units that changed, shape (n_chains,).

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm import RBMParams
    >>> from pymc_rbm.kernels import init_state, flip_sweep
    >>> rng = np.random.default_rng(0)
    >>> params = RBMParams.random(6, 4, scale=3.0, rng=1)
    >>> state = init_state(rng, np.zeros((10, 6)), params)
    >>> state, info = flip_sweep(rng, state, params, beta=np.linspace(0, 1, 10))
    >>> state.h.shape, info.n_changed.shape
    ((10, 4), (10,))
    """
    rule = LayerRule(check_alpha(alpha))
    return sweep(rng, state, at_beta(params, beta, state.v.shape[0]), rule)


def build_kernel(*, alpha: float = 1.0):
    """The flip-the-state kernel with its options bound once.

    Parameters
    ----------
    alpha : float in [0, 1], default 1.0
        Mixture weight with Gibbs (Brügge, Fischer & Igel 2013, §5.2).

    Returns
    -------
    callable
        ``kernel(rng, state, params, beta=None) -> (state, info)``.
    """
    return functools.partial(flip_sweep, alpha=check_alpha(alpha))

"""The sweep kernel in JAX: block Gibbs, flip-the-state and their α mixture on a batch of chains.

The same transitions as :mod:`pymc_rbm.kernels.gibbs` and
:mod:`pymc_rbm.kernels.flip` (Brügge, Fischer & Igel 2013): one sweep
updates the hidden layer given ``v``, then the visible layer given the new
``h`` (``T = T_h T_v``), every unit of a layer at once, each changing its
state with its own probability. For a unit whose state is ``x`` and whose
tempered conditional logit is ``a`` (``P(x = 1 | other layer) =
sigmoid(a)``), let ``s = log p(other state) / p(current state)``, that is
``a`` for a unit that is off and ``-a`` for one that is on. The probability
that the unit changes is

- Gibbs: ``q_G = sigmoid(s)`` (the other state's conditional probability);
- flip-the-state (Definition 1 of Brügge et al.): ``q_T = exp(min(s, 0))``,
  so 1 when the current state is the less probable one, and ``1/2`` on a tie
  (``s == 0`` exactly; the tie rule that keeps the chain irreducible);
- the mixture of their §5.2: ``q = α q_T + (1 - α) q_G``.

:func:`change_probabilities` returns ``q`` together with the stay
probability ``1 - q`` computed without cancellation, and
:func:`update_layer` draws the change by comparing a uniform with the
*smaller* of the two, so both tails are exact to the uniforms' resolution
(:func:`pymc_rbm.jax.arrays.uniform`). The kernels are the same transition
as the NumPy kernels, not the same random stream: ``tests/jax`` builds their
transition matrices from these probabilities and compares them with
:func:`pymc_rbm.testing.matrices.transition_matrix`.

What is sampled is a *target*, the record
:class:`~pymc_rbm.kernels.target.FieldTarget` that the NumPy sweep takes
too: a binary RBM at β plus per-unit fields, ``p(v, h) ∝ exp(β (v·vbias +
h·hbias + v·W·h) + v·φ + h·ψ)``, its fields JAX arrays (a pytree). The RBM
at β (:func:`at_beta`, what ``sweep(key, state, params, beta)`` builds), a
point of the AIS path (:mod:`pymc_rbm.jax.ais`) and a rung of a ladder
(:mod:`pymc_rbm.jax.tempering`) are such records, and the logits are the
record's (:mod:`pymc_rbm.kernels.target`, with this package's
full-precision product).

Everything here is a pure function of arrays, so it can be ``jax.jit``-ed,
``jax.vmap``-ed over parameters or temperatures, and run under
``jax.lax.scan``. The shape is BlackJAX's: :func:`init`, and
:func:`build_kernel` binding the operator once and returning
``kernel(key, state, target) -> (state, info)`` (or ``kernel(key, state,
params, beta=None)``) where the target, or the parameters and β, are passed
on every call; :func:`rbm_sampler` binds the parameters too, as BlackJAX's
top-level constructors do.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp

from pymc_rbm.jax.arrays import RBMArrays, matmul, uniform
from pymc_rbm.kernels import target as tg
from pymc_rbm.kernels.operators import operator_alpha
from pymc_rbm.kernels.target import FieldTarget

__all__ = [
    "RBMState",
    "SweepInfo",
    "SamplingAlgorithm",
    "FieldTarget",
    "at_beta",
    "hidden_logits",
    "visible_logits",
    "change_probabilities",
    "update_layer",
    "sweep",
    "init",
    "build_kernel",
    "rbm_sampler",
]


class RBMState(NamedTuple):
    """The joint state of a batch of chains (a pytree).

    Attributes
    ----------
    v : jax.Array of shape (n_chains, n_visible)
        Visible units, 0/1 in the parameters' floating type.
    h : jax.Array of shape (n_chains, n_hidden), or None
        Hidden units, 0/1. Flip-the-state depends on it; a Gibbs sweep
        redraws it. None: unknown, and the next sweep draws the hidden layer
        afresh by Gibbs (as AIS does at every step).
    hidden_input : jax.Array of shape (n_chains, n_hidden), or None
        The untempered hidden input ``hbias + v·W`` of ``v``, carried from
        sweep to sweep when given (:func:`sweep`); default None.
    """

    v: jax.Array
    h: jax.Array | None
    hidden_input: jax.Array | None = None


class SweepInfo(NamedTuple):
    """What one sweep did, per chain.

    Attributes
    ----------
    n_changed : jax.Array of int32 of shape (n_chains,)
        Visible units that changed.
    n_hidden_changed : jax.Array of int32 of shape (n_chains,)
        Hidden units that changed.
    """

    n_changed: jax.Array
    n_hidden_changed: jax.Array


class SamplingAlgorithm(NamedTuple):
    """BlackJAX's pair of functions with the parameters bound (:func:`rbm_sampler`).

    Attributes
    ----------
    init : callable
        ``init(v, key) -> RBMState``.
    step : callable
        ``step(key, state) -> (RBMState, SweepInfo)``.
    """

    init: callable
    step: callable


def at_beta(params, beta=None) -> FieldTarget:
    """The target of an RBM at ``beta``: :class:`~pymc_rbm.kernels.target.FieldTarget` without fields.

    Parameters
    ----------
    params : RBMArrays or FieldTarget
        A record is returned as it is (then ``beta`` must be None).
    beta : None, float or jax.Array of shape (n_chains,)
        Shared or one per chain; None: 1.

    Returns
    -------
    FieldTarget
        ``beta`` as a scalar or a column of shape (n_chains, 1), in the
        couplings' floating type.
    """
    if isinstance(params, FieldTarget):
        if beta is not None:
            raise TypeError("beta is part of a FieldTarget: give the record alone, or RBMArrays and beta")
        return params
    W, vbias, hbias = params.W, params.vbias, params.hbias
    if beta is None:
        return tg.tempered(W, vbias, hbias)
    b = jnp.asarray(beta, dtype=W.dtype)
    return tg.tempered(W, vbias, hbias, b[..., None] if b.ndim >= 1 else b)


def hidden_logits(v, params, beta=None):
    """Hidden logits ``β (hbias + v·W) + ψ`` of a target.

    Parameters
    ----------
    v : jax.Array of shape (n_chains, n_visible)
    params : RBMArrays or FieldTarget
    beta : None, float or jax.Array of shape (n_chains,)
        With RBMArrays only (:func:`at_beta`).

    Returns
    -------
    jax.Array of shape (n_chains, n_hidden)
    """
    target = at_beta(params, beta)
    return tg.hidden_logits(target, tg.hidden_input(target, v, matmul))


def visible_logits(h, params, beta=None):
    """Visible logits ``β (vbias + W·h) + φ`` of a target.

    Parameters
    ----------
    h : jax.Array of shape (n_chains, n_hidden)
    params : RBMArrays or FieldTarget
    beta : None, float or jax.Array of shape (n_chains,)
        With RBMArrays only (:func:`at_beta`).

    Returns
    -------
    jax.Array of shape (n_chains, n_visible)
    """
    return tg.visible_logits(at_beta(params, beta), h, matmul)


def change_probabilities(x, logit, alpha: float):
    """Probability that each unit changes its state, and that it stays, in one layer update.

    Parameters
    ----------
    x : jax.Array of shape (..., n_units)
        Current states, 0/1 (or booleans).
    logit : jax.Array of shape (..., n_units)
        Tempered conditional logits, ``P(x = 1 | other layer) = sigmoid(logit)``.
    alpha : float in [0, 1]
        A Python number (bound when the kernel is built): 0 is Gibbs, 1
        flip-the-state, in between the mixture ``α T + (1 - α) G``.

    Returns
    -------
    change : jax.Array of shape (..., n_units)
        ``q = α q_T + (1 - α) q_G`` (see the module docstring).
    stay : jax.Array of shape (..., n_units)
        ``1 - q``, assembled from its parts (``-expm1`` and ``sigmoid(-s)``)
        so that a stay probability of ``1e-20`` is not rounded to 0.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> from pymc_rbm.jax.sweep import change_probabilities
    >>> q, stay = change_probabilities(jnp.array([0, 1, 1, 0]), jnp.array([2.0, 2.0, 0.0, -50.0]), 1.0)
    >>> [round(float(x), 6) for x in q]
    [1.0, 0.135335, 0.5, 0.0]
    """
    s = jnp.where(x != 0, -logit, logit)  # log p(other) / p(current)
    if alpha == 0.0:
        return jax.nn.sigmoid(s), jax.nn.sigmoid(-s)
    m = jnp.minimum(s, 0.0)
    tie = s == 0.0
    half = jnp.asarray(0.5, dtype=logit.dtype)
    q = jnp.where(tie, half, jnp.exp(m))
    stay = jnp.where(tie, half, -jnp.expm1(m))
    if alpha == 1.0:
        return q, stay
    a = jnp.asarray(alpha, dtype=logit.dtype)
    return a * q + (1 - a) * jax.nn.sigmoid(s), a * stay + (1 - a) * jax.nn.sigmoid(-s)


def update_layer(key, x, logit, alpha: float):
    """One update of a layer given its tempered logits (stochastic).

    Each unit changes with its probability ``q`` (:func:`change_probabilities`):
    with ``u`` uniform, the change is ``u < q`` where ``q <= 1/2`` and
    ``u >= 1 - q`` (computed as the stay probability) where ``q > 1/2``, so
    the comparison is always made with the smaller probability, where the
    uniforms are finest.

    Parameters
    ----------
    key : jax.Array
    x : jax.Array of shape (n_chains, n_units)
        Current states, 0/1.
    logit : jax.Array of shape (n_chains, n_units)
    alpha : float in [0, 1]
        As in :func:`change_probabilities` (a Python number).

    Returns
    -------
    new : jax.Array of shape (n_chains, n_units)
        The new states, in the dtype of ``x``.
    n_changed : jax.Array of int32 of shape (n_chains,)
    """
    q, stay = change_probabilities(x, logit, alpha)
    u = uniform(key, x.shape, logit.dtype)
    change = jnp.where(q <= stay, u < q, u >= stay)
    new = jnp.logical_xor(x != 0, change).astype(x.dtype)
    return new, change.sum(axis=-1, dtype=jnp.int32)


def sweep(key, state: RBMState, target, beta=None, *, alpha: float):
    """One sweep ``T = T_h T_v``: hidden layer given ``v``, then visible layer given the new ``h`` (stochastic).

    Parameters
    ----------
    key : jax.Array
        Split in two: the hidden layer's uniforms, then the visible layer's.
    state : RBMState
        ``v`` (n_chains, n_visible), ``h`` (n_chains, n_hidden). The
        operator depends on ``h`` unless ``alpha == 0``: when ``v`` or the
        target changed since the last sweep, redraw it with :func:`init`, or
        give ``h=None``: the hidden layer is then a Gibbs draw whatever
        ``alpha`` (``alpha`` moves the visible layer only), and its change
        count is 0. With ``hidden_input`` given it is used instead of the
        product ``hbias + v·W``, and the new state carries that of the new
        ``v``.
    target : FieldTarget or RBMArrays
        What is sampled: the sweep leaves ``p(v, h) ∝ exp(β (v·vbias +
        h·hbias + v·W·h) + v·φ + h·ψ)`` invariant
        (:class:`~pymc_rbm.kernels.target.FieldTarget`, its arrays JAX
        arrays; a pytree argument of ``jax.jit``). RBMArrays with ``beta``
        give the RBM at ``beta`` (:func:`at_beta`).
    beta : None, float or jax.Array of shape (n_chains,)
        Inverse temperature, shared or one per chain, with RBMArrays only.
    alpha : float in [0, 1]
        0: block Gibbs; 1: flip-the-state; between: the mixture.

    Returns
    -------
    state : RBMState
        ``hidden_input`` carried when it was given.
    info : SweepInfo
    """
    target = at_beta(target, beta)
    key_h, key_v = jax.random.split(key)
    carried = state.hidden_input is not None
    a = state.hidden_input if carried else tg.hidden_input(target, state.v, matmul)
    logit_h = tg.hidden_logits(target, a)
    if state.h is None:
        h, _ = update_layer(key_h, jnp.zeros_like(logit_h), logit_h, 0.0)
        n_h = jnp.zeros(h.shape[:-1], dtype=jnp.int32)
    else:
        h, n_h = update_layer(key_h, state.h, logit_h, alpha)
    v, n_v = update_layer(key_v, state.v, tg.visible_logits(target, h, matmul), alpha)
    a = tg.hidden_input(target, v, matmul) if carried else None
    return RBMState(v, h, a), SweepInfo(n_changed=n_v, n_hidden_changed=n_h)


def _check_visible(v, params):
    v = jnp.asarray(v, dtype=params.W.dtype)
    if v.ndim == 1:
        v = v[None, :]
    if v.ndim != 2 or v.shape[1] != params.W.shape[0]:
        raise ValueError(f"v must have shape (n_chains, n_visible={params.W.shape[0]}), got {v.shape}")
    if not isinstance(v, jax.core.Tracer) and not bool(jnp.all((v == 0) | (v == 1))):
        raise ValueError("v must hold binary values (0 or 1)")
    return v


def init(key, v, params, beta=None) -> RBMState:
    """A state with visible values ``v`` and ``h ~ p(h | v)`` of the target (stochastic).

    Parameters
    ----------
    key : jax.Array
    v : array_like of shape (n_chains, n_visible) or (n_visible,)
        Binary values (checked unless traced); one state is one chain.
    params : RBMArrays or FieldTarget
    beta : None, float or jax.Array of shape (n_chains,)
        With RBMArrays only (:func:`at_beta`).

    Returns
    -------
    RBMState
    """
    v = _check_visible(v, params)
    h0 = jnp.zeros((v.shape[0], params.W.shape[1]), dtype=v.dtype)
    h, _ = update_layer(key, h0, hidden_logits(v, params, beta), 0.0)
    return RBMState(v, h)


def build_kernel(operator="gibbs"):
    """The sweep kernel with its operator bound once.

    Parameters
    ----------
    operator : {"gibbs", "flip"} or float in [0, 1], default "gibbs"
        As in :func:`pymc_rbm.kernels.operators.operator_alpha`.

    Returns
    -------
    callable
        ``kernel(key, state, target) -> (RBMState, SweepInfo)`` for a
        :class:`~pymc_rbm.kernels.target.FieldTarget`, or ``kernel(key,
        state, params, beta=None)``: :func:`sweep` with ``alpha`` bound, a
        pure function (wrap it in ``jax.jit``).

    Examples
    --------
    >>> import jax, numpy as np
    >>> from pymc_rbm import RBMParams
    >>> from pymc_rbm.jax import from_params
    >>> from pymc_rbm.jax.sweep import build_kernel, init
    >>> params = from_params(RBMParams.random(6, 4, scale=2.0, rng=1), dtype="float32")
    >>> kernel = jax.jit(build_kernel("flip"))
    >>> state = init(jax.random.key(0), np.zeros((10, 6)), params)
    >>> state, info = kernel(jax.random.key(1), state, params, 0.5)
    >>> state.v.shape, info.n_changed.shape
    ((10, 6), (10,))
    """
    return functools.partial(sweep, alpha=operator_alpha(operator))


def rbm_sampler(params: RBMArrays, *, operator="gibbs", beta=None) -> SamplingAlgorithm:
    """BlackJAX's top-level shape: ``init`` and ``step`` with the parameters and β bound.

    Parameters
    ----------
    params : RBMArrays
    operator : {"gibbs", "flip"} or float in [0, 1], default "gibbs"
    beta : None, float or jax.Array of shape (n_chains,)

    Returns
    -------
    SamplingAlgorithm
        ``init(v, key)`` and ``step(key, state)``, the latter jitted.
    """
    kernel = build_kernel(operator)

    def init_fn(v, key):
        return init(key, v, params, beta)

    @jax.jit
    def step_fn(key, state):
        return kernel(key, state, params, beta)

    return SamplingAlgorithm(init_fn, step_fn)


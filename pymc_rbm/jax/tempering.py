"""Replica exchange in JAX: ladders of tempered replicas, non-reversible swaps, and the adapted ladder.

The roles of Pigeons (Surjanovic et al. 2023): an *explorer* moves each
replica with a transition that leaves its own tempered distribution
``p_{β_r}(v, h) ∝ exp(-β_r E(v, h))`` invariant (the sweep kernel of
:mod:`pymc_rbm.jax.sweep` at one β per chain); a *communication* step
proposes to exchange the states of neighbouring replicas; *recorders* keep
the swap statistics from which the ladder is adapted between runs.

Swaps follow the non-reversible deterministic even/odd scheme of Syed,
Bouchard-Côté, Deligiannidis & Doucet (2022): round ``n`` attempts the pairs
``(r, r + 1)`` with ``r ≡ n (mod 2)``, so the rounds alternate between
``(0, 1), (2, 3), ...`` and ``(1, 2), (3, 4), ...``, and a state that was
just swapped upwards is next offered a swap further up, not back down.
Each pair is a Metropolis move on the product distribution with log ratio

    (β_{r+1} - β_r) (E(x_{r+1}) - E(x_r))

(the partition functions cancel), decided by ``log u < log ratio``: the
swap ratio ``U_r(x_r) + U_{r+1}(x_{r+1}) - U_r(x_{r+1}) - U_{r+1}(x_r)`` of
the rungs' target records (:func:`ladder_target`;
:func:`pymc_rbm.kernels.target.ladder_log_ratio`), which for a ladder in β
of one RBM is this product. The
attempted pairs are disjoint, so a round leaves ``Π_r p_{β_r}`` invariant
(``tests/jax`` checks it exactly on enumerable RBMs).

Syed et al. show that the rejection rates ``r_i`` of neighbouring pairs add
up to the *global communication barrier* ``Λ = Σ_i r_i``, a property of the
model and the end points, not of the ladder; a ladder with its β spaced
evenly in the cumulative barrier equalises the rejection rates, and about
``2Λ`` replicas then suffice. :func:`communication_barrier` (the package's
one, from :mod:`pymc_rbm.kernels.tempering`) and :func:`adapt_ladder` do that
between runs (as Pigeons does between rounds);
the ladder is fixed within a run.

Arrays carry the temperature axis first: ``v`` has shape
``(n_temperatures, n_chains, n_visible)``, ``n_chains`` independent ladders
side by side; split them across devices along axis 1
(:func:`pymc_rbm.jax.sharding.shard_chains` with ``chain_axis=1``): swaps
never cross ladders.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from pymc_rbm.jax.arrays import RBMArrays, matmul, uniform
from pymc_rbm.jax.sweep import RBMState, SweepInfo, update_layer
from pymc_rbm.jax.sweep import build_kernel as build_sweep_kernel
from pymc_rbm.kernels import target as tg
from pymc_rbm.kernels.target import FieldTarget
from pymc_rbm.kernels.operators import operator_alpha
from pymc_rbm.kernels.tempering import check_ladder, communication_barrier, equalized_ladder

__all__ = [
    "TemperedState",
    "SwapInfo",
    "TemperingInfo",
    "SwapStats",
    "energy",
    "ladder_target",
    "init",
    "swap_log_ratio",
    "swap_neighbours",
    "tempered_sweep",
    "build_kernel",
    "run",
    "communication_barrier",
    "adapt_ladder",
]


class TemperedState(NamedTuple):
    """The replicas of a batch of ladders (a pytree).

    Attributes
    ----------
    v : jax.Array of shape (n_temperatures, n_chains, n_visible)
    h : jax.Array of shape (n_temperatures, n_chains, n_hidden)
    n_rounds : jax.Array of int32, shape ()
        Swap rounds done; its parity picks the next round's pairs.
    """

    v: jax.Array
    h: jax.Array
    n_rounds: jax.Array


class SwapInfo(NamedTuple):
    """What one swap round did.

    Attributes
    ----------
    attempted : jax.Array of bool of shape (n_temperatures - 1,)
        Whether pair ``(r, r + 1)`` was proposed.
    accepted : jax.Array of bool of shape (n_temperatures - 1, n_chains)
    acceptance : jax.Array of shape (n_temperatures - 1, n_chains)
        ``min(1, exp(log ratio))`` of every pair, attempted or not (the
        recorders average it: less noisy than the accept indicators).
    """

    attempted: jax.Array
    accepted: jax.Array
    acceptance: jax.Array


class TemperingInfo(NamedTuple):
    """What one step of :func:`build_kernel`'s kernel did.

    Attributes
    ----------
    sweep : SweepInfo
        The last sweep's change counts, shape (n_temperatures, n_chains).
    swap : SwapInfo
    """

    sweep: SweepInfo
    swap: SwapInfo


class SwapStats(NamedTuple):
    """The recorders of a :func:`run`.

    Attributes
    ----------
    rejection : ndarray of shape (n_temperatures - 1,)
        Mean rejection probability ``1 - min(1, exp(log ratio))`` of each
        neighbouring pair over the run's rounds and the ladders.
    barrier : float
        ``Λ = Σ rejection`` (Syed et al. 2022).
    n_rounds : int
    """

    rejection: np.ndarray
    barrier: float
    n_rounds: int


def energy(v, h, params: RBMArrays):
    """``E(v, h) = -v·W·h - vbias·v - hbias·h`` over any leading axes.

    Parameters
    ----------
    v : jax.Array of shape (..., n_visible)
    h : jax.Array of shape (..., n_hidden)
    params : RBMArrays

    Returns
    -------
    jax.Array of shape (...)
        :func:`pymc_rbm.kernels.target.rbm_energy`.
    """
    return tg.rbm_energy(tg.tempered(params.W, params.vbias, params.hbias), v, h, matmul)


def ladder_target(params: RBMArrays, betas) -> FieldTarget:
    """The rungs of a ladder in β as one target record: ``beta`` of shape (n_temperatures, 1, 1).

    Parameters
    ----------
    params : RBMArrays
    betas : array_like of shape (n_temperatures,)

    Returns
    -------
    FieldTarget
        Rung ``r`` (the replicas ``v[r]`` of shape (n_chains, n_visible)) at ``β_r``, no fields.
    """
    b = jnp.asarray(betas, dtype=params.W.dtype)
    return tg.tempered(params.W, params.vbias, params.hbias, b[:, None, None])


def init(key, v, params: RBMArrays, betas) -> TemperedState:
    """Ladders with the given visible values and ``h_r ~ p_{β_r}(h | v_r)`` (stochastic).

    Parameters
    ----------
    key : jax.Array
    v : array_like of shape (n_chains, n_visible) or (n_temperatures, n_chains, n_visible)
        Binary values; a 2-D array starts every replica of ladder ``c`` at ``v[c]``.
    params : RBMArrays
    betas : array_like of shape (n_temperatures,)
        Strictly increasing (:func:`pymc_rbm.kernels.tempering.check_ladder`).

    Returns
    -------
    TemperedState
        With ``n_rounds = 0``.
    """
    ladder = ladder_target(params, check_ladder(betas))
    t = ladder.beta.shape[0]
    v = jnp.asarray(v, dtype=params.W.dtype)
    if v.ndim == 2:
        v = jnp.broadcast_to(v[None], (t,) + v.shape)
    if v.ndim != 3 or v.shape[0] != t or v.shape[2] != params.W.shape[0]:
        raise ValueError(f"v must have shape (n_chains, n_visible) or ({t}, n_chains, n_visible), got {v.shape}")
    h0 = jnp.zeros(v.shape[:2] + (params.W.shape[1],), dtype=v.dtype)
    h, _ = update_layer(key, h0, tg.hidden_logits(ladder, tg.hidden_input(ladder, v, matmul)), 0.0)
    return TemperedState(v, h, jnp.zeros((), dtype=jnp.int32))


def swap_log_ratio(state: TemperedState, params: RBMArrays, betas):
    """Log Metropolis ratio of exchanging every neighbouring pair of replicas.

    Parameters
    ----------
    state : TemperedState
    params : RBMArrays
    betas : jax.Array of shape (n_temperatures,)

    Returns
    -------
    jax.Array of shape (n_temperatures - 1, n_chains)
        ``(β_{r+1} - β_r) (E(v_{r+1}, h_{r+1}) - E(v_r, h_r))``: the swap
        ratio of the rungs' records (:func:`pymc_rbm.kernels.target.ladder_log_ratio`
        of :func:`ladder_target`).
    """
    return tg.ladder_log_ratio(ladder_target(params, betas), state.v, state.h, matmul)


def _exchange(x, accepted):
    """Slot ``r`` takes the state of ``r + 1`` where pair ``r`` swapped, of ``r - 1`` where pair ``r - 1`` did."""
    pad = jnp.zeros((1,) + accepted.shape[1:], dtype=bool)
    from_above = jnp.concatenate([accepted, pad])[..., None]
    from_below = jnp.concatenate([pad, accepted])[..., None]
    return jnp.where(from_above, jnp.roll(x, -1, axis=0), jnp.where(from_below, jnp.roll(x, 1, axis=0), x))


def swap_neighbours(key, state: TemperedState, params: RBMArrays, betas, *, log_ratio_fn=None):
    """One round of non-reversible replica exchange (stochastic).

    Pairs ``(r, r + 1)`` with ``r ≡ state.n_rounds (mod 2)`` exchange their
    joint states ``(v, h)`` with probability ``min(1, exp(log ratio))``.

    Parameters
    ----------
    key : jax.Array
    state : TemperedState
    params : RBMArrays
    betas : jax.Array of shape (n_temperatures,)
    log_ratio_fn : callable, optional
        ``log_ratio_fn(state, params, betas)`` in place of
        :func:`swap_log_ratio` (for tests and variants).

    Returns
    -------
    state : TemperedState
        ``n_rounds`` plus one.
    info : SwapInfo
    """
    log_ratio = (swap_log_ratio if log_ratio_fn is None else log_ratio_fn)(state, params, betas)
    t1 = log_ratio.shape[0]
    attempted = jnp.arange(t1) % 2 == state.n_rounds % 2
    u = uniform(key, log_ratio.shape, log_ratio.dtype)
    accepted = attempted[:, None] & (jnp.log(u) < log_ratio)
    acceptance = jnp.exp(jnp.minimum(jnp.nan_to_num(log_ratio, nan=-jnp.inf), 0.0))
    new = TemperedState(_exchange(state.v, accepted), _exchange(state.h, accepted), state.n_rounds + 1)
    return new, SwapInfo(attempted, accepted, acceptance)


def tempered_sweep(key, state: TemperedState, params: RBMArrays, betas, kernel):
    """One sweep of every replica at its own β (stochastic).

    Parameters
    ----------
    key : jax.Array
    state : TemperedState
    params : RBMArrays
    betas : jax.Array of shape (n_temperatures,)
    kernel : callable
        ``kernel(key, RBMState, params, beta)`` from :func:`pymc_rbm.jax.sweep.build_kernel`.

    Returns
    -------
    state : TemperedState
    info : SweepInfo
        Change counts of shape (n_temperatures, n_chains).
    """
    t, n = state.v.shape[:2]
    b = jnp.repeat(jnp.asarray(betas, dtype=state.v.dtype), n)
    flat = RBMState(state.v.reshape(t * n, -1), state.h.reshape(t * n, -1))
    new, info = kernel(key, flat, params, b)
    out = TemperedState(new.v.reshape(t, n, -1), new.h.reshape(t, n, -1), state.n_rounds)
    return out, SweepInfo(info.n_changed.reshape(t, n), info.n_hidden_changed.reshape(t, n))


def build_kernel(operator="gibbs", *, k: int = 1):
    """The replica-exchange step: ``k`` sweeps of every replica, then one swap round.

    Parameters
    ----------
    operator : {"gibbs", "flip"} or float in [0, 1], default "gibbs"
        The explorer (:func:`pymc_rbm.jax.sweep.build_kernel`).
    k : int, default 1
        Sweeps between swap rounds.

    Returns
    -------
    callable
        ``kernel(key, state, params, betas) -> (TemperedState, TemperingInfo)``,
        pure; successive calls alternate even and odd rounds.
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    sweep_kernel = build_sweep_kernel(operator)
    k = int(k)

    def kernel(key, state, params, betas):
        keys = jax.random.split(key, k + 1)
        for i in range(k):
            state, sweep_info = tempered_sweep(keys[i], state, params, betas, sweep_kernel)
        state, swap_info = swap_neighbours(keys[k], state, params, betas)
        return state, TemperingInfo(sweep_info, swap_info)

    return kernel


def run(key, state: TemperedState, params: RBMArrays, betas, n_rounds: int, *, operator="gibbs", k: int = 1):
    """``n_rounds`` replica-exchange steps in one compiled loop, with the swap recorders (stochastic).

    Parameters
    ----------
    key : jax.Array
    state : TemperedState
    params : RBMArrays
    betas : array_like of shape (n_temperatures,)
    n_rounds : int
    operator : {"gibbs", "flip"} or float, default "gibbs"
    k : int, default 1

    Returns
    -------
    state : TemperedState
    stats : SwapStats
    """
    betas = jnp.asarray(check_ladder(betas), dtype=state.v.dtype)
    n_rounds = int(n_rounds)
    if n_rounds < 1:
        raise ValueError(f"n_rounds must be a positive integer, got {n_rounds!r}")
    state, total = _compiled_run(operator_alpha(operator), int(k), n_rounds)(key, state, params, betas)
    rejection = 1.0 - np.asarray(total, dtype=np.float64) / (n_rounds * state.v.shape[1])
    return state, SwapStats(rejection, float(rejection.sum()), n_rounds)


@functools.lru_cache(maxsize=32)
def _compiled_run(alpha: float, k: int, n_rounds: int):
    """The jitted loop of :func:`run` for one operator, ``k`` and length (compiled once each)."""
    kernel = build_kernel(alpha, k=k)

    @jax.jit
    def go(key, state, params, betas):
        def body(carry, i):
            s, acc = carry
            s, info = kernel(jax.random.fold_in(key, i), s, params, betas)
            return (s, acc + info.swap.acceptance.sum(axis=1)), None

        acc0 = jnp.zeros(betas.shape[0] - 1, dtype=state.v.dtype)
        (s, acc), _ = jax.lax.scan(body, (state, acc0), jnp.arange(n_rounds, dtype=jnp.uint32))
        return s, acc

    return go


def adapt_ladder(betas, rejection, n_temperatures: int | None = None) -> np.ndarray:
    """A ladder spaced evenly in the communication barrier (Syed et al. 2022, as Pigeons adapts it).

    :func:`~pymc_rbm.kernels.tempering.equalized_ladder`, the rule every
    ladder of the package adapts by, with the old size by default.

    Parameters
    ----------
    betas : array_like of shape (n_temperatures,)
    rejection : array_like of shape (n_temperatures - 1,)
        Mean swap rejection rates of the neighbouring pairs (:class:`SwapStats`).
    n_temperatures : int, optional
        Size of the new ladder; default the old size. About ``2Λ`` suffice
        (:func:`~pymc_rbm.kernels.tempering.rungs_for_barrier`).

    Returns
    -------
    ndarray of shape (n_temperatures,)
        Strictly increasing, same end points.

    Examples
    --------
    >>> from pymc_rbm.jax.tempering import adapt_ladder
    >>> adapt_ladder([0.0, 0.5, 1.0], [0.6, 0.2]).round(3).tolist()
    [0.0, 0.333, 1.0]
    """
    b = check_ladder(betas)
    return equalized_ladder(b, rejection, b.size if n_temperatures is None else n_temperatures)

"""Replica exchange along a ladder of models: one replica per RBM, swaps by the models' own free energies.

Parallel trajectory tempering (Béreux, Decelle, Furtlehner & Seoane 2025) and
the stacked tempering of Fernandez-de-Cossio-Diaz, Roussel, Cocco & Monasson
(2024) replace the ladder of inverse temperatures of
:mod:`pymc_rbm.kernels.tempering` by a sequence of RBMs on the same visible
units, ``p_0, ..., p_{K-1}``: typically the parameters that training passed
through (``fit(...).trajectory``), from an almost independent model to the
trained one. Early models have no sharp modes and mix fast; each later one
is close to its predecessor, so a replica can carry a state from the easy
end to the target and back. Replica ``r`` samples its own model,

    Π(x_0, ..., x_{K-1}) = Π_r p_r(v_r, h_r),

and the models may have different numbers of hidden units.

- A *sweep* moves replica ``r`` with any layer rule (Gibbs, flip-the-state,
  their mixture) at model ``r`` (:func:`pymc_rbm.kernels.sweep.sweep` at
  :class:`~pymc_rbm.kernels.sweep.RBMAtBeta`), invariant for ``p_r``.
- A *swap round* proposes, for the disjoint pairs ``(0, 1), (2, 3), ...``
  (even rounds) or ``(1, 2), (3, 4), ...`` (odd rounds, Syed et al. 2022's
  non-reversible alternation), to exchange the visible states of models
  ``a = r`` and ``b = r + 1``. The hidden units are summed out: the move is a
  Metropolis move on the visible marginal ``Π_r p_r(v_r)``, ``p_r(v) ∝
  exp(-F_r(v))``, accepted with

      exp(F_a(v_a) + F_b(v_b) - F_a(v_b) - F_b(v_a))

  (the partition functions cancel), decided by the shared
  :func:`~pymc_rbm.kernels.metropolis.metropolis_accept` through
  :func:`~pymc_rbm.kernels.tempering.exchange_pairs`. An accepted pair then
  draws each replica's hidden units afresh from its model's ``p_r(h | v)``;
  a rejected pair keeps them. The mass that reaches ``(v', h')`` is
  ``p(h' | v') [Σ_{v ≠ v'} π(v) M(v, v') + π(v') M(v', v')] = π(v') p(h' | v')``,
  so the round leaves ``Π`` invariant whatever the hidden sizes.
  The hidden activations ``hbias_a + v_b W_a`` that the ratio needs are the
  ones the fresh draw needs, computed once. The compiled round
  (``compiled_sweeps=True``, :func:`~pymc_rbm.kernels.replica_rounds.model_ladder_round`)
  gets them from the carried ``hbias_a + v_a W_a`` by the rows of ``W_a`` of
  the units where ``v_a`` and ``v_b`` differ (or of the units on in ``v_b``,
  when fewer), and runs every rung and every swap in one call on the
  models' arrays packed end to end (:class:`PackedModels`), with the
  uniforms of the per-rung round: the same chain.

The replicas carry labels (which starting replica sits at each rung), and
the round trips of a label from the first model to the last and back are
counted by :func:`~pymc_rbm.kernels.replica_rounds.count_round_trips`, the
counter of the tempered step.

Arrays carry the rung axis first: ``v`` has shape ``(n_rungs, n_chains,
n_visible)``; the hidden states are one array per rung, ``(n_chains,
n_hidden_r)``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from pymc_rbm.energy import RBMTensors, hidden_activation
from pymc_rbm.kernels import compiled, replica_rounds
from pymc_rbm.kernels.layer import GIBBS, LayerRule
from pymc_rbm.kernels.state import RBMState
from pymc_rbm.kernels.sweep import RBMAtBeta, sweep
from pymc_rbm.kernels.tempering import SwapInfo, exchange_pairs, swap_pairs
from pymc_rbm.primitives import softplus
from pymc_rbm.validation import check_binary, check_positive_int

__all__ = [
    "ModelRungs",
    "PackedModels",
    "ModelLadderState",
    "ModelLadderInfo",
    "model_rungs",
    "init_model_ladder",
    "rung_free_energies",
    "model_swap_log_ratio",
    "cross_terms",
    "model_ladder_round",
    "PairRejection",
    "pair_rejection",
    "equal_rejection_rungs",
]


class ModelRungs(NamedTuple):
    """A validated ladder of binary RBMs on the same visible units, ready for the kernels.

    Attributes
    ----------
    params : tuple of RBMTensors
        ``W`` (n_visible, n_hidden_r) C-contiguous float64, ``vbias`` and
        ``hbias`` float64; rung 0 first, the target last.
    W_T : tuple of ndarray of shape (n_hidden_r, n_visible)
        Each ``W.T`` in C order, for the compiled sweeps.
    packed : PackedModels or None
        The same arrays end to end (``params[r].W`` and ``W_T[r]`` are views
        of it), for the one-call compiled round; None when built by hand.
    """

    params: tuple
    W_T: tuple
    packed: object = None

    @property
    def n_rungs(self) -> int:
        """Number of models."""
        return len(self.params)

    @property
    def n_visible(self) -> int:
        """Number of visible units, shared by every model."""
        return int(self.params[0].W.shape[0])


def model_rungs(models) -> ModelRungs:
    """Validate a ladder of models: a sequence of RBMParams, a training trajectory, or a ModelRungs.

    Parameters
    ----------
    models : ModelRungs, Trajectory or sequence of RBMParams
        At least two binary RBMs with the same number of visible units (any
        numbers of hidden units); a :class:`~pymc_rbm.training.Trajectory`
        (``fit(...).trajectory``) gives its ``params``. The last is the target.

    Returns
    -------
    ModelRungs

    Raises
    ------
    ValueError
        For fewer than two models, models with different numbers of visible
        units, or parameters that are not finite.
    """
    if isinstance(models, ModelRungs):
        return models
    models = list(getattr(models, "params", models))  # a Trajectory holds its models in .params
    if len(models) < 2:
        raise ValueError(f"a ladder of models needs at least two models (the last one the target), got {len(models)}")
    params = []
    for i, m in enumerate(models):
        if not all(hasattr(m, k) for k in ("W", "vbias", "hbias")):
            raise TypeError(f"models[{i}] is a {type(m).__name__}, not an RBMParams (W, vbias, hbias)")
        W, vbias, hbias = (np.ascontiguousarray(getattr(m, k), dtype=np.float64) for k in ("W", "vbias", "hbias"))
        if W.ndim != 2 or vbias.shape != (W.shape[0],) or hbias.shape != (W.shape[1],):
            raise ValueError(f"models[{i}] has inconsistent shapes W {W.shape}, vbias {vbias.shape}, hbias {hbias.shape}")
        if not (np.isfinite(W).all() and np.isfinite(vbias).all() and np.isfinite(hbias).all()):
            raise ValueError(f"models[{i}] has parameters that are not finite")
        params.append(RBMTensors(W, vbias, hbias))
    n_visible = {p.W.shape[0] for p in params}
    if len(n_visible) > 1:
        raise ValueError(f"the models of a ladder must share their visible units, got n_visible {sorted(n_visible)}")
    packed, views, views_T = _pack(params)
    return ModelRungs(views, views_T, packed)


class PackedModels(NamedTuple):
    """The arrays of a ladder of models end to end, for :func:`pymc_rbm.kernels.replica_rounds.model_ladder_round`.

    Attributes
    ----------
    W, W_T : ndarray of shape (sum_r n_visible * n_hidden_r,)
        Rung ``r``'s ``W`` (n_visible, n_hidden_r) and ``W.T`` (n_hidden_r,
        n_visible), C order, at ``w_off[r]:w_off[r + 1]``.
    w_off : ndarray of int64 of shape (n_rungs + 1,)
    vbias : ndarray of shape (n_rungs, n_visible)
    hbias : ndarray of shape (sum_r n_hidden_r,)
        Rung ``r``'s at ``hb_off[r]:hb_off[r + 1]``.
    hb_off : ndarray of int64 of shape (n_rungs + 1,)
    """

    W: np.ndarray
    W_T: np.ndarray
    w_off: np.ndarray
    vbias: np.ndarray
    hbias: np.ndarray
    hb_off: np.ndarray


def _pack(params) -> tuple[PackedModels, tuple, tuple]:
    """The models' arrays packed end to end, and the models and their ``W.T`` as views of them."""
    n_v = params[0].W.shape[0]
    hb_off = np.concatenate([[0], np.cumsum([p.W.shape[1] for p in params])]).astype(np.int64)
    w_off = n_v * hb_off
    W, W_T = np.empty(w_off[-1]), np.empty(w_off[-1])
    views, views_T = [], []
    for r, p in enumerate(params):
        block = W[w_off[r]:w_off[r + 1]].reshape(p.W.shape)
        block[...] = p.W
        block_T = W_T[w_off[r]:w_off[r + 1]].reshape(p.W.shape[::-1])
        block_T[...] = p.W.T
        views.append(RBMTensors(block, p.vbias, p.hbias))
        views_T.append(block_T)
    packed = PackedModels(W, W_T, w_off, np.stack([p.vbias for p in params]),
                          np.concatenate([p.hbias for p in params]), hb_off)
    return packed, tuple(views), tuple(views_T)


class ModelLadderState(NamedTuple):
    """The replicas of a batch of model ladders, and their round-trip bookkeeping.

    Attributes
    ----------
    v : ndarray of shape (n_rungs, n_chains, n_visible)
        Visible states, 0/1 floats; ``v[r]`` samples model ``r``.
    h : tuple of ndarray of shape (n_chains, n_hidden_r)
        Hidden states of each rung.
    hidden_input : tuple of ndarray of shape (n_chains, n_hidden_r)
        ``hbias_r + v_r·W_r`` of each rung, kept with the state.
    n_rounds : int
        Rounds done; its parity picks the next swap pairs.
    labels : ndarray of int64 of shape (n_rungs, n_chains)
        Which replica (its rung at the start) sits at each rung.
    trip_ends, trip_up : ndarray of shape (n_rungs, n_chains)
        Per label: the last end of the ladder visited (int8: 0 none, 1 the
        first model, 2 the last) and whether it reached the last model since
        its last visit to the first (bool); see
        :func:`~pymc_rbm.kernels.replica_rounds.count_round_trips`.
    round_trips : int
        Round trips (first model, last, first) completed so far.
    """

    v: np.ndarray
    h: tuple
    hidden_input: tuple
    n_rounds: int
    labels: np.ndarray
    trip_ends: np.ndarray
    trip_up: np.ndarray
    round_trips: int = 0


class ModelLadderInfo(NamedTuple):
    """What one round of :func:`model_ladder_round` did.

    Attributes
    ----------
    n_changed : ndarray of int of shape (n_rungs, n_chains)
        Visible units changed by the last sweep of each rung.
    swap : SwapInfo
        The swap round (as :func:`~pymc_rbm.kernels.tempering.swap_neighbours` reports it).
    swap_accept : ndarray of shape (n_rungs - 1, n_chains)
        Acceptance probability ``min(1, ratio)`` of each attempted pair (NaN where not attempted).
    round_trips : int
        Round trips completed in this round.
    """

    n_changed: np.ndarray
    swap: SwapInfo
    swap_accept: np.ndarray
    round_trips: int


def init_model_ladder(rng: np.random.Generator, v, models) -> ModelLadderState:
    """A ladder state with the given visible values and ``h_r ~ p_r(h | v_r)`` (stochastic).

    Parameters
    ----------
    rng : numpy.random.Generator
    v : array_like of shape (n_chains, n_visible) or (n_rungs, n_chains, n_visible)
        Binary; a 2-D array starts every rung of ladder ``c`` at ``v[c]``. Copied.
    models : ModelRungs or sequence of RBMParams (:func:`model_rungs`)

    Returns
    -------
    ModelLadderState
        No rounds, labels ``0 .. n_rungs - 1`` in order, no round trips.
    """
    rungs = model_rungs(models)
    k = rungs.n_rungs
    v = check_binary(v, rungs.n_visible, name="v", dtype=np.float64)
    if v.ndim == 2:
        v = np.repeat(v[None], k, axis=0)
    elif v.ndim != 3 or v.shape[0] != k:
        raise ValueError(f"v must have shape (n_chains, n_visible) or (n_rungs={k}, n_chains, n_visible), got {v.shape}")
    v = np.ascontiguousarray(v, dtype=np.float64)
    n_chains = v.shape[1]
    a = tuple(hidden_activation(v[r], p) for r, p in enumerate(rungs.params))
    h = tuple(GIBBS.update(rng, None, a_r)[0] for a_r in a)
    labels = np.repeat(np.arange(k, dtype=np.int64)[:, None], n_chains, axis=1)
    return ModelLadderState(v, h, a, 0, labels, np.zeros((k, n_chains), dtype=np.int8),
                            np.zeros((k, n_chains), dtype=bool), 0)


def rung_free_energies(v, hidden_input, params) -> np.ndarray:
    """``F(v) = -v·vbias - Σ_j softplus(hidden_input_j)`` of one model, from its hidden input.

    Parameters
    ----------
    v : ndarray of shape (..., n_visible)
    hidden_input : ndarray of shape (..., n_hidden)
        ``hbias + v·W`` of the same model.
    params : RBMTensors or RBMParams

    Returns
    -------
    ndarray of shape (...)
    """
    return -(v @ params.vbias) - softplus(hidden_input).sum(axis=-1)


def cross_terms(v, hidden_input, rungs: ModelRungs, pairs):
    """Log swap ratios of some neighbouring pairs and their cross hidden inputs, by full products.

    The ``log_ratio_fn`` of :func:`model_ladder_round` by default.

    Parameters
    ----------
    v : ndarray of shape (n_rungs, n_chains, n_visible)
    hidden_input : sequence of ndarray of shape (n_chains, n_hidden_r)
        ``hbias_r + v_r W_r`` of each rung.
    rungs : ModelRungs
    pairs : iterable of int
        Lower rungs ``r`` of the pairs ``(r, r + 1)``.

    Returns
    -------
    log_ratio : ndarray of shape (n_rungs - 1, n_chains)
        ``F_r(v_r) + F_{r+1}(v_{r+1}) - F_r(v_{r+1}) - F_{r+1}(v_r)`` for the
        pairs given, NaN elsewhere.
    cross : dict
        ``cross[r] = (hbias_r + v_{r+1} W_r, hbias_{r+1} + v_r W_{r+1})``.
    """
    k, n = v.shape[:2]
    log_ratio = np.full((k - 1, n), np.nan)
    cross = {}
    for r in pairs:
        a, b = rungs.params[r], rungs.params[r + 1]
        a_of_b = hidden_activation(v[r + 1], a)
        b_of_a = hidden_activation(v[r], b)
        log_ratio[r] = (rung_free_energies(v[r], hidden_input[r], a) + rung_free_energies(v[r + 1], hidden_input[r + 1], b)
                        - rung_free_energies(v[r + 1], a_of_b, a) - rung_free_energies(v[r], b_of_a, b))
        cross[r] = (a_of_b, b_of_a)
    return log_ratio, cross


def model_swap_log_ratio(state: ModelLadderState, models, *, compiled_ratio: bool = False) -> np.ndarray:
    """Log Metropolis ratio of exchanging the visible states of every neighbouring pair of models.

    Parameters
    ----------
    state : ModelLadderState
    models : ModelRungs or sequence of RBMParams
    compiled_ratio : bool, default False
        Compute it as the compiled round does
        (:func:`~pymc_rbm.kernels.replica_rounds.model_ladder_log_ratios`: the cross
        inputs ``hbias_r + v_{r+1} W_r`` from the carried ``hbias_r + v_r W_r``
        by the rows of the units that differ), instead of by full products.

    Returns
    -------
    ndarray of shape (n_rungs - 1, n_chains)
        Entry ``r``: ``F_r(v_r) + F_{r+1}(v_{r+1}) - F_r(v_{r+1}) - F_{r+1}(v_r)``,
        each model's own free energy.
    """
    rungs = model_rungs(models)
    _check_state(state, rungs)
    if compiled_ratio:
        pk = _packed(rungs)
        n = state.v.shape[1]
        return replica_rounds.model_ladder_log_ratios(np.ascontiguousarray(state.v, dtype=np.float64),
                                                      _pack_rows(state.hidden_input), n * pk.hb_off, pk)
    return cross_terms(state.v, state.hidden_input, rungs, range(rungs.n_rungs - 1))[0]


def _packed(rungs: ModelRungs) -> PackedModels:
    """The packed arrays of the rungs (packed now when the ModelRungs was built by hand)."""
    return rungs.packed if rungs.packed is not None else _pack(rungs.params)[0]


def _pack_rows(blocks) -> np.ndarray:
    """Per-rung arrays of shape (n_chains, n_hidden_r) end to end, float64 (a new array)."""
    return np.concatenate(blocks, axis=None, dtype=np.float64)


def _unpack_rows(flat, off, n_chains: int) -> tuple:
    """The rung blocks of :func:`_pack_rows`' array as (n_chains, n_hidden_r) views."""
    k = len(off) - 1
    if (off[1:] - off[:-1] == off[1]).all():  # one hidden size: iterate over a 3-D view, in C
        return tuple(flat.reshape(k, n_chains, -1))
    return tuple(flat[off[r]:off[r + 1]].reshape(n_chains, -1) for r in range(k))


def _check_state(state, rungs: ModelRungs) -> None:
    if not isinstance(state, ModelLadderState):
        raise TypeError(f"state must be a ModelLadderState, got {type(state).__name__}")
    k = rungs.n_rungs
    if state.v.ndim != 3 or state.v.shape[0] != k or state.v.shape[2] != rungs.n_visible:
        raise ValueError(f"state.v must have shape (n_rungs={k}, n_chains, n_visible={rungs.n_visible}), "
                         f"got {state.v.shape}")
    for r, p in enumerate(rungs.params):
        shape = (state.v.shape[1], p.W.shape[1])
        if state.h[r].shape != shape or state.hidden_input[r].shape != shape:
            raise ValueError(f"the hidden state of rung {r} must have shape {shape}, got {state.h[r].shape}")


def model_ladder_round(rng: np.random.Generator, state: ModelLadderState, models, *, rule: LayerRule = GIBBS,
                       sweeps: int = 1, parity: int | None = None, compiled_sweeps: bool = False,
                       log_ratio_fn=None) -> tuple[ModelLadderState, ModelLadderInfo]:
    """One round of model-ladder tempering: ``sweeps`` sweeps of every rung at its model, then a swap round (stochastic).

    Parameters
    ----------
    rng : numpy.random.Generator
    state : ModelLadderState
        Not modified.
    models : ModelRungs or sequence of RBMParams (:func:`model_rungs`)
        Validated once with :func:`model_rungs` when called in a loop.
    rule : LayerRule, default Gibbs
        The layer update of the sweeps (:func:`~pymc_rbm.kernels.operator_rule`).
    sweeps : int, default 1
        Sweeps of each rung before the swaps.
    parity : {0, 1}, optional
        Which pairs to attempt (:func:`~pymc_rbm.kernels.tempering.swap_pairs`);
        default ``state.n_rounds % 2``.
    compiled_sweeps : bool, default False
        Run the round compiled: the same transitions, another random stream
        than the NumPy sweeps. Where no rung's batch takes the dense path
        (:func:`~pymc_rbm.kernels.compiled.dense`) and no ``log_ratio_fn`` is
        given, the whole round is two compiled calls
        (:func:`~pymc_rbm.kernels.replica_rounds.model_ladder_round`: the cross
        hidden inputs by the rows of the units where the two states differ);
        else each rung's sweeps are one
        (:func:`~pymc_rbm.kernels.compiled.carried_sweeps`) and the cross
        inputs full products. Both use the same uniforms for the same
        purposes, so they draw the same chain (but for rounding, ~1e-13 in a
        log ratio).
    log_ratio_fn : callable, optional
        ``log_ratio_fn(v, hidden_input, rungs, pairs) -> (log_ratio, cross)``
        instead of the models' own ratio (:func:`cross_terms`, full products),
        for tests that check that a wrong ratio is caught: ``log_ratio`` of
        shape (n_rungs - 1, n_chains), ``cross[r]`` the pair's hidden inputs
        ``(hbias_r + v_{r+1} W_r, hbias_{r+1} + v_r W_{r+1})``. Given, the
        round takes the per-rung path (see ``compiled_sweeps``).

    Returns
    -------
    state : ModelLadderState
        New arrays; ``n_rounds`` plus one, labels and round trips updated.
    info : ModelLadderInfo

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm import RBMParams
    >>> from pymc_rbm.kernels.model_ladder import init_model_ladder, model_ladder_round
    >>> models = [RBMParams.random(6, h, scale=s, rng=h) for h, s in ((2, 0.5), (3, 1.0), (4, 2.0))]
    >>> rng = np.random.default_rng(0)
    >>> state = init_model_ladder(rng, np.zeros((5, 6)), models)
    >>> state, info = model_ladder_round(rng, state, models)
    >>> state.v.shape, [h.shape[1] for h in state.h], info.swap.attempted.tolist()
    ((3, 5, 6), [2, 3, 4], [True, False])
    """
    rungs = model_rungs(models)
    _check_state(state, rungs)
    sweeps = check_positive_int(sweeps, "sweeps")
    k, n = state.v.shape[:2]
    parity = state.n_rounds % 2 if parity is None else parity
    if compiled_sweeps and log_ratio_fn is None and not (
            n > 1 and any(compiled.dense(n, rungs.n_visible, p.W.shape[1]) for p in rungs.params)):
        return _compiled_round(rng, state, rungs, rule, sweeps, parity)
    v = state.v.copy()
    h, a = list(state.h), list(state.hidden_input)
    n_changed = np.zeros((k, n), dtype=np.int64)
    for r, p in enumerate(rungs.params):
        start = v[r].copy()
        if compiled_sweeps:
            v[r], h[r], a[r], _, _ = compiled.carried_sweeps(rng, v[r], h[r], a[r], None, p, sweeps, alpha=rule.alpha,
                                                             gibbs=rule.gibbs, W_T=rungs.W_T[r])
        else:
            s = RBMState(v[r], h[r], a[r].copy())
            for i in range(sweeps):
                s, _ = sweep(rng, s, RBMAtBeta(p), rule, refresh=i == sweeps - 1)
            v[r], h[r], a[r] = s
        n_changed[r] = (v[r] != start).sum(axis=-1)
    pairs = swap_pairs(k, parity)
    log_ratio, cross = (log_ratio_fn or cross_terms)(v, a, rungs, pairs)
    labels = state.labels.copy()
    accepted = exchange_pairs(rng, v, labels, log_ratio, pairs)  # v and the labels follow the swaps
    for r in pairs:
        took = accepted[r]
        if took.any():
            a_of_b, b_of_a = cross[r]
            for rung, new_a in ((r, a_of_b), (r + 1, b_of_a)):
                a[rung] = a[rung].copy()
                a[rung][took] = new_a[took]
                h[rung] = h[rung].copy()
                h[rung][took] = GIBBS.update(rng, None, new_a[took])[0]
    return _finish_round(state, v, tuple(h), tuple(a), labels, pairs, accepted, log_ratio, n_changed)


def _compiled_round(rng, state: ModelLadderState, rungs: ModelRungs, rule: LayerRule, sweeps: int, parity: int):
    """:func:`model_ladder_round` in two compiled calls (:func:`pymc_rbm.kernels.replica_rounds.model_ladder_round`)."""
    k, n = state.v.shape[:2]
    pk = _packed(rungs)
    v = np.array(state.v, dtype=np.float64, order="C")
    h, a = _pack_rows(state.h), _pack_rows(state.hidden_input)
    labels = state.labels.copy()
    h_off = n * pk.hb_off
    log_ratio, accepted, n_changed = replica_rounds.model_ladder_round(rng, v, h, a, h_off, pk, sweeps, parity, labels,
                                                                       alpha=rule.alpha, gibbs=rule.gibbs)
    return _finish_round(state, v, _unpack_rows(h, h_off, n), _unpack_rows(a, h_off, n), labels,
                         swap_pairs(k, parity), accepted, log_ratio, n_changed)


def _finish_round(state, v, h, a, labels, pairs, accepted, log_ratio, n_changed):
    """The new state and the round's info: round trips counted, acceptance probabilities of the attempted pairs."""
    k = v.shape[0]
    trip_ends, trip_up = state.trip_ends.copy(), state.trip_up.copy()
    trips = replica_rounds.count_round_trips(labels, trip_ends, trip_up)
    attempted = np.zeros(k - 1, dtype=bool)
    attempted[pairs] = True
    with np.errstate(over="ignore"):
        swap_accept = np.where(attempted[:, None], np.minimum(1.0, np.exp(np.minimum(log_ratio, 0.0))), np.nan)
    new = ModelLadderState(v, h, a, state.n_rounds + 1, labels, trip_ends, trip_up, state.round_trips + trips)
    return new, ModelLadderInfo(n_changed, SwapInfo(attempted, accepted, log_ratio), swap_accept, trips)


class PairRejection:
    """Estimated swap rejection rate of two models as neighbours, from draws of each, computed when asked.

    For models ``i`` and ``j`` with draws ``x ~ p_i`` and ``y ~ p_j``, the
    swap of :func:`model_ladder_round` would be rejected with probability
    ``1 - min(1, exp(F_i(x) + F_j(y) - F_i(y) - F_j(x)))``; ``rejection(i, j)``
    is its mean over every pairing of a draw of ``i`` with a draw of ``j``.
    Free energies are computed once, the first time a pair needs them, so
    that :func:`equal_rejection_rungs` pays only for the pairs it visits.

    Parameters
    ----------
    models : ModelRungs or sequence of RBMParams
    samples : sequence of array_like of shape (n_samples_r, n_visible)
        Draws from each model (e.g. the rungs of a pilot run of the full ladder).

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm import RBMParams
    >>> from pymc_rbm.kernels.model_ladder import PairRejection
    >>> models = [RBMParams(np.zeros((3, 1)), np.full(3, b), np.zeros(1)) for b in (0.0, 0.0, 5.0)]
    >>> rej = PairRejection(models, [np.eye(3)] * 3)
    >>> rej(0, 1), rej(1, 2) > 0
    (0.0, False)
    """

    def __init__(self, models, samples):
        self.rungs = model_rungs(models)
        k = self.rungs.n_rungs
        if len(samples) != k:
            raise ValueError(f"samples must hold draws of each of the {k} models, got {len(samples)}")
        self.samples = [check_binary(s, self.rungs.n_visible, name=f"samples[{r}]", dtype=np.float64)
                        .reshape(-1, self.rungs.n_visible) for r, s in enumerate(samples)]
        self._free = {}
        self._rejection = {}

    @property
    def n_models(self) -> int:
        """Number of models."""
        return self.rungs.n_rungs

    def free_energy(self, model: int, draws: int) -> np.ndarray:
        """``F_model(x)`` of the draws of model ``draws``, shape (n_samples_draws,)."""
        key = (model, draws)
        if key not in self._free:
            p, x = self.rungs.params[model], self.samples[draws]
            self._free[key] = rung_free_energies(x, hidden_activation(x, p), p)
        return self._free[key]

    def __call__(self, i: int, j: int) -> float:
        """The estimated rejection rate of models ``i`` and ``j`` as neighbours, in [0, 1]."""
        if i == j:
            return 0.0
        i, j = min(i, j), max(i, j)
        if (i, j) not in self._rejection:
            f = self.free_energy
            log_ratio = f(i, i)[:, None] + f(j, j)[None, :] - f(i, j)[None, :] - f(j, i)[:, None]
            self._rejection[i, j] = float(np.mean(-np.expm1(np.minimum(log_ratio, 0.0))))
        return self._rejection[i, j]


def pair_rejection(models, samples, *, stop_at: float = 0.99) -> np.ndarray:
    """The matrix of :class:`PairRejection` over every pair of models.

    Parameters
    ----------
    models : ModelRungs or sequence of RBMParams
    samples : sequence of array_like of shape (n_samples_r, n_visible)
    stop_at : float, default 0.99
        For each model ``i``, the models ``j > i`` are visited in order until
        one rejects at least this often; the rest are set to 1 without being
        computed (along a trajectory the rejection grows with the distance).

    Returns
    -------
    ndarray of shape (n_models, n_models)
        Symmetric, zero on the diagonal, values in [0, 1].
    """
    rejection = PairRejection(models, samples)
    k = rejection.n_models
    out = np.ones((k, k))
    np.fill_diagonal(out, 0.0)
    for i in range(k):
        for j in range(i + 1, k):
            out[i, j] = out[j, i] = rejection(i, j)
            if out[i, j] >= stop_at:
                break
    return out


def _greedy_rungs(rejection, m: int, threshold: float) -> list:
    """From model 0, each next rung the farthest model that rejects at most ``threshold`` (at least the next)."""
    path = [0]
    while path[-1] < m - 1:
        i, j = path[-1], path[-1] + 1
        while j + 1 < m and rejection(i, j + 1) <= threshold:
            j += 1
        path.append(j)
    return path


def equal_rejection_rungs(rejection, n_rungs: int) -> np.ndarray:
    """Indices of at most ``n_rungs`` models, the first and the last among them, whose neighbours reject about equally.

    The smallest threshold ``ρ`` (by bisection) for which the greedy ladder,
    from model 0 each next rung the farthest model whose swap with the
    current one rejects at most ``ρ``, reaches the last model in
    ``n_rungs - 1`` steps. When the rejection grows with the distance between
    models (as along a trajectory) the greedy ladder is the shortest for its
    threshold, so the largest neighbouring rejection is as small as
    ``n_rungs`` rungs allow, and since the rejections along a ladder add up to
    about its communication barrier (Syed et al. 2022), the steps reject
    about equally. Only the pairs the greedy passes visit are evaluated.

    Parameters
    ----------
    rejection : array_like of shape (M, M) or callable
        Rejection rate of each pair of models as neighbours: a matrix (only
        its upper triangle is read; measured, or :func:`pair_rejection`) or
        ``rejection(i, j) -> float`` (a :class:`PairRejection`), with ``M``
        then ``rejection.n_models``.
    n_rungs : int
        ``>= 2``.

    Returns
    -------
    ndarray of int of shape (n,)
        Increasing, from 0 to ``M - 1``, ``n <= n_rungs``.

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm.kernels.model_ladder import equal_rejection_rungs
    >>> steps = np.array([0.05, 0.05, 0.05, 0.3, 0.05, 0.3])  # neighbouring rejections of 7 models
    >>> cum = np.concatenate([[0], np.cumsum(steps)])  # rejections roughly add up along a ladder
    >>> equal_rejection_rungs(np.minimum(np.abs(cum[:, None] - cum[None, :]), 1), 4).tolist()
    [0, 3, 5, 6]
    """
    if callable(rejection):
        m, rej = int(rejection.n_models), rejection
    else:
        matrix = np.asarray(rejection, dtype=np.float64)
        if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
            raise ValueError(f"rejection must be a square matrix, got shape {matrix.shape}")
        m = matrix.shape[0]

        def rej(i, j):
            return matrix[i, j]
    if m < 2:
        raise ValueError(f"a ladder needs at least two models, got {m}")
    n_rungs = check_positive_int(n_rungs, "n_rungs", 2)
    if n_rungs > m:
        raise ValueError(f"n_rungs = {n_rungs} is more than the {m} models given")
    best = _greedy_rungs(rej, m, 1.0)
    if len(best) <= n_rungs:
        lo, hi = 0.0, 1.0
        for _ in range(30):
            mid = 0.5 * (lo + hi)
            path = _greedy_rungs(rej, m, mid)
            if len(path) <= n_rungs:
                hi, best = mid, path
            else:
                lo = mid
    return np.array(best)

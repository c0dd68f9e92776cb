"""Parallel tempering: replicas of an RBM at a ladder of inverse temperatures, and their swaps.

Brügge, Fischer & Igel (2013, §4.2) train with "PT with t temperatures and k sampling steps" (t-PT k):
"The performance of PT depends on the number t of tempered chains and on the
number of sampling steps k carried out in each tempered chain before swapping
samples between chains [...] The inverse temperatures were distributed
uniformly between 0 and 1." Replica ``r`` samples
``p_{β_r}(v, h) ∝ exp(-β_r E(v, h))``; the product of these distributions is
what every move here leaves invariant.

- A *sweep* moves every replica with any RBM kernel (Gibbs, flip-the-state,
  the α mixture) at the replica's own β: the kernels take one β per chain.
- A *swap round* proposes to exchange the joint states ``(v, h)`` of
  neighbouring replicas ``r`` and ``r + 1``; with ``E_r = E(v_r, h_r)`` the
  Metropolis ratio is
  ``p_{β_r}(x_{r+1}) p_{β_{r+1}}(x_r) / (p_{β_r}(x_r) p_{β_{r+1}}(x_{r+1}))
  = exp((β_{r+1} - β_r)(E_{r+1} - E_r))``
  (the partition functions cancel). A round attempts the disjoint pairs
  ``(0, 1), (2, 3), ...`` (even rounds) or ``(1, 2), (3, 4), ...`` (odd rounds);
  each pair is a Metropolis move on two coordinates of the product
  distribution, so each round leaves the product invariant, and alternating
  the two lets a state travel the whole ladder.

Arrays carry the temperature axis first: ``v`` has shape
``(n_temperatures, n_chains, n_visible)``, where ``n_chains`` independent
ladders run side by side (training uses one ladder per negative sample).
The ladder ``betas`` is increasing, so the last replica is the one at the
largest β (1 in training: the model itself).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from pymc_rbm.energy import energy
from pymc_rbm.kernels.gibbs import gibbs_sweep, sample_hiddens
from pymc_rbm.kernels.metropolis import acceptance_probability, metropolis_accept
from pymc_rbm.kernels.state import RBMState, SweepInfo
from pymc_rbm.validation import check_binary

__all__ = [
    "TemperedState",
    "SwapInfo",
    "TemperingInfo",
    "check_ladder",
    "uniform_ladder",
    "init_tempered_state",
    "swap_log_ratio",
    "tempered_log_ratio",
    "swap_pairs",
    "swap_neighbours",
    "exchange_pairs",
    "tempered_sweep",
    "build_kernel",
    "communication_barrier",
    "equalized_ladder",
    "rungs_for_barrier",
]


class TemperedState(NamedTuple):
    """The replicas of a batch of parallel-tempering ladders.

    Attributes
    ----------
    v : ndarray of shape (n_temperatures, n_chains, n_visible)
        Visible states, values in {0, 1}; ``v[r]`` are the replicas at ``β_r``.
    h : ndarray of shape (n_temperatures, n_chains, n_hidden)
        Hidden states, values in {0, 1}.
    n_rounds : int
        Swap rounds done so far. Its parity picks the pairs of the next
        round: even rounds swap ``(0, 1), (2, 3), ...``, odd rounds
        ``(1, 2), (3, 4), ...``.
    betas : tuple of float of length n_temperatures, or None
        The ladder the replicas run at, where the chains keep their own:
        the persistent chains of :func:`pymc_rbm.training.parallel_tempering`,
        whose ladder adapts during training and is saved and resumed with
        them. The functions of this module take the ladder as an argument
        and neither read nor carry this field (nor the two below): their
        states come back with the defaults. A tuple of Python floats, not an
        array, so that casting the chains' arrays to a training dtype
        (float32) leaves the ladder exact.
    rejection_sum : tuple of float of length n_temperatures - 1, or None
        Per pair, the sum over the swap rounds that attempted it in the
        current window of rates (training adapts the ladder at the end of a
        window) of its Rao-Blackwellised rejection
        ``1 - min(1, exp(log_ratio))`` averaged over the chains.
    attempts : tuple of int of length n_temperatures - 1, or None
        Per pair, the number of those rounds.
    """

    v: np.ndarray
    h: np.ndarray
    n_rounds: int = 0
    betas: tuple | None = None
    rejection_sum: tuple | None = None
    attempts: tuple | None = None


class SwapInfo(NamedTuple):
    """What one swap round did.

    Attributes
    ----------
    attempted : ndarray of bool of shape (n_temperatures - 1,)
        Whether the pair ``(r, r + 1)`` was proposed in this round.
    accepted : ndarray of bool of shape (n_temperatures - 1, n_chains)
        Whether the pair swapped, per ladder (False where not attempted).
    log_ratio : ndarray of shape (n_temperatures - 1, n_chains)
        Log Metropolis ratio of each attempted pair (NaN where not attempted).
    """

    attempted: np.ndarray
    accepted: np.ndarray
    log_ratio: np.ndarray


class TemperingInfo(NamedTuple):
    """What one step of :func:`build_kernel`'s kernel did.

    Attributes
    ----------
    sweep : SweepInfo
        The last sweep's change counts, arrays of shape (n_temperatures, n_chains).
    swap : SwapInfo
        The swap round that ended the step.
    """

    sweep: SweepInfo
    swap: SwapInfo


def check_ladder(betas) -> np.ndarray:
    """Validate a ladder of inverse temperatures.

    Parameters
    ----------
    betas : array_like of shape (n_temperatures,)
        Finite, ``>= 0`` and strictly increasing.

    Returns
    -------
    ndarray of float64 of shape (n_temperatures,)
        A copy.

    Raises
    ------
    ValueError
        For a wrong shape, non-finite or negative values, or a ladder that is
        not strictly increasing.
    """
    b = np.array(betas, dtype=np.float64, copy=True)
    if b.ndim != 1 or b.size == 0:
        raise ValueError(f"betas must be a non-empty 1-D array of inverse temperatures, got shape {b.shape}")
    if not (np.all(np.isfinite(b)) and np.all(b >= 0.0)):
        raise ValueError(f"betas must be finite and >= 0, got {b}")
    if np.any(np.diff(b) <= 0.0):
        raise ValueError(f"betas must be strictly increasing (the last replica is the target), got {b}")
    return b


def uniform_ladder(n_temperatures: int) -> np.ndarray:
    """``n_temperatures`` inverse temperatures spaced uniformly from 0 to 1 (Brügge, Fischer & Igel 2013, §4.2).

    Parameters
    ----------
    n_temperatures : int
        ``>= 2``.

    Returns
    -------
    ndarray of shape (n_temperatures,)
        ``0, 1/(t-1), ..., 1``.

    Examples
    --------
    >>> from pymc_rbm.kernels.tempering import uniform_ladder
    >>> uniform_ladder(5).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    if isinstance(n_temperatures, bool) or not isinstance(n_temperatures, (int, np.integer)) or n_temperatures < 2:
        raise ValueError(f"n_temperatures must be an integer >= 2, got {n_temperatures!r}")
    return np.linspace(0.0, 1.0, int(n_temperatures))


def _check_state(state: TemperedState, betas: np.ndarray, params) -> None:
    if not isinstance(state, TemperedState):
        raise TypeError(f"state must be a TemperedState, got {type(state).__name__}")
    t = betas.shape[0]
    if state.v.ndim != 3 or state.v.shape[0] != t or state.v.shape[2] != params.n_visible:
        raise ValueError(
            f"state.v must have shape (n_temperatures={t}, n_chains, n_visible={params.n_visible}), "
            f"got {state.v.shape}"
        )
    if state.h.shape != (t, state.v.shape[1], params.n_hidden):
        raise ValueError(f"state.h must have shape {(t, state.v.shape[1], params.n_hidden)}, got {state.h.shape}")


def _chain_betas(betas: np.ndarray, n_chains: int) -> np.ndarray:
    """The ladder repeated for the flattened ``(n_temperatures * n_chains)`` chains."""
    return np.repeat(betas, n_chains)


def init_tempered_state(rng: np.random.Generator, v, params, betas) -> TemperedState:
    """A tempered state with the given visible values and ``h_r ~ p_{β_r}(h | v_r)`` (stochastic).

    Parameters
    ----------
    rng : numpy.random.Generator
    v : array_like of shape (n_chains, n_visible) or (n_temperatures, n_chains, n_visible)
        Binary visible values; a 2-D array starts every replica of ladder
        ``c`` at ``v[c]``. Copied, never modified.
    params : RBMParams
    betas : array_like of shape (n_temperatures,)

    Returns
    -------
    TemperedState
        With ``n_rounds = 0``.
    """
    betas = check_ladder(betas)
    t = betas.shape[0]
    v = check_binary(v, params.n_visible, name="v", dtype=params.dtype)
    if v.ndim == 2:
        v = np.repeat(v[None], t, axis=0)
    elif v.ndim != 3 or v.shape[0] != t:
        raise ValueError(
            f"v must have shape (n_chains, n_visible) or (n_temperatures={t}, n_chains, n_visible), got {v.shape}"
        )
    n_chains = v.shape[1]
    flat = v.reshape(t * n_chains, -1)
    h = sample_hiddens(rng, flat, params, _chain_betas(betas, n_chains))
    return TemperedState(v, h.reshape(t, n_chains, -1), 0)


def swap_pairs(n_temperatures: int, parity: int) -> np.ndarray:
    """Lower indices ``r`` of the pairs ``(r, r + 1)`` a round of the given parity attempts.

    Parameters
    ----------
    n_temperatures : int
    parity : {0, 1}
        0: ``(0, 1), (2, 3), ...``; 1: ``(1, 2), (3, 4), ...``.

    Returns
    -------
    ndarray of int of shape (n_pairs,)
    """
    if parity not in (0, 1):
        raise ValueError(f"parity must be 0 (pairs (0, 1), (2, 3), ...) or 1 (pairs (1, 2), ...), got {parity!r}")
    return np.arange(parity, n_temperatures - 1, 2)


def swap_log_ratio(state: TemperedState, params, betas) -> np.ndarray:
    """Log Metropolis ratio of exchanging the states of every neighbouring pair of replicas.

    Parameters
    ----------
    state : TemperedState
    params : RBMParams
    betas : array_like of shape (n_temperatures,)

    Returns
    -------
    ndarray of shape (n_temperatures - 1, n_chains)
        Entry ``r`` is ``(β_{r+1} - β_r) (E(v_{r+1}, h_{r+1}) - E(v_r, h_r))``.
    """
    betas = check_ladder(betas)
    _check_state(state, betas, params)
    return tempered_log_ratio(betas, energy(state.v, state.h, params))


def tempered_log_ratio(betas, u) -> np.ndarray:
    """Log Metropolis ratio of exchanging neighbouring replicas of a ladder in β, from their energies.

    Replica ``r`` targets ``p_r(x) ∝ exp(-β_r U(x))`` (times factors that
    both replicas of a pair share, such as a reference's untempered terms),
    so exchanging ``x_r`` and ``x_{r+1}`` has the ratio
    ``exp((β_{r+1} - β_r)(U_{r+1} - U_r))``, the same for an increasing or a
    decreasing ladder.

    Parameters
    ----------
    betas : ndarray of shape (n_temperatures,)
    u : ndarray of shape (n_temperatures, n_chains)
        ``U`` of each replica's state, ``E(v, h)`` for the RBM at ``β``.

    Returns
    -------
    ndarray of shape (n_temperatures - 1, n_chains)
    """
    return np.diff(betas)[:, None] * np.diff(u, axis=0)


def swap_neighbours(
    rng: np.random.Generator, state: TemperedState, params, betas, *, parity: int | None = None
) -> tuple[TemperedState, SwapInfo]:
    """One round of replica-exchange moves between neighbouring temperatures (stochastic).

    Each attempted pair ``(r, r + 1)`` of each ladder exchanges its joint
    states ``(v, h)`` with probability ``min(1, exp(log_ratio))``
    (:func:`swap_log_ratio`), decided by the shared
    :func:`~pymc_rbm.kernels.metropolis_accept`. The attempted pairs are
    disjoint, so the round is a product of independent Metropolis moves and
    leaves ``Π_r p_{β_r}(v_r, h_r)`` invariant.

    Parameters
    ----------
    rng : numpy.random.Generator
    state : TemperedState
    params : RBMParams
    betas : array_like of shape (n_temperatures,)
        Strictly increasing.
    parity : {0, 1}, optional
        Which pairs to attempt (:func:`swap_pairs`); default
        ``state.n_rounds % 2``, so that successive rounds alternate.
    Returns
    -------
    state : TemperedState
        New arrays (the input is not modified), ``n_rounds`` plus one.
    info : SwapInfo

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm import RBMParams
    >>> from pymc_rbm.kernels.tempering import init_tempered_state, swap_neighbours, uniform_ladder
    >>> rng = np.random.default_rng(0)
    >>> params = RBMParams.random(6, 4, scale=2.0, rng=1)
    >>> betas = uniform_ladder(4)
    >>> state = init_tempered_state(rng, np.zeros((3, 6)), params, betas)
    >>> state, info = swap_neighbours(rng, state, params, betas)
    >>> info.attempted.tolist(), info.accepted.shape, state.n_rounds
    ([True, False, True], (3, 3), 1)
    """
    betas = check_ladder(betas)
    _check_state(state, betas, params)
    parity = state.n_rounds % 2 if parity is None else parity
    pairs = swap_pairs(betas.shape[0], parity)
    log_ratio_all = swap_log_ratio(state, params, betas)
    t, n_chains = state.v.shape[:2]
    attempted = np.zeros(t - 1, dtype=bool)
    attempted[pairs] = True
    log_ratio = np.full((t - 1, n_chains), np.nan)
    log_ratio[pairs] = log_ratio_all[pairs]
    v, h = state.v.copy(), state.h.copy()
    accepted = exchange_pairs(rng, v, h, log_ratio_all, pairs)
    return TemperedState(v, h, state.n_rounds + 1), SwapInfo(attempted, accepted, log_ratio)


def exchange_pairs(rng: np.random.Generator, v: np.ndarray, h: np.ndarray, log_ratio, pairs, *, carried=(),
                   record=None) -> np.ndarray:
    """Accept or reject the swaps of the given disjoint pairs and exchange the accepted ones in place (stochastic).

    The unchecked core of :func:`swap_neighbours`, for callers that keep
    their replicas in their own arrays and have validated them once.

    Parameters
    ----------
    rng : numpy.random.Generator
    v : ndarray of shape (n_temperatures, n_chains, n_visible)
        Modified in place: rows ``r`` and ``r + 1`` of an accepted pair exchange.
    h : ndarray of shape (n_temperatures, n_chains, n_hidden)
        Modified in place, like ``v``.
    log_ratio : ndarray of shape (n_temperatures - 1, n_chains)
        Log Metropolis ratio of every pair (:func:`swap_log_ratio`); only the
        rows in ``pairs`` are read.
    pairs : ndarray of int
        Lower indices of disjoint pairs (:func:`swap_pairs`).
    carried : sequence of ndarray of shape (n_temperatures, n_chains, ...), optional
        More arrays that follow the replicas, exchanged like ``v`` (their
        labels for counting round trips, cached terms of their targets).
    record : tuple of two ndarrays of shape (n_temperatures - 1,), optional
        ``(swap_sum, swap_n)``: each attempted pair's acceptance
        probabilities, summed over the chains, are added to ``swap_sum`` and
        its attempts to ``swap_n``.

    Returns
    -------
    ndarray of bool of shape (n_temperatures - 1, n_chains)
        Which pairs swapped, per chain (False where not attempted).
    """
    accepted = np.zeros(log_ratio.shape, dtype=bool)
    accepted[pairs] = metropolis_accept(rng, log_ratio[pairs])
    if record is not None:
        record[0][pairs] += acceptance_probability(log_ratio[pairs]).sum(axis=1)
        record[1][pairs] += log_ratio.shape[1]
    lower, chain = np.nonzero(accepted)
    for x in (v, h, *carried):
        upper_rows = x[lower + 1, chain]
        x[lower + 1, chain] = x[lower, chain]
        x[lower, chain] = upper_rows
    return accepted


def tempered_sweep(
    rng: np.random.Generator, state: TemperedState, params, betas, *, kernel=gibbs_sweep
) -> tuple[TemperedState, SweepInfo]:
    """One sweep of every replica, each at its own β, with any RBM kernel (stochastic).

    Parameters
    ----------
    rng : numpy.random.Generator
    state : TemperedState
        Its hidden states must be current: when the parameters changed since
        the last step, redraw them first (:func:`init_tempered_state` with
        ``state.v``), as flip-the-state depends on ``h``.
    params : RBMParams
    betas : array_like of shape (n_temperatures,)
    kernel : callable, default :func:`~pymc_rbm.kernels.gibbs_sweep`
        ``kernel(rng, RBMState, params, beta) -> (RBMState, SweepInfo)``,
        e.g. from :func:`pymc_rbm.kernels.flip.build_kernel`.

    Returns
    -------
    state : TemperedState
        ``n_rounds`` unchanged.
    info : SweepInfo
        Change counts of shape (n_temperatures, n_chains).
    """
    betas = check_ladder(betas)
    _check_state(state, betas, params)
    t, n_chains = state.v.shape[:2]
    flat = RBMState(state.v.reshape(t * n_chains, -1), state.h.reshape(t * n_chains, -1))
    new, info = kernel(rng, flat, params, _chain_betas(betas, n_chains))
    out = TemperedState(new.v.reshape(t, n_chains, -1), new.h.reshape(t, n_chains, -1), state.n_rounds)
    return out, SweepInfo(info.n_changed.reshape(t, n_chains), info.n_hidden_changed.reshape(t, n_chains))


def build_kernel(sweep_kernel=None, *, k: int = 1):
    """The t-PT k step: ``k`` sweeps of every replica, then one swap round.

    Parameters
    ----------
    sweep_kernel : callable, optional
        The RBM kernel that moves each replica (default block Gibbs).
    k : int, default 1
        Sweeps per replica between swap rounds.

    Returns
    -------
    callable
        ``kernel(rng, state, params, betas) -> (TemperedState, TemperingInfo)``;
        successive calls alternate even and odd swap rounds.
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    sweep_kernel = gibbs_sweep if sweep_kernel is None else sweep_kernel
    k = int(k)

    def pt_step(rng, state, params, betas):
        betas = check_ladder(betas)
        for _ in range(k):
            state, sweep = tempered_sweep(rng, state, params, betas, kernel=sweep_kernel)
        state, swap = swap_neighbours(rng, state, params, betas)
        return state, TemperingInfo(sweep, swap)

    return pt_step


#: The smallest acceptance rate a pair's barrier is taken from with ``saturating=True``: a pair that never swapped
#: counts as a barrier of ``-log(MIN_ACCEPTANCE)``, about 6.9.
MIN_ACCEPTANCE = 1e-3


def communication_barrier(betas, rejection, *, saturating: bool = False) -> np.ndarray:
    """The cumulative communication barrier ``Λ(β_r)`` of a ladder from its swap rejection rates.

    Syed, Bouchard-Côté, Deligiannidis & Doucet (2022, "Non-reversible
    parallel tempering: a scalable highly parallel MCMC scheme", JRSS B)
    show that the rejection rate of the pair ``(r, r + 1)`` approximates
    ``Λ(β_{r+1}) - Λ(β_r)``, the integral of the local barrier ``λ(β)`` over
    the pair's interval; the total ``Λ = Λ(1)`` sets how many replicas the
    ladder needs (about ``2 Λ``) and how fast a replica crosses it.

    Parameters
    ----------
    betas : array_like of shape (n_temperatures,)
        Strictly increasing.
    rejection : array_like of shape (n_temperatures - 1,)
        Mean swap rejection rate ``1 - min(1, ratio)`` of each pair, in [0, 1].
    saturating : bool, default False
        Take each pair's barrier as ``-log`` of its acceptance rate (at least
        :data:`MIN_ACCEPTANCE`) instead of its rejection rate. The two agree
        for small rejections, where the estimate of Syed et al. holds; a pair
        that rarely swaps then counts as the several narrower pairs it needs
        (the acceptances of neighbouring pairs multiply roughly into that of
        the wide one), not as at most one. On a ladder still too coarse for a
        sharp transition the barrier, and the rungs it asks for, are not
        underestimated.

    Returns
    -------
    ndarray of shape (n_temperatures,)
        ``Λ(β_0) = 0, ..., Λ(β_{t-1}) = Λ``, non-decreasing.
    """
    betas = check_ladder(betas)
    r = np.asarray(rejection, dtype=np.float64)
    if r.shape != (betas.shape[0] - 1,):
        raise ValueError(f"rejection must have shape ({betas.shape[0] - 1},), got {r.shape}")
    if not np.all((r >= 0.0) & (r <= 1.0)):
        raise ValueError(f"rejection rates must lie in [0, 1], got {r}")
    if saturating:
        r = -np.log(np.maximum(1.0 - r, MIN_ACCEPTANCE))
    return np.concatenate([[0.0], np.cumsum(r)])


def rungs_for_barrier(barrier: float, max_rungs: int, min_rungs: int = 2) -> int:
    """Rungs of a ladder of communication barrier ``Λ``: ``⌈2Λ⌉ + 1``, within ``[min_rungs, max_rungs]``.

    Syed et al. (2022): with about ``2Λ`` replicas the round-trip rate of a
    non-reversible ladder is near its optimum, ``1 / (2 + 2Λ)`` a round.

    Parameters
    ----------
    barrier : float
        ``Λ`` (:func:`communication_barrier`); ``inf`` gives ``max_rungs``.
    max_rungs, min_rungs : int

    Returns
    -------
    int

    Examples
    --------
    >>> from pymc_rbm.kernels.tempering import rungs_for_barrier
    >>> rungs_for_barrier(3.2, 64), rungs_for_barrier(0.1, 64), rungs_for_barrier(float("inf"), 32)
    (8, 2, 32)
    """
    want = max_rungs if not np.isfinite(barrier) else np.ceil(2.0 * float(barrier)) + 1
    return int(min(max_rungs, max(min_rungs, want)))


def equalized_ladder(betas, rejection, n_temperatures: int, *, saturating: bool = False) -> np.ndarray:
    """A ladder of ``n_temperatures`` rungs with equal barrier between neighbours (stochastic-free).

    The cumulative barrier of :func:`communication_barrier` is interpolated
    linearly between the old rungs (monotone, as Syed et al. 2022 require);
    the new rungs are its inverse at ``Λ k / (n_temperatures - 1)``, so every
    pair is expected to reject equally often. The end points are kept.

    Parameters
    ----------
    betas : array_like of shape (n_old,)
        The ladder the rates were measured on, strictly increasing.
    rejection : array_like of shape (n_old - 1,)
    n_temperatures : int
        ``>= 2``.
    saturating : bool, default False
        The barrier of :func:`communication_barrier` with that option.

    Returns
    -------
    ndarray of shape (n_temperatures,)
        Strictly increasing, from ``betas[0]`` to ``betas[-1]``.

    Examples
    --------
    >>> from pymc_rbm.kernels.tempering import equalized_ladder
    >>> equalized_ladder([0.0, 0.5, 1.0], [0.1, 0.3], 3).round(3).tolist()
    [0.0, 0.667, 1.0]
    """
    betas = check_ladder(betas)
    if isinstance(n_temperatures, bool) or not isinstance(n_temperatures, (int, np.integer)) or n_temperatures < 2:
        raise ValueError(f"n_temperatures must be an integer >= 2, got {n_temperatures!r}")
    lam = communication_barrier(betas, rejection, saturating=saturating)
    if lam[-1] <= 0.0:
        return np.linspace(betas[0], betas[-1], int(n_temperatures))
    # a floor on each pair's barrier keeps the map invertible where no swap was ever rejected
    lam = np.concatenate([[0.0], np.cumsum(np.maximum(np.diff(lam), 1e-6 * lam[-1]))])
    targets = np.linspace(0.0, lam[-1], int(n_temperatures))
    out = np.interp(targets, lam, betas)
    out[0], out[-1] = betas[0], betas[-1]
    return check_ladder(out)

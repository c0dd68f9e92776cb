"""Negative phases: where the model term of the gradient comes from.

A negative phase is a pair of functions with nothing hidden: ``init(rng, data,
params, batch_size) -> chains`` makes the persistent chains (``None`` when there are
none) and ``step(rng, chains, params, batch) -> (statistics, chains, info)``
gives the model statistics for one update and the chains to carry to the
next. The chains are ordinary values (:class:`~pymc_rbm.kernels.RBMState`,
:class:`~pymc_rbm.kernels.tempering.TemperedState`) that
:func:`~pymc_rbm.training.fitting.fit` returns, so training can be resumed.

- CD-k: chains start at the batch and run ``k`` sweeps (Hinton 2002).
- PCD-k: the chains persist between updates (Tieleman 2008).
- t-PT k: persistent ladders of ``t`` replicas, ``k`` sweeps each, then a
  swap round (Brügge, Fischer & Igel 2013, §4.2; :mod:`pymc_rbm.kernels.tempering`); the
  replicas at β = 1 are the samples.
- Deterministic: the moments of :func:`pymc_rbm.estimators.moments`.

The sweeps are the kernels of :mod:`pymc_rbm.kernels` (block Gibbs,
flip-the-state, the α mixture), the ones ``pm.sample`` uses. Whenever the
parameters changed since the last sweep, a persistent chain's hidden state is
redrawn from ``p(h | v)`` before flip-the-state uses it (a stale ``h`` breaks
invariance). With ``wormholes`` (Hinton, Welling & Mnih 2003), each chain at β = 1 is offered one
long-range move after the sweeps, accepted by the Metropolis rule on
``p(v) ∝ exp(-F(v))``; where it is accepted, ``h`` is redrawn from ``p(h | v)``.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, NamedTuple

import numpy as np

from pymc_rbm.energy import free_energy
from pymc_rbm.estimators.tap import UnphysicalFixedPoint
from pymc_rbm.kernels import tempering as _tempering
from pymc_rbm.kernels.gibbs import init_state, sample_hiddens
from pymc_rbm.kernels.operators import build_operator
from pymc_rbm.kernels.state import RBMState
from pymc_rbm.training.gradients import data_statistics, model_statistics
from pymc_rbm.validation import check_positive_int

__all__ = [
    "NegativePhase",
    "SAMPLING_METHODS",
    "contrastive_divergence",
    "persistent_contrastive_divergence",
    "parallel_tempering",
    "deterministic",
    "wormhole_move",
]

#: Methods whose model term comes from Markov chains.
SAMPLING_METHODS = ("cd", "pcd", "pt")


class NegativePhase(NamedTuple):
    """The model term of the gradient, as two pure functions.

    Attributes
    ----------
    name : str
        ``"cd"``, ``"pcd"``, ``"pt"`` or a deterministic method's name.
    init : callable
        ``init(rng, data, params, batch_size) -> chains``: the persistent
        chains (``None`` for CD and the deterministic methods).
    step : callable
        ``step(rng, chains, params, batch) -> (ExactMoments, chains, info)``:
        the model statistics for one update, the chains to carry on, and a
        dict of floats (acceptance rates) for the history.
    """

    name: str
    init: Callable
    step: Callable


def _start_rows(rng: np.random.Generator, data: np.ndarray, n_chains: int) -> np.ndarray:
    """``n_chains`` rows of ``data``: each row once per pass, in random order (stochastic)."""
    reps = -(-n_chains // data.shape[0])
    idx = np.concatenate([rng.permutation(data.shape[0]) for _ in range(reps)])[:n_chains]
    return data[idx]


def wormhole_move(rng: np.random.Generator, state: RBMState, params, proposal) -> tuple[RBMState, dict]:
    """One wormhole move of every chain's visible state, then ``h`` redrawn where it moved (stochastic).

    The moves of Hinton, Welling & Mnih (2003).

    Parameters
    ----------
    rng : numpy.random.Generator
    state : RBMState
        Chains at β = 1, ``v`` of shape (n_chains, n_visible).
    params : RBMParams
    proposal : object with ``propose(rng, x)``
        A proposal of :mod:`pymc_rbm.kernels.wormhole` (``PointWormholes``,
        ``RegionWormholes``), moved by
        :func:`~pymc_rbm.kernels.wormhole.wormhole_step` with the log density
        ``-F(v)``.

    Returns
    -------
    state : RBMState
    info : dict
        ``wormhole_accept``: the fraction of chains whose move was accepted;
        ``wormhole_jumps``: the fraction that was accepted and changed region.
    """
    from pymc_rbm.kernels.wormhole import wormhole_step

    def log_density(v):
        return -free_energy(v, params)

    v, info = wormhole_step(rng, state.v, log_density, proposal)
    accepted = np.asarray(info.accepted, dtype=bool)
    h = state.h
    if accepted.any():  # the hidden state belongs to the old v: redraw it from p(h | v)
        h = h.copy()
        h[accepted] = sample_hiddens(rng, v[accepted], params)
    return RBMState(v, h), {
        "wormhole_accept": float(accepted.mean()),
        "wormhole_jumps": float((accepted & info.region_changed).mean()),
    }


def _sweeps(rng, state, params, kernel, k):
    for _ in range(k):
        state, _ = kernel(rng, state, params)
    return state


def contrastive_divergence(kernel, k: int = 1, *, wormholes=None) -> NegativePhase:
    """CD-k: chains start at the batch, ``h ~ p(h | v)``, and run ``k`` sweeps of ``kernel``.

    Parameters
    ----------
    kernel : callable
        A sweep kernel (:func:`pymc_rbm.kernels.build_operator`).
    k : int, default 1
    wormholes : proposal, optional
        One wormhole move per chain after the sweeps (Hinton, Welling & Mnih 2003).

    Returns
    -------
    NegativePhase
    """

    k = check_positive_int(k, "k")

    def init(rng, data, params, batch_size=None):
        return None

    def step(rng, chains, params, batch):
        state, info = _run_chains(rng, batch, params, kernel, k, wormholes)
        return data_statistics(state.v, params), None, info

    return NegativePhase("cd", init, step)


def _run_chains(rng, v, params, kernel, k: int, wormholes) -> tuple[RBMState, dict]:
    """From visible states ``v``: ``h ~ p(h | v)``, ``k`` sweeps of ``kernel``, then a wormhole move if any."""
    state = _sweeps(rng, init_state(rng, v, params), params, kernel, k)
    if wormholes is None:
        return state, {}
    return wormhole_move(rng, state, params, wormholes)


def persistent_contrastive_divergence(
    kernel, k: int = 1, *, n_chains: int | None = None, wormholes=None
) -> NegativePhase:
    """PCD-k: persistent chains, ``k`` sweeps of ``kernel`` per update.

    Parameters
    ----------
    kernel : callable
    k : int, default 1
    n_chains : int, optional
        Number of persistent chains; default the batch size (Brügge, Fischer & Igel 2013: "the
        number of samples used for the gradient approximation was set to be
        equal to the number of training examples in a (mini) batch"). They
        start at training rows.
    wormholes : proposal, optional

    Returns
    -------
    NegativePhase
    """

    k = check_positive_int(k, "k")
    n_chains = check_positive_int(n_chains, "n_chains", allow_none=True)

    def init(rng, data, params, batch_size=None):
        n = n_chains or batch_size or data.shape[0]
        return init_state(rng, _start_rows(rng, data, n), params)

    def step(rng, chains, params, batch):
        # the parameters changed since the last update: h is redrawn before the first sweep
        state, info = _run_chains(rng, chains.v, params, kernel, k, wormholes)
        return data_statistics(state.v, params), state, info

    return NegativePhase("pcd", init, step)


def parallel_tempering(
    kernel, k: int = 1, *, betas, n_chains: int | None = None, wormholes=None
) -> NegativePhase:
    """t-PT k: persistent ladders of replicas at ``betas``, ``k`` sweeps each, then one swap round.

    Parameters
    ----------
    kernel : callable
        Sweep kernel of every replica, at the replica's β.
    k : int, default 1
    betas : array_like of shape (n_temperatures,)
        Strictly increasing, ending at 1 (the replicas that give the samples).
    n_chains : int, optional
        Number of ladders; default the batch size.
    wormholes : proposal, optional
        Offered to the β = 1 replicas after the swap round.

    Returns
    -------
    NegativePhase
        ``info`` holds ``swap_accept``: the fraction of attempted swaps accepted.
    """
    betas = _tempering.check_ladder(betas)
    if betas[-1] != 1.0:
        raise ValueError(f"the last inverse temperature must be 1 (the model itself), got {betas[-1]}")
    pt_step = _tempering.build_kernel(kernel, k=check_positive_int(k, "k"))
    n_chains = check_positive_int(n_chains, "n_chains", allow_none=True)

    def init(rng, data, params, batch_size=None):
        n = n_chains or batch_size or data.shape[0]
        return _tempering.init_tempered_state(rng, _start_rows(rng, data, n), params, betas)

    def step(rng, chains, params, batch):
        if not isinstance(chains, _tempering.TemperedState):
            raise TypeError(f"parallel tempering continues a TemperedState, got {type(chains).__name__}")
        fresh = _tempering.init_tempered_state(rng, chains.v, params, betas)._replace(n_rounds=chains.n_rounds)
        state, tinfo = pt_step(rng, fresh, params, betas)
        swaps = tinfo.swap.accepted[tinfo.swap.attempted]
        info = {"swap_accept": float(swaps.mean()) if swaps.size else float("nan")}
        top = RBMState(state.v[-1], state.h[-1])
        if wormholes is not None:
            top, wh = wormhole_move(rng, top, params, wormholes)
            info.update(wh)
            state = state._replace(v=state.v.copy(), h=state.h.copy())
            state.v[-1], state.h[-1] = top.v, top.h
        return data_statistics(top.v, params), state, info

    return NegativePhase("pt", init, step)


def deterministic(method: str, **options: Any) -> NegativePhase:
    """The model term from :func:`pymc_rbm.training.gradients.model_statistics` (no chains).

    Parameters
    ----------
    method : {"exact", "mean_field", "tap", "bethe", "mixture_mean_field"}
    **options
        Passed to the moment function.

    Returns
    -------
    NegativePhase
        Where the moment function reports on the physical domain (TAP:
        ``diagnostics["physical"]``), ``info`` holds ``unphysical`` (1.0 when
        the moments of this update lie outside it, else 0.0) and the
        function's :class:`~pymc_rbm.estimators.tap.UnphysicalFixedPoint`
        warning is left to the caller (:func:`~pymc_rbm.training.fit` warns
        once per run, not once per update).
    """

    def init(rng, data, params, batch_size=None):
        return None

    def step(rng, chains, params, batch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UnphysicalFixedPoint)
            stats = model_statistics(params, method, **options)
        physical = getattr(stats, "diagnostics", {}).get("physical")
        info = {} if physical is None else {"unphysical": 0.0 if physical else 1.0}
        return stats, None, info

    return NegativePhase(method, init, step)

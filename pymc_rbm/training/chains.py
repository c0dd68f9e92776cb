"""The Markov chains of the sampling negative phases: block-Gibbs sweeps, any kernel's sweeps, wormhole moves.

The negative phases of :mod:`pymc_rbm.training.negative` (CD, PCD, parallel
tempering) run these chains on binary RBMs ``(W, vbias, hbias)``, states of
shape ``(n_chains, n_visible)`` and ``(n_chains, n_hidden)``:

- Block Gibbs from the visible states, ``h`` drawn afresh at the current
  parameters (:func:`gibbs_sweeps_from_visible`; PCD with redrawn hidden
  units), or visible first from the hidden state a persistent chain
  carries (:func:`gibbs_sweeps_visible_first`; PCD with carried hidden
  units): each sweep updates the visible layer given ``h``, then the hidden
  layer, so that the hidden probabilities of the last sweep serve the
  statistics and the hidden draw the next update: two matrix products per
  sweep and one for the statistics, as in scikit-learn's ``BernoulliRBM``.
- Any sweep kernel of :mod:`pymc_rbm.kernels` (block Gibbs, flip-the-state,
  the α mixture; the ones ``pm.sample`` uses) from visible states with ``h``
  redrawn from ``p(h | v)`` first (:func:`run_chains`): the parameters
  changed since the last sweep, and a stale ``h`` breaks the invariance of
  flip-the-state. Block Gibbs needs no redraw: its visible update given
  ``h`` is invariant for ``p(v, h)`` at the new parameters whatever ``h`` is.
- Wormhole moves (Hinton, Welling & Mnih 2003; :func:`wormhole_move`): one
  long-range move of each chain at β = 1 after the sweeps, accepted by the
  Metropolis rule on ``p(v) ∝ exp(-F(v))``; where it is accepted, ``h`` is
  redrawn from ``p(h | v)``.

Small models (below the dense path of :mod:`pymc_rbm.kernels.compiled`, as
:func:`one_call` decides) run block-Gibbs chains as one compiled call of the
same arithmetic (:func:`chain_in_one_call`): the same uniforms, layer rule and
BLAS products, so the same values bit for bit, without NumPy's per-call costs.
"""

from __future__ import annotations

import numpy as np

from pymc_rbm.energy import free_energy, hidden_activation
from pymc_rbm.kernels import compiled, training_steps
from pymc_rbm.kernels.gibbs import init_state, sample_hiddens
from pymc_rbm.kernels.layer import GIBBS
from pymc_rbm.kernels.state import RBMState, sigmoid_
from pymc_rbm.kernels.sweep import at_beta, sweep
from pymc_rbm.params import RBMParams

__all__ = [
    "one_call",
    "chain_in_one_call",
    "start_rows",
    "run_chains",
    "wormhole_move",
    "gibbs_sweeps_visible_first",
    "gibbs_sweeps_from_visible",
]


def one_call(n_chains: int, n_visible: int, n_hidden: int, dtype) -> bool:
    """Whether a training update of this size runs as compiled calls with NumPy's values.

    Below the dense path's size (:func:`~pymc_rbm.kernels.compiled.dense`), where
    NumPy's per-call costs are most of an update and BLAS's blocking buys nothing;
    float64 or float32, where Numba is installed.
    """
    return (dtype in (np.float64, np.float32) and compiled.available()
            and not compiled.dense(n_chains, n_visible, n_hidden))


def start_rows(rng: np.random.Generator, data: np.ndarray, n_chains: int) -> np.ndarray:
    """``n_chains`` rows of ``data``: each row once per pass, in random order (stochastic).

    Parameters
    ----------
    rng : numpy.random.Generator
    data : ndarray of shape (n_samples, n_visible)
    n_chains : int

    Returns
    -------
    ndarray of shape (n_chains, n_visible)
        Where persistent chains start.
    """
    reps = -(-n_chains // data.shape[0])
    idx = np.concatenate([rng.permutation(data.shape[0]) for _ in range(reps)])[:n_chains]
    return data[idx]


def _sweeps(rng, state, params, kernel, k):
    """``k`` sweeps of ``kernel`` from ``state`` (stochastic)."""
    for _ in range(k):
        state, _ = kernel(rng, state, params)
    return state


def run_chains(rng, v, params, kernel, k: int, wormholes) -> tuple[RBMState, dict]:
    """From visible states ``v``: ``h ~ p(h | v)``, ``k`` sweeps of ``kernel``, then a wormhole move if any (stochastic).

    Parameters
    ----------
    rng : numpy.random.Generator
    v : ndarray of shape (n_chains, n_visible)
    params : RBMParams
    kernel : callable
        A sweep kernel (:func:`pymc_rbm.kernels.build_operator`).
    k : int
    wormholes : proposal or None
        Offered once to every chain after the sweeps (:func:`wormhole_move`).

    Returns
    -------
    state : RBMState
    info : dict
        The wormhole move's acceptance (empty without wormholes).
    """
    state = _sweeps(rng, init_state(rng, v, params), params, kernel, k)
    if wormholes is None:
        return state, {}
    return wormhole_move(rng, state, params, wormholes)


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


def gibbs_sweeps_visible_first(rng: np.random.Generator, state: RBMState, params, k: int):
    """``k`` block-Gibbs sweeps ``v ~ p(v | h)``, then ``h ~ p(h | v)`` (stochastic).

    The kernel ``G_v G_h`` leaves ``p(v, h)`` invariant like ``G_h G_v``
    (:func:`~pymc_rbm.kernels.gibbs.gibbs_sweep`), starting from the hidden
    state the chain carries; the last hidden probabilities are returned for
    Rao-Blackwellised statistics.

    Parameters
    ----------
    rng : numpy.random.Generator
        Per sweep, the visible uniforms then the hidden ones.
    state : RBMState
        ``v`` of shape (n_chains, n_visible), ``h`` of shape (n_chains, n_hidden).
    params : RBMParams
    k : int

    Returns
    -------
    state : RBMState
    hidden_probabilities : ndarray of shape (n_chains, n_hidden)
        ``p(h | v)`` of the final ``v``, from which its ``h`` was drawn.
    """
    target = at_beta(params)
    # V (H V)^(k-1) H = (V H)^k: a visible half-sweep, k - 1 sweeps of the kernel, a hidden half-sweep.
    # The hidden input is carried and recomputed in full after every visible update (refresh), so the
    # values, and so the draws, are those of the plain loop.
    v = GIBBS.update(rng, None, target.visible_logits(state.h))[0]
    chain = RBMState(v, None, target.hidden_input(v))
    for _ in range(k - 1):
        chain, _ = sweep(rng, chain, target, GIBBS, refresh=True)
    a = chain.hidden_input
    return RBMState(chain.v, GIBBS.update(rng, None, a)[0]), sigmoid_(a)


def gibbs_sweeps_from_visible(rng: np.random.Generator, v, params, k: int):
    """``k`` block-Gibbs sweeps from visible states, ``h`` drawn afresh at ``params`` (stochastic).

    ``k`` sweeps of :func:`~pymc_rbm.kernels.sweep.sweep` (hidden layer given
    ``v``, then visible given ``h``) from ``(v, None)``: the hidden state is a
    Gibbs draw at the current parameters, whatever the chain carried. Then
    the hidden probabilities of the final ``v`` (one product) for
    Rao-Blackwellised statistics, and ``h`` drawn from them.

    Parameters
    ----------
    rng : numpy.random.Generator
        Per sweep the hidden uniforms then the visible ones; then the final hidden ones.
    v : ndarray of shape (n_chains, n_visible)
    params : RBMParams
    k : int

    Returns
    -------
    state : RBMState
    hidden_probabilities : ndarray of shape (n_chains, n_hidden)
        ``p(h | v)`` of the final ``v``, from which its ``h`` was drawn.
    """
    if chain_in_one_call(v, params):  # the same chain, without NumPy's per-call costs
        v = np.array(v, order="C")
        h = np.empty((v.shape[0], params.n_hidden), dtype=params.dtype)
        return RBMState(v, h), sigmoid_(training_steps.gibbs_chain(rng, v, h, params, k, last_draw=True))
    target = at_beta(params)
    chain = RBMState(v, None)
    for _ in range(k):
        chain, _ = sweep(rng, chain, target, GIBBS)
    a = hidden_activation(chain.v, params)
    return RBMState(chain.v, GIBBS.update(rng, None, a)[0]), sigmoid_(a)


def chain_in_one_call(v, params) -> bool:
    """Whether block-Gibbs chains from ``v`` run as one compiled call (:func:`one_call`; binary RBMs, ``v`` in
    ``params``' dtype)."""
    return (type(params) is RBMParams and v.ndim == 2 and v.dtype == params.dtype
            and one_call(v.shape[0], params.n_visible, params.n_hidden, params.dtype))

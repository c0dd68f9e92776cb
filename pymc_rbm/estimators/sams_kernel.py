"""One iteration of self-adjusted mixture sampling: the Markov move, the label's local jump, the update of ``ζ``.

The chains of SAMS (:mod:`~pymc_rbm.estimators.sams` has the method and its references) carry a
state ``x`` and a label ``L`` (a point of the ladder); the runs carry the log-weights ``ζ``. One
iteration ``t`` is, as in BlackJAX's kernels, randomness first, state in, state out:

1. :func:`markov_move`: sweeps of the intermediate RBM of each chain's label;
2. :func:`label_jump`: a local jump of the label, accepted by the kernels' shared Metropolis
   decision, with the observation ``o_t`` that updates ``ζ`` (Rao-Blackwellized or not);
3. :func:`update_zeta`: ``ζ`` moved by the gain :class:`SAMSGain` and renormalised.

:func:`run_iterations` runs them for a whole call and keeps what they measured in a
:class:`SAMSRecorder`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.special import logsumexp

from pymc_rbm.estimators.ladder import Ladder
from pymc_rbm.estimators.path import AnnealingPath
from pymc_rbm.kernels.activations import FULL_EVERY
from pymc_rbm.kernels.metropolis import acceptance_probability, metropolis_accept

__all__ = [
    "SAMSGain",
    "SAMSState",
    "JumpInfo",
    "markov_move",
    "label_jump",
    "update_zeta",
    "SAMSRecorder",
    "run_iterations",
]


class SAMSGain:
    """The gain sequence ``γ_t`` of SAMS, one state per run.

    Parameters
    ----------
    n_runs, n_labels : int
    kind : {"tan", "samc"}
        Tan's two-stage gain, or SAMC's ``t0 / max(t0, t)``.
    exponent : float
        ``β`` of Tan's first stage, in (0.5, 1].
    flat_tolerance : float
        End of Tan's first stage: ``max_j |n_j / t - π_j| / π_j <= flat_tolerance``.
    t0 : float
        SAMC's ``t0``.
    t_start : float, default 0
        Iterations the initial ``ζ`` counts as in Tan's second stage: its gain
        is ``1 / (t - t_0 + t_0^β + t_start)``.
    """

    def __init__(
        self,
        n_runs: int,
        n_labels: int,
        kind: str,
        exponent: float,
        flat_tolerance: float,
        t0: float,
        t_start: float = 0.0,
    ):
        if kind not in ("tan", "samc"):
            raise ValueError(f'gain must be "tan" or "samc", got {kind!r}')
        if not 0.5 < float(exponent) <= 1.0:
            raise ValueError(f"gain_exponent must lie in (0.5, 1], got {exponent!r}")
        if not float(flat_tolerance) > 0.0:
            raise ValueError(f"flat_tolerance must be positive, got {flat_tolerance!r}")
        if not float(t0) > 0.0:
            raise ValueError(f"t0 must be positive, got {t0!r}")
        if not float(t_start) >= 0.0:
            raise ValueError(f"t_start must be non-negative, got {t_start!r}")
        self.kind, self.exponent, self.tol, self.t0 = kind, float(exponent), float(flat_tolerance), float(t0)
        self.t_start = float(t_start)
        self.pi_min = 1.0 / n_labels
        self.counts = np.zeros((n_runs, n_labels))
        self.burn_in_end = np.full(n_runs, -1.0)  # t_0 of each run, -1 while in the first stage

    def __call__(self, t: int, labels: np.ndarray) -> np.ndarray:
        """The gains at iteration ``t`` (1-based) after the runs moved to ``labels``; shape (n_runs,).

        ``labels`` is (n_runs,), or (n_runs, c) for runs of ``c`` chains each,
        whose labels then count ``1/c`` each.
        """
        labels = np.asarray(labels)
        if labels.ndim == 1:
            labels = labels[:, None]
        n_runs, c = labels.shape
        if self.kind == "samc":
            return np.full(n_runs, self.t0 / max(self.t0, t))
        first = self.burn_in_end < 0
        if first.any():
            rows = np.flatnonzero(first)
            np.add.at(self.counts, (np.repeat(rows, c), labels[rows].ravel()), 1.0 / c)
            freq = self.counts[first] / t
            flat = np.abs(freq - self.pi_min).max(axis=1) / self.pi_min <= self.tol
            self.burn_in_end[np.flatnonzero(first)[flat]] = t
        t0 = self.burn_in_end
        second = 1.0 / (t - t0 + np.maximum(t0, 1.0) ** self.exponent + self.t_start)
        g = np.where(t0 < 0, float(t) ** -self.exponent, second)
        return np.minimum(self.pi_min, g)


def _neighbours(labels: np.ndarray, n_labels: int):
    """Both neighbours of each label (clipped) and ``Γ(L, ·)`` of each: (n, 2) arrays."""
    nb = np.stack([labels - 1, labels + 1], axis=1)
    gam = np.full(nb.shape, 0.5)
    gam[labels == 0] = (0.0, 1.0)
    gam[labels == n_labels - 1] = (1.0, 0.0)
    return np.clip(nb, 0, n_labels - 1), gam


def _gamma(labels: np.ndarray, n_labels: int) -> np.ndarray:
    """``Γ(L, j)`` for a proposed neighbour from ``L``: 1 at either end of the ladder, else 1/2."""
    return np.where((labels == 0) | (labels == n_labels - 1), 1.0, 0.5)


# ---------------------------------------------------------------- kernel
class SAMSState(NamedTuple):
    """The chains of SAMS between iterations.

    Attributes
    ----------
    v : ndarray of shape (n, n_visible)
    a : ndarray of shape (n, H)
        Carried activations of ``v`` (:meth:`AnnealingPath.start`).
    vb : ndarray of shape (n, 1 + M)
        ``v``'s visible terms.
    labels : ndarray of int of shape (n,)
    """

    v: np.ndarray
    a: np.ndarray
    vb: np.ndarray
    labels: np.ndarray


class JumpInfo(NamedTuple):
    """What a :func:`label_jump` saw.

    Attributes
    ----------
    observation : ndarray of shape (n, m)
        Each chain's observation ``o_t`` (rows sum to 1).
    n_accepted : int
        Jumps accepted.
    """

    observation: np.ndarray
    n_accepted: int


def markov_move(rng, path: AnnealingPath, state: SAMSState, coefs: np.ndarray, *, refresh: bool) -> SAMSState:
    """One sweep of every chain at its label's point of the path (stochastic); ``refresh`` as in :meth:`AnnealingPath.sweep`."""
    v, a, vb = path.sweep(rng, state.v, state.a, coefs[state.labels], refresh=refresh)
    return SAMSState(v, a, vb, state.labels)


def label_jump(
    rng, path: AnnealingPath, state: SAMSState, coefs: np.ndarray, zeta_chain: np.ndarray, rao_blackwell: str
) -> tuple[SAMSState, JumpInfo]:
    """The local jump of every chain's label, and the observation it gives (stochastic).

    Proposes ``j = L ± 1`` with probabilities ``Γ(L, j)`` and accepts with the
    Metropolis-Hastings ratio of the mixture (Zhang 2016, eq. 2.4.9; ``π``
    uniform cancels). The observation is the whole conditional of the label
    (``"global"``), the row of jump probabilities from ``L`` (``"local"``) or
    the indicator of the new label (``"none"``).

    Parameters
    ----------
    rng : numpy.random.Generator
    path : AnnealingPath
    state : SAMSState
    coefs : ndarray of shape (m, 1 + M)
        The labels' path coefficients.
    zeta_chain : ndarray of shape (n, m)
        The ``ζ`` of each chain's run.
    rao_blackwell : {"global", "local", "none"}

    Returns
    -------
    SAMSState, JumpInfo
    """
    labels, a, vb = state.labels, state.a, state.vb
    n, m = labels.shape[0], coefs.shape[0]
    rows = np.arange(n)
    nb, gam = _neighbours(labels, m)
    if rao_blackwell == "global":
        lf_all = path.log_f_ladder(a, vb, coefs)
        lf_here, lf_nb = lf_all[rows, labels], lf_all[rows[:, None], nb]
    else:
        lf_here = path.log_f(a, vb, coefs[labels])
        lf_nb = np.stack([path.log_f(a, vb, coefs[nb[:, i]]) for i in range(2)], axis=1)
    # log MH ratio of each neighbour (π uniform cancels)
    z_here = zeta_chain[rows, labels]
    with np.errstate(divide="ignore"):
        log_ratio = (
            (lf_nb - zeta_chain[rows[:, None], nb])
            - (lf_here - z_here)[:, None]
            + np.log(_gamma(nb, m))
            - np.log(gam)
        )
    log_ratio[gam == 0.0] = -np.inf
    choice = (rng.random(n) < gam[:, 1]).astype(np.int64)  # 0: down, 1: up
    proposal = nb[rows, choice]
    accept = metropolis_accept(rng, log_ratio[rows, choice])
    new = np.where(accept, proposal, labels)
    if rao_blackwell == "global":
        log_p = lf_all - zeta_chain
        log_p -= logsumexp(log_p, axis=1, keepdims=True)
        obs = np.exp(log_p)
    else:
        obs = np.zeros((n, m))
        if rao_blackwell == "none":
            obs[rows, new] = 1.0
        else:
            move = gam * acceptance_probability(log_ratio.ravel()).reshape(log_ratio.shape)
            np.add.at(obs, (rows[:, None].repeat(2, 1), nb), move)
            obs[rows, labels] += 1.0 - move.sum(axis=1)
    return state._replace(labels=new), JumpInfo(obs, int(accept.sum()))


def update_zeta(zeta: np.ndarray, gains: np.ndarray, observation: np.ndarray, kind: str) -> None:
    """``ζ ← ζ + γ_t o_t / π`` (Tan) or ``ζ + γ_t (o_t - π)`` (SAMC), then ``ζ - ζ_0``; in place.

    Parameters
    ----------
    zeta : ndarray of shape (n_runs, m)
    gains : ndarray of shape (n_runs,)
        ``γ_t`` of each run (:class:`SAMSGain`).
    observation : ndarray of shape (n_runs, m)
        Each run's observation (the mean over its chains).
    kind : {"tan", "samc"}
    """
    pi = np.full(zeta.shape[1], 1.0 / zeta.shape[1])
    if kind == "samc":
        zeta += gains[:, None] * (observation - pi)
    else:
        zeta += gains[:, None] * observation / pi
    zeta -= zeta[:, :1]


# ------------------------------------------------------------------ runs
class SAMSRecorder:
    """What the iterations of SAMS measured (Pigeons' recorder); an iteration counts once it is recorded.

    Attributes
    ----------
    visits : ndarray of shape (n_runs, m)
        Iterations at each label after each run's first stage.
    accepted, proposed : int
        Label jumps.
    t_done, sweeps_done : int
        Iterations and sweeps that ended.
    zeta_half : ndarray of shape (n_runs, m) or None
        ``ζ`` half-way through the run.
    """

    def __init__(self, n_runs: int, n_labels: int):
        self.visits = np.zeros((n_runs, n_labels))
        self.accepted = self.proposed = 0
        self.t_done = self.sweeps_done = 0
        self.zeta_half = None


def run_iterations(
    path: AnnealingPath,
    rng,
    ladder: Ladder,
    zeta: np.ndarray,
    gains: SAMSGain,
    recorder: SAMSRecorder,
    *,
    chains_per_run: int,
    n_moves: int,
    sweeps_per_move: int,
    gain: str,
    rao_blackwell: str,
    bar,
) -> None:
    """The iterations of SAMS (stochastic): ``n_moves`` of Markov moves, label jumps and updates of ``ζ``.

    Parameters
    ----------
    path : AnnealingPath
    rng : numpy.random.Generator
    ladder : Ladder
        The labels, with the chains' starting states and labels; chain ``i`` belongs to run ``i // chains_per_run``.
    zeta : ndarray of shape (n_runs, m)
        Each run's ``ζ``, updated in place.
    gains : SAMSGain
    recorder : SAMSRecorder
        Updated as every iteration ends.
    chains_per_run, n_moves, sweeps_per_move : int
    gain : {"tan", "samc"}
    rao_blackwell : {"global", "local", "none"}
    bar : progress bar, advanced once per sweep
    """
    coefs = ladder.coefs
    n_runs, m = zeta.shape
    c = chains_per_run
    n = n_runs * c
    run = np.arange(n) // c  # chain i belongs to run i // c
    state = SAMSState(*path.start(ladder.states), ladder.labels.copy())
    half = n_moves // 2
    for sweep in range(1, n_moves * sweeps_per_move + 1):
        # 1. X_t ~ ψ_{L_{t-1}}: sweeps_per_move sweeps (activations carried, refreshed every FULL_EVERY sweeps)
        state = markov_move(rng, path, state, coefs, refresh=sweep % FULL_EVERY == 0)
        bar.advance()
        if sweep % sweeps_per_move:
            continue
        t = sweep // sweeps_per_move
        # 2. local jump of the label, and the observation
        state, info = label_jump(rng, path, state, coefs, zeta[run], rao_blackwell)
        recorder.accepted += info.n_accepted
        recorder.proposed += n
        # 3. each run's observation (the mean over its chains) and the update
        labels = state.labels
        obs = info.observation.reshape(n_runs, c, m).mean(axis=1)
        update_zeta(zeta, gains(t, labels.reshape(n_runs, c)), obs, gain)
        recorder.t_done, recorder.sweeps_done = t, sweep
        stage2 = gains.burn_in_end >= 0 if gain == "tan" else np.ones(n_runs, dtype=bool)
        np.add.at(recorder.visits, (run[stage2[run]], labels[stage2[run]]), 1.0)
        if t == half:
            recorder.zeta_half = zeta.copy()

"""The rounds of Rao-Blackwellized tempered sampling: the sampler at fixed guesses, and the update between rounds.

:func:`rts_round` is one round of Carlson et al.'s (2016) sampler on the joint ``(x, β)``
with the guesses ``Ẑ`` fixed: sweeps of ``x`` at each chain's β, then a Gibbs draw of β over the
whole ladder, accumulating the Rao-Blackwellized averages ``ĉ``. :func:`update_guesses` is the
adaptation between rounds, :func:`run_rounds` runs them in turn and :class:`RoundRecorder` keeps
what each round measured. :mod:`~pymc_rbm.estimators.rts` turns the record into the estimate.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from pymc_rbm.estimators.ladder import Ladder, count_moves
from pymc_rbm.estimators.path import AnnealingPath
from pymc_rbm.kernels.activations import FULL_EVERY

__all__ = ["rts_round", "update_guesses", "RoundRecorder", "run_rounds"]


def _categorical(rng: np.random.Generator, prob: np.ndarray) -> np.ndarray:
    """One draw per row of a (n, K) matrix of probabilities (rows sum to 1)."""
    cdf = np.cumsum(prob, axis=1)
    u = rng.random((prob.shape[0], 1)) * cdf[:, -1:]
    return np.minimum((cdf < u).sum(axis=1), prob.shape[1] - 1)


def rts_round(
    path: AnnealingPath, rng, v, k, coefs, log_zhat, n_sweeps: int, bar=None, callback=None, sweeps_per_move: int = 1
):
    """One round of RTS with fixed guesses ``log_zhat`` (stochastic).

    Parameters
    ----------
    path : AnnealingPath
    rng : numpy.random.Generator
    v : ndarray of shape (n_chains, n_visible)
        Current states.
    k : ndarray of int of shape (n_chains,)
        Current temperature index of each chain.
    coefs : ndarray of shape (K, 1 + M)
        Path coefficients of the ladder.
    log_zhat : ndarray of shape (K,)
        Current guesses ``log Ẑ_k``.
    n_sweeps : int
        Sweeps of ``x``; β is drawn after every ``sweeps_per_move`` of them
        (``n_sweeps // sweeps_per_move`` draws, at least one).
    bar : optional progress bar
    callback : callable, optional
        Called after every draw of β as ``callback(t, k_swept, log_f)``: the
        sweep (1-based), the temperature index each chain's ``x`` was
        swept at (n_chains,) and ``log f_k(x_t)`` at every rung
        (n_chains, K). For diagnostics, such as storing the draws for a
        histogram analysis; it must not modify its arguments.
    sweeps_per_move : int, default 1
        Sweeps of ``x`` at fixed β between draws of β.

    Returns
    -------
    v, k : the final states and temperatures
    c_chain : ndarray of shape (n_chains, K)
        Per-chain Rao-Blackwellized averages of ``q(β_k | x_t)`` over the draws.
    visits : ndarray of int of shape (K,)
        How often each temperature was drawn, over all chains.
    """
    v, a, vb = path.start(v)
    n, K = v.shape[0], coefs.shape[0]
    c_sum = np.zeros((n, K))
    visits = np.zeros(K, dtype=np.int64)
    n_draws = count_moves(n_sweeps, sweeps_per_move)
    for t in range(1, n_draws * sweeps_per_move + 1):
        # x | β leaves q(x | β) invariant; activations carried, refreshed every FULL_EVERY sweeps
        v, a, vb = path.sweep(rng, v, a, coefs[k], refresh=t % FULL_EVERY == 0)
        if bar is not None:
            bar.advance()
        if t % sweeps_per_move:
            continue
        log_f = path.log_f_ladder(a, vb, coefs)
        if callback is not None:
            callback(t, k, log_f)
        log_q = log_f - log_zhat  # log f_k(x) r_k / Ẑ_k, r uniform
        log_q -= logsumexp(log_q, axis=1, keepdims=True)
        q = np.exp(log_q)
        c_sum += q
        k = _categorical(rng, q)  # β | x, a Gibbs update over the whole ladder
        visits += np.bincount(k, minlength=K)
    return v, k, c_sum / n_draws, visits


class RoundRecorder:
    """What the rounds of RTS measured, round by round (Pigeons' recorder).

    A round counts once :meth:`record` has stored it whole, so that a run
    stopped by Ctrl-C keeps the rounds that ended.

    Attributes
    ----------
    estimates, stderrs : list of float
        Each round's estimate ``log Ẑ_K + log ĉ_K - log ĉ_1`` and its delta-method standard error.
    occupancy : list of ndarray of shape (K,)
        Fraction of each round's draws of β at each temperature.
    c_hat, guesses, log_zhat : ndarray of shape (K,) or None
        Of the last round: its Rao-Blackwellized averages, the guesses it ran
        with, and the guesses after its update.
    """

    def __init__(self):
        self.estimates: list[float] = []
        self.stderrs: list[float] = []
        self.occupancy: list[np.ndarray] = []
        self.c_hat = self.guesses = self.log_zhat = None

    def __len__(self) -> int:
        return len(self.estimates)

    def record(self, *, guesses, log_zhat, c_hat, estimate: float, stderr: float, occupancy) -> None:
        """Store one round."""
        self.guesses, self.log_zhat, self.c_hat = guesses, log_zhat, c_hat
        self.occupancy.append(occupancy)
        self.stderrs.append(stderr)
        self.estimates.append(estimate)


def update_guesses(log_zhat: np.ndarray, c_chain: np.ndarray, round_index: int, update: str):
    """The adaptation after a round: new guesses ``log Ẑ`` from its Rao-Blackwellized averages.

    Parameters
    ----------
    log_zhat : ndarray of shape (K,)
        The guesses the round ran with.
    c_chain : ndarray of shape (n_chains, K)
        The round's per-chain averages of ``q(β_k | x_t)`` (:func:`rts_round`).
    round_index : int
        The round, from 0.
    update : {"mean", "replace"}

    Returns
    -------
    estimate : ndarray of shape (K,)
        ``log Ẑ_k + log ĉ_k - log ĉ_1``, the round's estimate of every ``log Z_k``.
    log_zhat : ndarray of shape (K,)
        The next round's guesses: the estimate (``"replace"``, Carlson et al.'s update) or the mean of
        the start and every round's estimate so far (``"mean"``).
    c_hat : ndarray of shape (K,)
        The mean of ``c_chain`` over chains.
    stderr : float
        Delta-method standard error over chains of ``log ĉ_K - log ĉ_1``.
    """
    c_hat = c_chain.mean(axis=0)
    with np.errstate(divide="ignore"):
        log_c = np.log(c_hat)
    if not np.all(np.isfinite(log_c)):  # cannot happen in exact arithmetic: q(β|x) > 0
        raise FloatingPointError("a Rao-Blackwellized average underflowed to 0; use a finer ladder")
    estimate = log_zhat + log_c - log_c[0]
    new = log_zhat + (estimate - log_zhat) * (1.0 if update == "replace" else 1.0 / (round_index + 2))
    rel = c_chain[:, -1] / c_hat[-1] - c_chain[:, 0] / c_hat[0]
    return estimate, new, c_hat, float(rel.std(ddof=1) / np.sqrt(c_chain.shape[0]))


def run_rounds(
    path: AnnealingPath,
    rng,
    ladder: Ladder,
    log_z_init: np.ndarray,
    recorder: RoundRecorder,
    *,
    n_rounds: int,
    n_sweeps: int,
    sweeps_per_move: int,
    update: str,
    bar=None,
    callback=None,
) -> RoundRecorder:
    """The rounds of RTS (stochastic): each samples with fixed guesses (:func:`rts_round`), then adapts them.

    Parameters
    ----------
    path : AnnealingPath
    rng : numpy.random.Generator
    ladder : Ladder
        The temperatures, with the chains' starting states and labels.
    log_z_init : ndarray of shape (K,)
        The first round's guesses ``log Ẑ``.
    recorder : RoundRecorder
        Every round is stored in it as it ends (:meth:`RoundRecorder.record`).
    n_rounds, n_sweeps, sweeps_per_move : int
    update : {"mean", "replace"}
        :func:`update_guesses`.
    bar : optional progress bar
    callback : callable, optional
        Called as ``callback(round, t, k_swept, log_f)`` after every draw of β.

    Returns
    -------
    RoundRecorder
    """
    v, k = ladder.states, ladder.labels
    log_zhat = log_z_init.copy()
    for r in range(n_rounds):
        hook = None if callback is None else (lambda t, k_swept, log_f, r=r: callback(r, t, k_swept, log_f))
        v, k, c_chain, visits = rts_round(path, rng, v, k, ladder.coefs, log_zhat, n_sweeps, bar, hook, sweeps_per_move)
        estimate, new, c_hat, stderr = update_guesses(log_zhat, c_chain, r, update)
        recorder.record(
            guesses=log_zhat,
            log_zhat=new,
            c_hat=c_hat,
            estimate=float(estimate[-1]),
            stderr=stderr,
            occupancy=visits / visits.sum(),
        )
        log_zhat = new
    return recorder

"""log Z from a tuned replica-exchange ladder: Bennett's ratio between neighbouring rungs (stochastic).

The ladder is the one :class:`~pymc_rbm.step_methods.ReplicaExchange` runs: replicas of the RBM at
inverse temperatures ``0 = β_0 < ... < β_{K-1} = 1``, replica ``r`` targeting
``p_r(v, h) ∝ exp(-β_r E(v, h))``, each swept by the compiled round of
:func:`~pymc_rbm.kernels.replica_rounds.tempered_round` and swapped with its neighbours by the
non-reversible scheme of Syed, Bouchard-Côté, Deligiannidis & Doucet (2022). At ``β = 0`` the target
is uniform on both layers, so ``log Z_0 = (n_visible + n_hidden) log 2`` is known and covers every
mode; each neighbouring pair's ratio ``Z_{r+1} / Z_r`` comes from the states the run leaves at both
rungs, by Bennett's acceptance ratio on the log weights ``∓(β_{r+1} - β_r) E`` (the stepping stones
of Pigeons, two-sided). Their sum is ``log Z``.

The evidence that the modes were reached is the ladder's round trips: a replica that went from the
uniform rung to the model and back carried what it found at the top down to where every mode is
equally likely. A run whose chains make no round trips says so with a warning; its estimate then
rests on the modes each chain found on its own. The standard error is the spread of the independent
chains' estimates (each chain a ladder of its own), so it includes the autocorrelation of the rounds
and chains that disagree about which modes carry the mass.
"""

from __future__ import annotations

import time
import warnings
from typing import NamedTuple

import numpy as np

from pymc_rbm._runtime import Progress, StopOnInterrupt, single_blas_thread
from pymc_rbm.estimators.bar import bennett_log_ratio
from pymc_rbm.estimates import LogPartitionEstimate
from pymc_rbm.kernels import LayerRule, replica_rounds
from pymc_rbm.kernels.tempering import communication_barrier, equalized_ladder, rungs_for_barrier
from pymc_rbm.layers import BERNOULLI
from pymc_rbm.params import RBMParams
from pymc_rbm.validation import check_positive_int

__all__ = ["LadderRun", "log_partition_ladder", "ladder_log_ratios", "run_ladder"]

#: Rounds of the tuning phases, doubling as in Pigeons: the ladder is spaced anew after each.
TUNING_ROUNDS = (64, 128, 256, 512)

#: Rungs of the first, uniform ladder that the tuning measures.
INITIAL_RUNGS = 16


class LadderRun(NamedTuple):
    """What a replica-exchange run records for the stepping stones.

    Attributes
    ----------
    betas : ndarray of shape (K,)
        The ladder, ``β_0 = 0`` to ``β_{K-1} = 1``.
    energies : ndarray of shape (n_rounds, K, n_chains)
        ``E(v, h)`` of the state at each rung after its sweeps in each round: draws of ``p_r``.
    round_trips : ndarray of int64 of shape (n_chains,)
        Replicas of each chain back at ``β = 0`` after reaching ``β = 1``, counted over the recorded rounds.
    swap_acceptance : ndarray of shape (K - 1,)
        Mean acceptance probability of each pair's swaps over the recorded rounds.
    barrier : float
        The communication barrier ``Λ`` measured on the final ladder (Syed et al. 2022).
    """

    betas: np.ndarray
    energies: np.ndarray
    round_trips: np.ndarray
    swap_acceptance: np.ndarray
    barrier: float


class _Replicas:
    """The mutable arrays of one ladder run: states, labels and round-trip trackers."""

    def __init__(self, rng: np.random.Generator, params: RBMParams, n_rungs: int, n_chains: int):
        shape = (n_rungs, n_chains)
        self.v = (rng.random(shape + (params.n_visible,)) < 0.5).astype(np.float64)
        self.h = (rng.random(shape + (params.n_hidden,)) < 0.5).astype(np.float64)
        self.reset_labels()

    def reset_labels(self) -> None:
        k, n = self.v.shape[:2]
        self.labels = np.repeat(np.arange(k, dtype=np.int64)[:, None], n, axis=1)
        self.last_end = np.zeros((k, n), dtype=np.int8)
        self.went_up = np.zeros((k, n), dtype=np.bool_)

    def count_round_trips(self) -> np.ndarray:
        """Round trips completed now in each chain (the rule of
        :func:`~pymc_rbm.kernels.replica_rounds.count_round_trips`, chain by chain); updates the trackers."""
        chains = np.arange(self.labels.shape[1])
        top, bottom = self.labels[-1], self.labels[0]
        self.went_up[top, chains] |= self.last_end[top, chains] == 1
        self.last_end[top, chains] = 2
        done = (self.last_end[bottom, chains] == 2) & self.went_up[bottom, chains]
        self.went_up[bottom, chains] &= ~done
        self.last_end[bottom, chains] = 1
        return done.astype(np.int64)

    def respace(self, old: np.ndarray, new: np.ndarray) -> None:
        """Move to the ladder ``new``: each new rung takes the states of the old rung nearest in ``β``."""
        nearest = np.abs(new[:, None] - old[None, :]).argmin(axis=1)
        self.v = np.ascontiguousarray(self.v[nearest])
        self.h = np.ascontiguousarray(self.h[nearest])
        self.reset_labels()


def _rounds(rng, reps: _Replicas, kernel, betas, n_rounds: int, parity0: int, bar, record: bool):
    """``n_rounds`` rounds on ``betas``; the post-sweep energies when ``record``, the swap means, round trips."""
    k, n = reps.v.shape[:2]
    swap_sum, swap_n = np.zeros(max(k - 1, 1)), np.zeros(max(k - 1, 1))
    energies = np.empty((n_rounds, k, n)) if record else None
    scratch = np.empty((2, k, n))
    trips = np.zeros(n, dtype=np.int64)
    p = kernel.params
    model, rule = (p.W, kernel.W_T, p.vbias, p.hbias), LayerRule(kernel.alpha)
    for t in range(n_rounds):
        replica_rounds.tempered_round(rng, reps.v, reps.h, model, betas, k,
                                      ((parity0 + t) % 2, reps.labels, swap_sum, swap_n), rule=rule, energies=scratch)
        if record:
            energies[t] = scratch[1]
        trips += reps.count_round_trips()
        bar.advance()
    return energies, swap_sum / np.maximum(swap_n, 1.0), trips


class _Kernel(NamedTuple):
    params: RBMParams
    W_T: np.ndarray
    alpha: float


def run_ladder(params: RBMParams, *, n_chains: int = 16, n_rounds: int = 4096, max_rungs: int = 64,
               alpha: float = 1.0, rng=None, bar=None) -> LadderRun:
    """Tune a replica-exchange ladder from the uniform reference to ``params``, then record ``n_rounds`` rounds.

    Tuning runs the rounds of :data:`TUNING_ROUNDS` from a uniform ladder of :data:`INITIAL_RUNGS`
    rungs; after each, the ladder is spaced anew at equal communication barrier
    (:func:`~pymc_rbm.kernels.tempering.equalized_ladder`) with the rungs its barrier asks for
    (:func:`~pymc_rbm.kernels.tempering.rungs_for_barrier`). The final ladder is then kept fixed.

    Parameters
    ----------
    params : RBMParams
        A binary RBM.
    n_chains : int, default 16
        Independent ladders, run side by side.
    n_rounds : int, default 4096
        Recorded rounds after tuning; each sweeps every rung once and swaps one parity of pairs.
    max_rungs : int, default 64
    alpha : float, default 1.0
        The explorers' visible update: flip-the-state (1.0), Gibbs (0.0) or their mixture.
    rng : numpy.random.Generator or seed, optional
    bar : Progress, optional

    Returns
    -------
    LadderRun
    """
    rng = np.random.default_rng(rng)
    if bar is None:
        bar = Progress(0, "", False)
    W = np.ascontiguousarray(params.W, dtype=np.float64)
    work = RBMParams(W, np.asarray(params.vbias, dtype=np.float64), np.asarray(params.hbias, dtype=np.float64))
    kernel = _Kernel(work, np.ascontiguousarray(W.T), float(alpha))
    betas = np.linspace(0.0, 1.0, min(INITIAL_RUNGS, max_rungs))
    reps = _Replicas(rng, work, betas.size, n_chains)
    parity = 0
    barrier = 0.0
    for n in TUNING_ROUNDS:
        _, acceptance, _ = _rounds(rng, reps, kernel, betas, n, parity, bar, record=False)
        parity = (parity + n) % 2
        rejection = 1.0 - acceptance[: betas.size - 1]
        new = equalized_ladder(betas, rejection, rungs_for_barrier(_barrier(betas, rejection), max_rungs),
                               saturating=True)
        barrier = _barrier(betas, rejection)
        reps.respace(betas, new)
        betas = new
    energies, acceptance, trips = _rounds(rng, reps, kernel, betas, n_rounds, parity, bar, record=True)
    acceptance = acceptance[: betas.size - 1]
    return LadderRun(betas, energies, trips, acceptance, _barrier(betas, 1.0 - acceptance))


def _barrier(betas, rejection) -> float:
    return float(communication_barrier(betas, np.clip(rejection, 0.0, 1.0), saturating=True)[-1])


def ladder_log_ratios(betas, energies) -> np.ndarray:
    """Bennett's ``log Z_{r+1} / Z_r`` of every neighbouring pair of rungs from the states recorded there.

    Parameters
    ----------
    betas : array_like of shape (K,)
    energies : array_like of shape (n_draws, K)
        Energies ``E(v, h)`` of draws at each rung.

    Returns
    -------
    ndarray of shape (K - 1,)
    """
    betas = np.asarray(betas, dtype=np.float64)
    e = np.asarray(energies, dtype=np.float64)
    d = np.diff(betas)
    return np.array([bennett_log_ratio(-d[r] * e[:, r], d[r] * e[:, r + 1]) for r in range(d.size)])


def log_partition_ladder(
    params: RBMParams,
    *,
    n_chains: int = 16,
    n_rounds: int = 4096,
    max_rungs: int = 64,
    operator: str | float = "flip",
    rng=None,
    progress: bool = False,
) -> LogPartitionEstimate:
    """``log Z`` by stepping stones along a tuned replica-exchange ladder from the uniform reference (stochastic).

    See the module docstring for the method. Of the stochastic estimators this is the one that
    does not start in one mode: its reference, uniform on both layers, holds them all, and the
    round trips of its replicas (``diagnostics["round_trips"]``) show whether they were carried to
    the model and back. A chain without any round trip gets a warning.

    Parameters
    ----------
    params : RBMParams
        A binary RBM (0/1 units on both layers).
    n_chains : int, default 16
        Independent ladders; the standard error is the spread of their estimates (at least 2).
    n_rounds : int, default 4096
        Rounds recorded after the tuning phases (960 rounds in all).
    max_rungs : int, default 64
        The most rungs the ladder may have; tuning asks for ``⌈2Λ⌉ + 1``.
    operator : {"flip", "gibbs"} or float, default "flip"
        The explorers' visible update: flip-the-state, Gibbs, or the mixture ``α`` of the two.
    rng : numpy.random.Generator or seed, optional
    progress : bool, default False

    Returns
    -------
    LogPartitionEstimate
        ``stderr`` from the chains' spread. ``diagnostics``: ``betas``, ``round_trips`` (per chain),
        ``predicted_round_trips`` (``n_rounds / (2 + 2Λ)`` a chain, Syed et al. 2022),
        ``swap_acceptance``, ``barrier``, ``chain_log_z`` (each chain's estimate), ``forward``
        and ``reverse`` (the one-sided stepping stones), ``n_rounds``, ``n_chains``, ``seconds``.

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm import RBMParams
    >>> from pymc_rbm.estimators import log_partition_exact
    >>> p = RBMParams(np.full((12, 8), 1.5), np.full(12, -6.0), np.full(8, -9.0))  # two modes
    >>> est = log_partition_ladder(p, n_rounds=1024, rng=0)
    >>> bool(abs(est.log_z - log_partition_exact(p).log_z) < 5 * est.stderr + 0.05)
    True
    """
    t0 = time.perf_counter()
    if not isinstance(params, RBMParams) or params.visible != BERNOULLI or params.hidden != BERNOULLI:
        raise TypeError(
            f"the ladder estimator takes a binary RBMParams, got {type(params).__name__}; for other layer types "
            'use method="bar"'
        )
    n_chains = check_positive_int(n_chains, "n_chains", 2)
    n_rounds = check_positive_int(n_rounds, "n_rounds", 2)
    max_rungs = check_positive_int(max_rungs, "max_rungs", 2)
    alpha = _alpha(operator)
    rng = np.random.default_rng(rng)
    with StopOnInterrupt() as guard, single_blas_thread():
        with Progress(sum(TUNING_ROUNDS) + n_rounds, "ladder", progress) as bar:
            run = run_ladder(params, n_chains=n_chains, n_rounds=n_rounds, max_rungs=max_rungs, alpha=alpha,
                             rng=rng, bar=bar)
    if guard.interrupted:
        from pymc_rbm.estimators.annealing import interrupted_estimate

        return interrupted_estimate("ladder", t0, n_chains)
    log_z0 = (params.n_visible + params.n_hidden) * np.log(2.0)
    e = run.energies
    log_z = log_z0 + float(ladder_log_ratios(run.betas, e.transpose(0, 2, 1).reshape(-1, e.shape[1])).sum())
    chain_log_z = np.array([log_z0 + ladder_log_ratios(run.betas, e[:, :, b]).sum() for b in range(n_chains)])
    stderr = float(chain_log_z.std(ddof=1) / np.sqrt(n_chains))
    d = np.diff(run.betas)
    forward = log_z0 + float(sum(_log_mean_exp(-d[r] * e[:, r].ravel()) for r in range(d.size)))
    reverse = log_z0 - float(sum(_log_mean_exp(d[r] * e[:, r + 1].ravel()) for r in range(d.size)))
    predicted = n_rounds / (2.0 + 2.0 * run.barrier)
    diagnostics = {
        "betas": run.betas,
        "round_trips": run.round_trips,
        "predicted_round_trips": predicted,
        "swap_acceptance": run.swap_acceptance,
        "barrier": run.barrier,
        "chain_log_z": chain_log_z,
        "forward": forward,
        "reverse": reverse,
        "log_z_reference": log_z0,
        "n_rounds": n_rounds,
        "n_chains": n_chains,
        "seconds": time.perf_counter() - t0,
    }
    idle = int((run.round_trips == 0).sum())
    if idle:
        diagnostics["warning"] = (
            f"ladder: {idle} of {n_chains} chains made no round trip between the uniform reference and the model in "
            f"{n_rounds} rounds (about {predicted:.0f} a chain expected from the barrier {run.barrier:.1f}); the "
            "estimate may have missed modes and its standard error cannot show it: raise n_rounds or max_rungs"
        )
        warnings.warn(diagnostics["warning"], RuntimeWarning, stacklevel=2)
    return LogPartitionEstimate(log_z=log_z, method="ladder", stderr=stderr,
                                interval=(log_z - 3 * stderr, log_z + 3 * stderr), diagnostics=diagnostics,
                                fingerprint=params.fingerprint())


def _log_mean_exp(x: np.ndarray) -> float:
    m = float(x.max())
    return m + float(np.log(np.mean(np.exp(x - m))))


def _alpha(operator) -> float:
    if isinstance(operator, str):
        table = {"flip": 1.0, "gibbs": 0.0}
        if operator not in table:
            raise ValueError(f'operator must be "flip", "gibbs" or a number in [0, 1], got {operator!r}')
        return table[operator]
    a = float(operator)
    if not 0.0 <= a <= 1.0:
        raise ValueError(f"operator must lie in [0, 1], got {operator!r}")
    return a

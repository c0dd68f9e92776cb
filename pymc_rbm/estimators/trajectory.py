"""``log Z`` along a ladder of models (a training trajectory) by Bennett's acceptance ratio between neighbours.

The replicas of a model ladder (:mod:`pymc_rbm.kernels.model_ladder`) are draws
from every model ``p_0, ..., p_{K-1}`` at once. Between neighbours ``a`` and
``b = a + 1`` the free energies of each replica's state under both models give
the two samples of Bennett's (1976) acceptance ratio: for ``x ~ p_a`` the
forward log weights ``F_a(x) - F_b(x)`` and for ``y ~ p_b`` the reverse ones
``F_b(y) - F_a(y)``, combined by
:func:`~pymc_rbm.estimators.bar.bennett_log_ratio` into ``log Z_b - log Z_a``.
Summed along the ladder they carry a known ``log Z_0`` to the last model:

    log Z_{K-1} = log Z_0 + Σ_a (log Z_{a+1} - log Z_a),

and every intermediate ``log Z_a`` comes with it, so the log-likelihood of
the data along training comes from the same run (Béreux, Decelle, Furtlehner
& Seoane 2025 estimate it this way along their trajectories). ``log Z_0`` is
exact where it is cheap: a model without couplings (``W = 0``; e.g. an
independent base-rate model put first) has ``Σ softplus(vbias) + Σ
softplus(hbias)``, a model with a small enough layer is enumerated
(:func:`~pymc_rbm.enumeration.log_partition_exact`); else pass it.

The standard error is that of batch means: the rounds are cut into
``n_batches`` consecutive blocks, each giving its own estimate; their spread
over ``sqrt(n_batches)`` accounts for the correlation of successive rounds.
"""

from __future__ import annotations

import numpy as np

from pymc_rbm.energy import hidden_activation
from pymc_rbm.estimators.bar import bennett_log_ratio
from pymc_rbm.enumeration import EnumerationTooLarge, log_partition_exact
from pymc_rbm.estimates import LogPartitionEstimate
from pymc_rbm.kernels.model_ladder import init_model_ladder, model_ladder_round, model_rungs, rung_free_energies
from pymc_rbm.kernels.operators import operator_rule
from pymc_rbm.params import RBMParams
from pymc_rbm.primitives import softplus
from pymc_rbm.validation import check_binary, check_positive_int, check_real

__all__ = ["log_partition_trajectory", "neighbour_free_energies"]


def neighbour_free_energies(v, models, rung: int) -> np.ndarray:
    """Free energies of draws of model ``rung`` under it and its two neighbours.

    Parameters
    ----------
    v : ndarray of shape (..., n_visible)
        Draws of model ``rung``.
    models : ModelRungs or sequence of RBMParams
    rung : int

    Returns
    -------
    ndarray of shape (3, ...)
        ``F_{rung-1}(v)``, ``F_rung(v)``, ``F_{rung+1}(v)``; NaN past the ends of the ladder.
    """
    rungs = model_rungs(models)
    out = np.full((3, *v.shape[:-1]), np.nan)
    for i, r in enumerate((rung - 1, rung, rung + 1)):
        if 0 <= r < rungs.n_rungs:
            p = rungs.params[r]
            out[i] = rung_free_energies(v, hidden_activation(v, p), p)
    return out


def _first_log_z(first, log_z_first) -> float:
    if log_z_first is not None:
        return check_real(float(log_z_first), "log_z_first")
    if not np.any(first.W):
        return float(softplus(first.vbias).sum() + softplus(first.hbias).sum())
    try:
        return log_partition_exact(RBMParams(first.W, first.vbias, first.hbias)).log_z
    except EnumerationTooLarge as err:
        raise ValueError(
            f"log Z of the first model is needed and cannot be enumerated ({err}); pass log_z_first=, or put an "
            "independent model (W = 0, e.g. the base rate of the data) first in the ladder"
        ) from None


def log_partition_trajectory(
    models,
    *,
    samples=None,
    log_z_first=None,
    n_chains: int = 10,
    n_rounds: int = 1000,
    burn_in: int | None = None,
    operator="flip",
    n_batches: int = 10,
    rng=None,
) -> LogPartitionEstimate:
    """``log Z`` of the last model of a ladder by BAR between neighbouring models (stochastic).

    Parameters
    ----------
    models : Trajectory or sequence of RBMParams
        At least two binary RBMs on the same visible units (any numbers of
        hidden units), ``fit(...).trajectory`` for one; the last is the model
        whose ``log Z`` is returned.
    samples : sequence of array_like of shape (n_draws_r, n_visible), optional
        Draws of every model (in the order of the draws, for the batch means).
        By default a model-ladder run provides them: ``n_chains`` ladders of
        flip-the-state sweeps and swaps (:func:`~pymc_rbm.kernels.model_ladder.model_ladder_round`),
        ``burn_in`` rounds (default a tenth of ``n_rounds``) and then
        ``n_rounds`` recorded rounds.
    log_z_first : float, optional
        ``log Z`` of the first model; by default exact (module docstring).
    n_chains, n_rounds, burn_in : int
    operator : {"flip", "gibbs"} or float, default "flip"
        The sweep of every replica.
    n_batches : int, default 10
        Blocks of the batch-means standard error.
    rng : numpy.random.Generator or seed, optional

    Returns
    -------
    LogPartitionEstimate
        ``method="trajectory_bar"``; ``diagnostics``: ``log_z_path`` (every
        model's ``log Z``, shape (n_models,)), ``pair_log_ratio`` (the
        neighbours' ``log Z_{a+1} - log Z_a``), ``log_z_first``, and from a
        run of the ladder ``swap_accept`` (per pair) and ``round_trips``.

    Raises
    ------
    ValueError
        When ``log Z`` of the first model is not given and cannot be had exactly.

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm import RBMParams
    >>> from pymc_rbm.estimators import log_partition_exact
    >>> from pymc_rbm.estimators.trajectory import log_partition_trajectory
    >>> target = RBMParams.random(8, 4, scale=1.0, rng=0)
    >>> models = [RBMParams(t * target.W, t * target.vbias, t * target.hbias) for t in np.linspace(0, 1, 6)]
    >>> est = log_partition_trajectory(models, n_rounds=400, rng=1)
    >>> abs(est.log_z - log_partition_exact(target).log_z) < 4 * est.stderr + 0.05
    True
    """
    rungs = model_rungs(models)
    k = rungs.n_rungs
    n_batches = check_positive_int(n_batches, "n_batches", 2)
    rng = np.random.default_rng(rng)
    diagnostics = {}
    if samples is None:
        n_chains = check_positive_int(n_chains, "n_chains")
        n_rounds = check_positive_int(n_rounds, "n_rounds", n_batches)
        burn_in = n_rounds // 10 if burn_in is None else check_positive_int(burn_in, "burn_in", 0)
        rule = operator_rule(operator)
        state = init_model_ladder(rng, (rng.random((n_chains, rungs.n_visible)) < 0.5), rungs)
        f = np.empty((k, 3, n_rounds, n_chains))
        swap_sum, swap_n = np.zeros(k - 1), np.zeros(k - 1)
        for t in range(burn_in + n_rounds):
            state, info = model_ladder_round(rng, state, rungs, rule=rule)
            if t < burn_in:
                continue
            tried = info.swap.attempted
            swap_sum[tried] += info.swap_accept[tried].sum(axis=1)
            swap_n[tried] += n_chains
            for r in range(k):
                f[r, :, t - burn_in] = neighbour_free_energies(state.v[r], rungs, r)
        f = f.reshape(k, 3, -1)  # draws in the order of the rounds
        diagnostics.update(swap_accept=swap_sum / np.maximum(swap_n, 1), round_trips=int(state.round_trips))
    else:
        if len(samples) != k:
            raise ValueError(f"samples must hold draws of each of the {k} models, got {len(samples)}")
        xs = [check_binary(s, rungs.n_visible, name=f"samples[{r}]", dtype=np.float64).reshape(-1, rungs.n_visible)
              for r, s in enumerate(samples)]
        if min(x.shape[0] for x in xs) < n_batches:
            raise ValueError(f"every model needs at least n_batches = {n_batches} draws")
        f = [neighbour_free_energies(x, rungs, r) for r, x in enumerate(xs)]
    log_z0 = _first_log_z(rungs.params[0], log_z_first)

    def ratios(blocks=None, b=0):
        out = np.empty(k - 1)
        for a in range(k - 1):
            fwd = f[a][1] - f[a][2]  # x ~ p_a: log f_{a+1}(x) - log f_a(x)
            rev = f[a + 1][1] - f[a + 1][0]  # y ~ p_{a+1}: log f_a(y) - log f_{a+1}(y)
            if blocks is not None:
                fwd, rev = np.array_split(fwd, blocks)[b], np.array_split(rev, blocks)[b]
            out[a] = bennett_log_ratio(fwd, rev)
        return out

    pair = ratios()
    batch_sums = np.array([ratios(n_batches, b).sum() for b in range(n_batches)])
    stderr = float(batch_sums.std(ddof=1) / np.sqrt(n_batches))
    path = log_z0 + np.concatenate([[0.0], np.cumsum(pair)])
    last = getattr(models, "params", models)[-1]
    diagnostics.update(log_z_path=path, pair_log_ratio=pair, log_z_first=log_z0)
    return LogPartitionEstimate(
        log_z=float(path[-1]),
        method="trajectory_bar",
        stderr=stderr,
        diagnostics=diagnostics,
        fingerprint=last.fingerprint() if hasattr(last, "fingerprint") else None,
    )

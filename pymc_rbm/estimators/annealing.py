"""One annealing run along a path, the engine of AIS, reverse AIS and BAR, and the summary of its weights.

:func:`anneal` moves a batch of chains along a β schedule of an
:class:`~pymc_rbm.estimators.path.AnnealingPath`, accumulating their log importance weights, and
:func:`anneal_in_threads` runs it on fixed blocks of chains, each with its own generator, so the
result depends on the seed only. :func:`weights_summary` turns log weights into an estimate with its
standard error, and :func:`interrupted_estimate` is what a run stopped by Ctrl-C returns.
"""

from __future__ import annotations

import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np

from pymc_rbm._runtime import Progress, chain_blocks, single_blas_thread
from pymc_rbm.estimators.path import AnnealingPath, log_normaliser_sum_, softplus_sum_
from pymc_rbm.estimates import LogPartitionEstimate
from pymc_rbm.kernels.activations import FULL_EVERY
from pymc_rbm.kernels.state import RBMState, sigmoid_
from pymc_rbm.kernels.sweep import sweep
from pymc_rbm.layers import TwoState

__all__ = ["TWO_CHAINS", "interrupted_estimate", "weights_summary", "Annealed", "anneal", "anneal_in_threads"]

#: What an error message adds when fewer than two chains are asked for.
TWO_CHAINS = " (the standard error comes from the spread of the chains' weights)"


def interrupted_estimate(method: str, t0: float, n_chains: int) -> LogPartitionEstimate:
    """The result of an AIS run stopped by Ctrl-C: no estimate, with a warning that says why."""
    seconds = time.perf_counter() - t0
    warnings.warn(
        f"{method} was interrupted (Ctrl-C) after {seconds:.1f} s, before its chains reached the end of the "
        "path: their weights estimate the partition function of an intermediate model, not this one's, so "
        "there is no estimate (log_z is NaN; diagnostics['interrupted'] is True). Run fewer steps "
        "(n_steps=..., schedule=...) for a quicker estimate",
        RuntimeWarning,
        stacklevel=3,
    )
    return LogPartitionEstimate(
        log_z=float("nan"),
        method=method,
        stderr=float("nan"),
        diagnostics={"interrupted": True, "seconds": seconds, "n_chains": n_chains},
    )



def weights_summary(log_w: np.ndarray, log_z0: float, *, sign: float = 1.0):
    """Estimate, delta-method stderr, ±3σ interval and ESS from log importance weights.

    Parameters
    ----------
    log_w : ndarray of shape (n_chains,)
        Log importance weights, float64.
    log_z0 : float
        Log partition function of the base distribution.
    sign : {1.0, -1.0}, default 1.0
        1: the weights estimate ``Z / Z_0`` (AIS); -1: ``Z_0 / Z`` (reverse AIS).

    Returns
    -------
    log_z : float
    stderr : float
        Delta-method standard error of ``log Z``.
    interval : tuple of float
        The ±3σ interval of the mean weight, mapped to ``log Z``.
    ess : float
        Effective sample size of the weights.
    """
    n = log_w.size
    shift = float(log_w.max())
    w = np.exp(log_w - shift)
    mean = float(w.mean())
    sd = float(w.std(ddof=1)) if n > 1 else np.inf
    se_rel = sd / (mean * np.sqrt(n))
    log_r = np.log(mean) + shift
    hi = np.log(mean + 3.0 * sd / np.sqrt(n)) + shift
    lo_arg = mean - 3.0 * sd / np.sqrt(n)
    lo = np.log(lo_arg) + shift if lo_arg > 0.0 else -np.inf
    if sign > 0:
        log_z, interval = log_z0 + log_r, (log_z0 + lo, log_z0 + hi)
    else:
        log_z, interval = log_z0 - log_r, (log_z0 - hi, log_z0 - lo)
    ess = float(w.sum() ** 2 / (w**2).sum())
    return float(log_z), float(se_rel), (float(interval[0]), float(interval[1])), ess



# -------------------------------------------------------------------- core
class Annealed(NamedTuple):
    """What one annealing run returns (:func:`anneal`).

    Attributes
    ----------
    log_w : ndarray of float64 of shape (n,)
        Log weights.
    v : ndarray of shape (n, n_visible)
        Final states.
    trace : ndarray of shape (len(record), n)
        Partial log weights after the recorded steps: where along the path
        the variance of the weights is added.
    states : ndarray of shape (len(record), n, n_visible)
        The states after the recorded steps' sweeps (with ``keep_states``;
        else no rows): with the partial weights, weighted draws of ``p_{β_k}``.
    """

    log_w: np.ndarray
    v: np.ndarray
    trace: np.ndarray
    states: np.ndarray


def anneal(
    path: AnnealingPath, rng, v0, betas: np.ndarray, bar: Progress, record=(), stop=None, keep_states: bool = False
) -> Annealed:
    """Run AIS along ``betas`` from states ``v0`` drawn from ``p_{betas[0]}`` (one target model).

    The log weights are ``Σ_k log f_k(x_k) - log f_{k-1}(x_k)``, accumulated
    in float64. The transition after each weight update is at the new β
    (Salakhutdinov & Murray's order); none follows the last. This is
    :meth:`AnnealingPath.log_f` and the kernels' sweep
    (:func:`~pymc_rbm.kernels.sweep.sweep`) at the path's point, with the
    activations ``a = hbias + v·W`` carried by the sweep from step to step
    (updated by the rows of ``W`` of the visible units that changed,
    :func:`~pymc_rbm.kernels.activations.propagate_activation`, the step
    methods' update; recomputed by a gather at every step on a Potts path,
    :attr:`~pymc_rbm.estimators.path.AnnealingPath.incremental`) and serving the weight too: near ``β = 1`` a step changes 1-5 % of the visible
    units of a trained MNIST model, and the update costs a fifth to a tenth
    of the product. When more than
    :data:`~pymc_rbm.kernels.activations.BATCH_FRACTION` changed, and on every
    :data:`~pymc_rbm.kernels.activations.FULL_EVERY`-th step (the rule of
    RTS, SAMS and the pilot run too), they are recomputed in full. A step
    then costs one matrix product (``h·Wᵀ``).

    The hidden part of a weight increment is computed as an increment, not
    as a difference of two softplus sums: with ``σ = sigmoid(β_{k-1} a)`` and
    ``δ = (β_k - β_{k-1}) a``,

        softplus(β_k a) - softplus(β_{k-1} a) = log1p(σ · expm1(δ)),

    accurate to a few ulp *of the increment* (which is of order ``δ``), so it
    can be computed in the sampling dtype. Chains where that overflows
    (``|δ|`` beyond the dtype's ``exp`` range) are recomputed from softplus
    sums in float64. Hidden units of other layers (ReLU units) have no such
    form: their increment is the difference of the layer's log normalisers
    at ``β_k a`` and ``β_{k-1} a`` (:func:`~pymc_rbm.estimators.path.log_normaliser_sum_`), in float64.

    ``record`` lists the steps after which the partial log weights (and,
    with ``keep_states``, the states) are kept. ``stop`` (a
    ``threading.Event``) ends the run at the next step when set.
    """
    if path.n_models != 1:
        raise ValueError("AIS anneals to one target model")
    if path.base_hbias is not None:
        raise ValueError("AIS anneals from a base with its hidden units in a zero field: build the path without "
                         "base_hbias")
    dt = path.dtype
    d = path.vbiases[1] - path.vbiases[0]  # log f_β(v) = b_A·v + β d·v + Σ softplus(β a) (Potts: d·one-hot(v))
    # hidden units with values low < high (0 and 1 for Bernoulli): their log normaliser in a field z is
    # low z + softplus(gap z), so the softplus terms below take gap β a and the increment gains low δ Σ a;
    # other hidden layers (ReLU) take the difference of their own log normalisers
    layer = path.hidden_layer
    two_state = isinstance(layer, TwoState)
    low, gap = (layer.low, layer.spacing) if two_state else (0.0, 1.0)
    v = np.asarray(v0, dtype=dt)
    n = v.shape[0]
    state = RBMState(v, None, path.hidden_activation(v))
    dv = path.visible_dot(v, d)
    log_w = np.zeros(n)
    # sigmoid(β a) of the current state at the current β (two-state hidden units)
    sig = sigmoid_(state.hidden_input * dt.type(betas[0] * gap)) if two_state else None
    K = betas.size - 1
    slot = {int(k): i for i, k in enumerate(record)}
    trace = np.zeros((len(slot), n))
    states = np.zeros((len(slot) if keep_states else 0, n, v.shape[1]), dtype=dt)
    for k in range(1, K + 1):
        if stop is not None and stop.is_set():
            break
        beta, step = float(betas[k]), float(betas[k] - betas[k - 1])
        log_w += step * dv
        a = state.hidden_input
        if two_state:
            t = a * dt.type(step * gap)
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # inf, NaN, log1p(-1): redone below
                np.expm1(t, out=t)
                t *= sig
                inc = np.log1p(t).sum(axis=-1, dtype=np.float64)
            bad = ~np.isfinite(inc)
            if bad.any():  # exp overflowed: the two softplus sums in float64 (rare; extreme |δ|)
                a64 = a[bad].astype(np.float64)
                inc[bad] = softplus_sum_(a64 * (beta * gap)) - softplus_sum_(a64 * (float(betas[k - 1]) * gap))
        else:
            a64 = a.astype(np.float64)
            inc = log_normaliser_sum_(a64 * beta, layer) - log_normaliser_sum_(a64 * float(betas[k - 1]), layer)
        log_w += inc
        if low != 0.0:
            log_w += (low * step) * a.sum(axis=-1, dtype=np.float64)
        if k < K:  # the sweep at β_k; the carried activations are refreshed on every FULL_EVERY-th step
            refresh = k % FULL_EVERY == 0 or not path.incremental
            state, _ = sweep(rng, state, path.at(path.coefficients(beta)), path.rule, refresh=refresh)
            dv = path.visible_dot(state.v, d)
            sig = sigmoid_(state.hidden_input * dt.type(beta * gap)) if two_state else None
        if k in slot:
            trace[slot[k]] = log_w
            if keep_states:
                states[slot[k]] = state.v
        bar.advance()
    return Annealed(log_w, state.v, trace, states)


def anneal_in_threads(
    path: AnnealingPath,
    rng,
    v0,
    betas: np.ndarray,
    bar: Progress,
    record=(),
    n_jobs: int = 1,
    keep_states: bool = False,
) -> Annealed:
    """:func:`anneal` on blocks of chains, each with its own generator, run on ``n_jobs`` threads.

    The chains of AIS are independent. They are split into the blocks of
    :func:`~pymc_rbm._runtime.chain_blocks` (fixed by the number of chains,
    each with a generator spawned from ``rng``), and each block runs the
    whole annealing on its own. The threads only share out the blocks, so
    the result is the same bit for bit for any ``n_jobs``. With several
    threads BLAS runs on one thread; NumPy's array operations, BLAS and the
    compiled row update release the GIL, so the blocks run on separate
    cores. The results are joined in chain order.
    """
    n = np.asarray(v0).shape[0]
    blocks, rngs = chain_blocks(n, rng)
    part = bar.shared(len(blocks))
    stop = threading.Event()

    def one(i):
        return anneal(path, rngs[i], v0[blocks[i]], betas, part, record, stop, keep_states)

    n_jobs = min(n_jobs, len(blocks))
    if n_jobs == 1:
        runs = [one(i) for i in range(len(blocks))]
    else:
        with single_blas_thread(), ThreadPoolExecutor(n_jobs) as pool:
            try:
                runs = list(pool.map(one, range(len(blocks))))
            except BaseException:  # Ctrl-C: the threads stop at their next step instead of running to the end
                stop.set()
                raise
    return Annealed(
        np.concatenate([r.log_w for r in runs]),
        np.concatenate([r.v for r in runs]),
        np.concatenate([r.trace for r in runs], axis=1),
        np.concatenate([r.states for r in runs], axis=1),
    )


"""Bennett's acceptance ratio (BAR) over forward and reverse annealing runs.

Forward AIS (:func:`~pymc_rbm.estimators.ais.ais`) anneals from the base-rate
model to the target; its log weights ``u_i`` estimate ``log Z_B / Z_A`` and,
through ``log mean exp``, give a stochastic *lower* bound. Reverse AIS
(:func:`~pymc_rbm.estimators.ais.reverse_ais`) anneals back from draws of the
target; its log weights ``r_j`` estimate ``log Z_A / Z_B`` and give an upper
bound. Both one-sided averages are dominated by the rare runs in the far tail
of their weights, which a minute's worth of runs on a large model rarely
contains.

Bennett (1976) combines two such samples optimally. For annealing runs the
forward and reverse log weights are the (negative) work of Crooks's
fluctuation theorem, and Shirts, Bair, Hooker & Pande (2003) show that
Bennett's estimator is their maximum-likelihood combination: ``Δ = log Z_B /
Z_A`` solves

    Σ_i σ(u_i - Δ + s) = Σ_j σ(Δ + r_j - s),    s = log(n_r / n_f),

with ``σ`` the logistic function. The solution draws on the region where the
two weight distributions overlap instead of on either tail, and Krause,
Fischer & Igel (2020, "Algorithms for estimating the partition function of
restricted Boltzmann machines", Artificial Intelligence 278) found BAR the
best of the estimators they compared on RBMs.

Reverse runs need starting states drawn from the target. Unless the caller
passes such draws (``samples=``), :func:`bar` takes them from its own
forward run: the final states of the forward chains, resampled in proportion
to their importance weights, are (approximately, with an error that shrinks
as the forward run's effective sample size grows) draws from the target.
"""

from __future__ import annotations

import time
import warnings
from typing import NamedTuple

import numpy as np
from scipy.optimize import brentq
from scipy.special import expit, logsumexp

from pymc_rbm._runtime import Progress, StopOnInterrupt, default_threads, single_blas_thread
from pymc_rbm.estimators.annealing import (
    TWO_CHAINS,
    Annealed,
    anneal_in_threads,
    interrupted_estimate,
    weights_summary,
)
from pymc_rbm.estimators.coverage import with_coverage
from pymc_rbm.estimators.path import AnnealingPath
from pymc_rbm.estimators.path_arguments import check_states, single_model_path
from pymc_rbm.estimates import LogPartitionEstimate, fingerprint_of
from pymc_rbm.estimators.schedules import check_schedule, default_schedule
from pymc_rbm.params import RBMParams
from pymc_rbm.validation import check_positive_int

__all__ = ["bar", "bennett_log_ratio", "equilibrating_sweeps", "ladder_start", "LadderStart"]

def bennett_log_ratio(log_w_forward, log_w_reverse) -> float:
    """Bennett's estimate of ``log Z_1 / Z_0`` from forward and reverse log weights.

    Parameters
    ----------
    log_w_forward : array_like of shape (n_f,)
        Log weights of runs from ``p_0`` towards ``p_1``: for draws
        ``x ~ p_0``, ``log f_1(x) - log f_0(x)``; for annealing runs, the
        forward AIS log weights. Each alone estimates ``log Z_1 / Z_0`` by
        ``log mean exp``.
    log_w_reverse : array_like of shape (n_r,)
        Log weights of runs from ``p_1`` towards ``p_0``: for draws
        ``y ~ p_1``, ``log f_0(y) - log f_1(y)``; for annealing runs, the
        reverse AIS log weights (estimating ``log Z_0 / Z_1``).

    Returns
    -------
    float
        The root ``Δ`` of ``Σ_i σ(u_i - Δ + s) = Σ_j σ(Δ + r_j - s)``,
        ``s = log(n_r / n_f)`` (Bennett 1976; Shirts et al. 2003).

    Examples
    --------
    Two product distributions whose partition functions are known:

    >>> import numpy as np
    >>> from pymc_rbm.estimators.bar import bennett_log_ratio
    >>> rng = np.random.default_rng(0)
    >>> b0, b1 = np.zeros(5), np.full(5, 0.7)  # f(x) = exp(b·x) on {0, 1}^5
    >>> x = (rng.random((4000, 5)) < 0.5).astype(float)
    >>> y = (rng.random((4000, 5)) < 1 / (1 + np.exp(-0.7))).astype(float)
    >>> delta = bennett_log_ratio(x @ (b1 - b0), y @ (b0 - b1))
    >>> exact = 5 * (np.logaddexp(0, 0.7) - np.log(2))
    >>> bool(abs(delta - exact) < 0.02)
    True
    """
    u = np.asarray(log_w_forward, dtype=np.float64).ravel()
    r = np.asarray(log_w_reverse, dtype=np.float64).ravel()
    if u.size == 0 or r.size == 0:
        raise ValueError("bennett_log_ratio needs at least one forward and one reverse log weight")
    if not (np.all(np.isfinite(u)) and np.all(np.isfinite(r))):
        raise ValueError("log weights must be finite")
    s = float(np.log(r.size / u.size))

    def excess(delta: float) -> float:  # decreasing in delta: n_f at -inf, -n_r at +inf
        return float(expit(u - delta + s).sum() - expit(delta + r - s).sum())

    lo = min(u.min(), -r.max()) - abs(s) - 40.0
    hi = max(u.max(), -r.min()) + abs(s) + 40.0
    return float(brentq(excess, lo, hi, xtol=1e-12, rtol=4 * np.finfo(float).eps))


def _bootstrap_stderr(rng: np.random.Generator, u: np.ndarray, r: np.ndarray, n_boot: int) -> float:
    """Standard deviation of :func:`bennett_log_ratio` over ``n_boot`` resamplings of both directions' runs."""
    est = np.empty(n_boot)
    for b in range(n_boot):
        est[b] = bennett_log_ratio(u[rng.integers(0, u.size, u.size)], r[rng.integers(0, r.size, r.size)])
    return float(est.std(ddof=1))


def resample_by_weight(rng: np.random.Generator, states: np.ndarray, log_w: np.ndarray, n: int) -> np.ndarray:
    """``n`` rows of ``states`` drawn in proportion to ``exp(log_w)`` (systematic resampling; stochastic).

    Parameters
    ----------
    rng : numpy.random.Generator
    states : ndarray of shape (m, n_visible)
    log_w : ndarray of shape (m,)
        Log importance weights of the rows.
    n : int

    Returns
    -------
    ndarray of shape (n, n_visible)
        The chosen rows, in a random order.
    """
    w = np.exp(log_w - log_w.max())
    cum = np.cumsum(w / w.sum())
    cum[-1] = 1.0
    idx = np.searchsorted(cum, (rng.random() + np.arange(n)) / n)
    return states[rng.permutation(idx)]


def equilibrating_sweeps(n_equilibrate, n_steps: int) -> int:
    """Sweeps at the target for the reverse runs' starts: ``n_equilibrate`` checked, or a ninth of ``n_steps``."""
    if n_equilibrate is None:
        return n_steps // 9
    return check_positive_int(n_equilibrate, "n_equilibrate", 0)


def _forward_reverse(
    path, rng, betas, n_chains, given, n_equilibrate, pbar, guard, n_jobs, record=(), keep_states=False
) -> tuple[Annealed | None, np.ndarray | None, Annealed | None]:
    """Forward AIS along ``betas``, then reverse AIS back from draws of the target (BAR's two runs).

    The reverse runs start from rows of ``given`` when it is not None, else
    from the forward chains' final states resampled by their weights; either
    takes ``n_equilibrate`` sweeps at β = 1 first. ``record`` are steps of
    the forward schedule: the reverse run records the same β values. Returns
    ``(forward, start, reverse)``, with None for what an interruption
    (``guard``) left undone.
    """
    forward = anneal_in_threads(
        path, rng, path.sample_base(rng, n_chains), betas, pbar, record, n_jobs=n_jobs, keep_states=keep_states
    )
    start = reverse = None
    if not guard.interrupted:
        if given is None:
            start = resample_by_weight(rng, forward.v, forward.log_w, n_chains)
        else:
            start = given[rng.choice(given.shape[0], size=n_chains, replace=n_chains > given.shape[0])]
        start = np.asarray(start, dtype=path.dtype)
        if n_equilibrate:  # sweeps at β = 1 (a constant schedule: no weights)
            start = anneal_in_threads(path, rng, start, np.ones(n_equilibrate + 1), pbar, n_jobs=n_jobs).v
    if not guard.interrupted:
        back = [betas.size - 1 - k for k in record]
        reverse = anneal_in_threads(
            path, rng, start, betas[::-1].copy(), pbar, back, n_jobs=n_jobs, keep_states=keep_states
        )
    return forward, start, reverse


def bar(
    params: RBMParams,
    *,
    n_chains: int = 100,
    n_steps: int | None = None,
    schedule=None,
    samples=None,
    n_equilibrate: int | None = None,
    operator="gibbs",
    data=None,
    base=None,
    base_smoothing: float = 0.005,
    dtype=np.float32,
    n_bootstrap: int = 200,
    rng=None,
    n_jobs: int | None = None,
    progress: bool = False,
) -> LogPartitionEstimate:
    """``log Z`` by Bennett's acceptance ratio over forward and reverse AIS (stochastic).

    Runs ``n_chains`` forward AIS chains from the base-rate model to the
    target, then ``n_chains`` reverse chains back along the same schedule
    from draws of the target, and combines the two sets of log weights with
    :func:`bennett_log_ratio` (see the module docstring). The draws of the
    target are ``samples`` when given, else the forward run's final states
    resampled by their weights.

    Parameters
    ----------
    params : RBMParams, SpinRBMParams, CategoricalRBMParams, GaussianRBMParams, ReLURBMParams or AnnealingPath
        The target RBM (binary units, ±1 spins, categorical or Gaussian visible units, ReLU hidden units, as in
        :func:`~pymc_rbm.estimators.ais.ais`), or an annealing path to it built once
        (:func:`~pymc_rbm.estimators.annealing_path`), which then fixes the
        base distribution, ``dtype`` and ``operator``.
    n_chains : int, default 100
        Chains in each direction, at least 2.
    n_steps : int, optional
        Steps of Salakhutdinov & Murray's schedule in each direction
        (:func:`~pymc_rbm.estimators.schedules.default_schedule`); default 18000.
        The spread between runs falls faster than the square root of the
        steps: on mnist_h100, 0.045 nats at 18000 and 0.021 at 36000
        (docs/estimators.md, "BAR on the large models").
    schedule : int or array_like, optional
        The β values instead (as in :func:`~pymc_rbm.estimators.ais.ais`);
        the reverse runs take them backwards.
    samples : array_like of shape (n_samples, n_visible), optional
        Draws from the target to start the reverse runs from (exact draws,
        or long tempered chains). ``n_chains`` rows are taken without
        replacement (with replacement when there are fewer). By default the
        forward run provides them.
    n_equilibrate : int, optional
        Sweeps at the target itself (β = 1, the path's operator) that the
        reverse runs' starting states take before annealing back. The
        resampled forward states sit in the target's modes in the right
        proportions (in expectation) but lag within them, which biases the
        reverse weights; the sweeps leave the target invariant, so exact
        draws stay exact. Default: a ninth of the steps each way (2000 of the
        default 18000, about 5 % of the run); 0: none.
    operator : {"gibbs", "flip"} or float, default "gibbs"
        Visible-layer update of both directions (as in AIS).
    data, base, base_smoothing
        The base-rate model (:func:`~pymc_rbm.estimators.base_rate.base_rate_vbias`):
        pass the training ``data`` for trained models.
    dtype : numpy dtype, default float32
        Floating type of the sampling arithmetic (log weights are accumulated
        in float64).
    n_bootstrap : int, default 200
        Bootstrap resamplings of the runs for the standard error.
    rng : numpy.random.Generator or seed, optional
    n_jobs : int, optional
        Threads for the chains of each direction (as in AIS; the estimate
        depends on the seed only, never on ``n_jobs``); default
        :func:`~pymc_rbm._runtime.default_threads`.
    progress : bool, default False
        Show a progress bar on stderr.

    Returns
    -------
    LogPartitionEstimate
        ``log_z = log Z_A + Δ``; ``stderr`` the bootstrap standard deviation
        of ``Δ`` over both directions' runs; ``interval`` ``log_z ± 3 stderr``.
        ``diagnostics``: ``forward`` and ``reverse`` (each the one-sided
        estimate ``log_z``, ``stderr`` and ``ess`` of that direction alone:
        the lower and upper side of the bracket), ``log_weights_forward``,
        ``log_weights_reverse``, ``log_z_base``, ``base_vbias``, ``n_steps``,
        ``n_chains``, ``operator``, ``start`` (``"forward"`` or
        ``"samples"``), ``n_equilibrate``, ``samples`` (the reverse runs'
        starting states, after the equilibrating sweeps),
        ``betas``, ``seconds``. Where modes no chain visited would raise the
        estimate by more than ``stderr``, ``stderr`` is that much instead
        (:func:`~pymc_rbm.estimators.coverage.with_coverage`).

    Warns
    -----
    RuntimeWarning
        When the forward estimate lies above the reverse one by more than
        three standard errors of their difference: the two directions
        disagree about where ``log Z`` is, so the runs are too short for
        this model (or the ``samples`` are not draws from it).

    Notes
    -----
    With exact draws for ``samples`` the estimator is consistent as the
    chains grow in number, for any schedule. Started from the forward run,
    the reverse chains begin at an importance-weighted approximation of the
    target; the tests check agreement with enumeration on small RBMs, and
    docs/estimators.md gives the accuracy measured on the MNIST models.
    Ctrl-C stops the run with a warning and a NaN estimate, as in AIS.

    Examples
    --------
    >>> from pymc_rbm import RBMParams
    >>> from pymc_rbm.estimators import log_partition_exact
    >>> from pymc_rbm.estimators.bar import bar
    >>> p = RBMParams.random(12, 6, scale=0.5, rng=0)
    >>> est = bar(p, n_chains=50, n_steps=300, rng=1)
    >>> abs(est.log_z - log_partition_exact(p).log_z) < 5 * est.stderr + 0.02
    True
    """
    t0 = time.perf_counter()
    rng = np.random.default_rng(rng)
    path = single_model_path(
        params, data, estimator=bar, base=base, base_smoothing=base_smoothing, dtype=dtype, operator=operator
    )
    params = path.models[0]
    n_chains = check_positive_int(n_chains, "n_chains", 2, TWO_CHAINS)
    n_bootstrap = check_positive_int(n_bootstrap, "n_bootstrap", 2)
    n_jobs = default_threads() if n_jobs is None else check_positive_int(n_jobs, "n_jobs")
    if schedule is not None and n_steps is not None:
        raise ValueError("give n_steps (of the default schedule) or schedule, not both")
    if schedule is None:
        betas = default_schedule(18000 if n_steps is None else check_positive_int(n_steps, "n_steps"))
    else:
        betas = check_schedule(schedule)
    given = None
    if samples is not None:
        given = check_states(samples, params, name="samples")
        if given.shape[0] == 0:
            raise ValueError("samples has no rows")
    n_equilibrate = equilibrating_sweeps(n_equilibrate, betas.size - 1)
    log_z0 = path.log_z_base
    with (
        StopOnInterrupt() as guard,
        Progress(2 * (betas.size - 1) + n_equilibrate, "BAR", progress) as pbar,
        single_blas_thread(),
    ):
        forward, start, reverse = _forward_reverse(
            path, rng, betas, n_chains, given, n_equilibrate, pbar, guard, n_jobs
        )
    if guard.interrupted:
        return interrupted_estimate("bar", t0, n_chains)
    u, r = forward.log_w, reverse.log_w
    delta = bennett_log_ratio(u, r)
    stderr = _bootstrap_stderr(rng, u, r, n_bootstrap)
    log_z = log_z0 + delta
    one_sided = {}
    for name, log_w, sign in (("forward", u, 1.0), ("reverse", r, -1.0)):
        lz, se, _, ess = weights_summary(log_w, log_z0, sign=sign)
        one_sided[name] = {"log_z": lz, "stderr": se, "ess": ess}
    gap = one_sided["forward"]["log_z"] - one_sided["reverse"]["log_z"]
    gap_se = float(np.hypot(one_sided["forward"]["stderr"], one_sided["reverse"]["stderr"]))
    if gap > 3.0 * gap_se:
        warnings.warn(
            f"bar: the forward estimate ({one_sided['forward']['log_z']:.3f}) lies {gap:.2f} nats above the reverse "
            f"one ({one_sided['reverse']['log_z']:.3f}), {gap / gap_se:.1f} standard errors: the runs are too short "
            "for this model (or samples= are not draws from it); use more steps (n_steps=...)",
            RuntimeWarning,
            stacklevel=2,
        )
    estimate = LogPartitionEstimate(
        fingerprint=fingerprint_of(params),
        log_z=float(log_z),
        method="bar",
        stderr=stderr,
        interval=(float(log_z - 3.0 * stderr), float(log_z + 3.0 * stderr)),
        diagnostics={
            "forward": one_sided["forward"],
            "reverse": one_sided["reverse"],
            "log_weights_forward": u,
            "log_weights_reverse": r,
            "log_z_base": log_z0,
            "base_vbias": path.base_vbias,
            "n_steps": betas.size - 1,
            "n_chains": n_chains,
            "operator": path.alpha,
            "start": "forward" if given is None else "samples",
            "n_equilibrate": n_equilibrate,
            "samples": start.astype(np.int8) if path.visible_layer.discrete else start,
            "betas": betas,
            "seconds": time.perf_counter() - t0,
        },
    )
    # the weights checked: the forward ones where the reverse runs never moved, else the direction with the
    # larger effective sample size (BAR is unreliable only when both directions rest on a few runs)
    better = u if np.unique(r).size <= 1 or one_sided["forward"]["ess"] >= one_sided["reverse"]["ess"] else r
    return with_coverage(estimate, path.models[0], samples=start, log_weights=better)


class LadderStart(NamedTuple):
    """What forward and reverse annealing runs measured at the rungs of a ladder (:func:`ladder_start`).

    Attributes
    ----------
    log_z : ndarray of shape (K,)
        Estimates of ``log Z_k`` at every rung: exact at the base, Bennett's
        acceptance ratio at the target, and in between the forward runs'
        partial AIS estimate and the reverse runs' (``log Z_K`` plus their
        partial weights) combined by their inverse delta-method variances.
    stderr : ndarray of shape (K,)
        Their standard errors (delta method; the bootstrap one at the target).
    states : ndarray of shape (K, 2 n_chains, n_visible)
        States at each rung from both directions, weighted draws of ``p_k``.
    log_w : ndarray of shape (K, 2 n_chains)
        Their log importance weights for ``p_k``, each direction's normalised
        to its share of the rung's effective sample size.
    estimate : LogPartitionEstimate or None
        BAR's estimate at the target (None when interrupted).
    """

    log_z: np.ndarray
    stderr: np.ndarray
    states: np.ndarray
    log_w: np.ndarray
    estimate: LogPartitionEstimate | None


def _pooled_log_weights(log_w_forward: np.ndarray, log_w_reverse: np.ndarray) -> np.ndarray:
    """Both directions' weights at a rung, normalised and mixed in proportion to their effective sample sizes."""
    parts = []
    for lw in (log_w_forward, log_w_reverse):
        lw = lw - logsumexp(lw)
        parts.append((lw, 1.0 / np.exp(logsumexp(2.0 * lw))))  # Kish's ESS
    total = parts[0][1] + parts[1][1]
    return np.concatenate([lw + np.log(ess / total) for lw, ess in parts])


def ladder_start(
    path: AnnealingPath,
    rng,
    rungs,
    n_chains: int,
    *,
    n_steps: int = 18000,
    n_equilibrate: int | None = None,
    n_bootstrap: int = 200,
    n_jobs: int | None = None,
    bar=None,
    guard=None,
) -> LadderStart | None:
    """``log Z`` at every rung of a ladder, and weighted draws there, from one BAR run (stochastic).

    Runs :func:`bar`'s forward and reverse AIS along Salakhutdinov &
    Murray's schedule of ``n_steps`` steps with the rungs added, keeping the
    partial log weights and the states where each direction passes a rung.
    Forward chains reaching rung ``k`` are weighted draws of ``p_k`` with
    weights estimating ``Z_k / Z_0``; reverse chains, started from draws of
    the target, with weights estimating ``Z_k / Z_K``. RTS and SAMS start
    from it (``init="bar"``): guesses of every ``log Z_k`` within about
    BAR's error, and states near equilibrium at every rung, which slowly
    mixing chains cannot reach within their run.

    Parameters
    ----------
    path : AnnealingPath
        A path to one model.
    rng : numpy.random.Generator
    rungs : array_like of shape (K,)
        Increasing β values from 0 to 1.
    n_chains : int
        Chains in each direction.
    n_steps : int, default 18000
    n_equilibrate : int, optional
        As in :func:`bar` (default a ninth of ``n_steps``).
    n_bootstrap : int, default 200
    n_jobs : int, optional
        Threads, as in :func:`bar`.
    bar : optional progress bar
    guard : StopOnInterrupt, optional
        Ctrl-C guard of the caller; None returned when it fired.

    Returns
    -------
    LadderStart or None
    """
    rungs = np.asarray(rungs, dtype=np.float64)
    if rungs.ndim != 1 or rungs.size < 2 or rungs[0] != 0.0 or rungs[-1] != 1.0 or np.any(np.diff(rungs) <= 0):
        raise ValueError("rungs must increase from 0 to 1")
    n_jobs = default_threads() if n_jobs is None else check_positive_int(n_jobs, "n_jobs")
    betas = np.union1d(default_schedule(check_positive_int(n_steps, "n_steps")), rungs)
    record = np.searchsorted(betas, rungs[1:-1]).tolist()
    n_equilibrate = equilibrating_sweeps(n_equilibrate, n_steps)
    bar = Progress(0, "", False) if bar is None else bar
    guard = StopOnInterrupt() if guard is None else guard
    forward, start, reverse = _forward_reverse(
        path, rng, betas, n_chains, None, n_equilibrate, bar, guard, n_jobs, record, keep_states=True
    )
    if guard.interrupted:
        return None
    u, r = forward.log_w, reverse.log_w
    log_z_base = path.log_z_base
    log_z_top = log_z_base + bennett_log_ratio(u, r)
    se_top = _bootstrap_stderr(rng, u, r, n_bootstrap)
    K = rungs.size
    log_z, stderr = np.empty(K), np.empty(K)
    log_z[0], stderr[0], log_z[-1], stderr[-1] = log_z_base, 0.0, log_z_top, se_top
    zeros = np.zeros(n_chains)
    states = [np.concatenate([path.sample_base(rng, n_chains), reverse.v])]
    log_w = [_pooled_log_weights(zeros, r)]
    for i in range(K - 2):
        f_k, f_se, _, _ = weights_summary(forward.trace[i], log_z_base)
        r_k, r_se, _, _ = weights_summary(reverse.trace[i], log_z_top)
        prec = np.array([1.0 / f_se**2, 1.0 / (r_se**2 + se_top**2)])
        log_z[i + 1] = (prec[0] * f_k + prec[1] * r_k) / prec.sum()
        stderr[i + 1] = 1.0 / np.sqrt(prec.sum())
        states.append(np.concatenate([forward.states[i], reverse.states[i]]))
        log_w.append(_pooled_log_weights(forward.trace[i], reverse.trace[i]))
    states.append(np.concatenate([forward.v, start]))
    log_w.append(_pooled_log_weights(u, zeros))
    estimate = LogPartitionEstimate(
        log_z=float(log_z_top),
        method="bar",
        stderr=se_top,
        interval=(float(log_z_top - 3.0 * se_top), float(log_z_top + 3.0 * se_top)),
        diagnostics={"n_steps": betas.size - 1, "n_chains": n_chains, "n_equilibrate": n_equilibrate},
    )
    return LadderStart(log_z, stderr, np.stack(states), np.stack(log_w), estimate)

"""Annealed importance sampling of ``log Z`` in JAX, forward and reverse, with chains across devices.

The estimator of :func:`pymc_rbm.estimators.ais.ais` (Salakhutdinov & Murray
2008) on the JAX sweep kernel: ``n_chains`` runs start from exact draws of
the base-rate model ``A`` (visible biases ``b_A``, no couplings) and move
through the intermediate RBMs

    log f_β(v) = b_A·v + β (vbias - b_A)·v + Σ_j softplus(β (hbias + v·W)_j),

each run's log weight adding ``log f_{β_k}(v_k) - log f_{β_{k-1}}(v_k)`` at
every step, after which one transition at ``β_k`` follows: the sweep of
:mod:`pymc_rbm.jax.sweep` at the path's point, the record
``FieldTarget(W, vbias - b_A, hbias, β_k, visible_field=b_A)``
(:func:`pymc_rbm.kernels.target.annealing_point`), with the hidden layer
drawn afresh, ``h ~ p_k(h | v)``, then ``v`` given ``h`` by Gibbs,
flip-the-state or their mixture: the path's own visible logits are
``b_A + β (vbias - b_A + W·h)`` (why not the kernels' ``beta`` alone:
:mod:`pymc_rbm.estimators.path`). The
schedule, the base-rate model and the result type are the NumPy
estimator's (:func:`~pymc_rbm.estimators.ais.default_schedule`,
:func:`~pymc_rbm.estimators.base_rate.base_rate_vbias`,
:class:`~pymc_rbm.estimators.LogPartitionEstimate`), so the two backends
answer the same question with the same defaults.

What differs is the arithmetic. Every step computes both matrix products
densely (on an accelerator that is cheaper than the NumPy path's update of
the activations by the units that changed), the whole annealing is one
``jax.lax.scan`` compiled once, and the chains are split across the devices
of a mesh (:mod:`pymc_rbm.jax.sharding`). The hidden part of a weight
increment is computed as an increment, ``log1p(sigmoid(x)·expm1(d))`` with
``x = β_{k-1} a`` and ``d = (β_k - β_{k-1}) a`` (mirrored for ``d > 0`` so
that ``expm1`` never overflows), which is accurate in float32; the log
weights are accumulated with Kahan's compensated sum when they are float32.
"""

from __future__ import annotations

import functools
import time

import jax
import jax.numpy as jnp
import numpy as np

from pymc_rbm.energy import free_energy
from pymc_rbm.estimators.ais import check_start_rows
from pymc_rbm.estimators.annealing import weights_summary
from pymc_rbm.estimators.base_rate import base_rate_vbias
from pymc_rbm.estimators.schedules import check_schedule, default_schedule
from pymc_rbm.estimates import LogPartitionEstimate, fingerprint_of
from pymc_rbm.jax.arrays import RBMArrays, check_dtype, from_params, matmul, x64_enabled
from pymc_rbm.jax.sharding import chain_mesh, chain_sharding, padded_size, replicated
from pymc_rbm.jax.sweep import RBMState, sweep, update_layer
from pymc_rbm.kernels.target import annealing_point, hidden_input
from pymc_rbm.kernels.operators import operator_alpha
from pymc_rbm.params import RBMParams
from pymc_rbm.validation import check_positive_int

_TWO_CHAINS = " (the standard error comes from the spread of the chains' weights)"

__all__ = ["anneal", "ais", "reverse_ais", "as_key"]


# ------------------------------------------------------------------ pieces
def as_key(rng):
    """A JAX PRNG key from ``rng``.

    Parameters
    ----------
    rng : None, int, numpy.random.Generator or jax.Array
        A JAX key (new-style or legacy) is used as given; an int is a seed;
        a NumPy generator gives a seed by one draw; ``None`` draws a seed
        from fresh entropy (like ``numpy.random.default_rng()``).

    Returns
    -------
    jax.Array
        A new-style key.
    """
    if isinstance(rng, jax.Array):
        if jax.dtypes.issubdtype(rng.dtype, jax.dtypes.prng_key):
            return rng
        return jax.random.wrap_key_data(rng)
    if rng is None or isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(rng).integers(2**32)
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return jax.random.key(int(rng))
    raise TypeError(f"rng must be None, an int seed, a numpy Generator or a JAX key, got {type(rng).__name__}")


def _hidden_increment(a, beta_prev, dbeta):
    """``Σ_j softplus(β_k a_j) - softplus(β_{k-1} a_j)`` per chain, without cancellation.

    With ``x = β_{k-1} a`` and ``d = Δβ a``: for ``d <= 0`` it is
    ``log1p(sigmoid(x) expm1(d))``; for ``d > 0`` the same identity on
    ``-x, -d`` plus ``d`` (``softplus(y) = y + softplus(-y)``), so ``expm1``
    only sees non-positive arguments.
    """
    x = beta_prev * a
    d = dbeta * a
    up = d > 0
    xs = jnp.where(up, -x, x)
    ds = jnp.where(up, -d, d)
    inc = jnp.where(up, d, 0) + jnp.log1p(jax.nn.sigmoid(xs) * jnp.expm1(ds))
    return inc.sum(axis=-1)


def _kahan_add(total, comp, x):
    y = x - comp
    t = total + y
    return t, (t - total) - y


@functools.partial(jax.jit, static_argnames=("alpha", "acc_dtype", "mesh"))
def _anneal_jit(key, v0, params, base_vbias, betas, dbetas, *, alpha, acc_dtype, mesh):
    def constrain(x):
        if mesh is None:
            return x
        return jax.lax.with_sharding_constraint(x, chain_sharding(mesh, 0, x.ndim))

    acc = np.dtype(acc_dtype)
    dt = params.W.dtype
    path = annealing_point(params.W, params.vbias, params.hbias, base_vbias, 0.0)
    d = path.vbias  # vbias - b_A
    kahan = acc == np.float32

    def weight(v, a, beta_prev, dbeta):
        vis = dbeta * (v * d).sum(axis=-1)
        return (vis + _hidden_increment(a, beta_prev, dbeta)).astype(acc)

    def step(carry, xs):
        v, a, log_w, comp = carry
        k, beta_prev, beta, dbeta = xs
        inc = weight(v, a, beta_prev, dbeta)
        if kahan:
            log_w, comp = _kahan_add(log_w, comp, inc)
        else:
            log_w = log_w + inc
        # the transition at β_k: h drawn afresh (h=None), v by the operator; the hidden input is carried
        new, _ = sweep(jax.random.fold_in(key, k), RBMState(v, None, a), path._replace(beta=beta), alpha=alpha)
        return (constrain(new.v), constrain(new.hidden_input), log_w, comp), None

    n = v0.shape[0]
    v0 = constrain(v0.astype(dt))
    a0 = constrain(hidden_input(path, v0, matmul))
    zeros = constrain(jnp.zeros(n, dtype=acc))
    K = dbetas.shape[0]
    ks = jnp.arange(1, K, dtype=jnp.uint32)
    (v, a, log_w, comp), _ = jax.lax.scan(step, (v0, a0, zeros, zeros), (ks, betas[:-2], betas[1:-1], dbetas[:-1]))
    inc = weight(v, a, betas[-2], dbetas[-1])  # the last step adds its weight; no transition follows
    log_w = log_w + inc - comp if kahan else log_w + inc
    return log_w, v


def anneal(key, v0, params: RBMArrays, base_vbias, betas, *, operator="gibbs", mesh=None):
    """Run AIS along ``betas`` from states ``v0`` (stochastic); the pure core of :func:`ais` and :func:`reverse_ais`.

    Parameters
    ----------
    key : jax.Array
    v0 : array_like of shape (n_chains, n_visible)
        Draws from ``p_{betas[0]}`` (the base-rate model for forward AIS,
        the target for reverse AIS).
    params : RBMArrays
    base_vbias : array_like of shape (n_visible,)
        ``b_A``.
    betas : array_like of shape (K + 1,)
        The schedule, from ``betas[0]`` to ``betas[-1]`` (increasing for
        forward AIS, decreasing for reverse AIS), ``K >= 1``.
    operator : {"gibbs", "flip"} or float in [0, 1], default "gibbs"
        The visible layer's update; the hidden layer is always drawn afresh.
    mesh : jax.sharding.Mesh, optional
        Split the chains over its devices (the number of chains must be a
        multiple of its size). Default: wherever ``v0`` and ``params`` are.

    Returns
    -------
    log_w : jax.Array of shape (n_chains,)
        ``Σ_k log f_{β_k}(v_k) - log f_{β_{k-1}}(v_k)``: float64 with 64-bit
        types enabled, else float32 (compensated sums).
    v : jax.Array of shape (n_chains, n_visible)
        The final states.
    """
    alpha = operator_alpha(operator)
    dt = params.W.dtype
    b = np.asarray(betas, dtype=np.float64)
    if b.ndim != 1 or b.size < 2:
        raise ValueError(f"betas must hold at least 2 values, got shape {b.shape}")
    db = np.diff(b)  # in float64, then rounded: no cancellation in float32
    acc = np.float64 if x64_enabled() else np.float32
    v0 = jnp.asarray(v0, dtype=dt)
    base = jnp.asarray(base_vbias, dtype=dt)
    betas_j, dbetas_j = jnp.asarray(b, dtype=dt), jnp.asarray(db, dtype=dt)
    if mesh is not None:
        rep = replicated(mesh)
        v0 = jax.device_put(v0, chain_sharding(mesh))
        params, base, betas_j, dbetas_j, key = jax.device_put((params, base, betas_j, dbetas_j, key), rep)
    return _anneal_jit(
        key, v0, params, base, betas_j, dbetas_j, alpha=alpha, acc_dtype=np.dtype(acc).name, mesh=mesh
    )


def _setup(params, dtype, devices, n_chains):
    if not isinstance(params, RBMParams):
        raise TypeError(f"params must be an RBMParams, got {type(params).__name__}")
    dt = check_dtype(dtype)
    mesh = chain_mesh(devices)
    return dt, mesh, padded_size(n_chains, mesh)


@functools.partial(jax.jit, static_argnames=("n",))
def _base_draws(key, base_vbias, n: int):
    """``n`` exact draws of the base-rate model (independent units, ``P(v_i = 1) = sigmoid(b_A,i)``)."""
    zeros = jnp.zeros((n, base_vbias.shape[0]), dtype=base_vbias.dtype)
    return update_layer(key, zeros, jnp.broadcast_to(base_vbias, zeros.shape), 0.0)[0]


# --------------------------------------------------------------- estimators
def ais(
    params: RBMParams,
    *,
    n_chains: int = 100,
    schedule=None,
    n_steps: int | None = None,
    operator="gibbs",
    data=None,
    base=None,
    base_smoothing: float = 0.005,
    dtype=None,
    rng=None,
    devices=None,
) -> LogPartitionEstimate:
    """Annealed importance sampling estimate of ``log Z`` on JAX (stochastic).

    The estimator of :func:`pymc_rbm.estimators.ais.ais` (same schedule,
    base-rate model, weights and result), run as one compiled loop with the
    chains split across devices.

    Parameters
    ----------
    params : RBMParams
        The target RBM.
    n_chains : int, default 100
        Independent annealing runs. When it is not a multiple of the number
        of devices, the last device runs a few extra chains that are dropped
        (the streams of the others do not change).
    schedule : None, int or array_like, default None
        ``None``: Salakhutdinov & Murray's schedule of ``n_steps`` steps
        (:func:`~pymc_rbm.estimators.ais.default_schedule`); an int ``K``:
        ``K`` uniform steps; an array: the β values (0 first, 1 last,
        nondecreasing).
    n_steps : int, optional
        Steps of the ``None`` schedule; default 14500.
    operator : {"gibbs", "flip"} or float in [0, 1], default "gibbs"
        Visible-layer update.
    data, base, base_smoothing
        The base-rate model, as in :func:`~pymc_rbm.estimators.base_rate.base_rate_vbias`.
    dtype : None, float32 or float64
        The sampling arithmetic (:func:`pymc_rbm.jax.arrays.check_dtype`):
        by default float32 on accelerators, and on the CPU float64 when
        JAX's 64-bit types are enabled, else float32.
    rng : None, int, numpy.random.Generator or JAX key
        (:func:`as_key`). For a given seed the run is the same on any number
        of devices.
    devices : None, int or sequence of jax.Device
        Where the chains run (:func:`pymc_rbm.jax.sharding.chain_mesh`):
        default every device of JAX's default backend.

    Returns
    -------
    LogPartitionEstimate
        ``method="ais"``, the estimate, delta-method ``stderr`` and ±3σ
        ``interval`` as the NumPy estimator gives them; ``diagnostics``:
        ``log_weights``, ``ess``, ``log_z_base``, ``base_vbias``,
        ``n_steps``, ``n_chains``, ``operator`` (α), ``seconds`` (including
        compilation), ``samples`` (final visible states), ``betas``,
        ``backend`` ("jax"), ``dtype``, ``devices`` (their number).

    Examples
    --------
    >>> from pymc_rbm import RBMParams
    >>> from pymc_rbm.estimators import log_partition_exact
    >>> from pymc_rbm.jax import ais
    >>> p = RBMParams.random(12, 6, scale=0.5, rng=0)
    >>> est = ais(p, n_chains=200, schedule=1000, rng=1)
    >>> abs(est.log_z - log_partition_exact(p).log_z) < 5 * est.stderr + 0.02
    True
    """
    t0 = time.perf_counter()
    n_chains = check_positive_int(n_chains, "n_chains", 2, _TWO_CHAINS)
    if isinstance(schedule, str):
        raise ValueError(f"schedule must be None, an int or an array of β values, got {schedule!r}")
    if n_steps is not None and schedule is not None:
        raise ValueError("n_steps applies to schedule=None only; give the schedule itself instead")
    betas = default_schedule(14500 if n_steps is None else check_positive_int(n_steps, "n_steps"))
    if schedule is not None:
        betas = check_schedule(schedule)
    alpha = operator_alpha(operator)
    dt, mesh, n_pad = _setup(params, dtype, devices, n_chains)
    b_a = base_rate_vbias(params, data, base=base, smoothing=base_smoothing)
    log_z0 = float(np.logaddexp(0.0, b_a).sum() + params.n_hidden * np.log(2.0))
    key_base, key_run = jax.random.split(as_key(rng))
    v0 = _base_draws(key_base, jnp.asarray(b_a, dtype=dt), n_pad)
    log_w, v = anneal(key_run, v0, from_params(params, dtype=dt), b_a, betas, operator=alpha, mesh=mesh)
    log_w = np.asarray(log_w, dtype=np.float64)[:n_chains]
    log_z, se, interval, ess = weights_summary(log_w, log_z0, sign=1.0)
    return LogPartitionEstimate(
        fingerprint=fingerprint_of(params),
        log_z=log_z,
        method="ais",
        stderr=se,
        interval=interval,
        diagnostics={
            "log_weights": log_w,
            "ess": ess,
            "log_z_base": log_z0,
            "base_vbias": b_a,
            "n_steps": betas.size - 1,
            "n_chains": n_chains,
            "operator": alpha,
            "seconds": time.perf_counter() - t0,
            "samples": np.asarray(v)[:n_chains].astype(np.int8),
            "betas": betas,
            "backend": "jax",
            "dtype": dt.name,
            "devices": mesh.devices.size,
        },
    )


def reverse_ais(
    params: RBMParams,
    data,
    *,
    n_chains: int | None = 100,
    schedule=None,
    operator="gibbs",
    base=None,
    base_data=None,
    base_smoothing: float = 0.005,
    dtype=None,
    rng=None,
    devices=None,
) -> LogPartitionEstimate:
    """Reverse AIS on JAX: anneal from states of the target down to the base-rate model (stochastic).

    :func:`pymc_rbm.estimators.ais.reverse_ais` on the JAX kernel: the
    schedule runs from ``β = 1`` to 0, starting from rows of ``data``. From
    exact draws of the model, ``log Z_A - log mean(w)`` is a stochastic upper
    bound of ``log Z``; from data points, ``diagnostics["log_likelihood"]``
    is RAISE's conservative log-likelihood (Burda, Grosse & Salakhutdinov
    2015).

    Parameters
    ----------
    params : RBMParams
    data : array_like of shape (n_samples, n_visible)
        Binary starting states.
    n_chains : int or None, default 100
        Rows to start from, drawn without replacement (with replacement when
        there are fewer rows); ``None``: every row once, in order.
    schedule, operator, base, base_smoothing, dtype, rng, devices
        As in :func:`ais` (the schedule is given forwards, 0 to 1). The
        base-rate model is fitted to ``base_data`` when given, else to ``data``.

    Returns
    -------
    LogPartitionEstimate
        ``method="reverse_ais"``; ``diagnostics``: ``log_weights``, ``ess``,
        ``log_z_base``, ``log_likelihood`` (one per chain),
        ``mean_log_likelihood``, ``rows``, ``n_steps``, ``n_chains``,
        ``operator``, ``seconds``, ``backend``, ``dtype``, ``devices``.
    """
    t0 = time.perf_counter()
    if not isinstance(params, RBMParams):
        raise TypeError(f"params must be an RBMParams, got {type(params).__name__}")
    x = np.asarray(data, dtype=np.float64)
    if x.ndim == 1:
        x = x[None, :]
    if x.ndim != 2 or x.shape[1] != params.n_visible:
        raise ValueError(f"data must have shape (n_samples, {params.n_visible}), got {x.shape}")
    if not np.all((x == 0) | (x == 1)):
        raise ValueError("data must hold binary values (0 or 1)")
    n_chains = check_start_rows(x.shape[0], n_chains)
    key_rows, key_run = jax.random.split(as_key(rng))
    if n_chains is None:
        rows = np.arange(x.shape[0])
    else:
        rows = np.asarray(jax.random.choice(key_rows, x.shape[0], (n_chains,), replace=n_chains > x.shape[0]))
    betas = check_schedule(schedule)
    alpha = operator_alpha(operator)
    dt, mesh, n_pad = _setup(params, dtype, devices, rows.size)
    b_a = base_rate_vbias(params, x if base_data is None else base_data, base=base, smoothing=base_smoothing)
    log_z0 = float(np.logaddexp(0.0, b_a).sum() + params.n_hidden * np.log(2.0))
    start = x[rows]
    v0 = np.concatenate([start, np.repeat(start[:1], n_pad - rows.size, axis=0)])
    log_w, _ = anneal(key_run, v0, from_params(params, dtype=dt), b_a, betas[::-1], operator=alpha, mesh=mesh)
    log_w = np.asarray(log_w, dtype=np.float64)[: rows.size]
    log_z, se, interval, ess = weights_summary(log_w, log_z0, sign=-1.0)
    loglik = -free_energy(start, params) - log_z0 + log_w
    return LogPartitionEstimate(
        fingerprint=fingerprint_of(params),
        log_z=log_z,
        method="reverse_ais",
        stderr=se,
        interval=interval,
        diagnostics={
            "log_weights": log_w,
            "ess": ess,
            "log_z_base": log_z0,
            "log_likelihood": loglik,
            "mean_log_likelihood": float(loglik.mean()),
            "rows": rows,
            "n_steps": betas.size - 1,
            "n_chains": rows.size,
            "operator": alpha,
            "seconds": time.perf_counter() - t0,
            "backend": "jax",
            "dtype": dt.name,
            "devices": mesh.devices.size,
        },
    )

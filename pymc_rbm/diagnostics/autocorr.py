"""Integrated autocorrelation time, effective sample size and autocorrelation of chains.

Brügge, Fischer & Igel (2013, §4.3): ``τ = Σ_{Δt=-∞}^{∞} R(Δt)`` of an energy
along the chain; "τ consecutive samples are equivalent to one independent
sample". It is computed from ArviZ's effective sample size,
``τ = n_chains · n_draws / ESS`` (or from an AR fit, the paper's own
estimator).

- :func:`chain_draws`: a quantity's series as chains, from an array or what
  ``pm.sample`` returned;
- :func:`integrated_autocorr_time`, :func:`ess_free_energy`,
  :func:`autocorrelation`: ``τ``, the ESS and ``R(Δt)``;
- :func:`chain_taus`, :func:`tau_standard_error`: ``τ`` of chains already in
  an array, and its jackknife standard error (what
  :func:`~pymc_rbm.diagnostics.comparison.compare_samplers` tabulates).

This module needs NumPy, xarray and ArviZ (``arviz_stats``, imported on
first use), never PyMC.
"""

from __future__ import annotations

import math
import os
import warnings

import numpy as np
import xarray as xr

__all__ = [
    "StuckChainWarning",
    "chain_draws",
    "integrated_autocorr_time",
    "ess_free_energy",
    "autocorrelation",
    "chain_taus",
    "tau_standard_error",
]

#: ESS methods of :func:`arviz_stats.ess` accepted here (those that need no ``prob``), plus ``"ar"``.
_ARVIZ_METHODS = ("mean", "identity", "bulk", "z_scale", "sd", "folded", "median", "mad")
_COMBINE = ("pooled", "mean", "none")
_MIN_DRAWS = 4
#: Files whose lines a StuckChainWarning never points at: this package's own.
_HERE = (os.path.dirname(__file__) + os.sep,)


def _array_stats():
    """ArviZ's NumPy layer (``arviz_stats.base.array_stats``), imported on first use: it takes seconds."""
    from arviz_stats.base import array_stats

    return array_stats


class StuckChainWarning(UserWarning):
    """A chain's quantity never changed: its autocorrelation time is reported as infinite."""


# ------------------------------------------------------------------ input
def _quantity_from_tree(data, var_name: str, group: str) -> xr.DataArray:
    if isinstance(data, xr.DataTree):
        if group not in data.children:
            raise ValueError(f"the DataTree has no group {group!r}; it has {sorted(data.children)}")
        node = data[group]
        available = sorted(node.data_vars)
        if var_name not in node.data_vars:
            hint = (
                " (the package's step methods record 'free_energy' in sample_stats)"
                if var_name == "free_energy"
                else ""
            )
            raise ValueError(f"group {group!r} has no variable {var_name!r}{hint}; it has {available}")
        return node[var_name]
    if var_name not in data.data_vars:
        raise ValueError(f"the Dataset has no variable {var_name!r}; it has {sorted(data.data_vars)}")
    return data[var_name]


def chain_draws(
    data,
    *,
    var_name: str = "free_energy",
    group: str = "sample_stats",
    sample_dims: tuple[str, str] = ("chain", "draw"),
) -> np.ndarray:
    """The series of one quantity as a float array of shape (n_chains, n_draws).

    Parameters
    ----------
    data : array_like, xarray.DataArray, xarray.Dataset or xarray.DataTree
        - array of shape (n_draws,): one chain;
        - array of shape ``(n_chains, n_draws, ...)``: chain axis first, draw
          axis second; every further index is a sub-chain (a batched RBM
          variable records one free energy per sub-chain);
        - ``DataArray`` with the dimensions ``sample_dims``; other
          dimensions are sub-chains;
        - ``Dataset`` or ``DataTree`` (what ``pm.sample`` returns): the
          variable ``var_name`` (of group ``group`` for a tree).
    var_name : str, default "free_energy"
        Variable to read from a Dataset or DataTree.
    group : str, default "sample_stats"
        Group of a DataTree.
    sample_dims : pair of str, default ("chain", "draw")
        Names of the chain and the draw dimensions of xarray input.

    Returns
    -------
    ndarray of shape (n_chains * n_sub, n_draws), float64
        Sub-chains become chains: row ``c * n_sub + s`` is sub-chain ``s``
        of chain ``c``.

    Raises
    ------
    ValueError
        For a missing group or variable, missing dimensions, fewer than 4
        draws, or non-finite values.

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm.diagnostics import chain_draws
    >>> chain_draws(np.zeros((2, 10, 3))).shape  # 2 chains of 3 sub-chains
    (6, 10)
    """
    if isinstance(data, xr.DataTree | xr.Dataset):
        data = _quantity_from_tree(data, var_name, group)
    if isinstance(data, xr.DataArray):
        missing = [d for d in sample_dims if d not in data.dims]
        if missing:
            raise ValueError(f"the DataArray has dimensions {data.dims}, but not {missing} (sample_dims)")
        data = data.transpose(*sample_dims, ...).values
    arr = np.asarray(data)
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"the quantity must be numeric, got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if arr.ndim == 0:
        raise ValueError("the quantity must have a draw axis, got a scalar")
    if arr.ndim == 1:
        arr = arr[None, :]
    elif arr.ndim > 2:
        arr = np.moveaxis(arr, 1, -1).reshape(-1, arr.shape[1])
    if arr.shape[0] == 0:
        raise ValueError(f"no chains in the quantity (shape {arr.shape})")
    if arr.shape[1] < _MIN_DRAWS:
        raise ValueError(f"at least {_MIN_DRAWS} draws per chain are needed, got {arr.shape[1]}")
    if not np.all(np.isfinite(arr)):
        bad = int(arr.size - np.count_nonzero(np.isfinite(arr)))
        raise ValueError(f"the quantity holds {bad} non-finite value(s) (NaN or inf)")
    return arr



# ----------------------------------------------------------- estimators
def _warn_stuck(stuck: np.ndarray, subject: str, index: str, n_draws: int, consequence: str) -> None:
    """One StuckChainWarning naming the entries (chains or rows, ``index``) where ``stuck`` (1-D bool) holds."""
    found = np.flatnonzero(stuck)
    warnings.warn(
        f"{found.size} of {stuck.size} {subject} never changed over {n_draws} draws "
        f"({index} {found[:10].tolist()}{'...' if found.size > 10 else ''}): the sampler is stuck there, so "
        f"{consequence} (ArviZ would report ESS = n draws)",
        StuckChainWarning,
        skip_file_prefixes=_HERE,  # the first line outside pymc_rbm.diagnostics
    )


def _check_method(method: str) -> str:
    if method != "ar" and method not in _ARVIZ_METHODS:
        raise ValueError(f"method must be 'ar' or one of the ArviZ ESS methods {_ARVIZ_METHODS}, got {method!r}")
    return method


def _ar_order_max(n_draws: int) -> int:
    # R's ar() default, used by SamplerCompare: min(n - 1, floor(10 log10 n))
    return max(1, min(n_draws - 1, int(math.floor(10.0 * math.log10(n_draws)))))


def _tau_ar(x: np.ndarray, order_max: int | None = None) -> float:
    """τ from an AR(p) fit (Yule-Walker, order by AIC) to chains ``x`` of shape (m, n).

    The autocovariances of the chains (each about its own mean) are averaged,
    the AR coefficients ``φ`` of every order up to ``order_max`` found by
    Levinson-Durbin, the order with the smallest
    ``m n log σ²_p + 2 p`` kept, and ``τ = σ²_p / (γ_0 (1 - Σ φ)²)``: the
    spectral density at frequency 0 of the fitted process over its variance.
    """
    m, n = x.shape
    p_max = _ar_order_max(n) if order_max is None else int(order_max)
    if not 1 <= p_max < n:
        raise ValueError(f"order_max must lie in [1, {n - 1}] for {n} draws, got {order_max!r}")
    gamma = _array_stats().autocov(x, axis=-1)[:, : p_max + 1].mean(axis=0)
    n_total = m * n
    phi = np.zeros(0)
    sigma2 = gamma[0]
    best_aic, best = n_total * math.log(sigma2), (phi, sigma2)
    for k in range(1, p_max + 1):
        kappa = (gamma[k] - phi @ gamma[k - 1 : 0 : -1]) / sigma2
        phi = np.concatenate([phi - kappa * phi[::-1], [kappa]])
        sigma2 = sigma2 * (1.0 - kappa * kappa)
        if not sigma2 > 0.0:  # a perfectly predictable series
            break
        aic = n_total * math.log(sigma2) + 2.0 * k
        if aic < best_aic:
            best_aic, best = aic, (phi, sigma2)
    phi, sigma2 = best
    return float(sigma2 / (gamma[0] * (1.0 - phi.sum()) ** 2))


def _taus(x: np.ndarray, method: str, combine: str, order_max: int | None):
    """τ of chains ``x`` (m, n) without the stuck-chain guard: a float, or (m,) for ``combine="none"``."""
    m, n = x.shape
    if combine == "pooled":
        if method == "ar":
            return _tau_ar(x, order_max)
        ess = float(_array_stats().ess(x, chain_axis=0, draw_axis=1, method=method))
        return m * n / ess
    if method == "ar":
        taus = np.array([_tau_ar(row[None, :], order_max) for row in x])
    else:
        ess = np.asarray(_array_stats().ess(x[:, None, :], chain_axis=1, draw_axis=2, method=method), dtype=float)
        taus = n / ess
    return taus if combine == "none" else float(taus.mean())


def chain_taus(
    x: np.ndarray, *, method: str = "mean", combine: str = "pooled", order_max: int | None = None,
    what: str = "the quantity",
):
    """Integrated autocorrelation time ``τ`` of chains given as an array, stuck chains as ``inf``.

    What :func:`integrated_autocorr_time` computes once it has the chains
    from :func:`chain_draws`.

    Parameters
    ----------
    x : ndarray of shape (n_chains, n_draws), float
        The chains, as :func:`chain_draws` returns them.
    method, combine, order_max
        As for :func:`integrated_autocorr_time`.
    what : str, default "the quantity"
        How the warning names the quantity.

    Returns
    -------
    float, or ndarray of shape (n_chains,) for ``combine="none"``
        ``inf`` for a chain whose values never changed, and for ``"pooled"``
        and ``"mean"`` when any chain did not.

    Warns
    -----
    StuckChainWarning
        When a chain is constant over all its draws.
    """
    if combine not in _COMBINE:
        raise ValueError(f"combine must be one of {_COMBINE}, got {combine!r}")
    _check_method(method)
    stuck = np.ptp(x, axis=1) == 0.0
    if not stuck.any():
        return _taus(x, method, combine, order_max)
    _warn_stuck(stuck, f"chain(s) of {what}", "chains", x.shape[1], "the autocorrelation time is reported as inf")
    if combine != "none":
        return math.inf
    taus = np.full(x.shape[0], math.inf)
    if not stuck.all():
        taus[~stuck] = _taus(x[~stuck], method, "none", order_max)
    return taus


def integrated_autocorr_time(
    data,
    *,
    var_name: str = "free_energy",
    group: str = "sample_stats",
    method: str = "mean",
    combine: str = "pooled",
    sample_dims: tuple[str, str] = ("chain", "draw"),
    order_max: int | None = None,
):
    """Integrated autocorrelation time ``τ`` of a quantity along its chains.

    Brügge, Fischer & Igel (2013), §4.3: ``τ = Σ_{Δt=-∞}^{∞} R(Δt)``, with ``R`` the
    autocorrelation of the quantity ``Δt`` steps apart; "τ consecutive
    samples are equivalent to one independent sample". Here
    ``τ = n_chains · n_draws / ESS`` with ArviZ's effective sample size.

    Parameters
    ----------
    data : array_like, xarray.DataArray, xarray.Dataset or xarray.DataTree
        The quantity, shape (n_chains, n_draws) or (n_draws,); an idata
        from ``pm.sample`` (by default its ``sample_stats["free_energy"]``).
        Sub-chains (dimensions besides chain and draw, e.g. one free
        energy per sub-chain of a batched RBM variable) count as chains;
        see :func:`chain_draws`.
    var_name : str, default "free_energy"
        Variable of a Dataset or DataTree.
    group : str, default "sample_stats"
        Group of a DataTree (``"posterior"`` for a deterministic you
        recorded yourself).
    method : str, default "mean"
        ``"mean"`` (default): ArviZ's ESS of the mean, Geyer's initial
        monotone sequence estimator of ``1 + 2 Σ_{t≥1} ρ_t`` on the values
        themselves, with each chain split in two halves so that drift
        lowers the ESS. It estimates exactly the paper's ``τ``, the factor by
        which autocorrelation inflates the variance of a chain average.
        ``"identity"``: the same without splitting. ``"bulk"``: ArviZ's
        default, the same on rank-normalized values: ``τ`` of a monotone
        transform of the quantity, close to but not the paper's ``τ``.
        Other prob-free ArviZ methods (``"sd"``, ``"folded"``, ...) are
        accepted too. ``"ar"``: the paper's own estimator ("fitted AR-models
        to the time series [...] using the software package SamplerCompare",
        after Thompson 2010): Yule-Walker AR(p) fit, ``p ≤ order_max``
        chosen by AIC, ``τ = σ²_ε / (γ_0 (1 - Σ φ_k)²)``; computed here in
        NumPy, not by ArviZ.
    combine : {"pooled", "mean", "none"}, default "pooled"
        ``"pooled"``: one ESS over all chains (ArviZ's multi-chain ESS, which
        also counts differences between the chains' means against mixing).
        ``"mean"``: the mean of single-chain ``τ``, as the paper's Table 2
        ("mean autocorrelation times [...] for single Markov chains").
        ``"none"``: the single-chain ``τ`` of every chain.
        Sub-chains count as chains here, so ``"pooled"`` fits rows of one
        distribution only; for rows with data of their own (their means of
        ``F`` differ by right) use ``"mean"``, or
        :func:`ess_free_energy`, whose default counts each row for itself.
    sample_dims : pair of str, default ("chain", "draw")
        Chain and draw dimensions of xarray input.
    order_max : int, optional
        Largest AR order of ``method="ar"``; default ``min(n - 1, 10 log10 n)``
        as R's ``ar``.

    Returns
    -------
    float, or ndarray of shape (n_chains,) for ``combine="none"``
        ``τ >= 0`` in draws (sweeps, when one draw is one sweep). It can be
        below 1 for antithetic samplers. ``inf`` for a chain whose quantity
        never changed (a stuck chain; ArviZ alone would call it perfectly
        efficient, ESS = n), and for ``"pooled"``/``"mean"`` when any chain
        is stuck.

    Warns
    -----
    StuckChainWarning
        When a chain's quantity is constant over all its draws.

    See Also
    --------
    ess_free_energy : ``n_chains · n_draws / τ``.
    pymc_rbm.diagnostics.comparison.compare_samplers : several samplers side by side.
    arviz_stats.ess : the effective sample size used here.

    Notes
    -----
    With a few thousand draws the Geyer and the AR estimates agree within
    their noise for well-mixing chains; both underestimate ``τ`` when the
    chains are much shorter than ``τ`` (then only a longer run helps).

    Examples
    --------
    An AR(1) series ``x_t = ρ x_{t-1} + ε_t`` has ``τ = (1 + ρ) / (1 - ρ)``,
    here 3:

    >>> import numpy as np
    >>> from pymc_rbm.diagnostics import integrated_autocorr_time
    >>> rng = np.random.default_rng(0)
    >>> eps = rng.normal(size=(4, 20000))
    >>> x = np.zeros_like(eps)
    >>> for t in range(1, eps.shape[1]):
    ...     x[:, t] = 0.5 * x[:, t - 1] + eps[:, t]
    >>> round(integrated_autocorr_time(x), 1), round(integrated_autocorr_time(x, method="ar"), 1)
    (3.0, 3.0)
    """
    x = chain_draws(data, var_name=var_name, group=group, sample_dims=sample_dims)
    what = var_name if isinstance(data, xr.DataTree | xr.Dataset) else "the quantity"
    return chain_taus(x, method=method, combine=combine, order_max=order_max, what=what)


def ess_free_energy(
    idata,
    *,
    var_name: str = "free_energy",
    group: str = "sample_stats",
    method: str = "mean",
    per_second: bool = False,
    rows: str = "sum",
):
    """Effective sample size of the free energy recorded by ``pm.sample``.

    For one row, ``ESS = n_chains · n_draws / τ`` with ``τ`` from
    :func:`integrated_autocorr_time` (``combine="pooled"``): the ESS of the
    mean of ``F(v)`` over all chains and draws, ArviZ's multi-chain ESS,
    which differences between the chains' means lower.

    A batched RBM variable, ``RBM("v", ..., shape=(K, n_visible))``, records
    one free energy per row. Each row's ESS is computed from that row's own
    chains; ``rows`` says how they are reported:

    - ``rows="sum"`` (default): ``Σ_k ESS_k``, the number of independent
      draws the whole run is worth, each row's draws counted towards its
      own distribution. Row ``k``'s ``ESS_k`` is that of the mean of
      ``F_k`` over its chains (its variance is ``Var(F_k) / ESS_k``). It is
      right whether the rows share one distribution (the RBM alone, batched
      to run K chains at once) or each has data of its own.
    - ``rows="each"``: the K per-row ESS, what ``az.ess`` and ``az.summary``
      report for ``sample_stats["free_energy"]`` (with their ``"bulk"``
      method by default; this function uses ``"mean"``).
    - ``rows="pooled"``: the rows count as chains, and the ESS is that of
      the average of ``F(v)`` over all rows and chains, with the
      differences between the rows' means counted against mixing, as R-hat
      counts them. Only for rows that share one distribution: then it is
      close to the sum while the rows mix, and a stricter check than the
      sum that they do (with one chain it is the only check across rows).
      Rows with their own data have different means of ``F`` by right, and
      the pooled ESS collapses: for 20 such rows of 1000 draws whose ESS is
      about 1000 each, it is about 100, where the sum is about 20000.

    Parameters
    ----------
    idata : xarray.DataTree, Dataset, DataArray or array_like
        Usually what ``pm.sample`` returned; an array is shaped
        ``(n_chains, n_draws, ...)`` as in :func:`chain_draws`.
    var_name : str, default "free_energy"
    group : str, default "sample_stats"
    method : str, default "mean"
        See :func:`integrated_autocorr_time`.
    per_second : bool, default False
        Divide by the sampling time, ``idata.posterior.attrs["sampling_time"]``
        (a DataTree from ``pm.sample`` only).
    rows : {"sum", "each", "pooled"}, default "sum"
        How to report the rows of a batched variable, see above; all three
        are the same for a variable with one row.

    Returns
    -------
    float, or ndarray of shape (K,) for ``rows="each"``
        A row with a chain that never changed (``τ = inf``) counts 0.0, for
        ``"sum"`` and ``"each"``; ``"pooled"`` is 0.0 when any chain of any
        row never changed.

    Warns
    -----
    StuckChainWarning
        Once, naming the rows (or, for ``"pooled"``, the chains) whose
        free energy never changed in a chain.

    Examples
    --------
    >>> import numpy as np
    >>> import xarray as xr
    >>> from pymc_rbm.diagnostics import ess_free_energy
    >>> rng = np.random.default_rng(0)
    >>> stats = xr.Dataset({"free_energy": (("chain", "draw"), rng.normal(size=(2, 1000)))})
    >>> idata = xr.DataTree.from_dict({"sample_stats": stats})
    >>> 1800 < ess_free_energy(idata) < 2200  # iid draws: ESS ≈ 2000
    True

    Three rows with their own means of ``F`` (2 chains of iid draws each):
    the sum is about 3 x 2000, the pooled ESS collapses.

    >>> batched = rng.normal(size=(2, 1000, 3)) + np.array([0.0, 5.0, 10.0])
    >>> ess_free_energy(batched, rows="each").shape, 5400 < ess_free_energy(batched) < 6600
    ((3,), True)
    >>> ess_free_energy(batched, rows="pooled") < 100
    True
    """
    if rows not in ("sum", "each", "pooled"):
        raise ValueError(f'rows must be "sum", "each" or "pooled", got {rows!r}')
    _check_method(method)
    x = chain_draws(idata, var_name=var_name, group=group)
    if rows == "pooled":
        tau = chain_taus(x, method=method, what=var_name)
        ess = 0.0 if math.isinf(tau) else x.size / tau
    else:
        n_chains = _n_chains(idata, var_name, group)
        per_row = x.reshape(n_chains, -1, x.shape[1]).swapaxes(0, 1)  # (K, n_chains, n_draws)
        stuck = (np.ptp(per_row, axis=2) == 0.0).any(axis=1)
        if stuck.any():
            _warn_stuck(stuck, f"row(s) of {var_name} had a chain that", "rows", x.shape[1],
                        "the ESS of those rows is reported as 0")
        ess = np.zeros(per_row.shape[0])
        if not stuck.all():
            ess[~stuck] = _ess_of_rows(per_row[~stuck], method)
        ess = float(ess.sum()) if rows == "sum" else ess
    if per_second:
        try:
            seconds = float(idata["posterior"].attrs["sampling_time"])
        except (KeyError, TypeError, AttributeError, IndexError):
            raise ValueError(
                "per_second needs a DataTree from pm.sample with posterior.attrs['sampling_time']"
            ) from None
        ess = ess / seconds
    return ess


def _ess_of_rows(per_row: np.ndarray, method: str) -> np.ndarray:
    """Multi-chain ESS of every row of ``per_row`` (K, n_chains, n_draws), none of whose chains is constant."""
    if method == "ar":
        return np.array([row.size / _tau_ar(row) for row in per_row])
    return np.asarray(_array_stats().ess(per_row, chain_axis=1, draw_axis=2, method=method), dtype=float)


def _n_chains(data, var_name: str, group: str) -> int:
    """Chains (not sub-chains) of the input of :func:`chain_draws`."""
    if isinstance(data, xr.DataTree | xr.Dataset):
        data = _quantity_from_tree(data, var_name, group)
    if isinstance(data, xr.DataArray):
        return int(data.sizes["chain"]) if "chain" in data.dims else 1
    arr = np.asarray(data)
    return 1 if arr.ndim < 2 else int(arr.shape[0])


def autocorrelation(
    data,
    *,
    var_name: str = "free_energy",
    group: str = "sample_stats",
    max_lag: int | None = None,
    sample_dims: tuple[str, str] = ("chain", "draw"),
) -> np.ndarray:
    """Autocorrelation function ``R(Δt)`` of a quantity, averaged over chains (Brügge, Fischer & Igel 2013, Fig. 4).

    Parameters
    ----------
    data, var_name, group, sample_dims
        As for :func:`integrated_autocorr_time`.
    max_lag : int, optional
        Largest lag returned; default all, ``n_draws - 1``.

    Returns
    -------
    ndarray of shape (max_lag + 1,)
        ``R(0) = 1``; each chain's autocorrelation (ArviZ's FFT estimate,
        about its own mean) averaged over chains. NaN where every chain is
        constant.

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm.diagnostics import autocorrelation
    >>> eps = np.random.default_rng(0).normal(size=(4, 5000))
    >>> x = np.zeros_like(eps)
    >>> for t in range(1, 5000):
    ...     x[:, t] = 0.5 * x[:, t - 1] + eps[:, t]  # AR(1): R(Δt) = 0.5**Δt
    >>> autocorrelation(x, max_lag=1).round(1)
    array([1. , 0.5])
    """
    x = chain_draws(data, var_name=var_name, group=group, sample_dims=sample_dims)
    stuck = np.ptp(x, axis=1) == 0.0
    n = x.shape[1]
    max_lag = n - 1 if max_lag is None else int(max_lag)
    if not 0 <= max_lag < n:
        raise ValueError(f"max_lag must lie in [0, {n - 1}], got {max_lag}")
    if stuck.all():
        return np.full(max_lag + 1, np.nan)
    return _array_stats().autocorr(x[~stuck], axis=-1)[:, : max_lag + 1].mean(axis=0)


# ------------------------------------------------------------ standard error
_MAX_JACKKNIFE_GROUPS = 20


def tau_standard_error(x: np.ndarray, *, method: str = "mean", combine: str = "pooled") -> float:
    """Standard error of ``τ`` by the delete-a-group jackknife over chains; NaN with one chain.

    The chains are split into ``g = min(n_chains, 20)`` groups and ``τ``
    recomputed without each group: ``se² = (g - 1) / g Σ (τ_(k) - mean)²``.
    For ``combine="mean"`` with ``g = n_chains`` this is exactly
    ``std(τ_chain) / sqrt(n_chains)``. It measures the spread between chains
    only: chains far shorter than ``τ`` can all miss the same slow mode.

    Parameters
    ----------
    x : ndarray of shape (n_chains, n_draws), float
        Chains none of which is constant (their ``τ`` from :func:`chain_taus` is finite).
    method : str, default "mean"
        As for :func:`integrated_autocorr_time`.
    combine : {"pooled", "mean"}, default "pooled"
        As for :func:`integrated_autocorr_time`.

    Returns
    -------
    float
    """
    if combine not in ("pooled", "mean"):
        raise ValueError(f"combine must be 'pooled' or 'mean' for a standard error, got {combine!r}")
    _check_method(method)
    m = x.shape[0]
    if m < 2:
        return math.nan
    groups = np.array_split(np.arange(m), min(m, _MAX_JACKKNIFE_GROUPS))
    if combine == "mean":
        single = _taus(x, method, "none", None)
        loo = np.array([np.delete(single, g).mean() for g in groups])
    else:
        loo = np.array([_taus(np.delete(x, g, axis=0), method, combine, None) for g in groups])
    g = len(groups)
    return float(math.sqrt((g - 1) / g * np.sum((loo - loo.mean()) ** 2)))


"""How well a sampler mixes: autocorrelation time, ESS, exact SLEM, class changes.

Brügge, Fischer & Igel (2013) judge samplers three ways, and so does this
module:

- :func:`integrated_autocorr_time` (§4.3): ``τ = Σ_{Δt=-∞}^{∞} R(Δt)`` of an
  energy along the chain; "τ consecutive samples are equivalent to one
  independent sample". It is computed from ArviZ's effective sample size,
  ``τ = n_chains · n_draws / ESS``; :func:`ess_free_energy` gives the ESS
  itself and :func:`compare_samplers` puts samplers side by side as in the
  paper's Table 2 (``τ_G``, ``τ_T``, gain ``1 - τ_T / τ_G``).
- :func:`exact_slem` (§4.1): the second largest eigenvalue modulus of the
  exact transition matrix of a tiny RBM.
- :func:`class_changes` (§4.4): how often, and how soon, a chain moves
  between the modes of Artificial Modes.

The default quantity is the sampler statistic ``"free_energy"`` that the
package's step methods record per draw in ``sample_stats``: the free energy
``F(v)`` of the visible state. The paper used the joint energy
``E(v_k, h_k)``; pass any other series (a ``(chain, draw)`` array, a
``DataArray``, or ``var_name``/``group`` of a ``DataTree``) to measure that.

This module needs NumPy, xarray and ArviZ (``arviz_stats``, imported on
first use), never PyMC.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import xarray as xr

from pymc_rbm.datasets import AMBIGUOUS, classify_modes

__all__ = [
    "StuckChainWarning",
    "chain_draws",
    "integrated_autocorr_time",
    "ess_free_energy",
    "autocorrelation",
    "SamplerComparison",
    "compare_samplers",
    "exact_slem",
    "ClassChanges",
    "NO_CHANGE",
    "class_changes",
    "RHAT_LIMIT",
    "OVERLAP_LIMIT",
    "mixing_problems",
]

#: ESS methods of :func:`arviz_stats.ess` accepted here (those that need no ``prob``), plus ``"ar"``.
_ARVIZ_METHODS = ("mean", "identity", "bulk", "z_scale", "sd", "folded", "median", "mad")
_COMBINE = ("pooled", "mean", "none")
_MIN_DRAWS = 4

#: ``first_change`` of :func:`class_changes` for a chain that never changed its class.
NO_CHANGE = -1


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


def _guarded_taus(x: np.ndarray, method: str, combine: str, order_max: int | None, what: str):
    """:func:`_taus` with stuck chains reported as τ = inf (and a :class:`StuckChainWarning`)."""
    if combine not in _COMBINE:
        raise ValueError(f"combine must be one of {_COMBINE}, got {combine!r}")
    _check_method(method)
    stuck = np.ptp(x, axis=1) == 0.0
    if not stuck.any():
        return _taus(x, method, combine, order_max)
    warnings.warn(
        f"{int(stuck.sum())} of {x.shape[0]} chain(s) of {what} never changed over {x.shape[1]} draws "
        f"(chains {np.flatnonzero(stuck)[:10].tolist()}{'...' if stuck.sum() > 10 else ''}): the sampler is "
        "stuck there, so the autocorrelation time is reported as inf (ArviZ would report ESS = n draws)",
        StuckChainWarning,
        stacklevel=3,
    )
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
    compare_samplers : several samplers side by side.
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
    return _guarded_taus(x, method, combine, order_max, what)


def ess_free_energy(
    idata,
    *,
    var_name: str = "free_energy",
    group: str = "sample_stats",
    method: str = "mean",
    per_second: bool = False,
    rows: str = "pooled",
):
    """Effective sample size of the free energy recorded by ``pm.sample``.

    ``ESS = n_chains · n_draws / τ`` with ``τ`` from
    :func:`integrated_autocorr_time` (``combine="pooled"``).

    A batched RBM variable, ``RBM("v", ..., shape=(K, n_visible))``, records
    one free energy per row, and the two ways of counting give numbers far
    apart; both are right, for different questions:

    - ``rows="pooled"`` (default): the rows count as chains, and the ESS is
      that of the average of ``F(v)`` over all rows and chains, close to the
      sum of the per-row ESS. This is the right count when the K rows are
      K independent chains of one distribution (the RBM alone, or rows that
      share one likelihood), the usual reason to batch: it says how many
      independent draws the whole run is worth.
    - ``rows="each"``: one ESS per row, each from that row's chains alone.
      This is what ``az.ess`` and ``az.summary`` report (one entry per
      element of ``sample_stats["free_energy"]``; they use the ``"bulk"``
      method by default, this function ``"mean"``). Use it when the rows are
      different distributions, e.g. K images each with its own data: pooling
      them would mix K different targets. With 4 chains of 1000 draws and
      K = 32 rows, ``"pooled"`` gives about 32 times what each row gives.

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
    rows : {"pooled", "each"}, default "pooled"
        How to count the rows of a batched variable, see above; the same
        for a variable with one row.

    Returns
    -------
    float, or ndarray of shape (K,) for ``rows="each"``
        0.0 for a stuck chain (``τ = inf``): for ``"pooled"`` when any
        chain of any row is stuck, for ``"each"`` in the rows concerned.

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
    >>> batched = rng.normal(size=(2, 1000, 3))  # 2 chains of a variable with 3 rows
    >>> ess_free_energy(batched, rows="each").shape, 5400 < ess_free_energy(batched) < 6600
    ((3,), True)
    """
    if rows not in ("pooled", "each"):
        raise ValueError(f'rows must be "pooled" or "each", got {rows!r}')
    x = chain_draws(idata, var_name=var_name, group=group)
    if rows == "pooled":
        tau = _guarded_taus(x, method, "pooled", None, var_name)
        ess = 0.0 if math.isinf(tau) else x.size / tau
    else:
        n_rows = x.shape[0] // _n_chains(idata, var_name, group)
        per_row = x.reshape(-1, n_rows, x.shape[1])  # row c * n_rows + s of x is row s of chain c
        ess = np.empty(n_rows)
        for r in range(n_rows):
            tau = _guarded_taus(per_row[:, r], method, "pooled", None, f"{var_name} row {r}")
            ess[r] = 0.0 if math.isinf(tau) else per_row[:, r].size / tau
    if per_second:
        try:
            seconds = float(idata["posterior"].attrs["sampling_time"])
        except (KeyError, TypeError, AttributeError, IndexError):
            raise ValueError(
                "per_second needs a DataTree from pm.sample with posterior.attrs['sampling_time']"
            ) from None
        ess = ess / seconds
    return ess


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


# -------------------------------------------------------------- comparison
def _fmt(value: float, se: float | None = None, *, percent: bool = False) -> str:
    if math.isnan(value):
        return "n/a"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    scale, unit = (100.0, " %") if percent else (1.0, "")
    digits = 2 if percent or abs(value) < 100 else 1
    text = f"{scale * value:.{digits}f}"
    if se is not None and math.isfinite(se):
        text += f" ± {scale * se:.{digits}f}"
    return text + unit


@dataclass(frozen=True)
class SamplerComparison:
    """Autocorrelation times of several samplers on one or more problems (Brügge, Fischer & Igel 2013, Table 2).

    Attributes
    ----------
    samplers : tuple of str
        Column labels; the first is the reference of the gains (the paper's
        Gibbs sampler ``G``).
    problems : tuple of str
        Row labels (models, quantities).
    tau : ndarray of shape (n_problems, n_samplers)
        Integrated autocorrelation times.
    tau_se : ndarray of shape (n_problems, n_samplers)
        Standard errors by the jackknife over chains (delete one group of
        chains at a time, at most 20 groups; for ``combine="mean"`` with up
        to 20 chains that is ``std(τ_chain) / sqrt(n_chains)``); NaN with
        one chain or an infinite ``τ``. They measure the spread between
        chains only: chains far shorter than ``τ`` can all miss the same
        slow mode.
    n_chains, n_draws : ndarray of int of shape (n_problems, n_samplers)
        Chains (sub-chains included) and draws per chain behind each ``τ``.
    quantity : str
        What ``τ`` is of.
    method, combine : str
        As for :func:`integrated_autocorr_time`.

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm.diagnostics import SamplerComparison
    >>> c = SamplerComparison(("G", "T"), ("MNIST",), np.array([[10.0, 8.0]]), np.full((1, 2), np.nan),
    ...                       np.full((1, 2), 4), np.full((1, 2), 1000), "F(v)", "mean", "pooled")
    >>> c.gain
    array([[0.2]])
    """

    samplers: tuple[str, ...]
    problems: tuple[str, ...]
    tau: np.ndarray
    tau_se: np.ndarray
    n_chains: np.ndarray
    n_draws: np.ndarray
    quantity: str
    method: str
    combine: str

    @property
    def gain(self) -> np.ndarray:
        """``1 - τ_s / τ_ref`` for every sampler ``s`` after the first, shape (n_problems, n_samplers - 1).

        The fraction of steps saved for the same variance of a chain
        average; Brügge, Fischer & Igel (2013): "17.28 % fewer steps" is a gain of 0.1728.
        """
        with np.errstate(invalid="ignore", divide="ignore"):
            return 1.0 - self.tau[:, 1:] / self.tau[:, :1]

    @property
    def gain_se(self) -> np.ndarray:
        """Standard error of :attr:`gain` by the delta method (independent runs), same shape."""
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = self.tau[:, 1:] / self.tau[:, :1]
            rel = np.sqrt((self.tau_se[:, 1:] / self.tau[:, 1:]) ** 2 + (self.tau_se[:, :1] / self.tau[:, :1]) ** 2)
            return ratio * rel

    def format(self, extra_columns: Mapping[str, Sequence[str]] | None = None) -> str:
        """The table as plain text.

        Parameters
        ----------
        extra_columns : mapping of str to sequence of str, optional
            More columns, one string per problem (e.g. a paper's figures).

        Returns
        -------
        str
        """
        ref = self.samplers[0]
        header = ["problem"] + [f"τ {s}" for s in self.samplers]
        header += [f"gain {s} vs {ref}" for s in self.samplers[1:]]
        rows = []
        gain, gain_se = self.gain, self.gain_se
        for i, problem in enumerate(self.problems):
            row = [problem] + [_fmt(t, se) for t, se in zip(self.tau[i], self.tau_se[i])]
            row += [_fmt(g, se, percent=True) for g, se in zip(gain[i], gain_se[i])]
            rows.append(row)
        for name, values in (extra_columns or {}).items():
            values = list(values)
            if len(values) != len(rows):
                raise ValueError(f"extra column {name!r} has {len(values)} entries for {len(rows)} problems")
            header.append(name)
            for row, value in zip(rows, values):
                row.append(str(value))
        widths = [max(len(r[k]) for r in [header, *rows]) for k in range(len(header))]
        line = lambda r: "  ".join(  # noqa: E731
            c.ljust(w) if k == 0 else c.rjust(w) for k, (c, w) in enumerate(zip(r, widths))
        )
        combine = {"pooled": "all chains pooled", "mean": "mean of single-chain τ", "none": "per chain"}
        title = (
            f"Integrated autocorrelation time τ of {self.quantity} "
            f"(method {self.method!r}, {combine.get(self.combine, self.combine)})"
        )
        note = f"gain = 1 - τ / τ {ref} (fewer steps for the same variance); ± one standard error"
        rule = "-" * len(line(header))
        return "\n".join([title, note, rule, line(header), rule, *map(line, rows), rule])

    def __str__(self) -> str:
        return self.format()


_MAX_JACKKNIFE_GROUPS = 20


def _jackknife_se(x: np.ndarray, method: str, combine: str) -> float:
    """Standard error of ``τ`` by the delete-a-group jackknife over chains; NaN with one chain.

    The chains are split into ``g = min(n_chains, 20)`` groups and ``τ``
    recomputed without each group: ``se² = (g - 1) / g Σ (τ_(k) - mean)²``.
    For ``combine="mean"`` with ``g = n_chains`` this is exactly
    ``std(τ_chain) / sqrt(n_chains)``.
    """
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


def _is_trace_mapping(value) -> bool:
    return isinstance(value, Mapping) and not isinstance(value, xr.DataTree | xr.Dataset | xr.DataArray)


def compare_samplers(
    traces,
    *,
    labels: Sequence[str] | None = None,
    problem: str = "",
    var_name: str = "free_energy",
    group: str = "sample_stats",
    method: str = "mean",
    combine: str = "pooled",
    quantity: str | None = None,
) -> SamplerComparison:
    """Autocorrelation times of two or more samplers side by side (Brügge, Fischer & Igel 2013, Table 2).

    Parameters
    ----------
    traces : mapping or sequence
        ``{sampler label: trace}`` for one problem, a sequence of traces
        (labelled by ``labels``), or ``{problem: {sampler label: trace}}``
        for a table with one row per problem (every problem with the same
        samplers). A trace is anything :func:`integrated_autocorr_time`
        accepts: a DataTree from ``pm.sample``, a DataArray, or an array of
        shape (n_chains, n_draws). The first sampler is the reference of the
        gains (Gibbs in the paper).
    labels : sequence of str, optional
        Sampler labels for a sequence of traces; default ``"0"``, ``"1"``, ...
    problem : str, default ""
        Row label of a one-problem table.
    var_name, group, method
        See :func:`integrated_autocorr_time`.
    combine : {"pooled", "mean"}, default "pooled"
        See :func:`integrated_autocorr_time`; ``"mean"`` is the paper's
        mean of single-chain ``τ``.
    quantity : str, optional
        How the title names the quantity; default ``var_name``.

    Returns
    -------
    SamplerComparison
        ``str()`` of it is the plain-text table: ``τ`` of each sampler, and
        ``gain = 1 - τ / τ_ref`` of each later sampler, with standard errors.

    Raises
    ------
    ValueError
        For fewer than two samplers or problems with different samplers.

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm.diagnostics import compare_samplers
    >>> def ar1(rho, rng):
    ...     x = np.zeros((8, 5000))
    ...     for t in range(1, 5000):
    ...         x[:, t] = rho * x[:, t - 1] + rng.normal(size=8)
    ...     return x
    >>> rng = np.random.default_rng(0)
    >>> table = compare_samplers({"G": ar1(0.8, rng), "T": ar1(0.6, rng)}, problem="AR(1)")
    >>> table.tau.round(0)  # (1 + ρ) / (1 - ρ) = 9 and 4
    array([[9., 4.]])
    >>> print(table)  # doctest: +ELLIPSIS
    Integrated autocorrelation time τ of free_energy ...
    """
    if combine not in ("pooled", "mean"):
        raise ValueError(f"combine must be 'pooled' or 'mean' for a comparison, got {combine!r}")
    if _is_trace_mapping(traces) and traces and all(_is_trace_mapping(v) for v in traces.values()):
        table = {str(p): dict(t) for p, t in traces.items()}
    elif _is_trace_mapping(traces):
        table = {problem: dict(traces)}
    else:
        traces = list(traces)
        names = [str(k) for k in range(len(traces))] if labels is None else [str(s) for s in labels]
        if len(names) != len(traces):
            raise ValueError(f"{len(names)} labels for {len(traces)} traces")
        table = {problem: dict(zip(names, traces))}
    samplers = tuple(str(s) for s in next(iter(table.values())))
    if len(samplers) < 2:
        raise ValueError(f"compare_samplers needs at least two samplers, got {list(samplers)}")
    for p, row in table.items():
        if tuple(str(s) for s in row) != samplers:
            raise ValueError(f"problem {p!r} has samplers {list(row)}, the first problem {list(samplers)}")
    shape = (len(table), len(samplers))
    tau, tau_se = np.empty(shape), np.empty(shape)
    n_chains, n_draws = np.empty(shape, dtype=np.int64), np.empty(shape, dtype=np.int64)
    for i, row in enumerate(table.values()):
        for j, trace in enumerate(row.values()):
            x = chain_draws(trace, var_name=var_name, group=group)
            n_chains[i, j], n_draws[i, j] = x.shape
            tau[i, j] = _guarded_taus(x, method, combine, None, var_name)
            tau_se[i, j] = _jackknife_se(x, method, combine) if math.isfinite(tau[i, j]) else np.nan
    return SamplerComparison(
        samplers=samplers,
        problems=tuple(table),
        tau=tau,
        tau_se=tau_se,
        n_chains=n_chains,
        n_draws=n_draws,
        quantity=var_name if quantity is None else quantity,
        method=method,
        combine=combine,
    )


# ------------------------------------------------------------------ exact
def exact_slem(params, kernel="gibbs", *, beta: float = 1.0) -> float:
    """Second largest eigenvalue modulus of one sweep's exact transition matrix (Brügge, Fischer & Igel 2013, §4.1).

    The chain's distance to equilibrium shrinks like ``SLEM**k`` after ``k``
    sweeps ("the convergence speed [...] is governed by the second largest
    eigenvector modulus"); ``1 / (1 - SLEM)`` is its relaxation time in sweeps.

    Parameters
    ----------
    params : RBMParams
        A tiny RBM: at most :data:`pymc_rbm.testing.MAX_JOINT_UNITS` units
        in all (the matrix has ``2**(n_visible + n_hidden)`` rows).
    kernel : {"gibbs", "flip"} or float, default "gibbs"
        Block Gibbs ``G = G_h G_v``, flip-the-state ``T = T_h T_v``, or the
        α mixture ``α T_i + (1 - α) G_i`` for a float ``α`` in [0, 1].
    beta : float, default 1.0
        Inverse temperature.

    Returns
    -------
    float
        In [0, 1]; 1 for a reducible chain.

    Raises
    ------
    ValueError
        When the model is too large to enumerate (saying how large, and
        what to use instead) or the kernel is unknown.

    See Also
    --------
    pymc_rbm.testing.transition_matrix, pymc_rbm.testing.slem

    Examples
    --------
    >>> from pymc_rbm import RBMParams
    >>> from pymc_rbm.diagnostics import exact_slem
    >>> params = RBMParams.random(3, 3, scale=6.0, bias_scale=0.0, rng=2)
    >>> exact_slem(params, "flip") < exact_slem(params, "gibbs")
    True
    """
    from pymc_rbm import testing

    n = params.n_visible + params.n_hidden
    if n > testing.MAX_JOINT_UNITS:
        raise ValueError(
            f"exact_slem builds the full transition matrix over 2**{n} joint states "
            f"({params.n_visible} visible + {params.n_hidden} hidden units); it handles at most "
            f"{testing.MAX_JOINT_UNITS} units in all. For larger models run the sampler and use "
            "integrated_autocorr_time or compare_samplers on the chains instead"
        )
    if isinstance(kernel, str) and kernel not in ("gibbs", "flip"):
        raise ValueError(f"kernel must be 'gibbs', 'flip' or a float alpha in [0, 1], got {kernel!r}")
    if not isinstance(kernel, str) and not isinstance(kernel, int | float | np.floating | np.integer):
        raise ValueError(f"kernel must be 'gibbs', 'flip' or a float alpha in [0, 1], got {kernel!r}")
    return testing.slem(testing.transition_matrix(params, kernel, beta))


# --------------------------------------------------------- class changes
class ClassChanges(NamedTuple):
    """Mode changes of chains (Brügge, Fischer & Igel 2013, §4.4, Tables 3 and 4).

    Attributes
    ----------
    n_changes : ndarray of int64 of shape (...)
        Number of class changes: consecutive classified samples of
        different classes (ambiguous samples discarded in between).
    first_change : ndarray of int64 of shape (...)
        Steps to the first class change: the index along the chain of the
        first sample whose class differs from the chain's first class;
        :data:`NO_CHANGE` (-1) when the class never changed.
    n_ambiguous : ndarray of int64 of shape (...)
        Samples equally near to two or more modes, discarded.
    """

    n_changes: np.ndarray
    first_change: np.ndarray
    n_ambiguous: np.ndarray


def class_changes(
    v, *, classify: Callable | None = classify_modes, draw_dim: str = "draw", unit_dim: str | None = None
) -> ClassChanges:
    """Count the class changes of chains, as Brügge, Fischer & Igel (2013, §4.4) do.

    "A sample belongs to the same class as the mode to which it has the
    smallest Hamming distance. Ambiguous samples which could not be assigned
    to a single class, because they were equally close to at least two of
    the modes, were discarded." Table 3 counts the class changes in a chain
    of 10000 samples, Table 4 "the number of sampling steps before the first
    class change" from a start drawn from the training data.

    Parameters
    ----------
    v : array_like of shape (..., n_steps, n_visible), or xarray.DataArray
        The chains, time on the second-to-last axis; ``v[..., 0, :]`` is
        the start state and ``v[..., k, :]`` the state after ``k`` steps.
        A DataArray (e.g. ``idata.posterior["v"]``) has its ``draw_dim``
        and ``unit_dim`` moved there. With
        ``classify=None``, the class labels themselves, shape (..., n_steps).
    classify : callable or None, default :func:`pymc_rbm.datasets.classify_modes`
        Maps states (..., n_visible) to integer classes, ``AMBIGUOUS`` (-1)
        for ties; the default is the nearest of the four Artificial Modes.
    draw_dim : str, default "draw"
        Time dimension of a DataArray.
    unit_dim : str, optional
        Unit dimension of a DataArray; default its last dimension (where
        ``pm.sample`` puts the units of a vector variable).

    Returns
    -------
    ClassChanges
        ``n_changes``, ``first_change`` (steps, or :data:`NO_CHANGE`) and
        ``n_ambiguous``, each of shape (...).

    Notes
    -----
    An ambiguous sample does not end a run of one class: the classes
    ``0, -1, 0`` hold no change and ``0, -1, 1`` one change, counted at the
    ``1``. When the start is ambiguous, the first classified sample sets the
    chain's first class.

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm.datasets import artificial_mode_prototypes
    >>> from pymc_rbm.diagnostics import class_changes
    >>> modes = artificial_mode_prototypes()
    >>> chain = modes[[0, 0, 1, 1, 0]]  # (5 steps, 16 units)
    >>> class_changes(chain)
    ClassChanges(n_changes=array(2), first_change=array(2), n_ambiguous=array(0))
    >>> class_changes(np.array([[2, -1, 2, 3], [1, 1, 1, 1]]), classify=None).n_changes
    array([1, 0])
    """
    if isinstance(v, xr.DataArray):
        if draw_dim not in v.dims:
            raise ValueError(f"the DataArray has dimensions {v.dims}, but no {draw_dim!r} (draw_dim)")
        if classify is None:
            v = v.transpose(..., draw_dim).values
        else:
            unit_dim = v.dims[-1] if unit_dim is None else unit_dim
            if unit_dim == draw_dim or unit_dim not in v.dims:
                raise ValueError(
                    f"the DataArray has dimensions {v.dims}; unit_dim must name its unit dimension, "
                    f"not {unit_dim!r}"
                )
            v = v.transpose(..., draw_dim, unit_dim).values
    if classify is None:
        labels = np.asarray(v)
        if labels.dtype.kind not in "biu":
            raise ValueError(f"with classify=None, v must hold integer class labels, got dtype {labels.dtype}")
        if labels.ndim == 0:
            raise ValueError("the class labels need a step axis, got a scalar")
    else:
        arr = np.asarray(v)
        if arr.ndim < 2:
            raise ValueError(f"v must have shape (..., n_steps, n_visible), got shape {arr.shape}")
        labels = np.asarray(classify(arr))
        if labels.shape != arr.shape[:-1]:
            raise ValueError(f"classify returned shape {labels.shape} for states of shape {arr.shape}")
    labels = labels.astype(np.int64, copy=False)
    batch = labels.shape[:-1]
    flat = labels.reshape(-1, labels.shape[-1])
    n_changes = np.zeros(len(flat), dtype=np.int64)
    first = np.full(len(flat), NO_CHANGE, dtype=np.int64)
    ambiguous = flat == AMBIGUOUS
    for r, row in enumerate(flat):
        idx = np.flatnonzero(~ambiguous[r])
        if idx.size == 0:
            continue
        c = row[idx]
        n_changes[r] = np.count_nonzero(c[1:] != c[:-1])
        other = np.flatnonzero(c != c[0])
        if other.size:
            first[r] = idx[other[0]]
    return ClassChanges(
        n_changes.reshape(batch),
        first.reshape(batch),
        np.count_nonzero(ambiguous, axis=-1).astype(np.int64).reshape(batch),
    )


#: R-hat of the free energy above which :func:`mixing_problems` says the chains disagree.
RHAT_LIMIT = 1.05
#: Total variation between two chains' state frequencies above which they are said to visit different states.
OVERLAP_LIMIT = 0.9


def _state_frequencies(states: np.ndarray) -> dict:
    keys, counts = np.unique(states, axis=0, return_counts=True)
    return {k.tobytes(): c / states.shape[0] for k, c in zip(keys, counts)}


def _chains_apart(rows: np.ndarray) -> float:
    """Largest total variation between two chains' state frequencies (0 when states rarely repeat)."""
    n_chains, n_draws = rows.shape[:2]
    worst = 0.0
    for r in range(rows.shape[2]):
        freqs = [_state_frequencies(rows[c, :, r]) for c in range(n_chains)]
        if any(len(f) > n_draws // 2 for f in freqs):  # states rarely repeat: frequencies say nothing
            continue
        for a in range(n_chains):
            for b in range(a + 1, n_chains):
                keys = set(freqs[a]) | set(freqs[b])
                tv = 0.5 * sum(abs(freqs[a].get(k, 0.0) - freqs[b].get(k, 0.0)) for k in keys)
                worst = max(worst, tv)
    return worst


def _sample_stat(stats, key: str, shape: tuple[int, ...]):
    """A sampler stat as a float array of shape (chain, draw, ...), or None when absent or of another shape."""
    if stats is None or key not in stats:
        return None
    values = stats[key].transpose("chain", "draw", ...).values
    if values.dtype == object:  # PyMC's trace stores vector stats of some steps as objects
        values = np.stack(values.ravel()).reshape(*values.shape, -1)
    values = values.astype(np.float64)
    return values if values.shape[:2] == shape else None


def _mixing_inputs(tree, name: str):
    """The draws of ``name`` and the step methods' stats of a ``pm.sample`` result, for :func:`mixing_problems`."""
    if isinstance(tree, xr.Dataset):  # a posterior group on its own
        posterior, stats = tree, None
    else:
        if "posterior" not in tree.children:
            raise ValueError(f"the DataTree has no group 'posterior'; it has {sorted(tree.children)}")
        posterior = tree["posterior"]
        stats = tree["sample_stats"] if "sample_stats" in tree.children else None
    if name not in posterior.data_vars:
        raise ValueError(
            f"the posterior has no variable {name!r} (pass the RBM variable's name as name=); "
            f"it has {sorted(posterior.data_vars)}"
        )
    values = posterior[name].transpose("chain", "draw", ...).values
    chains_draws = values.shape[:2]
    found = {key: _sample_stat(stats, key, chains_draws)
             for key in ("swap_accept_pairs", "round_trips", "n_temperatures")}
    fe = _sample_stat(stats, "free_energy", chains_draws)
    # F(v) recorded per draw (and per row of a batched variable); of no use if it belongs to another variable
    found["free_energy"] = fe if fe is not None and fe.size == int(np.prod(values.shape[:-1])) else None
    return values, found


def mixing_problems(
    draws,
    free_energy=None,
    *,
    name: str = "v",
    swap_accept_pairs=None,
    round_trips=None,
    n_temperatures=None,
    tempered: bool = False,
) -> list[str]:
    """What is wrong with the chains of an RBM variable, in words (empty when nothing is seen).

    An exactly invariant sampler that does not move between the modes of
    the target gives wrong answers without an error; these checks catch the
    usual signs:

    - a chain (or a row of a batched variable) whose state never changed
      while other chains saw other states (chains that all hold one state,
      having started apart, point to a concentrated distribution instead);
    - chains that disagree: the rank-normalised R-hat of the free energy
      ``F(v)`` across chains above :data:`RHAT_LIMIT` (ArviZ's ``rhat``), or,
      where every chain revisits its states, two chains whose visited states
      barely overlap (total variation between their state frequencies above
      :data:`OVERLAP_LIMIT`: modes of equal free energy that R-hat cannot
      tell apart);
    - replica exchange whose ladder does not carry states: a neighbouring
      pair that never swapped, or no replica that crossed the whole ladder.

    Parameters
    ----------
    draws : array_like of shape (n_chains, n_draws, ..., n_visible), or xarray.DataTree
        The posterior draws of the variable, or what ``pm.sample`` returned:
        then the draws are ``posterior[name]``, and ``free_energy`` and the
        ladder statistics, where not given, are read from the
        ``sample_stats`` the package's step methods record (``free_energy``,
        ``swap_accept_pairs``, ``round_trips``, ``n_temperatures``), as
        ``pm.sample`` does after sampling.
    free_energy : array_like of shape (n_chains, n_draws, ...), optional
        ``F(v)`` of each draw (per row of a batched variable).
    name : str, default "v"
        The variable's name: used in the messages, and read from a DataTree.
    swap_accept_pairs : array_like of shape (n_chains, n_draws, n_pairs), optional
        Swap acceptance probability of each pair per draw (NaN where not
        attempted or beyond the ladder), as ``ReplicaExchange`` records it;
        a pair whose mean is below ``1 / n_draws`` counts as never swapping.
    round_trips : array_like of shape (n_chains, n_draws), optional
        Cumulative round trips of the replicas.
    n_temperatures : array_like of shape (n_chains, n_draws), optional
    tempered : bool, default False
        Whether the chains came from ``ReplicaExchange`` (changes the advice).

    Returns
    -------
    list of str

    Raises
    ------
    ValueError
        For a DataTree without a ``posterior`` group or without the variable ``name``.

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm.diagnostics import mixing_problems
    >>> draws = np.zeros((2, 50, 4), dtype=np.int8)
    >>> draws[1, :, 0] = 1  # chain 1 holds another state than chain 0, and neither moves
    >>> len(mixing_problems(draws))
    1
    """
    if isinstance(draws, xr.DataTree | xr.Dataset):
        draws, found = _mixing_inputs(draws, name)
        free_energy = found["free_energy"] if free_energy is None else free_energy
        swap_accept_pairs = found["swap_accept_pairs"] if swap_accept_pairs is None else swap_accept_pairs
        round_trips = found["round_trips"] if round_trips is None else round_trips
        n_temperatures = found["n_temperatures"] if n_temperatures is None else n_temperatures
        tempered = tempered or n_temperatures is not None
    out = []
    x = np.asarray(draws)
    if x.ndim < 3 or x.shape[1] < 2:
        return out
    advice = (
        "Give its ReplicaExchange step more rungs (max_temperatures), sweeps or draws"
        if tempered
        else "Sample it with ExactDraws where its smaller layer can be enumerated, else ReplicaExchange (what "
        "pm.sample picks for RBMs with constant parameters), more sweeps per draw, or wormhole moves"
    )
    n_chains, n_draws = x.shape[:2]
    rows = x.reshape(n_chains, n_draws, -1, x.shape[-1])
    constant = np.all(rows == rows[:, :1], axis=(1, 3))  # (n_chains, n_rows)
    # a chain that kept one state is stuck when another chain saw other states of that row (all chains start
    # apart, so chains that all settle on one state say the distribution is concentrated there)
    stuck = np.zeros_like(constant)
    for c, r in zip(*np.nonzero(constant)):
        others = np.delete(rows[:, :, r], c, axis=0)
        stuck[c, r] = others.size > 0 and bool(np.any(others != rows[c, 0, r]))
    if stuck.any():
        chains = np.flatnonzero(stuck.any(axis=1)).tolist()
        out.append(
            f"The RBM variable '{name}' did not move in chain(s) {chains}: {int(stuck.sum())} chain-row(s) kept one "
            f"state for all {n_draws} draws while other chains saw other states. Those draws are not samples of "
            f"its distribution: the sampler is stuck in a mode. {advice}."
        )
    if free_energy is not None and n_chains >= 2:
        fe = np.asarray(free_energy, dtype=np.float64).reshape(n_chains, n_draws, -1)
        worst = 1.0
        for r in range(fe.shape[2]):
            series = fe[:, :, r]
            still = np.ptp(series, axis=1) == 0.0
            if still.any():  # ArviZ would divide by a zero within-chain variance
                seen = series[~still]
                held = series[still, 0]
                if seen.size and not all(np.isclose(seen, f, rtol=0.0, atol=1e-9).any() for f in held):
                    worst = math.inf  # a chain held a free energy that no moving chain ever had
                if np.ptp(held) > 1e-9:
                    worst = math.inf  # still chains hold different free energies
                continue
            worst = max(worst, float(_array_stats().rhat(series, chain_axis=0, draw_axis=1)))
        if worst > RHAT_LIMIT:
            out.append(
                f"The chains of the RBM variable '{name}' disagree: the R-hat of its free energy is {worst:.3f} "
                f"(> {RHAT_LIMIT}). They sit in different modes and do not move between them; their draws do "
                f"not represent its distribution. {advice}, and compare the chains before trusting them."
            )
    if n_chains >= 2 and not out:
        apart = _chains_apart(rows)
        if apart > OVERLAP_LIMIT:
            out.append(
                f"The chains of the RBM variable '{name}' visit different states: the total variation between "
                f"two chains' state frequencies is {apart:.2f} (> {OVERLAP_LIMIT}). Each stays in its own "
                f"mode; their draws do not represent its distribution. {advice}."
            )
    if swap_accept_pairs is not None and n_temperatures is not None:
        k = np.asarray(n_temperatures)
        pairs = np.asarray(swap_accept_pairs, dtype=np.float64)
        for c in range(pairs.shape[0]):
            if k[c].max() < 2:
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                mean = np.nanmean(pairs[c], axis=0)[: int(k[c, -1]) - 1]
            never = np.flatnonzero(mean < 1.0 / n_draws)  # fewer than one swap expected in the whole run
            if never.size:
                out.append(
                    f"Replica exchange for '{name}', chain {c}: the pair(s) of rungs {never.tolist()} never "
                    "swapped. States cannot cross the ladder there; allow more rungs (max_temperatures) or "
                    "a longer tune phase."
                )
            elif round_trips is not None and np.asarray(round_trips)[c, -1] == 0:
                out.append(
                    f"Replica exchange for '{name}', chain {c}: no replica crossed the ladder and back in "
                    f"{n_draws} draws; the tempered replicas did not reach the model. Use more sweeps per draw "
                    "or more draws."
                )
    return out

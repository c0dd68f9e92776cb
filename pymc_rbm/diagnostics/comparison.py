"""Autocorrelation times of several samplers side by side (Brügge, Fischer & Igel 2013, Table 2).

:func:`compare_samplers` puts the ``τ`` of each sampler, from
:mod:`pymc_rbm.diagnostics.autocorr`, into a :class:`SamplerComparison`:
``τ_G``, ``τ_T`` and the gain ``1 - τ_T / τ_G`` with standard errors.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import xarray as xr

from pymc_rbm.diagnostics.autocorr import chain_draws, chain_taus, tau_standard_error

__all__ = ["SamplerComparison", "compare_samplers"]


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
        As for :func:`~pymc_rbm.diagnostics.autocorr.integrated_autocorr_time`.

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
        samplers). A trace is anything :func:`~pymc_rbm.diagnostics.autocorr.integrated_autocorr_time`
        accepts: a DataTree from ``pm.sample``, a DataArray, or an array of
        shape (n_chains, n_draws). The first sampler is the reference of the
        gains (Gibbs in the paper).
    labels : sequence of str, optional
        Sampler labels for a sequence of traces; default ``"0"``, ``"1"``, ...
    problem : str, default ""
        Row label of a one-problem table.
    var_name, group, method
        See :func:`~pymc_rbm.diagnostics.autocorr.integrated_autocorr_time`.
    combine : {"pooled", "mean"}, default "pooled"
        See :func:`~pymc_rbm.diagnostics.autocorr.integrated_autocorr_time`; ``"mean"`` is the paper's
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
            tau[i, j] = chain_taus(x, method=method, combine=combine, what=var_name)
            tau_se[i, j] = tau_standard_error(x, method=method, combine=combine) if math.isfinite(tau[i, j]) else np.nan
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


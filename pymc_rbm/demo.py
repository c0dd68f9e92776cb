"""The pymc-rbm demo: the bundled RBM as a PyMC distribution, and what it takes to sample it.

Run it with ``./dev demo`` (or ``python -m pymc_rbm.demo --output DIR``). It
loads the RBM bundled with the package (fitted to 4x4 bars and stripes),
computes log Z exactly, the log-likelihood of the data, draws exact samples
through ``pm.sample_prior_predictive`` and saves them as an image. Then it
samples the model through ``pm.sample`` five ways: the local samplers block
Gibbs and flip-the-state (``step=``), flip-the-state next to point wormholes
built from the data (Hinton, Welling & Mnih 2003), replica exchange
(``step=ReplicaExchange(...)``, the default for RBMs too large to
enumerate), and ``pm.sample()`` with no step, which for this model (16
hidden units, so its 65536 hidden states can be enumerated) draws exact,
independent samples (``ExactDraws``). For each it prints how often the
chains move between the 30 patterns, the number of distinct states visited,
and the total variation to the exact distribution (over all 65536 states and
over the patterns), and it saves the pattern of every draw, chain by chain,
beside the pattern frequencies against their exact probabilities
(``pattern_mixing.png``): the local samplers stay in the pattern they start
in, replica exchange and the default move between them. Last, Brügge, Fischer & Igel's (2013)
Table 2 compares the autocorrelation time τ and the ESS of F(v) under
flip-the-state and Gibbs. On the bundled RBM itself τ is undefined for both
(their chains never leave their first pattern), so the table is computed on
the same RBM at inverse temperature :data:`TABLE2_BETA` (weights and biases
scaled by it), a less sharp model on which both move between the patterns;
``autocorrelation.png`` plots the autocorrelation of F(v) behind it.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import logging
import math
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

#: Label of ``pm.sample()`` with no ``step`` in the comparison.
DEFAULT_LABEL = "default: pm.sample()"
#: Label of ``step=ReplicaExchange(...)`` in the comparison.
TEMPERED_LABEL = "replica exchange"
#: The local samplers Table 2 compares, the reference (Gibbs) first.
LOCAL_LABELS = ("Gibbs", "flip-the-state")
#: Inverse temperature of the bundled RBM on which the demo computes Table 2: the largest of 0.3, 0.4, 0.5, 0.6
#: at which the pattern frequencies of both local samplers are within 0.05 of exact (total variation) in
#: 4 chains x 2000 draws; at 1 they never leave the pattern they start in.
TABLE2_BETA = 0.4


class Run(NamedTuple):
    """One sampler's ``pm.sample`` run in the comparison."""

    trace: object
    seconds: float


class PatternMixing(NamedTuple):
    """How one sampler's chains cover the patterns of a sharp model.

    Attributes
    ----------
    changes : ndarray of int64 of shape (n_chains,)
        Pattern changes per chain (Brügge, Fischer & Igel 2013, §4.4: states
        that are no pattern do not end a run).
    changes_per_1000 : float
        Pattern changes per 1000 draws, all chains together.
    n_states : int
        Distinct visible states in all the draws.
    tv_states : float or None
        Total variation between the draws' state frequencies and the exact
        distribution over all ``2**n_visible`` states (None when not
        enumerated).
    tv_patterns : float
        Total variation between the pattern frequencies (states that are no
        pattern pooled as one class) and their exact probabilities.
    frequencies : ndarray of shape (n_patterns + 1,)
        Frequency of each pattern in the draws, then of "no pattern".
    labels : ndarray of int64 of shape (n_chains, n_draws)
        Pattern index of every draw, -1 for no pattern.
    """

    changes: np.ndarray
    changes_per_1000: float
    n_states: int
    tv_states: float | None
    tv_patterns: float
    frequencies: np.ndarray
    labels: np.ndarray

    @property
    def stuck_chains(self) -> np.ndarray:
        """Indices of the chains that never left their first pattern."""
        return np.flatnonzero(self.changes == 0)


def _save_grid(draws: np.ndarray, path: Path, side: int = 4, columns: int = 16) -> None:
    """Save binary images of ``side x side`` pixels as one grid (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = int(np.ceil(len(draws) / columns))
    fig, axes = plt.subplots(rows, columns, figsize=(columns * 0.6, rows * 0.6))
    for ax, image in zip(np.ravel(axes), list(draws) + [None] * (rows * columns - len(draws))):
        if image is None:
            ax.set_axis_off()
            continue
        ax.imshow(image.reshape(side, side), cmap="gray_r", vmin=0, vmax=1, interpolation="nearest")
        ax.set_xticks([])
        ax.set_yticks([])  # the frame stays, so an all-zero image is still visible
    fig.suptitle("Exact draws from the bundled RBM (pm.sample_prior_predictive)", fontsize=9)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)


def pattern_mixing(trace, patterns, exact_patterns, exact_states=None) -> PatternMixing:
    """Pattern changes, distinct states and total variation to exact of one ``pm.sample`` run.

    Parameters
    ----------
    trace : DataTree or InferenceData
        From ``pm.sample`` on a model with one RBM variable ``"v"`` of shape (n_visible,).
    patterns : ndarray of shape (n_patterns, n_visible)
        The states that carry the model's mass, all distinct.
    exact_patterns : ndarray of shape (n_patterns,)
        Their exact probabilities.
    exact_states : ndarray of shape (2**n_visible,), optional
        Exact probability of every state in :func:`pymc_rbm.estimators.binary_states`
        order (e.g. ``exp`` of :func:`pymc_rbm.enumeration.log_marginal_visible`).

    Returns
    -------
    PatternMixing
    """
    from pymc_rbm.diagnostics import class_changes
    from pymc_rbm.testing import state_index

    v = np.asarray(trace.posterior["v"].values)  # (chain, draw, n_visible)
    match = (v[..., None, :] == patterns).all(axis=-1)
    labels = np.where(match.any(axis=-1), match.argmax(axis=-1), -1)
    changes = class_changes(labels, classify=None).n_changes
    flat = labels.ravel()
    freq = np.append(np.bincount(flat[flat >= 0], minlength=len(patterns)), np.sum(flat < 0)) / flat.size
    exact = np.append(exact_patterns, 1.0 - np.sum(exact_patterns))
    index = state_index(v.reshape(-1, v.shape[-1]))
    tv_states = None
    if exact_states is not None:
        counts = np.bincount(index, minlength=len(exact_states)) / index.size
        tv_states = 0.5 * float(np.abs(counts - exact_states).sum())
    return PatternMixing(
        changes=changes,
        changes_per_1000=1000.0 * float(changes.sum()) / flat.size,
        n_states=int(np.unique(index).size),
        tv_states=tv_states,
        tv_patterns=0.5 * float(np.abs(freq - exact).sum()),
        frequencies=freq,
        labels=labels,
    )


class _QuietFilter(logging.Filter):
    """Drops PyMC's progress records and its "Only N samples per chain" warning, which a warm-up run earns."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.WARNING and "samples per chain" not in record.getMessage()


@contextlib.contextmanager
def _quiet():
    """Around a ``pm.sample`` whose progress the log does not need (a warm-up run, Table 2's runs).

    Its progress and short-run warning say nothing about the runs measured;
    other warnings are kept.
    """
    logger, quiet = logging.getLogger("pymc.sampling.mcmc"), _QuietFilter()
    logger.addFilter(quiet)
    try:
        yield
    finally:
        logger.removeFilter(quiet)


def _timed_sample(steps, *, draws: int, tune: int, chains: int, seed: int) -> Run:
    """``pm.sample`` in the current model after a short warm-up run, so that the time is sampling, not compilation.

    ``steps`` is a callable that returns the step(s), or None for
    ``pm.sample``'s own choice.
    """
    import pymc as pm

    common = dict(cores=1, random_seed=seed, progressbar=False, compute_convergence_checks=False)
    step = (lambda: {}) if steps is None else (lambda: {"step": steps()})
    with _quiet():
        pm.sample(draws=10, tune=0, chains=1, **step(), **common)
    start = time.perf_counter()
    trace = pm.sample(draws=draws, tune=tune, chains=chains, **step(), **common)
    return Run(trace, time.perf_counter() - start)


def _tau_cell(trace, mixing: PatternMixing | None) -> str:
    """τ of F(v) (all chains pooled), or "stuck" when a chain never left its first pattern."""
    from pymc_rbm.diagnostics import integrated_autocorr_time

    if mixing is not None and mixing.stuck_chains.size:
        return "stuck"
    tau = integrated_autocorr_time(trace)
    return "inf" if math.isinf(tau) else f"{tau:.2f}"


def _print_mixing_table(runs: dict, mixing: dict, *, draws: int, tune: int, chains: int) -> None:
    header = ["sampler", "time", "pattern changes", "chains that", "states", "TV to exact", "TV to exact", "τ F(v)"]
    sub = ["", "s", "per 1000 draws", "changed pattern", "visited", "(all states)", "(patterns)", "(draws)"]
    rows = []
    for label, run in runs.items():
        m = mixing[label]
        rows.append([
            label,
            f"{run.seconds:.1f}",
            f"{m.changes_per_1000:.1f}",
            f"{len(m.changes) - m.stuck_chains.size} of {len(m.changes)}",
            str(m.n_states),
            "n/a" if m.tv_states is None else f"{m.tv_states:.3f}",
            f"{m.tv_patterns:.3f}",
            _tau_cell(run.trace, m),
        ])
    widths = [max(len(r[k]) for r in [header, sub, *rows]) for k in range(len(header))]

    def line(cells):
        return "  ".join(c.ljust(w) if k == 0 else c.rjust(w) for k, (c, w) in enumerate(zip(cells, widths)))

    rule = "-" * len(line(header))
    print(f"pm.sample on the bundled RBM, {chains} chains x {draws} draws after {tune} tuning draws each "
          "(time: tuning and draws, after a warm-up run that compiled the model and the sampler):")
    print("\n".join([rule, line(header), line(sub), rule, *map(line, rows), rule]))
    print("stuck: at least one chain never left the pattern it started in, so no autocorrelation time of its "
          "draws is meaningful (F(v) varies only inside one pattern)")


def _default_steps(model) -> str:
    """The step(s) ``pm.sample()`` with no ``step`` gives the model's variables, by class name."""
    from pymc.sampling.mcmc import assign_step_methods
    from pymc.step_methods import STEP_METHODS

    with model:
        _, selected = assign_step_methods(model, None, methods=STEP_METHODS)
    return ", ".join(sorted(cls.__name__ for cls in selected))


def _print_ladder(trace, label: str) -> None:
    """One line on the replica-exchange ladder of a run that used replica exchange."""
    stats = trace.sample_stats
    if "n_temperatures" not in stats:
        return
    n_temps = stats["n_temperatures"].values[:, -1]
    betas = stats["betas"].values[:, -1]
    hot = np.nanmin(betas, axis=-1)
    trips = stats["round_trips"].values[:, -1]
    rungs = f"{n_temps.min()}" if n_temps.min() == n_temps.max() else f"{n_temps.min()}-{n_temps.max()}"
    barrier = float(np.nanmean(stats["barrier"].values[:, -1]))
    print(f"  {label}: ladder of {rungs} rungs from beta = {hot.min():.2f} to 1 "
          f"(adapted in tuning, then frozen), communication barrier {barrier:.2f}, swap acceptance "
          f"{float(stats['swap_accept'].mean()):.2f}, round trips per chain {int(trips.min())}-{int(trips.max())}")


def _save_pattern_plot(runs: dict, mixing: dict, patterns: np.ndarray, exact_patterns: np.ndarray,
                       path: Path) -> None:
    """Pattern index of every draw per chain (left) and pattern frequencies against exact (right), per sampler.

    A key under the panels shows the pattern behind every index.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n_patterns = len(exact_patterns)
    side = math.isqrt(patterns.shape[1])
    exact = np.append(exact_patterns, 1.0 - exact_patterns.sum())
    fig = plt.figure(figsize=(11, 2.3 * len(runs) + 1.3))
    grid = fig.add_gridspec(len(runs) + 1, 2, width_ratios=[2.2, 1], height_ratios=[1.0] * len(runs) + [0.5])
    axes = np.array([[fig.add_subplot(grid[r, 0]), fig.add_subplot(grid[r, 1])] for r in range(len(runs))])
    for (label, run), (ax_trace, ax_freq) in zip(runs.items(), axes):
        m = mixing[label]
        n_chains, n_draws = m.labels.shape
        for c in range(n_chains):
            offset = 0.6 * (c / max(n_chains - 1, 1) - 0.5)  # chains side by side, so that stuck ones stay apart
            y = np.where(m.labels[c] >= 0, m.labels[c], -2) + offset
            ax_trace.plot(np.arange(n_draws), y, ".", ms=1.5, color=f"C{c}", label=f"chain {c}")
        ax_trace.set_ylim(-3, n_patterns)
        ax_trace.set_yticks([-2, 0, 10, 20, n_patterns - 1], ["none", "0", "10", "20", str(n_patterns - 1)])
        ax_trace.set_ylabel("pattern index")
        ax_trace.set_title(
            f"{label}: {int(m.changes.sum())} pattern changes, {len(m.changes) - m.stuck_chains.size} of "
            f"{n_chains} chains left their first pattern", fontsize=8, loc="left")
        x = np.arange(n_patterns + 1)
        ax_freq.bar(x, exact, color="lightgray", label="exact probability")
        ax_freq.plot(x, m.frequencies, "o", ms=3, color="C3", label="frequency in the draws")
        ax_freq.set_xticks([0, 10, 20, n_patterns], ["0", "10", "20", "none"])
        ax_freq.set_ylabel("probability")
        ax_freq.set_title(f"frequencies vs exact, TV {m.tv_patterns:.2f}", fontsize=8, loc="left")
    axes[-1, 0].set_xlabel("draw (after tuning)")
    axes[-1, 1].set_xlabel("pattern index")
    axes[0, 0].legend(fontsize=7, markerscale=5, ncol=n_chains, loc="lower right", bbox_to_anchor=(1.0, 1.12),
                      frameon=False, handletextpad=0.1, columnspacing=0.8)
    axes[0, 1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(0.0, 1.3), ncol=2, frameon=False)
    # the key: the 4x4 image of every pattern index; "none" is any state that is no pattern
    key = grid[len(runs), :].subgridspec(1, n_patterns + 1, wspace=0.25)
    for k in range(n_patterns + 1):
        ax = fig.add_subplot(key[0, k])
        ax.set_xticks([])
        ax.set_yticks([])
        if k < n_patterns:
            ax.imshow(patterns[k].reshape(side, side), cmap="gray_r", vmin=0, vmax=1, interpolation="nearest")
        else:
            ax.set_box_aspect(1)
            ax.text(0.5, 0.5, "any\nother\nstate", ha="center", va="center", fontsize=6, transform=ax.transAxes)
        ax.set_xlabel("none" if k == n_patterns else str(k), fontsize=7, labelpad=2)
        if k == 0:
            ax.set_title("key: pattern index and its 4x4 image (black = 1)", fontsize=8, loc="left")
    fig.suptitle("Which of the 30 bars-and-stripes patterns each draw is, chain by chain", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def _save_autocorrelation_plot(traces: dict, table, path: Path) -> None:
    """Autocorrelation of F(v) in the runs behind Table 2, each sampler's τ and ESS in the legend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from pymc_rbm.diagnostics import autocorrelation

    max_lag = int(min(15, table.n_draws.min() - 1))
    fig, ax = plt.subplots(figsize=(5.5, 3.4))
    for k, (label, trace) in enumerate(traces.items()):
        tau, se, ess = table.tau[0, k], table.tau_se[0, k], _ess(table)[k]
        if not math.isfinite(tau):
            ax.plot([], [], " ", label=f"{label}: chains stuck in one pattern, τ undefined")
            continue
        ax.plot(np.arange(max_lag + 1), autocorrelation(trace, max_lag=max_lag), marker=".", color=f"C{k}",
                label=f"{label}: τ = {tau:.2f} ± {se:.2f}, ESS {ess:.0f}")
    ax.axhline(0, color="gray", lw=0.5)
    ax.set_xlabel("lag (draws)")
    ax.set_ylabel("autocorrelation of F(v)")
    ax.set_title(f"Table 2's runs, {table.problems[0]}: τ = 1 + 2 Σ autocorrelation", fontsize=9)
    ax.legend(fontsize=7)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)


def _ess(table) -> np.ndarray:
    """ESS of F(v) of every sampler of a one-problem Table 2: chains x draws / τ, shape (n_samplers,)."""
    return (table.n_chains * table.n_draws / table.tau)[0]


def _scaled(params, beta: float):
    """The RBM at inverse temperature ``beta``: weights and biases times ``beta``."""
    from pymc_rbm import RBMParams

    return RBMParams(beta * params.W, beta * params.vbias, beta * params.hbias)


def sampler_comparison(
    params,
    *,
    draws: int,
    chains: int,
    seed: int,
    output: Path,
    tune: int = 1000,
    patterns=None,
    data=None,
    exact_states=None,
    table_beta: float = TABLE2_BETA,
):
    """Sample ``params`` through ``pm.sample`` with several samplers and compare them honestly.

    Always samples with :class:`~pymc_rbm.BlockGibbs` and
    :class:`~pymc_rbm.FlipTheState` (``step=``) and prints Brügge, Fischer &
    Igel's (2013) Table 2 (τ and ESS of the free energy, gain of
    flip-the-state) from runs of both on the RBM at inverse temperature
    ``table_beta``, and saves the autocorrelation of F(v) in those runs to
    ``output / "autocorrelation.png"``.

    With ``patterns`` (the states that carry the model's mass, shape
    (n_patterns, n_visible)) it also samples with
    :class:`~pymc_rbm.ReplicaExchange` and with ``pm.sample()``'s default
    step and, with ``data``, with flip-the-state next to point wormholes
    built from the data (Hinton, Welling & Mnih 2003); prints, for every
    sampler, the pattern changes (as Brügge, Fischer & Igel (2013) §4.4
    count class changes: states that are no pattern do not end a run), the
    distinct states visited and the total variation to the exact
    distribution; and saves the pattern of every draw per chain beside the
    pattern frequencies against the exact probabilities to
    ``output / "pattern_mixing.png"``. For a model whose mass sits on a few
    sharp modes that is the mixing that matters: F(v) then mostly varies
    inside a mode, so a sampler with a chain that never left its first
    pattern is reported as stuck (τ = inf), not with the τ of its draws.
    That is why Table 2 is computed at a ``table_beta`` below 1 on such a
    model: the less sharp RBM lets both local samplers move between the
    patterns, and their τ means what it says.

    Parameters
    ----------
    params : RBMParams
    draws, chains, tune, seed : int
        Of every ``pm.sample`` run (one core; each run of the first table
        after a 10-draw warm-up run, so that the times printed are
        sampling, not compilation).
    output : Path
        Existing folder for the images.
    patterns : array_like of shape (n_patterns, n_visible), optional
    data : array_like of shape (n_rows, n_visible), optional
        Training data, for the wormholes (with ``patterns`` only).
    exact_states : ndarray of shape (2**n_visible,), optional
        Exact probability of every visible state, for the total variation
        over all states; default computed by enumeration when
        ``n_visible <= 20``.
    table_beta : float in (0, 1], default :data:`TABLE2_BETA`
        Inverse temperature of the RBM Table 2 is computed on (its weights
        and biases times ``table_beta``); 1 uses the runs of the first table.

    Returns
    -------
    SamplerComparison
        Table 2, with ``τ = inf`` for a sampler with a chain that got stuck.
    """
    import pymc as pm

    from pymc_rbm import RBM, BlockGibbs, FlipTheState, ReplicaExchange, WormholeMetropolis
    from pymc_rbm.diagnostics import compare_samplers
    from pymc_rbm.estimators import log_likelihood
    from pymc_rbm.enumeration import log_marginal_visible

    if not 0.0 < table_beta <= 1.0:
        raise ValueError(f"table_beta must lie in (0, 1], got {table_beta!r}")
    sampling = dict(draws=draws, tune=tune, chains=chains, seed=seed)
    samplers = {"Gibbs": lambda v: BlockGibbs([v]), "flip-the-state": lambda v: FlipTheState([v])}
    if patterns is not None:
        if data is not None:
            samplers["flip + point wormholes"] = lambda v: [
                FlipTheState([v]), WormholeMetropolis([v], data=data, kind="point")
            ]
        samplers[TEMPERED_LABEL] = lambda v: ReplicaExchange([v])
        samplers[DEFAULT_LABEL] = None
    print("(each sampler first makes 10 draws that are not kept, to compile it; the first can take a minute)")
    runs = {}
    for label, make in samplers.items():
        with pm.Model() as model:
            v = RBM("v", params.W, params.vbias, params.hbias)
            if make is None:
                print(f"{DEFAULT_LABEL} gives v the step {_default_steps(model)}")
            runs[label] = _timed_sample(None if make is None else (lambda make=make, v=v: make(v)), **sampling)

    def mixing_of(traces: dict, rbm, states=None) -> dict:
        exact_patterns = np.exp(log_likelihood(rbm, patterns))
        if states is None and rbm.n_visible <= 20:
            states = np.exp(log_marginal_visible(rbm))
        return {label: pattern_mixing(trace, patterns, exact_patterns, states) for label, trace in traces.items()}

    mixing = {}
    if patterns is not None:
        patterns = np.asarray(patterns)
        mixing = mixing_of({label: run.trace for label, run in runs.items()}, params, exact_states)
        _print_mixing_table(runs, mixing, draws=draws, tune=tune, chains=chains)
        for label in (TEMPERED_LABEL, DEFAULT_LABEL):
            _print_ladder(runs[label].trace, label)
        path = output / "pattern_mixing.png"
        exact_patterns = np.exp(log_likelihood(params, patterns))
        _save_pattern_plot(runs, mixing, patterns, exact_patterns, path)
        print(f"saved the pattern of every draw per chain and the pattern frequencies vs exact to {path}")

    if table_beta == 1.0:
        problem, local = "bundled RBM", {label: runs[label].trace for label in LOCAL_LABELS}
        local_mixing = {label: mixing[label] for label in LOCAL_LABELS if label in mixing}
    else:
        problem, warmer, local = f"bundled RBM at β = {table_beta:g}", _scaled(params, table_beta), {}
        for label in LOCAL_LABELS:
            with pm.Model(), _quiet():
                v = RBM("v", warmer.W, warmer.vbias, warmer.hbias)
                local[label] = pm.sample(draws=draws, tune=tune, chains=chains, cores=1, random_seed=seed,
                                         progressbar=False, compute_convergence_checks=False,
                                         step=samplers[label](v))
        local_mixing = {} if patterns is None else mixing_of(local, warmer)

    print("\nflip-the-state against block Gibbs (Brügge, Fischer & Igel 2013, Table 2):")
    if table_beta != 1.0:
        _print_why_warmer(table_beta, mixing, local_mixing, patterns, warmer)
    table = compare_samplers(local, problem=problem)
    stuck = {label: m.stuck_chains for label, m in local_mixing.items() if m.stuck_chains.size}
    if stuck:
        tau, tau_se = table.tau.copy(), table.tau_se.copy()
        for j, label in enumerate(table.samplers):
            if label in stuck:
                tau[:, j], tau_se[:, j] = math.inf, math.nan
        within = {label: table.tau[0, table.samplers.index(label)] for label in stuck}
        table = dataclasses.replace(table, tau=tau, tau_se=tau_se)
    print(table.format({f"ESS {label}": [f"{ess:.0f}"] for label, ess in zip(table.samplers, _ess(table))}))
    print(f"ESS of F(v) = chains x draws / τ ({chains} x {draws} draws of each sampler)")
    for label, chains_stuck in stuck.items():
        why = (
            "F(v) itself never changed in some of them"
            if math.isinf(within[label])
            else f"ArviZ's estimate from the draws, {within[label]:.2f}, cannot measure moves between patterns "
            "that the stuck chains never made"
        )
        print(f"  τ {label} = inf: {chains_stuck.size} of {chains} chains never left the pattern they started in, "
              f"so the sampler is stuck and τ is undefined ({why})")

    path = output / "autocorrelation.png"
    _save_autocorrelation_plot(local, table, path)
    print(f"saved the autocorrelation of F(v) in Table 2's runs to {path}")
    return table


def _print_why_warmer(beta: float, mixing: dict, warmer_mixing: dict, patterns, warmer) -> None:
    """One line on why Table 2 is computed on the RBM at ``beta``, with the figures that show it."""
    from pymc_rbm.estimators import log_likelihood

    at_one = [mixing[label] for label in LOCAL_LABELS if label in mixing]
    n_stuck = sum(m.stuck_chains.size for m in at_one)
    text = "  "
    if n_stuck:
        text += (f"on the bundled RBM itself {n_stuck} of their {sum(len(m.changes) for m in at_one)} chains never "
                 "left their first pattern (τ undefined), so ")
    text += f"Table 2 is computed on it at β = {beta:g} (weights and biases times {beta:g}"
    if patterns is None:
        print(text + ")")
        return
    mass = float(np.exp(log_likelihood(warmer, patterns)).sum())
    changes = ", ".join(f"{label} {m.changes_per_1000:.0f}" for label, m in warmer_mixing.items())
    tv = " and ".join(f"{m.tv_patterns:.3f}" for m in warmer_mixing.values())
    print(text + f"; {mass:.0%} of its mass on the patterns), where both move between patterns: {changes} pattern "
          f"changes per 1000 draws, total variation of their pattern frequencies to exact {tv}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="pymc-rbm demo on the bundled RBM")
    parser.add_argument("--output", type=Path, default=Path("demo_output"), help="folder for the results")
    parser.add_argument("--draws", type=int, default=2000, help="exact prior draws")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--chains", type=int, default=4, help="chains per sampler in the comparison")
    parser.add_argument("--sample-draws", type=int, default=2000, help="draws per chain in the comparison")
    parser.add_argument("--tune", type=int, default=1000, help="tuning draws per chain in the comparison")
    args = parser.parse_args(argv)
    args.output.mkdir(parents=True, exist_ok=True)

    import pymc as pm

    from pymc_rbm import RBM
    from pymc_rbm.datasets import bars_and_stripes, bundled_rbm
    from pymc_rbm.distribution import log_partition_mode
    from pymc_rbm.estimators import log_likelihood, log_partition
    from pymc_rbm.enumeration import log_marginal_visible

    params = bundled_rbm()
    data = bars_and_stripes(4, variant="mackay")
    patterns = bars_and_stripes(4, variant="distinct")
    print(f"bundled RBM: {params.n_visible} visible x {params.n_hidden} hidden units (bars and stripes 4x4)")

    start = time.perf_counter()
    log_z = log_partition(params, method="exact")
    print(f"log Z (exact, {log_z.diagnostics['n_states']} states enumerated): {log_z.log_z:.6f}"
          f"  [{time.perf_counter() - start:.3f} s]")
    ll = log_likelihood(params, data, log_z)
    _, inverse, counts = np.unique(data, axis=0, return_inverse=True, return_counts=True)
    best = np.mean(np.log(counts[inverse] / len(data)))
    print(f"mean log-likelihood of MacKay's 32 rows: {ll.mean():.4f}  (best possible {best:.4f})")
    mass = np.exp(log_likelihood(params, patterns, log_z)).sum()
    print(f"probability the model gives the 30 bars-and-stripes patterns: {mass:.4f}")
    exact_states = np.exp(log_marginal_visible(params))
    ranked = np.cumsum(np.sort(exact_states)[::-1])
    print(f"exact distribution over all {exact_states.size} visible states: {int(np.searchsorted(ranked, 0.99)) + 1} "
          "states hold 99 % of the mass")

    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias)
        print(f"pm.Model with v = RBM(...): log_partition mode {log_partition_mode(v)!r}")
        prior = pm.sample_prior_predictive(draws=args.draws, random_seed=args.seed)
    draws = prior.prior["v"].values.reshape(-1, params.n_visible)
    valid = (draws[:, None, :] == patterns[None]).all(axis=-1).any(axis=-1)
    stderr = np.sqrt(mass * (1 - mass) / len(draws))
    print(f"exact prior draws that are bars-and-stripes patterns: {valid.mean():.4f} "
          f"(expected {mass:.4f} ± {stderr:.4f})")
    image = args.output / "prior_draws.png"
    _save_grid(draws[:64], image)
    print(f"saved 64 draws to {image}")

    print("\nlocal samplers (step=...) against pm.sample's default on the bundled RBM:")
    sampler_comparison(
        params, draws=args.sample_draws, chains=args.chains, seed=args.seed, output=args.output, tune=args.tune,
        patterns=patterns, data=data, exact_states=exact_states,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

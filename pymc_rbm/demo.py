"""The pymc-rbm demo: the bundled RBM as a PyMC distribution.

Run it with ``./dev demo`` (or ``python -m pymc_rbm.demo --output DIR``). It
loads the RBM bundled with the package (fitted to 4x4 bars and stripes),
computes log Z exactly, the log-likelihood of the data, draws exact samples
through ``pm.sample_prior_predictive`` and saves them as an image, then
samples the model with block Gibbs and flip-the-state through ``pm.sample``
and compares their autocorrelation times (Brügge, Fischer & Igel 2013, Table 2).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np


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


def sampler_comparison(
    params, *, draws: int, chains: int, seed: int, output: Path, tune: int = 200, patterns=None, data=None
):
    """Sample ``params`` with BlockGibbs and FlipTheState through pm.sample and compare them.

    Prints Brügge, Fischer & Igel's (2013) Table 2 (τ of the free energy, gain of flip-the-state)
    and saves the autocorrelation of F(v) of both samplers to
    ``output / "autocorrelation.png"``. With ``patterns`` (the states that
    carry the model's mass, shape (n_patterns, n_visible)) it also prints how
    often each sampler moves from one pattern to another (class changes as
    Brügge, Fischer & Igel (2013) §4.4 counts them: states that are no pattern do not end a run)
    and the total-variation distance between the patterns' frequencies in
    the draws and their exact probabilities. For a model whose mass sits on
    a few sharp modes that is the mixing that matters: F(v) then mostly
    varies within a mode. With ``data`` as well, flip-the-state next to
    point wormholes built from the data (Hinton, Welling & Mnih 2003) joins that comparison.

    Returns
    -------
    SamplerComparison
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pymc as pm

    from pymc_rbm import RBM, BlockGibbs, FlipTheState
    from pymc_rbm.diagnostics import autocorrelation, compare_samplers

    def timed_sample(label, steps, **kwargs):
        """pm.sample after a short warm-up run, so that the time printed is sampling, not compilation."""
        common = dict(cores=1, random_seed=seed, progressbar=False, compute_convergence_checks=False)
        start = time.perf_counter()
        pm.sample(draws=10, tune=0, chains=1, step=steps(), **common)
        warm = time.perf_counter() - start
        start = time.perf_counter()
        trace = pm.sample(draws=draws, tune=tune, chains=chains, step=steps(), **common, **kwargs)
        print(
            f"  {label}: {chains} chains x {draws} draws in {time.perf_counter() - start:.1f} s of sampling "
            f"(after a 10-draw warm-up run of {warm:.1f} s that compiled the model and the sampler)"
        )
        return trace

    traces = {}
    for label, step_class in (("Gibbs", BlockGibbs), ("flip-the-state", FlipTheState)):
        with pm.Model():
            v = RBM("v", params.W, params.vbias, params.hbias)
            traces[label] = timed_sample(label, lambda: step_class([v]))
    table = compare_samplers(traces, problem="bundled RBM")
    print(table)
    if patterns is not None:
        moves = dict(traces)
        if data is not None:
            from pymc_rbm import WormholeMetropolis

            label = "flip + point wormholes"
            with pm.Model():
                v = RBM("v", params.W, params.vbias, params.hbias)
                moves[label] = timed_sample(
                    label, lambda: [FlipTheState([v]), WormholeMetropolis([v], data=data, kind="point")]
                )
        _pattern_mixing(params, moves, np.asarray(patterns))

    fig, ax = plt.subplots(figsize=(5, 3.2))
    for label, trace in traces.items():
        acf = autocorrelation(trace, max_lag=min(60, draws - 1))
        ax.plot(np.arange(len(acf)), acf, marker=".", label=label)
    ax.axhline(0, color="gray", lw=0.5)
    ax.set_xlabel("lag (sweeps)")
    ax.set_ylabel("autocorrelation of F(v)")
    ax.set_title("pm.sample on the bundled RBM")
    ax.legend()
    path = output / "autocorrelation.png"
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    print(f"saved the autocorrelation plot to {path}")
    return table


def _pattern_mixing(params, traces, patterns) -> None:
    """Print pattern changes per 1000 sweeps and the TV distance of pattern frequencies to the exact ones."""
    from pymc_rbm.diagnostics import class_changes
    from pymc_rbm.estimators import log_likelihood

    def classify(v):
        match = (v[..., None, :] == patterns).all(axis=-1)
        return np.where(match.any(axis=-1), match.argmax(axis=-1), -1)

    exact = np.exp(log_likelihood(params, patterns))
    print(
        f"moves between the {len(patterns)} patterns (Brügge, Fischer & Igel 2013, §4.4) "
        "and pattern frequencies vs exact:"
    )
    for label, trace in traces.items():
        v = trace.posterior["v"].values  # (chain, draw, n_visible)
        changes = class_changes(v, classify=classify).n_changes
        labels = classify(v).ravel()
        freq = np.bincount(labels[labels >= 0], minlength=len(patterns)) / labels.size
        tv = 0.5 * (np.abs(freq - exact).sum() + abs((labels < 0).mean() - (1 - exact.sum())))
        print(f"  {label:24s} pattern changes per 1000 sweeps {1000 * changes.sum() / v[..., 0].size:7.1f}"
              f"   TV(frequencies, exact) {tv:.3f}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="pymc-rbm demo on the bundled RBM")
    parser.add_argument("--output", type=Path, default=Path("demo_output"), help="folder for the results")
    parser.add_argument("--draws", type=int, default=2000, help="exact prior draws")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--chains", type=int, default=4, help="chains per sampler in the comparison")
    parser.add_argument("--sample-draws", type=int, default=2000, help="draws per chain in the comparison")
    args = parser.parse_args(argv)
    args.output.mkdir(parents=True, exist_ok=True)

    import pymc as pm

    from pymc_rbm import RBM
    from pymc_rbm.datasets import bars_and_stripes, bundled_rbm
    from pymc_rbm.distribution import log_partition_mode
    from pymc_rbm.estimators import log_likelihood, log_partition

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

    print("\nflip-the-state against block Gibbs through pm.sample (Brügge, Fischer & Igel 2013, Table 2):")
    sampler_comparison(
        params, draws=args.sample_draws, chains=args.chains, seed=args.seed, output=args.output,
        patterns=patterns, data=data,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

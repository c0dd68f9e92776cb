"""Completing MNIST digits: a trained RBM prior, part of each image missing, the rest seen through noise.

Each of ``K`` binarized MNIST test digits ``x_k`` (784 pixels) loses a
12×12 block at a random place near its centre; every other pixel is seen
through Gaussian noise, ``y_ki = s·x_ki + b + σ ε_ki``, with the scale
``s``, offset ``b`` and noise level ``σ`` unknown. The model gives each digit
a binary latent image ``v_k`` whose prior is an RBM trained on MNIST
(``../shared/data/rbm_models/mnist_h20.npz`` or ``mnist_h100.npz``):

.. code-block:: python

    with pm.Model():
        scale = pm.HalfNormal("scale", 2.0)
        offset = pm.Normal("offset", 0.0, 1.0)
        sigma = pm.HalfNormal("sigma", 1.0)
        v = RBM("v", W, vbias, hbias, shape=(K, 784))
        readout = pm.logp(pm.Normal.dist(scale * v + offset, sigma), y)   # (K, 784)
        pm.Potential("readout", mask * readout)                           # 0 where a pixel is missing

The missing pixels are left out by a 0/1 mask that multiplies the
per-pixel log-densities: the Potential stays a sum of pieces that each
involve one pixel of one digit, which the step reads off the graph
(``step.other_terms.structure == "units"``, docs/rows.md). Every replica of
every digit then carries the evidence of its pixels, and all digits and
rungs are swept in one compiled call per round; NUTS samples ``s``, ``b``
and ``σ``. ``pm.sample`` gives ``v`` to :class:`~pymc_rbm.ReplicaExchange`
by itself; the example builds that step (``ReplicaExchange([v],
sweeps=...)``) only to print how it read the model and to set its rounds
per draw.

**Rounds per draw.** The step's default, ``sweeps="auto"``, runs as many
rounds (a sweep of every replica and a swap round) per draw as the ladder
has rungs, so that a replica can cross the whole ladder between two draws.
On these images tuning finds a barrier that asks for 24-26 (``mnist_h20``) to 32
(``mnist_h100``, the most ``max_temperatures`` allows) rungs, so a draw costs
24 to 32 rounds of every rung of every digit: at 200 digits and
``pm.sample``'s 2 x (1000 + 1000) draws, hours on two cores. The example
therefore runs ``--sweeps 4`` rounds per draw by default (8 times fewer
rounds with 32 rungs; every rung still swept and swapped every round, the
chain exact either way; replicas cross the ladder over several draws
instead of one) and fewer draws; ``--sweeps auto`` restores the step's
default. docs/rows.md gives the measured times, and the warnings such a short
run gets: its posterior means are good reconstructions, its per-pixel
uncertainty on ambiguous digits needs a longer run.

The posterior mean of ``v`` (the probability of each pixel being on) and its
per-pixel standard deviation ``sqrt(p (1 - p))`` are compared with the true
pixels beside simpler reconstructions that need no sampling:

* **threshold**: a mixture of two Gaussians of one width is fitted to the
  observed readouts by EM (the levels of off and on pixels, the noise and
  the fraction of pixels on: what one can know without a prior over
  images); each observed pixel is 1 where the mixture says "on" is more
  probable than "off"; missing pixels are filled with the training set's
  pixel means, or with 0;
* **mean field**: the RBM's deterministic reconstruction, iterating
  ``h = E[h | v]`` and ``v = E[v | h]`` (:func:`~pymc_rbm.energy.mean_hiddens`,
  :func:`~pymc_rbm.energy.mean_visibles`) 50 times from the training means
  in the missing block, either with the observed pixels clamped to their
  thresholded values, or with the evidence of each readout (from the
  mixture's levels and noise) added to the pixel's logit: the naive
  mean-field approximation of each digit's posterior.

The table gives the mean absolute error of each reconstruction (a
probability in [0, 1]) against the true binary pixels, on the missing and on
the observed pixels, and the accuracy of the reconstruction thresholded at
1/2. The figure (``--out``) shows, for the first digits, the truth, what was
observed (the missing block in blue), the posterior mean, the per-pixel
posterior standard deviation, and the evidence-weighted mean-field
reconstruction.

    ./dev python examples/mnist_inpainting.py --digits 20 --draws 64           # a few minutes
    ./dev python examples/mnist_inpainting.py --out docs/images    # 100 digits, h100: docs/rows.md's table
    ./dev python examples/mnist_inpainting.py --digits 300 --draws 300 --sweeps auto   # CPU hours

The data are read from ``../shared/data`` (``--data``); the example exits
with a message when they are absent.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pymc as pm

from pymc_rbm import RBM, RBMParams, ReplicaExchange
from pymc_rbm.energy import mean_hiddens, mean_visibles, visible_activation

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
TRUE_SCALE, TRUE_OFFSET, TRUE_SIGMA = 1.0, 0.0, 0.7
BLOCK = 12  # side of the missing square
SIDE = 28


class Problem(NamedTuple):
    """The digits, what was observed of them, and what the baselines may know."""

    params: RBMParams  # the RBM prior
    truth: np.ndarray  # (K, 784) true binary pixels
    mask: np.ndarray  # (K, 784) 1 where the pixel was observed, 0 where missing
    y: np.ndarray  # (K, 784) noisy readouts; 0 where missing (never used there)
    train_means: np.ndarray  # (784,) pixel means of the binarized training set


class Result(NamedTuple):
    problem: Problem
    idata: object  # pm.sample's DataTree
    structure: str | None  # how the step read the readouts ("units": per-pixel evidence)
    seconds: float  # pm.sample's sampling time, tuning included
    per_draw_ms: float  # seconds / (chains * (tune + draws)): wall time of one chain's draw of all digits
    cpu_per_draw_ms: float  # median CPU time of one recorded draw (NaN when the chains ran in other processes)
    n_temperatures: int  # rungs of the ladder after tuning
    posterior_mean: np.ndarray  # (K, 784) p(v_ki = 1 | y)
    posterior_std: np.ndarray  # (K, 784)
    reconstructions: dict  # name -> (K, 784) estimate in [0, 1]: the posterior mean and the baselines
    table: dict  # name -> Errors


class Errors(NamedTuple):
    mae_missing: float
    mae_observed: float
    accuracy_missing: float
    accuracy_observed: float


def load_problem(data_dir: Path, model: str, n_digits: int, seed: int) -> Problem:
    """Load the prior and ``n_digits`` binarized test digits, and observe them with noise and a missing block."""
    params = RBMParams.load(data_dir / "rbm_models" / f"mnist_{model}.npz")
    packed = np.load(data_dir / "mnist" / "binarized_mnist_packed.npz")
    train = np.unpackbits(packed["train"], axis=1)[:, : SIDE * SIDE]
    test = np.unpackbits(packed["test"], axis=1)[:, : SIDE * SIDE]
    rng = np.random.default_rng(seed)
    truth = test[rng.choice(len(test), size=n_digits, replace=False)].astype(np.float64)
    mask = np.ones((n_digits, SIDE, SIDE))
    for k, (r, c) in enumerate(rng.integers(4, SIDE - 4 - BLOCK + 1, size=(n_digits, 2))):
        mask[k, r : r + BLOCK, c : c + BLOCK] = 0.0
    mask = mask.reshape(n_digits, -1)
    y = (TRUE_SCALE * truth + TRUE_OFFSET + TRUE_SIGMA * rng.standard_normal(truth.shape)) * mask
    return Problem(params, truth, mask, y, train.mean(axis=0))


def build_model(problem: Problem) -> pm.Model:
    """The RBM prior on every digit, Gaussian readouts of the observed pixels, scale, offset and noise unknown."""
    p, y, mask = problem.params, problem.y, problem.mask
    with pm.Model() as model:
        scale = pm.HalfNormal("scale", 2.0)
        offset = pm.Normal("offset", 0.0, 1.0)
        sigma = pm.HalfNormal("sigma", 1.0)
        # the weights are constants, so log Z changes nothing for sampling: leave it out (h100 cannot enumerate it)
        v = RBM("v", p.W, p.vbias, p.hbias, shape=y.shape, log_partition=None)
        # per-pixel log-densities, masked: still a sum of one-pixel pieces, so every replica carries the evidence
        pm.Potential("readout", mask * pm.logp(pm.Normal.dist(scale * v + offset, sigma), y))
    return model


def readout_mixture(y: np.ndarray, mask: np.ndarray, iterations: int = 200) -> tuple[float, float, float, float]:
    """Levels of the off and on pixels, the noise and the fraction on: EM for two Gaussians of one width.

    Fitted to the observed readouts alone, pixel by pixel independent: what a
    reconstruction without a prior over images can know (no sampling).
    """
    obs = y[mask == 1]
    low, high = np.quantile(obs, [0.25, 0.99])
    noise, on = obs.std() / 2, 0.5
    for _ in range(iterations):
        log_odds = np.log(on / (1 - on)) + ((obs - low) ** 2 - (obs - high) ** 2) / (2 * noise**2)
        r = 1 / (1 + np.exp(-log_odds))  # p(pixel on | its readout)
        on = r.mean()
        low, high = np.sum((1 - r) * obs) / np.sum(1 - r), np.sum(r * obs) / np.sum(r)
        noise = np.sqrt(np.sum((1 - r) * (obs - low) ** 2 + r * (obs - high) ** 2) / obs.size)
    return float(low), float(high), float(noise), float(on)


def baselines(problem: Problem, iterations: int = 50) -> dict:
    """Reconstructions without sampling: thresholded readouts, and the RBM's mean field from them."""
    p, y, mask, fill = problem.params, problem.y, problem.mask, problem.train_means
    low, high, noise, on = readout_mixture(y, mask)
    # evidence of each observed pixel: log N(y | high, noise) - log N(y | low, noise)
    evidence = mask * ((y - low) ** 2 - (y - high) ** 2) / (2 * noise**2)
    thresholded = (evidence + np.log(on / (1 - on)) > 0).astype(np.float64)
    out = {
        "threshold, missing = training means": np.where(mask == 1, thresholded, fill),
        "threshold, missing = 0": np.where(mask == 1, thresholded, 0.0),
    }
    clamped = out["threshold, missing = training means"]
    soft = np.where(mask == 1, 1 / (1 + np.exp(-evidence)), fill)
    for _ in range(iterations):
        clamped = np.where(mask == 1, thresholded, mean_visibles(mean_hiddens(clamped, p), p))
        logits = visible_activation(mean_hiddens(soft, p), p) + evidence
        soft = 1 / (1 + np.exp(-logits))
    out["mean field, observed clamped"] = clamped
    out["mean field, evidence-weighted"] = soft
    return out


def errors(estimate: np.ndarray, truth: np.ndarray, mask: np.ndarray) -> Errors:
    """Mean absolute error against the true pixels, and accuracy at 1/2, on missing and observed pixels."""
    miss, obs = mask == 0, mask == 1
    wrong = np.abs(estimate - truth)
    right = (estimate > 0.5) == (truth > 0.5)
    return Errors(wrong[miss].mean(), wrong[obs].mean(), right[miss].mean(), right[obs].mean())


class _Clock:
    """A ``pm.sample`` callback: the CPU time of this process at every draw, to time the draws after tuning."""

    def __init__(self):
        self.ticks = []

    def __call__(self, trace, draw):
        self.ticks.append((draw.chain, draw.tuning, time.process_time()))

    def median_ms(self) -> float:
        """Median CPU milliseconds between two recorded draws of a chain; NaN if none was timed here."""
        steps = [
            1000 * (b[2] - a[2])
            for a, b in zip(self.ticks[:-1], self.ticks[1:])
            if a[0] == b[0] and not a[1] and not b[1]
        ]
        median = float(np.median(steps)) if steps else np.nan
        return median if median > 0 else np.nan  # ~0: the chains ran in child processes


def run(
    n_digits: int = 100,
    model_name: str = "h100",
    draws: int = 100,
    tune: int | None = None,
    chains: int | None = None,
    cores: int | None = None,
    sweeps=4,
    seed: int = 0,
    data_dir: Path = DATA,
) -> Result:
    """Build the problem and the model, sample, and score the posterior mean beside the baselines."""
    problem = load_problem(Path(data_dir), model_name, n_digits, seed)
    tune = draws if tune is None else tune
    clock = _Clock()
    with build_model(problem) as model:
        step = ReplicaExchange([model["v"]], sweeps=sweeps)  # pm.sample's own choice, with sweeps="auto"
        idata = pm.sample(
            draws=draws,
            tune=tune,
            chains=chains,
            cores=cores,
            step=[step],
            random_seed=seed,
            progressbar=False,
            callback=clock,
        )
    seconds = float(idata.posterior.attrs["sampling_time"])
    n_chains = idata.posterior.sizes["chain"]
    draws_v = idata.posterior["v"].values  # (chains, draws, K, 784)
    mean = draws_v.mean(axis=(0, 1))
    recon = {"posterior mean (pm.sample)": mean, **baselines(problem)}
    table = {name: errors(est, problem.truth, problem.mask) for name, est in recon.items()}
    return Result(
        problem=problem,
        idata=idata,
        structure=step.other_terms.structure,
        seconds=seconds,
        per_draw_ms=1000 * seconds / (n_chains * (tune + draws)),
        cpu_per_draw_ms=clock.median_ms(),
        n_temperatures=int(idata.sample_stats["n_temperatures"].values[..., -1].max()),
        posterior_mean=mean,
        posterior_std=np.sqrt(mean * (1 - mean)),
        reconstructions=recon,
        table=table,
    )


def print_report(result: Result) -> None:
    post = result.idata.posterior
    chains, draws = post.sizes["chain"], post.sizes["draw"]
    print(f"structure of the readouts: {result.structure!r}; rungs after tuning: {result.n_temperatures}")
    print(
        f"{chains} chains x {draws} draws (+ tuning): {result.seconds:.1f} s, "
        f"{result.per_draw_ms:.1f} ms per draw of one chain (all {result.problem.y.shape[0]} digits, tuning "
        f"included); CPU time of a draw after tuning: {result.cpu_per_draw_ms:.1f} ms (median)"
    )
    for name, true in (("scale", TRUE_SCALE), ("offset", TRUE_OFFSET), ("sigma", TRUE_SIGMA)):
        x = post[name].values
        print(f"  {name:6s} posterior mean {x.mean():7.3f} (sd {x.std():.3f}), true {true}")
    print()
    print("| reconstruction | MAE missing | MAE observed | accuracy missing | accuracy observed |")
    print("| --- | --- | --- | --- | --- |")
    for name, e in result.table.items():
        print(
            f"| {name} | {e.mae_missing:.3f} | {e.mae_observed:.3f} | "
            f"{e.accuracy_missing:.3f} | {e.accuracy_observed:.3f} |"
        )


def save_figure(result: Result, path: Path, n_columns: int = 12) -> Path | None:
    """Rows: truth, observed, posterior mean, posterior sd, evidence-weighted mean field (PNG; needs matplotlib)."""
    try:
        from matplotlib import colormaps
        from matplotlib.figure import Figure  # no pyplot: no backend or global state is touched
    except ImportError:
        print("matplotlib is not installed: no figure")
        return None
    pr = result.problem
    n = min(n_columns, pr.y.shape[0])
    observed = np.ma.masked_where(pr.mask == 0, pr.y)
    rows = [
        ("truth", pr.truth, "gray_r", (0, 1)),
        ("observed", observed, "gray_r", (-1.5, 2.5)),
        ("posterior mean", result.posterior_mean, "gray_r", (0, 1)),
        ("posterior sd", result.posterior_std, "magma", (0, 0.5)),
        ("mean field", result.reconstructions["mean field, evidence-weighted"], "gray_r", (0, 1)),
    ]
    fig = Figure(figsize=(0.8 * n + 1.2, 0.8 * len(rows)))
    axes = fig.subplots(len(rows), n, squeeze=False)
    for r, (label, images, cmap, (lo, hi)) in enumerate(rows):
        cm = colormaps[cmap].with_extremes(bad="tab:blue")
        for c in range(n):
            ax = axes[r, c]
            ax.imshow(images[c].reshape(SIDE, SIDE), cmap=cm, vmin=lo, vmax=hi, interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
        axes[r, 0].set_ylabel(label, rotation=0, ha="right", va="center", fontsize=8)
    fig.subplots_adjust(left=0.12, right=0.99, top=0.99, bottom=0.01, wspace=0.05, hspace=0.05)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=72)
    return path


def main(argv=None) -> Result | None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--digits", type=int, default=100, help="test digits K (default 100)")
    parser.add_argument("--model", choices=("h20", "h100"), default="h100", help="RBM prior (default h100)")
    parser.add_argument("--draws", type=int, default=100, help="draws per chain, as many tuning (default 100)")
    parser.add_argument("--chains", type=int, default=None, help="chains (default: pm.sample's)")
    parser.add_argument("--cores", type=int, default=None, help="pm.sample's cores (default: pm.sample's)")
    parser.add_argument("--sweeps", default="4", help='rounds per draw of the replica exchange, or "auto" (default 4)')
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", type=Path, default=DATA, help=f"the shared data folder (default {DATA})")
    parser.add_argument("--out", type=Path, default=None, help="folder for the figure mnist_inpainting.png")
    args = parser.parse_args(argv)
    needed = [args.data / "rbm_models" / f"mnist_{args.model}.npz", args.data / "mnist" / "binarized_mnist_packed.npz"]
    missing = [str(p) for p in needed if not p.exists()]
    if missing:
        print(f"MNIST data absent ({', '.join(missing)}): nothing to do. See ../shared/data/README.md.")
        return None
    sweeps = args.sweeps if args.sweeps == "auto" else int(args.sweeps)
    result = run(
        args.digits,
        args.model,
        args.draws,
        chains=args.chains,
        cores=args.cores,
        sweeps=sweeps,
        seed=args.seed,
        data_dir=args.data,
    )
    print_report(result)
    if args.out is not None:
        path = save_figure(result, args.out / "mnist_inpainting.png")
        if path is not None:
            print(f"figure: {path}")
    return result


if __name__ == "__main__":
    main(sys.argv[1:])

"""What ``fit(data, 16)`` reaches with its defaults, beside the README's settings and the defaults before them.

Two binary data sets whose 16-hidden-unit RBMs are enumerable, so that every figure is the exact mean
log-likelihood of the training rows (:func:`pymc_rbm.estimators.log_likelihood`):

- 4x4 bars and stripes, the 30 distinct patterns (:func:`pymc_rbm.datasets.bars_and_stripes`);
  the best any model can do is ``-log 30 = -3.401``;
- "prototypes": 1000 rows of 64 pixels, each a copy of one of 10 random binary prototypes (equally
  likely) with every pixel flipped with probability 0.05, a stand-in for small binarised digits. The
  "truth" is the mean log-likelihood of the rows under the mixture that drew them.

Settings, each ``fit(data, 16, rng=seed, **options)`` with records every 100 updates (the default):

- ``defaults``: no options;
- ``defaults before``: ``method=CD(k=1), learning_rate=0.01, optimizer=SGD(schedule="constant")``, 1000 updates;
- ``cosine, not averaged``: the defaults with every row in every update, the learning rate decayed to 0 on a
  cosine and no averaging (the defaults until mini-batches and averaging became the default);
- ``README``: ``method=PCD(k=5, operator="flip"), learning_rate=0.05, n_updates=5000``, constant rate;
- ``constant rate, not averaged``: the defaults with ``SGD(average=0)`` (the last parameters returned);
- ``defaults, PCD-1``: the defaults with ``PCD(k=1)``;
- ``defaults, flip-the-state``: the defaults with ``PCD(operator="flip")``.

Per setting: the log-likelihood at the end (mean over the seeds, and the worst seed), the best record
(mean), and the seconds per run (mean; records included, on a machine that may be shared). Run from
the repository root::

    python benchmarks/fit_defaults.py [--seeds 0 1 2] [--prototype-seeds 0] [--only bars|prototypes] [--settings ...]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from pymc_rbm.datasets import bars_and_stripes
from pymc_rbm.training import CD, PCD, SGD, fit

SETTINGS = {
    "defaults": {},
    "defaults before": dict(learning_rate=0.01, n_updates=1000, method=CD(k=1), optimizer=SGD(schedule="constant")),
    "cosine, not averaged": dict(batch_size=10**9, optimizer=SGD(schedule="cosine", average=0)),
    "README": dict(learning_rate=0.05, n_updates=5000, method=PCD(k=5, operator="flip"),
                   optimizer=SGD(schedule="constant")),
    "constant rate, not averaged": dict(optimizer=SGD(schedule="constant", average=0)),
    "defaults, PCD-1": dict(method=PCD(k=1)),
    "defaults, flip-the-state": dict(method=PCD(operator="flip")),
}


def prototypes(n_rows=1000, n_prototypes=10, n_pixels=64, noise=0.05, rng=0):
    """``(rows, truth)``: noisy copies of random binary prototypes, and their mean log-likelihood under the mixture."""
    rng = np.random.default_rng(rng)
    protos = rng.random((n_prototypes, n_pixels)) < 0.5
    labels = rng.integers(n_prototypes, size=n_rows)
    rows = protos[labels] ^ (rng.random((n_rows, n_pixels)) < noise)
    n_differ = (rows[:, None, :] != protos[None, :, :]).sum(axis=2)  # (n_rows, n_prototypes)
    log_p = n_differ * math.log(noise) + (n_pixels - n_differ) * math.log1p(-noise) - math.log(n_prototypes)
    top = log_p.max(axis=1)
    truth = float(np.mean(top + np.log(np.exp(log_p - top[:, None]).sum(axis=1))))
    return rows.astype(np.uint8), truth


def run(data, options, seeds):
    """End and best log-likelihood and seconds of each seed's run."""
    out = []
    for seed in seeds:
        t = time.perf_counter()
        result = fit(data, 16, rng=seed, progress=False, **options)
        ll = result.history.log_likelihood
        out.append((ll[-1], np.nanmax(ll), time.perf_counter() - t))
    return np.array(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="seeds of the bars-and-stripes runs")
    parser.add_argument("--prototype-seeds", type=int, nargs="+", default=[0], help="seeds of the prototype runs")
    parser.add_argument("--only", choices=("bars", "prototypes"), help="one data set")
    parser.add_argument("--settings", nargs="+", choices=list(SETTINGS), default=list(SETTINGS), metavar="SETTING",
                        help=f"the settings to run (default all): {', '.join(map(repr, SETTINGS))}")
    args = parser.parse_args()
    rows, truth = prototypes()
    problems = [("bars and stripes 4x4 (30 rows)", bars_and_stripes(4), -math.log(30), args.seeds),
                ("prototypes, 64 pixels (1000 rows)", rows, truth, args.prototype_seeds)]
    if args.only:
        problems = [problems[0 if args.only == "bars" else 1]]
    print("| data | setting | end: mean (worst seed) | best record | seconds per run |")
    print("|---|---|---|---|---|")
    for label, data, best_possible, seeds in problems:
        for name in args.settings:
            r = run(data, SETTINGS[name], seeds)
            print(f"| {label} | {name} | {r[:, 0].mean():.3f} ({r[:, 0].min():.3f}) | {r[:, 1].mean():.3f} | "
                  f"{r[:, 2].mean():.1f} |", flush=True)
        print(f"| {label} | truth | {best_possible:.3f} | | |", flush=True)
    print(f"\nseeds {args.seeds} (bars and stripes), {args.prototype_seeds} (prototypes); exact log-likelihood of the "
          "training rows")


if __name__ == "__main__":
    main()

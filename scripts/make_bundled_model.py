"""Produce the RBM bundled with the package: ``pymc_rbm/data/bars_and_stripes_4x4.npz``.

A 16-visible, 16-hidden RBM fitted to MacKay's 32 rows of 4x4 bars and
stripes with :func:`pymc_rbm.training.fit`: full-batch ascent on the exact
log-likelihood gradient (``method="exact"``: the model moments come from
enumerating the hidden layer) with momentum, keeping the parameters of the best
recorded log-likelihood. The model is small enough that everything about it
can be enumerated, which is what the demo and the tests need. Deterministic
for a fixed seed.

The file is only replaced when the new model's mean log-likelihood is at least
that of the model already there (``--force`` replaces it anyway). Run from the
repository root::

    ./dev python scripts/make_bundled_model.py [--updates 8000] [--learning-rate 0.1] [--momentum 0.9]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from pymc_rbm import RBMParams
from pymc_rbm.datasets import bars_and_stripes
from pymc_rbm.estimators import log_likelihood, log_partition_exact
from pymc_rbm.training import SGD, fit

OUT = Path(__file__).resolve().parents[1] / "pymc_rbm" / "data" / "bars_and_stripes_4x4.npz"


def best_possible(data: np.ndarray) -> float:
    """Minus the entropy of the empirical distribution of the rows."""
    _, counts = np.unique(data, axis=0, return_counts=True)
    return float(np.sum(counts * np.log(counts / counts.sum())) / counts.sum())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=8000)
    parser.add_argument("--learning-rate", type=float, default=0.1)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--eval-every", type=int, default=250)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--output", type=Path, default=OUT)
    parser.add_argument("--force", action="store_true", help="replace the file even with a worse model")
    args = parser.parse_args()
    data = bars_and_stripes(4, variant="mackay")
    t0 = time.perf_counter()
    result = fit(data, 16, method="exact", learning_rate=args.learning_rate, n_updates=args.updates, rng=args.seed,
                 progress=True, optimizer=SGD(momentum=args.momentum, schedule="constant"),
                 evaluation=args.eval_every)
    for u, ll in zip(result.history.updates, result.history.log_likelihood):
        if u % (args.eval_every * 8) == 0 or u == result.history.updates[-1]:
            print(f"update {u:6d}  mean log-likelihood {ll:.5f}")
    params = result.best_params
    new = float(log_likelihood(params, data).mean())
    print(
        f"trained in {time.perf_counter() - t0:.0f} s; best mean log-likelihood {new:.5f} "
        f"(best possible {best_possible(data):.5f}); log Z = {log_partition_exact(params).log_z:.6f}"
    )
    if args.output.exists() and not args.force:
        old = float(log_likelihood(RBMParams.load(args.output), data).mean())
        if new < old:
            print(f"kept {args.output}: its model is better ({old:.5f} >= {new:.5f}); --force replaces it")
            return
        print(f"the model in {args.output} had {old:.5f}")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    params.save(args.output)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()

"""Produce the RBM bundled with the package: ``pymc_rbm/data/bars_and_stripes_4x4.npz``.

A 16-visible, 16-hidden RBM fitted to MacKay's 32 rows of 4x4 bars and
stripes by full-batch ascent on the exact log-likelihood gradient (the
model moments come from enumerating the hidden layer), with momentum. The
model is small enough that everything about it can be enumerated, which is
what the demo and the tests need. Deterministic for a fixed seed.

Run from the repository root::

    ./dev python scripts/make_bundled_model.py

(The training module of a later issue replaces this loop with
``pymc_rbm.training.fit``.)
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from pymc_rbm import RBMParams
from pymc_rbm.datasets import bars_and_stripes
from pymc_rbm.energy import mean_hiddens
from pymc_rbm.estimators import log_likelihood, log_partition_exact, moments_exact

OUT = Path(__file__).resolve().parents[1] / "pymc_rbm" / "data" / "bars_and_stripes_4x4.npz"


def fit_exact(data, n_hidden, *, n_updates, learning_rate, momentum, rng):
    """Full-batch gradient ascent on the exact mean log-likelihood."""
    n_visible = data.shape[1]
    params = RBMParams(rng.normal(0, 0.01, (n_visible, n_hidden)), np.zeros(n_visible), np.zeros(n_hidden))
    velocity = [np.zeros_like(a) for a in (params.W, params.vbias, params.hbias)]
    for t in range(n_updates):
        ph = mean_hiddens(data, params)
        model = moments_exact(params)
        grads = (data.T @ ph / len(data) - model.vh, data.mean(0) - model.v, ph.mean(0) - model.h)
        velocity = [momentum * u + learning_rate * g for u, g in zip(velocity, grads)]
        params = RBMParams(*(a + u for a, u in zip((params.W, params.vbias, params.hbias), velocity)))
        if t % 500 == 0 or t == n_updates - 1:
            print(f"update {t:5d}  mean log-likelihood {log_likelihood(params, data).mean():.4f}")
    return params


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=4000)
    parser.add_argument("--learning-rate", type=float, default=0.1)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--output", type=Path, default=OUT)
    args = parser.parse_args()
    data = bars_and_stripes(4, variant="mackay").astype(np.float64)
    params = fit_exact(
        data, 16, n_updates=args.updates, learning_rate=args.learning_rate, momentum=args.momentum,
        rng=np.random.default_rng(args.seed),
    )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    params.save(args.output)
    optimum = np.mean(np.log(np.unique(data, axis=0, return_counts=True)[1][np.unique(data, axis=0, return_inverse=True)[1]] / len(data)))
    print(f"log Z = {log_partition_exact(params).log_z:.6f}; best possible mean log-likelihood {optimum:.4f}")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()

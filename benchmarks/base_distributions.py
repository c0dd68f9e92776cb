"""Which base distribution should AIS start from? The spread of the log weights and the error, by base.

For each model and each base of :func:`pymc_rbm.estimators.ais.base_rate_vbias`
(``data``: the smoothed means of the binarized MNIST training set, for the
MNIST models only; ``mean_field``: the model's naive mean-field magnetizations;
``target``: the model's own visible biases; ``zero``: uniform), ``--runs``
AIS runs of ``--steps`` steps (Salakhutdinov & Murray's schedule shape, 100
chains, float32) print the standard deviation of the log weights (the smaller,
the fewer steps a given accuracy needs) and the error against the exact
``log Z`` (enumerated: the models have at most 20 units in one layer).
Random models are named ``NVxNHxSCALExSEED`` (``RBMParams.random``).

Run from the repository root::

    python benchmarks/base_distributions.py
    python benchmarks/base_distributions.py --models mnist_h10 mnist_h20 --steps 14500
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from pymc_rbm import RBMParams
from pymc_rbm.estimators import ais, log_partition_exact

SHARED_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
BASES = ("data", "mean_field", "target", "zero")


def load(name: str) -> RBMParams:
    if name.startswith("mnist"):
        return RBMParams.load(SHARED_DATA / "rbm_models" / f"{name}.npz")
    nv, nh, scale, seed = name.split("x")
    return RBMParams.random(int(nv), int(nh), scale=float(scale), rng=int(seed))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["mnist_h20", "20x10x1.5x0", "30x12x2x1"])
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    train = None
    if any(m.startswith("mnist") for m in args.models):
        with np.load(SHARED_DATA / "mnist" / "binarized_mnist_packed.npz") as f:
            train = np.unpackbits(f["train"], axis=1)[:, :784]
    print(f"AIS, {args.steps} steps, 100 chains, float32, {args.runs} runs per cell (seeds 0..{args.runs - 1})")
    print(f"{'model':>14} {'base':>10} | {'sd(log w) per run':>24} | {'error per run':>28}")
    for name in args.models:
        p = load(name)
        truth = log_partition_exact(p).log_z
        for base in BASES:
            if base == "data" and not name.startswith("mnist"):
                continue
            sds, errs = [], []
            for seed in range(args.runs):
                data = train if name.startswith("mnist") else None
                est = ais(p, data=data, base=base, n_steps=args.steps, dtype=np.float32, rng=seed)
                sds.append(est.diagnostics["log_weights"].std())
                errs.append(est.log_z - truth)
            sd_txt = " ".join(f"{x:.2f}" for x in sds)
            err_txt = " ".join(f"{x:+.3f}" for x in errs)
            print(f"{name:>14} {base:>10} | {sd_txt:>24} | {err_txt:>28}", flush=True)


if __name__ == "__main__":
    main()

"""The moves for coupled readouts: informed moves tilted exactly or by the gradient, and the single-unit scan.

``ReplicaExchange`` proposes the visible units of its cold replica by
flip-the-state on the RBM's logits tilted by how much the other model terms
``log L`` change when each unit alone flips. The exact tilt costs
``n_visible + 1`` evaluations of ``log L`` per state (one vectorised call);
the gradient tilt (Grathwohl et al. 2021) one evaluation and its reverse pass,
but it ignores the curvature of ``log L``, so its proposals are accepted less
often where ``log L`` is sharply curved. Both moves are exact. Where the
readout is written ``v @ A`` the step reads it as linear predictors and scans
single units at their exact conditionals instead (``move = scan``); the
informed moves are measured on the same readout written as a sum of
products, which the step does not read so.

The model: a random RBM (``n_visible`` x 32, weights N(0, 0.5²)) on ``K``
rows, each read out through 8 linear measurements with Gaussian noise
``y_k = v_k A + N(0, σ²)`` (``A`` of entries N(0, 1/n_visible)); ``log L`` is
quadratic in ``v`` with curvature ``~ 1/σ²``. For each width, noise and tilt:
milliseconds per draw, the acceptance of the informed moves, the ESS of each
row's free energy F(v) (ArviZ, averaged over rows) and ESS per second, and the
ratio of each move's ESS/s to the exact tilt's, measured in the same run.

Run from the repository root (one BLAS thread)::

    python benchmarks/informed_tilt.py [--cases 16:1:0.5 64:1:0.5 64:1:1 256:1:1 256:20:1] [--draws 200]
"""

from __future__ import annotations

import argparse
import logging
import time

import numpy as np
import pymc as pm
from threadpoolctl import threadpool_limits

from pymc_rbm import RBM, RBMParams, ReplicaExchange
from pymc_rbm.diagnostics import ess_free_energy
from pymc_rbm.energy import free_energy


def run(n_visible: int, n_rows: int, sigma: float, move: str, *, draws: int, tune: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    params = RBMParams.random(n_visible, 32, scale=0.5, rng=seed)
    A = rng.normal(0.0, 1.0 / np.sqrt(n_visible), (n_visible, 8))
    truth = (rng.random((n_rows, n_visible)) < 0.5).astype(np.float64)
    y = truth @ A + rng.normal(0.0, sigma, (n_rows, 8))
    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias, shape=(n_rows, n_visible), log_partition=None)
        mean = v @ A if move == "scan" else (v[..., :, None] * A).sum(axis=-2)
        pm.Normal("y", mean, sigma, observed=y)
        step = ReplicaExchange([v], tilt="auto" if move == "scan" else move)
        assert (step.other_terms.predictors is not None) == (move == "scan")
        start = time.perf_counter()
        idata = pm.sample(draws=draws, tune=tune, chains=1, cores=1, step=step, random_seed=seed, progressbar=False,
                          compute_convergence_checks=False)
        seconds = time.perf_counter() - start
    stats = idata.sample_stats
    fe = free_energy(idata.posterior["v"].values.astype(np.float64), params)  # (1, draws, rows)
    ess = float(np.mean([float(ess_free_energy(fe[..., k])) for k in range(n_rows)]))
    return {"ms": 1e3 * seconds / (draws + tune), "accept": float(np.mean(np.stack(stats["accept_rate"].values.ravel()))),
            "ess": ess, "ess_s": ess / seconds}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=["16:1:0.5", "64:1:0.5", "64:1:1", "256:1:1", "256:20:1"],
                        help="n_visible:rows:sigma")
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--tune", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    logging.getLogger("pymc").setLevel(logging.ERROR)
    print(f"ReplicaExchange, 1 chain x ({args.tune} + {args.draws}) draws; ESS of each row's F(v), averaged")
    print(f"{'n':>5} {'rows':>5} {'sigma':>6} {'move':>9} {'ms/draw':>9} {'accept':>7} {'ESS':>7} {'ESS/s':>8} "
          f"{'ESS/s / exact':>14}")
    with threadpool_limits(1):
        for case in args.cases:
            n, rows, sigma = case.split(":")
            out = {}
            for move in ("exact", "gradient", "scan"):
                r = out[move] = run(int(n), int(rows), float(sigma), move, draws=args.draws, tune=args.tune,
                                    seed=args.seed)
                ratio = f"{r['ess_s'] / out['exact']['ess_s']:14.2f}" if move != "exact" else ""
                print(f"{n:>5} {rows:>5} {sigma:>6} {move:>9} {r['ms']:9.2f} {r['accept']:7.3f} {r['ess']:7.1f} "
                      f"{r['ess_s']:8.2f} {ratio}", flush=True)


if __name__ == "__main__":
    main()

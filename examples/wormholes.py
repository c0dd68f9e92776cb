"""Wormhole jumps (Hinton, Welling & Mnih 2003) between the modes that local samplers cannot connect, through pm.sample.

1. A Gaussian mixture with weights 0.8 / 0.2 and modes 16 standard
   deviations apart: NUTS alone stays in one mode; NUTS plus point, region
   or optimization-based wormholes recovers the weights.
2. An RBM fitted (exact gradient, a few hundred full-batch updates) to the
   four Artificial Modes with p_flip = 0.01: flip-the-state alone rarely
   changes class; with region wormholes (Hamming balls around the centres of
   a Bernoulli mixture fitted to the data) the chains visit all four classes
   with the masses found by enumerating all 2**16 visible states.

Prints two tables; writes nothing. Runs in well under a minute::

    ./dev python examples/wormholes.py
"""

import argparse
import logging

import numpy as np
import pymc as pm

from pymc_rbm import RBM, FlipTheState, RBMParams, WormholeMetropolis
from pymc_rbm.datasets import artificial_modes, classify_modes
from pymc_rbm.diagnostics import class_changes
from pymc_rbm.estimators import binary_states, log_marginal_visible
from pymc_rbm.training import SGD, fit

SAMPLE = dict(chains=1, cores=1, progressbar=False, compute_convergence_checks=False)


def gaussian_mixture(draws: int, seed: int) -> None:
    weights, mus = [0.8, 0.2], np.array([-8.0, 8.0])
    rng = np.random.default_rng(seed)
    data = (mus[rng.choice(2, size=400, p=weights)] + rng.normal(size=400))[:, None]
    print("Gaussian mixture 0.8 N(-8, 1) + 0.2 N(8, 1): weight of the left mode")
    print(f"{'sampler':<24} {'weight':>7} {'accepted jumps':>15}")
    for kind in (None, "point", "region", "optimization"):
        with pm.Model():
            x = pm.NormalMixture("x", w=weights, mu=mus, sigma=1.0, shape=1)
            steps = [pm.NUTS([x])]
            if kind is not None:
                steps.append(WormholeMetropolis([x], data=data, kind=kind))
            idata = pm.sample(draws, tune=500, step=steps, random_seed=seed, **SAMPLE)
        x = idata.posterior["x"].values.ravel()
        jumps = "-"
        if kind is not None:
            accepted = idata.sample_stats["accepted"].values.ravel()
            jumps = str(int((accepted[1:] & (np.sign(x[1:]) != np.sign(x[:-1]))).sum()))
        print(f"{'NUTS' + (' + ' + kind if kind else ''):<24} {(x < 0).mean():>7.3f} {jumps:>15}")
    print(f"{'exact':<24} {0.8:>7.3f}\n")


def fit_exact(data, n_hidden, *, n_updates=500, learning_rate=0.1, momentum=0.9, seed=0) -> RBMParams:
    """Full-batch gradient ascent on the exact log-likelihood (small models only), by ``training.fit``."""
    return fit(data, n_hidden, method="exact", n_updates=n_updates, learning_rate=learning_rate, rng=seed,
               progress=False, optimizer=SGD(momentum=momentum, schedule="constant"), evaluation=None).params


def artificial_modes_rbm(draws: int, n_chains: int, seed: int) -> None:
    data = artificial_modes(200, p_flip=0.01, rng=seed)
    params = fit_exact(data.astype(np.float64), 6)
    p = np.exp(log_marginal_visible(params))
    cls = classify_modes(binary_states(16))
    exact = np.array([p[cls == k].sum() for k in range(4)])
    exact /= exact.sum()

    print(f"RBM (16 visible, 6 hidden) fitted to Artificial Modes, p_flip = 0.01; {n_chains} chains x {draws} draws")
    print(f"{'sampler':<24} {'class changes':>14}   class masses (modes 0-3)")
    for wormholes in (False, True):
        with pm.Model():
            v = RBM("v", params.W, params.vbias, params.hbias, shape=(n_chains, 16), initval=data[:n_chains])
            steps = [FlipTheState([v])]
            if wormholes:
                steps.append(WormholeMetropolis([v], data=data, kind="region", n_regions=4))
            idata = pm.sample(draws, tune=0, step=steps, random_seed=seed, **SAMPLE)
        chains = idata.posterior["v"].values[0]  # (draws, chains, 16)
        c = classify_modes(chains)
        freq = np.bincount(c[c >= 0], minlength=4) / (c >= 0).sum()
        changes = class_changes(np.swapaxes(chains, 0, 1)).n_changes.sum()
        name = "flip-the-state" + (" + region" if wormholes else "")
        print(f"{name:<24} {changes:>14}   {np.array2string(freq, precision=3)}")
    print(f"{'exact (enumeration)':<24} {'':>14}   {np.array2string(exact, precision=3)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=3000)
    parser.add_argument("--chains", type=int, default=8, help="RBM chains (rows of one batched variable)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    logging.getLogger("pymc").setLevel(logging.ERROR)
    gaussian_mixture(args.draws, args.seed)
    artificial_modes_rbm(args.draws // 3, args.chains, args.seed)

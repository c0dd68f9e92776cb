"""Flip-the-state against block Gibbs on the bundled RBM, through pm.sample, and what they miss.

Prints Brügge, Fischer & Igel's (2013) Table 2 for the free energy F(v)
beside how often each sampler moves between the 30 bars-and-stripes
patterns, next to flip-the-state with point wormholes, replica exchange and
``pm.sample``'s default (exact draws on this enumerable model), with the
total variation of each to the exact distribution; saves
``pattern_mixing.png`` (the pattern of every draw per chain and the pattern
frequencies against exact) and ``autocorrelation.png`` (F(v) in Table 2's
runs). On this sharp model both local samplers stay in the pattern they
start in, so τ is undefined for them: Table 2 is computed on the same RBM
at β = 0.4 (weights and biases times 0.4), where both move between patterns.

    ./dev python examples/flip_vs_gibbs.py --output example_output
"""

import argparse
from pathlib import Path

from pymc_rbm.datasets import bars_and_stripes, bundled_rbm
from pymc_rbm.demo import sampler_comparison

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=Path("example_output"))
    parser.add_argument("--draws", type=int, default=5000)
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    args.output.mkdir(parents=True, exist_ok=True)
    sampler_comparison(
        bundled_rbm(), draws=args.draws, tune=args.tune, chains=args.chains, seed=args.seed, output=args.output,
        patterns=bars_and_stripes(4, variant="distinct"), data=bars_and_stripes(4, variant="mackay"),
    )

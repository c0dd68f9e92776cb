"""Flip-the-state against block Gibbs on the bundled RBM, through pm.sample.

Prints seed 000's Table 2 for the free energy F(v) and saves the
autocorrelation of F(v) of both samplers as ``autocorrelation.png``.

    ./dev python examples/flip_vs_gibbs.py --output example_output
"""

import argparse
from pathlib import Path

from pymc_rbm.datasets import bundled_rbm
from pymc_rbm.demo import sampler_comparison

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=Path("example_output"))
    parser.add_argument("--draws", type=int, default=5000)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    args.output.mkdir(parents=True, exist_ok=True)
    sampler_comparison(bundled_rbm(), draws=args.draws, chains=args.chains, seed=args.seed, output=args.output)

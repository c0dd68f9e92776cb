"""Train a small RBM on 3x3 bars and stripes, then sample it with FlipTheState through pm.sample.

Parallel tempering (10 temperatures, one flip-the-state sweep per replica
between swaps) trains the RBM, with the exact log-likelihood recorded along
the way; the parameters with the best log-likelihood go
straight into ``pymc_rbm.RBM`` and ``pm.sample`` draws from the model with
``FlipTheState``. The frequencies of the 14 patterns in the draws are compared
with the model's exact probabilities.

    ./dev python examples/train_and_sample.py [--updates 3000] [--draws 2000]
"""

import argparse

import numpy as np
import pymc as pm

from pymc_rbm import RBM, FlipTheState
from pymc_rbm.datasets import bars_and_stripes
from pymc_rbm.estimators import log_likelihood
from pymc_rbm.training import PT, fit


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=3000)
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    data = bars_and_stripes(3)  # the 14 distinct 3x3 patterns
    result = fit(data, 9, learning_rate=0.1, n_updates=args.updates, rng=args.seed, progress=True,
                 method=PT(k=1, operator="flip", n_temperatures=10), evaluation=500)
    history = result.history
    print("update  mean log-likelihood (exact)")
    for u, ll in zip(history.updates, history.log_likelihood):
        print(f"{u:6d}  {ll:8.4f}")
    print(f"best possible: {-np.log(len(data)):.4f}")

    params = result.best_params
    with pm.Model():
        v = RBM("v", params.W, params.vbias, params.hbias)
        idata = pm.sample(
            draws=args.draws, tune=200, chains=4, cores=1, step=FlipTheState([v], sweeps=2),
            random_seed=args.seed, progressbar=False, compute_convergence_checks=False,
        )
    draws = idata.posterior["v"].values.reshape(-1, data.shape[1]).astype(int)
    p_model = np.exp(log_likelihood(params, data))
    freq = np.array([np.mean(np.all(draws == row, axis=1)) for row in data])
    print("\npattern  model p(v)  frequency in pm.sample draws")
    for row, p, f in zip(data, p_model, freq):
        print(f"{''.join(map(str, row))}  {p:9.4f}  {f:9.4f}")
    print(f"mass on the training patterns: model {p_model.sum():.3f}, draws {freq.sum():.3f}")


if __name__ == "__main__":
    main()

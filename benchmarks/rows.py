"""An RBM prior on every row of a data set: milliseconds per draw and per-row accuracy, against the number of rows.

The model: ``K`` latent 4x4 images ``v_k`` with the bundled bars-and-stripes
RBM as their prior (``shape=(K, 16)``), each seen through Gaussian readouts
``y_k = scale · v_k + offset + N(0, sigma²)`` (true values 2, -0.5, 0.9).

- **Timing** (``--rows``): scale, offset and sigma free (NUTS), ``pm.sample()``
  with its defaults (``tries``: the proposals per row and draw of
  ``ExactDraws``; ``rungs``: the ladder of ``ReplicaExchange``, where that is
  the step) beside PyMC's ``BinaryGibbsMetropolis`` (BGM) for ``v``
  (BGM only up to ``--bgm-max-rows``: its cost grows with the square of
  ``K``). ``ms/draw`` is PyMC's sampling time over all draws, tuning
  included, of one chain.
- **Accuracy** (``--accuracy-rows``): scale, offset and sigma fixed at their
  true values, so the posterior factorises over rows and each row's 2^16
  states are enumerated. ``mean err`` and ``worst err`` are the mean and the
  largest absolute error of the ``K x 16`` per-pixel marginals
  ``p(v_ki = 1 | y)`` of the pooled draws; ``iid err`` is what as many
  independent exact draws reach on average (20 repetitions, the same
  statistic), so ``mean err / iid err`` near 1 means the chains are as good
  as independent draws.

Run from the repository root (one BLAS thread, chains one after another)::

    python benchmarks/rows.py [--rows 10 100 1000 10000] [--accuracy-rows 200] [--draws 200] [--tune 200]
"""

from __future__ import annotations

import argparse
import logging
import time

import numpy as np
import pymc as pm
from scipy.special import logsumexp
from threadpoolctl import threadpool_limits

from pymc_rbm import RBM
from pymc_rbm.datasets import bars_and_stripes, bundled_rbm
from pymc_rbm.energy import free_energy
from pymc_rbm.estimators import binary_states

TRUE_SCALE, TRUE_OFFSET, TRUE_SIGMA = 2.0, -0.5, 0.9


def simulate(n_rows: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """True patterns and their noisy readouts, each of shape (n_rows, 16)."""
    rng = np.random.default_rng(seed)
    truth = bars_and_stripes(4)[rng.integers(0, 30, n_rows)]
    return truth, TRUE_SCALE * truth + TRUE_OFFSET + rng.normal(0.0, TRUE_SIGMA, truth.shape)


def build_model(params, y: np.ndarray, *, fixed: bool) -> pm.Model:
    """The model of the module docstring; ``fixed``: scale, offset and sigma at their true values."""
    with pm.Model() as model:
        if fixed:
            scale, offset, sigma = TRUE_SCALE, TRUE_OFFSET, TRUE_SIGMA
        else:
            scale = pm.HalfNormal("scale", 3.0)
            offset = pm.Normal("offset", 0.0, 2.0)
            sigma = pm.HalfNormal("sigma", 2.0)
        v = RBM("v", params.W, params.vbias, params.hbias, shape=y.shape)
        pm.Normal("y", scale * v + offset, sigma, observed=y)
    return model


def exact_marginals(params, y: np.ndarray) -> np.ndarray:
    """``p(v_ki = 1 | y)`` with scale, offset and sigma at their true values, by enumeration: (n_rows, 16)."""
    states = binary_states(16)
    log_prior = -free_energy(states, params)
    # log N(y | s v + b, σ) = -((y - b - s v)² / (2σ²)) + const, linear in v for binary v
    evidence = (((y - TRUE_OFFSET) ** 2 - (y - TRUE_OFFSET - TRUE_SCALE) ** 2) / (2 * TRUE_SIGMA**2))
    out = np.empty(y.shape)
    for k in range(y.shape[0]):
        log_post = log_prior + states @ evidence[k]
        out[k] = np.exp(log_post - logsumexp(log_post)) @ states
    return out


def iid_error(p: np.ndarray, n_draws: int, rng: np.random.Generator, reps: int = 20) -> float:
    """Mean absolute error of the marginals of ``n_draws`` independent exact draws (mean of ``reps``)."""
    return float(np.mean([np.abs(rng.binomial(n_draws, p) / n_draws - p).mean() for _ in range(reps)]))


def sample(model, sampler: str, *, draws: int, tune: int, chains: int, seed: int):
    """``pm.sample`` with the default steps or BGM for ``v``; returns (idata, seconds)."""
    with model:
        step = None if sampler == "default" else pm.BinaryGibbsMetropolis([model["v"]])
        start = time.perf_counter()
        idata = pm.sample(draws=draws, tune=tune, chains=chains, cores=1, step=step, random_seed=seed,
                          progressbar=False, compute_convergence_checks=False)
        return idata, time.perf_counter() - start


def timing_rows(params, rows, samplers, *, draws, tune, bgm_max_rows, seed):
    print(f"\nTiming: scale, offset and sigma free (NUTS), 1 chain x ({tune} + {draws}) draws")
    print(f"{'K':>6} {'sampler':>8} {'ms/draw':>9} {'x K=first':>9} {'tries':>6} {'rungs':>6} {'scale':>6} "
          f"{'offset':>7} {'sigma':>6}")
    first = {}
    for n_rows in rows:
        _, y = simulate(n_rows, seed)
        model = build_model(params, y, fixed=False)
        for sampler in samplers:
            if sampler == "BGM" and n_rows > bgm_max_rows:
                print(f"{n_rows:>6} {sampler:>8}  skipped (more than --bgm-max-rows={bgm_max_rows} rows)")
                continue
            sample(model, sampler, draws=5, tune=5, chains=1, seed=seed)  # compiled code loaded, not timed
            idata, _ = sample(model, sampler, draws=draws, tune=tune, chains=1, seed=seed)
            ms = 1e3 * idata.posterior.attrs["sampling_time"] / (draws + tune)
            first.setdefault(sampler, (n_rows, ms))
            ratio = ms / first[sampler][1]
            stats = idata.sample_stats
            rungs = int(stats["n_temperatures"].values[0, -1]) if "n_temperatures" in stats else 1
            tries = int(stats["n_tries"].values[0, -1]) if "n_tries" in stats else "-"
            post = idata.posterior
            print(f"{n_rows:>6} {sampler:>8} {ms:9.2f} {ratio:9.1f} {tries:>6} {rungs:>6} {float(post['scale'].mean()):6.2f} "
                  f"{float(post['offset'].mean()):7.2f} {float(post['sigma'].mean()):6.2f}")


def accuracy_rows(params, n_rows, samplers, *, draws, tune, chains, seed):
    truth, y = simulate(n_rows, seed)
    exact = exact_marginals(params, y)
    rng = np.random.default_rng(seed)
    iid = iid_error(exact, chains * draws, rng)
    print(f"\nAccuracy: {n_rows} rows, scale, offset and sigma fixed, {chains} chains x ({tune} + {draws}) draws; "
          f"independent exact draws: mean err {iid:.4f}")
    print(f"{'sampler':>8} {'seconds':>8} {'mean err':>9} {'/ iid':>6} {'worst err':>9}")
    model = build_model(params, y, fixed=True)
    for sampler in samplers:
        idata, seconds = sample(model, sampler, draws=draws, tune=tune, chains=chains, seed=seed)
        marginals = idata.posterior["v"].mean(("chain", "draw")).values
        err = np.abs(marginals - exact)
        print(f"{sampler:>8} {seconds:8.1f} {err.mean():9.4f} {err.mean() / iid:6.2f} {err.max():9.3f}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="*", default=[10, 100, 1000, 10000])
    parser.add_argument("--accuracy-rows", type=int, default=200, help="0 skips the accuracy table")
    parser.add_argument("--samplers", nargs="+", default=["default", "BGM"], choices=["default", "BGM"])
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--tune", type=int, default=200)
    parser.add_argument("--accuracy-draws", type=int, default=500)
    parser.add_argument("--accuracy-tune", type=int, default=500)
    parser.add_argument("--chains", type=int, default=2, help="chains of the accuracy table")
    parser.add_argument("--bgm-max-rows", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    logging.getLogger("pymc").setLevel(logging.ERROR)
    params = bundled_rbm()
    with threadpool_limits(1):
        if args.rows:
            timing_rows(params, args.rows, args.samplers, draws=args.draws, tune=args.tune,
                        bgm_max_rows=args.bgm_max_rows, seed=args.seed)
        if args.accuracy_rows:
            accuracy_rows(params, args.accuracy_rows, args.samplers, draws=args.accuracy_draws,
                          tune=args.accuracy_tune, chains=args.chains, seed=args.seed)


if __name__ == "__main__":
    main()

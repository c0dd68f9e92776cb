"""An RBM prior on every row of a data set: milliseconds per draw and per-row accuracy, against the number of rows.

The model: ``K`` latent 4x4 images ``v_k`` with the bundled bars-and-stripes
RBM as their prior (``shape=(K, 16)``), each seen through one of three readouts:

- ``units``: ``y_k = scale · v_k + offset + N(0, sigma²)`` per pixel (true
  values 2, -0.5, 0.9): per-unit evidence;
- ``linear``: three Gaussian readouts that read the row's pixels together,
  ``y_k = scale · v_k B + N(0, sigma²)`` with a fixed 16 x 3 loading matrix
  ``B`` (true scale 1, sigma 0.5): a factor model with binary features;
- ``logistic``: five binary readouts ``y_k ~ Bernoulli(logit = scale · v_k A + a0)``
  with a fixed 16 x 5 ``A`` (true scale 1, intercepts ``a0`` drawn once).

Which readout: ``--readouts``. And ``loadings``: the logistic readouts with
the loadings ``A`` themselves free (``A ~ N(0, 1)``, 80 of them, and ``a0``),
timed beside NUTS alone on ``A`` and ``a0`` with the images known (the cost
of that part of the model whatever samples ``v``).

- **Timing** (``--rows``): the readout's parameters free (NUTS),
  ``pm.sample()`` with its defaults (``tries``: the proposals per row and
  draw of ``ExactDraws``; ``rungs``: the ladder of ``ReplicaExchange``, where
  that is the step) beside PyMC's ``BinaryGibbsMetropolis`` (BGM) for ``v``
  (BGM only up to ``--bgm-max-rows``: its cost grows with the square of
  ``K``). ``ms/draw`` is PyMC's sampling time over all draws, tuning
  included, of one chain.
- **Accuracy** (``--accuracy-rows``): the readout's parameters fixed at their
  true values, so the posterior factorises over rows and each row's 2^16
  states are enumerated. ``mean err`` and ``worst err`` are the mean and the
  largest absolute error of the ``K x 16`` per-pixel marginals
  ``p(v_ki = 1 | y)`` of the pooled draws; ``iid err`` is what as many
  independent exact draws reach on average (20 repetitions, the same
  statistic), so ``mean err / iid err`` near 1 means the chains are as good
  as independent draws.

Run from the repository root (one BLAS thread, chains one after another)::

    python benchmarks/rows.py [--readouts units linear logistic loadings] [--rows 10 100 1000 10000]
                              [--accuracy-rows 200] [--draws 200] [--tune 200]
"""

from __future__ import annotations

import argparse
import logging
import time

import numpy as np
import pymc as pm
from scipy.special import expit, logsumexp
from threadpoolctl import threadpool_limits

from pymc_rbm import RBM
from pymc_rbm.datasets import bars_and_stripes, bundled_rbm
from pymc_rbm.energy import free_energy
from pymc_rbm.estimators import binary_states

TRUE = {"units": dict(scale=2.0, offset=-0.5, sigma=0.9), "linear": dict(scale=1.0, sigma=0.5),
        "logistic": dict(scale=1.0)}
READOUTS = ("units", "linear", "logistic", "loadings")


def loadings(seed: int) -> dict:
    """The fixed loadings of the coupled readouts: ``B`` (16 x 3), ``A`` (16 x 5) and the intercepts ``a0`` (5)."""
    rng = np.random.default_rng(1000 + seed)
    return {"B": rng.normal(0.0, 1.0, (16, 3)), "A": rng.normal(0.0, 1.0, (16, 5)), "a0": rng.normal(0.0, 1.0, 5)}


def simulate(readout: str, n_rows: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """True patterns (n_rows, 16) and their readouts."""
    rng = np.random.default_rng(seed)
    truth = bars_and_stripes(4)[rng.integers(0, 30, n_rows)]
    load = loadings(seed)
    if readout == "units":
        t = TRUE["units"]
        return truth, t["scale"] * truth + t["offset"] + rng.normal(0.0, t["sigma"], truth.shape)
    if readout == "linear":
        return truth, truth @ load["B"] + rng.normal(0.0, TRUE["linear"]["sigma"], (n_rows, 3))
    return truth, rng.binomial(1, expit(truth @ load["A"] + load["a0"]))


def build_model(params, readout: str, y: np.ndarray, seed: int, *, fixed: bool) -> pm.Model:
    """The model of the module docstring; ``fixed``: the readout's parameters at their true values."""
    load = loadings(seed)
    with pm.Model() as model:
        v = RBM("v", params.W, params.vbias, params.hbias, shape=(y.shape[0], 16))
        if readout == "units":
            t = TRUE["units"]
            scale, offset, sigma = (t["scale"], t["offset"], t["sigma"]) if fixed else (
                pm.HalfNormal("scale", 3.0), pm.Normal("offset", 0.0, 2.0), pm.HalfNormal("sigma", 2.0))
            pm.Normal("y", scale * v + offset, sigma, observed=y)
        elif readout == "linear":
            scale, sigma = (1.0, TRUE["linear"]["sigma"]) if fixed else (pm.HalfNormal("scale", 2.0),
                                                                         pm.HalfNormal("sigma", 1.0))
            pm.Normal("y", scale * (v @ load["B"]), sigma, observed=y)
        elif readout == "logistic":
            scale, a0 = (1.0, load["a0"]) if fixed else (pm.HalfNormal("scale", 2.0),
                                                         pm.Normal("a0", 0.0, 2.0, shape=5))
            pm.Bernoulli("y", logit_p=scale * (v @ load["A"]) + a0, observed=y)
        else:  # the loadings free
            A = pm.Normal("A", 0.0, 1.0, shape=(16, 5))
            a0 = pm.Normal("a0", 0.0, 2.0, shape=5)
            pm.Bernoulli("y", logit_p=v @ A + a0, observed=y)
    return model


def exact_marginals(params, readout: str, y: np.ndarray, seed: int) -> np.ndarray:
    """``p(v_ki = 1 | y)`` with the readout's parameters at their true values, by enumeration: (n_rows, 16)."""
    states = binary_states(16)
    log_prior = -free_energy(states, params)
    load = loadings(seed)
    out = np.empty(y.shape[:1] + (16,))
    if readout == "units":  # log N(y | s v + b, σ): linear in v for binary v
        t = TRUE["units"]
        evidence = ((y - t["offset"]) ** 2 - (y - t["offset"] - t["scale"]) ** 2) / (2 * t["sigma"] ** 2)
    mean = states @ load["B"] if readout == "linear" else states @ load["A"] + load["a0"]
    for k in range(y.shape[0]):
        if readout == "units":
            log_l = states @ evidence[k]
        elif readout == "linear":
            log_l = -((y[k] - mean) ** 2).sum(axis=-1) / (2 * TRUE["linear"]["sigma"] ** 2)
        else:
            log_l = (y[k] * mean - np.logaddexp(0.0, mean)).sum(axis=-1)
        log_post = log_prior + log_l
        out[k] = np.exp(log_post - logsumexp(log_post)) @ states
    return out


def iid_error(p: np.ndarray, n_draws: int, rng: np.random.Generator, reps: int = 20) -> float:
    """Mean absolute error of the marginals of ``n_draws`` independent exact draws (mean of ``reps``)."""
    return float(np.mean([np.abs(rng.binomial(n_draws, p) / n_draws - p).mean() for _ in range(reps)]))


def sample(model, sampler: str, *, draws: int, tune: int, chains: int, seed: int, known=None):
    """``pm.sample`` with the default steps, BGM for ``v``, or (``"NUTS, v known"``) NUTS alone on the other
    variables with ``v`` fixed at ``known``; returns (idata, seconds)."""
    if sampler == "NUTS, v known":
        model = pm.do(model, {"v": known.astype(model.rvs_to_values[model["v"]].dtype)})
    with model:
        step = pm.BinaryGibbsMetropolis([model["v"]]) if sampler == "BGM" else None
        start = time.perf_counter()
        idata = pm.sample(draws=draws, tune=tune, chains=chains, cores=1, step=step, random_seed=seed,
                          progressbar=False, compute_convergence_checks=False)
        return idata, time.perf_counter() - start


def timing_rows(params, readout, rows, samplers, *, draws, tune, bgm_max_rows, seed):
    print(f"\nTiming, {readout} readouts, their parameters free (NUTS), 1 chain x ({tune} + {draws}) draws")
    print(f"{'K':>6} {'sampler':>14} {'ms/draw':>9} {'x K=first':>9} {'tries':>6} {'rungs':>6} {'tree depth':>10}")
    first = {}
    samplers = list(samplers) + (["NUTS, v known"] if readout == "loadings" else [])
    for n_rows in rows:
        truth, y = simulate(readout, n_rows, seed)
        model = build_model(params, readout, y, seed, fixed=False)
        for sampler in samplers:
            if sampler == "BGM" and n_rows > bgm_max_rows:
                print(f"{n_rows:>6} {sampler:>14}  skipped (more than --bgm-max-rows={bgm_max_rows} rows)")
                continue
            sample(model, sampler, draws=5, tune=5, chains=1, seed=seed, known=truth)  # compiled code loaded
            idata, _ = sample(model, sampler, draws=draws, tune=tune, chains=1, seed=seed, known=truth)
            ms = 1e3 * idata.posterior.attrs["sampling_time"] / (draws + tune)
            first.setdefault(sampler, (n_rows, ms))
            ratio = ms / first[sampler][1]
            stats = idata.sample_stats
            rungs = int(stats["n_temperatures"].values[0, -1]) if "n_temperatures" in stats else "-"
            tries = int(stats["n_tries"].values[0, -1]) if "n_tries" in stats else "-"
            depth = f"{float(stats['tree_depth'].mean()):.1f}" if "tree_depth" in stats else "-"
            print(f"{n_rows:>6} {sampler:>14} {ms:9.2f} {ratio:9.1f} {tries:>6} {rungs:>6} {depth:>10}")


def accuracy_rows(params, readout, n_rows, samplers, *, draws, tune, chains, seed):
    _, y = simulate(readout, n_rows, seed)
    exact = exact_marginals(params, readout, y, seed)
    rng = np.random.default_rng(seed)
    iid = iid_error(exact, chains * draws, rng)
    print(f"\nAccuracy, {readout} readouts: {n_rows} rows, their parameters fixed, {chains} chains x ({tune} + "
          f"{draws}) draws; independent exact draws: mean err {iid:.4f}")
    print(f"{'sampler':>8} {'seconds':>8} {'mean err':>9} {'/ iid':>6} {'worst err':>9}")
    model = build_model(params, readout, y, seed, fixed=True)
    for sampler in samplers:
        idata, seconds = sample(model, sampler, draws=draws, tune=tune, chains=chains, seed=seed)
        marginals = idata.posterior["v"].mean(("chain", "draw")).values
        err = np.abs(marginals - exact)
        print(f"{sampler:>8} {seconds:8.1f} {err.mean():9.4f} {err.mean() / iid:6.2f} {err.max():9.3f}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readouts", nargs="+", default=["units", "linear", "logistic"], choices=READOUTS)
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
        for readout in args.readouts:
            if args.rows:
                timing_rows(params, readout, args.rows, args.samplers, draws=args.draws, tune=args.tune,
                            bgm_max_rows=args.bgm_max_rows, seed=args.seed)
            if args.accuracy_rows and readout != "loadings":
                accuracy_rows(params, readout, args.accuracy_rows, args.samplers, draws=args.accuracy_draws,
                              tune=args.accuracy_tune, chains=args.chains, seed=args.seed)


if __name__ == "__main__":
    main()

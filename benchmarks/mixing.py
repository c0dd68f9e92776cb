"""Mixing of the RBM samplers inside ``pm.sample``: total variation to the exact answer at equal wall time.

A sampler is judged by whether its draws match the truth in the time a user
has. For three models small enough to enumerate, every sampler gets the
wall time PyMC's ``BinaryGibbsMetropolis`` (BGM) takes for ``--draws``
draws per chain; each one's cost per draw is measured in a pilot run, and
its main run draws as many as fit in that time. The table gives

- ``TV``: total variation between the pooled draws of ``v`` and the exact
  posterior of ``v`` (enumerated: ``p(v) ∝ exp(-F(v)) L(v)``);
- ``acc/s vs BGM``: accuracy per second, ``1 / (TV² · seconds)``, over BGM's
  (TV of well-mixed draws falls like ``1 / sqrt(draws)``);
- ``ESS/s F``: ESS of the free energy ``F(v)`` per second (ArviZ, over chains);
- ``trips/s``: replica round trips per second (tempered samplers);
- samplers: ``tempered`` is ``ReplicaExchange(informed=False)``, ``informed``
  ``ReplicaExchange(betas=[1.0])`` (no tempering), ``default`` what
  ``pm.sample()`` picks, ``default+wormholes`` that step followed by
  Metropolis-accepted point wormholes between the bars-and-stripes patterns
  (bundled models only);
- ``distinct``: number of distinct states visited.

Models:

- ``bundled``: the bundled 16x16 RBM fitted to 4x4 bars and stripes, alone
  (sharply multimodal: local moves stay in one pattern);
- ``readouts``: the bundled RBM as the prior of one latent image seen
  through four Gaussian readouts ``y = v·B + N(0, 1.5²)`` with known
  loadings ``B ~ N(0, 1)``;
- ``evidence``: a random 8x4 RBM (weights N(0, 1)) with per-unit evidence
  ``y_i ~ Bernoulli(logit = 2 (2 v_i - 1))`` about an exact draw ``v`` of the RBM.

``TV iid`` is the total variation that independent exact draws, as many as
the sampler made, reach on average (20 repetitions): no sampler whose draws
are positively correlated gets below it.

BGM samples Bernoulli(1/2) units with ``-F(v)`` as a Potential (the same
distribution). Chains run one after another (``cores=1``), one BLAS thread.
Run from the repository root::

    python benchmarks/mixing.py [--models bundled readouts evidence] [--draws 5000] [--chains 4] [--seed 1]

With ``--fixed DRAWS`` every sampler makes the same number of draws instead,
once per model seed (``--seeds``): the setting of "4 chains x 1000 draws after
1000 tuning draws" (``--fixed 1000 --samplers FlipTheState default``) or of
"4 x 5000 draws against BinaryGibbsMetropolis" (``--fixed 5000 --models
evidence --samplers BGM default``).
"""

from __future__ import annotations

import argparse
import logging
import time

import numpy as np
import pymc as pm
from threadpoolctl import threadpool_limits

from pymc_rbm import RBM, BlockGibbs, FlipTheState, RBMParams, ReplicaExchange, WormholeMetropolis
from pymc_rbm.datasets import bars_and_stripes, bundled_rbm
from pymc_rbm.diagnostics import ess_free_energy
from pymc_rbm.energy import free_energy
from pymc_rbm.estimators import binary_states, sample_visible_exact
from pymc_rbm.testing import state_index

SAMPLERS = ("BGM", "BlockGibbs", "FlipTheState", "tempered", "informed", "default", "default+wormholes")


def make_model(name: str, rng: np.random.Generator):
    """Parameters, a function adding the other model terms on ``v``, and ``log L`` as NumPy."""
    if name in ("bundled", "readouts"):
        params = bundled_rbm()
    elif name == "evidence":
        params = RBMParams(rng.normal(size=(8, 4)), np.zeros(8), np.zeros(4))
    else:
        raise ValueError(f"unknown model {name!r}")
    if name == "bundled":
        return params, (lambda v: None), (lambda v: np.zeros(v.shape[0]))
    if name == "readouts":
        loadings, sigma = rng.normal(size=(16, 4)), 1.5
        truth = bars_and_stripes(4)[rng.integers(30)]
        y = truth @ loadings + rng.normal(0.0, sigma, 4)

        def add(v):
            pm.Normal("y", pm.math.dot(v, loadings), sigma, observed=y)

        def log_rest(v):
            return (-0.5 * ((y - v @ loadings) / sigma) ** 2).sum(axis=-1)

        return params, add, log_rest
    truth = sample_visible_exact(params, rng=rng)  # evidence about a state the prior finds plausible
    y = (rng.random(8) < 1.0 / (1.0 + np.exp(-2.0 * (2.0 * truth - 1.0)))).astype(np.int64)

    def add(v):
        pm.Bernoulli("y", logit_p=2.0 * (2.0 * v - 1.0), observed=y)

    def log_rest(v):
        logit = 2.0 * (2.0 * v - 1.0)
        return (y * logit - np.logaddexp(0.0, logit)).sum(axis=-1)

    return params, add, log_rest


def exact_posterior(params, log_rest) -> np.ndarray:
    v = binary_states(params.n_visible)
    log_p = -free_energy(v, params) + log_rest(v)
    p = np.exp(log_p - log_p.max())
    return p / p.sum()


def run(sampler: str, params, add, draws: int, tune: int, chains: int, seed: int):
    """``(idata, seconds)`` of one ``pm.sample`` call with the named sampler."""
    with pm.Model():
        if sampler == "BGM":
            v = pm.Bernoulli("v", 0.5, shape=params.n_visible)
            pm.Potential("rbm", -free_energy(v, params))
        else:
            v = RBM("v", params.W, params.vbias, params.hbias)
        add(v)
        step = {
            "BGM": lambda: pm.BinaryGibbsMetropolis([v]),
            "BlockGibbs": lambda: BlockGibbs([v]),
            "FlipTheState": lambda: FlipTheState([v]),
            "tempered": lambda: ReplicaExchange([v], informed=False),
            "informed": lambda: ReplicaExchange([v], betas=[1.0]),
            "default": lambda: None,
            # point wormholes between the bars-and-stripes patterns (Hinton, Welling & Mnih 2003) after each draw
            "default+wormholes": lambda: [ReplicaExchange([v]),
                                          WormholeMetropolis([v], data=bars_and_stripes(4), kind="point")],
        }[sampler]()
        start = time.perf_counter()
        idata = pm.sample(draws=draws, tune=tune, chains=chains, cores=1, step=step, random_seed=seed,
                          progressbar=False, compute_convergence_checks=False)
        seconds = time.perf_counter() - start
    return idata, seconds


def summarize(idata, seconds: float, params, p_exact) -> dict:
    v = idata.posterior["v"].values
    flat = v.reshape(-1, params.n_visible)
    q = np.bincount(state_index(flat), minlength=p_exact.size) / flat.shape[0]
    tv = 0.5 * np.abs(q - p_exact).sum()
    fe = free_energy(v.astype(np.float64), params)
    constant = np.ptp(fe) == 0
    ess = np.nan if constant else float(ess_free_energy(fe))
    ss = idata.sample_stats
    trips = float(ss["round_trips"].values[:, -1].sum()) if "round_trips" in ss else np.nan
    rng = np.random.default_rng(0)
    iid = np.mean([0.5 * np.abs(rng.multinomial(flat.shape[0], p_exact) / flat.shape[0] - p_exact).sum()
                   for _ in range(20)])
    return {
        "draws": v.shape[1], "seconds": seconds, "tv": tv, "iid": iid,
        "ess_s": ess / seconds, "trips_s": trips / seconds,
        "distinct": len(np.unique(flat, axis=0)),
        "rungs": int(ss["n_temperatures"].values[:, -1].max()) if "n_temperatures" in ss else 1,
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", default=["bundled", "readouts", "evidence"])
    parser.add_argument("--samplers", nargs="+", default=list(SAMPLERS), choices=SAMPLERS)
    parser.add_argument("--draws", type=int, default=5000, help="BGM's draws per chain (sets the time budget)")
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--pilot", type=int, default=300, help="draws per chain of the pilot runs")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--fixed", type=int, default=None, metavar="DRAWS",
                        help="instead of equal time: every sampler makes DRAWS draws per chain, for each of --seeds")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3], help="model seeds of --fixed")
    args = parser.parse_args(argv)
    logging.getLogger("pymc").setLevel(logging.ERROR)

    with threadpool_limits(1):
        if args.fixed is not None:
            fixed_draws(args)
            return
        for model in args.models:
            params, add, log_rest = make_model(model, np.random.default_rng(args.seed))
            p_exact = exact_posterior(params, log_rest)
            budget = None
            rows = []
            for sampler in args.samplers:
                if sampler == "default+wormholes" and model == "evidence":
                    continue  # its wormholes are built from bars and stripes
                run(sampler, params, add, 20, 20, 1, args.seed)  # compile and warm up
                if budget is None:
                    draws = args.draws
                else:
                    _, pilot = run(sampler, params, add, args.pilot, args.tune, args.chains, args.seed + 1)
                    per_draw = pilot / (args.chains * (args.pilot + args.tune))
                    draws = max(100, int(budget / (args.chains * per_draw)) - args.tune)
                idata, seconds = run(sampler, params, add, draws, args.tune, args.chains, args.seed)
                if budget is None:
                    budget = seconds
                rows.append((sampler, summarize(idata, seconds, params, p_exact)))
            base = rows[0][1]
            print(f"\n{model}: {params.n_visible}x{params.n_hidden}, {args.chains} chains, tune {args.tune}, "
                  f"budget {base['seconds']:.1f} s ({rows[0][0]}, {args.draws} draws per chain)")
            print(f"{'sampler':<18} {'draws':>7} {'s':>6} {'TV':>7} {'TV iid':>7} {'acc/s vs ' + rows[0][0]:>13} "
                  f"{'ESS/s F':>9} {'trips/s':>8} {'rungs':>5} {'distinct':>8}")
            for sampler, r in rows:
                gain = (base["tv"] ** 2 * base["seconds"]) / (r["tv"] ** 2 * r["seconds"])
                print(f"{sampler:<18} {r['draws']:>7} {r['seconds']:>6.1f} {r['tv']:>7.3f} {r['iid']:>7.3f} "
                      f"{gain:>13.2f} "
                      f"{r['ess_s']:>9.1f} {r['trips_s']:>8.1f} {r['rungs']:>5} {r['distinct']:>8}")


def fixed_draws(args) -> None:
    """The issue's setting: each sampler for a fixed number of draws; TV and wall time per model seed."""
    print(f"{'model':<9} {'seed':>4} {'sampler':<18} {'s':>6} {'TV':>7} {'TV iid':>7} {'rungs':>5}")
    for model in args.models:
        for seed in args.seeds:
            params, add, log_rest = make_model(model, np.random.default_rng(seed))
            p_exact = exact_posterior(params, log_rest)
            for sampler in args.samplers:
                if sampler == "default+wormholes" and model == "evidence":
                    continue
                run(sampler, params, add, 20, 20, 1, seed)  # compile and warm up
                idata, seconds = run(sampler, params, add, args.fixed, args.tune, args.chains, seed)
                r = summarize(idata, seconds, params, p_exact)
                print(f"{model:<9} {seed:>4} {sampler:<18} {seconds:>6.2f} {r['tv']:>7.4f} {r['iid']:>7.4f} "
                      f"{r['rungs']:>5}", flush=True)


if __name__ == "__main__":
    main()

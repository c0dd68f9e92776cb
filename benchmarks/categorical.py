"""Categorical RBM samplers on a protein-alphabet model: ESS/s of F(v) and TV of the site marginals.

A 20-unit, 21-state (the 20 amino acids and a gap) Potts-Bernoulli RBM with
``--hidden`` hidden units (default 10, so ``2**10`` hidden states can be
enumerated: the exact single-site marginals ``p(v_i = k)`` and ``log Z`` are
known although ``21**20`` sequences are not). Weights are uniform on
``[-scale, scale]``; a second, sharper model (``--sharp-scale``) shows where
local samplers slow down.

Each sampler runs through ``pm.sample`` on the same model, ``--chains``
chains one after another (``cores=1``), and the table gives:

- ``s/draw``: ``sampling_time`` over all iterations (tune + draws), after a
  short warm-up run of the same sampler (Numba compiles on first use);
- ``ESS(F)``: ArviZ's bulk ESS of the free energy ``F(v)`` of the draws (chains x draws);
- ``ESS/s``: ESS of F per second of sampling;
- ``TV``: the mean over sites of the total variation between the sampled and
  the exact single-site marginals (a floor of about ``sqrt(20 / (2 pi ESS))``
  for independent draws).

Samplers: ``pm.sample()`` defaults (:class:`CategoricalExactDraws` here, the
enumeration paid once), :class:`CategoricalReplicaExchange` (what the
defaults pick where a likelihood involves the sequence: 8 replicas from
β = 1 to 0.05, the ladder adapted in tuning), :class:`CategoricalMetropolisedGibbs` (``alpha=1``),
:class:`CategoricalGibbs`, and PyMC's own ``CategoricalGibbsMetropolis`` on the
same distribution written as ``pm.Categorical`` units with ``-F(v)`` as a
Potential (its default proportional proposal, which evaluates the model's logp
for all 21 values of each unit in turn). All numbers of one table come from
one run. Run from the repository root::

    python benchmarks/categorical.py [--draws 4000] [--pymc-draws 1000] [--chains 2] [--hidden 10]

``--estimators`` runs the other section instead: AIS and BAR estimates of
``log Z`` (:func:`pymc_rbm.estimators.ais`, :func:`~pymc_rbm.estimators.bar`,
the annealing path with a Potts visible layer) on a 20-unit, 21-state RBM with
``--est-hidden`` hidden units (default 60, far beyond enumeration), weights
uniform on ``[-est-scale, est-scale]``, at ``--est-chains`` chains and each of
``--est-steps`` schedule lengths (Salakhutdinov & Murray's schedule; base: the
naive mean-field marginals, the default), against a long BAR reference run
(``--ref-chains`` chains, ``--ref-steps`` steps each way) whose standard error,
forward (lower-side) and reverse (upper-side) estimates are printed. Where
``2**est-hidden`` hidden states can be enumerated (``--est-hidden 20``) the exact
``log Z`` is printed too. One thread each (``n_jobs=1``)::

    python benchmarks/categorical.py --estimators [--est-hidden 60] [--est-scale 1.0] [--est-steps 500,2000,5000]
"""

from __future__ import annotations

import argparse
import logging
import time

import arviz
import numpy as np
import pymc as pm
import pytensor.tensor as pt

from pymc_rbm.categorical import CategoricalRBM, CategoricalRBMParams, free_energy, log_partition_exact, moments_exact
from pymc_rbm.energy import RBMTensors
from pymc_rbm.estimators import ais, bar
from pymc_rbm.step_methods.categorical import CategoricalGibbs, CategoricalMetropolisedGibbs, CategoricalReplicaExchange


def site_tv(draws: np.ndarray, marginals: np.ndarray) -> float:
    """Mean over sites of ``0.5 Σ_k |p̂(v_i = k) - p(v_i = k)|``; draws (m, n), marginals (n, q)."""
    n, q = marginals.shape
    emp = np.stack([np.bincount(draws[:, i], minlength=q) for i in range(n)]) / len(draws)
    return float(0.5 * np.abs(emp - marginals).sum(axis=1).mean())


def run(params, sampler: str, draws: int, tune: int, chains: int, seed: int):
    """One ``pm.sample`` run; returns (draws (chains, draws, n), seconds)."""
    with pm.Model():
        if sampler == "CategoricalGibbsMetropolis":
            v = pm.Categorical("v", p=np.full(params.n_states, 1.0 / params.n_states), shape=params.n_visible)
            pm.Potential("rbm", -free_energy(v, RBMTensors(pt.constant(params.W), pt.constant(params.vbias),
                                                         pt.constant(params.hbias))))
            step = pm.CategoricalGibbsMetropolis([v])
        else:
            v = CategoricalRBM("v", params.W, params.vbias, params.hbias)
            step = {"default": None, "ReplicaExchange": CategoricalReplicaExchange(),
                    "MetropolisedGibbs": CategoricalMetropolisedGibbs(), "Gibbs": CategoricalGibbs()}[sampler]
        idata = pm.sample(draws=draws, tune=tune, chains=chains, cores=1, step=step, random_seed=seed,
                          progressbar=False, compute_convergence_checks=False)
    return idata.posterior["v"].values, float(idata.posterior.attrs["sampling_time"])


def table(params, name, args):
    m = moments_exact(params)
    print(f"\n## {name}: {params.n_visible} units x {params.n_states} states, {params.n_hidden} hidden; "
          f"log Z = {m.log_z:.4f} (exact, 2**{params.n_hidden} hidden states); "
          f"mean max_k p(v_i = k) = {m.v.max(axis=1).mean():.3f}")
    print(f"{'sampler':28s} {'draws':>7s} {'s/draw':>10s} {'ESS(F)':>8s} {'ESS/s':>9s} {'TV sites':>9s}")
    for sampler in ("default", "ReplicaExchange", "MetropolisedGibbs", "Gibbs", "CategoricalGibbsMetropolis"):
        draws = args.pymc_draws if sampler == "CategoricalGibbsMetropolis" else args.draws
        tune = max(draws // 5, 50)
        run(params, sampler, 5, 5, 1, args.seed + 1)  # warm-up: compiled rules and logp functions
        values, seconds = run(params, sampler, draws, tune, args.chains, args.seed)
        F = free_energy(values.reshape(-1, params.n_visible), params).reshape(values.shape[:2])
        ess = float(arviz.ess(F)) if np.ptp(F) > 0 else float("nan")
        total = args.chains * (draws + tune)
        tv = site_tv(values.reshape(-1, params.n_visible), m.v)
        print(f"{sampler:28s} {args.chains}x{draws:<5d} {seconds / total:10.2e} {ess:8.0f} {ess / seconds:9.1f} "
              f"{tv:9.3f}", flush=True)


def estimator_table(args):
    """AIS and BAR against a long BAR reference (and exact log Z where the hidden layer is enumerable)."""
    params = CategoricalRBMParams.random(20, 21, args.est_hidden, scale=args.est_scale, rng=args.seed)
    print(f"\n## AIS and BAR: 20 units x 21 states, {args.est_hidden} hidden, weights U[-{args.est_scale:g}, "
          f"{args.est_scale:g}], seed {args.seed}; base: naive mean field; n_jobs=1")
    t = time.perf_counter()
    ref = bar(params, n_chains=args.ref_chains, n_steps=args.ref_steps, rng=1000 + args.seed, n_jobs=1)
    ref_seconds = time.perf_counter() - t
    fwd, rev = ref.diagnostics["forward"], ref.diagnostics["reverse"]
    print(f"reference: BAR {args.ref_chains} chains x {args.ref_steps} steps each way: log Z = {ref.log_z:.4f} "
          f"± {ref.stderr:.4f} (forward {fwd['log_z']:.4f} ± {fwd['stderr']:.4f}, reverse {rev['log_z']:.4f} "
          f"± {rev['stderr']:.4f}; {ref_seconds:.0f} s)")
    if args.est_hidden <= 20:
        t = time.perf_counter()
        exact = log_partition_exact(params)
        print(f"exact (2**{args.est_hidden} hidden states): log Z = {exact:.4f}; reference - exact = "
              f"{ref.log_z - exact:+.4f} ({time.perf_counter() - t:.0f} s)")
    print(f"{'method':7s} {'chains':>6s} {'steps':>6s} {'seconds':>8s} {'log Z':>10s} {'stderr':>7s} "
          f"{'- ref':>8s} {'z':>6s}")
    for steps in args.est_steps:
        for name, fn, options in (("AIS", ais, {}), ("BAR", bar, {"n_jobs": 1})):
            t = time.perf_counter()
            est = fn(params, n_chains=args.est_chains, n_steps=steps, rng=args.seed, **options)
            seconds = time.perf_counter() - t
            err = est.log_z - ref.log_z
            z = err / np.hypot(est.stderr, ref.stderr)
            print(f"{name:7s} {args.est_chains:6d} {steps:6d} {seconds:8.1f} {est.log_z:10.4f} {est.stderr:7.4f} "
                  f"{err:+8.4f} {z:+6.1f}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=4000)
    parser.add_argument("--pymc-draws", type=int, default=1000)
    parser.add_argument("--chains", type=int, default=2)
    parser.add_argument("--hidden", type=int, default=10)
    parser.add_argument("--scale", type=float, default=0.5)
    parser.add_argument("--sharp-scale", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--estimators", action="store_true", help="the AIS/BAR section instead of the samplers")
    parser.add_argument("--est-hidden", type=int, default=60)
    parser.add_argument("--est-scale", type=float, default=1.0)
    parser.add_argument("--est-chains", type=int, default=100)
    parser.add_argument("--est-steps", type=lambda x: [int(s) for s in x.split(",")], default=[500, 2000, 5000])
    parser.add_argument("--ref-chains", type=int, default=400)
    parser.add_argument("--ref-steps", type=int, default=6000)
    args = parser.parse_args()
    if args.estimators:
        estimator_table(args)
        return
    logging.getLogger("pymc").setLevel(logging.ERROR)
    for scale, name in ((args.scale, "mild"), (args.sharp_scale, "sharp")):
        params = CategoricalRBMParams.random(20, 21, args.hidden, scale=scale, rng=args.seed)
        table(params, f"{name} (weights U[-{scale:g}, {scale:g}])", args)


if __name__ == "__main__":
    t = time.time()
    main()
    print(f"\n(total {time.time() - t:.0f} s)")

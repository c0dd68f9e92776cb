"""ModelLadder (parallel trajectory tempering) against ReplicaExchange on an RBM trained on MNIST, same run.

Trains a 784 x ``--n-hidden`` RBM on binarized MNIST
(``../shared/data/mnist/binarized_mnist_packed.npz``) with PCD-10, batches of
100, ``--n-updates`` updates, keeping the parameters at the union of 30
log-spaced updates and every 50th (``fit(..., save_updates=...)``): the
trajectory. The trained model and its trajectory are cached (``--cache``), so
a second run skips training. Then, on the final model, ``pm.sample`` with
each sampler, ``--chains`` chains of ``--draws`` draws after ``--tune`` tuning
draws, ``cores=1``, every chain from its own random state:

- ``ModelLadder``: ``ModelLadder([v], models=result.trajectory)`` (rungs
  chosen in tuning by equal swap rejection);
- ``ReplicaExchange``: ``ReplicaExchange([v])``, what ``pm.sample()`` runs
  on such a model by default (a ladder in β, reference chosen in tuning).

Columns: rungs at the end of tuning, wall time of ``pm.sample``, round trips
per chain after tuning and per second of ``pm.sample``'s own sampling time
(tuning included), ArviZ's ESS of the free energy F(v) over all chains and
per second, the agreement of the visible marginals of the first and second
half of the chains as a ratio to what independent draws would show
(``real_rbms.halves_ratio``), and the number of warnings logged. The CPU
time of the process (``time.process_time``) is given beside the wall time,
with the rates per CPU second: on a shared machine the wall time of two runs
depends on what else ran meanwhile.

With ``--log-z``, also ``log Z`` of the final model by BAR along the
trajectory (:func:`pymc_rbm.estimators.log_partition_trajectory`), from an
independent model (``W = 0``, the first model's biases) put first, beside
the estimators' AIS on the same model.

Run from the repository root::

    ./dev python benchmarks/model_ladder.py
    ./dev python benchmarks/model_ladder.py --n-hidden 500 --draws 300 --tune 300
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from real_rbms import halves_ratio, run_sampler

HERE = Path(__file__).resolve().parent
MNIST = HERE.parent.parent / "shared" / "data" / "mnist" / "binarized_mnist_packed.npz"


def train(n_hidden: int, n_updates: int, cache: Path, seed: int):
    """The final RBMParams and the trajectory (list of RBMParams), trained or read from ``cache``."""
    from pymc_rbm import RBMParams

    if cache.exists():
        with np.load(cache) as d:
            n = int(d["n_models"])
            models = [RBMParams(d[f"W_{i}"], d[f"vbias_{i}"], d[f"hbias_{i}"]) for i in range(n)]
            print(f"trajectory of {n} models read from {cache} (trained in {float(d['seconds']):.0f} s)")
            return models[-1], models
    from pymc_rbm.datasets import load_mnist
    from pymc_rbm.training import fit
    from pymc_rbm.training.trajectory import log_spaced_updates

    data = load_mnist(MNIST).images
    save = np.unique(np.concatenate([log_spaced_updates(n_updates, 30), np.arange(0, n_updates + 1, 50)]))
    start = time.perf_counter()
    result = fit(data, n_hidden, method="pcd", k=10, batch_size=100, n_updates=n_updates, save_updates=save,
                 eval_every=None, progress=False, rng=seed)
    seconds = time.perf_counter() - start
    models = list(result.trajectory.params)
    print(f"trained 784x{n_hidden}, PCD-10, {n_updates} updates in {seconds:.0f} s; {len(models)} models kept")
    arrays = {f"{k}_{i}": getattr(p, k) for i, p in enumerate(models) for k in ("W", "vbias", "hbias")}
    np.savez(cache, n_models=len(models), seconds=seconds, **arrays)
    return result.params, models


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n-hidden", type=int, default=100)
    parser.add_argument("--n-updates", type=int, default=1500)
    parser.add_argument("--cache", type=Path, default=None,
                        help="trajectory file (default /tmp/pymc_rbm_model_ladder_h<n>_<updates>.npz)")
    parser.add_argument("--draws", type=int, default=500)
    parser.add_argument("--tune", type=int, default=300)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--samplers", nargs="+", default=["ModelLadder", "ReplicaExchange"])
    parser.add_argument("--log-z", action="store_true")
    args = parser.parse_args(argv)
    cache = args.cache or Path(f"/tmp/pymc_rbm_model_ladder_h{args.n_hidden}_{args.n_updates}.npz")
    params, models = train(args.n_hidden, args.n_updates, cache, args.seed)

    import arviz as az

    from pymc_rbm import ModelLadder, ReplicaExchange

    samplers = {"ModelLadder": lambda v: ModelLadder([v], models=models),
                "ReplicaExchange": lambda v: ReplicaExchange([v])}
    print(f"\n{args.chains} chains x {args.draws} draws after {args.tune} tuning draws, cores=1")
    print(f"{'sampler':<16} {'rungs':>5} {'wall s':>7} {'cpu s':>7} {'trips/chain':>16} {'trips/s':>8} "
          f"{'trips/cpu-s':>11} {'ESS F':>7} {'ESS/s':>7} {'ESS/cpu-s':>9} {'halves':>7} {'warnings':>8}")
    notes = []
    for label in args.samplers:
        cpu = time.process_time()
        r = run_sampler(params, samplers[label], draws=args.draws, tune=args.tune, chains=args.chains,
                        seed=args.seed)
        cpu = time.process_time() - cpu  # robust to other jobs on a shared machine, unlike the wall time
        trips = r["round_trips"]
        ess = float(az.ess(r["free_energy"]))
        print(f"{label:<16} {r['rungs']:>5} {r['wall']:>7.1f} {cpu:>7.1f} {','.join(str(int(t)) for t in trips):>16} "
              f"{trips.sum() / r['sampling']:>8.3f} {trips.sum() / cpu:>11.3f} {ess:>7.1f} {ess / r['sampling']:>7.3f} "
              f"{ess / cpu:>9.3f} {halves_ratio(r['draws']):>7.2f} {len(r['warnings']):>8}", flush=True)
        notes += [f"{label}: {w}" for w in r["warnings"]]
    for n in notes:
        print("  note:", n[:300])
    if args.log_z:
        from pymc_rbm import RBMParams
        from pymc_rbm.estimators import ais, log_partition_trajectory

        first = models[0]
        ladder = [RBMParams(np.zeros_like(first.W), first.vbias, first.hbias), *models]
        start = time.perf_counter()
        est = log_partition_trajectory(ladder, n_chains=10, n_rounds=500, rng=args.seed)
        t_traj = time.perf_counter() - start
        start = time.perf_counter()
        ref = ais(params, n_chains=100, rng=args.seed)
        t_ais = time.perf_counter() - start
        print(f"\nlog Z of the final model: trajectory BAR {est.log_z:.3f} ± {est.stderr:.3f} ({t_traj:.0f} s, "
              f"{len(ladder)} models, {est.diagnostics['round_trips']} round trips); AIS {ref.log_z:.3f} ± "
              f"{ref.stderr:.3f} ({t_ais:.0f} s)")


if __name__ == "__main__":
    main()

"""ModelLadder (parallel trajectory tempering) against ReplicaExchange on an RBM trained on MNIST, same run.

Trains a 784 x ``--n-hidden`` RBM on binarized MNIST
(``../shared/data/mnist/binarized_mnist_packed.npz``) with PCD-10, batches of
100, ``--n-updates`` updates, keeping the parameters at the union of 30
log-spaced updates and every 50th (``fit(..., checkpoints=Checkpoints(updates=...))``): the
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

With ``--round-timing N``, first the cost of one round per rung on ``N``
models spread evenly along the trajectory, one chain, flip-the-state, in
one process and interleaved: the compiled round of the model ladder (one
call for every rung and swap, cross free energies from carried hidden
inputs), the same round with per-rung compiled sweeps and the cross free
energies by full products (``log_ratio_fn=cross_terms``, the round before
the one-call path: the same chain), and ``ReplicaExchange``'s compiled round
of ``N`` replicas of the final model at β from 0.3 to 1.

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
    from pymc_rbm.training import PCD, SGD, Checkpoints, fit
    from pymc_rbm.training.trajectory import log_spaced_updates

    data = load_mnist(MNIST).images
    save = np.unique(np.concatenate([log_spaced_updates(n_updates, 30), np.arange(0, n_updates + 1, 50)]))
    start = time.perf_counter()
    result = fit(data, n_hidden, method=PCD(k=10), batch_size=100, learning_rate=0.01,
                 optimizer=SGD(schedule="constant"), n_updates=n_updates, checkpoints=Checkpoints(updates=save),
                 evaluation=None, progress=False, rng=seed)
    seconds = time.perf_counter() - start
    models = list(result.trajectory.params)
    print(f"trained 784x{n_hidden}, PCD-10, {n_updates} updates in {seconds:.0f} s; {len(models)} models kept")
    arrays = {f"{k}_{i}": getattr(p, k) for i, p in enumerate(models) for k in ("W", "vbias", "hbias")}
    np.savez(cache, n_models=len(models), seconds=seconds, **arrays)
    return result.params, models


def round_timing(models, n_rungs: int, repeats: int = 7, rounds: int = 20, seed: int = 0) -> None:
    """Print the wall and CPU time per rung of a model-ladder round (both paths) and a ReplicaExchange round."""
    from pymc_rbm.kernels import operator_rule, replica_rounds
    from pymc_rbm.kernels.model_ladder import cross_terms, init_model_ladder, model_ladder_round, model_rungs

    idx = np.unique(np.linspace(0, len(models) - 1, n_rungs).round().astype(int))
    rungs = model_rungs([models[i] for i in idx])
    k, rule = rungs.n_rungs, operator_rule("flip")
    rng = np.random.default_rng(seed)
    state = init_model_ladder(rng, rng.random((1, rungs.n_visible)) < 0.5, rungs)
    for _ in range(100):  # away from the random start
        state, _ = model_ladder_round(rng, state, rungs, rule=rule, compiled_sweeps=True)
    states = {"one call": state, "per rung": state}

    def ladder(name, **kwargs):
        def run():
            states[name], _ = model_ladder_round(rng, states[name], rungs, rule=rule, compiled_sweeps=True, **kwargs)
        return run

    target = models[-1]
    W = np.ascontiguousarray(target.W, dtype=np.float64)
    model = (W, np.ascontiguousarray(W.T), np.asarray(target.vbias, float), np.asarray(target.hbias, float))
    v, h = state.v.copy(), np.zeros((k, 1, W.shape[1]))
    betas, labels = np.linspace(0.3, 1.0, k), np.zeros((k, 1), dtype=np.int64)
    swap_sum, swap_n, parity = np.zeros(k - 1), np.zeros(k - 1), [0]

    def tempered():
        replica_rounds.tempered_round(rng, v, h, model, betas, k, (parity[0], labels, swap_sum, swap_n))
        parity[0] ^= 1

    for _ in range(100):
        tempered()
    runs = {"ModelLadder, one call": ladder("one call"),
            "ModelLadder, per rung": ladder("per rung", log_ratio_fn=cross_terms),
            "ReplicaExchange": tempered}
    times = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            wall, cpu = time.perf_counter(), time.process_time()
            for _ in range(rounds):
                run()
            times[name].append(((time.perf_counter() - wall) / rounds / k, (time.process_time() - cpu) / rounds / k))
    print(f"\none round per rung, {k} models of the trajectory (n_visible {rungs.n_visible}, n_hidden "
          f"{W.shape[1]}), 1 chain, flip-the-state; median of {repeats} x {rounds} rounds, interleaved")
    for name, t in times.items():
        wall, cpu = np.median(np.array(t), axis=0) * 1e3
        print(f"  {name:<24} wall {wall:.3f} ms   CPU {cpu:.3f} ms")


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
    parser.add_argument("--samplers", nargs="*", default=["ModelLadder", "ReplicaExchange"],
                        help="samplers to run in pm.sample (none: only --round-timing, --log-z)")
    parser.add_argument("--log-z", action="store_true")
    parser.add_argument("--round-timing", type=int, default=0, metavar="N",
                        help="first time one round per rung on N models of the trajectory")
    args = parser.parse_args(argv)
    cache = args.cache or Path(f"/tmp/pymc_rbm_model_ladder_h{args.n_hidden}_{args.n_updates}.npz")
    params, models = train(args.n_hidden, args.n_updates, cache, args.seed)
    if args.round_timing:
        round_timing(models, args.round_timing, seed=args.seed)

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

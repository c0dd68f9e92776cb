"""Test log-likelihood and time per update of PCD-k training: :func:`pymc_rbm.training.fit` beside ``rbms``.

The protocol of issue 30: binarized MNIST (``../shared/data/mnist/binarized_mnist_packed.npz``, 50000
training rows, the 10000 test rows scored), 784 visible x 500 hidden units, mini-batches of 100,
learning rate 0.01, 100 persistent chains, 2000 updates. Every trainer of one seed starts from the same
parameters (``W ~ N(0, 0.01²)``, visible biases at the logits of the training means clipped to
[1e-4, 1 - 1e-4], hidden biases 0) and the same chains (100 training rows and their hidden draws).
The test log-likelihood of every trained model is scored by our BAR (``pymc_rbm.estimators.bar``,
1000 chains of 1000 steps... see ``--bar-chains``/``--bar-steps``) with the same seed.

Trainers (``--trainers``, comma separated):

- ``ours``: plain gradient ascent (``momentum=0``, the step ``rbms``' ``torch.optim.SGD`` takes, so both
  trainers follow the same steps) and ``fit``'s defaults for the rest (centered gradient, hidden units
  redrawn at the new parameters every update as rbms does, float64); ``ours-uncentered``, ``ours-carry`` (the chains'
  hidden state carried over the update, visible layer first), ``ours-0.2`` (uncentered and carried:
  the loop of pymc-rbm 0.2), ``ours-f32`` (float32);
- ``fit-defaults``: ``fit(train, 500, method="pcd", k=k, batch_size=100, learning_rate=0.01,
  n_updates=2000)`` from its own default initialisation (not the shared start) and with its default
  momentum; ``fit-defaults-carry`` the same with ``hidden="carry"``, ``fit-defaults-init-normal`` with
  ``init="normal"`` (0.2's start), ``fit-defaults-no-momentum`` with ``momentum=0``;
- ``rbms`` (centered, its default) and ``rbms-uncentered``: the PyTorch package ``rbms``'s own
  objects (``BBRBM.sample_state``, ``compute_gradient``, ``torch.optim.SGD(maximize=True)``, a random
  batch per update as its ``RBMDataset.batch`` draws it), float32 unless ``--rbms-dtype float64``.
  Skipped, with a note, when ``rbms`` (or torch) is not installed: neither is a dependency of
  pymc-rbm.

Each run appends one JSON line to ``--out`` (default ``/tmp/training_quality.jsonl``) as soon as it
is scored, so a long protocol can be run one trainer at a time and the table printed at the end from
the file (``--table``). ``--timing`` instead times every trainer (and rbms in float32 and float64) in
interleaved short runs on the same number of threads: the median time of an update (fit: between its
callbacks; rbms: each update of the same loop), the fastest of ``--repeats`` rounds, and the ratios.

Run from the repository root, e.g.::

    python benchmarks/training_quality.py --k 10 --seeds 0 1 2 --trainers ours,rbms
    python benchmarks/training_quality.py --table
    python benchmarks/training_quality.py --timing --k 1 10 --threads 2
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import scipy.linalg  # noqa: F401  (numba's np.dot uses SciPy's BLAS: load it before limiting threads)
from threadpoolctl import threadpool_limits

import numpy as np

from pymc_rbm.datasets import load_mnist
from pymc_rbm.estimators import log_likelihood, log_partition
from pymc_rbm.kernels.gibbs import init_state
from pymc_rbm.params import RBMParams
from pymc_rbm.training import fit

MNIST = Path(__file__).resolve().parents[2] / "shared" / "data" / "mnist" / "binarized_mnist_packed.npz"
N_HIDDEN, BATCH, LEARNING_RATE, N_CHAINS = 500, 100, 0.01, 100

#: fit options of our trainers (beside the protocol's)
OURS = {
    "ours": {},
    "ours-uncentered": {"centered": False},
    "ours-carry": {"hidden": "carry"},
    "ours-0.2": {"hidden": "carry", "centered": False},
    "ours-f32": {"dtype": np.float32},
}


def load():
    train = load_mnist(MNIST, split="train").images.astype(np.float64)
    test = load_mnist(MNIST, split="test").images.astype(np.float64)
    return train, test


def shared_start(train, seed):
    """The protocol's starting parameters and chains for ``seed``: the same for every trainer."""
    rng = np.random.default_rng([30, seed])
    freq = np.clip(train.mean(axis=0), 1e-4, 1 - 1e-4)
    params = RBMParams(rng.normal(0.0, 0.01, (train.shape[1], N_HIDDEN)), np.log(freq / (1 - freq)),
                       np.zeros(N_HIDDEN))
    chains = init_state(rng, train[rng.choice(train.shape[0], N_CHAINS, replace=False)], params)
    return params, chains


def train_ours(name, train, k, n_updates, seed):
    """Train with fit; return (params, seconds)."""
    common = dict(method="pcd", k=k, batch_size=BATCH, learning_rate=LEARNING_RATE, lr_schedule="constant",
                  n_updates=n_updates, eval_every=None, progress=False, rng=seed)
    t = time.perf_counter()
    if name.startswith("fit-defaults"):
        extra = {"fit-defaults-carry": {"hidden": "carry"}, "fit-defaults-init-normal": {"init": "normal"},
                 "fit-defaults-no-momentum": {"momentum": 0.0}}
        result = fit(train, N_HIDDEN, **common, **extra.get(name, {}))
    else:
        params, chains = shared_start(train, seed)
        options = {"momentum": 0.0, **OURS[name]}
        if "dtype" in options:
            chains = chains._replace(v=chains.v.astype(options["dtype"]), h=chains.h.astype(options["dtype"]))
        result = fit(train, params=params, chains=chains, n_chains=N_CHAINS, **common, **options)
    return result.params.astype(np.float64), time.perf_counter() - t


def rbms_available() -> bool:
    try:
        import rbms  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def train_rbms(name, train, k, n_updates, seed, dtype="float32"):
    """Train with the objects of the ``rbms`` package (its PCD loop without its file IO)."""
    import torch
    from rbms.bernoulli_bernoulli.classes import BBRBM

    tdtype = getattr(torch, dtype)
    torch.manual_seed(seed)
    params, chains = shared_start(train, seed)
    model = BBRBM(*(torch.tensor(a, dtype=tdtype) for a in (params.W, params.vbias, params.hbias)))
    data = torch.tensor(train, dtype=tdtype)
    weights = torch.ones(data.shape[0], dtype=tdtype)
    state = model.init_chains(num_samples=N_CHAINS, start_v=torch.tensor(chains.v, dtype=tdtype))
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE, maximize=True)
    centered = name == "rbms"
    t = time.perf_counter()
    with torch.no_grad():
        for _ in range(n_updates):
            idx = torch.randperm(data.shape[0])[:BATCH]
            optimizer.zero_grad(set_to_none=False)
            batch = model.init_chains(num_samples=BATCH, weights=weights[idx], start_v=data[idx])
            state = model.sample_state(chains=state, n_steps=k)
            model.compute_gradient(data=batch, chains=state, centered=centered)
            optimizer.step()
    seconds = time.perf_counter() - t
    out = RBMParams(*(x.double().numpy() for x in (model.weight_matrix, model.vbias, model.hbias)))
    return out, seconds


def score(params, train, test, seed, bar_chains, bar_steps):
    """Mean test log-likelihood with log Z from BAR (same seed for every trainer)."""
    est = log_partition(params, "bar", rng=seed, n_chains=bar_chains, n_steps=bar_steps, data=train)
    return float(log_likelihood(params, test, log_z=float(est)).mean()), float(est.stderr)


def run_protocol(args, train, test):
    for name in args.trainers:
        if name.startswith("rbms") and not rbms_available():
            print(f"{name}: skipped (rbms / torch not installed; neither is a dependency of pymc-rbm)")
            continue
        for k in args.k:
            for seed in args.seeds:
                with threadpool_limits(args.threads):
                    if name.startswith("rbms"):
                        import torch

                        torch.set_num_threads(args.threads)
                        params, seconds = train_rbms(name, train, k, args.updates, seed, args.rbms_dtype)
                    else:
                        params, seconds = train_ours(name, train, k, args.updates, seed)
                    ll, se = score(params, train, test, seed, args.bar_chains, args.bar_steps)
                row = {"trainer": name, "k": k, "seed": seed, "updates": args.updates, "test_ll": ll,
                       "log_z_stderr": se, "ms_per_update": 1e3 * seconds / args.updates,
                       "threads": args.threads}
                print(json.dumps(row), flush=True)
                with open(args.out, "a") as f:
                    f.write(json.dumps(row) + "\n")


def table(path):
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    groups: dict = {}
    for r in rows:
        groups.setdefault((r["trainer"], r["k"]), []).append(r)
    print(f"{'trainer':18s} {'k':>3s} {'seeds':>6s} {'test LL per seed':>34s} {'mean':>9s} {'ms/update':>10s}")
    for (name, k), rs in sorted(groups.items(), key=lambda x: (x[0][1], x[0][0])):
        ll = [r["test_ll"] for r in rs]
        ms = np.median([r["ms_per_update"] for r in rs])
        print(f"{name:18s} {k:3d} {len(rs):6d} {' '.join(f'{x:.2f}' for x in ll):>34s} {np.mean(ll):9.2f} "
              f"{ms:10.2f}")


def ours_update_ms(name, train, k, n_updates):
    """Median milliseconds between consecutive updates of fit (callback timestamps): fixed costs and load
    spikes left out."""
    stamps = []
    params, chains = shared_start(train, 0)
    options = {"momentum": 0.0, **OURS[name]}
    if "dtype" in options:
        chains = chains._replace(v=chains.v.astype(options["dtype"]), h=chains.h.astype(options["dtype"]))
    fit(train, params=params, chains=chains, n_chains=N_CHAINS, method="pcd", k=k, batch_size=BATCH,
        learning_rate=LEARNING_RATE, n_updates=n_updates, eval_every=None, progress=False, rng=0, save_updates=0,
        callback=lambda step: stamps.append(time.perf_counter()), **options)
    return 1e3 * float(np.median(np.diff(stamps)))


def rbms_update_ms(train, k, n_updates, dtype):
    """Median milliseconds of one update of the rbms loop of :func:`train_rbms` (same steps, timed one by one)."""
    import torch
    from rbms.bernoulli_bernoulli.classes import BBRBM

    tdtype = getattr(torch, dtype)
    params, chains = shared_start(train, 0)
    model = BBRBM(*(torch.tensor(a, dtype=tdtype) for a in (params.W, params.vbias, params.hbias)))
    data = torch.tensor(train, dtype=tdtype)
    weights = torch.ones(data.shape[0], dtype=tdtype)
    state = model.init_chains(num_samples=N_CHAINS, start_v=torch.tensor(chains.v, dtype=tdtype))
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE, maximize=True)
    times = []
    with torch.no_grad():
        for _ in range(n_updates):
            t = time.perf_counter()
            idx = torch.randperm(data.shape[0])[:BATCH]
            optimizer.zero_grad(set_to_none=False)
            batch = model.init_chains(num_samples=BATCH, weights=weights[idx], start_v=data[idx])
            state = model.sample_state(chains=state, n_steps=k)
            model.compute_gradient(data=batch, chains=state, centered=True)
            optimizer.step()
            times.append(time.perf_counter() - t)
    return 1e3 * float(np.median(times))


def timing(args, train):
    """ms per update of each trainer (median over an interleaved run, fastest of ``--repeats``); ratios to rbms
    float32, measured in the same run."""
    names = [n for n in args.trainers if not n.startswith("rbms")]
    with_rbms = rbms_available()
    if with_rbms:
        import torch

        torch.set_num_threads(args.threads)
    for k in args.k:
        n = args.timing_updates
        best: dict = {}
        with threadpool_limits(args.threads):
            for name in names:  # warm-up: compilation, caches
                ours_update_ms(name, train, k, 3)
            if with_rbms:
                rbms_update_ms(train, k, 3, "float32")
            for _ in range(args.repeats):
                for name in names:
                    best[name] = min(best.get(name, np.inf), ours_update_ms(name, train, k, n))
                if with_rbms:
                    for dt in ("float32", "float64"):
                        best[f"rbms {dt}"] = min(best.get(f"rbms {dt}", np.inf), rbms_update_ms(train, k, n, dt))
        ref = best.get("rbms float32")
        print(f"\nPCD-{k}: ms per update (median of {n}), {args.threads} thread(s), fastest of {args.repeats} "
              "interleaved rounds; ratio to rbms float32")
        for name, ms in best.items():
            ratio = f"{ms / ref:8.2f}" if ref else "   (rbms not installed)"
            print(f"  {name:18s} {ms:8.2f} {ratio}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trainers", type=lambda s: s.split(","), default=["ours", "rbms"])
    parser.add_argument("--k", type=int, nargs="+", default=[10])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--updates", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--bar-chains", type=int, default=100)
    parser.add_argument("--bar-steps", type=int, default=None)
    parser.add_argument("--rbms-dtype", default="float32")
    parser.add_argument("--out", default="/tmp/training_quality.jsonl")
    parser.add_argument("--table", action="store_true", help="print the table of --out and stop")
    parser.add_argument("--timing", action="store_true", help="time the trainers instead")
    parser.add_argument("--timing-updates", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.table:
        table(args.out)
        return
    if not MNIST.exists():
        print(f"no MNIST at {MNIST}: nothing to measure")
        return
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    train, test = load()
    if args.timing:
        timing(args, train)
    else:
        run_protocol(args, train, test)
        table(args.out)


if __name__ == "__main__":
    main()

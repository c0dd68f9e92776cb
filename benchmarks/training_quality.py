"""Test log-likelihood and time per update of PCD-k training: :func:`pymc_rbm.training.fit` beside ``rbms``.

The protocol of issue 30: binarized MNIST (``../shared/data/mnist/binarized_mnist_packed.npz``, 50000
training rows, the 10000 test rows scored), 784 visible x 500 hidden units, mini-batches of 100,
learning rate 0.01, 100 persistent chains, 2000 updates. Every trainer of one seed starts from the same
parameters (``W ~ N(0, 0.01²)``, visible biases at the logits of the training means clipped to
[1e-4, 1 - 1e-4], hidden biases 0) and the same chains (100 training rows and their hidden draws).
The test log-likelihood of every trained model is scored by our BAR (``pymc_rbm.estimators.bar``,
1000 chains of 1000 steps... see ``--bar-chains``/``--bar-steps``) with the same seed.

Trainers (``--trainers``, comma separated):

- ``ours``: plain gradient ascent (``SGD(momentum=0)``, the step ``rbms``' ``torch.optim.SGD`` takes, so both
  trainers follow the same steps) and ``fit``'s defaults for the rest (centered gradient, hidden units
  redrawn at the new parameters every update as rbms does, float64); ``ours-uncentered``, ``ours-carry`` (the chains'
  hidden state carried over the update, visible layer first), ``ours-0.2`` (uncentered and carried:
  the loop of pymc-rbm 0.2), ``ours-f32`` (float32);
- ``fit-defaults``: ``fit(train, 500, method=PCD(k=k), batch_size=100, learning_rate=0.01,
  n_updates=2000)`` from its own default initialisation (not the shared start) and with its default
  momentum; ``fit-defaults-carry`` the same with ``PCD(hidden="carry")``, ``fit-defaults-init-normal`` with
  ``params=Init("normal")`` (0.2's start), ``fit-defaults-no-momentum`` with ``SGD(momentum=0)``;
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

``--budget SECONDS`` instead gives every trainer the same wall time (per seed): ``fit-budget`` is
``fit(train, 500, max_time=SECONDS, rng=seed)`` with every other option at its default; ``rbms-budget``
is rbms' PCD loop with its own recommended settings (those its ``train_rbm`` script takes when given
none: batches of 2000, 2000 chains, 100 Gibbs steps, learning rate 0.01, centered, its own
initialisation), ``rbms-budget-small`` the same loop with batches of 100, 100 chains and 10 steps, until
the budget. Each result is scored by BAR and by forward AIS from the training rows, and by RAISE (reverse
AIS started at 100 of the first 1000 test rows, their conservative log-likelihoods; Burda, Grosse &
Salakhutdinov 2015); parameters kept at log-spaced times along the run are scored by BAR for the curve of test
log-likelihood against wall time (``--figure``).

Run from the repository root, e.g.::

    python benchmarks/training_quality.py --k 10 --seeds 0 1 2 --trainers ours,rbms
    python benchmarks/training_quality.py --table
    python benchmarks/training_quality.py --timing --k 1 10 --threads 2
    python benchmarks/training_quality.py --budget 600 --seeds 0 1 --threads 2 \\
        --trainers fit-budget,rbms-budget,rbms-budget-small --figure docs/images/training_budget.png
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
from pymc_rbm.training import PCD, SGD, Checkpoints, Init, fit
from pymc_rbm.training.optimizers import DEFAULT_MOMENTUM

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


def shared_options(name, train, k, seed) -> dict:
    """The start, method and optimiser of our trainer ``name`` (``OURS``): the protocol's shared start and chains,
    plain gradient ascent."""
    params, chains = shared_start(train, seed)
    flat = OURS[name]
    dtype = flat.get("dtype")
    if dtype is not None:
        chains = chains._replace(v=chains.v.astype(dtype), h=chains.h.astype(dtype))
    return dict(params=Init(params, dtype=dtype),
                method=PCD(k=k, n_chains=N_CHAINS, chains=chains, hidden=flat.get("hidden", "redraw")),
                optimizer=SGD(momentum=0.0, schedule="constant", centered=flat.get("centered", True)))


def train_ours(name, train, k, n_updates, seed):
    """Train with fit; return (params, seconds)."""
    common = dict(batch_size=BATCH, learning_rate=LEARNING_RATE, n_updates=n_updates, progress=False, rng=seed,
                  evaluation=None)
    t = time.perf_counter()
    if name.startswith("fit-defaults"):
        method = PCD(k=k, hidden="carry" if name == "fit-defaults-carry" else "redraw")
        start = Init("normal" if name == "fit-defaults-init-normal" else "data")
        optimizer = SGD(momentum=0.0 if name == "fit-defaults-no-momentum" else DEFAULT_MOMENTUM, schedule="constant")
        result = fit(train, N_HIDDEN, params=start, method=method, optimizer=optimizer, **common)
    else:
        result = fit(train, **common, **shared_options(name, train, k, seed))
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
    fit(train, batch_size=BATCH, learning_rate=LEARNING_RATE, n_updates=n_updates, progress=False, rng=0,
        callback=lambda step: stamps.append(time.perf_counter()), **shared_options(name, train, k, 0),
        evaluation=None, checkpoints=Checkpoints(updates=0))
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


# ----------------------------------------------------------------- the same time budget
#: rbms' own recommended settings (``rbms.parser.default_args`` of rbms 0.6, the ones its ``train_rbm`` script
#: uses when none are given), and the protocol's smaller ones (batches of 100, 100 chains, PCD-10)
RBMS_BUDGET = {
    "rbms-budget": dict(batch_size=2000, gibbs_steps=100, learning_rate=0.01, num_chains=2000),
    "rbms-budget-small": dict(batch_size=100, gibbs_steps=10, learning_rate=0.01, num_chains=100),
}


def snapshot_times(budget, n_points):
    """Wall times (s) at which the parameters are kept for the curve: log-spaced from 2 % of the budget to it."""
    return list(np.geomspace(0.02 * budget, budget, n_points)[:-1])


def budget_fit(train, seed, budget, n_points):
    """``fit(train, 500, max_time=budget, rng=seed)``, all else default; the raw parameters at the snapshot times
    (from the callback) and the result. Returns (snapshots [(seconds, params)], result params, seconds, info)."""
    times, snaps = snapshot_times(budget, n_points), []
    t0 = time.perf_counter()

    def keep(step):
        if times and time.perf_counter() - t0 >= times[0]:
            times.pop(0)
            snaps.append((time.perf_counter() - t0, step.params.astype(np.float64)))

    result = fit(train, N_HIDDEN, max_time=budget, rng=seed, progress=False, callback=keep)
    seconds = time.perf_counter() - t0
    info = {"n_updates": int(result.n_updates), "stop_reason": result.stop_reason,
            "dtype": str(result.params.W.dtype)}
    return snaps, result.params.astype(np.float64), seconds, info


def budget_rbms(name, train, seed, budget, n_points, threads):
    """rbms' PCD loop with ``RBMS_BUDGET[name]`` from its own initialisation (``BBRBM.init_parameters``, chains
    from random visible states) until the budget, float32: the parameters at the snapshot times and at the end."""
    import torch
    from rbms.bernoulli_bernoulli.classes import BBRBM
    from rbms.dataset.dataset_class import RBMDataset

    settings = RBMS_BUDGET[name]
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    times, snaps = snapshot_times(budget, n_points), []

    def as_params(model):
        return RBMParams(*(x.double().numpy().copy() for x in (model.weight_matrix, model.vbias, model.hbias)))

    t0 = time.perf_counter()
    data = torch.tensor(train, dtype=torch.float32)
    dataset = RBMDataset(data=train.astype(np.float32), labels=np.zeros(len(train), dtype=np.int64),
                         weights=np.ones(len(train), dtype=np.float32), names=np.arange(len(train)).astype(str),
                         dataset_name="mnist", variable_type="bernoulli", device="cpu", dtype=torch.float32)
    model = BBRBM.init_parameters(N_HIDDEN, dataset, "cpu", torch.float32)
    weights = torch.ones(data.shape[0], dtype=torch.float32)
    state = model.init_chains(num_samples=settings["num_chains"])
    optimizer = torch.optim.SGD(model.parameters(), lr=settings["learning_rate"], maximize=True)
    n_updates = 0
    with torch.no_grad():
        while time.perf_counter() - t0 < budget:
            idx = torch.randperm(data.shape[0])[:settings["batch_size"]]
            optimizer.zero_grad(set_to_none=False)
            batch = model.init_chains(num_samples=len(idx), weights=weights[idx], start_v=data[idx])
            state = model.sample_state(chains=state, n_steps=settings["gibbs_steps"])
            model.compute_gradient(data=batch, chains=state, centered=True)
            optimizer.step()
            n_updates += 1
            if times and time.perf_counter() - t0 >= times[0]:
                times.pop(0)
                snaps.append((time.perf_counter() - t0, as_params(model)))
    seconds = time.perf_counter() - t0
    return snaps, as_params(model), seconds, {"n_updates": n_updates, "dtype": "float32", **settings}


def run_budget(args, train, test):
    """Every trainer of ``--trainers`` (``fit-budget``, ``rbms-budget``, ``rbms-budget-small``) for ``--budget``
    seconds per seed; the result scored by BAR and forward AIS (from training rows) and RAISE (from test rows), the
    snapshots by BAR. One JSON line per run in ``--out``."""
    for name in args.trainers:
        if name.startswith("rbms") and not rbms_available():
            print(f"{name}: skipped (rbms / torch not installed; neither is a dependency of pymc-rbm)")
            continue
        for seed in args.seeds:
            with threadpool_limits(args.threads):
                if name == "fit-budget":
                    snaps, params, seconds, info = budget_fit(train, seed, args.budget, args.curve_points)
                else:
                    snaps, params, seconds, info = budget_rbms(name, train, seed, args.budget, args.curve_points,
                                                               args.threads)
            params.save(Path(args.out).with_name(f"{name}_seed{seed}.npz"))  # for scoring again
            t = time.perf_counter()
            bar = log_partition(params, "bar", rng=seed, data=train)
            fwd = log_partition(params, "ais", rng=seed, data=train)
            rev = log_partition(params, "reverse_ais", rng=seed, data=test[:1000])
            scoring = time.perf_counter() - t
            curve = []
            for at, snap in snaps:
                z = log_partition(snap, "bar", rng=seed, data=train)
                curve.append([round(at, 1), round(float(log_likelihood(snap, test, log_z=float(z)).mean()), 3)])
            row = {"trainer": name, "seed": seed, "budget": args.budget, "seconds": round(seconds, 1),
                   "test_ll": round(float(log_likelihood(params, test, log_z=float(bar)).mean()), 3),
                   "test_ll_forward": round(float(log_likelihood(params, test, log_z=float(fwd)).mean()), 3),
                   "test_ll_raise": round(float(log_likelihood(params, test, log_z=raise_log_z(rev)).mean()), 3),
                   "bar_stderr": float(bar.stderr), "forward_stderr": float(fwd.stderr),
                   "scoring_seconds": round(scoring, 1), "curve": curve + [[round(seconds, 1), None]], **info}
            row["curve"][-1][1] = row["test_ll"]
            print(json.dumps(row), flush=True)
            with open(args.out, "a") as f:
                f.write(json.dumps(row) + "\n")


def raise_log_z(rev):
    """The log Z that RAISE's conservative test log-likelihoods imply (Burda, Grosse & Salakhutdinov 2015).

    Reverse AIS started at test rows gives each row ``-F(v_i) - log Z_A + log w_i``, a stochastic lower bound of
    its log-likelihood; their mean is ``mean(-F(v_i)) - (log Z_A - mean(log w_i))``. The log Z in brackets, put
    into :func:`log_likelihood` for every test row, scores the whole test set as those rows were scored: the mean
    of ``log w``, not the log of its mean (``log_z`` of ``reverse_ais``), which from rows that are not draws of
    the model bounds nothing.
    """
    return float(rev.diagnostics["log_z_base"] - np.mean(rev.diagnostics["log_weights"]))


def budget_table(path, figure=None):
    """The table of the budgeted runs in ``path`` and, with ``figure``, the curves as a PNG."""
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    rows = [r for r in rows if "budget" in r and "curve" in r]
    print(f"{'trainer':18s} {'seed':>4s} {'budget s':>8s} {'took s':>7s} {'updates':>8s} {'test LL (BAR)':>14s} "
          f"{'forward AIS':>12s} {'RAISE':>8s}")
    for r in rows:
        print(f"{r['trainer']:18s} {r['seed']:4d} {r['budget']:8.0f} {r['seconds']:7.1f} {r['n_updates']:8d} "
              f"{r['test_ll']:14.2f} {r.get('test_ll_forward', np.nan):12.2f} {r.get('test_ll_raise', np.nan):8.2f}")
    if figure:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 4))
        for r in rows:
            at, ll = zip(*r["curve"])
            ax.plot(at, ll, marker="o", label=f"{r['trainer']} (seed {r['seed']})")
        ax.set_xscale("log")
        ax.set_xlabel("wall time (s), 2 cores")
        ax.set_ylabel("test log-likelihood (nats, BAR)")
        ax.set_title("binarized MNIST, 784 x 500")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(figure, dpi=72)
        print(f"wrote {figure}")


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
    parser.add_argument("--budget", type=float, default=None,
                        help="seconds per run: train fit-budget / rbms-budget / rbms-budget-small for this long")
    parser.add_argument("--curve-points", type=int, default=6, help="snapshots scored per budgeted run")
    parser.add_argument("--figure", default=None, help="with --budget or --table: write the curves here (PNG)")
    args = parser.parse_args()
    if args.table:
        budget_table(args.out, args.figure) if args.budget else table(args.out)
        return
    if not MNIST.exists():
        print(f"no MNIST at {MNIST}: nothing to measure")
        return
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    train, test = load()
    if args.timing:
        timing(args, train)
    elif args.budget:
        run_budget(args, train, test)
        budget_table(args.out, args.figure)
    else:
        run_protocol(args, train, test)
        table(args.out)


if __name__ == "__main__":
    main()

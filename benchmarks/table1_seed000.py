"""Seed 000 Table 1: maximum log-likelihood reached in training, Gibbs vs flip-the-state.

Brügge, Fischer & Igel (2013) §4.2: RBMs with weights and biases from
N(0, 0.01²), trained by CD-k, PCD-k and t-PT k with the negative phase drawn by
block Gibbs (G) or the flip-the-state operator (T), learning rates 0.01, 0.05
and 0.1, no momentum and no weight decay, 20000 updates, the exact
log-likelihood every 100 updates, 25 repetitions. "To summarize all trials of
one experiment into a single value we calculated the maximum log-likelihood
value reached during each run and finally calculated the median over all runs
[...] For most experimental settings, the RBMs reaches statistically
significant higher likelihood values during training with the new transition
operator (Wilcoxon signed-rank test, p<0.05)."

The two halves of the table (``--dataset``):

- ``bars`` (upper half): 4×4 Bars and Stripes (MacKay 2002), 16 hidden units,
  batch learning. The best possible mean log-likelihood is printed with the
  table (``-log 32 + log(2)/8 = -3.379`` for MacKay's 32 rows, ``-log 30 =
  -3.401`` for the 30 distinct patterns).
- ``mnist`` (lower half): the binarized MNIST training set (Larochelle's
  fixed binarization, 50000 rows, ``../shared/data/mnist/binarized_mnist_packed.npz``),
  10 hidden units, mini-batches of 100, as many persistent chains (PCD, PT
  ladders) as rows in a batch. With 10 hidden units log Z is exact (1024
  hidden states). ``--eval-rows N`` records the log-likelihood on a fixed
  random subset of N training rows (drawn once with seed 0, the same for every
  run) instead of all 50000.

Each repetition trains G and T from the same starting parameters (one seed
per repetition), so the Wilcoxon signed-rank test is paired. The seed text has
lost Table 1's numbers; the paper's finding is the sign (T ≥ G, mostly
significant), which the last columns report. Runs go repetition by
repetition (every method, rate and operator of repetition r before r + 1), so
an interrupted run leaves complete pairs in every cell.

Incremental results: with ``--out FILE`` every finished run appends one JSON
line (its settings, the maximum and final log-likelihood, the update of the
maximum, wall and CPU seconds, the time it finished), and a rerun with the
same ``--out`` and settings skips the runs already in the file, so an
interrupted run (or one paused with ``kill -STOP``) loses nothing.
``--table-only FILE`` prints the tables of the runs in a file, one per
setting, with how many of the planned runs it holds.

Default: a shorter run (Bars and Stripes, CD-5, PCD-5 and 10-PT1 at learning
rate 0.05, 6 repetitions of 8000 updates; about two minutes on one core). The
paper's experiment::

    ./dev bench table1_seed000 --full --out bars.jsonl                   # 450 runs
    ./dev bench table1_seed000 --dataset mnist --full --out mnist.jsonl  # 450 runs
    ./dev bench table1_seed000 --table-only bars.jsonl

(``--full``: 25 repetitions x 20000 updates x 3 rates x {CD-5, PCD-5, 10-PT1}
x {G, T}; ``--jobs N`` runs N processes, each on one BLAS thread. The cost of
a run is in docs/table1_seed000.md.)
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one core per process: set before NumPy and Numba start their pools

import argparse  # noqa: E402
import json  # noqa: E402
import shlex  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from concurrent.futures import ProcessPoolExecutor, as_completed  # noqa: E402
from datetime import datetime, timezone  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from scipy.stats import wilcoxon  # noqa: E402

from pymc_rbm.datasets import bars_and_stripes, load_mnist  # noqa: E402
from pymc_rbm.training import CD, PCD, PT, SGD, Evaluation, fit  # noqa: E402

METHOD_LABELS = {"cd": "CD-{k}", "pcd": "PCD-{k}", "pt": "{t}-PT{kpt}"}
MNIST_FILE = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mnist" / "binarized_mnist_packed.npz"
#: the settings that make two runs comparable (the table groups by them; resume matches them)
SETUP_KEYS = ("dataset", "hidden", "updates", "eval_every", "k", "pt_temperatures", "pt_k", "batch_size",
              "variant", "eval_rows")
PAPER_FINDING = "T >= G, mostly *"


def best_possible(data: np.ndarray) -> float:
    """Minus the entropy of the empirical distribution of the rows."""
    _, counts = np.unique(data, axis=0, return_counts=True)
    p = counts / counts.sum()
    return float(np.sum(counts * np.log(p)) / counts.sum())


def load_data(args):
    """Training data and evaluation data (None: the training data) of ``args.dataset``."""
    if args.dataset == "bars":
        return bars_and_stripes(4, variant=args.variant), None
    data = load_mnist(args.mnist, split="train").images
    if not args.eval_rows or args.eval_rows >= len(data):
        return data, None
    rows = np.sort(np.random.default_rng(0).choice(len(data), args.eval_rows, replace=False))
    return data, data[rows]


def setup_of(args) -> dict:
    """The settings shared by all runs of one table."""
    mnist = args.dataset == "mnist"
    return {
        "dataset": args.dataset, "hidden": args.hidden, "updates": args.updates, "eval_every": args.eval_every,
        "k": args.k, "pt_temperatures": args.pt_temperatures, "pt_k": args.pt_k,
        "batch_size": args.batch_size if mnist else None, "variant": None if mnist else args.variant,
        "eval_rows": (args.eval_rows or None) if mnist else None,
    }


def code_version() -> str:
    """HEAD's commit, with the package's files that differ from it (the code the runs imported)."""
    root = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "pymc_rbm"], cwd=root, capture_output=True,
                               text=True, check=True).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    changed = sorted(line[3:] for line in dirty if line.strip())
    return head + (" + uncommitted " + " ".join(changed) if changed else "")


def run_key(record: dict) -> tuple:
    return tuple(record[k] for k in SETUP_KEYS) + (record["method"], record["lr"], record["operator"], record["seed"])


def planned_runs(args, setup: dict) -> list[dict]:
    """One dict per run, repetition by repetition."""
    return [
        {**setup, "method": m, "lr": lr, "operator": op, "seed": args.seed * 1000 + r, "rep": r}
        for r in range(args.reps)
        for m in args.methods
        for lr in args.learning_rates
        for op in ("gibbs", "flip")
    ]


def run_one(job):
    """Train one RBM; returns the job with its maximum and final recorded log-likelihood and its cost."""
    run, data, eval_data = job
    k = run["pt_k"] if run["method"] == "pt" else run["k"]
    t0, c0 = time.perf_counter(), time.process_time()
    if run["method"] == "pt":
        # the paper's ladder: fixed, uniform in [0, 1] (fit's PT adapts its ladder by default)
        method = PT(k=k, operator=run["operator"], n_temperatures=run["pt_temperatures"], adapt_every=None)
    else:
        method = {"cd": CD, "pcd": PCD}[run["method"]](k=k, operator=run["operator"])
    res = fit(
        data, run["hidden"], method=method, batch_size=run["batch_size"], learning_rate=run["lr"],
        n_updates=run["updates"], evaluation=Evaluation(every=run["eval_every"], data=eval_data), rng=run["seed"],
        progress=False, optimizer=SGD(momentum=0.0, centered=False),  # the paper's plain gradient ascent
    )
    if res.stop_reason == "interrupted":  # Ctrl-C: fit returned early; this run is not finished, record nothing
        raise KeyboardInterrupt
    ll = res.history.log_likelihood
    i = int(np.nanargmax(ll)) if np.any(np.isfinite(ll)) else 0
    return {
        **run, "best": float(res.history.best), "best_update": int(res.history.updates[i]),
        "final": float(ll[-1]), "n_updates": int(res.n_updates), "stop_reason": res.stop_reason,
        "seconds": round(time.perf_counter() - t0, 3), "cpu_seconds": round(time.process_time() - c0, 3),
        "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def read_records(path) -> list[dict]:
    """The runs in a results file (a torn last line from a killed writer is skipped)."""
    if not path or not Path(path).exists():
        return []
    out = []
    for line in Path(path).read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def append_record(path, record: dict) -> None:
    with open(path, "a") as f:
        f.write(json.dumps(record) + "\n")
        f.flush()
        os.fsync(f.fileno())


def print_table(records: list[dict], planned: int | None = None) -> None:
    """Median of the maximum log-likelihood per method and rate, G against T, paired by seed."""
    s = records[0]
    cells: dict = {}
    diverged: dict = {}
    for r in records:
        cells.setdefault((r["method"], r["lr"]), {}).setdefault(r["operator"], {})[r["seed"]] = r["best"]
        if r.get("stop_reason") == "diverged":
            diverged.setdefault((r["method"], r["lr"], r["operator"]), set()).add(r["seed"])
    header = (
        f"{'method':>9} {'rate':>5} {'pairs':>5} | {'median max LL G':>15} {'median max LL T':>15} {'T - G':>7} | "
        f"{'T > G':>6} {'Wilcoxon p':>10} {'sig.':>4} {'div. G/T':>8} | paper"
    )
    print(header)
    print("-" * len(header))
    order = {"cd": 0, "pcd": 1, "pt": 2}
    for (m, lr) in sorted(cells, key=lambda c: (order.get(c[0], 9), c[1])):
        by_op = cells[(m, lr)]
        seeds = sorted(set(by_op.get("gibbs", {})) & set(by_op.get("flip", {})))
        label = METHOD_LABELS[m].format(k=s["k"], t=s["pt_temperatures"], kpt=s["pt_k"])
        if not seeds:
            print(f"{label:>9} {lr:>5.2f} {0:>5} | (no finished pair yet)")
            continue
        g = np.array([by_op["gibbs"][x] for x in seeds])
        f = np.array([by_op["flip"][x] for x in seeds])
        diff = f - g
        p = wilcoxon(f, g).pvalue if np.any(diff != 0) else 1.0
        star = "*" if p < 0.05 else ""
        div = "/".join(str(len(diverged.get((m, lr, op), set()) & set(seeds))) for op in ("gibbs", "flip"))
        print(
            f"{label:>9} {lr:>5.2f} {len(seeds):>5} | {np.median(g):>15.4f} {np.median(f):>15.4f} "
            f"{np.median(f) - np.median(g):>+7.4f} | "
            f"{np.mean(diff > 0):>6.0%} {p:>10.3g} {star:>4} {div:>8} | {PAPER_FINDING}"
        )
    n_pairs = min(len(set(v.get("gibbs", {})) & set(v.get("flip", {}))) for v in cells.values())
    wall = sum(r["seconds"] for r in records)
    cpu = sum(r.get("cpu_seconds", r["seconds"]) for r in records)
    finished = sorted(r["finished"] for r in records if "finished" in r)
    of = f" of {planned} planned" if planned else ""
    print(
        f"\n{len(records)} runs{of}: {wall:.0f} s of run wall time, {cpu:.0f} s CPU "
        f"({cpu / len(records):.1f} s CPU per run of {s['updates']} updates)"
        + (f", finished {finished[0]} .. {finished[-1]}" if finished else "")
        + ". G: block Gibbs; T: flip-the-state; * = Wilcoxon signed-rank p < 0.05 "
        f"(with {n_pairs} pairs the smallest possible two-sided p is {2 / 2**max(n_pairs, 1):.3g})."
    )
    if diverged:
        print("div. G/T: runs that fit stopped on divergence (the log-likelihood fell by more than n_visible log 2 "
              "below its best), of the pairs; their maximum is the best record before it.")
    if s["updates"] < 20000:
        print(
            "Short run: Brügge, Fischer & Igel (2013) §5.2 find G 'slightly better in the beginning when weights "
            "are close to their small initialization' and T better 'in the end of training'; --full runs the "
            "paper's 20000 updates."
        )


def describe(setup: dict, data=None, eval_data=None) -> str:
    if setup["dataset"] == "bars":
        extra = f"; best possible mean log-likelihood {best_possible(data):.4f}" if data is not None else ""
        return (f"Bars and Stripes 4x4 ({setup['variant']}), {setup['hidden']} hidden, batch learning, "
                f"{setup['updates']} updates, exact log-likelihood every {setup['eval_every']}{extra}")
    rows = f"a fixed random subset of {setup['eval_rows']} training rows" if setup["eval_rows"] else "all training rows"
    return (f"binarized MNIST (50000 training rows), {setup['hidden']} hidden, mini-batches of {setup['batch_size']}, "
            f"{setup['updates']} updates, exact log-likelihood every {setup['eval_every']} on {rows}")


def table_only(path) -> None:
    records = list({run_key(r): r for r in read_records(path)}.values())  # a run written twice counts once
    if not records:
        sys.exit(f"no runs in {path}")
    groups: dict = {}
    for r in records:
        groups.setdefault(tuple(r[k] for k in SETUP_KEYS), []).append(r)
    for key, recs in groups.items():
        setup = dict(zip(SETUP_KEYS, key))
        reps = len({r["seed"] for r in recs})
        print(describe(setup) + f"; {reps} repetitions started")
        print_table(recs)
        print()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="bars", choices=["bars", "mnist"])
    ap.add_argument("--full", action="store_true", help="the paper's settings (25 reps, 20000 updates, 3 rates)")
    ap.add_argument("--reps", type=int, default=None, help="repetitions (default 6; 25 with --full)")
    ap.add_argument("--updates", type=int, default=None, help="updates per run (default 8000; 20000 with --full)")
    ap.add_argument("--learning-rates", type=float, nargs="+", default=None,
                    help="default 0.05; 0.01 0.05 0.1 with --full")
    ap.add_argument("--methods", nargs="+", default=["cd", "pcd", "pt"], choices=["cd", "pcd", "pt"])
    ap.add_argument("--k", type=int, default=5, help="sweeps of CD-k and PCD-k")
    ap.add_argument("--pt-temperatures", type=int, default=10)
    ap.add_argument("--pt-k", type=int, default=1)
    ap.add_argument("--hidden", type=int, default=None, help="default 16 (bars), 10 (mnist)")
    ap.add_argument("--batch-size", type=int, default=100, help="mnist: rows per mini-batch")
    ap.add_argument("--eval-every", type=int, default=100)
    ap.add_argument("--eval-rows", type=int, default=0,
                    help="mnist: record the log-likelihood on a fixed random subset of this many rows (0: all)")
    ap.add_argument("--mnist", default=str(MNIST_FILE), help="binarized MNIST .npz (Larochelle's layout)")
    ap.add_argument("--variant", default="mackay", choices=["mackay", "distinct"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1, help="worker processes")
    ap.add_argument("--out", help="append one JSON line per finished run; runs already in the file are skipped")
    ap.add_argument("--table-only", metavar="FILE", help="print the tables of the runs in FILE and exit")
    args = ap.parse_args(argv)
    if args.table_only:
        table_only(args.table_only)
        return
    full = (25, 20000, [0.01, 0.05, 0.1]) if args.full else (6, 8000, [0.05])
    args.reps = full[0] if args.reps is None else args.reps
    args.updates = full[1] if args.updates is None else args.updates
    args.learning_rates = full[2] if args.learning_rates is None else args.learning_rates
    if args.hidden is None:
        args.hidden = 16 if args.dataset == "bars" else 10
    t0 = time.perf_counter()
    data, eval_data = load_data(args)
    setup = setup_of(args)
    runs = planned_runs(args, setup)
    code = code_version()
    done = {run_key(r): r for r in read_records(args.out)}
    todo = [r for r in runs if run_key(r) not in done]
    command = "./dev bench table1_seed000 " + shlex.join(sys.argv[1:] if argv is None else argv)
    print(f"{describe(setup, data)}, {args.reps} repetitions")
    print(f"command: {command}")
    print(f"code: {code}")
    print(f"{len(runs)} runs planned, {len(runs) - len(todo)} already in {args.out}, {len(todo)} to run", flush=True)
    results = [done[run_key(r)] for r in runs if run_key(r) in done]
    jobs = [({**r, "code": code}, data, eval_data) for r in todo]
    try:
        if args.jobs > 1 and jobs:
            with ProcessPoolExecutor(args.jobs) as pool:
                for fut in as_completed([pool.submit(run_one, j) for j in jobs]):
                    results.append(_finish(fut.result(), args.out, len(results) + 1, len(runs)))
        else:
            for j in jobs:
                results.append(_finish(run_one(j), args.out, len(results) + 1, len(runs)))
    except KeyboardInterrupt:
        where = f"; the finished ones are in {args.out}: the same command resumes" if args.out else ""
        sys.exit(f"\ninterrupted after {len(results)} of {len(runs)} runs{where}")
    elapsed = time.perf_counter() - t0
    print()
    print_table(results, len(runs))
    print(f"This invocation: {len(todo)} runs in {elapsed:.0f} s wall time; command: {command}")


def _finish(record: dict, out, i: int, n: int) -> dict:
    if out:
        append_record(out, record)
    print(
        f"[{i}/{n}] rep {record['rep']} {record['method']} lr {record['lr']} {record['operator']}: "
        f"max LL {record['best']:.4f} at {record['best_update']}, {record['cpu_seconds']:.1f} s CPU",
        flush=True,
    )
    return record


if __name__ == "__main__":
    main()

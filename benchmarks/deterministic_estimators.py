"""TAP, Bethe and mean-field log Z of the four MNIST RBMs of seed 004: values, convergence and time.

For each model in ``../shared/data/rbm_models/`` one row per method: the
estimate, its difference from the reference (the exact value for h10 and h20;
for h100 and h500 the project's reference AIS run of
``benchmarks/reference_log_partition.json``, or seed 004's AIS value where
that file is absent),
seed 004's TAP figure, iterations, convergence, and the median wall time of
``--repeats`` runs. Targets: TAP and Bethe on mnist_h500 in <= 1 s each.

Methods (defaults of the functions unless said):

- ``tap2`` / ``tap3``: :func:`log_partition_tap`, order 2 / 3, 8 starts;
- ``tap2 GTK``: order 2 with Gabrié et al.'s damped fixed point update;
- ``tap2 +data``: order 2 with 16 rows of the binarized MNIST test set as extra starts;
- ``bethe``: :func:`log_partition_bethe`, the paper's Gaussian factors; ``bethe exact``: exact factor sums;
- ``mf``: the naive mean-field lower bound; ``mf +data`` with data starts;
- ``mixture L=k``: the mixture mean-field lower bound (only with ``--mixture``; minutes on h100/h500).

Run from the repository root::

    python benchmarks/deterministic_estimators.py [--models mnist_h10 ...] [--repeats 3] [--threads 1] [--mixture 2]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time
from pathlib import Path

import numpy as np

from pymc_rbm import RBMParams
from seed004_table import reference  # noqa: E402 (benchmarks/ is on sys.path when a script runs)

from pymc_rbm.estimators import (
    log_partition_bethe,
    log_partition_mean_field,
    log_partition_mixture_mean_field,
    log_partition_tap,
)

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
#: (log Z from ../shared/data/README.md, what it is, seed 004 TAP); the reference itself comes from
#: seed004_table.reference (exact, or the project's own AIS reference run)
REFERENCE = {
    "mnist_h10": (226.1132, "exact", 212.0),
    "mnist_h20": (221.0668, "exact", 203.0),
    "mnist_h100": (348.33, "AIS", 341.0),
    "mnist_h500": (459.3, "AIS", 449.0),
}


def load_test_data():
    path = SHARED_DATA / "mnist" / "binarized_mnist_packed.npz"
    if not path.exists():
        return None
    with np.load(path, allow_pickle=False) as f:
        return np.unpackbits(f["test"], axis=1)[:, :784]


def methods(data, mixture):
    out = [
        ("tap2", lambda p: log_partition_tap(p)),
        ("tap3", lambda p: log_partition_tap(p, order=3)),
        ("tap2 GTK", lambda p: log_partition_tap(p, update="fixed_point")),
    ]
    if data is not None:
        out.append(("tap2 +data", lambda p: log_partition_tap(p, data=data)))
    out += [
        ("bethe", lambda p: log_partition_bethe(p)),
        ("bethe exact", lambda p: log_partition_bethe(p, factor="exact")),
        ("mf", lambda p: log_partition_mean_field(p)),
    ]
    if data is not None:
        out.append(("mf +data", lambda p: log_partition_mean_field(p, data=data)))
    for L in mixture:
        out.append(
            (f"mixture L={L}", lambda p, L=L: log_partition_mixture_mean_field(p, n_components=L, tol=1e-7, max_iter=30))
        )
    return out


def blas_threads(n: int):
    """Limit BLAS to ``n`` threads (threadpoolctl is optional: without it, nothing is limited)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - optional
        return contextlib.nullcontext()
    return threadpool_limits(n)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", nargs="+", default=list(REFERENCE))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1, help="BLAS threads (default 1; the products are small)")
    ap.add_argument("--mixture", type=int, nargs="*", default=[], help="mixture sizes L to run too (slow)")
    args = ap.parse_args()
    data = load_test_data()
    print(f"BLAS threads: {args.threads}; data starts: {'binarized MNIST test set' if data is not None else 'absent'}")
    print(
        f"{'model':>10} {'method':>13} {'log Z':>9} {'ref':>9} {'diff':>8} {'seed004 TAP':>11} "
        f"{'iters':>6} {'conv':>5} {'extra':>18} {'time s':>7}"
    )
    with blas_threads(args.threads):
        for name in args.models:
            path = SHARED_DATA / "rbm_models" / f"{name}.npz"
            if not path.exists():
                print(f"{name}: {path} absent, skipped")
                continue
            params = RBMParams.load(path)
            _, _, tap004 = REFERENCE.get(name, (float("nan"), "?", float("nan")))
            ref, kind = reference(name)
            for label, fn in methods(data, args.mixture):
                if label.startswith("mixture") and params.n_hidden > 20:
                    continue
                times = []
                for _ in range(args.repeats if not label.startswith("mixture") else 1):
                    t = time.perf_counter()
                    est = fn(params)
                    times.append(time.perf_counter() - t)
                d = est.diagnostics
                extra = ""
                if "stability" in d:
                    extra = f"λ={d['stability']:.3f} d={d['damping']:.2g}"
                elif "n_distinct_fixed_points" in d:
                    extra = f"{d['n_distinct_fixed_points']} fp, d={d['damping']:.2g}"
                elif "alpha" in d:
                    extra = f"naive {d['naive_bound']:.2f}"
                print(
                    f"{name:>10} {label:>13} {est.log_z:>9.3f} {ref:>9.3f} {est.log_z - ref:>+8.3f} {tap004:>11.0f} "
                    f"{d['iterations']:>6} {str(d['converged']):>5} {extra:>18} {statistics.median(times):>7.3f}"
                )
            print(f"{'':>10} (ref = {kind})")


if __name__ == "__main__":
    main()

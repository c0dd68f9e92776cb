"""Time exact log Z by enumeration against a naive chunked numpy baseline.

Prints one table row per model: the median time of
``pymc_rbm.estimators.log_partition_exact`` (its cache cleared before every
run), the value, the reference (the exact figure of ``../shared/data/README.md``
for the MNIST models, otherwise the naive baseline's value) and the difference,
the time of the naive baseline measured in the same run and the ratio of the
two, and whether the target (784x20 in <= 2 s) is met.

Run from the repository root::

    python benchmarks/exact_log_partition.py [--repeats 3] [--naive-repeats 1] [--threads N]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np

import pymc_rbm.enumeration as exact
from pymc_rbm._runtime import default_threads
from pymc_rbm import RBMParams
from pymc_rbm.estimators import log_partition_exact

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
REFERENCE_LOG_Z = {"mnist_h10": 226.1132, "mnist_h20": 221.0668}  # ../shared/data/README.md
TARGET_SECONDS = 2.0  # 784x20 in <= 2 s


def naive_log_z(params: RBMParams, chunk: int = 4096) -> float:
    """log Z the plain way: for chunks of hidden states, -F(h) = hbias·h + Σ_i logaddexp(0, vbias + W h);
    running log-sum-exp over the chunks. Enumerates the hidden layer (assumed the smaller)."""
    W, b, c = params.W, params.vbias, params.hbias
    k = W.shape[1]
    shifts = np.arange(k - 1, -1, -1)
    total = -np.inf
    for start in range(0, 2**k, chunk):
        idx = np.arange(start, min(start + chunk, 2**k))
        H = ((idx[:, None] >> shifts) & 1).astype(np.float64)
        logw = H @ c + np.logaddexp(0.0, b + H @ W.T).sum(axis=1)
        m = logw.max()
        total = np.logaddexp(total, m + np.log(np.exp(logw - m).sum()))
    return float(total)


def _timed(fn, repeats: int, before=None):
    times, value = [], None
    for _ in range(repeats):
        if before is not None:
            before()
        t0 = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), value


def models(include_shared: bool):
    out = [
        ("random 784x10", RBMParams.random(784, 10, scale=0.1, rng=0), None),
        ("random 784x20", RBMParams.random(784, 20, scale=0.1, rng=1), None),
    ]
    if include_shared:
        for name in ("mnist_h10", "mnist_h20"):
            path = SHARED_DATA / "rbm_models" / f"{name}.npz"
            if path.exists():
                out.append((name, RBMParams.load(path), REFERENCE_LOG_Z[name]))
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3, help="timed runs of the fast path (median reported)")
    ap.add_argument("--naive-repeats", type=int, default=1, help="timed runs of the naive baseline")
    ap.add_argument("--threads", type=int, default=None, help="threads for log_partition_exact (default: its own)")
    ap.add_argument("--no-shared", action="store_true", help="skip the ../shared/data MNIST models")
    args = ap.parse_args(argv)

    threads = args.threads or default_threads()
    print(
        f"exact log Z by enumeration | python {platform.python_version()}, numpy {np.__version__}, "
        f"{os.cpu_count()} cpus, {threads} threads, median of {args.repeats} (naive: {args.naive_repeats}), "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    header = (
        f"{'model':<15} {'time [s]':>9} {'log Z':>14} {'reference':>14} {'diff':>10} "
        f"{'naive [s]':>10} {'naive diff':>10} {'time/naive':>10}  target"
    )
    print(header)
    print("-" * len(header))
    for label, params, ref in models(not args.no_shared):
        t_fast, lz = _timed(
            lambda: log_partition_exact(params, n_threads=args.threads).log_z,
            args.repeats,
            before=exact._CACHE.clear,
        )
        t_naive, lz_naive = _timed(lambda: naive_log_z(params), args.naive_repeats)
        reference = lz_naive if ref is None else ref
        ref_note = "" if ref is not None else "*"
        if params.n_hidden == 20:
            target = "met" if t_fast <= TARGET_SECONDS else "MISSED"
            target += f" (<= {TARGET_SECONDS:g} s)"
        else:
            target = "-"
        print(
            f"{label:<15} {t_fast:9.3f} {lz:14.6f} {reference:13.6f}{ref_note:1} {lz - reference:10.2e} "
            f"{t_naive:10.3f} {lz - lz_naive:10.2e} {t_fast / t_naive:10.3f}  {target}"
        )
    print("* reference = naive baseline value (no published exact figure for random models)")


if __name__ == "__main__":
    main()

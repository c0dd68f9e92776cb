"""log Z on sharp and multimodal RBMs whose log Z is exact: is every estimate right, or does it warn?

Each estimator runs with its defaults (no ``data=``, as a user without training data would) on
models whose exact log Z is known: enumerable ones, and block-diagonal ones built from independent
enumerable parts (log Z the sum of the parts'), with dozens to hundreds of modes. An estimate counts
as right within max(4 standard errors, 0.1 nats); one that is wrong must come with a warning.

    python benchmarks/log_z_modes.py [--methods ais bar rts sams ladder auto] [--seed 1] [--calibration 20]

``--calibration N`` instead runs each method N times on three small sharp models and prints the
fraction of runs within 3 standard errors.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from scipy.linalg import block_diag

from pymc_rbm import RBMParams, datasets
from pymc_rbm.estimators import log_partition, log_partition_exact


def two_modes(w: float = 1.5) -> RBMParams:
    """All units off, or all on, at the same energy 0 (12 x 8)."""
    return RBMParams(np.full((12, 8), w), np.full(12, -4.0 * w), np.full(8, -6.0 * w))


def scaled(p: RBMParams, s: float) -> RBMParams:
    return RBMParams(s * p.W, s * p.vbias, s * p.hbias)


def blocks(parts) -> tuple[RBMParams, float]:
    p = RBMParams(block_diag(*[q.W for q in parts]), np.concatenate([q.vbias for q in parts]),
                  np.concatenate([q.hbias for q in parts]))
    return p, float(sum(log_partition_exact(q).log_z for q in parts))


def cases() -> dict[str, tuple[RBMParams, float]]:
    b = datasets.bundled_rbm()
    degenerate = RBMParams(RBMParams.random(12, 8, rng=0).W, np.full(12, -1e3), np.full(8, -1e3))
    out = {name: (p, log_partition_exact(p).log_z) for name, p in {
        "bundled 16x16": b,
        "two modes 12x8": two_modes(),
        "biases -1e3 12x8": degenerate,
        "bundled, weights x2": scaled(b, 2.0),
    }.items()}
    out["5 two-mode blocks 60x40 (32 modes)"] = blocks([two_modes(w) for w in (1.5, 1.2, 1.8, 1.5, 1.3)])
    out["bundled x2 blocks 32x32 (900 modes)"] = blocks([b, b])
    return out


def run(p, method, seed):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = time.perf_counter()
        est = log_partition(p, method, rng=seed)
        seconds = time.perf_counter() - t
    said = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    return est, seconds, said


def table(methods, seed):
    print(f"| model | method | error (nats) | stderr | z | s | warned | verdict |\n|---|---|---|---|---|---|---|---|")
    counts = {"right": 0, "wrong, warned": 0, "right, warned": 0, "SILENT WRONG": 0}
    for name, (p, exact) in cases().items():
        for method in methods:
            est, seconds, said = run(p, method, seed)
            err = est.log_z - exact
            right = abs(err) <= max(4 * est.stderr, 0.1)
            verdict = ("right" if not said else "right, warned") if right else ("wrong, warned" if said else "SILENT WRONG")
            counts[verdict] += 1
            z = err / est.stderr if est.stderr else float("inf") * np.sign(err)
            chosen = f" ({est.method})" if method == "auto" else ""
            print(f"| {name} | {method}{chosen} | {err:+.4f} | {est.stderr:.4f} | {z:+.1f} | {seconds:.1f} | "
                  f"{'yes' if said else 'no'} | {verdict} |", flush=True)
    print("\n" + ", ".join(f"{k}: {v}" for k, v in counts.items()))


def calibration(methods, n):
    models = {"two modes": two_modes(), "bundled": datasets.bundled_rbm(),
              "bundled x2": scaled(datasets.bundled_rbm(), 2.0)}
    print("| model | method | within 3 se | within max(4 se, 0.1) or warned | median s |\n|---|---|---|---|---|")
    for name, p in models.items():
        exact = log_partition_exact(p).log_z
        for method in methods:
            inside, ok, secs = 0, 0, []
            for seed in range(n):
                est, seconds, said = run(p, method, seed)
                err = abs(est.log_z - exact)
                inside += err <= 3 * est.stderr
                ok += bool(said) or err <= max(4 * est.stderr, 0.1)
                secs.append(seconds)
            print(f"| {name} | {method} | {inside}/{n} | {ok}/{n} | {np.median(secs):.1f} |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--methods", nargs="+", default=["ais", "bar", "rts", "sams", "ladder", "auto"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--calibration", type=int, default=0)
    a = ap.parse_args()
    if a.calibration:
        calibration(a.methods, a.calibration)
    else:
        table(a.methods, a.seed)


if __name__ == "__main__":
    main()

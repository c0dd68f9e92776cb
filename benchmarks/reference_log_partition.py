"""Reference log Z of the MNIST RBMs h100 and h500: a long AIS run checked by reverse AIS.

Neither model can be enumerated (2**100 and 2**500 hidden states), so the
project's reference values come from this script, and its output is stored
in ``benchmarks/reference_log_partition.json`` with how it was made. For each
model:

1. **forward AIS** (:func:`pymc_rbm.estimators.ais`): ``--chains`` chains,
   Salakhutdinov & Murray's schedule shape stretched to ``--steps`` steps,
   ``--dtype`` arithmetic (float64 by default; log weights are always
   float64) in ``--jobs`` threads, block Gibbs, the base-rate model fitted
   to the binarized MNIST training set. In expectation a *lower* bound of
   log Z (Jensen).
2. **reverse AIS from the model** (:func:`pymc_rbm.estimators.reverse_ais`)
   started from the final states of run 1, which are approximate draws from
   the model, back down the same schedule. With exact draws this is in
   expectation an *upper* bound of log Z; the two runs bracket log Z, and
   agreement within their errors is the two-sided check.
3. **RAISE from the test data** (reverse AIS started from ``--raise-rows`` rows of
   the binarized MNIST test set, Burda et al. 2015): a conservative (lower)
   estimate of the mean test log-likelihood of those rows, to set beside the
   optimistic one ``-F(v) - log Ẑ`` that the forward run gives.

The reference is run 1's estimate and standard error. With ``--method bar``
runs 1 and 2 are replaced by :func:`pymc_rbm.estimators.bar` (forward AIS,
reverse AIS from the forward states resampled by weight, Bennett's acceptance
ratio between them; ``--chains`` chains and ``--steps`` steps each way), whose
estimate is then the reference: it uses both sides of the bracket instead of
one. A model's earlier record is kept under ``earlier_runs``. h10 and h20 can
be added (``--models mnist_h10 ...``) to see the same procedure against the
exact values.

Run from the repository root (about 10-20 min for both models under load)::

    nice -n 10 /tmp/venv/bin/python benchmarks/reference_log_partition.py
    # the BAR reference (about 10 min for mnist_h500 on two cores):
    nice -n 10 /tmp/venv/bin/python benchmarks/reference_log_partition.py --method bar --steps 100000 \
        --chains 400 --dtype float32 --jobs 2 --raise-rows 0
    # a quick try of the procedure, not a reference:
    nice -n 10 /tmp/venv/bin/python benchmarks/reference_log_partition.py --steps 20000 --chains 50 --out /tmp/ref.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

from pymc_rbm import RBMParams
from pymc_rbm.datasets import load_mnist
from pymc_rbm.energy import free_energy
from pymc_rbm.estimators import ais, bar, reverse_ais
from pymc_rbm.estimators.schedules import default_schedule

HERE = Path(__file__).resolve().parent
SHARED_DATA = HERE.parents[0].parent / "shared" / "data"
DEFAULT_OUT = HERE / "reference_log_partition.json"
#: exact values (../shared/data/README.md) for the models that can be enumerated
EXACT = {"mnist_h10": 226.1132, "mnist_h20": 221.0668}
#: seed 004's AIS figures
SEED004_AIS = {"mnist_h10": 226.1, "mnist_h20": 220.9, "mnist_h100": 348.33, "mnist_h500": 459.3}


def _summary(est) -> dict:
    d = est.diagnostics
    return {
        "log_z": round(est.log_z, 4),
        "stderr": round(est.stderr, 4),
        "interval_3sigma": [round(x, 4) if np.isfinite(x) else None for x in est.interval],
        "ess": round(float(d["ess"]), 1),
        "n_chains": int(d["n_chains"]),
        "n_steps": int(d["n_steps"]),
        "seconds": round(float(d["seconds"]), 1),
    }


def reference(
    name: str, train, test, *, steps: int, chains: int, seed: int, dtype="float64", jobs: int = 1, raise_rows=None,
    method: str = "ais",
) -> dict:
    """The runs for one model; returns the JSON record."""
    params = RBMParams.load(SHARED_DATA / "rbm_models" / f"{name}.npz")
    schedule = default_schedule(steps)
    rng = np.random.default_rng(seed)
    load = os.getloadavg()
    opts = {"schedule": schedule, "dtype": np.dtype(dtype), "n_jobs": jobs}
    if method == "bar":
        est = bar(params, n_chains=chains, data=train, rng=rng, **opts)
        d = est.diagnostics
        rec = {
            "log_z": round(est.log_z, 4),
            "stderr": round(est.stderr, 4),
            "method": "BAR (the reference): forward AIS and reverse AIS from the forward states resampled by weight",
            "bar": {
                "log_z": round(est.log_z, 4),
                "stderr": round(est.stderr, 4),
                "interval_3sigma": [round(x, 4) for x in est.interval],
                "forward": {k: round(float(d["forward"][k]), 4) for k in ("log_z", "stderr")},
                "reverse": {k: round(float(d["reverse"][k]), 4) for k in ("log_z", "stderr")},
                "n_chains": chains,
                "n_steps_each_way": steps,
                "seconds": round(float(d["seconds"]), 1),
            },
        }
        centre = est.log_z
    else:
        fwd = ais(params, n_chains=chains, data=train, rng=rng, **opts)
        rev = reverse_ais(params, fwd.diagnostics["samples"], n_chains=None, base_data=train, rng=rng, **opts)
        rec = {
            "log_z": round(fwd.log_z, 4),
            "stderr": round(fwd.stderr, 4),
            "method": "forward AIS (the reference); reverse AIS from the forward run's final states as the upper side",
            "forward_ais": _summary(fwd),
            "reverse_ais_from_model": _summary(rev),
            "forward_minus_reverse": round(fwd.log_z - rev.log_z, 4),
        }
        centre = fwd.log_z
    n_raise = chains if raise_rows is None else raise_rows
    if n_raise > 0:
        rows = rng.choice(test.shape[0], size=n_raise, replace=False)
        rai = reverse_ais(params, test[rows], n_chains=None, base_data=train, rng=rng, **opts)
        rec["raise_from_test_data"] = {
            **_summary(rai),
            "mean_test_log_likelihood_lower": round(float(rai.diagnostics["mean_log_likelihood"]), 4),
            "mean_test_log_likelihood_forward": round(float(np.mean(-free_energy(test[rows], params)) - centre), 4),
            "test_rows": int(rows.size),
        }
    rec["mean_test_log_likelihood_all_rows"] = round(float(np.mean(-free_energy(test, params)) - centre), 4)
    rec["seed004_ais"] = SEED004_AIS.get(name)
    rec["loadavg_at_start"] = [round(x, 2) for x in load]
    if name in EXACT:
        rec["exact"] = EXACT[name]
    return rec


def _earlier(old: dict) -> list:
    """The earlier record of a model, summarised for ``earlier_runs`` (with its own earlier runs)."""
    keep = {k: old[k] for k in ("log_z", "stderr", "method", "settings", "command") if k in old}
    for k in ("forward_ais", "reverse_ais_from_model", "bar"):
        if k in old:
            keep[k] = {x: old[k][x] for x in ("log_z", "stderr") if x in old[k]}
    return old.get("earlier_runs", []) + [keep]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="+", default=["mnist_h100", "mnist_h500"])
    ap.add_argument("--steps", type=int, default=50000, help="annealing steps (default 50000)")
    ap.add_argument("--chains", type=int, default=100, help="chains per run (default 100)")
    ap.add_argument("--seed", type=int, default=20261122)
    ap.add_argument("--dtype", choices=["float64", "float32"], default="float64", help="sampling arithmetic")
    ap.add_argument("--jobs", type=int, default=1, help="threads of each AIS run (ais(n_jobs=...))")
    ap.add_argument("--raise-rows", type=int, default=None,
                    help="test rows of the RAISE run (default: --chains; 0: none)")
    ap.add_argument("--method", choices=["ais", "bar"], default="ais", help="the estimator of the reference")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)

    mnist = SHARED_DATA / "mnist" / "binarized_mnist_packed.npz"
    train = load_mnist(mnist, split="train").images
    test = load_mnist(mnist, split="test").images
    out = {
        "description": (
            "Reference log Z of the MNIST RBMs of seed 004 (../shared/data/rbm_models), natural log. log_z/stderr: the "
            "estimate named by each record's method: BAR (forward AIS, reverse AIS from the forward states resampled by "
            "weight, Bennett's acceptance ratio) or forward AIS (Salakhutdinov & Murray's schedule shape, block Gibbs, "
            "base rate from the binarized MNIST training set), with reverse AIS from the forward run's final states as "
            "the upper side of the bracket. raise_from_test_data: RAISE lower estimate of the test log-likelihood "
            "beside the optimistic one. earlier_runs: the records this one replaced. Each model's settings (steps, "
            "chains, dtype, threads, seed) and command are in its record."
        ),
        "command": "nice -n 10 python benchmarks/reference_log_partition.py "
        + f"--method {args.method} "
        + f"--steps {args.steps} --chains {args.chains} --seed {args.seed} --dtype {args.dtype} --jobs {args.jobs} "
        + (f"--raise-rows {args.raise_rows} " if args.raise_rows is not None else "")
        + f"--models {' '.join(args.models)}",
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "numpy": np.__version__,
        "python": platform.python_version(),
        "models": {},
    }
    if args.out.exists():  # keep the records of models not rerun
        try:
            out["models"].update(json.loads(args.out.read_text())["models"])
        except (ValueError, KeyError):
            pass
    for name in args.models:
        t0 = time.perf_counter()
        rec = reference(
            name, train, test, steps=args.steps, chains=args.chains, seed=args.seed, dtype=args.dtype, jobs=args.jobs,
            raise_rows=args.raise_rows, method=args.method,
        )
        if name in out["models"]:
            rec["earlier_runs"] = _earlier(out["models"][name])
        rec["settings"] = {
            "steps": args.steps, "chains": args.chains, "seed": args.seed, "dtype": args.dtype, "jobs": args.jobs,
        }
        rec["command"] = out["command"]
        rec["total_seconds"] = round(time.perf_counter() - t0, 1)
        out["models"][name] = rec
        args.out.write_text(json.dumps(out, indent=2) + "\n")
        if args.method == "bar":
            b = rec["bar"]
            line = (f"BAR {b['log_z']:.3f} ± {b['stderr']:.3f} (forward {b['forward']['log_z']:.3f}, "
                    f"reverse {b['reverse']['log_z']:.3f})")
        else:
            f, r = rec["forward_ais"], rec["reverse_ais_from_model"]
            line = (f"forward {f['log_z']:.3f} ± {f['stderr']:.3f} (ess {f['ess']}), "
                    f"reverse {r['log_z']:.3f} ± {r['stderr']:.3f}")
        if "raise_from_test_data" in rec:
            t = rec["raise_from_test_data"]
            line += (f"; test log-lik {t['mean_test_log_likelihood_lower']:.3f} (RAISE) .. "
                     f"{t['mean_test_log_likelihood_forward']:.3f} (forward)")
        print(f"{name}: {line}; {rec['total_seconds']:.0f} s", flush=True)
    print(f"written {args.out}")


if __name__ == "__main__":
    main()

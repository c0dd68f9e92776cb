"""Scaling out: the JAX sweep kernel and AIS against the NumPy and Numba kernels, per chain and per run.

Two tables, from one run (so their ratios are comparable):

1. **Cost per chain-sweep** of the flip-the-state sweep (or ``--operator``)
   on ``mnist_h500`` (784 x 500; a random RBM of that size when the shared
   models are absent) for 1, 100 and 10 000 chains, in microseconds:

   - ``numpy``: :func:`pymc_rbm.kernels.flip_sweep` on a batch, float64 and
     float32 parameters (two dense products per sweep, BLAS on every core);
   - ``numba``: :func:`pymc_rbm.kernels.compiled.carried_sweeps`, the step
     methods' compiled loop with activations updated by the units that
     changed (float64, one thread);
   - ``jax``: :func:`pymc_rbm.jax.sweep.build_kernel` under ``jax.lax.scan``
     and ``jax.jit`` (float32 and, when 64-bit types can be enabled,
     float64), after one warm-up call that compiles it.

   All start from the same state, burnt in by 300 flip-the-state sweeps of
   100 chains and tiled, so most units keep their state from sweep to sweep
   as in a trained model at β = 1 (the regime where the Numba kernel's
   incremental update pays). Each timing is the fastest of ``--repeats``
   runs of enough sweeps to last about ``--seconds``.

2. **AIS on mnist_h500** (``--ais``, pairs ``chains:steps``; by default 100
   chains with 2000 steps and 10 000 chains with 200 steps of Salakhutdinov
   & Murray's schedule, float32, base rate from the binarized MNIST
   training set): seconds and the error against
   ``benchmarks/reference_log_partition.json`` for the NumPy estimator
   (``n_jobs`` = the machine's cores) and the JAX one. The JAX time
   includes compilation; ``(again)`` is a second, compiled run (made when
   the first took under 30 s).

Run from the repository root::

    python benchmarks/jax_scaling.py                       # the short default
    python benchmarks/jax_scaling.py --threads 1 --ais ''  # the sweep table on one thread each
    python benchmarks/jax_scaling.py --ais 100:14500,10000:14500 --seconds 2 --repeats 3   # the full run

On a machine with a GPU, install JAX's CUDA build and run the same command:
JAX picks the GPU, and the table names the device it ran on.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from datetime import datetime, timezone
from pathlib import Path

import sys

if "--threads" in sys.argv:  # XLA reads its thread flags when JAX starts: set them before importing it
    _n = sys.argv[sys.argv.index("--threads") + 1]
    if _n == "1":
        os.environ["XLA_FLAGS"] = (
            os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
        ).strip()

import numpy as np  # noqa: E402
import scipy.linalg  # noqa: E402,F401  (numba's np.dot uses SciPy's BLAS: load it before limiting threads)
from threadpoolctl import threadpool_limits  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from pymc_rbm import RBMParams  # noqa: E402
from pymc_rbm.estimators.ais import ais as numpy_ais  # noqa: E402
from pymc_rbm.jax import ais as jax_ais  # noqa: E402
from pymc_rbm.jax import from_params, sweep  # noqa: E402
from pymc_rbm.kernels import RBMState, compiled, flip_sweep, init_state  # noqa: E402
from pymc_rbm.kernels.operators import build_operator, operator_alpha  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
REFERENCE = ROOT / "benchmarks" / "reference_log_partition.json"


def load_model():
    path = SHARED / "rbm_models" / "mnist_h500.npz"
    if path.exists():
        return "mnist_h500", RBMParams.load(path)
    return "random 784x500 (w~U[-.05,.05])", RBMParams.random(784, 500, scale=0.05, rng=1)


def mnist_train():
    path = SHARED / "mnist" / "binarized_mnist_packed.npz"
    if not path.exists():
        return None
    with np.load(path) as f:
        return np.unpackbits(f["train"], axis=1)[:, :784]


def burnt_in(params: RBMParams, n_sweeps: int = 300, n: int = 100) -> RBMState:
    rng = np.random.default_rng(0)
    state = init_state(rng, (rng.random((n, params.n_visible)) < 0.5).astype(np.float64), params)
    for _ in range(n_sweeps):
        state, _ = flip_sweep(rng, state, params)
    return state


def tiled(state: RBMState, n: int) -> RBMState:
    reps = -(-n // state.v.shape[0])
    return RBMState(np.tile(state.v, (reps, 1))[:n].copy(), np.tile(state.h, (reps, 1))[:n].copy())


def fastest(run, n_sweeps: int, repeats: int) -> float:
    """Fastest seconds per sweep of ``run(n_sweeps)`` over ``repeats`` calls."""
    best = np.inf
    for _ in range(repeats):
        t = time.perf_counter()
        run(n_sweeps)
        best = min(best, (time.perf_counter() - t) / n_sweeps)
    return best


def sweeps_for(seconds_per_sweep: float, target: float) -> int:
    return int(max(1, min(100_000, target / max(seconds_per_sweep, 1e-7))))


def time_numpy(params, start, operator, target, repeats, dtype):
    p = params.astype(dtype)
    kernel = build_operator(operator)
    rng = np.random.default_rng(1)
    s0 = RBMState(start.v.astype(dtype), start.h.astype(dtype))

    def run(k):
        s = s0
        for _ in range(k):
            s, _ = kernel(rng, s, p)

    probe = fastest(run, 1, 1)
    return fastest(run, sweeps_for(probe, target), repeats)


def time_numba(params, start, operator, target, repeats):
    if not compiled.available():
        return None
    alpha = operator_alpha(operator)
    gibbs = isinstance(operator, str) and operator == "gibbs"
    rng = np.random.default_rng(1)
    a_h = start.v @ params.W + params.hbias
    W_T = np.ascontiguousarray(params.W.T)

    def run(k):
        compiled.carried_sweeps(rng, start.v, start.h, a_h, None, params, k, alpha=alpha, gibbs=gibbs, W_T=W_T)

    run(1)  # compiles (or loads Numba's cache)
    probe = fastest(run, 1, 1)
    return fastest(run, sweeps_for(probe, target), repeats)


def time_jax(params, start, operator, target, repeats, dtype):
    arrays = from_params(params, dtype=dtype)
    kernel = sweep.build_kernel(operator)
    state = sweep.RBMState(jnp.asarray(start.v, dtype=dtype), jnp.asarray(start.h, dtype=dtype))

    @jax.jit
    def many(key, state, ks):
        def body(s, k):
            return kernel(jax.random.fold_in(key, k), s, arrays)[0], None

        return jax.lax.scan(body, state, ks)[0]

    cache = {}

    def run(k):
        if k not in cache:  # one compilation per length, outside the timing of the next calls
            cache[k] = jnp.arange(k, dtype=jnp.uint32)
            jax.block_until_ready(many(jax.random.key(0), state, cache[k]))
        jax.block_until_ready(many(jax.random.key(1), state, cache[k]))

    run(1)
    probe = fastest(run, 1, 1)
    k = sweeps_for(probe, target)
    run(k)  # compile the timed length
    return fastest(run, k, repeats)


def sweep_table(params, operator, chains, target, repeats, x64):
    start0 = burnt_in(params)
    rows = []
    for n in chains:
        start = tiled(start0, n)
        print(f"... {n} chains", flush=True)
        row = {"chains": n}
        row["numpy f64"] = time_numpy(params, start, operator, target, repeats, np.float64)
        row["numpy f32"] = time_numpy(params, start, operator, target, repeats, np.float32)
        row["numba f64"] = time_numba(params, start, operator, target, repeats)
        row["jax f32"] = time_jax(params, start, operator, target, repeats, "float32")
        if x64:
            with jax.enable_x64(True):
                row["jax f64"] = time_jax(params, start, operator, target, repeats, "float64")
        rows.append(row)
    return rows


def ais_table(params, runs, data, n_jobs):
    rows = []
    for n, steps in runs:
        print(f"... AIS, {n} chains, {steps} steps", flush=True)
        est = numpy_ais(params, n_chains=n, n_steps=steps, data=data, dtype=np.float32, rng=0, n_jobs=n_jobs)
        rows.append(("numpy f32", n, steps, est.diagnostics["seconds"], None, est))
        t = time.perf_counter()
        est = jax_ais(params, n_chains=n, n_steps=steps, data=data, dtype="float32", rng=0)
        first, again = time.perf_counter() - t, None
        if first < 30.0:
            t = time.perf_counter()
            est = jax_ais(params, n_chains=n, n_steps=steps, data=data, dtype="float32", rng=0)
            again = time.perf_counter() - t
        rows.append(("jax f32", n, steps, first, again, est))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chains", default="1,100,10000", help="batch sizes of the sweep table")
    parser.add_argument("--operator", default="flip", help='"gibbs", "flip" or a mixture weight')
    parser.add_argument("--seconds", type=float, default=0.5, help="length of one timed run")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per entry (fastest kept)")
    parser.add_argument("--no-x64", action="store_true", help="skip JAX in float64")
    parser.add_argument(
        "--ais", default="100:2000,10000:200", help="AIS runs as chains:steps pairs ('' to skip; 14500 steps: "
        "Salakhutdinov & Murray's schedule)"
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count(), help="n_jobs of the NumPy AIS")
    parser.add_argument(
        "--threads", type=int, default=None, help="1: BLAS and XLA on one thread each in the sweep table "
        "(steadier on a shared machine); default: every core"
    )
    args = parser.parse_args()
    operator = float(args.operator) if args.operator not in ("gibbs", "flip") else args.operator

    label, params = load_model()
    chains = [int(c) for c in args.chains.split(",") if c]
    device = jax.devices()[0]
    print(f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M UTC}; {platform.node()}; {os.cpu_count()} cores; "
          f"jax {jax.__version__} on {device.platform} ({device.device_kind}), {jax.device_count()} device(s); "
          f"threads: {args.threads or 'all'}; load average {os.getloadavg()[0]:.1f}")
    with threadpool_limits(args.threads):
        rows = sweep_table(params, operator, chains, args.seconds, args.repeats, not args.no_x64)

    print()
    print(f"µs per chain-sweep, {label}, operator {operator!r} (fastest of {args.repeats}; lower is better)")
    names = [k for k in rows[0] if k != "chains"]
    print(f"{'chains':>7s} " + " ".join(f"{n:>10s}" for n in names) + f" {'numpy f64 / jax f32':>20s}")
    for row in rows:
        cells = " ".join(
            f"{'-':>10s}" if row[n] is None else f"{1e6 * row[n] / row['chains']:10.3f}" for n in names
        )
        print(f"{row['chains']:7d} {cells} {row['numpy f64'] / row['jax f32']:20.2f}")

    runs = [tuple(int(x) for x in pair.split(":")) for pair in args.ais.split(",") if pair]
    if runs and label == "mnist_h500":
        reference = json.loads(REFERENCE.read_text())["models"]["mnist_h500"]["log_z"]
        out = ais_table(params, runs, mnist_train(), args.jobs)
        print()
        print(f"AIS on mnist_h500, float32, reference log Z {reference:.3f}")
        print(f"{'backend':>10s} {'chains':>7s} {'steps':>6s} {'seconds':>8s} {'(again)':>8s} {'log Z':>9s} "
              f"{'error':>7s} {'stderr':>7s} {'ess':>7s}")
        for name, n, steps, sec, again, est in out:
            again_s = f"{again:8.1f}" if again is not None else f"{'':>8s}"
            print(f"{name:>10s} {n:7d} {steps:6d} {sec:8.1f} {again_s} {est.log_z:9.3f} "
                  f"{est.log_z - reference:7.3f} {est.stderr:7.3f} {est.diagnostics['ess']:7.1f}")


if __name__ == "__main__":
    main()

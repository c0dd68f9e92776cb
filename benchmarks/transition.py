"""How long digits take to form and to dissolve along the mean-field ladder of an RBM trained on MNIST.

``ReplicaExchange`` tempers from the model's naive mean-field product (its
default reference on the MNIST RBMs): the rung at ``β`` targets
``exp(-β E(v, h) + (1 - β)(b·v + c·h))`` with ``(b, c)`` the fields of
:func:`~pymc_rbm.estimators.base_rate.mean_field_fields`, an RBM with weights
``β W``, visible biases ``β vbias + (1 - β) b`` and hidden biases
``β hbias + (1 - β) c``. On mnist_h500 the rungs near the model hold almost
blank images below ``β`` of about 0.99 and digits above it. A replica that
crosses the ladder and back must turn from one into the other and back, by
its sweeps alone.

For each ``β`` of ``--betas``, ``--chains`` chains of block Gibbs at that
rung (:func:`~pymc_rbm.kernels.gibbs_sweep`), ``--sweeps`` sweeps each,
started once from the blank image and once from binarized MNIST training
images (``../shared/data/mnist/binarized_mnist_packed.npz``; skipped with a
message when absent): the median number of sweeps until a blank chain first
has more than ``--digit`` pixels on, and until a digit chain first has fewer
than ``--blank``; the share of chains that never did; and the mean number of
pixels on over the last 200 sweeps of either start.

Run from the repository root::

    ./dev python benchmarks/transition.py
    ./dev python benchmarks/transition.py --model mnist_h100 --betas 1 0.99 0.98 0.97
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from real_rbms import load

HERE = Path(__file__).resolve().parent
MNIST = HERE.parent.parent / "shared" / "data" / "mnist" / "binarized_mnist_packed.npz"


def rung(params, fields, beta: float):
    """The RBM that the mean-field ladder's rung at ``beta`` targets."""
    from pymc_rbm import RBMParams

    return RBMParams(beta * params.W, beta * params.vbias + (1.0 - beta) * fields.vbias,
                     beta * params.hbias + (1.0 - beta) * fields.hbias)


def first_passage(trace: np.ndarray, crossed) -> tuple[float, float]:
    """Median sweep at which each chain of ``trace`` (sweeps, chains) first meets ``crossed``, over the chains that
    did (NaN if none), and the share of chains that never did."""
    hit = crossed(trace)
    ever = hit.any(axis=0)
    first = np.argmax(hit, axis=0)
    return (float(np.median(first[ever])) if ever.any() else np.nan), float(1.0 - ever.mean())


def run(params, fields, beta, starts, args, rng) -> tuple[np.ndarray, float]:
    """Pixels on per sweep of block Gibbs at the rung ``beta`` from ``starts``, (sweeps, chains); and the seconds."""
    from pymc_rbm.kernels import gibbs_sweep, init_state

    model = rung(params, fields, beta)
    state = init_state(rng, starts, model)
    trace = np.empty((args.sweeps, starts.shape[0]))
    t = time.perf_counter()
    for s in range(args.sweeps):
        state, _ = gibbs_sweep(rng, state, model)
        trace[s] = state.v.sum(axis=1)
    return trace, time.perf_counter() - t


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="mnist_h500")
    ap.add_argument("--betas", type=float, nargs="+", default=[1.0, 0.997, 0.994, 0.992, 0.9895, 0.986, 0.974])
    ap.add_argument("--chains", type=int, default=20)
    ap.add_argument("--sweeps", type=int, default=1500)
    ap.add_argument("--digit", type=int, default=60, help="a blank chain has become a digit above this many pixels")
    ap.add_argument("--blank", type=int, default=25, help="a digit has dissolved below this many pixels")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    from pymc_rbm.datasets import load_mnist
    from pymc_rbm.estimators.base_rate import mean_field_fields

    params = load(args.model)
    if params is None:
        print(f"{args.model}: skipped (../shared/data/rbm_models/{args.model}.npz is absent)")
        return 0
    if not MNIST.exists():
        print(f"skipped: {MNIST} is absent")
        return 0
    rng = np.random.default_rng(args.seed)
    images = load_mnist(MNIST).images
    digits = images[rng.choice(images.shape[0], size=args.chains, replace=False)].astype(np.float64)
    blank = np.zeros_like(digits)
    fields = mean_field_fields(params)

    print(f"{args.model}: block Gibbs at rungs of the mean-field ladder, {args.chains} chains x {args.sweeps} sweeps "
          f"from each start; a digit: more than {args.digit} pixels on, blank: fewer than {args.blank}")
    header = (f"{'beta':>7} | {'blank->digit':>12} {'never':>6} {'pixels':>7} | {'digit->blank':>12} {'never':>6} "
              f"{'pixels':>7} | {'s':>5}")
    print(header)
    print("-" * len(header))
    for beta in args.betas:
        up, s_up = run(params, fields, beta, blank, args, rng)
        down, s_down = run(params, fields, beta, digits, args, rng)
        grow, grow_never = first_passage(up, lambda t: t > args.digit)
        melt, melt_never = first_passage(down, lambda t: t < args.blank)
        print(f"{beta:>7.4f} | {grow:>12.1f} {grow_never:>6.2f} {up[-200:].mean():>7.1f} | {melt:>12.1f} "
              f"{melt_never:>6.2f} {down[-200:].mean():>7.1f} | {s_up + s_down:>5.1f}", flush=True)
    print("\nmedian sweeps to the first crossing, over the chains that crossed; never: share of chains that did not "
          "within the sweeps; pixels: mean pixels on over the last 200 sweeps")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Seed 000 §4.3 / Table 2: autocorrelation time of flip-the-state T against block Gibbs G.

Brügge, Fischer & Igel (2013) sampled trained RBMs for 10^6 steps with G and
T and compared the integrated autocorrelation time ``τ = Σ_Δt R(Δt)`` of the
energy, estimated by an AR-model fit (SamplerCompare); Table 2 lists the mean
``τ_G``, ``τ_T`` over single chains and the gain ``1 - τ_T / τ_G``. The one
figure the text gives: "an RBM trained on MNIST with 500 hidden neurons
needed on average to be sampled for 17.28 % fewer steps to achieve the same
variance of the estimate if T is used instead of G" (24 RBMs trained with
20-PT10 for 2000 updates; the MNIST RBMs here are other models, those of
seed 004).

What this script does, per model:

- ``--chains`` chains (default 50) in one batch, run directly with the pure
  kernels :func:`~pymc_rbm.kernels.gibbs_sweep` and
  :func:`~pymc_rbm.kernels.flip_sweep`; one draw is one sweep
  (hidden layer, then visible layer);
- start: MNIST models from ``--chains`` distinct images of the binarized
  MNIST test set (``../shared/data/mnist/binarized_mnist_packed.npz``, key
  ``test``), drawn at random; the random model from uniform random states;
  the hidden layer drawn from ``p(h | v)``; G and T start from the same states;
- ``--burn-in`` sweeps (default 1000) discarded, then ``--sweeps`` (default
  5000) recorded: the free energy ``F(v_k)`` (what the package's step
  methods record) and the joint energy ``E(v_k, h_k)`` (the seed's quantity);
- ``τ`` by :func:`pymc_rbm.diagnostics.compare_samplers`, three ways: F(v)
  with ArviZ's ESS ('mean' method: Geyer's initial monotone sequence on
  split chains), pooled over chains and as the mean of single-chain ``τ``;
  and E(v, h) with the seed's AR-fit estimator, mean of single-chain ``τ``
  (the seed's setting).

Models: ``random`` (always: 100 x 50, weights uniform on [-1, 1], zero
biases, as seed 000's random RBMs of Fig. 3 with c = 1) and ``../shared/data/rbm_models/mnist_h{10,100,500}.npz``
(skipped with a message when absent). Run from the repository root::

    python benchmarks/ess_flip_vs_gibbs.py [--chains 50] [--sweeps 5000] [--burn-in 1000] [--seed 0]
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

import numpy as np

from pymc_rbm import RBMParams
from pymc_rbm.diagnostics import compare_samplers
from pymc_rbm.energy import hidden_activation, softplus
from pymc_rbm.kernels import flip_sweep, gibbs_sweep, init_state

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
MNIST_MODELS = ("mnist_h10", "mnist_h100", "mnist_h500")
PAPER_GAIN = {"mnist_h500": "17.28 %"}  # seed 000 §5.3; Table 2's other numbers are not in the text
RANDOM_SHAPE, RANDOM_SCALE = (100, 50), 1.0  # seed 000 Fig. 3's random RBMs (U[-c, c], zero biases), larger
#: below this many draws per τ a τ estimate is called unreliable (Sokal's rule of thumb)
MIN_DRAWS_PER_TAU = 50


def load_models(names, data_dir: Path, seed: int):
    """``{name: (params, description)}``; absent files are reported and skipped."""
    models = {}
    for name in names:
        if name == "random":
            params = RBMParams.random(*RANDOM_SHAPE, scale=RANDOM_SCALE, bias_scale=0.0, rng=seed)
            models[name] = (params, f"{RANDOM_SHAPE[0]}x{RANDOM_SHAPE[1]}, W ~ U[-{RANDOM_SCALE:g}, {RANDOM_SCALE:g}]")
            continue
        path = data_dir / "rbm_models" / f"{name}.npz"
        if not path.exists():
            print(f"skipping {name}: {path} is absent")
            continue
        params = RBMParams.load(path)
        models[name] = (params, f"{params.n_visible}x{params.n_hidden}")
    return models


def start_states(name: str, params: RBMParams, n_chains: int, data_dir: Path, rng) -> tuple[np.ndarray, str]:
    """Visible start states (n_chains, n_visible) and how they were chosen."""
    path = data_dir / "mnist" / "binarized_mnist_packed.npz"
    if name.startswith("mnist") and path.exists():
        with np.load(path, allow_pickle=False) as f:
            test = np.unpackbits(f["test"], axis=1)[:, :784]
        if n_chains > len(test):
            raise ValueError(f"--chains {n_chains} exceeds the {len(test)} test images")
        return test[rng.choice(len(test), size=n_chains, replace=False)].astype(np.float64), "MNIST test images"
    if name.startswith("mnist"):
        print(f"  {path} is absent: {name} starts from random states")
    return (rng.random((n_chains, params.n_visible)) < 0.5).astype(np.float64), "uniform random states"


def run_chains(kernel, params, v0, n_burn: int, n_sweeps: int, rng):
    """Run ``kernel`` on a batch of chains; returns F and E, each (n_chains, n_sweeps), and seconds per sweep.

    Only the kernel calls are timed, not the energy bookkeeping.
    """
    state = init_state(rng, v0, params)
    f_trace = np.empty((n_sweeps, v0.shape[0]))
    e_trace = np.empty((n_sweeps, v0.shape[0]))
    for _ in range(n_burn):
        state, _ = kernel(rng, state, params)
    kernel_seconds = 0.0
    for k in range(n_sweeps):
        t0 = time.perf_counter()
        state, _ = kernel(rng, state, params)
        kernel_seconds += time.perf_counter() - t0
        act = hidden_activation(state.v, params)  # hbias + v W, shared by F and E
        vb = state.v @ params.vbias
        f_trace[k] = -vb - softplus(act).sum(axis=-1)  # F(v)
        e_trace[k] = -vb - (act * state.h).sum(axis=-1)  # E(v, h) = -v W h - vbias v - hbias h
    return f_trace.T, e_trace.T, kernel_seconds / n_sweeps


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chains", type=int, default=50, help="chains per operator and model (default 50)")
    parser.add_argument("--sweeps", type=int, default=5000, help="recorded sweeps per chain (default 5000)")
    parser.add_argument("--burn-in", type=int, default=1000, help="sweeps discarded first (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of start states and kernels (default 0)")
    parser.add_argument(
        "--models",
        nargs="+",
        default=["random", *MNIST_MODELS],
        help="'random' and/or names in ../shared/data/rbm_models/ (default: random mnist_h10 mnist_h100 mnist_h500)",
    )
    parser.add_argument("--data-dir", type=Path, default=SHARED_DATA, help="the shared data directory")
    args = parser.parse_args(argv)

    wall = time.perf_counter()
    models = load_models(args.models, args.data_dir, args.seed)
    traces = {"F pooled": {}, "F mean": {}, "E ar": {}}
    timing, starts = {}, {}
    for i, (name, (params, shape)) in enumerate(models.items()):
        row = f"{name} ({shape})"
        rngs = np.random.default_rng([args.seed, i]).spawn(3)
        v0, starts[name] = start_states(name, params, args.chains, args.data_dir, rngs[0])
        t0 = time.perf_counter()
        f_g, e_g, s_g = run_chains(gibbs_sweep, params, v0, args.burn_in, args.sweeps, rngs[1])
        f_t, e_t, s_t = run_chains(flip_sweep, params, v0, args.burn_in, args.sweeps, rngs[2])
        timing[row] = (s_g, s_t)
        total = args.burn_in + args.sweeps
        print(f"  {row}: {2 * args.chains} chains x {total} sweeps in {time.perf_counter() - t0:.1f} s")
        traces["F pooled"][row] = {"G": f_g, "T": f_t}
        traces["F mean"][row] = {"G": f_g, "T": f_t}
        traces["E ar"][row] = {"G": e_g, "T": e_t}
    if not models:
        print("no models to run")
        return

    tables = [
        compare_samplers(traces["F pooled"], method="mean", combine="pooled", quantity="F(v)"),
        compare_samplers(traces["F mean"], method="mean", combine="mean", quantity="F(v)"),
        compare_samplers(traces["E ar"], method="ar", combine="mean", quantity="E(v, h), seed 000's setting"),
    ]
    print()
    print("Seed 000 Table 2: integrated autocorrelation time, block Gibbs G vs flip-the-state T")
    print(
        f"{args.chains} chains per operator, {args.burn_in} burn-in + {args.sweeps} recorded sweeps, seed {args.seed}; "
        "one draw = one sweep; starts: "
        + ", ".join(sorted({f'{s} ({", ".join(n for n in starts if starts[n] == s)})' for s in starts.values()}))
    )
    paper = [PAPER_GAIN.get(name, "-") for name in models]
    for table in tables:
        print()
        print(table.format({"paper gain": paper}))
        thin = [
            p.split(" (")[0]
            for i, p in enumerate(table.problems)
            if np.any(table.n_draws[i] < MIN_DRAWS_PER_TAU * table.tau[i])
        ]
        if thin:
            print(f"chains shorter than {MIN_DRAWS_PER_TAU} τ (τ underestimated, run longer): {', '.join(thin)}")
    print()
    print("Paper (seed 000 §5.3): 'an RBM trained on MNIST with 500 hidden neurons needed on average to be sampled")
    print("for 17.28 % fewer steps to achieve the same variance of the estimate if T is used instead of G' (24 RBMs")
    print("trained with 20-PT10 for 2000 updates, 10^6 steps each, energy E(v, h), AR-fit τ); gain = 1 - τ_T / τ_G.")
    print()
    print("Time per sweep of the batch (kernel only, same run):")
    width = max(len(r) for r in timing)
    print(f"  {'model'.ljust(width)}  {'G ms':>8}  {'T ms':>8}  {'T / G':>6}")
    for row, (s_g, s_t) in timing.items():
        print(f"  {row.ljust(width)}  {1e3 * s_g:8.3f}  {1e3 * s_t:8.3f}  {s_t / s_g:6.2f}")
    print()
    machine = platform.processor() or platform.machine()
    print(f"total {time.perf_counter() - wall:.0f} s; numpy {np.__version__}, {machine}")


if __name__ == "__main__":
    main()

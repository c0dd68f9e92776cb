"""Speed of the RBM step methods through ``pm.sample``, against the matrix-vector floor and PyMC's own sampler.

For each model (random RBMs at 784x500 and 100x50, and the trained
``mnist_h500`` of ``../shared/data/rbm_models`` when present) the script
measures, in one run and on one BLAS thread:

- the floor: two bare NumPy matrix-vector products ``v·W`` and ``h·Wᵀ`` (one
  naive sweep's arithmetic), single chain, C-ordered ``W``; and that floor
  plus one uniform draw and one ``exp`` per unit of both layers (``+draws``),
  which a sweep in the regime where most units change cannot avoid;
- microseconds per draw through ``pm.sample`` (``sampling_time`` over all
  iterations, one chain, no progress bar) of ``BlockGibbs`` and
  ``FlipTheState`` with ``sweeps=1`` and ``sweeps=10``, per sweep, and the
  ratio per sweep / floor;
- the ESS of the free energy F(v) per second of sampling, against PyMC's
  ``BinaryGibbsMetropolis`` on the same distribution (Bernoulli(1/2) units
  with ``-F(v)`` as a Potential, the form it is built for: it calls the
  compiled model logp about 0.8 times per visible unit and draw, so it runs
  briefly). ArviZ reports ESS = number of draws for a constant series: such a
  stuck chain is shown as "stuck", never as efficient.

Every run starts from the same burnt-in state (2000 flip-the-state sweeps of
:mod:`pymc_rbm.kernels` from a uniform random state), so the timings are of
the stationary regime, not of the first sweeps from ``pm.sample``'s initial
point (where many units change at once). Each timing is the fastest of
``--repeats`` runs (the machine may be shared); all ratios come from the same
run. Run from the repository root::

    python benchmarks/sampler_speed.py [--quick] [--draws 2000] [--bgm-draws 200] [--repeats 3]
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

import scipy.linalg  # noqa: F401  (numba's np.dot uses SciPy's BLAS: load it before limiting threads)
from threadpoolctl import threadpool_limits

import arviz as az
import numpy as np
import pymc as pm
import pytensor.tensor as pt

from pymc_rbm import RBM, BlockGibbs, FlipTheState, RBMParams
from pymc_rbm.energy import RBMTensors, free_energy
from pymc_rbm.kernels import flip_sweep, init_state

SHARED_MODELS = Path(__file__).resolve().parents[2] / "shared" / "data" / "rbm_models"


def models(quick: bool):
    """``(label, RBMParams)`` of the benchmarked RBMs."""
    out = [
        ("random 784x500 (w~U[-1,1])", RBMParams.random(784, 500, scale=1.0, rng=0)),
        ("random 784x500 (w~U[-.05,.05])", RBMParams.random(784, 500, scale=0.05, rng=1)),
    ]
    mnist = SHARED_MODELS / "mnist_h500.npz"
    if mnist.exists():
        out.append(("mnist_h500 (784x500)", RBMParams.load(mnist)))
    small = ("random 100x50 (w~U[-1,1])", RBMParams.random(100, 50, scale=1.0, rng=2))
    return [out[-1], small] if quick else [*out, small]


def floor_us(params: RBMParams, repeats: int = 7, number: int = 2000) -> float:
    """Fastest time of ``v @ W`` plus ``h @ W.T`` for one chain, in µs."""
    rng = np.random.default_rng(0)
    W = np.ascontiguousarray(params.W)
    v = (rng.random((1, params.n_visible)) < 0.5).astype(np.float64)
    h = (rng.random((1, params.n_hidden)) < 0.5).astype(np.float64)
    best = np.inf
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(number):
            v @ W
            h @ W.T
        best = min(best, (time.perf_counter() - t) / number)
    return best * 1e6


def draw_floor_us(params: RBMParams, repeats: int = 7, number: int = 2000) -> float:
    """Fastest time to draw one uniform and take one ``exp`` per unit of both layers (one chain), in µs.

    Any sampler that may change every unit pays this on top of the two
    products; in the regime where most units change it is what separates a
    sweep from the matrix-vector floor.
    """
    rng = np.random.default_rng(0)
    a_v, a_h = rng.normal(size=(1, params.n_visible)), rng.normal(size=(1, params.n_hidden))
    best = np.inf
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(number):
            rng.random(a_v.shape) < np.exp(a_v)
            rng.random(a_h.shape) < np.exp(a_h)
        best = min(best, (time.perf_counter() - t) / number)
    return best * 1e6


def ess_of(x) -> float:
    """ESS of a (chain, draw) series; NaN for a constant (stuck) one."""
    x = np.asarray(x, dtype=np.float64)
    if np.all(x == x.flat[0]):
        return float("nan")
    return float(az.ess(x))


def rbm_model(params):
    with pm.Model() as model:
        RBM("v", params.W, params.vbias, params.hbias)
    return model


def potential_model(params):
    """The same distribution of v as Bernoulli(1/2) units times exp(-F(v)), for BinaryGibbsMetropolis."""
    tensors = RBMTensors(*(pt.as_tensor(x) for x in (params.W, params.vbias, params.hbias)))
    with pm.Model() as model:
        v = pm.Bernoulli("v", 0.5, shape=params.n_visible)
        pm.Potential("rbm", -free_energy(v, tensors))
    return model


def burnt_in(params, n_sweeps: int = 2000, seed: int = 0) -> np.ndarray:
    """A visible state after ``n_sweeps`` flip-the-state sweeps from a uniform random state."""
    rng = np.random.default_rng(seed)
    state = init_state(rng, (rng.random(params.n_visible) < 0.5).astype(np.float64), params)
    for _ in range(n_sweeps):
        state, _ = flip_sweep(rng, state, params)
    return state.v[0].astype(np.int64)


def run_sampler(model, make_step, draws: int, tune: int, repeats: int, start, seed: int = 1):
    """Fastest µs per iteration over ``repeats`` runs from ``start``, and the trace of the last run."""
    best, idata = np.inf, None
    for r in range(repeats):
        with model:
            idata = pm.sample(
                draws=draws, tune=tune, chains=1, cores=1, step=make_step(), random_seed=seed + r,
                initvals={"v": start}, progressbar=False, compute_convergence_checks=False, quiet=True,
            )
        best = min(best, idata.posterior.attrs["sampling_time"] / (draws + tune))
    return best * 1e6, idata


def fmt(x, spec=".1f"):
    return "stuck" if x is None or not np.isfinite(x) else format(x, spec)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=3000, help="draws per timed run with sweeps=1")
    parser.add_argument("--bgm-draws", type=int, default=200, help="draws of BinaryGibbsMetropolis")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per sampler (fastest kept)")
    parser.add_argument("--quick", action="store_true", help="mnist_h500 (or the first model) and 100x50 only")
    args = parser.parse_args()
    logging.getLogger("pymc").setLevel(logging.ERROR)

    rows = []
    with threadpool_limits(1):
        for label, params in models(args.quick):
            print(f"... {label}", flush=True)
            big = params.n_visible * params.n_hidden > 100_000
            start = burnt_in(params)
            floor = floor_us(params)
            draws_floor = draw_floor_us(params)
            results = {}
            for name, cls in (("BlockGibbs", BlockGibbs), ("FlipTheState", FlipTheState)):
                for sweeps in (1, 10):
                    draws = args.draws if sweeps == 1 else max(args.draws // 5, 100)
                    us, idata = run_sampler(
                        rbm_model(params), lambda c=cls, s=sweeps: c(sweeps=s), draws, 50, args.repeats, start
                    )
                    f = idata.sample_stats["free_energy"].values
                    ess_per_s = ess_of(f) / (idata.posterior.attrs["sampling_time"])
                    results[(name, sweeps)] = (us, ess_per_s)
            bgm_draws = args.bgm_draws if big else 5 * args.bgm_draws
            us_bgm, idata = run_sampler(
                potential_model(params), lambda: pm.BinaryGibbsMetropolis(pm.modelcontext(None).value_vars),
                bgm_draws, bgm_draws // 10, 1, start,
            )
            f_bgm = free_energy(idata.posterior["v"].values, params)
            ess_bgm = ess_of(f_bgm) / idata.posterior.attrs["sampling_time"]
            floor = min(floor, floor_us(params))  # the floor again, after the runs: keep the fastest
            rows.append((label, floor, draws_floor, results, us_bgm, ess_bgm))

    print()
    print("µs per draw through pm.sample (1 chain, 1 BLAS thread); floor = v·W + h·Wᵀ, same run;")
    print("ratio = µs per sweep / floor; +draws = floor plus one uniform and one exp per unit (what a sweep")
    print("that may change every unit cannot avoid), ratio+ = µs per sweep / that;")
    print("ESS/s of F(v), and its ratio to BinaryGibbsMetropolis (BGM; short BGM runs: see ess_vs_bgm.py)")
    header = f"{'model':32s} {'sampler':14s} {'sweeps':>6s} {'µs/draw':>9s} {'µs/sweep':>9s} {'floor':>7s} "
    header += f"{'ratio':>6s} {'+draws':>7s} {'ratio+':>6s} {'ESS/s':>9s} {'vs BGM':>8s}"
    print(header)
    print("-" * len(header))
    for label, floor, draws_floor, results, us_bgm, ess_bgm in rows:
        plus = floor + draws_floor
        for (name, sweeps), (us, ess_s) in results.items():
            vs = ess_s / ess_bgm if np.isfinite(ess_bgm) and ess_bgm > 0 else float("nan")
            print(
                f"{label:32s} {name:14s} {sweeps:6d} {us:9.1f} {us / sweeps:9.1f} {floor:7.1f} "
                f"{us / sweeps / floor:6.2f} {plus:7.1f} {us / sweeps / plus:6.2f} {fmt(ess_s):>9s} "
                f"{fmt(vs, '.0f') + 'x':>8s}"
            )
        print(
            f"{label:32s} {'BinaryGibbsM.':14s} {1:6d} {us_bgm:9.0f} {us_bgm:9.0f} {floor:7.1f} "
            f"{us_bgm / floor:6.0f} {plus:7.1f} {us_bgm / plus:6.0f} {fmt(ess_bgm, '.2f'):>9s} {'1x':>8s}"
        )


if __name__ == "__main__":
    main()

"""Speed of the RBM step methods through ``pm.sample``, against the matrix-vector floor and PyMC's own sampler.

For each model (random RBMs at 784x500 and 100x50, and the trained
``mnist_h500`` of ``../shared/data/rbm_models`` when present) the script
measures, in one run and on one BLAS thread:

- the floor: two bare NumPy matrix-vector products ``v·W`` and ``h·Wᵀ`` (one
  naive sweep's arithmetic), single chain, C-ordered ``W``; and that floor
  plus one uniform draw and one ``exp`` per unit of both layers (``+draws``),
  which a sweep in the regime where most units change cannot avoid;
- what ``pm.sample`` itself costs per draw, with a step that hands the point
  back unchanged (on small models it is several times the floor, so no step
  method can reach the floor there with ``sweeps=1``);
- microseconds per draw through ``pm.sample`` (``sampling_time`` over all
  iterations, one chain, no progress bar) of ``BlockGibbs`` and
  ``FlipTheState`` with ``sweeps=1`` and ``sweeps=10``, per sweep, and the
  ratio per sweep / floor;
- microseconds per draw of PyMC's ``BinaryGibbsMetropolis`` on the same
  distribution (Bernoulli(1/2) units with ``-F(v)`` as a Potential), timed on
  its ``step`` after a warm-up draw that compiles its logp. ESS per second
  needs runs far longer than this script's: ``benchmarks/ess_vs_bgm.py``.

Every run starts from the same burnt-in state (2000 flip-the-state sweeps of
:mod:`pymc_rbm.kernels` from a uniform random state), so the timings are of
the stationary regime, not of the first sweeps from ``pm.sample``'s initial
point (where many units change at once). Each timing is the fastest of
``--repeats`` runs (the machine may be shared); all ratios come from the same
run.

The batch table (``--batch 100``; 0 skips it) times a batch of chains in one
variable, ``RBM(..., shape=(batch, 784))`` on the 784x500 RBM with weights
U[-0.05, 0.05] (most units change in every sweep, so the step methods take
their dense path of BLAS products): microseconds per draw through
``pm.sample`` against the two-gemm floor ``V·W`` and ``H·Wᵀ`` of the batch,
scikit-learn's ``BernoulliRBM.gibbs`` on the same batch where scikit-learn is
installed, and ``pm.sample``'s own cost per draw of a batched variable (a step
that copies the point). The timings are interleaved over ``--repeats`` rounds
and the fastest of each kept, the samplers taking turns at running first
after the floor (whichever runs first can pay page faults at every draw,
an effect of glibc's heap trimming after the floor's products); each timing
spans as many sweeps as a sampler run has draws, so that on a shared machine
none is favoured by being short. Each is
given as wall time and as the CPU time of the sampling thread (for
``pm.sample``, between the first and the last draw's ``callback``), which
does not count the time other processes hold the core. Run from the
repository root::

    python benchmarks/sampler_speed.py [--quick] [--draws 2000] [--bgm-draws 200] [--repeats 3] [--batch 100]
    python benchmarks/sampler_speed.py --batch-only      # the batch table alone
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

import scipy.linalg  # noqa: F401  (numba's np.dot uses SciPy's BLAS: load it before limiting threads)
from threadpoolctl import threadpool_limits

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from pymc.step_methods.compound import BlockedStep, Competence

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


class IdleStep(BlockedStep):
    """A step that hands the point back unchanged (with ``copy``, a copy of it): what ``pm.sample`` itself
    costs per draw."""

    name = "idle"
    stats_dtypes_shapes = {"free_energy": (np.float64, [])}

    def __init__(self, vars, rng=None, copy=False):
        self.vars = vars
        self.rng = np.random.default_rng(rng)
        self.stats_dtypes = [{"free_energy": np.float64}]
        self.copy = copy

    def step(self, point):
        if self.copy:
            point = {name: np.array(value, copy=True) for name, value in point.items()}
        return point, [{"free_energy": 0.0}]

    @staticmethod
    def competence(var, has_grad=None):
        return Competence.INCOMPATIBLE


def rbm_model(params, batch: int | None = None):
    with pm.Model() as model:
        RBM("v", params.W, params.vbias, params.hbias, shape=None if batch is None else (batch, params.n_visible))
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


def bgm_seconds_per_draw(model, start, n_draws: int) -> float:
    """Seconds per draw of ``pm.BinaryGibbsMetropolis``'s ``step`` (as ``pm.sample`` calls it), after one
    warm-up draw (the first call compiles the logp function)."""
    with model:
        step = pm.BinaryGibbsMetropolis(model.value_vars, rng=0)
        point = model.initial_point()
        point["v"] = start.astype(point["v"].dtype)
        point, _ = step.step(point)
        t0 = time.perf_counter()
        for _ in range(n_draws):
            point, _ = step.step(point)
        return (time.perf_counter() - t0) / n_draws


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


def _timed(fn, number: int) -> tuple[float, float]:
    """Wall and CPU (this thread) µs per call of ``fn()`` over ``number`` calls."""
    wall, cpu = time.perf_counter(), time.thread_time()
    for _ in range(number):
        fn()
    return (time.perf_counter() - wall) / number * 1e6, (time.thread_time() - cpu) / number * 1e6


def gemm_floor_us(params: RBMParams, batch: int, number: int = 20) -> tuple[float, float]:
    """Wall and CPU µs of ``V @ W`` plus ``H @ W.T`` for a batch of ``batch`` chains (``number`` pairs)."""
    rng = np.random.default_rng(0)
    W = np.ascontiguousarray(params.W)
    v = (rng.random((batch, params.n_visible)) < 0.5).astype(np.float64)
    h = (rng.random((batch, params.n_hidden)) < 0.5).astype(np.float64)
    return _timed(lambda: (v @ W, h @ W.T), number)


def sklearn_gibbs_us(params: RBMParams, start: np.ndarray, number: int = 20):
    """Wall and CPU µs of scikit-learn's ``BernoulliRBM.gibbs`` (one block-Gibbs sweep) on the batch ``start``;
    None without scikit-learn."""
    try:
        from sklearn.neural_network import BernoulliRBM
    except ImportError:
        return None
    rbm = BernoulliRBM(n_components=params.n_hidden, random_state=0)
    rbm.components_ = np.ascontiguousarray(params.W.T)
    rbm.intercept_hidden_, rbm.intercept_visible_ = np.array(params.hbias), np.array(params.vbias)
    rbm.random_state_ = np.random.RandomState(0)
    v = start.astype(np.float64)
    rbm.gibbs(v)
    return _timed(lambda: rbm.gibbs(v), number)


def sample_us(model, make_step, draws: int, tune: int, start, seed: int = 1) -> tuple[float, float]:
    """Wall and CPU µs per draw of one ``pm.sample`` run from ``start``: the wall time of its sampling loop
    (``sampling_time``) and this thread's CPU time between the first and the last draw (by ``callback``)."""
    stamps = []
    with model:
        idata = pm.sample(
            draws=draws, tune=tune, chains=1, cores=1, step=make_step(), random_seed=seed, initvals={"v": start},
            progressbar=False, compute_convergence_checks=False, quiet=True,
            callback=lambda trace, draw: stamps.append(time.thread_time()),
        )
    wall = idata.posterior.attrs["sampling_time"] / (draws + tune)
    return wall * 1e6, (stamps[-1] - stamps[0]) / (len(stamps) - 1) * 1e6


def batch_table(batch: int, draws: int, rounds: int) -> None:
    """The batch table: ``batch`` chains of the 784x500 RBM with weights U[-0.05, 0.05] (see the module docstring)."""
    params = RBMParams.random(784, 500, scale=0.05, rng=1)
    rng = np.random.default_rng(0)
    state = init_state(rng, (rng.random((batch, 784)) < 0.5).astype(np.float64), params)
    for _ in range(20):  # a few sweeps into the stationary regime (most units change in every one)
        state, _ = flip_sweep(rng, state, params)
    start = state.v.astype(np.int64)
    model = rbm_model(params, batch)
    samplers = {
        "FlipTheState": lambda: FlipTheState(),
        "BlockGibbs": lambda: BlockGibbs(),
        "(idle step)": lambda: IdleStep(pm.modelcontext(None).value_vars, copy=True),
    }
    best = {}  # name -> (wall, cpu) µs, each the fastest over the rounds

    def keep(name, times):
        if times is not None:
            best[name] = tuple(min(a, b) for a, b in zip(best.get(name, (np.inf, np.inf)), times))

    with threadpool_limits(1):
        for sampler in samplers.values():  # compile and warm up outside the timed rounds
            sample_us(model, sampler, 5, 0, start)
        names = list(samplers)
        for r in range(rounds):
            # every timing spans as many sweeps as a sampler run has draws: on a shared machine a short
            # timing is likelier to fall between the other processes' bursts, which would favour it
            keep("floor", gemm_floor_us(params, batch, draws + 10))
            # the samplers take turns at running first after the floor: its freed products can leave glibc's
            # allocator trimming the heap, so that the next run's 627 kB draws fault their pages in afresh
            # every time (measured: 0.1-0.15 of the floor for whichever sampler ran first, none with
            # MALLOC_TRIM_THRESHOLD_ and MALLOC_MMAP_THRESHOLD_ fixed)
            for name in names[r % len(names):] + names[: r % len(names)]:
                keep(name, sample_us(model, samplers[name], draws, 10, start))
            keep("sklearn", sklearn_gibbs_us(params, start, draws + 10))
            keep("floor", gemm_floor_us(params, batch, draws + 10))
    (floor, floor_cpu) = best["floor"]
    print()
    print(f"A batch of {batch} chains in one variable, 784x500, w~U[-.05,.05] (most units change every sweep); µs per")
    print(f"draw (one sweep) through pm.sample, 1 BLAS thread, fastest of {rounds} interleaved rounds; floor = the two")
    print("gemms V·W and H·Wᵀ of the batch, same run. Wall time, and this thread's CPU time (not counting the time")
    print("other processes on a shared machine take the core away; on a quiet machine the two agree).")
    header = f"{'sampler':34s} {'µs/draw':>9s} {'floor':>8s} {'ratio':>6s} {'CPU µs':>9s} {'floor':>8s} {'ratio':>6s}"
    print(header)
    print("-" * len(header))

    def row(label, name, note=""):
        wall, cpu = best[name]
        print(f"{label:34s} {wall:9.0f} {floor:8.0f} {wall / floor:6.2f} {cpu:9.0f} {floor_cpu:8.0f} "
              f"{cpu / floor_cpu:6.2f}{note}")

    for name in ("FlipTheState", "BlockGibbs"):
        row(name + " (pm.sample)", name)
    if "sklearn" in best:
        row("sklearn BernoulliRBM.gibbs", "sklearn")
    else:
        print(f"{'sklearn BernoulliRBM.gibbs':34s} {'(scikit-learn not installed)':>25s}")
    row("(idle step, pm.sample)", "(idle step)", "   <- pm.sample's own cost")


def fmt(x, spec=".1f"):
    return "stuck" if x is None or not np.isfinite(x) else format(x, spec)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=3000, help="draws per timed run with sweeps=1")
    parser.add_argument("--bgm-draws", type=int, default=200, help="draws of BinaryGibbsMetropolis")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per sampler (fastest kept)")
    parser.add_argument("--quick", action="store_true", help="mnist_h500 (or the first model) and 100x50 only")
    parser.add_argument("--batch", type=int, default=100, help="chains of the batch table (0: no batch table)")
    parser.add_argument("--batch-draws", type=int, default=200, help="draws per timed run of the batch table")
    parser.add_argument("--batch-only", action="store_true", help="the batch table alone")
    args = parser.parse_args()
    logging.getLogger("pymc").setLevel(logging.ERROR)
    if args.batch_only:
        batch_table(args.batch or 100, args.batch_draws, args.repeats)
        return

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
                    draws = args.draws if sweeps == 1 else max(args.draws // 2, 100)  # long enough to time
                    us, _ = run_sampler(
                        rbm_model(params), lambda c=cls, s=sweeps: c(sweeps=s), draws, 50, args.repeats, start
                    )
                    results[(name, sweeps)] = us
            bgm_draws = args.bgm_draws if big else 5 * args.bgm_draws
            us_bgm = 1e6 * bgm_seconds_per_draw(potential_model(params), start, bgm_draws)
            us_idle, _ = run_sampler(
                rbm_model(params), lambda: IdleStep(pm.modelcontext(None).value_vars), args.draws, 50,
                args.repeats, start,
            )
            floor = min(floor, floor_us(params))  # the floor again, after the runs: keep the fastest
            rows.append((label, floor, draws_floor, results, us_bgm, us_idle))

    print()
    print("µs per draw through pm.sample (1 chain, 1 BLAS thread); floor = v·W + h·Wᵀ, same run;")
    print("ratio = µs per sweep / floor; +draws = floor plus one uniform and one exp per unit (what a sweep")
    print("that may change every unit cannot avoid), ratio+ = µs per sweep / that.")
    print("ESS per second (against BinaryGibbsMetropolis too) needs far longer runs: benchmarks/ess_vs_bgm.py")
    header = f"{'model':32s} {'sampler':14s} {'sweeps':>6s} {'µs/draw':>9s} {'µs/sweep':>9s} {'floor':>7s} "
    header += f"{'ratio':>6s} {'+draws':>7s} {'ratio+':>6s}"
    print(header)
    print("-" * len(header))
    for label, floor, draws_floor, results, us_bgm, us_idle in rows:
        plus = floor + draws_floor
        for (name, sweeps), us in results.items():
            print(
                f"{label:32s} {name:14s} {sweeps:6d} {us:9.1f} {us / sweeps:9.1f} {floor:7.1f} "
                f"{us / sweeps / floor:6.2f} {plus:7.1f} {us / sweeps / plus:6.2f}"
            )
        print(
            f"{label:32s} {'BinaryGibbsM.':14s} {1:6d} {us_bgm:9.0f} {us_bgm:9.0f} {floor:7.1f} "
            f"{us_bgm / floor:6.0f} {plus:7.1f} {us_bgm / plus:6.0f}"
        )
        print(
            f"{label:32s} {'(idle step)':14s} {1:6d} {us_idle:9.1f} {us_idle:9.1f} {floor:7.1f} "
            f"{us_idle / floor:6.2f}   <- pm.sample's own cost per draw, paid by every step method"
        )
    if args.batch:
        batch_table(args.batch, args.batch_draws, args.repeats)

if __name__ == "__main__":
    main()

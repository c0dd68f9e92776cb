"""Metropolis-Hastings on a 2-D Gaussian with PyMC's own Metropolis: Gaussian against uniform proposals.

The first study of Zhang (2016), "Markov chain Monte Carlo method and
application" (course report, Tsinghua University), section 1, done the PyMC
way. The target is

    N((5, 10), [[1, 1], [1, 4]]),  correlation ρ = 0.5,

a ``pm.MvNormal`` sampled by ``pm.Metropolis`` with a Gaussian proposal
(``pm.step_methods.NormalProposal``) and with a uniform one
(``pm.step_methods.UniformProposal``). Each run starts at (0, 0), five
standard deviations from the mean in both coordinates; its ``--tune`` draws
are the burn-in and are discarded (PyMC also adapts the proposal's scale
during them); the ``--draws`` draws after it are kept. The report's measure of
accuracy is the relative error of the sample correlation, ``(r - 0.5) / 0.5``,
over repeated runs.

What the report found (section 1.7 and 1.8): with about 10 000 accepted points
per run, the correlation within about 1 % relative error over repeated runs
and about 10 s per run in MATLAB; a uniform proposal took 7-9 s per run, about
a third less time, with a larger relative error than the Gaussian one. It puts
the time difference down to where its MATLAB code drew the random numbers, not
to the proposal's shape.

What is done here, and how it differs from the report:

- "Points per run" is the number of draws kept after burn-in (``--draws``,
  10 000 by default). A rejected proposal repeats the current point, which is
  still a point of the chain; the table also gives the share of draws in which
  the point moved.
- PyMC's ``Metropolis`` updates the coordinates of a vector variable one at a
  time, in random order, each with its own one-dimensional draw of the
  proposal (Metropolis within Gibbs); the report proposes both coordinates at
  once. Both are Metropolis with symmetric proposals, so both leave the
  Gaussian invariant.
- Both proposals start with the same standard deviation in each coordinate,
  the target's marginal standard deviation (``S = (1, 2)`` for the Gaussian,
  ``√3·(1, 2)`` for the uniform, whose draws on ``[-S, S]`` have standard
  deviation ``S/√3``); PyMC's tuning then scales them by the ``scale`` column.
  Tuned scales differ between the proposals, so ``--scale X`` fixes both at
  ``X`` (no tuning) to compare the two shapes at the same step size.
- Time per run is PyMC's ``sampling_time`` (tune and draws, without building
  the step, which is compiled once per proposal and reused by every run), on
  this machine, not the report's.

ArviZ's ESS says why the proposals differ. Besides the bulk ESS of the two
coordinates, the script computes the ESS of the sample correlation itself, as
the ESS (method ``"mean"``) of its influence function
``ψ = z1·z2 - ρ (z1² + z2²) / 2`` (``z`` the standardized coordinates). The
relative error of ``r`` then has standard deviation about
``sd(ψ) / (ρ √ESS_ψ)``, which is ``1.5 / √ESS_ψ`` for independent draws of
this Gaussian (1.5 % for 10 000 of them): the column "sd from ESS" predicts the
spread over runs from a single run's ESS, and a proposal with the larger ESS
per second gives the smaller error in the same time.

Prints two tables (accuracy, efficiency) and the report's figures beside them;
writes nothing::

    ./dev python examples/mh_gaussian.py                      # 50 runs of 10 000 draws, about a minute
    ./dev python examples/mh_gaussian.py --runs 20 --seed 7   # other runs
    ./dev python examples/mh_gaussian.py --scale 1.8          # same fixed step size for both
    ./dev python examples/mh_gaussian.py --short              # 3 runs of 2000 draws (the test)
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import time
from typing import NamedTuple

import arviz as az
import numpy as np
import pymc as pm

MEAN = np.array([5.0, 10.0])
COV = np.array([[1.0, 1.0], [1.0, 4.0]])
SD = np.sqrt(np.diag(COV))
RHO = COV[0, 1] / (SD[0] * SD[1])
START = np.zeros(2)

# proposal name -> (PyMC proposal, S giving a per-coordinate standard deviation equal to SD)
PROPOSALS = {
    "Gaussian": (pm.step_methods.NormalProposal, SD),
    "uniform": (pm.step_methods.UniformProposal, np.sqrt(3.0) * SD),
}

# Zhang (2016), sections 1.7 and 1.8 (MATLAB, 2016 hardware)
REPORT = {
    "Gaussian": {"error": "within ~1 %", "time": "~10 s"},
    "uniform": {"error": "larger than Gaussian", "time": "7-9 s"},
}


class Run(NamedTuple):
    """What one run of one proposal measured.

    Attributes
    ----------
    rel_error : float
        ``(r - ρ) / ρ`` for the sample correlation ``r`` of the kept draws.
    accept : float
        Share of coordinate updates accepted.
    moved : float
        Share of kept draws in which the point moved (at least one coordinate accepted).
    scale : float
        PyMC's tuned scaling of the proposal at the end of the run.
    ess : ndarray of shape (2,)
        ArviZ bulk ESS of the two coordinates.
    ess_corr : float
        ArviZ ESS (method ``"mean"``) of the influence function of the correlation.
    var_psi : float
        Sample variance of that influence function.
    seconds : float
        PyMC's ``sampling_time`` (tune and draws).
    """

    rel_error: float
    accept: float
    moved: float
    scale: float
    ess: np.ndarray
    ess_corr: float
    var_psi: float
    seconds: float


def correlation_influence(x: np.ndarray) -> np.ndarray:
    """Influence function of the sample correlation at the known target.

    Parameters
    ----------
    x : ndarray of shape (n_draws, 2)
        Draws of the chain.

    Returns
    -------
    ndarray of shape (n_draws,)
        ``ψ = z1·z2 - ρ (z1² + z2²) / 2`` with ``z = (x - mean) / sd``; to first
        order ``r - ρ`` is the mean of ψ over the draws.
    """
    z = (x - MEAN) / SD
    return z[:, 0] * z[:, 1] - RHO * (z[:, 0] ** 2 + z[:, 1] ** 2) / 2


def one_run(step: pm.Metropolis, model: pm.Model, *, draws: int, tune: int, seed: int) -> Run:
    """Sample one chain and measure it.

    Parameters
    ----------
    step : pymc.Metropolis
        The step, built once in ``model``; ``pm.sample`` resets its tuning for each run.
    model : pymc.Model
        The 2-D Gaussian model with the variable ``x``.
    draws, tune : int
        Draws kept, and burn-in draws discarded (PyMC's tuning).
    seed : int
        Random seed of the run.

    Returns
    -------
    Run
    """
    with model:
        idata = pm.sample(
            draws=draws,
            tune=tune,
            step=step,
            chains=1,
            cores=1,
            random_seed=seed,
            initvals={"x": START},
            progressbar=False,
            compute_convergence_checks=False,
        )
    x = idata.posterior["x"].values[0]  # (draws, 2)
    accepted = idata.sample_stats["accepted"].values[0]  # share of the two coordinate updates accepted
    psi = correlation_influence(x)
    r = np.corrcoef(x.T)[0, 1]
    return Run(
        rel_error=float((r - RHO) / RHO),
        accept=float(accepted.mean()),
        moved=float((accepted > 0).mean()),
        scale=float(idata.sample_stats["scaling"].values[0, -1]),
        ess=np.asarray(az.ess(idata, var_names="x")["x"]),
        ess_corr=float(az.ess(psi[None, :], method="mean")),
        var_psi=float(psi.var()),
        seconds=float(idata.posterior.attrs["sampling_time"]),
    )


def study(
    *, runs: int, draws: int, tune: int, seed: int, scale: float | None = None
) -> tuple[dict[str, list[Run]], dict[str, float]]:
    """Run every proposal ``runs`` times; run ``i`` of each proposal uses seed ``seed + i``.

    Parameters
    ----------
    runs, draws, tune, seed : int
        Runs per proposal, draws kept per run, burn-in draws per run, first seed.
    scale : float, optional
        Fixed scaling of both proposals (their per-coordinate standard deviation
        in units of the target's marginal one). None (default): PyMC's tuning
        adapts it during the burn-in.

    Returns
    -------
    results : dict of str to list of Run
        Per proposal, one entry per run.
    build_seconds : dict of str to float
        Per proposal, the time to build (compile) the step.
    """
    results, build_seconds = {}, {}
    with pm.Model() as model:
        x = pm.MvNormal("x", mu=MEAN, cov=COV)
    for name, (proposal, S) in PROPOSALS.items():
        t0 = time.perf_counter()
        with model:
            if scale is None:
                step = pm.Metropolis([x], S=S, proposal_dist=proposal)
            else:  # PyMC tunes every tune_interval draws during the burn-in: never, with this interval
                step = pm.Metropolis([x], S=S, proposal_dist=proposal, scaling=scale, tune_interval=tune + draws + 1)
        build_seconds[name] = time.perf_counter() - t0
        results[name] = [one_run(step, model, draws=draws, tune=tune, seed=seed + i) for i in range(runs)]
    return results, build_seconds


def print_tables(
    results: dict[str, list[Run]],
    build_seconds: dict[str, float],
    *,
    draws: int,
    tune: int,
    scale: float | None = None,
) -> None:
    """Print the accuracy and efficiency tables and what ESS says about them."""
    runs = len(next(iter(results.values())))
    scaling = "scale tuned by PyMC" if scale is None else f"scale fixed at {scale} (no tuning)"
    print(f"2-D Gaussian, mean (5, 10), covariance [[1, 1], [1, 4]], ρ = {RHO}; pm.Metropolis, {scaling}")
    print(f"{runs} runs per proposal, {tune} burn-in draws discarded, {draws} draws kept, start (0, 0)")
    print()
    print("Relative error of the correlation, (r - 0.5) / 0.5, over runs")
    print(
        f"{'proposal':<9} {'runs':>4} {'mean':>8} {'± se':>7} {'sd':>7} {'max |e|':>8} "
        f"{'≤1 %':>5} {'sd from ESS':>11} | Zhang (2016)"
    )
    for name, rs in results.items():
        e = np.array([r.rel_error for r in rs])
        sd = e.std(ddof=1) if len(e) > 1 else float("nan")
        predicted = np.sqrt(np.mean([r.var_psi / r.ess_corr for r in rs])) / RHO
        print(
            f"{name:<9} {len(e):>4} {e.mean():>+8.2%} {sd / np.sqrt(len(e)):>7.2%} {sd:>7.2%} "
            f"{np.abs(e).max():>8.2%} {np.mean(np.abs(e) <= 0.01):>5.0%} {predicted:>11.2%} | "
            f"{REPORT[name]['error']}"
        )
    print()
    print("Efficiency per run (means over runs; ESS: ArviZ bulk ESS of x1, x2; ESS r: of the correlation)")
    print(
        f"{'proposal':<9} {'accept':>6} {'moved':>6} {'scale':>6} {'ESS x1':>7} {'ESS x2':>7} {'ESS r':>7} "
        f"{'s/run':>6} {'ESS/s x1':>9} {'ESS/s x2':>9} | Zhang (2016) s/run"
    )
    for name, rs in results.items():
        ess = np.mean([r.ess for r in rs], axis=0)
        ess_per_s = np.mean([r.ess / r.seconds for r in rs], axis=0)
        print(
            f"{name:<9} {np.mean([r.accept for r in rs]):>6.3f} {np.mean([r.moved for r in rs]):>6.3f} "
            f"{np.mean([r.scale for r in rs]):>6.2f} {ess[0]:>7.0f} {ess[1]:>7.0f} "
            f"{np.mean([r.ess_corr for r in rs]):>7.0f} {np.mean([r.seconds for r in rs]):>6.2f} "
            f"{ess_per_s[0]:>9.0f} {ess_per_s[1]:>9.0f} | {REPORT[name]['time']}"
        )
    print()
    gauss, unif = results["Gaussian"], results["uniform"]
    ratio_ess = np.mean([r.ess_corr for r in unif]) / np.mean([r.ess_corr for r in gauss])
    sd_g = np.std([r.rel_error for r in gauss], ddof=1) if runs > 1 else float("nan")
    sd_u = np.std([r.rel_error for r in unif], ddof=1) if runs > 1 else float("nan")
    print(
        f"ESS of r, uniform / Gaussian: {ratio_ess:.2f}, so the sd of the error should scale by "
        f"{1 / np.sqrt(ratio_ess):.2f}; over these runs it scaled by {sd_u / sd_g:.2f}."
    )
    print(
        f"One run's error has sd {sd_g:.2%} (Gaussian) and {sd_u:.2%} (uniform), the mean over {runs} runs "
        f"{sd_g / np.sqrt(runs):.2%} and {sd_u / np.sqrt(runs):.2%}; {draws} independent draws would give "
        f"{(1 - RHO**2) / RHO / np.sqrt(draws):.2%}."
    )
    print(
        "Steps built (compiled) once per proposal, not counted in s/run: "
        + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in build_seconds.items())
    )


@contextlib.contextmanager
def _quiet_pymc():
    logger = logging.getLogger("pymc")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def main(argv: list[str] | None = None) -> dict[str, list[Run]]:
    """Parse the arguments, run the study and print its tables.

    Parameters
    ----------
    argv : list of str, optional
        Command-line arguments; ``sys.argv[1:]`` when None.

    Returns
    -------
    dict of str to list of Run
        Per proposal, the measurements of every run.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50, help="runs per proposal (default 50)")
    parser.add_argument("--draws", type=int, default=10_000, help="draws kept per run (default 10000)")
    parser.add_argument("--tune", type=int, default=1000, help="burn-in draws discarded per run (default 1000)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the first run (default 1)")
    parser.add_argument("--scale", type=float, default=None, help="fix both proposals' scaling (default: tuned)")
    parser.add_argument("--short", action="store_true", help="3 runs of 2000 draws after 500 burn-in (for the test)")
    args = parser.parse_args(argv)
    if args.short:
        args.runs, args.draws, args.tune = 3, 2000, 500
    with _quiet_pymc():
        results, build_seconds = study(
            runs=args.runs, draws=args.draws, tune=args.tune, seed=args.seed, scale=args.scale
        )
    print_tables(results, build_seconds, draws=args.draws, tune=args.tune, scale=args.scale)
    return results


if __name__ == "__main__":
    main()

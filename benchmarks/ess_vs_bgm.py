"""ESS of the free energy per second: FlipTheState and BlockGibbs against PyMC's ``BinaryGibbsMetropolis``.

The sampler-speed benchmark times ``BinaryGibbsMetropolis`` (BGM) for a
couple of hundred draws. On ``mnist_h500`` that is far shorter than the
autocorrelation time of ``F(v)``, so its ESS (and the ratio built on it) is
noise. A run long enough to measure BGM's τ would take hours (one draw calls
the compiled model logp ~630 times, ~60 ms). This script splits the two
factors of BGM's ESS per second, ``ESS/s = 1 / (τ_draws · seconds per draw)``:

1. **seconds per draw** of the real ``pm.BinaryGibbsMetropolis``, calling
   its ``step`` as ``pm.sample`` calls it, after a warm-up draw, over
   ``--bgm-draws`` draws, on the very same distribution in two forms: the
   ``pymc_rbm.RBM`` variable with its log Z given (logp ``-F(v)`` plus a
   constant) and Bernoulli(1/2) units with ``-F(v)`` as a Potential; the
   faster form is kept, to be fair to BGM;
2. **τ in draws** of the *same Markov chain* run by a compiled reference
   implementation of BGM's ``astep`` (PyMC 6.4, ``step_methods/metropolis.py``):
   every draw shuffles the unit order, and for each unit in that order with
   probability ``transit_p = 0.8`` proposes its flip and accepts it with
   ``min(1, p(v') / p(v))``. The reference keeps ``hbias + v·W`` and updates
   it by the accepted flips, ~1000x faster than the original, so it can run
   ``--ref-draws`` draws per chain.

That the reference and BGM are one chain is checked, exactly, on a
4-visible RBM: the transition matrix of that kernel (the average over unit
orders of the product of the single-unit Metropolis matrices) leaves
``p(v)`` invariant, and the observed transitions of the real BGM and of the
reference both pass a chi-square test against its rows.

Our samplers run through ``pm.sample`` for ``--draws`` draws on each of
``--chains`` chains from a burnt-in state; ESS of ``F(v)`` via ArviZ
(:func:`pymc_rbm.diagnostics.ess_free_energy`) over the sampling time.
Everything on one BLAS thread, ratios from this run. Run from the repository
root::

    python benchmarks/ess_vs_bgm.py [--quick] [--draws 20000] [--ref-draws 20000] [--chains 4]
"""

from __future__ import annotations

import argparse
import gc
import itertools
import logging
import time

import scipy.linalg  # noqa: F401  (numba's np.dot uses SciPy's BLAS: load it before limiting threads)
from threadpoolctl import threadpool_limits

import numba
import numpy as np
import pymc as pm
from scipy.special import logsumexp

from pymc_rbm import RBM, BlockGibbs, FlipTheState, RBMParams
from pymc_rbm.diagnostics import ess_free_energy, integrated_autocorr_time
from pymc_rbm.energy import free_energy
from pymc_rbm.estimators import binary_states, log_marginal_visible
from pymc_rbm.testing import assert_stationary, frequency_check, state_index

from sampler_speed import SHARED_MODELS, bgm_seconds_per_draw, burnt_in, potential_model

TRANSIT_P = 0.8  # BinaryGibbsMetropolis's default


@numba.njit(cache=True)
def _softplus(x):
    return max(x, 0.0) + np.log1p(np.exp(-abs(x)))


@numba.njit(cache=True)
def bgm_reference(rng, v, W, vbias, hbias, n_draws, transit_p):  # pragma: no cover - compiled
    """``n_draws`` draws of BinaryGibbsMetropolis's kernel on ``p(v) ∝ exp(-F(v))``, from ``v`` (modified).

    Returns the free energy of each draw, shape (n_draws,).
    """
    n, m = W.shape
    a = hbias + v @ W
    out = np.empty(n_draws)
    order = np.arange(n)
    for t in range(n_draws):
        for i in range(n - 1, 0, -1):  # Fisher-Yates, as rng.shuffle(order)
            j = rng.integers(0, i + 1)
            order[i], order[j] = order[j], order[i]
        for idx in order:
            if rng.random() < transit_p:
                s = 1.0 - 2.0 * v[idx]  # +1 switches the unit on, -1 off
                log_ratio = s * vbias[idx]
                for j in range(m):
                    log_ratio += _softplus(a[j] + s * W[idx, j]) - _softplus(a[j])
                if np.log(rng.random()) < log_ratio:  # pymc's metrop_select
                    v[idx] += s
                    for j in range(m):
                        a[j] += s * W[idx, j]
        f = -(v @ vbias)
        for j in range(m):
            f -= _softplus(a[j])
        out[t] = f
    return out


def bgm_matrix(params: RBMParams) -> np.ndarray:
    """Exact transition matrix of BGM's kernel over the visible states (rows: from, columns: to)."""
    n = params.n_visible
    states = binary_states(n)
    log_p = log_marginal_visible(params)
    singles = []
    for i in range(n):
        K = np.zeros((2**n, 2**n))
        flipped = states.copy()
        flipped[:, i] = 1 - flipped[:, i]
        to = state_index(flipped)
        accept = np.exp(np.minimum(0.0, log_p[to] - log_p))
        K[np.arange(2**n), to] = TRANSIT_P * accept
        K[np.arange(2**n), np.arange(2**n)] += 1.0 - TRANSIT_P * accept
        singles.append(K)
    T = np.zeros((2**n, 2**n))
    orders = list(itertools.permutations(range(n)))
    for order in orders:
        P = np.eye(2**n)
        for i in order:
            P = P @ singles[i]
        T += P / len(orders)
    return T


def transition_counts_of(path: np.ndarray, n_states: int) -> np.ndarray:
    idx = state_index(path)
    counts = np.zeros((n_states, n_states))
    np.add.at(counts, (idx[:-1], idx[1:]), 1)
    return counts


def check_reference(n_draws: int = 20000) -> list[tuple[str, float]]:
    """Exact check that the reference kernel and the real BGM are the same chain (p-values)."""
    params = RBMParams.random(4, 3, scale=1.5, rng=5)
    T = bgm_matrix(params)
    p = np.exp(log_marginal_visible(params) - logsumexp(log_marginal_visible(params)))
    assert_stationary(p, T)
    with _model(params):
        idata = pm.sample(
            draws=n_draws, tune=0, chains=1, cores=1, random_seed=3, progressbar=False,
            step=pm.BinaryGibbsMetropolis(pm.modelcontext(None).value_vars), compute_convergence_checks=False,
            quiet=True,
        )
    path_bgm = idata.posterior["v"].values[0]
    rng = np.random.default_rng(4)
    v = np.zeros(params.n_visible)
    path_ref = np.empty((n_draws, params.n_visible))
    for t in range(n_draws):  # one draw at a time, recording the visible path
        bgm_reference(rng, v, params.W, params.vbias, params.hbias, 1, TRANSIT_P)
        path_ref[t] = v
    out = []
    for name, path in (("pm.BinaryGibbsMetropolis", path_bgm), ("compiled reference", path_ref)):
        check = frequency_check(transition_counts_of(path, 2**params.n_visible), T)
        out.append((name, check.p_value))
    return out


def _model(params: RBMParams, log_z: float = 0.0):
    """The RBM variable alone, log Z given (a constant): logp = -F(v) - log Z."""
    with pm.Model() as model:
        RBM("v", params.W, params.vbias, params.hbias, log_partition=log_z)
    return model


def run_ours(params, cls, draws, chains, start, seed=1):
    with _model(params):
        idata = pm.sample(
            draws=draws, tune=100, chains=chains, cores=1, step=cls(), random_seed=seed, initvals={"v": start},
            progressbar=False, compute_convergence_checks=False, quiet=True,
        )
    return idata


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=20000, help="draws per chain of our samplers")
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--ref-draws", type=int, default=20000, help="draws per chain of the BGM reference")
    parser.add_argument("--bgm-draws", type=int, default=30, help="draws of the real BGM, for its time per draw")
    parser.add_argument("--quick", action="store_true", help="short runs (numbers not reliable)")
    args = parser.parse_args()
    if args.quick:
        args.draws, args.ref_draws, args.bgm_draws, args.chains = 3000, 600, 5, 2
    logging.getLogger("pymc").setLevel(logging.ERROR)

    with threadpool_limits(1):
        path = SHARED_MODELS / "mnist_h500.npz"
        label, params = ("mnist_h500", RBMParams.load(path)) if path.exists() else (
            "random 784x500", RBMParams.random(784, 500, scale=1.0, rng=0))
        start = burnt_in(params)

        rows = []
        for name, cls in (("FlipTheState", FlipTheState), ("BlockGibbs", BlockGibbs)):
            print(f"... {name}: {args.chains} x {args.draws} draws", flush=True)
            idata = None
            gc.collect()  # a previous run's objects would make the collector's passes part of this run's time
            idata = run_ours(params, cls, args.draws, args.chains, start)
            seconds = idata.posterior.attrs["sampling_time"]
            tau = float(integrated_autocorr_time(idata))
            ess = ess_free_energy(idata)
            rows.append((name, tau, seconds / (args.chains * (args.draws + 100)), ess / seconds))

        print(f"... pm.BinaryGibbsMetropolis: {args.bgm_draws} draws for its time per draw", flush=True)
        s_bgm = {form: bgm_seconds_per_draw(model, start, args.bgm_draws) for form, model in (
            ("RBM variable", _model(params)), ("Bernoulli + Potential", potential_model(params)))}

        # After the timed runs: its 20000 draws of pm.sample leave enough live objects to slow a later
        # pm.sample run through the garbage collector (FlipTheState ran 3x slower after it).
        print("... checking that the reference kernel is BinaryGibbsMetropolis's chain (4-visible RBM)", flush=True)
        checks = check_reference(4000 if args.quick else 20000)
        print(f"... BGM reference: {args.chains} x {args.ref_draws} draws for tau", flush=True)
        rng = np.random.default_rng(7)
        series = []
        t0 = time.perf_counter()
        for _ in range(args.chains):
            v = start.astype(np.float64).copy()
            series.append(bgm_reference(rng, v, params.W, params.vbias, params.hbias, args.ref_draws, TRANSIT_P))
        s_ref = (time.perf_counter() - t0) / (args.chains * args.ref_draws)
        f = np.array(series)
        # the reference's last state must still have the free energy it reports
        assert abs(free_energy(v[None], params)[0] - f[-1, -1]) < 1e-6 * abs(f[-1, -1])
        tau_bgm = float(integrated_autocorr_time(f))
        fastest = min(s_bgm.values())
        ess_s_bgm = 1.0 / (tau_bgm * fastest)
        rows.append(("BinaryGibbsMetropolis", tau_bgm, fastest, ess_s_bgm))

    print()
    print("Reference check: chi-square of observed transitions against the exact BGM matrix (p T = p holds)")
    for name, p_value in checks:
        print(f"  {name:28s} p = {p_value:.3f}")
    print()
    print(f"{label}: tau and ESS of F(v) per second, one chain at a time, 1 BLAS thread")
    print("BGM: time per draw of pm.BinaryGibbsMetropolis (the faster model form: "
          + ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in s_bgm.items()) + "),")
    print(f"     tau of the same chain from the compiled reference (itself {s_ref * 1e3:.2f} ms per draw)")
    header = f"{'sampler':24s} {'tau (draws)':>12s} {'ms/draw':>9s} {'ESS/s':>10s} {'vs BGM':>9s}"
    print(header)
    print("-" * len(header))
    for name, tau, s, ess_s in rows:
        print(f"{name:24s} {tau:12.1f} {s * 1e3:9.3f} {ess_s:10.3f} {ess_s / ess_s_bgm:8.0f}x")
    n_tau = min(args.draws / rows[0][1], args.ref_draws / tau_bgm)
    print(f"\nshortest run in units of tau: {n_tau:.0f} (ESS estimates need >= 50)")


if __name__ == "__main__":
    main()

"""RTS round by round: is its update or are its draws behind the drift on large models?

On mnist_h500 the per-round estimates of :func:`pymc_rbm.estimators.rts` climb
past the AIS reference. This script runs RTS for ``--rounds`` rounds and prints,
for every round:

- ``RTS``: the round's own estimate, ``log Ẑ_K + log ĉ_K - log ĉ_1`` (the
  fixed-point update of Carlson et al.);
- ``MBAR``: the same round's draws re-estimated by the multistate Bennett
  acceptance ratio (Shirts & Chodera 2008; Tan's global histogram analysis),
  which solves the self-consistent equations
  ``Z_k = Σ_t f_k(x_t) / Σ_j N_j f_j(x_t) / Z_j`` with the *observed* number
  of draws ``N_j`` at each rung. It needs only that the draws at a rung come
  from that rung's distribution, not that the chains visit the rungs in the
  proportions the guesses ``Ẑ`` imply, so it separates the two possible
  causes: where MBAR agrees with RTS, the update is not at fault and the
  draws are;
- the share of the round's draws at the top rung and at the least visited
  rung, in units of the uniform share ``1/K``.

A round's draws are thinned by ``--thin`` for MBAR. ``--reference`` is the
AIS reference of ``benchmarks/reference_log_partition.json`` where present.

Run from the repository root (mnist_h500: about 40 s per round of 1000
sweeps on one core)::

    /tmp/venv/bin/python benchmarks/rts_rounds.py --model mnist_h500 --rounds 8
    /tmp/venv/bin/python benchmarks/rts_rounds.py --model mnist_h500 --rounds 8 --operator flip --seed 1
    /tmp/venv/bin/python benchmarks/rts_rounds.py --model mnist_h20 --rounds 4      # exact: 221.0668
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.optimize import minimize
from scipy.special import logsumexp

from pymc_rbm import RBMParams
from pymc_rbm.datasets import load_mnist
from pymc_rbm.estimators import PathOptions, RTSRounds, rts

HERE = Path(__file__).resolve().parent
SHARED_DATA = HERE.parent.parent / "shared" / "data"
EXACT = {"mnist_h10": 226.1132, "mnist_h20": 221.0668}


def mbar_log_z(log_f: np.ndarray, labels: np.ndarray, log_z_first: float) -> np.ndarray:
    """MBAR estimates of ``log Z_k`` of every rung from pooled draws.

    Minimises the convex function
    ``(1/n) Σ_t logsumexp_j(log N_j + log f_j(x_t) - z_j) + Σ_j (N_j / n) z_j``
    over ``z`` with ``z_1`` fixed; its stationary point is the MBAR solution.

    Parameters
    ----------
    log_f : ndarray of shape (n, K)
        ``log f_k(x_t)`` of every draw at every rung.
    labels : ndarray of int of shape (n,)
        The rung each draw was made at.
    log_z_first : float
        The known ``log Z`` of rung 0.

    Returns
    -------
    ndarray of shape (K,)
    """
    n, K = log_f.shape
    counts = np.bincount(labels, minlength=K).astype(np.float64)
    seen = counts > 0
    log_n = np.log(np.where(seen, counts, 1.0))

    def objective(z_rest):
        z = np.concatenate([[log_z_first], z_rest])
        s = log_n[seen] + log_f[:, seen] - z[seen]
        norm = logsumexp(s, axis=1)
        grad = np.zeros(K)
        grad[seen] = (counts[seen] - np.exp(s - norm[:, None]).sum(axis=0)) / n
        return norm.mean() + (counts[seen] * z[seen]).sum() / n, grad[1:]

    start = logsumexp(log_f - log_f[:, :1], axis=0) - np.log(n) + log_z_first  # importance sampling from all draws
    res = minimize(objective, start[1:], jac=True, method="L-BFGS-B", options={"maxiter": 2000, "gtol": 1e-10})
    return np.concatenate([[log_z_first], res.x])


def reference(name: str) -> float | None:
    if name in EXACT:
        return EXACT[name]
    path = HERE / "reference_log_partition.json"
    rec = json.loads(path.read_text())["models"].get(name) if path.exists() else None
    return None if rec is None else float(rec["log_z"])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="mnist_h500")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--sweeps", type=int, default=None, help="sweeps per round (default: rts's)")
    ap.add_argument("--sweeps-per-move", type=int, default=None, help="sweeps between draws of β (default: rts's)")
    ap.add_argument("--operator", default="gibbs")
    ap.add_argument("--thin", type=int, default=5, help="keep every thin-th draw of β for MBAR")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    params = RBMParams.load(SHARED_DATA / "rbm_models" / f"{args.model}.npz")
    train = load_mnist(SHARED_DATA / "mnist" / "binarized_mnist_packed.npz", split="train").images
    draws = [([], []) for _ in range(args.rounds)]

    seen = [0] * args.rounds

    def keep(r, t, k_swept, log_f):
        seen[r] += 1
        if seen[r] % args.thin == 0:
            draws[r][0].append(log_f.copy())
            draws[r][1].append(k_swept.copy())

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the rounds' disagreement is what is measured here
        est = rts(
            params, data=train, n_sweeps=args.sweeps, sweeps_per_move=args.sweeps_per_move,
            rounds=RTSRounds(n_rounds=args.rounds), path_options=PathOptions(operator=args.operator),
            rng=args.seed, callback=keep,
        )  # fmt: skip
    seconds = time.perf_counter() - t0
    d = est.diagnostics
    K = len(d["betas"])
    ref = reference(args.model)
    print(
        f"{args.model}, operator {args.operator}, seed {args.seed}: {K} rungs, {d['n_chains']} chains, "
        f"{args.rounds} rounds of {d['n_sweeps']} sweeps ({d['sweeps_per_move']} per draw of β), {seconds:.0f} s; "
        f"start's log Z {d['log_z_init'][-1]:.3f}; "
        f"reference {ref}"
    )
    print(f"{'round':>5} {'RTS':>9} {'MBAR':>9} {'top share':>9} {'min share':>9}")
    for r in range(args.rounds):
        log_f = np.concatenate(draws[r][0])
        labels = np.concatenate(draws[r][1])
        z = mbar_log_z(log_f, labels, d["log_z_base"])
        share = np.bincount(labels, minlength=K) / labels.size * K
        print(f"{r + 1:>5} {d['history'][r]:>9.3f} {z[-1]:>9.3f} {share[-1]:>9.2f} {share.min():>9.2f}")
    print(f"RTS estimate (mean of rounds 2-{args.rounds}): {est.log_z:.3f} ± {est.stderr:.3f}")


if __name__ == "__main__":
    main()

"""Seed 000 Fig. 3 (upper): how often flip-the-state mixes faster than Gibbs on small random RBMs.

Brügge, Fischer & Igel (2013), §4.1: "We calculated the SLEM for transition
matrices of Gibbs sampling and the new transition operator for small,
randomly generated RBMs by solving the eigenvector equation of the resulting
transition matrices G and T. [...] RBMs with only 2, 3, and 4 visible and
hidden neurons, respectively. The weights of these RBMs were drawn randomly
and uniformly from [−c; c], with c ∈ {1, …, 10}, and bias parameters were
set to zero. For each value of c we generated 100 RBMs and compared the
SLEMs of G and T."

``G = G_h G_v`` and ``T = T_h T_v`` are the matrices of one periodic sweep
over the joint state space ``(v, h)`` (``2**(n_visible + n_hidden)`` states,
256 for 4x4), built by :func:`pymc_rbm.testing.transition_matrix`; the SLEM is
:func:`pymc_rbm.testing.slem`. The same random RBM is used for both operators.

Prints, for each ``c`` (rows) and size (columns), the fraction of RBMs whose
SLEM of T is smaller than that of G, the paper's description of its curve,
and the median SLEMs. Run from the repository root::

    python benchmarks/fig3_slem.py [--n-rbms 100] [--seed 0] [--bias-scale 0]
"""

from __future__ import annotations

import argparse
import contextlib
import time

import numpy as np

from pymc_rbm import RBMParams
from pymc_rbm.testing import slem, transition_matrix

PAPER = (
    "Paper, Fig. 3 (upper), no numbers in the text: 'If all the weights are equal to zero, Gibbs sampling is\n"
    "always better, but the higher the weights get the more often T has a better mixing rate. This effect is\n"
    "the more pronounced the more neurons the RBM has' -- fractions rise with c from near 0 towards 1, the\n"
    "4x4 curve above the 3x3 curve above the 2x2 curve."
)


def _single_threaded():
    """Run LAPACK on one thread: many small eigenproblems are much slower with thread contention."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - optional
        return contextlib.nullcontext()
    return threadpool_limits(1)


def run(sizes, scales, n_rbms: int, seed: int, bias_scale: float):
    """SLEMs of G and T for ``n_rbms`` random RBMs per (size, c).

    Returns a dict ``(size, c) -> (slem_gibbs, slem_flip)``, arrays of shape (n_rbms,).
    """
    rng = np.random.default_rng(seed)
    out = {}
    for n in sizes:
        for c in scales:
            g, t = np.empty(n_rbms), np.empty(n_rbms)
            for k in range(n_rbms):
                params = RBMParams.random(n, n, scale=c, bias_scale=bias_scale * c, rng=rng)
                g[k] = slem(transition_matrix(params, "gibbs"))
                t[k] = slem(transition_matrix(params, "flip"))
            out[n, c] = (g, t)
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n-rbms", type=int, default=100, help="random RBMs per size and c (paper: 100)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random RBMs")
    parser.add_argument("--c-max", type=int, default=10, help="largest weight bound c (paper: 10)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[2, 3, 4], help="n for n x n RBMs (paper: 2 3 4)")
    parser.add_argument(
        "--bias-scale",
        type=float,
        default=0.0,
        help="biases uniform on [-bias_scale*c, bias_scale*c]; the paper sets them to zero (default 0)",
    )
    args = parser.parse_args(argv)
    scales = list(range(1, args.c_max + 1))

    start = time.perf_counter()
    with _single_threaded():
        res = run(args.sizes, scales, args.n_rbms, args.seed, args.bias_scale)
    elapsed = time.perf_counter() - start

    labels = [f"{n}x{n}" for n in args.sizes]
    bias = "biases = 0" if args.bias_scale == 0 else f"biases ~ U[-{args.bias_scale:g}c, {args.bias_scale:g}c]"
    print(f"Seed 000 Fig. 3 (upper): fraction of {args.n_rbms} random RBMs with SLEM(T) < SLEM(G)")
    print(f"weights ~ U[-c, c], {bias}; joint (v, h) chain, T = T_h T_v, G = G_h G_v; seed {args.seed}")
    print()
    print(f"{'c':>3} " + " ".join(f"{s:>7}" for s in labels))
    for c in scales:
        print(f"{c:>3} " + " ".join(f"{np.mean(res[n, c][1] < res[n, c][0]):7.2f}" for n in args.sizes))
    print()
    print(PAPER)
    print()
    print("median SLEM, Gibbs G / flip-the-state T")
    print(f"{'c':>3} " + " ".join(f"{s:>15}" for s in labels))
    for c in scales:
        cells = [f"{np.median(res[n, c][0]):.3f} / {np.median(res[n, c][1]):.3f}" for n in args.sizes]
        print(f"{c:>3} " + " ".join(f"{x:>15}" for x in cells))
    n_mat = 2 * args.n_rbms * len(scales) * len(args.sizes)
    print()
    print(f"{n_mat} transition matrices and eigenvalue problems in {elapsed:.1f} s")


if __name__ == "__main__":
    main()

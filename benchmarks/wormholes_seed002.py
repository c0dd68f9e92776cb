"""Seed 002 §5 table: accepted inter-mode jumps per iteration of point, optimization and region wormholes.

The paper (Hinton, Welling & Mnih 2003) trains a feed-forward energy network
on 1024 points of two narrow orthogonal ridges (rotated by 45°; the other
``n - 2`` coordinates sharp Gaussians of std 0.02) for ``n`` = 2, 4, 8, 16,
32, then lets every training case run 10 steps of HMC and make one jump
proposal, 25 times, and counts the successful jumps between the modes.

**No trained network here.** The energy is ``E(x) = -log p(x)`` of the
Gaussian-profile two-ridge density (:func:`pymc_rbm.datasets.two_ridges_logpdf`
with ``profile="gaussian"``): the same two ridges as the data (each a Gaussian
with the mean and covariance of its rectangle), smooth, so HMC and the
optimization-based move have a gradient. The data are the paper's uniform
rectangles (:func:`pymc_rbm.datasets.two_ridges`).

Per dimension: chains start at the 1024 data points; HMC (10 leapfrog steps,
step size tuned during ``--warmup`` iterations towards 10 % rejections, as in
the paper) then one jump proposal per chain
(:func:`pymc_rbm.kernels.wormhole_step`), for ``--iterations`` iterations. A
jump between modes is an accepted jump after which the more probable ridge
changed. The run times are those of the jump proposals and their acceptance
(the HMC part is the same for all three), measured in this run, relative to
point wormholes. Region wormholes: a two-component Gaussian mixture fitted by
EM, ``alpha`` the 99 % radius by default (the paper used α = 10 in 2D).

Run from the repository root::

    python benchmarks/wormholes_seed002.py [--dims 2 4 8 16 32] [--iterations 25] [--seed 0]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.special import logsumexp

from pymc_rbm.datasets import two_ridges, two_ridges_logpdf
from pymc_rbm.datasets.ridges import ridge_geometry
from pymc_rbm.kernels import OptimizationWormholes, PointWormholes, RegionWormholes, wormhole_step

NOISE_STD = 0.02
PAPER = {  # dimension: (simple, optimization-based, region) accepted jumps between modes per iteration
    2: (10, 15, 372),
    4: (6, 17, 407),
    8: (3, 19, 397),
    16: (1, 13, 338),
    32: (1, 9, 295),
}
PAPER_TIME = (1.0, 2.6, 1.0)


class RidgeEnergy:
    """``log p`` and its gradient for the Gaussian-profile ridges (defaults of :func:`two_ridges`)."""

    def __init__(self, n_dim: int):
        geometry = ridge_geometry(2.0, 0.1, 1.5, 45.0)
        self.n_dim = n_dim
        self.rotation = geometry.rotation
        self.centres = geometry.centers
        self.sd = geometry.scales / np.sqrt(12.0)  # (2 ridges, 2 axes) in the unrotated plane

    def components(self, x):
        """Per-ridge log densities of the plane part (n, 2) and the plane coordinates' standardized offsets."""
        plane = x[:, :2] @ self.rotation
        z = (plane[:, None, :] - self.centres) / self.sd  # (n, 2, 2)
        log_comp = -0.5 * (z**2).sum(-1) - np.log(self.sd).sum(-1) - np.log(2 * np.pi) + np.log(0.5)
        return log_comp, z

    def __call__(self, x):
        log_comp, z = self.components(x)
        log_plane = logsumexp(log_comp, axis=1)
        rest = x[:, 2:] / NOISE_STD
        log_p = log_plane - 0.5 * (rest**2).sum(1) - (self.n_dim - 2) * np.log(NOISE_STD * np.sqrt(2 * np.pi))
        resp = np.exp(log_comp - log_plane[:, None])
        grad = np.empty_like(x)
        grad[:, :2] = (-(resp[..., None] * z / self.sd).sum(1)) @ self.rotation.T
        grad[:, 2:] = -rest / NOISE_STD
        return log_p, grad

    def hessian_diag(self, x):
        """Diagonal of the Hessian of ``E = -log p`` (exact; seed 002 used Becker & LeCun's diagonal)."""
        log_comp, z = self.components(x)
        resp = np.exp(log_comp - logsumexp(log_comp, axis=1, keepdims=True))  # (n, 2)
        g_k = (-z / self.sd) @ self.rotation.T  # (n, 2 ridges, 2): gradient of each ridge's log density
        h_k = -(self.rotation**2) @ (1.0 / self.sd**2).T  # (2 axes, 2 ridges): diagonal of each Hessian
        g = (resp[..., None] * g_k).sum(1)
        out = np.empty_like(x)
        out[:, :2] = -(resp @ h_k.T + (resp[..., None] * g_k**2).sum(1) - g**2)
        out[:, 2:] = 1.0 / NOISE_STD**2
        return out

    def mode(self, x):
        """The more probable ridge of each point (0 or 1)."""
        return np.argmax(self.components(x)[0], axis=1)


def hmc(rng, x, energy: RidgeEnergy, eps: float, n_leapfrog: int = 10):
    """One HMC trajectory per chain (unit mass); returns the new states and the rejection rate."""
    log_p, grad = energy(x)
    p = rng.standard_normal(x.shape)
    h0 = -log_p + 0.5 * (p**2).sum(1)
    q = x.copy()
    p = p + 0.5 * eps * grad
    for i in range(n_leapfrog):
        q = q + eps * p
        lp, g = energy(q)
        if i < n_leapfrog - 1:
            p = p + eps * g
    p = p + 0.5 * eps * g
    h1 = -lp + 0.5 * (p**2).sum(1)
    with np.errstate(invalid="ignore", over="ignore"):
        accept = np.log(rng.random(x.shape[0])) < h0 - h1
    return np.where(accept[:, None], q, x), 1.0 - accept.mean()


def run_dimension(n_dim: int, args) -> dict:
    rng = np.random.default_rng(args.seed + n_dim)
    data = two_ridges(1024, n_dim, noise_std=NOISE_STD, rng=rng)
    energy = RidgeEnergy(n_dim)
    sample = data[:5]
    assert np.allclose(energy(sample)[0], two_ridges_logpdf(sample, n_dim, noise_std=NOISE_STD, profile="gaussian"))

    t = time.perf_counter()
    region = RegionWormholes.fit(data, 2, binary=False, rng=args.seed, alpha=args.alpha)
    fit_time = time.perf_counter() - t
    moves = {
        "point": PointWormholes(data, binary=False),
        "optimization": OptimizationWormholes(data, energy, hessian_diag=energy.hessian_diag),
        "region": region,
    }

    # tune the HMC step size towards 10 % rejections
    x, eps = data.copy(), 0.01
    for _ in range(args.warmup):
        x, rejected = hmc(rng, x, energy, eps)
        eps *= 0.9 if rejected > 0.1 else 1.1
    start = x

    out = {"alpha": region.alpha, "fit_time": fit_time}
    for name, move in moves.items():
        x = start.copy()
        step_rng = np.random.default_rng(args.seed)
        jumps, jump_time, total_time = 0, 0.0, 0.0
        for _ in range(args.iterations):
            t0 = time.perf_counter()
            x, _ = hmc(step_rng, x, energy, eps)
            before = energy.mode(x)
            t1 = time.perf_counter()
            x, info = wormhole_step(step_rng, x, lambda y: energy(y)[0], move)
            t2 = time.perf_counter()
            jump_time += t2 - t1
            total_time += t2 - t0
            jumps += int((info.accepted & (energy.mode(x) != before)).sum())
        out[name] = (jumps / args.iterations, jump_time, total_time)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", type=int, nargs="+", default=[2, 4, 8, 16, 32])
    parser.add_argument("--iterations", type=int, default=25)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--alpha", type=float, default=None, help="size of the ellipsoids (default: 99%% radius)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    print(__doc__.split("\n\n")[2].replace("\n", " "))
    print()
    print(f"1024 chains (one per training case), {args.iterations} iterations of 10 HMC steps + one jump proposal.")
    print("Accepted jumps between the modes per iteration; paper's numbers (trained networks) in brackets.\n")
    header = f"{'dim':>4} {'point':>14} {'optimization':>16} {'region':>15} {'alpha':>6}"
    print(header)
    print("-" * len(header))
    times = np.zeros((2, 3))
    for n_dim in args.dims:
        r = run_dimension(n_dim, args)
        paper = PAPER.get(n_dim, ("-", "-", "-"))
        cells = [f"{r[k][0]:7.1f} [{p:>4}]" for k, p in zip(("point", "optimization", "region"), paper)]
        print(f"{n_dim:>4} {cells[0]:>14} {cells[1]:>16} {cells[2]:>15} {r['alpha']:>6.2f}", flush=True)
        times += [[r[k][i] for k in ("point", "optimization", "region")] for i in (2, 1)]
    print("-" * len(header))
    for label, row, what in [("time", times[0], "HMC + jump"), ("jump", times[1], "jump proposals + acceptance only")]:
        rel = row / row[0]
        print(f"{label:>4} {rel[0]:7.2f} [{PAPER_TIME[0]:>4}] {rel[1]:9.2f} [{PAPER_TIME[1]:>4}] "
              f"{rel[2]:8.2f} [{PAPER_TIME[2]:>4}]   ({what}, relative to point, summed over dimensions)")
    print(f"\nabsolute times (HMC + jump / jump only): " + ", ".join(
        f"{k} {a:.2f} s / {b:.2f} s" for k, a, b in zip(("point", "optimization", "region"), *times)))
    print("optimization-based: 20 steepest-descent steps with a backtracking line search, exact diagonal Hessian")
    print("paper's order: region >> optimization > point (in jumps per iteration)")


if __name__ == "__main__":
    main()

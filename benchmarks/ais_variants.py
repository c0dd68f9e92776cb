"""AIS variants on mnist_h500 beside the default: which of them spread less at the same number of steps?

Each variant estimates ``log Z`` of mnist_h500 (``../shared/data/rbm_models``) with 100 chains,
float32 and Salakhutdinov & Murray's schedule shape, and prints the estimate, its error against
our reference (``benchmarks/reference_log_partition.json``), the standard deviation of the log
weights (the smaller, the fewer steps a given accuracy needs) and the CPU seconds:

- ``visible``: :func:`pymc_rbm.estimators.ais` from the data base rate, the weights on the
  visible marginal (hidden units summed out), as Salakhutdinov & Murray (2008).
- ``hidden``: the same path and transitions, the weights on the *hidden* marginal (visible units
  summed out): each step weights ``h``, then draws ``v ~ p_β(v | h)`` and ``h ~ p_β(h | v)``.
- ``transposed``: AIS on the transposed RBM (the same ``Z``) from a product base over the
  hidden units, fitted to the data's hidden activation probabilities.
- ``rbm_base``: annealing from a small trained RBM (mnist_h20, exact ``log Z`` and exact draws
  by enumerating its hidden layer) to mnist_h500 through the RBMs with both hidden layers,
  ``λ = (0, 1 - β, β)`` (Zhang's (2016) bridge between models), the linear schedule.

Run from the repository root::

    python benchmarks/ais_variants.py --steps 4000 --seeds 0 1
    python benchmarks/ais_variants.py --steps 18000 --variants visible hidden
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from pymc_rbm import RBMParams
from pymc_rbm.energy import sigmoid
from pymc_rbm.estimators import AnnealingPath, ais, annealing_path, log_partition_exact, sample_visible_exact
from pymc_rbm.estimators.path import log_mean_exp
from pymc_rbm.estimators.schedules import default_schedule
from pymc_rbm.kernels import GIBBS
from pymc_rbm.kernels.activations import FULL_EVERY

HERE = Path(__file__).resolve().parent
SHARED_DATA = HERE.parent.parent / "shared" / "data"
VARIANTS = ("visible", "hidden", "transposed", "rbm_base")


def model(name: str) -> RBMParams:
    return RBMParams.load(SHARED_DATA / "rbm_models" / f"{name}.npz")


def visible(target, train, n_steps, seed):
    r = ais(target, data=train, n_steps=n_steps, dtype=np.float32, rng=seed)
    return r.log_z, r.diagnostics["log_weights"]


def hidden(target, train, n_steps, seed):
    """The path of ``visible``, weighted on ``log f_β(h) = β hbias·h + Σ_i softplus(visible logit_i)``."""
    rng = np.random.default_rng(seed)
    path = annealing_path(target, train, dtype=np.float32)
    betas = default_schedule(n_steps)
    hbias = target.hbias.astype(np.float32)

    def log_f(h, coef):
        return coef[1] * (h @ hbias).astype(np.float64) + np.logaddexp(0.0, path.visible_logits(h, coef)).sum(
            axis=-1, dtype=np.float64
        )

    v = path.sample_base(rng, 100)
    h = GIBBS.update(rng, None, path.hidden_logits(path.hidden_activation(v), path.coefficients(0.0)))[0]
    log_w = np.zeros(100)
    for k in range(1, betas.size):
        before, after = path.coefficients(betas[k - 1]), path.coefficients(betas[k])
        log_w += log_f(h, after) - log_f(h, before)
        if k < betas.size - 1:  # v | h, then h | v, at β_k: leaves p_k(h) invariant
            v = GIBBS.update(rng, v, path.visible_logits(h, after))[0]
            h = GIBBS.update(rng, h, path.hidden_logits(path.hidden_activation(v), after))[0]
    return path.log_z_base + log_mean_exp(log_w), log_w


def transposed(target, train, n_steps, seed):
    flipped = RBMParams(target.W.T, target.hbias, target.vbias)
    m = sigmoid(train @ target.W + target.hbias).mean(axis=0)
    p = (m + 0.005) / 1.01  # the smoothing of base_rate_vbias
    r = ais(flipped, base=np.log(p / (1 - p)), n_steps=n_steps, dtype=np.float32, rng=seed)
    return r.log_z, r.diagnostics["log_weights"]


def rbm_base(target, train, n_steps, seed):
    rng = np.random.default_rng(seed)
    small = model("mnist_h20")
    path = AnnealingPath([small, target], np.zeros(target.n_visible), dtype=np.float32)
    betas = np.linspace(0.0, 1.0, n_steps + 1)
    coefs = np.zeros((betas.size, 3))
    coefs[:, 1], coefs[:, 2] = 1.0 - betas, betas
    v, a, vb = path.start(sample_visible_exact(small, 100, rng=rng))
    log_w = np.zeros(100)
    for k in range(1, betas.size):
        log_w += path.log_f(a, vb, coefs[k]) - path.log_f(a, vb, coefs[k - 1])
        if k < betas.size - 1:
            v, a, vb = path.sweep(rng, v, a, coefs[k], refresh=k % FULL_EVERY == 0)
    # at λ = (0, 1, 0) the target's hidden units add log 2 each; at (0, 0, 1) the small model's do
    log_z = log_partition_exact(small).log_z + (target.n_hidden - small.n_hidden) * np.log(2.0)
    return log_z + log_mean_exp(log_w), log_w


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=4000)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    args = ap.parse_args(argv)
    target = model("mnist_h500")
    with np.load(SHARED_DATA / "mnist" / "binarized_mnist_packed.npz") as f:
        train = np.unpackbits(f["train"], axis=1)[:, :784].astype(np.float64)
    ref = json.loads((HERE / "reference_log_partition.json").read_text())["models"]["mnist_h500"]["log_z"]
    print(f"mnist_h500, {args.steps} steps, 100 chains, float32; reference log Z {ref:.3f}")
    print(f"{'variant':>11} {'seed':>4} | {'log Z':>8} {'error':>7} {'sd(log w)':>9} | {'CPU s':>6}")
    for name in args.variants:
        for seed in args.seeds:
            t = time.process_time()
            log_z, log_w = globals()[name](target, train, args.steps, seed)
            cpu = time.process_time() - t
            print(f"{name:>11} {seed:>4} | {log_z:8.3f} {log_z - ref:+7.3f} {np.std(log_w):9.3f} | {cpu:6.1f}", flush=True)


if __name__ == "__main__":
    main()

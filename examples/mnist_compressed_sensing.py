"""Compressed sensing of MNIST digits: a trained RBM prior per digit, seen through a few noisy random projections.

Each of ``K`` binarized MNIST test digits ``x_k`` (784 pixels) is seen only
through ``m`` (100 by default) noisy random projections,
``y_k = A x_k + σ ε_k``, with one fixed Gaussian matrix ``A`` of shape
``(m, 784)`` (entries ``N(0, 1) / sqrt(784)``) for all digits and the noise
level ``σ`` (true value 0.1) unknown. With ``m`` far below 784 the
measurements alone leave most of each image undetermined; the prior over
images does the rest. The model gives each digit a binary latent image
``v_k`` whose prior is an RBM trained on MNIST
(``../shared/data/rbm_models/mnist_h100.npz``, 100 hidden units), written as
a user would write it:

.. code-block:: python

    with pm.Model():
        sigma = pm.HalfNormal("sigma", 1.0)
        v = RBM("v", W, vbias, hbias, shape=(K, 784), log_partition=None)
        pm.Normal("y", v @ A.T, sigma, observed=y)       # y has shape (K, m)

Every measurement of a digit involves all of its pixels, so the likelihood
is not per-pixel evidence: each digit's readouts are one piece of the model
that couples that digit's 784 units, and the step reads the model as a sum
of row terms (``step.other_terms.structure == "rows"``, docs/rows.md).
``pm.sample`` chooses the steps itself: the example asks PyMC which step it
assigns to each variable (``assign_step_methods``), builds that step for
``v`` with its defaults only to print how it read the model, and passes it
on; NUTS samples ``σ`` (``--known-sigma`` fixes ``σ`` at its true value
instead).

The posterior mean of ``v`` (the probability of each pixel being on) and its
per-pixel standard deviation ``sqrt(p (1 - p))`` are compared with the true
pixels beside two reconstructions that need no sampling:

* **least squares**: the minimum-norm solution of ``A x = y_k``
  (``np.linalg.lstsq``) thresholded at 1/2: what the measurements say
  without a prior over images;
* **mean field**: the naive mean-field approximation of each digit's
  posterior (:func:`posterior_mean_field`), a product of independent pixels
  and hidden units whose stationary equations combine the RBM's fields with
  the likelihood's linear, diagonal and (averaged) coupling terms, iterated
  with damping from the clipped least-squares solution. It is given the true
  ``σ``.

The table gives the mean absolute error of each reconstruction (a
probability in [0, 1]) against the true binary pixels, the accuracy of the
reconstruction thresholded at 1/2, the time per draw, and whether the chains
agree (ArviZ's R-hat of every pixel, and the fraction of pixels whose chains'
means differ by more than 1/2). The figure (``--figure``, ``--out``) shows,
for the first 8 digits, the truth, the least-squares and mean-field
reconstructions, the posterior mean and the per-pixel posterior standard
deviation.

    ./dev python examples/mnist_compressed_sensing.py --rows 20 --draws 50     # about a minute
    ./dev python examples/mnist_compressed_sensing.py --figure                  # 200 digits: docs/rows.md's table

The measurements read each digit only through ``v @ A.T``, so the step
updates a digit's pixels one at a time at their exact conditionals (a move of
many coupled pixels at once would almost never be accepted); its posterior
mean is then closer to the truth than mean field's. **The chains do not yet
agree everywhere** at the default length: some digits sit in different
readings in the two chains, and the example reports it (R-hat, chains'
disagreement; docs/rows.md gives the numbers). Trust the per-pixel
uncertainty only from longer runs whose chains agree.

The RBM is read from ``--rbm`` and the digits from ``--mnist`` (both default
to ``../shared/data``); the example exits with a message when either is
absent.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pymc as pm
from pymc.sampling.mcmc import assign_step_methods

from pymc_rbm import RBM, RBMParams
from pymc_rbm.energy import mean_hiddens, visible_activation

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
RBM_PATH = DATA / "rbm_models" / "mnist_h100.npz"
MNIST_PATH = DATA / "mnist" / "binarized_mnist_packed.npz"
FIGURE = ROOT / "docs" / "images" / "mnist_compressed_sensing.png"
TRUE_SIGMA = 0.1
SIDE = 28


class Problem(NamedTuple):
    """The digits, their measurements, and what the baselines may know."""

    params: RBMParams  # the RBM prior
    truth: np.ndarray  # (K, 784) true binary pixels
    A: np.ndarray  # (m, 784) the measurement matrix, shared by all digits
    y: np.ndarray  # (K, m) noisy measurements y_k = A x_k + sigma * eps_k
    sigma: float  # the true noise level


class Errors(NamedTuple):
    mae: float  # mean absolute error against the true pixels
    accuracy: float  # fraction of pixels right after thresholding at 1/2


class Agreement(NamedTuple):
    """Whether the chains agree: ArviZ's R-hat of every pixel, and how many pixels' chains disagree."""

    worst_rhat: float  # inf where some pixel's chains each kept one value, not the same
    median_rhat: float
    above_1_01: float  # fraction of pixels with R-hat > 1.01
    disagree: float  # fraction of pixels whose chains' means differ by more than 1/2 (NaN with one chain)
    sigma_rhat: float  # R-hat of sigma (NaN when sigma is known)


class Result(NamedTuple):
    problem: Problem
    idata: object  # pm.sample's DataTree
    chosen: dict  # step class name -> the variables pm.sample assigns to it
    structure: str | None  # how the RBM's step read the measurements ("rows": one term per digit)
    seconds: float  # pm.sample's sampling time, tuning included
    per_draw_ms: float  # seconds / (chains * (tune + draws)): one chain's draw of all digits
    posterior_mean: np.ndarray  # (K, 784) p(v_ki = 1 | y)
    posterior_std: np.ndarray  # (K, 784)
    reconstructions: dict  # name -> (K, 784) estimate in [0, 1]: the posterior mean and the baselines
    seconds_of: dict  # name -> seconds it took (sampling, tuning included, for the posterior mean)
    table: dict  # name -> Errors
    agreement: Agreement


def load_problem(rbm_path: Path, mnist_path: Path, n_rows: int, n_measurements: int, sigma: float,
                 seed: int) -> Problem:
    """Load the prior and ``n_rows`` binarized test digits, and measure each with ``A`` and noise ``sigma``."""
    params = RBMParams.load(rbm_path)
    with np.load(mnist_path) as packed:
        test = np.unpackbits(packed["test"], axis=1)[:, : SIDE * SIDE]
    rng = np.random.default_rng(seed)
    truth = test[rng.choice(len(test), size=n_rows, replace=False)].astype(np.float64)
    A = rng.standard_normal((n_measurements, SIDE * SIDE)) / np.sqrt(SIDE * SIDE)
    y = truth @ A.T + sigma * rng.standard_normal((n_rows, n_measurements))
    return Problem(params, truth, A, y, sigma)


def build_model(problem: Problem, known_sigma: bool = False) -> pm.Model:
    """The RBM prior on every digit and Gaussian measurements ``y_k ~ N(A v_k, σ²)``, ``σ`` free or known."""
    p = problem.params
    with pm.Model() as model:
        sigma = problem.sigma if known_sigma else pm.HalfNormal("sigma", 1.0)
        # the weights are constants, so log Z changes nothing for sampling: leave it out (h100 cannot enumerate it)
        v = RBM("v", p.W, p.vbias, p.hbias, shape=problem.truth.shape, log_partition=None)
        pm.Normal("y", v @ problem.A.T, sigma, observed=problem.y)
    return model


def least_squares(problem: Problem) -> np.ndarray:
    """The minimum-norm solution ``x_k`` of ``A x = y_k`` for every digit, shape ``(K, 784)`` (not thresholded)."""
    return np.linalg.lstsq(problem.A, problem.y.T, rcond=None)[0].T


def posterior_mean_field(problem: Problem, sigma: float, iterations: int = 500, damping: float = 0.2) -> np.ndarray:
    """Naive mean field of each digit's posterior ``p(v | y) ∝ p_RBM(v) N(y | A v, σ² I)``.

    The posterior of ``(v, h)`` is approximated by independent units,
    ``q = Π_i Bern(m_i) Π_j Bern(μ_j)``. With ``G = AᵀA`` and ``v_i² = v_i``,
    ``log N(y | A v, σ²) = [(Aᵀy)·v - ½ Σ_i G_ii v_i - ½ Σ_{i≠j} G_ij v_i v_j] / σ² + const``,
    so the stationary equations of the mean-field bound are

    ``μ = sigmoid(hbias + m W)``  and
    ``m_i = sigmoid(vbias_i + (W μ)_i + [(Aᵀy)_i - G_ii / 2 - Σ_{j≠i} G_ij m_j] / σ²)``:

    the RBM's fields (:func:`~pymc_rbm.energy.mean_hiddens`,
    :func:`~pymc_rbm.energy.visible_activation`), the likelihood's linear and
    diagonal terms exactly, its couplings through the other pixels'
    magnetisations. All pixels are updated at once, ``m ← (1 - d) m + d
    m_new`` with damping ``d``, from the least-squares solution clipped to
    [0, 1]; the couplings are strong (``G_ii / σ²`` is about 13 here), which
    is why the damping is heavy.

    Parameters
    ----------
    problem : Problem
    sigma : float
        The noise level assumed.
    iterations : int
    damping : float in (0, 1]

    Returns
    -------
    m : ndarray of shape (K, 784)
        The magnetisations, each pixel's approximate probability of being on.
    """
    A, y, p = problem.A, problem.y, problem.params
    G = A.T @ A
    linear = (y @ A - 0.5 * np.diag(G)) / sigma**2  # (K, 784)
    coupling = (G - np.diag(np.diag(G))) / sigma**2
    m = np.clip(least_squares(problem), 0.0, 1.0)
    for _ in range(iterations):
        logits = visible_activation(mean_hiddens(m, p), p) + linear - m @ coupling
        m = (1 - damping) * m + damping / (1 + np.exp(-logits))
    return m


def errors(estimate: np.ndarray, truth: np.ndarray) -> Errors:
    """Mean absolute error against the true pixels, and the accuracy of the estimate thresholded at 1/2."""
    return Errors(float(np.abs(estimate - truth).mean()), float(((estimate > 0.5) == (truth > 0.5)).mean()))


def chain_agreement(posterior) -> Agreement:
    """R-hat of every pixel and of ``sigma`` (ArviZ's rank-normalised R-hat, Vehtari et al. 2021).

    A pixel that keeps one value in every chain has no R-hat (0 / 0); it
    counts as 1 where the chains kept the same value and as infinite where
    they kept different ones.
    """
    import arviz as az

    v = posterior["v"].values  # (chains, draws, K, 784)
    with np.errstate(invalid="ignore", divide="ignore"):
        rhat = az.rhat(posterior["v"]).values
    constant = np.all(v == v[:1, :1], axis=(0, 1))
    rhat = np.where(constant, 1.0, np.where(np.isfinite(rhat) & (rhat < 1e6), rhat, np.inf))
    means = v.mean(axis=1)  # (chains, K, 784)
    disagree = float(np.mean(means.max(axis=0) - means.min(axis=0) > 0.5)) if means.shape[0] > 1 else np.nan
    sigma_rhat = float(az.rhat(posterior["sigma"]).values) if "sigma" in posterior else np.nan
    return Agreement(float(rhat.max()), float(np.median(rhat)), float(np.mean(rhat > 1.01)), disagree, sigma_rhat)


def run(
    n_rows: int = 200,
    n_measurements: int = 100,
    draws: int = 100,
    tune: int | None = None,
    chains: int = 2,
    cores: int = 1,
    known_sigma: bool = False,
    seed: int = 0,
    rbm_path: Path = RBM_PATH,
    mnist_path: Path = MNIST_PATH,
) -> Result:
    """Build the problem and the model, sample with pm.sample's own steps, score the posterior beside the baselines."""
    problem = load_problem(Path(rbm_path), Path(mnist_path), n_rows, n_measurements, TRUE_SIGMA, seed)
    tune = draws if tune is None else tune
    with build_model(problem, known_sigma) as model:
        v = model["v"]
        _, selected = assign_step_methods(model)  # what pm.sample assigns to each free variable
        chosen = {cls.__name__: [model.values_to_rvs[x].name for x in xs] for cls, xs in selected.items()}
        [rbm_step] = [cls for cls, xs in selected.items() if model.rvs_to_values[v] in xs]
        step = rbm_step([v])  # the same step with its defaults, built here to read step.other_terms
        idata = pm.sample(draws=draws, tune=tune, chains=chains, cores=cores, step=[step], random_seed=seed,
                          progressbar=False)
    seconds = float(idata.posterior.attrs["sampling_time"])
    n_chains = idata.posterior.sizes["chain"]
    mean = idata.posterior["v"].values.mean(axis=(0, 1))
    recon = {"posterior mean (pm.sample)": mean}
    seconds_of = {"posterior mean (pm.sample)": seconds}
    start = time.perf_counter()
    recon["least squares, thresholded at 1/2"] = (least_squares(problem) > 0.5).astype(np.float64)
    seconds_of["least squares, thresholded at 1/2"] = time.perf_counter() - start
    start = time.perf_counter()
    recon["mean field (true σ)"] = posterior_mean_field(problem, problem.sigma)
    seconds_of["mean field (true σ)"] = time.perf_counter() - start
    return Result(
        problem=problem,
        idata=idata,
        chosen=chosen,
        structure=step.other_terms.structure,
        seconds=seconds,
        per_draw_ms=1000 * seconds / (n_chains * (tune + draws)),
        posterior_mean=mean,
        posterior_std=np.sqrt(mean * (1 - mean)),
        reconstructions=recon,
        seconds_of=seconds_of,
        table={name: errors(est, problem.truth) for name, est in recon.items()},
        agreement=chain_agreement(idata.posterior),
    )


def print_report(result: Result) -> None:
    post = result.idata.posterior
    chains, draws = post.sizes["chain"], post.sizes["draw"]
    k, m = result.problem.y.shape
    steps = "; ".join(f"{name}: {', '.join(names)}" for name, names in result.chosen.items())
    print(f"steps chosen by pm.sample: {steps}; the measurements read as {result.structure!r}")
    print(
        f"{k} digits, {m} measurements each; {chains} chains x {draws} draws (+ tuning): {result.seconds:.1f} s, "
        f"{result.per_draw_ms:.1f} ms per draw of one chain (all {k} digits, tuning included)"
    )
    if "sigma" in post:
        s = post["sigma"].values
        print(f"  sigma posterior mean {s.mean():.3f} (sd {s.std():.3f}), true {result.problem.sigma}")
    a = result.agreement
    print(
        f"chains: R-hat of the pixels worst {a.worst_rhat:.3g}, median {a.median_rhat:.3f}, "
        f"{100 * a.above_1_01:.1f}% above 1.01; chains' means differ by > 1/2 on {100 * a.disagree:.1f}% of the "
        f"pixels; R-hat of sigma {a.sigma_rhat:.3f}"
    )
    print()
    print("| reconstruction | MAE | accuracy | seconds |")
    print("| --- | --- | --- | --- |")
    for name, e in result.table.items():
        print(f"| {name} | {e.mae:.3f} | {e.accuracy:.3f} | {result.seconds_of[name]:.1f} |")


def save_figure(result: Result, path: Path, n_columns: int = 8) -> Path | None:
    """Rows: truth, least squares, mean field, posterior mean, posterior sd (PNG; needs matplotlib)."""
    try:
        from matplotlib.figure import Figure  # no pyplot: no backend or global state is touched
    except ImportError:
        print("matplotlib is not installed: no figure")
        return None
    pr = result.problem
    n = min(n_columns, pr.y.shape[0])
    lsq = least_squares(pr)
    rows = [
        ("truth", pr.truth, "gray_r", (0, 1)),
        ("least squares", lsq, "gray_r", tuple(np.quantile(lsq[:n], [0.01, 0.99]))),  # small values: own scale
        ("mean field", result.reconstructions["mean field (true σ)"], "gray_r", (0, 1)),
        ("posterior mean", result.posterior_mean, "gray_r", (0, 1)),
        ("posterior sd", result.posterior_std, "magma", (0, 0.5)),
    ]
    fig = Figure(figsize=(0.8 * n + 1.6, 0.8 * len(rows)))
    axes = fig.subplots(len(rows), n, squeeze=False)
    for r, (label, images, cmap, (lo, hi)) in enumerate(rows):
        for c in range(n):
            ax = axes[r, c]
            ax.imshow(images[c].reshape(SIDE, SIDE), cmap=cmap, vmin=lo, vmax=hi, interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
        axes[r, 0].set_ylabel(label, rotation=0, ha="right", va="center", fontsize=8)
    fig.subplots_adjust(left=0.13, right=0.99, top=0.99, bottom=0.01, wspace=0.05, hspace=0.05)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=72)
    return path


def main(argv=None) -> Result:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200, help="test digits K (default 200)")
    parser.add_argument("--measurements", type=int, default=100, help="measurements m per digit (default 100)")
    parser.add_argument("--draws", type=int, default=100, help="draws per chain (default 100)")
    parser.add_argument("--tune", type=int, default=None, help="tuning draws per chain (default: as many as --draws)")
    parser.add_argument("--chains", type=int, default=2, help="chains, run one after another (default 2)")
    parser.add_argument("--known-sigma", action="store_true", help=f"fix sigma at its true value {TRUE_SIGMA}")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rbm", type=Path, default=RBM_PATH, help=f"the trained RBM (default {RBM_PATH})")
    parser.add_argument("--mnist", type=Path, default=MNIST_PATH, help=f"binarized MNIST (default {MNIST_PATH})")
    parser.add_argument("--figure", action="store_true", help=f"save the figure (to --out, default {FIGURE})")
    parser.add_argument("--out", type=Path, default=None, help="path of the figure (implies --figure)")
    args = parser.parse_args(argv)
    missing = [str(p) for p in (args.rbm, args.mnist) if not p.exists()]
    if missing:
        raise SystemExit(f"MNIST data absent ({', '.join(missing)}): give --rbm and --mnist, or see "
                         "../shared/data/README.md.")
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):  # one BLAS thread: the chains' own work is single-threaded, the machine shared
        result = run(args.rows, args.measurements, args.draws, args.tune, chains=args.chains,
                     known_sigma=args.known_sigma, seed=args.seed, rbm_path=args.rbm, mnist_path=args.mnist)
    print_report(result)
    if args.figure or args.out is not None:
        path = save_figure(result, FIGURE if args.out is None else args.out)
        if path is not None:
            print(f"figure: {path}")
    return result


if __name__ == "__main__":
    main(sys.argv[1:])

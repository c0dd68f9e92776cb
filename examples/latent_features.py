"""An RBM block inside a larger model: binary latent images seen through Gaussian noise.

Each of K noisy 4x4 images ``y_k = s * v_k + b + noise`` has a binary latent
image ``v_k`` whose prior is the bundled bars-and-stripes RBM itself,
untempered: a prior so sharply multimodal that local moves (Gibbs,
flip-the-state) almost never leave the pattern they start in. ``pm.sample``
chooses the steps: NUTS for the continuous variables and, for ``v``,
:class:`~pymc_rbm.ExactDraws`. The Gaussian readouts are per-pixel evidence,
found in the model's graph, and the RBM's 65536 visible states can be listed
once: each image then makes a few dozen exact draws of the prior per draw as
proposals, each accepted by how well it explains that image's readouts, and a
flip-the-state sweep of the RBM tilted by them for the pixel-level moves. Each
move leaves the image's posterior invariant, so the compound step samples the
exact posterior.

Two parts:

1. **One image, the scale, offset and noise fixed at their true values.**
   The posterior of ``v`` is then enumerable:
   ``log p(v | y) = -F(v) + Σ_i log N(y_i | s v_i + b, σ) + const`` over
   the 65536 states. The example compares the sampled marginals
   ``p(v_i = 1 | y)`` and the total variation over all states with that
   exact posterior, for ``pm.sample``'s default and for flip-the-state alone.
2. **The full model**: K images, the scale ``s``, offset ``b`` and noise
   ``sigma`` unknown. No enumeration here (``2**(16 K)`` states and three
   continuous variables); the example reports the posterior means of the
   continuous variables against their true values, how many proposals each
   image made per draw and how many were accepted, and the pixels of the
   posterior mode of ``v`` that differ from the truth.

About the warnings of part 2. PyMC (R-hat above 1.01, effective sample size
below 100 per chain) and pymc-rbm (chains that disagree or never moved) may
warn after part 2; the example then lists the pixels concerned and says
which of two kinds each is. *Rare flips*: a pixel that is almost always one
value has its R-hat and ESS decided by the few draws where it is not; more
draws settle that, and the posterior you would read is unchanged.
*Ambiguous* images: the noise lets two patterns explain them (part 1's image
is one, ``p(v_i = 1 | y)`` about 0.27 on a whole column). A chain changes its
reading of such an image when a proposal drawn from the prior lands on the
other pattern and the readouts accept it, a few times per draw. With few draws
the probability of those pixels can still be rough; more draws
(``--draws 3000``) or more chains make it reliable, and part 1 shows that
the sampler itself is exact.

    ./dev python examples/latent_features.py              # about a minute
    ./dev python examples/latent_features.py --draws 3000 # part 2 mixes enough for R-hat and ESS
"""

import argparse
from typing import NamedTuple

import arviz as az
import numpy as np
import pymc as pm
from scipy.special import logsumexp

from pymc_rbm import RBM, FlipTheState
from pymc_rbm.datasets import bars_and_stripes, bundled_rbm
from pymc_rbm.diagnostics import mixing_problems
from pymc_rbm.energy import free_energy
from pymc_rbm.estimators import binary_states
from pymc_rbm.testing import state_index

TRUE_SCALE, TRUE_OFFSET, TRUE_SIGMA = 2.0, -0.5, 0.9


class ExactComparison(NamedTuple):
    """Sampled against enumerated posterior of one latent image."""

    tv: float  # total variation over all 2**16 states
    max_marginal_error: float  # max_i |p̂(v_i = 1 | y) - p(v_i = 1 | y)|
    marginals: np.ndarray  # sampled p(v_i = 1 | y), shape (16,)
    exact_marginals: np.ndarray  # enumerated p(v_i = 1 | y), shape (16,)
    top_two_moves_per_1000: float  # moves between the two most probable states per 1000 draws


class Result(NamedTuple):
    exact: dict  # sampler label -> ExactComparison (part 1)
    idata: object  # the full model's pm.sample result (part 2)


def exact_posterior(params, y: np.ndarray) -> np.ndarray:
    """Posterior probability of every state of one latent image, in ``binary_states`` order.

    ``log p(v | y) = -F(v) + Σ_i log N(y_i | s v_i + b, σ) + const``
    with the true scale, offset and noise.
    """
    states = binary_states(params.n_visible)
    log_lik = -0.5 * (((y - TRUE_SCALE * states - TRUE_OFFSET) / TRUE_SIGMA) ** 2).sum(axis=-1)
    log_post = -free_energy(states, params) + log_lik
    return np.exp(log_post - logsumexp(log_post))


def compare_with_enumeration(idata, exact: np.ndarray) -> ExactComparison:
    """Marginals and total variation of the draws of ``v`` (one image) against the exact posterior."""
    index = state_index(idata.posterior["v"].values)  # (chain, draw)
    v = idata.posterior["v"].values.reshape(-1, 16)
    freq = np.bincount(index.ravel(), minlength=exact.size) / index.size
    exact_marginals = exact @ binary_states(16)
    marginals = v.mean(axis=0)
    first, second = np.argsort(exact)[::-1][:2]
    label = np.where(index == first, 0, np.where(index == second, 1, -1))
    moves = 0
    for row in label:  # moves between the two most probable states, other states in between ignored
        kept = row[row >= 0]
        moves += int(np.count_nonzero(kept[1:] != kept[:-1]))
    return ExactComparison(
        tv=0.5 * float(np.abs(freq - exact).sum()),
        max_marginal_error=float(np.abs(marginals - exact_marginals).max()),
        marginals=marginals,
        exact_marginals=exact_marginals,
        top_two_moves_per_1000=1000.0 * moves / index.size,
    )


def one_image_exact(params, y: np.ndarray, *, draws: int, tune: int, chains: int, seed: int) -> dict:
    """Part 1: the posterior of one latent image with s, b and σ fixed, sampled and enumerated."""
    exact = exact_posterior(params, y)
    top = np.sort(exact)[::-1]
    print(f"part 1: one image, s, b and sigma fixed at their true values; exact posterior by enumeration "
          f"of {exact.size} states (most probable state {top[0]:.3f}, 10 most probable {top[:10].sum():.3f})")
    results = {}
    samplers = (("default (pm.sample picks the step)", None), ("step=FlipTheState (local moves)", FlipTheState))
    for label, step in samplers:
        with pm.Model():
            v = RBM("v", params.W, params.vbias, params.hbias)
            pm.Normal("y", TRUE_SCALE * v + TRUE_OFFSET, TRUE_SIGMA, observed=y)
            kwargs = {} if step is None else {"step": step([v])}
            idata = pm.sample(draws=draws, tune=tune, chains=chains, cores=1, random_seed=seed, progressbar=False,
                              compute_convergence_checks=False, **kwargs)
        results[label] = compare_with_enumeration(idata, exact)
    print(f"  {chains} chains x {draws} draws after {tune} tuning draws each")
    print(f"  {'':36s} TV to exact  max |p(v_i=1|y) error|  moves between the two most probable states per 1000 draws")
    for label, r in results.items():
        print(f"  {label:36s} {r.tv:11.3f}  {r.max_marginal_error:22.3f}  {r.top_two_moves_per_1000:10.1f}")
    exact_row = " ".join(f"{p:.2f}" for p in next(iter(results.values())).exact_marginals)
    sampled_row = " ".join(f"{p:.2f}" for p in next(iter(results.values())).marginals)
    print(f"  p(v_i = 1 | y), exact:   {exact_row}")
    print(f"  p(v_i = 1 | y), default: {sampled_row}")
    return results


def full_model(params, y: np.ndarray, truth: np.ndarray, *, draws: int, tune: int, chains: int, seed: int):
    """Part 2: all images, with the scale, offset and noise unknown."""
    n_images = len(y)
    with pm.Model():
        scale = pm.HalfNormal("scale", 3.0)
        offset = pm.Normal("offset", 0.0, 2.0)
        sigma = pm.HalfNormal("sigma", 2.0)
        v = RBM("v", params.W, params.vbias, params.hbias, shape=(n_images, params.n_visible))
        pm.Normal("y", scale * v + offset, sigma, observed=y)
        idata = pm.sample(draws=draws, tune=tune, chains=chains, cores=1, random_seed=seed, progressbar=False)

    post, stats = idata.posterior, idata.sample_stats
    p_on = post["v"].mean(("chain", "draw")).values
    print(f"\npart 2: {n_images} images, scale, offset and sigma unknown ({chains} chains x {draws} draws)")
    print(f"  posterior means: scale {float(post['scale'].mean()):.2f} (true {TRUE_SCALE}), offset "
          f"{float(post['offset'].mean()):.2f} (true {TRUE_OFFSET}), sigma {float(post['sigma'].mean()):.2f} "
          f"(true {TRUE_SIGMA})")
    with np.errstate(invalid="ignore", divide="ignore"):
        rhat = az.rhat(idata, var_names=["scale", "offset", "sigma", "v"])
    rhat_v = rhat["v"].values  # NaN for pixels that are the same in every draw of every chain
    worst = np.unravel_index(np.nanargmax(rhat_v), rhat_v.shape)
    print("  r-hat: " + ", ".join(f"{name} {float(rhat[name]):.3f}" for name in ("scale", "offset", "sigma"))
          + f"; largest of a pixel of v {np.nanmax(rhat_v):.3f} (image {worst[0]}, pixel {worst[1]}, "
          f"posterior mean {p_on[worst]:.2f}). ArviZ's r-hat of v is NaN, with a RuntimeWarning, for the "
          f"{int(np.isnan(rhat_v).sum())} pixels that are the same in every draw of every chain: the data settle them")
    if "n_tries" in stats:
        print(f"  ExactDraws: {int(stats['n_tries'].values[0, -1])} proposals per image and draw from the exact "
              f"prior, accepted fraction {float(np.mean(np.stack(stats['accept_rate'].values.ravel()))):.3f}; "
              f"visible units changed per image and draw {float(stats['n_changed'].mean()):.2f}")
    else:
        print(f"  cold replica: acceptance of its likelihood-informed moves {float(stats['accept_rate'].mean()):.2f}, "
              f"visible units changed per image and draw {float(stats['n_changed'].mean()):.2f}")
    if "swap_accept" in stats:
        trips = stats["round_trips"].values[:, -1]
        print(f"  ladders (one per image): {int(stats['n_temperatures'].values[:, -1].max())} rungs, swap acceptance "
              f"{float(np.nanmean(stats['swap_accept'].values)):.2f}, round trips of all {n_images} ladders per chain "
              f"{int(np.min(trips))}-{int(np.max(trips))}")
    naive = (y > TRUE_OFFSET + TRUE_SCALE / 2).astype(int)
    print(f"  pixels wrong: thresholding y {int((naive != truth).sum())}, "
          f"posterior mode of v {int(((p_on > 0.5) != truth).sum())} (of {truth.size})")
    explain_warnings(idata)
    return idata


#: PyMC's thresholds for its warnings after sampling: R-hat above 1.01, ESS below 100 per chain.
RHAT_WARN, ESS_PER_CHAIN_WARN = 1.01, 100.0


class SlowPixels(NamedTuple):
    """Pixels of one latent image that trip PyMC's R-hat or ESS warning."""

    pixels: np.ndarray  # pixel indices, shape (n,)
    ess: np.ndarray  # ArviZ's ESS of each, shape (n,)
    rhat: np.ndarray  # ArviZ's R-hat of each, shape (n,)
    mean: np.ndarray  # posterior mean p(v_i = 1 | y) of each, shape (n,)
    chain_means: np.ndarray  # the same per chain, shape (n_chains, n)


def slow_images(idata) -> dict:
    """Images of ``v`` with pixels that trip PyMC's R-hat or ESS warning: image -> :class:`SlowPixels`.

    A pixel that is the same in every draw of every chain is settled by the
    data and left out (ArviZ's R-hat and ESS are NaN there).
    """
    v = idata.posterior["v"].values  # (chain, draw, image, pixel)
    n_chains = v.shape[0]
    with np.errstate(invalid="ignore", divide="ignore"):
        ess = az.ess(idata, var_names=["v"])["v"].values  # (image, pixel)
        rhat = az.rhat(idata, var_names=["v"])["v"].values
    settled = np.all(v == v[:1, :1], axis=(0, 1))
    chain_means = v.mean(axis=1)  # (chain, image, pixel)
    slow = {}
    for image in range(ess.shape[0]):
        bad = ~settled[image] & ((ess[image] < ESS_PER_CHAIN_WARN * n_chains) | (rhat[image] > RHAT_WARN)
                                 | np.isnan(ess[image]) | np.isnan(rhat[image]))
        pixels = np.flatnonzero(bad)
        if pixels.size:
            slow[image] = SlowPixels(pixels, ess[image, pixels], rhat[image, pixels],
                                     chain_means[:, image, pixels].mean(axis=0), chain_means[:, image, pixels])
    return slow


def explain_warnings(idata) -> None:
    """What the warnings printed after part 2 mean for this model, and what to do about them."""
    problems = mixing_problems(idata, name="v")
    slow = slow_images(idata)
    if not problems and not slow:
        print("  every pixel of v passed PyMC's R-hat and ESS checks in this run")
        return
    n_chains, n_draws = idata.posterior.sizes["chain"], idata.posterior.sizes["draw"]
    print(f"  about the warnings above: they concern v, not scale, offset or sigma (r-hat above). PyMC warns when an "
          f"R-hat exceeds {RHAT_WARN} or an ESS is below {ESS_PER_CHAIN_WARN:.0f} per chain:")
    for text in problems:
        print(f"    pymc-rbm: {text}")
    ambiguous = rare = False
    for image, sp in slow.items():
        for k, pixel in enumerate(sp.pixels):
            per_chain = ", ".join(f"{m:.2f}" for m in sp.chain_means[:, k])
            kind = "rare flips" if min(sp.mean[k], 1 - sp.mean[k]) < 0.05 else "ambiguous"
            ambiguous |= kind == "ambiguous"
            rare |= kind == "rare flips"
            print(f"    image {image}, pixel {pixel}: p(on) {sp.mean[k]:.2f} ({kind}; per chain {per_chain}), "
                  f"r-hat {sp.rhat[k]:.3f}, ESS {sp.ess[k]:.0f} of {n_chains * n_draws} draws")
    if rare:
        print("  'rare flips': the pixel is almost always one value, so its R-hat and ESS rest on the few draws "
              "where it is not;\n  that settles with more draws and changes nothing you would read off the posterior.")
    if ambiguous or problems:
        print("  'ambiguous': two bars-and-stripes patterns explain the image; a chain switches between the two "
              "readings\n  through its exact proposals (the module docstring says how), and with few draws the "
              "probability of those pixels is rough.")
    print("  To make them reliable, run more draws or chains: ./dev python examples/latent_features.py --draws 3000")


def simulate(seed: int = 3, n_images: int = 6) -> tuple[np.ndarray, np.ndarray]:
    """``n_images`` distinct bars-and-stripes patterns and their noisy images, each of shape (n_images, 16)."""
    rng = np.random.default_rng(seed)
    truth = bars_and_stripes(4)[rng.choice(30, n_images, replace=False)]
    return truth, TRUE_SCALE * truth + TRUE_OFFSET + rng.normal(0, TRUE_SIGMA, truth.shape)


def main(seed: int = 3, n_images: int = 6, draws: int = 1000, tune: int = 1000, chains: int = 4) -> Result:
    params = bundled_rbm()
    truth, y = simulate(seed, n_images)
    sampling = dict(draws=draws, tune=tune, chains=chains, seed=seed)
    exact = one_image_exact(params, y[0], **sampling)
    idata = full_model(params, y, truth, **sampling)
    return Result(exact, idata)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1000, help="draws per chain (default 1000)")
    parser.add_argument("--tune", type=int, default=1000, help="tuning draws per chain (default 1000)")
    parser.add_argument("--chains", type=int, default=4, help="chains (default 4)")
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    main(seed=args.seed, draws=args.draws, tune=args.tune, chains=args.chains)

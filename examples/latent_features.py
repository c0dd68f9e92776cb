"""An RBM block inside a larger model: binary latent images seen through Gaussian noise.

Each of K noisy 4x4 images ``y_k = s * v_k + b + noise`` has a binary latent
image ``v_k`` whose prior is the bundled bars-and-stripes RBM at inverse
temperature ``beta`` (all parameters times ``beta``). At ``beta = 1`` that
prior is so sharply multimodal that local moves almost never leave a
pattern (the wormhole moves of seed 002 are for that case); a tempered prior
keeps the example about the compound step. The scale
``s``, the offset ``b`` and the noise ``sigma`` are unknown. NUTS samples
the continuous variables; FlipTheState samples the latent images, and since
``v`` also enters the Gaussian likelihood, its RBM move is corrected with the
likelihood ratio, so the step samples the exact full conditional.

    ./dev python examples/latent_features.py
"""

import numpy as np
import pymc as pm

from pymc_rbm import RBM, FlipTheState, RBMParams
from pymc_rbm.datasets import bars_and_stripes, bundled_rbm


def main(seed: int = 3, n_images: int = 6, draws: int = 1000, beta: float = 0.35):
    rng = np.random.default_rng(seed)
    bundled = bundled_rbm()
    params = RBMParams(beta * bundled.W, beta * bundled.vbias, beta * bundled.hbias)
    truth = bars_and_stripes(4)[rng.choice(30, n_images, replace=False)]
    y = 2.0 * truth - 0.5 + rng.normal(0, 0.9, truth.shape)

    with pm.Model():
        scale = pm.HalfNormal("scale", 3.0)
        offset = pm.Normal("offset", 0.0, 2.0)
        sigma = pm.HalfNormal("sigma", 2.0)
        v = RBM("v", params.W, params.vbias, params.hbias, shape=(n_images, 16))
        pm.Normal("y", scale * v + offset, sigma, observed=y)
        idata = pm.sample(
            draws=draws, tune=1000, chains=2, cores=1, step=[FlipTheState([v])], random_seed=seed, progressbar=False
        )

    post = idata.posterior
    p_on = post["v"].mean(("chain", "draw")).values
    accept = float(idata.sample_stats["accept_rate"].mean())
    moved = float(idata.sample_stats["n_changed"].mean())
    print(f"posterior means: scale {float(post['scale'].mean()):.2f} (true 2.0), offset "
          f"{float(post['offset'].mean()):.2f} (true -0.5), sigma {float(post['sigma'].mean()):.2f} (true 0.9)")
    print(f"acceptance of the corrected RBM move: {accept:.2f}; visible units changed per draw: {moved:.2f}")
    naive = (y > 0.5).astype(int)
    print(f"pixels wrong: thresholding y {int((naive != truth).sum())}, "
          f"posterior mode of v {int(((p_on > 0.5) != truth).sum())} (of {truth.size})")
    return idata


if __name__ == "__main__":
    main()

"""Which fixed σ should ``fit(visible="gaussian")`` give a Gaussian-Bernoulli RBM? Held-out exact log-likelihood.

A Gaussian-Bernoulli RBM is a mixture of ``2**n_hidden`` Gaussians that all
have the covariance ``diag σ²`` (:mod:`pymc_rbm.gaussian`), and ``fit`` keeps σ
fixed. With σ at each column's standard deviation every component is as
wide as the data, so the mixture can hardly be better than independent
Gaussians. This script trains RBMs with σ at ``c`` times the column standard
deviation of the (standardised) training data, for several ``c``, and prints
the mean exact log-likelihood of held-out data (the hidden layer is
enumerated: :func:`pymc_rbm.estimators.log_likelihood`), beside independent
and full-covariance Gaussians fitted by maximum likelihood.

Data sets (each standardised with the training set's means and standard
deviations; the test set is 5000 fresh draws of the same generator):

- ``iris-like``: three equally likely 4-dimensional Gaussian clusters with the
  class means and standard deviations of Fisher's iris data and a common
  within-class correlation matrix (150 training rows, as iris);
- ``two ridges``: :func:`pymc_rbm.datasets.two_ridges` in 4 dimensions (500 rows);
- ``RBM mixture``: 400 exact draws of the 4-visible, 2-hidden RBM of
  ``tests/training/test_fit_gaussian.py`` (four equally likely, well separated
  components of σ = 0.5 before standardisation).

Training: ``fit(train, n_hidden, visible=Gaussian(c * std), rng=seed, ...)``,
full batch, centered, SGD with momentum 0.5, in three runs of :data:`BUDGETS`:
CD-1 at learning rate 0.01 for 1000 updates (short), PCD-5 at 0.05 on a cosine
schedule for 5000 updates, and the exact gradient (``method="exact"``: the
model term enumerated, no sampling bias) at 0.05 for 5000 updates. The table
gives the mean over seeds of the test log-likelihood (nats per row) and its
range; ``c = 1`` is the choice of ``visible="gaussian"`` before 0.5 became the
default.
Run from the repository root::

    ./dev python benchmarks/gaussian_sigma.py [--hidden 8] [--seeds 3]

(about five minutes on one core; the table is in ``docs/training.md``, "Choosing σ for Gaussian units").
"""

from __future__ import annotations

import argparse

import numpy as np

from pymc_rbm.datasets import two_ridges
from pymc_rbm.estimators import log_likelihood
from pymc_rbm.gaussian import GaussianRBMParams, sample_exact
from pymc_rbm.layers import Gaussian
from pymc_rbm.training import CD, PCD, SGD, fit
from pymc_rbm.training.families import GAUSSIAN_SIGMA_SCALE

#: Class means and standard deviations of Fisher's iris data (sepal length, sepal width, petal length, petal width).
IRIS_MEANS = np.array([[5.006, 3.428, 1.462, 0.246], [5.936, 2.770, 4.260, 1.326], [6.588, 2.974, 5.552, 2.026]])
IRIS_STDS = np.array([[0.352, 0.379, 0.174, 0.105], [0.516, 0.314, 0.470, 0.198], [0.636, 0.322, 0.552, 0.275]])
#: A within-class correlation matrix close to iris's pooled one.
IRIS_CORR = np.array([[1.0, 0.53, 0.76, 0.55], [0.53, 1.0, 0.38, 0.47], [0.76, 0.38, 1.0, 0.48],
                      [0.55, 0.47, 0.48, 1.0]])

#: The RBM of tests/training/test_fit_gaussian.py.
FOUR_COMPONENTS = GaussianRBMParams(2.0 * np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 1.0]]), np.zeros(4),
                                    np.array([-6.0, -6.0]), np.full(4, 0.5))


def iris_like(n, rng):
    """``n`` rows of the three-cluster iris-like mixture, shape (n, 4) (stochastic)."""
    k = rng.integers(0, 3, n)
    return IRIS_MEANS[k] + IRIS_STDS[k] * rng.multivariate_normal(np.zeros(4), IRIS_CORR, n)


#: name: (generator (n, rng) -> (n, 4) array, training rows).
DATA_SETS = {
    "iris-like": (iris_like, 150),
    "two ridges": (lambda n, rng: two_ridges(n, 4, rng=rng), 500),
    "RBM mixture": (lambda n, rng: sample_exact(FOUR_COMPONENTS, n, rng=rng), 400),
}

#: σ rules: c in σ = c · (column standard deviation).
SCALES = (1.0, 0.7, 0.5, 0.3)

#: column: fit options (every option that shapes the run given, so that the table does not move with fit's defaults).
BUDGETS = {
    "CD-1, lr 0.01, 1000 updates": {"method": CD(k=1), "learning_rate": 0.01,
                                    "optimizer": SGD(schedule="constant"), "n_updates": 1000},
    "PCD-5, lr 0.05 cosine, 5000 updates": {"method": PCD(k=5), "learning_rate": 0.05,
                                            "optimizer": SGD(schedule="cosine"), "n_updates": 5000},
    "exact gradient, lr 0.05, 5000 updates": {"method": "exact", "learning_rate": 0.05,
                                              "optimizer": SGD(schedule="constant"), "n_updates": 5000},
}


def split(name, seed, n_test=5000):
    """Standardised training and test sets of a data set (test standardised with the training statistics), and the
    mean log density of the test set under the generating RBM where there is one (else None)."""
    gen, n_train = DATA_SETS[name]
    rng = np.random.default_rng(seed)
    train, test = gen(n_train, rng), gen(n_test, rng)
    mean, std = train.mean(axis=0), train.std(axis=0)
    truth = None
    if name == "RBM mixture":  # the density of the standardised data: log p(v) + Σ log std
        truth = float(log_likelihood(FOUR_COMPONENTS, test).mean() + np.log(std).sum())
    return (train - mean) / std, (test - mean) / std, truth


def gaussian_log_likelihood(train, test, full):
    """Mean test log-likelihood of the maximum-likelihood Gaussian of ``train`` (diagonal or full covariance)."""
    d = test - train.mean(axis=0)
    cov = np.cov(train.T, bias=True) if full else np.diag(train.var(axis=0))
    _, logdet = np.linalg.slogdet(cov)
    quad = np.einsum("ij,jk,ik->i", d, np.linalg.inv(cov), d)
    return float(np.mean(-0.5 * (quad + logdet + d.shape[1] * np.log(2 * np.pi))))


def rbm_log_likelihood(train, test, scale, n_hidden, seed, options):
    """Mean exact test log-likelihood of an RBM trained with σ = scale · (column std of train)."""
    res = fit(train, n_hidden, visible=Gaussian(scale * train.std(axis=0)), rng=seed, progress=False, **options,
              evaluation=None)
    return float(log_likelihood(res.params, test).mean())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, default=8)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args(argv)
    seeds = range(args.seeds)

    def cell(values):
        v = np.asarray(values)
        return f"{v.mean():.2f} [{v.min():.2f}, {v.max():.2f}]"

    print(f"n_hidden = {args.hidden}, seeds {list(seeds)}; default σ = {GAUSSIAN_SIGMA_SCALE:g} · std")
    print("| data set | σ rule | " + " | ".join(BUDGETS) + " |")
    print("|---|---|" + "---|" * len(BUDGETS))
    for name in DATA_SETS:
        splits = [split(name, seed) for seed in seeds]
        if splits[0][2] is not None:
            value = cell([truth for _, _, truth in splits])
            print(f"| {name} | the generating RBM | {value} |" + " |" * (len(BUDGETS) - 1), flush=True)
        for label, full in (("independent Gaussians", False), ("full-covariance Gaussian", True)):
            value = cell([gaussian_log_likelihood(tr, te, full) for tr, te, _ in splits])
            print(f"| {name} | {label} | {value} |" + " |" * (len(BUDGETS) - 1), flush=True)
        for scale in SCALES:
            rule = "std (the old default)" if scale == 1.0 else f"{scale:g} · std"
            if scale == GAUSSIAN_SIGMA_SCALE:
                rule += " (the default)"
            cells = [cell([rbm_log_likelihood(tr, te, scale, args.hidden, seed, options)
                           for seed, (tr, te, _) in zip(seeds, splits)]) for options in BUDGETS.values()]
            print(f"| {name} | RBM, σ = {rule} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()

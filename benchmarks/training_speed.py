"""Time per update of PCD-1 training with :func:`pymc_rbm.training.fit`, beside scikit-learn's ``BernoulliRBM``.

``fit`` is timed with its defaults (centered gradient, hidden units redrawn at every update), with the
loop of pymc-rbm 0.2 (``SGD(centered=False)``, ``PCD(hidden="carry")``: five products per update, scikit-learn's
count), in float32, and with CD-1 (the defaults otherwise). On small models all of them run as compiled
calls (:func:`pymc_rbm.training.chains.one_call`).

Both train the same model on the same data with block-Gibbs PCD-1 (Tieleman 2008) and mini-batches:

- 4x4 bars and stripes (30 patterns), 16 hidden units, mini-batches of 10 (scikit-learn's default);
- 784x500 on binarized MNIST (the first 2000 training rows of ``../shared/data/mnist``, or random
  binary rows where it is absent), mini-batches of 100.

The time per update is the difference between two runs of different lengths divided by the
difference of their updates, so that what each library does once per call (checking the data,
initialising the parameters and chains) is left out; ``fit`` records no log-likelihood
(``evaluation=None``) and shows no progress. Each figure is the fastest of ``--repeats`` interleaved
rounds on one BLAS thread (the machine may be shared). scikit-learn is optional: where it is missing
only ``fit`` is timed. Run from the repository root::

    python benchmarks/training_speed.py [--repeats 3] [--only small]
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import scipy.linalg  # noqa: F401  (numba's np.dot uses SciPy's BLAS: load it before limiting threads)
from threadpoolctl import threadpool_limits

import numpy as np

from pymc_rbm.datasets import bars_and_stripes, load_mnist
from pymc_rbm.training import CD, PCD, SGD, Checkpoints, Init, fit

MNIST = Path(__file__).resolve().parents[2] / "shared" / "data" / "mnist" / "binarized_mnist_packed.npz"


def problems():
    """``(label, data, n_hidden, batch_size, learning_rate, (short, long) updates)`` of the timed runs."""
    if MNIST.exists():
        mnist = load_mnist(MNIST, split="train").images[:2000].astype(np.float64)
    else:
        mnist = (np.random.default_rng(0).random((2000, 784)) < 0.2).astype(np.float64)
    return [
        ("bars and stripes 4x4, 16 hidden, batch 10", bars_and_stripes(4), 16, 10, 0.05, (600, 6000)),
        ("784x500 (MNIST), batch 100", mnist, 500, 100, 0.01, (20, 120)),
    ]


#: The timed variants of fit: its defaults (centered, hidden units redrawn every update), the loop of
#: pymc-rbm 0.2 (uncentered, visible layer first from the carried hidden state), and float32.
VARIANTS = {
    "fit": {},
    "fit 0.2 loop": {"method": PCD(k=1, hidden="carry"), "optimizer": SGD(centered=False)},
    "fit float32": {"params": Init(dtype=np.float32)},
    "fit CD-1": {"method": CD(k=1)},
}


def fit_seconds(data, n_hidden, batch_size, learning_rate, n_updates, seed, **options) -> float:
    t = time.perf_counter()
    options = {"method": PCD(k=1), **options}
    fit(data, n_hidden, batch_size=batch_size, learning_rate=learning_rate, n_updates=n_updates, progress=False,
        rng=seed, evaluation=None, checkpoints=Checkpoints(updates=0), **options)
    return time.perf_counter() - t


def sklearn_seconds(data, n_hidden, batch_size, learning_rate, n_updates, seed):
    """Seconds of ``BernoulliRBM.fit`` for about ``n_updates`` updates, and the updates it made; None without
    scikit-learn."""
    try:
        from sklearn.neural_network import BernoulliRBM
    except ImportError:
        return None
    per_epoch = -(-data.shape[0] // batch_size)
    epochs = max(1, round(n_updates / per_epoch))
    rbm = BernoulliRBM(n_components=n_hidden, learning_rate=learning_rate, batch_size=batch_size, n_iter=epochs,
                       random_state=seed, verbose=False)
    t = time.perf_counter()
    rbm.fit(data)
    return time.perf_counter() - t, epochs * per_epoch


def per_update_ms(run, short: int, long: int):
    """Milliseconds per update from two runs of ``short`` and ``long`` updates (fixed costs cancel)."""
    a, b = run(short), run(long)
    if a is None or b is None:
        return None
    if isinstance(a, tuple):  # (seconds, updates made)
        (ta, na), (tb, nb) = a, b
        return (tb - ta) / (nb - na) * 1e3
    return (b - a) / (long - short) * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="interleaved rounds (fastest kept)")
    parser.add_argument("--only", choices=("small", "large"), help="time one problem: bars and stripes or 784x500")
    args = parser.parse_args()
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    rows = []
    with threadpool_limits(1):
        chosen = problems()
        if args.only:
            chosen = chosen[:1] if args.only == "small" else chosen[1:]
        for label, data, n_hidden, batch, lr, (short, long) in chosen:
            print(f"... {label}", flush=True)
            best = {name: np.inf for name in VARIANTS} | {"sklearn": np.inf}
            for options in VARIANTS.values():
                fit_seconds(data, n_hidden, batch, lr, 5, 0, **options)  # compile and warm up
            for r in range(args.repeats):
                for name, options in VARIANTS.items():
                    ms = per_update_ms(lambda n: fit_seconds(data, n_hidden, batch, lr, n, r, **options), short, long)
                    best[name] = min(best[name], ms)
                ms = per_update_ms(lambda n: sklearn_seconds(data, n_hidden, batch, lr, n, r), short, long)
                best["sklearn"] = min(best["sklearn"], np.inf if ms is None else ms)
            rows.append((label, best))
    print()
    print("ms per update of block-Gibbs PCD-1 (CD-1 where named), 1 BLAS thread, fastest of", args.repeats,
          "interleaved rounds")
    names = " ".join(f"{name:>13s}" for name in VARIANTS)
    header = f"{'problem':44s} {names} {'sklearn':>9s} {'ratios to sklearn':>20s}"
    print(header)
    print("-" * len(header))
    for label, best in rows:
        sk = best["sklearn"]
        line = f"{label:44s} " + " ".join(f"{best[name]:13.3f}" for name in VARIANTS)
        if np.isfinite(sk):
            print(line + f" {sk:9.3f} " + " ".join(f"{best[name] / sk:.2f}" for name in VARIANTS))
        else:
            print(line + f" {'(not installed)':>22s}")


if __name__ == "__main__":
    main()

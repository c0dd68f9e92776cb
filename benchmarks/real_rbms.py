"""Samplers through ``pm.sample`` on RBMs trained on MNIST, against exact answers where they exist.

For each model (``../shared/data/rbm_models/<name>.npz``; skipped with a
message when absent) and each sampler: ``pm.sample`` with 4 chains x 1000
draws after 1000 tuning draws, ``cores=1`` (``--draws``, ``--tune``,
``--chains``), the step it ran, the wall time of building the model and
sampling (and ``pm.sample``'s own ``sampling_time``), the mean and largest
absolute error of the 784 visible marginals against the exact ones, and the
warnings ``pm.sample`` logged (its convergence checks and the RBM stuck-chain
checks; PyMC's "rhat larger than 1.01" counts too, although logged as
information). Last, the same number of independent exact draws
(:func:`pymc_rbm.enumeration.sample_visible_exact`): the error that
sampling alone leaves.

The exact marginals come from enumerating the smaller layer
(:func:`pymc_rbm.estimators.moments_exact`, mnist_h10 and mnist_h20). They
are computed after the samplers, so the sampler listed first (the default)
pays the one-off enumeration within its own wall time, as a user's first
``pm.sample()`` does; later ones find it cached where they use it.

Models without exact marginals (mnist_h100 and mnist_h500, ``"halves"``)
get a second table: the ladder (rungs, the reference tuning chose), round
trips per chain and per second of sampling, the effective sample size of the
free energy F(v) over all chains and per second (ArviZ's ``ess``), and the
agreement of the visible marginals of chains 0-1 with those of chains 2-3,
as a ratio to what independent draws of the same number would show
(``sqrt(2/π) sqrt(2 p (1 - p) / n)`` per unit, averaged); every chain starts
from its own random state.

The peer, ``rbms-PT`` where the PyTorch package ``rbms`` is installed (it is
not a dependency): that package's parallel tempering on the same RBM, its
ladder placed as it places it (from the uniform distribution, swap acceptance
about 0.25), one Gibbs sweep per replica and round, the same chains, tuning
rounds and recorded draws, PyTorch on CPU in float32 with one thread.

Samplers (``--samplers``): ``default`` is ``pm.sample()`` with no ``step``;
``FlipTheState`` and ``ReplicaExchange`` name those steps (with their
defaults; the latter was ``pm.sample()``'s choice for these models before
:class:`~pymc_rbm.step_methods.ExactDraws`); ``FlipTheState-150`` is
flip-the-state with 150 sweeps a draw, a single long chain at about the
default's cost on mnist_h500; ``ReplicaExchange-uniform`` is
replica exchange from the uniform reference (``reference="zero"``), the
ladder before the reference was chosen in tuning; ``ReplicaExchange-1sweep``
is replica exchange with one sweep per rung and round
(``explorer_sweeps=1``), the step before its explorers' sweeps were adapted
in tuning: run beside ``default`` it measures what that adaptation gives;
``ReplicaExchange-plain`` has neither (uniform reference, one sweep per rung),
the classical ladder in ``β`` that the reference and the explorers improve on;
``ReplicaExchange-mixture`` starts the ladder from a mixture of the model's
mean-field fixed points, refitted in tuning to the states the chain visits
(``reference="mixture"``). Add a sampler to
:data:`SAMPLERS` (a function of the RBM variable that returns a step, or
None for the default) and a model to :data:`MODELS` to extend the tables.

Run from the repository root::

    ./dev python benchmarks/real_rbms.py
    ./dev python benchmarks/real_rbms.py --models mnist_h20 --samplers default
    ./dev python benchmarks/real_rbms.py --models mnist_h100 --samplers default ReplicaExchange-uniform
"""

from __future__ import annotations

import argparse
import logging
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RBM_MODELS = HERE.parent.parent / "shared" / "data" / "rbm_models"

#: model name -> how its reference marginals are obtained
MODELS = {"mnist_h10": "exact", "mnist_h20": "exact", "mnist_h100": "halves", "mnist_h500": "halves"}


def _flip_the_state(v):
    from pymc_rbm import FlipTheState

    return FlipTheState([v])


def _flip_the_state_long(v):
    from pymc_rbm import FlipTheState

    return FlipTheState([v], sweeps=150)


def _replica_exchange(v):
    from pymc_rbm import ReplicaExchange

    return ReplicaExchange([v])


def _replica_exchange_uniform(v):
    from pymc_rbm import ReplicaExchange

    return ReplicaExchange([v], reference="zero")


def _replica_exchange_one_sweep(v):
    from pymc_rbm import ReplicaExchange

    return ReplicaExchange([v], explorer_sweeps=1)


def _replica_exchange_plain(v):
    from pymc_rbm import ReplicaExchange

    return ReplicaExchange([v], reference="zero", explorer_sweeps=1)


def _replica_exchange_mixture(v):
    from pymc_rbm import ReplicaExchange

    return ReplicaExchange([v], reference="mixture")


#: sampler label -> function(RBM variable) -> step (None: pm.sample's own choice)
SAMPLERS = {
    "default": lambda v: None,
    "FlipTheState": _flip_the_state,
    "FlipTheState-150": _flip_the_state_long,
    "ReplicaExchange": _replica_exchange,
    "ReplicaExchange-uniform": _replica_exchange_uniform,
    "ReplicaExchange-1sweep": _replica_exchange_one_sweep,
    "ReplicaExchange-plain": _replica_exchange_plain,
    "ReplicaExchange-mixture": _replica_exchange_mixture,
}
#: The peer (run where the PyTorch package ``rbms`` is installed; not a dependency of pymc-rbm).
PEER = "rbms-PT"
#: The swap acceptance ``rbms`` aims at when it places its ladder.
PEER_TARGET_ACCEPTANCE = 0.25


def peer_available() -> bool:
    from importlib.util import find_spec

    return find_spec("rbms") is not None and find_spec("torch") is not None


def peer_ladder(model, target: float, torch):
    """``rbms``' placement of the inverse temperatures (``rbms.sampler.pt.find_inverse_temperatures``, whose
    release refers to an undefined ``clone_dict``): from β = 0 up a grid of 1000, a new rung where the swap
    acceptance with the last one, after 10 Gibbs sweeps of 100 chains at each, falls to ``target + 0.1``."""
    from rbms.sampler.pt import swap_configurations

    grid = torch.linspace(0, 1, 1000)
    selected = [0.0]
    prev, new = model.init_chains(num_samples=100), model.init_chains(num_samples=100)
    for b in grid[:-1].tolist():
        prev = model.sample_state(n_steps=10, chains=prev, beta=selected[-1])
        new = model.sample_state(n_steps=10, chains=new, beta=b)
        _, acc, _ = swap_configurations([prev, new], model, torch.tensor([selected[-1], b]))
        if acc[-1] < target + 0.1:
            selected.append(b)
            prev = {k: t.clone() for k, t in new.items()}
    if selected[-1] != 1.0:
        selected.append(1.0)
    return torch.tensor(selected)


def run_peer(params, *, draws: int, tune: int, chains: int, seed: int) -> dict:
    """Parallel tempering by the ``rbms`` package (PyTorch on CPU, float32, one thread): its ladder, then per
    round one Gibbs sweep of every replica at its β and its swap round; ``chains`` chains in one batch, the
    β = 1 replicas recorded after ``tune`` rounds. Round trips: a replica from β = 0 to β = 1 and back."""
    import torch
    from rbms.bernoulli_bernoulli.classes import BBRBM
    from rbms.sampler.pt import swap_configurations

    torch.manual_seed(seed)
    torch.set_num_threads(1)
    start = time.perf_counter()
    model = BBRBM(*(torch.tensor(a, dtype=torch.float32) for a in (params.W, params.vbias, params.hbias)))
    with torch.no_grad():
        betas = peer_ladder(model, PEER_TARGET_ACCEPTANCE, torch)
        k = betas.shape[0]
        replicas = [model.init_chains(num_samples=chains) for _ in range(k)]
        index = [torch.full((chains,), float(r)) for r in range(k)]
        last_end = np.full((k, chains), -1)
        trips = np.zeros(chains, dtype=np.int64)
        sampling_start = time.perf_counter()
        out = np.empty((chains, draws, params.n_visible), dtype=np.int8)
        for t in range(tune + draws):
            replicas = [model.sample_state(n_steps=1, chains=c, beta=float(b)) for c, b in zip(replicas, betas)]
            replicas, _, index = swap_configurations(replicas, model, betas, index)
            for end, rung in ((0, 0), (1, k - 1)):  # label at each end; a label back at β = 0 from β = 1 is a trip
                labels = index[rung].long().numpy()
                for c, lab in enumerate(labels):
                    if end == 0 and last_end[lab, c] == 1 and t >= tune:
                        trips[c] += 1
                    last_end[lab, c] = end
            if t >= tune:
                out[:, t - tune] = replicas[-1]["visible"].numpy()
        sampling = time.perf_counter() - sampling_start
    from pymc_rbm.energy import free_energy

    draws_v = out.astype(np.int64)
    return {"draws": draws_v, "wall": time.perf_counter() - start, "sampling": sampling, "step": "rbms PT",
            "warnings": [], "free_energy": free_energy(draws_v.astype(np.float64), params), "round_trips": trips,
            "rungs": int(k), "reference": "zero"}


def run_any(label, params, **kwargs) -> dict:
    """:func:`run_sampler` for a sampler of :data:`SAMPLERS`, :func:`run_peer` for the peer."""
    return run_peer(params, **kwargs) if label == PEER else run_sampler(params, SAMPLERS[label], **kwargs)


class _Records(logging.Handler):
    """Keeps the records of the ``pymc`` logger during one run."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.records: list[logging.LogRecord] = []

    def emit(self, record):
        self.records.append(record)


def load(name: str):
    """The RBMParams of a model, or None when its file is absent."""
    from pymc_rbm import RBMParams

    path = RBM_MODELS / f"{name}.npz"
    if not path.exists():
        return None
    with np.load(path) as d:
        return RBMParams(d["W"], d["vbias"], d["hbias"])


def run_sampler(params, make_step, *, draws: int, tune: int, chains: int, seed: int) -> dict:
    """One ``pm.sample`` run: draws, wall time, the step that ran and the warnings logged."""
    import pymc as pm

    from pymc_rbm import RBM

    handler = _Records()
    logger = logging.getLogger("pymc")
    old_level, old_handlers = logger.level, list(logger.handlers)
    for h in old_handlers:  # kept for the notes under the table instead of printed amid it
        logger.removeHandler(h)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            start = time.perf_counter()
            with pm.Model():
                v = RBM("v", params.W, params.vbias, params.hbias, log_partition="auto" if min(
                    params.n_visible, params.n_hidden) <= 20 else None)
                step = make_step(v)
                idata = pm.sample(draws=draws, tune=tune, chains=chains, cores=1, random_seed=seed,
                                  progressbar=False, step=step)
            wall = time.perf_counter() - start
    finally:
        logger.removeHandler(handler)
        for h in old_handlers:
            logger.addHandler(h)
        logger.setLevel(old_level)
    messages = [r.getMessage() for r in handler.records]
    picked = [m.split(":")[0] for m in messages if m.endswith(": [v]")]
    # PyMC logs "rhat larger than 1.01" at level INFO; it is a warning to the user all the same
    warned = [m for r, m in zip(handler.records, messages) if r.levelno >= logging.WARNING or "rhat" in m]
    warned += [f"{w.category.__name__}: {w.message}" for w in caught]
    stats = idata.sample_stats
    return {
        "draws": np.asarray(idata.posterior["v"].values),
        "wall": wall,
        "sampling": float(idata.posterior.attrs.get("sampling_time", np.nan)),
        "step": picked[0] if picked else "?",
        "warnings": warned,
        "free_energy": np.asarray(stats["free_energy"].values) if "free_energy" in stats else None,
        "round_trips": np.asarray(stats["round_trips"].values[:, -1]) if "round_trips" in stats else None,
        "rungs": int(stats["n_temperatures"].values[:, -1].max()) if "n_temperatures" in stats else 1,
        "reference": getattr(step, "reference_in_use", "(tuned)" if step is None else "-"),
    }


def halves_ratio(draws: np.ndarray) -> float:
    """Mean |marginals of chains 0-1 - those of chains 2-3| over what independent draws of as many would show."""
    half = draws.shape[0] // 2
    a, b = draws[:half].reshape(-1, draws.shape[-1]).mean(0), draws[half:].reshape(-1, draws.shape[-1]).mean(0)
    p = draws.reshape(-1, draws.shape[-1]).mean(0)
    n = half * draws.shape[1]
    iid = np.sqrt(2.0 / np.pi) * np.sqrt(2.0 * p * (1.0 - p) / n)
    return float(np.abs(a - b).mean() / iid.mean())


def halves_table(name, params, args) -> list[str]:
    """The table of a model without exact marginals (module docstring); returns the warnings as notes."""
    import arviz as az

    notes = []
    for label in args.samplers:
        r = run_any(label, params, draws=args.draws, tune=args.tune, chains=args.chains, seed=args.seed)
        trips = r["round_trips"]
        trips_s = "-" if trips is None else ",".join(str(int(t)) for t in trips)
        per_s = np.nan if trips is None else float(trips.sum()) / r["sampling"]
        ess = float(az.ess(r["free_energy"])) if r["free_energy"] is not None else np.nan
        print(f"{name:<10} {label:<24} {r['step']:<16} {r['rungs']:>5} {r['reference']:>10} {r['wall']:>8.1f} "
              f"{trips_s:>16} {per_s:>8.3f} {ess:>8.1f} {ess / r['sampling']:>7.3f} {halves_ratio(r['draws']):>7.2f} "
              f"{len(r['warnings']):>8}", flush=True)
        notes += [f"{name} {label}: {w}" for w in r["warnings"]]
    return notes


def exact_marginals(params) -> tuple[np.ndarray, float]:
    """Exact visible marginals (by enumeration) and the seconds they took."""
    from pymc_rbm.estimators import moments_exact

    start = time.perf_counter()
    m = moments_exact(params).v
    return m, time.perf_counter() - start


def errors(draws: np.ndarray, exact: np.ndarray) -> tuple[float, float]:
    """Mean and largest absolute error of the sampled visible marginals."""
    diff = np.abs(draws.reshape(-1, draws.shape[-1]).mean(axis=0) - exact)
    return float(diff.mean()), float(diff.max())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    ap.add_argument("--samplers", nargs="+", default=[*SAMPLERS, PEER], choices=[*SAMPLERS, PEER])
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--tune", type=int, default=1000)
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args(argv)
    if PEER in args.samplers and not peer_available():
        print(f"{PEER}: skipped (the PyTorch package rbms is not installed; it is not a dependency of pymc-rbm)")
        args.samplers = [s for s in args.samplers if s != PEER]

    header = (f"{'model':<10} {'sampler':<22} {'step':<16} {'wall s':>8} {'sample s':>9} "
              f"{'mean err':>9} {'max err':>8} {'warnings':>8}")
    print(f"pm.sample, {args.chains} chains x {args.draws} draws after {args.tune} tuning draws, cores=1; "
          "wall: building the model and sampling; errors of the visible marginals against exact")
    print(header)
    print("-" * len(header))
    notes = []
    halves = []
    for name in args.models:
        params = load(name)
        if params is None:
            print(f"{name:<10} skipped: {RBM_MODELS / (name + '.npz')} is absent")
            continue
        if MODELS[name] == "halves":
            halves.append((name, params))
            continue
        runs = {label: run_any(label, params, draws=args.draws, tune=args.tune, chains=args.chains, seed=args.seed)
                for label in args.samplers}
        exact, exact_s = exact_marginals(params)
        for label, r in runs.items():
            mean_err, max_err = errors(r["draws"], exact)
            print(f"{name:<10} {label:<22} {r['step']:<16} {r['wall']:>8.1f} {r['sampling']:>9.1f} "
                  f"{mean_err:>9.4f} {max_err:>8.4f} {len(r['warnings']):>8}", flush=True)
            notes += [f"{name} {label}: {w}" for w in r["warnings"]]
        from pymc_rbm.enumeration import sample_visible_exact

        start = time.perf_counter()
        independent = sample_visible_exact(params, args.chains * args.draws, rng=args.seed)
        seconds = time.perf_counter() - start
        mean_err, max_err = errors(independent, exact)
        label = f"exact draws, {args.chains * args.draws}"
        print(f"{name:<10} {label:<22} {'(reference)':<16} {seconds:>8.1f} {'':>9} {mean_err:>9.4f} {max_err:>8.4f} "
              f"{'':>8}", flush=True)
        notes.append(f"{name}: exact marginals by enumeration in {exact_s:.1f} s (after the samplers: cached where "
                     "a sampler enumerated already)")
    if halves:
        print(f"\nNo exact marginals: the ladder, round trips, ESS of F(v), and chains 0-1 against chains 2-3 "
              f"(over what independent draws allow); {args.chains} chains x {args.draws} draws after {args.tune}")
        header = (f"{'model':<10} {'sampler':<24} {'step':<16} {'rungs':>5} {'reference':>10} {'wall s':>8} "
                  f"{'round trips':>16} {'trips/s':>8} {'ESS F':>8} {'ESS/s':>7} {'halves':>7} {'warnings':>8}")
        print(header)
        print("-" * len(header))
        for name, params in halves:
            notes += halves_table(name, params, args)
    print("\n".join(["", *notes]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Moments ``⟨v⟩``, ``⟨h⟩``, ``⟨v hᵀ⟩`` of an RBM from Markov chains, with standard errors.

Several independent chains of block Gibbs or flip-the-state sweeps (the
kernels of :mod:`pymc_rbm.kernels`, at β = 1) run after a burn-in. The
averages are Rao-Blackwellized: after each sweep the state ``(v, h)`` is a
draw from the joint distribution (at stationarity), so

    ⟨h⟩ = E[p(h = 1 | v)],   ⟨v hᵀ⟩ = E[v p(h = 1 | v)ᵀ],   ⟨v⟩ = E[p(v = 1 | h)],

whose conditional means (:func:`~pymc_rbm.energy.mean_hiddens`,
:func:`~pymc_rbm.energy.mean_visibles`) are averaged instead of the 0/1
states: the same expectation with less variance. Each chain's time average is
one estimate; the chains are independent, so the standard error of the
overall mean is the standard deviation between chains over ``sqrt(n_chains)``,
which accounts for the autocorrelation within a chain without modelling it
(as long as every chain is long compared to its autocorrelation time and has
forgotten its start: check the ``r_hat``-like ratio in the diagnostics).
"""

from __future__ import annotations

import time

import numpy as np

from pymc_rbm._runtime import Progress
from pymc_rbm.energy import mean_hiddens, mean_visibles
from pymc_rbm.estimators.exact import ExactMoments
from pymc_rbm.kernels import flip_sweep, gibbs_sweep, init_state
from pymc_rbm.kernels.operators import operator_alpha
from pymc_rbm.params import RBMParams
from pymc_rbm.validation import check_binary, check_positive_int

__all__ = ["SampledMoments", "moments_sampling"]


class SampledMoments(ExactMoments):
    """:class:`~pymc_rbm.estimators.ExactMoments` estimated by sampling, with standard errors.

    It is an ``ExactMoments`` (``v``, ``h``, ``vh``, unpacking and
    ``isinstance`` work as for every other method) with two more attributes.

    Attributes
    ----------
    stderr : ExactMoments
        Standard error of each entry of ``v`` (n_visible,), ``h``
        (n_hidden,) and ``vh`` (n_visible, n_hidden).
    diagnostics : dict
        ``n_chains``, ``n_sweeps``, ``burn_in``, ``operator`` (α),
        ``seconds``, ``chain_means`` (an ExactMoments whose arrays have a
        leading chain axis: each chain's own estimate), ``max_z_between``
        (the largest ``|chain mean - overall mean| / (stderr √n_chains)``
        over entries of ``v`` and ``h``: values far above 4-5 mean a chain
        did not mix or forget its start).
    """

    def __new__(cls, v, h, vh, *, stderr: ExactMoments, diagnostics: dict):
        self = super().__new__(cls, v, h, vh)
        self.stderr = stderr
        self.diagnostics = diagnostics
        return self


def _start(rng: np.random.Generator, params: RBMParams, n_chains: int, init) -> np.ndarray:
    """Starting visible states (n_chains, n_visible): uniform draws or rows of ``init``."""
    if init is None:
        return (rng.random((n_chains, params.n_visible)) < 0.5).astype(np.float64)
    x = check_binary(init, params.n_visible, name="init", dtype=np.float64).reshape(-1, params.n_visible)
    if x.shape[0] == 0:
        raise ValueError("init has no rows")
    rows = rng.choice(x.shape[0], size=n_chains, replace=n_chains > x.shape[0])
    return x[rows]


def moments_sampling(
    params: RBMParams,
    *,
    n_chains: int = 20,
    n_sweeps: int = 2000,
    burn_in: int = 500,
    operator="gibbs",
    init=None,
    block: int = 64,
    rng=None,
    progress: bool = False,
) -> SampledMoments:
    """``⟨v⟩``, ``⟨h⟩`` and ``⟨v hᵀ⟩`` from independent Markov chains (stochastic).

    Parameters
    ----------
    params : RBMParams
    n_chains : int, default 20
        Independent chains, advanced together; at least 2 (the standard
        error comes from the spread between them).
    n_sweeps : int, default 2000
        Sweeps per chain that are averaged, after the burn-in.
    burn_in : int, default 500
        Sweeps per chain discarded first (may be 0).
    operator : {"gibbs", "flip"} or float, default "gibbs"
        Block Gibbs (:func:`~pymc_rbm.kernels.gibbs_sweep`), flip-the-state
        (:func:`~pymc_rbm.kernels.flip_sweep`), or the mixture with weight
        ``α`` for a float.
    init : array_like of shape (n_rows, n_visible), optional
        Binary rows to start the chains from (drawn with replacement when
        there are fewer rows than chains), e.g. training data; default:
        uniform random states. Not modified.
    block : int, default 64
        Sweeps whose ``v hᵀ`` are summed in one batched product (memory
        ``n_chains × block × (n_visible + n_hidden)``).
    rng : numpy.random.Generator or seed, optional
    progress : bool, default False
        Show a progress bar on stderr.

    Returns
    -------
    SampledMoments
        The means over chains and sweeps of the Rao-Blackwellized averages
        (module docstring), their standard errors and diagnostics.

    Examples
    --------
    >>> from pymc_rbm import RBMParams
    >>> from pymc_rbm.estimators import moments_exact, moments_sampling
    >>> p = RBMParams.random(8, 4, scale=0.5, rng=0)
    >>> m = moments_sampling(p, n_chains=10, n_sweeps=500, rng=1)
    >>> bool(abs(m.v - moments_exact(p).v).max() < 6 * m.stderr.v.max())
    True
    """
    t0 = time.perf_counter()
    if not isinstance(params, RBMParams):
        raise TypeError(f"params must be an RBMParams, got {type(params).__name__}")
    rng = np.random.default_rng(rng)
    n_chains = check_positive_int(
        n_chains, "n_chains", 2, " (the standard error comes from the spread between chains)"
    )
    n_sweeps = check_positive_int(n_sweeps, "n_sweeps")
    burn_in = check_positive_int(burn_in, "burn_in", 0)
    block = check_positive_int(block, "block")
    alpha = operator_alpha(operator)
    if alpha == 0.0:
        sweep = gibbs_sweep
    else:

        def sweep(rng, state, params):
            return flip_sweep(rng, state, params, alpha=alpha)

    state = init_state(rng, _start(rng, params, n_chains, init), params)
    nv, nh = params.n_visible, params.n_hidden
    sum_v = np.zeros((n_chains, nv))
    sum_h = np.zeros((n_chains, nh))
    sum_vh = np.zeros((n_chains, nv, nh))
    vs = np.empty((n_chains, min(block, n_sweeps), nv))
    ps = np.empty((n_chains, min(block, n_sweeps), nh))
    with Progress(burn_in + n_sweeps, "moments", progress) as bar:
        for _ in range(burn_in):
            state, _ = sweep(rng, state, params)
            bar.advance()
        filled = 0
        for t in range(n_sweeps):
            state, _ = sweep(rng, state, params)
            vs[:, filled] = state.v
            ps[:, filled] = mean_hiddens(state.v, params)  # E[h | v]
            sum_v += mean_visibles(state.h, params)  # E[v | h]
            filled += 1
            if filled == vs.shape[1] or t == n_sweeps - 1:
                sum_h += ps[:, :filled].sum(axis=1)
                sum_vh += np.matmul(vs[:, :filled].transpose(0, 2, 1), ps[:, :filled])
                filled = 0
            bar.advance()
    chain = ExactMoments(v=sum_v / n_sweeps, h=sum_h / n_sweeps, vh=sum_vh / n_sweeps)
    mean = ExactMoments(*(x.mean(axis=0) for x in chain))
    stderr = ExactMoments(*(x.std(axis=0, ddof=1) / np.sqrt(n_chains) for x in chain))
    spread = np.concatenate([stderr.v, stderr.h]) * np.sqrt(n_chains)
    dev = np.abs(np.concatenate([chain.v - mean.v, chain.h - mean.h], axis=1))
    max_z = float((dev[:, spread > 0] / spread[spread > 0]).max(initial=0.0))
    return SampledMoments(
        *mean,
        stderr=stderr,
        diagnostics={
            "n_chains": n_chains,
            "n_sweeps": n_sweeps,
            "burn_in": burn_in,
            "operator": alpha,
            "seconds": time.perf_counter() - t0,
            "chain_means": chain,
            "max_z_between": max_z,
        },
    )

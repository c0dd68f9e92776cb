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
import warnings

import numpy as np

from pymc_rbm._runtime import Progress, StopOnInterrupt
from pymc_rbm.energy import mean_hiddens, mean_visibles
from pymc_rbm.enumeration import ExactMoments
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


def _add_block(totals, vs, ps, qs, filled: int):
    """``totals`` with the first ``filled`` sweeps of the block buffers added (a new tuple)."""
    sum_v, sum_h, sum_vh, n = totals
    v, p, q = vs[:, :filled], ps[:, :filled], qs[:, :filled]
    return sum_v + q.sum(axis=1), sum_h + p.sum(axis=1), sum_vh + np.matmul(v.transpose(0, 2, 1), p), n + filled


def _warn_interrupted(n_done: int, burn_in: int, n_sweeps: int, seconds: float) -> None:
    what = (
        f"the moments average the {n_done} sweeps done after the burn-in (diagnostics['n_sweeps'])"
        if n_done
        else f"during the burn-in of {burn_in} sweeps, so no sweep was averaged and the moments are NaN"
    )
    warnings.warn(
        f"moments_sampling was interrupted (Ctrl-C) after {seconds:.1f} s, {n_done} of {n_sweeps} sweeps: {what} "
        "(diagnostics['interrupted'] is True)",
        RuntimeWarning,
        stacklevel=3,
    )


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
        (module docstring), their standard errors and diagnostics. Ctrl-C
        stops the run: the sweeps done so far are averaged, with a warning
        (``diagnostics["interrupted"]``, ``diagnostics["n_sweeps"]``).

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
    rows = min(block, n_sweeps)
    vs, ps, qs = np.empty((n_chains, rows, nv)), np.empty((n_chains, rows, nh)), np.empty((n_chains, rows, nv))
    # (sum of E[v | h], sum of E[h | v], sum of v E[h | v]ᵀ, sweeps in them): replaced whole, never updated in
    # place, so that a Ctrl-C at any point leaves them consistent; the block buffers hold the sweeps since
    totals = (np.zeros((n_chains, nv)), np.zeros((n_chains, nh)), np.zeros((n_chains, nv, nh)), 0)
    written = 0
    with StopOnInterrupt() as guard, Progress(burn_in + n_sweeps, "moments", progress) as bar:
        for _ in range(burn_in):
            state, _ = sweep(rng, state, params)
            bar.advance()
        for _ in range(n_sweeps):
            state, _ = sweep(rng, state, params)
            row = written - totals[3]
            vs[:, row] = state.v
            ps[:, row] = mean_hiddens(state.v, params)  # E[h | v]
            qs[:, row] = mean_visibles(state.h, params)  # E[v | h]
            written += 1
            if written - totals[3] == rows or written == n_sweeps:
                totals = _add_block(totals, vs, ps, qs, written - totals[3])
            bar.advance()
    if guard.interrupted:
        totals = _add_block(totals, vs, ps, qs, written - totals[3])  # the sweeps of the unfinished block
        _warn_interrupted(totals[3], burn_in, n_sweeps, time.perf_counter() - t0)
    sum_v, sum_h, sum_vh, n_done = totals
    with np.errstate(invalid="ignore", divide="ignore"):  # no sweep averaged (Ctrl-C in the burn-in): NaN
        chain = ExactMoments(v=sum_v / n_done, h=sum_h / n_done, vh=sum_vh / n_done)
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
            "n_sweeps": n_done,
            "burn_in": burn_in,
            "interrupted": guard.interrupted,
            "operator": alpha,
            "seconds": time.perf_counter() - t0,
            "chain_means": chain,
            "max_z_between": max_z,
        },
    )

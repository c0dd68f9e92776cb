"""Negative phases: where the model term of the gradient comes from.

A negative phase is a pair of functions with nothing hidden: ``init(rng, data,
params, batch_size) -> chains`` makes the persistent chains (``None`` when there are
none) and ``step(rng, chains, params, batch) -> (statistics, chains, info)``
gives the model statistics for one update and the chains to carry to the
next. The chains are ordinary values (:class:`~pymc_rbm.kernels.RBMState`,
:class:`~pymc_rbm.kernels.tempering.TemperedState`) that
:func:`~pymc_rbm.training.fitting.fit` returns, so training can be resumed.

- CD-k: chains start at the batch and run ``k`` sweeps (Hinton 2002).
- PCD-k: the chains persist between updates (Tieleman 2008). With block
  Gibbs they either redraw ``h`` at the new parameters and sweep from ``v``
  (:func:`~pymc_rbm.training.chains.gibbs_sweeps_from_visible`, the default)
  or carry ``h`` and sweep the visible layer first
  (:func:`~pymc_rbm.training.chains.gibbs_sweeps_visible_first`), one matrix
  product fewer.
- t-PT k: persistent ladders of ``t`` replicas, ``k`` sweeps each, then a
  swap round (Brügge, Fischer & Igel 2013, §4.2; :mod:`pymc_rbm.kernels.tempering`); the
  replicas at β = 1 are the samples. The ladder adapts as the model learns:
  every ``adapt_every`` updates (default 50) its ``t`` rungs are respaced by
  :func:`~pymc_rbm.kernels.tempering.equalized_ladder` of the pairs' measured
  swap rejections, for equal communication barriers between neighbours (Syed,
  Bouchard-Côté, Deligiannidis & Doucet 2022), the rule of every ladder of the
  package; the ladder and its rates travel with the chains.
- Deterministic: the moments of :func:`pymc_rbm.estimators.moments`.
- Categorical and Gaussian RBMs: CD-k, PCD-k and the exact model term of
  :func:`family_phase`, in the flat coordinates of
  :mod:`~pymc_rbm.training.families` (chains of labels or reals).

The chains of CD and PCD on binary RBMs, their sweeps (the kernels of
:mod:`pymc_rbm.kernels`, the ones ``pm.sample`` uses) and the wormhole moves
(Hinton, Welling & Mnih 2003) are those of :mod:`pymc_rbm.training.chains`;
the ladders of t-PT those of :mod:`pymc_rbm.kernels.tempering`. This module
assembles the gradient of an update from a phase (:func:`phase_gradient`, and
its centered form :func:`centered_phase_gradient`). On small models (below the
dense path of :mod:`pymc_rbm.kernels.compiled`,
:func:`~pymc_rbm.training.chains.one_call`) block-Gibbs PCD and CD and the
centered gradient of their samples (:func:`centered_batch_gradient`) run as
compiled calls of the same arithmetic: the same uniforms, layer rule and BLAS
products, so the same values bit for bit, without NumPy's per-call costs.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, NamedTuple

import numpy as np

from pymc_rbm.energy import mean_hiddens
from pymc_rbm.estimators.tap import UnphysicalFixedPoint
from pymc_rbm.kernels import compiled, training_steps
from pymc_rbm.kernels import tempering as _tempering
from pymc_rbm.kernels.gibbs import gibbs_sweep, init_state
from pymc_rbm.kernels.layer import GIBBS
from pymc_rbm.kernels.metropolis import acceptance_probability
from pymc_rbm.kernels.operators import operator_rule
from pymc_rbm.kernels.state import RBMState
from pymc_rbm.kernels.sweep import sweep
from pymc_rbm.params import RBMParams
from pymc_rbm.training.chains import (
    chain_in_one_call,
    gibbs_sweeps_from_visible,
    gibbs_sweeps_visible_first,
    one_call,
    run_chains,
    start_rows,
    wormhole_move,
)
from pymc_rbm.training.gradients import (
    Gradient,
    centered_from_ordinary,
    centered_update,
    data_statistics,
    gradient_from_statistics,
    model_statistics,
    sample_statistics,
)
from pymc_rbm.validation import check_positive_int

__all__ = [
    "NegativePhase",
    "SAMPLING_METHODS",
    "contrastive_divergence",
    "persistent_contrastive_divergence",
    "parallel_tempering",
    "DEFAULT_ADAPT_EVERY",
    "check_adapt_every",
    "deterministic",
    "phase_gradient",
    "centered_phase_gradient",
    "HIDDEN_MODES",
    "centered_from_samples",
    "centered_batch_gradient",
    "family_phase",
    "FAMILY_METHODS",
]

#: Methods whose model term comes from Markov chains.
SAMPLING_METHODS = ("cd", "pcd", "pt")


class NegativePhase(NamedTuple):
    """The model term of the gradient, as two pure functions.

    Attributes
    ----------
    name : str
        ``"cd"``, ``"pcd"``, ``"pt"`` or a deterministic method's name.
    init : callable
        ``init(rng, data, params, batch_size) -> chains``: the persistent
        chains (``None`` for CD and the deterministic methods).
    step : callable
        ``step(rng, chains, params, batch) -> (Moments, chains, info)``:
        the model statistics for one update, the chains to carry on, and a
        dict of floats (acceptance rates) for the history.
    gradient : callable or None
        ``gradient(rng, chains, params, batch) -> (Gradient, chains, info)``:
        the whole gradient of an update (data term minus model term), where
        the phase computes it in one piece; None otherwise
        (:func:`phase_gradient` then combines ``step`` with the data term).
        It may update in place the chains it returned itself (never others).
    samples : callable or None
        ``samples(rng, chains, params, batch) -> (v, ph, chains, info)``: the
        sampling phases' negative samples ``v`` and their hidden probabilities
        ``ph = p(h | v)`` (``step`` is their :func:`sample_statistics`). The
        centered gradient takes its products on centered samples from them,
        at the cost of the plain ones.
    fused : callable or None
        ``fused(chains, params) -> bool``: whether ``gradient`` is one compiled
        call for these chains and parameters (else it is ``step`` and the data
        term, and :func:`phase_gradient` may as well use ``samples``). None:
        always, where there is a ``gradient``. ``gradient`` is called only
        where ``fused`` says so.
    """

    name: str
    init: Callable
    step: Callable
    gradient: Callable | None = None
    samples: Callable | None = None
    fused: Callable | None = None


def _from_samples(name, init, samples, gradient=None) -> NegativePhase:
    """A sampling phase whose ``step`` is the statistics of its ``samples``."""

    def step(rng, chains, params, batch):
        v, ph, chains, info = samples(rng, chains, params, batch)
        return sample_statistics(v, ph), chains, info

    return NegativePhase(name, init, step, gradient, samples)


def phase_gradient(phase: NegativePhase, rng: np.random.Generator, chains, params, batch, *, centered: bool = False):
    """The gradient of one update: the data term of ``batch`` minus ``phase``'s model term (stochastic).

    Parameters
    ----------
    phase : NegativePhase
    rng : numpy.random.Generator
    chains
        The phase's chains (None for CD and the deterministic methods).
    params : RBMParams
    batch : ndarray of shape (n_samples, n_visible)
    centered : bool, default False
        Return the centered gradient's ascent direction instead
        (:func:`~pymc_rbm.training.gradients.center`), with the batch's data
        means ``⟨v⟩`` and ``⟨p(h | v)⟩`` as offsets: the same model term, for
        every phase.

    Returns
    -------
    gradient : Gradient
    chains
        To carry to the next update.
    info : dict
    """
    if centered:
        grad, (mu, lam), chains, info = centered_phase_gradient(phase, rng, chains, params, batch)
        return centered_update(grad, mu, lam), chains, info
    if phase.gradient is not None and (phase.fused is None or phase.fused(chains, params)):
        return phase.gradient(rng, chains, params, batch)
    return _step_gradient(phase.step, rng, chains, params, batch)


def centered_phase_gradient(phase: NegativePhase, rng: np.random.Generator, chains, params, batch):
    """The centered gradient of one update, in the centered parameters, and its offsets (stochastic).

    :func:`~pymc_rbm.training.gradients.centered_gradient` with the batch's
    data means ``μ = ⟨v⟩``, ``λ = ⟨p(h | v)⟩`` as offsets. An optimiser steps in
    the centered parameters, and
    :func:`~pymc_rbm.training.gradients.centered_update` maps its step to
    ``(W, vbias, hbias)`` (what :func:`~pymc_rbm.training.fit` does): for
    plain gradient ascent that is :func:`phase_gradient` with ``centered=True``;
    momentum and Adam need the centered coordinates.

    Returns
    -------
    gradient : Gradient
        In the centered parameters ``(W, b, c)``.
    offsets : tuple of ndarray
        ``(μ, λ)``.
    chains
    info : dict
    """
    if phase.gradient is not None and (phase.fused is None or phase.fused(chains, params)):
        grad, chains, info = phase.gradient(rng, chains, params, batch)
        # the fused gradient keeps no data means: one product more, on small models only
        offsets = batch.mean(axis=0), mean_hiddens(batch, params).mean(axis=0)
        return centered_from_ordinary(grad, *offsets), offsets, chains, info
    if phase.samples is not None:
        v, ph, chains, info = phase.samples(rng, chains, params, batch)
        grad, offsets = centered_batch_gradient(batch, params, v, ph)
        return grad, offsets, chains, info
    negative, chains, info = phase.step(rng, chains, params, batch)
    positive = data_statistics(batch, params)
    offsets = positive.v, positive.h
    return centered_from_ordinary(gradient_from_statistics(positive, negative), *offsets), offsets, chains, info


def centered_from_samples(v_data, ph_data, v_model, ph_model) -> tuple[Gradient, tuple]:
    """The centered gradient of data and model samples, and its offsets, with the products on centered samples.

    ``G = ⟨(v - μ)(h - λ)ᵀ⟩_data - ⟨(v - μ)(h - λ)ᵀ⟩_model`` with ``μ, λ`` the
    data means: the two products cost what the plain ones do, and no pass over
    a ``(n_visible, n_hidden)`` array is added but two matrix-vector products.
    :func:`centered_batch_gradient` computes it for small models in one call.

    Parameters
    ----------
    v_data : ndarray of shape (n_samples, n_visible)
    ph_data : ndarray of shape (n_samples, n_hidden)
        ``p(h | v)`` of the data.
    v_model : ndarray of shape (n_chains, n_visible)
    ph_model : ndarray of shape (n_chains, n_hidden)

    Returns
    -------
    gradient : Gradient
        In the centered parameters.
    offsets : tuple of ndarray
        ``(μ, λ)`` of shapes (n_visible,) and (n_hidden,).
    """
    mu, lam = v_data.mean(axis=0), ph_data.mean(axis=0)
    G = (v_data - mu).T @ (ph_data - lam)
    G /= v_data.shape[0]
    G -= ((v_model - mu).T @ (ph_model - lam)) / v_model.shape[0]
    return Gradient(G, mu - v_model.mean(axis=0), lam - ph_model.mean(axis=0)), (mu, lam)


def centered_batch_gradient(batch, params, v_model, ph_model) -> tuple[Gradient, tuple]:
    """:func:`centered_from_samples` of a batch, its ``p(h | v)`` at ``params``, and model samples.

    Below the dense path's size (:func:`~pymc_rbm.training.chains.one_call`) it is one compiled call of
    the same arithmetic (:func:`~pymc_rbm.kernels.training_steps.centered_sample_gradient`):
    the same values, bit for bit.

    Parameters
    ----------
    batch : ndarray of shape (n_samples, n_visible)
    params : RBMParams
    v_model : ndarray of shape (n_chains, n_visible)
    ph_model : ndarray of shape (n_chains, n_hidden)

    Returns
    -------
    gradient : Gradient
    offsets : tuple of ndarray
        ``(μ, λ)``.
    """
    n_rows = max(batch.shape[0], v_model.shape[0])
    if type(params) is RBMParams and one_call(n_rows, params.n_visible, params.n_hidden, params.dtype) and all(
            a.dtype == params.dtype and a.flags.c_contiguous for a in (batch, v_model, ph_model)):
        G, g_v, g_h, mu, lam = training_steps.centered_sample_gradient(batch, params, v_model, ph_model)
        return Gradient(G, g_v, g_h), (mu, lam)
    return centered_from_samples(batch, mean_hiddens(batch, params), v_model, ph_model)


def _step_gradient(step, rng, chains, params, batch):
    """The gradient from a phase's ``step`` and the data term of ``batch``."""
    negative, chains, info = step(rng, chains, params, batch)
    return gradient_from_statistics(data_statistics(batch, params), negative), chains, info


def contrastive_divergence(kernel, k: int = 1, *, wormholes=None) -> NegativePhase:
    """CD-k: chains start at the batch, ``h ~ p(h | v)``, and run ``k`` sweeps of ``kernel``.

    Parameters
    ----------
    kernel : callable
        A sweep kernel (:func:`pymc_rbm.kernels.build_operator`).
    k : int, default 1
    wormholes : proposal, optional
        One wormhole move per chain after the sweeps (Hinton, Welling & Mnih 2003).

    Returns
    -------
    NegativePhase
    """

    k = check_positive_int(k, "k")

    def init(rng, data, params, batch_size=None):
        return None

    gibbs = kernel is gibbs_sweep and wormholes is None

    def samples(rng, chains, params, batch):
        if gibbs:  # init_state's check, then its draw of h and the sweeps in one compiled call where small
            batch = np.ascontiguousarray(params.visible.check(batch, params.n_visible, name="v", dtype=params.dtype))
            if chain_in_one_call(batch, params):
                h = np.empty((batch.shape[0], params.n_hidden), dtype=params.dtype)
                a = training_steps.gibbs_chain(rng, batch, h, params, k, first_draw=True, last_draw=False)
                return batch, params.hidden.mean(a), None, {}
        state, info = run_chains(rng, batch, params, kernel, k, wormholes)
        return state.v, mean_hiddens(state.v, params), None, info

    return _from_samples("cd", init, samples)


#: What persistent chains do with their hidden state between updates (:func:`persistent_contrastive_divergence`).
HIDDEN_MODES = ("redraw", "carry")


def persistent_contrastive_divergence(
    kernel, k: int = 1, *, n_chains: int | None = None, wormholes=None, hidden: str = "redraw"
) -> NegativePhase:
    """PCD-k: persistent chains, ``k`` sweeps of ``kernel`` per update.

    Parameters
    ----------
    kernel : callable
    k : int, default 1
    n_chains : int, optional
        Number of persistent chains; default the batch size (Brügge, Fischer & Igel 2013: "the
        number of samples used for the gradient approximation was set to be
        equal to the number of training examples in a (mini) batch"). They
        start at training rows.
    wormholes : proposal, optional
    hidden : {"redraw", "carry"}, default "redraw"
        Block Gibbs only (other kernels always redraw). ``"redraw"``: every
        update starts from the chains' visible states and draws ``h`` at the
        new parameters (:func:`~pymc_rbm.training.chains.gibbs_sweeps_from_visible`; as the ``rbms``
        package does), ``2k + 1`` products and the statistics'. ``"carry"``:
        the visible layer is swept first from the ``h`` the chains carry
        (:func:`~pymc_rbm.training.chains.gibbs_sweeps_visible_first`), one product fewer (pymc-rbm
        0.2). On binarized MNIST (784x500, centered, 2000 updates,
        ``benchmarks/training_quality.py``) they tie at PCD-10 (-132.29
        redrawn, -132.24 carried, seed 0) but not at PCD-1 (-132.65 redrawn,
        seed 0; -135.89 carried, seed 1).

    Returns
    -------
    NegativePhase

    Notes
    -----
    With ``hidden="carry"`` (block Gibbs, no wormholes) the sweeps are
    :func:`~pymc_rbm.training.chains.gibbs_sweeps_visible_first` from the chains' carried ``h``: it
    needs no redraw of ``h`` (which Gibbs' own hidden update would discard)
    and its last hidden probabilities are the statistics', so an update costs
    five matrix products instead of seven; for a model too small for the
    dense path of :mod:`pymc_rbm.kernels.compiled` the whole gradient is one
    compiled call (:func:`~pymc_rbm.kernels.training_steps.persistent_gibbs_gradient`,
    the same chain). Other kernels redraw ``h`` from ``p(h | v)`` at the new
    parameters and run their sweeps. With ``hidden="redraw"`` and block Gibbs,
    small models run the sweeps as one compiled call
    (:func:`~pymc_rbm.kernels.training_steps.gibbs_chain`, :func:`~pymc_rbm.training.chains.one_call`) with
    the values of the NumPy kernels, bit for bit.
    """

    k = check_positive_int(k, "k")
    n_chains = check_positive_int(n_chains, "n_chains", allow_none=True)
    if hidden not in HIDDEN_MODES:
        raise ValueError(f"hidden must be one of {HIDDEN_MODES}, got {hidden!r}")
    gibbs = kernel is gibbs_sweep and wormholes is None
    visible_first = gibbs and hidden == "carry"

    def init(rng, data, params, batch_size=None):
        n = n_chains or batch_size or data.shape[0]
        return init_state(rng, start_rows(rng, data, n), params)

    def samples(rng, chains, params, batch):
        if visible_first:
            state, ph = gibbs_sweeps_visible_first(rng, chains, params, k)
            return state.v, ph, state, {}
        if gibbs:
            state, ph = gibbs_sweeps_from_visible(rng, chains.v, params, k)
            return state.v, ph, state, {}
        # the parameters changed since the last update: h is redrawn before the first sweep
        state, info = run_chains(rng, chains.v, params, kernel, k, wormholes)
        return state.v, mean_hiddens(state.v, params), state, info

    phase = _from_samples("pcd", init, samples)

    returned = []  # the chains this phase returned last: only those are updated in place

    def fused(chains, params):  # BLAS products pay on larger models; the compiled gradient is float64
        return params.dtype == np.float64 and not compiled.dense(chains.v.shape[0], params.n_visible, params.n_hidden)

    def gradient(rng, chains, params, batch):  # called where fused(chains, params) says so (phase_gradient)
        if returned and chains is returned[0]:
            v, h = chains.v, chains.h
        else:  # chains of the caller (a resumed fit) stay as they are
            v, h = (np.array(x, dtype=np.float64, order="C") for x in (chains.v, chains.h))
        grad = training_steps.persistent_gibbs_gradient(rng, batch, v, h, params, k)
        returned[:] = [RBMState(v, h)]
        return Gradient(*grad), returned[0], {}

    if visible_first and compiled.available():
        return phase._replace(gradient=gradient, fused=fused)
    return phase


#: Updates between two adaptations of a PT ladder in training (:func:`parallel_tempering`).
DEFAULT_ADAPT_EVERY = 50

#: Whether the PT ladder of training takes each pair's barrier as ``-log`` of its acceptance
#: (:func:`~pymc_rbm.kernels.tempering.communication_barrier`), as ``ReplicaExchange`` and the ladder estimator do.
PT_SATURATING = True


def parallel_tempering(
    kernel, k: int = 1, *, betas, n_chains: int | None = None, wormholes=None,
    adapt_every: int | None = DEFAULT_ADAPT_EVERY,
) -> NegativePhase:
    """t-PT k: persistent ladders of replicas, ``k`` sweeps each, then one swap round; the ladder adapts.

    Every update redraws the replicas' hidden states at the ladder in force
    (the parameters changed), runs ``k`` sweeps of every replica at its β and
    one swap round of neighbours (Brügge, Fischer & Igel 2013, §4.2;
    :func:`~pymc_rbm.kernels.tempering.build_kernel`). Each of these moves
    leaves the product ``Π_r p_{β_r}`` of the current parameters invariant
    for the ladder in force; the ladder changes only between updates, as the
    parameters do, so every update is exact for the ladder it ran at.

    The swap rates are measured over windows of ``adapt_every`` updates (a
    window ends where ``chains.n_rounds``, one swap round an update, is a
    multiple of it; windows of 50 updates with a fixed ladder). At the end of
    each window the ladder is replaced by
    :func:`~pymc_rbm.kernels.tempering.equalized_ladder` of the pairs' mean
    rejection rates in the window, with as many rungs as before and the same
    end points: the rule of every ladder of the package
    (``ReplicaExchange``, :func:`~pymc_rbm.estimators.log_partition_ladder`),
    which spaces the rungs so that neighbours have equal communication
    barriers (Syed, Bouchard-Côté, Deligiannidis & Doucet 2022). A pair's
    rate is the Rao-Blackwellised rejection ``1 - min(1, exp(log_ratio))`` of
    the rounds that attempted it (every other round), averaged over the
    chains; each pair's barrier is ``-log`` of its acceptance
    (``saturating=True``, :data:`PT_SATURATING`): training keeps a few rungs
    over a transition that sharpens as it learns, and there a pair that
    rarely swaps must count as the several pairs it needs, not as one.

    Parameters
    ----------
    kernel : callable
        Sweep kernel of every replica, at the replica's β.
    k : int, default 1
    betas : array_like of shape (n_temperatures,)
        The starting ladder: strictly increasing, ending at 1 (the replicas
        that give the samples). Chains that carry their own ladder
        (``chains.betas``, as the phase returns them) continue with theirs;
        chains without one (of an earlier version) start from ``betas``.
    n_chains : int, optional
        Number of ladders; default the batch size.
    wormholes : proposal, optional
        Offered to the β = 1 replicas after the swap round.
    adapt_every : int or None, default :data:`DEFAULT_ADAPT_EVERY` (50)
        Updates between adaptations, at least 2 (a pair is attempted every
        other round); None or 0 keeps the ladder fixed (t-PT k as in Brügge,
        Fischer & Igel 2013, the draws of earlier versions). With the default
        batch of 100 chains a window holds 25 rounds of 100 ladders for each
        pair, a rejection rate to about a percent, while the parameters move
        little in 50 updates at the usual learning rates; the ladder then
        follows the model as it sharpens, at the cost of one interpolation of
        ``n_temperatures`` points.

    Returns
    -------
    NegativePhase
        Its chains are a :class:`~pymc_rbm.kernels.tempering.TemperedState`
        with ``v``, ``h`` of shape ``(n_temperatures, n_chains, ·)`` and the
        ladder in force and its rejection accumulators (``betas``,
        ``rejection_sum``, ``attempts``: those of the window so far), so that
        a checkpoint resumes draw for draw. ``info`` holds ``swap_accept``
        (the fraction of attempted swaps accepted) and, once every pair has
        been attempted in the window, ``barrier``: the communication barrier
        ``Λ = communication_barrier(betas, rejection, saturating=True)[-1]`` of
        the window's rates so far (absent on the first update of a window,
        where half the pairs have no rate yet).
    """
    betas = _tempering.check_ladder(betas)
    if betas[-1] != 1.0:
        raise ValueError(f"the last inverse temperature must be 1 (the model itself), got {betas[-1]}")
    pt_step = _tempering.build_kernel(kernel, k=check_positive_int(k, "k"))
    n_chains = check_positive_int(n_chains, "n_chains", allow_none=True)
    adapt_every = check_adapt_every(adapt_every)
    window = adapt_every or DEFAULT_ADAPT_EVERY  # the rates (and the barrier of info) of a fixed ladder too

    def init(rng, data, params, batch_size=None):
        n = n_chains or batch_size or data.shape[0]
        state = _tempering.init_tempered_state(rng, start_rows(rng, data, n), params, betas)
        return _with_ladder(state, betas, np.zeros(betas.size - 1), np.zeros(betas.size - 1, dtype=np.int64))

    def samples(rng, chains, params, batch):
        ladder, rejection_sum, attempts = _chain_ladder(chains, betas)
        fresh = _tempering.init_tempered_state(rng, chains.v, params, ladder)._replace(n_rounds=chains.n_rounds)
        state, tinfo = pt_step(rng, fresh, params, ladder)
        swap = tinfo.swap
        swaps = swap.accepted[swap.attempted]
        info = {"swap_accept": float(swaps.mean()) if swaps.size else float("nan")}
        tried = swap.attempted
        rejection_sum[tried] += 1.0 - acceptance_probability(swap.log_ratio[tried]).mean(axis=1)
        attempts[tried] += 1
        if np.all(attempts > 0):
            rejection = np.clip(rejection_sum / attempts, 0.0, 1.0)
            info["barrier"] = float(
                _tempering.communication_barrier(ladder, rejection, saturating=PT_SATURATING)[-1])
            if state.n_rounds % window == 0:  # the window ends: a new ladder (when adapting), new rates
                if adapt_every and ladder.size > 2:
                    ladder = _tempering.equalized_ladder(ladder, rejection, ladder.size, saturating=PT_SATURATING)
                rejection_sum[:], attempts[:] = 0.0, 0
        state = _with_ladder(state, ladder, rejection_sum, attempts)
        top = RBMState(state.v[-1], state.h[-1])
        if wormholes is not None:
            top, wh = wormhole_move(rng, top, params, wormholes)
            info.update(wh)
            state = state._replace(v=state.v.copy(), h=state.h.copy())
            state.v[-1], state.h[-1] = top.v, top.h
        return top.v, mean_hiddens(top.v, params), state, info

    return _from_samples("pt", init, samples)


def check_adapt_every(adapt_every) -> int:
    """:func:`parallel_tempering`'s ``adapt_every`` checked: an int >= 2, or 0 for a fixed ladder (given as None or 0).

    Raises
    ------
    ValueError
        For 1 (each pair is attempted every other update), a negative value or a non-integer.
    """
    if adapt_every is None:
        return 0
    n = check_positive_int(adapt_every, "adapt_every", minimum=0)
    if n == 1:
        raise ValueError(
            "adapt_every must be at least 2 (each pair of replicas is attempted every other update), or None / 0 "
            "for a fixed ladder; got 1"
        )
    return n


def _with_ladder(state, ladder, rejection_sum, attempts):
    """``state`` carrying the ladder and its accumulators, as exact Python floats and ints."""
    return state._replace(betas=tuple(float(b) for b in ladder),
                          rejection_sum=tuple(float(r) for r in rejection_sum),
                          attempts=tuple(int(a) for a in attempts))


def _chain_ladder(chains, betas: np.ndarray):
    """The ladder of ``chains`` and copies of its accumulators (float64, int64): theirs, or ``betas`` and zeros."""
    if not isinstance(chains, _tempering.TemperedState):
        raise TypeError(f"parallel tempering continues a TemperedState, got {type(chains).__name__}")
    if chains.betas is None:  # chains of an earlier version: the ladder they ran at is the starting one
        return betas, np.zeros(betas.size - 1), np.zeros(betas.size - 1, dtype=np.int64)
    ladder = _tempering.check_ladder(chains.betas)
    t = ladder.size
    if ladder[-1] != 1.0 or np.shape(chains.v)[:1] != (t,):
        raise ValueError(
            f"the chains' ladder {ladder.tolist()} must end at 1 and have one rung per replica "
            f"(v of shape {np.shape(chains.v)})"
        )
    rejection_sum = np.array(chains.rejection_sum if chains.rejection_sum is not None else np.zeros(t - 1),
                             dtype=np.float64)
    attempts = np.array(chains.attempts if chains.attempts is not None else np.zeros(t - 1), dtype=np.int64)
    if rejection_sum.shape != (t - 1,) or attempts.shape != (t - 1,):
        raise ValueError(
            f"the chains' rejection_sum and attempts must have shape ({t - 1},), got {rejection_sum.shape} and "
            f"{attempts.shape}"
        )
    return ladder, rejection_sum, attempts


def deterministic(method: str, **options: Any) -> NegativePhase:
    """The model term from :func:`pymc_rbm.training.gradients.model_statistics` (no chains).

    Parameters
    ----------
    method : {"exact", "mean_field", "tap", "bethe", "mixture_mean_field"}
    **options
        Passed to the moment function.

    Returns
    -------
    NegativePhase
        Where the moment function reports on the physical domain (TAP:
        ``diagnostics["physical"]``), ``info`` holds ``unphysical`` (1.0 when
        the moments of this update lie outside it, else 0.0) and the
        function's :class:`~pymc_rbm.estimators.tap.UnphysicalFixedPoint`
        warning is left to the caller (:func:`~pymc_rbm.training.fit` warns
        once per run, not once per update).
    """

    def init(rng, data, params, batch_size=None):
        return None

    def step(rng, chains, params, batch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UnphysicalFixedPoint)
            stats = model_statistics(params, method, **options)
        physical = getattr(stats, "diagnostics", {}).get("physical")
        info = {} if physical is None else {"unphysical": 0.0 if physical else 1.0}
        return stats, None, info

    return NegativePhase(method, init, step)


#: The methods :func:`family_phase` builds: what trains categorical and Gaussian RBMs.
FAMILY_METHODS = ("cd", "pcd", "exact")


def family_phase(method: str, family, operator="gibbs", k: int = 1, *, n_chains: int | None = None,
                 **moment_options) -> NegativePhase:
    """CD-k, PCD-k or the exact model term of an RBM of any visible family (stochastic for CD and PCD).

    The phase works in the family's flat coordinates
    (:mod:`~pymc_rbm.training.families`): ``params`` is the flat
    :class:`~pymc_rbm.params.RBMParams` ``(W, a, c)``, batches and samples are
    features ``x = φ(v)``, so the data term, the centered gradient and the
    optimisers are the binary ones. The chains hold the family's own values
    (labels, reals) and are swept at the family's target
    (:meth:`~pymc_rbm.training.families.BernoulliFamily.target`) by
    :func:`~pymc_rbm.kernels.sweep.sweep`, each layer updated by its type: Gibbs,
    or for categorical units Liu's (1996) Metropolised Gibbs mixed with Gibbs by ``α``.
    Every update starts the chains from their visible values with ``h``
    drawn from ``p(h | v)`` at the current parameters (a stale ``h`` breaks
    the invariance of the Metropolised update).

    Parameters
    ----------
    method : {"cd", "pcd", "exact"}
        ``"exact"``: the model term by enumeration
        (:meth:`~pymc_rbm.training.families.BernoulliFamily.exact_moments`).
    family : BernoulliFamily, CategoricalFamily or GaussianFamily
    operator : {"gibbs", "flip"} or float in [0, 1], default "gibbs"
        The layer rule (:func:`~pymc_rbm.kernels.operators.operator_rule`):
        ``"flip"`` is Metropolised Gibbs on categorical units (flip-the-state
        for q = 2) and flip-the-state on the hidden units; Gaussian units are
        always drawn exactly from their conditional.
    k : int, default 1
        Sweeps per update.
    n_chains : int, optional
        PCD: persistent chains, default the batch size; they start at training rows.
    **moment_options
        ``"exact"``: passed to the enumeration (``max_states``, ``max_hidden``).

    Returns
    -------
    NegativePhase
    """
    if method not in FAMILY_METHODS:
        raise ValueError(f"{family.name} RBMs train with the methods {FAMILY_METHODS}, not {method!r}")
    if method == "exact":

        def step(rng, chains, params, batch):
            return family.exact_moments(family.unflat(params), **moment_options), None, {}

        return NegativePhase("exact", lambda rng, data, params, batch_size=None: None, step)
    if moment_options:
        raise ValueError(f"moment options apply to method 'exact', not {method!r}")
    rule = operator_rule(operator)
    k = check_positive_int(k, "k")
    n_chains = check_positive_int(n_chains, "n_chains", allow_none=True)
    if method == "cd" and n_chains is not None:
        raise ValueError("CD starts one chain at every row of the batch; n_chains applies to 'pcd'")

    def run(rng, v, params):
        target = family.target(family.unflat(params))
        state = RBMState(v, None)  # the first sweep draws h ~ p(h | v) at these parameters
        for _ in range(k):
            state, _ = sweep(rng, state, target, rule)
        x = family.features(state.v)
        return x, mean_hiddens(x, params), state

    def init(rng, data, params, batch_size=None):
        if method == "cd":
            return None
        v = family.values(start_rows(rng, data, n_chains or batch_size or data.shape[0]))
        a = family.target(family.unflat(params)).hidden_input(v)
        return RBMState(v, GIBBS.update(rng, None, a)[0])

    def samples(rng, chains, params, batch):
        x, ph, state = run(rng, family.values(batch) if method == "cd" else chains.v, params)
        return x, ph, (None if method == "cd" else state), {}

    return _from_samples(method, init, samples)

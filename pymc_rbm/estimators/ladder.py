"""The ladder of labels that RTS and SAMS temper over: where the labels go, and how the chains start on them.

A ladder is a sequence of points of an :class:`~pymc_rbm.estimators.path.AnnealingPath`, from the
base-rate model to the target (and on through further models for SAMS), placed at equal
thermodynamic length by a pilot run (:func:`build_ladder`), with initial guesses of every label's
``log Z`` and starting states. :func:`bar_ladder` replaces those by a run of Bennett's acceptance
ratio along the ladder (the ``init="bar"`` start of both estimators).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from pymc_rbm.estimators.bar import LadderStart, equilibrating_sweeps, ladder_start, resample_by_weight
from pymc_rbm.estimators.path import AnnealingPath
from pymc_rbm.estimators.schedules import check_schedule, pilot_run, thermodynamic_length
from pymc_rbm.kernels.activations import FULL_EVERY
from pymc_rbm.validation import check_positive_int

__all__ = [
    "LADDER_SPACING",
    "check_ladder",
    "Ladder",
    "build_ladder",
    "bar_ladder",
    "count_moves",
    "check_init",
    "initial_log_z",
]

#: Default spacing of the automatic ladder, in units of thermodynamic length: the standard
#: deviation of ``log f_k(x) - log f_{k-1}(x)`` between neighbouring rungs.
LADDER_SPACING = 1.0


def check_ladder(betas) -> np.ndarray | None:
    """A validated copy of a ladder of interpolation values, or None for the automatic one.

    Parameters
    ----------
    betas : None, int or array_like
        ``None``: chosen from a pilot run (:func:`build_ladder`); an int
        ``K``: ``K`` uniform values from 0 to 1; an array: the values, strictly
        increasing from exactly 0 to exactly 1.

    Returns
    -------
    None or ndarray of float64 of shape (K,)
    """
    if betas is None:
        return None
    if isinstance(betas, (int, np.integer)) and not isinstance(betas, bool):
        if betas < 2:
            raise ValueError(f"a ladder needs at least 2 temperatures, got {betas}")
        return np.linspace(0.0, 1.0, int(betas))
    b = check_schedule(betas, name="betas")
    if np.any(np.diff(b) <= 0.0):
        raise ValueError("the ladder must be strictly increasing")
    return b


class Ladder(NamedTuple):
    """The labels of a tempered sampler along an annealing path, set up by a pilot run.

    Attributes
    ----------
    coefs : ndarray of shape (L, 1 + M)
        Path coefficients of each label (label 0 is the base-rate model).
    s : ndarray of shape (L,)
        Interpolation value of each label within its segment (β for one model).
    segment : ndarray of int of shape (L,)
        Segment of each label: 0 from the base to model 1, ``i`` from model
        ``i`` to model ``i + 1``; the end point of a segment belongs to it.
    model_labels : ndarray of int of shape (M,)
        Label of each model (its ``λ = e_m``).
    log_z_init : ndarray of shape (L,)
        Pilot AIS estimates of ``log Z`` of each label.
    states : ndarray of shape (n_chains, n_visible)
        Starting states, spread along the path.
    labels : ndarray of int of shape (n_chains,)
        The label nearest each starting state.
    """

    coefs: np.ndarray
    s: np.ndarray
    segment: np.ndarray
    model_labels: np.ndarray
    log_z_init: np.ndarray
    states: np.ndarray
    labels: np.ndarray


def build_ladder(
    path: AnnealingPath,
    rng,
    n_chains: int,
    betas=None,
    *,
    n_pilot: int = 1000,
    spacing: float = LADDER_SPACING,
    min_rungs: int = 8,
    bar=None,
) -> Ladder:
    """Labels along the path base → model 1 → ... → model M, from a pilot AIS run (stochastic).

    The pilot anneals ``n_chains`` chains along a fine grid of ``n_pilot``
    steps per segment (plus the requested values). With ``betas=None`` the
    labels are placed at equal *thermodynamic length*: the standard deviation
    of the log-weight increment of a grid step measures how far apart two
    neighbouring distributions are, and labels are put every ``spacing`` of
    its cumulative sum (at least ``min_rungs`` steps per segment). Neighbours
    then overlap by the same amount everywhere, which is what local label
    moves (SAMS) and the Gibbs update of β (RTS) need. The pilot's partial
    weights give the initial ``log Ẑ`` of every label.

    Parameters
    ----------
    path : AnnealingPath
    rng : numpy.random.Generator
    n_chains : int
    betas : None, int or array_like
        Interpolation values per segment (:func:`check_ladder`), or None for the
        automatic ladder.
    n_pilot : int, default 1000
    spacing : float, default 1.0
        Thermodynamic length between neighbouring labels.
    min_rungs : int, default 8
    bar : optional progress bar

    Returns
    -------
    Ladder
    """
    wanted = check_ladder(betas)
    if not (np.isfinite(spacing) and spacing > 0.0):
        raise ValueError(f"spacing must be a positive number, got {spacing!r}")
    min_rungs = check_positive_int(min_rungs, "min_rungs")
    fine = np.linspace(0.0, 1.0, check_positive_int(n_pilot, "n_pilot") + 1)
    s_grid = fine if wanted is None else np.union1d(fine, wanted)
    M = path.n_models
    grid, grid_s, grid_seg = [path.coefficients(0.0, 0)], [0.0], [0]
    for seg in range(M):
        e_from = np.zeros(1 + M)
        e_from[seg] = 1.0  # the base for seg 0, model seg otherwise
        e_to = np.zeros(1 + M)
        e_to[seg + 1] = 1.0
        for s in s_grid[1:]:
            grid.append((1.0 - s) * e_from + s * e_to)
            grid_s.append(s)
            grid_seg.append(seg)
    grid = np.array(grid)
    grid_s, grid_seg = np.array(grid_s), np.array(grid_seg)
    pilot = pilot_run(path, rng, grid, n_chains, bar)

    if wanted is None:
        length = thermodynamic_length(pilot.sd_increment, s_grid.size - 1)
    idx = [0]
    for seg in range(M):
        g0, g1 = seg * (s_grid.size - 1), (seg + 1) * (s_grid.size - 1)
        if wanted is None:
            seg_len = length[g1] - length[g0]
            n_rungs = max(int(min_rungs), int(np.ceil(seg_len / float(spacing))))
            targets = length[g0] + seg_len * np.arange(1, n_rungs + 1) / n_rungs
            pos = g0 + np.searchsorted(length[g0 : g1 + 1], targets, side="left")
            pos = np.unique(np.clip(pos, g0 + 1, g1))
            pos[-1] = g1
        else:
            pos = g0 + np.searchsorted(s_grid, wanted[1:])
        idx.extend(int(i) for i in pos)
    idx = np.array(idx)
    model_labels = np.flatnonzero(np.isin(idx, [(seg + 1) * (s_grid.size - 1) for seg in range(M)]))
    labels = np.abs(pilot.stop[:, None] - idx[None, :]).argmin(axis=1)
    return Ladder(
        coefs=grid[idx],
        s=grid_s[idx],
        segment=grid_seg[idx],
        model_labels=model_labels,
        log_z_init=pilot.log_z[idx],
        states=pilot.states,
        labels=labels,
    )


def bar_ladder(
    path: AnnealingPath,
    rng,
    ladder: Ladder,
    n_chains: int,
    *,
    n_steps: int = 18000,
    n_equilibrate: int | None = None,
    bar_chains: int = 100,
    bar=None,
    guard=None,
) -> tuple[Ladder, LadderStart] | None:
    """The ladder with guesses and starting states from a BAR run instead of the pilot (stochastic).

    :func:`~pymc_rbm.estimators.bar.ladder_start` gives every rung's
    ``log Z_k`` and weighted draws of ``p_k`` from both directions. The
    ``n_chains`` chains are spread evenly over the rungs, each starts from a
    draw of its rung's weighted states (resampled by weight), and all take
    ``n_equilibrate`` sweeps at their own rung. With guesses this close the
    tempered chain starts near its stationary distribution: the labels are
    about equally probable, and the states are near equilibrium at every
    rung, which on large trained models the chains could not reach by
    themselves within a run (docs/estimators.md, "RTS and SAMS on h500").

    Parameters
    ----------
    path : AnnealingPath
        A path to one model.
    rng : numpy.random.Generator
    ladder : Ladder
        From :func:`build_ladder`.
    n_chains : int
        Chains returned.
    n_steps : int, default 18000
        Steps of the BAR run in each direction.
    bar_chains : int, default 100
        Chains of the BAR run in each direction:
        :func:`~pymc_rbm.estimators.bar.bar`'s default. The ``n_chains``
        starting states are drawn from its ``2 bar_chains`` weighted states
        at each rung, so more chains than that start from repeated states
        until the sweeps part them.
    n_equilibrate : int, optional
        Sweeps at the target for the reverse starts, and at its rung for
        every returned chain; default a ninth of ``n_steps``.
    bar : optional progress bar
    guard : StopOnInterrupt, optional
        The caller's Ctrl-C guard, handed to the BAR run.

    Returns
    -------
    (Ladder, LadderStart) or None
        The ladder with ``log_z_init``, ``states`` and ``labels`` replaced,
        and the BAR run's measurements; None when interrupted.
    """
    if path.n_models != 1:
        raise ValueError('init="bar" anneals to one model; with several, use init="ais"')
    n_equilibrate = equilibrating_sweeps(n_equilibrate, n_steps)
    start = ladder_start(
        path,
        rng,
        ladder.s,
        check_positive_int(bar_chains, "bar_chains", 2),
        n_steps=n_steps,
        n_equilibrate=n_equilibrate,
        bar=bar,
        guard=guard,
    )
    if start is None:
        return None
    K = ladder.s.size
    labels = (np.arange(n_chains) * K) // n_chains
    v = np.empty((n_chains, path.n_visible), dtype=path.dtype)
    for k in range(K):
        here = labels == k
        v[here] = resample_by_weight(rng, start.states[k], start.log_w[k], int(here.sum()))
    v, a, _ = path.start(v)
    for t in range(1, n_equilibrate + 1):
        v, a, _ = path.sweep(rng, v, a, ladder.coefs[labels], refresh=t % FULL_EVERY == 0)
        if bar is not None:
            bar.advance()
    return ladder._replace(log_z_init=start.log_z, states=v, labels=labels), start


# ------------------------------------------------------------ labels and starts
def count_moves(n_sweeps, sweeps_per_move) -> int:
    """Moves of the temperature (label) in ``n_sweeps`` sweeps, one after every ``sweeps_per_move``; checked.

    Raises
    ------
    ValueError
        Unless both are positive integers with ``n_sweeps >= sweeps_per_move``.
    """
    n_sweeps = check_positive_int(n_sweeps, "n_sweeps")
    sweeps_per_move = check_positive_int(sweeps_per_move, "sweeps_per_move")
    if n_sweeps < sweeps_per_move:
        raise ValueError(f"n_sweeps ({n_sweeps}) must be at least sweeps_per_move ({sweeps_per_move})")
    return n_sweeps // sweeps_per_move


def check_init(init, *, flat: str):
    """``init`` unchanged, or a ValueError unless it is ``"bar"``, ``"ais"``, ``flat`` or not a string (an array)."""
    if isinstance(init, str) and init not in ("bar", "ais", flat):
        raise ValueError(f'init must be "bar", "ais", "{flat}" or an array of log Z guesses, got {init!r}')
    return init


def initial_log_z(init, log_z_pilot: np.ndarray, *, flat: str) -> np.ndarray:
    """Initial guesses of ``log Z_k - log Z_0`` for the labels of a tempered sampler.

    Parameters
    ----------
    init : "bar", "ais", ``flat`` or array_like of shape (K,)
        ``"bar"`` or ``"ais"``: the ladder's estimates (from the BAR start or
        the pilot run); ``flat``: all zero (every label as probable as the
        base); an array: those values, shifted so that the first is 0.
    log_z_pilot : ndarray of shape (K,)
        The ladder's estimates of ``log Z_k``.
    flat : str
        The name the caller gives the flat start.

    Returns
    -------
    ndarray of float64 of shape (K,), first element 0
    """
    K = log_z_pilot.shape[0]
    if isinstance(check_init(init, flat=flat), str):
        return np.zeros(K) if init == flat else log_z_pilot - log_z_pilot[0]
    g = np.array(init, dtype=np.float64, copy=True)
    if g.shape != (K,) or not np.all(np.isfinite(g)):
        raise ValueError(
            f"init must hold {K} finite values (log Z guesses; the ladder has {K} labels), got shape {g.shape}"
        )
    return g - g[0]


"""β schedules of annealing runs, and the pilot runs that measure a path to place them.

:func:`default_schedule` is Salakhutdinov & Murray's (2008); :func:`pilot_run` is a short AIS run
along a fine grid of path points whose log-weight increments give the thermodynamic length
(:func:`thermodynamic_length`) that the adaptive schedule of AIS and the ladders of RTS and SAMS
(:mod:`~pymc_rbm.estimators.ladder`) are spaced by.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from pymc_rbm.estimators.path import AnnealingPath, log_mean_exp
from pymc_rbm.kernels.activations import FULL_EVERY

__all__ = [
    "DEFAULT_SCHEDULE_SEGMENTS",
    "default_schedule",
    "check_schedule",
    "PilotRun",
    "pilot_run",
    "thermodynamic_length",
]

#: Salakhutdinov & Murray's schedule: 0 → 0.5 in 500 steps, → 0.9 in 4000, → 1 in 10000.
DEFAULT_SCHEDULE_SEGMENTS = ((0.5, 500), (0.9, 4000), (1.0, 10000))


# ------------------------------------------------------------------ schedule
def default_schedule(n_steps: int = 14500) -> np.ndarray:
    """Salakhutdinov & Murray's β schedule, or the same shape with ``n_steps`` steps.

    Uniform steps from 0 to 0.5, 0.5 to 0.9 and 0.9 to 1, with 500, 4000 and
    10000 of the 14500 steps (the defaults) or the same proportions of
    ``n_steps``.

    Parameters
    ----------
    n_steps : int, default 14500
        Number of annealing steps (transitions between β values); at least 3.

    Returns
    -------
    ndarray of shape (n_steps + 1,)
        Nondecreasing, from exactly 0 to exactly 1.

    Examples
    --------
    >>> from pymc_rbm.estimators.schedules import default_schedule
    >>> b = default_schedule()
    >>> b.shape, float(b[500]), float(b[4500]), float(b[-1])
    ((14501,), 0.5, 0.9, 1.0)
    """
    n_steps = int(n_steps)
    if n_steps < 3:
        raise ValueError(f"n_steps must be at least 3, got {n_steps}")
    total = sum(n for _, n in DEFAULT_SCHEDULE_SEGMENTS)
    counts = [max(1, round(n_steps * n / total)) for _, n in DEFAULT_SCHEDULE_SEGMENTS]
    counts[-1] = n_steps - sum(counts[:-1])
    parts, start = [np.zeros(1)], 0.0
    for (stop, _), n in zip(DEFAULT_SCHEDULE_SEGMENTS, counts):
        parts.append(np.linspace(start, stop, n + 1)[1:])
        start = stop
    out = np.concatenate(parts)
    out[-1] = 1.0
    return out


def check_schedule(schedule, *, name: str = "schedule") -> np.ndarray:
    """A validated copy of an annealing schedule.

    Parameters
    ----------
    schedule : None, int or array_like
        ``None``: :func:`default_schedule`; an int ``K``: ``K`` uniform steps
        from 0 to 1; an array: the β values themselves.
    name : str, default "schedule"
        How error messages call the argument.

    Returns
    -------
    ndarray of float64 of shape (K + 1,)

    Raises
    ------
    ValueError
        Unless the schedule is one-dimensional with at least two values, all
        finite, nondecreasing, starting at exactly 0 and ending at exactly 1.
    """
    if schedule is None:
        return default_schedule()
    if isinstance(schedule, (int, np.integer)) and not isinstance(schedule, bool):
        if schedule < 1:
            raise ValueError(f"a schedule given as a number of steps needs at least 1 step, got {schedule}")
        return np.linspace(0.0, 1.0, int(schedule) + 1)
    try:
        b = np.array(schedule, dtype=np.float64, copy=True)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be None, an int or an array of β values, got {schedule!r}") from None
    if b.ndim != 1 or b.size < 2:
        raise ValueError(f"{name} must be a 1-D array of at least 2 β values, got shape {b.shape}")
    if not np.all(np.isfinite(b)):
        raise ValueError(f"{name} contains non-finite values")
    if b[0] != 0.0 or b[-1] != 1.0:
        raise ValueError(f"{name} must start at β = 0 and end at β = 1, got {b[0]!r} ... {b[-1]!r}")
    if np.any(np.diff(b) < 0.0):
        i = int(np.argmax(np.diff(b) < 0.0))
        raise ValueError(f"{name} must be nondecreasing; β[{i}] = {b[i]!r} > β[{i + 1}] = {b[i + 1]!r}")
    return b


# ------------------------------------------------------------------- pilot
class PilotRun(NamedTuple):
    """What a short AIS run along a fine grid of path points measured.

    Attributes
    ----------
    log_z : ndarray of shape (G,)
        AIS estimates of ``log Z`` at every grid point (exact at the base).
    sd_increment : ndarray of shape (G - 1,)
        Standard deviation over chains of each log-weight increment
        ``log f_g(x) - log f_{g-1}(x)``: the local thermodynamic length of the step.
    states : ndarray of shape (n_chains, n_visible)
        Chain ``m`` stopped at grid point ``stop[m]`` (spread evenly over the grid).
    stop : ndarray of int of shape (n_chains,)
    """

    log_z: np.ndarray
    sd_increment: np.ndarray
    states: np.ndarray
    stop: np.ndarray


def pilot_run(path: AnnealingPath, rng, grid, n_chains: int, bar=None) -> PilotRun:
    """A short AIS run along the path points ``grid`` (stochastic; used to set up RTS and SAMS).

    Parameters
    ----------
    path : AnnealingPath
    rng : numpy.random.Generator
    grid : ndarray of shape (G, 1 + M)
        Path coefficients, starting at the base ``(1, 0, ..., 0)``.
    n_chains : int
    bar : optional progress bar, advanced once per grid point

    Returns
    -------
    PilotRun
    """
    grid = np.asarray(grid, dtype=np.float64)
    G = grid.shape[0]
    v, a, vb = path.start(path.sample_base(rng, n_chains))
    log_w = np.zeros(n_chains)
    log_z = np.empty(G)
    log_z[0] = path.log_z_base
    sd = np.empty(max(G - 1, 0))
    stop = np.linspace(0, G - 1, n_chains).round().astype(np.int64)
    states = v.copy()
    lf_prev = path.log_f(a, vb, grid[0])
    for g in range(1, G):
        inc = path.log_f(a, vb, grid[g]) - lf_prev
        sd[g - 1] = inc.std()
        log_w += inc
        log_z[g] = path.log_z_base + log_mean_exp(log_w)
        v, a, vb = path.sweep(rng, v, a, grid[g], refresh=g % FULL_EVERY == 0)
        lf_prev = path.log_f(a, vb, grid[g])
        here = stop == g
        states[here] = v[here]
        if bar is not None:
            bar.advance()
    return PilotRun(log_z, sd, states, stop)


def thermodynamic_length(sd_increment: np.ndarray, n_per_segment: int) -> np.ndarray:
    """Cumulative thermodynamic length along a pilot's grid.

    The standard deviation of the log-weight increment of one grid step
    measures how far apart two neighbouring distributions are; its running
    sum, smoothed over ``n_per_segment / 50`` steps against the pilot's noise,
    is the length.

    Parameters
    ----------
    sd_increment : ndarray of shape (G - 1,)
        :attr:`PilotRun.sd_increment`.
    n_per_segment : int
        Grid steps per segment of the path (sets the smoothing width).

    Returns
    -------
    ndarray of shape (G,)
        0 at the first grid point, nondecreasing.
    """
    x = np.asarray(sd_increment, dtype=np.float64)
    width = max(1, int(n_per_segment) // 50)
    if width > 1 and x.size > 2:
        pad = np.pad(x, (width // 2, width - 1 - width // 2), mode="edge")
        x = np.convolve(pad, np.ones(width) / width, mode="valid")
    return np.concatenate([[0.0], np.cumsum(x)])


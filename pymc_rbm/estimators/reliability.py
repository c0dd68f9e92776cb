"""When an RTS or SAMS estimate can be trusted: collapsed labels, batches that disagree, a move from its start.

RTS's rounds and SAMS's runs are batches of one estimate; :func:`spread_stderr` is the rule by
which both report a standard error no more precise than their batches agree,
:func:`check_occupancy` finds a ladder whose chains never reached some label, and
:func:`check_start` compares an estimate with the BAR run it started from, and
:func:`combine_with_start` weighs the two together.
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["COLLAPSED_SHARE", "check_occupancy", "spread_stderr", "check_start", "combine_with_start"]

#: A label (temperature) that got less than this fraction of its share of the draws counts as
#: collapsed: the chains did not reach it, and no estimate built on it is supported by draws there.
COLLAPSED_SHARE = 0.1


def check_occupancy(occupancy: np.ndarray, method: str, *, stacklevel: int = 3) -> bool:
    """Warn and return False when a label got less than :data:`COLLAPSED_SHARE` of its share of draws.

    Parameters
    ----------
    occupancy : ndarray of shape (n_labels,)
        Fraction of the draws at each label (RTS: of the last round; SAMS:
        after the first stage).
    method : str
        ``"RTS"`` or ``"SAMS"``, for the message.

    Returns
    -------
    bool
        True when every label got at least that share.
    """
    occupancy = np.asarray(occupancy, dtype=np.float64)
    share = float(occupancy.min() * occupancy.size) if occupancy.size else 1.0
    if share >= COLLAPSED_SHARE:
        return True
    warnings.warn(
        f"{method}: the chains are collapsed (a temperature got {share:.2g} of its share of the draws); the "
        "estimate is unreliable and its standard error is taken from the spread of the runs, which cannot "
        "measure what the chains never visited: use init='ais', more or longer runs, or compare with AIS",
        RuntimeWarning,
        stacklevel=stacklevel,
    )
    return False


def spread_stderr(nominal: float, batches, consistent: bool, *, floor: float = 0.0) -> tuple[float, str]:
    """The standard error RTS and SAMS report: never more precise than their batches agree.

    The rule. RTS's rounds and SAMS's runs are batches: independent
    estimates of one value when all is well. Then the mean of ``n`` of them
    has the ``nominal`` standard error of the method, but at least the
    standard deviation of the batches over ``sqrt(n)``. When a check says
    they are not (RTS: the rounds disagree beyond their errors, chi-square
    at 0.001; SAMS: the runs still move between the middle and the end;
    either: a collapsed ladder), they are not draws around one value and
    averaging them gains nothing: the standard error is then at least the
    standard deviation of the batches themselves (not divided by
    ``sqrt(n)``), and at least ``floor`` (SAMS: the mean move over the second
    half of the run).

    Parameters
    ----------
    nominal : float
        The method's own standard error.
    batches : array_like of shape (n,)
        The batches' estimates.
    consistent : bool
        Whether the method's checks passed.
    floor : float, default 0
        A further lower bound used when the checks failed.

    Returns
    -------
    stderr : float
    rule : {"nominal", "batch_means", "spread"}
        Which term set it: the method's own error, the spread over
        ``sqrt(n)``, or the spread itself (or ``floor``) after a failed check.
    """
    x = np.asarray(batches, dtype=np.float64)
    sd = float(x.std(ddof=1)) if x.size >= 2 else 0.0
    stderr, rule = float(nominal), "nominal"
    if x.size >= 2 and sd / np.sqrt(x.size) > stderr:
        stderr, rule = sd / np.sqrt(x.size), "batch_means"
    if not consistent and max(sd, floor) > stderr:
        stderr, rule = max(sd, float(floor)), "spread"
    return stderr, rule


def check_start(log_z: float, stderr: float, start, method: str, *, stacklevel: int = 3) -> tuple[float, bool]:
    """Compare a tempered estimate with the BAR start it came from; warn and widen when they disagree.

    RTS and SAMS started from BAR (``init="bar"``) estimate the same
    ``log Z`` as their start, by other means. When the two differ by more
    than three standard errors of the difference, the tempered chains have
    moved away from where they started, which on slowly mixing models means
    they have not reached their stationary distribution: the standard error
    is then at least the move.

    Parameters
    ----------
    log_z, stderr : float
        The tempered estimate and its standard error.
    start : LogPartitionEstimate or None
        BAR's estimate at the target (None: no BAR start, nothing to check).
    method : str
        ``"RTS"`` or ``"SAMS"``, for the message.

    Returns
    -------
    stderr : float
    agrees : bool
    """
    if start is None:
        return stderr, True
    gap = float(log_z - start.log_z)
    se = float(np.hypot(stderr, start.stderr))
    if abs(gap) <= 3.0 * se:
        return stderr, True
    warnings.warn(
        f"{method}: the estimate ({log_z:.3f}) moved {gap:+.2f} nats from its BAR start ({start.log_z:.3f}), "
        f"{abs(gap) / se:.1f} standard errors of the difference: the tempered chains have not reached their "
        "stationary distribution, and the standard error is at least that move",
        RuntimeWarning,
        stacklevel=stacklevel,
    )
    return max(float(stderr), abs(gap)), False


def combine_with_start(log_z: float, stderr: float, start) -> tuple[float, float, float]:
    """The precision-weighted mean of a tempered estimate and the BAR estimate it started from.

    Both estimate the same ``log Z``; their inverse-variance weighted mean is
    the more precise, and the better of the two dominates it. The two are not
    independent (the tempered chains start from the BAR run's guesses and
    states), so the standard error is the one that holds for any correlation
    between them, ``w s_start + (1 - w) s`` (correlation one), never below
    either's share.

    Parameters
    ----------
    log_z, stderr : float
        The tempered estimate and its standard error.
    start : LogPartitionEstimate or None
        BAR's estimate at the target (None: nothing to combine).

    Returns
    -------
    log_z, stderr : float
        The combination (the inputs where ``start`` is None or an error is not finite and positive).
    weight : float
        The start's weight ``w``, in [0, 1] (0 without a start).
    """
    if start is None or not (np.isfinite(start.stderr) and np.isfinite(stderr)):
        return float(log_z), float(stderr), 0.0
    s0, s1 = float(start.stderr), float(stderr)
    if s0 <= 0.0 or s1 <= 0.0:
        weight = 1.0 if s0 <= 0.0 < s1 else (0.0 if s1 <= 0.0 < s0 else 0.5)
    else:
        weight = s1**2 / (s0**2 + s1**2)
    return (weight * float(start.log_z) + (1.0 - weight) * float(log_z), weight * s0 + (1.0 - weight) * s1,
            float(weight))

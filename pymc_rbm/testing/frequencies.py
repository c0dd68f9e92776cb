"""Sampling code against a matrix: chi-square tests of observed transitions (stochastic)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.stats import chi2

from pymc_rbm.kernels.state import RBMState
from pymc_rbm.testing.markov import as_transition_matrix
from pymc_rbm.testing.states import joint_index, joint_states

__all__ = ["FrequencyCheck", "frequency_check", "assert_frequencies", "transition_counts", "empirical_transition_check"]


class FrequencyCheck(NamedTuple):
    """A Pearson chi-square test of observed counts against probabilities.

    Attributes
    ----------
    statistic : float
        Chi-square statistic over all rows (cells with expected count below
        5 pooled, see :func:`frequency_check`).
    dof : int
        Degrees of freedom.
    p_value : float
        ``P(chi2(dof) >= statistic)``.
    n_impossible : int
        Observations that fell on cells of probability 0: any is a failure.
    max_abs_error : float
        Largest ``|count / row total - probability|``.
    """

    statistic: float
    dof: int
    p_value: float
    n_impossible: int
    max_abs_error: float


def frequency_check(counts, probs) -> FrequencyCheck:
    """Test observed counts against the probabilities of each row.

    Per row, cells expected to hold at least 5 counts are tested one by one;
    the cells expected to hold fewer are pooled into one cell, or, when the
    pool itself expects fewer than 5, into the row's largest cell. Cells of
    probability 0 are not tested but must be empty (``n_impossible``).

    Parameters
    ----------
    counts : array_like of int of shape (n_rows, n_cells) or (n_cells,)
    probs : array_like of shape (n_rows, n_cells) or (n_cells,)
        Each row sums to 1.

    Returns
    -------
    FrequencyCheck
    """
    counts = np.atleast_2d(np.asarray(counts, dtype=np.float64))
    probs = np.atleast_2d(np.asarray(probs, dtype=np.float64))
    if counts.shape != probs.shape:
        raise ValueError(f"counts of shape {counts.shape} and probs of shape {probs.shape} differ")
    n_impossible = int(counts[probs <= 0.0].sum())
    stat, dof, max_err = 0.0, 0, 0.0
    for c, pr in zip(counts, probs):
        total = c.sum()
        if total == 0:
            continue
        max_err = max(max_err, float(np.abs(c / total - pr).max()))
        expected = total * pr
        big = expected >= 5.0
        small = (expected > 0.0) & ~big
        obs_cells, exp_cells = list(c[big]), list(expected[big])
        if small.any():
            o_pool, e_pool = c[small].sum(), expected[small].sum()
            if e_pool >= 5.0 or not obs_cells:
                obs_cells.append(o_pool)
                exp_cells.append(e_pool)
            else:
                k = int(np.argmax(exp_cells))
                obs_cells[k] += o_pool
                exp_cells[k] += e_pool
        o, e = np.array(obs_cells), np.array(exp_cells)
        stat += float(((o - e) ** 2 / e).sum())
        dof += len(o) - 1
    p_value = float(chi2.sf(stat, dof)) if dof > 0 else 1.0
    return FrequencyCheck(stat, dof, p_value, n_impossible, max_err)


def assert_frequencies(counts, probs, significance: float = 1e-6) -> FrequencyCheck:
    """:func:`frequency_check`, raising AssertionError on impossible counts or ``p_value < significance``."""
    check = frequency_check(counts, probs)
    if check.n_impossible:
        raise AssertionError(f"{check.n_impossible} observation(s) fell on transitions of probability 0: {check}")
    if check.p_value < significance:
        raise AssertionError(f"observed frequencies do not follow the probabilities: {check}")
    return check


def transition_counts(kernel, n_visible: int, n_hidden: int, n_draws: int, rng=0) -> np.ndarray:
    """Run a sampling kernel once from every joint state, ``n_draws`` times each (stochastic).

    All ``2**(n_visible + n_hidden) * n_draws`` chains go through the kernel
    in one batch; chain ``k`` starts in joint state ``k // n_draws``.

    Parameters
    ----------
    kernel : callable
        ``kernel(rng, state) -> state`` or ``-> (state, info)``, with
        :class:`~pymc_rbm.kernels.RBMState` states (bind params and β first).
    n_visible, n_hidden : int
    n_draws : int
        Runs from each state.
    rng : numpy.random.Generator or seed, default 0

    Returns
    -------
    ndarray of int64 of shape (N, N)
        ``counts[x, y]``: runs from ``x`` that ended in ``y``.
    """
    rng = np.random.default_rng(rng)
    v, h = joint_states(n_visible, n_hidden)
    n = v.shape[0]
    start = np.repeat(np.arange(n), n_draws)
    out = kernel(rng, RBMState(v[start], h[start]))
    new = out if isinstance(out, RBMState) else out[0]
    end = joint_index(new.v, new.h)
    return np.bincount(start * n + end, minlength=n * n).reshape(n, n)


def empirical_transition_check(
    kernel, T, n_visible: int, n_hidden: int, *, n_draws: int = 2000, rng=0, significance: float = 1e-6
) -> FrequencyCheck:
    """Assert that a sampling kernel's next states follow the rows of ``T`` (stochastic).

    Parameters
    ----------
    kernel : callable
        ``kernel(rng, state) -> state`` or ``(state, info)``; see
        :func:`transition_counts`.
    T : array_like of shape (N, N)
        The matrix the kernel should follow, in the harness order.
    n_visible, n_hidden : int
    n_draws : int, default 2000
        Runs from each state. Cells expected to hold fewer than 5 counts are
        pooled (:func:`frequency_check`), so a transition of probability
        ``q`` is tested on its own only when ``n_draws * q >= 5``.
    rng : numpy.random.Generator or seed, default 0
    significance : float, default 1e-6
        Smallest p-value accepted.

    Returns
    -------
    FrequencyCheck

    Raises
    ------
    AssertionError
        When a transition of probability 0 occurred or the chi-square test
        rejects at ``significance``.
    """
    T = as_transition_matrix(T)
    counts = transition_counts(kernel, n_visible, n_hidden, n_draws, rng)
    if counts.shape != T.shape:
        raise ValueError(f"T has shape {T.shape}, but {n_visible} + {n_hidden} units give {counts.shape}")
    return assert_frequencies(counts, T, significance)

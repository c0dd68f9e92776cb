"""The one exact harness for every kernel, move and estimator: tiny enumerable RBMs.

For an RBM with at most :data:`MAX_JOINT_UNITS` units in all, the joint state
space ``Ω = {0, 1}^(n_visible + n_hidden)`` can be listed, so everything a
sampler should satisfy can be checked exactly:

- :func:`joint_distribution` gives ``p_β(v, h)`` by enumeration;
- :func:`transition_matrix` builds the full ``|Ω| × |Ω|`` matrix of one sweep
  ``T = T_h T_v`` of Gibbs, flip-the-state or the α mixture, from the same
  per-unit probability functions the samplers use;
- :func:`assert_stationary`, :func:`is_irreducible`, :func:`is_aperiodic`
  (:func:`period`, :func:`is_primitive`) and :func:`assert_converges` check
  any transition matrix, and :func:`slem` gives its rate of convergence;
- :func:`empirical_transition_check` runs the real sampling code from every
  state many times and tests the observed next states against the rows of a
  matrix, so a kernel and its matrix cannot drift apart.

Moves that are not layer updates (wormholes, Metropolis-corrected moves)
plug in by building their own matrix over the same state ordering
(:func:`joint_states`, :func:`joint_index`) and reusing the checks.

State ordering: joint state ``r`` has visible part ``binary_states(n_visible)[r // 2**n_hidden]``
and hidden part ``binary_states(n_hidden)[r % 2**n_hidden]`` (unit 0 most
significant, as in :func:`pymc_rbm.estimators.binary_states`); matrices act
on row vectors, ``T[x, y] = P(next = y | current = x)``.

Examples
--------
>>> from pymc_rbm import RBMParams
>>> from pymc_rbm.testing import joint_distribution, transition_matrix, assert_converges, slem
>>> params = RBMParams.random(2, 2, scale=3.0, rng=0)
>>> p = joint_distribution(params)
>>> T = transition_matrix(params, "flip")
>>> assert_converges(p, T)
>>> 0.0 <= slem(T) < 1.0
True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from scipy import sparse
from scipy.sparse import csgraph
from scipy.special import logsumexp
from scipy.stats import chi2

from pymc_rbm.energy import energy, hidden_activation, sigmoid, visible_activation
from pymc_rbm.estimators.exact import binary_states
from pymc_rbm.kernels.flip import flip_probability, stay_probability
from pymc_rbm.kernels.state import RBMState

__all__ = [
    "MAX_JOINT_UNITS",
    "joint_states",
    "state_index",
    "joint_index",
    "joint_distribution",
    "gibbs_change_probability",
    "layer_matrices",
    "transition_matrix",
    "informed_visible_matrix",
    "assert_stationary",
    "is_irreducible",
    "period",
    "is_aperiodic",
    "is_primitive",
    "assert_converges",
    "slem",
    "FrequencyCheck",
    "frequency_check",
    "assert_frequencies",
    "transition_counts",
    "empirical_transition_check",
]

#: Largest ``n_visible + n_hidden`` for which joint matrices are built (1024 states, 8 MiB a matrix).
MAX_JOINT_UNITS = 10


# ------------------------------------------------------------------ states
def _check_size(n_visible: int, n_hidden: int) -> None:
    if n_visible + n_hidden > MAX_JOINT_UNITS:
        raise ValueError(
            f"the joint state space of {n_visible} + {n_hidden} units has 2**{n_visible + n_hidden} states; "
            f"the exact harness handles at most {MAX_JOINT_UNITS} units in all"
        )


def joint_states(n_visible: int, n_hidden: int) -> tuple[np.ndarray, np.ndarray]:
    """Every joint state, in the harness order.

    Parameters
    ----------
    n_visible, n_hidden : int

    Returns
    -------
    v : ndarray of shape (2**(n_visible + n_hidden), n_visible)
    h : ndarray of shape (2**(n_visible + n_hidden), n_hidden)
        Row ``r`` is joint state ``r``: ``v`` is the high bits of ``r``,
        ``h`` the low bits.
    """
    _check_size(n_visible, n_hidden)
    s = binary_states(n_visible + n_hidden)
    return s[:, :n_visible].copy(), s[:, n_visible:].copy()


def state_index(x) -> np.ndarray:
    """Index of each binary state in :func:`~pymc_rbm.estimators.binary_states` order.

    Parameters
    ----------
    x : array_like of shape (..., n)
        0/1 values (or booleans).

    Returns
    -------
    ndarray of int64 of shape (...)
    """
    x = np.asarray(x) != 0
    weights = np.left_shift(1, np.arange(x.shape[-1] - 1, -1, -1, dtype=np.int64))
    return x.astype(np.int64) @ weights


def joint_index(v, h) -> np.ndarray:
    """Index of each joint state ``(v, h)`` in the harness order.

    Parameters
    ----------
    v : array_like of shape (..., n_visible)
    h : array_like of shape (..., n_hidden)

    Returns
    -------
    ndarray of int64 of shape (...)
        ``state_index(v) * 2**n_hidden + state_index(h)``.
    """
    h = np.asarray(h)
    return (state_index(v) << h.shape[-1]) + state_index(h)


def joint_distribution(params, beta: float = 1.0) -> np.ndarray:
    """``p_β(v, h) ∝ exp(-β E(v, h))`` of every joint state, by enumeration.

    Parameters
    ----------
    params : RBMParams
    beta : float, default 1.0

    Returns
    -------
    ndarray of shape (2**(n_visible + n_hidden),)
        Sums to 1; in the order of :func:`joint_states`.
    """
    v, h = joint_states(params.n_visible, params.n_hidden)
    log_w = -float(beta) * energy(v, h, params.astype(np.float64))
    return np.exp(log_w - logsumexp(log_w))


# ------------------------------------------------------------- matrices
def gibbs_change_probability(x, logit) -> np.ndarray:
    """Probability that a Gibbs update changes each unit: ``p(other state | other layer)``.

    Parameters
    ----------
    x : array_like of shape (..., n_units)
        Current 0/1 states.
    logit : array_like of shape (..., n_units)
        Tempered logits, ``P(x = 1) = sigmoid(logit)``.

    Returns
    -------
    ndarray of shape (..., n_units)
    """
    logit = np.asarray(logit, dtype=np.float64)
    return sigmoid(np.where(np.asarray(x) != 0, -logit, logit))


UnitRule = Callable[[np.ndarray, np.ndarray], "np.ndarray | tuple[np.ndarray, np.ndarray]"]


def _gibbs_rule(x, logit):
    return gibbs_change_probability(x, logit), gibbs_change_probability(np.asarray(x) == 0, logit)


def _mixture_rule(alpha: float) -> UnitRule:
    """Change and stay probabilities of ``α T_i + (1 - α) G_i`` from :func:`flip_probability`.

    The stay probability is assembled from its parts, ``α (1 - q_T) + (1 - α) p(current)``,
    where ``p(current)`` is Gibbs' change probability from the other state; ``1 - q``
    would round a stay probability of, say, ``1e-22`` to 0 and make a chain look reducible.
    """

    def rule(x, logit):
        return flip_probability(x, logit, alpha), stay_probability(x, logit, alpha)

    return rule


def _unit_rule(kernel) -> UnitRule:
    """The per-unit change probability ``rule(x, logit)`` that ``kernel`` names."""
    if isinstance(kernel, str):
        if kernel == "gibbs":
            return _gibbs_rule
        if kernel == "flip":
            return _mixture_rule(1.0)
        raise ValueError(f"kernel must be 'gibbs', 'flip', an alpha in [0, 1] or a callable, got {kernel!r}")
    if callable(kernel):
        return kernel
    if isinstance(kernel, (int, float, np.floating, np.integer)) and not isinstance(kernel, bool):
        alpha = float(kernel)
        flip_probability(np.zeros(1), np.zeros(1), alpha)  # validates alpha
        return _mixture_rule(alpha)
    raise TypeError(f"kernel must be 'gibbs', 'flip', an alpha in [0, 1] or a callable, got {type(kernel).__name__}")


def _layer_block(x: np.ndarray, logit: np.ndarray, rule: UnitRule) -> np.ndarray:
    """``P(x' | x)`` for each row of ``x`` and each state ``x'`` of the layer, units independent.

    ``rule(x, logit)`` returns the change probabilities ``q``, or a pair
    ``(q, stay)`` with stay probabilities computed without cancellation.
    Returns an array of shape (n_rows, 2**n_units).
    """
    out = rule(x, logit)
    q, stay = out if isinstance(out, tuple) else (out, None)
    q = np.asarray(q, dtype=np.float64)
    stay = 1.0 - q if stay is None else np.asarray(stay, dtype=np.float64)
    for name, a in (("change", q), ("stay", stay)):
        if a.shape != x.shape or not np.all((a >= 0.0) & (a <= 1.0)):
            raise ValueError(f"the unit rule must return {name} probabilities in [0, 1] of the shape of x")
    if np.abs(q + stay - 1.0).max() > 1e-12:
        raise ValueError("the unit rule's change and stay probabilities do not sum to 1")
    candidates = binary_states(x.shape[1]) != 0
    change = (x[:, None, :] != 0) != candidates[None, :, :]
    return np.where(change, q[:, None, :], stay[:, None, :]).prod(axis=-1)


def _layer_blocks(params, kernel, beta: float) -> tuple[np.ndarray, np.ndarray]:
    """The nonzero blocks of ``T_h`` and ``T_v``.

    Returns ``P_h`` of shape (Kv, Kh, Kh), ``P_h[v, h, h'] = T_h[(v, h), (v, h')]``,
    and ``P_v`` of shape (Kv, Kh, Kv), ``P_v[v, h, v'] = T_v[(v, h), (v', h)]``,
    with ``Kv = 2**n_visible`` and ``Kh = 2**n_hidden``.
    """
    rule = _unit_rule(kernel)
    params = params.astype(np.float64)
    nv, nh = params.n_visible, params.n_hidden
    v, h = joint_states(nv, nh)
    kv, kh = 2**nv, 2**nh
    p_h = _layer_block(h, float(beta) * hidden_activation(v, params), rule).reshape(kv, kh, kh)
    p_v = _layer_block(v, float(beta) * visible_activation(h, params), rule).reshape(kv, kh, kv)
    return p_h, p_v


def layer_matrices(params, kernel="flip", beta: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """The matrices ``T_h`` and ``T_v`` of the two half-sweeps over the joint states.

    Parameters
    ----------
    params : RBMParams
        At most :data:`MAX_JOINT_UNITS` units in all.
    kernel : {"gibbs", "flip"}, float or callable, default "flip"
        The per-unit operator: ``"gibbs"``, ``"flip"`` (Definition 1 of seed
        000, :func:`~pymc_rbm.kernels.flip_probability`), a float ``α`` for the
        mixture ``α T_i + (1 - α) G_i``, or a callable ``rule(x, logit)``
        returning the probability ``q`` that each unit changes, or a pair
        ``(q, stay)`` (to test variants).
    beta : float, default 1.0
        Inverse temperature; logits are ``β (bias + input)``.

    Returns
    -------
    T_h : ndarray of shape (N, N)
        Changes only ``h``: ``T_h[(v, h), (v, h')] = Π_j P(h'_j | h_j, v)``.
    T_v : ndarray of shape (N, N)
        Changes only ``v``: ``T_v[(v, h), (v', h)] = Π_i P(v'_i | v_i, h)``.
    """
    p_h, p_v = _layer_blocks(params, kernel, beta)
    kv, kh = p_h.shape[0], p_h.shape[1]
    eye_v, eye_h = np.eye(kv), np.eye(kh)
    # T_h[(v, h), (v', h')] = [v == v'] P_h[v, h, h'];  T_v[(v, h), (v', h')] = [h == h'] P_v[v, h, v']
    t_h = np.einsum("ab,ach->acbh", eye_v, p_h).reshape(kv * kh, kv * kh)
    t_v = np.einsum("ch,acb->acbh", eye_h, p_v).reshape(kv * kh, kv * kh)
    return t_h, t_v


def transition_matrix(params, kernel="flip", beta: float = 1.0) -> np.ndarray:
    """Transition matrix of one sweep ``T = T_h T_v`` (hidden layer first, then visible).

    Brügge, Fischer & Igel (2013), Definition 1: "the flip-the-state transition operator is given
    by T = T_h T_v", and for Gibbs "G = G_h G_v"; Fig. 3 compares the SLEMs of
    these joint matrices. The product needs no matrix multiplication: a
    sweep from ``(v, h)`` to ``(v', h')`` passes through ``(v, h')`` only, so
    ``T[(v, h), (v', h')] = T_h[(v, h), (v, h')] T_v[(v, h'), (v', h')]``.

    Parameters
    ----------
    params : RBMParams
    kernel : {"gibbs", "flip"}, float or callable, default "flip"
        See :func:`layer_matrices`.
    beta : float, default 1.0

    Returns
    -------
    ndarray of shape (2**(n_visible + n_hidden),) * 2
        Row-stochastic; ``T[x, y]`` is the probability that a sweep from
        joint state ``x`` ends in ``y``.
    """
    p_h, p_v = _layer_blocks(params, kernel, beta)
    kv, kh = p_h.shape[0], p_h.shape[1]
    # T[v, h, v', h'] = P_h[v, h, h'] * P_v[v, h', v']
    t = p_h[:, :, None, :] * p_v.transpose(0, 2, 1)[:, None, :, :]
    return t.reshape(kv * kh, kv * kh)


def informed_visible_matrix(params, log_rest: Callable, kernel="gibbs", *, correction: str = "tilted") -> np.ndarray:
    """Matrix of the likelihood-informed visible move over the joint states (hidden units kept).

    Given ``h``, ``v'`` is proposed by the operator's layer update on the
    RBM's visible logits tilted by the exact single-flip changes of ``log L``
    (:func:`~pymc_rbm.kernels.informed.flip_tilt`) and accepted with
    ``min(1, exp(log r))``; ``h`` is unchanged. With the hidden update
    ``T_h`` of :func:`layer_matrices` before it, ``T_h @ K_v`` is one sweep of
    the step methods' informed move for ``π(v, h) ∝ p(v, h) L(v)``.

    Parameters
    ----------
    params : RBMParams
    log_rest : callable
        ``log L(v)`` for an array of shape ``(..., n_visible)``, vectorised.
    kernel : {"gibbs", "flip"} or float, default "gibbs"
        The operator whose tilted update proposes (see :func:`layer_matrices`).
    correction : {"tilted", "likelihood", "none"}, default "tilted"
        ``log r``: the exact ratio of
        :func:`~pymc_rbm.kernels.informed.tilted_log_ratio`; or, as negative
        controls that tests must catch, the likelihood ratio alone, or none.

    Returns
    -------
    ndarray of shape (2**(n_visible + n_hidden),) * 2
    """
    from pymc_rbm.kernels.informed import flip_tilt, tilted_log_ratio
    from pymc_rbm.kernels.operators import operator_alpha

    if correction not in ("tilted", "likelihood", "none"):
        raise ValueError(f'correction must be "tilted", "likelihood" or "none", got {correction!r}')
    alpha = operator_alpha(kernel)
    params = params.astype(np.float64)
    nv = params.n_visible
    v, h = joint_states(nv, params.n_hidden)
    n = v.shape[0]
    logits = visible_activation(h, params)

    def tilt(x):
        flipped = np.stack([np.where(np.arange(nv) == i, 1.0 - x, x) for i in range(nv)], axis=1)
        return flip_tilt(x, log_rest(x), log_rest(flipped))

    forward = tilt(v)
    proposal = _layer_block(v, logits + forward, _unit_rule(kernel))  # (n, 2**nv)
    T = np.zeros((n, n))
    for j, v_new in enumerate(binary_states(nv)):
        vn = np.broadcast_to(v_new, v.shape)
        if correction == "tilted":
            log_r = tilted_log_ratio(v, vn, logits, forward, tilt(vn), log_rest(v), log_rest(vn), alpha=alpha)
        elif correction == "likelihood":
            log_r = log_rest(vn) - log_rest(v)
        else:
            log_r = np.zeros(n)
        moved = ~np.all(vn == v, axis=1)
        T[np.arange(n), joint_index(vn, h)] += np.where(moved, proposal[:, j] * np.exp(np.minimum(log_r, 0.0)), 0.0)
    rest = 1.0 - T.sum(axis=1)
    T[np.arange(n), np.arange(n)] += np.where((rest < 0.0) & (rest > -1e-12), 0.0, rest)  # rounding, not a bug
    return T


# --------------------------------------------------------------- checks
def _check_square(T) -> np.ndarray:
    T = np.asarray(T, dtype=np.float64)
    if T.ndim != 2 or T.shape[0] != T.shape[1]:
        raise ValueError(f"a transition matrix must be square, got shape {T.shape}")
    return T


def assert_stationary(p, T, atol: float = 1e-12) -> None:
    """Assert that ``T`` is row-stochastic and leaves ``p`` invariant: ``max |p T - p| <= atol``.

    Parameters
    ----------
    p : array_like of shape (N,)
        A probability vector.
    T : array_like of shape (N, N)
    atol : float, default 1e-12

    Raises
    ------
    AssertionError
        Naming the worst state and the size of the violation.
    """
    T = _check_square(T)
    p = np.asarray(p, dtype=np.float64)
    if p.shape != T.shape[:1]:
        raise ValueError(f"p has shape {p.shape}, T has shape {T.shape}")
    if np.any(T < 0.0):
        raise AssertionError(f"T has negative entries (min {T.min():.3g})")
    row_err = np.abs(T.sum(axis=1) - 1.0)
    if row_err.max() > atol:
        i = int(row_err.argmax())
        raise AssertionError(f"row {i} of T sums to {T[i].sum()!r}, not 1 (tolerance {atol:g})")
    err = np.abs(p @ T - p)
    if err.max() > atol:
        i = int(err.argmax())
        raise AssertionError(
            f"p is not stationary for T: |(p T - p)[{i}]| = {err[i]:.3g} > {atol:g} "
            f"(p[{i}] = {p[i]:.6g}, (p T)[{i}] = {(p @ T)[i]:.6g})"
        )


def is_irreducible(T) -> bool:
    """Whether every state reaches every other: the graph of ``T > 0`` is strongly connected."""
    T = _check_square(T)
    n_components, _ = csgraph.connected_components(sparse.csr_matrix(T > 0), directed=True, connection="strong")
    return n_components == 1


def period(T) -> int:
    """Period of an irreducible chain: the gcd of the lengths of its cycles.

    Computed from breadth-first levels ``d`` from state 0: the period is the
    gcd of ``d[i] + 1 - d[j]`` over all edges ``i → j``.

    Raises
    ------
    ValueError
        When ``T`` is not irreducible (the period is then a property of
        each class, not of the chain).
    """
    T = _check_square(T)
    if not is_irreducible(T):
        raise ValueError("the period is defined here for irreducible chains only; T is reducible")
    graph = sparse.csr_matrix(T > 0)
    level = csgraph.shortest_path(graph, indices=0, unweighted=True).astype(np.int64)
    i, j = graph.nonzero()
    return int(np.gcd.reduce(np.abs(level[i] + 1 - level[j])))


def is_aperiodic(T) -> bool:
    """Whether an irreducible chain has period 1 (see :func:`period`)."""
    return period(T) == 1


def is_primitive(T) -> bool:
    """Whether some power of ``T`` is entrywise positive (irreducible and aperiodic).

    Squares the boolean pattern of ``T`` until the power passes Wielandt's
    bound ``(N - 1)**2 + 1``: a primitive matrix's powers beyond it are all
    positive, and no power of an imprimitive one is.
    """
    T = _check_square(T)
    n = T.shape[0]
    a = (T > 0).astype(np.float64)
    power, bound = 1, (n - 1) ** 2 + 1
    while power < bound:
        a = ((a @ a) > 0).astype(np.float64)
        power *= 2
    return bool(a.all())


def assert_converges(p, T, atol: float = 1e-12) -> None:
    """Assert everything that makes a chain with matrix ``T`` converge to ``p``.

    ``T`` is row-stochastic, ``p T = p`` to ``atol``, and the chain is
    irreducible and aperiodic.
    """
    assert_stationary(p, T, atol)
    if not is_irreducible(T):
        raise AssertionError("T is not irreducible")
    per = period(T)
    if per != 1:
        raise AssertionError(f"T is periodic with period {per}")


def slem(T) -> float:
    """Second largest eigenvalue modulus of a transition matrix.

    Brügge, Fischer & Igel (2013) §4.1: "The convergence speed of an ergodic, homogeneous Markov
    chain with finite state space is governed by the second largest
    eigenvector modulus (SLEM) [...] the SLEM computation considers absolute
    values". One eigenvalue closest to 1 (Perron's) is set aside and the
    largest modulus of the others returned; a reducible chain has a second
    eigenvalue 1.

    Parameters
    ----------
    T : array_like of shape (N, N)

    Returns
    -------
    float
    """
    T = _check_square(T)
    if T.shape[0] < 2:
        return 0.0
    ev = np.linalg.eigvals(T)
    return float(np.abs(np.delete(ev, np.argmin(np.abs(ev - 1.0)))).max())


# ---------------------------------------------------- sampling vs matrix
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
    T = _check_square(T)
    counts = transition_counts(kernel, n_visible, n_hidden, n_draws, rng)
    if counts.shape != T.shape:
        raise ValueError(f"T has shape {T.shape}, but {n_visible} + {n_hidden} units give {counts.shape}")
    return assert_frequencies(counts, T, significance)

"""How the other model terms enter an RBM step's draw: a Metropolis correction, or evidence in the logits.

With ``L(v)`` the model's terms other than the RBM's own that involve its
visible units (:class:`~pymc_rbm.step_methods.terms.OtherTerms`), a draw of
:class:`~pymc_rbm.step_methods.base.RBMStep` either

- accepts each chain's (row's) visible proposal with ``min(1, L(v') / L(v))``
  (:meth:`OtherTermsInDraws._correct`), ``L`` evaluated at the batch where only
  that row changed, or for all rows at once from two vectorised evaluations
  where ``L`` factorises over rows (``_correct_rows``); or,
- where ``log L`` is a sum of per-unit terms, carries the per-unit evidence
  ``δ = log L(1) - log L(0)`` in the visible logits, so every sweep is the
  exact layer update of the tilted RBM and nothing is corrected
  (``_evidence_draw``, one compiled call per draw).

The methods read the step's other terms, its carried state and its generator.

**Exactness inside a larger model.** Let the model's density, as a function
of the visible units ``v`` with all other variables fixed, be
``p_RBM(v) L(v)``, where ``L`` collects every model term except the RBM's own
that involves ``v`` (a likelihood ``y ~ N(v·a, σ)``, a second factor, a
Potential). The step targets the augmented distribution

    π(v, h) ∝ p_RBM(v, h) L(v),     whose v-marginal is ∝ p_RBM(v) L(v),

the full conditional of ``v``. One sweep is two moves, each leaving ``π``
invariant:

1. **Hidden move** ``K_h``: a layer update of ``h`` given ``v`` (Gibbs'
   ``G_h`` or flip-the-state's ``T_h``). It leaves ``p_RBM(h | v)`` invariant,
   and ``π(h | v) = p_RBM(h | v)`` because ``L`` does not depend on ``h``; so
   ``K_h`` leaves ``π`` invariant with no correction.
2. **Visible move** ``K_v``: propose ``v' ~ Q_h(v, ·)``, a layer update of
   ``v`` given ``h`` (Gibbs' ``G_v`` or ``T_v``), and accept it with probability
   ``min(1, L(v') / L(v))``. ``Q_h`` is reversible with respect to
   ``p_RBM(v | h)``:

   - Gibbs: ``Q_h(v, v') = p(v' | h)``, so ``p(v | h) Q_h(v, v') = p(v | h) p(v' | h)``
     is symmetric.
   - Flip-the-state and its α mixture: given ``h`` the units are independent,
     ``p(v | h) = Π_i p(v_i | h)`` and ``Q_h(v, v') = Π_i T_i(v_i, v'_i)`` with each
     ``T_i`` reversible for ``p(v_i | h)`` (Brügge, Fischer & Igel 2013, Definition 1; the
     mixture ``α T_i + (1 - α) G_i`` of two reversible kernels is reversible);
     a product of symmetric ``p(v_i | h) T_i(v_i, v'_i)`` is symmetric.

   The Metropolis-Hastings ratio of target ``π(v | h) ∝ p_RBM(v | h) L(v)``
   with proposal ``Q_h`` is therefore

       π(v' | h) Q_h(v', v) / (π(v | h) Q_h(v, v'))
         = [L(v') / L(v)] · [p(v' | h) Q_h(v', v) / (p(v | h) Q_h(v, v'))]
         = L(v') / L(v),

   so ``K_v`` is reversible with respect to ``π(v | h)`` and leaves ``π``
   invariant. ``h`` is not touched by ``K_v``; on rejection the chain keeps the
   new ``h`` and the old ``v``, which is a valid state of the joint chain.

Hence ``K_h K_v`` leaves ``π`` invariant, and its ``v``-marginal is the full
conditional: the step is a valid Gibbs component next to any other step.
Note that the correction needs the proposal to be reversible for
``p(v | h)`` *given* ``h``; correcting the composed map ``v → v'`` of a
flip-the-state sweep would not do, because ``T_h T_v`` is not reversible on
the joint space. ``tests/step_methods/test_step_exact.py`` builds the
transition matrix of ``K_h K_v`` over all joint states of tiny RBMs and
checks ``π K = π`` exactly (and that the uncorrected sweep, or the corrected
composed sweep, fail it), and runs the step from every joint state to check
it follows that matrix.

``log L(v)`` is one compiled PyTensor function of the value variables it
involves. The value at the current state is kept between draws and
re-evaluated when ``v`` or any of those variables changed since the step's
last draw.

When no term but the RBM's own involves ``v`` (found once, at
construction, from the model's logp terms), ``L ≡ 1``, every proposal is
accepted and no model term is evaluated.

A batch of chains (``shape=(K, n_visible)``) is updated in one vectorised
call. With a correction, chain ``k``'s proposal is accepted or rejected in
turn with ``L`` evaluated at the batch where only row ``k`` changed: each row's
proposal depends on its own ``(v_k, h_k)`` only, so this is a
Metropolis-within-Gibbs scan over the rows, each step reversible for
``π(v_k | h_k, v_{-k})``, exact for any ``L`` (``K`` evaluations a sweep);
rows whose proposal equals the current state need no evaluation.
"""

from __future__ import annotations

import functools

import numpy as np

from pymc_rbm.primitives import softplus
from pymc_rbm.kernels import replica_rounds
from pymc_rbm.kernels.activations import count_changes
from pymc_rbm.kernels.metropolis import acceptance_probability, metropolis_accept

__all__ = ["Correction", "OtherTermsInDraws", "decide_rows", "scan_rows"]

#: The ladder of one rung at β = 1, for the compiled round of an evidence draw.
_ONE_RUNG = np.ones(1)


def scan_rows(rng, log_rest, v_int, v, v_new, rows, log_current, accept_sum, accepted=None, tilt_change=None):
    """Accept the moves of ``rows`` in turn with ``min(1, L(v') / L(v))``; rejected rows of ``v_new`` revert to ``v``.

    The scan of every step whose other terms ``L`` involve several rows
    jointly (module docstring): row ``k`` is set to its proposal in the
    current state ``v_int`` and ``L`` evaluated there; the move is kept, or the
    row restored, by one Metropolis decision (stochastic).

    Parameters
    ----------
    rng : numpy.random.Generator
    log_rest : callable
        ``log L`` of a state shaped as ``v_int``.
    v_int : ndarray of shape (n_chains, n_visible)
        The current state in the variable's dtype; changed in place (accepted rows).
    v, v_new : ndarray of shape (n_chains, n_visible)
        The state before the move and the proposal; ``v_new`` is changed in place (rejected rows).
    rows : sequence of int
        The rows whose proposal differs from ``v``, in the order they are decided.
    log_current : float
        ``log L(v_int)``.
    accept_sum : ndarray of shape (n_chains,)
        Each decided row's acceptance probability is added here.
    accepted : ndarray of shape (n_chains,), optional
        1 is added for each accepted row.
    tilt_change : callable, optional
        ``log T(v') - log T(v)`` of row ``k`` where the proposal was tilted by
        ``T``; subtracted from the log ratio.

    Returns
    -------
    float
        ``log L`` at the state after the scan.
    """
    for k in rows:
        old = v_int[k].copy()
        v_int[k] = v_new[k]
        log_new = log_rest(v_int)
        log_ratio = np.inf if log_current == -np.inf else log_new - log_current
        if tilt_change is not None:
            log_ratio -= tilt_change(k)
        accept_sum[k] += acceptance_probability(log_ratio)
        if metropolis_accept(rng, log_ratio):
            log_current = log_new
            if accepted is not None:
                accepted[k] += 1.0
        else:
            v_int[k] = old
            v_new[k] = v[k]
    return log_current


def decide_rows(rng, values, rows, accept_sum, accepted=None, log_correction=None):
    """One Metropolis decision for each of ``rows`` where ``L`` factorises over the rows, ``L(v) = Π_k L_k(v_k)``.

    Row ``k``'s ratio ``L_k(v'_k) / L_k(v_k)`` does not depend on the other
    rows, so the scan over the rows (:func:`scan_rows`) becomes independent
    decisions, made together (stochastic; one uniform per decided row, in
    row order).

    Parameters
    ----------
    rng : numpy.random.Generator
    values : ndarray of shape (2, n_chains)
        ``log L_k`` of every row at the current state and at the proposal.
    rows : ndarray of int
        The rows to decide (those whose proposal differs).
    accept_sum : ndarray of shape (n_chains,)
        Each decided row's acceptance probability is added here.
    accepted : ndarray of shape (n_chains,), optional
        1 is added for each accepted row.
    log_correction : ndarray of shape (len(rows),), optional
        Subtracted from each row's log ratio (a proposal tilted by ``T``: ``log T(v') - log T(v)``).

    Returns
    -------
    log_ratio : ndarray of shape (len(rows),)
        ``+inf`` where the current state's ``L_k`` is 0 (any proposal is taken there).
    took : ndarray of bool of shape (len(rows),)
    """
    with np.errstate(invalid="ignore"):
        log_ratio = values[1, rows] - values[0, rows]
    log_ratio = np.where(values[0, rows] == -np.inf, np.inf, log_ratio)
    if log_correction is not None:
        log_ratio = log_ratio - log_correction
    accept_sum[rows] += acceptance_probability(log_ratio)
    took = metropolis_accept(rng, log_ratio)
    if accepted is not None:
        accepted[rows[took]] += 1.0
    return log_ratio, took


class Correction:
    """Per-draw state of the Metropolis correction: the integer point, ``log L`` there, acceptance sums, and,
    where ``L`` factorises over rows and they are known, ``log L_k`` of every row there (``row_values``, kept
    up to date by the decisions, so that each sweep evaluates the row terms at its proposals only)."""

    __slots__ = ("v_int", "log_rest", "accept_sum", "accepted", "row_values")

    def __init__(self, v_int, log_rest, n_chains, row_values=None):
        self.v_int, self.log_rest = v_int, log_rest
        self.accept_sum, self.accepted = np.zeros(n_chains), np.zeros(n_chains)
        self.row_values = row_values


class OtherTermsInDraws:
    """The part of :class:`~pymc_rbm.step_methods.base.RBMStep` that brings the other model terms into a draw."""

    def _evidence(self, point) -> np.ndarray:
        """The per-unit evidence ``δ`` at the point, shape (n_chains, n_visible); kept while ``L``'s inputs stay."""
        others = [point[name] for name in self._rest_input_names if name != self._name]
        cache = self.carried.evidence
        if cache is not None and all(np.array_equal(a, b) for a, b in zip(others, cache[0])):
            return cache[1]
        evidence = self.other_terms.unit_tilt(point, self._shape, self._out_dtype)
        self.carried.evidence = ([np.array(a, copy=True) for a in others], evidence)
        return evidence

    def _evidence_draw(self, point, v_in):
        """The draw's sweeps where the other terms are per-unit evidence (:attr:`evidence_draws`), compiled."""
        c, n = self.carried, self._n_chains
        evidence = self._evidence(point)[None]
        h_start = c.hidden_state
        if h_start is None:  # Gibbs after a refresh: its hidden update does not read h
            c.hidden_state = np.zeros_like(c.hidden_input)
        c.visible_state = np.ascontiguousarray(c.visible_state, dtype=np.float64)  # a resumed state may be other
        c.hidden_state = np.ascontiguousarray(c.hidden_state, dtype=np.float64)
        if h_start is not None:
            h_start = c.hidden_state.copy()
        p, labels, swap_stats = self.params, np.zeros((1, n), dtype=np.int64), np.zeros((2, 1))
        for _ in range(self.sweeps):
            replica_rounds.tempered_round(self.rng, c.visible_state[None], c.hidden_state[None],
                                          (p.W, self.W_T, p.vbias, p.hbias), _ONE_RUNG, 1,
                                          (0, labels, swap_stats[0], swap_stats[1]), rule=self.rule, evidence=evidence)
        c.hidden_input = self._full_h(c.visible_state)
        c.visible_input, c.hidden_exp_valid, c.n_incremental, c.rest = None, False, 0, None
        v_out = c.visible_state.astype(self._out_dtype)
        free_energy = -(c.visible_state @ self.params.vbias) - softplus(c.hidden_input).sum(axis=-1)
        n_hidden_changed = self._all_hidden if h_start is None else count_changes(c.hidden_state, h_start)
        return v_out, (free_energy, count_changes(v_out, v_in), n_hidden_changed, self._ones, self._ones)

    def _log_rest(self, point, v_int) -> float:
        return self.other_terms.log_rest(point, v_int.reshape(self._shape))

    def _rest_current(self, point, v_int) -> float:
        """``log L`` at the current state; cached while v (checked by the caller) and L's other inputs stay."""
        others = [point[n] for n in self._rest_input_names if n != self._name]
        cache = self.carried.rest
        if cache is not None and all(np.array_equal(a, b) for a, b in zip(others, cache[0])):
            return cache[1]
        value = self._log_rest(point, v_int)
        self.carried.rest = ([np.array(a, copy=True) for a in others], value)
        return value

    def _accept_rows(self, point, v, v_new):
        """Each row's proposal ``v_new`` accepted with ``min(1, L(v') / L(v))``, as in :meth:`_correct`.

        For a step whose proposals are not a sweep's visible update (an
        independence proposal). ``v`` is the current state (float64, shape
        ``(n_chains, n_visible)``), whose ``log L`` is kept as in a draw.

        Returns
        -------
        v_new : ndarray
            Changed in place: rejected rows revert to ``v``.
        accept, accepted : ndarray of shape (n_chains,)
            Each row's acceptance probability and whether it moved (1 for a
            proposal equal to the current state).
        """
        v_int = v.astype(self._out_dtype)
        correction = Correction(v_int, self._rest_current(point, v_int), self._n_chains)
        v_new = self._correct(point, correction, v, v_new)
        self.carried.rest = (self.carried.rest[0], correction.log_rest)
        return v_new, correction.accept_sum, correction.accepted

    def _correct(self, point, correction: Correction, v, v_new):
        """Accept each chain's proposal with ``min(1, L(v') / L(v))``; rejected rows of ``v_new`` revert to ``v``.

        Rows are visited in turn, ``L`` evaluated with only that row changed;
        an unchanged row is accepted without evaluation (its ratio is 1).
        Returns ``v_new``, changed in place.
        """
        d = correction
        rows = np.flatnonzero((v_new != v).any(axis=-1))
        if rows.size < v_new.shape[0]:
            unchanged = np.ones(v_new.shape[0])
            unchanged[rows] = 0.0
            d.accept_sum += unchanged
            d.accepted += unchanged
        if rows.size and self._row_terms:
            return self._correct_rows(point, d, v, v_new, rows)
        d.log_rest = scan_rows(self.rng, functools.partial(self._log_rest, point), d.v_int, v, v_new, rows,
                               d.log_rest, d.accept_sum, d.accepted)
        return v_new

    def _correct_rows(self, point, d: Correction, v, v_new, rows):
        """:meth:`_correct` where ``L`` factorises over the rows, ``L(v) = Π_k L_k(v_k)``: row ``k``'s ratio is
        ``L_k(v'_k) / L_k(v_k)`` whatever the other rows do, so the scan over the rows is one independent
        Metropolis decision per row, made together from two vectorised evaluations of the row terms."""
        shape = self._shape
        new_int = d.v_int.copy()
        new_int[rows] = v_new[rows]
        if d.row_values is None:
            values = self.other_terms.row_values(point, np.stack([d.v_int.reshape(shape), new_int.reshape(shape)]))
        else:
            values = np.stack([d.row_values, self.other_terms.row_values(point, new_int.reshape(shape)[None])[0]])
        log_ratio, took = decide_rows(self.rng, values, rows, d.accept_sum, d.accepted)
        if d.row_values is not None:
            d.row_values = np.where(np.isin(np.arange(values.shape[1]), rows[took]), values[1], values[0])
        d.v_int[rows[took]] = v_new[rows[took]]
        v_new[rows[~took]] = v[rows[~took]]
        d.log_rest = self._log_rest(point, d.v_int) if np.isinf(d.log_rest) else (
            d.log_rest + float(log_ratio[took].sum()))
        return v_new

    # ------------------------------------------------------ progress bar

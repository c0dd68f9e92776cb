"""Independent exact draws of an RBM variable whose smaller layer can be enumerated.

When the smaller layer of an RBM has ``k`` units with ``2**k`` small enough to
list, summing the larger layer out analytically gives the exact marginal of
the smaller one (:func:`pymc_rbm.enumeration.enumerated_log_weights`,
one enumeration shared with ``log Z``; where the visible layer has at most
:data:`VISIBLE_TABLE_MAX_BITS` units its own marginal is listed instead). A
draw from an alias table of that marginal, then of the other layer from its
conditional, is an exact draw of the joint ``p(v, h)``: draws are
independent, there is nothing to mix and no chain to tune.

**Alone**, :class:`ExactDraws` returns those draws: every draw of every chain
(and of every row of a batched variable) is independent and exactly
distributed.

**Inside a larger model**, let the model's density as a function of the
visible units be ``p_RBM(v) L(v)``, ``L`` collecting every other model term
that involves ``v`` (:class:`~pymc_rbm.step_methods.terms.OtherTerms`). The
exact draw ``(v', h') ~ p_RBM`` is then an independence proposal (Tierney
1994) for ``π(v, h) ∝ p_RBM(v, h) L(v)``: its Metropolis-Hastings ratio is

    π(v', h') p_RBM(v, h) / (π(v, h) p_RBM(v', h')) = L(v') / L(v),

so accepting with ``min(1, L(v') / L(v))`` leaves ``π``, and so the full
conditional of ``v``, invariant. For a batched variable (``K`` rows) the rows
are visited in turn: row ``k``'s proposal is accepted with ``L`` evaluated
at the batch where only row ``k`` changed, each update reversible for
``π(v_k | v_{-k})``, which is exact whether or not ``L`` factorises over
rows (where it does, all rows are decided in one vectorised call: the
correction of every RBM step, :meth:`~pymc_rbm.step_methods.base.RBMStep._correct`).
A rejected row keeps its ``v`` and draws a fresh ``h ~ p(h | v)``, so
the hidden state is never stale (it is auxiliary: nothing reads it).

**Per-unit evidence, on one row or thousands.** Where ``log L`` is a sum of
terms that each involve one unit of one row (readouts of every unit; the
structure ``"units"`` of :class:`~pymc_rbm.step_methods.terms.OtherTerms`),
row ``k``'s full conditional is the RBM tilted by its evidence,
``π_k(v) ∝ p_RBM(v) exp(δ_k · v)`` with ``δ_k = log L_k(1) - log L_k(0)`` per
unit. A draw is then ``tries`` independence proposals per row, each costing
a table lookup and the evidence of the units that change
(:func:`~pymc_rbm.kernels.independence.independence_tries`, all rows in one
compiled call, ratio ``exp(δ_k · (v' - v))``), then ``h ~ p(h | v)`` afresh
for the rows that moved, then ``sweeps`` flip-the-state sweeps of the tilted
RBM (exact layer updates of its own logits, nothing corrected). Each part
leaves ``π_k`` invariant, so the draw does; the proposals carry a row between
the posterior's modes (a noisy image that two patterns explain), the sweeps
make its local moves. The cost is linear in the number of rows.

``tries="auto"`` measures the acceptance of each row's proposals during
tuning (at :data:`TRIES_ADAPT_AT` of the tune phase) and sets ``tries`` so
that the row at the 10% quantile of acceptance moves about
:data:`TARGET_MOVES` times a draw, within ``[MIN_TRIES, MAX_TRIES]``; it is
frozen when tuning ends, so the recorded draws come from one fixed kernel.
The shared parameters that ``δ`` depends on are read at every draw: the
proposal does not depend on them, so NUTS (or any step) on them stays exact
beside this one. Where even :data:`MAX_TRIES` proposals would move a row
less than once in two draws (evidence so strong that the posterior sits far
from the prior), they would cost more than they carry and only
:data:`MIN_TRIES` are kept: the sweeps then do the work, as they do well for
the unimodal posteriors that such evidence usually gives. Where the chains
disagree all the same, the checks after sampling say so, and
:class:`~pymc_rbm.step_methods.ReplicaExchange` tempers that posterior.

**Any per-row likelihood.** Where ``log L = Σ_k log L_k(v_k)`` with each
``L_k`` any function of row ``k`` (readouts ``y_k = v_k·B + noise`` that read
the row's units together, logistic readouts, counts; the structure
``"rows"``, and every term of a variable of one row), row ``k``'s full
conditional is ``π_k(v) ∝ p_RBM(v) L_k(v)``. A draw is then ``tries``
independence proposals per row from the exact marginal, all drawn first
and ``log L_k`` evaluated at all of them, and at the current rows, in one
vectorised call of the row terms (in chunks that bound the memory), the
decisions a compiled scan of those values
(:func:`~pymc_rbm.kernels.independence.row_independence_tries`); then
``h ~ p(h | v)`` afresh for the rows that moved, then ``sweeps``
flip-the-state sweeps whose visible moves are accepted by each row's
``L_k(v') / L_k(v)`` (:mod:`~pymc_rbm.step_methods.correction`, two
evaluations of the row terms a sweep). ``tries="auto"`` adapts as under
per-unit evidence. The row terms are evaluated at the point's values of
the shared parameters (loadings, intercepts, noise) at every draw, the
current rows included, so NUTS on those parameters beside this step stays
exact; the cost of a draw is linear in the number of rows.

Elsewhere (terms that couple several rows) the proposal is decided row by
row, ``L`` evaluated at the batch where only that row changed: exact, but
``K`` evaluations of the whole ``L`` a try, which is why ``pm.sample`` picks
this step by itself only where no other term involves ``v`` or the other
terms are a sum of per-row terms (:meth:`ExactDraws.competence`).
"""

from __future__ import annotations

import math

import numpy as np
from pymc.step_methods.compound import BlockedStep, Competence
from pymc.step_methods.state import dataclass_state

from pymc_rbm.energy import hidden_activation, softplus
from pymc_rbm.enumeration import enumerated_log_weights, enumeration_cost, log_marginal_visible
from pymc_rbm.kernels.activations import count_changes
from pymc_rbm.kernels.independence import EnumeratedLayer, exact_draws, independence_tries, row_independence_tries
from pymc_rbm.kernels.layer import LayerRule
from pymc_rbm.params import RBMParams
from pymc_rbm.random_variable import layer_sizes, rbm_params_of
from pymc_rbm.step_methods.base import RBMStep, RBMStepState, has_constant_parameters
from pymc_rbm.step_methods.correction import Correction
from pymc_rbm.step_methods.terms import free_in_model, other_terms_involve, other_terms_structure

__all__ = [
    "ExactDraws",
    "VisibleExactDraws",
    "ExactDrawsState",
    "EXACT_DRAWS_MAX_BITS",
    "EXACT_DRAWS_MAX_SECONDS",
    "VISIBLE_TABLE_MAX_BITS",
    "exact_draws_pay",
]

#: Largest smaller layer for which ``pm.sample`` picks :class:`ExactDraws` by itself (``2**22`` states: 64 MiB
#: of log weights and cumulative probabilities). The step itself enumerates up to the estimators' limit.
EXACT_DRAWS_MAX_BITS = 22

#: Longest estimated one-off enumeration (:func:`~pymc_rbm.enumeration.enumeration_cost`, in seconds) for
#: which ``pm.sample`` picks :class:`ExactDraws` by itself. On two threads 784 x 20 (``2**20`` states) is
#: estimated at 1.4 s and took 2.8 s; 784 x 21 and 784 x 22, estimated at 2.7 and 5.5 s, took 11 and 22 s on a
#: machine loaded by other jobs (load 3 on 2 cores): still well under what replica exchange needs on such
#: models, and paid once.
EXACT_DRAWS_MAX_SECONDS = 10.0

#: Largest visible layer whose exact marginal the proposals under per-unit evidence draw from directly (an
#: alias table of ``2**n_visible`` entries, 24 MiB at 20 units): a proposal is then a lookup and the evidence
#: of the units that change, about 40 ns for 16 units, against 300 ns through ``p(v | h)`` from a table of
#: the hidden layer. ``pm.sample`` picks :class:`ExactDraws` for per-unit evidence only where this holds.
VISIBLE_TABLE_MAX_BITS = 20

#: Proposals per row and draw under per-unit evidence with ``tries="auto"`` before tuning measures them
#: (and throughout when there are fewer than :data:`MIN_TUNE_FOR_TRIES` tuning draws).
TRIES_START = 32
#: Bounds of the adapted number of proposals per row and draw.
MIN_TRIES, MAX_TRIES = 4, 256
#: Accepted proposals per draw that ``tries="auto"`` gives the row at the 10% quantile of acceptance.
TARGET_MOVES = 1.5
#: Fractions of the tune phase after which ``tries="auto"`` is set from the acceptance measured since the last.
TRIES_ADAPT_AT = (0.25, 0.5)
#: Fewer tuning draws leave ``tries="auto"`` at :data:`TRIES_START`.
MIN_TUNE_FOR_TRIES = 16


def exact_draws_pay(var, model=None) -> bool:
    """Whether ``pm.sample`` should sample ``var`` by :class:`ExactDraws` rather than replica exchange.

    True for a free :class:`~pymc_rbm.RBM` variable whose parameters are
    constants or data, whose smaller layer has at most
    :data:`EXACT_DRAWS_MAX_BITS` units and is estimated to enumerate within
    :data:`EXACT_DRAWS_MAX_SECONDS` (in the memory available), and that
    either no other term of the model involves (independent draws are then
    exact and need no correction) or whose other terms are a sum of per-row
    terms (per-unit evidence, or any likelihood of each row; a variable of one
    row always is) with at most :data:`VISIBLE_TABLE_MAX_BITS` visible units
    (proposals from the exact marginal then cost a lookup each, and every
    row's are decided together; module docstring).

    Parameters
    ----------
    var : TensorVariable
        A random variable of the model.
    model : pymc.Model, optional
        Taken from the context; without a model (none given, none on the
        context stack) the answer is False, since the other terms cannot be
        checked.

    Returns
    -------
    bool
    """
    if not has_constant_parameters(var):
        return False
    model = free_in_model(var, model)
    if model is None:
        return False
    sizes = layer_sizes(rbm_params_of(var).W)
    if sizes is None or min(sizes) > EXACT_DRAWS_MAX_BITS:
        return False
    cost = enumeration_cost(min(sizes), max(sizes))
    if cost.seconds > EXACT_DRAWS_MAX_SECONDS:
        return False
    if cost.available_bytes is not None and 2 * cost.bytes > cost.available_bytes:
        return False
    if not other_terms_involve(model, var):
        return True
    n_visible, n_hidden = sizes
    return (n_visible <= VISIBLE_TABLE_MAX_BITS and enumeration_cost(n_visible, n_hidden).seconds
            <= EXACT_DRAWS_MAX_SECONDS and other_terms_structure(model, var) in ("units", "rows"))


@dataclass_state
class ExactDrawsState(RBMStepState):
    """The sampling state of :class:`ExactDraws`: that of every RBM step, and where ``tries="auto"`` stands.

    ``n_tries`` is the number of proposals per row and draw in use;
    ``tries_draw`` the draws made in this chain, ``tries_tune`` its tuning
    draws, ``tries_made`` and ``tries_accepted`` (per row) the proposals and
    acceptances since the last adaptation.
    """

    n_tries: int = 1
    tries_draw: int = 0
    tries_tune: int = 0
    tries_made: int = 0
    tries_accepted: np.ndarray | None = None


class ExactDraws(RBMStep):
    """Exact draws of an :class:`~pymc_rbm.RBM` variable by enumerating one of its layers.

    The smaller layer (``k`` units) is drawn from its exact marginal, whose
    ``2**k`` probabilities are enumerated once (with ``log Z``, cached), and
    the other layer from its conditional given it; every row of a batched
    variable gets its own draw, all in one vectorised call. When other model
    terms ``L(v)`` involve the visible units, the draw is an independence
    proposal accepted with probability ``min(1, L(v') / L(v))``, row by row
    (exact for any ``L``; see :mod:`pymc_rbm.step_methods.enumerated`). When
    those terms are per-unit evidence (readouts of every unit), each row
    makes ``tries`` such proposals a draw and then ``sweeps`` flip-the-state
    sweeps of the RBM tilted by its evidence, all rows in a few compiled
    calls: the sampler for an RBM prior on every row of a data set.

    ``pm.sample`` picks this step by itself (competence ``IDEAL``, ahead of
    :class:`~pymc_rbm.step_methods.ReplicaExchange`) where that pays: see
    :func:`exact_draws_pay`. Options reach the automatic step by its name:
    ``pm.sample(exact_draws={"record_hidden": True})``.

    Parameters
    ----------
    vars : RBM variable or list of them, optional
        Free RBM variables to sample; by default all of the model's. Their
        weights and biases must be constants or data.
    tries : int or "auto", default "auto"
        Independence proposals per row and draw where other terms involve
        the visible units. ``"auto"``: under per-unit evidence, adapted in
        tuning from the measured acceptance and then frozen (module
        docstring); otherwise 1.
    sweeps : int, optional
        Flip-the-state sweeps of the tilted RBM after the proposals, under
        per-unit evidence (default 1); elsewhere Metropolis-corrected sweeps
        (default 0). Without other terms every draw is exact and there are none.
    max_bits : int, optional
        Largest smaller layer to enumerate (default
        :data:`~pymc_rbm.enumeration.MAX_ENUMERATION_BITS`); larger ones,
        and enumerations that would need more memory or time than allowed,
        are refused with :class:`~pymc_rbm.enumeration.EnumerationTooLarge`.
    record_hidden : bool, default False
        Record the hidden state of each draw as the sampler stat ``hidden``.
    model, rng, initial_point, compile_kwargs, blocked, random_start
        As for every RBM step method (:class:`~pymc_rbm.step_methods.base.RBMStep`).

    Notes
    -----
    Sampler stats are those of :class:`~pymc_rbm.step_methods.BlockGibbs`
    (``accept`` and ``accept_rate`` are 1 without other terms, and the
    proposals' mean acceptance probability and accepted fraction with them),
    ``n_states``, the number of enumerated states, and ``n_tries``, the
    proposals per row of the draw. The enumeration is made when the step is
    built (and again per chain when parameters that are data changed); about
    3 s for 784 x 20 units on two threads, a millisecond for 784 x 10. A draw
    then costs a lookup in an alias table of the enumerated marginal (of the
    visible layer where it has at most :data:`VISIBLE_TABLE_MAX_BITS` units,
    else of the hidden layer, then ``v ~ p(v | h)``) and ``h ~ p(h | v)``, in
    one compiled call for all rows
    (:func:`~pymc_rbm.kernels.independence.exact_draws`).

    Examples
    --------
    >>> import pymc as pm
    >>> from pymc_rbm import RBM, RBMParams, ExactDraws
    >>> p = RBMParams.random(6, 4, rng=0)
    >>> with pm.Model():
    ...     v = RBM("v", p.W, p.vbias, p.hbias, shape=(3, 6))  # three independent rows
    ...     idata = pm.sample(draws=50, tune=10, chains=1, step=ExactDraws(), progressbar=False,
    ...                       compute_convergence_checks=False, random_seed=1)
    >>> int(idata.sample_stats["n_states"].max())
    16
    """

    name = "exact_draws"
    rule = LayerRule(1.0)  # the sweeps under per-unit evidence: flip-the-state
    _state_class = ExactDrawsState

    def __init__(self, vars=None, *, tries: int | str = "auto", sweeps: int | None = None,
                 max_bits: int | None = None, record_hidden: bool = False, **kwargs):
        if "compiled" in kwargs:
            raise TypeError("ExactDraws has no option 'compiled': its draws are compiled where that pays")
        if not (tries == "auto" or (isinstance(tries, (int, np.integer)) and not isinstance(tries, bool)
                                    and tries >= 1)):
            raise ValueError(f"tries must be a positive integer or 'auto', not {tries!r}")
        if sweeps is not None and (isinstance(sweeps, bool) or not isinstance(sweeps, (int, np.integer))
                                   or sweeps < 0):
            raise ValueError(f"sweeps must be a non-negative integer, not {sweeps!r}")
        self.tries = tries
        self.max_bits = max_bits
        self._log_weights = None
        self._table = None
        super().__init__(vars, record_hidden=record_hidden, **kwargs)
        if self._param_fn is not None:
            raise ValueError(
                f"ExactDraws needs the weights and biases of {self._name!r} to be constants or data: the "
                "enumeration would otherwise be redone whenever they change. Use FlipTheState or BlockGibbs "
                "for an RBM with random parameters."
            )
        self.sweeps = int(sweeps) if sweeps is not None else (1 if self.per_row_draws else 0)
        self.stats_dtypes_shapes = {**self.stats_dtypes_shapes, "n_states": (np.int64, []),
                                    "n_tries": (np.int64, [])}
        self.stats_dtypes = [{k: d for k, (d, _) in self.stats_dtypes_shapes.items()}]
        self._reset_tries(0)

    @property
    def keeps_hidden(self) -> bool:
        """Whether ``h`` is carried between draws: under per-row terms, where the flip-the-state sweeps read
        it (a point whose ``v`` changed gets ``h ~ p(h | v)`` afresh); otherwise each draw makes its own."""
        return self.per_row_draws

    @property
    def per_row_draws(self) -> bool:
        """Whether the other terms are a sum of per-row terms (:attr:`evidence_draws` or :attr:`row_draws`): then
        each draw makes ``tries`` proposals per row and ``sweeps`` sweeps, with ``tries="auto"`` adapted."""
        return self.evidence_draws or self.row_draws

    @property
    def row_draws(self) -> bool:
        """Whether the other terms are a sum of per-row terms ``Σ_k log L_k(v_k)`` that are not per-unit
        evidence (a readout that reads a row's units together; any term of a variable of one row): then every
        row's tries are drawn first and decided together from one evaluation of the row terms (module
        docstring)."""
        return bool(self.corrected and not self.evidence_draws
                    and (self.other_terms.structure == "rows" or self._n_chains == 1))

    @staticmethod
    def competence(var, has_grad=None):
        """``IDEAL`` where exact draws pay (:func:`exact_draws_pay`); otherwise ``COMPATIBLE`` for RBM variables
        with constant parameters (usable, never picked) and ``INCOMPATIBLE`` for everything else.

        Registered ahead of :class:`~pymc_rbm.step_methods.ReplicaExchange`,
        which is also ``IDEAL`` there: ``pm.sample`` keeps the first of equally
        competent steps.
        """
        if exact_draws_pay(var):
            return Competence.IDEAL
        return Competence.COMPATIBLE if has_constant_parameters(var) else Competence.INCOMPATIBLE

    # ------------------------------------------------------------ set-up
    def _set_params(self, W, vbias, hbias, *, validate: bool) -> None:
        """Take the parameters and their enumeration (cached: the same model is enumerated once)."""
        super()._set_params(W, vbias, hbias, validate=validate)
        p = self.params
        log_w, _, layer = enumerated_log_weights(RBMParams(p.W, p.vbias, p.hbias), max_bits=self.max_bits)
        if log_w is not self._log_weights:
            self._log_weights = log_w
            self._table = None  # the draws' table, built at the first draw
        self.enumerated_layer = layer
        self.n_states = int(log_w.size)

    def _proposal_table(self) -> EnumeratedLayer:
        """The exact marginal every draw and proposal is taken from: the visible layer's where it is small enough
        (:data:`VISIBLE_TABLE_MAX_BITS`; a proposal is then a lookup), else the enumerated hidden layer's."""
        if self._table is None:
            p = self.params
            if self.enumerated_layer == "visible" or p.W.shape[0] <= VISIBLE_TABLE_MAX_BITS:
                log_p = (self._log_weights if self.enumerated_layer == "visible"
                         else log_marginal_visible(RBMParams(p.W, p.vbias, p.hbias), max_bits=VISIBLE_TABLE_MAX_BITS))
                self._table = EnumeratedLayer.from_log_weights(log_p, "visible", p.W, p.vbias)
            else:
                self._table = EnumeratedLayer.from_log_weights(self._log_weights, "hidden", p.W, p.vbias)
        return self._table

    # ------------------------------------------------------------ tuning
    def _reset_tries(self, tune: int) -> None:
        """Start a chain's ``tries``: the given number, or :data:`TRIES_START` with adaptation planned."""
        self.tries_draw, self.tries_tune = 0, int(tune)
        self.n_tries = TRIES_START if self.tries == "auto" and self.per_row_draws else (
            1 if self.tries == "auto" else int(self.tries))
        self._forget_acceptance()

    def _forget_acceptance(self) -> None:
        self.tries_made, self.tries_accepted = 0, np.zeros(self._n_chains)

    def setup_chain(self, rng, tune: int, draws: int) -> None:
        """Take the chain's generator and start its ``tries`` afresh."""
        super().setup_chain(rng, tune, draws)
        self._reset_tries(tune)

    def _adapt_tries(self) -> None:
        """``tries`` from the acceptance since the last adaptation (module docstring), while tuning."""
        if self.tries_draw > self.tries_tune or not (
                self.tries == "auto" and self.per_row_draws and self.tries_tune >= MIN_TUNE_FOR_TRIES):
            return
        if self.tries_draw in {max(int(self.tries_tune * f), 1) for f in TRIES_ADAPT_AT}:
            rate = float(np.quantile(self.tries_accepted / self.tries_made, 0.1))
            if rate * MAX_TRIES < 0.5 * TARGET_MOVES:  # proposals cannot carry these rows: keep a few
                self.n_tries = MIN_TRIES
            else:
                self.n_tries = int(min(max(math.ceil(TARGET_MOVES / rate), MIN_TRIES), MAX_TRIES))
            self._forget_acceptance()

    # ------------------------------------------------------------ the draw
    def _exact_draws(self) -> tuple[np.ndarray, np.ndarray]:
        """``(v, h) ~ p_RBM`` for every row, independently (stochastic; :func:`~pymc_rbm.kernels.independence.exact_draws`).

        Returns
        -------
        v : ndarray of float64 of shape (n_chains, n_visible)
        h : ndarray of float64 of shape (n_chains, n_hidden)
        """
        return exact_draws(self.rng, self._proposal_table(), self._n_chains, self.params.W, self.params.hbias)

    def _step(self, point):
        """One draw (stochastic): exact draws of every row; with other terms, proposals accepted by ``L`` and
        the sweeps (module docstring)."""
        point = self._chain_start(point)
        self.tries_draw += 1
        if self.per_row_draws:
            out, stats = self._per_row_step(point)
        else:
            out, stats = self._proposal_step(point)
        stats["n_states"], stats["n_tries"] = self.n_states, self.n_tries
        if self.record_hidden:
            stats["hidden"] = self.hidden_state.astype(np.int8).reshape(-1)  # flat for a batch, as RBMStep records it
        self._adapt_tries()
        return out, [stats]

    def _row_log_likelihood(self, point):
        """``states -> log L_k`` of every row: states of shape (m, n_rows, n_visible) in the variable's dtype to
        values of shape (m, n_rows) (the row terms, or the whole ``log L`` of a variable of one row)."""
        shape, terms = self._shape, self.other_terms
        if terms.structure is not None:
            return lambda states: terms.row_values(point, states.reshape(states.shape[0], *shape))
        return lambda states: terms.log_rest_many(point, states.reshape(states.shape[0], *shape))[:, None]

    def _per_row_step(self, point):
        """Per-row terms: ``n_tries`` proposals per row in one compiled call (per-unit evidence) or decided from
        one evaluation of the row terms (any other row terms), ``h`` afresh where a row moved, then the sweeps:
        flip-the-state of the RBM tilted by the evidence, or corrected by each row's terms."""
        c, n = self.carried, self._n_chains
        v_in = point[self._name].reshape(n, self._shape[-1])
        refreshed = self._bring_up_to_date(point, v_in)  # h ~ p(h | v) where the point's v is new
        c.visible_state = np.ascontiguousarray(c.visible_state, dtype=np.float64)
        c.hidden_state = np.ascontiguousarray(c.hidden_state, dtype=np.float64)
        h_start = c.hidden_state.copy()
        hidden = dict(h=c.hidden_state, W=self.params.W, hbias=self.params.hbias)  # h afresh where v moved
        if self.evidence_draws:
            accepted, accept_sum = independence_tries(
                self.rng, c.visible_state, self._evidence(point), self._proposal_table(), self.n_tries, **hidden)
        else:
            log_rows, accepted, accept_sum = row_independence_tries(
                self.rng, c.visible_state, self._proposal_table(), self.n_tries, self._row_log_likelihood(point),
                dtype=self._out_dtype, **hidden)
        if self.sweeps and self.evidence_draws:
            v_out, (free_energy, _, _, _, _) = self._evidence_draw(point, v_in)
        else:
            c.hidden_input = self._full_h(c.visible_state)
            c.visible_input, c.hidden_exp_valid, c.n_incremental, c.rest = None, False, 0, None
            v_out = c.visible_state.astype(self._out_dtype)
            free_energy = -(c.visible_state @ self.params.vbias) - softplus(c.hidden_input).sum(axis=-1)
            if self.sweeps:  # corrected by the row terms, whose values at the current rows the tries gave
                others = [point[name] for name in self._rest_input_names if name != self._name]
                c.rest = ([np.array(a, copy=True) for a in others], float(log_rows.sum()))
                row_values = log_rows if self.other_terms.structure == "rows" else None
                v_out, (free_energy, _, _, _, _) = self._numpy_draw(
                    c.visible_state, Correction(v_out, c.rest[1], n, row_values), point)
        self.tries_made += self.n_tries
        self.tries_accepted += accepted
        self._leave(v_out)
        n_tries = max(self.n_tries, 1)
        stats = self._chain_stats(free_energy, count_changes(v_out, v_in), count_changes(c.hidden_state, h_start),
                                  accept_sum / n_tries, accepted / n_tries, refreshed)
        out = point.copy()
        out[self._name] = v_out.reshape(self._shape)
        return out, stats

    def _proposal_step(self, point):
        """Without other terms an exact draw of every row; with them, ``n_tries`` exact draws each accepted by
        ``min(1, L(v') / L(v))`` row by row, then ``sweeps`` corrected sweeps."""
        c, n = self.carried, self._n_chains
        v_in = point[self._name].reshape(n, self._shape[-1])
        moved = not self._is_left(v_in)
        if moved:
            c.rest = None  # log L of the state this step left
        h_prev = None if moved else c.hidden_state
        v, h = self._exact_draws()
        accept = accepted = self._ones
        if self.corrected:
            v_cur, accept, accepted = v_in.astype(np.float64), np.zeros(n), np.zeros(n)
            for t in range(self.n_tries):
                if t:
                    v, h = self._exact_draws()
                proposal = v.copy()
                v, p_sum, took = self._accept_rows(point, v_cur, v)
                accept, accepted = accept + p_sum, accepted + took
                rejected = np.flatnonzero((v != proposal).any(axis=-1))
                if rejected.size:  # a rejected row keeps its v and gets a fresh h ~ p(h | v)
                    h[rejected] = self._draw_hidden(hidden_activation(v[rejected], self.params))
                v_cur = v
            accept, accepted = accept / self.n_tries, accepted / self.n_tries
        c.visible_state, c.hidden_state = v, h
        c.hidden_input, c.visible_input = hidden_activation(v, self.params), None
        if self.corrected and self.sweeps:
            c.n_incremental, c.hidden_exp_valid = 0, False
            v_int = v.astype(self._out_dtype)
            v_out, (free_energy, _, _, _, _) = self._numpy_draw(
                v, Correction(v_int, self._rest_current(point, v_int), n), point)
        else:
            free_energy = -(v @ self.params.vbias) - softplus(c.hidden_input).sum(axis=-1)
            v_out = v.astype(self._out_dtype)
        self._leave(v_out)
        h = c.hidden_state
        n_hidden_changed = self._all_hidden if h_prev is None else count_changes(h, h_prev)
        stats = self._chain_stats(free_energy, count_changes(v_out, v_in), n_hidden_changed, accept, accepted, moved)
        out = point.copy()
        out[self._name] = v_out.reshape(self._shape)
        return out, stats


# ----------------------------------------------------------------------------- RBMs with ReLU hidden units
def _relu_exact_draws_apply(var, model=None) -> bool:
    """Whether ``var`` is a free ReLU-hidden RBM variable of constant parameters that no other model term involves."""
    from pymc_rbm.random_variable import current_values, is_relu_rbm_variable, random_ancestors

    if not is_relu_rbm_variable(var):
        return False
    W, vbias, hbias, _ = var.owner.op.dist_params(var.owner)
    if random_ancestors(W, vbias, hbias) or current_values(W, vbias, hbias) is None:
        return False
    model = free_in_model(var, model)
    return model is not None and not other_terms_involve(model, var)


class VisibleExactDraws(BlockedStep):
    """Independent exact draws of an :class:`~pymc_rbm.RBM` variable with ReLU hidden units.

    The hidden units are continuous, so the visible layer is the one
    enumerated: its exact marginal ``p(v) ∝ exp(-F(v))`` is listed once
    (:func:`~pymc_rbm.enumeration.enumerated_log_weights`, shared with
    ``log Z``) and every row of every draw is an independent draw from it.
    ``pm.sample`` picks this step by itself (competence ``IDEAL``) for such a
    variable whose weights and biases are constants or data and that no
    other model term involves; it is ``INCOMPATIBLE`` with everything else
    (the binary RBM steps do not take ReLU hidden units either).

    Parameters
    ----------
    vars : RBM variable or list of them, optional
        Free ReLU-hidden RBM variables; by default all of the model's.
    max_bits : int, optional
        Largest visible layer to enumerate (default: the variable's own ``max_bits``).
    model, rng
        As for PyMC's step methods.
    """

    name = "visible_exact_draws"
    stats_dtypes_shapes = {"n_states": (np.int64, [])}

    def __init__(self, vars=None, *, max_bits: int | None = None, model=None, rng=None, blocked: bool = True,
                 initial_point=None, compile_kwargs=None):
        from pymc.model import modelcontext

        from pymc_rbm.random_variable import current_values, is_relu_rbm_variable

        model = modelcontext(model)
        values = model.value_vars if vars is None else (vars if isinstance(vars, (list, tuple)) else [vars])
        self.vars, self._tables = [], []
        for value in values:
            rv = model.values_to_rvs.get(value, value)
            value = model.rvs_to_values.get(rv, value)
            if not is_relu_rbm_variable(rv):
                if vars is None:
                    continue
                raise ValueError(f"VisibleExactDraws samples RBM variables with ReLU hidden units; {rv} is not one")
            if not _relu_exact_draws_apply(rv, model):
                raise ValueError(
                    f"VisibleExactDraws needs {rv} to be free, its weights and biases constants or data, and no "
                    "other model term to involve it"
                )
            op = rv.owner.op
            W, vbias, hbias, _ = op.dist_params(rv.owner)
            params = op.params(*(np.asarray(x, dtype=np.float64) for x in current_values(W, vbias, hbias)))
            log_w, log_z, _ = enumerated_log_weights(params, max_bits=op.max_bits if max_bits is None else max_bits)
            cdf = np.cumsum(np.exp(log_w - log_z))
            self.vars.append(value)
            self._tables.append((value.name, cdf, params.n_visible))
        if not self.vars:
            raise ValueError("VisibleExactDraws found no RBM variable with ReLU hidden units to sample")
        self.rng = np.random.default_rng(rng)

    def step(self, point):
        """Independent exact draws of every row of every variable (stochastic)."""
        from pymc_rbm.enumeration import states_at

        out = point.copy()
        n_states = 0
        for name, cdf, n_visible in self._tables:
            shape = np.shape(point[name])
            n_rows = int(np.prod(shape[:-1], dtype=np.int64))
            idx = np.minimum(np.searchsorted(cdf, self.rng.random(n_rows) * cdf[-1], side="right"), cdf.size - 1)
            out[name] = states_at(idx, n_visible).astype(point[name].dtype).reshape(shape)
            n_states = max(n_states, cdf.size)
        return out, [{"n_states": n_states}]

    @staticmethod
    def competence(var, has_grad=None):
        """``IDEAL`` for a free ReLU-hidden RBM variable of constant parameters that no other term involves,
        ``INCOMPATIBLE`` otherwise."""
        return Competence.IDEAL if _relu_exact_draws_apply(var) else Competence.INCOMPATIBLE


def register_visible_exact_draws() -> None:
    """Add :class:`VisibleExactDraws` to ``pymc.step_methods.STEP_METHODS`` (once); it is ``INCOMPATIBLE`` with
    every variable but a ReLU-hidden RBM's, so its place changes no other choice."""
    from pymc.step_methods import STEP_METHODS

    if VisibleExactDraws not in STEP_METHODS:
        STEP_METHODS.append(VisibleExactDraws)

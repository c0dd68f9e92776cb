"""Step methods for :class:`~pymc_rbm.categorical.CategoricalRBM` variables in ``pm.sample``.

The step methods sweep the RBM through the one engine,
:func:`pymc_rbm.kernels.sweep.sweep` at a
:class:`~pymc_rbm.categorical.CategoricalAtBeta` target, with the hidden units
as auxiliary state:

- :class:`CategoricalExactDraws` (what ``pm.sample`` picks where the
  parameters are constants, a layer can be enumerated and no other model
  term involves the variable): independent exact draws.
- :class:`CategoricalReplicaExchange` (what it picks for the other variables
  with constant parameters): replicas on a ladder of inverse temperatures,
  adapted during tuning, swept through the engine at their β and swapped.
- :class:`CategoricalMetropolisedGibbs` (what it picks where the parameters
  are random variables): each sweep updates the hidden units by
  flip-the-state (Brügge, Fischer & Igel 2013) and the visible units by
  Liu's (1996) Metropolised Gibbs sampler, its generalisation to ``q``
  states; ``alpha`` mixes both with Gibbs.
- :class:`CategoricalGibbs`: block Gibbs sweeps.

Their construction is that of the binary steps (:mod:`pymc_rbm.step_methods.base`),
whose proofs carry over unit for unit, because given ``h`` the visible units
are independent and each unit's update is reversible for its conditional:

- **The hidden state is refreshed** (drawn from ``p(h | v)``) whenever the
  point the step receives differs from the one it left, or the parameters
  changed; a stale ``h`` would break invariance.
- **Other model terms** ``L(v)`` (a likelihood of noisy reads, a Potential)
  make the visible update a proposal reversible for ``p_RBM(v | h)``, which
  is accepted with ``min(1, L(v') / L(v))``, row by row for a batch of rows,
  so that the step samples the full conditional ``∝ p_RBM(v) L(v)``.

``tests/step_methods/test_categorical_step.py`` builds the exact transition
matrix of the step on every joint state of small models, with and without a
likelihood, and checks ``π K = π`` with negative controls.
"""

from __future__ import annotations

from dataclasses import field

import numpy as np
from pymc.model import modelcontext
from pymc.step_methods.compound import BlockedStep, Competence, StepMethodState
from pymc.step_methods.state import dataclass_state
from pymc.util import get_random_generator, get_value_vars_from_user_vars
from pytensor.graph.basic import Constant
from pytensor.graph.traversal import ancestors

from pymc_rbm.categorical import (
    MAX_ENUMERATED_STATES,
    CategoricalAtBeta,
    CategoricalRBMParams,
    ExactSampler,
    at_beta,
    energy,
    free_energy,
    hidden_input,
)
from pymc_rbm.kernels.layer import GIBBS, LayerRule, check_alpha
from pymc_rbm.layers import BERNOULLI
from pymc_rbm.kernels.metropolis import acceptance_probability, metropolis_accept
from pymc_rbm.kernels.state import RBMState
from pymc_rbm.kernels.sweep import sweep
from pymc_rbm.step_methods.terms import OtherTerms
from pymc_rbm.validation import check_positive_int
from pymc_rbm.categorical.random_variable import (
    categorical_params_of,
    categorical_sizes,
    core_parameters,
    is_categorical_rbm_variable,
)
from pymc_rbm.random_variable import random_ancestors

__all__ = [
    "CategoricalExactDraws",
    "CategoricalGibbs",
    "CategoricalMetropolisedGibbs",
    "CategoricalReplicaExchange",
    "EXACT_DRAWS_MAX_FLOPS",
    "exact_draws_pay",
    "register",
]


# ----------------------------------------------------------------------------- step methods
@dataclass_state
class CategoricalStepState(StepMethodState):
    """The sampling state of a categorical step: its generator and the auxiliary hidden state.

    ``visible_state`` and ``hidden_state`` (float, ``(n_chains, n_visible)``
    and ``(n_chains, n_hidden)``) are the state the step left, ``left_state``
    the draw it returned (a point that holds it keeps ``h``), ``param_inputs``
    the values its parameters were computed from, ``start_pending`` whether the
    random start is still to come. None before a chain's first draw.
    """

    visible_state: np.ndarray | None = field(default=None)
    hidden_state: np.ndarray | None = field(default=None)
    param_inputs: list | None = field(default=None)
    left_state: np.ndarray | None = field(default=None)
    start_pending: bool = field(default=False)


@dataclass_state
class CategoricalReplicaExchangeState(CategoricalStepState):
    """:class:`CategoricalStepState` and the ladder: ``betas``, the hot replicas ``hot_visible`` and
    ``hot_hidden`` (shape ``((n_replicas - 1) * n_chains, n)``), the round count whose parity picks the swaps,
    the swap counts since the last adaptation, the draws done and the tuning draws at which the ladder adapts."""

    betas: np.ndarray | None = field(default=None)
    hot_visible: np.ndarray | None = field(default=None)
    hot_hidden: np.ndarray | None = field(default=None)
    n_rounds: int = field(default=0)
    swap_accepted: np.ndarray | None = field(default=None)
    swap_proposed: np.ndarray | None = field(default=None)
    draws_done: int = field(default=0)
    adapt_at: set | None = field(default=None)


class _Tilted:
    """A sweep target whose visible fields are those of ``base`` plus per-row evidence (rows beyond it untilted).

    ``evidence`` has shape (n_rows, n_visible, q) and tilts the first
    ``n_rows`` rows of a batch (the cold replica of a ladder, or every chain).
    """

    def __init__(self, base, evidence):
        self.base, self.evidence = base, evidence
        self.visible_layer, self.hidden_layer, self.W = base.visible_layer, base.hidden_layer, base.W

    def hidden_input(self, v):
        return self.base.hidden_input(v)

    def hidden_logits(self, a):
        return self.base.hidden_logits(a)

    def visible_logits(self, h):
        f = self.base.visible_logits(h)
        f[: self.evidence.shape[0]] += self.evidence
        return f


class _CategoricalStep(BlockedStep):
    """The shared adapter: parameters, hidden refresh, the Metropolis correction for other terms."""

    name = "categorical_rbm"
    default_blocked = False
    _state_class = CategoricalStepState
    rule: LayerRule = GIBBS
    stats_dtypes_shapes = {
        "free_energy": (np.float64, []),
        "n_changed": (np.int64, []),
        "accept": (np.float64, []),
        "refreshed": (bool, []),
    }

    def __new__(cls, vars=None, *args, **kwargs):
        model = modelcontext(kwargs.get("model"))
        kwargs["model"] = model
        return super().__new__(cls, *args, vars=_resolve_vars(vars, model), **kwargs)

    def __init__(self, vars=None, *, sweeps: int = 1, model=None, rng=None, initial_point=None,
                 compile_kwargs: dict | None = None, blocked: bool = False, random_start: bool = True):
        model = modelcontext(model)
        value_vars = _resolve_vars(vars, model)
        if len(value_vars) != 1:
            raise ValueError(
                f"{type(self).__name__} samples one CategoricalRBM variable per step, got {len(value_vars)}"
            )
        self.sweeps = check_positive_int(sweeps, "sweeps")
        if not isinstance(random_start, (bool, np.bool_)):
            raise ValueError(f"random_start must be True or False, got {random_start!r}")
        self.random_start = bool(random_start)
        self.start_pending = False
        self.blocked = blocked
        self.rng = get_random_generator(rng)
        compile_kwargs = dict(compile_kwargs or {})
        compile_kwargs.setdefault("on_unused_input", "ignore")
        (value_var,) = value_vars
        rv = model.values_to_rvs[value_var]
        self.vars = [value_var]
        self._name = value_var.name
        if initial_point is None:
            initial_point = model.initial_point()
        value = np.asarray(initial_point[self._name])
        self._shape = value.shape
        self._dtype = np.dtype(value_var.dtype)
        self._n_chains = int(np.prod(value.shape[:-1], dtype=np.int64))
        self.visible_state = self.hidden_state = self.param_inputs = None
        self.left_state = None
        self._setup_params(model, rv, initial_point, compile_kwargs)
        self.other_terms = OtherTerms(model, rv, value_var, compile_kwargs)
        # L factorises over the rows of a batched variable: all rows are corrected at once (_correct_rows)
        self._row_terms = self.other_terms.structure is not None and len(self._shape) == 2 and self._shape[0] > 1
        self._setup_stats()

    # ------------------------------------------------------------ set-up
    def _setup_params(self, model, rv, initial_point, compile_kwargs):
        graphs = list(categorical_params_of(rv))
        self._param_fn, self._param_names, self._data_fn = None, [], None
        if all(isinstance(g, Constant) for g in graphs):
            self._set_params(*(g.data for g in graphs))
            return
        replaced = model.replace_rvs_by_values(graphs)
        found = set(ancestors(replaced))
        inputs = [v for v in model.value_vars if v in found]
        fn = model.compile_fn(replaced, inputs=inputs, point_fn=False, **compile_kwargs)
        if inputs:
            self._param_fn, self._param_names = fn, [v.name for v in inputs]
            self._set_params(*fn(*[np.asarray(initial_point[n]) for n in self._param_names]))
        else:  # data: read again per chain
            self._data_fn = fn
            self._set_params(*fn())

    def _set_params(self, W, vbias, hbias):
        W, vbias, hbias = core_parameters(np.asarray(W), np.asarray(vbias), np.asarray(hbias), np.zeros(()))[:3]
        self.params = CategoricalRBMParams(W, vbias, hbias)
        if self.params.n_visible != self._shape[-1]:
            raise ValueError(f"W has {self.params.n_visible} visible units but the variable has {self._shape[-1]}")
        self.target = CategoricalAtBeta(self.params)

    def _setup_stats(self):
        batch = list(self._shape[:-1])
        shapes = {}
        for key, (dtype, _) in _CategoricalStep.stats_dtypes_shapes.items():
            shapes[key] = ((object if batch else dtype), batch) if key != "refreshed" else (dtype, [])
        # The NDArray trace stores one scalar per draw and stat: per-row vectors go in as objects (as RBMStep).
        self.stats_dtypes_shapes = shapes
        self.stats_dtypes = [{k: d for k, (d, _) in shapes.items()}]

    @property
    def corrected(self) -> bool:
        """Whether other model terms involve the labels (the visible moves are then Metropolis-corrected)."""
        return self.other_terms.active

    @staticmethod
    def competence(var, has_grad=None):
        return Competence.INCOMPATIBLE

    def setup_chain(self, rng, tune: int, draws: int) -> None:
        """Take the chain's generator, forget the hidden state, re-read data-dependent parameters."""
        super().setup_chain(rng, tune, draws)
        self.start_pending = self.random_start and tune > 0
        self.visible_state = self.hidden_state = self.param_inputs = None
        self.left_state = None
        if self._data_fn is not None:
            self._set_params(*self._data_fn())

    # ------------------------------------------------------------ a draw
    def step(self, point):
        """One draw: refresh ``h`` if the point changed, then ``sweeps`` sweeps (stochastic)."""
        if self.start_pending:
            self.start_pending = False
            point = point.copy()
            point[self._name] = self.rng.integers(0, self.params.n_states, size=self._shape).astype(self._dtype)
        v_in = np.asarray(point[self._name]).reshape(self._n_chains, self._shape[-1])
        refreshed = self._bring_up_to_date(point, v_in)
        accept_sum = np.zeros(self._n_chains)
        accept = None
        self.evidence = self._unit_evidence(point) if self.uses_evidence else None
        if self.corrected and self.evidence is None:
            current = {"v": v_in.astype(self._dtype), "log": None}
            self._current = current  # the cold state and log L there (replica swaps move it)

            def accept(v_old, v_new):
                return self._correct(point, current, v_old, v_new, accept_sum)

        v, h = self._draw(self.visible_state, self.hidden_state, accept)
        self.visible_state, self.hidden_state = v, h
        v_out = v.astype(self._dtype)
        self.left_state = v_out.copy()
        f = free_energy(v_out, self.params)
        n_changed = np.count_nonzero(v_out != v_in, axis=-1)
        acc = accept_sum / self.sweeps if accept is not None else np.ones(self._n_chains)
        out = point.copy()
        out[self._name] = v_out.reshape(self._shape)
        return out, [self._stats(f, n_changed, acc, refreshed)]

    #: Whether per-unit evidence is swept exactly as a tilt of the visible fields (steps that sweep; not exact draws).
    tilts_evidence = True

    @property
    def uses_evidence(self) -> bool:
        """Whether the other terms are per-unit evidence, ``log L(v) = Σ_{k,i} ℓ_{ki}(v_{ki})``, swept exactly.

        Then ``p_RBM(v | h) L(v)`` is, unit by unit, a Potts unit whose fields
        gain ``ℓ_{ki}(·)``: every sweep updates the visible units from that
        exact conditional (Gibbs or Metropolised Gibbs), nothing to correct.
        Noisy reads of each site, observed through a ``pm.Categorical``, are such terms.
        """
        return self.tilts_evidence and self.corrected and self.other_terms.structure == "units"

    def _unit_evidence(self, point):
        """``ℓ_{ki}(c) - ℓ_{ki}(0)`` for every row ``k``, unit ``i`` and label ``c``, shape (n_chains, n_visible, q).

        From one vectorised evaluation of the row terms at ``q·n + 1`` states
        (all labels 0, then unit ``i`` of every row set to ``c``). None (the
        step then corrects by Metropolis instead) where a row's terms are
        ``-inf`` at the all-zeros state, whose values the differences need.
        """
        n, q, shape = self._shape[-1], self.params.n_states, self._shape
        rows = self._n_chains
        stack = np.zeros((q * n + 1, rows, n), dtype=self._dtype)
        for c in range(q):
            stack[1 + c * n + np.arange(n), :, np.arange(n)] = c
        values = self.other_terms.row_values(point, stack.reshape((q * n + 1, *shape)))  # (q n + 1, rows)
        base = values[0]
        if not np.all(np.isfinite(base)):
            return None
        with np.errstate(invalid="ignore"):
            ev = (values[1:] - base).reshape(q, n, rows).transpose(2, 1, 0)
        ev = np.where(np.isnan(ev), -np.inf, ev)
        return np.maximum(ev, -1e300)  # -inf (a label L rules out) as a finite field of probability 0

    def _target(self):
        """The engine's target for the draw: the RBM, its visible fields tilted by the evidence where there is some."""
        return self.target if self.evidence is None else _Tilted(self.target, self.evidence)

    def _draw(self, v, h, accept):
        """The draw's ``sweeps`` sweeps of the engine from ``(v, h)`` (``h`` None: drawn first); returns ``(v, h)``."""
        target = self._target()
        for _ in range(self.sweeps):
            state, _ = sweep(self.rng, RBMState(v, h), target, self.rule, accept=accept)
            v, h = state.v, state.h
        return v, h

    def _bring_up_to_date(self, point, v_in) -> bool:
        """Parameters for the point; ``h`` redrawn (set to None: the next sweep draws it from ``p(h | v)``)
        unless the point holds exactly the labels and parameters this step left."""
        changed = False
        if self._param_fn is not None:
            values = [np.asarray(point[n]) for n in self._param_names]
            if self.param_inputs is None or not all(np.array_equal(a, b) for a, b in zip(values, self.param_inputs)):
                self._set_params(*self._param_fn(*values))
                self.param_inputs = [a.copy() for a in values]
                changed = True
        moved = self.left_state is None or not np.array_equal(v_in, self.left_state)
        if changed or moved or self.hidden_state is None:
            self.visible_state = v_in.astype(np.float64)
            self.hidden_state = None  # the sweep's hidden update is then a Gibbs draw from p(h | v)
            return True
        return False

    def _correct(self, point, current, v_old, v_new, accept_sum):
        """Accept each row's visible move with ``min(1, L(v') / L(v))``, rows in turn; rejected rows revert."""
        v_int = current["v"]
        if self._row_terms:
            return self._correct_rows(point, v_int, v_old, v_new, accept_sum)
        if current["log"] is None:
            current["log"] = self.other_terms.log_rest(point, v_int.reshape(self._shape))
        for k in range(v_new.shape[0]):
            if np.array_equal(v_new[k], v_old[k]):
                accept_sum[k] += 1.0
                continue
            old = v_int[k].copy()
            v_int[k] = v_new[k]
            log_new = self.other_terms.log_rest(point, v_int.reshape(self._shape))
            log_ratio = np.inf if current["log"] == -np.inf else log_new - current["log"]
            accept_sum[k] += acceptance_probability(log_ratio)
            if metropolis_accept(self.rng, log_ratio):
                current["log"] = log_new
            else:
                v_int[k] = old
                v_new[k] = v_old[k]
        return v_new

    def _correct_rows(self, point, v_int, v_old, v_new, accept_sum):
        """:meth:`_correct` where ``L`` factorises over the rows, ``L(v) = Π_k L_k(v_k)``: row ``k``'s ratio
        ``L_k(v'_k) / L_k(v_k)`` does not depend on the other rows, so every row is decided at once from two
        vectorised evaluations of the row terms (the same scan, in distribution)."""
        new_int = v_int.copy()
        new_int[:] = v_new
        stack = np.stack([v_int.reshape(self._shape), new_int.reshape(self._shape)])
        values = self.other_terms.row_values(point, stack)
        with np.errstate(invalid="ignore"):
            log_ratio = np.where(values[0] == -np.inf, np.inf, values[1] - values[0])
        moved = (v_new != v_old).any(axis=-1)
        log_ratio = np.where(moved, log_ratio, 0.0)
        accept_sum += acceptance_probability(log_ratio)
        took = metropolis_accept(self.rng, log_ratio)
        v_new[~took] = v_old[~took]
        v_int[took] = new_int[took]
        return v_new

    def _stats(self, f, n_changed, accept, refreshed):
        batch = self._shape[:-1]
        if batch:
            return {"free_energy": f.reshape(batch), "n_changed": n_changed.reshape(batch).astype(np.int64),
                    "accept": accept.reshape(batch), "refreshed": refreshed}
        return {"free_energy": float(f[0]), "n_changed": int(n_changed[0]), "accept": float(accept[0]),
                "refreshed": refreshed}


def _resolve_vars(vars, model):
    if vars is None:
        value_vars = [model.rvs_to_values[rv] for rv in model.free_RVs if is_categorical_rbm_variable(rv)]
        if not value_vars:
            raise ValueError("the model has no free CategoricalRBM variable to sample")
        return value_vars
    if not isinstance(vars, (list, tuple)):
        vars = [vars]
    value_vars = get_value_vars_from_user_vars(list(vars), model)
    bad = [v.name for v in value_vars if not is_categorical_rbm_variable(model.values_to_rvs[v])]
    if bad:
        raise ValueError(f"categorical RBM steps sample CategoricalRBM variables only; {', '.join(bad)} is not one")
    return value_vars


class CategoricalMetropolisedGibbs(_CategoricalStep):
    """Metropolised Gibbs sweeps of a :class:`CategoricalRBM` variable (``pm.sample``'s pick for random parameters).

    Each sweep updates the hidden units given ``v`` and then every visible
    unit given ``h`` by Liu's (1996) Metropolised Gibbs sampler (propose one
    of the other ``q - 1`` labels in proportion to its probability, accept
    with ``min(1, (1 - p_current) / (1 - p_proposed))``), mixed with the Gibbs
    draw by ``alpha``; the hidden units by flip-the-state (its ``q = 2`` case)
    mixed the same way. It never proposes to stay, so it moves more often
    than Gibbs (Peskun 1973); the hidden units are auxiliary and redrawn
    whenever another step changed the point (module docstring).

    Parameters
    ----------
    vars : CategoricalRBM variable, optional
    alpha : float in [0, 1], default 1.0
        Weight of the Metropolised update against Gibbs, per unit.
    sweeps : int, default 1
        Sweeps per recorded draw.
    random_start : bool, default True
        Uniformly random labels on a chain's first tuning draw (PyMC starts
        every chain at the same point).
    model, rng, initial_point, compile_kwargs, blocked
        As for every PyMC step method.

    Notes
    -----
    Stats per draw (per row of a batched variable): ``free_energy`` F(v),
    ``n_changed`` (labels changed in the draw), ``accept`` (mean Metropolis
    acceptance of the correction for other model terms, 1 without them) and
    ``refreshed``.
    """

    name = "categorical_metropolised_gibbs"

    def __init__(self, vars=None, *, alpha: float = 1.0, **kwargs):
        self.alpha = check_alpha(alpha)
        self.rule = LayerRule(self.alpha)
        super().__init__(vars, **kwargs)

    @staticmethod
    def competence(var, has_grad=None):
        """``IDEAL`` for CategoricalRBM variables (exact draws and replica exchange, registered first, win the tie
        where the parameters are constants), else ``INCOMPATIBLE``."""
        return Competence.IDEAL if is_categorical_rbm_variable(var) else Competence.INCOMPATIBLE


class CategoricalGibbs(_CategoricalStep):
    """Block Gibbs sweeps of a :class:`CategoricalRBM` variable: ``h ~ p(h | v)``, then ``v ~ p(v | h)``.

    Parameters as for :class:`CategoricalMetropolisedGibbs` (without ``alpha``).
    ``pm.sample`` never picks it by itself; pass ``step=CategoricalGibbs()`` for Gibbs.
    """

    name = "categorical_gibbs"
    rule = GIBBS

    @staticmethod
    def competence(var, has_grad=None):
        """``PREFERRED`` for CategoricalRBM variables, else ``INCOMPATIBLE``."""
        return Competence.PREFERRED if is_categorical_rbm_variable(var) else Competence.INCOMPATIBLE


#: Largest one-off enumeration (multiply-adds, about ``configurations x n_visible x n_states x n_hidden``) for which
#: ``pm.sample`` picks exact draws by itself: about 5 s in NumPy (2**16 x 20 x 21 x 16 = 4.4e8 took 2.1 s).
EXACT_DRAWS_MAX_FLOPS = 1e9


def exact_draws_pay(var, model=None) -> bool:
    """Whether ``pm.sample`` should sample ``var`` by :class:`CategoricalExactDraws`.

    True for a free :class:`CategoricalRBM` variable whose parameters are
    constants or data, whose smaller enumeration (``2**n_hidden`` or
    ``n_states**n_visible`` configurations) is at most
    :data:`~pymc_rbm.categorical.MAX_ENUMERATED_STATES`, and that no other
    model term involves (independent exact draws then need no correction).
    """
    if not is_categorical_rbm_variable(var) or random_ancestors(*categorical_params_of(var)):
        return False
    try:
        model = modelcontext(model)
    except TypeError:
        return False
    if var not in model.free_RVs:
        return False
    sizes = categorical_sizes(categorical_params_of(var)[0])
    if sizes is None:
        return False
    n, q, H = sizes
    configurations = min(2**H, q**n)
    if configurations > MAX_ENUMERATED_STATES or configurations * n * q * H > EXACT_DRAWS_MAX_FLOPS:
        return False
    others = [r for r in model.basic_RVs if r is not var] + list(model.potentials)
    return not (others and var in set(ancestors(others)))


class CategoricalExactDraws(_CategoricalStep):
    """Independent exact draws of a :class:`CategoricalRBM` variable with constant parameters.

    The smaller layer's configurations are enumerated once
    (:class:`~pymc_rbm.categorical.ExactSampler`); every draw of every row is
    then independent and exact. Where other model terms ``L(v)`` involve the
    labels, the draw is an independence proposal (Tierney 1994) accepted with
    ``min(1, L(v') / L(v))`` row by row, which is exact for any ``L`` but
    rarely accepted where ``L`` is informative: ``pm.sample`` picks this step
    by itself (``IDEAL``, ahead of :class:`CategoricalMetropolisedGibbs`) only
    where no other term involves the variable (:func:`exact_draws_pay`).

    Parameters
    ----------
    vars : CategoricalRBM variable, optional
    max_states : int, default 2**20
        Largest enumeration; larger models are refused.
    model, rng, initial_point, compile_kwargs, blocked
        As for every PyMC step method.
    """

    name = "categorical_exact_draws"
    tilts_evidence = False  # its proposals are independent draws, corrected by Metropolis

    def __init__(self, vars=None, *, max_states: int = MAX_ENUMERATED_STATES, **kwargs):
        self.max_states = check_positive_int(max_states, "max_states")
        kwargs.setdefault("random_start", False)
        super().__init__(vars, **kwargs)
        if self._param_fn is not None:
            raise ValueError(
                "CategoricalExactDraws needs constant parameters (or data); these depend on random variables: "
                "use CategoricalMetropolisedGibbs"
            )

    def _set_params(self, W, vbias, hbias):
        super()._set_params(W, vbias, hbias)
        self._sampler = ExactSampler(self.params, max_states=self.max_states)

    def _draw(self, v, h, accept):
        v_new, _ = self._sampler.draw(self.rng, self._n_chains)
        v_new = v_new.astype(np.float64)
        if accept is not None:
            v_new = accept(v, v_new)
        return v_new, None

    @staticmethod
    def competence(var, has_grad=None):
        """``IDEAL`` where :func:`exact_draws_pay`, else ``INCOMPATIBLE``."""
        return Competence.IDEAL if exact_draws_pay(var) else Competence.INCOMPATIBLE


class CategoricalReplicaExchange(_CategoricalStep):
    """Replica exchange (parallel tempering) of a :class:`CategoricalRBM` variable on a fixed ladder.

    Replica ``r`` samples ``p_{β_r}(v, h) ∝ exp(-β_r E(v, h))`` with ``β_0 = 1 > β_1 > … > β_{R-1}``;
    the cold replica is the variable, and it alone carries the other model
    terms ``L(v)`` (its visible moves are corrected as in the other steps).
    A round sweeps every replica through the engine at its β (one
    :func:`~pymc_rbm.kernels.sweep.sweep` of all rows, β per row, by
    Metropolised Gibbs mixed with Gibbs by ``alpha``) and then proposes to
    swap the joint states of neighbours, pairs ``(0, 1), (2, 3), …`` on even
    rounds and ``(1, 2), (3, 4), …`` on odd ones (Syed, Bouchard-Côté,
    Deligiannidis & Doucet 2022), each accepted with
    ``min(1, exp((β_r - β_{r+1}) (E(x_r) - E(x_{r+1}))))``, times ``L(v_{1}) / L(v_0)``
    for the pair that involves the cold replica. Every round leaves the
    product ``π(x_0) Π_{r>0} p_{β_r}(x_r)`` invariant, so the cold replica
    samples the full conditional ``∝ p_RBM(v) L(v)``; the hot replicas are
    auxiliary state, kept between draws (their targets do not depend on the
    point, since the parameters must be constants or data) and redrawn at
    each chain's start.

    **The ladder is adapted during tuning** (Syed, Bouchard-Côté, Deligiannidis &
    Doucet 2022): at tuning draws ``tune/4`` and ``tune/2`` the swap rejection
    rates ``r_i`` of the pairs give the communication barrier
    ``Λ(β_k) = Σ_{i<k} r_i`` (linear in β between rungs), and the new ladder
    has ``ceil(2Λ) + 1`` rungs (at least as many as the initial ladder, since
    a rung costs little in a batched sweep, and at most ``max_replicas``)
    between 1 and ``β_min`` spaced evenly in ``Λ``, so that every pair rejects about
    equally often; the hot replicas then restart from random labels and burn
    in during the rest of tuning. After tuning the ladder is frozen, so the
    draws come from a time-homogeneous chain. With ``tune < 40`` the initial
    ladder is kept.

    ``pm.sample`` picks this step by itself for ``CategoricalRBM`` variables
    whose parameters are constants or data, unless exact draws pay
    (:func:`exact_draws_pay`): an exactly invariant sampler that stays in one
    mode gives wrong answers without a word, and on a model with two sharp
    modes Metropolised Gibbs alone does (``docs/categorical.md``).

    Parameters
    ----------
    vars : CategoricalRBM variable, optional
    betas : array_like of float, optional
        The ladder, decreasing from 1 (default: ``n_replicas`` values spaced
        geometrically from 1 to ``beta_min``).
    n_replicas : int, default 8
        Rungs of the initial ladder.
    beta_min : float in (0, 1), default 0.05
        The hottest rung, kept by the adaptation.
    max_replicas : int, default 32
        Most rungs the adaptation may choose.
    alpha : float in [0, 1], default 1.0
        Weight of Metropolised Gibbs against Gibbs in the sweeps.
    sweeps : int, default 1
        Rounds (sweep of every replica, then swaps) per recorded draw.
    model, rng, initial_point, compile_kwargs, blocked, random_start
        As for :class:`CategoricalMetropolisedGibbs`.
    """

    name = "categorical_replica_exchange"
    _state_class = CategoricalReplicaExchangeState

    def __init__(self, vars=None, *, betas=None, n_replicas: int = 8, beta_min: float = 0.05, alpha: float = 1.0,
                 max_replicas: int = 32, **kwargs):
        if betas is None:
            n_replicas = check_positive_int(n_replicas, "n_replicas", 2)
            if not 0.0 < float(beta_min) < 1.0:
                raise ValueError(f"beta_min must lie in (0, 1), got {beta_min!r}")
            betas = np.geomspace(1.0, float(beta_min), n_replicas)
        betas = np.asarray(betas, dtype=np.float64).reshape(-1)
        if betas.size < 2 or betas[0] != 1.0 or not np.all(np.diff(betas) < 0) or betas[-1] < 0:
            raise ValueError(f"betas must decrease from 1 to a value >= 0 with at least 2 rungs, got {betas.tolist()}")
        self.initial_betas = betas
        self.betas = betas.copy()
        self.max_replicas = check_positive_int(max_replicas, "max_replicas", 2)
        self.adapt_at: set = set()
        self.draws_done = 0
        self.alpha = check_alpha(alpha)
        self.rule = LayerRule(self.alpha)
        super().__init__(vars, **kwargs)
        if self._param_fn is not None:
            raise ValueError(
                "CategoricalReplicaExchange needs constant parameters (or data): the hot replicas are kept between "
                "draws; use CategoricalMetropolisedGibbs where the parameters are random variables"
            )
        self._reset_replicas()

    def _reset_replicas(self):
        self.hot_visible = self.hot_hidden = None
        self.n_rounds = 0
        self.swap_accepted = np.zeros(self.betas.size - 1)
        self.swap_proposed = np.zeros(self.betas.size - 1)

    def setup_chain(self, rng, tune: int, draws: int) -> None:
        super().setup_chain(rng, tune, draws)
        self.betas = self.initial_betas.copy()
        self.draws_done = 0
        self.adapt_at = {tune // 4, tune // 2} if tune >= 40 else set()
        self._reset_replicas()

    def _adapt(self) -> None:
        """Respace the ladder evenly in the communication barrier measured since the last adaptation."""
        rates = self.swap_rates
        if not np.all(np.isfinite(rates)):
            return
        lam = np.concatenate([[0.0], np.cumsum(1.0 - rates)])  # Λ at each rung, non-decreasing
        total = float(lam[-1])
        n = int(min(self.max_replicas, max(self.initial_betas.size, np.ceil(2.0 * total) + 1)))
        lam = lam + 1e-12 * np.arange(lam.size)  # strictly increasing for the inverse
        targets = np.linspace(0.0, lam[-1], n)
        betas = np.interp(targets, lam, self.betas)  # β decreasing along Λ
        betas[0], betas[-1] = 1.0, self.betas[-1]
        if np.all(np.diff(betas) < 0):
            self.betas = betas
        self._reset_replicas()

    @property
    def swap_rates(self) -> np.ndarray:
        """Acceptance rate of the swaps of each neighbouring pair so far in the chain, shape (n_replicas - 1,)."""
        with np.errstate(invalid="ignore"):
            return self.swap_accepted / self.swap_proposed

    def _draw(self, v, h, accept):
        R, n, p = self.betas.size, self._n_chains, self.params
        if h is None:  # the cold replica's h, redrawn from p(h | v)
            h, _ = BERNOULLI.update(self.rng, None, hidden_input(v, p), GIBBS)
        if self.hot_visible is None:
            self.hot_visible = self.rng.integers(0, p.n_states, ((R - 1) * n, p.n_visible)).astype(np.float64)
            a = hidden_input(self.hot_visible, p) * self.betas[1:].repeat(n)[:, None]
            self.hot_hidden, _ = BERNOULLI.update(self.rng, None, a, GIBBS)
        target = at_beta(p, np.repeat(self.betas, n), R * n)
        if self.evidence is not None:
            target = _Tilted(target, self.evidence)
        V = np.concatenate([v, self.hot_visible])
        Hh = np.concatenate([h, self.hot_hidden])

        def accept_cold(v_old, v_new):
            if accept is not None:
                v_new[:n] = accept(v_old[:n], v_new[:n].copy())
            return v_new

        for _ in range(self.sweeps):
            state, _ = sweep(self.rng, RBMState(V, Hh), target, self.rule, accept=accept_cold)
            V, Hh = state.v, state.h
            self._swap(V, Hh, n, accept)
        self.hot_visible, self.hot_hidden = V[n:], Hh[n:]
        return V[:n], Hh[:n]

    def _swap(self, V, Hh, n, accept):
        """One round of neighbour swaps (even or odd pairs, all decided in one call), in place on the replicas."""
        R, betas = self.betas.size, self.betas
        first = self.n_rounds % 2
        self.n_rounds += 1
        pairs = np.arange(first, R - 1, 2)
        if pairs.size == 0:
            return
        E = energy(V.astype(np.int64), Hh, self.params).reshape(R, n)
        log_ratio = (betas[pairs] - betas[pairs + 1])[:, None] * (E[pairs] - E[pairs + 1])  # (n_pairs, n)
        if first == 0 and self.evidence is not None:
            log_ratio[0] += self._evidence_change(V[:n], V[n : 2 * n])
        elif first == 0 and accept is not None:
            log_ratio[0] += self._log_rest_change(V[:n], V[n : 2 * n])
        took = metropolis_accept(self.rng, log_ratio.ravel()).reshape(log_ratio.shape)
        self.swap_proposed[pairs] += n
        self.swap_accepted[pairs] += took.sum(axis=1)
        a = (pairs[:, None] * n + np.arange(n))[took]  # rows of the lower rung of each accepted swap
        b = a + n
        V[np.concatenate([a, b])] = V[np.concatenate([b, a])]
        Hh[np.concatenate([a, b])] = Hh[np.concatenate([b, a])]
        if first == 0 and accept is not None and took[0].any():  # the correction's current state moved with the swap
            self._current["v"][:] = V[:n].astype(self._dtype)
            self._current["log"] = None

    def _evidence_change(self, v_cold, v_new) -> np.ndarray:
        """``log L(v') - log L(v)`` per row from the per-unit evidence (:attr:`uses_evidence`)."""
        rows, units = np.arange(v_cold.shape[0])[:, None], np.arange(v_cold.shape[1])
        ev = self.evidence
        return (ev[rows, units, v_new.astype(np.int64)] - ev[rows, units, v_cold.astype(np.int64)]).sum(axis=-1)

    def _log_rest_change(self, v_cold, v_new) -> np.ndarray:
        """``log L(v'_k) - log L(v_k)`` per row ``k`` when row ``k`` of the cold replica alone becomes ``v'_k``.

        Where ``L`` factorises over the rows (or the variable has one row) the
        rows' swaps are independent; otherwise only the one row of a
        multi-row variable whose ``L`` does not factorise is refused.
        """
        shape, dt = self._shape, self._dtype
        cur = v_cold.astype(dt)
        if self._row_terms:
            stack = np.stack([cur.reshape(shape), v_new.astype(dt).reshape(shape)])
            values = self.other_terms.row_values(self._point, stack)
            with np.errstate(invalid="ignore"):
                return np.where(values[0] == -np.inf, np.inf, values[1] - values[0])
        if cur.shape[0] == 1:
            old = self.other_terms.log_rest(self._point, cur.reshape(shape))
            new = self.other_terms.log_rest(self._point, v_new.astype(dt).reshape(shape))
            return np.array([np.inf if old == -np.inf else new - old])
        raise ValueError(
            "CategoricalReplicaExchange: other model terms involve several rows of the variable jointly; swaps "
            "with the cold replica need them to factorise over rows (use CategoricalMetropolisedGibbs)"
        )

    def step(self, point):
        self._point = point
        if self.draws_done in self.adapt_at:
            self._adapt()
        self.draws_done += 1
        return super().step(point)

    @staticmethod
    def competence(var, has_grad=None):
        """``IDEAL`` for CategoricalRBM variables with constant (or data) parameters, else ``INCOMPATIBLE``."""
        if is_categorical_rbm_variable(var) and not random_ancestors(*categorical_params_of(var)):
            return Competence.IDEAL
        return Competence.INCOMPATIBLE


def register() -> None:
    """Add the categorical steps to ``pymc.step_methods.STEP_METHODS`` (once), as the binary steps are added."""
    from pymc.step_methods import STEP_METHODS

    for method in (CategoricalExactDraws, CategoricalReplicaExchange, CategoricalMetropolisedGibbs, CategoricalGibbs):
        if method in STEP_METHODS:
            STEP_METHODS.remove(method)
        STEP_METHODS.append(method)


register()

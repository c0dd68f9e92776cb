"""The shared adapter of the categorical RBM steps: parameters, the hidden units as auxiliary state, other terms.

:class:`CategoricalStep` is what :class:`~pymc_rbm.step_methods.categorical.CategoricalGibbs`,
``CategoricalMetropolisedGibbs``, ``CategoricalExactDraws`` and
``CategoricalReplicaExchange`` share, as :class:`~pymc_rbm.step_methods.base.RBMStep`
is for the binary steps: the parameters (constants read once, random ones
computed from the point), the hidden state refreshed whenever the point
changed, other model terms accepted by their Metropolis ratio (all rows at
once where they factorise over rows) or, when they are one term per site,
swept as a tilt of the visible fields (:class:`TiltedTarget`). The proofs are
those of the binary steps, unit for unit (:mod:`pymc_rbm.step_methods.correction`).
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

from pymc_rbm.categorical import CategoricalAtBeta, CategoricalRBMParams, free_energy
from pymc_rbm.categorical.random_variable import categorical_params_of, core_parameters, is_categorical_rbm_variable
from pymc_rbm.kernels.layer import GIBBS, LayerRule
from pymc_rbm.kernels.metropolis import acceptance_probability, metropolis_accept
from pymc_rbm.kernels.state import RBMState
from pymc_rbm.kernels.sweep import sweep
from pymc_rbm.step_methods.terms import OtherTerms
from pymc_rbm.validation import check_positive_int

__all__ = ["CategoricalStep", "CategoricalStepState", "TiltedTarget", "resolve_categorical_vars"]


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


class TiltedTarget:
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


class CategoricalStep(BlockedStep):
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
        return super().__new__(cls, *args, vars=resolve_categorical_vars(vars, model), **kwargs)

    def __init__(self, vars=None, *, sweeps: int = 1, model=None, rng=None, initial_point=None,
                 compile_kwargs: dict | None = None, blocked: bool = False, random_start: bool = True):
        model = modelcontext(model)
        value_vars = resolve_categorical_vars(vars, model)
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
        for key, (dtype, _) in CategoricalStep.stats_dtypes_shapes.items():
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
        return self.target if self.evidence is None else TiltedTarget(self.target, self.evidence)

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


def resolve_categorical_vars(vars, model):
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

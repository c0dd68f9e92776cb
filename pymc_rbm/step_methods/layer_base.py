"""The PyMC adapter shared by the RBM steps: the variable plumbing of all of them, the draws of the other layer types.

:class:`VariableStep` is the plumbing every RBM step shares, the binary steps
(:class:`~pymc_rbm.step_methods.base.RBMStep`) included: the one value
variable (checked and found by the layer type's :meth:`~VariableStep.is_variable`),
the options, the random start, the parameters (constants read once, data
re-read per chain, random ones computed from the point only when it changed),
the other model terms and the stats shaped per chain. A new unit type writes
only its layer hooks on top of it.

:class:`LayerStep` is what the categorical steps
(:mod:`pymc_rbm.step_methods.categorical`) and the Gaussian ones
(:mod:`pymc_rbm.step_methods.gaussian`) share, as
:class:`~pymc_rbm.step_methods.base.RBMStep` is for the binary steps: the
hidden state refreshed whenever the point changed, and other model terms ``L(v)`` accepted by their
Metropolis ratio (all rows at once where they factorise over rows).
:class:`~pymc_rbm.step_methods.layer_ladder.LadderStep` adds replica exchange
on a ladder of inverse temperatures adapted in tuning. A layer type's steps
say only what depends on the layer:
which variables they sample (:meth:`VariableStep.is_variable`), their parameters
and sweep target (:meth:`VariableStep.params_of`, :meth:`VariableStep._set_params`),
a random visible state, the energy and free energy.

The proofs are those of the binary steps, unit for unit
(:mod:`pymc_rbm.step_methods.correction`): the hidden units are auxiliary
state, redrawn from ``p(h | v)`` whenever anything else changed the point; a
visible update reversible for ``p_RBM(v | h)`` and accepted with
``min(1, L(v') / L(v))`` leaves ``p_RBM(v, h) L(v)`` invariant.
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

from pymc_rbm._runtime import THREADED_PRODUCT, single_blas_thread
from pymc_rbm.kernels.layer import GIBBS, LayerRule
from pymc_rbm.kernels.state import RBMState
from pymc_rbm.kernels.sweep import sweep
from pymc_rbm.step_methods.correction import decide_rows, scan_rows
from pymc_rbm.step_methods.terms import OtherTerms
from pymc_rbm.validation import check_positive_int

__all__ = ["LayerStep", "LayerStepState", "VariableStep"]


class VariableStep(BlockedStep):
    """The PyMC plumbing of every RBM step: one value variable, its parameters, the random start, the stats.

    The binary steps (:class:`~pymc_rbm.step_methods.base.RBMStep`) and those
    of the other layer types (:class:`LayerStep`) are built on it; a step
    says only what depends on its layer: which variables it samples
    (:meth:`is_variable`, :attr:`variable_kind`), their symbolic parameters
    (:meth:`params_of`) and how their values are taken (:meth:`_set_params`),
    a random visible state (:meth:`_random_visible`) and how a draw is made
    (``step``). The parameters are read once when they are constants, again
    at each chain's start when they are data (so ``pm.set_data`` between runs
    is seen), and computed by one compiled function of the point's values,
    only when those changed, when they depend on random variables.

    Subclasses call :meth:`_setup_variable`, :meth:`_setup_params`,
    :meth:`_setup_other_terms` and :meth:`_declare_stats` from their
    ``__init__``.
    """

    default_blocked = False
    #: The distribution's name, for messages.
    variable_kind = "RBM"

    def __new__(cls, vars=None, *args, **kwargs):
        model = modelcontext(kwargs.get("model"))
        kwargs["model"] = model
        return super().__new__(cls, *args, vars=cls.resolve_vars(vars, model), **kwargs)

    def step(self, point):
        """One draw (:meth:`_step`), with one BLAS thread where the step's products could be threaded.

        A threaded product sums in an order that follows the number of threads, so the draws would
        depend on the machine (:func:`~pymc_rbm._runtime.single_blas_thread`). The products of one row
        are matrix-vector products, which OpenBLAS sums the same way with any number of threads: a step
        on one row and one replica draws without the context (a few microseconds a draw).
        """
        rows = self._product_rows()
        if rows > 1 and rows * np.size(self.params.W) >= THREADED_PRODUCT:
            with single_blas_thread():
                return self._step(point)
        return self._step(point)

    def _step(self, point):
        """One draw: the new point and the draw's stats (what :meth:`step` returns)."""
        raise NotImplementedError

    def _product_rows(self) -> int:
        """The most rows of the step's products: one per chain (a ladder's replicas multiply them)."""
        return self._n_chains

    # ------------------------------------------------------------ what a layer type says
    @staticmethod
    def is_variable(var) -> bool:
        """Whether ``var`` is a random variable this step samples."""
        raise NotImplementedError

    @staticmethod
    def params_of(rv) -> tuple:
        """The symbolic parameters of the variable ``rv``, in the order :meth:`_set_params` takes them."""
        raise NotImplementedError

    def _set_params(self, *arrays) -> None:
        """Take the parameters' values (set ``self.params`` and what the draws need of them)."""
        raise NotImplementedError

    def _read_params(self, arrays, *, validate: bool) -> None:
        """:meth:`_set_params` with ``arrays``; ``validate`` is False for values at a point of the chain
        (a step whose :meth:`_set_params` checks its values may then check less)."""
        self._set_params(*arrays)

    def _random_visible(self, size: tuple) -> np.ndarray:
        """Random visible states of shape ``size`` for random starts and hot replicas (stochastic)."""
        raise NotImplementedError

    def _check_start(self, value) -> None:
        """Refuse a chain's first value of the variable when it is outside the layer's support (nothing here)."""

    def _forget_state(self) -> None:
        """Forget the auxiliary state a step keeps between the draws of a chain."""
        raise NotImplementedError

    @classmethod
    def resolve_vars(cls, vars, model) -> list:
        """The value variables the step samples: ``vars`` checked, or the model's free variables of its kind.

        Parameters
        ----------
        vars : random variable, value variable, list of them, or None
        model : pymc.Model

        Returns
        -------
        list of TensorVariable
        """
        kind = cls.variable_kind
        if vars is None:
            value_vars = [model.rvs_to_values[rv] for rv in model.free_RVs if cls.is_variable(rv)]
            if not value_vars:
                raise ValueError(
                    f"the model has no free {kind} variable to sample (observed {kind} variables are not sampled)"
                )
            return value_vars
        if not isinstance(vars, (list, tuple)):
            vars = [vars]
        for var in vars:
            if var in model.observed_RVs or any(var is model.rvs_to_values.get(rv) for rv in model.observed_RVs):
                raise ValueError(f"{var} is an observed variable: {cls.__name__} samples free {kind} variables only")
        value_vars = get_value_vars_from_user_vars(list(vars), model)
        bad = [v.name for v in value_vars if not cls.is_variable(model.values_to_rvs[v])]
        if bad:
            raise ValueError(
                f"{cls.__name__} can only sample {kind} variables; {', '.join(bad)} "
                f"{'is' if len(bad) == 1 else 'are'} not. Assign other variables to another step method "
                "(or let pm.sample choose)."
            )
        return value_vars

    # ------------------------------------------------------------ set-up
    def _setup_variable(self, vars, model, *, sweeps, rng, initial_point, compile_kwargs, blocked, random_start):
        """Take the one variable the step samples and the options every step has.

        Returns
        -------
        rv, value_var, initial_point, compile_kwargs
            The variable, its value variable, the model's initial point (when
            not given) and the options of compiled functions.
        """
        value_vars = self.resolve_vars(vars, model)
        if len(value_vars) != 1:
            raise ValueError(
                f"{type(self).__name__} samples one {self.variable_kind} variable per step, got {len(value_vars)} "
                f"({[v.name for v in value_vars]}); pass blocked=False for one step per variable"
            )
        self.sweeps = check_positive_int(sweeps, "sweeps")  # refuses True and 2.0, which int() took for 1 and 2
        if not isinstance(random_start, (bool, np.bool_)):
            raise ValueError(f"random_start must be True or False, got {random_start!r}")
        self.random_start = bool(random_start)
        self.start_pending = False
        self._start_checked = False
        self.blocked = blocked
        self.rng = get_random_generator(rng)
        compile_kwargs = dict(compile_kwargs or {})
        compile_kwargs.setdefault("on_unused_input", "ignore")
        (value_var,) = value_vars
        self.vars = [value_var]
        self._name = value_var.name
        if initial_point is None:
            initial_point = model.initial_point()
        value = np.asarray(initial_point[self._name])
        self._shape = value.shape
        self._out_dtype = np.dtype(value_var.dtype)
        self._batch_shape = value.shape[:-1]
        self._n_chains = int(np.prod(self._batch_shape, dtype=np.int64))
        return model.values_to_rvs[value_var], value_var, initial_point, compile_kwargs

    def _setup_params(self, model, rv, initial_point, compile_kwargs) -> None:
        """Constant parameters are read now; others get one compiled function (of their inputs, or of none
        for data, read again per chain)."""
        graphs = list(self.params_of(rv))
        self._param_fn = None
        self._param_input_names: list[str] = []
        self._data_fn = None
        if all(isinstance(g, Constant) for g in graphs):
            self._read_params([g.data for g in graphs], validate=True)
            return
        replaced = model.replace_rvs_by_values(graphs)
        found = set(ancestors(replaced))
        inputs = [v for v in model.value_vars if v in found]
        fn = model.compile_fn(replaced, inputs=inputs, point_fn=False, **compile_kwargs)
        if inputs:
            fn.trust_input = True
            self._param_fn = fn
            self._param_input_names = [v.name for v in inputs]
            values = [np.asarray(initial_point[n], dtype=v.dtype) for n, v in zip(self._param_input_names, inputs)]
            self._read_params(fn(*values), validate=True)  # shapes now; values again on each change
        else:  # constants and data (shared variables): read per chain in setup_chain
            self._data_fn = fn
            self._read_params(fn(), validate=True)

    def _setup_other_terms(self, model, rv, value_var, compile_kwargs) -> None:
        """Find the model terms other than the RBM's own that involve its value (``L(v)``)."""
        self.other_terms = OtherTerms(model, rv, value_var, compile_kwargs)
        # L factorises over the rows of a batched variable: its rows are corrected at once
        self._row_terms = self.other_terms.structure is not None and len(self._shape) == 2 and self._shape[0] > 1

    def _declare_stats(self, declared: dict, extra: dict | None = None) -> None:
        """Declare the stats: those of ``declared`` one per chain of the variable (``refreshed`` one per
        draw), then ``extra`` as given."""
        batch = list(self._batch_shape)
        shapes = {}
        for key, (dtype, _) in declared.items():
            # The NDArray trace stores one scalar per draw and stat: vectors go in as objects.
            shapes[key] = ((object if batch else dtype), batch) if key != "refreshed" else (dtype, [])
        shapes.update(extra or {})
        self._chain_stat_dtypes = {key: np.dtype(dtype) for key, (dtype, _) in declared.items()}
        # one chain: each stat as the Python scalar of its dtype (a call per stat; NumPy's conversions cost more)
        self._chain_stat_scalars = {key: {"b": bool, "i": int, "u": int}.get(d.kind, float)
                                    for key, d in self._chain_stat_dtypes.items()}
        self.stats_dtypes_shapes = shapes
        self.stats_dtypes = [{k: d for k, (d, _) in shapes.items()}]

    @property
    def corrected(self) -> bool:
        """Whether other model terms involve the visible units (the visible moves are then Metropolis-corrected)."""
        return self.other_terms.active

    @staticmethod
    def competence(var, has_grad=None):
        """``INCOMPATIBLE`` for every variable (each step rates those of its kind)."""
        return Competence.INCOMPATIBLE

    # ------------------------------------------------------------ a chain
    def setup_chain(self, rng, tune: int, draws: int) -> None:
        """Take the chain's generator, forget the auxiliary state, re-read data-dependent parameters."""
        super().setup_chain(rng, tune, draws)
        self.start_pending = self.random_start and tune > 0
        self._start_checked = False
        self._forget_state()
        if self._data_fn is not None:
            self._read_params(self._data_fn(), validate=True)

    def _chain_start(self, point):
        """The point, with a random visible state on a chain's first tuning draw (``random_start``).

        A chain's first value outside the layer's support is refused (:meth:`_check_start`).
        """
        if not self._start_checked:
            self._start_checked = True
            self._check_start(point[self._name])
        if not self.start_pending:
            return point
        self.start_pending = False
        point = point.copy()
        point[self._name] = self._random_visible(self._shape).astype(self._out_dtype)
        return point

    def _params_for(self, point) -> bool:
        """Bring parameters that depend on random variables up to date with the point; True when they changed."""
        if self._param_fn is None:
            return False
        values = [point[n] for n in self._param_input_names]
        cached = self.param_inputs
        if cached is not None and all(np.array_equal(a, b) for a, b in zip(values, cached)):
            return False
        self._read_params(self._param_fn(*values), validate=False)
        self.param_inputs = [np.array(a, copy=True) for a in values]
        return True

    def _shaped_stats(self, per_chain: dict, refreshed: bool) -> dict:
        """The draw's stats as declared: ``per_chain`` holds arrays of shape (n_chains,), one per declared stat."""
        batch = self._batch_shape
        dtypes = self._chain_stat_dtypes
        if batch:
            stats = {k: np.asarray(x).astype(dtypes[k], copy=False).reshape(batch) for k, x in per_chain.items()}
        else:
            scalars = self._chain_stat_scalars
            stats = {k: scalars[k](x[0]) for k, x in per_chain.items()}
        stats["refreshed"] = refreshed
        return stats


@dataclass_state
class LayerStepState(StepMethodState):
    """The sampling state of a :class:`LayerStep`: its generator and the auxiliary hidden state.

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


class LayerStep(VariableStep):
    """The shared adapter of one RBM variable of another layer type: hidden refresh, the Metropolis correction.

    :class:`VariableStep` holds the variable, its parameters and the random
    start. Subclasses set :attr:`variable_kind` and implement
    :meth:`is_variable`, :meth:`params_of`, :meth:`_set_params` (sets
    ``params`` and ``target``), :meth:`_random_visible` and
    :meth:`_free_energy`; the layer rule of the sweeps is :attr:`rule`.

    Parameters
    ----------
    vars : RBM variable, optional
        Default: the model's free variables of this kind (one per step).
    sweeps : int, default 1
        Sweeps per recorded draw.
    model, rng, initial_point, compile_kwargs, blocked
        As for every PyMC step method.
    random_start : bool, default True
        A random visible state on a chain's first tuning draw (PyMC starts
        every chain at the same point).
    """

    name = "layer_rbm"
    _state_class = LayerStepState
    rule: LayerRule = GIBBS
    stats_dtypes_shapes = {
        "free_energy": (np.float64, []),
        "n_changed": (np.int64, []),
        "accept": (np.float64, []),
        "refreshed": (bool, []),
    }

    def __init__(self, vars=None, *, sweeps: int = 1, model=None, rng=None, initial_point=None,
                 compile_kwargs: dict | None = None, blocked: bool = False, random_start: bool = True):
        model = modelcontext(model)
        rv, value_var, initial_point, compile_kwargs = self._setup_variable(
            vars, model, sweeps=sweeps, rng=rng, initial_point=initial_point, compile_kwargs=compile_kwargs,
            blocked=blocked, random_start=random_start,
        )
        self._forget_state()
        self.evidence = None
        self._setup_params(model, rv, initial_point, compile_kwargs)
        self._setup_other_terms(model, rv, value_var, compile_kwargs)
        self._declare_stats(LayerStep.stats_dtypes_shapes)

    @property
    def _dtype(self):
        """The variable's dtype (the name the layer types' steps use)."""
        return self._out_dtype

    def _free_energy(self, v: np.ndarray) -> np.ndarray:
        """``F(v)`` of visible states ``(n_chains, n_visible)`` in the variable's dtype, shape (n_chains,)."""
        raise NotImplementedError

    def _forget_state(self) -> None:
        self.visible_state = self.hidden_state = self.param_inputs = None
        self.left_state = None

    # ------------------------------------------------------------ a draw
    #: Whether per-unit evidence is swept as a tilt of the visible fields (:attr:`uses_evidence`).
    tilts_evidence = False
    #: Whether the tilt is only a proposal: the visible moves are then still accepted with the ratio of ``L`` to it.
    corrects_tilt = False

    @property
    def uses_evidence(self) -> bool:
        """Whether the other terms are per-unit evidence swept as a tilt of the visible fields.

        Only for steps that set :attr:`tilts_evidence` and implement
        ``_unit_evidence(point)``; the others correct every visible move by
        Metropolis. Where the tilt is the exact conditional (the categorical
        sweeps) nothing is left to correct; where it is a proposal
        (:attr:`corrects_tilt`) the moves are accepted with
        ``min(1, L(v') T(v) / (L(v) T(v')))`` for the tilt ``T``.
        """
        return self.tilts_evidence and self.corrected and self.other_terms.structure == "units"

    def _tilt_change(self, v_old, v_new, rows) -> np.ndarray:
        """``log T(v') - log T(v)`` per row of the tilt in use (:attr:`corrects_tilt`), shape (rows,); 0 here.

        ``v_old`` and ``v_new`` are the rows ``rows`` (a slice or indices) of the variable's chains.
        """
        return np.zeros(v_old.shape[0])

    def _step(self, point):
        """One draw: refresh ``h`` if the point changed, then ``sweeps`` sweeps (stochastic)."""
        point = self._chain_start(point)
        v_in = np.asarray(point[self._name]).reshape(self._n_chains, self._shape[-1])
        refreshed = self._bring_up_to_date(point, v_in)
        accept_sum = np.zeros(self._n_chains)
        accept = None
        self.evidence = self._unit_evidence(point) if self.uses_evidence else None
        if self.corrected and (self.evidence is None or self.corrects_tilt):
            current = {"v": v_in.astype(self._out_dtype), "log": None}
            self._current = current  # the cold state and log L there (replica swaps move it)

            def correct(v_old, v_new):
                return self._correct(point, current, v_old, v_new, accept_sum)

            accept = correct

        v, h = self._draw(self.visible_state, self.hidden_state, accept)
        self.visible_state, self.hidden_state = v, h
        v_out = v.astype(self._out_dtype)
        self.left_state = v_out.copy()
        f = self._free_energy(v_out)
        n_changed = np.count_nonzero(v_out != v_in, axis=-1)
        acc = accept_sum / self.sweeps if accept is not None else np.ones(self._n_chains)
        out = point.copy()
        out[self._name] = v_out.reshape(self._shape)
        return out, [self._shaped_stats({"free_energy": f, "n_changed": n_changed, "accept": acc}, refreshed)]

    def _tilted(self, target):
        """``target`` with the visible fields tilted by the draw's per-unit evidence (none here: ``target``)."""
        return target

    def _target(self):
        """The engine's target for the draw: the RBM at β = 1, tilted by the evidence where there is some."""
        return self._tilted(self.target)

    def _draw(self, v, h, accept):
        """The draw's ``sweeps`` sweeps of the engine from ``(v, h)`` (``h`` None: drawn first); returns ``(v, h)``."""
        target = self._target()
        for _ in range(self.sweeps):
            state, _ = sweep(self.rng, RBMState(v, h), target, self.rule, accept=accept)
            v, h = state.v, state.h
        return v, h

    def _bring_up_to_date(self, point, v_in) -> bool:
        """Parameters for the point; ``h`` redrawn (set to None: the next sweep draws it from ``p(h | v)``)
        unless the point holds exactly the visible state and parameters this step left."""
        changed = self._params_for(point)
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
        def log_rest(v):
            return self.other_terms.log_rest(point, v.reshape(self._shape))

        def tilt_change(k):
            return self._tilt_change(v_old[k : k + 1], v_new[k : k + 1], slice(k, k + 1))[0]

        if current["log"] is None:
            current["log"] = log_rest(v_int)
        moved = (v_new != v_old).any(axis=-1)
        accept_sum[~moved] += 1.0
        current["log"] = scan_rows(self.rng, log_rest, v_int, v_old, v_new, np.flatnonzero(moved), current["log"],
                                   accept_sum, tilt_change=tilt_change)
        return v_new

    def _correct_rows(self, point, v_int, v_old, v_new, accept_sum):
        """:meth:`_correct` where ``L`` factorises over the rows, ``L(v) = Π_k L_k(v_k)``: row ``k``'s ratio
        ``L_k(v'_k) / L_k(v_k)`` does not depend on the other rows, so every row is decided at once from two
        vectorised evaluations of the row terms (the same scan, in distribution)."""
        moved = (v_new != v_old).any(axis=-1)
        accept_sum[~moved] += 1.0
        rows = np.flatnonzero(moved)
        if not rows.size:
            return v_new
        new_int = v_int.copy()
        new_int[:] = v_new
        values = self.other_terms.row_values(point, np.stack([v_int.reshape(self._shape), new_int.reshape(self._shape)]))
        _, took = decide_rows(self.rng, values, rows, accept_sum,
                              log_correction=self._tilt_change(v_old[rows], v_new[rows], rows))
        v_new[rows[~took]] = v_old[rows[~took]]
        v_int[rows[took]] = new_int[rows[took]]
        return v_new

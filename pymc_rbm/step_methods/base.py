"""The shared PyMC adapter of the RBM step methods: hidden bookkeeping, parameters, correction.

:class:`RBMStep` is a :class:`pymc.step_methods.compound.BlockedStep` that
updates the visible units of one :class:`~pymc_rbm.RBM` variable with the
layer updates of :mod:`pymc_rbm.kernels`. A subclass only says how a layer is
updated given its logits (:class:`~pymc_rbm.step_methods.BlockGibbs`,
:class:`~pymc_rbm.step_methods.FlipTheState`); everything else lives here:

- **Hidden units are auxiliary state of the step.** The step keeps ``h``
  between draws. Whenever the point it receives differs from the one it left
  (another step moved the visible units, or the RBM's parameters changed),
  ``h`` is redrawn from ``p(h | v)`` before it is used.
- **Parameters** that are constants are read once (at construction and at
  the start of each chain, so ``pm.set_data`` between runs is seen); those
  that depend on random variables are computed by one compiled PyTensor
  function of the point's values, called only when those values changed
  (:class:`~pymc_rbm.step_methods.layer_base.VariableStep`, shared with the
  steps of the other layer types, as are the variable and the random start).
- **Activations are carried**, not recomputed: ``hbias + v·W`` (and, in the
  compiled draws, ``vbias + W·h``) are kept with the state and updated by the
  rows of the units that changed (recomputed in full when many changed, and
  every ``FULL_EVERY`` sweeps, so rounding never drifts). The free energy of
  each draw reuses ``hbias + v·W``.
- **One sweep kernel**: a draw's sweeps are the kernels' sweep
  (:func:`pymc_rbm.kernels.sweep.sweep`) with the step's layer rule, and with
  the visible move below as its ``accept`` correction when other model terms
  involve ``v``; without them, one compiled call runs the same rule
  (:mod:`pymc_rbm.kernels.compiled`).
- **Larger models stay exact** (below, and :mod:`pymc_rbm.step_methods.correction`).

**Exactness inside a larger model**: the visible move accepted by the
ratio of the other terms leaves the full conditional of ``v`` invariant; the
proof, and how a batch of rows is corrected, are in
:mod:`pymc_rbm.step_methods.correction`.

**Hidden refresh.** Another step ``K_x`` updates other variables ``x``
(maybe the RBM's parameters θ, or, for another sampler assigned to them, the
visible units) leaving their conditional invariant, without looking at
``h``. The extended target ``π(x) p(h | v, θ)`` is then preserved by "``K_x``,
then redraw ``h ~ p(h | v, θ)`` unless ``(v, θ)`` is exactly what this step
left": ``h`` is independent of ``K_x``'s move given the state before it, so on
that event its conditional law is still ``p(h | v, θ)``; otherwise ``h`` is
drawn fresh. The comparison is by value, so a rejected Metropolis move of θ
costs nothing. Without the refresh the composed chain is not exact (checked
on transition matrices in ``test_step_exact.py``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from pymc.model import modelcontext
from pymc.step_methods.compound import StepMethodState
from pymc.step_methods.state import WithSamplingState, dataclass_state
from rich.progress import TextColumn
from rich.table import Column

from pymc_rbm.energy import RBMTensors, hidden_activation, softplus
from pymc_rbm.kernels import compiled as _compiled
from pymc_rbm.kernels.activations import FULL_EVERY, count_changes
from pymc_rbm.kernels.compiled import draw_in_place, same_values
from pymc_rbm.kernels.layer import GIBBS, LayerRule
from pymc_rbm.kernels.state import RBMState
from pymc_rbm.kernels.sweep import RBMAtBeta, sweep
from pymc_rbm.params import RBMParams
from pymc_rbm.random_variable import is_rbm_variable, random_ancestors, rbm_params_of
from pymc_rbm.step_methods.correction import Correction, OtherTermsInDraws
from pymc_rbm.step_methods.layer_base import VariableStep
from pymc_rbm.validation import check_binary

__all__ = ["RBMStep", "RBMStepState", "has_constant_parameters", "is_rbm_variable", "rbm_value_vars"]

def rbm_value_vars(model=None) -> list:
    """The value variables of the free :class:`~pymc_rbm.RBM` variables of a model.

    Parameters
    ----------
    model : pymc.Model, optional
        Taken from the context when omitted.

    Returns
    -------
    list of TensorVariable
    """
    model = modelcontext(model)
    return [model.rvs_to_values[rv] for rv in model.free_RVs if is_rbm_variable(rv)]


def has_constant_parameters(var) -> bool:
    """Whether ``var`` is an RBM variable whose weights and biases involve no random variable.

    Constants and data (shared variables) count as constant; anything drawn
    from a distribution (directly or through a deterministic) does not.
    """
    return is_rbm_variable(var) and not random_ancestors(*rbm_params_of(var))


def _core_value(x: np.ndarray, ndim: int) -> np.ndarray:
    """Drop leading batch dimensions that PyMC may add to an (unbatched) parameter."""
    x = np.asarray(x, dtype=np.float64)
    return x[(0,) * (x.ndim - ndim)] if x.ndim > ndim else x


@dataclass(kw_only=True)
class _AuxiliaryState:
    """The fields that :class:`RBMStepState` and a step's carried state share (described in the former)."""

    visible_state: np.ndarray | None = None
    hidden_state: np.ndarray | None = None
    hidden_input: np.ndarray | None = None
    visible_input: np.ndarray | None = None
    param_inputs: list | None = None
    n_incremental: int = 0


@dataclass_state
class RBMStepState(StepMethodState, _AuxiliaryState):
    """The sampling state of an :class:`RBMStep`: its generator and the auxiliary hidden state.

    ``visible_state`` is the visible state the step left (float, shape
    ``(n_chains, n_visible)``), ``hidden_state`` its hidden state,
    ``hidden_input`` and ``visible_input`` the carried activations
    ``hbias + v·W`` and ``vbias + W·h``, ``param_inputs`` the values of the
    variables the parameters were computed from (None for constant
    parameters), ``n_incremental`` the incremental updates since the last full
    recomputation. All None before the first draw of a chain.
    """


@dataclass(kw_only=True)
class _Carried(_AuxiliaryState):
    """What a step keeps between the draws of one chain: the fields of :class:`RBMStepState` and three caches.

    ``hidden_exp_valid``: the step's ``hidden_exp`` holds ``exp(-|hidden_input|)`` (the compiled dense path
    keeps it for the next draw). ``rest``: ``(L's other inputs, log L)`` at ``visible_state``, or None.
    ``evidence``: ``(L's other inputs, per-unit evidence)`` where ``L`` factorises over units, or None.
    ``left_bytes``: the bytes of the draw the step returned, when small (see ``RBMStep._is_left``).
    """

    hidden_exp_valid: bool = False
    rest: tuple | None = None
    evidence: tuple | None = None
    left_bytes: bytes | None = None


#: Draws of at most this many bytes are recognised by their bytes: a copy and a comparison cost less than a
#: compiled call there (0.2-0.4 µs against 0.7-0.9 for one chain of 100-784 units).
_BYTES_COMPARED = 16384
#: The ladder of one rung at β = 1, for the compiled round that sweeps an RBM with per-unit evidence.


class _CarriedField:
    """A field of :class:`RBMStepState` read and set on the step (as PyMC's sampling state does) and kept in
    ``step.carried``."""

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, step, owner=None):
        return self if step is None else getattr(step.carried, self.name)

    def __set__(self, step, value):
        setattr(step.carried, self.name, value)


class RBMStep(OtherTermsInDraws, VariableStep):
    """Base class of the RBM step methods (a PyMC ``BlockedStep``).

    The variable, its parameters, the random start and the stats are
    :class:`~pymc_rbm.step_methods.layer_base.VariableStep`'s, as for the
    steps of the other layer types. Subclasses set ``name``, ``keeps_hidden``
    and ``rule``, the layer update rule of their sweeps
    (:mod:`pymc_rbm.kernels.layer`); a draw runs the
    kernels' sweep (:func:`pymc_rbm.kernels.sweep.sweep`), compiled into one
    call where possible (:mod:`pymc_rbm.kernels.compiled`). See the module
    docstring for the construction and its correctness argument.

    Parameters
    ----------
    vars : RBM variable or list of them, optional
        The free RBM variable(s) to sample; by default every free RBM variable
        of the model (one step each, combined in a ``CompoundStep``).
    sweeps : int, default 1
        Sweeps (hidden then visible update) per recorded draw.
    record_hidden : bool, default False
        Also record the hidden state of each draw in ``sample_stats``
        (``hidden``, shape ``(n_hidden,)`` per draw; for a batched variable of
        ``K`` chains one flat vector of ``K * n_hidden``, chain-major: reshape
        to ``(..., K, n_hidden)``).
    model : pymc.Model, optional
    rng : numpy.random.Generator or seed, optional
        Replaced per chain by ``pm.sample`` (``setup_chain``).
    initial_point : dict, optional
        A point of the model; gives the shape of the variable.
    compile_kwargs : dict, optional
        Passed to PyTensor when a function must be compiled (parameters that
        depend on random variables, or the correction's model terms).
    blocked : bool, default False
        With several RBM variables, ``False`` makes one step per variable.
    compiled : bool, optional
        Run the sweeps of a draw with the compiled kernel
        (:func:`pymc_rbm.kernels.compiled.carried_sweeps`, the same chain draw
        for draw; large batches take its dense path of BLAS products) when no
        correction applies. Default: when Numba is available. ``False`` uses
        the NumPy kernels.
    random_start : bool, default True
        On a chain's first tuning draw, replace the visible units by uniformly
        random ones, so that chains start apart. PyMC gives every chain the
        same start for a discrete variable; chains that all stay in the mode
        of that start then agree with each other and R-hat cannot see that
        they are stuck. Tuning draws are discarded, as with PyMC's jittered
        starts of continuous variables; no effect with ``tune=0``.
    tilt : {"auto", "exact", "gradient"}, default "auto"
        How likelihood-informed moves (where other model terms involve the
        visible units and do not factorise over them) tilt their proposals:
        by the exact change of those terms when each unit alone flips
        (``n_visible + 1`` evaluations per state, in one vectorised call), or
        by its first-order approximation, their gradient (one evaluation and
        its reverse pass; Grathwohl et al. 2021). Both are exact moves; the
        tilt decides how often they are accepted and what a move costs.
        ``"auto"``: exact up to :data:`~pymc_rbm.step_methods.terms.EXACT_TILT_MAX_UNITS`
        visible units, the gradient beyond.
    """

    name = "rbm_step"
    keeps_hidden = True
    _state_class = RBMStepState
    # the fields of RBMStepState live in ``self.carried``; PyMC's sampling state reads and sets them here
    visible_state = _CarriedField()
    hidden_state = _CarriedField()
    hidden_input = _CarriedField()
    visible_input = _CarriedField()
    param_inputs = _CarriedField()
    n_incremental = _CarriedField()

    stats_dtypes_shapes = {
        "free_energy": (np.float64, []),
        "n_changed": (np.int64, []),
        "n_hidden_changed": (np.int64, []),
        "accept": (np.float64, []),
        "accept_rate": (np.float64, []),
        "refreshed": (bool, []),
    }

    def __init__(
        self,
        vars=None,
        *,
        sweeps: int = 1,
        record_hidden: bool = False,
        model=None,
        rng=None,
        initial_point=None,
        compile_kwargs: dict | None = None,
        blocked: bool = False,
        compiled: bool | None = None,
        random_start: bool = True,
        tilt: str = "auto",
    ):
        model = modelcontext(model)
        rv, value_var, initial_point, compile_kwargs = self._setup_variable(
            vars, model, sweeps=sweeps, rng=rng, initial_point=initial_point, compile_kwargs=compile_kwargs,
            blocked=blocked, random_start=random_start,
        )
        self.record_hidden = bool(record_hidden)
        if compiled and not _compiled.available():  # pragma: no cover - numba comes with PyTensor
            raise ValueError("compiled=True needs Numba")
        self._compiled_choice = compiled
        self._forget_state()
        self._setup_params(model, rv, initial_point, compile_kwargs)
        self._setup_rest(model, rv, value_var, compile_kwargs)
        self.other_terms.use_tilt(tilt, self._shape[-1])
        # One vector per draw for the hidden state: PyMC's NDArray trace stacks non-scalar stats with
        # np.vstack, which would merge a (K, n_hidden) batch into the draw axis; ZarrTrace wants the shape.
        hidden = {"hidden": (object, [self._n_chains * self.n_hidden])} if self.record_hidden else None
        self._declare_stats(RBMStep.stats_dtypes_shapes, hidden)
        self.compiled = _compiled.available() if self._compiled_choice is None else bool(self._compiled_choice)
        self._ones = np.ones(self._n_chains)
        self._all_hidden = np.full(self._n_chains, self.n_hidden)
        self._hidden_exp = np.empty((self._n_chains, self.n_hidden))
        self._forget_state()

    # ------------------------------------------------------------ set-up
    is_variable = staticmethod(is_rbm_variable)
    params_of = staticmethod(rbm_params_of)

    def _read_params(self, arrays, *, validate: bool) -> None:
        self._set_params(*arrays, validate=validate)

    def _set_params(self, W, vbias, hbias, *, validate: bool) -> None:
        W, vbias, hbias = _core_value(W, 2), _core_value(vbias, 1), _core_value(hbias, 1)
        if validate:
            p = RBMParams(W, vbias, hbias)
            W, vbias, hbias = p.W, p.vbias, p.hbias
        else:  # values at a point of the chain: cheap checks only
            if W.shape[0] != vbias.shape[0] or W.shape[1] != hbias.shape[0]:
                raise ValueError(f"RBM parameters of inconsistent shapes {W.shape}, {vbias.shape}, {hbias.shape}")
            if not (np.isfinite(W).all() and np.isfinite(vbias).all() and np.isfinite(hbias).all()):
                raise ValueError(f"the parameters of the RBM variable {self._name!r} are not finite at this point")
        if W.shape[0] != self._shape[-1]:
            raise ValueError(f"W has {W.shape[0]} rows but the RBM variable has {self._shape[-1]} visible units")
        # C order: the incremental updates gather rows of W (per visible unit) and of W.T (per hidden unit)
        params = RBMTensors(*(np.ascontiguousarray(x, dtype=np.float64) for x in (W, vbias, hbias)))
        self.params = params
        self.W_T = np.ascontiguousarray(params.W.T)
        self._full_h = lambda v: hidden_activation(v, params)

    def _setup_rest(self, model, rv, value_var, compile_kwargs) -> None:
        """Find the model terms other than the RBM's own that involve its value (``log L``)."""
        self._setup_other_terms(model, rv, value_var, compile_kwargs)
        self.rest_terms = self.other_terms.names
        self._rest_fn = self.other_terms.fn
        self._rest_input_names = self.other_terms.input_names

    #: Whether other model terms may shape the proposals (``ReplicaExchange(informed=False)`` says no).
    informed = True

    @property
    def evidence_draws(self) -> bool:
        """Whether the other terms are per-unit evidence, sampled exactly as visible logits (no correction).

        Where ``log L(v) = Σ_{k,i} log L_{ki}(v_{ki})``, ``p_RBM(v, h) L(v)`` is row by
        row the RBM whose visible logits gain ``δ_{ki} = log L_{ki}(1) - log L_{ki}(0)``:
        every sweep is then the operator's exact layer update of that RBM,
        compiled, and every move is taken.
        """
        return bool(self.corrected and self.informed and self.compiled and self.other_terms.structure == "units")

    @property
    def n_visible(self) -> int:
        """Number of visible units of the RBM variable."""
        return self._shape[-1]

    @property
    def n_hidden(self) -> int:
        """Number of hidden units."""
        return self.params.W.shape[1]

    def _forget_state(self) -> None:
        self.carried = _Carried()

    # ---------------------------------------------------------- PyMC API
    @property
    def sampling_state(self) -> RBMStepState:
        """The generator and the auxiliary state (hidden units, activations); settable to resume."""
        return WithSamplingState.sampling_state.fget(self)

    @sampling_state.setter
    def sampling_state(self, state: RBMStepState) -> None:
        self._forget_state()  # the caches are not part of the state
        WithSamplingState.sampling_state.fset(self, state)
        self.start_pending = False  # a resumed chain has started already
        self._start_checked = True
        if self._param_fn is not None and self.param_inputs is not None:
            self._set_params(*self._param_fn(*self.param_inputs), validate=False)

    # ------------------------------------------------------- the kernels
    #: The layer update rule of the sweeps (:mod:`pymc_rbm.kernels.layer`); set by each step method.
    rule: LayerRule = GIBBS

    def _update_hidden(self, h, a_h):
        """New hidden states given the activation ``a_h`` (not modified); ``h`` may be None."""
        return self.rule.update(self.rng, h if self.rule.reads_state else None, a_h)[0]

    def _update_visible(self, v, a_v):
        """New visible states given the activation ``a_v`` (not modified)."""
        return self.rule.update(self.rng, v if self.rule.reads_state else None, a_v)[0]

    def _draw_hidden(self, a_h):
        """``h ~ p(h | v)`` from the activation ``hbias + v·W`` (the refresh), by the Gibbs rule."""
        return GIBBS.update(self.rng, None, a_h)[0]

    # --------------------------------------------------------- one draw
    def _step(self, point):
        """One draw: refresh ``h`` if the point changed, then ``sweeps`` sweeps (stochastic)."""
        point = self._chain_start(point)
        v_in = point[self._name].reshape(self._n_chains, self._shape[-1])
        refreshed = self._bring_up_to_date(point, v_in)
        corrected = self.corrected
        if self.compiled and not corrected:
            v_out, stats = self._compiled_draw(v_in, refreshed)
        else:
            if corrected and self.evidence_draws:
                v_out, per_chain = self._evidence_draw(point, v_in)
            elif corrected:
                v_int = v_in.astype(self._out_dtype)
                correction = Correction(v_int, self._rest_current(point, v_int), self._n_chains)
                v_out, per_chain = self._numpy_draw(v_in, correction, point)
            else:
                v_out, per_chain = self._numpy_draw(v_in)
            stats = self._chain_stats(*per_chain, refreshed)
        self._leave(v_out)
        if self.record_hidden:
            stats["hidden"] = self.hidden_state.astype(np.int8).reshape(-1)  # flat for a batch: see _setup_stats
        out = point.copy()
        out[self._name] = v_out.reshape(self._shape)
        return out, [stats]

    def _bring_up_to_date(self, point, v_in) -> bool:
        """Parameters, and ``h`` and the activations, for the point; True when ``h`` or v's were refreshed.

        The state this step left is kept when neither the parameters nor (by value: refreshing is always
        exact, keeping needs the very state) the visible units changed. Otherwise ``hbias + v·W`` is
        computed afresh and ``h`` redrawn from ``p(h | v)``, except by Gibbs after a move of v alone: its
        hidden update does not read ``h``, which it keeps with ``vbias + W·h`` for the incremental update.
        """
        c = self.carried
        params_changed = self._param_fn is not None and self._params_for(point)
        v_moved = not self._is_left(v_in)
        if v_moved:
            c.rest = None  # log L of the state this step left
        afresh = params_changed or c.hidden_input is None or c.hidden_state is None
        if not (afresh or v_moved):
            return False
        c.visible_state = v_in.astype(np.float64, order="C")
        c.hidden_input = self._full_h(c.visible_state)
        c.hidden_exp_valid = False
        if afresh:
            c.n_incremental = 0
        if afresh or self.keeps_hidden:
            c.hidden_state = self._draw_hidden(c.hidden_input) if self.keeps_hidden else None
            c.visible_input = None
        return True

    def _leave(self, v_out) -> None:
        """Remember the draw this step returns, so that :meth:`_is_left` knows it when it comes back."""
        self.carried.left_bytes = v_out.tobytes() if v_out.nbytes <= _BYTES_COMPARED else None

    def _is_left(self, v_in) -> bool:
        """Whether ``v_in`` holds the values of the state this step left: small draws by their bytes (cheapest
        there), large ones in one compiled pass (no copy)."""
        c = self.carried
        if c.visible_state is None:
            return False
        if c.left_bytes is not None and v_in.dtype == self._out_dtype:
            return v_in.tobytes() == c.left_bytes
        return same_values(v_in, c.visible_state)

    def _compiled_draw(self, v_in, refreshed: bool):
        """The draw's sweeps in one compiled call on the carried arrays (:mod:`pymc_rbm.kernels.compiled`);
        returns the draw and its stats, as declared."""
        c, n = self.carried, self._n_chains
        h_known = c.hidden_state is not None
        if not h_known:  # Gibbs after a refresh: its hidden update does not read h
            c.hidden_state = np.zeros_like(c.hidden_input)
        a_v_valid = c.visible_input is not None and h_known
        if not a_v_valid:
            c.visible_input = np.empty_like(c.visible_state)
        v_out = np.empty(c.visible_state.shape, dtype=self._out_dtype)
        stats = np.empty((n, 3))
        p = self.params
        c.n_incremental = draw_in_place(
            self.rng, c.visible_state, c.hidden_state,
            (c.hidden_input, c.visible_input, a_v_valid, c.n_incremental, FULL_EVERY),
            (p.W, self.W_T, p.vbias, p.hbias), self.sweeps, rule=self.rule, v_out=v_out, stats=stats,
            hidden_exp=self._hidden_exp, hidden_exp_valid=c.hidden_exp_valid,
        )
        c.hidden_exp_valid = _compiled.dense(n, c.visible_state.shape[1], c.hidden_state.shape[1])
        if self._batch_shape:
            n_hidden_changed = stats[:, 2] if h_known else self._all_hidden
            return v_out, self._chain_stats(stats[:, 0], stats[:, 1], n_hidden_changed, self._ones, self._ones,
                                            refreshed)
        # one chain: the Python scalars straight from the call's row (the generic pass of _shaped_stats costs
        # about 1 µs, a tenth of a small model's draw)
        free_energy, n_changed, n_hidden_changed = stats[0].tolist()
        return v_out, {"free_energy": free_energy, "n_changed": int(n_changed),
                       "n_hidden_changed": int(n_hidden_changed) if h_known else self.n_hidden,
                       "accept": 1.0, "accept_rate": 1.0, "refreshed": refreshed}

    def _numpy_draw(self, v_in, correction: Correction | None = None, point=None):
        """The draw's sweeps with the NumPy kernels; with a ``correction``, each visible move is accepted
        with the Metropolis ratio of the other model terms (module docstring)."""
        c = self.carried
        c.hidden_exp_valid = False
        h_start = c.hidden_state
        for _ in range(self.sweeps):
            self._sweep(point, correction)
        v_out = c.visible_state.astype(self._out_dtype)
        free_energy = -(c.visible_state @ self.params.vbias) - softplus(c.hidden_input).sum(axis=-1)
        n_hidden_changed = self._all_hidden if h_start is None else count_changes(c.hidden_state, h_start)
        if correction is None:
            return v_out, (free_energy, count_changes(v_out, v_in), n_hidden_changed, self._ones, self._ones)
        c.rest = (c.rest[0], correction.log_rest)
        accept, accept_rate = correction.accept_sum / self.sweeps, correction.accepted / self.sweeps
        return v_out, (free_energy, count_changes(v_out, v_in), n_hidden_changed, accept, accept_rate)

    def _random_visible(self, size: tuple) -> np.ndarray:
        """Uniformly random binary states of shape ``size`` (int64), for random starts (stochastic)."""
        return self.rng.integers(0, 2, size=size)

    def _check_start(self, value) -> None:
        """Refuse a chain's first value (e.g. from ``initvals``) outside {0, 1}."""
        check_binary(value, name=f"the start value of {self._name!r} (initvals or the initial point)")

    def _chain_stats(self, free_energy, n_changed, n_hidden_changed, accept, accept_rate, refreshed) -> dict:
        """The per-draw stats of the chains (arrays of shape (n_chains,)), shaped as declared."""
        per_chain = {"free_energy": free_energy, "n_changed": n_changed, "n_hidden_changed": n_hidden_changed,
                     "accept": accept, "accept_rate": accept_rate}
        return self._shaped_stats(per_chain, refreshed)

    def _sweep(self, point, correction: Correction | None) -> None:
        """One sweep of the kernels (:func:`~pymc_rbm.kernels.sweep.sweep`) on the carried state, the visible
        update accepted by the Metropolis ratio of the other model terms when there is a ``correction``."""
        c = self.carried
        refresh = c.n_incremental >= FULL_EVERY
        c.n_incremental = 0 if refresh else c.n_incremental + 1
        accept = None if correction is None else functools.partial(self._correct, point, correction)
        state = RBMState(c.visible_state, c.hidden_state, c.hidden_input)
        state, _ = sweep(self.rng, state, RBMAtBeta(self.params), self.rule, refresh=refresh, accept=accept)
        c.visible_state, c.hidden_state, c.hidden_input = state
        c.visible_input = None  # not carried by this path: the compiled draws recompute it

    @staticmethod
    def _progressbar_config(n_chains=1):
        columns = [
            TextColumn("{task.fields[rbm_free_energy]:0.2f}", table_column=Column("Free energy", ratio=1)),
            TextColumn("{task.fields[rbm_accept_rate]:0.2f}", table_column=Column("RBM accept", ratio=1)),
        ]
        stats = {"rbm_free_energy": [float("nan")] * n_chains, "rbm_accept_rate": [1.0] * n_chains}
        return columns, stats

    @staticmethod
    def _make_progressbar_update_functions():
        def update_stats(step_stats):
            return {
                "rbm_free_energy": float(np.mean(step_stats["free_energy"])),
                "rbm_accept_rate": float(np.mean(step_stats["accept_rate"])),
            }

        return (update_stats,)

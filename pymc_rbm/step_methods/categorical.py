"""Categorical RBMs in PyMC: the :class:`CategoricalRBM` distribution and its step methods.

:class:`CategoricalRBM` is the Potts-Bernoulli RBM of :mod:`pymc_rbm.categorical`
as a PyMC distribution: its value is the vector of visible labels (integers in
``[0, n_states)``, shape ``(..., n_visible)``), the hidden units are summed out,
and ``logp(v) = -F(v) - log Z``, ``log Z`` exact where a layer can be enumerated
(differentiable: its gradient is the exact moments), given, or left out
(constant parameters only), as for the binary :class:`~pymc_rbm.RBM`.

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

import os
import warnings
from dataclasses import field

import numpy as np
import pymc
import pytensor
import pytensor.tensor as pt
from pymc.distributions.dist_math import check_parameters
from pymc.distributions.distribution import Discrete
from pymc.distributions.shape_utils import rv_size_is_none
from pymc.logprob.abstract import _logprob
from pymc.model import modelcontext
from pymc.step_methods.compound import BlockedStep, Competence, StepMethodState
from pymc.step_methods.state import dataclass_state
from pymc.util import get_random_generator, get_value_vars_from_user_vars
from pytensor.compile.sharedvalue import SharedVariable
from pytensor.gradient import grad_not_implemented
from pytensor.graph.basic import Apply, Constant, Variable
from pytensor.graph.op import Op
from pytensor.graph.traversal import ancestors
from pytensor.tensor.random.op import RandomVariable

from pymc_rbm.categorical import (
    MAX_ENUMERATED_STATES,
    CategoricalAtBeta,
    CategoricalRBMParams,
    EnumerationTooLarge,
    ExactSampler,
    as_labels,
    at_beta,
    energy,
    enumeration_plan,
    free_energy,
    hidden_input,
    log_partition_exact,
    moments_exact,
    sample_exact,
)
from pymc_rbm.kernels.layer import GIBBS, LayerRule, check_alpha
from pymc_rbm.layers import BERNOULLI
from pymc_rbm.kernels.metropolis import acceptance_probability, metropolis_accept
from pymc_rbm.kernels.state import RBMState
from pymc_rbm.kernels.sweep import sweep
from pymc_rbm.step_methods.terms import OtherTerms
from pymc_rbm.validation import check_float_array, check_positive_int

__all__ = [
    "CategoricalRBM",
    "CategoricalRBMRV",
    "CategoricalLogPartition",
    "CategoricalExactDraws",
    "CategoricalGibbs",
    "CategoricalMetropolisedGibbs",
    "CategoricalReplicaExchange",
    "EXACT_DRAWS_MAX_FLOPS",
    "exact_draws_pay",
    "is_categorical_rbm_variable",
    "register",
]

_INTERNAL_FILES = (os.path.dirname(os.path.dirname(__file__)), *(os.path.dirname(m.__file__) for m in (pymc, pytensor)))

warnings.filterwarnings(
    "ignore",
    message=r"Numba will use object mode to run (CategoricalLogPartition|CategoricalMomentsOp|CategoricalRBMRV)",
    category=UserWarning,
)


# ----------------------------------------------------------------------------- log Z as an Op
def _params_or_none(W, vbias, hbias):
    if not (np.all(np.isfinite(W)) and np.all(np.isfinite(vbias)) and np.all(np.isfinite(hbias))):
        return None
    return CategoricalRBMParams(W, vbias, hbias)


class CategoricalLogPartition(Op):
    """``log Z(W, vbias, hbias)`` of a categorical RBM by exact enumeration, with its exact gradient.

    The gradient is ``(⟨1(v_i = k) h_j⟩, p(v_i = k), p(h_j = 1))``
    (:func:`~pymc_rbm.categorical.moments_exact`). Non-finite parameters give
    NaN (a rejected point).
    """

    __props__ = ("max_states",)

    def __init__(self, max_states: int = MAX_ENUMERATED_STATES):
        self.max_states = int(max_states)

    def make_node(self, W, vbias, hbias):
        inputs = [pt.as_tensor_variable(x, dtype="float64") for x in (W, vbias, hbias)]
        return Apply(self, inputs, [pt.dscalar()])

    def perform(self, node, inputs, outputs):
        params = _params_or_none(*inputs)
        value = np.nan if params is None else log_partition_exact(params, max_states=self.max_states)
        outputs[0][0] = np.asarray(value, dtype="float64")

    def infer_shape(self, node, input_shapes):
        return [()]

    def pullback(self, inputs, outputs, cotangents):
        (g,) = cotangents
        vh, v, h = CategoricalMomentsOp(self.max_states)(*inputs)
        return [g * vh, g * v, g * h]


class CategoricalMomentsOp(Op):
    """``(⟨1(v_i = k) h_j⟩, p(v_i = k), p(h_j = 1))`` by exact enumeration: the gradient of ``log Z``."""

    __props__ = ("max_states",)

    def __init__(self, max_states: int = MAX_ENUMERATED_STATES):
        self.max_states = int(max_states)

    def make_node(self, W, vbias, hbias):
        inputs = [pt.as_tensor_variable(x, dtype="float64") for x in (W, vbias, hbias)]
        return Apply(self, inputs, [x.type() for x in inputs])

    def perform(self, node, inputs, outputs):
        params = _params_or_none(*inputs)
        if params is None:
            values = [np.full(np.shape(x), np.nan) for x in inputs]
        else:
            m = moments_exact(params, max_states=self.max_states)
            values = [m.vh, m.v, m.h]
        for out, value in zip(outputs, values):
            out[0] = np.asarray(value, dtype="float64")

    def infer_shape(self, node, input_shapes):
        return list(input_shapes)

    def pullback(self, inputs, outputs, cotangents):
        return [grad_not_implemented(self, i, x, "second derivatives of log Z") for i, x in enumerate(inputs)]


# ----------------------------------------------------------------------------- the random variable
LOG_PARTITION_MODES = ("exact", "given", "omitted")


class CategoricalRBMRV(RandomVariable):
    """Draws of the visible labels of a categorical RBM.

    Exact (:func:`~pymc_rbm.categorical.sample_exact`) where a layer has at
    most ``max_states`` configurations; otherwise ``gibbs_sweeps`` block-Gibbs
    sweeps from uniformly random labels per draw, with a warning.
    """

    name = "categorical_rbm"
    signature = "(v,q,h),(v,q),(h),()->(v)"
    dtype = "int64"
    _print_name = ("CategoricalRBM", "\\operatorname{CategoricalRBM}")
    __props__ = RandomVariable.__props__ + ("log_partition", "max_states", "gibbs_sweeps")

    def __init__(self, *args, log_partition="exact", max_states=MAX_ENUMERATED_STATES, gibbs_sweeps=1000, **kwargs):
        if log_partition not in LOG_PARTITION_MODES:
            raise ValueError(f"log_partition mode must be one of {LOG_PARTITION_MODES}, got {log_partition!r}")
        self.log_partition = log_partition
        self.max_states = int(max_states)
        self.gibbs_sweeps = int(gibbs_sweeps)
        super().__init__(*args, **kwargs)

    def rng_fn(self, rng, W, vbias, hbias, log_z, size):
        batch = np.broadcast_shapes(W.shape[:-3], vbias.shape[:-2], hbias.shape[:-1])
        size = batch if size is None else tuple(size)
        W, vbias, hbias = (
            np.broadcast_to(x, size + x.shape[x.ndim - nd :]) for x, nd in ((W, 3), (vbias, 2), (hbias, 1))
        )
        first = (0,) * len(size)
        if not size or all(np.all(x == x[first]) for x in (W, vbias, hbias)):
            return self._draw(CategoricalRBMParams(W[first], vbias[first], hbias[first]), size, rng)
        out = np.empty(size + (W.shape[-3],), dtype=np.int64)
        for idx in np.ndindex(*size):
            out[idx] = self._draw(CategoricalRBMParams(W[idx], vbias[idx], hbias[idx]), (), rng)
        return out

    def _draw(self, params, size, rng):
        try:
            enumeration_plan(params, self.max_states)
        except EnumerationTooLarge:
            return _approximate_draws(params, size, rng, self.gibbs_sweeps)
        return sample_exact(params, size, rng, max_states=self.max_states)


def _approximate_draws(params, size, rng, n_sweeps):
    warnings.warn(
        f"this categorical RBM ({params.n_visible} units of {params.n_states} states, {params.n_hidden} hidden) "
        f"is too large to enumerate: forward draws are approximate ({n_sweeps} block-Gibbs sweeps per draw from "
        "uniformly random labels; set gibbs_sweeps=... to change)",
        UserWarning,
        stacklevel=2,
    )
    n = int(np.prod(size, dtype=np.int64))
    state = RBMState(rng.integers(0, params.n_states, (n, params.n_visible)).astype(np.float64), None)
    target = CategoricalAtBeta(params)
    for _ in range(n_sweeps):
        state, _ = sweep(rng, RBMState(state.v, None), target, GIBBS)
    return state.v.astype(np.int64).reshape(tuple(size) + (params.n_visible,))


class _Tensors:
    """Symbolic ``W``, ``vbias``, ``hbias`` with the attribute names of the parameters."""

    def __init__(self, W, vbias, hbias):
        self.W, self.vbias, self.hbias = W, vbias, hbias


def _core(*params):
    return [x[(0,) * (x.ndim - nd)] if x.ndim > nd else x for x, nd in zip(params, (3, 2, 1, 0))]


@_logprob.register(CategoricalRBMRV)
def _categorical_rbm_logp(op, values, rng, size, W, vbias, hbias, log_z, **kwargs):
    [value] = values
    W, vbias, hbias, log_z = _core(W, vbias, hbias, log_z)
    q = W.shape[1]
    logp = -free_energy(value, _Tensors(W, vbias, hbias))
    if op.log_partition == "exact":
        logp = logp - CategoricalLogPartition(op.max_states)(W, vbias, hbias)
    elif op.log_partition == "given":
        logp = logp - log_z
    valid = pt.all(pt.ge(value, 0) & pt.lt(value, q), axis=-1)
    logp = pt.switch(valid, logp, -np.inf)
    return check_parameters(
        logp,
        pt.all(pt.isfinite(W)),
        pt.all(pt.isfinite(vbias)),
        pt.all(pt.isfinite(hbias)),
        pt.eq(W.shape[0], vbias.shape[0]),
        pt.eq(W.shape[1], vbias.shape[1]),
        pt.eq(W.shape[2], hbias.shape[0]),
        msg="W, vbias and hbias must be finite, of shapes (n, q, H), (n, q), (H,)",
    )


def is_categorical_rbm_variable(var) -> bool:
    """Whether ``var`` is a random variable of the :class:`CategoricalRBM` distribution."""
    return isinstance(getattr(getattr(var, "owner", None), "op", None), CategoricalRBMRV)


def categorical_params_of(rv):
    """The symbolic ``(W, vbias, hbias)`` of a :class:`CategoricalRBM` variable."""
    W, vbias, hbias, _ = rv.owner.op.dist_params(rv.owner)
    return W, vbias, hbias


def _sizes(W):
    """``(n_visible, n_states, n_hidden)`` of a symbolic ``W`` where known while the model is built, else None."""
    shape = W.type.shape
    if all(s is not None for s in shape):
        return tuple(int(s) for s in shape[-3:])
    if isinstance(W, Constant):
        return tuple(int(s) for s in np.shape(W.data)[-3:])
    if isinstance(W, SharedVariable):
        return tuple(int(s) for s in np.shape(W.get_value(borrow=True))[-3:])
    try:
        return tuple(int(s) for s in W.shape.eval()[-3:])
    except Exception:  # noqa: BLE001 - not known without sampling
        return None


def _random_ancestors(*tensors):
    from pymc.distributions.distribution import SymbolicRandomVariable

    return [
        v
        for v in ancestors(tensors)
        if v.owner is not None and isinstance(v.owner.op, (RandomVariable, SymbolicRandomVariable))
    ]


def _resolve_log_partition(log_partition, W, vbias, hbias, max_states):
    if isinstance(log_partition, str):
        if log_partition not in ("auto", "exact"):
            raise ValueError(
                f"log_partition must be 'auto', 'exact', a number or tensor (an estimate of log Z), or None; "
                f"got {log_partition!r}"
            )
        sizes = _sizes(W)
        small = None if sizes is None else min(2 ** sizes[2], sizes[1] ** sizes[0])
        if log_partition == "exact":
            if small is not None and small > max_states:
                enumeration_plan(CategoricalRBMParams(np.zeros(sizes), np.zeros(sizes[:2]), np.zeros(sizes[2])),
                                 max_states)  # raises, with the sizes
            return "exact", pt.constant(0.0)
        if small is None:
            raise ValueError(
                "log_partition='auto' needs the shape of W while the model is built; pass 'exact', an estimate, or None"
            )
        if small <= max_states:
            return "exact", pt.constant(0.0)
        random = _random_ancestors(W, vbias, hbias)
        if random:
            raise ValueError(
                f"log_partition='auto': this categorical RBM has {small:.3g} configurations in its smaller layer, more "
                f"than max_states={max_states}, and its parameters depend on the random variable(s) "
                f"{sorted({str(r) for r in random})}, so log Z cannot be left out: raise max_states (slow) or "
                "pass an estimate of log Z"
            )
        warnings.warn(
            f"log_partition='auto': this categorical RBM has {small:.3g} configurations in its smaller layer, more "
            f"than max_states={max_states}, so log Z is left out and the logp is unnormalised (-F(v)). Sampling is "
            "unaffected (the parameters are constants), but logp values and model comparisons are not; pass "
            "log_partition=None to say it is meant",
            UserWarning,
            skip_file_prefixes=_INTERNAL_FILES,
        )
        return "omitted", pt.constant(0.0)
    if log_partition is None:
        random = _random_ancestors(W, vbias, hbias)
        if random:
            raise ValueError(
                "log_partition=None leaves log Z out of the logp, which is only correct while W and the biases are "
                f"constants; here they depend on {sorted({str(r) for r in random})}. Use log_partition='exact' "
                "or supply an estimate of log Z."
            )
        return "omitted", pt.constant(0.0)
    if hasattr(log_partition, "log_z") and hasattr(log_partition, "check_model"):  # a LogPartitionEstimate
        log_partition = log_partition.log_z
    if not hasattr(log_partition, "owner") and np.asarray(log_partition).dtype.kind not in "iuf":
        raise ValueError(f"log_partition must be a real number, got {log_partition!r}")
    log_z = pt.as_tensor_variable(log_partition, dtype="float64")
    if log_z.ndim != 0:
        raise ValueError(f"log_partition must be a scalar, got {log_z.ndim} dimension(s)")
    if isinstance(log_z, Constant) and not np.isfinite(log_z.data):
        raise ValueError(f"log_partition must be finite, got {log_z.data}")
    return "given", log_z


def _as_parameter(value, name):
    if isinstance(value, Constant):
        check_float_array(value.data, name)
    if isinstance(value, Variable):
        return pt.as_tensor_variable(value, dtype="float64")
    return pt.as_tensor_variable(check_float_array(value, name), dtype="float64")


class CategoricalRBM(Discrete):
    r"""A categorical (Potts-Bernoulli) RBM over its visible labels.

    .. math::

        \log p(v) = \sum_i b_{i, v_i} + \sum_j \operatorname{softplus}\Big(c_j + \sum_i W_{i, v_i, j}\Big) - \log Z

    with ``b = vbias`` and ``c = hbias``; the hidden units are summed out
    (energy and gauge: :mod:`pymc_rbm.categorical`).

    Parameters
    ----------
    W : tensor_like of float, shape (n_visible, n_states, n_hidden)
        Constants, data or random variables.
    vbias : tensor_like of float, shape (n_visible, n_states)
    hbias : tensor_like of float, shape (n_hidden,)
    log_partition : {"auto", "exact"}, float, tensor or None
        As for :class:`~pymc_rbm.RBM`: ``"exact"`` enumerates the layer with
        fewer configurations (``2**n_hidden`` or ``n_states**n_visible``) at
        every evaluation, differentiably, and is refused beyond ``max_states``;
        a number or tensor is an estimate; ``None`` leaves ``log Z`` out
        (constant parameters only); ``"auto"`` (default) is ``"exact"`` within
        ``max_states``, else ``None`` with a warning for constants, else an error.
    max_states : int, default 2**20
        Largest enumeration, for ``log Z`` and for exact forward draws.
    gibbs_sweeps : int, default 1000
        Sweeps per forward draw of a model too large to enumerate (approximate, with a warning).

    Notes
    -----
    Values are integer labels in ``[0, n_states)``; observed data may also be
    one-hot, shape ``(..., n_visible, n_states)`` (:func:`~pymc_rbm.categorical.as_labels`).
    ``pm.sample()`` chooses the step of a free ``CategoricalRBM`` variable by
    itself: :class:`CategoricalExactDraws` where the parameters are constants,
    a layer can be enumerated and no other term involves the variable,
    :class:`CategoricalReplicaExchange` for other constant parameters, and
    :class:`CategoricalMetropolisedGibbs` where they are random variables.

    Examples
    --------
    >>> import pymc as pm
    >>> from pymc_rbm.categorical import CategoricalRBMParams
    >>> from pymc_rbm.step_methods.categorical import CategoricalRBM
    >>> p = CategoricalRBMParams.random(5, 4, 3, rng=0)
    >>> with pm.Model():
    ...     v = CategoricalRBM("v", p.W, p.vbias, p.hbias)
    >>> pm.draw(v, random_seed=1).shape
    (5,)
    """

    rv_type = CategoricalRBMRV

    @classmethod
    def rv_op(cls, W, vbias, hbias, log_z, *, log_partition="exact", max_states=MAX_ENUMERATED_STATES,
              gibbs_sweeps=1000, size=None, rng=None):
        if rng is None:
            rng = pt.random.shared_rng(seed=None)
        op = CategoricalRBMRV(log_partition=log_partition, max_states=max_states, gibbs_sweeps=gibbs_sweeps)
        return op(W, vbias, hbias, log_z, size=size, rng=rng, return_next_rng=True)[1]

    def __new__(cls, name, W, vbias, hbias, *args, observed=None, **kwargs):
        if observed is not None:
            observed = _check_observed(observed, W, vbias)
        return super().__new__(cls, name, W, vbias, hbias, *args, observed=observed, **kwargs)

    @classmethod
    def dist(cls, W, vbias, hbias, *, log_partition="auto", max_states: int = MAX_ENUMERATED_STATES,
             gibbs_sweeps: int = 1000, **kwargs):
        max_states = check_positive_int(max_states, "max_states")
        gibbs_sweeps = check_positive_int(gibbs_sweeps, "gibbs_sweeps")
        W, vbias, hbias = (_as_parameter(x, n) for x, n in ((W, "W"), (vbias, "vbias"), (hbias, "hbias")))
        if (W.ndim, vbias.ndim, hbias.ndim) != (3, 2, 1):
            raise ValueError(
                "W must have shape (n_visible, n_states, n_hidden), vbias (n_visible, n_states) and hbias "
                f"(n_hidden,); got ndim {W.ndim}, {vbias.ndim}, {hbias.ndim} (batched parameters are not supported: "
                "use shape=(K, n_visible) for K draws of one RBM)"
            )
        sw, sv, sh = W.type.shape, vbias.type.shape, hbias.type.shape
        pairs = ((sv[0], sw[0], "vbias rows"), (sv[1], sw[1], "vbias columns"), (sh[0], sw[2], "hbias entries"))
        for got, want, what in pairs:
            if got is not None and want is not None and got != want:
                raise ValueError(f"{what} ({got}) do not match W of shape {sw}")
        if sw[1] is not None and sw[1] < 2:
            raise ValueError(f"categorical units need at least 2 states, W has shape {sw}")
        mode, log_z = _resolve_log_partition(log_partition, W, vbias, hbias, max_states)
        return super().dist([W, vbias, hbias, log_z], log_partition=mode, max_states=max_states,
                            gibbs_sweeps=gibbs_sweeps, **kwargs)

    def support_point(rv, size, W, vbias, hbias, log_z):
        """One mean-field pass: each unit's most probable label given ``h = sigmoid(hbias)``."""
        W, vbias, hbias, _ = _core(W, vbias, hbias, log_z)
        v = pt.argmax(vbias + pt.tensordot(W, pt.sigmoid(hbias), axes=[[2], [0]]), axis=-1).astype("int64")
        if not rv_size_is_none(size):
            v = pt.full((*size, v.shape[-1]), v)
        return v


def _check_observed(observed, W, vbias):
    """Labels (or one-hot data, converted) checked against the constant shapes, where they are known now."""
    value = observed
    if hasattr(value, "get_value") or (hasattr(value, "owner") and not isinstance(value, Constant)):
        return observed
    if isinstance(value, Constant):
        value = value.data
    sw = pt.as_tensor_variable(W).type.shape
    if sw[0] is None or sw[1] is None:
        return observed
    n, q = int(sw[0]), int(sw[1])
    dummy = CategoricalRBMParams(np.zeros((n, q, 1)), np.zeros((n, q)), np.zeros(1))
    return as_labels(value, dummy, name="observed data of the CategoricalRBM")


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
        W, vbias, hbias = _core(np.asarray(W), np.asarray(vbias), np.asarray(hbias), np.zeros(()))[:3]
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
    if not is_categorical_rbm_variable(var) or _random_ancestors(*categorical_params_of(var)):
        return False
    try:
        model = modelcontext(model)
    except TypeError:
        return False
    if var not in model.free_RVs:
        return False
    sizes = _sizes(categorical_params_of(var)[0])
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
        if is_categorical_rbm_variable(var) and not _random_ancestors(*categorical_params_of(var)):
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

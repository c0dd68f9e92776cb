"""The RBM random variable of PyTensor: its Op, its logp and the exact ``log Z`` Op.

:class:`RBMRV` draws the visible layer of a binary RBM; its logp is
``-F(v) - log Z`` with the free energy of :func:`pymc_rbm.energy.free_energy`
and ``log Z`` treated as :func:`log_partition_mode` says: enumerated by
:class:`LogPartition` (differentiable, its gradient the exact moments of
:class:`ExactMomentsOp`), given, or omitted. :func:`is_rbm_variable` and
:func:`rbm_params_of` read an RBM variable of a model graph.

The user-facing distribution, which checks its arguments and chooses the
mode, is :class:`pymc_rbm.distribution.RBM`; this module is what the step
methods build on, below it (importing :mod:`pymc_rbm.distribution` registers
the step methods with ``pm.sample``).
"""

from __future__ import annotations

import functools
import hashlib
import warnings
import weakref
from typing import NamedTuple

import numba
import numpy as np
import pytensor
import pytensor.tensor as pt
from pymc.distributions.dist_math import check_parameters
from pymc.logprob.abstract import _logprob
from pytensor.gradient import grad_not_implemented, grad_undefined
from pytensor.compile.sharedvalue import SharedVariable
from pytensor.graph.basic import Apply, Constant, Variable
from pytensor.graph.op import Op
from pytensor.graph.utils import MissingInputError
from pytensor.link.numba.dispatch.basic import get_numba_type, numba_njit, register_funcify_and_cache_key
from pytensor.graph.traversal import ancestors
from pytensor.raise_op import Assert
from pytensor.tensor.random.op import RandomVariable

from pymc_rbm.energy import RBMTensors, free_energy
from pymc_rbm.enumeration import (
    REPEATED_ENUMERATION_BITS,
    log_partition_exact,
    moments_exact,
    sample_visible_exact,
)
from pymc_rbm.layers import ReLU
from pymc_rbm.params import RBMParams, ReLURBMParams
from pymc_rbm.validation import check_float_array

__all__ = [
    "AUTO_ENUMERATION_BITS",
    "LOG_PARTITION_MODES",
    "ExactMomentsOp",
    "FixedFreeEnergy",
    "LogPartition",
    "RBMRV",
    "ReLURBMRV",
    "ReLULogPartition",
    "EnumeratedLogPartition",
    "EnumeratedMoments",
    "EstimateFingerprintCheck",
    "checked_estimate",
    "current_values",
    "core_parameters",
    "finite_params",
    "given_log_partition",
    "omitted_log_partition",
    "parameter_tensor",
    "is_rbm_variable",
    "layer_sizes",
    "log_partition_mode",
    "random_ancestors",
    "rbm_params_of",
]

#: Largest smaller layer that ``log_partition="auto"`` enumerates and that forward draws sample exactly:
#: :data:`pymc_rbm.enumeration.REPEATED_ENUMERATION_BITS`, smaller than the estimators' one-off
#: default because a model enumerates at every logp and gradient evaluation.
AUTO_ENUMERATION_BITS = REPEATED_ENUMERATION_BITS

LOG_PARTITION_MODES = ("exact", "estimated", "given", "omitted")

# Under PyTensor's Numba backend the random variables below run their NumPy
# ``perform`` in object mode, by design (the work is NumPy/BLAS, not per-element
# code); the module's other Ops do too, by `_object_mode_cached`, silently.
warnings.filterwarnings(
    "ignore",
    message=r"Numba will use object mode to run (RBMRV|ReLURBMRV)",
    category=UserWarning,
)


class EnumeratedLogPartition(Op):
    """``log Z(W, vbias, hbias)`` of an RBM by exact enumeration, with its exact gradient (the moments).

    The shared Op of every kind of RBM whose ``log Z`` is enumerated; a
    subclass names the parameters (:attr:`params_type`), how ``log Z`` is
    enumerated (:meth:`enumerate_log_z`) and the Op of its gradient
    (:attr:`moments_op`), both bound to the same enumeration limit. Non-finite
    parameters give ``NaN`` (a rejected point), never an exception.
    """

    __props__ = ("limit",)
    params_type: type = RBMParams
    moments_op: type

    def __init__(self, limit: int):
        self.limit = int(limit)

    def make_node(self, W, vbias, hbias):
        return Apply(self, _float_inputs(W, vbias, hbias), [pt.dscalar()])

    def enumerate_log_z(self, params) -> float:
        raise NotImplementedError

    def perform(self, node, inputs, outputs):
        params = finite_params(self.params_type, *inputs)
        value = np.nan if params is None else self.enumerate_log_z(params)
        outputs[0][0] = np.asarray(value, dtype="float64")

    def infer_shape(self, node, input_shapes):
        return [()]

    def pullback(self, inputs, outputs, cotangents):
        (g,) = cotangents
        moments = self.moments_op(self.limit)(*inputs)
        return [pt.cast(g * m, x.dtype) for m, x in zip(moments, inputs)]  # float64 moments, each input's dtype


class EnumeratedMoments(Op):
    """The exact moments that are the gradient of an :class:`EnumeratedLogPartition`, shaped as its inputs.

    Computed and returned in float64 whatever the dtype of the inputs.
    """

    __props__ = ("limit",)
    params_type: type = RBMParams

    def __init__(self, limit: int):
        self.limit = int(limit)

    def make_node(self, W, vbias, hbias):
        inputs = _float_inputs(W, vbias, hbias)
        return Apply(self, inputs, [pt.tensor(dtype="float64", shape=x.type.shape) for x in inputs])

    def enumerate_moments(self, params):
        """``(vh, v, h)``, shaped as ``(W, vbias, hbias)``."""
        raise NotImplementedError

    def perform(self, node, inputs, outputs):
        params = finite_params(self.params_type, *inputs)
        if params is None:
            values = [np.full(np.shape(x), np.nan) for x in inputs]
        else:
            values = self.enumerate_moments(params)
        for out, value in zip(outputs, values):
            out[0] = np.asarray(value, dtype="float64")

    def infer_shape(self, node, input_shapes):
        return list(input_shapes)

    def pullback(self, inputs, outputs, cotangents):
        return [grad_not_implemented(self, i, x, "second derivatives of log Z") for i, x in enumerate(inputs)]


def _float_inputs(*tensors) -> list:
    """The tensors as inputs of the enumeration Ops: floats as they are (float32 under ``floatX="float32"``),
    anything else cast to float64.

    The Ops compute in float64 and declare float64 outputs whatever the input dtype (``pt.as_tensor_variable(x,
    dtype=...)`` does not cast a variable, so the dtype cannot be assumed); the gradient is cast back to each
    input's dtype.
    """
    tensors = [pt.as_tensor_variable(x) for x in tensors]
    return [x if x.dtype in ("float32", "float64") else pt.cast(x, "float64") for x in tensors]


class EstimateFingerprintCheck(Op):
    """``log_z`` as it is, once the parameters are checked to be those the estimate ``log_z`` was computed for.

    The logp of an RBM whose parameters are data (``pm.Data``) and whose
    ``log Z`` is a :class:`~pymc_rbm.estimators.LogPartitionEstimate`: after
    ``pm.set_data`` changes them, the estimate no longer applies, and the
    evaluation raises a ValueError instead of giving a logp off by the change
    of ``log Z``. Hashing the parameters costs one pass over them per
    evaluation.

    Parameters
    ----------
    fingerprint : str
        :meth:`~pymc_rbm.params.RBMParams.fingerprint` of the parameters of the estimate.
    params_type : type
        The parameter class whose fingerprint it is (``RBMParams``, ``CategoricalRBMParams``).
    """

    __props__ = ("fingerprint", "params_type")

    def __init__(self, fingerprint: str, params_type: type = RBMParams):
        self.fingerprint = str(fingerprint)
        self.params_type = params_type

    def make_node(self, log_z, W, vbias, hbias):
        log_z = pt.as_tensor_variable(log_z)
        return Apply(self, [log_z, *_float_inputs(W, vbias, hbias)], [log_z.type()])

    def perform(self, node, inputs, outputs):
        log_z, *params = inputs
        try:
            now = self.params_type(*params).fingerprint()
        except (TypeError, ValueError):  # not an RBM any more (shapes, NaN): not the estimate's model either
            now = None
        if now != self.fingerprint:
            raise ValueError(
                f"the estimate of log Z given as log_partition (log_z = {float(log_z):.6g}) was computed for other "
                "values of W, vbias and hbias than they have now (pm.set_data changed them?), so the logp would be "
                "off by the change of log Z. Build the model again with an estimate of log Z for the new values, or "
                "give log_partition=pm.Data('log_z', ...) and set it together with the parameters"
            )
        outputs[0][0] = np.array(log_z)

    def infer_shape(self, node, input_shapes):
        return [input_shapes[0]]

    def pullback(self, inputs, outputs, cotangents):
        return [cotangents[0], *(x.zeros_like() for x in inputs[1:])]


def checked_estimate(estimate, params_type, W, vbias, hbias) -> str | None:
    """Refuse a ``log Z`` estimate of another model than the current parameters; what the logp must still check.

    Parameters
    ----------
    estimate : LogPartitionEstimate
    params_type : type
        ``RBMParams`` or ``CategoricalRBMParams``: the kind of model.
    W, vbias, hbias : TensorVariable
        The distribution's parameters: constants, data (``pm.Data``, checked
        at its current value) or expressions of them.

    Returns
    -------
    str or None
        The estimate's fingerprint where a parameter is data that
        ``pm.set_data`` can change (the logp checks it again with
        :class:`EstimateFingerprintCheck`); None where they are constants or
        the estimate has no fingerprint.

    Raises
    ------
    ValueError
        When the estimate was computed for other parameter values, or the
        parameters depend on random variables (an estimate is ``log Z`` of one
        fixed model, while theirs changes with every draw).
    """
    if estimate.fingerprint is None:
        return None
    random = random_ancestors(W, vbias, hbias)
    if random:
        raise ValueError(
            f"log_partition={estimate!r} is log Z of one fixed model, but W or the biases depend on the random "
            f"variable(s) {sorted({str(r) for r in random})}, so log Z changes with them; use "
            "log_partition='exact' (small layers) or a tensor that computes log Z of the parameters"
        )
    values = current_values(W, vbias, hbias)
    if values is not None:
        estimate.check_model(params_type(*values))
    if all(isinstance(x, Constant) for x in (W, vbias, hbias)):
        return None
    return estimate.fingerprint


def current_values(*tensors) -> list | None:
    """The values of tensors of constants and data (``pm.Data`` at its current value), or None when not computable.

    Constants and shared variables are read; other expressions are computed
    once, where their graph has no input other than constants and data.
    """
    if all(isinstance(x, (Constant, SharedVariable)) for x in tensors):
        return [x.data if isinstance(x, Constant) else x.get_value(borrow=True) for x in tensors]
    try:
        return pytensor.function([], list(tensors), mode="FAST_COMPILE")()
    except MissingInputError:
        return None


def finite_params(params_type, W, vbias, hbias):
    """``params_type(W, vbias, hbias)`` of numeric inputs, or None when they are not finite (an invalid point)."""
    if not (np.all(np.isfinite(W)) and np.all(np.isfinite(vbias)) and np.all(np.isfinite(hbias))):
        return None
    return params_type(W, vbias, hbias)


class ExactMomentsOp(EnumeratedMoments):
    """``(⟨v hᵀ⟩, ⟨v⟩, ⟨h⟩)`` by exact enumeration of the smaller layer: the gradient of :class:`LogPartition`."""

    def __init__(self, max_bits: int = REPEATED_ENUMERATION_BITS):
        super().__init__(max_bits)

    def enumerate_moments(self, params):
        m = moments_exact(params, max_bits=self.limit)
        return [m.vh, m.v, m.h]


class LogPartition(EnumeratedLogPartition):
    """``log Z(W, vbias, hbias)`` of a binary RBM by exact enumeration of its smaller layer (at most ``max_bits``
    units), with its exact gradient :class:`ExactMomentsOp`; both share one cached enumeration."""

    moments_op = ExactMomentsOp

    def __init__(self, max_bits: int = REPEATED_ENUMERATION_BITS):
        super().__init__(max_bits)

    def enumerate_log_z(self, params) -> float:
        return log_partition_exact(params, max_bits=self.limit).log_z


#: ``estimate(params) -> LogPartitionEstimate``: the estimator :class:`EstimatedLogPartition` calls. The
#: estimators sit above this module, so :mod:`pymc_rbm.distribution` sets it (:func:`set_log_partition_estimator`).
_LOG_PARTITION_ESTIMATOR = None

#: The estimates :class:`EstimatedLogPartition` made in this process, by the fingerprint of their parameters.
_ESTIMATES: dict = {}


def set_log_partition_estimator(estimate) -> None:
    """Set the estimator of ``log Z`` that :class:`EstimatedLogPartition` calls, ``estimate(params)``."""
    global _LOG_PARTITION_ESTIMATOR
    _LOG_PARTITION_ESTIMATOR = estimate


def estimate_once(params):
    """The estimate of ``log Z`` of ``params``, made at the first call for these values and kept (stochastic once).

    Returns
    -------
    LogPartitionEstimate
    """
    key = params.fingerprint()
    if key not in _ESTIMATES:
        if _LOG_PARTITION_ESTIMATOR is None:
            raise RuntimeError("no estimator of log Z is set: import pymc_rbm.distribution first")
        _ESTIMATES[key] = _LOG_PARTITION_ESTIMATOR(params)
    return _ESTIMATES[key]


class EstimatedLogPartition(Op):
    """``log Z(W, vbias, hbias)`` of parameters that are constants or data, estimated once per their values.

    The logp of ``log_partition="auto"`` where the smaller layer is too large
    to enumerate at every evaluation: the first evaluation estimates ``log Z``
    (:func:`estimate_once`, by the estimators' ``method="auto"``) and later
    ones reuse it. The Op is never folded into a constant, so building and
    compiling a model estimate nothing, and forward draws never evaluate it.
    It has no gradient: the parameters are not random variables. Non-finite
    parameters give ``NaN`` (a rejected point).
    """

    __props__ = ()
    params_type: type = RBMParams

    def make_node(self, W, vbias, hbias):
        return Apply(self, _float_inputs(W, vbias, hbias), [pt.dscalar()])

    def do_constant_folding(self, fgraph, node) -> bool:
        return False

    def perform(self, node, inputs, outputs):
        params = finite_params(self.params_type, *inputs)
        value = np.nan if params is None else estimate_once(params).log_z
        outputs[0][0] = np.asarray(value, dtype="float64")

    def infer_shape(self, node, input_shapes):
        return [()]

    def pullback(self, inputs, outputs, cotangents):
        return [grad_undefined(self, i, x, "log Z is estimated only for constant parameters")
                for i, x in enumerate(inputs)]


class RBMRV(RandomVariable):
    """Draws of the visible layer of a binary RBM.

    Exact (enumeration of the smaller layer) when that layer has at most
    ``max_bits`` units; otherwise ``gibbs_sweeps`` block-Gibbs sweeps from a
    uniformly random start per draw, with a warning that the draws are
    approximate.

    Parameters
    ----------
    log_partition : {"exact", "estimated", "given", "omitted"}
        How the logp treats ``log Z`` (see :func:`log_partition_mode`).
    max_bits : int
        Largest smaller layer enumerated, for ``log Z`` and for draws.
    gibbs_sweeps : int
        Sweeps of the approximate sampler used beyond ``max_bits``.
    estimate_fingerprint : str, optional
        With ``log_partition="given"``: the fingerprint of the parameters that
        the given estimate of ``log Z`` was computed for, where they are data
        that can change (``pm.set_data``); the logp refuses other values
        (:class:`EstimateFingerprintCheck`). None: nothing to check.
    """

    name = "rbm"
    signature = "(v,h),(v),(h),()->(v)"
    dtype = "int64"
    _print_name = ("RBM", "\\operatorname{RBM}")
    __props__ = RandomVariable.__props__ + ("log_partition", "max_bits", "gibbs_sweeps", "estimate_fingerprint")

    def __init__(
        self,
        *args,
        log_partition: str = "exact",
        max_bits: int = AUTO_ENUMERATION_BITS,
        gibbs_sweeps: int = 1000,
        estimate_fingerprint: str | None = None,
        **kwargs,
    ):
        if log_partition not in LOG_PARTITION_MODES:
            raise ValueError(f"log_partition mode must be one of {LOG_PARTITION_MODES}, got {log_partition!r}")
        self.log_partition = log_partition
        self.max_bits = int(max_bits)
        self.gibbs_sweeps = int(gibbs_sweeps)
        self.estimate_fingerprint = estimate_fingerprint
        super().__init__(*args, **kwargs)

    def rng_fn(self, rng, W, vbias, hbias, log_z, size):
        return batched_draws(W, vbias, hbias, size, lambda W, vbias, hbias, size: self._draw(
            RBMParams(W, vbias, hbias), size, rng))

    def _draw(self, params: RBMParams, size: tuple, rng) -> np.ndarray:
        if min(params.n_visible, params.n_hidden) <= self.max_bits:
            return sample_visible_exact(params, size, rng=rng, max_bits=self.max_bits)
        return _approximate_draws(params, size, rng, self.gibbs_sweeps)


def batched_draws(W, vbias, hbias, size, draw) -> np.ndarray:
    """Draws of the visible units of a batch of RBMs, ``draw(W, vbias, hbias, size)`` making those of one.

    PyTensor may hand the parameters broadcast to the batch shape: all are drawn at once when every batch
    element has the same RBM, else one by one.

    Parameters
    ----------
    W : ndarray of shape (..., n_visible, n_hidden)
    vbias : ndarray of shape (..., n_visible)
    hbias : ndarray of shape (..., n_hidden)
    size : tuple of int or None
        The batch shape (None: that of the parameters).
    draw : callable
        ``draw(W, vbias, hbias, size) -> ndarray of shape size + (n_visible,)`` for one RBM.

    Returns
    -------
    ndarray of int64 of shape size + (n_visible,)
    """
    batch = np.broadcast_shapes(W.shape[:-2], vbias.shape[:-1], hbias.shape[:-1])
    size = batch if size is None else tuple(size)
    W, vbias, hbias = (
        np.broadcast_to(x, size + x.shape[x.ndim - nd :]) for x, nd in ((W, 2), (vbias, 1), (hbias, 1))
    )
    first = (0,) * len(size)
    if all(np.all(x == x[first]) for x in (W, vbias, hbias)) if size else True:
        return draw(W[first], vbias[first], hbias[first], size)
    out = np.empty(size + (W.shape[-2],), dtype=np.int64)
    for idx in np.ndindex(*size):
        out[idx] = draw(W[idx], vbias[idx], hbias[idx], ())
    return out


def _approximate_draws(params: RBMParams, size: tuple, rng, n_sweeps: int) -> np.ndarray:
    """Block-Gibbs draws: one chain per draw from a uniform start, ``n_sweeps`` sweeps."""
    from pymc_rbm.kernels.gibbs import gibbs_sweep
    from pymc_rbm.kernels.state import RBMState

    warnings.warn(
        f"both layers of this RBM ({params.n_visible} visible, {params.n_hidden} hidden) are too large "
        f"to enumerate: forward draws are approximate ({n_sweeps} block-Gibbs sweeps per draw from a "
        "uniformly random start; set gibbs_sweeps=... to change)",
        UserWarning,
        stacklevel=2,
    )
    n = int(np.prod(size))
    v = (rng.random((n, params.n_visible)) < 0.5).astype(np.float64)
    state = RBMState(v=v, h=np.zeros((n, params.n_hidden)))
    for _ in range(n_sweeps):
        state, _ = gibbs_sweep(rng, state, params)
    return state.v.astype(np.int64).reshape(*size, params.n_visible)


def core_parameters(*params):
    """Drop batch dimensions that PyMC's rewrites add to the (unbatched) parameters (constants stay constants)."""

    def core(x, nd):
        if x.ndim <= nd:
            return x
        index = (0,) * (x.ndim - nd)
        return pt.constant(x.data[index], dtype=x.dtype) if isinstance(x, Constant) else x[index]

    return [core(x, nd) for x, nd in zip(params, (2, 1, 1, 0))]


class FixedFreeEnergy(Op):
    """``-F(v)`` of every row of ``v`` for an RBM whose parameters are constants of the graph (``-inf`` at rows
    that are not binary), evaluated once per distinct ``v``.

    With fixed weights the RBM's own term depends on its value alone, yet NUTS on the model's other variables
    evaluates the whole log density, this term included, at every leapfrog step of a draw while the value stays
    the same. The Op keeps the last value and its result, so those evaluations cost a comparison of the value
    instead of the free energy of every row.

    Parameters
    ----------
    params : RBMParams or ReLURBMParams
        The fixed parameters (finite, consistent shapes).
    """

    __props__ = ("fingerprint",)

    def __init__(self, params):
        self.params = params
        self.fingerprint = params.fingerprint()
        self._last = None  # (value, result): one tuple, replaced whole

    def make_node(self, value):
        value = pt.as_tensor_variable(value)
        return Apply(self, [value], [pt.tensor(dtype="float64", shape=value.type.shape[:-1])])

    def perform(self, node, inputs, output_storage):
        [v] = inputs
        last = self._last
        if last is None or last[0].shape != v.shape or not np.array_equal(last[0], v):
            binary = np.all((v == 0) | (v == 1), axis=-1)
            logp = -free_energy(np.where(binary[..., None], v, 0).astype(np.float64), self.params)
            last = (v.copy(), np.where(binary, logp, -np.inf))
            self._last = last
        output_storage[0][0] = last[1].copy()  # the graph may overwrite its inputs in place

    def grad(self, inputs, output_grads):
        return [grad_undefined(self, 0, inputs[0], "the value of an RBM is discrete")]


#: The live Ops of this module by the number their compiled form names (:func:`_object_mode_cached`): weak
#: references to every Op compiled under that number (equal Ops, any of which computes the same), so that the
#: number stays valid while any function holding one of them lives.
_LIVE_OPS: dict[int, list[weakref.ref]] = {}


def _register_live_op(key: int, op) -> None:
    refs = [r for r in _LIVE_OPS.get(key, []) if r() is not None]
    if not any(r() is op for r in refs):
        refs.append(weakref.ref(op))
    _LIVE_OPS[key] = refs


def _live_op_perform(key: int, n_outputs: int, inputs: tuple):
    """The ``n_outputs`` outputs of a live Op that ``key`` names at ``inputs`` (one array, or a tuple): the
    call back of its compiled form."""
    op = next(op for op in (r() for r in _LIVE_OPS[key]) if op is not None)
    storage = [[None] for _ in range(n_outputs)]
    op.perform(None, list(inputs), storage)
    return storage[0][0] if len(storage) == 1 else tuple(out[0] for out in storage)


def _object_mode_cached(op, node=None, **kwargs):
    """An Op's NumPy ``perform`` called from PyTensor's Numba backend through a module-level function and a
    number, so that compiled functions which hold the Op stay in Numba's cache.

    Numba's own fallback for an Op without a compiled form closes over the Op, which keeps every compiled
    function holding it out of the cache: each ``pm.sample`` would compile NUTS's log density afresh (most of a
    second at its first call). The number is a hash of the Op's class, its properties and its node's types, so
    it is the same in every process; it names the live Op (equal properties, equal ``perform``). The Ops' work
    is NumPy and BLAS (enumeration, a free energy kept per value), so object mode costs only the call.
    """
    text = repr((type(op).__module__, type(op).__qualname__, op._props(), [str(x.type) for x in node.inputs],
                 [str(x.type) for x in node.outputs]))
    key = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=7).digest(), "little")
    n_outputs = len(node.outputs)
    _register_live_op(key, op)
    types = [get_numba_type(x.type) for x in node.outputs]
    out_type = types[0] if len(types) == 1 else numba.types.Tuple(types)

    @numba_njit
    def perform(*inputs):
        with numba.objmode(out=out_type):
            out = _live_op_perform(key, n_outputs, inputs)
        return out

    return perform, f"pymc_rbm.object_mode.v1.{key}"


for _op_type in (EnumeratedLogPartition, EnumeratedMoments, EstimateFingerprintCheck, EstimatedLogPartition,
                 FixedFreeEnergy):
    register_funcify_and_cache_key(_op_type)(_object_mode_cached)


def _fixed_params(W, vbias, hbias, params_type):
    """The parameters as ``params_type`` where ``W``, ``vbias`` and ``hbias`` are finite constants of
    consistent shapes; None otherwise (then the logp graph computes and checks them)."""
    if not all(isinstance(x, Constant) for x in (W, vbias, hbias)):
        return None
    W, vbias, hbias = (np.asarray(x.data, dtype=np.float64) for x in (W, vbias, hbias))
    consistent = W.ndim == 2 and W.shape == (vbias.size, hbias.size) and vbias.ndim == hbias.ndim == 1
    return finite_params(params_type, W, vbias, hbias) if consistent else None


def _binary_visible_logp(op, value, W, vbias, hbias, log_z, tensors, log_partition_op, params_type):
    """``-F(v) - log Z`` of binary visible values (``-inf`` elsewhere), the parameters checked: the logp of the
    RBM variables whose visible units are binary. ``tensors`` makes the free energy's parameters from
    ``(W, vbias, hbias)``; ``log_partition_op`` gives ``log Z`` in the modes ``"exact"`` (an enumeration) and
    ``"estimated"`` (:class:`EstimatedLogPartition`); ``params_type``
    the class a given estimate's fingerprint is checked against. Constant parameters take
    :class:`FixedFreeEnergy`."""
    fixed = _fixed_params(W, vbias, hbias, params_type)
    if fixed is None:
        W = Assert("W must have vbias.size rows and hbias.size columns (check pm.Data or pm.set_data that resized W)")(
            W, pt.eq(W.shape[0], vbias.shape[0]), pt.eq(W.shape[1], hbias.shape[0])
        )
        logp = -free_energy(value, tensors(W, vbias, hbias))
    else:
        logp = FixedFreeEnergy(fixed)(value)  # binary rows and finite parameters are its own checks
    if op.log_partition in ("exact", "estimated"):
        logp = logp - log_partition_op(W, vbias, hbias)
    elif op.log_partition == "given":
        if op.estimate_fingerprint is not None:
            log_z = EstimateFingerprintCheck(op.estimate_fingerprint, params_type)(log_z, W, vbias, hbias)
        logp = logp - log_z
    if fixed is not None:
        return logp
    binary = pt.all(pt.eq(value, 0) | pt.eq(value, 1), axis=-1)
    logp = pt.switch(binary, logp, -np.inf)
    return check_parameters(
        logp,
        pt.all(pt.isfinite(W)),
        pt.all(pt.isfinite(vbias)),
        pt.all(pt.isfinite(hbias)),
        msg="W, vbias and hbias must be finite",
    )


@_logprob.register(RBMRV)
def _rbm_logp(op, values, rng, size, W, vbias, hbias, log_z, **kwargs):
    [value] = values
    W, vbias, hbias, log_z = core_parameters(W, vbias, hbias, log_z)
    log_z_op = EstimatedLogPartition() if op.log_partition == "estimated" else LogPartition(op.max_bits)
    return _binary_visible_logp(op, value, W, vbias, hbias, log_z, RBMTensors, log_z_op, RBMParams)



# ----------------------------------------------------------------------------- ReLU hidden units
class ReLUTensors(NamedTuple):
    """Symbolic ``W``, ``vbias`` and ``hbias`` with the hidden layer type that :func:`~pymc_rbm.energy.free_energy` reads."""

    W: object
    vbias: object
    hbias: object
    hidden: ReLU


def _relu_params_type(gamma):
    """The parameter class of an RBM with ReLU hidden units of precisions ``gamma``, called as ``(W, vbias, hbias)``."""
    gamma = np.array(gamma, dtype=np.float64)
    return functools.partial(ReLURBMParams, gamma=gamma)


class _ReLUPrecisions:
    """The precisions ``gamma`` of the ReLU hidden units, a constant property of the Op, and its parameter class.
    Each Op names ``__props__ = ("limit", "gamma")`` itself: PyTensor builds equality from the class's own."""

    def __init__(self, limit: int, gamma: tuple = ()):
        super().__init__(limit)
        self.gamma = tuple(float(g) for g in gamma)

    @property
    def params_type(self):
        return _relu_params_type(self.gamma)


class ReLUMomentsOp(_ReLUPrecisions, EnumeratedMoments):
    """``(⟨v hᵀ⟩, ⟨v⟩, ⟨h⟩)`` of an RBM with ReLU hidden units of precisions ``gamma``, its visible layer
    enumerated: the gradient of :class:`ReLULogPartition`."""

    __props__ = ("limit", "gamma")

    def enumerate_moments(self, params):
        m = moments_exact(params, max_bits=self.limit)
        return [m.vh, m.v, m.h]


class ReLULogPartition(_ReLUPrecisions, EnumeratedLogPartition):
    """``log Z(W, vbias, hbias)`` of an RBM with ReLU hidden units of precisions ``gamma`` (constants), by
    enumerating its visible layer (at most ``limit`` units), with its exact gradient :class:`ReLUMomentsOp`."""

    __props__ = ("limit", "gamma")

    def moments_op(self, limit):
        return ReLUMomentsOp(limit, self.gamma)

    def enumerate_log_z(self, params) -> float:
        return log_partition_exact(params, max_bits=self.limit).log_z


class ReLUEstimatedLogPartition(EstimatedLogPartition):
    """:class:`EstimatedLogPartition` of an RBM with ReLU hidden units of precisions ``gamma`` (constants)."""

    __props__ = ("gamma",)

    def __init__(self, gamma: tuple = ()):
        self.gamma = tuple(float(g) for g in gamma)

    @property
    def params_type(self):
        return _relu_params_type(self.gamma)


class ReLURBMRV(RandomVariable):
    """Draws of the visible layer of an RBM with binary visible and ReLU hidden units of precisions ``gamma``.

    Exact: the visible layer (at most ``max_bits`` units) is drawn from its
    enumerated marginal. Not an :class:`RBMRV`: the step methods of binary
    RBMs do not take it; ``pm.sample`` draws it by
    :class:`~pymc_rbm.step_methods.enumerated.VisibleExactDraws`.

    Parameters
    ----------
    log_partition : {"exact", "estimated", "given", "omitted"}
    max_bits : int
        Largest visible layer enumerated, for ``log Z`` and for draws.
    gamma : tuple of float
        The precisions of the hidden units (one per unit), constants.
    estimate_fingerprint : str, optional
        As for :class:`RBMRV`.
    """

    name = "relu_rbm"
    signature = "(v,h),(v),(h),()->(v)"
    dtype = "int64"
    _print_name = ("ReLU-RBM", "\\operatorname{ReLU-RBM}")
    __props__ = RandomVariable.__props__ + ("log_partition", "max_bits", "gamma", "estimate_fingerprint")

    def __init__(self, *args, log_partition: str = "exact", max_bits: int = AUTO_ENUMERATION_BITS,
                 gamma: tuple = (), estimate_fingerprint: str | None = None, **kwargs):
        if log_partition not in LOG_PARTITION_MODES:
            raise ValueError(f"log_partition mode must be one of {LOG_PARTITION_MODES}, got {log_partition!r}")
        self.log_partition = log_partition
        self.max_bits = int(max_bits)
        self.gamma = tuple(float(g) for g in gamma)
        self.estimate_fingerprint = estimate_fingerprint
        super().__init__(*args, **kwargs)

    def params(self, W, vbias, hbias) -> ReLURBMParams:
        """The parameters of one RBM of this variable."""
        return ReLURBMParams(W, vbias, hbias, np.array(self.gamma))

    def rng_fn(self, rng, W, vbias, hbias, log_z, size):
        return batched_draws(W, vbias, hbias, size, lambda W, vbias, hbias, size: sample_visible_exact(
            self.params(W, vbias, hbias), size, rng=rng, max_bits=self.max_bits))


@_logprob.register(ReLURBMRV)
def _relu_rbm_logp(op, values, rng, size, W, vbias, hbias, log_z, **kwargs):
    [value] = values
    W, vbias, hbias, log_z = core_parameters(W, vbias, hbias, log_z)
    layer = ReLU(np.array(op.gamma))
    if op.log_partition == "estimated":
        log_z_op = ReLUEstimatedLogPartition(op.gamma)
    else:
        log_z_op = ReLULogPartition(op.max_bits, op.gamma)
    return _binary_visible_logp(op, value, W, vbias, hbias, log_z, lambda *p: ReLUTensors(*p, layer), log_z_op,
                                _relu_params_type(op.gamma))


def is_relu_rbm_variable(var) -> bool:
    """Whether ``var`` is a random variable of an :class:`~pymc_rbm.RBM` with ReLU hidden units."""
    return isinstance(getattr(getattr(var, "owner", None), "op", None), ReLURBMRV)


def is_rbm_variable(var) -> bool:
    """Whether ``var`` is a random variable of the :class:`~pymc_rbm.RBM` distribution."""
    return isinstance(getattr(getattr(var, "owner", None), "op", None), RBMRV)


def _rbm_op(rv) -> RBMRV:
    if not is_rbm_variable(rv):
        raise TypeError(f"{rv} is not an RBM random variable")
    return rv.owner.op


def log_partition_mode(rv) -> str:
    """How the logp of an :class:`~pymc_rbm.RBM` variable treats ``log Z``.

    Returns
    -------
    {"exact", "estimated", "given", "omitted"}
        ``"estimated"``: ``log Z`` of the parameters' values estimated once, when the logp is first
        evaluated (:class:`EstimatedLogPartition`); ``"omitted"``: the logp is unnormalised (constant parameters).
    """
    return _rbm_op(rv).log_partition


def rbm_params_of(rv) -> RBMTensors:
    """The symbolic ``W``, ``vbias`` and ``hbias`` of an :class:`~pymc_rbm.RBM` variable."""
    W, vbias, hbias, _ = _rbm_op(rv).dist_params(rv.owner)
    return RBMTensors(W, vbias, hbias)


def layer_sizes(W) -> tuple[int, int] | None:
    """``(n_visible, n_hidden)`` of a symbolic ``W``, where known without sampling, else None.

    From the static shape, a constant's or a shared variable's value, or by
    evaluating the shape of a graph of constants.
    """
    shape = W.type.shape
    if all(s is not None for s in shape):
        return int(shape[-2]), int(shape[-1])
    if isinstance(W, Constant):
        return tuple(int(s) for s in np.shape(W.data)[-2:])
    if isinstance(W, SharedVariable):
        return tuple(int(s) for s in np.shape(W.get_value(borrow=True))[-2:])
    try:
        return tuple(int(s) for s in W.shape.eval()[-2:])
    except Exception:  # noqa: BLE001 - any failure means the sizes are not known
        return None


def random_ancestors(*tensors) -> list:
    """The random variables that the given tensors are computed from (directly or through deterministics).

    Constants and data (shared variables) are not random; anything drawn from a
    distribution is. A distribution whose parameters have none can treat them as
    fixed (``log Z`` left out, replica exchange, exact draws).
    """
    from pymc.distributions.distribution import SymbolicRandomVariable

    random_ops = (RandomVariable, SymbolicRandomVariable)
    return [v for v in ancestors(tensors) if v.owner is not None and isinstance(v.owner.op, random_ops)]


def parameter_tensor(value, name: str):
    """A tensor of a distribution's parameter; constants are checked now (finite, real, numeric) and made float64.

    PyTensor variables (random variables, ``pm.Data``, expressions) pass as
    they are, in their own dtype (float32 under ``floatX="float32"``; the
    enumeration Ops compute in float64 whatever it is). Anything else is converted with ``np.asarray`` first, so
    arrays of other libraries (objects with ``__array__``, e.g. torch or JAX
    arrays on the CPU) work, and a NaN, an infinity, a complex or
    non-numeric entry is refused with the parameter's name before the model
    is built (its logp would be -inf everywhere).
    """
    if isinstance(value, Constant):
        check_float_array(value.data, name)
    if isinstance(value, Variable):
        return pt.as_tensor_variable(value, dtype="float64")
    return pt.as_tensor_variable(check_float_array(value, name), dtype="float64")


def omitted_log_partition(*params):
    """``("omitted", 0)``: log Z left out of the logp, refused when the parameters involve random variables."""
    random = random_ancestors(*params)
    if random:
        raise ValueError(
            "log_partition=None leaves log Z out of the logp, which is only correct while W and the biases are "
            f"constants; here they depend on {sorted({str(r) for r in random})}. Use log_partition='exact' "
            "(small layers) or supply an estimate of log Z."
        )
    return "omitted", pt.constant(0.0)


def given_log_partition(value):
    """``("given", log_z)`` for an estimate of log Z: a real, finite scalar number or tensor."""
    if not hasattr(value, "owner") and np.asarray(value).dtype.kind not in "iuf":
        raise ValueError(f"log_partition must be a real number, got {value!r}")
    log_z = pt.as_tensor_variable(value, dtype="float64")
    if log_z.ndim != 0:
        raise ValueError(f"log_partition must be a scalar, got {log_z.ndim} dimension(s)")
    if isinstance(log_z, Constant) and not np.isfinite(log_z.data):
        raise ValueError(f"log_partition must be finite, got {log_z.data}")
    return "given", log_z

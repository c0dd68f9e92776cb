"""The random variable of :class:`~pymc_rbm.categorical.CategoricalRBM` and its log-probability.

:class:`CategoricalRBMRV` draws exactly where a layer can be enumerated (else
by Gibbs sweeps, with a warning); :class:`CategoricalLogPartition` is the exact
``log Z`` as an Op whose gradient is the exact moments, so a model with random
weights gets exact gradients for NUTS; the log-probability ``-F(v) - log Z`` is
registered with PyMC's ``logp``. The step methods read their variables through
:func:`is_categorical_rbm_variable` and :func:`categorical_params_of`.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytensor.tensor as pt
from pymc.distributions.dist_math import check_parameters
from pymc.logprob.abstract import _logprob
from pytensor.compile.sharedvalue import SharedVariable
from pytensor.graph.basic import Constant
from pytensor.tensor.random.op import RandomVariable

from pymc_rbm.categorical import (
    MAX_ENUMERATED_STATES,
    CategoricalAtBeta,
    CategoricalRBMParams,
    EnumerationTooLarge,
    enumeration_plan,
    free_energy,
    log_partition_exact,
    moments_exact,
    sample_exact,
)
from pymc_rbm.kernels.layer import GIBBS
from pymc_rbm.kernels.state import RBMState
from pymc_rbm.kernels.sweep import sweep
from pymc_rbm.energy import RBMTensors
from pymc_rbm.random_variable import (
    LOG_PARTITION_MODES,
    EnumeratedLogPartition,
    EnumeratedMoments,
    EstimateFingerprintCheck,
)

__all__ = [
    "CategoricalLogPartition",
    "CategoricalMomentsOp",
    "CategoricalRBMRV",
    "categorical_params_of",
    "categorical_sizes",
    "core_parameters",
    "is_categorical_rbm_variable",
]


warnings.filterwarnings(
    "ignore",
    message=r"Numba will use object mode to run CategoricalRBMRV",
    category=UserWarning,
)


# ----------------------------------------------------------------------------- log Z as an Op
class CategoricalMomentsOp(EnumeratedMoments):
    """``(⟨1(v_i = k) h_j⟩, p(v_i = k), p(h_j = 1))`` by exact enumeration: the gradient of ``log Z``."""

    params_type = CategoricalRBMParams

    def __init__(self, max_states: int = MAX_ENUMERATED_STATES):
        super().__init__(max_states)

    def enumerate_moments(self, params):
        m = moments_exact(params, max_states=self.limit)
        return [m.vh, m.v, m.h]


class CategoricalLogPartition(EnumeratedLogPartition):
    """``log Z(W, vbias, hbias)`` of a categorical RBM by exact enumeration (at most ``max_states``
    configurations of the enumerated layer), with its exact gradient :class:`CategoricalMomentsOp`
    (:func:`~pymc_rbm.categorical.moments_exact`)."""

    params_type = CategoricalRBMParams
    moments_op = CategoricalMomentsOp

    def __init__(self, max_states: int = MAX_ENUMERATED_STATES):
        super().__init__(max_states)

    def enumerate_log_z(self, params) -> float:
        return log_partition_exact(params, max_states=self.limit)


class CategoricalRBMRV(RandomVariable):
    """Draws of the visible labels of a categorical RBM.

    Exact (:func:`~pymc_rbm.categorical.sample_exact`) where a layer has at
    most ``max_states`` configurations; otherwise ``gibbs_sweeps`` block-Gibbs
    sweeps from uniformly random labels per draw, with a warning.
    ``estimate_fingerprint`` (with ``log_partition="given"``, parameters that
    are data): the fingerprint of the parameters the given estimate of
    ``log Z`` was computed for; the logp refuses other values
    (:class:`~pymc_rbm.random_variable.EstimateFingerprintCheck`).
    """

    name = "categorical_rbm"
    signature = "(v,q,h),(v,q),(h),()->(v)"
    dtype = "int64"
    _print_name = ("CategoricalRBM", "\\operatorname{CategoricalRBM}")
    __props__ = RandomVariable.__props__ + ("log_partition", "max_states", "gibbs_sweeps", "estimate_fingerprint")

    def __init__(self, *args, log_partition="exact", max_states=MAX_ENUMERATED_STATES, gibbs_sweeps=1000,
                 estimate_fingerprint=None, **kwargs):
        if log_partition not in LOG_PARTITION_MODES:
            raise ValueError(f"log_partition mode must be one of {LOG_PARTITION_MODES}, got {log_partition!r}")
        self.log_partition = log_partition
        self.max_states = int(max_states)
        self.gibbs_sweeps = int(gibbs_sweeps)
        self.estimate_fingerprint = estimate_fingerprint
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


def core_parameters(*params):
    return [x[(0,) * (x.ndim - nd)] if x.ndim > nd else x for x, nd in zip(params, (3, 2, 1, 0))]


@_logprob.register(CategoricalRBMRV)
def _categorical_rbm_logp(op, values, rng, size, W, vbias, hbias, log_z, **kwargs):
    [value] = values
    W, vbias, hbias, log_z = core_parameters(W, vbias, hbias, log_z)
    q = W.shape[1]
    logp = -free_energy(value, RBMTensors(W, vbias, hbias))
    if op.log_partition == "exact":
        logp = logp - CategoricalLogPartition(op.max_states)(W, vbias, hbias)
    elif op.log_partition == "given":
        if op.estimate_fingerprint is not None:
            log_z = EstimateFingerprintCheck(op.estimate_fingerprint, CategoricalRBMParams)(log_z, W, vbias, hbias)
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


def categorical_sizes(W):
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



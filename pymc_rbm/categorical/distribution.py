"""The categorical RBM as a PyMC distribution: :class:`CategoricalRBM`.

Its value is the vector of visible labels (integers in ``[0, n_states)``,
shape ``(..., n_visible)``), the hidden units are summed out and
``logp(v) = -F(v) - log Z``, ``log Z`` exact where a layer can be enumerated
(differentiable: its gradient is the exact moments), given, or left out
(constant parameters only), as for the binary :class:`~pymc_rbm.RBM`.
Importing this module imports :mod:`pymc_rbm.step_methods`, which registers
the step methods (those of :mod:`pymc_rbm.step_methods.categorical` among
them) with ``pm.sample``.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pymc
import pytensor
import pytensor.tensor as pt
from pymc.distributions.distribution import Discrete
from pymc.distributions.shape_utils import rv_size_is_none
from pytensor.graph.basic import Constant

from pymc_rbm.categorical import MAX_ENUMERATED_STATES, CategoricalRBMParams, as_labels, enumeration_plan
from pymc_rbm.estimates import LogPartitionEstimate
from pymc_rbm.validation import check_positive_int
from pymc_rbm.categorical.random_variable import CategoricalRBMRV, categorical_sizes, core_parameters
from pymc_rbm.random_variable import (
    checked_estimate,
    given_log_partition,
    omitted_log_partition,
    parameter_tensor,
    random_ancestors,
)

__all__ = [
    "CategoricalRBM",
]


#: Where the frames of PyMC and of this package live (skipped by warnings about the user's model).
_INTERNAL_FILES = (os.path.dirname(os.path.dirname(__file__)), *(os.path.dirname(m.__file__) for m in (pymc, pytensor)))


def _resolve_log_partition(log_partition, W, vbias, hbias, max_states):
    if isinstance(log_partition, str):
        if log_partition not in ("auto", "exact"):
            raise ValueError(
                f"log_partition must be 'auto', 'exact', a number or tensor (an estimate of log Z), or None; "
                f"got {log_partition!r}"
            )
        sizes = categorical_sizes(W)
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
        random = random_ancestors(W, vbias, hbias)
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
        return omitted_log_partition(W, vbias, hbias)
    if isinstance(log_partition, LogPartitionEstimate):  # checked against the model by dist
        log_partition = log_partition.log_z
    return given_log_partition(log_partition)


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
    log_partition : {"auto", "exact"}, float, tensor, LogPartitionEstimate or None
        As for :class:`~pymc_rbm.RBM`: ``"exact"`` enumerates the layer with
        fewer configurations (``2**n_hidden`` or ``n_states**n_visible``) at
        every evaluation, differentiably, and is refused beyond ``max_states``;
        a finite number, tensor or :class:`~pymc_rbm.estimators.LogPartitionEstimate`
        is an estimate (a ``LogPartitionEstimate`` computed for another model
        than the parameters, constants or data at their current value, is
        refused, and so is one for random parameters; where the parameters
        are data, the logp raises once ``pm.set_data`` has changed them);
        ``None`` leaves ``log Z`` out
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

    Missing values: observed data with missing cells (a masked array, or NaN;
    the values under a mask are not read) is imputed by PyMC. Where whole
    rows are missing, they form a ``CategoricalRBM`` variable
    ``<name>_unobserved`` that the steps above sample; where single cells
    are missing, ``<name>_unobserved`` holds the missing cells of all rows,
    and ``pm.sample`` gives it :class:`~pymc_rbm.step_methods.ImputedCells`
    (replica exchange on the RBM with the observed cells clamped) where the
    parameters are constants or data and no other model term involves it.

    Examples
    --------
    >>> import pymc as pm
    >>> from pymc_rbm.categorical import CategoricalRBMParams
    >>> from pymc_rbm.categorical import CategoricalRBM
    >>> p = CategoricalRBMParams.random(5, 4, 3, rng=0)
    >>> with pm.Model():
    ...     v = CategoricalRBM("v", p.W, p.vbias, p.hbias)
    >>> pm.draw(v, random_seed=1).shape
    (5,)
    """

    rv_type = CategoricalRBMRV

    @classmethod
    def rv_op(cls, W, vbias, hbias, log_z, *, log_partition="exact", max_states=MAX_ENUMERATED_STATES,
              gibbs_sweeps=1000, estimate_fingerprint=None, size=None, rng=None):
        if rng is None:
            rng = pt.random.shared_rng(seed=None)
        op = CategoricalRBMRV(log_partition=log_partition, max_states=max_states, gibbs_sweeps=gibbs_sweeps,
                              estimate_fingerprint=estimate_fingerprint)
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
        W, vbias, hbias = (parameter_tensor(x, n) for x, n in ((W, "W"), (vbias, "vbias"), (hbias, "hbias")))
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
        fingerprint = None
        if isinstance(log_partition, LogPartitionEstimate):
            fingerprint = checked_estimate(log_partition, CategoricalRBMParams, W, vbias, hbias)
        mode, log_z = _resolve_log_partition(log_partition, W, vbias, hbias, max_states)
        return super().dist([W, vbias, hbias, log_z], log_partition=mode, max_states=max_states,
                            gibbs_sweeps=gibbs_sweeps, estimate_fingerprint=fingerprint, **kwargs)

    def support_point(rv, size, W, vbias, hbias, log_z):
        """One mean-field pass: each unit's most probable label given ``h = sigmoid(hbias)``."""
        W, vbias, hbias, _ = core_parameters(W, vbias, hbias, log_z)
        v = pt.argmax(vbias + pt.tensordot(W, pt.sigmoid(hbias), axes=[[2], [0]]), axis=-1).astype("int64")
        if not rv_size_is_none(size):
            v = pt.full((*size, v.shape[-1]), v)
        return v


def _check_observed(observed, W, vbias):
    """Labels (or one-hot data, converted) checked against the constant shapes, where they are known now.

    Missing cells (masked, or NaN) are not read: data with some is returned
    as a new masked array of labels (0 under the mask), which PyMC imputes;
    a unit of one-hot data is missing where all its entries are.
    """
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
    name = "observed data of the CategoricalRBM"
    try:
        data = np.asarray(np.ma.getdata(value))
    except Exception:  # noqa: BLE001 - ragged lists and the like: as_labels says what is wrong
        return as_labels(value, dummy, name=name)
    missing = np.ma.getmaskarray(value) if np.ma.isMaskedArray(value) else np.zeros(data.shape, dtype=bool)
    if data.dtype.kind == "f":
        missing = missing | np.isnan(data)
    if not missing.any():
        return as_labels(data, dummy, name=name)
    one_hot = data.ndim >= 2 and data.shape[-2:] == (n, q) and q != n  # as as_labels reads it
    if one_hot:
        units = missing.all(axis=-1)
        partly = missing.any(axis=-1) & ~units
        if partly.any():
            where = tuple(int(i) for i in np.argwhere(partly)[0])
            raise ValueError(
                f"{name} is one-hot with some but not all of the {q} entries of a unit missing (first at unit index "
                f"{where}); mask (or set to NaN) all the entries of a missing unit, or none"
            )
        filled = np.where(missing, np.arange(q) == 0, data)  # label 0 under the mask, never read
    else:
        units, filled = missing, np.where(missing, 0, data)
    labels = as_labels(filled, dummy, one_hot=one_hot, name=name)
    if units.all():
        raise ValueError(f"every cell of the {name} is missing (masked or NaN): leave observed out for a free variable")
    return np.ma.array(labels, mask=units)


# Register the step methods with pm.sample, which then picks the categorical steps for CategoricalRBM variables by
# itself (they live in pymc_rbm.step_methods.categorical and build on pymc_rbm.categorical.random_variable).
import pymc_rbm.step_methods  # noqa: E402, F401

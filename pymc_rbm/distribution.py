"""The binary RBM as a PyMC distribution.

The value of :class:`RBM` is the visible vector (integers in {0, 1}, shape
``(..., n_visible)``); the hidden units are summed out, so
``logp(v) = -F(v) - log Z`` with the free energy of
:func:`pymc_rbm.energy.free_energy`.

``log Z`` depends on ``W`` and the biases. How the distribution treats it
is fixed when the variable is made and recorded on the variable
(:func:`~pymc_rbm.random_variable.log_partition_mode`):

``"exact"``
    Enumeration of the smaller layer as a differentiable PyTensor Op
    (:class:`~pymc_rbm.random_variable.LogPartition`), so ``W`` and the biases may be random variables
    (NUTS on the weights of a small-hidden-layer RBM works).
``"estimated"``
    Where the smaller layer is too large to enumerate at every evaluation,
    for constant parameters (or data): an estimate of the estimators'
    ``method="auto"``, made at the first evaluation of the logp and kept
    for these parameter values
    (:class:`~pymc_rbm.random_variable.EstimatedLogPartition`).
``"given"``
    A number or tensor the user supplies (an estimate, e.g. from AIS).
``"omitted"``
    ``log Z`` left out: the logp is unnormalised. Allowed only while the
    parameters are constants, where it changes nothing for sampling.
"""

from __future__ import annotations

import functools
import os
import time
import warnings

import numpy as np
import pymc
import pytensor
import pytensor.tensor as pt
from pymc.distributions.distribution import Discrete, _support_point
from pymc.distributions.shape_utils import rv_size_is_none
from pytensor.graph.basic import Constant, Variable

from pymc_rbm.enumeration import check_enumerable
from pymc_rbm.estimates import LogPartitionEstimate
from pymc_rbm.layers import ReLU
from pymc_rbm.params import RBMParams, ReLURBMParams
from pymc_rbm.random_variable import (  # LogPartition, log_partition_mode, rbm_params_of: importable from here too
    AUTO_ENUMERATION_BITS,
    RBMRV,
    LogPartition,
    ReLURBMRV,
    checked_estimate,
    core_parameters,
    given_log_partition,
    layer_sizes,
    log_partition_mode,
    omitted_log_partition,
    parameter_tensor,
    random_ancestors,
    rbm_params_of,
    set_log_partition_estimator,
)
from pymc_rbm.validation import check_binary, check_positive_int

# RBMRV, LogPartition, log_partition_mode and rbm_params_of are defined (and documented) in
# pymc_rbm.random_variable, which the step methods build on; they stay importable from here.
__all__ = ["RBM"]


#: Where the frames of PyMC and of this package live (skipped by warnings about the user's model).
_INTERNAL_FILES = (os.path.dirname(__file__), *(os.path.dirname(m.__file__) for m in (pymc, pytensor)))


#: ``log_partition="auto"`` of a variable that is not observed (``RBM(name, ...)`` without ``observed``): beyond
#: enumeration its ``log Z`` is left out, a constant of the joint density that no draw depends on.
_AUTO_LATENT = "auto (not observed)"


def _estimate_log_partition(params):
    """``log Z`` of ``params`` by the estimators' ``method="auto"`` (seed 0), with a warning that says what it did:
    the estimator of the mode ``"estimated"`` (:class:`~pymc_rbm.random_variable.EstimatedLogPartition`)."""
    from pymc_rbm.estimators import log_partition

    start = time.perf_counter()
    estimate = log_partition(params, "auto", rng=0)
    if estimate.kind == "exact":  # the estimators enumerate more than a logp evaluated again and again can
        return estimate
    method = estimate.diagnostics.get("auto", {}).get("method", estimate.method)
    warnings.warn(
        f"log_partition='auto': log Z of this RBM ({params.n_visible} visible, {params.n_hidden} hidden units) "
        f"was estimated once for these parameters by pymc_rbm.estimators.log_partition(params, rng=0), which "
        f"chose method={method!r}: {estimate!r} in {time.perf_counter() - start:.1f} s. The logp subtracts it; "
        "pass your own estimate as log_partition= to choose the method, or log_partition=None to leave log Z out",
        UserWarning,
        skip_file_prefixes=_INTERNAL_FILES,
    )
    return estimate


set_log_partition_estimator(_estimate_log_partition)


def _resolve_log_partition(log_partition, W, vbias, hbias, max_bits: int, gamma=None):
    """The log-partition mode, the ``log_z`` input of the RV and the fingerprint its logp checks (or None).

    With ReLU hidden units of precisions ``gamma`` the visible layer is the one enumerated. Beyond
    ``max_bits``, ``"auto"`` estimates ``log Z`` at the first evaluation of the logp (mode ``"estimated"``),
    and :data:`_AUTO_LATENT` leaves it out.
    """
    if isinstance(log_partition, str):
        if log_partition not in ("auto", "exact", _AUTO_LATENT):
            raise ValueError(
                f"log_partition must be 'auto', 'exact', a number or tensor (an estimate of log Z), or None; "
                f"got {log_partition!r}"
            )
        sizes = layer_sizes(W)
        if gamma is not None and sizes is not None:
            sizes_enumerated, what = (sizes[0], sizes[1]), "the visible layer"
        else:
            sizes_enumerated, what = (None if sizes is None else (min(sizes), max(sizes))), "the smaller layer"
        if log_partition == "exact":
            if sizes is not None:  # refused here, before PyTensor tries to fold the enumeration of constants
                check_enumerable(sizes_enumerated[0], max_bits, what, n_other=sizes_enumerated[1])
            return "exact", pt.constant(0.0), None
        if sizes is None:
            raise ValueError(
                "log_partition='auto' needs the layer sizes of W while the model is built, and they are not "
                "known; pass log_partition='exact', a number or tensor (an estimate of log Z), or None"
            )
        n_small = sizes_enumerated[0]
        if n_small <= max_bits:
            return "exact", pt.constant(0.0), None
        random = random_ancestors(W, vbias, hbias)
        if random:
            raise ValueError(
                f"log_partition='auto': the smaller layer has {n_small} units, too many to enumerate "
                f"(limit max_bits={max_bits}), and W or the biases depend on the random variable(s) "
                f"{sorted({str(r) for r in random})}, so log Z cannot be left out. Choose one of: "
                "log_partition='exact' with a larger max_bits (slow), a number or tensor that estimates "
                "log Z (see pymc_rbm.estimators.log_partition), or make the parameters constants."
            )
        if log_partition == "auto":  # observed values, or RBM.dist: log Z is part of their log-likelihood
            return "estimated", pt.constant(0.0), None
        warnings.warn(
            f"log_partition='auto': the smaller layer has {n_small} units, too many to enumerate (limit "
            f"max_bits={max_bits}), and the variable is not observed, so log Z is left out and the logp is "
            "unnormalised (-F(v), off by log Z). Sampling is unaffected (the parameters are constants), but "
            "logp values are not; pass an estimate (log_partition=pymc_rbm.estimators.log_partition(params)) "
            "or log_partition=None to say it is meant",
            UserWarning,
            skip_file_prefixes=_INTERNAL_FILES,  # point at the user's line, through RBM(...)
        )
        return "omitted", pt.constant(0.0), None
    if log_partition is None:
        return (*omitted_log_partition(W, vbias, hbias), None)
    fingerprint = None
    if isinstance(log_partition, LogPartitionEstimate):
        params_type = RBMParams if gamma is None else functools.partial(ReLURBMParams, gamma=np.asarray(gamma))
        fingerprint = checked_estimate(log_partition, params_type, W, vbias, hbias)
        log_partition = log_partition.log_z
    return (*given_log_partition(log_partition), fingerprint)


class RBM(Discrete):
    r"""A binary restricted Boltzmann machine over its visible units.

    .. math::

        \log p(v) = v \cdot b + \sum_j \operatorname{softplus}(c_j + (v W)_j) - \log Z

    with ``b = vbias`` and ``c = hbias``; the hidden units are summed out.

    Parameters
    ----------
    W : tensor_like of float, shape (n_visible, n_hidden)
        Couplings. Constants (anything ``np.asarray`` accepts, including
        arrays of other libraries; NaN and infinite entries are refused),
        data, or random variables.
    vbias : tensor_like of float, shape (n_visible,)
    hbias : tensor_like of float, shape (n_hidden,)
    log_partition : {"auto", "exact"}, float, tensor, LogPartitionEstimate or None
        How ``log Z`` enters the logp:

        - ``"exact"``: enumeration of the smaller layer, differentiable, so the
          parameters may be random variables; refused (with the size) when
          the smaller layer exceeds ``max_bits`` units.
        - a number, tensor or :class:`~pymc_rbm.estimators.LogPartitionEstimate`:
          an estimate the user supplies. A ``LogPartitionEstimate`` computed
          for another model than the parameters (constants, or data at their
          current value) is refused, and so is one for parameters that
          depend on random variables (their ``log Z`` changes with every
          draw). A number or tensor is taken as it is.
        - ``None``: left out. Allowed only while the parameters are constants
          (then it changes nothing for sampling); refused otherwise.
        - ``"auto"`` (default): ``"exact"`` when the smaller layer has at most
          ``max_bits`` units; else, for constant parameters (or data), an
          estimate: the first evaluation of the logp (``pm.logp``,
          ``pm.compute_log_likelihood``, sampling the model's other
          variables) runs :func:`pymc_rbm.estimators.log_partition` with
          ``method="auto"`` and seed 0 once for these parameter values and
          warns with the estimate, its method and its time (up to about two
          minutes on MNIST-sized models); building the model and forward
          draws estimate nothing. A variable that is not observed (``RBM(name,
          ...)`` without ``observed``) has no log-likelihood, and no draw
          depends on its ``log Z``, a constant of the joint density: it is left
          out, with a warning that the logp is unnormalised (``-F(v)``, off by
          ``log Z``). Parameters that depend on random variables are
          refused, with the choices named.
    max_bits : int, default 20
        Largest smaller layer enumerated (for ``log Z`` and exact draws):
        :data:`~pymc_rbm.enumeration.REPEATED_ENUMERATION_BITS`, below
        the estimators' one-off default of 24 because the model enumerates
        at every logp and gradient evaluation. Enumerations that need more
        memory than is available, or more time than
        :data:`~pymc_rbm.enumeration.MAX_ENUMERATION_SECONDS` per
        evaluation, are refused when the model is built.
    gibbs_sweeps : int, default 1000
        Forward draws of RBMs whose layers both exceed ``max_bits`` are made
        by this many block-Gibbs sweeps from a random start, with a warning
        that they are approximate.
    hidden : ReLU, optional
        The hidden layer type: Bernoulli units when omitted;
        ``hidden=ReLU(gamma)`` (:class:`~pymc_rbm.layers.ReLU`, constant
        precisions) gives ReLU hidden units, ``logp(v) = -F(v) - log Z`` with
        the free energy of :class:`~pymc_rbm.params.ReLURBMParams`. Its ``log Z``
        (``"exact"``) and its forward draws enumerate the visible layer (at
        most ``max_bits`` units); ``pm.sample`` draws such a variable of
        constant parameters exactly
        (:class:`~pymc_rbm.step_methods.enumerated.VisibleExactDraws`) where no
        other model term involves it; the binary RBM steps do not take it.

    Notes
    -----
    Parameters that are data (``pm.Data``) with a ``LogPartitionEstimate``:
    the estimate is ``log Z`` of their values when the model is built. After
    ``pm.set_data`` gives them other values it no longer applies; forward
    draws (``pm.sample_posterior_predictive``) are still right, as they do
    not use ``log Z``, but evaluating the logp (``compile_logp``,
    ``pm.compute_log_likelihood``, sampling) raises a ValueError saying so
    instead of giving values off by the change of ``log Z``. To change the
    parameters and ``log Z`` together, pass
    ``log_partition=pm.Data("log_z", float(estimate))`` and set both with
    ``pm.set_data`` (a tensor is not checked), or build the model again with an
    estimate of the new parameters.

    Forward draws (``pm.draw``, ``pm.sample_prior_predictive``) are exact
    when a layer has at most ``max_bits`` units. Observed data must be binary
    with ``n_visible`` units in its last dimension; anything else is refused
    when the model is built. The parameters must be unbatched: a batch of
    independent visible vectors sharing one RBM is ``shape=(K, n_visible)``;
    with observed data, ``shape`` and ``size`` must agree with its shape.

    ``pm.sample()`` chooses the step of an RBM variable by itself: exact
    independent draws (``ExactDraws``) for constant parameters whose smaller
    layer can be enumerated when no other model term involves the variable,
    else ``ReplicaExchange`` for constant parameters (or data), and
    ``FlipTheState`` where the parameters are random variables.

    Missing values: observed data with missing cells (a masked array such as
    ``np.ma.masked_invalid(data)``, or NaN) is imputed by PyMC; only the
    observed cells are checked. Where whole rows are missing, the missing
    rows form an RBM variable ``<name>_unobserved`` that the RBM step methods
    sample. Where single cells are missing, ``<name>_unobserved`` holds the
    missing cells of all rows, and ``pm.sample`` gives it
    :class:`~pymc_rbm.step_methods.ImputedCells` (replica exchange on the RBM
    with the observed cells clamped) where the parameters are constants or
    data and no other model term involves it; otherwise PyMC's
    ``Metropolis``, which is exact (the logp is -inf off {0, 1}) but slow on
    many missing cells.

    Examples
    --------
    >>> import numpy as np, pymc as pm
    >>> from pymc_rbm import RBM, RBMParams
    >>> p = RBMParams.random(6, 3, rng=0)
    >>> with pm.Model():
    ...     v = RBM("v", p.W, p.vbias, p.hbias)
    >>> pm.draw(v, random_seed=1).shape
    (6,)
    """

    rv_type = RBMRV

    @classmethod
    def rv_op(
        cls,
        W,
        vbias,
        hbias,
        log_z,
        *,
        log_partition="exact",
        max_bits=AUTO_ENUMERATION_BITS,
        gibbs_sweeps=1000,
        estimate_fingerprint=None,
        hidden_gamma=None,
        size=None,
        rng=None,
    ):
        if rng is None:
            rng = pt.random.shared_rng(seed=None)
        if hidden_gamma is not None:
            op = ReLURBMRV(log_partition=log_partition, max_bits=max_bits, gamma=hidden_gamma,
                           estimate_fingerprint=estimate_fingerprint)
            return op(W, vbias, hbias, log_z, size=size, rng=rng, return_next_rng=True)[1]
        op = RBMRV(
            log_partition=log_partition,
            max_bits=max_bits,
            gibbs_sweeps=gibbs_sweeps,
            estimate_fingerprint=estimate_fingerprint,
        )
        return op(W, vbias, hbias, log_z, size=size, rng=rng, return_next_rng=True)[1]

    def __new__(cls, name, W, vbias, hbias, *args, observed=None, **kwargs):
        if observed is not None:
            observed = _check_observed(observed, W, kwargs.get("shape"), kwargs.get("size"))
        else:
            mode = kwargs.get("log_partition", "auto")
            if isinstance(mode, str) and mode == "auto":  # not an array: those compare elementwise
                kwargs["log_partition"] = _AUTO_LATENT
        return super().__new__(cls, name, W, vbias, hbias, *args, observed=observed, **kwargs)

    @classmethod
    def dist(
        cls,
        W,
        vbias,
        hbias,
        *,
        log_partition="auto",
        max_bits: int = AUTO_ENUMERATION_BITS,
        gibbs_sweeps: int = 1000,
        hidden=None,
        **kwargs,
    ):
        max_bits = check_positive_int(max_bits, "max_bits")
        gibbs_sweeps = check_positive_int(gibbs_sweeps, "gibbs_sweeps")
        W, vbias, hbias = (parameter_tensor(x, name) for x, name in ((W, "W"), (vbias, "vbias"), (hbias, "hbias")))
        if (W.ndim, vbias.ndim, hbias.ndim) != (2, 1, 1):
            raise ValueError(
                f"W must be a matrix and vbias, hbias vectors; got ndim {W.ndim}, {vbias.ndim}, {hbias.ndim} "
                "(batched parameters are not supported: use shape=(K, n_visible) for K draws of one RBM)"
            )
        _check_static_shapes(W, vbias, hbias)
        _check_shape(kwargs.get("shape"), W)
        gamma = _hidden_gamma(hidden, W)
        mode, log_z, fingerprint = _resolve_log_partition(log_partition, W, vbias, hbias, max_bits, gamma)
        if gamma is not None:
            kwargs["hidden_gamma"] = tuple(gamma.tolist())
        return super().dist(
            [W, vbias, hbias, log_z],
            log_partition=mode,
            max_bits=max_bits,
            gibbs_sweeps=gibbs_sweeps,
            estimate_fingerprint=fingerprint,
            **kwargs,
        )

    def support_point(rv, size, W, vbias, hbias, log_z):
        """One deterministic mean-field pass: ``v = 1[vbias + W·sigmoid(hbias) > 0]``."""
        W, vbias, hbias, log_z = core_parameters(W, vbias, hbias, log_z)
        v = pt.cast(pt.gt(vbias + W @ pt.sigmoid(hbias), 0), "int64")
        if not rv_size_is_none(size):
            v = pt.full((*size, v.shape[-1]), v)
        return v


def _hidden_gamma(hidden, W):
    """The precisions (shape (n_hidden,)) of ReLU hidden units, None for Bernoulli ones, or an error."""
    if hidden is None or (not isinstance(hidden, ReLU) and hidden == RBMParams.hidden):
        return None
    if not isinstance(hidden, ReLU):
        raise TypeError(f"RBM takes hidden=None (Bernoulli units) or hidden=ReLU(gamma), got {hidden!r}")
    n_hidden = W.type.shape[1]
    if n_hidden is None:
        raise ValueError("hidden=ReLU(gamma) needs the number of hidden units (the columns of W) while the model "
                         "is built; pass W as a constant or give pm.Data a static shape")
    return hidden.for_units(n_hidden).gamma


def _relu_support_point(op, rv, rng, size, W, vbias, hbias, log_z):
    return RBM.support_point(rv, size, W, vbias, hbias, log_z)


def _check_static_shapes(W, vbias, hbias) -> None:
    nv, nh = W.type.shape
    if vbias.type.shape[0] is not None and nv is not None and vbias.type.shape[0] != nv:
        raise ValueError(f"vbias has {vbias.type.shape[0]} entries, but W has {nv} rows (n_visible)")
    if hbias.type.shape[0] is not None and nh is not None and hbias.type.shape[0] != nh:
        raise ValueError(f"hbias has {hbias.type.shape[0]} entries, but W has {nh} columns (n_hidden)")


def _check_shape(shape, W) -> None:
    """Refuse a ``shape`` whose last entry is not ``n_visible`` (PyMC would silently draw ``n_visible`` units)."""
    if shape is None or isinstance(shape, Variable):
        return
    shape = tuple(shape) if np.ndim(shape) else (shape,)
    n_visible = W.type.shape[0]
    last = shape[-1] if shape else None
    if n_visible is not None and isinstance(last, (int, np.integer)) and int(last) != n_visible:
        raise ValueError(
            f"shape {shape} must end with n_visible = {n_visible} (the units of one draw); for K independent "
            f"draws of the RBM use shape=(K, {n_visible})"
        )


def _check_observed(observed, W, shape=None, size=None):
    """``observed``, checked: binary, ``n_visible`` units, and the shape that ``shape``/``size`` give.

    Missing cells (masked, or NaN) are not read; PyMC imputes them. Data
    with missing cells is returned as a new masked array with 0 under the
    mask (PyMC would otherwise cast the NaN there to an integer, with a
    warning); anything else is returned as it is.
    """
    value = observed
    if hasattr(value, "get_value"):  # pm.Data / shared variable
        value = value.get_value()
    elif isinstance(value, Constant):
        value = value.data
    elif hasattr(value, "owner"):  # a symbolic graph: cannot be checked now
        return observed
    if np.ma.isMaskedArray(value) or np.asarray(value).dtype.kind == "f":
        masked = np.ma.masked_invalid(value)
        value = masked.filled(0)
        if masked.mask.any() and value is not observed:
            observed = np.ma.array(value, mask=np.ma.getmaskarray(masked))
    n_visible = pt.as_tensor_variable(W).type.shape[0]
    data_shape = check_binary(value, n_visible, name="observed data of the RBM").shape
    for what, given, expected in (("shape", shape, data_shape), ("size", size, data_shape[:-1])):
        if given is None or isinstance(given, Variable):
            continue
        given = tuple(given) if np.ndim(given) else (given,)
        if all(isinstance(g, (int, np.integer)) for g in given) and tuple(map(int, given)) != expected:
            raise ValueError(
                f"{what}={given} disagrees with the observed data of shape {data_shape} (which would need "
                f"{what}={expected}): the logp would cover the data's rows while draws had another number; "
                f"leave {what} out (it is taken from the data) or make them agree"
            )
    return observed


# Register the RBM step methods with pm.sample, which then chooses one for RBM variables by itself (RBM's Notes).
# They build on pymc_rbm.random_variable, below this module.


# The RV of ReLU hidden units is not an RBMRV (the binary step methods do not take it): its support point and
# its step method are registered here.
_support_point.register(ReLURBMRV)(_relu_support_point)
RBM.register(ReLURBMRV)

# Register the RBM step methods with pm.sample, which then chooses one for RBM variables by itself (RBM's Notes).
# They build on pymc_rbm.random_variable, below this module.
import pymc_rbm.step_methods  # noqa: E402, F401
from pymc_rbm.step_methods.enumerated import register_visible_exact_draws  # noqa: E402

register_visible_exact_draws()

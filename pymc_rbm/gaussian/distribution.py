"""The Gaussian-Bernoulli RBM as a PyMC distribution: :class:`GaussianRBM`.

Its value is the vector of real visible units, the hidden units summed out:
``logp(v) = -F(v) - log Z``, a PyTensor graph
(:mod:`pymc_rbm.gaussian.random_variable`), so NUTS (which ``pm.sample``
uses for continuous values by default) and random parameters get exact
gradients. Importing this module imports :mod:`pymc_rbm.step_methods`, which
registers the step methods (those of :mod:`pymc_rbm.step_methods.gaussian`
among them) with ``pm.sample``.
"""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
from pymc.distributions.distribution import Continuous
from pymc.distributions.shape_utils import rv_size_is_none
from pytensor.graph.basic import Constant, Variable

from pymc_rbm.gaussian.exact import MAX_HIDDEN_ENUMERATED
from pymc_rbm.estimates import LogPartitionEstimate
from pymc_rbm.gaussian.params import GaussianRBMParams, core_parameters
from pymc_rbm.gaussian.random_variable import GaussianRBMRV
from pymc_rbm.random_variable import current_values, given_log_partition, random_ancestors
from pymc_rbm.validation import check_float_array

__all__ = ["GaussianRBM"]


def _as_parameter(value, name):
    if isinstance(value, Constant):
        check_float_array(value.data, name)
    if isinstance(value, Variable):
        return pt.as_tensor_variable(value, dtype="float64")
    return pt.as_tensor_variable(check_float_array(value, name), dtype="float64")


class GaussianRBM(Continuous):
    r"""A Gaussian-Bernoulli RBM over its real visible units, the hidden units summed out.

    .. math::

        \log p(v) = -\sum_i \frac{(v_i - b_i)^2}{2\sigma_i^2}
            + \sum_j \operatorname{softplus}\Big(c_j + \sum_i \frac{v_i}{\sigma_i} W_{ij}\Big) - \log Z

    a mixture of ``2**n_hidden`` Gaussians (:mod:`pymc_rbm.gaussian`).

    Parameters
    ----------
    W : tensor_like of float, shape (n_visible, n_hidden)
    vbias : tensor_like of float, shape (n_visible,)
    hbias : tensor_like of float, shape (n_hidden,)
    sigma : tensor_like of float, shape (n_visible,), default ones
    log_partition : {"exact"}, float, tensor, LogPartitionEstimate or None, default "exact"
        ``"exact"`` (the hidden layer enumerated in the graph, so the
        parameters may be random variables and gradients are exact;
        needs a static ``n_hidden`` of at most ``max_hidden``), an
        estimate (a finite real scalar; a
        :class:`~pymc_rbm.estimators.LogPartitionEstimate` computed for
        another model than the parameters, constants or data at their
        current value, is refused, and so is one for random parameters), or
        None (left out: constant parameters only).
    max_hidden : int, default 16

    Notes
    -----
    The value is continuous: ``pm.sample()`` samples it by
    :class:`~pymc_rbm.step_methods.gaussian.GaussianReplicaExchange` where the
    parameters are constants and the other terms of ``v``, if any, are one per
    unit, else with NUTS on ``-F(v)``; its forward draws are exact (the mixture).
    Observed data must be real with ``n_visible`` units in its last axis;
    missing cells (NaN, or masked) are imputed by PyMC.

    Examples
    --------
    >>> import pymc as pm
    >>> from pymc_rbm.gaussian import GaussianRBMParams, GaussianRBM
    >>> p = GaussianRBMParams.random(3, 2, rng=0)
    >>> with pm.Model():
    ...     v = GaussianRBM("v", p.W, p.vbias, p.hbias, p.sigma)
    >>> pm.draw(v, random_seed=1).shape
    (3,)
    """

    rv_type = GaussianRBMRV

    def __new__(cls, name, W, *args, observed=None, **kwargs):
        if observed is not None:
            _check_observed(observed, W)
        return super().__new__(cls, name, W, *args, observed=observed, **kwargs)

    @classmethod
    def rv_op(cls, W, vbias, hbias, sigma, log_z, *, log_partition="exact", max_hidden=MAX_HIDDEN_ENUMERATED,
              size=None, rng=None):
        if rng is None:
            rng = pt.random.shared_rng(seed=None)
        op = GaussianRBMRV(log_partition=log_partition, max_hidden=max_hidden)
        return op(W, vbias, hbias, sigma, log_z, size=size, rng=rng, return_next_rng=True)[1]

    @classmethod
    def dist(cls, W, vbias, hbias, sigma=None, *, log_partition="exact", max_hidden: int = MAX_HIDDEN_ENUMERATED,
             **kwargs):
        W = _as_parameter(W, "W")
        vbias, hbias = _as_parameter(vbias, "vbias"), _as_parameter(hbias, "hbias")
        sigma = pt.ones_like(vbias) if sigma is None else _as_parameter(sigma, "sigma")
        if isinstance(sigma, Constant) and not np.all(sigma.data > 0):
            raise ValueError("sigma must be > 0 (standard deviations of the visible units)")
        if (W.ndim, vbias.ndim, hbias.ndim, sigma.ndim) != (2, 1, 1, 1):
            raise ValueError(
                "W must be a matrix and vbias, hbias, sigma vectors (batched parameters are not supported)"
            )
        nv, nh = W.type.shape
        for name, x, want in (("vbias", vbias, nv), ("hbias", hbias, nh), ("sigma", sigma, nv)):
            if x.type.shape[0] is not None and want is not None and x.type.shape[0] != want:
                raise ValueError(f"{name} has {x.type.shape[0]} entries, W of shape {W.type.shape} needs {want}")
        if isinstance(log_partition, str):
            if log_partition != "exact":
                raise ValueError(
                    f"log_partition must be 'exact', a number or tensor, or None; got {log_partition!r}"
                )
            if nh is None:
                raise ValueError("log_partition='exact' needs the number of hidden units in W's static shape")
            if nh > max_hidden:
                raise ValueError(
                    f"log_partition='exact' enumerates 2**{nh} hidden states, more than 2**{max_hidden}: raise "
                    "max_hidden or pass an estimate of log Z"
                )
            mode, log_z = "exact", pt.constant(0.0)
        elif log_partition is None:
            if random_ancestors(W, vbias, hbias, sigma):
                raise ValueError("log_partition=None is only correct while the parameters are constants")
            mode, log_z = "omitted", pt.constant(0.0)
        else:
            if isinstance(log_partition, LogPartitionEstimate):
                log_partition = _checked_estimate(log_partition, W, vbias, hbias, sigma)
            mode, log_z = given_log_partition(log_partition)
        return super().dist([W, vbias, hbias, sigma, log_z], log_partition=mode, max_hidden=max_hidden, **kwargs)

    def support_point(rv, size, W, vbias, hbias, sigma, log_z):
        """``vbias + σ ∘ (W sigmoid(hbias))``: the mean given the hidden layer's prior means."""
        W, vbias, hbias, sigma = core_parameters(W, vbias, hbias, sigma)
        v = vbias + sigma * (W @ pt.sigmoid(hbias))
        if not rv_size_is_none(size):
            v = pt.full((*size, v.shape[-1]), v)
        return v


def _checked_estimate(estimate, W, vbias, hbias, sigma) -> float:
    """``estimate.log_z``, after refusing an estimate of another model than the parameters (constants, or data at
    their current value) and one for parameters that depend on random variables (their ``log Z`` changes with them)."""
    random = random_ancestors(W, vbias, hbias, sigma)
    if random:
        raise ValueError(
            f"log_partition={estimate!r} is log Z of one fixed model, but the parameters depend on the random "
            f"variable(s) {sorted({str(r) for r in random})}, so log Z changes with them; use log_partition='exact' "
            "or a tensor that computes log Z of the parameters"
        )
    values = current_values(W, vbias, hbias, sigma)
    if values is not None:
        estimate.check_model(GaussianRBMParams(*values))
    return estimate.log_z


def _check_observed(observed, W) -> None:
    """Refuse observed data that is not real numbers with ``n_visible`` units in its last axis, where its values are
    known now (arrays, constants and data; a symbolic graph is left to PyMC). NaN and masked cells are missing
    values, which PyMC imputes; infinite ones are refused."""
    value = observed
    if hasattr(value, "get_value"):  # pm.Data / shared variable
        value = value.get_value()
    elif isinstance(value, Constant):
        value = value.data
    elif hasattr(value, "owner"):
        return
    name = "observed data of the GaussianRBM"
    data = check_float_array(np.ma.getdata(value), name, finite=False)
    n_visible = _as_parameter(W, "W").type.shape[0]
    if data.ndim == 0 or (n_visible is not None and data.shape[-1] != n_visible):
        raise ValueError(
            f"{name} has shape {data.shape}, but each row must hold the n_visible = {n_visible} units of W: pass "
            f"an array of shape (n_rows, {n_visible}) (or ({n_visible},) for one row)"
        )
    missing = np.isnan(data) | np.ma.getmaskarray(value)
    if missing.all():
        raise ValueError(f"every cell of the {name} is missing (masked or NaN): leave observed out for a free variable")
    infinite = np.isinf(data) & ~missing
    if infinite.any():
        raise ValueError(
            f"{name} contains {int(infinite.sum())} infinite value(s); mark missing values as NaN (or mask them)"
        )


# Register the step methods with pm.sample, which then picks the Gaussian steps for GaussianRBM variables by itself
# (they live in pymc_rbm.step_methods.gaussian and build on pymc_rbm.gaussian.params and .random_variable, below this
# module).
import pymc_rbm.step_methods  # noqa: E402, F401

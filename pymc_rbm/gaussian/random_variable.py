"""The random variable of :class:`~pymc_rbm.gaussian.distribution.GaussianRBM` and its log-probability.

:class:`GaussianRBMRV` draws exactly (the hidden layer enumerated,
:func:`~pymc_rbm.gaussian.exact.sample_exact`); the log-probability
``-F(v) - log Z``, ``log Z`` the log-sum-exp over a constant table of the
hidden states inside the graph (so gradients with respect to ``v`` and the
parameters come from PyTensor), is registered with PyMC's ``logp``. The step
methods read their variables through :func:`is_gaussian_rbm_variable` and
:func:`gaussian_params_of`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytensor.tensor as pt
from pymc.distributions.dist_math import check_parameters
from pymc.logprob.abstract import _logprob
from pytensor.tensor.random.op import RandomVariable

from pymc_rbm.gaussian.exact import MAX_HIDDEN_ENUMERATED, sample_exact
from pymc_rbm.gaussian.params import GaussianRBMParams, core_parameters, free_energy
from pymc_rbm.layers import BERNOULLI

__all__ = ["GaussianRBMRV", "gaussian_params_of", "is_gaussian_rbm_variable"]


class _Tensors(NamedTuple):
    """The parameters as tensors, under the attribute names the energies read."""

    W: object
    vbias: object
    hbias: object
    sigma: object


class GaussianRBMRV(RandomVariable):
    """Exact draws of the visible layer of a Gaussian-Bernoulli RBM (the hidden layer enumerated)."""

    name = "gaussian_rbm"
    signature = "(v,h),(v),(h),(v),()->(v)"
    dtype = "floatX"
    _print_name = ("GaussianRBM", "\\operatorname{GaussianRBM}")
    __props__ = RandomVariable.__props__ + ("log_partition", "max_hidden")

    def __init__(self, *args, log_partition="exact", max_hidden=MAX_HIDDEN_ENUMERATED, **kwargs):
        self.log_partition = log_partition
        self.max_hidden = int(max_hidden)
        super().__init__(*args, **kwargs)

    def rng_fn(self, rng, W, vbias, hbias, sigma, log_z, size):
        size = () if size is None else tuple(size)
        params = GaussianRBMParams(*core_parameters(W, vbias, hbias, sigma))
        return sample_exact(params, size, rng, max_hidden=self.max_hidden)


def _symbolic_log_z(W, vbias, hbias, sigma, n_hidden):
    """``log Z`` as a PyTensor graph: the log-sum-exp over a constant table of the hidden states."""
    Hs = pt.constant(BERNOULLI.states(n_hidden))
    m = Hs @ W.T
    lw = Hs @ hbias + m @ (vbias / sigma) + 0.5 * (m**2).sum(axis=-1)
    return pt.logsumexp(lw) + pt.log(np.sqrt(2 * np.pi) * sigma).sum()


@_logprob.register(GaussianRBMRV)
def _gaussian_rbm_logp(op, values, rng, size, W, vbias, hbias, sigma, log_z, **kwargs):
    [value] = values
    W, vbias, hbias, sigma = core_parameters(W, vbias, hbias, sigma)
    log_z = log_z[(0,) * log_z.ndim] if log_z.ndim else log_z
    logp = -free_energy(value, _Tensors(W, vbias, hbias, sigma))
    if op.log_partition == "exact":
        logp = logp - _symbolic_log_z(W, vbias, hbias, sigma, W.type.shape[1])
    elif op.log_partition == "given":
        logp = logp - log_z
    return check_parameters(
        logp, pt.all(pt.isfinite(W)), pt.all(pt.isfinite(vbias)), pt.all(pt.isfinite(hbias)), pt.all(sigma > 0),
        msg="W, vbias, hbias must be finite and sigma > 0",
    )


def is_gaussian_rbm_variable(var) -> bool:
    """Whether ``var`` is a random variable of :class:`~pymc_rbm.gaussian.distribution.GaussianRBM`."""
    op = getattr(getattr(var, "owner", None), "op", None)
    return op is not None and isinstance(op, GaussianRBMRV)


def gaussian_params_of(rv) -> tuple:
    """The symbolic ``(W, vbias, hbias, sigma)`` of a :class:`~pymc_rbm.gaussian.distribution.GaussianRBM` variable."""
    W, vbias, hbias, sigma, _ = rv.owner.op.dist_params(rv.owner)
    return W, vbias, hbias, sigma

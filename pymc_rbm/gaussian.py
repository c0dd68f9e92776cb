"""Gaussian-Bernoulli RBMs: real visible units, Bernoulli hidden units.

The energy (Hinton & Salakhutdinov 2006; Cho, Ilin & Raiko 2011 discuss its forms) is

    E(v, h) = Σ_i (v_i - vbias_i)² / (2 σ_i²) - hbias·h - Σ_ij (v_i / σ_i) W_ij h_j,

with ``W`` of shape ``(n_visible, n_hidden)``, ``vbias`` and ``sigma`` of shape
``(n_visible,)`` and ``hbias`` ``(n_hidden,)``. Given ``h`` the visible units are
independent normals, ``v_i | h ~ N(vbias_i + σ_i (W h)_i, σ_i²)``
(:class:`~pymc_rbm.layers.Gaussian`); given ``v`` the hidden units are Bernoulli
with input ``hbias + (v / σ)·W``. Summing ``h`` out gives the free energy

    F(v) = Σ_i (v_i - vbias_i)² / (2 σ_i²) - Σ_j softplus(hbias_j + Σ_i (v_i / σ_i) W_ij),

and integrating ``v`` out gives the marginal of the hidden layer: with
``m = W h``,

    p(h) ∝ exp(hbias·h + (vbias / σ)·m + ‖m‖² / 2),
    log Z = logsumexp_h [hbias·h + (vbias / σ)·m + ‖m‖² / 2] + Σ_i log(√(2π) σ_i),

so ``p(v) = Σ_h p(h) N(v; vbias + σ ∘ W h, diag σ²)`` is a mixture of
``2**n_hidden`` Gaussians, exact wherever the hidden layer can be enumerated.
The exact mean is ``E[v] = vbias + σ ∘ (W E[h])``.

This module is NumPy only, except :class:`GaussianRBM` (the PyMC
distribution, loaded on first use of the name): its logp ``-F(v) - log Z`` is
a PyTensor graph, ``log Z`` written as the log-sum-exp above over a constant
table of the hidden states, so gradients with respect to ``v`` (NUTS, which
``pm.sample`` uses for continuous values by default) and to the parameters
come from PyTensor itself.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np

from pymc_rbm.estimators.exact import EnumerationTooLarge
from pymc_rbm.layers import BERNOULLI, Gaussian, Layer
from pymc_rbm.params import StoredArrays
from pymc_rbm.primitives import softplus
from pymc_rbm.validation import check_float_array, check_real

__all__ = [
    "MAX_HIDDEN_ENUMERATED",
    "GaussianAtBeta",
    "GaussianRBMParams",
    "core_parameters",
    "energy",
    "free_energy",
    "gaussian_at_beta",
    "gaussian_params_of",
    "hidden_input",
    "hidden_marginal",
    "is_gaussian_rbm_variable",
    "log_partition_exact",
    "log_prob_exact",
    "mean_exact",
    "sample_exact",
    "visible_mean",
]

#: Largest hidden layer whose ``2**n_hidden`` states are enumerated by default (for ``log Z``, the mixture and
#: exact draws; the distribution's logp enumerates them at every evaluation, inside the graph).
MAX_HIDDEN_ENUMERATED = 16

#: Hidden states handled at once by the NumPy enumeration (bounds the memory to ~ this x n_visible floats).
_BLOCK = 4096


def __getattr__(name):
    if name == "GaussianRBM":
        return _pymc_layer()["GaussianRBM"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True, eq=False)
class GaussianRBMParams(StoredArrays):
    """Parameters of a Gaussian-Bernoulli RBM (module docstring for the energy).

    Parameters
    ----------
    W : array_like of shape (n_visible, n_hidden)
    vbias : array_like of shape (n_visible,)
        Means of the visible units when no hidden unit is on.
    hbias : array_like of shape (n_hidden,)
    sigma : array_like of shape (n_visible,), default ones
        Standard deviations of the visible units, > 0.
    dtype : numpy floating dtype, default float64

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm.gaussian import GaussianRBMParams
    >>> p = GaussianRBMParams(np.zeros((3, 2)), np.zeros(3), np.zeros(2))
    >>> p.n_visible, p.n_hidden, p.sigma.tolist()
    (3, 2, [1.0, 1.0, 1.0])
    """

    FINGERPRINT_TAG: ClassVar[bytes] = b"gaussian"
    ARRAY_NAMES: ClassVar[tuple[str, ...]] = ("W", "vbias", "hbias", "sigma")
    W: np.ndarray
    vbias: np.ndarray
    hbias: np.ndarray
    sigma: np.ndarray

    def __init__(self, W, vbias, hbias, sigma=None, *, dtype=np.float64):
        W = check_float_array(W, "W", 2, dtype=dtype, readonly=True)
        vbias = check_float_array(vbias, "vbias", 1, dtype=dtype, readonly=True)
        hbias = check_float_array(hbias, "hbias", 1, dtype=dtype, readonly=True)
        sigma = check_float_array(np.ones(W.shape[0]) if sigma is None else sigma, "sigma", 1, dtype=dtype,
                                  readonly=True)
        n, H = W.shape
        if n == 0 or H == 0:
            raise ValueError(f"W must have at least one visible and one hidden unit, got shape {W.shape}")
        for name, a, want in (("vbias", vbias, n), ("hbias", hbias, H), ("sigma", sigma, n)):
            if a.shape != (want,):
                raise ValueError(f"{name} has shape {a.shape}, but W of shape {W.shape} needs ({want},)")
        if not np.all(sigma > 0):
            raise ValueError("sigma must be > 0 (standard deviations of the visible units)")
        for key, value in (("W", W), ("vbias", vbias), ("hbias", hbias), ("sigma", sigma)):
            object.__setattr__(self, key, value)

    @property
    def n_visible(self) -> int:
        return self.W.shape[0]

    @property
    def n_hidden(self) -> int:
        return self.W.shape[1]

    @property
    def visible(self) -> Gaussian:
        """The visible layer type: :class:`~pymc_rbm.layers.Gaussian` units of standard deviations ``sigma``."""
        return Gaussian(self.sigma)

    @property
    def hidden(self) -> Layer:
        return BERNOULLI

    def __repr__(self) -> str:
        return f"GaussianRBMParams(n_visible={self.n_visible}, n_hidden={self.n_hidden}, dtype={self.W.dtype})"

    @classmethod
    def random(cls, n_visible: int, n_hidden: int, *, scale: float = 1.0, rng=None) -> GaussianRBMParams:
        """Weights and biases uniform on ``[-scale, scale]``, sigma uniform on [0.5, 1.5] (stochastic)."""
        scale = check_real(scale, "scale", 0.0)
        rng = np.random.default_rng(rng)
        return cls(rng.uniform(-scale, scale, (n_visible, n_hidden)), rng.uniform(-scale, scale, n_visible),
                   rng.uniform(-scale, scale, n_hidden), rng.uniform(0.5, 1.5, n_visible))

# ----------------------------------------------------------------------------- energies
def hidden_input(v, params):
    """``hbias + (v / σ)·W``, shape (..., n_hidden) (NumPy or PyTensor)."""
    return params.hbias + (v / params.sigma) @ params.W


def visible_mean(h, params):
    """``E[v | h] = vbias + σ ∘ (W h)``, shape (..., n_visible)."""
    return params.vbias + params.sigma * (h @ params.W.T)


def energy(v, h, params):
    """``E(v, h)``, shape (...) (module docstring)."""
    return (((v - params.vbias) / params.sigma) ** 2 / 2).sum(axis=-1) - h @ params.hbias - (
        ((v / params.sigma) @ params.W) * h
    ).sum(axis=-1)


def free_energy(v, params):
    """``F(v) = Σ_i (v_i - vbias_i)² / (2σ_i²) - Σ_j softplus(hbias_j + Σ_i (v_i / σ_i) W_ij)`` (NumPy, PyTensor).

    Parameters
    ----------
    v : array of shape (..., n_visible)
    params : GaussianRBMParams or tensors with its attribute names

    Returns
    -------
    array of shape (...)
    """
    return (((v - params.vbias) / params.sigma) ** 2 / 2).sum(axis=-1) - softplus(hidden_input(v, params)).sum(axis=-1)


# ----------------------------------------------------------------------------- the sweep target
class GaussianAtBeta(NamedTuple):
    """A Gaussian-Bernoulli RBM at inverse temperature β > 0, ``exp(-β E(v, h))``: a target of
    :func:`pymc_rbm.kernels.sweep.sweep`.

    Given ``h`` the visible units are ``N(vbias + σ ∘ W h, σ² / β)``; given
    ``v`` the hidden units are Bernoulli with logits
    ``β (hbias + (v / σ)·W)``. The visible fields are
    ``β (vbias / σ² + (W h) / σ)`` for a :class:`~pymc_rbm.layers.Gaussian`
    layer of standard deviations ``σ / √β`` (one row per chain where β is).
    The v-marginal of ``exp(-β E)`` is proper for every β > 0 (the quadratic
    term keeps its sign); β = 0 is not, and is refused. Build it with
    :func:`gaussian_at_beta`, which validates β.

    A ``tilt`` ``(a, b)``, arrays of shape (m, n_visible) with ``a <= 0``,
    multiplies the visible conditionals of the first ``m`` chains (every
    chain where β is shared) by ``exp(Σ_i a_i v_i² + b_i v_i)``, per-unit
    evidence of a Gaussian form: their fields gain ``b`` and their
    precisions ``-2a``.

    Attributes
    ----------
    params : GaussianRBMParams
    beta : None, float or ndarray of shape (n_chains, 1)
        As :func:`~pymc_rbm.kernels.state.check_beta` returns it (None: β = 1).
    tilt : None or tuple of two ndarrays of shape (m, n_visible)
    """

    params: GaussianRBMParams
    beta: object = None
    tilt: object = None

    @property
    def visible_layer(self) -> Gaussian:
        """Gaussian units of standard deviations ``σ`` (β = 1), else ``σ / √β``, per chain where β or a tilt is."""
        if self.beta is None and self.tilt is None:
            return self.params.visible
        sd = self.params.sigma if self.beta is None else self.params.sigma / np.sqrt(self.beta)
        if self.tilt is not None:
            a = self.tilt[0]
            rows = a.shape[0] if np.ndim(self.beta) == 0 else max(a.shape[0], np.shape(self.beta)[0])
            precision = np.array(np.broadcast_to(sd**-2.0, (rows, a.shape[1])))
            precision[: a.shape[0]] -= 2.0 * a
            sd = precision**-0.5
        return _ChainGaussian(sd)

    @property
    def hidden_layer(self) -> Layer:
        return BERNOULLI

    @property
    def W(self) -> np.ndarray:
        """``W / σ`` (rows scaled): the rows that update the carried hidden input ``hbias + v·(W / σ)``."""
        return self.params.W / self.params.sigma[:, None]

    def hidden_input(self, v):
        return hidden_input(v, self.params)

    def hidden_logits(self, a):
        """``β a`` (``a`` itself at β = 1)."""
        return a if self.beta is None else a * self.beta

    def visible_logits(self, h):
        """``β (vbias / σ² + (W h) / σ)`` plus the tilt's ``b`` on its rows, shape (n_chains, n_visible)."""
        p = self.params
        f = p.vbias / p.sigma**2 + (h @ p.W.T) / p.sigma
        if self.beta is not None:
            f = f * self.beta
        if self.tilt is not None:
            f[: self.tilt[1].shape[0]] += self.tilt[1]
        return f


def gaussian_at_beta(params: GaussianRBMParams, beta=None, n_chains: int = 1) -> GaussianAtBeta:
    """The target ``params`` at ``beta`` (None, a scalar or one value per chain of ``n_chains``), validated.

    Raises
    ------
    ValueError
        For β <= 0 (the v-marginal of ``exp(-β E)`` is improper at β = 0), a
        non-finite β or a wrong shape.
    """
    from pymc_rbm.kernels.state import check_beta

    beta = check_beta(beta, n_chains)
    if beta is not None and not np.all(np.asarray(beta) > 0):
        raise ValueError("a Gaussian RBM is tempered at beta > 0 only (at beta = 0 its v-marginal is improper)")
    return GaussianAtBeta(params, beta)


class _ChainGaussian(Gaussian):
    """:class:`~pymc_rbm.layers.Gaussian` units whose standard deviations may differ per chain, (n_chains, n)."""

    def __init__(self, sigma):
        sigma = np.array(sigma, dtype=np.float64, copy=True)
        if sigma.size == 0 or not np.all(np.isfinite(sigma)) or not np.all(sigma > 0):
            raise ValueError("a Gaussian layer needs finite standard deviations sigma > 0")
        sigma.setflags(write=False)
        self.sigma = sigma


# ----------------------------------------------------------------------------- exact enumeration of h
def _check_hidden(params, max_hidden):
    if params.n_hidden > max_hidden:
        raise EnumerationTooLarge(
            f"the mixture of a Gaussian RBM has 2**{params.n_hidden} components, more than the limit of "
            f"2**{max_hidden} (raise max_hidden if you have the time and memory)"
        )


def _hidden_log_weights(params, max_hidden):
    """All hidden states (2**H, H) and their log weights ``hbias·h + (vbias/σ)·Wh + |Wh|²/2``, in blocks."""
    _check_hidden(params, max_hidden)
    Hs = BERNOULLI.states(params.n_hidden)
    lw = np.empty(len(Hs))
    for start in range(0, len(Hs), _BLOCK):
        block = Hs[start : start + _BLOCK]
        m = block @ params.W.T  # (B, n): W h
        lw[start : start + _BLOCK] = block @ params.hbias + m @ (params.vbias / params.sigma) + 0.5 * (m**2).sum(-1)
    return Hs, lw


def _lse(x):
    mx = float(np.max(x))
    return mx + float(np.log(np.exp(x - mx).sum()))


def log_partition_exact(params: GaussianRBMParams, *, max_hidden: int = MAX_HIDDEN_ENUMERATED) -> float:
    """``log Z`` by enumerating the hidden layer (the Gaussian integral done in closed form; module docstring)."""
    _, lw = _hidden_log_weights(params, max_hidden)
    return _lse(lw) + float(np.log(np.sqrt(2 * np.pi) * params.sigma).sum())


def hidden_marginal(params: GaussianRBMParams, *, max_hidden: int = MAX_HIDDEN_ENUMERATED):
    """The mixture: hidden states (2**H, H) and their probabilities ``p(h)`` (2**H,)."""
    Hs, lw = _hidden_log_weights(params, max_hidden)
    return Hs, np.exp(lw - _lse(lw))


def log_prob_exact(v, params: GaussianRBMParams, *, max_hidden: int = MAX_HIDDEN_ENUMERATED):
    """``log p(v) = -F(v) - log Z``, shape (...)."""
    v = params.visible.check(v, params.n_visible)
    return -free_energy(v, params) - log_partition_exact(params, max_hidden=max_hidden)


def mean_exact(params: GaussianRBMParams, *, max_hidden: int = MAX_HIDDEN_ENUMERATED) -> np.ndarray:
    """``E[v] = vbias + σ ∘ (W E[h])``, shape (n_visible,)."""
    Hs, p = hidden_marginal(params, max_hidden=max_hidden)
    return visible_mean(p @ Hs, params)


def sample_exact(params: GaussianRBMParams, size=(), rng=None, *, max_hidden: int = MAX_HIDDEN_ENUMERATED):
    """Independent exact draws of ``v``: ``h`` from its marginal, then ``v ~ N(vbias + σ W h, σ²)`` (stochastic)."""
    rng = np.random.default_rng(rng)
    size = (size,) if np.ndim(size) == 0 else tuple(size)
    m = int(np.prod(size, dtype=np.int64))
    Hs, p = hidden_marginal(params, max_hidden=max_hidden)
    h = Hs[rng.choice(len(p), size=m, p=p / p.sum())]
    v = visible_mean(h, params) + params.sigma * rng.standard_normal((m, params.n_visible))
    return v.reshape(size + (params.n_visible,))


def is_gaussian_rbm_variable(var) -> bool:
    """Whether ``var`` is a random variable of the :class:`GaussianRBM` distribution (loads PyMC)."""
    op = getattr(getattr(var, "owner", None), "op", None)
    return op is not None and isinstance(op, _pymc_layer()["GaussianRBMRV"])


def core_parameters(W, vbias, hbias, sigma) -> list:
    """The parameters without the leading batch axes PyTensor adds to a batched variable's (NumPy or PyTensor)."""
    return [x[(0,) * (x.ndim - nd)] if x.ndim > nd else x for x, nd in ((W, 2), (vbias, 1), (hbias, 1), (sigma, 1))]


def gaussian_params_of(rv) -> tuple:
    """The symbolic ``(W, vbias, hbias, sigma)`` of a :class:`GaussianRBM` variable."""
    W, vbias, hbias, sigma, _ = rv.owner.op.dist_params(rv.owner)
    return W, vbias, hbias, sigma


# ----------------------------------------------------------------------------- the PyMC distribution
@functools.cache
def _pymc_layer() -> dict:
    """Build the PyMC distribution on first use (this module stays importable without PyMC)."""
    import pytensor.tensor as pt
    from pymc.distributions.dist_math import check_parameters
    from pymc.distributions.distribution import Continuous
    from pymc.distributions.shape_utils import rv_size_is_none
    from pymc.logprob.abstract import _logprob
    from pytensor.graph.basic import Constant, Variable
    from pytensor.tensor.random.op import RandomVariable

    from pymc_rbm.random_variable import random_ancestors

    class _Tensors(NamedTuple):
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
            return sample_exact(GaussianRBMParams(*core_parameters(W, vbias, hbias, sigma)), size, rng, max_hidden=self.max_hidden)

    def symbolic_log_z(W, vbias, hbias, sigma, n_hidden):
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
            logp = logp - symbolic_log_z(W, vbias, hbias, sigma, W.type.shape[1])
        elif op.log_partition == "given":
            logp = logp - log_z
        return check_parameters(
            logp, pt.all(pt.isfinite(W)), pt.all(pt.isfinite(vbias)), pt.all(pt.isfinite(hbias)), pt.all(sigma > 0),
            msg="W, vbias, hbias must be finite and sigma > 0",
        )

    def as_parameter(value, name):
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
        log_partition : {"exact"}, float, tensor or None, default "exact"
            ``"exact"`` (the hidden layer enumerated in the graph, so the
            parameters may be random variables and gradients are exact;
            needs a static ``n_hidden`` of at most ``max_hidden``), an
            estimate, or None (left out: constant parameters only).
        max_hidden : int, default 16

        Notes
        -----
        The value is continuous, so ``pm.sample()`` samples it with NUTS on
        ``-F(v)``; its forward draws are exact (the mixture).

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
            W = as_parameter(W, "W")
            vbias, hbias = as_parameter(vbias, "vbias"), as_parameter(hbias, "hbias")
            sigma = pt.ones_like(vbias) if sigma is None else as_parameter(sigma, "sigma")
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
                mode, log_z = "given", pt.as_tensor_variable(log_partition, dtype="float64")
            return super().dist([W, vbias, hbias, sigma, log_z], log_partition=mode, max_hidden=max_hidden, **kwargs)

        def support_point(rv, size, W, vbias, hbias, sigma, log_z):
            """``vbias + σ ∘ (W sigmoid(hbias))``: the mean given the hidden layer's prior means."""
            W, vbias, hbias, sigma = core_parameters(W, vbias, hbias, sigma)
            v = vbias + sigma * (W @ pt.sigmoid(hbias))
            if not rv_size_is_none(size):
                v = pt.full((*size, v.shape[-1]), v)
            return v

    # Register the Gaussian step methods with pm.sample (they find GaussianRBM variables through this module).
    from pymc_rbm.step_methods.gaussian import register

    register()

    return {"GaussianRBM": GaussianRBM, "GaussianRBMRV": GaussianRBMRV}

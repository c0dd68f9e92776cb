"""The parameters of a Gaussian-Bernoulli RBM, its energies, and the target of the sweep engine.

NumPy only; the energies take NumPy arrays or PyTensor tensors alike. The
energy and the conditionals are in :mod:`pymc_rbm.gaussian`'s docstring. This
is the layer's maths that the step methods (:mod:`pymc_rbm.step_methods.gaussian`)
and the PyMC distribution (:mod:`pymc_rbm.gaussian.distribution`) both build on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np

from pymc_rbm.layers import BERNOULLI, Gaussian, Layer
from pymc_rbm.params import StoredArrays
from pymc_rbm.primitives import softplus
from pymc_rbm.validation import check_float_array, check_real

__all__ = [
    "GaussianAtBeta",
    "GaussianRBMParams",
    "core_parameters",
    "energy",
    "free_energy",
    "gaussian_at_beta",
    "hidden_input",
    "visible_mean",
]


@dataclass(frozen=True, eq=False)
class GaussianRBMParams(StoredArrays):
    """Parameters of a Gaussian-Bernoulli RBM (the energy is in :mod:`pymc_rbm.gaussian`).

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
        check_sigma_range(sigma)
        for key, value in (("W", W), ("vbias", vbias), ("hbias", hbias), ("sigma", sigma)):
            object.__setattr__(self, key, value)

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

def check_sigma_range(sigma: np.ndarray, name: str = "sigma") -> None:
    """Refuse standard deviations > 0 whose square or reciprocal is not finite in their dtype.

    The energy divides by ``σ²`` and the hidden input by ``σ``: a subnormal
    σ (1e-320) or a huge one (1e200) gives infinities there, and NaN in
    ``log Z`` and the samplers.
    """
    with np.errstate(over="ignore", divide="ignore", under="ignore"):
        square = np.square(sigma)
        bad = ~(np.isfinite(square) & (square > 0) & np.isfinite(1.0 / square))
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        info = np.finfo(sigma.dtype)
        raise ValueError(
            f"{name} must have a finite, non-zero square and reciprocal square in {sigma.dtype} (about "
            f"{np.sqrt(info.tiny):.1e} to {np.sqrt(info.max):.1e}); {name}[{i}] = {float(sigma[i]):.3g} is out of that range "
            f"({int(bad.sum())} value(s) in all): rescale the data so that their standard deviations are near 1"
        )


# ----------------------------------------------------------------------------- energies
def hidden_input(v, params):
    """``hbias + (v / σ)·W``, shape (..., n_hidden) (NumPy or PyTensor)."""
    return params.hbias + (v / params.sigma) @ params.W


def visible_mean(h, params):
    """``E[v | h] = vbias + σ ∘ (W h)``, shape (..., n_visible)."""
    return params.vbias + params.sigma * (h @ params.W.T)


def energy(v, h, params):
    """``E(v, h)``, shape (...) (:mod:`pymc_rbm.gaussian`)."""
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



def core_parameters(W, vbias, hbias, sigma) -> list:
    """The parameters without the leading batch axes PyTensor adds to a batched variable's (NumPy or PyTensor)."""
    return [x[(0,) * (x.ndim - nd)] if x.ndim > nd else x for x, nd in ((W, 2), (vbias, 1), (hbias, 1), (sigma, 1))]


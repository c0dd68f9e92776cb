"""What :func:`~pymc_rbm.training.fit` needs to know about the visible layer of the RBM it trains.

Every RBM trained here has an energy that is bilinear in features ``x = φ(v)``
of the visible units and the hidden units ``h``, plus a base term that holds
no trained parameter:

``E(v, h) = -xᵀ W h - aᵀ x - cᵀ h + B(v)``,

so ``p(v)`` is an exponential family whose sufficient statistics are ``x hᵀ``,
``x`` and ``h``, and the log-likelihood gradient is their data expectation minus
their model expectation (the hidden units summed out of both:
``E[h | v] = sigmoid(c + xᵀ W)``). A *family* says what ``x`` is and how the
model is sampled and enumerated:

======================  ==========================  ================================  ==============================
visible units           ``x = φ(v)``, size ``D``    ``(W, a, c)``                     ``B(v)``
======================  ==========================  ================================  ==============================
Bernoulli {0, 1}        ``v``, ``n``                ``(W, vbias, hbias)``             0
categorical, q values   one-hot of ``v``, ``n q``   ``(W, vbias)`` flattened, hbias   0
Gaussian, σ fixed       ``v / σ``, ``n``            ``(W, vbias / σ, hbias)``         ``Σ_i v_i² / (2 σ_i²)``
======================  ==========================  ================================  ==============================

(The Gaussian energy of :mod:`pymc_rbm.gaussian`, ``Σ_i (v_i - vbias_i)² / (2σ_i²) - ...``,
is this one up to ``Σ_i vbias_i² / (2σ_i²)``, a constant that cancels in ``p(v)``.)

In the coordinates ``(W, a, c)`` (:meth:`BernoulliFamily.flat`, an
:class:`~pymc_rbm.params.RBMParams` of ``D`` "visible units") the gradient,
the optimisers and the centered gradient of
:mod:`~pymc_rbm.training.gradients` are those of a binary RBM, written on the
features: centering is the reparametrisation
``E = -(x - μ)ᵀ W (h - λ) - bᵀ (x - μ) - c'ᵀ (h - λ)`` of the same energy, exact
whatever ``x`` is (Montavon & Müller 2012, with one-hot offsets ``μ`` for
categorical units). Only the negative phase samples in the family's own
values (labels, reals): :meth:`BernoulliFamily.target` is the target of
:func:`pymc_rbm.kernels.sweep.sweep`, whose layer types
(:mod:`pymc_rbm.layers`) update the units.

For Gaussian units σ is fixed during training (set it from the data, e.g. to
half its standard deviation, as :func:`family_for` does): with σ learned too the
energy is no longer bilinear in fixed features, and the variance gradient is
known to make training unstable (Cho, Ilin & Raiko 2011).
"""

from __future__ import annotations

import numpy as np

from pymc_rbm.categorical import exact as categorical_exact
from pymc_rbm.categorical.params import CategoricalAtBeta, CategoricalRBMParams
from pymc_rbm import gaussian
from pymc_rbm.gaussian.params import check_sigma_range
from pymc_rbm.estimators import Moments, log_likelihood, log_partition
from pymc_rbm.kernels.sweep import at_beta
from pymc_rbm.layers import Gaussian, Potts
from pymc_rbm.params import RBMParams
from pymc_rbm.validation import check_binary, check_positive_int

__all__ = [
    "VISIBLE_TYPES",
    "INIT_CLIP",
    "INITS",
    "GAUSSIAN_SIGMA_SCALE",
    "BernoulliFamily",
    "CategoricalFamily",
    "GaussianFamily",
    "family_of",
    "family_for",
]

#: The names ``fit(visible=...)`` accepts (a :class:`~pymc_rbm.layers.Potts` or
#: :class:`~pymc_rbm.layers.Gaussian` layer may be given instead).
VISIBLE_TYPES = ("bernoulli", "categorical", "gaussian")

#: ``init="data"``: the data frequencies are clipped to ``[INIT_CLIP, 1 - INIT_CLIP]`` before their logs are taken.
INIT_CLIP = 1e-4

#: The starting parameters ``fit`` draws when none are given.
INITS = ("data", "normal")

#: ``visible="gaussian"`` fixes σ at this times the standard deviation of each data column: every component of the
#: mixture a Gaussian-Bernoulli RBM is then narrower than the data (measured in ``benchmarks/gaussian_sigma.py``).
GAUSSIAN_SIGMA_SCALE = 0.5


class BernoulliFamily:
    """Binary visible units: the features are ``v`` itself, and the flat coordinates the parameters.

    Every method is the identity or the binary code of the package, so that
    binary training is exactly what it was before the other families.
    """

    name = "bernoulli"
    params_type = RBMParams
    #: The estimator of ``log Z`` for the log-likelihood records of models too large to enumerate (None: none).
    estimator = "ais"

    def config(self) -> dict:
        """What a checkpoint must agree on beyond the shapes (nothing for binary units)."""
        return {}

    def check(self, data, n_visible: int | None = None, *, name: str = "data", dtype=np.float64) -> np.ndarray:
        """A float copy of binary ``data`` of shape (..., n_visible), or a ValueError."""
        return check_binary(data, n_visible, name=name, dtype=dtype)

    def features(self, v: np.ndarray) -> np.ndarray:
        """``x = v`` (the same array), shape (n_samples, n_visible)."""
        return v

    def values(self, x: np.ndarray) -> np.ndarray:
        """The visible values of features ``x``: ``x`` itself."""
        return x

    def flat(self, params: RBMParams) -> RBMParams:
        """The parameters in the coordinates ``(W, a, c)``: ``params`` itself."""
        return params

    def unflat(self, flat: RBMParams) -> RBMParams:
        """The parameters of flat coordinates: ``flat`` itself."""
        return flat

    def astype(self, params, dtype):
        """A copy of ``params`` with arrays of another floating type."""
        return params.astype(dtype)

    def target(self, params):
        """The sweep target at β = 1 (:class:`~pymc_rbm.kernels.sweep.RBMAtBeta`)."""
        return at_beta(params)

    def enumerable(self, params, max_bits: int) -> bool:
        """Whether exact enumeration of the smaller layer has at most ``2**max_bits`` states."""
        return min(params.n_visible, params.n_hidden) <= max_bits

    def exact_moments(self, params, **options) -> Moments:
        """``⟨x⟩``, ``⟨h⟩`` and ``⟨x hᵀ⟩`` of the model by enumeration (:func:`pymc_rbm.estimators.moments`)."""
        from pymc_rbm.estimators import moments

        return moments(params, "exact", **options)

    def log_partition(self, params, method: str, *, rng=None, **options):
        """``log Z`` by ``method`` (:func:`pymc_rbm.estimators.log_partition`)."""
        return log_partition(params, method, rng=rng, **options)

    def log_likelihood(self, params, v, log_z) -> np.ndarray:
        """``log p(v) = -F(v) - log Z`` of each row, shape (n_samples,), for every family.

        :func:`pymc_rbm.estimators.log_likelihood` checks ``v`` for the
        layer type of ``params`` and ``log_z`` for the model.
        """
        return log_likelihood(params, v, log_z=log_z)

    def gradient(self, flat_gradient, params):
        """A gradient in the flat coordinates, in the parameters' own (the same for binary units)."""
        return flat_gradient

    def initial(self, n_visible: int, n_hidden: int, rng, init: str, init_scale: float, data) -> RBMParams:
        """Starting parameters (stochastic): ``W ~ N(0, init_scale²)`` and biases as ``init`` says.

        ``"data"``: visible biases at the logits of the data means (clipped to
        ``[INIT_CLIP, 1 - INIT_CLIP]``), hidden biases 0 (Hinton 2010, "A
        practical guide to training RBMs", §8); ``"normal"``: every parameter
        from ``N(0, init_scale²)`` (Brügge, Fischer & Igel 2013, §4.2).
        """
        W = rng.normal(0.0, init_scale, (n_visible, n_hidden))
        if init == "data":
            p = np.clip(np.asarray(data, dtype=np.float64).mean(axis=0), INIT_CLIP, 1.0 - INIT_CLIP)
            return RBMParams(W, np.log(p) - np.log1p(-p), np.zeros(n_hidden))
        return RBMParams(W, rng.normal(0.0, init_scale, n_visible), rng.normal(0.0, init_scale, n_hidden))


class CategoricalFamily(BernoulliFamily):
    """Categorical (Potts) visible units of ``n_states`` values: the features are the one-hot encoding.

    Parameters
    ----------
    n_states : int
        ``q >= 2``.

    Notes
    -----
    ``x`` has ``n_visible * n_states`` entries (unit-major: ``x[i * q + k] =
    1(v_i = k)``), ``W`` flattens to ``(n_visible * n_states, n_hidden)`` and
    ``vbias`` to ``(n_visible * n_states,)``. The one-hot features are
    redundant (they sum to 1 per unit: the gauge of
    :mod:`pymc_rbm.categorical`); the gradient is orthogonal to the gauge
    directions, so training never moves along them.
    """

    name = "categorical"
    params_type = CategoricalRBMParams
    estimator = "ais"  # pymc_rbm.estimators.ais anneals categorical RBMs too

    def __init__(self, n_states: int):
        self.layer = Potts(n_states)
        self.n_states = self.layer.n_values

    def __repr__(self) -> str:
        return f"CategoricalFamily(n_states={self.n_states})"

    def config(self) -> dict:
        return {"visible": self.name, "n_states": self.n_states}

    def check(self, data, n_visible=None, *, name="data", dtype=np.float64) -> np.ndarray:
        """Integer labels (int64, shape (n_samples, n_visible)) of labels or one-hot data, or a ValueError.

        One-hot data of shape ``(n_samples, n_visible, n_states)`` is read as
        :func:`~pymc_rbm.categorical.params.as_labels` reads it.
        """
        a = np.asarray(data)
        one_hot = a.ndim == 3 and a.shape[-1] == self.n_states
        if one_hot:
            labels = self.layer.from_one_hot(a, name=name)
        else:
            labels = self.layer.check(a, None, name=name, dtype=np.int64)
        if n_visible is not None and labels.shape[-1] != n_visible:
            raise ValueError(f"{name} has {labels.shape[-1]} units per row, but the model has {n_visible}")
        return labels

    def features(self, v):
        """The one-hot encoding of labels ``v``, flattened: float64 of shape (n_samples, n_visible * n_states)."""
        v = np.asarray(v)
        return self.layer.one_hot(v).reshape(v.shape[:-1] + (-1,))

    def values(self, x):
        """The labels (float64, as chains carry them) of one-hot features ``x`` of shape (..., n_visible * n_states)."""
        x = np.asarray(x)
        return np.argmax(x.reshape(x.shape[:-1] + (-1, self.n_states)), axis=-1).astype(np.float64)

    def flat(self, params: CategoricalRBMParams) -> RBMParams:
        return RBMParams(params.W_flat, params.vbias.reshape(-1), params.hbias, dtype=params.dtype)

    def unflat(self, flat: RBMParams) -> CategoricalRBMParams:
        q = self.n_states
        n = flat.n_visible // q
        return CategoricalRBMParams(flat.W.reshape(n, q, flat.n_hidden), flat.vbias.reshape(n, q), flat.hbias,
                                    dtype=flat.dtype)

    def target(self, params):
        """:class:`~pymc_rbm.categorical.params.CategoricalAtBeta` at β = 1."""
        return CategoricalAtBeta(params)

    def enumerable(self, params, max_bits: int) -> bool:
        return min(2**params.n_hidden, params.n_states**params.n_visible) <= 2**max_bits

    def exact_moments(self, params, **options) -> Moments:
        """:func:`~pymc_rbm.categorical.exact.moments_exact` in the flat coordinates."""
        m = categorical_exact.moments_exact(params, **options)
        return Moments(v=m.v.reshape(-1), h=m.h, vh=m.vh.reshape(-1, params.n_hidden))

    def log_partition(self, params, method, *, rng=None, **options):
        """Exact ``log Z`` by enumeration; other methods go to :func:`pymc_rbm.estimators.log_partition`."""
        if method == "exact":
            return categorical_exact.log_partition_exact(params, **options)
        return log_partition(params, method, rng=rng, **options)

    def gradient(self, flat_gradient, params):
        """``(W, vbias, hbias)`` of shapes (n, q, m), (n, q), (m,) from flat ones."""
        n, q, m = params.W.shape
        g = flat_gradient
        return type(g)(g.W.reshape(n, q, m), g.vbias.reshape(n, q), g.hbias)

    def initial(self, n_visible, n_hidden, rng, init, init_scale, data) -> CategoricalRBMParams:
        """Starting parameters (stochastic), as :meth:`BernoulliFamily.initial` with the data's frequencies.

        ``"data"``: ``vbias[i, k]`` is the log of the frequency of value ``k``
        at unit ``i`` (clipped below at ``INIT_CLIP``), the independent-site
        model that the RBM starts from.
        """
        q = self.n_states
        W = rng.normal(0.0, init_scale, (n_visible, q, n_hidden))
        if init == "data":
            freq = np.clip(self.features(data).reshape(-1, n_visible, q).mean(axis=0), INIT_CLIP, None)
            return CategoricalRBMParams(W, np.log(freq / freq.sum(axis=-1, keepdims=True)), np.zeros(n_hidden))
        return CategoricalRBMParams(W, rng.normal(0.0, init_scale, (n_visible, q)), rng.normal(0.0, init_scale, n_hidden))


class GaussianFamily(BernoulliFamily):
    """Gaussian visible units of fixed standard deviations ``sigma``: the features are ``v / σ``.

    Parameters
    ----------
    sigma : array_like of shape (n_visible,)
        Fixed during training.

    Notes
    -----
    The flat coordinates are ``(W, vbias / σ, hbias)``: the optimiser steps in
    ``a = vbias / σ``, the natural parameter of ``x = v / σ`` (the same as
    ``vbias`` when σ = 1).
    """

    name = "gaussian"
    params_type = gaussian.GaussianRBMParams
    estimator = None  # no estimator of pymc_rbm.estimators takes Gaussian RBMs

    def __init__(self, sigma):
        self.layer = Gaussian(sigma)
        self.sigma = self.layer.sigma

    def __repr__(self) -> str:
        return f"GaussianFamily(n_visible={self.sigma.size})"

    def config(self) -> dict:
        return {"visible": self.name}

    def check(self, data, n_visible=None, *, name="data", dtype=np.float64):
        """A float copy of real ``data`` of shape (n_samples, n_visible), or a ValueError (NaN, infinities)."""
        return self.layer.check(data, n_visible, name=name, dtype=dtype)

    def features(self, v):
        """``v / σ``, shape (n_samples, n_visible)."""
        return np.asarray(v) / self.sigma

    def values(self, x):
        """``σ x``."""
        return np.asarray(x) * self.sigma

    def flat(self, params) -> RBMParams:
        return RBMParams(params.W, params.vbias / params.sigma, params.hbias, dtype=params.dtype)

    def unflat(self, flat: RBMParams):
        return gaussian.GaussianRBMParams(flat.W, flat.vbias * self.sigma, flat.hbias, self.sigma, dtype=flat.dtype)

    def astype(self, params, dtype):
        return gaussian.GaussianRBMParams(params.W, params.vbias, params.hbias, params.sigma, dtype=dtype)

    def target(self, params):
        """:class:`~pymc_rbm.gaussian.GaussianAtBeta` (β = 1)."""
        return gaussian.GaussianAtBeta(params)

    def enumerable(self, params, max_bits: int) -> bool:
        return params.n_hidden <= min(max_bits, gaussian.MAX_HIDDEN_ENUMERATED)

    def exact_moments(self, params, **options) -> Moments:
        """``⟨x⟩ = vbias/σ + W ⟨h⟩``, ``⟨x hᵀ⟩ = (vbias/σ) ⟨h⟩ᵀ + W ⟨h hᵀ⟩``, ``⟨h⟩``: the mixture enumerated.

        Given ``h``, ``x = v / σ`` is normal with mean ``vbias / σ + W h``
        (:mod:`pymc_rbm.gaussian`), so the moments need only the hidden
        marginal :func:`~pymc_rbm.gaussian.hidden_marginal`.
        """
        Hs, p = gaussian.hidden_marginal(params, **options)
        h = p @ Hs
        hh = (Hs * p[:, None]).T @ Hs
        a = params.vbias / params.sigma
        return Moments(v=a + params.W @ h, h=h, vh=np.outer(a, h) + params.W @ hh)

    def log_partition(self, params, method, *, rng=None, **options):
        """Exact ``log Z`` over the hidden states; other methods go to :func:`pymc_rbm.estimators.log_partition`."""
        if method == "exact":
            return gaussian.log_partition_exact(params, **options)
        return log_partition(params, method, rng=rng, **options)

    def gradient(self, flat_gradient, params):
        """``(W, vbias, hbias)``: ``∂/∂vbias = (∂/∂a) / σ``."""
        g = flat_gradient
        return type(g)(g.W, g.vbias / params.sigma, g.hbias)

    def initial(self, n_visible, n_hidden, rng, init, init_scale, data):
        """Starting parameters (stochastic): ``"data"``: ``vbias`` the data means, hidden biases 0; σ the family's."""
        W = rng.normal(0.0, init_scale, (n_visible, n_hidden))
        if init == "data":
            return gaussian.GaussianRBMParams(W, np.asarray(data, dtype=np.float64).mean(axis=0), np.zeros(n_hidden),
                                              self.sigma)
        return gaussian.GaussianRBMParams(W, rng.normal(0.0, init_scale, n_visible),
                                          rng.normal(0.0, init_scale, n_hidden), self.sigma)


def family_of(params):
    """The family of starting parameters: binary, categorical or Gaussian.

    Raises
    ------
    TypeError
        For anything else.
    """
    if isinstance(params, CategoricalRBMParams):
        return CategoricalFamily(params.n_states)
    if isinstance(params, gaussian.GaussianRBMParams):
        return GaussianFamily(params.sigma)
    if isinstance(params, RBMParams):
        return BernoulliFamily()
    raise TypeError(
        f"params must be an RBMParams, a CategoricalRBMParams or a GaussianRBMParams, got {type(params).__name__}"
    )


def family_for(visible, data):
    """The family that ``fit(visible=...)`` names, for ``data`` when the layer leaves something open.

    Parameters
    ----------
    visible : None, {"bernoulli", "categorical", "gaussian"}, Potts or Gaussian
        None and ``"bernoulli"``: binary units. ``"categorical"``: Potts units
        whose number of values is read from the data (the last axis of one-hot
        data, else the largest label + 1; give ``Potts(q)`` when some value
        never occurs). ``"gaussian"``: Gaussian units with σ fixed at
        :data:`GAUSSIAN_SIGMA_SCALE` (0.5) times the standard deviation of
        each data column (1 for a constant column); give ``Gaussian(sigma)``
        for other values.
    data : array_like
        The training data (only read).

    Raises
    ------
    ValueError
        For an unknown name, or categorical data with fewer than 2 values.
    """
    if visible is None or (isinstance(visible, str) and visible == "bernoulli"):
        return BernoulliFamily()
    if isinstance(visible, Potts):
        return CategoricalFamily(visible.n_values)
    if isinstance(visible, Gaussian):
        return GaussianFamily(visible.sigma)
    if isinstance(visible, str) and visible == "categorical":
        a = np.asarray(data)
        if a.ndim == 3:
            return CategoricalFamily(check_positive_int(a.shape[-1], "n_states", minimum=2))
        if a.size == 0 or a.dtype == np.bool_ or a.dtype.kind not in "iuf" or not np.isfinite(a).all():
            return CategoricalFamily(2)  # its check says what is wrong with the data
        q = int(np.max(a)) + 1
        if q < 2:
            raise ValueError(
                f"visible='categorical' reads the number of values from the data, whose largest label is {q - 1}; "
                "give visible=pymc_rbm.layers.Potts(n_states)"
            )
        return CategoricalFamily(q)
    if isinstance(visible, str) and visible == "gaussian":
        v = Gaussian(np.ones(np.shape(data)[-1] if np.ndim(data) else 1)).check(data)
        with np.errstate(over="ignore", invalid="ignore"):
            std = v.reshape(-1, v.shape[-1]).std(axis=0)
        sigma = np.where(std > 0, GAUSSIAN_SIGMA_SCALE * std, 1.0)
        try:
            check_sigma_range(sigma)
        except ValueError:
            scale = float(np.max(np.abs(v))) if v.size else 0.0
            raise ValueError(
                f"visible='gaussian' fixes σ at the standard deviation of each column of the data times "
                f"{GAUSSIAN_SIGMA_SCALE:g}, which are out of range for Gaussian units here (data of magnitude up to "
                f"{scale:.3g}, standard deviations {float(np.min(std)):.3g} to {float(np.max(std)):.3g}): standardise "
                "the data (subtract the column means, divide by the standard deviations) or give "
                "visible=pymc_rbm.layers.Gaussian(sigma)"
            ) from None
        return GaussianFamily(sigma)
    raise ValueError(
        f"visible must be one of {VISIBLE_TYPES}, a pymc_rbm.layers.Potts or a pymc_rbm.layers.Gaussian layer; "
        f"got {visible!r}"
    )

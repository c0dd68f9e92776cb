"""The annealing path shared by AIS, reverse AIS, BAR, RTS and SAMS: intermediate RBMs and their transitions.

whose ``log Z_A`` is known in closed form to the target RBM ``B`` through

    p_k(v) ∝ p*_k(v) = Σ_{h_A, h_B} exp(-(1 - β_k) E_A(v, h_A) - β_k E_B(v, h_B)),   0 = β_0 < ... < β_K = 1.

The base-rate model has no couplings, only visible biases ``b_A`` (its
hidden units, if it had any, would only contribute a known constant), so the
intermediate model ``p_k`` is itself an RBM:

    W_k = β_k W_B,   vbias_k = (1 - β_k) b_A + β_k vbias_B,   hbias_k = β_k hbias_B,

with the hidden units summed out in closed form,

    log p*_k(v) = ((1 - β_k) b_A + β_k vbias_B)·v + Σ_j softplus(β_k (hbias_B + v·W_B)_j).

At ``β = 0`` that is ``b_A·v + n_hidden log 2`` and ``log Z_0 = Σ_i softplus(b_A,i) + n_hidden log 2``.

Why the transition is built from the path's own logits
------------------------------------------------------
The transition at ``β_k`` must leave ``p_k`` invariant. The kernels'
``beta`` argument multiplies the *whole* energy of one RBM, so
``gibbs_sweep(rng, state, target, beta=β_k)`` samples
``exp(-β_k E_B)``, whose visible bias is ``β_k vbias_B``, not
``(1 - β_k) b_A + β_k vbias_B``: it is the wrong distribution unless
``b_A = 0`` (and no other RBM can be passed instead, since with ``beta``
the visible bias would have to be ``vbias_k / β_k``, undefined at
``β = 0``). Building an :class:`~pymc_rbm.RBMParams` of the intermediate
model every step (:meth:`AnnealingPath.intermediate`) would be correct but
copies and validates ``W`` thousands of times, and cannot give each chain its
own β, which RTS and SAMS need. So a point of the path is a target of the
kernels' sweep (:meth:`AnnealingPath.at`, a :class:`PathPoint`) that computes
the intermediate model's tempered logits directly, for a β that is a scalar or
one per chain,

    hidden:  β (hbias_B + v·W_B)          visible:  b_A + β (vbias_B - b_A + W_B·h),

and :func:`pymc_rbm.kernels.sweep.sweep` applies the kernels' own layer rule
to them: the Gibbs rule (``α = 0``) or flip-the-state mixed with Gibbs
(``α > 0``). The tests check, exactly,
that these logits are those of :meth:`AnnealingPath.intermediate` and that
the resulting transition matrix leaves ``p_k`` invariant, and that a
transition with the target's ``beta`` alone does not.

One sweep draws ``h ~ p_k(h | v)`` afresh and then updates ``v`` given
``h`` with the flip-the-state operator mixed with Gibbs by ``α``
(``operator="gibbs"`` is ``α = 0``, plain block Gibbs). The hidden layer
is redrawn rather than flipped because the parameters change at every step
(DESIGN: a stale ``h`` breaks invariance), and because the weights are
Rao-Blackwellized over ``h`` (they use ``p*_k(v)`` with ``h`` summed out, as
Salakhutdinov & Murray do), which needs a kernel on ``v`` alone. The sweep
``v → h → v'`` is reversible with respect to ``p_k(v)``, so the same kernel
serves the reverse annealing of :func:`~pymc_rbm.estimators.ais.reverse_ais`.

The path generalises to several RBMs on the same visible units (SAMS
bridges them): the intermediate distributions are RBMs whose hidden layer is
the concatenation of the models' hidden layers, each model's part scaled by
its own coefficient (Zhang 2016, eq. 2.4.4).

Two-state units
---------------
Nothing above needs the units to be bits. The path takes the layer types of
its models (:mod:`pymc_rbm.layers`: Bernoulli units in {0, 1}, or ±1 spins for
a :class:`~pymc_rbm.params.SpinRBMParams`): the base distribution is the
visible layer's units, independent in the fields ``b_A``
(:meth:`AnnealingPath.sample_base`, :attr:`AnnealingPath.log_z_base`); the
sweeps update each layer by its own type; and the summed-out hidden units
contribute their layer's log normaliser, ``softplus`` for bits and
``log 2 cosh`` for spins (:func:`log_normaliser_sum_`). The tests check, by
enumerating the spins, that a spin path's marginals, fields and sweeps are
those of its intermediate spin RBM, and AIS and BAR against the exact ``log Z``.

Categorical (Potts) visible units
---------------------------------
A :class:`~pymc_rbm.categorical.CategoricalRBMParams` goes through the same
path: a visible unit's field is then a vector of ``q`` entries, the base
distribution is independent categorical units in the fields ``b_A`` of shape
``(n_visible, q)`` (drawn by the layer's own Gibbs draw), and every formula
above holds with ``v`` read as its one-hot encoding: ``vbias·v`` is
``Σ_i vbias[i, v_i]`` and the hidden input ``hbias + Σ_i W[i, v_i, :]``
(:meth:`~pymc_rbm.layers.Potts.dot`). The path stores the visible
biases and couplings flattened over ``(unit, state)``, so the visible fields
``λ_0 b_A + Σ_m λ_m (vbias_m + W_m·h_m)`` are one matrix product reshaped to
``(n_chains, n_visible, q)``, and the visible layer is updated by
:meth:`~pymc_rbm.layers.Potts.update` (Gibbs, or Liu's Metropolised Gibbs
for ``operator="flip"``). The hidden input of labels is a gather of one row
of ``W`` per unit, as cheap as updating it by the rows that changed, so it is
recomputed at every sweep rather than carried (:attr:`AnnealingPath.incremental`).
The tests check the path's densities and fields against the intermediate
categorical RBM, ``p K = p`` of its sweep by enumeration (with negative
controls), and AIS and BAR against the exact ``log Z``.

Gaussian visible units
----------------------
A Gaussian-Bernoulli RBM (:class:`~pymc_rbm.gaussian.params.GaussianRBMParams`, energy
``Σ (v - b)² / (2σ²) - c·h - (v / σ)·W h``) goes through the same path with
its visible layer a :class:`~pymc_rbm.layers.Gaussian` of the model's ``σ``.
The base is the model's own quadratic term, independent normals
``N(vbias, σ²)``, with the hidden units at zero coupling, and the quadratic
term is *not* annealed: the point at ``β`` is the Gaussian RBM
``(β W, vbias, β c, σ)``,

    log p*_β(v) = -Σ_i (v_i - b_i)² / (2σ_i²) + Σ_j softplus(β (c + (v / σ)·W)_j),

so ``log Z_0 = Σ_i log(√(2π) σ_i) + n_hidden log 2``. (Tempering the whole
energy, as :class:`~pymc_rbm.gaussian.params.GaussianAtBeta` does for the step
methods, would widen ``v | h`` to ``σ² / β``, improper at ``β = 0``.) The
path stores the couplings of the standardised units, ``W / σ`` (rows scaled),
so the hidden input ``c + (v / σ)·W`` is ``c + v·(W / σ)`` and the visible
field ``vbias / σ² + β (W h) / σ`` is the formula above with the fields
``vbias / σ²``; the Gaussian layer draws ``v ~ N(b + σ ∘ β W h, σ²)`` from
it. The visible term of ``log f`` is the quadratic itself (the Gaussian base
measure included), the same at every ``β``, so the weights' visible increments
are zero. Such a path anneals to one model from that base only. The tests
check the densities and conditionals against the intermediate Gaussian RBM,
invariance of the collapsed hidden chain by Gauss–Hermite quadrature (with a
negative control that tempers the quadratic term), and AIS, reverse AIS and
BAR against ``log Z`` by enumerating the hidden layer.

ReLU hidden units
-----------------
An RBM with ReLU hidden units (:class:`~pymc_rbm.params.ReLURBMParams`, energy
``-v·W·h - vbias·v - hbias·h + Σ_j γ_j h_j² / 2`` with ``h >= 0``) goes through the same path with its
hidden layer a :class:`~pymc_rbm.layers.ReLU`. The hidden units' quadratic term is *not* annealed: the
point at ``β`` is the ReLU RBM ``(β W, (1 - β) b_A + β vbias, β hbias, γ)``,

    log p*_β(v) = ((1 - β) b_A + β vbias)·v + Σ_j A_j(β (hbias + v·W)_j),
    A_j(f) = log ∫_0^∞ exp(-γ_j h²/2 + f h) dh,

so the hidden fields are the binary path's, ``β (hbias + v·W)``; a sweep draws ``h`` from the layer's
truncated normal in them (:meth:`~pymc_rbm.layers.ReLU.update`) and ``v`` from Bernoulli units in
``b_A + β (vbias - b_A + W·h)``; and the hidden terms of ``log f`` and of the weights are the layer's
own log normaliser (:func:`log_normaliser_sum_`). At ``β = 0`` every hidden unit is the half-normal
``N(0, 1/γ_j)`` on ``h >= 0``, whatever ``v``, with ``A_j(0) = ½ log(2π/γ_j) + log ½``, so
``log Z_0 = Σ_i softplus(b_A,i) + Σ_j A_j(0)``. Why not temper the whole energy, as
:func:`pymc_rbm.energy.free_energy` with ``beta`` does (:meth:`~pymc_rbm.layers.ReLU.tempered`,
precisions ``β γ``)? At ``β = 0`` the hidden units would then be flat on ``[0, ∞)``, an improper base
with no ``log Z``. Any path gives an exact estimator as long as the ``log Z`` of both ends is known;
this one keeps the base proper and the hidden units' shape fixed. Such a path anneals to one model.
Without data the base is the uniform distribution (``base="zero"``): the naive mean field of
:func:`~pymc_rbm.estimators.base_rate.base_rate_vbias` takes binary hidden units only. The tests check
the densities against the intermediate ReLU RBM, ``p K = p`` of the sweep on the visible marginal by
quadrature over the hidden units (with negative controls that temper ``γ`` too, or leave ``β`` off the
hidden field), and AIS, reverse AIS and BAR against ``log Z`` by enumerating the visible layer.

The base-rate model the path starts from is :mod:`~pymc_rbm.estimators.base_rate`; the β
schedules and the pilot runs that place them are :mod:`~pymc_rbm.estimators.schedules`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.special import logsumexp

from pymc_rbm._runtime import map_blocks
from pymc_rbm.categorical.params import CategoricalRBMParams
from pymc_rbm.estimators.base_rate import base_rate_vbias
from pymc_rbm.kernels.operators import operator_alpha, operator_rule
from pymc_rbm.kernels.state import RBMState
from pymc_rbm.kernels.sweep import sweep
from pymc_rbm.layers import BERNOULLI, Layer, TwoState
from pymc_rbm.params import RBMParams, ReLURBMParams, SpinRBMParams
from pymc_rbm.validation import check_sampling_dtype

__all__ = [
    "AnnealingPath",
    "PathPoint",
    "annealing_path",
    "log_mean_exp",
    "softplus_sum_",
    "log_normaliser_sum_",
    "MODEL_TYPES",
    "path_model_types",
    "layers_of",
]

#: The RBM parametrisations a path anneals to: binary units, ±1 spins, categorical (Potts) visible units, or
#: ReLU hidden units (:mod:`pymc_rbm.layers`).
MODEL_TYPES = (RBMParams, SpinRBMParams, CategoricalRBMParams, ReLURBMParams)


def path_model_types() -> tuple[type, ...]:
    """:data:`MODEL_TYPES` and :class:`~pymc_rbm.gaussian.params.GaussianRBMParams`: every model a path anneals to.

    The Gaussian class is imported on call: :mod:`pymc_rbm.gaussian` imports
    this package, so it cannot be imported while this module loads.
    """
    from pymc_rbm.gaussian.params import GaussianRBMParams

    return MODEL_TYPES + (GaussianRBMParams,)


def layers_of(model) -> tuple[Layer, TwoState]:
    """The visible and hidden layer types of a model of :data:`MODEL_TYPES`."""
    return model.visible, model.hidden


# ----------------------------------------------------------------- numerics
def log_mean_exp(x, axis=None):
    """``log(mean(exp(x)))``, stable."""
    x = np.asarray(x, dtype=np.float64)
    n = x.size if axis is None else x.shape[axis]
    return logsumexp(x, axis=axis) - np.log(n)


def softplus_sum_(z: np.ndarray) -> np.ndarray:
    """``Σ softplus(z)`` over the last axis, summed in float64; overwrites ``z``."""
    pos = np.maximum(z, 0.0).sum(axis=-1, dtype=np.float64)
    np.abs(z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    np.log1p(z, out=z)
    return pos + z.sum(axis=-1, dtype=np.float64)


def log_normaliser_sum_(z: np.ndarray, layer: Layer) -> np.ndarray:
    """``Σ log Σ_x exp(x z)`` of a hidden layer over the last axis, in float64; may overwrite ``z``.

    ``softplus`` for Bernoulli units (:func:`softplus_sum_`); for values
    ``low < high``, ``low z + softplus((high - low) z)`` (``log 2 cosh z`` for spins); for
    other layers (ReLU units) the layer's own :meth:`~pymc_rbm.layers.Layer.log_normaliser`.
    """
    if not isinstance(layer, TwoState):
        return layer.log_normaliser(z).sum(axis=-1, dtype=np.float64)
    if layer == BERNOULLI:
        return softplus_sum_(z)
    linear = layer.low * z.sum(axis=-1, dtype=np.float64)
    z *= z.dtype.type(layer.spacing)
    return linear + softplus_sum_(z)


# --------------------------------------------------------------------- path
class AnnealingPath:
    """Intermediate RBMs between a base-rate model and one or more target RBMs.

    A point of the path is a coefficient vector ``λ = (λ_0, λ_1, ..., λ_M)``
    on the base-rate model and the ``M`` models. Its unnormalised marginal is

        log f_λ(v) = (λ_0 b_A + Σ_m λ_m vbias_m)·v + Σ_m Σ_{j ∈ m} softplus(λ_m (hbias_m + v·W_m)_j),

    the marginal of the RBM with hidden layer ``[h_1, ..., h_M]``, couplings
    ``[λ_1 W_1, ..., λ_M W_M]`` and those biases (:meth:`intermediate`).
    With one model, ``λ = (1 - β, β)`` is the AIS path of Salakhutdinov &
    Murray. A hidden unit of a model with ``λ_m = 0`` contributes ``log 2`` (``A_j(0)`` for ReLU units):
    :meth:`log_offset` gives that constant, so that
    ``log Z_λ - log_offset(λ)`` is the log partition function of the models
    with ``λ_m > 0`` alone.

    Parameters
    ----------
    models : RBMParams, SpinRBMParams, CategoricalRBMParams, GaussianRBMParams, ReLURBMParams or a sequence of them
        Target RBMs, all with the same number of visible units and the same
        layer types (binary units, ±1 spins, or Potts units of one number of
        states: :mod:`pymc_rbm.layers`); a Gaussian-Bernoulli RBM, or an RBM with ReLU hidden units, alone.
        The base distribution, the sweeps and the weights use those layers: the base's units are the
        visible layer's units in the fields ``b_A``.
    base_vbias : array_like of shape (n_visible,), or (n_visible, q) for Potts units
        Visible biases ``b_A`` of the base-rate model (:func:`~pymc_rbm.estimators.base_rate.base_rate_vbias`);
        for a Gaussian RBM the means of its base ``N(b_A, σ²)``, which must be the model's ``vbias``.
    base_hbias : array_like of shape (n_hidden,), optional
        Fields ``c_A`` of the base's hidden units (one two-state model; default none, hidden units in a zero
        field): the base is then independent units on both layers, ``exp(b_A·v + c_A·h)``, and the point
        ``λ`` has hidden fields ``λ_1 (hbias + v·W) + λ_0 c_A``. A base close to the model on both layers (the
        mean-field product of :func:`~pymc_rbm.estimators.base_rate.mean_field_fields`) shortens the part of
        the path where only the hidden units' distribution changes. AIS refuses it
        (:func:`~pymc_rbm.estimators.annealing.anneal` takes its increments of the hidden terms in ``β``
        alone); the sweeps, ``log_f`` and the ladder's weights take it.
    dtype : numpy dtype, default float64
        Floating type of the sampling arithmetic (log weights are always
        accumulated in float64).
    operator : {"gibbs", "flip"} or float in [0, 1], default "gibbs"
        The visible-layer update of every sweep along the path, bound once:
        block Gibbs or flip-the-state mixed with Gibbs by ``α``
        (:func:`~pymc_rbm.kernels.operator_alpha`); the hidden layer is
        always drawn afresh from ``p_λ(h | v)``.

    Notes
    -----
    :func:`annealing_path` builds one from a model, its base distribution and
    these options; AIS, reverse AIS, BAR, RTS and SAMS take either the model
    and the options or a path built once.
    """

    def __init__(self, models, base_vbias, *, base_hbias=None, dtype=np.float64, operator="gibbs"):
        types = path_model_types()
        if isinstance(models, types):
            models = [models]
        models = list(models)
        if not models or not all(isinstance(m, types) for m in models):
            raise TypeError("models must be an RBMParams or a non-empty sequence of RBMParams")
        if len({(type(m), *layers_of(m)) for m in models}) > 1:
            raise TypeError(
                "the models of a path must have the same layer types, got "
                + ", ".join(f"{type(m).__name__} ({layers_of(m)[0].name})" for m in models)
            )
        nv = models[0].n_visible
        for i, m in enumerate(models):
            if m.n_visible != nv:
                raise ValueError(f"model {i} has {m.n_visible} visible units, model 0 has {nv}")
        #: the models' layer types (:mod:`pymc_rbm.layers`), read by the sweeps of :meth:`at`
        self.visible_layer, self.hidden_layer = layers_of(models[0])
        if not isinstance(self.hidden_layer, TwoState) and len(models) != 1:
            raise ValueError(
                f"a path with {self.hidden_layer.name} hidden units anneals to one model, got {len(models)}"
            )
        layer = self.visible_layer
        #: the visible fields of one chain: (n_visible,) for two-state units, (n_visible, q) for Potts units
        self.field_shape = layer.field_shape(nv)
        #: whether sweeps update the carried hidden input by the rows of the visible units that changed
        #: (two-state units); a Potts path recomputes it, a gather of one row of W per unit, as cheap, and so does
        #: a Gaussian one, whose units all change at every sweep (:attr:`~pymc_rbm.layers.Layer.incremental_input`)
        self.incremental = layer.incremental_input
        b = np.asarray(base_vbias, dtype=np.float64)
        if b.shape != self.field_shape or not np.all(np.isfinite(b)):
            flat = b.ndim <= 1 and len(self.field_shape) == 1
            shape = f"{nv}" if flat else f"an array of shape {self.field_shape} of"
            raise ValueError(f"base_vbias must be {shape} finite numbers, got shape {b.shape}")
        # the bias term of a Gaussian layer is its quadratic, base measure included (module docstring): it is not
        # annealed, so the base is the model's own
        if not layer.linear_bias and (len(models) != 1 or not np.array_equal(b, models[0].vbias)):
            raise ValueError(
                "a Gaussian-Bernoulli path anneals to one model from its own quadratic term: base_vbias must be "
                "the model's vbias (the base is N(vbias, sigma**2))"
            )
        self.dtype = check_sampling_dtype(dtype)
        #: the visible operator's mixture weight α (0 for Gibbs) and its layer rule
        self.alpha = operator_alpha(operator)
        self.rule = operator_rule(operator)
        self.models = models
        self.n_models = len(models)
        self.n_visible = nv
        self.hidden_sizes = np.array([m.n_hidden for m in models])
        self.n_hidden = int(self.hidden_sizes.sum())
        self.base_vbias = b
        #: (nv, H) couplings of all models side by side (C-contiguous: its rows are added to carried
        #: activations), or (nv, q, H) for Potts units, and (H,) hidden biases
        #: (Gaussian units: the couplings of the standardised units, W / σ)
        W = layer.natural_couplings(np.concatenate([m.W for m in models], axis=-1))
        self.W = np.ascontiguousarray(W, dtype=self.dtype)
        #: (H, nv) or (H, nv q): the couplings transposed, flattened over the visible fields
        self.WT = np.ascontiguousarray(self.W.reshape(-1, self.n_hidden).T)
        self.hbias = np.concatenate([m.hbias for m in models]).astype(self.dtype)
        self._vb64 = np.vstack([b.ravel()] + [m.vbias.ravel() for m in models]).astype(np.float64)
        #: (1 + M, nv) or (1 + M, nv q) visible fields of the base and of each model, flattened: the visible biases
        #: (Gaussian units: vbias / σ², the field of the mean vbias)
        fields = layer.natural_field(self._vb64)
        self.vbiases = fields.astype(self.dtype)
        #: the base's visible field in float64, field_shape: b_A (Gaussian units: b_A / σ²)
        self.base_field = fields[0].reshape(self.field_shape)
        #: model (1..M) of each hidden unit
        self.model_of_hidden = np.repeat(np.arange(1, self.n_models + 1), self.hidden_sizes)
        #: (M,) each model's hidden units' log normaliser in a zero field, Σ_j A_j(0): ``log 2`` per two-state unit,
        #: ``½ log(2π/γ_j) + log ½`` per ReLU unit (module docstring, "ReLU hidden units")
        self.hidden_log_z0 = np.bincount(
            self.model_of_hidden - 1, weights=self.hidden_layer.log_normaliser(np.zeros(self.n_hidden)),
            minlength=self.n_models,
        )
        #: the base's hidden fields c_A (H,) in float64, or None (a zero field)
        self.base_hbias = None
        if base_hbias is not None:
            c = np.array(base_hbias, dtype=np.float64)  # a copy: the caller's array is not kept
            if self.n_models != 1 or not isinstance(self.hidden_layer, TwoState):
                raise ValueError("base_hbias needs a path to one model with two-state hidden units")
            if c.shape != (self.n_hidden,) or not np.all(np.isfinite(c)):
                raise ValueError(f"base_hbias must be {self.n_hidden} finite numbers, got shape {c.shape}")
            self.base_hbias = c
        self._hfield = None if self.base_hbias is None else self.base_hbias.astype(self.dtype)

    # ---------------------------------------------------------- coefficients
    def coefficients(self, beta, model: int = 0) -> np.ndarray:
        """``λ`` of the point at ``β`` between the base (β = 0) and model ``model`` (β = 1).

        Parameters
        ----------
        beta : float or array_like of shape (n,)
        model : int, default 0
            Index of the target model in ``models``.

        Returns
        -------
        ndarray of shape (1 + M,) or (n, 1 + M)
        """
        b = np.asarray(beta, dtype=np.float64)
        out = np.zeros(b.shape + (1 + self.n_models,))
        out[..., 0] = 1.0 - b
        out[..., 1 + model] += b
        return out

    @property
    def log_z_base(self) -> float:
        """``log Z`` of the path at the base, ``λ = (1, 0, ..., 0)``: ``Σ softplus(b_A) + H log 2`` (binary units).

        In general the visible layer's log normaliser summed over ``b_A``
        (``Σ_i logsumexp_k b_A[i, k]`` for Potts units, ``Σ_i log(√(2π) σ_i)``
        for Gaussian units, whose base is the model's quadratic term), plus the
        hidden layer's log normaliser in a zero field (:attr:`hidden_log_z0`):
        ``log 2`` per two-state unit, ``½ log(2π/γ_j) + log ½`` per ReLU unit.
        """
        visible = self.visible_layer.bias_log_partition(self.base_vbias)
        if self.base_hbias is not None:
            return float(visible + self.hidden_layer.log_normaliser(self.base_hbias).sum())
        return float(visible + self.hidden_log_z0.sum())

    def log_offset(self, coef) -> np.ndarray:
        """:attr:`hidden_log_z0` of the models with ``λ_m = 0``: ``log 2`` per two-state hidden unit (with base
        hidden fields ``c_A``: those units' ``Σ_j log_normaliser(λ_0 c_A,j)``, the base's hidden units).

        Parameters
        ----------
        coef : array_like of shape (..., 1 + M)

        Returns
        -------
        ndarray of shape (...)
        """
        c = np.asarray(coef, dtype=np.float64)
        if self.base_hbias is not None:
            z = c[..., 0:1] * self.base_hbias
            return np.where(c[..., 1] == 0.0, self.hidden_layer.log_normaliser(z).sum(axis=-1), 0.0)
        return (c[..., 1:] == 0.0) @ self.hidden_log_z0

    def intermediate(self, coef):
        """The RBM of one point of the path (a copy; for tests and inspection).

        Parameters
        ----------
        coef : array_like of shape (1 + M,)

        Returns
        -------
        RBMParams, SpinRBMParams, CategoricalRBMParams, GaussianRBMParams or ReLURBMParams (the models' type)
            ``n_visible`` × ``H`` with ``W = [λ_1 W_1, ...]``,
            ``vbias = λ_0 b_A + Σ λ_m vbias_m``, ``hbias = [λ_1 hbias_1, ...]`` (plus ``λ_0 c_A``)
            (Gaussian: and the model's ``sigma``; ReLU: and the model's ``gamma``, not annealed), from the
            models' own arrays in float64 (not the path's copies in the sampling dtype).
        """
        c = np.asarray(coef, dtype=np.float64)
        if c.shape != (1 + self.n_models,):
            raise ValueError(f"coef must have shape ({1 + self.n_models},), got {c.shape}")
        scale = c[self.model_of_hidden]
        W = np.concatenate([m.W for m in self.models], axis=-1) * scale
        vbias = (c @ self._vb64).reshape(self.field_shape)
        hbias = np.concatenate([m.hbias for m in self.models]) * scale
        if self.base_hbias is not None:
            hbias = hbias + c[0] * self.base_hbias
        model = self.models[0]
        # the arrays of the models' layers (a Gaussian layer's sigma, a ReLU layer's gamma) are not annealed
        layer_arrays = {name: getattr(model, name) for name in getattr(model, "ARRAY_NAMES", ())[3:]}
        return type(model)(W, vbias, hbias, **layer_arrays)

    def _hidden_scale(self, coef: np.ndarray) -> np.ndarray:
        """Per-hidden-unit coefficients: (..., 1) for one model, (..., H) for several."""
        if self.n_models == 1:
            return coef[..., 1:2]
        return coef[..., self.model_of_hidden]

    # ------------------------------------------------------------- sampling
    def start(self, v) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(v, a, vb)`` for states ``v``: activations ``a = hbias + v·W`` (n, H), ``vb = v·vbiasesᵀ`` (n, 1+M)."""
        v = np.asarray(v, dtype=self.dtype)
        return v, self.hidden_activation(v), self._visible_terms(v)

    def hidden_activation(self, v: np.ndarray) -> np.ndarray:
        """``hbias + v·W`` of states ``v`` (n, n_visible) in the sampling dtype (Gaussian: ``hbias + (v / σ)·W``).

        One matrix product for two-state units; for Potts labels
        ``hbias + Σ_i W[i, v_i, :]`` (the layer's :meth:`~pymc_rbm.layers.Layer.dot`).
        """
        a = self.visible_layer.dot(v, self.W)
        a += self.hbias
        return a

    def visible_dot(self, v: np.ndarray, fields: np.ndarray) -> np.ndarray:
        """``Σ_i f_i(v_i)`` of states ``v`` for fields flattened over the visible units (and their states), float64.

        Parameters
        ----------
        v : ndarray of shape (n, n_visible)
        fields : ndarray of shape (F,) or (F, k)
            ``F = n_visible`` for two-state units (the sum is ``v·f``), ``n_visible q`` for
            Potts units, flattened as ``(unit, state)`` (the sum is ``Σ_i f[i, v_i]``).

        Returns
        -------
        ndarray of float64 of shape (n,) or (n, k)
            The visible layer's :meth:`~pymc_rbm.layers.Layer.dot` with the fields unflattened.
        """
        return self.visible_layer.dot(v, fields.reshape(self.field_shape + fields.shape[1:]), dtype=np.float64)

    def _visible_terms(self, v: np.ndarray) -> np.ndarray:
        """The visible terms of ``log f`` of each row of biases, (n, 1 + M): ``v·b_m``, or for Gaussian units the
        quadratic ``-Σ_i (v_i - b_m,i)² / (2σ_i²)`` (the same for every row, the path's base being the model's):
        the layer's :meth:`~pymc_rbm.layers.Layer.bias_log_weight`."""
        v = np.asarray(v, dtype=np.float64)
        return self.visible_layer.bias_log_weight(v, self._vb64.reshape((-1,) + self.field_shape))

    def sample_base(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` exact draws of ``v`` from the base-rate model (stochastic): visible units in the fields ``b_A``.

        The layer's :meth:`~pymc_rbm.layers.Layer.sample`: two-state and Potts units one uniform per unit,
        Gaussian units one normal per unit (``N(b_A, σ²)``).
        """
        return self.visible_layer.sample(rng, self.base_field, n, dtype=self.dtype)

    def hidden_logits(self, a: np.ndarray, coef) -> np.ndarray:
        """Tempered hidden logits ``λ_m(j) (hbias + v·W)_j`` (plus ``λ_0 c_A``) from activations ``a`` (n, H)."""
        c = np.atleast_2d(np.asarray(coef, dtype=self.dtype))
        z = self._hidden_scale(c) * a
        return z if self._hfield is None else z + c[:, 0:1] * self._hfield

    def visible_logits(self, h: np.ndarray, coef) -> np.ndarray:
        """Visible logits ``λ_0 b_A + Σ_m λ_m (vbias_m + W_m·h_m)`` of hidden states ``h`` (n, H).

        Shape (n, n_visible), or (n, n_visible, q) for Potts units (the same
        product over the flattened fields, reshaped).
        """
        c = np.atleast_2d(np.asarray(coef, dtype=self.dtype))
        fields = c @ self.vbiases + (h * self._hidden_scale(c)) @ self.WT
        return fields.reshape(fields.shape[:-1] + self.field_shape)

    def at(self, coef) -> "PathPoint":
        """The point ``λ = coef`` as a target of :func:`pymc_rbm.kernels.sweep.sweep`.

        Parameters
        ----------
        coef : array_like of shape (1 + M,) or (n, 1 + M)
            One point for all chains or one per chain.
        """
        return PathPoint(self, coef)

    def sweep(self, rng: np.random.Generator, v: np.ndarray, a: np.ndarray, coef, *, refresh: bool = True):
        """One transition that leaves ``p_λ(v)`` invariant (stochastic): the kernels' sweep at :meth:`at` ``(coef)``.

        Draws ``h ~ p_λ(h | v)``, then updates ``v`` given ``h`` by the path's
        rule (:attr:`rule`): the Gibbs rule for ``"gibbs"``, else
        flip-the-state mixed with Gibbs by ``alpha``. As a kernel on ``v`` it
        is reversible with respect to ``p_λ(v)``.

        Parameters
        ----------
        rng : numpy.random.Generator
        v : ndarray of shape (n, n_visible)
        a : ndarray of shape (n, H)
            Activations of ``v`` (from :meth:`start`).
        coef : array_like of shape (1 + M,) or (n, 1 + M)
            One point for all chains or one per chain.
        refresh : bool, default True
            Recompute the new activations by one matrix product. With
            ``False`` they are ``a`` updated by the rows of ``W`` of the
            visible units that changed (the sweep's carried hidden input);
            callers that carry activations pass ``False`` and refresh every
            :data:`~pymc_rbm.kernels.activations.FULL_EVERY` sweeps. A Potts
            path always recomputes them (:attr:`incremental`).

        Returns
        -------
        v, a, vb : the new state as :meth:`start` returns it.
        """
        refresh = refresh or not self.incremental
        state, _ = sweep(rng, RBMState(v, None, a), self.at(coef), self.rule, refresh=refresh)
        return state.v, state.hidden_input, self._visible_terms(state.v)

    # --------------------------------------------------------------- density
    def log_f(self, a: np.ndarray, vb: np.ndarray, coef) -> np.ndarray:
        """``log f_λ(v)`` of each chain at its own (or a shared) ``λ``.

        Parameters
        ----------
        a : ndarray of shape (n, H)
        vb : ndarray of shape (n, 1 + M)
        coef : array_like of shape (1 + M,) or (n, 1 + M)

        Returns
        -------
        ndarray of float64 of shape (n,)
        """
        c = np.asarray(coef, dtype=np.float64)
        lin = vb @ c if c.ndim == 1 else (vb * c).sum(axis=-1)
        return lin + log_normaliser_sum_(self.hidden_logits(a, c), self.hidden_layer)

    def log_f_ladder(self, a: np.ndarray, vb: np.ndarray, coefs, *, max_block: int = 2**18) -> np.ndarray:
        """``log f_λ(v)`` of each chain at every point of a ladder.

        The sum of ``softplus`` over chains × labels × hidden units is the
        cost of a draw of RTS's β and of SAMS's global observation; it is
        formed in blocks of chains of at most ``max_block`` elements (small
        enough to stay in cache), spread over the cores
        (:func:`~pymc_rbm._runtime.map_blocks`). The blocks do not depend on
        the number of cores, so neither does the result.

        Parameters
        ----------
        a : ndarray of shape (n, H)
        vb : ndarray of shape (n, 1 + M)
        coefs : array_like of shape (L, 1 + M)
        max_block : int
            Largest ``chains × labels × H`` block formed at once.

        Returns
        -------
        ndarray of float64 of shape (n, L)
        """
        c = np.asarray(coefs, dtype=np.float64)
        out = vb @ c.T
        scale = self._hidden_scale(c.astype(self.dtype))  # (L, 1) or (L, H)
        base = c[:, 0].astype(self.dtype)  # λ_0 of each label, for the base's hidden fields
        n, H = a.shape
        L = c.shape[0]
        rows = max(1, max_block // max(1, L * H))  # chains per block
        labels = max(1, max_block // max(1, rows * H))  # labels per block (all of them unless one chain is too big)

        def fill(chains: slice) -> None:
            for s in range(0, L, labels):
                z = scale[None, s : s + labels, :] * a[chains, None, :]
                if self._hfield is not None:
                    z += base[None, s : s + labels, None] * self._hfield
                out[chains, s : s + labels] += log_normaliser_sum_(z, self.hidden_layer)

        map_blocks(fill, (slice(i, i + rows) for i in range(0, n, rows)))
        return out


class PathPoint(NamedTuple):
    """A point ``λ`` of an :class:`AnnealingPath` as a target of :func:`pymc_rbm.kernels.sweep.sweep`.

    Attributes
    ----------
    path : AnnealingPath
    coef : array_like of shape (1 + M,) or (n, 1 + M)
    """

    path: AnnealingPath
    coef: object

    @property
    def W(self) -> np.ndarray:
        """The couplings of all models side by side, (n_visible, H) (Potts units: (n_visible, q, H), not used to
        carry the hidden input, :attr:`AnnealingPath.incremental`)."""
        return self.path.W

    @property
    def visible_layer(self):
        """The models' visible layer type."""
        return self.path.visible_layer

    @property
    def hidden_layer(self):
        """The models' hidden layer type."""
        return self.path.hidden_layer

    def hidden_input(self, v: np.ndarray) -> np.ndarray:
        """``hbias + v·W`` (n, H), the same at every point (Potts: ``hbias + Σ_i W[i, v_i, :]``)."""
        return self.path.hidden_activation(v)

    def hidden_logits(self, a: np.ndarray) -> np.ndarray:
        """``λ_m(j) (hbias + v·W)_j`` (plus ``λ_0 c_A``) from the hidden input ``a``."""
        return self.path.hidden_logits(a, self.coef)

    def visible_logits(self, h: np.ndarray) -> np.ndarray:
        """``λ_0 b_A + Σ_m λ_m (vbias_m + W_m·h_m)``."""
        return self.path.visible_logits(h, self.coef)


# ------------------------------------------------------------------- setup
def annealing_path(
    models, data=None, *, base=None, base_smoothing: float = 0.005, dtype=np.float64, operator="gibbs"
) -> AnnealingPath:
    """The annealing path from a base distribution to ``models``, with its options bound once.

    Parameters
    ----------
    models : RBMParams, SpinRBMParams, CategoricalRBMParams, GaussianRBMParams, ReLURBMParams or a sequence
        The target(s), one model or a sequence of models of one of these types; the base distribution is fitted against the first (a Gaussian RBM's is its own
        quadratic term, ``N(vbias, σ²)``).
    data : array_like of shape (n_samples, n_visible), optional
        Training data for the data base rate (binary, spins, or labels / one-hot rows of a categorical model).
    base : {None, "data", "mean_field", "target", "zero"} or array_like, optional
        The base distribution (:func:`~pymc_rbm.estimators.base_rate.base_rate_vbias`); default ``"data"``
        with data, else ``"mean_field"`` (``"zero"``, the uniform distribution, for ReLU hidden units, which
        the naive mean field does not take).
    base_smoothing : float, default 0.005
    dtype : numpy dtype, default float64
        Floating type of the sampling arithmetic.
    operator : {"gibbs", "flip"} or float in [0, 1], default "gibbs"
        Visible-layer update of the sweeps.

    Returns
    -------
    AnnealingPath

    Examples
    --------
    >>> from pymc_rbm import RBMParams
    >>> from pymc_rbm.estimators import ais, annealing_path, bar
    >>> p = RBMParams.random(12, 6, rng=0)
    >>> path = annealing_path(p, operator="flip", dtype="float32")
    >>> round(ais(path, n_chains=50, n_steps=500, rng=0).log_z, 1)  # doctest: +SKIP
    """
    dtype = check_sampling_dtype(dtype)
    types = path_model_types()
    if isinstance(models, types):
        first = models
    elif isinstance(models, (list, tuple)) and models and all(isinstance(m, types) for m in models):
        first = models[0]
    else:
        raise TypeError(
            "params must be an RBMParams, SpinRBMParams, CategoricalRBMParams, GaussianRBMParams or ReLURBMParams or "
            "a non-empty sequence of them, "
            f"got {type(models).__name__}"
        )
    if isinstance(first, ReLURBMParams):  # the naive mean field is of binary hidden units
        if isinstance(base, str) and base == "mean_field":
            raise ValueError(
                'base="mean_field" needs binary hidden units; for ReLU hidden units pass data= (the data base '
                'rate), or base="zero", "target" or an array of visible biases'
            )
        if base is None and data is None:
            base = "zero"
    b_a = base_rate_vbias(first, data, base=base, smoothing=base_smoothing)
    return AnnealingPath(models, b_a, dtype=dtype, operator=operator)

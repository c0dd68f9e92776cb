"""The base-rate model an annealing path starts from: independent visible units with known ``log Z``.

Salakhutdinov & Murray (2008) start AIS from a model ``A`` without couplings, whose visible
biases ``b_A`` are fitted to the data; :func:`base_rate_vbias` gives those and the other
starts (the model's mean-field solution, its own biases, the uniform distribution).
:class:`~pymc_rbm.estimators.path.AnnealingPath` takes the biases. For a categorical (Potts)
model they are fields of shape ``(n_visible, q)``: the log of the smoothed state frequencies
(:func:`categorical_mean_field` gives the mean-field ones). :func:`mean_field_fields` gives the fields of
the mean-field product on both layers, a base with hidden fields too
(:class:`~pymc_rbm.estimators.path.AnnealingPath`'s ``base_hbias``), and :func:`mixture_reference` a
mixture of such products, one per mode, for the ladders of replica exchange.
"""

from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np

from pymc_rbm._runtime import on_one_blas_thread
from pymc_rbm.categorical.params import as_labels, visible_fields
from pymc_rbm.estimators.mean_field import log_partition_mean_field, naive_mean_field
from pymc_rbm.kernels.mixture_reference import ProductMixture
from pymc_rbm.layers import BERNOULLI, Gaussian, Potts, softmax_last
from pymc_rbm.params import RBMParams
from pymc_rbm.primitives import sigmoid
from pymc_rbm.validation import check_binary

__all__ = ["base_rate_vbias", "categorical_mean_field", "MeanFieldFields", "mean_field_fields", "mixture_reference"]


def categorical_mean_field(params, *, damping: float = 0.5, max_iter: int = 1000, tol: float = 1e-9) -> np.ndarray:
    """The visible marginals of the naive mean-field solution of a categorical RBM (deterministic).

    Iterates ``m_h = sigmoid(hbias + Σ_{i,k} m_v[i, k] W[i, k, :])`` and
    ``m_v ← (1 - d) softmax(vbias + W·m_h) + d m_v`` (damping ``d``) from
    ``m_v = softmax(vbias)`` until ``m_v`` moves by less than ``tol``; the
    one-hot form of the binary naive mean field. Used as a base distribution
    only, so an iteration that does not converge (sharp models) still gives a
    valid, if less close, base.

    Parameters
    ----------
    params : CategoricalRBMParams
    damping : float in [0, 1), default 0.5
    max_iter : int, default 1000
    tol : float, default 1e-9

    Returns
    -------
    ndarray of float64 of shape (n_visible, n_states)
        Each row a distribution over the unit's states.
    """
    W_flat = np.asarray(params.W_flat, dtype=np.float64)
    m_v = softmax_last(np.asarray(params.vbias, dtype=np.float64))
    for _ in range(max_iter):
        m_h = sigmoid(params.hbias + m_v.ravel() @ W_flat)
        new = (1.0 - damping) * softmax_last(visible_fields(m_h, params)) + damping * m_v
        moved = float(np.max(np.abs(new - m_v)))
        m_v = new
        if moved < tol:
            break
    return m_v


def _categorical_base(params, data, base, smoothing: float) -> np.ndarray:
    """:func:`base_rate_vbias` of a categorical model: fields (n_visible, q), the log of smoothed frequencies."""
    n, q = params.n_visible, params.n_states
    if isinstance(base, str):
        if base in ("data", "mean_field"):
            s = float(smoothing)
            if not (np.isfinite(s) and s > 0.0):
                raise ValueError(f"smoothing must be a positive number, got {smoothing!r}")
            if base == "mean_field":
                freq = categorical_mean_field(params)
            else:
                if data is None:
                    raise ValueError('base="data" needs data=')
                labels = as_labels(data, params).reshape(-1, n)
                if labels.shape[0] == 0:
                    raise ValueError("data has no rows")
                freq = params.visible.one_hot(labels).mean(axis=0)
            return np.log((freq + s) / (1.0 + q * s))
        if base == "target":
            return np.array(params.vbias, dtype=np.float64)
        if base == "zero":
            return np.zeros((n, q))
        raise ValueError(
            f'base must be "data", "mean_field", "target", "zero" or an array of shape ({n}, {q}), got {base!r}'
        )
    b = np.array(base, dtype=np.float64, copy=True)
    if b.shape != (n, q) or not np.all(np.isfinite(b)):
        raise ValueError(f"base fields must be finite numbers of shape ({n}, {q}), got shape {b.shape}")
    return b


def base_rate_vbias(params: RBMParams, data=None, *, base=None, smoothing: float = 0.005) -> np.ndarray:
    """Visible biases ``b_A`` of the base-rate model that annealing starts from.

    Parameters
    ----------
    params : RBMParams, SpinRBMParams, CategoricalRBMParams or GaussianRBMParams
        The target RBM. A Gaussian-Bernoulli RBM's base is its own quadratic
        term, ``N(vbias, σ²)``: its ``vbias`` for ``None`` (with or without
        data) and ``"target"``; the other choices are refused. For a model of other units than {0, 1} (±1 spins)
        the biases are the fields of its visible layer type in which the unit
        is "high" with the probabilities below, ``logit(p_i) / (high - low)``.
        For categorical (Potts) units they are fields of shape
        ``(n_visible, q)``: ``log p_ik`` with ``p_ik = (f_ik + s) / (1 + q s)``
        for the state frequencies ``f`` (the data's, or the mean-field
        marginals of :func:`categorical_mean_field`), the model's ``vbias``
        for ``"target"``, zeros for ``"zero"``.
    data : array_like of shape (n_samples, n_visible), optional
        Training data for the data-based base rate: binary, spins, or labels
        (one-hot rows of shape (n_samples, n_visible, q) too) of a categorical model.
    base : {None, "data", "mean_field", "target", "zero"} or array_like of shape (n_visible,)
        ``"data"`` (the default when ``data`` is given): Salakhutdinov &
        Murray's base-rate model, independent units with the smoothed mean
        of the data, ``p_i = (mean_i + s) / (1 + 2 s)`` and
        ``b_A,i = log(p_i / (1 - p_i))``. ``"mean_field"`` (the default
        without data): the same with the visible magnetizations ``m_v`` of
        the model's naive mean-field solution
        (:func:`~pymc_rbm.estimators.log_partition_mean_field`) in place of
        the data means, a start that Prat Pou, Romero, Martí & Mazzanti (2025)
        recommend; docs/estimators.md has the measurements that made it the
        default. ``"target"``: the target's own visible biases with zero
        weights, so only the couplings and hidden biases are annealed.
        ``"zero"``: the uniform distribution (Salakhutdinov & Murray's
        fallback). An array: those biases.
    smoothing : float, default 0.005
        ``s`` above, in pseudo-counts per data row, split between "on" and
        "off" so that no bias is infinite (``0.005 <= p_i <= 0.995`` by
        default). Salakhutdinov & Murray's (2008) code adds ``lp = 5``
        pseudo-counts per mini-batch of 100 cases to the "on" count only,
        ``p_i = (mean_i + 0.05) / 1.05``, which is infinite for a unit on in
        every row. The default's lighter smoothing gave AIS log weights that
        spread less than theirs (``s = 0.05``) on the small MNIST models, and
        much heavier smoothing was worse; on large models the choice matters
        little, since the variance comes from near ``β = 1``
        (docs/estimators.md has the measurements).

    Returns
    -------
    ndarray of float64 of shape (n_visible,), or (n_visible, q) for a categorical model
    """
    n = params.n_visible
    layer = params.visible
    if base is None and not isinstance(layer, Gaussian):
        base = "data" if data is not None else "mean_field"
    if isinstance(layer, Potts):
        return _categorical_base(params, data, base, smoothing)
    if isinstance(layer, Gaussian):
        if not (base is None or (isinstance(base, str) and base == "target")):
            raise ValueError(
                f"a Gaussian-Bernoulli RBM is annealed from its own quadratic term, N(vbias, sigma**2): "
                f'base must be None or "target", got {base!r}'
            )
        return np.array(params.vbias, dtype=np.float64)
    if isinstance(base, str):
        if base in ("data", "mean_field"):
            s = float(smoothing)
            if not (np.isfinite(s) and s > 0.0):
                raise ValueError(f"smoothing must be a positive number, got {smoothing!r}")
            binary = layer == BERNOULLI
            if base == "mean_field":  # m_v of the binary form: the probabilities that the units are high
                mean = log_partition_mean_field(params if binary else params.to_binary()).diagnostics["m_v"]
            else:
                if data is None:
                    raise ValueError('base="data" needs data=')
                if binary:
                    x = check_binary(data, n, name="data").reshape(-1, n)
                else:
                    x = layer.to_bits(layer.check(data, n, name="data")).reshape(-1, n)
                if x.shape[0] == 0:
                    raise ValueError("data has no rows")
                mean = x.mean(axis=0)
            p = (mean + s) / (1.0 + 2.0 * s)
            logit = np.log(p) - np.log1p(-p)
            return logit if binary else logit / layer.spacing
        if base == "target":
            return np.array(params.vbias, dtype=np.float64)
        if base == "zero":
            return np.zeros(n)
        raise ValueError(
            f'base must be "data", "mean_field", "target", "zero" or an array of {n} biases, got {base!r}'
        )
    b = np.array(base, dtype=np.float64, copy=True)
    if b.shape != (n,) or not np.all(np.isfinite(b)):
        raise ValueError(f"base biases must be {n} finite numbers, got shape {b.shape}")
    with np.errstate(over="ignore"):
        log_z = float(np.logaddexp(0.0, b).sum())
    if not np.isfinite(log_z):
        raise ValueError(
            f"base biases as large as {np.abs(b).max():.3g} overflow the base's log partition function; "
            "give base-rate logits of a sensible size (a probability p is the logit log(p / (1 - p)))"
        )
    return b




class MeanFieldFields(NamedTuple):
    """The naive mean-field product of a binary RBM as fields on both layers (:func:`mean_field_fields`).

    Attributes
    ----------
    vbias : ndarray of float64 of shape (n_visible,)
        ``b = vbias + W·m_h``, so that ``sigmoid(b) = m_v``.
    hbias : ndarray of float64 of shape (n_hidden,)
        ``c = hbias + Wᵀ·m_v``, so that ``sigmoid(c) = m_h``.
    gap : float
        The mean-field estimate's ``gap``: how far, in nats of its bound on
        ``log Z``, the next distinct fixed point lies below the best. A small
        gap says that the model has several solutions of about equal weight
        (symmetric patterns, say), of which the product stands for one.
    """

    vbias: np.ndarray
    hbias: np.ndarray
    gap: float


@on_one_blas_thread
def mean_field_fields(params: RBMParams) -> MeanFieldFields:
    """The fields of the naive mean-field product of a binary RBM on both layers (deterministic).

    At the best fixed point ``(m_v, m_h)`` of
    :func:`~pymc_rbm.estimators.log_partition_mean_field`, every unit is an independent Bernoulli in the
    field the other layer's magnetisations give it. As a reference for
    tempering, ``exp(b·v + c·h)`` is the mean-field distribution itself,
    hidden units included: along the path from it to the RBM the hidden
    layer keeps about the distribution it has in the model, where a
    reference on the visible units alone starts the hidden units as fair
    coins.

    Parameters
    ----------
    params : RBMParams

    Returns
    -------
    MeanFieldFields
    """
    if not isinstance(params, RBMParams) or params.visible != BERNOULLI or params.hidden != BERNOULLI:
        raise TypeError(f"mean_field_fields needs a binary RBMParams, got {type(params).__name__}")
    est = log_partition_mean_field(params)
    m_v, m_h = est.diagnostics["m_v"], est.diagnostics["m_h"]
    W = np.asarray(params.W, dtype=np.float64)
    return MeanFieldFields(params.vbias + W @ m_h, params.hbias + m_v @ W, est.diagnostics["gap"])


#: Fixed points whose visible magnetisations differ by at most this much in every unit are one component.
DISTINCT_COMPONENTS = 0.5


@on_one_blas_thread
def mixture_reference(params: RBMParams, data=None, *, n_components: int = 64, clip: float = 1e-3,
                      rng=None) -> ProductMixture:
    """A mixture of the naive mean-field products of a binary RBM's modes, in equal weights (stochastic).

    The naive mean-field iteration of :func:`~pymc_rbm.estimators.log_partition_mean_field` runs from each
    start to a fixed point ``(m_v, m_h)``; the distinct fixed points, best bound on ``log Z`` first, up to
    ``n_components`` of them, are the components. The starts are ``n_components`` rows of ``data`` when
    it is given (training data, or the draws of an earlier run), else the visible units that ``vbias``
    turns on and each hidden unit's receptive field, those that ``vbias + W[:, j]`` turns on. The weights
    are equal: a fixed point's bound ranks sharp solutions above broad ones (on the MNIST RBMs the blank
    image has the best bound), so it is no guide to a mode's mass.

    A mode that no component covers has almost no mass on the ladder below ``β = 1`` and is reached by
    the top rung's own moves alone: the components must cover the modes. From data they cover what the
    data holds; from the model alone they cover what the starts lead to (on the bundled 4x4 model, 10 of
    its 30 patterns, and the chains stay where they start). Check the chains (their agreement, the round
    trips) before trusting them, or start from data or from draws that cover the modes.

    Parameters
    ----------
    params : RBMParams
        A binary RBM.
    data : array_like of shape (n_samples, n_visible), optional
        Binary rows to start from; not modified.
    n_components : int, default 64
    clip : float, default 1e-3
        Of :meth:`~pymc_rbm.kernels.mixture_reference.ProductMixture.from_probabilities`.
    rng : None, int or numpy.random.Generator
        Chooses the rows of ``data``.

    Returns
    -------
    ProductMixture
        The reference of ``ReplicaExchange(reference=...)``.

    Raises
    ------
    TypeError
        For a model other than a binary RBM.
    ValueError
        For ``n_components < 1`` or data that is not binary of the model's width.
    """
    if not isinstance(params, RBMParams) or params.visible != BERNOULLI or params.hidden != BERNOULLI:
        raise TypeError(f"mixture_reference needs a binary RBMParams, got {type(params).__name__}")
    if isinstance(n_components, bool) or not isinstance(n_components, numbers.Integral) or n_components < 1:
        raise ValueError(f"n_components must be an integer >= 1, got {n_components!r}")
    W = np.asarray(params.W, dtype=np.float64)
    rng = np.random.default_rng(rng)
    if data is None:
        fields = np.hstack([np.zeros((params.n_visible, 1)), W])  # no hidden unit on, then each one alone
        starts = (params.vbias[:, None] + fields > 0).T.astype(np.float64)
    else:
        d = check_binary(data, params.n_visible, name="data")
        starts = d[np.sort(rng.choice(d.shape[0], size=min(n_components, d.shape[0]), replace=False))]
    sol, bound, _, _ = naive_mean_field(params, n_starts=1, data=starts, n_data_starts=starts.shape[0], damping=0.0,
                                        tol=1e-9, max_iter=2000, temperatures=None, rng=rng)
    keep: list[int] = []
    for i in np.argsort(-bound[1:], kind="stable") + 1:  # the starts' fixed points; index 0 is a random start's
        if all(np.abs(sol.m_v[i] - sol.m_v[j]).max() > DISTINCT_COMPONENTS for j in keep):
            keep.append(int(i))
            if len(keep) == n_components:
                break
    return ProductMixture.from_probabilities(sol.m_v[keep], sol.m_h[keep], clip=clip)

"""The one target record: a binary RBM at inverse temperature β plus per-unit fields, with its energy.

Every distribution the samplers and the estimators move in is of one form,

    p(v, h) ∝ exp(β (v·vbias + h·hbias + v·W·h) + v·φ + h·ψ),

for binary (Bernoulli 0/1) units: the RBM at ``β`` (:meth:`FieldTarget.at_beta`),
a point of the annealing path between a base-rate model and the RBM (AIS,
Salakhutdinov & Murray 2008; :meth:`FieldTarget.on_path`), a rung of a
ladder, a conditional tilted by the other terms of a larger model (the
fields). :class:`FieldTarget` holds that as a ``NamedTuple`` of arrays, so
the same record goes to the NumPy sweep (:func:`pymc_rbm.kernels.sweep.sweep`,
through the methods of the record), to Numba (a tuple of arrays) and to the
JAX sweep (:func:`pymc_rbm.jax.sweep.sweep`; JAX takes it as a pytree).

The record's energy is ``U(v, h) = -log`` of the unnormalised density,

    U(v, h) = β E(v, h) - v·φ - h·ψ,    E(v, h) = -v·W·h - vbias·v - hbias·h,

and exchanging the states of two replicas with targets ``a`` and ``b`` is a
Metropolis move with log ratio ``U_a(x_a) + U_b(x_b) - U_a(x_b) - U_b(x_a)``
(:func:`swap_log_ratio`; the normalisers cancel). Along a ladder of one RBM
``U`` is linear in ``(β, φ, ψ)``, so the ratio of neighbours is
``(β_b - β_a)(E(x_b) - E(x_a)) - (φ_b - φ_a)·(v_b - v_a) - (ψ_b - ψ_a)·(h_b - h_a)``
(:func:`ladder_log_ratio`), which for a β-ladder without fields is the
parallel-tempering ratio ``(β_b - β_a)(E(x_b) - E(x_a))``.

Shapes: ``beta`` is a scalar or one value per chain with a trailing unit axis,
shape ``(n_chains, 1)`` as :func:`~pymc_rbm.kernels.state.check_beta` returns
it (a ladder: ``(n_temperatures, 1, 1)`` over states of shape
``(n_temperatures, n_chains, n_units)``); the fields broadcast to
``(..., n_chains, n_units)``, and are the number ``0.0`` when absent (a term
that is then never computed). The functions of this module compute with
array operators only and take the matrix product as an argument
(``matmul``, default :func:`pymc_rbm.primitives.product`), so one formula
serves NumPy and JAX (which passes its full-precision product); the module
itself imports neither JAX nor PyMC.

The record of a density is not unique: ``(vbias, φ)`` and
``(vbias - c, φ + β c)`` are the same target. :meth:`FieldTarget.on_path`
stores the path's point as the RBM with biases ``vbias - b_A`` at ``β`` plus
the untempered base field ``b_A``: the field is the same at every β, and the
visible logits are the ones AIS computes, ``b_A + β (vbias - b_A + W·h)``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from pymc_rbm.kernels.state import check_beta
from pymc_rbm.layers import BERNOULLI
from pymc_rbm.primitives import product

__all__ = [
    "FieldTarget",
    "tempered",
    "annealing_point",
    "hidden_input",
    "hidden_logits",
    "visible_input",
    "visible_logits",
    "rbm_energy",
    "energy",
    "swap_log_ratio",
    "ladder_log_ratio",
]


class FieldTarget(NamedTuple):
    """A binary RBM at inverse temperature β plus per-unit fields: one sampling target, arrays only.

    The density is ``p(v, h) ∝ exp(β (v·vbias + h·hbias + v·W·h) + v·visible_field + h·hidden_field)``
    over units in {0, 1}.

    Attributes
    ----------
    W : array of shape (n_visible, n_hidden)
    vbias : array of shape (n_visible,)
    hbias : array of shape (n_hidden,)
    beta : float or array of shape (n_chains, 1), default 1.0
        Shared or one per chain (trailing unit axis; more leading axes for a
        ladder). Nonnegative; the constructors check it.
    visible_field : float or array broadcastable to (n_chains, n_visible), default 0.0
        ``φ``, untempered.
    hidden_field : float or array broadcastable to (n_chains, n_hidden), default 0.0
        ``ψ``, untempered.

    Notes
    -----
    The methods are the NumPy sweep's target protocol
    (:mod:`pymc_rbm.kernels.sweep`): ``W``, :meth:`hidden_input`,
    :meth:`hidden_logits`, :meth:`visible_logits`; both layers are Bernoulli.
    The module's functions compute the same with any matrix product (JAX).

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm import RBMParams
    >>> from pymc_rbm.kernels import init_state
    >>> from pymc_rbm.kernels.sweep import sweep
    >>> from pymc_rbm.kernels.target import FieldTarget
    >>> params = RBMParams.random(6, 4, rng=1)
    >>> target = FieldTarget.at_beta(params, 0.5)._replace(visible_field=np.full(6, -1.0))
    >>> rng = np.random.default_rng(0)
    >>> state, info = sweep(rng, init_state(rng, np.zeros((10, 6)), params), target)
    >>> state.v.shape, target.energy(state.v, state.h).shape
    ((10, 6), (10,))
    """

    W: np.ndarray
    vbias: np.ndarray
    hbias: np.ndarray
    beta: object = 1.0
    visible_field: object = 0.0
    hidden_field: object = 0.0

    @classmethod
    def at_beta(cls, params, beta=None, n_chains: int = 1) -> FieldTarget:
        """The RBM ``params`` at ``beta`` without fields, validated.

        Parameters
        ----------
        params : RBMParams
            Binary units on both layers.
        beta : None, float or array_like of shape (n_chains,)
            As :func:`~pymc_rbm.kernels.state.check_beta` takes it (None: 1).
        n_chains : int, default 1

        Returns
        -------
        FieldTarget

        Raises
        ------
        ValueError
            For a negative or non-finite ``beta`` or a wrong shape.
        TypeError
            For parameters whose units are not Bernoulli.
        """
        _check_binary(params)
        b = check_beta(beta, n_chains)
        return tempered(params.W, params.vbias, params.hbias, 1.0 if b is None else b)

    @classmethod
    def on_path(cls, params, base_vbias, beta, n_chains: int = 1) -> FieldTarget:
        """The point ``β`` of the annealing path from the base-rate model ``b_A`` to ``params``, validated.

        ``p_β(v, h) ∝ exp(b_A·v + β ((vbias - b_A)·v + hbias·h + v·W·h))``:
        the base-rate model (independent visible units, ``P(v_i = 1) =
        sigmoid(b_A,i)``, uniform hidden units) at β = 0, the RBM at β = 1
        (Salakhutdinov & Murray 2008). Equivalently the RBM at β with the
        visible field ``(1 - β) b_A``.

        Parameters
        ----------
        params : RBMParams
            Binary units on both layers.
        base_vbias : array_like of shape (n_visible,)
            ``b_A``.
        beta : float or array_like of shape (n_chains,)
        n_chains : int, default 1

        Returns
        -------
        FieldTarget
            ``FieldTarget(W, vbias - b_A, hbias, β, visible_field=b_A)``.
        """
        _check_binary(params)
        b_a = np.asarray(base_vbias, dtype=np.result_type(params.vbias.dtype, np.float64))
        if b_a.shape != params.vbias.shape or not np.all(np.isfinite(b_a)):
            raise ValueError(f"base_vbias must be finite, of shape {params.vbias.shape}; got shape {b_a.shape}")
        b = check_beta(beta, n_chains)
        return annealing_point(params.W, params.vbias, params.hbias, b_a, 1.0 if b is None else b)

    # ---- the NumPy sweep's target protocol
    def hidden_input(self, v):
        """``hbias + v·W``, (n_chains, n_hidden): the untempered hidden input."""
        return hidden_input(self, v)

    def hidden_logits(self, a):
        """``β a + ψ`` from the hidden input ``a`` (not modified), (n_chains, n_hidden)."""
        return hidden_logits(self, a)

    def visible_logits(self, h):
        """``β (vbias + W·h) + φ``, (n_chains, n_visible)."""
        return visible_logits(self, h)

    def energy(self, v, h):
        """``U(v, h) = β E(v, h) - v·φ - h·ψ``, shape (...) (:func:`energy`)."""
        return energy(self, v, h)


def _check_binary(params) -> None:
    for name in ("visible", "hidden"):
        layer = getattr(params, name, BERNOULLI)
        if layer != BERNOULLI:
            raise TypeError(f"a FieldTarget has Bernoulli units; the {name} layer of these parameters is {layer!r}")


def _is_zero(x) -> bool:
    """Whether ``x`` is the number 0 itself (an absent field: its term is not computed)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x == 0


def _per_chain(beta):
    """β without its trailing unit axis: what multiplies a per-chain energy."""
    return beta if np.ndim(beta) == 0 else beta[..., 0]


def _field_term(x, field):
    """``x·field`` over the unit axis."""
    return (x * field).sum(axis=-1)


# ------------------------------------------------------------ constructors
def tempered(W, vbias, hbias, beta=1.0) -> FieldTarget:
    """The RBM at ``beta`` without fields, from its arrays (NumPy or JAX; not validated).

    Parameters
    ----------
    W : array of shape (n_visible, n_hidden)
    vbias : array of shape (n_visible,)
    hbias : array of shape (n_hidden,)
    beta : float or array of shape (n_chains, 1), default 1.0

    Returns
    -------
    FieldTarget
    """
    return FieldTarget(W, vbias, hbias, beta)


def annealing_point(W, vbias, hbias, base_vbias, beta) -> FieldTarget:
    """The point ``beta`` of the path from the base-rate model ``b_A`` to the RBM (NumPy or JAX; not validated).

    Parameters
    ----------
    W, vbias, hbias : arrays
        The RBM.
    base_vbias : array of shape (n_visible,)
        ``b_A``.
    beta : float or array of shape (n_chains, 1)

    Returns
    -------
    FieldTarget
        ``FieldTarget(W, vbias - b_A, hbias, β, visible_field=b_A)``, the same
        density as ``FieldTarget(W, vbias, hbias, β, visible_field=(1 - β) b_A)``
        (module docstring).
    """
    return FieldTarget(W, vbias - base_vbias, hbias, beta, visible_field=base_vbias)


# ------------------------------------------------------------ conditionals
def hidden_input(target: FieldTarget, v, matmul=product):
    """The untempered hidden input ``hbias + v·W``.

    Parameters
    ----------
    target : FieldTarget
    v : array of shape (..., n_visible)
    matmul : callable, default :func:`pymc_rbm.primitives.product`

    Returns
    -------
    array of shape (..., n_hidden)
    """
    return matmul(v, target.W) + target.hbias


def hidden_logits(target: FieldTarget, a):
    """The hidden logits ``β a + ψ`` from the hidden input ``a``: ``P(h_j = 1 | v) = sigmoid``.

    Parameters
    ----------
    target : FieldTarget
    a : array of shape (..., n_hidden)
        :func:`hidden_input`; not modified.

    Returns
    -------
    array of shape (..., n_hidden)
    """
    x = a * target.beta
    return x if _is_zero(target.hidden_field) else x + target.hidden_field


def visible_input(target: FieldTarget, h, matmul=product):
    """The untempered visible input ``vbias + W·h``.

    Parameters
    ----------
    target : FieldTarget
    h : array of shape (..., n_hidden)
    matmul : callable, default :func:`pymc_rbm.primitives.product`

    Returns
    -------
    array of shape (..., n_visible)
    """
    return matmul(h, target.W.T) + target.vbias


def visible_logits(target: FieldTarget, h, matmul=product):
    """The visible logits ``β (vbias + W·h) + φ``: ``P(v_i = 1 | h) = sigmoid``.

    Parameters
    ----------
    target : FieldTarget
    h : array of shape (..., n_hidden)
    matmul : callable, default :func:`pymc_rbm.primitives.product`

    Returns
    -------
    array of shape (..., n_visible)
        For NumPy in the dtype of the visible input (β is multiplied in place
        into that fresh array, as :class:`~pymc_rbm.kernels.sweep.RBMAtBeta` does).
    """
    x = visible_input(target, h, matmul)
    x *= target.beta  # NumPy: in place, in the input's dtype; JAX: a new array
    return x if _is_zero(target.visible_field) else x + target.visible_field


# ------------------------------------------------------------ energies
def rbm_energy(target: FieldTarget, v, h, matmul=product):
    """The RBM's energy ``E(v, h) = -h·(hbias + v·W) - v·vbias``, untempered and without the fields.

    Parameters
    ----------
    target : FieldTarget
    v : array of shape (..., n_visible)
    h : array of shape (..., n_hidden)
    matmul : callable, default :func:`pymc_rbm.primitives.product`

    Returns
    -------
    array of shape (...)
        :func:`pymc_rbm.energy.energy` of the record's couplings and biases,
        summed in another order (equal to rounding).
    """
    return -(hidden_input(target, v, matmul) * h).sum(axis=-1) - _field_term(v, target.vbias)


def energy(target: FieldTarget, v, h, matmul=product):
    """The target's energy ``U(v, h) = β E(v, h) - v·φ - h·ψ``: ``p(v, h) ∝ exp(-U(v, h))``.

    Parameters
    ----------
    target : FieldTarget
    v : array of shape (..., n_visible)
    h : array of shape (..., n_hidden)
    matmul : callable, default :func:`pymc_rbm.primitives.product`

    Returns
    -------
    array of shape (...)
        With ``beta`` of shape (n_chains, 1), ``(...)`` ends in n_chains.
    """
    u = _per_chain(target.beta) * rbm_energy(target, v, h, matmul)
    if not _is_zero(target.visible_field):
        u = u - _field_term(v, target.visible_field)
    if not _is_zero(target.hidden_field):
        u = u - _field_term(h, target.hidden_field)
    return u


def swap_log_ratio(target_a: FieldTarget, target_b: FieldTarget, x_a, x_b, matmul=product):
    """Log Metropolis ratio of exchanging the states of two replicas: ``U_a(x_a) + U_b(x_b) - U_a(x_b) - U_b(x_a)``.

    Any two records (they may hold different RBMs, as the rungs of a ladder
    of models do); for rungs of one RBM :func:`ladder_log_ratio` gives the
    same without subtracting large energies.

    Parameters
    ----------
    target_a, target_b : FieldTarget
    x_a, x_b : tuple (v, h)
        The replicas' states, ``v`` of shape (..., n_visible), ``h`` (..., n_hidden).
    matmul : callable, default :func:`pymc_rbm.primitives.product`

    Returns
    -------
    array of shape (...)
    """
    return (
        energy(target_a, *x_a, matmul)
        + energy(target_b, *x_b, matmul)
        - energy(target_a, *x_b, matmul)
        - energy(target_b, *x_a, matmul)
    )


def _rung_difference(x, ndim: int):
    """``x[1:] - x[:-1]`` along the rung axis; None where ``x`` is the same on every rung (fewer axes than ``ndim``)."""
    if _is_zero(x) or np.ndim(x) < ndim:
        return None
    return x[1:] - x[:-1]


def ladder_log_ratio(ladder: FieldTarget, v, h, matmul=product):
    """Log Metropolis ratio of exchanging every neighbouring pair of a ladder of one RBM.

    Rung ``r`` is the record with ``beta[r]``, ``visible_field[r]`` and
    ``hidden_field[r]`` (leading axis: the rungs) and the ladder's shared
    ``W``, ``vbias`` and ``hbias``. Its energy is linear in ``(β, φ, ψ)``, so
    :func:`swap_log_ratio` of rungs ``r`` and ``r + 1`` is

        (β_{r+1} - β_r)(E(x_{r+1}) - E(x_r))
            - (φ_{r+1} - φ_r)·(v_{r+1} - v_r) - (ψ_{r+1} - ψ_r)·(h_{r+1} - h_r),

    with ``E`` (:func:`rbm_energy`) evaluated once per replica; a β-ladder
    without fields gives parallel tempering's ``(β_{r+1} - β_r)(E_{r+1} - E_r)``.

    Parameters
    ----------
    ladder : FieldTarget
        ``beta`` of shape (n_temperatures, 1, 1) (one per rung) or
        (n_temperatures, n_chains, 1); each field with a leading rung axis,
        shape (n_temperatures, 1 or n_chains, n_units), or with fewer axes
        than the states (or 0): the same on every rung, and out of the ratio.
    v : array of shape (n_temperatures, n_chains, n_visible)
    h : array of shape (n_temperatures, n_chains, n_hidden)
    matmul : callable, default :func:`pymc_rbm.primitives.product`

    Returns
    -------
    array of shape (n_temperatures - 1, n_chains)
    """
    e = rbm_energy(ladder, v, h, matmul)
    d_beta = _rung_difference(_per_chain(ladder.beta), e.ndim)
    out = 0.0 * e[1:] if d_beta is None else d_beta * (e[1:] - e[:-1])
    for x, field in ((v, ladder.visible_field), (h, ladder.hidden_field)):
        d_field = _rung_difference(field, x.ndim)
        if d_field is not None:
            out = out - _field_term(x[1:] - x[:-1], d_field)
    return out

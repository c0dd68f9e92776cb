"""Categorical (Potts) RBMs: their parameters, energies and the sweep engine's target.

:class:`CategoricalRBMParams` holds ``W`` ``(n_visible, n_states, n_hidden)``,
``vbias`` ``(n_visible, n_states)`` and ``hbias`` ``(n_hidden,)``, validated and
read-only; the energies are written once for NumPy and PyTensor; and
:class:`CategoricalAtBeta` is the target at which
:func:`pymc_rbm.kernels.sweep.sweep` samples the RBM (the model, the gauge and
the layers are described in :mod:`pymc_rbm.categorical`).
"""


from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np

from pymc_rbm.layers import BERNOULLI, Layer, Potts
from pymc_rbm.params import StoredArrays
from pymc_rbm.primitives import is_symbolic, softplus
from pymc_rbm.validation import check_float_array, check_real

__all__ = [
    "CategoricalAtBeta",
    "CategoricalRBMParams",
    "as_labels",
    "at_beta",
    "energy",
    "free_energy",
    "hidden_input",
    "one_hot",
    "visible_fields",
]

# ----------------------------------------------------------------------------- parameters
@dataclass(frozen=True, eq=False)
class CategoricalRBMParams(StoredArrays):
    """Parameters of a Potts-Bernoulli RBM (module docstring for the energy and the gauge).

    Parameters
    ----------
    W : array_like of shape (n_visible, n_states, n_hidden)
        ``W[i, k, j]`` couples value ``k`` of visible unit ``i`` to hidden unit ``j``.
    vbias : array_like of shape (n_visible, n_states)
        ``vbias[i, k]``: the field on value ``k`` of visible unit ``i``.
    hbias : array_like of shape (n_hidden,)
    dtype : numpy floating dtype, default float64

    Notes
    -----
    The arrays are copied and made read-only, as in :class:`~pymc_rbm.params.RBMParams`.
    ``visible`` is the :class:`~pymc_rbm.layers.Potts` layer of ``n_states``
    values, ``hidden`` the Bernoulli layer.

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm.categorical import CategoricalRBMParams
    >>> p = CategoricalRBMParams(np.zeros((4, 3, 2)), np.zeros((4, 3)), np.zeros(2))
    >>> p.n_visible, p.n_states, p.n_hidden
    (4, 3, 2)
    """

    FINGERPRINT_TAG: ClassVar[bytes] = b"categorical"
    W: np.ndarray
    vbias: np.ndarray
    hbias: np.ndarray

    def __init__(self, W, vbias, hbias, *, dtype=np.float64):
        W = check_float_array(W, "W", 3, dtype=dtype, readonly=True)
        vbias = check_float_array(vbias, "vbias", 2, dtype=dtype, readonly=True)
        hbias = check_float_array(hbias, "hbias", 1, dtype=dtype, readonly=True)
        n, q, H = W.shape
        if n == 0 or H == 0:
            raise ValueError(f"W must have at least one visible and one hidden unit, got shape {W.shape}")
        if q < 2:
            raise ValueError(f"categorical units need at least 2 states (W.shape[1]), got shape {W.shape}")
        if vbias.shape != (n, q):
            raise ValueError(f"vbias has shape {vbias.shape}, but W of shape {W.shape} needs ({n}, {q})")
        if hbias.shape != (H,):
            raise ValueError(f"hbias has shape {hbias.shape}, but W of shape {W.shape} needs ({H},)")
        object.__setattr__(self, "W", W)
        object.__setattr__(self, "vbias", vbias)
        object.__setattr__(self, "hbias", hbias)

    # ------------------------------------------------------------------ shape
    @property
    def n_visible(self) -> int:
        """Number of visible (categorical) units."""
        return self.W.shape[0]

    @property
    def n_states(self) -> int:
        """Number of values ``q`` of each visible unit."""
        return self.W.shape[1]

    @property
    def n_hidden(self) -> int:
        """Number of hidden units."""
        return self.W.shape[2]

    @property
    def visible(self) -> Potts:
        """The visible layer type: :class:`~pymc_rbm.layers.Potts` units of ``n_states`` values."""
        return Potts(self.n_states)

    @property
    def hidden(self) -> Layer:
        """The hidden layer type: Bernoulli units."""
        return BERNOULLI

    @property
    def W_flat(self) -> np.ndarray:
        """``W`` as a matrix of shape (n_visible * n_states, n_hidden): the couplings of one-hot inputs."""
        return self.W.reshape(-1, self.n_hidden)

    def __repr__(self) -> str:
        return (
            f"CategoricalRBMParams(n_visible={self.n_visible}, n_states={self.n_states}, "
            f"n_hidden={self.n_hidden}, dtype={self.dtype})"
        )

    def astype(self, dtype) -> CategoricalRBMParams:
        """A copy with arrays of another floating type."""
        return CategoricalRBMParams(self.W, self.vbias, self.hbias, dtype=dtype)

    def zero_sum_gauge(self) -> tuple[CategoricalRBMParams, float]:
        """The same distribution in the zero-sum gauge, and the change of ``log Z`` (module docstring).

        ``W[i, :, j]`` and ``vbias[i, :]`` are centred over the states; the
        means of ``W`` go into ``hbias`` (``hbias_j + Σ_i mean_k W[i, k, j]``),
        so ``p(v, h)`` is unchanged, and ``log Z`` drops by
        ``Σ_i mean_k vbias[i, k]``.

        Returns
        -------
        params : CategoricalRBMParams
        log_offset : float
            ``log Z(self) - log Z(params)``.
        """
        w_mean = self.W.mean(axis=1)  # (n, H)
        b_mean = self.vbias.mean(axis=1)  # (n,)
        new = CategoricalRBMParams(
            self.W - w_mean[:, None, :], self.vbias - b_mean[:, None], self.hbias + w_mean.sum(axis=0), dtype=self.dtype
        )
        return new, float(b_mean.sum())

    # ---------------------------------------------------------- constructors
    @classmethod
    def random(
        cls,
        n_visible: int,
        n_states: int,
        n_hidden: int,
        *,
        scale: float = 1.0,
        bias_scale: float | None = None,
        rng=None,
    ) -> CategoricalRBMParams:
        """A random model, entries uniform on ``[-scale, scale]`` (biases: ``bias_scale``) (stochastic).

        Parameters
        ----------
        n_visible, n_states, n_hidden : int
        scale : float, default 1.0
        bias_scale : float, optional
            Defaults to ``scale``.
        rng : numpy.random.Generator or seed, optional

        Returns
        -------
        CategoricalRBMParams
        """
        scale = check_real(scale, "scale", 0.0)
        bias_scale = scale if bias_scale is None else check_real(bias_scale, "bias_scale", 0.0)
        rng = np.random.default_rng(rng)
        return cls(
            rng.uniform(-scale, scale, (n_visible, n_states, n_hidden)),
            rng.uniform(-bias_scale, bias_scale, (n_visible, n_states)),
            rng.uniform(-bias_scale, bias_scale, n_hidden),
        )

    # ------------------------------------------------------------- save/load
def as_labels(v, params: CategoricalRBMParams, *, one_hot: bool | None = None, name: str = "data") -> np.ndarray:
    """Checked integer labels of categorical data: int64 of shape (..., n_visible).

    Parameters
    ----------
    v : array_like
        Labels of shape ``(..., n_visible)`` with values in ``[0, n_states)``,
        or one-hot data of shape ``(..., n_visible, n_states)``.
    params : CategoricalRBMParams
    one_hot : bool, optional
        Whether ``v`` is one-hot. By default it is read as one-hot when its
        shape ends with ``(n_visible, n_states)`` and its last axis cannot be
        the unit axis (``n_states != n_visible``); pass ``one_hot=True`` where
        ``n_states == n_visible``.

    Returns
    -------
    ndarray of int64 of shape (..., n_visible)

    Raises
    ------
    ValueError
        Labels out of range or not integers, one-hot rows without exactly one 1, wrong shapes.
    """
    layer = params.visible
    a = np.asarray(v)
    n, q = params.n_visible, params.n_states
    if one_hot is None:
        one_hot = a.ndim >= 2 and a.shape[-2:] == (n, q) and q != n
    if one_hot:
        if a.shape[-2:] != (n, q):
            raise ValueError(f"one-hot {name} needs shape (..., {n}, {q}), got {a.shape}")
        return layer.from_one_hot(a, name=name)
    return layer.check(a, n, name=name, dtype=np.int64)


# ----------------------------------------------------------------------------- energies
def _beta(x, beta, extra_axes: int):
    """``β x`` for a scalar β or one per batch element (``extra_axes`` trailing axes of ``x`` beyond the batch)."""
    if beta is None:
        return x
    if not is_symbolic(beta):
        beta = np.asarray(beta, dtype=np.float64)
        if beta.ndim == 0:
            return x if beta == 1.0 else float(beta) * x
    return beta[(...,) + (None,) * extra_axes] * x


def one_hot(v, q: int):
    """One-hot ``(..., n, q)`` of labels ``v`` (NumPy or PyTensor), float64."""
    if is_symbolic(v):
        import pytensor.tensor as pt

        return pt.cast(pt.eq(v[..., None], pt.arange(q)), "float64")
    v = np.asarray(v).astype(np.int64)
    return (v[..., None] == np.arange(q)).astype(np.float64)


def hidden_input(v, params):
    """``hbias + Σ_i W[i, v_i, :]``, the input of the hidden units.

    Parameters
    ----------
    v : array of int of shape (..., n_visible)
        Labels (NumPy or PyTensor).
    params : CategoricalRBMParams, or anything with ``W``, ``vbias``, ``hbias`` (tensors included)

    Returns
    -------
    array of shape (..., n_hidden)
    """
    W = params.W
    if is_symbolic(v) or is_symbolic(W):
        import pytensor.tensor as pt

        v = pt.as_tensor_variable(v)
        oh = one_hot(v, W.shape[1])
        return params.hbias + pt.tensordot(oh, W, axes=[[v.ndim - 1, v.ndim], [0, 1]])
    v = np.asarray(v).astype(np.int64)
    return params.hbias + W[np.arange(W.shape[0]), v].sum(axis=-2)


def visible_fields(h, params):
    """``vbias[i, k] + Σ_j W[i, k, j] h_j``: the fields of the visible units given ``h``.

    Parameters
    ----------
    h : ndarray of shape (..., n_hidden)
    params : CategoricalRBMParams

    Returns
    -------
    ndarray of shape (..., n_visible, n_states)
    """
    W = params.W
    n, q, H = W.shape
    h = np.asarray(h, dtype=np.float64)
    return params.vbias + (h @ W.reshape(n * q, H).T).reshape(h.shape[:-1] + (n, q))


def energy(v, h, params):
    """``E(v, h) = -Σ_i vbias[i, v_i] - hbias·h - Σ_ij W[i, v_i, j] h_j`` (NumPy).

    Parameters
    ----------
    v : ndarray of int of shape (..., n_visible)
    h : ndarray of shape (..., n_hidden)
    params : CategoricalRBMParams

    Returns
    -------
    ndarray of shape (...)
    """
    v = np.asarray(v).astype(np.int64)
    h = np.asarray(h, dtype=np.float64)
    n = params.W.shape[0]
    coupling = params.W[np.arange(n), v]  # (..., n, H)
    return -params.vbias[np.arange(n), v].sum(axis=-1) - h @ params.hbias - (coupling.sum(axis=-2) * h).sum(axis=-1)


def free_energy(v, params, beta=None):
    """``F(v) = -Σ_i vbias[i, v_i] - Σ_j softplus(hbias_j + Σ_i W[i, v_i, j])`` (NumPy or PyTensor).

    With an inverse temperature ``β`` the free energy of ``exp(-β E)``:
    ``-β Σ_i vbias[i, v_i] - Σ_j softplus(β (hbias_j + Σ_i W[i, v_i, j]))``.

    Parameters
    ----------
    v : array of int of shape (..., n_visible)
        Labels.
    params : CategoricalRBMParams or tensors with its attribute names
    beta : float or array of shape (...), optional

    Returns
    -------
    array of shape (...)
    """
    W = params.W
    if is_symbolic(v) or is_symbolic(W):
        import pytensor.tensor as pt

        v = pt.as_tensor_variable(v)
        oh = one_hot(v, W.shape[1])
        vterm = (oh * params.vbias).sum(axis=(-2, -1))
    else:
        v = np.asarray(v).astype(np.int64)
        vterm = params.vbias[np.arange(W.shape[0]), v].sum(axis=-1)
    a = hidden_input(v, params)
    return -_beta(vterm, beta, 0) - softplus(_beta(a, beta, 1)).sum(axis=-1)


# ----------------------------------------------------------------------------- the sweep target
class CategoricalAtBeta(NamedTuple):
    """A categorical RBM at inverse temperature β, the target of :func:`pymc_rbm.kernels.sweep.sweep`.

    The engine updates the hidden layer from ``hidden_logits(hidden_input(v))``
    and the visible layer from ``visible_logits(h)`` (fields of shape
    ``(n_chains, n_visible, q)``), each by its layer's rule: the hidden
    Bernoulli units through the compiled binary rule, the visible Potts units
    by Gibbs or Metropolised Gibbs (:class:`~pymc_rbm.layers.Potts`). The
    hidden input is not carried between sweeps (pass states with
    ``hidden_input=None``): the one-hot rows that would update it are a gather,
    as cheap as recomputing it.

    Attributes
    ----------
    params : CategoricalRBMParams
    beta : None, float or ndarray of shape (n_chains, 1)
        As :func:`~pymc_rbm.kernels.state.check_beta` returns it (None: β = 1).

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm.categorical import CategoricalAtBeta, CategoricalRBMParams
    >>> from pymc_rbm.kernels.layer import GIBBS
    >>> from pymc_rbm.kernels.state import RBMState
    >>> from pymc_rbm.kernels.sweep import sweep
    >>> p = CategoricalRBMParams.random(5, 4, 3, rng=0)
    >>> rng = np.random.default_rng(1)
    >>> state, info = sweep(rng, RBMState(np.zeros((2, 5)), None), CategoricalAtBeta(p), GIBBS)
    >>> state.v.shape, state.h.shape
    ((2, 5), (2, 3))
    """

    params: CategoricalRBMParams
    beta: object = None

    @property
    def visible_layer(self) -> Potts:
        return self.params.visible

    @property
    def hidden_layer(self) -> Layer:
        return self.params.hidden

    @property
    def W(self) -> np.ndarray:
        """The couplings, (n_visible, n_states, n_hidden) (not used to carry the hidden input)."""
        return self.params.W

    def hidden_input(self, v: np.ndarray) -> np.ndarray:
        """``hbias + Σ_i W[i, v_i, :]``, (n_chains, n_hidden)."""
        return hidden_input(v, self.params)

    def hidden_logits(self, a: np.ndarray) -> np.ndarray:
        """``β a`` (a new array or ``a`` itself at β = 1; never modified)."""
        return a if self.beta is None else a * self.beta

    def visible_logits(self, h: np.ndarray) -> np.ndarray:
        """The tempered visible fields ``β (vbias + W·h)``, (n_chains, n_visible, n_states)."""
        f = visible_fields(h, self.params)
        if self.beta is not None:
            f *= np.asarray(self.beta)[..., None] if np.ndim(self.beta) else self.beta
        return f


def at_beta(params: CategoricalRBMParams, beta=None, n_chains: int = 1) -> CategoricalAtBeta:
    """The target ``params`` at ``beta`` (a scalar or one per chain), validated."""
    from pymc_rbm.kernels.state import check_beta

    return CategoricalAtBeta(params, check_beta(beta, n_chains))



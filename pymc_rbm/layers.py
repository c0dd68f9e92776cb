"""Layer types: what a unit is, written once and used by every sampler and estimator.

Given the other layer, the units of a layer are independent, and each unit
``i`` sees a *field* ``f_i`` (for the hidden layer of an RBM,
``f = hbias + v·W``, times ``β`` when tempered): ``p(x_i | f_i) ∝ exp(x_i f_i)``
over the values the unit may take. A layer type says everything the engine
needs to know about those values:

- :meth:`Layer.check`: which values are allowed (a clear error otherwise);
- :meth:`Layer.log_normaliser`: ``log Σ_x exp(x f)`` per unit, the term a
  summed-out layer adds to the free energy (softplus for Bernoulli units);
- :meth:`Layer.mean`: ``E[x | f]``, the mean-field and Rao-Blackwellised moments;
- :meth:`Layer.update`: one update of a whole layer given its fields, by the
  layer rule of the sweep (block Gibbs, or flip-the-state where it applies);
- :meth:`Layer.states`: every configuration of ``n`` units, for exact enumeration;
- :meth:`Layer.log_prob`: independent units in fixed fields, the base
  distribution of annealing paths.

Two-state layers (:class:`TwoState`: :class:`Bernoulli` units in {0, 1},
:class:`Spin` units in {-1, +1}) are affine images of bits,
``x = low + (high - low) b``. Their update runs on the bits with logit
``(high - low) f`` through the one compiled layer rule, and an RBM between
two-state layers is, bit for bit, a binary RBM (:func:`bits_form`) whose
``log Z`` differs by a known constant; the compiled samplers and the
estimators run on that form. A layer with more values (categorical units)
supplies its own update and enumeration.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import NamedTuple

import numpy as np

from pymc_rbm.primitives import sigmoid, softplus
from pymc_rbm.validation import check_binary

__all__ = ["Layer", "TwoState", "Bernoulli", "Spin", "BERNOULLI", "SPIN", "BitsForm", "bits_form"]


class Layer(ABC):
    """A layer of units that are independent given their fields, ``p(x_i | f_i) ∝ exp(x_i f_i)``."""

    #: Short name used in messages and reprs.
    name: str = "layer"

    @abstractmethod
    def check(self, x, n_units: int | None = None, *, name: str = "data", dtype=np.float64) -> np.ndarray:
        """A float copy of ``x`` (shape (..., n_units)) after checking its values, or a ValueError."""

    @abstractmethod
    def log_normaliser(self, field):
        """``log Σ_x exp(x f)`` for every unit, same shape as ``field`` (NumPy or PyTensor)."""

    @abstractmethod
    def mean(self, field):
        """``E[x | f]`` for every unit, same shape as ``field`` (NumPy or PyTensor)."""

    @abstractmethod
    def update(self, rng: np.random.Generator, x, field, rule) -> tuple[np.ndarray, np.ndarray]:
        """One update of the layer given its tempered fields (stochastic).

        Parameters
        ----------
        rng : numpy.random.Generator
        x : ndarray of shape (n_chains, n_units), or None
            Current states (not modified); None for a draw that does not read them.
        field : ndarray of shape (n_chains, n_units)
        rule : LayerRule
            Block Gibbs, or flip-the-state mixed with Gibbs (:mod:`pymc_rbm.kernels.layer`).

        Returns
        -------
        new : ndarray of shape (n_chains, n_units)
        n_changed : ndarray of int64 of shape (n_chains,)
        """

    @abstractmethod
    def states(self, n: int, start: int = 0, stop: int | None = None, dtype=np.float64) -> np.ndarray:
        """Configurations ``start .. stop - 1`` of ``n`` units in a fixed order, shape (stop - start, n)."""

    @abstractmethod
    def n_states(self, n: int) -> int:
        """How many configurations ``n`` units have."""

    def log_prob(self, x, field):
        """``log p(x)`` of independent units in fixed fields: ``Σ_i x_i f_i - log_normaliser(f_i)``.

        Parameters
        ----------
        x : array of shape (..., n_units)
        field : array of shape (n_units,) or (..., n_units)

        Returns
        -------
        array of shape (...)
        """
        return (x * field - self.log_normaliser(field)).sum(axis=-1)

    # ------------------------------------------------------------ what an RBM's couplings and biases read
    # An RBM between this layer and another one couples the layer's sufficient statistic (the value x_i for
    # two-state and real units, the one-hot encoding of a Potts label) to the other layer. The methods below are
    # what an annealing path (:class:`~pymc_rbm.estimators.path.AnnealingPath`) needs of its visible layer; the
    # defaults are those of two-state units, and the layers whose units differ override them.

    #: Whether the units take finitely many values (two-state and Potts units), so that their states fit
    #: small integers; False for real units (Gaussian, ReLU).
    discrete: bool = False

    #: Whether a sweep should carry the input these units give the other layer, ``bias + x·W``, and update it
    #: by the rows of ``W`` of the units that changed (two-state units, of which few change once a chain has
    #: settled) rather than recompute it. False where recomputing is as cheap or the update would not apply:
    #: the input of Potts labels is a gather of one row of ``W`` per unit, and real units all change at every
    #: update.
    incremental_input: bool = False

    #: Whether the bias term of ``-E`` is linear in the sufficient statistic, ``bias_log_weight(x, b) =
    #: dot(x, b)`` (two-state and Potts units), so that biases along a path may be interpolated freely; False
    #: where it also holds the base measure (Gaussian units: ``-(x - b)² / (2σ²)``; ReLU units: ``-γ x² / 2``).
    linear_bias: bool = False

    def field_shape(self, n_units: int) -> tuple[int, ...]:
        """The shape of the fields of ``n_units`` units of one chain: ``(n_units,)`` (Potts: ``(n_units, q)``)."""
        return (n_units,)

    def dot(self, x, M, *, dtype=None) -> np.ndarray:
        """``Σ_i ⟨s(x_i), M_i⟩``: the sufficient statistics ``s`` of states contracted with ``M`` over the units.

        ``x·M`` for units whose statistic is their value; the input ``x·W`` of states to the other layer
        (``M = W``) and the sum ``Σ_i f_i x_i`` of per-unit fields (``M = f``) are both this product.

        Parameters
        ----------
        x : ndarray of shape (..., n_units)
        M : ndarray of shape ``field_shape(n_units)`` or ``field_shape(n_units) + (k,)``
        dtype : numpy dtype, optional
            Of the result (and, for Potts units, of the sum); default that of the product.

        Returns
        -------
        ndarray of shape (...) or (..., k)
        """
        out = x @ M
        return out if dtype is None else out.astype(dtype)

    def natural_couplings(self, W) -> np.ndarray:
        """The couplings of the sufficient statistic, ``W`` itself (Gaussian units: ``W / σ``, rows scaled).

        Parameters
        ----------
        W : ndarray of shape ``field_shape(n_units) + (n_other,)``
            A model's couplings of this layer to the other.

        Returns
        -------
        ndarray of the same shape
            ``W'`` with ``-E = Σ_i ⟨s(x_i), (W' h)_i⟩ + ...``: the input of states to the other layer is
            ``dot(x, W')``, and the other layer's states add ``W' h`` to this layer's fields.
        """
        return W

    def natural_field(self, bias) -> np.ndarray:
        """The field ``f`` of ``p(x | f)`` that a model's biases alone give the units: ``bias`` itself.

        Gaussian units: ``bias / σ²`` (the mean ``bias``).

        Parameters
        ----------
        bias : ndarray of shape ``(..., *field_shape(n_units))``

        Returns
        -------
        ndarray of the same shape (``bias`` itself where nothing changes)
        """
        return bias

    def bias_log_weight(self, x, biases) -> np.ndarray:
        """The bias term of ``-E`` of states for several rows of biases: ``x·b`` (Potts: ``Σ_i b[i, x_i]``).

        The log density of the units with their couplings off, unnormalised (:meth:`bias_log_partition` is
        its normaliser); for real units it holds the base measure (Gaussian: ``-Σ_i (x_i - b_i)² / (2σ_i²)``).

        Parameters
        ----------
        x : ndarray of shape (n, n_units)
        biases : ndarray of shape ``(k, *field_shape(n_units))``

        Returns
        -------
        ndarray of float64 of shape (n, k)
        """
        return self.dot(x, np.moveaxis(biases, 0, -1), dtype=np.float64)

    def bias_log_partition(self, bias) -> float:
        """``log Σ_x exp(bias_log_weight(x, bias))`` (an integral for real units): ``Σ_i log_normaliser(b_i)``.

        Parameters
        ----------
        bias : ndarray of shape ``field_shape(n_units)``

        Returns
        -------
        float
        """
        return self.log_normaliser(bias).sum()

    def sample(self, rng: np.random.Generator, field, n: int, *, dtype=np.float64) -> np.ndarray:
        """``n`` independent draws of the units in fixed fields (stochastic).

        The default is the layer's update without current states, for layers whose update is the exact draw
        whatever the rule (real units); two-state and Potts units override it.

        Parameters
        ----------
        rng : numpy.random.Generator
        field : ndarray of shape ``field_shape(n_units)``
        n : int
        dtype : numpy dtype, default float64

        Returns
        -------
        ndarray of ``dtype`` of shape (n, n_units)
        """
        new, _ = self.update(rng, None, np.broadcast_to(field, (n,) + np.shape(field)), None)
        return new.astype(dtype)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and vars(other) == vars(self)

    def __hash__(self) -> int:
        return hash((type(self), tuple(sorted(vars(self).items()))))


class TwoState(Layer):
    """Units with two values ``low < high``: ``x = low + (high - low) b`` for a bit ``b``.

    The logit of ``high`` against ``low`` in field ``f`` is ``(high - low) f``,
    so every two-state layer samples through the binary layer rule on its bits.

    Parameters
    ----------
    low, high : float
        The two values, ``low < high``.
    """

    discrete = True
    incremental_input = True
    linear_bias = True

    def __init__(self, low: float, high: float):
        low, high = float(low), float(high)
        if not (np.isfinite(low) and np.isfinite(high) and low < high):
            raise ValueError(f"a two-state layer needs finite values low < high, got {low!r}, {high!r}")
        self.low, self.high = low, high

    @property
    def spacing(self) -> float:
        """``high - low``."""
        return self.high - self.low

    @property
    def name(self) -> str:
        return f"{{{self.low:g}, {self.high:g}}}"

    def __repr__(self) -> str:
        return f"TwoState(low={self.low:g}, high={self.high:g})"

    def to_bits(self, x):
        """The bits ``(x - low) / (high - low)`` of states ``x``."""
        return (x - self.low) / self.spacing

    def from_bits(self, b):
        """The states ``low + (high - low) b`` of bits ``b``."""
        return self.low + self.spacing * b

    def logits(self, field):
        """``log p(high) / p(low) = (high - low) f``."""
        return self.spacing * field

    def check(self, x, n_units=None, *, name="data", dtype=np.float64):
        return check_binary(x, n_units, name=name, dtype=dtype, values=(self.low, self.high))

    def log_normaliser(self, field):
        # log(exp(low f) + exp(high f)) = low f + softplus((high - low) f)
        return self.low * field + softplus(self.logits(field))

    def mean(self, field):
        return self.from_bits(sigmoid(self.logits(field)))

    def update(self, rng, x, field, rule):
        bits = None if x is None else self.to_bits(np.asarray(x))
        new, n_changed = rule.update(rng, bits, self.logits(field), dtype=None if x is None else np.asarray(x).dtype)
        return self.from_bits(new), n_changed

    def states(self, n, start=0, stop=None, dtype=np.float64):
        stop = 2**n if stop is None else stop
        shifts = np.arange(n - 1, -1, -1, dtype=np.int64)
        bits = (np.arange(start, stop, dtype=np.int64)[:, None] >> shifts) & 1
        return self.from_bits(bits.astype(dtype)).astype(dtype, copy=False)

    def n_states(self, n):
        return 2**n

    def sample(self, rng, field, n, *, dtype=np.float64):
        """``n`` independent draws in fixed fields (stochastic): bit ``i`` is ``u < sigmoid((high - low) f_i)``.

        One uniform per unit, in C order over ``(n, n_units)``.
        """
        p = 1.0 / (1.0 + np.exp(-self.logits(field)))
        bits = (rng.random((n,) + np.shape(field)) < p).astype(dtype)
        return self.from_bits(bits).astype(dtype, copy=False)


class Bernoulli(TwoState):
    """Units in {0, 1}: ``p(x = 1 | f) = sigmoid(f)``, log normaliser ``softplus(f)``.

    The bits are the states themselves, so nothing is converted on the way
    to the layer rule. Configurations are enumerated in lexicographic order,
    unit 0 the most significant bit.
    """

    def __init__(self):
        super().__init__(0.0, 1.0)

    @property
    def name(self) -> str:
        return "Bernoulli"

    def __repr__(self) -> str:
        return "Bernoulli()"

    def to_bits(self, x):
        return x

    def from_bits(self, b):
        return b

    def logits(self, field):
        return field

    def log_normaliser(self, field):
        return softplus(field)

    def mean(self, field):
        return sigmoid(field)

    def bias_log_partition(self, bias):
        """``Σ_i log(1 + exp(b_i))`` by ``numpy.logaddexp``, within an ulp of the softplus of :meth:`log_normaliser`.

        Kept as it was before the layers carried it, so that the estimates that start from it keep their bits.
        """
        return np.logaddexp(0.0, bias).sum()


class Spin(TwoState):
    """Units in {-1, +1}: ``p(x = 1 | f) = sigmoid(2 f)``, log normaliser ``log(2 cosh f)``.

    An RBM between spin layers is the Ising form of a binary RBM
    (:class:`~pymc_rbm.params.SpinRBMParams`).
    """

    def __init__(self):
        super().__init__(-1.0, 1.0)

    @property
    def name(self) -> str:
        return "spin"

    def __repr__(self) -> str:
        return "Spin()"


#: Units in {0, 1}.
BERNOULLI = Bernoulli()
#: Units in {-1, +1}.
SPIN = Spin()


class BitsForm(NamedTuple):
    """An RBM between two-state layers written over the bits of its units.

    Attributes
    ----------
    W : ndarray of shape (n_visible, n_hidden)
    vbias : ndarray of shape (n_visible,)
    hbias : ndarray of shape (n_hidden,)
        The binary RBM whose bits ``(b, c)`` are distributed as the bits of ``(v, h)``.
    log_offset : float
        ``log Z - log Z_bits``: the energy constant that the change of variables adds.
    """

    W: np.ndarray
    vbias: np.ndarray
    hbias: np.ndarray
    log_offset: float


def bits_form(W, vbias, hbias, visible: TwoState, hidden: TwoState) -> BitsForm:
    """The binary RBM over the bits of an RBM between two-state layers (exact).

    With ``v = lᵥ + dᵥ b`` and ``h = lₕ + dₕ c`` the energy
    ``E = -v·W·h - vbias·v - hbias·h`` becomes ``-b·W'·c - vbias'·b - hbias'·c - C`` with
    ``W' = dᵥ dₕ W``, ``vbias' = dᵥ (vbias + W lₕ)``, ``hbias' = dₕ (hbias + Wᵀ lᵥ)`` and
    ``C = vbias·lᵥ + hbias·lₕ + lᵥ·W·lₕ``, so ``log Z = log Z' + C``.

    Parameters
    ----------
    W : ndarray of shape (n_visible, n_hidden)
    vbias : ndarray of shape (n_visible,)
    hbias : ndarray of shape (n_hidden,)
    visible, hidden : TwoState

    Returns
    -------
    BitsForm
    """
    if not (isinstance(visible, TwoState) and isinstance(hidden, TwoState)):
        raise TypeError(f"only RBMs between two-state layers have a bits form, got {visible!r} and {hidden!r}")
    lv, dv, lh, dh = visible.low, visible.spacing, hidden.low, hidden.spacing
    col = W.sum(axis=1)  # W · 1
    row = W.sum(axis=0)  # Wᵀ · 1
    return BitsForm(
        W * (dv * dh),
        dv * (vbias + lh * col),
        dh * (hbias + lv * row),
        float(lv * vbias.sum() + lh * hbias.sum() + lv * lh * W.sum()),
    )


# ----------------------------------------------------------------------------- categorical (Potts) units
__all__ += ["Potts", "draw_index"]


def logsumexp_last(x: np.ndarray) -> np.ndarray:
    """``log Σ_k exp(x_k)`` over the last axis, stable for any finite ``x`` (and ``-inf`` entries)."""
    m = np.max(x, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return (m + np.log(np.exp(x - m).sum(axis=-1, keepdims=True)))[..., 0]


def softmax_last(x: np.ndarray) -> np.ndarray:
    """``exp(x_k) / Σ exp(x)`` over the last axis (a new array)."""
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    e /= e.sum(axis=-1, keepdims=True)
    return e


def draw_index(u: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """The index ``k`` with ``cumsum(probs)[k - 1] <= u < cumsum(probs)[k]`` (inverse CDF), int64.

    ``u`` has shape ``(...)`` and ``probs`` ``(..., q)``, not necessarily
    normalised (``u`` is then on the scale of their sum); states of
    probability 0 are never drawn, and a ``u`` beyond the rounded total is
    put on the last state of positive probability.
    """
    cdf = np.cumsum(probs, axis=-1)
    k = (u[..., None] >= cdf).sum(axis=-1)
    q = probs.shape[-1]
    last = q - 1 - np.argmax(probs[..., ::-1] > 0.0, axis=-1)  # the last index of positive probability
    return np.minimum(k, last).astype(np.int64)


class Potts(Layer):
    """Categorical (Potts) units: each takes a value ``k`` in ``{0, …, n_states - 1}``.

    A unit's field is a vector of ``q = n_states`` entries, ``p(x = k | f) ∝ exp(f_k)``:
    fields have shape ``(..., n_units, q)`` where two-state layers have
    ``(..., n_units)``, and states are integer labels of shape ``(..., n_units)``
    (stored in a float array by :meth:`check`, as the engine's states are).
    The log normaliser is ``logsumexp_k f_k``, the mean the softmax
    probabilities (the one-hot expectation ``E[1(x = k) | f]``).

    The layer rule (:class:`~pymc_rbm.kernels.layer.LayerRule`) maps onto two updates of a unit:

    - ``rule.gibbs``: the Gibbs draw ``x' ~ softmax(f)`` (does not read ``x``);
    - otherwise the Metropolised Gibbs sampler (Liu 1996) mixed with the Gibbs
      draw by ``α = rule.alpha``, unit by unit: propose ``y ≠ x`` with
      probability ``p_y / (1 - p_x)`` and accept it with probability
      ``min(1, (1 - p_x) / (1 - p_y))``. It is reversible for ``softmax(f)``
      (``p_x P(x → y) = p_x p_y min(1 / (1 - p_x), 1 / (1 - p_y))`` is symmetric)
      and never proposes to stay, so it moves more than Gibbs (Peskun 1973).
      For ``q = 2`` it moves to the other state with probability
      ``min(1, p_other / p_x)``: flip-the-state (Brügge, Fischer & Igel 2013),
      except at the exact tie ``p_x = 1/2``, where Liu's sampler always moves
      and flip-the-state moves with probability 1/2.

    All probabilities are computed from log-sum-exps of the fields, so fields
    of any size (``|f| = 1e4``) neither overflow nor lose a state.

    Parameters
    ----------
    n_states : int
        ``q >= 2``, the number of values of each unit (21 for a protein
        alphabet with gap, 4 for DNA).

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_rbm.layers import Potts
    >>> layer = Potts(3)
    >>> layer.states(2)[:4]
    array([[0., 0.],
           [0., 1.],
           [0., 2.],
           [1., 0.]])
    >>> round(float(np.exp(layer.log_normaliser(np.zeros((1, 3))))[0]), 12)
    3.0
    """

    discrete = True
    linear_bias = True

    def __init__(self, n_states: int):
        if isinstance(n_states, (bool, np.bool_)) or not isinstance(n_states, (int, np.integer)) or n_states < 2:
            raise ValueError(f"a Potts layer needs an integer number of states >= 2, got {n_states!r}")
        self.n_values = int(n_states)

    @property
    def name(self) -> str:
        return f"Potts({self.n_values})"

    def __repr__(self) -> str:
        return f"Potts(n_states={self.n_values})"

    # ------------------------------------------------------------ values
    def check(self, x, n_units=None, *, name="data", dtype=np.float64):
        """A float copy of the labels ``x`` (shape (..., n_units)) after checking them, or a ValueError.

        Labels must be integers (of an integer or float type; booleans are
        refused) in ``[0, n_states)``; one-hot data is converted by
        :meth:`from_one_hot` first.
        """
        q = self.n_values
        try:
            a = np.asarray(x)
        except Exception as err:  # noqa: BLE001 - ragged lists and the like
            raise ValueError(f"{name} must be an array of integer labels in [0, {q}): {err}") from None
        if a.dtype == np.bool_ or a.dtype.kind not in "iuf":
            raise ValueError(f"{name} must be numeric with integer labels in [0, {q}), got dtype {a.dtype}")
        if a.ndim == 0:
            raise ValueError(f"{name} must have a unit axis (shape (..., n_units)), got a scalar")
        if n_units is not None and a.shape[-1] != n_units:
            raise ValueError(f"{name} has {a.shape[-1]} units in its last axis, expected {n_units}")
        with np.errstate(invalid="ignore"):
            bad = ~((a >= 0) & (a < q) & (a == np.floor(a))) if a.dtype.kind == "f" else ~((a >= 0) & (a < q))
        if bad.any():
            first = a[np.unravel_index(np.argmax(bad), a.shape)]
            raise ValueError(
                f"{name} must hold integer labels in [0, {q}) (values in {{0, …, {q - 1}}}); found {first!r} "
                f"({int(bad.sum())} bad entries)"
            )
        return np.array(a, dtype=dtype, copy=True)

    def one_hot(self, x) -> np.ndarray:
        """The one-hot encoding of labels ``x`` (shape (..., n_units)): float64 of shape (..., n_units, q)."""
        x = np.asarray(x).astype(np.int64)
        return (x[..., None] == np.arange(self.n_values)).astype(np.float64)

    def from_one_hot(self, onehot, *, name="data") -> np.ndarray:
        """The labels of one-hot data (shape (..., n_units, q), exactly one 1 per unit): int64 (..., n_units)."""
        a = np.asarray(onehot)
        q = self.n_values
        if a.ndim < 2 or a.shape[-1] != q:
            raise ValueError(f"one-hot {name} needs shape (..., n_units, {q}), got {a.shape}")
        if a.dtype.kind not in "biuf" or not np.all((a == 0) | (a == 1)) or not np.all(a.sum(axis=-1) == 1):
            raise ValueError(f"one-hot {name} must hold 0/1 entries with exactly one 1 per unit (last axis)")
        return np.argmax(a, axis=-1).astype(np.int64)

    # ------------------------------------------------------------ fields
    def field_shape(self, n_units):
        """``(n_units, q)``: a field per unit and value."""
        return (n_units, self.n_values)

    def dot(self, x, M, *, dtype=None):
        """``Σ_i M[i, x_i]``: the one-hot encoding of labels ``x`` contracted with ``M``, a gather of one row per unit.

        Parameters
        ----------
        x : ndarray of shape (..., n_units)
            Labels (of any numeric type).
        M : ndarray of shape (n_units, q) or (n_units, q, k)
        dtype : numpy dtype, optional
            Of the sum; default that of ``M``.

        Returns
        -------
        ndarray of shape (...) or (..., k)
        """
        x = np.asarray(x).astype(np.int64)
        return M[np.arange(x.shape[-1]), x].sum(axis=x.ndim - 1, dtype=dtype)

    def log_normaliser(self, field):
        """``log Σ_k exp(f_k)`` per unit: shape (..., n_units) from fields (..., n_units, q)."""
        from pymc_rbm.primitives import is_symbolic

        if is_symbolic(field):
            import pytensor.tensor as pt

            return pt.logsumexp(field, axis=-1)
        return logsumexp_last(np.asarray(field, dtype=np.float64))

    def mean(self, field):
        """The probabilities ``softmax(f)`` of every value, shape (..., n_units, q)."""
        from pymc_rbm.primitives import is_symbolic

        if is_symbolic(field):
            import pytensor.tensor as pt

            return pt.special.softmax(field, axis=-1)
        return softmax_last(np.asarray(field, dtype=np.float64))

    def log_prob(self, x, field):
        """``log p(x)`` of independent units in fixed fields: ``Σ_i f_{i, x_i} - logsumexp(f_i)``.

        Parameters
        ----------
        x : ndarray of shape (..., n_units)
            Labels.
        field : ndarray of shape (n_units, q) or (..., n_units, q)

        Returns
        -------
        ndarray of shape (...)
        """
        x = np.asarray(x).astype(np.int64)
        field = np.asarray(field, dtype=np.float64)
        f = np.broadcast_to(field, x.shape + (self.n_values,))
        picked = np.take_along_axis(f, x[..., None], axis=-1)[..., 0]
        return (picked - self.log_normaliser(f)).sum(axis=-1)

    # ------------------------------------------------------------ update
    def _check_field(self, field, x) -> np.ndarray:
        field = np.asarray(field, dtype=np.float64)
        if field.ndim < 2 or field.shape[-1] != self.n_values:
            raise ValueError(f"Potts fields need shape (..., n_units, {self.n_values}), got {field.shape}")
        if x is not None and np.shape(x) != field.shape[:-1]:
            raise ValueError(f"states of shape {np.shape(x)} do not match fields of shape {field.shape}")
        return field

    def update(self, rng, x, field, rule):
        """One update of every unit given its tempered fields, by the layer rule (stochastic).

        Parameters
        ----------
        rng : numpy.random.Generator
            Gibbs draws one uniform per unit; the Metropolised Gibbs rule
            draws three per unit (mixture choice, proposal, acceptance), in one call.
        x : ndarray of shape (n_chains, n_units), or None
            Current labels (not modified); None only for the Gibbs rule.
        field : ndarray of shape (n_chains, n_units, q)
        rule : LayerRule
            ``rule.gibbs``: Gibbs draws; otherwise Metropolised Gibbs with
            weight ``rule.alpha``, Gibbs with weight ``1 - rule.alpha``.

        Returns
        -------
        new : ndarray of shape (n_chains, n_units)
            Labels, in the dtype of ``x`` (float64 when ``x`` is None).
        n_changed : ndarray of int64 of shape (n_chains,)
        """
        field = self._check_field(field, x)
        probs = softmax_last(field)
        if rule.gibbs or x is None:
            if not rule.gibbs:
                raise ValueError("only the Gibbs rule updates a layer without its current state")
            new = draw_index(rng.random(field.shape[:-1]), probs)
            out = new.astype(np.float64)
            return out, np.zeros(field.shape[:-2], dtype=np.int64)
        x_arr = np.asarray(x)
        cur = x_arr.astype(np.int64)
        u = rng.random(field.shape[:-1] + (3,))  # mixture choice, proposal, acceptance: drawn whatever alpha
        alpha = rule.alpha
        if alpha > 0.0:
            metropolised = self._metropolised(u[..., 1], u[..., 2], cur, probs)
        if alpha < 1.0:
            gibbs = draw_index(u[..., 1], probs)
        if alpha == 1.0:
            new = metropolised
        elif alpha == 0.0:
            new = gibbs
        else:
            new = np.where(u[..., 0] < alpha, metropolised, gibbs)
        out = new.astype(x_arr.dtype if x_arr.dtype.kind in "iuf" else np.float64)
        return out, np.count_nonzero(new != cur, axis=-1).astype(np.int64)

    def sample(self, rng, field, n, *, dtype=np.float64):
        """``n`` independent Gibbs draws of labels in fixed fields ``(n_units, q)`` (stochastic; a uniform per unit)."""
        field = self._check_field(np.broadcast_to(field, (n,) + np.shape(field)), None)
        return draw_index(rng.random(field.shape[:-1]), softmax_last(field)).astype(dtype)

    def _metropolised(self, u_propose, u_accept, cur, probs) -> np.ndarray:
        """Liu's (1996) update of every unit from uniforms, current labels and probabilities (..., q).

        ``1 - p_x`` and ``1 - p_y`` are summed over the other states, never
        taken as differences, so they keep their relative precision however
        close ``p_x`` is to 1. A unit whose other states all underflow to
        probability 0 stays (its true acceptance is below 1e-300).
        """
        q = probs.shape[-1]
        rows = np.arange(cur.size)
        others = probs.copy()
        others.reshape(-1, q)[rows, cur.reshape(-1)] = 0.0
        rest_x = others.sum(axis=-1)  # 1 - p_x
        proposal = draw_index(u_propose * rest_x, others)
        without = probs.copy()
        without.reshape(-1, q)[rows, proposal.reshape(-1)] = 0.0
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = self._acceptance_ratio(rest_x, without.sum(axis=-1))  # (1 - p_x) / (1 - p_y)
        accepted = (rest_x > 0.0) & (u_accept < ratio)
        return np.where(accepted, proposal, cur)

    @staticmethod
    def _acceptance_ratio(rest_current, rest_proposed) -> np.ndarray:
        """``(1 - p_x) / (1 - p_y)``: Liu's acceptance ratio (``inf`` where ``1 - p_y`` underflows to 0)."""
        return rest_current / rest_proposed

    # ------------------------------------------------------------ enumeration
    def states(self, n, start=0, stop=None, dtype=np.float64):
        """Configurations ``start .. stop - 1`` of ``n`` units, lexicographic (unit 0 slowest), (stop - start, n)."""
        q = self.n_values
        stop = q**n if stop is None else stop
        idx = np.arange(start, stop, dtype=np.int64)
        powers = q ** np.arange(n - 1, -1, -1, dtype=np.int64)
        return ((idx[:, None] // powers) % q).astype(dtype)

    def n_states(self, n):
        return self.n_values**n

    def index(self, x) -> np.ndarray:
        """The position of configurations ``x`` (shape (..., n)) in :meth:`states`' order, int64 (...)."""
        x = np.asarray(x).astype(np.int64)
        n = x.shape[-1]
        return x @ (self.n_values ** np.arange(n - 1, -1, -1, dtype=np.int64))


# ----------------------------------------------------------------------------- Gaussian units
__all__ += ["Gaussian"]


class Gaussian(Layer):
    """Real units with a Gaussian base measure: ``p(x | f) ∝ exp(f x - x² / (2 σ²))``, i.e. ``N(σ² f, σ²)``.

    The visible layer of a Gaussian-Bernoulli RBM (Hinton & Salakhutdinov 2006;
    the energy of :mod:`pymc_rbm.gaussian`), whose unit ``i`` has the field
    ``f_i = vbias_i / σ_i² + (W h)_i / σ_i``: given ``h``, ``v_i`` is normal with
    mean ``vbias_i + σ_i (W h)_i`` and standard deviation ``σ_i``. The log
    normaliser is ``σ² f² / 2 + log(√(2π) σ)``, the mean ``σ² f``.

    Given its fields a Gaussian layer is sampled exactly, so every layer rule
    updates it by that Gibbs draw (Liu's Metropolised Gibbs sampler and
    flip-the-state are defined for finitely many values only; the draw is
    reversible for the conditional, which is all a sweep needs). The units are
    continuous: :meth:`states` and :meth:`n_states` refuse.

    Parameters
    ----------
    sigma : array_like of shape (n_units,)
        Standard deviations, finite and > 0.
    """

    name = "Gaussian"

    def __init__(self, sigma):
        sigma = np.array(sigma, dtype=np.float64, copy=True).reshape(-1)
        if sigma.size == 0 or not np.all(np.isfinite(sigma)) or not np.all(sigma > 0):
            raise ValueError("a Gaussian layer needs finite standard deviations sigma > 0")
        sigma.setflags(write=False)
        self.sigma = sigma

    def __repr__(self) -> str:
        return f"Gaussian(n_units={self.sigma.size})"

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and np.array_equal(other.sigma, self.sigma)

    def __hash__(self) -> int:
        return hash((type(self), self.sigma.tobytes()))

    def check(self, x, n_units=None, *, name="data", dtype=np.float64):
        """A float copy of real data ``x`` (shape (..., n_units)), or a ValueError (NaN, infinities, shapes)."""
        a = np.asarray(x)
        if a.dtype == np.bool_ or a.dtype.kind not in "iuf":
            raise ValueError(f"{name} must be real numbers, got dtype {a.dtype}")
        n = self.sigma.size if n_units is None else n_units
        if a.ndim == 0 or a.shape[-1] != n:
            raise ValueError(f"{name} must have {n} units in its last axis, got shape {a.shape}")
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} contains non-finite values")
        return np.array(a, dtype=dtype, copy=True)

    def _var(self):
        return self.sigma**2

    def log_normaliser(self, field):
        """``log ∫ exp(f x - x² / (2σ²)) dx = σ² f² / 2 + log(√(2π) σ)`` per unit (NumPy or PyTensor)."""
        return 0.5 * self._var() * field**2 + np.log(np.sqrt(2 * np.pi) * self.sigma)

    def mean(self, field):
        """``E[x | f] = σ² f``."""
        return self._var() * field

    def natural_couplings(self, W):
        """``W / σ`` (rows scaled): the couplings of the standardised units of the energy ``-(x / σ)·W h``."""
        return W / self.sigma[:, None]

    def natural_field(self, bias):
        """``bias / σ²``: the field of ``N(bias, σ²)``."""
        return bias / self.sigma**2

    def bias_log_weight(self, x, biases):
        """The quadratic ``-Σ_i (x_i - b_i)² / (2σ_i²)`` of each row ``b`` of ``biases`` (k, n): float64 (m, k)."""
        z = (x[..., None, :] - biases) / self.sigma
        return -0.5 * (z * z).sum(axis=-1)

    def bias_log_partition(self, bias):
        """``Σ_i log(√(2π) σ_i)``, the normaliser of ``N(bias, σ²)``: the log normaliser in a zero field."""
        return self.log_normaliser(0.0).sum()

    def log_prob(self, x, field):
        """``Σ_i log N(x_i; σ_i² f_i, σ_i²)``, shape (...)."""
        return (x * field - 0.5 * x**2 / self._var() - self.log_normaliser(field)).sum(axis=-1)

    def update(self, rng, x, field, rule):
        """The exact draw ``x ~ N(σ² f, σ²)`` of every unit, whatever the rule (stochastic; one normal per unit).

        Returns the new states (float64, the shape of ``field``) and the
        number of units per chain that changed (all of them, almost surely).
        """
        field = np.asarray(field, dtype=np.float64)
        new = self._var() * field + self.sigma * rng.standard_normal(field.shape)
        changed = np.full(field.shape[:-1], field.shape[-1], dtype=np.int64)
        return new, changed

    def states(self, n, start=0, stop=None, dtype=np.float64):
        raise ValueError("Gaussian units are continuous: their configurations cannot be enumerated")

    def n_states(self, n):
        raise ValueError("Gaussian units are continuous: their configurations cannot be enumerated")


# ----------------------------------------------------------------------------- ReLU (truncated Gaussian) units
__all__ += ["ReLU"]

_SQRT2 = np.sqrt(2.0)
#: Beyond ``z = f / √γ < -_MILLS_SERIES`` the mean uses the asymptotic series of the Mills ratio (5 terms:
#: relative error below 1e-13 there), where ``f/γ + φ(z)/(√γ Φ(z))`` would cancel to noise.
_MILLS_SERIES = 50.0


def _ops(field):
    """``(namespace, erfc, erfcx, where)`` for NumPy (SciPy's functions) or PyTensor, by the type of ``field``."""
    from pymc_rbm.primitives import is_symbolic

    if is_symbolic(field):
        import pytensor.tensor as pt

        return pt, pt.erfc, pt.erfcx, pt.switch
    from scipy import special

    return np, special.erfc, special.erfcx, np.where


class ReLU(Layer):
    """Rectified (truncated Gaussian) units ``h >= 0``: ``p(h | f) ∝ exp(-γ h² / 2 + f h)`` on ``[0, ∞)``.

    The hidden layer of the ReLU RBMs of protein-sequence models (Tubiana,
    Cocco & Monasson 2019, with their ``θ = 0``): given the visible units, hidden
    unit ``j`` is the normal ``N(f_j / γ_j, 1 / γ_j)`` truncated to ``h >= 0``,
    with field ``f_j = hbias_j + (v·W)_j``. Its log normaliser is

    ``A(f) = log ∫_0^∞ exp(-γh²/2 + f h) dh = f²/(2γ) + ½ log(2π/γ) + log Φ(f/√γ)``

    and its mean ``E[h | f] = f/γ + φ(z) / (√γ Φ(z))`` with ``z = f/√γ``. Both
    are computed from ``erfcx`` for ``z < 0`` (``log Φ(z) = log(erfcx(-z/√2)/2) - z²/2``,
    the ``z²/2`` cancelling against ``f²/(2γ)`` in closed form) and from ``erfc``
    for ``z >= 0``, so that fields of any size (``|f| = 1e3`` and beyond) give
    finite, accurate values, in NumPy (SciPy's functions) and PyTensor alike.

    Tempering: the density of ``exp(-β E)`` is that of ``ReLU(β γ)`` in the field ``β f``
    (:meth:`tempered`); ``γ`` is part of the energy, not of the field.

    Given its fields the layer is sampled exactly (an inverse-CDF draw of
    the truncated normal in log space), so every layer rule updates it by
    that Gibbs draw: flip-the-state and Liu's Metropolised Gibbs sampler are
    defined for finitely many values only. The units are continuous:
    :meth:`states` and :meth:`n_states` refuse.

    Parameters
    ----------
    gamma : float or array_like of shape (n_units,)
        Precisions ``γ``, finite and > 0; a scalar applies to every unit.
    """

    name = "ReLU"

    def __init__(self, gamma=1.0):
        try:
            gamma = np.array(gamma, dtype=np.float64, copy=True)
        except (TypeError, ValueError) as err:
            raise ValueError(f"a ReLU layer needs real precisions gamma > 0: {err}") from None
        if gamma.ndim > 1 or gamma.size == 0 or not np.all(np.isfinite(gamma)) or not np.all(gamma > 0):
            raise ValueError(
                f"a ReLU layer needs finite precisions gamma > 0, a scalar or one per unit (shape (n_units,)); "
                f"got {np.array2string(gamma, threshold=6)}"
            )
        gamma.setflags(write=False)
        self.gamma = gamma

    def __repr__(self) -> str:
        if self.gamma.ndim == 0:
            return f"ReLU(gamma={float(self.gamma):g})"
        return f"ReLU(n_units={self.gamma.size})"

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and self.gamma.shape == other.gamma.shape and np.array_equal(
            other.gamma, self.gamma
        )

    def __hash__(self) -> int:
        return hash((type(self), self.gamma.shape, self.gamma.tobytes()))

    def for_units(self, n_units: int) -> ReLU:
        """This layer with one precision per unit, shape (n_units,) (a scalar broadcast), or a ValueError."""
        if self.gamma.ndim == 0:
            return ReLU(np.full(n_units, float(self.gamma)))
        if self.gamma.shape != (n_units,):
            raise ValueError(f"gamma has shape {self.gamma.shape}, but the layer has {n_units} units")
        return self

    def tempered(self, beta) -> ReLU:
        """The layer of ``exp(-β E)``: precisions ``β γ`` (its field is ``β f``), for a scalar ``β > 0``."""
        beta = float(beta)
        if not (np.isfinite(beta) and beta > 0):
            raise ValueError(f"a ReLU layer is tempered at a finite beta > 0 only, got {beta!r}")
        return ReLU(beta * self.gamma)

    # ------------------------------------------------------------ values
    def check(self, x, n_units=None, *, name="data", dtype=np.float64):
        """A float copy of ``x`` (shape (..., n_units)) with finite values ``>= 0``, or a ValueError."""
        a = np.asarray(x)
        if a.dtype == np.bool_ or a.dtype.kind not in "iuf":
            raise ValueError(f"{name} must be real numbers >= 0 (ReLU units), got dtype {a.dtype}")
        n = self.gamma.size if n_units is None and self.gamma.ndim == 1 else n_units
        if a.ndim == 0 or (n is not None and a.shape[-1] != n):
            raise ValueError(f"{name} must have {n} units in its last axis, got shape {a.shape}")
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} contains non-finite values; ReLU units take finite values >= 0")
        if np.any(a < 0):
            raise ValueError(f"{name} holds negative values ({int((a < 0).sum())} entries); ReLU units are >= 0")
        return np.array(a, dtype=dtype, copy=True)

    # ------------------------------------------------------------ fields
    def _z(self, field):
        return field / np.sqrt(self.gamma)

    def log_normaliser(self, field):
        """``log ∫_0^∞ exp(-γh²/2 + f h) dh`` per unit, same shape as ``field`` (NumPy or PyTensor)."""
        xp, erfc, erfcx, where = _ops(field)
        z = self._z(field)
        neg = xp.minimum(z, 0.0)  # each branch sees only its own half, so neither overflows (nor its gradient)
        pos = xp.maximum(z, 0.0)
        log_phi_neg = xp.log(0.5 * erfcx(-neg / _SQRT2))  # log Φ(z) + z²/2 for z < 0
        log_phi_pos = 0.5 * pos**2 + xp.log1p(-0.5 * erfc(pos / _SQRT2))  # log Φ(z) + z²/2 for z >= 0
        return 0.5 * np.log(2 * np.pi / self.gamma) + where(z < 0, log_phi_neg, log_phi_pos)

    def mean(self, field):
        """``E[h | f] = f/γ + φ(z) / (√γ Φ(z))``, ``z = f/√γ``, same shape as ``field`` (NumPy or PyTensor)."""
        xp, erfc, erfcx, where = _ops(field)
        z = self._z(field)
        neg = xp.minimum(z, 0.0)
        pos = xp.maximum(z, 0.0)
        # z + φ(z)/Φ(z): from erfcx below 0, from erfc above, from the Mills-ratio series far in the left tail
        direct_neg = neg + np.sqrt(2 / np.pi) / erfcx(-neg / _SQRT2)
        direct_pos = pos + np.sqrt(2 / np.pi) * xp.exp(-0.5 * pos**2) / (2.0 - erfc(pos / _SQRT2))
        x = xp.maximum(-z, _MILLS_SERIES)
        r = x**-2
        series = (r * (1 - r * (3 - r * (15 - r * (105 - 945 * r))))) / (
            (1 / x) * (1 - r * (1 - r * (3 - r * (15 - 105 * r))))
        )  # (1 - x R(x)) / R(x), R the Mills ratio at x = -z
        shifted = where(z < -_MILLS_SERIES, series, where(z < 0, direct_neg, direct_pos))
        return shifted / np.sqrt(self.gamma)

    def log_normaliser_at_beta(self, field, beta):
        """The log normaliser of :meth:`tempered` ``(β)`` in the field ``β f``: ``A(√β f) - ½ log β`` per unit.

        ``field`` is the untempered ``f``; ``beta`` (> 0) is a scalar or broadcasts against ``field``
        (NumPy or PyTensor).
        """
        from pymc_rbm.primitives import is_symbolic

        xp = _ops(beta if is_symbolic(beta) else field)[0]
        return self.log_normaliser(beta**0.5 * field) - 0.5 * xp.log(beta)

    def bias_log_weight(self, x, biases):
        """``x·b - Σ_j γ_j x_j² / 2`` for every row ``b`` of ``biases`` (k, n_units), float64 (n, k)."""
        quadratic = 0.5 * (self.gamma * x**2).sum(axis=-1)
        return self.dot(x, np.moveaxis(biases, 0, -1), dtype=np.float64) - quadratic[..., None]

    def log_prob(self, x, field):
        """``Σ_j log p(h_j | f_j) = Σ_j (f_j h_j - γ_j h_j² / 2 - A(f_j))`` for ``h >= 0``, shape (...)."""
        return (x * field - 0.5 * self.gamma * x**2 - self.log_normaliser(field)).sum(axis=-1)

    # ------------------------------------------------------------ update
    def update(self, rng, x, field, rule):
        """The exact draw of every unit from ``N(f/γ, 1/γ)`` truncated to ``[0, ∞)``, whatever the rule.

        The draw is ``h = (z - w) / √γ`` with ``w = Φ⁻¹(u Φ(z))`` taken in log
        space (``scipy.special.ndtri_exp``), one uniform ``u`` per unit, so it
        stays exact and finite for fields of any size. Flip-the-state and
        Metropolised Gibbs do not apply to continuous units: ``rule`` is
        read for nothing, ``x`` (the current states) is not read.

        Returns
        -------
        new : ndarray of float64 of shape ``field.shape``
        n_changed : ndarray of int64 of shape ``field.shape[:-1]``
            All units, almost surely.
        """
        from scipy.special import log_ndtr, ndtri_exp

        field = np.asarray(field, dtype=np.float64)
        z = self._z(field)
        w = ndtri_exp(np.log(rng.random(field.shape)) + log_ndtr(z))
        new = np.maximum(z - w, 0.0) / np.sqrt(self.gamma)
        return new, np.full(field.shape[:-1], field.shape[-1], dtype=np.int64)

    def states(self, n, start=0, stop=None, dtype=np.float64):
        raise ValueError("ReLU units are continuous: their configurations cannot be enumerated (enumerate the "
                         "other layer)")

    def n_states(self, n):
        raise ValueError("ReLU units are continuous: their configurations cannot be enumerated (enumerate the "
                         "other layer)")

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

"""A Boltzmann machine over ±1 spins, the model of Lawrence, Bishop & Jordan (1998), with exact enumeration.

An RBM is a Boltzmann machine with bipartite couplings (:meth:`BoltzmannMachine.from_rbm`);
:mod:`~pymc_rbm.estimators.mixture_mean_field` bounds ``log Z`` of either.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy.special import logsumexp

from pymc_rbm.enumeration import EnumerationTooLarge
from pymc_rbm.params import RBMParams, SpinRBMParams
from pymc_rbm.validation import check_float_array

__all__ = ["MAX_BM_UNITS", "BMMoments", "BoltzmannMachine"]

#: Largest Boltzmann machine :meth:`BoltzmannMachine.log_partition_exact` enumerates by default.
MAX_BM_UNITS = 20


class BMMoments(NamedTuple):
    """Moments of a Boltzmann machine over ±1 spins.

    Attributes
    ----------
    m : ndarray of shape (n_units,)
        ``⟨s_i⟩``.
    C : ndarray of shape (n_units, n_units)
        ``⟨s_i s_j⟩`` (ones on the diagonal).
    """

    m: np.ndarray
    C: np.ndarray


@dataclass(frozen=True, eq=False)
class BoltzmannMachine:
    """A Boltzmann machine over ±1 spins: ``E(s) = -½ sᵀJs - b·s = -Σ_{i<j} J_ij s_i s_j - b·s``.

    Parameters
    ----------
    J : array_like of shape (n_units, n_units)
        Symmetric couplings with a zero diagonal.
    b : array_like of shape (n_units,)
        Biases (fields).

    Notes
    -----
    The arrays are copied and read-only, as in :class:`~pymc_rbm.params.RBMParams`.
    An RBM is a Boltzmann machine with bipartite couplings:
    :meth:`from_rbm` builds it from the spin form.
    """

    J: np.ndarray
    b: np.ndarray

    def __init__(self, J, b, *, atol: float = 1e-12):
        J = check_float_array(J, "J", 2, readonly=True)
        b = check_float_array(b, "b", 1, readonly=True)
        n = J.shape[0]
        if J.shape != (n, n) or n == 0:
            raise ValueError(f"J must be a non-empty square matrix, got shape {J.shape}")
        if b.shape != (n,):
            raise ValueError(f"b has shape {b.shape}, but J of shape {J.shape} needs ({n},)")
        asym = float(np.abs(J - J.T).max())
        if asym > atol * max(1.0, float(np.abs(J).max())):
            raise ValueError(f"J must be symmetric; max |J - J.T| = {asym:.3g}")
        diag = float(np.abs(np.diag(J)).max())
        if diag > 0.0:
            raise ValueError(f"J must have a zero diagonal (s_i² = 1 makes it a constant); max |J_ii| = {diag:.3g}")
        sym = 0.5 * (J + J.T)
        sym.setflags(write=False)
        object.__setattr__(self, "J", sym)
        object.__setattr__(self, "b", b)

    @property
    def n_units(self) -> int:
        """Number of spins."""
        return self.b.shape[0]

    def __repr__(self) -> str:
        return f"BoltzmannMachine(n_units={self.n_units})"

    @classmethod
    def random(cls, n_units: int, *, scale: float = 1.0, bias_scale: float | None = None, rng=None):
        """A fully connected machine, couplings ``J_ij`` (i < j) and biases uniform on ``(-scale, scale)`` (stochastic).

        ``scale = 1`` is the ensemble of Lawrence, Bishop & Jordan (1998, Fig. 1).
        """
        rng = np.random.default_rng(rng)
        bias_scale = scale if bias_scale is None else bias_scale
        upper = np.triu(rng.uniform(-scale, scale, size=(n_units, n_units)), k=1)
        return cls(upper + upper.T, rng.uniform(-bias_scale, bias_scale, size=n_units))

    @classmethod
    def from_rbm(cls, params: RBMParams | SpinRBMParams) -> BoltzmannMachine:
        """The RBM's spin form as a Boltzmann machine over ``[visible, hidden]`` spins.

        ``log Z`` of the binary RBM is this machine's ``log Z`` plus
        ``params.to_spin().log_offset``.
        """
        spin = params.to_spin() if isinstance(params, RBMParams) else params
        nv, nh = spin.J.shape
        J = np.zeros((nv + nh, nv + nh))
        J[:nv, nv:] = spin.J
        J[nv:, :nv] = spin.J.T
        return cls(J, np.concatenate([spin.vfield, spin.hfield]))

    def energy(self, s) -> np.ndarray:
        """``E(s)`` for spins ``s`` of shape ``(..., n_units)`` in {-1, +1}."""
        s = np.asarray(s, dtype=np.float64)
        return -0.5 * ((s @ self.J) * s).sum(axis=-1) - s @ self.b

    def _states(self, max_units: int | None):
        max_units = MAX_BM_UNITS if max_units is None else max_units
        n = self.n_units
        if n > max_units:
            raise EnumerationTooLarge(
                f"exact enumeration of a Boltzmann machine with {n} units needs 2**{n} = {2.0**n:.3g} states, "
                f"more than the limit of 2**{max_units}; use mean_field_bm or mixture_mean_field_bm instead"
            )
        chunk = 2**16
        shifts = np.arange(n - 1, -1, -1, dtype=np.int64)
        for start in range(0, 2**n, chunk):
            idx = np.arange(start, min(start + chunk, 2**n), dtype=np.int64)
            yield 2.0 * ((idx[:, None] >> shifts) & 1) - 1.0

    def log_partition_exact(self, *, max_units: int | None = None) -> float:
        """``log Σ_s exp(-E(s))`` by enumerating all ``2**n_units`` states (at most ``2**max_units``, default 2**20)."""
        return float(logsumexp([logsumexp(-self.energy(s)) for s in self._states(max_units)]))

    def moments_exact(self, *, max_units: int | None = None) -> BMMoments:
        """Exact ``⟨s_i⟩`` and ``⟨s_i s_j⟩`` by enumeration."""
        log_z = self.log_partition_exact(max_units=max_units)
        m = np.zeros(self.n_units)
        C = np.zeros((self.n_units, self.n_units))
        for s in self._states(max_units):
            p = np.exp(-self.energy(s) - log_z)
            m += p @ s
            C += (s * p[:, None]).T @ s
        return BMMoments(m=m, C=C)

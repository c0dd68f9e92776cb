"""Categorical (Potts) RBMs: visible units with ``q`` values, Bernoulli hidden units.

A Potts-visible RBM (Tubiana, Cocco & Monasson 2019 learn protein motifs with
them) has visible units ``v_i`` in ``{0, …, q - 1}`` (a residue or a base at
each site of a sequence) and hidden units ``h_j`` in {0, 1}, with the energy

    E(v, h) = -Σ_i vbias[i, v_i] - hbias·h - Σ_i Σ_j W[i, v_i, j] h_j.

``W`` has shape ``(n_visible, n_states, n_hidden)``, ``vbias``
``(n_visible, n_states)`` and ``hbias`` ``(n_hidden,)``. Given ``h`` the visible
units are independent Potts units (:class:`~pymc_rbm.layers.Potts`) with fields
``vbias[i] + W[i] · h`` of shape ``(n_visible, q)``; given ``v`` the hidden
units are independent Bernoulli units with input ``hbias + Σ_i W[i, v_i, :]``.
Summing ``h`` out gives the free energy

    F(v) = -Σ_i vbias[i, v_i] - Σ_j softplus(hbias_j + Σ_i W[i, v_i, j]),    p(v) = exp(-F(v)) / Z.

**The gauge.** Adding a constant ``c_i`` to every entry of ``vbias[i, :]``
adds ``c_i`` to ``-E`` of every state: ``p`` is unchanged and ``log Z`` grows by
``Σ_i c_i``. Adding ``d_ij`` to every entry of ``W[i, :, j]`` adds ``d_ij h_j``
to ``-E``, which ``hbias_j ← hbias_j - Σ_i d_ij`` undoes exactly. So the
parameters are defined only up to these per-unit constants;
:meth:`CategoricalRBMParams.zero_sum_gauge` picks the representative whose
sums over the states vanish (the usual choice when comparing or regularising
trained models), and says by how much ``log Z`` moved.

- :mod:`~pymc_rbm.categorical.params`: the parameters, energies and the
  target of the sweep engine (:class:`CategoricalAtBeta`, for
  :func:`pymc_rbm.kernels.sweep.sweep`);
- :mod:`~pymc_rbm.categorical.exact`: exact enumeration (``log Z``, ``log p(v)``,
  marginals, moments, exact draws) by whichever layer has fewer
  configurations;
- :mod:`~pymc_rbm.categorical.random_variable` and
  :mod:`~pymc_rbm.categorical.distribution`: the PyMC distribution
  :class:`CategoricalRBM`, loaded on first use of that name (importing this
  package loads NumPy only); its step methods are in
  :mod:`pymc_rbm.step_methods.categorical`.

Data may be integer labels of shape ``(..., n_visible)`` or one-hot arrays of
shape ``(..., n_visible, n_states)`` (:func:`as_labels`).
"""

from pymc_rbm.categorical.exact import (
    MAX_ENUMERATED_STATES,
    CategoricalEnumeration,
    CategoricalMoments,
    EnumerationTooLarge,
    ExactSampler,
    enumeration_plan,
    log_partition_exact,
    log_prob_exact,
    marginals_exact,
    moments_exact,
    sample_exact,
    visible_distribution,
)
from pymc_rbm.categorical.params import (
    CategoricalAtBeta,
    CategoricalRBMParams,
    as_labels,
    at_beta,
    energy,
    free_energy,
    hidden_input,
    one_hot,
    visible_fields,
)

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
    "MAX_ENUMERATED_STATES",
    "CategoricalEnumeration",
    "CategoricalMoments",
    "EnumerationTooLarge",
    "ExactSampler",
    "enumeration_plan",
    "log_partition_exact",
    "log_prob_exact",
    "marginals_exact",
    "moments_exact",
    "sample_exact",
    "visible_distribution",
    "CategoricalRBM",
]


def __getattr__(name):
    # The PyMC distribution is loaded on first use, so that this package stays NumPy only.
    if name == "CategoricalRBM":
        from pymc_rbm.categorical.distribution import CategoricalRBM

        return CategoricalRBM
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

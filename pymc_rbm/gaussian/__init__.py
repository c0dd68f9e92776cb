"""Gaussian-Bernoulli RBMs: real visible units, Bernoulli hidden units.

The energy (Hinton & Salakhutdinov 2006; Cho, Ilin & Raiko 2011 discuss its forms) is

    E(v, h) = Σ_i (v_i - vbias_i)² / (2 σ_i²) - hbias·h - Σ_ij (v_i / σ_i) W_ij h_j,

with ``W`` of shape ``(n_visible, n_hidden)``, ``vbias`` and ``sigma`` of shape
``(n_visible,)`` and ``hbias`` ``(n_hidden,)``. Given ``h`` the visible units are
independent normals, ``v_i | h ~ N(vbias_i + σ_i (W h)_i, σ_i²)``
(:class:`~pymc_rbm.layers.Gaussian`); given ``v`` the hidden units are Bernoulli
with input ``hbias + (v / σ)·W``. Summing ``h`` out gives the free energy

    F(v) = Σ_i (v_i - vbias_i)² / (2 σ_i²) - Σ_j softplus(hbias_j + Σ_i (v_i / σ_i) W_ij),

and integrating ``v`` out gives the marginal of the hidden layer: with
``m = W h``,

    p(h) ∝ exp(hbias·h + (vbias / σ)·m + ‖m‖² / 2),
    log Z = logsumexp_h [hbias·h + (vbias / σ)·m + ‖m‖² / 2] + Σ_i log(√(2π) σ_i),

so ``p(v) = Σ_h p(h) N(v; vbias + σ ∘ W h, diag σ²)`` is a mixture of
``2**n_hidden`` Gaussians, exact wherever the hidden layer can be enumerated.
The exact mean is ``E[v] = vbias + σ ∘ (W E[h])``.

- :mod:`~pymc_rbm.gaussian.params`: the parameters, the energies and the
  target of the sweep engine (:class:`~pymc_rbm.gaussian.params.GaussianAtBeta`,
  for :func:`pymc_rbm.kernels.sweep.sweep`);
- :mod:`~pymc_rbm.gaussian.exact`: exact enumeration of the hidden layer
  (``log Z``, ``log p(v)``, the mixture, its mean, exact draws);
- :mod:`~pymc_rbm.gaussian.random_variable` and
  :mod:`~pymc_rbm.gaussian.distribution`: the PyMC distribution
  :class:`~pymc_rbm.gaussian.distribution.GaussianRBM`, its logp
  ``-F(v) - log Z`` a PyTensor graph (``log Z`` the log-sum-exp above over a
  constant table of the hidden states), so gradients with respect to ``v``
  (NUTS, which ``pm.sample`` uses for continuous values by default) and to the
  parameters come from PyTensor itself. They are loaded on first use of
  ``GaussianRBM``, ``is_gaussian_rbm_variable`` or ``gaussian_params_of``
  (importing this package loads NumPy only); the step methods are in
  :mod:`pymc_rbm.step_methods.gaussian`.
"""

from pymc_rbm.gaussian.exact import (
    MAX_HIDDEN_ENUMERATED,
    hidden_marginal,
    log_partition_exact,
    log_prob_exact,
    mean_exact,
    sample_exact,
)
from pymc_rbm.gaussian.params import (
    GaussianAtBeta,
    GaussianRBMParams,
    core_parameters,
    energy,
    free_energy,
    gaussian_at_beta,
    hidden_input,
    visible_mean,
)

__all__ = [
    "MAX_HIDDEN_ENUMERATED",
    "GaussianAtBeta",
    "GaussianRBMParams",
    "core_parameters",
    "energy",
    "free_energy",
    "gaussian_at_beta",
    "gaussian_params_of",
    "hidden_input",
    "hidden_marginal",
    "is_gaussian_rbm_variable",
    "log_partition_exact",
    "log_prob_exact",
    "mean_exact",
    "sample_exact",
    "visible_mean",
]


def __getattr__(name):
    # The PyMC layer is loaded on first use, so that this package stays NumPy only.
    if name == "GaussianRBM":
        from pymc_rbm.gaussian.distribution import GaussianRBM

        return GaussianRBM
    if name in ("gaussian_params_of", "is_gaussian_rbm_variable"):
        import pymc_rbm.gaussian.random_variable as random_variable

        return getattr(random_variable, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

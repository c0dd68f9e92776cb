"""How well a sampler mixes: autocorrelation time, ESS, exact SLEM, class changes.

Brügge, Fischer & Igel (2013) judge samplers three ways, and so does this
package, one module each:

- :mod:`~pymc_rbm.diagnostics.autocorr` (§4.3): the integrated autocorrelation
  time ``τ = Σ_{Δt=-∞}^{∞} R(Δt)`` of an energy along the chain; "τ consecutive
  samples are equivalent to one independent sample". It is computed from
  ArviZ's effective sample size, ``τ = n_chains · n_draws / ESS``;
  :func:`~pymc_rbm.diagnostics.autocorr.ess_free_energy` gives the ESS itself.
  :mod:`~pymc_rbm.diagnostics.comparison` puts samplers side by side as in
  the paper's Table 2 (``τ_G``, ``τ_T``, gain ``1 - τ_T / τ_G``).
- :mod:`~pymc_rbm.diagnostics.slem` (§4.1): the second largest eigenvalue
  modulus of the exact transition matrix of a tiny RBM.
- :mod:`~pymc_rbm.diagnostics.modes` (§4.4): how often, and how soon, a chain
  moves between the modes of Artificial Modes.

:mod:`~pymc_rbm.diagnostics.mixing` puts the usual signs of a sampler that
does not mix into words, as ``pm.sample`` reports them after sampling, and
gives R-hat and ESS of every unit of an RBM variable with the units that
never change set apart (ArviZ warns for each of them).

The default quantity is the sampler statistic ``"free_energy"`` that the
package's step methods record per draw in ``sample_stats``: the free energy
``F(v)`` of the visible state. The paper used the joint energy
``E(v_k, h_k)``; pass any other series (a ``(chain, draw)`` array, a
``DataArray``, or ``var_name``/``group`` of a ``DataTree``) to measure that.

This package needs NumPy, xarray and ArviZ (``arviz_stats``, imported on
first use), never PyMC. Every public name of its modules is importable from
here, e.g. ``from pymc_rbm.diagnostics import integrated_autocorr_time``.
"""

from pymc_rbm.diagnostics.autocorr import (
    StuckChainWarning,
    autocorrelation,
    chain_draws,
    ess_free_energy,
    integrated_autocorr_time,
)
from pymc_rbm.diagnostics.comparison import SamplerComparison, compare_samplers
from pymc_rbm.diagnostics.mixing import OVERLAP_LIMIT, RHAT_LIMIT, mixing_problems, unit_diagnostics
from pymc_rbm.diagnostics.modes import NO_CHANGE, ClassChanges, class_changes
from pymc_rbm.diagnostics.slem import exact_slem

__all__ = [
    "StuckChainWarning",
    "chain_draws",
    "integrated_autocorr_time",
    "ess_free_energy",
    "autocorrelation",
    "SamplerComparison",
    "compare_samplers",
    "exact_slem",
    "ClassChanges",
    "NO_CHANGE",
    "class_changes",
    "RHAT_LIMIT",
    "OVERLAP_LIMIT",
    "mixing_problems",
    "unit_diagnostics",
]

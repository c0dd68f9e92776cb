"""The counter-based uniforms of :mod:`pymc_rbm.kernels.philox`, under the module name of their first home.

The compiled loops live in modules named for what they hold:
:mod:`~pymc_rbm.kernels.philox`, :mod:`~pymc_rbm.kernels.update_rule`,
:mod:`~pymc_rbm.kernels.chain_sweeps`, :mod:`~pymc_rbm.kernels.round_loops`
and :mod:`~pymc_rbm.kernels.training_loops`.
"""

from pymc_rbm.kernels.philox import philox_uniforms

__all__ = ["philox_uniforms"]

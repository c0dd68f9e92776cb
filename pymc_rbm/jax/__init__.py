"""The sweep kernel, replica exchange and AIS in JAX, for many chains on accelerators and across devices.

Optional: install with ``pip install "pymc-rbm[jax]"`` (the CPU build of
JAX; for a GPU install JAX's CUDA build as JAX's documentation says). This
package imports JAX, NumPy and the NumPy parts of pymc_rbm, never PyMC.

- :mod:`~pymc_rbm.jax.sweep`: block Gibbs, flip-the-state (Brügge, Fischer
  & Igel 2013) and their α mixture on a batch of chains, in BlackJAX's
  shape: ``init``, ``build_kernel(operator)`` returning
  ``kernel(key, state, params, beta)``, and ``rbm_sampler``; the kernel
  also takes the target record the NumPy sweep takes,
  ``kernel(key, state, target)`` (:class:`~pymc_rbm.kernels.target.FieldTarget`:
  an RBM at β plus per-unit fields; AIS runs it at the points of its path).
- :mod:`~pymc_rbm.jax.tempering`: replica exchange with the non-reversible
  even/odd swaps of Syed et al. (2022), swap recorders and the ladder
  adapted to the communication barrier.
- :mod:`~pymc_rbm.jax.ais`: AIS and reverse AIS from the base-rate model
  (Salakhutdinov & Murray 2008), returning the NumPy estimators'
  :class:`~pymc_rbm.estimators.LogPartitionEstimate`; also reachable as
  ``pymc_rbm.estimators.log_partition(params, "ais", backend="jax")``.
- :mod:`~pymc_rbm.jax.sharding`: the chain axis split over a device mesh.
- :mod:`~pymc_rbm.jax.arrays`: parameters as JAX arrays, the floating type
  (float32 by default on accelerators; float64 needs JAX's 64-bit mode,
  which this package never switches on by itself), the uniforms.

For example, a hundred chains of flip-the-state:

>>> import jax, numpy as np
>>> from pymc_rbm import RBMParams
>>> from pymc_rbm.jax import from_params, sweep
>>> params = from_params(RBMParams.random(6, 4, scale=2.0, rng=1), dtype="float32")
>>> kernel = jax.jit(sweep.build_kernel("flip"))
>>> state = sweep.init(jax.random.key(0), np.zeros((100, 6)), params)
>>> for i in range(10):
...     state, info = kernel(jax.random.key(i), state, params)
>>> state.v.shape
(100, 6)
"""

try:
    import jax  # noqa: F401
except ImportError as err:  # pragma: no cover - exercised only without the extra
    raise ImportError('pymc_rbm.jax needs JAX: pip install "pymc-rbm[jax]" (or jax itself)') from err

from pymc_rbm.jax import arrays, sharding, sweep, tempering
from pymc_rbm.jax.ais import ais, anneal, reverse_ais
from pymc_rbm.jax.arrays import RBMArrays, check_dtype, default_dtype, from_params, x64_enabled
from pymc_rbm.jax.sharding import chain_mesh, shard_chains
from pymc_rbm.jax.sweep import RBMState, SweepInfo, build_kernel, init, rbm_sampler

#: The log Z estimators of this backend, by the names of :data:`pymc_rbm.estimators.LOG_PARTITION_METHODS`.
LOG_PARTITION_METHODS = {"ais": ais, "reverse_ais": reverse_ais}

__all__ = [
    "LOG_PARTITION_METHODS",
    "RBMArrays",
    "RBMState",
    "SweepInfo",
    "ais",
    "anneal",
    "arrays",
    "build_kernel",
    "chain_mesh",
    "check_dtype",
    "default_dtype",
    "from_params",
    "init",
    "rbm_sampler",
    "reverse_ais",
    "shard_chains",
    "sharding",
    "sweep",
    "tempering",
    "x64_enabled",
]

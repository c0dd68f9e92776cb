"""Wormhole moves (Hinton, Welling & Mnih 2003): long-range Metropolis proposals suggested by the data.

Hinton, Welling and Mnih (2003, "Wormholes improve contrastive divergence")
use the training data to propose jumps between modes that brief MCMC cannot
connect. A move here **only proposes**: ``propose(rng, x)`` returns a
:class:`~pymc_rbm.kernels.wormhole.proposal.WormholeProposal` (the proposed states and the log proposal ratio
``log q(x | x') - log q(x' | x)``), and :func:`~pymc_rbm.kernels.wormhole.step.wormhole_step` accepts it with
the one shared Metropolis decision :func:`~pymc_rbm.kernels.metropolis_accept`
and the full log density of the model, so every move is exact for any target.

- :class:`~pymc_rbm.kernels.wormhole.point.PointWormholes` (§2): the offset between two distinct data points
  chosen at random, ``x' = x + (d_a - d_b)`` (continuous) or
  ``x' = x XOR d_a XOR d_b`` (binary). Symmetric: ``log_q_ratio = 0``.
- :class:`~pymc_rbm.kernels.wormhole.optimization.OptimizationWormholes` (§3, continuous): the forward jump
  ``x0 + d``, a few steps of steepest descent on ``-log π``, a Gaussian from
  the diagonal, positive-definite-adjusted Hessian, a draw ``y`` from it, the
  backward jump ``y - d`` and its Gaussian; ``log_q_ratio = log g_z(x0) - log g_x(y)``.
- :class:`~pymc_rbm.kernels.wormhole.region.RegionWormholes` (§4, "darting"): regions fitted to the data.
  Continuous: the ellipsoids ``(x - μ_k)ᵀ Σ_k⁻¹ (x - μ_k) <= α²`` of a Gaussian
  mixture fitted by EM, mapped onto each other by eq. (8) (with its minus
  sign). Binary: Hamming balls of one radius around cluster centres (modes of
  a Bernoulli mixture fitted by EM), mapped by XOR of the centres. Both use the
  overlap rule of eq. (9).

All moves act on a batch of chains, ``x`` of shape ``(n_chains, n_units)``,
and never modify their inputs.

Each move has its module, and so has the step that accepts any of them;
every public name is importable from here.

For example, point wormholes between two modes at ±3:

>>> import numpy as np
>>> from pymc_rbm.kernels.wormhole import PointWormholes, wormhole_step
>>> data = np.array([[-3.0], [-3.1], [3.0], [2.9]])
>>> moves = PointWormholes(data, binary=False)
>>> log_density = lambda x: -0.5 * np.min((x - np.array([-3.0, 3.0])) ** 2, axis=1)
>>> x, info = wormhole_step(np.random.default_rng(0), np.zeros((5, 1)) - 3.0, log_density, moves)
>>> x.shape, info.accepted.shape
((5, 1), (5,))
"""

from pymc_rbm.kernels.wormhole.optimization import OptimizationWormholes
from pymc_rbm.kernels.wormhole.point import PointWormholes
from pymc_rbm.kernels.wormhole.proposal import WormholeProposal
from pymc_rbm.kernels.wormhole.region import RegionWormholes
from pymc_rbm.kernels.wormhole.step import WormholeInfo, wormhole_step

__all__ = [
    "WormholeProposal",
    "WormholeInfo",
    "PointWormholes",
    "OptimizationWormholes",
    "RegionWormholes",
    "wormhole_step",
]

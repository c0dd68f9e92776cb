"""The one exact harness for every kernel, move and estimator: tiny enumerable RBMs.

For an RBM with at most :data:`~pymc_rbm.testing.states.MAX_JOINT_UNITS` units
in all, the joint state space ``Ω = {0, 1}^(n_visible + n_hidden)`` can be
listed, so everything a sampler should satisfy can be checked exactly:

- :mod:`~pymc_rbm.testing.states`: every joint state in one order, and
  ``p_β(v, h)`` by enumeration;
- :mod:`~pymc_rbm.testing.matrices`: the full ``|Ω| × |Ω|`` matrix of one
  sweep ``T = T_h T_v`` of Gibbs, flip-the-state or the α mixture, from the
  same per-unit probability functions the samplers use;
- :mod:`~pymc_rbm.testing.markov`: stationarity, irreducibility, period and
  convergence of any transition matrix, and its SLEM (rate of convergence);
- :mod:`~pymc_rbm.testing.frequencies`: the real sampling code run from
  every state many times, the observed next states tested against the rows of
  a matrix, so a kernel and its matrix cannot drift apart.

Moves that are not layer updates (wormholes, Metropolis-corrected moves)
plug in by building their own matrix over the same state ordering
(``joint_states``, ``joint_index``) and reusing the checks. Every public name
of these modules is importable from here, e.g.
``from pymc_rbm.testing import transition_matrix``.

State ordering: joint state ``r`` has visible part ``binary_states(n_visible)[r // 2**n_hidden]``
and hidden part ``binary_states(n_hidden)[r % 2**n_hidden]`` (unit 0 most
significant, as in :func:`pymc_rbm.estimators.binary_states`); matrices act
on row vectors, ``T[x, y] = P(next = y | current = x)``.

Examples
--------
>>> from pymc_rbm import RBMParams
>>> from pymc_rbm.testing import joint_distribution, transition_matrix, assert_converges, slem
>>> params = RBMParams.random(2, 2, scale=3.0, rng=0)
>>> p = joint_distribution(params)
>>> T = transition_matrix(params, "flip")
>>> assert_converges(p, T)
>>> 0.0 <= slem(T) < 1.0
True
"""

from pymc_rbm.testing.frequencies import (
    FrequencyCheck,
    assert_frequencies,
    empirical_transition_check,
    frequency_check,
    transition_counts,
)
from pymc_rbm.testing.markov import (
    assert_converges,
    assert_stationary,
    is_aperiodic,
    is_irreducible,
    is_primitive,
    period,
    slem,
)
from pymc_rbm.testing.matrices import (
    gibbs_change_probability,
    informed_visible_matrix,
    layer_matrices,
    scan_visible_matrix,
    transition_matrix,
)
from pymc_rbm.testing.states import MAX_JOINT_UNITS, joint_distribution, joint_index, joint_states, state_index


__all__ = [
    "MAX_JOINT_UNITS",
    "joint_states",
    "state_index",
    "joint_index",
    "joint_distribution",
    "gibbs_change_probability",
    "layer_matrices",
    "transition_matrix",
    "informed_visible_matrix",
    "scan_visible_matrix",
    "assert_stationary",
    "is_irreducible",
    "period",
    "is_aperiodic",
    "is_primitive",
    "assert_converges",
    "slem",
    "FrequencyCheck",
    "frequency_check",
    "assert_frequencies",
    "transition_counts",
    "empirical_transition_check",
]

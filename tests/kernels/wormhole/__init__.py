"""Tests of pymc_rbm.kernels.wormhole (seed 002): exact invariance on enumerable spaces, sampling code against matrices.

Binary moves are checked exactly: the full transition matrix of the
Metropolis-accepted move over all visible states of a small RBM is built from
the moves' own ``proposal_distribution`` and must satisfy ``p T = p`` to
1e-12; then ``propose`` and ``wormhole_step`` are run from every state and
their next states tested against the proposal matrix and ``T`` (chi-square),
so the matrices and the sampling code cannot drift apart.

Continuous moves cannot be enumerated; there, exact iid draws from a
two-component Gaussian mixture go through one step and the result is tested
against the exact cell probabilities of a grid (chi-square): a kernel that
leaves ``π`` invariant keeps iid draws from ``π`` iid draws from ``π``. A
deliberately broken variant of each move shows the check has the power to
see a wrong proposal ratio.
"""

"""A stand-in generator that hands out given uniforms: the NumPy kernels fed the dense path's own.

The dense path of :mod:`pymc_rbm.kernels.compiled` draws its uniforms from a counter-based generator keyed by
the caller's (:func:`~pymc_rbm.kernels.compiled.dense_uniforms`); given those, the NumPy kernels, which draw
one ``rng.random(shape)`` per layer, make the same chain.
"""

from __future__ import annotations

import numpy as np


class UniformStream:
    """``random(shape)`` hands out the given uniforms in order (all that the NumPy kernels call)."""

    def __init__(self, u):
        self.u, self.i = np.ravel(u), 0

    def random(self, shape):
        n = int(np.prod(shape))
        if self.i + n > self.u.size:
            raise AssertionError("the kernel asked for more uniforms than the dense call used")
        out = self.u[self.i : self.i + n].reshape(shape)
        self.i += n
        return out

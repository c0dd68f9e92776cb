"""Tests of pymc_rbm.kernels.wormhole.optimization: the deterministic descent and its Gaussian."""

from __future__ import annotations

import numpy as np
from numpy.testing import assert_allclose, assert_array_equal

from pymc_rbm.kernels import OptimizationWormholes

from ._moves import MEANS, SDS, mixture_draws, mixture_logpdf_and_grad


def test_optimization_gaussian_is_deterministic_and_descends():
    moves = OptimizationWormholes(mixture_draws(50, 1), mixture_logpdf_and_grad)
    x = mixture_draws(20, 2) + 0.8
    m1, h1 = moves.gaussian(x)
    m2, h2 = moves.gaussian(x.copy())
    assert_array_equal(m1, m2)
    assert_array_equal(h1, h2)
    assert (mixture_logpdf_and_grad(m1)[0] >= mixture_logpdf_and_grad(x)[0]).all()
    assert (h1 >= moves.min_curvature - 1e-12).all()
    # near a mode, the finite-difference curvature is the precision of the component
    m, h = moves.gaussian(MEANS[:1] + 0.05)
    assert_allclose(h[0], 1 / SDS[0] ** 2, rtol=1e-3)


def test_given_hessian_diagonal_replaces_the_finite_differences():
    def hessian_diag(m):
        return np.tile(1 / SDS[0] ** 2, (len(m), 1))

    data = mixture_draws(50, 1)
    exact = OptimizationWormholes(data, mixture_logpdf_and_grad, hessian_diag=hessian_diag)
    fd = OptimizationWormholes(data, mixture_logpdf_and_grad)
    m = MEANS[:1] + 0.01
    assert_array_equal(exact.curvature(m), hessian_diag(m))
    assert_allclose(fd.curvature(m), hessian_diag(m), rtol=1e-4)
    lifted = OptimizationWormholes(data, mixture_logpdf_and_grad, hessian_diag=lambda m: np.array([[-1.0, 2.0]]))
    assert_allclose(lifted.curvature(m), [[lifted.min_curvature, 3.0 + lifted.min_curvature]])

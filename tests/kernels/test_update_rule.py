"""The compiled layer rule's parts: the vectorised exponentials of a row."""

import numpy as np
import pytest

from pymc_rbm.kernels.compiled import available

pytestmark = pytest.mark.skipif(not available(), reason="needs Numba")


def test_exp_neg_abs_is_exact_to_an_ulp():
    from pymc_rbm.kernels.update_rule import exp_neg_abs

    rng = np.random.default_rng(1)
    a = np.concatenate([rng.normal(0, 1, 20001), rng.uniform(-800, 800, 4000),
                        [0.0, -0.0, 1e-300, 708.0, -708.0, 708.5, -745.0, 746.0, 1e300, -1e300]])
    bias = rng.normal(size=a.size)
    x, e = a.copy(), np.empty_like(a)
    exp_neg_abs(x, bias, True, e)
    np.testing.assert_array_equal(x, a + bias)  # the bias added in place
    exact = np.exp(-np.abs(x.astype(np.longdouble)))
    normal = np.abs(x) <= 708
    ulps = np.abs(e[normal] - exact[normal]) / np.spacing(exact[normal].astype(np.float64))
    assert ulps.max() <= 1.0
    np.testing.assert_array_equal(e[~normal], np.exp(-np.abs(x[~normal])))  # NumPy's below exp(-708)

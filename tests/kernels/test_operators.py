"""Operators by name: one place for the names "gibbs", "flip" and a mixture weight."""

import numpy as np
import pytest

from pymc_rbm.kernels import build_operator, flip_sweep, gibbs_sweep, operator_alpha


def test_names_and_weights():
    assert operator_alpha("gibbs") == 0.0
    assert operator_alpha("flip") == 1.0
    assert operator_alpha(0.3) == 0.3
    assert operator_alpha(np.float32(1.0)) == 1.0
    assert operator_alpha(0) == 0.0


@pytest.mark.parametrize("bad", ["Gibbs", "metropolis", True, None, -0.1, 1.5, float("nan"), [0.5]])
def test_anything_else_is_refused(bad):
    with pytest.raises(ValueError, match="gibbs.*flip.*alpha"):
        operator_alpha(bad)
    with pytest.raises(ValueError, match="gibbs.*flip.*alpha"):
        build_operator(bad)


def test_kernels():
    assert build_operator("gibbs") is gibbs_sweep
    flip = build_operator("flip")
    assert flip.func is flip_sweep and flip.keywords == {"alpha": 1.0}
    assert build_operator(0.25).keywords == {"alpha": 0.25}

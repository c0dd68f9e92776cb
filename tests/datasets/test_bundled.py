"""Tests of pymc_rbm.datasets.bundled: the RBMs shipped with the package."""

from __future__ import annotations

import pytest

from pymc_rbm import RBMParams
from pymc_rbm.datasets import BUNDLED_RBMS, bundled_rbm


def test_every_bundled_rbm_loads():
    for name in BUNDLED_RBMS:
        params = bundled_rbm(name)
        assert isinstance(params, RBMParams)
    assert bundled_rbm().W.shape == (16, 16)


def test_an_unknown_name_gets_the_available_ones():
    with pytest.raises(ValueError, match="bars_and_stripes_4x4"):
        bundled_rbm("mnist")

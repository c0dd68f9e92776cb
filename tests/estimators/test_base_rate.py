"""Tests of the base-rate model of the annealing path (pymc_rbm.estimators.base_rate)."""

from __future__ import annotations

import numpy as np
import pytest

from pymc_rbm import RBMParams
from pymc_rbm.estimators import log_partition_mean_field
from pymc_rbm.estimators.base_rate import base_rate_vbias


def _model(nv, nh, scale, seed=0):
    return RBMParams.random(nv, nh, scale=scale, rng=100 * seed + 10 * nv + nh)


def test_base_rate_vbias():
    p = _model(4, 3, 1.0)
    data = np.array([[1, 0, 0, 1], [1, 1, 0, 1], [1, 0, 0, 0]])
    b = base_rate_vbias(p, data)
    prob = (data.mean(0) + 0.005) / 1.01
    np.testing.assert_allclose(b, np.log(prob / (1 - prob)))
    assert np.all(np.isfinite(b))  # a unit on in every row still has a finite bias
    m_v = log_partition_mean_field(p).diagnostics["m_v"]  # without data: the mean-field base rate
    prob = (m_v + 0.005) / 1.01
    np.testing.assert_allclose(base_rate_vbias(p), np.log(prob / (1 - prob)))
    np.testing.assert_array_equal(base_rate_vbias(p, data, base="mean_field"), base_rate_vbias(p))
    np.testing.assert_array_equal(base_rate_vbias(p, data, base="target"), p.vbias)
    np.testing.assert_array_equal(base_rate_vbias(p, base="zero"), np.zeros(4))
    np.testing.assert_array_equal(base_rate_vbias(p, base=[1, 2, 3, 4]), [1, 2, 3, 4])
    with pytest.raises(ValueError, match="needs data"):
        base_rate_vbias(p, base="data")
    with pytest.raises(ValueError, match="binary"):
        base_rate_vbias(p, data + 0.5)
    with pytest.raises(ValueError, match="4 finite"):
        base_rate_vbias(p, base=[1.0, 2.0])
    with pytest.raises(ValueError, match="base must be"):
        base_rate_vbias(p, base="uniform")


def test_base_rate_of_a_spin_rbm_is_the_binary_one_in_spin_fields():
    """For ±1 spins the base's fields are half the binary form's biases: the same probability of +1 per unit."""
    p = _model(7, 4, 1.5)
    spin = p.to_spin()
    bits = (np.random.default_rng(1).random((30, 7)) < 0.4).astype(float)
    np.testing.assert_allclose(base_rate_vbias(spin, 2 * bits - 1), base_rate_vbias(p, bits) / 2, rtol=1e-15)
    np.testing.assert_allclose(base_rate_vbias(spin), base_rate_vbias(p) / 2, atol=1e-8)  # the mean-field base, solved to its tolerance
    np.testing.assert_array_equal(base_rate_vbias(spin, base="target"), spin.vfield)
    with pytest.raises(ValueError):
        base_rate_vbias(spin, bits)  # 0/1 rows are not spins


def test_a_mixture_reference_is_the_distinct_fixed_points_its_starts_lead_to():
    """From the 30 bars-and-stripes patterns the bundled RBM's fixed points are the 30 patterns, each a sharp
    component; from the model alone (receptive fields) fewer, all distinct."""
    from pymc_rbm.datasets import bars_and_stripes, bundled_rbm
    from pymc_rbm.estimators.base_rate import mixture_reference
    from pymc_rbm.primitives import sigmoid

    p = bundled_rbm()
    patterns = bars_and_stripes(4)
    mix = mixture_reference(p, patterns, rng=0)
    assert mix.n_components == len(patterns)
    np.testing.assert_allclose(np.exp(mix.log_weights), 1 / len(patterns), rtol=1e-12)
    m_v = sigmoid(mix.visible_logits)
    assert np.all(np.abs(m_v - np.rint(m_v)) < 0.01)  # sharp
    assert {tuple(r) for r in np.rint(m_v).astype(int)} == {tuple(r) for r in patterns.astype(int)}
    own = mixture_reference(p)
    assert 2 <= own.n_components < len(patterns)
    m_v = sigmoid(own.visible_logits)
    gaps = np.abs(m_v[:, None] - m_v[None]).max(axis=-1) + np.eye(own.n_components)
    assert gaps.min() > 0.5  # distinct
    assert mixture_reference(p, patterns, n_components=5, rng=0).n_components == 5


def test_a_mixture_reference_refuses_bad_input():
    from pymc_rbm.estimators.base_rate import mixture_reference

    p = _model(6, 3, 1.0)
    with pytest.raises(TypeError, match="binary RBMParams"):
        mixture_reference(p.to_spin())
    for bad in (0, 2.5, True):
        with pytest.raises(ValueError, match="n_components"):
            mixture_reference(p, n_components=bad)
    with pytest.raises(ValueError, match="binary"):
        mixture_reference(p, np.full((4, 6), 0.5))

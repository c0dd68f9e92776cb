"""Tests of pymc_rbm.energy against brute force, on NumPy and on PyTensor."""

from __future__ import annotations

import warnings

import _brute
import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

from pymc_rbm import RBMParams
from pymc_rbm.energy import (
    RBMTensors,
    energy,
    free_energy,
    hidden_activation,
    mean_hiddens,
    mean_visibles,
    sigmoid,
    softplus,
    visible_activation,
)


@pytest.fixture
def params():
    return RBMParams.random(5, 4, scale=1.5, rng=11)


def _random_binary(rng, shape):
    return (rng.random(shape) < 0.5).astype(np.float64)


# ---------------------------------------------------------------- primitives
def test_softplus_and_sigmoid_extremes():
    x = np.array([-1e5, -800.0, -745.0, -40.0, -1.0, 0.0, 1e-20, 1.0, 40.0, 745.0, 800.0, 1e5])
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        sp = softplus(x)
        sg = sigmoid(x)
    np.testing.assert_allclose(sp, np.logaddexp(0.0, x), rtol=1e-15, atol=0)
    assert np.all(np.isfinite(sp)) and np.all((sg >= 0) & (sg <= 1))
    for xi, si in zip(x, sg):
        assert si == pytest.approx(_brute.sigmoid_decimal(xi), rel=1e-14, abs=1e-300)
    assert softplus(0.0) == pytest.approx(np.log(2.0), rel=1e-15)


def test_primitives_do_not_mutate():
    x = np.linspace(-5, 5, 11)
    x0 = x.copy()
    softplus(x)
    sigmoid(x)
    np.testing.assert_array_equal(x, x0)


# -------------------------------------------------------- numpy vs brute force
def test_energy_matches_loops(params):
    rng = np.random.default_rng(0)
    v = _random_binary(rng, (6, 5))
    h = _random_binary(rng, (6, 4))
    got = energy(v, h, params)
    assert got.shape == (6,)
    for r in range(6):
        assert got[r] == pytest.approx(_brute.energy(v[r], h[r], params.W, params.vbias, params.hbias), abs=1e-12)
    # single (unbatched) vectors give a scalar
    assert np.ndim(energy(v[0], h[0], params)) == 0
    assert float(energy(v[0], h[0], params)) == pytest.approx(float(got[0]), abs=1e-13)


def test_energy_accepts_non_binary_states(params):
    # the formula is the formula: real-valued inputs (e.g. mean-field) are fine
    rng = np.random.default_rng(1)
    v, h = rng.random(5), rng.random(4)
    assert float(energy(v, h, params)) == pytest.approx(_brute.energy(v, h, params.W, params.vbias, params.hbias))


@pytest.mark.parametrize("nv, nh, scale", [(1, 1, 1.0), (3, 5, 2.0), (5, 4, 1.5), (6, 2, 10.0)])
def test_free_energy_matches_enumeration_of_hidden(nv, nh, scale):
    p = RBMParams.random(nv, nh, scale=scale, rng=nv * 10 + nh)
    V = _brute.all_states(nv)
    got = free_energy(V, p)
    want = _brute.free_energy(V, p.W, p.vbias, p.hbias)
    assert got.shape == (2**nv,)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-12)
    # and summing exp(-F) gives the brute-force log Z
    lz = np.logaddexp.reduce(-got)
    assert lz == pytest.approx(_brute.log_z(p.W, p.vbias, p.hbias), abs=1e-11)


def test_activations(params):
    rng = np.random.default_rng(2)
    v = _random_binary(rng, (3, 5))
    h = _random_binary(rng, (3, 4))
    np.testing.assert_allclose(hidden_activation(v, params), params.hbias + v @ params.W, rtol=1e-15)
    np.testing.assert_allclose(visible_activation(h, params), params.vbias + (params.W @ h.T).T, rtol=1e-14)


def test_conditionals_match_enumeration(params):
    for v in _brute.all_states(5)[::3]:
        np.testing.assert_allclose(
            mean_hiddens(v, params), _brute.conditional_hidden(v, params.W, params.vbias, params.hbias), atol=1e-13
        )
    for h in _brute.all_states(4):
        np.testing.assert_allclose(
            mean_visibles(h, params), _brute.conditional_visible(h, params.W, params.vbias, params.hbias), atol=1e-13
        )


def test_functions_do_not_mutate_inputs(params):
    rng = np.random.default_rng(3)
    v = _random_binary(rng, (4, 5))
    h = _random_binary(rng, (4, 4))
    beta = np.array([0.1, 0.5, 1.0, 2.0])
    copies = [v.copy(), h.copy(), beta.copy()]
    energy(v, h, params)
    free_energy(v, params, beta)
    mean_hiddens(v, params, beta)
    mean_visibles(h, params, beta)
    for a, a0 in zip((v, h, beta), copies):
        np.testing.assert_array_equal(a, a0)


# -------------------------------------------------------------- batch shapes
def test_batch_shapes(params):
    rng = np.random.default_rng(4)
    v = _random_binary(rng, (2, 3, 5))
    h = _random_binary(rng, (2, 3, 4))
    assert energy(v, h, params).shape == (2, 3)
    assert free_energy(v, params).shape == (2, 3)
    assert mean_hiddens(v, params).shape == (2, 3, 4)
    assert mean_visibles(h, params).shape == (2, 3, 5)
    assert hidden_activation(v, params).shape == (2, 3, 4)
    assert visible_activation(h, params).shape == (2, 3, 5)
    # each batch element equals the unbatched computation
    flat = free_energy(v.reshape(6, 5), params).reshape(2, 3)
    np.testing.assert_allclose(free_energy(v, params), flat, rtol=1e-15)
    for i in range(2):
        for j in range(3):
            assert float(free_energy(v[i, j], params)) == pytest.approx(flat[i, j], rel=1e-14)
            np.testing.assert_allclose(mean_hiddens(v[i, j], params), mean_hiddens(v, params)[i, j], rtol=1e-14)


# ---------------------------------------------------------------------- beta
def _tempered_free_energy_brute(v, p, beta):
    """-log Σ_h exp(-β E(v, h)) by enumeration (β E is the energy of a tempered model)."""
    return _brute.free_energy(v, beta * p.W, beta * p.vbias, beta * p.hbias)


@pytest.mark.parametrize("beta", [0.0, 0.3, 1.0, 2.5])
def test_scalar_beta(params, beta):
    V = _brute.all_states(5)
    np.testing.assert_allclose(free_energy(V, params, beta), _tempered_free_energy_brute(V, params, beta), atol=1e-12)
    np.testing.assert_allclose(mean_hiddens(V, params, beta), 1 / (1 + np.exp(-beta * (params.hbias + V @ params.W))))
    H = _brute.all_states(4)
    np.testing.assert_allclose(
        mean_visibles(H, params, beta), 1 / (1 + np.exp(-beta * (params.vbias + H @ params.W.T)))
    )
    # numpy scalars and 0-d arrays work like floats
    np.testing.assert_allclose(free_energy(V, params, np.float64(beta)), free_energy(V, params, np.array(beta)))


def test_beta_one_and_zero(params):
    V = _brute.all_states(5)
    np.testing.assert_array_equal(free_energy(V, params, 1.0), free_energy(V, params))
    np.testing.assert_allclose(free_energy(V, params, 0.0), -4 * np.log(2.0), rtol=1e-15)
    np.testing.assert_allclose(mean_hiddens(V, params, 0.0), 0.5)


def test_per_chain_beta(params):
    rng = np.random.default_rng(5)
    v = _random_binary(rng, (4, 5))
    h = _random_binary(rng, (4, 4))
    beta = np.array([0.0, 0.25, 1.0, 3.0])
    fe = free_energy(v, params, beta)
    mh = mean_hiddens(v, params, beta)
    mv = mean_visibles(h, params, beta)
    assert fe.shape == (4,) and mh.shape == (4, 4) and mv.shape == (4, 5)
    for c in range(4):
        assert fe[c] == pytest.approx(float(_tempered_free_energy_brute(v[c], params, beta[c])), abs=1e-12)
        np.testing.assert_allclose(mh[c], mean_hiddens(v[c], params, beta[c]), rtol=1e-15)
        np.testing.assert_allclose(mv[c], mean_visibles(h[c], params, beta[c]), rtol=1e-15)


def test_per_chain_beta_with_two_batch_axes(params):
    rng = np.random.default_rng(6)
    v = _random_binary(rng, (2, 3, 5))
    beta = rng.random((2, 3)) * 2
    fe = free_energy(v, params, beta)
    mh = mean_hiddens(v, params, beta)
    assert fe.shape == (2, 3) and mh.shape == (2, 3, 4)
    for i in range(2):
        for j in range(3):
            assert fe[i, j] == pytest.approx(float(free_energy(v[i, j], params, beta[i, j])), rel=1e-14)
            np.testing.assert_allclose(mh[i, j], mean_hiddens(v[i, j], params, beta[i, j]), rtol=1e-15)


# -------------------------------------------------------- numerical stability
@pytest.fixture
def huge():
    """|w| = 50 everywhere (random signs): activations reach ±1000, exp() of them overflows float64."""
    rng = np.random.default_rng(7)
    nv, nh = 20, 6
    W = 50.0 * rng.choice([-1.0, 1.0], (nv, nh))
    W[:, 0] = 50.0  # all-on visible layer: activation +1050
    W[:, 1] = -50.0  # and -950
    return RBMParams(W, 50.0 * rng.choice([-1.0, 1.0], nv), 50.0 * rng.choice([-1.0, 1.0], nh))


def test_large_weights_no_overflow_and_high_precision(huge):
    rng = np.random.default_rng(8)
    V = _random_binary(rng, (12, 20))
    V[0] = 1.0  # extreme activations
    V[1] = 0.0
    H = _random_binary(rng, (12, 6))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            fe = free_energy(V, huge)
            mh = mean_hiddens(V, huge)
            mv = mean_visibles(H, huge)
            e = energy(V, H, huge)
            fe_hot = free_energy(V, huge, beta=np.full(12, 3.0))
    for arr in (fe, mh, mv, e, fe_hot):
        assert np.all(np.isfinite(arr))
    assert np.all((mh >= 0) & (mh <= 1)) and np.all((mv >= 0) & (mv <= 1))
    assert np.max(np.abs(hidden_activation(V, huge))) > 710  # exp would overflow here
    for r in range(12):
        ref = _brute.free_energy_decimal(V[r], huge.W, huge.vbias, huge.hbias)
        assert fe[r] == pytest.approx(ref, rel=1e-14, abs=1e-12)
        ref_enum = _brute.free_energy_enumerated_decimal(V[r], huge.W, huge.vbias, huge.hbias)
        assert fe[r] == pytest.approx(ref_enum, rel=1e-14, abs=1e-12)
        for j in range(6):
            a = huge.hbias[j] + V[r] @ huge.W[:, j]
            assert mh[r, j] == pytest.approx(_brute.sigmoid_decimal(a), rel=1e-14, abs=1e-300)
    # the numpy log-sum-exp over all hidden states agrees too
    np.testing.assert_allclose(fe, _brute.free_energy(V, huge.W, huge.vbias, huge.hbias), rtol=1e-14)


# ---------------------------------------------------------------- PyTensor
def _tensors_const(p):
    return RBMTensors(pt.as_tensor(p.W), pt.as_tensor(p.vbias), pt.as_tensor(p.hbias))


def test_pytensor_constants_match_numpy(params):
    rng = np.random.default_rng(9)
    v = _random_binary(rng, (3, 5))
    h = _random_binary(rng, (3, 4))
    t = _tensors_const(params)
    np.testing.assert_allclose(energy(v, h, t).eval(), energy(v, h, params), rtol=1e-14)
    np.testing.assert_allclose(free_energy(v, t).eval(), free_energy(v, params), rtol=1e-14)
    np.testing.assert_allclose(mean_hiddens(v, t).eval(), mean_hiddens(v, params), rtol=1e-14)
    np.testing.assert_allclose(mean_visibles(h, t).eval(), mean_visibles(h, params), rtol=1e-14)
    np.testing.assert_allclose(hidden_activation(v, t).eval(), hidden_activation(v, params), rtol=1e-14)
    np.testing.assert_allclose(visible_activation(h, t).eval(), visible_activation(h, params), rtol=1e-14)
    beta = np.array([0.5, 1.0, 2.0])
    np.testing.assert_allclose(free_energy(v, t, beta).eval(), free_energy(v, params, beta), rtol=1e-14)
    np.testing.assert_allclose(free_energy(v, t, 0.7).eval(), free_energy(v, params, 0.7), rtol=1e-14)


def test_pytensor_symbolic_inputs_match_numpy(params):
    W, b, c = pt.matrix("W"), pt.vector("b"), pt.vector("c")
    v, h = pt.matrix("v"), pt.matrix("h")
    beta = pt.vector("beta")
    t = RBMTensors(W, b, c)
    outs = [
        energy(v, h, t),
        free_energy(v, t),
        free_energy(v, t, beta),
        mean_hiddens(v, t, beta),
        mean_visibles(h, t, beta),
    ]
    fn = pytensor.function([W, b, c, v, h, beta], outs)
    rng = np.random.default_rng(10)
    vv = _random_binary(rng, (4, 5))
    hh = _random_binary(rng, (4, 4))
    bb = np.array([0.0, 0.5, 1.0, 2.0])
    got = fn(params.W, params.vbias, params.hbias, vv, hh, bb)
    want = [
        energy(vv, hh, params),
        free_energy(vv, params),
        free_energy(vv, params, bb),
        mean_hiddens(vv, params, bb),
        mean_visibles(hh, params, bb),
    ]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-14)


def test_pytensor_symbolic_scalar_beta(params):
    bs = pt.scalar("beta")
    v = _brute.all_states(5)
    t = _tensors_const(params)
    np.testing.assert_allclose(free_energy(v, t, bs).eval({bs: 0.4}), free_energy(v, params, 0.4), rtol=1e-14)
    np.testing.assert_allclose(mean_hiddens(v, t, bs).eval({bs: 0.4}), mean_hiddens(v, params, 0.4), rtol=1e-14)


def test_pytensor_large_weights_stable(huge):
    rng = np.random.default_rng(11)
    V = _random_binary(rng, (8, 20))
    V[0] = 1.0
    got = free_energy(V, _tensors_const(huge)).eval()
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, free_energy(V, huge), rtol=1e-14)
    mh = mean_hiddens(V, _tensors_const(huge)).eval()
    np.testing.assert_allclose(mh, mean_hiddens(V, huge), rtol=1e-14, atol=1e-300)


def test_pytensor_gradient_of_free_energy_is_minus_mean(params):
    """dF/dvbias = -v and dF/dhbias = -p(h=1|v): a check that the graph is differentiable."""
    W, b, c = pt.matrix("W"), pt.vector("b"), pt.vector("c")
    v = pt.vector("v")
    f = free_energy(v, RBMTensors(W, b, c))
    gb, gc, gW = pytensor.grad(f, [b, c, W])
    fn = pytensor.function([W, b, c, v], [gb, gc, gW])
    vv = np.array([1.0, 0.0, 1.0, 1.0, 0.0])
    got_b, got_c, got_W = fn(params.W, params.vbias, params.hbias, vv)
    mh = mean_hiddens(vv, params)
    np.testing.assert_allclose(got_b, -vv, atol=1e-15)
    np.testing.assert_allclose(got_c, -mh, rtol=1e-14)
    np.testing.assert_allclose(got_W, -np.outer(vv, mh), rtol=1e-14, atol=1e-15)

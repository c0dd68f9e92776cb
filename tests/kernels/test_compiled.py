"""The compiled sweeps are the NumPy kernels' chain, draw for draw, and follow the exact matrices.

The dense path of large batches draws its uniforms from a counter-based generator keyed by the caller's
(:func:`~pymc_rbm.kernels.compiled.dense_uniforms`): fed those uniforms, the NumPy kernels make its chain.
"""

import numpy as np
import pytest

from pymc_rbm import RBMParams
from pymc_rbm.energy import hidden_activation, visible_activation
from pymc_rbm.kernels import RBMState, flip_sweep, gibbs_sweep, init_state
from pymc_rbm.kernels import LayerRule, compiled
from pymc_rbm.kernels.activations import FULL_EVERY
from pymc_rbm.kernels.compiled import available, carried_sweeps, dense_key, dense_uniforms
from pymc_rbm.testing import empirical_transition_check, transition_matrix
from _uniforms import UniformStream

pytestmark = pytest.mark.skipif(not available(), reason="needs Numba")

MODELS = {
    "random": RBMParams.random(12, 7, scale=1.0, rng=0),
    "strong": RBMParams.random(9, 5, scale=20.0, rng=1),  # |logit| up to ~100: exact 0/1 probabilities
    "zero": RBMParams(np.zeros((6, 4)), np.zeros(6), np.zeros(4)),  # every unit at the tie
}
OPERATORS = [("gibbs", dict(gibbs=True)), ("flip", dict(alpha=1.0)), ("mixture", dict(alpha=0.3)), ("alpha0", dict(alpha=0.0))]


def _kernel_rng(rng, n_sweeps, n_chains, params):
    """What gives the NumPy kernels the uniforms of one compiled call of ``n_sweeps`` sweeps: ``rng`` itself,
    or on the dense path the call's counter-based stream, its key drawn from ``rng`` as the call draws it."""
    if not compiled.dense(n_chains, params.n_visible, params.n_hidden):
        return rng
    key = dense_key(rng)
    return UniformStream(dense_uniforms(key, n_sweeps, n_chains, params.n_hidden, params.n_visible))


def _numpy_sweep(name):
    if name == "gibbs":
        return gibbs_sweep
    alpha = {"flip": 1.0, "mixture": 0.3, "alpha0": 0.0}[name]
    return lambda rng, state, params: flip_sweep(rng, state, params, alpha=alpha)


@pytest.mark.parametrize("model", list(MODELS))
@pytest.mark.parametrize("name, options", OPERATORS)
@pytest.mark.parametrize("n_chains", [1, 4])
def test_same_chain_as_the_numpy_kernels(model, name, options, n_chains):
    params = MODELS[model]
    rng = np.random.default_rng(5)
    state = init_state(rng, (rng.random((n_chains, params.n_visible)) < 0.5).astype(float), params)
    v, h = state.v.copy(), state.h.copy()
    a_h, a_v = hidden_activation(v, params), None
    r_numpy, r_compiled = np.random.default_rng(9), np.random.default_rng(9)
    sweep = _numpy_sweep(name)
    n_incremental = 0
    for block in (1, 3, 1, 20, 100):  # sweeps per call, several calls carrying the activations
        before = (v.copy(), h.copy(), a_h.copy())
        v, h, a_h, a_v, n_incremental = carried_sweeps(
            r_compiled, v, h, a_h, a_v, params, block, n_incremental=n_incremental, **options
        )
        for old, arr in zip(before, (v, h, a_h)):
            assert old is not arr
        r_kernel = _kernel_rng(r_numpy, block, n_chains, params)
        for _ in range(block):
            state, _ = sweep(r_kernel, state, params)
        np.testing.assert_array_equal(v, state.v)
        np.testing.assert_array_equal(h, state.h)
        np.testing.assert_allclose(a_h, hidden_activation(v, params), atol=1e-9)
        np.testing.assert_allclose(a_v, visible_activation(h, params), atol=1e-9)
    # both generators consumed the same number of uniforms
    assert r_numpy.random() == r_compiled.random()


@pytest.mark.parametrize("name, options", OPERATORS[:3])
def test_compiled_sweep_follows_the_exact_matrix(name, options):
    params = RBMParams.random(3, 2, scale=2.0, rng=4)
    T = transition_matrix(params, "gibbs" if name == "gibbs" else options["alpha"])

    def kernel(rng, state):
        v, h, *_ = carried_sweeps(rng, state.v, state.h, hidden_activation(state.v, params), None, params, 1, **options)
        return RBMState(v, h)

    empirical_transition_check(kernel, T, 3, 2, n_draws=1500, rng=3)


def test_inputs_are_not_modified_and_flip_needs_h():
    params = MODELS["random"]
    v = np.ones((2, params.n_visible))
    a_h = hidden_activation(v, params)
    copies = v.copy(), a_h.copy()
    carried_sweeps(np.random.default_rng(0), v, None, a_h, None, params, 2, gibbs=True)
    np.testing.assert_array_equal(v, copies[0])
    np.testing.assert_array_equal(a_h, copies[1])
    with pytest.raises(ValueError, match="hidden state"):
        carried_sweeps(np.random.default_rng(0), v, None, a_h, None, params, 1, alpha=1.0)


def test_free_energy_from_the_carried_activation():
    from pymc_rbm.energy import free_energy
    from pymc_rbm.kernels.compiled import free_energy_from_activation

    for params in MODELS.values():
        v = (np.random.default_rng(1).random((5, params.n_visible)) < 0.5).astype(float)
        got = free_energy_from_activation(v, hidden_activation(v, params), params.vbias)
        np.testing.assert_allclose(got, free_energy(v, params), rtol=1e-13, atol=1e-11)



def test_free_energy_of_states_sums_the_rows_of_the_units_on():
    from pymc_rbm.energy import free_energy
    from pymc_rbm.kernels.compiled import free_energy_of_states

    for params in MODELS.values():
        for p_on in (0.0, 0.1, 0.5, 1.0):
            v = (np.random.default_rng(1).random((5, params.n_visible)) < p_on).astype(float)
            np.testing.assert_allclose(free_energy_of_states(v, params), free_energy(v, params), rtol=1e-13,
                                       atol=1e-11)

@pytest.mark.parametrize("name, options", OPERATORS)
@pytest.mark.parametrize("n_chains", [1, 3])
def test_draw_in_place_is_the_same_chain_with_its_statistics(name, options, n_chains):
    from pymc_rbm.energy import free_energy
    from pymc_rbm.kernels.compiled import draw_in_place

    params = MODELS["random"]
    W = np.ascontiguousarray(params.W)
    model = (W, np.ascontiguousarray(W.T), params.vbias, params.hbias)
    rng = np.random.default_rng(2)
    state = init_state(rng, (rng.random((n_chains, params.n_visible)) < 0.5).astype(float), params)
    ref = [state.v.copy(), state.h.copy(), hidden_activation(state.v, params), None, 0]
    v, h, a_h = state.v.copy(), state.h.copy(), hidden_activation(state.v, params)
    a_v, valid, n_incremental = np.empty_like(v), False, 0
    r_ref, r_draw = np.random.default_rng(4), np.random.default_rng(4)
    for block in (1, 2, 30, 1, 80):
        v_start, h_start = v.copy(), h.copy()
        ref = list(carried_sweeps(r_ref, *ref[:4], params, block, n_incremental=ref[4], **options))
        v_out = np.empty(v.shape, dtype=np.int8)
        stats = np.empty((n_chains, 3))
        arrays = v, h, a_h, a_v
        n_incremental = draw_in_place(r_draw, v, h, (a_h, a_v, valid, n_incremental, FULL_EVERY), model, block,
                                      rule=LayerRule(**options), v_out=v_out, stats=stats)
        valid = True
        assert all(x is y for x, y in zip((v, h, a_h, a_v), arrays))  # in place
        np.testing.assert_array_equal(v, ref[0])
        np.testing.assert_array_equal(h, ref[1])
        assert n_incremental == ref[4]
        np.testing.assert_array_equal(v_out, v)
        np.testing.assert_allclose(stats[:, 0], free_energy(v, params), rtol=1e-12, atol=1e-10)
        np.testing.assert_array_equal(stats[:, 1], (v != v_start).sum(axis=1))
        np.testing.assert_array_equal(stats[:, 2], (h != h_start).sum(axis=1))
    np.testing.assert_allclose(a_h, hidden_activation(v, params), atol=1e-9)
    np.testing.assert_allclose(a_v, visible_activation(h, params), atol=1e-9)
    assert r_ref.random() == r_draw.random()


def test_free_energy_over_many_hidden_units_and_extreme_activations():
    """The product of ``1 + exp(-|x|)`` factors is logged every 512 units: no overflow, no lost precision."""
    from pymc_rbm.energy import free_energy
    from pymc_rbm.kernels.compiled import free_energy_from_activation

    rng = np.random.default_rng(3)
    for n_hidden, scale in [(511, 1.0), (512, 0.0), (513, 0.0), (2000, 0.05), (1500, 40.0)]:
        params = RBMParams.random(30, n_hidden, scale=scale, rng=rng)
        v = (rng.random((3, 30)) < 0.5).astype(float)
        got = free_energy_from_activation(v, hidden_activation(v, params), params.vbias)
        np.testing.assert_allclose(got, free_energy(v, params), rtol=1e-13)


# ------------------------------------------------------------ the dense path of large batches
@pytest.fixture
def dense_path(monkeypatch):
    """Every batch of several chains takes the dense path (BLAS products, vectorised exponentials)."""
    from pymc_rbm.kernels import compiled

    monkeypatch.setattr(compiled, "DENSE_MIN_WEIGHTS", 1)
    assert compiled.dense(2, 1, 1) and not compiled.dense(1, 1000, 1000)


@pytest.mark.parametrize("model", list(MODELS))
@pytest.mark.parametrize("name, options", OPERATORS)
def test_dense_path_is_the_same_chain_as_the_numpy_kernels(dense_path, model, name, options):
    test_same_chain_as_the_numpy_kernels(model, name, options, 4)


@pytest.mark.parametrize("name, options", OPERATORS)
def test_dense_draw_in_place_is_the_same_chain_with_its_statistics(dense_path, name, options):
    test_draw_in_place_is_the_same_chain_with_its_statistics(name, options, 3)


@pytest.mark.parametrize("name, options", OPERATORS)
@pytest.mark.parametrize("scale", [0.05, 1.0])
def test_dense_draws_carry_the_hidden_exponentials(dense_path, name, options, scale):
    """Draws that pass ``exp(-|a_h|)`` on to the next one are the chain of the NumPy kernels (fed the dense
    path's uniforms), with exact stats.

    Weights of 0.05 change most units in every sweep (BLAS products); weights of 1 change few (rows)."""
    from pymc_rbm.energy import free_energy
    from pymc_rbm.kernels.compiled import draw_in_place

    params = RBMParams.random(20, 15, scale=scale, rng=3)
    W = np.ascontiguousarray(params.W)
    model = (W, np.ascontiguousarray(W.T), params.vbias, params.hbias)
    rng = np.random.default_rng(2)
    state = init_state(rng, (rng.random((5, params.n_visible)) < 0.5).astype(float), params)
    v, h, a_h = state.v.copy(), state.h.copy(), hidden_activation(state.v, params)
    a_v, hidden_exp = np.empty_like(v), np.empty_like(a_h)
    r_numpy, r_draw = np.random.default_rng(4), np.random.default_rng(4)
    sweep = _numpy_sweep(name)
    n_incremental = 0
    for draw in range(150):
        block = 1 + draw % 3
        v_start, h_start = v.copy(), h.copy()
        v_out, stats = np.empty(v.shape, dtype=np.int64), np.empty((5, 3))
        n_incremental = draw_in_place(r_draw, v, h, (a_h, a_v, draw > 0, n_incremental, FULL_EVERY), model, block,
                                      rule=LayerRule(**options), v_out=v_out, stats=stats, hidden_exp=hidden_exp,
                                      hidden_exp_valid=draw > 0)
        r_kernel = _kernel_rng(r_numpy, block, 5, params)
        for _ in range(block):
            state, _ = sweep(r_kernel, state, params)
        np.testing.assert_array_equal(v, state.v)
        np.testing.assert_array_equal(h, state.h)
        np.testing.assert_array_equal(v_out, v)
        np.testing.assert_allclose(hidden_exp, np.exp(-np.abs(hidden_activation(v, params))), rtol=1e-12)
        np.testing.assert_allclose(stats[:, 0], free_energy(v, params), rtol=1e-12, atol=1e-10)
        np.testing.assert_array_equal(stats[:, 1], (v != v_start).sum(axis=1))
        np.testing.assert_array_equal(stats[:, 2], (h != h_start).sum(axis=1))
    np.testing.assert_allclose(a_h, hidden_activation(v, params), atol=1e-9)
    np.testing.assert_allclose(a_v, visible_activation(h, params), atol=1e-9)
    assert r_numpy.random() == r_draw.random()


@pytest.mark.parametrize("name, options", OPERATORS[:3])
def test_dense_sweep_follows_the_exact_matrix(dense_path, name, options):
    """The dense path's chain (its own uniforms, a batch of every joint state) follows the exact matrix."""
    test_compiled_sweep_follows_the_exact_matrix(name, options)


# ------------------------------------------------------------ the dense path's uniforms
def test_dense_uniforms_are_uniform_and_keyed():
    rng = np.random.default_rng(0)
    key = dense_key(rng)
    assert key.dtype == np.uint64 and key.shape == (4,) and (key < 2**32).all()
    u = dense_uniforms(key, 3, 50, 37, 61)
    assert u.shape == (3, 50 * (37 + 61))
    np.testing.assert_array_equal(u, dense_uniforms(key, 3, 50, 37, 61))  # a function of the key
    assert ((u >= 0) & (u < 1)).all() and (u * 2**53 == np.round(u * 2**53)).all()  # 53-bit resolution
    n = u.size
    assert abs(u.mean() - 0.5) < 5 * np.sqrt(1 / 12 / n)
    assert abs(u.var() - 1 / 12) < 5 * np.sqrt(1 / 180 / n)
    counts = np.bincount((u.ravel() * 20).astype(int), minlength=20)
    chi2 = ((counts - n / 20) ** 2 / (n / 20)).sum()
    assert chi2 < 60  # 19 degrees of freedom
    flat = u.ravel()
    assert abs(np.corrcoef(flat[:-1], flat[1:])[0, 1]) < 5 / np.sqrt(n)
    assert len(np.unique(flat)) == n  # rows, layers and sweeps draw distinct streams
    other = dense_uniforms(dense_key(rng), 3, 50, 37, 61)
    assert not np.isin(other, u).any()
